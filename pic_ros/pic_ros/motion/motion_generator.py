"""
The one interface of the motion generators: what a command stream needs of either.

A motion generator keeps a joint command (position, velocity and, when it has one,
acceleration) and moves it towards targets within :class:`~pic_ros.motion.limiter.MotionLimits`.
Two implement :class:`MotionGenerator`:

- :class:`~pic_ros.motion.generator.JerkLimitedGenerator` (``ruckig``) keeps a plan: its chunk
  samples that plan ahead of the step (:attr:`MotionGenerator.plans_ahead` true);
- :class:`~pic_ros.motion.limiter.JointLimiter` (``limiter``) rate-limits the command: its chunk
  is the command as it is after the step.

:func:`make_motion_generator` builds one by its ``motion_generator`` name.
"""

from __future__ import annotations

from typing import Final, Protocol

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion.generator import JerkLimitedGenerator
from pic_ros.motion.limiter import JointLimiter, MotionLimits

FloatArray = npt.NDArray[np.float64]

MOTION_GENERATORS: Final = ('ruckig', 'limiter')
"""The names of the motion generators (the choices of ``motion_generator``)."""


class CommandStep(Protocol):
    """The command after one step of a motion generator."""

    @property
    def position(self) -> FloatArray:
        """Return the commanded positions, shape (n,), [rad] or [m]."""
        ...

    @property
    def velocity(self) -> FloatArray:
        """Return the commanded velocities, shape (n,), [rad/s] or [m/s]."""
        ...


class MotionGenerator(Protocol):
    """A joint command moved towards targets within limits, one step at a time."""

    @property
    def limits(self) -> MotionLimits:
        """Return the limits the command keeps."""
        ...

    @property
    def position(self) -> FloatArray:
        """Return the commanded position, shape (n,), [rad] or [m]."""
        ...

    @property
    def velocity(self) -> FloatArray:
        """Return the commanded velocity, shape (n,), [rad/s] or [m/s]."""
        ...

    @property
    def acceleration(self) -> FloatArray | None:
        """Return the commanded acceleration, shape (n,), [rad/s^2] or [m/s^2] (None: none)."""
        ...

    @property
    def plans_ahead(self) -> bool:
        """Return whether the command is a plan sampled ahead of the step (else: as it is)."""
        ...

    def reset(
        self,
        position: npt.ArrayLike,
        velocity: npt.ArrayLike | None = None,
        acceleration: npt.ArrayLike | None = None,
    ) -> None:
        """
        Restart from a given state; the target becomes its position.

        :param position: Commanded position, shape (n,), [rad] or [m].
        :param velocity: Commanded velocity, shape (n,), [rad/s] or [m/s]; None: at rest.
        :param acceleration: Commanded acceleration, shape (n,), [rad/s^2] or [m/s^2]; None:
            zero (a generator without an acceleration state ignores it).
        """
        ...

    def step(
        self, target: npt.ArrayLike | None, dt: float, speed_scale: float = 1.0
    ) -> CommandStep:
        """
        Advance the command by ``dt`` [s] towards a target (None keeps the previous one).

        :param target: Target positions, shape (n,), [rad] or [m], or None.
        :param dt: Time step [s].
        :param speed_scale: Cap on the speed as a fraction of the velocity limits, in [0, 1].
        :return: The new command.
        """
        ...


def make_motion_generator(
    name: str, limits: MotionLimits, position: npt.ArrayLike
) -> MotionGenerator:
    """
    Build a motion generator by name, at rest at a position.

    :param name: ``ruckig`` or ``limiter`` (:data:`MOTION_GENERATORS`).
    :param limits: The limits it keeps.
    :param position: Its starting position, shape (n,), [rad] or [m].
    :return: The generator.
    :raises ConfigError: If the name is not a motion generator.
    """
    if name == 'ruckig':
        return JerkLimitedGenerator(limits, position)
    if name == 'limiter':
        return JointLimiter(limits, position)
    raise ConfigError(f'motion_generator must be one of {MOTION_GENERATORS}, got {name!r}')
