"""
A registry of named things of one kind: the solvers, the trackers, the correspondences.

Every registry follows the same rules: a name is ``snake_case`` (lowercase ASCII letters, digits
and underscores, starting with a letter) and is registered once (to replace an entry, remove it
first); the names are listed sorted; asking for the names, for an entry or whether a name is
known first loads the plug-ins (:func:`~pic_ros.plugins.load_plugins`), so that the names of
other packages are there too.
"""

from __future__ import annotations

import re
from typing import Final, Generic, TypeVar

from pic_ros.exceptions import ConfigError
from pic_ros.plugins import load_plugins

T = TypeVar('T')

SNAKE_CASE: Final = re.compile(r'[a-z][a-z0-9_]*')
"""What a registered name must be, whole."""


class Registry(Generic[T]):
    """
    Entries of one kind by name.

    :param kind: What an entry is, for messages (e.g. ``'solver'``).
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def add(self, name: str, item: T) -> None:
        """
        Register an entry.

        :param name: Its name, ``snake_case``.
        :param item: The entry.
        :raises ConfigError: If the name is not ``snake_case`` or is already registered.
        """
        if not isinstance(name, str) or SNAKE_CASE.fullmatch(name) is None:
            raise ConfigError(f'{self.kind} name must be snake_case, got {name!r}')
        if name in self._items:
            raise ConfigError(f'{self.kind} {name!r} is already registered')
        self._items[name] = item

    def remove(self, name: str) -> None:
        """
        Remove an entry (for plug-ins that are unloaded, and tests).

        :param name: A registered name.
        :raises ConfigError: If no entry has that name.
        """
        if name not in self._items:
            raise ConfigError(f'no {self.kind} {name!r} to unregister')
        del self._items[name]

    def names(self) -> tuple[str, ...]:
        """
        Return the registered names, sorted (plug-ins loaded first).

        :return: The names.
        """
        load_plugins()
        return tuple(sorted(self._items))

    def get(self, name: str) -> T:
        """
        Return the entry of a name (plug-ins loaded first).

        :param name: A registered name.
        :return: Its entry.
        :raises ConfigError: If no entry has that name (the message lists the known names).
        """
        load_plugins()
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise ConfigError(
                f'unknown {self.kind} {name!r}; available: {", ".join(self.names())}'
            ) from None

    def __contains__(self, name: object) -> bool:
        """Return whether a name is registered (plug-ins loaded first)."""
        load_plugins()
        return name in self._items
