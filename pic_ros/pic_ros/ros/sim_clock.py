"""
A node on simulated time reads the newest ``/clock`` waiting, before a step of its own.

With ``use_sim_time``, a node's clock is the last ``/clock`` message its executor has taken
(rclpy's time source subscribes with depth 1: the newest message waits). rclpy's executor
runs a node's ready timers before its ready subscriptions, so a process the scheduler left
without CPU wakes into its timer callback first: that callback reads the time from before the
stall, stamps its work with it, and only then does the executor apply the ``/clock`` that
waited. A trajectory chunk stamped so reaches its controller as if it had taken the whole
stall in transit, and is joined rather than continued. :func:`take_newest_clock` applies the
waiting message first, as the executor would a moment later.

Only for the node's own callbacks in its default callback group (a timer's, a subscription's):
the time source's subscription is in that mutually exclusive group too, so the executor never
applies a message at the same moment; another thread must not call it (it could apply an older
message after a newer one: the clock would go back).
"""

from __future__ import annotations

from typing import Any

import rclpy.exceptions
from rclpy.node import Node

CLOCK_TOPIC = '/clock'
"""The topic rclpy's time source subscribes to when ``use_sim_time`` is set."""

_INVALID_HANDLE: type[Exception] = getattr(rclpy.exceptions, 'InvalidHandle', RuntimeError)


def take_newest_clock(node: Node) -> bool:
    """
    Apply the ``/clock`` message waiting for a node's time source, if there is one.

    :param node: A node; without ``use_sim_time`` it has no ``/clock`` subscription and
        nothing is done.
    :return: Whether a message was waiting (the node's clock now reads it).
    """
    for subscription in node.subscriptions:
        if subscription.topic_name != CLOCK_TOPIC:
            continue
        try:
            with subscription.handle:
                taken: Any = subscription.handle.take_message(
                    subscription.msg_type, subscription.raw
                )
        except _INVALID_HANDLE:  # destroyed: shutting down
            return False
        if taken is None:
            return False
        message = taken[0] if isinstance(taken, tuple) else taken
        subscription.callback(message)  # the time source's own callback
        return True
    return False
