"""The robot side of head and hand imitation: head and gripper entries, models and limits."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
from pic_ros import resources
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.robot import load_robot
from pic_ros.robot.config import robot_spec_from_dict
from pic_ros.robot.kinematics.chain import KinematicChain
from pic_ros.robot.kinematics.robot_model import JointType
import pytest
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHIPPED = resources.shipped_robots()


def _data(robot: str) -> dict[str, Any]:
    text = (PROJECT_ROOT / 'pic_ros' / 'config' / f'{robot}.yaml').read_text(encoding='utf-8')
    data: dict[str, Any] = yaml.safe_load(text)
    return data


@pytest.mark.parametrize('robot', SHIPPED)
def test_every_group_of_a_shipped_robot_has_its_own_controller_and_joints(robot):
    """Arms, head and grippers: one controller each, no joint in two groups, neutral inside."""
    loaded = load_robot(robot)
    groups = loaded.groups
    controllers = [group.controller for group in groups.values()]
    assert len(set(controllers)) == len(controllers)
    joints = [name for group in groups.values() for name in group.joint_names]
    assert len(set(joints)) == len(joints)
    for group in groups.values():
        assert np.all(group.lower <= group.neutral) and np.all(group.neutral <= group.upper)
        assert np.all(group.velocity > 0.0) and np.all(np.isfinite(group.velocity))
        assert np.all(group.acceleration > 0.0) and np.all(group.jerk > 0.0)


@pytest.mark.parametrize('robot', SHIPPED)
def test_every_group_is_in_the_robots_controllers_file(robot):
    """The ros2_control file of each robot declares every group's controller with its joints."""
    loaded = load_robot(robot)
    path = PROJECT_ROOT / 'pic_ros' / 'config' / 'controllers' / f'{robot}_controllers.yaml'
    controllers = yaml.safe_load(path.read_text(encoding='utf-8'))
    declared = controllers['controller_manager']['ros__parameters']
    for group in loaded.groups.values():
        assert group.controller in declared, group.controller
        params = controllers[group.controller]['ros__parameters']
        assert params['joints'] == list(group.joint_names)


@pytest.mark.parametrize('robot', [name for name in SHIPPED if load_robot(name).head])
def test_head_directions_come_from_the_urdf_axes(robot):
    """
    A positive head target turns the head to the robot's left (yaw) or down (pitch).

    Checked by forward kinematics: a point 1 m in front of the head joints, moved by the target
    of +0.3 rad yaw, goes to +y of the base frame; by +0.3 rad pitch, to -z.
    """
    loaded = load_robot(robot)
    head = loaded.head
    assert head is not None
    last = head.joint_names[-1]
    tip = loaded.model.joints[last].child
    chain = KinematicChain.from_model(loaded.model, loaded.base_frame, tip)
    locked = dict(loaded.spec.locked_joints)

    def gaze(values: np.ndarray) -> np.ndarray:
        q = [locked.get(name, 0.0) for name in chain.joint_names]
        for name, value in zip(head.joint_names, values):
            q[chain.index(name)] = value
        transforms = chain.link_transforms(q)
        tip = transforms[chain.tip_link]
        origin = tip[:3, 3]
        start = chain.link_transforms([locked.get(n, 0.0) for n in chain.joint_names])
        # the direction that is "forward" (base +x) at the neutral pose, carried by the head
        forward_in_tip = start[chain.tip_link][:3, :3].T @ np.array([1.0, 0.0, 0.0])
        return origin + tip[:3, :3] @ forward_in_tip

    neutral = gaze(head.group.neutral)
    if head.yaw_sign:
        turned = gaze(head.targets(0.3, 0.0))
        assert turned[1] > neutral[1] + 0.1
        mirrored = gaze(head.targets(0.3, 0.0, mirror=True))
        assert mirrored[1] < neutral[1] - 0.1
    if head.pitch_sign:
        tilted = gaze(head.targets(0.0, 0.3))
        assert tilted[2] < neutral[2] - 0.1


@pytest.mark.parametrize('robot', [name for name in SHIPPED if load_robot(name).head])
def test_head_targets_never_leave_the_limits(robot):
    """Any head angle, however large, gives targets inside the joint limits."""
    head = load_robot(robot).head
    assert head is not None
    rng = np.random.default_rng(3)
    for yaw, pitch in rng.uniform(-4.0, 4.0, size=(200, 2)):
        for mirror in (False, True):
            q = head.targets(float(yaw), float(pitch), mirror=mirror)
            assert np.all(q >= head.group.lower) and np.all(q <= head.group.upper)


@pytest.mark.parametrize('robot', [name for name in SHIPPED if load_robot(name).grippers])
def test_gripper_positions_are_inside_the_limits_and_distinct(robot):
    """Open and closed are inside the limits and differ; the gripper ends an arm of the robot."""
    loaded = load_robot(robot)
    for arm, gripper in loaded.grippers.items():
        assert arm in loaded.arms
        for closed in (False, True):
            q = gripper.targets(closed)
            assert np.all(q >= gripper.group.lower) and np.all(q <= gripper.group.upper)
        assert not np.allclose(gripper.targets(True), gripper.targets(False))
        for name in gripper.joint_names:
            kind = loaded.model.joints[name].joint_type
            assert kind in (JointType.REVOLUTE, JointType.PRISMATIC)


def test_a_head_entry_is_validated_with_the_reason():
    """Missing joints, a shared joint, wrong neutral length and unknown keys are refused."""
    data = _data('tiago')
    cases = [
        ({'controller': 'h', 'neutral': []}, 'needs a yaw joint, a pitch joint or both'),
        ({'controller': 'h', 'yaw': 'head_1_joint', 'neutral': [0.0, 0.0]}, 'list of 1 numbers'),
        ({'controller': 'h', 'yaw': 'a', 'pitch': 'a', 'neutral': [0, 0]}, 'the same joint'),
        ({'controller': 'h', 'yaw': 'head_1_joint', 'neutral': [0.0], 'roll': 'x'},
         "unknown keys ['roll']"),
        ({'controller': 'arm_controller', 'yaw': 'head_1_joint', 'neutral': [0.0]},
         "controller 'arm_controller' twice"),
        ({'controller': 'h', 'yaw': 'arm_1_joint', 'neutral': [0.0]}, 'used elsewhere'),
    ]
    for head, message in cases:
        changed = copy.deepcopy(data)
        changed['head'] = head
        with pytest.raises(ConfigError, match=message.replace('[', r'\[').replace(']', r'\]')):
            robot_spec_from_dict(changed, 'tiago.yaml')


def test_a_gripper_entry_is_validated_with_the_reason():
    """A gripper on no arm, equal open and closed, or a wrong length is refused."""
    data = _data('yumi')
    base = data['grippers']['left']
    cases = [
        ('middle', base, "'middle' is not an arm"),
        ('left', base | {'closed': base['open']}, 'open and closed are the same'),
        ('left', base | {'open': [0.0, 0.0]}, 'list of 1 numbers'),
    ]
    for arm, entry, message in cases:
        changed = copy.deepcopy(data)
        changed['grippers'] = {arm: entry}
        with pytest.raises(ConfigError, match=message):
            robot_spec_from_dict(changed, 'yumi.yaml')


def test_a_head_joint_whose_axis_is_not_vertical_is_refused(tmp_path: Path):
    """Naming the tilt joint as the yaw joint is caught from the URDF, with the axis found."""
    data = _data('tiago')
    data['urdf'] = str(load_robot('tiago').urdf_file)
    data['head'] = {'controller': 'head_controller', 'yaw': 'head_2_joint', 'neutral': [0.0]}
    path = tmp_path / 'tiago_wrong_head.yaml'
    path.write_text(yaml.safe_dump(data), encoding='utf-8')
    with pytest.raises(ChainError, match='not along the base z axis'):
        load_robot(path)


def test_a_mimic_joint_cannot_be_a_gripper_joint(tmp_path: Path):
    """The joint a gripper lists is the actuated one; its mimic follows it."""
    data = _data('yumi')
    data['urdf'] = str(load_robot('yumi').urdf_file)
    data['grippers']['left']['joints'] = ['gripper_l_joint_m']
    path = tmp_path / 'yumi_mimic.yaml'
    path.write_text(yaml.safe_dump(data), encoding='utf-8')
    with pytest.raises(ChainError, match="mimics 'gripper_l_joint'"):
        load_robot(path)


def test_a_urdf_placeholder_velocity_is_replaced_by_the_robot_file():
    """Baxter's head pan says 10000 rad/s in the URDF; the robot file's 1 rad/s is used."""
    baxter = load_robot('baxter')
    assert baxter.model.joints['head_pan'].limits is not None
    assert baxter.model.joints['head_pan'].limits.velocity == pytest.approx(10000.0)
    assert baxter.groups['head'].velocity.tolist() == [1.0]
