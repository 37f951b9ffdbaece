"""
Settings of a simulated robot: physics time step, arm servos, contacts, rendering, followers.

:class:`SimConfig` holds the numbers the model (:mod:`pic_ros_tools.sim.mujoco_model`) and the
simulated robot (:mod:`pic_ros_tools.sim.mujoco_robot`) are built from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.schema import ParameterDef
from pic_ros_tools.sim.trajectory import ALLOW_NONZERO_VELOCITY_AT_END, FollowerConfig

TIMESTEP: Final = ParameterDef(
    'timestep', 0.002, 'Physics time step', unit='s', low=1e-4, high=0.01, read_only=True
)
NATURAL_FREQUENCY: Final = ParameterDef(
    'natural_frequency', 60.0,
    'Natural frequency of the joint servos; tracking lag = 2 damping_ratio / it',
    unit='rad/s', low=1.0, high=500.0, read_only=True,
)
DAMPING_RATIO: Final = ParameterDef(
    'damping_ratio', 1.0, 'Damping ratio of the joint servos', low=0.1, high=5.0, read_only=True,
)
SELF_COLLISIONS: Final = ParameterDef(
    'self_collisions', False, 'Let the robot links collide with each other', read_only=True
)
FLOOR_CONTACTS: Final = ParameterDef(
    'floor_contacts', False,
    "Let the robot links touch the floor drawn at the robot's lowest point (off: the floor is "
    'only a picture, as for a robot mounted on a table or pedestal)', read_only=True,
)
FEEDFORWARD: Final = ParameterDef(
    'feedforward', True,
    'Servos with velocity and model-based acceleration feedforward (the inverse dynamics of the '
    'commanded trajectory), so that the joints follow it closely, as a drive with a tuned '
    'feedforward does; false: position servos only, which lag a moving command by '
    '2 damping_ratio / natural_frequency', read_only=True,
)
SIM_CONFIG_PARAMETERS: Final = (
    TIMESTEP, NATURAL_FREQUENCY, DAMPING_RATIO, ALLOW_NONZERO_VELOCITY_AT_END, SELF_COLLISIONS,
    FLOOR_CONTACTS, FEEDFORWARD,
)
"""Everything :meth:`SimConfig.from_parameters` reads."""


@dataclass(frozen=True)
class SimConfig:
    """
    Physics and servo settings of a simulated robot.

    :param timestep: Physics time step [s], in [1e-4, 0.01].
    :param natural_frequency: Natural frequency ``wn`` of every arm joint's servo [rad/s], in
        [1, 500]; ``wn * timestep`` must be <= 0.5.
    :param damping_ratio: Damping ratio ``zeta`` of the servos, in [0.1, 5].
    :param armature: Reflected drive inertia added to every arm joint [kg m^2], in [0, 10]; a
        joint whose effort limit cannot accelerate it gets less
        (:data:`~pic_ros_tools.sim.mujoco_model.DRIVE_ACCELERATION`).
    :param gravity_compensation: Compensate gravity through the actuators (within the effort
        limits); False lets the servos hold the arms against gravity alone (they sag by
        ``torque / kp``).
    :param self_collisions: Let robot links collide with each other, except the body pairs
        already touching in the initial pose.
    :param floor_contacts: Let robot links touch the floor. Off by default: the floor is drawn
        at the robot's lowest point in the initial pose, but a fixed-base robot is mounted where
        its user put it (YuMi on a table, whose top is its base plane; its hands reach below it
        at the table's edge), and the simulation shows what the commands do, as a
        joint_trajectory_controller on the real robot would, not what a floor under the base
        would stop (YuMi's left hand on the demo recording: joints up to 30x their
        acceleration limits with contacts on).
    :param limit_velocity: Keep each servo target within ``velocity limit * tracking_lag`` of
        the measured position, so that a far target (a step) is approached at about the URDF
        velocity limit, as a drive's speed limit does; a target that moves within the limits is
        not affected.
    :param feedforward: Add the commanded velocity and the feedforward torque of the commanded
        trajectory to each servo's target
        (:meth:`~pic_ros_tools.sim.mujoco_robot.SimRobot.step_to`): the inverse dynamics of the
        commanded accelerations with the full joint-space inertia at the current pose (the coupling
        between joints included) and, with ``gravity_compensation``, the Coriolis and centrifugal
        torques. A joint then follows a smooth command within a few percent of its acceleration
        limit instead of lagging it by ``tracking_lag``, and the coupling no longer pushes it past
        the limits the command keeps (``evaluate --live``; ``docs/results.md``). Off: position
        servos only.
    :param shadows: Render shadows (about 2.5x the time per frame on a software renderer).
    :param follower: Options of the trajectory followers.
    :raises ConfigError: If a value is out of range.
    """

    timestep: float = TIMESTEP.default
    natural_frequency: float = NATURAL_FREQUENCY.default
    damping_ratio: float = DAMPING_RATIO.default
    armature: float = 0.05
    gravity_compensation: bool = True
    self_collisions: bool = SELF_COLLISIONS.default
    floor_contacts: bool = FLOOR_CONTACTS.default
    limit_velocity: bool = True
    feedforward: bool = FEEDFORWARD.default
    shadows: bool = False
    follower: FollowerConfig = field(default_factory=FollowerConfig)

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        for item in (TIMESTEP, NATURAL_FREQUENCY, DAMPING_RATIO):
            set_field(self, item.name, item.check(getattr(self, item.name)))
        set_field(self, 'armature', check_number('armature', self.armature, 0.0, 10.0))
        for name in (
            'gravity_compensation', 'self_collisions', 'floor_contacts', 'limit_velocity',
            'feedforward', 'shadows',
        ):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f'{name} must be a bool, got {getattr(self, name)!r}')
        if not isinstance(self.follower, FollowerConfig):
            raise ConfigError(f'follower must be a FollowerConfig, got {self.follower!r}')
        if self.natural_frequency * self.timestep > 0.5:
            raise ConfigError(
                f'natural_frequency * timestep = {self.natural_frequency * self.timestep:.3f} '
                '> 0.5: the servo stiffness would make the integration unstable; lower one'
            )

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> SimConfig:
        """
        Build the settings from parameter values (:data:`SIM_CONFIG_PARAMETERS`).

        :param values: Values by parameter name; missing ones take their defaults.
        :return: The settings (the others at their defaults).
        :raises ConfigError: If a value is refused or the values are inconsistent (e.g. a
            stiffness too high for the time step).
        """
        checked = {
            item.name: item.check(values.get(item.name, item.default))
            for item in SIM_CONFIG_PARAMETERS
        }
        follower = FollowerConfig(
            allow_nonzero_velocity_at_trajectory_end=checked.pop(
                ALLOW_NONZERO_VELOCITY_AT_END.name
            )
        )
        return cls(follower=follower, **checked)

    @property
    def tracking_lag(self) -> float:
        """Return a pure position servo's lag behind a ramp, ``2 zeta / wn`` [s]."""
        return 2.0 * self.damping_ratio / self.natural_frequency
