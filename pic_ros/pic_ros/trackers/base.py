"""
The tracker interface: what a body tracker sends, decoded into candidate skeletons.

A :class:`TrackerSource` is fed the tracker's messages one by one, as its :class:`Transport`
delivers them (the ROS layer owns the transport: a topic subscription or a UDP socket), and
returns a :class:`TrackerReading`: every body it saw, as a skeleton in the ``'tracker'`` frame of
:mod:`pic_ros.skeleton`. Which body to follow, whether a frame is usable and the smoothing
are the business of :class:`~pic_ros.human.front_end.SkeletonFrontEnd`, the same for every
tracker.

Trackers are registered by name (:func:`register_tracker`); the name is the ``source``
parameter of the skeleton node. The built-in ones (Azure Kinect and Kinect v2 marker arrays,
Xsens MVN datagrams) register when :mod:`pic_ros.trackers` is imported. Adding a tracker is a
class with :meth:`TrackerSource.decode` and one :func:`register_tracker` call
(``docs/recipes.md``).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
import enum
import math
from types import MappingProxyType
from typing import Any, ClassVar, Final

from pic_ros.registry import Registry
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import SkeletonFrame


class Transport(enum.Enum):
    """How a tracker's messages reach the skeleton node."""

    MARKER_ARRAY = 'marker_array'
    """``visualization_msgs/MarkerArray`` on the ``body_tracking_data`` topic; the node hands
    over :class:`~pic_ros.trackers.marker_cdr.MarkerPositions` (ids, positions, stamp)."""

    UDP = 'udp'
    """Datagrams on a UDP socket bound to ``udp_address``:``udp_port``; the node hands over
    the bytes of each datagram."""


@dataclass(frozen=True)
class TrackerReading:
    """
    Every body one tracker message showed.

    :param stamp: Capture time of the message [s] (NaN when it carried no stamp, e.g. an empty
        marker array).
    :param bodies: Skeletons by the tracker's body id, ``'tracker'`` frame, [m]; empty when no
        body was seen.
    :param received: When the node received the message [s], on its clock (the
        ``receive_time`` given to :meth:`TrackerSource.decode`); NaN when unknown. The front end
        measures the person's absence on it too, so that a message stamped ahead of the stream
        cannot make the person look absent.
    """

    stamp: float
    bodies: Mapping[int, SkeletonFrame] = field(default_factory=dict)
    received: float = math.nan


class TrackerSource(abc.ABC):
    """
    One body tracker: its messages in, candidate skeletons out.

    Implementations never raise on what the tracker sends: a message they cannot use gives
    ``None`` (counted in :meth:`status`) or an empty reading.

    :param name: The registered name (the ``source`` parameter).
    """

    transport: ClassVar[Transport]
    """What the node must feed :meth:`decode` with."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def max_message_size(self) -> int:
        """Return the largest message the transport must accept [bytes] (UDP receive size)."""
        return 65535

    @abc.abstractmethod
    def decode(self, message: Any, receive_time: float) -> TrackerReading | None:
        """
        Decode one message of the tracker.

        :param message: What :attr:`transport` delivers (marker positions or a datagram).
        :param receive_time: When the node received it [s], on the node's clock.
        :return: The bodies it shows, or None when it completes no frame (a partial or unusable
            message).
        """

    def status(self) -> dict[str, int | float | str]:
        """
        Return the tracker's own counters for diagnostics.

        :return: Values by key (e.g. markers ignored, datagrams dropped per reason).
        """
        return {}

    def reset(self) -> None:  # noqa: B027 (optional hook: nothing to forget by default)
        """Forget any partial state (a new session of the stream); counters are kept."""


TrackerFactory = Callable[[Mapping[str, Any]], TrackerSource]
"""Makes a tracker from the skeleton node's parameter values (its own options among them)."""

TRACKERS: Final = Registry[TrackerFactory]('tracker')
"""The trackers by ``source`` name (:mod:`pic_ros.registry`: snake_case, each name once,
sorted)."""


def register_tracker(name: str, factory: TrackerFactory) -> None:
    """
    Register a tracker under a ``source`` name.

    :param name: The name users give as ``source``.
    :param factory: Called with the skeleton node's parameter values.
    :raises ConfigError: If the name is taken or not ``snake_case``.
    """
    TRACKERS.add(name, factory)


def unregister_tracker(name: str) -> None:
    """
    Remove a registered tracker (for plug-ins that are unloaded, and tests).

    :param name: A registered name.
    :raises ConfigError: If no tracker has that name.
    """
    TRACKERS.remove(name)


def tracker_names() -> tuple[str, ...]:
    """
    Return the registered tracker names, sorted (plug-ins loaded first, :mod:`pic_ros.plugins`).

    :return: E.g. ``('azure_kinect', 'kinect_v2', 'xsens_mvn')``.
    """
    return TRACKERS.names()


def make_tracker(name: str, options: Mapping[str, Any] | None = None) -> TrackerSource:
    """
    Create a registered tracker.

    :param name: Its ``source`` name.
    :param options: The skeleton node's parameter values (each tracker reads its own).
    :return: A new tracker.
    :raises ConfigError: If the name is unknown (the message lists the known ones) or an option
        is refused.
    """
    SOURCE.check(name)
    return TRACKERS.get(name)(MappingProxyType(dict(options or {})))


SOURCE = ParameterDef(
    'source', 'azure_kinect',
    'Body tracker: MarkerArray on body_tracking_data (azure_kinect, kinect_v2) or the Xsens MVN '
    'network stream on UDP (xsens_mvn); plug-ins add theirs',
    choices=tracker_names, read_only=True,
)
"""The skeleton node's ``source`` parameter: a registered tracker name."""
