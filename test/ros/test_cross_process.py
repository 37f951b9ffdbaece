"""
Cross-process tests over DDS on loopback: a separately started ``teleop`` driven by real data.

Each test starts ``python -m pic_ros teleop`` as its own process (own session, stopped by its pid)
with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` and a private ``ROS_DOMAIN_ID``, feeds it from
this process and checks what comes back on the controller topics.
"""

from __future__ import annotations

import os
from pathlib import Path
import socket
import threading
import time

import numpy as np
from pic_ros.robot import load_robot
from pic_ros.ros.processes import loopback_environment, ManagedProcess, python_module, wait_until
from pic_ros.tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
import pytest

rclpy = pytest.importorskip('rclpy')

from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

pytestmark = pytest.mark.ros

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
BAG_TOPIC = '/kinect2/body_tracking_data'


def _domain(offset: int) -> int:
    return 1 + (os.getpid() + 37 * offset) % 100


class Probe:
    """This test's node: publishes tracker messages, records trajectories with arrival times."""

    def __init__(self, domain_id: int, topics: list[str]) -> None:
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = Node('cross_process_probe', context=self.context)
        self.received: dict[str, list[tuple[float, JointTrajectory]]] = {t: [] for t in topics}
        for topic in topics:
            self.node.create_subscription(
                JointTrajectory, topic, self._recorder(topic), RELIABLE
            )
        self.publisher = self.node.create_publisher(MarkerArray, BAG_TOPIC, RELIABLE)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def _recorder(self, topic: str):
        def record(message: JointTrajectory) -> None:
            self.received[topic].append((time.monotonic(), message))

        return record

    def close(self) -> None:
        """Stop spinning and shut this context down."""
        self.executor.shutdown(timeout_sec=2.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def bag_messages(bag: Path) -> list[tuple[int, bytes]]:
    """Read (timestamp ns, raw bytes) of the body-tracking topic of a bag."""
    from rosbags.highlevel import AnyReader

    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == BAG_TOPIC]
        return [(stamp, bytes(raw)) for _, stamp, raw in reader.messages(connections=connections)]


def start_teleop(
    robot: str, source: str, domain_id: int, log: Path, *extra: str
) -> ManagedProcess:
    """Start the one-process pipeline for a robot and tracker."""
    argv = python_module(
        'pic_ros', 'teleop', '--robot', robot, '--source', source,
        '--param', 'trajectory_publisher.wait_for_joint_states=false', *extra,
        '--ros-args', '-r', f'body_tracking_data:={BAG_TOPIC}',
    )
    return ManagedProcess(argv, loopback_environment(domain_id), log)


def check_commands(robot_name: str, received: dict[str, list[tuple[float, JointTrajectory]]]):
    """Assert names, stamps, limits and velocity limits of every received command."""
    robot = load_robot(robot_name)
    for arm in robot.arms.values():
        topic = f'/{arm.spec.controller}/joint_trajectory'
        messages = received[topic]
        assert len(messages) > 50, f'{topic}: only {len(messages)} trajectories'
        previous = None
        for arrival, message in messages:
            assert list(message.joint_names) == list(arm.joint_names)
            assert message.header.stamp.sec == 0 and message.header.stamp.nanosec == 0
            assert len(message.points) >= 1
            times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                     for p in message.points]
            assert times[0] > 0.0 and all(b > a for a, b in zip(times, times[1:]))
            point = message.points[0]
            q = np.array(point.positions)
            v = np.array(point.velocities)
            assert np.all(q >= arm.lower - 1e-9) and np.all(q <= arm.upper + 1e-9)
            assert np.all(np.abs(v) <= arm.velocity + 1e-9)
            if previous is not None:
                step = np.abs(q - previous[1])
                # Commands are computed at arrival-time steps; allow the scheduling jitter.
                allowed = arm.velocity * (arrival - previous[0] + 0.05) + 1e-9
                assert np.all(step <= allowed), f'{topic}: step {step} > {allowed}'
            previous = (arrival, q)


@pytest.mark.parametrize('robot', ['baxter', 'yumi', 'tiago'])
def test_real_azure_kinect_bag_drives_every_controller_within_limits(
    robot, shared_data, tmp_path
):
    """The real Azure Kinect bag, replayed 4x fast, gives safe trajectories on every controller."""
    messages = bag_messages(shared_data / 'azure_kinect' / 'body_tracking_ergonomics')
    # The start (18 empty arrays), 15 s of tracking, and the end (one empty, 41 empty arrays).
    chosen = messages[:240] + messages[880:]
    assert sum(1 for _, raw in chosen if len(raw) < 100) >= 55
    domain = _domain(['baxter', 'yumi', 'tiago'].index(robot))
    arms = load_robot(robot).arms.values()
    topics = [f'/{arm.spec.controller}/joint_trajectory' for arm in arms]
    process = start_teleop(robot, 'azure_kinect', domain, tmp_path / 'teleop.log')
    probe = Probe(domain, topics)
    try:
        connected = wait_until(
            lambda: probe.publisher.get_subscription_count() > 0
            and all(probe.node.count_publishers(t) > 0 for t in topics),
            timeout=30.0,
        )
        assert connected, process.log_text()
        rate = 4.0
        start = time.monotonic()
        first = chosen[0][0]
        for stamp, raw in chosen:
            delay = start + (stamp - first) * 1e-9 / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            probe.publisher.publish(raw)
        time.sleep(0.5)
        assert process.alive(), process.log_text()
    finally:
        probe.close()
        status = process.stop()
    assert status in (0, -2, 130), process.log_text()
    check_commands(robot, probe.received)


def test_xsens_stream_with_bad_datagrams_drives_the_robot(tmp_path):
    """Good MXTP02 samples (also split) drive the pipeline; bad datagrams change nothing."""
    domain = _domain(7)
    port = 31000 + domain
    topics = ['/left_arm_controller/joint_trajectory', '/right_arm_controller/joint_trajectory']
    process = start_teleop(
        'yumi', 'xsens_mvn', domain, tmp_path / 'teleop.log',
        '--param', f'skeleton_node.udp_port={port}',
    )
    probe = Probe(domain, topics)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        assert wait_until(
            lambda: all(probe.node.count_publishers(t) > 0 for t in topics), timeout=30.0
        ), process.log_text()
        positions, quaternions = t_pose_segments()
        good = []
        for index in range(240):
            moved = positions.copy()
            moved[:, 2] += 0.01 * np.sin(index / 20.0)
            split = 256 if index % 3 == 0 else 2048
            good.append(build_mxtp02_datagrams(
                index + 1, index * 16, moved, quaternions, max_payload=split
            ))
        valid = good[0][0]
        bad = [
            b'XXXX02' + valid[6:],
            valid[:40],
            valid + b'\x00' * 9000,
            b'MXTP13' + valid[6:],
            b'',
            bytes(range(256)) * 3,
        ]
        for index, datagrams in enumerate(good):
            for datagram in datagrams:
                sender.sendto(datagram, ('127.0.0.1', port))
            sender.sendto(bad[index % len(bad)], ('127.0.0.1', port))
            time.sleep(1.0 / 120.0)
        time.sleep(0.5)
        assert process.alive(), process.log_text()
    finally:
        sender.close()
        probe.close()
        status = process.stop()
    assert status in (0, -2, 130), process.log_text()
    check_commands('yumi', probe.received)
