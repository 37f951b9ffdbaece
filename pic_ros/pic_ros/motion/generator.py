"""
Jerk-limited online trajectory generation: a command that reaches moving targets in minimum time.

:class:`JerkLimitedGenerator` keeps a commanded state per joint (position ``q``, velocity ``v``,
acceleration ``a``; [rad], [rad/s], [rad/s^2], or [m], [m/s], [m/s^2] for prismatic joints) and a
plan. At every control step it advances the state along the plan by ``dt`` -- the plan is what
the controller was sent at the previous step, so the command and the controller stay on one
trajectory -- and then plans anew from there, with Ruckig (Berscheid and Kroeger, *Jerk-limited
Real-time Trajectory Generation with Arbitrary Target States*, RSS 2021): the time-optimal
trajectory to the target state -- the target position and, for a moving target, its velocity --
under the velocity, acceleration and jerk limits. :meth:`JerkLimitedGenerator.sample` reads the
plan ahead, for the chunk sent to the controller. Planning anew at every step follows a moving
target; a target held still is reached in minimum time, without overshoot, and held exactly.
Each joint runs in its own minimum time unless :attr:`GeneratorConfig.synchronize` is set.

Position limits. Ruckig does not bound positions, so the generator keeps a stronger invariant
itself: *every plan stays inside the position limits and ends in a state that can brake inside
them* (to zero velocity, within the acceleration and jerk limits, after moving on at its
velocity for up to ``max_dt``). Then braking at once stays inside the limits from every state
on the plan. The candidate plans, in order (:class:`PlanKind`):

1. TARGET: to the target (clamped into the position limits) with its velocity, reduced so that
   the target state can brake inside the limits (:func:`safe_speed`), if the plan stays inside;
2. TARGET_AT_REST: to the target with zero velocity, if that plan stays inside;
3. STOP: braking at once, inside the limits by the invariant; it is also the plan for holding
   (``hold``) and for a speed cap of 0.

Positions are still clamped last, as a guard. A state beyond a limit by more than rounding in
the plans before it (:data:`_OVERSHOOT`) is also brought to rest and reported (``guarded``);
that happens only to a state reset with a velocity too high to stop before a limit.

Every step satisfies, whatever the targets, time steps and speed caps (from a state that can
brake inside the limits, e.g. any state reached by the generator from a state at rest)::

    lower <= q <= upper,  |v| <= v_max,  |a| <= a_max,  |a_new - a| <= j_max * dt

The speed cap scales the velocity limits from the step it is given on; a joint faster than a
lowered cap slows down to it within the acceleration and jerk limits. Time steps are taken as by
the :class:`~pic_ros.motion.limiter.JointLimiter` (non-finite or negative: 0; above ``max_dt``:
``max_dt``), and bad targets are dropped the same way
(:func:`~pic_ros.motion.limiter.accept_target`).

Planning is done relative to the current positions (a state at 0), which keeps continuous joints
far from 0 accurate.
"""

from __future__ import annotations

import atexit
from collections.abc import Sequence
from dataclasses import dataclass
import enum
import math
from typing import Any, Final, NamedTuple
import weakref

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.motion import plan_phases
from pic_ros.motion.limiter import (
    accept_target,
    clamp_dt,
    DEFAULT_MAX_DT,
    joint_state,
    MotionLimits,
    read_only,
    TargetStatus,
    unit_fraction,
)
import ruckig

FloatArray = npt.NDArray[np.float64]

_POSITION_SLACK = 1e-9
"""Rounding a plan may show beyond a position limit and still count as inside [rad] or [m]."""

_OVERSHOOT = 1e-4
"""How far beyond a position limit a planned state may be and keep its velocity and
acceleration when clamped [rad] or [m]. A time-optimal plan brakes as late as it can, so a state
near the end of an approach to a limit is only just able to brake inside it, and braking from
it can end some micrometres or microradians beyond (rounding in the plans before; 8 urad seen
on Baxter's ``right_s1`` in the demo). Setting such a state's velocity and acceleration to zero
as well as clamping its position stepped the acceleration: 1.45x the jerk limit between two
points of a streamed chunk. Beyond this, the state is clamped to rest
(:attr:`GeneratorStep.guarded`).
"""

_MIN_SPLIT = 1e-5
"""Shortest time between two states of :meth:`JerkLimitedGenerator.stopping` [s] (as
:data:`~pic_ros.motion.streaming.MIN_POINT_GAP`: a closer jerk switch is left out)."""

MAX_PLAN_TIME: Final = 600.0
"""Longest plan made to a far target [s] (Ruckig refuses plans of several thousand seconds)."""


@dataclass(frozen=True)
class GeneratorConfig:
    """
    Settings of :class:`JerkLimitedGenerator`.

    :param max_dt: Largest time step integrated, in [1e-3, 1] [s]; longer steps are clamped.
    :param synchronize: Make all joints reach their targets together (Ruckig's time
        synchronization) instead of each in its own minimum time.
    :raises ConfigError: If a value is out of range or of the wrong type.
    """

    max_dt: float = DEFAULT_MAX_DT
    synchronize: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, 'max_dt', check_number('max_dt', self.max_dt, 1e-3, 1.0))

        if not isinstance(self.synchronize, bool):
            raise ConfigError(f'synchronize must be true or false, got {self.synchronize!r}')


class PlanKind(enum.Enum):
    """Which plan a step of :class:`JerkLimitedGenerator` followed (see the module docstring)."""

    TARGET = 'target'
    """To the target, with its velocity (or at rest when it has none)."""

    TARGET_AT_REST = 'target_at_rest'
    """To the target at rest: its velocity could not be kept inside the position limits."""

    STOP = 'stop'
    """Braking at once: holding, a speed cap of 0, or no target plan inside the limits."""


class GeneratorStep(NamedTuple):
    """
    One step of :class:`JerkLimitedGenerator`: the new command and what happened to the inputs.

    :param position: Commanded positions after the step, shape (n,), [rad] or [m] (read-only).
    :param velocity: Commanded velocities, shape (n,), [rad/s] or [m/s] (read-only).
    :param acceleration: Commanded accelerations, shape (n,), [rad/s^2] or [m/s^2] (read-only).
    :param target: Target in use (clamped into the position limits), shape (n,) (read-only).
    :param dt: Time step actually integrated, in [0, max_dt] [s].
    :param dt_clamped: Whether the given ``dt`` was negative, not finite or above ``max_dt``.
    :param target_status: What happened to the given target.
    :param plan: The plan followed.
    :param guarded: Whether the final position clamp changed the state (a state that could not
        brake inside the limits).
    """

    position: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    target: FloatArray
    dt: float
    dt_clamped: bool
    target_status: TargetStatus
    plan: PlanKind
    guarded: bool


def safe_speed(
    distance: npt.ArrayLike, acceleration: npt.ArrayLike, jerk: npt.ArrayLike
) -> FloatArray:
    """
    Return the highest speed from which a joint at zero acceleration brakes within a distance.

    Braking from speed ``v`` at zero acceleration under the limits ``a`` and ``j`` takes
    ``v * sqrt(v / j)`` when ``v <= a^2 / j`` and ``v^2 / (2 a) + v a / (2 j)`` otherwise; this
    inverts it.

    :param distance: Room before the limit, shape (n,), >= 0 (``inf`` for none) [rad] or [m].
    :param acceleration: Acceleration limits, shape (n,), > 0.
    :param jerk: Jerk limits, shape (n,), > 0.
    :return: The speeds, shape (n,), >= 0 (``inf`` where the distance is).
    """
    d = np.maximum(np.asarray(distance, dtype=float), 0.0)
    a = np.asarray(acceleration, dtype=float)
    j = np.asarray(jerk, dtype=float)
    with np.errstate(invalid='ignore', over='ignore'):
        short = np.cbrt((d * np.sqrt(j)) ** 2)
        ramp = a * a / (2.0 * j)
        long = np.sqrt(ramp * ramp + 2.0 * a * d) - ramp
    speed: FloatArray = np.where(d <= a**3 / (j * j), short, long)
    return np.where(np.isinf(d), np.inf, speed)


_LIVE: weakref.WeakSet[JerkLimitedGenerator] = weakref.WeakSet()
"""Generators alive, whose Ruckig objects :func:`_release` frees at exit."""


@atexit.register
def _release() -> None:
    """
    Free the Ruckig objects of the generators still alive when the interpreter exits.

    Ruckig's bindings (nanobind) print a "leaked instance" report for every object still alive
    when they are torn down, which is after the atexit hooks.
    """
    for generator in list(_LIVE):
        generator._release()


def plan_extrema(plan: Any) -> tuple[FloatArray, FloatArray]:
    """
    Return the lowest and highest position of each joint over its profile in a Ruckig plan.

    :param plan: A calculated ``ruckig.Trajectory`` (one section).
    :return: Lowest and highest positions, each shape (n,), in the plan's coordinates
        (:func:`~pic_ros.motion.plan_phases.extrema`).
    """
    return plan_phases.extrema(plan_phases.phase_table(plan))


class JerkLimitedGenerator:
    """
    Advance a joint command towards a (moving) target within position to jerk limits.

    See the module docstring for the planning and the position-limit invariant. Deterministic:
    the same limits, reset state, targets and time steps give the same outputs bit for bit.

    :param limits: Limits of the joints, in the command's joint order, with jerk limits.
    :param position: Initial commanded position, shape (n,) (clamped into the limits).
    :param velocity: Initial commanded velocity, shape (n,); default: at rest.
    :param acceleration: Initial commanded acceleration, shape (n,); default: zero.
    :param config: Settings.
    :raises ConfigError: If the limits have no jerk limits or the initial state is not finite or
        has the wrong shape.
    """

    _position: FloatArray
    _velocity: FloatArray
    _acceleration: FloatArray
    _target: FloatArray

    def __init__(
        self,
        limits: MotionLimits,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike | None = None,
        acceleration: npt.ArrayLike | None = None,
        *,
        config: GeneratorConfig | None = None,
    ) -> None:
        if limits.jerk is None:
            raise ConfigError('the jerk-limited generator needs jerk limits (MotionLimits.jerk)')
        plan_phases.load()  # compiled (or read from numba's cache) now, not in a step
        self._limits = limits
        self._jerk: FloatArray = limits.jerk
        self._config = config if config is not None else GeneratorConfig()
        dof = limits.dof
        self._ruckig = ruckig.Ruckig(dof)
        self._plan_input = ruckig.InputParameter(dof)
        self._brake_input = ruckig.InputParameter(dof)
        self._brake_input.control_interface = ruckig.ControlInterface.Velocity
        synchronization = (
            ruckig.Synchronization.Time if self._config.synchronize else ruckig.Synchronization.No
        )
        for item in (self._plan_input, self._brake_input):
            item.synchronization = synchronization
            item.current_position = [0.0] * dof
            item.target_acceleration = [0.0] * dof
            item.max_acceleration = limits.acceleration.tolist()
            item.max_jerk = self._jerk.tolist()
        self._brake_input.target_velocity = [0.0] * dof
        self._stop_input = ruckig.InputParameter(dof)
        self._stop_input.control_interface = ruckig.ControlInterface.Velocity
        self._stop_input.synchronization = synchronization
        self._stop_input.current_position = [0.0] * dof
        self._stop_input.target_velocity = [0.0] * dof
        self._stop_input.target_acceleration = [0.0] * dof
        self._plan = ruckig.Trajectory(dof)
        self._plan_phases: FloatArray | None = None  # the phases of _plan, once read
        self._stop_plan = ruckig.Trajectory(dof)
        _LIVE.add(self)
        self._origin = np.zeros(dof)
        self._ends = np.zeros(dof)
        self._durations = np.zeros(dof)
        self._rests = np.zeros(dof, dtype=bool)
        self._planned = False
        self.reset(position, velocity, acceleration)

    @property
    def limits(self) -> MotionLimits:
        """Return the joint limits."""
        return self._limits

    def _release(self) -> None:
        """Drop the Ruckig objects (at exit; the generator is unusable afterwards)."""
        names = ('_ruckig', '_plan_input', '_brake_input', '_stop_input', '_plan', '_stop_plan')
        for name in names:
            setattr(self, name, None)

    @property
    def config(self) -> GeneratorConfig:
        """Return the settings."""
        return self._config

    @property
    def position(self) -> FloatArray:
        """Return the commanded position, shape (n,), [rad] or [m] (read-only)."""
        return self._position

    @property
    def velocity(self) -> FloatArray:
        """Return the commanded velocity, shape (n,), [rad/s] or [m/s] (read-only)."""
        return self._velocity

    @property
    def acceleration(self) -> FloatArray:
        """Return the commanded acceleration, shape (n,), [rad/s^2] or [m/s^2] (read-only)."""
        return self._acceleration

    @property
    def target(self) -> FloatArray:
        """Return the target in use (inside the position limits), shape (n,) (read-only)."""
        return self._target

    @property
    def plans_ahead(self) -> bool:
        """Return True: the chunk streamed samples the plan ahead of the step (:meth:`sample`)."""
        return True

    def reset(
        self,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike | None = None,
        acceleration: npt.ArrayLike | None = None,
    ) -> None:
        """
        Restart from a given state (e.g. the measured joint state); the target becomes it.

        A position outside the limits is clamped into them; a velocity or acceleration beyond
        its limits is clamped to them.

        :param position: Commanded position, shape (n,), [rad] or [m].
        :param velocity: Commanded velocity, shape (n,); default: at rest.
        :param acceleration: Commanded acceleration, shape (n,); default: zero.
        :raises ConfigError: If a value is not finite or the shape is not (n,).
        """
        self._take(position, velocity, acceleration, within_limits=True)
        self._target = self._position

    def continue_from(
        self,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike,
        acceleration: npt.ArrayLike,
    ) -> None:
        """
        Go on from a given state of the command, keeping the target; the next step plans from it.

        Unlike :meth:`reset`, a velocity or acceleration beyond the limits is kept: the next plan
        first brings it within them, within the acceleration and jerk limits (Ruckig's brake
        phase). That is how new, lower limits take effect on a moving command without a step.
        The position is clamped into the position limits.

        :param position: Commanded position, shape (n,), [rad] or [m].
        :param velocity: Commanded velocity, shape (n,).
        :param acceleration: Commanded acceleration, shape (n,).
        :raises ConfigError: If a value is not finite or the shape is not (n,).
        """
        self._take(position, velocity, acceleration, within_limits=False)

    def _take(
        self,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike | None,
        acceleration: npt.ArrayLike | None,
        within_limits: bool,
    ) -> None:
        """Check and keep a command state (position clamped; the rest too when asked)."""
        limits = self._limits
        q = joint_state('generator position', position, limits.dof)
        v = joint_state('generator velocity', velocity, limits.dof)
        a = joint_state('generator acceleration', acceleration, limits.dof)
        if within_limits:
            v = np.clip(v, -limits.velocity, limits.velocity)
            a = np.clip(a, -limits.acceleration, limits.acceleration)
        self._position = read_only(limits.clamp(q))
        self._velocity = read_only(v)
        self._acceleration = read_only(a)
        self._planned = False

    def stopping(
        self,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike,
        acceleration: npt.ArrayLike,
        limits: MotionLimits | None = None,
    ) -> list[tuple[float, FloatArray, FloatArray, FloatArray]]:
        """
        Return how a state brakes to rest at once, within the acceleration and jerk limits.

        The time-optimal braking (Ruckig, velocity interface, to zero velocity and
        acceleration), as states at its start, at every change of its jerk and at its end
        (exactly at rest): between two of them each joint moves with constant jerk, so a
        controller's quintic through them is the braking itself. From a state on a plan of this
        generator it stays inside the position limits (the module's invariant); the positions
        are clamped into them all the same.

        :param position: The state's positions, shape (n,).
        :param velocity: Its velocities, shape (n,).
        :param acceleration: Its accelerations, shape (n,).
        :param limits: The acceleration and jerk limits to brake within (default: the
            generator's).
        :return: ``(time after the state [s], positions, velocities, accelerations)``, the first
            at 0 (the state itself), the last at rest; only the first when already at rest.
        """
        origin = np.asarray(position, dtype=float)
        v = np.asarray(velocity, dtype=float)
        a = np.asarray(acceleration, dtype=float)
        first = (0.0, origin.copy(), v.copy(), a.copy())
        if not (np.any(v != 0.0) or np.any(a != 0.0)):
            return [first]
        plan = self._brake(v, a, limits)
        if plan is None:  # Ruckig refused (not seen): no braking to add
            return [first]
        duration = float(plan.duration)
        times = [0.0]
        sampled = []  # (relative positions, velocities, accelerations) at each switch
        for when in self._switches(plan, duration - _MIN_SPLIT):
            if when - times[-1] >= _MIN_SPLIT:
                times.append(when)
                sampled.append(plan.at_time(when)[:3])
        times.append(max(duration, times[-1] + _MIN_SPLIT))
        dof = self._limits.dof
        rest = plan.at_time(duration)[0]
        relative = np.array([*(row[0] for row in sampled), rest], dtype=float).reshape(-1, dof)
        q = self._limits.clamp(origin + relative)  # row by row, as one state at a time
        speeds = np.array([row[1] for row in sampled], dtype=float).reshape(-1, dof)
        accels = np.array([row[2] for row in sampled], dtype=float).reshape(-1, dof)
        zero = np.zeros(dof)
        moving = [
            (when, position, speed, accel)
            for when, position, speed, accel in zip(times[1:-1], q, speeds, accels)
        ]
        return [first, *moving, (times[-1], q[-1], zero, zero)]

    def brakes_inside(self, limits: MotionLimits) -> bool:
        """
        Return whether the current state is within some limits and brakes inside them.

        Within: ``|v| <= v_max`` and ``|a| <= a_max``; brakes inside: braking at once within
        their acceleration and jerk limits stays inside this generator's position limits. A
        state that passes may be planned under those limits from then on without a step.

        :param limits: The limits (velocity, acceleration, jerk).
        :return: Whether the state passes.
        """
        v, a = self._velocity, self._acceleration
        if np.any(np.abs(v) > limits.velocity * (1.0 + 1e-9)) or np.any(
            np.abs(a) > limits.acceleration * (1.0 + 1e-9)
        ):
            return False
        if not (np.any(v != 0.0) or np.any(a != 0.0)):
            return True
        plan = self._brake(v, a, limits)
        return plan is not None and self._inside(plan, self._position)

    def _brake(
        self, velocity: FloatArray, acceleration: FloatArray, limits: MotionLimits | None
    ) -> Any:
        """Plan braking to rest from a velocity and acceleration (None: Ruckig refused)."""
        bounds = limits if limits is not None else self._limits
        item = self._stop_input
        item.current_velocity = velocity.tolist()
        item.current_acceleration = acceleration.tolist()
        item.max_velocity = np.maximum(bounds.velocity, np.abs(velocity)).tolist()
        item.max_acceleration = bounds.acceleration.tolist()
        item.max_jerk = (bounds.jerk if bounds.jerk is not None else self._jerk).tolist()
        try:
            result = self._ruckig.calculate(item, self._stop_plan)
        except (ruckig.RuckigError, ValueError):
            return None
        if result not in (ruckig.Result.Working, ruckig.Result.Finished):
            return None
        return self._stop_plan

    def step(
        self,
        target: npt.ArrayLike | None,
        dt: float,
        speed_scale: float = 1.0,
        target_velocity: npt.ArrayLike | None = None,
        *,
        hold: bool = False,
        synchronize: bool | None = None,
    ) -> GeneratorStep:
        """
        Advance the command along the current plan by ``dt``, then plan anew from there.

        The state reached is the one the previous plan (what the controller was sent) gives
        ``dt`` later; the target, speed cap and hold given now shape the new plan, which
        :meth:`sample` reads. Never raises on bad input: a rejected target is reported and the
        previous one kept; a bad ``dt`` is clamped and reported; a non-finite target velocity
        counts as zero.

        :param target: Target positions, shape (n,), [rad] or [m]; None keeps the previous one.
        :param dt: Time since the previous step [s]; clamped to ``[0, max_dt]``.
        :param speed_scale: Cap on the speed as a fraction of the velocity limits, in [0, 1]
            (outside: clamped; NaN: 0; 0 brakes to a stop).
        :param target_velocity: Velocity of the target, shape (n,), [rad/s] or [m/s] (clamped to
            the capped velocity limits and to what can brake inside the position limits); None:
            at rest.
        :param hold: Brake to a stop and hold, whatever the target.
        :param synchronize: Make all joints reach the target together for this plan (True) or
            each in its own minimum time (False); None: as :attr:`GeneratorConfig.synchronize`.
        :return: The new command and what happened to the inputs.
        """
        together = self._config.synchronize if synchronize is None else synchronize
        self._plan_input.synchronization = (
            ruckig.Synchronization.Time if together else ruckig.Synchronization.No
        )
        status, self._target = accept_target(self._limits, target, self._target)
        step_dt, dt_clamped = clamp_dt(dt, self._config.max_dt)
        limits = self._limits
        guarded = False
        if self._planned:
            q, v, a = self._sample(step_dt)
            bounded = limits.clamp(q)
            moved = np.abs(bounded - q) > _OVERSHOOT
            guarded = bool(moved.any())
            self._position = read_only(bounded)
            self._velocity = read_only(np.where(moved, 0.0, v))
            self._acceleration = read_only(np.where(moved, 0.0, a))
        scale = unit_fraction(speed_scale)
        cap = np.maximum(scale * limits.velocity, 1e-9)
        self._origin = self._position
        self._planned = False
        kind = PlanKind.STOP
        candidates: list[tuple[PlanKind, FloatArray | None, FloatArray | None]] = []
        if not hold and scale > 0.0:
            velocity = self._target_velocity(target_velocity, cap)
            goal, speed = self._goal(velocity, cap)
            candidates.append((PlanKind.TARGET, goal, speed))
            if np.any(speed != 0.0):
                zero = np.zeros(limits.dof)
                candidates.append((PlanKind.TARGET_AT_REST, self._target, zero))
        candidates.append((PlanKind.STOP, None, None))
        for candidate, goal_position, goal_speed in candidates:
            if self._plan_to(goal_position, goal_speed, cap):
                kind = candidate
                self._planned = True
                break
        if not self._planned:  # Ruckig refused even to brake (not seen): stop where it is
            zero = read_only(np.zeros(limits.dof))
            self._velocity, self._acceleration = zero, zero
            guarded = True
        return GeneratorStep(
            self._position, self._velocity, self._acceleration, self._target, step_dt,
            dt_clamped, status, kind, guarded,
        )

    @property
    def planned(self) -> bool:
        """Return whether there is a plan (after a step; not after a reset)."""
        return self._planned

    def sample(self, ahead: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Return the planned state some time after the current one (the last step's plan).

        The positions are clamped into the limits (with zero velocity and acceleration where
        clamped by more than :data:`_OVERSHOOT`). Before any step, the current state.

        :param ahead: Time after the current state, >= 0 [s] (negative counts as 0).
        :return: Positions, velocities and accelerations, each shape (n,).
        """
        if not self._planned:
            return self._position.copy(), self._velocity.copy(), self._acceleration.copy()
        delay = ahead if math.isfinite(ahead) and ahead > 0.0 else 0.0
        q, v, a = self._sample(delay)
        bounded = self._limits.clamp(q)
        moved = np.abs(bounded - q) > _OVERSHOOT
        if not moved.any():
            return bounded, v, a
        return bounded, np.where(moved, 0.0, v), np.where(moved, 0.0, a)

    def sample_many(
        self, times: Sequence[float]
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Return the planned states at several times after the current one, as :meth:`sample`.

        :param times: Times after the current state [s] (negative counts as 0).
        :return: Positions, velocities and accelerations, each shape (k, n): row ``i`` is
            ``sample(times[i])``.
        """
        count = len(times)
        if not self._planned:
            return (
                np.tile(self._position, (count, 1)), np.tile(self._velocity, (count, 1)),
                np.tile(self._acceleration, (count, 1)),
            )
        at = np.array([t if math.isfinite(t) and t > 0.0 else 0.0 for t in times], dtype=float)
        plan = self._plan
        rows = [plan.at_time(float(t)) for t in at]
        relative = np.array([row[0] for row in rows], dtype=float).reshape(count, -1)
        velocity = np.array([row[1] for row in rows], dtype=float).reshape(count, -1)
        acceleration = np.array([row[2] for row in rows], dtype=float).reshape(count, -1)
        done = self._rests[None, :] & (at[:, None] >= self._durations[None, :])
        q = np.where(done, self._ends[None, :], self._origin[None, :] + relative)
        v = np.where(done, 0.0, velocity)
        a = np.where(done, 0.0, acceleration)
        limits = self._limits
        bounded = np.clip(q, limits.lower, limits.upper)
        moved = np.abs(bounded - q) > _OVERSHOOT
        if moved.any():
            v = np.where(moved, 0.0, v)
            a = np.where(moved, 0.0, a)
        return bounded, v, a

    def breakpoints(self, until: float) -> list[float]:
        """
        Return the times ahead of the current state where the plan's jerk changes.

        Between two of them every joint moves with constant jerk (a cubic), so a controller that
        interpolates quintic splines through the plan's states at these times (and any others)
        reproduces the plan exactly.

        :param until: End of the look-ahead [s].
        :return: Times in (0, ``until``), increasing [s] (none before any step).
        """
        if not self._planned:
            return []
        return self._switches(self._plan, until)

    def _target_velocity(
        self, target_velocity: npt.ArrayLike | None, cap: FloatArray
    ) -> FloatArray:
        """Return a usable target velocity: finite, shape (n,), within the cap (else zeros)."""
        dof = self._limits.dof
        if target_velocity is None:
            return np.zeros(dof)
        try:
            velocity = np.array(target_velocity, dtype=float)
        except (TypeError, ValueError, OverflowError):
            return np.zeros(dof)
        if velocity.shape != (dof,):
            return np.zeros(dof)
        clipped: FloatArray = np.clip(np.where(np.isfinite(velocity), velocity, 0.0), -cap, cap)
        return clipped

    def _goal(self, velocity: FloatArray, cap: FloatArray) -> tuple[FloatArray, FloatArray]:
        """
        Return the TARGET plan's goal: the target and its velocity, safe for the limits.

        The velocity is reduced to what can brake inside the position limits after moving on
        for up to ``max_dt``; a target further than :data:`MAX_PLAN_TIME` at the capped speed
        is approached through a goal that far on the way.
        """
        limits = self._limits
        reach = cap * MAX_PLAN_TIME  # a far target of a slow joint: plan part of the way
        goal = self._position + np.clip(self._target - self._position, -reach, reach)
        room = np.where(velocity > 0.0, limits.upper - goal, goal - limits.lower)
        room = room - np.abs(velocity) * self._config.max_dt
        allowed = np.minimum(cap, safe_speed(room, limits.acceleration, self._jerk))
        speed: FloatArray = np.clip(velocity, -allowed, allowed)
        return goal, speed

    def _calculate(
        self, item: Any, goal: FloatArray | None, speed: FloatArray | None, cap: FloatArray
    ) -> bool:
        """Plan from the current state into ``self._plan`` (None goal: brake); per-joint times."""
        item.current_velocity = self._velocity.tolist()
        item.current_acceleration = self._acceleration.tolist()
        item.max_velocity = cap.tolist()
        if goal is not None and speed is not None:
            item.target_position = (goal - self._position).tolist()
            item.target_velocity = speed.tolist()
        try:
            self._plan_phases = None
            result = self._ruckig.calculate(item, self._plan)
        except (ruckig.RuckigError, ValueError):  # ValueError: a result code Python lacks
            return False
        if result not in (ruckig.Result.Working, ruckig.Result.Finished):
            return False
        plan = self._plan
        durations = (
            [plan.duration] * self._limits.dof
            if item.synchronization != ruckig.Synchronization.No
            else plan.independent_min_durations
        )
        self._durations = np.array(durations, dtype=float)
        return True

    def _plan_to(self, goal: FloatArray | None, speed: FloatArray | None, cap: FloatArray) -> bool:
        """
        Plan to a goal position and speed (None: brake) and check it against the limits.

        :return: Whether the plan was made and (but for braking, safe by the invariant) stays
            inside the position limits.
        """
        if goal is None or speed is None:
            if not self._calculate(self._brake_input, None, None, cap):
                return False
            self._rests = np.ones(self._limits.dof, dtype=bool)
            end = self._plan.at_time(self._plan.duration)[0]
            self._ends = self._origin + np.asarray(end, dtype=float)
            return True
        if not self._calculate(self._plan_input, goal, speed, cap):
            return False
        self._rests = speed == 0.0
        self._ends = goal
        return self._inside(self._plan, self._position)

    def _phases(self, plan: Any) -> FloatArray:
        """Return a plan's phases (:mod:`~pic_ros.motion.plan_phases`); the current plan's once."""
        if plan is not self._plan:
            return plan_phases.phase_table(plan)
        if self._plan_phases is None:
            self._plan_phases = plan_phases.phase_table(plan)
        return self._plan_phases

    def _switches(self, plan: Any, until: float) -> list[float]:
        """Return the times in (0, ``until``) where a plan's jerk changes, increasing [s]."""
        table = self._phases(plan) if plan is self._plan else plan_phases.duration_table(plan)
        times: list[float] = plan_phases.switch_times(table, until).tolist()
        return times

    def _inside(self, plan: Any, origin: FloatArray) -> bool:
        """Return whether a plan made relative to ``origin`` stays inside the position limits."""
        low, high = plan_phases.extrema(self._phases(plan))
        limits = self._limits
        return bool(
            np.all(origin + low >= limits.lower - _POSITION_SLACK)
            and np.all(origin + high <= limits.upper + _POSITION_SLACK)
        )

    def _sample(self, time: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Return the absolute state on the current plan at ``time`` after the plan's start.

        A joint whose plan ends at rest is exactly at its end, at rest, once the plan is over
        (no rounding residue: a target held still is held exactly).
        """
        relative, velocity, acceleration = self._plan.at_time(time)[:3]
        done = self._rests & (time >= self._durations)
        return (
            np.where(done, self._ends, self._origin + np.asarray(relative, dtype=float)),
            np.where(done, 0.0, np.asarray(velocity, dtype=float)),
            np.where(done, 0.0, np.asarray(acceleration, dtype=float)),
        )
