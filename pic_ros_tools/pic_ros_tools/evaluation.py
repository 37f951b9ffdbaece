"""
Offline evaluation (``python -m pic_ros_tools evaluate``): the pipeline on recordings, scored.

The pipeline runs on recorded demonstrations and is scored with the metrics of
``docs/method.md#metrics``.

The whole recording is processed causally, frame by frame, as a live system would (filter,
body frame, correspondence, solver with warm start); the metrics are then taken over the frames of
each demonstration segment. Per-segment values are averaged with equal weight per segment and the
population standard deviation is reported, like the PIC paper's tables.

What the metrics compare:

- the reference person is the person *as tracked*: each frame's skeleton through the same
  validity rules and body frame as the pipeline's, but unsmoothed (:func:`tracked_body`), placed
  on the robot by a second instance of the same correspondence. The smoothing is part of the
  system, so its lag and its corner cutting count as error. Every accuracy figure is also
  computed against the person *as smoothed* (what the solver was given), under the same key with
  a ``smoothed_`` prefix: the difference between the two is what the smoothing costs (or, on a
  noisy tracker, saves);
- elbow angles and bone directions: the reference person's (in the body frame, mapped to the
  robot's axes) against the robot's landmarks after the solve (forward kinematics of the final
  joint angles);
- the wrist error: the robot's wrist landmark against the correspondence's wrist target for the
  reference person in the robot base frame, anchored at the robot's *neutral* shoulder landmark
  -- the fixed mapping, so a hand that drifts because the joint before the shoulder swings the
  shoulder counts as error;
- *free* frames: frames where none of the arm's joints is at a limit of its working range
  (within :data:`AT_LIMIT`): the URDF position limits, and for the elbow its straight position
  (:attr:`~pic_ros.robot.arm.ArmModel.work_lower`; TIAGo's landmarks, for one, are never
  straighter than 170 degrees). Where limits make the person's pose unreachable (Baxter's s1
  cannot hang an arm straight down) the robot takes the closest shape it can; the elbow and
  direction errors are reported over all frames and over the free frames, and the share of
  frames each joint spends at a limit is reported per joint;
- whole-body imitation (:attr:`EvaluationSettings.whole_body`, ``evaluate --whole-body``): the
  arms on the torso are solved with it (:mod:`pic_ros.solvers.prioritized`); the robot's landmarks
  are taken at the solved torso lift, and the wrist target moves with the lift target (the
  shoulder rides on the torso), so the wrist error includes any torso miss. The record's solver
  is ``whole-body`` and it reports the torso's travel;
- the occlusion of the task surface (the PIC paper's PO), for the person and the robot, where
  the recording has one: :mod:`pic_ros_tools.occlusion_scores`;
- solve time: CPU time of the solving thread per arm solve (joint recovery included), so that
  preemption on a busy machine does not pass for solver cost; percentiles are pooled over every
  solve (records carry a histogram in microseconds so that tables can pool them exactly).

The PIC paper's published Pose Accuracy (Table I; η = 1, 2 from Fig. 7, recomputed from the
authors' result files, ``docs/method.md#published-numbers-printed-beside-ours``) is kept here
to print beside ours. Those numbers come from 4-link ball-joint polylines with no joint limits
and from the research code's octant bugs; ours come from the real URDF kinematics with joint
limits and correct octant geometry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
import math
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence import (
    ArmTargets,
    Correspondence,
    make_correspondence,
    MappingConfig,
)
from pic_ros.exceptions import SkeletonError
from pic_ros.human.body_frame import body_axes, to_body_frame
from pic_ros.human.extremities import screen_extremities
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.imitation import ArmStep, RobotImitator
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.robot import Robot
from pic_ros.skeleton import Side, SkeletonFrame
from pic_ros.solvers import SolverConfig
from pic_ros.solvers.avoidance import AvoidanceConfig
from pic_ros.solvers.prioritized import PrioritizedConfig
from pic_ros.teleoperation import Teleoperation
from pic_ros_tools.metrics import (
    angle_between,
    elbow_angle,
    finite_mean,
    finite_std,
    jump_frames,
    limit_violation_frames,
    PACC_THRESHOLD,
    percentile_ms,
    pose_hits,
)
from pic_ros_tools.occlusion_scores import occlusion_figures
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper import Segment

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

PAPER_TASKS: Final = MappingProxyType(
    {
        'incision_straight3': 'I-S',
        'incision_curvy1': 'I-C',
        'assembly1': 'A-1',
        'assembly2': 'A-2',
        'assembly3': 'A-3',
    }
)
"""PIC paper recordings and their task labels."""

PAPER_PACC: Final = MappingProxyType(
    {
        ('yumi', 'I-S'): (0.17, 0.84, 0.67, 0.67, 0.67),
        ('yumi', 'I-C'): (0.00, 0.70, 0.78, 0.50, 0.50),
        ('baxter', 'I-S'): (0.29, 0.70, 0.24, 0.65, 0.65),
        ('baxter', 'I-C'): (0.25, 0.74, 0.50, 0.71, 0.82),
        ('yumi', 'A-1'): (0.53, 0.53, 0.69, 0.68, 0.68),
        ('yumi', 'A-2'): (0.34, 0.13, 0.31, 0.58, 0.58),
        ('yumi', 'A-3'): (0.52, 0.57, 0.78, 0.81, 0.81),
        ('baxter', 'A-1'): (0.00, 0.09, 0.46, 0.43, 0.43),
        ('baxter', 'A-2'): (0.03, 0.66, 0.41, 0.24, 0.40),
        ('baxter', 'A-3'): (0.31, 0.32, 0.12, 0.25, 0.21),
    }
)
"""Published Pacc per (robot, task): FABRIK, PIC, PICs η=1, η=2, η=3."""

PAPER_PACC_MEANS: Final = (0.247, 0.527, 0.493, 0.552, 0.577)
"""Published Pacc pooled over the paper's 99 segments: FABRIK, PIC, PICs η=1, η=2, η=3."""

SOLVER_SETTINGS: Final = (
    ('fabrik', 0),
    ('pic', 0),
    ('pics', 1),
    ('pics', 2),
    ('pics', 3),
)
"""The five settings of the paper, as (solver, η)."""

AT_LIMIT: Final = 1e-4
"""A joint this close to a position limit [rad] or [m] counts as at the limit."""

TRACKED: Final = 'tracked'
"""The reference person as tracked: validated, in the body frame, unsmoothed."""

SMOOTHED: Final = 'smoothed'
"""The reference person as smoothed: what the pipeline gave the solver."""

SMOOTHED_PREFIX: Final = 'smoothed_'
"""Prefix of the record keys of the figures against the smoothed person."""


def tracked_body(frame: SkeletonFrame) -> SkeletonFrame:
    """
    Convert one tracker-frame skeleton to the body frame, unsmoothed.

    What :class:`SkeletonProcessor` does without the filter: the same validity rules
    (implausible extremities invalidated, the frame's validity flags kept) and the same body
    frame, built from this skeleton's own joints. With ``smoothing`` ``none`` the processor
    returns the same skeleton for every frame whose stamp is after the previous one.

    :param frame: Skeleton in the ``tracker`` frame, [m], stamp [s].
    :return: The unsmoothed skeleton in the ``body`` frame, [m].
    :raises pic_ros.exceptions.SkeletonError: If the body frame cannot be built (missing or
        coincident shoulders).
    """
    screened = screen_extremities(frame)
    return to_body_frame(screened, body_axes(screened))


def paper_column(solver: str, eta: int) -> int:
    """
    Return the column of a solver setting in :data:`PAPER_PACC` / :data:`PAPER_PACC_MEANS`.

    :param solver: ``fabrik``, ``pic`` or ``pics``.
    :param eta: η for ``pics`` (1..3).
    :return: Column index 0..4.
    """
    if solver == 'fabrik':
        return 0
    if solver == 'pic':
        return 1
    return 1 + eta


def eta_label(config: SolverConfig) -> int | None:
    """
    Return a solver setting's η as reported in results.

    :param config: The solver setting.
    :return: 0 for PIC, η (1..3) for PICs, ``None`` for the others.
    """
    if config.name == 'pics':
        return config.eta
    return 0 if config.name == 'pic' else None


@dataclass(frozen=True)
class ArmTrace:
    """
    One robot arm over a whole recording (row = frame).

    :param human_side: The person's arm that drives it.
    :param solved: Frames where the arm was solved (its human arm valid), shape (T,).
    :param q: Joint values held after each frame, shape (T, dof), [rad] or [m].
    :param human: Driving human shoulder, elbow, wrist, body frame, shape (T, 3, 3), [m]; NaN
        where not solved.
    :param targets: The human arm as the correspondence placed it (anchored at the robot's
        neutral shoulder landmark: the fixed mapping), robot base frame, shape (T, 3, 3), [m].
    :param landmarks: Robot root, shoulder, elbow, wrist, tool after the solve, shape (T, 5, 3),
        [m].
    :param solve_time: CPU time of each solve, joint recovery included, shape (T,), [s]; NaN if
        not solved.
    :param iterations: Point-solver passes, shape (T,); -1 if not solved.
    :param at_limit: Which joints are at a limit of their working range after each frame
        (within :data:`AT_LIMIT`), shape (T, dof).
    :param tracked: The same person's shoulder, elbow, wrist unsmoothed (as tracked,
        :func:`tracked_body`), body frame, shape (T, 3, 3), [m]; NaN where not solved or not
        valid as tracked; None: not known (``human`` is the reference).
    :param tracked_targets: That arm placed by the same correspondence (at the shoulder of
        ``targets``), robot base frame, shape (T, 3, 3), [m]; None when ``tracked`` is.
    """

    human_side: Side
    solved: BoolArray
    q: FloatArray
    human: FloatArray
    targets: FloatArray
    landmarks: FloatArray
    solve_time: FloatArray
    iterations: npt.NDArray[np.int64]
    at_limit: BoolArray
    tracked: FloatArray | None = None
    tracked_targets: FloatArray | None = None

    def reference(self, which: str) -> tuple[FloatArray, FloatArray]:
        """
        Return the reference person's arm and targets.

        :param which: :data:`TRACKED` or :data:`SMOOTHED`; the tracked person falls back to
            the smoothed one when the trace does not have it.
        :return: Arm (shoulder, elbow, wrist; body frame) and targets (robot base frame), shape
            (T, 3, 3) each, [m].
        """
        if which == TRACKED and self.tracked is not None and self.tracked_targets is not None:
            return self.tracked, self.tracked_targets
        return self.human, self.targets


@dataclass(frozen=True)
class Trace:
    """
    The pipeline's output over a recording.

    :param stamps: Frame stamps, shape (T,), [s].
    :param arms: Per robot arm name.
    :param dropped: Frames the skeleton processing rejected (e.g. no shoulders).
    :param correspondence: Name of the correspondence used.
    :param torso: Torso lift held after each frame, shape (T,), [m]; None without a torso.
    :param whole_body: Whether the arms on the torso were solved with it.
    :param avoided: Frames where the self-collision or workspace avoidance moved the solvers'
        answer (:mod:`pic_ros.solvers.avoidance`), shape (T,).
    :param min_distance: Smallest self-collision pair distance after each solved frame, shape
        (T,), [m]; NaN where nothing was solved or avoidance is off.
    """

    stamps: FloatArray
    arms: Mapping[str, ArmTrace]
    dropped: int = 0
    correspondence: str = ''
    torso: FloatArray | None = None
    whole_body: bool = False
    avoided: BoolArray | None = None
    min_distance: FloatArray | None = None


@dataclass(frozen=True)
class EvaluationSettings:
    """
    Everything ``evaluate`` varies besides the robot and the recording.

    :param processing: Human-side smoothing (the reference person is unsmoothed whatever it
        is).
    :param mapping: Mapping mode and correspondence; ``None`` uses each robot file's
        ``mapping``.
    :param whole_body: Solve the arms on the robot's torso with it (robots without a torso are
        solved as usual).
    :param prioritized: Stopping rules of the whole-body solve (default ones when None).
    :param avoidance: Self-collision and workspace avoidance (default: on, default margin).
    """

    processing: ProcessingConfig = field(default_factory=ProcessingConfig)
    mapping: MappingConfig | None = None
    whole_body: bool = False
    prioritized: PrioritizedConfig | None = None
    avoidance: AvoidanceConfig | None = None


def at_limit(arm: ArmModel, q: npt.ArrayLike) -> BoolArray:
    """
    Mark the joints at a limit of their working range (within :data:`AT_LIMIT`).

    :param arm: The arm.
    :param q: Joint values, shape (..., dof), [rad] or [m].
    :return: Shape (..., dof).
    """
    values = np.asarray(q, dtype=float)
    low = values <= arm.work_lower + AT_LIMIT
    return np.asarray(low | (values >= arm.work_upper - AT_LIMIT))


class _ArmRecorder:
    """
    One arm's rows of a :class:`ArmTrace`, filled frame by frame (:func:`run_imitation`).

    :param arm: The robot arm.
    :param human_side: The person's arm that drives it.
    :param count: Frames of the recording.
    """

    def __init__(self, arm: ArmModel, human_side: Side, count: int) -> None:
        self.arm = arm
        self.human_side = human_side
        self.solved = np.zeros(count, dtype=bool)
        self.q = np.empty((count, arm.dof))
        self.human = np.full((count, 3, 3), np.nan)
        self.targets = np.full((count, 3, 3), np.nan)
        self.landmarks = np.full((count, 5, 3), np.nan)
        self.solve_time = np.full(count, np.nan)
        self.iterations = np.full(count, -1, dtype=np.int64)
        self.tracked = np.full((count, 3, 3), np.nan)
        self.tracked_targets = np.full((count, 3, 3), np.nan)

    def record(
        self,
        index: int,
        imitator: RobotImitator,
        body: SkeletonFrame | None,
        arm_step: ArmStep | None,
        as_tracked: tuple[FloatArray, ArmTargets] | None,
    ) -> None:
        """
        Record one frame: the joints held; and, when the arm was solved, what drove it.

        :param index: The frame's row.
        :param imitator: The pipeline's imitator, after the frame's step.
        :param body: The processed person (body frame), or None when the frame was dropped.
        :param arm_step: The arm's solve, or None when it was not solved.
        :param as_tracked: The person's arm as tracked and its targets
            (:func:`place_tracked`), or None when not valid as tracked.
        """
        name = self.arm.name
        self.q[index] = imitator.q(name)
        if arm_step is None or body is None:
            return
        self.solved[index] = True
        self.human[index] = body.arm(self.human_side)
        placed = arm_step.targets
        self.targets[index] = (placed.shoulder, placed.elbow, placed.wrist)
        self.landmarks[index] = imitator.landmarks(name)
        self.solve_time[index] = arm_step.solve_time
        self.iterations[index] = arm_step.result.iterations
        if as_tracked is not None:
            arm, raw = as_tracked
            self.tracked[index] = arm
            moved = raw.moved_to(placed.shoulder)  # the torso's rise, if any
            self.tracked_targets[index] = (moved.shoulder, moved.elbow, moved.wrist)

    def trace(self) -> ArmTrace:
        """Return the arm's trace over the frames recorded (its rows are the trace's fields)."""
        rows = {
            name: getattr(self, name)
            for name in (item.name for item in fields(ArmTrace)) if name != 'at_limit'
        }
        return ArmTrace(at_limit=at_limit(self.arm, self.q), **rows)


def run_imitation(
    robot: Robot,
    demonstration: Demonstration,
    solver: SolverConfig,
    settings: EvaluationSettings | None = None,
) -> Trace:
    """
    Run the whole pipeline over a recording.

    :param robot: The robot.
    :param demonstration: The recording.
    :param solver: Solver settings.
    :param settings: Processing and mapping settings.
    :return: The trace of every arm.
    """
    settings = settings if settings is not None else EvaluationSettings()
    processor = SkeletonProcessor(settings.processing)
    whole_body = settings.whole_body and robot.torso is not None
    imitator = RobotImitator(
        robot, solver, settings.mapping, whole_body=whole_body, prioritized=settings.prioritized,
        avoidance=settings.avoidance,
    )
    teleoperation = Teleoperation(imitator)  # the arms: the core step the nodes run
    reference = reference_correspondences(imitator)
    count = len(demonstration.frames)
    recorders = {
        name: _ArmRecorder(robot.arms[name], imitator.correspondences[name].human_side, count)
        for name in robot.arms
    }
    stamps = np.empty(count)
    torso = np.full(count, np.nan)
    avoided = np.zeros(count, dtype=bool)
    closest = np.full(count, np.nan)
    dropped = 0
    for index, frame in enumerate(demonstration.frames):
        stamps[index] = frame.stamp
        try:
            body = processor.process(frame)
        except SkeletonError:
            body = None
            dropped += 1
        step = None
        as_tracked: dict[str, tuple[FloatArray, ArmTargets]] = {}
        if body is not None:
            imitator.set_chest_height(
                None if processor.footprint is None else processor.footprint.height
            )
            step = teleoperation.step(body).imitation
            as_tracked = place_tracked(frame, reference)
        lift = imitator.torso_value
        torso[index] = np.nan if lift is None else lift
        if step is not None and step.avoidance is not None:
            avoided[index] = step.avoidance.active
            closest[index] = step.avoidance.min_distance
        for name, recorder in recorders.items():
            arm_step = None if step is None or body is None else step.arms.get(name)
            recorder.record(index, imitator, body, arm_step, as_tracked.get(name))
    arms = {name: recorder.trace() for name, recorder in recorders.items()}
    return Trace(
        stamps=stamps,
        arms=MappingProxyType(arms),
        dropped=dropped,
        correspondence=imitator.mapping_config.correspondence,
        torso=None if robot.torso is None else torso,
        whole_body=whole_body,
        avoided=avoided,
        min_distance=closest,
    )


def reference_correspondences(imitator: RobotImitator) -> dict[str, Correspondence]:
    """
    Return a second instance of each of an imitator's correspondences, for the tracked person.

    They place the person as tracked and learn from it (e.g. ``position``'s bone lengths)
    apart from the pipeline's own.

    :param imitator: The pipeline's imitator.
    :return: New correspondences with nothing learnt, per robot arm.
    """
    return {
        name: make_correspondence(correspondence.config, correspondence.robot)
        for name, correspondence in imitator.correspondences.items()
    }


def place_tracked(
    frame: SkeletonFrame, reference: Mapping[str, Correspondence]
) -> dict[str, tuple[FloatArray, ArmTargets]]:
    """
    Place the person as tracked in one frame on every arm.

    :param frame: The recording's frame, ``tracker`` frame.
    :param reference: The reference correspondences, per robot arm.
    :return: Per arm whose driving arm is valid as tracked: that arm (shoulder, elbow, wrist;
        body frame, shape (3, 3), [m]) and its targets.
    """
    try:
        body = tracked_body(frame)
    except SkeletonError:
        return {}
    placed = {}
    for name, correspondence in reference.items():
        targets = correspondence.place(body)
        if targets is not None:
            placed[name] = (np.asarray(body.arm(correspondence.human_side)), targets)
    return placed


@dataclass(frozen=True)
class SegmentScore:
    """
    Metrics of one segment.

    :param frames: Frames in the segment.
    :param pacc_paper: Pose Accuracy over every solved (frame x arm) sample.
    :param pacc_task: Pose Accuracy over the task arms' samples.
    :param elbow_mae: Mean absolute elbow-angle error [rad].
    :param elbow_mae_free: The same over the free samples (no joint of the arm at a limit, no
        avoidance acting).
    :param dir_err: Mean upper-arm and forearm direction errors [deg].
    :param dir_err_free: The same over the free samples [deg].
    :param ee_err: Mean wrist-landmark distance to the fixed-mapping wrist target [m].
    :param samples: Solved (frame x arm) samples.
    :param free: Free samples.
    :param elbow_mae_avoided: Mean absolute elbow-angle error over the samples where the
        avoidance acted [rad] (what keeping the margin cost there).
    :param avoided: Samples where the avoidance acted.
    """

    frames: int
    pacc_paper: float
    pacc_task: float
    elbow_mae: float
    elbow_mae_free: float
    dir_err: tuple[float, float]
    dir_err_free: tuple[float, float]
    ee_err: float
    samples: int = 0
    free: int = 0
    elbow_mae_avoided: float = float('nan')
    avoided: int = 0


def _fraction(parts: list[BoolArray]) -> float:
    samples = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
    return float(np.mean(samples)) if samples.size else float('nan')


def _average(parts: list[FloatArray]) -> float:
    samples = np.concatenate(parts) if parts else np.zeros(0)
    samples = samples[np.isfinite(samples)]
    return float(np.mean(samples)) if samples.size else float('nan')


def score_segment(
    trace: Trace, segment: Segment, task_arms: frozenset[Side], reference: str = TRACKED
) -> SegmentScore:
    """
    Compute the metrics of one segment from a trace.

    :param trace: Pipeline output over the recording.
    :param segment: The segment's frame range.
    :param task_arms: The person's task arm(s) in this segment.
    :param reference: Score against the person :data:`TRACKED` or :data:`SMOOTHED`
        (:meth:`ArmTrace.reference`); samples where the reference arm is not valid are left out.
    :return: The segment's metrics (NaN where there are no samples).
    """
    rows = segment.frame_slice
    all_hits: list[BoolArray] = []
    task_hits: list[BoolArray] = []
    errors: list[FloatArray] = []
    free_errors: list[FloatArray] = []
    upper: list[FloatArray] = []
    fore: list[FloatArray] = []
    free_upper: list[FloatArray] = []
    free_fore: list[FloatArray] = []
    wrist: list[FloatArray] = []
    avoided_errors: list[FloatArray] = []
    samples = free_count = avoided_count = 0
    acted = (
        np.zeros(len(trace.stamps), dtype=bool) if trace.avoided is None else trace.avoided
    )[rows]
    for arm in trace.arms.values():
        person, placed = arm.reference(reference)
        known = np.all(np.isfinite(person[rows]), axis=(1, 2))
        mask = arm.solved[rows] & known & np.all(np.isfinite(placed[rows]), axis=(1, 2))
        if not np.any(mask):
            continue
        human = person[rows][mask]
        robot = arm.landmarks[rows][mask]
        target = placed[rows][mask]
        avoided = acted[mask]
        free = ~np.any(arm.at_limit[rows][mask], axis=1) & ~avoided
        theta_h = elbow_angle(human[:, 0], human[:, 1], human[:, 2])
        theta_r = elbow_angle(robot[:, 1], robot[:, 2], robot[:, 3])
        hits = pose_hits(theta_h, theta_r, PACC_THRESHOLD)
        all_hits.append(hits)
        if arm.human_side in task_arms:
            task_hits.append(hits)
        error = np.abs(theta_h - theta_r)
        errors.append(error)
        free_errors.append(error[free])
        avoided_errors.append(error[avoided])
        avoided_count += int(avoided.sum())
        up = np.degrees(angle_between(target[:, 1] - target[:, 0], robot[:, 2] - robot[:, 1]))
        fo = np.degrees(angle_between(target[:, 2] - target[:, 1], robot[:, 3] - robot[:, 2]))
        upper.append(up)
        fore.append(fo)
        free_upper.append(up[free])
        free_fore.append(fo[free])
        wrist.append(np.linalg.norm(robot[:, 3] - target[:, 2], axis=1))
        samples += int(mask.sum())
        free_count += int(free.sum())
    return SegmentScore(
        frames=len(segment),
        pacc_paper=_fraction(all_hits),
        pacc_task=_fraction(task_hits),
        elbow_mae=_average(errors),
        elbow_mae_free=_average(free_errors),
        dir_err=(_average(upper), _average(fore)),
        dir_err_free=(_average(free_upper), _average(free_fore)),
        ee_err=_average(wrist),
        samples=samples,
        free=free_count,
        elbow_mae_avoided=_average(avoided_errors),
        avoided=avoided_count,
    )


def solve_time_histogram(durations_s: npt.ArrayLike) -> list[list[int]]:
    """
    Count solve times per whole microsecond.

    :param durations_s: Solve times [s]; NaN entries are skipped.
    :return: Sparse histogram ``[[microseconds, count], ...]``, ascending.
    """
    values = np.asarray(durations_s, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return []
    counts = np.bincount(np.round(values * 1e6).astype(np.int64).clip(0))
    return [[int(us), int(n)] for us, n in enumerate(counts.tolist()) if n]


def histogram_percentile_ms(
    histograms: Iterable[Sequence[Sequence[int]]], percentile: float
) -> float:
    """
    Return a percentile of solve times pooled from several microsecond histograms.

    :param histograms: Histograms from :func:`solve_time_histogram`.
    :param percentile: Percentile in [0, 100].
    :return: The percentile [ms] (to the microsecond, nearest-rank); NaN for no samples.
    """
    pooled: dict[int, int] = {}
    for histogram in histograms:
        for micro, count in histogram:
            pooled[int(micro)] = pooled.get(int(micro), 0) + int(count)
    total = sum(pooled.values())
    if total == 0:
        return float('nan')
    rank = max(1, math.ceil(percentile / 100.0 * total))
    seen = 0
    for micro in sorted(pooled):
        seen += pooled[micro]
        if seen >= rank:
            return micro / 1e3
    return max(pooled) / 1e3


def score(
    trace: Trace, demonstration: Demonstration, robot: Robot, solver: SolverConfig
) -> dict[str, Any]:
    """
    Build the ``evaluate`` record of one recording x robot x setting.

    :param trace: Pipeline output over the recording.
    :param demonstration: The recording, with its segments and task arms.
    :param robot: The robot.
    :param solver: The solver setting.
    :return: The JSON record (keys of ``docs/method.md#definitions`` and more), plain Python types.
    """
    scores: list[SegmentScore] = []
    smoothed: list[SegmentScore] = []
    for segment, task_arms in zip(demonstration.segments, demonstration.task_arms):
        if len(segment) > 0:
            scores.append(score_segment(trace, segment, task_arms, TRACKED))
            smoothed.append(score_segment(trace, segment, task_arms, SMOOTHED))
    tracked = any(arm.tracked is not None for arm in trace.arms.values())
    in_segments = np.zeros(len(trace.stamps), dtype=bool)
    for segment in demonstration.segments:
        in_segments[segment.frame_slice] = True
    limits = _limit_figures(trace, robot, in_segments)
    solved_frames = np.zeros(len(trace.stamps), dtype=bool)
    for arm in trace.arms.values():
        solved_frames |= arm.solved
    counted = solved_frames & in_segments
    return {
        'recording': demonstration.name,
        'robot': robot.name,
        'correspondence': trace.correspondence,
        'solver': 'whole-body' if trace.whole_body else solver.name,
        'eta': None if trace.whole_body else eta_label(solver),
        'whole_body': trace.whole_body,
        'torso_travel_cm': 100.0 * limits.torso_travel,
        'reference': TRACKED if tracked else SMOOTHED,
        **_accuracy_figures(scores),
        **_smoothed_figures(smoothed),
        **_avoidance_figures(trace, robot, counted, scores),
        'limit_share': limits.share,
        'limit_violations': int(np.count_nonzero(limits.violations & in_segments)),
        'jump_frames': int(np.count_nonzero(limits.jumps & in_segments)),
        'solve_ms_p50': percentile_ms(limits.solve_times, 50.0),
        'solve_ms_p99': percentile_ms(limits.solve_times, 99.0),
        'solve_us_histogram': solve_time_histogram(limits.solve_times),
        'iterations_mean': (
            float(np.mean(limits.iterations)) if limits.iterations.size else float('nan')
        ),
        'dropped_frames': int(trace.dropped),
        'segment_pacc_paper': [s.pacc_paper for s in scores],
        **occlusion_figures(trace, demonstration, robot),
    }


def _smoothed_figures(scores: Sequence[SegmentScore]) -> dict[str, Any]:
    """Return the accuracy fields against the smoothed person, keys prefixed ``smoothed_``."""
    figures = _accuracy_figures(scores)
    del figures['segments'], figures['frames']
    figures['elbow_mae_avoided_rad'] = finite_mean(s.elbow_mae_avoided for s in scores)
    figures['segment_pacc_paper'] = [s.pacc_paper for s in scores]
    return {SMOOTHED_PREFIX + key: value for key, value in figures.items()}


def _accuracy_figures(scores: Sequence[SegmentScore]) -> dict[str, Any]:
    """Return the record's accuracy fields: the segments' scores averaged (see :func:`score`)."""
    return {
        'segments': len(scores),
        'frames': int(sum(s.frames for s in scores)),
        'pacc_paper': finite_mean(s.pacc_paper for s in scores),
        'pacc_paper_std': finite_std(s.pacc_paper for s in scores),
        'pacc_task': finite_mean(s.pacc_task for s in scores),
        'pacc_task_std': finite_std(s.pacc_task for s in scores),
        'elbow_mae_rad': finite_mean(s.elbow_mae for s in scores),
        'elbow_mae_free_rad': finite_mean(s.elbow_mae_free for s in scores),
        'dir_err_deg': [
            finite_mean(s.dir_err[0] for s in scores), finite_mean(s.dir_err[1] for s in scores),
        ],
        'dir_err_free_deg': [
            finite_mean(s.dir_err_free[0] for s in scores),
            finite_mean(s.dir_err_free[1] for s in scores),
        ],
        'ee_err_cm': 100.0 * finite_mean(s.ee_err for s in scores),
    }


def _avoidance_figures(
    trace: Trace, robot: Robot, counted: BoolArray, scores: Sequence[SegmentScore]
) -> dict[str, Any]:
    """Return the record's fields on the constraints: where they bound, distance, contacts."""
    samples = sum(s.samples for s in scores)
    free = sum(s.free for s in scores)
    acted = trace.avoided if trace.avoided is not None else np.zeros(len(trace.stamps), bool)
    distances = (
        trace.min_distance[counted] if trace.min_distance is not None else np.zeros(0)
    )
    distances = distances[np.isfinite(distances)]
    return {
        'free_share': free / samples if samples else float('nan'),
        'avoided_share': float(np.mean(acted[counted])) if counted.any() else float('nan'),
        'elbow_mae_avoided_rad': finite_mean(s.elbow_mae_avoided for s in scores),
        'min_distance_cm': 100.0 * float(distances.min()) if distances.size else float('nan'),
        'self_contact_frames': self_contact_frames(robot, trace, counted),
    }


@dataclass(frozen=True)
class _Limits:
    """What the joints did against their limits over a recording (see :func:`score`)."""

    violations: BoolArray
    jumps: BoolArray
    share: dict[str, float]
    torso_travel: float
    solve_times: FloatArray
    iterations: npt.NDArray[np.int64]


def _limit_figures(trace: Trace, robot: Robot, in_segments: BoolArray) -> _Limits:
    """
    Gather the frames beyond a limit or jumping, the share at each limit and the solve times.

    :param trace: Pipeline output over the recording.
    :param robot: The robot.
    :param in_segments: The frames inside a scored segment, shape (T,).
    :return: The figures (violations and jumps per frame of the whole recording).
    """
    violations = np.zeros(len(trace.stamps), dtype=bool)
    jumps = np.zeros(len(trace.stamps), dtype=bool)
    times: list[FloatArray] = []
    iterations: list[npt.NDArray[np.int64]] = []
    limit_share: dict[str, float] = {}
    for name, arm in trace.arms.items():
        model = robot.arms[name]
        violations |= limit_violation_frames(arm.q, model.lower, model.upper)
        jumps |= jump_frames(arm.q)
        mask = in_segments & arm.solved
        times.append(arm.solve_time[mask])
        iterations.append(arm.iterations[mask])
        if np.any(mask):
            shares = np.mean(arm.at_limit[mask], axis=0)
            limit_share.update(
                {joint: round(float(share), 4) for joint, share in zip(model.joint_names, shares)}
            )
    torso_travel = 0.0  # no torso, or one held still
    if trace.torso is not None and robot.torso is not None:
        lift = trace.torso
        violations |= (lift < robot.torso.lower - 1e-9) | (lift > robot.torso.upper + 1e-9)
        inside = lift[in_segments & np.isfinite(lift)]
        if inside.size:
            torso_travel = float(inside.max() - inside.min())
    return _Limits(
        violations=violations,
        jumps=jumps,
        share=limit_share,
        torso_travel=torso_travel,
        solve_times=np.concatenate(times) if times else np.zeros(0),
        iterations=np.concatenate(iterations) if iterations else np.zeros(0, dtype=np.int64),
    )


def self_contact_frames(robot: Robot, trace: Trace, frames: BoolArray) -> int | None:
    """
    Count the frames where MuJoCo finds the robot in contact with itself.

    MuJoCo's collision detection on the URDF's own shapes, the independent reference of the
    capsules the solvers avoid with (:class:`~pic_ros_tools.sim.contacts.ContactChecker`).

    :param robot: The robot.
    :param trace: Pipeline output over a recording.
    :param frames: The frames to check, shape (T,).
    :return: The count, or None when MuJoCo is not installed.
    """
    try:
        from pic_ros_tools.sim.contacts import ContactChecker
    except ImportError:
        return None
    checker = ContactChecker(robot)
    count = 0
    for index in np.flatnonzero(frames):
        lift = None if trace.torso is None else float(trace.torso[index])
        arms = {name: arm.q[index] for name, arm in trace.arms.items()}
        count += bool(checker.contacts(arms, None if lift is None or math.isnan(lift) else lift))
    return count


def evaluate_one(
    robot: Robot,
    demonstration: Demonstration,
    solver: SolverConfig,
    settings: EvaluationSettings | None = None,
) -> dict[str, Any]:
    """
    Run and score one recording x robot x solver setting.

    :param robot: The robot.
    :param demonstration: The recording.
    :param solver: Solver settings.
    :param settings: Processing and mapping settings.
    :return: The JSON record (see :func:`score`), with the smoothing used (``smoothing``,
        ``time_constant_s``).
    """
    settings = settings if settings is not None else EvaluationSettings()
    trace = run_imitation(robot, demonstration, solver, settings)
    return with_smoothing(score(trace, demonstration, robot, solver), settings)


def with_smoothing(record: dict[str, Any], settings: EvaluationSettings) -> dict[str, Any]:
    """
    Add the smoothing a record's run used (``smoothing``, ``time_constant_s`` [s] or None).

    :param record: A record of :func:`score`, changed in place.
    :param settings: The settings of its run.
    :return: The record.
    """
    processing = settings.processing
    record['smoothing'] = processing.smoothing
    record['time_constant_s'] = (
        processing.time_constant if processing.smoothing == 'exponential' else None
    )
    return record


__all__ = [
    'ArmTrace',
    'EvaluationSettings',
    'PAPER_PACC',
    'PAPER_PACC_MEANS',
    'PAPER_TASKS',
    'SMOOTHED',
    'SMOOTHED_PREFIX',
    'SOLVER_SETTINGS',
    'SegmentScore',
    'TRACKED',
    'Trace',
    'AT_LIMIT',
    'at_limit',
    'evaluate_one',
    'histogram_percentile_ms',
    'paper_column',
    'place_tracked',
    'reference_correspondences',
    'run_imitation',
    'score',
    'score_segment',
    'with_smoothing',
    'self_contact_frames',
    'solve_time_histogram',
]
