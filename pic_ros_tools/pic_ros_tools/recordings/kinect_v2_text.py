"""
Kinect v2 text recordings (the PIC paper's format): skeletons and their time stamps.

- ``<task><n>_skel.txt``: one body frame per line, 75 whitespace-separated numbers, 25 joints x
  (x, y, z) joint-major, metres, Kinect v2 *camera space* (x to the sensor's left, y up, z out of
  the sensor into the scene; :mod:`pic_ros.trackers.kinect_v2`);
- ``<task><n>_skelts.txt``: one time stamp per line [s since the start of the recording].

Recordings keep the raw camera-space data; :meth:`KinectV2Recording.frames` converts to the
``'tracker'`` frame of :mod:`pic_ros.skeleton` (x away from the sensor, y to the sensor's
left, z up). Segment files and the paper's configurations are
:mod:`pic_ros_tools.recordings.paper`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
import logging
import math
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import RecordingError, SkeletonError
from pic_ros.skeleton import HumanJoint, make_frame, SkeletonFrame
from pic_ros.trackers.kinect_v2 import (
    camera_to_tracker,
    KINECT_V2_JOINT_COUNT,
    KINECT_V2_TO_HUMAN,
)

FloatArray = npt.NDArray[np.float64]

_LOG = logging.getLogger(__name__)

SYNTHETIC_RATE: Final = 30.0
"""Frame rate [Hz] of the stamps made up when a recording has no ``_skelts.txt`` file."""

SKELETON_SUFFIX: Final = '_skel.txt'
"""File name ending of a skeleton recording."""

STAMPS_SUFFIX: Final = '_skelts.txt'
"""File name ending of its time-stamp file."""

KINECT_V2_ROWS: Final[tuple[int, ...]] = tuple(
    row for row, index in enumerate(KINECT_V2_TO_HUMAN) if index is not None
)
"""The :class:`~pic_ros.skeleton.HumanJoint` rows Kinect v2 fills (every row but the face)."""

KINECT_V2_SOURCES: Final[tuple[int, ...]] = tuple(
    index for index in KINECT_V2_TO_HUMAN if index is not None
)
"""The Kinect v2 joint index of each row of :data:`KINECT_V2_ROWS`."""


def kinect_v2_to_human(joints: npt.ArrayLike) -> FloatArray:
    """
    Pick and convert the :class:`~pic_ros.skeleton.HumanJoint` rows from Kinect v2 joints.

    :param joints: Kinect v2 joints, shape (..., 25, 3), [m], camera space, Kinect v2 order.
    :return: New array, shape (..., 19, 3), [m], ``'tracker'`` frame,
        :class:`~pic_ros.skeleton.HumanJoint` order; the face rows (no Kinect v2 joint) are NaN.
    :raises SkeletonError: If the last two axes are not (25, 3).
    """
    array = np.asarray(joints, dtype=np.float64)
    if array.ndim < 2 or array.shape[-2:] != (KINECT_V2_JOINT_COUNT, 3):
        raise SkeletonError(
            f'Kinect v2 joints must have shape (..., {KINECT_V2_JOINT_COUNT}, 3), got '
            f'{array.shape}'
        )
    rows = np.full(array.shape[:-2] + (len(HumanJoint), 3), np.nan)
    rows[..., list(KINECT_V2_ROWS), :] = camera_to_tracker(array[..., list(KINECT_V2_SOURCES), :])
    return rows


def _read_only(array: npt.ArrayLike) -> FloatArray:
    frozen = np.array(array, dtype=np.float64)
    frozen.setflags(write=False)
    return frozen


@dataclass(frozen=True, eq=False)
class KinectV2Recording:
    """
    One Kinect v2 skeleton recording, kept in camera space.

    Instances compare by identity (``eq=False``): they hold arrays. The arrays are read-only copies
    made at construction.

    :param name: Recording name, e.g. ``'assembly1'`` (the skeleton file stem without ``_skel``).
    :param stamps: Capture times, shape (T,), [s], strictly increasing.
    :param joints: Joint positions, shape (T, 25, 3), [m], Kinect v2 camera space, Kinect v2
        joint order (:data:`KINECT_V2_JOINTS`); all finite.
    :param synthetic_stamps: The stamps were made up at :data:`SYNTHETIC_RATE` (no time-stamp
        file); tools say so in one line.
    :raises RecordingError: On wrong shapes, non-finite values or non-increasing stamps.
    """

    name: str
    stamps: FloatArray
    joints: FloatArray
    synthetic_stamps: bool = False

    def __post_init__(self) -> None:
        stamps = _read_only(self.stamps)
        joints = _read_only(self.joints)
        if stamps.ndim != 1:
            raise RecordingError(f'{self.name}: stamps must have shape (T,), got {stamps.shape}')
        if joints.shape != (stamps.shape[0], KINECT_V2_JOINT_COUNT, 3):
            raise RecordingError(
                f'{self.name}: joints must have shape ({stamps.shape[0]}, '
                f'{KINECT_V2_JOINT_COUNT}, 3) to match the stamps, got {joints.shape}'
            )
        if not np.all(np.isfinite(stamps)) or not np.all(np.isfinite(joints)):
            raise RecordingError(f'{self.name}: stamps and joints must be finite')
        _check_increasing(stamps, self.name)
        object.__setattr__(self, 'stamps', stamps)
        object.__setattr__(self, 'joints', joints)

    def __len__(self) -> int:
        """Return the number of frames T."""
        return int(self.stamps.shape[0])

    @property
    def duration(self) -> float:
        """Return the time from the first to the last frame [s] (0 for fewer than two frames)."""
        if len(self) < 2:
            return 0.0
        return float(self.stamps[-1] - self.stamps[0])

    def tracker_positions(self) -> FloatArray:
        """
        Return the 19 :class:`HumanJoint` positions of every frame in the tracker frame.

        :return: New array, shape (T, 19, 3), [m], ``'tracker'`` frame; row order
            :class:`HumanJoint`; the face rows (which Kinect v2 does not have) are NaN.
        """
        return kinect_v2_to_human(self.joints)

    def frame(self, index: int) -> SkeletonFrame:
        """
        Return one frame as a :class:`SkeletonFrame`.

        :param index: Frame index, 0-based; negative values count from the end like a sequence.
        :return: The frame: stamp [s], 19 joints [m], ``'tracker'`` frame, every joint valid but
            the face (nose, ears), which Kinect v2 does not have.
        :raises IndexError: If the index is out of range.
        """
        count = len(self)
        if not -count <= index < count:
            raise IndexError(f'{self.name}: frame index {index} out of range for {count} frames')
        return make_frame(float(self.stamps[index]), kinect_v2_to_human(self.joints[index]))

    def frames(self) -> Iterator[SkeletonFrame]:
        """
        Yield every frame, in recording order, as a :class:`SkeletonFrame`.

        :return: Iterator over T frames: stamp [s], 19 joints [m] (face rows invalid),
            ``'tracker'`` frame.
        """
        positions = self.tracker_positions()
        for index in range(len(self)):
            yield make_frame(float(self.stamps[index]), positions[index])


def _check_increasing(stamps: FloatArray, what: str) -> None:
    if stamps.shape[0] < 2:
        return
    steps = np.diff(stamps)
    bad = np.flatnonzero(~(steps > 0.0))
    if bad.size:
        index = int(bad[0]) + 1
        raise RecordingError(
            f'{what}: time stamps must be strictly increasing, but stamp {index} (line '
            f'{index + 1}) = {float(stamps[index])!r} s does not come after '
            f'{float(stamps[index - 1])!r} s'
        )


def read_lines(path: Path, what: str) -> list[str]:
    """Read a text file as lines, dropping trailing blank lines."""
    try:
        text = path.read_text(encoding='utf-8')
    except FileNotFoundError:
        raise RecordingError(f'{what} not found: {path}') from None
    except (OSError, UnicodeDecodeError) as error:
        raise RecordingError(f'cannot read {what} {path}: {error}') from error
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise RecordingError(f'{what} {path} is empty')
    return lines


def _diagnose(lines: list[str], columns: int, path: Path) -> RecordingError | None:
    """Find the first line that is blank, has the wrong column count or a non-finite value."""
    for number, line in enumerate(lines, start=1):
        tokens = line.split()
        if not tokens:
            return RecordingError(f'{path}: line {number} is blank (a frame per line expected)')
        if len(tokens) != columns:
            return RecordingError(
                f'{path}: line {number} has {len(tokens)} columns, expected {columns}'
            )
        for column, token in enumerate(tokens, start=1):
            try:
                value = float(token)
            except ValueError:
                return RecordingError(
                    f'{path}: line {number}, column {column}: {token!r} is not a number'
                )
            if not math.isfinite(value):
                return RecordingError(
                    f'{path}: line {number}, column {column}: {token!r} is not finite'
                )
    return None


def _load_table(path: Path, columns: int, what: str) -> FloatArray:
    """
    Load a whitespace-separated numeric table, one row per line, with exact error lines.

    :param path: Text file.
    :param columns: Required number of values per line.
    :param what: Description for error messages.
    :return: Array, shape (lines, columns).
    :raises RecordingError: On a missing file, blank line, wrong column count or bad value.
    """
    lines = read_lines(path, what)
    try:
        table = np.loadtxt(lines, dtype=np.float64, comments=None, ndmin=2)
    except ValueError as error:
        found = _diagnose(lines, columns, path)
        raise (found or RecordingError(f'{path}: cannot parse {what}: {error}')) from None
    if table.shape != (len(lines), columns) or not np.all(np.isfinite(table)):
        found = _diagnose(lines, columns, path)
        if found is not None:
            raise found
        raise RecordingError(
            f'{path}: expected {len(lines)} x {columns} values, got {table.shape}'
        )
    return table


def synthetic_stamps_notice(recording: KinectV2Recording, path: str | Path) -> str:
    """
    Return the one line a tool prints when a recording's stamps were made up.

    :param recording: The loaded recording.
    :param path: Its skeleton file, as the user named it.
    :return: The notice, or ``''`` when the stamps came from a file.
    """
    if not recording.synthetic_stamps:
        return ''
    return (
        f'pic_ros: {path} has no time-stamp file ({recording.name}{STAMPS_SUFFIX}): using '
        f'made-up {SYNTHETIC_RATE:.0f} Hz stamps'
    )


def recording_name(skeleton_path: Path | str) -> str:
    """
    Return the name of a Kinect v2 text recording.

    :param skeleton_path: Its skeleton file.
    :return: The file name without ``_skel.txt`` (``assembly1``), else the file stem.
    """
    path = Path(skeleton_path)
    if path.name.endswith(SKELETON_SUFFIX):
        return path.name[: -len(SKELETON_SUFFIX)]
    return path.stem


def load_kinect_v2_recording(
    skeleton_path: Path | str, stamps_path: Path | str | None = None
) -> KinectV2Recording:
    """
    Load a Kinect v2 skeleton recording ``<task><n>_skel.txt`` and its time stamps.

    Each line of the skeleton file is one frame of 75 numbers (25 joints x (x, y, z), metres,
    Kinect v2 camera space). Trailing blank lines are ignored; a blank line inside the file is an
    error (it would shift the 1-based line numbers that segment files refer to). Values must be
    finite: the recordings have no missing-joint markers.

    Time stamps: if ``stamps_path`` is None, the sibling ``<task><n>_skelts.txt`` is used when it
    exists; otherwise **synthetic stamps** at :data:`SYNTHETIC_RATE` (30 Hz) are made up,
    ``stamps[i] = i / 30`` s, and an info message is logged. Stamps must be *strictly* increasing:
    a repeated stamp means a duplicated or mis-stamped frame (filters would ignore it), and the
    real files are strictly increasing.

    :param skeleton_path: Path of the ``_skel.txt`` file.
    :param stamps_path: Path of the time-stamp file (one number per line, [s]), or None to use
        the sibling ``_skelts.txt`` or synthetic 30 Hz stamps.
    :return: The recording, named after the skeleton file stem without ``_skel``.
    :raises RecordingError: On a missing file, wrong column count or non-numeric / non-finite
        value (the message gives the line), a stamp count that differs from the frame count, or
        stamps that are not strictly increasing.
    """
    skeleton_path = Path(skeleton_path)
    name = recording_name(skeleton_path)
    table = _load_table(skeleton_path, 3 * KINECT_V2_JOINT_COUNT, 'Kinect v2 skeleton recording')
    joints = table.reshape(-1, KINECT_V2_JOINT_COUNT, 3)
    if stamps_path is None:
        sibling = skeleton_path.with_name(name + STAMPS_SUFFIX)
        stamps_path = sibling if sibling.is_file() else None
    if stamps_path is None:
        _LOG.info(
            '%s: no time-stamp file beside %s, using synthetic %.0f Hz stamps',
            name, skeleton_path, SYNTHETIC_RATE,
        )
        stamps = np.arange(joints.shape[0], dtype=np.float64) / SYNTHETIC_RATE
    else:
        stamps_path = Path(stamps_path)
        stamps = _load_table(stamps_path, 1, 'Kinect v2 time-stamp file')[:, 0]
        if stamps.shape[0] != joints.shape[0]:
            raise RecordingError(
                f'{stamps_path} has {stamps.shape[0]} time stamps but {skeleton_path} has '
                f'{joints.shape[0]} frames'
            )
        _check_increasing(stamps, str(stamps_path))
    return KinectV2Recording(
        name=name, stamps=stamps, joints=joints, synthetic_stamps=stamps_path is None
    )
