"""
A service call that survives a lost answer: the request is sent again until one answer arrives.

A server on rmw_fastrtps drops its answer when the client's answer reader has not matched its
answer writer within ``max_blocking_time`` (100 ms by default): it logs ``failed to send response
(timeout): client will not receive response`` and the client's future never completes. On a
loaded machine discovery can take longer than that even after ``wait_for_service`` returned
(that only sees the client's side of the match). The answer to a request sent again once the
match is complete arrives; :func:`ask` does that, within one overall bound.

Only for services that may be asked twice with the same effect (reading parameters, Trigger
services such as ``engage`` that answer a repeated call with the state they are in).
"""

from __future__ import annotations

from collections.abc import Callable
import time
from typing import Any, Protocol

RESEND_SECONDS = 2.0
"""How long one request waits for its answer before the request is sent again [s]."""


class Pending(Protocol):
    """What an rclpy future of a service call offers (``rclpy.task.Future``)."""

    def done(self) -> bool:
        """Return whether the answer arrived."""

    def result(self) -> Any:
        """Return the answer."""


def ask(
    send: Callable[[], Pending],
    timeout: float,
    resend_after: float = RESEND_SECONDS,
    pump: Callable[[], object] = lambda: time.sleep(0.01),
) -> Any | None:
    """
    Send a request, and send it again every ``resend_after`` seconds, until one is answered.

    The node of the client must be spun while this waits: by another thread (the default
    ``pump`` only sleeps), or by ``pump`` itself (e.g. one ``spin_once``).

    :param send: Sends one request (``client.call_async(request)``, or a parameter client's
        ``get_parameters([...])``) and returns its future.
    :param timeout: Longest wait for an answer, over all the requests [s].
    :param resend_after: Wait for one request's answer before the next is sent [s].
    :param pump: Called between two looks at the futures.
    :return: The first answer that arrived (whichever request it answers); None if none
        arrived within ``timeout``.
    """
    deadline = time.monotonic() + timeout
    pending: list[Pending] = []
    while True:
        pending.append(send())
        resend_at = min(deadline, time.monotonic() + resend_after)
        while True:
            answered = next((future for future in pending if future.done()), None)
            if answered is not None:
                return answered.result()
            if time.monotonic() >= resend_at:
                break
            pump()
        if time.monotonic() >= deadline:
            return None
