"""
Where ``evaluate`` and ``bench`` find their recordings.

- ``demo``: the project's own synthetic recording, shipped in ``demo/`` (made by
  ``scripts/make_demo_recording.py``; see ``demo/README.md``).
- ``assembly1``, ``assembly2``, ``assembly3``, ``incision_straight3``: the PIC paper's real
  Kinect v2 demonstrations. They are not shipped; they are read in place from the shared data
  folder beside the project (``../shared/data/pic_demos``), or from ``$PIC_ROS_PIC_DEMOS``.
- a path to any Kinect v2 text recording (75 numbers per line): a ``<task><n>_skel.txt`` in the
  paper's layout uses its time stamps, segment file and config when they are beside it; any
  other file, or one without a segment file, is scored whole (one segment, both arms); without
  a time-stamp file the frames get made-up 30 Hz stamps, and a one-line warning says so;
- a path to a rosbag2 of body-tracking MarkerArrays (a bag directory, or a ``.mcap`` / ``.db3``
  file; Azure Kinect or Kinect v2 marker encoding, detected): see
  :func:`pic_ros_tools.recordings.bag_demonstration.demonstration_from_bag` (segments stored in the
  bag by ``convert`` are used; otherwise the whole bag is one segment);
- the synthetic robustness suite (:func:`synthetic_suite`): many generated people and takes
  (:mod:`pic_ros_tools.synthetic.suite`), each scored over its labelled task segments.
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
from typing import Final

import numpy as np
from pic_ros.exceptions import RecordingError
from pic_ros.skeleton import make_frame, Side
from pic_ros_tools.recordings.bag_demonstration import demonstration_from_bag, is_bag_path
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.kinect_v2_text import (
    kinect_v2_to_human,
    load_kinect_v2_recording,
    synthetic_stamps_notice,
)
from pic_ros_tools.recordings.paper import load_paper_demonstration, paper_pads, Segment
from pic_ros_tools.recordings.paper_task import PaperPad
from pic_ros_tools.resources import demo_dir
from pic_ros_tools.synthetic import generate_take, SUITE_COUNT, suite_specs, SyntheticRecording

PAPER_RECORDINGS: Final = ('assembly1', 'assembly2', 'assembly3', 'incision_straight3')
"""The paper's demonstrations whose skeletons exist (the curved incision's is missing)."""

DEMO_NAME: Final = 'synthetic1'

_ARMS: Final = {
    'left': frozenset({Side.LEFT}),
    'right': frozenset({Side.RIGHT}),
    'both': frozenset({Side.LEFT, Side.RIGHT}),
}


_NOT_SHIPPED: Final = (
    '{name} is one of the PIC paper recordings, which are not shipped with pic_ros; put the '
    'shared data beside the project (../shared/data/pic_demos) or set PIC_ROS_PIC_DEMOS'
)


def pic_demos_dir() -> Path | None:
    """
    Find the PIC paper's demonstration folder.

    Looks at ``$PIC_ROS_PIC_DEMOS``, ``$PIC_ROS_SHARED_DATA/pic_demos``, then
    ``shared/data/pic_demos`` beside the source tree and beside the working directory.

    :return: The folder, or ``None`` when it is not on this machine.
    """
    candidates = []
    if os.environ.get('PIC_ROS_PIC_DEMOS'):
        candidates.append(Path(os.environ['PIC_ROS_PIC_DEMOS']))
    if os.environ.get('PIC_ROS_SHARED_DATA'):
        candidates.append(Path(os.environ['PIC_ROS_SHARED_DATA']) / 'pic_demos')
    for base in (Path(__file__).resolve().parents[1], Path.cwd()):
        candidates.append(base.parent / 'shared' / 'data' / 'pic_demos')
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None


def default_recordings() -> tuple[str, ...]:
    """
    Return the recordings ``evaluate`` runs when none is named.

    :return: The paper's four recordings when their folder is found, else ``('demo',)``.
    """
    return PAPER_RECORDINGS if pic_demos_dir() is not None else ('demo',)


def replay_path(name: str) -> Path:
    """
    Return what to replay for a recording named as ``evaluate`` names them.

    :param name: ``demo`` (the shipped bag), a paper recording name (its ``*_skel.txt``), or a
        path (a Kinect v2 text recording or a rosbag2), returned as it is.
    :return: The path.
    :raises RecordingError: If a paper recording is named and its folder is not found.
    """
    if name == 'demo':
        return demo_dir() / f'{DEMO_NAME}_bag'
    if name in PAPER_RECORDINGS:
        folder = pic_demos_dir()
        if folder is None:
            raise RecordingError(_NOT_SHIPPED.format(name=name))
        return folder / f'{name}_skel.txt'
    return Path(name)


def recording_pads(name: str) -> dict[str, PaperPad]:
    """
    Read the task surfaces of a paper recording named as ``evaluate`` names them.

    :param name: A paper recording name, or a path to a ``*_skel.txt`` file (its configurations
        in ``paper_configs`` beside it, as in the paper's folder).
    :return: The task surface per paper robot whose configuration has one; empty for any other
        recording, or when the paper's folder is not on this machine.
    """
    suffix = '_skel.txt'
    if name in PAPER_RECORDINGS:
        folder, stem = pic_demos_dir(), name
    elif name.endswith(suffix):
        folder, stem = Path(name).parent, Path(name).name[: -len(suffix)]
    else:
        return {}
    return paper_pads(folder, stem) if folder is not None else {}


def load_demonstration(name: str) -> Demonstration:
    """
    Load a recording by name or path (see the module docstring).

    :param name: ``demo``, a paper recording name, a path to a ``*_skel.txt`` file, or a path
        to a rosbag2 (directory, ``.mcap`` or ``.db3``).
    :return: The demonstration, with its segments and task arms (one whole-recording segment
        with both arms when the recording has no segment file or config).
    :raises RecordingError: If the recording cannot be found or read.
    """
    if name == 'demo':
        return Demonstration.from_paper(load_paper_demonstration(demo_dir(), DEMO_NAME))
    if name in PAPER_RECORDINGS:
        folder = pic_demos_dir()
        if folder is None:
            raise RecordingError(_NOT_SHIPPED.format(name=name))
        return Demonstration.from_paper(load_paper_demonstration(folder, name))
    path = Path(name)
    if is_bag_path(path) or path.is_dir() or path.suffix in ('.mcap', '.db3'):
        return demonstration_from_bag(path)
    if not path.is_file():
        known = ', '.join(('demo',) + PAPER_RECORDINGS)
        raise RecordingError(
            f'unknown recording {name!r}: use one of {known}, a Kinect v2 text recording '
            '(75 numbers per line) or a rosbag2 (a bag directory or a .mcap / .db3 file)'
        )
    suffix = '_skel.txt'
    if path.name.endswith(suffix):
        stem = path.name[: -len(suffix)]
        try:
            return Demonstration.from_paper(load_paper_demonstration(path.parent, stem))
        except RecordingError:
            pass
    else:
        stem = path.stem
    recording = load_kinect_v2_recording(path)
    if recording.synthetic_stamps:
        print(synthetic_stamps_notice(recording, path), file=sys.stderr)
    return Demonstration.whole(stem, tuple(recording.frames()))


def demonstration_from_synthetic(take: SyntheticRecording) -> Demonstration:
    """
    Turn a generated take into a recording to evaluate, as if read from its text files.

    Lost frames are left out (real recordings hold only tracked frames); each labelled task is a
    segment with its task arm(s).

    :param take: A generated take (Kinect v2 camera space).
    :return: The demonstration: tracker-frame skeletons, segments and task arms.
    """
    kept = np.flatnonzero(take.tracked)
    positions = kinect_v2_to_human(take.joints[kept])
    frames = tuple(
        make_frame(float(take.stamps[index]), positions[row]) for row, index in enumerate(kept)
    )
    segments = []
    for number, (first, last) in enumerate(take.segment_lines()):
        segments.append(
            Segment(index=number, start=first - 1, stop=last, first_line=first, last_line=last)
        )
    return Demonstration(
        name=take.name,
        frames=frames,
        segments=tuple(segments),
        task_arms=tuple(_ARMS[arm] for arm in take.task_arms),
    )


def crouching_suite(count: int = SUITE_COUNT) -> tuple[Demonstration, ...]:
    """
    Generate the suite's people crouching now and then (:mod:`pic_ros_tools.synthetic.crouch`).

    :param count: Number of takes (people), >= 1.
    :return: One demonstration per take, in suite order.
    :raises pic_ros.exceptions.ConfigError: If ``count`` is not a positive integer.
    """
    from pic_ros_tools.synthetic.crouch import crouching_take

    return tuple(
        demonstration_from_synthetic(crouching_take(spec)) for spec in suite_specs(count)
    )


def synthetic_suite(count: int = SUITE_COUNT) -> tuple[Demonstration, ...]:
    """
    Generate the synthetic robustness suite (:func:`pic_ros_tools.synthetic.suite.suite_specs`).

    :param count: Number of takes (people), >= 1.
    :return: One demonstration per take, in suite order.
    :raises pic_ros.exceptions.ConfigError: If ``count`` is not a positive integer.
    """
    return tuple(
        demonstration_from_synthetic(generate_take(spec)) for spec in suite_specs(count)
    )
