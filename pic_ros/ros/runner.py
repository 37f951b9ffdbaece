"""The rclpy canon ``main()`` shared by the node executables."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node


def run_node(factory: Callable[[], Node], args: list[str] | None = None) -> None:
    """
    Initialise rclpy, spin one node until shutdown, then clean up.

    Portable from Humble on: init -> spin -> destroy_node -> try_shutdown. Ctrl-C and external
    shutdowns end quietly; an exception raised while rclpy still runs is a real failure and
    propagates.

    :param factory: Builds the node (after ``rclpy.init``).
    :param args: Command-line arguments for rclpy (``--ros-args ...``).
    """
    rclpy.init(args=args)
    node = None
    try:
        node = factory()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise  # a real failure, not a signal that shut the context down mid-callback
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
