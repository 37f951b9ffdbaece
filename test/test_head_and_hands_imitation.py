"""Head and hand imitation in the core: labelled people in, head and gripper targets out."""

from __future__ import annotations

import dataclasses

import numpy as np
from pic_ros.correspondence import MappingConfig, MappingMode
from pic_ros.exceptions import SkeletonError
from pic_ros.head_and_hands import HeadAndHandsConfig, HeadAndHandsImitator
from pic_ros.human.hands import HandState
from pic_ros.human.processing import SkeletonProcessor
from pic_ros.robot import load_robot
from pic_ros.skeleton import FACE_JOINTS, make_frame, Side
from pic_ros_tools.head_hands_report import recording_rows, robot_rows
from pic_ros_tools.synthetic.head_hands_take import generate_head_hands_take
from pic_ros_tools.synthetic.suite import SUITE_SEED, suite_specs
import pytest

ROBOTS_WITH_BOTH = ('tiago', 'nao')


def joint_targets(step, robot):
    """Return a step's targets as ``(names, positions)`` [rad] or [m], head, then grippers."""
    names, positions = [], []
    if step.head is not None and robot.head is not None:
        names += robot.head.joint_names
        positions += step.head.tolist()
    for arm, values in step.grippers.items():
        names += robot.grippers[arm].joint_names
        positions += values.tolist()
    return names, positions


@pytest.fixture(scope='module')
def takes():
    """Return two short labelled takes of different suite people."""
    return [generate_head_hands_take(spec, duration=12.0) for spec in suite_specs(2, SUITE_SEED)]


def body_frames(take):
    """Return the take's skeletons through the live processing (body frame), those accepted."""
    processor = SkeletonProcessor()
    frames = []
    for frame in take.frames:
        try:
            frames.append(processor.process(frame))
        except SkeletonError:
            continue
    return frames


def without_face(frame):
    """Return a frame whose face rows are invalid (what Kinect v2 gives)."""
    positions = frame.positions.copy()
    positions[list(FACE_JOINTS)] = np.nan
    return make_frame(frame.stamp, positions, frame=frame.frame)


@pytest.mark.parametrize('robot', ROBOTS_WITH_BOTH)
def test_head_and_gripper_targets_stay_inside_the_limits_and_are_open_or_closed(takes, robot):
    """Every head target is inside the limits; every gripper target is its open or closed pose."""
    loaded = load_robot(robot)
    imitator = HeadAndHandsImitator(loaded)
    assert imitator.active
    heads = 0
    for frame in body_frames(takes[0]):
        step = imitator.step(frame)
        if step.head is not None:
            heads += 1
            group = loaded.head.group
            assert np.all(step.head >= group.lower) and np.all(step.head <= group.upper)
        for arm, target in step.grippers.items():
            gripper = loaded.grippers[arm]
            assert any(np.array_equal(target, gripper.targets(closed)) for closed in (False, True))
        names, positions = joint_targets(step, loaded)
        assert len(names) == len(positions) == len(set(names))
    assert heads > 0


def test_same_input_gives_the_same_targets(takes):
    """Two imitators fed the same frames give identical steps."""
    robot = load_robot('nao')
    frames = body_frames(takes[1])
    runs = []
    for _ in range(2):
        imitator = HeadAndHandsImitator(robot)
        runs.append([joint_targets(imitator.step(frame), robot) for frame in frames])
    assert runs[0] == runs[1]


def test_mirror_mapping_swaps_the_hands_and_the_head_yaw(takes):
    """Face to face, the robot's left gripper follows the person's right hand; yaw turns over."""
    robot = load_robot('nao')
    frames = body_frames(takes[0])
    same = HeadAndHandsImitator(robot)
    mirror = HeadAndHandsImitator(robot, mapping=MappingConfig(mode=MappingMode.MIRROR))
    compared = 0
    for frame in frames:
        plain, swapped = same.step(frame), mirror.step(frame)
        right = plain.hands[Side.RIGHT].state
        if right is not HandState.UNKNOWN:
            assert np.array_equal(
                swapped.grippers['left'], robot.grippers['left'].targets(right is HandState.CLOSED)
            )
            compared += 1
        if plain.head is not None:
            assert plain.head_angles is not None
            yaw = plain.head_angles.yaw
            assert swapped.head is not None
            limited = robot.head.targets(-yaw, plain.head_angles.pitch)
            np.testing.assert_allclose(swapped.head, limited, atol=1e-12)
    assert compared > 0


def test_a_tracker_without_face_points_leaves_the_head_alone(takes):
    """Without nose and ears (Kinect v2) no head target is made; the grippers still are."""
    robot = load_robot('tiago')
    imitator = HeadAndHandsImitator(robot)
    grippers = 0
    for frame in body_frames(takes[0]):
        step = imitator.step(without_face(frame))
        assert step.head is None and step.head_angles is None
        names, _ = joint_targets(step, robot)
        assert not set(names) & set(robot.head.joint_names)
        grippers += bool(step.grippers)
    assert grippers > 0


def test_switches_turn_the_head_and_the_grippers_off(takes):
    """imitate_head and imitate_hands false: no target at all."""
    robot = load_robot('nao')
    config = HeadAndHandsConfig(imitate_head=False, imitate_hands=False)
    imitator = HeadAndHandsImitator(robot, config)
    assert not imitator.active
    for frame in body_frames(takes[0])[:100]:
        assert joint_targets(imitator.step(frame), robot) == ([], [])


def test_no_gripper_target_before_the_hand_state_is_known(takes):
    """The first frames, before a state has been held for the dwell, leave the grippers alone."""
    robot = load_robot('yumi')
    imitator = HeadAndHandsImitator(robot)
    first = imitator.step(body_frames(takes[0])[0])
    assert first.grippers == {}
    assert all(estimate.state is HandState.UNKNOWN for estimate in first.hands.values())


def test_robot_rows_score_grippers_against_the_annotation(takes):
    """On labelled people the grippers match the annotated hands; the head error is small."""
    rows = {row.robot: row for row in robot_rows([load_robot('tiago')], takes)}
    row = rows['tiago']
    assert row.gripper_agreement > 90.0
    assert row.head_median < 5.0
    assert row.head_within > 90.0


def test_recording_rows_count_the_hand_changes(takes):
    """The unlabelled report counts a take's hand changes like the estimator does."""
    take = takes[0]
    demonstration = dataclasses.make_dataclass('Take', ['name', 'frames'])(take.name, take.frames)
    (row,) = recording_rows([demonstration])
    assert row.frames > 0 and row.head_seen > 90.0
    annotated = [len(times) / take.duration for times in take.hand_changes]
    for measured, expected in zip(row.changes_per_second, annotated):
        assert measured == pytest.approx(expected, abs=0.35)
