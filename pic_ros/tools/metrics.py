"""
Imitation metrics (``docs/method.md#metrics``): pure functions over arrays.

- **Pose Accuracy** (the PIC paper's Eq. 4 as its evaluation computes it): the fraction of
  samples whose interior elbow angles satisfy ``(theta_h - theta_r)^2 <= 0.087 rad^2``, i.e.
  ``|theta_h - theta_r| <= 0.295 rad`` (16.9 degrees). ``theta`` is the angle at the elbow between
  elbow->shoulder and elbow->wrist; it does not depend on translation or scale.
- **Direction error**: angle between the human's upper arm (forearm) and the robot's
  shoulder->elbow (elbow->wrist) landmark direction, in the robot base frame axes.
- **Jumps**: joint steps larger than 0.35 rad between consecutive solutions.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

PACC_THRESHOLD: Final = 0.087
"""Threshold on the squared elbow-angle difference [rad^2] used for the paper's numbers."""

JUMP_THRESHOLD: Final = 0.35
"""A joint step above this between consecutive frames counts as a jump [rad]."""


def _unit_rows(vectors: FloatArray) -> FloatArray:
    lengths = np.linalg.norm(vectors, axis=-1, keepdims=True)
    with np.errstate(invalid='ignore', divide='ignore'):
        units: FloatArray = vectors / lengths
    return units


def angle_between(first: npt.ArrayLike, second: npt.ArrayLike) -> FloatArray:
    """
    Return the angle between vectors, row by row.

    :param first: Vectors, shape (..., 3).
    :param second: Vectors, shape (..., 3).
    :return: Angles in [0, pi], shape (...), [rad]; NaN where a vector has zero length.
    """
    a = _unit_rows(np.asarray(first, dtype=float))
    b = _unit_rows(np.asarray(second, dtype=float))
    cosine = np.clip(np.sum(a * b, axis=-1), -1.0, 1.0)
    angles: FloatArray = np.arccos(cosine)
    return angles


def elbow_angle(shoulder: npt.ArrayLike, elbow: npt.ArrayLike, wrist: npt.ArrayLike) -> FloatArray:
    """
    Return the interior elbow angle (pi for a straight arm).

    :param shoulder: Shoulder positions, shape (..., 3), [m].
    :param elbow: Elbow positions, shape (..., 3), [m].
    :param wrist: Wrist positions, shape (..., 3), [m].
    :return: Angle between elbow->shoulder and elbow->wrist, shape (...), [rad].
    """
    e = np.asarray(elbow, dtype=float)
    return angle_between(np.asarray(shoulder, dtype=float) - e, np.asarray(wrist, dtype=float) - e)


def pose_hits(
    human_angle: npt.ArrayLike, robot_angle: npt.ArrayLike, threshold: float = PACC_THRESHOLD
) -> BoolArray:
    """
    Return which samples count as an accurate pose (Eq. 4).

    :param human_angle: Human elbow angles, shape (...), [rad].
    :param robot_angle: Robot elbow angles, shape (...), [rad].
    :param threshold: Threshold on the squared difference [rad^2].
    :return: ``(theta_h - theta_r)^2 <= threshold``, shape (...).
    """
    difference = np.asarray(human_angle, dtype=float) - np.asarray(robot_angle, dtype=float)
    return np.asarray(difference**2 <= threshold)


def jump_frames(q: npt.ArrayLike, threshold: float = JUMP_THRESHOLD) -> BoolArray:
    """
    Mark the frames whose solution jumped from the previous frame's.

    :param q: Joint solutions, shape (frames, joints), [rad].
    :param threshold: Largest step that is not a jump [rad].
    :return: Shape (frames,); the first frame is never a jump.
    """
    values = np.asarray(q, dtype=float)
    marks = np.zeros(values.shape[0], dtype=bool)
    if values.shape[0] > 1:
        marks[1:] = np.any(np.abs(np.diff(values, axis=0)) > threshold, axis=1)
    return marks


def limit_violation_frames(
    q: npt.ArrayLike, lower: npt.ArrayLike, upper: npt.ArrayLike, tolerance: float = 1e-9
) -> BoolArray:
    """
    Mark the frames with any joint outside its position limits.

    :param q: Joint solutions, shape (frames, joints), [rad] or [m].
    :param lower: Lower limits, shape (joints,).
    :param upper: Upper limits, shape (joints,).
    :param tolerance: Allowed rounding excess.
    :return: Shape (frames,).
    """
    values = np.asarray(q, dtype=float)
    low = np.asarray(lower, dtype=float) - tolerance
    high = np.asarray(upper, dtype=float) + tolerance
    return np.asarray(np.any((values < low) | (values > high) | ~np.isfinite(values), axis=1))


def percentile_ms(durations_s: npt.ArrayLike, percentile: float) -> float:
    """
    Return a percentile of durations in milliseconds.

    :param durations_s: Durations [s].
    :param percentile: Percentile in [0, 100].
    :return: The percentile [ms]; NaN for no samples.
    """
    values = np.asarray(durations_s, dtype=float)
    if values.size == 0:
        return float('nan')
    return float(np.percentile(values, percentile) * 1e3)
