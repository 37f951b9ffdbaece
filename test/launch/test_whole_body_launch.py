"""
``ros2 launch pic_ros tiago_whole_body.launch.py`` of the installed package, briefly.

The launch starts TIAGo's pipeline with the whole-body solver and, with ``follow_base:=true``,
``base_follower`` publishing on the robot file's base command topic; with ``admittance:=true`` the
solver node reads the wrist sensor's topic.
Ctrl-C then ends everything with status 0. Nothing is replayed: the test checks the graph and the
parameters, not the motion (``test/ros/test_solver_admittance.py`` and the base follower's tests
do that).
"""

from __future__ import annotations

from launch_harness import Probe, wait_for
import pytest
from test_ros2_launch import START_TIMEOUT, stop_cleanly, wait_for_nodes

pytestmark = [pytest.mark.launch, pytest.mark.ros]

BASE_COMMAND = '/mobile_base_controller/cmd_vel_unstamped'
"""config/tiago.yaml's mobile_base command_topic, in the root namespace."""

WRENCH = '/ft_sensor_controller/wrench'
"""config/tiago.yaml's wrist sensor topic, in the root namespace."""


def published_topics(probe: Probe, node: str) -> dict[str, list[str]]:
    """Return the topics a node of the root namespace publishes, with their types."""
    return dict(probe.node.get_publisher_names_and_types_by_node(node, '/'))


def test_tiago_whole_body_launch_starts_the_base_follower_and_the_whole_body_solver(
    ros2, probe
):
    """
    The README's line (and admittance): base_follower on TIAGo's base topic, whole-body solver.

    ``follow_base:=true`` starts base_follower, publishing Twist on config/tiago.yaml's base
    topic; solver_node runs TIAGo with ``whole_body`` and ``admittance`` true and subscribes the
    wrist sensor's topic; ``start_engaged:=true`` reaches trajectory_publisher.
    """
    watcher = probe([])
    launch = ros2(
        'launch', 'pic_ros', 'tiago_whole_body.launch.py', 'follow_base:=true',
        'admittance:=true', 'start_engaged:=true', log='launch',
    )
    wait_for_nodes(
        launch, watcher,
        ['/skeleton_node', '/solver_node', '/trajectory_publisher', '/base_follower'],
    )
    assert watcher.get_parameter('/solver_node', 'robot') == 'tiago'
    assert watcher.get_parameter('/solver_node', 'whole_body') is True
    assert watcher.get_parameter('/solver_node', 'admittance') is True
    assert watcher.get_parameter('/base_follower', 'follow_base') is True
    assert watcher.get_parameter('/base_follower', 'stamped') is False
    assert watcher.get_parameter('/trajectory_publisher', 'start_engaged') is True
    wait_for(
        lambda: BASE_COMMAND in published_topics(watcher, 'base_follower'),
        f'base_follower publishing {BASE_COMMAND}', START_TIMEOUT, launch.output(),
    )
    assert published_topics(watcher, 'base_follower')[BASE_COMMAND] == [
        'geometry_msgs/msg/Twist'
    ]
    wait_for(
        lambda: WRENCH in dict(watcher.node.get_subscriber_names_and_types_by_node(
            'solver_node', '/')),
        f'solver_node subscribing {WRENCH}', START_TIMEOUT, launch.output(),
    )
    stop_cleanly(launch)
