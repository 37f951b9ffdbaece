"""The message conversions of the ROS layer: round trips, boundary checks, the fast marker path."""

from __future__ import annotations

import math

from builtin_interfaces.msg import Time
import numpy as np
from pic_ros.correspondence.overlay import (
    FOLLOW_COLOURS,
    FollowState,
    overlay_person,
)
from pic_ros.exceptions import SkeletonError
from pic_ros.human.body_frame import Footprint
from pic_ros.motion.clock import RelativeClock
from pic_ros.motion.streaming import stream_chunk, TrajectoryChunk, TrajectoryPoint
from pic_ros.ros.conversions import (
    chest_to_cdr,
    chest_to_msg,
    footprint_to_cdr,
    footprint_to_msg,
    joint_state_from_msg,
    joint_state_to_cdr,
    joint_state_to_msg,
    marker_positions_from_msg,
    marker_positions_from_raw,
    person_overlay_to_msg,
    PLACED_NAMESPACE,
    SKELETON_BONES,
    skeleton_from_msg,
    skeleton_markers_to_msg,
    skeleton_to_cdr,
    skeleton_to_msg,
    time_from_msg,
    time_to_msg,
    trajectory_to_cdr,
    trajectory_to_msg,
)
from pic_ros.skeleton import BODY_JOINT_COUNT, HumanJoint, JOINT_COUNT, make_frame
from pic_ros.trackers.marker_cdr import MarkerCdrError, parse_marker_array
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray


def random_marker_array(rng: np.random.Generator, count: int) -> MarkerArray:
    """Make a MarkerArray whose markers use every variable-length field of Marker."""
    message = MarkerArray()
    markers = []
    for index in range(count):
        marker = Marker()
        marker.header.stamp = Time(sec=int(rng.integers(0, 2**31 - 1)), nanosec=int(index))
        marker.header.frame_id = 'depth_camera_link' if index % 2 else 'x' * int(rng.integers(9))
        marker.ns = 'n' * int(rng.integers(5))
        marker.id = int(rng.integers(-(2**31), 2**31 - 1))
        marker.type = Marker.SPHERE
        marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = (
            rng.normal(size=3).tolist()
        )
        marker.pose.orientation.w = 1.0
        for _ in range(int(rng.integers(3))):
            marker.points.append(marker.pose.position)
            marker.colors.append(ColorRGBA(r=1.0, a=0.5))
        marker.text = 'é' * int(rng.integers(4))
        marker.texture_resource = 'tex' * int(rng.integers(2))
        marker.texture.format = 'png' * int(rng.integers(2))
        marker.texture.data = bytes(rng.integers(0, 256, int(rng.integers(7))).tolist())
        marker.mesh_resource = 'package://m' * int(rng.integers(2))
        marker.mesh_file.filename = 'f.stl' * int(rng.integers(2))
        marker.mesh_file.data = bytes(rng.integers(0, 256, int(rng.integers(5))).tolist())
        marker.frame_locked = bool(rng.integers(2))
        markers.append(marker)
    message.markers = markers
    return message


def test_skeleton_round_trip_keeps_positions_and_invalid_rows(rng):
    """A body-frame skeleton survives the PoseArray round trip; NaN rows stay invalid."""
    valid = rng.random(JOINT_COUNT) > 0.3
    frame = make_frame(12.25, rng.normal(size=(JOINT_COUNT, 3)), valid, frame='body')

    message = skeleton_to_msg(frame, 'pic_human')
    back = skeleton_from_msg(message)

    assert message.header.frame_id == 'pic_human'
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (12, 250_000_000)
    assert len(message.poses) == JOINT_COUNT
    assert all(pose.orientation.w == 1.0 for pose in message.poses)
    assert back.frame == 'body'
    assert back.stamp == frame.stamp
    np.testing.assert_array_equal(back.valid, frame.valid)
    np.testing.assert_array_equal(back.positions[valid], frame.positions[valid])
    assert np.isnan(back.positions[~valid]).all()


def test_skeleton_from_msg_rejects_a_wrong_pose_count():
    """A PoseArray without one pose per human joint is refused with the joint list."""
    message = skeleton_to_msg(make_frame(1.0, np.zeros((JOINT_COUNT, 3)), frame='body'), 'f')
    message.poses = message.poses[:-1]

    with pytest.raises(SkeletonError, match='skeleton must have 19 poses .* got 18'):
        skeleton_from_msg(message)


def test_skeleton_from_msg_accepts_twelve_poses_of_older_recordings(rng):
    """A 12-pose message (before the face and finger rows) gives the body with the rest invalid."""
    frame = make_frame(2.0, rng.normal(size=(JOINT_COUNT, 3)), frame='body')
    message = skeleton_to_msg(frame, 'f')
    message.poses = message.poses[:BODY_JOINT_COUNT]

    back = skeleton_from_msg(message)

    assert back.valid[:BODY_JOINT_COUNT].all() and not back.valid[BODY_JOINT_COUNT:].any()
    np.testing.assert_array_equal(
        back.positions[:BODY_JOINT_COUNT], frame.positions[:BODY_JOINT_COUNT]
    )


def test_rviz_markers_draw_the_face_and_finger_bones(rng):
    """Bones with both ends valid are drawn, the face and fingers included; others are not."""
    positions = rng.normal(size=(JOINT_COUNT, 3))
    valid = np.ones(JOINT_COUNT, dtype=bool)
    valid[HumanJoint.THUMB_LEFT] = False
    markers = skeleton_markers_to_msg(make_frame(1.0, positions, valid, frame='body'), 'f')
    joints, bones = markers.markers

    assert len(joints.points) == JOINT_COUNT - 1
    assert len(bones.points) == 2 * (len(SKELETON_BONES) - 1)


def test_joint_state_from_msg_leaves_out_non_finite_positions():
    """Non-finite positions are dropped by name; the stamp is read."""
    message = joint_state_to_msg(3.5, ['a', 'b', 'c', 'd'], [0.1, math.nan, math.inf, -0.2])

    stamp, positions = joint_state_from_msg(message)

    assert stamp == 3.5
    assert positions == {'a': 0.1, 'd': -0.2}


def test_joint_state_from_msg_rejects_a_length_mismatch():
    """Names and positions of different lengths are refused, never zipped short."""
    message = JointState(name=['a', 'b'], position=[0.0])

    with pytest.raises(SkeletonError, match='JointState has 2 names but 1 positions'):
        joint_state_from_msg(message)


@pytest.mark.parametrize(
    ('lead_time', 'sec', 'nanosec'),
    [(0.05, 0, 50_000_000), (0.999999999, 0, 999_999_999), (1.0, 1, 0)],
)
def test_trajectory_to_msg_streams_one_point_at_the_lead_time(lead_time, sec, nanosec):
    """The trajectory keeps stamp 0, every name, positions, velocities and time_from_start."""
    chunk = stream_chunk(['j1', 'j2', 'j3'], [0.1, -0.2, 0.3], [1.0, 0.0, -1.0], lead_time)

    message = trajectory_to_msg(chunk)

    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (0, 0)
    assert list(message.joint_names) == ['j1', 'j2', 'j3']
    assert len(message.points) == 1
    point = message.points[0]
    assert list(point.positions) == [0.1, -0.2, 0.3]
    assert list(point.velocities) == [1.0, 0.0, -1.0]
    assert (point.time_from_start.sec, point.time_from_start.nanosec) == (sec, nanosec)


def test_marker_positions_from_raw_equals_rclpy_deserialization(rng):
    """The fast CDR walker reads what rclpy reads, whatever the other Marker fields hold."""
    for count in (0, 1, 2, 5, 32):
        message = random_marker_array(rng, count)
        data = serialize_message(message)

        fast = parse_marker_array(data)  # the fast path itself must accept rclpy's bytes
        read = marker_positions_from_raw(data)
        expected = marker_positions_from_msg(deserialize_message(data, MarkerArray))

        for result in (fast, read):
            np.testing.assert_array_equal(result.ids, expected.ids)
            np.testing.assert_array_equal(result.positions, expected.positions)
            assert result.frame_id == expected.frame_id
            assert result.stamp == expected.stamp or (count == 0 and math.isnan(result.stamp))


def test_marker_positions_from_raw_falls_back_to_rclpy(rng):
    """Bytes the fast walker refuses (here: padding after the array) still decode via rclpy."""
    message = random_marker_array(rng, 3)
    data = serialize_message(message) + bytes(16)
    with pytest.raises(MarkerCdrError):
        parse_marker_array(data)

    read = marker_positions_from_raw(data)

    np.testing.assert_array_equal(read.ids, [marker.id for marker in message.markers])
    assert read.frame_id == message.markers[0].header.frame_id


@pytest.mark.parametrize(
    'data',
    [b'', b'\x00\x01\x00\x00', b'garbage that is no CDR', b'\x00\x01\x00\x00\xff\xff\xff\x7f'],
)
def test_marker_positions_from_raw_refuses_garbage_with_its_own_error(data):
    """Bytes that neither parser reads raise MarkerCdrError (the node counts it), nothing else."""
    with pytest.raises(MarkerCdrError, match='not a MarkerArray'):
        marker_positions_from_raw(data)


def _same_but_padding(expected: bytes, written: bytes) -> bool:
    """Whether two serializations agree on every byte but padding (zeros in ``written``)."""
    return len(expected) == len(written) and all(
        mine == 0 for theirs, mine in zip(expected, written) if theirs != mine
    )


@pytest.mark.parametrize('frame_id', ['', 'b', 'body', 'pic_human', 'é', 'x' * 13])
@pytest.mark.parametrize('seconds', [0.0, 12.5, 2.9999999999, 1.7e9 + 0.123456789])
def test_messages_written_as_bytes_are_what_rclpy_serializes(rng, frame_id, seconds):
    """The skeleton node's bytes are rclpy's serialization of its messages, padding aside."""
    positions = rng.normal(size=(JOINT_COUNT, 3))
    positions[int(rng.integers(JOINT_COUNT))] = np.nan
    frame = make_frame(seconds, positions, frame='body')
    footprint = Footprint(seconds, *rng.normal(size=3).tolist(), height=math.nan)
    chest = Footprint(seconds, *rng.normal(size=4).tolist())
    pairs = [
        (skeleton_to_msg(frame, frame_id), skeleton_to_cdr(frame, frame_id)),
        (footprint_to_msg(footprint, frame_id), footprint_to_cdr(footprint, frame_id)),
        (chest_to_msg(chest, frame_id), chest_to_cdr(chest, frame_id)),
    ]
    for message, written in pairs:
        assert _same_but_padding(serialize_message(message), written)
        back = deserialize_message(written, type(message))  # a subscriber reads them
        assert _same_but_padding(serialize_message(back), written)


@pytest.mark.parametrize('accelerated', [True, False])
@pytest.mark.parametrize(
    'names', [('j',), ('a', 'bb', 'ccc'), tuple(f'arm_joint_{index}' for index in range(7))]
)
@pytest.mark.parametrize('stamp', [0.0, 12.345, 1.7e9 + 0.123456789])
def test_a_chunk_written_as_bytes_is_the_message_of_trajectory_to_msg(
    rng, accelerated, names, stamp
):
    """
    The trajectory publisher's bytes carry trajectory_to_msg's message, value for value.

    Every point layout (a point starts 4 or 8 bytes past a double's alignment, with or without
    accelerations), one to tens of points; rclpy's serialization agrees byte for byte but
    padding (up to the message's end: rmw_fastrtps may return a longer buffer).
    """
    dof = len(names)
    for count in (1, 2, 3, 34):
        times = np.cumsum(rng.uniform(1e-5, 0.3, count))
        points = tuple(
            TrajectoryPoint(
                float(when), rng.normal(size=dof), rng.normal(size=dof),
                rng.normal(size=dof) if accelerated else None,
            )
            for when in times
        )
        chunk = TrajectoryChunk(joint_names=names, points=points, stamp=stamp)
        message = trajectory_to_msg(chunk)

        written = trajectory_to_cdr(chunk)

        assert deserialize_message(written, JointTrajectory) == message
        assert _same_but_padding(serialize_message(message)[:len(written)], written)


@pytest.mark.parametrize(
    'names', [(), ('j',), ('a', 'bb', 'ccc'), tuple(f'joint_{index}' for index in range(30))]
)
@pytest.mark.parametrize('stamp', [(0, 0), (12, 345_000_000), (1_700_000_000, 123_456_789)])
def test_joint_states_written_as_bytes_are_what_rclpy_serializes(rng, names, stamp):
    """The simulated robot's joint_states bytes read back as the message, value for value."""
    positions, velocities = rng.normal(size=(2, len(names)))
    message = JointState()
    message.header.stamp = Time(sec=stamp[0], nanosec=stamp[1])
    message.name = list(names)
    message.position = positions.tolist()
    message.velocity = velocities.tolist()

    written = joint_state_to_cdr(stamp, names, positions, velocities)

    assert deserialize_message(written, JointState) == message
    assert _same_but_padding(serialize_message(message)[:len(written)], written)


def test_time_round_trip_is_exact_to_the_nanosecond(rng):
    """Stamps go to seconds and back unchanged (below 2^22 s, where doubles keep nanoseconds)."""
    for sec, nanosec in zip(rng.integers(0, 2**22, 200), rng.integers(0, 10**9, 200)):
        stamp = Time(sec=int(sec), nanosec=int(nanosec))

        assert time_to_msg(time_from_msg(stamp)) == stamp


@pytest.mark.parametrize(
    ('seconds', 'sec', 'nanosec'),
    [(0.0, 0, 0), (1.5, 1, 500_000_000), (2.9999999999, 3, 0), (12.000000001, 12, 1)],
)
def test_time_to_msg_rounds_to_the_nanosecond(seconds, sec, nanosec):
    """Seconds become a normalized stamp (nanosec < 10^9), rounded to the nanosecond."""
    stamp = time_to_msg(seconds)

    assert (stamp.sec, stamp.nanosec) == (sec, nanosec)


def test_trajectory_to_msg_carries_the_chunk_stamp():
    """A chunk stamped with its planning time keeps that stamp, to the nanosecond."""
    chunk = stream_chunk(['j1'], [0.1], [0.0], 0.05, stamp=12.345)

    message = trajectory_to_msg(chunk)

    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (12, 345_000_000)


def test_a_chunk_timed_from_a_clocks_origin_is_stamped_on_that_clock():
    """With the node's relative clock the stamp is its origin plus the chunk's stamp, exactly."""
    clock = RelativeClock()
    now = clock.seconds(1_795_922_741_123_456_789)  # a wall-clock reading [ns]
    chunk = stream_chunk(['j1'], [0.1], [0.0], 0.05, stamp=now + 0.25)
    resting = stream_chunk(['j1'], [0.1], [0.0], 0.05)  # stamp 0: "start on arrival"

    for written in (trajectory_to_msg(chunk, clock), deserialize_message(
        trajectory_to_cdr(chunk, clock), JointTrajectory
    )):
        stamp = written.header.stamp
        assert (stamp.sec, stamp.nanosec) == (1_795_922_741, 373_456_789)
    stamp = trajectory_to_msg(resting, clock).header.stamp
    assert (stamp.sec, stamp.nanosec) == (0, 0)


def _xyz(points) -> np.ndarray:
    return np.array([(p.x, p.y, p.z) for p in points], dtype=float).reshape(-1, 3)


@pytest.mark.parametrize('state', list(FollowState))
def test_placed_markers_carry_the_skeletons_stamp_and_frame_at_the_cores_points(state):
    """
    The person over the robot: every marker stamped with the skeleton, in the base frame given.

    The joints and bones are exactly the core overlay's points; the arms take the state's colour.
    """
    positions = np.full((JOINT_COUNT, 3), np.nan)
    positions[:BODY_JOINT_COUNT] = np.array([
        (0.0, 0.0, -0.5), (0.0, 0.0, -0.05), (0.0, 0.0, 0.1), (0.05, 0.0, 0.25),
        (0.0, 0.18, 0.0), (0.05, 0.25, -0.28), (0.3, 0.2, -0.3), (0.38, 0.2, -0.3),
        (0.0, -0.18, 0.0), (0.1, -0.22, -0.27), (0.35, -0.1, -0.2), (0.43, -0.1, -0.2),
    ])
    frame = make_frame(1234.000000125, positions, frame='body')
    placed = {
        'left': np.array([(0.1, 0.3, 0.4), (0.2, 0.5, 0.2), (0.5, 0.5, 0.2)]),
        'right': np.array([(0.1, -0.3, 0.4), (0.3, -0.4, 0.1), (0.6, -0.3, 0.1)]),
    }
    overlay = overlay_person(frame, placed)
    message = person_overlay_to_msg(overlay, 'base', state)
    assert len(message.markers) == 4
    for marker in message.markers:
        assert marker.header.frame_id == 'base'
        assert (marker.header.stamp.sec, marker.header.stamp.nanosec) == (1234, 125)
        assert marker.ns == PLACED_NAMESPACE
        assert marker.action == Marker.ADD
    joints, bones, trunk, head = message.markers
    assert [m.id for m in message.markers] == [0, 1, 2, 3]
    np.testing.assert_allclose(_xyz(joints.points), np.concatenate(list(placed.values())))
    np.testing.assert_allclose(_xyz(bones.points), overlay.arm_bones.reshape(-1, 3))
    np.testing.assert_allclose(_xyz(trunk.points), overlay.trunk_bones.reshape(-1, 3))
    np.testing.assert_allclose(_xyz(head.points), overlay.trunk[HumanJoint.HEAD].reshape(1, 3))
    colour = (joints.color.r, joints.color.g, joints.color.b, joints.color.a)
    assert colour == pytest.approx(FOLLOW_COLOURS[state])
    assert bones.color == joints.color
    assert joints.scale.x > 0.0 and bones.scale.x > 0.0 and head.scale.x > 0.0


def test_the_follow_colours_tell_the_states_apart():
    """Engaged, stopped and unknown each have a colour of their own."""
    assert len(set(FOLLOW_COLOURS.values())) == len(FollowState)


def test_an_empty_overlay_gives_empty_markers_that_clear_the_drawing():
    """Nothing placed: the four markers are sent with no points (what was drawn is replaced)."""
    frame = make_frame(5.0, np.zeros((JOINT_COUNT, 3)), frame='body')
    message = person_overlay_to_msg(overlay_person(frame, {}), 'base')
    assert [len(marker.points) for marker in message.markers] == [0, 0, 0, 0]
    assert all(marker.scale.x > 0.0 for marker in message.markers)
