"""
rosbag2 writing: serialized messages of one topic as a new bag, MCAP or sqlite3.

Written with ``rosbags`` (pure Python, no ROS install): MCAP with zstd-compressed chunks by
default, or sqlite3; the ``custom_data`` of the metadata as given
(:mod:`pic_ros_tools.recordings.annotations`). Message definitions come from the typestore given,
by default :func:`~pic_ros_tools.recordings.rosbag.default_typestore`. A bag is never overwritten,
and a bag whose writing fails once open is removed.

Metadata version: 8 by default, 9 on request. Humble (version 5) and Iron (version 8) readers have
no upper version check but read ``offered_qos_profiles`` as a YAML *string*, which version 9
turned into a list ("bad conversion", ros2/rosbag2#1520); they read only the keys they know, so
the newer ``type_description_hash``, ``ros_distro`` and ``custom_data`` are ignored by Humble.
Jazzy and Kilted read both. (Inferred from the rosbag2 metadata parsers; not run on a Humble
machine.) No QoS profile is recorded, so the string is empty and every player uses its default,
reliable and volatile, which matches the Azure Kinect driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
import shutil
from typing import Any, Final

from pic_ros.checks import check_choice
from pic_ros.exceptions import RecordingError
from pic_ros_tools.recordings.rosbag import absolute_topic, default_typestore

BAG_VERSION: Final = 8
"""Metadata version of written bags (see the module docstring)."""

STORAGES: Final = ('mcap', 'sqlite3')
"""Storage plugins that :func:`write_messages` can write."""


def write_messages(
    out_dir: Path | str,
    topic: str,
    msgtype: str,
    messages: Iterable[tuple[int, bytes]],
    *,
    typestore: Any = None,
    storage: str = 'mcap',
    version: int = BAG_VERSION,
    compress: bool = True,
    custom_data: Mapping[str, str] | None = None,
) -> Path:
    """
    Write serialized messages of one topic as a new rosbag2.

    The messages are consumed while the bag is open; if anything fails once it is open (an
    error of the writer, or of the ``messages`` iterable), the half-written directory is
    removed.

    :param out_dir: Bag directory to create; it must not exist. The storage file inside is
        named after it (``<out_dir>/<name>.mcap`` or ``.db3``).
    :param topic: Topic name; stored absolute.
    :param msgtype: ROS 2 type of the messages, e.g.
        :data:`~pic_ros_tools.recordings.rosbag.MARKER_ARRAY`; its definition comes from
        ``typestore``.
    :param messages: ``(receive time stamp [ns], CDR bytes)`` per message, in time order.
    :param typestore: ``rosbags`` typestore that defines ``msgtype``; default
        :func:`default_typestore`.
    :param storage: ``'mcap'`` or ``'sqlite3'``.
    :param version: Metadata version, 8 (Humble-readable) or 9.
    :param compress: Compress MCAP chunks with zstd (ignored for sqlite3).
    :param custom_data: Extra ``custom_data`` entries of the metadata (written sorted by key).
    :return: The bag directory.
    :raises ConfigError: On an invalid storage, version or topic name.
    :raises RecordingError: If the directory exists or cannot be written.
    """
    from rosbags.rosbag2 import (
        CompressionFormat,
        CompressionMode,
        StoragePlugin,
        Writer,
        WriterError,
    )

    out = Path(out_dir)
    check_choice('storage', storage, STORAGES)
    check_choice('version', version, (8, 9))
    name = absolute_topic(topic)
    if out.exists():
        raise RecordingError(f'{out} exists already; a bag is never overwritten')
    types = default_typestore() if typestore is None else typestore
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    opened = done = False
    try:
        writer = Writer(out, version=8 if version == 8 else 9, storage_plugin=plugin)
        if compress and storage == 'mcap':
            writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        for key, value in sorted((custom_data or {}).items()):
            writer.set_custom_data(str(key), str(value))
        with writer:
            opened = True
            connection = writer.add_connection(name, msgtype, typestore=types)
            for stamp, data in messages:
                writer.write(connection, stamp, data)
        done = True
    except (WriterError, OSError) as error:
        raise RecordingError(f'cannot write the bag {out}: {error}') from error
    finally:
        if opened and not done:
            shutil.rmtree(out, ignore_errors=True)
    return out


__all__ = ['BAG_VERSION', 'STORAGES', 'write_messages']
