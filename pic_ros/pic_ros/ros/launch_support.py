"""
What the launch files share: up-front checks and stopping a launch as a whole.

A launch that cannot run its whole pipeline must stop, every process of it, with one message
that says why and a non-zero exit status; it must never leave some nodes running without the
others. Two tools for that:

- :func:`require_packages` checks, before anything is started, that the ROS packages a launch
  needs are installed (``rviz2`` for ``use_rviz``, the Gazebo and ros2_control packages for
  ``gazebo.launch.py``, ``pic_ros_tools`` for ``sim`` and ``replay_bag``:
  :func:`require_tools`) and raises :class:`LaunchAbort` naming every missing one;
- :func:`stop_launch_when_exits` makes a started process essential: when it exits while the
  launch is not shutting down, the launch stops with its name and exit code.

Optional helpers are started only when installed and otherwise named in the launch's log, the
pipeline running without them: :func:`robot_state_publisher` (TF of the robot from
``joint_states``; not on PyPI, so never there in the standalone venv), after
:func:`state_publisher_missing`.

``ros2 launch`` turns an exception raised while a launch runs into ``Caught exception in launch
(see debug for traceback): <message>``, shuts every started process down (SIGINT, then SIGTERM
and SIGKILL after launch's timeouts) and exits with status 1; the ``Shutdown`` action would end
with status 0, which a script or a supervisor could not tell from a normal end. So both raise.

Imported by the launch files only: it needs ``launch`` (and ``ament_index_python``), which the
standalone venv lacks unless ``../shared/ros-tools/install`` was run.
"""

from __future__ import annotations

from collections.abc import Iterable
import os
from typing import Any

from ament_index_python.packages import get_package_prefix, PackageNotFoundError
from launch.actions import LogInfo, OpaqueFunction, RegisterEventHandler, TimerAction
from launch.event_handlers import OnProcessExit

EXIT_GRACE = 1.0
"""
Wait [s] after an essential process exited before deciding that the launch must stop.

Ctrl-C in a terminal (or SIGINT to the launch's process group) reaches every node at the same
time as ``ros2 launch``: a node may end before the launch has handled its own SIGINT. Within
this grace the launch's shutdown cancels the decision, so a normal stop is not reported as a
failure.
"""


class LaunchAbort(RuntimeError):
    """A launch cannot run as asked; the message says why and what to do."""


def missing_packages(names: Iterable[str]) -> list[str]:
    """
    Return the ROS packages of a list that the ament index does not know.

    :param names: Package names.
    :return: The missing ones, in the given order, without duplicates.
    """
    missing: list[str] = []
    for name in dict.fromkeys(names):
        try:
            get_package_prefix(name)
        except (PackageNotFoundError, ValueError, LookupError, OSError):
            missing.append(name)
    return missing


def require_packages(names: Iterable[str], needed_for: str, advice: str = '') -> None:
    """
    Raise :class:`LaunchAbort` if any of the packages is not installed.

    :param names: ROS packages that must be found through ``AMENT_PREFIX_PATH``.
    :param needed_for: What needs them, e.g. ``use_rviz:=true``.
    :param advice: What the user can do instead (appended to the message).
    :raises LaunchAbort: Naming every missing package and where they were looked for.
    """
    missing = missing_packages(names)
    if not missing:
        return
    searched = searched_prefixes()
    message = (
        f'{needed_for} needs ROS packages that are not installed: {", ".join(missing)} '
        f'(searched AMENT_PREFIX_PATH: {searched}); nothing was started'
    )
    raise LaunchAbort(f'{message}. {advice}' if advice else message)


def searched_prefixes() -> str:
    """Return where ROS packages are looked for, for a message: ``AMENT_PREFIX_PATH``."""
    return os.environ.get('AMENT_PREFIX_PATH', '') or '(AMENT_PREFIX_PATH is not set)'


STATE_PUBLISHER = 'robot_state_publisher'
"""The ROS package (and executable) that turns ``joint_states`` into TF."""


def state_publisher_missing() -> Any:
    """
    Return a log saying robot_state_publisher is not installed, or None when it is.

    Without it the pipeline runs all the same: ``sim_robot`` publishes ``robot_description``
    itself, but nothing publishes TF.

    :return: A ``LogInfo`` naming the package, where it was looked for and what is lost; None
        when it is installed.
    """
    if not missing_packages([STATE_PUBLISHER]):
        return None
    return LogInfo(msg=(
        f'{STATE_PUBLISHER} is not installed (searched AMENT_PREFIX_PATH: '
        f"{searched_prefixes()}): no TF of the robot's links, so RViz cannot place the "
        'robot model; robot_description still comes from sim_robot (sim:=true). In a ROS '
        'install: apt install ros-$ROS_DISTRO-robot-state-publisher'
    ))


def robot_state_publisher(urdf: str, namespace: Any = '', separate_tf: bool = False) -> Any:
    """
    Return robot_state_publisher for a robot (check :func:`state_publisher_missing` first).

    It publishes the URDF on ``robot_description`` (latched) and the links' poses on TF from
    ``joint_states``, in its namespace.

    :param urdf: The robot's URDF text (its ``robot_description`` parameter).
    :param namespace: The namespace of the robot's nodes (a string or a substitution).
    :param separate_tf: Publish TF on the namespace's ``tf`` and ``tf_static`` instead of
        ``/tf`` and ``/tf_static`` (several robots: their trees stay apart).
    :return: The ``Node`` action.
    """
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import ParameterValue

    remappings = [('/tf', 'tf'), ('/tf_static', 'tf_static')] if separate_tf else []
    description = ParameterValue(urdf, value_type=str)  # as it is, not read as YAML
    return Node(
        package=STATE_PUBLISHER, executable=STATE_PUBLISHER, name=STATE_PUBLISHER,
        namespace=namespace, parameters=[{'robot_description': description}],
        remappings=remappings, output='screen',
    )


TOOLS_PACKAGE = 'pic_ros_tools'
"""The package of ``sim_robot`` and ``replay``, which the run-time package does not need."""


def require_tools(needed_for: str, instead: str) -> None:
    """
    Raise :class:`LaunchAbort` if the tools package (``sim_robot``, ``replay``) is not installed.

    :param needed_for: What needs it, e.g. ``sim:=true``.
    :param instead: What the user can do without it, e.g. ``leave sim false``.
    :raises LaunchAbort: Saying to install pic_ros_tools.
    """
    require_packages(
        [TOOLS_PACKAGE], needed_for,
        f'Install {TOOLS_PACKAGE} beside pic_ros (in the workspace: colcon build '
        f'--packages-up-to {TOOLS_PACKAGE}; it needs mujoco and rosbags), or {instead}.',
    )


def stop_launch_when_exits(process: Any, name: str, why: str) -> RegisterEventHandler:
    """
    Stop the whole launch, with a non-zero status, when an essential process exits.

    An exit while the launch is shutting down (Ctrl-C, another process's failure), or that is
    followed by its shutdown within :data:`EXIT_GRACE`, is the expected end and changes nothing.

    :param process: The ``Node`` / ``ExecuteProcess`` action.
    :param name: Its name in the message.
    :param why: What is lost without it, e.g. ``the pipeline is incomplete``.
    :return: The event handler registration, to be returned beside the process.
    """

    def on_exit(event: Any, context: Any) -> Any:
        if context.is_shutdown:
            return None
        return [abort_unless_shutting_down(
            f'{name} exited with code {event.returncode}: {why}; stopping the launch')]

    return RegisterEventHandler(OnProcessExit(target_action=process, on_exit=on_exit))


def abort_unless_shutting_down(reason: str) -> TimerAction:
    """
    Return an action that stops the launch (status 1) unless it shuts down within the grace.

    :param reason: The message.
    :return: A timer of :data:`EXIT_GRACE` (launch cancels pending timers when it shuts down).
    """

    def abort(context: Any) -> None:
        if not context.is_shutdown:
            raise LaunchAbort(reason)

    return TimerAction(period=EXIT_GRACE, actions=[OpaqueFunction(function=abort)])
