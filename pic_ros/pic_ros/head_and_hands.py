"""
The robot's head and grippers imitating the person's head and hands, frame after frame.

:class:`HeadAndHandsImitator` is what the solver node and ``evaluate`` share beside the arms'
:class:`~pic_ros.imitation.RobotImitator`: from a body-frame skeleton it estimates the person's
head angles (:func:`~pic_ros.human.head.head_angles`) and hand states
(:class:`~pic_ros.human.hands.HandStateTracker`) and turns them into joint targets of the robot's
head (:class:`~pic_ros.robot.head.HeadModel`) and grippers
(:class:`~pic_ros.robot.gripper.GripperModel`), as the robot file configures them.

What is not seen gives no target: a head the tracker cannot see (Kinect v2 has no face points)
leaves the head to the trajectory publisher's tracking-loss behaviour, like an arm; a hand keeps
its last known state while it is not seen (the hand state tracker holds it), so its gripper
holds; a gripper gets targets from the first time its hand state is known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence import human_side_for, MappingConfig
from pic_ros.correspondence.mapping import MappingMode
from pic_ros.human.hands import HandConfig, HandEstimate, HandState, HandStateTracker
from pic_ros.human.head import head_angles, HeadAngles
from pic_ros.robot.robot import Robot
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import Side, SkeletonFrame

FloatArray = npt.NDArray[np.float64]

IMITATE_HEAD: Final = ParameterDef(
    'imitate_head', True,
    "Drive the robot's head (robot file: head) with the person's head yaw and pitch",
)
"""The solver node's ``imitate_head``."""

IMITATE_HANDS: Final = ParameterDef(
    'imitate_hands', True,
    "Drive the robot's grippers (robot file: grippers) with the person's hands, open or closed",
)
"""The solver node's ``imitate_hands``."""

HEAD_AND_HANDS_PARAMETERS: Final = (IMITATE_HEAD, IMITATE_HANDS)
"""The switches :meth:`HeadAndHandsConfig.from_parameters` reads, beside the hand parameters."""


@dataclass(frozen=True)
class HeadAndHandsConfig:
    """
    Settings of :class:`HeadAndHandsImitator` (each field is the parameter of the same name).

    :param imitate_head: Drive the head.
    :param imitate_hands: Drive the grippers.
    :param hands: Hand state estimation.
    """

    imitate_head: bool = IMITATE_HEAD.default
    imitate_hands: bool = IMITATE_HANDS.default
    hands: HandConfig = field(default_factory=HandConfig)

    def __post_init__(self) -> None:
        for item in HEAD_AND_HANDS_PARAMETERS:
            object.__setattr__(self, item.name, item.check(getattr(self, item.name)))

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> HeadAndHandsConfig:
        """
        Build the settings from parameter values.

        :param values: Values by parameter name; missing ones take their defaults.
        :return: The settings.
        :raises ConfigError: If a value is refused.
        """
        return cls(
            imitate_head=values.get(IMITATE_HEAD.name, IMITATE_HEAD.default),
            imitate_hands=values.get(IMITATE_HANDS.name, IMITATE_HANDS.default),
            hands=HandConfig.from_parameters(values),
        )


@dataclass(frozen=True)
class HeadAndHandsStep:
    """
    One frame of head and hand imitation.

    :param stamp: Skeleton capture time [s].
    :param head_angles: The person's head angles (body frame), or None when not seen.
    :param hands: The person's hand estimates by side (empty when hands are not imitated).
    :param head: Head joint targets (the robot's head joint order) [rad], or None.
    :param grippers: Gripper joint targets by arm name [rad] or [m]; grippers whose hand state
        is not yet known are absent.
    """

    stamp: float
    head_angles: HeadAngles | None
    hands: Mapping[Side, HandEstimate]
    head: FloatArray | None
    grippers: Mapping[str, FloatArray]


class HeadAndHandsImitator:
    """
    Estimate the person's head and hands and map them on the robot's head and grippers.

    :param robot: The robot (its ``head`` and ``grippers``; a robot without them gets no target).
    :param config: Settings.
    :param mapping: Mapping mode (``mirror`` swaps the hands and the head's yaw); default the
        robot file's.
    :param arms: Arms whose grippers are driven; default every arm.
    """

    def __init__(
        self,
        robot: Robot,
        config: HeadAndHandsConfig | None = None,
        mapping: MappingConfig | None = None,
        arms: tuple[str, ...] | list[str] | None = None,
    ) -> None:
        self.robot = robot
        self.config = config if config is not None else HeadAndHandsConfig()
        self.mapping = (
            mapping if mapping is not None else MappingConfig.from_robot(robot.spec.mapping)
        )
        self._hands = HandStateTracker(self.config.hands)
        self._mirror = self.mapping.mode is MappingMode.MIRROR
        self._gripper_sides = {
            arm: human_side_for(robot.arms[arm].side, self.mapping.mode)
            for arm in robot.grippers
            if arms is None or arm in arms
        }

    @property
    def active(self) -> bool:
        """Return whether this robot has anything to drive with these settings."""
        head = self.config.imitate_head and self.robot.head is not None
        return head or (self.config.imitate_hands and bool(self._gripper_sides))

    def reset(self) -> None:
        """Forget the hand states (a new person or a new session)."""
        self._hands.reset()

    def adopt(self, other: HeadAndHandsImitator) -> None:
        """
        Continue the hand states of an imitator being replaced (after a parameter change).

        :param other: The imitator being replaced.
        """
        if other.config.hands == self.config.hands:
            self._hands = other._hands

    def step(self, frame: SkeletonFrame) -> HeadAndHandsStep:
        """
        Estimate and map one body-frame skeleton.

        :param frame: Skeleton in the ``body`` frame.
        :return: The estimates and the joint targets.
        """
        angles = None
        head = None
        if self.config.imitate_head and self.robot.head is not None:
            angles = head_angles(frame)
            if angles is not None:
                head = self.robot.head.targets(angles.yaw, angles.pitch, mirror=self._mirror)
        hands: Mapping[Side, HandEstimate] = MappingProxyType({})
        grippers: dict[str, FloatArray] = {}
        if self.config.imitate_hands and self._gripper_sides:
            hands = self._hands.update(frame)
            for arm, side in self._gripper_sides.items():
                state = hands[side].state
                if state is not HandState.UNKNOWN:
                    grippers[arm] = self.robot.grippers[arm].targets(state is HandState.CLOSED)
        return HeadAndHandsStep(
            stamp=frame.stamp,
            head_angles=angles,
            hands=hands,
            head=head,
            grippers=MappingProxyType(grippers),
        )
