#!/usr/bin/env python3
"""
Generate the synthetic Kinect v2 demo recording shipped in ``pic_ros_tools/demo/``.

Writes ``synthetic1_skel.txt``, ``synthetic1_skelts.txt``, ``synthetic_1.txt`` and
``synthetic1_config.json`` (see :func:`pic_ros_tools.synthetic.write_kinect_v2_text`), and the
same take as a rosbag2, ``synthetic1_bag/``: an MCAP bag (zstd chunks, metadata version 8) of
``/body_tracking_data`` MarkerArrays in the Azure Kinect driver encoding, with empty arrays
during the tracking loss (see :func:`pic_ros_tools.synthetic_bag.write_synthetic_bag`). An
existing bag directory of that name is replaced. The output is deterministic: the same seed gives
byte-identical files (the bag also embeds the ``rosbags`` version and zstd's output, so it is
byte-identical for the same library versions), and ``test/test_synthetic.py`` and
``test/test_bags.py`` check that the shipped ``pic_ros_tools/demo/`` files are what this script
writes with its defaults.

Usage (from the repository root, with ``pic_ros`` and ``pic_ros_tools`` importable)::

    python3 scripts/make_demo_recording.py    # writes pic_ros_tools/demo/
"""

from __future__ import annotations

import argparse
from pathlib import Path
import shutil
import sys
import tempfile

from pic_ros_tools.synthetic import (
    DEFAULT_NAME,
    DEFAULT_SEED,
    generate_recording,
    SyntheticRecording,
    write_kinect_v2_text,
)
from pic_ros_tools.synthetic_bag import write_synthetic_bag


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
        '--out', type=Path, default=Path('pic_ros_tools') / 'demo',
        help='output directory (default: pic_ros_tools/demo/)',
    )
    parser.add_argument(
        '--seed', type=int, default=DEFAULT_SEED,
        help=f'random seed, >= 0 (default: {DEFAULT_SEED}, the shipped recording)',
    )
    parser.add_argument(
        '--name', default=DEFAULT_NAME,
        help=f'recording name <task><n> (default: {DEFAULT_NAME})',
    )
    parser.add_argument(
        '--no-bag', action='store_true', help='write only the text files, not <name>_bag/'
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
    if not args.no_bag:
        bag = write_bag(recording, args.out / f'{args.name}_bag')
        size = sum(path.stat().st_size for path in bag.iterdir())
        print(f'wrote {bag}: {len(recording)} MarkerArrays (Azure Kinect encoding), {size} bytes')
    return 0


def write_bag(recording: SyntheticRecording, target: Path) -> Path:
    """
    Write the take's bag to ``target``, replacing an earlier bag there.

    The bag is written beside ``target`` under the same name and then moved in place, so a
    failure leaves the earlier bag untouched; the storage file is named after ``target``.

    :param recording: The synthetic take.
    :param target: Bag directory to (re)create.
    :return: ``target``.
    :raises SystemExit: If ``target`` exists and is not a bag directory.
    """
    if target.exists() and not (target / 'metadata.yaml').is_file():
        raise SystemExit(f'{target} exists and is not a rosbag2 directory; not replacing it')
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        written = write_synthetic_bag(recording, Path(scratch) / target.name)
        if target.exists():
            shutil.rmtree(target)
        written.rename(target)
    return target


if __name__ == '__main__':
    sys.exit(main())
