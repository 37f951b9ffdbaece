"""The Gazebo robot description: ros2_control and gz plugin tags added to the plain URDFs."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

from pic_ros.exceptions import ConfigError
from pic_ros.robot import load_robot
from pic_ros.robot.gazebo import (
    base_height,
    control_joints,
    controller_names,
    gazebo_names,
    gazebo_robot_description,
    NAMES_BY_DISTRO,
    read_controllers,
)
from pic_ros.robot.kinematics.robot_model import JointType
import pytest
from urdf_parser_py import urdf as urdf_model
from urdf_parser_py.xml_reflection import core as xml_core
import yaml

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = ('baxter', 'yumi', 'tiago')
DISTROS = ('humble', 'jazzy', 'kilted', 'rolling')
CONTROLLERS = ROOT / 'pic_ros' / 'config' / 'controllers'


def _controllers_file(robot: str) -> Path:
    """Return the shipped controllers YAML of ``robot``."""
    return CONTROLLERS / f'{robot}_controllers.yaml'


def _description(robot: str, distro: str = 'jazzy', **options: bool) -> str:
    """Build the Gazebo description of ``robot`` with its shipped controllers file."""
    return gazebo_robot_description(robot, _controllers_file(robot), distro=distro, **options)


def _ros2_control_joints(root: ElementTree.Element) -> dict[str, ElementTree.Element]:
    """Return the ``<joint>`` elements of the single ``<ros2_control>`` block, by name."""
    blocks = root.findall('ros2_control')
    assert len(blocks) == 1
    return {joint.get('name'): joint for joint in blocks[0].findall('joint')}


def _params(element: ElementTree.Element) -> dict[str, float]:
    """Return the numeric ``<param>`` children of an interface element."""
    return {param.get('name'): float(param.text) for param in element.findall('param')}


def _controller_joints(robot: str, wheels: bool = False) -> dict[str, list[str]]:
    """Return the joints of every trajectory controller (and the wheels of a base controller)."""
    data = yaml.safe_load(_controllers_file(robot).read_text(encoding='utf-8'))
    joints = {}
    for name in controller_names(_controllers_file(robot)):
        parameters = data.get(name, {}).get('ros__parameters', {})
        if 'joints' in parameters:
            joints[name] = parameters['joints']
        elif wheels and 'left_wheel_names' in parameters:
            joints[name] = parameters['left_wheel_names'] + parameters['right_wheel_names']
    return joints


def _urdf_limits(robot: str) -> dict[str, tuple[float | None, float | None]]:
    """Return (lower, upper) of every joint of the plain URDF, read with urdf-parser-py."""
    path = load_robot(robot).urdf_file
    parsed = urdf_model.URDF.from_xml_string(path.read_text(encoding='utf-8'))
    return {
        joint.name: (
            (joint.limit.lower, joint.limit.upper) if joint.limit is not None else (None, None)
        )
        for joint in parsed.joints
    }


@pytest.mark.parametrize('distro', DISTROS)
@pytest.mark.parametrize('robot', ROBOTS)
def test_description_is_xml_with_the_distro_plugins(robot, distro):
    """The result parses; hardware and system plugin names are those of the distro."""
    root = ElementTree.fromstring(_description(robot, distro))
    names = gazebo_names(distro)
    block = root.find('ros2_control')
    assert block is not None
    assert block.get('type') == 'system'
    assert block.findtext('hardware/plugin') == names.hardware_plugin
    plugins = root.findall('gazebo/plugin')
    assert (plugins[0].get('filename'), plugins[0].get('name')) == (
        names.system_filename, names.system_name
    )
    assert plugins[0].findtext('parameters') == str(_controllers_file(robot))
    others = {(p.get('filename'), p.get('name')) for p in plugins[1:]}
    sensors = load_robot(robot).spec.force_torque_sensors
    force_torque = {(names.force_torque_filename, names.force_torque_name)}
    assert others == (force_torque if sensors else set())


def test_distro_names_follow_gz_ros2_control():
    """Humble uses ign_ros2_control (Fortress); Jazzy and later gz_ros2_control (Harmonic)."""
    assert gazebo_names('humble').hardware_plugin == 'ign_ros2_control/IgnitionSystem'
    assert gazebo_names('humble').system_name == 'ign_ros2_control::IgnitionROS2ControlPlugin'
    assert gazebo_names('humble').clock_message == 'ignition.msgs.Clock'
    for distro in ('jazzy', 'kilted', 'rolling', 'Jazzy '):
        names = gazebo_names(distro)
        assert names.hardware_plugin == 'gz_ros2_control/GazeboSimSystem'
        assert names.system_filename == 'gz_ros2_control-system'
        assert names.system_name == 'gz_ros2_control::GazeboSimROS2ControlPlugin'
        assert names.clock_message == 'gz.msgs.Clock'


def test_unknown_distro_is_refused_with_the_choices():
    """An unsupported distro raises ConfigError naming the supported ones."""
    with pytest.raises(ConfigError, match='distro') as caught:
        gazebo_names('foxy')
    for distro in NAMES_BY_DISTRO:
        assert distro in str(caught.value)


@pytest.mark.parametrize('robot', ROBOTS)
def test_every_controller_joint_has_urdf_limits_and_interfaces(robot):
    """Each controller joint: position command with min/max = URDF limits; position+velocity."""
    joints = _ros2_control_joints(ElementTree.fromstring(_description(robot)))
    limits = _urdf_limits(robot)
    controlled = [name for names in _controller_joints(robot).values() for name in names]
    assert controlled
    for name in controlled:
        element = joints[name]
        commands = element.findall('command_interface')
        assert [c.get('name') for c in commands] == ['position']
        assert _params(commands[0]) == {'min': limits[name][0], 'max': limits[name][1]}
        states = [s.get('name') for s in element.findall('state_interface')]
        assert states == ['position', 'velocity']


@pytest.mark.parametrize('robot', ROBOTS)
def test_initial_positions_are_the_neutral_pose_and_locked_values(robot):
    """Arm joints start at the neutral pose of the robot file, locked joints at their value."""
    loaded = load_robot(robot)
    joints = _ros2_control_joints(ElementTree.fromstring(_description(robot)))

    def initial(name: str) -> float:
        return _params(joints[name].find('state_interface'))['initial_value']

    for arm in loaded.arms.values():
        assert [initial(name) for name in arm.joint_names] == pytest.approx(
            list(arm.neutral), abs=0.0
        )
    for name, value in loaded.spec.locked_joints.items():
        assert initial(name) == value


def test_tiago_torso_is_controlled_and_starts_at_its_locked_height():
    """The TIAGo torso lift is in ros2_control at 0.15 m, with a controller of its own."""
    joints = _ros2_control_joints(ElementTree.fromstring(_description('tiago')))
    assert _params(joints['torso_lift_joint'].find('state_interface')) == {'initial_value': 0.15}
    assert _controller_joints('tiago')['torso_controller'] == ['torso_lift_joint']


@pytest.mark.parametrize('robot', ROBOTS)
def test_other_joints_are_held_only_when_asked(robot):
    """
    Without hold_other_joints only controlled, locked and mimic joints are listed.

    Controlled joints are those of the arms, torso, head and grippers and of the controllers
    file (TIAGo's wheels); a mimic joint is listed when its leader is. Continuous joints (wheels,
    casters) are never held.
    """
    loaded = load_robot(robot)
    controllers = read_controllers(_controllers_file(robot))
    held = {joint.name for joint in control_joints(loaded, controllers=controllers)}
    minimal = {
        joint.name
        for joint in control_joints(loaded, hold_other_joints=False, controllers=controllers)
    }
    expected = {name for group in loaded.groups.values() for name in group.joint_names}
    expected |= set(loaded.spec.locked_joints)
    expected |= {
        name for names in _controller_joints(robot, wheels=True).values() for name in names
    }
    mimics = {
        joint.name for joint in loaded.model.joints.values()
        if joint.mimic is not None and joint.mimic[0] in expected
    }
    assert minimal == expected | mimics
    assert minimal <= held
    continuous = {
        joint.name for joint in loaded.model.joints.values()
        if joint.joint_type is JointType.CONTINUOUS
    }
    assert not (held - expected) & continuous
    root = ElementTree.fromstring(_description(robot, hold_other_joints=False))
    assert set(_ros2_control_joints(root)) == expected | mimics


@pytest.mark.parametrize('robot', ROBOTS)
def test_original_urdf_text_is_kept_byte_for_byte(robot):
    """The plain URDF is a prefix + suffix of the result: only one block is inserted."""
    original = load_robot(robot).urdf_file.read_text(encoding='utf-8')
    result = _description(robot)
    end = original.rfind('</robot>')
    assert result.startswith(original[:end])
    assert result.endswith(original[end:])
    assert len(result) > len(original)


@pytest.mark.parametrize('robot', ROBOTS)
def test_urdf_parser_still_reads_the_result(robot, monkeypatch):
    """urdf-parser-py parses it: same joints plus the world joint; only ros2_control unknown."""
    messages: list[str] = []
    monkeypatch.setattr(xml_core, 'on_error', messages.append)
    parsed = urdf_model.URDF.from_xml_string(_description(robot))
    plain = set(_urdf_limits(robot))
    assert plain <= {joint.name for joint in parsed.joints}
    free = load_robot(robot).spec.mobile_base is not None
    assert parsed.get_root() == (load_robot(robot).model.root_link if free else 'world')
    assert all('ros2_control' in message for message in messages), messages


def test_base_is_welded_to_the_world_and_stands_on_the_ground():
    """Baxter's pedestal reaches 0.92 m below its base; TIAGo's base is on the ground."""
    assert base_height(load_robot('baxter')) == pytest.approx(0.92)
    assert base_height(load_robot('tiago')) == 0.0
    root = ElementTree.fromstring(_description('baxter'))
    world_joints = [
        joint for joint in root.findall('joint') if joint.find('parent').get('link') == 'world'
    ]
    assert len(world_joints) == 1
    assert world_joints[0].get('type') == 'fixed'
    assert world_joints[0].find('child').get('link') == 'base'
    xyz = [float(value) for value in world_joints[0].find('origin').get('xyz').split()]
    assert xyz == pytest.approx([0.0, 0.0, 0.92])


def test_yumi_keeps_its_own_world_link():
    """The YuMi URDF is already rooted at world: no second world link is added."""
    root = ElementTree.fromstring(_description('yumi'))
    assert [link.get('name') for link in root.findall('link')].count('world') == 1


def test_floating_base_adds_no_world_link():
    """fixed_base=False leaves the root link free."""
    root = ElementTree.fromstring(_description('baxter', fixed_base=False))
    assert 'world' not in [link.get('name') for link in root.findall('link')]


@pytest.mark.parametrize('robot', ROBOTS)
def test_controller_names_put_the_broadcaster_first(robot):
    """The spawn order starts with joint_state_broadcaster, then the arm controllers."""
    names = controller_names(_controllers_file(robot))
    assert names[0] == 'joint_state_broadcaster'
    arms = [arm.spec.controller for arm in load_robot(robot).arms.values()]
    assert list(names[1:1 + len(arms)]) == arms


def test_controller_names_refuses_a_file_without_controllers(tmp_path):
    """A YAML without a controller_manager block is a ConfigError."""
    path = tmp_path / 'empty.yaml'
    path.write_text('arm_controller:\n  ros__parameters: {}\n', encoding='utf-8')
    with pytest.raises(ConfigError, match='controller_manager'):
        controller_names(path)


def test_a_controllers_file_asking_for_what_cannot_be_built_is_refused(tmp_path):
    """A joint under two command interfaces, or a sensor frame of no fixed joint: ConfigError."""
    twice = tmp_path / 'twice.yaml'
    twice.write_text(
        'controller_manager:\n  ros__parameters:\n'
        '    arm:\n      type: joint_trajectory_controller/JointTrajectoryController\n'
        '    base:\n      type: diff_drive_controller/DiffDriveController\n'
        'arm:\n  ros__parameters:\n    joints: [arm_1_joint]\n'
        'base:\n  ros__parameters:\n    left_wheel_names: [arm_1_joint]\n'
        '    right_wheel_names: [wheel_right_joint]\n',
        encoding='utf-8',
    )
    with pytest.raises(ConfigError, match='arm_1_joint'):
        gazebo_robot_description('tiago', twice)
    sensor = tmp_path / 'sensor.yaml'
    sensor.write_text(
        'controller_manager:\n  ros__parameters:\n'
        '    ft:\n      type: force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster\n'
        'ft:\n  ros__parameters:\n    sensor_name: ft\n    frame_id: arm_7_link\n',
        encoding='utf-8',
    )
    with pytest.raises(ConfigError, match='arm_7_link'):
        gazebo_robot_description('tiago', sensor)
