"""Joint limits and the joint limiter: limits hold at every step, convergence without overshoot."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace
import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from joint_ranges import position_ranges
import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion import (
    DEFAULT_ACCELERATION_SCALE,
    DEFAULT_MAX_DT,
    JointLimiter,
    LimiterStep,
    MotionLimits,
    TargetStatus,
)
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
import pytest

FloatArray = npt.NDArray[np.float64]

EPS = 1e-9
"""Relative and absolute slack of the floating-point comparisons."""

BAD_DTS = (0.0, -0.01, -1e9, 1e9, math.inf, -math.inf, math.nan, 0.5)


def limits_of(dof: int, speed: float = 1.0, accel: float = 3.0) -> MotionLimits:
    """Make symmetric limits: positions in [-2, 2], the given speed and acceleration."""
    return MotionLimits(
        lower=np.full(dof, -2.0),
        upper=np.full(dof, 2.0),
        velocity=np.full(dof, speed),
        acceleration=np.full(dof, accel),
    )


@st.composite
def motion_limits(
    draw: st.DrawFn, slowest: float = 0.05, ratios: tuple[float, float] = (0.2, 40.0)
) -> MotionLimits:
    """
    Draw limits for 1-8 joints: some pinned, some continuous, wide ranges of speed.

    Velocity limits are in [slowest, 8] rad/s, acceleration limits ``ratios`` times them.
    """
    dof = draw(st.integers(1, 8))
    lower, upper = position_ranges(draw, dof)
    velocity = draw(st.lists(st.floats(slowest, 8.0), min_size=dof, max_size=dof))
    ratio = draw(st.lists(st.floats(*ratios), min_size=dof, max_size=dof))
    return MotionLimits(
        lower=np.array(lower),
        upper=np.array(upper),
        velocity=np.array(velocity),
        acceleration=np.array(velocity) * np.array(ratio),
    )


def finite_box(limits: MotionLimits) -> tuple[FloatArray, FloatArray]:
    """Return the position limits with infinite bounds replaced by +-3 rad."""
    lower = np.where(np.isinf(limits.lower), -3.0, limits.lower)
    return lower, np.where(np.isinf(limits.upper), 3.0, limits.upper)


def assert_step_within_limits(
    limits: MotionLimits, before: tuple[FloatArray, FloatArray], step: LimiterStep
) -> None:
    """Assert one step kept positions, speeds, speed changes and position changes in bounds."""
    position, velocity = before
    dt = step.dt
    assert 0.0 <= dt <= DEFAULT_MAX_DT
    assert np.all(step.position >= limits.lower)
    assert np.all(step.position <= limits.upper)
    assert np.all(np.abs(step.velocity) <= limits.velocity)
    assert np.all(np.abs(step.position - position) <= limits.velocity * dt * (1 + EPS) + EPS)
    assert np.all(np.abs(step.velocity - velocity) <= limits.acceleration * dt * (1 + EPS) + EPS)
    assert np.all(step.target >= limits.lower)
    assert np.all(step.target <= limits.upper)


def expected_dt(dt: float) -> float:
    """Return the time step the limiter should integrate for a given one."""
    if not math.isfinite(dt) or dt < 0.0:
        return 0.0
    return min(dt, DEFAULT_MAX_DT)


def time_optimal(distance: FloatArray, speed: FloatArray, accel: FloatArray) -> float:
    """Return the rest-to-rest minimum time over joints for the given distances [s]."""
    cruise = distance >= speed**2 / accel
    times = np.where(cruise, distance / speed + speed / accel, 2.0 * np.sqrt(distance / accel))
    return float(times.max())


target_value = st.one_of(
    st.floats(-8.0, 8.0),
    st.sampled_from((math.nan, math.inf, -math.inf, 1e300, -1e300)),
)
time_step = st.one_of(st.floats(1e-4, 0.05), st.sampled_from(BAD_DTS), st.floats(-1.0, 1.0))
speed_scale = st.one_of(st.just(1.0), st.floats(0.0, 1.0), st.sampled_from((math.nan, -1.0, 2.0)))


# --- limits ----------------------------------------------------------------------------------


def test_limits_freeze_and_count_joints() -> None:
    """Limits are read-only float arrays with the joint count."""
    limits = limits_of(3)
    assert limits.dof == 3
    for array in (limits.lower, limits.upper, limits.velocity, limits.acceleration):
        assert array.dtype == np.float64
        assert not array.flags.writeable


@pytest.mark.parametrize(
    ('field', 'value', 'message'),
    [
        ('lower', [0.0, math.nan], 'lower must not hold NaN'),
        ('lower', [0.0, math.inf], 'lower must be below +inf; joints [1]'),
        ('upper', [1.0, -math.inf], 'upper must be above -inf; joints [1]'),
        ('upper', [1.0, -1.5], 'upper must be >= lower; joints [1]'),
        ('velocity', [1.0, 0.0], 'velocity must be finite and > 0; joints [1]'),
        ('velocity', [1.0, math.inf], 'velocity must be finite and > 0; joints [1]'),
        ('acceleration', [-1.0, 1.0], 'acceleration must be finite and > 0; joints [0]'),
        ('acceleration', [1.0, 2.0, 3.0], 'limit arrays must all have the same shape'),
        ('velocity', [], 'velocity must have shape (n,) with n >= 1'),
        ('velocity', [[1.0, 1.0]], 'velocity must have shape (n,) with n >= 1'),
        ('velocity', ['fast', 1.0], 'velocity must be an array of numbers'),
    ],
)
def test_limits_reject_each_bad_field(field: str, value: list, message: str) -> None:
    """Each broken rule raises a ConfigError naming the field (and the joints)."""
    fields = {'lower': [-1.0, -1.0], 'upper': [1.0, 1.0], 'velocity': [1.0, 1.0]}
    fields['acceleration'] = [2.0, 2.0]
    fields[field] = value
    with pytest.raises(ConfigError, match=re.escape(message)):
        MotionLimits(**fields)


def test_limits_accept_pinned_and_continuous_joints() -> None:
    """Equal lower and upper pin a joint; infinite bounds mean a continuous joint."""
    limits = MotionLimits([0.5, -math.inf], [0.5, math.inf], [1.0, 1.0], [2.0, 2.0])
    np.testing.assert_array_equal(limits.clamp([3.0, 1e9]), [0.5, 1e9])


def test_from_arm_scales_velocity_and_acceleration_and_keeps_jerk() -> None:
    """from_arm uses the arm's limits, a velocity fraction and an acceleration fraction."""
    arm = SimpleNamespace(lower=np.array([-1.0, -2.0]), upper=np.array([1.0, 2.0]),
                          velocity=np.array([2.0, 4.0]), acceleration=np.array([6.0, 12.0]),
                          jerk=np.array([120.0, 240.0]))
    limits = MotionLimits.from_arm(arm, 0.5, velocity_scale=0.5)
    np.testing.assert_array_equal(limits.velocity, [1.0, 2.0])
    np.testing.assert_array_equal(limits.acceleration, [3.0, 6.0])
    np.testing.assert_array_equal(limits.jerk, arm.jerk)
    default = MotionLimits.from_arm(arm)
    np.testing.assert_array_equal(
        default.acceleration, DEFAULT_ACCELERATION_SCALE * arm.acceleration
    )
    absolute = MotionLimits.from_arm(arm, acceleration=5.0)
    np.testing.assert_array_equal(absolute.acceleration, [5.0, 5.0])
    per_joint = MotionLimits.from_arm(arm, acceleration=[5.0, 6.0])
    np.testing.assert_array_equal(per_joint.acceleration, [5.0, 6.0])


def test_from_arm_rejects_bad_scales_and_missing_velocity_limits() -> None:
    """Out-of-range scales, a bad acceleration and an infinite URDF velocity are refused."""
    arm = SimpleNamespace(lower=np.zeros(2), upper=np.ones(2), velocity=np.array([1.0, 1.0]),
                          acceleration=np.array([3.0, 3.0]), jerk=np.array([60.0, 60.0]))
    with pytest.raises(ConfigError, match='velocity_scale'):
        MotionLimits.from_arm(arm, velocity_scale=0.0)
    for scale in (0.0, 2.0):
        with pytest.raises(ConfigError, match='acceleration_scale'):
            MotionLimits.from_arm(arm, scale)
    with pytest.raises(ConfigError, match='acceleration'):
        MotionLimits.from_arm(arm, acceleration=[1.0, 2.0, 3.0])
    with pytest.raises(ConfigError, match='acceleration must be finite and > 0'):
        MotionLimits.from_arm(arm, acceleration=0.0)
    no_limit = SimpleNamespace(lower=np.zeros(2), upper=np.ones(2), velocity=[1.0, math.inf],
                               acceleration=[3.0, 3.0], jerk=[60.0, 60.0])
    with pytest.raises(ConfigError, match=r'velocity must be finite and > 0; joints \[1\]'):
        MotionLimits.from_arm(no_limit)


@pytest.mark.parametrize('robot', shipped_robots())
def test_from_arm_builds_limits_for_every_shipped_arm(robot: str) -> None:
    """Every shipped arm yields valid limits and its neutral pose is a valid limiter state."""
    for arm in load_robot(robot).arms.values():
        limits = MotionLimits.from_arm(arm)
        assert limits.dof == arm.dof
        limiter = JointLimiter(limits, arm.neutral)
        np.testing.assert_array_equal(limiter.position, arm.neutral)


# --- limiter: construction and bad input -----------------------------------------------------


def test_limiter_starts_at_rest_at_the_clamped_position() -> None:
    """A start beyond the limits is clamped, velocity clipped, and the target is the start."""
    limits = limits_of(2)
    limiter = JointLimiter(limits, [3.0, -0.5], [5.0, -0.2])
    np.testing.assert_array_equal(limiter.position, [2.0, -0.5])
    np.testing.assert_array_equal(limiter.velocity, [1.0, -0.2])
    np.testing.assert_array_equal(limiter.target, limiter.position)
    assert not limiter.position.flags.writeable


@pytest.mark.parametrize(
    ('position', 'velocity'),
    [([0.0], None), ([0.0, math.nan], None), ([0.0, 0.0], [0.0, math.inf]), ('ab', None)],
)
def test_limiter_reset_rejects_bad_state(position: object, velocity: object) -> None:
    """A start state of the wrong shape or not finite raises ConfigError."""
    with pytest.raises(ConfigError, match='limiter'):
        JointLimiter(limits_of(2), position, velocity)


@pytest.mark.parametrize('max_dt', [0.0, -1.0, 2.0, math.nan])
def test_limiter_rejects_bad_max_dt(max_dt: float) -> None:
    """max_dt outside [1e-3, 1] s raises ConfigError."""
    with pytest.raises(ConfigError, match='max_dt'):
        JointLimiter(limits_of(1), [0.0], max_dt=max_dt)


@pytest.mark.parametrize(
    ('target', 'status'),
    [
        ([0.5, math.nan], TargetStatus.NON_FINITE),
        ([0.5, math.inf], TargetStatus.NON_FINITE),
        ([0.5], TargetStatus.WRONG_SHAPE),
        ([[0.5, 0.5]], TargetStatus.WRONG_SHAPE),
        (['a', 'b'], TargetStatus.WRONG_SHAPE),
        ([[0.5], [0.5, 1.0]], TargetStatus.WRONG_SHAPE),
        (None, TargetStatus.KEPT),
    ],
)
def test_bad_target_is_reported_and_previous_target_kept(
    target: object, status: TargetStatus
) -> None:
    """A rejected target does not raise: the status says why and the previous target stays."""
    limiter = JointLimiter(limits_of(2), [0.0, 0.0])
    limiter.step([1.0, -1.0], 0.01)
    step = limiter.step(target, 0.01)
    assert step.target_status is status
    assert status.rejected is (status is not TargetStatus.KEPT)
    np.testing.assert_array_equal(step.target, [1.0, -1.0])


def test_out_of_limit_target_is_clamped_and_reported() -> None:
    """A finite target beyond the limits is used clamped, with status CLAMPED."""
    limiter = JointLimiter(limits_of(2), [0.0, 0.0])
    step = limiter.step([5.0, -1.0], 0.01)
    assert step.target_status is TargetStatus.CLAMPED
    np.testing.assert_array_equal(step.target, [2.0, -1.0])
    assert limiter.step([1.0, -1.0], 0.01).target_status is TargetStatus.ACCEPTED


@pytest.mark.parametrize('dt', BAD_DTS)
def test_time_step_is_clamped_and_reported(dt: float) -> None:
    """A dt <= 0 or not finite gives no motion, a dt above max_dt integrates max_dt."""
    limiter = JointLimiter(limits_of(1, speed=100.0, accel=1e4), [0.0])
    step = limiter.step([1.0], dt)
    assert step.dt == expected_dt(dt)
    assert step.dt_clamped is (dt != expected_dt(dt) and not (dt == 0.0))
    if step.dt == 0.0:
        assert step.position[0] == 0.0 and step.velocity[0] == 0.0


def test_speed_scale_caps_the_speed_softly() -> None:
    """Under a speed scale the joint accelerates only to that fraction of its velocity limit."""
    limiter = JointLimiter(limits_of(1, speed=1.0, accel=10.0), [-2.0])
    for _ in range(100):
        step = limiter.step([2.0], 0.01, speed_scale=0.25)
        assert abs(step.velocity[0]) <= 0.25 + EPS
    assert step.velocity[0] == pytest.approx(0.25)
    slowed = limiter.step([2.0], 0.01, speed_scale=math.nan)
    assert slowed.velocity[0] == pytest.approx(0.25 - 0.1)


# --- limiter: properties ---------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    limits=motion_limits(),
    start=st.lists(st.floats(-1.0, 1.0), min_size=8, max_size=8),
    events=st.lists(
        st.tuples(
            st.none() | st.lists(target_value, min_size=8, max_size=8), time_step, speed_scale
        ),
        min_size=1,
        max_size=120,
    ),
)
def test_every_step_respects_all_limits(
    limits: MotionLimits,
    start: list[float],
    events: list[tuple[list[float] | None, float, float]],
) -> None:
    """Whatever the targets, time steps and speed caps, no step breaks a limit."""
    dof = limits.dof
    low, high = finite_box(limits)
    position = low + (np.array(start[:dof]) + 1.0) / 2.0 * (high - low)
    limiter = JointLimiter(limits, position)
    previous_target = limiter.target
    for raw_target, dt, scale in events:
        target = None if raw_target is None else raw_target[:dof]
        before = (limiter.position, limiter.velocity)
        step = limiter.step(target, dt, scale)
        assert step.dt == expected_dt(dt)
        assert_step_within_limits(limits, before, step)
        if target is not None and not np.isfinite(target).all():
            assert step.target_status is TargetStatus.NON_FINITE
            np.testing.assert_array_equal(step.target, previous_target)
        previous_target = step.target


@settings(max_examples=100, deadline=None)
@given(
    limits=motion_limits(slowest=0.5, ratios=(1.0, 40.0)),
    fractions=st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), min_size=8,
                       max_size=8),
    steps=st.lists(st.floats(1.0 / 240.0, 1.0 / 20.0), min_size=1, max_size=16),
)
def test_converges_to_a_reachable_target_without_overshoot_and_stays(
    limits: MotionLimits, fractions: list[tuple[float, float]], steps: list[float]
) -> None:
    """
    From rest, a constant target is approached monotonically, reached exactly, then held.

    It is reached within a few steps of the continuous time-optimal rest-to-rest time.
    """
    dof = limits.dof
    low, high = finite_box(limits)
    pairs = np.array(fractions[:dof])
    start = low + pairs[:, 0] * (high - low)
    target = low + pairs[:, 1] * (high - low)
    limiter = JointLimiter(limits, start)
    bound = time_optimal(np.abs(target - start), limits.velocity, limits.acceleration)
    elapsed, index, distance = 0.0, 0, np.abs(target - start)
    sign = np.sign(target - start)
    while not (np.array_equal(limiter.position, target) and not limiter.velocity.any()):
        before = (limiter.position, limiter.velocity)
        dt = steps[index % len(steps)]
        step = limiter.step(target, dt)
        assert_step_within_limits(limits, before, step)
        remaining = target - step.position
        assert np.all(remaining * sign >= 0.0), 'overshoot'
        assert np.all(np.abs(remaining) <= distance), 'moved away from the target'
        distance = np.abs(remaining)
        elapsed += dt
        index += 1
        assert elapsed <= bound + 10.0 * max(steps), 'too slow to converge'
    for repeat in range(50):
        step = limiter.step(target, steps[repeat % len(steps)])
        np.testing.assert_array_equal(step.position, target)
        assert not step.velocity.any()


@settings(max_examples=100, deadline=None)
@given(
    limits=motion_limits(),
    events=st.lists(
        st.tuples(st.lists(target_value, min_size=8, max_size=8), time_step, st.floats(0, 1)),
        min_size=1,
        max_size=60,
    ),
)
def test_same_inputs_give_the_same_outputs(
    limits: MotionLimits, events: list[tuple[list[float], float, float]]
) -> None:
    """Two limiters fed the same inputs produce bit-identical commands."""
    dof = limits.dof
    start = finite_box(limits)[0]
    first, second = JointLimiter(limits, start), JointLimiter(limits, start)
    for target, dt, scale in events:
        one = first.step(target[:dof], dt, scale)
        two = second.step(list(target[:dof]), dt, scale)
        np.testing.assert_array_equal(one.position, two.position)
        np.testing.assert_array_equal(one.velocity, two.velocity)
        assert one.target_status is two.target_status


def test_target_jumping_behind_a_moving_joint_brakes_at_the_limit(
    rng: np.random.Generator,
) -> None:
    """A moving joint whose target jumps behind it brakes at a_max and comes back, in limits."""
    limits = limits_of(7, speed=1.5, accel=4.5)
    limiter = JointLimiter(limits, rng.uniform(-1.0, 1.0, 7))
    for _ in range(20):
        limiter.step(np.full(7, 2.0), 1.0 / 100.0)
    assert np.all(limiter.velocity > 0.0)
    velocity = limiter.velocity
    step = limiter.step(np.full(7, -2.0), 1.0 / 100.0)
    np.testing.assert_allclose(step.velocity, velocity - 4.5 / 100.0)
    for _ in range(600):
        before = (limiter.position, limiter.velocity)
        assert_step_within_limits(limits, before, limiter.step(None, 1.0 / 100.0))
    np.testing.assert_array_equal(limiter.position, np.full(7, -2.0))


def test_a_step_too_short_to_change_speed_on_the_target_stays_put_without_warnings() -> None:
    """A time step whose speed change underflows to 0, on the target and at rest, is no motion."""
    limits = limits_of(2, speed=0.5, accel=0.1)
    limiter = JointLimiter(limits, np.array([0.2, -0.3]))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        step = limiter.step(np.array([0.2, -0.3]), 5e-324, 1.0)
    np.testing.assert_array_equal(step.position, [0.2, -0.3])
    np.testing.assert_array_equal(step.velocity, [0.0, 0.0])
