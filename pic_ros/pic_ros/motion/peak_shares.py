"""
The continuity check's arithmetic: the shares of the limits that consecutive states imply.

:func:`peak_shares` answers :func:`~pic_ros.motion.streaming.segment_peaks` on states as
arrays: per state its velocity and acceleration over their limits, per pair of consecutive
states the mean velocity, acceleration and jerk between them over their limits, and the peaks of
those. The trajectory publisher asks it of every chunk it sends and the simulated controller of
every trajectory it takes, so it is a plain-float loop, compiled when numba is installed (and
``PIC_ROS_JIT`` is not ``0``; :func:`pic_ros.robot.kinematics.compiled.compiler`): a few
microseconds instead of some thirty numpy calls on arrays of a few rows. Without numba the same
arithmetic runs vectorized in numpy; both paths give the same floats (each share is the same
division of the same differences, and a maximum does not round; tested). The compiled function
calls no other function of the package, as numba's cache watches only the file of the function it
compiled.

Units: seconds, and the joints' units ([rad] or [m]) per second, second squared, second cubed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
from pic_ros.robot.kinematics.compiled import Kernel

FloatArray = npt.NDArray[np.float64]

Shares = tuple[float, float, float, int, int, float, float, float]
"""``(velocity, acceleration, jerk, violations, index, at_velocity, at_acceleration, at_jerk)``:
the largest shares of the velocity and acceleration limits (states and pairs) and of the jerk
limit (pairs); how many states or pairs go beyond ``1 + tolerance`` of a limit; where the worst
share is (a pair's first state, or the state when there is one) and the three shares there."""


def peak_shares(
    times: FloatArray,
    q: FloatArray,
    v: FloatArray | None,
    a: FloatArray | None,
    limits: tuple[FloatArray, FloatArray, FloatArray | None],
    tolerance: float,
) -> Shares:
    """
    Return what consecutive states imply, as shares of the limits (the module docstring).

    A pair of identical states implies nothing; a pair of different states at one time implies
    an infinite share (a jump).

    :param times: The states' times, increasing, shape (k,) [s].
    :param q: Their positions, shape (k, n).
    :param v: Their velocities, shape (k, n), or None (not carried).
    :param a: Their accelerations, shape (k, n), or None (not carried).
    :param limits: The velocity, acceleration and jerk limits, each shape (n,), positive (jerk
        None: no jerk term).
    :param tolerance: Relative slack of :data:`Shares`' violations.
    :return: The peaks (:data:`Shares`).
    """
    velocity, acceleration, jerk = limits
    shape = np.shape(q)
    arrays = (
        np.ascontiguousarray(times, dtype=np.float64), np.ascontiguousarray(q, dtype=np.float64),
        _rows(v, shape), _rows(a, shape),
        np.ascontiguousarray(velocity, dtype=np.float64),
        np.ascontiguousarray(acceleration, dtype=np.float64),
        np.full(shape[1], math.inf) if jerk is None
        else np.ascontiguousarray(jerk, dtype=np.float64),
    )
    shares: Shares = _kernel()(*arrays, float(tolerance))
    return shares


def _rows(values: FloatArray | None, shape: tuple[int, ...]) -> FloatArray:
    """
    Return states' values as a C-ordered float array; none carried: zeros.

    Zero velocities (accelerations) imply no share of their limit and no change between states,
    as none carried; an infinite jerk limit, no jerk share: one arithmetic for every case.
    """
    if values is None:
        return np.zeros(shape)
    return np.ascontiguousarray(values, dtype=np.float64)


def _shares_numpy(
    times: FloatArray,
    q: FloatArray,
    v: FloatArray,
    a: FloatArray,
    velocity_limit: FloatArray,
    acceleration_limit: FloatArray,
    jerk_limit: FloatArray,
    tolerance: float,
) -> Shares:
    """Do :func:`peak_shares` vectorized (no numba)."""
    count = times.size
    point_v = np.max(np.abs(v) / velocity_limit, axis=1)
    point_a = np.max(np.abs(a) / acceleration_limit, axis=1)
    if count > 1:
        dq, dv, da = np.diff(q, axis=0), np.diff(v, axis=0), np.diff(a, axis=0)
        same = ~(np.any(dq != 0.0, axis=1) | np.any(dv != 0.0, axis=1) | np.any(da != 0.0, axis=1))
        h = np.diff(times)
        span = np.where(h > 0.0, h, 0.0)
        with np.errstate(divide='ignore', invalid='ignore'):

            def ratio(change: FloatArray, limit: FloatArray) -> FloatArray:
                value = np.max(np.abs(change) / limit, axis=1) / span
                return np.where(same | np.isnan(value), 0.0, value)

            pair_v, pair_a, pair_j = (
                ratio(dq, velocity_limit), ratio(dv, acceleration_limit), ratio(da, jerk_limit)
            )
        both_v = np.maximum(pair_v, np.maximum(point_v[:-1], point_v[1:]))
        both_a = np.maximum(pair_a, np.maximum(point_a[:-1], point_a[1:]))
    else:
        both_v, both_a, pair_j = point_v, point_a, np.zeros(1)
    worst = np.maximum(np.maximum(both_v, both_a), pair_j)
    index = int(np.argmax(worst))
    return (
        float(np.max(both_v)), float(np.max(both_a)),
        float(np.max(pair_j)) if count > 1 else 0.0,
        int(np.count_nonzero(worst > 1.0 + tolerance)), index,
        float(both_v[index]), float(both_a[index]), float(pair_j[index]),
    )


def _shares_loops(
    times: FloatArray,
    q: FloatArray,
    v: FloatArray,
    a: FloatArray,
    velocity_limit: FloatArray,
    acceleration_limit: FloatArray,
    jerk_limit: FloatArray,
    tolerance: float,
) -> Shares:
    """Do :func:`peak_shares` in loops (compiled)."""
    count, width = q.shape
    peak_v = peak_a = peak_j = -math.inf
    violations, index = 0, 0
    worst = -math.inf
    at_v = at_a = at_j = 0.0
    for row in range(max(count - 1, 1)):
        # the two states' own shares, then the pair's mean shares (one state: its own only)
        own_v = own_a = 0.0
        for state in range(row, min(row + 2, count)):
            for joint in range(width):
                own_v = max(own_v, abs(v[state, joint]) / velocity_limit[joint])
                own_a = max(own_a, abs(a[state, joint]) / acceleration_limit[joint])
        pair_v = pair_a = pair_j = 0.0
        if count > 1:
            change_q = change_v = change_a = 0.0
            same = True
            for joint in range(width):
                step_q = q[row + 1, joint] - q[row, joint]
                step_v = v[row + 1, joint] - v[row, joint]
                step_a = a[row + 1, joint] - a[row, joint]
                same = same and step_q == 0.0 and step_v == 0.0 and step_a == 0.0
                change_q = max(change_q, abs(step_q) / velocity_limit[joint])
                change_v = max(change_v, abs(step_v) / acceleration_limit[joint])
                change_a = max(change_a, abs(step_a) / jerk_limit[joint])
            span = times[row + 1] - times[row]
            if not same and span > 0.0:
                pair_v, pair_a, pair_j = change_q / span, change_v / span, change_a / span
            elif not same:  # different states at one time: a jump (no change, no share)
                pair_v = math.inf if change_q > 0.0 else 0.0
                pair_a = math.inf if change_v > 0.0 else 0.0
                pair_j = math.inf if change_a > 0.0 else 0.0
        both_v, both_a = max(pair_v, own_v), max(pair_a, own_a)
        peak_v, peak_a, peak_j = max(peak_v, both_v), max(peak_a, both_a), max(peak_j, pair_j)
        share = max(max(both_v, both_a), pair_j)
        if share > 1.0 + tolerance:
            violations += 1
        if share > worst:
            worst, index, at_v, at_a, at_j = share, row, both_v, both_a, pair_j
    return (
        peak_v, peak_a, peak_j if count > 1 else 0.0, violations, index, at_v, at_a, at_j,
    )


_KERNEL = Kernel(_shares_numpy, _shares_loops)


def _kernel() -> Any:
    """Return the function, compiled on the first call when numba is there."""
    return _KERNEL.function()


def load() -> None:
    """Compile the function (or read it from numba's cache) and run it, the first time."""
    if not _KERNEL.loaded:
        limit = np.ones(1)
        peak_shares(np.zeros(2), np.zeros((2, 1)), np.zeros((2, 1)), np.zeros((2, 1)),
                    (limit, limit, limit), 0.0)
