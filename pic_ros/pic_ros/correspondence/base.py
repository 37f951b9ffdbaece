"""
Correspondences: how a human arm becomes targets for a robot arm, and the registry of them.

A correspondence takes the person's arm from a body-frame skeleton and places it on one robot arm
(:class:`~pic_ros.correspondence.targets.ArmTargets`, robot base frame). Which human arm drives
which robot arm is the mapping mode (:mod:`pic_ros.correspondence.mapping`); how lengths and
positions carry over is the correspondence:

- ``direction`` (:mod:`~pic_ros.correspondence.direction`): keep each human bone's direction, use
  the robot's own landmark distances. Scale-free: it does not depend on the person's size.
- ``position`` (:mod:`~pic_ros.correspondence.position`): scale the whole arm uniformly so that
  the hand lands at the scaled human wrist.

A new correspondence is a new module with a :class:`Correspondence` subclass decorated with
:func:`register_correspondence`; every front end (node parameter, command line, launch files)
takes its choices from :func:`correspondence_names`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.correspondence.mapping import human_side_for, MappingMode
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.correspondence.user_profile import load_user_profile, UserProfile
from pic_ros.exceptions import ConfigError
from pic_ros.registry import Registry
from pic_ros.robot.mapping_defaults import MappingDefaults, parse_scale, SCALE_RANGE
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import Side, SkeletonFrame

FloatArray = npt.NDArray[np.float64]

DEFAULT_CORRESPONDENCE: Final = 'direction'
"""The correspondence used when none is configured (``docs/results.md`` has the measurement)."""

MAPPING: Final = ParameterDef(
    'mapping', MappingMode.SAME_SIDE.value,
    "Which human arm drives which robot arm: same_side as if the person stood in the robot's "
    'place, mirror face to face',
    choices=tuple(mode.value for mode in MappingMode),
)
"""The solver node's ``mapping`` (:attr:`MappingConfig.mode`)."""

CORRESPONDENCE: Final = ParameterDef(
    'correspondence', DEFAULT_CORRESPONDENCE,
    "How the human arm becomes robot targets: direction keeps the bone directions at the robot's "
    'own link lengths (scale-free), position scales the arm so that the hand lands at the scaled '
    'wrist; plug-ins add theirs',
    choices=lambda: correspondence_names(),
)
"""The solver node's ``correspondence``: a registered name
(:attr:`MappingConfig.correspondence`)."""

SCALE: Final = ParameterDef(
    'scale', 'auto',
    "position correspondence: human -> robot length factor, 'auto' (from user_profile, else "
    'learnt from every frame) or a number in [0.05, 20]',
    dynamic=True, parse=parse_scale,
)
"""The solver node's ``scale`` (:attr:`MappingConfig.scale`; ``'auto'`` is None)."""

USER_PROFILE: Final = ParameterDef(
    'user_profile', '',
    "position correspondence: the person's arm lengths (YAML from ~/calibrate or python -m "
    "pic_ros_tools calibrate; '' for none); ~/calibrate writes here ('': "
    '$ROS_HOME/pic_ros/user_profile.yaml)',
)
"""The solver node's ``user_profile`` (a path; loaded into :attr:`MappingConfig.profile`)."""

MAPPING_PARAMETERS: Final = (MAPPING, CORRESPONDENCE, SCALE, USER_PROFILE)
"""Everything :meth:`MappingConfig.from_parameters` reads."""


@dataclass(frozen=True)
class MappingConfig:
    """
    How the person is placed on the robot: mapping mode and correspondence.

    :param mode: ``same_side`` or ``mirror``.
    :param correspondence: Registered correspondence name (``direction``, ``position``).
    :param scale: ``position`` only: a fixed human -> robot length factor; ``None`` measures it
        (from ``profile`` when given, else learnt from the frames).
    :param profile: ``position`` only: the person's measured arm lengths.
    """

    mode: MappingMode = MappingMode.SAME_SIDE
    correspondence: str = DEFAULT_CORRESPONDENCE
    scale: float | None = None
    profile: UserProfile | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.mode, MappingMode):
            raise ConfigError(f'mapping mode must be a MappingMode, got {self.mode!r}')
        CORRESPONDENCE.check(self.correspondence)
        if self.scale is not None:
            check_number('mapping scale', self.scale, *SCALE_RANGE)

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> MappingConfig:
        """
        Build a config from parameter values (:data:`MAPPING_PARAMETERS`).

        :param values: ``mapping``, ``correspondence``, ``scale`` (``'auto'`` or a number) and
            ``user_profile`` (a profile file path, or empty); missing ones take their defaults.
        :return: The validated config.
        :raises ConfigError: On an invalid value or an unreadable profile.
        """
        given = {item.name: values.get(item.name, item.default) for item in MAPPING_PARAMETERS}
        path = USER_PROFILE.check(given['user_profile'])
        return cls(
            MappingMode(MAPPING.check(given['mapping'])),
            CORRESPONDENCE.check(given['correspondence']),
            SCALE.check(given['scale']),
            load_user_profile(path) if path else None,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = 'mapping') -> MappingConfig:
        """
        Build a config from the ``mapping`` block of a robot YAML.

        :param data: Keys ``mode`` (the ``mapping`` parameter), ``correspondence``, ``scale``
            and ``user_profile``; all optional.
        :param where: Prefix for error messages.
        :return: The validated config.
        :raises ConfigError: On an unknown key, an invalid value or an unreadable profile.
        """
        keys = {'mode': MAPPING, 'correspondence': CORRESPONDENCE, 'scale': SCALE,
                'user_profile': USER_PROFILE}
        unknown = sorted(set(data) - set(keys))
        if unknown:
            raise ConfigError(f'{where}: unknown keys {unknown}; known: {", ".join(sorted(keys))}')
        values = {}
        for key, value in data.items():
            definition = keys[key]
            if isinstance(value, Path):
                value = str(value)
            try:
                definition.check(value)
            except ConfigError as err:  # name the file's key, not the parameter
                text = str(err).replace(definition.name, f'{where}.{key}', 1)
                raise ConfigError(text) from err
            values[definition.name] = value
        return cls.from_parameters(values)

    @classmethod
    def from_robot(cls, defaults: MappingDefaults) -> MappingConfig:
        """
        Build a config from a robot file's ``mapping`` section (the robot's defaults).

        :param defaults: The section (:attr:`~pic_ros.robot.config.RobotSpec.mapping`).
        :return: The validated config; the default correspondence when the file names none.
        :raises ConfigError: If the correspondence is not registered (the message names the
            file's key) or the profile cannot be read.
        """
        return cls.from_dict(defaults.as_dict(), where=defaults.where)


@dataclass(frozen=True)
class RobotArmGeometry:
    """
    What a correspondence needs to know of a robot arm.

    :param side: Side of the robot the arm is on.
    :param shoulder: Shoulder landmark at the neutral pose, shape (3,), [m], base frame.
    :param upper_arm: Shoulder -> elbow landmark distance [m].
    :param forearm: Elbow -> wrist landmark distance [m].
    """

    side: Side
    shoulder: FloatArray
    upper_arm: float
    forearm: float

    def __post_init__(self) -> None:
        check_number('robot upper-arm length', self.upper_arm, 1e-3, 5.0)
        check_number('robot forearm length', self.forearm, 1e-3, 5.0)
        shoulder = np.array(self.shoulder, dtype=float).reshape(3)
        shoulder.setflags(write=False)
        object.__setattr__(self, 'shoulder', shoulder)


class Correspondence(abc.ABC):
    """
    Place the driving human arm on one robot arm, frame after frame.

    :param config: Mapping settings.
    :param robot: The robot arm's side and landmark geometry.
    """

    def __init__(self, config: MappingConfig, robot: RobotArmGeometry) -> None:
        self.config = config
        self.robot = robot
        self.human_side = human_side_for(robot.side, config.mode)

    def reset(self) -> None:  # noqa: B027 (optional hook: nothing to forget by default)
        """Forget anything learnt about the person (a new person, or a new session)."""

    def adopt(self, other: Correspondence) -> None:
        """
        Continue what another correspondence learnt (after a settings change).

        :param other: The correspondence being replaced.
        """
        del other  # Nothing learnt by default.

    def status(self) -> Mapping[str, object]:
        """
        Return what to report on ``/diagnostics`` (e.g. a measured scale).

        :return: Key -> value, plain types.
        """
        return {}

    def place(self, frame: SkeletonFrame) -> ArmTargets | None:
        """
        Place the driving human arm of a body-frame skeleton on the robot arm.

        :param frame: Skeleton in the ``body`` frame.
        :return: The targets, or ``None`` when the driving arm is not valid in this frame (or
            not yet placeable).
        :raises ConfigError: If the frame is not in the ``body`` frame.
        """
        if frame.frame != 'body':
            raise ConfigError(f"the mapping needs a 'body' frame skeleton, got {frame.frame!r}")
        if not frame.has_arm(self.human_side):
            return None
        return self._place(frame)

    @abc.abstractmethod
    def _place(self, frame: SkeletonFrame) -> ArmTargets | None:
        """Place a body-frame skeleton whose driving arm is valid."""


CorrespondenceType = TypeVar('CorrespondenceType', bound=type[Correspondence])
CORRESPONDENCES: Final = Registry[type[Correspondence]]('correspondence')
"""The correspondences by name (:mod:`pic_ros.registry`: snake_case, each name once, sorted)."""


def register_correspondence(name: str) -> Callable[[CorrespondenceType], CorrespondenceType]:
    """
    Register a correspondence class under a name.

    :param name: Name users select it by (the ``correspondence`` parameter), ``snake_case``.
    :return: A class decorator.
    :raises ConfigError: When decorating, if the name is not ``snake_case`` or already taken.
    """

    def decorate(cls: CorrespondenceType) -> CorrespondenceType:
        CORRESPONDENCES.add(name, cls)
        return cls

    return decorate


def unregister_correspondence(name: str) -> None:
    """
    Remove a registered correspondence (for plug-ins that are unloaded, and tests).

    :param name: A registered name.
    :raises ConfigError: If no correspondence has that name.
    """
    CORRESPONDENCES.remove(name)


def correspondence_names() -> tuple[str, ...]:
    """
    Return the registered correspondence names, sorted (plug-ins loaded first).

    :return: E.g. ``('direction', 'position')``.
    """
    return CORRESPONDENCES.names()


def make_correspondence(config: MappingConfig, robot: RobotArmGeometry) -> Correspondence:
    """
    Create the correspondence a config names, for one robot arm.

    :param config: Mapping settings (the name is validated against the registry).
    :param robot: The robot arm.
    :return: A new correspondence with nothing learnt.
    :raises ConfigError: If the correspondence was unregistered since the config was made.
    """
    return CORRESPONDENCES.get(config.correspondence)(config, robot)
