"""
Joint-angle recovery: put the real arm's landmarks on the point-chain solution.

Damped least squares (Levenberg-Marquardt style) over the elbow and wrist landmark targets,
warm-started from the previous solution and projected into the position limits after every
step::

    dq = (J^T W J + lambda^2 I)^-1 J^T W e,    q <- clip(q + dq, lower, upper)

Only the arm joints before the wrist landmark move the landmarks; the joints from the wrist on keep
their warm-start values. The root joint (before the shoulder) is free: it turns the upper arm and
swings the shoulder, and the next frame pins the human shoulder where it went. Every result is
inside the URDF position limits.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Sequence

import numpy as np
import numpy.typing as npt

from pic_ros.robot.arm import ArmModel
from pic_ros.solvers.result import RecoveryResult, Termination
from pic_ros.validation import check_integer, check_number

FloatArray = npt.NDArray[np.float64]
Vector = tuple[float, float, float]


@dataclass(frozen=True)
class RecoveryConfig:
    """
    Settings of the damped least-squares joint recovery.

    :param damping: Damping lambda [m] (larger: smaller, safer steps near singularities).
    :param max_iterations: Cap on least-squares steps per frame.
    :param tolerance: Stop when the weighted landmark error is below this [m].
    :param elbow_weight: Weight of the elbow landmark target.
    :param wrist_weight: Weight of the wrist landmark target.
    """

    damping: float = 0.05
    max_iterations: int = 8
    tolerance: float = 1e-3
    elbow_weight: float = 1.0
    wrist_weight: float = 1.0

    def __post_init__(self) -> None:
        check_number('recovery damping', self.damping, 1e-6, 1.0)
        check_integer('recovery max_iterations', self.max_iterations, 1, 200)
        check_number('recovery tolerance', self.tolerance, 1e-6, 0.1)
        for name in ('elbow_weight', 'wrist_weight'):
            check_number(f'recovery {name}', getattr(self, name), 0.0, 100.0)


class JointRecovery:
    """
    Recover arm joint angles from landmark targets on one arm.

    :param arm: The arm.
    :param config: Recovery settings.
    """

    def __init__(self, arm: ArmModel, config: RecoveryConfig) -> None:
        self.arm = arm
        self.config = config
        count = arm.wrist_index + 1
        self._count = count
        self._moving = [
            (position, index)
            for position, index in enumerate(arm.active)
            if index < arm.wrist_index
        ]
        self._rows = [
            (arm.elbow_index, config.elbow_weight),
            (arm.wrist_index, config.wrist_weight),
        ]
        self._lower = np.array([arm.lower[p] for p, _ in self._moving])
        self._upper = np.array([arm.upper[p] for p, _ in self._moving])
        self._damping = config.damping**2 * np.eye(len(self._moving))

    def _error_and_jacobian(
        self,
        full: Sequence[float],
        targets: Sequence[Vector],
        known: tuple[Sequence[Vector], Sequence[Vector]] | None = None,
    ) -> tuple[list[float], list[list[float]]]:
        if known is None:
            positions, axes = self.arm.chain.prefix_positions_and_axes(full, self._count)
        else:
            positions, axes = known
        error: list[float] = []
        rows: list[list[float]] = []
        for (landmark, weight), target in zip(self._rows, targets):
            px, py, pz = positions[landmark]
            error += [
                weight * (target[0] - px),
                weight * (target[1] - py),
                weight * (target[2] - pz),
            ]
            row_x: list[float] = []
            row_y: list[float] = []
            row_z: list[float] = []
            for _, index in self._moving:
                if index >= landmark:
                    row_x.append(0.0)
                    row_y.append(0.0)
                    row_z.append(0.0)
                    continue
                ax, ay, az = axes[index]
                ox, oy, oz = positions[index]
                rx, ry, rz = px - ox, py - oy, pz - oz
                row_x.append(weight * (ay * rz - az * ry))
                row_y.append(weight * (az * rx - ax * rz))
                row_z.append(weight * (ax * ry - ay * rx))
            rows += [row_x, row_y, row_z]
        return error, rows

    def recover(
        self,
        q_init: npt.ArrayLike,
        targets: Sequence[Vector],
        kinematics: tuple[Sequence[Vector], Sequence[Vector]] | None = None,
    ) -> RecoveryResult:
        """
        Move the arm's landmarks towards their targets.

        :param q_init: Warm start, arm joint order, shape (dof,), inside the limits.
        :param targets: Elbow and wrist targets, base frame [m].
        :param kinematics: Joint origins and axes at ``q_init`` from
            :meth:`~pic_ros.kinematics.chain.KinematicChain.prefix_positions_and_axes` (at least
            up to the wrist landmark), when the caller already has them.
        :return: Joint angles inside the limits, the remaining weighted error and why it stopped.
        """
        q = self.arm.clamp(q_init)
        full = self.arm.full_q(q)
        moving = self._moving
        values = np.array([full[index] for _, index in moving])
        error, rows = self._error_and_jacobian(full, targets, kinematics)
        residual = math.sqrt(sum(e * e for e in error))
        termination = Termination.MAX_ITERATIONS
        iterations = 0
        for iterations in range(1, self.config.max_iterations + 1):
            if residual <= self.config.tolerance:
                termination = Termination.CONVERGED
                iterations -= 1
                break
            jacobian = np.array(rows)
            gradient = jacobian.T @ np.array(error)
            step = np.linalg.solve(jacobian.T @ jacobian + self._damping, gradient)
            candidate = np.minimum(np.maximum(values + step, self._lower), self._upper)
            for (_, index), value in zip(moving, candidate.tolist()):
                full[index] = value
            new_error, new_rows = self._error_and_jacobian(full, targets)
            new_residual = math.sqrt(sum(e * e for e in new_error))
            if new_residual > residual - 1e-7:
                # No progress (a limit or the damping binds): keep the better of the two.
                if new_residual > residual:
                    for (_, index), value in zip(moving, values.tolist()):
                        full[index] = value
                else:
                    values, residual = candidate, new_residual
                termination = Termination.STALLED
                break
            values, error, rows, residual = candidate, new_error, new_rows, new_residual
        else:
            if residual <= self.config.tolerance:
                termination = Termination.CONVERGED
        for (position, _), value in zip(moving, values.tolist()):
            q[position] = value
        return RecoveryResult(
            q=q, residual=residual, iterations=iterations, termination=termination
        )
