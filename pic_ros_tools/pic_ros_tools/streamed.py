"""
What the robot really does: a recording through the imitation, the command stream and a controller.

:func:`stream_trace` takes the offline imitation of a recording (:func:`~pic_ros_tools.evaluation.
run_imitation`, as ``evaluate`` runs it) and plays its joint targets into one
:class:`~pic_ros.motion.commander.ArmCommander` per arm exactly as the trajectory publisher
calls it: a target at each frame time (of the frames where the arm was solved), followed by a
step, and a timer step at ``rate``, all on a simulated clock. Each chunk goes to a simulated
joint_trajectory_controller (:class:`~pic_ros_tools.sim.trajectory.TrajectoryFollower`, the
follower of ``sim_robot``: it interpolates from its commanded state to the chunk's point, cubic
with velocities, quintic with accelerations), whose command is sampled at ``sample_rate`` -- the
controller update rate -- and at every frame time. No process, no DDS, no wall clock: the
delays measured are those of the motion layer alone (and of the solver's own continuity), not
of the transport.

:func:`streamed_metrics` scores it per arm and per robot with the offline metrics
(:func:`~pic_ros_tools.evaluation.score` on a trace whose robot is what the controller did at
each frame time) and adds:

- ``lag_s``: the delay that best aligns the robot's elbow angle with the person's (as the
  pipeline gave them to the solver, smoothed: the delay of the motion layer and the solver; the
  smoothing's own shows in the figures against the person as tracked) -- the ``d`` that
  minimises the mean
  ``|theta_robot(t + d) - theta_person(t)|`` over ``LAG_WINDOW`` windows with motion (elbow
  range >= ``LAG_MIN_RANGE``), searched over ``LAG_SEARCH`` by 5 ms steps (the definitions of
  :mod:`pic_ros_tools.metrics`, shared with ``evaluate --live``); its median
  and 90th percentile over the windows, and the same against the offline solution's elbow;
- peak and RMS joint velocity, acceleration and jerk (finite differences of the controller's
  acceleration at ``sample_rate``) as a share of their limits, over the samples from the first
  target on;
- the share of samples with a joint at the velocity limit (``|v| >= 0.99 v_max``);
- position, velocity, acceleration and jerk limit violations (samples with a joint beyond the
  limit by more than rounding: :data:`LIMIT_SLACK`, :data:`JERK_SLACK`).

The limits are those the commander enforces (:meth:`~pic_ros.motion.limiter.MotionLimits.
from_arm` with the config's scales), jerk from the robot file.

:func:`foresight_trace` gives the imitation with each arm's targets taken ``d`` seconds later
than their frame (the solved frames' joint targets interpolated at ``t + d``): streamed, it shows
what the motion layer would do with a *perfect* prediction ``d`` ahead, which splits the gap
between the streamed figures and the feasibility bound (:mod:`pic_ros_tools.feasibility`, whose
tracker knows the whole future) into what foresight buys and what the causal tracking costs
anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
import heapq
import math
import time
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.motion.commander import ArmCommander, CommanderConfig, planned_limits
from pic_ros.motion.guard import CollisionGuard, GuardVerdict
from pic_ros.motion.limiter import MotionLimits
from pic_ros.motion.streaming import TrajectoryChunk
from pic_ros.robot.robot import Robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.evaluation import at_limit, score, SMOOTHED_PREFIX, Trace
from pic_ros_tools.metrics import (
    best_delay,
    elbow_angle,
    landmark_elbow_angle,
    limit_share,
    share_at_limit,
    window_delays,
)
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.sim.trajectory import Trajectory, TrajectoryFollower, Waypoint

FloatArray = npt.NDArray[np.float64]

SAMPLE_RATE: Final = 500.0
"""Default update rate of the simulated controller, at which its command is sampled [Hz]."""

TAIL: Final = 0.5
"""Time simulated after the last frame [s]."""

LIMIT_SLACK: Final = 1e-3
"""
Relative excess over a velocity or acceleration limit that counts as rounding.

The controller's quintic splines through the streamed points reproduce a plan to about
1e-3 rad/s^2, a few 1e-4 of the acceleration limits.
"""

JERK_SLACK: Final = 0.01
"""
Relative excess over a jerk limit that counts as rounding.

The jerk is a finite difference of the controller's acceleration, whose quintic splines through
the streamed points reproduce a plan to about 1e-3 rad/s^2: enough for a few tenths of a percent
of jerk at 500 Hz.
"""


@dataclass(frozen=True, eq=False)
class ArmRun:
    """
    One arm's controller over a streamed recording.

    :param times: Sample times of the controller, shape (K,), [s] (recording clock).
    :param position: Commanded positions, shape (K, n), [rad] or [m].
    :param velocity: Commanded velocities, shape (K, n).
    :param acceleration: Commanded accelerations, shape (K, n).
    :param frame_q: Commanded positions at each frame time, shape (T, n).
    :param start: Time of the first target [s] (NaN if none).
    :param limits: The limits the commander enforced (with the arm's jerk limits).
    :param planned: The velocity limits it planned within, shape (n,), [rad/s]
        (:func:`~pic_ros.motion.commander.planned_limits`).
    :param step_cpu_s: CPU time of each commander step that made a chunk, shape (C,), [s].
    :param chunks: Chunks sent.
    :param refused: Chunks the collision guard refused (the arm braked instead).
    """

    times: FloatArray
    position: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    frame_q: FloatArray
    start: float
    limits: MotionLimits
    planned: FloatArray
    step_cpu_s: FloatArray
    chunks: int
    refused: int = 0


def _chunk_trajectory(chunk: TrajectoryChunk) -> Trajectory:
    """
    Turn a chunk into what the controller receives (its stamp; 0: start now).

    The message carries ``header.stamp`` and each ``time_from_start`` in whole nanoseconds, so
    the controller places every point on the nanosecond, not at the float time it was made for.
    """
    return Trajectory(
        stamp=round(chunk.stamp * 1e9) * 1e-9,
        joint_names=chunk.joint_names,
        points=[
            Waypoint(
                time_from_start=nanoseconds * 1e-9,
                positions=point.positions.tolist(),
                velocities=point.velocities.tolist(),
                accelerations=(
                    [] if point.accelerations is None else point.accelerations.tolist()
                ),
            )
            for point, nanoseconds in zip(chunk.points, chunk.times_ns)
        ],
    )


def stream_trace(
    robot: Robot,
    trace: Trace,
    config: CommanderConfig,
    sample_rate: float = SAMPLE_RATE,
    guard: CollisionGuard | None = None,
) -> dict[str, ArmRun]:
    """
    Stream an offline imitation's targets through the commanders to simulated controllers.

    Every arm starts at its neutral pose (as the offline imitation does), told by
    ``start_from`` as ``joint_states`` would, engaged (as after an operator's engage); timer
    steps come at ``rate``, half a period off the first frame. The arms are stepped together,
    as the trajectory publisher steps them: at a frame, every arm solved there takes its target
    and is stepped; at a timer step, every arm is. With a collision guard, each such step's
    chunks are checked together and a refused arm sends what the guard makes instead (its
    step with the joints moving together, else a brake), as the trajectory publisher does (the
    torso at its neutral lift).

    :param robot: The robot.
    :param trace: The offline imitation of the recording (:func:`run_imitation`).
    :param config: The trajectory publisher's settings.
    :param sample_rate: Update rate of the simulated controllers [Hz], > 0.
    :param guard: The trajectory publisher's collision guard for the robot, or None (none).
    :return: What each arm's controller did, by arm name.
    """
    stamps = np.asarray(trace.stamps, dtype=float)
    start, stop = float(stamps[0]), float(stamps[-1]) + TAIL
    grid = start + np.arange(0.0, stop - start, 1.0 / sample_rate)
    ticks = start + config.period * (0.5 + np.arange(0.0, (stop - start) / config.period))
    names = list(trace.arms)
    commanders, followers = {}, {}
    for name in names:
        arm = robot.arms[name]
        commanders[name] = ArmCommander(arm, config, engaged=True)
        commanders[name].start_from(arm.neutral)
        followers[name] = TrajectoryFollower(arm.joint_names, arm.lower, arm.upper, arm.neutral)
    solved_at = [
        [name for name in names if trace.arms[name].solved[k]] for k in range(len(stamps))
    ]
    # Events: (time, order, index); at one time the samples come first (the state before a
    # new chunk, which starts from that state anyway), then targets, then timer steps.
    events: list[tuple[float, int, int]] = []
    events += [(float(t), 0, k) for k, t in enumerate(grid)]
    events += [(float(t), 1, k) for k, t in enumerate(stamps)]
    events += [(float(stamps[k]), 2, k) for k in range(len(stamps)) if solved_at[k]]
    events += [(float(t), 3, k) for k, t in enumerate(ticks)]
    heapq.heapify(events)
    samples: dict[str, list[tuple[FloatArray, FloatArray, FloatArray]]] = {n: [] for n in names}
    frame_q = {name: np.empty((len(stamps), robot.arms[name].dof)) for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    chunks = dict.fromkeys(names, 0)
    refused = dict.fromkeys(names, 0)
    while events:
        now, kind, index = heapq.heappop(events)
        if kind < 2:
            for name in names:
                command = followers[name].sample(now)
                if kind == 0:
                    samples[name].append(
                        (command.positions, command.velocities, command.accelerations)
                    )
                else:
                    frame_q[name][index] = command.positions
            continue
        stepped = dict.fromkeys(names, 0.0)  # the arms stepped, and their CPU time so far [s]
        if kind == 2:
            stepped = {}
            for name in solved_at[index]:
                begin = time.thread_time()
                arm = robot.arms[name]
                target = dict(zip(arm.joint_names, trace.arms[name].q[index].tolist()))
                if not commanders[name].on_target(now, target).rejected:
                    stepped[name] = time.thread_time() - begin
        made: dict[str, TrajectoryChunk] = {}
        for name, spent in stepped.items():
            begin = time.thread_time()
            chunk = commanders[name].step(now)
            if chunk is not None:  # a skipped step costs next to nothing
                cpu[name].append(spent + time.thread_time() - begin)
                made[name] = chunk
        if guard is not None and made and guard.enabled:
            verdict = _guarded(guard, commanders, made, now)
            made = verdict.to_send(made)
            for name in verdict.refused:
                refused[name] += 1
        for name, chunk in made.items():
            followers[name].set_trajectory(_chunk_trajectory(chunk), now)
            chunks[name] += 1
    runs = {}
    for name in names:
        arm = robot.arms[name]
        solved = np.flatnonzero(trace.arms[name].solved)
        runs[name] = ArmRun(
            times=grid,
            position=np.array([s[0] for s in samples[name]]),
            velocity=np.array([s[1] for s in samples[name]]),
            acceleration=np.array([s[2] for s in samples[name]]),
            frame_q=frame_q[name],
            start=float(stamps[solved[0]]) if solved.size else math.nan,
            limits=MotionLimits.from_arm(
                arm, config.acceleration_scale, velocity_scale=config.velocity_scale
            ),
            planned=planned_limits(arm, config).velocity,
            step_cpu_s=np.array(cpu[name]),
            chunks=chunks[name],
            refused=refused[name],
        )
    return runs


def _guarded(
    guard: CollisionGuard,
    commanders: Mapping[str, ArmCommander],
    chunks: Mapping[str, TrajectoryChunk],
    now: float,
) -> GuardVerdict:
    """Check a step's chunks as the trajectory publisher does (torso neutral); the verdict."""
    commands = {
        name: commander.position for name, commander in commanders.items()
        if commander.position is not None
    }
    return guard.check(
        chunks, commands, None, now, brake=lambda name: commanders[name].brake(now),
        straighten=lambda name: commanders[name].straighten(now),
    )


def followed_trace(robot: Robot, trace: Trace, runs: Mapping[str, ArmRun]) -> Trace:
    """
    Return the trace of what the robot did: the controllers' positions at the frame times.

    :param robot: The robot.
    :param trace: The offline imitation.
    :param runs: :func:`stream_trace`'s output for it.
    :return: The trace with each arm's ``q``, landmarks and limit flags replaced.
    """
    arms = {}
    for name, arm_trace in trace.arms.items():
        arm = robot.arms[name]
        q = runs[name].frame_q
        landmarks = np.full_like(arm_trace.landmarks, np.nan)
        for index in np.flatnonzero(arm_trace.solved):
            landmarks[index] = arm.landmarks(q[index])
        arms[name] = replace(arm_trace, q=q, landmarks=landmarks, at_limit=at_limit(arm, q))
    return replace(trace, arms=MappingProxyType(arms))


def foresight_trace(trace: Trace, ahead: float) -> Trace:
    """
    Return the imitation with its joint targets known ``ahead`` seconds early.

    Each arm's target at a solved frame becomes its targets linearly interpolated at the
    frame's stamp plus ``ahead`` (over the solved frames; the last one held at the end). The
    people, and so the scores' references, are unchanged: streaming the result
    (:func:`stream_trace`) measures the motion layer fed by a perfect prediction.

    :param trace: The offline imitation (:func:`~pic_ros_tools.evaluation.run_imitation`).
    :param ahead: Foresight [s], finite, >= 0 (0: the trace unchanged).
    :return: The trace with each arm's ``q`` replaced at its solved frames.
    :raises ValueError: If ``ahead`` is negative or not finite.
    """
    if not math.isfinite(ahead) or ahead < 0.0:
        raise ValueError(f'ahead must be finite and >= 0 [s], got {ahead!r}')
    if ahead == 0.0:
        return trace
    stamps = np.asarray(trace.stamps, dtype=float)
    arms = {}
    for name, arm_trace in trace.arms.items():
        solved = np.flatnonzero(arm_trace.solved)
        q = arm_trace.q.copy()
        if solved.size:
            times = stamps[solved]
            for joint in range(q.shape[1]):
                q[solved, joint] = np.interp(times + ahead, times, arm_trace.q[solved, joint])
        arms[name] = replace(arm_trace, q=q)
    return replace(trace, arms=MappingProxyType(arms))


def _one_arm(trace: Trace, name: str) -> Trace:
    return replace(trace, arms=MappingProxyType({name: trace.arms[name]}))


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else math.nan


def controller_figures(run: ArmRun) -> dict[str, Any]:
    """
    Return the speed, acceleration and jerk figures of one arm's controller.

    :param run: The arm's run.
    :return: Peaks, RMS and violations as shares of the limits, the share of samples at the
        velocity limit the commands are planned within, and the commander's CPU time per step
        (p50, p99) [us].
    """
    limits = run.limits
    used = run.times >= run.start
    position = run.position[used]
    velocity = run.velocity[used]
    acceleration = run.acceleration[used]
    jerk = np.diff(acceleration, axis=0) / np.diff(run.times[used])[:, None]
    assert limits.jerk is not None
    outside = (position < limits.lower - 1e-9) | (position > limits.upper + 1e-9)
    v_peak, v_rms, v_beyond = limit_share(velocity, limits.velocity, LIMIT_SLACK)
    a_peak, a_rms, a_beyond = limit_share(acceleration, limits.acceleration, LIMIT_SLACK)
    j_peak, j_rms, j_beyond = limit_share(jerk, limits.jerk, JERK_SLACK)
    cpu = run.step_cpu_s * 1e6
    return {
        'velocity_peak': v_peak,
        'velocity_rms': v_rms,
        'acceleration_peak': a_peak,
        'acceleration_rms': a_rms,
        'jerk_peak': j_peak,
        'jerk_rms': j_rms,
        'at_velocity_limit': share_at_limit(velocity, run.planned),
        'position_violations': int(np.count_nonzero(np.any(outside, axis=1))),
        'velocity_violations': v_beyond,
        'acceleration_violations': a_beyond,
        'jerk_violations': j_beyond,
        'step_us_p50': _percentile(cpu.tolist(), 50.0),
        'step_us_p99': _percentile(cpu.tolist(), 99.0),
        'chunks': run.chunks,
        'guard_refused': run.refused,
    }


def streamed_metrics(
    robot: Robot,
    demonstration: Demonstration,
    solver: SolverConfig,
    trace: Trace,
    runs: Mapping[str, ArmRun],
) -> dict[str, Any]:
    """
    Score what the robot did against the offline figures, per arm and for the robot.

    :param robot: The robot.
    :param demonstration: The recording (segments and task arms, as ``evaluate`` scores them).
    :param solver: The solver setting of the imitation.
    :param trace: The offline imitation.
    :param runs: :func:`stream_trace`'s output for it.
    :return: ``{'offline': record, 'live': record, 'arms': {name: figures}}``; the records are
        ``evaluate``'s (:func:`~pic_ros_tools.evaluation.score`); the arm figures hold the
        offline and live ``pacc_paper`` and ``elbow_mae_rad`` of that arm alone (against the
        person as tracked; ``_smoothed``: as smoothed), the lags
        (:func:`~pic_ros_tools.metrics.window_delays`: ``lag_s_p50``, ``lag_s_p90``,
        ``lag_offline_s_p50``, whole recording ``lag_s``) and :func:`controller_figures`.
    """
    live = followed_trace(robot, trace, runs)
    arms: dict[str, Any] = {}
    for name, arm_trace in trace.arms.items():
        run = runs[name]
        offline_arm = score(_one_arm(trace, name), demonstration, robot, solver)
        live_arm = score(_one_arm(live, name), demonstration, robot, solver)
        arm = robot.arms[name]
        sampled = run.times >= run.start
        robot_elbow = landmark_elbow_angle(
            np.array([arm.landmarks(q) for q in run.position[sampled]])
        ) if np.any(sampled) else np.zeros(0)
        sample_times = run.times[sampled]
        person = np.full(len(trace.stamps), np.nan)
        solved = arm_trace.solved
        human = arm_trace.human[solved]
        person[solved] = elbow_angle(human[:, 0], human[:, 1], human[:, 2])
        offline = np.full(len(trace.stamps), np.nan)
        offline[solved] = landmark_elbow_angle(arm_trace.landmarks[solved])
        figures: dict[str, Any] = {
            'pacc_offline': offline_arm['pacc_paper'],
            'pacc_live': live_arm['pacc_paper'],
            'elbow_mae_offline': offline_arm['elbow_mae_rad'],
            'elbow_mae_live': live_arm['elbow_mae_rad'],
            'pacc_offline_smoothed': offline_arm[SMOOTHED_PREFIX + 'pacc_paper'],
            'pacc_live_smoothed': live_arm[SMOOTHED_PREFIX + 'pacc_paper'],
            'elbow_mae_offline_smoothed': offline_arm[SMOOTHED_PREFIX + 'elbow_mae_rad'],
            'elbow_mae_live_smoothed': live_arm[SMOOTHED_PREFIX + 'elbow_mae_rad'],
        }
        if sample_times.size:
            lags = window_delays(trace.stamps, person, sample_times, robot_elbow)
            offline_lags = window_delays(trace.stamps, offline, sample_times, robot_elbow)
            valid = np.isfinite(person)
            figures.update(
                lag_s=best_delay(
                    trace.stamps[valid], person[valid], sample_times, robot_elbow
                ) if np.any(valid) else math.nan,
                lag_s_p50=_percentile(lags.tolist(), 50.0),
                lag_s_p90=_percentile(lags.tolist(), 90.0),
                lag_offline_s_p50=_percentile(offline_lags.tolist(), 50.0),
                lag_windows=len(lags),
            )
        figures.update(controller_figures(run))
        arms[name] = figures
    return {
        'offline': score(trace, demonstration, robot, solver),
        'live': score(live, demonstration, robot, solver),
        'arms': arms,
    }


__all__ = [
    'ArmRun',
    'controller_figures',
    'followed_trace',
    'foresight_trace',
    'stream_trace',
    'streamed_metrics',
]
