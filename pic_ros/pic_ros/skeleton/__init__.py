"""
The tracker-independent human skeleton: what the trackers produce and every later stage reads.

A package of types below every pipeline stage (the trackers build these frames, the human stage
smooths them, the correspondences read them): it imports nothing of the stages. ``face``
places the face points of a head pose (the Xsens tracker and the head estimator use it).

Every tracker (Kinect v2, Azure Kinect, Xsens MVN) is converted to a :class:`SkeletonFrame`: the
19 rows of :class:`HumanJoint`, in that fixed order, with a validity flag per joint. This order is
also the order of the poses in the ``skeleton`` topic (``geometry_msgs/PoseArray``).

The first 12 rows (:data:`BODY_JOINT_COUNT`, pelvis to right hand) are the body the solvers use;
their indices never change. Rows 12 to 18 were appended for the head and hand estimators
(:mod:`pic_ros.human.head`, :mod:`pic_ros.human.hands`): the face (nose, ears) and each hand's tip
and thumb (:data:`EXTREMITY_JOINTS`). A tracker fills those it has and leaves the others invalid
(Kinect v2 has no face points, Xsens MVN without gloves no fingers); an implausible extremity point
is invalidated alone (:mod:`pic_ros.human.extremities`), never the frame. Messages and recordings
from before the extra rows hold only the 12 body rows (:func:`pad_body_rows`).

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
    NOSE = 12
    EAR_LEFT = 13
    EAR_RIGHT = 14
    HAND_TIP_LEFT = 15
    THUMB_LEFT = 16
    HAND_TIP_RIGHT = 17
    THUMB_RIGHT = 18


JOINT_COUNT: Final = len(HumanJoint)
"""Rows of a :class:`SkeletonFrame` (19)."""

BODY_JOINT_COUNT: Final = 12
"""
Rows of the body proper, pelvis to right hand (rows 0 to 11).

Also the pose count of ``skeleton`` messages recorded before the face and finger rows existed.
"""

HUMAN_JOINT_NAMES: Final = tuple(joint.name.lower() for joint in HumanJoint)

FACE_JOINTS: Final = (HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT)
"""The face points, read by :func:`pic_ros.human.head.head_angles`."""


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

HAND_JOINTS: Final = {
    Side.LEFT: (HumanJoint.WRIST_LEFT, HumanJoint.HAND_LEFT, HumanJoint.HAND_TIP_LEFT,
                HumanJoint.THUMB_LEFT),
    Side.RIGHT: (HumanJoint.WRIST_RIGHT, HumanJoint.HAND_RIGHT, HumanJoint.HAND_TIP_RIGHT,
                 HumanJoint.THUMB_RIGHT),
}
"""Wrist, hand, hand tip and thumb of each hand."""

EXTREMITY_JOINTS: Final = FACE_JOINTS + (
    HumanJoint.HAND_TIP_LEFT, HumanJoint.THUMB_LEFT, HumanJoint.HAND_TIP_RIGHT,
    HumanJoint.THUMB_RIGHT,
)
"""The appended rows (12 to 18): checked and invalidated one by one, never dropping a frame."""

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
    :param positions: Joint positions, shape (19, 3), [m], in the frame ``frame``; rows follow
        :class:`HumanJoint`. Rows of invalid joints are NaN.
    :param valid: Which joints were measured, shape (19,).
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

    The 12 body rows alone are accepted too (a tracker plug-in or a recording from before the
    face and finger rows): the other rows are then invalid (:func:`pad_body_rows`).

    :param stamp: Capture time [s].
    :param positions: Joint positions, shape (19, 3) or (12, 3), [m].
    :param valid: Optional validity, shape (19,) or (12,) like ``positions``; default: every
        finite row.
    :param frame: ``'tracker'`` or ``'body'``.
    :return: The frame; its arrays are copies owned by it.
    :raises SkeletonError: On a wrong shape.
    """
    points = pad_body_rows(positions)
    rows = np.shape(positions)[0] if np.ndim(positions) == 2 else JOINT_COUNT
    mask = np.all(np.isfinite(points), axis=1)
    if valid is not None:
        flags = np.asarray(valid, dtype=bool)
        if flags.shape != (rows,):
            raise SkeletonError(f'skeleton validity must have shape ({rows},)')
        mask[:rows] &= flags
    points[~mask] = np.nan
    return SkeletonFrame(stamp=float(stamp), positions=points, valid=mask, frame=frame)


def pad_body_rows(positions: npt.ArrayLike) -> FloatArray:
    """
    Extend the 12 body rows of an older recording or message with invalid extremity rows.

    :param positions: Joint positions, shape (12, 3) (body rows only) or (19, 3), [m], any
        frame.
    :return: New array, shape (19, 3): the given rows, then NaN rows for the missing ones.
    :raises SkeletonError: On any other shape.
    """
    points = np.array(positions, dtype=float)
    if points.ndim != 2 or points.shape[1] != 3 or points.shape[0] not in (
        BODY_JOINT_COUNT, JOINT_COUNT
    ):
        raise SkeletonError(
            f'skeleton positions must have shape ({BODY_JOINT_COUNT}, 3) or ({JOINT_COUNT}, 3), '
            f'got {points.shape}'
        )
    padded = np.full((JOINT_COUNT, 3), np.nan)
    padded[: points.shape[0]] = points
    return padded
