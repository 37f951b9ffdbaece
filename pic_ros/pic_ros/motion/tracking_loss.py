"""
What the robot follows when the person is tracked, briefly lost, lost for long, or found again.

:class:`TrackingSupervisor` is a state machine fed with valid joint targets
(:meth:`~TrackingSupervisor.on_target`) and asked, once per control step, for the reference that
the :class:`~pic_ros.motion.limiter.JointLimiter` should track
(:meth:`~TrackingSupervisor.step`). Times are passed in (the core never reads a clock); ``stamp``
and ``now`` must come from the same clock, so a node passes the *receive* time of a target (its
own clock), not the capture stamp, unless both are known to share a clock. With ``age`` the time
since the last valid target (``docs/method.md#tracking-loss``):

- WAITING: no valid target yet. Reference: the current command, so the robot stops where it is.
- TRACKING: ``age <= hold_timeout``. Reference: the last valid target (frames dropped for less than
  ``hold_timeout`` just keep it, without any state change).
- HOLDING: ``hold_timeout < age <= neutral_timeout``. Reference: the current command, so the robot
  brakes (within the acceleration limit) and holds where it stops.
- RETURNING_TO_NEUTRAL, then AT_NEUTRAL once the command is within
  :data:`AT_NEUTRAL_TOLERANCE` of it: ``age > neutral_timeout``. Reference: the neutral pose, at
  ``neutral_speed_scale`` of the velocity limits.
- BLENDING: a valid target arrived in any state but TRACKING. Reference: the live target, with a
  speed cap that ramps linearly from 0 to the full velocity limits over ``blend_time``; then
  TRACKING.
- DISENGAGED: the operator has not engaged the robot, or the emergency stop is latched
  (:mod:`pic_ros.motion.engagement`; ``engaged`` false in :meth:`~TrackingSupervisor.step`),
  whatever the targets. Reference: the current command, so the robot brakes (within the
  acceleration limit) and holds where it stops. Targets are still taken; once engaged again the
  states above apply, so the robot blends in from where it is, as on re-acquisition.

Re-engagement choice: a speed-cap ramp rather than an interpolation between poses. It follows the
live target from the first step (the person keeps moving while the robot blends in), needs no
knowledge of the robot's dynamics here, and starts gently whatever the distance: a robot at rest
accelerates at no more than ``v_max / blend_time`` once the cap binds, and a robot still moving
(towards neutral, say) first slows down within the acceleration limit. The limiter keeps every
step within the position, velocity and acceleration limits in every state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum
import math
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.motion.limiter import TargetStatus
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

AT_NEUTRAL_TOLERANCE: Final = 1e-6
"""Largest joint distance of the command from the neutral pose counted as at neutral [rad]."""

HOLD_TIMEOUT: Final = ParameterDef(
    'hold_timeout', 0.25, 'Time without a valid target before holding position', unit='s',
    low=0.001, high=60.0,
)
"""The trajectory publisher's ``hold_timeout`` (:attr:`TrackingConfig.hold_timeout`)."""

NEUTRAL_TIMEOUT: Final = ParameterDef(
    'neutral_timeout', 3.0,
    'Time without a valid target before returning to the neutral pose (at least hold_timeout)',
    unit='s', low=0.001, high=3600.0,
)
"""The trajectory publisher's ``neutral_timeout`` (:attr:`TrackingConfig.neutral_timeout`)."""

BLEND_TIME: Final = ParameterDef(
    'blend_time', 1.0, 'Speed ramp when the person is found again (0: none)', unit='s',
    low=0.0, high=60.0,
)
"""The trajectory publisher's ``blend_time`` (:attr:`TrackingConfig.blend_time`)."""

NEUTRAL_SPEED_SCALE: Final = ParameterDef(
    'neutral_speed_scale', 0.5,
    'Speed of the return to neutral, fraction of the velocity limits', low=0.01, high=1.0,
)
"""The trajectory publisher's ``neutral_speed_scale``."""

TRACKING_PARAMETERS: Final = (HOLD_TIMEOUT, NEUTRAL_TIMEOUT, BLEND_TIME, NEUTRAL_SPEED_SCALE)
"""Everything :meth:`TrackingConfig.from_parameters` reads."""


class TrackingState(enum.Enum):
    """What the robot is doing about the tracked person."""

    WAITING = 'waiting'
    """No valid target yet: stop and stay where the robot is."""

    TRACKING = 'tracking'
    """Following the last valid target."""

    HOLDING = 'holding'
    """No valid target for ``hold_timeout``: stop and hold position."""

    RETURNING_TO_NEUTRAL = 'returning_to_neutral'
    """No valid target for ``neutral_timeout``: moving to the neutral pose."""

    AT_NEUTRAL = 'at_neutral'
    """No valid target for ``neutral_timeout`` and the command is at the neutral pose."""

    BLENDING = 'blending'
    """Re-engaging: following the live target under a speed cap ramping up over ``blend_time``."""

    DISENGAGED = 'disengaged'
    """Not engaged by the operator (or emergency-stopped): stop and hold, targets not followed."""


@dataclass(frozen=True)
class TrackingConfig:
    """
    Timing of the tracking-loss behaviour.

    :param hold_timeout: Time without a valid target before holding position, in [1e-3, 60] [s].
    :param neutral_timeout: Time without a valid target before returning to the neutral pose, in
        [hold_timeout, 3600] [s].
    :param blend_time: Duration of the speed-cap ramp on re-engagement, in [0, 60] [s] (0: no
        ramp, track at once within the limiter's limits).
    :param neutral_speed_scale: Speed cap of the return to neutral as a fraction of the velocity
        limits, in [0.01, 1].
    :raises ConfigError: If a value is out of range.
    """

    hold_timeout: float = HOLD_TIMEOUT.default
    neutral_timeout: float = NEUTRAL_TIMEOUT.default
    blend_time: float = BLEND_TIME.default
    neutral_speed_scale: float = NEUTRAL_SPEED_SCALE.default

    def __post_init__(self) -> None:
        for item in TRACKING_PARAMETERS:
            item.check(getattr(self, item.name))
        if self.neutral_timeout < self.hold_timeout:
            raise ConfigError(  # at least hold_timeout
                f'neutral_timeout must be in [{self.hold_timeout}, {NEUTRAL_TIMEOUT.high}], got '
                f'{self.neutral_timeout!r}'
            )

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> TrackingConfig:
        """
        Build the timing from parameter values (:data:`TRACKING_PARAMETERS`).

        :param values: Values by parameter name; missing ones take their defaults.
        :return: The timing.
        :raises ConfigError: If a value is refused.
        """
        return cls(**{
            item.name: item.check(values.get(item.name, item.default))
            for item in TRACKING_PARAMETERS
        })


class Guidance(NamedTuple):
    """
    What the limiter should track at one control step.

    :param state: The supervisor's state after this step.
    :param reference: Joint positions to feed the limiter as its target, shape (n,), [rad] or
        [m] (read-only).
    :param speed_scale: Speed cap to pass to the limiter, fraction of the velocity limits in
        [0, 1].
    """

    state: TrackingState
    reference: FloatArray
    speed_scale: float


def _joint_values(name: str, values: npt.ArrayLike, dof: int | None = None) -> FloatArray:
    """
    Convert joint values to a read-only float array, or raise.

    :param name: What the values are, for the message.
    :param values: Numbers, shape (dof,).
    :param dof: Expected number of joints (None: any n >= 1).
    :return: A new read-only ``float64`` array.
    :raises ConfigError: If the values are not finite numbers of the expected shape.
    """
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError(f'{name} must be an array of numbers, got {values!r}') from error
    expected = 'n >= 1' if dof is None else f'n = {dof}'
    if array.ndim != 1 or array.size == 0 or (dof is not None and array.size != dof):
        raise ConfigError(f'{name} must have shape (n,) with {expected}, got {array.shape}')
    if not np.isfinite(array).all():
        raise ConfigError(f'{name} must be finite, got {array.tolist()}')
    array.setflags(write=False)
    return array


class TrackingSupervisor:
    """
    Tracking-loss state machine: turns a stream of valid targets into a reference per step.

    See the module docstring for the states and the re-engagement ramp.

    :param neutral: Neutral pose of the joints, shape (n,), [rad] or [m] (inside the limits;
        an :class:`~pic_ros.robot.arm.ArmModel` checks that).
    :param config: Timeouts and blending.
    :raises ConfigError: If the neutral pose is not finite numbers, shape (n,).
    """

    def __init__(self, neutral: npt.ArrayLike, config: TrackingConfig | None = None) -> None:
        self._neutral = _joint_values('neutral pose', neutral)
        self._config = TrackingConfig() if config is None else config
        self._state = TrackingState.WAITING
        self._target: FloatArray | None = None
        self._stamp = -math.inf
        self._blend_start = 0.0

    @property
    def config(self) -> TrackingConfig:
        """Return the timing configuration."""
        return self._config

    @config.setter
    def config(self, config: TrackingConfig) -> None:
        """Change the timing at run time, keeping the state, the last target and any blend."""
        if not isinstance(config, TrackingConfig):
            raise ConfigError(f'config must be a TrackingConfig, got {config!r}')
        self._config = config

    @property
    def neutral(self) -> FloatArray:
        """Return the neutral pose, shape (n,) (read-only)."""
        return self._neutral

    @property
    def state(self) -> TrackingState:
        """Return the state after the last :meth:`step`."""
        return self._state

    @property
    def last_stamp(self) -> float | None:
        """Return the stamp of the last valid target [s], or None before the first one."""
        return None if self._target is None else self._stamp

    @property
    def last_target(self) -> FloatArray | None:
        """Return the last valid target (read-only), or None before the first one."""
        return self._target

    def reset(self) -> None:
        """Forget every target and go back to WAITING (e.g. after a clock jump back)."""
        self._state = TrackingState.WAITING
        self._target = None
        self._stamp = -math.inf
        self._blend_start = 0.0

    def on_target(self, stamp: float, q_target: npt.ArrayLike) -> TargetStatus:
        """
        Offer a joint target from the solver (never raises).

        A target counts only if it is finite, has one value per joint and its stamp is finite
        and not older than the last valid one; otherwise it is dropped and nothing changes.
        Position limits are not checked here (the limiter clamps).

        :param stamp: Time of the target [s], on the clock of :meth:`step`'s ``now``.
        :param q_target: Joint positions, shape (n,), [rad] or [m].
        :return: ACCEPTED, or why the target was dropped (NON_FINITE, WRONG_SHAPE, STALE).
        """
        try:
            time = float(stamp)
            array = np.array(q_target, dtype=float)
        except (TypeError, ValueError, OverflowError):
            return TargetStatus.WRONG_SHAPE
        if array.shape != self._neutral.shape:
            return TargetStatus.WRONG_SHAPE
        if not np.isfinite(array).all():
            return TargetStatus.NON_FINITE
        if not math.isfinite(time) or time < self._stamp:
            return TargetStatus.STALE
        array.setflags(write=False)
        self._target = array
        self._stamp = time
        return TargetStatus.ACCEPTED

    def step(self, now: float, position: npt.ArrayLike, *, engaged: bool = True) -> Guidance:
        """
        Update the state for the current time and return what the limiter should track.

        :param now: Current time [s], on the clock of the target stamps.
        :param position: Current commanded position (the limiter's), shape (n,), [rad] or [m].
        :param engaged: Whether the operator has engaged the robot; False gives DISENGAGED
            (hold where the command stops) whatever the targets.
        :return: The state, the reference and the speed cap.
        :raises ConfigError: If ``now`` is not finite or ``position`` is not finite, shape (n,).
        """
        time = check_number('now', now, -math.inf, math.inf)
        current = _joint_values('position', position, self._neutral.size)
        config = self._config
        previous = self._state
        if not engaged:
            self._state = TrackingState.DISENGAGED
            return Guidance(self._state, current, 1.0)
        if self._target is None:
            self._state = TrackingState.WAITING
            return Guidance(self._state, current, 1.0)
        age = time - self._stamp
        if age > config.neutral_timeout:
            distance = float(np.max(np.abs(current - self._neutral)))
            at_neutral = distance <= AT_NEUTRAL_TOLERANCE
            self._state = (
                TrackingState.AT_NEUTRAL if at_neutral else TrackingState.RETURNING_TO_NEUTRAL
            )
            return Guidance(self._state, self._neutral, config.neutral_speed_scale)
        if age > config.hold_timeout:
            self._state = TrackingState.HOLDING
            return Guidance(self._state, current, 1.0)
        if previous not in (TrackingState.TRACKING, TrackingState.BLENDING):
            self._blend_start = time
        elapsed = time - self._blend_start
        if previous is TrackingState.TRACKING or elapsed >= config.blend_time:
            self._state = TrackingState.TRACKING
            return Guidance(self._state, self._target, 1.0)
        self._state = TrackingState.BLENDING
        return Guidance(self._state, self._target, max(elapsed, 0.0) / config.blend_time)
