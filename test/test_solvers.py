"""FABRIK / PIC / PICs on the point chain and on the real arms: invariants and properties."""

from __future__ import annotations

import math

from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.correspondence import ArmTargets, TargetKind
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.robot import load_robot
from pic_ros.solvers import IterationConfig, make_solver, solver_names, SolverConfig, Termination
from pic_ros.solvers.iteration import OctantConstraints, solve_point_chain
from pic_ros.solvers.point_chain import PointChain
from pic_ros.solvers.point_imitation import human_octants
import pytest

ROBOTS = ('baxter', 'yumi', 'tiago')
SETTINGS = (('fabrik', 1), ('pic', 1), ('pics', 1), ('pics', 2), ('pics', 3))


@pytest.fixture(scope='module')
def robots():
    """Load the three shipped robots once."""
    return {name: load_robot(name) for name in ROBOTS}


def straight_chain() -> PointChain:
    """Make a chain: root, shoulder at the origin, 0.3 m upper arm and forearm pointing down."""
    return PointChain.from_landmarks(
        [(0.0, 0.0, 0.1), (0.0, 0.0, 0.0), (0.0, 0.0, -0.3), (0.0, 0.0, -0.6), (0.0, 0.0, -0.7)]
    )


def bent_chain() -> PointChain:
    """Make a chain with the elbow bent, forearm forward."""
    return PointChain.from_landmarks(
        [(0.0, 0.0, 0.1), (0.0, 0.0, 0.0), (0.0, 0.0, -0.3), (0.3, 0.0, -0.3), (0.4, 0.0, -0.3)]
    )


def lengths(points: np.ndarray) -> np.ndarray:
    """Return the four link lengths of a solved point array."""
    return np.linalg.norm(np.diff(points, axis=0), axis=1)


def test_registry_lists_the_built_in_solvers():
    """analytic, fabrik, pic and pics are registered; an unknown name is rejected with them."""
    assert {'analytic', 'fabrik', 'pic', 'pics'} <= set(solver_names())
    with pytest.raises(ConfigError, match='unknown solver .*: analytic, fabrik, pic, pics'):
        SolverConfig(name='ccd')
    with pytest.raises(ConfigError, match='pics needs eta in 1..3'):
        SolverConfig(name='pics', eta=0)


def test_fabrik_reaches_a_reachable_target_and_keeps_link_lengths():
    """FABRIK converges to a reachable wrist target; every link keeps its length."""
    chain = bent_chain()
    target = (0.25, 0.2, -0.2)
    result = solve_point_chain(chain, target, IterationConfig(tolerance=1e-4))
    assert result.termination is Termination.CONVERGED
    assert np.linalg.norm(result.points[3] - target) <= 1e-4
    assert np.allclose(lengths(result.points), chain.lengths, atol=1e-9)
    assert np.allclose(result.points[:2], np.array(chain.points[:2]))


def test_fabrik_at_its_own_pose_stops_immediately():
    """A target at the current wrist is already solved: zero passes, nothing moves."""
    chain = bent_chain()
    result = solve_point_chain(chain, chain.points[3], IterationConfig())
    assert result.termination is Termination.CONVERGED
    assert result.iterations == 0
    assert np.allclose(result.points, np.array(chain.points))


def test_unreachable_target_stretches_the_arm_toward_it():
    """A target beyond reach is reported; the wrist ends on the shoulder-target line."""
    chain = bent_chain()
    target = (2.0, 0.0, 0.0)
    config = IterationConfig()
    result = solve_point_chain(chain, target, config)
    assert result.termination is Termination.UNREACHABLE
    wrist = result.points[3]
    assert np.allclose(wrist / np.linalg.norm(wrist), (1.0, 0.0, 0.0), atol=1e-3)
    reach = math.sqrt(0.09 + 0.09 + 0.18 * math.cos(config.min_elbow_bend))
    assert math.isclose(np.linalg.norm(wrist), reach, rel_tol=1e-2)
    assert np.allclose(lengths(result.points), chain.lengths, atol=1e-9)


def test_pic_holds_every_constraint_when_it_reports_converged():
    """A converged PIC solution has both bones in the human's octants."""
    chain = straight_chain()
    # Human: upper arm forward-left-down (octant 7), forearm forward-left-up (octant 3).
    targets = ArmTargets(
        shoulder=np.zeros(3),
        elbow=np.array([0.2, 0.1, -0.2]),
        wrist=np.array([0.45, 0.15, -0.1]),
        kind=TargetKind.POSITION,
        scale=1.0,
    )
    constraints = human_octants(tuple(targets.upper_arm), tuple(targets.forearm))
    assert constraints.octants == (7, 1, 3, 5)
    result = solve_point_chain(chain, tuple(targets.wrist), IterationConfig(), constraints)
    assert result.termination is Termination.CONVERGED
    assert constraints.satisfied_by(tuple(map(tuple, result.points)))


@settings(max_examples=200, deadline=None)
@given(
    target=st.tuples(
        st.floats(-0.7, 0.7, allow_nan=False),
        st.floats(-0.7, 0.7, allow_nan=False),
        st.floats(-0.7, 0.7, allow_nan=False),
    ),
    octants=st.tuples(st.integers(1, 8), st.integers(1, 8)),
    eta=st.integers(0, 3),
)
def test_pic_keeps_lengths_and_reports_converged_only_when_constraints_hold(target, octants, eta):
    """For any target and octants: lengths kept, and CONVERGED implies admissible directions."""
    from pic_ros.solvers.octants import antipode

    upper, fore = octants
    constraints = OctantConstraints(upper, antipode(upper), fore, antipode(fore), eta)
    chain = bent_chain()
    result = solve_point_chain(chain, target, IterationConfig(), constraints)
    assert np.all(np.isfinite(result.points))
    assert np.allclose(lengths(result.points), chain.lengths, atol=1e-9)
    if result.termination is Termination.CONVERGED:
        assert constraints.satisfied_by(tuple(map(tuple, result.points)))
        assert result.residual <= IterationConfig().tolerance
    assert result.iterations <= IterationConfig().max_iterations


def test_pics_eta_three_is_fabrik():
    """With every octant admissible, PICs(η=3) gives FABRIK's answer."""
    chain = bent_chain()
    target = (0.1, -0.3, -0.35)
    constraints = OctantConstraints(1, 7, 1, 7, eta=3)
    pics = solve_point_chain(chain, target, IterationConfig(), constraints)
    fabrik = solve_point_chain(chain, target, IterationConfig())
    assert np.allclose(pics.points, fabrik.points)
    assert pics.termination is fabrik.termination


def arm_targets(arm, upper, fore, kind=TargetKind.POSITION):
    """Place a human arm with the given bone vectors on an arm's neutral shoulder."""
    shoulder = arm.landmarks(arm.neutral)[1]
    return ArmTargets(
        shoulder=shoulder,
        elbow=shoulder + np.asarray(upper, dtype=float),
        wrist=shoulder + np.asarray(upper, dtype=float) + np.asarray(fore, dtype=float),
        kind=kind,
        scale=1.0 if kind is TargetKind.POSITION else None,
    )


vectors = st.tuples(
    st.floats(-0.6, 0.6, allow_nan=False, allow_infinity=False),
    st.floats(-0.6, 0.6, allow_nan=False, allow_infinity=False),
    st.floats(-0.6, 0.6, allow_nan=False, allow_infinity=False),
)


@pytest.mark.parametrize('robot_name', ROBOTS)
@pytest.mark.parametrize(('solver', 'eta'), SETTINGS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(upper=vectors, fore=vectors)
def test_arm_solutions_are_finite_inside_limits_and_repeatable(
    robots, robot_name, solver, eta, upper, fore
):
    """Random, degenerate and out-of-reach human arms give finite angles inside the limits."""
    robot = robots[robot_name]
    config = SolverConfig(name=solver, eta=eta)
    for arm in robot.arms.values():
        targets = arm_targets(arm, upper, fore)
        first = make_solver(arm, config)
        second = make_solver(arm, config)
        result = first.solve(targets)
        again = second.solve(targets)
        assert np.all(np.isfinite(result.q))
        assert np.all(result.q >= arm.lower - 1e-12) and np.all(result.q <= arm.upper + 1e-12)
        assert np.array_equal(result.q, again.q)
        assert isinstance(result.termination, Termination)


@pytest.mark.parametrize('robot_name', ROBOTS)
@pytest.mark.parametrize(
    'case',
    ['coincident_joints', 'zero_forearm', 'straight_arm', 'far_out_of_reach'],
)
def test_degenerate_arms_are_solved_not_raised(robots, robot_name, case):
    """Coincident joints, straight arms and far targets give a limited, finite solution."""
    bones = {
        'coincident_joints': ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
        'zero_forearm': ((0.0, 0.0, -0.3), (0.0, 0.0, 0.0)),
        'straight_arm': ((0.3, 0.0, 0.0), (0.3, 0.0, 0.0)),
        'far_out_of_reach': ((3.0, 0.0, 0.0), (3.0, 0.0, 0.0)),
    }[case]
    for arm in robots[robot_name].arms.values():
        for solver in ('fabrik', 'pic', 'pics'):
            result = make_solver(arm, SolverConfig(name=solver)).solve(arm_targets(arm, *bones))
            assert np.all(np.isfinite(result.q))
            assert arm.chain.within_limits(arm.full_q(result.q))
    if case == 'far_out_of_reach':
        assert result.termination is Termination.UNREACHABLE


@pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf])
def test_non_finite_targets_are_a_documented_input_error(robots, bad):
    """Non-finite targets raise SkeletonError (the frame is dropped), never anything else."""
    arm = robots['baxter'].arms['left']
    targets = arm_targets(arm, (0.0, 0.0, -0.3), (0.3, 0.0, 0.0))
    broken = ArmTargets(targets.shoulder, targets.elbow, np.array([bad, 0.0, 0.0]))
    solver = make_solver(arm, SolverConfig(name='pic'))
    before = solver.q
    with pytest.raises(SkeletonError, match='wrist target must be a finite 3-vector'):
        solver.solve(broken)
    assert np.array_equal(solver.q, before)


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_pic_solution_follows_the_human_bone_octants_on_the_real_arm(robots, robot_name):
    """For a comfortable pose, PIC puts the real upper arm and forearm in the human's octants."""
    robot = robots[robot_name]
    for arm in robot.arms.values():
        sign = 1.0 if arm.side.value == 'left' else -1.0
        upper = np.array([0.15, 0.1 * sign, -0.3])
        fore = np.array([0.3, 0.05 * sign, 0.05])
        targets = arm_targets(arm, upper, fore)
        solver = make_solver(arm, SolverConfig(name='pic'))
        for _ in range(30):
            result = solver.solve(targets)
        landmarks = arm.landmarks(result.q)
        robot_upper = landmarks[2] - landmarks[1]
        robot_fore = landmarks[3] - landmarks[2]
        cos_upper = robot_upper @ upper / np.linalg.norm(robot_upper) / np.linalg.norm(upper)
        cos_fore = robot_fore @ fore / np.linalg.norm(robot_fore) / np.linalg.norm(fore)
        assert cos_upper > math.cos(math.radians(35)), f'{robot_name} {arm.name} upper arm'
        assert cos_fore > math.cos(math.radians(35)), f'{robot_name} {arm.name} forearm'


def test_warm_start_is_kept_and_reset_goes_back_to_neutral(robots):
    """A solver keeps its last solution as warm start; reset() returns to the neutral pose."""
    arm = robots['yumi'].arms['right']
    solver = make_solver(arm, SolverConfig(name='fabrik'))
    result = solver.solve(arm_targets(arm, (0.1, -0.1, -0.2), (0.2, 0.0, 0.0)))
    assert np.array_equal(solver.q, result.q)
    solver.reset()
    assert np.array_equal(solver.q, arm.neutral)
    with pytest.raises(SkeletonError):
        solver.reset([0.0, 1.0])
