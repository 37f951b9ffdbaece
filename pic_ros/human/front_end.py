"""
The skeleton node's core: tracker readings in, the followed person's body-frame skeleton out.

:class:`SkeletonFrontEnd` takes the :class:`~pic_ros.trackers.base.TrackerReading` of every
tracker message and composes, whatever the tracker:

1. **sessions**: a stamp older than the last accepted one by more than ``restart_after`` starts
   a new session (a looping replay, a restarted tracker): the followed body, the last stamp and
   the smoothing are forgotten, the counts kept, and :attr:`SkeletonFrontEnd.restarts` counts
   it. A smaller step back is an old frame and is dropped (``OLD_STAMP``);
2. **selection** (:class:`~pic_ros.trackers.frames.BodySelector`): one person followed across
   readings by body id; after a gap of ``switch_after``, by place (``reacquire_radius``), or as
   a new person after ``reacquire_after``;
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
from pic_ros.human.skeleton import SkeletonFrame
from pic_ros.schema import ParameterDef
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
    'A stamp older than the last accepted one by more than this starts a new session (a '
    'looping replay, a tracker restart) instead of being dropped',
    unit='s', low=0.0, high=3600.0,
)
"""The skeleton node's ``restart_after`` (:attr:`FrontEndConfig.restart_after`)."""


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
    :param restart_after: Step back of the stamps that starts a new session [s]
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
        """Return the number of sessions started by a stamp going back (none at the start)."""
        return self._restarts

    def reset(self, *, keep_counts: bool = False) -> None:
        """
        Forget the followed body, the last stamp and the filter state.

        :param keep_counts: Keep every count (a new session of the same stream).
        """
        self.selector.reset()
        self.validator.reset(keep_counts=keep_counts)
        self.processor.reset()
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
        if reading.bodies:  # a reading without bodies says nothing of the stream's clock
            self._check_session(reading.stamp)
        result = self._select(reading)
        self._counter.record(result if isinstance(result, DropReason) else None)
        return result

    def skip(self, reason: DropReason) -> None:
        """
        Count a reading that is not fed (e.g. superseded by a newer one), without looking at it.

        :param reason: Why it was skipped.
        """
        self._counter.record(reason)

    def _check_session(self, stamp: float) -> None:
        last = self.validator.last_stamp
        if last is None or not math.isfinite(stamp):
            return  # nothing accepted yet, or a reading without stamp (an empty array)
        if last - stamp > self._config.restart_after:
            self.reset(keep_counts=True)
            self._restarts += 1

    def _select(self, reading: TrackerReading) -> SkeletonFrame | DropReason:
        tracked = self.selector.tracked_id
        acquisitions = self.selector.acquisitions
        frame = self.selector.select(reading.bodies)
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
        if not np.all(np.isfinite(body.positions[body.valid])):
            return DropReason.BAD_FRAME
        return body
