"""
The ``collision`` and ``workspace`` sections of a robot file.

Both are optional. Without a ``collision`` section the self-collision model is made from the
URDF's ``<collision>`` geometry alone (:mod:`pic_ros.robot.collision`); the section adjusts it::

    collision:
      capsules:                 # replace a link's URDF geometry by capsules (or give it some)
        - {link: torso, a: [0.0, 0.0, 0.1], b: [0.0, 0.0, 0.5], radius: 0.17}
      exclude_links: [sonar_ring]     # links never checked
      ignore_pairs: [[head, screen]]  # link pairs never checked
      adjacent_joints: 2        # links this many movable joints apart or fewer are not checked
      margin: 0.03              # the distance kept between links [m] (self_collision_margin)

``workspace`` bounds where the elbow and wrist landmarks may go, in the robot base frame::

    workspace:
      table_height: -0.05       # a table top at this height [m]: landmarks stay above it
      box: {min: [-0.2, -0.9, -0.4], max: [1.1, 0.9, 1.2]}   # and inside this box [m]

Units: metres; points in the link frame (capsules) or the base frame (workspace).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.robot.capsules import Capsule
from pic_ros.robot.kinematics.transforms import freeze

FloatArray = npt.NDArray[np.float64]

DEFAULT_MARGIN: Final = 0.03
"""Default ``margin``: the distance kept between links that may not touch [m]."""

ADJACENT_JOINTS: Final = 2
"""Default ``adjacent_joints``: links within two movable joints of each other are not checked
(the elbow's two links, the shoulder and the upper arm: their shapes meet by design)."""


def _keys(
    data: Any, where: str, allowed: set[str], required: frozenset[str] | set[str] = frozenset()
) -> None:
    if not isinstance(data, Mapping):
        raise ConfigError(f'{where} must be a mapping, got {type(data).__name__}')
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(f'{where}: unknown keys {unknown}; known: {sorted(allowed)}')
    missing = sorted(required - set(data))
    if missing:
        raise ConfigError(f'{where}: missing {missing}')


def _vector(value: Any, where: str) -> FloatArray:
    if (
        not isinstance(value, (list, tuple)) or len(value) != 3
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        or not all(math.isfinite(v) for v in value)
    ):
        raise ConfigError(f'{where} must be three finite numbers [m], got {value!r}')
    return np.array(value, dtype=float)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f'{where} must be a finite number, got {value!r}')
    return float(value)


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(item, str) and item for item in value
    ):
        raise ConfigError(f'{where} must be a list of link names, got {value!r}')
    return tuple(value)


@dataclass(frozen=True)
class CollisionSpec:
    """
    A robot file's ``collision`` section (see the module docstring).

    :param capsules: Capsules declared in the file; a link that has some loses its URDF
        geometry.
    :param exclude_links: Links left out of the model.
    :param ignore_pairs: Link pairs never checked (unordered).
    :param adjacent_joints: Link pairs this many movable joints apart or fewer are not checked.
    :param margin: The distance kept between links that may not touch, for this robot's size
        [m] (the ``self_collision_margin`` parameter overrides it).
    """

    capsules: tuple[Capsule, ...] = ()
    exclude_links: frozenset[str] = frozenset()
    ignore_pairs: frozenset[frozenset[str]] = frozenset()
    adjacent_joints: int = ADJACENT_JOINTS
    margin: float = DEFAULT_MARGIN

    @classmethod
    def from_dict(cls, data: Any, where: str = 'collision') -> CollisionSpec:
        """
        Validate a ``collision`` section.

        :param data: The parsed section (None or empty: the defaults).
        :param where: Where it came from, for messages (``<file>: collision``).
        :return: The section.
        :raises ConfigError: Naming the field at fault.
        """
        if data is None:
            return cls()
        _keys(data, where, {
            'capsules', 'exclude_links', 'ignore_pairs', 'adjacent_joints', 'margin',
        })
        capsules = []
        raw_capsules = data.get('capsules') or []
        if not isinstance(raw_capsules, list):
            raise ConfigError(f'{where}.capsules must be a list of capsules')
        for index, item in enumerate(raw_capsules):
            here = f'{where}.capsules[{index}]'
            _keys(item, here, {'link', 'a', 'b', 'radius'}, {'link', 'radius', 'a'})
            link = item['link']
            if not isinstance(link, str) or not link:
                raise ConfigError(f'{here}.link must be a link name, got {link!r}')
            a = _vector(item['a'], f'{here}.a')
            b = _vector(item.get('b', item['a']), f'{here}.b')
            radius = _number(item['radius'], f'{here}.radius')
            if radius <= 0.0:
                raise ConfigError(f'{here}.radius must be positive [m], got {radius!r}')
            capsules.append(Capsule(link, a, b, radius, source='config'))
        exclude = _names(data.get('exclude_links') or [], f'{where}.exclude_links')
        pairs = []
        for index, pair in enumerate(data.get('ignore_pairs') or []):
            names = _names(pair, f'{where}.ignore_pairs[{index}]')
            if len(names) != 2 or names[0] == names[1]:
                raise ConfigError(
                    f'{where}.ignore_pairs[{index}] must be two different link names, got {pair!r}'
                )
            pairs.append(frozenset(names))
        adjacent = data.get('adjacent_joints', ADJACENT_JOINTS)
        if isinstance(adjacent, bool) or not isinstance(adjacent, int) or not 0 <= adjacent <= 10:
            raise ConfigError(
                f'{where}.adjacent_joints must be an integer in 0..10, got {adjacent!r}'
            )
        margin = _number(data.get('margin', DEFAULT_MARGIN), f'{where}.margin')
        if not 0.0 <= margin <= 0.2:
            raise ConfigError(f'{where}.margin must be in [0, 0.2] m, got {margin!r}')
        return cls(tuple(capsules), frozenset(exclude), frozenset(pairs), adjacent, margin)


@dataclass(frozen=True)
class HalfSpace:
    """
    The points ``p`` with ``normal . p >= offset``, robot base frame.

    :param name: What it bounds, for reports (``table``, ``box x min``...).
    :param normal: Unit normal pointing into the allowed side, shape (3,) (read-only).
    :param offset: Offset along the normal [m].
    """

    name: str
    normal: FloatArray
    offset: float

    def __post_init__(self) -> None:
        normal = np.asarray(self.normal, dtype=float)
        object.__setattr__(self, 'normal', freeze(normal / np.linalg.norm(normal)))


@dataclass(frozen=True)
class WorkspaceSpec:
    """
    A robot file's ``workspace`` section: where the elbow and wrist landmarks may go.

    :param table_height: Height of a table top in the base frame [m]; None: no table.
    :param box_min: Lowest corner of an allowed box, base frame, shape (3,) [m]; None: no box.
    :param box_max: Highest corner of the box, shape (3,) [m].
    """

    table_height: float | None = None
    box_min: FloatArray | None = None
    box_max: FloatArray | None = None
    half_spaces: tuple[HalfSpace, ...] = field(init=False)

    def __post_init__(self) -> None:
        spaces = []
        if self.table_height is not None:
            spaces.append(HalfSpace('table', np.array([0.0, 0.0, 1.0]), self.table_height))
        if self.box_min is not None and self.box_max is not None:
            low, high = freeze(self.box_min), freeze(self.box_max)
            object.__setattr__(self, 'box_min', low)
            object.__setattr__(self, 'box_max', high)
            for axis, label in enumerate('xyz'):
                unit = np.zeros(3)
                unit[axis] = 1.0
                spaces.append(HalfSpace(f'box {label} min', unit, float(low[axis])))
                spaces.append(HalfSpace(f'box {label} max', -unit, -float(high[axis])))
        object.__setattr__(self, 'half_spaces', tuple(spaces))

    @classmethod
    def from_dict(cls, data: Any, where: str = 'workspace') -> WorkspaceSpec | None:
        """
        Validate a ``workspace`` section.

        :param data: The parsed section (None: no bounds).
        :param where: Where it came from, for messages.
        :return: The bounds, or None when the section is absent or empty.
        :raises ConfigError: Naming the field at fault.
        """
        if not data:
            return None
        _keys(data, where, {'table_height', 'box'})
        table = data.get('table_height')
        height = None if table is None else _number(table, f'{where}.table_height')
        low = high = None
        if data.get('box') is not None:
            box = data['box']
            _keys(box, f'{where}.box', {'min', 'max'}, {'min', 'max'})
            low = _vector(box['min'], f'{where}.box.min')
            high = _vector(box['max'], f'{where}.box.max')
            if np.any(low >= high):
                raise ConfigError(f'{where}.box: min must be below max on every axis')
        return cls(height, low, high)
