"""
The options of ``replay`` (``ros2 bag play``'s, where they exist) and its command line.

:class:`ReplayOptions` is checked on construction; :func:`build_parser` and
:func:`options_from_args` read it from a command line, whose ``--ros-args`` sections
:func:`split_ros_args` sets apart. No rclpy here: the player is
:mod:`pic_ros_tools.ros.replay_node`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pic_ros.checks import check_integer, check_number
from pic_ros.exceptions import ConfigError
from pic_ros_tools.recordings.rosbag import absolute_topic, BagInfo, BagTopic

DEFAULT_DEPTH = 100
"""Keep-last depth of the replay publishers."""

DEFAULT_CLOCK_RATE = 40.0
"""``/clock`` rate [Hz] when ``--clock`` is given without a value (as ``ros2 bag play``)."""

MAX_RATE = 1000.0
"""Largest accepted playback rate factor."""


def parse_remap(text: str) -> tuple[str, str]:
    """
    Parse one ``FROM:=TO`` topic remapping.

    :param text: The rule; both names may be relative (a leading slash is added).
    :return: ``(from, to)``, absolute names.
    :raises ConfigError: If the rule is not ``FROM:=TO`` with two non-empty names.
    """
    source, separator, target = str(text).partition(':=')
    if not separator or not source.strip('/ ') or not target.strip('/ '):
        raise ConfigError(f'--remap expects FROM:=TO, got {text!r}')
    return absolute_topic(source), absolute_topic(target)


@dataclass(frozen=True)
class ReplayOptions:
    """
    How to play a bag.

    :param bag: Bag directory, storage file, or bare ``.mcap`` / ``.db3`` file.
    :param rate: Playback speed factor (2 plays twice as fast), in (0, 1000].
    :param loop: Play again from the start when the end is reached.
    :param remaps: ``(from, to)`` topic renames, absolute names.
    :param topics: Bag topics to play (absolute names); None plays every topic.
    :param start_offset: Bag time skipped at the start [s], >= 0.
    :param duration: Bag time played after the start offset [s], > 0; None plays to the end.
    :param clock_rate: Publish ``/clock`` at this rate [Hz], in (0, 1000]; None does not.
    :param delay: Wall time waited before each playback [s], >= 0.
    :param wait_for_subscribers: Start only when every publisher has matched at least this many
        subscriptions, 0..1000 (0: at once). Give the number of readers that must get the first
        messages: with one, a recorder's subscription alone may let the playback start before
        the node under test has matched.
    :param depth: Keep-last depth of the publishers, 1..100000.
    :raises ConfigError: On a value out of range or a topic remapped twice.
    """

    bag: Path
    rate: float = 1.0
    loop: bool = False
    remaps: tuple[tuple[str, str], ...] = ()
    topics: tuple[str, ...] | None = None
    start_offset: float = 0.0
    duration: float | None = None
    clock_rate: float | None = None
    delay: float = 0.0
    wait_for_subscribers: int = 0
    depth: int = DEFAULT_DEPTH

    def __post_init__(self) -> None:
        object.__setattr__(self, 'bag', Path(self.bag))
        rate = check_number('rate', self.rate, 0.0, MAX_RATE)
        if rate <= 0.0:
            raise ConfigError(f'rate must be > 0, got {self.rate!r}')
        object.__setattr__(self, 'rate', rate)
        object.__setattr__(
            self, 'start_offset', check_number('start_offset', self.start_offset, 0.0, 1e9)
        )
        object.__setattr__(self, 'delay', check_number('delay', self.delay, 0.0, 3600.0))
        if self.duration is not None:
            duration = check_number('playback_duration', self.duration, 0.0, 1e9)
            if duration <= 0.0:
                raise ConfigError(f'playback_duration must be > 0, got {self.duration!r}')
            object.__setattr__(self, 'duration', duration)
        if self.clock_rate is not None:
            clock_rate = check_number('clock', self.clock_rate, 0.0, MAX_RATE)
            if clock_rate <= 0.0:
                raise ConfigError(f'clock must be > 0 Hz, got {self.clock_rate!r}')
            object.__setattr__(self, 'clock_rate', clock_rate)
        object.__setattr__(self, 'depth', check_integer('depth', self.depth, 1, 100_000))
        object.__setattr__(
            self, 'wait_for_subscribers',
            check_integer('wait_for_subscribers', self.wait_for_subscribers, 0, 1000),
        )
        remaps = tuple((absolute_topic(a), absolute_topic(b)) for a, b in self.remaps)
        sources = [source for source, _ in remaps]
        if len(set(sources)) != len(sources):
            raise ConfigError(f'a topic is remapped twice: {sources}')
        object.__setattr__(self, 'remaps', remaps)
        if self.topics is not None:
            object.__setattr__(
                self, 'topics', tuple(dict.fromkeys(absolute_topic(t) for t in self.topics))
            )

    def selected(self, info: BagInfo) -> tuple[BagTopic, ...]:
        """
        Return the bag topics to play.

        :param info: The bag.
        :return: The topics named by ``topics`` (all when None), in the bag's order.
        :raises RecordingError: If a named topic is not in the bag (the message lists them).
        """
        if self.topics is None:
            return info.topics
        return tuple(info.topic(name) for name in self.topics)


def _remap_argument(text: str) -> tuple[str, str]:
    try:
        return parse_remap(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    """
    Build the argument parser of ``replay``.

    :return: The parser.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros_tools replay',
        description='Play a rosbag2 (MCAP or sqlite3) with the recorded timing, publishing the '
        'recorded bytes (like "ros2 bag play", without a ROS install). ROS arguments go after '
        '--ros-args.',
    )
    parser.add_argument('bag', type=Path, help='bag directory, or a .mcap / .db3 file')
    parser.add_argument('-r', '--rate', type=float, default=1.0, help='speed factor (default 1)')
    parser.add_argument('-l', '--loop', action='store_true', help='play again when done')
    parser.add_argument(
        '--remap', '-m', type=_remap_argument, nargs='+', action='extend', default=[],
        metavar='FROM:=TO', help='rename a topic (repeatable)',
    )
    parser.add_argument(
        '--topics', nargs='+', metavar='TOPIC', help='play only these topics (default: all)'
    )
    parser.add_argument(
        '--start-offset', type=float, default=0.0, help='skip this much bag time first [s]'
    )
    parser.add_argument(
        '--playback-duration', type=float, help='play only this much bag time [s]'
    )
    parser.add_argument(
        '--clock', type=float, nargs='?', const=DEFAULT_CLOCK_RATE, metavar='HZ',
        help=f'publish /clock at the bag time, at HZ (default {DEFAULT_CLOCK_RATE:g} Hz)',
    )
    parser.add_argument(
        '-d', '--delay', type=float, default=0.0, help='wait this long before playing [s]'
    )
    parser.add_argument(
        '--wait-for-subscribers', type=int, nargs='?', const=1, default=0, metavar='N',
        help='start only when every topic has N matched subscriptions (default N: 1)',
    )
    parser.add_argument(
        '--qos-depth', type=int, default=DEFAULT_DEPTH, help='keep-last depth (default 100)'
    )
    parser.add_argument('--info', action='store_true', help='describe the bag and exit')
    return parser


def options_from_args(args: argparse.Namespace) -> ReplayOptions:
    """
    Build the options from parsed arguments.

    :param args: From :func:`build_parser`.
    :return: The validated options.
    :raises ConfigError: On an invalid value.
    """
    return ReplayOptions(
        bag=args.bag,
        rate=args.rate,
        loop=args.loop,
        remaps=tuple(args.remap),
        topics=None if args.topics is None else tuple(args.topics),
        start_offset=args.start_offset,
        duration=args.playback_duration,
        clock_rate=args.clock,
        delay=args.delay,
        wait_for_subscribers=args.wait_for_subscribers,
        depth=args.qos_depth,
    )


def split_ros_args(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """
    Split a command line into the replay's own arguments and the ``--ros-args`` sections.

    Only what follows ``--ros-args`` (up to ``--``) goes to rcl: the legacy ``FROM:=TO`` syntax
    that rcl still accepts outside ``--ros-args`` is the value of ``--remap`` here.

    :param argv: Arguments without the program name.
    :return: ``(own, ros)``; ``ros`` keeps its ``--ros-args`` markers.
    """
    own: list[str] = []
    ros: list[str] = []
    inside = False
    for item in argv:
        if item == '--ros-args':
            inside = True
            ros.append(item)
        elif inside and item == '--':
            inside = False
            ros.append(item)
        elif inside:
            ros.append(item)
        else:
            own.append(item)
    return own, ros
