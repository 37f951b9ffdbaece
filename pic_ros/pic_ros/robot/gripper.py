"""
A gripper (or hand) at the end of an arm: its joints and their open and closed positions.

The person's hand state (:class:`~pic_ros.human.hands.HandState`) chooses between the two
positions of the robot file's ``grippers.<arm>`` entry; the human hand that drives a gripper is
the one driving its arm (``same_side``: the same side, ``mirror``: the other one). Grippers are
commanded like every joint group, by a joint_trajectory_controller, through the same motion
limits and tracking-loss behaviour as the arms; or, with the trajectory publisher's
``gripper_interface`` ``gripper_action``, by goals to a
``control_msgs/action/GripperCommand`` server (:mod:`pic_ros.motion.gripper_goals`), as the
entry's ``action`` settings say.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError
from pic_ros.robot.config import GripperActionSpec, GripperSpec
from pic_ros.robot.joint_group import JointGroup
from pic_ros.robot.kinematics.robot_model import RobotModel
from pic_ros.robot.kinematics.transforms import freeze

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class GripperModel:
    """
    A gripper ready for imitation. Build it with :meth:`build`.

    :param group: Its joints, limits, neutral (where tracking loss takes it) and controller.
    :param arm: The arm it ends.
    :param open_position: Joint values of the open gripper, inside the limits [rad] or [m].
    :param closed_position: Joint values of the closed gripper, inside the limits [rad] or [m].
    :param action: Its ``GripperCommand`` settings, or None when the robot file gives none.
    """

    group: JointGroup
    arm: str
    open_position: FloatArray
    closed_position: FloatArray
    action: GripperActionSpec | None = None

    @classmethod
    def build(cls, model: RobotModel, spec: GripperSpec) -> GripperModel:
        """
        Build a gripper from the URDF and the robot file's entry.

        :param model: The robot's URDF model.
        :param spec: The ``grippers.<arm>`` entry.
        :return: The gripper, named ``<arm>_gripper``.
        :raises ChainError: If a joint is unknown or a position is outside the limits.
        """
        group = JointGroup.build(
            model, f'{spec.arm}_gripper', spec.controller, spec.joints, spec.neutral,
            spec.limits,
        )
        for label, values in (('open', spec.open_position), ('closed', spec.closed_position)):
            inside = (np.array(values) >= group.lower) & (np.array(values) <= group.upper)
            if not np.all(inside):
                raise ChainError(f'{group.name}: the {label} position is outside the limits')
        return cls(
            group=group, arm=spec.arm, open_position=freeze(spec.open_position),
            closed_position=freeze(spec.closed_position), action=spec.action,
        )

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the actuated gripper joints."""
        return self.group.joint_names

    def targets(self, closed: bool) -> FloatArray:
        """
        Return the joint targets of a gripper state.

        :param closed: Closed (True) or open (False).
        :return: Joint values in :attr:`joint_names` order [rad] or [m].
        """
        return self.closed_position if closed else self.open_position
