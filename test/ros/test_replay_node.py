"""
Cross-process tests of ``replay`` over DDS on loopback.

Each test starts ``python -m pic_ros_tools.ros.replay_node`` as a process of its own (own session,
the run's ``ROS_DOMAIN_ID`` and discovery range, see ``conftest.py``), listens in this process with
raw subscriptions, and stops the process by its pid. Content is compared decoded (ids, positions,
stamps, frame ids), never as CDR bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import numpy as np
from pic_ros_tools.recordings import rosbag as bags
from pic_ros_tools.ros.background_spin import BackgroundSpin
from pic_ros_tools.ros.processes import domain_id, loopback_environment
from pic_ros_tools.ros.service_call import ask
import pytest

rclpy = pytest.importorskip('rclpy', reason='the replay tests need rclpy and the message packages')

from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.serialization import deserialize_message  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

pytestmark = pytest.mark.ros

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEMO_BAG = PROJECT_ROOT / 'pic_ros_tools' / 'demo' / 'synthetic1_bag'
AZURE_TOPIC = '/kinect2/body_tracking_data'
RATE = 4.0
PLAYED_SECONDS = 14.0
"""Bag time played from the real bag: 210 MarkerArrays (the first 18 empty), 3.5 s at rate 4."""

PROCESS_SECONDS = 60.0
"""Longest wall time a replay process may take before the test fails [s]."""

ARRIVAL_SECONDS = 60.0
"""Longest wait for what a finished replay sent to arrive [s] (a bound, never a figure)."""


DOMAIN = domain_id()
"""The run's ROS domain (exported, else its own: ``conftest.py``); the tests use it in turn."""


class Listener:
    """This test's node: raw subscriptions recording (arrival time, bytes) per topic."""

    def __init__(self, domain_id: int, topics: dict[str, type]) -> None:
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = Node('replay_test_listener', context=self.context)
        self.received: dict[str, list[tuple[float, bytes]]] = {topic: [] for topic in topics}
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        for topic, message_type in topics.items():
            self.node.create_subscription(
                message_type, topic, self._recorder(self.received[topic]), qos, raw=True
            )
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        self.spin = BackgroundSpin(executor)

    @staticmethod
    def _recorder(into: list[tuple[float, bytes]]):
        def record(data: bytes) -> None:
            into.append((time.monotonic(), bytes(data)))

        return record

    def close(self) -> None:
        """Stop spinning (the thread ends first) and shut the context down."""
        self.spin.stop()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def listener() -> Iterator:
    """Return ``listen(domain_id, {topic: type})``; every listener is closed after the test."""
    made: list[Listener] = []

    def listen(domain_id: int, topics: dict[str, type]) -> Listener:
        made.append(Listener(domain_id, topics))
        return made[-1]

    yield listen
    for one in made:
        one.close()


class Replay:
    """A replay process in its own session, stopped by its pid."""

    def __init__(self, domain_id: int, args: list[str], log_dir: Path) -> None:
        environment = loopback_environment(domain_id)
        self.stdout_path = log_dir / f'replay_{domain_id}.out'
        self.stderr_path = log_dir / f'replay_{domain_id}.err'
        with self.stdout_path.open('wb') as out, self.stderr_path.open('wb') as err:
            self.process = subprocess.Popen(
                [sys.executable, '-m', 'pic_ros_tools.ros.replay_node', *args],
                env=environment, cwd=PROJECT_ROOT, stdout=out, stderr=err,
                start_new_session=True,
            )

    def wait(self, seconds: float = PROCESS_SECONDS) -> int:
        """Wait for the process to end by itself (bounded) and return its exit status."""
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f'replay did not finish within {seconds} s:\n{self.output()}')

    def interrupt(self, seconds: float = PROCESS_SECONDS) -> int:
        """Send SIGINT to the process and wait (bounded) for it to exit."""
        os.kill(self.process.pid, signal.SIGINT)
        try:
            return self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f'replay ignored SIGINT for {seconds} s:\n{self.output()}')

    def stop(self) -> None:
        """Stop the process by its pid if it still runs: SIGINT, then SIGKILL."""
        if self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5.0)

    def output(self) -> str:
        """Return what the process wrote to stdout and stderr."""
        return (
            self.stdout_path.read_text(encoding='utf-8', errors='replace')
            + self.stderr_path.read_text(encoding='utf-8', errors='replace')
        )


@pytest.fixture
def replay(tmp_path: Path) -> Iterator:
    """Return ``start(domain_id, args)``; every process still running is stopped by its pid."""
    started: list[Replay] = []

    def start(domain_id: int, args: list[str]) -> Replay:
        started.append(Replay(domain_id, args, tmp_path))
        return started[-1]

    yield start
    for process in started:
        process.stop()


def _content(data: bytes) -> tuple[tuple[int, ...], np.ndarray, int, tuple[str, ...]]:
    """Decode MarkerArray bytes with rclpy: ids, positions, first header stamp [ns], frame ids."""
    markers = deserialize_message(data, MarkerArray).markers
    positions = np.array(
        [[m.pose.position.x, m.pose.position.y, m.pose.position.z] for m in markers]
    ).reshape(-1, 3)
    stamp = -1
    if markers:
        stamp = markers[0].header.stamp.sec * 1_000_000_000 + markers[0].header.stamp.nanosec
    return (tuple(m.id for m in markers), positions, stamp,
            tuple(sorted({m.header.frame_id for m in markers})))


def _expected(bag: Path, topic: str, stop_ns: int | None = None) -> list:
    """Decode a bag's messages with rosbags: (receive ns, ids, positions, stamp ns, frame ids)."""
    from rosbags.highlevel import AnyReader

    result = []
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        for connection, stamp, raw in reader.messages(connections=connections, stop=stop_ns):
            markers = reader.deserialize(raw, connection.msgtype).markers
            positions = np.array(
                [[m.pose.position.x, m.pose.position.y, m.pose.position.z] for m in markers]
            ).reshape(-1, 3)
            header = -1
            if markers:
                first = markers[0].header.stamp
                header = first.sec * 1_000_000_000 + first.nanosec
            result.append((stamp, tuple(m.id for m in markers), positions, header,
                           tuple(sorted({m.header.frame_id for m in markers}))))
    return result


def _two_topic_bag(path: Path, count: int = 30, step_ns: int = 20_000_000) -> Path:
    """Write a bag with ``count`` demo MarkerArrays on /a and the next ``count`` on /b."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import get_typestore, Stores

    typestore = get_typestore(Stores.ROS2_KILTED)
    source = [m for m in bags.read_messages(DEMO_BAG) if len(m.data) > 8][: 2 * count]
    with Writer(path, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        first = writer.add_connection('/a', bags.MARKER_ARRAY, typestore=typestore)
        second = writer.add_connection('/b', bags.MARKER_ARRAY, typestore=typestore)
        for index in range(count):
            stamp = 1_000_000_000 + index * step_ns
            writer.write(first, stamp, source[index].data)
            writer.write(second, stamp + step_ns // 2, source[count + index].data)
    return path


def test_real_bag_arrives_complete_and_in_order_across_processes(
    shared_data: Path, listener, replay
) -> None:
    """
    210 MarkerArrays of the real bag arrive in another process, in order, as recorded.

    The pace is checked on the replay's own clock
    (:func:`test_messages_are_published_at_the_recorded_pace`); here, what only crossing
    processes can show.
    """
    bag = shared_data / 'azure_kinect' / 'body_tracking_ergonomics'
    start = bags.bag_info(bag).start_ns
    expected = _expected(bag, AZURE_TOPIC, stop_ns=start + int(PLAYED_SECONDS * 1e9))
    assert len(expected) == 210 and sum(1 for e in expected if not e[1]) == 18
    domain = DOMAIN
    heard = listener(domain, {AZURE_TOPIC: MarkerArray})
    process = replay(domain, [
        str(bag), '--rate', str(RATE), '--playback-duration', str(PLAYED_SECONDS),
        '--wait-for-subscribers', '--delay', '0.3',
    ])
    assert process.wait() == 0, process.output()
    deadline = time.monotonic() + ARRIVAL_SECONDS
    received = heard.received[AZURE_TOPIC]
    while len(received) < len(expected) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(received) == len(expected), process.output()
    for (_, data), (_, ids, positions, stamp, frames) in zip(received, expected):
        got_ids, got_positions, got_stamp, got_frames = _content(data)
        assert got_ids == ids and got_stamp == stamp and got_frames == frames
        assert np.array_equal(got_positions, positions)
    output = process.output()
    assert 'tf2_msgs/msg/TFMessage is not installed' in output
    assert 'replay done: 210 messages on 1 topics' in output


def test_topics_and_remap_choose_and_rename_what_is_published(
    tmp_path: Path, listener, replay
) -> None:
    """
    ``--topics a --remap a:=/renamed`` publishes only /a, as /renamed; /clock follows.

    /clock is the bag's time: from the first stamp on, in order, and never past the bag time
    the replay can have reached in the wall time it ran (how many ticks arrive, and how far
    past the last message the last one is, depend on how busy the host is).
    """
    bag = _two_topic_bag(tmp_path / 'two')
    expected = _expected(bag, '/a')
    domain = DOMAIN
    heard = listener(domain, {
        '/renamed': MarkerArray, '/a': MarkerArray, '/b': MarkerArray, '/clock': Clock,
    })
    began = time.monotonic()
    process = replay(domain, [
        str(bag), '--topics', 'a', '--remap', 'a:=/renamed', '--clock', '100',
        '--wait-for-subscribers', '--delay', '0.3',
    ])
    assert process.wait() == 0, process.output()
    ran = time.monotonic() - began
    deadline = time.monotonic() + ARRIVAL_SECONDS
    while len(heard.received['/renamed']) < len(expected) and time.monotonic() < deadline:
        time.sleep(0.01)
    renamed = [_content(data) for _, data in heard.received['/renamed']]
    assert [content[0] for content in renamed] == [entry[1] for entry in expected]
    assert all(np.array_equal(got[1], want[2]) for got, want in zip(renamed, expected))
    assert heard.received['/a'] == [] and heard.received['/b'] == []
    ticks = [deserialize_message(data, Clock).clock for _, data in heard.received['/clock']]
    times = [tick.sec * 1_000_000_000 + tick.nanosec for tick in ticks]
    assert times, process.output()
    assert times == sorted(times)
    assert 1_000_000_000 <= times[0] and times[-1] <= 1_000_000_000 + ran * 1e9
    assert 'replay done: 30 messages on 1 topics' in process.output()


def test_a_replay_waiting_for_two_readers_plays_the_whole_bag_to_a_late_second_one(
    tmp_path: Path, listener, replay
) -> None:
    """
    ``--wait-for-subscribers 2``: one matched reader does not start the playback; the second does.

    As ``evaluate --live`` and the demo start it, with a recorder's reader matched before the
    skeleton node's: nothing is published while only the first listener is there, and both get
    every message of the bag, in order. (Its own topic: no reader of another test is counted.)
    """
    bag = _two_topic_bag(tmp_path / 'two_readers', count=10)
    expected = [entry[1] for entry in _expected(bag, '/a')]
    topic = '/two_readers'
    first = listener(DOMAIN, {topic: MarkerArray})
    process = replay(DOMAIN, [
        str(bag), '--topics', '/a', '--remap', f'a:={topic}', '--wait-for-subscribers', '2',
    ])
    deadline = time.monotonic() + ARRIVAL_SECONDS
    while time.monotonic() < deadline and not (
        'once every topic has 2 matched subscribers' in process.output()
        and first.node.count_publishers(topic) > 0
    ):
        time.sleep(0.01)
    assert first.node.count_publishers(topic) > 0, process.output()
    assert first.received[topic] == [], process.output()  # one reader: still waiting
    second = listener(DOMAIN, {topic: MarkerArray})
    assert process.wait() == 0, process.output()
    deadline = time.monotonic() + ARRIVAL_SECONDS
    while time.monotonic() < deadline and min(
        len(first.received[topic]), len(second.received[topic])
    ) < len(expected):
        time.sleep(0.01)
    for heard in (first, second):
        assert [_content(data)[0] for _, data in heard.received[topic]] == expected


def test_sigint_stops_a_looping_replay_cleanly(tmp_path: Path, listener, replay) -> None:
    """A looping replay plays the bag again and again until SIGINT, then exits with status 0."""
    bag = _two_topic_bag(tmp_path / 'loop', count=10)
    domain = DOMAIN
    heard = listener(domain, {'/a': MarkerArray})
    process = replay(domain, [
        str(bag), '--loop', '--rate', '2', '--topics', '/a', '--wait-for-subscribers',
    ])
    deadline = time.monotonic() + ARRIVAL_SECONDS
    while len(heard.received['/a']) < 25 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(heard.received['/a']) >= 25, process.output()
    assert process.interrupt() == 0, process.output()
    assert 'replay interrupted' in process.output()
    ids = [_content(data)[0] for _, data in heard.received['/a']]
    assert ids[:10] == ids[10:20]


@pytest.mark.parametrize(
    'phase, options',
    [('playing', ['--loop']), ('waiting', ['--wait-for-subscribers'])],
)
def test_a_running_replay_answers_its_parameter_services(
    tmp_path: Path, listener, replay, phase, options
) -> None:
    """
    While it plays (or waits for subscribers), ``replay`` lists and reads its parameters.

    What ``ros2 param list`` asks, through rclpy's parameter client; then SIGINT ends it
    cleanly. Every wait is a bound, never a figure.
    """
    from rclpy.parameter_client import AsyncParameterClient

    bag = _two_topic_bag(tmp_path / phase, count=10)
    namespace = f'/replay_parameters_{phase}'
    asker = listener(DOMAIN, {})
    process = replay(DOMAIN, [
        str(bag), '--topics', '/a', *options, '--ros-args', '-r', f'__ns:={namespace}',
    ])
    client = AsyncParameterClient(asker.node, f'{namespace}/replay')  # gone with the node
    assert client.wait_for_services(timeout_sec=ARRIVAL_SECONDS), process.output()
    listed = ask(lambda: client.list_parameters([], 0), ARRIVAL_SECONDS)
    assert listed is not None, f'no answer in {ARRIVAL_SECONDS} s:\n{process.output()}'
    got = ask(lambda: client.get_parameters(['use_sim_time']), ARRIVAL_SECONDS)
    assert got is not None, f'no answer in {ARRIVAL_SECONDS} s:\n{process.output()}'
    assert 'use_sim_time' in listed.result.names
    assert got.values[0].bool_value is False
    assert process.process.poll() is None, process.output()  # still playing / waiting
    assert process.interrupt() == 0, process.output()
    assert 'replay interrupted' in process.output()


def test_bad_arguments_exit_with_status_2_and_a_reason(tmp_path: Path) -> None:
    """A missing bag, an unknown topic or a bad remap rule exit 2 without starting ROS."""
    from pic_ros_tools.ros.replay_node import run_replay

    assert run_replay([str(tmp_path / 'nowhere')]) == 2
    assert run_replay([str(DEMO_BAG), '--topics', '/nowhere']) == 2
    with pytest.raises(SystemExit):
        run_replay([str(DEMO_BAG), '--remap', 'no-separator'])
    assert run_replay([str(DEMO_BAG), '--rate', '0']) == 2
    assert run_replay([str(DEMO_BAG), '--info']) == 0


class _VirtualTime:
    """Stands in for the ``time`` module of the replay: a clock that sleeping advances."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        """Return the virtual time [s]."""
        return self.now

    def sleep(self, seconds: float) -> None:
        """Advance the virtual time instead of waiting."""
        self.now += max(seconds, 0.0)


def test_messages_are_published_at_the_recorded_pace(monkeypatch) -> None:
    """Each message goes out at start + (its bag time - the first) / rate, on the replay clock."""
    from pic_ros_tools.ros import replay_node

    virtual = _VirtualTime()
    monkeypatch.setattr(replay_node, 'time', virtual)
    context = Context()
    rclpy.init(context=context, domain_id=DOMAIN)
    try:
        info = bags.bag_info(DEMO_BAG)
        options = replay_node.ReplayOptions(bag=DEMO_BAG, rate=RATE, duration=3.0, delay=0.5)
        node = replay_node.ReplayNode(options, info, context=context)
        sent: list[float] = []
        for publisher in node._outputs.values():
            publisher.publish = lambda data, sent=sent: sent.append(virtual.now)
        began = virtual.now

        assert node.play()

        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    recorded = np.array([
        message.timestamp_ns for message in bags.read_messages(
            DEMO_BAG, start_ns=info.start_ns, stop_ns=info.start_ns + 3_000_000_000
        )
    ]) / 1e9
    assert len(sent) == len(recorded) > 0
    expected = began + options.delay + (recorded - recorded[0]) / RATE
    np.testing.assert_allclose(sent, expected, atol=1e-9)
