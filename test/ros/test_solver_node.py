"""solver_node: body-frame skeletons in, joint targets of the robot's arms out."""

from __future__ import annotations

import threading

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.human.body_frame import to_body_frame
from pic_ros.resources import shipped_robots
from pic_ros.ros.conversions import skeleton_to_msg
from pic_ros.ros.solver_node import SolverNode
from pic_ros.skeleton import HumanJoint, make_frame, Side, SkeletonFrame
from pic_ros_tools.recordings.kinect_v2_text import kinect_v2_to_human
from pic_ros_tools.synthetic import generate_recording
import pytest
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

ROBOTS = shipped_robots()
"""Every robot of ``config/`` (a robot file with its URDF)."""


@pytest.fixture(scope='module')
def body_frames() -> list[SkeletonFrame]:
    """Return 20 consecutive tracked frames of the synthetic take, in the body frame."""
    recording = generate_recording()
    frames = []
    for index in range(200, 220):
        assert recording.tracked[index]
        joints = kinect_v2_to_human(recording.joints[index])
        frames.append(to_body_frame(make_frame(float(recording.stamps[index]), joints)))
    return frames


def without(frame: SkeletonFrame, joint: HumanJoint) -> SkeletonFrame:
    """Return a copy of a body-frame skeleton with one joint invalid."""
    valid = frame.valid.copy()
    valid[joint] = False
    return make_frame(frame.stamp, frame.positions, valid, frame='body')


@pytest.fixture
def solver_node(make_node, capture):
    """Return a factory: ``(node, published, handed)`` for parameter overrides."""

    def make(**parameters):
        node = make_node(SolverNode, parameters)
        published = capture(node, node._publisher)
        handed = []
        node.add_handler(
            lambda targets: handed.append((targets.stamp, targets.joint_names, targets.positions))
        )
        return node, published, handed

    return make


SPINS = 6000
"""Most executor spins a test waits for a message through DDS (each up to 10 ms)."""


def limits_of(robot, names):
    """Return the lower and upper position limits of some joints of a robot, in order."""
    lower, upper = {}, {}
    for group in robot.groups.values():
        lower.update(zip(group.joint_names, group.lower))
        upper.update(zip(group.joint_names, group.upper))
    return np.array([lower[name] for name in names]), np.array([upper[name] for name in names])


@pytest.mark.parametrize('robot', ROBOTS)
def test_skeleton_gives_targets_for_every_arm_within_limits(solver_node, body_frames, robot):
    """
    Each skeleton gives one JointState: every arm's URDF joints, inside limits, stamp copied.

    After the arms come the joints of the head and grippers the robot has, when the person's
    head and hands were seen; always whole groups, inside their limits.
    """
    node, published, handed = solver_node(robot=robot)
    names = [name for arm in node.robot.arms.values() for name in arm.joint_names]
    others = [
        group.joint_names for key, group in node.robot.groups.items() if key not in node.robot.arms
    ]

    for frame in body_frames:
        node.handle_skeleton(frame)

    assert len(published) == len(handed) == len(body_frames)
    for frame, (_, message), (stamp, handed_names, positions) in zip(
        body_frames, published, handed
    ):
        assert list(message.name) == list(handed_names)
        assert list(message.name[:len(names)]) == names
        rest = list(message.name[len(names):])
        assert rest == [name for group in others if group[0] in rest for name in group]
        lower, upper = limits_of(node.robot, list(message.name))
        assert list(message.position) == list(positions)
        assert np.all(lower <= message.position) and np.all(message.position <= upper)
        assert message.header.stamp.sec + message.header.stamp.nanosec * 1e-9 == pytest.approx(
            frame.stamp, abs=1e-9
        )
        assert stamp == frame.stamp


@pytest.mark.parametrize('robot', ROBOTS)
def test_analytic_solver_gives_targets_within_limits(solver_node, body_frames, robot):
    """solver: analytic is accepted by the node, and every arm's targets are inside the limits."""
    node, published, _ = solver_node(robot=robot, solver='analytic')
    names = [name for arm in node.robot.arms.values() for name in arm.joint_names]

    for frame in body_frames:
        node.handle_skeleton(frame)

    assert node.get_parameter('solver').value == 'analytic'
    assert len(published) == len(body_frames)
    for _, message in published:
        assert list(message.name[:len(names)]) == names
        lower, upper = limits_of(node.robot, list(message.name))
        assert np.all(lower <= message.position) and np.all(message.position <= upper)


@pytest.mark.parametrize('robot', ('baxter', 'yumi'))
def test_missing_arm_solves_only_the_other_arm(solver_node, body_frames, robot):
    """Without the person's left wrist only the robot's right arm is solved (same_side)."""
    node, published, _ = solver_node(robot=robot)

    node.handle_skeleton(without(body_frames[0], HumanJoint.WRIST_LEFT))

    assert list(published[0].message.name) == list(node.robot.arms['right'].joint_names)


def test_missing_driving_arm_publishes_nothing(solver_node, body_frames):
    """The one TIAGo arm follows the person's right arm: without it, no target is sent."""
    node, published, handed = solver_node(robot='tiago')

    node.handle_skeleton(without(body_frames[0], HumanJoint.ELBOW_RIGHT))
    node.handle_skeleton(without(body_frames[1], HumanJoint.WRIST_LEFT))

    assert [message.header.stamp for _, message in published] == [
        skeleton_to_msg(body_frames[1], 'f').header.stamp
    ]
    assert len(handed) == 1


def test_arms_parameter_selects_the_solved_arm(solver_node, body_frames):
    """With arms: [left] (even repeated) only the left arm is solved and published."""
    node, published, _ = solver_node(robot='baxter', arms=['left', 'left'])

    node.handle_skeleton(body_frames[0])

    assert list(published[0].message.name) == list(node.robot.arms['left'].joint_names)
    assert list(node._imitator.correspondences) == ['left']  # the other arm is not solved


def test_unknown_arm_fails_at_construction(make_node):
    """An arm the robot does not have is a ConfigError naming the robot's arms."""
    with pytest.raises(ConfigError, match=r"arms \['middle'\] are not arms of baxter; arms: "
                                          r'left, right'):
        make_node(SolverNode, {'robot': 'baxter', 'arms': ['left', 'middle']})


def test_solver_change_at_run_time_keeps_the_warm_start(solver_node, body_frames):
    """Switching fabrik -> pics (eta 2) is accepted, applied, and keeps the current solution."""
    node, published, _ = solver_node(robot='baxter', solver='fabrik')
    for frame in body_frames[:10]:
        node.handle_skeleton(frame)
    warm = {arm: node._imitator.q(arm).copy() for arm in node.robot.arms}

    results = node.set_parameters([Parameter('solver', value='pics'), Parameter('eta', value=2)])

    assert all(result.successful for result in results)
    assert node._imitator.solver_config.name == 'pics'
    assert node._imitator.solver_config.eta == 2
    for arm, q in warm.items():
        np.testing.assert_array_equal(node._imitator.q(arm), q)
    node.handle_skeleton(body_frames[10])
    assert len(published) == 11


@pytest.mark.parametrize(
    ('parameter', 'reason'),
    [
        (Parameter('solver', value='ccd'), "solver must be one of 'analytic', 'fabrik', 'pic', "
                                           "'pics', got 'ccd'"),
        (Parameter('eta', value=5), 'Parameter eta out of range. Min: 1, Max: 3, value: 5'),
        (Parameter('scale', value='big'), "scale must be 'auto' or a number, got 'big'"),
        (Parameter('scale', value=-1.0), 'scale must be in [0.05, 20.0], got -1.0'),
        (Parameter('scale', value=True), "scale must be 'auto' or a number, got True"),
        (Parameter('mapping', value='left'), "mapping must be one of 'same_side', 'mirror', "
                                             "got 'left'"),
        (Parameter('correspondence', value='elastic'), 'correspondence must be one of '
                                                       "'direction', 'position', got 'elastic'"),
        (Parameter('user_profile', value='/nowhere/p.yaml'), 'cannot read user profile '
                                                             '/nowhere/p.yaml'),
        (Parameter('robot', value='yumi'), 'Trying to set a read-only parameter: robot.'),
    ],
)
def test_invalid_parameter_value_is_refused_with_its_reason(solver_node, parameter, reason):
    """An invalid set request fails with the reason and leaves the solver as it was."""
    node, _, _ = solver_node(robot='baxter')
    imitator = node._imitator

    result = node.set_parameters([parameter])[0]

    assert not result.successful
    assert result.reason.startswith(reason)
    assert node._imitator is imitator


def test_position_correspondence_with_a_fixed_scale_is_accepted(solver_node, body_frames):
    """Switching to the position correspondence with a fixed scale is applied at once."""
    node, published, _ = solver_node(robot='baxter')
    assert node._imitator.mapping_config.correspondence == 'direction'

    results = node.set_parameters(
        [Parameter('correspondence', value='position'), Parameter('scale', value=1.2)]
    )
    node.handle_skeleton(body_frames[0])

    assert all(result.successful for result in results)
    statuses = [c.status() for c in node._imitator.correspondences.values()]
    assert [status['scale'] for status in statuses] == [1.2, 1.2]
    assert len(published) == 1


def test_another_person_starts_the_learnt_scale_over(solver_node, body_frames, diagnostics):
    """
    ``person`` changing forgets what was learnt of the person; the same count keeps it.

    The position correspondence learns the person's scale from every frame: after another
    person is taken up it counts the frames from that person's first one.
    """
    node, _, _ = solver_node(robot='baxter', correspondence='position')

    def learnt():
        return {c.status()['scale_source'] for c in node._imitator.correspondences.values()}

    node.set_person(1)
    for frame in body_frames[:10]:
        node.handle_skeleton(frame)
    node.set_person(1)
    for frame in body_frames[10:15]:
        node.handle_skeleton(frame)
    assert learnt() == {'learnt from 15 frames'}
    node.set_person(2)
    for frame in body_frames[15:]:
        node.handle_skeleton(frame)
    assert learnt() == {'learnt from 5 frames'}
    assert diagnostics(node)[0]['person_changes'] == '1'


def t_pose(frame: SkeletonFrame, stamp: float) -> SkeletonFrame:
    """Return a body-frame skeleton holding the calibration pose, arms 0.28 / 0.25 m."""
    positions = frame.positions.copy()
    for shoulder, elbow, wrist, side in (
        (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT, 1.0),
        (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT, -1.0),
    ):
        positions[elbow] = positions[shoulder] + (0.0, side * 0.28, 0.0)
        positions[wrist] = positions[elbow] + (0.0, side * 0.25, 0.0)
    return make_frame(stamp, positions, frame='body')


def test_calibrate_service_measures_saves_and_uses_a_user_profile(
    solver_node, body_frames, tmp_path, monkeypatch
):
    """~/calibrate after a held pose writes the profile, sets user_profile and uses it."""
    monkeypatch.setenv('ROS_HOME', str(tmp_path))
    node, _, _ = solver_node(robot='baxter', correspondence='position')
    request = Trigger.Request()

    early = node._on_calibrate(request, Trigger.Response())
    assert not early.success and 'calibration pose held for 0.0 s' in early.message

    for index in range(75):  # 2.5 s of the pose at 30 Hz
        node.handle_skeleton(t_pose(body_frames[0], 100.0 + index / 30.0))
    response = node._on_calibrate(request, Trigger.Response())

    target = tmp_path / 'pic_ros' / 'user_profile.yaml'
    assert response.success, response.message
    assert str(target) in response.message and 'right 0.280 / 0.250 m' in response.message
    assert node.get_parameter('user_profile').value == str(target)
    profile = node._imitator.mapping_config.profile
    assert profile is not None and profile.arms[Side.LEFT].upper_arm == pytest.approx(0.28)
    sources = [c.status()['scale_source'] for c in node._imitator.correspondences.values()]
    assert sources == ['user profile user_profile'] * 2


def test_whole_body_appends_the_torso_joint_after_the_arm(solver_node, body_frames):
    """whole_body on TIAGo: the torso joint follows the arm's joints, inside its limits."""
    from geometry_msgs.msg import PointStamped

    node, published, _ = solver_node(robot='tiago', whole_body=True)
    arm = node.robot.arms['arm'].joint_names
    for index, frame in enumerate(body_frames):
        chest = PointStamped()
        chest.point.z = 1.4 - 0.01 * index  # the person goes down a little
        node._on_chest(chest)
        node.handle_skeleton(frame)
    assert published
    for _, message in published:
        names = list(message.name)
        assert names[:len(arm)] == list(arm)
        assert names[len(arm)] == 'torso_lift_joint'
        lift = message.position[len(arm)]
        assert 0.0 <= lift <= 0.35


def test_without_whole_body_the_torso_is_held_at_its_neutral(solver_node, body_frames):
    """whole_body off (the default): the torso joint is commanded to 0.15 m, as the arm assumes."""
    node, published, _ = solver_node(robot='tiago')
    for frame in body_frames:
        node.handle_skeleton(frame)
    assert published
    for _, message in published:
        names = list(message.name)
        assert message.position[names.index('torso_lift_joint')] == pytest.approx(0.15)


def hands_up(frame: SkeletonFrame, stamp: float) -> SkeletonFrame:
    """Return a body-frame skeleton with both arms raised, wrists 0.2 m above the head."""
    positions = frame.positions.copy()
    head = positions[HumanJoint.HEAD]
    for shoulder, elbow, wrist in (
        (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT),
        (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT),
    ):
        positions[elbow] = positions[shoulder] + (0.0, 0.0, 0.28)
        positions[wrist] = (positions[shoulder][0], positions[shoulder][1], head[2] + 0.2)
    return make_frame(stamp, positions, frame='body')


@pytest.mark.parametrize('hold_time', [0.0, 1.0])
def test_the_engage_gesture_asks_to_engage_once_per_hold(
    solver_node, body_frames, capture, hold_time
):
    """
    With engage_gesture_time 1 s, 2 s of raised hands publish engage_gesture once, handed over.

    Off (0, the default), the same pose asks nothing. The diagnostics count the gestures.
    """
    node, _, _ = solver_node(robot='baxter', engage_gesture_time=hold_time)
    requests = capture(node, node._gesture_publisher)
    handed = []
    node.add_gesture_handler(lambda: handed.append(True))

    for index in range(60):  # 2 s at 30 Hz
        node.handle_skeleton(hands_up(body_frames[0], 100.0 + index / 30.0))
    node.handle_skeleton(body_frames[0])  # hands down

    expected = 1 if hold_time else 0
    assert len(requests) == expected and len(handed) == expected
    status = {item.key: item.value for item in node._statuses()[0].values}
    assert status['engage_gestures'] == str(expected)
    assert status['engage_gesture_time'] == str(hold_time)


# Freshest frame ------------------------------------------------------------------------------


def stalling_handler(handed: list[float]) -> tuple[threading.Event, threading.Event, object]:
    """
    Return ``(stalled, release, handler)``: a targets handler that stalls on the first solve.

    The solver thread is then busy (a starved solver) until the test releases it.
    """
    stalled, release = threading.Event(), threading.Event()

    def handler(targets):
        handed.append(targets.stamp)
        if len(handed) == 1:
            stalled.set()
            release.wait(timeout=60.0)

    return stalled, release, handler


def balance(values: dict[str, str]) -> tuple[int, int]:
    """Return ``skeletons_in`` and what became of them (solved + rejected + dropped + waiting)."""
    accounted = sum(int(values[key]) for key in (
        'skeletons_solved', 'frames_rejected', 'dropped_superseded', 'dropped_too_old',
        'skeletons_waiting',
    ))
    return int(values['skeletons_in']), accounted


def test_a_stalled_solver_solves_the_newest_skeleton_and_counts_the_others(
    make_node, body_frames, wait_for, diagnostics
):
    """
    19 skeletons come while the solver is busy with the first: it then solves the 20th only.

    Every skeleton is solved or counted (superseded); none is too old (max_frame_age an hour:
    the stall lasts as long as a busy host takes, nothing here is timed).
    """
    node = make_node(SolverNode, {'robot': 'baxter', 'max_frame_age': 3600.0})
    handed: list[float] = []
    stalled, release, handler = stalling_handler(handed)
    node.add_handler(handler)

    node.offer(body_frames[0])
    wait_for(stalled.is_set, 'the solver busy with the first skeleton')
    for frame in body_frames[1:]:
        node.offer(frame)  # never waits for the solve in progress
    waiting = diagnostics(node)[0]['skeletons_waiting']
    release.set()
    wait_for(lambda: len(handed) == 2, 'the newest skeleton solved')

    values = diagnostics(node)[0]
    assert waiting == '1'
    assert handed == [body_frames[0].stamp, body_frames[-1].stamp]
    assert values['skeletons_in'] == '20'
    assert values['skeletons_solved'] == '2'
    assert values['dropped_superseded'] == '18'
    assert values['dropped_too_old'] == '0'
    assert balance(values) == (20, 20)


def test_a_skeleton_older_than_max_frame_age_when_the_solver_is_free_is_dropped_and_counted(
    make_node, body_frames, sim_clock, wait_for, diagnostics
):
    """
    On the simulated clock: a skeleton arrives at 100.0 s while the solver is busy until 100.3 s.

    It waited 0.3 s > max_frame_age (0.25 s): dropped as too_old, the robot holds. The next one,
    on time, is solved.
    """
    node = make_node(SolverNode, {'robot': 'baxter', 'use_sim_time': True})
    clock = sim_clock(node)
    handed: list[float] = []
    stalled, release, handler = stalling_handler(handed)
    node.add_handler(handler)

    clock.advance_to(100.0)
    node.offer(body_frames[0])
    wait_for(stalled.is_set, 'the solver busy with the first skeleton')
    node.offer(body_frames[1])  # arrives at 100.0 s
    clock.advance_to(100.3)
    release.set()  # the solver is free at 100.3 s
    wait_for(lambda: diagnostics(node)[0]['dropped_too_old'] == '1', 'the old skeleton dropped')
    node.offer(body_frames[2])  # arrives at 100.3 s, the solver free
    wait_for(lambda: len(handed) == 2, 'the next skeleton solved')

    values = diagnostics(node)[0]
    assert handed == [body_frames[0].stamp, body_frames[2].stamp]
    assert values['dropped_too_old'] == '1' and values['dropped_superseded'] == '0'
    assert values['max_frame_age_s'] == '0.25'
    assert balance(values) == (3, 3)


def test_max_frame_age_is_changed_at_run_time_and_refused_out_of_range(solver_node):
    """A new max_frame_age applies at once; 0 (every frame too old) is refused."""
    node, _, _ = solver_node(robot='baxter')

    assert node.set_parameters([Parameter('max_frame_age', value=0.5)])[0].successful
    refused = node.set_parameters([Parameter('max_frame_age', value=0.0)])[0]

    assert node._mailbox.max_age == 0.5
    assert not refused.successful and 'max_frame_age' in refused.reason


def test_without_a_solver_thread_an_offered_skeleton_is_solved_at_once(make_node, body_frames):
    """solve_thread false (tests on a simulated clock): offer solves in the caller's thread."""
    node = make_node(SolverNode, {'robot': 'baxter'}, solve_thread=False)
    handed = []
    node.add_handler(lambda targets: handed.append(targets.stamp))

    for frame in body_frames[:3]:
        node.offer(frame)
        assert handed[-1] == frame.stamp

    assert node._thread is None


def test_a_context_shut_down_under_the_solver_thread_ends_it_without_an_error(
    body_frames, wait_for, capfd
):
    """
    A stop signal shuts the context down while skeletons still come: publishing fails.

    The solver thread ends without logging an ERROR ("publisher's context is invalid"); the node
    is then destroyed as ``run_nodes`` does after a signal.
    """
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    node = SolverNode(context=context, parameter_overrides=[Parameter('robot', value='baxter')])
    handed = []
    node.add_handler(lambda targets: handed.append(targets.stamp))
    try:
        node.offer(body_frames[0])
        wait_for(lambda: len(handed) == 1, 'a solution')
        with context.handle:
            context.handle.shutdown()  # what rclpy's signal handler does
        frames = iter(body_frames[1:] * 50)

        def ended() -> bool:
            node.offer(next(frames))
            return not node._thread.is_alive()

        wait_for(ended, 'the solver thread to end')
    finally:
        node.destroy_node()
        context.try_shutdown()

    logged = capfd.readouterr().err
    assert 'ERROR' not in logged, logged


def test_placed_skeleton_markers_show_the_person_at_the_targets_coloured_by_engaged(
    solver_node, capture, helper_node, ros_context, body_frames
):
    """
    placed_skeleton_markers: base frame, the skeleton's stamp, the arms at the solver's targets.

    Grey until ``engaged`` is heard; green once trajectory_publisher's latched ``engaged`` says
    true (published before the solver listened: the latched value reaches it), red when false.
    """
    from pic_ros.correspondence.overlay import (
        arm_points,
        FOLLOW_COLOURS,
        FollowState,
        overlay_person,
    )
    from pic_ros.imitation import RobotImitator
    from pic_ros.robot import load_robot
    from pic_ros.ros.qos import LATCHED
    from pic_ros.solvers import SolverConfig
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import Bool

    node, _, _ = solver_node(robot='baxter')
    markers = capture(node, node._markers_publisher)
    frame = body_frames[0]
    node.handle_skeleton(frame)
    assert len(markers) == 1
    message = markers[0].message
    stamp = message.markers[0].header.stamp
    assert all(m.header.frame_id == 'base' for m in message.markers)
    assert all(m.header.stamp == stamp for m in message.markers)
    assert stamp.sec + stamp.nanosec * 1e-9 == pytest.approx(frame.stamp, abs=1e-9)
    step = RobotImitator(load_robot('baxter'), SolverConfig()).step(frame)
    expected = overlay_person(
        frame, {name: arm_points(arm.targets) for name, arm in step.arms.items()}
    )
    joints = message.markers[0]
    np.testing.assert_allclose(
        [(p.x, p.y, p.z) for p in joints.points],
        np.concatenate([expected.arms[name] for name in expected.arms]), atol=1e-12,
    )

    def colour(published) -> tuple[float, ...]:
        marker = published.message.markers[0]
        return (marker.color.r, marker.color.g, marker.color.b, marker.color.a)

    assert colour(markers[0]) == pytest.approx(FOLLOW_COLOURS[FollowState.UNKNOWN])
    engaged = helper_node.create_publisher(Bool, 'engaged', LATCHED)
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    try:
        for value, state in ((True, FollowState.ENGAGED), (False, FollowState.STOPPED)):
            engaged.publish(Bool(data=value))
            for _ in range(SPINS):  # bounded by a count of spins, each ends on an event or 10 ms
                executor.spin_once(timeout_sec=0.01)
                if node.follow_state is state:
                    break
            assert node.follow_state is state, f'engaged = {value} not heard in {SPINS} spins'
            node.handle_skeleton(frame)
            assert colour(markers[-1]) == pytest.approx(FOLLOW_COLOURS[state])
    finally:
        executor.remove_node(node)
        executor.shutdown(timeout_sec=1.0)
