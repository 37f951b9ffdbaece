"""
A short, bounded prediction of a joint target stream from its filtered velocity.

The solver sends a target per tracker frame (30 Hz for a Kinect); the commands go out at the
publisher's rate and reach the robot later still. :class:`TargetPredictor` estimates the targets'
velocity (finite differences of consecutive targets, low-pass filtered with the time constant
:data:`VELOCITY_TIME_CONSTANT`) and, at a control step ``age`` seconds after the last target,
returns that target moved along the velocity by ``age + horizon``:

    q_pred = q_last + v_filtered * min(age + horizon, horizon + MAX_AGE)

Bounds, so that noise or a stall cannot throw the command far: the velocity estimate is clamped
to the velocity limits, the extrapolation time to ``horizon + MAX_AGE``
(:data:`MAX_AGE`), and a gap between targets longer than :data:`MAX_GAP` (the person lost, a
stall) starts the estimate over at zero velocity. ``horizon`` 0 turns the prediction off (the
target is returned unchanged); the velocity estimate is still there for a generator that tracks
moving targets (:class:`~pic_ros.motion.generator.JerkLimitedGenerator`).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

PREDICTION_HORIZON: Final = ParameterDef(
    'prediction_horizon', 0.03,
    'How far ahead the joint targets are extrapolated from their filtered velocity, beyond the '
    'time since the last target, to make up for the command delay (0: off)',
    unit='s', low=0.0, high=0.2,
)
"""The trajectory publisher's ``prediction_horizon`` (:class:`TargetPredictor`)."""

VELOCITY_TIME_CONSTANT: Final = 0.05
"""Time constant of the low-pass filter on the targets' velocity [s]."""

MAX_AGE: Final = 0.1
"""Longest time since the last target that the prediction bridges [s]."""

MAX_GAP: Final = 0.25
"""A gap between targets longer than this restarts the velocity estimate at zero [s]."""


class TargetPredictor:
    """
    Filter the velocity of a joint target stream and extrapolate the last target a little.

    Deterministic: the same targets at the same times give the same predictions.

    :param velocity_limit: Largest speed the estimate may have, per joint, shape (n,), > 0
        [rad/s] or [m/s].
    :param horizon: Extrapolation beyond the time since the last target, in [0, 0.2] [s].
    :raises ConfigError: If the velocity limits are not finite and > 0 or the horizon is out of
        range.
    """

    def __init__(self, velocity_limit: npt.ArrayLike, horizon: float) -> None:
        limit = np.array(velocity_limit, dtype=float)
        if limit.ndim != 1 or limit.size == 0 or not np.all(np.isfinite(limit) & (limit > 0.0)):
            raise ConfigError(f'velocity_limit must be finite numbers > 0, got {velocity_limit!r}')
        self._limit = limit
        self._horizon = float(PREDICTION_HORIZON.check(horizon))
        self._stamp = -math.inf
        self._target: FloatArray | None = None
        self._velocity = np.zeros(limit.size)

    @property
    def horizon(self) -> float:
        """Return the extrapolation beyond the time since the last target [s]."""
        return self._horizon

    @property
    def velocity(self) -> FloatArray:
        """Return the filtered target velocity, shape (n,), [rad/s] or [m/s] (a copy)."""
        return self._velocity.copy()

    def adopt(self, other: TargetPredictor) -> None:
        """
        Go on from another predictor's targets (a parameter change built this one).

        The last target, its stamp and the filtered velocity (clipped into this one's limits)
        carry over, so that the prediction does not drop back to the last target for a step.

        :param other: The predictor being replaced (of the same joints; another is ignored).
        """
        if other._limit.shape == self._limit.shape and other._target is not None:
            self._stamp, self._target = other._stamp, other._target.copy()
            self._velocity = np.clip(other._velocity, -self._limit, self._limit)

    def reset(self) -> None:
        """Forget the targets (e.g. after the clock went back or the person was lost)."""
        self._stamp = -math.inf
        self._target = None
        self._velocity = np.zeros(self._limit.size)

    def update(self, stamp: float, target: npt.ArrayLike) -> None:
        """
        Take a valid target.

        :param stamp: Its time [s], not older than the previous one's.
        :param target: Joint positions, shape (n,), finite, [rad] or [m].
        :raises ConfigError: If the target is not n finite numbers or the stamp is not finite.
        """
        time = check_number('stamp', stamp, -math.inf, math.inf)
        values = np.array(target, dtype=float)
        if values.shape != self._limit.shape or not np.all(np.isfinite(values)):
            raise ConfigError(f'target must be {self._limit.size} finite numbers, got {target!r}')
        gap = time - self._stamp
        if self._target is None or not 0.0 <= gap <= MAX_GAP:
            self._velocity = np.zeros(self._limit.size)
        elif gap > 0.0:
            raw = np.clip((values - self._target) / gap, -self._limit, self._limit)
            weight = 1.0 - math.exp(-gap / VELOCITY_TIME_CONSTANT)
            self._velocity = self._velocity + weight * (raw - self._velocity)
        self._stamp = time
        self._target = values

    def predict(self, now: float, reference: npt.ArrayLike) -> FloatArray:
        """
        Return the reference moved along the filtered velocity to ``now + horizon``.

        :param now: Current time [s], on the clock of the stamps.
        :param reference: The last target (or what the caller tracks instead), shape (n,).
        :return: The prediction, shape (n,) (the reference unchanged before the first target or
            with ``horizon`` 0).
        """
        values = np.array(reference, dtype=float)
        if self._target is None or self._horizon == 0.0:
            return values
        ahead = min(max(now - self._stamp, 0.0) + self._horizon, self._horizon + MAX_AGE)
        predicted: FloatArray = values + self._velocity * ahead
        return predicted
