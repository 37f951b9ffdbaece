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


def test_hundreds_of_conflicting_constraints_take_a_bounded_number_of_solves(monkeypatch, rng):
    """
    Deep in contact: 1,600 constraints on 8 joints that no step meets together.

    At most ACTIVE_PER_JOINT constraints per joint are active, so no equality system is
    larger than that (without the bound some 550 joined the active set of such a case from
    TIAGo, a solve of 550 equations per round: tens of seconds per frame).
    """
    from pic_ros.robot.kinematics import compiled

    joints = 8
    rows = rng.normal(size=(1600, joints))
    needed = np.abs(rng.normal(size=1600)) * 0.05  # every one asks for more of the same
    rows[800:] = -rows[:800] * rng.uniform(0.5, 2.0, (800, 1))  # ... and its opposite too
    sizes = []
    solved = active_set._solved

    def counted(matrix, values):
        sizes.append(len(values))
        return solved(matrix, values)

    monkeypatch.setattr(active_set, '_solved', counted)
    step = smallest_step(rows, needed)

    assert np.all(np.isfinite(step)) and step.shape == (joints,)
    assert max(sizes) == compiled.ACTIVE_PER_JOINT * joints  # full: the solve ended there


@pytest.mark.skipif(
    not active_set.load(), reason='numba is not installed (or PIC_ROS_JIT=0)'
)
def test_the_compiled_step_is_the_numpy_step_with_hundreds_of_constraints(rng):
    """The bounded active set is the same in both: same step on conflicting constraints."""
    joints = 8
    rows = rng.normal(size=(600, joints))
    needed = np.abs(rng.normal(size=600)) * 0.05
    rows[300:] = -rows[:300]
    x = np.zeros(joints)
    free = np.ones(joints, dtype=bool)
    np.testing.assert_allclose(
        bounded_step(rows, needed, x, free, x - 1.0, x + 1.0),
        bounded_step_numpy(rows, needed, x, free, x - 1.0, x + 1.0),
        rtol=0.0, atol=1e-6,
    )
