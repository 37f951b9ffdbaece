"""
One robot imitating one person: the mapping and a solver per arm, frame after frame.

:class:`RobotImitator` is what the solver node and ``evaluate`` share: it takes a body-frame
skeleton, maps the driving human arm onto each robot arm (:mod:`pic_ros.mapping`) and solves it
with the configured solver (:mod:`pic_ros.solvers`), keeping each arm's warm start.
"""

from __future__ import annotations

from dataclasses import dataclass
import time
from types import MappingProxyType
from typing import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from pic_ros.exceptions import ConfigError
from pic_ros.human.skeleton import SkeletonFrame
from pic_ros.mapping import ArmMapper, ArmTargets, MappingConfig
from pic_ros.robot.robot import Robot
from pic_ros.solvers import ArmSolver, ArmSolveResult, make_solver, SolverConfig

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ArmStep:
    """
    What happened to one arm in one frame.

    :param targets: The mapped human arm, robot base frame [m].
    :param result: The solver's result (joint angles inside the limits).
    :param solve_time: Wall time of the solve, joint recovery included [s].
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
    Map and solve every arm of a robot.

    :param robot: The robot.
    :param solver: Solver settings (the same solver for every arm).
    :param mapping: Mapping settings; default the robot file's ``mapping``.
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
        self._mappers: dict[str, ArmMapper] = {}
        self._solvers: dict[str, ArmSolver] = {}
        for name, arm in robot.arms.items():
            if arms is not None and name not in arms:
                continue
            landmarks = arm.landmarks(arm.neutral)
            length = float(
                np.linalg.norm(landmarks[2] - landmarks[1])
                + np.linalg.norm(landmarks[3] - landmarks[2])
            )
            self._mappers[name] = ArmMapper(self.mapping_config, arm.side, landmarks[1], length)
            self._solvers[name] = make_solver(arm, solver)

    @property
    def mappers(self) -> Mapping[str, ArmMapper]:
        """Return the mapper of each arm, read-only."""
        return MappingProxyType(self._mappers)

    def q(self, arm: str) -> FloatArray:
        """
        Return an arm's current solution (its warm start).

        :param arm: Arm name.
        :return: Joint values in the arm's joint order [rad] or [m].
        """
        return self._solvers[arm].q

    def reset(self, q: Mapping[str, npt.ArrayLike] | None = None, scale: bool = False) -> None:
        """
        Reset the warm starts (and optionally the automatic scale).

        :param q: Warm start per arm name; arms not given go to their neutral pose.
        :param scale: Also forget the automatic scale measurement.
        """
        for name, solver in self._solvers.items():
            solver.reset(None if q is None else q.get(name))
            if scale:
                self._mappers[name].reset()

    def adopt_scales(self, other: RobotImitator) -> None:
        """
        Continue the automatic scale measurements of another imitator of the same robot.

        :param other: The imitator being replaced (after a parameter change).
        """
        for name, mapper in self._mappers.items():
            if name in other._mappers:
                mapper.adopt(other._mappers[name])

    def step(self, frame: SkeletonFrame) -> ImitationStep:
        """
        Solve every arm whose driving human arm is valid in a body-frame skeleton.

        :param frame: Skeleton in the ``body`` frame.
        :return: The per-arm targets, results and solve times.
        :raises pic_ros.exceptions.ConfigError: If the frame is not in the body frame.
        """
        arms: dict[str, ArmStep] = {}
        for name, mapper in self._mappers.items():
            targets = mapper.place(frame)
            if targets is None:
                continue
            start = time.perf_counter()
            result = self._solvers[name].solve(targets)
            arms[name] = ArmStep(targets, result, time.perf_counter() - start)
        return ImitationStep(stamp=frame.stamp, arms=MappingProxyType(arms))
