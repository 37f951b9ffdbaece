"""teleop: the three nodes in one process on the real Azure Kinect recording, and its options."""

from __future__ import annotations

import socket

from human_poses import BODY, body
import numpy as np
from pic_ros.exceptions import PicRosError
from pic_ros.motion.engagement import EngagementState
from pic_ros.ros.launch_arguments import base_command_topic
from pic_ros.ros.teleop import (
    build_pipeline,
    destroy_pipeline,
    main,
    node_parameters,
    parse_arguments,
)
from pic_ros.skeleton import HumanJoint
import pytest

BAG_TOPIC = '/kinect2/body_tracking_data'
EPSILON = 1e-9


def bag_messages(shared_data):
    """Return ``(log time [s], raw CDR bytes)`` of every body-tracking message of the bag."""
    highlevel = pytest.importorskip('rosbags.highlevel')
    bag = shared_data / 'azure_kinect' / 'body_tracking_ergonomics'
    with highlevel.AnyReader([bag]) as reader:
        connections = [item for item in reader.connections if item.topic == BAG_TOPIC]
        return [
            (timestamp * 1e-9, bytes(raw))
            for _, timestamp, raw in reader.messages(connections=connections)
        ]


@pytest.fixture
def pipeline(ros_context):
    """
    Build baxter + azure_kinect in one process on sim time, engaged; destroyed after.

    Each skeleton is solved in the thread that produced it (``solve_thread`` false): the test
    steps the clock message by message and reads the state each one leaves.
    """
    sim = {'use_sim_time': True}
    nodes = build_pipeline(
        'baxter',
        'azure_kinect',
        {
            'skeleton_node': sim,
            'solver_node': sim,
            'trajectory_publisher': {**sim, 'wait_for_joint_states': False,
                                     'start_engaged': True},
        },
        context=ros_context,
        solve_thread=False,
    )
    yield nodes
    destroy_pipeline(nodes)


def test_real_recording_gives_commands_within_the_limits(
    pipeline, shared_data, capture, sim_clock, diagnostics
):
    """The Azure Kinect bag, at its recorded timing, drives Baxter's arms and head in limits."""
    skeleton, solver, trajectory = pipeline
    messages = bag_messages(shared_data)
    published = {
        name: capture(trajectory, publisher)
        for name, (_, publisher) in trajectory._groups.items()
    }
    clock = sim_clock(skeleton, solver, trajectory)
    offset = 100.0 - messages[0][0]  # recorded intervals, small numbers

    states = []
    for log_time, raw in messages:
        clock.advance_to(log_time + offset)
        skeleton._on_markers(raw)
        states.append(diagnostics(trajectory)[0]['state'])
    end = messages[-1][0] + offset
    for now in np.arange(end + 0.02, end + 8.0, 0.02):  # the person is gone: hold, then neutral
        clock.advance_to(float(now))

    assert len(messages) == 933
    values = diagnostics(skeleton)[0]
    assert values['dropped_no_body'] == '60'
    assert int(values['skeletons_out']) > 800
    assert states[:18] == ['waiting'] * 18  # nobody in view yet: no command at all
    assert states[-1] == 'holding'  # 41 empty arrays at the end: 2.7 s < neutral_timeout
    assert diagnostics(trajectory)[0]['state'] == 'at_neutral'
    assert set(published) == {'left', 'right', 'head'}
    for name, items in published.items():
        arm = trajectory.robot.groups[name]
        assert len(items) > 800
        times = np.array([item.time for item in items])
        points = [point for item in items for point in item.message.points]
        every = np.array([point.positions for point in points])
        assert all(list(item.message.joint_names) == list(arm.joint_names) for item in items)
        assert np.all(every >= arm.lower) and np.all(every <= arm.upper)
        assert np.all(np.abs([point.velocities for point in points]) <= arm.velocity + EPSILON)
        # The messages' first points lie on one motion within the velocity limits: consecutive
        # ones differ by at most what the joints move between their times (stamp + lead).
        positions = np.array([item.message.points[0].positions for item in items])
        at = np.array([
            seconds(item.message.header.stamp) + seconds(item.message.points[0].time_from_start)
            for item in items
        ])
        steps = np.abs(np.diff(positions, axis=0))
        allowed = np.abs(np.diff(at))
        assert np.all(steps <= arm.velocity * allowed[:, None] + EPSILON)
        assert times.size == at.size
        np.testing.assert_allclose(positions[-1], arm.neutral, atol=1e-9)


def seconds(stamp_or_duration) -> float:
    """Return a builtin Time or Duration in seconds."""
    return stamp_or_duration.sec + stamp_or_duration.nanosec * 1e-9


@pytest.mark.parametrize(
    'item', ['solver_node.eta', 'robot.eta=2', 'solver_node=2', '.eta=2', 'solver_node.eta=']
)
def test_malformed_param_option_is_refused_with_a_clear_message(item):
    """A --param that is not NODE.NAME=VALUE names the expected form and the nodes."""
    args, _ = parse_arguments(['--param', item])

    with pytest.raises(PicRosError) as raised:
        node_parameters(args)

    assert str(raised.value) == (
        f'--param {item!r}: expected NODE.NAME=VALUE with NODE one of skeleton_node, '
        'solver_node, trajectory_publisher, base_follower'
    )


def test_param_options_become_typed_node_parameters():
    """Options and --param values reach the right node with bool, int, float or str types."""
    args, ros_args = parse_arguments([
        '--solver', 'pics', '--eta', '2',
        '--param', 'trajectory_publisher.wait_for_joint_states=false',
        '--param', 'trajectory_publisher.rate=100',
        '--param', 'skeleton_node.time_constant=0.2',
        '--param', 'skeleton_node.body_frame_id=me',
        '--ros-args', '-r', '__ns:=/robot',
    ])

    assert node_parameters(args) == {
        'skeleton_node': {'time_constant': 0.2, 'body_frame_id': 'me'},
        'solver_node': {'solver': 'pics', 'eta': 2},
        'trajectory_publisher': {'wait_for_joint_states': False, 'rate': 100},
        'base_follower': {},
    }
    assert ros_args == ['--ros-args', '-r', '__ns:=/robot']


def test_integer_option_for_a_floating_point_parameter_is_accepted(ros_context):
    """An option typed as 3 for a parameter declared as 3.0 sets it, as the user meant."""
    nodes = build_pipeline(
        'tiago', 'kinect_v2',
        {'skeleton_node': {'time_constant': 1}, 'trajectory_publisher': {'rate': 100}},
        context=ros_context,
    )
    try:
        assert nodes[0].get_parameter('time_constant').value == 1.0
        assert nodes[2].get_parameter('rate').value == 100.0
    finally:
        destroy_pipeline(nodes)


def test_follow_base_adds_the_base_follower_on_the_robot_files_base_topic(ros_context):
    """
    ``--robot tiago --follow-base``: base_follower joins the process, following, on TIAGo's topic.

    The options of ``python -m pic_ros teleop --robot tiago --follow-base`` (README), built as
    ``main`` builds them; ``--admittance`` reaches solver_node; a robot without a mobile base and
    no ``--base-cmd-topic`` is refused before anything starts.
    """
    args, _ = parse_arguments([
        '--robot', 'tiago', '--follow-base', '--admittance', '--correspondence', 'position',
        '--param', 'base_follower.base_max_linear_velocity=0.2',
    ])
    parameters = node_parameters(args)
    assert args.follow_base is True and parameters['solver_node']['admittance'] is True
    topic = base_command_topic(args.robot, args.base_cmd_topic)
    assert topic == 'mobile_base_controller/cmd_vel_unstamped'
    nodes = build_pipeline(
        args.robot, args.source, parameters, context=ros_context, base_cmd_topic=topic
    )
    try:
        follower = nodes[-1]
        assert follower.get_name() == 'base_follower' and len(nodes) == 4
        assert follower.get_parameter('follow_base').value is True
        assert follower.get_parameter('base_max_linear_velocity').value == 0.2
        assert follower.cmd_vel.topic_name == '/mobile_base_controller/cmd_vel_unstamped'
        assert nodes[1].get_parameter('admittance').value is True
    finally:
        destroy_pipeline(nodes)
    assert main(['--robot', 'baxter', '--follow-base']) == 2


@pytest.mark.parametrize(('options', 'state'), [
    ([], EngagementState.DISENGAGED), (['--engaged'], EngagementState.ENGAGED),
])
def test_engaged_option_starts_the_robot_engaged_and_disengaged_without_it(
    ros_context, options, state
):
    """``--engaged`` sets trajectory_publisher's start_engaged; without it the robot holds."""
    args, _ = parse_arguments(['--robot', 'yumi', *options])
    parameters = node_parameters(args)
    assert parameters['trajectory_publisher'] == ({'start_engaged': True} if options else {})
    nodes = build_pipeline(args.robot, args.source, parameters, context=ros_context)
    try:
        assert nodes[2].engagement is state
    finally:
        destroy_pipeline(nodes)


def hands_up(stamp: float):
    """Return a body-frame skeleton with both wrists 0.2 m above the head."""
    points = BODY.copy()
    for elbow, wrist, hand, side in (
        (HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT, HumanJoint.HAND_LEFT, 1.0),
        (HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT, HumanJoint.HAND_RIGHT, -1.0),
    ):
        points[elbow] = (0.0, side * 0.25, 0.25)
        points[wrist] = (0.0, side * 0.22, BODY[HumanJoint.HEAD, 2] + 0.2)
        points[hand] = (0.0, side * 0.22, BODY[HumanJoint.HEAD, 2] + 0.28)
    return body(points, stamp)


def test_the_engage_gesture_engages_the_trajectory_publisher_in_process(ros_context):
    """In one process the solver's engage gesture is handed to trajectory_publisher directly."""
    nodes = build_pipeline(
        'baxter', 'azure_kinect', {'solver_node': {'engage_gesture_time': 0.5}},
        context=ros_context,
    )
    try:
        solver, trajectory = nodes[1], nodes[2]
        assert trajectory.engagement is EngagementState.DISENGAGED
        for index in range(10):  # 0.3 s: not yet
            solver.handle_skeleton(hands_up(100.0 + index / 30.0))
        assert trajectory.engagement is EngagementState.DISENGAGED
        for index in range(10, 30):
            solver.handle_skeleton(hands_up(100.0 + index / 30.0))
        assert trajectory.engagement is EngagementState.ENGAGED
        assert trajectory._engagement.last_transition.reason == 'engaged by gesture'
    finally:
        destroy_pipeline(nodes)


def test_another_person_reaches_the_solver_in_one_process(ros_context, diagnostics):
    """
    In teleop the skeleton node tells the solver and the trajectory publisher of another person.

    Real arrays of the shared bag, then the same body 4 m to the side under another id, with
    switch_after and reacquire_after 0 (taken up at once): the solver forgets what it learnt of
    the first person once, before solving the second one's first skeleton; the robot, engaged
    from the start, is disengaged by the second person.
    """
    from builtin_interfaces.msg import Time
    from pic_ros_tools.ros.latency_bench import bag_marker_arrays, default_bag
    from rclpy.serialization import serialize_message

    arrays = bag_marker_arrays(default_bag(), limit=10)
    nodes = build_pipeline(
        'baxter', 'azure_kinect',
        {'skeleton_node': {'switch_after': 0.0, 'reacquire_after': 0.0},
         'trajectory_publisher': {'start_engaged': True}},
        context=ros_context, solve_thread=False,
    )
    skeleton, solver, trajectory = nodes
    try:
        for index, array in enumerate(arrays):
            stamp = Time(sec=100, nanosec=int(index * 1e9 / 30))
            for marker in array.markers:
                marker.header.stamp = stamp
                if index >= 5:  # somebody else, 4 m to the side
                    marker.id += 500
                    marker.pose.position.x += 4.0
            skeleton._on_markers(serialize_message(array))
        skeleton_values, solver_values = diagnostics(skeleton)[0], diagnostics(solver)[0]
        engaged = trajectory.engagement, trajectory._engagement.last_transition.reason
    finally:
        destroy_pipeline(nodes)
    assert skeleton_values['people_taken_up'] == '2'
    assert solver_values['person_changes'] == '1'
    assert solver_values['skeletons_solved'] == skeleton_values['skeletons_out']
    assert engaged == (
        EngagementState.DISENGAGED,
        'disengaged: another person (number 2) was taken up; engage again to follow them',
    )


def test_a_stalled_solver_in_one_process_is_handed_the_newest_skeleton_only(
    ros_context, wait_for, diagnostics
):
    """
    In teleop, 30 tracker arrays come while the solver is busy with the first skeleton.

    The skeleton node never waits for the solver (it processes every array as it comes); the
    solver then solves the newest skeleton only. Every skeleton the skeleton node handed on is
    solved or counted by the solver, exactly, and the skeleton node's own balance holds.
    """
    import threading

    from builtin_interfaces.msg import Time
    from pic_ros_tools.ros.latency_bench import bag_marker_arrays, default_bag
    from rclpy.serialization import serialize_message

    arrays = bag_marker_arrays(default_bag(), limit=31)
    nodes = build_pipeline(
        'baxter', 'azure_kinect',
        {
            'solver_node': {'max_frame_age': 3600.0},  # the stall is as long as the host takes
            'trajectory_publisher': {'wait_for_joint_states': False, 'start_engaged': True},
        },
        context=ros_context,
    )
    skeleton, solver, _ = nodes
    offered, solved = [], []
    stalled, release = threading.Event(), threading.Event()
    skeleton.add_handler(lambda frame: offered.append(frame.stamp))

    def stall(targets):
        solved.append(targets.stamp)
        if len(solved) == 1:
            stalled.set()
            release.wait(timeout=60.0)

    solver.add_handler(stall)
    try:
        for index, array in enumerate(arrays):
            stamp = Time(sec=100 + index // 30, nanosec=int(index % 30 * 1e9 / 30))
            for marker in array.markers:
                marker.header.stamp = stamp
            skeleton._on_markers(serialize_message(array))
            if index == 0:
                wait_for(stalled.is_set, 'the solver busy with the first skeleton')
        release.set()
        wait_for(lambda: solved and solved[-1] == offered[-1], 'the newest skeleton solved')
        skeleton_values, solver_values = diagnostics(skeleton)[0], diagnostics(solver)[0]
    finally:
        release.set()
        destroy_pipeline(nodes)

    assert len(offered) > 2 and solved == [offered[0], offered[-1]]
    dropped = sum(
        int(value) for key, value in skeleton_values.items() if key.startswith('dropped_')
    )
    assert int(skeleton_values['skeletons_out']) + dropped == int(skeleton_values['frames_in'])
    assert int(skeleton_values['skeletons_out']) == len(offered)
    assert solver_values['skeletons_in'] == str(len(offered))
    assert solver_values['skeletons_solved'] == '2'
    assert solver_values['dropped_superseded'] == str(len(offered) - 2)
    assert solver_values['skeletons_waiting'] == '0'


@pytest.mark.parametrize('source', ['azure_kinect', 'xsens_mvn'])
def test_the_tracker_is_read_only_once_the_solver_is_attached(ros_context, monkeypatch, source):
    """
    No skeleton leaves the skeleton node before the solver takes it (the balance holds).

    The UDP receiver of an Xsens source runs in a thread of its own: started before the
    solver was attached, the first skeletons were counted out of the skeleton node and never
    reached the solver (2-3 of ~400 in the stress benchmark, on a loaded machine).
    """
    from pic_ros.ros.skeleton_node import SkeletonNode

    attached_at_start: list[int] = []
    start = SkeletonNode.start_input

    def recording_start(node: SkeletonNode) -> None:
        attached_at_start.append(len(node._handlers))
        start(node)

    monkeypatch.setattr(SkeletonNode, 'start_input', recording_start)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:  # a port free right now
        probe.bind(('127.0.0.1', 0))
        port = probe.getsockname()[1]
    nodes = build_pipeline(
        'baxter', source, {'skeleton_node': {'udp_port': port, 'udp_address': '127.0.0.1'}},
        context=ros_context,
    )
    try:
        assert attached_at_start == [2]  # the chest height and the solver's mailbox
    finally:
        destroy_pipeline(nodes)
