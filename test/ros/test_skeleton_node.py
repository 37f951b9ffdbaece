"""skeleton_node: marker arrays and Xsens datagrams in, validated body-frame skeletons out."""

from __future__ import annotations

import array
import fcntl
import math
import socket
import termios
import threading

from builtin_interfaces.msg import Time
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.human.body_frame import to_body_frame
from pic_ros.human.front_end import RESTART_READINGS
from pic_ros.ros.skeleton_node import SkeletonNode
from pic_ros.skeleton import HumanJoint, JOINT_COUNT, make_frame
from pic_ros.trackers.markers import TRACKER_FORMATS
from pic_ros.trackers.xsens_wire import XsensDropReason
from pic_ros_tools.ros.background_spin import BackgroundSpin
from pic_ros_tools.ros.latency_bench import xsens_datagrams
from pic_ros_tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
import pytest
from rclpy.parameter import Parameter
from rclpy.serialization import serialize_message
from visualization_msgs.msg import Marker, MarkerArray

MARKER_SOURCES = ('azure_kinect', 'kinect_v2')

PERSON = np.array([
    (0.0, 0.0, 1.0),  # pelvis
    (0.0, 0.0, 1.35),  # spine chest
    (0.0, 0.0, 1.5),  # neck
    (0.0, 0.0, 1.65),  # head
    (0.0, 0.18, 1.45),  # left shoulder
    (0.05, 0.2, 1.17),  # left elbow
    (0.3, 0.2, 1.1),  # left wrist
    (0.38, 0.2, 1.1),  # left hand
    (0.0, -0.18, 1.45),  # right shoulder
    (0.05, -0.2, 1.17),  # right elbow
    (0.3, -0.2, 1.1),  # right wrist
    (0.38, -0.2, 1.1),  # right hand
    (0.11, 0.0, 1.62),  # nose
    (0.0, 0.075, 1.64),  # left ear
    (0.0, -0.075, 1.64),  # right ear
    (0.47, 0.2, 1.1),  # left hand tip
    (0.36, 0.15, 1.12),  # left thumb
    (0.47, -0.2, 1.1),  # right hand tip
    (0.36, -0.15, 1.12),  # right thumb
])
"""A person's upper body, face and fingers in their own frame (x forward, y left, z up) [m]."""


def facing_sensor(points: np.ndarray, distance: float = 2.5) -> np.ndarray:
    """Place a person's joints in the tracker frame, facing the sensor at a distance [m]."""
    return np.column_stack((distance - points[:, 0], -points[:, 1], points[:, 2]))


def marker_bytes(
    source: str,
    stamp: float,
    bodies: dict[int, np.ndarray] | None = None,
    missing: tuple[HumanJoint, ...] = (),
) -> bytes:
    """
    Serialize a MarkerArray in the Azure Kinect driver encoding (id = body * 100 + joint).

    :param source: ``azure_kinect`` or ``kinect_v2``.
    :param stamp: Header stamp of every marker [s].
    :param bodies: Tracker-frame joints (19, 3) per body id; default body 1 facing the sensor.
    :param missing: Human joints sent without a marker.
    """
    tracker = TRACKER_FORMATS[source]
    if bodies is None:
        bodies = {1: facing_sensor(PERSON)}
    whole = math.floor(stamp)
    header_stamp = Time(sec=int(whole), nanosec=int(round((stamp - whole) * 1e9)))
    skipped = {tracker.to_human[joint] for joint in missing}
    markers = []
    for body, joints in bodies.items():
        points = np.repeat(joints[HumanJoint.SPINE_CHEST][None, :], tracker.joint_count, axis=0)
        rows, sources = tracker.sources
        points[sources] = joints[rows]
        camera = points @ tracker.rotation  # rows: R^T p, tracker -> camera
        for index, point in enumerate(camera.tolist()):
            if index in skipped:
                continue
            marker = Marker()
            marker.header.stamp = header_stamp
            marker.header.frame_id = 'depth_camera_link'
            marker.id = body * 100 + index
            marker.type = Marker.SPHERE
            marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = point
            marker.pose.orientation.w = 1.0
            markers.append(marker)
    return serialize_message(MarkerArray(markers=markers))


def with_joint(joint: HumanJoint, position: tuple[float, float, float]) -> dict[int, np.ndarray]:
    """Return body 1 facing the sensor with one joint moved (tracker frame) [m]."""
    joints = facing_sensor(PERSON)
    joints[joint] = position
    return {1: joints}


@pytest.fixture
def skeleton_node(make_node, capture):
    """Return a factory: ``(node, published, handed)`` for a source and parameter overrides."""

    def make(source: str = 'azure_kinect', **parameters):
        node = make_node(SkeletonNode, {'source': source, **parameters})
        published = capture(node, node._skeleton_pub)
        handed = []
        node.add_handler(handed.append)
        return node, published, handed

    return make


@pytest.mark.parametrize('source', MARKER_SOURCES)
def test_valid_body_publishes_one_body_frame_skeleton(skeleton_node, diagnostics, source):
    """One valid array gives one skeleton: 19 poses, the marker stamp, body_frame_id, handed on."""
    node, published, handed = skeleton_node(source, body_frame_id='person', smoothing='none')

    node._on_markers(marker_bytes(source, 1234.5))

    assert len(published) == 1
    message = published[0].message
    assert len(message.poses) == JOINT_COUNT
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (1234, 500_000_000)
    assert message.header.frame_id == 'person'
    assert len(handed) == 1
    assert handed[0].frame == 'body' and handed[0].stamp == 1234.5
    filled = np.zeros(JOINT_COUNT, dtype=bool)
    filled[TRACKER_FORMATS[source].sources[0]] = True  # kinect_v2 has no face rows
    expected = to_body_frame(make_frame(1234.5, facing_sensor(PERSON), filled))
    received = np.array([(p.position.x, p.position.y, p.position.z) for p in message.poses])
    np.testing.assert_allclose(received, expected.positions, atol=1e-9)
    np.testing.assert_allclose(handed[0].positions, expected.positions, atol=1e-9)
    assert diagnostics(node)[0]['skeletons_out'] == '1'


def test_body_pose_is_the_footprint_in_the_tracker_frame(skeleton_node, capture):
    """body_pose: the pelvis on the tracker's x-y plane, heading pi (facing the sensor)."""
    node, _, _ = skeleton_node(tracker_frame_id='sensor', smoothing='none')
    poses = capture(node, node._footprint_pub)

    node._on_markers(marker_bytes('azure_kinect', 20.0, {1: facing_sensor(PERSON, 2.5)}))

    (message,) = [item.message for item in poses]
    assert message.header.frame_id == 'sensor'
    assert (message.header.stamp.sec, message.header.stamp.nanosec) == (20, 0)
    position = message.pose.position
    assert (position.x, position.y, position.z) == pytest.approx((2.5, 0.0, 0.0), abs=1e-9)
    yaw = 2.0 * math.atan2(message.pose.orientation.z, message.pose.orientation.w)
    assert abs(math.remainder(yaw - math.pi, math.tau)) < 1e-9


DROP_KEYS = (
    'no_body', 'other_body', 'far_body', 'non_finite', 'old_stamp', 'missing_arm_joints',
    'bad_bone', 'bad_frame', 'superseded', 'malformed_message',
)
"""Every drop reason the skeleton node reports as ``dropped_<reason>``."""

BAD_FRAMES = {
    'non_finite': {
        'stamp': 10.1, 'bodies': with_joint(HumanJoint.ELBOW_LEFT, (2.4, -0.2, math.nan))
    },
    'missing_arm_joints': {
        'stamp': 10.1, 'missing': (HumanJoint.WRIST_LEFT, HumanJoint.ELBOW_RIGHT)
    },
    'bad_bone': {'stamp': 10.1, 'bodies': with_joint(HumanJoint.WRIST_RIGHT, (0.5, 0.2, 1.1))},
    'old_stamp': {'stamp': 9.9},
    'other_body': {'stamp': 10.1, 'bodies': {2: facing_sensor(PERSON, 2.0)}},
    'no_body': {'stamp': 10.1, 'bodies': {}},
}


@pytest.mark.parametrize('source', MARKER_SOURCES)
@pytest.mark.parametrize('reason', BAD_FRAMES)
def test_bad_frame_is_dropped_with_its_counted_reason(skeleton_node, diagnostics, source, reason):
    """A bad array publishes nothing, reaches no handler and is counted under its reason."""
    node, published, handed = skeleton_node(source)
    node._on_markers(marker_bytes(source, 10.0))

    node._on_markers(marker_bytes(source, **BAD_FRAMES[reason]))

    assert len(published) == len(handed) == 1
    values = diagnostics(node)[0]
    counted = {key: value for key, value in values.items() if key.startswith('dropped_')}
    assert counted == {f'dropped_{key}': '1' if key == reason else '0' for key in DROP_KEYS}
    assert values['frames_in'] == '2'


@pytest.mark.parametrize('source', MARKER_SOURCES)
def test_one_missing_arm_still_gives_a_skeleton(skeleton_node, source):
    """A frame with one complete arm is accepted; the broken arm's joints are invalid."""
    node, published, handed = skeleton_node(source)

    node._on_markers(marker_bytes(source, 10.0, missing=(HumanJoint.WRIST_LEFT,)))

    assert len(published) == 1
    assert not handed[0].valid[HumanJoint.WRIST_LEFT] and handed[0].valid[HumanJoint.WRIST_RIGHT]
    assert math.isnan(published[0].message.poses[HumanJoint.WRIST_LEFT].position.x)


def test_stamp_far_back_starts_a_new_session(skeleton_node, diagnostics):
    """
    The stream going back beyond restart_after and staying there restarts (counted).

    A small step back is an old stamp; the first arrays of the replay loop are old stamps until
    RESTART_READINGS of them in a row show the person.
    """
    node, published, handed = skeleton_node(restart_after=1.0)
    node._on_markers(marker_bytes('azure_kinect', 100.0))
    node._on_markers(marker_bytes('azure_kinect', 99.5))  # back 0.5 s: an old stamp

    loop = [round(20.0 + 0.1 * index, 1) for index in range(RESTART_READINGS + 1)]
    for stamp in loop:  # back 80 s: a replay loop
        node._on_markers(marker_bytes('azure_kinect', stamp))

    assert [item.stamp for item in handed] == [100.0, *loop[-2:]]
    assert len(published) == 3
    values = diagnostics(node)[0]
    assert values['session_restarts'] == '1'
    assert values['dropped_old_stamp'] == str(RESTART_READINGS)
    assert values['skeletons_out'] == '3'


def test_another_person_is_announced_before_their_first_skeleton(skeleton_node, capture):
    """
    ``person`` counts the people taken up: 1 with the first body, 2 when somebody else is taken.

    switch_after and reacquire_after 0: a body 4 m to the side of the person's place is taken
    as a new person at once. In the process, the person handlers hear the count before the
    skeleton handlers get that person's first skeleton; the same person again says nothing.
    """
    node, _, handed = skeleton_node(switch_after=0.0, reacquire_after=0.0)
    people = capture(node, node._person_pub)
    heard: list[object] = []
    node.add_person_handler(heard.append)
    node.add_handler(lambda frame: heard.append(frame.stamp))
    other = facing_sensor(PERSON)
    other[:, 1] += 4.0
    node._on_markers(marker_bytes('azure_kinect', 10.0))
    node._on_markers(marker_bytes('azure_kinect', 10.1))
    node._on_markers(marker_bytes('azure_kinect', 10.2, {7: other}))
    node._on_markers(marker_bytes('azure_kinect', 10.3, {7: other}))
    assert heard == [1, 10.0, 10.1, 2, 10.2, 10.3]
    assert [item.message.data for item in people] == [1, 2]
    assert len(handed) == 4


def test_unreadable_bytes_are_counted_and_never_raise(skeleton_node, diagnostics):
    """Bytes that are no MarkerArray are a counted drop; the next good array goes through."""
    node, published, handed = skeleton_node()

    node._on_markers(b'\x00\x01\x00\x00not a marker array')
    node._on_markers(marker_bytes('azure_kinect', 5.0))

    assert len(handed) == 1
    assert diagnostics(node)[0]['dropped_malformed_message'] == '1'


def test_handler_error_is_reported_not_raised(skeleton_node, diagnostics):
    """A failing in-process consumer does not take the node down; later frames still flow."""
    node, published, handed = skeleton_node()
    calls = []

    def failing(frame):
        calls.append(frame.stamp)
        if len(calls) == 1:
            raise RuntimeError('consumer bug')

    node.add_handler(failing)

    node._on_markers(marker_bytes('azure_kinect', 1.0))
    node._on_markers(marker_bytes('azure_kinect', 1.1))

    assert calls == [1.0, 1.1]
    assert [item.stamp for item in handed] == [1.0, 1.1]
    assert diagnostics(node)[0]['handler_errors'] == '1'


@pytest.mark.parametrize(
    ('parameter', 'reason'),
    [
        (Parameter('smoothing', value='median'),
         "smoothing must be one of 'exponential', 'kalman', 'none', got 'median'"),
        (Parameter('time_constant', value=-1.0),
         'Parameter time_constant out of range Min: 0.0, Max: 10.0, value: -1.0'),
        (Parameter('source', value='kinect_v2'), 'Trying to set a read-only parameter: source.'),
        (Parameter('marker_rate', value=31.0),
         'Parameter marker_rate out of range Min: 0.0, Max: 30.0, value: 31.0'),
        (Parameter('body_frame_id', value=''),
         "body_frame_id must name a frame, got '': an empty frame_id puts the messages in no "
         'frame (RViz and tf2 cannot place them)'),
        (Parameter('tracker_frame_id', value='  '),
         "tracker_frame_id must name a frame, got '  ': an empty frame_id puts the messages in "
         'no frame (RViz and tf2 cannot place them)'),
        (Parameter('body_frame_id', value='/pic_human'),
         "body_frame_id must not start with '/' (tf2 refuses it), got '/pic_human'"),
    ],
)
def test_invalid_parameter_value_is_refused_with_its_reason(skeleton_node, parameter, reason):
    """An invalid set request fails with the reason and changes nothing."""
    node, _, _ = skeleton_node()
    before = node.get_parameter(parameter.name).value

    result = node.set_parameters([parameter])[0]

    assert not result.successful
    assert result.reason == reason
    assert node.get_parameter(parameter.name).value == before
    assert node._front.processor.config.smoothing == 'exponential'


@pytest.mark.parametrize('name', ['body_frame_id', 'tracker_frame_id'])
def test_an_empty_frame_id_is_refused_at_start_with_its_reason(make_node, name):
    """A node given an empty frame id does not start: the error names the parameter."""
    with pytest.raises(ConfigError, match=f"{name} must name a frame, got ''"):
        make_node(SkeletonNode, {name: ''})


def test_markers_that_waited_while_the_consumer_stalled_give_the_newest_skeleton(
    make_node, helper_node, ros_context, wait_for, diagnostics
):
    """
    Over DDS: 30 arrays come while the skeleton's consumer stalls (a starved teleop).

    When the stall ends the node reads every array waiting, hands on the newest only and
    counts the others as superseded: frames_in = skeletons_out + dropped, exactly, and the last
    skeleton handed on is the last array sent. The stall lasts until the arrays have reached
    this process, however long a busy host takes.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    node = make_node(SkeletonNode, {'source': 'azure_kinect', 'smoothing': 'none'})
    stalled, release = threading.Event(), threading.Event()
    handed = []

    def stall(frame):
        handed.append(frame.stamp)
        if len(handed) == 1:
            stalled.set()
            release.wait(timeout=60.0)

    node.add_handler(stall)
    arrived = []  # the arrays as a second reader of this process sees them
    helper_node.create_subscription(
        MarkerArray, node._subscription.topic_name, arrived.append,
        QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT), raw=True,
    )
    publisher = helper_node.create_publisher(
        MarkerArray, node._subscription.topic_name,
        QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE),
    )
    spins = [
        BackgroundSpin(executor(ros_context, item), period=0.01) for item in (node, helper_node)
    ]
    try:
        wait_for(lambda: publisher.get_subscription_count() == 2, 'both readers matched')
        stamps = [100.0 + index / 30.0 for index in range(31)]
        publisher.publish(marker_bytes('azure_kinect', stamps[0]))
        wait_for(stalled.is_set, 'the consumer stalled on the first skeleton')
        for stamp in stamps[1:]:
            publisher.publish(marker_bytes('azure_kinect', stamp))
        wait_for(lambda: len(arrived) == 31, 'every array in this process')
        release.set()
        wait_for(lambda: diagnostics(node)[0]['frames_in'] == '31', 'every array read')
    finally:
        release.set()
        for spin in spins:
            spin.stop()

    values = diagnostics(node)[0]
    skeletons, superseded = int(values['skeletons_out']), int(values['dropped_superseded'])
    dropped = sum(int(value) for key, value in values.items() if key.startswith('dropped_'))
    assert skeletons + dropped == 31
    assert superseded > 0 and dropped == superseded
    assert handed[0] == pytest.approx(stamps[0]) and handed[-1] == pytest.approx(stamps[-1])
    assert len(handed) == skeletons


def executor(context, node):
    """Return a single-threaded executor of a context with one node."""
    from rclpy.executors import SingleThreadedExecutor

    made = SingleThreadedExecutor(context=context)
    made.add_node(node)
    return made


def test_time_constant_change_is_applied_and_keeps_the_session(skeleton_node, diagnostics):
    """A valid change takes effect at once; the tracked body, last stamp and counts remain."""
    node, published, handed = skeleton_node(switch_after=1.0)
    node._on_markers(marker_bytes('azure_kinect', 10.0))
    node._on_markers(marker_bytes('azure_kinect', 9.9))

    result = node.set_parameters([Parameter('time_constant', value=0.5)])[0]

    assert result.successful
    assert node._front.processor.config.time_constant == 0.5
    node._on_markers(marker_bytes('azure_kinect', 9.95))  # still older than the last one
    node._on_markers(marker_bytes('azure_kinect', 10.1, bodies={2: facing_sensor(PERSON)}))
    assert len(handed) == 1
    values = diagnostics(node)[0]
    assert values['dropped_old_stamp'] == '2'
    assert values['dropped_other_body'] == '1'


# Xsens MVN -----------------------------------------------------------------------------------


def free_udp_port() -> int:
    """Return a UDP port of 127.0.0.1 that nothing is bound to right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def xsens_node(make_node, capture):
    """Return ``(node, published, handed, send)``: an Xsens node on a free loopback port."""
    port = free_udp_port()
    node = make_node(SkeletonNode, {'source': 'xsens_mvn', 'udp_port': port})
    published = capture(node, node._skeleton_pub)
    handed = []
    lock = threading.Lock()

    def handler(frame):
        with lock:
            handed.append(frame)

    node.add_handler(handler)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def send(datagrams):
        for datagram in datagrams:
            sender.sendto(datagram, ('127.0.0.1', port))

    yield node, published, handed, send
    sender.close()


def t_pose_sample(counter: int, max_payload: int = 1448) -> list[bytes]:
    """Return the datagrams of one T-pose sample."""
    positions, quaternions = t_pose_segments()
    return build_mxtp02_datagrams(counter, 10 * counter, positions, quaternions,
                                  max_payload=max_payload)


def test_xsens_samples_arrive_and_bad_datagrams_are_counted(xsens_node, wait_for):
    """Good samples (one or several datagrams) give skeletons; bad datagrams are only counted."""
    node, published, handed, send = xsens_node
    good = t_pose_sample(1)[0]
    unknown = bytearray(good)
    unknown[4:6] = b'01'
    bad = [
        b'NOPE' + good[4:],  # wrong magic
        bytes(unknown),  # an Euler stream, not decoded
        good[:-10],  # truncated payload
        good[:12],  # shorter than the header
        good + bytes(9000),  # oversized
        good + bytes(32),  # payload longer than the header says
    ]
    send(bad)
    send(t_pose_sample(1))
    wait_for(lambda: len(handed) == 1, 'the first skeleton')  # one at a time: none superseded
    send(t_pose_sample(2, max_payload=8 * 32))  # three datagrams
    wait_for(lambda: len(handed) == 2, 'the second skeleton')
    send(bad)
    send(t_pose_sample(3))

    wait_for(lambda: node._tracker.parser.received_count == 2 * len(bad) + 5, 'every datagram')
    wait_for(lambda: len(handed) == 3, 'three skeletons')
    assert len(published) == 3
    assert all(item.frame == 'body' for item in handed)
    assert [item.stamp for item in handed] == sorted(item.stamp for item in handed)
    drops = node._tracker.parser.drop_counts
    assert drops[XsensDropReason.WRONG_MAGIC] == 2
    assert drops[XsensDropReason.UNKNOWN_TYPE] == 2
    assert drops[XsensDropReason.TRUNCATED] == 4
    assert drops[XsensDropReason.OVERSIZED] == 2
    assert drops[XsensDropReason.MALFORMED] == 2
    assert node._thread.is_alive()


def test_xsens_receiver_survives_a_failing_handler(xsens_node, wait_for):
    """An exception in an in-process consumer does not stop the receiver thread."""
    node, published, handed, send = xsens_node

    def failing(frame):
        raise RuntimeError('consumer bug')

    node.add_handler(failing)

    send(t_pose_sample(1))
    wait_for(lambda: len(handed) == 1, 'the first skeleton')
    send(t_pose_sample(2))
    wait_for(lambda: len(handed) == 2, 'the second skeleton')

    assert node._thread.is_alive()


def test_destroy_node_stops_the_xsens_receiver(xsens_node, wait_for):
    """destroy_node ends the receiver thread and releases the port."""
    node, _, handed, send = xsens_node
    send(t_pose_sample(1))
    wait_for(lambda: len(handed) == 1, 'a skeleton')
    port = node._receiver.address[1]

    node.destroy_node()

    assert not node._thread.is_alive()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as again:
        again.bind(('127.0.0.1', port))


def test_xsens_samples_sent_while_the_consumer_stalls_are_superseded_by_the_newest(
    xsens_node, diagnostics, wait_for
):
    """
    A consumer that stalls (a starved teleop) while 2 s of 240 Hz samples come.

    The receiver reads the backlog at once and hands on the newest sample only: every sample is
    received, each one is a skeleton or counted as superseded, and none is lost: the consumer
    catches up instead of working through two seconds of the past. The stall lasts until all
    the samples are sent, however long a busy host takes to send them.
    """
    node, _, handed, send = xsens_node
    stalled, release = threading.Event(), threading.Event()

    def stall(frame):
        if not stalled.is_set():
            stalled.set()
            release.wait(timeout=60.0)

    node.add_handler(stall)
    datagrams = xsens_datagrams(481, 240.0)
    send(datagrams[:1])
    wait_for(stalled.is_set, 'the stall')
    send(datagrams[1:])
    release.set()
    wait_for(lambda: diagnostics(node)[0]['xsens_samples'] == '481', 'every sample decoded')

    values = diagnostics(node)[0]
    skeletons, superseded = int(values['skeletons_out']), int(values['dropped_superseded'])
    assert values['frames_in'] == '481'
    assert skeletons + superseded == 481
    assert superseded > 0 and len(handed) == skeletons
    assert values['lost_upstream'] == '0'
    assert values['lost_in_socket'] == '0'


def test_samples_the_kernel_dropped_are_counted_as_lost(make_node, diagnostics, wait_for):
    """
    A buffer too small for a 2 s stall: sent = frames_in + lost_upstream, exactly.

    The kernel's own count (lost_in_socket) says where they were lost: all in the socket.
    """
    port = free_udp_port()
    node = make_node(
        SkeletonNode, {'source': 'xsens_mvn', 'udp_port': port, 'udp_receive_buffer': 65536}
    )
    release = threading.Event()
    node.add_handler(lambda frame: release.wait(timeout=2.0))
    datagrams = xsens_datagrams(1001, 240.0)

    def drained() -> bool:  # nothing left in the socket: the next datagram finds room
        pending = array.array('i', [0])
        fcntl.ioctl(node._receiver._socket.fileno(), termios.FIONREAD, pending)
        return pending[0] == 0

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for datagram in datagrams[:1000]:
            sender.sendto(datagram, ('127.0.0.1', port))
        release.set()  # the stall ends: the receiver reads what the kernel kept
        wait_for(drained, 'the kept samples read')
        sender.sendto(datagrams[1000], ('127.0.0.1', port))  # carries the kernel's count

        def accounted() -> bool:
            values = diagnostics(node)[0]
            return int(values['frames_in']) + int(values['lost_upstream']) == 1001

        wait_for(accounted, 'every sample in frames_in or lost_upstream')

    values = diagnostics(node)[0]
    assert int(values['lost_in_socket']) == int(values['lost_upstream']) > 0


def test_a_context_shut_down_under_the_xsens_receiver_ends_it_without_an_error(wait_for, capfd):
    """
    A stop signal shuts the context down while samples still come (the receiver thread runs).

    The receiver cannot publish any more: it ends without logging an ERROR ("publisher's
    context is invalid"), and the node is then destroyed as ``run_nodes`` does after a signal.
    """
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    port = free_udp_port()
    node = SkeletonNode(
        context=context,
        parameter_overrides=[
            Parameter('source', value='xsens_mvn'), Parameter('udp_port', value=port)
        ],
    )
    handed = []
    node.add_handler(handed.append)
    datagrams = xsens_datagrams(24000, 240.0)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.sendto(datagrams[0], ('127.0.0.1', port))
            wait_for(lambda: len(handed) == 1, 'a skeleton')
            with context.handle:
                context.handle.shutdown()  # what rclpy's signal handler does
            sent = iter(datagrams[1:])

            def ended() -> bool:
                sender.sendto(next(sent), ('127.0.0.1', port))
                return not node._thread.is_alive()

            wait_for(ended, 'the receiver thread to end')
    finally:
        node.destroy_node()
        context.try_shutdown()

    logged = capfd.readouterr().err
    assert 'ERROR' not in logged, logged


def test_a_node_made_not_to_start_reads_the_tracker_only_once_started(make_node) -> None:
    """``start_input=False``: no ``body_tracking_data`` subscription until ``start_input()``."""
    node = make_node(SkeletonNode, {'source': 'azure_kinect'}, start_input=False)
    own = node.get_fully_qualified_name()

    def subscribed() -> bool:
        return any(
            topic == '/body_tracking_data'
            for topic, _ in node.get_subscriber_names_and_types_by_node(
                node.get_name(), node.get_namespace()
            )
        )

    assert not subscribed(), own
    node.start_input()
    node.start_input()  # a second call changes nothing
    assert subscribed(), own


def test_xsens_samples_sent_before_the_node_is_started_wait_in_its_socket(make_node, wait_for):
    """
    ``start_input=False``: the socket is bound, nothing is read; once started, nothing is lost.

    What the one-process teleop relies on: the tracker may send as soon as the node exists,
    while the solver is attached; the three samples are all received once the node starts,
    the newest handed on (the older ones, read together with it, superseded).
    """
    port = free_udp_port()
    node = make_node(
        SkeletonNode, {'source': 'xsens_mvn', 'udp_port': port}, start_input=False
    )
    handed: list = []
    node.add_handler(handed.append)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for counter in (1, 2, 3):
            for datagram in t_pose_sample(counter):
                sender.sendto(datagram, ('127.0.0.1', port))
    assert node._tracker.parser.received_count == 0 and handed == []
    node.start_input()
    wait_for(lambda: node._tracker.parser.received_count == 3, 'the three samples')
    wait_for(lambda: handed, 'the newest skeleton')
    assert handed[-1].stamp == max(frame.stamp for frame in handed)
