"""
Motion: from a stream of solver joint targets to safe, smooth joint commands.

:class:`JerkLimitedGenerator` (the default) plans time-optimal commands within the position,
velocity, acceleration and jerk limits (:class:`MotionLimits`) whatever the targets, and
:class:`JointLimiter` rate-limits them within the first three, both behind one interface,
:class:`MotionGenerator` (:func:`make_motion_generator`); :class:`TargetPredictor` makes up
for the command delay; :class:`TrackingSupervisor` decides what to follow when the person is
tracked, lost or found again, and :class:`Engagement` whether the operator lets the robot follow
at all (engage, disengage, the latched emergency stop); :func:`planned_chunk` and
:func:`stream_chunk` pack the command for the joint_trajectory_controller.
:class:`~pic_ros.motion.commander.ArmCommander` puts them
together for the ``trajectory_publisher`` node. :class:`VariableAdmittance` lets the hand yield to
a push and return to the imitation target (Cartesian, before the solver).
"""

from pic_ros.motion.admittance import (
    AdmittanceConfig,
    AdmittanceInput,
    AdmittanceRole,
    AdmittanceStep,
    VariableAdmittance,
)
from pic_ros.motion.engagement import (
    Engagement,
    EngagementRequest,
    EngagementSource,
    EngagementState,
    Transition,
)
from pic_ros.motion.generator import (
    GeneratorConfig,
    GeneratorStep,
    JerkLimitedGenerator,
    PlanKind,
)
from pic_ros.motion.limiter import (
    DEFAULT_ACCELERATION_SCALE,
    DEFAULT_MAX_DT,
    JointLimiter,
    LimiterStep,
    MotionLimits,
    TargetStatus,
)
from pic_ros.motion.motion_generator import make_motion_generator, MotionGenerator
from pic_ros.motion.prediction import TargetPredictor
from pic_ros.motion.streaming import (
    DEFAULT_LEAD_PERIODS,
    duration_parts,
    planned_chunk,
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
    'AdmittanceConfig',
    'AdmittanceInput',
    'AdmittanceRole',
    'AdmittanceStep',
    'DEFAULT_ACCELERATION_SCALE',
    'DEFAULT_LEAD_PERIODS',
    'DEFAULT_MAX_DT',
    'Engagement',
    'EngagementRequest',
    'EngagementSource',
    'EngagementState',
    'GeneratorConfig',
    'GeneratorStep',
    'Guidance',
    'JerkLimitedGenerator',
    'JointLimiter',
    'LimiterStep',
    'MotionGenerator',
    'MotionLimits',
    'PlanKind',
    'TargetPredictor',
    'TargetStatus',
    'TrackingConfig',
    'TrackingState',
    'TrackingSupervisor',
    'TrajectoryChunk',
    'TrajectoryPoint',
    'Transition',
    'VariableAdmittance',
    'duration_parts',
    'make_motion_generator',
    'planned_chunk',
    'stream_chunk',
]
