"""Shared helpers of the rosbag2 tests: the demo bag, an independent decoder, frame comparison."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
from pic_ros.skeleton import HumanJoint, SkeletonFrame
from pic_ros.trackers.kinect_v2 import KINECT_V2_JOINTS
from pic_ros.trackers.markers import AZURE_KINECT_JOINTS

AZURE_TOPIC = '/kinect2/body_tracking_data'
"""Body-tracking topic of the real Azure Kinect bag of the shared data."""

AZURE_MESSAGES = 933
"""MarkerArrays on that topic."""

AZURE_EMPTY = 60
"""Empty arrays among them (frames without a body)."""

DEMO_BAG = Path(__file__).resolve().parents[1] / 'pic_ros_tools' / 'demo' / 'synthetic1_bag'
"""The shipped demo bag."""

K4 = {name: index for index, name in enumerate(AZURE_KINECT_JOINTS)}
"""Azure Kinect (K4ABT) joint index by name."""

V2 = {name: index for index, name in enumerate(KINECT_V2_JOINTS)}
"""Kinect v2 joint index by name."""

TIMING_KEYS = ('solve_ms_p50', 'solve_ms_p99', 'solve_us_histogram')
"""Metrics of ``evaluate`` that are solve times, which differ from run to run."""


@functools.lru_cache(maxsize=8)
def decoded_markers(
    bag: Path, topic: str | None = None
) -> list[tuple[int, int, tuple, np.ndarray]]:
    """
    Decode a bag's MarkerArrays with rosbags' own deserializer.

    :param bag: A bag directory or storage file.
    :param topic: Only this topic (absolute), or None for every topic.
    :return: Per message: receive stamp [ns], first header stamp [ns] (-1 for an empty array),
        marker ids, positions (N, 3) [m].
    """
    from rosbags.highlevel import AnyReader

    result = []
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if topic is None or c.topic == topic]
        for connection, stamp, raw in reader.messages(connections=connections):
            markers = reader.deserialize(raw, connection.msgtype).markers
            header = markers[0].header.stamp if markers else None
            result.append((
                stamp,
                -1 if header is None else header.sec * 1_000_000_000 + header.nanosec,
                tuple(marker.id for marker in markers),
                np.array([[m.pose.position.x, m.pose.position.y, m.pose.position.z]
                          for m in markers]).reshape(-1, 3),
            ))
    return result


def same_frames(first, second) -> bool:
    """
    Tell whether two frame sequences have identical stamps, positions and validity.

    :param first: Skeleton frames.
    :param second: Skeleton frames.
    :return: True if they are equal frame by frame (NaN equal to NaN).
    """
    return len(first) == len(second) and all(
        a.stamp == b.stamp and a.frame == b.frame and np.array_equal(a.valid, b.valid)
        and np.array_equal(a.positions, b.positions, equal_nan=True)
        for a, b in zip(first, second, strict=True)
    )


def without_face(frames):
    """
    Return frames with the face rows (nose, ears) made invalid.

    The demo bag's face points are synthesized for display (:mod:`pic_ros_tools.azure_joints`);
    its Kinect v2 text recording has none: the two agree on every other row.

    :param frames: Skeleton frames.
    :return: New frames, the face rows NaN and invalid.
    """
    face = [HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT]
    result = []
    for frame in frames:
        positions, valid = frame.positions.copy(), frame.valid.copy()
        positions[face], valid[face] = np.nan, False
        result.append(SkeletonFrame(frame.stamp, positions, valid, frame.frame))
    return tuple(result)
