"""
The feasibility bound: the best tracking an arm within its limits reaches with perfect foresight.

The live path (skeleton node -> solver node -> trajectory publisher -> controller) follows the
offline imitation's joint targets late and through predictions. This module computes, offline
over the whole recording, what a robot within its configured limits could do with *perfect
knowledge* of those targets -- past and future -- so that the live figures can be read against
it: the gap between the bound and the targets is the robot's (its limits), the gap between
the live figures and the bound is the software's.

Method (:func:`feasible_trajectory`): perfect-foresight receding-horizon tracking, per joint,
with Ruckig (Berscheid and Kroeger, *Jerk-limited Real-time Trajectory Generation with
Arbitrary Target States*, RSS 2021). The targets become a continuous trajectory (cubic Hermite
through the solved frames, velocities by central differences; held at rest before the first
and after the last). Each joint starts in the first target's state (its position and velocity,
at zero acceleration; the velocity within the limits and the speed it can brake from inside
the position limits). At every time of a grid (``step`` apart, plus every frame time) each
joint plans from its current state (position, velocity, acceleration) to the target's state
``horizon`` ahead (never past the last target) -- its position *and* velocity, known exactly --
arriving at that moment (Ruckig's ``minimum_duration``) or as soon as the limits allow, and
advances along the plan to the next grid time. On a target the limits can follow, the plan
lands on it: the arm tracks it (to about 1e-3 rad on a slow motion); before a corner the limits
cannot turn, it starts turning up to ``horizon`` early. Limits: those the live commander plans with
(:func:`~pic_ros.motion.commander.planned_limits`: velocity, acceleration, jerk, position).
Ruckig does not bound positions; as the commander's generator
(:mod:`pic_ros.motion.generator`) does, the goal is clamped into the position limits with a
speed it can brake from inside them (:func:`~pic_ros.motion.generator.safe_speed`), and a plan
that leaves them (:func:`~pic_ros.motion.generator.plan_extrema`) is replaced by the
minimum-time plan to the goal, then by the plan to the goal at rest, then by braking.

:func:`feasibility_bound` runs it for several horizons (:data:`HORIZONS`), scores each with
``evaluate``'s :func:`~pic_ros_tools.evaluation.score` (against the person as tracked) and keeps,
per metric, the best: ``bound_pacc`` is the highest pose accuracy and ``bound_elbow_mae_rad``
the lowest elbow error over the horizons. It is an upper bound in practice, not a proven
optimum: a tracker with perfect foresight, no delay and no prediction error, within the same
limits as the live commands, starting at the first target.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
import math
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion.commander import CommanderConfig, planned_limits
from pic_ros.motion.generator import plan_extrema, safe_speed
from pic_ros.motion.limiter import MotionLimits
from pic_ros.robot.robot import Robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.evaluation import at_limit, score, Trace
from pic_ros_tools.recordings.demonstration import Demonstration
import ruckig

FloatArray = npt.NDArray[np.float64]

STEP: Final = 0.01
"""Default time between two plans [s] (the trajectory publisher's default rate, 100 Hz)."""

HORIZONS: Final = (0.1, 0.25, 0.5, 0.75)
"""Foresight horizons :func:`feasibility_bound` tries [s]."""

POSITION_SLACK: Final = 1e-9
"""Excess over a position limit a plan may have (rounding) [rad] or [m]."""


@dataclass(frozen=True, eq=False)
class FeasibleTrajectory:
    """
    One arm's feasible trajectory.

    :param times: Sample times, increasing, shape (K,), [s] (the recording's clock).
    :param position: Positions, shape (K, n), [rad] or [m].
    :param velocity: Velocities, shape (K, n).
    :param acceleration: Accelerations, shape (K, n).
    :param frame_q: Positions at the frame times asked for, shape (T, n).
    :param guarded: Samples where a position had to be clamped into the limits (0 expected).
    """

    times: FloatArray
    position: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    frame_q: FloatArray
    guarded: int


def target_motion(
    times: FloatArray, targets: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """
    Return the targets' velocities at their times (central differences, one-sided at the ends).

    :param times: Target times, strictly increasing, shape (K,), [s].
    :param targets: Joint targets, shape (K, n), [rad] or [m].
    :return: Times and velocities, shape (K, n), [rad/s] or [m/s] (zeros for a single target).
    """
    if times.size < 2:
        return times, np.zeros_like(targets)
    return times, np.gradient(targets, times, axis=0)


def _hermite(
    times: FloatArray, positions: FloatArray, velocities: FloatArray, at: float
) -> tuple[FloatArray, FloatArray]:
    """Position and velocity of the cubic Hermite through the samples at ``at``, held outside."""
    if at < times[0] or at > times[-1]:
        held = positions[0] if at < times[0] else positions[-1]
        return held, np.zeros(positions.shape[1])
    if at == times[-1] or times.size == 1:
        return positions[-1], velocities[-1]
    k = int(np.searchsorted(times, at, side='right')) - 1
    h = times[k + 1] - times[k]
    s = (at - times[k]) / h
    p0, p1, m0, m1 = positions[k], positions[k + 1], velocities[k] * h, velocities[k + 1] * h
    position = (
        (2 * s**3 - 3 * s**2 + 1) * p0 + (s**3 - 2 * s**2 + s) * m0
        + (-2 * s**3 + 3 * s**2) * p1 + (s**3 - s**2) * m1
    )
    velocity = (
        (6 * s**2 - 6 * s) * p0 + (3 * s**2 - 4 * s + 1) * m0
        + (-6 * s**2 + 6 * s) * p1 + (3 * s**2 - 2 * s) * m1
    ) / h
    return position, velocity


class _JointTracker:
    """One joint's state and its Ruckig planner (see the module docstring)."""

    def __init__(
        self, limits: MotionLimits, joint: int, position: float, velocity: float
    ) -> None:
        assert limits.jerk is not None
        self.lower = float(limits.lower[joint])
        self.upper = float(limits.upper[joint])
        self.v_max = float(limits.velocity[joint])
        self.a_max = float(limits.acceleration[joint])
        self.j_max = float(limits.jerk[joint])
        self.state = [min(max(position, self.lower), self.upper), velocity, 0.0]
        self._ruckig = ruckig.Ruckig(1)
        self._plan = ruckig.Trajectory(1)
        self._input = ruckig.InputParameter(1)
        self._input.max_velocity = [self.v_max]
        self._input.max_acceleration = [self.a_max]
        self._input.max_jerk = [self.j_max]
        self._brake = ruckig.InputParameter(1)
        self._brake.control_interface = ruckig.ControlInterface.Velocity
        self._brake.max_velocity = [self.v_max]
        self._brake.max_acceleration = [self.a_max]
        self._brake.max_jerk = [self.j_max]
        self._brake.target_velocity = [0.0]
        self._brake.target_acceleration = [0.0]

    def _calculate(self, item: Any) -> bool:
        """Plan from the current state (relative to its position) into ``self._plan``."""
        item.current_position = [0.0]
        item.current_velocity = [self.state[1]]
        item.current_acceleration = [self.state[2]]
        try:
            result = self._ruckig.calculate(item, self._plan)
        except (ruckig.RuckigError, ValueError):
            return False
        return result in (ruckig.Result.Working, ruckig.Result.Finished)

    def _inside(self) -> bool:
        low, high = plan_extrema(self._plan)
        position = self.state[0]
        return bool(
            position + low[0] >= self.lower - POSITION_SLACK
            and position + high[0] <= self.upper + POSITION_SLACK
        )

    def advance(self, goal: float, speed: float, horizon: float, dt: float) -> bool:
        """
        Plan towards a goal state and move ``dt`` along the plan.

        :param goal: The target's position ``horizon`` ahead [rad] or [m].
        :param speed: Its velocity then [rad/s] or [m/s].
        :param horizon: When to arrive, at the earliest [s] (0: as soon as possible).
        :param dt: Time to advance [s], >= 0.
        :return: Whether the position had to be clamped into the limits (not expected).
        """
        goal = min(max(goal, self.lower), self.upper)
        room = (self.upper - goal if speed > 0.0 else goal - self.lower) - abs(speed) * dt
        allowed = min(self.v_max, float(safe_speed([room], [self.a_max], [self.j_max])[0]))
        speed = min(max(speed, -allowed), allowed)
        item = self._input
        item.target_position = [goal - self.state[0]]
        item.target_acceleration = [0.0]
        planned = False
        for velocity, duration in ((speed, horizon), (speed, 0.0), (0.0, 0.0)):
            item.target_velocity = [velocity]
            item.minimum_duration = duration if duration > 0.0 else None
            if self._calculate(item) and self._inside():
                planned = True
                break
        if not planned and not self._calculate(self._brake):
            self.state[1] = self.state[2] = 0.0
            return False
        position, velocity, acceleration = self._plan.at_time(min(dt, self._plan.duration))
        if dt > self._plan.duration:  # arrived at rest (or at its goal speed, then held)
            position = [position[0] + velocity[0] * (dt - self._plan.duration)]
            acceleration = [0.0]
        moved = self.state[0] + position[0]
        clamped = min(max(moved, self.lower), self.upper)
        self.state = [clamped, velocity[0], acceleration[0]]
        return bool(abs(clamped - moved) > POSITION_SLACK)


def feasible_trajectory(
    times: FloatArray,
    targets: FloatArray,
    limits: MotionLimits,
    horizon: float,
    at: FloatArray | None = None,
    step: float = STEP,
) -> FeasibleTrajectory:
    """
    Track joint targets with perfect foresight within limits (see the module docstring).

    :param times: Target times, strictly increasing, shape (K,), K >= 1, [s].
    :param targets: Joint targets, shape (K, n), [rad] or [m].
    :param limits: The limits (with jerk limits), n joints.
    :param horizon: Foresight: each plan aims at the target this far ahead [s], >= 0.
    :param at: Times at which to report the positions (``frame_q``), shape (T,), [s]; default
        ``times``.
    :param step: Time between plans [s], > 0.
    :return: The trajectory, from the first target's state until the last of ``times`` and
        ``at``, sampled every ``step`` and at every time of ``at``.
    :raises ConfigError: If the limits have no jerk limits or the inputs are malformed.
    """
    times = np.asarray(times, dtype=float)
    targets = np.asarray(targets, dtype=float)
    if limits.jerk is None:
        raise ConfigError('the feasibility bound needs jerk limits')
    if times.ndim != 1 or times.size == 0 or targets.shape != (times.size, limits.dof):
        raise ConfigError(
            f'targets must have shape (K >= 1, {limits.dof}) at K times, '
            f'got {targets.shape} at {times.shape}'
        )
    if np.any(np.diff(times) <= 0.0) or not np.all(np.isfinite(targets)):
        raise ConfigError('target times must increase strictly and targets be finite')
    if not (math.isfinite(horizon) and horizon >= 0.0 and math.isfinite(step) and step > 0.0):
        raise ConfigError(f'horizon must be >= 0 and step > 0, got {horizon} and {step}')
    report = times if at is None else np.asarray(at, dtype=float)
    _, velocities = target_motion(times, targets)
    start = float(min(times[0], report.min(initial=times[0])))
    stop = float(max(times[-1], report.max(initial=times[-1])))
    grid = np.union1d(start + step * np.arange(int(math.floor((stop - start) / step)) + 1), report)
    # the first target's velocity, at most what can brake inside the position limits
    start_at = np.clip(targets[0], limits.lower, limits.upper)
    room = np.where(velocities[0] > 0.0, limits.upper - start_at, start_at - limits.lower)
    allowed = np.minimum(limits.velocity, safe_speed(room, limits.acceleration, limits.jerk))
    first = np.clip(velocities[0], -allowed, allowed)
    trackers = [
        _JointTracker(limits, j, float(targets[0, j]), float(first[j])) for j in range(limits.dof)
    ]
    rows = np.empty((grid.size, 3, limits.dof))
    guarded = 0
    for k, now in enumerate(grid):
        if k:
            # aim at the target's state the horizon ahead, not past the last target's (after
            # it: at that target, held at rest)
            ahead = min(float(now) + horizon, float(times[-1])) if now < times[-1] else now
            goal, speed = _hermite(times, targets, velocities, float(ahead))
            dt = float(now - grid[k - 1])
            clamped = [
                tracker.advance(float(goal[j]), float(speed[j]), float(ahead - now), dt)
                for j, tracker in enumerate(trackers)
            ]
            guarded += int(any(clamped))
        rows[k] = np.array([tracker.state for tracker in trackers]).T
    frame_q = rows[np.searchsorted(grid, report), 0]
    return FeasibleTrajectory(
        times=grid,
        position=rows[:, 0],
        velocity=rows[:, 1],
        acceleration=rows[:, 2],
        frame_q=frame_q,
        guarded=guarded,
    )


def trace_with_joints(robot: Robot, trace: Trace, joints: Mapping[str, FloatArray]) -> Trace:
    """
    Return a trace whose robot is at given joints at every frame (the person unchanged).

    :param robot: The robot.
    :param trace: An imitation trace.
    :param joints: Per arm of the trace, the joints at each frame, shape (T, dof).
    :return: The trace with each arm's ``q``, landmarks (on its solved frames) and limit flags
        replaced.
    """
    arms = {}
    for name, arm_trace in trace.arms.items():
        arm = robot.arms[name]
        q = np.asarray(joints[name], dtype=float)
        landmarks = np.full_like(arm_trace.landmarks, np.nan)
        for index in np.flatnonzero(arm_trace.solved):
            landmarks[index] = arm.landmarks(q[index])
        arms[name] = replace(arm_trace, q=q, landmarks=landmarks, at_limit=at_limit(arm, q))
    return replace(trace, arms=MappingProxyType(arms))


def bound_joints(
    robot: Robot,
    trace: Trace,
    horizon: float,
    config: CommanderConfig | None = None,
    step: float = STEP,
) -> dict[str, FeasibleTrajectory]:
    """
    Return, per arm, the feasible trajectory that tracks an imitation's joint targets.

    :param robot: The robot.
    :param trace: The offline imitation (its solved frames' ``q`` are the targets).
    :param horizon: Foresight [s], >= 0.
    :param config: The trajectory publisher's settings, whose planned limits bound the arm
        (:func:`~pic_ros.motion.commander.planned_limits`; default: its defaults).
    :param step: Time between plans [s].
    :return: Per arm with a solved frame; ``frame_q`` at every frame of the trace.
    """
    config = config if config is not None else CommanderConfig()
    stamps = np.asarray(trace.stamps, dtype=float)
    runs = {}
    for name, arm_trace in trace.arms.items():
        solved = np.flatnonzero(arm_trace.solved)
        if solved.size == 0:
            continue
        limits = planned_limits(robot.arms[name], config)
        runs[name] = feasible_trajectory(
            stamps[solved], arm_trace.q[solved], limits, horizon, at=stamps, step=step
        )
    return runs


def feasibility_bound(
    robot: Robot,
    demonstration: Demonstration,
    solver: SolverConfig,
    trace: Trace,
    config: CommanderConfig | None = None,
    horizons: Sequence[float] = HORIZONS,
) -> dict[str, Any]:
    """
    Score the best feasible tracking of an imitation, as ``evaluate`` scores the imitation.

    :param robot: The robot.
    :param demonstration: The recording (segments and task arms).
    :param solver: The solver setting of the imitation (named in the records).
    :param trace: The offline imitation (:func:`~pic_ros_tools.evaluation.run_imitation`).
    :param config: The trajectory publisher's settings (its planned limits; default: defaults).
    :param horizons: Foresight horizons to try [s], at least one.
    :return: ``bound_pacc`` (the best ``pacc_paper``), ``bound_elbow_mae_rad`` (the best
        ``elbow_mae_rad``), both against the person as tracked, the horizons that gave them
        (``bound_pacc_horizon_s``, ``bound_elbow_horizon_s``), ``guarded`` samples, and
        ``records``: :func:`~pic_ros_tools.evaluation.score`'s record per horizon.
    """
    if not horizons:
        raise ConfigError('the feasibility bound needs at least one horizon')
    records: dict[float, dict[str, Any]] = {}
    guarded = 0
    for horizon in horizons:
        runs = bound_joints(robot, trace, horizon, config)
        joints = {
            name: runs[name].frame_q if name in runs else arm_trace.q
            for name, arm_trace in trace.arms.items()
        }
        guarded += sum(run.guarded for run in runs.values())
        records[horizon] = score(trace_with_joints(robot, trace, joints), demonstration, robot,
                                 solver)

    def figure(horizon: float, key: str, worst: float) -> float:
        value = records[horizon].get(key)
        return float(value) if isinstance(value, float) and math.isfinite(value) else worst

    by_pacc = max(horizons, key=lambda h: figure(h, 'pacc_paper', -math.inf))
    by_elbow = min(horizons, key=lambda h: figure(h, 'elbow_mae_rad', math.inf))
    return {
        'bound_pacc': records[by_pacc]['pacc_paper'],
        'bound_elbow_mae_rad': records[by_elbow]['elbow_mae_rad'],
        'bound_pacc_horizon_s': by_pacc,
        'bound_elbow_horizon_s': by_elbow,
        'guarded': guarded,
        'records': records,
    }


def bound_ratios(live: Mapping[str, Any], bound: Mapping[str, Any]) -> dict[str, float]:
    """
    Return the live figures against the bound.

    :param live: A :func:`~pic_ros_tools.evaluation.score` record of what the robot did.
    :param bound: :func:`feasibility_bound`'s figures for the same recording.
    :return: ``pacc_live_over_bound`` (live Pacc / bound Pacc: 1 at the bound, lower below it),
        ``pacc_live_minus_bound`` and ``elbow_mae_live_over_bound`` (live elbow MAE / bound's:
        1 at the bound, higher above it); NaN where a figure is missing or the divisor 0.
    """
    def ratio(numerator: Any, denominator: Any) -> float:
        try:
            value = float(numerator) / float(denominator)
        except (TypeError, ValueError, ZeroDivisionError):
            return math.nan
        return value

    def difference(first: Any, second: Any) -> float:
        try:
            return float(first) - float(second)
        except (TypeError, ValueError):
            return math.nan

    return {
        'pacc_live_over_bound': ratio(live.get('pacc_paper'), bound.get('bound_pacc')),
        'pacc_live_minus_bound': difference(live.get('pacc_paper'), bound.get('bound_pacc')),
        'elbow_mae_live_over_bound': ratio(
            live.get('elbow_mae_rad'), bound.get('bound_elbow_mae_rad')
        ),
    }


__all__ = [
    'bound_joints',
    'bound_ratios',
    'feasibility_bound',
    'feasible_trajectory',
    'FeasibleTrajectory',
    'HORIZONS',
    'STEP',
    'target_motion',
    'trace_with_joints',
]
