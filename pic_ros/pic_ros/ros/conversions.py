"""
Conversions between ROS 2 messages and core values; the boundary checks live here.

Directions are named ``<core>_from_msg`` and ``<core>_to_msg``. ROS quaternions are
``(x, y, z, w)``; the skeleton topic carries joint positions only (identity orientations).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
import functools
import math
import struct
from typing import Final

from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, PointStamped, Pose, PoseArray, PoseStamped, Twist
import numpy as np
import numpy.typing as npt
from pic_ros.correspondence.overlay import (
    FOLLOW_COLOURS,
    FollowState,
    PersonOverlay,
    TRUNK_COLOUR,
)
from pic_ros.exceptions import SkeletonError
from pic_ros.human.body_frame import Footprint
from pic_ros.motion.base_following import BaseCommand
from pic_ros.motion.clock import RelativeClock
from pic_ros.motion.streaming import TrajectoryChunk
from pic_ros.skeleton import (
    BODY_JOINT_COUNT,
    HUMAN_JOINT_NAMES,
    HumanJoint,
    JOINT_COUNT,
    make_frame,
    pad_body_rows,
    SkeletonFrame,
)
from pic_ros.trackers.marker_cdr import MarkerCdrError, MarkerPositions, parse_marker_array
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

FloatArray = npt.NDArray[np.float64]

SKELETON_BONES = (
    (0, 1), (1, 2), (2, 3), (1, 4), (4, 5), (5, 6), (6, 7), (1, 8), (8, 9), (9, 10), (10, 11),
    (HumanJoint.HEAD, HumanJoint.NOSE), (HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT),
    (HumanJoint.HAND_LEFT, HumanJoint.HAND_TIP_LEFT),
    (HumanJoint.WRIST_LEFT, HumanJoint.THUMB_LEFT),
    (HumanJoint.HAND_RIGHT, HumanJoint.HAND_TIP_RIGHT),
    (HumanJoint.WRIST_RIGHT, HumanJoint.THUMB_RIGHT),
)
"""
Pairs of :class:`~pic_ros.skeleton.HumanJoint` rows drawn as bones in RViz.

The body, then the face (head to nose, ear to ear) and the fingers (hand to hand tip, wrist to
thumb, as the trackers chain them); a bone is drawn when both its points are valid.
"""


def time_from_msg(stamp: Time) -> float:
    """
    Convert a ``builtin_interfaces/Time`` to seconds.

    :param stamp: The message stamp.
    :return: Seconds [s].
    """
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


def stamp_parts(seconds: float) -> tuple[int, int]:
    """
    Split seconds into the ``sec`` and ``nanosec`` of a ``builtin_interfaces/Time``.

    :param seconds: Time [s], finite and non-negative.
    :return: Whole seconds and nanoseconds (0 to 999999999), rounded to the nanosecond.
    """
    whole = math.floor(seconds)
    nanoseconds = int(round((seconds - whole) * 1e9))
    if nanoseconds >= 1_000_000_000:
        whole, nanoseconds = whole + 1, nanoseconds - 1_000_000_000
    return int(whole), nanoseconds


def time_to_msg(seconds: float) -> Time:
    """
    Convert seconds to a ``builtin_interfaces/Time``.

    :param seconds: Time [s], finite and non-negative.
    :return: The stamp.
    """
    whole, nanoseconds = stamp_parts(seconds)
    return Time(sec=whole, nanosec=nanoseconds)


def marker_positions_from_raw(data: bytes) -> MarkerPositions:
    """
    Read marker ids and positions from a serialized MarkerArray.

    Uses the fast CDR walker of :mod:`pic_ros.trackers.marker_cdr` and falls back to rclpy's
    deserialization when the layout is not the expected one (e.g. a Foxy-era Marker).

    :param data: CDR bytes from a raw subscription.
    :return: Stamp [s], frame id, ids (N,), positions (N, 3) [m].
    :raises MarkerCdrError: If neither reads the bytes as a MarkerArray.
    """
    try:
        return parse_marker_array(data)
    except MarkerCdrError as fast_error:
        try:
            message = deserialize_message(data, MarkerArray)
        except Exception as err:  # rclpy raises its private RMWError
            raise MarkerCdrError(f'not a MarkerArray ({fast_error}; rclpy: {err})') from err
    return marker_positions_from_msg(message)


def marker_positions_from_msg(message: MarkerArray) -> MarkerPositions:
    """
    Read marker ids and positions from a MarkerArray message object.

    :param message: The message.
    :return: Stamp of the first marker [s] (NaN if empty), frame id, ids (N,), positions (N, 3).
    """
    markers = message.markers
    ids = np.array([marker.id for marker in markers], dtype=np.int64)
    positions = np.array(
        [(m.pose.position.x, m.pose.position.y, m.pose.position.z) for m in markers], dtype=float
    ).reshape(-1, 3)
    if not markers:
        return MarkerPositions(float('nan'), '', ids, positions)
    header = markers[0].header
    return MarkerPositions(time_from_msg(header.stamp), header.frame_id, ids, positions)


def skeleton_to_msg(frame: SkeletonFrame, frame_id: str) -> PoseArray:
    """
    Convert a body-frame skeleton to the ``skeleton`` topic's PoseArray.

    One pose per :class:`~pic_ros.skeleton.HumanJoint`, in that order; an invalid joint
    carries NaN positions. Orientations are identity.

    :param frame: Skeleton (``body`` frame), stamp = capture time [s].
    :param frame_id: Name of the body-centred human frame.
    :return: The message (stamp = capture time).
    """
    message = PoseArray()
    message.header.stamp = time_to_msg(frame.stamp)
    message.header.frame_id = frame_id
    poses = []
    for x, y, z in frame.positions.tolist():
        pose = Pose()
        pose.position.x, pose.position.y, pose.position.z = x, y, z
        pose.orientation.w = 1.0
        poses.append(pose)
    message.poses = poses
    return message


_IDENTITY_POSES: Final = np.zeros((JOINT_COUNT, 7))
_IDENTITY_POSES[:, 6] = 1.0

_CDR_LITTLE_ENDIAN: Final = b'\x00\x01\x00\x00'
"""Encapsulation header of little-endian CDR, as ROS 2 middlewares serialize."""


def _header_cdr(stamp: tuple[int, int], frame_id: str, alignment: int) -> bytes:
    """
    Serialize a ``std_msgs/Header`` at the start of a message, padded for the next field.

    :param stamp: ``(sec, nanosec)`` of the stamp (:func:`stamp_parts` of seconds).
    :param frame_id: Frame name.
    :param alignment: Alignment of the field that follows (4 or 8), from the payload's start.
    :return: The encapsulation header, the header and the padding (zeros).
    """
    name = frame_id.encode('utf-8') + b'\x00'
    size = 16 + len(name)
    return b''.join((
        struct.pack('<4siiI', _CDR_LITTLE_ENDIAN, *stamp, len(name)), name,
        bytes(-(size - 4) % alignment),
    ))


def skeleton_to_cdr(frame: SkeletonFrame, frame_id: str) -> bytes:
    """
    Serialize a body-frame skeleton as the ``skeleton`` topic's PoseArray, without a message.

    The message of :func:`skeleton_to_msg`, serialized as ROS 2 middlewares do (little-endian
    CDR, padding as zeros) but written directly: a publisher sends the bytes as they are, which
    spares building 19 Pose objects and converting them.

    :param frame: Skeleton (``body`` frame), stamp = capture time [s].
    :param frame_id: Name of the body-centred human frame.
    :return: The serialized message, with its 4-byte encapsulation header.
    """
    header = _header_cdr(stamp_parts(frame.stamp), frame_id, 4)
    poses = _IDENTITY_POSES.copy()
    poses[:, :3] = frame.positions
    return b''.join((
        header, struct.pack('<I', poses.shape[0]), bytes(-len(header) % 8),
        poses.astype('<f8', copy=False).tobytes(),
    ))


def footprint_to_msg(footprint: Footprint, frame_id: str) -> PoseStamped:
    """
    Convert a person's footprint to the ``body_pose`` topic's PoseStamped.

    :param footprint: Pelvis x-y and heading in the tracker frame, stamp = capture time [s].
    :param frame_id: Name of the tracker frame.
    :return: Position (x, y, 0) [m] on the tracker's x-y plane; orientation the heading about
        z (a yaw-only quaternion).
    """
    message = PoseStamped()
    message.header.stamp = time_to_msg(footprint.stamp)
    message.header.frame_id = frame_id
    message.pose.position.x, message.pose.position.y = footprint.x, footprint.y
    message.pose.orientation.z = math.sin(0.5 * footprint.heading)
    message.pose.orientation.w = math.cos(0.5 * footprint.heading)
    return message


def footprint_to_cdr(footprint: Footprint, frame_id: str) -> bytes:
    """
    Serialize the message of :func:`footprint_to_msg` directly (see :func:`skeleton_to_cdr`).

    :param footprint: Pelvis x-y and heading in the tracker frame, stamp = capture time [s].
    :param frame_id: Name of the tracker frame.
    :return: The serialized PoseStamped, with its 4-byte encapsulation header.
    """
    half = 0.5 * footprint.heading
    return _header_cdr(stamp_parts(footprint.stamp), frame_id, 8) + struct.pack(
        '<7d', footprint.x, footprint.y, 0.0, 0.0, 0.0, math.sin(half), math.cos(half)
    )


def chest_to_cdr(footprint: Footprint, frame_id: str) -> bytes:
    """
    Serialize the message of :func:`chest_to_msg` directly (see :func:`skeleton_to_cdr`).

    :param footprint: The footprint (its pelvis x-y and chest height, tracker frame).
    :param frame_id: Name of the tracker frame.
    :return: The serialized PointStamped, with its 4-byte encapsulation header.
    """
    return _header_cdr(stamp_parts(footprint.stamp), frame_id, 8) + struct.pack(
        '<3d', footprint.x, footprint.y, footprint.height
    )


def chest_to_msg(footprint: Footprint, frame_id: str) -> PointStamped:
    """
    Convert the chest height of a footprint to the ``chest`` topic's PointStamped.

    :param footprint: The footprint (its pelvis x-y and chest height, tracker frame).
    :param frame_id: Name of the tracker frame.
    :return: The point (pelvis x, pelvis y, chest height) [m]; z is what whole-body imitation
        uses.
    """
    message = PointStamped()
    message.header.stamp = time_to_msg(footprint.stamp)
    message.header.frame_id = frame_id
    message.point.x, message.point.y = footprint.x, footprint.y
    message.point.z = footprint.height
    return message


def footprint_from_msg(message: PoseStamped) -> Footprint:
    """
    Read a person's footprint from a ``body_pose`` message.

    :param message: Pose in the tracker frame; only x, y and the yaw of the orientation count.
    :return: The footprint (stamp = the header's [s]; non-finite values are passed on).
    """
    q = message.pose.orientation
    heading = math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))
    return Footprint(
        stamp=time_from_msg(message.header.stamp), x=float(message.pose.position.x),
        y=float(message.pose.position.y), heading=heading,
    )


def command_to_msg(command: BaseCommand) -> Twist:
    """
    Convert a base command to ``cmd_vel``'s Twist.

    :param command: Forward speed [m/s] and turning speed [rad/s] of the base.
    :return: ``linear.x`` and ``angular.z`` set, every other component 0.
    """
    message = Twist()
    message.linear.x = float(command.linear)
    message.angular.z = float(command.angular)
    return message


def skeleton_from_msg(message: PoseArray) -> SkeletonFrame:
    """
    Convert a ``skeleton`` PoseArray back to a body-frame skeleton.

    Messages recorded before the face and finger rows existed hold the 12 body poses only; they
    are accepted, with the extra rows invalid.

    :param message: PoseArray with one pose per HumanJoint, in order (19 poses, or the first 12).
    :return: The skeleton (``body`` frame); non-finite and missing poses are invalid joints.
    :raises SkeletonError: If the pose count is neither 19 nor 12.
    """
    if len(message.poses) not in (JOINT_COUNT, BODY_JOINT_COUNT):
        raise SkeletonError(
            f'skeleton must have {JOINT_COUNT} poses ({", ".join(HUMAN_JOINT_NAMES)}) or the '
            f'first {BODY_JOINT_COUNT} of them, got {len(message.poses)}'
        )
    positions = [(p.position.x, p.position.y, p.position.z) for p in message.poses]
    return make_frame(
        time_from_msg(message.header.stamp), pad_body_rows(positions), frame='body'
    )


def _marker(
    frame_id: str, stamp: Time, marker_id: int, kind: int, color: ColorRGBA,
    namespace: str = 'skeleton',
) -> Marker:
    marker = Marker()
    marker.header.stamp = stamp
    marker.header.frame_id = frame_id
    marker.ns = namespace
    marker.id = marker_id
    marker.type = kind
    marker.action = Marker.ADD
    marker.pose.orientation.w = 1.0
    marker.color = color
    return marker


def skeleton_markers_to_msg(frame: SkeletonFrame, frame_id: str) -> MarkerArray:
    """
    Draw a body-frame skeleton for RViz: joints as spheres, bones as a line list.

    :param frame: Skeleton (``body`` frame).
    :param frame_id: Name of the body-centred human frame.
    :return: Two markers in namespace ``skeleton`` (ids 0: joints, 1: bones).
    """
    stamp = time_to_msg(frame.stamp)
    joints = _marker(frame_id, stamp, 0, Marker.SPHERE_LIST, ColorRGBA(r=0.1, g=0.6, b=1.0, a=1.0))
    joints.scale.x = joints.scale.y = joints.scale.z = 0.05
    bones = _marker(frame_id, stamp, 1, Marker.LINE_LIST, ColorRGBA(r=1.0, g=0.8, b=0.2, a=1.0))
    bones.scale.x = 0.02
    valid = frame.valid
    points = [Point(x=x, y=y, z=z) for x, y, z in frame.positions.tolist()]
    joints.points = [point for point, ok in zip(points, valid) if ok]
    bones.points = [
        point
        for first, second in SKELETON_BONES
        if valid[first] and valid[second]
        for point in (points[first], points[second])
    ]
    message = MarkerArray()
    message.markers = [joints, bones]
    return message


PLACED_NAMESPACE = 'placed_skeleton'
"""Marker namespace of the person drawn over the robot (:func:`person_overlay_to_msg`)."""

JOINT_SIZE = 0.08
"""Diameter of the placed person's joints, as a share of the robot's arm length [-]."""

BONE_WIDTH = 0.035
"""Width of the placed person's bones, as a share of the robot's arm length [-]."""

HEAD_SIZE = 0.24
"""Diameter of the placed person's head, as a share of the robot's arm length [-]."""

FALLBACK_ARM_LENGTH = 0.6
"""Arm length [m] the sizes are taken from when the overlay has none (no placed arm)."""


def _points(rows: FloatArray) -> list[Point]:
    """Convert rows of positions, shape (N, 3), [m], to Points."""
    return [Point(x=x, y=y, z=z) for x, y, z in np.asarray(rows, dtype=float).tolist()]


def _color(rgba: Sequence[float]) -> ColorRGBA:
    red, green, blue, alpha = (float(value) for value in rgba)
    return ColorRGBA(r=red, g=green, b=blue, a=alpha)


def person_overlay_to_msg(
    overlay: PersonOverlay, frame_id: str, state: FollowState = FollowState.UNKNOWN
) -> MarkerArray:
    """
    Draw the person placed on the robot for RViz, in the robot base frame.

    Four markers in namespace :data:`PLACED_NAMESPACE`, each stamped with the skeleton's capture
    time: 0, the placed arms' joints (``SPHERE_LIST``) and 1, their bones (``LINE_LIST``), both
    coloured by whether the robot follows (:data:`~pic_ros.correspondence.overlay.FOLLOW_COLOURS`);
    2, the trunk and collar bones (``LINE_LIST``) and 3, the head (``SPHERE_LIST``, empty when
    unknown), grey. Sizes are shares of the robot's arm length. A marker with no points
    replaces the previous one with an empty drawing.

    :param overlay: The person over the robot
        (:func:`~pic_ros.correspondence.overlay.overlay_person`).
    :param frame_id: The robot's base frame (the targets' frame).
    :param state: Whether the robot follows the person.
    :return: The message.
    """
    stamp = time_to_msg(overlay.stamp)
    length = overlay.arm_length
    if not (math.isfinite(length) and length > 0.0):
        length = FALLBACK_ARM_LENGTH
    follow = _color(FOLLOW_COLOURS[state])
    grey = _color(TRUNK_COLOUR)
    joints = _marker(frame_id, stamp, 0, Marker.SPHERE_LIST, follow, PLACED_NAMESPACE)
    joints.scale.x = joints.scale.y = joints.scale.z = JOINT_SIZE * length
    joints.points = _points([row for points in overlay.arms.values() for row in points])
    bones = _marker(frame_id, stamp, 1, Marker.LINE_LIST, follow, PLACED_NAMESPACE)
    bones.scale.x = BONE_WIDTH * length
    bones.points = _points(overlay.arm_bones.reshape(-1, 3))
    trunk = _marker(frame_id, stamp, 2, Marker.LINE_LIST, grey, PLACED_NAMESPACE)
    trunk.scale.x = BONE_WIDTH * length
    trunk.points = _points(overlay.trunk_bones.reshape(-1, 3))
    head = _marker(frame_id, stamp, 3, Marker.SPHERE_LIST, grey, PLACED_NAMESPACE)
    head.scale.x = head.scale.y = head.scale.z = HEAD_SIZE * length
    head_point = overlay.trunk.get(HumanJoint.HEAD)
    head.points = [] if head_point is None else _points(head_point.reshape(1, 3))
    message = MarkerArray()
    message.markers = [joints, bones, trunk, head]
    return message


def joint_state_to_msg(
    stamp: float, names: Sequence[str], positions: Sequence[float]
) -> JointState:
    """
    Build a JointState (positions only).

    :param stamp: Stamp [s] (the skeleton's capture time for ``joint_targets``).
    :param names: Joint names.
    :param positions: Joint positions [rad] or [m], same order.
    :return: The message.
    """
    message = JointState()
    message.header.stamp = time_to_msg(stamp)
    message.name = list(names)
    message.position = [float(value) for value in positions]
    return message


def joint_state_to_cdr(
    stamp: tuple[int, int], names: tuple[str, ...], positions: npt.ArrayLike,
    velocities: npt.ArrayLike,
) -> bytes:
    """
    Serialize a JointState (positions and velocities, no effort) without a message.

    As :func:`trajectory_to_cdr` does for a chunk: written directly as ROS 2 middlewares
    serialize it (little-endian CDR, padding as zeros), so that a publisher at a few hundred hertz
    does not convert the names and values of a message each time.

    :param stamp: ``header.stamp`` as ``(sec, nanosec)``; ``header.frame_id`` is empty.
    :param names: Joint names.
    :param positions: Joint positions, one per name [rad] or [m].
    :param velocities: Joint velocities, one per name [rad/s] or [m/s].
    :return: The serialized message, with its 4-byte encapsulation header.
    """
    parts = [_header_cdr(stamp, '', 4), _names_cdr(names)]
    size = sum(len(part) for part in parts)
    for values in (positions, velocities):
        array = np.asarray(values, dtype='<f8')
        padding = bytes(-size % 8) if len(array) else b''  # after the length: size + 4 - 4
        parts += [struct.pack('<I', len(array)), padding, array.tobytes()]
        size += 4 + len(padding) + array.nbytes
    parts.append(struct.pack('<I', 0))  # effort: empty
    return b''.join(parts)


def joint_state_from_msg(message: JointState) -> tuple[float, dict[str, float]]:
    """
    Read the named positions of a JointState.

    :param message: The message; ``position`` must match ``name`` in length.
    :return: ``(stamp [s], {joint name: position})``; non-finite positions are left out.
    :raises SkeletonError: If names and positions differ in length.
    """
    if len(message.position) != len(message.name):
        raise SkeletonError(
            f'JointState has {len(message.name)} names but {len(message.position)} positions'
        )
    values = {
        name: float(value)
        for name, value in zip(message.name, message.position)
        if math.isfinite(value)
    }
    return time_from_msg(message.header.stamp), values


def trajectory_to_msg(
    chunk: TrajectoryChunk, clock: RelativeClock | None = None
) -> JointTrajectory:
    """
    Build a JointTrajectory for joint_trajectory_controller's topic interface.

    ``header.stamp`` is the chunk's stamp (0: "start now").

    :param chunk: Joint names and points with strictly increasing ``time_from_start``.
    :param clock: The clock the chunk's stamp counts on (its origin is added), or None (the
        stamp is the time itself).
    :return: The message.
    """
    message = JointTrajectory()
    sec, nanosec = _chunk_stamp(chunk, clock)
    message.header.stamp = Time(sec=sec, nanosec=nanosec)
    message.joint_names = list(chunk.joint_names)
    points = []
    for point, nanoseconds in zip(chunk.points, chunk.times_ns):
        item = JointTrajectoryPoint()
        # array.array: the message takes it as it is, instead of checking a list value by value
        item.positions = array('d', point.positions.tobytes())
        item.velocities = array('d', point.velocities.tobytes())
        if point.accelerations is not None:
            item.accelerations = array('d', point.accelerations.tobytes())
        item.time_from_start = Duration(
            sec=int(nanoseconds // 1_000_000_000), nanosec=int(nanoseconds % 1_000_000_000)
        )
        points.append(item)
    message.points = points
    return message


def _chunk_stamp(chunk: TrajectoryChunk, clock: RelativeClock | None) -> tuple[int, int]:
    """Return a chunk's ``header.stamp`` as ``(sec, nanosec)`` (see :func:`trajectory_to_msg`)."""
    return stamp_parts(chunk.stamp) if clock is None else clock.stamp(chunk.stamp)


def trajectory_to_cdr(chunk: TrajectoryChunk, clock: RelativeClock | None = None) -> bytes:
    """
    Serialize a chunk as the JointTrajectory of :func:`trajectory_to_msg`, without a message.

    Written as ROS 2 middlewares serialize it (little-endian CDR, padding as zeros) but directly:
    the points' fields are filled in bulk from the chunk's arrays
    (:meth:`~pic_ros.motion.streaming.TrajectoryChunk.arrays`) instead of one
    ``JointTrajectoryPoint`` (and its conversion by the publisher) per point. A subscriber reads
    the message of :func:`trajectory_to_msg`, value for value.

    :param chunk: Joint names and points with strictly increasing ``time_from_start``.
    :param clock: As for :func:`trajectory_to_msg`.
    :return: The serialized message, with its 4-byte encapsulation header.
    """
    head = _header_cdr(_chunk_stamp(chunk, clock), '', 4) + _names_cdr(chunk.joint_names)
    times, positions, velocities, accelerations = chunk.arrays()
    count = len(times)
    nanoseconds = np.array(chunk.times_ns, dtype=np.int64)
    parts = [head, struct.pack('<I', count)]
    offset = len(head)  # where the first point starts, from the payload's start
    first = 0
    while first < count:
        layout = _point_layout(positions.shape[1], accelerations is not None, offset % 8)
        # a layout of a whole number of 8-byte words leaves the next point aligned as this one:
        # every point from here on has it
        last = count if layout.itemsize % 8 == 0 else first + 1
        rows = np.zeros(last - first, layout)
        rows['positions'] = positions[first:last]
        rows['velocities'] = velocities[first:last]
        if accelerations is not None:
            rows['accelerations'] = accelerations[first:last]
        for name in _POINT_COUNTS[accelerations is not None]:
            rows[name] = positions.shape[1]
        rows['sec'] = nanoseconds[first:last] // 1_000_000_000
        rows['nanosec'] = nanoseconds[first:last] % 1_000_000_000
        parts.append(rows.tobytes())
        offset += layout.itemsize * (last - first)
        first = last
    return b''.join(parts)


_POINT_COUNTS: Final = {
    True: ('positions_size', 'velocities_size', 'accelerations_size'),
    False: ('positions_size', 'velocities_size'),
}
"""The sequence lengths of a JointTrajectoryPoint that are the joint count (the others are 0)."""


@functools.lru_cache(maxsize=64)
def _names_cdr(names: tuple[str, ...]) -> bytes:
    """
    Serialize a ``string[]`` that starts 4-byte aligned, padded for a ``uint32`` after it.

    :param names: The strings.
    :return: The length, then each string (length with the NUL, UTF-8, NUL, padding).
    """
    parts = [struct.pack('<I', len(names))]
    for name in names:
        data = name.encode('utf-8') + b'\x00'
        parts += [struct.pack('<I', len(data)), data, bytes(-len(data) % 4)]
    return b''.join(parts)


@functools.lru_cache(maxsize=64)
def _point_layout(dof: int, accelerated: bool, alignment: int) -> np.dtype:
    """
    Return the CDR layout of one JointTrajectoryPoint as a structured dtype (padding unnamed).

    :param dof: The number of joints (positions, velocities and accelerations each have as many).
    :param accelerated: Whether the accelerations are sent (else an empty sequence).
    :param alignment: Where the point starts from the payload's start, modulo 8 (0 or 4): the
        doubles are aligned to 8 bytes from there.
    :return: Fields ``<sequence>_size`` (uint32) and ``<sequence>`` (``dof`` doubles) in the
        message's order, then the ``time_from_start`` ``sec`` and ``nanosec``.
    """
    names: list[str] = []
    formats: list[object] = []
    offsets: list[int] = []
    at = alignment
    for sequence, size in (
        ('positions', dof), ('velocities', dof),
        ('accelerations', dof if accelerated else 0), ('effort', 0),
    ):
        names.append(f'{sequence}_size')
        formats.append('<u4')
        offsets.append(at - alignment)
        at += 4
        if size:  # an empty sequence is its length only (no padding)
            at += -at % 8
            names.append(sequence)
            formats.append(('<f8', (size,)))
            offsets.append(at - alignment)
            at += 8 * size
    for name, code in (('sec', '<i4'), ('nanosec', '<u4')):
        names.append(name)
        formats.append(code)
        offsets.append(at - alignment)
        at += 4
    return np.dtype(
        {'names': names, 'formats': formats, 'offsets': offsets, 'itemsize': at - alignment}
    )


def status_to_msg(
    name: str, hardware_id: str, level: bytes, summary: str, values: Mapping[str, object]
) -> DiagnosticStatus:
    """
    Build a DiagnosticStatus.

    :param name: Status name, e.g. ``pic_ros: skeleton_node``.
    :param hardware_id: Source (tracker or robot).
    :param level: ``DiagnosticStatus.OK``, ``WARN``, ``ERROR`` or ``STALE``.
    :param summary: One-line summary.
    :param values: Key values, converted with ``str``.
    :return: The status.
    """
    status = DiagnosticStatus()
    status.name = name
    status.hardware_id = hardware_id
    status.level = level
    status.message = summary
    status.values = [KeyValue(key=str(key), value=str(value)) for key, value in values.items()]
    return status
