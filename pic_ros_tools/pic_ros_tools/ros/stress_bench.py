"""
Real-time replay under load, every frame accounted for (``pic_ros_tools bench --stress``).

The benchmark process sends a tracker stream in real time into a ``teleop`` process while a CPU
hog (a busy loop pinned to the second core) runs beside it, and checks what issue-level promises
say about a starved pipeline:

- **nothing lost without a trace**: every message sent is in the skeleton node's ``frames_in`` or
  counted as ``lost_upstream``, and every message in ``frames_in`` is a skeleton or a counted
  drop (``/diagnostics``, read after the stream ends; for DDS, relative to a report taken after
  a warm-up of empty arrays, since what a writer sends before the reader has matched it is lost
  where nobody can count it); every skeleton handed to the solver is solved or counted by it
  (``superseded`` by a newer one while it was busy, ``too_old``, rejected);
- **evenly timed commands**: the inter-arrival times of the first arm's ``JointTrajectory``
  messages, received by this process, against the trajectory publisher's period;
- **the right person after a gap** (marker trackers, :class:`Scenario`): every minute from
  second 10 the person leaves for 3 s (empty arrays), then a second figure 4.2 m to the side and
  with the same body id (as the Kinect v2 encoding has only one) is alone in view for 5 s, then
  the person comes back. Every frame of the second figure must be dropped as ``far_body`` and
  nobody new taken up (``people_taken_up`` stays 1): identity switches = ``people_taken_up - 1``.

Sources: ``azure_kinect`` at 30 Hz over DDS (real frames of a bag, cycled, stamped at exactly
1/30 s steps as a camera stamps them, so a gap in the stamps is a lost array) and ``xsens_mvn``
at 240 Hz over UDP (a waving person, consecutive sample counters).
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from pathlib import Path
import socket
import sys
import tempfile
import threading
import time
from typing import Any

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
from pic_ros_tools.metrics import percentile_ms
from pic_ros_tools.ros.latency_bench import (
    bag_marker_arrays,
    default_bag,
    paced,
    Probe,
    RELIABLE,
    WavingXsens,
)
from pic_ros_tools.ros.processes import (
    loopback_environment,
    ManagedProcess,
    python_module,
    stop_processes,
    use_run_domain,
    wait_until,
)
import rclpy
from rclpy.context import Context
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

RATES = {'azure_kinect': 30.0, 'xsens_mvn': 240.0}
"""Input rate of each source [Hz]."""

STRANGER_OFFSET = 4.2
"""How far to the side of the person the second figure stands [m]."""


@dataclass(frozen=True)
class Scenario:
    """
    When the person leaves and a second figure is alone in view (marker trackers).

    The gap must outlast the skeleton node's ``switch_after`` and the gap with the second figure
    must end before its ``reacquire_after`` (1 s and 10 s by default), so that the rule under
    test decides.

    :param start: First event [s into the stream].
    :param every: Period of the events [s].
    :param gap: The person's absence: empty arrays [s].
    :param stranger: Then the second figure alone [s].
    """

    start: float = 10.0
    every: float = 60.0
    gap: float = 3.0
    stranger: float = 5.0

    def scene(self, seconds: float) -> str:
        """
        Return what the marker stream shows at a time of the run.

        :param seconds: Time since the stream started [s].
        :return: ``person``, ``nobody`` or ``stranger``.
        """
        if seconds < self.start:
            return 'person'
        phase = (seconds - self.start) % self.every
        if phase < self.gap:
            return 'nobody'
        if phase < self.gap + self.stranger:
            return 'stranger'
        return 'person'


HOG = (
    'import os\n'
    'if len(os.sched_getaffinity(0)) > 1:\n'
    '    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})\n'
    'while True:\n'
    '    pass\n'
)
"""The CPU hog: a busy loop on the last core this process may use."""

WAIT = 120.0
"""Longest wait for teleop to come up or for a report [s]: a bound for a busy host, measured
nothing; each wait ends as soon as its event happens."""


@dataclass(frozen=True)
class StressResult:
    """
    One stress run.

    :param source: The tracker source.
    :param rate_hz: Input rate [Hz].
    :param seconds: Duration of the stream [s].
    :param hog: Whether the CPU hog ran.
    :param sent: Tracker messages sent.
    :param frames_in: Messages the skeleton node received.
    :param lost_upstream: Messages the skeleton node counted as lost on the way.
    :param unaccounted: ``sent - frames_in - lost_upstream`` (0 when every loss is counted).
    :param skeletons_out: Skeletons produced.
    :param dropped: Counted drops by reason (received but not used).
    :param unprocessed: ``frames_in - skeletons_out - sum(dropped)`` (0: each one has a reason).
    :param lost_in_socket: Datagrams the kernel dropped (UDP; None otherwise).
    :param commands: ``JointTrajectory`` messages of the first arm received from the stream's
        start until the report (the answers to the last frames included).
    :param period_ms: The trajectory publisher's period [ms].
    :param interarrival_p50_ms: Median time between two commands received during the stream
        [ms].
    :param interarrival_p99_ms: 99th percentile [ms].
    :param interarrival_max_ms: Largest [ms].
    :param handed_to_solver: Skeletons the solver received (its ``skeletons_in``).
    :param solved: Skeletons it solved.
    :param solver_dropped: Skeletons it did not solve, by counted reason (``superseded``,
        ``too_old``, ``rejected``).
    :param solver_unprocessed: ``skeletons_out - solved - sum(solver_dropped)`` (0: each one
        handed on was solved or has a reason).
    :param stranger_frames_sent: Arrays sent with only the second figure in view.
    :param people_taken_up: Persons the skeleton node took up (1: the right one all along).
    :param identity_switches: ``people_taken_up - 1``.
    """

    source: str
    rate_hz: float
    seconds: float
    hog: bool
    sent: int
    frames_in: int
    lost_upstream: int
    unaccounted: int
    skeletons_out: int
    dropped: dict[str, int] = field(default_factory=dict)
    unprocessed: int = 0
    lost_in_socket: int | None = None
    commands: int = 0
    period_ms: float = 0.0
    interarrival_p50_ms: float = 0.0
    interarrival_p99_ms: float = 0.0
    interarrival_max_ms: float = 0.0
    handed_to_solver: int = 0
    solved: int = 0
    solver_dropped: dict[str, int] = field(default_factory=dict)
    solver_unprocessed: int = 0
    stranger_frames_sent: int = 0
    people_taken_up: int = 0
    identity_switches: int = 0


class _Probe(Probe):
    """The benchmark's node: times the commands, keeps the skeleton and solver nodes' reports."""

    def __init__(self, context: Context, commands_topic: str) -> None:
        self.reports: dict[str, tuple[dict[str, str], float]] = {}
        self._lock = threading.Lock()
        super().__init__(context, commands_topic, JointTrajectory, name='stress_probe')

    def subscribe(self) -> None:
        """Subscribe ``/diagnostics`` for the skeleton and solver nodes' reports."""
        self.node.create_subscription(
            DiagnosticArray, '/diagnostics', self._on_diagnostics, RELIABLE
        )

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            for node in ('skeleton_node', 'solver_node'):
                if node in status.name:
                    with self._lock:
                        self.reports[node] = (
                            {item.key: item.value for item in status.values},
                            time.perf_counter(),
                        )

    def latest_report(self, node: str = 'skeleton_node') -> tuple[dict[str, str], float]:
        """Return a node's last report and when it came (perf_counter; -1 before any)."""
        with self._lock:
            report, when = self.reports.get(node, ({}, -1.0))
            return dict(report), when


def _stamp(seconds: float) -> Time:
    whole = int(seconds // 1)
    return Time(sec=whole, nanosec=int(round((seconds - whole) * 1e9)) % 1_000_000_000)


def _stranger(message: MarkerArray) -> MarkerArray:
    """Return the array moved :data:`STRANGER_OFFSET` to the side (same body id)."""
    moved = copy.deepcopy(message)
    for marker in moved.markers:
        marker.pose.position.x += STRANGER_OFFSET
    return moved


def _interarrival(times: list[float]) -> np.ndarray:
    return np.diff(np.array(times)) if len(times) > 1 else np.zeros(0)


def _number(report: dict[str, str], key: str) -> int:
    try:
        return int(report.get(key, '0'))
    except ValueError:
        return 0


def _warm_up(
    probe: _Probe, publisher: Any, rate: float, logs: Path
) -> dict[str, str]:
    """
    Send empty arrays until the skeleton node has one, then return its settled report.

    A best-effort reader may miss what a writer sends before the reader has matched it, a loss
    nobody can count; empty arrays carry no stamp, so the ones lost here leave no gap behind.
    The run's counts are taken relative to the report returned.
    """
    empty = MarkerArray()
    deadline = time.monotonic() + WAIT
    while _number(probe.latest_report()[0], 'frames_in') == 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f'the skeleton node received nothing; see {logs}')
        publisher.publish(empty)
        time.sleep(1.0 / rate)
    last = time.perf_counter()
    if not wait_until(lambda: probe.latest_report()[1] > last + 0.6, timeout=WAIT):
        raise RuntimeError(f'no report from the skeleton node; see {logs}')
    return probe.latest_report()[0]


def udp_backlog(port: int) -> int | None:
    """
    Return the bytes waiting in this host's IPv4 UDP sockets bound to a port (Linux).

    :param port: The port.
    :return: The receive queues' total [bytes], None where ``/proc/net/udp`` cannot tell.
    """
    try:
        lines = Path('/proc/net/udp').read_text().splitlines()[1:]
    except OSError:
        return None
    total = 0
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and fields[1].endswith(f':{port:04X}'):
            total += int(fields[4].split(':')[1], 16)
    return total


def _settled_report(
    probe: _Probe,
    baseline: dict[str, str],
    sent: int,
    ended: float,
    logs: Path,
    port: int | None = None,
) -> dict[str, str]:
    """
    Return the skeleton node's first report that accounts for every message sent, or settled.

    A message may still wait in a socket or a reader's queue when the stream ends; it is neither
    received nor lost yet. The report is taken once ``frames_in + lost_upstream`` (relative to
    the baseline) reaches ``sent``, or when two reports in a row, both made after the stream
    ended, agree on it while nothing waits in the UDP socket (the rest is lost where no counter
    sees it, which the result shows as ``unaccounted``).

    :param port: The UDP port the stream is sent to (None: not UDP).
    :raises RuntimeError: If no report comes after the stream ended.
    """
    def seen(report: dict[str, str]) -> int:
        return sum(_number(report, key) - _number(baseline, key)
                   for key in ('frames_in', 'lost_upstream'))

    def drained() -> bool:  # a busy receiver may not have read what the kernel keeps for it
        return port is None or not udp_backlog(port)

    previous: tuple[int, float] | None = None
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        report, when = probe.latest_report()
        if when > ended:
            count = seen(report)
            if count >= sent:
                return report
            if (
                previous is not None and previous[0] == count and when > previous[1]
                and drained()
            ):
                return report
            if previous is None or when > previous[1]:
                previous = (count, when)
        time.sleep(0.05)
    if previous is None:
        raise RuntimeError(f'no report from the skeleton node; see {logs}')
    return probe.latest_report()[0]


SOLVER_COUNTS = ('skeletons_in', 'skeletons_solved', 'dropped_superseded', 'dropped_too_old',
                 'frames_rejected', 'skeletons_waiting')
"""The solver node's counts: ``skeletons_in`` = solved + superseded + too old + rejected +
waiting."""


def _solver_report(
    probe: _Probe, baseline: dict[str, str], skeletons: int, after: float
) -> dict[str, str]:
    """
    Return the solver node's first report, made after a time, that has every skeleton handed on.

    Its ``skeletons_in`` (relative to the baseline) reaches the skeleton node's output and none
    is waiting; else, at the bound, the last report (the result then shows what is missing).
    """
    def settled() -> bool:
        report, when = probe.latest_report('solver_node')
        return (
            when > after and _number(report, 'skeletons_waiting') == 0
            and _number(report, 'skeletons_in') - _number(baseline, 'skeletons_in') >= skeletons
        )

    wait_until(settled, timeout=WAIT)
    return probe.latest_report('solver_node')[0]


def run_stress(
    source: str,
    seconds: float,
    robot: str = 'baxter',
    hog: bool = True,
    bag: Path | None = None,
    log_dir: Path | None = None,
    scenario: Scenario = Scenario(),
) -> StressResult:
    """
    Run one source in real time into ``teleop`` beside a CPU hog and account for every frame.

    :param source: ``azure_kinect`` or ``xsens_mvn``.
    :param seconds: Duration of the stream [s].
    :param robot: Robot of the pipeline.
    :param hog: Run the CPU hog beside it.
    :param bag: Bag whose MarkerArrays are cycled (azure_kinect; default: the real one beside
        the project, else the shipped synthetic bag).
    :param log_dir: Where the child processes log (default: a temporary directory).
    :param scenario: When the person leaves and the second figure comes (marker trackers).
    :return: The result.
    :raises RuntimeError: If the pipeline does not come up or reports nothing.
    """
    from pic_ros.motion.commander import RATE
    from pic_ros.robot import load_robot

    rate = RATES[source]
    domain = use_run_domain()
    environment = loopback_environment(domain)
    port = 20000 + domain * 10 + 5
    first_arm = next(iter(load_robot(robot).arms.values()))
    commands_topic = f'/{first_arm.spec.controller}/joint_trajectory'
    markers: list[MarkerArray] = []
    if source == 'azure_kinect':
        markers = bag_marker_arrays(bag or default_bag())
        if not markers:
            raise RuntimeError(f'no MarkerArray in {bag or default_bag()}')
    strangers = [_stranger(message) for message in markers]
    with tempfile.TemporaryDirectory(prefix='pic_ros_stress_') as scratch:
        logs = log_dir or Path(scratch)
        logs.mkdir(parents=True, exist_ok=True)
        context = Context()
        rclpy.init(context=context, domain_id=domain)
        processes: list[ManagedProcess] = []
        probe = None
        sender: socket.socket | None = None
        try:
            processes.append(ManagedProcess(
                python_module(
                    'pic_ros', 'teleop', '--robot', robot, '--source', source,
                    '--engaged',  # every frame must reach a command: following
                    '--param', 'trajectory_publisher.wait_for_joint_states=false',
                    '--param', f'skeleton_node.udp_port={port}',
                    '--param', 'skeleton_node.diagnostics_period=0.5',
                    '--param', 'solver_node.diagnostics_period=0.5',
                    '--ros-args', '-r', 'body_tracking_data:=stress_in',
                ),
                environment, logs / f'teleop_{source}.log',
            ))
            probe = _Probe(context, commands_topic)
            publisher = probe.node.create_publisher(MarkerArray, 'stress_in', RELIABLE)
            node = probe.node
            ready = wait_until(
                lambda: node.count_publishers(commands_topic) > 0
                and (source != 'azure_kinect' or publisher.get_subscription_count() > 0),
                timeout=WAIT,
            )
            if not ready:
                raise RuntimeError(f'teleop did not come up; see {logs}')
            baseline = _warm_up(probe, publisher, rate, logs) if source == 'azure_kinect' else {}
            solver_baseline = probe.latest_report('solver_node')[0]
            if hog:
                processes.append(ManagedProcess(
                    [sys.executable, '-c', HOG], environment, logs / 'hog.log'
                ))
                time.sleep(0.5)
            total = int(seconds * rate)
            stranger_frames = 0
            if source == 'azure_kinect':
                origin = node.get_clock().now().nanoseconds * 1e-9
                empty = MarkerArray()

                def send(index: int) -> None:
                    nonlocal stranger_frames
                    what = scenario.scene(index / rate)
                    if what == 'nobody':
                        publisher.publish(empty)
                        return
                    pool = strangers if what == 'stranger' else markers
                    message = pool[index % len(pool)]
                    stamp = _stamp(origin + index / rate)
                    for marker in message.markers:
                        marker.header.stamp = stamp
                    publisher.publish(message)
                    stranger_frames += what == 'stranger'
            else:
                person = WavingXsens(rate)
                sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                target = ('127.0.0.1', port)

                def send(index: int) -> None:
                    assert sender is not None
                    sender.sendto(person.datagram(index), target)

            begun = len(probe.received)
            paced(total, rate, send)
            ended = time.perf_counter()
            report = _settled_report(
                probe, baseline, total, ended, logs, port if source == 'xsens_mvn' else None
            )
            skeletons_out = _number(report, 'skeletons_out') - _number(baseline, 'skeletons_out')
            solver_report = _solver_report(
                probe, solver_baseline, skeletons_out, probe.latest_report()[1]
            )
            commands = probe.received[begun:]
        finally:
            if sender is not None:
                sender.close()
            if probe is not None:
                probe.close()
            stop_processes(processes)
            rclpy.try_shutdown(context=context)

    def count(key: str) -> int:
        return _number(report, key) - _number(baseline, key)

    dropped = {
        key.removeprefix('dropped_'): count(key) for key in report if key.startswith('dropped_')
    }
    dropped = {key: value for key, value in dropped.items() if value}
    frames_in = count('frames_in')
    lost = count('lost_upstream')
    skeletons = count('skeletons_out')

    def solver_count(key: str) -> int:
        return _number(solver_report, key) - _number(solver_baseline, key)

    solver = {key: solver_count(key) for key in SOLVER_COUNTS}
    solver_dropped = {
        'superseded': solver['dropped_superseded'], 'too_old': solver['dropped_too_old'],
        'rejected': solver['frames_rejected'],
    }
    gaps = _interarrival([when for when in commands if when <= ended])
    socket_drops = report.get('lost_in_socket')
    taken_up = _number(report, 'people_taken_up')
    return StressResult(
        source=source, rate_hz=rate, seconds=seconds, hog=hog, sent=total, frames_in=frames_in,
        lost_upstream=lost, unaccounted=total - frames_in - lost, skeletons_out=skeletons,
        dropped=dropped, unprocessed=frames_in - skeletons - sum(dropped.values()),
        lost_in_socket=int(socket_drops) if socket_drops and socket_drops.isdigit() else None,
        commands=len(commands), period_ms=1000.0 / float(RATE.default),
        interarrival_p50_ms=percentile_ms(gaps, 50.0),
        interarrival_p99_ms=percentile_ms(gaps, 99.0),
        interarrival_max_ms=percentile_ms(gaps, 100.0),
        handed_to_solver=solver['skeletons_in'], solved=solver['skeletons_solved'],
        solver_dropped={key: value for key, value in solver_dropped.items() if value},
        solver_unprocessed=skeletons - solver['skeletons_solved'] - sum(solver_dropped.values()),
        stranger_frames_sent=stranger_frames, people_taken_up=taken_up,
        identity_switches=max(taken_up - 1, 0),
    )


def run_stress_bench(
    seconds: float = 600.0,
    sources: tuple[str, ...] = ('azure_kinect', 'xsens_mvn'),
    robot: str = 'baxter',
    hog: bool = True,
    log_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """
    Run :func:`run_stress` for each source, one after the other.

    :param seconds: Duration of each stream [s].
    :param sources: The sources.
    :param robot: Robot of the pipeline.
    :param hog: Run the CPU hog beside it.
    :param log_dir: Where the child processes log (default: a temporary directory).
    :return: One record per source, as dicts.
    """
    return [
        asdict(run_stress(source, seconds, robot=robot, hog=hog, log_dir=log_dir))
        for source in sources
    ]
