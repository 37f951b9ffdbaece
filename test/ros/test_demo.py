"""The demo: separate ROS 2 processes over DDS, recorded and drawn, from any recording."""

from __future__ import annotations

import json
from pathlib import Path
import shlex
import subprocess
import sys
import types

from pic_ros.robot.robot import load_robot
from pic_ros.solvers import register_solver, SolverConfig, unregister_solver
from pic_ros.solvers.point_imitation import FabrikSolver
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import evaluate_one
import pytest

pytest.importorskip('rclpy')
pytest.importorskip('mujoco')
demo = pytest.importorskip('pic_ros_tools.ros.demo')
run_demo = demo.run_demo

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
OUTPUTS = (
    'animation.gif', 'frame.png', 'joints.png', 'elbows.png', 'metrics.md', 'metrics.json'
)
TIMING_KEYS = ('solve_ms_p50', 'solve_ms_p99', 'solve_us_histogram')


def read_mcap(path):
    """
    Read a run's MCAP back: every message decoded with mcap_ros2.

    :return: ``(profile, {topic: schema name}, {topic: [decoded message, ...]})``.
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    decoded = {}
    with path.open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        profile = reader.get_header().profile
        summary = reader.get_summary()
        assert {c.message_encoding for c in summary.channels.values()} == {'cdr'}
        assert {s.encoding for s in summary.schemas.values()} == {'ros2msg'}
        types = {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()}
        for _, channel, _, message in reader.iter_decoded_messages():
            decoded.setdefault(channel.topic, []).append(message)
    return profile, types, decoded


def _close_to(value):
    """
    Return what compares equal to a JSON value up to rounding, nested, NaN equal to NaN.

    The bag keeps stamps in whole nanoseconds, so made-up 30 Hz stamps move by < 1 ns.
    """
    if isinstance(value, dict):
        return {key: _close_to(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_close_to(item) for item in value]
    if isinstance(value, float):
        return pytest.approx(value, rel=1e-6, abs=1e-9, nan_ok=True)
    return value


def test_short_demo_run_writes_every_output(tmp_path):
    """A few seconds of the shipped bag through the five processes give all the outputs."""
    out = tmp_path / 'demo_out'
    status = run_demo(['--robot', 'baxter', '--duration', '4', '--out', str(out), '--fps', '4'])
    assert status == 0, (out / 'logs').glob('*.log')
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 1000, name
    metrics = json.loads((out / 'metrics.json').read_text())
    live = metrics['live']
    assert live['live']['frames'] > 50
    assert live['live']['limit_violations'] == 0
    assert live['offline']['solver'] == live['live']['solver'] == 'pic'
    for arm in live['arms'].values():
        assert arm['command']['velocity_peak'] <= 1.0 + 1e-9
        assert arm['robot']['position_violations'] == 0
    assert live['run']['source'] == 'azure_kinect'
    assert live['run']['clock'] == 'sim'
    assert live['run']['engaged'] == 'engaged by service'  # as an operator engages it
    assert {record['solver'] for record in metrics['evaluate']} == {'fabrik', 'pic', 'pics'}
    assert 'Pacc live' in (out / 'metrics.md').read_text()

    # run.mcap: every topic of the run, with its schema, each message decoded
    pytest.importorskip('mcap_ros2')
    from pic_ros_tools.ros.live_run import run_topics

    profile, types, decoded = read_mcap(out / 'run.mcap')
    assert profile == 'ros2'
    robot = load_robot('baxter')
    for topic in run_topics(robot):
        assert types[topic.name] == topic.msgtype, topic.name
        assert len(decoded[topic.name]) > 0, topic.name
    assert sum(len(messages) for messages in decoded.values()) == live['run']['mcap_messages']
    assert [m.data for m in decoded['/engaged']][-1] is True
    names = set(decoded['/joint_states'][0].name)
    for arm in robot.arms.values():
        assert set(decoded['/joint_targets'][-1].name) >= set(arm.joint_names)
        assert set(decoded[f'/{arm.controller}/joint_trajectory'][0].joint_names) <= names

    # run_scene.mcap: the robot once per joint_states message, the person once per marker array
    from mcap.reader import make_reader
    from pic_ros_tools.ros import foxglove_scene

    scene: dict[str, int] = {}
    with (out / foxglove_scene.SCENE_NAME).open('rb') as stream:
        for _, channel, _ in make_reader(stream).iter_messages():
            scene[channel.topic] = scene.get(channel.topic, 0) + 1
    assert scene[foxglove_scene.LINKS_TOPIC] == len(decoded['/joint_states'])
    assert scene[foxglove_scene.ROBOT_TOPIC] == len(decoded['/joint_states'])
    person = next(topic for topic in foxglove_scene.PERSON_TOPICS if topic in decoded)
    assert scene[foxglove_scene.PERSON_TOPIC] == len(decoded[person])


def test_a_kinect_v2_text_recording_is_replayed_and_scored_offline_as_evaluate_scores_it(
    tmp_path, capsys
):
    """
    A 3 s text recording without stamps goes through the processes as Kinect v2 markers.

    The made-up stamps are announced in one line, the chosen solver reaches solver_node, and the
    offline table is what ``evaluate --recording`` gives for that file (to the rounding of its
    stamps to nanoseconds in the bag).
    """
    lines = (ROOT / 'pic_ros_tools' / 'demo' / 'synthetic1_skel.txt').read_text().splitlines()[:90]
    recording = tmp_path / 'person.txt'
    recording.write_text('\n'.join(lines) + '\n')
    out = tmp_path / 'demo_out'
    status = run_demo([
        '--recording', str(recording), '--duration', '4', '--solver', 'fabrik',
        '--out', str(out), '--fps', '4',
    ])
    assert status == 0, sorted((out / 'logs').glob('*.log'))
    err = capsys.readouterr().err
    assert err.count('made-up 30 Hz stamps') == 1
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 1000, name
    assert 'with FABRIK' in (out / 'logs' / 'solver_node.log').read_text()
    metrics = json.loads((out / 'metrics.json').read_text())
    live = metrics['live']
    assert (live['run']['source'], live['run']['recording']) == ('kinect_v2', str(recording))
    assert 45 < live['live']['frames'] <= 90
    assert live['live']['limit_violations'] == 0
    robot = load_robot('baxter')
    text = load_demonstration(str(recording))
    for record in metrics['evaluate']:
        expected = json.loads(json.dumps(
            evaluate_one(robot, text, SolverConfig(name=record['solver'])), default=str
        ))
        for key in TIMING_KEYS:
            del record[key], expected[key]
        assert record == _close_to(expected), record['solver']
    assert [record['frames'] for record in metrics['evaluate']] == [90] * 3


@pytest.mark.parametrize(
    'name, content', [('take_skel.txt', 'not numbers\n'), ('gone_skel.txt', None)]
)
def test_a_recording_that_cannot_be_read_exits_2_with_one_line_and_starts_nothing(
    tmp_path, capsys, name, content
):
    """Nothing is started and no output folder is made: one line ``demo: ...`` says why."""
    recording = tmp_path / name
    if content is not None:
        recording.write_text(content)
    out = tmp_path / 'demo_out'
    assert run_demo(['--recording', str(recording), '--out', str(out)]) == 2
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 1 and printed[0].startswith('demo: ') and name in printed[0]
    assert not out.exists()


@pytest.fixture
def plugin_solver():
    """Register a solver under a plug-in's name for one test."""
    register_solver('plugin_fabrik')(FabrikSolver)
    yield 'plugin_fabrik'
    unregister_solver('plugin_fabrik')


def test_the_solver_choices_are_the_registry_names(plugin_solver, capsys):
    """A registered plug-in name is accepted; a name the registry lacks is refused (status 2)."""
    assert demo.build_parser().parse_args(['--solver', plugin_solver]).solver == plugin_solver
    with pytest.raises(SystemExit) as refused:
        run_demo(['--solver', 'nope'])
    assert refused.value.code == 2
    assert 'solver must be one of' in capsys.readouterr().err


@pytest.mark.parametrize('recording', ['', 'my take_skel.txt'])
def test_make_demo_passes_a_given_recording_and_no_empty_one(recording):
    """``make demo RECORDING=path`` adds ``--recording path``; an empty one keeps the default."""
    result = subprocess.run(
        ['make', '-n', '--no-print-directory', '-C', str(ROOT), 'demo', f'RECORDING={recording}'],
        capture_output=True, text=True, timeout=60, check=True,
    )
    [command] = [line for line in result.stdout.splitlines() if ' -m pic_ros_tools demo ' in line]
    arguments = shlex.split(command)
    if recording:
        assert arguments[arguments.index('--recording') + 1] == recording
    else:
        assert '--recording' not in arguments


def test_the_recorder_spins_rclpys_events_executor_where_there_is_one(monkeypatch):
    """Kilted's rclpy has ``rclpy.experimental.EventsExecutor``; without it, the usual one."""
    import importlib

    from pic_ros_tools.ros import live_run
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    try:
        available = hasattr(importlib.import_module('rclpy.experimental'), 'EventsExecutor')
    except ImportError:
        available = False
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        executor = live_run.recorder_executor(context)
        assert isinstance(executor, SingleThreadedExecutor) is not available
        executor.shutdown(timeout_sec=1.0)

        def missing(name: str) -> None:
            raise ImportError(name)

        monkeypatch.setattr(live_run, 'importlib', types.SimpleNamespace(import_module=missing))
        executor = live_run.recorder_executor(context)
        assert isinstance(executor, SingleThreadedExecutor)
        executor.shutdown(timeout_sec=1.0)
    finally:
        rclpy.try_shutdown(context=context)


def test_the_recorder_falls_back_to_the_usual_executor_when_stderr_has_no_descriptor(
    monkeypatch,
):
    """The events executor turns faulthandler on, which refuses a stderr without a descriptor."""
    import io

    from pic_ros_tools.ros import live_run
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    monkeypatch.setattr(sys, 'stderr', io.StringIO())
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        executor = live_run.recorder_executor(context)
        assert isinstance(executor, SingleThreadedExecutor)
        executor.shutdown(timeout_sec=1.0)
    finally:
        rclpy.try_shutdown(context=context)


def test_the_simulated_controller_manager_may_run_at_its_own_realtime_priority():
    """
    ``sim_realtime_priority`` goes to sim_robot alone; the pipeline keeps ``realtime_priority``.

    As on a robot PC whose ros2_control runs under ``SCHED_FIFO`` (its default, 50) beside a
    teleoperation left to the default scheduling; without it sim_robot shares the pipeline's.
    """
    from pic_ros_tools.ros.live_run import _commands

    def priorities(**kwargs):
        commands = _commands('yumi', 'azure_kinect', {}, {}, True, **kwargs)
        return {
            name: [item for item in argv if item.startswith('realtime_priority:=')]
            for name, argv in commands.items()
        }

    assert priorities(realtime_priority=0, sim_realtime_priority=50) == {
        'sim_robot': ['realtime_priority:=50'], 'skeleton_node': ['realtime_priority:=0'],
        'solver_node': ['realtime_priority:=0'], 'trajectory_publisher': ['realtime_priority:=0'],
    }
    assert set(map(tuple, priorities(realtime_priority=40).values())) == {
        ('realtime_priority:=40',)
    }
