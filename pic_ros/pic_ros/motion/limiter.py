"""
Joint limits and a per-joint limiter that turns raw joint targets into a safe command stream.

The limiter keeps a commanded state (position ``q`` and velocity ``v`` per joint, [rad] and
[rad/s], or [m] and [m/s] for prismatic joints) and advances it by one time step ``dt`` [s] towards
a target. Whatever the targets, time steps and speed caps, every step satisfies, per joint::

    lower <= q <= upper,   |v| <= v_max,   |q_new - q| <= v_max * dt,   |v_new - v| <= a_max * dt

The last one holds for every command started at rest (the default of :meth:`JointLimiter.reset`);
a state reset with a velocity too high to stop before a position limit is stopped at that limit
(position limits win over the acceleration limit).

Control law (per joint, vectorised; a discrete time-optimal tracker for a target held still):

1. The target is clamped into the position limits (a non-finite target is rejected and the
   previous target kept).
2. With ``d`` the distance to the target and ``u`` the velocity towards it, the joint may move
   towards it at most at the *braking speed* ``b = sqrt((a dt)^2 + 2 a d) - a dt``, the largest
   speed ``u'`` for which the position after the step still leaves the braking distance
   ``u'^2 / (2 a)`` before the target.
3. The new speed towards the target is ``min(speed_scale * v_max, b)``, moved at most ``a dt``
   from ``u`` and then clamped to ``[-v_max, v_max]``; the position advances by ``v_new * dt``.
4. Settling: a joint that is within ``a dt^2 / 4`` of its target (and ``v_max dt``) and slower than
   ``a dt`` lands on the target with zero velocity. So a constant target is reached exactly and
   held, without the dither of an asymptotic approach, within a few steps of the continuous
   time-optimal rest-to-rest time (the tests allow 10 steps).

Why this law: because the position is integrated with the *new* velocity, a joint braking at
``a_max`` from speed ``u`` travels at most ``u^2 / (2 a_max)`` whatever the sequence of time
steps. Step 2 keeps that braking distance inside the distance to the target at every step, so a
joint starting at rest approaches a target held still monotonically, never overshoots it and
never needs more than ``a_max`` to stop, even when ``dt`` varies from step to step. A target
that jumps behind a moving joint is answered by full braking (the joint overshoots that target by
what physics requires, then comes back). Clamping the target keeps the stopping point of a joint
inside its position limits, so the limits are not touched by a command that started at rest
inside them; positions are still clamped last, as a guard, and a joint stopped by that guard
gets zero velocity.

A tracker that plans to stop at each target lags a target moving at speed ``w`` by about
``w^2 / (2 a_max) + w dt``: a larger acceleration limit tracks tighter.

Time steps: a non-finite or negative ``dt`` counts as 0 (no motion) and a ``dt`` above
``max_dt`` (default :data:`DEFAULT_MAX_DT`) is clamped to it, so a stalled loop cannot produce a
big step; the step reports the ``dt`` it used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import enum
import math
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.robot.joint_group import JointLimitsSource
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

VELOCITY_SCALE: Final = ParameterDef(
    'velocity_scale', 1.0, 'Fraction of the URDF velocity limits the commands may use',
    low=0.01, high=1.0,
)
"""The trajectory publisher's ``velocity_scale`` (:meth:`MotionLimits.from_arm`)."""

ACCELERATION_SCALE: Final = ParameterDef(
    'acceleration_scale', 1.0,
    "Fraction of the robot file's acceleration limits the commands may use (acceleration_limits "
    'of config/<robot>.yaml, or 3 x the velocity limits when it gives none)', low=0.01, high=1.0,
)
"""The trajectory publisher's ``acceleration_scale`` (:meth:`MotionLimits.from_arm`)."""

DEFAULT_ACCELERATION_SCALE: Final = ACCELERATION_SCALE.default
"""Default fraction of the robot file's acceleration limits the commands use."""

DEFAULT_MAX_DT: Final = 0.1
"""Default largest time step the limiter integrates [s]; longer steps are clamped to it."""


ArmLimitsSource = JointLimitsSource
"""What :meth:`MotionLimits.from_arm` reads: an :class:`~pic_ros.robot.arm.ArmModel`, any group."""


def _limit_array(name: str, values: npt.ArrayLike) -> FloatArray:
    """
    Convert one row of limits to a read-only float array.

    :param name: Field name for the message.
    :param values: Numbers, shape (n,) with n >= 1.
    :return: A new read-only ``float64`` array.
    :raises ConfigError: If the values are not a non-empty 1-D array of numbers or hold NaN.
    """
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError(f'{name} must be an array of numbers, got {values!r}') from error
    if array.ndim != 1 or array.size == 0:
        raise ConfigError(f'{name} must have shape (n,) with n >= 1, got shape {array.shape}')
    if np.isnan(array).any():
        raise ConfigError(f'{name} must not hold NaN, got {array.tolist()}')
    array.setflags(write=False)
    return array


def _check_rows(name: str, ok: npt.NDArray[np.bool_], values: FloatArray, rule: str) -> None:
    """
    Raise if some joints break a rule.

    :param name: Field name for the message.
    :param ok: Whether each joint follows the rule, shape (n,).
    :param values: The field's values, shape (n,).
    :param rule: The rule in words, for the message.
    :raises ConfigError: Naming the joint indices that break the rule and their values.
    """
    if not ok.all():
        bad = np.flatnonzero(~ok)
        raise ConfigError(
            f'{name} must be {rule}; joints {bad.tolist()} have {values[bad].tolist()}'
        )


LEAST_POSITION_MARGIN: Final = 0.015
"""Least distance between a command and a position limit [rad] or [m]."""

MARGIN_TIME: Final = 0.003
"""A command keeps at least the distance its joint travels at its velocity limit in this time
from a position limit [s]."""

MARGIN_SHARE: Final = 0.05
"""Largest distance between a command and a position limit, as a share of the joint's range."""


def position_margin(
    lower: npt.ArrayLike, upper: npt.ArrayLike, velocity: npt.ArrayLike
) -> FloatArray:
    """
    Return how far inside its URDF position limits each joint is commanded.

    A joint commanded exactly to a limit rests on it, where a real drive's (and the simulated
    robot's) limit stop or safety check is; the trajectory publisher plans within the limits
    narrowed by this margin, and the simulated servos keep their targets as far inside, so that
    a command never makes a joint meet a stop (``docs/interfaces.md``, ``docs/results.md``
    "Simulation").

    :param lower: Lower limits, shape (n,), [rad] or [m] (``-inf``: none).
    :param upper: Upper limits, shape (n,), [rad] or [m] (``+inf``: none).
    :param velocity: Velocity limits, shape (n,), [rad/s] or [m/s] (``inf``: none).
    :return: ``max(15 mrad, velocity x 3 ms)``, at most 5 % of the range, shape (n,).
    """
    low = np.asarray(lower, dtype=float)
    high = np.asarray(upper, dtype=float)
    speed = np.asarray(velocity, dtype=float)
    travel = np.where(np.isfinite(speed), speed * MARGIN_TIME, 0.0)
    margin = np.maximum(LEAST_POSITION_MARGIN, travel)
    span = high - low
    margin = np.where(np.isfinite(span), np.minimum(margin, MARGIN_SHARE * span), margin)
    result: FloatArray = np.where(np.isfinite(span), margin, 0.0)
    return result


@dataclass(frozen=True, eq=False)
class MotionLimits:
    """
    Position, velocity, acceleration and jerk limits of a group of joints, in their joint order.

    :param lower: Lowest positions, shape (n,), [rad] or [m]; ``-inf`` for a continuous joint.
    :param upper: Highest positions, shape (n,), [rad] or [m]; ``+inf`` for a continuous joint;
        ``lower <= upper`` (equal pins the joint).
    :param velocity: Speed limits, shape (n,), finite and > 0 [rad/s] or [m/s].
    :param acceleration: Acceleration limits, shape (n,), finite and > 0 [rad/s^2] or [m/s^2].
    :param jerk: Jerk limits, shape (n,), finite and > 0 [rad/s^3] or [m/s^3], or None (the
        :class:`JointLimiter` does not limit jerk; the
        :class:`~pic_ros.motion.generator.JerkLimitedGenerator` needs them).
    :raises ConfigError: If a shape or value breaks these rules (the message names the joints).
    """

    lower: FloatArray
    upper: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    jerk: FloatArray | None = None
    dof: int = field(init=False)

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        names: tuple[str, ...] = ('lower', 'upper', 'velocity', 'acceleration')
        if self.jerk is not None:
            names += ('jerk',)
        arrays = {name: _limit_array(name, getattr(self, name)) for name in names}
        shapes = {array.shape for array in arrays.values()}
        if len(shapes) != 1:
            listed = ', '.join(f'{name} {array.shape}' for name, array in arrays.items())
            raise ConfigError(f'limit arrays must all have the same shape, got {listed}')
        lower, upper = arrays['lower'], arrays['upper']
        _check_rows('lower', lower < math.inf, lower, 'below +inf')
        _check_rows('upper', upper > -math.inf, upper, 'above -inf')
        _check_rows('upper', lower <= upper, upper, '>= lower')
        for name in names[2:]:
            array = arrays[name]
            _check_rows(name, np.isfinite(array) & (array > 0.0), array, 'finite and > 0')
        for name, array in arrays.items():
            set_field(self, name, array)
        set_field(self, 'dof', int(lower.size))

    @classmethod
    def from_arm(
        cls,
        arm: ArmLimitsSource,
        acceleration_scale: float = DEFAULT_ACCELERATION_SCALE,
        *,
        acceleration: float | npt.ArrayLike | None = None,
        velocity_scale: float = VELOCITY_SCALE.default,
    ) -> MotionLimits:
        """
        Build the limits of an arm from its URDF limits and its robot file's limits.

        :param arm: An :class:`~pic_ros.robot.arm.ArmModel` (or anything with ``lower``,
            ``upper``, ``velocity``, ``acceleration`` and ``jerk`` arrays in the arm's joint
            order).
        :param acceleration_scale: Fraction of the arm's acceleration limits to use, in
            [0.01, 1]; used when ``acceleration`` is None.
        :param acceleration: Acceleration limit for every joint (a number) or per joint (shape
            (n,)) [rad/s^2]; overrides the arm's and ``acceleration_scale``.
        :param velocity_scale: Fraction of the URDF velocity limits to use, in [0.01, 1].
        :return: The limits, with the arm's jerk limits.
        :raises ConfigError: If a scale is out of range, the URDF gives no finite velocity limit
            for a joint, or an acceleration or jerk limit is not finite and > 0.
        """
        scale = VELOCITY_SCALE.check(velocity_scale)
        velocity = scale * np.asarray(arm.velocity, dtype=float)
        if acceleration is None:
            factor = ACCELERATION_SCALE.check(acceleration_scale)
            accel = factor * np.asarray(arm.acceleration, dtype=float)
        else:
            accel = _limit_array('acceleration', np.ravel(acceleration))
            if accel.size == 1:
                accel = np.full(velocity.shape, accel[0])
        return cls(
            lower=arm.lower, upper=arm.upper, velocity=velocity, acceleration=accel, jerk=arm.jerk
        )

    def narrowed(self, margin: npt.ArrayLike) -> MotionLimits:
        """
        Return these limits with the position limits moved inwards.

        :param margin: Distance per joint, shape (n,), >= 0, [rad] or [m] (see
            :func:`position_margin`); an infinite limit stays infinite.
        :return: The limits with ``lower + margin`` and ``upper - margin``.
        :raises ConfigError: If the margin has the wrong shape or leaves ``lower > upper``.
        """
        inwards = np.asarray(margin, dtype=float)
        if inwards.shape != self.lower.shape or np.any(~(inwards >= 0.0)):
            raise ConfigError(f'margin must be {self.dof} numbers >= 0, got {margin!r}')
        return MotionLimits(
            lower=self.lower + inwards, upper=self.upper - inwards, velocity=self.velocity,
            acceleration=self.acceleration, jerk=self.jerk,
        )

    def scaled(self, share: float) -> MotionLimits:
        """
        Return these limits with the velocity, acceleration and jerk limits scaled down.

        :param share: Factor on the three limits, in (0, 1].
        :return: The limits with ``share`` times the velocity, acceleration and jerk limits and
            the same position limits.
        :raises ConfigError: If the share is out of range.
        """
        factor = check_number('share', share, 1e-6, 1.0)
        return MotionLimits(
            lower=self.lower, upper=self.upper, velocity=factor * self.velocity,
            acceleration=factor * self.acceleration,
            jerk=None if self.jerk is None else factor * self.jerk,
        )

    def clamp(self, position: npt.ArrayLike) -> FloatArray:
        """
        Clamp positions into the position limits.

        :param position: Positions, shape (n,), [rad] or [m].
        :return: A clamped copy, shape (n,).
        """
        # np.clip's result, in two ufunc calls (np.clip's dispatch costs as much again)
        clamped: FloatArray = np.minimum(
            np.maximum(np.asarray(position, dtype=float), self.lower), self.upper
        )
        return clamped


class TargetStatus(enum.Enum):
    """What happened to a joint target handed to the limiter or the tracking supervisor."""

    ACCEPTED = 'accepted'
    """Finite, right shape, inside the position limits: used as given."""

    CLAMPED = 'clamped'
    """Finite and right shape, but outside the position limits: used clamped into them."""

    KEPT = 'kept'
    """No target given: the previous target is kept."""

    NON_FINITE = 'non_finite'
    """Rejected: NaN or inf in some joint; the previous target is kept."""

    WRONG_SHAPE = 'wrong_shape'
    """Rejected: not one value per joint; the previous target is kept."""

    STALE = 'stale'
    """Rejected by the supervisor: its stamp is not finite or is older than the last one."""

    @property
    def rejected(self) -> bool:
        """Return whether the target was dropped (the node should count it by reason)."""
        return self in (TargetStatus.NON_FINITE, TargetStatus.WRONG_SHAPE, TargetStatus.STALE)


class LimiterStep(NamedTuple):
    """
    One step of :class:`JointLimiter`: the new command and what happened to the inputs.

    :param position: Commanded positions after the step, shape (n,), [rad] or [m] (read-only).
    :param velocity: Commanded velocities after the step, shape (n,), [rad/s] or [m/s]
        (read-only).
    :param target: Target in use (clamped into the position limits), shape (n,) (read-only).
    :param dt: Time step actually integrated, in [0, max_dt] [s].
    :param dt_clamped: Whether the given ``dt`` was negative, not finite or above ``max_dt``.
    :param target_status: What happened to the given target.
    """

    position: FloatArray
    velocity: FloatArray
    target: FloatArray
    dt: float
    dt_clamped: bool
    target_status: TargetStatus


def unit_fraction(value: float) -> float:
    """
    Bring a speed scale into [0, 1] (never raises).

    :param value: The scale; NaN or a non-number counts as 0.
    :return: The scale clamped into [0, 1].
    """
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return min(max(number, 0.0), 1.0) if not math.isnan(number) else 0.0


def read_only(array: FloatArray) -> FloatArray:
    """
    Mark an array read-only and return it (internal state shared with callers).

    :param array: The array (changed in place).
    :return: The same array.
    """
    array.setflags(write=False)
    return array


def joint_state(name: str, values: npt.ArrayLike | None, dof: int) -> FloatArray:
    """
    Convert one row of a commanded state, or raise.

    :param name: What the values are, for the message.
    :param values: Numbers, shape (dof,); None for zeros (at rest).
    :param dof: Number of joints.
    :return: A new ``float64`` array, shape (dof,).
    :raises ConfigError: If the values are not ``dof`` finite numbers.
    """
    try:
        array = np.zeros(dof) if values is None else np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError(f'{name} must be {dof} finite numbers, got {values!r}') from error
    if array.shape != (dof,) or not np.isfinite(array).all():
        raise ConfigError(f'{name} must be {dof} finite numbers, got {values!r}')
    return array


def accept_target(
    limits: MotionLimits, target: npt.ArrayLike | None, previous: FloatArray
) -> tuple[TargetStatus, FloatArray]:
    """
    Check a joint target and clamp it into the position limits (never raises).

    :param limits: The joints' limits.
    :param target: Target positions, shape (n,), [rad] or [m], or None to keep ``previous``.
    :param previous: The target in use, shape (n,) (read-only).
    :return: What happened to ``target`` and the target to use from now on (read-only):
        ``previous`` unless the new one is usable.
    """
    if target is None:
        return TargetStatus.KEPT, previous
    try:
        array = np.array(target, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return TargetStatus.WRONG_SHAPE, previous
    if array.shape != (limits.dof,):
        return TargetStatus.WRONG_SHAPE, previous
    if not np.isfinite(array).all():
        return TargetStatus.NON_FINITE, previous
    clamped = read_only(limits.clamp(array))
    if (clamped == array).all():
        return TargetStatus.ACCEPTED, clamped
    return TargetStatus.CLAMPED, clamped


def clamp_dt(dt: float, max_dt: float) -> tuple[float, bool]:
    """
    Bring a time step into ``[0, max_dt]`` (never raises).

    :param dt: Time step given [s]; negative, non-finite or not a number counts as 0.
    :param max_dt: Largest time step [s].
    :return: The time step to use [s] and whether it was changed.
    """
    try:
        value = float(dt)
    except (TypeError, ValueError, OverflowError):
        return 0.0, True
    if not math.isfinite(value) or value < 0.0:
        return 0.0, True
    if value > max_dt:
        return max_dt, True
    return value, False


class JointLimiter:
    """
    Advance a joint command towards a target within position, velocity and acceleration limits.

    See the module docstring for the control law. Deterministic: the same limits, reset state,
    targets and time steps give the same outputs bit for bit.

    :param limits: Limits of the joints, in the command's joint order.
    :param position: Initial commanded position, shape (n,) (clamped into the limits).
    :param velocity: Initial commanded velocity, shape (n,) (clamped to the velocity limits);
        default: at rest.
    :param max_dt: Largest time step integrated, in [1e-3, 1] [s].
    :raises ConfigError: If ``max_dt`` is out of range or the initial state is not finite or has
        the wrong shape.
    """

    _position: FloatArray
    _velocity: FloatArray
    _target: FloatArray

    def __init__(
        self,
        limits: MotionLimits,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike | None = None,
        *,
        max_dt: float = DEFAULT_MAX_DT,
    ) -> None:
        self._limits = limits
        self._max_dt = check_number('max_dt', max_dt, 1e-3, 1.0)
        self.reset(position, velocity)

    @property
    def limits(self) -> MotionLimits:
        """Return the joint limits."""
        return self._limits

    @property
    def max_dt(self) -> float:
        """Return the largest time step integrated [s]."""
        return self._max_dt

    @property
    def position(self) -> FloatArray:
        """Return the commanded position, shape (n,), [rad] or [m] (read-only)."""
        return self._position

    @property
    def velocity(self) -> FloatArray:
        """Return the commanded velocity, shape (n,), [rad/s] or [m/s] (read-only)."""
        return self._velocity

    @property
    def target(self) -> FloatArray:
        """Return the target in use (inside the position limits), shape (n,) (read-only)."""
        return self._target

    @property
    def acceleration(self) -> None:
        """Return None: the limiter keeps no acceleration state."""
        return None

    @property
    def plans_ahead(self) -> bool:
        """Return False: the command streamed is the state after the step, not a plan."""
        return False

    def reset(
        self,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike | None = None,
        acceleration: npt.ArrayLike | None = None,
    ) -> None:
        """
        Restart from a given state (e.g. the measured joint state); the target becomes it.

        A position outside the limits (a measured state a little past a limit) is clamped into
        them, and a velocity beyond the velocity limits is clamped to them.

        :param position: Commanded position, shape (n,), [rad] or [m].
        :param velocity: Commanded velocity, shape (n,), [rad/s] or [m/s]; default: at rest.
        :param acceleration: Ignored (the limiter keeps no acceleration state); for the
            :class:`~pic_ros.motion.motion_generator.MotionGenerator` interface.
        :raises ConfigError: If a value is not finite or the shape is not (n,).
        """
        limits = self._limits
        state = [
            joint_state(f'limiter {name}', values, limits.dof)
            for name, values in (('position', position), ('velocity', velocity))
        ]
        self._position = read_only(limits.clamp(state[0]))
        self._velocity = read_only(np.clip(state[1], -limits.velocity, limits.velocity))
        self._target = self._position

    def _accept(self, target: npt.ArrayLike | None) -> TargetStatus:
        """Take a new target if it is usable (see :func:`accept_target`)."""
        status, self._target = accept_target(self._limits, target, self._target)
        return status

    def step(
        self, target: npt.ArrayLike | None, dt: float, speed_scale: float = 1.0
    ) -> LimiterStep:
        """
        Advance the command by one time step towards a target.

        Never raises on bad input: a rejected target is reported in the result and the previous
        target kept; a bad ``dt`` is clamped and reported.

        :param target: Target positions, shape (n,), [rad] or [m]; None keeps the previous target.
        :param dt: Time since the previous step [s]; clamped to ``[0, max_dt]`` (0: no motion).
        :param speed_scale: Soft cap on the speed as a fraction of the velocity limits, in [0, 1]
            (values outside are clamped, NaN counts as 0); a joint faster than the cap slows
            down to it within the acceleration limit.
        :return: The new command, the target in use and what happened to the inputs.
        """
        status = self._accept(target)
        step_dt, dt_clamped = clamp_dt(dt, self._max_dt)
        if step_dt == 0.0:
            return LimiterStep(
                self._position, self._velocity, self._target, 0.0, dt_clamped, status
            )
        limits = self._limits
        scale = unit_fraction(speed_scale)
        position, velocity, target_position = self._position, self._velocity, self._target
        v_max, accel = limits.velocity, limits.acceleration
        error = target_position - position
        direction = np.copysign(1.0, error)
        distance = np.abs(error)
        toward = direction * velocity
        speed_change = accel * step_dt
        # Braking speed sqrt((a dt)^2 + 2 a d) - a dt, written without cancellation. Distances
        # beyond full-speed braking are capped (no overflow on a far target of a continuous joint).
        reach = 2.0 * accel * np.minimum(distance, v_max * (v_max / accel + step_dt) + 1.0)
        # On the target with a step too short for any speed change (dt underflowing a * dt) both
        # are 0: the braking speed is then 0, not 0 / 0.
        denominator = np.sqrt(speed_change**2 + reach) + speed_change
        braking = np.divide(
            reach, denominator, out=np.zeros_like(reach), where=denominator > 0.0
        )
        wanted = np.minimum(scale * v_max, braking)
        new_toward = np.minimum(np.maximum(wanted, toward - speed_change), toward + speed_change)
        new_toward = np.minimum(np.maximum(new_toward, -v_max), v_max)
        new_position = position + direction * new_toward * step_dt
        # A step that stays on the braking curve cannot pass the target except by rounding.
        passed = (new_toward > 0.0) & (new_toward * step_dt >= distance) & (new_toward <= braking)
        settle = (
            (distance <= np.minimum(0.25 * speed_change * step_dt, v_max * step_dt))
            & (np.abs(toward) <= speed_change)
        )
        new_position = np.where(passed | settle, target_position, new_position)
        new_velocity = np.where(settle, 0.0, direction * new_toward)
        bounded = limits.clamp(new_position)
        stopped = bounded != new_position
        self._position = read_only(bounded)
        self._velocity = read_only(np.where(stopped, 0.0, new_velocity))
        return LimiterStep(
            self._position, self._velocity, self._target, step_dt, dt_clamped, status
        )
