"""
Gazebo (gz sim) with ros2_control: the URDF additions gz_ros2_control needs, made on the fly.

The shipped ``urdf/*.urdf`` files carry no simulator tags, so that urdf-parser-py reads them
without warnings and MuJoCo loads them. For Gazebo, :func:`gazebo_robot_description` returns the
URDF text unchanged except for one block inserted before ``</robot>``:

- ``<ros2_control name=... type="system">`` with the hardware plugin of the ROS distro and one
  ``<joint>`` per arm joint: a ``position`` command interface whose ``min``/``max`` are the URDF
  position limits, ``position`` (``initial_value`` = the neutral pose) and ``velocity`` state
  interfaces. The robot's ``locked_joints`` (TIAGo's torso) start at their locked value. The other
  revolute and prismatic joints (head, grippers, hand) can be added the same way, starting at 0
  (clamped into their limits): no controller claims them, and gz_ros2_control holds joints
  whose interfaces no controller claims (``hold_joints``, true by default, in
  ``gz_ros2_control/src/gz_system.cpp``), so they do not flop.
- ``<gazebo><plugin filename=... name=...><parameters>controllers.yaml</parameters>``: the
  Gazebo system plugin that runs the controller manager with the controllers file.
- Optionally a ``world`` link welded to the root link (teleoperation moves the arms only), raised
  so that the lowest collision shape rigidly attached to the root touches the ground plane.

Plugin names per distro (gz_ros2_control ``README.md`` version table,
``ign_ros2_control/ign_hardware_plugins.xml@humble``, ``gz_ros2_control/gz_hardware_plugins.xml``
and ``doc/index.rst``): Humble (Gazebo Fortress) uses ``ign_ros2_control/IgnitionSystem`` and the
system plugin ``ign_ros2_control-system`` / ``ign_ros2_control::IgnitionROS2ControlPlugin``; Jazzy,
Kilted and Rolling (Gazebo Harmonic and later) use ``gz_ros2_control/GazeboSimSystem`` and
``gz_ros2_control-system`` / ``gz_ros2_control::GazeboSimROS2ControlPlugin``. The ``/clock``
bridge type follows the same split: ros_gz_bridge's generated ``rosgraph_msgs`` factory takes
``gz.msgs.Clock`` (and the old ``ignition.msgs.Clock``) on Harmonic, the Humble/Fortress bridge
only ``ignition.msgs.Clock``.

This module is part of the core (standard library, numpy, PyYAML, pic_ros): no ROS, no launch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any
from xml.etree import ElementTree
from xml.sax.saxutils import escape, quoteattr

import numpy as np
from pic_ros.checks import check_choice
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.robot.kinematics.robot_model import JointType
from pic_ros.robot.kinematics.transforms import transform_from_xyz_rpy
from pic_ros.robot.robot import load_robot, Robot
import yaml

WORLD_LINK = 'world'
WORLD_JOINT = 'pic_ros_world_joint'
BROADCASTER_TYPE = 'joint_state_broadcaster/JointStateBroadcaster'
TRAJECTORY_CONTROLLER_TYPE = 'joint_trajectory_controller/JointTrajectoryController'


@dataclass(frozen=True)
class GazeboNames:
    """
    The gz_ros2_control and ros_gz names of one ROS distro.

    :param hardware_plugin: ros2_control hardware plugin, the ``<hardware><plugin>`` text.
    :param system_filename: ``filename`` of the Gazebo system plugin.
    :param system_name: ``name`` (class) of the Gazebo system plugin.
    :param component_name: ``name`` of the ``<ros2_control>`` element.
    :param clock_message: Gazebo message type of ``/clock`` for ros_gz_bridge's
        ``parameter_bridge`` (``/clock@rosgraph_msgs/msg/Clock[<type>``).
    """

    hardware_plugin: str
    system_filename: str
    system_name: str
    component_name: str
    clock_message: str


_FORTRESS = GazeboNames(
    hardware_plugin='ign_ros2_control/IgnitionSystem',
    system_filename='ign_ros2_control-system',
    system_name='ign_ros2_control::IgnitionROS2ControlPlugin',
    component_name='IgnitionSystem',
    clock_message='ignition.msgs.Clock',
)
_HARMONIC = GazeboNames(
    hardware_plugin='gz_ros2_control/GazeboSimSystem',
    system_filename='gz_ros2_control-system',
    system_name='gz_ros2_control::GazeboSimROS2ControlPlugin',
    component_name='GazeboSimSystem',
    clock_message='gz.msgs.Clock',
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
    """

    name: str
    lower: float | None
    upper: float | None
    initial: float


def gazebo_names(distro: str) -> GazeboNames:
    """
    Return the gz_ros2_control plugin names and the clock message type of a ROS distro.

    :param distro: ``humble``, ``jazzy``, ``kilted`` or ``rolling`` (case-insensitive).
    :return: The names.
    :raises ConfigError: For any other distro (the message lists the supported ones).
    """
    key = check_choice('distro', str(distro).strip().lower(), sorted(NAMES_BY_DISTRO))
    return NAMES_BY_DISTRO[key]


def controller_names(controllers_file: str | Path) -> tuple[str, ...]:
    """
    List the controllers a ros2_control controllers file declares, in file order.

    :param controllers_file: YAML with a ``controller_manager: ros__parameters:`` block that
        gives each controller's ``type``.
    :return: Controller names, joint state broadcasters first (they must run before the
        trajectory controllers are spawned).
    :raises ConfigError: If the file cannot be read or has no controller.
    """
    path = Path(controllers_file)
    try:
        data = yaml.safe_load(path.read_text(encoding='utf-8'))
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f'cannot read controllers file {path}: {err}') from err
    try:
        manager = data['controller_manager']['ros__parameters']
    except (KeyError, TypeError) as err:
        raise ConfigError(
            f'{path}: expected a controller_manager: ros__parameters: block'
        ) from err
    declared = [
        (name, entry['type'])
        for name, entry in manager.items()
        if isinstance(entry, dict) and isinstance(entry.get('type'), str)
    ]
    if not declared:
        raise ConfigError(f'{path}: the controller_manager block declares no controller')
    broadcasters = [name for name, kind in declared if kind == BROADCASTER_TYPE]
    others = [name for name, kind in declared if kind != BROADCASTER_TYPE]
    return tuple(broadcasters + others)


def control_joints(robot: Robot, *, hold_other_joints: bool = True) -> tuple[ControlJoint, ...]:
    """
    List the joints of the ``<ros2_control>`` block of a robot.

    :param robot: The robot.
    :param hold_other_joints: Also list the revolute and prismatic joints that no controller
        drives and that are not locked (mimic joints excluded), starting at 0 clamped into their
        limits.
    :return: Controlled joints (arms, head, grippers; robot file order), then locked joints,
        then the others (URDF order).
    :raises ChainError: If a locked joint is not a movable joint of the URDF.
    """
    joints: list[ControlJoint] = []
    for group in robot.groups.values():
        for index, name in enumerate(group.joint_names):
            joints.append(
                _control_joint(
                    name, float(group.lower[index]), float(group.upper[index]),
                    group.neutral[index],
                )
            )
    listed = {joint.name for joint in joints}
    for name, value in robot.spec.locked_joints.items():
        joint = robot.model.joints.get(name)
        if joint is None or joint.limits is None:
            raise ChainError(f'locked joint {name!r} is not a movable joint of {robot.urdf_file}')
        joints.append(_control_joint(name, joint.limits.lower, joint.limits.upper, value))
        listed.add(name)
    if hold_other_joints:
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
    return tuple(joints)


def _control_joint(name: str, lower: float, upper: float, initial: Any) -> ControlJoint:
    """Make a joint entry; an infinite limit (continuous joint) gets no min/max."""
    return ControlJoint(
        name=name,
        lower=lower if math.isfinite(lower) else None,
        upper=upper if math.isfinite(upper) else None,
        initial=float(initial),
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
    fixed_base: bool = True,
) -> str:
    """
    Return the robot's URDF with the ros2_control and Gazebo tags gz_ros2_control needs.

    The text of the shipped URDF is kept byte for byte; the new elements are inserted just before
    the closing ``</robot>``. Publish the result as ``robot_description`` (robot_state_publisher)
    and spawn it with ``ros_gz_sim create -topic robot_description``.

    :param robot: Robot name (``baxter``, ``yumi``, ``tiago``), robot YAML path, or a loaded robot.
    :param controllers_file: Controllers YAML given to the controller manager (absolute path
        recommended: the plugin reads it from the simulator's working directory otherwise).
    :param distro: ROS distro, picks the plugin names (see :data:`NAMES_BY_DISTRO`).
    :param hold_other_joints: Also put the non-arm joints under ros2_control so they hold still.
    :param fixed_base: Weld the root link to the ``world`` (unless the URDF already has a
        ``world`` root), raised by :func:`base_height`.
    :return: The URDF text for Gazebo.
    :raises ConfigError: For an unknown distro or robot.
    :raises ChainError: If the URDF cannot be used (no ``</robot>``, a ``world`` link that is
        not the root).
    """
    names = gazebo_names(distro)
    loaded = robot if isinstance(robot, Robot) else load_robot(robot)
    text = loaded.urdf_file.read_text(encoding='utf-8')
    end = text.rfind('</robot>')
    if end < 0:
        raise ChainError(f'{loaded.urdf_file} has no closing </robot> tag')
    lines = ['', '  <!-- Added by pic_ros for gz_ros2_control; not in the shipped URDF -->']
    lines += _ros2_control_lines(control_joints(loaded, hold_other_joints=hold_other_joints),
                                 names)
    lines += _plugin_lines(Path(controllers_file), names)
    if fixed_base:
        lines += _world_lines(loaded)
    block = '\n'.join(lines) + '\n'
    return text[:end] + block + text[end:]


def _number(value: float) -> str:
    return repr(float(value))


def _ros2_control_lines(joints: Sequence[ControlJoint], names: GazeboNames) -> list[str]:
    lines = [
        f'  <ros2_control name={quoteattr(names.component_name)} type="system">',
        '    <hardware>',
        f'      <plugin>{escape(names.hardware_plugin)}</plugin>',
        '    </hardware>',
    ]
    for joint in joints:
        lines.append(f'    <joint name={quoteattr(joint.name)}>')
        lines.append('      <command_interface name="position">')
        if joint.lower is not None:
            lines.append(f'        <param name="min">{_number(joint.lower)}</param>')
        if joint.upper is not None:
            lines.append(f'        <param name="max">{_number(joint.upper)}</param>')
        lines.append('      </command_interface>')
        lines.append('      <state_interface name="position">')
        lines.append(f'        <param name="initial_value">{_number(joint.initial)}</param>')
        lines.append('      </state_interface>')
        lines.append('      <state_interface name="velocity"/>')
        lines.append('    </joint>')
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
