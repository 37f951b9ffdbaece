"""
The tools of pic_ros: ``python -m pic_ros_tools`` (evaluate, bench, calibrate, convert, demo, ...).

The metrics and reports, the recording catalogue (:mod:`pic_ros_tools.recordings`), the synthetic
people and takes used to test that imitation holds for anyone, the MuJoCo simulator
(:mod:`pic_ros_tools.sim`) and the ROS 2 tools (:mod:`pic_ros_tools.ros`). Nothing here runs in
the live pipeline; the run-time package ``pic_ros`` never imports this one.
"""
