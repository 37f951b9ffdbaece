"""
The PIC paper's demonstrations: segment files, task arms and the recordings they annotate.

- ``<task>_<n>.txt``: one demonstration (segment) per line, ``first last``, 1-based inclusive line
  numbers of the skeleton file, read by the original evaluator with a single forward cursor;
- ``paper_configs/<robot>_config_<task><n>.json``: the paper-era configurations; only their
  ``arm`` field (the task arm(s) of each segment) is read here.

The formats are described in ``docs/method.md#the-pic-papers-recordings`` (and in
``pic_demos/README.md`` of the authors' repository ``glebysg/PIC``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import json
import logging
from pathlib import Path
import re
from typing import Final

from pic_ros.exceptions import RecordingError
from pic_ros.skeleton import Side
from pic_ros_tools.recordings.kinect_v2_text import (
    KinectV2Recording,
    load_kinect_v2_recording,
    read_lines,
    SKELETON_SUFFIX,
)
from pic_ros_tools.recordings.paper_task import load_paper_pad, PaperPad

_LOG = logging.getLogger(__name__)

_ARM_NAMES: Final = {
    'left': frozenset({Side.LEFT}),
    'right': frozenset({Side.RIGHT}),
    'both': frozenset({Side.LEFT, Side.RIGHT}),
}
_NAME_PATTERN: Final = re.compile(r'^(?P<task>.+?)(?P<number>\d+)$')
_PAPER_CONFIG_DIR: Final = 'paper_configs'
_PAPER_ROBOTS: Final = ('baxter', 'yumi')


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
    lines = read_lines(path, 'segment file')
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
    :param pads: The task surface of each paper robot's configuration that has one, by robot
        name (:mod:`pic_ros_tools.recordings.paper_task`); empty when no configuration does.
    :raises RecordingError: If ``segments`` and ``task_arms`` differ in length or a segment
        lies beyond the recording.
    """

    name: str
    recording: KinectV2Recording
    segments: tuple[Segment, ...]
    task_arms: tuple[frozenset[Side], ...]
    pads: Mapping[str, PaperPad] = field(default_factory=dict)

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
    skeleton = data_dir / f'{name}{SKELETON_SUFFIX}'
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


def paper_pads(data_dir: Path, name: str) -> dict[str, PaperPad]:
    """
    Read the task surface of every paper robot's configuration of a paper recording.

    :param data_dir: The paper's demonstration folder (its configurations in ``paper_configs``).
    :param name: The recording name (``incision_straight3``).
    :return: The task surface per paper robot whose configuration has one.
    """
    return pads_of_configs(data_dir / _PAPER_CONFIG_DIR, name)


def pads_beside(config: Path | str) -> dict[str, PaperPad]:
    """
    Read the task surfaces of a paper configuration and its siblings for the other robots.

    :param config: A paper configuration, ``<robot>_config_<recording>.json``.
    :return: The task surface per paper robot whose configuration of that recording, in the
        same folder, has one (empty when the name is not of that form).
    """
    path = Path(config)
    robot, marker, name = path.stem.partition('_config_')
    if not marker or robot not in _PAPER_ROBOTS:
        return {}
    return pads_of_configs(path.parent, name)


def pads_of_configs(folder: Path, name: str) -> dict[str, PaperPad]:
    """
    Read the task surface of every paper robot's configuration of a recording in a folder.

    :param folder: The folder of the ``<robot>_config_<name>.json`` files.
    :param name: The recording name.
    :return: The task surface per paper robot whose configuration has one.
    """
    pads: dict[str, PaperPad] = {}
    for robot in _PAPER_ROBOTS:
        path = folder / f'{robot}_config_{name}.json'
        pad = load_paper_pad(path) if path.is_file() else None
        if pad is not None:
            pads[robot] = pad
    return pads


def load_paper_demonstration(data_dir: Path | str, name: str) -> PaperDemonstration:
    """
    Load one PIC paper demonstration by recording name.

    Reads ``<name>_skel.txt`` (+ ``_skelts.txt``), the segment file ``<task>_<n>.txt``, the
    task surfaces of the paper configs (:func:`load_paper_pad`) and the task arms of
    ``paper_configs/baxter_config_<name>.json`` (checked against the YuMi paper config when
    present) or, for recordings of the same layout that are not the paper's (the
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
        name=name, recording=recording, segments=segments, task_arms=_task_arms(data_dir, name),
        pads=paper_pads(data_dir, name),
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
    for skeleton in data_dir.glob(f'*{SKELETON_SUFFIX}'):
        name = skeleton.name[: -len(SKELETON_SUFFIX)]
        if _NAME_PATTERN.match(name) is None:
            continue
        _, segment_path, config = _paper_paths(data_dir, name)
        if segment_path.is_file() and config.is_file():
            names.append(name)
        else:
            _LOG.debug('%s: no segment file or paper config, skipped', skeleton)
    return tuple(load_paper_demonstration(data_dir, name) for name in sorted(names))
