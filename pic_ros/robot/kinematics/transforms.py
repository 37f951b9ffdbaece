"""
Rigid transforms used by the kinematics (homogeneous 4x4 matrices, metres and radians).

URDF ``rpy`` is a fixed-axis roll-pitch-yaw rotation, ``R = Rz(yaw) Ry(pitch) Rx(roll)``, which is
the ``'sxyz'`` convention of transforms3d.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import transforms3d.euler

FloatArray = npt.NDArray[np.float64]


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
