"""
The plain-float joint recovery against a straightforward numpy computation of the same steps.

The recovery's forward kinematics, normal equations and bounded solve are written out in plain
floats for speed, and again in loops that numba compiles (:mod:`pic_ros.solvers.recovery_kernel`).
Here every solve of real recordings is computed again from the same warm start and goal by a
reference kept in this file: forward kinematics from the chain's 4 x 4 joint transforms
(:meth:`~pic_ros.robot.kinematics.chain.KinematicChain.joint_origin_transforms`) and the damped
Gauss-Newton step with ``numpy.linalg.solve`` on the active set. The two give the same joint
angles within 1e-9, the same termination and the same number of steps on every solve.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pic_ros.correspondence import MappingConfig
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.solvers import recovery_kernel, SolverConfig
from pic_ros.solvers.recovery import JointRecovery
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import EvaluationSettings, run_imitation
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper import load_paper_demonstration
import pytest

TOLERANCE = 1e-9
"""Largest difference of a recovered joint angle from the reference [rad] or [m]."""


class ReferenceRecovery(JointRecovery):
    """The same recovery with numpy forward kinematics and a numpy linear solve."""

    def __init__(self, arm, config):
        super().__init__(arm, config)
        self._compiled = None  # the Python steps, with the two below replaced

    def _evaluate(self, full, goal, kinematics=None):
        chain = self.arm.chain
        frames = chain.joint_origin_transforms(np.array(full))
        positions, axes = [], []
        for joint in chain.movable_joints[: self._count]:
            frame = frames[joint.name]
            positions.append(tuple(frame[:3, 3].tolist()))
            axes.append(tuple((frame[:3, :3] @ joint.axis).tolist()))
        return super()._evaluate(full, goal, (positions, axes))

    def _step(self, columns, residual, values, low, high, comfort=True, damping=1.0):
        jacobian = np.array(columns[0])
        hessian = jacobian @ jacobian.T
        hessian[np.diag_indices(len(low))] += (self._regular + np.array(columns[1])) * damping
        gradient = jacobian @ np.array(residual)
        if comfort and self._pull:
            gradient += self._pull * np.array(self._comfort_weight) * (
                np.array(values) - np.array(self._comfort)
            )
        low, high = np.array(low), np.array(high)
        held = ((low >= 0.0) & (gradient > 0.0)) | ((high <= 0.0) & (gradient < 0.0))
        step = np.zeros(len(low))
        for _ in range(len(low)):
            step[held] = np.where(gradient[held] > 0.0, low[held], high[held])
            free = ~held
            if not free.any():
                break
            rhs = -gradient[free] - hessian[np.ix_(free, held)] @ step[held]
            step[free] = np.linalg.solve(hessian[np.ix_(free, free)], rhs)
            outside = free & ((step < low) | (step > high))
            if not outside.any():
                break
            held |= outside
        step = np.clip(step, low, high)
        predicted = float(np.linalg.norm(np.array(residual) + step @ jacobian))
        return step.tolist(), predicted


def recorded_solves(monkeypatch, robot, demonstration, solver, correspondence):
    """Run the pipeline and return every recovery call: the recovery, its inputs, its answer."""
    calls = []
    recover = JointRecovery.recover_with_kinematics

    def recording(self, q_init, goal, kinematics=None):
        result, answer = recover(self, q_init, goal, kinematics)
        calls.append((self, np.array(q_init, dtype=float), goal, result))
        return result, answer

    with monkeypatch.context() as patch:
        patch.setattr(JointRecovery, 'recover_with_kinematics', recording)
        run_imitation(
            robot, demonstration, solver,
            EvaluationSettings(mapping=MappingConfig(correspondence=correspondence)),
        )
    return calls


def largest_difference(calls) -> float:
    """Solve every recorded call again (same termination and steps); return the largest gap."""
    references = {}
    worst = 0.0
    for recovery, q_init, goal, result in calls:
        reference = references.setdefault(
            id(recovery), ReferenceRecovery(recovery.arm, recovery.config)
        )
        expected = reference.recover(q_init, goal)
        assert (result.termination, result.iterations) == (
            expected.termination, expected.iterations
        )
        worst = max(worst, float(np.max(np.abs(result.q - expected.q))))
    return worst


@pytest.mark.parametrize('path', ['compiled', 'python'])
@pytest.mark.parametrize('robot_name', shipped_robots())
@pytest.mark.parametrize(
    'solver, correspondence',
    [('pic', 'direction'), ('pic', 'position'), ('fabrik', 'position')],
)
def test_the_faster_recovery_gives_the_reference_joint_angles_on_the_shipped_demo(
    monkeypatch, path, robot_name, solver, correspondence
):
    """
    Every solve of the shipped demo's first 300 frames matches the numpy reference.

    Both ways the recovery runs: the compiled solve (numba) and the plain-float Python steps.
    """
    if path == 'compiled' and not recovery_kernel.load():
        pytest.skip('numba is not installed (or PIC_ROS_JIT=0): only the Python steps run')
    if path == 'python':
        monkeypatch.setattr(recovery_kernel, 'recover', None)
    demo = load_demonstration('demo')
    demonstration = Demonstration.whole(demo.name, demo.frames[:300])
    calls = recorded_solves(
        monkeypatch, load_robot(robot_name), demonstration, SolverConfig(name=solver),
        correspondence,
    )
    assert calls
    assert largest_difference(calls) <= TOLERANCE


@pytest.mark.parametrize('correspondence', ['direction', 'position'])
def test_the_faster_recovery_gives_the_reference_joint_angles_on_a_real_recording(
    monkeypatch, shared_data: Path, correspondence
):
    """Every PIC solve of the real Kinect v2 recording ``assembly1`` matches the reference."""
    folder = shared_data / 'pic_demos'
    if not (folder / 'assembly1_skel.txt').is_file():
        pytest.skip(f'the PIC demonstrations are not in {folder}')
    demonstration = Demonstration.from_paper(load_paper_demonstration(folder, 'assembly1'))
    for robot_name in shipped_robots():
        calls = recorded_solves(
            monkeypatch, load_robot(robot_name), demonstration, SolverConfig(name='pic'),
            correspondence,
        )
        assert calls
        assert largest_difference(calls) <= TOLERANCE, robot_name
