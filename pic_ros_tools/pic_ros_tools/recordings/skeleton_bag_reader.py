"""
Skeleton bag decoding: the tracked person's skeletons from a bag of body-tracking MarkerArrays.

Decoding follows the skeleton node: marker ids and positions are parsed straight from the CDR
bytes (:mod:`pic_ros.trackers.marker_cdr`, with a regular deserialization fallback for older
Marker layouts), the format is detected from the joint indices when asked (``auto``: any joint
index >= 25 means Azure Kinect's 32 joints, otherwise Kinect v2's 25), the tracked body is chosen
by :class:`~pic_ros.trackers.frames.BodySelector`, and empty arrays give no frame. Stamps are
the first marker's header stamp (:func:`~pic_ros_tools.recordings.stamps.stamp_from_ns`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from pathlib import Path
import struct
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_choice
from pic_ros.exceptions import ConfigError, RecordingError
from pic_ros.skeleton import SkeletonFrame
from pic_ros.trackers.frames import BodySelector
from pic_ros.trackers.marker_cdr import MarkerCdrError, parse_marker_array
from pic_ros.trackers.markers import (
    AZURE_KINECT,
    decode_markers,
    KINECT_V2,
    MARKER_ID_STRIDE,
    TRACKER_FORMATS,
    TrackerFormat,
)
from pic_ros_tools.recordings.rosbag import (
    absolute_topic,
    MARKER_ARRAY,
    open_reader,
    resolve_bag_path,
)
from pic_ros_tools.recordings.stamps import NS_PER_S, stamp_from_ns

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SOURCES: Final = ('auto', 'azure_kinect', 'kinect_v2')
"""Marker formats :func:`skeleton_frames_from_bag` accepts (``auto`` detects)."""


class _Markers(NamedTuple):
    stamp: float
    ids: IntArray
    positions: FloatArray


def _first_stamp_ns(data: bytes) -> int:
    """Read the first marker's header stamp [ns] of a non-empty MarkerArray's CDR bytes."""
    prefix = '<' if data[1:2] in (b'\x01', b'\x03') else '>'
    seconds, nanoseconds = struct.unpack_from(prefix + 'iI', data, 8)
    return int(seconds) * NS_PER_S + int(nanoseconds)


def _parse(reader: Any, connection: Any, data: bytes) -> _Markers:
    try:
        parsed = parse_marker_array(data)
        stamp = stamp_from_ns(_first_stamp_ns(data)) if parsed.ids.size else math.nan
        return _Markers(stamp, parsed.ids, parsed.positions)
    except (MarkerCdrError, struct.error):
        message = reader.deserialize(data, connection.msgtype)
    markers = list(message.markers)
    ids = np.array([marker.id for marker in markers], dtype=np.int64)
    positions = np.array(
        [[m.pose.position.x, m.pose.position.y, m.pose.position.z] for m in markers],
        dtype=np.float64,
    ).reshape(-1, 3)
    stamp = math.nan
    if markers:
        header = markers[0].header.stamp
        stamp = stamp_from_ns(int(header.sec) * NS_PER_S + int(header.nanosec))
    return _Markers(stamp, ids, positions)


def _marker_topic(resolved: Path, connections: Sequence[Any], topic: str | None) -> str:
    """Choose the MarkerArray topic to decode."""
    arrays = sorted({c.topic for c in connections if c.msgtype == MARKER_ARRAY})
    if topic is not None:
        wanted = absolute_topic(topic)
        types = {c.msgtype for c in connections if c.topic == wanted}
        if not types:
            raise RecordingError(
                f'{resolved}: no topic {wanted}; its MarkerArray topics are '
                f'{", ".join(arrays) or "none"}'
            )
        if types != {MARKER_ARRAY}:
            raise RecordingError(f'{resolved}: {wanted} is {", ".join(sorted(types))}, not '
                                 f'{MARKER_ARRAY}')
        return wanted
    if len(arrays) == 1:
        return str(arrays[0])
    tracking = [name for name in arrays if name.endswith('body_tracking_data')]
    if len(tracking) == 1:
        return str(tracking[0])
    if not arrays:
        raise RecordingError(f'{resolved}: the bag has no {MARKER_ARRAY} topic')
    raise RecordingError(
        f'{resolved}: several MarkerArray topics ({", ".join(arrays)}); choose one'
    )


@dataclass(frozen=True)
class DecodedBag:
    """
    A decoded MarkerArray topic: its skeletons and which messages gave them.

    :param topic: The topic decoded (absolute).
    :param tracker: The marker format used, or None when no message holds a marker.
    :param frames: The tracked person's skeletons, as :func:`skeleton_frames_from_bag`.
    :param frames_before: Shape (messages + 1,): entry *k* is the number of frames decoded
        from the first *k* messages on the topic, so message range ``[a, b)`` gave frames
        ``[frames_before[a], frames_before[b])``.
    """

    topic: str
    tracker: TrackerFormat | None
    frames: tuple[SkeletonFrame, ...]
    frames_before: IntArray


def _detect(messages: Sequence[_Markers]) -> TrackerFormat | None:
    top = -1
    for message in messages:
        usable = message.ids[message.ids >= 0]
        if usable.size:
            top = max(top, int(np.max(usable % MARKER_ID_STRIDE)))
    if top < 0:
        return None
    return AZURE_KINECT if top >= KINECT_V2.joint_count else KINECT_V2


def decode_skeleton_bag(path: Path | str, topic: str | None, source: str) -> DecodedBag:
    """
    Decode a MarkerArray topic of a bag, keeping track of which messages gave a frame.

    :param path: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :param topic: The MarkerArray topic, or None to choose it (see
        :func:`skeleton_frames_from_bag`).
    :param source: ``'auto'``, ``'azure_kinect'`` or ``'kinect_v2'``.
    :return: The decoded topic.
    :raises RecordingError: If the bag cannot be read or has no suitable topic.
    :raises ConfigError: If ``source`` is unknown or contradicts the markers.
    """
    check_choice('source', source, SOURCES)
    resolved = resolve_bag_path(path)
    messages: list[_Markers] = []
    with open_reader(resolved) as reader:
        if not reader.is2:
            raise RecordingError(f'{resolved} is not a rosbag2')
        name = _marker_topic(resolved, reader.connections, topic)
        connections = [c for c in reader.connections if c.topic == name]
        for connection, _, data in reader.messages(connections=connections):
            messages.append(_parse(reader, connection, bytes(data)))
    detected = _detect(messages)
    if source == 'auto':
        tracker = detected
    else:
        tracker = TRACKER_FORMATS[source]
        if tracker is KINECT_V2 and detected is AZURE_KINECT:
            raise ConfigError(
                f'{resolved}: {name} has joint indices beyond the 25 of kinect_v2; its markers '
                'are azure_kinect'
            )
    frames: list[SkeletonFrame] = []
    frames_before = np.zeros(len(messages) + 1, dtype=np.int64)
    selector = BodySelector()
    for index, message in enumerate(messages):
        if tracker is not None and message.ids.size:
            chosen = selector.select(
                decode_markers(tracker, message.ids, message.positions, message.stamp)
            )
            if isinstance(chosen, SkeletonFrame):
                frames.append(chosen)
        frames_before[index + 1] = len(frames)
    return DecodedBag(name, tracker, tuple(frames), frames_before)


def skeleton_frames_from_bag(
    bag: Path | str, topic: str | None = None, source: str = 'auto'
) -> tuple[SkeletonFrame, ...]:
    """
    Decode the tracked person's skeletons from a bag of body-tracking MarkerArrays.

    :param bag: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :param topic: The MarkerArray topic; default: the bag's only MarkerArray topic, or its only
        one ending in ``body_tracking_data``.
    :param source: ``'auto'`` (detect from the joint indices), ``'azure_kinect'`` or
        ``'kinect_v2'``.
    :return: One frame per message that holds the tracked body, in time order: 12
        :class:`~pic_ros.skeleton.HumanJoint` rows, [m], ``'tracker'`` frame, stamp = the
        markers' header stamp [s]. Empty arrays and arrays without the tracked body give none.
    :raises RecordingError: If the bag cannot be read or has no suitable topic.
    :raises ConfigError: If ``source`` is unknown or contradicts the markers.
    """
    return decode_skeleton_bag(bag, topic, source).frames


__all__ = ['DecodedBag', 'SOURCES', 'decode_skeleton_bag', 'skeleton_frames_from_bag']
