"""
Which of the person's arms drives which robot arm, and in which axes.

The body-centred human frame and the robot base frame share their axes (REP-103: x forward, y
left, z up), as if the person stood in the robot's place. Two assignments:

- ``same_side``: the person's right arm drives the robot's right arm (what the PIC paper does);
- ``mirror``: face to face; the person's right arm drives the robot's left arm and the motion is
  reflected through the robot's sagittal plane (y -> -y), so a person raising their right hand to
  their right sees the robot raise its left hand to its left.
"""

from __future__ import annotations

import enum
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.skeleton import Side, SkeletonFrame

FloatArray = npt.NDArray[np.float64]

MIRROR_REFLECTION: Final = np.diag([1.0, -1.0, 1.0])
"""Reflection through the sagittal (x-z) plane, used by the ``mirror`` mapping."""
MIRROR_REFLECTION.setflags(write=False)


class MappingMode(enum.Enum):
    """How the person's arms are assigned to the robot's arms."""

    SAME_SIDE = 'same_side'
    MIRROR = 'mirror'


def human_side_for(robot_side: Side, mode: MappingMode) -> Side:
    """
    Return which of the person's arms drives a robot arm.

    :param robot_side: Side of the robot arm.
    :param mode: Mapping mode.
    :return: The person's arm side.
    """
    return robot_side if mode is MappingMode.SAME_SIDE else robot_side.other


def arm_in_robot_axes(frame: SkeletonFrame, side: Side, mode: MappingMode) -> FloatArray:
    """
    Return one human arm relative to its shoulder, in the robot base frame's axes.

    :param frame: Skeleton in the ``body`` frame.
    :param side: The person's arm.
    :param mode: Mapping mode (``mirror`` reflects y).
    :return: Shoulder -> elbow and shoulder -> wrist vectors, shape (2, 3), [m], robot base-frame
        axes (the person's own bone lengths).
    """
    shoulder, elbow, wrist = frame.arm(side)
    relative = np.stack((elbow - shoulder, wrist - shoulder))
    if mode is MappingMode.MIRROR:
        relative = relative @ MIRROR_REFLECTION
    return relative
