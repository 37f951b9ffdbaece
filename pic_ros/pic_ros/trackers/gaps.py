"""
Frames lost before they reached us, counted from gaps in a tracker's own sequence.

A tracker numbers or stamps its frames; a frame that the network, DDS or a full socket buffer
lost shows as a gap in that sequence. :class:`GapCounter` turns the gaps into a count,
``lost_upstream`` on ``/diagnostics``, that adversarial timing cannot inflate:

- **counters** (the Xsens MVN sample counter), fed only with validated datagrams: every skipped
  number is one lost frame, as long as the skip is plausible (at most ``max_skip`` plus what
  :data:`MAX_SAMPLE_RATE` could send in the time since the last counter). A larger jump, or a
  counter far behind the last one (a wrap, a new MVN session, a corrupted but well-formed
  datagram), is a *restart* of the sequence (:attr:`GapCounter.restarts`), never 2^31 losses.
  A skipped number that comes after all (late, or in a datagram dropped as unusable,
  :meth:`GapCounter.arrived`) is taken back: it is counted where it was dropped, not twice.
- **stamps** (marker arrays, whose rate is the camera's): the period is the tracker's nominal
  one when given, else estimated from the recent steps (:func:`_robust_period`: a median that
  leaves out a burst's short steps and a loss's long ones, held between half the mean step and
  the mean step, which no burst can shorten), so bursts of arrays a fraction of a millisecond
  apart cannot drive it to zero. Each step of ``k`` periods owes ``k - 1`` frames; a step
  shorter than half a period, or an array that arrives late (behind the newest stamp, not a
  repeat), pays one back: a driver that stalls and then sends the held arrays in a burst loses
  nothing. A debt not paid back within its own size plus :data:`SETTLE_ARRIVALS` arrays (or
  ``max_gap``) is final. :attr:`GapCounter.lost` counts the final debts and the open ones, so
  that the balance sent = received + lost holds when the stream ends too (an open debt is taken
  back when its arrays come).

A stamp more than ``max_gap`` away from the sequence (behind it, or ahead of it without an empty
reading in between) is off the sequence: one such stamp (a stray publisher, a glitch; the array
its glitch replaced is then a hole) is ignored; :data:`CONFIRM_READINGS` in a row that continue
each other, with no stamp of the sequence in between, start the sequence over there (a replay
loop or a restarted tracker, :attr:`GapCounter.restarts`; a tracker that paused,
:attr:`GapCounter.pauses`), without counting losses across. A reading without bodies (an empty
array) carries no stamp but proves the stream was alive: the step across it is not counted.

Memory is bounded by count whatever the stamps: ``window`` steps, stamps, open debts and
skipped-counter ranges (:attr:`GapCounter.buffered`).
"""

from __future__ import annotations

from collections import deque
import math
from typing import Final

from pic_ros.checks import check_integer, check_number

MIN_PERIOD: Final = 2.5e-3
"""
Shortest frame period [s] (no marker tracker runs at 400 Hz): shorter steps are a burst's.
"""

MAX_SAMPLE_RATE: Final = 1000.0
"""Fastest sample rate [Hz] a counter may advance at, for the plausible skip over a time."""

DEFAULT_MAX_SKIP: Final = 4096
"""Skipped counters always plausible as losses (17 s at 240 Hz: more than a kernel buffer)."""

SETTLE_ARRIVALS: Final = 3
"""Arrays after a debt's own size within which a burst may still pay it back."""

CONFIRM_READINGS: Final = 3
"""Consecutive stamps off the sequence, continuing each other, that start it over."""

RUN: Final = 8
"""Steps needed before the period is estimated from the stamps."""

BURST_SHARE: Final = 0.25
"""Steps shorter than this share of the mean step are a burst's, left out of the period."""

MEAN_SLACK: Final = 1.05
"""The period estimate is at most this times the mean step (the stamps' own jitter)."""

AGREEMENT: Final = 0.1
"""Largest relative difference of two period estimates in a row that makes the period known."""

REESTIMATE: Final = 8
"""Steps between two estimates of the period."""


class GapCounter:
    """
    Count the frames missing from a tracker's sequence.

    :param max_gap: Longest stamp step [s] still counted as lost frames, in (0, 60]; longer
        steps are pauses of the tracker.
    :param window: Stamp steps (and stamps, and open debts) kept, >= 16.
    :param period: The tracker's nominal frame period [s], in [1 ms, ``max_gap``]; None
        estimates it from the stamps.
    :param max_skip: Skipped counters always counted as losses, >= 1; more is a restart unless
        the time since the last counter explains it (:data:`MAX_SAMPLE_RATE`). Also how far a
        counter may fall behind and still be a late frame rather than a restart.
    :raises ConfigError: If a value is out of range.
    """

    def __init__(
        self,
        max_gap: float = 1.0,
        window: int = 64,
        period: float | None = None,
        max_skip: int = DEFAULT_MAX_SKIP,
    ) -> None:
        self._max_gap = check_number('max_gap', max_gap, 1e-6, 60.0)
        self._nominal = (
            None if period is None else check_number('period', period, MIN_PERIOD, self._max_gap)
        )
        self._max_skip = check_integer('max_skip', max_skip, 1, 1 << 31)
        size = max(16, int(window))
        self._steps: deque[float] = deque(maxlen=size)
        self._recent: deque[float] = deque(maxlen=size)
        self._debts: deque[list[float]] = deque(maxlen=size)  # [stamp, settles at, amount]
        self._estimate: float | None = None
        self._trusted = False
        self._stale = 0
        self._early = 0
        self._arrivals = 0
        self._last_stamp: float | None = None
        self._interrupted = False
        self._candidate: tuple[float, int] | None = None  # (last stamp, readings in a row)
        self._last_counter: int | None = None
        self._counter_time: float | None = None
        self._skipped: list[list[int]] = []  # [first, last] counters lost, at most `size`
        self._size = size
        self._lost = 0
        self.pauses = 0
        """Sequences started over after a tracker's pause (not counted as lost)."""
        self.restarts = 0
        """Sequences started over by a counter or stamp jump (not counted as lost)."""

    @property
    def lost(self) -> int:
        """Return the frames counted as lost so far (final and still open debts)."""
        return self._lost + int(sum(debt[2] for debt in self._debts))

    @property
    def buffered(self) -> int:
        """Return the entries held (steps, stamps, debts, skips): at most ``4 * window``."""
        return len(self._steps) + len(self._recent) + len(self._debts) + len(self._skipped)

    # Counters ----------------------------------------------------------------------------------

    def counter(self, value: int, when: float | None = None) -> None:
        """
        Take the sequence number of a validated frame that arrived.

        :param value: The tracker's frame counter (consecutive frames differ by 1); a value not
            above the last one is a further part of a frame, or late (taken back from the lost
            ones if it was counted there), and is not counted; one more than ``max_skip``
            behind starts the sequence over.
        :param when: When it arrived [s] (any clock that does not jump), or None; bounds the
            plausible skip.
        """
        value = int(value)
        last = self._last_counter
        if last is not None and value <= last:
            if last - value > self._max_skip:
                self.restarts += 1  # a wrap or a new session
                self._skipped.clear()
                self._last_counter, self._counter_time = value, when
            else:
                self.arrived(value)  # a further datagram of the same frame, or a late one
            return
        if last is not None:
            skipped = value - last - 1
            if skipped > self._plausible_skip(when):
                self.restarts += 1  # a jump no loss explains
                self._skipped.clear()
            elif skipped > 0:
                self._lost += skipped
                self._skipped.append([last + 1, value - 1])
                del self._skipped[:-self._size]  # the oldest are final
        self._last_counter, self._counter_time = value, when

    def arrived(self, value: int) -> None:
        """
        Take the sequence number of a frame that arrived but is not used (dropped, or late).

        If it was counted as lost (a recent skip), it is taken back: it is counted where it was
        dropped, not twice. A number never skipped (a repeat, or garbage) changes nothing.

        :param value: The frame's counter, as it came.
        """
        value = int(value)
        for index, (low, high) in enumerate(self._skipped):
            if low <= value <= high:
                self._lost -= 1
                del self._skipped[index]
                if low < value:
                    self._skipped.insert(index, [low, value - 1])
                if value < high:
                    self._skipped.insert(index + (low < value), [value + 1, high])
                del self._skipped[:-self._size]
                return

    def _plausible_skip(self, when: float | None) -> float:
        allowed = float(self._max_skip)
        last = self._counter_time
        if when is not None and last is not None and math.isfinite(when) and math.isfinite(last):
            allowed += max(0.0, when - last) * MAX_SAMPLE_RATE
        return allowed

    # Stamps ------------------------------------------------------------------------------------

    def stamp(self, stamp: float) -> None:
        """
        Take the stamp of a frame that arrived with bodies.

        :param stamp: Capture stamp [s]; non-finite stamps are ignored.
        """
        if not math.isfinite(stamp):
            return
        self._arrivals += 1
        last = self._last_stamp
        if last is None:
            self._begin(stamp)
            return
        step = stamp - last
        if step > 0.0 and (step <= self._max_gap or self._interrupted):
            self._candidate = None
            if self._interrupted:
                self._interrupted = False  # an empty reading explains the step
            else:
                self._count(stamp, step)
            self._last_stamp = stamp
            self._recent.append(stamp)
            self._settle(stamp)
        elif step <= 0.0 and -step <= self._max_gap:  # late, or repeated, within the sequence
            self._candidate = None
            if stamp not in self._recent:
                self._recent.append(stamp)
                if self.period is None:
                    self._early += 1  # paid when the period is known
                else:
                    self._pay(1)
        else:
            self._off_sequence(stamp, backwards=step < 0.0)

    def _begin(self, stamp: float) -> None:
        self._last_stamp = stamp
        self._recent.append(stamp)
        self._interrupted = False
        self._candidate = None

    def _off_sequence(self, stamp: float, *, backwards: bool) -> None:
        candidate = self._candidate
        count = 1
        if candidate is not None and 0.0 < stamp - candidate[0] <= self._max_gap:
            count = candidate[1] + 1
        if count < CONFIRM_READINGS:
            self._candidate = (stamp, count)
            return
        self._close()
        if backwards:
            self.restarts += 1
            self._clear()
        else:
            self.pauses += 1
        self._begin(stamp)

    def _count(self, stamp: float, step: float) -> None:
        known = self.period is not None
        self._steps.append(step)
        self._update_period()
        period = self.period
        if period is None:
            return
        if known:
            owed = round(step / period) - 1
        else:  # the period just became known: what came before counts too
            owed = sum(round(earlier / period) - 1 for earlier in self._steps) - self._early
            self._early = 0
        if owed > 0:
            if len(self._debts) == self._debts.maxlen:
                self._lost += int(self._debts.popleft()[2])
            settles = self._arrivals + owed + SETTLE_ARRIVALS
            self._debts.append([stamp, float(settles), float(owed)])
        elif owed < 0:
            self._pay(-owed)

    def _pay(self, count: int) -> None:
        while count > 0 and self._debts:
            debt = self._debts[0]
            paid = min(count, int(debt[2]))
            debt[2] -= paid
            count -= paid
            if debt[2] <= 0:
                self._debts.popleft()

    def _settle(self, stamp: float) -> None:
        while self._debts:
            when, settles, amount = self._debts[0]
            if self._arrivals <= settles and stamp - when <= self._max_gap:
                return
            self._lost += int(amount)
            self._debts.popleft()

    def _close(self) -> None:
        """Make every open debt final (the sequence ends)."""
        self._lost += int(sum(debt[2] for debt in self._debts))
        self._debts.clear()

    def _clear(self) -> None:
        self._steps.clear()
        self._recent.clear()
        self._estimate = None
        self._trusted = False
        self._stale = 0
        self._early = 0

    def restart(self) -> None:
        """Start the sequence over (the tracker restarted); the counts are kept."""
        self._close()
        self._clear()
        self._last_counter = None
        self._counter_time = None
        self._skipped.clear()
        self._last_stamp = None
        self._interrupted = False
        self._candidate = None

    def interrupt(self) -> None:
        """Note a reading without bodies: the step across it is not a loss."""
        if self._last_stamp is not None:
            self._interrupted = True

    def _update_period(self) -> None:
        """Estimate the period every :data:`REESTIMATE` steps; trust two that agree."""
        if self._nominal is not None:
            return
        self._stale += 1
        if self._stale < REESTIMATE:
            return
        self._stale = 0
        estimate = _robust_period(self._steps, self._estimate)
        if (not self._trusted and estimate is not None and self._estimate is not None
                and abs(estimate - self._estimate) <= AGREEMENT * self._estimate):
            self._trusted = True
        self._estimate = estimate

    @property
    def period(self) -> float | None:
        """
        Return the frame period [s]: the nominal one, else the estimate, or None.

        The estimate (:func:`_robust_period`, redone every :data:`REESTIMATE` steps) is a
        median of the steps kept that are neither a burst's nor a loss's, never below
        :data:`MIN_PERIOD`; it is used once two estimates in a row agree within
        :data:`AGREEMENT` (a stream that starts with a burst says nothing of its rate), and
        the steps already kept are then counted too.
        """
        if self._nominal is not None:
            return self._nominal
        return self._estimate if self._trusted else None


def _robust_period(steps: deque[float], previous: float | None) -> float | None:
    """
    Estimate the frame period [s] from consecutive stamp steps (None before :data:`RUN` steps).

    Once an estimate exists, the median of the steps within half a period of it (a lost
    frame's step and a burst's short steps are left out, whatever their share); otherwise, or
    when too few steps are near it, the median of the steps longer than :data:`BURST_SHARE` of
    the mean step. Either is kept between half the mean step and :data:`MEAN_SLACK` times it:
    the mean step is the arrival period, which no burst can shorten and which losses only
    lengthen (by half at most before the estimate is held up). Then refined, within 15 %, to the
    steps' span over the frames they stand for (one per step, plus what each owes): the jitter
    of single steps averages out, which a step of many periods needs to be rounded right.
    """
    usable = [step for step in steps if step >= MIN_PERIOD]
    if len(usable) < RUN:
        return None
    count = len(steps)
    mean = math.fsum(steps) / count
    estimate: float | None = None
    if previous is not None:
        near = sorted(step for step in usable if 0.5 * previous <= step <= 1.5 * previous)
        if len(near) >= RUN // 2:
            estimate = near[len(near) // 2]
    if estimate is None:
        kept = sorted(step for step in usable if step >= BURST_SHARE * mean)
        estimate = kept[len(kept) // 2] if kept else mean
    estimate = max(MIN_PERIOD, min(max(estimate, 0.5 * mean), MEAN_SLACK * mean))
    for _ in range(2):
        frames = count + sum(round(step / estimate) - 1 for step in steps)
        if frames <= 0:
            break
        refined = count * mean / frames
        if not 0.85 * estimate <= refined <= 1.15 * estimate:
            break
        estimate = max(MIN_PERIOD, refined)
    return estimate
