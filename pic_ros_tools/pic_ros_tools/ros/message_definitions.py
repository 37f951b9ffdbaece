"""
The ``ros2msg`` definition of a message type, read from the installed message packages.

A rosbag2 MCAP names each channel's schema by its type (``visualization_msgs/msg/MarkerArray``)
and holds, as the schema's data, the type's ``.msg`` file followed by the ``.msg`` file of every
type it uses, each once, depth first, behind a line of 80 ``=`` and a ``MSG: package/Name``
line -- the layout rosbag2 writes and the ``mcap_ros2`` decoder and ``rosbags`` read.

The ``.msg`` files are the ones the message packages install into ``share/<package>/msg/``: under
every prefix of ``AMENT_PREFIX_PATH`` (a ROS install, a colcon workspace), else beside the
package's Python module (the PyPI ``ros-*`` wheels install ``share/`` into the venv's prefix).
Nothing here imports rclpy or a message package.
"""

from __future__ import annotations

from collections.abc import Iterator
import importlib.util
import os
from pathlib import Path
import re
import sys

from pic_ros.exceptions import PicRosError

SEPARATOR = '=' * 80
"""The line between two definitions of a ``ros2msg`` schema."""

BUILTIN_TYPES = frozenset((
    'bool', 'byte', 'char', 'float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32',
    'uint32', 'int64', 'uint64', 'string', 'wstring',
))
"""The primitive field types of the ``.msg`` language (no definition of their own)."""

_FIELD_TYPE = re.compile(r'^\s*([A-Za-z][A-Za-z0-9_/]*)')
"""The type of a field or constant line (its first word, without bounds or array brackets)."""


def split_type(msgtype: str) -> tuple[str, str]:
    """
    Split a message type into its package and name.

    :param msgtype: ``package/msg/Name`` or ``package/Name``.
    :return: ``(package, Name)``.
    :raises PicRosError: If the type is not of either form.
    """
    parts = msgtype.split('/')
    if len(parts) == 3 and parts[1] == 'msg' and parts[0] and parts[2]:
        return parts[0], parts[2]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    raise PicRosError(f'{msgtype!r} is not a message type (package/msg/Name)')


def _prefixes(package: str) -> Iterator[Path]:
    """Yield the install prefixes that may hold ``share/<package>``, most specific first."""
    for entry in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        if entry:
            yield Path(entry)
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin is not None:
        yield from Path(spec.origin).resolve().parents
    yield Path(sys.prefix)


def msg_file(package: str, name: str) -> Path:
    """
    Find the installed ``.msg`` file of a message type.

    :param package: The message package (``geometry_msgs``).
    :param name: The type's name (``PoseArray``).
    :return: The path of ``share/<package>/msg/<name>.msg``.
    :raises PicRosError: If no prefix holds it.
    """
    for prefix in _prefixes(package):
        candidate = prefix / 'share' / package / 'msg' / f'{name}.msg'
        if candidate.is_file():
            return candidate
    raise PicRosError(
        f'{package}/msg/{name}.msg not found in AMENT_PREFIX_PATH, beside the {package} module '
        f'or under {sys.prefix}/share'
    )


def used_types(package: str, text: str) -> list[tuple[str, str]]:
    """
    Return the message types a ``.msg`` text uses, in the order of its fields, each once.

    :param package: The package of the text's type (a name without a package is in it).
    :param text: The ``.msg`` file's text.
    :return: ``(package, Name)`` of every non-primitive field type.
    """
    found: dict[tuple[str, str], None] = {}
    for line in text.splitlines():
        match = _FIELD_TYPE.match(line.split('#', 1)[0])
        if match is None or match.group(1) in BUILTIN_TYPES:
            continue
        kind = match.group(1)
        if kind == 'Header':  # the one name the .msg language resolves to another package
            found[('std_msgs', 'Header')] = None
        elif '/' in kind:
            found[split_type(kind)] = None
        else:
            found[(package, kind)] = None
    return list(found)


def message_definition(msgtype: str) -> str:
    """
    Return the ``ros2msg`` schema text of a message type, as rosbag2 writes it into an MCAP.

    :param msgtype: ``package/msg/Name`` (or ``package/Name``).
    :return: The type's ``.msg`` text, then each type it uses (recursively, each once) behind
        :data:`SEPARATOR` and ``MSG: package/Name``.
    :raises PicRosError: If a ``.msg`` file is not installed.
    """
    package, name = split_type(msgtype)
    root = msg_file(package, name).read_text(encoding='utf-8')
    parts = [root.rstrip('\n')]
    seen = {(package, name)}
    pending = used_types(package, root)
    while pending:
        current = pending.pop(0)
        if current in seen:
            continue
        seen.add(current)
        text = msg_file(*current).read_text(encoding='utf-8')
        parts.append(f'{SEPARATOR}\nMSG: {current[0]}/{current[1]}\n{text.rstrip(chr(10))}')
        # depth first: what this type uses comes before the rest of its parent's types
        pending = used_types(current[0], text) + pending
    return '\n'.join(parts) + '\n'
