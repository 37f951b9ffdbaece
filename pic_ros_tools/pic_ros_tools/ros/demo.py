"""
``python -m pic_ros_tools demo``: the pipeline as separate ROS 2 processes, recorded and drawn.

replay (``--recording``: a rosbag2 of Azure Kinect or Kinect v2 MarkerArrays, or a Kinect v2 text
recording converted to one; default the shipped synthetic bag) -> skeleton_node (``source`` from
the markers) -> solver_node -> trajectory_publisher -> sim_robot (MuJoCo), each its own process,
talking DDS on loopback in the exported ``ROS_DOMAIN_ID`` (else a domain id of its own). This
process records the topics, stops every process (also on failure), and writes into the output
folder the animation (skeleton beside the simulated robot), the joint plot and the metrics
(:mod:`pic_ros_tools.demo_report`), with the offline ``evaluate`` table of what was replayed, and
``run.mcap``: the topics of the run as a rosbag2-compatible MCAP
(:func:`~pic_ros_tools.ros.live_run.run_topics`), to open in Foxglove or play with
``ros2 bag play``, and ``run_scene.mcap``: the robot's link poses and the person as Foxglove
scene entities (:mod:`pic_ros_tools.ros.foxglove_scene`), for Foxglove's 3-D panel without ROS.
A run that does not show what the pipeline does -- a controller rejected trajectories, the
simulation slipped behind real time, the robot exceeded a limit
(:func:`~pic_ros_tools.live_evaluation.run_warnings`) -- prints one ``WARNING`` line per cause
and is marked in ``metrics.json`` (``"valid": false``, ``"warnings"``) and ``metrics.md``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import os
from pathlib import Path
import sys
import tempfile
import time
from typing import Any

from pic_ros.exceptions import PicRosError
from pic_ros.robot.robot import load_robot, Robot
from pic_ros.ros.schema import SOLVER_NODE
from pic_ros.ros.teleop import SOLVER_OPTIONS
from pic_ros.schema import add_option
from pic_ros_tools.catalog import replay_path
from pic_ros_tools.convert import replayable_recording, ReplayableRecording
from pic_ros_tools.demo_report import (
    DemoRecording,
    plot_elbows,
    plot_joints,
    render_animation,
    write_metrics,
)
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.ros.live_run import MCAP_NAME, record_pipeline
from pic_ros_tools.ros.processes import run_stopping_children


def build_parser() -> argparse.ArgumentParser:
    """
    Build the argument parser of ``python -m pic_ros_tools demo``.

    The solver options are solver_node's parameters (:data:`~pic_ros.ros.teleop.SOLVER_OPTIONS`,
    as teleop has them): their choices are the registries' names, plug-ins included.

    :return: The parser.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros_tools demo',
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
                args.recording = replay_path('demo')
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
    try:
        recording = record_pipeline(
            robot, replayed, solver_values, out / 'logs', args.duration,
            say=lambda line: print(f'demo: {line}'), mcap=out / MCAP_NAME,
        )
    except PicRosError as err:
        print(f'demo: {err}')
        return 1
    recording.notes['recording'] = str(args.recording)
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
    from pic_ros_tools.evaluation import (
        evaluate_one,
        EvaluationSettings,
        run_imitation,
        score,
        with_smoothing,
    )
    from pic_ros_tools.live_evaluation import (
        avoided_skeletons,
        elbow_traces,
        frame_times,
        live_record,
        live_trace,
        place_skeletons,
    )

    mapping = MappingConfig.from_parameters(solver_values)
    solver = SolverConfig.from_parameters(solver_values)
    # The offline table: FABRIK, PIC, PICs and the chosen solver, with the solver node's settings.
    names = dict.fromkeys(('fabrik', 'pic', 'pics', solver.name))
    settings = EvaluationSettings(mapping=mapping)
    asked = run_imitation(robot, replayed, solver, settings)  # also the live record's targets
    offline = {
        name: with_smoothing(score(asked, replayed, robot, solver), settings)
        if name == solver.name else evaluate_one(
            robot, replayed, SolverConfig.from_parameters({**solver_values, 'solver': name}),
            settings,
        )
        for name in names
    }
    live = live_record(robot, replayed, recording, solver, mapping, offline[solver.name], asked)
    gif, png, frames = render_animation(
        robot, recording, place_skeletons(robot, recording, mapping), out, fps=fps,
        mode=mapping.mode, avoided=avoided_skeletons(replayed, recording, asked),
    )
    joints = plot_joints(robot, recording, out / 'joints.png')
    traces = elbow_traces(
        robot, live_trace(robot, replayed, recording, mapping), recording,
        frame_times(replayed, recording),
    )
    elbows = plot_elbows(
        traces, {name: arm['lag_s'] for name, arm in live['arms'].items()}, out / 'elbows.png',
        origin=recording.skeleton_times[0],
    )
    live['run']['wall_time_total_s'] = round(time.monotonic() - started_at, 1)
    _, markdown = write_metrics(out, live, list(offline.values()))
    print(f'demo: {len(recording.skeleton_times)} skeletons, '
          f'{sum(len(t) for t in recording.command_times.values())} trajectories, '
          f'{frames} animation frames, {live["run"]["wall_time_total_s"]} s in all')
    print(f'demo: look at {gif} (one frame: {png}), {elbows}, {joints} and {markdown}')
    print(f"demo: the run's topics: {out / MCAP_NAME} ({recording.notes.get('mcap_messages', 0)} "
          'messages; open it in Foxglove or play it with ros2 bag play)')
    refused = live['run'].get('guard_chunks_refused')
    straightened = live['run'].get('guard_chunks_straightened')
    if refused or straightened:  # the guard at work, not a fault of the run (see metrics.md)
        checked = live['run'].get('guard_steps_checked', '?')
        print(f'demo: in {checked} steps the collision guard had {straightened or 0} chunks made '
              f'again with the joints moving together, and refused {refused or 0} (those arms '
              'braked instead)')
    for line in live['warnings']:  # also in metrics.json ("valid": false) and metrics.md
        print(f'demo: WARNING: invalid run: {line}')
    return 0


def main() -> None:
    """Entry point for ``python -m pic_ros_tools.ros.demo``; no process it starts outlives it."""
    raise SystemExit(run_stopping_children(run_demo, 'python -m pic_ros_tools.ros.demo'))


if __name__ == '__main__':
    main()
