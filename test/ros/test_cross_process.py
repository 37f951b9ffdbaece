"""
Cross-process tests over DDS on loopback: a separately started ``teleop`` driven by real data.

Each test starts ``python -m pic_ros teleop`` as its own process (own session, stopped by its pid)
in the run's ``ROS_DOMAIN_ID`` and discovery range (``conftest.py``), feeds it from this process
and checks what only separate processes can show: the command line's wiring (``--robot``,
``--source``, ``--param``, remapping), tracker input crossing into the process (DDS or UDP), one
trajectory stream per arm controller coming back over DDS, the engagement (the process starts
disengaged: the ``~/engage`` service across processes, or ``--engaged``), and a clean stop.
One robot is enough
for that. What the commands contain -- joint limits, velocity limits, steps
between commands, stamps -- is checked in-process, on the same Azure Kinect bag and on sim time
(``test_teleop_pipeline.py``, ``test_solver_node.py``, ``test_trajectory_publisher_node.py``), as
is the Xsens parsing of bad and split datagrams (``test_skeleton_node.py``, ``test_xsens.py``).
"""

from __future__ import annotations

from pathlib import Path
import socket
import time

import numpy as np
from pic_ros.robot import load_robot
from pic_ros_tools.ros.background_spin import BackgroundSpin
from pic_ros_tools.ros.processes import (
    domain_id,
    loopback_environment,
    ManagedProcess,
    python_module,
    wait_until,
)
from pic_ros_tools.ros.service_call import ask
from pic_ros_tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
import pytest

rclpy = pytest.importorskip('rclpy')

from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import Bool  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from trajectory_msgs.msg import JointTrajectory  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

pytestmark = pytest.mark.ros

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
BAG_TOPIC = '/kinect2/body_tracking_data'
ROBOT = 'yumi'
"""The one robot of these tests (two arm controllers)."""

MIN_COMMANDS = 50
"""Trajectories each controller must receive for a run to count as driven."""

WAIT = 60.0
"""Longest wait for an event (connection, trajectories, the process's exit after SIGINT) [s]."""


DOMAIN = domain_id()
"""The run's ROS domain (exported, else its own: ``conftest.py``); the tests use it in turn."""


class Probe:
    """This test's node: publishes tracker messages, records the trajectories it receives."""

    def __init__(self, domain_id: int, topics: list[str]) -> None:
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = Node('cross_process_probe', context=self.context)
        self.received: dict[str, list[JointTrajectory]] = {t: [] for t in topics}
        for topic in topics:
            self.node.create_subscription(
                JointTrajectory, topic, self._recorder(topic), RELIABLE
            )
        self.publisher = self.node.create_publisher(MarkerArray, BAG_TOPIC, RELIABLE)
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        self.spin = BackgroundSpin(executor)

    def engage(self) -> tuple[bool, str]:
        """Call ``/trajectory_publisher/engage`` as an operator does; return the answer."""
        client = self.node.create_client(Trigger, '/trajectory_publisher/engage')
        assert client.wait_for_service(timeout_sec=30.0), 'no /trajectory_publisher/engage'
        answer = ask(lambda: client.call_async(Trigger.Request()), timeout=30.0)
        assert answer is not None, 'the engage service did not answer'
        return answer.success, answer.message

    def engaged(self) -> list[bool]:
        """Subscribe the latched ``/engaged`` now (a late subscriber); return what it reads."""
        values: list[bool] = []
        latched = QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        self.node.create_subscription(
            Bool, '/engaged', lambda message: values.append(message.data), latched
        )
        assert wait_until(lambda: values, timeout=30.0), 'nothing on /engaged'
        return values

    def _recorder(self, topic: str):
        def record(message: JointTrajectory) -> None:
            self.received[topic].append(message)

        return record

    def close(self) -> None:
        """Stop spinning (the thread ends first), shut this context down."""
        self.spin.stop(WAIT)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def _log(process: ManagedProcess) -> str:
    """Return what a process wrote to its log file so far (for a failure message)."""
    if process.log_path is None or not process.log_path.exists():
        return ''
    return process.log_path.read_text(encoding='utf-8', errors='replace')


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


def controller_topics(robot_name: str) -> dict[str, tuple[str, ...]]:
    """Return each arm controller's trajectory topic with the arm's joints, in order."""
    return {
        f'/{arm.spec.controller}/joint_trajectory': arm.joint_names
        for arm in load_robot(robot_name).arms.values()
    }


def check_every_controller_was_driven(received: dict[str, list[JointTrajectory]]) -> None:
    """Assert that every controller topic brought trajectories of its own arm's joints."""
    for topic, joint_names in controller_topics(ROBOT).items():
        messages = received[topic]
        assert len(messages) > MIN_COMMANDS, f'{topic}: only {len(messages)} trajectories'
        for message in messages:
            assert tuple(message.joint_names) == joint_names, topic
            assert len(message.points) >= 1


def test_real_azure_kinect_bag_drives_every_controller_across_processes(shared_data, tmp_path):
    """
    The real Azure Kinect bag, published 4x fast into a teleop process, drives every controller.

    The README's command starts disengaged: ``/trajectory_publisher/engage`` is called across
    processes first (the latched ``/engaged`` then reads true). The remapped tracker topic
    reaches the process, each arm's trajectories come back on its own controller topic, and the
    process runs through the tracking losses and stops cleanly.
    """
    messages = bag_messages(shared_data / 'azure_kinect' / 'body_tracking_ergonomics')
    # The start (18 empty arrays), 15 s of tracking, and the end (one empty, 41 empty arrays).
    chosen = messages[:240] + messages[880:]
    assert sum(1 for _, raw in chosen if len(raw) < 100) >= 55
    domain = DOMAIN
    topics = list(controller_topics(ROBOT))
    process = start_teleop(ROBOT, 'azure_kinect', domain, tmp_path / 'teleop.log')
    probe = Probe(domain, topics)
    try:
        connected = wait_until(
            lambda: probe.publisher.get_subscription_count() > 0
            and all(probe.node.count_publishers(t) > 0 for t in topics),
            timeout=WAIT,
        )
        assert connected, _log(process)
        assert probe.engage() == (True, 'engaged by service')
        assert probe.engaged() == [True]
        # 4x the recorded pace; the 43 s left out between the two parts is not waited for.
        stamps = np.array([stamp for stamp, _ in chosen]) * 1e-9
        schedule = np.concatenate([[0.0], np.cumsum(np.minimum(np.diff(stamps), 0.2))]) / 4.0
        start = time.monotonic()
        for due, (_, raw) in zip(schedule, chosen, strict=True):
            delay = start + due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            probe.publisher.publish(raw)
        wait_until(lambda: all(len(probe.received[t]) > MIN_COMMANDS for t in topics), WAIT)
        assert process.alive(), _log(process)
    finally:
        probe.close()
        status = process.stop(timeout=WAIT)
    assert status in (0, -2, 130), _log(process)
    check_every_controller_was_driven(probe.received)


def test_xsens_udp_stream_drives_every_controller_across_processes(tmp_path):
    """
    MXTP02 samples sent over UDP to the port given by ``--param`` drive every controller.

    The ``skeleton_node.udp_port`` parameter reaches the Xsens receiver of the teleop process
    (started ``--engaged``), and each arm's trajectories come back over DDS; the process stops
    cleanly.
    """
    domain = DOMAIN
    port = 31000 + domain
    topics = list(controller_topics(ROBOT))
    process = start_teleop(
        ROBOT, 'xsens_mvn', domain, tmp_path / 'teleop.log', '--engaged',
        '--param', f'skeleton_node.udp_port={port}',
    )
    probe = Probe(domain, topics)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        assert wait_until(
            lambda: all(probe.node.count_publishers(t) > 0 for t in topics), timeout=WAIT
        ), _log(process)
        positions, quaternions = t_pose_segments()
        for index in range(240):
            moved = positions.copy()
            moved[:, 2] += 0.01 * np.sin(index / 20.0)
            for datagram in build_mxtp02_datagrams(index + 1, index * 16, moved, quaternions):
                sender.sendto(datagram, ('127.0.0.1', port))
            time.sleep(1.0 / 120.0)
        wait_until(lambda: all(len(probe.received[t]) > MIN_COMMANDS for t in topics), WAIT)
        assert process.alive(), _log(process)
    finally:
        sender.close()
        probe.close()
        status = process.stop(timeout=WAIT)
    assert status in (0, -2, 130), _log(process)
    check_every_controller_was_driven(probe.received)
