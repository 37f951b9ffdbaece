"""
pic_ros: robot arm teleoperation by human pose imitation.

The core (this package minus :mod:`pic_ros.ros`) needs only numpy and small pure libraries; it
loads robots from URDF + YAML, turns tracker skeletons into body-frame skeletons, places them on
robot arms (a correspondence: the person's bone directions, or their scaled positions) and
solves them with FABRIK, PIC or PICs(η) (Gonzalez & Wachs, *Pose Imitation Constraints for
Collaborative Robots*), returning joint angles inside the URDF limits.
"""

from pic_ros.correspondence import (
    ArmTargets,
    correspondence_names,
    MappingConfig,
    MappingMode,
    TargetKind,
    UserProfile,
)
from pic_ros.exceptions import ChainError, ConfigError, PicRosError, RecordingError, SkeletonError
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.imitation import RobotImitator
from pic_ros.robot import ArmModel, load_robot, Robot
from pic_ros.skeleton import HumanJoint, Side, SkeletonFrame
from pic_ros.solvers import ArmSolveResult, make_solver, SolverConfig, Termination

__all__ = [
    'ArmModel',
    'ArmSolveResult',
    'ArmTargets',
    'ChainError',
    'ConfigError',
    'HumanJoint',
    'MappingConfig',
    'MappingMode',
    'PicRosError',
    'ProcessingConfig',
    'RecordingError',
    'Robot',
    'RobotImitator',
    'Side',
    'SkeletonError',
    'SkeletonFrame',
    'SkeletonProcessor',
    'SolverConfig',
    'TargetKind',
    'Termination',
    'UserProfile',
    'correspondence_names',
    'load_robot',
    'make_solver',
]
