"""
End-to-end latency across processes (``python -m pic_ros_tools bench --latency``).

Measured path: a tracker message is published (or sent) by the benchmark process -> the ``teleop``
process (skeleton node, solver, trajectory publisher) -> a ``JointTrajectory`` is received back by
the benchmark process on the first arm controller's topic. Both ends are timed on one clock: the
host's (``time.time_ns`` and the DDS timestamps) where answers are paired by stamp, the benchmark
process's ``time.perf_counter`` where they are paired in order. In the same run, the floor is the
same traffic through an echo process that does nothing (:mod:`pic_ros_tools.ros.echo`).

- 30 Hz: Azure Kinect ``visualization_msgs/MarkerArray`` (32 markers, real frames from a bag);
- 240 Hz: Xsens MVN MXTP02 datagrams over UDP (23 segments, an arm-waving T-pose).

While tracking (teleop runs with ``--engaged``: nobody is there to engage it), the trajectory
publisher publishes one trajectory per controller and input frame
(path ``pic_ros``: its keep-alive timer, which also commands between slow inputs, is set to the
slowest rate the trajectory publisher accepts, :data:`KEEP_ALIVE_RATE`, and its ``min_interval``
to 1 ms for the measurement). Path ``pic_ros_defaults`` runs the same pipeline with the
trajectory publisher's shipped ``rate`` and ``min_interval``: what a user gets, where the timer's
steps and the spacing of the steps can hold a new input back. The timer still answers on its own
(about 14 a second, or up to the shipped rate), and at 240 Hz the pipeline
keeps the newest input and skips the others (``superseded`` on ``/diagnostics``), so answers are
paired with inputs by what they carry (:func:`reflected_latencies`): the benchmark also
subscribes to ``joint_targets``, which ``teleop`` then publishes with each solved frame's capture
stamp just before it hands the targets to the trajectory publisher. A capture stamp names its
input (a MarkerArray's is the stamp the benchmark wrote; an Xsens sample's is the time the
skeleton node read it, after it was sent and before the next one was), the first trajectory
published after it carries that input's targets or a newer one's, and an input's latency is
the time until the first trajectory that carries it or a newer input arrives: for an input the
pipeline skipped, how stale the command was. Times are the DDS messages' own source and
reception timestamps and the benchmark's send times, all on the host's clock (``time.time_ns``).
Inputs never carried count as ``drops``, inputs carried only by a newer one's trajectory as
``superseded``, trajectories that carry no new input (the timer's) as ``unpaired``. A
trajectory of a timer step that holds the publisher's lock while a new target waits for it is
published after that target's ``joint_targets`` and counts as carrying it (a shorter latency,
for at most the share of time the timer's steps take: 14 steps of a few ms a second).

The echo floor of the MarkerArrays is paired the same way, by the stamp each echo carries back.
The UDP floor's answers carry nothing of their datagram; it has no timer and skips nothing, so
its inputs and answers are paired in order (:func:`pair_answers`), each input with the first
answer after it that is not already paired (a datagram lost would shift the pairs after it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
import math
from pathlib import Path
import socket
import tempfile
import time
from typing import Any, Final

from builtin_interfaces.msg import Time
import numpy as np
import numpy.typing as npt
from pic_ros.motion.commander import CommanderConfig, minimum_rate
from pic_ros.trackers.marker_cdr import parse_marker_array
from pic_ros.trackers.xsens_wire import XsensSegment
from pic_ros_tools.metrics import percentile_ms
from pic_ros_tools.ros.background_spin import BackgroundSpin
from pic_ros_tools.ros.processes import (
    loopback_environment,
    ManagedProcess,
    python_module,
    use_run_domain,
    wait_until,
)
from pic_ros_tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

FloatArray = npt.NDArray[np.float64]

RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)

WAIT = 120.0
"""Longest wait for a process to come up or to report [s]: a bound for a busy host, measured
nothing; each wait ends as soon as its event happens."""


KEEP_ALIVE_RATE: Final = float(math.ceil(minimum_rate(CommanderConfig())))
"""The trajectory publisher's ``rate`` while measuring [Hz]: the slowest it accepts with its
default settings (:func:`~pic_ros.motion.commander.minimum_rate`, 13.3 Hz: a timer step comes
before the last trajectory runs out), rounded up, to keep its own answers few (14 a second)."""


@dataclass(frozen=True)
class LatencyResult:
    """
    One latency measurement.

    :param path: ``pic_ros`` (the pipeline, set to step on every input), ``pic_ros_defaults``
        (the pipeline as shipped) or ``floor`` (the echo).
    :param source: ``azure_kinect`` or ``xsens_mvn``.
    :param rate_hz: Input rate [Hz].
    :param sent: Inputs sent after the warm-up.
    :param received: Answers received for them.
    :param drops: Inputs without an answer (:func:`pair_answers`).
    :param p50_ms: Median latency [ms].
    :param p99_ms: 99th percentile [ms].
    :param max_ms: Largest latency [ms].
    :param unpaired: Answers not paired with an input (the keep-alive timer's).
    :param superseded: Inputs the pipeline skipped for a newer one, whose answer carried them
        (their latency is to that answer).
    """

    path: str
    source: str
    rate_hz: float
    sent: int
    received: int
    drops: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    unpaired: int
    superseded: int = 0


PIPELINES: Final = ('pic_ros', 'pic_ros_defaults')
"""The pipeline's paths (:class:`LatencyResult`): set to step on every input, and as shipped."""


def pair_answers(sent: Sequence[float], received: Sequence[float]) -> FloatArray:
    """
    Pair inputs with answers in order and return each input's latency.

    Input ``i`` gets the first answer received after it and after the answer of input ``i - 1``;
    an answer received before the input it would pair with is left unpaired (the keep-alive
    timer's). Inputs left when the answers run out get none (drops).

    :param sent: Send times of the inputs, increasing [s].
    :param received: Arrival times of the answers, increasing [s].
    :return: Latency of each input, NaN for the ones without an answer, shape (len(sent),) [s].
    """
    answers = np.asarray(received, dtype=float)
    return _latencies(sent, answers, _paired_answers(sent, answers))


def _latencies(
    sent: Sequence[float], answers: FloatArray, paired: npt.NDArray[np.int64]
) -> FloatArray:
    """Return each input's latency from its paired answer's index (NaN where -1) [s]."""
    latencies = np.full(len(sent), np.nan)
    found = paired >= 0
    latencies[found] = answers[paired[found]] - np.asarray(sent, dtype=float)[found]
    return latencies


def _paired_answers(sent: Sequence[float], answers: FloatArray) -> npt.NDArray[np.int64]:
    """Return the index of the answer :func:`pair_answers` gives each input (-1: none)."""
    paired = np.full(len(sent), -1, dtype=np.int64)
    cursor = 0
    for index, when in enumerate(sent):
        cursor += int(np.searchsorted(answers[cursor:], when, side='left'))
        if cursor >= answers.size:
            break
        paired[index] = cursor
        cursor += 1
    return paired


def reflected_latencies(
    sent: Sequence[int],
    solved: Sequence[tuple[int, int]],
    answers: Sequence[tuple[int, int]],
    slack: int = 1000,
) -> tuple[FloatArray, npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """
    Return each input's latency to the first answer that carries it or a newer input.

    All times on one clock [ns]. A ``joint_targets`` message's capture stamp names the last
    input sent at or before it (``slack`` covers a stamp rounded through float seconds); the
    first answer published at or after that message carries that input (or a newer one).

    :param sent: The inputs' send times (their capture stamps where they carry one), increasing.
    :param solved: ``(published, capture stamp)`` of each ``joint_targets`` message.
    :param answers: ``(published, received)`` of each answer, published increasing.
    :param slack: How far past an input's send time its capture stamp may read [ns].
    :return: The latency of each input [s] (NaN: never carried); whether each input was solved
        itself; whether each answer carried a new input.
    """
    sent_at = np.asarray(sent, dtype=np.int64)
    published = np.array([answer[0] for answer in answers], dtype=np.int64)
    arrival = np.full(sent_at.size, np.iinfo(np.int64).max)  # the earliest answer per input
    own = np.zeros(sent_at.size, dtype=bool)
    carrying = np.zeros(published.size, dtype=bool)
    for when, stamp in solved:
        index = int(np.searchsorted(sent_at, stamp + slack, side='right')) - 1
        answer = int(np.searchsorted(published, when, side='left'))
        if index < 0 or answer >= published.size:
            continue
        own[index] = True
        carrying[answer] = True
        arrival[index] = min(arrival[index], answers[answer][1])
    earliest = np.minimum.accumulate(arrival[::-1])[::-1]  # a newer input's answer carries it
    latencies = np.where(
        earliest < np.iinfo(np.int64).max, (earliest - sent_at) * 1e-9, np.nan
    )
    return latencies, own, carrying


def _reflected_result(
    path: str, source: str, rate: float, probe: TargetsProbe, sent: Sequence[int], warm: int
) -> LatencyResult:
    """Score the pipeline's inputs from ``warm`` on by what the answers carry."""
    answers = sorted(probe.answers)
    latencies, own, carrying = reflected_latencies(sent, probe.solved, answers)
    first = sent[warm] if len(sent) > warm else np.iinfo(np.int64).max
    after = np.array([answer[0] >= first for answer in answers], dtype=bool)
    measured = latencies[warm:]
    return _scored(
        path, source, rate, measured, after, after & ~carrying,
        superseded=int(np.sum(np.isfinite(measured) & ~own[warm:])),
    )


def _scored(
    path: str,
    source: str,
    rate: float,
    latencies: FloatArray,
    after: npt.NDArray[np.bool_],
    extra: npt.NDArray[np.bool_],
    superseded: int = 0,
) -> LatencyResult:
    """Return the result of the measured inputs' latencies [s] (NaN: none) and the answers'."""
    answered = latencies[np.isfinite(latencies)]
    return LatencyResult(
        path=path,
        source=source,
        rate_hz=rate,
        sent=latencies.size,
        received=int(np.sum(after)),
        drops=latencies.size - answered.size,
        p50_ms=percentile_ms(answered, 50.0),
        p99_ms=percentile_ms(answered, 99.0),
        max_ms=percentile_ms(answered, 100.0),
        unpaired=int(np.sum(extra)),
        superseded=superseded,
    )


def _result(
    path: str, source: str, rate: float, sent: Sequence[float], got: Sequence[float], warm: int
) -> LatencyResult:
    """
    Score the inputs from ``warm`` on and the answers that came after the first of them.

    ``unpaired`` counts those answers paired with no input at all: the answer of a warm-up input
    that arrives after the first measured input is that input's, not an extra one.
    """
    answers = np.asarray(got, dtype=float)
    paired = _paired_answers(sent, answers)
    latencies = _latencies(sent, answers, paired)[warm:]
    after = answers >= sent[warm] if len(sent) > warm else np.zeros(answers.size, dtype=bool)
    extra = after.copy()
    extra[paired[paired >= 0]] = False
    return _scored(path, source, rate, latencies, after, extra)


def bag_marker_arrays(bag: Path, topic: str | None = None, limit: int = 600) -> list[MarkerArray]:
    """
    Read non-empty MarkerArrays from a rosbag2 as rclpy messages (fields that matter copied).

    :param bag: Bag directory or file.
    :param topic: Topic to read (default: the first MarkerArray topic).
    :param limit: Most messages to return.
    :return: Messages with id, type, pose, scale and colour of every marker.
    """
    from rosbags.highlevel import AnyReader

    messages: list[MarkerArray] = []
    with AnyReader([bag]) as reader:
        connections = [
            c
            for c in reader.connections
            if c.msgtype == 'visualization_msgs/msg/MarkerArray'
            and (topic is None or c.topic == topic)
        ]
        for connection, _, raw in reader.messages(connections=connections[:1]):
            recorded = reader.deserialize(raw, connection.msgtype)
            if not recorded.markers:
                continue
            array = MarkerArray()
            for item in recorded.markers:
                marker = Marker()
                marker.header.frame_id = item.header.frame_id
                marker.id = int(item.id)
                marker.type = int(item.type)
                marker.action = int(item.action)
                position, orientation = item.pose.position, item.pose.orientation
                marker.pose.position.x = float(position.x)
                marker.pose.position.y = float(position.y)
                marker.pose.position.z = float(position.z)
                marker.pose.orientation.x = float(orientation.x)
                marker.pose.orientation.y = float(orientation.y)
                marker.pose.orientation.z = float(orientation.z)
                marker.pose.orientation.w = float(orientation.w)
                marker.scale.x = marker.scale.y = marker.scale.z = float(item.scale.x)
                marker.color.r, marker.color.g = float(item.color.r), float(item.color.g)
                marker.color.b, marker.color.a = float(item.color.b), float(item.color.a)
                array.markers.append(marker)
            messages.append(array)
            if len(messages) >= limit:
                break
    return messages


class WavingXsens:
    """
    Single-datagram MXTP02 samples of a person waving both forearms, built one at a time.

    :param rate: Sample rate [Hz] (for the time codes and the motion).
    """

    def __init__(self, rate: float) -> None:
        self._rate = rate
        self._positions, self._quaternions = t_pose_segments()
        self._forearms = [
            (elbow, wrist, side, float(np.linalg.norm(
                self._positions[wrist - 1] - self._positions[elbow - 1]
            )))
            for elbow, wrist, side in (
                (XsensSegment.LEFT_FORE_ARM, XsensSegment.LEFT_HAND, 1.0),
                (XsensSegment.RIGHT_FORE_ARM, XsensSegment.RIGHT_HAND, -1.0),
            )
        ]

    def datagram(self, index: int) -> bytes:
        """
        Return sample ``index`` (sample counter ``index + 1``).

        :param index: Sample index from 0.
        :return: Its one datagram.
        """
        moved = self._positions.copy()
        swing = 0.8 * math.sin(2.0 * math.pi * 0.5 * index / self._rate)
        for elbow, wrist, side, length in self._forearms:
            direction = np.array([math.sin(swing), side * math.cos(swing), 0.0])
            moved[wrist - 1] = self._positions[elbow - 1] + length * direction
        return build_mxtp02_datagrams(
            index + 1, int(1000 * index / self._rate), moved, self._quaternions,
            max_payload=2048,
        )[0]


def xsens_datagrams(count: int, rate: float) -> list[bytes]:
    """
    Build single-datagram MXTP02 samples of a person waving both forearms.

    :param count: Number of samples.
    :param rate: Sample rate [Hz] (for the time codes and the motion).
    :return: One datagram per sample.
    """
    person = WavingXsens(rate)
    return [person.datagram(index) for index in range(count)]


class Probe:
    """
    A benchmark's own node, spun in a thread: it timestamps the answers it hears.

    :param context: rclpy context of the benchmark process.
    :param answer_topic: Topic of the answers (subscribed raw: only arrival times matter).
    :param answer_type: Message type of the answers.
    :param name: Node name.
    """

    def __init__(
        self, context: Context, answer_topic: str, answer_type: type, name: str = 'latency_probe'
    ) -> None:
        self.node = Node(name, context=context)
        self.received: list[float] = []
        """Arrival time of each answer (``time.perf_counter``) [s]."""
        self.node.create_subscription(
            answer_type, answer_topic, self._on_answer, RELIABLE, raw=True
        )
        self.subscribe()
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(self.node)
        self._spin = BackgroundSpin(executor)

    def subscribe(self) -> None:
        """Create further subscriptions of :attr:`node` before it spins (none here)."""

    def _on_answer(self, data: bytes) -> None:
        del data  # Unused: only the arrival time matters.
        self.received.append(time.perf_counter())

    def close(self) -> None:
        """Stop spinning (the thread ends first), then destroy the node."""
        self._spin.stop()
        self.node.destroy_node()


class TargetsProbe(Probe):
    """
    A probe that keeps the DDS timestamps of the answers and what names their inputs.

    The pipeline's inputs are named by the capture stamps of ``joint_targets``, which it also
    hears; the echo floor's MarkerArrays carry their own stamps back.

    :param context: rclpy context of the benchmark process.
    :param answer_topic: Topic of the answers.
    :param answer_type: Message type of the answers.
    :param echo: The answers are the inputs echoed (MarkerArrays), not trajectories.
    """

    def __init__(
        self, context: Context, answer_topic: str, answer_type: type, echo: bool = False
    ) -> None:
        self.answers: list[tuple[int, int]] = []
        """``(published, received)`` of each answer, on the host's clock [ns]."""
        self.solved: list[tuple[int, int]] = []
        """``(published, capture stamp)`` of each ``joint_targets`` message (or echo) [ns]."""
        self._echo = echo
        super().__init__(context, answer_topic, answer_type)

    def subscribe(self) -> None:
        """Subscribe to ``joint_targets`` (``teleop`` publishes it while someone listens)."""
        if not self._echo:
            self.node.create_subscription(JointState, 'joint_targets', self._on_targets, RELIABLE)

    # rclpy passes the message info as a dict (Jazzy's rclpy has no MessageInfo type to name)
    def _on_answer(self, data: bytes, info: dict[str, int]) -> None:  # type: ignore[override]
        self.answers.append((info['source_timestamp'], info['received_timestamp']))
        if self._echo:  # the echo carries the input's stamp back
            stamp = parse_marker_array(data).stamp
            if math.isfinite(stamp):
                self.solved.append((info['source_timestamp'], round(stamp * 1e9)))

    def _on_targets(self, message: JointState, info: dict[str, int]) -> None:
        stamp = message.header.stamp
        self.solved.append((info['source_timestamp'], stamp.sec * 1_000_000_000 + stamp.nanosec))


def paced(count: int, rate: float, send: Callable[[int], None]) -> list[float]:
    """Call ``send(i)`` at ``rate`` and return the send times (perf_counter)."""
    times: list[float] = []
    start = time.perf_counter() + 0.05
    for index in range(count):
        deadline = start + index / rate
        while True:
            left = deadline - time.perf_counter()
            if left <= 0.0:
                break
            time.sleep(left if left > 0.002 else 0.0)
        times.append(time.perf_counter())
        send(index)
    return times


def measure(
    source: str,
    path: str,
    rate: float,
    seconds: float,
    robot: str,
    markers: Sequence[MarkerArray],
    log_dir: Path,
    domain_id: int,
    warmup: float = 1.0,
) -> LatencyResult:
    """
    Run one latency measurement with its own processes.

    :param source: ``azure_kinect`` or ``xsens_mvn``.
    :param path: ``pic_ros``, ``pic_ros_defaults`` or ``floor`` (:class:`LatencyResult`).
    :param rate: Input rate [Hz].
    :param seconds: Measured duration after the warm-up [s].
    :param robot: Robot of the pipeline.
    :param markers: MarkerArrays to cycle through (azure_kinect).
    :param log_dir: Where the child processes log.
    :param domain_id: ROS domain id of the run.
    :param warmup: Inputs sent before measuring [s].
    :return: The measurement.
    """
    environment = loopback_environment(domain_id)
    port = 20000 + domain_id * 10 + (1 if path == 'floor' else 0)
    pipeline = path in PIPELINES
    if pipeline:
        # One trajectory per input: the 50 Hz hold/keep-alive timer would add commands between
        # 30 Hz inputs, which cannot be paired with an input; and a 1 ms spacing, since the
        # default (half the timer's period) would skip inputs. Not for the shipped defaults.
        spacing = [] if path == 'pic_ros_defaults' else [
            '--param', f'trajectory_publisher.rate={KEEP_ALIVE_RATE}',
            '--param', 'trajectory_publisher.min_interval=0.001',
        ]
        argv = python_module(
            'pic_ros', 'teleop', '--robot', robot, '--source', source,
            '--engaged',  # measured while following: no operator to engage it
            '--param', 'trajectory_publisher.wait_for_joint_states=false',
            '--param', f'skeleton_node.udp_port={port}',
            *spacing,
            '--ros-args', '-r', 'body_tracking_data:=bench_in',
        )
    else:
        argv = python_module(
            'pic_ros_tools.ros.echo', '--mode', 'dds' if source == 'azure_kinect' else 'udp',
            '--udp-port', str(port), '--ros-args', '-r', 'echo_in:=bench_in',
        )
    context = Context()
    rclpy.init(context=context, domain_id=domain_id)
    process = ManagedProcess(argv, environment, log_dir / f'{path}_{source}.log')
    probe = None
    sender: socket.socket | None = None
    try:
        answer_type: type = JointTrajectory
        if pipeline:
            from pic_ros.robot import load_robot

            first_arm = next(iter(load_robot(robot).arms.values()))
            answer = f'/{first_arm.spec.controller}/joint_trajectory'
        else:
            answer = 'echo_out'
            if source == 'azure_kinect':
                answer_type = MarkerArray
        probe = (
            TargetsProbe(context, answer, answer_type, echo=path == 'floor')
            if pipeline or source == 'azure_kinect'
            else Probe(context, answer, answer_type)
        )
        publisher = probe.node.create_publisher(MarkerArray, 'bench_in', RELIABLE)
        ready = wait_until(
            lambda: probe is not None and probe.node.count_publishers(answer) > 0
            and (not pipeline or probe.node.count_publishers('joint_targets') > 0)
            and (source != 'azure_kinect' or publisher.get_subscription_count() > 0),
            timeout=WAIT,
        )
        if not ready:
            raise RuntimeError(
                f'{path} {source}: the process did not connect; see {process.log_path}'
            )
        warm = int(warmup * rate)
        total = warm + int(seconds * rate)
        stamps: list[int] = []  # each input's capture stamp, or send time, on the host clock [ns]
        if source == 'azure_kinect':

            def send(index: int) -> None:
                message = markers[index % len(markers)]
                now = time.time_ns()
                stamp = Time(sec=now // 1_000_000_000, nanosec=now % 1_000_000_000)
                for marker in message.markers:
                    marker.header.stamp = stamp
                stamps.append(now)
                publisher.publish(message)
        else:
            datagrams = xsens_datagrams(total, rate)
            sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            target = ('127.0.0.1', port)

            def send(index: int) -> None:
                stamps.append(time.time_ns())
                sender.sendto(datagrams[index], target)

        times = paced(total, rate, send)
        time.sleep(0.5)
        if isinstance(probe, TargetsProbe):
            return _reflected_result(path, source, rate, probe, stamps, warm)
        return _result(path, source, rate, times, list(probe.received), warm)
    finally:
        if sender is not None:
            sender.close()
        if probe is not None:
            probe.close()
        process.stop()
        rclpy.try_shutdown(context=context)


def run_latency_bench(
    robot: str = 'baxter',
    seconds: float = 20.0,
    bag: Path | None = None,
    log_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """
    Measure the pipeline and the floor at 30 Hz (Azure Kinect) and 240 Hz (Xsens).

    :param robot: Robot of the pipeline.
    :param seconds: Measured duration of each run [s].
    :param bag: Bag with Azure Kinect MarkerArrays (default: the real one beside the project, else
        the shipped synthetic demo bag).
    :param log_dir: Where the child processes log (default: a temporary directory).
    :return: One record per (path, source), as dicts.
    """
    domain = use_run_domain()  # an exported ROS_DOMAIN_ID, else one of this run's own
    if bag is None:
        bag = default_bag()
    markers = bag_marker_arrays(bag)
    if not markers:
        raise RuntimeError(f'no MarkerArray in {bag}')
    results = []
    with tempfile.TemporaryDirectory(prefix='pic_ros_latency_') as scratch:
        logs = log_dir or Path(scratch)
        runs = [('azure_kinect', 30.0), ('xsens_mvn', 240.0)]
        for source, rate in runs:
            for path in ('floor', *PIPELINES):  # one after the other, each stopped first
                result = measure(source, path, rate, seconds, robot, markers, logs, domain)
                results.append(asdict(result))
    return results


def default_bag() -> Path:
    """Return the real Azure Kinect bag beside the project, else the shipped synthetic one."""
    from pic_ros_tools.catalog import pic_demos_dir
    from pic_ros_tools.resources import demo_dir

    demos = pic_demos_dir()
    if demos is not None:
        real = demos.parent / 'azure_kinect' / 'body_tracking_ergonomics'
        if real.exists():
            return real
    return demo_dir() / 'synthetic1_bag'
