"""QoS profiles the nodes share."""

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
"""
Latched: reliable, transient local, depth 1: the last value is kept for later subscribers.

What ``engaged`` and ``robot_description`` use (robot_state_publisher's ``robot_description`` is
published and read this way); a subscriber must ask for transient local too to get the kept value.
"""
