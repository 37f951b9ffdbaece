"""Robot kinematics from URDF: joint model, serial chains, forward kinematics and Jacobians."""

from pic_ros.robot.kinematics.chain import KinematicChain
from pic_ros.robot.kinematics.robot_model import (
    Joint,
    JointLimits,
    JointType,
    load_robot_model,
    RobotModel,
)

__all__ = [
    'Joint',
    'JointLimits',
    'JointType',
    'KinematicChain',
    'RobotModel',
    'load_robot_model',
]
