"""
Base following: the person's walking in, velocity commands for a differential-drive base out.

:class:`BaseFollower` implements the differential-drive person imitation of the TIAGo
whole-body teleoperation paper (Sec. II-D, Algorithm 1) without ROS. It is fed the person's
:class:`~pic_ros.human.body_frame.Footprint` (pelvis on the floor plane and heading, tracker frame)
and stepped at a rate; each step returns a :class:`BaseCommand` (``linear`` along the base's x,
``angular`` about its z), what a ``geometry_msgs/Twist`` on ``cmd_vel`` carries.

**Reference.** The first footprint is paired with the base where it is: from then on the base is
to make the person's displacement since that footprint, expressed in the person's own starting
frame (a step forward, out of the chest, is a step forward of the base; a step to the person's
left is one to the base's left). This is the paper's initialisation
``T_ro^rf = T_po^pf`` (the person's and the robot's footprints coincide at the start).

**Odometry of the commands.** The base's pose is not measured: it is the integral of the commands
this follower sent (the paper's kinematic model ``(x', y', theta') = (v cos theta, v sin theta,
omega)``, integrated exactly over each step with the command held).

**Control law** (Algorithm 1). With ``T_rf^pf = (T_ro^rf)^-1 T_ro^pf`` the person's footprint
in the base's footprint frame, ``p = (p_x, p_y)`` its translation, ``phi`` its yaw and
``beta = atan2(p_y, p_x)`` the bearing of the goal:

- ``|p| < epsilon`` (``base_position_deadband``): ``v = 0``, ``omega = lambda * phi`` -- turn in
  place to the person's heading; zero too when ``|phi|`` is within ``base_heading_deadband``
  (the angular dead zone, which the paper leaves out);
- else if ``p_x < 0`` and ``|phi| < delta`` (``base_reverse_angle``): the goal is behind and the
  person faces the base's way, so back up: ``v = -sigma * |p|``,
  ``omega = lambda * (beta - pi * sgn(beta))``;
- else ``v = sigma * |p|``, ``omega = lambda * beta``.

``sigma`` is ``base_linear_gain`` and ``lambda`` ``base_angular_gain``. One addition: the
backward branch has a hysteresis of ``epsilon`` on ``p_x`` (entered below ``-epsilon``, left
above ``+epsilon``, the plain test ``p_x < 0`` within that band when neither branch held
before), because a goal straight to the side sits on the branches' boundary, where the two
commands are opposite and the base, alternating between them, did not move. The paper writes
``arctan(p_y / p_x)`` for the bearing; the backward branch's ``- pi * sgn(...)`` only turns the
base's back to the goal if that is the four-quadrant angle, so ``atan2`` is used.

**Limits.** The law's command is then scaled down, both components by one factor (which keeps the
path's curvature ``omega / v``), to ``|v| <= base_max_linear_velocity`` and
``|omega| <= base_max_angular_velocity``, and each component moves from the previous command by
at most its acceleration limit times the step (``base_max_linear_acceleration``,
``base_max_angular_acceleration``). The gains' defaults ask no more deceleration than the limits
give when the base closes in (``sigma * v_max <= a_max``, ``lambda * omega_max <= alpha_max``),
so the approach does not overshoot.

**Tracking loss.** No footprint for ``base_timeout`` (on the caller's clock): the command goes to
zero within the acceleration limits and stays there. Footprints again: following resumes toward
the person's displacement since the same reference (like the arms, which blend back to the new
target), within the limits. A footprint older than the last by more than
:data:`RESTART_AFTER` starts a new session (a looping replay): a new reference, paired with the
base where it is. Another person (:meth:`BaseFollower.reset`, which base_follower calls when
skeleton_node's ``person`` count changes) gets a reference of their own the same way: the same
person found again resumes, somebody else does not drive the base by where they stand.

**Off** (``follow_base`` false): the command goes to zero within the acceleration limits and the
follower reports :attr:`FollowState.OFF`; nothing is followed.

**Disengaged** (:attr:`BaseFollower.engaged` false: base_follower sets it from the trajectory
publisher's ``engaged`` and the emergency stop): the command goes to zero within the acceleration
limits and stays there (:attr:`FollowState.DISENGAGED`); footprints are still taken. Engaged
again, following resumes toward the person's displacement since the same reference, within the
limits, as after a tracking loss.

The same inputs at the same times give the same commands: the follower keeps no wall-clock time
and draws no random numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum
import math
from typing import Any, Final

from pic_ros.human.body_frame import Footprint
from pic_ros.schema import ParameterDef

FOLLOW_BASE: Final = ParameterDef(
    'follow_base', False,
    "Drive the mobile base after the person's walking on cmd_vel (off: nothing is published; a "
    'moving base is opt-in)',
)
"""``follow_base`` (:attr:`BaseFollowingConfig.follow_base`)."""

BASE_MAX_LINEAR_VELOCITY: Final = ParameterDef(
    'base_max_linear_velocity', 0.5,
    'Largest forward or backward speed of the base command', unit='m/s', low=0.01, high=2.0,
)
"""``base_max_linear_velocity``: half of TIAGo's 1 m/s top speed (a base next to its operator)."""

BASE_MAX_ANGULAR_VELOCITY: Final = ParameterDef(
    'base_max_angular_velocity', 1.0,
    'Largest turning speed of the base command', unit='rad/s', low=0.01, high=4.0,
)
"""``base_max_angular_velocity``: a chosen rule, about a person's unhurried turn (57 deg/s)."""

BASE_MAX_LINEAR_ACCELERATION: Final = ParameterDef(
    'base_max_linear_acceleration', 0.5,
    'Largest change of the forward speed per second', unit='m/s^2', low=0.01, high=5.0,
)
"""``base_max_linear_acceleration``: a chosen rule, full speed in 1 s."""

BASE_MAX_ANGULAR_ACCELERATION: Final = ParameterDef(
    'base_max_angular_acceleration', 1.0,
    'Largest change of the turning speed per second', unit='rad/s^2', low=0.01, high=10.0,
)
"""``base_max_angular_acceleration``: a chosen rule, full turning speed in 1 s."""

BASE_POSITION_DEADBAND: Final = ParameterDef(
    'base_position_deadband', 0.05,
    'Distance to the goal within which the base does not drive, only turns to the heading '
    "(the paper's epsilon)", unit='m', low=0.0, high=1.0,
)
"""``base_position_deadband`` (epsilon): half the 10 cm end-of-move target, above pelvis sway."""

BASE_HEADING_DEADBAND: Final = ParameterDef(
    'base_heading_deadband', 0.035,
    'Heading error within which the base does not turn once at the goal', unit='rad', low=0.0,
    high=0.5,
)
"""``base_heading_deadband``: 2 deg, under half the 5 deg end-of-move target."""

BASE_LINEAR_GAIN: Final = ParameterDef(
    'base_linear_gain', 1.0,
    "Forward speed per metre of distance to the goal (the paper's sigma)", unit='1/s', low=0.01,
    high=20.0,
)
"""``base_linear_gain`` (sigma): the largest that needs no more than the acceleration limit."""

BASE_ANGULAR_GAIN: Final = ParameterDef(
    'base_angular_gain', 1.0,
    "Turning speed per radian of heading or bearing error (the paper's lambda)", unit='1/s',
    low=0.01, high=20.0,
)
"""``base_angular_gain`` (lambda): the largest that needs no more than the acceleration limit."""

BASE_REVERSE_ANGLE: Final = ParameterDef(
    'base_reverse_angle', 0.785,
    'The base backs up to a goal behind it when the heading error is under this angle (the '
    "paper's delta)", unit='rad', low=0.0, high=3.1416,
)
"""``base_reverse_angle`` (delta): 45 deg, a person stepping back keeps facing the same way."""

BASE_TIMEOUT: Final = ParameterDef(
    'base_timeout', 0.25,
    'Time without a footprint after which the base stops (within the acceleration limits)',
    unit='s', low=0.01, high=10.0,
)
"""``base_timeout``: the arms' ``hold_timeout``."""

BASE_FOLLOWING_PARAMETERS: Final = (
    FOLLOW_BASE, BASE_MAX_LINEAR_VELOCITY, BASE_MAX_ANGULAR_VELOCITY,
    BASE_MAX_LINEAR_ACCELERATION, BASE_MAX_ANGULAR_ACCELERATION, BASE_POSITION_DEADBAND,
    BASE_HEADING_DEADBAND, BASE_LINEAR_GAIN, BASE_ANGULAR_GAIN, BASE_REVERSE_ANGLE, BASE_TIMEOUT,
)
"""Everything :meth:`BaseFollowingConfig.from_parameters` reads."""

RESTART_AFTER: Final = 1.0
"""A footprint stamped this much before the last one starts a new session [s]."""

MAX_DT: Final = 0.1
"""Longest step over which the acceleration limits are granted [s]; a longer pause (a starved
process) still integrates its whole time, but the command changes as after this long."""


@dataclass(frozen=True)
class BaseFollowingConfig:
    """
    Settings of :class:`BaseFollower` (each field is the parameter of the same name).

    :param follow_base: Follow the person; false brings the base to a stop and keeps it there.
    :param base_max_linear_velocity: Speed limit [m/s].
    :param base_max_angular_velocity: Turning speed limit [rad/s].
    :param base_max_linear_acceleration: Acceleration limit [m/s^2].
    :param base_max_angular_acceleration: Angular acceleration limit [rad/s^2].
    :param base_position_deadband: epsilon [m].
    :param base_heading_deadband: Angular dead zone at the goal [rad].
    :param base_linear_gain: sigma [1/s].
    :param base_angular_gain: lambda [1/s].
    :param base_reverse_angle: delta [rad].
    :param base_timeout: Time without a footprint before stopping [s].
    :raises ConfigError: If a value is out of range.
    """

    follow_base: bool = FOLLOW_BASE.default
    base_max_linear_velocity: float = BASE_MAX_LINEAR_VELOCITY.default
    base_max_angular_velocity: float = BASE_MAX_ANGULAR_VELOCITY.default
    base_max_linear_acceleration: float = BASE_MAX_LINEAR_ACCELERATION.default
    base_max_angular_acceleration: float = BASE_MAX_ANGULAR_ACCELERATION.default
    base_position_deadband: float = BASE_POSITION_DEADBAND.default
    base_heading_deadband: float = BASE_HEADING_DEADBAND.default
    base_linear_gain: float = BASE_LINEAR_GAIN.default
    base_angular_gain: float = BASE_ANGULAR_GAIN.default
    base_reverse_angle: float = BASE_REVERSE_ANGLE.default
    base_timeout: float = BASE_TIMEOUT.default

    def __post_init__(self) -> None:
        for item in BASE_FOLLOWING_PARAMETERS:
            object.__setattr__(self, item.name, item.check(getattr(self, item.name)))

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> BaseFollowingConfig:
        """
        Build the settings from parameter values (:data:`BASE_FOLLOWING_PARAMETERS`).

        :param values: Values by parameter name; missing ones take their defaults.
        :return: The settings.
        :raises ConfigError: If a value is refused.
        """
        return cls(**{
            item.name: values.get(item.name, item.default) for item in BASE_FOLLOWING_PARAMETERS
        })


class FollowState(enum.Enum):
    """What the follower is doing (reported in diagnostics)."""

    OFF = 'off'
    """``follow_base`` is false and the base is stopped."""
    WAITING = 'waiting_for_person'
    """No footprint yet: no reference."""
    FOLLOWING = 'following'
    """Driving or turning toward the person's displacement."""
    AT_GOAL = 'at_goal'
    """Inside both dead zones: the law asks for nothing."""
    STOPPING = 'stopping'
    """Tracking lost, following turned off or disengaged: slowing down to a stop."""
    LOST = 'lost'
    """Tracking lost and stopped."""
    DISENGAGED = 'disengaged'
    """The robot is disengaged or emergency-stopped: stopped, following nothing."""

    @property
    def active(self) -> bool:
        """Return whether the follower is driving the base (its commands should be sent)."""
        return self in (FollowState.FOLLOWING, FollowState.AT_GOAL, FollowState.STOPPING)


@dataclass(frozen=True)
class Pose2D:
    """
    A pose on the floor plane.

    :param x: Position x [m].
    :param y: Position y [m].
    :param yaw: Heading about z from x [rad], in (-pi, pi].
    """

    x: float = 0.0
    y: float = 0.0
    yaw: float = 0.0

    def compose(self, other: Pose2D) -> Pose2D:
        """
        Return ``self * other``: ``other`` (given in this pose's frame) in this pose's parent.

        :param other: A pose relative to this one.
        :return: The composed pose.
        """
        cos, sin = math.cos(self.yaw), math.sin(self.yaw)
        return Pose2D(
            self.x + cos * other.x - sin * other.y,
            self.y + sin * other.x + cos * other.y,
            wrap_angle(self.yaw + other.yaw),
        )

    def inverse(self) -> Pose2D:
        """Return the inverse transform."""
        cos, sin = math.cos(self.yaw), math.sin(self.yaw)
        return Pose2D(-cos * self.x - sin * self.y, sin * self.x - cos * self.y, -self.yaw)

    def relative_to(self, reference: Pose2D) -> Pose2D:
        """
        Return this pose in the frame of ``reference`` (both in the same parent frame).

        :param reference: The frame.
        :return: ``reference^-1 * self``.
        """
        return reference.inverse().compose(self)


@dataclass(frozen=True)
class BaseCommand:
    """
    One velocity command of the base (a ``geometry_msgs/Twist``'s ``linear.x`` and ``angular.z``).

    :param linear: Forward speed along the base's x axis [m/s].
    :param angular: Turning speed about the base's z axis [rad/s], counter-clockwise positive.
    :param state: What the follower is doing.
    """

    linear: float
    angular: float
    state: FollowState


def wrap_angle(angle: float) -> float:
    """
    Wrap an angle to (-pi, pi].

    :param angle: Angle [rad].
    :return: The same direction in (-pi, pi] [rad].
    """
    wrapped = math.remainder(angle, math.tau)
    return math.pi if wrapped == -math.pi else wrapped


def integrate(pose: Pose2D, linear: float, angular: float, dt: float) -> Pose2D:
    """
    Move a differential-drive base holding a command (exact unicycle integration).

    :param pose: Start pose, odometry frame.
    :param linear: Forward speed [m/s].
    :param angular: Turning speed [rad/s].
    :param dt: Duration [s], >= 0.
    :return: The pose after ``dt``.
    """
    turn = angular * dt
    if abs(turn) < 1e-9:
        forward, left = linear * dt, 0.0
    else:
        radius = linear / angular
        forward, left = radius * math.sin(turn), radius * (1.0 - math.cos(turn))
    return pose.compose(Pose2D(forward, left, turn))


def paper_law(
    error: Pose2D, config: BaseFollowingConfig, reversing: bool | None = None
) -> tuple[float, float]:
    """
    Return the unlimited command of Algorithm 1 for the person's footprint seen from the base.

    :param error: The person's footprint (displacement goal) in the base's footprint frame,
        ``T_rf^pf`` [m], [rad].
    :param config: Gains and dead zones.
    :param reversing: Whether the previous command backed up (True), drove forward (False), or
        neither (None): the hysteresis of the backward branch.
    :return: ``(v, omega)`` [m/s], [rad/s] before the velocity and acceleration limits.
    """
    distance = math.hypot(error.x, error.y)
    sigma, lam = config.base_linear_gain, config.base_angular_gain
    if distance < config.base_position_deadband:
        if abs(error.yaw) <= config.base_heading_deadband:
            return 0.0, 0.0
        return 0.0, lam * error.yaw
    bearing = math.atan2(error.y, error.x)
    band = config.base_position_deadband
    if reversing is None:
        behind = error.x < 0.0
    else:
        behind = error.x < (band if reversing else -band)
    if behind and abs(error.yaw) < config.base_reverse_angle:
        return -sigma * distance, lam * (bearing - math.pi * math.copysign(1.0, bearing))
    return sigma * distance, lam * bearing


class BaseFollower:
    """
    Follow a person's walking with a differential-drive base (see the module docstring).

    Counters for diagnostics: :attr:`footprints` (accepted), :attr:`rejected` (non-finite or out
    of order), :attr:`sessions` (references taken) and :attr:`steps`.

    :param config: Settings; default :class:`BaseFollowingConfig()` (following off).
    :param engaged: Whether the robot is engaged (:attr:`engaged`, changeable later): disengaged,
        the base stops and follows nothing.
    """

    def __init__(self, config: BaseFollowingConfig | None = None, engaged: bool = True) -> None:
        self.config = config if config is not None else BaseFollowingConfig()
        self.engaged = bool(engaged)
        self._odometry = Pose2D()
        self._anchor = Pose2D()
        self._reference: Pose2D | None = None
        self._person: Pose2D | None = None
        self._last_stamp = -math.inf
        self._last_seen: float | None = None
        self._last_step: float | None = None
        self._command = BaseCommand(0.0, 0.0, FollowState.OFF)
        self.footprints = 0
        self.rejected = 0
        self.sessions = 0
        self.steps = 0

    @property
    def odometry(self) -> Pose2D:
        """Return the base's pose integrated from the commands, relative to where it started."""
        return self._odometry

    @property
    def goal(self) -> Pose2D | None:
        """Return where the base is to be (odometry frame), or None before the first footprint."""
        if self._reference is None or self._person is None:
            return None
        return self._anchor.compose(self._person.relative_to(self._reference))

    @property
    def command(self) -> BaseCommand:
        """Return the last command :meth:`step` returned."""
        return self._command

    def observe(self, now: float, person: Footprint) -> bool:
        """
        Take the person's footprint.

        :param now: Arrival time on the caller's clock [s] (the one :meth:`step` gets).
        :param person: The footprint (tracker frame, capture stamp).
        :return: Whether it was accepted (refused: non-finite, or older than the last one by
            less than :data:`RESTART_AFTER`).
        """
        values = (person.stamp, person.x, person.y, person.heading, now)
        if not all(math.isfinite(value) for value in values):
            self.rejected += 1
            return False
        pose = Pose2D(person.x, person.y, wrap_angle(person.heading))
        if person.stamp < self._last_stamp - RESTART_AFTER:
            self._reference = None  # a new session: a new reference below
        elif person.stamp <= self._last_stamp:
            self.rejected += 1
            return False
        if self._reference is None:
            self._reference = pose
            self._anchor = self._odometry
            self.sessions += 1
        self._person = pose
        self._last_stamp = person.stamp
        self._last_seen = now
        self.footprints += 1
        return True

    def reset(self) -> None:
        """Forget the reference and the person (the next footprint is a new reference)."""
        self._reference = None
        self._person = None
        self._last_stamp = -math.inf
        self._last_seen = None

    def step(self, now: float) -> BaseCommand:
        """
        Integrate the last command up to ``now`` and return the next one.

        :param now: Time on the caller's clock [s]. A time before the previous step restarts the
            step clock (no motion integrated, the command kept).
        :return: The command to send now, within the velocity and acceleration limits.
        """
        self.steps += 1
        dt = 0.0 if self._last_step is None else now - self._last_step
        if dt < 0.0:
            dt = 0.0
            if self._last_seen is not None and self._last_seen > now:
                self._last_seen = now
        self._last_step = now
        previous = self._command
        self._odometry = integrate(self._odometry, previous.linear, previous.angular, dt)
        goal = self.goal
        config = self.config
        tracked = (
            self._last_seen is not None and now - self._last_seen <= config.base_timeout
        )
        if not config.follow_base or not self.engaged or goal is None or not tracked:
            linear, angular = self._limit(0.0, 0.0, dt)
            if linear == 0.0 and angular == 0.0:
                if not config.follow_base:
                    state = FollowState.OFF
                elif not self.engaged:
                    state = FollowState.DISENGAGED
                else:
                    state = FollowState.WAITING if goal is None else FollowState.LOST
            else:
                state = FollowState.STOPPING
        else:
            reversing = None if previous.linear == 0.0 else previous.linear < 0.0
            wanted = paper_law(goal.relative_to(self._odometry), config, reversing)
            linear, angular = self._limit(*wanted, dt)
            state = FollowState.AT_GOAL if wanted == (0.0, 0.0) else FollowState.FOLLOWING
        self._command = BaseCommand(linear, angular, state)
        return self._command

    def _limit(self, linear: float, angular: float, dt: float) -> tuple[float, float]:
        """Scale to the velocity limits (one factor), then step within the acceleration ones."""
        config = self.config
        scale = 1.0
        if abs(linear) > config.base_max_linear_velocity:
            scale = config.base_max_linear_velocity / abs(linear)
        if abs(angular) * scale > config.base_max_angular_velocity:
            scale = config.base_max_angular_velocity / abs(angular)
        linear, angular = linear * scale, angular * scale
        span = min(dt, MAX_DT)
        previous = self._command
        linear = step_toward(previous.linear, linear, config.base_max_linear_acceleration * span)
        angular = step_toward(
            previous.angular, angular, config.base_max_angular_acceleration * span
        )
        # The velocity limits win over the acceleration ones (a limit lowered while moving).
        linear = step_toward(0.0, linear, config.base_max_linear_velocity)
        angular = step_toward(0.0, angular, config.base_max_angular_velocity)
        return linear, angular


def step_toward(current: float, target: float, largest_change: float) -> float:
    """
    Move a speed toward a target by at most a given change (an acceleration limit over a step).

    :param current: The speed now [m/s] or [rad/s].
    :param target: The wanted speed, same unit.
    :param largest_change: The largest change allowed, >= 0, same unit.
    :return: ``target`` clamped to ``current +- largest_change``.
    """
    return min(max(target, current - largest_change), current + largest_change)
