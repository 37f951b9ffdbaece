"""Tracking-loss supervisor: hold, return to neutral, blend back in, all within the limits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion import (
    JointLimiter,
    MotionLimits,
    TargetStatus,
    TrackingConfig,
    TrackingState,
    TrackingSupervisor,
)
from pic_ros.motion.tracking_loss import AT_NEUTRAL_TOLERANCE
import pytest

FloatArray = npt.NDArray[np.float64]

RATE = 100.0
"""Control rate of the simulated trajectory publisher [Hz]."""

EPS = 1e-9
NEUTRAL = np.array([0.3, -0.5, 0.0, 1.0, -0.2, 0.4, 0.1])
LIMITS = MotionLimits(
    lower=np.full(7, -2.0),
    upper=np.full(7, 2.0),
    velocity=np.array([1.5, 1.5, 1.5, 1.5, 4.0, 4.0, 4.0]),
    acceleration=np.array([4.5, 4.5, 4.5, 4.5, 12.0, 12.0, 12.0]),
)
TargetFn = Callable[[float], FloatArray | None]


class Record:
    """What happened at one control step of :func:`run`."""

    def __init__(self, now: float, age: float, state: TrackingState, speed_scale: float,
                 position: FloatArray, velocity: FloatArray) -> None:
        self.now = now
        self.age = age
        self.state = state
        self.speed_scale = speed_scale
        self.position = position
        self.velocity = velocity


def run(
    supervisor: TrackingSupervisor,
    limiter: JointLimiter,
    targets: TargetFn,
    start: float,
    stop: float,
) -> list[Record]:
    """
    Run the supervisor and the limiter at RATE from ``start`` to ``stop`` [s].

    ``targets(now)`` gives the solver target arriving at ``now`` (None: nothing arrives). Every
    step is checked against the limits.
    """
    records = []
    dt = 1.0 / RATE
    for index in range(round((stop - start) * RATE)):
        now = start + index * dt
        target = targets(now)
        if target is not None:
            assert supervisor.on_target(now, target) is TargetStatus.ACCEPTED
        guidance = supervisor.step(now, limiter.position)
        before = (limiter.position, limiter.velocity)
        step = limiter.step(guidance.reference, dt, guidance.speed_scale)
        assert_within_limits(before, step.position, step.velocity, dt)
        stamp = supervisor.last_stamp
        age = math.inf if stamp is None else now - stamp
        records.append(Record(now, age, guidance.state, guidance.speed_scale, step.position,
                              step.velocity))
    return records


def assert_within_limits(
    before: tuple[FloatArray, FloatArray], position: FloatArray, velocity: FloatArray, dt: float
) -> None:
    """Assert one step stays in the position, velocity and acceleration limits."""
    assert np.all(position >= LIMITS.lower) and np.all(position <= LIMITS.upper)
    assert np.all(np.abs(velocity) <= LIMITS.velocity)
    assert np.all(np.abs(position - before[0]) <= LIMITS.velocity * dt * (1 + EPS) + EPS)
    assert np.all(np.abs(velocity - before[1]) <= LIMITS.acceleration * dt * (1 + EPS) + EPS)


def sway(now: float) -> FloatArray:
    """Return a person's arm swaying slowly around a pose [rad]."""
    return np.array([0.2, -0.8, 0.5, 1.2, 0.0, 0.6, -0.3]) + 0.3 * math.sin(1.5 * now)


def between(begin: float, end: float, pose: Callable[[float], FloatArray]) -> TargetFn:
    """Return a 30 Hz target stream that exists only for ``begin <= now < end`` [s]."""

    def targets(now: float) -> FloatArray | None:
        frame = round(now * 30.0)
        arrives = abs(now * 30.0 - frame) < 0.5 * 30.0 / RATE
        return pose(now) if begin <= now < end and arrives else None

    return targets


def either(first: TargetFn, second: TargetFn) -> TargetFn:
    """Return a stream that gives the first stream's target, else the second's."""
    def targets(now: float) -> FloatArray | None:
        target = first(now)
        return second(now) if target is None else target

    return targets


def states_of(records: Sequence[Record]) -> list[TrackingState]:
    """Return the sequence of distinct consecutive states."""
    sequence: list[TrackingState] = []
    for record in records:
        if not sequence or sequence[-1] is not record.state:
            sequence.append(record.state)
    return sequence


# --- configuration ---------------------------------------------------------------------------


def test_default_config_follows_the_product_timeouts() -> None:
    """The defaults are hold 0.25 s and neutral 3 s (docs/method.md#tracking-loss)."""
    config = TrackingConfig()
    assert (config.hold_timeout, config.neutral_timeout) == (0.25, 3.0)


@pytest.mark.parametrize(
    ('fields', 'name'),
    [
        ({'hold_timeout': 0.0}, 'hold_timeout'),
        ({'hold_timeout': math.nan}, 'hold_timeout'),
        ({'hold_timeout': 1.0, 'neutral_timeout': 0.5}, 'neutral_timeout'),
        ({'neutral_timeout': math.inf}, 'neutral_timeout'),
        ({'blend_time': -0.1}, 'blend_time'),
        ({'neutral_speed_scale': 0.0}, 'neutral_speed_scale'),
        ({'neutral_speed_scale': 1.5}, 'neutral_speed_scale'),
        ({'blend_time': '1'}, 'blend_time'),
    ],
)
def test_config_rejects_out_of_range_values(fields: dict, name: str) -> None:
    """Each out-of-range timing raises ConfigError naming the field."""
    with pytest.raises(ConfigError, match=name):
        TrackingConfig(**fields)


@pytest.mark.parametrize('neutral', [[], [0.0, math.nan], [[0.0]], ['a']])
def test_supervisor_rejects_a_bad_neutral_pose(neutral: object) -> None:
    """The neutral pose must be finite numbers, shape (n,)."""
    with pytest.raises(ConfigError, match='neutral pose'):
        TrackingSupervisor(neutral)


def test_step_rejects_a_bad_clock_or_position() -> None:
    """A non-finite time or a position of the wrong shape is a wiring error."""
    supervisor = TrackingSupervisor(NEUTRAL)
    with pytest.raises(ConfigError, match='now'):
        supervisor.step(math.nan, NEUTRAL)
    with pytest.raises(ConfigError, match='position'):
        supervisor.step(0.0, NEUTRAL[:3])


# --- targets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('stamp', 'target', 'status'),
    [
        (1.0, [math.nan] * 7, TargetStatus.NON_FINITE),
        (1.0, [0.0] * 6, TargetStatus.WRONG_SHAPE),
        (1.0, 'abc', TargetStatus.WRONG_SHAPE),
        (0.5, [0.0] * 7, TargetStatus.STALE),
        (math.nan, [0.0] * 7, TargetStatus.STALE),
        (1.0, [0.0] * 7, TargetStatus.ACCEPTED),
    ],
)
def test_on_target_reports_why_a_target_is_dropped(
    stamp: float, target: object, status: TargetStatus
) -> None:
    """Bad targets are dropped with a reason and leave the last valid target in place."""
    supervisor = TrackingSupervisor(NEUTRAL)
    supervisor.on_target(0.9, sway(0.0))
    assert supervisor.on_target(stamp, target) is status
    assert supervisor.last_stamp == (1.0 if status is TargetStatus.ACCEPTED else 0.9)


def test_waiting_without_a_target_stays_where_the_robot_is() -> None:
    """Before any valid target the reference is the current command (the robot stays put)."""
    supervisor = TrackingSupervisor(NEUTRAL)
    limiter = JointLimiter(LIMITS, np.full(7, 0.7))
    supervisor.on_target(0.0, [math.nan] * 7)
    records = run(supervisor, limiter, lambda now: None, 0.0, 5.0)
    assert states_of(records) == [TrackingState.WAITING]
    np.testing.assert_array_equal(limiter.position, np.full(7, 0.7))


def test_gap_shorter_than_hold_timeout_changes_nothing() -> None:
    """A 0.2 s gap in the targets keeps TRACKING and the robot keeps following."""
    supervisor = TrackingSupervisor(NEUTRAL, TrackingConfig(blend_time=0.0))
    limiter = JointLimiter(LIMITS, sway(0.0))
    targets = either(between(0.0, 1.0, sway), between(1.2, 3.0, sway))
    records = run(supervisor, limiter, targets, 0.0, 3.0)
    assert states_of(records) == [TrackingState.TRACKING]


@settings(max_examples=40, deadline=None)
@given(gaps=st.lists(st.floats(0.0, 0.24), min_size=1, max_size=10))
def test_any_gaps_shorter_than_hold_timeout_never_leave_tracking(gaps: list[float]) -> None:
    """Targets with gaps below hold_timeout keep the supervisor in TRACKING throughout."""
    supervisor = TrackingSupervisor(NEUTRAL, TrackingConfig(blend_time=0.0))
    limiter = JointLimiter(LIMITS, sway(0.0))
    stamp = 0.0
    for gap in gaps:
        assert supervisor.on_target(stamp, sway(stamp)) is TargetStatus.ACCEPTED
        end = stamp + gap
        now = stamp
        while now <= end:
            guidance = supervisor.step(now, limiter.position)
            assert guidance.state is TrackingState.TRACKING
            limiter.step(guidance.reference, 0.01, guidance.speed_scale)
            now += 0.01
        stamp = end


# --- the full loss and recovery cycle --------------------------------------------------------


def test_loss_holds_then_returns_to_neutral_then_blends_back() -> None:
    """Tracking, hold, neutral and re-engagement, every step within the limits."""
    config = TrackingConfig(hold_timeout=0.25, neutral_timeout=3.0, blend_time=1.0)
    supervisor = TrackingSupervisor(NEUTRAL, config)
    limiter = JointLimiter(LIMITS, sway(0.0))
    comeback = np.array([-0.5, 0.4, -1.0, 0.2, 1.5, -1.0, 0.9])

    targets = either(between(0.0, 2.0, sway), between(9.0, 14.0, lambda _: comeback))
    records = run(supervisor, limiter, targets, 0.0, 14.0)
    assert states_of(records) == [
        TrackingState.BLENDING,
        TrackingState.TRACKING,
        TrackingState.HOLDING,
        TrackingState.RETURNING_TO_NEUTRAL,
        TrackingState.AT_NEUTRAL,
        TrackingState.BLENDING,
        TrackingState.TRACKING,
    ]
    for record in records:
        if record.state is TrackingState.HOLDING:
            assert 0.25 < record.age <= 3.0
        if record.state is TrackingState.RETURNING_TO_NEUTRAL:
            assert record.age > 3.0
    holding = [record for record in records if record.state is TrackingState.HOLDING]
    stopped = [record for record in holding if not record.velocity.any()]
    assert stopped, 'the robot never stopped while holding'
    for record in holding[holding.index(stopped[0]):]:
        np.testing.assert_array_equal(record.position, stopped[0].position)
    at_neutral = [record for record in records if record.state is TrackingState.AT_NEUTRAL]
    np.testing.assert_allclose(at_neutral[-1].position, NEUTRAL, atol=AT_NEUTRAL_TOLERANCE)
    returning = [r for r in records if r.state is TrackingState.RETURNING_TO_NEUTRAL]
    assert all(np.all(np.abs(r.velocity) <= 0.5 * LIMITS.velocity + EPS) for r in returning)
    blending = [record for record in records if record.state is TrackingState.BLENDING][-3:]
    for record in (r for r in records if r.now >= 9.0 and r.state is TrackingState.BLENDING):
        assert np.all(np.abs(record.velocity) <= record.speed_scale * LIMITS.velocity + EPS)
    assert blending[-1].now < 10.0
    np.testing.assert_array_equal(records[-1].position, comeback)
    assert not records[-1].velocity.any()


def test_targets_returning_during_hold_blend_from_where_the_robot_stopped() -> None:
    """A target after a 1 s gap re-engages with a ramp starting at 0 (no jump, no state skip)."""
    supervisor = TrackingSupervisor(NEUTRAL, TrackingConfig(blend_time=0.5))
    limiter = JointLimiter(LIMITS, sway(0.0))

    targets = either(between(0.0, 1.0, sway), between(2.0, 4.0, sway))
    records = run(supervisor, limiter, targets, 0.0, 4.0)
    assert states_of(records) == [
        TrackingState.BLENDING,
        TrackingState.TRACKING,
        TrackingState.HOLDING,
        TrackingState.BLENDING,
        TrackingState.TRACKING,
    ]
    first_blend = next(r for r in records if r.now >= 2.0 and r.state is TrackingState.BLENDING)
    assert first_blend.speed_scale == 0.0
    assert not first_blend.velocity.any()


def test_not_engaged_holds_the_command_whatever_the_targets_and_blends_in_once_engaged() -> None:
    """
    Not engaged: DISENGAGED with the current command as reference, targets still taken.

    Engaged again with a fresh target, the supervisor blends in with a speed cap starting at 0,
    as when the person is found again.
    """
    supervisor = TrackingSupervisor(NEUTRAL, TrackingConfig(blend_time=0.5))
    held = NEUTRAL + 0.1
    assert supervisor.step(0.0, held, engaged=False).state is TrackingState.DISENGAGED
    for tick in range(100):
        now = tick / RATE
        assert supervisor.on_target(now, sway(now)) is TargetStatus.ACCEPTED
        guidance = supervisor.step(now, held, engaged=False)
        assert guidance.state is TrackingState.DISENGAGED
        np.testing.assert_array_equal(guidance.reference, held)
    np.testing.assert_array_equal(supervisor.last_target, sway(0.99))

    supervisor.on_target(1.0, sway(1.0))
    guidance = supervisor.step(1.0, held)
    assert guidance.state is TrackingState.BLENDING and guidance.speed_scale == 0.0
    np.testing.assert_array_equal(guidance.reference, sway(1.0))
    assert supervisor.step(1.25, held).speed_scale == pytest.approx(0.5)


def test_reset_forgets_targets() -> None:
    """After reset the supervisor waits again and accepts older stamps (a clock jump back)."""
    supervisor = TrackingSupervisor(NEUTRAL)
    supervisor.on_target(100.0, sway(0.0))
    assert supervisor.step(100.0, NEUTRAL).state is TrackingState.BLENDING
    supervisor.reset()
    assert supervisor.step(0.0, NEUTRAL).state is TrackingState.WAITING
    assert supervisor.on_target(0.0, sway(0.0)) is TargetStatus.ACCEPTED


@settings(max_examples=40, deadline=None)
@given(
    pattern=st.lists(
        st.tuples(st.floats(0.0, 4.0), st.floats(0.0, 1.5), st.booleans()), min_size=1,
        max_size=5,
    ),
    blend_time=st.floats(0.0, 1.0),
)
def test_state_always_matches_the_age_of_the_last_target(
    pattern: list[tuple[float, float, bool]], blend_time: float
) -> None:
    """For random bursts and gaps, the state follows the timeouts and every step is in limits."""
    config = TrackingConfig(hold_timeout=0.25, neutral_timeout=1.0, blend_time=blend_time)
    supervisor = TrackingSupervisor(NEUTRAL, config)
    limiter = JointLimiter(LIMITS, np.zeros(7))
    now, last, blend_start = 0.0, None, None
    dt = 1.0 / RATE
    for gap, burst, jump in pattern:
        for phase, length in (('gap', gap), ('burst', burst)):
            for _ in range(round(length * RATE)):
                if phase == 'burst':
                    pose = sway(now) + (1.5 if jump else 0.0)
                    assert supervisor.on_target(now, pose) is TargetStatus.ACCEPTED
                    last = now
                previous = supervisor.state
                guidance = supervisor.step(now, limiter.position)
                before = (limiter.position, limiter.velocity)
                step = limiter.step(guidance.reference, dt, guidance.speed_scale)
                assert_within_limits(before, step.position, step.velocity, dt)
                state = guidance.state
                if last is None:
                    assert state is TrackingState.WAITING
                elif now - last <= 0.25:
                    assert state in (TrackingState.TRACKING, TrackingState.BLENDING)
                    if state is TrackingState.BLENDING and previous is not state:
                        blend_start = now
                    if state is TrackingState.BLENDING:
                        assert blend_start is not None and now - blend_start < blend_time
                elif now - last <= 1.0:
                    assert state is TrackingState.HOLDING
                else:
                    assert state in (TrackingState.RETURNING_TO_NEUTRAL, TrackingState.AT_NEUTRAL)
                now += dt
