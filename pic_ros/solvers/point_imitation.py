"""
FABRIK, PIC and PICs(η) as arm solvers: point-chain solve, then joint recovery on the URDF chain.

Per frame and arm:

1. the point chain (root, shoulder, elbow, wrist, tool) is read off the real arm at the warm
   start, so it has the arm's real landmark distances;
2. the mapped human arm is pinned to the robot's shoulder landmark where it is now (the mapping
   places it at the neutral shoulder; the root joint moves the shoulder a little, up to 13 cm on
   TIAGo, and the human arm goes with it);
3. the human's four octants are read from the mapped human link directions (PIC / PICs only);
4. the backward-forward loop of :mod:`pic_ros.solvers.iteration` moves the wrist to its target;
5. damped least squares (:mod:`pic_ros.solvers.recovery`) puts the real elbow and wrist landmarks
   on the solved points, inside the joint limits.

The human octants are the sign octants of the link directions in the robot base frame:
shoulder-OUT is the octant of shoulder->elbow and elbow-IN its antipode (the same bone seen from
the other end); elbow-OUT is the octant of elbow->wrist and wrist-IN its antipode (the paper's
intended rule, ``docs/pic_method.md`` §5.2).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from pic_ros.human.skeleton import MIN_BONE_LENGTH
from pic_ros.mapping import ArmTargets
from pic_ros.robot.arm import ArmModel
from pic_ros.solvers.base import ArmSolver, register_solver, SolverConfig
from pic_ros.solvers.iteration import OctantConstraints, solve_point_chain
from pic_ros.solvers.octants import antipode, octant_with_hysteresis
from pic_ros.solvers.point_chain import as_vector, PointChain
from pic_ros.solvers.recovery import JointRecovery
from pic_ros.solvers.result import ArmSolveResult, FloatArray


def human_octants(
    targets: ArmTargets,
    eta: int = 0,
    previous: OctantConstraints | None = None,
    hysteresis: float = 0.0,
) -> OctantConstraints:
    """
    Read the PIC constraints off a mapped human arm.

    :param targets: Mapped human shoulder, elbow and wrist, robot base frame [m].
    :param eta: PICs softening factor η, 0..3.
    :param previous: The previous frame's constraints, for the hysteresis.
    :param hysteresis: Dead band on unit-direction components before an octant flips
        (:func:`~pic_ros.solvers.octants.octant_with_hysteresis`); 0 reads the plain sign octants.
    :return: The four octants; a bone shorter than 1 mm carries no constraint.
    """
    upper = targets.elbow - targets.shoulder
    fore = targets.wrist - targets.elbow
    upper_length = float(np.linalg.norm(upper))
    fore_length = float(np.linalg.norm(fore))
    shoulder_out = octant_with_hysteresis(
        upper / max(upper_length, 1e-12), previous.shoulder_out if previous else 0, hysteresis
    )
    elbow_out = octant_with_hysteresis(
        fore / max(fore_length, 1e-12), previous.elbow_out if previous else 0, hysteresis
    )
    return OctantConstraints(
        shoulder_out=shoulder_out,
        elbow_in=antipode(shoulder_out),
        elbow_out=elbow_out,
        wrist_in=antipode(elbow_out),
        eta=eta,
        upper_arm=upper_length >= MIN_BONE_LENGTH,
        forearm=fore_length >= MIN_BONE_LENGTH,
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

    def constraints(self, targets: ArmTargets) -> OctantConstraints | None:
        """
        Return the octant constraints for a frame (``None`` for an unconstrained solver).

        :param targets: Mapped human arm, robot base frame [m].
        :return: The constraints, or ``None``.
        """
        del targets  # Unused: FABRIK has no constraints.
        return None

    def _solve(self, targets: ArmTargets, q_previous: FloatArray) -> ArmSolveResult:
        landmarks, kinematics = self.arm.landmark_tuples(q_previous)
        chain = PointChain.from_landmarks(landmarks)
        # Pin the human shoulder to the shoulder landmark where it is now.
        anchored = targets.moved_to(np.array(chain.points[1]))
        constraints = self.constraints(anchored)
        point = solve_point_chain(
            chain, as_vector(anchored.wrist), self.config.iteration, constraints
        )
        solved = point.points
        recovery = self._recovery.recover(
            q_previous, (as_vector(solved[2]), as_vector(solved[3])), kinematics
        )
        return ArmSolveResult(
            q=recovery.q,
            points=solved,
            targets=anchored,
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

    def constraints(self, targets: ArmTargets) -> OctantConstraints:
        """
        Return the human's octants (with hysteresis), softened by η for PICs.

        :param targets: Mapped human arm, robot base frame [m].
        :return: The constraints.
        """
        eta = self.config.eta if self.config.name == 'pics' else 0
        self._previous = human_octants(
            targets, eta, self._previous, self.config.octant_hysteresis
        )
        return self._previous
