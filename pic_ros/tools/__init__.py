"""
Tooling around the pipeline: ``python -m pic_ros`` (evaluate, bench, calibrate, convert, demo).

The metrics and reports, the recording catalogue, and the synthetic people and takes used to test
that imitation holds for anyone. Nothing here runs in the live pipeline.
"""
