"""
trajectory_publisher: joint targets in, one trajectory stream per arm controller out.

The node's wiring: topics and in-process targets, joint_states, the timer on the node's clock,
parameters and diagnostics. What the commands do (limits, tracking loss, pacing) is tested on
:class:`~pic_ros.motion.commander.ArmCommander` itself (``test/test_commander.py``).
"""

from __future__ import annotations

import math

import numpy as np
from pic_ros.motion.commander import CommanderConfig
from pic_ros.motion.limiter import position_margin
from pic_ros.ros.conversions import joint_state_to_msg
from pic_ros.ros.trajectory_publisher_node import TrajectoryPublisherNode
import pytest
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

START = 100.0
"""Sim time at which every test starts [s]."""

EPSILON = 1e-9


@pytest.fixture
def streamer(make_node, capture, sim_clock):
    """Return a factory: ``(node, clock, published)``, published per arm, on sim time."""

    def make(wait_for_joint_states: bool = False, **parameters):
        node = make_node(
            TrajectoryPublisherNode,
            {
                'robot': 'baxter',
                'use_sim_time': True,
                'wait_for_joint_states': wait_for_joint_states,
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
            node.handle_targets(float(now), joint_names(node), target(float(now)))
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


def state(diagnostics, node, arm_index=0) -> str:
    """Return the tracking state an arm reports."""
    return diagnostics(node)[arm_index]['state']


def assert_safe(node, published, lead_time=0.05):
    """Check every captured command: its form and stamp, the position and velocity limits."""
    for name, items in published.items():
        arm = node.robot.groups[name]
        for item in items:
            message = item.message
            assert list(message.joint_names) == list(arm.joint_names)
            stamp = seconds(message.header.stamp)
            index = command_index(message, item.time)
            if index:  # a bridge from the previous trajectory, then the plan from the command
                assert item.time - lead_time - 1e-6 <= stamp <= item.time + 1e-6
                begins = seconds(message.points[index].time_from_start)
            else:  # planned for the step's time (a first ruckig plan: plan_ahead later)
                assert stamp == pytest.approx(item.time, abs=1e-6) or stamp == pytest.approx(
                    item.time + CommanderConfig().plan_ahead, abs=1e-6
                )
                begins = 0.0
            last = seconds(message.points[-1].time_from_start)
            assert last - begins == pytest.approx(lead_time, abs=1e-9)
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

    node.handle_targets(START, names, pose(node, lambda arm: arm.neutral + 0.1))

    assert {name: len(items) for name, items in published.items()} == {
        'left': 1, 'right': 1, 'head': 0,
    }
    assert [publisher.topic_name for _, publisher in node._groups.values()] == [
        '/left_arm_controller/joint_trajectory', '/right_arm_controller/joint_trajectory',
        '/head_controller/joint_trajectory',
    ]
    assert_safe(node, published, lead_time=0.04)


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
        node.handle_targets(float(now), names, values)
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
    node.handle_targets(START, names, target)
    clock.advance_to(START + 0.02)

    node._on_targets(joint_state_to_msg(START + 0.02, names, target))

    assert published == {'left': [], 'right': [], 'head': []}
    counts = [values['targets_rejected'] for values in diagnostics(node)]
    assert counts == ['2', '2', '0']  # the head was not in the targets


def test_joint_targets_with_mismatched_lengths_are_dropped(streamer, diagnostics):
    """A JointState whose names and positions differ in length is dropped before any arm."""
    node, clock, published = streamer()

    node._on_targets(JointState(name=joint_names(node), position=[0.0]))

    assert published == {'left': [], 'right': [], 'head': []}
    assert [values['targets_received'] for values in diagnostics(node)] == ['0', '0', '0']


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
    """Targets at 10 Hz: the timer keeps commands going at the node's rate in between."""
    node, clock, published = streamer(rate=50.0)
    names = joint_names(node)
    far = pose(node, lambda arm: arm.lower + 0.1 * (arm.upper - arm.lower))

    for tick in range(100):  # one second in 10 ms steps, a target every 100 ms
        now = START + 0.01 * tick
        clock.advance_to(now)
        if tick % 10 == 0:
            node.handle_targets(now, names, far)

    assert_safe(node, published)
    times = commands(published['left'])[0]
    assert len(times) >= 40
    assert np.max(np.diff(times)) <= 0.03 + EPSILON


def test_clock_going_back_starts_tracking_over(streamer, diagnostics):
    """After a replay loop (sim time jumps back) targets are accepted again, not stale."""
    node, clock, published = streamer()
    target = pose(node, lambda arm: arm.neutral + 0.2)
    stream(node, clock, START, START + 1.0, 1 / 30, lambda now: target)
    before = {name: len(items) for name, items in published.items()}

    other = pose(node, lambda arm: arm.neutral - 0.2)
    stream(node, clock, 10.0, 12.0, 1 / 30, lambda now: other)

    assert [values['targets_rejected'] for values in diagnostics(node)] == ['0', '0', '0']
    assert state(diagnostics, node) == 'tracking'
    for name, arm in node.robot.arms.items():
        np.testing.assert_allclose(
            command(published[name][-1]).positions, arm.neutral - 0.2, atol=1e-9
        )
    assert_safe(node, {name: items[:before[name]] for name, items in published.items()})
    assert_safe(node, {name: items[before[name]:] for name, items in published.items()})
