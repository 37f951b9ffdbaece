"""
Start and stop ROS 2 processes on loopback for tests, benchmarks and the demo.

Every process gets the run's ``ROS_DOMAIN_ID`` and ``ROS_AUTOMATIC_DISCOVERY_RANGE``
(:func:`domain_id`, :func:`discovery_range`): the ones exported in the environment when they are
set -- on a shared host the domain is the caller's reservation -- otherwise a domain of this run's
own and ``LOCALHOST`` (Fast DDS otherwise multicasts out of the machine's interfaces). It runs in
its own session so that it can be stopped, with its children, by its own process group id: SIGINT
first (the nodes shut down cleanly), SIGKILL after a bound.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

DOMAIN_VARIABLE = 'ROS_DOMAIN_ID'
"""Environment variable of the ROS domain."""

RANGE_VARIABLE = 'ROS_AUTOMATIC_DISCOVERY_RANGE'
"""Environment variable of the DDS discovery range."""

DEFAULT_DISCOVERY_RANGE = 'LOCALHOST'
"""Discovery range when none is exported: this machine only."""

MAX_DOMAIN_ID = 232
"""Largest domain id Fast DDS accepts (its ports must stay below 65536)."""


def domain_id(environment: Mapping[str, str] | None = None, seed: int | None = None) -> int:
    """
    Return the ROS domain id of this run: the exported one if any, else one of its own.

    An exported ``ROS_DOMAIN_ID`` is honoured as it is (on a shared host it is what the user
    reserved), for every process and test of the run; only when none is exported is an id
    chosen, from the process id (:func:`free_domain_id`).

    :param environment: Where to look (default: this process's environment).
    :param seed: Number the chosen id is derived from (default: this process id).
    :return: The domain id.
    :raises ValueError: If the exported value is not an integer in 0..232.
    """
    text = (os.environ if environment is None else environment).get(DOMAIN_VARIABLE, '').strip()
    if not text:
        return free_domain_id(seed)
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_DOMAIN_ID:
        raise ValueError(
            f'{DOMAIN_VARIABLE}={text!r} is not a domain id (an integer in 0..{MAX_DOMAIN_ID})'
        )
    return value


def discovery_range(environment: Mapping[str, str] | None = None) -> str:
    """
    Return the DDS discovery range of this run: the exported one if any, else ``LOCALHOST``.

    :param environment: Where to look (default: this process's environment).
    :return: E.g. ``LOCALHOST``, ``SUBNET``, ``OFF``, ``SYSTEM_DEFAULT``.
    """
    text = (os.environ if environment is None else environment).get(RANGE_VARIABLE, '').strip()
    return text or DEFAULT_DISCOVERY_RANGE


def loopback_environment(
    domain: int | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """
    Return the environment of a child process of this run, in its domain and discovery range.

    :param domain: ROS domain id (default: :func:`domain_id`; 0..101 or 215..232 are safe with
        Fast DDS ports).
    :param extra: More variables to set.
    :return: A copy of this process's environment with the ROS variables set.
    """
    environment = dict(os.environ)
    environment[RANGE_VARIABLE] = discovery_range(environment)
    environment[DOMAIN_VARIABLE] = str(domain_id(environment) if domain is None else domain)
    environment.pop('ROS_LOCALHOST_ONLY', None)
    environment.setdefault('PYTHONUNBUFFERED', '1')
    environment.update(extra or {})
    return environment


def use_run_domain() -> int:
    """
    Put this run's domain and discovery range into this process's environment.

    For contexts made in this process after the call (``rclpy.init`` reads the variables) and for
    every child started with a copy of the environment.

    :return: The domain id (:func:`domain_id`).
    """
    domain = domain_id()
    os.environ[RANGE_VARIABLE] = discovery_range()
    os.environ[DOMAIN_VARIABLE] = str(domain)
    return domain


def free_domain_id(seed: int | None = None) -> int:
    """
    Choose a ROS domain id for a run that was given none.

    :param seed: Number to derive it from (default: this process id).
    :return: An id in 1..100.
    """
    value = os.getpid() if seed is None else seed
    return 1 + value % 100


def _default_interrupt() -> None:
    """
    Give a child the default SIGINT action (run in the child before it executes).

    A program started in the background by a shell without job control (``cmd &`` in a script,
    ``nohup``) inherits SIGINT *ignored*, and so would its children. rclpy nodes install their
    own handler, but ``ros2 launch`` keeps the ignored disposition: it then never hears the
    SIGINT that :meth:`ManagedProcess.stop` sends, while its nodes end, and reports them as
    crashed (what a CI script started with ``&`` saw).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
            preexec_fn=_default_interrupt,
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
