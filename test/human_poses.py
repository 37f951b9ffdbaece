"""Test people: in the body-centred frame, and in front of a sensor (the tracker frame)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from pic_ros.skeleton import (
    HumanJoint,
    JOINT_COUNT,
    make_frame,
    pad_body_rows,
    SkeletonFrame,
)
from pic_ros.trackers.markers import AZURE_KINECT, AZURE_KINECT_TO_HUMAN

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.int64]

J = HumanJoint
HALF_WIDTH = 0.18  # [m] half the shoulder width of the test person

BODY = np.array(
    [
        (0.0, 0.0, -0.5),  # pelvis
        (0.0, 0.0, -0.05),  # spine_chest
        (0.0, 0.0, 0.1),  # neck
        (0.05, 0.0, 0.25),  # head
        (0.0, HALF_WIDTH, 0.0),  # shoulder_left
        (0.05, 0.25, -0.28),  # elbow_left
        (0.3, 0.2, -0.3),  # wrist_left
        (0.38, 0.2, -0.3),  # hand_left
        (0.0, -HALF_WIDTH, 0.0),  # shoulder_right
        (0.1, -0.22, -0.27),  # elbow_right
        (0.35, -0.1, -0.2),  # wrist_right
        (0.43, -0.1, -0.2),  # hand_right
        (0.15, 0.0, 0.22),  # nose
        (0.03, 0.075, 0.24),  # ear_left
        (0.03, -0.075, 0.24),  # ear_right
        (0.47, 0.2, -0.3),  # hand_tip_left
        (0.36, 0.15, -0.28),  # thumb_left
        (0.52, -0.1, -0.2),  # hand_tip_right
        (0.41, -0.05, -0.18),  # thumb_right
    ]
)
"""
A person in the body frame [m]: spine along z, shoulders on y, both forearms forward.

All 19 rows: the face looks straight ahead, both hands are open.
"""


def body(points: np.ndarray, stamp: float = 0.0) -> SkeletonFrame:
    """
    Make a body-frame skeleton.

    :param points: Joint positions, shape (19, 3) or the 12 body rows (12, 3), [m], body frame.
    :param stamp: Capture time [s].
    :return: The frame (rows not given are invalid).
    """
    return make_frame(stamp, pad_body_rows(points), frame='body')


def with_arm(
    upper: np.ndarray, fore: np.ndarray, stamp: float = 0.0, side: str = 'right'
) -> SkeletonFrame:
    """
    Return the test person with one arm given by its bone vectors.

    :param upper: Shoulder -> elbow vector [m], body frame.
    :param fore: Elbow -> wrist vector [m], body frame.
    :param stamp: Capture time [s].
    :param side: ``'right'`` or ``'left'`` arm.
    :return: The body-frame skeleton.
    """
    points = BODY.copy()
    shoulder, elbow, wrist = (
        (J.SHOULDER_RIGHT, J.ELBOW_RIGHT, J.WRIST_RIGHT)
        if side == 'right'
        else (J.SHOULDER_LEFT, J.ELBOW_LEFT, J.WRIST_LEFT)
    )
    points[elbow] = points[shoulder] + np.asarray(upper, dtype=float)
    points[wrist] = points[elbow] + np.asarray(fore, dtype=float)
    return body(points, stamp)


def with_right_arm(length: float, stamp: float) -> SkeletonFrame:
    """
    Return the test person with a right arm of a given total length (equal bones).

    :param length: Upper arm + forearm [m].
    :param stamp: Capture time [s].
    :return: The body-frame skeleton.
    """
    upper = np.array([0.2, -0.1, -0.9]) / np.linalg.norm([0.2, -0.1, -0.9])
    fore = np.array([1.0, 0.2, 0.1]) / np.linalg.norm([1.0, 0.2, 0.1])
    return with_arm(0.5 * length * upper, 0.5 * length * fore, stamp)


# --- A person in front of a sensor (tracker frame) ---------------------------------------

TRACKER_PERSON = {
    HumanJoint.PELVIS: (0.0, 0.0, 0.9),
    HumanJoint.SPINE_CHEST: (0.0, 0.0, 1.3),
    HumanJoint.NECK: (0.0, 0.0, 1.45),
    HumanJoint.HEAD: (0.0, 0.0, 1.6),
    HumanJoint.SHOULDER_LEFT: (0.0, -0.18, 1.4),
    HumanJoint.ELBOW_LEFT: (-0.1, -0.22, 1.15),
    HumanJoint.WRIST_LEFT: (-0.35, -0.22, 1.15),
    HumanJoint.HAND_LEFT: (-0.43, -0.22, 1.15),
    HumanJoint.SHOULDER_RIGHT: (0.0, 0.18, 1.4),
    HumanJoint.ELBOW_RIGHT: (-0.1, 0.22, 1.15),
    HumanJoint.WRIST_RIGHT: (-0.35, 0.22, 1.15),
    HumanJoint.HAND_RIGHT: (-0.43, 0.22, 1.15),
    HumanJoint.NOSE: (-0.1, 0.0, 1.56),
    HumanJoint.EAR_LEFT: (0.02, -0.075, 1.58),
    HumanJoint.EAR_RIGHT: (0.02, 0.075, 1.58),
    HumanJoint.HAND_TIP_LEFT: (-0.52, -0.22, 1.15),
    HumanJoint.THUMB_LEFT: (-0.41, -0.17, 1.17),
    HumanJoint.HAND_TIP_RIGHT: (-0.52, 0.22, 1.15),
    HumanJoint.THUMB_RIGHT: (-0.41, 0.17, 1.17),
}
"""A person facing the sensor, tracker frame [m] relative to the point below the chest."""


def tracker_person(distance: float = 2.0, side: float = 0.0) -> FloatArray:
    """Return the 19 joints, (19, 3), [m], tracker frame, ``distance`` ahead, ``side`` left."""
    return np.array([TRACKER_PERSON[joint] for joint in HumanJoint]) + [distance, side, 0.0]


def tracker_frame(
    stamp: float = 1.0, **changes: tuple[float, float, float] | None
) -> SkeletonFrame:
    """Build a tracker skeleton of :func:`tracker_person`; ``JOINT=None`` drops, else moves."""
    positions = tracker_person()
    valid = np.ones(JOINT_COUNT, dtype=bool)
    for name, value in changes.items():
        if value is None:
            valid[HumanJoint[name]] = False
        else:
            positions[HumanJoint[name]] = value
    positions[~valid] = np.nan
    return SkeletonFrame(stamp=stamp, positions=positions, valid=valid)


def azure_markers(tracker_joints: FloatArray, body: int) -> tuple[IdArray, FloatArray]:
    """Azure Kinect markers (ids, depth-camera positions) of one body's 19 tracker-frame joints."""
    ids = body * 100 + np.array(AZURE_KINECT_TO_HUMAN, dtype=np.int64)
    return ids, tracker_joints @ AZURE_KINECT.rotation  # rows: p_camera = R^T p_tracker
