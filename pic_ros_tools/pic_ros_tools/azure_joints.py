"""
Azure Kinect joints from Kinect v2 joints: the axes and the 32-joint K4ABT body of a 25-joint body.

Kinect v2 camera space has x to the sensor's left, y up and z out of the sensor; the Azure Kinect
depth camera frame has x right, y down and z forward (same origin and unit, [m]). The Azure Kinect
body tracker (K4ABT) gives 32 joints, Kinect v2 25: the shared ones are copied by name and the
seven others (clavicles, nose, eyes, ears) synthesized for display. Used to write a synthetic
take as an Azure Kinect bag (:mod:`pic_ros_tools.synthetic_bag`).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.trackers.kinect_v2 import KINECT_V2_JOINT_COUNT, KINECT_V2_JOINTS
from pic_ros.trackers.markers import AZURE_KINECT, AZURE_KINECT_JOINTS

FloatArray = npt.NDArray[np.float64]


def kinect_v2_to_azure_camera(points: npt.ArrayLike) -> FloatArray:
    """
    Convert points from Kinect v2 camera space to the Azure Kinect depth camera axes.

    Kinect v2: x to the sensor's left, y up, z out of the sensor. Azure Kinect: x right, y down,
    z forward. So ``(x, y, z)_azure = (-x, -y, z)_v2``, a rotation by 180 degrees about the
    optical axis (same origin and unit). Both frames map to the same ``'tracker'`` axes.

    :param points: Points, shape (..., 3), any unit, Kinect v2 camera space.
    :return: New array, shape (..., 3), same unit, Azure Kinect depth camera frame.
    """
    array = np.array(points, dtype=np.float64)
    array[..., 0] = -array[..., 0]
    array[..., 1] = -array[..., 1]
    return array


_V2: Final = {name: index for index, name in enumerate(KINECT_V2_JOINTS)}
_K4: Final = {name: index for index, name in enumerate(AZURE_KINECT_JOINTS)}
_AZURE_FROM_V2: Final = {
    'PELVIS': 'SpineBase',
    'SPINE_NAVEL': 'SpineMid',
    'SPINE_CHEST': 'SpineShoulder',
    'NECK': 'Neck',
    'HEAD': 'Head',
    'SHOULDER_LEFT': 'ShoulderLeft',
    'ELBOW_LEFT': 'ElbowLeft',
    'WRIST_LEFT': 'WristLeft',
    'HAND_LEFT': 'HandLeft',
    'HANDTIP_LEFT': 'HandTipLeft',
    'THUMB_LEFT': 'ThumbLeft',
    'SHOULDER_RIGHT': 'ShoulderRight',
    'ELBOW_RIGHT': 'ElbowRight',
    'WRIST_RIGHT': 'WristRight',
    'HAND_RIGHT': 'HandRight',
    'HANDTIP_RIGHT': 'HandTipRight',
    'THUMB_RIGHT': 'ThumbRight',
    'HIP_LEFT': 'HipLeft',
    'KNEE_LEFT': 'KneeLeft',
    'ANKLE_LEFT': 'AnkleLeft',
    'FOOT_LEFT': 'FootLeft',
    'HIP_RIGHT': 'HipRight',
    'KNEE_RIGHT': 'KneeRight',
    'ANKLE_RIGHT': 'AnkleRight',
    'FOOT_RIGHT': 'FootRight',
}
# Face joints relative to HEAD: (forward, left, up) offsets [m] in the person's head axes.
_FACE: Final = {
    'NOSE': (0.10, 0.0, -0.02),
    'EYE_LEFT': (0.08, 0.032, 0.03),
    'EAR_LEFT': (0.0, 0.075, 0.0),
    'EYE_RIGHT': (0.08, -0.032, 0.03),
    'EAR_RIGHT': (0.0, -0.075, 0.0),
}
_CLAVICLE_FRACTION: Final = 0.3


def _unit_rows(vectors: FloatArray) -> FloatArray:
    with np.errstate(invalid='ignore', divide='ignore'):
        unit: FloatArray = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
    return unit


def azure_joints_from_kinect_v2(joints: npt.ArrayLike) -> FloatArray:
    """
    Make the 32 Azure Kinect (K4ABT) joints of bodies given as 25 Kinect v2 joints.

    The 25 joints that both trackers have are copied by name (the person's left stays the
    person's left; the K4ABT ``SPINE_CHEST`` takes the Kinect v2 ``SpineShoulder``, as both map
    to :attr:`~pic_ros.skeleton.HumanJoint.SPINE_CHEST`) and their axes converted by
    :func:`kinect_v2_to_azure_camera`. The seven joints Kinect v2 lacks are synthesized, for
    display only (the pipeline does not read them): each clavicle 30 % of the way from
    ``SPINE_CHEST`` to the shoulder, and nose, eyes and ears at fixed offsets from ``HEAD`` in
    the person's axes (left = left shoulder - right shoulder, up = neck - spine navel, forward =
    left x up). Rows with a non-finite value stay non-finite (a lost body).

    :param joints: Joint positions, shape (..., 25, 3), [m], Kinect v2 camera space, Kinect v2
        joint order.
    :return: New array, shape (..., 32, 3), [m], Azure Kinect depth camera frame (x right,
        y down, z forward), K4ABT joint order.
    :raises ConfigError: If the shape is not (..., 25, 3).
    """
    source = np.asarray(joints, dtype=np.float64)
    if source.ndim < 2 or source.shape[-2:] != (KINECT_V2_JOINT_COUNT, 3):
        raise ConfigError(
            f'Kinect v2 joints must have shape (..., {KINECT_V2_JOINT_COUNT}, 3), got '
            f'{source.shape}'
        )
    camera = kinect_v2_to_azure_camera(source)
    result = np.full(camera.shape[:-2] + (AZURE_KINECT.joint_count, 3), np.nan)
    for azure, v2 in _AZURE_FROM_V2.items():
        result[..., _K4[azure], :] = camera[..., _V2[v2], :]
    chest = result[..., _K4['SPINE_CHEST'], :]
    for side in ('LEFT', 'RIGHT'):
        shoulder = result[..., _K4[f'SHOULDER_{side}'], :]
        result[..., _K4[f'CLAVICLE_{side}'], :] = chest + _CLAVICLE_FRACTION * (shoulder - chest)
    left = _unit_rows(result[..., _K4['SHOULDER_LEFT'], :] - result[..., _K4['SHOULDER_RIGHT'], :])
    up = _unit_rows(result[..., _K4['NECK'], :] - result[..., _K4['SPINE_NAVEL'], :])
    forward = _unit_rows(np.cross(left, up))
    up = np.cross(forward, left)
    head = result[..., _K4['HEAD'], :]
    for name, (ahead, aside, above) in _FACE.items():
        result[..., _K4[name], :] = head + ahead * forward + aside * left + above * up
    return result


__all__ = ['azure_joints_from_kinect_v2', 'kinect_v2_to_azure_camera']
