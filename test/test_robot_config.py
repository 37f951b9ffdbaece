"""Robot description files (``config/*.yaml``), their validation, and where they are found."""

from __future__ import annotations

from collections.abc import Callable
import copy
import dataclasses
from pathlib import Path
import re
from typing import Any

import numpy as np
from pic_ros import resources
from pic_ros.correspondence import MappingConfig, MappingMode
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.imitation import RobotImitator
from pic_ros.robot import ArmModel, load_robot
from pic_ros.robot.arm import LANDMARK_LENGTH_SPREAD
from pic_ros.robot.config import (
    ACCELERATION_PER_VELOCITY,
    JERK_PER_ACCELERATION,
    robot_spec_from_dict,
)
from pic_ros.robot.kinematics import load_robot_model
from pic_ros.robot.mapping_defaults import MAPPING_MODES, MappingDefaults
from pic_ros.skeleton import Side
from pic_ros.solvers import SolverConfig
import pytest
import yaml

PROJECT_ROOT = Path(__file__).resolve().parents[1]
RUNTIME_ROOT = PROJECT_ROOT / 'pic_ros'
"""The run-time package's folder: its config/ and urdf/."""
SHIPPED = resources.shipped_robots()
SOURCE = 'baxter.yaml'


@pytest.fixture(scope='module')
def baxter_data() -> dict[str, Any]:
    """Load ``config/baxter.yaml`` as plain data (tests mutate deep copies of it)."""
    text = (RUNTIME_ROOT / 'config' / 'baxter.yaml').read_text(encoding='utf-8')
    return yaml.safe_load(text)


@pytest.fixture
def fresh_share_dir(monkeypatch: pytest.MonkeyPatch):
    """Clear ``share_dir``'s cache before and after the test, so overrides do not leak."""
    monkeypatch.delenv('PIC_ROS_SHARE', raising=False)
    resources.share_dir.cache_clear()
    yield
    monkeypatch.undo()
    resources.share_dir.cache_clear()


def _mutated(data: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Return a deep copy of ``data`` with ``change`` applied to it."""
    copied = copy.deepcopy(data)
    change(copied)
    return copied


def _write_robot(tmp_path: Path, data: dict[str, Any]) -> Path:
    """Write a robot file into ``tmp_path`` (its URDF is then found in the package's urdf/)."""
    path = tmp_path / 'robot.yaml'
    path.write_text(yaml.safe_dump(data), encoding='utf-8')
    return path


def test_the_three_robots_are_shipped():
    """Baxter, TIAGo and YuMi each have a robot file and a URDF."""
    assert {'baxter', 'tiago', 'yumi'} <= set(SHIPPED)
    assert list(SHIPPED) == sorted(SHIPPED)


@pytest.mark.parametrize('name', SHIPPED)
def test_shipped_robot_loads_and_builds_every_arm(name):
    """Every shipped robot file validates and builds each of its arms against its URDF."""
    robot = load_robot(name)
    assert robot.name == name
    assert robot.urdf_file.is_file()
    assert list(robot.arms) == list(robot.spec.arms)
    for arm_name, arm in robot.arms.items():
        spec = robot.spec.arms[arm_name]
        assert arm.chain.base_link == robot.base_frame
        assert arm.chain.tip_link == spec.tool_link
        assert arm.joint_names == spec.joints
        assert arm.dof == len(spec.joints) >= 4  # root, shoulder, roll and elbow at least
        assert [arm.chain.joint_names[i] for i in arm.active] == list(spec.joints)
    assert len({arm.side for arm in robot.arms.values()}) == len(robot.arms)


@pytest.mark.parametrize('name', SHIPPED)
def test_shipped_neutral_poses_are_inside_the_limits(name):
    """Each arm's neutral pose lies inside the URDF position limits of its joints."""
    for arm in load_robot(name).arms.values():
        assert np.all(arm.lower <= arm.neutral)
        assert np.all(arm.neutral <= arm.upper)
        assert arm.chain.within_limits(arm.full_q(arm.neutral), tolerance=0.0)


@pytest.mark.parametrize('name', SHIPPED)
def test_shipped_landmarks_are_in_chain_order(name):
    """Root < shoulder < elbow < wrist along the chain, and the root is the joint before."""
    for arm in load_robot(name).arms.values():
        assert arm.root_index + 1 == arm.shoulder_index
        assert arm.shoulder_index < arm.elbow_index < arm.wrist_index < arm.chain.dof
        names = arm.chain.joint_names
        assert names[arm.shoulder_index] == arm.spec.shoulder
        assert names[arm.elbow_index] == arm.spec.elbow
        assert names[arm.wrist_index] == arm.spec.wrist
        assert names[arm.root_index] in arm.joint_names


@pytest.mark.parametrize('name', SHIPPED)
def test_shipped_landmark_distances_are_configuration_independent(name, rng):
    """
    Root-shoulder-elbow-wrist-tool distances change by at most 10 % over the joint range.

    The bones (shoulder-elbow, elbow-wrist) are never 0; root and shoulder may share their
    origin (NAO's shoulder pitch and roll), and then always do.
    """
    for arm in load_robot(name).arms.values():
        samples = [arm.neutral, arm.lower, arm.upper]
        samples += [rng.uniform(arm.lower, arm.upper) for _ in range(300)]
        table = np.array([np.linalg.norm(np.diff(arm.landmarks(q), axis=0), axis=1)
                          for q in samples])
        assert np.all(table[:, 1:3].min(axis=0) > 0.0), f'{name} {arm.name}: a bone is 0 long'
        mean = table.mean(axis=0)
        spread = (table.max(axis=0) - table.min(axis=0)) / np.where(mean > 0.0, mean, 1.0)
        assert np.all(spread <= LANDMARK_LENGTH_SPREAD), f'{name} {arm.name}: spread {spread}'


@pytest.mark.parametrize('name', SHIPPED)
def test_shipped_landmark_tuples_match_the_landmark_array(name, rng):
    """The solvers' plain-float landmarks equal the numpy landmarks."""
    for arm in load_robot(name).arms.values():
        q = rng.uniform(arm.lower, arm.upper)
        np.testing.assert_allclose(arm.landmark_tuples(q)[0], arm.landmarks(q), atol=1e-12)


def test_shipped_mapping_defaults_are_same_side_direction():
    """The shipped robot files map same side, with the direction correspondence."""
    for name in SHIPPED:
        mapping = MappingConfig.from_robot(load_robot(name).spec.mapping)
        assert mapping.mode is MappingMode.SAME_SIDE
        assert mapping.correspondence == 'direction'
        assert mapping.scale is None


def test_the_robot_file_mapping_modes_are_the_mapping_modes():
    """The robot layer's mode names are the correspondence layer's, default first."""
    assert MAPPING_MODES == tuple(mode.value for mode in MappingMode)
    assert MappingMode(MappingDefaults().mode) is MappingConfig().mode


def test_an_unregistered_correspondence_of_a_robot_file_is_refused_by_name(baxter_data):
    """The file's correspondence is checked against the registry when its config is built."""
    data = _mutated(baxter_data, _set(('mapping', 'correspondence'), 'elastic'))
    mapping = robot_spec_from_dict(data, source=SOURCE).mapping
    with pytest.raises(
        ConfigError, match=re.escape("baxter.yaml: mapping.correspondence must be one of 'dir")
    ):
        MappingConfig.from_robot(mapping)


def test_a_robot_file_mapping_becomes_the_same_config_as_the_parameters(baxter_data):
    """mode, correspondence and scale of the file are the config's; no correspondence: default."""
    data = _mutated(baxter_data, _set(('mapping',), {'mode': 'mirror', 'scale': 2}))
    mapping = MappingConfig.from_robot(robot_spec_from_dict(data, source=SOURCE).mapping)
    assert mapping == MappingConfig.from_parameters({'mapping': 'mirror', 'scale': 2.0})


def test_tiago_locks_the_torso_on_its_arm_chain():
    """The TIAGo torso lift is on the arm chain, held at its configured height, not in the arm."""
    arm = load_robot('tiago').arms['arm']
    assert 'torso_lift_joint' in arm.chain.joint_names
    assert 'torso_lift_joint' not in arm.joint_names
    assert dict(arm.locked) == {'torso_lift_joint': 0.15}
    full = arm.full_q(arm.neutral)
    assert full[arm.chain.index('torso_lift_joint')] == 0.15
    assert arm.side is Side.RIGHT


def test_valid_baxter_data_builds_a_spec(baxter_data):
    """The unmodified Baxter file validates (the base every rejection test mutates)."""
    spec = robot_spec_from_dict(baxter_data, source=SOURCE)
    assert spec.name == 'baxter'
    assert spec.source == SOURCE
    assert list(spec.arms) == ['left', 'right']
    assert spec.arms['left'].side is Side.LEFT
    assert spec.arms['left'].shoulder == 'left_s1'


def _delete(path: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    """Return a change that deletes the key at ``path``."""
    def change(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return change


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    """Return a change that sets the key at ``path`` to ``value``."""
    def change(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


def _swap_shoulder_and_elbow(data: dict[str, Any]) -> None:
    """Swap the shoulder and elbow landmarks of the left arm."""
    landmarks = data['arms']['left']['landmarks']
    landmarks['shoulder'], landmarks['elbow'] = landmarks['elbow'], landmarks['shoulder']


REJECTIONS = [
    (
        'acceleration limits of the wrong length',
        _set(('arms', 'left', 'acceleration_limits'), [4.5, 4.5]),
        'baxter.yaml: arms.left.acceleration_limits must be a list of 7 numbers, got [4.5, 4.5]',
    ),
    (
        'jerk limit not positive', _set(('arms', 'left', 'jerk_limits'), [90.0] * 6 + [0.0]),
        'baxter.yaml: arms.left.jerk_limits must be finite numbers > 0, got '
        '[90.0, 90.0, 90.0, 90.0, 90.0, 90.0, 0.0]',
    ),
    ('missing name', _delete(('name',)), "baxter.yaml: missing key 'name'"),
    ('missing base_frame', _delete(('base_frame',)), "baxter.yaml: missing key 'base_frame'"),
    ('missing arms', _delete(('arms',)), "baxter.yaml: missing key 'arms'"),
    (
        'unknown key', _set(('colour',), 'red'),
        "baxter.yaml: unknown keys ['colour']; known: ['arms', 'base_frame', 'collision', "
        "'force_torque_sensors', 'grippers', 'head', 'locked_joints', 'mapping', "
        "'mobile_base', 'name', 'torso', 'urdf', 'workspace']",
    ),
    ('empty name', _set(('name',), ''), 'baxter.yaml: name must be a non-empty string'),
    (
        'no arms', _set(('arms',), {}),
        'baxter.yaml: arms must be a non-empty mapping of arm name to arm',
    ),
    (
        'arm missing key', _delete(('arms', 'left', 'tool_link')),
        "baxter.yaml: arms.left: missing key 'tool_link'",
    ),
    (
        'arm unknown key', _set(('arms', 'left', 'gripper'), 'none'),
        "baxter.yaml: arms.left: unknown keys ['gripper']; known: "
        "['acceleration_limits', 'controller', 'jerk_limits', 'joints', 'landmarks', 'neutral', "
        "'side', 'tool_link']",
    ),
    (
        'bad side', _set(('arms', 'left', 'side'), 'middle'),
        "baxter.yaml: arms.left.side must be one of 'left', 'right', got 'middle'",
    ),
    (
        'joint listed twice', _set(('arms', 'left', 'joints'), ['left_s0'] * 7),
        "baxter.yaml: arms.left.joints lists a joint twice: ['left_s0'",
    ),
    (
        'landmark missing', _delete(('arms', 'left', 'landmarks', 'wrist')),
        "baxter.yaml: arms.left.landmarks must map exactly ('shoulder', 'elbow', 'wrist') to "
        'joint names',
    ),
    (
        'landmark not an arm joint', _set(('arms', 'left', 'landmarks', 'elbow'), 'right_e1'),
        "baxter.yaml: arms.left.landmarks.elbow = 'right_e1' is not one of the arm joints",
    ),
    (
        'landmarks out of order', _swap_shoulder_and_elbow,
        'baxter.yaml: arms.left.landmarks must be in chain order shoulder < elbow < wrist',
    ),
    (
        'neutral too short', _set(('arms', 'left', 'neutral'), [0.0] * 6),
        'baxter.yaml: arms.left.neutral must be a list of 7 numbers, got [0.0, 0.0, 0.0, 0.0, '
        '0.0, 0.0]',
    ),
    (
        'neutral not numbers', _set(('arms', 'left', 'neutral'), [0.0] * 6 + ['up']),
        'baxter.yaml: arms.left.neutral must be a list of 7 numbers',
    ),
    (
        'neutral with a bool', _set(('arms', 'left', 'neutral'), [0.0] * 6 + [True]),
        'baxter.yaml: arms.left.neutral must be a list of 7 numbers',
    ),
    (
        'empty controller', _set(('arms', 'left', 'controller'), ''),
        'baxter.yaml: arms.left.controller must be a non-empty string',
    ),
    (
        'two arms on one side', _set(('arms', 'right', 'side'), 'left'),
        'baxter.yaml: two arms are on the same side',
    ),
    (
        'locked arm joint', _set(('locked_joints',), {'left_s0': 0.0}),
        "baxter.yaml: locked joints ['left_s0'] are also arm joints",
    ),
    (
        'locked joint not a number', _set(('locked_joints',), {'head_pan': 'still'}),
        'baxter.yaml: locked_joints must map joint names to numbers',
    ),
    (
        'mapping not a mapping', _set(('mapping',), ['mirror']),
        'baxter.yaml: mapping must be a mapping',
    ),
    (
        'bad mapping mode', _set(('mapping', 'mode'), 'opposite'),
        "baxter.yaml: mapping.mode must be one of 'same_side', 'mirror', got 'opposite'",
    ),
    (
        'scale out of range', _set(('mapping', 'scale'), 0),
        'baxter.yaml: mapping.scale must be in [0.05, 20.0], got 0',
    ),
    (
        'scale not a number', _set(('mapping', 'scale'), 'big'),
        "baxter.yaml: mapping.scale must be 'auto' or a number, got 'big'",
    ),
    (
        'unknown mapping key', _set(('mapping', 'offset'), 0.1),
        "baxter.yaml: mapping: unknown keys ['offset']; known: correspondence, mode, scale, "
        'user_profile',
    ),
]


@pytest.mark.parametrize(
    'change, message', [(c, m) for _, c, m in REJECTIONS], ids=[r[0] for r in REJECTIONS]
)
def test_robot_spec_from_dict_rejects_bad_input_with_the_reason(baxter_data, change, message):
    """Each kind of bad robot file is rejected with a message that names the key and reason."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        robot_spec_from_dict(_mutated(baxter_data, change), source=SOURCE)


def test_arms_without_acceleration_or_jerk_limits_get_the_documented_rules(baxter_data, tmp_path):
    """No acceleration_limits: 3 /s x velocity; no jerk_limits: 100 /s x acceleration."""
    def change(data: dict[str, Any]) -> None:
        for arm in data['arms'].values():
            del arm['acceleration_limits'], arm['jerk_limits']

    arm = load_robot(_write_robot(tmp_path, _mutated(baxter_data, change))).arms['left']
    np.testing.assert_allclose(arm.acceleration, ACCELERATION_PER_VELOCITY * arm.velocity)
    np.testing.assert_allclose(arm.jerk, JERK_PER_ACCELERATION * arm.acceleration)


@pytest.mark.parametrize('name', ['baxter', 'yumi', 'tiago'])
def test_shipped_acceleration_and_jerk_limits_follow_the_stated_rule(name):
    """The shipped files write the rule out (no robot publishes these limits)."""
    for arm in load_robot(name).arms.values():
        np.testing.assert_allclose(
            arm.acceleration, ACCELERATION_PER_VELOCITY * arm.velocity, rtol=1e-3
        )
        np.testing.assert_allclose(arm.jerk, JERK_PER_ACCELERATION * arm.acceleration, rtol=1e-3)


def test_robot_file_that_is_not_a_mapping_is_rejected():
    """A YAML list (or an empty file) is not a robot file."""
    for data in (['baxter'], None):
        with pytest.raises(
            ConfigError, match=re.escape('baxter.yaml: a robot file must be a mapping')
        ):
            robot_spec_from_dict(data, source=SOURCE)


def test_two_arms_sharing_a_joint_are_rejected(baxter_data):
    """Two arms that list the same joint are rejected."""
    def change(data: dict[str, Any]) -> None:
        data['arms']['right']['joints'][0] = 'left_s0'
    with pytest.raises(ConfigError, match=re.escape('baxter.yaml: two arms share a joint')):
        robot_spec_from_dict(_mutated(baxter_data, change), source=SOURCE)


def test_neutral_outside_the_limits_is_rejected_when_the_arm_is_built(baxter_data, tmp_path):
    """A neutral value outside the URDF limits is rejected, naming the joint."""
    data = _mutated(baxter_data, _set(('arms', 'left', 'neutral'), [0, 3.5, 0, 1, 0, 0, 0]))
    robot_spec_from_dict(data, source=SOURCE)  # The file alone cannot know the URDF limits.
    with pytest.raises(
        ChainError, match=re.escape("arm 'left': neutral pose outside the limits for ['left_s1']")
    ):
        load_robot(_write_robot(tmp_path, data))


def test_joint_not_on_the_chain_is_rejected_when_the_arm_is_built(baxter_data, tmp_path):
    """An arm joint that is not on the base -> tool chain is rejected, naming both sides."""
    def change(data: dict[str, Any]) -> None:
        data['arms']['left']['joints'][-1] = 'head_pan'
        data['arms']['left']['landmarks']['wrist'] = 'left_w1'
        del data['head']  # head_pan is the head's joint in the shipped file
    data = _mutated(baxter_data, change)
    with pytest.raises(
        ChainError,
        match=re.escape("not in the arm or locked: ['left_w2']; listed but not on the chain: "
                        "['head_pan']"),
    ):
        load_robot(_write_robot(tmp_path, data))


def test_joints_listed_out_of_chain_order_are_rejected(baxter_data, tmp_path):
    """Arm joints must be listed base to tip."""
    def change(data: dict[str, Any]) -> None:
        joints = data['arms']['left']['joints']
        joints[-1], joints[-2] = joints[-2], joints[-1]
    with pytest.raises(ChainError, match=re.escape("arm 'left': joints must be listed base to")):
        load_robot(_write_robot(tmp_path, _mutated(baxter_data, change)))


def test_shoulder_landmark_needs_a_root_joint_before_it(baxter_data, tmp_path):
    """A shoulder landmark on the first arm joint leaves no root joint and is rejected."""
    data = _mutated(baxter_data, _set(('arms', 'left', 'landmarks', 'shoulder'), 'left_s0'))
    with pytest.raises(ChainError, match=re.escape("the shoulder landmark 'left_s0' needs")):
        load_robot(_write_robot(tmp_path, data))


def test_locked_joint_outside_its_limits_is_rejected(tmp_path):
    """A locked joint value outside the URDF limits is rejected (TIAGo's torso at 1 m)."""
    data = yaml.safe_load((RUNTIME_ROOT / 'config' / 'tiago.yaml').read_text(encoding='utf-8'))
    data.pop('torso')
    data['locked_joints'] = {'torso_lift_joint': 1.0}
    with pytest.raises(
        ChainError, match=re.escape("locked joint 'torso_lift_joint' = 1.0 is outside its limits")
    ):
        load_robot(_write_robot(tmp_path, data))


def test_non_rigid_landmarks_are_rejected():
    """Landmarks whose distances vary with the configuration fail the rigidity check."""
    model = load_robot_model(resources.urdf_path('baxter'))
    spec = load_robot('baxter').spec.arms['left']
    # The elbow pitch e1 lies between e0 and w0, so the e0 -> w0 "forearm" bends with it.
    bad = dataclasses.replace(spec, elbow='left_e0', wrist='left_w0')
    with pytest.raises(
        ChainError,
        match=r"arm 'left': the elbow-wrist distance varies by \d+ % over the joint range",
    ):
        ArmModel.build(model, 'base', bad, {})


def test_load_robot_of_an_unknown_name_says_where_it_looked():
    """An unknown robot name is rejected with the path that was searched."""
    expected = resources.share_dir() / 'config' / 'r2d2.yaml'
    with pytest.raises(
        ConfigError, match=re.escape(f"no robot file for 'r2d2' (looked for {expected})")
    ):
        load_robot('r2d2')


def test_load_robot_of_an_unreadable_file_names_it(tmp_path):
    """A robot file that is not valid YAML is rejected with its path."""
    path = tmp_path / 'broken.yaml'
    path.write_text('name: [unclosed\n', encoding='utf-8')
    with pytest.raises(ConfigError, match=re.escape(f'cannot read robot file {path}')):
        load_robot(path)


def test_share_dir_finds_the_source_tree(fresh_share_dir):
    """Without an override, the share directory is the source checkout."""
    assert resources.share_dir() == RUNTIME_ROOT
    assert resources.config_path('baxter') == RUNTIME_ROOT / 'config' / 'baxter.yaml'
    assert resources.config_path('baxter.yaml') == RUNTIME_ROOT / 'config' / 'baxter.yaml'
    assert resources.urdf_path('yumi') == RUNTIME_ROOT / 'urdf' / 'yumi.urdf'


def test_pic_ros_share_overrides_the_share_dir(fresh_share_dir, monkeypatch, tmp_path):
    """``PIC_ROS_SHARE`` wins when it holds config/ and urdf/; shipped robots follow it."""
    (tmp_path / 'config').mkdir()
    (tmp_path / 'urdf').mkdir()
    (tmp_path / 'config' / 'robby.yaml').write_text('name: robby\n', encoding='utf-8')
    (tmp_path / 'urdf' / 'robby.urdf').write_text('<robot name="robby"/>\n', encoding='utf-8')
    (tmp_path / 'config' / 'lonely.yaml').write_text('name: lonely\n', encoding='utf-8')
    monkeypatch.setenv('PIC_ROS_SHARE', str(tmp_path))
    resources.share_dir.cache_clear()
    assert resources.share_dir() == tmp_path
    assert resources.config_path('robby') == tmp_path / 'config' / 'robby.yaml'
    assert resources.shipped_robots() == ('robby',)


def test_pic_ros_share_without_the_folders_is_skipped(fresh_share_dir, monkeypatch, tmp_path):
    """An override that lacks config/ or urdf/ falls through to the next candidate."""
    (tmp_path / 'config').mkdir()
    monkeypatch.setenv('PIC_ROS_SHARE', str(tmp_path))
    resources.share_dir.cache_clear()
    assert resources.share_dir() == RUNTIME_ROOT


def test_missing_share_dir_lists_every_place_looked(fresh_share_dir, monkeypatch, tmp_path):
    """When no candidate holds config/ and urdf/, the error lists every candidate."""
    places = [tmp_path / 'first', tmp_path / 'second']
    monkeypatch.setattr(resources, '_candidates', lambda: places)
    looked = f'looked in {places[0]}, {places[1]}'
    with pytest.raises(ConfigError, match=re.escape(looked)):
        resources.share_dir()


def test_a_process_that_imitates_refuses_a_bad_robot_file_mapping_even_with_its_own(baxter_data):
    """The nodes pass their own mapping; the robot file's is still checked when they start."""
    data = _mutated(baxter_data, _set(('mapping', 'correspondence'), 'elastic'))
    robot = load_robot('baxter')
    robot = dataclasses.replace(robot, spec=dataclasses.replace(
        robot.spec, mapping=robot_spec_from_dict(data, source=SOURCE).mapping
    ))
    with pytest.raises(ConfigError, match='mapping.correspondence must be one of'):
        RobotImitator(robot, SolverConfig(), mapping=MappingConfig())
