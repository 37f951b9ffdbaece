"""
A robot's mobile base and wrist force/torque sensors, as written in its robot file.

Two optional sections of ``config/<robot>.yaml`` (:mod:`pic_ros.robot.config`), read by the
simulation (:mod:`pic_ros_tools.sim`) and by whoever wires the robot's topics::

    mobile_base:
      kind: differential                    # the only kind: a non-holonomic base (v, omega)
      command_topic: mobile_base_controller/cmd_vel_unstamped   # geometry_msgs/Twist, relative
      odometry_topic: mobile_base_controller/odom               # nav_msgs/Odometry, relative
      odom_frame: odom                      # the odometry's fixed frame (its child: base_frame)
      max_linear_velocity: 1.0              # [m/s], forward
      min_linear_velocity: -0.2             # [m/s], backward (<= 0)
      max_angular_velocity: 1.05            # [rad/s]
      max_linear_acceleration: 0.5          # [m/s^2]
      max_angular_acceleration: 1.05        # [rad/s^2]
      command_timeout: 0.25                 # [s] without a command: the base stops
    force_torque_sensors:
      arm:                                  # the arm whose wrist carries it (a key of arms)
        link: wrist_ft_link                 # the sensor's link (its frame is the wrench's)
        topic: ft_sensor_controller/wrench  # geometry_msgs/WrenchStamped, relative (optional)

The limits are the base controller's (a diff_drive_controller's ``linear.x`` and ``angular.z``
limits), the velocity limit applied with one factor on both components (the turning radius is
kept), the acceleration limits per component.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError

BASE_KINDS: Final = ('differential',)
"""Kinds of mobile base the simulation drives."""

_BASE_NUMBERS: Final = {
    'max_linear_velocity': (1e-3, 10.0),
    'min_linear_velocity': (-10.0, 0.0),
    'max_angular_velocity': (1e-3, 20.0),
    'max_linear_acceleration': (1e-3, 50.0),
    'max_angular_acceleration': (1e-3, 100.0),
    'command_timeout': (1e-3, 10.0),
}


@dataclass(frozen=True)
class MobileBaseSpec:
    """
    A differential-drive base: its ROS interface and the limits of its controller.

    :param kind: ``differential``: forward speed along the base's x and turning speed about z,
        no sideways motion.
    :param command_topic: Velocity command topic (``geometry_msgs/Twist``), a relative name.
    :param odometry_topic: Odometry topic (``nav_msgs/Odometry``), a relative name.
    :param odom_frame: The odometry's fixed frame; the base moves in it from its origin.
    :param max_linear_velocity: Largest forward speed [m/s], > 0.
    :param min_linear_velocity: Largest backward speed, as a velocity <= 0 [m/s].
    :param max_angular_velocity: Largest turning speed either way [rad/s], > 0.
    :param max_linear_acceleration: Largest change of the forward speed [m/s^2], > 0.
    :param max_angular_acceleration: Largest change of the turning speed [rad/s^2], > 0.
    :param command_timeout: Time without a command after which the base stops (within the
        acceleration limits) [s], > 0.
    :raises ConfigError: If a value is out of range.
    """

    kind: str = 'differential'
    command_topic: str = 'cmd_vel'
    odometry_topic: str = 'odom'
    odom_frame: str = 'odom'
    max_linear_velocity: float = 1.0
    min_linear_velocity: float = -1.0
    max_angular_velocity: float = 1.0
    max_linear_acceleration: float = 1.0
    max_angular_acceleration: float = 1.0
    command_timeout: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in BASE_KINDS:
            raise ConfigError(f'mobile_base.kind must be one of {BASE_KINDS}, got {self.kind!r}')
        for name in ('command_topic', 'odometry_topic', 'odom_frame'):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise ConfigError(f'mobile_base.{name} must be a non-empty string, got {value!r}')
        for topic in (self.command_topic, self.odometry_topic):
            if topic.startswith(('/', '~')):
                raise ConfigError(
                    f'mobile_base topic {topic!r} must be relative (namespaces and remaps apply)'
                )
        for name, (low, high) in _BASE_NUMBERS.items():
            object.__setattr__(
                self, name, check_number(f'mobile_base.{name}', getattr(self, name), low, high)
            )


@dataclass(frozen=True)
class ForceTorqueSensorSpec:
    """
    A six-axis force/torque sensor at an arm's wrist.

    :param arm: The arm it is on (a key of the robot's ``arms``).
    :param link: The sensor's link; its frame is the frame of the wrench.
    :param topic: Wrench topic (``geometry_msgs/WrenchStamped``), a relative name.
    """

    arm: str
    link: str
    topic: str


def mobile_base_spec(data: Any, where: str) -> MobileBaseSpec:
    """
    Read a ``mobile_base`` section.

    :param data: The section.
    :param where: File and key, for messages.
    :return: The base.
    :raises ConfigError: On an unknown key or a bad value (the message names it).
    """
    if not isinstance(data, dict):
        raise ConfigError(f'{where} must be a mapping')
    known = {'kind', 'command_topic', 'odometry_topic', 'odom_frame'} | set(_BASE_NUMBERS)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f'{where}: unknown keys {unknown}; known: {sorted(known)}')
    missing = sorted(known - set(data))
    if missing:
        raise ConfigError(f'{where}: missing keys {missing}')
    try:
        return MobileBaseSpec(**{str(key): value for key, value in data.items()})
    except ConfigError as error:
        raise ConfigError(f'{where}: {error}') from None


def force_torque_specs(
    data: Any, arms: Mapping[str, object], where: str
) -> dict[str, ForceTorqueSensorSpec]:
    """
    Read a ``force_torque_sensors`` section: a sensor per arm name.

    :param data: The section.
    :param arms: The robot's arms by name.
    :param where: File and key, for messages.
    :return: Sensors by arm name; the topic defaults to ``<arm>/wrist_wrench``.
    :raises ConfigError: On an unknown arm or key, or a bad value.
    """
    if not isinstance(data, dict):
        raise ConfigError(f'{where} must map arm names to sensors')
    sensors = {}
    for arm, entry in data.items():
        if arm not in arms:
            raise ConfigError(f'{where}.{arm}: {arm!r} is not an arm; arms: {", ".join(arms)}')
        if not isinstance(entry, dict) or 'link' not in entry:
            raise ConfigError(f'{where}.{arm} must be a mapping with a link')
        unknown = sorted(set(entry) - {'link', 'topic'})
        if unknown:
            raise ConfigError(f'{where}.{arm}: unknown keys {unknown}; known: [link, topic]')
        link = entry['link']
        topic = entry.get('topic', f'{arm}/wrist_wrench')
        for key, value in (('link', link), ('topic', topic)):
            if not isinstance(value, str) or not value:
                raise ConfigError(f'{where}.{arm}.{key} must be a non-empty string')
        if topic.startswith(('/', '~')):
            raise ConfigError(f'{where}.{arm}.topic {topic!r} must be relative')
        sensors[str(arm)] = ForceTorqueSensorSpec(arm=str(arm), link=link, topic=topic)
    links = [sensor.link for sensor in sensors.values()]
    if len(set(links)) != len(links):
        raise ConfigError(f'{where}: two sensors on one link')
    return sensors
