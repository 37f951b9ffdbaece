"""
sim_robot publishes the robot's URDF on ``robot_description``, latched as robot_state_publisher.

The node runs in this process (its own rclpy context, the run's domain on loopback:
``conftest.py``); a subscriber that comes after the one publication still gets it. Every wait is
bounded by a count of executor spins.
"""

from __future__ import annotations

import importlib.util

from pic_ros.robot import load_robot
from pic_ros.ros.qos import LATCHED
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from std_msgs.msg import String

if importlib.util.find_spec('mujoco') is None:
    pytest.skip('sim_robot needs mujoco', allow_module_level=True)

pytestmark = [pytest.mark.ros]

SPINS = 6000
"""Most executor spins the test waits for the description (each up to 10 ms)."""


@pytest.mark.parametrize('robot', ['yumi', 'tiago'])
def test_sim_robot_publishes_its_urdf_latched_on_robot_description(
    robot, make_node, helper_node, ros_context
):
    """A late transient-local subscriber gets the URDF the simulation runs, exactly once."""
    from pic_ros_tools.ros.sim_robot_node import SimRobotNode

    node = make_node(SimRobotNode, {'robot': robot, 'rate': 100.0})
    publisher = node._description
    assert publisher.topic_name == '/robot_description'
    assert publisher.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
    assert publisher.qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert publisher.qos_profile.depth == 1
    received: list[str] = []
    helper_node.create_subscription(
        String, 'robot_description', lambda message: received.append(message.data), LATCHED
    )
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(helper_node)
    try:
        for _ in range(SPINS):
            executor.spin_once(timeout_sec=0.01)
            if received:
                break
        for _ in range(20):  # a second copy would arrive with the first
            executor.spin_once(timeout_sec=0.0)
    finally:
        executor.remove_node(helper_node)
        executor.shutdown(timeout_sec=1.0)
    urdf = load_robot(robot).urdf_file.read_text(encoding='utf-8')
    assert received == [urdf]
    assert '<robot' in received[0]
