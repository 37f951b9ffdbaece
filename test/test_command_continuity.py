"""
The continuity invariant of the command stream: no chunk, nor the seam between two, beyond a limit.

Every consecutive pair of points of every chunk the :class:`~pic_ros.motion.commander.ArmCommander`
emits, and the seam with the command the controller is on when it takes the chunk, must keep the
velocity, acceleration and jerk limits (:func:`~pic_ros.motion.streaming.segment_peaks`, checked
as joint_trajectory_controller takes the stream by
:class:`~pic_ros.motion.streaming.ContinuityMonitor`), whatever the time between steps (a stalled
process), the parameter changes while the arm moves and the targets. The three reproductions of
issue 27 first (each failed before: a 0.3 s gap between steps gave consecutive points at 2.5x
the velocity limit, ``velocity_scale`` halved mid-motion a 47 mrad step in 0.33 ms, ``rate: 1.0``
a fault at every step), then a timing fuzzer on every joint group of every robot in ``config/``.
Virtual clock: every test steps time explicitly, nothing waits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion.commander import (
    ArmCommander,
    CommanderConfig,
    minimum_rate,
    MOTION_GENERATORS,
    planned_limits,
)
from pic_ros.motion.limiter import MotionLimits
from pic_ros.motion.streaming import (
    CONTINUITY_TOLERANCE,
    ContinuityMonitor,
    segment_peaks,
    SegmentPeaks,
    TrajectoryChunk,
)
from pic_ros.robot import load_robot
from pic_ros.robot.arm import ArmModel
import pytest

START = 100.0
"""Time at which every run starts [s]."""

ROBOTS = ('baxter', 'nao', 'tiago', 'yumi')
"""Every robot file of ``config/``."""


@pytest.fixture(scope='module')
def arm() -> ArmModel:
    """Return Baxter's left arm."""
    return load_robot('baxter').arms['left']


def commanded(arm: Any, config: CommanderConfig) -> MotionLimits:
    """Return the limits a configuration lets the commands use (without the headroom)."""
    return MotionLimits.from_arm(
        arm, config.acceleration_scale, velocity_scale=config.velocity_scale
    )


def widest(limits: Sequence[MotionLimits]) -> MotionLimits:
    """Return the element-wise largest of some limits."""
    first = limits[0]
    return MotionLimits(
        lower=first.lower, upper=first.upper,
        velocity=np.max([item.velocity for item in limits], axis=0),
        acceleration=np.max([item.acceleration for item in limits], axis=0),
        jerk=None if first.jerk is None else np.max([item.jerk for item in limits], axis=0),
    )


def waving(arm: Any, amplitude: float = 0.5, rate: float = 2.5) -> Callable[[float], Any]:
    """Return a target that sweeps every joint, each with its own phase, inside the range."""
    middle = 0.5 * (np.asarray(arm.lower) + np.asarray(arm.upper))
    reach = 0.45 * (np.asarray(arm.upper) - np.asarray(arm.lower))
    reach = np.where(np.isfinite(reach), np.minimum(reach, amplitude), amplitude)
    middle = np.where(np.isfinite(middle), middle, 0.0)
    phases = np.arange(len(arm.joint_names))

    def target(now: float) -> Any:
        return middle + reach * np.sin(rate * now + phases)

    return target


class Run:
    """One arm's commander on a virtual clock, each chunk checked as a controller takes it."""

    def __init__(self, arm: Any, **values: Any) -> None:
        self.arm = arm
        self.values = {'wait_for_joint_states': False, **values}
        config = CommanderConfig.from_parameters(self.values)
        self.commander = ArmCommander(arm, config, engaged=True)
        self.configs = [config]
        self.monitor = ContinuityMonitor(commanded(arm, config))
        self.chunks: list[tuple[float, TrajectoryChunk]] = []

    def change(self, **values: Any) -> None:
        """Change parameters at run time (as the node's parameter callback does)."""
        self.values.update(values)
        config = CommanderConfig.from_parameters(self.values)
        self.commander.config = config
        self.configs.append(config)

    def step(self, now: float, target: Any | None) -> TrajectoryChunk | None:
        """Hand over a target (if any) and step, as the node does; check the chunk."""
        commander = self.commander
        if target is not None:
            commander.on_target(now, dict(zip(self.arm.joint_names, np.ravel(target))))
        chunk = commander.step(now)
        if chunk is None:
            return None
        # the limits the chunk may use: those of every setting since the command was last
        # within the current one's (a lowered limit is reached within the old ones)
        self.monitor.limits = widest([commanded(self.arm, c) for c in self.configs])
        self.monitor.add(chunk, now)
        self.chunks.append((now, chunk))
        current = planned_limits(self.arm, commander.config)
        limits = commander.limits
        assert limits is not None
        settled = np.all(limits.acceleration <= current.acceleration * (1 + 1e-12)) and (
            limits.jerk is None or current.jerk is None
            or np.all(limits.jerk <= current.jerk * (1 + 1e-12))
        )
        ceiling = commanded(self.arm, commander.config)
        within = all(
            np.all(np.abs(point.velocities) <= ceiling.velocity * (1 + CONTINUITY_TOLERANCE))
            and (point.accelerations is None or np.all(
                np.abs(point.accelerations) <= ceiling.acceleration * (1 + CONTINUITY_TOLERANCE)
            ))
            for point in chunk.points
        )
        if settled and within:  # from here on the current settings' limits hold
            self.configs = [commander.config]
        return chunk

    @property
    def total(self) -> SegmentPeaks:
        """Return the peaks and faults over every chunk so far."""
        return self.monitor.total


def steady(start: float, stop: float, period: float = 0.02) -> list[float]:
    """Return step times every period from start (inclusive) to stop (exclusive)."""
    return [float(t) for t in np.arange(start, stop, period)]


# The check itself -------------------------------------------------------------------------------


LIMITS = MotionLimits(
    lower=-np.ones(2), upper=np.ones(2), velocity=np.array([1.0, 2.0]),
    acceleration=np.array([10.0, 10.0]), jerk=np.array([100.0, 100.0]),
)


def test_the_check_reads_consecutive_points_as_mean_velocity_acceleration_and_jerk() -> None:
    """|dq| / h, |dv| / h and |da| / h against the limits, and every point's own v and a."""
    zero = np.zeros(2)
    inside = segment_peaks(
        [(0.0, zero, zero, zero), (0.1, np.array([0.05, 0.1]), np.array([0.5, 0.5]), zero)],
        LIMITS,
    )
    assert inside.violations == 0
    assert inside.velocity == pytest.approx(0.5) and inside.acceleration == pytest.approx(0.5)
    fast = segment_peaks(
        [(0.0, zero, zero, None), (0.01, np.array([0.02, 0.0]), zero, None)], LIMITS
    )
    assert fast.violations == 1 and fast.velocity == pytest.approx(2.0)
    assert 'velocity 2 x its limit' in fast.where
    jerky = segment_peaks(
        [(0.0, zero, zero, zero), (0.01, zero, zero, np.array([0.0, 2.0]))], LIMITS
    )
    assert jerky.violations == 1 and jerky.jerk == pytest.approx(2.0)
    own = segment_peaks([(0.0, zero, np.array([0.0, 2.1]), None)], LIMITS)
    assert own.violations == 1 and own.velocity == pytest.approx(1.05)
    jump = segment_peaks([(0.0, zero, zero, None), (0.0, np.ones(2), zero, None)], LIMITS)
    assert jump.violations == 1 and math.isinf(jump.velocity)
    beyond = np.array([1.0 + 0.5 * CONTINUITY_TOLERANCE, 0.0])
    edge = segment_peaks([(0.0, zero, zero, None), (1.0, beyond, zero, None)], LIMITS)
    assert edge.violations == 0  # rounding passes


def test_the_monitor_counts_a_stream_that_runs_out_moving_and_a_jump_onto_a_chunk(
    arm: ArmModel,
) -> None:
    """The controller holds an ended chunk's last point; a late chunk is sampled where it is."""
    from pic_ros.motion.streaming import stream_chunk

    names = arm.joint_names
    limits = MotionLimits.from_arm(arm)
    monitor = ContinuityMonitor(limits)
    q = np.array(arm.neutral)
    slow = np.full(arm.dof, 0.1)
    monitor.add(stream_chunk(names, q, slow, 0.05, stamp=10.0), 10.0)
    ended = monitor.add(stream_chunk(names, q + 0.01, slow, 0.05, stamp=10.5), 10.5)
    assert ended.ran_out == 1
    late = monitor.add(stream_chunk(names, q + 0.5, np.zeros(arm.dof), 0.05, stamp=20.0), 20.1)
    assert late.violations == 1 and 'jump' in late.where


# The reproductions of issue 27 -------------------------------------------------------------------


@pytest.mark.parametrize('generator', MOTION_GENERATORS)
@pytest.mark.parametrize('gap', [0.2, 0.3, 0.5, 2.0])
def test_a_stall_between_steps_leaves_no_jump(arm: ArmModel, generator: str, gap: float) -> None:
    """
    No step for ``gap`` seconds while the arm moves, then the stream resumes: no fault.

    Before: the first points after the stall went backwards (the old plan sampled at the real
    elapsed time, the generator advanced by at most ``max_dt``), 2.5x the velocity limit for a
    0.3 s gap. Now each chunk ends braking to rest (its tail), the controller brakes on it
    during the stall, and the next chunk starts from where the tail took it (re-timed).
    """
    run = Run(arm, motion_generator=generator)
    target = waving(arm)
    for now in steady(START, START + 1.5) + steady(START + 1.5 + gap, START + 3.0 + gap):
        run.step(now, target(now))
    assert run.total.violations == 0, run.total.where
    assert run.total.velocity <= 1.0
    if generator == 'ruckig':
        assert run.total.ran_out == 0  # the tail brakes: never a step in velocity
        assert run.commander.stalls >= 1
    assert run.commander.largest_gap == pytest.approx(gap + 0.02, abs=1e-6)


@pytest.mark.parametrize('generator', MOTION_GENERATORS)
def test_a_late_step_after_the_arm_came_to_rest_is_not_a_stall(
    arm: ArmModel, generator: str
) -> None:
    """
    A step late by 0.3 s while the arm holds still is counted in the gap, not as a stall.

    A stall is a step that found the controller braking on the last plan's tail (or stopped at
    its last point) because the step came late while the arm moved. An arm at rest loses
    nothing: counting it made the live evaluation call two runs invalid for a gripper holding
    still while the publisher was 60 ms late. The same gap while the arm moves is a stall.
    """
    still = Run(arm, motion_generator=generator)
    rest = np.array(arm.neutral)
    for now in steady(START, START + 2.0) + steady(START + 2.3, START + 3.0):
        still.step(now, rest)
    assert still.commander.stalls == 0
    assert still.commander.largest_gap == pytest.approx(0.32, abs=1e-6)
    moving = Run(arm, motion_generator=generator)
    target = waving(arm)
    for now in steady(START, START + 1.5) + steady(START + 1.8, START + 3.0):
        moving.step(now, target(now))
    assert moving.commander.stalls >= 1


def test_velocity_scale_halved_mid_motion_is_reached_through_the_generator(arm: ArmModel) -> None:
    """
    ``velocity_scale`` 1 -> 0.5 while the arm moves fast: slowed within the limits, then held.

    Before: one chunk with a 47 mrad step in 0.33 ms (95x the limit). Now the velocity comes
    down within the acceleration and jerk limits (Ruckig brakes from the state beyond the new
    limit), and within a braking time the chunks keep the new limit.
    """
    run = Run(arm)
    target = waving(arm, rate=4.0)
    for now in steady(START, START + 1.5):
        run.step(now, target(now))
    velocity = run.commander.velocity
    assert velocity is not None
    assert np.max(np.abs(velocity) / arm.velocity) > 0.5  # faster than the new limit somewhere
    run.change(velocity_scale=0.5)
    for now in steady(START + 1.5, START + 4.0):
        run.step(now, target(now))
    assert run.total.violations == 0, run.total.where
    half = MotionLimits.from_arm(arm, velocity_scale=0.5)
    later = [chunk for now, chunk in run.chunks if now > START + 2.2]
    for chunk in later:
        for point in chunk.points:
            assert np.all(np.abs(point.velocities) <= half.velocity * (1 + 1e-9))


@pytest.mark.parametrize('scale', ['acceleration_scale', 'limit_headroom'])
def test_lower_acceleration_limits_mid_motion_wait_until_the_command_is_within_them(
    arm: ArmModel, scale: str
) -> None:
    """
    Lower acceleration and jerk limits take over once the command can keep them: no fault.

    Until then the old (higher) ones bound the plan, so a command near a position limit never
    finds itself unable to brake in time under the new ones.
    """
    run = Run(arm)
    target = waving(arm, rate=4.0)
    for now in steady(START, START + 1.5):
        run.step(now, target(now))
    run.change(**{scale: 0.1 if scale == 'acceleration_scale' else 0.5})
    for now in steady(START + 1.5, START + 6.0):
        run.step(now, target(now))
    assert run.total.violations == 0, run.total.where
    limits = run.commander.limits
    assert limits is not None
    assert np.allclose(limits.acceleration, planned_limits(arm, run.commander.config).acceleration)


@pytest.mark.parametrize('generator', MOTION_GENERATORS)
def test_a_rate_the_generator_cannot_bridge_is_refused_with_its_reason(generator: str) -> None:
    """
    ``rate: 1.0`` is refused, saying the slowest rate; the slowest accepted rate gives no fault.

    Before: accepted, and every step (1 s apart) made a fault of 7.9-12x the velocity limit.
    """
    values = {'motion_generator': generator, 'wait_for_joint_states': False}
    with pytest.raises(ConfigError, match=r'rate must be at least [0-9.]+ Hz .*got 1\.0'):
        CommanderConfig.from_parameters({**values, 'rate': 1.0})
    with pytest.raises(ConfigError, match='min_interval must be at most'):
        CommanderConfig.from_parameters({**values, 'min_interval': 0.5})
    slowest = minimum_rate(CommanderConfig.from_parameters(values))
    expected = 1.0 / (0.05 + (0.025 if generator == 'ruckig' else 0.0))
    assert slowest == pytest.approx(expected)
    CommanderConfig.from_parameters({**values, 'rate': slowest})


def test_at_the_slowest_rate_the_timer_alone_keeps_the_arm_moving_without_a_fault(
    arm: ArmModel,
) -> None:
    """Steps only from a timer at the slowest rate: the plan never runs out between two."""
    config = CommanderConfig.from_parameters({'wait_for_joint_states': False})
    period = 1.0 / minimum_rate(config)
    run = Run(arm, rate=minimum_rate(config))
    target = waving(arm)
    for now in steady(START, START + 3.0, period * (1 - 1e-6)):
        run.step(now, target(now))
    assert run.total.violations == 0 and run.total.ran_out == 0
    assert run.commander.stalls == 0


# The timing fuzzer -----------------------------------------------------------------------------


CHANGES = {
    'velocity_scale': st.sampled_from([0.05, 0.25, 0.5, 1.0]),
    'acceleration_scale': st.sampled_from([0.05, 0.3, 1.0]),
    'limit_headroom': st.sampled_from([0.0, 0.05, 0.3]),
    'lead_time': st.sampled_from([0.05, 0.1, 0.3]),
    'plan_ahead': st.sampled_from([0.0, 0.025, 0.1]),
    'prediction_horizon': st.sampled_from([0.0, 0.05, 0.2]),
}
"""Parameters changed while the arm moves, and values they take."""


@st.composite
def timelines(draw: st.DrawFn) -> list[tuple[float, str, Any]]:
    """Draw a run: gaps between steps (mostly a period, some stalls up to 2 s), events."""
    events: list[tuple[float, str, Any]] = []
    count = draw(st.integers(40, 90))
    for _ in range(count):
        gap = draw(st.one_of(
            st.sampled_from([0.0, 0.005, 1 / 240, 1 / 30, 0.02]),
            st.floats(0.0, 0.1),
            st.floats(0.0, 2.0),
        ))
        kind = draw(st.sampled_from(
            ['target'] * 6 + ['tick'] * 3 + ['change', 'jump', 'engage', 'delay', 'nothing']
        ))
        value: Any = None
        if kind == 'change':
            name = draw(st.sampled_from(sorted(CHANGES)))
            value = (name, draw(CHANGES[name]))
        elif kind == 'jump':
            value = draw(st.floats(-1.0, 1.0))
        elif kind == 'engage':
            value = draw(st.booleans())
        elif kind == 'delay':
            value = draw(st.sampled_from([0.0, 0.01, 0.05, 0.3]))
        events.append((gap, kind, value))
    return events


def fuzz(group: Any, events: list[tuple[float, str, Any]], rate: float, speed: float) -> Run:
    """Play a drawn timeline on one group's commander."""
    run = Run(group, rate=20.0)
    now = START
    target = waving(group, rate=speed)
    offset = 0.0
    for gap, kind, value in events:
        now += gap
        if kind == 'change':
            name, number = value
            try:
                run.change(**{name: number})
            except ConfigError:  # refused together (e.g. a rate the new lead cannot bridge)
                run.values.pop(name)
                run.values[name] = run.commander.config.__getattribute__(name)
            continue
        if kind == 'jump':
            offset = value
            continue
        if kind == 'engage':
            run.commander.engaged = value
            continue
        if kind == 'delay':  # the publisher's measured delay rose or fell
            run.commander.delay_allowance = value
            continue
        moved = np.clip(
            target(now) + offset, np.asarray(group.lower) - 0.2, np.asarray(group.upper) + 0.2
        )
        run.step(now, moved if kind == 'target' else None)
    del rate
    return run


@pytest.mark.parametrize('robot', ROBOTS)
@settings(max_examples=12, deadline=None, derandomize=True)
@given(events=timelines(), which=st.integers(0, 16), speed=st.sampled_from([0.5, 2.5, 6.0]))
def test_no_timing_or_parameter_change_makes_a_fault(
    robot: str, events: list[tuple[float, str, Any]], which: int, speed: float
) -> None:
    """
    Random gaps, parameter changes, moving and jumping targets, a changing delay: no fault.

    Gaps of 0-2 s between steps; a delay allowance that rises and falls (the plans start later
    or sooner after their step).

    Every chunk and seam of every joint group of every robot keeps the velocity, acceleration
    and jerk limits in force (those of the settings, and the old ones while a lowered limit is
    being reached), and no chunk ends moving before the next (the braking tail).
    """
    groups = list(load_robot(robot).groups.values())
    group = groups[which % len(groups)]
    run = fuzz(group, events, 20.0, speed)
    assert run.total.violations == 0, f'{group.controller}: {run.total.where}'
    assert run.total.ran_out == 0, group.controller


def test_a_point_due_after_the_stall_is_on_the_braking_tail(arm: ArmModel) -> None:
    """During a stall the controller brakes on the tail; the next chunk starts from the tail."""
    run = Run(arm)
    target = waving(arm, rate=4.0)
    for now in steady(START, START + 1.0):
        run.step(now, target(now))
    _, before = run.chunks[-1]
    assert before.stop > before.end  # moving: a tail to rest
    tail = before.points[before.stop]
    assert not np.any(tail.velocities) and not np.any(tail.accelerations)
    stalled = run.chunks[-1][0] + 3.0  # long after the tail: at rest there
    after = run.step(stalled, target(stalled))
    assert after is not None and after.command is not None
    np.testing.assert_allclose(after.points[0].positions, tail.positions, atol=1e-12)


@pytest.mark.parametrize('sag', [0.0, 1e-4, 1e-3])
def test_the_first_chunks_continue_a_controller_that_holds_a_command_other_than_the_measurement(
    sag: float,
) -> None:
    """
    joint_states are not the command the controller holds: the stream still starts without a seam.

    The controller holds Baxter's neutral pose; joint_states report it sagged by ``sag`` on three
    joints (the servo's error under gravity). Every chunk reaches the controller 6.8 ms after
    its step (within ``plan_ahead``) and is taken as joint_trajectory_controller takes it
    (``pic_ros_tools.sim.trajectory``): none is joined, none breaks a limit. Before, with any
    sag of 0.1 mrad or more, the first moving chunks were made for an arm at rest at the
    measurement while the controller was still on its way there, and were joined.
    """
    from pic_ros_tools.sim.trajectory import Trajectory, TrajectoryFollower, Waypoint

    right = load_robot('baxter').arms['right']
    held = np.array(right.neutral, dtype=float)
    measured = held + sag * (np.arange(right.dof) % 2)
    commander = ArmCommander(right, CommanderConfig(), engaged=True)
    assert commander.start_from(measured)
    follower = TrajectoryFollower(
        right.joint_names, right.lower, right.upper, held, limits=MotionLimits.from_arm(right)
    )
    events = sorted(
        [(START + k / 30.0, True) for k in range(30)]
        + [(START + 0.007 + k * 0.02, False) for k in range(50)]
    )
    sent = 0
    for now, has_target in events:
        if has_target:
            target = held + 0.3 * math.sin(2.0 * (now - START) + 0.5)
            commander.on_target(now, dict(zip(right.joint_names, target)))
        chunk = commander.step(now)
        if chunk is None:
            continue
        sent += 1
        points = [
            Waypoint(
                point.time_from_start, point.positions.tolist(), point.velocities.tolist(),
                [] if point.accelerations is None else point.accelerations.tolist(),
            )
            for point in chunk.points
        ]
        follower.set_trajectory(Trajectory(chunk.joint_names, points, chunk.stamp), now + 0.0068)
    stats = follower.stats
    assert sent > 20 and stats.accepted == sent
    assert stats.joined == 0 and stats.segment_violations == 0
    assert np.max(np.abs(follower.sample(START + 1.0).positions - held)) > 0.01  # it followed
