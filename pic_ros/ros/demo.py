"""
``python -m pic_ros demo``: the whole pipeline as separate ROS 2 processes, recorded and drawn.

replay (``--recording``: a rosbag2 of Azure Kinect or Kinect v2 MarkerArrays, or a Kinect v2 text
recording converted to one; default the shipped synthetic bag) -> skeleton_node (``source`` from
the markers) -> solver_node -> trajectory_publisher -> sim_robot (MuJoCo), each its own process,
talking DDS on loopback in the exported ``ROS_DOMAIN_ID`` (else a domain id of its own). This
process records the topics, stops every process (also on failure), and writes into the output
folder the animation (skeleton beside the simulated robot), the joint plot and the metrics
(:mod:`pic_ros.tools.demo_report`), with the offline ``evaluate`` table of what was replayed.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import os
from pathlib import Path
import sys
import tempfile
import threading
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseArray
import numpy as np
from pic_ros.exceptions import PicRosError
from pic_ros.recordings.demonstration import Demonstration
from pic_ros.resources import share_dir
from pic_ros.robot.robot import load_robot, Robot
from pic_ros.ros.processes import (
    loopback_environment,
    ManagedProcess,
    python_module,
    use_run_domain,
    wait_until,
)
from pic_ros.ros.schema import SOLVER_NODE
from pic_ros.ros.teleop import SOLVER_OPTIONS
from pic_ros.schema import add_option
from pic_ros.tools.convert import replayable_recording, ReplayableRecording
from pic_ros.tools.demo_report import (
    DemoRecording,
    live_metrics,
    plot_joints,
    render_animation,
    write_metrics,
)
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

INPUT_TOPIC = '/body_tracking_data'
"""The skeleton node's MarkerArray topic; the replayed bag's topic is renamed to it."""

RELIABLE = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(depth=200, reliability=ReliabilityPolicy.BEST_EFFORT)


class Recorder:
    """
    The demo's own node: records the topics of the run with arrival times.

    :param context: rclpy context of this process.
    :param robot: The robot (its controllers are subscribed).
    """

    def __init__(self, context: Context, robot: Robot) -> None:
        self.node = Node('demo_recorder', context=context)
        self.recording = DemoRecording()
        self._lock = threading.Lock()
        self._origin = time.monotonic()
        node = self.node
        node.create_subscription(PoseArray, '/skeleton', self._on_skeleton, BEST_EFFORT)
        node.create_subscription(JointState, '/joint_states', self._on_state, BEST_EFFORT)
        node.create_subscription(JointState, '/joint_targets', self._on_targets, RELIABLE)
        node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diagnostics, RELIABLE)
        for arm in robot.arms.values():
            controller = arm.spec.controller
            self.recording.command_times[controller] = []
            self.recording.commands[controller] = []
            self.recording.velocities[controller] = []
            node.create_subscription(
                JointTrajectory, f'/{controller}/joint_trajectory', self._commands(controller),
                RELIABLE,
            )
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(node)
        self._thread = threading.Thread(target=self.executor.spin, daemon=True)
        self._thread.start()

    def _now(self) -> float:
        return time.monotonic() - self._origin

    def _on_skeleton(self, message: PoseArray) -> None:
        joints = np.array([(p.position.x, p.position.y, p.position.z) for p in message.poses])
        with self._lock:
            self.recording.skeleton_times.append(self._now())
            self.recording.skeletons.append(joints)

    def _on_state(self, message: JointState) -> None:
        with self._lock:
            self.recording.state_times.append(self._now())
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
                if 'skeleton_node' in status.name:
                    for item in status.values:
                        if item.key.startswith('dropped_') or item.key in (
                            'frames_in', 'skeletons_out'
                        ):
                            self.recording.notes[f'skeleton_node_{item.key}'] = item.value

    def close(self) -> None:
        """Stop spinning and destroy the node."""
        self.executor.shutdown(timeout_sec=2.0)
        self.node.destroy_node()


def _processes(
    robot: str,
    source: str,
    solver_values: dict[str, Any],
    environment: dict[str, str],
    logs: Path,
) -> list[ManagedProcess]:
    solver_args = [
        item for name, value in solver_values.items() for item in ('-p', f'{name}:={value}')
    ]
    commands = {
        'sim_robot': python_module('pic_ros', 'sim', '--robot', robot),
        'skeleton_node': python_module(
            'pic_ros.ros.skeleton_node', '--ros-args', '-p', f'source:={source}'
        ),
        'solver_node': python_module(
            'pic_ros.ros.solver_node', '--ros-args', '-p', f'robot:={robot}', *solver_args
        ),
        'trajectory_publisher': python_module(
            'pic_ros.ros.trajectory_publisher_node', '--ros-args', '-p', f'robot:={robot}'
        ),
    }
    started: list[ManagedProcess] = []
    for name, argv in commands.items():
        started.append(ManagedProcess(argv, environment, logs / f'{name}.log'))
    return started


def build_parser() -> argparse.ArgumentParser:
    """
    Build the argument parser of ``python -m pic_ros demo``.

    The solver options are solver_node's parameters (:data:`~pic_ros.ros.teleop.SOLVER_OPTIONS`,
    as teleop has them): their choices are the registries' names, plug-ins included.

    :return: The parser.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros demo',
        description='Replay a recording through skeleton_node, solver_node, '
        'trajectory_publisher and the MuJoCo robot, each a ROS 2 process; draw and score it.',
    )
    parser.add_argument('--robot', default=os.environ.get('ROBOT') or 'baxter')
    parser.add_argument(
        '--recording', type=Path,
        help='a rosbag2 of body-tracking MarkerArrays (directory, .mcap or .db3; Azure Kinect '
        'or Kinect v2 markers) or a Kinect v2 text recording (75 numbers per line); default: '
        'the shipped synthetic bag',
    )
    parser.add_argument('--out', default='demo_out', help='output folder')
    parser.add_argument('--duration', type=float, help='play only this much of the bag [s]')
    for name in SOLVER_OPTIONS:
        add_option(
            parser, SOLVER_NODE[name],
            help_suffix=f" (default: solver_node's, {SOLVER_NODE[name].default})",
        )
    parser.add_argument('--fps', type=float, default=8.0, help='animation frames per second')
    return parser


def run_demo(argv: Sequence[str] | None = None) -> int:
    """
    Run the demo and write its outputs.

    :param argv: ``[--robot R] [--recording PATH] [--out DIR] [--duration S] [--solver S]
        [--eta N] [--mapping M] [--correspondence C] [--fps F]``.
    :return: Exit status (0 success, 1 when a process failed, 2 for bad options or a recording
        that cannot be read; nothing is started then).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.duration is not None and args.duration <= 0.0:
        parser.error(f'argument --duration: must be > 0, got {args.duration:g}')
    os.environ.setdefault('MUJOCO_GL', 'egl')
    started_at = time.monotonic()
    try:
        robot = load_robot(args.robot)
    except PicRosError as err:
        print(f'demo: {err}')
        return 2
    with tempfile.TemporaryDirectory(prefix='pic_ros_demo_') as scratch:
        try:
            if args.recording is None:
                args.recording = share_dir() / 'demo' / 'synthetic1_bag'
            recording = replayable_recording(
                args.recording, scratch, notice=lambda line: print(line, file=sys.stderr)
            )
        except PicRosError as err:
            print(f'demo: {err}')
            return 2
        return _run(args, robot, recording, started_at)


def _run(
    args: argparse.Namespace, robot: Robot, replayed: ReplayableRecording, started_at: float
) -> int:
    solver_values = {
        name: getattr(args, name) for name in SOLVER_OPTIONS if getattr(args, name) is not None
    }
    out = Path(args.out)
    logs = out / 'logs'
    logs.mkdir(parents=True, exist_ok=True)
    domain = use_run_domain()  # an exported ROS_DOMAIN_ID, else one of this run's own
    environment = loopback_environment(domain)
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    processes: list[ManagedProcess] = []
    recorder = None
    status = 0
    try:
        recorder = Recorder(context, robot)
        processes = _processes(robot.name, replayed.source, solver_values, environment, logs)
        node = recorder.node
        ready = wait_until(
            lambda: node.count_subscribers(INPUT_TOPIC) > 0
            and node.count_publishers('/skeleton') > 0
            and node.count_publishers('/joint_targets') > 0
            and len(recorder.recording.state_times) > 10
            and all(
                node.count_publishers(f'/{arm.spec.controller}/joint_trajectory') > 0
                for arm in robot.arms.values()
            ),
            timeout=60.0,
        )
        if not ready:
            raise PicRosError(f'the pipeline did not come up within 60 s; logs in {logs}')
        print(f'demo: pipeline up in {time.monotonic() - started_at:.1f} s '
              f'(ROS_DOMAIN_ID={domain}); replaying {replayed.bag} ({replayed.source})')
        replay_args = [
            'replay', str(replayed.bag), '--topics', replayed.topic, '--wait-for-subscribers'
        ]
        if replayed.topic != INPUT_TOPIC:
            replay_args += ['--remap', f'{replayed.topic}:={INPUT_TOPIC}']
        if args.duration:
            replay_args += ['--playback-duration', str(args.duration)]
        replay = ManagedProcess(
            python_module('pic_ros', *replay_args), environment, logs / 'replay.log'
        )
        processes.append(replay)
        limit = (args.duration or replayed.seconds) + 60.0
        if not wait_until(lambda: not replay.alive(), timeout=limit, period=0.2):
            raise PicRosError(f'the replay did not finish within {limit:.0f} s')
        time.sleep(1.5)
        for process in processes:
            if not process.alive() and process is not replay:
                raise PicRosError(f'{process.argv[2]} exited early; see {process.log_path}')
    except PicRosError as err:
        print(f'demo: {err}')
        status = 1
    finally:
        if recorder is not None:
            recorder.close()
        for process in reversed(processes):
            process.stop()
        rclpy.try_shutdown(context=context)
    if status:
        return status
    assert recorder is not None
    recording = recorder.recording
    recording.notes['wall_time_pipeline_s'] = round(time.monotonic() - started_at, 1)
    recording.notes['ros_domain_id'] = domain
    recording.notes['recording'] = str(args.recording)
    recording.notes['source'] = replayed.source
    offline = replayed.played(args.duration)
    return _write_outputs(robot, recording, offline, solver_values, out, args.fps, started_at)


def _write_outputs(
    robot: Robot,
    recording: DemoRecording,
    replayed: Demonstration,
    solver_values: dict[str, Any],
    out: Path,
    fps: float,
    started_at: float,
) -> int:
    from pic_ros.correspondence import MappingConfig
    from pic_ros.solvers import SolverConfig
    from pic_ros.tools.evaluation import evaluate_one, EvaluationSettings

    live = live_metrics(robot, recording)
    # The offline table: FABRIK, PIC, PICs and the chosen solver, with the solver node's settings.
    names = dict.fromkeys(('fabrik', 'pic', 'pics', solver_values.get('solver', 'pic')))
    settings = EvaluationSettings(mapping=MappingConfig.from_parameters(solver_values))
    offline = [
        evaluate_one(
            robot, replayed, SolverConfig.from_parameters({**solver_values, 'solver': name}),
            settings,
        )
        for name in names
    ]
    gif, png, frames = render_animation(robot, recording, out, fps=fps)
    joints = plot_joints(robot, recording, out / 'joints.png')
    live['wall_time_total_s'] = round(time.monotonic() - started_at, 1)
    _, markdown = write_metrics(out, live, offline)
    print(f'demo: {len(recording.skeleton_times)} skeletons, '
          f'{sum(len(t) for t in recording.command_times.values())} trajectories, '
          f'{frames} animation frames, {live["wall_time_total_s"]} s in all')
    print(f'demo: look at {gif} (one frame: {png}), {joints} and {markdown}')
    return 0


def main() -> None:
    """Entry point for ``python -m pic_ros.ros.demo``."""
    raise SystemExit(run_demo())


if __name__ == '__main__':
    main()
