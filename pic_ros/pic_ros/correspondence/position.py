"""
The ``position`` correspondence: the person's arm scaled uniformly, hand at the scaled wrist.

The human shoulder is pinned to the robot's shoulder landmark and the arm is scaled by
``robot arm length / human arm length`` (shoulder -> elbow + elbow -> wrist): directions are kept,
lengths scale, and the wrist target is the place where the person's hand would be if the person
had the robot's reach. Use it when the hand's position matters (e.g. reaching a marked point);
the robot's elbow angle then follows from its own proportions and differs from the person's
whenever the two arms' upper-arm / forearm ratios differ.

The human arm length comes, in this order, from a fixed ``scale``, from a user profile measured
with the calibration pose (:mod:`pic_ros.correspondence.user_profile`), or from the running
estimate of :class:`~pic_ros.correspondence.bone_lengths.BoneLengthEstimator`, which learns from
every valid frame and resists foreshortening and outliers.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from pic_ros.correspondence.base import (
    Correspondence,
    MappingConfig,
    register_correspondence,
    RobotArmGeometry,
)
from pic_ros.correspondence.bone_lengths import BoneLengthEstimator
from pic_ros.correspondence.mapping import arm_in_robot_axes
from pic_ros.correspondence.targets import ArmTargets, TargetKind
from pic_ros.skeleton import SkeletonFrame


@register_correspondence('position')
class PositionCorrespondence(Correspondence):
    """
    Scale the human arm uniformly so that the hand lands at the scaled human wrist.

    :param config: Mapping settings (``scale``, ``profile``).
    :param robot: The robot arm.
    """

    def __init__(self, config: MappingConfig, robot: RobotArmGeometry) -> None:
        super().__init__(config, robot)
        self._estimator = BoneLengthEstimator(bones=2)

    def reset(self) -> None:
        """Forget the learnt bone lengths."""
        self._estimator.reset()

    def adopt(self, other: Correspondence) -> None:
        """
        Continue another position correspondence's length estimate.

        :param other: The correspondence being replaced.
        """
        if isinstance(other, PositionCorrespondence) and other.human_side is self.human_side:
            self._estimator.copy_from(other._estimator)

    @property
    def scale(self) -> float | None:
        """Return the factor in use; ``None`` while there is nothing to measure it from."""
        if self.config.scale is not None:
            return self.config.scale
        robot_length = self.robot.upper_arm + self.robot.forearm
        if self.config.profile is not None:
            return robot_length / self.config.profile.arms[self.human_side].total
        lengths = self._estimator.lengths()
        return None if lengths is None else robot_length / float(lengths.sum())

    def status(self) -> Mapping[str, object]:
        """
        Return the scale in use and where it comes from.

        :return: ``scale`` (number or ``measuring``) and ``scale_source``.
        """
        scale = self.scale
        if self.config.scale is not None:
            source = 'fixed'
        elif self.config.profile is not None:
            source = f'user profile {self.config.profile.name}'.strip()
        else:
            source = f'learnt from {int(self._estimator.samples.min())} frames'
        return {
            'scale': 'measuring' if scale is None else round(scale, 4),
            'scale_source': source,
        }

    def _place(self, frame: SkeletonFrame) -> ArmTargets | None:
        elbow, wrist = arm_in_robot_axes(frame, self.human_side, self.config.mode)
        self._estimator.observe((np.linalg.norm(elbow), np.linalg.norm(wrist - elbow)))
        scale = self.scale
        if scale is None:
            return None
        shoulder = self.robot.shoulder
        return ArmTargets(
            shoulder=shoulder.copy(),
            elbow=shoulder + scale * elbow,
            wrist=shoulder + scale * wrist,
            kind=TargetKind.POSITION,
            scale=scale,
        )
