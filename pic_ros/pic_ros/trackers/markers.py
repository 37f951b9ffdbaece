"""
Marker-based body trackers: joint tables, axes and the decoding of one marker array.

The Azure Kinect ROS driver publishes one ``visualization_msgs/MarkerArray`` per body-tracking
frame, with every joint of every tracked body as one marker whose id is
``body_id * 100 + joint_index`` (``docs/interfaces.md#marker-arrays``). ``source: kinect_v2``
uses the same encoding with the 25 Kinect v2 joint indices. The ROS layer turns one array into
plain arrays (marker ids, shape (N,), and positions, shape (N, 3), [m], in the camera frame of
the message) and :func:`decode_markers` turns those into one :class:`SkeletonFrame` per body in
the ``'tracker'`` frame of :mod:`pic_ros.skeleton`. :class:`MarkerArrayTracker` is the
:class:`~pic_ros.trackers.base.TrackerSource` of each format (registered as ``azure_kinect`` and
``kinect_v2``).

Camera axes of the supported formats (the origin and the unit are kept; only axes change):

- ``azure_kinect``: depth camera frame, x right, y down, z forward (out of the camera);
  ``(x, y, z)_tracker = (z, -x, -y)_camera`` (:func:`azure_camera_to_tracker`);
- ``kinect_v2``: camera space, x to the sensor's left, y up, z out of the sensor;
  ``(x, y, z)_tracker = (z, x, y)_camera`` (:func:`pic_ros.trackers.kinect_v2.camera_to_tracker`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.skeleton import BODY_JOINT_COUNT, JOINT_COUNT, SkeletonFrame
from pic_ros.trackers.base import (
    register_tracker,
    TrackerFactory,
    TrackerReading,
    TrackerSource,
    Transport,
)
from pic_ros.trackers.gaps import GapCounter
from pic_ros.trackers.kinect_v2 import camera_to_tracker, KINECT_V2_JOINTS, KINECT_V2_TO_HUMAN

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

MARKER_ID_STRIDE: Final = 100
"""Marker ``id = body_id * MARKER_ID_STRIDE + joint_index`` (Azure Kinect ROS driver)."""

MAX_BODIES: Final = 32
"""Bodies decoded from one array: the lowest ids; the others are skipped and counted
(``bodies_ignored``). A depth camera sees a handful of people; an array with thousands of
bodies (a stray or malformed publisher) cost up to 0.9 s to decode and select from."""

AZURE_KINECT_JOINTS: Final[tuple[str, ...]] = (
    'PELVIS',
    'SPINE_NAVEL',
    'SPINE_CHEST',
    'NECK',
    'CLAVICLE_LEFT',
    'SHOULDER_LEFT',
    'ELBOW_LEFT',
    'WRIST_LEFT',
    'HAND_LEFT',
    'HANDTIP_LEFT',
    'THUMB_LEFT',
    'CLAVICLE_RIGHT',
    'SHOULDER_RIGHT',
    'ELBOW_RIGHT',
    'WRIST_RIGHT',
    'HAND_RIGHT',
    'HANDTIP_RIGHT',
    'THUMB_RIGHT',
    'HIP_LEFT',
    'KNEE_LEFT',
    'ANKLE_LEFT',
    'FOOT_LEFT',
    'HIP_RIGHT',
    'KNEE_RIGHT',
    'ANKLE_RIGHT',
    'FOOT_RIGHT',
    'HEAD',
    'NOSE',
    'EYE_LEFT',
    'EAR_LEFT',
    'EYE_RIGHT',
    'EAR_RIGHT',
)
"""The 32 K4ABT joint names (Body Tracking SDK 1.x), in index order (PELVIS = 0 ... EAR_RIGHT)."""

AZURE_KINECT_TO_HUMAN: Final[tuple[int | None, ...]] = tuple(
    AZURE_KINECT_JOINTS.index(name)
    for name in (
        'PELVIS',
        'SPINE_CHEST',
        'NECK',
        'HEAD',
        'SHOULDER_LEFT',
        'ELBOW_LEFT',
        'WRIST_LEFT',
        'HAND_LEFT',
        'SHOULDER_RIGHT',
        'ELBOW_RIGHT',
        'WRIST_RIGHT',
        'HAND_RIGHT',
        'NOSE',
        'EAR_LEFT',
        'EAR_RIGHT',
        'HANDTIP_LEFT',
        'THUMB_LEFT',
        'HANDTIP_RIGHT',
        'THUMB_RIGHT',
    )
)
"""
K4ABT joint index of each :class:`HumanJoint` row, length 19 (Azure Kinect has every row).

``(0, 2, 3, 26, 5, 6, 7, 8, 12, 13, 14, 15, 27, 29, 31, 9, 10, 16, 17)``: PELVIS, SPINE_CHEST,
NECK, HEAD, then shoulder, elbow, wrist and hand of the left and of the right arm, then NOSE,
EAR_LEFT, EAR_RIGHT, HANDTIP_LEFT, THUMB_LEFT, HANDTIP_RIGHT, THUMB_RIGHT. K4ABT names sides as
the person's own, like :class:`HumanJoint` (its left shoulder, ear and hand are all on the
person's left), so left rows take left joints.
"""

_AZURE_SIGNS: Final = np.array([1.0, -1.0, -1.0])
_AZURE_AXES: Final = np.array([2, 0, 1])


def azure_camera_to_tracker(points: npt.ArrayLike) -> FloatArray:
    """
    Convert points from the Azure Kinect depth camera frame to the ``'tracker'`` axes.

    Depth camera frame: x right, y down, z forward (out of the camera). Tracker (REP-103 as seen
    from the sensor): x away from the sensor, y to the sensor's left, z up. So
    ``(x, y, z)_tracker = (z, -x, -y)_camera``, a proper rotation (determinant +1) with the same
    origin and unit. Pure index and sign operations: NaN and inf pass through without warnings.
    When the subject faces the camera, the sensor's left is the subject's *right*: the right
    shoulder then has the larger tracker y.

    :param points: Points, shape (..., 3), any unit, depth camera frame.
    :return: New array, shape (..., 3), same unit, tracker frame.
    :raises SkeletonError: If the last axis does not have length 3.
    """
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != 3:
        raise SkeletonError(f'points must have shape (..., 3), got {array.shape}')
    converted: FloatArray = array[..., _AZURE_AXES] * _AZURE_SIGNS
    return converted


@dataclass(frozen=True, eq=False)
class TrackerFormat:
    """
    How one marker-based tracker numbers its joints and orients its camera frame.

    :param name: Source name, as in the ``source`` parameter (e.g. ``'azure_kinect'``).
    :param joint_names: The tracker's joint names in index order (``marker.id % 100``); at most
        :data:`MARKER_ID_STRIDE` joints.
    :param to_human: Tracker joint index of each :class:`HumanJoint` row, length 19, distinct;
        None where the tracker has no such joint (the row is then always invalid).
    :param to_tracker: Converts points, shape (..., 3), from the tracker's camera frame to the
        ``'tracker'`` axes (same origin and unit); must be a proper rotation.
    :raises ConfigError: If the tables are inconsistent.
    """

    name: str
    joint_names: tuple[str, ...]
    to_human: tuple[int | None, ...]
    to_tracker: Callable[[npt.ArrayLike], FloatArray]

    def __post_init__(self) -> None:
        count = len(self.joint_names)
        if not 0 < count <= MARKER_ID_STRIDE:
            raise ConfigError(
                f'{self.name}: a tracker has 1 to {MARKER_ID_STRIDE} joints, got {count}'
            )
        sources = [index for index in self.to_human if index is not None]
        if len(self.to_human) != JOINT_COUNT or len(set(sources)) != len(sources):
            raise ConfigError(
                f'{self.name}: to_human needs {JOINT_COUNT} entries, distinct joint indices or '
                'None'
            )
        if not all(isinstance(index, int) and 0 <= index < count for index in sources):
            raise ConfigError(f'{self.name}: to_human indices must be in [0, {count})')
        if any(index is None for index in self.to_human[:BODY_JOINT_COUNT]):
            raise ConfigError(f'{self.name}: every body row (0 to 11) needs a tracker joint')

    @cached_property
    def sources(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
        """
        Return the rows the tracker fills and their tracker joint indices.

        :return: ``(rows, joints)``, both shape (K,), read-only: :class:`HumanJoint` rows with
            a source, and the tracker joint index of each.
        """
        pairs = [(row, index) for row, index in enumerate(self.to_human) if index is not None]
        rows = np.array([row for row, _ in pairs], dtype=np.intp)
        joints = np.array([index for _, index in pairs], dtype=np.intp)
        rows.setflags(write=False)
        joints.setflags(write=False)
        return rows, joints

    @cached_property
    def joint_ids(self) -> IntArray:
        """
        Return the joint indices in order, ``0 .. J-1``: the ids of one whole body's markers.

        :return: Shape (J,), read-only.
        """
        ids = np.arange(self.joint_count, dtype=np.int64)
        ids.setflags(write=False)
        return ids

    @property
    def joint_count(self) -> int:
        """Return the number of tracker joints per body (32 Azure Kinect, 25 Kinect v2)."""
        return len(self.joint_names)

    @property
    def rotation(self) -> FloatArray:
        """
        Return the rotation tracker <- camera, shape (3, 3); ``p_tracker = R @ p_camera``.

        :return: New array; column j is the image of camera axis j.
        """
        return self.to_tracker(np.eye(3)).T


AZURE_KINECT: Final = TrackerFormat(
    name='azure_kinect',
    joint_names=AZURE_KINECT_JOINTS,
    to_human=AZURE_KINECT_TO_HUMAN,
    to_tracker=azure_camera_to_tracker,
)
"""Azure Kinect (and Orbbec Femto through the K4A wrapper) body tracking, 32 joints."""

KINECT_V2: Final = TrackerFormat(
    name='kinect_v2',
    joint_names=KINECT_V2_JOINTS,
    to_human=KINECT_V2_TO_HUMAN,
    to_tracker=camera_to_tracker,
)
"""Kinect v2 bodies in the Azure Kinect marker encoding, 25 joints, Kinect v2 camera space."""

TRACKER_FORMATS: Final[Mapping[str, TrackerFormat]] = MappingProxyType(
    {AZURE_KINECT.name: AZURE_KINECT, KINECT_V2.name: KINECT_V2}
)
"""The marker-based formats by source name."""


@dataclass
class MarkerCounts:
    """
    Running counts of markers that :func:`decode_joints` did not use as given.

    :param ignored: Markers with a negative id or a joint index (``id % 100``) outside the
        format; they are skipped.
    :param duplicates: Markers whose id repeats an earlier marker of the same array; the last
        one wins, each earlier one counts here.
    :param bodies: Bodies of an array beyond its first :data:`MAX_BODIES` (by id), skipped.
    """

    ignored: int = 0
    duplicates: int = 0
    bodies: int = 0


class BodyJoints(NamedTuple):
    """
    Every joint of one body, in the tracker's joint order.

    :param positions: Shape (J, 3), [m], ``'tracker'`` axes; NaN where no marker came. Values
        are as received (a received NaN or inf stays NaN or inf).
    :param present: Shape (J,), True where a marker came for that joint.
    """

    positions: FloatArray
    present: BoolArray


def _marker_arrays(ids: npt.ArrayLike, positions: npt.ArrayLike) -> tuple[IntArray, FloatArray]:
    """Check and convert the marker ids (N,) and positions (N, 3); N may be 0."""
    marker_ids = np.asarray(ids)
    points = np.asarray(positions, dtype=np.float64)
    if marker_ids.size == 0 and points.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 3))
    if marker_ids.ndim != 1 or marker_ids.dtype.kind not in 'iu':
        raise SkeletonError(
            f'marker ids must be integers of shape (N,), got {marker_ids.dtype} {marker_ids.shape}'
        )
    if points.shape != (marker_ids.shape[0], 3):
        raise SkeletonError(
            f'marker positions must have shape ({marker_ids.shape[0]}, 3), got {points.shape}'
        )
    return marker_ids.astype(np.int64, copy=False), points


def decode_joints(
    tracker: TrackerFormat,
    ids: npt.ArrayLike,
    positions: npt.ArrayLike,
    counts: MarkerCounts | None = None,
) -> dict[int, BodyJoints]:
    """
    Group the markers of one array by body and joint, with every joint of the format.

    :param tracker: The format of the markers.
    :param ids: Marker ids, shape (N,), integers, ``body_id * 100 + joint_index``.
    :param positions: Marker positions, shape (N, 3), [m], the format's camera frame.
    :param counts: Optional running counts, incremented with the markers ignored (negative id,
        joint index outside the format), the duplicate ids (the last marker wins) and the
        bodies beyond :data:`MAX_BODIES`.
    :return: ``{body_id: joints}``, at most :data:`MAX_BODIES` bodies (the lowest ids) in
        increasing id order; empty when no marker is usable (an empty array means "no body").
    :raises SkeletonError: If the arrays have wrong shapes or the ids are not integers (a
        caller bug, never tracker data).
    """
    marker_ids, points = _marker_arrays(ids, positions)
    known = np.flatnonzero(
        (marker_ids >= 0) & (marker_ids % MARKER_ID_STRIDE < tracker.joint_count)
    )
    # A stable sort keeps repeated ids in arrival order: the last of each run wins.
    order = known[np.argsort(marker_ids[known], kind='stable')]
    sorted_ids = marker_ids[order]
    last_of_run = np.ones(sorted_ids.shape[0], dtype=bool)
    last_of_run[:-1] = sorted_ids[1:] != sorted_ids[:-1]
    if counts is not None:
        counts.ignored += int(marker_ids.shape[0] - known.shape[0])
        counts.duplicates += int(known.shape[0] - np.count_nonzero(last_of_run))
    if sorted_ids.shape[0] == 0:
        return {}
    unique_ids = sorted_ids[last_of_run]
    chosen = order[last_of_run]
    bodies = unique_ids // MARKER_ID_STRIDE
    new_body = np.ones(bodies.shape[0], dtype=bool)
    new_body[1:] = bodies[1:] != bodies[:-1]
    body_ids = bodies[new_body]
    if body_ids.shape[0] > MAX_BODIES:
        kept = bodies <= body_ids[MAX_BODIES - 1]
        if counts is not None:
            counts.bodies += int(body_ids.shape[0] - MAX_BODIES)
        unique_ids, chosen, bodies = unique_ids[kept], chosen[kept], bodies[kept]
        new_body, body_ids = new_body[kept], body_ids[:MAX_BODIES]
    body_index = np.cumsum(new_body) - 1
    joint_index = unique_ids % MARKER_ID_STRIDE
    table = np.full((body_ids.shape[0], tracker.joint_count, 3), np.nan)
    present = np.zeros((body_ids.shape[0], tracker.joint_count), dtype=bool)
    table[body_index, joint_index] = tracker.to_tracker(points[chosen])
    present[body_index, joint_index] = True
    return {
        int(body): BodyJoints(table[index], present[index])
        for index, body in enumerate(body_ids.tolist())
    }


def decode_markers(
    tracker: TrackerFormat,
    ids: npt.ArrayLike,
    positions: npt.ArrayLike,
    stamp: float,
    counts: MarkerCounts | None = None,
) -> dict[int, SkeletonFrame]:
    """
    Decode one marker array into one tracker-frame skeleton per body.

    A joint is valid when a marker came for it; its row holds the received value even if that
    is NaN or inf, so that :class:`~pic_ros.trackers.frames.FrameValidator` can report the
    frame as non-finite rather than mistake it for a missing joint. Joints without a marker are
    invalid NaN rows, and so are rows the format has no joint for (``None`` in
    :attr:`TrackerFormat.to_human`). Markers of joints the skeleton does not use (feet, eyes...)
    are decoded and discarded.

    :param tracker: The format of the markers.
    :param ids: Marker ids, shape (N,), integers, ``body_id * 100 + joint_index``.
    :param positions: Marker positions, shape (N, 3), [m], the format's camera frame.
    :param stamp: Capture time of the array [s] (the markers' ``header.stamp``).
    :param counts: Optional running counts of ignored and duplicate markers (see
        :func:`decode_joints`).
    :return: ``{body_id: frame}``: 19 :class:`HumanJoint` rows, [m], ``'tracker'`` frame,
        ``stamp``; empty when the array holds no usable marker.
    :raises SkeletonError: If the arrays have wrong shapes or the ids are not integers (a
        caller bug, never tracker data).
    """
    rows, sources = tracker.sources
    when = float(stamp)
    whole = _whole_body(tracker, ids, positions)
    if whole is not None:  # what the general path gives, without grouping the markers
        body, points = whole
        if rows.shape[0] == JOINT_COUNT:  # every row has a joint: rows are 0 .. 18
            table = tracker.to_tracker(points)[sources]
            present = np.ones(JOINT_COUNT, dtype=bool)
        else:
            table = np.full((JOINT_COUNT, 3), np.nan)
            present = np.zeros(JOINT_COUNT, dtype=bool)
            table[rows] = tracker.to_tracker(points)[sources]
            present[rows] = True
        return {body: SkeletonFrame(stamp=when, positions=table, valid=present)}
    frames = {}
    for body, joints in decode_joints(tracker, ids, positions, counts).items():
        points = np.full((JOINT_COUNT, 3), np.nan)
        present = np.zeros(JOINT_COUNT, dtype=bool)
        points[rows] = joints.positions[sources]
        present[rows] = joints.present[sources]
        frames[body] = SkeletonFrame(stamp=when, positions=points, valid=present)
    return frames


def _whole_body(
    tracker: TrackerFormat, ids: npt.ArrayLike, positions: npt.ArrayLike
) -> tuple[int, FloatArray] | None:
    """
    Recognise the usual array: one body, every joint once, in joint order.

    :return: ``(body_id, positions)`` (camera frame, one row per tracker joint) when the ids are
        ``body_id * 100 + (0, 1, ..., J-1)`` with ``body_id >= 0``; None otherwise. Such an
        array has no marker ignored and no duplicate.
    """
    if not (isinstance(ids, np.ndarray) and ids.shape == (tracker.joint_count,)):
        return None
    marker_ids, points = _marker_arrays(ids, positions)
    first = int(marker_ids[0])
    if first < 0 or first % MARKER_ID_STRIDE:
        return None
    if (marker_ids - first != tracker.joint_ids).any():
        return None
    return first // MARKER_ID_STRIDE, points


class MarkerArrayTracker(TrackerSource):
    """
    A marker-based body tracker (:class:`TrackerFormat`): one marker array, every body in it.

    Fed :class:`~pic_ros.trackers.marker_cdr.MarkerPositions`; counts the markers it could not
    use (:class:`MarkerCounts`).

    :param tracker: The marker format.
    """

    transport = Transport.MARKER_ARRAY

    def __init__(self, tracker: TrackerFormat) -> None:
        super().__init__(tracker.name)
        self.format = tracker
        self.counts = MarkerCounts()
        self.gaps = GapCounter()
        """Arrays never received, from gaps in the stamps (``lost_upstream``)."""

    def decode(self, message: Any, receive_time: float) -> TrackerReading:
        """
        Decode one marker array.

        :param message: The array's :class:`~pic_ros.trackers.marker_cdr.MarkerPositions`.
        :param receive_time: When the node received it [s] (the stamp is the array's own
            capture stamp; this only goes into :attr:`TrackerReading.received`).
        :return: One skeleton per body; empty for an empty array.
        """
        bodies = decode_markers(
            self.format, message.ids, message.positions, message.stamp, self.counts
        )
        if bodies:
            self.gaps.stamp(float(message.stamp))
        else:
            self.gaps.interrupt()
        return TrackerReading(float(message.stamp), bodies, float(receive_time))

    def status(self) -> dict[str, int | float | str]:
        """
        Return the counts of arrays lost upstream and of markers not used as given.

        :return: ``lost_upstream`` (arrays missing from the stamps' sequence, see
            :class:`~pic_ros.trackers.gaps.GapCounter`), ``sequence_restarts`` and
            ``sequence_pauses`` (the stamps started over after a jump or a pause: nothing
            counted lost across), ``markers_ignored``, ``markers_duplicate`` and
            ``bodies_ignored`` (beyond :data:`MAX_BODIES` in an array).
        """
        return {
            'lost_upstream': self.gaps.lost,
            'sequence_restarts': self.gaps.restarts,
            'sequence_pauses': self.gaps.pauses,
            'markers_ignored': self.counts.ignored,
            'markers_duplicate': self.counts.duplicates,
            'bodies_ignored': self.counts.bodies,
        }


def _marker_tracker(tracker: TrackerFormat) -> TrackerFactory:
    def make(options: Mapping[str, Any]) -> TrackerSource:
        del options  # marker trackers have no options
        return MarkerArrayTracker(tracker)

    return make


for _format in TRACKER_FORMATS.values():
    register_tracker(_format.name, _marker_tracker(_format))
