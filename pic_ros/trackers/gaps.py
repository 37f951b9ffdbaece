"""
Frames lost before they reached us, counted from gaps in a tracker's own sequence.

A tracker numbers or stamps its frames; a frame that the network, DDS or a full socket buffer
lost shows as a gap in that sequence. :class:`GapCounter` turns the gaps into a count,
``lost_upstream`` on ``/diagnostics``:

- **counters** (the Xsens MVN sample counter): every skipped number is one lost frame;
- **stamps** (marker arrays, whose rate is the camera's): the period is estimated as the median
  of the recent stamp steps, and a step of more than 1.5 periods counts ``round(step / period)
  - 1`` lost frames. A reading without bodies (an empty array) carries no stamp but proves the
  stream was alive, so the step across it is not counted; neither is a step longer than
  ``max_gap`` (a tracker that paused, not a loss).

A counter or stamp that goes back starts the sequence over (a replay loop, a restarted tracker).
"""

from __future__ import annotations

from collections import deque
import math

from pic_ros.checks import check_number


class GapCounter:
    """
    Count the frames missing from a tracker's sequence.

    :param max_gap: Longest stamp step [s] still counted as lost frames, in (0, 60]; longer
        steps are pauses of the tracker.
    :param window: Stamp steps the period estimate is the median of, >= 3.
    :raises ConfigError: If a value is out of range.
    """

    def __init__(self, max_gap: float = 1.0, window: int = 31) -> None:
        self._max_gap = check_number('max_gap', max_gap, 1e-6, 60.0)
        self._steps: deque[float] = deque(maxlen=max(3, int(window)))
        self._last_counter: int | None = None
        self._last_stamp: float | None = None
        self.lost = 0
        """Frames counted as lost so far."""
        self.pauses = 0
        """Steps longer than ``max_gap`` (not counted as lost)."""

    def counter(self, value: int) -> None:
        """
        Take the sequence number of a frame that arrived.

        :param value: The tracker's frame counter (consecutive frames differ by 1); a value not
            above the last one is a further part of a frame, or late, and is not counted.
        """
        last = self._last_counter
        if last is not None and value <= last:
            return  # a further datagram of the same frame, or a late one
        if last is not None:
            self.lost += value - last - 1
        self._last_counter = value

    def stamp(self, stamp: float) -> None:
        """
        Take the stamp of a frame that arrived with bodies.

        :param stamp: Capture stamp [s]; non-finite stamps are ignored.
        """
        if not math.isfinite(stamp):
            return
        last = self._last_stamp
        self._last_stamp = stamp
        if last is None or stamp <= last:
            if last is not None and stamp < last:
                self._steps.clear()  # a new sequence: its rate may differ
            return
        step = stamp - last
        period = self.period
        if period is not None and step > 1.5 * period:
            if step > self._max_gap:
                self.pauses += 1
            else:
                self.lost += round(step / period) - 1
            return
        self._steps.append(step)

    def restart(self) -> None:
        """Start the sequence over (the tracker restarted); the counts are kept."""
        self._last_counter = None
        self._last_stamp = None
        self._steps.clear()

    def interrupt(self) -> None:
        """Note a reading without bodies: the step across it is not a loss."""
        self._last_stamp = None

    @property
    def period(self) -> float | None:
        """Return the estimated frame period [s], or None before three steps."""
        if len(self._steps) < 3:
            return None
        ordered = sorted(self._steps)
        return ordered[len(ordered) // 2]
