"""
Where ``evaluate`` and ``bench`` find their recordings.

- ``demo``: the project's own synthetic recording, shipped in ``demo/`` (made by
  ``scripts/make_demo_recording.py``; see ``demo/README.md``).
- ``assembly1``, ``assembly2``, ``assembly3``, ``incision_straight3``: the PIC paper's real
  Kinect v2 demonstrations. They are not shipped; they are read in place from the shared data
  folder beside the project (``../shared/data/pic_demos``), or from ``$PIC_ROS_PIC_DEMOS``.
- a path to any ``<task><n>_skel.txt`` in the paper's layout (segment file and config optional);
- a path to a rosbag2 of body-tracking MarkerArrays (a bag directory, or a ``.mcap`` / ``.db3``
  file; Azure Kinect or Kinect v2 marker encoding, detected): see
  :func:`pic_ros.bags.demonstration_from_bag` (segments stored in the bag by ``convert`` are
  used; otherwise the whole bag is one segment).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from pic_ros.bags import demonstration_from_bag, is_bag_path
from pic_ros.evaluation import Demonstration
from pic_ros.exceptions import RecordingError
from pic_ros.human.kinect_v2 import load_kinect_v2_recording, load_paper_demonstration
from pic_ros.resources import share_dir

PAPER_RECORDINGS: Final = ('assembly1', 'assembly2', 'assembly3', 'incision_straight3')
"""The paper's demonstrations whose skeletons exist (the curved incision's is missing)."""

DEMO_NAME: Final = 'synthetic1'


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
        return Demonstration.from_paper(load_paper_demonstration(share_dir() / 'demo', DEMO_NAME))
    if name in PAPER_RECORDINGS:
        folder = pic_demos_dir()
        if folder is None:
            raise RecordingError(
                f'{name} is one of the PIC paper recordings, which are not shipped with pic_ros; '
                'put the shared data beside the project (../shared/data/pic_demos) or set '
                'PIC_ROS_PIC_DEMOS'
            )
        return Demonstration.from_paper(load_paper_demonstration(folder, name))
    path = Path(name)
    if is_bag_path(path) or path.is_dir() or path.suffix in ('.mcap', '.db3'):
        return demonstration_from_bag(path)
    suffix = '_skel.txt'
    if not path.name.endswith(suffix) or not path.is_file():
        known = ', '.join(('demo',) + PAPER_RECORDINGS)
        raise RecordingError(
            f'unknown recording {name!r}: use one of {known}, a *{suffix} path or a rosbag2 '
            '(a bag directory or a .mcap / .db3 file)'
        )
    stem = path.name[: -len(suffix)]
    try:
        return Demonstration.from_paper(load_paper_demonstration(path.parent, stem))
    except RecordingError:
        recording = load_kinect_v2_recording(path)
        return Demonstration.whole(stem, tuple(recording.frames()))
