"""
One arm's command stream: joint targets in, safe trajectory chunks for its controller out.

:class:`ArmCommander` is what the trajectory publisher runs per arm controller, without ROS:

- **start**: nothing is sent before the arm's starting position is known -- the measured one
  (:meth:`ArmCommander.start_from`, from ``joint_states``) or, with ``wait_for_joint_states``
  false, the neutral pose -- nor before the first valid target;
- **limits**: every command stays inside the URDF position limits narrowed by a few mrad
  (:func:`~pic_ros.motion.limiter.position_margin`: clear of a drive's limit stop), the velocity
  limits (times ``velocity_scale``) and the robot file's acceleration limits (times
  ``acceleration_scale``), ruckig's within ``1 - limit_headroom`` of them
  (:func:`planned_limits`); ``motion_generator`` chooses how: ``ruckig``
  (:mod:`pic_ros.motion.generator`) plans a time-optimal trajectory to the moving target within
  the jerk limits too, from the state its previous plan reaches ``plan_ahead`` after the step,
  and streams it for ``lead_time`` from there (:func:`~pic_ros.motion.streaming.planned_chunk`:
  points with accelerations every 10 ms and where the jerk changes, so that the controller's
  quintic splines are the plan), after the points of the previous chunk from the step to the
  plan's start (:func:`bridge`), on the step's clock (``stamp_trajectories``): a chunk that
  arrives up to ``plan_ahead`` late finds the controller on its first segments and the new plan
  takes over without a seam; ``limiter`` (:mod:`pic_ros.motion.limiter`) rate-limits the
  command and streams it as it is now, stamped with the step's time;
- **prediction** (:mod:`pic_ros.motion.prediction`): while tracking, the target followed is the
  last one extrapolated along its filtered velocity to ``prediction_horizon`` past now, and the
  generator gets that velocity as the target's;
- **tracking loss** (:mod:`pic_ros.motion.tracking_loss`): no valid target for ``hold_timeout``
  -> hold; after ``neutral_timeout`` -> back to the neutral pose; targets again -> blend back in
  over ``blend_time``;
- **engagement** (:mod:`pic_ros.motion.engagement`): while not :attr:`ArmCommander.engaged`
  (the operator's clutch, or a latched emergency stop) the arm brakes to rest within its
  acceleration (and jerk) limits and holds there; targets are still taken (the prediction stays
  warm) but not followed. Before anything was commanded nothing is sent at all (the controller
  holds where the arm is). Once engaged, the arm blends in from where it is, as when the person
  is found again;
- **pace**: :meth:`ArmCommander.step` is called on each new target and from a timer at ``rate``;
  any step less than ``min_interval`` (default half a period) after the previous one is skipped
  (its target is taken by the next step), so a tracker slower than ``rate`` still gives a steady
  stream and targets that queued up while the process was starved do not leave in a burst;
  every step sends a command, holding and at neutral too;
- **time**: the caller's clock (sim time in replays); when it goes back (a looping replay) the
  arm starts over from its current command, as if no target had come yet.

Each step gives a :class:`~pic_ros.motion.streaming.TrajectoryChunk` (its last point
``lead_time`` ahead) or None when nothing is to be sent. The default generator and prediction
horizon were chosen by measurement: ``docs/method.md#motion-generation``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
import math
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt
from pic_ros.motion.generator import JerkLimitedGenerator
from pic_ros.motion.limiter import (
    ACCELERATION_SCALE,
    ArmLimitsSource,
    JointLimiter,
    MotionLimits,
    position_margin,
    TargetStatus,
    VELOCITY_SCALE,
)
from pic_ros.motion.prediction import PREDICTION_HORIZON, TargetPredictor
from pic_ros.motion.streaming import (
    LEAD_TIME,
    MIN_POINT_GAP,
    planned_chunk,
    PlannedState,
    POINT_SPACING,
    stream_chunk,
    TrajectoryChunk,
)
from pic_ros.motion.tracking_loss import (
    TRACKING_PARAMETERS,
    TrackingConfig,
    TrackingState,
    TrackingSupervisor,
)
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

RATE: Final = ParameterDef(
    'rate', 50.0,
    'Rate of the commands sent between tracker frames slower than it, and of the hold and '
    'neutral motions', unit='Hz', low=1.0, high=1000.0,
)
"""The trajectory publisher's ``rate`` (:attr:`CommanderConfig.rate`)."""

MIN_INTERVAL: Final = ParameterDef(
    'min_interval', 0.0,
    'Shortest time between two commands: a step sooner is skipped and its target taken by the '
    'next, so targets that queued while the process was starved do not leave in a burst (0: '
    'half the period of rate)', unit='s', low=0.0, high=1.0,
)
"""The trajectory publisher's ``min_interval`` (:attr:`CommanderConfig.min_interval`)."""

WAIT_FOR_JOINT_STATES: Final = ParameterDef(
    'wait_for_joint_states', True,
    'Start each arm from its measured position (joint_states); false starts from the neutral '
    'pose', read_only=True,
)
"""The trajectory publisher's ``wait_for_joint_states``."""

MOTION_GENERATORS: Final = ('ruckig', 'limiter')
"""The choices of ``motion_generator``."""

MOTION_GENERATOR: Final = ParameterDef(
    'motion_generator', 'ruckig',
    'How the commands follow the targets: ruckig (time-optimal, within the position, velocity, '
    'acceleration and jerk limits) or limiter (velocity and acceleration limits only)',
    choices=MOTION_GENERATORS,
)
"""The trajectory publisher's ``motion_generator`` (:attr:`CommanderConfig.motion_generator`)."""

STAMP_TRAJECTORIES: Final = ParameterDef(
    'stamp_trajectories', True,
    "Stamp each streamed trajectory with the time it was planned for on this node's clock (it "
    "must be the controller's: use_sim_time alike); false stamps 0, which shifts every "
    'trajectory by its transport delay',
)
"""The trajectory publisher's ``stamp_trajectories`` (:attr:`CommanderConfig`)."""

PLAN_AHEAD: Final = ParameterDef(
    'plan_ahead', 0.025,
    'With stamp_trajectories and ruckig: each plan starts this long after the step that made '
    'it, and its trajectory first repeats what the controller was last sent up to there, so '
    'that a trajectory arriving up to this late continues the command without a seam (it '
    'should exceed the transport delay plus the offset between the clocks; 0: the plan starts '
    'at the step)', unit='s', low=0.0, high=0.1,
)
"""The trajectory publisher's ``plan_ahead`` (:attr:`CommanderConfig.plan_ahead`)."""

LIMIT_HEADROOM: Final = ParameterDef(
    'limit_headroom', 0.05,
    'Share of the velocity, acceleration and jerk limits (after velocity_scale and '
    "acceleration_scale) left free for the controller's tracking error: ruckig plans within "
    '1 - limit_headroom of them, so a joint that follows the plan a little ahead or behind stays '
    'inside the limits', low=0.0, high=0.5,
)
"""The trajectory publisher's ``limit_headroom`` (:attr:`CommanderConfig.limit_headroom`)."""

COMMANDER_PARAMETERS: Final = (
    *TRACKING_PARAMETERS, MOTION_GENERATOR, VELOCITY_SCALE, ACCELERATION_SCALE,
    PREDICTION_HORIZON, LEAD_TIME, RATE, MIN_INTERVAL, WAIT_FOR_JOINT_STATES, STAMP_TRAJECTORIES,
    PLAN_AHEAD, LIMIT_HEADROOM,
)
"""Everything :meth:`CommanderConfig.from_parameters` reads."""


def bridge(
    sent: Sequence[PlannedState],
    now: float,
    start: float,
    motion: JerkLimitedGenerator,
    plan_start: float,
) -> list[PlannedState]:
    """
    Return the points that lead a new chunk from its step up to its plan's start.

    With ``plan_ahead`` ``D`` a step at ``now`` plans from the state the current plan reaches
    at ``start = now + D``. Its chunk first repeats what the controller was last sent: that
    chunk's last point at or before ``now`` and its points up to ``start``, at their times, and
    where it ended sooner, the current plan on to ``start`` (its jerk switches and every
    :data:`~pic_ros.motion.streaming.POINT_SPACING`). A controller that receives the new chunk
    up to ``D`` late is then on it already -- the same points, so the same splines -- and
    follows it as it is (as joint_trajectory_controller samples a trajectory that started
    before its arrival): no segment joins two plans.

    :param sent: The last chunk's points, on the absolute clock: ``(time [s], positions,
        velocities, accelerations)``, increasing times.
    :param now: The step's time [s].
    :param start: Where the new plan starts, ``now + D`` [s].
    :param motion: The generator before its step: its plan is the one the last chunk streamed.
    :param plan_start: The time of that plan's start [s].
    :return: The points, absolute times; empty when the last chunk starts after ``now`` (none
        sent yet) or ended before it (the stream stalled; the controller holds its last
        point): the chunk then starts from the command's state at ``now``.
    """
    if not sent or sent[0][0] > now or sent[-1][0] < now:
        return []
    first = max(index for index, point in enumerate(sent) if point[0] <= now)
    points = [point for point in sent[first:] if point[0] < start - MIN_POINT_GAP]
    if not points:  # a plan_ahead shorter than MIN_POINT_GAP: nothing to repeat
        return []
    end = points[-1][0]
    if sent[-1][0] < start - MIN_POINT_GAP:  # the last chunk ends sooner: the plan on
        switches = [plan_start + when for when in motion.breakpoints(start - plan_start)]
        grid = np.arange(end + POINT_SPACING, start - MIN_POINT_GAP, POINT_SPACING).tolist()
        times: list[float] = []
        for when in sorted(switches + grid):
            if end + MIN_POINT_GAP <= when < start - MIN_POINT_GAP and all(
                abs(when - kept) >= MIN_POINT_GAP for kept in times
            ):
                times.append(when)
        points += [(when, *motion.sample(when - plan_start)) for when in times]
    return points


def planned_limits(arm: ArmLimitsSource, config: CommanderConfig) -> MotionLimits:
    """
    Return the limits the commands of an arm are planned within.

    The velocity, acceleration and jerk limits of the arm scaled by ``velocity_scale`` and
    ``acceleration_scale`` (:meth:`~pic_ros.motion.limiter.MotionLimits.from_arm`), then by
    ``1 - limit_headroom``; the URDF position limits (the commander also keeps
    :func:`~pic_ros.motion.limiter.position_margin` inside them).

    :param arm: The arm.
    :param config: The commander's settings.
    :return: The limits.
    """
    limits = MotionLimits.from_arm(
        arm, config.acceleration_scale, velocity_scale=config.velocity_scale
    )
    return limits.scaled(1.0 - config.limit_headroom)


Motion = JointLimiter | JerkLimitedGenerator
"""The two ways of following the targets (``motion_generator``)."""


class CommandedArm(ArmLimitsSource, Protocol):
    """What :class:`ArmCommander` needs of an arm (an :class:`~pic_ros.robot.arm.ArmModel`)."""

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the joint names, in command order."""
        ...

    @property
    def neutral(self) -> FloatArray:
        """Return the neutral pose, shape (n,), [rad] or [m]."""
        ...


@dataclass(frozen=True)
class CommanderConfig:
    """
    Settings of :class:`ArmCommander` (each field is the parameter of the same name).

    :param tracking: Tracking-loss timing.
    :param motion_generator: ``ruckig`` or ``limiter`` (:data:`MOTION_GENERATORS`).
    :param velocity_scale: Fraction of the URDF velocity limits used.
    :param acceleration_scale: Fraction of the robot file's acceleration limits used.
    :param prediction_horizon: Extrapolation of the targets past now [s] (0: off).
    :param lead_time: ``time_from_start`` of the streamed point [s].
    :param rate: Rate of the timer steps [Hz].
    :param min_interval: Shortest time between two commands [s] (0: half the period).
    :param wait_for_joint_states: Start from the measured position, not the neutral pose.
    :param stamp_trajectories: Stamp each chunk with the ``now`` of its step (else 0).
    :raises ConfigError: If a value is out of range.
    """

    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    motion_generator: str = MOTION_GENERATOR.default
    velocity_scale: float = VELOCITY_SCALE.default
    acceleration_scale: float = ACCELERATION_SCALE.default
    prediction_horizon: float = PREDICTION_HORIZON.default
    lead_time: float = LEAD_TIME.default
    rate: float = RATE.default
    min_interval: float = MIN_INTERVAL.default
    wait_for_joint_states: bool = WAIT_FOR_JOINT_STATES.default
    stamp_trajectories: bool = STAMP_TRAJECTORIES.default
    plan_ahead: float = PLAN_AHEAD.default
    limit_headroom: float = LIMIT_HEADROOM.default

    def __post_init__(self) -> None:
        for item in COMMANDER_PARAMETERS:
            if item not in TRACKING_PARAMETERS:
                object.__setattr__(self, item.name, item.check(getattr(self, item.name)))

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> CommanderConfig:
        """
        Build the settings from parameter values (:data:`COMMANDER_PARAMETERS`).

        :param values: Values by parameter name; missing ones take their defaults.
        :return: The settings.
        :raises ConfigError: If a value is refused.
        """
        given = {item.name: values.get(item.name, item.default) for item in COMMANDER_PARAMETERS}
        own = {
            item.name: given[item.name]
            for item in COMMANDER_PARAMETERS
            if item not in TRACKING_PARAMETERS
        }
        return cls(tracking=TrackingConfig.from_parameters(given), **own)

    @property
    def period(self) -> float:
        """Return the timer period, ``1 / rate`` [s]."""
        return 1.0 / self.rate

    @property
    def spacing(self) -> float:
        """Return the shortest time between two commands: ``min_interval`` or half the period."""
        return self.min_interval if self.min_interval > 0.0 else 0.5 * self.period


class ArmCommander:
    """
    Limit, supervise and pace the commands of one arm controller (see the module docstring).

    Counters for diagnostics: :attr:`targets` (target messages that named the arm's joints),
    :attr:`rejected` (incomplete, non-finite or stale ones), :attr:`clamped` (accepted but
    outside the position limits), :attr:`published` (chunks returned) and
    :attr:`clock_restarts`.

    :param arm: The arm (joint names, limits, neutral pose).
    :param config: Settings.
    :param engaged: Follow the targets from the start; False (the default) holds still until
        :attr:`engaged` is set.
    """

    def __init__(
        self, arm: CommandedArm, config: CommanderConfig | None = None, *, engaged: bool = False
    ) -> None:
        self._arm = arm
        self._config = config if config is not None else CommanderConfig()
        self._engaged = bool(engaged)
        self._supervisor = TrackingSupervisor(arm.neutral, self._config.tracking)
        self._predictor = self._make_predictor(self._config)
        self._motion: Motion | None = None
        self._last_step: float | None = None
        self._last_now = -math.inf
        self._sent: list[PlannedState] = []
        self._plan_start: float | None = None
        self._undo: tuple[float | None, list[PlannedState], float | None, int] | None = None
        self._undo_state: tuple[FloatArray, FloatArray] | None = None
        self._braking = False
        self.targets = 0
        self.rejected = 0
        self.clamped = 0
        self.published = 0
        self.clock_restarts = 0
        if not self._config.wait_for_joint_states:
            self._motion = self._make_motion(arm.neutral, self._config)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the arm's joint names, in command order."""
        return tuple(self._arm.joint_names)

    @property
    def config(self) -> CommanderConfig:
        """Return the settings."""
        return self._config

    @config.setter
    def config(self, config: CommanderConfig) -> None:
        """Change the settings at run time, keeping the state, the command and any blend."""
        motion = self._motion
        old = self._config
        if motion is not None and (
            config.velocity_scale != old.velocity_scale
            or config.acceleration_scale != old.acceleration_scale
            or config.motion_generator != old.motion_generator
            or config.limit_headroom != old.limit_headroom
        ):
            motion = self._make_motion(motion.position, config, motion)
        if config.prediction_horizon != old.prediction_horizon or (
            config.velocity_scale != old.velocity_scale
            or config.limit_headroom != old.limit_headroom
        ):
            self._predictor = self._make_predictor(config)
        self._supervisor.config = config.tracking
        self._motion = motion
        self._config = config

    @property
    def engaged(self) -> bool:
        """Return whether the arm follows the targets (else it brakes and holds)."""
        return self._engaged

    @engaged.setter
    def engaged(self, engaged: bool) -> None:
        """
        Engage or disengage from the next step on.

        Disengaging brakes within the limits and holds; engaging blends in from where the arm is.
        """
        self._engaged = bool(engaged)

    @property
    def started(self) -> bool:
        """Return whether the starting position is known (commands can be made)."""
        return self._motion is not None

    @property
    def state(self) -> TrackingState:
        """Return the tracking state after the last step."""
        return self._supervisor.state

    @property
    def position(self) -> FloatArray | None:
        """Return the current command, shape (n,) (None before the start)."""
        return None if self._motion is None else self._motion.position

    @property
    def velocity(self) -> FloatArray | None:
        """Return the current commanded velocity, shape (n,) (None before the start)."""
        return None if self._motion is None else self._motion.velocity

    def start_from(self, position: npt.ArrayLike) -> bool:
        """
        Start from a measured position, once (later calls change nothing).

        :param position: Joint positions in :attr:`joint_names` order, shape (n,).
        :return: Whether this call started the arm.
        """
        if self._motion is not None:
            return False
        self._motion = self._make_motion(position, self._config)
        return True

    def covers(self, values: Mapping[str, float]) -> bool:
        """
        Return whether a target message names any joint of this arm.

        :param values: Target positions by joint name.
        :return: True if at least one of the arm's joints is given.
        """
        return any(name in values for name in self._arm.joint_names)

    def on_target(self, now: float, values: Mapping[str, float]) -> TargetStatus:
        """
        Take a target message for this arm (every joint must be given and finite).

        :param now: Arrival time on the caller's clock [s].
        :param values: Target positions by joint name, [rad] or [m].
        :return: ACCEPTED (or CLAMPED when outside the position limits, which the motion
            generator clamps), or why it was dropped.
        """
        self._check_clock(now)
        self.targets += 1
        if not all(name in values for name in self._arm.joint_names):
            self.rejected += 1  # on the topic, a non-finite value is left out
            return TargetStatus.WRONG_SHAPE
        status = self._supervisor.on_target(now, [values[n] for n in self._arm.joint_names])
        if status.rejected:
            self.rejected += 1
            return status
        target = self._supervisor.last_target
        assert target is not None  # just accepted
        self._predictor.update(now, target)
        if np.any((target < self._arm.lower) | (target > self._arm.upper)):
            self.clamped += 1
            return TargetStatus.CLAMPED
        return status

    def step(self, now: float) -> TrajectoryChunk | None:
        """
        Advance the command to ``now`` and return the chunk to send, if any.

        :param now: Current time on the caller's clock [s].
        :return: The chunk for the controller, or None (not started, no target yet, a skipped
            tick, or not engaged before anything was sent). Once a chunk was sent, every other
            step sends one, holding, disengaged and at neutral too, so a controller with a
            command timeout never sees the stream stop.
        """
        self._check_clock(now)
        motion = self._motion
        if motion is None:
            return None
        if self._last_step is not None and now - self._last_step < self._config.spacing:
            return None  # no bursts: a target that came sooner is taken by the next step
        guidance = self._supervisor.step(now, motion.position, engaged=self._engaged)
        if guidance.state is TrackingState.WAITING or (
            guidance.state is TrackingState.DISENGAGED and self._last_step is None
        ):
            return None  # nothing commanded yet: the controller holds where the arm is
        self._undo = (self._last_step, self._sent, self._plan_start, self.published)
        self._undo_state = (motion.position, motion.velocity)
        braking = self._braking
        # braking again from the state the step reached (a plan drawn further for ruckig; the
        # limiter from its state before the step, which it integrates anew)
        keep = braking and isinstance(motion, JerkLimitedGenerator)
        dt = 0.0 if self._last_step is None or keep else now - self._last_step
        self._last_step = now
        following = not braking and guidance.state in (
            TrackingState.TRACKING, TrackingState.BLENDING
        )
        ahead = self._plan_ahead()
        reference = (
            self._predictor.predict(now + ahead, guidance.reference)
            if following else guidance.reference
        )
        lead = self._config.lead_time
        stamp = max(now + ahead, 0.0) if self._config.stamp_trajectories else 0.0
        if isinstance(motion, JerkLimitedGenerator):
            repeated: list[PlannedState] = []
            if ahead > 0.0:
                begun = self._plan_start if self._plan_start is not None else now
                repeated = bridge(self._sent, now, now + ahead, motion, begun) or [
                    (now, *motion.sample(max(now - begun, 0.0)))  # the first chunk: at rest
                ]
            motion.step(
                reference, dt, guidance.speed_scale,
                self._predictor.velocity if following else None,
                hold=braking
                or guidance.state in (TrackingState.HOLDING, TrackingState.DISENGAGED),
            )
            states: list[PlannedState] = []
            if repeated and repeated[0][0] > MIN_POINT_GAP:  # stamped a hair before the first
                stamp = repeated[0][0] - MIN_POINT_GAP
                states = [(when - stamp, q, v, a) for when, q, v, a in repeated]
                states.append((now + ahead - stamp, *motion.sample(0.0)))
            chunk = planned_chunk(
                self._arm.joint_names, motion.sample, lead, motion.breakpoints(lead), stamp=stamp,
                start_point=ahead > 0.0 and not states, bridge=states,
            )
            if ahead > 0.0:
                self._plan_start = now + ahead
                self._sent = [
                    (stamp + p.time_from_start, p.positions, p.velocities, p.accelerations)
                    for p in chunk.points if p.accelerations is not None
                ]
        else:
            target = motion.position if braking else reference
            limited = motion.step(target, dt, guidance.speed_scale)
            chunk = stream_chunk(
                self._arm.joint_names, limited.position, limited.velocity, lead, stamp=stamp
            )
        self.published += 1
        return chunk

    def brake(self, now: float) -> TrajectoryChunk | None:
        """
        Replace the chunk of the step just made at ``now`` by one that brakes to a stop.

        For the trajectory publisher's collision guard (:mod:`pic_ros.motion.guard`): the
        command stays where that step took it (the state at ``now`` on the plan last sent), and
        the new plan brakes from there to rest within the acceleration and jerk limits instead
        of going on to the target; the next steps follow the targets again.

        :param now: The time of the step just made [s].
        :return: The braking chunk, or None when no chunk was made at ``now``.
        """
        motion = self._motion
        if motion is None or self._last_step != now or self._undo is None:
            return None
        assert self._undo_state is not None  # set with _undo
        self._last_step, self._sent, self._plan_start, self.published = self._undo
        if isinstance(motion, JerkLimitedGenerator):
            motion.reset(motion.position, motion.velocity, motion.acceleration)
        else:
            motion.reset(*self._undo_state)
        self._braking = True
        try:
            return self.step(now)
        finally:
            self._braking = False

    def _plan_ahead(self) -> float:
        """Return how long after a step its trajectory starts [s] (ruckig and stamps only)."""
        config = self._config
        planned = config.stamp_trajectories and isinstance(self._motion, JerkLimitedGenerator)
        return config.plan_ahead if planned else 0.0

    def _check_clock(self, now: float) -> None:
        """Start over from the current command if the clock went back."""
        if now < self._last_now:
            self.clock_restarts += 1
            self._supervisor.reset()
            self._predictor.reset()
            self._last_step = None
            self._sent = []
            self._plan_start = None
            if self._motion is not None:
                self._motion.reset(self._motion.position)  # the controller stopped there
        self._last_now = now

    def _make_predictor(self, config: CommanderConfig) -> TargetPredictor:
        velocity = planned_limits(self._arm, config).velocity
        return TargetPredictor(velocity, config.prediction_horizon)

    def _make_motion(
        self, position: npt.ArrayLike, config: CommanderConfig, state: Motion | None = None
    ) -> Motion:
        """Build the configured generator at a position (keeping a running one's motion)."""
        arm = self._arm
        limits = planned_limits(arm, config).narrowed(
            position_margin(arm.lower, arm.upper, arm.velocity)
        )
        start = limits.clamp(position)
        motion: Motion = (
            JerkLimitedGenerator(limits, start)
            if config.motion_generator == 'ruckig'
            else JointLimiter(limits, start)
        )
        if state is not None:
            velocity = np.clip(state.velocity, -limits.velocity, limits.velocity)
            if isinstance(motion, JerkLimitedGenerator):
                acceleration = (
                    state.acceleration if isinstance(state, JerkLimitedGenerator) else None
                )
                motion.reset(start, velocity, acceleration)
            else:
                motion.reset(start, velocity)
        return motion
