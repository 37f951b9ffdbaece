"""
A node's clock read as seconds since an origin of its own, so that plans keep the nanosecond.

The motion layer times everything in float seconds: a step's ``now``, a plan's points, the
points it repeats in the next chunk (:func:`~pic_ros.motion.commander.bridge`). A wall clock
(or a replay's ``/clock`` in wall time) reads about 1.8e9 s, where consecutive floats are
238 ns apart: a point's time summed there lands up to 119 ns off the nanosecond its message
carries, and the next chunk repeats it that far off (a segment of some nanoseconds between two
views of one state, which a controller interpolating with quintics turns into an acceleration
far off the plan's). Counted from an origin of its own, the same times keep about 1e-14 s.

:class:`RelativeClock` hands out those seconds and turns them back into message stamps on the
nanosecond. Readings up to :data:`RELATIVE_SPAN` count from 0 (simulated time, tests), so they
stay what the clock says; a wall clock counts from one second before its first reading.
"""

from __future__ import annotations

from typing import Final

from pic_ros.motion.streaming import duration_parts

NANOSECONDS: Final = 1_000_000_000
"""Nanoseconds in a second."""

RELATIVE_SPAN: Final = 1_000_000
"""
How far past its origin a :class:`RelativeClock` counts [s] (11.6 days, where a float still
resolves 0.12 ns); a reading beyond it, or before the origin, takes a new origin.
"""


class RelativeClock:
    """
    Seconds since an origin on the nanosecond, and back to message stamps.

    The origin is 0 for readings up to :data:`RELATIVE_SPAN`, otherwise one second before the
    first reading (so a time handed out is above 0, which keeps its meaning of "unstamped").
    A reading before the origin or more than :data:`RELATIVE_SPAN` after it (a clock that
    jumped) takes a new origin, chosen so that the time handed out goes back: a jump back
    still shows as one (and so does a jump forward beyond the span, a new start as well).
    """

    def __init__(self) -> None:
        self.origin_ns: int | None = None
        """The origin on the clock [ns], None before the first reading."""
        self._last = 0.0  # the time handed out last [s]

    def seconds(self, nanoseconds: int) -> float:
        """
        Return a reading of the clock as seconds since the origin (taking one when needed).

        :param nanoseconds: The clock's reading [ns] (``Time.nanoseconds``), >= 0.
        :return: Seconds since the origin [s], >= 0 (> 0 past :data:`RELATIVE_SPAN`).
        """
        origin = self.origin_ns
        span = RELATIVE_SPAN * NANOSECONDS
        if origin is None or not 0 <= nanoseconds - origin <= span:
            if nanoseconds <= span:
                origin = 0
            elif origin is None:
                origin = nanoseconds - NANOSECONDS
            else:  # back before the origin, or past the span: handed out earlier than the last
                origin = nanoseconds - min(NANOSECONDS, round(self._last * NANOSECONDS) // 2)
            self.origin_ns = origin
        self._last = (nanoseconds - origin) / NANOSECONDS
        return self._last

    def since_origin(self, nanoseconds: int) -> float:
        """
        Return a stamp of the clock (a message's) as seconds since the origin, origin unchanged.

        :param nanoseconds: The stamp [ns].
        :return: Seconds since the origin [s] (negative for a stamp before it).
        """
        return (nanoseconds - (self.origin_ns or 0)) / NANOSECONDS

    def stamp(self, seconds: float) -> tuple[int, int]:
        """
        Return the message stamp of a time handed out, on the nanosecond.

        :param seconds: Seconds since the origin [s], >= 0; 0 ("unstamped", "start on
            arrival") stays 0.
        :return: ``(sec, nanosec)`` of ``builtin_interfaces/Time``.
        """
        if seconds == 0.0:
            return 0, 0
        whole, nanoseconds = duration_parts(seconds)
        total = (self.origin_ns or 0) + whole * NANOSECONDS + nanoseconds
        return total // NANOSECONDS, total % NANOSECONDS
