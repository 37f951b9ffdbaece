"""
The jerk-limited generator: every limit holds at every step, targets are reached without overshoot.

Random and adversarial target streams (jumps, NaN, targets outside the limits, irregular and bad
time steps, stalls, speed caps, holds) drive the generator; each step is checked against the
position, velocity, acceleration and jerk limits, and so is the plan it streams ahead.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from joint_ranges import position_ranges
import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion import MotionLimits, TargetStatus
from pic_ros.motion.generator import (
    GeneratorConfig,
    GeneratorStep,
    JerkLimitedGenerator,
    PlanKind,
    safe_speed,
)
from pic_ros.motion.streaming import planned_chunk, segment_peaks
import pytest

FloatArray = npt.NDArray[np.float64]

EPS = 1e-9
"""Relative and absolute slack of the floating-point comparisons."""


def limits_of(dof: int = 2) -> MotionLimits:
    """Make limits: positions in [-1, 2], 1.5 rad/s, 4.5 rad/s^2, 90 rad/s^3."""
    return MotionLimits(
        lower=np.full(dof, -1.0), upper=np.full(dof, 2.0), velocity=np.full(dof, 1.5),
        acceleration=np.full(dof, 4.5), jerk=np.full(dof, 90.0),
    )


@st.composite
def jerk_limits(draw: st.DrawFn) -> MotionLimits:
    """Draw limits for 1-7 joints: some pinned, some continuous, wide ranges of each limit."""
    dof = draw(st.integers(1, 7))
    lower, upper = position_ranges(draw, dof)
    velocity = np.array(draw(st.lists(st.floats(0.05, 8.0), min_size=dof, max_size=dof)))
    acceleration = velocity * np.array(
        draw(st.lists(st.floats(0.5, 40.0), min_size=dof, max_size=dof))
    )
    jerk = acceleration * np.array(
        draw(st.lists(st.floats(2.0, 200.0), min_size=dof, max_size=dof))
    )
    return MotionLimits(np.array(lower), np.array(upper), velocity, acceleration, jerk)


def finite_box(limits: MotionLimits) -> tuple[FloatArray, FloatArray]:
    """Return the position limits with infinite bounds replaced by +-3 rad."""
    lower = np.where(np.isinf(limits.lower), -3.0, limits.lower)
    return lower, np.where(np.isinf(limits.upper), 3.0, limits.upper)


def assert_within_limits(
    limits: MotionLimits, before: tuple[FloatArray, FloatArray], step: GeneratorStep
) -> None:
    """Check one step: positions, speeds, accelerations and the jerk since the last state."""
    assert limits.jerk is not None
    q, v, a = step.position, step.velocity, step.acceleration
    assert np.all(q >= limits.lower - EPS) and np.all(q <= limits.upper + EPS)
    assert np.all(np.abs(v) <= limits.velocity * (1 + EPS) + EPS)
    assert np.all(np.abs(a) <= limits.acceleration * (1 + EPS) + EPS)
    assert np.all(np.abs(a - before[1]) <= limits.jerk * step.dt * (1 + 1e-6) + 1e-9)
    assert np.all(np.abs(q - before[0]) <= limits.velocity * step.dt * (1 + EPS) + EPS)
    assert not step.guarded


def assert_plan_within_limits(limits: MotionLimits, generator: JerkLimitedGenerator) -> None:
    """Check the plan streamed ahead (points of a 50 ms chunk) against the limits."""
    assert limits.jerk is not None
    names = [f'j{index}' for index in range(limits.dof)]
    chunk = planned_chunk(names, generator.sample, 0.05, generator.breakpoints(0.05))
    for point in chunk.points:
        assert np.all(point.positions >= limits.lower - EPS)
        assert np.all(point.positions <= limits.upper + EPS)
        assert np.all(np.abs(point.velocities) <= limits.velocity * (1 + EPS) + EPS)
        assert point.accelerations is not None
        assert np.all(np.abs(point.accelerations) <= limits.acceleration * (1 + EPS) + EPS)


TARGET_KINDS = ('inside', 'jump', 'outside', 'nan', 'inf', 'none', 'short', 'same')


@st.composite
def streams(draw: st.DrawFn, limits: MotionLimits, steps: int) -> list[dict[str, Any]]:
    """Draw a stream of adversarial step inputs for ``limits``."""
    low, high = finite_box(limits)
    stream = []
    for _ in range(steps):
        kind = draw(st.sampled_from(TARGET_KINDS))
        target: Any = None
        if kind in ('inside', 'jump', 'same'):
            fractions = np.array(draw(st.lists(st.floats(0, 1), min_size=limits.dof,
                                               max_size=limits.dof)))
            target = low + fractions * (high - low)
        elif kind == 'outside':
            target = high + draw(st.floats(0.1, 100.0))
        elif kind in ('nan', 'inf'):
            target = np.full(limits.dof, math.nan if kind == 'nan' else math.inf)
        elif kind == 'short':
            target = np.zeros(limits.dof + 1)
        dt = draw(st.one_of(
            st.floats(0.0005, 0.05), st.sampled_from((0.0, -0.01, math.nan, math.inf, 0.3, 5.0)),
        ))
        velocity = draw(st.one_of(
            st.none(), st.lists(st.floats(-20.0, 20.0), min_size=limits.dof, max_size=limits.dof),
            st.just([math.nan] * limits.dof),
        ))
        stream.append({
            'target': target, 'dt': dt, 'speed_scale': draw(st.sampled_from(
                (1.0, 1.0, 1.0, 0.5, 0.0, 0.01, math.nan, 2.0, -1.0)
            )),
            'target_velocity': velocity, 'hold': draw(st.booleans()) and kind == 'none',
        })
    return stream


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_limit_is_ever_exceeded_on_adversarial_streams(data: st.DataObject) -> None:
    """Whatever the stream, each step and each streamed plan stays within all four limits."""
    limits = data.draw(jerk_limits())
    low, high = finite_box(limits)
    start = low + data.draw(st.floats(0, 1)) * (high - low)
    generator = JerkLimitedGenerator(limits, start)
    for inputs in data.draw(streams(limits, 40)):
        before = (generator.position.copy(), generator.acceleration.copy())
        step = generator.step(
            inputs['target'], inputs['dt'], inputs['speed_scale'], inputs['target_velocity'],
            hold=inputs['hold'],
        )
        assert_within_limits(limits, before, step)
        assert_plan_within_limits(limits, generator)


def test_bad_inputs_are_reported_and_dropped() -> None:
    """NaN, wrong shapes and bad time steps are reported, the previous target kept."""
    generator = JerkLimitedGenerator(limits_of(), [0.0, 0.0])
    assert generator.step([0.5, 0.5], 0.01).target_status is TargetStatus.ACCEPTED
    assert generator.step([math.nan, 0.5], 0.01).target_status is TargetStatus.NON_FINITE
    assert generator.step([0.5], 0.01).target_status is TargetStatus.WRONG_SHAPE
    assert generator.step([9.0, 0.5], 0.01).target_status is TargetStatus.CLAMPED
    np.testing.assert_array_equal(generator.target, [2.0, 0.5])
    for dt, used in ((math.nan, 0.0), (-1.0, 0.0), (7.0, 0.1)):
        step = generator.step(None, dt)
        assert step.dt_clamped and step.dt == used
        assert step.target_status is TargetStatus.KEPT


def run_to(
    generator: JerkLimitedGenerator, target: npt.ArrayLike, seconds: float, dt: float = 0.01
) -> list[GeneratorStep]:
    """Step towards a fixed target for some time."""
    return [generator.step(target, dt) for _ in range(round(seconds / dt))]


@pytest.mark.parametrize('target', [[1.9, -0.9], [0.001, -0.002], [-1.0, 2.0]])
def test_a_fixed_target_is_reached_exactly_without_overshoot_and_held(target: list[float]) -> None:
    """From rest the command approaches monotonically, lands on the target and stays at rest."""
    limits = limits_of()
    generator = JerkLimitedGenerator(limits, [0.5, 0.5])
    steps = run_to(generator, target, 4.0)
    positions = np.array([step.position for step in steps])
    direction = np.sign(np.array(target) - 0.5)
    progress = (positions - 0.5) * direction
    assert np.all(np.diff(progress, axis=0) >= -EPS)  # monotonic, to rounding
    assert np.all(progress <= np.abs(np.array(target) - 0.5) + EPS)  # no overshoot
    np.testing.assert_array_equal(steps[-1].position, target)
    assert np.all(steps[-1].velocity == 0.0) and np.all(steps[-1].acceleration == 0.0)


def test_a_far_target_is_reached_in_about_the_minimum_time() -> None:
    """Rest to rest over 2 rad at 1.5 rad/s takes the time-optimal 2 / 1.5 + v/a + a/j."""
    generator = JerkLimitedGenerator(limits_of(1), [-1.0])
    steps = run_to(generator, [1.0], 3.0, dt=0.005)
    arrival = next(index for index, step in enumerate(steps) if step.position[0] == 1.0)
    optimal = 2.0 / 1.5 + 1.5 / 4.5 + 4.5 / 90.0
    assert abs((arrival + 1) * 0.005 - optimal) <= 0.01


def arrivals(generator: JerkLimitedGenerator, target: list[float]) -> FloatArray:
    """Return when each joint of the generator's plan first reaches its target [s]."""
    times = np.arange(0.0, 5.0, 0.001)
    positions = np.array([generator.sample(float(t))[0] for t in times])
    return np.array([
        times[np.argmax(np.abs(positions[:, joint] - value) < 1e-9)]
        for joint, value in enumerate(target)
    ])


def test_a_step_asked_to_synchronize_brings_every_joint_to_the_target_at_once() -> None:
    """One plan with the joints together; the next step plans each in its own time again."""
    target = [1.5, 0.3]
    alone = JerkLimitedGenerator(limits_of(2), [0.0, 0.0])
    alone.step(target, 0.0)
    apart = arrivals(alone, target)
    assert apart[0] - apart[1] > 0.5  # the short way is done long before the long one
    generator = JerkLimitedGenerator(limits_of(2), [0.0, 0.0])
    generator.step(target, 0.0, synchronize=True)
    together = arrivals(generator, target)
    assert abs(together[0] - together[1]) <= 0.002
    assert abs(together[0] - apart[0]) <= 0.002  # no slower than the slowest joint alone
    generator.step(target, 0.0)  # planned again from the same state, as configured
    np.testing.assert_allclose(arrivals(generator, target), apart, atol=0.002)


def test_a_jump_of_the_target_is_answered_without_an_acceleration_step() -> None:
    """When the target jumps behind a moving joint, acceleration changes by at most j dt."""
    limits = limits_of(1)
    generator = JerkLimitedGenerator(limits, [0.0])
    run_to(generator, [1.5], 0.5)
    assert generator.velocity[0] > 1.0
    accelerations = [generator.acceleration[0]]
    for step in run_to(generator, [-0.5], 2.0):
        accelerations.append(step.acceleration[0])
    assert np.max(np.abs(np.diff(accelerations))) <= 90.0 * 0.01 * (1 + 1e-9)
    assert generator.position[0] == -0.5 and generator.velocity[0] == 0.0


def test_a_moving_target_is_followed_with_its_velocity() -> None:
    """A target moving at constant speed is tracked closely once caught up."""
    generator = JerkLimitedGenerator(limits_of(1), [0.0])
    errors = []
    for index in range(300):
        now = 0.01 * index
        step = generator.step([0.5 * now], 0.01, target_velocity=[0.5])
        errors.append(abs(step.position[0] - 0.5 * now))
    assert max(errors[-50:]) < 0.01


def test_a_moving_target_at_a_position_limit_is_met_at_rest() -> None:
    """A target velocity that cannot brake before the limit is reduced: the limit holds."""
    limits = limits_of(1)
    generator = JerkLimitedGenerator(limits, [1.5])
    for _ in range(200):
        step = generator.step([2.0], 0.01, target_velocity=[1.5])
        assert step.position[0] <= 2.0 and not step.guarded
    assert generator.position[0] == 2.0 and generator.velocity[0] == 0.0


def test_hold_brakes_within_the_limits_and_stays() -> None:
    """Hold brakes the moving command to rest within the jerk limit and keeps it there."""
    limits = limits_of(1)
    generator = JerkLimitedGenerator(limits, [-1.0])
    run_to(generator, [2.0], 0.6)
    steps = [generator.step([2.0], 0.01, hold=True) for _ in range(100)]
    assert all(step.plan is PlanKind.STOP for step in steps)
    assert steps[-1].velocity[0] == 0.0 and steps[-1].acceleration[0] == 0.0
    assert steps[-1].position[0] == steps[-2].position[0] < 2.0


def test_a_state_that_cannot_stop_in_time_is_stopped_at_the_limit_and_reported() -> None:
    """A reset into an impossible state (too fast near a limit) is guarded, never beyond."""
    limits = limits_of(1)
    generator = JerkLimitedGenerator(limits, [1.99], velocity=[1.5])
    guarded = False
    for _ in range(50):
        step = generator.step([1.99], 0.01)
        guarded |= step.guarded
        assert step.position[0] <= 2.0
    assert guarded


def test_the_same_inputs_give_the_same_outputs() -> None:
    """Two generators fed the same stream agree bit for bit."""
    rng = np.random.default_rng(7)
    targets = rng.uniform(-1.0, 2.0, size=(200, 3))
    dts = rng.uniform(0.001, 0.04, size=200)
    runs = []
    for _ in range(2):
        generator = JerkLimitedGenerator(limits_of(3), [0.0, 0.0, 0.0])
        runs.append([
            generator.step(target, dt, 0.8, target_velocity=target - 0.5).position.copy()
            for target, dt in zip(targets, dts)
        ])
    np.testing.assert_array_equal(np.array(runs[0]), np.array(runs[1]))


def test_safe_speed_brakes_exactly_within_the_distance() -> None:
    """Braking from the safe speed at zero acceleration covers exactly the given distance."""
    a, j = 4.5, 90.0
    for distance in (1e-6, 0.001, a**3 / j**2, 0.1, 3.0):
        v = float(safe_speed([distance], [a], [j])[0])
        braking = v * math.sqrt(v / j) if v <= a * a / j else v * v / (2 * a) + v * a / (2 * j)
        assert braking == pytest.approx(distance, rel=1e-9)
    assert safe_speed([math.inf], [a], [j])[0] == math.inf
    assert safe_speed([-1.0], [a], [j])[0] == 0.0


def test_settings_are_checked() -> None:
    """A bad max_dt and limits without jerk limits are refused with the reason."""
    with pytest.raises(ConfigError, match=r'max_dt must be in \[0.001, 1.0\]'):
        GeneratorConfig(max_dt=0.0)
    with pytest.raises(ConfigError, match='needs jerk limits'):
        JerkLimitedGenerator(
            MotionLimits([-1.0], [1.0], [1.0], [2.0]), [0.0]
        )
    with pytest.raises(ConfigError, match='generator position must be 1 finite numbers'):
        JerkLimitedGenerator(limits_of(1), [math.nan])


def test_sampling_many_times_at_once_gives_the_same_states_bit_for_bit() -> None:
    """sample_many(times) is [sample(t) for t in times], the clamp and the exact rests too."""
    generator = JerkLimitedGenerator(limits_of(), [0.5, 0.5])
    times = [-1.0, 0.0, 0.003, 0.05, 0.4, 2.0, 30.0]
    for target in ([1.9, -0.9], [1.9, -0.9], [0.0, 2.0]):
        generator.step(target, 0.02, target_velocity=[0.3, 0.0])
        many = generator.sample_many(times + generator.breakpoints(3.0))
        for index, when in enumerate(times + generator.breakpoints(3.0)):
            for row, one in zip(many, generator.sample(when)):
                np.testing.assert_array_equal(row[index], one)


def test_braking_from_a_state_reaches_rest_within_the_limits_inside_the_position_limits() -> None:
    """stopping(): states at the jerk switches, the last at rest, consecutive pairs in limits."""
    from pic_ros.motion.streaming import segment_peaks

    limits = limits_of()
    generator = JerkLimitedGenerator(limits, [0.0, 0.0])
    for _ in range(20):
        generator.step([1.5, -1.5], 0.02)
    states = generator.stopping(*generator.sample(0.05))
    assert states[0][0] == 0.0 and len(states) > 2
    assert not np.any(states[-1][2]) and not np.any(states[-1][3])
    assert segment_peaks(states, limits).violations == 0
    for _, q, _, _ in states:
        assert np.all(q >= limits.lower) and np.all(q <= limits.upper)
    assert len(generator.stopping(np.zeros(2), np.zeros(2), np.zeros(2))) == 1  # at rest


def test_a_state_only_just_able_to_brake_before_a_limit_stops_there_within_the_jerk_limit():
    """
    Braking that ends microradians past a limit is clamped there without a step in acceleration.

    The state of Baxter's ``right_s1`` in a demo run (its limits as the generator has them): 61
    urad below its upper limit, still moving toward it and braking. Braking at once ends 8 urad
    beyond; the states past the limit were set to rest as well as clamped, and two points of the
    chunk implied 1.45x the jerk limit (about 3x on this sampling). Clamped in position only, the
    states keep the plan's velocity and acceleration: the stream keeps every limit.
    """
    limits = MotionLimits(
        lower=np.array([-2.132]), upper=np.array([1.032]), velocity=np.array([1.425]),
        acceleration=np.array([4.275]), jerk=np.array([427.5]),
    )
    generator = JerkLimitedGenerator(limits, np.array([1.0319386]))
    generator.continue_from(np.array([1.0319386]), np.array([0.02113]), np.array([-4.2506]))
    step = generator.step(np.array([1.032]), 0.0)
    assert not step.guarded
    times = np.arange(0.0, 0.02, 0.0025)
    q, v, a = generator.sample_many(times.tolist())
    assert np.all(q <= limits.upper)
    assert np.all(np.abs(a) <= limits.acceleration + 1e-9)
    states = [(when, *rows) for when, *rows in zip(times.tolist(), q, v, a)]
    peaks = segment_peaks(states, limits)
    assert peaks.violations == 0, peaks.where
    assert v[-1, 0] == 0.0 and a[-1, 0] == 0.0  # at rest at the limit
    far = JerkLimitedGenerator(limits, np.array([1.0]))
    far.continue_from(np.array([1.0]), np.array([1.4]), np.array([0.0]))  # cannot stop: guarded
    far.step(np.array([1.032]), 0.0)
    assert far.step(np.array([1.032]), 0.1).guarded  # 0.1 s on: far beyond, brought to rest
    assert far.velocity[0] == 0.0 and far.position[0] == 1.032
