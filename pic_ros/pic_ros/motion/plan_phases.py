"""
The constant-jerk phases of a Ruckig plan, read once, and what the generator asks of them.

A calculated ``ruckig.Trajectory`` (one section) holds per joint a profile: a brake pair of
phases, then seven phases, each with constant jerk. :func:`phase_table` reads them into one
array, a row per joint (reading the bindings' lists costs more than the arithmetic), and two
questions are answered from it:

- :func:`extrema`: each joint's lowest and highest position over its own profile (the phase ends
  and the instants where the velocity crosses zero; Ruckig's own ``position_extrema`` misses a
  turning point inside a constant-acceleration phase). A joint whose profile ends before the
  plan's moves on at its final velocity: the generator's goal leaves room for that
  (:class:`~pic_ros.motion.generator.JerkLimitedGenerator`, ``max_dt``);
- :func:`switch_times`: the times where a joint's jerk changes.

Both are plain-float loops, compiled when numba is installed (and ``PIC_ROS_JIT`` is not ``0``;
:func:`pic_ros.robot.kinematics.compiled.compiler`): a few microseconds instead of the fixed
cost of some forty numpy calls on arrays of seven rows. Without numba the extrema are computed
with numpy and the switch times by the same loop in Python; both paths give the same floats
(the same operations in the same order, tested). The compiled functions call no other function
of the package, as numba's cache watches only the file of the function it compiled.

Positions [rad] or [m] in the plan's coordinates (relative to where it starts), times [s].
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.robot.kinematics.compiled import compiler

FloatArray = npt.NDArray[np.float64]

PHASES: Final = 9
"""Phases per joint in a row of :func:`phase_table`: the brake pair, then the profile's seven."""

POSITION, VELOCITY, ACCELERATION, JERK, DURATION = (PHASES * index for index in range(5))
"""First column of each block of ``PHASES`` columns of a row: the values at each phase's start,
its jerk and its duration."""

END: Final = 5 * PHASES
"""Column of the position at the end of the profile."""

BRAKE_DURATION: Final = END + 1
"""Column of the brake pair's duration (the profile's phases start after it)."""

WIDTH: Final = BRAKE_DURATION + 1
"""Columns of a row."""


def phase_table(plan: Any) -> FloatArray:
    """
    Read a plan's phases, a row per joint (the layout of the column constants above).

    :param plan: A calculated ``ruckig.Trajectory`` (one section).
    :return: The table, shape (n, :data:`WIDTH`).
    """
    rows = []
    for profile in plan.profiles[0]:
        brake = profile.brake
        p = profile.p
        rows.append([
            *brake.p, *p[:7], *brake.v, *profile.v[:7], *brake.a, *profile.a[:7],
            *brake.j, *profile.j, *brake.t, *profile.t, p[7], brake.duration,
        ])
    return np.array(rows, dtype=float).reshape(-1, WIDTH)


def duration_table(plan: Any) -> FloatArray:
    """
    Read only a plan's phase durations: a :func:`phase_table` with the other columns zero.

    :func:`switch_times` reads nothing else, and this reads a fifth of what :func:`phase_table`
    does (the bindings' lists are the cost).

    :param plan: A calculated ``ruckig.Trajectory`` (one section).
    :return: The table, shape (n, :data:`WIDTH`).
    """
    profiles = plan.profiles[0]
    table = np.zeros((len(profiles), WIDTH))
    table[:, DURATION:DURATION + PHASES] = [
        [*profile.brake.t, *profile.t] for profile in profiles
    ]
    table[:, BRAKE_DURATION] = [profile.brake.duration for profile in profiles]
    return table


def _extrema_numpy(table: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Return :func:`extrema` of a table with numpy (the path without numba)."""
    p0, v0, a0, jerk, duration = (
        table[:, first:first + PHASES] for first in (POSITION, VELOCITY, ACCELERATION, JERK,
                                                     DURATION)
    )
    candidates = [p0, table[:, END:END + 1]]
    with np.errstate(divide='ignore', invalid='ignore'):
        root = np.sqrt(a0 * a0 - 2.0 * jerk * v0)
        quadratic = np.where(jerk != 0.0, 1.0, np.nan)
        times = (
            (-a0 + root) / jerk * quadratic,
            (-a0 - root) / jerk * quadratic,
            np.where((jerk == 0.0) & (a0 != 0.0), -v0 / a0, np.nan),
        )
    for when in times:
        inside = np.isfinite(when) & (when > 0.0) & (when < duration)
        at = np.where(inside, when, 0.0)
        position = p0 + v0 * at + a0 * at**2 / 2.0 + jerk * at**3 / 6.0
        candidates.append(np.where(inside, position, p0))
    stacked = np.concatenate(candidates, axis=1)
    return stacked.min(axis=1), stacked.max(axis=1)


def _extrema(table: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Return :func:`extrema` of a table in plain floats (the path compiled by numba)."""
    count = table.shape[0]
    low = np.empty(count)
    high = np.empty(count)
    for row in range(count):
        lowest = highest = table[row, END]
        for phase in range(PHASES):
            p0 = table[row, POSITION + phase]
            v0 = table[row, VELOCITY + phase]
            a0 = table[row, ACCELERATION + phase]
            jerk = table[row, JERK + phase]
            duration = table[row, DURATION + phase]
            lowest = min(lowest, p0)
            highest = max(highest, p0)
            # zero velocity inside the phase: v0 + a0 t + jerk t^2 / 2 = 0, 0 < t < duration
            first = second = math.nan
            if jerk != 0.0:
                square = a0 * a0 - 2.0 * jerk * v0
                if square >= 0.0:
                    root = math.sqrt(square)
                    first, second = (-a0 + root) / jerk, (-a0 - root) / jerk
            elif a0 != 0.0:
                first = -v0 / a0
            for when in (first, second):
                if math.isfinite(when) and 0.0 < when < duration:
                    position = (
                        p0 + v0 * when + a0 * (when * when) / 2.0
                        + jerk * math.pow(when, 3.0) / 6.0
                    )
                    lowest = min(lowest, position)
                    highest = max(highest, position)
        low[row] = lowest
        high[row] = highest
    return low, high


def _switch_times(table: FloatArray, until: float) -> FloatArray:
    """Return :func:`switch_times` of a table (plain floats; compiled by :func:`switch_times`)."""
    count = table.shape[0]
    found = np.empty(count * PHASES)
    size = 0
    for row in range(count):
        total = 0.0  # the brake's phase ends, then the profile's after the brake's duration
        for phase in range(PHASES):
            if phase == 2:
                total = 0.0
            total += table[row, DURATION + phase]
            when = total if phase < 2 else table[row, BRAKE_DURATION] + total
            if 0.0 < when < until:
                found[size] = when
                size += 1
    return np.unique(found[:size])


def extrema(table: FloatArray) -> tuple[FloatArray, FloatArray]:
    """
    Return each joint's lowest and highest position over its profile in a plan.

    :param table: The plan's :func:`phase_table`.
    :return: Lowest and highest positions, each shape (n,), in the plan's coordinates.
    """
    return _kernels()[0](table)  # type: ignore[no-any-return]


def switch_times(table: FloatArray, until: float) -> FloatArray:
    """
    Return the times in (0, ``until``) where a joint's jerk changes, increasing, each once.

    :param table: The plan's :func:`phase_table`.
    :param until: End of the look-ahead [s].
    :return: The times [s], shape (k,).
    """
    return _kernels()[1](table, float(until))  # type: ignore[no-any-return]


def _kernels() -> tuple[Any, Any]:
    """Return the two functions, compiled on the first call when numba is there."""
    global _loaded
    if _loaded is None:
        compiled = compiler()
        if compiled is None:
            _loaded = (_extrema_numpy, _switch_times)
        else:
            _loaded = (compiled(_extrema), compiled(_switch_times))
    return _loaded


def load() -> None:
    """Compile the functions (or read them from numba's cache) and run them, the first time."""
    if _loaded is None:
        table = np.zeros((1, WIDTH))
        extrema(table)
        switch_times(table, 1.0)


_loaded: tuple[Any, Any] | None = None
