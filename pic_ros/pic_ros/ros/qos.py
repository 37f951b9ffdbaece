"""QoS profiles the nodes share."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
"""
Latched: reliable, transient local, depth 1: the last value is kept for later subscribers.

What ``engaged`` and ``robot_description`` use (robot_state_publisher's ``robot_description`` is
published and read this way); a subscriber must ask for transient local too to get the kept value.
"""

EVERY_VALUE = QoSProfile(
    depth=1, history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE
)
"""QoS of ``estop``: no value is overwritten before it is read (a stop is never missed)."""
