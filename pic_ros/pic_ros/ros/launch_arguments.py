"""
The launch arguments of ``teleop.launch.py`` and ``multi_robot.launch.py``, from the tables.

The arguments that set node parameters (:data:`~pic_ros.ros.schema.LAUNCH_ARGUMENTS`) take their
description, choices and checks from the parameter tables, so a solver or tracker registered by a
plug-in is accepted by the launch files as by the nodes. An empty argument keeps the value of the
parameter file. Plain Python (no ``launch`` import): the launch files call it, and tests run it
without a ROS installation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import os
from typing import Any, Final

from pic_ros.exceptions import ConfigError
from pic_ros.ros.schema import LAUNCH_ARGUMENTS, PIPELINE, ROBOT, TABLES
from pic_ros.schema import ParameterDef


@dataclass(frozen=True)
class LaunchArgument:
    """
    One declared launch argument.

    :param name: Argument name.
    :param default: Default text ('' keeps the parameter file's value).
    :param description: What it does, with its allowed values and the meaning of empty.
    :param choices: Allowed values for ``DeclareLaunchArgument`` (empty: not restricted there;
        checked by :func:`node_overrides` instead).
    """

    name: str
    default: str
    description: str
    choices: tuple[str, ...] = ()


FIXED: Final = frozenset({'source'})
"""Arguments with a real default (not "keep the file's value")."""


def _describe(node: str, definition: ParameterDef) -> LaunchArgument:
    allowed = definition.allowed()
    constraint = definition.constraint_text()
    text = definition.description
    if definition.unit:
        text += f' [{definition.unit}]'
    if allowed:
        text += f' (one of: {", ".join(allowed)})'
    elif constraint:
        text += f' ({constraint})'
    if definition.name in FIXED:
        return LaunchArgument(definition.name, str(definition.default), text, allowed)
    default = definition.default if definition.default != '' else "''"
    return LaunchArgument(
        definition.name, '', f"{text}. Empty: {node}'s value in params_file ({default})"
    )


def parameter_arguments(names: tuple[str, ...] | None = None) -> list[LaunchArgument]:
    """
    Describe the launch arguments that set node parameters.

    :param names: Only these arguments (default: all of :data:`LAUNCH_ARGUMENTS`).
    :return: The arguments, in :data:`LAUNCH_ARGUMENTS` order.
    """
    return [
        _describe(node, TABLES[node][name]) for node, name in LAUNCH_ARGUMENTS
        if names is None or name in names
    ]


def node_overrides(
    text: Callable[[str], str], robot: str, names: tuple[str, ...] | None = None
) -> dict[str, dict[str, Any]]:
    """
    Collect the parameter values that non-empty launch arguments set, per node.

    Values are typed as the parameters are (launch_ros would otherwise write an integer given
    as text as a YAML string, which an integer parameter refuses).

    :param text: Returns the text of a launch argument by name.
    :param robot: The robot of ``solver_node`` and ``trajectory_publisher``.
    :param names: Only these arguments (default: all of :data:`LAUNCH_ARGUMENTS`).
    :return: Values by node name.
    :raises ConfigError: Naming the argument and what it accepts (an empty robot too).
    """
    if not ROBOT.check(robot).strip():
        raise ConfigError('robot must not be empty')
    overrides: dict[str, dict[str, Any]] = {table.node: {} for table in PIPELINE}
    overrides['solver_node']['robot'] = robot
    overrides['trajectory_publisher']['robot'] = robot
    for node, name in LAUNCH_ARGUMENTS:
        if names is None or name in names:
            overrides[node].update(TABLES[node].from_text({name: text(name).strip()}))
    profile = overrides['solver_node'].get('user_profile')
    if profile:
        overrides['solver_node']['user_profile'] = os.path.expanduser(profile)
    return overrides


def teleop_options(overrides: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """
    Turn per-node overrides into the options of the ``teleop`` executable.

    :param overrides: From :func:`node_overrides` (with ``source`` and ``robot``).
    :return: ``--robot R --source S`` and one ``--param NODE.NAME=VALUE`` per other value.
    """
    skeleton = dict(overrides['skeleton_node'])
    solver = dict(overrides['solver_node'])
    trajectory = dict(overrides.get('trajectory_publisher', {}))
    trajectory.pop('robot', None)  # the same --robot
    options = ['--robot', str(solver.pop('robot')), '--source', str(skeleton.pop('source'))]
    for node, values in (
        ('skeleton_node', skeleton), ('solver_node', solver), ('trajectory_publisher', trajectory)
    ):
        for key, value in values.items():
            options += ['--param', f'{node}.{key}={value}']
    return options


def base_command_topic(robot: str, topic: str) -> str:
    """
    Return where ``follow_base:=true`` sends ``base_follower``'s ``cmd_vel``.

    :param robot: The robot (name or robot YAML).
    :param topic: The ``base_cmd_topic`` argument (empty: the robot file's).
    :return: ``topic``, or the ``command_topic`` of the robot file's ``mobile_base`` (TIAGo:
        ``mobile_base_controller/cmd_vel_unstamped``, the ``geometry_msgs/Twist`` input of PAL's
        ROS 2 diff_drive_controller configuration).
    :raises ConfigError: If ``topic`` is empty and the robot file has no ``mobile_base``.
    """
    from pic_ros.robot import load_robot

    topic = topic.strip()
    if topic:
        return topic
    loaded = load_robot(robot)
    if loaded.spec.mobile_base is None:
        raise ConfigError(
            f'follow_base:=true: {loaded.name} has no mobile_base in its robot file; give '
            "base_cmd_topic (the base controller's Twist input)"
        )
    return loaded.spec.mobile_base.command_topic


def wrench_remappings(robot: str, topic: str, arms: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """
    Return the remapping of a one-arm robot's wrist wrench topic onto the given one.

    :param robot: The robot (name or robot YAML).
    :param topic: The sensor's topic (``wrench_topic``; empty: no remapping).
    :param arms: The solved arms (``arms``; empty: every arm of the robot).
    :return: ``[(the arm's wrench topic, topic)]``, or ``[]`` when ``topic`` is empty.
    :raises ConfigError: If the robot has several solved arms (remap each arm's wrench topic
        instead) or cannot be loaded.
    """
    from pic_ros.motion.hand_compliance import wrench_topic
    from pic_ros.robot import load_robot

    topic = topic.strip()
    if not topic:
        return []
    loaded = load_robot(robot)
    solved = [arm for arm in arms if arm] or list(loaded.arms)
    if len(solved) != 1:
        raise ConfigError(
            f'wrench_topic:={topic} needs one solved arm; {robot} solves {", ".join(solved)}: '
            "remap each arm's wrench topic of solver_node instead"
        )
    return [(wrench_topic(loaded, solved[0]), topic)]
