"""
The generated Gazebo configuration of every robot, read back as ros2_control would read it.

For each shipped robot and distro the Gazebo robot description is generated and parsed, and the
controllers file and the launch file are read: every controller has a type and is spawned, every
joint a controller commands has the command and state interfaces its controller type claims
(ros2_controllers: joint_trajectory_controller takes its ``command_interfaces`` and
``state_interfaces`` parameters, diff_drive_controller a ``velocity`` command and a ``position``
state per wheel, force_torque_sensor_broadcaster the six ``force.*``/``torque.*`` state
interfaces of its ``sensor_name``), the rules ros2_control's URDF parser enforces hold (no fixed
joint, no command interface on a mimic joint from Jazzy on), YuMi's two fingers are both there,
and TIAGo's base controller and wrist sensor broadcaster are wired to the topics the pipeline
uses.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
import functools
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from pic_ros.motion.hand_compliance import wrench_topic
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.robot.gazebo import (
    base_command,
    controller_names,
    gazebo_names,
    gazebo_robot_description,
    read_controllers,
)
from pic_ros.robot.robot import Robot
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONTROLLERS = ROOT / 'pic_ros' / 'config' / 'controllers'
LAUNCH_FILE = ROOT / 'pic_ros' / 'launch' / 'gazebo.launch.py'
ROBOTS = shipped_robots()
DISTROS = ('humble', 'jazzy', 'kilted', 'rolling')
FORCE_TORQUE_INTERFACES = {'force.x', 'force.y', 'force.z', 'torque.x', 'torque.y', 'torque.z'}

TRAJECTORY = 'joint_trajectory_controller/JointTrajectoryController'
STATE_BROADCASTER = 'joint_state_broadcaster/JointStateBroadcaster'
DIFF_DRIVE = 'diff_drive_controller/DiffDriveController'
FORCE_TORQUE = 'force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster'


def _controllers_file(robot: str) -> Path:
    """Return the shipped controllers YAML of ``robot``."""
    return CONTROLLERS / f'{robot}_controllers.yaml'


def _controllers_data(robot: str) -> dict[str, Any]:
    """Load the shipped controllers YAML of ``robot`` as plain data."""
    return yaml.safe_load(_controllers_file(robot).read_text(encoding='utf-8'))


def _declared(robot: str) -> dict[str, str]:
    """Return the type of every controller of the controller_manager block, by name."""
    manager = _controllers_data(robot)['controller_manager']['ros__parameters']
    return {name: entry['type'] for name, entry in manager.items() if isinstance(entry, dict)}


def _parameters(robot: str, controller: str) -> dict[str, Any]:
    """Return the ros__parameters block of one controller (empty when it has none)."""
    return (_controllers_data(robot).get(controller) or {}).get('ros__parameters') or {}


def _needs(kind: str, parameters: dict[str, Any]) -> Iterator[tuple[str, set[str], set[str]]]:
    """
    Yield what a controller claims: ``(joint, command interfaces, state interfaces)``.

    The claims of each controller type, as ros2_controllers' controllers make them; a type not
    listed here fails the test, so that a new controller type is checked too.
    """
    if kind == TRAJECTORY:
        for joint in parameters['joints']:
            yield (joint, set(parameters['command_interfaces']),
                   set(parameters['state_interfaces']))
    elif kind == DIFF_DRIVE:
        feedback = 'position' if parameters.get('position_feedback', True) else 'velocity'
        for joint in [*parameters['left_wheel_names'], *parameters['right_wheel_names']]:
            yield joint, {'velocity'}, {feedback}
    elif kind not in (STATE_BROADCASTER, FORCE_TORQUE):
        pytest.fail(f'no claims known for controller type {kind}: add them to _needs')


@functools.cache
def _robot(robot: str) -> Robot:
    """Load a shipped robot once."""
    return load_robot(robot)


@functools.cache
def _description(robot: str, distro: str) -> str:
    """Generate the Gazebo description of ``robot`` with its shipped controllers file."""
    return gazebo_robot_description(_robot(robot), _controllers_file(robot), distro=distro)


def _block(robot: str, distro: str) -> ElementTree.Element:
    """Return the single ``<ros2_control>`` element of the generated description."""
    root = ElementTree.fromstring(_description(robot, distro))
    blocks = root.findall('ros2_control')
    assert len(blocks) == 1
    return blocks[0]


def _interfaces(element: ElementTree.Element) -> tuple[set[str], set[str]]:
    """Return the command and state interface names of a ``<joint>`` or ``<sensor>``."""
    commands = {item.get('name') for item in element.findall('command_interface')}
    states = {item.get('name') for item in element.findall('state_interface')}
    return commands, states


def _joints(block: ElementTree.Element) -> dict[str, ElementTree.Element]:
    """Return the ``<joint>`` elements of a block by name, none listed twice."""
    names = [joint.get('name') for joint in block.findall('joint')]
    assert len(names) == len(set(names)), 'a joint is listed twice'
    return {joint.get('name'): joint for joint in block.findall('joint')}


@pytest.mark.parametrize('robot', ROBOTS)
def test_every_controller_has_a_type_and_is_spawned(robot):
    """Each controller is declared with a type, spawned, and parameter blocks are declared."""
    data = _controllers_data(robot)
    manager = data['controller_manager']['ros__parameters']
    for name, entry in manager.items():
        if isinstance(entry, dict):
            assert isinstance(entry.get('type'), str) and '/' in entry['type'], name
        else:
            assert name == 'update_rate', f'{name} is neither a controller nor update_rate'
    declared = _declared(robot)
    spawned = controller_names(_controllers_file(robot))
    assert sorted(spawned) == sorted(declared)
    assert spawned[0] == 'joint_state_broadcaster'
    assert set(data) - {'controller_manager'} <= set(declared)
    assert [entry.name for entry in read_controllers(_controllers_file(robot))] == list(declared)


def test_the_launch_file_spawns_every_controller_it_reads():
    """gazebo.launch.py starts one spawner per name controller_names returns, chained."""
    tree = ast.parse(LAUNCH_FILE.read_text(encoding='utf-8'))
    assigned = {
        node.targets[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call) and getattr(node.value.func, 'id', '')
        == 'controller_names'
    }
    assert assigned, 'controller_names is not called'
    spawned = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.ListComp)
        and getattr(node.elt, 'func', None) is not None
        and getattr(node.elt.func, 'id', '') == '_spawner'
        and isinstance(node.generators[0].iter, ast.Name)
        and node.generators[0].iter.id in assigned
    ]
    assert spawned, 'no spawner per name of controller_names'


@pytest.mark.parametrize('distro', DISTROS)
@pytest.mark.parametrize('robot', ROBOTS)
def test_every_commanded_joint_has_the_interfaces_its_controller_needs(robot, distro):
    """
    Each controller's joints carry exactly the command interface it claims and its states.

    The robot file's controllers (arms, torso, head, grippers) are all among them.
    """
    joints = _joints(_block(robot, distro))
    declared = _declared(robot)
    for group in _robot(robot).groups.values():
        assert declared.get(group.controller) == TRAJECTORY, group.controller
    commanded = 0
    for controller, kind in declared.items():
        for joint, commands, states in _needs(kind, _parameters(robot, controller)):
            assert joint in joints, f'{controller}: {joint} is not in <ros2_control>'
            have_commands, have_states = _interfaces(joints[joint])
            assert have_commands == commands, f'{controller}: {joint} commands {have_commands}'
            assert states <= have_states, f'{controller}: {joint} states {have_states}'
            commanded += 1
    assert commanded >= sum(len(group.joint_names) for group in _robot(robot).groups.values())


@pytest.mark.parametrize('distro', DISTROS)
@pytest.mark.parametrize('robot', ROBOTS)
def test_the_block_follows_the_ros2_control_parser_rules(robot, distro):
    """
    Joints are movable URDF joints; a mimic joint's leader is listed; Jazzy on: no command.

    Every joint also has position and velocity states (joint_state_broadcaster publishes them).
    """
    model = _robot(robot).model
    joints = _joints(_block(robot, distro))
    for name, element in joints.items():
        assert name in model.joints and model.joints[name].joint_type.is_movable, name
        commands, states = _interfaces(element)
        assert {'position', 'velocity'} <= states, name
        mimic = model.joints[name].mimic
        if mimic is None:
            continue
        assert mimic[0] in joints, f'{name} mimics {mimic[0]}, which is not listed'
        if gazebo_names(distro).mimic_parameters:
            params = {param.get('name'): param.text for param in element.findall('param')}
            assert params['mimic'] == mimic[0]
            assert float(params['multiplier']) == mimic[1]
        else:
            assert not commands, f'{name} is a mimic joint with command interfaces'


@pytest.mark.parametrize('distro', DISTROS)
def test_both_yumi_fingers_are_in_ros2_control(distro):
    """Each gripper: the commanded finger and its mimic, which moves with it, are both listed."""
    model = _robot('yumi').model
    joints = _joints(_block('yumi', distro))
    for side in ('l', 'r'):
        leader, follower = f'gripper_{side}_joint', f'gripper_{side}_joint_m'
        assert model.joints[follower].mimic is not None
        assert model.joints[follower].mimic[0] == leader
        assert _interfaces(joints[leader])[0] == {'position'}
        assert follower in joints
        assert _interfaces(joints[follower])[1] >= {'position', 'velocity'}


@pytest.mark.parametrize('robot', ROBOTS)
def test_a_mobile_base_stands_free_and_the_others_are_welded(robot):
    """The base is welded to the world unless the robot file has a mobile_base."""
    loaded = _robot(robot)
    root = ElementTree.fromstring(_description(robot, 'jazzy'))
    links = [link.get('name') for link in root.findall('link')]
    if loaded.spec.mobile_base is None:
        assert 'world' in links
    else:
        assert 'world' not in links


def test_tiago_base_controller_matches_the_urdf_and_the_robot_file():
    """Wheels, their geometry, limits and timeout as the URDF and config/tiago.yaml give them."""
    loaded = _robot('tiago')
    base = loaded.spec.mobile_base
    assert base is not None
    kinds = _declared('tiago')
    [name] = [name for name, kind in kinds.items() if kind == DIFF_DRIVE]
    parameters = _parameters('tiago', name)
    urdf = ElementTree.parse(loaded.urdf_file).getroot()
    wheels = parameters['left_wheel_names'] + parameters['right_wheel_names']
    offsets = []
    for wheel in wheels:
        joint = urdf.find(f"joint[@name='{wheel}']")
        assert joint is not None and joint.get('type') == 'continuous'
        offsets.append(float(joint.find('origin').get('xyz').split()[1]))
        child = joint.find('child').get('link')
        cylinder = urdf.find(f"link[@name='{child}']/collision/geometry/cylinder")
        assert float(cylinder.get('radius')) == parameters['wheel_radius']
    assert offsets[0] > 0.0 > offsets[1]  # left wheel on +y
    assert offsets[0] - offsets[1] == pytest.approx(parameters['wheel_separation'])
    assert parameters['base_frame_id'] == loaded.spec.base_frame
    assert parameters['odom_frame_id'] == base.odom_frame
    assert f'{name}/odom' == base.odometry_topic
    assert parameters['cmd_vel_timeout'] == base.command_timeout
    linear, angular = parameters['linear']['x'], parameters['angular']['z']
    assert linear['max_velocity'] == base.max_linear_velocity
    assert linear['min_velocity'] == base.min_linear_velocity
    assert linear['max_acceleration'] == base.max_linear_acceleration
    assert angular['max_velocity'] == base.max_angular_velocity
    assert angular['max_acceleration'] == base.max_angular_acceleration


@pytest.mark.parametrize('distro', DISTROS)
def test_tiago_base_follower_output_reaches_the_base_controller(distro):
    """Humble: Twist on cmd_vel_unstamped (the robot file's topic); later: TwistStamped."""
    entries = read_controllers(_controllers_file('tiago'))
    topic, stamped = base_command(entries, distro)
    if distro == 'humble':
        assert (topic, stamped) == (_robot('tiago').spec.mobile_base.command_topic, False)
    else:
        assert (topic, stamped) == ('mobile_base_controller/cmd_vel', True)
    assert base_command(read_controllers(_controllers_file('baxter')), distro) is None


@pytest.mark.parametrize('distro', DISTROS)
def test_tiago_wrist_sensor_broadcaster_feeds_the_admittance(distro):
    """
    The broadcaster publishes ~/wrench where solver_node reads, from the Gazebo sensor.

    Its sensor is in ``<ros2_control>`` with the six force/torque states, and Gazebo has a
    force/torque sensor of that name on the fixed joint whose child is the wrench's frame.
    """
    loaded = _robot('tiago')
    [(arm, spec)] = loaded.spec.force_torque_sensors.items()
    [name] = [name for name, kind in _declared('tiago').items() if kind == FORCE_TORQUE]
    parameters = _parameters('tiago', name)
    assert wrench_topic(loaded, arm) == f'{name}/wrench'
    assert parameters['frame_id'] == spec.link
    sensors = _block('tiago', distro).findall('sensor')
    assert [sensor.get('name') for sensor in sensors] == [parameters['sensor_name']]
    assert _interfaces(sensors[0]) == (set(), FORCE_TORQUE_INTERFACES)
    root = ElementTree.fromstring(_description('tiago', distro))
    [reference] = [
        item for item in root.findall('gazebo')
        if item.find('sensor') is not None and item.get('reference')
    ]
    joint = loaded.model.joints[reference.get('reference')]
    assert joint.child == spec.link
    assert reference.find('sensor').get('name') == parameters['sensor_name']
    assert reference.find('sensor').get('type') == 'force_torque'
    assert reference.findtext('preserveFixedJoint') == 'true'
    rate = _controllers_data('tiago')['controller_manager']['ros__parameters']['update_rate']
    assert float(reference.findtext('sensor/update_rate')) == rate
    names = gazebo_names(distro)
    plugins = [plugin.get('filename') for plugin in root.findall('gazebo/plugin')]
    assert names.force_torque_filename in plugins
