"""Real-time scheduling of a process's threads (``realtime_priority``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

from pic_ros import realtime
from pic_ros.exceptions import ConfigError
from pic_ros.realtime import check_priority, SchedulingOutcome, use_fifo
import pytest

linux_only = pytest.mark.skipif(
    not hasattr(os, 'sched_setscheduler'), reason='SCHED_FIFO is Linux only'
)


class FakeKernel:
    """The scheduler calls of ``os``, recorded: per thread id, its policy and priority."""

    def __init__(self, threads: dict[int, tuple[int, int]], refuse: type | None = None,
                 ended: frozenset[int] = frozenset()) -> None:
        self.threads = dict(threads)
        self.refuse = refuse
        self.ended = ended
        self.set_calls: list[tuple[int, int, int]] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(os, 'sched_getscheduler', self.getscheduler)
        monkeypatch.setattr(os, 'sched_getparam', self.getparam)
        monkeypatch.setattr(os, 'sched_setscheduler', self.setscheduler)

    def getscheduler(self, thread: int) -> int:
        if thread in self.ended:
            raise ProcessLookupError(thread)
        return self.threads[thread][0]

    def getparam(self, thread: int) -> Any:
        return SimpleNamespace(sched_priority=self.threads[thread][1])

    def setscheduler(self, thread: int, policy: int, param: Any) -> None:
        if self.refuse is not None:
            raise self.refuse('Operation not permitted')
        self.set_calls.append((thread, policy, param.sched_priority))
        self.threads[thread] = (policy, param.sched_priority)


def _tasks(tmp_path: Path, *ids: int) -> Path:
    for thread in ids:
        (tmp_path / str(thread)).mkdir()
    return tmp_path


@pytest.mark.parametrize('priority', [-1, 99, 1.5, True, '50', None])
def test_a_priority_outside_0_to_98_or_not_an_integer_is_refused(priority: object) -> None:
    """Only integers from 0 (default scheduling) to 98 are priorities."""
    with pytest.raises(ConfigError, match='realtime_priority'):
        check_priority(priority)


def test_priority_zero_leaves_the_scheduling_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """0 asks nothing of the kernel."""
    def fail(*_args: object) -> None:
        raise AssertionError('the scheduler was called')

    monkeypatch.setattr(os, 'sched_setscheduler', fail, raising=False)
    result = use_fifo(0)
    assert result.outcome is SchedulingOutcome.OFF
    assert 'default scheduling' in result.describe()


@linux_only
def test_every_thread_of_the_process_is_put_under_fifo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each listed thread gets SCHED_FIFO at the priority; the count says how many run so."""
    kernel = FakeKernel({101: (os.SCHED_OTHER, 0), 102: (os.SCHED_OTHER, 0)})
    kernel.install(monkeypatch)
    result = use_fifo(50, _tasks(tmp_path, 101, 102))
    assert result.outcome is SchedulingOutcome.APPLIED and result.threads == 2
    assert kernel.set_calls == [(101, os.SCHED_FIFO, 50), (102, os.SCHED_FIFO, 50)]
    assert result.describe() == 'SCHED_FIFO priority 50 on 2 threads'


@linux_only
def test_a_thread_already_at_a_higher_priority_keeps_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Asking twice (two nodes of one process) never lowers a thread."""
    kernel = FakeKernel({101: (os.SCHED_FIFO, 60), 102: (os.SCHED_OTHER, 0)})
    kernel.install(monkeypatch)
    result = use_fifo(50, _tasks(tmp_path, 101, 102))
    assert result.outcome is SchedulingOutcome.APPLIED and result.threads == 2
    assert kernel.set_calls == [(102, os.SCHED_FIFO, 50)]
    assert kernel.threads[101] == (os.SCHED_FIFO, 60)


@linux_only
def test_a_refusal_keeps_the_default_policy_and_says_how_to_allow_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without the right to real-time scheduling nothing is raised: the reason is returned."""
    kernel = FakeKernel({101: (os.SCHED_OTHER, 0)}, refuse=PermissionError)
    kernel.install(monkeypatch)
    result = use_fifo(50, _tasks(tmp_path, 101))
    assert result.outcome is SchedulingOutcome.REFUSED and result.threads == 0
    assert 'rtprio' in result.reason and 'default scheduling' in result.describe()
    assert kernel.threads[101] == (os.SCHED_OTHER, 0)


@linux_only
def test_a_thread_that_ended_meanwhile_is_passed_over(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A thread listed but gone when it is set is not counted and fails nothing."""
    kernel = FakeKernel({101: (os.SCHED_OTHER, 0)}, ended=frozenset({102}))
    kernel.install(monkeypatch)
    result = use_fifo(20, _tasks(tmp_path, 101, 102))
    assert result.outcome is SchedulingOutcome.APPLIED and result.threads == 1


def test_without_sched_fifo_the_platform_is_said_unsupported(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a platform without SCHED_FIFO the result says so."""
    monkeypatch.delattr(os, 'sched_setscheduler', raising=False)
    result = use_fifo(50)
    assert result.outcome is SchedulingOutcome.UNSUPPORTED
    assert realtime.HIGHEST_PRIORITY == 98


_CHILD = """
import json, os, threading
from pic_ros.realtime import use_fifo
result = use_fifo(1)
policies = {}
def record():
    policies['later'] = os.sched_getscheduler(0)
later = threading.Thread(target=record)  # started after: inherits the main thread's
later.start()
later.join(10.0)
def policy(tid):
    try:
        return os.sched_getscheduler(tid)
    except ProcessLookupError:  # a thread that has just ended (the one above)
        return None
found = (policy(int(tid)) for tid in os.listdir('/proc/self/task'))
policies['threads'] = sorted(value for value in found if value is not None)
print(json.dumps({'outcome': result.outcome.value, 'count': result.threads, **policies}))
"""


@linux_only
def test_the_kernel_applies_it_to_every_thread_or_refuses_it_cleanly() -> None:
    """
    In a child process: every thread, and one started afterwards, runs under SCHED_FIFO.

    Where the user has no right to it (no rtprio limit, not root), the child reports the refusal
    and every thread keeps the default policy.
    """
    done = subprocess.run(
        [sys.executable, '-c', _CHILD], capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report['outcome'] == 'applied':
        assert report['count'] >= 1
        assert set(report['threads']) == {os.SCHED_FIFO}
        assert report['later'] == os.SCHED_FIFO
    else:
        assert report['outcome'] == 'refused'
        assert os.SCHED_FIFO not in report['threads'] and report['later'] != os.SCHED_FIFO
