"""
One robot imitating one person: a correspondence and a solver per arm, frame after frame.

:class:`RobotImitator` is what the solver node and ``evaluate`` share: it takes a body-frame
skeleton, places the driving human arm on each robot arm (:mod:`pic_ros.correspondence`) and
solves it with the configured solver (:mod:`pic_ros.solvers`), keeping each arm's warm start.

Hand offsets (:meth:`RobotImitator.step`): an input such as the admittance controller
(:mod:`pic_ros.motion.admittance`) may shift an arm's end-effector (wrist landmark) target by an
offset in the robot base frame [m]. It is honoured where the wrist target is a place: the
``position`` correspondence's targets (:attr:`~pic_ros.correspondence.TargetKind.POSITION`) and
the whole-body solver's end-effector task. A shape-only solve (the ``direction``
correspondence with an arm solver) has no wrist place to shift, so a non-zero offset there is
refused (:class:`~pic_ros.exceptions.ConfigError`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import time
from types import MappingProxyType

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence import (
    ArmTargets,
    Correspondence,
    make_correspondence,
    MappingConfig,
    RobotArmGeometry,
    TargetKind,
)
from pic_ros.exceptions import ConfigError
from pic_ros.human.skeleton import SkeletonFrame
from pic_ros.robot.robot import Robot
from pic_ros.solvers import ArmSolver, ArmSolveResult, make_solver, SolverConfig

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ArmStep:
    """
    What happened to one arm in one frame.

    :param targets: The human arm as the correspondence placed it (anchored at the robot's
        neutral shoulder landmark), robot base frame [m].
    :param result: The solver's result (joint angles inside the limits).
    :param solve_time: CPU time of the solve (this thread's), joint recovery included [s]: time
        the process was preempted does not count.
    """

    targets: ArmTargets
    result: ArmSolveResult
    solve_time: float


@dataclass(frozen=True)
class ImitationStep:
    """
    One frame of imitation.

    :param stamp: Skeleton capture time [s].
    :param arms: Per solved arm name; arms whose human arm was not valid are absent.
    """

    stamp: float
    arms: Mapping[str, ArmStep]


class RobotImitator:
    """
    Place the person on every arm of a robot and solve it.

    :param robot: The robot.
    :param solver: Solver settings (the same solver for every arm).
    :param mapping: Mapping mode and correspondence; default the robot file's ``mapping``.
    :param arms: Names of the arms to solve, in the robot's arm order; default every arm.
    :raises ConfigError: If an arm name is not an arm of the robot.
    """

    def __init__(
        self,
        robot: Robot,
        solver: SolverConfig,
        mapping: MappingConfig | None = None,
        arms: Sequence[str] | None = None,
    ) -> None:
        self.robot = robot
        self.solver_config = solver
        self.mapping_config = mapping if mapping is not None else robot.spec.mapping
        if arms is not None:
            unknown = sorted(set(arms) - set(robot.arms))
            if unknown:
                raise ConfigError(
                    f'arms {unknown} are not arms of {robot.name}; arms: {", ".join(robot.arms)}'
                )
        self._correspondences: dict[str, Correspondence] = {}
        self._solvers: dict[str, ArmSolver] = {}
        for name, arm in robot.arms.items():
            if arms is not None and name not in arms:
                continue
            landmarks = arm.landmarks(arm.neutral)
            geometry = RobotArmGeometry(
                side=arm.side,
                shoulder=landmarks[1],
                upper_arm=float(np.linalg.norm(landmarks[2] - landmarks[1])),
                forearm=float(np.linalg.norm(landmarks[3] - landmarks[2])),
            )
            self._correspondences[name] = make_correspondence(self.mapping_config, geometry)
            self._solvers[name] = make_solver(arm, solver)

    @property
    def correspondences(self) -> Mapping[str, Correspondence]:
        """Return the correspondence of each solved arm, read-only."""
        return MappingProxyType(self._correspondences)

    def q(self, arm: str) -> FloatArray:
        """
        Return an arm's current solution (its warm start).

        :param arm: Arm name.
        :return: Joint values in the arm's joint order [rad] or [m].
        """
        return self._solvers[arm].q

    def reset(self, q: Mapping[str, npt.ArrayLike] | None = None, person: bool = False) -> None:
        """
        Reset the warm starts (and optionally what was learnt about the person).

        :param q: Warm start per arm name; arms not given go to their neutral pose.
        :param person: Also forget what the correspondences learnt (e.g. bone lengths).
        """
        for name, solver in self._solvers.items():
            solver.reset(None if q is None else q.get(name))
            if person:
                self._correspondences[name].reset()

    def adopt(self, other: RobotImitator) -> None:
        """
        Continue what another imitator of the same robot learnt about the person.

        :param other: The imitator being replaced (after a parameter change).
        """
        for name, correspondence in self._correspondences.items():
            if name in other._correspondences:
                correspondence.adopt(other._correspondences[name])

    def _offsets(
        self, hand_offsets: Mapping[str, FloatArray] | None
    ) -> dict[str, FloatArray]:
        """Check the hand offsets: known arms, finite 3-vectors; drop the zero ones."""
        if not hand_offsets:
            return {}
        offsets: dict[str, FloatArray] = {}
        for name, value in hand_offsets.items():
            if name not in self.robot.arms:
                raise ConfigError(
                    f'hand offset for {name!r}, which is not an arm of {self.robot.name}; '
                    f'arms: {", ".join(self.robot.arms)}'
                )
            offset = np.asarray(value, dtype=float)
            if offset.shape != (3,) or not np.all(np.isfinite(offset)):
                raise ConfigError(
                    f'hand offset of {name!r} must be a finite 3-vector [m], got {value!r}'
                )
            if np.any(offset != 0.0):
                offsets[name] = offset
        return offsets

    def step(
        self, frame: SkeletonFrame, hand_offsets: Mapping[str, FloatArray] | None = None
    ) -> ImitationStep:
        """
        Solve every arm whose driving human arm is valid in a body-frame skeleton.

        :param frame: Skeleton in the ``body`` frame.
        :param hand_offsets: Per arm name, an offset added to that arm's end-effector (wrist
            landmark) target, shape (3,), [m], robot base frame (e.g. the admittance
            controller's displacement); None or absent arms: no offset.
        :return: The per-arm targets (offsets included), results and solve times.
        :raises pic_ros.exceptions.ConfigError: If the frame is not in the body frame, or a hand
            offset names no arm, is not a finite 3-vector, or is non-zero for an arm whose
            targets have no wrist place to shift (shape-only targets without whole-body).
        """
        offsets = self._offsets(hand_offsets)
        arms: dict[str, ArmStep] = {}
        for name, correspondence in self._correspondences.items():
            targets = correspondence.place(frame)
            if targets is None:
                continue
            offset = offsets.get(name)
            if offset is not None:
                if targets.kind is not TargetKind.POSITION:
                    raise ConfigError(
                        f'a hand offset for {name!r} needs a wrist place to shift: the position '
                        f'correspondence or whole-body imitation, not {targets.kind.value} '
                        f'targets of the {self.mapping_config.correspondence} correspondence'
                    )
                targets = targets.with_wrist_offset(offset)
            start = time.thread_time()
            result = self._solvers[name].solve(targets)
            arms[name] = ArmStep(targets, result, time.thread_time() - start)
        return ImitationStep(stamp=frame.stamp, arms=MappingProxyType(arms))
