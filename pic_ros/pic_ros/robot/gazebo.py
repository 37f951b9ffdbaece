"""
Gazebo (gz sim) with ros2_control: the URDF additions gz_ros2_control needs, made on the fly.

The shipped ``urdf/*.urdf`` files carry no simulator tags, so that urdf-parser-py reads them
without warnings and MuJoCo loads them. For Gazebo, :func:`gazebo_robot_description` returns the
URDF text unchanged except for one block inserted before ``</robot>``, built from the robot file
and from the controllers file (:func:`read_controllers`), so that what a robot needs stays in
``config/`` and ``urdf/``:

- ``<ros2_control name=... type="system">`` with the hardware plugin of the ROS distro and one
  ``<joint>`` per joint a controller claims or the robot file names: the joints of the robot's
  groups (arms, torso, head, grippers) and of every trajectory controller get a ``position``
  command interface whose ``min``/``max`` are the URDF position limits; the wheels of a
  diff_drive_controller get a ``velocity`` command interface; every joint has ``position``
  (``initial_value``: the neutral pose, a locked value, or 0 clamped into the limits) and
  ``velocity`` state interfaces. The robot's ``locked_joints`` start at their locked value.
- Mimic joints (the URDF's ``<mimic>``) whose leader is in the block, such as YuMi's second
  gripper finger: on a real two-finger gripper one motor drives both fingers, so the controller
  commands one joint and the hardware moves and reports both -- a mimic joint, not a second
  commanded joint, which a controller could drive apart from the first. gz_ros2_control then
  moves the mimic joint after its leader. On Jazzy and later (ros2_control parses the URDF's
  ``<mimic>``, ``hardware_interface/src/component_parser.cpp``) a mimic joint must have no
  command interface, state interfaces only; Humble's ign_ros2_control instead reads the
  ``mimic`` and ``multiplier`` parameters of the ``<joint>`` and takes a command interface, as in
  its ``test_gripper_mimic_joint.xacro.urdf`` (it exports the mimic joint's state as
  ``<joint>_mimic`` and has no offset: a URDF mimic offset is not simulated there).
- The other revolute and prismatic joints with position limits (TIAGo's hand fingers,
  suspension) can be added the same way, starting at 0 (clamped into their limits): no
  controller claims them, and gz_ros2_control holds joints whose interfaces no controller claims
  (``hold_joints``, true by default, in ``gz_ros2_control/src/gz_system.cpp``), so they do not
  flop. Continuous joints (wheels and casters) are left free: held, a caster would brake the
  base.
- A ``<sensor>`` with ``force.x`` ... ``torque.z`` state interfaces per
  force_torque_sensor_broadcaster of the controllers file (its ``sensor_name``), and the Gazebo
  force/torque sensor of that name on the fixed joint whose child is the broadcaster's
  ``frame_id`` (kept as a joint with ``preserveFixedJoint``; the wrench the child side applies
  on the parent, in the child frame), with Gazebo's ForceTorque system, as in gz_ros2_control's
  ``test_cart_ft_sensor.xacro.urdf`` (force/torque sensors in gz_ros2_control: 1.2.14 on Jazzy,
  0.7.16 on Humble, 2025), updated at the controller manager's ``update_rate``.
- ``<gazebo><plugin filename=... name=...><parameters>controllers.yaml</parameters>``: the
  Gazebo system plugin that runs the controller manager with the controllers file.
- Unless the robot file has a ``mobile_base``, a ``world`` link welded to the root link
  (teleoperation moves the arms only), raised so that the lowest collision shape rigidly
  attached to the root touches the ground plane. A mobile base stands free on its wheels.

Plugin names per distro (gz_ros2_control ``README.md`` version table,
``ign_ros2_control/ign_hardware_plugins.xml@humble``, ``gz_ros2_control/gz_hardware_plugins.xml``
and ``doc/index.rst``): Humble (Gazebo Fortress) uses ``ign_ros2_control/IgnitionSystem`` and the
system plugin ``ign_ros2_control-system`` / ``ign_ros2_control::IgnitionROS2ControlPlugin``; Jazzy,
Kilted and Rolling (Gazebo Harmonic and later) use ``gz_ros2_control/GazeboSimSystem`` and
``gz_ros2_control-system`` / ``gz_ros2_control::GazeboSimROS2ControlPlugin``. The ``/clock``
bridge type follows the same split: ros_gz_bridge's generated ``rosgraph_msgs`` factory takes
``gz.msgs.Clock`` (and the old ``ignition.msgs.Clock``) on Harmonic, the Humble/Fortress bridge
only ``ignition.msgs.Clock``. So does diff_drive_controller's input (ros2_controllers
``diff_drive_controller.cpp``): on Humble ``geometry_msgs/Twist`` on ``~/cmd_vel_unstamped``
when ``use_stamped_vel`` is false, from Jazzy on only ``geometry_msgs/TwistStamped`` on
``~/cmd_vel`` (:func:`base_command`).

This module is part of the core (standard library, numpy, PyYAML, pic_ros): no ROS, no launch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any
from xml.etree import ElementTree
from xml.sax.saxutils import escape, quoteattr

import numpy as np
from pic_ros.checks import check_choice
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.resources import read_yaml
from pic_ros.robot.kinematics.robot_model import JointType
from pic_ros.robot.kinematics.transforms import transform_from_xyz_rpy
from pic_ros.robot.robot import load_robot, Robot
import yaml

WORLD_LINK = 'world'
WORLD_JOINT = 'pic_ros_world_joint'
BROADCASTER_TYPE = 'joint_state_broadcaster/JointStateBroadcaster'
TRAJECTORY_CONTROLLER_TYPE = 'joint_trajectory_controller/JointTrajectoryController'
DIFF_DRIVE_TYPE = 'diff_drive_controller/DiffDriveController'
FORCE_TORQUE_TYPE = 'force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster'
FORCE_TORQUE_INTERFACES = ('force.x', 'force.y', 'force.z', 'torque.x', 'torque.y', 'torque.z')
"""State interfaces of a force/torque sensor (ros2_control's ForceTorqueSensor component)."""
STATE_INTERFACES = ('position', 'velocity')
"""State interfaces of every joint of the block."""


@dataclass(frozen=True)
class GazeboNames:
    """
    The gz_ros2_control, Gazebo and ros2_controllers names of one ROS distro.

    :param hardware_plugin: ros2_control hardware plugin, the ``<hardware><plugin>`` text.
    :param system_filename: ``filename`` of the Gazebo system plugin.
    :param system_name: ``name`` (class) of the Gazebo system plugin.
    :param component_name: ``name`` of the ``<ros2_control>`` element.
    :param clock_message: Gazebo message type of ``/clock`` for ros_gz_bridge's
        ``parameter_bridge`` (``/clock@rosgraph_msgs/msg/Clock[<type>``).
    :param force_torque_filename: ``filename`` of Gazebo's ForceTorque system plugin.
    :param force_torque_name: ``name`` (class) of Gazebo's ForceTorque system plugin.
    :param mimic_parameters: Mimic joints are written with ``mimic`` and ``multiplier``
        parameters and a command interface (Humble's ign_ros2_control); otherwise with state
        interfaces only, ros2_control reading the URDF's ``<mimic>``.
    :param stamped_base_command: diff_drive_controller reads only ``TwistStamped`` on
        ``~/cmd_vel`` (Jazzy and later); otherwise ``Twist`` on ``~/cmd_vel_unstamped`` when
        ``use_stamped_vel`` is false.
    """

    hardware_plugin: str
    system_filename: str
    system_name: str
    component_name: str
    clock_message: str
    force_torque_filename: str
    force_torque_name: str
    mimic_parameters: bool
    stamped_base_command: bool


_FORTRESS = GazeboNames(
    hardware_plugin='ign_ros2_control/IgnitionSystem',
    system_filename='ign_ros2_control-system',
    system_name='ign_ros2_control::IgnitionROS2ControlPlugin',
    component_name='IgnitionSystem',
    clock_message='ignition.msgs.Clock',
    force_torque_filename='ignition-gazebo-forcetorque-system',
    force_torque_name='ignition::gazebo::systems::ForceTorque',
    mimic_parameters=True,
    stamped_base_command=False,
)
_HARMONIC = GazeboNames(
    hardware_plugin='gz_ros2_control/GazeboSimSystem',
    system_filename='gz_ros2_control-system',
    system_name='gz_ros2_control::GazeboSimROS2ControlPlugin',
    component_name='GazeboSimSystem',
    clock_message='gz.msgs.Clock',
    force_torque_filename='gz-sim-forcetorque-system',
    force_torque_name='gz::sim::systems::ForceTorque',
    mimic_parameters=False,
    stamped_base_command=True,
)
NAMES_BY_DISTRO = {
    'humble': _FORTRESS,
    'jazzy': _HARMONIC,
    'kilted': _HARMONIC,
    'rolling': _HARMONIC,
}
"""gz_ros2_control and ros_gz names for each supported ROS distro."""


@dataclass(frozen=True)
class ControlJoint:
    """
    One joint of the ``<ros2_control>`` block.

    :param name: Joint name.
    :param lower: Lowest position, the command ``min`` [rad] or [m]; ``None`` if unlimited.
    :param upper: Highest position, the command ``max`` [rad] or [m]; ``None`` if unlimited.
    :param initial: Initial position [rad] or [m].
    :param command: Its command interface: ``position``, ``velocity`` (a wheel), or ``''``
        for a mimic joint (moved after its leader).
    :param mimic: ``(leader, multiplier, offset)`` of a mimic joint, else ``None``.
    """

    name: str
    lower: float | None
    upper: float | None
    initial: float
    command: str = 'position'
    mimic: tuple[str, float, float] | None = None


@dataclass(frozen=True)
class ControllerEntry:
    """
    One controller of a ros2_control controllers file.

    :param name: Controller name.
    :param kind: Its ``type`` (``<package>/<class>``).
    :param parameters: Its ``ros__parameters`` block (empty when the file has none).
    """

    name: str
    kind: str
    parameters: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def package(self) -> str:
        """Return the ROS package of the controller's plugin (the part of ``kind`` before /)."""
        return self.kind.split('/', 1)[0]


@dataclass(frozen=True)
class ForceTorqueSensor:
    """
    A force/torque sensor of the ``<ros2_control>`` block and of Gazebo.

    :param name: Sensor name (the broadcaster's ``sensor_name``; Gazebo's sensor has it too).
    :param joint: The fixed URDF joint Gazebo measures the wrench of.
    :param link: Its child link, the frame of the wrench (the broadcaster's ``frame_id``).
    """

    name: str
    joint: str
    link: str


def gazebo_names(distro: str) -> GazeboNames:
    """
    Return the gz_ros2_control plugin names and the clock message type of a ROS distro.

    :param distro: ``humble``, ``jazzy``, ``kilted`` or ``rolling`` (case-insensitive).
    :return: The names.
    :raises ConfigError: For any other distro (the message lists the supported ones).
    """
    key = check_choice('distro', str(distro).strip().lower(), sorted(NAMES_BY_DISTRO))
    return NAMES_BY_DISTRO[key]


def read_controllers(controllers_file: str | Path) -> tuple[ControllerEntry, ...]:
    """
    Read the controllers a ros2_control controllers file declares, in file order.

    :param controllers_file: YAML with a ``controller_manager: ros__parameters:`` block that
        gives each controller's ``type``, and a ``<controller>: ros__parameters:`` block per
        controller.
    :return: The controllers with their parameters.
    :raises ConfigError: If the file cannot be read or has no controller.
    """
    path = Path(controllers_file)
    data = read_yaml(path, 'controllers file')
    try:
        manager = data['controller_manager']['ros__parameters']
    except (KeyError, TypeError) as err:
        raise ConfigError(
            f'{path}: expected a controller_manager: ros__parameters: block'
        ) from err
    entries = []
    for name, entry in manager.items():
        if not isinstance(entry, dict) or not isinstance(entry.get('type'), str):
            continue
        block = data.get(name)
        parameters = block.get('ros__parameters') if isinstance(block, dict) else None
        entries.append(ControllerEntry(
            name=str(name), kind=entry['type'],
            parameters=MappingProxyType(dict(parameters or {})),
        ))
    if not entries:
        raise ConfigError(f'{path}: the controller_manager block declares no controller')
    return tuple(entries)


def update_rate(controllers_file: str | Path) -> float:
    """
    Return the controller manager's ``update_rate`` of a controllers file.

    :param controllers_file: The controllers YAML.
    :return: The rate [Hz]; 100 (controller_manager's default) when the file gives none.
    :raises ConfigError: If the file cannot be read or the rate is not a positive number.
    """
    path = Path(controllers_file)
    try:
        data = yaml.safe_load(path.read_text(encoding='utf-8'))
        rate = data['controller_manager']['ros__parameters'].get('update_rate', 100)
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as err:
        raise ConfigError(f'cannot read the update_rate of {path}: {err}') from err
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0:
        raise ConfigError(f'{path}: update_rate must be a positive number, got {rate!r}')
    return float(rate)


def controller_names(controllers_file: str | Path) -> tuple[str, ...]:
    """
    List the controllers a ros2_control controllers file declares, in spawn order.

    :param controllers_file: YAML with a ``controller_manager: ros__parameters:`` block that
        gives each controller's ``type``.
    :return: Controller names, joint state broadcasters first (they must run before the
        trajectory controllers are spawned), then the others in file order.
    :raises ConfigError: If the file cannot be read or has no controller.
    """
    entries = read_controllers(controllers_file)
    broadcasters = [entry.name for entry in entries if entry.kind == BROADCASTER_TYPE]
    others = [entry.name for entry in entries if entry.kind != BROADCASTER_TYPE]
    return tuple(broadcasters + others)


def base_command(
    controllers: Sequence[ControllerEntry], distro: str
) -> tuple[str, bool] | None:
    """
    Return where the base controller of a controllers file takes its velocity commands.

    :param controllers: The controllers (:func:`read_controllers`).
    :param distro: ROS distro (:func:`gazebo_names`).
    :return: ``(topic, stamped)``: the diff_drive_controller's input topic, relative
        (``<controller>/cmd_vel`` or ``<controller>/cmd_vel_unstamped``), and whether it takes
        ``geometry_msgs/TwistStamped`` (else ``Twist``); None without a diff_drive_controller.
    :raises ConfigError: For an unknown distro, or several diff_drive_controllers.
    """
    names = gazebo_names(distro)
    bases = [entry for entry in controllers if entry.kind == DIFF_DRIVE_TYPE]
    if not bases:
        return None
    if len(bases) > 1:
        raise ConfigError(f'several diff_drive_controllers: {[base.name for base in bases]}')
    base = bases[0]
    if names.stamped_base_command or bool(base.parameters.get('use_stamped_vel', True)):
        return f'{base.name}/cmd_vel', True
    return f'{base.name}/cmd_vel_unstamped', False


def _commanded(controllers: Sequence[ControllerEntry]) -> dict[str, str]:
    """
    Return the command interface each controller joint needs, by joint, in file order.

    :raises ConfigError: For a trajectory controller commanding anything but positions, or a
        joint two controllers command through different interfaces.
    """
    commands: dict[str, str] = {}

    def claim(joint: str, interface: str, controller: str) -> None:
        if commands.setdefault(joint, interface) != interface:
            raise ConfigError(
                f'{controller}: joint {joint!r} is commanded by {interface} and by '
                f'{commands[joint]}'
            )

    for entry in controllers:
        if entry.kind == TRAJECTORY_CONTROLLER_TYPE:
            interfaces = list(entry.parameters.get('command_interfaces') or ['position'])
            if interfaces != ['position']:
                raise ConfigError(
                    f'{entry.name}: only position command interfaces are generated, got '
                    f'{interfaces}'
                )
            for joint in entry.parameters.get('joints') or ():
                claim(str(joint), 'position', entry.name)
        elif entry.kind == DIFF_DRIVE_TYPE:
            wheels = [
                *(entry.parameters.get('left_wheel_names') or ()),
                *(entry.parameters.get('right_wheel_names') or ()),
            ]
            for joint in wheels:
                claim(str(joint), 'velocity', entry.name)
    return commands


def force_torque_sensors(
    robot: Robot, controllers: Sequence[ControllerEntry]
) -> tuple[ForceTorqueSensor, ...]:
    """
    Return the force/torque sensors the broadcasters of a controllers file read.

    :param robot: The robot.
    :param controllers: The controllers (:func:`read_controllers`).
    :return: One sensor per force_torque_sensor_broadcaster, on the fixed joint whose child is
        the broadcaster's ``frame_id``.
    :raises ConfigError: If a broadcaster has no ``sensor_name`` or ``frame_id``, or no fixed
        joint of the URDF has that frame as its child.
    """
    sensors = []
    for entry in controllers:
        if entry.kind != FORCE_TORQUE_TYPE:
            continue
        name = entry.parameters.get('sensor_name')
        link = entry.parameters.get('frame_id')
        if not isinstance(name, str) or not name or not isinstance(link, str) or not link:
            raise ConfigError(f'{entry.name}: a sensor_name and a frame_id are needed')
        joints = [
            joint.name for joint in robot.model.joints.values()
            if joint.child == link and joint.joint_type is JointType.FIXED
        ]
        if not joints:
            raise ConfigError(
                f'{entry.name}: frame_id {link!r} is not the child of a fixed joint of '
                f'{robot.urdf_file}'
            )
        sensors.append(ForceTorqueSensor(name=name, joint=joints[0], link=link))
    return tuple(sensors)


def control_joints(
    robot: Robot,
    *,
    hold_other_joints: bool = True,
    controllers: Sequence[ControllerEntry] = (),
) -> tuple[ControlJoint, ...]:
    """
    List the joints of the ``<ros2_control>`` block of a robot.

    :param robot: The robot.
    :param hold_other_joints: Also list the revolute and prismatic joints with position limits
        that no controller drives and that are not locked (mimic joints excluded), starting at 0
        clamped into their limits.
    :param controllers: The controllers of the controllers file: their joints are listed with
        the command interface each needs (position for trajectory controllers, velocity for a
        diff_drive_controller's wheels).
    :return: Controlled joints (arms, torso, head, grippers; robot file order), then locked
        joints, then the other joints of the controllers, then the mimic joints whose leader is
        listed, then the others (URDF order).
    :raises ChainError: If a locked or controller joint is not a movable joint of the URDF.
    :raises ConfigError: If two controllers command a joint through different interfaces.
    """
    commands = _commanded(controllers)
    joints: list[ControlJoint] = []
    for group in robot.groups.values():
        for index, name in enumerate(group.joint_names):
            joints.append(
                _control_joint(
                    name, float(group.lower[index]), float(group.upper[index]),
                    group.neutral[index], commands.get(name, 'position'),
                )
            )
    listed = {joint.name for joint in joints}
    for more in (_locked_and_other_controller_joints(robot, commands, listed),
                 _mimic_joints(robot, listed)):
        joints += more
        listed.update(joint.name for joint in more)
    if hold_other_joints:
        joints += _held_joints(robot, listed)
    return tuple(joints)


def _locked_and_other_controller_joints(
    robot: Robot, commands: Mapping[str, str], listed: set[str]
) -> list[ControlJoint]:
    """
    Return the locked joints, then the controllers' joints, not listed yet (see control_joints).

    :param commands: The command interface of each controller joint (:func:`_commanded`).
    :param listed: The joints listed already (not changed).
    :raises ChainError: If one is not a movable joint of the URDF.
    """
    extra = [(name, value) for name, value in robot.spec.locked_joints.items()]
    extra += [(name, 0.0) for name in commands if name not in robot.spec.locked_joints]
    joints: list[ControlJoint] = []
    seen = set(listed)
    for name, value in extra:
        if name in seen:
            continue
        joint = robot.model.joints.get(name)
        if joint is None or joint.limits is None:
            raise ChainError(f'joint {name!r} is not a movable joint of {robot.urdf_file}')
        rest = min(max(float(value), joint.limits.lower), joint.limits.upper)
        joints.append(_control_joint(
            name, joint.limits.lower, joint.limits.upper, rest, commands.get(name, 'position')
        ))
        seen.add(name)
    return joints


def _mimic_joints(robot: Robot, listed: set[str]) -> list[ControlJoint]:
    """Return the mimic joints not listed whose leader is (or is such a joint before it)."""
    joints: list[ControlJoint] = []
    seen = set(listed)
    for joint in robot.model.joints.values():
        if joint.mimic is None or joint.name in seen or joint.mimic[0] not in seen:
            continue
        seen.add(joint.name)
        limits = joint.limits
        lower = limits.lower if limits is not None else -math.inf
        upper = limits.upper if limits is not None else math.inf
        joints.append(_control_joint(
            joint.name, lower, upper, min(max(0.0, lower), upper), '', joint.mimic
        ))
    return joints


def _held_joints(robot: Robot, listed: set[str]) -> list[ControlJoint]:
    """Return the other revolute and prismatic joints with limits, not mimic, not listed."""
    joints: list[ControlJoint] = []
    for joint in robot.model.joints.values():
        if (
            joint.name in listed
            or joint.mimic is not None
            or joint.limits is None
            or joint.joint_type not in (JointType.REVOLUTE, JointType.PRISMATIC)
        ):
            continue
        rest = min(max(0.0, joint.limits.lower), joint.limits.upper)
        joints.append(_control_joint(joint.name, joint.limits.lower, joint.limits.upper, rest))
    return joints


def _control_joint(
    name: str,
    lower: float,
    upper: float,
    initial: Any,
    command: str = 'position',
    mimic: tuple[str, float, float] | None = None,
) -> ControlJoint:
    """Make a joint entry; an infinite limit (continuous joint) gets no min/max."""
    return ControlJoint(
        name=name,
        lower=lower if math.isfinite(lower) else None,
        upper=upper if math.isfinite(upper) else None,
        initial=float(initial),
        command=command,
        mimic=mimic,
    )


def base_height(robot: Robot) -> float:
    """
    Height to raise the root link by so that the robot stands on the ground plane.

    Only collision shapes rigidly attached to the root link (through fixed joints) count: the
    arms move, the pedestal or base does not. Boxes, cylinders and spheres are measured; meshes
    are ignored.

    :param robot: The robot.
    :return: Depth of the lowest collision point below the root link origin, 0 if none is
        below it [m].
    """
    collisions = _collisions_by_link(robot.urdf_file)
    lowest = 0.0
    frames: list[tuple[str, Any]] = [(robot.model.root_link, np.eye(4))]
    while frames:
        link, transform = frames.pop()
        for origin, geometry in collisions.get(link, ()):
            lowest = min(lowest, _lowest_point(transform @ origin, geometry))
        for joint in robot.model.joints.values():
            if joint.parent == link and joint.joint_type is JointType.FIXED:
                frames.append((joint.child, transform @ joint.origin))
    return max(0.0, -lowest)


def _collisions_by_link(urdf_file: Path) -> dict[str, list[tuple[Any, ElementTree.Element]]]:
    root = ElementTree.parse(urdf_file).getroot()
    found: dict[str, list[tuple[Any, ElementTree.Element]]] = {}
    for link in root.findall('link'):
        for collision in link.findall('collision'):
            geometry = collision.find('geometry')
            if geometry is None or len(geometry) == 0:
                continue
            origin = collision.find('origin')
            xyz = _floats(origin.get('xyz') if origin is not None else None)
            rpy = _floats(origin.get('rpy') if origin is not None else None)
            found.setdefault(str(link.get('name')), []).append(
                (transform_from_xyz_rpy(xyz, rpy), geometry[0])
            )
    return found


def _floats(text: str | None, count: int = 3) -> list[float]:
    if not text:
        return [0.0] * count
    return [float(value) for value in text.split()]


def _lowest_point(transform: Any, shape: ElementTree.Element) -> float:
    """Return the lowest z of a URDF geometry placed by ``transform`` (root link frame) [m]."""
    rotation = transform[:3, :3]
    centre = float(transform[2, 3])
    if shape.tag == 'box':
        half = np.asarray(_floats(shape.get('size')), dtype=float) / 2.0
        return centre - float(np.abs(rotation[2, :]) @ half)
    if shape.tag == 'cylinder':
        radius = float(shape.get('radius', '0'))
        half_length = float(shape.get('length', '0')) / 2.0
        axis_z = abs(float(rotation[2, 2]))
        return centre - half_length * axis_z - radius * math.sqrt(max(0.0, 1.0 - axis_z ** 2))
    if shape.tag == 'sphere':
        return centre - float(shape.get('radius', '0'))
    return math.inf


def gazebo_robot_description(
    robot: str | Path | Robot,
    controllers_file: str | Path,
    *,
    distro: str = 'jazzy',
    hold_other_joints: bool = True,
    fixed_base: bool | None = None,
) -> str:
    """
    Return the robot's URDF with the ros2_control and Gazebo tags gz_ros2_control needs.

    The text of the shipped URDF is kept byte for byte; the new elements are inserted just before
    the closing ``</robot>``. Publish the result as ``robot_description`` (robot_state_publisher)
    and spawn it with ``ros_gz_sim create -topic robot_description``.

    :param robot: Robot name (``baxter``, ``yumi``, ``tiago``), robot YAML path, or a loaded robot.
    :param controllers_file: Controllers YAML given to the controller manager (absolute path
        recommended: the plugin reads it from the simulator's working directory otherwise); its
        controllers' joints and sensors are put in the block (:func:`control_joints`,
        :func:`force_torque_sensors`).
    :param distro: ROS distro, picks the plugin names (see :data:`NAMES_BY_DISTRO`).
    :param hold_other_joints: Also put the other limited joints under ros2_control so they hold
        still.
    :param fixed_base: Weld the root link to the ``world`` (unless the URDF already has a
        ``world`` root), raised by :func:`base_height`; None: unless the robot file has a
        ``mobile_base``.
    :return: The URDF text for Gazebo.
    :raises ConfigError: For an unknown distro or robot, or a controllers file that cannot be
        read or asks for what cannot be generated.
    :raises ChainError: If the URDF cannot be used (no ``</robot>``, a ``world`` link that is
        not the root, a controller joint that is not a movable joint).
    """
    names = gazebo_names(distro)
    loaded = robot if isinstance(robot, Robot) else load_robot(robot)
    controllers = read_controllers(controllers_file)
    text = loaded.urdf_file.read_text(encoding='utf-8')
    end = text.rfind('</robot>')
    if end < 0:
        raise ChainError(f'{loaded.urdf_file} has no closing </robot> tag')
    joints = control_joints(loaded, hold_other_joints=hold_other_joints, controllers=controllers)
    sensors = force_torque_sensors(loaded, controllers)
    lines = ['', '  <!-- Added by pic_ros for gz_ros2_control; not in the shipped URDF -->']
    lines += _ros2_control_lines(joints, sensors, names)
    lines += _plugin_lines(Path(controllers_file), names)
    lines += _sensor_lines(sensors, names, update_rate(controllers_file) if sensors else 0.0)
    if fixed_base is None:
        fixed_base = loaded.spec.mobile_base is None
    if fixed_base:
        lines += _world_lines(loaded)
    block = '\n'.join(lines) + '\n'
    return text[:end] + block + text[end:]


def _number(value: float) -> str:
    return repr(float(value))


def _joint_lines(joint: ControlJoint, names: GazeboNames) -> list[str]:
    """Return the ``<joint>`` element of one joint of the block."""
    lines = [f'    <joint name={quoteattr(joint.name)}>']
    command = joint.command
    if joint.mimic is not None and names.mimic_parameters:
        leader, multiplier, _ = joint.mimic
        lines.append(f'      <param name="mimic">{escape(leader)}</param>')
        lines.append(f'      <param name="multiplier">{_number(multiplier)}</param>')
        command = 'position'
    if command == 'position':
        lines.append('      <command_interface name="position">')
        if joint.lower is not None:
            lines.append(f'        <param name="min">{_number(joint.lower)}</param>')
        if joint.upper is not None:
            lines.append(f'        <param name="max">{_number(joint.upper)}</param>')
        lines.append('      </command_interface>')
    elif command:
        lines.append(f'      <command_interface name={quoteattr(command)}/>')
    lines.append('      <state_interface name="position">')
    lines.append(f'        <param name="initial_value">{_number(joint.initial)}</param>')
    lines.append('      </state_interface>')
    lines += [f'      <state_interface name="{name}"/>' for name in STATE_INTERFACES[1:]]
    lines.append('    </joint>')
    return lines


def _ros2_control_lines(
    joints: Sequence[ControlJoint], sensors: Sequence[ForceTorqueSensor], names: GazeboNames
) -> list[str]:
    lines = [
        f'  <ros2_control name={quoteattr(names.component_name)} type="system">',
        '    <hardware>',
        f'      <plugin>{escape(names.hardware_plugin)}</plugin>',
        '    </hardware>',
    ]
    for joint in joints:
        lines += _joint_lines(joint, names)
    for sensor in sensors:
        lines.append(f'    <sensor name={quoteattr(sensor.name)} type="force_torque">')
        lines += [
            f'      <state_interface name="{name}"/>' for name in FORCE_TORQUE_INTERFACES
        ]
        lines.append('    </sensor>')
    lines.append('  </ros2_control>')
    return lines


def _plugin_lines(controllers_file: Path, names: GazeboNames) -> list[str]:
    return [
        '  <gazebo>',
        f'    <plugin filename={quoteattr(names.system_filename)} '
        f'name={quoteattr(names.system_name)}>',
        f'      <parameters>{escape(str(controllers_file))}</parameters>',
        '    </plugin>',
        '  </gazebo>',
    ]


def _sensor_lines(
    sensors: Sequence[ForceTorqueSensor], names: GazeboNames, rate: float
) -> list[str]:
    """Return the Gazebo force/torque sensors, updated at ``rate`` [Hz], and their system."""
    if not sensors:
        return []
    lines = [
        '  <gazebo>',
        f'    <plugin filename={quoteattr(names.force_torque_filename)} '
        f'name={quoteattr(names.force_torque_name)}/>',
        '  </gazebo>',
    ]
    for sensor in sensors:
        lines += [
            f'  <gazebo reference={quoteattr(sensor.joint)}>',
            '    <preserveFixedJoint>true</preserveFixedJoint>',
            f'    <sensor name={quoteattr(sensor.name)} type="force_torque">',
            '      <always_on>true</always_on>',
            f'      <update_rate>{_number(rate)}</update_rate>',
            '      <force_torque>',
            '        <frame>child</frame>',
            '        <measure_direction>child_to_parent</measure_direction>',
            '      </force_torque>',
            '    </sensor>',
            '  </gazebo>',
        ]
    return lines


def _world_lines(robot: Robot) -> list[str]:
    root = robot.model.root_link
    if root == WORLD_LINK:
        return []
    if WORLD_LINK in robot.model.links:
        raise ChainError(f'{robot.urdf_file} has a {WORLD_LINK!r} link that is not its root')
    height = base_height(robot)
    return [
        f'  <link name="{WORLD_LINK}"/>',
        f'  <joint name="{WORLD_JOINT}" type="fixed">',
        f'    <origin xyz="0 0 {_number(height)}" rpy="0 0 0"/>',
        f'    <parent link="{WORLD_LINK}"/>',
        f'    <child link={quoteattr(root)}/>',
        '  </joint>',
    ]
