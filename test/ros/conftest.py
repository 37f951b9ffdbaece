"""
Fixtures of the node tests: the run's DDS domain, one rclpy context per module, nodes, capture.

The nodes are built with ``parameter_overrides`` and their callbacks called directly with messages
built in the tests; what they publish is captured by wrapping their publishers' ``publish``.
DDS is only used where a node must hear something: ``/clock`` for ``use_sim_time``, and a helper
subscription that makes a publisher that publishes only when listened to publish. Every wait is
bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import time
from typing import Any, NamedTuple

from pic_ros_tools.ros.processes import use_run_domain
import pytest

# Before any rclpy.init: the exported ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE when set (a
# shared host's reservation, honoured as it is), else a domain of this run's own and LOCALHOST.
# Every test of the run uses this one domain, one test after another; tests that run side
# processes at the same time keep them apart by namespace, not by another domain.
RUN_DOMAIN = use_run_domain()

rclpy = pytest.importorskip('rclpy', reason='the node tests need rclpy and the message packages')

WAIT_SECONDS = 60.0
"""
Longest wall time any helper waits for an event (discovery, a /clock message, a count) [s].

A bound for a busy host, never a figure: a wait ends as soon as its event happens.
"""


class Published(NamedTuple):
    """One captured message and the publishing node's clock when it was published [s]."""

    time: float
    message: Any


def node_seconds(node: Any) -> float:
    """Return a node's clock time [s] (sim time when ``use_sim_time`` is set)."""
    return node.get_clock().now().nanoseconds * 1e-9


def wait_until(condition: Callable[[], bool], what: str, seconds: float = WAIT_SECONDS) -> None:
    """
    Wait (bounded) until a condition holds, or fail the test.

    :param condition: Checked every few milliseconds.
    :param what: What is awaited, for the failure message.
    :param seconds: Longest wait [s].
    """
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f'timed out after {seconds} s waiting for {what}')
        time.sleep(0.002)


@pytest.fixture(scope='session', autouse=True)
def _kernels_before_processes(compiled_kernels: object) -> None:
    """Have the numba kernels in the cache before a node process starts (``compiled_kernels``)."""


@pytest.fixture(scope='module')
def ros_context() -> Iterator[Any]:
    """Make an rclpy context of the test module's own, shut down after the module."""
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


@pytest.fixture
def make_node(ros_context: Any) -> Iterator[Callable[..., Any]]:
    """
    Return a factory of nodes in the module's context; they are destroyed after the test.

    ``make_node(NodeClass, {'name': value, ...}, **kwargs)``.
    """
    from rclpy.parameter import Parameter

    nodes: list[Any] = []

    def make(node_class: Any, parameters: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        overrides = [
            Parameter(name, value=value) for name, value in (parameters or {}).items()
        ]
        node = node_class(context=ros_context, parameter_overrides=overrides, **kwargs)
        nodes.append(node)
        return node

    yield make
    for node in reversed(nodes):
        node.destroy_node()


@pytest.fixture
def helper_node(ros_context: Any) -> Iterator[Any]:
    """Make a plain node for the test's own subscriptions and publishers."""
    node = rclpy.create_node('pic_ros_test_helper', context=ros_context)
    yield node
    node.destroy_node()


@pytest.fixture
def capture(helper_node: Any) -> Callable[[Any, Any], list[Published]]:
    """
    Return a starter of captures, called with a node and one of its publishers.

    It returns the list that receives what the publisher publishes, as :class:`Published`. A
    helper subscription to the publisher's topic is made first and matched (bounded wait), so
    that publishers that publish only when someone listens do publish.
    """

    def start(node: Any, publisher: Any) -> list[Published]:
        from rclpy.serialization import deserialize_message

        helper_node.create_subscription(
            publisher.msg_type, publisher.topic_name, lambda message: None, 10
        )
        wait_until(
            lambda: publisher.get_subscription_count() > 0,
            f'a subscription to {publisher.topic_name}',
        )
        captured: list[Published] = []
        original = publisher.publish

        def publish(message: Any) -> None:
            sent = message
            if isinstance(message, bytes):  # published serialized: captured as the message
                sent = deserialize_message(message, publisher.msg_type)
            captured.append(Published(node_seconds(node), sent))
            original(message)

        publisher.publish = publish
        return captured

    return start


class SimClock:
    """
    Drive the ``use_sim_time`` clock of some nodes by publishing ``/clock``.

    :param helper: Node that publishes ``/clock``.
    :param nodes: Nodes with ``use_sim_time`` true; they are spun (bounded) until they read the
        published time, so their timers may fire in between, as on a live system.
    :param context: The rclpy context of the nodes.
    """

    def __init__(self, helper: Any, nodes: list[Any], context: Any) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from rosgraph_msgs.msg import Clock

        self._clock_type = Clock
        self._nodes = nodes
        self._publisher = helper.create_publisher(Clock, '/clock', 10)
        self._executor = SingleThreadedExecutor(context=context)
        for node in nodes:
            self._executor.add_node(node)
        wait_until(
            lambda: self._publisher.get_subscription_count() >= len(nodes),
            'the /clock subscriptions of the nodes',
        )

    def advance_to(self, seconds: float) -> None:
        """
        Publish a time and spin the nodes until every one of them reads it, then run due timers.

        :param seconds: The new time [s], >= 0.
        """
        from builtin_interfaces.msg import Time

        nanoseconds = int(round(seconds * 1e9))
        message = self._clock_type(
            clock=Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)
        )
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            self._publisher.publish(message)
            for _ in range(20):
                self._executor.spin_once(timeout_sec=0.005)
                if all(
                    node.get_clock().now().nanoseconds == nanoseconds for node in self._nodes
                ):
                    for _ in range(3):  # let the timers that are due now fire
                        self._executor.spin_once(timeout_sec=0.0)
                    return
            if time.monotonic() > deadline:
                pytest.fail(f'the nodes did not read /clock = {seconds} s')

    def shutdown(self) -> None:
        """Stop spinning the nodes (they stay alive)."""
        self._executor.shutdown(timeout_sec=1.0)


@pytest.fixture
def sim_clock(helper_node: Any, ros_context: Any) -> Iterator[Callable[..., SimClock]]:
    """Return a maker of :class:`SimClock`, called with the ``use_sim_time`` nodes to drive."""
    clocks: list[SimClock] = []

    def make(*nodes: Any) -> SimClock:
        clock = SimClock(helper_node, list(nodes), ros_context)
        clocks.append(clock)
        return clock

    yield make
    for clock in clocks:
        clock.shutdown()


@pytest.fixture
def wait_for() -> Callable[..., None]:
    """Return a bounded wait (a condition, what it is, seconds) that fails the test."""
    return wait_until


@pytest.fixture
def diagnostics() -> Callable[[Any], list[dict[str, str]]]:
    """Return a reader of a node's health report: the key values of each of its statuses."""

    def values(node: Any) -> list[dict[str, str]]:
        return [{item.key: item.value for item in status.values} for status in node._statuses()]

    return values
