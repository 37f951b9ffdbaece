"""
The tracker-independent human skeleton used everywhere downstream of the trackers.

Every tracker (Kinect v2, Azure Kinect, Xsens MVN) is converted to a :class:`SkeletonFrame`: the
12 upper-body joints of :class:`HumanJoint`, in that fixed order, with a validity flag per joint.
This order is also the order of the poses in the ``skeleton`` topic (``geometry_msgs/PoseArray``).

Frames are named, not implied:

- ``tracker``: the tracker's own origin with REP-103 axes as seen from the sensor (x away from the
  sensor, y to the sensor's left, z up), metres;
- ``body``: the body-centred human frame (``docs/method.md#frames``) -- origin at the chest
  (midpoint of the shoulders), x forward out of the chest, y to the person's left, z up, metres.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import SkeletonError

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class HumanJoint(enum.IntEnum):
    """Upper-body joints, in the order of :attr:`SkeletonFrame.positions` and of the topic."""

    PELVIS = 0
    SPINE_CHEST = 1
    NECK = 2
    HEAD = 3
    SHOULDER_LEFT = 4
    ELBOW_LEFT = 5
    WRIST_LEFT = 6
    HAND_LEFT = 7
    SHOULDER_RIGHT = 8
    ELBOW_RIGHT = 9
    WRIST_RIGHT = 10
    HAND_RIGHT = 11


JOINT_COUNT: Final = len(HumanJoint)
HUMAN_JOINT_NAMES: Final = tuple(joint.name.lower() for joint in HumanJoint)


class Side(enum.Enum):
    """Left or right, of the person or of the robot."""

    LEFT = 'left'
    RIGHT = 'right'

    @property
    def other(self) -> Side:
        """Return the opposite side."""
        return Side.RIGHT if self is Side.LEFT else Side.LEFT


ARM_JOINTS: Final = {
    Side.LEFT: (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT),
    Side.RIGHT: (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT),
}
"""Shoulder, elbow and wrist of each arm."""

MAX_BONE_LENGTH: Final = 1.5
"""
Longest believable bone [m]: longer ones come from a tracking error.

See ``docs/method.md#sessions-body-identity-and-drop-reasons``.
"""

MIN_BONE_LENGTH: Final = 1e-3
"""Shortest believable bone [m]: shorter ones are coincident joints."""


@dataclass(frozen=True)
class SkeletonFrame:
    """
    One skeleton sample.

    :param stamp: Capture time [s] (tracker clock or message stamp).
    :param positions: Joint positions, shape (12, 3), [m], in the frame ``frame``; rows follow
        :class:`HumanJoint`. Rows of invalid joints are NaN.
    :param valid: Which joints were measured, shape (12,).
    :param frame: ``'tracker'`` or ``'body'`` (see the module docstring).
    """

    stamp: float
    positions: FloatArray
    valid: BoolArray
    frame: str = 'tracker'

    def __post_init__(self) -> None:
        if self.positions.shape != (JOINT_COUNT, 3):
            raise SkeletonError(
                f'skeleton positions must have shape ({JOINT_COUNT}, 3), got '
                f'{self.positions.shape}'
            )
        if self.valid.shape != (JOINT_COUNT,):
            raise SkeletonError(f'skeleton validity must have shape ({JOINT_COUNT},)')
        if self.frame not in ('tracker', 'body'):
            raise SkeletonError(f"skeleton frame must be 'tracker' or 'body', got {self.frame!r}")

    def arm(self, side: Side) -> FloatArray:
        """
        Return the shoulder, elbow and wrist of one arm.

        :param side: Which arm of the person.
        :return: Positions, shape (3, 3), rows shoulder, elbow, wrist, [m], frame ``frame``.
        """
        return self.positions[list(ARM_JOINTS[side])]

    def has_arm(self, side: Side) -> bool:
        """Whether the shoulder, elbow and wrist of one arm are all valid."""
        return bool(np.all(self.valid[list(ARM_JOINTS[side])]))


def make_frame(
    stamp: float,
    positions: npt.ArrayLike,
    valid: npt.ArrayLike | None = None,
    frame: str = 'tracker',
) -> SkeletonFrame:
    """
    Build a frame, marking non-finite rows invalid and blanking invalid rows to NaN.

    :param stamp: Capture time [s].
    :param positions: Joint positions, shape (12, 3), [m].
    :param valid: Optional validity, shape (12,); default: every finite row.
    :param frame: ``'tracker'`` or ``'body'``.
    :return: The frame; its arrays are copies owned by it.
    :raises SkeletonError: On a wrong shape.
    """
    points = np.array(positions, dtype=float)
    if points.shape != (JOINT_COUNT, 3):
        raise SkeletonError(f'skeleton positions must have shape ({JOINT_COUNT}, 3)')
    mask = np.all(np.isfinite(points), axis=1)
    if valid is not None:
        flags = np.asarray(valid, dtype=bool)
        if flags.shape != (JOINT_COUNT,):
            raise SkeletonError(f'skeleton validity must have shape ({JOINT_COUNT},)')
        mask &= flags
    points[~mask] = np.nan
    return SkeletonFrame(stamp=float(stamp), positions=points, valid=mask, frame=frame)
