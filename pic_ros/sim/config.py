"""
Settings of a simulated robot: physics time step, arm servos, contacts, rendering, followers.

:class:`SimConfig` holds the numbers the model (:mod:`pic_ros.sim.mujoco_model`) and the
simulated robot (:mod:`pic_ros.sim.mujoco_robot`) are built from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.sim.trajectory import FollowerConfig


@dataclass(frozen=True)
class SimConfig:
    """
    Physics and servo settings of a simulated robot.

    :param timestep: Physics time step [s], in [1e-4, 0.01].
    :param natural_frequency: Natural frequency ``wn`` of every arm joint's servo [rad/s], in
        [1, 500]; ``wn * timestep`` must be <= 0.5.
    :param damping_ratio: Damping ratio ``zeta`` of the servos, in [0.1, 5].
    :param armature: Reflected drive inertia added to every arm joint [kg m^2], in [0, 10].
    :param gravity_compensation: Compensate gravity through the actuators (within the effort
        limits); False lets the servos hold the arms against gravity alone (they sag by
        ``torque / kp``).
    :param self_collisions: Let robot links collide with each other, except the body pairs
        already touching in the initial pose (floor contacts are always on).
    :param limit_velocity: Keep each servo target within ``velocity limit * tracking_lag`` of
        the measured position, so that a far target (a step) is approached at about the URDF
        velocity limit, as a drive's speed limit does; a target that moves within the limits is
        not affected.
    :param shadows: Render shadows (about 2.5x the time per frame on a software renderer).
    :param follower: Options of the trajectory followers.
    :raises ConfigError: If a value is out of range.
    """

    timestep: float = 0.002
    natural_frequency: float = 60.0
    damping_ratio: float = 1.0
    armature: float = 0.05
    gravity_compensation: bool = True
    self_collisions: bool = False
    limit_velocity: bool = True
    shadows: bool = False
    follower: FollowerConfig = field(default_factory=FollowerConfig)

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        set_field(self, 'timestep', check_number('timestep', self.timestep, 1e-4, 0.01))
        set_field(
            self, 'natural_frequency',
            check_number('natural_frequency', self.natural_frequency, 1.0, 500.0),
        )
        set_field(
            self, 'damping_ratio', check_number('damping_ratio', self.damping_ratio, 0.1, 5.0)
        )
        set_field(self, 'armature', check_number('armature', self.armature, 0.0, 10.0))
        for name in ('gravity_compensation', 'self_collisions', 'limit_velocity', 'shadows'):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f'{name} must be a bool, got {getattr(self, name)!r}')
        if not isinstance(self.follower, FollowerConfig):
            raise ConfigError(f'follower must be a FollowerConfig, got {self.follower!r}')
        if self.natural_frequency * self.timestep > 0.5:
            raise ConfigError(
                f'natural_frequency * timestep = {self.natural_frequency * self.timestep:.3f} '
                '> 0.5: the servo stiffness would make the integration unstable; lower one'
            )

    @property
    def tracking_lag(self) -> float:
        """Return the servos' lag behind a constant-velocity target, ``2 zeta / wn`` [s]."""
        return 2.0 * self.damping_ratio / self.natural_frequency
