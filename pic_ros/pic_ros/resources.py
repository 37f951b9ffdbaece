"""
Where the package's data files are (``urdf/``, ``config/``, ``launch/``); reading a YAML file.

The same code runs from a source checkout (``pip install -e pic_ros``, the standalone venv: the
package's folder), from a wheel install (``<prefix>/share/pic_ros``) and from a colcon install
(found through ``AMENT_PREFIX_PATH``). The first directory that holds ``config/`` and ``urdf/``
wins; the environment variable ``PIC_ROS_SHARE`` overrides the search. The demo recording is
pic_ros_tools' (``pic_ros_tools.resources``).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
import sys
from typing import Any

from pic_ros.exceptions import ConfigError
import yaml

PACKAGE = 'pic_ros'


def _candidates() -> list[Path]:
    found: list[Path] = []
    override = os.environ.get('PIC_ROS_SHARE')
    if override:
        found.append(Path(override))
    found.append(Path(__file__).resolve().parents[1])
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if prefix:
            found.append(Path(prefix) / 'share' / PACKAGE)
    found.append(Path(sys.prefix) / 'share' / PACKAGE)
    return found


@functools.lru_cache(maxsize=1)
def share_dir() -> Path:
    """
    Return the directory that holds the package's ``config/`` and ``urdf/`` folders.

    :return: An existing directory.
    :raises ConfigError: If no candidate holds both folders (the message lists where it looked).
    """
    candidates = _candidates()
    for candidate in candidates:
        if (candidate / 'config').is_dir() and (candidate / 'urdf').is_dir():
            return candidate
    looked = ', '.join(str(c) for c in candidates)
    raise ConfigError(
        f'cannot find the pic_ros share directory (config/ and urdf/); looked in {looked}'
    )


def config_path(name: str) -> Path:
    """
    Return the path of a shipped YAML file in ``config/``.

    :param name: File name, with or without the ``.yaml`` suffix.
    :return: The path (it may not exist; callers report that).
    """
    file_name = name if name.endswith('.yaml') else f'{name}.yaml'
    return share_dir() / 'config' / file_name


def urdf_path(name: str) -> Path:
    """
    Return the path of a shipped URDF in ``urdf/``.

    :param name: File name, with or without the ``.urdf`` suffix.
    :return: The path (it may not exist; callers report that).
    """
    file_name = name if name.endswith('.urdf') else f'{name}.urdf'
    return share_dir() / 'urdf' / file_name


def shipped_robots() -> tuple[str, ...]:
    """
    List the robots that have a ``config/<robot>.yaml`` with a matching URDF.

    :return: Robot names, sorted.
    """
    config_dir = share_dir() / 'config'
    names = []
    for path in sorted(config_dir.glob('*.yaml')):
        if urdf_path(path.stem).exists():
            names.append(path.stem)
    return tuple(names)


def read_yaml(path: str | Path, what: str) -> Any:
    """
    Read a YAML file.

    :param path: The file.
    :param what: What the file is, for the message (``robot file``, ``user profile``).
    :return: The parsed document (not validated).
    :raises ConfigError: If the file cannot be read or is not YAML.
    """
    try:
        return yaml.safe_load(Path(path).read_text(encoding='utf-8'))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f'cannot read {what} {path}: {err}') from err
