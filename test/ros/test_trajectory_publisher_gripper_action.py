"""
trajectory_publisher with ``gripper_interface`` ``gripper_action``: goals instead of streams.

The GripperCommand client is a test double injected through the node's ``gripper_client``
(control_msgs is not needed, nor imported); when to send is tested on
:class:`~pic_ros.motion.gripper_goals.GripperGoals` (``test/test_gripper_goals.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion.engagement import EngagementSource
from pic_ros.resources import config_path
from pic_ros.ros.gripper_action import control_msgs_available
from pic_ros.ros.trajectory_publisher_node import TrajectoryPublisherNode
from pic_ros.teleoperation import RobotTargets
import pytest
import yaml

START = 100.0
"""Sim time at which every test starts [s]."""


class FakeGripperClient:
    """A GripperCommand client that records what it is asked (the server ready unless told)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.server = True
        self.goals: list[tuple[float, float]] = []
        self.cancels = 0

    def ready(self) -> bool:
        return self.server

    def send(self, position: float, max_effort: float) -> bool:
        if not self.server:
            return False
        self.goals.append((position, max_effort))
        return True

    def cancel(self) -> bool:
        self.cancels += 1
        return True


@pytest.fixture
def yumi_with_actions(tmp_path) -> Path:
    """Return a copy of yumi.yaml whose grippers have action entries (20 N and 10 N)."""
    data = yaml.safe_load(config_path('yumi').read_text())
    data['grippers']['left']['action'] = {'max_effort': 20.0}
    data['grippers']['right']['action'] = {
        'max_effort': 10.0, 'name': 'r_gripper/command',
    }
    path = tmp_path / 'yumi.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def gripper_node(make_node, sim_clock, yumi_with_actions):
    """Return ``(node, clock, clients)``: YuMi, engaged, its grippers on FakeGripperClients."""
    clients: dict[str, FakeGripperClient] = {}

    def factory(node, name):
        clients[name] = FakeGripperClient(name)
        return clients[name]

    node = make_node(
        TrajectoryPublisherNode,
        {
            'robot': str(yumi_with_actions), 'gripper_interface': 'gripper_action',
            'use_sim_time': True, 'wait_for_joint_states': False, 'start_engaged': True,
            'self_collision_margin': 0.0, 'max_plan_ahead': 0.0,
        },
        gripper_client=factory,
    )
    clock = sim_clock(node)
    clock.advance_to(START)
    return node, clock, clients


def hand(node, clock, start, stop, closed: bool) -> float:
    """Stream the left gripper's open or closed target every 20 ms from start to stop."""
    gripper = node.robot.grippers['left']
    for now in np.arange(start, stop, 0.02):
        clock.advance_to(float(now))
        values = dict(zip(gripper.joint_names, gripper.targets(closed)))
        node.handle_targets(RobotTargets.from_joints(node.robot, float(now), values))
    return float(stop)


def test_grippers_get_an_action_client_each_and_no_trajectory_topic(gripper_node):
    """The robot file's action names are used (default <controller>/gripper_cmd); arms stream."""
    node, _clock, clients = gripper_node

    assert sorted(clients) == ['left_gripper_controller/gripper_cmd', 'r_gripper/command']
    topics = {publisher.topic_name for publisher in node.publishers}
    assert '/left_arm_controller/joint_trajectory' in topics
    assert not any('gripper_controller' in topic for topic in topics)


def test_a_goal_goes_out_per_hand_change_not_per_step(gripper_node):
    """Closing then opening the hand for 2 s each sends two goals, in metres, at 20 N."""
    node, clock, clients = gripper_node
    client = clients['left_gripper_controller/gripper_cmd']

    now = hand(node, clock, START, START + 2.0, closed=True)
    hand(node, clock, now, now + 2.0, closed=False)

    assert client.goals == [(0.0, 20.0), (0.025, 20.0)]
    assert clients['r_gripper/command'].goals == []  # no target: nothing sent
    assert client.cancels == 0


def test_disengaging_cancels_the_goal_and_re_engaging_sends_it_again(gripper_node):
    """~/disengage (and the estop) cancel once; engaged again, the same goal is sent anew."""
    node, clock, clients = gripper_node
    client = clients['left_gripper_controller/gripper_cmd']
    now = hand(node, clock, START, START + 1.0, closed=True)

    node._request(lambda at: node._engagement.disengage(at, EngagementSource.SERVICE))
    now = hand(node, clock, now, now + 1.0, closed=True)
    assert (len(client.goals), client.cancels) == (1, 1)

    node._request(lambda at: node._engagement.engage(at, EngagementSource.SERVICE))
    hand(node, clock, now, now + 1.0, closed=True)
    assert client.goals == [(0.0, 20.0), (0.0, 20.0)]
    assert client.cancels == 1


def test_without_a_server_goals_wait_and_the_diagnostics_say_so(gripper_node, diagnostics):
    """No server: nothing is sent, the status warns; once it is there the goal goes out."""
    node, clock, clients = gripper_node
    client = clients['left_gripper_controller/gripper_cmd']
    client.server = False

    now = hand(node, clock, START, START + 1.0, closed=True)
    statuses = {status.name: status for status in node._statuses()}
    left = next(status for name, status in statuses.items() if name.endswith('left_gripper'))
    values = {item.key: item.value for item in left.values}
    assert client.goals == []
    assert values['interface'] == 'gripper_action'
    assert values['action'] == '/left_gripper_controller/gripper_cmd'
    assert values['action_server'] == 'not available'
    assert int(values['goals_waiting_for_server']) > 0
    assert left.level == bytes([1]) and 'no action server' in left.message

    client.server = True
    hand(node, clock, now, now + 0.5, closed=True)
    assert client.goals == [(0.0, 20.0)]
    values = next(
        item for item in diagnostics(node) if item.get('action') == client_name(client)
    )
    assert values['goals_sent'] == '1'


def client_name(client: FakeGripperClient) -> str:
    """Return the resolved name the node reports for a client (the node is in /)."""
    return '/' + client.name


def test_a_gripper_without_action_entry_is_refused_at_start(make_node):
    """gripper_action with the shipped yumi.yaml (no action entries) names the missing entry."""
    with pytest.raises(ConfigError, match=r'grippers\.left\.action'):
        make_node(
            TrajectoryPublisherNode, {'robot': 'yumi', 'gripper_interface': 'gripper_action'},
            gripper_client=lambda node, name: FakeGripperClient(name),
        )


@pytest.mark.skipif(control_msgs_available(), reason='control_msgs is installed here')
def test_without_control_msgs_gripper_action_is_refused_naming_the_package(
    make_node, yumi_with_actions,
):
    """No silent fall-back to the trajectory topic: the start fails and names control_msgs."""
    with pytest.raises(ConfigError, match="'control_msgs' cannot be imported"):
        make_node(
            TrajectoryPublisherNode,
            {'robot': str(yumi_with_actions), 'gripper_interface': 'gripper_action'},
        )
