"""
Kinect v2 text recordings of the PIC paper (glebysg/PIC): skeletons, time stamps and segments.

File formats (see ``pic_demos/README.md`` and ``pic_method.md`` section 2):

- ``<task><n>_skel.txt``: one body frame per line, 75 whitespace-separated numbers, 25 joints x
  (x, y, z) joint-major, metres, Kinect v2 *camera space* (x to the sensor's left, y up, z out of
  the sensor into the scene);
- ``<task><n>_skelts.txt``: one time stamp per line [s since the start of the recording];
- ``<task>_<n>.txt``: one demonstration (segment) per line, ``first last``, 1-based inclusive line
  numbers of the skeleton file, read by the original evaluator with a single forward cursor;
- ``paper_configs/<robot>_config_<task><n>.json``: the paper-era configurations; only their
  ``arm`` field (the task arm(s) of each segment) is read here.

Recordings keep the raw camera-space data; :func:`camera_to_tracker` and
:meth:`KinectV2Recording.frames` convert to the ``'tracker'`` frame of
:mod:`pic_ros.human.skeleton` (x away from the sensor, y to the sensor's left, z up).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
import json
import logging
import math
from pathlib import Path
import re
from typing import Final

import numpy as np
import numpy.typing as npt

from pic_ros.exceptions import RecordingError, SkeletonError
from pic_ros.human.skeleton import HumanJoint, make_frame, Side, SkeletonFrame

FloatArray = npt.NDArray[np.float64]

_LOG = logging.getLogger(__name__)

KINECT_V2_JOINTS: Final[tuple[str, ...]] = (
    'SpineBase',
    'SpineMid',
    'Neck',
    'Head',
    'ShoulderLeft',
    'ElbowLeft',
    'WristLeft',
    'HandLeft',
    'ShoulderRight',
    'ElbowRight',
    'WristRight',
    'HandRight',
    'HipLeft',
    'KneeLeft',
    'AnkleLeft',
    'FootLeft',
    'HipRight',
    'KneeRight',
    'AnkleRight',
    'FootRight',
    'SpineShoulder',
    'HandTipLeft',
    'ThumbLeft',
    'HandTipRight',
    'ThumbRight',
)
"""The 25 Kinect v2 ``JointType`` names, in index order (SpineBase = 0 ... ThumbRight = 24)."""

KINECT_V2_JOINT_COUNT: Final = len(KINECT_V2_JOINTS)
"""Number of Kinect v2 joints per body (25)."""

_HUMAN_SOURCES: Final = {
    HumanJoint.PELVIS: 'SpineBase',
    HumanJoint.SPINE_CHEST: 'SpineShoulder',
    HumanJoint.NECK: 'Neck',
    HumanJoint.HEAD: 'Head',
    HumanJoint.SHOULDER_LEFT: 'ShoulderLeft',
    HumanJoint.ELBOW_LEFT: 'ElbowLeft',
    HumanJoint.WRIST_LEFT: 'WristLeft',
    HumanJoint.HAND_LEFT: 'HandLeft',
    HumanJoint.SHOULDER_RIGHT: 'ShoulderRight',
    HumanJoint.ELBOW_RIGHT: 'ElbowRight',
    HumanJoint.WRIST_RIGHT: 'WristRight',
    HumanJoint.HAND_RIGHT: 'HandRight',
}

KINECT_V2_TO_HUMAN: Final[tuple[int, ...]] = tuple(
    KINECT_V2_JOINTS.index(_HUMAN_SOURCES[joint]) for joint in HumanJoint
)
"""
Kinect v2 joint index of each :class:`HumanJoint` row.

``KINECT_V2_TO_HUMAN[HumanJoint.NECK] == 2``: entry ``h`` is the Kinect v2 index whose position
becomes row ``h`` of a :class:`SkeletonFrame`. Length 12 (``JOINT_COUNT``).
"""

CAMERA_TO_TRACKER_ROTATION: Final[FloatArray] = np.array(
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
)
"""
Rotation tracker <- Kinect v2 camera space, shape (3, 3), read-only; ``p_t = R @ p_c``.

It is the cyclic axis permutation ``(x, y, z)_tracker = (z, x, y)_camera`` (determinant +1).
"""
CAMERA_TO_TRACKER_ROTATION.setflags(write=False)

SYNTHETIC_RATE: Final = 30.0
"""Frame rate [Hz] of the stamps made up when a recording has no ``_skelts.txt`` file."""

_ARM_NAMES: Final = {
    'left': frozenset({Side.LEFT}),
    'right': frozenset({Side.RIGHT}),
    'both': frozenset({Side.LEFT, Side.RIGHT}),
}
_SKELETON_SUFFIX: Final = '_skel.txt'
_STAMPS_SUFFIX: Final = '_skelts.txt'
_NAME_PATTERN: Final = re.compile(r'^(?P<task>.+?)(?P<number>\d+)$')
_PAPER_CONFIG_DIR: Final = 'paper_configs'
_PAPER_ROBOTS: Final = ('baxter', 'yumi')


def camera_to_tracker(points: npt.ArrayLike) -> FloatArray:
    """
    Convert points from Kinect v2 camera space to the ``'tracker'`` axes.

    Camera space: x to the sensor's left, y up, z out of the sensor into the scene. Tracker
    (REP-103 as seen from the sensor): x away from the sensor, y to the sensor's left, z up. So
    ``(x, y, z)_tracker = (z, x, y)_camera``, a proper rotation
    (:data:`CAMERA_TO_TRACKER_ROTATION`) with the same origin (the depth sensor) and unit. When
    the subject faces the camera, the sensor's left is the subject's *right*: the right shoulder
    has the larger tracker y.

    :param points: Points, shape (..., 3), any unit, Kinect v2 camera space.
    :return: New array, shape (..., 3), same unit, tracker frame.
    :raises SkeletonError: If the last axis does not have length 3.
    """
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != 3:
        raise SkeletonError(f'points must have shape (..., 3), got {array.shape}')
    return array[..., [2, 0, 1]]


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
    :raises RecordingError: On wrong shapes, non-finite values or non-increasing stamps.
    """

    name: str
    stamps: FloatArray
    joints: FloatArray

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
        Return the 12 :class:`HumanJoint` positions of every frame in the tracker frame.

        :return: New array, shape (T, 12, 3), [m], ``'tracker'`` frame; row order
            :class:`HumanJoint`.
        """
        return camera_to_tracker(self.joints[:, list(KINECT_V2_TO_HUMAN), :])

    def frame(self, index: int) -> SkeletonFrame:
        """
        Return one frame as a :class:`SkeletonFrame`.

        :param index: Frame index, 0-based; negative values count from the end like a sequence.
        :return: The frame: stamp [s], 12 joints [m], ``'tracker'`` frame, all joints valid.
        :raises IndexError: If the index is out of range.
        """
        count = len(self)
        if not -count <= index < count:
            raise IndexError(f'{self.name}: frame index {index} out of range for {count} frames')
        positions = camera_to_tracker(self.joints[index, list(KINECT_V2_TO_HUMAN), :])
        return make_frame(float(self.stamps[index]), positions)

    def frames(self) -> Iterator[SkeletonFrame]:
        """
        Yield every frame, in recording order, as a :class:`SkeletonFrame`.

        :return: Iterator over T frames: stamp [s], 12 joints [m], ``'tracker'`` frame.
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


def _read_lines(path: Path, what: str) -> list[str]:
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
    lines = _read_lines(path, what)
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
    name = skeleton_path.name
    if name.endswith(_SKELETON_SUFFIX):
        name = name[: -len(_SKELETON_SUFFIX)]
    else:
        name = skeleton_path.stem
    table = _load_table(skeleton_path, 3 * KINECT_V2_JOINT_COUNT, 'Kinect v2 skeleton recording')
    joints = table.reshape(-1, KINECT_V2_JOINT_COUNT, 3)
    if stamps_path is None:
        sibling = skeleton_path.with_name(name + _STAMPS_SUFFIX)
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
    return KinectV2Recording(name=name, stamps=stamps, joints=joints)


@dataclass(frozen=True)
class Segment:
    """
    One demonstration of a segment file, as the original evaluator actually processed it.

    :param index: Segment number, 0-based (line order of the non-blank lines of the file).
    :param start: First processed frame, 0-based index into the recording.
    :param stop: One past the last processed frame, 0-based (half-open ``[start, stop)``).
        ``start == stop`` when the cursor had already passed the whole segment.
    :param first_line: First skeleton line as written in the file, 1-based inclusive.
    :param last_line: Last skeleton line as written in the file, 1-based inclusive.
    :raises RecordingError: If the numbers are inconsistent.
    """

    index: int
    start: int
    stop: int
    first_line: int
    last_line: int

    def __post_init__(self) -> None:
        if self.index < 0 or not 0 <= self.start <= self.stop:
            raise RecordingError(
                f'segment {self.index}: need index >= 0 and 0 <= start <= stop, got '
                f'start {self.start}, stop {self.stop}'
            )
        if not 1 <= self.first_line <= self.last_line:
            raise RecordingError(
                f'segment {self.index}: need 1 <= first_line <= last_line, got '
                f'{self.first_line}..{self.last_line}'
            )

    def __len__(self) -> int:
        """Return the number of processed frames (``stop - start``, possibly 0)."""
        return self.stop - self.start

    @property
    def frame_slice(self) -> slice:
        """Return ``slice(start, stop)``, to index the processed frames of recording arrays."""
        return slice(self.start, self.stop)


def load_segments(path: Path | str, frame_count: int | None = None) -> tuple[Segment, ...]:
    """
    Load a segment (demonstration) file with the original evaluator's single-cursor semantics.

    Each non-blank line is ``first last``: 1-based inclusive line numbers of the skeleton file.
    The evaluator reads the skeleton with one cursor that only moves forward: lines before
    ``first`` are skipped, lines up to ``last`` are processed. A segment that starts at or before
    a line already consumed therefore covers only the lines not yet read, and a segment that ends
    before the cursor covers **no** frame. Such an empty segment is still returned
    (``start == stop ==`` the cursor position) so that segment numbers stay aligned with the
    per-segment task arms of the configs. Blank lines are ignored.

    :param path: Segment file ``<task>_<n>.txt``.
    :param frame_count: Number of frames T of the recording; when given, a segment whose
        ``last`` line exceeds it is an error.
    :return: The segments in file order; frame indices 0-based half-open.
    :raises RecordingError: On a missing or empty file, a line that is not two integers, a
        ``first`` below 1, ``last < first``, or ``last > frame_count``.
    """
    path = Path(path)
    lines = _read_lines(path, 'segment file')
    segments: list[Segment] = []
    cursor = 0
    for number, line in enumerate(lines, start=1):
        tokens = line.split()
        if not tokens:
            continue
        try:
            first, last = (int(token) for token in tokens)
        except ValueError:
            raise RecordingError(
                f'{path}: line {number} must be two integers "first last", got {line.strip()!r}'
            ) from None
        if first < 1:
            raise RecordingError(f'{path}: line {number}: line numbers are 1-based, got {first}')
        if last < first:
            raise RecordingError(f'{path}: line {number}: end {last} is before start {first}')
        if frame_count is not None and last > frame_count:
            raise RecordingError(
                f'{path}: line {number}: end {last} is beyond the {frame_count} frames of the '
                'recording'
            )
        start = max(first - 1, cursor)
        stop = max(last, start)
        cursor = stop
        segments.append(Segment(len(segments), start, stop, first, last))
    return tuple(segments)


def load_task_arms(config_json_path: Path | str) -> tuple[frozenset[Side], ...]:
    """
    Read the per-segment task arms (``arm`` field) of a PIC paper configuration.

    :param config_json_path: ``<robot>_config_<task><n>.json``.
    :return: One entry per segment: ``{RIGHT}`` for ``"right"``, ``{LEFT}`` for ``"left"``,
        ``{LEFT, RIGHT}`` for ``"both"`` (sides of the person).
    :raises RecordingError: If the file is missing or not JSON, or ``arm`` is not a list of
        ``"right"`` / ``"left"`` / ``"both"``.
    """
    path = Path(config_json_path)
    try:
        content = json.loads(path.read_text(encoding='utf-8'))
    except FileNotFoundError:
        raise RecordingError(f'paper configuration not found: {path}') from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RecordingError(f'cannot read paper configuration {path}: {error}') from error
    arms = content.get('arm') if isinstance(content, dict) else None
    if not isinstance(arms, list):
        raise RecordingError(f'{path}: "arm" must be a list with one entry per segment')
    result: list[frozenset[Side]] = []
    for index, arm in enumerate(arms):
        if not isinstance(arm, str) or arm not in _ARM_NAMES:
            raise RecordingError(
                f'{path}: arm[{index}] must be one of {sorted(_ARM_NAMES)}, got {arm!r}'
            )
        result.append(_ARM_NAMES[arm])
    return tuple(result)


@dataclass(frozen=True, eq=False)
class PaperDemonstration:
    """
    A PIC paper recording with its demonstration segments and task arms.

    :param name: Recording name, e.g. ``'assembly1'`` or ``'incision_straight3'``.
    :param recording: The skeleton recording (camera space, [m], [s]).
    :param segments: The demonstrations, in file order, single-cursor semantics.
    :param task_arms: The person's task arm(s) for each segment, same length as ``segments``.
    :raises RecordingError: If ``segments`` and ``task_arms`` differ in length or a segment
        lies beyond the recording.
    """

    name: str
    recording: KinectV2Recording
    segments: tuple[Segment, ...]
    task_arms: tuple[frozenset[Side], ...]

    def __post_init__(self) -> None:
        if len(self.segments) != len(self.task_arms):
            raise RecordingError(
                f'{self.name}: {len(self.segments)} segments but {len(self.task_arms)} task-arm '
                'entries'
            )
        for segment in self.segments:
            if segment.stop > len(self.recording):
                raise RecordingError(
                    f'{self.name}: segment {segment.index} ends at frame {segment.stop}, beyond '
                    f'the {len(self.recording)} frames of the recording'
                )


def _paper_paths(data_dir: Path, name: str) -> tuple[Path, Path, Path]:
    match = _NAME_PATTERN.match(name)
    if match is None:
        raise RecordingError(f'recording name {name!r} does not end with a take number')
    skeleton = data_dir / f'{name}{_SKELETON_SUFFIX}'
    segments = data_dir / f"{match['task']}_{match['number']}.txt"
    config = data_dir / _PAPER_CONFIG_DIR / f'{_PAPER_ROBOTS[0]}_config_{name}.json'
    beside = data_dir / f'{name}_config.json'
    if not config.is_file() and beside.is_file():
        config = beside
    return skeleton, segments, config


def _task_arms(data_dir: Path, name: str) -> tuple[frozenset[Side], ...]:
    """Read the task arms of every paper-config robot present and check that they agree."""
    reference_path = _paper_paths(data_dir, name)[2]
    reference = load_task_arms(reference_path)
    for robot in _PAPER_ROBOTS[1:]:
        other_path = data_dir / _PAPER_CONFIG_DIR / f'{robot}_config_{name}.json'
        if other_path.is_file() and load_task_arms(other_path) != reference:
            raise RecordingError(
                f'{name}: the task arms of {other_path} differ from those of {reference_path}'
            )
    return reference


def load_paper_demonstration(data_dir: Path | str, name: str) -> PaperDemonstration:
    """
    Load one PIC paper demonstration by recording name.

    Reads ``<name>_skel.txt`` (+ ``_skelts.txt``), the segment file ``<task>_<n>.txt`` and the
    task arms of ``paper_configs/baxter_config_<name>.json`` (checked against the YuMi paper
    config when present) or, for recordings of the same layout that are not the paper's (the
    project's synthetic demo), of ``<name>_config.json`` beside the skeleton.

    :param data_dir: The ``pic_demos`` directory.
    :param name: Recording name, e.g. ``'assembly1'`` or ``'incision_straight3'``.
    :return: The demonstration (camera space, [m], [s]).
    :raises RecordingError: If a file is missing or malformed, the segments exceed the recording,
        the segment and task-arm counts differ, or the robots' task arms disagree.
    """
    data_dir = Path(data_dir)
    skeleton, segment_path, config = _paper_paths(data_dir, name)
    for path, what in (
        (skeleton, 'skeleton recording'),
        (segment_path, 'segment file'),
        (config, 'paper configuration'),
    ):
        if not path.is_file():
            raise RecordingError(f'{name}: {what} not found: {path}')
    recording = load_kinect_v2_recording(skeleton)
    segments = load_segments(segment_path, frame_count=len(recording))
    return PaperDemonstration(
        name=name, recording=recording, segments=segments, task_arms=_task_arms(data_dir, name)
    )


def find_paper_demonstrations(data_dir: Path | str) -> tuple[PaperDemonstration, ...]:
    """
    Discover and load every complete PIC paper demonstration in a directory.

    A recording ``<task><n>_skel.txt`` is complete when the segment file ``<task>_<n>.txt`` and
    the paper config ``paper_configs/baxter_config_<task><n>.json`` exist beside it. Recordings
    without a skeleton file (``incision_curvy1``) are never found; skeleton files without segments
    or config (e.g. ``kalman_smooth_assembly1_skel.txt``) are skipped. Complete but malformed
    demonstrations raise.

    :param data_dir: The ``pic_demos`` directory.
    :return: The demonstrations sorted by name (camera space, [m], [s]).
    :raises RecordingError: If ``data_dir`` is not a directory, or a complete demonstration
        cannot be loaded (see :func:`load_paper_demonstration`).
    """
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise RecordingError(f'PIC demonstration directory not found: {data_dir}')
    names: list[str] = []
    for skeleton in data_dir.glob(f'*{_SKELETON_SUFFIX}'):
        name = skeleton.name[: -len(_SKELETON_SUFFIX)]
        if _NAME_PATTERN.match(name) is None:
            continue
        _, segment_path, config = _paper_paths(data_dir, name)
        if segment_path.is_file() and config.is_file():
            names.append(name)
        else:
            _LOG.debug('%s: no segment file or paper config, skipped', skeleton)
    return tuple(load_paper_demonstration(data_dir, name) for name in sorted(names))
