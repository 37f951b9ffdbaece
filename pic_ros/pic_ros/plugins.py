"""
Plug-ins: solvers, correspondences and trackers from other Python packages.

A package adds its own by registering them when one of its modules is imported
(:func:`~pic_ros.solvers.base.register_solver`,
:func:`~pic_ros.correspondence.base.register_correspondence`,
:func:`~pic_ros.trackers.base.register_tracker`) and by naming that module as an entry point of
the group :data:`ENTRY_POINT_GROUP` in its packaging metadata, e.g. in ``setup.cfg``::

    [options.entry_points]
    pic_ros.plugins =
        my_solver = my_package.my_solver

Every process then finds them: the registries load the entry points the first time they are
asked for their names, so the nodes, ``teleop``, the launch files and ``python -m pic_ros``
accept the new names without any change here (``docs/recipes.md``).
"""

from __future__ import annotations

from importlib.metadata import entry_points
import sys
from typing import Final

ENTRY_POINT_GROUP: Final = 'pic_ros.plugins'
"""The entry-point group whose modules are imported to register plug-ins."""

_loaded: list[str] = []
_done = False


def load_plugins() -> tuple[str, ...]:
    """
    Import every plug-in module named in the :data:`ENTRY_POINT_GROUP` entry points, once.

    A plug-in that fails to import is reported on stderr and skipped: one broken package must
    not stop the robot.

    :return: The entry-point names loaded so far.
    """
    global _done
    if not _done:
        _done = True  # first: a plug-in that asks a registry for its names must not recurse
        for point in entry_points(group=ENTRY_POINT_GROUP):
            try:
                point.load()
            except Exception as err:  # noqa: BLE001 - any failure of third-party code
                print(
                    f'pic_ros: plug-in {point.name} ({point.value}) failed to load: '
                    f'{type(err).__name__}: {err}', file=sys.stderr,
                )
                continue
            _loaded.append(point.name)
    return tuple(_loaded)
