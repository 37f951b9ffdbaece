"""
Spinning nodes beside a process's own main work, or for a time (tools, tests, ``replay``).

:class:`BackgroundSpin` spins an executor in a daemon thread; :func:`spin_while` is the spin of
:func:`pic_ros.ros.runner.run_nodes` for an executable whose main work is a loop of its own, and
:func:`spin_for` the spin of one that runs for a given time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import threading
import time

from pic_ros.ros.runner import Spin
import rclpy
from rclpy.executors import Executor, ExternalShutdownException
from rclpy.node import Node

STOP_JOIN_SECONDS = 1.0
"""
Longest wait for a background spin thread to end at a stop [s].

The thread sees its stop flag within one ``spin_once`` period (:class:`BackgroundSpin`), or at
once when the context is shut down; a thread still in a callback past this bound is a daemon
thread and does not keep the process alive.
"""


class BackgroundSpin:
    """
    Spin an executor in a daemon thread until :meth:`stop`, which ends the thread first.

    For a process's own helper node (a recorder, a probe) beside its main work. rclpy's
    ``Executor.shutdown`` called while another thread is in ``spin`` races with it: the spin may
    still be handling a callback and then use the executor's guard condition that shutdown has
    destroyed (``'NoneType' object has no attribute 'trigger'`` in the spinning thread). Here the
    thread leaves its loop and is joined before the executor is shut down; a stop signal that
    shuts the context down while the thread is in ``spin_once`` ends the thread quietly.

    :param executor: The executor, its nodes added.
    :param period: Longest wait of one ``spin_once`` [s]: how soon the thread sees :meth:`stop`.
    """

    def __init__(self, executor: Executor, period: float = 0.05) -> None:
        self.executor = executor
        self._period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, name='background_spin', daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            while not self._stop.is_set() and self.executor.context.ok():
                self.executor.spin_once(timeout_sec=self._period)
        except ExternalShutdownException:  # the context was shut down first
            pass
        except Exception:
            # A stop signal shuts the context down from another thread, possibly between the
            # check above and the wait set ``spin_once`` builds, which then fails on the invalid
            # context (``RCLError: failed to create timer``): an end, not a fault.
            if self.executor.context.ok():
                raise

    def join(self, timeout: float = 10.0) -> None:
        """
        End the thread (a bounded wait), and leave the executor to its owner.

        :param timeout: Longest wait [s].
        """
        self._stop.set()
        self._thread.join(timeout=timeout)

    def stop(self, timeout: float = 10.0) -> None:
        """
        End the thread (a bounded wait), then shut the executor down.

        :param timeout: Longest wait for each of the two [s].
        """
        self.join(timeout)
        self.executor.shutdown(timeout_sec=timeout)


def spin_while(work: Callable[[Sequence[Node]], object]) -> Spin:
    """
    Return a spin that runs some work in the calling (main) thread while the nodes spin beside it.

    For an executable whose main work is a loop of its own (``replay`` publishing a bag): the
    executor spins in a :class:`BackgroundSpin` thread for as long as the work runs, so the nodes'
    parameter services, ``/clock`` subscription and other callbacks are answered meanwhile. The
    spin ends when the work returns (or raises), its thread joined; the executor is left to
    ``run_nodes``, which shuts it down once rclpy's signal handling has ended
    (:func:`pic_ros.ros.runner.end_rclpy_signal_handling`). The work must return soon after the
    context is shut down (a stop signal): it should check ``context.ok()`` in its waits.

    :param work: Called with the nodes; its return value is ignored.
    :return: The spin function.
    """

    def spin(executor: Executor, nodes: Sequence[Node]) -> None:
        for node in nodes:
            executor.add_node(node)
        background = BackgroundSpin(executor)
        try:
            work(nodes)
        finally:
            background.join(timeout=STOP_JOIN_SECONDS)

    return spin


def spin_for(seconds: float) -> Spin:
    """
    Return a spin that stops after a time, or earlier at shutdown.

    :param seconds: How long to spin [s] (monotonic clock).
    :return: The spin function.
    """

    def spin(executor: Executor, nodes: Sequence[Node]) -> None:
        for node in nodes:
            executor.add_node(node)
        deadline = time.monotonic() + seconds
        while rclpy.ok() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=min(0.1, max(deadline - time.monotonic(), 0.0)))

    return spin
