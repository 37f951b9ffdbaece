"""The joint recovery: its Jacobian, monotone residual, bounds, working range and continuity."""

from __future__ import annotations

import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.correspondence import ArmTargets, TargetKind
from pic_ros.robot import load_robot
from pic_ros.solvers import make_solver, RecoveryConfig, SolverConfig, Termination
from pic_ros.solvers.recovery import JointRecovery, RecoveryGoal
from pic_ros.tools.metrics import elbow_angle
import pytest

ROBOTS = ('baxter', 'yumi', 'tiago')


@pytest.fixture(scope='module')
def arms():
    """Every arm of the three shipped robots, by ``robot/arm``."""
    return {
        f'{name}/{arm.name}': arm
        for name in ROBOTS
        for arm in load_robot(name).arms.values()
    }


def inside(arm, rng, margin: float = 0.3) -> np.ndarray:
    """Draw joint values well inside an arm's working range."""
    low = np.maximum(arm.work_lower, -math.pi) + margin
    high = np.minimum(arm.work_upper, math.pi) - margin
    return rng.uniform(low, np.maximum(high, low))


def goal_at(arm, q, kind: TargetKind) -> RecoveryGoal:
    """Return the goal that an arm's landmarks meet exactly at ``q``."""
    points = arm.landmarks(q)
    return RecoveryGoal.from_points(kind, *(tuple(p) for p in points[1:4]))


def test_recovery_jacobian_matches_finite_differences(arms, rng):
    """The analytic Jacobian of every task row equals central differences of the residual."""
    for arm in arms.values():
        recovery = JointRecovery(arm, RecoveryConfig())
        for kind in TargetKind:
            for _ in range(5):
                q = inside(arm, rng, margin=0.05)
                goal = goal_at(arm, inside(arm, rng, margin=0.05), kind)
                full = arm.full_q(q)
                state = recovery._evaluate(full, goal)
                analytic = np.array(recovery._columns(state, goal)[0]).T
                numeric = np.zeros_like(analytic)
                for column, (_, index) in enumerate(recovery._moving):
                    plus, minus = list(full), list(full)
                    plus[index] += 1e-6
                    minus[index] -= 1e-6
                    numeric[:, column] = (
                        np.array(recovery._evaluate(plus, goal).residual)
                        - np.array(recovery._evaluate(minus, goal).residual)
                    ) / 2e-6
                np.testing.assert_allclose(analytic, numeric, atol=1e-6)


@pytest.mark.parametrize('kind', list(TargetKind))
def test_residual_never_increases_across_iterations(arms, rng, kind):
    """More iterations from the same start never leave a larger residual."""
    for arm in arms.values():
        for _ in range(4):
            start = inside(arm, rng)
            goal = goal_at(arm, inside(arm, rng), kind)
            first = JointRecovery(arm, RecoveryConfig()).residual(start, goal)
            residuals = [first]
            for count in range(1, 9):
                config = RecoveryConfig(max_iterations=count, tolerance=1e-9)
                residuals.append(JointRecovery(arm, config).recover(start, goal).residual)
            assert all(b <= a + 1e-12 for a, b in zip(residuals, residuals[1:])), residuals


def test_a_converged_solve_only_moves_within_half_the_tolerance(arms, rng):
    """At a solved pose the comfort step never lets the residual leave half the tolerance."""
    config = RecoveryConfig()
    for arm in arms.values():
        q = inside(arm, rng)
        goal = goal_at(arm, q, TargetKind.SHAPE)
        result = JointRecovery(arm, config).recover(q, goal)
        assert result.termination is Termination.CONVERGED
        assert result.residual <= 0.5 * config.tolerance


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), step=st.floats(0.01, 0.5))
def test_a_solve_moves_no_joint_more_than_the_step_bound_and_stays_in_range(arms, seed, step):
    """Whatever the goal, a solve stays inside the working range and within max_step."""
    rng = np.random.default_rng(seed)
    for arm in arms.values():
        start = inside(arm, rng, margin=0.0)
        goal = goal_at(arm, inside(arm, rng, margin=0.0), TargetKind.SHAPE)
        result = JointRecovery(arm, RecoveryConfig(max_step=step)).recover(start, goal)
        assert np.all(np.abs(result.q - start) <= step + 1e-12)
        assert np.all(result.q >= arm.work_lower - 1e-12)
        assert np.all(result.q <= arm.work_upper + 1e-12)
        assert isinstance(result.termination, Termination)


def test_elbow_working_range_stops_at_the_straight_arm(arms):
    """The elbow's working range ends where the landmarks are straightest, on the bent side."""
    for arm in arms.values():
        elbow = arm.joint_names.index(arm.spec.elbow)
        straight = arm.elbow_straight()
        assert arm.lower[elbow] <= straight <= arm.upper[elbow]
        q = arm.neutral.copy()
        q[elbow] = straight
        points = arm.landmarks(q)
        assert math.degrees(elbow_angle(*points[1:4])) > 150.0
        # The neutral (bent) pose is inside the working range.
        assert arm.work_lower[elbow] <= arm.neutral[elbow] <= arm.work_upper[elbow]


def test_direction_targets_are_met_exactly_when_the_pose_is_reachable(arms, rng):
    """Reachable human arm directions are reproduced by the landmarks to 1e-6."""
    config = SolverConfig(
        name='pic', recovery=RecoveryConfig(tolerance=1e-9, max_iterations=50, comfort=0.0)
    )
    for key, arm in arms.items():
        for _ in range(3):
            q_true = inside(arm, rng, margin=0.4)
            points = arm.landmarks(q_true)
            upper = points[2] - points[1]
            fore = points[3] - points[2]
            # A person with other bone lengths making the same gesture.
            shoulder = arm.landmarks(arm.neutral)[1]
            elbow = shoulder + 0.8 * upper
            targets = ArmTargets(shoulder, elbow, elbow + 0.7 * fore, TargetKind.SHAPE)
            solver = make_solver(arm, config)
            solver.reset(q_true + rng.uniform(-0.15, 0.15, q_true.size))
            for _ in range(10):
                result = solver.solve(targets)
            solved = arm.landmarks(result.q)
            for got, want in ((solved[2] - solved[1], upper), (solved[3] - solved[2], fore)):
                got_unit = got / np.linalg.norm(got)
                np.testing.assert_allclose(got_unit, want / np.linalg.norm(want), atol=1e-6,
                                           err_msg=key)
