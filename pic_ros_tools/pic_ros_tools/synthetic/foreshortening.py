"""
Depth-camera foreshortening: arm bones that point at the sensor are measured shorter.

:func:`foreshortening_offsets` shifts the joints of each arm for the bones that point towards
the sensor (Kinect v2 camera space, the sensor at the origin, [m]).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.skeleton import JOINT_COUNT, JOINT_INDEX

FloatArray = npt.NDArray[np.float64]

FORESHORTENING_DEPTH_BIAS: Final = 0.10
"""Shift [m] of a distal joint towards the sensor per unit of ``foreshortening * cos**2``."""

_ARM_CHAINS: Final = tuple(
    (
        JOINT_INDEX[proximal + side],
        JOINT_INDEX[distal + side],
        tuple(JOINT_INDEX[name + side] for name in moved),
    )
    for side in ('Left', 'Right')
    for proximal, distal, moved in (
        ('Shoulder', 'Elbow', ('Elbow', 'Wrist', 'Hand', 'HandTip', 'Thumb')),
        ('Elbow', 'Wrist', ('Wrist', 'Hand', 'HandTip', 'Thumb')),
    )
)


def foreshortening_offsets(truth: npt.ArrayLike, factor: float) -> FloatArray:
    """
    Compute the depth-camera shortening of arm bones that point at the sensor.

    For each upper arm (shoulder to elbow) and forearm (elbow to wrist): with the true proximal
    joint ``p``, bone direction ``u`` and length ``L``, ``c = max(0, u . (-p / |p|))`` and
    ``w = factor * c**2``; the distal joint and every joint beyond it move by ``-w * L * u``
    plus ``w * FORESHORTENING_DEPTH_BIAS`` along the line of sight from the distal joint
    towards the sensor. The shifts of the two bones add up along the chain.

    :param truth: Noise-free joints, shape (T, 25, 3), [m], Kinect v2 camera space (the sensor
        at the origin).
    :param factor: Shortening of a bone pointing straight at the sensor, 0 to 1 [fraction].
    :return: New array of joint shifts, shape (T, 25, 3), [m], camera space; zero outside the
        arms.
    :raises ConfigError: If the shape is wrong or the factor is outside [0, 1].
    """
    joints = np.asarray(truth, dtype=np.float64)
    if joints.ndim != 3 or joints.shape[1:] != (JOINT_COUNT, 3):
        raise ConfigError(f'truth must have shape (T, {JOINT_COUNT}, 3), got {joints.shape}')
    if not 0.0 <= factor <= 1.0:
        raise ConfigError(f'the foreshortening factor must be in [0, 1], got {factor!r}')
    offsets = np.zeros_like(joints)
    for proximal, distal, moved in _ARM_CHAINS:
        bone = joints[:, distal] - joints[:, proximal]
        length = np.linalg.norm(bone, axis=1, keepdims=True)
        direction = bone / length
        towards = -joints[:, proximal] / np.linalg.norm(joints[:, proximal], axis=1, keepdims=True)
        cosine = np.clip(np.sum(direction * towards, axis=1, keepdims=True), 0.0, 1.0)
        weight = factor * cosine**2
        sight = -joints[:, distal] / np.linalg.norm(joints[:, distal], axis=1, keepdims=True)
        shift = weight * (FORESHORTENING_DEPTH_BIAS * sight - length * direction)
        offsets[:, list(moved)] += shift[:, None, :]
    return offsets
