"""
One arm's command stream: joint targets in, safe trajectory chunks for its controller out.

:class:`ArmCommander` is what the trajectory publisher runs per arm controller, without ROS:

- **start**: nothing is sent before the arm's starting position is known -- the measured one
  (:meth:`ArmCommander.start_from`, from ``joint_states``) or, with ``wait_for_joint_states``
  false, the neutral pose -- nor before the first valid target; after a measured start the
  first command takes the controller from the command it holds to that position (kept inside
  the range the commands keep: an arm at a URDF limit is moved inside it), rest to rest within
  its limits, and the plans wait for it (:meth:`ArmCommander._enter`);
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
  a step with a new target less than ``min_interval`` (default half a period) after the last
  step that took one is skipped (its target is taken by the next step), and so is a step
  without one that soon after any step. A tracker slower than ``rate`` still gives a steady
  stream, a timer's step never holds a new target back (at 30 Hz against a 50 Hz timer, half
  the targets waited 10-20 ms for the next tick when every step counted), and targets that
  queued up while the process was starved do not leave in a burst. While the targets come at
  least as often as the ticks, a tick is also skipped when the next target is due by the next
  tick and the plan last sent still covers that tick and ``plan_ahead`` after it (ruckig: the
  tick would only plan again toward the same target; 39 % fewer chunks on the demo at
  30 Hz). Every step sends a command, holding and at neutral too;
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
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion.generator import JerkLimitedGenerator
from pic_ros.motion.limiter import (
    ACCELERATION_SCALE,
    ArmLimitsSource,
    MotionLimits,
    position_margin,
    TargetStatus,
    VELOCITY_SCALE,
)
from pic_ros.motion.motion_generator import (
    make_motion_generator,
    MOTION_GENERATORS,
    MotionGenerator,
)
from pic_ros.motion.prediction import PREDICTION_HORIZON, TargetPredictor
from pic_ros.motion.streaming import (
    LATE_WINDOW,
    LEAD_TIME,
    limit_breach,
    load_segments,
    MIN_POINT_GAP,
    planned_chunk,
    PlannedState,
    sent_time,
    state_at,
    stream_chunk,
    TrajectoryChunk,
    TrajectoryPoint,
)
from pic_ros.motion.tracking_loss import (
    Guidance,
    TRACKING_PARAMETERS,
    TrackingConfig,
    TrackingState,
    TrackingSupervisor,
)
from pic_ros.robot.joint_group import CommandedJoints
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

RATE: Final = ParameterDef(
    'rate', 50.0,
    'Rate of the commands sent between tracker frames slower than it, and of the hold and '
    'neutral motions; at least 1 / (plan_ahead + lead_time) (1 / lead_time for the limiter), '
    'so that the next command comes before the last one runs out (refused below)',
    unit='Hz', low=1.0, high=1000.0,
)
"""The trajectory publisher's ``rate`` (:attr:`CommanderConfig.rate`)."""

MIN_INTERVAL: Final = ParameterDef(
    'min_interval', 0.0,
    'Shortest time between two commands that take new targets (and from any command to a '
    "timer's): a step sooner is skipped and its target taken by the next, so targets that "
    'queued while the process was starved do not leave in a burst (0: half the period of '
    'rate)', unit='s', low=0.0, high=1.0,
)
"""The trajectory publisher's ``min_interval`` (:attr:`CommanderConfig.min_interval`)."""

WAIT_FOR_JOINT_STATES: Final = ParameterDef(
    'wait_for_joint_states', True,
    'Start each arm from its measured position (joint_states); false starts from the neutral '
    'pose', read_only=True,
)
"""The trajectory publisher's ``wait_for_joint_states``."""

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

MAX_PLAN_AHEAD: Final = ParameterDef(
    'max_plan_ahead', 0.12,
    'Largest plan_ahead when the delays this node measures (its own scheduling and publishing, '
    'the age of joint_states) rise above plan_ahead on a busy host: plans start later, so that '
    'a trajectory arriving that late still continues the command (a lag of the motion instead '
    'of a seam); at or below plan_ahead: plan_ahead is fixed', unit='s', low=0.0, high=1.0,
)
"""The trajectory publisher's ``max_plan_ahead`` (:attr:`CommanderConfig.max_plan_ahead`)."""

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
    PLAN_AHEAD, MAX_PLAN_AHEAD, LIMIT_HEADROOM,
)
"""Everything :meth:`CommanderConfig.from_parameters` reads."""


def bridge(
    sent: Sequence[PlannedState],
    now: float,
    start: float,
    state_now: tuple[FloatArray, FloatArray, FloatArray],
) -> list[PlannedState]:
    """
    Return the points that lead a new chunk from its step up to its plan's start.

    With ``plan_ahead`` ``D`` a step at ``now`` plans from the state the controller reaches at
    ``start = now + D`` on what it was last sent. Its chunk first repeats that trajectory: its
    last point at or before ``now`` and its points up to ``start``, at their times. A controller
    that receives the new chunk up to ``D`` late is then on it already -- the same points, so
    the same splines -- and follows it as it is (as joint_trajectory_controller samples a
    trajectory that started before its arrival): no segment joins two plans. The last chunk
    always ends at rest (its braking tail, :func:`~pic_ros.motion.streaming.planned_chunk`), so
    a step after it ran out finds the controller at rest where it stopped.

    :param sent: The last chunk's points, on the absolute clock: ``(time [s], positions,
        velocities, accelerations)``, increasing times.
    :param now: The step's time [s].
    :param start: Where the new plan starts, ``now + D`` [s].
    :param state_now: The command on ``sent`` at ``now`` (:func:`state_at`).
    :return: The points, absolute times: from ``(now, state_now)`` when nothing was sent, the
        last chunk had ended, or the command is at rest at ``now`` (nothing earlier to repeat).
    """
    position, velocity, acceleration = state_now
    at_rest = not (np.any(velocity != 0.0) or np.any(acceleration != 0.0))
    earlier = [index for index, point in enumerate(sent) if point[0] <= now]
    if not earlier or sent[-1][0] <= now or at_rest:
        later = [
            point for point in sent if now + MIN_POINT_GAP <= point[0] < start - MIN_POINT_GAP
        ]
        return [(now, position, velocity, acceleration), *later]
    return [point for point in sent[earlier[-1]:] if point[0] < start - MIN_POINT_GAP]


def _moving(state: tuple[FloatArray, FloatArray, FloatArray]) -> bool:
    """Return whether a command state ``(positions, velocities, accelerations)`` is moving."""
    return bool(np.any(state[1] != 0.0) or np.any(state[2] != 0.0))


def minimum_rate(config: CommanderConfig) -> float:
    """
    Return the slowest timer ``rate`` the motion generator can bridge [Hz].

    A step plans up to ``plan_ahead + lead_time`` past itself (``lead_time`` without a plan
    ahead: the limiter, or ruckig without stamps): a next step later than that finds the
    controller past the plan, braking to rest (ruckig) or holding the point (the limiter), so
    the timer must come sooner, and so must ``min_interval``.

    :param config: The settings.
    :return: ``1 / (plan_ahead + lead_time)`` (or ``1 / lead_time``) [Hz].
    """
    planned = config.stamp_trajectories and config.motion_generator == 'ruckig'
    return 1.0 / (config.lead_time + (config.plan_ahead if planned else 0.0))


ENTRY_WAIT: Final = 1.0
"""
Longest wait for ``joint_states`` to show a group at the end of its move into the range [s],
after the move would have ended had it arrived at once (:meth:`ArmCommander.observe`): the move
is stamped 0 and starts when it arrives, so the first plan, which starts where it ends, waits
for it. A robot whose joint never gets that close (held off by a load) starts after this.
"""

ENTRY_REACHED: Final = 0.1
"""The share of the move into the range (its largest joint move) still left, on every joint, when
``joint_states`` counts it done."""

ENTRY_CLOSE: Final = 1e-4
"""Distance to the end of the move into the range at which ``joint_states`` always counts it
done [rad] or [m]: a controller holds its joints within about this of their command (a servo's
error, a sag), also those the move left where they were."""

NO_TARGET_TIMES: Final = (-math.inf, -math.inf)
"""Arrivals of the last two targets before any (:meth:`ArmCommander._tick_can_wait`)."""


def entry_time(distance: npt.ArrayLike, limits: MotionLimits) -> float:
    """
    Return how long a rest-to-rest quintic over ``distance`` takes within the limits [s].

    The quintic a controller runs between two points at rest (joint_trajectory_controller's
    interpolation) peaks at ``1.875 d / T`` in velocity, ``5.774 d / T^2`` in acceleration and
    ``60 d / T^3`` in jerk, per joint over a distance ``d`` in a time ``T``.

    :param distance: Per joint, how far [rad] or [m].
    :param limits: The velocity, acceleration and (if any) jerk limits.
    :return: The shortest ``T`` that keeps every joint within them (0 for no distance).
    """
    d = np.abs(np.asarray(distance, dtype=float))
    times = [1.875 * d / limits.velocity, np.sqrt(10.0 / math.sqrt(3.0) * d / limits.acceleration)]
    if limits.jerk is not None:
        times.append(np.cbrt(60.0 * d / limits.jerk))
    return float(np.max(times)) if d.size else 0.0


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


CommandedArm = CommandedJoints
"""What :class:`ArmCommander` needs of an arm (an :class:`~pic_ros.robot.arm.ArmModel`)."""


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
    :param plan_ahead: How long after its step a ruckig plan starts, at least [s].
    :param max_plan_ahead: The most it starts after its step with a delay allowance [s].
    :param limit_headroom: Share of the limits ruckig leaves free for tracking errors.
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
    max_plan_ahead: float = MAX_PLAN_AHEAD.default
    limit_headroom: float = LIMIT_HEADROOM.default

    def __post_init__(self) -> None:
        for item in COMMANDER_PARAMETERS:
            if item not in TRACKING_PARAMETERS:
                object.__setattr__(self, item.name, item.check(getattr(self, item.name)))
        slowest = minimum_rate(self)
        covered = 1.0 / slowest
        what = (
            'plan_ahead + lead_time' if slowest != 1.0 / self.lead_time else 'lead_time'
        )
        if self.rate < slowest * (1.0 - 1e-9):
            raise ConfigError(
                f'rate must be at least {slowest:.4g} Hz (1 / ({what}) = 1 / {covered:.4g} s: '
                'a timer step must come before the last trajectory runs out, else the arm '
                f'brakes to rest between steps), got {self.rate!r}; raise rate or lead_time'
            )
        if self.min_interval > covered * (1.0 + 1e-9):
            raise ConfigError(
                f'min_interval must be at most {covered:.4g} s ({what}: a step held back longer '
                f'finds the last trajectory run out), got {self.min_interval!r}'
            )

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
    outside the position limits), :attr:`published` (chunks returned), :attr:`clock_restarts`,
    :attr:`stalls` (steps that came after the last chunk's plan had run out while it was still
    moving: the controller was braking on its tail, or stopped at its last point; a late step
    after a plan that ended at rest changes nothing and is not one: :attr:`largest_gap` tells
    it), :attr:`at_rest` (chunks stamped 0: holding still),
    :attr:`largest_gap` (the longest time between two steps [s]) and :attr:`limit_refusals`
    (chunks made beyond a joint limit and not sent, :meth:`_within_limits`; the last one
    described in :attr:`last_breach`).

    :param arm: The arm (joint names, limits, neutral pose).
    :param config: Settings.
    :param engaged: Follow the targets from the start; False (the default) holds still until
        :attr:`engaged` is set.
    """

    def __init__(
        self, arm: CommandedArm, config: CommanderConfig | None = None, *, engaged: bool = False
    ) -> None:
        load_segments()  # compiled (or read from numba's cache) now, not in a step
        self._arm = arm
        self._config = config if config is not None else CommanderConfig()
        self._limits_cache: tuple[CommanderConfig, MotionLimits] | None = None
        self._engaged = bool(engaged)
        self._supervisor = TrackingSupervisor(arm.neutral, self._config.tracking)
        self._predictor = self._make_predictor(self._config)
        self._motion: MotionGenerator | None = None
        self._last_step: float | None = None
        self._last_now = -math.inf
        self._sent: list[PlannedState] = []
        self._plan_start = math.nan
        self._plan_end = math.nan
        self._forgotten_end = math.nan  # the plan's end when a step was forgotten
        self._begin: _Begin | None = None
        self._straightenable = False  # the step just made may be straightened (straighten)
        self._guidance: Guidance | None = None
        self._undo: tuple[Any, ...] | None = None
        self._target_waiting = False  # a target came since the last step
        self._last_target_step: float | None = None  # the last step that took a new target
        self._undo_target: tuple[float | None, bool] = (None, False)
        self._target_times = NO_TARGET_TIMES  # arrivals of the last two targets taken [s]
        self._undo_state: tuple[FloatArray, FloatArray] | None = None
        self._entry_from: FloatArray | None = None  # a measured start, not commanded yet
        # while the entry may still run: its start and target, when it would end had it
        # arrived at once, and whether joint_states came since (None) or showed it done (bool)
        self._entry: tuple[FloatArray, FloatArray, float, bool | None] | None = None
        self.targets = 0
        self.rejected = 0
        self.clamped = 0
        self.published = 0
        self.clock_restarts = 0
        self.stalls = 0
        self.at_rest = 0
        self.largest_gap = 0.0
        self.limit_refusals = 0
        self.withdrawn = 0
        """Chunks made and not sent, as they would have come after their plan's start
        (:meth:`withdraw`)."""
        self.straightened = 0
        """Steps planned again with the joints moving together, for the collision guard
        (:meth:`straighten`)."""
        self.last_breach = ''
        self.delay_allowance = 0.0
        """Delay measured on the way to the controller, added to ``plan_ahead`` [s]
        (:class:`~pic_ros.motion.delay.DelayAllowance`; at most ``max_plan_ahead`` in all)."""
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
        """
        Change the settings at run time, keeping the state, the command and any blend.

        New limits take effect at the next step, through the generator: ruckig plans from the
        command as it is, bringing a velocity beyond a lowered limit down within the
        acceleration and jerk limits. Lowered acceleration or jerk limits take over at once when
        the command is within them and can brake inside the position limits under them; else
        the arm first brakes to rest within the old ones, and follows again under the new ones
        from there. A new ``motion_generator`` starts from the current command (the limiter has
        no acceleration state, nor jerk limits).
        """
        motion = self._motion
        old = self._config
        if motion is not None and config.motion_generator != old.motion_generator:
            motion = self._make_motion(motion.position, config, motion)
            self._sent = []
        if config.prediction_horizon != old.prediction_horizon or (
            config.velocity_scale != old.velocity_scale
            or config.limit_headroom != old.limit_headroom
        ):
            predictor = self._make_predictor(config)
            predictor.adopt(self._predictor)  # the filtered velocity goes on
            self._predictor = predictor
        self._supervisor.config = config.tracking
        self._motion = motion
        self._config = config

    @property
    def plan_ahead(self) -> float:
        """Return how long after the next step its plan starts, with the allowance [s]."""
        return self._plan_ahead()

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
    def guidance(self) -> Guidance | None:
        """
        Return what the last step that made a chunk tracked (None before one).

        Its ``reference`` is where the command heads: the target while tracking, the neutral
        pose after a tracking loss, the command itself while holding or disengaged (what a
        gripper's ``GripperCommand`` goals follow, :mod:`pic_ros.motion.gripper_goals`).
        """
        return self._guidance

    @property
    def position(self) -> FloatArray | None:
        """Return the current command, shape (n,) (None before the start)."""
        return None if self._motion is None else self._motion.position

    @property
    def velocity(self) -> FloatArray | None:
        """Return the current commanded velocity, shape (n,) (None before the start)."""
        return None if self._motion is None else self._motion.velocity

    @property
    def limits(self) -> MotionLimits | None:
        """
        Return the limits the last chunk was planned within (None before the start).

        Those of the settings (:func:`planned_limits`, the position limits narrowed) except
        while lowered acceleration or jerk limits wait for the command to come within them
        (see :attr:`config`).
        """
        return None if self._motion is None else self._motion.limits

    def start_from(self, position: npt.ArrayLike) -> bool:
        """
        Start from a measured position, once (later calls change nothing).

        :param position: Joint positions in :attr:`joint_names` order, shape (n,).
        :return: Whether this call started the arm.
        """
        if self._motion is not None:
            return False
        self._motion = self._make_motion(position, self._config)
        # the first command takes the controller from the command it holds, which is not the
        # measured position (the servo's error, a sag), to the start (:meth:`_enter`)
        self._entry_from = np.asarray(position, dtype=float)
        return True

    def observe(self, position: npt.ArrayLike) -> None:
        """
        Take a measured position (``joint_states``): it tells when the move into the range ended.

        The move counts as ended when every joint is within :data:`ENTRY_REACHED` of the
        group's largest move, or :data:`ENTRY_CLOSE`, of where the move ends.

        :param position: Joint positions in :attr:`joint_names` order, shape (n,).
        """
        entry = self._entry
        if entry is None or entry[3]:
            return
        start, target, end, _ = entry
        measured = np.asarray(position, dtype=float)
        # one tolerance for the group, from its largest move: a joint the move left where it
        # was is measured off its command by the controller's own error, and a tolerance of
        # its own (none) kept the plans waiting the whole ENTRY_WAIT
        tolerance = max(ENTRY_REACHED * float(np.max(np.abs(start - target))), ENTRY_CLOSE)
        reached = bool(np.all(np.abs(measured - target) <= tolerance))
        self._entry = (start, target, end, reached)

    def _entry_running(self, now: float) -> bool:
        """
        Return whether the move into the range may still be running at ``now``.

        It is stamped 0 and starts when it arrives, so the steps wait ``max_plan_ahead`` (the
        delay a plan allows) after it would have ended had it arrived at once, and longer while
        ``joint_states`` do not show the group there (:meth:`observe`), up to
        :data:`ENTRY_WAIT`. A measurement only lengthens the wait: a joint that sways (NAO's
        hands in the simulation) can pass its target before the move has even arrived.
        """
        entry = self._entry
        if entry is None:
            return False
        _, _, end, reached = entry
        running = now < end + self._config.max_plan_ahead or (
            reached is False and now < end + ENTRY_WAIT
        )
        if not running:
            self._entry = None
        return running

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
        self._target_waiting = True
        self._target_times = (self._target_times[1], now)
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
            tick, not engaged before anything was sent, or the move to the start still running:
            ``lead_time`` plus ``max_plan_ahead`` after it was sent, longer for a move into the
            range, :meth:`_entry_running`). Once the plans have begun, every other step sends
            one, holding, disengaged and at neutral too, so a controller with a command timeout
            never sees the stream stop.
        """
        self._check_clock(now)
        self._straightenable = False
        motion = self._motion
        if motion is None:
            return None
        # no bursts: a target that came sooner than ``spacing`` after the last step that took
        # one waits for the next step; a timer's step never holds a new target back
        since = self._last_target_step if self._target_waiting else self._last_step
        if since is not None and now - since < self._config.spacing:
            return None
        if not self._target_waiting and self._tick_can_wait(now):
            return None
        guidance = self._supervisor.step(now, motion.position, engaged=self._engaged)
        if guidance.state is TrackingState.WAITING or (
            guidance.state is TrackingState.DISENGAGED and self._last_step is None
        ):
            return None  # nothing commanded yet: the controller holds where the arm is
        if self._entry_from is not None:
            return self._enter(now)
        if self._entry_running(now):
            return None  # the controller is still on the entry: nothing to add to it
        self._undo = (
            self._last_step, self._sent, self._plan_start, self._plan_end, self.published,
            self.at_rest,
        )
        self._undo_target = (self._last_target_step, self._target_waiting)
        self._guidance = guidance
        if self._last_step is not None:
            self.largest_gap = max(self.largest_gap, now - self._last_step)
        chunk = self._chunk(now, guidance, braking=False)
        self._last_step = now
        if self._target_waiting:
            self._last_target_step, self._target_waiting = now, False
        self.published += 1
        sent = self._within_limits(now, chunk, braking=False)
        # a step that follows the person, as planned, may be straightened (once)
        self._straightenable = sent is chunk and self._following(guidance, False)
        return sent

    def _tick_can_wait(self, now: float) -> bool:
        """
        Tell whether a step without a new target at ``now`` can be left to the next target.

        While a tracker's targets come at least as often as the ticks (a 30 Hz camera against
        the 50 Hz timer), a timer step between two targets only plans again toward the last
        one. It is skipped when the next target is due by the next tick (at the interval of the
        last two, and not yet overdue) and the plan last sent (ruckig) still covers the next
        tick and ``plan_ahead`` after it (with the delay allowance, as a plan's own start): a
        chunk made at that tick, as late as a plan allows, still continues it. Holding, at
        neutral and with the targets late, every tick steps; between targets slower than the
        timer, every tick but the last before a target is due. On the demo at 30 Hz this sends
        39 % fewer chunks, with the same tracking (``docs/method.md``).

        :param now: The time of a step without a new target [s].
        :return: Whether the step is skipped.
        """
        previous, latest = self._target_times
        due = 2.0 * latest - previous
        period = self._config.period
        return now < due <= now + period and (
            now + period + self._plan_ahead() <= self._plan_end
        )

    def _enter(self, now: float) -> TrajectoryChunk:
        """
        Return the first chunk after a measured start: the move to where the commands start.

        The commands start at the measured position, kept a few mrad inside the URDF limits
        (:func:`position_margin`): an arm that starts at a limit (NAO's hands at 1.0, open) is
        commanded from just inside it. The controller holds a command of its own, which is not
        the measurement either (the servo's error; an arm sagging under gravity since the
        controller took its position). The first chunk therefore moves the controller to the
        start from rest to rest, stamped 0 ("start on arrival", whatever the delay), one point
        at rest: the controller's quintic from the command it holds (a gap taken as small), over
        the time the move from the measurement needs within the velocity, acceleration and jerk
        limits (:func:`entry_time`, at least ``lead_time``). It starts when it arrives, so the
        steps send nothing more until it has ended (:meth:`_entry_running`); the plans then
        start there. Before, the first plan came when an entry on time would have ended: one
        delivered 45-140 ms late (NAO's hands and arms, at start-up) was still moving when the
        next chunks, made for a group at rest, replaced it at up to 3x an acceleration limit;
        and a start inside the range began with a resting chunk whose arrival the plans did not
        wait for, so the first chunks, made for an arm at rest at the measurement, were joined
        to the controller's move to it.
        """
        measured = self._entry_from
        motion = self._motion
        assert measured is not None and motion is not None  # from start_from
        self._entry_from = None
        target = np.array(motion.position, dtype=float)
        limits = self._motion_limits(self._config)
        duration = max(self._config.lead_time, entry_time(target - measured, limits))
        zero = np.zeros_like(target)
        self._sent = [(now, measured, zero, zero), (now + duration, target, zero, zero)]
        self._plan_start = self._plan_end = now + duration
        # a start inside the range has nothing for joint_states to show: only the delay to wait
        inside = not np.any(np.abs(target - measured) > 1e-9)
        self._entry = (measured, target, now + duration, True if inside else None)
        self._last_step = now
        self._undo = None  # the guard cannot redo it: it ends at rest inside the range
        self.published += 1
        return TrajectoryChunk(
            joint_names=tuple(self._arm.joint_names),
            points=(TrajectoryPoint(duration, target, zero, zero),),
        )

    def brake(self, now: float) -> TrajectoryChunk | None:
        """
        Replace the chunk of the step just made at ``now`` by one that brakes to a stop.

        For the trajectory publisher's collision guard (:mod:`pic_ros.motion.guard`): the
        command stays where that step took it (the state at the plan's start on the trajectory
        last sent), and the new plan brakes from there to rest within the acceleration and
        jerk limits instead of going on to the target; the next steps follow the targets again.

        :param now: The time of the step just made [s].
        :return: The braking chunk, or None when no chunk was made at ``now``.
        """
        motion = self._motion
        if motion is None or self._last_step != now or self._undo is None:
            return None
        # the step's start (its stall, its gap) stays: only its plan is made again
        self._restore(self._undo)
        guidance = self._guidance
        assert guidance is not None  # set with _undo
        self._straightenable = False
        chunk = self._chunk(now, guidance, braking=True)
        self._last_step = now
        self.published += 1
        return self._within_limits(now, chunk, braking=True)

    def straighten(self, now: float) -> TrajectoryChunk | None:
        """
        Replace the chunk of the step just made at ``now`` by one whose joints move together.

        For the trajectory publisher's collision guard (:mod:`pic_ros.motion.guard`), before it
        brakes an arm: the step is planned again from the same start to the same target, with
        every joint reaching it at the same time (Ruckig's time synchronization), so the arm
        keeps near the straight way in joint space between its command and its target, the way
        the solvers' self-collision avoidance checked between their answers. With each joint
        in its own minimum time the fast joints arrive first, the arm's path bends off that
        way, and two arms lagging behind their targets can pass through each other (Baxter's
        forearms and hands, in the shipped demo). The next steps plan as before.

        :param now: The time of the step just made [s].
        :return: The chunk, or None (the step is left as it was made) when no chunk was made
            at ``now``, the generator is not ruckig, the step does not follow the person (it
            holds or brakes), it was straightened already, or the straightened chunk would
            break a joint limit.
        """
        motion = self._motion
        begin = self._begin
        undo = self._undo
        if (
            not isinstance(motion, JerkLimitedGenerator) or self._last_step != now
            or undo is None or begin is None or begin.now != now or begin.settling
            or not self._straightenable
        ):
            return None
        self._straightenable = False
        guidance = self._guidance
        assert guidance is not None  # set with _undo
        self._restore(undo)  # as for a brake: only the step's plan is made again
        chunk = self._planned(begin, guidance, braking=False, synchronize=True)
        arm = self._arm
        straight = limit_breach(chunk, arm.lower, arm.upper, arm.velocity) is None
        if not straight:  # the step as it was made (the same start and inputs: the same plan)
            self._restore(undo)
            begin.generator.continue_from(*begin.state)
            self._planned(begin, guidance, braking=False)
        self._last_step = now
        self.published += 1
        if not straight:
            return None
        self.straightened += 1
        return chunk

    def _within_limits(
        self, now: float, chunk: TrajectoryChunk, braking: bool
    ) -> TrajectoryChunk | None:
        """
        Return a step's chunk if every point is within the joint limits, else a safe stand-in.

        The last check before a chunk leaves (:func:`~pic_ros.motion.streaming.limit_breach`
        against the arm's URDF position and velocity limits). The plans keep within them by
        construction; a chunk that does not is counted (:attr:`limit_refusals`, described in
        :attr:`last_breach`) and never returned: a step brakes instead (:meth:`brake`); a
        brake beyond a limit too is undone and nothing is sent, so the controller brakes to
        rest on the tail of the chunk it already has (every chunk ends at rest).

        :param now: The step's time [s].
        :param chunk: The chunk made.
        :param braking: Whether the chunk is a brake.
        :return: The chunk, the brake that replaces it, or None.
        """
        arm = self._arm
        breach = limit_breach(chunk, arm.lower, arm.upper, arm.velocity)
        if breach is None:
            return chunk
        self.limit_refusals += 1
        self.last_breach = breach
        if not braking:
            return self.brake(now)
        self._forget_step()
        return None

    def withdraw(self, now: float) -> bool:
        """
        Forget the chunk of the step just made at ``now``: it was not sent, and will not be.

        For the trajectory publisher, when the chunk would reach the controller after its
        plan's start (the process was starved between reading its clock and publishing): the
        controller would join it rather than continue it. The next step plans from the
        trajectory last sent, as the controller has it (its points), so that step continues it.

        :param now: The time of the step just made [s].
        :return: Whether a step made at ``now`` was forgotten (False: none was, or it was
            already undone).
        """
        if self._motion is None or self._last_step != now or self._undo is None:
            return False
        self._forget_step()
        self.withdrawn += 1
        return True

    def overtaken(self, now: float, later: float) -> bool:
        """
        Tell whether the chunk of the step just made at ``now`` would come too late at ``later``.

        Too late: a ruckig step's plan starts after the step (``plan_ahead`` and the delay
        allowance), the chunk repeating until then what the controller was last sent; sent at
        or after that start, it reaches the controller where the controller has to join it.

        :param now: The time of the step just made [s].
        :param later: When the chunk would be sent, on the same clock [s].
        :return: Whether a step made at ``now`` planned ahead and its plan starts by ``later``.
        """
        begin = self._begin
        return (
            self._last_step == now and self._undo is not None and begin is not None
            and begin.now == now and begin.start > now and later >= begin.start
        )

    def _restore(self, undo: tuple[Any, ...]) -> None:
        """Put back what a step changed of what was sent (``_undo``, kept when it was made)."""
        (
            self._last_step, self._sent, self._plan_start, self._plan_end, self.published,
            self.at_rest,
        ) = undo

    def _forget_step(self) -> None:
        """Undo the step just made: its chunk was not sent (a brake beyond a limit, withdrawn)."""
        undo, motion = self._undo, self._motion
        assert undo is not None and motion is not None  # a step was made
        self._restore(undo)
        self._last_target_step, self._target_waiting = self._undo_target
        self._undo = None  # nothing to brake again at this step
        # the generator's plan is no longer what was sent: the next step starts on the points
        # (where that plan ended still tells whether the next step comes after it: a stall)
        self._forgotten_end = self._plan_end
        self._plan_start = self._plan_end = math.nan
        if not isinstance(motion, JerkLimitedGenerator) and self._undo_state is not None:
            motion.reset(*self._undo_state)

    def _chunk(self, now: float, guidance: Guidance, braking: bool) -> TrajectoryChunk:
        """
        Make the chunk of the step at ``now``: the one place where the two generators part.

        A generator that plans ahead (ruckig) plans from where the controller is on the
        trajectory last sent (:meth:`_begin_plan`; a brake plans again from the same start)
        and streams that plan (:meth:`_planned`); the limiter is stepped and its command
        streamed as it is (:meth:`_limited`; a brake first goes back to the command before the
        step).

        :param now: The step's time [s].
        :param guidance: What to follow (the tracking supervisor's guidance at ``now``).
        :param braking: Brake to rest instead of following (:meth:`brake`).
        :return: The chunk.
        """
        motion = self._motion
        assert motion is not None  # a step is made only once started
        if isinstance(motion, JerkLimitedGenerator):
            if not braking:
                self._begin = self._begin_plan(now, motion)
            assert self._begin is not None  # made by the step a brake replaces
            return self._planned(self._begin, guidance, braking)
        if braking:
            assert self._undo_state is not None  # set by the step a brake replaces
            motion.reset(*self._undo_state)
        return self._limited(now, guidance, motion, braking)

    def _following(self, guidance: Guidance, braking: bool) -> bool:
        """Return whether a step follows the person (tracking or blending in, not braking)."""
        return not braking and guidance.state in (TrackingState.TRACKING, TrackingState.BLENDING)

    def _reference(self, when: float, guidance: Guidance, following: bool) -> FloatArray:
        """
        Return the target a step goes to: the reference predicted to ``when`` [s] if following.

        :param when: The time the command starts from [s] (the plan's start, or the step).
        :param guidance: The tracking supervisor's guidance.
        :param following: Whether the step follows the person (:meth:`_following`).
        :return: Joint positions, shape (n,), [rad] or [m].
        """
        if following:
            return self._predictor.predict(when, guidance.reference)
        return guidance.reference

    def _begin_plan(self, now: float, motion: JerkLimitedGenerator) -> _Begin:
        """
        Find where a ruckig step's plan starts: the controller's command then, and the bridge.

        The command is that of the trajectory last sent -- the generator's plan up to its
        ``lead_time``, then the braking tail, then rest -- at the plan's start, whatever the
        time since the last step (a stall is re-timed: never the old plan sampled where the
        controller did not go). The generator is then set to go on from there, with the limits
        of the settings once the command allows them (:attr:`config`).
        """
        ahead = self._plan_ahead()
        start = now + ahead
        if start > 0.0:  # on the nanosecond, as a message stamped there carries it
            start = sent_time(start)
        if not self._sent:  # nothing sent: the controller holds where the command is
            state = (motion.position, motion.velocity, motion.acceleration)
            state_now = state
        else:
            state = self._sent_at(start, motion)
            state_now = self._sent_at(now, motion)
            end = self._forgotten_end if math.isnan(self._plan_end) else self._plan_end
            if end < now and _moving(self._sent_at(end, motion)):
                self.stalls += 1  # the controller went onto the braking tail
        repeated = bridge(self._sent, now, start, state_now) if ahead > 0.0 else []
        generator, settling = self._adapt(motion, state)
        self._motion = generator
        return _Begin(now, start, state, state_now, repeated, generator, settling)

    def _sent_at(
        self, when: float, motion: JerkLimitedGenerator
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Return the command on the trajectory last sent at a time (its plan exactly)."""
        if self._plan_start <= when <= self._plan_end:
            return motion.sample(when - self._plan_start)
        return state_at(self._sent, when)

    def _adapt(
        self, motion: JerkLimitedGenerator, state: tuple[FloatArray, FloatArray, FloatArray]
    ) -> tuple[JerkLimitedGenerator, bool]:
        """
        Return the generator to plan with, going on from ``state``, and whether it must brake.

        New limits take over at once unless they lower an acceleration or jerk limit and the
        command is beyond them or could not brake inside the position limits under them: the
        generator with the old limits then brakes to rest (a state that keeps any limits), and
        the new ones take over from there (see :attr:`config`).
        """
        wanted = self._motion_limits(self._config)
        current = motion.limits
        motion.continue_from(*state)
        if _same_limits(current, wanted):
            return motion, False
        assert wanted.jerk is not None and current.jerk is not None  # ruckig's limits
        lowered = bool(
            np.any(wanted.acceleration < current.acceleration)
            or np.any(wanted.jerk < current.jerk)
        )
        if lowered and not motion.brakes_inside(wanted):
            return motion, True
        generator = JerkLimitedGenerator(wanted, state[0])
        generator.continue_from(*state)
        return generator, False

    def _planned(
        self, begin: _Begin, guidance: Guidance, braking: bool, synchronize: bool = False
    ) -> TrajectoryChunk:
        """
        Plan a ruckig step from where it begins and return its chunk (see the module doc).

        :param begin: Where the plan starts (:meth:`_begin_plan`).
        :param guidance: What to follow.
        :param braking: Brake to rest instead of following (also while lowered limits wait).
        :param synchronize: Plan again with the joints reaching the target together
            (:meth:`straighten`).
        :return: The chunk: the plan streamed, or one point holding still.
        """
        motion = begin.generator
        if braking or synchronize:  # planned again from where its step began (its state)
            motion.continue_from(*begin.state)
        braking = braking or begin.settling  # lower limits: brake to rest within the old ones
        following = self._following(guidance, braking)
        motion.step(
            self._reference(begin.start, guidance, following), 0.0, guidance.speed_scale,
            self._predictor.velocity if following else None,
            hold=braking or guidance.state in (TrackingState.HOLDING, TrackingState.DISENGAGED),
            synchronize=True if synchronize else None,
        )
        lead = self._config.lead_time
        if self._holds_still(begin, motion, lead):
            return self._resting_chunk(begin, lead)
        return self._plan_chunk(begin, motion, lead)

    def _holds_still(self, begin: _Begin, motion: JerkLimitedGenerator, lead: float) -> bool:
        """
        Return whether the new plan holds still where the controller already is.

        :param begin: Where the plan starts.
        :param motion: The generator, planned.
        :param lead: ``lead_time`` [s].
        :return: Whether the command, what was sent from ``now`` on and the plan up to ``lead``
            are all at rest at the plan's start position.
        """
        position = begin.state[0]
        return begin.stopped() and _rest_at(motion.sample(lead), position) and all(
            _rest_at(point[1:], position) for point in self._sent if point[0] >= begin.now
        )

    def _resting_chunk(self, begin: _Begin, lead: float) -> TrajectoryChunk:
        """
        Return the one-point chunk that holds still, stamped 0 ("start on arrival").

        Holding still where the controller already is, the chunk is exact whenever it
        arrives, so a late one is never refused.

        :param begin: Where the plan starts.
        :param lead: ``lead_time`` [s]: the point's ``time_from_start``.
        :return: The chunk.
        """
        position = begin.state[0]
        zero = np.zeros_like(position)
        chunk = TrajectoryChunk(
            joint_names=tuple(self._arm.joint_names),
            points=(TrajectoryPoint(lead, position, zero, zero),),
        )
        self.at_rest += 1
        self._remember(
            [(begin.now, position, zero, zero), (begin.start + lead, position, zero, zero)],
            begin.start, lead,
        )
        return chunk

    def _plan_chunk(
        self, begin: _Begin, motion: JerkLimitedGenerator, lead: float
    ) -> TrajectoryChunk:
        """
        Return the chunk that streams the plan: the bridge, the plan to ``lead``, its tail.

        :param begin: Where the plan starts.
        :param motion: The generator, planned.
        :param lead: ``lead_time`` [s]: how long the plan is streamed.
        :return: The chunk (:func:`~pic_ros.motion.streaming.planned_chunk`), stamped with the
            plan's start on the step's clock (``stamp_trajectories``; a hair before the
            bridge's first point when there is one) or 0.
        """
        now, start, ahead = begin.now, begin.start, begin.start - begin.now
        stamped = self._config.stamp_trajectories
        stamp, states = _bridge_states(begin, motion, max(start, 0.0) if stamped else 0.0)
        tail = motion.stopping(*motion.sample(lead))
        chunk = planned_chunk(
            self._arm.joint_names, motion.sample, lead, motion.breakpoints(lead), stamp=stamp,
            start_point=ahead > 0.0 and not states, bridge=states, tail=tail,
            hold_until=LATE_WINDOW if stamped else 0.0, plan_many=motion.sample_many,
        )
        base = chunk.stamp if chunk.stamp > 0.0 else now
        times, positions, velocities, accelerations = chunk.arrays()
        self._remember(
            [] if accelerations is None else [
                (base + when, *rows)
                for when, *rows in zip(times.tolist(), positions, velocities, accelerations)
            ],
            start if states or ahead > 0.0 else base, lead,
        )
        return chunk

    def _remember(self, sent: list[PlannedState], plan_start: float, lead: float) -> None:
        """Keep what was sent: its points, and where it follows the generator's plan."""
        self._sent = sent
        self._plan_start = plan_start
        self._plan_end = plan_start + lead

    def _limited(
        self, now: float, guidance: Guidance, motion: MotionGenerator, braking: bool
    ) -> TrajectoryChunk:
        """Make a limiter step's one-point chunk (its point ``lead_time`` after the step)."""
        dt = 0.0 if self._last_step is None else now - self._last_step
        if not braking:
            if self._sent and now > self._sent[-1][0]:
                # the controller reached the last point and holds it at rest: from there it has
                # lead_time to reach the new point (a stall when it was moving there)
                self.stalls += int(bool(np.any(self._sent[-1][2] != 0.0)))
                motion.reset(self._sent[-1][1])
                dt = min(dt, self._config.lead_time)
            self._undo_state = (motion.position, motion.velocity)
        reference = self._reference(now, guidance, self._following(guidance, braking))
        before = motion.position
        target = motion.position if braking else reference
        limited = motion.step(target, dt, guidance.speed_scale)
        lead = self._config.lead_time
        still = not np.any(limited.velocity != 0.0) and np.array_equal(limited.position, before)
        resting = still and (
            not self._sent or not np.any(self._sent[-1][2] != 0.0)
        )
        stamped = self._config.stamp_trajectories and not resting
        stamp = sent_time(max(now, 0.0)) if stamped else 0.0
        self.at_rest += int(resting)
        chunk = stream_chunk(
            self._arm.joint_names, limited.position, limited.velocity, lead, stamp=stamp
        )
        zero = np.zeros(len(before))
        self._sent = [((stamp or now) + lead, limited.position, limited.velocity, zero)]
        return chunk

    def _plan_ahead(self) -> float:
        """
        Return how long after a step its trajectory starts [s] (ruckig and stamps only).

        ``plan_ahead`` plus :attr:`delay_allowance`, at most ``max_plan_ahead`` (never below
        ``plan_ahead``); 0 when ``plan_ahead`` is below two point gaps.
        """
        config = self._config
        planned = config.stamp_trajectories and (
            self._motion is not None and self._motion.plans_ahead
        )
        ahead = config.plan_ahead if planned else 0.0
        if ahead < 2.0 * MIN_POINT_GAP:
            return 0.0
        return max(ahead, min(ahead + self.delay_allowance, config.max_plan_ahead))

    def _check_clock(self, now: float) -> None:
        """Start over from the current command if the clock went back."""
        if now < self._last_now:
            self.clock_restarts += 1
            self._supervisor.reset()
            self._predictor.reset()
            self._last_step = self._last_target_step = None
            self._target_waiting = False
            self._target_times = NO_TARGET_TIMES
            self._sent = []
            self._plan_start = self._plan_end = math.nan
            self._begin = None
            self._entry = None
            if self._motion is not None:
                self._motion.reset(self._motion.position)  # the controller stopped there
        self._last_now = now

    def _make_predictor(self, config: CommanderConfig) -> TargetPredictor:
        velocity = planned_limits(self._arm, config).velocity
        return TargetPredictor(velocity, config.prediction_horizon)

    def _motion_limits(self, config: CommanderConfig) -> MotionLimits:
        """Return the limits a generator of ``config`` plans within (position margin in)."""
        cached = self._limits_cache
        if cached is not None and cached[0] is config:
            return cached[1]
        arm = self._arm
        limits = planned_limits(arm, config).narrowed(
            position_margin(arm.lower, arm.upper, arm.velocity)
        )
        self._limits_cache = (config, limits)
        return limits

    def _make_motion(
        self,
        position: npt.ArrayLike,
        config: CommanderConfig,
        state: MotionGenerator | None = None,
    ) -> MotionGenerator:
        """Build the configured generator at a position (keeping a running one's motion)."""
        limits = self._motion_limits(config)
        start = limits.clamp(position)
        motion = make_motion_generator(config.motion_generator, limits, start)
        if state is not None:
            velocity = np.clip(state.velocity, -limits.velocity, limits.velocity)
            motion.reset(start, velocity, state.acceleration)
        return motion


@dataclass(frozen=True)
class _Begin:
    """Where a ruckig step's plan starts (:meth:`ArmCommander._begin_plan`)."""

    now: float
    start: float
    state: tuple[FloatArray, FloatArray, FloatArray]
    state_now: tuple[FloatArray, FloatArray, FloatArray]
    bridge: list[PlannedState]
    generator: JerkLimitedGenerator
    settling: bool = False

    def stopped(self) -> bool:
        """Return whether the command is at rest from ``now``, in one place, to the start."""
        return _rest_at(self.state_now, self.state[0]) and _rest_at(self.state, self.state[0])


def _bridge_states(
    begin: _Begin, motion: JerkLimitedGenerator, stamp: float
) -> tuple[float, list[PlannedState]]:
    """
    Return a planned chunk's stamp and its bridge points, relative to that stamp.

    :param begin: Where the plan starts, with the bridge (absolute times).
    :param motion: The generator, planned (its state at the plan's start ends the bridge).
    :param stamp: The stamp without a bridge [s].
    :return: ``stamp`` and no points when there is no bridge (or it starts within
        ``MIN_POINT_GAP`` of 0); else a stamp a hair before the bridge's first point and the
        bridge's points then the plan's start, ``time_from_start`` from that stamp.
    """
    repeated = begin.bridge
    if not (repeated and repeated[0][0] > MIN_POINT_GAP):
        return stamp, []
    stamp = sent_time(repeated[0][0] - MIN_POINT_GAP)  # a hair before the first
    states: list[PlannedState] = [(when - stamp, q, v, a) for when, q, v, a in repeated]
    states.append((begin.start - stamp, *motion.sample(0.0)))
    return stamp, states


def _rest_at(state: Sequence[FloatArray], position: FloatArray) -> bool:
    """Return whether a state ``(q, v, a)`` is at rest exactly at ``position``."""
    q, v, a = state[0], state[1], state[2]
    return (
        np.array_equal(q, position) and not np.any(v != 0.0)
        and (a is None or not np.any(a != 0.0))
    )


def _same_limits(first: MotionLimits, second: MotionLimits) -> bool:
    """Return whether two sets of limits are the same, array for array."""
    if first is second:  # the usual case: the settings did not change
        return True
    return all(
        np.array_equal(getattr(first, name), getattr(second, name))
        for name in ('lower', 'upper', 'velocity', 'acceleration', 'jerk')
    )
