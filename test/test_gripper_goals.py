"""
GripperCommand goals: the robot file's ``action`` entry and when a goal or a cancel goes out.

Pure: no rclpy, no control_msgs. The node's wiring (a client double injected) is tested in
``test/ros/test_trajectory_publisher_gripper_action.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.motion.gripper_goals import GoalKind, GripperGoals
from pic_ros.motion.tracking_loss import TrackingState
from pic_ros.resources import config_path
from pic_ros.robot.config import GRIPPER_GOAL_SHARE, load_robot_spec
from pic_ros.robot.robot import load_robot
import pytest
import yaml

TRACKING = TrackingState.TRACKING


def robot_file(tmp_path: Path, robot: str = 'yumi', **actions: dict) -> Path:
    """Write a copy of a shipped robot file with ``action`` entries added by arm."""
    data = yaml.safe_load(config_path(robot).read_text())
    for arm, action in actions.items():
        data['grippers'][arm]['action'] = action
    path = tmp_path / f'{robot}.yaml'
    path.write_text(yaml.safe_dump(data))
    return path


def test_action_entry_defaults_to_the_controllers_gripper_cmd_and_first_joint(tmp_path):
    """Only max_effort is needed; name, joint and threshold default from the gripper."""
    spec = load_robot_spec(robot_file(tmp_path, left={'max_effort': 15}))

    action = spec.grippers['left'].action
    assert action is not None
    assert action.name == 'left_gripper_controller/gripper_cmd'
    assert action.joint == 'gripper_l_joint'
    assert action.max_effort == 15.0
    assert action.threshold == pytest.approx(GRIPPER_GOAL_SHARE * 0.025)
    assert spec.grippers['right'].action is None


@pytest.mark.parametrize('action, words', [
    ({}, 'max_effort'),
    ({'max_effort': 0.0}, 'max_effort must be a number > 0'),
    ({'max_effort': 5.0, 'joint': 'yumi_joint_1_l'}, 'not a gripper joint'),
    ({'max_effort': 5.0, 'threshold': 0.025}, 'below the open-to-closed distance'),
    ({'max_effort': 5.0, 'speed': 1.0}, 'unknown keys'),
])
def test_a_wrong_action_entry_is_refused_naming_it(tmp_path, action, words):
    """Each mistake is a ConfigError that names the entry and what is wrong."""
    with pytest.raises(ConfigError, match='grippers.left.action') as error:
        load_robot_spec(robot_file(tmp_path, left=action))
    assert words in str(error.value)


def test_a_gripper_without_action_entry_cannot_be_commanded_by_action():
    """The goals refuse a gripper the robot file gives no action entry, naming the key."""
    gripper = load_robot('yumi').grippers['left']

    with pytest.raises(ConfigError, match=r'grippers\.left\.action'):
        GripperGoals(gripper)


@pytest.fixture
def goals(tmp_path) -> GripperGoals:
    """Return the goals of YuMi's left gripper (0 closed, 0.025 m open, 20 N)."""
    path = robot_file(tmp_path, left={'max_effort': 20.0, 'threshold': 0.002})
    return GripperGoals(load_robot(str(path)).grippers['left'])


def test_the_first_position_is_sent_with_the_files_effort(goals):
    """Nothing sent yet: the position goes out, in metres for the prismatic finger."""
    decision = goals.decide(TRACKING, [0.025])

    assert (decision.kind, decision.position, decision.max_effort) == (
        GoalKind.SEND, 0.025, 20.0,
    )


def test_a_change_within_the_threshold_sends_nothing_and_beyond_it_a_new_goal(goals):
    """Goals follow changes of the position larger than the threshold, not every step."""
    goals.done(goals.decide(TRACKING, [0.025]))

    assert goals.decide(TRACKING, [0.0235]).kind is GoalKind.NOTHING
    beyond = goals.decide(TRACKING, [0.0225])
    assert (beyond.kind, beyond.position) == (GoalKind.SEND, 0.0225)


def test_decide_changes_nothing_until_done_is_told(goals):
    """A goal the client could not send is decided again at the next step."""
    first = goals.decide(TRACKING, [0.0])
    assert goals.decide(TRACKING, [0.0]) == first
    goals.done(first)
    assert goals.decide(TRACKING, [0.0]).kind is GoalKind.NOTHING
    assert goals.sent == 1


def test_the_position_is_kept_inside_the_joint_limits(goals):
    """A reference beyond a limit is sent at the limit."""
    decision = goals.decide(TRACKING, [0.5])

    assert decision.position == pytest.approx(goals._upper)
    assert goals._lower <= goals.decide(TRACKING, [-1.0]).position


@pytest.mark.parametrize('state', [TrackingState.DISENGAGED, TrackingState.WAITING])
def test_disengaged_or_waiting_cancels_a_running_goal_once(goals, state):
    """A sent goal is cancelled once; with nothing sent there is nothing to cancel."""
    assert goals.decide(state, [0.0]).kind is GoalKind.NOTHING
    goals.done(goals.decide(TRACKING, [0.0]))

    cancel = goals.decide(state, [0.0])
    assert cancel.kind is GoalKind.CANCEL
    goals.done(cancel)
    assert goals.decide(state, [0.0]).kind is GoalKind.NOTHING
    assert goals.cancelled == 1


def test_after_a_cancel_the_same_position_is_sent_again(goals):
    """Re-engaging sends the position even when it equals the last goal's."""
    goals.done(goals.decide(TRACKING, [0.0]))
    goals.done(goals.decide(TrackingState.DISENGAGED, [0.0]))

    assert goals.decide(TRACKING, [0.0]).kind is GoalKind.SEND


@pytest.mark.parametrize('state', [
    TrackingState.HOLDING, TrackingState.RETURNING_TO_NEUTRAL, TrackingState.AT_NEUTRAL,
    TrackingState.BLENDING,
])
def test_tracking_loss_states_command_their_reference(goals, state):
    """Holding, returning to neutral and blending in send their reference like tracking."""
    goals.done(goals.decide(TRACKING, [0.0]))

    decision = goals.decide(state, [0.025])
    assert (decision.kind, decision.position) == (GoalKind.SEND, 0.025)


def test_a_streamed_hand_sends_one_goal_per_hand_change(tmp_path):
    """
    Driven by its commander at 50 Hz, a gripper gets a goal per change of the hand, not per step.

    The hand alternates open and closed every 1.5 s for 12 s; every goal is the open or the
    closed position, in the order of the changes.
    """
    path = robot_file(tmp_path, left={'max_effort': 20.0})
    gripper = load_robot(str(path)).grippers['left']
    goals = GripperGoals(gripper)
    commander = ArmCommander(gripper.group, CommanderConfig(), engaged=True)
    commander.start_from(gripper.open_position)
    sent: list[float] = []
    changes = []
    steps = 0
    for now in np.arange(0.0, 12.0, 0.02):
        closed = int(now // 1.5) % 2 == 1
        if not changes or changes[-1] != closed:
            changes.append(closed)
        names = gripper.joint_names
        commander.on_target(float(now), dict(zip(names, gripper.targets(closed))))
        if commander.step(float(now)) is None or commander.guidance is None:
            continue
        steps += 1
        decision = goals.decide(commander.guidance.state, commander.guidance.reference)
        if decision.kind is GoalKind.SEND:
            sent.append(decision.position)
        goals.done(decision)

    expected = [float(gripper.targets(closed)[0]) for closed in changes]
    assert sent == pytest.approx(expected)
    assert steps > 10 * len(sent)
