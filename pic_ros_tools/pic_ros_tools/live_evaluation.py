"""
What the robot really did in a live run, scored like ``evaluate`` scores the offline solution.

Input is a :class:`~pic_ros_tools.demo_report.DemoRecording` of the streaming path (replay ->
skeleton_node -> solver_node -> trajectory_publisher -> sim_robot,
:mod:`pic_ros_tools.ros.live_run`) and the
:class:`~pic_ros_tools.recordings.demonstration.Demonstration` that was replayed.

:func:`live_trace` builds the offline evaluation's :class:`~pic_ros_tools.evaluation.Trace` from
it: each skeleton the pipeline published is matched to the recording's frame of the same capture
stamp; the person is that skeleton (as the pipeline saw it), placed on each robot arm by the same
correspondence; the robot is the simulated robot's ``joint_states`` interpolated at the moment
the skeleton was published (frames the pipeline did not publish are timed by interpolating the
stamps). The reference person is the replayed frame itself as tracked (unsmoothed,
:func:`~pic_ros_tools.evaluation.place_tracked`), as ``evaluate``'s is; the published skeleton
is the smoothed one. :func:`~pic_ros_tools.evaluation.score` then gives the same figures as
``evaluate`` (pose accuracy, elbow error, direction errors, wrist error, limits, jumps, each
against the person as tracked and as smoothed), so a robot that lags or cuts corners scores
lower than the offline solution.

:func:`live_record` adds, per arm:

- ``lag_s``: the delay that best aligns the robot's elbow angle with the person's (as published,
  smoothed: the delay after the skeleton node) over the whole run, and ``lag_s_p50`` /
  ``lag_s_p90`` over 2 s windows with motion
  (:func:`~pic_ros_tools.metrics.best_delay`, :func:`~pic_ros_tools.metrics.window_delays`,
  searched over 0..500 ms by 5 ms);
- for the simulated robot (its joint_states, finite differences) and for the streamed commands
  (their velocities): peak and RMS velocity, acceleration and jerk as a share of the limits the
  trajectory publisher enforces, the samples beyond them, and the share of samples with a joint
  at 99 % of its velocity limit (the limit the commands are planned within,
  :func:`~pic_ros.motion.commander.planned_limits`). Jerk is a share when the robot file gives
  jerk limits, else in [rad/s^3]. The finite differences are divided differences
  (:func:`~pic_ros_tools.metrics.derivatives`), which never read above the true peak however
  unevenly joint_states are stamped;
- for the offline imitation's joint targets (``targets``, :func:`target_figures`): their speed
  against the same limits -- what the person asks of the arm, so the share of time the robot
  must spend at its velocity limit whatever the motion layer does.

and, for the whole robot, ``occlusion``: the PIC paper's PO (:func:`live_occlusion`) of the
simulated robot on the run's frames, beside the person's and the offline solution's on the same
frames, when the recording has a task surface; and ``bound``: the feasibility bound of the same
recording (:func:`~pic_ros_tools.feasibility.feasibility_bound`: the best tracking of the
offline targets within the limits the commands are planned with, with perfect foresight of
them) -- ``bound_pacc``, ``bound_elbow_mae_rad`` -- and the live figures against it
(:func:`~pic_ros_tools.feasibility.bound_ratios`): how much of the gap to the offline figures
is the robot's limits and how much the software's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence import MappingConfig
from pic_ros.imitation import RobotImitator
from pic_ros.motion.commander import CommanderConfig, planned_limits
from pic_ros.motion.limiter import MotionLimits
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.robot import Robot
from pic_ros.skeleton import make_frame
from pic_ros.solvers import SolverConfig
from pic_ros_tools.demo_report import arm_states, DemoRecording
from pic_ros_tools.evaluation import (
    ArmTrace,
    AT_LIMIT,
    EvaluationSettings,
    place_tracked,
    reference_correspondences,
    run_imitation,
    score,
    SMOOTHED_PREFIX,
    Trace,
)
from pic_ros_tools.feasibility import bound_ratios, feasibility_bound
from pic_ros_tools.metrics import (
    best_delay,
    derivatives,
    elbow_angle,
    landmark_elbow_angle,
    limit_share,
    LimitShare,
    share_at_limit,
    window_delays,
)
from pic_ros_tools.occlusion_scores import occlusion_figures
from pic_ros_tools.recordings.demonstration import Demonstration

FloatArray = npt.NDArray[np.float64]

STAMP_MATCH: Final = 1e-3
"""Largest difference between a skeleton's stamp and its recording frame's [s]."""

ROBOT_VELOCITY_SLACK: Final = 0.1
"""
How far the simulated joints' velocity may go beyond the limit before a run is invalid (10 %).

The simulated servos follow the reference with the coupling between the joints (a few percent
beyond the velocity limit on a valid run, ``docs/usage.md`` *evaluate --live*); the controllers'
reference itself is checked exactly (``segment_violations``). The joints' accelerations from finite
differences of ``joint_states`` carry the physics' transients and are reported, not judged.
"""

REFERENCE_SLACK: Final = 0.1
"""
How far a simulated controller's reference may go beyond a limit before a run is invalid (10 %).

A streamed chunk that reaches the controller later than the trajectory publisher's
``plan_ahead`` is joined to the command (``sim_robot`` counts it in ``segment_violations`` when
that breaks a limit at all); a join of a few ms of divergence goes a few percent beyond, a
frozen or jumping stream far beyond.
"""


def _interpolate(times: FloatArray, rows: FloatArray, at: FloatArray) -> FloatArray:
    """Interpolate rows (K, n) linearly at times (m,), held at the ends; NaN without rows."""
    if times.size == 0:
        return np.full((at.size, rows.shape[1]), np.nan)
    return np.column_stack([np.interp(at, times, rows[:, j]) for j in range(rows.shape[1])])


def frame_times(demonstration: Demonstration, recording: DemoRecording) -> FloatArray:
    """
    Time every frame of the recording on the run's clock.

    A frame the pipeline published takes the time its skeleton was heard; the others are
    interpolated (extrapolated at the ends) from the published ones by their stamps.

    :param demonstration: The recording that was replayed.
    :param recording: The run.
    :return: Shape (T,), [s]; NaN everywhere when no skeleton matched a frame.
    """
    stamps = np.array([frame.stamp for frame in demonstration.frames], dtype=float)
    matched = _matches(stamps, recording)
    times = np.full(stamps.size, np.nan)
    if not matched:
        return times
    frames = np.array(list(matched), dtype=int)
    heard = np.array([recording.skeleton_times[i] for i in matched.values()], dtype=float)
    offset = float(np.median(heard - stamps[frames]))
    times = np.asarray(np.interp(stamps, stamps[frames], heard), dtype=float)
    before, after = stamps < stamps[frames[0]], stamps > stamps[frames[-1]]
    times[before | after] = stamps[before | after] + offset
    return times


def _matches(stamps: FloatArray, recording: DemoRecording) -> dict[int, int]:
    """Map recording frame indices to the index of the live skeleton with that stamp."""
    matched: dict[int, int] = {}
    if stamps.size == 0:
        return matched
    for index, stamp in enumerate(recording.skeleton_stamps):
        frame = int(np.clip(np.searchsorted(stamps, stamp), 1, stamps.size - 1))
        if abs(stamps[frame - 1] - stamp) < abs(stamps[frame] - stamp):
            frame -= 1
        if stamps.size == 1:
            frame = 0
        if abs(stamps[frame] - stamp) <= STAMP_MATCH:
            matched[frame] = index
    return matched


def avoided_skeletons(
    demonstration: Demonstration, recording: DemoRecording, trace: Trace
) -> list[bool]:
    """
    Tell, for every skeleton of a run, whether the self-collision avoidance acted on its frame.

    :param demonstration: The recording that was replayed.
    :param recording: The run.
    :param trace: The offline imitation of the recording with the run's settings (the solver
        node's own answers, frame for frame).
    :return: Per skeleton heard, in order: whether the avoidance moved the solvers' answer.
    """
    acting = [False] * len(recording.skeleton_stamps)
    if trace.avoided is None:
        return acting
    stamps = np.array([frame.stamp for frame in demonstration.frames], dtype=float)
    for frame, index in _matches(stamps, recording).items():
        acting[index] = bool(trace.avoided[frame])
    return acting


def place_skeletons(
    robot: Robot, recording: DemoRecording, mapping: MappingConfig | None = None
) -> list[dict[str, FloatArray]]:
    """
    Place every skeleton of a run on the robot's arms, as the solver node placed it.

    :param robot: The robot.
    :param recording: The run (body-frame skeletons in the order heard).
    :param mapping: The solver node's mapping and correspondence (default the robot file's).
    :return: Per skeleton, per arm whose driving human arm was placed: shoulder, elbow and wrist
        targets, robot base frame, shape (3, 3), [m] (anchored at the robot's neutral shoulder
        landmark; ``direction`` at the robot's link lengths).
    """
    imitator = RobotImitator(robot, SolverConfig(), mapping)
    placed: list[dict[str, FloatArray]] = []
    for stamp, joints in zip(recording.skeleton_stamps, recording.skeletons):
        body = make_frame(stamp, joints, frame='body')
        arms: dict[str, FloatArray] = {}
        for name, correspondence in imitator.correspondences.items():
            targets = correspondence.place(body)
            if targets is not None:
                arms[name] = np.array((targets.shoulder, targets.elbow, targets.wrist))
        placed.append(arms)
    return placed


def live_trace(
    robot: Robot,
    demonstration: Demonstration,
    recording: DemoRecording,
    mapping: MappingConfig | None = None,
    delay: float = 0.0,
) -> Trace:
    """
    Build the evaluation trace of what the simulated robot did (see the module docstring).

    :param robot: The robot.
    :param demonstration: The recording that was replayed (its frames' stamps are the skeletons').
    :param recording: The run.
    :param mapping: The solver node's mapping and correspondence (default the robot file's).
    :param delay: Compare each skeleton with the robot this much later [s] (0: at the same
        moment, what the issue's live figures use).
    :return: The trace: ``solved`` where the pipeline published the frame's skeleton and the
        correspondence placed the arm; ``q`` the robot's joints at every frame's time; the
        person as published (``human``, smoothed) and as tracked (``tracked``).
    """
    imitator = RobotImitator(robot, SolverConfig(), mapping)
    reference = reference_correspondences(imitator)
    placed = place_skeletons(robot, recording, mapping)
    stamps = np.array([frame.stamp for frame in demonstration.frames], dtype=float)
    count = stamps.size
    at = frame_times(demonstration, recording) + delay
    matched = _matches(stamps, recording)
    as_tracked = {
        index: place_tracked(demonstration.frames[index], reference) for index in sorted(matched)
    }
    arms: dict[str, ArmTrace] = {}
    for name, correspondence in imitator.correspondences.items():
        arm = robot.arms[name]
        state_times, states = arm_states(arm, recording)
        q = _interpolate(state_times, states, np.nan_to_num(at))
        solved = np.zeros(count, dtype=bool)
        human = np.full((count, 3, 3), np.nan)
        targets = np.full((count, 3, 3), np.nan)
        landmarks = np.full((count, 5, 3), np.nan)
        tracked = np.full((count, 3, 3), np.nan)
        tracked_targets = np.full((count, 3, 3), np.nan)
        for index, heard in sorted(matched.items()):
            if name not in placed[heard] or not np.all(np.isfinite(q[index])):
                continue
            solved[index] = True
            body = make_frame(
                recording.skeleton_stamps[heard], recording.skeletons[heard], frame='body'
            )
            human[index] = body.arm(correspondence.human_side)
            targets[index] = placed[heard][name]
            landmarks[index] = arm.landmarks(q[index])
            if name in as_tracked[index]:
                tracked[index], raw = as_tracked[index][name]
                tracked_targets[index] = (raw.shoulder, raw.elbow, raw.wrist)
        arms[name] = ArmTrace(
            human_side=correspondence.human_side,
            solved=solved,
            q=q,
            human=human,
            targets=targets,
            landmarks=landmarks,
            solve_time=np.full(count, np.nan),
            iterations=np.full(count, -1, dtype=np.int64),
            at_limit=(q <= arm.work_lower + AT_LIMIT) | (q >= arm.work_upper - AT_LIMIT),
            tracked=tracked,
            tracked_targets=tracked_targets,
        )
    return Trace(
        stamps=stamps,
        arms=MappingProxyType(arms),
        dropped=count - len(matched),
        correspondence=imitator.mapping_config.correspondence,
    )


def elbow_traces(
    robot: Robot, trace: Trace, recording: DemoRecording, times: FloatArray
) -> dict[str, dict[str, FloatArray]]:
    """
    Return the person's and the simulated robot's elbow angle over time, per arm.

    :param robot: The robot.
    :param trace: :func:`live_trace` of the run.
    :param recording: The run.
    :param times: Each frame's time on the run's clock (:func:`frame_times`), shape (T,), [s].
    :return: Per arm: ``person_times``/``person`` (solved frames), ``robot_times``/``robot``
        (every joint_states sample) [s] and [rad].
    """
    traces: dict[str, dict[str, FloatArray]] = {}
    for name, arm_trace in trace.arms.items():
        arm = robot.arms[name]
        state_times, states = arm_states(arm, recording)
        human = arm_trace.human[arm_trace.solved]
        robot_landmarks = np.array([arm.landmarks(q) for q in states]).reshape(-1, 5, 3)
        traces[name] = {
            'person_times': times[arm_trace.solved],
            'person': elbow_angle(human[:, 0], human[:, 1], human[:, 2]),
            'robot_times': state_times,
            'robot': landmark_elbow_angle(robot_landmarks),
        }
    return traces


def command_limits(arm: ArmModel, config: CommanderConfig | None = None) -> MotionLimits:
    """
    Return the limits the trajectory publisher enforces on an arm.

    :param arm: The arm.
    :param config: The trajectory publisher's settings (default: its defaults).
    :return: Position, velocity and acceleration limits.
    """
    config = config if config is not None else CommanderConfig()
    return MotionLimits.from_arm(
        arm, config.acceleration_scale, velocity_scale=config.velocity_scale
    )


def _share(name: str, share: LimitShare, relative: bool = True) -> dict[str, Any]:
    suffix = '' if relative else '_abs'
    return {
        f'{name}_peak{suffix}': share.peak,
        f'{name}_rms{suffix}': share.rms,
        f'{name}_violations': share.beyond if relative else None,
    }


def motion_figures(
    times: FloatArray,
    positions: FloatArray,
    limits: MotionLimits,
    jerk: FloatArray | None,
    planned: FloatArray | None = None,
) -> dict[str, Any]:
    """
    Return how sampled joint positions use their limits.

    :param times: Sample times, increasing, shape (K,), [s].
    :param positions: Positions, shape (K, n), [rad] or [m].
    :param limits: Position, velocity and acceleration limits.
    :param jerk: Jerk limit per joint, shape (n,), [rad/s^3]; None: jerk reported in [rad/s^3].
    :param planned: The velocity limits the commands are planned within, shape (n,), [rad/s]
        (:func:`~pic_ros.motion.commander.planned_limits`; default ``limits.velocity``).
    :return: Peaks and RMS as shares of the limits, violations (samples beyond a limit by more
        than rounding) and the share of samples at the planned velocity limit.
    """
    moved = derivatives(times, positions)
    outside = (positions < limits.lower - 1e-9) | (positions > limits.upper + 1e-9)
    figures: dict[str, Any] = {'position_violations': int(np.count_nonzero(np.any(outside, 1)))}
    figures.update(_share('velocity', limit_share(moved.velocity, limits.velocity)))
    at = limits.velocity if planned is None else planned
    figures['at_velocity_limit'] = share_at_limit(moved.velocity, at)
    figures.update(_share('acceleration', limit_share(moved.acceleration, limits.acceleration)))
    ones = np.ones(limits.dof)
    figures.update(_share(
        'jerk', limit_share(moved.jerk, ones if jerk is None else jerk), relative=jerk is not None
    ))
    return figures


def command_figures(
    arm: ArmModel,
    recording: DemoRecording,
    limits: MotionLimits,
    planned: FloatArray | None = None,
) -> dict[str, Any]:
    """
    Return how the streamed commands of an arm use the velocity limits.

    Only their velocities are measured: the commands are heard at irregular moments (each
    target and each timer step), which finite differences would turn into noise.

    :param arm: The arm.
    :param recording: The run.
    :param limits: The limits the trajectory publisher enforces.
    :param planned: The velocity limits it plans within, shape (n,), [rad/s] (default
        ``limits.velocity``).
    :return: Peak and RMS velocity share, violations, share of commands at the planned velocity
        limit and the number of commands.
    """
    velocities = np.array(recording.velocities.get(arm.spec.controller, []), dtype=float)
    velocities = velocities.reshape(-1, arm.dof) if velocities.size else np.zeros((0, arm.dof))
    figures = _share('velocity', limit_share(velocities, limits.velocity))
    at = limits.velocity if planned is None else planned
    figures['at_velocity_limit'] = share_at_limit(velocities, at)
    figures['commands'] = int(velocities.shape[0])
    return figures


def target_figures(
    times: FloatArray, positions: FloatArray, limits: MotionLimits, planned: FloatArray
) -> dict[str, Any]:
    """
    Return how fast the offline imitation's joint targets move: what the person asks of the arm.

    Finite differences between consecutive solved frames (30 Hz for a Kinect), against the
    velocity limits the commands may use and, for the share at the limit, the ones they are
    planned within (``planned``): a share the robot cannot follow without being at its limit
    (tracker noise adds a little; the targets are smoothed as the skeleton node smooths them).

    :param times: Frame times, increasing, shape (K,), [s].
    :param positions: Joint targets, shape (K, n), [rad] or [m].
    :param limits: The velocity limits the commands may use.
    :param planned: The velocity limits they are planned within, shape (n,), [rad/s].
    :return: Velocity peak and RMS as shares of ``limits``, samples beyond them, and the share
        of frame intervals with a joint at or beyond 99 % of ``planned``.
    """
    moved = derivatives(times, positions)
    figures = _share('velocity', limit_share(moved.velocity, limits.velocity))
    figures['at_velocity_limit'] = share_at_limit(moved.velocity, planned)
    return figures


def live_occlusion(
    robot: Robot, task: Demonstration, live: Trace, offline: Trace | None = None
) -> dict[str, Any] | None:
    """
    Score the PIC paper's PO on the frames of a live run: the person, the robot live and offline.

    The frames scored are those ``evaluate`` scores (:mod:`pic_ros_tools.occlusion_scores`: in
    the task's segments, a task wrist over the ROI) among those the pipeline published
    (``solved`` in an arm of ``live``); the surface is placed as for the whole recording. The
    robot's links are placed at the simulated robot's joints at the moment the frame's skeleton
    was published (:func:`live_trace`), its torso, if any, at its neutral lift.

    :param robot: The robot.
    :param task: The replayed recording with its segments, task arms and task surfaces; the
        run played its first ``len(live.stamps)`` frames.
    :param live: :func:`live_trace` of the run.
    :param offline: The offline imitation of the played frames (its robot scored on the same
        frames), or None.
    :return: ``po_human``, ``po_robot`` (live), ``po_robot_offline`` (NaN without
        ``offline``), each with ``_std`` (mean and population std over segments, shares of the
        ROI), ``segment_po_human`` / ``segment_po_robot`` / ``segment_po_robot_offline`` (NaN
        for a segment with no frame scored), ``po_frames`` and ``po_error``
        (:func:`~pic_ros_tools.occlusion_scores.occlusion_figures`); None when the recording
        has no task surface or the trace is longer than it.
    """
    count = len(live.stamps)
    if count > len(task.frames):
        return None
    heard = np.zeros(count, dtype=bool)
    for arm in live.arms.values():
        heard |= arm.solved
    figures = occlusion_figures(live, task, robot, heard)
    if not figures:
        return None
    asked = occlusion_figures(offline, task, robot, heard) if offline is not None else {}
    figures['po_robot_offline'] = asked.get('po_robot', math.nan)
    figures['po_robot_offline_std'] = asked.get('po_robot_std', math.nan)
    figures['segment_po_robot_offline'] = asked.get(
        'segment_po_robot', [math.nan] * len(figures['segment_po_robot'])
    )
    figures['po_error'] = max(figures['po_error'], asked.get('po_error', 0.0))
    return figures


def live_record(
    robot: Robot,
    demonstration: Demonstration,
    recording: DemoRecording,
    solver: SolverConfig,
    mapping: MappingConfig | None = None,
    offline: Mapping[str, Any] | None = None,
    targets: Trace | None = None,
    bound: bool = True,
    task: Demonstration | None = None,
) -> dict[str, Any]:
    """
    Score a live run: ``evaluate``'s figures of what the robot did, lags and motion figures.

    :param robot: The robot.
    :param demonstration: The recording that was replayed (its segments are scored).
    :param recording: The run.
    :param solver: The solver node's solver setting (named in the record).
    :param mapping: The solver node's mapping and correspondence (default the robot file's).
    :param offline: ``evaluate``'s record of the same recording and settings, kept beside.
    :param targets: The offline imitation that record scores (default: run here with the
        default processing and ``mapping``).
    :param bound: Compute the feasibility bound of those targets (``bound``; else None).
    :param task: The whole replayed recording, with its segments, task arms and task surfaces,
        when ``demonstration`` is only the first part of it that was played (default
        ``demonstration``); it gives ``occlusion``.
    :return: ``{'live': record, 'offline': record, 'arms': {name: figures}, 'run': notes,
        'occlusion': figures, 'bound': figures, 'warnings': [line, ...], 'valid': bool}``;
        ``occlusion`` is :func:`live_occlusion`'s (None without a task surface); the records are
        :func:`~pic_ros_tools.evaluation.score`'s; each arm's figures hold its lags [s], and
        ``robot`` and ``command`` motion figures, and ``targets``, those of the offline
        imitation's targets (:func:`target_figures`); ``warnings`` say why the run is invalid
        (:func:`run_warnings`; ``valid`` when there are none); ``bound`` holds
        :func:`~pic_ros_tools.feasibility.feasibility_bound`'s figures (but its per-horizon
        records) and :func:`~pic_ros_tools.feasibility.bound_ratios`.
    """
    trace = live_trace(robot, demonstration, recording, mapping)
    asked = targets if targets is not None else run_imitation(
        robot, demonstration, solver, EvaluationSettings(mapping=mapping)
    )
    stamps = np.asarray(asked.stamps, dtype=float)
    times = frame_times(demonstration, recording)
    elbows = elbow_traces(robot, trace, recording, times)
    starts = [t[0] for t in recording.command_times.values() if t]
    start = min(starts) if starts else -math.inf
    arms: dict[str, Any] = {}
    for name, arm in robot.arms.items():
        elbow = elbows[name]
        limits = command_limits(arm)
        planned = planned_limits(arm, CommanderConfig()).velocity
        state_times, states = arm_states(arm, recording)
        moving = state_times >= start
        delays = window_delays(
            elbow['person_times'], elbow['person'], elbow['robot_times'], elbow['robot']
        )
        arms[name] = {
            'lag_s': best_delay(
                elbow['person_times'], elbow['person'], elbow['robot_times'], elbow['robot']
            ),
            'lag_s_p50': float(np.percentile(delays, 50)) if delays.size else math.nan,
            'lag_s_p90': float(np.percentile(delays, 90)) if delays.size else math.nan,
            'lag_windows': int(delays.size),
            'robot': motion_figures(
                state_times[moving], states[moving], limits, getattr(arm, 'jerk', None), planned
            ),
            'command': command_figures(arm, recording, limits, planned),
            'targets': target_figures(
                stamps[asked.arms[name].solved], asked.arms[name].q[asked.arms[name].solved],
                limits, planned,
            ),
        }
    record: dict[str, Any] = {
        'live': score(trace, demonstration, robot, solver),
        'offline': dict(offline) if offline is not None else None,
        'arms': arms,
        'run': dict(recording.notes),
        'occlusion': live_occlusion(
            robot, task if task is not None else demonstration, trace, asked
        ),
        'bound': None,
    }
    if bound:
        figures = feasibility_bound(robot, demonstration, solver, asked)
        figures.pop('records')
        record['bound'] = {**figures, **bound_ratios(record['live'], figures)}
    record['warnings'] = run_warnings(record)
    record['valid'] = not record['warnings']
    return record


def run_warnings(record: Mapping[str, Any]) -> list[str]:
    """
    Tell why a live run does not show what the pipeline does, if it does not: one line each.

    A run is invalid when a simulated controller rejected trajectories (the arm did not get the
    commands: ``<controller>_rejected`` in the run's notes, with the reasons), when the
    simulation slipped behind real time (``sim_slipped_s``: the host could not run it), or when
    the robot exceeded a limit: a simulated joint beyond its position limits or more than
    :data:`ROBOT_VELOCITY_SLACK` beyond its velocity limit, or a controller that took a
    trajectory whose reference breaks a velocity, acceleration or jerk limit by more than
    :data:`REFERENCE_SLACK`, or jumps (``<controller>_segment_violations`` and
    ``_segment_peak``), or the trajectory publisher sent a chunk whose consecutive points or
    seam with the previous chunk break a limit (its continuity check,
    ``publisher_<group>_segment_violations``). The trajectory publisher's stalls (steps after
    its last plan had run out: the arm braked) are told too.

    :param record: A live record (:func:`live_record`).
    :return: The warnings, empty for a valid run.
    """
    run = record.get('run', {})
    return [
        *_rejection_warnings(run),
        *_slip_warnings(run),
        *_robot_warnings(record.get('arms', {})),
        *_reference_warnings(run),
        *_continuity_warnings(run),
        *_stall_warnings(run),
    ]


def _rejection_warnings(run: Mapping[str, Any]) -> list[str]:
    """Return a line per simulated controller that rejected trajectories, with the reasons."""
    suffix = '_rejected'
    rejected = {
        key[:-len(suffix)]: int(value) for key, value in run.items()
        if key.endswith(suffix) and not key.startswith('publisher_') and int(value) > 0
    }
    warnings = []
    for controller, count in sorted(rejected.items()):
        accepted = run.get(f'{controller}_accepted', '?')
        reasons = ', '.join(
            f'{key[len(controller) + len(suffix) + 1:]} {value}'
            for key, value in sorted(run.items())
            if key.startswith(f'{controller}{suffix}_') and int(value) > 0
        )
        warnings.append(
            f'{controller} rejected {count} trajectories ({accepted} accepted)'
            + (f': {reasons}' if reasons else '')
        )
    return warnings


def _slip_warnings(run: Mapping[str, Any]) -> list[str]:
    """Return the line saying the simulation slipped behind real time, if it did."""
    slipped = float(run.get('sim_slipped_s', 0.0) or 0.0)
    if not slipped > 0.0:  # NaN too
        return []
    return [
        f'the simulation slipped {slipped:.2f} s behind real time (the host could not run '
        'it in real time)'
    ]


def _robot_warnings(arms: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Return a line per arm whose simulated joints left their position or velocity limits."""
    warnings = []
    for name, arm in arms.items():
        robot = arm.get('robot', {})
        if robot.get('position_violations'):
            warnings.append(
                f'{name}: the simulated joints left their position limits in '
                f'{robot["position_violations"]} samples'
            )
        peak = robot.get('velocity_peak')
        if isinstance(peak, float) and peak > 1.0 + ROBOT_VELOCITY_SLACK:
            warnings.append(
                f'{name}: the simulated joints reached {peak:.2f} x their velocity limit'
            )
    return warnings


def _reference_warnings(run: Mapping[str, Any]) -> list[str]:
    """Return a line per controller that took references beyond a limit (past the slack)."""
    suffix = '_segment_violations'
    warnings = []
    for key, value in sorted(run.items()):
        if not key.endswith(suffix) or key.startswith('publisher_') or int(value) <= 0:
            continue
        controller = key[:-len(suffix)]
        peak = run.get(f'{controller}_segment_peak')
        if isinstance(peak, float) and peak <= 1.0 + REFERENCE_SLACK:
            continue  # within a few percent: in the stream table, not a fault of the run
        warnings.append(
            f'{controller} took {value} trajectories beyond a velocity, acceleration or '
            f'jerk limit, or jumped onto them'
            + (f' (peak {peak:.3g} x a limit)' if isinstance(peak, float) else '')
        )
    return warnings


def _publisher_counts(run: Mapping[str, Any], suffix: str) -> dict[str, int]:
    """Return the trajectory publisher's count ``publisher_<group><suffix>`` by group."""
    prefix = 'publisher_'
    return {
        key[len(prefix):-len(suffix)]: int(value) for key, value in sorted(run.items())
        if key.startswith(prefix) and key.endswith(suffix)
    }


def _continuity_warnings(run: Mapping[str, Any]) -> list[str]:
    """Return the line listing the groups whose sent chunks failed the publisher's check."""
    failed = {
        group: count for group, count in _publisher_counts(run, '_segment_violations').items()
        if count > 0
    }
    if not failed:
        return []
    listed = ', '.join(
        f"{group} {count} (peak {run.get(f'publisher_{group}_segment_peak', math.nan):.3g} x)"
        for group, count in failed.items()
    )
    return [
        'the trajectory publisher sent chunks whose consecutive points or seam break a '
        f'velocity, acceleration or jerk limit (its continuity check): {listed}'
    ]


def _stall_warnings(run: Mapping[str, Any]) -> list[str]:
    """Return the line listing the trajectory publisher's stalls per arm, if there were any."""
    stalls = {
        group: count for group, count in _publisher_counts(run, '_stalls').items() if count > 0
    }
    if not stalls:
        return []
    listed = ', '.join(f'{group} {count}' for group, count in stalls.items())
    return [
        f'the trajectory publisher stalled (steps after its last plan had run out, the arm '
        f'braking meanwhile): {listed}'
    ]


def _number(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return '-'
    return f'{value:.{digits}f}' if isinstance(value, float) else str(value)


def live_tables(records: Sequence[Mapping[str, Any]]) -> str:
    """
    Format live records (:func:`live_record`) as two Markdown tables: imitation and motion.

    The imitation figures are against the person as tracked, one column against the person
    as smoothed (what the solver node was given); the last two give the feasibility bound
    (``bound``) and the live figures over it.

    :param records: One record per robot x recording x setting.
    :return: The tables.
    """
    lines = [
        '| robot | recording | solver | Pacc offline | Pacc live | elbow MAE offline [rad] '
        '| elbow MAE live [rad] | dir err offline [deg] | dir err live [deg] | lag p50 [ms] '
        '| lag whole [ms] | self-contact frames offline / live '
        '| Pacc / elbow MAE live, person as smoothed | Pacc / elbow MAE bound '
        '| Pacc / elbow MAE live / bound |',
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ]
    for record in records:
        live, offline = record['live'], record['offline'] or {}
        bound = record.get('bound') or {}
        lags = ' / '.join(_ms(arm['lag_s_p50']) for arm in record['arms'].values())
        whole = ' / '.join(_ms(arm['lag_s']) for arm in record['arms'].values())
        lines.append(
            f"| {live['robot']} | {live['recording']} | {live['solver']} "
            f"| {_number(offline.get('pacc_paper'))} | {_number(live['pacc_paper'])} "
            f"| {_number(offline.get('elbow_mae_rad'), 3)} | {_number(live['elbow_mae_rad'], 3)} "
            f"| {_pair(offline.get('dir_err_deg'))} | {_pair(live['dir_err_deg'])} "
            f'| {lags} | {whole} '
            f"| {_number(offline.get('self_contact_frames'))} / "
            f"{_number(live.get('self_contact_frames'))} "
            f"| {_number(live.get(SMOOTHED_PREFIX + 'pacc_paper'))} / "
            f"{_number(live.get(SMOOTHED_PREFIX + 'elbow_mae_rad'), 3)} "
            f"| {_number(bound.get('bound_pacc'))} / "
            f"{_number(bound.get('bound_elbow_mae_rad'), 3)} "
            f"| {_number(bound.get('pacc_live_over_bound'))} / "
            f"{_number(bound.get('elbow_mae_live_over_bound'))} |"
        )
    lines += [
        '',
        '| robot | arm | of | velocity peak / RMS | at velocity limit | acceleration peak / RMS '
        '| jerk peak / RMS | violations (pos, vel, acc, jerk) |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for record in records:
        for name, arm in record['arms'].items():
            for source in ('robot', 'command', 'targets'):
                if source not in arm:
                    continue
                figures = arm[source]
                jerk = (
                    f"{_number(figures.get('jerk_peak'))} / {_number(figures.get('jerk_rms'))}"
                    if 'jerk_peak' in figures else
                    f"{_number(figures.get('jerk_peak_abs'), 0)} / "
                    f"{_number(figures.get('jerk_rms_abs'), 0)} rad/s³"
                    if 'jerk_peak_abs' in figures else '-'
                )
                violations = ', '.join(_number(figures.get(f'{key}_violations')) for key in (
                    'position', 'velocity', 'acceleration', 'jerk'
                ))
                lines.append(
                    f"| {record['live']['robot']} | {name} | {source} "
                    f"| {_number(figures['velocity_peak'])} / {_number(figures['velocity_rms'])} "
                    f"| {_percent(figures['at_velocity_limit'])} "
                    f"| {_number(figures.get('acceleration_peak'))} / "
                    f"{_number(figures.get('acceleration_rms'))} | {jerk} | {violations} |"
                )
    occlusion = occlusion_rows(records)
    lines = lines + ['', occlusion] if occlusion else lines
    stream = stream_table(records)
    lines = lines + ['', stream] if stream else lines
    sent = publisher_rows(records)
    lines = lines + ['', sent] if sent else lines
    guard = guard_rows(records)
    lines = lines + ['', guard] if guard else lines
    invalid = [
        f"- **{record['live']['robot']}, {record['live']['recording']}: invalid run**: {line}"
        for record in records for line in record.get('warnings', [])
    ]
    return '\n'.join(lines + ['', *invalid] if invalid else lines)


def occlusion_rows(records: Sequence[Mapping[str, Any]]) -> str:
    """
    Format the PO of the live runs (:func:`live_occlusion`), one row per run with a task surface.

    :param records: Live records (:func:`live_record`).
    :return: The Markdown table in percent, mean (population std) over segments; an empty
        string when no run has a PO.
    """
    lines = []
    for record in records:
        figures = record.get('occlusion')
        if not figures:
            continue
        cells = ' | '.join(
            f"{_po_percent(figures.get(key))} ({_po_percent(figures.get(key + '_std'))})"
            for key in ('po_human', 'po_robot_offline', 'po_robot')
        )
        lines.append(
            f"| {record['live']['robot']} | {record['live']['recording']} "
            f"| {record['live']['solver']} | {figures['po_frames']} | {cells} |"
        )
    return _table(
        '| robot | recording | solver | PO frames | PO person [%] | PO robot offline [%] '
        '| PO robot live [%] |', lines,
    )


def stream_table(records: Sequence[Mapping[str, Any]]) -> str:
    """
    Format how the simulated controllers took the streamed trajectories, one row per controller.

    From the run's notes (sim_robot's ``/diagnostics``): trajectories accepted, rejected, late
    (first point due on arrival: every streamed chunk that repeats the command), joined (late
    and not a continuation of the command), the delay of the stamped ones (arrival -
    ``header.stamp``, p50 / p99 of the latest, and the largest) [ms] and those taken beyond a
    limit (``segment_violations``). A chunk is joined when it arrives more than
    the trajectory publisher's ``plan_ahead`` after the step that made it (its stamp is up to
    one point spacing, 10 ms, before that step).

    :param records: Live records (:func:`live_record`).
    :return: The Markdown table, or an empty string when no run has the figures.
    """
    lines = []
    suffix = '_accepted'
    for record in records:
        run = record.get('run', {})
        controllers = sorted(key[:-len(suffix)] for key in run if key.endswith(suffix))
        for controller in controllers:
            delays = ' / '.join(
                _number(run.get(f'{controller}_delay_{which}_ms'), 1)
                for which in ('p50', 'p99', 'max')
            )
            lines.append(
                f"| {record['live']['robot']} | {controller} | {run[controller + suffix]} "
                f"| {run.get(controller + '_rejected', '-')} "
                f"| {run.get(controller + '_late', '-')} | {run.get(controller + '_joined', '-')} "
                f"| {delays} | {run.get(controller + '_segment_violations', '-')} |"
            )
    return _table(
        '| robot | controller | accepted | rejected | late | joined | delay p50 / p99 / max [ms] '
        '| beyond a limit |', lines,
    )


def publisher_rows(records: Sequence[Mapping[str, Any]]) -> str:
    """
    Format what the trajectory publisher sent in each run, one row per group it commands.

    From the run's notes (the publisher's ``/diagnostics``): the chunks published, those whose
    consecutive points or seam with the previous chunk broke a velocity, acceleration or jerk
    limit (its continuity check of every chunk sent, ``segment_violations``) and the largest
    share of a limit it saw, the stalls (steps after the last plan had run out), the chunks
    made again because the process was starved before publishing and those whose publishing
    ended after their plan's start (which their controller joins rather than continues).

    :param records: Live records (:func:`live_record`).
    :return: The Markdown table, or an empty string when no run has the figures.
    """
    lines = []
    for record in records:
        run = record.get('run', {})
        for group, published in _publisher_counts(run, '_commands_published').items():
            cells = ' | '.join(
                _number(run.get(f'publisher_{group}_{key}'), 2)
                for key in (
                    'segment_violations', 'segment_peak', 'stalls', 'chunks_withdrawn_late',
                    'chunks_sent_late',
                )
            )
            lines.append(f"| {record['live']['robot']} | {group} | {published} | {cells} |")
    return _table(
        '| robot | group | chunks published | beyond a limit (continuity check) '
        '| peak share of a limit | stalls | made again late | sent late |', lines,
    )


def guard_rows(records: Sequence[Mapping[str, Any]]) -> str:
    """
    Format what the trajectory publisher's collision guard did in each run, one row per run.

    From the run's notes (the guard's ``/diagnostics``: ``guard_steps_checked``,
    ``guard_chunks_straightened``, ``guard_chunks_refused``): the steps whose arm chunks it
    checked, the chunks it had made again with the arm's joints moving together, and the chunks
    it refused, each arm braking along its path instead. A refusal is the guard at work, not a
    fault of the run: the robot's commands would have come within the self-collision margin.

    :param records: Live records (:func:`live_record`).
    :return: The Markdown table, or an empty string when no run has the figures.
    """
    rows = [
        f"| {record['live']['robot']} | {record['live'].get('recording', '-')} "
        f"| {record['run']['guard_steps_checked']} "
        f"| {record['run'].get('guard_chunks_straightened', '-')} "
        f"| {record['run'].get('guard_chunks_refused', '-')} |"
        for record in records if 'guard_steps_checked' in record.get('run', {})
    ]
    return _table(
        '| robot | recording | steps checked by the collision guard '
        '| chunks made again, joints together | chunks refused (arm braked) |', rows,
    )


def _table(header: str, rows: Sequence[str]) -> str:
    """Return a Markdown table of a header row and rows; an empty string without rows."""
    if not rows:
        return ''
    return '\n'.join([header, '|' + '---|' * (header.count('|') - 1), *rows])


def _po_percent(value: Any) -> str:
    """Format a share in percent, one decimal; ``-`` for anything but a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return '-'
    return _number(100.0 * float(value), 1)


def _ms(value: float) -> str:
    return f'{1e3 * value:.0f}' if math.isfinite(value) else '-'


def _percent(value: float) -> str:
    return f'{100.0 * value:.1f} %' if math.isfinite(value) else '-'


def _pair(values: Sequence[float] | None) -> str:
    if not values:
        return '-'
    return ' / '.join(_number(float(value), 1) for value in values)


__all__ = [
    'command_figures',
    'command_limits',
    'elbow_traces',
    'frame_times',
    'guard_rows',
    'live_record',
    'live_occlusion',
    'live_tables',
    'live_trace',
    'motion_figures',
    'occlusion_rows',
    'place_skeletons',
    'run_warnings',
    'publisher_rows',
    'stream_table',
]
