"""How a :class:`BackgroundSpin` thread ends: quietly when the context is shut down under it."""

from __future__ import annotations

import threading

from pic_ros_tools.ros.background_spin import BackgroundSpin


class _Context:
    """A context whose ``ok`` turns false when the executor's wait fails."""

    def __init__(self) -> None:
        self.up = True

    def ok(self) -> bool:
        return self.up


class _FailingExecutor:
    """
    An executor whose ``spin_once`` raises, as rclpy's does on a context shut down mid-call.

    :param shut_down: Whether the context is shut down when the call raises (a stop signal).
    """

    def __init__(self, shut_down: bool) -> None:
        self.context = _Context()
        self.calls = 0
        self.shut = False
        self._shut_down = shut_down

    def spin_once(self, timeout_sec: float) -> None:
        self.calls += 1
        if self._shut_down:
            self.context.up = False
        raise RuntimeError('failed to create timer: the given context is not valid')

    def shutdown(self, timeout_sec: float) -> bool:
        self.shut = True
        return True


def _thread_errors(executor: _FailingExecutor) -> list[BaseException | None]:
    errors: list[BaseException | None] = []
    previous = threading.excepthook
    threading.excepthook = lambda arguments: errors.append(arguments.exc_value)
    try:
        spin = BackgroundSpin(executor)  # type: ignore[arg-type]
        spin.stop(timeout=10.0)
    finally:
        threading.excepthook = previous
    return errors


def test_a_context_shut_down_during_a_wait_ends_the_thread_without_an_error() -> None:
    executor = _FailingExecutor(shut_down=True)
    assert _thread_errors(executor) == []
    assert executor.calls == 1
    assert executor.shut


def test_a_failure_while_the_context_is_up_still_surfaces() -> None:
    executor = _FailingExecutor(shut_down=False)
    errors = _thread_errors(executor)
    assert len(errors) == 1
    assert isinstance(errors[0], RuntimeError)
    assert executor.shut
