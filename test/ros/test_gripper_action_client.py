"""
The rclpy GripperCommand client, on doubles of ``rclpy.action.ActionClient`` and ``control_msgs``.

control_msgs is not installed here: a stand-in module gives ``GripperCommand.Goal`` and a fake
``ActionClient`` records the goals and cancels, so the client's own logic (no goal without a
server, the goal's fields, cancelling a goal accepted before or after the cancel) is checked.
"""

from __future__ import annotations

import sys
import types

from pic_ros.exceptions import ConfigError
from pic_ros.ros import gripper_action
from pic_ros.ros.gripper_action import ActionGripperClient
import pytest


class Future:
    """A future that is answered by the test."""

    def __init__(self) -> None:
        self.value = None
        self.answered = False
        self.callbacks: list = []

    def done(self) -> bool:
        return self.answered

    def result(self):
        return self.value

    def add_done_callback(self, callback) -> None:
        self.callbacks.append(callback)

    def answer(self, value) -> None:
        self.value, self.answered = value, True
        for callback in self.callbacks:
            callback(self)


class Handle:
    """A goal handle that counts its cancels."""

    def __init__(self, accepted: bool) -> None:
        self.accepted = accepted
        self.cancels = 0

    def cancel_goal_async(self) -> None:
        self.cancels += 1


class FakeActionClient:
    """Records the goals sent; the server is ready unless told."""

    made: list[FakeActionClient] = []

    def __init__(self, node, action_type, name) -> None:
        self.name = name
        self.ready = True
        self.goals: list = []
        self.futures: list[Future] = []
        FakeActionClient.made.append(self)

    def server_is_ready(self) -> bool:
        return self.ready

    def send_goal_async(self, goal) -> Future:
        self.goals.append(goal)
        self.futures.append(Future())
        return self.futures[-1]


@pytest.fixture
def client(monkeypatch):
    """Return ``(client, fake)``: an ActionGripperClient on the doubles."""
    def goal() -> types.SimpleNamespace:
        command = types.SimpleNamespace(position=0.0, max_effort=0.0)
        return types.SimpleNamespace(command=command)

    actions = types.ModuleType('control_msgs.action')
    actions.GripperCommand = types.SimpleNamespace(Goal=goal)
    monkeypatch.setitem(sys.modules, 'control_msgs', types.ModuleType('control_msgs'))
    monkeypatch.setitem(sys.modules, 'control_msgs.action', actions)
    monkeypatch.setattr(gripper_action, 'control_msgs_available', lambda: True)
    monkeypatch.setattr('rclpy.action.ActionClient', FakeActionClient)
    FakeActionClient.made.clear()
    made = ActionGripperClient(object(), 'left_gripper_controller/gripper_cmd')
    return made, FakeActionClient.made[-1]


def test_no_goal_goes_out_without_a_server(client):
    """send() says False and sends nothing while the server is not there."""
    made, fake = client
    fake.ready = False

    assert not made.ready()
    assert made.send(0.01, 20.0) is False
    assert fake.goals == []


def test_a_goal_carries_the_position_and_the_effort(client):
    """The goal's command holds the position [m or rad] and max_effort as given."""
    made, fake = client

    assert made.send(0.025, 20.0) is True
    assert fake.name == 'left_gripper_controller/gripper_cmd'
    assert (fake.goals[0].command.position, fake.goals[0].command.max_effort) == (0.025, 20.0)


def test_cancel_cancels_an_accepted_goal_once(client):
    """A goal accepted before the cancel is cancelled; a second cancel has nothing to cancel."""
    made, fake = client
    made.send(0.0, 20.0)
    handle = Handle(accepted=True)
    fake.futures[0].answer(handle)

    assert made.cancel() is True
    assert handle.cancels == 1
    assert made.cancel() is False


def test_a_goal_accepted_after_the_cancel_is_cancelled_then(client):
    """Cancelled before the server answered, the goal is cancelled once it is accepted."""
    made, fake = client
    made.send(0.0, 20.0)

    assert made.cancel() is True
    handle = Handle(accepted=True)
    fake.futures[0].answer(handle)
    assert handle.cancels == 1


def test_without_control_msgs_the_client_is_not_made(monkeypatch):
    """The client refuses to be made without control_msgs, naming it."""
    monkeypatch.setattr(gripper_action, 'control_msgs_available', lambda: False)

    with pytest.raises(ConfigError, match="'control_msgs' cannot be imported"):
        ActionGripperClient(object(), 'gripper_cmd')
