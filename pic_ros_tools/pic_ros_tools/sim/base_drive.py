"""
A simulated differential-drive base: velocity commands in, a pose on the floor out.

:class:`BaseDrive` is what a diff_drive_controller does with ``cmd_vel``, without wheels: the
latest command is the target; it is limited like the controller's speed limiter (velocity limits
with one factor on both components, so the turning radius is kept; then each component moves by
at most its acceleration limit per second); no command for ``command_timeout`` makes the target
zero (the base stops within the acceleration limits). The pose is the exact unicycle integral of
the limited velocities, each held over a step: ``x' = v cos(yaw)``, ``y' = v sin(yaw)``,
``yaw' = omega`` -- no sideways motion. Frames: the pose is the base frame's in the odometry frame
(starting at its origin), x forward, y left, yaw counter-clockwise [m], [rad].

Pure Python: :class:`~pic_ros_tools.sim.mujoco_robot.SimRobot` moves its model's base with it.
"""

from __future__ import annotations

import math

from pic_ros.exceptions import ConfigError
from pic_ros.motion.base_following import integrate, Pose2D, step_toward
from pic_ros.robot.mobile_base import MobileBaseSpec


class BaseDrive:
    """
    Drive a differential base from velocity commands within its limits (module docstring).

    :param spec: The base (limits and command timeout).
    :param start: Simulation time of the start [s]; the pose starts at the odometry origin.
    """

    def __init__(self, spec: MobileBaseSpec, start: float = 0.0) -> None:
        self.spec = spec
        self._pose = Pose2D()
        self._time = start
        self._linear = 0.0
        self._angular = 0.0
        self._target = (0.0, 0.0)
        self._stamp: float | None = None
        self.commands = 0
        self.timeouts = 0

    @property
    def pose(self) -> Pose2D:
        """Return the base's pose in the odometry frame [m], [rad]."""
        return self._pose

    @property
    def time(self) -> float:
        """Return the simulation time the pose is at [s]."""
        return self._time

    @property
    def velocity(self) -> tuple[float, float]:
        """Return the base's ``(forward [m/s], turning [rad/s])`` velocity now."""
        return self._linear, self._angular

    @property
    def target(self) -> tuple[float, float]:
        """Return the latest command after the velocity limits, ``(v, omega)`` [m/s], [rad/s]."""
        return self._target

    def command(self, now: float, linear: float, angular: float) -> None:
        """
        Take a velocity command: a Twist's ``linear.x`` and ``angular.z``.

        :param now: Simulation time of arrival [s].
        :param linear: Forward speed [m/s].
        :param angular: Turning speed, counter-clockwise [rad/s].
        :raises ConfigError: If a value is not finite (the command is refused).
        """
        if not (math.isfinite(linear) and math.isfinite(angular)):
            raise ConfigError(f'base command must be finite, got ({linear}, {angular})')
        spec = self.spec
        scale = 1.0
        if linear > spec.max_linear_velocity:
            scale = spec.max_linear_velocity / linear
        elif linear < spec.min_linear_velocity:
            scale = spec.min_linear_velocity / linear  # 0 when backing up is not allowed
        if abs(angular) * scale > spec.max_angular_velocity:
            scale = spec.max_angular_velocity / abs(angular)
        self._target = (linear * scale, angular * scale)
        self._stamp = now
        self.commands += 1

    def timed_out(self, now: float) -> bool:
        """
        Return whether no command arrived within the timeout before ``now``.

        :param now: Simulation time [s].
        :return: True before the first command too.
        """
        return self._stamp is None or now - self._stamp > self.spec.command_timeout

    def advance_to(self, now: float) -> Pose2D:
        """
        Move the base to a simulation time: velocities within the limits, then the pose.

        :param now: Simulation time [s]; a time not after the last does nothing.
        :return: The pose at ``now``.
        """
        dt = now - self._time
        if dt <= 0.0:
            return self._pose
        spec = self.spec
        if self.timed_out(self._time):
            if self._stamp is not None:
                self.timeouts += 1
                self._stamp = None
            self._target = (0.0, 0.0)
        linear, angular = self._target
        self._linear = step_toward(self._linear, linear, spec.max_linear_acceleration * dt)
        self._angular = step_toward(self._angular, angular, spec.max_angular_acceleration * dt)
        self._pose = integrate(self._pose, self._linear, self._angular, dt)
        self._time = now
        return self._pose
