"""
The analytic solve compiled by numba against the same functions run by Python.

:mod:`pic_ros.solvers.analytic_kernel` is one source for both paths. Every compiled solve is
computed again by the plain functions (interpreted, on the geometry and frame as lists, as
without numba) from the same warm start and targets: the same joint angles within 1e-9, the same
termination, the same number of passes and the same residual, on real recordings and on random
walks that keep running into the limits and the straight-arm singularities.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from pic_ros.correspondence import MappingConfig, TargetKind
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.solvers import analytic_kernel, make_solver, SolverConfig
from pic_ros.solvers.analytic import AnalyticSolver
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import EvaluationSettings, run_imitation
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper import load_paper_demonstration
import pytest

TOLERANCE = 1e-9
"""Largest difference of a joint angle [rad] or residual [m] from the Python path's."""

WALK_STEPS = 400
"""Targets per arm in the random walk."""


@pytest.fixture(autouse=True)
def _compiled() -> None:
    if not analytic_kernel.load():
        pytest.skip('numba is not installed (or PIC_ROS_JIT=0): only the Python path runs')


def recorded_solves(monkeypatch, solve):
    """Run ``solve()`` and return every analytic solve: the solver, its inputs, its answer."""
    calls = []
    original = AnalyticSolver._solve_bones

    def recording(self, upper_bone, fore_bone, q):
        before = list(q)
        result = original(self, upper_bone, fore_bone, q)
        calls.append((self, self.geometry, upper_bone, fore_bone, before, result))
        return result

    with monkeypatch.context() as patch:
        patch.setattr(AnalyticSolver, '_solve_bones', recording)
        solve()
    return calls


def largest_difference(monkeypatch, calls) -> float:
    """Solve every recorded call again with the plain functions; return the largest gap."""
    worst = 0.0
    with monkeypatch.context() as patch:
        for name, function in analytic_kernel.PLAIN_FUNCTIONS.items():
            patch.setattr(analytic_kernel, name, function)
        for solver, geometry, upper_bone, fore_bone, before, result in calls:
            # the geometry the solve had (a later warm start may have measured the arm again)
            kept = solver._geometry, solver._frame, solver._compiled
            solver._frame, solver._compiled = kept[1].tolist(), False
            solver._geometry = geometry
            try:
                expected = solver._solve_bones(upper_bone, fore_bone, list(before))
            finally:
                solver._geometry, solver._frame, solver._compiled = kept
            assert (result.termination, result.iterations) == (
                expected.termination, expected.iterations
            ), (upper_bone, fore_bone, before)
            worst = max(worst, float(np.max(np.abs(result.q - expected.q))),
                        abs(result.residual - expected.residual))
    return worst


def imitation(robot_name: str, demonstration: Demonstration):
    """Return a call running the analytic imitation of ``demonstration`` on the robot."""
    return lambda: run_imitation(
        load_robot(robot_name), demonstration, SolverConfig(name='analytic'),
        EvaluationSettings(mapping=MappingConfig(correspondence='direction')),
    )


@pytest.mark.parametrize('robot_name', shipped_robots())
def test_the_compiled_analytic_solve_gives_the_python_joint_angles_on_the_shipped_demo(
    monkeypatch, robot_name
):
    """Every analytic solve of the shipped demo matches the Python path."""
    demo = load_demonstration('demo')
    calls = recorded_solves(monkeypatch, imitation(robot_name, Demonstration.whole(
        demo.name, demo.frames
    )))
    assert all(solver._compiled for solver, *_ in calls)
    assert len(calls) >= len(demo.frames)
    assert largest_difference(monkeypatch, calls) <= TOLERANCE


def test_the_compiled_analytic_solve_gives_the_python_joint_angles_on_a_real_recording(
    monkeypatch, shared_data: Path
):
    """Every analytic solve of the real Kinect v2 recording ``assembly1`` matches."""
    folder = shared_data / 'pic_demos'
    if not (folder / 'assembly1_skel.txt').is_file():
        pytest.skip(f'the PIC demonstrations are not in {folder}')
    demonstration = Demonstration.from_paper(load_paper_demonstration(folder, 'assembly1'))
    for robot_name in shipped_robots():
        calls = recorded_solves(monkeypatch, imitation(robot_name, demonstration))
        assert calls
        assert largest_difference(monkeypatch, calls) <= TOLERANCE, robot_name


@pytest.mark.parametrize('robot_name', shipped_robots())
def test_the_compiled_analytic_solve_gives_the_python_joint_angles_on_a_rough_random_walk(
    monkeypatch, robot_name
):
    """
    Random bone directions that wander, jump, straighten and vanish: still the same answers.

    Each step turns the previous directions by up to 0.6 rad, one step in ten jumps anywhere,
    one in eight makes the arm straight and one in fifty gives a bone of no length; the
    solutions keep running into the step bound, the working range and the singular poses.
    """
    rng = np.random.default_rng(17)
    robot = load_robot(robot_name)

    def walk() -> None:
        for arm in robot.arms.values():
            solver = make_solver(arm, SolverConfig(name='analytic'))
            shoulder = arm.landmarks(arm.neutral)[1]
            upper, fore = np.array([0.0, 0.0, -1.0]), np.array([1.0, 0.0, 0.0])
            for step in range(WALK_STEPS):
                if step % 10 == 9:
                    upper, fore = rng.normal(size=3), rng.normal(size=3)
                else:
                    upper = upper / np.linalg.norm(upper) + 0.35 * rng.normal(size=3)
                    fore = fore / np.linalg.norm(fore) + 0.35 * rng.normal(size=3)
                if step % 8 == 7:
                    fore = upper * (1.0 + 1e-7 * rng.normal())
                elbow = shoulder + 0.3 * upper / np.linalg.norm(upper)
                wrist = elbow + 0.25 * fore / np.linalg.norm(fore)
                if step % 50 == 49:
                    wrist = elbow.copy()
                result = solver.solve(ArmTargets(shoulder, elbow, wrist, TargetKind.SHAPE))
                assert np.all(np.isfinite(result.q))

    calls = recorded_solves(monkeypatch, walk)
    assert len(calls) == WALK_STEPS * len(robot.arms)
    terminations = {result.termination for *_, result in calls}
    assert len(terminations) >= 2
    assert largest_difference(monkeypatch, calls) <= TOLERANCE
    assert not math.isnan(calls[-1][-1].residual)
