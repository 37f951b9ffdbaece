"""
The Kinect v2 body tracker: its 25 joints and its camera axes.

Kinect v2 ``JointType`` order (SpineBase = 0 ... ThumbRight = 24) and the camera space of the
SDK: x to the sensor's left, y up, z out of the sensor into the scene, metres, origin at the
depth sensor. :func:`camera_to_tracker` turns it into the ``'tracker'`` frame of
:mod:`pic_ros.skeleton` (x away from the sensor, y to the sensor's left, z up).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import SkeletonError
from pic_ros.skeleton import HumanJoint

FloatArray = npt.NDArray[np.float64]

KINECT_V2_JOINTS: Final[tuple[str, ...]] = (
    'SpineBase',
    'SpineMid',
    'Neck',
    'Head',
    'ShoulderLeft',
    'ElbowLeft',
    'WristLeft',
    'HandLeft',
    'ShoulderRight',
    'ElbowRight',
    'WristRight',
    'HandRight',
    'HipLeft',
    'KneeLeft',
    'AnkleLeft',
    'FootLeft',
    'HipRight',
    'KneeRight',
    'AnkleRight',
    'FootRight',
    'SpineShoulder',
    'HandTipLeft',
    'ThumbLeft',
    'HandTipRight',
    'ThumbRight',
)
"""The 25 Kinect v2 ``JointType`` names, in index order (SpineBase = 0 ... ThumbRight = 24)."""

KINECT_V2_JOINT_COUNT: Final = len(KINECT_V2_JOINTS)
"""Number of Kinect v2 joints per body (25)."""

_HUMAN_SOURCES: Final = {
    HumanJoint.PELVIS: 'SpineBase',
    HumanJoint.SPINE_CHEST: 'SpineShoulder',
    HumanJoint.NECK: 'Neck',
    HumanJoint.HEAD: 'Head',
    HumanJoint.SHOULDER_LEFT: 'ShoulderLeft',
    HumanJoint.ELBOW_LEFT: 'ElbowLeft',
    HumanJoint.WRIST_LEFT: 'WristLeft',
    HumanJoint.HAND_LEFT: 'HandLeft',
    HumanJoint.SHOULDER_RIGHT: 'ShoulderRight',
    HumanJoint.ELBOW_RIGHT: 'ElbowRight',
    HumanJoint.WRIST_RIGHT: 'WristRight',
    HumanJoint.HAND_RIGHT: 'HandRight',
    HumanJoint.HAND_TIP_LEFT: 'HandTipLeft',
    HumanJoint.THUMB_LEFT: 'ThumbLeft',
    HumanJoint.HAND_TIP_RIGHT: 'HandTipRight',
    HumanJoint.THUMB_RIGHT: 'ThumbRight',
}

KINECT_V2_TO_HUMAN: Final[tuple[int | None, ...]] = tuple(
    KINECT_V2_JOINTS.index(_HUMAN_SOURCES[joint]) if joint in _HUMAN_SOURCES else None
    for joint in HumanJoint
)
"""
Kinect v2 joint index of each :class:`HumanJoint` row, or None where Kinect v2 has no joint.

``KINECT_V2_TO_HUMAN[HumanJoint.NECK] == 2``: entry ``h`` is the Kinect v2 index whose position
becomes row ``h`` of a :class:`SkeletonFrame`. Length 19 (``JOINT_COUNT``). Kinect v2 has hand
tips and thumbs but no face points: NOSE, EAR_LEFT and EAR_RIGHT are None (always invalid), so
the head estimator gives no angles for Kinect v2.
"""

CAMERA_TO_TRACKER_ROTATION: Final[FloatArray] = np.array(
    [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
)
"""
Rotation tracker <- Kinect v2 camera space, shape (3, 3), read-only; ``p_t = R @ p_c``.

It is the cyclic axis permutation ``(x, y, z)_tracker = (z, x, y)_camera`` (determinant +1).
"""
CAMERA_TO_TRACKER_ROTATION.setflags(write=False)


def camera_to_tracker(points: npt.ArrayLike) -> FloatArray:
    """
    Convert points from Kinect v2 camera space to the ``'tracker'`` axes.

    Camera space: x to the sensor's left, y up, z out of the sensor into the scene. Tracker
    (REP-103 as seen from the sensor): x away from the sensor, y to the sensor's left, z up. So
    ``(x, y, z)_tracker = (z, x, y)_camera``, a proper rotation
    (:data:`CAMERA_TO_TRACKER_ROTATION`) with the same origin (the depth sensor) and unit. When
    the subject faces the camera, the sensor's left is the subject's *right*: the right shoulder
    has the larger tracker y.

    :param points: Points, shape (..., 3), any unit, Kinect v2 camera space.
    :return: New array, shape (..., 3), same unit, tracker frame.
    :raises SkeletonError: If the last axis does not have length 3.
    """
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != 3:
        raise SkeletonError(f'points must have shape (..., 3), got {array.shape}')
    return array[..., [2, 0, 1]]
