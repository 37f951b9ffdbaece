"""
replay: play a rosbag2 (MCAP or sqlite3) on live topics with the recorded timing.

A standalone stand-in for ``ros2 bag play`` (which needs a ROS install): the bag is read with
``rosbags`` (:mod:`pic_ros_tools.recordings.rosbag`) and every message is published **as the
recorded CDR bytes** (``publish(bytes)``) with a publisher of its recorded type, so nothing is
deserialized and the bytes on the wire are the bytes in the bag. The message class comes from the
installed ``<package>.msg`` module; a topic whose type is not installed (e.g. ``tf2_msgs`` without
a ROS install) is skipped with a warning.

Timing: message *i* is published at ``t0 + (stamp_i - start) / rate`` of the monotonic clock,
where ``stamp_i`` is its recorded (receive) time stamp, ``start`` the bag's first stamp plus
``--start-offset``, and ``t0`` the wall time playback began; deadlines are absolute, so errors do
not accumulate. Options follow ``ros2 bag play``: ``--rate``, ``--loop``, ``--remap FROM:=TO``,
``--topics``, ``--start-offset``, ``--playback-duration``, ``--clock [HZ]`` (``/clock`` at the bag
time, default 40 Hz), ``--delay``; plus ``--wait-for-subscribers [N]`` (start only when every
publisher has matched N subscriptions, default 1) and ``--info`` (describe the bag and exit).

QoS, as ``ros2 bag play`` adapts it: keep-last 100, reliable unless every recorded publisher of the
topic was best-effort, transient-local for ``/tf_static`` or when every recorded publisher was
transient-local, else volatile. ``/clock`` is reliable, keep-last 1 (a best-effort clock
subscriber still matches).

Publishing runs in the main thread while the node spins in a thread beside it
(:func:`pic_ros_tools.ros.background_spin.spin_while`), so its parameter services answer
(``ros2 param list``) during the whole playback. The process exits when the bag has been played
(after waiting, bounded, for the subscribers' acknowledgements of the reliable topics), unless
``--loop``; SIGINT or SIGTERM stops it cleanly (exit status 0).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
import contextlib
from dataclasses import dataclass, field
import importlib
import itertools
import sys
import time
from typing import Any

import numpy as np
from pic_ros.exceptions import ConfigError, PicRosError
from pic_ros.ros.runner import run_nodes
from pic_ros_tools.recordings.rosbag import (
    bag_info,
    BagInfo,
    BagMessage,
    BagTopic,
    format_bag_info,
    read_messages,
)
from pic_ros_tools.ros.background_spin import spin_while
from pic_ros_tools.ros.replay_options import (
    build_parser,
    DEFAULT_DEPTH,
    options_from_args,
    ReplayOptions,
    split_ros_args,
)
from rclpy.duration import Duration
from rclpy.exceptions import InvalidTopicNameException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock

TRANSIENT_LOCAL_TOPICS = ('/tf_static',)
"""Topics always replayed transient-local (latched), as ``ros2 bag play`` does."""

ACK_TIMEOUT = 2.0
"""Longest wait [s] for the acknowledgements of each reliable publisher at the end."""

_SLEEP_SLICE = 0.05


def replay_qos(topic: BagTopic, depth: int = DEFAULT_DEPTH) -> QoSProfile:
    """
    Return the publisher QoS of one replayed topic (see the module docstring).

    :param topic: The bag topic, with its recorded QoS summary.
    :param depth: Keep-last depth.
    :return: The profile.
    """
    reliability = (
        ReliabilityPolicy.BEST_EFFORT
        if topic.reliability == 'best_effort'
        else ReliabilityPolicy.RELIABLE
    )
    latched = topic.name in TRANSIENT_LOCAL_TOPICS or topic.durability == 'transient_local'
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=reliability,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
    )


def message_class(msgtype: str) -> Any | None:
    """
    Import the Python class of a ROS 2 message type, if it is installed.

    :param msgtype: ``package/msg/Name`` (or ``package/Name``).
    :return: The class, or None when the package or the type is not installed.
    """
    parts = msgtype.split('/')
    if len(parts) == 2:
        parts = [parts[0], 'msg', parts[1]]
    if len(parts) != 3 or not all(parts):
        return None
    package, kind, name = parts
    try:
        module = importlib.import_module(f'{package}.{kind}')
    except ImportError:
        return None
    return getattr(module, name, None)


@dataclass
class ReplayStats:
    """
    What one replay did.

    :param published: Messages published.
    :param loops: Complete passes over the bag.
    :param skipped_topics: Topics not played because their type is not installed.
    :param lateness: Publish time minus deadline of each message [s] (the last pass).
    """

    published: int = 0
    loops: int = 0
    skipped_topics: tuple[str, ...] = ()
    lateness: list[float] = field(default_factory=list)

    def lateness_ms(self, percentile: float) -> float:
        """
        Return a percentile of the publish lateness [ms] (NaN before any message).

        :param percentile: In [0, 100].
        :return: Milliseconds.
        """
        if not self.lateness:
            return float('nan')
        return float(np.percentile(np.asarray(self.lateness), percentile) * 1e3)


class ReplayNode(Node):
    """
    Publishes the messages of a bag with their recorded timing.

    :param options: What and how to play.
    :param info: The bag's description (:func:`pic_ros_tools.recordings.rosbag.bag_info`).
    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``context``).
    :raises ConfigError: If no selected topic can be published.
    :raises RecordingError: If a selected topic is not in the bag.
    """

    def __init__(self, options: ReplayOptions, info: BagInfo, **kwargs: Any) -> None:
        super().__init__('replay', **kwargs)
        self._replay_options = options
        self._bag_info = info
        self.stats = ReplayStats()
        self._outputs: dict[str, Any] = {}
        remaps = dict(options.remaps)
        unknown = sorted(set(remaps) - {topic.name for topic in info.topics})
        if unknown:
            self.get_logger().warning(f'--remap names topics not in the bag: {unknown}')
        skipped: list[str] = []
        for topic in options.selected(info):
            self._add_publisher(topic, remaps.get(topic.name, topic.name), skipped)
        self.stats.skipped_topics = tuple(skipped)
        if not self._outputs:
            raise ConfigError(
                f'{info.path}: none of the selected topics can be published (types not '
                f'installed: {", ".join(skipped) or "none"})'
            )
        self._clock_publisher = None
        if options.clock_rate is not None:
            clock_qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
            self._clock_publisher = self.create_publisher(Clock, '/clock', clock_qos)
        self._bag_zero = self._start_ns()
        self._wall_zero = time.monotonic()
        self._next_tick = self._wall_zero
        self._paused = True

    def _add_publisher(self, topic: BagTopic, name: str, skipped: list[str]) -> None:
        message_type = message_class(topic.msgtype)
        if message_type is None:
            self.get_logger().warning(
                f'{topic.name}: message type {topic.msgtype} is not installed; its '
                f'{topic.count} messages are skipped'
            )
            skipped.append(topic.name)
            return
        try:
            publisher = self.create_publisher(
                message_type, name, replay_qos(topic, self._replay_options.depth)
            )
        except InvalidTopicNameException as error:
            raise ConfigError(f'cannot publish {topic.name} as {name}: {error}') from None
        self._outputs[topic.name] = publisher
        if publisher.topic_name != topic.name:
            self.get_logger().info(f'{topic.name} -> {publisher.topic_name}')

    @property
    def topic_names(self) -> dict[str, str]:
        """Return ``{bag topic: published topic}`` of the topics being played."""
        return {name: publisher.topic_name for name, publisher in self._outputs.items()}

    def _start_ns(self) -> int:
        offset = int(round(self._replay_options.start_offset * 1e9))
        return self._bag_info.start_ns + offset

    def _bag_time_ns(self, now: float) -> int:
        if self._paused:
            return self._bag_zero
        elapsed = (now - self._wall_zero) * self._replay_options.rate
        return self._bag_zero + int(round(elapsed * 1e9))

    def _publish_clock(self, now: float) -> None:
        if self._clock_publisher is None:
            return
        stamp = max(self._bag_time_ns(now), 0)
        message = Clock()
        message.clock.sec = stamp // 1_000_000_000
        message.clock.nanosec = stamp % 1_000_000_000
        self._clock_publisher.publish(message)

    def _wait_until(self, deadline: float) -> bool:
        """Sleep until a monotonic time, publishing /clock on the way; False on shutdown."""
        rate = self._replay_options.clock_rate
        period = None if rate is None else 1.0 / rate
        while True:
            now = time.monotonic()
            if period is not None and now >= self._next_tick:
                self._publish_clock(now)
                self._next_tick = max(self._next_tick + period, now)
            if now >= deadline:
                return True
            if not self.context.ok():
                return False
            wake = min(deadline, now + _SLEEP_SLICE)
            if period is not None:
                wake = min(wake, self._next_tick)
            time.sleep(max(wake - now, 0.0))

    def _wait_for_subscribers(self, count: int) -> bool:
        while not all(p.get_subscription_count() >= count for p in self._outputs.values()):
            if not self.context.ok():
                return False
            time.sleep(0.01)
        return True

    def play(self) -> bool:
        """
        Play the bag (repeatedly with ``loop``) until done or shut down.

        :return: True when the playback ended, False when it was interrupted.
        """
        wait = self._replay_options.wait_for_subscribers
        waiting = (
            f', once every topic has {wait} matched subscriber{"s" if wait > 1 else ""}'
            if wait else ''
        )
        self.get_logger().info(
            f'playing {", ".join(self.topic_names.values())} from {self._bag_info.path}{waiting}'
        )
        if wait and not self._wait_for_subscribers(wait):
            return False
        while True:
            self._paused = True
            self._bag_zero = self._start_ns()
            if self._replay_options.delay and not self._wait_until(
                time.monotonic() + self._replay_options.delay
            ):
                return False
            before = self.stats.published
            if not self._play_once():
                return False
            self.stats.loops += 1
            if not self._replay_options.loop:
                break
            if self.stats.published == before:
                self.get_logger().warning('nothing to play in the chosen window; not looping')
                break
        self._wait_for_acknowledgements()
        return True

    def _play_once(self) -> bool:
        options = self._replay_options
        start = self._start_ns()
        stop = None if options.duration is None else start + int(round(options.duration * 1e9))
        lateness: list[float] = []
        self.stats.lateness = lateness
        messages = read_messages(
            options.bag, topics=list(self._outputs), start_ns=start, stop_ns=stop
        )
        with contextlib.closing(messages):
            first = next(messages, None)  # opens the bag before the clock starts
            self._bag_zero = start
            self._wall_zero = time.monotonic()
            self._next_tick = self._wall_zero
            self._paused = False
            if first is None:
                return True
            return self._publish_all(itertools.chain((first,), messages), start, lateness)

    def _publish_all(
        self, messages: Iterator[BagMessage], start: int, lateness: list[float]
    ) -> bool:
        options = self._replay_options
        for message in messages:
            deadline = self._wall_zero + (message.timestamp_ns - start) / 1e9 / options.rate
            if not self._wait_until(deadline):
                return False
            try:
                self._outputs[message.topic].publish(message.data)
            except Exception:  # the context was shut down by a signal meanwhile
                if not self.context.ok():
                    return False
                raise
            lateness.append(time.monotonic() - deadline)
            self.stats.published += 1
        return True

    def _wait_for_acknowledgements(self) -> None:
        for publisher in self._outputs.values():
            if self.context.ok():
                publisher.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT))


def _summary(node: ReplayNode, finished: bool, seconds: float) -> str:
    stats = node.stats
    state = 'done' if finished else 'interrupted'
    return (
        f'replay {state}: {stats.published} messages on {len(node.topic_names)} topics in '
        f'{seconds:.2f} s ({stats.loops} complete passes); publish lateness p50 '
        f'{stats.lateness_ms(50):.2f} ms, p99 {stats.lateness_ms(99):.2f} ms, max '
        f'{stats.lateness_ms(100):.2f} ms'
    )


def run_replay(
    argv: Sequence[str] | None = None, prog: str = 'python -m pic_ros_tools replay'
) -> int:
    """
    Run ``python -m pic_ros_tools replay BAG [options] [--ros-args ...]``.

    :param argv: Arguments without the program and command names; default ``sys.argv[1:]``.
    :param prog: The program name shown in the usage and the error messages.
    :return: Exit status: 0 when played (or interrupted), 2 for a usage or input error.
    """
    own, ros_arguments = split_ros_args(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    parser.prog = prog
    args = parser.parse_args(own)
    try:
        options = options_from_args(args)
        info = bag_info(options.bag)
        options.selected(info)
    except PicRosError as err:
        print(f'{prog}: {err}', file=sys.stderr)
        return 2
    if args.info:
        print(format_bag_info(info))
        return 0
    began = time.monotonic()
    finished = False

    def play(nodes: Sequence[Node]) -> None:
        nonlocal finished
        finished = nodes[0].play()

    def summary(nodes: Sequence[Node]) -> None:
        if nodes:
            print(_summary(nodes[0], finished, time.monotonic() - began), flush=True)

    return run_nodes(
        prog, ros_arguments, lambda: [ReplayNode(options, info)], spin=spin_while(play),
        before_destroy=summary, error_status=2,  # what it cannot play is an input error
    )


def main(args: list[str] | None = None) -> None:
    """
    Entry point of the ``replay`` executable (``ros2 run pic_ros_tools replay BAG ...``).

    :param args: The full command line, program name first; default ``sys.argv``.
    """
    arguments = sys.argv if args is None else args
    raise SystemExit(run_replay(list(arguments[1:]), prog='replay'))


if __name__ == '__main__':
    main()
