"""
The transport floor of the latency benchmark: an echo with no processing.

- ``--mode dds``: subscribes ``echo_in`` raw (``visualization_msgs/MarkerArray``) and publishes the
  same bytes on ``echo_out``: two DDS hops of the tracker message, nothing else.
- ``--mode udp``: receives UDP datagrams and publishes, for each, a prepared
  ``trajectory_msgs/JointTrajectory`` (7 joints, one point) as raw bytes on ``echo_out``: the
  input and output transports of the Xsens path, nothing else.

Run as ``python -m pic_ros_tools.ros.echo --mode dds`` (the benchmark starts and stops it).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import socket
import sys
import threading

from pic_ros.ros.runner import parse_command_line, run_nodes
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import MarkerArray

RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


def prepared_trajectory() -> bytes:
    """
    Serialize a JointTrajectory of the size the pipeline publishes (7 joints, 1 point).

    :return: CDR bytes.
    """
    message = JointTrajectory()
    message.joint_names = [f'joint_{index}' for index in range(7)]
    point = JointTrajectoryPoint()
    point.positions = [0.1] * 7
    point.velocities = [0.0] * 7
    point.time_from_start.nanosec = 50_000_000
    message.points = [point]
    return bytes(serialize_message(message))


class EchoNode(Node):
    """
    Echo tracker messages (DDS) or datagrams (UDP) straight back on ``echo_out``.

    :param mode: ``dds`` or ``udp``.
    :param udp_port: UDP port for ``udp`` mode (bound on 127.0.0.1).
    """

    def __init__(self, mode: str, udp_port: int) -> None:
        super().__init__('latency_echo')
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        if mode == 'dds':
            self._publisher = self.create_publisher(MarkerArray, 'echo_out', RELIABLE)
            self.create_subscription(MarkerArray, 'echo_in', self._publisher.publish, RELIABLE,
                                     raw=True)
        else:
            self._publisher = self.create_publisher(JointTrajectory, 'echo_out', RELIABLE)
            self._payload = prepared_trajectory()
            receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            receiver.bind(('127.0.0.1', udp_port))
            receiver.settimeout(0.2)
            self._socket = receiver
            self._thread = threading.Thread(target=self._receive, daemon=True)
            self._thread.start()

    def _receive(self) -> None:
        assert self._socket is not None
        while not self._stop.is_set():
            try:
                self._socket.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            self._publisher.publish(self._payload)

    def destroy_node(self) -> None:
        """Stop the UDP thread (if any) and destroy the node."""
        self._stop.set()
        if self._socket is not None:
            self._socket.close()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        super().destroy_node()


def main(argv: Sequence[str] | None = None) -> None:
    """
    Run the echo until SIGINT.

    :param argv: ``--mode dds|udp [--udp-port N]`` then optional ``--ros-args ...``.
    """
    parser = argparse.ArgumentParser(prog='python -m pic_ros_tools.ros.echo')
    parser.add_argument('--mode', choices=('dds', 'udp'), default='dds')
    parser.add_argument('--udp-port', type=int, default=9764)
    args, ros_arguments = parse_command_line(parser, sys.argv[1:] if argv is None else argv)
    raise SystemExit(run_nodes(
        parser.prog, ros_arguments, lambda: [EchoNode(args.mode, args.udp_port)]
    ))


if __name__ == '__main__':
    main()
