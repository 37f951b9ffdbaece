"""
Correspondences: how the person's arm becomes targets for each robot arm.

Importing this package registers the built-in correspondences (``direction``, ``position``);
:func:`make_correspondence` creates one by name.
"""

from pic_ros.correspondence import direction, position  # noqa: F401 - registers them.
from pic_ros.correspondence.base import (
    Correspondence,
    correspondence_names,
    DEFAULT_CORRESPONDENCE,
    make_correspondence,
    MappingConfig,
    register_correspondence,
    RobotArmGeometry,
    unregister_correspondence,
)
from pic_ros.correspondence.bone_lengths import BoneLengthEstimator
from pic_ros.correspondence.mapping import human_side_for, MappingMode
from pic_ros.correspondence.targets import ArmTargets, TargetKind
from pic_ros.correspondence.user_profile import (
    ArmLengths,
    CalibrationConfig,
    Calibrator,
    load_user_profile,
    UserProfile,
)

__all__ = [
    'ArmLengths',
    'ArmTargets',
    'BoneLengthEstimator',
    'CalibrationConfig',
    'Calibrator',
    'Correspondence',
    'DEFAULT_CORRESPONDENCE',
    'MappingConfig',
    'MappingMode',
    'RobotArmGeometry',
    'TargetKind',
    'UserProfile',
    'correspondence_names',
    'human_side_for',
    'load_user_profile',
    'make_correspondence',
    'register_correspondence',
    'unregister_correspondence',
]
