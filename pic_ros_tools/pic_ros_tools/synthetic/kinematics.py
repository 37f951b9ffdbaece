"""
Kinematics of a synthetic person: arm angles, trunk state and joint positions.

The arms have four angles each (:data:`ARM_ANGLE_NAMES`) relative to the chest; every arm
position is forward kinematics of these angles (:func:`skeleton_joints`), so the bones of the
noise-free truth keep their lengths exactly. :func:`arm_ik` is the closed-form inverse
kinematics of the wrist with a chosen elbow swivel. Frame ``stance``: origin on the floor below
the pelvis, x forward out of the person, y to the person's left, z up; lengths in metres, angles
in radians.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.body import BodyModel
from pic_ros_tools.synthetic.skeleton import JOINT_COUNT, JOINT_INDEX

FloatArray = npt.NDArray[np.float64]

ARM_SIDES: Final[tuple[str, str]] = ('left', 'right')
"""Order of the arms along axis 1 of the arm angles of a recording (``arm_angles``)."""

ARM_ANGLE_NAMES: Final[tuple[str, ...]] = (
    'shoulder_flexion',
    'shoulder_abduction',
    'humeral_rotation',
    'elbow_flexion',
)
"""
Order of the angles along axis 2 of the arm angles of a recording (``arm_angles``).

All are relative to the chest and zero with the arm hanging straight down, the palm facing the
thigh. Flexion raises the arm forward, abduction raises it sideways (negative: across the body),
rotation turns the upper arm about its own axis (positive: internal, the flexed forearm swings
towards the body midline), elbow flexion bends the forearm towards the front of the upper arm.
The chest-frame rotation of the upper arm is ``Ry(-flexion) @ Rx(s * abduction) @
Rz(-s * rotation)`` with ``s = +1`` for the left and ``-1`` for the right arm (x forward, y left,
z up).
"""

ARM_ANGLE_LIMITS_DEG: Final[tuple[tuple[float, float], ...]] = (
    (-30.0, 180.0),
    (-45.0, 150.0),
    (-90.0, 90.0),
    (0.0, 150.0),
)
"""Anatomical range [deg] of each angle of :data:`ARM_ANGLE_NAMES`; generation checks it."""


def inside_limits(angles: FloatArray) -> bool:
    """
    Tell whether arm angles are inside the anatomical limits (to 1e-9 rad).

    :param angles: Angles, shape (..., 4), [rad], :data:`ARM_ANGLE_NAMES` order.
    :return: True if every angle is inside :data:`ARM_ANGLE_LIMITS_DEG`.
    """
    limits = np.radians(np.array(ARM_ANGLE_LIMITS_DEG))
    return bool(
        np.all(angles >= limits[:, 0] - 1e-9) and np.all(angles <= limits[:, 1] + 1e-9)
    )


def rot_x(angle: FloatArray) -> FloatArray:
    """Return rotations about x by angles [rad], shape ``angle.shape + (3, 3)``."""
    cos, sin = np.cos(angle), np.sin(angle)
    matrix = np.zeros(angle.shape + (3, 3))
    matrix[..., 0, 0] = 1.0
    matrix[..., 1, 1] = cos
    matrix[..., 1, 2] = -sin
    matrix[..., 2, 1] = sin
    matrix[..., 2, 2] = cos
    return matrix


def rot_y(angle: FloatArray) -> FloatArray:
    """Return rotations about y by angles [rad], shape ``angle.shape + (3, 3)``."""
    cos, sin = np.cos(angle), np.sin(angle)
    matrix = np.zeros(angle.shape + (3, 3))
    matrix[..., 1, 1] = 1.0
    matrix[..., 0, 0] = cos
    matrix[..., 0, 2] = sin
    matrix[..., 2, 0] = -sin
    matrix[..., 2, 2] = cos
    return matrix


def rot_z(angle: FloatArray) -> FloatArray:
    """Return rotations about z by angles [rad], shape ``angle.shape + (3, 3)``."""
    cos, sin = np.cos(angle), np.sin(angle)
    matrix = np.zeros(angle.shape + (3, 3))
    matrix[..., 2, 2] = 1.0
    matrix[..., 0, 0] = cos
    matrix[..., 0, 1] = -sin
    matrix[..., 1, 0] = sin
    matrix[..., 1, 1] = cos
    return matrix


def apply_rotation(matrix: FloatArray, vector: npt.ArrayLike) -> FloatArray:
    """Rotate a fixed vector (3,) or per-frame vectors (N, 3) by (N, 3, 3) matrices."""
    vectors = np.asarray(vector, dtype=np.float64)
    if vectors.ndim == 1:
        return matrix @ vectors
    rotated: FloatArray = np.einsum('nij,nj->ni', matrix, vectors)
    return rotated


def unit(vector: npt.ArrayLike) -> FloatArray:
    """Return a vector divided by its length."""
    array = np.asarray(vector, dtype=np.float64)
    return array / np.linalg.norm(array)


@dataclass(frozen=True)
class Trunk:
    """Trunk state per frame: rotations (N, 3, 3) of the lower spine and chest, head nod (N,)."""

    lower: FloatArray
    chest: FloatArray
    nod: FloatArray

    def spine_shoulder(self, body: BodyModel) -> FloatArray:
        """Return SpineShoulder per frame, shape (N, 3), [m], stance frame."""
        pelvis = np.array([0.0, 0.0, body.pelvis_height])
        mid = pelvis + apply_rotation(self.lower, [0.0, 0.0, body.lower_spine])
        return mid + apply_rotation(self.chest, [0.0, 0.0, body.upper_spine])

    def shoulder(self, body: BodyModel, lateral: int) -> FloatArray:
        """Return a shoulder's position per frame (N, 3) [m], stance frame; lateral +1: left."""
        offset = [0.0, lateral * body.shoulder_half_width, -body.shoulder_drop]
        return self.spine_shoulder(body) + apply_rotation(self.chest, offset)


def upper_arm_rotation(angles: FloatArray, lateral: int) -> FloatArray:
    """Return the chest-frame rotations (N, 3, 3) of an upper arm from its angles (N, 4) [rad]."""
    flexion, abduction, rotation = angles[:, 0], angles[:, 1], angles[:, 2]
    return rot_y(-flexion) @ rot_x(lateral * abduction) @ rot_z(-lateral * rotation)


def arm_ik(
    relative: FloatArray, swivel: FloatArray, lateral: int, body: BodyModel
) -> FloatArray:
    """
    Solve the arm angles that put the wrist at a point.

    :param relative: Wrist target minus shoulder, shape (N, 3), [m], chest frame.
    :param swivel: Elbow swivel about the shoulder-wrist line, shape (N,), [rad]; 0 puts the
        elbow as low as possible, positive moves it outwards (for targets in front).
    :param lateral: +1 for the left arm, -1 for the right arm.
    :param body: Segment lengths.
    :return: Angles, shape (N, 4), [rad], :data:`ARM_ANGLE_NAMES` order.
    :raises ConfigError: If a target is out of reach or straight below or above the shoulder.
    """
    upper, fore = body.upper_arm, body.forearm
    distance = np.linalg.norm(relative, axis=1)
    if np.any(distance > 0.995 * (upper + fore)) or np.any(distance < 1.05 * abs(upper - fore)):
        raise ConfigError('synthetic arm plan: a wrist target is out of reach')
    axis = relative / distance[:, None]
    down = np.array([0.0, 0.0, -1.0])
    across = down[None] - (axis @ down)[:, None] * axis
    across_norm = np.linalg.norm(across, axis=1)
    if np.any(across_norm < 0.1):
        raise ConfigError('synthetic arm plan: a wrist target is straight below or above')
    first = across / across_norm[:, None]
    second = lateral * np.cross(axis, first)
    along = (upper**2 - fore**2 + distance**2) / (2.0 * distance)
    radius = np.sqrt(upper**2 - along**2)
    elbow = along[:, None] * axis + radius[:, None] * (
        np.cos(swivel)[:, None] * first + np.sin(swivel)[:, None] * second
    )
    direction = elbow / upper
    abduction = np.arcsin(np.clip(lateral * direction[:, 1], -1.0, 1.0))
    flexion = np.arctan2(direction[:, 0], -direction[:, 2])
    cos_inner = (upper**2 + fore**2 - distance**2) / (2.0 * upper * fore)
    elbow_flexion = np.pi - np.arccos(np.clip(cos_inner, -1.0, 1.0))
    forearm = (relative - elbow) / fore
    partial = rot_y(-flexion) @ rot_x(lateral * abduction)
    local = np.einsum('nji,nj->ni', partial, forearm)
    rotation = -lateral * np.arctan2(local[:, 1], local[:, 0])
    return np.stack([flexion, abduction, rotation, elbow_flexion], axis=1)


_HEAD_DIRECTION: Final = unit([0.12, 0.0, 1.0])


def skeleton_joints(angles: FloatArray, trunk: Trunk, body: BodyModel) -> FloatArray:
    """Return the joint positions (N, 25, 3) [m], stance frame, for arm angles (N, 2, 4) [rad]."""
    count = angles.shape[0]
    joints = np.empty((count, JOINT_COUNT, 3))
    pelvis = np.array([0.0, 0.0, body.pelvis_height])
    mid = pelvis + apply_rotation(trunk.lower, [0.0, 0.0, body.lower_spine])
    chest = mid + apply_rotation(trunk.chest, [0.0, 0.0, body.upper_spine])
    neck = chest + apply_rotation(trunk.chest, [0.0, 0.0, body.neck])
    head = neck + body.head * apply_rotation(trunk.chest @ rot_y(trunk.nod), _HEAD_DIRECTION)
    joints[:, JOINT_INDEX['SpineBase']] = pelvis
    joints[:, JOINT_INDEX['SpineMid']] = mid
    joints[:, JOINT_INDEX['SpineShoulder']] = chest
    joints[:, JOINT_INDEX['Neck']] = neck
    joints[:, JOINT_INDEX['Head']] = head
    down = np.array([0.0, 0.0, -1.0])
    for arm_index, (side, lateral) in enumerate((('Left', 1), ('Right', -1))):
        shoulder = chest + apply_rotation(
            trunk.chest, [0.0, lateral * body.shoulder_half_width, -body.shoulder_drop]
        )
        upper = trunk.chest @ upper_arm_rotation(angles[:, arm_index], lateral)
        elbow = shoulder + body.upper_arm * apply_rotation(upper, down)
        fore = upper @ rot_y(-angles[:, arm_index, 3])
        wrist = elbow + body.forearm * apply_rotation(fore, down)
        hand = wrist + body.hand * apply_rotation(fore, unit([0.05, -lateral * 0.12, -1.0]))
        tip = hand + body.hand_tip * apply_rotation(fore, unit([0.08, -lateral * 0.2, -1.0]))
        thumb = wrist + body.thumb * apply_rotation(fore, unit([0.7, -lateral * 0.3, -0.65]))
        hip = pelvis + np.array([0.0, lateral * body.hip_half_width, -body.hip_drop])
        knee = hip + body.thigh * unit([0.01, lateral * 0.03, -1.0])
        ankle = knee + body.shank * unit([-0.01, lateral * 0.01, -1.0])
        foot = ankle + body.foot * unit([1.0, lateral * 0.15, -0.25])
        for joint, value in (
            ('Shoulder', shoulder), ('Elbow', elbow), ('Wrist', wrist), ('Hand', hand),
            ('HandTip', tip), ('Thumb', thumb), ('Hip', hip), ('Knee', knee),
            ('Ankle', ankle), ('Foot', foot),
        ):
            joints[:, JOINT_INDEX[joint + side]] = value
    return joints
