"""
take_newest_clock: a node on simulated time reads the newest ``/clock`` waiting, when asked.

The trajectory publisher's timer step calls it (``test_trajectory_publisher_node.py`` has the
stall it is for); here, what it does on its own.
"""

from __future__ import annotations

from builtin_interfaces.msg import Time
from pic_ros.ros.sim_clock import take_newest_clock
import rclpy
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock


def test_a_node_on_its_system_clock_has_no_clock_to_take(ros_context):
    node = rclpy.create_node('pic_ros_wall_clock_node', context=ros_context)
    try:
        assert not take_newest_clock(node)
    finally:
        node.destroy_node()


def test_the_clock_waiting_for_a_sim_time_node_is_applied_when_taken(
    ros_context, helper_node, wait_for
):
    node = rclpy.create_node(
        'pic_ros_sim_clock_node', context=ros_context,
        parameter_overrides=[Parameter('use_sim_time', value=True)],
    )
    try:
        publisher = helper_node.create_publisher(Clock, '/clock', 10)
        wait_for(lambda: publisher.get_subscription_count() > 0, 'the node subscribing /clock')
        assert not take_newest_clock(node)  # nothing published yet
        message = Clock(clock=Time(sec=42, nanosec=5))

        def taken() -> bool:
            publisher.publish(message)
            return take_newest_clock(node)

        wait_for(taken, 'the /clock message reaching the node')
        assert node.get_clock().now().nanoseconds == 42_000_000_005
    finally:
        node.destroy_node()
