"""Throttled health reports of the nodes on ``/diagnostics`` (DiagnosticArray)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy


class DiagnosticsReporter:
    """
    Publish a node's statuses on ``/diagnostics`` every ``period`` seconds.

    :param node: The node.
    :param period: Seconds between reports [s].
    :param collect: Returns the statuses to publish (called from the timer).
    """

    def __init__(
        self, node: Node, period: float, collect: Callable[[], Sequence[DiagnosticStatus]]
    ) -> None:
        self._node = node
        self._collect = collect
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._publisher = node.create_publisher(DiagnosticArray, '/diagnostics', qos)
        self._timer = node.create_timer(period, self.publish)

    def publish(self) -> None:
        """Collect and publish one report now."""
        message = DiagnosticArray()
        message.header.stamp = self._node.get_clock().now().to_msg()
        message.status = list(self._collect())
        self._publisher.publish(message)

    def set_period(self, period: float) -> None:
        """
        Change the report period.

        :param period: Seconds between reports [s].
        """
        self._node.destroy_timer(self._timer)
        self._timer = self._node.create_timer(period, self.publish)


class RateMeter:
    """Count events and report their rate over the last report interval."""

    def __init__(self) -> None:
        self._count = 0
        self._last_count = 0
        self._last_time: float | None = None
        self.total = 0

    def tick(self, count: int = 1) -> None:
        """
        Count events.

        :param count: Events that happened.
        """
        self._count += count
        self.total += count

    def rate(self, now: float) -> float:
        """
        Return the rate since the previous call and start a new interval.

        :param now: Current time [s].
        :return: Events per second (0 for the first call).
        """
        if self._last_time is None or now <= self._last_time:
            self._last_time = now
            self._last_count = self._count
            return 0.0
        rate = (self._count - self._last_count) / (now - self._last_time)
        self._last_time = now
        self._last_count = self._count
        return rate
