"""
Imitation metrics (``docs/method.md#metrics``): pure functions over arrays.

- **Pose Accuracy** (the PIC paper's Eq. 4 as its evaluation computes it): the fraction of
  samples whose interior elbow angles satisfy ``(theta_h - theta_r)^2 <= 0.087 rad^2``, i.e.
  ``|theta_h - theta_r| <= 0.295 rad`` (16.9 degrees). ``theta`` is the angle at the elbow between
  elbow->shoulder and elbow->wrist; it does not depend on translation or scale.
- **Direction error**: angle between the human's upper arm (forearm) and the robot's
  shoulder->elbow (elbow->wrist) landmark direction, in the robot base frame axes.
- **Jumps**: joint steps larger than 0.35 rad between consecutive solutions.
- **Lag**: the delay that best aligns a follower's signal (the robot's elbow angle) with a
  reference (the person's): the ``d`` minimising ``mean |follower(t + d) - reference(t)|``, over
  the whole signal and over half-overlapping windows with motion.
- **Motion against limits**: velocity, acceleration and jerk of sampled joint positions (finite
  differences), their peak and RMS as a share of the limits, the samples beyond a limit and the
  share of samples with a joint at its velocity limit.
"""

from __future__ import annotations

from collections.abc import Iterable
import math
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

PACC_THRESHOLD: Final = 0.087
"""Threshold on the squared elbow-angle difference [rad^2] used for the paper's numbers."""

JUMP_THRESHOLD: Final = 0.35
"""A joint step above this between consecutive frames counts as a jump [rad]."""

LAG_SEARCH: Final = (-0.2, 0.5)
"""Delays searched for the lag, smallest and largest [s]."""

LAG_STEP: Final = 0.005
"""Step of the delays searched for the lag [s]."""

LAG_WINDOW: Final = 2.0
"""Length of the half-overlapping windows of :func:`window_delays` [s]."""

LAG_MIN_RANGE: Final = 0.2
"""Smallest range of the reference in a window for its delay to count [rad]."""

AT_LIMIT_SHARE: Final = 0.99
"""A joint at or above this share of its velocity limit is at the limit."""

LIMIT_SLACK: Final = 1e-6
"""Relative excess over a limit that counts as rounding, not as a violation."""


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


def landmark_elbow_angle(landmarks: npt.ArrayLike) -> FloatArray:
    """
    Return the elbow angle of robot landmark rows (root, shoulder, elbow, wrist, tool).

    :param landmarks: Shape (..., 5, 3), [m].
    :return: Angles, shape (...), [rad].
    """
    rows = np.asarray(landmarks, dtype=float)
    return elbow_angle(rows[..., 1, :], rows[..., 2, :], rows[..., 3, :])


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


def best_delay(
    times: npt.ArrayLike,
    reference: npt.ArrayLike,
    sample_times: npt.ArrayLike,
    follower: npt.ArrayLike,
    search: tuple[float, float] = LAG_SEARCH,
    step: float = LAG_STEP,
) -> float:
    """
    Return the delay that best aligns a follower with a reference (least mean absolute error).

    :param times: Reference times, shape (m,), [s].
    :param reference: Reference values, shape (m,); NaN entries are skipped.
    :param sample_times: The follower's sample times, increasing, shape (K,), [s].
    :param follower: The follower's values, shape (K,).
    :param search: Smallest and largest delay tried [s].
    :param step: Step between the delays tried [s].
    :return: The delay ``d`` minimising ``mean |follower(t + d) - reference(t)|`` [s] (the
        smallest of equal ones); NaN when there is no finite reference or follower sample.
    """
    t = np.asarray(times, dtype=float)
    values = np.asarray(reference, dtype=float)
    keep = np.isfinite(t) & np.isfinite(values)
    t, values = t[keep], values[keep]
    at = np.asarray(sample_times, dtype=float)
    signal = np.asarray(follower, dtype=float)
    known = np.isfinite(at) & np.isfinite(signal)
    at, signal = at[known], signal[known]
    if t.size == 0 or at.size == 0:
        return float('nan')
    delays = np.arange(search[0], search[1] + step / 2.0, step)
    shifted = np.interp(t[None, :] + delays[:, None], at, signal)
    errors = np.mean(np.abs(shifted - values[None, :]), axis=1)
    return float(delays[int(np.argmin(errors))])


def window_delays(
    times: npt.ArrayLike,
    reference: npt.ArrayLike,
    sample_times: npt.ArrayLike,
    follower: npt.ArrayLike,
    window: float = LAG_WINDOW,
    min_range: float = LAG_MIN_RANGE,
) -> FloatArray:
    """
    Return the best delay (:func:`best_delay`) over each half-overlapping window with motion.

    A window counts when it holds at least 10 finite reference samples spanning at least
    ``min_range``; a still reference says nothing about the delay.

    :param times: Reference times, increasing, shape (m,), [s].
    :param reference: Reference values, shape (m,) (NaN: no sample).
    :param sample_times: The follower's sample times, increasing, shape (K,), [s].
    :param follower: The follower's values, shape (K,).
    :param window: Window length [s].
    :param min_range: Smallest range of the reference in a window.
    :return: One delay per counted window, shape (W,), [s].
    """
    t = np.asarray(times, dtype=float)
    values = np.asarray(reference, dtype=float)
    keep = np.isfinite(t) & np.isfinite(values)
    t, values = t[keep], values[keep]
    delays: list[float] = []
    begin = float(t[0]) if t.size else 0.0
    while t.size and begin + window <= float(t[-1]) + 1e-9:
        inside = (t >= begin) & (t < begin + window)
        if np.count_nonzero(inside) >= 10 and float(np.ptp(values[inside])) >= min_range:
            delays.append(best_delay(t[inside], values[inside], sample_times, follower))
        begin += window / 2.0
    return np.asarray(delays, dtype=float)


class Derivatives(NamedTuple):
    """
    Velocity, acceleration and jerk of sampled positions (finite differences).

    :param velocity: Shape (K - 1, n), at the midpoints of the samples, [unit/s].
    :param acceleration: Shape (K - 2, n), [unit/s^2].
    :param jerk: Shape (K - 3, n), [unit/s^3].
    """

    velocity: FloatArray
    acceleration: FloatArray
    jerk: FloatArray


def derivatives(times: npt.ArrayLike, positions: npt.ArrayLike) -> Derivatives:
    """
    Differentiate sampled positions three times, by divided differences.

    The k-th derivative over samples ``i..i+k`` is ``k!`` times their k-th divided difference,
    ``k (d_{k-1}[i+1] - d_{k-1}[i]) / (t[i+k] - t[i])``: exact for a polynomial of degree k
    whatever the spacing, and for any motion an average of the true k-th derivative over those
    samples with non-negative weights (a B-spline), so it never reads above the true peak --
    uneven sampling (a 5 ms timer on a 2 ms simulation grid) does not inflate it, as repeated
    difference quotients at midpoints do (7 % for a jerk-limited motion sampled 4 ms / 6 ms).
    Samples closer than 1 us to the previous one are dropped first.

    :param times: Sample times, increasing, shape (K,), [s].
    :param positions: Positions, shape (K, n), [rad] or [m].
    :return: The three derivatives (empty when there are too few samples).
    """
    t = np.asarray(times, dtype=float)
    values = np.asarray(positions, dtype=float).reshape(t.size, -1)
    if t.size:
        keep = np.concatenate(([True], np.diff(t) > 1e-6))
        t, values = t[keep], values[keep]
    levels: list[FloatArray] = []
    for order in range(1, 4):
        if t.size <= order:
            levels.append(np.zeros((0, values.shape[1])))
            continue
        values = order * np.diff(values, axis=0) / (t[order:] - t[:-order])[:, None]
        levels.append(values)
    return Derivatives(*levels)


class LimitShare(NamedTuple):
    """
    How a signal uses its limits.

    :param peak: Largest ``|value| / limit`` over samples and joints.
    :param rms: Root mean square of ``|value| / limit`` over samples and joints.
    :param beyond: Samples with any joint beyond its limit (more than :data:`LIMIT_SLACK`).
    """

    peak: float
    rms: float
    beyond: int


def limit_share(
    values: npt.ArrayLike, limits: npt.ArrayLike, slack: float = LIMIT_SLACK
) -> LimitShare:
    """
    Measure a signal against its per-joint limits.

    :param values: Samples, shape (K, n) (NaN rows are skipped).
    :param limits: Positive limit per joint, shape (n,).
    :param slack: Relative excess over a limit that counts as rounding, not as beyond.
    :return: Peak and RMS share and the samples beyond; NaN shares for no samples.
    """
    array = np.asarray(values, dtype=float)
    array = array.reshape(array.shape[0], -1) if array.size else array.reshape(0, 1)
    array = array[np.all(np.isfinite(array), axis=1)]
    if array.shape[0] == 0:
        return LimitShare(float('nan'), float('nan'), 0)
    ratio = np.abs(array) / np.asarray(limits, dtype=float)
    beyond = int(np.count_nonzero(np.any(ratio > 1.0 + slack, axis=1)))
    return LimitShare(float(np.max(ratio)), float(np.sqrt(np.mean(ratio**2))), beyond)


def share_at_limit(
    values: npt.ArrayLike, limits: npt.ArrayLike, fraction: float = AT_LIMIT_SHARE
) -> float:
    """
    Return the share of samples with any joint at its limit.

    :param values: Samples, shape (K, n), e.g. velocities [rad/s].
    :param limits: Positive limit per joint, shape (n,).
    :param fraction: Share of the limit from which a joint counts as at it.
    :return: The share in [0, 1]; NaN for no samples.
    """
    array = np.asarray(values, dtype=float)
    if array.size == 0:
        return float('nan')
    at = np.abs(array.reshape(array.shape[0], -1)) >= fraction * np.asarray(limits, dtype=float)
    return float(np.mean(np.any(at, axis=1)))


def finite_mean(values: Iterable[float]) -> float:
    """
    Return the mean of the finite values (NaN marks a sample that could not be scored).

    :param values: Numbers, NaN or infinite where missing.
    :return: The mean of the finite ones; NaN when there is none.
    """
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else float('nan')


def finite_std(values: Iterable[float]) -> float:
    """
    Return the population standard deviation of the finite values.

    :param values: Numbers, NaN or infinite where missing.
    :return: The deviation of the finite ones; NaN when there is none.
    """
    finite = [v for v in values if math.isfinite(v)]
    return float(np.std(finite)) if finite else float('nan')
