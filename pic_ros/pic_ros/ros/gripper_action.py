"""
The ``control_msgs/action/GripperCommand`` client of a gripper: thin, decisions made elsewhere.

:class:`~pic_ros.motion.gripper_goals.GripperGoals` decides when to send a goal and with what
position; a :class:`GripperClient` carries it out. :class:`ActionGripperClient` is the rclpy one:
``control_msgs`` is imported only when it is made (a ROS workspace has it; it has no PyPI
wheel), and :func:`require_control_msgs` says so at the node's start when it is missing, naming
the package. Tests inject their own :class:`GripperClient` instead.
"""

from __future__ import annotations

from collections.abc import Callable
import importlib
import importlib.util
from typing import Any, Protocol

from pic_ros.exceptions import ConfigError
from rclpy.node import Node

CONTROL_MSGS: str = 'control_msgs'
"""The Python package of ``GripperCommand`` (``ros-<distro>-control-msgs``)."""


class GripperClient(Protocol):
    """What the trajectory publisher needs of one gripper's action client."""

    def ready(self) -> bool:
        """Return whether the action server is there (a goal sent now would reach it)."""
        ...

    def send(self, position: float, max_effort: float) -> bool:
        """
        Send a goal; it replaces the one running (the server preempts it).

        :param position: ``command.position`` [m] or [rad].
        :param max_effort: ``command.max_effort`` [N] or [N m].
        :return: Whether it went out (False when the server is not there).
        """
        ...

    def cancel(self) -> bool:
        """
        Cancel the goal last sent, if any.

        :return: Whether a cancel went out (False when there was no goal to cancel).
        """
        ...


GripperClientFactory = Callable[[Node, str], GripperClient]
"""Makes the client of the action of a given name (relative to the node's namespace)."""


def control_msgs_available() -> bool:
    """Return whether ``control_msgs`` can be imported."""
    return importlib.util.find_spec(CONTROL_MSGS) is not None


def require_control_msgs() -> None:
    """
    Refuse to go on without ``control_msgs``.

    :raises ConfigError: Naming the package and how to get it, when it cannot be imported.
    """
    if not control_msgs_available():
        raise ConfigError(
            f'gripper_interface is gripper_action but the Python package {CONTROL_MSGS!r} cannot '
            'be imported: install ros-<distro>-control-msgs and source the ROS workspace, or '
            'set gripper_interface to trajectory'
        )


class ActionGripperClient:
    """
    An rclpy ``ActionClient`` of ``control_msgs/action/GripperCommand``.

    :param node: The node that owns the client.
    :param name: The action's name, relative to the node's namespace.
    :raises ConfigError: When ``control_msgs`` cannot be imported.
    """

    def __init__(self, node: Node, name: str) -> None:
        require_control_msgs()
        from rclpy.action import ActionClient

        self._action = importlib.import_module(f'{CONTROL_MSGS}.action').GripperCommand
        self._client = ActionClient(node, self._action, name)
        self._goal_future: Any = None

    def ready(self) -> bool:
        """Return whether the action server is there."""
        return bool(self._client.server_is_ready())

    def send(self, position: float, max_effort: float) -> bool:
        """Send a goal (see :meth:`GripperClient.send`)."""
        if not self.ready():
            return False
        goal = self._action.Goal()
        goal.command.position = float(position)
        goal.command.max_effort = float(max_effort)
        self._goal_future = self._client.send_goal_async(goal)
        return True

    def cancel(self) -> bool:
        """Cancel the goal last sent (see :meth:`GripperClient.cancel`)."""
        future, self._goal_future = self._goal_future, None
        if future is None:
            return False
        if future.done():
            handle = future.result()
            if handle is not None and handle.accepted:
                handle.cancel_goal_async()
        else:  # not answered yet: cancel it once the server accepts it
            future.add_done_callback(_cancel_when_accepted)
        return True


def _cancel_when_accepted(future: Any) -> None:
    """Cancel a goal whose acceptance came after the cancel was asked."""
    handle = future.result()
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()
