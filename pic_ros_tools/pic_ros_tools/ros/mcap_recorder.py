"""
Record topics of the live ROS graph into a rosbag2-compatible MCAP file, as ``ros2 bag record``.

A :class:`McapRecorder` adds raw subscriptions (``raw=True``: the CDR bytes as DDS delivered
them, never re-serialized) to a node the caller spins, and writes every message as it arrives:
MCAP profile ``ros2``, message encoding ``cdr``, one ``ros2msg`` schema per type (named
``package/msg/Name``, its text read from the installed ``.msg`` files:
:func:`~pic_ros_tools.ros.message_definitions.message_definition`), one channel per topic with
the publishers' QoS in ``offered_qos_profiles`` (rosbag2's YAML, integer policies), and at the
end a ``rosbag2`` metadata record whose ``serialized_metadata`` describes the file as a bag of
metadata version 8 (:data:`BAG_VERSION`: the version whose QoS policies are integers; rosbag2's
MCAP plugin reads a file's QoS by that version). A channel is written when its topic's first
message arrives, so a topic nobody published is absent.

Topics are recorded two ways: the ones named at construction, subscribed at once with their
given type and QoS (nothing they publish is missed however early), and the ones
:meth:`McapRecorder.discover` finds in the graph whose type or name matches (subscribed with the
reliability and durability of the publishers found, as rosbag2 does: a latched
``robot_description`` is received when subscribed late). Log and publish times are the host's
wall clock at arrival [ns since the epoch], as ``ros2 bag record`` stamps them without
``--use-sim-time``; the messages keep their own header stamps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
import importlib
from pathlib import Path
import threading
import time
from typing import Any, BinaryIO

from mcap.writer import CompressionType, Writer
from pic_ros.exceptions import PicRosError
from pic_ros_tools.ros.message_definitions import message_definition, split_type
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
import yaml

PROFILE = 'ros2'
"""The MCAP profile of rosbag2 files."""

MESSAGE_ENCODING = 'cdr'
"""The channels' message encoding."""

SCHEMA_ENCODING = 'ros2msg'
"""The schemas' encoding: concatenated ``.msg`` definitions."""

BAG_VERSION = 8
"""The rosbag2 metadata version the file declares (QoS policies written as integers)."""

INFINITE_NS = 2**63 - 1
"""rclpy's infinite duration (a QoS deadline, lifespan or lease that never ends) [ns]."""

DEPTH = 200
"""Keep-last depth of every recording subscription (bursts on a busy host are kept)."""


@dataclass(frozen=True)
class RecordedTopic:
    """
    A topic to record from the start.

    :param name: Absolute topic name.
    :param msgtype: ``package/msg/Name``.
    :param reliable: Subscribe reliable (every publisher must be reliable); else best effort,
        which matches any publisher.
    :param latched: Subscribe transient-local (every publisher must be transient-local), to get
        a latched message published before the subscription.
    """

    name: str
    msgtype: str
    reliable: bool = True
    latched: bool = False

    def __post_init__(self) -> None:
        """Check the name is absolute and the type well formed."""
        if not self.name.startswith('/'):
            raise PicRosError(f'recorded topic {self.name!r} must be absolute')
        split_type(self.msgtype)


@dataclass(frozen=True)
class DiscoveryRule:
    """
    Which topics of the graph :meth:`McapRecorder.discover` adds.

    :param types: Record every topic of one of these types (``package/msg/Name``).
    :param names: Record these topics (absolute names) whatever their type.
    :param suffixes: Record every topic whose name ends with one of these (``/robot_description``
        catches a namespaced one).
    """

    types: frozenset[str] = field(default_factory=frozenset)
    names: frozenset[str] = field(default_factory=frozenset)
    suffixes: tuple[str, ...] = ()

    def matches(self, name: str, msgtype: str) -> bool:
        """
        Return whether a topic of the graph is to be recorded.

        :param name: Its absolute name.
        :param msgtype: Its type, ``package/msg/Name``.
        :return: True when its type, name or name's ending is listed.
        """
        return (
            msgtype in self.types or name in self.names
            or any(name.endswith(suffix) for suffix in self.suffixes)
        )


def message_class(msgtype: str) -> Any:
    """
    Import the Python class of a message type.

    :param msgtype: ``package/msg/Name``.
    :return: The class.
    :raises PicRosError: If its package is not installed or lacks the type.
    """
    package, name = split_type(msgtype)
    try:
        kind = getattr(importlib.import_module(f'{package}.msg'), name)
    except (ImportError, AttributeError) as err:
        raise PicRosError(f'{msgtype} is not installed: {err}') from err
    return kind


def qos_yaml(profiles: Iterable[QoSProfile]) -> str:
    """
    Write publishers' QoS profiles as rosbag2's ``offered_qos_profiles`` (integer policies).

    :param profiles: One profile per publisher.
    :return: The YAML list (empty string for no publisher).
    """
    def duration(value: Any) -> str:
        nanoseconds = int(value.nanoseconds)
        if nanoseconds >= INFINITE_NS:  # rosbag2 writes the infinite duration so
            return '{sec: 2147483647, nsec: 4294967295}'
        return f'{{sec: {nanoseconds // 1_000_000_000}, nsec: {nanoseconds % 1_000_000_000}}}'

    lines = []
    for profile in profiles:
        lines += [
            f'- history: {int(profile.history.value)}',
            f'  depth: {int(profile.depth)}',
            f'  reliability: {int(profile.reliability.value)}',
            f'  durability: {int(profile.durability.value)}',
            f'  deadline: {duration(profile.deadline)}',
            f'  lifespan: {duration(profile.lifespan)}',
            f'  liveliness: {int(profile.liveliness.value)}',
            f'  liveliness_lease_duration: {duration(profile.liveliness_lease_duration)}',
            f'  avoid_ros_namespace_conventions: '
            f'{str(bool(profile.avoid_ros_namespace_conventions)).lower()}',
        ]
    return '\n'.join(lines)


class McapRecorder:
    """
    Record topics of the graph, seen by a node, into one MCAP file.

    The node must be spun by the caller (its executor's thread runs the callbacks, which write);
    :meth:`discover` and :meth:`close` may be called from another thread.

    :param node: The node the subscriptions are added to.
    :param path: The MCAP file to write (its folder is created; an existing file is replaced).
    :param topics: Topics subscribed at once.
    :param rule: Topics :meth:`discover` adds from the graph.
    :param clock: Log time of a message received now [ns].
    :raises PicRosError: If a listed topic's type is not installed or has no ``.msg`` file.
    """

    def __init__(
        self,
        node: Node,
        path: Path,
        topics: Iterable[RecordedTopic] = (),
        rule: DiscoveryRule | None = None,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.node = node
        self.path = path
        self._rule = rule or DiscoveryRule()
        self._clock = clock
        self._lock = threading.Lock()
        self._subscriptions: dict[str, Any] = {}
        self._types: dict[str, str] = {}
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self._definitions: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        """Messages written per topic."""
        self._offered: dict[str, str] = {}
        self._span = [0, 0]  # first and last log time [ns]
        listed = list(topics)
        for topic in listed:  # every definition is found before the file is made
            self._definition(topic.msgtype)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._stream: BinaryIO | None = path.open('wb')
        self._writer = Writer(self._stream, compression=CompressionType.ZSTD)
        self._writer.start(profile=PROFILE, library='pic_ros_tools')
        for topic in listed:
            self._subscribe(topic.name, topic.msgtype, topic.reliable, topic.latched)

    @property
    def topics(self) -> dict[str, str]:
        """Return the subscribed topics and their types."""
        with self._lock:
            return dict(self._types)

    def _definition(self, msgtype: str) -> str:
        if msgtype not in self._definitions:
            message_class(msgtype)
            self._definitions[msgtype] = message_definition(msgtype)
        return self._definitions[msgtype]

    def _subscribe(self, name: str, msgtype: str, reliable: bool, latched: bool) -> None:
        qos = QoSProfile(
            depth=DEPTH,
            reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
        )
        subscription = self.node.create_subscription(
            message_class(msgtype), name, lambda data: self._write(name, data), qos, raw=True
        )
        with self._lock:
            self._subscriptions[name] = subscription
            self._types[name] = msgtype

    def discover(self) -> list[str]:
        """
        Subscribe to the topics of the graph the rule names that are not recorded yet.

        A topic is subscribed reliable when all its publishers are, transient-local when all
        are; one whose type is not installed (or has no ``.msg`` file) is left out.

        :return: The topics added.
        """
        added: list[str] = []
        for name, types in self.node.get_topic_names_and_types():
            with self._lock:
                if self._stream is None:
                    return added
                known = name in self._subscriptions
            if known or len(types) != 1 or not self._rule.matches(name, types[0]):
                continue
            publishers = self.node.get_publishers_info_by_topic(name)
            if not publishers:
                continue
            try:
                self._definition(types[0])
            except PicRosError:
                continue
            profiles = [info.qos_profile for info in publishers]
            self._subscribe(
                name, types[0],
                all(p.reliability == ReliabilityPolicy.RELIABLE for p in profiles),
                all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in profiles),
            )
            added.append(name)
        return added

    def _channel(self, name: str) -> int:
        """Return the channel of a topic, registered (with its schema) on its first message."""
        if name not in self._channels:
            msgtype = self._types[name]
            if msgtype not in self._schemas:
                self._schemas[msgtype] = self._writer.register_schema(
                    msgtype, SCHEMA_ENCODING, self._definitions[msgtype].encode('utf-8')
                )
            self._offered[name] = qos_yaml(
                info.qos_profile for info in self.node.get_publishers_info_by_topic(name)
            )
            self._channels[name] = self._writer.register_channel(
                name, MESSAGE_ENCODING, self._schemas[msgtype],
                {'offered_qos_profiles': self._offered[name]},
            )
        return self._channels[name]

    def _write(self, name: str, data: bytes) -> None:
        now = self._clock()
        with self._lock:
            if self._stream is None:
                return
            channel = self._channel(name)
            count = self.counts.get(name, 0)
            self._writer.add_message(channel, now, bytes(data), now, sequence=count)
            self.counts[name] = count + 1
            self._span = [min(self._span[0] or now, now), max(self._span[1], now)]

    def _metadata(self) -> str:
        """Describe the file as rosbag2's ``metadata.yaml`` does (the bag information only)."""
        start, end = self._span
        count = sum(self.counts.values())
        span = {'duration': {'nanoseconds': end - start},
                'starting_time': {'nanoseconds_since_epoch': start}}
        information = {
            'version': BAG_VERSION,
            'storage_identifier': 'mcap',
            'relative_file_paths': [self.path.name],
            **span,
            'message_count': count,
            'topics_with_message_count': [
                {
                    'topic_metadata': {
                        'name': name, 'type': self._types[name],
                        'serialization_format': MESSAGE_ENCODING,
                        'offered_qos_profiles': self._offered[name],
                    },
                    'message_count': self.counts[name],
                }
                for name in self._channels
            ],
            'compression_format': '',
            'compression_mode': '',
            'files': [{'path': self.path.name, **span, 'message_count': count}],
            'custom_data': {},
            'ros_distro': '',
        }
        return str(yaml.safe_dump(information, sort_keys=False))

    def close(self) -> dict[str, int]:
        """
        Stop recording, finish and close the file (the subscriptions are destroyed).

        :return: Messages written per topic.
        """
        with self._lock:
            subscriptions = list(self._subscriptions.values())
            self._subscriptions.clear()
        for subscription in subscriptions:
            self.node.destroy_subscription(subscription)
        with self._lock:
            if self._stream is not None:
                self._writer.add_metadata('rosbag2', {'serialized_metadata': self._metadata()})
                self._writer.finish()
                self._stream.close()
                self._stream = None
            return dict(self.counts)
