"""Robots: description files, arms built from the URDF, and loading by name."""

from pic_ros.robot.arm import ArmModel
from pic_ros.robot.config import ArmSpec, load_robot_spec, RobotSpec
from pic_ros.robot.robot import load_robot, Robot

__all__ = ['ArmModel', 'ArmSpec', 'RobotSpec', 'Robot', 'load_robot', 'load_robot_spec']
