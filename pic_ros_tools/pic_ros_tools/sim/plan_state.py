"""
The commanded state of a simulated controller's plan at one time, in one call.

A plan is the knots a :class:`~pic_ros_tools.sim.trajectory.TrajectoryFollower` follows:
absolute times [s], and per knot the positions, velocities and accelerations of every joint
(the follower's joint order, [rad] or [m]). Each segment between two knots is interpolated as
joint_trajectory_controller does (:func:`pic_ros.motion.streaming.segment_state`: linear,
cubic Hermite or quintic, by :data:`LINEAR`, :data:`CUBIC`, :data:`QUINTIC` per segment) and the
position is clamped into the limits, with zero velocity and acceleration on a clamped joint.

The simulation samples every controller twice per physics step (500 Hz): :func:`plan_state_into`
is a plain-float loop compiled when numba is there (and ``PIC_ROS_JIT`` is not ``0``;
:class:`~pic_ros.robot.kinematics.compiled.Kernel`), a few microseconds a call instead of some
forty numpy calls; without numba it is :func:`segment_state` on arrays. The two agree to
rounding (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.motion.streaming import Interpolation, segment_state
from pic_ros.robot.kinematics.compiled import Kernel

FloatArray = npt.NDArray[np.float64]

LINEAR: Final = 0
"""Segment code: positions only, linear."""
CUBIC: Final = 1
"""Segment code: positions and velocities, cubic Hermite."""
QUINTIC: Final = 2
"""Segment code: positions, velocities and accelerations, quintic."""

_KINDS: Final = (Interpolation.LINEAR, Interpolation.CUBIC, Interpolation.QUINTIC)


def segment_codes(
    has_velocity: Sequence[bool], has_acceleration: Sequence[bool]
) -> npt.NDArray[np.int64]:
    """
    Return each segment's interpolation code from what its two knots carry.

    :param has_velocity: Per knot, whether it carries velocities.
    :param has_acceleration: Per knot, whether it carries accelerations (and velocities).
    :return: Per segment (knot ``i`` to ``i + 1``), :data:`QUINTIC` when both knots carry
        accelerations, else :data:`CUBIC` when both carry velocities, else :data:`LINEAR`;
        shape (knots - 1,).
    """
    codes = [
        QUINTIC if has_acceleration[i] and has_acceleration[i + 1]
        else CUBIC if has_velocity[i] and has_velocity[i + 1]
        else LINEAR
        for i in range(len(has_velocity) - 1)
    ]
    return np.array(codes, dtype=np.int64)


def interpolation(code: int) -> Interpolation:
    """Return the :class:`~pic_ros.motion.streaming.Interpolation` of a segment code."""
    return _KINDS[code]


def _plan_state_numpy(
    times: FloatArray, positions: FloatArray, velocities: FloatArray,
    accelerations: FloatArray, codes: npt.NDArray[np.int64], lower: FloatArray,
    upper: FloatArray, t: float, out_p: FloatArray, out_v: FloatArray, out_a: FloatArray,
) -> None:
    """Write the plan's state at ``t`` with numpy (:func:`plan_state_into`)."""
    if t < times[0]:
        position = positions[0]
        velocity = velocities[0]
        acceleration = accelerations[0]
    else:
        index = min(int(np.searchsorted(times, t, side='right')) - 1, len(times) - 2)
        after = index + 1
        position, velocity, acceleration = segment_state(
            _KINDS[int(codes[index])], float(times[after] - times[index]),
            float(t - times[index]),
            (positions[index], velocities[index], accelerations[index]),
            (positions[after], velocities[after], accelerations[after]),
        )
    inside = np.clip(position, lower, upper)
    stopped = inside != position
    out_p[:] = inside
    out_v[:] = np.where(stopped, 0.0, velocity)
    out_a[:] = np.where(stopped, 0.0, acceleration)


def _plan_state_loops(
    times: FloatArray, positions: FloatArray, velocities: FloatArray,
    accelerations: FloatArray, codes: npt.NDArray[np.int64], lower: FloatArray,
    upper: FloatArray, t: float, out_p: FloatArray, out_v: FloatArray, out_a: FloatArray,
) -> None:
    """Write :func:`_plan_state_numpy` joint by joint in plain floats (compiled by numba)."""
    count = times.shape[0]
    index = -1  # before the first knot: its state
    if t >= times[0]:
        low, high = 0, count  # bisect right: the first knot after t
        while low < high:
            middle = (low + high) // 2
            if t < times[middle]:
                high = middle
            else:
                low = middle + 1
        index = min(low - 1, count - 2)
    code = LINEAR
    T = 1.0
    s = 0.0
    if index >= 0:
        code = codes[index]
        T = times[index + 1] - times[index]
        s = t - times[index]
    # each polynomial as segment_state writes it, the powers of the times taken once
    T2, T3, T4, T5 = T * T, T * T * T, T**4, T**5
    u = s / T
    u2, u3 = u * u, u * u * u
    s2, s3, s4, s5 = s * s, s * s * s, s**4, s**5
    for k in range(positions.shape[1]):
        if index < 0:
            p = positions[0, k]
            v = velocities[0, k]
            a = accelerations[0, k]
        else:
            p0 = positions[index, k]
            p1 = positions[index + 1, k]
            if code == LINEAR:
                v = (p1 - p0) / T
                p = p0 + v * s
                a = 0.0
            elif code == CUBIC:
                v0 = velocities[index, k]
                v1 = velocities[index + 1, k]
                p = ((2.0 * u3 - 3.0 * u2 + 1.0) * p0 + (u3 - 2.0 * u2 + u) * T * v0
                     + (-2.0 * u3 + 3.0 * u2) * p1 + (u3 - u2) * T * v1)
                v = ((6.0 * u2 - 6.0 * u) * (p0 - p1) / T + (3.0 * u2 - 4.0 * u + 1.0) * v0
                     + (3.0 * u2 - 2.0 * u) * v1)
                a = ((12.0 * u - 6.0) * (p0 - p1) / T2 + (6.0 * u - 4.0) * v0 / T
                     + (6.0 * u - 2.0) * v1 / T)
            else:
                v0 = velocities[index, k]
                v1 = velocities[index + 1, k]
                a0 = accelerations[index, k]
                a1 = accelerations[index + 1, k]
                c3 = (20.0 * (p1 - p0) - (8.0 * v1 + 12.0 * v0) * T
                      - (3.0 * a0 - a1) * T2) / (2.0 * T3)
                c4 = (30.0 * (p0 - p1) + (14.0 * v1 + 16.0 * v0) * T
                      + (3.0 * a0 - 2.0 * a1) * T2) / (2.0 * T4)
                c5 = (12.0 * (p1 - p0) - 6.0 * (v1 + v0) * T - (a0 - a1) * T2) / (2.0 * T5)
                p = p0 + v0 * s + a0 / 2.0 * s2 + c3 * s3 + c4 * s4 + c5 * s5
                v = v0 + a0 * s + 3.0 * c3 * s2 + 4.0 * c4 * s3 + 5.0 * c5 * s4
                a = a0 + 6.0 * c3 * s + 12.0 * c4 * s2 + 20.0 * c5 * s3
        inside = min(max(p, lower[k]), upper[k])
        out_p[k] = inside
        out_v[k] = v if inside == p else 0.0
        out_a[k] = a if inside == p else 0.0


_PLAN_STATE = Kernel(_plan_state_numpy, _plan_state_loops)


def plan_state_into(
    times: FloatArray, positions: FloatArray, velocities: FloatArray,
    accelerations: FloatArray, codes: npt.NDArray[np.int64], lower: FloatArray,
    upper: FloatArray, t: float, out_p: FloatArray, out_v: FloatArray, out_a: FloatArray,
) -> None:
    """
    Write a plan's commanded state at a time before its last knot.

    Before the first knot, the first knot's state; then the segment that holds ``t``. The
    position is clamped into ``[lower, upper]``; a clamped joint gets zero velocity and
    acceleration.

    :param times: Knot times, increasing, shape (m,), m >= 2 [s].
    :param positions: Knot positions, shape (m, n), [rad] or [m].
    :param velocities: Knot velocities, shape (m, n) (zeros where a knot carries none).
    :param accelerations: Knot accelerations, shape (m, n) (zeros where a knot carries none).
    :param codes: Segment codes (:func:`segment_codes`), shape (m - 1,).
    :param lower: Lower position limits, shape (n,).
    :param upper: Upper position limits, shape (n,).
    :param t: The time, before ``times[-1]`` [s].
    :param out_p: Written: positions, shape (n,), contiguous.
    :param out_v: Written: velocities, shape (n,), contiguous.
    :param out_a: Written: accelerations, shape (n,), contiguous.
    """
    _PLAN_STATE.function()(
        times, positions, velocities, accelerations, codes, lower, upper, float(t),
        out_p, out_v, out_a,
    )


def load() -> None:
    """Compile :func:`plan_state_into` (or read it from numba's cache), the first time."""
    if not _PLAN_STATE.loaded:
        knots = np.zeros((2, 1))
        out = np.empty(1), np.empty(1), np.empty(1)
        plan_state_into(
            np.array([0.0, 1.0]), knots, knots, knots, np.array([QUINTIC]), np.zeros(1),
            np.ones(1), 0.5, *out,
        )
