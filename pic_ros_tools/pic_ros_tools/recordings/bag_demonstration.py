"""
Bag demonstrations: a rosbag2 of body-tracking MarkerArrays as a recording to evaluate.

The bag's skeletons (:mod:`pic_ros_tools.recordings.skeleton_bag_reader`) become a
:class:`~pic_ros_tools.recordings.demonstration.Demonstration` whose segments and task arms come
from the paper's files when given, else from the bag's ``custom_data``
(:mod:`pic_ros_tools.recordings.annotations`), else cover the whole bag with both arms.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pic_ros.exceptions import RecordingError
from pic_ros.skeleton import Side
from pic_ros_tools.recordings.annotations import (
    CUSTOM_PREFIX,
    segments_from_text,
    task_arms_from_text,
)
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper import (
    load_segments,
    load_task_arms,
    pads_beside,
    Segment,
)
from pic_ros_tools.recordings.rosbag import BAG_SUFFIXES, read_metadata, resolve_bag_path
from pic_ros_tools.recordings.skeleton_bag_reader import decode_skeleton_bag, DecodedBag


def is_bag_path(path: Path | str) -> bool:
    """
    Tell whether a path looks like a rosbag2 (without opening it).

    :param path: A path.
    :return: True for a directory holding ``metadata.yaml`` and for an existing ``.mcap`` or
        ``.db3`` file.
    """
    candidate = Path(path)
    if candidate.is_dir():
        return (candidate / 'metadata.yaml').is_file()
    return candidate.is_file() and candidate.suffix in BAG_SUFFIXES


def _bag_name(resolved: Path) -> str:
    return resolved.name if resolved.is_dir() else resolved.stem


def demonstration_from_bag(
    path: Path | str,
    topic: str | None = None,
    *,
    segments: Path | str | None = None,
    task_arms: Path | str | None = None,
    source: str = 'auto',
    name: str | None = None,
) -> Demonstration:
    """
    Load a bag of body-tracking MarkerArrays as a recording to evaluate.

    Segments, in this order: the given segment file (the paper's format: ``first last`` per
    line, 1-based inclusive **message numbers on the topic**, single-cursor semantics of
    :func:`~pic_ros_tools.recordings.paper.load_segments`; for a bag converted from a paper
    recording these are its skeleton line numbers); else the segments stored in the bag's
    ``custom_data`` by ``python -m pic_ros_tools convert`` or the demo script (when the topic is
    the one they were written for); else one segment over the whole bag. Message ranges become
    frame ranges by leaving out the messages that gave no frame (empty arrays). Task arms: the
    given paper config (``arm`` field), else those stored in the bag, else both arms for every
    segment.

    :param path: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :param topic: The MarkerArray topic (see
        :func:`~pic_ros_tools.recordings.skeleton_bag_reader.skeleton_frames_from_bag`).
    :param segments: Optional segment file.
    :param task_arms: Optional paper configuration JSON whose ``arm`` field lists the task
        arm(s) of each segment; its task surface and its siblings' for the other paper robots
        (:func:`~pic_ros_tools.recordings.paper.pads_beside`) give the occlusion metric's.
    :param source: ``'auto'``, ``'azure_kinect'`` or ``'kinect_v2'``.
    :param name: Recording name; default the bag directory name (or the file stem).
    :return: The demonstration, ``'tracker'``-frame skeletons.
    :raises RecordingError: If the bag or a file cannot be read, no message holds a body, or
        the segments and task arms disagree in number.
    :raises ConfigError: If ``source`` is unknown or contradicts the markers.
    """
    resolved = resolve_bag_path(path)
    decoded = decode_skeleton_bag(resolved, topic, source)
    return demonstration_from_decoded(
        resolved, decoded, segments=segments, task_arms=task_arms, name=name
    )


def _stored_with(resolved: Path, topic: str) -> Mapping[str, str]:
    """
    Return the bag's custom metadata when it was stored for this topic, else nothing.

    :param resolved: The bag (a directory has ``metadata.yaml``; a single file has none).
    :param topic: The decoded topic.
    :return: The ``custom_data`` of the bag's metadata as strings, or empty.
    """
    if not resolved.is_dir():
        return {}
    data = read_metadata(resolved).get('custom_data')
    if not isinstance(data, dict):
        return {}
    custom = {str(key): str(value) for key, value in data.items()}
    return custom if custom.get(CUSTOM_PREFIX + 'topic') == topic else {}


def _stored_segments(
    resolved: Path, topic: str, custom: Mapping[str, str], messages: int
) -> tuple[Segment, ...]:
    """
    Return the segments stored in the bag's metadata, checked against its messages.

    :raises RecordingError: If a segment goes beyond the topic's messages.
    """
    found = segments_from_text(custom[CUSTOM_PREFIX + 'segments'], resolved)
    if any(segment.stop > messages for segment in found):
        raise RecordingError(
            f'{resolved}: the stored segments go beyond the {messages} messages of {topic}'
        )
    return found


def demonstration_from_decoded(
    resolved: Path,
    decoded: DecodedBag,
    *,
    segments: Path | str | None = None,
    task_arms: Path | str | None = None,
    name: str | None = None,
) -> Demonstration:
    """
    Make the recording to evaluate of an already decoded bag topic.

    Segments and task arms are found as :func:`demonstration_from_bag` finds them.

    :param resolved: The bag, as :func:`~pic_ros_tools.recordings.rosbag.resolve_bag_path` returns
        it.
    :param decoded: Its decoded MarkerArray topic
        (:func:`~pic_ros_tools.recordings.skeleton_bag_reader.decode_skeleton_bag`).
    :param segments: Optional segment file.
    :param task_arms: Optional paper configuration JSON (``arm`` field).
    :param name: Recording name; default the bag directory name (or the file stem).
    :return: The demonstration, ``'tracker'``-frame skeletons.
    :raises RecordingError: If no message holds a body, a file cannot be read, or the segments
        and task arms disagree in number.
    """
    label = name if name is not None else _bag_name(resolved)
    if not decoded.frames:
        raise RecordingError(
            f'{resolved}: no skeleton on {decoded.topic}: no message holds a tracked body'
        )
    messages = decoded.frames_before.shape[0] - 1
    custom = _stored_with(resolved, decoded.topic)
    found: tuple[Segment, ...] | None = None
    if segments is not None:
        found = load_segments(segments, frame_count=messages)
    elif CUSTOM_PREFIX + 'segments' in custom:
        found = _stored_segments(resolved, decoded.topic, custom, messages)
    arms: tuple[frozenset[Side], ...] | None = None
    if task_arms is not None:
        arms = load_task_arms(task_arms)
    elif CUSTOM_PREFIX + 'task_arms' in custom:
        arms = task_arms_from_text(custom[CUSTOM_PREFIX + 'task_arms'], resolved)
    if found is None:
        whole = Demonstration.whole(label, decoded.frames)
        if arms is not None and len(arms) != 1:
            raise RecordingError(
                f'{resolved}: {len(arms)} task-arm entries but no segments; give the segment '
                'file too'
            )
        return whole if arms is None else Demonstration(label, whole.frames, whole.segments, arms)
    if arms is None:
        arms = (frozenset({Side.LEFT, Side.RIGHT}),) * len(found)
    if len(arms) != len(found):
        raise RecordingError(
            f'{resolved}: {len(found)} segments but {len(arms)} task-arm entries'
        )
    before = decoded.frames_before
    mapped = tuple(
        Segment(
            index=segment.index,
            start=int(before[segment.start]),
            stop=int(before[segment.stop]),
            first_line=segment.first_line,
            last_line=segment.last_line,
        )
        for segment in found
    )
    pads = pads_beside(task_arms) if task_arms is not None else {}
    return Demonstration(label, decoded.frames, mapped, arms, pads)


__all__ = ['demonstration_from_bag', 'demonstration_from_decoded', 'is_bag_path']
