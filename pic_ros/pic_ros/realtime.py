"""
Real-time scheduling of a process's threads (``realtime_priority``).

On a robot PC the teleoperation shares the cores with perception, logging and whatever else
runs. Under Linux's default time-sharing policy a busy neighbour delays the nodes' timers, the
hand-over of a frame between threads and the receipt of DDS messages by tens of milliseconds,
now and then by far more; a trajectory that reaches its controller after its plan's start is
joined there rather than continued. ros2_control's controller manager asks for ``SCHED_FIFO``
(priority 50 by default, its ``thread_priority``) for the same reason.

:func:`use_fifo` puts every thread of the calling process under ``SCHED_FIFO`` at a priority
(threads it starts later inherit it from the thread that starts them). A thread already at that
priority or higher keeps its own. Nothing here raises for a refusal: without the right (root,
``CAP_SYS_NICE`` or an ``rtprio`` limit, e.g. ``@realtime - rtprio 98`` in
``/etc/security/limits.conf``) the process keeps the default policy and the result says why.
Linux only (``os.sched_setscheduler``); elsewhere the result is :attr:`SchedulingOutcome.
UNSUPPORTED`.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
import os
from pathlib import Path
from typing import Final

from pic_ros.schema import ParameterDef

HIGHEST_PRIORITY: Final = 98
"""The highest priority asked for: 99 is left to the kernel's own watchdog threads."""

REALTIME_PRIORITY: Final = ParameterDef(
    'realtime_priority', 0,
    "SCHED_FIFO priority of every thread of the node's process, so that busy neighbours do not "
    "delay it (0: the default scheduling; ros2_control's controller manager asks for 50); needs "
    'root, CAP_SYS_NICE or an rtprio limit, else a warning and the default scheduling',
    low=0, high=HIGHEST_PRIORITY, read_only=True,
)
"""Every pipeline node's ``realtime_priority`` (:func:`use_fifo`)."""

TASKS: Final = Path('/proc/self/task')
"""Where Linux lists the threads of the calling process (one directory per thread id)."""


class SchedulingOutcome(enum.Enum):
    """What :func:`use_fifo` did."""

    OFF = 'off'
    """Priority 0: the default policy, nothing asked."""

    APPLIED = 'applied'
    """Every thread found runs under ``SCHED_FIFO`` at the priority or higher."""

    REFUSED = 'refused'
    """The kernel refused (no right to real-time scheduling): the default policy stays."""

    UNSUPPORTED = 'unsupported'
    """No ``SCHED_FIFO`` on this platform (not Linux)."""


@dataclass(frozen=True)
class Scheduling:
    """
    The scheduling of a process after :func:`use_fifo`.

    :param outcome: What was done.
    :param priority: The priority asked for (0: none).
    :param threads: Threads running under ``SCHED_FIFO`` at that priority or higher.
    :param reason: Why it was refused or unsupported (empty otherwise).
    """

    outcome: SchedulingOutcome
    priority: int
    threads: int = 0
    reason: str = ''

    def describe(self) -> str:
        """
        Say it in one line, for a node's log.

        :return: E.g. ``SCHED_FIFO priority 50 on 12 threads``.
        """
        if self.outcome is SchedulingOutcome.OFF:
            return 'default scheduling (realtime_priority 0)'
        if self.outcome is SchedulingOutcome.APPLIED:
            return f'SCHED_FIFO priority {self.priority} on {self.threads} threads'
        return f'realtime_priority {self.priority} not applied: {self.reason}; default scheduling'


def check_priority(priority: object) -> int:
    """
    Check a ``realtime_priority`` value (:data:`REALTIME_PRIORITY`'s rule).

    :param priority: The value: an integer in [0, :data:`HIGHEST_PRIORITY`].
    :return: It, as an int.
    :raises ConfigError: If it is not such an integer.
    """
    return int(REALTIME_PRIORITY.check(priority))


def _thread_ids(tasks: Path) -> list[int]:
    """Return the ids of the process's threads (the calling thread's alone if not listed)."""
    try:
        ids = sorted(int(entry.name) for entry in tasks.iterdir() if entry.name.isdigit())
    except OSError:
        ids = []
    return ids or [0]  # 0: the calling thread


def _at_least(thread: int, priority: int) -> bool:
    """Whether a thread already runs under ``SCHED_FIFO`` at ``priority`` or higher."""
    return (
        os.sched_getscheduler(thread) == os.SCHED_FIFO
        and os.sched_getparam(thread).sched_priority >= priority
    )


def use_fifo(priority: int, tasks: Path = TASKS) -> Scheduling:
    """
    Run every thread of this process under ``SCHED_FIFO`` at ``priority`` (module docstring).

    :param priority: 1 to :data:`HIGHEST_PRIORITY`; 0 leaves the scheduling as it is.
    :param tasks: The directory listing the process's threads (Linux's, by default).
    :return: What was done; a refusal keeps the default policy and says why.
    :raises ConfigError: If ``priority`` is not a valid ``realtime_priority``.
    """
    check_priority(priority)
    if priority == 0:
        return Scheduling(SchedulingOutcome.OFF, 0)
    if not hasattr(os, 'sched_setscheduler') or not hasattr(os, 'SCHED_FIFO'):
        return Scheduling(
            SchedulingOutcome.UNSUPPORTED, priority, reason='no SCHED_FIFO on this platform'
        )
    threads = 0
    for thread in _thread_ids(tasks):
        try:
            if not _at_least(thread, priority):
                os.sched_setscheduler(thread, os.SCHED_FIFO, os.sched_param(priority))
        except ProcessLookupError:
            continue  # the thread ended meanwhile
        except PermissionError:
            return Scheduling(
                SchedulingOutcome.REFUSED, priority, threads,
                'no right to real-time scheduling (give the user an rtprio limit, e.g. '
                "'@realtime - rtprio 98' in /etc/security/limits.conf, or CAP_SYS_NICE)",
            )
        except OSError as error:
            return Scheduling(SchedulingOutcome.REFUSED, priority, threads, str(error))
        threads += 1
    return Scheduling(SchedulingOutcome.APPLIED, priority, threads)


__all__ = [
    'check_priority', 'HIGHEST_PRIORITY', 'REALTIME_PRIORITY', 'Scheduling', 'SchedulingOutcome',
    'use_fifo',
]
