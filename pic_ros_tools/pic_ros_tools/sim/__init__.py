"""
Simulation: MuJoCo physics of the project's URDFs, driven like ros2_control's JTC.

:mod:`pic_ros_tools.sim.trajectory` is numpy (the joint_trajectory_controller semantics; its
sampling, :mod:`pic_ros_tools.sim.plan_state`, compiled by numba when installed);
:mod:`pic_ros_tools.sim.mujoco_robot` imports mujoco only when a :class:`SimRobot` is made, so
importing this package does not need mujoco.
"""

from pic_ros.motion.streaming import Interpolation
from pic_ros_tools.sim.base_drive import BaseDrive
from pic_ros_tools.sim.config import SimConfig
from pic_ros_tools.sim.frame_recorder import FrameRecorder
from pic_ros_tools.sim.mujoco_robot import Capsule, SimRobot, Wrench
from pic_ros_tools.sim.offscreen import RenderError
from pic_ros_tools.sim.trajectory import (
    FollowerConfig,
    JointCommand,
    Trajectory,
    TrajectoryFollower,
    TrajectoryStatus,
    Verdict,
    Waypoint,
)

__all__ = [
    'BaseDrive',
    'Capsule',
    'FollowerConfig',
    'FrameRecorder',
    'Interpolation',
    'JointCommand',
    'RenderError',
    'SimConfig',
    'SimRobot',
    'Trajectory',
    'TrajectoryFollower',
    'TrajectoryStatus',
    'Verdict',
    'Waypoint',
    'Wrench',
]
