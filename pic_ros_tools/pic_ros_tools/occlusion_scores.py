"""
The PIC paper's percentage of occlusion / obstruction (PO) on a recording: person and robot.

Definition and choices: ``docs/method.md#percentage-of-occlusion``. In short:

- **the surface**: the pad (incision) or insertion area (assembly) of the paper configuration of
  the robot being scored (Baxter's for robots the paper did not use), read as published
  (:mod:`pic_ros_tools.recordings.paper_task`), fixed in the tracker frame at the person's size
  from the person's right shoulder where it stands over the recording's segments (median);
- **the frames**: those of the segments where the wrist of a task arm, as tracked, is over the
  ROI (the paper's rule);
- **the person**: both arms as tracked (shoulder-elbow, elbow-wrist, wrist-hand when the hand is
  tracked), capsules of :data:`HUMAN_RADII`;
- **the robot**: every collision capsule its arm joints carry (the robot file's capsules, from the
  URDF's collision shapes; :mod:`pic_ros.robot.collision`), at the joint values the pipeline held
  after the frame, in the robot base frame; the surface is placed in that frame the way the person
  is placed on the robot: in the body frame, the task arm's shoulder on the robot arm's neutral
  shoulder landmark, scaled by the robot's arm length over the person's (the mean of the task
  arms' placements when both arms work);
- per frame the covered share of the ROI (:func:`pic_ros_tools.occlusion.covered_fraction`,
  overlaps counted once); per segment the mean over its frames; per recording the mean and
  population standard deviation over segments, like the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence.mapping import MIRROR_REFLECTION
from pic_ros.exceptions import SkeletonError
from pic_ros.human.body_frame import body_axes
from pic_ros.robot.collision import STATIC
from pic_ros.robot.robot import Robot
from pic_ros.skeleton import HumanJoint, Side, SkeletonFrame
from pic_ros_tools.metrics import finite_mean, finite_std
from pic_ros_tools.occlusion import Coverage, covered_fraction, RegionOfInterest
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper_task import PaperPad

FloatArray = npt.NDArray[np.float64]

HUMAN_RADII: Final = MappingProxyType({'upper_arm': 0.048, 'forearm': 0.040, 'hand': 0.040})
"""
Radii of the person's links [m]; the paper states none (its links have no width).

Round adult figures: an upper-arm circumference of about 30 cm and a forearm of about 25 cm
(radius = circumference / 2 pi), a hand about 8 cm across.
"""

_ARM_JOINTS: Final = {
    Side.LEFT: (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT,
                HumanJoint.HAND_LEFT),
    Side.RIGHT: (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT,
                 HumanJoint.HAND_RIGHT),
}

PAPER_ROBOT_FOR_PAD: Final = 'baxter'
"""Whose paper configuration gives the surface for a robot the paper did not use."""

PAPER_PO: Final = MappingProxyType(
    {
        ('yumi', 'I-S'): (0.097, 0.025, 0.008, 0.007, 0.007, 0.106),
        ('yumi', 'I-C'): (0.074, 0.053, 0.012, 0.073, 0.073, 0.086),
        ('baxter', 'I-S'): (0.112, 0.028, 0.058, 0.072, 0.133, 0.075),
        ('baxter', 'I-C'): (0.116, 0.055, 0.031, 0.101, 0.136, 0.084),
        ('yumi', 'A-1'): (0.057, 0.038, 0.032, 0.032, 0.032, 0.059),
        ('yumi', 'A-2'): (0.076, 0.085, 0.067, 0.067, 0.067, 0.085),
        ('yumi', 'A-3'): (0.029, 0.034, 0.028, 0.032, 0.032, 0.025),
        ('baxter', 'A-1'): (0.084, 0.055, 0.071, 0.074, 0.074, 0.057),
        ('baxter', 'A-2'): (0.197, 0.182, 0.133, 0.173, 0.153, 0.126),
        ('baxter', 'A-3'): (0.120, 0.079, 0.072, 0.075, 0.066, 0.041),
    }
)
"""
The PIC paper's PO per (robot, task): the robot's with FABRIK, PIC, PICs η = 1, 2, 3 (the
columns of :func:`pic_ros_tools.evaluation.paper_column`), then the person's.

Tables II-III (FABRIK, PIC, PICs η = 3, Human) and Fig. 8 (η = 1, 2), as recomputed from the
authors' result files (``pic_method.md`` section 8; identical to the paper after rounding).
Their geometry differs from ours (``docs/method.md#percentage-of-occlusion``).
"""

PAPER_PO_MEANS: Final = (0.097, 0.063, 0.052, 0.071, 0.077, 0.074)
"""The paper's PO pooled over its 99 segments, in the columns of :data:`PAPER_PO`."""


def human_capsules(frame: SkeletonFrame) -> tuple[FloatArray, FloatArray, FloatArray]:
    """
    Return the person's arm links as capsules.

    :param frame: A skeleton, any frame.
    :return: ``(starts, ends, radii)``: shapes (n, 3), (n, 3) [m] (same frame) and (n,) [m];
        links with an untracked end are left out.
    """
    starts, ends, radii = [], [], []
    names = ('upper_arm', 'forearm', 'hand')
    for joints in _ARM_JOINTS.values():
        for index, name in enumerate(names):
            first, second = joints[index], joints[index + 1]
            if frame.valid[first] and frame.valid[second]:
                starts.append(frame.positions[first])
                ends.append(frame.positions[second])
                radii.append(HUMAN_RADII[name])
    if not starts:
        return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)
    return np.array(starts), np.array(ends), np.array(radii)


@dataclass(frozen=True)
class RobotArmCapsules:
    """
    The collision capsules a robot's arm joints carry.

    :param robot: The robot.
    """

    robot: Robot

    def placed(
        self, arms: Mapping[str, npt.ArrayLike], torso: float | None
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Place the arm capsules at a configuration.

        :param arms: Joint values per arm name.
        :param torso: Torso lift [m], or None for its neutral value.
        :return: ``(starts, ends, radii)`` in the robot base frame [m].
        """
        model = self.robot.collision
        moving = model.anchor != STATIC
        if model.torso_index is not None:
            moving &= model.anchor != model.torso_index
        chosen = np.flatnonzero(moving)
        if chosen.size == 0:
            return np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)
        ends, _ = model.placed(model.vector(arms, torso), chosen)
        return ends[:, 0], ends[:, 1], model.radii[chosen]


def _arm_length(points: FloatArray) -> FloatArray:
    """Return shoulder -> elbow + elbow -> wrist per row, shape (T,) [m] (NaN if untracked)."""
    return np.asarray(
        np.linalg.norm(points[:, 1] - points[:, 0], axis=1)
        + np.linalg.norm(points[:, 2] - points[:, 1], axis=1)
    )


def _arm_points(frames: Sequence[SkeletonFrame], side: Side) -> FloatArray:
    """Return shoulder, elbow, wrist of one arm per frame, shape (T, 3, 3) [m]; NaN if invalid."""
    rows = list(_ARM_JOINTS[side][:3])
    points = np.full((len(frames), 3, 3), np.nan)
    for index, frame in enumerate(frames):
        if np.all(frame.valid[rows]):
            points[index] = frame.positions[rows]
    return points


@dataclass(frozen=True)
class _Placement:
    """The body frame -> robot base frame map of one robot arm: ``p -> anchor + s M (p - h)``."""

    robot_shoulder: FloatArray
    scale: float
    reflection: FloatArray
    human_side: Side


def _placements(
    robot: Robot, trace: Any, frames: Sequence[SkeletonFrame]
) -> dict[str, _Placement]:
    placements: dict[str, _Placement] = {}
    for name, arm_trace in trace.arms.items():
        arm = robot.arms[name]
        landmarks = arm.landmarks(arm.neutral)
        robot_length = float(np.linalg.norm(landmarks[2] - landmarks[1]))
        robot_length += float(np.linalg.norm(landmarks[3] - landmarks[2]))
        lengths = _arm_length(_arm_points(frames, arm_trace.human_side))
        lengths = lengths[np.isfinite(lengths)]
        if lengths.size == 0 or robot_length <= 0.0:
            continue
        mirrored = arm_trace.human_side is not arm.side
        placements[name] = _Placement(
            robot_shoulder=landmarks[1],
            scale=robot_length / float(np.median(lengths)),
            reflection=MIRROR_REFLECTION if mirrored else np.eye(3),
            human_side=arm_trace.human_side,
        )
    return placements


def _robot_region(
    roi: RegionOfInterest,
    frame: SkeletonFrame,
    placements: Sequence[_Placement],
) -> RegionOfInterest | None:
    """Place a tracker-frame ROI in the robot base frame (see the module docstring)."""
    try:
        rotation, origin = body_axes(frame)
    except SkeletonError:
        return None
    body = roi.moved(rotation.T, -rotation.T @ origin)
    translations, scales = [], []
    for placement in placements:
        shoulder = frame.positions[_ARM_JOINTS[placement.human_side][0]]
        in_body = rotation.T @ (shoulder - origin)
        translations.append(
            placement.robot_shoulder - placement.scale * (placement.reflection @ in_body)
        )
        scales.append(placement.scale)
    if not translations:
        return None
    reflection = placements[0].reflection
    return body.moved(reflection, np.mean(translations, axis=0), float(np.mean(scales)))


def _right_shoulder(demonstration: Demonstration) -> FloatArray | None:
    rows = []
    for segment in demonstration.segments:
        for frame in demonstration.frames[segment.frame_slice]:
            if frame.valid[HumanJoint.SHOULDER_RIGHT]:
                rows.append(frame.positions[HumanJoint.SHOULDER_RIGHT])
    return np.median(np.array(rows), axis=0) if rows else None


_HUMAN_CACHE: dict[tuple[int, PaperPad], tuple[object, dict[int, Coverage]]] = {}
"""
The person's per-frame cover per recording (its frames, held so that their id stays theirs) and
surface: it is the same for every robot and setting using that surface.
"""

_CACHE_SIZE: Final = 4


def _human_share(
    roi: RegionOfInterest, frame: SkeletonFrame, index: int, cache: dict[int, Coverage]
) -> Coverage:
    """Return the person's cover of a frame, computed once per recording and surface."""
    if index not in cache:
        cache[index] = covered_fraction(roi, *human_capsules(frame))
    return cache[index]


def pad_for(robot: str, pads: Mapping[str, PaperPad]) -> PaperPad | None:
    """
    Choose the task surface for a robot.

    :param robot: Robot name.
    :param pads: Task surfaces per paper robot name.
    :return: The robot's own paper configuration's, else :data:`PAPER_ROBOT_FOR_PAD`'s, else
        None.
    """
    return pads.get(robot, pads.get(PAPER_ROBOT_FOR_PAD))


def _may_score(allowed: npt.NDArray[np.bool_] | None, index: int) -> bool:
    """Return whether a frame may be scored (None: every frame may)."""
    return allowed is None or (index < allowed.size and bool(allowed[index]))


def _task_wrist_over(
    roi: RegionOfInterest, frame: SkeletonFrame, task_arms: frozenset[Side]
) -> bool:
    """Return whether a tracked wrist of a task arm is over the region of interest."""
    wrists = [frame.positions[_ARM_JOINTS[side][2]] for side in task_arms
              if frame.valid[_ARM_JOINTS[side][2]]]
    return bool(wrists) and bool(np.any(roi.over(np.array(wrists))))


def _robot_cover(
    roi: RegionOfInterest, frame: SkeletonFrame, working: Sequence[_Placement],
    capsules: RobotArmCapsules, trace: Any, index: int,
) -> Coverage | None:
    """
    Return how much of the robot's region of interest its arms cover at a frame, or None.

    :return: The area result of :func:`covered_fraction`; None when the region cannot be
        placed for the robot (:func:`_robot_region`).
    """
    placed = _robot_region(roi, frame, working)
    if placed is None:
        return None
    lift = None if trace.torso is None else float(trace.torso[index])
    arms = {name: arm.q[index] for name, arm in trace.arms.items()}
    return covered_fraction(
        placed, *capsules.placed(arms, None if lift is None or math.isnan(lift) else lift)
    )


def occlusion_figures(
    trace: Any,
    demonstration: Demonstration,
    robot: Robot,
    scored: npt.ArrayLike | None = None,
) -> dict[str, Any]:
    """
    Compute the PO figures of one recording x robot x setting.

    :param trace: The pipeline's output (:class:`pic_ros_tools.evaluation.Trace`), over the
        recording's frames or (with ``scored``) over its first ``len(scored)`` frames.
    :param demonstration: The recording, with its task surfaces and task arms; the surface is
        placed from its segments whatever ``scored`` is.
    :param robot: The robot.
    :param scored: The frames that may be scored, shape (n,), n <= the recording's frames: the
        first n frames (those of the trace), the others never; None: every frame.
    :return: ``po_human`` and ``po_robot`` (mean over segments), their ``_std`` (population),
        ``segment_po_human`` / ``segment_po_robot`` (NaN for a segment with no frame over the
        ROI), ``po_frames`` (frames scored) and ``po_error`` (the largest per-frame error bound
        of the area integration); an empty dict when the recording has no task surface.
    """
    pad = pad_for(robot.name, demonstration.pads)
    shoulder = _right_shoulder(demonstration) if pad is not None else None
    if pad is None or shoulder is None:
        return {}
    while len(_HUMAN_CACHE) >= _CACHE_SIZE:
        _HUMAN_CACHE.pop(next(iter(_HUMAN_CACHE)))
    roi = pad.tracker_region(shoulder)
    frames = demonstration.frames
    placements = _placements(robot, trace, frames)
    capsules = RobotArmCapsules(robot)
    human_means: list[float] = []
    robot_means: list[float] = []
    counted = 0
    worst = 0.0
    _, human_cache = _HUMAN_CACHE.setdefault(
        (id(demonstration.frames), pad), (demonstration.frames, {})
    )
    allowed = None if scored is None else np.asarray(scored, dtype=bool)
    for segment, task_arms in zip(demonstration.segments, demonstration.task_arms):
        human_values: list[float] = []
        robot_values: list[float] = []
        working = [p for p in placements.values() if p.human_side in task_arms]
        for index in range(segment.start, segment.stop):
            frame = frames[index]
            if not _may_score(allowed, index) or not _task_wrist_over(roi, frame, task_arms):
                continue
            robot_cover = _robot_cover(roi, frame, working, capsules, trace, index)
            if robot_cover is None:
                continue
            human = _human_share(roi, frame, index, human_cache)
            human_values.append(human.fraction)
            robot_values.append(robot_cover.fraction)
            worst = max(worst, human.error_bound, robot_cover.error_bound)
        counted += len(human_values)
        human_means.append(float(np.mean(human_values)) if human_values else float('nan'))
        robot_means.append(float(np.mean(robot_values)) if robot_values else float('nan'))
    return {
        'po_human': finite_mean(human_means),
        'po_human_std': finite_std(human_means),
        'po_robot': finite_mean(robot_means),
        'po_robot_std': finite_std(robot_means),
        'segment_po_human': human_means,
        'segment_po_robot': robot_means,
        'po_frames': counted,
        'po_error': worst,
    }


__all__ = [
    'HUMAN_RADII',
    'PAPER_PO',
    'PAPER_PO_MEANS',
    'PAPER_ROBOT_FOR_PAD',
    'RobotArmCapsules',
    'human_capsules',
    'occlusion_figures',
    'pad_for',
]
