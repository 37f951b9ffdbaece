"""
Motion: from a stream of solver joint targets to safe, smooth joint commands.

:class:`JointLimiter` keeps the command inside the position, velocity and acceleration limits
(:class:`MotionLimits`) whatever the targets; :class:`TrackingSupervisor` decides what to follow
when the person is tracked, lost or found again; :func:`stream_chunk` packs the command for the
joint_trajectory_controller. The ``trajectory_publisher`` node wires them together.
"""

from pic_ros.motion.limiter import (
    DEFAULT_ACCELERATION_SCALE,
    DEFAULT_MAX_DT,
    JointLimiter,
    LimiterStep,
    MotionLimits,
    TargetStatus,
)
from pic_ros.motion.streaming import (
    DEFAULT_LEAD_PERIODS,
    duration_parts,
    stream_chunk,
    TrajectoryChunk,
    TrajectoryPoint,
)
from pic_ros.motion.tracking_loss import (
    Guidance,
    TrackingConfig,
    TrackingState,
    TrackingSupervisor,
)

__all__ = [
    'DEFAULT_ACCELERATION_SCALE',
    'DEFAULT_LEAD_PERIODS',
    'DEFAULT_MAX_DT',
    'Guidance',
    'JointLimiter',
    'LimiterStep',
    'MotionLimits',
    'TargetStatus',
    'TrackingConfig',
    'TrackingState',
    'TrackingSupervisor',
    'TrajectoryChunk',
    'TrajectoryPoint',
    'duration_parts',
    'stream_chunk',
]
