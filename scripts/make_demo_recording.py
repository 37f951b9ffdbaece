#!/usr/bin/env python3
"""
Generate the synthetic Kinect v2 demo recording shipped in ``demo/``.

Writes ``synthetic1_skel.txt``, ``synthetic1_skelts.txt``, ``synthetic_1.txt`` and
``synthetic1_config.json`` (see :func:`pic_ros.synthetic.write_kinect_v2_text`). The output is
deterministic: the same seed gives byte-identical files, and ``test/test_synthetic.py`` checks
that the shipped ``demo/`` files are exactly what this script writes with its defaults.

Usage (from the repository root, with ``pic_ros`` importable)::

    PYTHONPATH=. python3 scripts/make_demo_recording.py --out demo/
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys

from pic_ros.synthetic import (
    DEFAULT_NAME,
    DEFAULT_SEED,
    generate_recording,
    write_kinect_v2_text,
)


def main(argv: list[str] | None = None) -> int:
    """
    Generate the recording and write it.

    :param argv: Command-line arguments without the program name; default ``sys.argv[1:]``.
    :return: Process exit code (0 on success).
    """
    parser = argparse.ArgumentParser(
        description='Generate the synthetic Kinect v2 demo recording (PIC paper text format).'
    )
    parser.add_argument(
        '--out', type=Path, default=Path('demo'), help='output directory (default: demo/)'
    )
    parser.add_argument(
        '--seed', type=int, default=DEFAULT_SEED,
        help=f'random seed, >= 0 (default: {DEFAULT_SEED}, the shipped recording)',
    )
    parser.add_argument(
        '--name', default=DEFAULT_NAME,
        help=f'recording name <task><n> (default: {DEFAULT_NAME})',
    )
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error('--seed must be >= 0')
    recording = generate_recording(seed=args.seed, name=args.name)
    paths = write_kinect_v2_text(recording, args.out)
    lines = int(recording.tracked.sum())
    print(
        f'wrote {len(paths)} files to {args.out}: {lines} tracked frames of {len(recording)}, '
        f'{len(recording.segments)} segments, seed {args.seed}'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
