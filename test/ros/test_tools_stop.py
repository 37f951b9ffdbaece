"""
The tools that start ROS processes leave none behind: stopped by a signal, or failing.

Each tool (``demo``, ``evaluate --live``, ``bench --stress``, ``bench --latency-only``) runs as a
process of its own in the run's domain, with a recording or stream far longer than the test.
Once all its processes are up -- its children counted in ``/proc``, a bounded wait -- its whole
process tree is recorded and it gets a stop signal (as ``timeout``, a CI runner or a closed
terminal send them), or one of its children is killed. It must exit with 128 + the signal's
number (1 for the failure, which it reports), and within a bounded wait none of the recorded
processes may still run. The wall clock only bounds the waits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from pic_ros_tools.ros.processes import loopback_environment
from process_tree import children, command_line, descendants, kill_left, wait_until_ended
import pytest

pytest.importorskip('rclpy')
pytest.importorskip('mujoco')

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]

START_TIMEOUT = 180.0
"""Longest wait for a tool's processes to be up [s] (a bound, never asserted)."""

EXIT_TIMEOUT = 120.0
"""Longest wait for a tool to exit, and then for its processes to be gone [s] (a bound)."""

PIPELINE = (
    'pic_ros_tools sim', 'skeleton_node', 'solver_node', 'trajectory_publisher',
    'pic_ros_tools replay',
)
"""What the demo and ``evaluate --live`` start (in their command lines): pipeline, then replay."""


class Tool:
    """A ``python -m pic_ros_tools`` command in a process of its own, its output in files."""

    def __init__(self, arguments: list[str], tmp_path: Path) -> None:
        self.stdout_path = tmp_path / 'stdout.txt'
        self.stderr_path = tmp_path / 'stderr.txt'
        self.tree: dict[int, int] = {}
        with self.stdout_path.open('wb') as out, self.stderr_path.open('wb') as err:
            self.process = subprocess.Popen(
                [sys.executable, '-m', 'pic_ros_tools', *arguments], cwd=tmp_path, stdout=out,
                stderr=err, env=loopback_environment(extra={'MUJOCO_GL': 'egl'}),
                start_new_session=True,
            )

    def output(self) -> str:
        """Return both streams, for failure messages."""
        out = self.stdout_path.read_text(errors='replace')
        return f'--- stdout\n{out[-3000:]}\n--- stderr\n{self.stderr()[-3000:]}'

    def stderr(self) -> str:
        """Return what the tool wrote to stderr."""
        return self.stderr_path.read_text(errors='replace')

    def wait_for_children(self, count: int, names: tuple[str, ...] = ()) -> dict[int, int]:
        """
        Wait (bounded) until the tool has ``count`` children running, then record its tree.

        A child counts once it runs its own program: each of ``names`` must be in the command
        line of one child (a child just forked still shows the tool's command line).

        :return: Every process below the tool, with its start time.
        """
        deadline = time.monotonic() + START_TIMEOUT
        while not self._children_up(count, names):
            if self.process.poll() is not None:
                pytest.fail(f'exited with {self.process.returncode} first:\n{self.output()}')
            if time.monotonic() > deadline:
                pytest.fail(
                    f'not {count} processes {names} after {START_TIMEOUT} s:\n{self.output()}'
                )
            time.sleep(0.1)
        self.tree = descendants(self.process.pid)
        return self.tree

    def _children_up(self, count: int, names: tuple[str, ...]) -> bool:
        """Return whether ``count`` children run, ``names`` each in one's command line."""
        pids = children(self.process.pid)
        lines = [command_line(pid) for pid in pids]
        return len(pids) >= count and all(any(name in line for line in lines) for name in names)

    def child(self, name: str) -> int:
        """Return the id of the tool's child whose command line names ``name``."""
        [pid] = [pid for pid in children(self.process.pid) if name in command_line(pid)]
        return pid

    def wait(self) -> int:
        """Wait (bounded) for the tool to exit; return its status."""
        try:
            return self.process.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f'still running {EXIT_TIMEOUT} s after the stop:\n{self.output()}')

    def close(self) -> None:
        """Kill what is left of the tool and of its tree (a failed test's clean-up)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=EXIT_TIMEOUT)
        kill_left(self.tree)


@pytest.fixture
def run_tool(tmp_path: Path) -> Iterator[Callable[..., Tool]]:
    """Return a starter of tools, called with their arguments; what is left is killed after."""
    started: list[Tool] = []

    def start(*arguments: str) -> Tool:
        tool = Tool(list(arguments), tmp_path)
        started.append(tool)
        return tool

    yield start
    for tool in started:
        tool.close()


def check_stopped_by(tool: Tool, number: int, tree: dict[int, int]) -> None:
    """Assert that the tool exited with 128 + ``number``, saying so, and that its tree is gone."""
    assert tool.wait() == 128 + number, tool.output()
    assert wait_until_ended(tree, EXIT_TIMEOUT) == [], tool.output()
    assert f'stopped by {signal.Signals(number).name}' in tool.stderr(), tool.output()
    assert 'Traceback' not in tool.stderr(), tool.output()


@pytest.mark.parametrize(
    'number', [signal.SIGTERM, signal.SIGINT, signal.SIGHUP],
    ids=lambda number: signal.Signals(number).name,
)
def test_a_stop_signal_to_the_demo_ends_its_five_processes(run_tool, tmp_path, number) -> None:
    """SIGTERM (``timeout``, CI), SIGINT (Ctrl-C), SIGHUP (a closed terminal) mid-replay."""
    tool = run_tool('demo', '--duration', '30', '--out', str(tmp_path / 'out'))
    tree = tool.wait_for_children(len(PIPELINE), PIPELINE)

    tool.process.send_signal(number)

    check_stopped_by(tool, number, tree)


def test_sigterm_to_evaluate_live_ends_its_five_processes(run_tool, tmp_path) -> None:
    """``evaluate --live`` stopped mid-replay: status 143, none of its processes left."""
    tool = run_tool(
        'evaluate', '--live', '--robot', 'baxter', '--duration', '30',
        '--logs', str(tmp_path / 'logs'),
    )
    tree = tool.wait_for_children(len(PIPELINE), PIPELINE)

    tool.process.send_signal(signal.SIGTERM)

    check_stopped_by(tool, signal.SIGTERM, tree)


def test_a_demo_whose_solver_node_dies_fails_at_once_and_ends_the_others(run_tool, tmp_path):
    """A child killed mid-replay: the demo says which, stops the rest and exits 1."""
    tool = run_tool('demo', '--duration', '30', '--out', str(tmp_path / 'out'))
    tree = tool.wait_for_children(len(PIPELINE), PIPELINE)

    os.kill(tool.child('solver_node'), signal.SIGKILL)

    assert tool.wait() == 1, tool.output()
    assert wait_until_ended(tree, EXIT_TIMEOUT) == [], tool.output()
    assert 'demo: solver_node exited early' in tool.stdout_path.read_text(), tool.output()


def test_sigterm_to_the_stress_bench_ends_teleop_and_the_cpu_hog(run_tool) -> None:
    """The stress bench mid-stream: its teleop process and its CPU hog end with it."""
    tool = run_tool(
        'bench', '--stress', '--stress-source', 'xsens_mvn', '--stress-seconds', '600'
    )
    # teleop, then the hog when the stream starts
    tree = tool.wait_for_children(2, ('pic_ros teleop', 'sched_getaffinity'))

    tool.process.send_signal(signal.SIGTERM)

    check_stopped_by(tool, signal.SIGTERM, tree)


def test_sigterm_to_the_latency_bench_ends_its_process(run_tool) -> None:
    """The latency bench mid-measurement: the process it measures ends with it."""
    tool = run_tool('bench', '--latency-only', '--latency-seconds', '600')
    tree = tool.wait_for_children(1, ('pic_ros_tools.ros.echo',))  # the floor first

    tool.process.send_signal(signal.SIGTERM)

    check_stopped_by(tool, signal.SIGTERM, tree)
