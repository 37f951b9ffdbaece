"""
ArmCommander: the safety behaviour of the command stream, without ROS.

Start, limits, hold / neutral / re-engage on tracking loss, pacing and clock jumps, driven by a
simulated clock: every test steps time explicitly, nothing waits. Every test runs with each
motion generator (``motion_generator``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import math
from typing import Any

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion.commander import (
    ArmCommander,
    CommanderConfig,
    MOTION_GENERATORS,
    planned_limits,
)
from pic_ros.motion.limiter import MotionLimits, position_margin, TargetStatus
from pic_ros.motion.streaming import (
    ContinuityMonitor,
    MIN_POINT_GAP,
    TrajectoryChunk,
    TrajectoryPoint,
)
from pic_ros.motion.tracking_loss import TrackingState
from pic_ros.robot import load_robot
from pic_ros.robot.arm import ArmModel
import pytest

START = 100.0
"""Time at which every test starts [s]."""

EPSILON = 1e-9


@pytest.fixture(scope='module')
def arm() -> ArmModel:
    """Return Baxter's left arm."""
    return load_robot('baxter').arms['left']


@pytest.fixture(autouse=True, params=MOTION_GENERATORS)
def motion_generator(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test with each motion generator (the default of every Stream)."""
    Stream.generator = request.param
    yield request.param
    Stream.generator = MOTION_GENERATORS[0]


class Stream:
    """One arm's commander (engaged unless told), stepped as the node steps it; chunks recorded."""

    generator = MOTION_GENERATORS[0]

    def __init__(self, arm: ArmModel, *, engaged: bool = True, **parameters: Any) -> None:
        values = {
            'wait_for_joint_states': False, 'motion_generator': self.generator, **parameters
        }
        self.arm = arm
        self.commander = ArmCommander(
            arm, CommanderConfig.from_parameters(values), engaged=engaged
        )
        self.sent: list[tuple[float, TrajectoryChunk]] = []
        self.states: list[np.ndarray] = []

    def target(self, now: float, q: npt.ArrayLike) -> TargetStatus:
        """Hand a target over at ``now`` and step on it, as the node does."""
        status = self.commander.on_target(now, dict(zip(self.arm.joint_names, np.ravel(q))))
        if not status.rejected:
            self._record(now, self.commander.step(now))
        return status

    def tick(self, now: float) -> None:
        """Fire the node's timer at ``now``."""
        self._record(now, self.commander.step(now))

    def run(
        self, start: float, stop: float, period: float,
        target: Callable[[float], npt.ArrayLike] | None = None,
    ) -> float:
        """Step from start to stop: a target (if given) and a timer tick at each period."""
        now = start
        for now in np.arange(start, stop, period):
            if target is not None:
                self.target(float(now), target(float(now)))
            self.tick(float(now))
        return float(now)

    def _record(self, now: float, chunk: TrajectoryChunk | None) -> None:
        if chunk is not None:
            self.sent.append((now, chunk))
            assert self.commander.position is not None
            self.states.append(self.commander.position.copy())

    def commands(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return the times, positions and velocities of the chunks sent."""
        times = np.array([now for now, _ in self.sent])
        positions = np.array([chunk.command.positions for _, chunk in self.sent])
        velocities = np.array([chunk.command.velocities for _, chunk in self.sent])
        return times, positions, velocities

    def assert_safe(self, lead_time: float = 0.05, limits: MotionLimits | None = None) -> None:
        """
        Check every chunk sent: form, position and velocity limits, every step.

        The steps are those of the command (the chunk's point is the command itself for the
        limiter, the command planned ``lead_time`` ahead for ruckig). Every chunk and seam is
        within the velocity, acceleration and jerk limits of the settings (or ``limits``) by
        :class:`~pic_ros.motion.streaming.ContinuityMonitor`, each chunk taken at its step.
        """
        for _, chunk in self.sent:
            assert chunk.joint_names == self.arm.joint_names
            begins = chunk.command.time_from_start if chunk.start else 0.0
            planned_end = chunk.points[chunk.end].time_from_start
            assert planned_end - begins == pytest.approx(lead_time, abs=1e-9)
            for point in chunk.points:
                assert np.all(point.positions >= self.arm.lower - EPSILON)
                assert np.all(point.positions <= self.arm.upper + EPSILON)
                assert np.all(np.abs(point.velocities) <= self.arm.velocity + EPSILON)
        if not self.sent:
            return
        times, positions, velocities = self.commands()
        assert np.all(positions >= self.arm.lower - EPSILON)
        assert np.all(positions <= self.arm.upper + EPSILON)
        assert np.all(np.abs(velocities) <= self.arm.velocity + EPSILON)
        steps = np.abs(np.diff(np.array(self.states), axis=0))
        allowed = self.arm.velocity * np.maximum(np.diff(times), 0.0)[:, None] + EPSILON
        assert np.argwhere(steps > allowed).size == 0
        monitor = ContinuityMonitor(limits or MotionLimits.from_arm(
            self.arm, self.commander.config.acceleration_scale,
            velocity_scale=self.commander.config.velocity_scale,
        ))
        for now, chunk in self.sent:
            monitor.add(chunk, now)
        assert monitor.total.violations == 0, monitor.total.where
        if self.generator == 'ruckig':
            assert monitor.total.ran_out == 0


def test_nothing_is_sent_before_the_first_target(arm: ArmModel) -> None:
    """Without targets the robot is not commanded, not even to the neutral pose."""
    stream = Stream(arm)
    stream.run(START, START + 0.5, 0.02)
    assert stream.sent == [] and stream.commander.state is TrackingState.WAITING


def test_nothing_is_sent_before_the_start_position_is_known(arm: ArmModel) -> None:
    """wait_for_joint_states: no command until start_from; the first one moves from there."""
    stream = Stream(arm, wait_for_joint_states=True)
    target = arm.neutral - 0.2
    stream.run(START, START + 0.3, 1 / 30, lambda now: target)
    assert stream.sent == [] and not stream.commander.started
    measured = np.clip(arm.neutral + 0.3, arm.lower, arm.upper)
    assert stream.commander.start_from(measured)
    assert not stream.commander.start_from(arm.neutral)  # only once
    stream.run(START + 0.3, START + 0.6, 1 / 30, lambda now: target)
    first = stream.commands()[1][0]
    assert np.all(np.abs(first - measured) <= arm.velocity / 30 + EPSILON)
    stream.assert_safe()


def test_a_far_target_is_reached_within_the_limits_and_held_exactly(arm: ArmModel) -> None:
    """A target across the joint range is approached step by step and then held still."""
    stream = Stream(arm)
    far = arm.lower + 0.05 * (arm.upper - arm.lower)
    stream.run(START, START + 6.0, 1 / 30, lambda now: far)
    stream.assert_safe()
    times, positions, velocities = stream.commands()
    np.testing.assert_allclose(positions[-1], far, atol=1e-9)
    assert np.all(velocities[-1] == 0.0) and len(times) > 100


def test_tracking_loss_holds_returns_to_neutral_and_blends_back(arm: ArmModel) -> None:
    """Lost targets: hold, then neutral within limits; found again: blend in without a jump."""
    stream = Stream(arm, hold_timeout=0.25, neutral_timeout=1.5, blend_time=0.5)

    def moving(now: float) -> np.ndarray:
        return arm.neutral + 0.3 * math.sin(math.pi * (now - START))

    last = stream.run(START, START + 2.0, 1 / 30, moving)
    assert stream.commander.state is TrackingState.TRACKING
    stream.run(last + 0.02, last + 1.4, 0.02)
    assert stream.commander.state is TrackingState.HOLDING
    held_times, held, held_velocities = stream.commands()
    stream.run(last + 1.4, last + 8.0, 0.02)
    assert stream.commander.state is TrackingState.AT_NEUTRAL
    at_neutral = stream.sent[-1][1].command
    found = np.clip(arm.neutral - 0.5, arm.lower, arm.upper)
    stream.run(last + 8.0, last + 8.2, 1 / 30, lambda now: found)
    assert stream.commander.state is TrackingState.BLENDING
    stream.run(last + 8.2, last + 12.0, 1 / 30, lambda now: found)
    assert stream.commander.state is TrackingState.TRACKING

    stream.assert_safe()
    holding = held_times > last + 0.25 + 0.6  # braking from full speed takes at most 1/3 s
    assert np.all(held[holding] == held[-1]) and np.all(held_velocities[-1] == 0.0)
    np.testing.assert_allclose(at_neutral.positions, arm.neutral, atol=1e-9)
    assert np.all(at_neutral.velocities == 0.0)
    np.testing.assert_allclose(stream.sent[-1][1].command.positions, found, atol=1e-9)


def test_commands_continue_at_the_rate_while_holding_and_at_neutral(arm: ArmModel) -> None:
    """
    Without targets every timer tick still sends a command: holding, returning, at neutral.

    Only ruckig's first tick, while the next 30 Hz target is due by the tick after it, is left
    to that target (:func:`test_ticks_between_faster_targets_are_left_to_the_next_target`).
    """
    stream = Stream(arm, rate=50.0, hold_timeout=0.1, neutral_timeout=0.5)
    last = stream.run(START, START + 0.5, 1 / 30, lambda now: arm.neutral + 0.2)
    sent = len(stream.sent)
    ticks = np.arange(last + 0.02, last + 4.0, 0.02)
    for now in ticks:
        stream.tick(float(now))
    assert stream.commander.state is TrackingState.AT_NEUTRAL
    left_to_a_target = int(stream.generator == 'ruckig')
    assert len(stream.sent) - sent == len(ticks) - left_to_a_target
    times = np.array([now for now, _ in stream.sent[sent:]])
    assert np.max(np.diff(times)) <= 0.02 + 1e-9
    rest = stream.sent[-1][1].command
    np.testing.assert_allclose(rest.positions, arm.neutral, atol=1e-9)
    assert np.all(rest.velocities == 0.0)
    stream.assert_safe()


def test_targets_outside_the_limits_stop_at_the_limits_and_are_counted(arm: ArmModel) -> None:
    """Targets past the limits give commands that end on the limits, the position margin in."""
    stream = Stream(arm)
    stream.run(START, START + 6.0, 1 / 30, lambda now: arm.upper + 1.0)
    stream.assert_safe()
    margin = position_margin(arm.lower, arm.upper, arm.velocity)
    assert np.all((margin > 0.0) & (margin < 0.05))
    np.testing.assert_allclose(stream.commands()[1][-1], arm.upper - margin, atol=1e-9)
    assert stream.commander.clamped > 0


def test_incomplete_and_non_finite_targets_are_rejected_and_counted(arm: ArmModel) -> None:
    """A missing joint or a NaN sends nothing and counts once per message."""
    stream = Stream(arm)
    partial = dict(zip(arm.joint_names[:3], arm.neutral[:3]))
    assert stream.commander.on_target(START, partial) is TargetStatus.WRONG_SHAPE
    broken = arm.neutral.copy()
    broken[2] = math.nan
    assert stream.target(START, broken) is TargetStatus.NON_FINITE
    assert stream.sent == []
    assert (stream.commander.targets, stream.commander.rejected) == (2, 2)


def test_a_timer_tick_right_after_a_target_step_is_skipped(arm: ArmModel) -> None:
    """The timer fills the gaps between slow targets without doubling the fast ones."""
    stream = Stream(arm, rate=50.0)
    stream.target(START, arm.neutral + 0.1)
    stream.tick(START + 0.005)  # < half a period after the target's step
    assert len(stream.sent) == 1
    stream.tick(START + 0.02)
    assert len(stream.sent) == 2


def test_targets_that_queued_during_a_stall_leave_as_one_command_not_a_burst(
    arm: ArmModel,
) -> None:
    """After a 300 ms stall, ten queued targets handled at once give one command, the last."""
    stream = Stream(arm, rate=50.0)
    last = stream.run(START, START + 0.5, 0.02, lambda now: arm.neutral)
    sent = len(stream.sent)
    resumed = last + 0.3
    queued = [arm.neutral + 0.01 * (index + 1) for index in range(10)]
    for target in queued:
        assert not stream.target(resumed, target).rejected
    stream.tick(resumed)
    assert len(stream.sent) == sent + 1
    stream.tick(resumed + 0.02)
    times = np.array([now for now, _ in stream.sent])
    assert np.min(np.diff(times)) >= 0.5 * 0.02 - 1e-12
    stream.assert_safe()


def test_min_interval_lets_every_fast_target_through_with_a_slow_timer(arm: ArmModel) -> None:
    """
    Timer at 20 Hz, min_interval 1 ms: each of 240 Hz targets gives its command, none sooner.

    (20 Hz is the slowest timer both generators can bridge with the default ``lead_time``:
    :func:`~pic_ros.motion.commander.minimum_rate`.)
    """
    stream = Stream(arm, rate=20.0, min_interval=0.001)
    stream.run(START, START + 0.1, 0.02, lambda now: arm.neutral)
    sent = len(stream.sent)
    begin = START + 0.2
    for index in range(48):
        assert not stream.target(begin + index / 240.0, arm.neutral + 0.001 * index).rejected
    assert len(stream.sent) == sent + 48
    for _ in range(3):  # a burst of queued targets still leaves as one command
        stream.target(begin + 0.3, arm.neutral)
    assert len(stream.sent) == sent + 49
    stream.assert_safe()


def test_a_target_right_after_a_timer_step_is_commanded_at_once(arm: ArmModel) -> None:
    """
    30 Hz targets against the 50 Hz timer: each gives its command when it comes.

    A timer's step does not hold a new target back (when the spacing counted from any step,
    half such targets waited 10-20 ms for the next tick); steps without a new target keep it.
    """
    stream = Stream(arm, rate=50.0)
    events = sorted(
        [(START + k / 30.0, 'target') for k in range(60)]
        + [(START + 0.003 + k * 0.02, 'tick') for k in range(100)]
    )
    at_once = 0
    for index, (now, kind) in enumerate(events):
        if kind == 'tick':
            stream.tick(now)
            continue
        before = len(stream.sent)
        stream.target(now, arm.neutral + 0.002 * math.sin(3.0 * index * 0.02))
        at_once += len(stream.sent) == before + 1
    assert at_once == 60
    ticks = {now for now, kind in events if kind == 'tick'}
    spacing = stream.commander.config.spacing
    for (before, _), (now, _) in zip(stream.sent, stream.sent[1:]):
        if now in ticks:  # a step without a new target comes no sooner than the spacing
            assert now - before >= spacing - 1e-12
    stream.assert_safe()


def test_ticks_between_faster_targets_are_left_to_the_next_target(arm: ArmModel) -> None:
    """
    30 Hz targets against the 50 Hz timer: ruckig leaves the ticks between them to the targets.

    A tick is skipped when the next target is due by the next tick and the plan last sent
    still covers that tick and ``plan_ahead`` after it: no chunk comes more than ``lead_time``
    after the one before (whose plan runs ``plan_ahead`` beyond that) and none after the last
    ran out (:meth:`Stream.assert_safe`). The limiter keeps every tick the spacing allows. Once
    the targets stop, every tick steps again (holding).
    """
    stream = Stream(arm, rate=50.0)
    targets = [START + k / 30.0 for k in range(60)]
    ticks = [START + 0.003 + k * 0.02 for k in range(150)]
    events = sorted([(now, 'target') for now in targets] + [(now, 'tick') for now in ticks])
    for now, kind in events:
        if kind == 'tick':
            stream.tick(now)
        else:
            stream.target(now, arm.neutral + 0.05 * math.sin(2.0 * (now - START)))
    stream.assert_safe()
    sent = [now for now, _ in stream.sent]
    flowing = [now for now in ticks if now < targets[-1]]
    ticked = set(sent) & set(flowing)
    config = stream.commander.config
    if stream.generator == 'ruckig':
        assert len(ticked) <= 0.1 * len(flowing)
        assert np.max(np.diff(sent)) <= config.lead_time + EPSILON
    else:
        assert len(ticked) >= 0.4 * len(flowing)
    overdue = targets[-1] + 1.0 / 30.0  # the targets stopped
    for before, now in zip(sent, sent[1:]):
        if before > overdue:
            assert now - before == pytest.approx(config.period)
    assert sent[-1] == ticks[-1]


def test_slow_targets_still_get_a_steady_command_stream(arm: ArmModel) -> None:
    """
    Targets at 10 Hz, timer at 50 Hz: commands at least every 40 ms.

    Every tick steps but ruckig's last before a target is due, which is left to that target.
    """
    stream = Stream(arm, rate=50.0)
    far = arm.lower + 0.1 * (arm.upper - arm.lower)
    for tick in range(100):  # one second in 10 ms steps, a target every 100 ms
        now = START + 0.01 * tick
        if tick % 10 == 0:
            stream.target(now, far)
        if tick % 2 == 0:
            stream.tick(now)
    stream.assert_safe()
    times = stream.commands()[0]
    assert len(times) >= 40 and np.max(np.diff(times)) <= 0.04 + EPSILON


def test_the_clock_going_back_starts_tracking_over(arm: ArmModel) -> None:
    """After a replay loop (time jumps back) targets are accepted again, not stale."""
    stream = Stream(arm)
    stream.run(START, START + 1.0, 1 / 30, lambda now: arm.neutral + 0.2)
    before = len(stream.sent)
    stream.run(10.0, 12.0, 1 / 30, lambda now: arm.neutral - 0.2)
    assert stream.commander.rejected == 0 and stream.commander.clock_restarts == 1
    assert stream.commander.state is TrackingState.TRACKING
    np.testing.assert_allclose(
        stream.sent[-1][1].command.positions, arm.neutral - 0.2, atol=1e-9
    )
    first_after = stream.sent[before][1].command.positions
    last_before = stream.sent[before - 1][1].command.positions
    assert np.all(np.abs(first_after - last_before) <= arm.velocity / 30 + EPSILON)


def test_new_settings_keep_the_state_and_the_command(arm: ArmModel) -> None:
    """
    New settings apply from the next step; the commanded motion carries on from where it is.

    Lower limits are reached through the motion generator, within the old ones: every chunk
    and seam keeps the old limits, and the chunks after the settling keep the new ones.
    """
    stream = Stream(arm, blend_time=0.2)
    old = MotionLimits.from_arm(arm)
    far = arm.lower + 0.1 * (arm.upper - arm.lower)
    last = stream.run(START, START + 0.5, 1 / 30, lambda now: far)
    position = stream.commander.position
    assert position is not None and stream.commander.state is TrackingState.TRACKING
    before = position.copy()
    stream.commander.config = CommanderConfig.from_parameters({
        'acceleration_scale': 0.5, 'hold_timeout': 0.5, 'wait_for_joint_states': False,
        'motion_generator': stream.generator,
    })
    np.testing.assert_array_equal(stream.commander.position, before)
    assert stream.commander.config.tracking.hold_timeout == 0.5
    changed = len(stream.sent)
    stream.run(last + 1 / 30, last + 0.5, 1 / 30, lambda now: far)
    assert stream.commander.state is TrackingState.TRACKING
    stream.assert_safe(limits=old)
    new = MotionLimits.from_arm(arm, 0.5)
    settled = [chunk for now, chunk in stream.sent[changed:] if now > last + 0.3]
    assert settled
    for chunk in settled:
        for point in chunk.points:
            assert point.accelerations is None or np.all(
                np.abs(point.accelerations) <= new.acceleration + EPSILON
            )


@pytest.mark.parametrize(
    ('values', 'reason'),
    [
        ({'neutral_timeout': 0.1}, r'neutral_timeout must be in \[0.25, 3600.0\], got 0.1'),
        ({'hold_timeout': 5.0}, r'neutral_timeout must be in \[5.0, 3600.0\], got 3.0'),
        ({'lead_time': 2.0}, 'lead_time'),
        ({'rate': 0.5}, 'rate'),
    ],
)
def test_inconsistent_settings_are_refused_with_their_reason(
    values: dict[str, float], reason: str
) -> None:
    """The timing and the limits are checked together, before anything changes."""
    with pytest.raises(ConfigError, match=reason):
        CommanderConfig.from_parameters(values)


@pytest.mark.parametrize('generator', MOTION_GENERATORS)
def test_chunks_are_stamped_with_the_time_they_were_planned_for(
    arm: ArmModel, generator: str
) -> None:
    """
    stamp_trajectories: a chunk is placed at its step's time; false: stamp 0 (on arrival).

    The limiter's chunk is stamped with its step's time. With ruckig the plan made at a step
    starts ``plan_ahead`` later; the chunk first repeats, from its last point at or before the
    step (the first chunk: from the command at the step), what the controller was last sent, so
    it is stamped just before that point, its first point is at :data:`MIN_POINT_GAP` and its
    ``command`` point, where the new plan starts, is at the step's time plus ``plan_ahead``.
    A chunk that holds still where the controller already is -- here the first, blending in
    from a speed of 0 -- is stamped 0 either way ("start on arrival": exact whenever it comes,
    never refused as late), one point at rest.
    """
    for stamped in (True, False):
        stream = Stream(arm, motion_generator=generator, stamp_trajectories=stamped)
        stream.run(START, START + 0.3, 1 / 30, lambda now: arm.neutral + 0.1)
        assert stream.sent
        ahead = CommanderConfig().plan_ahead
        holding = [
            all(np.array_equal(p.positions, chunk.points[0].positions)
                and not np.any(p.velocities) for p in chunk.points)
            for _, chunk in stream.sent
        ]
        assert holding[0] and not all(holding)
        for (now, chunk), still in zip(stream.sent, holding):
            if not stamped or still:
                assert chunk.stamp == 0.0 and chunk.start == 0
                if still:
                    assert len(chunk.points) == 1
            elif generator == 'limiter':
                assert chunk.stamp == pytest.approx(now) and chunk.start == 0
            else:
                assert chunk.stamp <= now and chunk.start > 0
                assert chunk.points[0].time_from_start == pytest.approx(MIN_POINT_GAP)
                begins = chunk.stamp + chunk.command.time_from_start
                assert begins == pytest.approx(now + ahead)


def test_after_a_stall_a_chunk_does_not_repeat_the_ended_one(arm: ArmModel) -> None:
    """
    A step long after the last chunk ended (a stalled stream) starts from the command at once.

    The controller holds the last point of a chunk that ended, so there is nothing to repeat:
    the chunk is stamped just before the step and carries the new plan only, not seconds of
    the old one.
    """
    stream = Stream(arm, motion_generator='ruckig')
    last = stream.run(START, START + 0.5, 1 / 30, lambda now: arm.neutral + 0.1)
    stalled = last + 2.0
    stream.target(stalled, arm.neutral + 0.2)
    now, chunk = stream.sent[-1]
    assert now == stalled
    assert chunk.stamp == pytest.approx(stalled - MIN_POINT_GAP)
    assert chunk.start == 1
    assert len(chunk.points) <= 12


# Engagement: the operator's clutch -------------------------------------------------------------


def brake_bound(
    velocity: np.ndarray, limits: MotionLimits, generator: str, step: float
) -> float:
    """
    Return how long the command may take to stand still after a disengage, from the limits.

    The disengage is seen at the next step (up to ``step`` later, the arm still speeding up at
    most at the acceleration limit); ruckig's plan then starts ``plan_ahead`` after it and brakes
    time-optimally, in no more than a profile that turns the acceleration round (``2 a / j``),
    brakes at ``a`` and releases it (``a / j``): ``v / a + 3 a / j``; the limiter brakes at ``a``
    step by step. The standstill is seen at a step, up to ``step`` after it is reached.

    :param velocity: The commanded velocity when the disengage came, shape (n,).
    :param limits: The limits the commands are planned within.
    :param generator: The motion generator.
    :param step: The longest time between two steps [s].
    :return: The bound [s].
    """
    speed = np.minimum(np.abs(velocity) + limits.acceleration * step, limits.velocity)
    braking = speed / limits.acceleration
    if generator == 'ruckig':
        assert limits.jerk is not None
        braking = braking + 3.0 * limits.acceleration / limits.jerk
        step += CommanderConfig().plan_ahead
    return step + float(np.max(braking)) + step


def accelerations(stream: Stream) -> np.ndarray:
    """Return the commanded accelerations of the chunks sent: planned, or differenced (limiter)."""
    if stream.generator == 'ruckig':
        return np.array([chunk.command.accelerations for _, chunk in stream.sent])
    times, _, velocities = stream.commands()
    return np.diff(velocities, axis=0) / np.diff(times)[:, None]


def test_a_disengaged_arm_never_moves_over_60_s_of_moving_targets(arm: ArmModel) -> None:
    """
    Not engaged from the start: a minute of moving targets sends nothing and moves nothing.

    The targets are taken and counted (the prediction stays warm), the command stays where the
    arm started, at rest, and the state says why.
    """
    for wait_for_joint_states in (False, True):
        stream = Stream(arm, engaged=False, wait_for_joint_states=wait_for_joint_states)
        measured = np.clip(arm.neutral + 0.3, arm.lower + 0.1, arm.upper - 0.1)
        if wait_for_joint_states:
            stream.commander.start_from(measured)
        start = stream.commander.position
        assert start is not None
        start = start.copy()

        def moving(now: float) -> np.ndarray:
            return arm.neutral + 0.5 * math.sin(2.0 * (now - START))

        stream.run(START, START + 60.0, 1 / 30, moving)

        commander = stream.commander
        assert stream.sent == [] and commander.published == 0
        assert commander.state is TrackingState.DISENGAGED
        assert commander.targets == 1800 and commander.rejected == 0
        assert commander.position is not None and commander.velocity is not None
        np.testing.assert_array_equal(commander.position, start)
        assert np.all(commander.velocity == 0.0)


def test_disengaging_a_moving_arm_brakes_within_its_limits_and_holds(
    arm: ArmModel, motion_generator: str
) -> None:
    """
    Disengaged while following a fast target: standstill within the braking time, then held.

    The bound comes from the velocity at the disengage and the planned limits
    (:func:`brake_bound`); every command stays within the velocity and acceleration limits;
    commands keep coming while holding (a controller's command timeout never fires) and the
    held position never changes, while the targets keep moving.
    """
    stream = Stream(arm)
    limits = planned_limits(arm, stream.commander.config)
    period = 0.02

    def fast(now: float) -> np.ndarray:
        return arm.neutral + 0.6 * math.sin(3.0 * (now - START))

    last = stream.run(START, START + 2.0, period, fast)
    velocity = stream.commander.velocity
    assert velocity is not None and np.max(np.abs(velocity) / limits.velocity) > 0.3
    bound = brake_bound(velocity, limits, motion_generator, period)
    sent = len(stream.sent)

    stream.commander.engaged = False
    stream.run(last + period, last + 3.0, period, fast)

    assert stream.commander.state is TrackingState.DISENGAGED
    stream.assert_safe()
    times, positions, velocities = stream.commands()
    after = times > last
    still = np.all(velocities == 0.0, axis=1) & after
    assert still.any(), 'the arm never stood still'
    stopped_at = times[np.argmax(still)]
    assert stopped_at - last <= bound, f'standstill after {stopped_at - last:.3f} s > {bound:.3f}'
    held = times >= stopped_at
    assert np.all(positions[held] == positions[-1]) and np.all(still[held])
    assert len(stream.sent) - sent == len(np.arange(last + period, last + 3.0, period))
    assert np.all(np.abs(velocities) <= limits.velocity + EPSILON)
    assert np.all(np.abs(accelerations(stream)) <= limits.acceleration * (1 + 1e-6) + EPSILON)


def test_engaging_blends_in_from_where_the_arm_is_without_a_jump(
    arm: ArmModel, motion_generator: str
) -> None:
    """
    Engaged after 2 s of targets: the first command starts at rest where the arm is.

    The speed then ramps up over ``blend_time`` (BLENDING) and the arm reaches the target
    (TRACKING); no step moves further than the velocity limits allow.
    """
    blend_time = 0.5
    stream = Stream(arm, engaged=False, blend_time=blend_time)
    limits = planned_limits(arm, stream.commander.config)
    start = stream.commander.position
    assert start is not None
    start = start.copy()
    far = np.clip(arm.neutral - 0.5, arm.lower, arm.upper)
    last = stream.run(START, START + 2.0, 1 / 30, lambda now: far)
    assert stream.sent == []

    stream.commander.engaged = True
    engaged_at = last + 1 / 30
    stream.run(engaged_at, engaged_at + 0.2, 1 / 30, lambda now: far)
    assert stream.commander.state is TrackingState.BLENDING
    stream.run(engaged_at + 0.2, engaged_at + 4.0, 1 / 30, lambda now: far)
    assert stream.commander.state is TrackingState.TRACKING

    stream.assert_safe()
    times, positions, velocities = stream.commands()
    assert times[0] == pytest.approx(engaged_at)
    assert np.all(np.abs(positions[0] - start) <= limits.velocity / 30 + EPSILON)
    cap = np.minimum((times - engaged_at + 1 / 30) / blend_time, 1.0)
    assert np.all(np.abs(velocities) <= cap[:, None] * limits.velocity + EPSILON)
    margin = position_margin(arm.lower, arm.upper, arm.velocity)
    np.testing.assert_allclose(
        positions[-1], np.clip(far, arm.lower + margin, arm.upper - margin), atol=1e-9
    )


def test_an_arm_disengaged_then_engaged_again_blends_back_to_the_person(arm: ArmModel) -> None:
    """Disengage while tracking, hold, engage: BLENDING from the held pose, then TRACKING."""
    stream = Stream(arm, blend_time=0.5)
    target = arm.neutral + 0.2
    last = stream.run(START, START + 1.5, 1 / 30, lambda now: target)
    stream.commander.engaged = False
    last = stream.run(last + 1 / 30, last + 2.0, 1 / 30, lambda now: arm.neutral - 0.2)
    assert stream.commander.state is TrackingState.DISENGAGED
    held = stream.commands()[1][-1]
    np.testing.assert_allclose(held, target, atol=1e-9)  # it had arrived: it stays there

    stream.commander.engaged = True
    stream.run(last + 1 / 30, last + 0.2, 1 / 30, lambda now: arm.neutral - 0.2)
    assert stream.commander.state is TrackingState.BLENDING
    stream.run(last + 0.2, last + 4.0, 1 / 30, lambda now: arm.neutral - 0.2)
    assert stream.commander.state is TrackingState.TRACKING
    np.testing.assert_allclose(stream.commands()[1][-1], arm.neutral - 0.2, atol=1e-9)
    stream.assert_safe()


def over_the_limit(chunk: TrajectoryChunk, speed: float) -> TrajectoryChunk:
    """Return the chunk with its last point's first velocity set to ``speed`` [rad/s]."""
    points = list(chunk.points)
    last = points[-1]
    velocities = np.array(last.velocities)
    velocities[0] = speed
    points[-1] = TrajectoryPoint(
        last.time_from_start, last.positions, velocities, last.accelerations
    )
    return TrajectoryChunk(
        chunk.joint_names, tuple(points), chunk.stamp, chunk.start, chunk.end, chunk.stop
    )


def test_a_chunk_beyond_a_velocity_limit_is_never_sent_the_arm_brakes_instead(
    arm: ArmModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """
    A step whose chunk breaks a URDF limit returns a brake, counted and described.

    When the brake breaks a limit too, nothing is returned, the count of chunks published
    is unchanged, and the following steps go on within the limits from what was sent.
    """
    stream = Stream(arm)
    stream.run(START, START + 1.0, 0.02, lambda t: arm.neutral + 0.3 * math.sin(t))
    commander = stream.commander
    made = ArmCommander._chunk
    bad = 2.0 * float(arm.velocity[0])
    faulty = {'step': True, 'brake': False}

    def chunk(self: ArmCommander, now: float, guidance: Any, braking: bool) -> TrajectoryChunk:
        result = made(self, now, guidance, braking)
        return over_the_limit(result, bad) if faulty['brake' if braking else 'step'] else result

    monkeypatch.setattr(ArmCommander, '_chunk', chunk)
    now = START + 1.0
    stream.tick(now)
    when, braked = stream.sent[-1]
    assert when == now
    assert commander.limit_refusals == 1
    assert arm.joint_names[0] in commander.last_breach and 'velocity' in commander.last_breach
    assert all(np.all(np.abs(p.velocities) <= arm.velocity) for p in braked.points)
    published, sent = commander.published, len(stream.sent)
    faulty['brake'] = True
    stream.tick(now + 0.02)
    assert len(stream.sent) == sent
    assert commander.limit_refusals == 3
    assert commander.published == published
    assert commander.brake(now + 0.02) is None  # nothing left to brake at that step
    faulty.update(step=False, brake=False)
    stream.run(now + 0.04, now + 1.0, 0.02, lambda t: arm.neutral + 0.3 * math.sin(t))
    assert commander.limit_refusals == 3
    stream.assert_safe()


def test_a_chunk_withdrawn_as_too_late_leaves_the_next_one_continuing_the_last_sent(
    arm: ArmModel,
) -> None:
    """
    A chunk made at a step and not sent (it would have come after its plan's start) is forgotten.

    The publisher read its clock, made the chunk, and was starved before it could publish:
    sent 0.2 s later, a ruckig chunk would reach the controller past the start of its plan (it
    is overtaken; the limiter plans nothing ahead: never). Withdrawn, it is counted and the
    count of chunks published is unchanged; the next steps continue the chunk sent before it,
    every seam within the limits (the monitor takes only the chunks sent), the controller
    having run out of it meanwhile counted as a stall.
    """
    stream = Stream(arm)
    moving = lambda t: arm.neutral + 0.3 * math.sin(3.0 * t)  # noqa: E731
    last = stream.run(START, START + 1.0, 0.02, moving)
    commander = stream.commander
    now = last + 0.02
    published = commander.published
    commander.on_target(now, dict(zip(arm.joint_names, moving(now))))
    assert commander.step(now) is not None  # made, not sent
    planned_ahead = stream.generator == 'ruckig'
    assert not commander.overtaken(now, now + 0.001)
    assert commander.overtaken(now, now + 0.2) == planned_ahead
    assert not commander.overtaken(now - 0.02, now + 0.2)  # not the step just made
    assert commander.withdraw(now)
    assert commander.withdrawn == 1 and commander.published == published
    assert not commander.withdraw(now)  # once
    stalls = commander.stalls
    stream.run(now + 0.2, now + 1.2, 0.02, moving)
    assert commander.stalls == stalls + 1  # the controller ran out of the chunk last sent
    stream.assert_safe()
