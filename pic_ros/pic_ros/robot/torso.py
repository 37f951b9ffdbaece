"""
The robot's torso lift: a prismatic joint under the arms, driven as its own joint group.

A ``torso`` entry of the robot file (:class:`~pic_ros.robot.config.TorsoSpec`) makes the joint a
commanded group named ``torso`` (:attr:`pic_ros.robot.robot.Robot.groups`): the trajectory
publisher, the simulator and the Gazebo description drive it like the head. While whole-body
imitation is off it is held at its neutral value, which the arm solvers assume (the arms see it
as a locked joint of their chains); the whole-body solver (:mod:`pic_ros.solvers.prioritized`)
moves it. Lifting it by ``d`` [m] moves every landmark of the arms it serves by ``d`` times its
axis (:attr:`TorsoModel.axis`, base frame), the shoulder riding on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.config import TorsoSpec
from pic_ros.robot.joint_group import JointGroup
from pic_ros.robot.kinematics.robot_model import JointType, RobotModel
from pic_ros.robot.kinematics.transforms import freeze

FloatArray = npt.NDArray[np.float64]

TORSO_GROUP = 'torso'
"""Name of the torso's joint group."""


@dataclass(frozen=True, eq=False)
class TorsoModel:
    """
    A torso lift ready for whole-body imitation. Build it with :meth:`build`.

    :param spec: The robot file's ``torso`` entry.
    :param group: Its joint group (one prismatic joint, limits, neutral, controller).
    :param axis: Unit direction a positive lift moves the arms, base frame, shape (3,).
    """

    spec: TorsoSpec
    group: JointGroup
    axis: FloatArray

    @classmethod
    def build(
        cls, model: RobotModel, spec: TorsoSpec, arms: dict[str, ArmModel]
    ) -> TorsoModel:
        """
        Build the torso from the URDF, its robot file entry and the arms riding on it.

        :param model: The robot's URDF model.
        :param spec: The ``torso`` entry.
        :param arms: Every arm of the robot, by name (built with the torso at its neutral value).
        :return: The torso.
        :raises ChainError: If the joint is not a limited prismatic joint of the URDF, is not on
            the chain of every arm it serves, or its neutral value is outside its limits.
        """
        joint = model.joints.get(spec.joint)
        if joint is None or joint.joint_type is not JointType.PRISMATIC:
            raise ChainError(f'torso: {spec.joint!r} is not a prismatic joint of {model.name!r}')
        group = JointGroup.build(
            model, TORSO_GROUP, spec.controller, spec.joints, (spec.neutral,), spec.limits
        )
        axis = None
        for name in spec.arms:
            arm = arms[name]
            if spec.joint not in arm.chain.joint_names:
                raise ChainError(
                    f'torso: {spec.joint!r} is not on the chain of arm {name!r} '
                    f'({arm.chain.base_link} -> {arm.chain.tip_link})'
                )
            _, axes = arm.chain.prefix_positions_and_axes(
                arm.full_q(arm.neutral), arm.chain.dof
            )
            axis = np.array(axes[arm.chain.index(spec.joint)], dtype=float)
        if axis is None:
            raise ChainError('torso: it serves no arm')
        return cls(spec=spec, group=group, axis=freeze(axis / np.linalg.norm(axis)))

    @property
    def joint(self) -> str:
        """Return the torso joint's name."""
        return self.spec.joint

    @property
    def neutral(self) -> float:
        """Return the neutral lift [m]."""
        return float(self.group.neutral[0])

    @property
    def lower(self) -> float:
        """Return the lower position limit [m]."""
        return float(self.group.lower[0])

    @property
    def upper(self) -> float:
        """Return the upper position limit [m]."""
        return float(self.group.upper[0])

    @property
    def velocity(self) -> float:
        """Return the velocity limit [m/s]."""
        return float(self.group.velocity[0])

    def clamp(self, value: float) -> float:
        """
        Clamp a lift into the position limits.

        :param value: Lift [m].
        :return: The clamped lift [m].
        """
        return min(max(float(value), self.lower), self.upper)
