"""
The core step: one body-frame skeleton in, the robot's targets by controller group out.

:class:`~pic_ros.teleoperation.Teleoperation` composes the arms' imitation, the head and
grippers, the engage gesture and the calibration buffer; what it returns must be exactly what
each part gives (same input, same output), grouped as the robot's controllers are, with the
capture stamp -- and what goes over a topic as a ``JointState`` groups back the same way.
"""

from __future__ import annotations

import numpy as np
from pic_ros.exceptions import PicRosError
from pic_ros.head_and_hands import HeadAndHandsImitator
from pic_ros.human.engage_gesture import EngageGesture, EngageGestureConfig
from pic_ros.imitation import RobotImitator
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.skeleton import HumanJoint as J
from pic_ros.skeleton import make_frame
from pic_ros.solvers import SolverConfig
from pic_ros.teleoperation import RobotTargets, Teleoperation
import pytest
from test_imitation import sweep_frames


@pytest.mark.parametrize('robot_name', shipped_robots())
def test_the_targets_are_each_parts_answer_grouped_as_the_controllers_are(robot_name) -> None:
    """Arms, torso, head, grippers: the parts' own answers, in the robot's group order."""
    robot = load_robot(robot_name)
    teleoperation = Teleoperation(
        RobotImitator(robot, SolverConfig()), HeadAndHandsImitator(robot)
    )
    imitator = RobotImitator(robot, SolverConfig())
    extra = HeadAndHandsImitator(robot)
    for frame in sweep_frames(seconds=2.0):
        targets = teleoperation.step(frame)
        arms = imitator.step(frame)
        head_and_hands = extra.step(frame)
        assert targets.stamp == frame.stamp
        assert list(targets.groups) == [name for name in robot.groups if name in targets.groups]
        for name, step in arms.arms.items():
            np.testing.assert_array_equal(targets.groups[name].positions, step.result.q)
            assert targets.groups[name].joint_names == tuple(robot.arms[name].joint_names)
        if arms.torso is not None:
            assert targets.groups['torso'].positions.tolist() == [arms.torso.value]
        if head_and_hands.head is not None:
            np.testing.assert_array_equal(targets.groups['head'].positions, head_and_hands.head)
        for arm, values in head_and_hands.grippers.items():
            np.testing.assert_array_equal(
                targets.groups[robot.grippers[arm].group.name].positions, values
            )
        flat = dict(zip(targets.joint_names, targets.positions, strict=True))
        assert len(flat) == len(targets.joint_names)  # no joint twice


def test_a_joint_state_groups_back_into_the_same_targets() -> None:
    """What solver_node publishes, read by trajectory_publisher: the same groups and values."""
    robot = load_robot('baxter')
    teleoperation = Teleoperation(RobotImitator(robot, SolverConfig()))
    targets = teleoperation.step(sweep_frames(seconds=0.1)[-1])
    values = dict(zip(targets.joint_names, targets.positions))
    again = RobotTargets.from_joints(robot, targets.stamp, values)
    assert list(again.groups) == list(targets.groups)
    assert again.joint_names == targets.joint_names and again.positions == targets.positions


def test_a_frame_refused_by_the_solve_still_completes_the_engage_gesture() -> None:
    """The gesture is asked before the solve: a frame the arms refuse still counts for it."""
    robot = load_robot('baxter')
    gesture = EngageGesture(EngageGestureConfig(hold_time=0.1))
    teleoperation = Teleoperation(RobotImitator(robot, SolverConfig()), gesture=gesture)
    points = sweep_frames(seconds=0.1)[0].positions.copy()
    points[J.HEAD] = (0.0, 0.0, 0.25)
    points[J.WRIST_LEFT] = (0.0, 0.3, 0.5)
    points[J.WRIST_RIGHT] = (0.0, -0.3, 0.5)
    bad_offset = {'no_such_arm': np.zeros(3)}  # the solve refuses it (a ConfigError)
    for step in range(10):
        frame = make_frame(0.05 * step, points, frame='body')
        with pytest.raises(PicRosError):
            teleoperation.step(frame, hand_offsets=bad_offset)
    assert teleoperation.gestures == 1
