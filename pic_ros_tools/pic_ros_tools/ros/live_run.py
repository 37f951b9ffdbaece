"""
One recording through the real streaming path, as separate ROS 2 processes, recorded.

What ``python -m pic_ros_tools demo`` and ``python -m pic_ros_tools evaluate --live`` share: replay
(the bag of a :class:`~pic_ros_tools.convert.ReplayableRecording`, its MarkerArray topic renamed to
``/body_tracking_data``) -> skeleton_node (``source`` from the markers) -> solver_node ->
trajectory_publisher -> sim_robot (MuJoCo), each its own process, talking DDS on loopback in the
exported ``ROS_DOMAIN_ID`` (else a domain id of this run's own). A :class:`Recorder` node in this
process records the topics into a :class:`~pic_ros_tools.demo_report.DemoRecording` (spinning
rclpy's events executor where there is one: :func:`recorder_executor`); every
process is stopped at the end, also on failure. The trajectory publisher starts disengaged, as
on a real robot: once the pipeline is up the recorder engages it as an operator would, with
``/trajectory_publisher/engage`` (:meth:`Recorder.engage`), before the replay starts.

Given a path, the recorder also writes what the graph carried into a rosbag2-compatible MCAP
(:class:`~pic_ros_tools.ros.mcap_recorder.McapRecorder`, raw CDR bytes): the replayed input,
skeleton_node's skeleton and markers, the joint targets, every trajectory topic, joint_states and
the engaged state (:func:`run_topics`), and whatever MarkerArray, JointTrajectory or
``robot_description`` topic the graph shows while the run goes on (:data:`DISCOVERED`); after a
run that ended well, the robot's link poses and the person as Foxglove scene entities in
``run_scene.mcap`` beside it (:func:`~pic_ros_tools.ros.foxglove_scene.write_scene`).

Clock: with ``sim_time`` (the default) sim_robot publishes its simulation time on ``/clock``
(``publish_clock``) and stamps ``joint_states`` with it, and skeleton_node, solver_node,
trajectory_publisher and the recorder run on it (``use_sim_time``), so the trajectory publisher's
limits, the servo and the recorded times are on one clock even when the simulation slips behind a
busy host. The replay plays on the host's monotonic clock (the simulation runs in real time,
so the two agree while it keeps up; its slips are reported as ``sim_slipped_s``). Without
``sim_time`` every process runs on the wall clock, sim_robot stamps ``joint_states`` with the
system time its state stands for, and the recorder times them by those stamps and the rest on its
arrival clock. A slip of the simulation then shifts the robot against every process's clock: a
run that slipped is invalid (flagged).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import importlib
from pathlib import Path
import threading
import time
from typing import Any, cast

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseArray
import numpy as np
from pic_ros.exceptions import PicRosError
from pic_ros.robot.robot import Robot
from pic_ros.ros.conversions import time_from_msg
from pic_ros_tools.convert import ReplayableRecording
from pic_ros_tools.demo_report import DemoRecording
from pic_ros_tools.ros.background_spin import BackgroundSpin
from pic_ros_tools.ros.foxglove_scene import write_scene
from pic_ros_tools.ros.mcap_recorder import DiscoveryRule, McapRecorder, RecordedTopic
from pic_ros_tools.ros.processes import (
    loopback_environment,
    ManagedProcess,
    python_module,
    stop_processes,
    use_run_domain,
    wait_until,
)
from pic_ros_tools.ros.service_call import ask
import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

INPUT_TOPIC = '/body_tracking_data'
"""The skeleton node's MarkerArray topic; the replayed bag's topic is renamed to it."""

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(depth=200, reliability=ReliabilityPolicy.BEST_EFFORT)

_DELAYS = {
    'delay_p50 [ms]': 'delay_p50_ms', 'delay_p99 [ms]': 'delay_p99_ms',
    'delay_max [ms]': 'delay_max_ms',
}
"""sim_robot's delay figures of a controller (diagnostic key) and their names in the notes."""

START_TIMEOUT = 120.0
"""Longest wait for the pipeline to come up [s] (a bound for a busy host; a process that exits
ends the wait at once)."""

SETTLE = 1.5
"""Time recorded after the replay ended: the robot finishes its last moves [s]."""

ENGAGE_SERVICE = '/trajectory_publisher/engage'
"""The service the recorder engages the robot with once the pipeline is up."""

MCAP_NAME = 'run.mcap'
"""The file name of a run's MCAP recording."""

TRAJECTORY_TYPE = 'trajectory_msgs/msg/JointTrajectory'
"""The type of the trajectory topics."""

DISCOVERED = DiscoveryRule(
    types=frozenset(('visualization_msgs/msg/MarkerArray', TRAJECTORY_TYPE)),
    names=frozenset(('/tf', '/tf_static')),
    suffixes=('/robot_description',),
)
"""Topics of the graph the MCAP also records when they appear (``/tf`` needs ``tf2_msgs``)."""


def recorder_executor(context: Context) -> Executor:
    """
    Return the executor the recorder spins: rclpy's events executor where rclpy has one.

    The recorder takes every message of a run (the joint states at 200 Hz, the trajectories
    twice: decoded and as CDR for the MCAP). rclpy's ``SingleThreadedExecutor`` rebuilds its wait
    set in Python for each one: about 0.6 of a core of this 2-core host during a demo, against
    about 0.25 with the events executor (Kilted's ``rclpy.experimental.EventsExecutor``, in C++;
    py-spy samples of the recorder's thread), CPU that the measured pipeline beside it then lacks.
    Jazzy's rclpy has none: the single-threaded one there, and also where the events executor
    cannot start (it turns ``faulthandler`` on, which needs an open standard error with a file
    descriptor: not so under a captured or closed stderr).

    :param context: The recorder's context.
    :return: The executor, without nodes.
    """
    try:
        experimental = importlib.import_module('rclpy.experimental')
    except ImportError:
        experimental = None
    events = getattr(experimental, 'EventsExecutor', None)
    if events is not None:
        try:
            return cast(Executor, events(context=context))
        except (OSError, ValueError, RuntimeError):  # faulthandler: stderr without a file
            pass  # descriptor (io.UnsupportedOperation), closed (ValueError) or None
    return SingleThreadedExecutor(context=context)


def run_topics(robot: Robot) -> list[RecordedTopic]:
    """
    Return the topics of a run the MCAP records from the start.

    :param robot: The robot (a trajectory topic per controlled group).
    :return: The replayed input (best effort: whatever the bag's QoS), skeleton_node's
        ``/skeleton`` and ``/skeleton_markers``, ``/joint_targets``, ``/joint_states``, each
        ``/<controller>/joint_trajectory`` and the latched ``/engaged``.
    """
    topics = [
        RecordedTopic(INPUT_TOPIC, 'visualization_msgs/msg/MarkerArray', reliable=False),
        RecordedTopic('/skeleton', 'geometry_msgs/msg/PoseArray'),
        RecordedTopic('/skeleton_markers', 'visualization_msgs/msg/MarkerArray'),
        RecordedTopic('/joint_targets', 'sensor_msgs/msg/JointState'),
        RecordedTopic('/joint_states', 'sensor_msgs/msg/JointState'),
    ]
    topics += [
        RecordedTopic(f'/{model.controller}/joint_trajectory', TRAJECTORY_TYPE)
        for model in robot.groups.values()
    ]
    topics.append(RecordedTopic('/engaged', 'std_msgs/msg/Bool', latched=True))
    return topics


class Recorder:
    """
    This process's node: records the topics of the run with their times.

    :param context: rclpy context of this process.
    :param robot: The robot (its controllers are subscribed).
    :param sim_time: Time everything on ``/clock`` (the recorder's ``use_sim_time``, and the
        joint_states by their stamps, the simulation time); else on this process's monotonic
        clock from the recorder's start.
    :param mcap: Also record the run's topics into this MCAP file (:func:`run_topics`, then
        :data:`DISCOVERED` at each :meth:`discover`); None: no file.
    """

    def __init__(
        self, context: Context, robot: Robot, sim_time: bool = True, mcap: Path | None = None
    ) -> None:
        self.node = Node(
            'demo_recorder', context=context,
            parameter_overrides=[Parameter('use_sim_time', value=sim_time)],
        )
        self.recording = DemoRecording()
        self.recording.notes['clock'] = 'sim' if sim_time else 'wall'
        self._sim_time = sim_time
        self._lock = threading.Lock()
        self._origin = time.monotonic()
        self._system_origin = time.time() - (time.monotonic() - self._origin)
        node = self.node
        self._subscriptions = [
            node.create_subscription(PoseArray, '/skeleton', self._on_skeleton, BEST_EFFORT),
            node.create_subscription(JointState, '/joint_states', self._on_state, BEST_EFFORT),
            node.create_subscription(JointState, '/joint_targets', self._on_targets, RELIABLE),
        ]
        node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, RELIABLE)
        for arm in robot.arms.values():
            controller = arm.spec.controller
            self.recording.command_times[controller] = []
            self.recording.commands[controller] = []
            self.recording.velocities[controller] = []
            self._subscriptions.append(node.create_subscription(
                JointTrajectory, f'/{controller}/joint_trajectory', self._commands(controller),
                RELIABLE,
            ))
        self.mcap = None if mcap is None else McapRecorder(
            node, mcap, run_topics(robot), DISCOVERED
        )
        executor = recorder_executor(context)
        executor.add_node(node)
        self._spin = BackgroundSpin(executor)

    def matched(self) -> bool:
        """
        Return whether every recorded topic but ``/diagnostics`` has a matched publisher.

        The count is the subscription's own (DDS endpoints matched), not the ROS graph's: the
        graph can list a publisher before the two endpoints have matched, and what it publishes
        in between never reaches the recorder.
        """
        return all(item.get_publisher_count() > 0 for item in self._subscriptions)

    def skeleton_reaches_all(self) -> bool:
        """
        Return whether skeleton_node's ``/skeleton`` writer has matched every reader in the graph.

        :meth:`matched` sees the match from the readers' side only; the writer sends only to the
        readers it has matched itself, and under load it can match them seconds later (one lost
        discovery message waits for its resend). skeleton_node reports its own count on
        ``/diagnostics`` (``skeleton_subscribers``, once per ``diagnostics_period``).
        """
        with self._lock:
            reported = self.recording.notes.get('skeleton_node_skeleton_subscribers')
        readers = self.node.count_subscribers('/skeleton')
        return reported is not None and readers > 0 and int(reported) >= readers

    def discover(self) -> None:
        """Let the MCAP recorder subscribe to the graph's new topics it records (if any)."""
        if self.mcap is not None:
            self.mcap.discover()

    def _now(self) -> float:
        if self._sim_time:
            return float(self.node.get_clock().now().nanoseconds) * 1e-9
        return time.monotonic() - self._origin

    def _on_skeleton(self, message: PoseArray) -> None:
        joints = np.array([(p.position.x, p.position.y, p.position.z) for p in message.poses])
        with self._lock:
            self.recording.skeleton_times.append(self._now())
            self.recording.skeleton_stamps.append(time_from_msg(message.header.stamp))
            self.recording.skeletons.append(joints)

    def _on_state(self, message: JointState) -> None:
        # on the wall clock the stamp (the system time of the simulation's state) on this
        # recorder's clock: arrival times would jitter by the delivery
        when = time_from_msg(message.header.stamp)
        if not self._sim_time:
            when -= self._system_origin
        with self._lock:
            self.recording.state_times.append(when)
            self.recording.states.append(dict(zip(message.name, message.position)))

    def _on_targets(self, message: JointState) -> None:
        with self._lock:
            self.recording.target_times.append(self._now())
            self.recording.targets.append(dict(zip(message.name, message.position)))

    def _commands(self, controller: str) -> Any:
        def record(message: JointTrajectory) -> None:
            with self._lock:
                self.recording.command_times[controller].append(self._now())
                self.recording.commands[controller].append(list(message.points[0].positions))
                self.recording.velocities[controller].append(list(message.points[0].velocities))

        return record

    def _on_diagnostics(self, message: DiagnosticArray) -> None:
        with self._lock:
            for status in message.status:
                for item in status.values:
                    if 'skeleton_node' in status.name and (
                        item.key.startswith('dropped_') or item.key in (
                            'frames_in', 'skeletons_out', 'skeleton_subscribers'
                        )
                    ):
                        self.recording.notes[f'skeleton_node_{item.key}'] = item.value
                    elif 'simulation' in status.name and item.key == 'slipped [s]':
                        self.recording.notes['sim_slipped_s'] = float(item.value)
                    elif 'controller' in status.name and (item.key in (
                        'accepted', 'rejected', 'late', 'joined', 'segment_violations'
                    ) or item.key.startswith('rejected_')):
                        # how the simulated controllers took the streamed trajectories
                        controller = status.name.rsplit(' ', 1)[-1]
                        self.recording.notes[f'{controller}_{item.key}'] = int(item.value)
                    elif 'controller' in status.name and item.key == 'segment_peak':
                        controller = status.name.rsplit(' ', 1)[-1]
                        self.recording.notes[f'{controller}_segment_peak'] = float(item.value)
                    elif 'collision guard' in status.name and item.key in (
                        'steps_checked', 'chunks_refused', 'chunks_straightened'
                    ):  # the trajectory publisher's guard: chunks it made again or braked
                        self.recording.notes[f'guard_{item.key}'] = int(item.value)
                    elif 'trajectory_publisher' in status.name and item.key in (
                        'commands_published', 'stalls', 'segment_violations',
                        'chunks_withdrawn_late', 'chunks_sent_late',
                    ):  # the publisher's own view: the chunks it sent, steps after the plan
                        # ran out, its continuity check of every chunk sent, chunks made again
                        # as they would have come after their plan's start, chunks whose
                        # publishing ended after it
                        group = status.name.rsplit(' ', 1)[-1]
                        self.recording.notes[f'publisher_{group}_{item.key}'] = int(item.value)
                    elif 'trajectory_publisher' in status.name and item.key == 'segment_peak':
                        group = status.name.rsplit(' ', 1)[-1]
                        self.recording.notes[f'publisher_{group}_segment_peak'] = float(
                            item.value
                        )
                    elif 'controller' in status.name and item.key in _DELAYS:
                        controller = status.name.rsplit(' ', 1)[-1]
                        self.recording.notes[f'{controller}_{_DELAYS[item.key]}'] = float(
                            item.value.replace('n/a', 'nan')
                        )

    def engage(self, service: str = ENGAGE_SERVICE, timeout: float = START_TIMEOUT) -> str:
        """
        Engage the trajectory publisher as an operator does: call its ``~/engage``.

        :param service: The service's name.
        :param timeout: Longest wait for the service and for its answer [s].
        :return: The answer's message, also kept in the notes (``engaged``).
        :raises PicRosError: If the service is not there in time, does not answer, or refuses.
        """
        client = self.node.create_client(Trigger, service)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                raise PicRosError(f'{service} did not appear within {timeout:.0f} s')
            answer = ask(lambda: client.call_async(Trigger.Request()), timeout)
            if answer is None:
                raise PicRosError(f'{service} did not answer within {timeout:.0f} s')
        finally:
            self.node.destroy_client(client)
        if not answer.success:
            raise PicRosError(f'{service} refused: {answer.message}')
        with self._lock:
            self.recording.notes['engaged'] = answer.message
        return str(answer.message)

    def close(self) -> None:
        """Stop spinning (the thread ends first), finish the MCAP file, destroy the node."""
        self._spin.stop()
        if self.mcap is not None:
            counts = self.mcap.close()
            self.recording.notes['mcap'] = str(self.mcap.path)
            self.recording.notes['mcap_messages'] = sum(counts.values())
        self.node.destroy_node()


def _parameters(values: Mapping[str, Any]) -> list[str]:
    return [item for name, value in values.items() for item in ('-p', f'{name}:={value}')]


def _commands(
    robot: str,
    source: str,
    solver_values: Mapping[str, Any],
    skeleton_values: Mapping[str, Any],
    sim_time: bool,
    realtime_priority: int = 0,
    sim_realtime_priority: int | None = None,
) -> dict[str, list[str]]:
    clock = ['-p', 'use_sim_time:=true'] if sim_time else []
    clock += ['-p', f'realtime_priority:={realtime_priority}']  # the pipeline's processes
    sim_priority = realtime_priority if sim_realtime_priority is None else sim_realtime_priority
    return {
        'sim_robot': python_module(
            'pic_ros_tools', 'sim', '--robot', robot, '--ros-args', '-p',
            f'publish_clock:={str(sim_time).lower()}', '-p',
            f'realtime_priority:={sim_priority}',
        ),
        'skeleton_node': python_module(
            'pic_ros.ros.skeleton_node', '--ros-args', '-p', f'source:={source}',
            *_parameters(skeleton_values), *clock,
        ),
        'solver_node': python_module(
            'pic_ros.ros.solver_node', '--ros-args', '-p', f'robot:={robot}',
            *_parameters(solver_values),
            *clock,
        ),
        'trajectory_publisher': python_module(
            'pic_ros.ros.trajectory_publisher_node', '--ros-args', '-p', f'robot:={robot}',
            *clock,
        ),
    }


def record_pipeline(
    robot: Robot,
    replayed: ReplayableRecording,
    solver_values: Mapping[str, Any],
    logs: Path,
    duration: float | None = None,
    sim_time: bool = True,
    say: Callable[[str], None] = print,
    skeleton_values: Mapping[str, Any] | None = None,
    mcap: Path | None = None,
    realtime_priority: int = 0,
    sim_realtime_priority: int | None = None,
) -> DemoRecording:
    """
    Play a recording through the five processes and record what they publish.

    :param robot: The robot.
    :param replayed: The bag to play, its topic and tracker source.
    :param solver_values: solver_node's parameters to set (e.g. ``{'solver': 'fabrik'}``).
    :param logs: Folder for each process's log (created).
    :param duration: Play only the first seconds of the bag [s]; None plays all of it.
    :param sim_time: Run the nodes and the recorder on sim_robot's ``/clock``.
    :param say: Called with one progress line when the pipeline is up.
    :param skeleton_values: skeleton_node's parameters to set besides ``source`` (e.g.
        ``{'smoothing': 'kalman'}``).
    :param mcap: Also record the run's topics into this MCAP file (:class:`Recorder`), and the
        Foxglove scene beside it (:func:`~pic_ros_tools.ros.foxglove_scene.write_scene`).
    :param realtime_priority: The pipeline's and sim_robot's ``realtime_priority`` (0: the
        default scheduling; sim_robot stands for ros2_control, whose controller manager runs
        under SCHED_FIFO where it may).
    :param sim_realtime_priority: sim_robot's own ``realtime_priority``, when it differs from
        the pipeline's (None: the same): e.g. 50, ros2_control's default, for the simulated
        controller manager alone, with the pipeline under the default scheduling.
    :return: What was recorded; its ``notes`` hold the clock, the domain, the tracker source, the
        skeleton node's counts and the simulation's slips.
    :raises PicRosError: If the pipeline does not come up, the replay does not end in time or
        a process exits early (every process is stopped first; the wait ends when one exits).
    """
    started_at = time.monotonic()
    logs.mkdir(parents=True, exist_ok=True)
    domain = use_run_domain()  # an exported ROS_DOMAIN_ID, else one of this run's own
    environment = loopback_environment(domain)
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    processes: list[ManagedProcess] = []
    recorder = None
    try:
        recorder = Recorder(context, robot, sim_time, mcap)
        for name, argv in _commands(
            robot.name, replayed.source, solver_values, skeleton_values or {}, sim_time,
            realtime_priority, sim_realtime_priority,
        ).items():
            processes.append(ManagedProcess(argv, environment, logs / f'{name}.log'))
        _wait_for_pipeline(recorder, logs, processes)
        say(f'pipeline up in {time.monotonic() - started_at:.1f} s (ROS_DOMAIN_ID={domain}, '
            f'{recorder.recording.notes["clock"]} time); replaying {replayed.bag} '
            f'({replayed.source})')
        say(f'{ENGAGE_SERVICE}: {recorder.engage()}')
        readers = len(recorder.node.get_subscriptions_info_by_topic(INPUT_TOPIC))
        replay = ManagedProcess(
            python_module('pic_ros_tools', *_replay_arguments(replayed, duration, readers)),
            environment, logs / 'replay.log',
        )
        processes.append(replay)
        pipeline = processes[:-1]
        limit = (duration or replayed.seconds) + START_TIMEOUT
        watched = recorder

        def replay_ended() -> bool:
            watched.discover()
            return not replay.alive() or _exited(pipeline) is not None

        ended = wait_until(replay_ended, timeout=limit, period=0.2)
        _check_running(pipeline)
        if not ended:
            raise PicRosError(f'the replay did not finish within {limit:.0f} s')
        time.sleep(SETTLE)
        _check_running(pipeline)
    finally:
        if recorder is not None:
            recorder.close()
        stop_processes(processes)
        rclpy.try_shutdown(context=context)
    recording = recorder.recording
    if mcap is not None:  # the run's scene for Foxglove, beside it
        scene = write_scene(mcap, robot)
        recording.notes['scene'] = str(scene.path)
    recording.notes['wall_time_pipeline_s'] = round(time.monotonic() - started_at, 1)
    recording.notes['ros_domain_id'] = domain
    recording.notes['source'] = replayed.source
    return recording


def _exited(processes: list[ManagedProcess]) -> ManagedProcess | None:
    """Return the first of the processes that is no longer running, if any."""
    return next((process for process in processes if not process.alive()), None)


def _check_running(processes: list[ManagedProcess]) -> None:
    """Raise :class:`PicRosError` naming a process that exited (it should still run)."""
    process = _exited(processes)
    if process is not None:
        name = process.log_path.stem if process.log_path is not None else process.argv[2]
        raise PicRosError(
            f'{name} exited early (status {process.process.returncode}); see {process.log_path}'
        )


def _wait_for_pipeline(recorder: Recorder, logs: Path, processes: list[ManagedProcess]) -> None:
    node = recorder.node

    def up() -> bool:
        recorder.discover()
        return _exited(processes) is not None or (
            any(  # skeleton_node's (the MCAP recorder subscribes it too)
                info.node_name != node.get_name()
                for info in node.get_subscriptions_info_by_topic(INPUT_TOPIC)
            )
            and recorder.matched()
            and recorder.skeleton_reaches_all()
            and len(recorder.recording.state_times) > 10
        )

    ready = wait_until(up, timeout=START_TIMEOUT)
    _check_running(processes)
    if not ready:
        raise PicRosError(
            f'the pipeline did not come up within {START_TIMEOUT:.0f} s; logs in {logs}'
        )


def _replay_arguments(
    replayed: ReplayableRecording, duration: float | None, readers: int
) -> list[str]:
    """
    Return the replay's arguments: it starts once it has matched every reader of the input.

    :param replayed: The recording.
    :param duration: Bag time played [s], or None for all.
    :param readers: The input topic's subscriptions in the graph when the pipeline is up
        (skeleton_node's and the recorders'): the replay waits for as many matches, so that the
        recorders' alone cannot start it before skeleton_node gets the first frames.
    :return: The arguments after ``python -m pic_ros_tools``.
    """
    arguments = [
        'replay', str(replayed.bag), '--topics', replayed.topic,
        '--wait-for-subscribers', str(max(readers, 1)),
    ]
    if replayed.topic != INPUT_TOPIC:
        arguments += ['--remap', f'{replayed.topic}:={INPUT_TOPIC}']
    if duration:
        arguments += ['--playback-duration', str(duration)]
    return arguments
