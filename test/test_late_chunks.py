"""
Late trajectories: never refused for lateness, always followed by the simulated controller.

joint_trajectory_controller (Humble 2.54.0, Jazzy 4.42.1, Kilted 5.17.0) starts a trajectory
stamped 0 when it arrives, and refuses one with a non-zero stamp whose last point is already past
on arrival; the simulated controller (:class:`~pic_ros_tools.sim.trajectory.TrajectoryFollower`)
does the same. The trajectory publisher's chunks therefore hold still stamped 0, and a moving chunk
keeps its last point (at rest after braking) ``LATE_WINDOW`` after its stamp: here the
commander's chunks reach the follower with delays from none to more than a second, on a
virtual clock (no wall clock), and every one is taken, the arm follows the target (no freeze),
and what the follower commands stays continuous.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.motion.delay import DelayAllowance
from pic_ros.motion.limiter import MotionLimits
from pic_ros.motion.streaming import LATE_WINDOW, segment_peaks, TrajectoryChunk
from pic_ros.robot import load_robot
from pic_ros.robot.arm import ArmModel
from pic_ros_tools.sim.trajectory import (
    Trajectory,
    TrajectoryFollower,
    TrajectoryStatus,
    Waypoint,
)
import pytest

START = 100.0
"""Time at which every run starts [s]."""


@pytest.fixture(scope='module')
def arm() -> ArmModel:
    """Return Baxter's left arm."""
    return load_robot('baxter').arms['left']


def trajectory(chunk: TrajectoryChunk) -> Trajectory:
    """Convert a chunk as the simulated robot converts the message (stamp as sent)."""
    return Trajectory(
        chunk.joint_names,
        [
            Waypoint(
                p.time_from_start, p.positions.tolist(), p.velocities.tolist(),
                [] if p.accelerations is None else p.accelerations.tolist(),
            )
            for p in chunk.points
        ],
        stamp=chunk.stamp,
    )


def one_point(time: float, stamp: float) -> Trajectory:
    """Return a one-point trajectory for the three joints of :func:`follower`."""
    return Trajectory(('a', 'b', 'c'), [Waypoint(time, [0.1, 0.2, 0.3])], stamp=stamp)


def follower() -> TrajectoryFollower:
    """Return a follower of three joints at 0."""
    return TrajectoryFollower(('a', 'b', 'c'), [-1.0] * 3, [1.0] * 3, [0.0] * 3)


def test_stamp_zero_starts_on_arrival_however_late() -> None:
    """A zero stamp means "now" (JTC's rule): the first point is reached its time later."""
    item = follower()
    assert item.set_trajectory(one_point(0.5, 0.0), 1000.0).accepted
    np.testing.assert_allclose(item.sample(1000.25).positions, [0.05, 0.1, 0.15])
    np.testing.assert_allclose(item.sample(1000.5).positions, [0.1, 0.2, 0.3])


def test_a_stamped_trajectory_is_refused_only_once_its_last_point_is_past() -> None:
    """A trajectory with ``stamp + last time_from_start < now`` is refused (JTC's rule)."""
    item = follower()
    assert item.set_trajectory(one_point(0.5, 10.0), 10.5).accepted  # ends now: taken
    verdict = item.set_trajectory(one_point(0.5, 10.0), 10.5 + 1e-6)
    assert verdict.status is TrajectoryStatus.IN_THE_PAST
    assert 'before now' in verdict.detail


def run(
    arm: ArmModel, delay: Any, seconds: float = 4.0, period: float = 0.02,
    allowance: DelayAllowance | None = None,
) -> dict[str, Any]:
    """
    Stream a moving target through the commander to a follower, each chunk ``delay(k)`` late.

    The follower takes the chunks in order of arrival (a later one overtakes nothing: DDS keeps
    the order), at their arrival on the same clock as the publisher's. With ``allowance`` the
    commander plans ahead by what it measured, as the trajectory publisher does: here the age
    of the robot's state on arrival, which comes back over the same delays.
    """
    config = CommanderConfig.from_parameters({'wait_for_joint_states': False})
    commander = ArmCommander(arm, config, engaged=True)
    start = np.array(arm.neutral)
    item = TrajectoryFollower(
        arm.joint_names, arm.lower, arm.upper, start, limits=MotionLimits.from_arm(arm)
    )
    phases = np.arange(arm.dof)

    def target(now: float) -> Any:
        return start + 0.4 * np.sin(2.0 * (now - START) + phases) * (now > START + 0.2)

    pending: list[tuple[float, TrajectoryChunk]] = []
    samples: list[tuple[float, Any]] = []
    verdicts = []
    last_arrival = -math.inf
    for index, now in enumerate(np.arange(START, START + seconds, period)):
        now = float(now)
        commander.on_target(now, dict(zip(arm.joint_names, target(now))))
        if allowance is not None:
            allowance.state_age(now, delay(index))
            commander.delay_allowance = allowance.allowance(now)
        chunk = commander.step(now)
        if chunk is not None:
            arrival = max(now + delay(index), last_arrival)
            last_arrival = arrival
            pending.append((arrival, chunk))
        for when in np.arange(now, now + period, 0.002):  # the controller's updates
            while pending and pending[0][0] <= when:
                arrival, sent = pending.pop(0)
                verdicts.append(item.set_trajectory(trajectory(sent), arrival))
            command = item.sample(float(when))
            samples.append((float(when), command))
    return {
        'verdicts': verdicts, 'samples': samples, 'follower': item, 'target': target,
        'commander': commander,
    }


@pytest.mark.parametrize('delay', [0.0, 0.02, 0.1, 0.5, 1.5])
def test_chunks_later_than_their_plan_are_taken_and_the_arm_keeps_following(
    arm: ArmModel, delay: float
) -> None:
    """
    Every chunk is taken whatever its delay up to ``LATE_WINDOW``; the arm never freezes.

    Before, a chunk later than its plan (``plan_ahead + lead_time``, 75 ms) ended in the past
    and was refused: the arm stood still while the person moved. Now the arm keeps moving after
    the target; with delays up to ``plan_ahead`` the command is the plan itself, continuous
    and within the limits. A later chunk is joined where it is (its plan, its braking tail or
    its rest), as the follower joins any late trajectory: the arm follows, with more lag.
    """
    assert delay < LATE_WINDOW
    result = run(arm, lambda index: delay)
    verdicts = result['verdicts']
    assert verdicts and all(verdict.accepted for verdict in verdicts)
    item = result['follower']
    assert item.stats.rejected == 0 and item.stats.accepted == len(verdicts)
    times = np.array([when for when, _ in result['samples']])
    positions = np.array([command.positions for _, command in result['samples']])
    moving = times > START + 1.0 + delay
    travel = np.ptp(positions[moving], axis=0)
    assert np.all(travel > 0.3)  # it follows the 0.8 rad sweep: no freeze
    if delay <= CommanderConfig().plan_ahead:
        target = np.array([result['target'](when - delay) for when in times[moving]])
        assert np.max(np.abs(positions[moving] - target)) < 0.25  # behind by the delay
        assert item.stats.segment_violations == 0 and item.stats.joined == 0
        states = [
            (when, command.positions, command.velocities, command.accelerations)
            for when, command in result['samples']
        ]
        peaks = segment_peaks(states, MotionLimits.from_arm(arm))
        assert peaks.violations == 0, peaks.where


@pytest.mark.parametrize('delay', [0.05, 0.09])
def test_chunks_later_than_plan_ahead_continue_the_command_with_the_measured_allowance(
    arm: ArmModel, delay: float
) -> None:
    """
    A delay beyond ``plan_ahead`` that the publisher measures: the plans start that much later.

    Without the allowance every chunk arrives after its plan moved on and is joined to the
    command (a seam); with it (up to ``max_plan_ahead``) none is joined, and what the follower
    commands keeps the limits.
    """
    assert CommanderConfig().plan_ahead < delay < CommanderConfig().max_plan_ahead
    fixed = run(arm, lambda index: delay)
    assert fixed['follower'].stats.joined > 0
    result = run(arm, lambda index: delay, allowance=DelayAllowance())
    item = result['follower']
    assert item.stats.rejected == 0
    assert item.stats.joined == 0 and item.stats.segment_violations == 0
    states = [
        (when, command.positions, command.velocities, command.accelerations)
        for when, command in result['samples']
    ]
    assert segment_peaks(states, MotionLimits.from_arm(arm)).violations == 0
    assert result['commander'].plan_ahead == pytest.approx(
        CommanderConfig().plan_ahead + delay
    )


def test_jittery_delays_up_to_a_second_never_freeze_the_arm(arm: ArmModel) -> None:
    """Delays drawn from 0 to 1 s (a loaded computer): every chunk taken, the arm moving."""
    rng = np.random.default_rng(3)
    delays = rng.uniform(0.0, 1.0, 400)
    result = run(arm, lambda index: float(delays[index % delays.size]))
    assert all(verdict.accepted for verdict in result['verdicts'])
    positions = np.array([command.positions for _, command in result['samples']])
    assert np.all(np.ptp(positions[len(positions) // 2:], axis=0) > 0.2)


def test_a_chunk_holding_still_is_taken_whenever_it_arrives(arm: ArmModel) -> None:
    """Stamped 0, the hold of a still arm is exact at any delay, even beyond LATE_WINDOW."""
    config = CommanderConfig.from_parameters({'wait_for_joint_states': False})
    commander = ArmCommander(arm, config, engaged=True)
    still = dict(zip(arm.joint_names, arm.neutral))
    chunks = []
    for now in np.arange(START, START + 3.0, 0.02):
        commander.on_target(float(now), still)
        chunk = commander.step(float(now))
        if chunk is not None:
            chunks.append(chunk)
    assert chunks and all(chunk.stamp == 0.0 for chunk in chunks)
    item = TrajectoryFollower(arm.joint_names, arm.lower, arm.upper, arm.neutral)
    verdict = item.set_trajectory(trajectory(chunks[-1]), START + 3.0 + 10.0 * LATE_WINDOW)
    assert verdict.accepted
    np.testing.assert_allclose(item.sample(START + 100.0).positions, arm.neutral, atol=1e-12)


@pytest.mark.parametrize('robot_name', ['baxter', 'nao', 'tiago', 'yumi'])
@pytest.mark.parametrize('delay', [0.0, 0.02])
def test_a_group_measured_at_its_limits_enters_the_range_within_the_limits(
    robot_name: str, delay: float
) -> None:
    """
    Every joint group starting at its upper limits (NAO's hands rest there): no limit broken.

    The commands keep a few mrad inside the limits; the first chunk moves the arm there from
    rest to rest, stamped 0, over the time the limits need. Before, a hold one ``lead_time``
    away jumped the 5-25 mrad: up to 8x an acceleration or jerk limit (Baxter's head).
    """
    for group in load_robot(robot_name).groups.values():
        start = np.where(np.isfinite(group.upper), group.upper, 0.0)
        bottom = np.where(np.isfinite(group.lower), group.lower, -1.0)
        commander = ArmCommander(group, CommanderConfig(), engaged=True)
        assert commander.start_from(start)
        item = TrajectoryFollower(
            group.joint_names, group.lower, group.upper, start,
            limits=MotionLimits.from_arm(group),
        )
        pending: list[tuple[float, TrajectoryChunk]] = []
        first = None
        for now in np.arange(START, START + 3.0, 0.02):
            now = float(now)
            closing = int((now - START) / 0.7) % 2 == 1
            commander.on_target(now, dict(zip(group.joint_names, bottom if closing else start)))
            chunk = commander.step(now)
            if chunk is not None:
                first = chunk if first is None else first
                pending.append((now + delay, chunk))
            for when in np.arange(now, now + 0.02, 0.002):
                while pending and pending[0][0] <= when:
                    arrival, sent = pending.pop(0)
                    assert item.set_trajectory(trajectory(sent), arrival).accepted
                item.sample(float(when))
        assert first is not None and first.stamp == 0.0 and len(first.points) == 1
        assert first.points[0].time_from_start >= CommanderConfig().lead_time
        assert item.stats.segment_violations == 0, (group.name, item.stats.segment_peak)


@pytest.mark.parametrize('robot_name', ['nao', 'baxter'])
@pytest.mark.parametrize('measured', [False, True], ids=['offline', 'joint_states'])
def test_a_late_entry_is_finished_before_the_first_plan_starts(
    robot_name: str, measured: bool
) -> None:
    """
    The move into the range, delivered late, is not cut by the plans that start where it ends.

    The entry is stamped 0: it starts when it arrives. Live, NAO's hands and arms got theirs
    45-140 ms late at start-up, and the next chunks, made for a group at rest at its end,
    replaced it while it still moved, at 1.4-3.3x an acceleration limit. The steps wait
    ``max_plan_ahead`` (the delay a plan allows) after it would have ended on time: offline, an
    entry that late. With ``joint_states`` (the controller's state, each tick) they also wait
    until the group is there: an entry 0.3 s late. Every later chunk arrives within
    ``plan_ahead``: none is joined, no limit is broken.
    """
    config = CommanderConfig()
    late = 0.3 if measured else config.max_plan_ahead
    for group in load_robot(robot_name).groups.values():
        start = np.where(np.isfinite(group.upper), group.upper, 0.0)
        bottom = np.where(np.isfinite(group.lower), group.lower, -1.0)
        commander = ArmCommander(group, config, engaged=True)
        assert commander.start_from(start)
        item = TrajectoryFollower(
            group.joint_names, group.lower, group.upper, start,
            limits=MotionLimits.from_arm(group),
        )
        pending: list[tuple[float, TrajectoryChunk]] = []
        for now in np.arange(START, START + 2.0, 0.02):
            now = float(now)
            if measured:
                commander.observe(item.sample(now).positions)
            closing = now - START > 0.8
            commander.on_target(now, dict(zip(group.joint_names, bottom if closing else start)))
            chunk = commander.step(now)
            if chunk is not None:
                entry = chunk.stamp == 0.0 and not pending and item.stats.accepted == 0
                pending.append((now + (late if entry else 0.01), chunk))
            for when in np.arange(now, now + 0.02, 0.002):
                while pending and pending[0][0] <= when:
                    arrival, sent = pending.pop(0)
                    assert item.set_trajectory(trajectory(sent), arrival).accepted
                item.sample(float(when))
        assert item.stats.accepted > 40, group.name
        assert item.stats.joined == 0, (group.name, item.stats.join_peaks)
        assert item.stats.segment_violations == 0, (group.name, item.stats.segment_peak)


def test_joints_the_entry_leaves_where_they_were_do_not_hold_the_plans_back(arm: ArmModel) -> None:
    """
    A controller holding the joints the move into the range did not move a little off.

    One joint starts beyond its upper limit and enters the range; the others stay where they
    were measured, and ``joint_states`` shows one of them 0.05 mrad from there, as a servo's
    error or a sag does. The plans start once the move is over, as with exact measurements.
    Before, each joint had a tolerance of its share of its own move: none for a joint that did
    not move, so the plans waited the whole ``ENTRY_WAIT`` (1 s) with the person moving.
    """
    config = CommanderConfig()
    start = arm.neutral.copy()
    start[0] = arm.upper[0]
    offset = np.zeros(arm.dof)
    offset[1] = 5e-5
    commander = ArmCommander(arm, config, engaged=True)
    assert commander.start_from(start)
    item = TrajectoryFollower(
        arm.joint_names, arm.lower, arm.upper, start, limits=MotionLimits.from_arm(arm),
    )
    sent: list[tuple[float, TrajectoryChunk]] = []
    for now in np.arange(START, START + 2.0, 0.02):
        now = float(now)
        commander.observe(item.sample(now).positions + offset)
        commander.on_target(now, dict(zip(arm.joint_names, arm.neutral)))
        chunk = commander.step(now)
        if chunk is not None:
            sent.append((now, chunk))
            assert item.set_trajectory(trajectory(chunk), now).accepted
    (entered, entry), (planned, _) = sent[:2]
    assert entry.stamp == 0.0 and len(entry.points) == 1
    ended = entered + entry.points[0].time_from_start
    assert planned <= ended + config.max_plan_ahead + 0.04, planned - ended
    assert item.stats.joined == 0 and item.stats.segment_violations == 0
