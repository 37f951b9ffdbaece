"""
The ``main()`` of every node executable: its command line, signals and a clean shutdown.

Every executable (``skeleton_node``, ``solver_node``, ``trajectory_publisher``, ``teleop``, and
pic_ros_tools' ``sim_robot`` and ``replay``) runs its nodes through :func:`run_nodes`;
:func:`run_node` is the whole ``main`` of an executable whose options are its node's parameters.

- **Command line.** :func:`parse_command_line` sets the ROS arguments apart with
  ``rclpy.utilities.remove_ros_args`` and parses the rest strictly: ``--help`` prints the usage
  and exits 0 before any node exists, an unknown option or malformed ROS arguments print the
  usage and exit 2. A node's options are its parameters (:func:`node_parser`, from its table in
  :mod:`pic_ros.ros.schema`): ``--robot tiago`` is the parameter override ``robot:=tiago``, as
  ``--ros-args -p robot:=tiago`` is, and wins over a ``-p`` of the same parameter.
- **Spinning.** Every executable's nodes spin for as long as it runs, so their parameter
  services always answer (``ros2 param list``): until shutdown (:func:`spin_until_shutdown`), or
  as a :data:`Spin` of pic_ros_tools (``pic_ros_tools.ros.background_spin``: for a time, or in a
  thread beside the executable's own main loop).
- **Signals.** SIGINT and SIGTERM, however many and whenever they arrive, only ask for a stop
  (:class:`StopSignals`). rclpy's handlers, installed by ``rclpy.init`` on top of ours, shut the
  context down, which ends the spin; ours then record the signal instead of raising
  ``KeyboardInterrupt``, so the clean-up (``destroy_node``, ``rclpy.try_shutdown``) is never cut
  short and the exit status is 0. A signal before the node is up skips the spin. Once the spin
  has ended, rclpy's handlers are uninstalled before anything is destroyed
  (:func:`end_rclpy_signal_handling`): rclpy's signal thread triggers every executor's signal
  guard condition with no lock against that condition's destruction, and a signal of a burst
  that reached it while the executor was shut down made it trigger a destroyed condition
  (``guard condition implementation is invalid``, then a segmentation fault).
- **Garbage collection.** Once the nodes are built, everything made so far is collected and then
  frozen (``gc.freeze``): a full pass of the cyclic collector, which Python starts now and then in
  the middle of a callback, no longer scans the tens of thousands of objects of the modules, the
  robot models and numba (~60 ms a pass with them, a hiccup of the live path).
- **Errors the user can fix** (a bad robot file, a missing package such as mujoco, a refused
  parameter value): one line ``prog: reason`` on stderr, no traceback, and exit status 1 for a
  ``ros2 run`` executable whose node could not start (``python -m pic_ros`` commands keep their
  status 2 for an input error). Anything else raised while rclpy still runs is a real failure and
  propagates.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import gc
import signal
import sys
import threading
from types import FrameType
from typing import Any

from pic_ros.exceptions import PicRosError
from pic_ros.schema import add_option, ParameterDef, ParameterTable, ParameterType
import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.signals import uninstall_signal_handlers
from rclpy.utilities import remove_ros_args, try_shutdown

USAGE_ERROR = 2
"""Exit status of a command-line error (argparse's)."""

START_FAILED = 1
"""Exit status of an executable whose node could not start (bad robot, refused parameter)."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that ask an executable to stop."""

EXECUTOR_SHUTDOWN_SECONDS = 1.0
"""Longest wait for the callbacks still running when an executable's executor is shut down [s]."""

ROS_ARGUMENTS_HELP = (
    'ROS arguments follow --ros-args (-p NAME:=VALUE, -r FROM:=TO, --params-file FILE, ...). '
    'An option above sets the node parameter of the same name and wins over -p.'
)
"""Epilog of the executables' usage."""

USER_ERRORS: tuple[type[Exception], ...] = (PicRosError, ParameterException)
"""Errors reported in one line: a bad robot file or setting, a missing package, a refused value."""

_ROS_TYPES = {
    ParameterType.BOOL: Parameter.Type.BOOL,
    ParameterType.INTEGER: Parameter.Type.INTEGER,
    ParameterType.DOUBLE: Parameter.Type.DOUBLE,
    ParameterType.STRING: Parameter.Type.STRING,
    ParameterType.STRING_ARRAY: Parameter.Type.STRING_ARRAY,
}

Spin = Callable[[Executor, Sequence[Node]], object]
"""Runs the nodes (with the executor made for them) until done or shut down."""


class StopSignals:
    """
    SIGINT and SIGTERM as stop requests: recorded, never raised as ``KeyboardInterrupt``.

    Installed before ``rclpy.init``, whose handlers then shut the rclpy contexts down and call
    these. Only the main thread can install signal handlers; elsewhere nothing is installed.
    """

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        """Return whether a stop signal has arrived."""
        return bool(self.received)

    def install(self) -> StopSignals:
        """
        Install the handlers (in the main thread only).

        :return: This object.
        """
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._on_signal)
        return self

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        del frame
        self.received.append(number)

    def ignore(self) -> None:
        """
        Ignore the stop signals from now on, for a process that is about to exit.

        The interpreter puts its own handlers back to the default action while it finalizes, which
        would let a late signal kill it during its teardown; an ignored signal stays ignored.
        """
        if self._previous:
            for number in STOP_SIGNALS:
                signal.signal(number, signal.SIG_IGN)


def parse_command_line(
    parser: argparse.ArgumentParser, argv: Sequence[str]
) -> tuple[argparse.Namespace, list[str]]:
    """
    Parse an executable's own options and set its ROS arguments apart for ``rclpy.init``.

    ``--help`` prints the usage and exits 0; an unknown option, a refused value or malformed ROS
    arguments print the usage and the reason and exit 2 (``argparse``'s ``SystemExit``).

    :param parser: The executable's parser.
    :param argv: The arguments, without the program name.
    :return: The options, and the ROS arguments (``--ros-args ...`` sections) in their order.
    """
    arguments = list(argv)
    try:
        own = remove_ros_args([parser.prog, *arguments])[1:]
    except RuntimeError as error:  # rclpy's UnknownROSArgsError, RCLInvalidROSArgsError
        parser.error(f'invalid ROS arguments: {error}')
    options = parser.parse_args(own)
    ros: list[str] = []
    kept = iter(own)
    next_kept = next(kept, None)
    for item in arguments:  # own is what is left of arguments, in order: the rest is ROS's
        if item == next_kept:
            next_kept = next(kept, None)
        else:
            ros.append(item)
    return options, ros


def node_parser(table: ParameterTable, prog: str, description: str) -> argparse.ArgumentParser:
    """
    Build the parser of a node executable: one option per parameter of its table.

    :param table: The node's parameters (:mod:`pic_ros.ros.schema`).
    :param prog: The program name shown in the usage.
    :param description: What the executable does.
    :return: The parser; add the executable's other options to it.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=ROS_ARGUMENTS_HELP)
    group = parser.add_argument_group(
        'parameters', f'each sets the {table.node} parameter of the same name'
    )
    for definition in table:
        add_option(group, definition, help_suffix=f' (default: {_default_text(definition)})')
    return parser


def _default_text(definition: ParameterDef) -> str:
    value = definition.default
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return ','.join(str(item) for item in value) or "''"
    return str(value) if value != '' else "''"


def parameter_overrides(table: ParameterTable, options: argparse.Namespace) -> list[Parameter]:
    """
    Turn the parameter options given on the command line into parameter overrides.

    An empty list becomes ``['']``: rclpy reads an empty override back as a byte array, which a
    string-array parameter refuses; the nodes read ``['']`` as empty (``arms``: every arm).

    :param table: The node's parameters.
    :param options: From a parser of :func:`node_parser`.
    :return: One override per option given, typed as the parameter is declared.
    """
    overrides = []
    for definition in table:
        value = getattr(options, definition.name, None)
        if value is None:
            continue
        value = definition.value_for_ros(value)
        if definition.ros_type is ParameterType.STRING_ARRAY and not value:
            value = ['']
        kind = _ROS_TYPES.get(definition.ros_type)  # a dynamic parameter: the value's own type
        overrides.append(Parameter(definition.name, kind, value))
    return overrides


def spin_until_shutdown(executor: Executor, nodes: Sequence[Node]) -> None:
    """
    Spin nodes until their context is shut down (a stop signal, ``rclpy.shutdown``).

    :param executor: The executor.
    :param nodes: The nodes.
    """
    for node in nodes:
        executor.add_node(node)
    executor.spin()


def end_rclpy_signal_handling() -> None:
    """
    Uninstall rclpy's signal handlers and wait for its signal thread to end.

    rclpy (Jazzy, Kilted) handles a signal in a thread of its own, which triggers the guard
    condition every executor registers for signals, then shuts the contexts down. Nothing stops
    an executor's shutdown (or its collection) from destroying that condition meanwhile, and the
    thread then triggers freed memory. Once this returns the thread has ended, and stop signals
    reach only the handlers that were there before ``rclpy.init`` (:class:`StopSignals`): the
    executors and nodes can be destroyed at any time after it.
    """
    uninstall_signal_handlers()


def run_nodes(
    prog: str,
    ros_arguments: Sequence[str],
    build: Callable[[], Sequence[Node]],
    *,
    executor: Callable[[], Executor] = SingleThreadedExecutor,
    spin: Spin = spin_until_shutdown,
    before_destroy: Callable[[Sequence[Node]], None] | None = None,
    error_status: int = START_FAILED,
) -> int:
    """
    Initialise rclpy, build the nodes, spin them until done or stopped, then clean up.

    The executor is made right after ``rclpy.init``, before the nodes: rclpy cannot make one once
    a signal has shut the context down. On return the stop signals are ignored (the process is
    to exit next, :meth:`StopSignals.ignore`).

    :param prog: The executable's name, for the one-line error messages.
    :param ros_arguments: The ROS arguments for ``rclpy.init`` (``--ros-args ...``).
    :param build: Makes the nodes (after ``rclpy.init``), destroying any it made if it fails.
    :param executor: Makes the executor (default: single-threaded).
    :param spin: Runs the nodes (default: until shutdown).
    :param before_destroy: Called with the nodes before they are destroyed (e.g. a summary).
    :param error_status: Exit status when a node cannot be built or run for a reason the user
        can fix (:data:`USER_ERRORS`, reported in one line).
    :return: Exit status: 0 (also when stopped by signals), ``error_status`` for an error the
        user can fix, 2 for malformed ROS arguments.
    """
    stop = StopSignals().install()
    try:
        try:
            rclpy.init(args=[prog, *ros_arguments])
        except RuntimeError as error:  # malformed ROS arguments
            print(f'{prog}: invalid ROS arguments: {error}', file=sys.stderr)
            return USAGE_ERROR
        return _run(prog, build, executor, spin, before_destroy, error_status, stop)
    finally:
        stop.ignore()


def _run(
    prog: str,
    build: Callable[[], Sequence[Node]],
    make_executor: Callable[[], Executor],
    spin: Spin,
    before_destroy: Callable[[Sequence[Node]], None] | None,
    error_status: int,
    stop: StopSignals,
) -> int:
    nodes: Sequence[Node] = ()
    executor: Executor | None = None
    status = 0
    try:
        executor = make_executor()
        nodes = build()
        # what starting made (modules, robot models, numba's types) stays out of the cyclic
        # collector's reach: a full collection then scans only what the nodes make while they run
        gc.collect()
        gc.freeze()
        if not stop.requested:
            spin(executor, nodes)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except USER_ERRORS as error:
        if not stop.requested:
            print(f'{prog}: {error}', file=sys.stderr)
            status = error_status
    except Exception:
        if rclpy.ok() and not stop.requested:
            raise  # a real failure, not a signal that shut the context down mid-callback
    finally:
        end_rclpy_signal_handling()  # before any executor or node is destroyed
        try:
            if before_destroy is not None:
                before_destroy(nodes)
        finally:
            for node in nodes:
                node.destroy_node()
            if executor is not None:
                executor.shutdown(timeout_sec=EXECUTOR_SHUTDOWN_SECONDS)
            try_shutdown()  # the context only: the handlers are uninstalled already
    return status


def run_node(
    node_class: Callable[..., Node],
    table: ParameterTable,
    args: Sequence[str] | None = None,
    *,
    prog: str,
    description: str,
) -> None:
    """
    Be the whole ``main`` of a node executable whose options are the node's parameters.

    :param node_class: The node; called with ``parameter_overrides``.
    :param table: Its parameter table.
    :param args: The command line, program name first (default: ``sys.argv``).
    :param prog: The executable's name (``ros2 run pic_ros <prog>``).
    :param description: What it does, for the usage.
    :raises SystemExit: Always, with the exit status.
    """
    arguments = list(sys.argv if args is None else args)[1:]
    options, ros_arguments = parse_command_line(node_parser(table, prog, description), arguments)
    overrides = parameter_overrides(table, options)
    raise SystemExit(
        run_nodes(prog, ros_arguments, lambda: [node_class(parameter_overrides=overrides)])
    )
