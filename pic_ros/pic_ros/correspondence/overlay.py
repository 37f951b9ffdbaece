"""
The person drawn over the robot: where each of the person's joints goes in the robot base frame.

What a viewer needs to show the person and the robot together (RViz markers, the demo's
pictures). Each arm is drawn where the correspondence placed it for the solver: its shoulder,
elbow and wrist targets (:class:`~pic_ros.correspondence.ArmTargets`), anchored at the robot
arm's shoulder landmark, robot base frame. The trunk and head keep the person's shape relative to
the middle of their shoulders, scaled by the robot's arm length over the person's (so they fit
the placed arms) and reflected like the arms in the ``mirror`` mapping, from the middle of the
placed shoulders; collar bones join the person's chest to each placed shoulder.

Pure numpy; positions [m], robot base frame (REP-103 axes, like the body frame's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence.mapping import MappingMode, MIRROR_REFLECTION
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.skeleton import HumanJoint, SkeletonFrame

FloatArray = npt.NDArray[np.float64]

TRUNK_JOINTS: Final = (
    HumanJoint.PELVIS, HumanJoint.SPINE_CHEST, HumanJoint.NECK, HumanJoint.HEAD,
)
"""The person's joints placed with the trunk (keys of :attr:`PersonOverlay.trunk`), in order."""

TRUNK_BONES: Final = (
    (HumanJoint.PELVIS, HumanJoint.SPINE_CHEST), (HumanJoint.SPINE_CHEST, HumanJoint.NECK),
    (HumanJoint.NECK, HumanJoint.HEAD),
)
"""Trunk bones of the person drawn over the robot."""

ARM_BONES: Final = ((0, 1), (1, 2))
"""Bones of a placed arm: rows (shoulder, elbow) and (elbow, wrist) of its points."""


class FollowState(enum.Enum):
    """Whether the robot follows the person, as a viewer shows it (the overlay's colour)."""

    ENGAGED = 'engaged'
    """The robot follows the person."""

    STOPPED = 'stopped'
    """The robot holds still: disengaged or emergency-stopped (it does not follow)."""

    UNKNOWN = 'unknown'
    """Nothing known yet (no word from the trajectory publisher)."""


FOLLOW_COLOURS: Final = MappingProxyType({
    FollowState.ENGAGED: (0.15, 0.75, 0.25, 0.9),
    FollowState.STOPPED: (0.9, 0.2, 0.15, 0.9),
    FollowState.UNKNOWN: (0.6, 0.6, 0.6, 0.9),
})
"""Colour and opacity (red, green, blue, alpha in [0, 1]) of the placed arms per state."""

TRUNK_COLOUR: Final = (0.35, 0.35, 0.35, 0.6)
"""Colour and opacity of the person's trunk, head and collar bones drawn over the robot."""


def arm_points(targets: ArmTargets) -> FloatArray:
    """
    Return an arm's targets as the rows an overlay takes.

    :param targets: The arm as the correspondence placed it (robot base frame).
    :return: Shoulder, elbow and wrist, shape (3, 3), [m].
    """
    return np.array((targets.shoulder, targets.elbow, targets.wrist), dtype=float)


@dataclass(frozen=True)
class PersonOverlay:
    """
    The person placed on the robot for one skeleton, robot base frame.

    :param stamp: The skeleton's capture time [s].
    :param arms: Per robot arm name, the placed shoulder, elbow and wrist, shape (3, 3), [m].
    :param trunk: Per joint of :data:`TRUNK_JOINTS` that is known, its placed position, shape
        (3,), [m]; empty when the person's shoulders or arm lengths are unknown.
    :param arm_length: The robot's arm length the person was scaled to (mean of the placed arms'
        upper arm + forearm) [m]; 0 without placed arms. Viewers size their drawing with it.
    """

    stamp: float
    arms: Mapping[str, FloatArray]
    trunk: Mapping[HumanJoint, FloatArray]
    arm_length: float

    @property
    def arm_bones(self) -> FloatArray:
        """Return the placed arms' bones, shape (K, 2, 3), [m] (arm order, shoulder first)."""
        bones = [
            (points[first], points[second])
            for points in self.arms.values()
            for first, second in ARM_BONES
        ]
        return np.array(bones, dtype=float).reshape(-1, 2, 3)

    @property
    def trunk_bones(self) -> FloatArray:
        """
        Return the trunk's bones and the collar bones, shape (K, 2, 3), [m].

        A trunk bone is there when both its joints are; a collar bone (chest to a placed
        shoulder) when the chest is.
        """
        bones = [
            (self.trunk[first], self.trunk[second])
            for first, second in TRUNK_BONES
            if first in self.trunk and second in self.trunk
        ]
        chest = self.trunk.get(HumanJoint.SPINE_CHEST)
        if chest is not None:
            bones += [(chest, points[0]) for points in self.arms.values()]
        return np.array(bones, dtype=float).reshape(-1, 2, 3)

    @property
    def joints(self) -> FloatArray:
        """Return every placed joint: the arms' (arm order) then the trunk's, shape (M, 3), [m]."""
        rows = [row for points in self.arms.values() for row in points]
        rows += [self.trunk[joint] for joint in TRUNK_JOINTS if joint in self.trunk]
        return np.array(rows, dtype=float).reshape(-1, 3)


def _arm_length(points: FloatArray) -> float:
    """Return upper arm + forearm of shoulder, elbow and wrist rows [m] (NaN if one is)."""
    return float(np.linalg.norm(points[1] - points[0]) + np.linalg.norm(points[2] - points[1]))


def overlay_person(
    frame: SkeletonFrame,
    placed: Mapping[str, npt.ArrayLike],
    mode: MappingMode = MappingMode.SAME_SIDE,
) -> PersonOverlay:
    """
    Place the whole person on the robot around the arms as the correspondence placed them.

    :param frame: The skeleton, body frame (what the correspondences placed).
    :param placed: Per robot arm name, its shoulder, elbow and wrist targets, shape (3, 3), [m],
        robot base frame (:func:`arm_points`); arms that were not placed are left out.
    :param mode: The mapping mode (``mirror`` reflects the trunk like the arms).
    :return: The overlay (no trunk without placed arms, valid shoulders and a known arm length).
    :raises ValueError: If the skeleton is not in the body frame or a placed arm is not (3, 3).
    """
    if frame.frame != 'body':
        raise ValueError(f'the overlay needs a body-frame skeleton, got frame {frame.frame!r}')
    arms: dict[str, FloatArray] = {}
    for name, value in placed.items():
        points = np.array(value, dtype=float)
        if points.shape != (3, 3):
            raise ValueError(f'placed arm {name!r} must have shape (3, 3), got {points.shape}')
        points.setflags(write=False)
        arms[name] = points
    trunk: dict[HumanJoint, FloatArray] = {}
    robot_lengths = [_arm_length(points) for points in arms.values()]
    robot_length = float(np.mean(robot_lengths)) if robot_lengths else 0.0
    joints = frame.positions
    shoulders = [HumanJoint.SHOULDER_LEFT, HumanJoint.SHOULDER_RIGHT]
    person_lengths = [
        _arm_length(joints[list(rows)])
        for rows in (
            (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT),
            (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT),
        )
    ]
    known = [length for length in person_lengths if np.isfinite(length)]
    person_length = float(np.mean(known)) if known else float('nan')
    if (
        arms and np.all(frame.valid[shoulders]) and np.isfinite(robot_length)
        and np.isfinite(person_length) and person_length > 0.0
    ):
        middle = np.mean(joints[shoulders], axis=0)
        anchor = np.mean([points[0] for points in arms.values()], axis=0)
        for joint in TRUNK_JOINTS:
            if not frame.valid[joint]:
                continue
            relative = (joints[joint] - middle) * (robot_length / person_length)
            if mode is MappingMode.MIRROR:
                relative = relative @ MIRROR_REFLECTION
            point = anchor + relative
            point.setflags(write=False)
            trunk[joint] = point
    return PersonOverlay(
        stamp=frame.stamp, arms=MappingProxyType(arms), trunk=MappingProxyType(trunk),
        arm_length=robot_length,
    )
