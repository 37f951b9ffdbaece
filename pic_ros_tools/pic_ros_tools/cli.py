"""
Command line of the tools: ``python -m pic_ros_tools <command>``.

Commands: ``evaluate`` (metrics on recorded demonstrations and on the synthetic robustness
suite), ``bench`` (solver timing against ikpy, pipeline throughput), ``report`` (the README's
headline results and the generated tables of ``docs/results.md``, measured by those:
:mod:`pic_ros_tools.readme_results`, :mod:`pic_ros_tools.results_tables`), ``calibrate`` (a
person's arm lengths from a recording of the calibration pose, for the ``position``
correspondence) and
the ROS 2 commands (``sim``, ``replay``, ``demo``; need rclpy) and ``convert``; ``teleop`` and
``params`` are those of the run-time, ``python -m pic_ros`` (:mod:`pic_ros.cli`), also here.
Errors the user can fix (unknown robot, missing recording, invalid value) print one line and exit
with status 2. The commands that start ROS processes (``demo``, ``evaluate --live``, ``bench
--latency`` / ``--stress``) stop every one of them when they end, fail or receive SIGINT, SIGTERM
or SIGHUP, then exit with 128 + the signal's number
(:func:`pic_ros_tools.ros.processes.run_stopping_children`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import itertools
import json
import logging
import math
from pathlib import Path
import sys
from typing import Any

from pic_ros.cli import run_params, run_teleop
from pic_ros.correspondence import (
    CalibrationConfig,
    Calibrator,
    correspondence_names,
    DEFAULT_CORRESPONDENCE,
    MappingConfig,
)
from pic_ros.correspondence.base import CORRESPONDENCE, MAPPING, SCALE, USER_PROFILE
from pic_ros.exceptions import ConfigError, PicRosError, SkeletonError
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor, SMOOTHING, TIME_CONSTANT
from pic_ros.realtime import check_priority
from pic_ros.resources import shipped_robots
from pic_ros.robot.robot import load_robot
from pic_ros.schema import add_option
from pic_ros.solvers import IterationConfig, SolverConfig
from pic_ros.solvers.avoidance import AvoidanceConfig, SELF_COLLISION_MARGIN
from pic_ros.solvers.base import ETA, SOLVER, solver_names
from pic_ros.solvers.iteration import MAX_ITERATIONS, TOLERANCE
from pic_ros_tools.catalog import (
    crouching_suite,
    default_recordings,
    load_demonstration,
    synthetic_suite,
)
from pic_ros_tools.evaluation import evaluate_one, EvaluationSettings, SOLVER_SETTINGS
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.report import evaluation_tables
from pic_ros_tools.setting_columns import setting_label

_LOG = logging.getLogger('pic_ros')


def _json_ready(value: Any) -> Any:
    """Replace NaN and infinity (not valid JSON) by ``None``, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(item) for item in value]
    return value


def _add_recordings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--recording', action='append',
        help='demo, a PIC paper recording (assembly1..3, incision_straight3), a Kinect v2 text '
        'recording path or a rosbag2 path (repeatable); default: the paper recordings when '
        '../shared is present, else demo',
    )
    parser.add_argument(
        '--bag', action='append', help='a rosbag2 of body-tracking MarkerArrays (repeatable)'
    )
    parser.add_argument('--bag-topic', help='MarkerArray topic of --bag (default: the first)')
    parser.add_argument('--segments', help='segment file for --bag (paper format)')
    parser.add_argument('--task-arms', help='paper config JSON giving the task arms of --bag')
    add_option(
        parser, SMOOTHING, flag='--filter', default=SMOOTHING.default,
        help_suffix=f' (default: {SMOOTHING.default})',
    )
    add_option(parser, TIME_CONSTANT, default=TIME_CONSTANT.default)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--robot', action='append', help='robot name (repeatable); default: all')
    add_option(
        parser, SOLVER, repeatable=True, extra_choices=('all',),
        help_suffix="; repeatable, all: every registered solver (the paper's five settings, "
        'analytic and plug-ins); default: FABRIK, PIC and PICs η=1,2,3',
    )
    add_option(parser, ETA, repeatable=True, help_suffix='; repeatable; default: 1, 2 and 3')
    add_option(
        parser, CORRESPONDENCE, repeatable=True, extra_choices=('all',),
        help_suffix=f'; repeatable, all: every one; default: {DEFAULT_CORRESPONDENCE}',
    )
    _add_recordings(parser)
    parser.add_argument(
        '--whole', action='store_true',
        help='score each recording whole (one segment, both arms) instead of its segments',
    )
    parser.add_argument(
        '--suite', choices=('synthetic', 'crouching'),
        help='evaluate the synthetic robustness suite (generated people; crouching: the same '
        'people crouching now and then, for --whole-body) instead of recordings',
    )
    parser.add_argument(
        '--suite-size', type=int, default=50, help='number of synthetic takes of --suite'
    )
    parser.add_argument(
        '--whole-body', action='store_true',
        help='whole-body imitation (the solver node parameter whole_body): the arms on the '
        "robot's torso are solved with it by prioritized IK, the torso following the person's "
        'crouch (the first --solver setting only for them); robots without a torso as usual',
    )
    parser.add_argument('--json', action='store_true', help='print one JSON object')
    add_option(parser, SELF_COLLISION_MARGIN, default=SELF_COLLISION_MARGIN.default)
    add_option(parser, MAPPING, help_suffix=" (default: the robot file's)")
    add_option(parser, SCALE)
    add_option(parser, USER_PROFILE)
    add_option(parser, MAX_ITERATIONS, default=MAX_ITERATIONS.default)
    add_option(parser, TOLERANCE, default=TOLERANCE.default)


def _settings(args: argparse.Namespace) -> list[SolverConfig]:
    iteration = IterationConfig(max_iterations=args.max_iterations, tolerance=args.tolerance)
    names = list(args.solver or ())
    paper = {setting for setting, _ in SOLVER_SETTINGS}
    if 'all' in names:
        names = [*paper, *solver_names()]
    chosen = []
    for name, eta in SOLVER_SETTINGS:
        if names and name not in names:
            continue
        if name == 'pics' and args.eta and eta not in args.eta:
            continue
        chosen.append(SolverConfig(name=name, eta=max(eta, 1), iteration=iteration))
    for name in dict.fromkeys(names):
        if name not in paper:
            chosen.append(SolverConfig(name=name, iteration=iteration))
    if not chosen:
        raise PicRosError('the --solver / --eta filters select no setting')
    return chosen


def _mappings(args: argparse.Namespace) -> list[MappingConfig]:
    """Return one mapping config per requested correspondence (command-line overrides)."""
    names = list(args.correspondence or [DEFAULT_CORRESPONDENCE])
    if 'all' in names:
        names = list(correspondence_names())
    mappings = []
    for name in dict.fromkeys(names):
        values: dict[str, Any] = {'correspondence': name}
        for key in ('mapping', 'scale', 'user_profile'):
            if getattr(args, key) is not None:
                values[key] = getattr(args, key)
        mappings.append(MappingConfig.from_parameters(values))
    return mappings


def _processing(args: argparse.Namespace) -> ProcessingConfig:
    return ProcessingConfig(smoothing=args.filter, time_constant=args.time_constant)


def _robots(args: argparse.Namespace) -> list[Any]:
    names = args.robot or list(shipped_robots())
    return [load_robot(name) for name in names]


def _demonstrations(args: argparse.Namespace) -> list[Demonstration]:
    """Load the recordings, bags or suite named on the command line."""
    if getattr(args, 'suite', None) == 'synthetic':
        demonstrations = list(synthetic_suite(args.suite_size))
    elif getattr(args, 'suite', None) == 'crouching':
        demonstrations = list(crouching_suite(args.suite_size))
    else:
        names = list(args.recording or [])
        bags = list(getattr(args, 'bag', None) or [])
        if not names and not bags:
            names = list(default_recordings())
        demonstrations = [load_demonstration(name) for name in names]
        if bags:
            from pic_ros_tools.recordings.bag_demonstration import demonstration_from_bag

            demonstrations += [
                demonstration_from_bag(
                    path, args.bag_topic, segments=args.segments, task_arms=args.task_arms
                )
                for path in bags
            ]
    if getattr(args, 'whole', False):
        demonstrations = [Demonstration.whole(d.name, d.frames) for d in demonstrations]
    return demonstrations


def run_evaluate(args: argparse.Namespace) -> int:
    """
    Run ``evaluate`` and print its tables or JSON.

    :param args: Parsed arguments.
    :return: Process exit status.
    """
    if args.live:
        return _run_live(args)
    if args.head_hands:
        return _run_head_hands(args)
    robots = _robots(args)
    settings = _settings(args)
    mappings = _mappings(args)
    processing = _processing(args)
    demonstrations = _demonstrations(args)
    records = []
    whole_body = bool(args.whole_body)
    for demonstration, robot, mapping, config in itertools.product(
        demonstrations, robots, mappings, settings
    ):
        if whole_body and robot.torso is not None and config is not settings[0]:
            continue  # the arms on the torso take the whole-body solver whatever the setting
        if not args.json and sys.stderr.isatty():
            print(
                f'  {demonstration.name:>20}  {robot.name:<7} {mapping.correspondence:<10} '
                f'{setting_label(config.name, config.eta):<10}',
                end='\r', file=sys.stderr, flush=True,
            )
        evaluation = EvaluationSettings(
            processing=processing, mapping=mapping, whole_body=whole_body,
            avoidance=AvoidanceConfig(margin=args.self_collision_margin),
        )
        records.append(evaluate_one(robot, demonstration, config, evaluation))
    if args.json:
        print(json.dumps(_json_ready({'results': records})))
        return 0
    if sys.stderr.isatty():
        print(' ' * 70, end='\r', file=sys.stderr)
    print(evaluation_tables(records, suite=args.suite is not None))
    return 0


def _run_head_hands(args: argparse.Namespace) -> int:
    """Run ``evaluate --head-hands``: see :mod:`pic_ros_tools.head_hands_report`."""
    from pic_ros_tools.head_hands import (
        evaluate_head_hands_suite,
        HEAD_HANDS_COUNT,
        head_hands_table,
    )
    from pic_ros_tools.head_hands_report import (
        recording_rows,
        recording_table,
        robot_rows,
        robot_table,
    )
    from pic_ros_tools.synthetic.head_hands_take import generate_head_hands_take
    from pic_ros_tools.synthetic.suite import SUITE_SEED, suite_specs

    processing = _processing(args)
    takes = [generate_head_hands_take(spec) for spec in suite_specs(HEAD_HANDS_COUNT, SUITE_SEED)]
    print(f'Estimators on {len(takes)} labelled synthetic people (Azure-Kinect-like points):\n')
    print(head_hands_table(evaluate_head_hands_suite(HEAD_HANDS_COUNT, processing=processing)))
    print('\nRobots on the same takes (solver node path):\n')
    print(robot_table(robot_rows(_robots(args), takes, processing)))
    print('\nHand states on the recordings (no labels):\n')
    print(recording_table(recording_rows(_demonstrations(args), processing)))
    return 0


def _stopping_children(tool: Callable[[], int], prog: str) -> int:
    """
    Run a command that starts ROS processes so that none outlives it, signalled or failing.

    :param tool: The command; returns its exit status.
    :param prog: Its name, for the line saying it was stopped by a signal.
    :return: Its status, or 128 + the signal's number (:mod:`pic_ros_tools.ros.processes`).
    """
    from pic_ros_tools.ros.processes import run_stopping_children

    return int(run_stopping_children(tool, prog))


def _run_live(args: argparse.Namespace) -> int:
    """Run ``evaluate --live`` (rclpy, mujoco): :mod:`pic_ros_tools.ros.live_evaluation`."""
    return _stopping_children(lambda: _live(args), 'python -m pic_ros_tools evaluate --live')


def _live(args: argparse.Namespace) -> int:
    from pic_ros_tools.live_evaluation import live_tables
    from pic_ros_tools.ros.live_evaluation import live_records, LiveSettings

    if args.suite is not None or args.whole:
        raise ConfigError('--live plays recordings as they are: no --suite or --whole')
    if args.duration is not None and not args.duration > 0.0:
        raise ConfigError(f'--duration must be > 0, got {args.duration:g}')
    settings = LiveSettings(
        robots=_robots(args),
        recordings=list(args.recording or []) + list(args.bag or []) or ['demo'],
        solvers=_settings(args) if args.solver or args.eta else [SolverConfig(
            iteration=IterationConfig(max_iterations=args.max_iterations, tolerance=args.tolerance)
        )],
        mappings=_mappings(args),
        processing=_processing(args),
        duration=args.duration,
        logs=args.logs,
        user_profile=args.user_profile,
        realtime_priority=check_priority(args.realtime_priority),
        sim_realtime_priority=(
            None if args.sim_realtime_priority is None
            else check_priority(args.sim_realtime_priority)
        ),
    )
    records = live_records(settings)
    if args.json:
        print(json.dumps(_json_ready({'live': records}), default=str))
    else:
        print(live_tables(records))
    for record in records:  # a run that does not show what the pipeline does (run_warnings)
        for line in record['warnings']:
            print(
                f"evaluate --live: WARNING: invalid run ({record['live']['robot']}, "
                f"{record['live']['recording']}): {line}", file=sys.stderr,
            )
    return 0


def run_bench(args: argparse.Namespace) -> int:
    """
    Run ``bench`` and print its tables or JSON.

    :param args: Parsed arguments.
    :return: Process exit status.
    """
    if args.stress or args.latency or args.latency_only:  # they start ROS processes
        return _stopping_children(lambda: _bench(args), 'python -m pic_ros_tools bench')
    return _bench(args)


def _bench(args: argparse.Namespace) -> int:
    from pic_ros_tools.bench import bench_skeleton, bench_solvers, skeleton_bags
    from pic_ros_tools.report import bench_tables

    result: dict[str, Any] = {}
    if args.stress:
        from pic_ros_tools.ros.stress_bench import run_stress_bench

        sources = ('azure_kinect', 'xsens_mvn') if args.stress_source == 'both' else (
            args.stress_source,
        )
        result['stress'] = run_stress_bench(
            seconds=args.stress_seconds, sources=sources, robot=(args.robot or ['baxter'])[0],
            hog=not args.no_hog,
        )
    elif not args.latency_only:
        robots = _robots(args)
        settings = _settings(args)
        demonstrations = _demonstrations(args)
        evaluation = EvaluationSettings(
            processing=_processing(args), mapping=_mappings(args)[0], whole_body=args.whole_body,
            avoidance=AvoidanceConfig(margin=args.self_collision_margin),
        )
        result = bench_solvers(robots, demonstrations, settings, args.ikpy_frames, evaluation)
        result['recordings'] = [d.name for d in demonstrations]
        result['skeleton'] = bench_skeleton(skeleton_bags())
    if args.latency or args.latency_only:
        from pic_ros_tools.ros.latency_bench import run_latency_bench

        robot = (args.robot or ['baxter'])[0]
        result['latency'] = run_latency_bench(robot=robot, seconds=args.latency_seconds)
    if args.json:
        print(json.dumps(_json_ready(result)))
    else:
        print(bench_tables(result))
    return 0


def run_report(args: argparse.Namespace) -> int:
    """
    Run ``report``: collect the measurements, render the README's and results.md's tables.

    ``--collect DIR`` alone collects; ``--render DIR`` renders; both (one directory) or neither
    (a new temporary directory, kept, its path printed) collect and render. ``--readme``
    rewrites the README's marked block instead of printing it, ``--results`` the marked blocks
    of ``docs/results.md`` (either renders after ``--collect`` too); the markers of both are
    checked before any measurement.

    :param args: Parsed arguments.
    :return: Process exit status.
    """
    from pic_ros_tools.readme_results import ordered_robots

    _check_report_files(args)
    writes = args.readme is not None or args.results is not None
    robots = ordered_robots(args.robots or list(shipped_robots()))
    directory = args.render or args.collect
    if args.collect is not None or args.render is None:
        directory, status = _collect_report(args, robots, directory)
        if status != 0:
            return status
        if args.render is None and args.collect is not None and not writes:
            return 0
    _render_report(args, directory, robots if args.robots else None)
    return 0


def _check_report_files(args: argparse.Namespace) -> None:
    """
    Check ``report``'s arguments and the markers of the files it rewrites, before measuring.

    :param args: Parsed arguments.
    :raises ConfigError: If two directories or ``--label`` with ``--readme`` are given.
    :raises ReportError: If a file's markers are missing or out of order.
    """
    from pic_ros_tools.readme_results import read_readme
    from pic_ros_tools.results_tables import read_results

    if args.collect is not None and args.render is not None and args.collect != args.render:
        raise ConfigError('--collect and --render name two directories: give one')
    if args.label and args.readme is not None:
        raise ConfigError(
            '--label names a second run for --results; the README has one table, the first '
            "run's: leave out --readme"
        )
    if args.readme is not None:
        read_readme(args.readme)
    if args.results is not None:
        read_results(args.results, args.label)


def _collect_report(
    args: argparse.Namespace, robots: list[str], directory: Path | None
) -> tuple[Path, int]:
    """
    Run ``report``'s measurements into a directory (a new temporary one when None).

    :param args: Parsed arguments.
    :param robots: The robots to measure.
    :param directory: Where the measurements go.
    :return: The directory and the exit status of the collection.
    """
    import tempfile

    from pic_ros_tools.results_collection import collect, LIVE, plan, shared_inputs

    where = directory or Path(tempfile.mkdtemp(prefix='pic_ros_report_'))
    inputs = shared_inputs()
    measurements = plan(robots, inputs, skip_live=args.skip_live)

    def measure() -> int:
        collect(where, measurements, inputs, skipped=[LIVE] if args.skip_live else [])
        return 0

    status = _stopping_children(measure, 'python -m pic_ros_tools report')
    print(f'pic_ros_tools report: measurements in {where}', file=sys.stderr)
    return where, status


def _render_report(args: argparse.Namespace, directory: Path, chosen: list[str] | None) -> None:
    """
    Print ``report``'s README table, or rewrite the README's and results.md's marked blocks.

    :param args: Parsed arguments.
    :param directory: The measurements.
    :param chosen: The robots to render (None: every robot measured).
    """
    from pic_ros_tools.readme_results import results_block, write_readme
    from pic_ros_tools.results_tables import results_tables, write_results

    if args.readme is None and args.results is None:
        print(results_block(directory, chosen))
    if args.readme is not None:
        changed = write_readme(args.readme, results_block(directory, chosen))
        said = 'results table rewritten' if changed else 'unchanged'
        print(f'pic_ros_tools report: {args.readme}: {said}', file=sys.stderr)
    if args.results is not None:
        changed = write_results(args.results, results_tables(directory, chosen, args.label))
        said = 'generated tables rewritten' if changed else 'unchanged'
        print(f'pic_ros_tools report: {args.results}: {said}', file=sys.stderr)


def run_calibrate(args: argparse.Namespace) -> int:
    """
    Measure a person's arm lengths from a recording of the calibration pose.

    :param args: Parsed arguments.
    :return: Process exit status.
    """
    demonstrations = _demonstrations(args)
    if len(demonstrations) != 1:
        raise ConfigError('calibrate needs exactly one --recording or --bag')
    processor = SkeletonProcessor(_processing(args))
    frames = []
    for frame in demonstrations[0].frames:
        try:
            frames.append(processor.process(frame))
        except SkeletonError:
            continue
    calibrator = Calibrator(CalibrationConfig(duration=args.duration))
    profile = calibrator.calibrate(frames, name=args.name or demonstrations[0].name)
    if args.out:
        written = profile.save(args.out)
        print(f'pic_ros calibrate: wrote {written}', file=sys.stderr)
    else:
        print(profile.to_yaml(), end='')
    return 0


def run_sim(argv: Sequence[str]) -> int:
    """
    Run the MuJoCo simulated robot as a ROS node (needs rclpy and mujoco).

    :param argv: The sim arguments.
    :return: Process exit status.
    """
    from pic_ros_tools.ros.sim_robot_node import run_sim as sim_main

    return int(sim_main(list(argv)))


def run_replay(argv: Sequence[str]) -> int:
    """
    Play a rosbag2 with its original timing (needs rclpy).

    :param argv: The replay arguments.
    :return: Process exit status.
    """
    from pic_ros_tools.ros.replay_node import run_replay as replay_main

    return int(replay_main(list(argv)))


def run_convert(argv: Sequence[str]) -> int:
    """
    Convert PIC Kinect v2 text recordings to a rosbag2 (no ROS needed).

    :param argv: The convert arguments.
    :return: Process exit status.
    """
    from pic_ros_tools.convert import run_convert as convert_main

    return convert_main(list(argv))


def run_demo(argv: Sequence[str]) -> int:
    """
    Run the whole pipeline as separate ROS 2 processes and draw it (needs rclpy and mujoco).

    :param argv: The demo arguments.
    :return: Process exit status.
    """
    from pic_ros_tools.ros.demo import run_demo as demo_main

    return _stopping_children(lambda: int(demo_main(list(argv))), 'python -m pic_ros_tools demo')


ROS_COMMANDS = {
    'demo': run_demo,
    'teleop': run_teleop,
    'sim': run_sim,
    'replay': run_replay,
    'convert': run_convert,
    'params': run_params,
}
"""
Commands that parse their own arguments (demo, teleop, sim and replay need rclpy); teleop and
params are the run-time's (:mod:`pic_ros.cli`).
"""


def build_parser() -> argparse.ArgumentParser:
    """
    Build the argument parser of ``python -m pic_ros_tools``.

    :return: The parser.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros_tools',
        description='Robot arm teleoperation by human pose imitation (PIC / PICs / FABRIK).',
    )
    commands = parser.add_subparsers(dest='command', required=True)
    evaluate = commands.add_parser(
        'evaluate',
        help='metrics of the solvers on recorded demonstrations (docs/method.md#metrics)',
    )
    _add_common(evaluate)
    evaluate.add_argument(
        '--live', action='store_true',
        help='play each recording through the ROS 2 processes (replay, skeleton_node, '
        'solver_node, trajectory_publisher, sim_robot; sim time) and score what the simulated '
        'robot did beside the offline figures (needs rclpy and mujoco; default robots: all, '
        'recording: demo, solver: pic)',
    )
    evaluate.add_argument(
        '--head-hands', action='store_true',
        help='head and hand imitation instead of the arms: the estimators and every robot with '
        'a head or grippers on labelled synthetic people, and the hand states on the recordings '
        '(default: the paper recordings; --bag adds others)',
    )
    evaluate.add_argument(
        '--duration', type=float, help='--live: play only the first seconds of each recording'
    )
    evaluate.add_argument(
        '--logs', type=Path,
        help="--live: keep the processes' logs and each run's run.mcap (its topics) and "
        'run_scene.mcap (Foxglove scene) here',
    )
    evaluate.add_argument(
        '--realtime-priority', type=int, default=0,
        help="--live: the pipeline's and sim_robot's realtime_priority (SCHED_FIFO, 1-98; 0: "
        'default scheduling), as on a robot PC that grants it',
    )
    evaluate.add_argument(
        '--sim-realtime-priority', type=int,
        help="--live: sim_robot's own realtime_priority (default: --realtime-priority's), e.g. "
        "50, ros2_control's controller manager's default, with the pipeline's at 0",
    )
    evaluate.set_defaults(run=run_evaluate)
    bench = commands.add_parser('bench', help='solver timing against ikpy; pipeline throughput')
    _add_common(bench)
    bench.add_argument(
        '--ikpy-frames', type=int, default=200, help='frames per arm given to ikpy (0: skip)'
    )
    bench.add_argument(
        '--latency', action='store_true',
        help='also measure end-to-end latency across processes (needs rclpy)',
    )
    bench.add_argument(
        '--latency-only', action='store_true', help='measure only the end-to-end latency'
    )
    bench.add_argument(
        '--latency-seconds', type=float, default=20.0, help='measured seconds per latency run'
    )
    bench.add_argument(
        '--stress', action='store_true',
        help='only a real-time replay into teleop beside a CPU hog, every frame accounted for '
        '(needs rclpy; docs/results.md "Under load")',
    )
    bench.add_argument(
        '--stress-seconds', type=float, default=600.0, help='seconds streamed per stress run'
    )
    bench.add_argument(
        '--stress-source', choices=('azure_kinect', 'xsens_mvn', 'both'), default='both',
        help='tracker stream of the stress run',
    )
    bench.add_argument('--no-hog', action='store_true', help='stress run without the CPU hog')
    bench.set_defaults(run=run_bench)
    report = commands.add_parser(
        'report',
        help="the README's headline results and docs/results.md's generated tables: measured by "
        'bench, evaluate and evaluate --live, rendered as their tables',
    )
    report.add_argument(
        '--collect', type=Path, metavar='DIR',
        help='run the measurements, their JSON and meta.json into DIR (alone: no rendering)',
    )
    report.add_argument(
        '--render', type=Path, metavar='DIR', help='render the table from the JSON in DIR'
    )
    report.add_argument(
        '--readme', type=Path,
        help='rewrite the block between <!-- results:begin --> and <!-- results:end --> of this '
        'file (default: print the table)',
    )
    report.add_argument(
        '--results', type=Path, metavar='RESULTS_MD',
        help='rewrite the blocks between <!-- report:NAME:begin --> and <!-- report:NAME:end --> '
        'of this file (docs/results.md; NAME: offline, live, bench)',
    )
    report.add_argument(
        '--label', default='', metavar='LABEL',
        help='with --results: rewrite the blocks NAME-LABEL instead (a second run beside the '
        'first, e.g. busy: the same tables on a loaded host); not with --readme',
    )
    report.add_argument(
        '--robots', nargs='+', choices=shipped_robots(), metavar='ROBOT',
        help='robots to measure and render (default: all)',
    )
    report.add_argument(
        '--skip-live', action='store_true',
        help='leave out evaluate --live (its cells show –)',
    )
    report.set_defaults(run=run_report)
    calibrate = commands.add_parser(
        'calibrate',
        help="a person's arm lengths from a recording of the calibration pose (a user profile)",
    )
    _add_recordings(calibrate)
    calibrate.add_argument('--name', help='name written into the profile (default: recording)')
    calibrate.add_argument('--out', type=Path, help='profile file to write (default: stdout)')
    calibrate.add_argument(
        '--duration', type=float, default=CalibrationConfig().duration,
        help='seconds the pose must be held [s]',
    )
    calibrate.set_defaults(run=run_calibrate, suite=None, whole=False)
    for name, text in (
        ('demo', 'replay -> skeleton -> solver -> trajectories -> MuJoCo robot, with pictures'),
        ('teleop', 'tracker -> robot trajectories in one ROS 2 process'),
        ('sim', 'MuJoCo robot following joint trajectories, publishing joint_states'),
        ('replay', 'play a rosbag2 (MCAP or sqlite3) with its original timing'),
        ('convert', 'PIC Kinect v2 text recording -> rosbag2 of MarkerArrays'),
        ('params', "the nodes' parameters: config/teleop.yaml or the docs' tables"),
    ):
        commands.add_parser(name, add_help=False, help=f'{text} (see {name} --help)')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the command line.

    :param argv: Arguments without the program name; default ``sys.argv[1:]``.
    :return: Process exit status (0 success, 2 usage or input error).
    """
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in ROS_COMMANDS:
        return ROS_COMMANDS[arguments[0]](arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        return int(args.run(args))
    except PicRosError as err:
        print(f'pic_ros_tools {args.command}: {err}', file=sys.stderr)
        return 2
