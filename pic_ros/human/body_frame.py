"""
The body-centred human frame.

Defined in ``docs/method.md#body-centred-human-frame-body-ros-frame-pic_human``. Origin at the
chest (midpoint of the shoulders); y along the shoulder line to the person's left; z up along the
spine (pelvis -> chest), made perpendicular to y; x = y x z, forward out of the chest. When the
pelvis or chest is missing, the tracker's up axis stands in for the spine. This removes the camera
placement: every tracker looks the same downstream, and the arms are expressed relative to the
torso, as a robot with a fixed torso must copy them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import SkeletonError
from pic_ros.human.skeleton import HumanJoint, MIN_BONE_LENGTH, SkeletonFrame

FloatArray = npt.NDArray[np.float64]

_TRACKER_UP = np.array([0.0, 0.0, 1.0])


def body_axes(frame: SkeletonFrame) -> tuple[FloatArray, FloatArray]:
    """
    Compute the body frame of a tracker-frame skeleton.

    :param frame: Skeleton in the ``tracker`` frame.
    :return: ``(rotation, origin)``: rotation tracker <- body, shape (3, 3), whose columns are the
        body x, y, z axes in tracker coordinates; origin (chest), shape (3,), [m], tracker frame.
    :raises SkeletonError: If a shoulder is missing, the shoulders coincide, or the spine is
        parallel to the shoulder line.
    """
    valid = frame.valid
    if not (valid[HumanJoint.SHOULDER_LEFT] and valid[HumanJoint.SHOULDER_RIGHT]):
        raise SkeletonError('both shoulders are needed for the body frame')
    left = frame.positions[HumanJoint.SHOULDER_LEFT]
    right = frame.positions[HumanJoint.SHOULDER_RIGHT]
    across = left - right
    width = float(np.linalg.norm(across))
    if width < MIN_BONE_LENGTH:
        raise SkeletonError('the shoulders coincide')
    y_axis = across / width
    if valid[HumanJoint.PELVIS] and valid[HumanJoint.SPINE_CHEST]:
        up = frame.positions[HumanJoint.SPINE_CHEST] - frame.positions[HumanJoint.PELVIS]
    else:
        up = _TRACKER_UP
    z_axis = up - float(up @ y_axis) * y_axis
    height = float(np.linalg.norm(z_axis))
    if height < 1e-6 * max(float(np.linalg.norm(up)), 1.0):
        raise SkeletonError('the spine is parallel to the shoulder line')
    z_axis = z_axis / height
    x_axis = np.cross(y_axis, z_axis)
    rotation = np.column_stack((x_axis, y_axis, z_axis))
    return rotation, 0.5 * (left + right)


def to_body_frame(frame: SkeletonFrame) -> SkeletonFrame:
    """
    Express a tracker-frame skeleton in the body-centred human frame.

    :param frame: Skeleton in the ``tracker`` frame.
    :return: The same joints in the ``body`` frame [m]; invalid joints stay NaN.
    :raises SkeletonError: If the body frame cannot be built (see :func:`body_axes`), or if the
        frame is not in the tracker frame.
    """
    if frame.frame != 'tracker':
        raise SkeletonError(f"expected a 'tracker' frame skeleton, got {frame.frame!r}")
    rotation, origin = body_axes(frame)
    positions = (frame.positions - origin) @ rotation
    return SkeletonFrame(
        stamp=frame.stamp, positions=positions, valid=frame.valid.copy(), frame='body'
    )
