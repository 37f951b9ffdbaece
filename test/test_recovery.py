"""
The joint recovery: Jacobian, residual, termination, bounds, working range and repeatability.

The Jacobian is also checked against MuJoCo in ``test_kinematics_reference.py``.
"""

from __future__ import annotations

import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.correspondence import ArmTargets, TargetKind
from pic_ros.robot import load_robot
from pic_ros.solvers import make_solver, RecoveryConfig, SolverConfig, Termination
from pic_ros.solvers.recovery import JointRecovery, RecoveryGoal
from pic_ros_tools.metrics import elbow_angle
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
            pairs = zip(residuals, residuals[1:], strict=False)
            assert all(b <= a + 1e-12 for a, b in pairs), residuals


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
    max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
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
        # The working range's bound on the side where the URDF range was cut.
        cut_low = arm.work_lower[elbow] != arm.lower[elbow]
        straight = float(arm.work_lower[elbow] if cut_low else arm.work_upper[elbow])
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


# --- residual, termination, limits and repeatability of a solve ----------------------------------


def anywhere(arm, rng) -> np.ndarray:
    """Draw joint values anywhere from half a range below the URDF limits to half above them."""
    low = np.maximum(arm.lower, -math.pi)
    high = np.minimum(arm.upper, math.pi)
    span = high - low
    return rng.uniform(low - 0.5 * span, high + 0.5 * span)


def unreachable_goals(arm) -> dict[str, RecoveryGoal]:
    """Return goals no configuration meets: a wrist 3 m away, and a forearm folded onto the arm."""
    shoulder, elbow, wrist = (tuple(p) for p in arm.landmarks(arm.neutral)[1:4])
    far = (shoulder[0] + 3.0, shoulder[1], shoulder[2])
    folded = RecoveryGoal(
        kind=TargetKind.SHAPE, upper=(0.0, 0.0, -1.0), fore=(0.0, 0.0, 1.0), angle=0.0,
        wrist=wrist, elbow=elbow,
    )
    return {
        'wrist out of reach': RecoveryGoal.from_points(TargetKind.POSITION, shoulder, elbow, far),
        'elbow folded flat': folded,
    }


@pytest.mark.parametrize('kind', list(TargetKind))
def test_a_reachable_goal_is_met_within_a_bounded_number_of_warm_started_solves(
    arms, rng, kind
):
    """
    Landmarks of a configuration in the working range, from 0.1 rad away: met within 30 solves.

    Each solve starts from the previous result, as the solvers do frame after frame; the last
    one reports CONVERGED with the residual within the tolerance.
    """
    config = RecoveryConfig()
    for key, arm in arms.items():
        recovery = JointRecovery(arm, config)
        for _ in range(10):
            q_true = inside(arm, rng)
            goal = goal_at(arm, q_true, kind)
            q = q_true + rng.uniform(-0.1, 0.1, arm.dof)
            for _ in range(30):
                result = recovery.recover(q, goal)
                q = result.q
                if result.termination is Termination.CONVERGED:
                    break
            assert result.termination is Termination.CONVERGED, (key, q_true.tolist())
            assert result.residual <= config.tolerance


@settings(
    max_examples=60, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    tolerance=st.floats(1e-6, 1e-2),
    max_iterations=st.integers(1, 12),
    max_step=st.floats(0.01, 1.0),
    comfort=st.sampled_from([0.0, 0.05, 0.5]),
)
def test_the_result_says_truly_why_the_solve_stopped(
    arms, seed, tolerance, max_iterations, max_step, comfort
):
    """
    CONVERGED exactly when the residual is within the tolerance; the residual is the result's.

    Any warm start (even outside the limits), reachable and unreachable goals: the reason is one
    of CONVERGED, STALLED and MAX_ITERATIONS (never UNREACHABLE, a point-solver reason), the
    reported residual is ``residual(result.q)``, and the iterations are within the cap.
    """
    rng = np.random.default_rng(seed)
    config = RecoveryConfig(tolerance=tolerance, max_iterations=max_iterations,
                            max_step=max_step, comfort=comfort)
    for arm in arms.values():
        recovery = JointRecovery(arm, config)
        goals = [goal_at(arm, inside(arm, rng, margin=0.0), kind) for kind in TargetKind]
        goals += list(unreachable_goals(arm).values())
        for goal in goals:
            start = anywhere(arm, rng) if rng.random() < 0.5 else inside(arm, rng, margin=0.0)
            result = recovery.recover(start, goal)
            assert result.termination in (
                Termination.CONVERGED, Termination.STALLED, Termination.MAX_ITERATIONS
            )
            assert (result.termination is Termination.CONVERGED) == (
                result.residual <= tolerance
            ), (result.termination, result.residual)
            assert result.residual == pytest.approx(recovery.residual(result.q, goal), abs=1e-12)
            assert 0 <= result.iterations <= max_iterations


@settings(
    max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32 - 1), step=st.floats(0.01, 0.5))
def test_a_solve_from_any_warm_start_keeps_the_limits_and_the_step_bound(arms, seed, step):
    """
    From a warm start anywhere (outside the limits too) the result is inside the URDF limits.

    Every joint is within ``max_step`` of the clamped warm start, and the joints from the wrist
    landmark on (which do not move the landmarks) keep its value exactly.
    """
    rng = np.random.default_rng(seed)
    config = RecoveryConfig(max_step=step)
    for arm in arms.values():
        recovery = JointRecovery(arm, config)
        fixed = [p for p in range(arm.dof) if p not in recovery.moving_positions]
        for kind in TargetKind:
            start = anywhere(arm, rng)
            goal = goal_at(arm, inside(arm, rng, margin=0.0), kind)
            result = recovery.recover(start, goal)
            clamped = arm.clamp(start)
            assert np.all(np.isfinite(result.q))
            assert np.all(result.q >= arm.lower) and np.all(result.q <= arm.upper)
            assert arm.chain.within_limits(arm.full_q(result.q), tolerance=0.0)
            assert np.all(np.abs(result.q - clamped) <= step + 1e-12)
            np.testing.assert_array_equal(result.q[fixed], clamped[fixed])


def test_the_same_input_gives_the_same_output(arms, rng):
    """Two solves of the same start and goal, by one or two recoveries, agree bit for bit."""
    config = RecoveryConfig()
    for arm in arms.values():
        first = JointRecovery(arm, config)
        for kind in TargetKind:
            start = inside(arm, rng, margin=0.0)
            goal = goal_at(arm, inside(arm, rng), kind)
            kinematics = arm.chain.prefix_positions_and_axes(arm.full_q(start), arm.chain.dof)
            results = [
                first.recover(start, goal),
                first.recover(start.copy(), goal),
                JointRecovery(arm, config).recover(start, goal),
                first.recover(start, goal, kinematics),
            ]
            for result in results[1:]:
                np.testing.assert_array_equal(result.q, results[0].q)
                assert result.residual == results[0].residual
                assert result.iterations == results[0].iterations
                assert result.termination is results[0].termination


@pytest.mark.parametrize('case', ['wrist out of reach', 'elbow folded flat'])
def test_an_unreachable_goal_stops_for_a_stated_reason_inside_the_limits(arms, case):
    """
    Solve after solve towards an unreachable goal: never CONVERGED, never worse, always allowed.

    Each solve starts from the previous result (from the neutral pose) and reports STALLED or
    MAX_ITERATIONS with a residual above the tolerance that is no larger than at its start;
    every result is inside the working range and within ``max_step`` of the previous one.
    """
    config = RecoveryConfig()
    for key, arm in arms.items():
        recovery = JointRecovery(arm, config)
        goal = unreachable_goals(arm)[case]
        q = arm.neutral.copy()
        for _ in range(20):
            before = recovery.residual(q, goal)
            result = recovery.recover(q, goal)
            assert result.termination in (Termination.STALLED, Termination.MAX_ITERATIONS), key
            assert config.tolerance < result.residual <= before + 1e-12, key
            assert np.all(result.q >= arm.work_lower) and np.all(result.q <= arm.work_upper)
            assert np.all(np.abs(result.q - q) <= config.max_step + 1e-12)
            q = result.q


def test_a_warm_start_outside_the_working_range_is_brought_back_within_the_step_bound():
    """An elbow set straighter than the working range moves in, even if the goal is there."""
    arm = load_robot('baxter').arms['left']
    elbow = arm.joint_names.index(arm.spec.elbow)
    q = arm.neutral.copy()
    q[elbow] = arm.lower[elbow]  # inside the URDF limits, outside the working range
    goal = RecoveryGoal.from_points(TargetKind.SHAPE, *(tuple(p) for p in arm.landmarks(q)[1:4]))
    recovery = JointRecovery(arm, RecoveryConfig())

    first = recovery.recover(q, goal).q
    second = recovery.recover(first, goal).q

    bound = RecoveryConfig().max_step
    assert min(arm.work_lower[elbow], q[elbow] + bound) <= first[elbow] <= q[elbow] + bound
    assert arm.work_lower[elbow] <= second[elbow] <= arm.work_upper[elbow]


def test_the_recoverys_kinematics_are_the_chains_hot_path(arms, rng) -> None:
    """The warm start's joint origins and axes, compiled or not, are the chain's own numbers."""
    for arm in arms.values():
        recovery = JointRecovery(arm, RecoveryConfig())
        for _ in range(20):
            q = inside(arm, rng, margin=0.0)
            positions, axes = recovery.kinematics(q)
            reference = arm.chain.prefix_positions_and_axes(arm.full_q(q), arm.chain.dof)
            assert len(positions) == arm.chain.dof + 1 and len(axes) == arm.chain.dof
            np.testing.assert_allclose(positions, reference[0], rtol=0.0, atol=1e-12)
            np.testing.assert_allclose(axes, reference[1], rtol=0.0, atol=1e-12)
