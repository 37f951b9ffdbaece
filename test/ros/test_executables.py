"""
The executables of ``setup.py``: their command lines, stop signals and start-up failures.

Every console script is called in-process with ``--help`` and with an unknown option while
``rclpy.init`` is replaced by a tripwire, so "no node was started" is a fact, not a guess. Options
are checked to become the parameters of the nodes they name. Then each executable runs as a
process of its own (``python -m ...``, the run's domain, a namespace of its own): once it is up
(its start-up log line, a bounded wait) it gets a burst of stop signals, one every few
milliseconds until it has exited, so that some land while it shuts down, and must exit with
status 0 and no traceback; one signal alone ends it too. Without mujoco, ``sim_robot`` must fail
in one line. The runner's spin beside a main loop (``replay``'s) serves the nodes meanwhile.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import time
from typing import Any

from pic_ros.ros import runner, schema
from pic_ros_tools.ros.background_spin import spin_while
from pic_ros_tools.ros.processes import loopback_environment
from pic_ros_tools.ros.schema import SIM_ROBOT
import pytest

rclpy = pytest.importorskip('rclpy', reason='the executables need rclpy')

from rclpy.parameter import Parameter  # noqa: E402

pytestmark = pytest.mark.ros

ROOT = Path(__file__).resolve().parents[2]
DEMO_BAG = ROOT / 'pic_ros_tools' / 'demo' / 'synthetic1_bag'

START_TIMEOUT = 60.0
"""Longest wait for an executable to log that it is up [s] (a bound, never asserted)."""

EXIT_TIMEOUT = 30.0
"""Longest wait for an executable to exit once signalled [s] (a bound, never asserted)."""

SIGNAL_PERIOD = 0.002
"""Time between two stop signals of a burst [s]: a stimulus, not a measurement."""

MAX_SIGNALS = 2000
"""Most stop signals one burst sends."""

NAMESPACE = '/executables_test'
"""Namespace of the processes started here, apart from every other test's topics."""


def console_scripts() -> dict[str, str]:
    """Return the node executables of both setup.py files: name -> ``module:function``."""
    found = {}
    for package in ('pic_ros', 'pic_ros_tools'):
        text = (ROOT / package / 'setup.py').read_text(encoding='utf-8')
        scripts = dict(re.findall(rf"'(\w+) = ({package}\.ros\.[\w.]+:[a-z_]+)'", text))
        assert scripts, f'no console_scripts found in {package}/setup.py'
        found.update(scripts)
    return found


EXECUTABLES = console_scripts()


def entry_point(name: str) -> Any:
    """Return the function of a console script."""
    module, function = EXECUTABLES[name].split(':')
    return getattr(importlib.import_module(module), function)


def call(name: str, arguments: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    """
    Call a console script in-process as ``name ARGUMENTS`` with ``rclpy.init`` as a tripwire.

    :return: The exit status it ended with.
    """

    def tripwire(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f'{name} {" ".join(arguments)} started rclpy')

    monkeypatch.setattr(runner.rclpy, 'init', tripwire)
    monkeypatch.setattr(sys, 'argv', [name, *arguments])
    with pytest.raises(SystemExit) as exit_info:
        entry_point(name)()
    code = exit_info.value.code
    return 0 if code is None else int(code)


def test_the_tests_cover_every_node_executable() -> None:
    """The node executables (the README's six and base_follower) are the console scripts."""
    assert set(EXECUTABLES) == {
        'skeleton_node', 'solver_node', 'trajectory_publisher', 'teleop', 'sim_robot', 'replay',
        'base_follower',
    }


@pytest.mark.parametrize('name', sorted(EXECUTABLES))
def test_help_prints_the_usage_and_starts_no_node(name, monkeypatch, capsys) -> None:
    """``--help`` prints the usage with the options and exits 0; rclpy is never initialised."""
    assert call(name, ['--help'], monkeypatch) == 0
    output = capsys.readouterr().out
    assert output.startswith('usage: ')
    assert '--ros-args' in output


@pytest.mark.parametrize('name', sorted(EXECUTABLES))
def test_an_unknown_option_is_refused_with_the_usage(name, monkeypatch, capsys) -> None:
    """An option the executable does not have: the usage and the reason, exit status 2."""
    arguments = [str(DEMO_BAG)] if name == 'replay' else []
    assert call(name, [*arguments, '--no-such-option'], monkeypatch) == 2
    error = capsys.readouterr().err
    assert error.startswith('usage: ')
    assert '--no-such-option' in error


@pytest.mark.parametrize('name', ['skeleton_node', 'solver_node', 'sim_robot', 'teleop'])
def test_malformed_ros_arguments_are_refused_with_the_usage(name, monkeypatch, capsys) -> None:
    """An unknown argument after --ros-args is a usage error too, before rclpy starts."""
    assert call(name, ['--ros-args', '--no-such-ros-argument'], monkeypatch) == 2
    error = capsys.readouterr().err
    assert error.startswith('usage: ')
    assert '--no-such-ros-argument' in error


def test_options_and_ros_arguments_are_told_apart_in_any_order() -> None:
    """Options before, between and after ``--ros-args`` sections; the sections go to rclpy."""
    parser = runner.node_parser(SIM_ROBOT, 'sim_robot', 'test')
    options, ros_arguments = runner.parse_command_line(parser, [
        '--robot', 'yumi', '--ros-args', '-p', 'robot:=tiago', '--', '--rate', '300',
        '--ros-args', '-r', '__ns:=/a',
    ])
    assert (options.robot, options.rate) == ('yumi', 300.0)
    assert ros_arguments == [
        '--ros-args', '-p', 'robot:=tiago', '--', '--ros-args', '-r', '__ns:=/a'
    ]


@pytest.mark.parametrize(
    'node', ['skeleton_node', 'solver_node', 'trajectory_publisher', 'base_follower']
)
def test_a_node_executable_has_an_option_per_parameter(node) -> None:
    """The options of a node executable are its parameters, by the same names."""
    table = schema.TABLES[node]
    parser = runner.node_parser(table, node, 'test')
    options = {
        action.dest for action in parser._actions
        if action.option_strings and action.dest != 'help'
    }
    assert options == set(table.names)


def test_sim_robot_options_become_its_parameters(ros_context) -> None:
    """``sim_robot --robot tiago --publish-clock --rate 250`` builds a TIAGo node with them."""
    pytest.importorskip('mujoco')
    from pic_ros_tools.ros.sim_robot_node import parse_arguments, SimRobotNode

    args, overrides, ros_arguments = parse_arguments(
        ['--robot', 'tiago', '--publish-clock', '--rate', '250', '--ros-args', '-r', '__ns:=/x']
    )
    assert ros_arguments == ['--ros-args', '-r', '__ns:=/x']
    assert args.duration is None
    node = SimRobotNode(context=ros_context, parameter_overrides=overrides)
    try:
        assert node.get_parameter('robot').value == 'tiago'
        assert node.get_parameter('publish_clock').value is True
        assert node.get_parameter('rate').value == 250.0
        assert node.sim.robot.name == 'tiago'
    finally:
        node.destroy_node()


def test_list_and_empty_options_keep_the_declared_parameter_types(ros_context) -> None:
    """
    ``solver_node --robot tiago --eta 2 --arms arm`` gives an integer and a string array.

    ``--arms ''`` (every arm) becomes ``['']``, which rclpy keeps a string array.
    """
    from pic_ros.ros.solver_node import SolverNode

    table = schema.SOLVER_NODE
    parser = runner.node_parser(table, 'solver_node', 'test')
    for arms, expected in ((['--arms', 'arm'], ['arm']), (['--arms', ''], [''])):
        options, _ = runner.parse_command_line(parser, ['--robot', 'tiago', '--eta', '2', *arms])
        overrides = runner.parameter_overrides(table, options)
        assert {p.name: p.type_ for p in overrides}['arms'] is Parameter.Type.STRING_ARRAY
        node = SolverNode(context=ros_context, parameter_overrides=overrides)
        try:
            assert node.robot.name == 'tiago'
            assert node.get_parameter('eta').value == 2
            assert list(node.get_parameter('arms').value) == expected
        finally:
            node.destroy_node()


def test_spin_while_serves_the_nodes_during_the_work_and_ends_its_thread_after(
    ros_context,
) -> None:
    """
    ``spin_while``: parameter requests are answered while the work runs in the calling thread.

    The work (``replay``'s playback, here a parameter client's request) never spins the nodes
    itself; once it returns, the spin thread has ended.
    """
    import threading

    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter_client import AsyncParameterClient

    namespace = f'{NAMESPACE}/spin_while'
    served = rclpy.create_node('served', namespace=namespace, context=ros_context)
    asker = rclpy.create_node('asker', namespace=namespace, context=ros_context)
    before = set(threading.enumerate())
    spinners: list[threading.Thread] = []
    answers: list[Any] = []

    def work(nodes) -> None:
        spinners.extend(set(threading.enumerate()) - before)
        client = AsyncParameterClient(nodes[1], f'{namespace}/served')
        assert client.wait_for_services(timeout_sec=START_TIMEOUT)
        future = client.list_parameters([], 0)
        deadline = time.monotonic() + START_TIMEOUT
        while not future.done() and time.monotonic() < deadline:
            time.sleep(0.01)
        answers.append(future.result())

    executor = SingleThreadedExecutor(context=ros_context)
    try:
        spin_while(work)(executor, [served, asker])
    finally:
        executor.shutdown(timeout_sec=1.0)
        asker.destroy_node()
        served.destroy_node()

    assert answers and 'use_sim_time' in answers[0].result.names
    assert spinners and not any(thread.is_alive() for thread in spinners)


def test_the_nodes_spin_with_what_starting_made_frozen_out_of_the_collector() -> None:
    """``run_nodes`` collects and freezes the objects of the start before it spins the nodes."""
    import gc

    frozen: list[int] = []

    def build() -> list[Any]:
        return [rclpy.create_node('frozen', namespace=f'{NAMESPACE}/frozen')]

    def spin(executor: Any, nodes: Any) -> None:
        frozen.append(gc.get_freeze_count())

    handlers = {number: signal.getsignal(number) for number in runner.STOP_SIGNALS}
    try:
        status = runner.run_nodes('frozen', [], build, spin=spin)
    finally:
        gc.unfreeze()
        for number, handler in handlers.items():
            signal.signal(number, handler)
    assert status == 0
    assert frozen and frozen[0] > 0


def test_the_executor_is_shut_down_only_once_rclpys_signal_handling_has_ended() -> None:
    """
    ``run_nodes`` with ``spin_while`` (``replay``): no executor destroyed under rclpy's handlers.

    rclpy's signal thread triggers every executor's signal guard condition with no lock
    against its destruction: a signal of a burst that came while ``replay``'s executor was shut
    down crashed the process (a segmentation fault after ``guard condition implementation is
    invalid``). The handlers are uninstalled, and that thread joined, before the shutdown.
    """
    import gc

    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import get_current_signal_handlers_options, SignalHandlerOptions

    handlers_at_shutdown: list[Any] = []
    handlers_during_work: list[Any] = []

    class RecordingExecutor(SingleThreadedExecutor):
        """Records which of rclpy's signal handlers are installed when it is shut down."""

        def shutdown(self, timeout_sec: float | None = None) -> bool:
            handlers_at_shutdown.append(get_current_signal_handlers_options())
            return super().shutdown(timeout_sec=timeout_sec)

    def build() -> list[Any]:
        return [rclpy.create_node('handlers', namespace=f'{NAMESPACE}/handlers')]

    def work(nodes: Any) -> None:
        handlers_during_work.append(get_current_signal_handlers_options())

    previous = {number: signal.getsignal(number) for number in runner.STOP_SIGNALS}
    try:
        status = runner.run_nodes(
            'handlers', [], build, executor=RecordingExecutor, spin=spin_while(work)
        )
    finally:
        gc.unfreeze()
        for number, handler in previous.items():
            signal.signal(number, handler)
    assert status == 0
    assert handlers_during_work == [SignalHandlerOptions.ALL]
    assert handlers_at_shutdown == [SignalHandlerOptions.NO]


class Executable:
    """An executable in a process of its own, its stdout and stderr in files."""

    def __init__(self, argv: list[str], log_dir: Path, environment: dict[str, str]) -> None:
        self.stdout_path = log_dir / 'stdout.txt'
        self.stderr_path = log_dir / 'stderr.txt'
        with self.stdout_path.open('wb') as out, self.stderr_path.open('wb') as err:
            self.process = subprocess.Popen(
                argv, env=environment, cwd=ROOT, stdout=out, stderr=err, start_new_session=True
            )

    def stderr(self) -> str:
        """Return what it wrote to stderr so far."""
        return self.stderr_path.read_text(encoding='utf-8', errors='replace')

    def output(self) -> str:
        """Return both streams, for failure messages."""
        out = self.stdout_path.read_text(encoding='utf-8', errors='replace')
        return f'--- stdout\n{out[-3000:]}\n--- stderr\n{self.stderr()[-3000:]}'

    def wait_until_logged(self, pattern: str) -> None:
        """Wait (bounded) until stderr matches a pattern; fail if the process ends first."""
        deadline = time.monotonic() + START_TIMEOUT
        while not re.search(pattern, self.stderr()):
            if self.process.poll() is not None:
                pytest.fail(f'exited with {self.process.returncode} before {pattern!r}:\n'
                            f'{self.output()}')
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f'not up after {START_TIMEOUT} s ({pattern!r}):\n{self.output()}')
            time.sleep(0.05)

    def signal_burst(self, signals: tuple[int, ...]) -> int:
        """
        Send stop signals in turn, one every few milliseconds, until the process has exited.

        :return: How many were sent.
        """
        sent = 0
        deadline = time.monotonic() + EXIT_TIMEOUT
        while self.process.poll() is None and sent < MAX_SIGNALS:
            os.kill(self.process.pid, signals[sent % len(signals)])  # unreaped until poll()
            sent += 1
            time.sleep(SIGNAL_PERIOD)
        try:
            self.process.wait(timeout=max(deadline - time.monotonic(), 1.0))
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f'still running {EXIT_TIMEOUT} s after {sent} signals:\n{self.output()}')
        return sent

    def kill(self) -> None:
        """Kill the process (a failed test's clean-up)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=EXIT_TIMEOUT)


def python_m(*arguments: str) -> list[str]:
    """Return ``python -m ARGUMENTS`` with this interpreter."""
    return [sys.executable, '-m', *arguments]


ROS_ARGS = ('--ros-args', '-r', f'__ns:={NAMESPACE}')

RUNS = {
    'skeleton_node': (
        python_m('pic_ros.ros.skeleton_node', *ROS_ARGS), r'skeleton_node\]: tracking'
    ),
    'solver_node': (
        python_m('pic_ros.ros.solver_node', '--robot', 'yumi', *ROS_ARGS),
        r'solver_node\]: yumi: solving',
    ),
    'trajectory_publisher': (
        python_m('pic_ros.ros.trajectory_publisher_node', '--robot', 'yumi', *ROS_ARGS),
        r'trajectory_publisher\]: yumi: streaming',
    ),
    'teleop': (
        python_m('pic_ros', 'teleop', '--robot', 'tiago', *ROS_ARGS),
        r'trajectory_publisher\]: tiago: streaming',
    ),
    'sim_robot': (
        python_m('pic_ros_tools.ros.sim_robot_node', '--robot', 'tiago', *ROS_ARGS),
        r'sim_robot\]: tiago: following',
    ),
    'replay': (
        python_m(
            'pic_ros_tools.ros.replay_node', str(DEMO_BAG), '--loop', '--wait-for-subscribers',
            *ROS_ARGS,
        ),
        r'replay\]: playing',
    ),
}
"""How to run each executable as a process, and the log line that says it is up."""


def start(name: str, argv: list[str], tmp_path: Path) -> Executable:
    """Start an executable in the run's domain (MuJoCo rendering headless)."""
    if name == 'sim_robot':
        pytest.importorskip('mujoco')
    return Executable(argv, tmp_path, loopback_environment(extra={'MUJOCO_GL': 'egl'}))


@pytest.mark.slow
@pytest.mark.parametrize('name', sorted(RUNS))
def test_a_burst_of_sigints_stops_an_executable_cleanly(name, tmp_path) -> None:
    """
    SIGINT after SIGINT, also while it shuts down: exit status 0, no traceback.

    The first signal starts the shutdown; the ones after it land in ``destroy_node``,
    ``rclpy.shutdown`` and the interpreter's exit, where a ``KeyboardInterrupt`` used to escape.
    """
    argv, ready = RUNS[name]
    executable = start(name, argv, tmp_path)
    executable.wait_until_logged(ready)

    sent = executable.signal_burst((signal.SIGINT,))

    assert sent >= 2, executable.output()
    assert executable.process.returncode == 0, executable.output()
    assert 'Traceback' not in executable.stderr(), executable.output()


@pytest.mark.slow
@pytest.mark.parametrize('number', [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize('name', sorted(RUNS))
def test_one_stop_signal_ends_a_running_executable(name, number, tmp_path) -> None:
    """
    One SIGINT (Ctrl-C) or SIGTERM to a running executable: it exits by itself, status 0.

    ``scripts/measure_stop_time.py`` measures how long that takes; here the wait is only a bound
    against hanging.
    """
    argv, ready = RUNS[name]
    executable = start(name, argv, tmp_path)
    executable.wait_until_logged(ready)

    os.kill(executable.process.pid, number)
    try:
        status = executable.process.wait(timeout=EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        executable.kill()
        pytest.fail(f'still running {EXIT_TIMEOUT} s after one signal:\n{executable.output()}')

    assert status == 0, executable.output()
    assert 'Traceback' not in executable.stderr(), executable.output()


@pytest.mark.slow
def test_sigterm_and_sigint_mixed_stop_an_executable_cleanly(tmp_path) -> None:
    """SIGTERM and SIGINT in turn, as a launch escalating its stop sends them: status 0."""
    argv, ready = RUNS['solver_node']
    executable = start('solver_node', argv, tmp_path)
    executable.wait_until_logged(ready)

    executable.signal_burst((signal.SIGTERM, signal.SIGINT))

    assert executable.process.returncode == 0, executable.output()
    assert 'Traceback' not in executable.stderr(), executable.output()


@pytest.mark.slow
@pytest.mark.parametrize('number', [signal.SIGINT, signal.SIGTERM])
def test_teleop_stopped_while_samples_stream_in_logs_no_error(tmp_path, number) -> None:
    """
    A stop signal while 240 Hz Xsens samples keep coming: status 0 and no ERROR in the log.

    The receiver and solver threads publish until the signal shuts the context down under them;
    they end without logging an ERROR ("publisher's context is invalid"). The stream goes on
    until the process has exited, so that samples arrive during the whole shutdown.
    """
    import socket
    import threading

    from pic_ros_tools.ros.latency_bench import WavingXsens

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(('127.0.0.1', 0))
        port = int(probe.getsockname()[1])
    argv = python_m(
        'pic_ros', 'teleop', '--robot', 'baxter', '--source', 'xsens_mvn', '--engaged',
        '--param', 'trajectory_publisher.wait_for_joint_states=false',
        '--param', f'skeleton_node.udp_port={port}', *ROS_ARGS,
    )
    executable = start('teleop', argv, tmp_path)
    stop = threading.Event()

    def stream() -> None:
        person = WavingXsens(240.0)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            index = 0
            while not stop.wait(1.0 / 240.0):
                sender.sendto(person.datagram(index), ('127.0.0.1', port))
                index += 1

    sender = threading.Thread(target=stream, daemon=True)
    sender.start()
    try:
        executable.wait_until_logged(r'trajectory_publisher\]: baxter: streaming')
        executable.wait_until_logged(r'udp_receiver|receiver on udp')
        time.sleep(1.0)  # a stimulus: samples flow through the pipeline before the signal
        executable.signal_burst((number,))
    finally:
        stop.set()
        sender.join(timeout=EXIT_TIMEOUT)
        executable.kill()

    assert executable.process.returncode == 0, executable.output()
    assert 'ERROR' not in executable.stderr(), executable.output()
    assert 'Traceback' not in executable.stderr(), executable.output()


@pytest.mark.slow
def test_sim_robot_runs_the_robot_its_option_names(tmp_path) -> None:
    """``sim_robot --robot tiago`` simulates TIAGo, even against ``-p robot:=yumi``."""
    executable = start('sim_robot', python_m(
        'pic_ros_tools.ros.sim_robot_node', '--robot', 'tiago', *ROS_ARGS, '-p', 'robot:=yumi',
    ), tmp_path)
    executable.wait_until_logged(r'sim_robot\]: \w+: following')

    executable.signal_burst((signal.SIGINT,))

    assert 'sim_robot]: tiago: following arm_controller/joint_trajectory' in executable.stderr()
    assert executable.process.returncode == 0, executable.output()


HIDE_MUJOCO = '''
import sys


class HideMujoco:
    """An import hook that makes mujoco look not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'mujoco':
            raise ModuleNotFoundError("No module named 'mujoco'", name='mujoco')
        return None


sys.meta_path.insert(0, HideMujoco())
sys.modules.pop('mujoco', None)
from pic_ros_tools.ros.sim_robot_node import main

main(['sim_robot', '--robot', 'yumi', *sys.argv[1:]])
'''


def test_sim_robot_without_mujoco_fails_in_one_line(tmp_path) -> None:
    """
    With mujoco missing, sim_robot says so in one line and exits 1 (its node could not start).

    No second traceback from destroying the half-built node (``'SimRobotNode' object has no
    attribute '_recorder'``), which rclpy's shutdown used to do.
    """
    completed = subprocess.run(
        [sys.executable, '-c', HIDE_MUJOCO, *ROS_ARGS], env=loopback_environment(), cwd=ROOT,
        capture_output=True, text=True, timeout=EXIT_TIMEOUT, check=False,
    )

    lines = [line for line in completed.stderr.splitlines() if line.strip()]
    assert completed.returncode == 1, completed.stderr
    assert len(lines) == 1, completed.stderr
    assert lines[0].startswith('sim_robot: the simulation needs the mujoco package')
    assert 'pip install mujoco' in lines[0]


@pytest.mark.parametrize(('argv', 'status', 'message'), [
    (python_m('pic_ros.ros.solver_node', '--robot', 'no_such_robot'), 1,
     "solver_node: no robot file for 'no_such_robot'"),
    (python_m('pic_ros.ros.trajectory_publisher_node', '--ros-args', '-p', 'rate:=abc'), 1,
     "trajectory_publisher: Trying to set parameter 'rate' to 'abc'"),
    (python_m('pic_ros', 'teleop', '--robot', 'no_such_robot'), 2,
     "python -m pic_ros teleop: no robot file for 'no_such_robot'"),
], ids=['bad-robot', 'bad-parameter-type', 'cli-command'])
def test_a_node_that_cannot_start_says_why_in_one_line(argv, status, message) -> None:
    """
    A robot or parameter the node refuses: one line, no traceback; status 1 for an executable.

    The ``python -m pic_ros`` commands keep their status 2 for an input error.
    """
    completed = subprocess.run(
        [*argv, *ROS_ARGS], env=loopback_environment(), cwd=ROOT, capture_output=True,
        text=True, timeout=EXIT_TIMEOUT, check=False,
    )

    said = [line for line in completed.stderr.splitlines() if line.strip() and line[0] != '[']
    assert completed.returncode == status, completed.stderr
    assert len(said) == 1 and said[0].startswith(message), completed.stderr  # besides ROS logs
    assert 'Traceback' not in completed.stderr
