"""
Where the tools' data files are: the demo recording ``demo/``.

The same code runs from a source checkout (``pip install -e pic_ros_tools``, the standalone
venv), from a wheel install (``<prefix>/share/pic_ros_tools``) and from a colcon install (found
through ``AMENT_PREFIX_PATH``). The first directory that holds ``demo/`` wins. The run-time's
files (``config/``, ``urdf/``) are :mod:`pic_ros.resources`'.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
import sys

from pic_ros.exceptions import ConfigError

PACKAGE = 'pic_ros_tools'


def _candidates() -> list[Path]:
    found = [Path(__file__).resolve().parents[1]]
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if prefix:
            found.append(Path(prefix) / 'share' / PACKAGE)
    found.append(Path(sys.prefix) / 'share' / PACKAGE)
    return found


@functools.lru_cache(maxsize=1)
def demo_dir() -> Path:
    """
    Return the folder of the shipped demo recording (its text files and ``synthetic1_bag``).

    :return: An existing directory.
    :raises ConfigError: If no candidate holds ``demo/`` (the message lists where it looked).
    """
    candidates = _candidates()
    for candidate in candidates:
        if (candidate / 'demo').is_dir():
            return candidate / 'demo'
    looked = ', '.join(str(c) for c in candidates)
    raise ConfigError(f'cannot find the pic_ros_tools demo recording (demo/); looked in {looked}')
