"""
The nodes declare exactly their parameter tables, and plug-ins reach the nodes.

Each node's declared parameters, descriptors and read-only flags are the table's
(:mod:`pic_ros.ros.schema`). The recipes' toy solver and tracker (``test/plugins``) are accepted
by the solver node and drive the skeleton node.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
import socket
import threading

from pic_ros.ros import schema
from pic_ros.ros.base_follower_node import BaseFollowerNode
from pic_ros.ros.skeleton_node import SkeletonNode
from pic_ros.ros.solver_node import SolverNode
from pic_ros.ros.trajectory_publisher_node import TrajectoryPublisherNode
from pic_ros.solvers import unregister_solver
from pic_ros.trackers import tracker_names, unregister_tracker
from pic_ros_tools.ros.schema import SIM_ROBOT
from pic_ros_tools.ros.sim_robot_node import SimRobotNode
import pytest
from rclpy.parameter import Parameter

PLUGINS = Path(__file__).resolve().parents[1] / 'plugins'

NODES = {
    'base_follower': BaseFollowerNode,
    'skeleton_node': SkeletonNode,
    'solver_node': SolverNode,
    'trajectory_publisher': TrajectoryPublisherNode,
    'sim_robot': SimRobotNode,
}


@pytest.mark.parametrize('name', sorted(NODES))
def test_a_node_declares_exactly_its_table(make_node, name):
    """
    Names, descriptions with units, ranges, choices and read-only flags come from the table.

    ``use_sim_time`` and ``start_type_description_service`` are declared by rclpy itself.
    """
    if name == 'sim_robot':
        pytest.importorskip('mujoco')
    table = {**schema.TABLES, 'sim_robot': SIM_ROBOT}[name]
    node = make_node(NODES[name])

    declared = set(node._parameters) - {'use_sim_time', 'start_type_description_service'}

    assert declared == set(table.names)
    for definition in table:
        descriptor = node.describe_parameter(definition.name)
        assert descriptor.read_only == definition.read_only, definition.name
        assert descriptor.description.startswith(definition.description), definition.name
        if definition.unit:
            assert descriptor.description.endswith(f'[{definition.unit}]'), definition.name
        ranges = list(descriptor.floating_point_range) + list(descriptor.integer_range)
        if definition.low is not None and definition.high is not None:
            (declared_range,) = ranges
            assert (declared_range.from_value, declared_range.to_value) == (
                definition.low, definition.high
            ), definition.name
        for choice in definition.allowed():
            assert choice in descriptor.additional_constraints, definition.name


@pytest.mark.parametrize('robot', ['baxter', 'tiago'])
def test_the_solver_node_reports_the_robots_arms_when_given_none(make_node, robot):
    """``arms`` left empty: its value is the robot's arms, a string array, never a byte array."""
    from pic_ros.robot import load_robot

    node = make_node(SolverNode, {'robot': robot})

    arms = node.get_parameter('arms')
    assert arms.type_ is Parameter.Type.STRING_ARRAY
    assert list(arms.value) == list(load_robot(robot).arms)
    assert node.describe_parameter('arms').type == Parameter.Type.STRING_ARRAY.value
    assert schema.SOLVER_NODE['arms'].default == []


def test_an_empty_string_array_default_needs_a_node_default(helper_node):
    """An empty default is refused, naming the parameter: rclpy would declare a byte array."""
    from pic_ros.ros.parameters import declare_parameters
    from pic_ros.schema import ParameterDef, ParameterTable

    table = ParameterTable('probe', [ParameterDef('names', [], 'Some names')])

    with pytest.raises(ValueError, match='names'):
        declare_parameters(helper_node, table)
    declared = declare_parameters(helper_node, table, {'names': lambda values: ['a']})
    assert list(declared['names']) == ['a']
    assert helper_node.get_parameter('names').type_ is Parameter.Type.STRING_ARRAY


@pytest.fixture
def toys(monkeypatch):
    """Register the recipes' toy solver and tracker for one test."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    module = importlib.import_module('pic_ros_toys')
    if 'json_udp' not in tracker_names():
        importlib.reload(module)
    yield
    unregister_solver('recovery_only')
    unregister_tracker('json_udp')


def test_the_solver_node_takes_a_plugin_solver(toys, make_node):
    """At start-up and at run time, the plug-in's name is a valid solver."""
    node = make_node(SolverNode, {'solver': 'recovery_only'})
    assert node._imitator.solver_config.name == 'recovery_only'
    assert node.set_parameters([Parameter('solver', value='pic')])[0].successful
    assert node.set_parameters([Parameter('solver', value='recovery_only')])[0].successful


def test_the_skeleton_node_reads_a_plugin_tracker_over_udp(
    toys, make_node, capture, wait_for, diagnostics
):
    """
    A UDP plug-in tracker gets the node's receiver; its datagrams become skeletons.

    The receiver acts on the newest reading of each read: how many of the three come in one
    read depends on how busy the host is, so each one is either handed on or counted as
    superseded, and at least the newest is handed on.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(('127.0.0.1', 0))
        port = int(probe.getsockname()[1])
    node = make_node(SkeletonNode, {'source': 'json_udp', 'udp_port': port})
    published = capture(node, node._skeleton_pub)
    handed = []
    lock = threading.Lock()

    def keep(frame):
        with lock:
            handed.append(frame)

    node.add_handler(keep)
    joints = [
        (2.0, 0.0, 0.9), (2.0, 0.0, 1.3), (2.0, 0.0, 1.45), (2.0, 0.0, 1.6),
        (2.0, -0.18, 1.4), (1.75, -0.2, 1.3), (1.5, -0.2, 1.3), (1.45, -0.2, 1.3),
        (2.0, 0.18, 1.4), (1.75, 0.2, 1.3), (1.5, 0.2, 1.3), (1.45, 0.2, 1.3),
    ]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for k in range(3):  # one at a time: datagrams waiting together are superseded
            message = {'stamp': 10.0 + 0.033 * k, 'bodies': {'1': joints}}
            sender.sendto(json.dumps(message).encode(), ('127.0.0.1', port))
            wait_for(lambda k=k: len(handed) == k + 1, f'skeleton {k + 1} of the plug-in tracker')
        sender.sendto(b'not json', ('127.0.0.1', port))

        wait_for(lambda: node._tracker.status()['json_unreadable'] == 1, 'the bad datagram')
    assert all(frame.frame == 'body' for frame in handed)
    assert len(published) == len(handed) == int(diagnostics(node)[0]['skeletons_out']) == 3
