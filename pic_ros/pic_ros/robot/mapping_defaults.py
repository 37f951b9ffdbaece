"""
The ``mapping`` section of a robot file: the robot's default human -> robot mapping.

::

    mapping: {mode: same_side, correspondence: direction}

Every key is optional: ``mode`` (``same_side`` or ``mirror``), ``correspondence`` (a registered
correspondence name), ``scale`` (``auto`` or a fixed human -> robot length factor) and
``user_profile`` (a profile file). The section is kept here as plain validated values; the
correspondence layer builds its :class:`~pic_ros.correspondence.base.MappingConfig` from them
(:meth:`~pic_ros.correspondence.base.MappingConfig.from_robot`), checking there the
correspondence name against its registry and reading the profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.schema import ParameterDef

MAPPING_MODES: Final = ('same_side', 'mirror')
"""The mapping modes by name, the default first
(:class:`~pic_ros.correspondence.mapping.MappingMode` has these values)."""

SCALE_RANGE: Final = (0.05, 20.0)
"""Accepted fixed human -> robot length factors of the ``position`` correspondence."""


def parse_scale(value: Any) -> float | None:
    """
    Read a ``scale`` setting: ``'auto'`` (measure it) or a fixed factor.

    :param value: ``'auto'``, a number, or a numeric string.
    :return: None for ``'auto'``, else the factor, in :data:`SCALE_RANGE`.
    :raises ConfigError: If it is neither.
    """
    if value == 'auto' or value is None:
        return None
    try:
        if isinstance(value, bool):
            raise TypeError('a bool is not a scale')
        number = float(value)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"scale must be 'auto' or a number, got {value!r}") from err
    return check_number('scale', number, *SCALE_RANGE)


_KEYS: Final = {
    'mode': ParameterDef('mode', MAPPING_MODES[0], 'Mapping mode', choices=MAPPING_MODES),
    'correspondence': ParameterDef('correspondence', 'direction', 'Correspondence name'),
    'scale': ParameterDef('scale', 'auto', 'Length factor', dynamic=True, parse=parse_scale),
    'user_profile': ParameterDef('user_profile', '', 'Profile file'),
}
"""The section's keys and what each accepts (the correspondence name is any string here)."""


def _checked(where: str, key: str, value: Any) -> Any:
    """Check one value of the section; the message names ``<where>.<key>``."""
    if isinstance(value, Path):
        value = str(value)
    try:
        return _KEYS[key].check(value)
    except ConfigError as err:
        raise ConfigError(f'{where}.{err}') from err


@dataclass(frozen=True)
class MappingDefaults:
    """
    The robot file's default mapping, as written (checked, not yet resolved).

    :param mode: Mapping mode, one of :data:`MAPPING_MODES`.
    :param correspondence: Correspondence name, or None for the correspondence layer's default.
    :param scale: Fixed human -> robot length factor in :data:`SCALE_RANGE`, or None (measured).
    :param user_profile: Profile file of the person's arm lengths, ``''`` for none.
    :param where: Where the section is, for messages (e.g. ``baxter.yaml: mapping``).
    :raises ConfigError: If a value is refused (the message names ``<where>.<key>``).
    """

    mode: str = MAPPING_MODES[0]
    correspondence: str | None = None
    scale: float | None = None
    user_profile: str = ''
    where: str = 'mapping'

    def __post_init__(self) -> None:
        _checked(self.where, 'mode', self.mode)
        if self.correspondence is not None:
            _checked(self.where, 'correspondence', self.correspondence)
        _checked(self.where, 'scale', self.scale)
        _checked(self.where, 'user_profile', self.user_profile)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = 'mapping') -> MappingDefaults:
        """
        Read the ``mapping`` section of a robot file.

        :param data: Keys ``mode``, ``correspondence``, ``scale``, ``user_profile``; all
            optional.
        :param where: Prefix for error messages.
        :return: The checked values.
        :raises ConfigError: On an unknown key or an invalid value.
        """
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise ConfigError(
                f'{where}: unknown keys {unknown}; known: {", ".join(sorted(_KEYS))}'
            )
        given = {key: _checked(where, key, value) for key, value in data.items()}
        return cls(where=where, **given)

    def as_dict(self) -> dict[str, Any]:
        """
        Return the section as a robot file writes it (the correspondence only when given).

        :return: Keys ``mode``, ``scale`` (``'auto'`` for None), ``user_profile`` and, when
            given, ``correspondence``.
        """
        values: dict[str, Any] = {
            'mode': self.mode,
            'scale': 'auto' if self.scale is None else self.scale,
            'user_profile': self.user_profile,
        }
        if self.correspondence is not None:
            values['correspondence'] = self.correspondence
        return values
