"""
The launch arguments of ``teleop.launch.py`` and ``multi_robot.launch.py``, from the tables.

``multi_robot.launch.py``'s ``robots`` (robot types and the namespaces chosen for them) is read
by :func:`placed_robots`.

The arguments that set node parameters (:data:`~pic_ros.ros.schema.LAUNCH_ARGUMENTS`) take their
description, choices and checks from the parameter tables, so a solver or tracker registered by a
plug-in is accepted by the launch files as by the nodes. An empty argument keeps the value of the
parameter file. Plain Python (no ``launch`` import): the launch files call it, and tests run it
without a ROS installation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import os
import re
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


def _describe(nodes: Sequence[str], definition: ParameterDef) -> LaunchArgument:
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
    kept = (
        f"{nodes[0]}'s value in params_file" if len(nodes) == 1
        else f"the value in params_file of {', '.join(nodes)}"
    )
    return LaunchArgument(definition.name, '', f'{text}. Empty: {kept} ({default})')


def parameter_arguments(names: tuple[str, ...] | None = None) -> list[LaunchArgument]:
    """
    Describe the launch arguments that set node parameters.

    :param names: Only these arguments (default: all of :data:`LAUNCH_ARGUMENTS`).
    :return: The arguments, in :data:`LAUNCH_ARGUMENTS` order, one per name.
    """
    owners: dict[str, list[str]] = {}  # a name several nodes have: one argument for them all
    for node, name in LAUNCH_ARGUMENTS:
        if names is None or name in names:
            owners.setdefault(name, []).append(node)
    return [_describe(nodes, TABLES[nodes[0]][name]) for name, nodes in owners.items()]


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


_NAMESPACE = re.compile(r'[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*')
"""A relative ROS namespace: name tokens (a letter or ``_`` first) joined by ``/``."""


@dataclass(frozen=True)
class PlacedRobot:
    """
    One robot of ``multi_robot.launch.py`` and the namespace its nodes run in.

    :param robot: Robot name (a robot file of ``config/``).
    :param namespace: Absolute namespace of its nodes and topics, e.g. ``/left_cell``.
    """

    robot: str
    namespace: str


def placed_robots(text: str, known: Sequence[str]) -> list[PlacedRobot]:
    """
    Parse the ``robots`` launch argument: ``ROBOT[:NAMESPACE]`` items, comma-separated.

    A robot without a namespace runs in ``/<robot>``; ``baxter:left_cell,baxter:right_cell``
    runs two Baxters side by side. An item given twice (same robot, same namespace) counts once.

    :param text: The argument, e.g. ``baxter,tiago`` or ``baxter:left_cell,baxter:right_cell``.
    :param known: The robot names accepted.
    :return: The robots in the given order.
    :raises ConfigError: If the list is empty, names an unknown robot or an invalid namespace,
        or gives one namespace to two robots (their topics would mix).
    """
    placed: list[PlacedRobot] = []
    owners: dict[str, str] = {}
    for item in text.split(','):
        name, _, namespace = (part.strip() for part in item.partition(':'))
        if not name and not namespace:
            continue
        if name not in known:
            raise ConfigError(
                f'robots: {name!r} is not one of {", ".join(known)}; nothing was started')
        relative = (namespace or name).strip('/')
        if not _NAMESPACE.fullmatch(relative):
            raise ConfigError(
                f'robots: {item.strip()!r}: {namespace!r} is not a namespace (name tokens of '
                'letters, digits and _, not starting with a digit, joined by /)')
        one = PlacedRobot(name, '/' + relative)
        if one in placed:
            continue
        if one.namespace in owners:
            raise ConfigError(
                f'robots: the namespace {one.namespace} is given twice ({owners[one.namespace]} '
                f'and {name}); give each robot its own, e.g. {name}:{name}_2')
        owners[one.namespace] = name
        placed.append(one)
    if not placed:
        raise ConfigError(f'robots is empty; give some of {", ".join(known)}')
    return placed


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
