"""
The skeleton node's core: tracker readings in, the followed person's body-frame skeleton out.

:class:`SkeletonFrontEnd` takes the :class:`~pic_ros.trackers.base.TrackerReading` of every
tracker message and composes, whatever the tracker:

1. **sessions**: a reading stamped more than ``restart_after`` before the last accepted one is
   off the session and dropped (``OLD_STAMP``): one such message, or a stray publisher
   interleaved with the tracker, never takes the person over. The tracker restarted (a looping
   replay, a restarted driver) when the stream as a whole moved there: readings close to each
   other on that timeline, with no reading accepted in the session meanwhile, of which
   :data:`RESTART_READINGS` show a body near the person's place, or that span
   ``reacquire_after`` (the person's absence after which anybody is a new person), in stamps
   and in receive times. A new session then starts with that reading:
   the last stamp and the smoothing are forgotten, the counts kept,
   :attr:`SkeletonFrontEnd.restarts` counts it, and the identity rule goes on (the body near the
   person's last place is the person, :meth:`~pic_ros.trackers.frames.BodySelector.rebase`),
   never simply the nearest body. A smaller step back is an old frame, dropped too;
2. **selection** (:class:`~pic_ros.trackers.frames.BodySelector`): one person followed across
   readings by body id and place; after a gap of ``switch_after``, by place
   (``reacquire_radius``), or as a new person after ``reacquire_after`` (absences measured on
   the stamps and the receive times);
3. **checks** (:class:`~pic_ros.trackers.frames.FrameValidator`): non-finite values, missing
   arm joints, impossible bones, stamps not after the last accepted one;
4. **smoothing and the body frame** (:class:`~pic_ros.human.processing.SkeletonProcessor`),
   restarted when the followed body id changes or a new person is taken up.

Every reading is counted once, as accepted or by its
:class:`~pic_ros.trackers.frames.DropReason`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import math
from typing import Any, Final

import numpy as np
from pic_ros.exceptions import SkeletonError
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import SkeletonFrame
from pic_ros.trackers.base import TrackerReading
from pic_ros.trackers.frames import (
    BodySelector,
    DropCounter,
    DropReason,
    FrameValidator,
    REACQUIRE_AFTER,
    REACQUIRE_RADIUS,
    SWITCH_AFTER,
)

RESTART_AFTER: Final = ParameterDef(
    'restart_after', 1.0,
    'A stamp older than the last accepted one by more than this is off the session and '
    'dropped (old_stamp); a new session starts there only when the stream moves to that '
    'timeline (a looping replay, a tracker restart) with nothing accepted meanwhile: 5 readings '
    'near the person, or reacquire_after of them',
    unit='s', low=0.0, high=3600.0,
)
"""The skeleton node's ``restart_after`` (:attr:`FrontEndConfig.restart_after`)."""

RESTART_READINGS: Final = 5
"""Readings on a timeline behind the session, near the person, that start a new session."""

TIMELINE_STEP: Final = 1.0
"""How far [s] a reading's stamp may be from a candidate timeline's and still belong to it."""

TIMELINES: Final = 4
"""Candidate timelines followed at once (streams behind the session, apart in time)."""


@dataclass
class _Timeline:
    """Readings off the session, close to each other in time: perhaps a new session."""

    first: float
    last: float
    first_received: float
    last_received: float
    count: int = 1
    near: int = 0
    updated: int = 0


def _least(first: float, second: float) -> float:
    """Return the smaller of two times, ignoring NaN (NaN only when both are)."""
    if math.isnan(first):
        return second
    if math.isnan(second):
        return first
    return min(first, second)


@dataclass(frozen=True)
class FrontEndConfig:
    """
    Settings of :class:`SkeletonFrontEnd`.

    :param switch_after: Absence of the followed person that makes a gap [s]
        (:data:`~pic_ros.trackers.frames.SWITCH_AFTER`).
    :param reacquire_radius: Distance from the person's last place within which a body is the
        person after a gap [m] (:data:`~pic_ros.trackers.frames.REACQUIRE_RADIUS`).
    :param reacquire_after: Absence after which a body anywhere is a new person [s]
        (:data:`~pic_ros.trackers.frames.REACQUIRE_AFTER`).
    :param restart_after: Step back of the stamps that leaves the session [s]
        (:data:`RESTART_AFTER`).
    :param processing: Smoothing settings.
    :raises ConfigError: If a value is out of range.
    """

    switch_after: float = SWITCH_AFTER.default
    reacquire_radius: float = REACQUIRE_RADIUS.default
    reacquire_after: float = REACQUIRE_AFTER.default
    restart_after: float = RESTART_AFTER.default
    processing: ProcessingConfig = field(default_factory=ProcessingConfig)

    def __post_init__(self) -> None:
        for item in (SWITCH_AFTER, REACQUIRE_RADIUS, REACQUIRE_AFTER):
            object.__setattr__(self, item.name, item.check(getattr(self, item.name)))
        object.__setattr__(self, 'restart_after', RESTART_AFTER.check(self.restart_after))

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> FrontEndConfig:
        """
        Build the settings from the skeleton node's parameter values.

        :param values: ``switch_after``, ``reacquire_radius``, ``reacquire_after``,
            ``restart_after``, ``smoothing``, ``time_constant`` (missing ones take their
            defaults).
        :return: The settings.
        :raises ConfigError: If a value is refused.
        """
        return cls(
            switch_after=values.get('switch_after', SWITCH_AFTER.default),
            reacquire_radius=values.get('reacquire_radius', REACQUIRE_RADIUS.default),
            reacquire_after=values.get('reacquire_after', REACQUIRE_AFTER.default),
            restart_after=values.get('restart_after', RESTART_AFTER.default),
            processing=ProcessingConfig.from_parameters(values),
        )


class SkeletonFrontEnd:
    """
    Follow one person through a tracker's readings: sessions, selection, checks, smoothing.

    The parts are public attributes (``selector``, ``validator``, ``processor``) for
    diagnostics; the validator keeps its own counts of the frames that reached it.

    :param config: Settings; default :class:`FrontEndConfig()`.
    """

    def __init__(self, config: FrontEndConfig | None = None) -> None:
        self._config = config if config is not None else FrontEndConfig()
        self.selector = BodySelector(
            self._config.switch_after, self._config.reacquire_radius, self._config.reacquire_after
        )
        self.validator = FrameValidator()
        self.processor = SkeletonProcessor(self._config.processing)
        self._counter = DropCounter()
        self._restarts = 0
        self._timelines: list[_Timeline] = []
        self._arrivals = 0

    @property
    def config(self) -> FrontEndConfig:
        """Return the settings."""
        return self._config

    @config.setter
    def config(self, config: FrontEndConfig) -> None:
        """Change the settings, keeping the followed body, the last stamp and the counts."""
        self.selector.switch_after = config.switch_after
        self.selector.reacquire_radius = config.reacquire_radius
        self.selector.reacquire_after = config.reacquire_after
        if config.processing != self._config.processing:
            self.processor = SkeletonProcessor(config.processing)  # smoothing starts over
        self._config = config

    @property
    def counts(self) -> Mapping[DropReason, int]:
        """Return the dropped readings per reason (read-only live view)."""
        return self._counter.counts

    @property
    def accepted(self) -> int:
        """Return the number of readings that gave a body-frame skeleton."""
        return self._counter.accepted

    @property
    def restarts(self) -> int:
        """Return the number of sessions started by the stream going back (none at the start)."""
        return self._restarts

    def reset(self, *, keep_counts: bool = False) -> None:
        """
        Forget the followed body, the last stamp and the filter state.

        :param keep_counts: Keep every count (a new session of the same stream).
        """
        self.selector.reset()
        self.validator.reset(keep_counts=keep_counts)
        self.processor.reset()
        self._timelines.clear()
        if not keep_counts:
            self._counter.reset()
            self._restarts = 0

    def feed(self, reading: TrackerReading) -> SkeletonFrame | DropReason:
        """
        Turn one tracker reading into the followed person's body-frame skeleton.

        :param reading: Every body of one tracker message, ``'tracker'`` frame.
        :return: The smoothed skeleton in the ``'body'`` frame (19 rows, [m], valid rows
            finite), or why the reading was dropped.
        """
        if reading.bodies and math.isfinite(reading.stamp):  # else: nothing of the clock
            if not self._in_session(reading):
                self._counter.record(DropReason.OLD_STAMP)
                return DropReason.OLD_STAMP
        result = self._select(reading)
        if isinstance(result, DropReason):
            self._counter.record(result)
        else:
            self._counter.record(None)
            self._timelines.clear()  # the person goes on in the session: no new session
        return result

    def skip(self, reason: DropReason) -> None:
        """
        Count a reading that is not fed (e.g. superseded by a newer one), without looking at it.

        :param reason: Why it was skipped.
        """
        self._counter.record(reason)

    def _in_session(self, reading: TrackerReading) -> bool:
        """
        Whether a reading belongs to the session, starting a new one if the stream moved.

        A reading far behind the session goes to a candidate timeline (readings within
        :data:`TIMELINE_STEP` of each other, however many streams are interleaved on it; up to
        :data:`TIMELINES` of them, so that two streams behind the session, apart in time, are
        each followed), which any reading the session accepts forgets: a stray publisher, even
        interleaved with the person, never makes a new session while the person goes on.

        :return: False for a reading far behind the session that does not (yet) show a new
            session; True otherwise (a new session, if any, already started).
        """
        last = self.validator.last_stamp
        stamp = reading.stamp
        if last is None or not last - stamp > self._config.restart_after:
            return True
        self._arrivals += 1
        timeline = next(
            (line for line in self._timelines
             if line.first - TIMELINE_STEP <= stamp <= line.last + TIMELINE_STEP),
            None,
        )
        if timeline is None:
            if len(self._timelines) >= TIMELINES:  # the one left alone longest goes
                self._timelines.remove(min(self._timelines, key=lambda line: line.updated))
            timeline = _Timeline(stamp, stamp, reading.received, reading.received, count=0)
            self._timelines.append(timeline)
        elif stamp == timeline.last:
            return False  # a repeat of the candidate's last reading
        timeline.first, timeline.last = min(timeline.first, stamp), max(timeline.last, stamp)
        timeline.first_received = _least(timeline.first_received, reading.received)
        timeline.last_received = -_least(-timeline.last_received, -reading.received)
        timeline.count += 1
        timeline.near += self.selector.is_near(reading.bodies)
        timeline.updated = self._arrivals
        if timeline.count < RESTART_READINGS:
            return False
        if timeline.near < RESTART_READINGS and not self._lasted(timeline):
            return False
        self.validator.reset(keep_counts=True)
        self.processor.reset()
        self.selector.rebase(timeline.first, timeline.first_received)
        self._restarts += 1
        self._timelines.clear()
        return True

    def _lasted(self, timeline: _Timeline) -> bool:
        """Whether a candidate timeline has run for ``reacquire_after`` (and received so)."""
        wait = self._config.reacquire_after
        if not timeline.last - timeline.first >= wait:
            return False
        waited = timeline.last_received - timeline.first_received
        return not math.isfinite(waited) or waited >= wait  # NaN: receive times unknown

    def _select(self, reading: TrackerReading) -> SkeletonFrame | DropReason:
        tracked = self.selector.tracked_id
        acquisitions = self.selector.acquisitions
        frame = self.selector.select(reading.bodies, reading.received)
        if isinstance(frame, DropReason):
            return frame
        if self.selector.tracked_id != tracked or self.selector.acquisitions != acquisitions:
            self.processor.reset()
        reason = self.validator.check(frame)
        if reason is not None:
            return reason
        try:
            with np.errstate(over='ignore', invalid='ignore'):
                body = self.processor.process(frame)
        except SkeletonError:
            return DropReason.BAD_FRAME
        valid = body.valid
        kept = body.positions if valid.all() else body.positions[valid]  # invalid rows are NaN
        if not np.isfinite(kept).all():
            return DropReason.BAD_FRAME
        return body
