"""
trajectory_publisher: joint targets in, one trajectory stream per arm controller out.

The node's wiring: topics and in-process targets, joint_states, the timer on the node's clock,
parameters and diagnostics, and the engagement over DDS (the services, the latched ``engaged``
topic, the ``estop`` topic). What the commands do (limits, tracking loss, pacing, braking when
disengaged) is tested on :class:`~pic_ros.motion.commander.ArmCommander` itself
(``test/test_commander.py``).
"""

from __future__ import annotations

import math
import threading
import time

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus
import numpy as np
from pic_ros.motion.commander import CommanderConfig, planned_limits
from pic_ros.motion.engagement import EngagementState
from pic_ros.motion.limiter import position_margin
from pic_ros.ros.conversions import joint_state_to_msg
from pic_ros.ros.sim_clock import take_newest_clock
from pic_ros.ros.trajectory_publisher_node import (
    EVERY_VALUE,
    LATCHED,
    TrajectoryPublisherNode,
)
from pic_ros.teleoperation import RobotTargets
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Empty, UInt32
from std_srvs.srv import Trigger

START = 100.0
"""Sim time at which every test starts [s]."""

EPSILON = 1e-9


def hand_targets(node, stamp, names, positions) -> None:
    """Hand joint targets to the node as the one-process teleop does (a RobotTargets)."""
    node.handle_targets(
        RobotTargets.from_joints(node.robot, float(stamp), dict(zip(names, positions)))
    )


@pytest.fixture
def streamer(make_node, capture, sim_clock):
    """
    Return a factory: ``(node, clock, published)``, published per arm, on sim time.

    The node starts engaged (``start_engaged``) unless told: these tests are about following;
    and without the collision guard (``self_collision_margin`` 0) unless told, as their targets
    are arbitrary poses: the guard has tests of its own here; and with ``plan_ahead`` fixed
    (``max_plan_ahead`` 0) unless told, as the test clock jumps by whole steps, which the delay
    allowance would measure as lateness: it has tests of its own here too.
    """

    def make(
        wait_for_joint_states: bool = False, start_engaged: bool = True,
        self_collision_margin: float = 0.0, max_plan_ahead: float = 0.0, **parameters,
    ):
        node = make_node(
            TrajectoryPublisherNode,
            {
                'robot': 'baxter',
                'use_sim_time': True,
                'wait_for_joint_states': wait_for_joint_states,
                'start_engaged': start_engaged,
                'self_collision_margin': self_collision_margin,
                'max_plan_ahead': max_plan_ahead,
                **parameters,
            },
        )
        clock = sim_clock(node)
        published = {
            name: capture(node, publisher) for name, (_, publisher) in node._groups.items()
        }
        clock.advance_to(START)
        return node, clock, published

    return make


def joint_names(node) -> list[str]:
    """Return every arm joint of the node's robot, arm after arm."""
    return [name for arm in node.robot.arms.values() for name in arm.joint_names]


def pose(node, per_arm) -> list[float]:
    """Concatenate one value array per arm (a function of the arm model) in joint_names order."""
    return [float(value) for arm in node.robot.arms.values() for value in per_arm(arm)]


def stream(node, clock, start, stop, period, target=None):
    """Advance the clock from start to stop by period, handing a target at each step if given."""
    for now in np.arange(start, stop, period):
        clock.advance_to(float(now))
        if target is not None:
            hand_targets(node, float(now), joint_names(node), target(float(now)))
    return float(now)


def seconds(stamp_or_duration) -> float:
    """Return a builtin Time or Duration in seconds."""
    return stamp_or_duration.sec + stamp_or_duration.nanosec * 1e-9


def command_index(message, time):
    """
    Return the index of a message's command: the point of the motion planned at its step.

    With ruckig the plan starts ``plan_ahead`` after the step, at a point after those that repeat
    the previous trajectory (a bridge); otherwise (the limiter, or a first chunk planned before
    any other) the command is the first point.
    """
    stamp = seconds(message.header.stamp)
    ahead = CommanderConfig().plan_ahead
    for index, point in enumerate(message.points):
        if index and abs(stamp + seconds(point.time_from_start) - (time + ahead)) < 1e-6:
            return index
    return 0


def command(item):
    """Return the command point of a captured message."""
    return item.message.points[command_index(item.message, item.time)]


def commands(published):
    """Return the times, positions and velocities of an arm's captured commands."""
    times = np.array([item.time for item in published])
    positions = np.array([command(item).positions for item in published])
    velocities = np.array([command(item).velocities for item in published])
    return times, positions, velocities


def groups(diagnostics, node) -> list[dict[str, str]]:
    """Return the statuses of the node's controllers (the engagement's left out)."""
    return [values for values in diagnostics(node) if 'controller' in values]


def state(diagnostics, node, arm_index=0) -> str:
    """Return the tracking state an arm reports."""
    return groups(diagnostics, node)[arm_index]['state']


def clock_setter(node, helper_node, wait_for):
    """
    Return ``reach(ns)``: make the node's clock read that time, as its executor would.

    A ``/clock`` message is published and applied (:func:`take_newest_clock`) until the node's
    clock reads it (bounded wait).
    """
    publisher = helper_node.create_publisher(Clock, '/clock', 10)

    def reach(nanoseconds_now: int) -> None:
        message = Clock(clock=Time(
            sec=nanoseconds_now // 1_000_000_000, nanosec=nanoseconds_now % 1_000_000_000
        ))

        def applied() -> bool:
            publisher.publish(message)
            take_newest_clock(node)
            return node.get_clock().now().nanoseconds == nanoseconds_now

        wait_for(applied, f'the node reading /clock = {nanoseconds_now} ns')

    return reach


def waving(streamer, helper_node, wait_for):
    """
    Return a node streaming arms that wave (engaged, sim time) and what drives it.

    :return: ``(node, clock, published, moving, reach)``: ``moving(t)`` the targets at ``t``,
        ``reach(ns)`` from :func:`clock_setter`.
    """
    node, clock, published = streamer(diagnostics_period=60.0)

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.3 * math.sin(2.0 * (now - START)))

    return node, clock, published, moving, clock_setter(node, helper_node, wait_for)


def holding_still(message) -> bool:
    """Return whether a message holds still: stamp 0 (on arrival), one point at rest."""
    return (
        seconds(message.header.stamp) == 0.0 and len(message.points) == 1
        and not np.any(message.points[0].velocities)
    )


def assert_safe(node, published, lead_time=0.05):
    """
    Check every captured command: its form and stamp, the position and velocity limits.

    A moving ruckig message streams its plan for ``lead_time`` after the command point, then
    brakes to rest (its tail) and holds that rest to its last point; a message holding still
    where the controller already is is stamped 0, one point at rest.
    """
    for name, items in published.items():
        arm = node.robot.groups[name]
        for item in items:
            message = item.message
            assert list(message.joint_names) == list(arm.joint_names)
            stamp = seconds(message.header.stamp)
            index = command_index(message, item.time)
            times = [seconds(point.time_from_start) for point in message.points]
            if holding_still(message):
                assert times == [pytest.approx(lead_time, abs=1e-9)]
                begins = 0.0
            elif index:  # a bridge from the previous trajectory, then the plan from the command
                assert item.time - lead_time - 1e-6 <= stamp <= item.time + 1e-6
                begins = seconds(message.points[index].time_from_start)
            else:  # planned for the step's time (a first ruckig plan: plan_ahead later, more
                # with a delay allowance, up to max_plan_ahead)
                ahead = stamp - item.time
                config = CommanderConfig()
                assert ahead == pytest.approx(0.0, abs=1e-6) or (
                    config.plan_ahead - 1e-6 <= ahead <= config.max_plan_ahead + 1e-6
                )
                begins = 0.0
            assert any(abs(time - begins - lead_time) < 1e-9 for time in times)
            if len(message.points) > 1:  # ruckig: ends at rest
                assert not np.any(message.points[-1].velocities)
            for point in message.points:  # the plan ahead (ruckig) or the command (limiter)
                assert np.all(np.array(point.positions) >= arm.lower - EPSILON)
                assert np.all(np.array(point.positions) <= arm.upper + EPSILON)
                assert np.all(np.abs(point.velocities) <= arm.velocity + EPSILON)
        if not items:
            continue
        times, positions, velocities = commands(items)
        # The first point is the command planned its time_from_start ahead: consecutive ones
        # differ by at most what the joints move in the time between plus twice that lead.
        ahead = np.array([
            seconds(item.message.header.stamp) + seconds(command(item).time_from_start) - item.time
            for item in items
        ])
        ahead = np.where([len(item.message.points) > 1 for item in items], ahead, 0.0)
        steps = np.abs(np.diff(positions, axis=0))
        between = np.maximum(np.diff(times), 0.0) + 2.0 * ahead[1:]
        allowed = arm.velocity * between[:, None] + EPSILON
        jumps = np.argwhere(steps > allowed)
        assert jumps.size == 0, f'{name}: steps beyond the velocity limits at {jumps.tolist()}'


def test_target_publishes_one_trajectory_per_arm_controller(streamer):
    """A target gives one JointTrajectory per controller: every joint, stamp 0, one point."""
    node, clock, published = streamer(lead_time=0.04)
    names = joint_names(node)

    hand_targets(node, START, names, pose(node, lambda arm: arm.neutral + 0.1))

    assert {name: len(items) for name, items in published.items()} == {
        'left': 1, 'right': 1, 'head': 0,
    }
    assert [publisher.topic_name for _, publisher in node._groups.values()] == [
        '/left_arm_controller/joint_trajectory', '/right_arm_controller/joint_trajectory',
        '/head_controller/joint_trajectory',
    ]
    assert_safe(node, published, lead_time=0.04)


def test_the_arms_are_published_before_the_head_is_stepped(streamer):
    """
    In a step that covers the arms and the head, the arms' chunks go out first.

    The head is stepped only once the arms' chunks are published (the collision guard needs
    the arms, not the head), so the arms' commands never wait for the head's planning.
    """
    node, clock, published = streamer()
    events: list[tuple[str, str]] = []
    for name, (commander, publisher) in node._groups.items():
        step, publish = commander.step, publisher.publish

        def logged_step(now, name=name, step=step):
            chunk = step(now)
            events.append(('made' if chunk is not None else 'none', name))
            return chunk

        def logged_publish(message, name=name, publish=publish):
            events.append(('publish', name))
            return publish(message)

        commander.step, publisher.publish = logged_step, logged_publish
    head = node.robot.head
    names = joint_names(node) + list(head.joint_names)
    for now in np.arange(START, START + 1.0, 0.02):
        clock.advance_to(float(now))
        swing = 0.3 * math.sin(2.0 * (now - START))
        values = pose(node, lambda arm, swing=swing: arm.neutral + swing)
        hand_targets(node, float(now), names, values + head.targets(0.3, 0.1).tolist())
    head_steps = [index for index, event in enumerate(events) if event[1] == 'head' != event[0]]
    assert len(head_steps) >= 50
    previous, checked = 0, 0
    for index in head_steps:
        block = events[previous:index]  # the arms' steps and publishes before this head step
        made = {name for kind, name in block if kind == 'made'}
        assert made <= {name for kind, name in block if kind == 'publish'}, block
        checked += bool(made)
        previous = index + 1
    assert checked >= 40
    assert len(published['head']) >= 50
    assert_safe(node, published)


@pytest.mark.parametrize('robot', ['tiago', 'yumi', 'nao'])
def test_head_and_gripper_targets_drive_their_own_controllers(streamer, robot):
    """
    Head and gripper joints in the targets go to their controllers, within their limits.

    A target that closes every gripper and turns the head streams, over 5 s, to each head and
    gripper controller; the gripper reaches its closed position; arms without targets stay
    unsent.
    """
    node, clock, published = streamer(robot=robot)
    robot_model = node.robot
    names: list[str] = []
    values: list[float] = []
    if robot_model.head is not None:
        names += robot_model.head.joint_names
        values += robot_model.head.targets(0.4, 0.2).tolist()
    for gripper in robot_model.grippers.values():
        names += gripper.joint_names
        values += gripper.targets(True).tolist()
    stream(node, clock, START, START + 3.0, 0.02,
           target=None)  # the clock runs; nothing sent without targets
    assert all(not items for items in published.values())
    for now in np.arange(START + 3.0, START + 8.0, 0.02):
        clock.advance_to(float(now))
        hand_targets(node, float(now), names, values)
    driven = {name for name, items in published.items() if items}
    expected = set(robot_model.groups) - set(robot_model.arms) - {'torso'}  # no torso target
    assert driven == expected
    assert_safe(node, published)
    for gripper in robot_model.grippers.values():
        last = published[gripper.group.name][-1].message.points[-1].positions
        group = gripper.group  # commands keep the position margin inside the limits
        margin = position_margin(group.lower, group.upper, group.velocity)
        closed = np.clip(gripper.targets(True), group.lower + margin, group.upper - margin)
        assert np.allclose(last, closed, atol=1e-6)


def test_nothing_is_sent_before_the_first_target(streamer):
    """Without targets the robot is not commanded, not even to the neutral pose."""
    node, clock, published = streamer()

    stream(node, clock, START, START + 0.5, 0.02)

    assert published == {'left': [], 'right': [], 'head': []}


def test_waits_for_joint_states_and_starts_from_them(streamer, diagnostics):
    """With wait_for_joint_states an arm is commanded once joint_states gave all its joints."""
    node, clock, published = streamer(wait_for_joint_states=True)
    names = joint_names(node)
    measured = {
        name: np.clip(arm.neutral + 0.3, arm.lower, arm.upper)
        for name, arm in node.robot.arms.items()
    }
    target = pose(node, lambda arm: arm.neutral - 0.2)
    stream(node, clock, START, START + 0.3, 1 / 30, lambda now: target)
    assert published == {'left': [], 'right': [], 'head': []}
    assert state(diagnostics, node) == 'waiting_for_joint_states'

    left = node.robot.arms['left']
    node._on_joint_states(joint_state_to_msg(0.0, left.joint_names, measured['left']))
    stream(node, clock, START + 0.3, START + 0.6, 1 / 30, lambda now: target)
    assert published['right'] == []
    right = node.robot.arms['right']
    node._on_joint_states(
        joint_state_to_msg(0.0, names, np.concatenate([measured['left'], measured['right']]))
    )
    stream(node, clock, START + 0.6, START + 0.9, 1 / 30, lambda now: target)

    for name, arm in (('left', left), ('right', right)):
        times, positions, _ = commands(published[name])
        assert len(times) > 0
        first_step = np.abs(positions[0] - measured[name])
        assert np.all(first_step <= arm.velocity * 1 / 30 + EPSILON)
    assert_safe(node, published)


def test_tracking_loss_holds_returns_to_neutral_and_blends_back(streamer, diagnostics):
    """Lost targets: hold, then neutral within limits; found again: blend in without a jump."""
    node, clock, published = streamer(hold_timeout=0.25, neutral_timeout=1.5, blend_time=0.5)

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.3 * math.sin(math.pi * (now - START)))

    last = stream(node, clock, START, START + 2.0, 1 / 30, moving)
    assert state(diagnostics, node) == 'tracking'
    stream(node, clock, last + 0.02, last + 1.4, 0.02)
    assert state(diagnostics, node) == 'holding'
    held = {name: commands(items) for name, items in published.items()}
    stream(node, clock, last + 1.4, last + 8.0, 0.02)
    assert state(diagnostics, node) == 'at_neutral'
    lost = {name: len(items) for name, items in published.items()}
    found = pose(node, lambda arm: np.clip(arm.neutral - 0.5, arm.lower, arm.upper))
    stream(node, clock, last + 8.0, last + 8.2, 1 / 30, lambda now: found)
    assert state(diagnostics, node) == 'blending'
    stream(node, clock, last + 8.2, last + 12.0, 1 / 30, lambda now: found)
    assert state(diagnostics, node) == 'tracking'

    assert_safe(node, published)
    for name, arm in node.robot.arms.items():
        times, positions, velocities = held[name]
        holding = times > last + 0.25 + 0.6  # braking from full speed takes at most 1/3 s
        assert np.all(positions[holding] == positions[-1])
        assert np.all(velocities[-1] == 0.0)
        neutral = command(published[name][lost[name] - 1])
        np.testing.assert_allclose(neutral.positions, arm.neutral, atol=1e-9)
        assert np.all(np.array(neutral.velocities) == 0.0)
        final = command(published[name][-1])
        margin = position_margin(arm.lower, arm.upper, arm.velocity)
        np.testing.assert_allclose(
            final.positions, np.clip(arm.neutral - 0.5, arm.lower + margin, arm.upper - margin),
            atol=1e-9,
        )
        # Commands never stop while targets are lost (a controller's cmd_timeout never fires).
        times = commands(published[name])[0]
        lost_times = times[(times > last) & (times < last + 8.0)]
        assert lost_times[0] <= last + 0.04 and lost_times[-1] >= last + 8.0 - 0.04
        assert np.max(np.diff(lost_times)) <= 0.02 + 0.02 + EPSILON


def test_non_finite_targets_are_ignored_and_counted(streamer, diagnostics):
    """A NaN target, handed over or on the topic, publishes nothing and is counted per arm."""
    node, clock, published = streamer()
    names = joint_names(node)
    target = pose(node, lambda arm: arm.neutral)
    target[3] = math.nan  # a left arm joint
    target[10] = math.inf  # a right arm joint
    hand_targets(node, START, names, target)
    clock.advance_to(START + 0.02)

    node._on_targets(joint_state_to_msg(START + 0.02, names, target))

    assert published == {'left': [], 'right': [], 'head': []}
    counts = [values['targets_rejected'] for values in groups(diagnostics, node)]
    assert counts == ['2', '2', '0']  # the head was not in the targets


def test_joint_targets_with_mismatched_lengths_are_dropped(streamer, diagnostics):
    """A JointState whose names and positions differ in length is dropped before any arm."""
    node, clock, published = streamer()

    node._on_targets(JointState(name=joint_names(node), position=[0.0]))

    assert published == {'left': [], 'right': [], 'head': []}
    assert [values['targets_received'] for values in groups(diagnostics, node)] == ['0', '0', '0']


@pytest.mark.parametrize(
    ('parameter', 'reason'),
    [
        (Parameter('neutral_timeout', value=0.1), 'neutral_timeout must be in [0.25, 3600.0], '
                                                  'got 0.1'),
        (Parameter('hold_timeout', value=5.0), 'neutral_timeout must be in [5.0, 3600.0], '
                                               'got 3.0'),
        (Parameter('acceleration_scale', value=200.0),
         'Parameter acceleration_scale out of range Min: 0.01, Max: 1.0, value: 200.0'),
        (Parameter('robot', value='yumi'), 'Trying to set a read-only parameter: robot.'),
    ],
)
def test_invalid_parameter_value_is_refused_with_its_reason(streamer, parameter, reason):
    """An invalid set request fails with the reason; the timing stays as it was."""
    node, _, _ = streamer()

    result = node.set_parameters([parameter])[0]

    assert not result.successful
    assert result.reason == reason
    assert node._groups['left'][0].config.tracking.neutral_timeout == 3.0


def test_parameter_change_keeps_tracking_and_the_command(streamer, diagnostics):
    """New limits and timing apply at once; the state and the commanded motion carry on."""
    node, clock, published = streamer(blend_time=0.2)
    far = pose(node, lambda arm: arm.lower + 0.1 * (arm.upper - arm.lower))
    last = stream(node, clock, START, START + 0.5, 1 / 30, lambda now: far)
    assert state(diagnostics, node) == 'tracking'
    commander = node._groups['left'][0]
    position = commander.position.copy()

    results = node.set_parameters(
        [Parameter('acceleration_scale', value=0.5), Parameter('hold_timeout', value=0.5)]
    )

    assert all(result.successful for result in results)
    assert commander.config.acceleration_scale == 0.5
    np.testing.assert_array_equal(commander.position, position)
    assert commander.config.tracking.hold_timeout == 0.5
    stream(node, clock, last + 1 / 30, last + 0.5, 1 / 30, lambda now: far)
    assert state(diagnostics, node) == 'tracking'
    assert_safe(node, published)


def test_slow_targets_still_get_a_steady_command_stream(streamer):
    """
    Targets at 10 Hz: the timer keeps commands going at the node's rate in between.

    Each tick steps but the last before a target is due, left to that target (ruckig).
    """
    node, clock, published = streamer(rate=50.0)
    names = joint_names(node)
    far = pose(node, lambda arm: arm.lower + 0.1 * (arm.upper - arm.lower))

    for tick in range(100):  # one second in 10 ms steps, a target every 100 ms
        now = START + 0.01 * tick
        clock.advance_to(now)
        if tick % 10 == 0:
            hand_targets(node, now, names, far)

    assert_safe(node, published)
    times = commands(published['left'])[0]
    assert len(times) >= 40
    assert np.max(np.diff(times)) <= 0.04 + EPSILON


def test_clock_going_back_starts_tracking_over(streamer, diagnostics):
    """After a replay loop (sim time jumps back) targets are accepted again, not stale."""
    node, clock, published = streamer()
    target = pose(node, lambda arm: arm.neutral + 0.2)
    stream(node, clock, START, START + 1.0, 1 / 30, lambda now: target)
    before = {name: len(items) for name, items in published.items()}

    other = pose(node, lambda arm: arm.neutral - 0.2)
    stream(node, clock, 10.0, 12.0, 1 / 30, lambda now: other)

    assert [values['targets_rejected'] for values in groups(diagnostics, node)] == [
        '0', '0', '0'
    ]
    assert state(diagnostics, node) == 'tracking'
    for name, arm in node.robot.arms.items():
        np.testing.assert_allclose(
            command(published[name][-1]).positions, arm.neutral - 0.2, atol=1e-9
        )
    assert_safe(node, {name: items[:before[name]] for name, items in published.items()})
    assert_safe(node, {name: items[before[name]:] for name, items in published.items()})


# Engagement over DDS: the services, the latched topic, the emergency stop ----------------------


DDS_WAIT = 30.0
"""Longest wall time the engagement tests wait for DDS (discovery, a delivery, an answer) [s]."""


@pytest.fixture
def dds(helper_node, ros_context, wait_for):
    """
    Return the test's side of DDS: ``call(clock, node, service)``, ``publish(topic, data)``.

    The helper node is spun by an executor of its own (the node under test by its sim clock);
    every wait is bounded (:data:`DDS_WAIT`: generous, for a loaded machine).
    """
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(helper_node)

    class Side:
        node = helper_node

        @staticmethod
        def spin(clock, now):
            """Spin the node (at sim time ``now``) and the helper once each."""
            clock.advance_to(now)
            executor.spin_once(timeout_sec=0.002)

        @staticmethod
        def spin_until(clock, now, condition, what):
            """Spin both, the sim clock held at ``now``, until a condition holds (bounded)."""
            wait_for(lambda: Side.spin(clock, now) or condition(), what, DDS_WAIT)

        @staticmethod
        def call(clock, node, service, now):
            """Call one of the node's Trigger services over DDS; return the response."""
            client = helper_node.create_client(Trigger, f'{node.get_name()}/{service}')
            assert client.wait_for_service(timeout_sec=DDS_WAIT), service
            future = client.call_async(Trigger.Request())
            Side.spin_until(clock, now, future.done, f'{service} to answer')
            helper_node.destroy_client(client)
            return future.result()

        @staticmethod
        def publisher(node, topic, message_type, qos=EVERY_VALUE):
            """Make a publisher of the test matched with the node's subscription."""
            publisher = helper_node.create_publisher(message_type, topic, qos)
            wait_for(
                lambda: publisher.get_subscription_count() > 0, f'the node on {topic}', DDS_WAIT
            )
            return publisher

        @staticmethod
        def latched(clock, now):
            """Subscribe ``engaged`` now (a late subscriber); return the values it receives."""
            received = []
            helper_node.create_subscription(
                Bool, 'engaged', lambda message: received.append(message.data), LATCHED
            )
            Side.spin_until(clock, now, lambda: received, 'the latched engaged value')
            return received

    yield Side
    executor.shutdown(timeout_sec=1.0)


def engagement_status(diagnostics, node) -> dict[str, str]:
    """Return the node's engagement status."""
    return [values for values in diagnostics(node) if 'controller' not in values][0]


def brake_bound(node, arm, velocity, period):
    """
    Return how long the command may take to stand still after a stop, from the limits [s].

    The stop takes effect at its step; ruckig's brake plan starts ``plan_ahead`` later from a
    state at most ``period`` of full acceleration faster, and brakes within ``v / a + 3 a / j``
    (turn the acceleration round, brake, release it); the standstill shows at the next step.
    """
    config = node._groups[arm][0].config
    limits = planned_limits(node.robot.groups[arm], config)
    speed = np.minimum(np.abs(velocity) + limits.acceleration * period, limits.velocity)
    braking = speed / limits.acceleration + 3.0 * limits.acceleration / limits.jerk
    return period + config.plan_ahead + float(np.max(braking)) + period


def test_starts_disengaged_and_commands_nothing_while_targets_stream(
    streamer, diagnostics, dds
):
    """
    Without start_engaged the robot is never commanded, however the person moves.

    A minute of a person moving (simulated time, 30 targets a second): targets are taken and
    counted, nothing is published; the arms report ``disengaged``; the engagement status says
    why; a late subscriber of ``engaged`` reads false.
    """
    node, clock, published = streamer(start_engaged=False)

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.4 * math.sin(2.0 * (now - START)))

    last = stream(node, clock, START, START + 60.0, 1 / 30, moving)

    assert published == {'left': [], 'right': [], 'head': []}
    assert node.engagement is EngagementState.DISENGAGED
    arms = groups(diagnostics, node)
    assert [values['state'] for values in arms] == ['disengaged'] * 3
    assert [values['targets_received'] for values in arms] == ['1800', '1800', '0']
    status = engagement_status(diagnostics, node)
    assert status['state'] == 'disengaged' and status['source'] == 'parameter'
    assert status['reason'] == (
        'started disengaged: the robot holds still until an operator engages it'
    )
    assert dds.latched(clock, last) == [False]


def test_engage_and_disengage_services_answer_and_drive_the_arms(streamer, diagnostics, dds):
    """
    ~/engage: success, the arms blend in from where they are; ~/disengage: they brake and hold.

    Each response says what happened; a repeated engage says it already was; the engagement
    status has the last transition's reason and source.
    """
    node, clock, published = streamer(start_engaged=False)
    target = pose(node, lambda arm: arm.neutral + 0.3)
    last = stream(node, clock, START, START + 0.5, 1 / 30, lambda now: target)
    assert all(not items for items in published.values())

    engaged = dds.call(clock, node, 'engage', last)
    again = dds.call(clock, node, 'engage', last)

    assert (engaged.success, engaged.message) == (True, 'engaged by service')
    assert (again.success, again.message) == (True, 'already engaged')
    assert node.engagement is EngagementState.ENGAGED
    last = stream(node, clock, last + 1 / 30, last + 3.0, 1 / 30, lambda now: target)
    for name, arm in node.robot.arms.items():
        times, positions, velocities = commands(published[name])
        assert len(times) > 50
        margin = position_margin(arm.lower, arm.upper, arm.velocity)
        assert np.all(np.abs(positions[0] - np.clip(arm.neutral, arm.lower + margin,
                                                    arm.upper - margin)) <= arm.velocity / 30)
        np.testing.assert_allclose(positions[-1], arm.neutral + 0.3, atol=1e-9)
    sent = {name: len(items) for name, items in published.items()}

    disengaged = dds.call(clock, node, 'disengage', last)

    assert (disengaged.success, disengaged.message) == (True, 'disengaged by service')
    other = pose(node, lambda arm: arm.neutral - 0.3)
    stream(node, clock, last + 1 / 30, last + 2.0, 1 / 30, lambda now: other)
    for name in node.robot.arms:
        times, positions, velocities = commands(published[name][sent[name]:])
        assert len(times) > 50  # held, not silent: a controller's timeout never fires
        np.testing.assert_allclose(positions, positions[-1:].repeat(len(times), 0), atol=1e-12)
        assert np.all(velocities == 0.0)
    assert_safe(node, published)
    status = engagement_status(diagnostics, node)
    assert (status['state'], status['source']) == ('disengaged', 'service')
    assert status['reason'] == 'disengaged by service'


def test_the_engaged_topic_is_latched_for_a_late_subscriber(streamer, dds, capture):
    """A subscriber that comes after the engage reads true at once: one value, the current."""
    node, clock, _ = streamer(start_engaged=False)
    changes = capture(node, node._engaged_publisher)

    dds.call(clock, node, 'engage', START)
    clock.advance_to(START + 0.1)

    assert [item.message.data for item in changes] == [True]
    assert dds.latched(clock, START + 0.1) == [True]


def test_estop_while_moving_brakes_within_limits_and_refuses_engage_until_reset(
    streamer, diagnostics, dds
):
    """
    An e-stop while following a fast person: standstill within the braking time, then held.

    The bound comes from the planned limits and the velocity when the stop came (sim time);
    every command stays inside the velocity and acceleration limits. ~/engage is refused while
    stopped, ~/reset_estop too while the input is still true; released and reset, the robot is
    disengaged (it does not move) until ~/engage.
    """
    node, clock, published = streamer(start_engaged=True)
    estop = dds.publisher(node, 'estop', Bool)
    period = 0.02

    def fast(now):
        return pose(node, lambda arm: arm.neutral + 0.6 * math.sin(3.0 * (now - START)))

    last = stream(node, clock, START, START + 2.0, period, fast)
    velocity = {name: node._groups[name][0].velocity.copy() for name in node.robot.arms}
    assert max(np.max(np.abs(v) / node.robot.arms[n].velocity) for n, v in velocity.items()) > 0.3
    sent = {name: len(items) for name, items in published.items()}

    estop.publish(Bool(data=True))
    dds.node.get_logger().info('emergency stop sent')
    dds.spin_until(  # the node reads it at this sim time
        clock, last, lambda: node.engagement is EngagementState.ESTOPPED, 'the stop'
    )
    stream(node, clock, last + period, last + 2.5, period, fast)

    assert_safe(node, published)
    for name, arm in node.robot.arms.items():
        items = published[name][sent[name]:]
        times, positions, velocities = commands(items)
        still = np.all(velocities == 0.0, axis=1)
        assert still.any(), f'{name} never stood still'
        stopped_at = times[np.argmax(still)]
        bound = brake_bound(node, name, velocity[name], period)
        assert stopped_at - last <= bound, f'{name}: still after {stopped_at - last:.3f} s'
        assert np.all(still[times >= stopped_at])
        assert np.all(positions[times >= stopped_at] == positions[-1])
        for item in items:
            for point in item.message.points:
                assert np.all(np.abs(point.accelerations) <= arm.acceleration + 1e-9)

    refused = dds.call(clock, node, 'engage', last + 2.5)
    not_yet = dds.call(clock, node, 'reset_estop', last + 2.5)
    assert (refused.success, refused.message) == (
        False, 'refused: the emergency stop is latched; reset it first'
    )
    assert (not_yet.success, not_yet.message) == (
        False, 'refused: the emergency stop input is still set; release it first'
    )
    status = engagement_status(diagnostics, node)
    assert (status['state'], status['estop_input']) == ('estopped', 'True')
    assert status['reason'] == 'emergency stop set by topic'
    assert status['requests_refused'] == '2'

    estop.publish(Bool(data=False))
    dds.spin_until(
        clock, last + 2.5, lambda: not node._engagement.estop_input, 'the released input'
    )
    reset = dds.call(clock, node, 'reset_estop', last + 2.5)
    assert (reset.success, reset.message) == (
        True, 'emergency stop reset by service; disengaged until engaged again'
    )
    assert node.engagement is EngagementState.DISENGAGED
    held = {name: len(items) for name, items in published.items()}
    stream(node, clock, last + 2.5, last + 3.5, period, fast)
    for name in node.robot.arms:
        assert np.all(commands(published[name][held[name]:])[2] == 0.0)  # not re-engaged
    assert dds.call(clock, node, 'engage', last + 3.5).success


def test_estop_flapping_at_1_khz_over_dds_latches_on_the_first_true(streamer, diagnostics, dds):
    """
    A stop input flapping at 1 kHz for 1 s: latched from its first true, whatever follows.

    Nothing moves (the robot was disengaged); every value reaches the node (reliable, every
    value kept); a reset is refused while the last value is true and accepted once it is
    false, leaving the robot disengaged.
    """
    node, clock, published = streamer(start_engaged=False)
    estop = dds.publisher(node, 'estop', Bool)
    target = pose(node, lambda arm: arm.neutral + 0.2)
    hand_targets(node, START, joint_names(node), target)

    values = [index % 3 == 2 for index in range(998)] + [False, True]  # first and last true
    for value in values:
        estop.publish(Bool(data=value))
        time.sleep(0.001)
    dds.spin_until(  # every value reaches the node
        clock, START, lambda: node._engagement.estop_inputs == len(values), 'every stop value'
    )

    assert node.engagement is EngagementState.ESTOPPED
    status = engagement_status(diagnostics, node)
    assert status['reason'] == 'emergency stop set by topic' and status['estop_input'] == 'True'
    assert not dds.call(clock, node, 'reset_estop', START).success
    assert not dds.call(clock, node, 'engage', START).success
    assert published == {'left': [], 'right': [], 'head': []}

    estop.publish(Bool(data=False))
    dds.spin_until(clock, START, lambda: not node._engagement.estop_input, 'the released input')
    reset = dds.call(clock, node, 'reset_estop', START)
    assert (reset.success, node.engagement) == (True, EngagementState.DISENGAGED)
    assert published == {'left': [], 'right': [], 'head': []}


def test_another_person_on_the_person_topic_disengages_and_the_arms_brake_and_hold(
    streamer, diagnostics, dds
):
    """
    Engaged from the start, following person 1 (latched ``person``); person 2 comes.

    The robot is disengaged at once, says why (a warning and the engagement status), brakes
    within the limits and holds while the new person's targets keep coming; ~/engage follows
    person 2.
    """
    node, clock, published = streamer(start_engaged=True)
    person = dds.publisher(node, 'person', UInt32, qos=LATCHED)
    person.publish(UInt32(data=1))
    dds.spin_until(clock, START, lambda: node._engagement.person == 1, 'person 1')
    period = 0.02

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.5 * math.sin(2.0 * (now - START)))

    last = stream(node, clock, START, START + 1.5, period, moving)
    sent = {name: len(items) for name, items in published.items()}

    person.publish(UInt32(data=2))
    dds.spin_until(
        clock, last, lambda: node.engagement is EngagementState.DISENGAGED, 'the other person'
    )
    stream(node, clock, last + period, last + 4.0, period, moving)

    assert_safe(node, published)
    for name in node.robot.arms:
        times, positions, velocities = commands(published[name][sent[name]:])
        still = np.all(velocities == 0.0, axis=1)
        assert still[-1] and np.all(positions[times >= times[np.argmax(still)]] == positions[-1])
    status = engagement_status(diagnostics, node)
    assert (status['state'], status['source'], status['person']) == (
        'disengaged', 'tracker', '1'
    )
    assert status['reason'] == (
        'disengaged: another person (number 2) was taken up; engage again to follow them'
    )
    assert dds.call(clock, node, 'engage', last + 4.0).success
    assert node._engagement.person == 2


def test_the_engage_gesture_topic_engages_unless_estopped(streamer, dds):
    """engage_gesture (solver_node's) engages like ~/engage, and is refused while stopped."""
    node, clock, _ = streamer(start_engaged=False)
    gesture = dds.publisher(node, 'engage_gesture', Empty, qos=10)

    gesture.publish(Empty())
    dds.spin_until(
        clock, START, lambda: node.engagement is EngagementState.ENGAGED, 'the gesture request'
    )
    assert node._engagement.last_transition.reason == 'engaged by gesture'

    node._on_estop(Bool(data=True))
    assert not node.engage_by_gesture().accepted
    assert node.engagement is EngagementState.ESTOPPED


def test_the_guard_brakes_arms_sent_into_each_other_and_says_so(streamer, diagnostics):
    """
    Targets that cross Baxter's arms (a solver gone wrong): the guard brakes them.

    The streamed commands never bring two links' capsules together, and the guard's refusals are
    on ``/diagnostics``.
    """
    node, clock, published = streamer(self_collision_margin=-1.0)

    def crossing(now):
        share = min((now - START) / 1.5, 1.0)
        return pose(node, lambda arm: np.clip(
            arm.neutral + share * np.array([-1.2 if arm.side.value == 'left' else 1.2, 0.6, 0.0,
                                            0.0, 0.0, 0.0, 0.0]),
            arm.lower, arm.upper,
        ))

    stream(node, clock, START, START + 4.0, 1 / 30, crossing)
    values = next(
        status for status in diagnostics(node) if status.get('steps_checked') is not None
    )
    assert int(values['chunks_refused']) > 0
    model = node.robot.collision
    for index in range(len(published['left'])):
        arms = {
            name: command(published[name][min(index, len(published[name]) - 1)]).positions
            for name in node.robot.arms
        }
        assert model.check(model.vector(arms)).minimum > -5e-3  # the capsules never overlap
    # another margin: a new guard, the counts on /diagnostics still since the node started
    assert node.set_parameters([Parameter('self_collision_margin', value=0.05)])[0].successful
    after = next(
        status for status in diagnostics(node) if status.get('steps_checked') is not None
    )
    assert (after['steps_checked'], after['chunks_refused']) == (
        values['steps_checked'], values['chunks_refused']
    )
    assert after['self_collision_margin_m'] == '0.05'
    assert after['closest_last_step_m'] == 'n/a'


def test_a_stall_shows_on_the_diagnostics_and_the_stream_stays_within_the_limits(streamer):
    """
    No step for 0.5 s while the arms move (a starved node): WARN with the stall, no fault.

    The controller brakes on the last chunk's tail meanwhile; the next chunk starts where the
    tail took it, so every chunk sent keeps the limits (``segment_violations`` 0). The next
    report, without a new stall, is OK again. (The node's own reports are a minute apart
    here: the test reads them.)
    """
    node, clock, published = streamer(diagnostics_period=60.0)

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.4 * math.sin(2.0 * (now - START)))

    last = stream(node, clock, START, START + 1.0, 0.02, moving)
    stream(node, clock, last + 0.5, last + 1.5, 0.02, moving)
    status = next(item for item in node._statuses() if item.name.endswith(' left'))
    assert status.level == DiagnosticStatus.WARN and 'run out' in status.message
    left = {item.key: item.value for item in status.values}
    assert int(left['stalls']) >= 1
    assert float(left['step_gap_max [ms]']) == pytest.approx(500.0, abs=1.0)
    assert left['segment_violations'] == '0' and float(left['segment_peak']) <= 1.0
    stream(node, clock, last + 1.5, last + 2.0, 0.02, moving)
    again = next(item for item in node._statuses() if item.name.endswith(' left'))
    assert again.level == DiagnosticStatus.OK
    assert_safe(node, published)


@pytest.mark.parametrize('step', ['timer', 'joint_targets'])
def test_a_step_after_a_stall_stamps_its_chunks_with_the_newest_clock_waiting(
    streamer, helper_node, wait_for, step
):
    """
    The simulation's clock ran 0.1 s on while nothing spun the node (a starved process).

    rclpy's executor runs a due timer (or a ready subscription) before the ``/clock`` waiting
    for the node; the step takes that ``/clock`` first, so its chunk is made and stamped in the
    simulation's present, not at the time before the stall (which a controller would take as
    0.1 s in transit, past the chunk's bridge). The callback is called here with nothing
    spinning the node, until ``/clock`` reached it.
    """
    node, clock, published = streamer()

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.3 * math.sin(2.0 * (now - START)))

    last = round(stream(node, clock, START, START + 0.5, 0.02, moving) * 1e9)
    later = last + 100_000_000
    publisher = helper_node.create_publisher(Clock, '/clock', 10)
    message = Clock(clock=Time(sec=later // 1_000_000_000, nanosec=later % 1_000_000_000))
    sent = len(published['left'])

    def stepped() -> bool:
        publisher.publish(message)
        if step == 'timer':
            node._on_timer()
        else:
            target = moving(later * 1e-9)
            node._on_targets(joint_state_to_msg(later * 1e-9, joint_names(node), target))
        return node.get_clock().now().nanoseconds == later

    wait_for(stepped, f'a {step} step of the node reading the newest /clock')
    chunk = published['left'][-1]
    assert len(published['left']) > sent and chunk.time == pytest.approx(later * 1e-9, abs=1e-9)
    assert nanoseconds(chunk.message.header.stamp) > last  # made after the stall, not before


def test_targets_handed_over_on_sim_time_wait_for_the_executor_and_its_newest_clock(
    streamer, helper_node, wait_for, diagnostics
):
    """
    ``teleop``'s solver thread hands the targets over; on simulated time nothing steps there.

    The simulation's clock ran 0.1 s on while the executor was busy. The solver thread may not
    apply a ``/clock``; the executor's thread (the guard condition's callback, called here as the
    executor calls it, until ``/clock`` reached the node) takes the newest ``/clock`` first, then
    the newest targets: the chunk is made and stamped in the simulation's present. Targets
    replaced while they waited are counted, and a spinning executor takes what waits.
    """
    node, clock, published = streamer()
    names = joint_names(node)

    def targets(seconds):
        values = pose(node, lambda arm: arm.neutral + 0.3 * math.sin(2.0 * (seconds - START)))
        return RobotTargets.from_joints(node.robot, seconds, dict(zip(names, values)))

    last = round(stream(node, clock, START, START + 0.5, 0.02, lambda now: [
        targets(now).positions[names.index(name)] for name in names
    ]) * 1e9)
    later = last + 100_000_000
    sent = len(published['left'])
    solver = threading.Thread(
        target=lambda: [node.hand_over_targets(targets(last * 1e-9 + k * 0.01)) for k in (1, 2)]
    )
    solver.start()
    solver.join(timeout=60.0)
    assert not solver.is_alive()
    assert len(published['left']) == sent  # nothing stepped in the solver's thread
    assert groups(diagnostics, node)[0]['targets_superseded'] == '1'
    publisher = helper_node.create_publisher(Clock, '/clock', 10)
    message = Clock(clock=Time(sec=later // 1_000_000_000, nanosec=later % 1_000_000_000))

    def taken() -> bool:
        publisher.publish(message)
        node.hand_over_targets(targets(later * 1e-9))
        node._take_waiting_targets()  # the executor's call when the guard condition fires
        return node.get_clock().now().nanoseconds == later

    wait_for(taken, 'the handed-over targets taken after the newest /clock')
    chunk = published['left'][-1]
    assert len(published['left']) > sent and chunk.time == pytest.approx(later * 1e-9, abs=1e-9)
    assert nanoseconds(chunk.message.header.stamp) > last  # made after the stall, not before
    node.hand_over_targets(targets(later * 1e-9 + 0.02))
    clock.advance_to(later * 1e-9 + 0.02)  # spins the node: the executor takes them
    assert node._waiting is None
    assert_safe(node, published)


def test_targets_handed_over_on_the_system_clock_are_stepped_in_the_callers_thread(make_node):
    """On the system clock the hand-over is the shortest way: the caller's thread steps at once."""
    node = make_node(TrajectoryPublisherNode, {
        'robot': 'baxter', 'wait_for_joint_states': False, 'start_engaged': True,
        'self_collision_margin': 0.0,
    })
    commander = node._groups['left'][0]
    names = joint_names(node)
    values = pose(node, lambda arm: arm.neutral)
    node.hand_over_targets(
        RobotTargets.from_joints(node.robot, time.time(), dict(zip(names, values)))
    )
    assert commander.published == 1 and node._waiting is None  # nothing spun the node


def test_chunks_whose_publishing_ended_after_their_plans_start_are_counted(
    streamer, helper_node, wait_for
):
    """
    The node made its chunks in time, then waited 0.2 s for the CPU inside a publish call.

    The check before publishing could not see it; the clock read again once the publish calls
    returned does: every stamped chunk of the step reached the middleware after its plan's
    start (its controller joins it), counted per controller (``chunks_sent_late``, WARN on
    ``/diagnostics``). Nothing is made again: the chunks are out.
    """
    node, clock, published, moving, reach = waving(streamer, helper_node, wait_for)
    last = round(stream(node, clock, START, START + 1.0, 0.02, moving) * 1e9)
    step, later = last + 30_000_000, last + 230_000_000
    left = node._groups['left'][1]
    capturing = left.publish
    calls = []

    def waited(message) -> None:
        capturing(message)
        calls.append(message)
        if len(calls) == 1:
            reach(later)  # the scheduler gave the thread no CPU for 0.2 s inside the call

    left.publish = waited
    sent = {name: len(items) for name, items in published.items()}
    reach(step)
    node._on_targets(joint_state_to_msg(step * 1e-9, joint_names(node), moving(step * 1e-9)))
    left.publish = capturing
    for name in ('left', 'right'):  # the arms the targets cover: sent once, as made
        new = published[name][sent[name]:]
        assert len(new) == 1 and nanoseconds(new[0].message.header.stamp) <= step
    reports = {item.name.rsplit(' ', 1)[-1]: item for item in node._statuses()}
    for name in ('left', 'right'):
        values = {value.key: value.value for value in reports[name].values}
        assert values['chunks_sent_late'] == '1' and values['chunks_withdrawn_late'] == '0'
        assert 'waited for the CPU while publishing' in reports[name].message


def test_a_step_starved_before_it_could_publish_is_made_again_at_the_present(
    streamer, helper_node, wait_for, diagnostics
):
    """
    The node read its clock and made its chunks, then was starved for 0.2 s before publishing.

    Published then, the chunks would reach the controllers after the start of their plans
    (joined, not continued). The node reads its clock again just before publishing: the
    chunks are withdrawn and the step made again at the present, once, from what the
    controllers were last sent; counted on ``/diagnostics`` (WARN). Every message sent is
    stamped for the time it is published and the stream keeps the limits.
    """
    node, clock, published, moving, reach = waving(streamer, helper_node, wait_for)
    last = round(stream(node, clock, START, START + 1.0, 0.02, moving) * 1e9)
    step, later = last + 30_000_000, last + 230_000_000
    made = node._step_chunks
    steps = []

    def starved(now, names):
        chunks = made(now, names)
        steps.append(round(now * 1e9))
        if len(steps) == 1:
            reach(later)  # the scheduler gave the process no CPU for 0.2 s
        return chunks

    node._step_chunks = starved
    sent = {name: len(items) for name, items in published.items()}
    reach(step)
    node._on_targets(joint_state_to_msg(step * 1e-9, joint_names(node), moving(step * 1e-9)))
    assert steps == [step, later]
    for name in ('left', 'right'):  # the arms the targets cover
        new = published[name][sent[name]:]
        assert len(new) == 1 and new[0].time == pytest.approx(later * 1e-9, abs=1e-9)
        assert nanoseconds(new[0].message.header.stamp) > step  # made at the present
    status = groups(diagnostics, node)[0]
    assert status['chunks_withdrawn_late'] == '1'
    node._step_chunks = made
    stream(node, clock, later * 1e-9 + 0.02, later * 1e-9 + 1.0, 0.02, moving)
    assert_safe(node, published)
    for item in node._statuses():
        values = {value.key: value.value for value in item.values}
        if 'segment_violations' in values:
            assert values['segment_violations'] == '0', item.name


def test_the_delay_of_joint_states_is_reported(streamer, diagnostics):
    """joint_states stamped 80 ms before this node's clock: a delay of 80 ms on the report."""
    node, clock, _ = streamer(diagnostics_period=60.0)
    names = joint_names(node)
    node._on_joint_states(joint_state_to_msg(START - 0.08, names, pose(node, lambda a: a.neutral)))
    assert float(groups(diagnostics, node)[0]['joint_states_delay_max [ms]']) == pytest.approx(
        80.0, abs=0.5
    )
    assert float(groups(diagnostics, node)[0]['joint_states_delay_max [ms]']) == 0.0


def test_late_steps_and_old_joint_states_raise_plan_ahead_up_to_its_maximum(streamer) -> None:
    """
    A timer 40 ms late, then joint_states 0.5 s old: the plans start that much later, capped.

    The timer is late by what the clock jumps beyond its period (the test clock, sim time);
    twice the lateness (this process and the controller's), or the age of joint_states, is
    added to ``plan_ahead`` up to ``max_plan_ahead``, shown on ``/diagnostics``; the stream keeps
    the limits throughout, and without new delays the allowance falls back after its memory.
    """
    node, clock, published = streamer(diagnostics_period=60.0, max_plan_ahead=0.12)
    config = CommanderConfig()

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.3 * math.sin(2.0 * (now - START)))

    def plan_ahead() -> float:
        status = next(item for item in node._statuses() if item.name.endswith(' left'))
        return float({item.key: item.value for item in status.values}['plan_ahead [ms]'])

    last = stream(node, clock, START, START + 1.0, 0.02, moving)
    assert plan_ahead() == pytest.approx(1e3 * config.plan_ahead, abs=0.1)
    last = stream(node, clock, last + 0.06, last + 0.3, 0.06, moving)  # 40 ms late each
    assert plan_ahead() == pytest.approx(1e3 * config.plan_ahead + 80.0, abs=1.0)
    names = joint_names(node)
    node._on_joint_states(joint_state_to_msg(last - 0.07, names, pose(node, lambda a: a.neutral)))
    node._on_joint_states(joint_state_to_msg(last - 0.5, names, pose(node, lambda a: a.neutral)))
    last = stream(node, clock, last + 0.02, last + 0.03, 0.02, moving)  # the next step uses it
    assert plan_ahead() == pytest.approx(1e3 * config.max_plan_ahead, abs=0.1)
    last = stream(node, clock, last + 0.02, last + 6.0, 0.02, moving)
    assert plan_ahead() == pytest.approx(1e3 * config.plan_ahead, abs=0.1)
    assert published['left'] and published['right']
    for status in node._statuses():  # every chunk as the controller takes it, and its seam
        values = {item.key: item.value for item in status.values}
        if 'segment_violations' in values:
            assert values['segment_violations'] == '0', status.name
            assert float(values['segment_peak']) <= 1.0, status.name


def nanoseconds(stamp_or_duration) -> int:
    """Return a builtin Time or Duration in whole nanoseconds."""
    return stamp_or_duration.sec * 1_000_000_000 + stamp_or_duration.nanosec


def test_on_a_wall_clock_each_bridge_repeats_the_points_sent_on_their_nanosecond(streamer):
    """
    At wall-clock times (about 1.8e9 s) every chunk's bridge repeats the last chunk's points.

    Floats there are 238 ns apart: a node timing its plans on them put a repeated point up to
    about 119 ns off the point it repeats, a segment between two views of one state that a
    controller's quintic turns into a large acceleration. The node counts from an origin of
    its own and stamps on the nanosecond: same nanosecond, same state.
    """
    node, clock, published = streamer()
    epoch = 1_795_922_741.0 + 1.0 / 3.0

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.4 * math.sin(2.0 * (now - epoch)))

    stream(node, clock, epoch, epoch + 1.0, 0.02, moving)
    compared = 0
    for items in published.values():
        for before, after in zip(items, items[1:]):
            earlier, later = before.message, after.message
            if not nanoseconds(earlier.header.stamp) or not nanoseconds(later.header.stamp):
                continue
            sent = {
                nanoseconds(earlier.header.stamp) + nanoseconds(point.time_from_start): point
                for point in earlier.points
            }
            for point in later.points[:command_index(later, after.time)]:
                if not any(point.velocities):
                    continue  # a rest (the step's, when at rest): exact wherever it is
                at = nanoseconds(later.header.stamp) + nanoseconds(point.time_from_start)
                assert at in sent, 'a bridge point off the point it repeats'
                np.testing.assert_allclose(
                    point.positions, sent[at].positions, rtol=1e-13, atol=1e-13
                )
                np.testing.assert_allclose(
                    point.velocities, sent[at].velocities, rtol=1e-13, atol=1e-13
                )
                compared += 1
    assert compared > 50
    assert_safe(node, published)


def test_a_move_to_the_start_is_sent_when_the_rest_of_its_step_is_made_again(streamer):
    """
    The right arm starts while the left one streams, in a step starved before it could publish.

    The left arm's chunk would come after its plan's start: it is withdrawn and made again at
    the present. The right arm's first command, its move to the start (stamped 0, never late),
    is sent as it was made; dropped, the right arm's plans would start from a position its
    controller was never sent.
    """
    node, clock, published = streamer(wait_for_joint_states=True)
    names = joint_names(node)
    measured = {name: np.array(arm.neutral, dtype=float) for name, arm in node.robot.arms.items()}
    left = node.robot.arms['left']

    def moving(now):
        return pose(node, lambda arm: arm.neutral + 0.2 * math.sin(2.0 * (now - START)))

    node._on_joint_states(joint_state_to_msg(0.0, left.joint_names, measured['left']))
    last = stream(node, clock, START, START + 0.5, 1 / 30, moving)
    assert published['left'] and not published['right']
    node._on_joint_states(
        joint_state_to_msg(0.0, names, np.concatenate([measured['left'], measured['right']]))
    )
    made_again = []
    overtaken = node._overtaken

    def starved(now, chunks, poll):
        if not made_again:  # the first step after the right arm started: published 0.2 s late
            made_again.append(now)
            return now + 0.2
        return overtaken(now, chunks, poll)

    node._overtaken = starved
    sent = {name: len(items) for name, items in published.items()}
    step = last + 1 / 30
    clock.advance_to(step)
    hand_targets(node, step, names, moving(step))
    node._overtaken = overtaken
    assert made_again == [pytest.approx(step)]
    new_left = published['left'][sent['left']:]
    new_right = published['right'][sent['right']:]
    # (the test's clock stays at the step, behind the present the chunks were made again at:
    # the steps after it find the clock gone back and start over, so only the first counts)
    assert new_right and holding_still(new_right[0].message)  # the move, as it was made
    assert new_left and seconds(new_left[0].message.header.stamp) == pytest.approx(step + 0.2)
    assert node._groups['left'][0].withdrawn == 1 and node._groups['right'][0].withdrawn == 0
