"""
The processes a process started, read from ``/proc`` (Linux), to check that none outlives it.

A process is named by its id and its start time (clock ticks since boot), so that an id the
kernel gives again to a new process is not mistaken for the recorded one; a zombie (ended, not
yet reaped) counts as ended.
"""

from __future__ import annotations

from collections.abc import Mapping
import os
from pathlib import Path
import signal
import sys
import time

import pytest

PROC = Path('/proc')

if not sys.platform.startswith('linux') or not (PROC / 'self' / 'stat').exists():
    pytest.skip('reading process trees needs Linux /proc', allow_module_level=True)


def _stat(pid: int) -> list[str] | None:
    """Return the fields of ``/proc/PID/stat`` after the command name, None if it is gone."""
    try:
        text = (PROC / str(pid) / 'stat').read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return text[text.rindex(')') + 2:].split()


def _parents() -> dict[int, int]:
    """Return the parent of every running process."""
    parents = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                parents[int(entry.name)] = int(fields[1])
    return parents


def children(pid: int) -> list[int]:
    """Return the processes whose parent is ``pid``, running (not zombies)."""
    return [child for child, parent in _parents().items() if parent == pid and alive(child)]


def descendants(pid: int) -> dict[int, int]:
    """
    Return every process below ``pid`` (children, their children, ...), with its start time.

    :param pid: The root (not included).
    :return: Process id -> start time [clock ticks since boot].
    """
    parents = _parents()
    found: dict[int, int] = {}
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in found:
                fields = _stat(child)
                if fields is not None:
                    found[child] = int(fields[19])
                    frontier.append(child)
    return found


def alive(pid: int, start: int | None = None) -> bool:
    """
    Return whether a process runs (zombies do not); with ``start``, whether it is that one.

    :param pid: Process id.
    :param start: Its recorded start time (:func:`descendants`), if any.
    """
    fields = _stat(pid)
    if fields is None or fields[0] in ('Z', 'X', 'x'):
        return False
    return start is None or int(fields[19]) == start


def running(recorded: Mapping[int, int]) -> list[int]:
    """Return the recorded processes (:func:`descendants`) that still run."""
    return [pid for pid, start in recorded.items() if alive(pid, start)]


def command_line(pid: int) -> str:
    """Return a process's command line, spaces between the arguments ('' if it is gone)."""
    try:
        raw = (PROC / str(pid) / 'cmdline').read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return ''
    return raw.replace(b'\0', b' ').decode(errors='replace').strip()


def wait_until_ended(recorded: Mapping[int, int], seconds: float) -> list[int]:
    """
    Wait (bounded) until none of the recorded processes runs.

    :param recorded: From :func:`descendants`.
    :param seconds: Longest wait [s] (a bound, not a figure).
    :return: Those still running when the wait ended (empty: all ended).
    """
    deadline = time.monotonic() + seconds
    while running(recorded) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running(recorded)


def kill_left(recorded: Mapping[int, int]) -> None:
    """Kill the recorded processes that still run (a failed test's clean-up), by their ids."""
    for pid in running(recorded):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
