"""
The robot's head: which joint turns it, which tilts it, and in which direction.

The directions come from the URDF, not from the robot file: the yaw joint's axis, in the base
frame at the neutral pose, must be (nearly) vertical and the pitch joint's (nearly) lateral; the
sign of that axis along base z (yaw) or base y (pitch) says whether a positive joint value turns
the head to the robot's left or tilts it down (REP-103 right-hand rule about +y tips x down). So
any robot whose head joints are a pan and a tilt is driven right with a two-line ``head`` entry.

The person's head angles (:class:`~pic_ros.human.head.HeadAngles`, body frame) become joint
targets relative to the neutral pose, which is taken as the head looking straight ahead; in
``mirror`` mode (face to face) the yaw changes sign. Targets are clamped into the limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError
from pic_ros.robot.config import HeadSpec
from pic_ros.robot.joint_group import JointGroup
from pic_ros.robot.kinematics.chain import KinematicChain
from pic_ros.robot.kinematics.robot_model import RobotModel
from pic_ros.robot.kinematics.transforms import freeze

FloatArray = npt.NDArray[np.float64]

AXIS_ALIGNMENT = 0.7
"""Smallest |cos| between a head joint's axis and the base axis it turns about (45 deg)."""


@dataclass(frozen=True, eq=False)
class HeadModel:
    """
    A robot head ready for imitation. Build it with :meth:`build`.

    :param group: Its joints (yaw then pitch, those it has), limits, neutral and controller.
    :param yaw_sign: +1 when a positive yaw joint value turns the head to the robot's left,
        -1 when to its right, 0 without a yaw joint.
    :param pitch_sign: +1 when a positive pitch joint value tilts the head down, -1 when up, 0
        without a pitch joint.
    """

    group: JointGroup
    yaw_sign: float
    pitch_sign: float

    @classmethod
    def build(
        cls,
        model: RobotModel,
        base_frame: str,
        spec: HeadSpec,
        locked: dict[str, float] | None = None,
    ) -> HeadModel:
        """
        Build the head from the URDF and the robot file's ``head`` entry.

        :param model: The robot's URDF model.
        :param base_frame: The robot's base link.
        :param spec: The ``head`` entry.
        :param locked: Locked joint values by name (e.g. a torso lift below the head).
        :return: The head.
        :raises ChainError: If a joint is unknown, or its axis is not vertical (yaw) or lateral
            (pitch) at the neutral pose.
        """
        group = JointGroup.build(
            model, 'head', spec.controller, spec.joints, spec.neutral, spec.limits
        )
        neutral = dict(zip(spec.joints, group.neutral))
        values = dict(locked or {}) | neutral
        yaw_sign = 0.0
        pitch_sign = 0.0
        if spec.yaw is not None:
            yaw_sign = _axis_sign(model, base_frame, spec.yaw, values, 2, 'yaw', 'z')
        if spec.pitch is not None:
            pitch_sign = _axis_sign(model, base_frame, spec.pitch, values, 1, 'pitch', 'y')
        return cls(group=group, yaw_sign=yaw_sign, pitch_sign=pitch_sign)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the head joints: yaw then pitch, those the robot has."""
        return self.group.joint_names

    def unlimited_targets(self, yaw: float, pitch: float, mirror: bool = False) -> FloatArray:
        """
        Turn the person's head angles into head joint values, before the limits.

        :param yaw: Head yaw in the body frame [rad], positive to the person's left.
        :param pitch: Head pitch in the body frame [rad], positive looking down.
        :param mirror: Face-to-face mapping: the person's left is the robot's right.
        :return: Joint values in :attr:`joint_names` order [rad], possibly outside the limits.
        """
        offsets = []
        if self.yaw_sign:
            offsets.append(self.yaw_sign * (-yaw if mirror else yaw))
        if self.pitch_sign:
            offsets.append(self.pitch_sign * pitch)
        values: FloatArray = self.group.neutral + np.array(offsets)
        return values

    def targets(self, yaw: float, pitch: float, mirror: bool = False) -> FloatArray:
        """
        Turn the person's head angles into head joint targets, inside the limits.

        :param yaw: Head yaw in the body frame [rad], positive to the person's left.
        :param pitch: Head pitch in the body frame [rad], positive looking down.
        :param mirror: Face-to-face mapping: the person's left is the robot's right.
        :return: Joint targets in :attr:`joint_names` order, clamped into the limits [rad].
        """
        return self.group.clamp(self.unlimited_targets(yaw, pitch, mirror))


def _axis_sign(
    model: RobotModel,
    base_frame: str,
    joint_name: str,
    values: dict[str, float],
    component: int,
    role: str,
    axis_name: str,
) -> float:
    """Return the sign of a joint's axis along one base axis at the given joint values."""
    joint = model.joints[joint_name]
    chain = KinematicChain.from_model(model, base_frame, joint.child)
    q = [values.get(name, 0.0) for name in chain.joint_names]
    _, axes = chain.positions_and_axes(q)
    axis = freeze(axes[chain.index(joint_name)])
    along = float(axis[component])
    if abs(along) < AXIS_ALIGNMENT:
        raise ChainError(
            f'head {role} joint {joint_name!r}: its axis in {base_frame} is '
            f'{np.round(axis, 3).tolist()}, not along the base {axis_name} axis'
        )
    return 1.0 if along > 0.0 else -1.0
