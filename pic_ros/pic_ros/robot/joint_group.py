"""
A joint group: joints of the robot that one ros2_control controller drives together.

Arms are joint groups with a solver behind them (:class:`~pic_ros.robot.arm.ArmModel`); the
head and each gripper are plain ones (:class:`JointGroup`). The trajectory publisher, the
simulator and the Gazebo description treat every group the same way: its joint names, position
and motion limits, neutral pose and controller (:class:`CommandedGroup`).

Limits: positions from the URDF; velocities from the URDF unless the robot file replaces them
(Baxter's head pan says 10000 rad/s, a placeholder); accelerations and jerks from the robot file
or by the rules :data:`~pic_ros.robot.config.ACCELERATION_PER_VELOCITY` and
:data:`~pic_ros.robot.config.JERK_PER_ACCELERATION`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Protocol

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError
from pic_ros.robot.config import ACCELERATION_PER_VELOCITY, GroupLimits, JERK_PER_ACCELERATION
from pic_ros.robot.kinematics.robot_model import RobotModel
from pic_ros.robot.kinematics.transforms import freeze

FloatArray = npt.NDArray[np.float64]


class JointLimitsSource(Protocol):
    """The position and motion limits of some joints (what the motion layer limits by)."""

    @property
    def lower(self) -> FloatArray:
        """Return the lower position limits, shape (n,), [rad] or [m]."""
        ...

    @property
    def upper(self) -> FloatArray:
        """Return the upper position limits, shape (n,), [rad] or [m]."""
        ...

    @property
    def velocity(self) -> FloatArray:
        """Return the velocity limits, shape (n,), [rad/s] or [m/s]."""
        ...

    @property
    def acceleration(self) -> FloatArray:
        """Return the acceleration limits, shape (n,), [rad/s^2] or [m/s^2]."""
        ...

    @property
    def jerk(self) -> FloatArray:
        """Return the jerk limits, shape (n,), [rad/s^3] or [m/s^3]."""
        ...


class CommandedJoints(JointLimitsSource, Protocol):
    """What :class:`~pic_ros.motion.commander.ArmCommander` needs of the joints it commands."""

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the joint names, in command order."""
        ...

    @property
    def neutral(self) -> FloatArray:
        """Return the neutral pose, shape (n,), [rad] or [m]."""
        ...


class CommandedGroup(CommandedJoints, Protocol):
    """
    What the command side needs of a group of joints (an arm, the head, a gripper).

    The commanded joints (names, limits, neutral pose), the group's name and its controller's.
    Declared here, below the motion layer, which only reads them.
    """

    @property
    def name(self) -> str:
        """Return the group name, unique in the robot (``left``, ``head``, ``left_gripper``)."""
        ...

    @property
    def controller(self) -> str:
        """Return the name of the joint_trajectory_controller that drives the group."""
        ...


def derived_limits(
    velocity: npt.ArrayLike,
    acceleration: Sequence[float] | None,
    jerk: Sequence[float] | None,
) -> tuple[FloatArray, FloatArray]:
    """
    Return the acceleration and jerk limits of joints: given, or by the rules.

    :param velocity: Velocity limits, shape (n,), [rad/s] or [m/s].
    :param acceleration: Acceleration limits [rad/s^2] or [m/s^2], or None for
        :data:`ACCELERATION_PER_VELOCITY` x velocity.
    :param jerk: Jerk limits [rad/s^3] or [m/s^3], or None for :data:`JERK_PER_ACCELERATION` x
        acceleration.
    :return: ``(acceleration, jerk)``, shape (n,) each.
    """
    speeds = np.asarray(velocity, dtype=float)
    accelerations = (
        ACCELERATION_PER_VELOCITY * speeds if acceleration is None
        else np.array(acceleration, dtype=float)
    )
    jerks = JERK_PER_ACCELERATION * accelerations if jerk is None else np.array(jerk, dtype=float)
    return accelerations, jerks


@dataclass(frozen=True, eq=False)
class JointGroup:
    """
    Joints driven by one controller, outside any arm (the head, a gripper).

    Build it with :meth:`build`.

    :param name: Group name, unique in the robot.
    :param controller: Name of its joint_trajectory_controller.
    :param joint_names: Joints, in command order.
    :param lower: Lower position limits, shape (n,), [rad] or [m].
    :param upper: Upper position limits, shape (n,), [rad] or [m].
    :param velocity: Velocity limits, shape (n,), [rad/s] or [m/s].
    :param acceleration: Acceleration limits, shape (n,), [rad/s^2] or [m/s^2].
    :param jerk: Jerk limits, shape (n,), [rad/s^3] or [m/s^3].
    :param neutral: Neutral pose, shape (n,), inside the limits.
    """

    name: str
    controller: str
    joint_names: tuple[str, ...]
    lower: FloatArray
    upper: FloatArray
    velocity: FloatArray
    acceleration: FloatArray
    jerk: FloatArray
    neutral: FloatArray

    @classmethod
    def build(
        cls,
        model: RobotModel,
        name: str,
        controller: str,
        joints: Sequence[str],
        neutral: Sequence[float],
        limits: GroupLimits,
    ) -> JointGroup:
        """
        Build a group from the URDF and the robot file's entry.

        :param model: The robot's URDF model.
        :param name: Group name.
        :param controller: Its controller.
        :param joints: Its joints (revolute or prismatic joints of the URDF, not mimic joints).
        :param neutral: Neutral value per joint [rad] or [m].
        :param limits: The robot file's limits, replacing or adding to the URDF's.
        :return: The group.
        :raises ChainError: If a joint is not a limited movable joint of the URDF, is a mimic
            joint, has no usable velocity limit, or if the neutral pose is outside the limits.
        """
        lower, upper, speed = [], [], []
        for joint_name in joints:
            joint = model.joints.get(joint_name)
            if joint is None or joint.limits is None:
                raise ChainError(
                    f'{name}: {joint_name!r} is not a movable joint of the URDF {model.name!r}'
                )
            if joint.mimic is not None:
                raise ChainError(
                    f'{name}: {joint_name!r} mimics {joint.mimic[0]!r}; list the joint it mimics'
                )
            if not (math.isfinite(joint.limits.lower) and math.isfinite(joint.limits.upper)):
                raise ChainError(f'{name}: {joint_name!r} has no position limits in the URDF')
            lower.append(joint.limits.lower)
            upper.append(joint.limits.upper)
            speed.append(joint.limits.velocity)
        velocity = np.array(limits.velocity if limits.velocity is not None else speed, dtype=float)
        if not np.all(np.isfinite(velocity) & (velocity > 0.0)):
            raise ChainError(f'{name}: every joint needs a velocity limit > 0 (URDF or file)')
        acceleration, jerk = derived_limits(velocity, limits.acceleration, limits.jerk)
        rest = np.array(neutral, dtype=float)
        low, high = np.array(lower), np.array(upper)
        outside = [n for n, v, lo, hi in zip(joints, rest, low, high) if not lo <= v <= hi]
        if outside:
            raise ChainError(f'{name}: neutral pose outside the limits for {outside}')
        return cls(
            name=name,
            controller=controller,
            joint_names=tuple(joints),
            lower=freeze(low),
            upper=freeze(high),
            velocity=freeze(velocity),
            acceleration=freeze(acceleration),
            jerk=freeze(jerk),
            neutral=freeze(rest),
        )

    def clamp(self, q: npt.ArrayLike) -> FloatArray:
        """
        Clamp joint values into the position limits.

        :param q: Joint values, shape (n,), [rad] or [m].
        :return: A clamped copy.
        """
        clamped: FloatArray = np.clip(np.asarray(q, dtype=float), self.lower, self.upper)
        return clamped
