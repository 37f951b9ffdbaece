"""
Solver benchmark (``python -m pic_ros_tools bench``): solve time, an IK peer, pipeline throughput.

- For each robot and solver setting, the whole pipeline runs over the real demonstration frames
  and every single-arm solve (point solver + joint recovery) is timed as CPU time of the solving
  thread (``time.thread_time``), so that preemption on a busy machine does not pass for solver
  cost; percentiles are over every solve of every recording.
- On the same wrist targets (the correspondence's, anchored at the robot's neutral shoulder
  landmark), ikpy solves position IK on the same URDF chain (base -> wrist landmark),
  warm-started from its previous answer like ours, timed the same way. ikpy is about a hundred
  times slower, so it runs on a contiguous stretch of frames per arm (``--ikpy-frames``).
- Throughput is frames per second of the whole offline pipeline (filter, body frame, mapping,
  every arm solved, robot FK for the metrics), i.e. of ``evaluate``.
- Skeleton processing (:func:`bench_skeleton`) is the skeleton node's work per tracker message,
  without ROS: the serialized ``MarkerArray`` as a bag stores it (as the node's raw subscription
  receives it) read by the CDR reader, decoded by the ``azure_kinect`` tracker and fed to the
  front end (body selection, checks, smoothing, body frame, footprint), timed per message as CPU
  time of the thread; percentiles over every message of a few passes over each bag.

Timings depend on the machine and its load; the JSON records the Python and numpy versions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
import contextlib
import gc
import os
from pathlib import Path
import platform
import time
from typing import Any
import warnings

import numpy as np
from pic_ros.human.front_end import SkeletonFrontEnd
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.robot import Robot
from pic_ros.solvers import SolverConfig
from pic_ros.trackers import make_tracker
from pic_ros.trackers.marker_cdr import parse_marker_array
from pic_ros_tools.evaluation import eta_label, EvaluationSettings, run_imitation
from pic_ros_tools.metrics import percentile_ms
from pic_ros_tools.recordings.demonstration import Demonstration


def _ikpy_chain(robot: Robot, arm: ArmModel) -> Any:
    """Build ikpy's chain base -> wrist landmark from the same URDF (None if ikpy is absent)."""
    try:
        from ikpy.chain import Chain
    except ImportError:
        return None
    elements = [arm.chain.base_link]
    for joint in arm.chain.joints:
        elements += [joint.name, joint.child]
        if joint.name == arm.spec.wrist:
            break
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        full = Chain.from_urdf_file(
            str(robot.urdf_file), base_elements=elements, symbolic=False, jax_precompile=False
        )
        names = [link.name for link in full.links]
        links = full.links[: names.index(arm.spec.wrist) + 1]
        mask = [link.joint_type != 'fixed' for link in links]
        return Chain(links, active_links_mask=mask)


def bench_ikpy(
    robot: Robot, arm_name: str, wrist_targets: np.ndarray, q_start: np.ndarray
) -> dict[str, Any]:
    """
    Time ikpy position IK on a sequence of wrist targets.

    :param robot: The robot (its URDF file is what ikpy reads).
    :param arm_name: Arm name.
    :param wrist_targets: Wrist landmark targets, shape (N, 3), [m], robot base frame.
    :param q_start: Arm joint values to warm-start the first solve from.
    :return: ``{'solves', 'ms_p50', 'ms_p99', 'residual_mm_p50'}``, or ``{'error': ...}``.
    """
    arm = robot.arms[arm_name]
    chain = _ikpy_chain(robot, arm)
    if chain is None:
        return {'error': 'ikpy is not installed'}
    active = [index for index, link in enumerate(chain.links) if link.joint_type != 'fixed']
    full = arm.full_q(q_start)
    guess = np.zeros(len(chain.links))
    for position, index in enumerate(active):
        guess[index] = full[position]
    times = []
    residuals = []
    for target in wrist_targets:
        start = time.thread_time()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            solution = chain.inverse_kinematics(target, initial_position=guess)
        times.append(time.thread_time() - start)
        residuals.append(float(np.linalg.norm(chain.forward_kinematics(solution)[:3, 3] - target)))
        guess = solution
    return {
        'solves': len(times),
        'ms_p50': percentile_ms(times, 50.0),
        'ms_p99': percentile_ms(times, 99.0),
        'residual_mm_p50': float(np.median(residuals) * 1e3) if residuals else float('nan'),
    }


@contextlib.contextmanager
def _frozen_heap() -> Iterator[None]:
    """
    Collect, then keep what exists out of the collector's reach while timing, as a node does.

    The nodes freeze what they made while starting (:func:`pic_ros.ros.runner.run_nodes`), so a
    full collection in a solve scans only what they made since; without it, a full pass over the
    modules' objects (numba's among them) lands in one timed solve (~60 ms).
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _timed_setting(
    robot: Robot,
    demonstrations: Sequence[Demonstration],
    config: SolverConfig,
    evaluation: EvaluationSettings | None,
    ikpy_frames: int,
) -> tuple[dict[str, list[np.ndarray]], int, float, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """
    Imitate every recording with one setting and time it; keep frames for ikpy.

    :param robot: The robot.
    :param demonstrations: The recordings.
    :param config: The solver setting.
    :param evaluation: Processing and mapping settings.
    :param ikpy_frames: Solved frames per arm kept for ikpy (0: none).
    :return: Per arm the CPU time of each solve per recording [s], the frames, the wall time of
        the imitation [s], and per arm the wrist targets (shape (k, 3), [m]) from the middle of
        its first recording with solved frames and the joints held before them.
    """
    times: dict[str, list[np.ndarray]] = {name: [] for name in robot.arms}
    frames = 0
    elapsed = 0.0
    wrist_targets: dict[str, np.ndarray] = {}
    q_start: dict[str, np.ndarray] = {}
    for demonstration in demonstrations:
        with _frozen_heap():
            start = time.perf_counter()
            trace = run_imitation(robot, demonstration, config, evaluation)
            elapsed += time.perf_counter() - start
        frames += len(demonstration.frames)
        for name, arm_trace in trace.arms.items():
            times[name].append(arm_trace.solve_time[arm_trace.solved])
            if ikpy_frames > 0 and name not in wrist_targets and (
                np.count_nonzero(arm_trace.solved) > 1
            ):
                rows = np.flatnonzero(arm_trace.solved)
                middle = rows[len(rows) // 2: len(rows) // 2 + ikpy_frames]
                wrist_targets[name] = arm_trace.targets[middle, 2]
                q_start[name] = arm_trace.q[middle[0] - 1]
    return times, frames, elapsed, wrist_targets, q_start


def bench_solvers(
    robots: Sequence[Robot],
    demonstrations: Sequence[Demonstration],
    settings: Sequence[SolverConfig],
    ikpy_frames: int = 200,
    evaluation: EvaluationSettings | None = None,
) -> dict[str, Any]:
    """
    Run the solver benchmark.

    :param robots: Robots to benchmark.
    :param demonstrations: Recordings whose frames drive the solvers.
    :param settings: Solver settings.
    :param ikpy_frames: Solved frames per arm given to ikpy (0 skips ikpy).
    :param evaluation: Processing and mapping settings; with ``whole_body`` a robot with a torso
        is timed once, with the whole-body solver (its row's solver is ``whole-body``, and ikpy,
        which solves one arm, is left out for it).
    :return: ``{'solvers': [...], 'ikpy': [...], 'throughput': [...], 'environment': {...}}``.
    """
    solver_rows = []
    ikpy_rows = []
    throughput_rows = []
    for robot in robots:
        whole_body = evaluation is not None and evaluation.whole_body and robot.torso is not None
        for config in settings:
            if whole_body and config is not settings[0]:
                continue  # the arms on the torso take the whole-body solver whatever the setting
            label, eta = ('whole-body', None) if whole_body else (config.name, eta_label(config))
            run = _timed_setting(
                robot, demonstrations, config, evaluation, 0 if whole_body else ikpy_frames
            )
            times, frames, elapsed, wrist_targets, q_start = run
            all_times = np.concatenate([t for parts in times.values() for t in parts])
            solver_rows.append({
                'robot': robot.name,
                'solver': label,
                'eta': eta,
                'arm_solves': int(all_times.size),
                'ms_p50': percentile_ms(all_times, 50.0),
                'ms_p99': percentile_ms(all_times, 99.0),
                'ms_max': percentile_ms(all_times, 100.0),
            })
            throughput_rows.append({
                'robot': robot.name,
                'solver': label,
                'eta': eta,
                'frames': frames,
                'frames_per_s': frames / elapsed if elapsed > 0 else float('nan'),
                'arms': len(robot.arms),
            })
            if ikpy_frames > 0 and label == 'pic':
                for name, targets in wrist_targets.items():
                    row = {'robot': robot.name, 'arm': name}
                    row.update(bench_ikpy(robot, name, targets, q_start[name]))
                    ikpy_rows.append(row)
    return {
        'solvers': solver_rows,
        'ikpy': ikpy_rows,
        'throughput': throughput_rows,
        'environment': {
            'python': platform.python_version(),
            'numpy': np.__version__,
            'machine': platform.machine(),
            'processor_count': os.cpu_count() or 0,
        },
    }


def skeleton_bags() -> list[Path]:
    """
    Return the Azure Kinect bags :func:`bench_skeleton` runs by default.

    :return: The real recording ``azure_kinect/body_tracking_ergonomics`` beside the paper's
        recordings when it is there, then the shipped synthetic demo bag.
    """
    from pic_ros_tools.catalog import pic_demos_dir
    from pic_ros_tools.resources import demo_dir

    bags = []
    demos = pic_demos_dir()
    if demos is not None:
        real = demos.parent / 'azure_kinect' / 'body_tracking_ergonomics'
        if real.exists():
            bags.append(real)
    bags.append(demo_dir() / 'synthetic1_bag')
    return bags


def bench_skeleton(bags: Sequence[Path], passes: int = 5) -> list[dict[str, Any]]:
    """
    Time the skeleton node's processing of each tracker message (see the module docstring).

    Each pass plays a bag's ``MarkerArray`` messages in order into a new tracker and front end
    (default settings, receive time = the recorded time); the first pass is a warm-up.

    :param bags: Rosbag2 paths holding Azure Kinect ``MarkerArray`` messages.
    :param passes: Timed passes over each bag.
    :return: Per bag: ``{'recording', 'messages', 'skeletons', 'ms_p50', 'ms_p99', 'ms_max'}``,
        messages and skeletons (those accepted) per pass, times in milliseconds of CPU time.
    """
    from pic_ros_tools.recordings.rosbag import MARKER_ARRAY, read_messages

    rows = []
    for bag in bags:
        messages = [
            (message.timestamp_ns * 1e-9, message.data)
            for message in read_messages(bag) if message.msgtype == MARKER_ARRAY
        ]
        times: list[float] = []
        skeletons = 0
        for index in range(passes + 1):
            tracker = make_tracker('azure_kinect')
            front = SkeletonFrontEnd()
            gc.collect()
            elapsed = []
            for received, data in messages:
                start = time.thread_time()
                reading = tracker.decode(parse_marker_array(data), received)
                if reading is not None:
                    front.feed(reading)
                elapsed.append(time.thread_time() - start)
            if index > 0:
                times += elapsed
            skeletons = front.accepted
        rows.append({
            'recording': Path(bag).name,
            'messages': len(messages),
            'skeletons': skeletons,
            'ms_p50': percentile_ms(times, 50.0),
            'ms_p99': percentile_ms(times, 99.0),
            'ms_max': percentile_ms(times, 100.0),
        })
    return rows
