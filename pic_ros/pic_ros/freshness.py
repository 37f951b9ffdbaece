"""
Freshness: a stage of the live path acts on the newest input, never on a backlog of the past.

A stage that cannot keep up with its input (a solver on a starved computer) must not queue: it
would fall further behind with every frame and drive the robot from where the person was
seconds ago. :class:`NewestMailbox` sits between a cheap producer (a subscription callback, the
skeleton node's front end) and an expensive consumer (the solver): the producer puts every item,
each one replacing the one still waiting; the consumer takes the newest when it is free. Nothing
is lost without a trace: every item put is taken, *superseded* by a newer one before it was
taken, *too old* when it would have been taken (received more than ``max_age`` before, on the
caller's clock), or still waiting (at most one)::

    put = taken + superseded + too_old + waiting

The mailbox is thread-safe (producer threads, a consumer thread) and keeps no clock of its own:
the caller gives the receive time and the time of taking, so it is driven by a virtual clock in
tests and by the node's clock (sim time in replays) live. Its :meth:`~NewestMailbox.wait` is the
only wall-clock part: how long a consumer thread sleeps when nothing comes.
"""

from __future__ import annotations

import threading
from typing import Final, Generic, NamedTuple, TypeVar

from pic_ros.schema import ParameterDef

T = TypeVar('T')

MAX_FRAME_AGE: Final = ParameterDef(
    'max_frame_age', 0.25,
    'A skeleton that waited longer than this for the solver (from its arrival to the start of '
    'its solve, on the node clock) is dropped as too_old instead of solved: the trajectory '
    'publisher holds rather than follow the past',
    unit='s', low=0.01, high=3600.0,
)
"""
The solver node's ``max_frame_age``: the default is the trajectory publisher's ``hold_timeout``
(0.25 s), the age of the last target at which it stops following and holds.
"""


class MailboxCounts(NamedTuple):
    """
    What became of the items put into a :class:`NewestMailbox`.

    :param put: Items put.
    :param taken: Items handed to the consumer.
    :param superseded: Items replaced by a newer one before they were taken.
    :param too_old: Items older than ``max_age`` when they would have been taken.
    :param waiting: Items waiting now (0 or 1).
    """

    put: int
    taken: int
    superseded: int
    too_old: int
    waiting: int


class NewestMailbox(Generic[T]):
    """
    Hand the newest item from a producer to a consumer; count what is skipped.

    :param max_age: Largest age [s] of an item when it is taken (receive time to take time, on
        the caller's clock), in [0.01, 3600] (:data:`MAX_FRAME_AGE`); older items are dropped as
        too old. A clock that went back (a replay's sim time starting over) makes no item too
        old.
    :raises ConfigError: If ``max_age`` is out of range.
    """

    def __init__(self, max_age: float = MAX_FRAME_AGE.default) -> None:
        self._max_age = float(MAX_FRAME_AGE.check(max_age))
        self._condition = threading.Condition()
        self._item: T | None = None
        self._received = 0.0
        self._waiting = False
        self._closed = False
        self._put = 0
        self._taken = 0
        self._superseded = 0
        self._too_old = 0

    @property
    def max_age(self) -> float:
        """Return the largest age [s] of an item when it is taken."""
        return self._max_age

    @max_age.setter
    def max_age(self, value: float) -> None:
        """Change the largest age [s] (checked as :data:`MAX_FRAME_AGE`)."""
        checked = float(MAX_FRAME_AGE.check(value))
        with self._condition:
            self._max_age = checked

    @property
    def counts(self) -> MailboxCounts:
        """Return the counts, read together (``put = taken + superseded + too_old + waiting``)."""
        with self._condition:
            return MailboxCounts(
                self._put, self._taken, self._superseded, self._too_old, int(self._waiting)
            )

    @property
    def closed(self) -> bool:
        """Return whether :meth:`close` was called."""
        with self._condition:
            return self._closed

    def put(self, item: T, received: float) -> bool:
        """
        Leave an item for the consumer, replacing the one waiting (counted as superseded).

        :param item: The item.
        :param received: When it was received [s], on the clock :meth:`take` is given.
        :return: Whether an item waiting was superseded.
        """
        with self._condition:
            superseded = self._waiting
            self._superseded += superseded
            self._put += 1
            self._item = item
            self._received = float(received)
            self._waiting = True
            self._condition.notify_all()
        return superseded

    def take(self, now: float) -> T | None:
        """
        Take the item waiting, unless it is too old (then it is counted and dropped).

        :param now: The time of taking [s], on the clock of the receive times.
        :return: The newest item, or None when none waits or it was too old.
        """
        with self._condition:
            if not self._waiting:
                return None
            item, self._item, self._waiting = self._item, None, False
            if now - self._received > self._max_age:
                self._too_old += 1
                return None
            self._taken += 1
            return item

    def wait(self, timeout: float) -> bool:
        """
        Wait until an item waits or the mailbox is closed (for a consumer thread).

        :param timeout: Longest wait [s] (wall time; only how long an idle consumer sleeps).
        :return: Whether an item waits.
        """
        with self._condition:
            if not self._waiting and not self._closed:
                self._condition.wait(timeout)
            return self._waiting

    def close(self) -> None:
        """Wake every waiting consumer for good (:meth:`wait` returns at once from now on)."""
        with self._condition:
            self._closed = True
            self._condition.notify_all()


__all__ = ['MAX_FRAME_AGE', 'MailboxCounts', 'NewestMailbox']
