"""
One robot imitating one person: a correspondence and a solver per arm, frame after frame.

:class:`RobotImitator` is what the solver node and ``evaluate`` share: it takes a body-frame
skeleton, places the driving human arm on each robot arm (:mod:`pic_ros.correspondence`) and
solves it with the configured solver (:mod:`pic_ros.solvers`), keeping each arm's warm start.
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

    def step(self, frame: SkeletonFrame) -> ImitationStep:
        """
        Solve every arm whose driving human arm is valid in a body-frame skeleton.

        :param frame: Skeleton in the ``body`` frame.
        :return: The per-arm targets, results and solve times.
        :raises pic_ros.exceptions.ConfigError: If the frame is not in the body frame.
        """
        arms: dict[str, ArmStep] = {}
        for name, correspondence in self._correspondences.items():
            targets = correspondence.place(frame)
            if targets is None:
                continue
            start = time.thread_time()
            result = self._solvers[name].solve(targets)
            arms[name] = ArmStep(targets, result, time.thread_time() - start)
        return ImitationStep(stamp=frame.stamp, arms=MappingProxyType(arms))
