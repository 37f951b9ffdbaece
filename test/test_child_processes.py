"""
The processes a tool starts never outlive it: stop signals, failures, a parent killed outright.

The mechanism of :mod:`pic_ros_tools.ros.processes` (which imports no rclpy) with plain ``sleep``
children: a small tool runs in a process of its own under
:func:`~pic_ros_tools.ros.processes.run_stopping_children`, starts a ``sleep`` and a shell that
starts two more (grandchildren in the child's process group), prints its children's ids and waits.
Its process tree is read from ``/proc`` before it is signalled; after it has exited (a bounded
wait) none of those processes may run. The wall clock only bounds the waits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from pic_ros_tools.ros import processes
from pic_ros_tools.ros.processes import (
    ChildSupervision,
    ManagedProcess,
    stop_every_child,
    STOP_SIGNALS,
    StopRequested,
)
from process_tree import descendants, kill_left, running, wait_until_ended
import pytest

ROOT = Path(__file__).resolve().parents[1]

WAIT = 60.0
"""Longest wait for anything (a child up, a process ended) [s]: a bound, never asserted."""

TOOL = """
import os
import signal
import sys
import time

from pic_ros_tools.ros.processes import ManagedProcess, run_stopping_children

ACTION = sys.argv[1]


def tool():
    environment = dict(os.environ)
    started = [
        ManagedProcess(['sleep', '1000'], environment),
        ManagedProcess(['sh', '-c', 'sleep 1000 | sleep 1000'], environment),
    ]
    if ACTION == 'stubborn':  # a child that ignores SIGINT: killed after the bound
        started.append(ManagedProcess(
            [sys.executable, '-c', 'import signal, time; signal.signal(signal.SIGINT, '
             'signal.SIG_IGN); print("ignoring", flush=True); time.sleep(1000)'],
            environment,
        ))
    print(' '.join(str(process.pid) for process in started), flush=True)
    if ACTION == 'fail':
        sys.stdin.readline()  # the test has read the process tree
        raise RuntimeError('the tool failed on its own')
    if ACTION == 'return':
        sys.stdin.readline()
        return 3
    time.sleep(1000)
    return 0


sys.exit(run_stopping_children(tool, 'tool', timeout=float(sys.argv[2])))
"""
"""A tool: starts its children, says their ids, then waits, fails or returns as told."""


def ignores_sigint(pid: int) -> bool:
    """Return whether a process ignores SIGINT (its ``SigIgn`` mask in ``/proc``)."""
    try:
        status = Path(f'/proc/{pid}/status').read_text()
    except FileNotFoundError:
        return False
    [mask] = [line.split()[1] for line in status.splitlines() if line.startswith('SigIgn:')]
    return bool(int(mask, 16) >> (signal.SIGINT - 1) & 1)


class Tool:
    """The tool above in a process of its own; its stderr in a file."""

    def __init__(self, tmp_path: Path, action: str, timeout: float = 10.0) -> None:
        self.stderr_path = tmp_path / 'stderr.txt'
        with self.stderr_path.open('wb') as err:
            self.process = subprocess.Popen(
                [sys.executable, '-c', TOOL, action, str(timeout)], cwd=ROOT,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
            )
        assert self.process.stdout is not None
        self.children = [int(pid) for pid in self.process.stdout.readline().split()]
        self.tree: dict[int, int] = {}

    def record_tree(self, expected: int) -> dict[int, int]:
        """Wait (bounded) until the tool's tree has ``expected`` processes and record it."""
        deadline = time.monotonic() + WAIT
        while len(running(descendants(self.process.pid))) < expected:
            if time.monotonic() > deadline or self.process.poll() is not None:
                pytest.fail(f'the tool did not start its processes:\n{self.stderr()}')
            time.sleep(0.02)
        self.tree = descendants(self.process.pid)
        return self.tree

    def wait(self) -> int:
        """Wait (bounded) for the tool to exit; return its status."""
        try:
            return self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=WAIT)
            pytest.fail(f'the tool did not exit within {WAIT} s:\n{self.stderr()}')

    def stderr(self) -> str:
        """Return what the tool wrote to stderr."""
        return self.stderr_path.read_text(errors='replace')

    def close(self) -> None:
        """Kill what is left of the tool and its tree (a failed test's clean-up)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=WAIT)
        kill_left(self.tree)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def make_tool(tmp_path: Path) -> Iterator[Callable[..., Tool]]:
    """Return a starter of tools; what is left of them is killed after the test."""
    started: list[Tool] = []

    def start(action: str, timeout: float = 10.0) -> Tool:
        tool = Tool(tmp_path, action, timeout)
        started.append(tool)
        return tool

    yield start
    for tool in started:
        tool.close()


@pytest.mark.parametrize('number', STOP_SIGNALS, ids=lambda number: signal.Signals(number).name)
def test_a_stop_signal_ends_every_child_and_grandchild_then_the_tool_with_128_plus_n(
    make_tool, number
) -> None:
    """SIGINT, SIGTERM, SIGHUP: every process of the tree ends; status 130, 143, 129."""
    tool = make_tool('wait')
    tree = tool.record_tree(expected=4)  # sleep, sh and the two sleeps of sh

    os.kill(tool.process.pid, number)

    assert tool.wait() == 128 + number, tool.stderr()
    assert wait_until_ended(tree, WAIT) == []
    assert f'stopped by {signal.Signals(number).name}' in tool.stderr()
    assert 'Traceback' not in tool.stderr()


def test_a_tool_that_fails_stops_its_children_and_exits_with_its_error(make_tool) -> None:
    """An exception of the tool's own: its processes end, then the traceback and status 1."""
    tool = make_tool('fail')
    tree = tool.record_tree(expected=4)
    tool.process.stdin.write('go\n')
    tool.process.stdin.flush()

    assert tool.wait() == 1
    assert wait_until_ended(tree, WAIT) == []
    assert 'RuntimeError: the tool failed on its own' in tool.stderr()


def test_a_tool_that_returns_leaves_no_child_running_and_keeps_its_status(make_tool) -> None:
    """Children the tool did not stop itself are stopped when it returns; its status stays."""
    tool = make_tool('return')
    tree = tool.record_tree(expected=4)
    tool.process.stdin.write('go\n')
    tool.process.stdin.flush()

    assert tool.wait() == 3, tool.stderr()
    assert wait_until_ended(tree, WAIT) == []


def test_a_child_that_ignores_sigint_is_killed_and_a_burst_of_signals_does_not_cut_the_stop(
    make_tool,
) -> None:
    """
    SIGTERM after SIGTERM while the tool waits for a child that ignores SIGINT.

    The signals after the first are recorded, not raised: the clean-up runs to its end (SIGKILL
    after its bound) and the tool exits with the first signal's status -- or, when one more comes
    after the clean-up, once the previous (default) handler is back, ends by that signal, which
    a shell reports as the same 143.
    """
    tool = make_tool('stubborn', timeout=1.0)
    tree = tool.record_tree(expected=5)
    stubborn = tool.children[-1]
    assert processes.wait_until(lambda: ignores_sigint(stubborn), WAIT), tool.stderr()

    sent = 0
    while tool.process.poll() is None and sent < 500:
        os.kill(tool.process.pid, signal.SIGTERM)
        sent += 1
        time.sleep(0.01)

    assert tool.wait() in (128 + signal.SIGTERM, -signal.SIGTERM), tool.stderr()
    assert tool.stderr().count('stopped by SIGTERM') == 1
    assert sent > 1
    assert wait_until_ended(tree, WAIT) == []
    assert 'Traceback' not in tool.stderr()


@pytest.mark.skipif(processes._PRCTL is None, reason='the parent-death signal is Linux prctl')
def test_the_children_of_a_tool_killed_outright_end_with_it(make_tool) -> None:
    """SIGKILL leaves the tool no clean-up: its direct children end on the parent-death signal."""
    tool = make_tool('wait')
    tool.record_tree(expected=4)
    direct = {pid: start for pid, start in tool.tree.items() if pid in tool.children}
    assert len(direct) == 2

    tool.process.kill()
    tool.process.wait(timeout=WAIT)

    assert wait_until_ended(direct, WAIT) == []


def test_a_stubborn_child_is_killed_after_the_bound_and_stops_only_once(tmp_path) -> None:
    """SIGINT ignored: SIGKILL after the bound (status -9); stopping it again changes nothing."""
    log = tmp_path / 'child.log'
    child = ManagedProcess(
        [sys.executable, '-c', 'import signal, time; signal.signal(signal.SIGINT, '
         'signal.SIG_IGN); print("ignoring", flush=True); time.sleep(1000)'],
        dict(os.environ), log,
    )
    try:
        assert processes.wait_until(lambda: ignores_sigint(child.pid), WAIT)
        assert child.stop(timeout=0.5) == -signal.SIGKILL
        assert not child.alive()
        assert child.stop() == -signal.SIGKILL
        assert child not in processes._CHILDREN.running()
    finally:
        child.process.kill()
        child.process.wait(timeout=WAIT)


def test_a_stop_signal_in_a_supervised_block_raises_and_stops_the_children() -> None:
    """In this process: SIGTERM raises StopRequested (143), the child ends, the handler is back."""
    before = signal.getsignal(signal.SIGTERM)
    child = None
    with pytest.raises(StopRequested) as stopped:
        with ChildSupervision(timeout=10.0):
            child = ManagedProcess(['sleep', '1000'], dict(os.environ))
            os.kill(os.getpid(), signal.SIGTERM)
            processes.wait_until(lambda: False, WAIT)  # the handler raises in here

    assert stopped.value.exit_status == 143
    assert child is not None and not child.alive()
    assert signal.getsignal(signal.SIGTERM) is before


def test_the_stop_is_announced_while_a_further_signal_is_still_only_recorded() -> None:
    """
    The stop line is written before the default handlers are back: a signal then cannot cut it.

    ``on_stop`` sends this process one more SIGTERM; under the supervision's handler it is
    recorded (the default would end the test run).
    """
    announced: list[int] = []

    def on_stop(number: int) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        assert processes.wait_until(lambda: len(supervision.received) == 2, WAIT)
        announced.append(number)

    with pytest.raises(StopRequested) as stopped:
        with ChildSupervision(timeout=10.0, on_stop=on_stop) as supervision:
            os.kill(os.getpid(), signal.SIGINT)
            processes.wait_until(lambda: False, WAIT)  # the handler raises in here

    assert announced == [signal.SIGINT]
    assert supervision.received == [signal.SIGINT, signal.SIGTERM]
    assert stopped.value.exit_status == 130


def test_a_signal_while_a_child_starts_is_raised_once_it_is_recorded() -> None:
    """Held back while deferred (the child is being started and listed), raised right after."""
    with pytest.raises(StopRequested) as stopped:
        with ChildSupervision(timeout=10.0) as supervision:
            supervision.defer(True)
            os.kill(os.getpid(), signal.SIGHUP)
            assert processes.wait_until(lambda: supervision.received, WAIT)
            supervision.defer(False)
            pytest.fail('defer(False) did not raise the signal held back')

    assert stopped.value.exit_status == 129


def test_stop_every_child_stops_what_is_listed_and_empties_the_list() -> None:
    """The list of running children is the one every stop reads; stopped ones leave it."""
    started = [ManagedProcess(['sleep', '1000'], dict(os.environ)) for _ in range(3)]
    try:
        assert all(process in processes._CHILDREN.running() for process in started)

        stop_every_child(timeout=10.0)

        assert not any(process.alive() for process in started)
        assert not any(process in processes._CHILDREN.running() for process in started)
    finally:
        for process in started:
            process.process.kill()
            process.process.wait(timeout=WAIT)


def test_a_supervision_stops_only_the_children_started_under_it() -> None:
    """A process started before (a fixture around an in-process call) is not its to stop."""
    earlier = ManagedProcess(['sleep', '1000'], dict(os.environ))
    try:
        with ChildSupervision(timeout=10.0):
            later = ManagedProcess(['sleep', '1000'], dict(os.environ))

        assert not later.alive()
        assert earlier.alive()
    finally:
        earlier.stop(timeout=10.0)
