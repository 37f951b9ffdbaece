"""The continuity check's arithmetic: the compiled loop gives the numpy path's floats."""

from __future__ import annotations

import numpy as np
from pic_ros.motion import peak_shares as shares_module
from pic_ros.motion.peak_shares import peak_shares
import pytest


def random_track(rng, count, width, carried):
    """Return states with repeated ones, steps at one time, and the values not carried None."""
    times = np.cumsum(rng.choice((0.0, 1e-3, 0.01, 0.05), count))
    q = np.cumsum(rng.normal(0.0, 0.05, (count, width)), axis=0)
    v = rng.normal(0.0, 1.0, (count, width))
    a = rng.normal(0.0, 5.0, (count, width))
    for state in range(1, count):
        if rng.uniform() < 0.2:  # a repeated state (skipped), sometimes at a later time
            q[state], v[state], a[state] = q[state - 1], v[state - 1], a[state - 1]
    return times, q, v if carried > 0 else None, a if carried > 1 else None


def test_the_compiled_shares_are_the_numpy_ones():
    """Random tracks of every shape the check meets: the same eight values, to the bit."""
    compiled = shares_module._kernel()
    if compiled is shares_module._shares_numpy:
        pytest.skip('numba is not installed (or PIC_ROS_JIT=0): no compiled path')
    rng = np.random.default_rng(5)
    compared = 0
    for _ in range(400):
        count, width = int(rng.integers(1, 9)), int(rng.integers(1, 8))
        times, q, v, a = random_track(rng, count, width, int(rng.integers(0, 3)))
        jerk = None if rng.uniform() < 0.3 else rng.uniform(5.0, 50.0, width)
        limits = (rng.uniform(0.5, 2.0, width), rng.uniform(1.0, 10.0, width), jerk)
        got = peak_shares(times, q, v, a, limits, 1e-3)
        rows = shares_module._rows
        expected = shares_module._shares_numpy(
            times, q, rows(v, q.shape), rows(a, q.shape), limits[0], limits[1],
            np.full(width, np.inf) if jerk is None else jerk, 1e-3,
        )
        assert got == expected
        compared += bool(expected[3])
    assert compared > 50  # many tracks go beyond a limit


def test_a_jump_at_one_time_is_an_infinite_share_and_a_repeated_state_none():
    """Two different states at one time cannot be followed; two identical ones imply nothing."""
    limit = np.ones(1)
    jump = peak_shares(
        np.zeros(2), np.array([[0.0], [0.1]]), None, None, (limit, limit, None), 1e-3
    )
    assert jump[0] == np.inf and jump[3] == 1
    still = peak_shares(
        np.array([0.0, 0.0, 1.0]), np.zeros((3, 1)), np.zeros((3, 1)), None,
        (limit, limit, limit), 1e-3,
    )
    assert still[:4] == (0.0, 0.0, 0.0, 0)
