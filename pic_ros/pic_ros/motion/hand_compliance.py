"""
Hand compliance of one robot: wrist forces in, per-arm hand offsets (base frame) out.

What the solver node needs to let a person push a hand (issue 9, item 3): one
:class:`~pic_ros.motion.admittance.VariableAdmittance` per arm, fed with the latest force the
arm's wrist sensor measured, expressed in the robot's base frame. The deviation each admittance
integrates is the offset [m] added to that arm's end-effector target by the whole-body IK (or the
``position`` correspondence): the hand yields to a push and comes back to the imitation target.

Frames. A ``geometry_msgs/WrenchStamped`` gives its force in the frame of its ``frame_id``, a
link of the URDF (TIAGo: ``wrist_ft_link``). The force is rotated into the base frame with the
forward kinematics of that link at the robot's current joint positions (the last solution): no
tf2 is needed, and the frame moves with the commanded arm. A force is a free vector, so only the
link's orientation matters. A ``frame_id`` that is not a link of the URDF (or does not descend
from the base frame) is refused, nothing changes.

Staleness. A force older than ``admittance_force_timeout`` (receive time, the caller's clock), or
none at all, counts as zero: when the sensor stops publishing, the hand returns to the imitation
target instead of holding the last push forever.

Sign: the force is the one the environment applies on the hand, as a wrist sensor reports it (the
hand side of the sensor on the sensor): a push toward +x of the sensor frame reads +x, and the
hand yields toward +x. Forces must be gravity compensated (the weight of the hand and tool
removed from the sensor's reading, as the wrist sensor driver's bias does). Times are passed in;
the core reads no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import enum
import math
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.motion.admittance import (
    ADMITTANCE_PARAMETERS,
    AdmittanceConfig,
    AdmittanceStep,
    finite_vector3,
    VariableAdmittance,
)
from pic_ros.robot.kinematics.chain import KinematicChain
from pic_ros.robot.kinematics.robot_model import RobotModel
from pic_ros.robot.robot import Robot
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

ADMITTANCE: Final = ParameterDef(
    'admittance', False,
    "Let a person push the hand: each arm's wrist force (WrenchStamped on the robot file's "
    'sensor topic, else <arm>/wrist_wrench) drives a variable admittance whose deviation offsets '
    'the hand target (needs whole_body or the position correspondence)',
    read_only=True,
)
"""Turn the hand compliance on (:attr:`HandComplianceConfig.enabled`)."""

FORCE_TIMEOUT: Final = ParameterDef(
    'admittance_force_timeout', 0.5,
    'Age after which the last wrist force counts as zero (the hand returns to the target)',
    unit='s', low=0.01, high=10.0,
)
"""Staleness of a wrist force (:attr:`HandComplianceConfig.force_timeout`)."""

HAND_COMPLIANCE_PARAMETERS: Final = (ADMITTANCE, *ADMITTANCE_PARAMETERS, FORCE_TIMEOUT)
"""Everything :meth:`HandComplianceConfig.from_parameters` reads."""

WRENCH_TOPIC: Final = 'wrist_wrench'
"""Last part of an arm's wrench topic when the robot file names none: ``<arm>/wrist_wrench``."""


def wrench_topic(robot: Robot, arm: str) -> str:
    """
    Return the relative topic an arm's wrist wrench is read from.

    :param robot: The robot; its file's ``force_torque_sensors`` entry of the arm names the
        topic (TIAGo: ``ft_sensor_controller/wrench``, PAL's force_torque_sensor_broadcaster).
    :param arm: Arm name of the robot file (TIAGo: ``arm``).
    :return: The sensor's topic, or ``<arm>/wrist_wrench`` when the robot file has none.
    """
    sensor = robot.spec.force_torque_sensors.get(arm)
    return sensor.topic if sensor is not None else f'{arm}/{WRENCH_TOPIC}'


@dataclass(frozen=True)
class HandComplianceConfig:
    """
    Settings of the hand compliance.

    :param enabled: Whether the solver node runs it (``admittance``).
    :param admittance: The admittance of every hand (refused when unstable).
    :param force_timeout: Age after which a force counts as zero, in [0.01, 10] [s].
    :raises ConfigError: If a value is out of range.
    """

    enabled: bool = ADMITTANCE.default
    admittance: AdmittanceConfig = AdmittanceConfig()
    force_timeout: float = FORCE_TIMEOUT.default

    def __post_init__(self) -> None:
        object.__setattr__(self, 'enabled', ADMITTANCE.check(self.enabled))
        object.__setattr__(self, 'force_timeout', FORCE_TIMEOUT.check(self.force_timeout))

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> HandComplianceConfig:
        """
        Build the settings from parameter values (:data:`HAND_COMPLIANCE_PARAMETERS`).

        :param values: Values by parameter name; missing ones take their defaults.
        :return: The settings.
        :raises ConfigError: If a value is refused or the admittance set is unstable.
        """
        return cls(
            enabled=ADMITTANCE.check(values.get(ADMITTANCE.name, ADMITTANCE.default)),
            admittance=AdmittanceConfig.from_parameters(values),
            force_timeout=FORCE_TIMEOUT.check(
                values.get(FORCE_TIMEOUT.name, FORCE_TIMEOUT.default)
            ),
        )


class ForceInput(enum.Enum):
    """What happened to a wrist force given to :meth:`HandCompliance.observe`."""

    ACCEPTED = 'accepted'
    """Kept as the arm's latest force (base frame)."""

    UNKNOWN_ARM = 'unknown_arm'
    """Refused: the arm is not one of the compliant arms."""

    UNKNOWN_FRAME = 'unknown_frame'
    """Refused: the frame is not a link of the URDF below the base frame."""

    BAD_FORCE = 'bad_force'
    """Refused: the force is not 3 finite numbers (or the time is not finite)."""


class LinkOrientation:
    """
    Orientation of any link of a robot in its base frame, by forward kinematics.

    :param model: The robot's URDF joint tree.
    :param base_frame: The base link every result is expressed in.
    :param defaults: Joint positions used for joints the caller does not give [rad] or [m]
        (e.g. the neutral pose and locked joints); other movable joints default to 0.
    """

    def __init__(
        self, model: RobotModel, base_frame: str, defaults: Mapping[str, float] | None = None
    ) -> None:
        self._model = model
        self._base = base_frame
        self._defaults = dict(defaults or {})
        self._chains: dict[str, KinematicChain | None] = {}

    @property
    def base_frame(self) -> str:
        """Return the base link."""
        return self._base

    def knows(self, frame: str) -> bool:
        """
        Tell whether a frame is a link below the base frame (or the base frame itself).

        :param frame: A ``frame_id`` (a leading ``/`` is ignored).
        :return: True if :meth:`rotation` can place it.
        """
        return self._chain(frame) is not None

    def _chain(self, frame: str) -> KinematicChain | None:
        link = frame.lstrip('/')
        if link not in self._chains:
            try:
                self._chains[link] = KinematicChain.from_model(self._model, self._base, link)
            except ChainError:
                self._chains[link] = None
        return self._chains[link]

    def rotation(self, frame: str, joints: Mapping[str, float] | None = None) -> FloatArray:
        """
        Return the rotation base <- frame at given joint positions.

        :param frame: Link name (``frame_id``; a leading ``/`` is ignored).
        :param joints: Joint positions by name [rad] or [m]; missing ones take the defaults.
        :return: Rotation matrix, shape (3, 3).
        :raises ChainError: If the frame is not a link below the base frame.
        """
        chain = self._chain(frame)
        if chain is None:
            raise ChainError(
                f'frame {frame!r} is not a link of {self._model.name!r} below {self._base!r}'
            )
        given = joints or {}
        q = [float(given.get(name, self._defaults.get(name, 0.0))) for name in chain.joint_names]
        rotation: FloatArray = chain.link_transforms(q)[chain.tip_link][:3, :3]
        return rotation


def robot_orientation(robot: Robot) -> LinkOrientation:
    """
    Return the link orientations of a robot, its neutral pose filling in missing joints.

    :param robot: The robot (URDF model, base frame, arms' neutral poses, locked joints).
    :return: Orientation of any of its links in its base frame.
    """
    defaults: dict[str, float] = {}
    for arm in robot.arms.values():
        defaults.update(zip(arm.joint_names, (float(v) for v in arm.neutral), strict=True))
    defaults.update({name: float(value) for name, value in robot.spec.locked_joints.items()})
    return LinkOrientation(robot.model, robot.base_frame, defaults)


@dataclass(frozen=True)
class _Force:
    received: float
    base: FloatArray


class HandCompliance:
    """
    The variable admittance of each hand of a robot, fed by its wrist force sensor.

    Call :meth:`observe` for each wrench as it arrives and :meth:`step` once per solver frame;
    :meth:`step` returns the offsets to add to the hands' targets (base frame).

    Guarantees: with no force (or only stale ones) every offset decays to zero; a refused input
    changes nothing; a constant force ``f`` settles the offset at ``f / k`` with ``k`` the
    stiffness the role then has.

    :param orientation: Places the sensors' frames in the base frame.
    :param arms: Names of the compliant arms.
    :param config: Settings (defaults: the paper's admittance, 0.5 s timeout).
    :raises ConfigError: If no arm is given.
    """

    def __init__(
        self,
        orientation: LinkOrientation,
        arms: Sequence[str],
        config: HandComplianceConfig | None = None,
    ) -> None:
        if not arms:
            raise ConfigError('hand compliance needs at least one arm')
        self._orientation = orientation
        self._config = config if config is not None else HandComplianceConfig()
        self._admittances = {
            arm: VariableAdmittance(self._config.admittance) for arm in dict.fromkeys(arms)
        }
        self._forces: dict[str, _Force] = {}
        self._last: dict[str, AdmittanceStep] = {}
        self.received = dict.fromkeys(self._admittances, 0)
        self.refused = {status: 0 for status in ForceInput if status is not ForceInput.ACCEPTED}

    @property
    def config(self) -> HandComplianceConfig:
        """Return the settings."""
        return self._config

    @property
    def arms(self) -> tuple[str, ...]:
        """Return the compliant arms."""
        return tuple(self._admittances)

    @property
    def last(self) -> Mapping[str, AdmittanceStep]:
        """Return each arm's latest admittance step (read-only; absent before the first)."""
        return MappingProxyType(self._last)

    def adopt(self, other: HandCompliance) -> None:
        """
        Keep another instance's latest forces and counters (after a change of its settings).

        The admittance state restarts (a new parameter set starts stiff, at the target); a
        change of other parameters keeps the instance itself (solver_node).

        :param other: The instance being replaced.
        """
        self._forces = {arm: f for arm, f in other._forces.items() if arm in self._admittances}
        for arm in self.received:
            self.received[arm] = other.received.get(arm, 0)
        self.refused = dict(other.refused)

    def observe(
        self,
        arm: str,
        now: float,
        frame: str,
        force: npt.ArrayLike,
        joints: Mapping[str, float] | None = None,
    ) -> ForceInput:
        """
        Take a wrist force measurement.

        :param arm: The arm whose sensor measured it.
        :param now: Receive time [s] (the clock :meth:`step` is given).
        :param frame: The force's frame (``frame_id``: a link of the URDF).
        :param force: Force on the hand, shape (3,) [N], in ``frame``, gravity compensated.
        :param joints: Current joint positions by name [rad] or [m] (the last solution);
            missing ones take the neutral pose.
        :return: Whether it was kept, or why not.
        """
        status = self._observe(arm, now, frame, force, joints)
        if status is ForceInput.ACCEPTED:
            self.received[arm] += 1
        else:
            self.refused[status] += 1
        return status

    def _observe(
        self,
        arm: str,
        now: float,
        frame: str,
        force: npt.ArrayLike,
        joints: Mapping[str, float] | None,
    ) -> ForceInput:
        if arm not in self._admittances:
            return ForceInput.UNKNOWN_ARM
        vector = finite_vector3(force)
        if vector is None or not math.isfinite(now):
            return ForceInput.BAD_FORCE
        if not self._orientation.knows(frame):
            return ForceInput.UNKNOWN_FRAME
        base = self._orientation.rotation(frame, joints) @ vector
        self._forces[arm] = _Force(float(now), base)
        return ForceInput.ACCEPTED

    def force(self, arm: str, now: float) -> FloatArray:
        """
        Return the force an arm's admittance is driven with now.

        :param arm: A compliant arm.
        :param now: Current time [s].
        :return: The latest force in the base frame, shape (3,) [N]; zero when none was taken or
            it is older than the timeout (or from the future by more than the timeout).
        """
        latest = self._forces.get(arm)
        if latest is None or abs(now - latest.received) > self._config.force_timeout:
            return np.zeros(3)
        return latest.base.copy()

    def step(
        self,
        now: float,
        dt: float,
        targets: Mapping[str, npt.ArrayLike] | None = None,
    ) -> dict[str, FloatArray]:
        """
        Advance every hand's admittance by ``dt`` and return the hand offsets.

        :param now: Current time [s] (decides which forces are stale).
        :param dt: Time since the previous step [s]; a step that is not finite and > 0 changes
            nothing (the offsets are returned as they were).
        :param targets: Each arm's imitation target, shape (3,) [m], base frame (only reported
            back in :attr:`last`; the offset does not depend on it); default the origin.
        :return: Offset per arm, shape (3,) [m], base frame: the admittance's deviation.
        """
        given = targets or {}
        offsets: dict[str, FloatArray] = {}
        for arm, admittance in self._admittances.items():
            target = given.get(arm)
            result = admittance.step(
                np.zeros(3) if target is None else target, self.force(arm, now), dt
            )
            self._last[arm] = result
            offsets[arm] = np.array(result.deviation, dtype=float)
        return offsets

    def reset(self) -> None:
        """Forget the forces and bring every hand back to rest, stiff, at its target."""
        self._forces.clear()
        self._last.clear()
        for admittance in self._admittances.values():
            admittance.reset()

    def status(self) -> dict[str, object]:
        """
        Return what a user needs to see, per arm: role, stiffness, deviation, force, counts.

        :return: Diagnostic values (``admittance_<key>_<arm>``), rounded.
        """
        values: dict[str, object] = {}
        for arm in self._admittances:
            last = self._last.get(arm)
            values[f'admittance_wrenches_{arm}'] = self.received[arm]
            if last is None:
                values[f'admittance_role_{arm}'] = 'n/a'
                continue
            values[f'admittance_role_{arm}'] = last.role.value
            values[f'admittance_stiffness_n_per_m_{arm}'] = round(last.stiffness, 2)
            values[f'admittance_deviation_m_{arm}'] = round(
                float(np.linalg.norm(last.deviation)), 4
            )
            values[f'admittance_force_n_{arm}'] = round(float(np.linalg.norm(last.force)), 2)
        for status, count in self.refused.items():
            values[f'admittance_wrenches_{status.value}'] = count
        return values
