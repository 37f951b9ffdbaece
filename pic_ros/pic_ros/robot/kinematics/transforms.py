"""
Rigid transforms used by the kinematics (homogeneous 4x4 matrices, metres and radians).

URDF ``rpy`` is a fixed-axis roll-pitch-yaw rotation, ``R = Rz(yaw) Ry(pitch) Rx(roll)``, which is
the ``'sxyz'`` convention of transforms3d.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from pic_ros.robot.kinematics.compiled import Affine, Pose, Vector
import transforms3d.euler

FloatArray = npt.NDArray[np.float64]

IDENTITY: Pose = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
"""The frame of the base itself."""


def transform_from_xyz_rpy(xyz: npt.ArrayLike, rpy: npt.ArrayLike) -> FloatArray:
    """
    Build the homogeneous transform of a URDF ``<origin>``.

    :param xyz: Translation, shape (3,), in [m], expressed in the parent frame.
    :param rpy: Fixed-axis roll, pitch, yaw, shape (3,), in [rad].
    :return: Transform parent <- child, shape (4, 4).
    """
    roll, pitch, yaw = (float(v) for v in np.asarray(rpy, dtype=float).reshape(3))
    transform = np.eye(4)
    transform[:3, :3] = transforms3d.euler.euler2mat(roll, pitch, yaw, 'sxyz')
    transform[:3, 3] = np.asarray(xyz, dtype=float).reshape(3)
    return transform


def skew(vector: npt.ArrayLike) -> FloatArray:
    """
    Return the cross-product matrix of a 3-vector.

    :param vector: Vector ``v``, shape (3,).
    :return: Matrix ``K`` with ``K @ w == np.cross(v, w)``, shape (3, 3).
    """
    x, y, z = (float(v) for v in np.asarray(vector, dtype=float).reshape(3))
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def freeze(array: npt.ArrayLike) -> FloatArray:
    """
    Return a read-only float copy of an array (model data must not be mutated by callers).

    :param array: Any array-like of numbers.
    :return: A new read-only ``float64`` array.
    """
    frozen = np.array(array, dtype=float)
    frozen.setflags(write=False)
    return frozen


def rotation_taking_z_to(axis: FloatArray) -> FloatArray:
    """
    Return a rotation whose third column is a unit vector (it turns z onto it).

    :param axis: Unit vector, shape (3,).
    :return: Rotation matrix, shape (3, 3).
    """
    z_axis = np.array([0.0, 0.0, 1.0])
    cross = np.cross(z_axis, axis)
    sine = float(np.linalg.norm(cross))
    cosine = float(z_axis @ axis)
    if sine < 1e-12:
        return np.eye(3) if cosine > 0.0 else np.diag([1.0, -1.0, -1.0])
    k = skew(cross)
    return np.eye(3) + k + (k @ k) * ((1.0 - cosine) / sine**2)


def frame_point(frame: Pose, point: Affine) -> Vector:
    """
    Return where a transform's origin lands in a frame.

    :param frame: The frame.
    :param point: A transform from that frame (only its translation is used).
    :return: The point, in the frame's base.
    """
    r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz = frame
    ax, ay, az = point[3], point[7], point[11]
    return (
        r00 * ax + r01 * ay + r02 * az + px,
        r10 * ax + r11 * ay + r12 * az + py,
        r20 * ax + r21 * ay + r22 * az + pz,
    )


def affine(transform: FloatArray) -> Affine:
    """
    Flatten the top 3 x 4 block of a homogeneous transform, row-major.

    :param transform: The transform, shape (4, 4).
    :return: Its rotation and translation as 12 floats (:data:`Affine`).
    """
    values = tuple(float(v) for v in transform[:3, :].ravel())
    return (
        values[0], values[1], values[2], values[3], values[4], values[5],
        values[6], values[7], values[8], values[9], values[10], values[11],
    )
