"""
teleop: skeleton_node, solver_node and trajectory_publisher in one process, on one executor.

The lowest-latency path: the nodes hand their results to each other by direct calls (the skeleton
goes straight to the solver, the joint targets straight to the trajectory publisher), so a tracker
message costs one DDS hop in and one out. The intermediate topics (``skeleton``,
``joint_targets``, ``skeleton_markers``) are still published whenever something subscribes, for
RViz and debugging.

Only the newest frame is handed on, at every stage: the skeleton node reads every tracker message
waiting and processes the newest (the others are counted ``superseded``); it leaves the skeleton
in the solver's mailbox, from which the solver thread takes the newest when it is free (skipped
ones counted ``superseded``, ones older than ``max_frame_age`` ``too_old``). A busy computer
drops frames, counted on ``/diagnostics``, instead of driving the robot from a backlog. On the
system clock the solver thread steps the trajectory publisher itself; on simulated time
(``use_sim_time``) it leaves the targets for the executor's thread, which applies the newest
``/clock`` before it steps (the trajectory publisher's ``targets_superseded`` counts those
replaced while waiting), so that a starved process does not stamp its chunks with the time from
before the stall.

Run it with ``ros2 run pic_ros teleop`` (parameters by ``--ros-args -p node:name:=value``) or
``python -m pic_ros teleop --robot baxter --source azure_kinect``.

The robot starts disengaged (trajectory_publisher's ``start_engaged``): it holds still until an
operator calls ``/trajectory_publisher/engage`` (or makes the engage gesture, when solver_node's
``engage_gesture_time`` is set; it is handed over in-process). ``--engaged`` starts engaged.

``--whole-body`` solves the torso with the arm (solver_node's ``whole_body``); ``--follow-base``
adds ``base_follower`` to the process (the person's walking drives the mobile
base on ``--base-cmd-topic``; off by default, a moving base is opt-in); ``--admittance`` lets a
person push the hand (solver_node's ``admittance``, read from ``<arm>/wrist_wrench``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from pic_ros.exceptions import ConfigError, PicRosError
from pic_ros.ros.base_follower_node import BaseFollowerNode
from pic_ros.ros.launch_arguments import base_command_topic
from pic_ros.ros.runner import parse_command_line, run_nodes, START_FAILED
from pic_ros.ros.schema import (
    BASE_FOLLOWER,
    PIPELINE,
    ROBOT,
    SKELETON_NODE,
    SOLVER_NODE,
    TRAJECTORY_PUBLISHER,
)
from pic_ros.ros.skeleton_node import SkeletonNode
from pic_ros.ros.solver_node import SolverNode
from pic_ros.ros.trajectory_publisher_node import TrajectoryPublisherNode
from pic_ros.schema import add_option, ParameterTable
from rclpy.context import Context
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter


def make_executor(kind: str = 'single_threaded') -> Executor:
    """
    Return the executor that spins the pipeline.

    ``events`` is ``rclpy.experimental.EventsExecutor`` (Jazzy and later). It is not the default:
    with the Kilted wheels of PyPI its timers never fired in our tests (the hold / neutral timer
    and the diagnostics need them). The markers arrive on a raw subscription and are parsed
    without rclpy's message conversion, which is where the single-threaded executor loses time.

    :param kind: ``single_threaded`` or ``events``.
    :return: The executor.
    :raises PicRosError: If ``events`` is asked for and this rclpy has none.
    """
    if kind == 'events':
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError as err:
            raise PicRosError('this rclpy has no rclpy.experimental.EventsExecutor') from err
        return EventsExecutor()
    return SingleThreadedExecutor()


def _overrides(values: dict[str, Any], table: ParameterTable) -> list[Parameter]:
    """Make parameter overrides; an integer given for a floating-point parameter becomes one."""
    return [
        Parameter(name, value=table[name].value_for_ros(value)) if name in table
        else Parameter(name, value=value)  # a parameter the table lacks: the node refuses it
        for name, value in values.items()
    ]


def build_pipeline(
    robot: str,
    source: str,
    parameters: dict[str, dict[str, Any]] | None = None,
    *,
    context: Context | None = None,
    base_cmd_topic: str | None = None,
    solve_thread: bool = True,
) -> list[Node]:
    """
    Create the three nodes and connect them in-process (and base_follower if asked).

    :param robot: Robot name or robot YAML path.
    :param source: ``azure_kinect``, ``kinect_v2`` or ``xsens_mvn``.
    :param parameters: Extra parameter values per node name (``skeleton_node``, ``solver_node``,
        ``trajectory_publisher``, ``base_follower``).
    :param context: The rclpy context of the nodes (default: the global one).
    :param base_cmd_topic: Also create ``base_follower`` (``follow_base`` true), its ``cmd_vel``
        remapped to this topic; None: no base following.
    :param solve_thread: The solver takes the newest skeleton in its own thread (live). False:
        each skeleton is solved in the thread that produced it, still through the solver's
        mailbox (deterministic tests on a simulated clock).
    :return: The nodes, upstream first; destroy them in that order (:func:`destroy_pipeline`).
    """
    extra = parameters or {}
    nodes: list[Node] = []
    try:
        skeleton = SkeletonNode(
            start_input=False,  # once the solver is attached (below)
            context=context,
            parameter_overrides=_overrides(
                {'source': source, **extra.get('skeleton_node', {})}, SKELETON_NODE
            ),
        )
        nodes.append(skeleton)
        solver = SolverNode(
            subscribe=False,
            solve_thread=solve_thread,
            context=context,
            parameter_overrides=_overrides(
                {'robot': robot, **extra.get('solver_node', {})}, SOLVER_NODE
            ),
        )
        nodes.append(solver)
        trajectory = TrajectoryPublisherNode(
            subscribe=False,
            context=context,
            parameter_overrides=_overrides(
                {'robot': robot, **extra.get('trajectory_publisher', {})},
                TRAJECTORY_PUBLISHER,
            ),
        )
        nodes.append(trajectory)
        if base_cmd_topic is not None:
            nodes.append(BaseFollowerNode(
                context=context,
                cli_args=['--ros-args', '-r', f'cmd_vel:={base_cmd_topic}'],
                parameter_overrides=_overrides(
                    {**extra.get('base_follower', {}), 'follow_base': True}, BASE_FOLLOWER
                ),
            ))
        skeleton.add_person_handler(solver.set_person)  # before that person's first skeleton
        skeleton.add_person_handler(trajectory.set_person)  # another person disengages
        skeleton.add_handler(lambda _frame: solver.set_chest_height(skeleton.chest_height))
        skeleton.add_handler(solver.offer)  # the newest frame only: never waits for a solve
        solver.add_handler(trajectory.hand_over_targets)  # on sim time: via the executor
        solver.add_gesture_handler(trajectory.engage_by_gesture)
        skeleton.start_input()  # every skeleton from the first one on reaches the solver
    except BaseException:
        destroy_pipeline(nodes)
        raise
    return nodes


def destroy_pipeline(nodes: Sequence[Node]) -> None:
    """
    Destroy the nodes of a pipeline, upstream first.

    The source stops first (the Xsens receiver thread is joined), then the solver (its thread
    finishes the solve in progress), so nothing is handed to a node that is already destroyed.

    :param nodes: The nodes of :func:`build_pipeline`.
    """
    for node in nodes:
        node.destroy_node()


SOLVER_OPTIONS = ('solver', 'eta', 'mapping', 'correspondence', 'whole_body', 'admittance')
"""solver_node parameters that have their own option (``--solver pics``)."""


def parse_arguments(
    argv: Sequence[str], prog: str = 'python -m pic_ros teleop'
) -> tuple[argparse.Namespace, list[str]]:
    """
    Parse teleop's own options; the ROS arguments (``--ros-args ...``) are left for rclpy.

    Types, choices and help come from the nodes' parameter tables; the choices of ``--source``
    and ``--solver`` are the registries' names, plug-ins included. ``--help`` prints the usage
    and exits 0; an unknown option prints the usage and exits 2 (``SystemExit``).

    :param argv: Arguments without the program name.
    :param prog: The program name shown in the usage.
    :return: The options and the ROS arguments.
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description='Tracker -> skeleton -> solver -> joint trajectories, in one process.',
        epilog='ROS arguments follow --ros-args (-p NODE:NAME:=VALUE, -r FROM:=TO, '
        '--params-file FILE, ...).',
    )
    parser.add_argument('--robot', default=ROBOT.default, help=ROBOT.help_text())
    add_option(parser, SKELETON_NODE['source'], default=SKELETON_NODE['source'].default)
    for name in SOLVER_OPTIONS:
        add_option(parser, SOLVER_NODE[name], help_suffix=' (default: the parameter file)')
    parser.add_argument(
        '--engaged', action='store_true',
        help='start engaged: the robot follows the person at once (trajectory_publisher '
        "start_engaged; default: disengaged until '/trajectory_publisher/engage')",
    )
    add_option(
        parser, BASE_FOLLOWER['follow_base'], default=False,
        help_suffix=' (adds base_follower to the process; default: false)',
    )
    parser.add_argument(
        '--base-cmd-topic', default='', metavar='TOPIC',
        help="with --follow-base: the topic base_follower's cmd_vel is remapped to, the base "
        "controller's Twist input (default: the robot file's mobile_base command_topic; TIAGo: "
        'mobile_base_controller/cmd_vel_unstamped)',
    )
    parser.add_argument(
        '--executor', choices=('single_threaded', 'events'), default='single_threaded',
        help='rclpy executor (events: experimental, see the docs)',
    )
    parser.add_argument(
        '--param', action='append', default=[], metavar='NODE.NAME=VALUE',
        help='set a parameter, e.g. trajectory_publisher.wait_for_joint_states=false',
    )
    return parse_command_line(parser, argv)


def node_parameters(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """
    Gather the parameter values the options ask for, per node.

    :param args: Options from :func:`parse_arguments`.
    :return: Values per node name, typed as the parameters are.
    :raises PicRosError: If a ``--param`` is not ``NODE.NAME=VALUE`` with a known node and
        parameter and a value the parameter accepts.
    """
    tables = {table.node: table for table in (*PIPELINE, BASE_FOLLOWER)}
    values: dict[str, dict[str, Any]] = {node: {} for node in tables}
    for key in SOLVER_OPTIONS:
        if getattr(args, key) is not None:
            values['solver_node'][key] = getattr(args, key)
    if args.engaged:
        values['trajectory_publisher']['start_engaged'] = True
    for item in args.param:
        name, _, text = item.partition('=')
        node, _, parameter = name.partition('.')
        if not text or node not in tables or not parameter:
            raise PicRosError(
                f'--param {item!r}: expected NODE.NAME=VALUE with NODE one of {", ".join(tables)}'
            )
        try:
            values[node].update(tables[node].from_text({parameter: text}))
        except ConfigError as err:
            raise PicRosError(f'--param {item!r}: {err}') from err
    return values


def main(
    argv: Sequence[str] | None = None,
    prog: str = 'python -m pic_ros teleop',
    error_status: int = 2,
) -> int:
    """
    Run the one-process pipeline until shutdown.

    :param argv: Arguments without the program name (default: the process arguments).
    :param prog: The program name shown in the usage and the error messages.
    :param error_status: Exit status when a node cannot start (a bad robot file or parameter
        value): 2 for ``python -m pic_ros teleop``, 1 for the ``teleop`` executable.
    :return: Exit status (0, ``error_status``, or 2 for invalid options).
    """
    import sys

    args, ros_arguments = parse_arguments(sys.argv[1:] if argv is None else argv, prog)
    try:
        parameters = node_parameters(args)
        base_topic = (
            base_command_topic(args.robot, args.base_cmd_topic) if args.follow_base else None
        )
    except PicRosError as err:
        print(f'{prog}: {err}', file=sys.stderr)
        return 2

    return run_nodes(
        prog, ros_arguments,
        lambda: build_pipeline(
            args.robot, args.source, parameters,
            base_cmd_topic=base_topic,
        ),
        executor=lambda: make_executor(args.executor), error_status=error_status,
    )


def console_main() -> None:
    """Entry point of the ``teleop`` executable."""
    raise SystemExit(main(prog='teleop', error_status=START_FAILED))
