"""The newest-frame handover: a stalled consumer gets the newest item, every other one counted."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from pic_ros.exceptions import ConfigError
from pic_ros.freshness import MailboxCounts, MAX_FRAME_AGE, NewestMailbox
import pytest

WAIT = 60.0
"""Longest wall-clock wait for a thread's event [s]: a bound for a busy host, never a figure."""


def balanced(counts: MailboxCounts) -> bool:
    """Return whether ``put = taken + superseded + too_old + waiting`` (always, by design)."""
    return counts.put == counts.taken + counts.superseded + counts.too_old + counts.waiting


def test_a_stalled_consumer_gets_the_newest_item_and_every_other_one_is_superseded():
    """Ten frames come 1/30 s apart while the consumer is busy: it takes the tenth."""
    mailbox: NewestMailbox[int] = NewestMailbox(max_age=0.25)
    for index in range(10):
        mailbox.put(index, received=100.0 + index / 30.0)

    taken = mailbox.take(now=100.0 + 9 / 30.0 + 0.01)

    assert taken == 9
    assert mailbox.counts == MailboxCounts(put=10, taken=1, superseded=9, too_old=0, waiting=0)
    assert mailbox.take(now=101.0) is None  # nothing waits any more
    assert balanced(mailbox.counts)


def test_an_item_older_than_max_age_when_taken_is_dropped_and_counted():
    """A frame received 0.3 s before the consumer is free is dropped as too old (0.25 s)."""
    mailbox: NewestMailbox[str] = NewestMailbox(max_age=0.25)
    mailbox.put('old', received=10.0)

    assert mailbox.take(now=10.3) is None
    assert mailbox.counts == MailboxCounts(put=1, taken=0, superseded=0, too_old=1, waiting=0)

    mailbox.put('fresh', received=10.3)
    assert mailbox.take(now=10.3 + 0.25) == 'fresh'  # exactly max_age old: still taken
    assert mailbox.counts == MailboxCounts(put=2, taken=1, superseded=0, too_old=1, waiting=0)


def test_a_clock_that_went_back_makes_no_item_too_old():
    """A replay's sim time starting over: the item waiting is taken, not dropped."""
    mailbox: NewestMailbox[str] = NewestMailbox(max_age=0.25)
    mailbox.put('frame', received=500.0)

    assert mailbox.take(now=3.0) == 'frame'


def test_max_age_follows_a_parameter_change_and_refuses_what_the_parameter_refuses():
    """The age limit is max_frame_age's range, checked when made and when changed."""
    mailbox: NewestMailbox[str] = NewestMailbox()
    assert mailbox.max_age == MAX_FRAME_AGE.default == 0.25

    mailbox.max_age = 1.0
    mailbox.put('frame', received=0.0)
    assert mailbox.take(now=0.9) == 'frame'

    for bad in (0.0, -1.0, float('nan'), 1e9):
        with pytest.raises(ConfigError, match='max_frame_age'):
            mailbox.max_age = bad
        with pytest.raises(ConfigError, match='max_frame_age'):
            NewestMailbox(max_age=bad)
    assert mailbox.max_age == 1.0


def test_a_consumer_thread_stalled_while_a_producer_thread_puts_gets_the_newest():
    """
    A producer thread puts 200 items while the consumer thread is stalled in its work.

    When the stall ends the consumer takes the last item put; the counts balance exactly. The
    clock is virtual (item i received at i ms, taken at the last receive time): no wall-clock
    figure is asserted, the threads are ordered by events.
    """
    mailbox: NewestMailbox[int] = NewestMailbox(max_age=0.25)
    stalled, release, produced = threading.Event(), threading.Event(), threading.Event()
    newest_handed = threading.Event()
    handed: list[int] = []
    count = 200

    def consume() -> None:
        while not mailbox.closed:
            if not mailbox.wait(timeout=WAIT):
                continue
            item = mailbox.take(now=(count - 1) * 1e-3)
            if item is None:
                continue
            handed.append(item)
            if item == count - 1:
                newest_handed.set()
            if item == 0:  # the first item: the consumer is busy for as long as the test says
                stalled.set()
                release.wait(timeout=WAIT)

    def produce() -> None:
        for index in range(1, count):
            mailbox.put(index, received=index * 1e-3)
        produced.set()

    consumer = threading.Thread(target=consume)
    consumer.start()
    mailbox.put(0, received=0.0)
    assert stalled.wait(timeout=WAIT)
    producer = threading.Thread(target=produce)
    producer.start()
    assert produced.wait(timeout=WAIT)
    release.set()
    assert newest_handed.wait(timeout=WAIT)
    mailbox.close()
    consumer.join(timeout=WAIT)
    producer.join(timeout=WAIT)

    assert not consumer.is_alive()
    assert handed == [0, count - 1]
    counts = mailbox.counts
    assert counts == MailboxCounts(
        put=count, taken=2, superseded=count - 2, too_old=0, waiting=0
    )


def test_close_wakes_a_waiting_consumer_for_good():
    """A consumer waiting for an item returns when the mailbox is closed, and at once after."""
    mailbox: NewestMailbox[int] = NewestMailbox()
    woke = threading.Event()

    def wait() -> None:
        mailbox.wait(timeout=WAIT)
        woke.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    mailbox.close()
    assert woke.wait(timeout=WAIT)
    waiter.join(timeout=WAIT)
    assert mailbox.closed
    assert mailbox.wait(timeout=WAIT) is False  # closed: no wait at all


OPERATIONS = st.lists(
    st.tuples(st.sampled_from(('put', 'take')), st.floats(0.0, 0.5)), max_size=60
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(OPERATIONS)
def test_the_counts_balance_and_a_take_returns_the_last_item_put(operations):
    """
    Any sequence of puts and takes on an advancing clock (steps of 0 to 0.5 s).

    put = taken + superseded + too_old + waiting after every step; a take returns the last item
    put when it is at most max_age old and nothing was taken since, else None.
    """
    mailbox: NewestMailbox[int] = NewestMailbox(max_age=0.25)
    now = 0.0
    last: tuple[int, float] | None = None  # the item waiting and when it was received
    for index, (operation, step) in enumerate(operations):
        now += step
        if operation == 'put':
            mailbox.put(index, received=now)
            last = (index, now)
        else:
            expected = None if last is None or now - last[1] > 0.25 else last[0]
            assert mailbox.take(now) == expected
            last = None
        assert balanced(mailbox.counts)
        assert mailbox.counts.waiting == (last is not None)
