"""Whole-body imitation: the torso group, hand offsets, the prioritized IK and the torso target."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from human_poses import BODY, body
import numpy as np
from pic_ros.correspondence import MappingConfig
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.imitation import RobotImitator
from pic_ros.resources import config_path
from pic_ros.robot import load_robot
from pic_ros.robot.config import robot_spec_from_dict
from pic_ros.solvers import SolverConfig
import pytest
import yaml


@pytest.fixture(scope='module')
def tiago():
    """Load TIAGo once."""
    return load_robot('tiago')


def _tiago_data() -> dict[str, Any]:
    return yaml.safe_load(config_path('tiago').read_text(encoding='utf-8'))


def test_tiago_torso_is_a_commanded_group_held_at_its_neutral(tiago):
    """The torso is the group ``torso`` on torso_controller; the arm solvers assume its neutral."""
    torso = tiago.groups['torso']
    assert torso.joint_names == ('torso_lift_joint',)
    assert torso.controller == 'torso_controller'
    assert torso.neutral.tolist() == [0.15]
    assert tiago.torso is not None and tiago.torso.velocity == pytest.approx(0.07)
    assert dict(tiago.arms['arm'].locked) == {'torso_lift_joint': 0.15}
    assert 'torso_lift_joint' not in tiago.spec.locked_joints
    assert np.allclose(tiago.torso.axis, (0.0, 0.0, 1.0))


@pytest.mark.parametrize(
    ('change', 'message'),
    [
        (lambda torso: torso.pop('controller'), "missing key 'controller'"),
        (lambda torso: torso.update(neutral='high'), 'neutral must be a number'),
        (lambda torso: torso.update(arms=['left']), 'are not arms'),
        (lambda torso: torso.update(speed=1.0), 'unknown keys'),
        (lambda torso: torso.update(controller='arm_controller'), 'controller'),
        (lambda torso: torso.update(velocity_limits=[0.0]), 'velocity_limits'),
    ],
)
def test_torso_section_is_validated_with_the_reason(change, message):
    """A wrong ``torso`` entry is refused, naming the key."""
    data = _tiago_data()
    change(data['torso'])
    with pytest.raises(ConfigError, match=message):
        robot_spec_from_dict(data, source='tiago.yaml')


def test_torso_joint_must_be_prismatic_and_on_the_arm_chain(tmp_path: Path):
    """A torso joint that is not a prismatic joint on the served arm's chain is refused."""
    for joint in ('head_1_joint', 'arm_1_joint'):
        data = copy.deepcopy(_tiago_data())
        data['urdf'] = str(config_path('tiago').parent.parent / 'urdf' / 'tiago.urdf')
        data['torso']['joint'] = joint
        if joint == 'head_1_joint':
            data.pop('head')
        path = tmp_path / f'{joint}.yaml'
        path.write_text(yaml.safe_dump(data), encoding='utf-8')
        with pytest.raises((ChainError, ConfigError)):
            load_robot(path)


def _imitator(robot: Any, correspondence: str = 'direction', **kwargs: Any) -> RobotImitator:
    return RobotImitator(
        robot, SolverConfig(name='pic'), MappingConfig(correspondence=correspondence), **kwargs
    )


def test_hand_offset_shifts_a_position_wrist_target_only(tiago):
    """A hand offset moves the position correspondence's wrist target by exactly the offset."""
    frame = body(BODY)
    plain = _imitator(tiago, 'position').step(frame).arms['arm'].targets
    offset = np.array([0.03, -0.02, 0.05])
    moved = _imitator(tiago, 'position').step(frame, {'arm': offset}).arms['arm'].targets
    assert np.allclose(moved.wrist - plain.wrist, offset)
    assert np.allclose(moved.elbow, plain.elbow)
    assert np.allclose(moved.shoulder, plain.shoulder)


def test_hand_offset_is_refused_where_it_cannot_be_honoured(tiago):
    """Shape-only targets have no wrist place: a non-zero offset is refused, a zero one is not."""
    imitator = _imitator(tiago, 'direction')
    frame = body(BODY)
    assert 'arm' in imitator.step(frame, {'arm': np.zeros(3)}).arms
    with pytest.raises(ConfigError, match='wrist place'):
        imitator.step(frame, {'arm': np.array([0.0, 0.0, 0.01])})
    with pytest.raises(ConfigError, match='not an arm'):
        imitator.step(frame, {'left': np.zeros(3)})
    with pytest.raises(ConfigError, match='3-vector'):
        imitator.step(frame, {'arm': np.array([np.nan, 0.0, 0.0])})
