"""
Start and stop ROS 2 processes on loopback for tests, benchmarks and the demo.

Every process gets ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (Fast DDS otherwise multicasts out
of the machine's interfaces) and the caller's private ``ROS_DOMAIN_ID``; it runs in its own
session so that it can be stopped, with its children, by its own process group id: SIGINT first
(the nodes shut down cleanly), SIGKILL after a bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import os
from pathlib import Path
import signal
import subprocess
import sys
import time


def loopback_environment(domain_id: int, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """
    Return the environment of a process that talks DDS on loopback only.

    :param domain_id: Private ROS domain id (0..101 or 215..232 are safe with Fast DDS ports).
    :param extra: More variables to set.
    :return: A copy of this process's environment with the ROS variables set.
    """
    environment = dict(os.environ)
    environment['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    environment['ROS_DOMAIN_ID'] = str(domain_id)
    environment.pop('ROS_LOCALHOST_ONLY', None)
    environment.setdefault('PYTHONUNBUFFERED', '1')
    environment.update(extra or {})
    return environment


def free_domain_id(seed: int | None = None) -> int:
    """
    Pick a ROS domain id for one test or benchmark run.

    :param seed: Number to derive it from (default: this process id).
    :return: An id in 1..100.
    """
    value = os.getpid() if seed is None else seed
    return 1 + value % 100


class ManagedProcess:
    """
    A child process in its own session, stopped by its process group id.

    :param argv: Command line.
    :param environment: Its environment (see :func:`loopback_environment`).
    :param log_path: File receiving its stdout and stderr (default: discarded).
    :param cwd: Working directory.
    """

    def __init__(
        self,
        argv: Sequence[str],
        environment: Mapping[str, str],
        log_path: Path | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.argv = list(argv)
        self.log_path = log_path
        self._log = open(log_path, 'wb') if log_path is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(
            self.argv,
            env=dict(environment),
            cwd=cwd,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        """Return the process id (also its process group id)."""
        return self.process.pid

    def alive(self) -> bool:
        """Return whether the process is still running."""
        return self.process.poll() is None

    def stop(self, timeout: float = 5.0) -> int:
        """
        Stop the process group: SIGINT, then SIGKILL after ``timeout``.

        :param timeout: Seconds to wait after SIGINT [s].
        :return: The exit status (negative for a signal).
        """
        if self.alive():
            try:
                os.killpg(self.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=timeout)
        if self._log is not subprocess.DEVNULL:
            self._log.close()
        return int(self.process.returncode)

    def __enter__(self) -> ManagedProcess:
        """Return the process (started at construction)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the process."""
        self.stop()


def python_module(module: str, *args: str) -> list[str]:
    """
    Return the command line running a module with this interpreter.

    :param module: Module name, e.g. ``pic_ros``.
    :param args: Its arguments.
    :return: ``[sys.executable, '-m', module, *args]``.
    """
    return [sys.executable, '-m', module, *args]


def wait_until(predicate: Callable[[], object], timeout: float, period: float = 0.05) -> bool:
    """
    Poll a condition until it holds or a deadline passes.

    :param predicate: A callable returning a truthy value when done.
    :param timeout: Longest wait [s].
    :param period: Poll period [s].
    :return: Whether the condition held in time.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return bool(predicate())
