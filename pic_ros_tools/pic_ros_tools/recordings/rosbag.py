"""
rosbag2 files: read any bag's messages and description.

Everything goes through ``rosbags`` (pure Python, no ROS install): MCAP bags (zstd- or
lz4-compressed chunks included) and sqlite3 bags, given as the bag directory (with its
``metadata.yaml``), as one of its storage files, or as a bare ``.mcap`` / ``.db3`` file. ROS 1
bags are refused with the ``rosbags-convert`` command that turns them into rosbag2.
Messages come out in time order of their recorded (receive) time stamps, as raw CDR bytes with
their recorded type (:func:`read_messages`); :func:`bag_info` describes a bag like
``ros2 bag info``. Every failure of a damaged or unsupported bag is a
:class:`~pic_ros.exceptions.RecordingError` that says why. Message types come from the
``rosbags`` typestore ``ROS2_KILTED`` (:func:`default_typestore`; the MarkerArray layout and type
hash are the same from Humble to Kilted). :mod:`pic_ros_tools.recordings.rosbag_writer` writes
bags.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
import contextlib
from dataclasses import dataclass
from pathlib import Path
import sqlite3
import struct
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from pic_ros.exceptions import ConfigError, PicRosError, RecordingError
from pic_ros_tools.recordings.annotations import CUSTOM_PREFIX
from pic_ros_tools.recordings.stamps import NS_PER_S
import yaml

MARKER_ARRAY: Final = 'visualization_msgs/msg/MarkerArray'
"""The message type of body-tracking topics."""

BAG_SUFFIXES: Final = ('.mcap', '.db3')
"""File suffixes of the rosbag2 storage files read (MCAP and sqlite3)."""

_TYPESTORE_NAME: Final = 'ROS2_KILTED'


@dataclass(frozen=True)
class BagTopic:
    """
    One topic of a bag.

    :param name: Topic name as recorded (absolute, e.g. ``/kinect2/body_tracking_data``).
    :param msgtype: ROS 2 type, e.g. ``visualization_msgs/msg/MarkerArray``.
    :param count: Number of messages.
    :param reliability: ``'reliable'`` or ``'best_effort'`` when every recorded publisher
        offered it, else None (unknown, mixed or not recorded).
    :param durability: ``'transient_local'`` or ``'volatile'`` likewise, else None.
    """

    name: str
    msgtype: str
    count: int
    reliability: str | None = None
    durability: str | None = None


@dataclass(frozen=True)
class BagInfo:
    """
    What a bag holds.

    :param path: The path read (a bag directory or a bare storage file).
    :param storage: ``'mcap'`` or ``'sqlite3'``.
    :param version: Metadata version, or None for a bare storage file.
    :param start_ns: Receive time stamp of the first message [ns] (0 for an empty bag).
    :param end_ns: Receive time stamp of the last message [ns] (0 for an empty bag).
    :param message_count: Number of messages.
    :param topics: The topics, sorted by name.
    :param custom_data: ``custom_data`` of the metadata (read-only; empty if none).
    """

    path: Path
    storage: str
    version: int | None
    start_ns: int
    end_ns: int
    message_count: int
    topics: tuple[BagTopic, ...]
    custom_data: Mapping[str, str]

    @property
    def duration(self) -> float:
        """Return the time from the first to the last message [s]."""
        return (self.end_ns - self.start_ns) / 1e9

    def topic(self, name: str) -> BagTopic:
        """
        Find a topic by name, with or without the leading slash.

        :param name: Topic name.
        :return: The topic.
        :raises RecordingError: If the bag has no such topic (the message lists them).
        """
        wanted = absolute_topic(name)
        for topic in self.topics:
            if topic.name == wanted:
                return topic
        raise RecordingError(
            f'{self.path}: no topic {wanted}; the bag has '
            f'{", ".join(t.name for t in self.topics) or "no topics"}'
        )


class BagMessage(NamedTuple):
    """
    One recorded message.

    :param topic: Topic name as recorded.
    :param msgtype: ROS 2 type.
    :param timestamp_ns: Recorded (receive) time stamp [ns].
    :param data: The CDR bytes as recorded (with the 4-byte encapsulation header).
    """

    topic: str
    msgtype: str
    timestamp_ns: int
    data: bytes


def absolute_topic(name: str) -> str:
    """
    Return a topic name with a leading slash, as rosbag2 records names.

    :param name: Topic name, relative or absolute.
    :return: The absolute name.
    :raises ConfigError: If the name is empty.
    """
    text = str(name).strip()
    if not text.strip('/'):
        raise ConfigError(f'a topic name cannot be empty, got {name!r}')
    return text if text.startswith('/') else '/' + text


def read_metadata(directory: Path) -> dict[str, Any]:
    """
    Read ``metadata.yaml`` of a bag directory.

    :param directory: The bag directory.
    :return: The ``rosbag2_bagfile_information`` map, as parsed.
    :raises RecordingError: If the file cannot be read or is not rosbag2 metadata.
    """
    path = directory / 'metadata.yaml'
    try:
        content = yaml.safe_load(path.read_text(encoding='utf-8'))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise RecordingError(
            f'{directory}: cannot read the bag metadata {path}: {error}'
        ) from None
    information = content.get('rosbag2_bagfile_information') if isinstance(content, dict) else None
    if not isinstance(information, dict):
        raise RecordingError(
            f'{directory}: {path} is not rosbag2 metadata (no rosbag2_bagfile_information map)'
        )
    return information


def resolve_bag_path(path: Path | str) -> Path:
    """
    Return the path to hand to the bag reader.

    A bag directory is read whole. A storage file inside a bag directory whose metadata lists
    it is read through that directory (the metadata holds the recorded QoS profiles). Any other
    ``.mcap`` or ``.db3`` file is read bare.

    :param path: A bag directory, its ``metadata.yaml``, one of its storage files, or a bare
        ``.mcap`` / ``.db3`` file.
    :return: The directory or file to read.
    :raises RecordingError: If the path does not exist, is a directory without
        ``metadata.yaml``, a ROS 1 bag, or a file of another kind.
    """
    candidate = Path(path)
    if not candidate.exists():
        raise RecordingError(f'bag not found: {candidate}')
    if candidate.is_dir():
        if not (candidate / 'metadata.yaml').is_file():
            raise RecordingError(
                f'{candidate} is not a rosbag2 directory: it has no metadata.yaml (pass the '
                '.mcap or .db3 file itself to read it bare, or rebuild the metadata with '
                '"ros2 bag reindex")'
            )
        return candidate
    if candidate.name == 'metadata.yaml':
        return candidate.parent
    if candidate.suffix == '.bag':
        raise RecordingError(
            f'{candidate} is a ROS 1 bag; convert it to rosbag2 first, e.g. '
            f'"rosbags-convert --src {candidate} --dst <out> --dst-storage mcap '
            '--dst-typestore ros2_humble"'
        )
    if candidate.suffix not in BAG_SUFFIXES:
        raise RecordingError(
            f'{candidate} is not a rosbag2: expected a bag directory or a .mcap or .db3 file'
        )
    metadata_path = candidate.parent / 'metadata.yaml'
    if metadata_path.is_file():
        with contextlib.suppress(RecordingError):
            files = read_metadata(candidate.parent).get('relative_file_paths') or []
            if candidate.name in [Path(str(name)).name for name in files]:
                return candidate.parent
    return candidate


def default_typestore() -> Any:
    """
    Return the ``rosbags`` typestore that reads and writes the bags (``ROS2_KILTED``).

    :return: The typestore (message classes, CDR serialization, message definitions).
    """
    from rosbags.typesys import get_typestore, Stores

    return get_typestore(getattr(Stores, _TYPESTORE_NAME))


def _reader_errors() -> tuple[type[BaseException], ...]:
    """Return the exceptions a damaged or unsupported bag raises while being read."""
    from rosbags.highlevel import AnyReaderError
    from rosbags.rosbag2 import ReaderError
    from rosbags.serde import SerdeError

    return (
        AnyReaderError, ReaderError, SerdeError, OSError, EOFError, KeyError, IndexError,
        ValueError, TypeError, struct.error, sqlite3.Error,
    )


@contextlib.contextmanager
def open_reader(path: Path) -> Iterator[Any]:
    """
    Open a resolved bag path with ``rosbags``' ``AnyReader``, for the duration of a ``with``.

    Errors of a damaged or unsupported bag, while opening or inside the ``with`` block, become
    :class:`~pic_ros.exceptions.RecordingError`; the reader is closed on the way out.

    :param path: A path returned by :func:`resolve_bag_path`.
    :return: Context manager giving the open reader (default typestore
        :func:`default_typestore`).
    :raises RecordingError: If the bag cannot be read (the message says why).
    """
    from rosbags.highlevel import AnyReader

    errors = _reader_errors()
    try:
        reader = AnyReader([path], default_typestore=default_typestore())
        reader.open()
    except errors as error:
        raise RecordingError(f'cannot read the bag {path}: {error}') from None
    try:
        yield reader
    except PicRosError:
        raise
    except errors as error:
        raise RecordingError(f'cannot read the bag {path}: {error}') from None
    finally:
        with contextlib.suppress(*errors):
            reader.close()


def _unanimous(values: Sequence[str], allowed: tuple[str, ...]) -> str | None:
    if values and all(value == values[0] for value in values) and values[0] in allowed:
        return values[0]
    return None


def _topics(reader: Any) -> tuple[BagTopic, ...]:
    grouped: dict[str, list[Any]] = {}
    for connection in reader.connections:
        grouped.setdefault(connection.topic, []).append(connection)
    topics = []
    for name in sorted(grouped):
        connections = grouped[name]
        types = sorted({connection.msgtype for connection in connections})
        profiles = [
            profile
            for connection in connections
            for profile in getattr(connection.ext, 'offered_qos_profiles', None) or ()
        ]
        reliability = [profile.reliability.name.lower() for profile in profiles]
        durability = [profile.durability.name.lower() for profile in profiles]
        topics.append(
            BagTopic(
                name=name,
                msgtype=types[0] if len(types) == 1 else '|'.join(types),
                count=sum(int(connection.msgcount) for connection in connections),
                reliability=_unanimous(reliability, ('reliable', 'best_effort')),
                durability=_unanimous(durability, ('transient_local', 'volatile')),
            )
        )
    return tuple(topics)


def bag_info(path: Path | str) -> BagInfo:
    """
    Describe a bag: storage, time span, topics with types, counts and offered QoS.

    :param path: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :return: The description.
    :raises RecordingError: If the bag cannot be found or read (the message says why).
    """
    resolved = resolve_bag_path(path)
    version: int | None = None
    custom: dict[str, str] = {}
    storage = 'mcap' if resolved.suffix == '.mcap' else 'sqlite3'
    if resolved.is_dir():
        metadata = read_metadata(resolved)
        raw_version = metadata.get('version')
        version = raw_version if isinstance(raw_version, int) else None
        storage = str(metadata.get('storage_identifier', ''))
        data = metadata.get('custom_data')
        if isinstance(data, dict):
            custom = {str(key): str(value) for key, value in data.items()}
    with open_reader(resolved) as reader:
        if not reader.is2:
            raise RecordingError(f'{resolved} is not a rosbag2')
        count = int(reader.message_count)
        return BagInfo(
            path=resolved,
            storage=storage,
            version=version,
            start_ns=int(reader.start_time) if count else 0,
            end_ns=int(reader.end_time) - 1 if count else 0,
            message_count=count,
            topics=_topics(reader),
            custom_data=MappingProxyType(custom),
        )


def format_bag_info(info: BagInfo) -> str:
    """
    Render a bag description as text, like ``ros2 bag info``.

    The single-line ``pic_ros.*`` entries of ``custom_data``
    (:mod:`pic_ros_tools.recordings.annotations`) are listed at the end.

    :param info: The description.
    :return: Several lines, without a trailing newline.
    """
    version = 'bare file' if info.version is None else f'metadata version {info.version}'
    lines = [
        f'bag:       {info.path}',
        f'storage:   {info.storage} ({version})',
        f'duration:  {info.duration:.3f} s',
        f'start:     {info.start_ns // NS_PER_S}.{info.start_ns % NS_PER_S:09d} s since 1970',
        f'messages:  {info.message_count}',
        'topics:',
    ]
    width = max((len(topic.name) for topic in info.topics), default=0)
    for topic in info.topics:
        qos = ', '.join(value for value in (topic.reliability, topic.durability) if value)
        lines.append(
            f'  {topic.name:<{width}}  {topic.msgtype}  {topic.count} msgs'
            + (f'  ({qos})' if qos else '')
        )
    for key in sorted(info.custom_data):
        if key.startswith(CUSTOM_PREFIX) and '\n' not in info.custom_data[key]:
            lines.append(f'{key}: {info.custom_data[key]}')
    return '\n'.join(lines)


def read_messages(
    path: Path | str,
    topics: Sequence[str] | None = None,
    start_ns: int | None = None,
    stop_ns: int | None = None,
) -> Generator[BagMessage, None, None]:
    """
    Yield the messages of a bag in time order, as raw CDR bytes with their recorded type.

    The bag is opened when iteration starts and closed when it ends (or the iterator is
    closed).

    :param path: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :param topics: Topic names to keep (with or without the leading slash); None keeps all.
    :param start_ns: Keep messages recorded at or after this time [ns].
    :param stop_ns: Keep messages recorded before this time [ns].
    :return: Generator of the messages, ordered by recorded time stamp (close it to release
        the bag early).
    :raises RecordingError: If the bag cannot be read or a topic is not in it.
    """
    resolved = resolve_bag_path(path)
    with open_reader(resolved) as reader:
        if not reader.is2:
            raise RecordingError(f'{resolved} is not a rosbag2')
        connections = list(reader.connections)
        if topics is not None:
            wanted = {absolute_topic(name) for name in topics}
            present = {connection.topic for connection in connections}
            missing = sorted(wanted - present)
            if missing:
                raise RecordingError(
                    f'{resolved}: no topic {", ".join(missing)}; the bag has '
                    f'{", ".join(sorted(present)) or "no topics"}'
                )
            connections = [c for c in connections if c.topic in wanted]
        if not connections:
            return
        for connection, timestamp, data in reader.messages(
            connections=connections, start=start_ns, stop=stop_ns
        ):
            yield BagMessage(connection.topic, connection.msgtype, int(timestamp), bytes(data))


__all__ = [
    'BAG_SUFFIXES',
    'BagInfo',
    'BagMessage',
    'BagTopic',
    'MARKER_ARRAY',
    'absolute_topic',
    'bag_info',
    'default_typestore',
    'format_bag_info',
    'open_reader',
    'read_messages',
    'read_metadata',
    'resolve_bag_path',
]
