"""
Start and stop ROS 2 processes on loopback for tests, benchmarks and the demo.

Every process gets the run's ``ROS_DOMAIN_ID`` and ``ROS_AUTOMATIC_DISCOVERY_RANGE``
(:func:`domain_id`, :func:`discovery_range`): the ones exported in the environment when they are
set -- on a shared host the domain is the caller's reservation -- otherwise a domain of this run's
own and ``LOCALHOST`` (Fast DDS otherwise multicasts out of the machine's interfaces). It runs in
its own session so that it can be stopped, with its children, by its own process group id: SIGINT
first (the nodes shut down cleanly), SIGKILL after a bound.

How nothing a tool starts outlives it (the demo, ``evaluate --live``, the benchmarks):

- **Signals and failures.** The tool runs inside :func:`run_stopping_children`
  (:class:`ChildSupervision`): SIGINT, SIGTERM and SIGHUP become a :class:`StopRequested`
  exception in the main thread, which unwinds through the tool's ``finally`` blocks like any
  failure of its own; on the way out every :class:`ManagedProcess` it started that still runs
  is stopped, the latest first, and the tool exits with 128 + the signal's number (or its own
  status, or its exception's). Signals after the first are recorded, not raised, so the
  clean-up they would interrupt runs to its end; it is bounded (:data:`STOP_TIMEOUT`, then
  SIGKILL).
- **Process groups.** A child leads a session and a process group of its own, so a terminal's
  SIGINT reaches only the tool, which then stops each child's whole group: the child and
  anything it started.
- **A parent that dies anyway** (SIGKILL, a crash of the interpreter). On Linux each child asks
  the kernel for SIGTERM when its parent dies (``prctl(PR_SET_PDEATHSIG)``, set between fork and
  exec); the node executables stop cleanly on SIGTERM. This was chosen over a child watching its
  parent because it needs nothing in the children (the CPU hog is a bare ``python -c``) and
  cannot miss the moment. Its limits: the kernel sends it when the *thread* that started the
  child ends, so processes are started from the thread that outlives them (the main thread in
  every tool); it reaches the child only, not the child's own children (the executables start
  none); elsewhere than Linux there is no such net.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import ctypes
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time
from types import FrameType, TracebackType
from typing import Any

DOMAIN_VARIABLE = 'ROS_DOMAIN_ID'
"""Environment variable of the ROS domain."""

RANGE_VARIABLE = 'ROS_AUTOMATIC_DISCOVERY_RANGE'
"""Environment variable of the DDS discovery range."""

DEFAULT_DISCOVERY_RANGE = 'LOCALHOST'
"""Discovery range when none is exported: this machine only."""

MAX_DOMAIN_ID = 232
"""Largest domain id Fast DDS accepts (its ports must stay below 65536)."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a tool and every process it started."""

STOP_TIMEOUT = 10.0
"""Longest wait for stopped processes to exit before they are killed (SIGKILL) [s]."""

PARENT_DEATH_SIGNAL = signal.SIGTERM
"""What a child receives when its parent dies (Linux): the node executables' clean stop."""

_PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal sent to this process when its parent dies (linux/prctl.h)."""


def _load_prctl() -> Any:
    """Return libc's ``prctl`` on Linux, else None (looked up once, never in a forked child)."""
    if not sys.platform.startswith('linux'):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


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


def _child_setup(parent: int) -> Callable[[], None]:
    """
    Return what a child runs between fork and exec: default SIGINT, SIGTERM on its parent's death.

    A program started in the background by a shell without job control (``cmd &`` in a script,
    ``nohup``) inherits SIGINT *ignored*, and so would its children. rclpy nodes install their
    own handler, but ``ros2 launch`` keeps the ignored disposition: it then never hears the
    SIGINT that :meth:`ManagedProcess.stop` sends, while its nodes end, and reports them as
    crashed (what a CI script started with ``&`` saw). The parent-death signal is asked for
    second; a parent that died before it was set is no longer ``getppid()``: the child then
    ends at once instead of running unwatched.

    :param parent: This (the parent) process's id.
    :return: The function for ``Popen``'s ``preexec_fn``.
    """
    prctl = _PRCTL

    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, int(PARENT_DEATH_SIGNAL), 0, 0, 0)
            if os.getppid() != parent:
                os._exit(128 + int(PARENT_DEATH_SIGNAL))

    return setup


def _group_exists(group: int) -> bool:
    """Return whether a process group still has a member (zombies count until reaped)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(group: int, number: int) -> None:
    """Send a signal to a process group, if it still exists."""
    try:
        os.killpg(group, number)
    except (ProcessLookupError, PermissionError):
        pass


class ManagedProcess:
    """
    A child process in its own session, stopped by its process group id.

    It is recorded in this process's list of running children until it is stopped, so that
    :func:`stop_every_child` (and a tool's :class:`ChildSupervision`) can stop it whatever
    happened in between; on Linux it gets SIGTERM if this process dies first (see the module's
    notes). Start it from the thread that outlives it.

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
        self._log: Any = open(log_path, 'wb') if log_path is not None else subprocess.DEVNULL
        self._finished = False
        with _CHILDREN.starting():  # a stop signal waits until the child is on the list
            try:
                self.process = subprocess.Popen(
                    self.argv,
                    env=dict(environment),
                    cwd=cwd,
                    stdout=self._log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_child_setup(os.getpid()),
                )
            except BaseException:
                self._close_log()
                raise
            _CHILDREN.add(self)

    @property
    def pid(self) -> int:
        """Return the process id (also its process group id)."""
        return self.process.pid

    def alive(self) -> bool:
        """Return whether the process is still running."""
        return self.process.poll() is None

    def request_stop(self) -> None:
        """Send SIGINT to the process group (the child and what it started), if it has members."""
        if not self._finished and (self.alive() or _group_exists(self.pid)):
            _signal_group(self.pid, signal.SIGINT)

    def finish_stop(self, deadline: float) -> int:
        """
        Wait for the group to exit after :meth:`request_stop`, killing it at a deadline.

        The child is waited for first, then the rest of its group (what it started); whatever
        is left at the deadline gets SIGKILL, and the child is reaped (one more bounded wait).

        :param deadline: Until when to wait, on ``time.monotonic`` [s].
        :return: The child's exit status (negative for a signal).
        """
        if self._finished:  # its group id may belong to another process by now
            return int(self.process.returncode)
        try:
            self.process.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            pass
        wait_until(lambda: not _group_exists(self.pid), max(deadline - time.monotonic(), 0.0))
        if _group_exists(self.pid):
            _signal_group(self.pid, signal.SIGKILL)
        try:
            self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:  # unkillable for now (uninterruptible sleep)
            return -int(signal.SIGKILL)
        self._finished = True
        _CHILDREN.discard(self)
        self._close_log()
        return int(self.process.returncode)

    def stop(self, timeout: float = 5.0) -> int:
        """
        Stop the process group: SIGINT, then SIGKILL after ``timeout``.

        :param timeout: Seconds to wait after SIGINT [s].
        :return: The exit status (negative for a signal).
        """
        self.request_stop()
        return self.finish_stop(time.monotonic() + timeout)

    def _close_log(self) -> None:
        if self._log is not subprocess.DEVNULL:
            self._log.close()

    def __enter__(self) -> ManagedProcess:
        """Return the process (started at construction)."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the process."""
        self.stop()


def stop_processes(processes: Iterable[ManagedProcess], timeout: float = STOP_TIMEOUT) -> None:
    """
    Stop processes together, the last started first: SIGINT to all, one deadline, then SIGKILL.

    :param processes: The processes, in the order they were started (stopped ones are skipped).
    :param timeout: Longest wait for all of them after SIGINT [s].
    """
    chosen = list(reversed(list(processes)))
    for process in chosen:
        process.request_stop()
    deadline = time.monotonic() + timeout
    for process in chosen:
        process.finish_stop(deadline)


def stop_every_child(timeout: float = STOP_TIMEOUT) -> None:
    """
    Stop every :class:`ManagedProcess` of this process that is not stopped yet.

    :param timeout: Longest wait for them after SIGINT [s].
    """
    stop_processes(_CHILDREN.running(), timeout)


class _Children:
    """This process's running :class:`ManagedProcess` es, in the order they were started."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._processes: list[ManagedProcess] = []
        self.supervision: ChildSupervision | None = None

    def add(self, process: ManagedProcess) -> None:
        with self._lock:
            self._processes.append(process)

    def discard(self, process: ManagedProcess) -> None:
        with self._lock:
            if process in self._processes:
                self._processes.remove(process)

    def running(self) -> list[ManagedProcess]:
        with self._lock:
            return list(self._processes)

    def starting(self) -> _Deferral:
        """Return a context in which a stop signal is recorded and raised only at its end."""
        return _Deferral(self.supervision)


class _Deferral:
    """Hold a stop signal back while a child is started and recorded (main thread only)."""

    def __init__(self, supervision: ChildSupervision | None) -> None:
        on_main = threading.current_thread() is threading.main_thread()
        self._supervision = supervision if on_main else None

    def __enter__(self) -> None:
        if self._supervision is not None:
            self._supervision.defer(True)

    def __exit__(self, *exc: object) -> None:
        if self._supervision is not None:
            self._supervision.defer(False)


_CHILDREN = _Children()
"""This process's running children."""


class StopRequested(BaseException):
    """
    A stop signal, raised in a supervised tool's main thread to unwind it (not an ``Exception``).

    :param number: The signal's number.
    """

    def __init__(self, number: int) -> None:
        super().__init__(f'stopped by {signal.Signals(number).name}')
        self.number = number

    @property
    def exit_status(self) -> int:
        """Return the conventional exit status of a process ended by this signal (128 + n)."""
        return 128 + self.number


class ChildSupervision:
    """
    A tool's stop signals as :class:`StopRequested`, and every child stopped when it ends.

    While active (``with``), SIGINT, SIGTERM and SIGHUP raise :class:`StopRequested` in the main
    thread, once: later ones are recorded only, so that the clean-up runs to its end. At the
    end -- normal, a failure, a signal -- every :class:`ManagedProcess` started while it was
    active and still running is stopped (:func:`stop_processes`; one started before, e.g. by
    a test fixture around an in-process call, is left alone) and the previous handlers are put
    back; a signal received during that raises :class:`StopRequested` then, unless an exception
    is already on its way out.
    Signal handlers can be installed only in the main thread: elsewhere only the children are
    stopped at the end.

    :param timeout: Longest wait for the children to exit before they are killed [s].
    :param on_stop: Called with the first stop signal's number once the children are stopped
        and before the previous handlers are back, when the tool ends by a stop signal: what it
        writes cannot be cut by one more signal (whose default is to end the process at once).
    """

    def __init__(
        self, timeout: float = STOP_TIMEOUT, on_stop: Callable[[int], None] | None = None
    ) -> None:
        self.timeout = timeout
        self.on_stop = on_stop
        self.received: list[int] = []
        """The stop signals received, in order."""
        self._previous: dict[int, Any] = {}
        self._raised = False
        self._deferred = False
        self._earlier: list[ManagedProcess] = []

    def __enter__(self) -> ChildSupervision:
        """Install the signal handlers (main thread only)."""
        self._earlier = _CHILDREN.running()
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._on_signal)
            _CHILDREN.supervision = self
        return self

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        del frame  # Unused.
        self.received.append(number)
        if not (self._raised or self._deferred):
            self._raised = True
            raise StopRequested(number)

    def defer(self, deferred: bool) -> None:
        """
        Hold stop signals back (True), or stop holding them and raise one that came (False).

        :param deferred: Whether to hold them back.
        """
        self._deferred = deferred
        if not deferred and self.received and not self._raised:
            self._raised = True
            raise StopRequested(self.received[0])

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop every child still running, put the handlers back; raise a late stop signal."""
        self._raised = True  # from here on a signal is recorded, never raised
        try:
            stop_processes(
                [child for child in _CHILDREN.running() if child not in self._earlier],
                self.timeout,
            )
            if self.on_stop is not None and self.received and (
                exc is None or isinstance(exc, StopRequested)
            ):
                self.on_stop(self.received[0])
        finally:
            if _CHILDREN.supervision is self:
                _CHILDREN.supervision = None
            for number, handler in self._previous.items():
                signal.signal(number, handler)
            self._previous.clear()
        if exc is None and self.received:
            raise StopRequested(self.received[0])


def run_stopping_children(
    tool: Callable[[], int], prog: str, timeout: float = STOP_TIMEOUT
) -> int:
    """
    Run a tool that starts processes; whatever happens, none of them outlives it.

    :param tool: The tool; returns its exit status.
    :param prog: Its name, for the line saying it was stopped.
    :param timeout: Longest wait for its processes to exit before they are killed [s].
    :return: The tool's status, or 128 + the number of the stop signal that ended it. A stop
        signal that comes once the clean-up is over, the previous handlers back, has their
        effect: a command line's default is to end by that signal, which a shell also reports
        as 128 + its number.
    :raises BaseException: What the tool raised (its processes stopped first).
    """
    def say_stopped(number: int) -> None:
        print(
            f'{prog}: {StopRequested(number)}; every process it started is stopped',
            file=sys.stderr,
            flush=True,
        )

    try:
        with ChildSupervision(timeout, on_stop=say_stopped):
            return tool()
    except StopRequested as stop:
        return stop.exit_status


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
