"""
One skeleton frame in, the robot's targets out: the core step every front end runs.

:class:`Teleoperation` composes what turns a body-frame skeleton into joint targets for one robot
-- the arms' imitation (:class:`~pic_ros.imitation.RobotImitator`: correspondence, solver,
self-collision avoidance, the torso of whole-body imitation), the head and grippers
(:class:`~pic_ros.head_and_hands.HeadAndHandsImitator`), the engage gesture
(:class:`~pic_ros.human.engage_gesture.EngageGesture`) and the frames kept for the arm-length
calibration (:class:`~pic_ros.correspondence.Calibrator`) -- and returns a
:class:`RobotTargets`: joint positions by controller group, with the capture stamp and what each
part did. solver_node, the one-process ``teleop`` and the offline tools call it; the nodes only
convert messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence import Calibrator
from pic_ros.head_and_hands import HeadAndHandsImitator, HeadAndHandsStep
from pic_ros.human.engage_gesture import EngageGesture
from pic_ros.imitation import ImitationStep, RobotImitator
from pic_ros.robot.robot import Robot
from pic_ros.robot.torso import TORSO_GROUP
from pic_ros.skeleton import SkeletonFrame

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class GroupTargets:
    """
    The targets of one controller group.

    :param joint_names: The group's joints, in its controller's order.
    :param positions: One target per joint [rad] (revolute) or [m] (prismatic), inside the
        URDF limits.
    """

    joint_names: tuple[str, ...]
    positions: FloatArray


@dataclass(frozen=True)
class RobotTargets:
    """
    What one skeleton frame asks of the robot.

    :param stamp: The skeleton's capture time [s] (the tracker's stamp).
    :param groups: Targets by group name of :attr:`~pic_ros.robot.robot.Robot.groups` (arm
        names, ``torso``, ``head``, ``<arm>_gripper``), in the robot's group order; a group
        with nothing to command in this frame (an arm not in view) is absent.
    :param imitation: The arms' step: per-arm results, solve times, the avoidance's verdict.
    :param head_and_hands: The head and hands step (None without head and hands imitation).
    """

    stamp: float
    groups: Mapping[str, GroupTargets] = field(default_factory=dict)
    imitation: ImitationStep | None = None
    head_and_hands: HeadAndHandsStep | None = None

    @property
    def joint_names(self) -> list[str]:
        """Return every target's joint name, group after group."""
        return [name for group in self.groups.values() for name in group.joint_names]

    @property
    def positions(self) -> list[float]:
        """Return every target [rad] or [m], in the order of :attr:`joint_names`."""
        return [float(value) for group in self.groups.values() for value in group.positions]

    @classmethod
    def from_joints(
        cls, robot: Robot, stamp: float, values: Mapping[str, float]
    ) -> RobotTargets:
        """
        Group joint targets by controller group (a ``sensor_msgs/JointState`` on a topic).

        :param robot: The robot.
        :param stamp: Capture time [s].
        :param values: Target by joint name [rad] or [m].
        :return: The targets of every group with a joint in ``values``; a joint of such a group
            that is missing is NaN (a commander refuses the group's target, and counts it).
        """
        groups = {}
        for name, group in robot.groups.items():
            names = tuple(group.joint_names)
            if any(joint in values for joint in names):
                groups[name] = GroupTargets(
                    names, np.array([values.get(joint, np.nan) for joint in names], dtype=float)
                )
        return cls(stamp, MappingProxyType(groups))


class Teleoperation:
    """
    Turn body-frame skeletons into one robot's targets, frame after frame.

    The parts are attributes a caller may replace between frames (solver_node rebuilds the
    imitators on a parameter change, each adopting its predecessor's state).

    :param imitator: The arms' imitation.
    :param head_and_hands: The head and grippers' imitation; None: none (the arms only, as the
        offline evaluation of the arms runs).
    :param gesture: The engage gesture (default: off).
    :param calibrator: Where the frames for the arm-length calibration go (default: a new one).
    """

    def __init__(
        self,
        imitator: RobotImitator,
        head_and_hands: HeadAndHandsImitator | None = None,
        gesture: EngageGesture | None = None,
        calibrator: Calibrator | None = None,
    ) -> None:
        self.imitator = imitator
        self.head_and_hands = head_and_hands
        self.gesture = gesture if gesture is not None else EngageGesture()
        self.calibrator = calibrator if calibrator is not None else Calibrator()
        self.gestures = 0
        """Engage gestures completed so far (also by frames that were then refused)."""

    @property
    def robot(self) -> Robot:
        """Return the robot the targets are for."""
        return self.imitator.robot

    def step(
        self, frame: SkeletonFrame, hand_offsets: Mapping[str, FloatArray] | None = None
    ) -> RobotTargets:
        """
        Imitate one skeleton.

        The frame is first kept for the calibration and given to the engage gesture (whether
        or not it can be solved), then the arms, the head and the grippers are solved.

        :param frame: Skeleton in the ``body`` frame.
        :param hand_offsets: Per arm name, an offset of its wrist target [m], robot base frame
            (:meth:`~pic_ros.imitation.RobotImitator.step`); None: no offset.
        :return: The targets by group, with what each part did.
        :raises pic_ros.exceptions.PicRosError: If the frame is refused (not in the body frame,
            a bad hand offset); the calibration and the gesture have seen it.
        """
        self.calibrator.add(frame)
        self.gestures += int(self.gesture.update(frame))
        arms = (
            self.imitator.step(frame) if hand_offsets is None
            else self.imitator.step(frame, hand_offsets=hand_offsets)
        )
        extra = None if self.head_and_hands is None else self.head_and_hands.step(frame)
        return RobotTargets(frame.stamp, MappingProxyType(self._groups(arms, extra)), arms, extra)

    def _groups(
        self, arms: ImitationStep, extra: HeadAndHandsStep | None
    ) -> dict[str, GroupTargets]:
        """Return the step's targets by group, in the robot's group order."""
        robot = self.robot
        found: dict[str, GroupTargets] = {}
        for name, step in arms.arms.items():
            found[name] = GroupTargets(tuple(robot.arms[name].joint_names), step.result.q)
        if arms.torso is not None:
            found[TORSO_GROUP] = GroupTargets((arms.torso.joint,), np.array([arms.torso.value]))
        if extra is None:
            return {name: found[name] for name in robot.groups if name in found}
        if extra.head is not None and robot.head is not None:
            found['head'] = GroupTargets(tuple(robot.head.joint_names), extra.head)
        for arm, values in extra.grippers.items():
            group = robot.grippers[arm].group
            found[group.name] = GroupTargets(tuple(group.joint_names), values)
        return {name: found[name] for name in robot.groups if name in found}
