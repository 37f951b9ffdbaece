"""
The robot point chain that FABRIK, PIC and PICs move.

The chain has five points, in the robot base frame [m]: the root (origin of the joint that swings
the shoulder), the shoulder, elbow and wrist landmarks, and the tool. Its four links keep the real
landmark distances of the arm at its current configuration (joints between landmarks are rolls
about the bone, so the distances barely change; see
:meth:`~pic_ros.robot.arm.ArmModel.check_landmark_rigidity`).

The human shoulder is pinned to the robot's shoulder landmark where it is now, so within one solve
the root and the shoulder stay put: the root joint (which swings the shoulder) is moved by the
joint recovery, which sees the real kinematics. The shoulder->elbow and elbow->wrist links are
ball-jointed as in FABRIK (Aristidou & Lasenby 2011); the wrist is the end effector and the tool
link follows the forearm.

Vectors here are plain 3-tuples of floats: the chain is tiny and pure-Python arithmetic is several
times faster than numpy calls at this size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
import numpy.typing as npt

Vector = tuple[float, float, float]


def sub(a: Vector, b: Vector) -> Vector:
    """Return ``a - b``."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def add_scaled(a: Vector, b: Vector, scale: float) -> Vector:
    """Return ``a + scale * b``."""
    return (a[0] + scale * b[0], a[1] + scale * b[1], a[2] + scale * b[2])


def dot(a: Vector, b: Vector) -> float:
    """Return the dot product."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vector, b: Vector) -> Vector:
    """Return the cross product ``a x b``."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a: Vector) -> float:
    """Return the Euclidean length."""
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


def distance(a: Vector, b: Vector) -> float:
    """Return the distance between two points."""
    return norm(sub(a, b))


def unit(a: Vector, fallback: Vector) -> Vector:
    """
    Return ``a`` normalised, or ``fallback`` when ``a`` is (nearly) zero.

    :param a: Any vector.
    :param fallback: Unit vector to use when ``a`` has no direction.
    :return: A unit vector.
    """
    length = norm(a)
    if length < 1e-12:
        return fallback
    return (a[0] / length, a[1] / length, a[2] / length)


def as_vector(values: Sequence[float] | npt.NDArray[np.float64]) -> Vector:
    """Convert any 3-sequence (numpy row, list) to a float 3-tuple."""
    return (float(values[0]), float(values[1]), float(values[2]))


@dataclass(frozen=True)
class PointChain:
    """
    The five-point chain of one arm at its current configuration.

    :param points: Root, shoulder, elbow, wrist, tool, base frame [m].
    :param lengths: Root->shoulder, shoulder->elbow, elbow->wrist, wrist->tool lengths [m].
    """

    points: tuple[Vector, Vector, Vector, Vector, Vector]
    lengths: tuple[float, float, float, float]

    @classmethod
    def from_landmarks(cls, landmarks: Sequence[Sequence[float]]) -> PointChain:
        """
        Build the chain from the arm's landmark points.

        :param landmarks: Root, shoulder, elbow, wrist and tool, shape (5, 3), base frame [m].
        :return: The chain, its link lengths measured on these points.
        """
        root, shoulder, elbow, wrist, tool = (as_vector(row) for row in landmarks)
        return cls(
            points=(root, shoulder, elbow, wrist, tool),
            lengths=(
                distance(root, shoulder),
                distance(shoulder, elbow),
                distance(elbow, wrist),
                distance(wrist, tool),
            ),
        )
