"""
The ``direction`` correspondence: the person's bone directions at the robot's own bone lengths.

The robot's elbow landmark is placed along the human upper-arm direction at the robot's
shoulder -> elbow landmark distance, and its wrist landmark along the human forearm direction at
the robot's elbow -> wrist distance, from the robot's shoulder landmark (the Cartesian
correspondence of the TIAGo whole-body teleoperation paper, which scales each link to the robot's
link length). The targets therefore keep the person's upper-arm and forearm directions and
elbow angle exactly, form a chain the robot's point chain can take, and do not depend on any
estimate of the person's size: a tall and a short person making the same gesture give the same
targets. What is given up is the hand *position*: the robot's hand is where the robot's arm puts
it, not at a scaled copy of the person's hand.
"""

from __future__ import annotations

import numpy as np
from pic_ros.correspondence.base import Correspondence, register_correspondence
from pic_ros.correspondence.mapping import arm_in_robot_axes
from pic_ros.correspondence.targets import ArmTargets, TargetKind
from pic_ros.skeleton import MIN_BONE_LENGTH, SkeletonFrame


@register_correspondence('direction')
class DirectionCorrespondence(Correspondence):
    """Keep each human bone's direction; use the robot's landmark distances."""

    def _place(self, frame: SkeletonFrame) -> ArmTargets | None:
        elbow, wrist = arm_in_robot_axes(frame, self.human_side, self.config.mode)
        forearm = wrist - elbow
        upper_length = float(np.linalg.norm(elbow))
        fore_length = float(np.linalg.norm(forearm))
        if upper_length < MIN_BONE_LENGTH or fore_length < MIN_BONE_LENGTH:
            return None
        shoulder = self.robot.shoulder
        robot_elbow = shoulder + (self.robot.upper_arm / upper_length) * elbow
        robot_wrist = robot_elbow + (self.robot.forearm / fore_length) * forearm
        return ArmTargets(
            shoulder=shoulder.copy(),
            elbow=robot_elbow,
            wrist=robot_wrist,
            kind=TargetKind.SHAPE,
            scale=None,
        )
