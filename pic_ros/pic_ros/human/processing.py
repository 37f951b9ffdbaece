"""
From tracker skeletons to smoothed body-frame skeletons: the human half of the pipeline.

:class:`SkeletonProcessor` smooths the joints in the tracker frame (a time-constant exponential
filter by default, see :mod:`pic_ros.human.filters`) and expresses them in the body-centred human
frame (:mod:`pic_ros.human.body_frame`). The skeleton node and ``evaluate`` share it. The
footprint of the last processed skeleton (where the person stands and faces in the tracker
frame, which the body frame removes) is kept for the base follower.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from pic_ros.checks import check_number
from pic_ros.human.body_frame import body_axes, Footprint, footprint, to_body_frame
from pic_ros.human.extremities import screen_extremities
from pic_ros.human.filters import FILTER_KINDS, make_filter, SkeletonFilter
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import JOINT_COUNT, make_frame, SkeletonFrame

SMOOTHING: Final = ParameterDef(
    'smoothing', 'exponential',
    "Joint smoothing (kalman is the PIC paper's filter, about 1 s of lag)",
    choices=FILTER_KINDS,
)
"""The skeleton node's ``smoothing`` (:attr:`ProcessingConfig.smoothing`)."""

TIME_CONSTANT: Final = ParameterDef(
    'time_constant', 0.1, 'Time constant of the exponential smoothing', unit='s', low=0.0,
    high=10.0,
)
"""The skeleton node's ``time_constant`` (:attr:`ProcessingConfig.time_constant`)."""


@dataclass(frozen=True)
class ProcessingConfig:
    """
    Settings of the skeleton processing.

    :param smoothing: Filter kind: ``exponential`` (live default), ``kalman`` (the PIC paper's
        filter, about 1 s of lag) or ``none``.
    :param time_constant: Time constant of the exponential filter [s].
    :param reset_after: The exponential filter restarts after a gap longer than this [s].
    """

    smoothing: str = SMOOTHING.default
    time_constant: float = TIME_CONSTANT.default
    reset_after: float = 0.5

    def __post_init__(self) -> None:
        SMOOTHING.check(self.smoothing)
        TIME_CONSTANT.check(self.time_constant)
        check_number('reset_after', self.reset_after, 1e-3, 60.0)

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> ProcessingConfig:
        """
        Build the settings from parameter values.

        :param values: ``smoothing`` and ``time_constant`` (missing ones take their defaults).
        :return: The settings.
        :raises ConfigError: If a value is refused.
        """
        return cls(
            smoothing=values.get('smoothing', SMOOTHING.default),
            time_constant=float(values.get('time_constant', TIME_CONSTANT.default)),
        )

    def make_filter(self) -> SkeletonFilter:
        """
        Build the configured filter.

        :return: A new filter with no samples.
        """
        if self.smoothing == 'exponential':
            return make_filter(
                'exponential', time_constant=self.time_constant, reset_after=self.reset_after
            )
        return make_filter(self.smoothing)


class SkeletonProcessor:
    """
    Smooth tracker-frame skeletons and express them in the body frame.

    :attr:`footprint` is the smoothed footprint of the last skeleton :meth:`process` returned
    (None before the first, after :meth:`reset`, or when that skeleton had no pelvis).

    :param config: Processing settings.
    """

    def __init__(self, config: ProcessingConfig | None = None) -> None:
        self.config = config if config is not None else ProcessingConfig()
        self._filter = self.config.make_filter()
        self.footprint: Footprint | None = None

    def reset(self) -> None:
        """Forget the filter state (e.g. when the tracked person changes)."""
        self._filter.reset()
        self.footprint = None

    def process(self, frame: SkeletonFrame) -> SkeletonFrame:
        """
        Smooth one tracker-frame skeleton and convert it to the body frame.

        Implausible extremity points (face, hand tips, thumbs) are invalidated first
        (:func:`~pic_ros.human.extremities.screen_extremities`), so they never reach the filter.

        :param frame: Skeleton in the ``tracker`` frame, [m], stamp [s].
        :return: The smoothed skeleton in the ``body`` frame.
        :raises pic_ros.exceptions.SkeletonError: If the body frame cannot be built from the
            smoothed joints (missing or coincident shoulders).
        """
        frame = screen_extremities(frame)
        # What make_frame does, on the filter's output (a new array, owned from here on).
        points = self._filter.update(frame.stamp, frame.positions, frame.valid)
        if points.shape != (JOINT_COUNT, 3):
            smoothed = make_frame(frame.stamp, points, frame.valid)
        else:
            valid = np.isfinite(points).all(axis=1)
            valid &= frame.valid
            if not valid.all():
                points[~valid] = np.nan
            smoothed = SkeletonFrame(stamp=float(frame.stamp), positions=points, valid=valid)
        self.footprint = None
        axes = body_axes(smoothed)  # once per frame, for the body frame and the footprint
        body = to_body_frame(smoothed, axes)
        self.footprint = footprint(smoothed, axes)
        return body
