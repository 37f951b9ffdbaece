"""The smallest step meeting linearized constraints: its invariants, compiled and numpy alike."""

from __future__ import annotations

import numpy as np
from pic_ros.solvers import active_set
from pic_ros.solvers.active_set import bounded_step, bounded_step_numpy, smallest_step
import pytest

STEPS = [bounded_step, bounded_step_numpy]


def problem(rng, constraints, joints=14):
    """Return random constraint rows and needs, a start and joint bounds around it."""
    rows = rng.normal(size=(constraints, joints))
    needed = rng.normal(size=constraints) * 0.05
    x = rng.uniform(-1.0, 1.0, joints)
    return rows, needed, x, x - 1.0, x + 1.0


@pytest.mark.skipif(
    not active_set.load(), reason='numba is not installed (or PIC_ROS_JIT=0)'
)
def test_the_compiled_step_is_the_numpy_step(rng):
    for _ in range(500):
        rows, needed, x, lower, upper = problem(rng, int(rng.integers(0, 9)))
        if len(rows) > 2 and rng.random() < 0.3:
            rows[1] = rows[0] * (1.0 + 1e-6)  # nearly parallel rows, as of neighbouring links
        at_limit = rng.random(x.size) < 0.2
        lower = np.where(at_limit & (rng.random(x.size) < 0.5), x, lower)
        upper = np.where(at_limit, x, upper)
        free = rng.random(x.size) < 0.9
        np.testing.assert_allclose(
            bounded_step(rows, needed, x, free, lower, upper),
            bounded_step_numpy(rows, needed, x, free, lower, upper),
            rtol=0.0, atol=1e-7,  # the damped systems' condition, up to 1e8, times rounding
        )


@pytest.mark.parametrize('step_of', STEPS)
def test_the_step_meets_every_constraint_of_a_feasible_problem(step_of, rng):
    for _ in range(200):
        rows, needed, x, lower, upper = problem(rng, int(rng.integers(1, 6)))
        step = step_of(rows, needed, x, np.ones(x.size, dtype=bool), lower - 9.0, upper + 9.0)
        # damped: met to the damping's share of the multipliers
        assert np.all(rows @ step >= needed - 1e-6)


@pytest.mark.parametrize('step_of', STEPS)
def test_constraints_already_met_ask_for_no_step(step_of, rng):
    rows, _, x, lower, upper = problem(rng, 4)
    step = step_of(rows, -np.ones(4), x, np.ones(x.size, dtype=bool), lower, upper)
    assert np.array_equal(step, np.zeros(x.size))


@pytest.mark.parametrize('step_of', STEPS)
def test_a_held_joint_or_one_pushed_past_its_limit_does_not_move(step_of, rng):
    for _ in range(200):
        rows, needed, x, lower, upper = problem(rng, 3)
        free = np.ones(x.size, dtype=bool)
        free[0] = False
        upper[1] = x[1]  # at its upper limit
        lower[2] = x[2]  # at its lower limit
        step = step_of(rows, needed, x, free, lower, upper)
        assert step[0] == 0.0
        assert step[1] <= 0.0
        assert step[2] >= 0.0


def test_the_smallest_step_is_the_least_norm_step_of_one_constraint():
    row = np.array([[3.0, 4.0]])
    step = smallest_step(row, np.array([5.0]), damping=0.0)
    np.testing.assert_allclose(step, [0.6, 0.8])
