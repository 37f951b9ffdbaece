"""
Robot description files, ``config/<robot>.yaml``: all that is robot-specific beyond the URDF.

A robot file names the URDF, the base frame the person is mapped into, the joints held still while
imitating (``locked_joints``, e.g. TIAGo's torso), and per arm: its side, joints, the shoulder /
elbow / wrist landmark joints (``docs/method.md#robot-landmarks-and-the-point-chain``), the
tool link, the neutral pose, the ros2_control controller that drives it and, optionally, the
joints' acceleration and jerk limits (URDFs carry velocity limits only). Adding a robot means
adding a URDF and one of these files.

Example (units: radians for revolute joints, metres for prismatic ones)::

    name: baxter
    urdf: baxter.urdf
    base_frame: base
    locked_joints: {}
    arms:
      left:
        side: left
        tool_link: left_hand
        joints: [left_s0, left_s1, left_e0, left_e1, left_w0, left_w1, left_w2]
        landmarks: {shoulder: left_s1, elbow: left_e1, wrist: left_w1}
        neutral: [-0.08, -1.0, -1.19, 1.94, 0.67, 1.03, -0.5]
        controller: left_arm_controller
        acceleration_limits: [4.5, 4.5, 4.5, 4.5, 12.0, 12.0, 12.0]   # [rad/s^2], optional
        jerk_limits: [450.0, 450.0, 450.0, 450.0, 1200.0, 1200.0, 1200.0]   # [rad/s^3], optional
    mapping: {mode: same_side, correspondence: direction}

Optional sections drive the head and the grippers (``docs/method.md#head-and-hands``)::

    head:
      controller: head_controller
      yaw: head_1_joint            # turns the head left/right, optional
      pitch: head_2_joint          # tilts it up/down, optional (one of the two is needed)
      neutral: [0.0, 0.0]          # yaw then pitch, for the joints given [rad]
      velocity_limits: [1.0]       # [rad/s], optional: replaces the URDF's (placeholders)
    grippers:
      left:                        # the arm it ends; that arm's human hand drives it
        controller: left_gripper_controller
        joints: [gripper_l_joint]
        open: [0.025]              # [rad] or [m], one value per joint
        closed: [0.0]
        neutral: [0.025]           # where tracking loss takes it, optional (default: open)
        action:                    # optional: GripperCommand settings (gripper_interface)
          max_effort: 20.0         # [N] or [N m], > 0
          name: left_gripper_controller/gripper_cmd   # optional: this is the default
          joint: gripper_l_joint   # optional: the goal's position is its value (default: first)
          threshold: 0.002         # optional: least change sending a goal [m] or [rad]

With the trajectory publisher's ``gripper_interface`` ``gripper_action`` every gripper needs an
``action`` entry (:class:`GripperActionSpec`); without it the entry is not used.

An optional ``torso`` section makes a prismatic torso joint on the arm chains a commanded group
(``torso``, :mod:`pic_ros.robot.torso`): held at ``neutral`` (the arm solvers assume that value),
moved by the whole-body solver (:mod:`pic_ros.solvers.prioritized`) when it is on::

    torso:
      joint: torso_lift_joint      # prismatic, on the chain of every arm it serves
      controller: torso_controller
      neutral: 0.15                # [m]
      arms: [arm]                  # the arms riding on it, optional (default: every arm)
      velocity_limits: [0.07]      # [m/s], optional, like the other groups' limits

Optional ``mobile_base`` (a differential base: its topics and limits) and
``force_torque_sensors`` (wrist sensors by arm) sections are described in
:mod:`pic_ros.robot.mobile_base`; the simulation uses them.

Without ``acceleration_limits`` an arm (the head, a gripper) gets
:data:`ACCELERATION_PER_VELOCITY` times its URDF velocity limits, and without ``jerk_limits``
:data:`JERK_PER_ACCELERATION` times its acceleration limits
(:attr:`~pic_ros.robot.arm.ArmModel.acceleration`, ``jerk``): rules, not robot data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from pic_ros.checks import check_choice
from pic_ros.exceptions import ConfigError
from pic_ros.resources import read_yaml
from pic_ros.robot.collision_spec import CollisionSpec, WorkspaceSpec
from pic_ros.robot.mapping_defaults import MappingDefaults
from pic_ros.robot.mobile_base import (
    force_torque_specs,
    ForceTorqueSensorSpec,
    mobile_base_spec,
    MobileBaseSpec,
)
from pic_ros.skeleton import Side

LANDMARKS = ('shoulder', 'elbow', 'wrist')

ACCELERATION_PER_VELOCITY: Final = 3.0
"""
Acceleration limit per unit of velocity limit [1/s] for an arm whose file gives none.

A joint then reaches its velocity limit from rest in 1/3 s: a conservative choice (none of the
shipped robots publishes joint acceleration limits), not a robot datum.
"""

JERK_PER_ACCELERATION: Final = 100.0
"""
Jerk limit per unit of acceleration limit [1/s] for an arm whose file gives none.

A joint then builds up its full acceleration in 1/100 s = 10 ms: one period of a 100 Hz
joint_trajectory_controller and of the 10 ms point grid the trajectory publisher streams, the
shortest ramp such a controller resolves. A longer ramp only delays every change of
acceleration: with 50 ms (20 /s, this rule until November 2026) the time-optimal stream lagged
the person 40-60 ms more on the shipped demo (``docs/method.md#motion-generation``). Franka
Emika, the one maker of a 7-axis arm we know to publish joint jerk limits, allows 500 /s. None
of the shipped robots publishes jerk limits: a rule, not a robot datum.
"""


@dataclass(frozen=True)
class ArmSpec:
    """
    One arm of a robot, as written in its YAML file.

    :param name: Arm name, unique in the robot (``left``, ``right``, ``arm``).
    :param side: Side of the robot the arm is on; ``same_side`` mapping drives it with the
        person's arm of the same side.
    :param tool_link: Last link of the arm chain (flange or tool).
    :param joints: Controlled joints, base to tip.
    :param shoulder: Shoulder landmark joint.
    :param elbow: Elbow landmark joint.
    :param wrist: Wrist landmark joint.
    :param neutral: Neutral pose, one value per joint [rad] or [m].
    :param controller: Name of the joint_trajectory_controller of this arm.
    :param acceleration_limits: Acceleration limit per joint, > 0 [rad/s^2] or [m/s^2], or None
        for the rule :data:`ACCELERATION_PER_VELOCITY`.
    :param jerk_limits: Jerk limit per joint, > 0 [rad/s^3] or [m/s^3], or None for the rule
        :data:`JERK_PER_ACCELERATION`.
    """

    name: str
    side: Side
    tool_link: str
    joints: tuple[str, ...]
    shoulder: str
    elbow: str
    wrist: str
    neutral: tuple[float, ...]
    controller: str
    acceleration_limits: tuple[float, ...] | None = None
    jerk_limits: tuple[float, ...] | None = None


@dataclass(frozen=True)
class GroupLimits:
    """
    Optional per-joint limits of a joint group of the robot file, replacing or adding to the URDF.

    :param velocity: Velocity limits, > 0 [rad/s] or [m/s], or None for the URDF's.
    :param acceleration: Acceleration limits, > 0 [rad/s^2] or [m/s^2], or None for the rule
        :data:`ACCELERATION_PER_VELOCITY`.
    :param jerk: Jerk limits, > 0 [rad/s^3] or [m/s^3], or None for the rule
        :data:`JERK_PER_ACCELERATION`.
    """

    velocity: tuple[float, ...] | None = None
    acceleration: tuple[float, ...] | None = None
    jerk: tuple[float, ...] | None = None


@dataclass(frozen=True)
class HeadSpec:
    """
    The robot's head, as written in its YAML file (``head``).

    :param controller: Name of the joint_trajectory_controller of the head joints.
    :param yaw: Joint that turns the head about the vertical, or None.
    :param pitch: Joint that tilts it up and down, or None (at least one of the two is given).
    :param neutral: Neutral value of :attr:`joints`, in that order [rad].
    :param limits: Optional limits replacing the URDF's.
    """

    controller: str
    yaw: str | None
    pitch: str | None
    neutral: tuple[float, ...]
    limits: GroupLimits = GroupLimits()

    @property
    def joints(self) -> tuple[str, ...]:
        """Return the head joints: the yaw joint, then the pitch joint, those given."""
        return tuple(name for name in (self.yaw, self.pitch) if name is not None)


GRIPPER_GOAL_SHARE: Final = 0.05
"""
Default least change of a gripper's commanded opening that sends a new ``GripperCommand`` goal,
as a share of its joint's open-to-closed distance: a rule, not a robot datum.
"""


@dataclass(frozen=True)
class GripperActionSpec:
    """
    How a gripper is commanded through a ``control_msgs/action/GripperCommand`` server.

    The goal's ``command.position`` is the commanded value of one joint (:attr:`joint`), in that
    joint's unit: [m] for a prismatic joint, [rad] for a revolute one, as ros2_controllers'
    gripper_action_controller takes it (it commands that one joint's position).

    :param name: Action name, relative to the node's namespace (``<controller>/gripper_cmd``
        by default, the name gripper_action_controller serves).
    :param joint: The gripper joint whose value is the goal's position (default: the first).
    :param max_effort: The goal's ``command.max_effort`` [N] (prismatic) or [N m] (revolute),
        > 0: an effort-interface controller limits its effort to it (0 would give no force).
    :param threshold: Least change of the commanded position that sends a new goal, > 0,
        [m] or [rad] (default: :data:`GRIPPER_GOAL_SHARE` of the open-to-closed distance).
    """

    name: str
    joint: str
    max_effort: float
    threshold: float


@dataclass(frozen=True)
class GripperSpec:
    """
    One gripper, as written in the robot's YAML file (``grippers.<arm>``).

    :param arm: The arm it ends (a key of ``arms``); the human hand driving that arm drives it.
    :param controller: Name of the joint_trajectory_controller of the gripper joints.
    :param joints: Actuated gripper joints (mimic joints follow them and are not listed).
    :param open_position: Joint values of the open gripper (``open``) [rad] or [m].
    :param closed_position: Joint values of the closed gripper (``closed``) [rad] or [m].
    :param neutral: Joint values tracking loss takes it to (default: ``open``).
    :param limits: Optional limits replacing the URDF's.
    :param action: Its ``GripperCommand`` settings (``action``), or None when the file has none.
    """

    arm: str
    controller: str
    joints: tuple[str, ...]
    open_position: tuple[float, ...]
    closed_position: tuple[float, ...]
    neutral: tuple[float, ...]
    limits: GroupLimits = GroupLimits()
    action: GripperActionSpec | None = None


@dataclass(frozen=True)
class TorsoSpec:
    """
    The robot's torso lift, as written in its YAML file (``torso``).

    :param joint: The prismatic torso joint; it lies on the chain of every arm in :attr:`arms`.
    :param controller: Name of the joint_trajectory_controller of the torso joint.
    :param neutral: Its value while whole-body imitation is off [m] (the arm solvers assume it).
    :param arms: The arms that ride on it (keys of ``arms``), file order.
    :param limits: Optional limits replacing the URDF's (one value each).
    """

    joint: str
    controller: str
    neutral: float
    arms: tuple[str, ...]
    limits: GroupLimits = GroupLimits()

    @property
    def joints(self) -> tuple[str, ...]:
        """Return the one torso joint in a tuple, as the other groups list their joints."""
        return (self.joint,)


@dataclass(frozen=True)
class RobotSpec:
    """
    A robot description file.

    :param name: Robot name.
    :param urdf: URDF file, absolute or relative to the package's ``urdf/`` folder.
    :param base_frame: Base link; every solver position is in this frame [m].
    :param arms: Arms by name, in file order.
    :param locked_joints: Joints held at a fixed value while imitating [rad] or [m].
    :param mapping: The file's ``mapping`` section: the default human -> robot mapping (mode,
        correspondence; :mod:`pic_ros.robot.mapping_defaults`), made into a
        :class:`~pic_ros.correspondence.base.MappingConfig` by ``MappingConfig.from_robot``.
    :param source: File the spec was read from, for messages.
    :param head: The head, or None when the file has no ``head``.
    :param grippers: Grippers by the name of the arm they end (empty when none).
    :param mobile_base: The mobile base, or None when the file has no ``mobile_base``
        (:mod:`pic_ros.robot.mobile_base`).
    :param force_torque_sensors: Wrist force/torque sensors by arm name (empty when none).
    :param torso: The torso lift, or None when the file has no ``torso``.
    :param collision: The ``collision`` section (:mod:`pic_ros.robot.collision_spec`).
    :param workspace: The ``workspace`` bounds, or None when the file has none.
    """

    name: str
    urdf: str
    base_frame: str
    arms: Mapping[str, ArmSpec]
    locked_joints: Mapping[str, float]
    mapping: MappingDefaults
    source: str = '<memory>'
    head: HeadSpec | None = None
    grippers: Mapping[str, GripperSpec] = field(default_factory=lambda: MappingProxyType({}))
    mobile_base: MobileBaseSpec | None = None
    force_torque_sensors: Mapping[str, ForceTorqueSensorSpec] = field(
        default_factory=lambda: MappingProxyType({})
    )
    torso: TorsoSpec | None = None
    collision: CollisionSpec = CollisionSpec()
    workspace: WorkspaceSpec | None = None


def _require(data: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise ConfigError(f'{where}: missing key {key!r}')
    return data[key]


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{where} must be a non-empty list of names, got {value!r}')
    if len(set(value)) != len(value):
        raise ConfigError(f'{where} lists a joint twice: {value!r}')
    return tuple(value)


def _number_list(value: Any, where: str, length: int) -> tuple[float, ...]:
    if (
        not isinstance(value, list)
        or len(value) != length
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    ):
        raise ConfigError(f'{where} must be a list of {length} numbers, got {value!r}')
    return tuple(float(v) for v in value)


def _limit_list(
    data: Mapping[str, Any], key: str, where: str, length: int
) -> tuple[float, ...] | None:
    """Read an optional per-joint list of limits: finite numbers > 0."""
    if key not in data:
        return None
    values = _number_list(data[key], f'{where}.{key}', length)
    if not all(math.isfinite(v) and v > 0.0 for v in values):
        raise ConfigError(f'{where}.{key} must be finite numbers > 0, got {list(values)}')
    return values


def _check_keys(data: Any, where: str, required: set[str], optional: set[str]) -> None:
    if not isinstance(data, dict):
        raise ConfigError(f'{where} must be a mapping')
    known = required | optional
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f'{where}: unknown keys {unknown}; known: {sorted(known)}')
    for key in sorted(required):
        _require(data, key, where)


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f'{where} must be a non-empty string, got {value!r}')
    return value


def _group_limits(data: Mapping[str, Any], where: str, length: int) -> GroupLimits:
    return GroupLimits(
        velocity=_limit_list(data, 'velocity_limits', where, length),
        acceleration=_limit_list(data, 'acceleration_limits', where, length),
        jerk=_limit_list(data, 'jerk_limits', where, length),
    )


_LIMIT_KEYS = {'velocity_limits', 'acceleration_limits', 'jerk_limits'}


def _head_spec(data: Any, where: str) -> HeadSpec:
    _check_keys(data, where, {'controller', 'neutral'}, {'yaw', 'pitch'} | _LIMIT_KEYS)
    yaw = None if data.get('yaw') is None else _name(data['yaw'], f'{where}.yaw')
    pitch = None if data.get('pitch') is None else _name(data['pitch'], f'{where}.pitch')
    if yaw is None and pitch is None:
        raise ConfigError(f'{where} needs a yaw joint, a pitch joint or both')
    if yaw is not None and yaw == pitch:
        raise ConfigError(f'{where}: yaw and pitch are the same joint {yaw!r}')
    count = (yaw is not None) + (pitch is not None)
    return HeadSpec(
        controller=_name(data['controller'], f'{where}.controller'),
        yaw=yaw,
        pitch=pitch,
        neutral=_number_list(data['neutral'], f'{where}.neutral', count),
        limits=_group_limits(data, where, count),
    )


def _gripper_spec(arm: str, data: Any, where: str) -> GripperSpec:
    _check_keys(
        data, where, {'controller', 'joints', 'open', 'closed'},
        {'neutral', 'action'} | _LIMIT_KEYS,
    )
    joints = _string_list(data['joints'], f'{where}.joints')
    opened = _number_list(data['open'], f'{where}.open', len(joints))
    closed = _number_list(data['closed'], f'{where}.closed', len(joints))
    if opened == closed:
        raise ConfigError(f'{where}: open and closed are the same position')
    neutral = (
        _number_list(data['neutral'], f'{where}.neutral', len(joints))
        if 'neutral' in data else opened
    )
    controller = _name(data['controller'], f'{where}.controller')
    action = None
    if data.get('action') is not None:
        action = _gripper_action_spec(
            data['action'], f'{where}.action', controller, joints, opened, closed
        )
    return GripperSpec(
        arm=arm,
        controller=controller,
        joints=joints,
        open_position=opened,
        closed_position=closed,
        neutral=neutral,
        limits=_group_limits(data, where, len(joints)),
        action=action,
    )


def _positive(value: Any, where: str) -> float:
    if (
        not isinstance(value, (int, float)) or isinstance(value, bool)
        or not math.isfinite(value) or value <= 0.0
    ):
        raise ConfigError(f'{where} must be a number > 0, got {value!r}')
    return float(value)


def _gripper_action_spec(
    data: Any, where: str, controller: str, joints: tuple[str, ...],
    opened: tuple[float, ...], closed: tuple[float, ...],
) -> GripperActionSpec:
    """Read a gripper's ``action`` entry, its defaults filled in."""
    _check_keys(data, where, {'max_effort'}, {'name', 'joint', 'threshold'})
    joint = _name(data.get('joint', joints[0]), f'{where}.joint')
    if joint not in joints:
        raise ConfigError(f'{where}.joint: {joint!r} is not a gripper joint; joints: {joints}')
    index = joints.index(joint)
    travel = abs(opened[index] - closed[index])
    if travel == 0.0:
        raise ConfigError(f'{where}.joint: {joint!r} is the same open and closed')
    threshold = (
        _positive(data['threshold'], f'{where}.threshold') if 'threshold' in data
        else GRIPPER_GOAL_SHARE * travel
    )
    if threshold >= travel:
        raise ConfigError(
            f'{where}.threshold must be below the open-to-closed distance {travel!r} of '
            f'{joint!r} (else opening or closing sends no goal), got {threshold!r}'
        )
    return GripperActionSpec(
        name=_name(data.get('name', f'{controller}/gripper_cmd'), f'{where}.name'),
        joint=joint,
        max_effort=_positive(data['max_effort'], f'{where}.max_effort'),
        threshold=threshold,
    )


def _torso_spec(data: Any, where: str, arms: Mapping[str, ArmSpec]) -> TorsoSpec:
    _check_keys(data, where, {'joint', 'controller', 'neutral'}, {'arms'} | _LIMIT_KEYS)
    neutral = data['neutral']
    if (
        not isinstance(neutral, (int, float)) or isinstance(neutral, bool)
        or not math.isfinite(neutral)
    ):
        raise ConfigError(f'{where}.neutral must be a number, got {neutral!r}')
    served = (
        tuple(arms) if data.get('arms') is None else _string_list(data['arms'], f'{where}.arms')
    )
    unknown = [arm for arm in served if arm not in arms]
    if unknown:
        raise ConfigError(f'{where}.arms: {unknown} are not arms; arms: {", ".join(arms)}')
    return TorsoSpec(
        joint=_name(data['joint'], f'{where}.joint'),
        controller=_name(data['controller'], f'{where}.controller'),
        neutral=float(neutral),
        arms=served,
        limits=_group_limits(data, where, 1),
    )


def _arm_spec(name: str, data: Any, where: str) -> ArmSpec:
    if not isinstance(data, dict):
        raise ConfigError(f'{where} must be a mapping')
    known = {
        'side', 'tool_link', 'joints', 'landmarks', 'neutral', 'controller',
        'acceleration_limits', 'jerk_limits',
    }
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f'{where}: unknown keys {unknown}; known: {sorted(known)}')
    side = Side(check_choice(f'{where}.side', _require(data, 'side', where), ('left', 'right')))
    joints = _string_list(_require(data, 'joints', where), f'{where}.joints')
    landmarks = _require(data, 'landmarks', where)
    if not isinstance(landmarks, dict) or set(landmarks) != set(LANDMARKS):
        raise ConfigError(f'{where}.landmarks must map exactly {LANDMARKS} to joint names')
    for key in LANDMARKS:
        if landmarks[key] not in joints:
            raise ConfigError(
                f'{where}.landmarks.{key} = {landmarks[key]!r} is not one of the arm joints'
            )
    order = [joints.index(landmarks[key]) for key in LANDMARKS]
    if not order[0] < order[1] < order[2]:
        raise ConfigError(f'{where}.landmarks must be in chain order shoulder < elbow < wrist')
    neutral = _number_list(_require(data, 'neutral', where), f'{where}.neutral', len(joints))
    tool_link = _require(data, 'tool_link', where)
    controller = _require(data, 'controller', where)
    for key, value in (('tool_link', tool_link), ('controller', controller)):
        if not isinstance(value, str) or not value:
            raise ConfigError(f'{where}.{key} must be a non-empty string')
    return ArmSpec(
        name=name,
        side=side,
        tool_link=tool_link,
        joints=joints,
        shoulder=landmarks['shoulder'],
        elbow=landmarks['elbow'],
        wrist=landmarks['wrist'],
        neutral=neutral,
        controller=controller,
        acceleration_limits=_limit_list(data, 'acceleration_limits', where, len(joints)),
        jerk_limits=_limit_list(data, 'jerk_limits', where, len(joints)),
    )


_KNOWN_KEYS: Final = frozenset({
    'name', 'urdf', 'base_frame', 'arms', 'locked_joints', 'mapping', 'head', 'grippers',
    'torso', 'mobile_base', 'force_torque_sensors', 'collision', 'workspace',
})
"""The keys of a robot file."""


def robot_spec_from_dict(data: Any, source: str = '<memory>') -> RobotSpec:
    """
    Validate the content of a robot YAML file.

    :param data: The parsed YAML document.
    :param source: Where it came from, for messages.
    :return: The validated spec.
    :raises ConfigError: On any missing, unknown or invalid key (the message names it).
    """
    name, urdf, base_frame = _identity(data, source)
    arms = _arms_section(data, source)
    locked = _locked_section(data, source, arms)
    mapping_data = data.get('mapping') or {}
    if not isinstance(mapping_data, dict):
        raise ConfigError(f'{source}: mapping must be a mapping')
    mapping = MappingDefaults.from_dict(mapping_data, where=f'{source}: mapping')
    head = None if data.get('head') is None else _head_spec(data['head'], f'{source}: head')
    grippers = _grippers_section(data, source, arms)
    torso = (
        None if data.get('torso') is None
        else _torso_spec(data['torso'], f'{source}: torso', arms)
    )
    _check_groups(source, arms, locked, torso, head, grippers)
    mobile_base = (
        None if data.get('mobile_base') is None
        else mobile_base_spec(data['mobile_base'], f'{source}: mobile_base')
    )
    sensors = force_torque_specs(
        data.get('force_torque_sensors') or {}, arms, f'{source}: force_torque_sensors'
    )
    return RobotSpec(
        name=name,
        urdf=urdf,
        base_frame=base_frame,
        arms=MappingProxyType(arms),
        locked_joints=MappingProxyType(locked),
        mapping=mapping,
        source=source,
        head=head,
        grippers=MappingProxyType(grippers),
        mobile_base=mobile_base,
        force_torque_sensors=MappingProxyType(sensors),
        torso=torso,
        collision=CollisionSpec.from_dict(data.get('collision'), f'{source}: collision'),
        workspace=WorkspaceSpec.from_dict(data.get('workspace'), f'{source}: workspace'),
    )


def _identity(data: Any, source: str) -> tuple[str, str, str]:
    """Check the file is a mapping of known keys; return its name, URDF and base frame."""
    if not isinstance(data, dict):
        raise ConfigError(f'{source}: a robot file must be a mapping')
    unknown = sorted(set(data) - _KNOWN_KEYS)
    if unknown:
        raise ConfigError(f'{source}: unknown keys {unknown}; known: {sorted(_KNOWN_KEYS)}')
    name = _require(data, 'name', source)
    urdf = _require(data, 'urdf', source)
    base_frame = _require(data, 'base_frame', source)
    for key, value in (('name', name), ('urdf', urdf), ('base_frame', base_frame)):
        if not isinstance(value, str) or not value:
            raise ConfigError(f'{source}: {key} must be a non-empty string')
    return name, urdf, base_frame


def _arms_section(data: Mapping[str, Any], source: str) -> dict[str, ArmSpec]:
    """Return the arms, each on its own side, no joint in two."""
    arms_data = _require(data, 'arms', source)
    if not isinstance(arms_data, dict) or not arms_data:
        raise ConfigError(f'{source}: arms must be a non-empty mapping of arm name to arm')
    arms = {
        str(arm): _arm_spec(str(arm), value, f'{source}: arms.{arm}')
        for arm, value in arms_data.items()
    }
    sides = [arm.side for arm in arms.values()]
    if len(set(sides)) != len(sides):
        raise ConfigError(f'{source}: two arms are on the same side')
    all_joints = [joint for arm in arms.values() for joint in arm.joints]
    if len(set(all_joints)) != len(all_joints):
        raise ConfigError(f'{source}: two arms share a joint')
    return arms


def _locked_section(
    data: Mapping[str, Any], source: str, arms: Mapping[str, ArmSpec]
) -> dict[str, float]:
    """Return the locked joints' values (none of them an arm joint)."""
    locked = data.get('locked_joints') or {}
    if not isinstance(locked, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in locked.values()
    ):
        raise ConfigError(f'{source}: locked_joints must map joint names to numbers')
    clash = sorted(set(locked) & {joint for arm in arms.values() for joint in arm.joints})
    if clash:
        raise ConfigError(f'{source}: locked joints {clash} are also arm joints')
    return {str(k): float(v) for k, v in locked.items()}


def _grippers_section(
    data: Mapping[str, Any], source: str, arms: Mapping[str, ArmSpec]
) -> dict[str, GripperSpec]:
    """Return the grippers by the arm that carries each."""
    grippers_data = data.get('grippers') or {}
    if not isinstance(grippers_data, dict):
        raise ConfigError(f'{source}: grippers must map arm names to grippers')
    grippers = {}
    for arm, value in grippers_data.items():
        if arm not in arms:
            raise ConfigError(
                f'{source}: grippers.{arm}: {arm!r} is not an arm; arms: {", ".join(arms)}'
            )
        grippers[str(arm)] = _gripper_spec(str(arm), value, f'{source}: grippers.{arm}')
    return grippers


def _check_groups(
    source: str,
    arms: Mapping[str, ArmSpec],
    locked: Mapping[str, float],
    torso: TorsoSpec | None,
    head: HeadSpec | None,
    grippers: Mapping[str, GripperSpec],
) -> None:
    """Refuse a torso, head or gripper that takes a joint or a controller already in use."""
    groups = [('torso', torso.joints, torso.controller)] if torso is not None else []
    groups += [('head', head.joints, head.controller)] if head is not None else []
    groups += [(f'grippers.{g.arm}', g.joints, g.controller) for g in grippers.values()]
    taken = {joint for arm in arms.values() for joint in arm.joints} | set(locked)
    controllers = {arm.controller for arm in arms.values()}
    for where, joints, controller in groups:
        clash = sorted(taken & set(joints))
        if clash:
            raise ConfigError(f'{source}: {where} uses joints {clash} that are used elsewhere')
        if controller in controllers:
            raise ConfigError(f'{source}: {where} uses the controller {controller!r} twice')
        taken |= set(joints)
        controllers.add(controller)


def load_robot_spec(path: str | Path) -> RobotSpec:
    """
    Read and validate a robot YAML file.

    :param path: The file.
    :return: The validated spec.
    :raises ConfigError: If the file cannot be read or is invalid.
    """
    return robot_spec_from_dict(read_yaml(path, 'robot file'), source=str(path))
