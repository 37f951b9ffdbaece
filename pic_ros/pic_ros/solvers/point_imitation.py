"""
FABRIK, PIC and PICs(η) as arm solvers: point-chain solve, then joint recovery on the URDF chain.

Per frame and arm:

1. the mapped human arm (:class:`~pic_ros.correspondence.targets.ArmTargets`) is read against the
   arm where it is now: ``SHAPE`` targets (the ``direction`` correspondence) are pinned to the
   robot's shoulder landmark where the joint before it has swung it; ``POSITION`` targets keep
   their place in the base frame;
2. the point chain (root, shoulder, elbow, wrist, tool, at the arm's real landmark distances)
   starts along the human's upper-arm and forearm directions -- not at the previous frame's
   chain, as the PIC authors' code does: continuity is the joint recovery's job (step 5), and a
   chain carried over from frame to frame would carry the previous frame's elbow swivel along
   with it;
3. the human's four octants are read from the human bone directions (PIC / PICs only);
4. the backward-forward loop of :mod:`pic_ros.solvers.iteration` moves the wrist to its target:
   with ``SHAPE`` targets the starting chain already is the human's shape, so it stops at once
   (0 passes); with ``POSITION`` targets FABRIK reaches the scaled wrist with as little change
   of the human's shape as FABRIK's passes give, and PIC / PICs do so inside the octants;
5. the joint recovery (:mod:`pic_ros.solvers.recovery`) finds the joint angles whose landmarks
   reproduce the solved points -- or the closest shape the joint limits allow -- from the
   previous solution, within a per-solve step bound.

The human octants are the sign octants of the link directions in the robot base frame:
shoulder-OUT is the octant of shoulder->elbow and elbow-IN its antipode (the same bone seen from
the other end); elbow-OUT is the octant of elbow->wrist and wrist-IN its antipode (the paper's
intended rule, ``docs/method.md#human-octants-per-frame``). The octant hysteresis band is also
the octants' membership slack, so the human's own bones always satisfy the octants read from
them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy.typing as npt
from pic_ros.correspondence.targets import ArmTargets, TargetKind
from pic_ros.robot.arm import ArmModel
from pic_ros.skeleton import MIN_BONE_LENGTH
from pic_ros.solvers.base import ArmSolver, register_solver, SolverConfig
from pic_ros.solvers.iteration import OctantConstraints, solve_point_chain
from pic_ros.solvers.octants import antipode, MEMBERSHIP_TOLERANCE, octant_with_hysteresis
from pic_ros.solvers.point_chain import (
    add_scaled,
    as_vector,
    norm,
    PointChain,
    sub,
    unit,
    Vector,
)
from pic_ros.solvers.recovery import JointRecovery, RecoveryGoal
from pic_ros.solvers.result import ArmSolveResult, FloatArray

_DOWN: Vector = (0.0, 0.0, -1.0)


def human_octants(
    upper: Vector,
    fore: Vector,
    eta: int = 0,
    previous: OctantConstraints | None = None,
    hysteresis: float = 0.0,
) -> OctantConstraints:
    """
    Read the PIC constraints off a mapped human arm.

    :param upper: Human shoulder -> elbow vector, robot base-frame axes, any length.
    :param fore: Human elbow -> wrist vector, robot base-frame axes, any length.
    :param eta: PICs softening factor η, 0..3.
    :param previous: The previous frame's constraints, for the hysteresis.
    :param hysteresis: Dead band on unit-direction components before an octant flips
        (:func:`~pic_ros.solvers.octants.octant_with_hysteresis`); 0 reads the plain sign octants.
        It is also the constraints' membership slack.
    :return: The four octants; a bone shorter than 1 mm carries no constraint.
    """
    upper_length = norm(upper)
    fore_length = norm(fore)
    shoulder_out = octant_with_hysteresis(
        unit(upper, _DOWN), previous.shoulder_out if previous else 0, hysteresis
    )
    elbow_out = octant_with_hysteresis(
        unit(fore, _DOWN), previous.elbow_out if previous else 0, hysteresis
    )
    return OctantConstraints(
        shoulder_out=shoulder_out,
        elbow_in=antipode(shoulder_out),
        elbow_out=elbow_out,
        wrist_in=antipode(elbow_out),
        eta=eta,
        upper_arm=upper_length >= MIN_BONE_LENGTH,
        forearm=fore_length >= MIN_BONE_LENGTH,
        tolerance=max(hysteresis, MEMBERSHIP_TOLERANCE),
    )


class PointChainSolver(ArmSolver):
    """
    Shared body of FABRIK, PIC and PICs.

    :param arm: The arm.
    :param config: Solver settings.
    """

    def __init__(self, arm: ArmModel, config: SolverConfig) -> None:
        super().__init__(arm, config)
        self._recovery = JointRecovery(arm, config.recovery)
        # The joint values of the last answer with the chain's joint origins and axes there:
        # the next frame starts from that answer unless someone reset the warm start.
        self._kept: tuple[list[float], tuple[Sequence[Vector], Sequence[Vector]]] | None = None

    def constraints(self, upper: Vector, fore: Vector) -> OctantConstraints | None:
        """
        Return the octant constraints for a frame (``None`` for an unconstrained solver).

        :param upper: Human shoulder -> elbow vector, base-frame axes.
        :param fore: Human elbow -> wrist vector, base-frame axes.
        :return: The constraints, or ``None``.
        """
        del upper, fore  # Unused: FABRIK has no constraints.
        return None

    def _kinematics(
        self, q: FloatArray
    ) -> tuple[list[Vector], tuple[Sequence[Vector], Sequence[Vector]]]:
        """Return the landmarks and the chain's joint origins and axes at the warm start."""
        kept = self._kept
        if kept is not None and kept[0] == q.tolist():
            positions, axes = kept[1]
        else:  # a warm start set from outside (the avoidance's answer, a reset)
            positions, axes = self._recovery.kinematics(q)
        arm = self.arm
        landmarks = [
            positions[arm.root_index], positions[arm.shoulder_index],
            positions[arm.elbow_index], positions[arm.wrist_index], positions[-1],
        ]
        return landmarks, (positions, axes)

    def _solve(self, targets: ArmTargets, q_previous: FloatArray) -> ArmSolveResult:
        landmarks, kinematics = self._kinematics(q_previous)
        now = PointChain.from_landmarks(landmarks)
        human_shoulder, human_elbow, human_wrist = (
            as_vector(point) for point in (targets.shoulder, targets.elbow, targets.wrist)
        )
        root, shoulder = now.points[0], now.points[1]
        shape = targets.kind is TargetKind.SHAPE
        upper = sub(human_elbow, human_shoulder)
        fore = sub(human_wrist, human_elbow)
        # Start along the human's bone directions, at the arm's own landmark distances.
        _, upper_length, fore_length, tool_length = now.lengths
        upper_unit = unit(upper, _DOWN)
        fore_unit = unit(fore, _DOWN)
        elbow = add_scaled(shoulder, upper_unit, upper_length)
        wrist = add_scaled(elbow, fore_unit, fore_length)
        chain = PointChain(
            points=(root, shoulder, elbow, wrist, add_scaled(wrist, fore_unit, tool_length)),
            lengths=now.lengths,
        )
        # SHAPE targets follow the shoulder where it is now: their wrist is the chain's own.
        # POSITION targets keep their place in the base frame.
        target = wrist if shape else human_wrist
        constraints = self.constraints(upper, fore)
        point = solve_point_chain(chain, target, self.config.iteration, constraints)
        solved = point.points
        _, _, solved_elbow, solved_wrist, _ = solved.tolist()
        goal = RecoveryGoal.from_points(
            targets.kind, shoulder, tuple(solved_elbow), tuple(solved_wrist)
        )
        recovery, answer = self._recovery.recover_with_kinematics(q_previous, goal, kinematics)
        whole = len(answer[0]) == self.arm.chain.dof + 1
        self._kept = (recovery.q.tolist(), answer) if whole else None
        return ArmSolveResult(
            q=recovery.q,
            points=solved,
            termination=point.termination,
            iterations=point.iterations,
            residual=point.residual,
            recovery=recovery,
            octants=None if constraints is None else constraints.octants,
        )


@register_solver('fabrik')
class FabrikSolver(PointChainSolver):
    """FABRIK (Aristidou & Lasenby 2011): the unconstrained baseline on the point chain."""


@register_solver('pic', 'pics')
class PicSolver(PointChainSolver):
    """PIC (η = 0) and PICs(η) of Gonzalez & Wachs: octant-constrained FABRIK."""

    def __init__(self, arm: ArmModel, config: SolverConfig) -> None:
        super().__init__(arm, config)
        self._previous: OctantConstraints | None = None

    def reset(self, q: npt.ArrayLike | None = None) -> None:
        """
        Set the warm start and forget the previous octants.

        :param q: Arm joint values; default the neutral pose.
        """
        super().reset(q)
        self._previous = None

    def continue_from(self, q: npt.ArrayLike) -> None:
        """
        Set the warm start and keep the previous octants (see :meth:`ArmSolver.continue_from`).

        :param q: Arm joint values, arm order [rad] or [m]; clamped into the limits.
        """
        previous = self._previous
        super().continue_from(q)
        self._previous = previous

    def adopt(self, other: ArmSolver) -> None:
        """
        Keep another PIC/PICs solver's previous octants (see :meth:`ArmSolver.adopt`).

        :param other: The solver being replaced.
        """
        if isinstance(other, PicSolver):
            self._previous = other._previous

    def constraints(self, upper: Vector, fore: Vector) -> OctantConstraints:
        """
        Return the human's octants (with hysteresis), softened by η for PICs.

        :param upper: Human shoulder -> elbow vector, base-frame axes.
        :param fore: Human elbow -> wrist vector, base-frame axes.
        :return: The constraints.
        """
        eta = self.config.eta if self.config.name == 'pics' else 0
        self._previous = human_octants(
            upper, fore, eta, self._previous, self.config.octant_hysteresis
        )
        return self._previous
