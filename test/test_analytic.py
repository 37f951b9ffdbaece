"""
The analytic solver against forward kinematics, on every shipped arm.

Exact directions where the closed form applies, limits, continuity, determinism and the reasons
it gives.
"""

from __future__ import annotations

from dataclasses import replace
import json
import math

import numpy as np
from pic_ros.correspondence import TargetKind
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.exceptions import ConfigError
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.robot.arm import ArmModel
from pic_ros.solvers import (
    make_solver,
    RecoveryConfig,
    solver_names,
    SolverConfig,
    Termination,
)
from pic_ros.solvers.analytic import AnalyticSolver, solved_joints
from pic_ros_tools.cli import main
from pic_ros_tools.evaluation import eta_label
from pic_ros_tools.metrics import jump_frames
import pytest

ARMS = [(robot, arm) for robot in shipped_robots() for arm in load_robot(robot).spec.arms]
ARM_IDS = [f'{robot}-{arm}' for robot, arm in ARMS]
FREE_STEP = SolverConfig(name='analytic', recovery=RecoveryConfig(max_step=2.0 * math.pi))
"""The analytic solver without the per-solve step bound (a pose is solved in one go)."""

POSES = 120
"""Random poses per arm."""

SINGULAR = 0.3
"""Poses closer than this (sine of the angle) to a singularity of the closed form are skipped."""


@pytest.fixture(scope='module')
def arms() -> dict[tuple[str, str], ArmModel]:
    """Load every shipped arm once."""
    return {(robot, arm): load_robot(robot).arms[arm] for robot, arm in ARMS}


def unit(v: np.ndarray) -> np.ndarray:
    """Return ``v`` normalised."""
    return v / np.linalg.norm(v)


def sine(a: np.ndarray, b: np.ndarray) -> float:
    """Return the sine of the angle between two vectors."""
    return float(np.linalg.norm(np.cross(unit(a), unit(b))))


def bones(arm: ArmModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the unit upper-arm and forearm landmark directions (FK), base frame."""
    points = arm.landmarks(q)
    return unit(points[2] - points[1]), unit(points[3] - points[2])


def targets_of(arm: ArmModel, upper: np.ndarray, fore: np.ndarray) -> ArmTargets:
    """Return SHAPE targets with these bone directions at the arm's neutral shoulder."""
    shoulder = arm.landmarks(arm.neutral)[1]
    elbow = shoulder + 0.3 * unit(upper)
    return ArmTargets(shoulder, elbow, elbow + 0.25 * unit(fore), TargetKind.SHAPE)


def fk_residual(arm: ArmModel, q: np.ndarray, upper: np.ndarray, fore: np.ndarray) -> float:
    """Return ``sqrt(L_u^2 |du|^2 + L_f^2 |df|^2)`` of a solution, by forward kinematics [m]."""
    neutral = arm.landmarks(arm.neutral)
    lengths = np.linalg.norm(np.diff(neutral[1:4], axis=0), axis=1)
    got_upper, got_fore = bones(arm, q)
    return float(np.hypot(lengths[0] * np.linalg.norm(got_upper - unit(upper)),
                          lengths[1] * np.linalg.norm(got_fore - unit(fore))))


def regular_pose(arm: ArmModel, solver: AnalyticSolver, rng: np.random.Generator) -> np.ndarray:
    """
    Draw arm joint values well inside the working range, away from the singular poses.

    Singular for the closed form: the root axis along the vector it aims, or a straight arm (the
    roll undefined).
    """
    positions = [arm.joint_names.index(arm.chain.joint_names[i]) for i in solved_joints(arm)]
    root, _, roll, _ = solved_joints(arm)
    while True:
        q = arm.neutral.copy()
        for position in positions:
            low = max(arm.work_lower[position], -math.pi) + 0.15
            high = min(arm.work_upper[position], math.pi) - 0.15
            q[position] = rng.uniform(low, high)
        _, axes = arm.chain.positions_and_axes(arm.full_q(q))
        upper, fore = bones(arm, q)
        if solver.geometry.elbow_first:
            aims = ((axes[root], axes[roll]), (upper, fore))
        else:
            aims = ((axes[root], upper), (axes[roll], fore))
        if all(sine(a, b) >= SINGULAR for a, b in aims):
            return q


@pytest.mark.parametrize(('robot', 'arm_name'), ARMS, ids=ARM_IDS)
def test_analytic_solve_reproduces_the_bone_directions_of_random_poses(
    arms, rng, robot, arm_name
):
    """
    Joint angles inside the limits -> FK -> bone directions -> solve -> FK: the same directions.

    Exact (to rounding) where the roll axis passes through the shoulder or the elbow landmark
    (Baxter, NAO); within the tolerance where it misses both (TIAGo by 1.5 mm, YuMi), from a warm
    start within 0.3 rad, as in tracking. The reported residual is the one FK measures.
    """
    arm = arms[(robot, arm_name)]
    solver = make_solver(arm, FREE_STEP)
    assert isinstance(solver, AnalyticSolver)
    positions = [arm.joint_names.index(arm.chain.joint_names[i]) for i in solved_joints(arm)]
    tolerance = FREE_STEP.iteration.tolerance
    for _ in range(POSES):
        q = regular_pose(arm, solver, rng)
        start = q.copy()
        start[positions] += rng.uniform(-0.3, 0.3, len(positions))
        solver.reset(np.clip(start, arm.work_lower, arm.work_upper))
        upper, fore = bones(arm, q)
        result = solver.solve(targets_of(arm, upper, fore))
        measured = fk_residual(arm, result.q, upper, fore)
        assert result.residual == pytest.approx(measured, abs=1e-9)
        assert result.termination is Termination.CONVERGED, (q.tolist(), result)
        assert result.residual <= tolerance
        if solver.geometry.exact:
            assert measured < 1e-9
            assert result.iterations == 1


@pytest.mark.parametrize(('robot', 'arm_name'), ARMS, ids=ARM_IDS)
def test_analytic_stays_in_the_working_range_and_never_jumps(arms, rng, robot, arm_name):
    """
    Any bone directions, reachable or not, moving fast: inside the limits, within max_step.

    The solved joints stay inside the arm's working range (the other solvers' range: the URDF
    limits with the elbow stopped at straight), the others keep their values, no joint moves by
    more than the recovery's max_step in one solve, so no frame is a jump frame.
    """
    arm = arms[(robot, arm_name)]
    config = SolverConfig(name='analytic')
    solver = make_solver(arm, config)
    positions = [arm.joint_names.index(arm.chain.joint_names[i]) for i in solved_joints(arm)]
    upper, fore = rng.normal(size=3), rng.normal(size=3)
    solutions = [solver.q]
    for _ in range(400):
        upper = upper + rng.normal(0.0, 0.4, 3)
        fore = fore + rng.normal(0.0, 0.4, 3)
        result = solver.solve(targets_of(arm, upper, fore))
        q = result.q
        assert np.all(arm.lower <= q) and np.all(q <= arm.upper)
        assert np.all(arm.work_lower[positions] <= q[positions])
        assert np.all(q[positions] <= arm.work_upper[positions])
        held = [p for p in range(arm.dof) if p not in positions]
        np.testing.assert_array_equal(q[held], arm.neutral[held])
        assert np.max(np.abs(q - solutions[-1])) <= config.recovery.max_step + 1e-12
        assert result.residual == pytest.approx(fk_residual(arm, q, upper, fore), abs=1e-9)
        assert (result.termination is Termination.CONVERGED) == (
            result.residual <= config.iteration.tolerance
        )
        solutions.append(q)
    assert not np.any(jump_frames(np.array(solutions)))


def test_analytic_gives_the_same_answer_to_the_same_input(arms, rng):
    """Two solvers, the same targets frame after frame: identical joint angles."""
    for robot, arm_name in ARMS:
        arm = arms[(robot, arm_name)]
        frames = [targets_of(arm, rng.normal(size=3), rng.normal(size=3)) for _ in range(50)]
        first, second = make_solver(arm, FREE_STEP), make_solver(arm, FREE_STEP)
        for targets in frames:
            np.testing.assert_array_equal(first.solve(targets).q, second.solve(targets).q)


def test_analytic_says_why_it_stopped(arms):
    """Converged on a reachable pose; stalled, with the residual, where a limit binds."""
    arm = arms[('baxter', 'left')]
    solver = make_solver(arm, FREE_STEP)
    q = arm.neutral.copy()
    q[:4] = (0.3, -0.5, -0.8, 1.2)
    result = solver.solve(targets_of(arm, *bones(arm, q)))
    assert result.termination is Termination.CONVERGED
    assert (result.residual, result.iterations) == (0.0, 1)
    assert result.points is None and result.recovery is None and result.octants is None
    # Straight down with the elbow bent forward: Baxter's s1 stops 0.5 rad short of it.
    result = solver.solve(targets_of(arm, np.array([0.0, 0.0, -1.0]), np.array([1.0, 0.0, 0.0])))
    assert result.termination is Termination.STALLED
    assert result.residual > FREE_STEP.iteration.tolerance
    assert result.q[1] == pytest.approx(arm.work_upper[1])


def test_analytic_refuses_an_arm_without_one_joint_between_shoulder_and_elbow():
    """Baxter with e0 as the shoulder landmark: no roll joint left, a ConfigError says so."""
    robot = load_robot('baxter')
    spec = replace(robot.spec.arms['left'], shoulder='left_e0')
    arm = ArmModel.build(robot.model, robot.base_frame, spec, robot.spec.locked_joints)
    with pytest.raises(ConfigError) as error:
        make_solver(arm, SolverConfig(name='analytic'))
    assert str(error.value) == (
        "arm 'left': the analytic solver needs exactly one joint (the upper-arm roll) between "
        'the shoulder landmark left_e0 and the elbow landmark left_e1; the chain has 0'
    )


def test_analytic_is_a_registered_solver_of_every_command(capsys):
    """``--solver all`` runs the paper's five settings and analytic, which has no η."""
    assert 'analytic' in solver_names()
    assert eta_label(SolverConfig(name='analytic')) is None
    status = main(['evaluate', '--recording', 'demo', '--robot', 'nao', '--solver', 'all',
                   '--json'])
    out = capsys.readouterr().out
    assert status == 0
    assert '"solver": "analytic", "eta": null' in out
    for setting in ('"fabrik"', '"pic"', '"pics", "eta": 3'):
        assert f'"solver": {setting}' in out


def test_bench_times_the_analytic_solver_without_ikpy(capsys):
    """``bench --solver analytic --ikpy-frames 0``: a timing row per robot, no ikpy rows."""
    status = main(['bench', '--recording', 'demo', '--robot', 'nao', '--solver', 'analytic',
                   '--ikpy-frames', '0', '--json'])
    result = json.loads(capsys.readouterr().out)
    assert status == 0
    assert result['ikpy'] == []
    (row,) = result['solvers']
    assert (row['robot'], row['solver'], row['eta']) == ('nao', 'analytic', None)
    assert row['arm_solves'] > 1000 and 0.0 < row['ms_p50'] <= row['ms_p99']
