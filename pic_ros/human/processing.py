"""
From tracker skeletons to smoothed body-frame skeletons: the human half of the pipeline.

:class:`SkeletonProcessor` smooths the joints in the tracker frame (a time-constant exponential
filter by default, see :mod:`pic_ros.human.filters`) and expresses them in the body-centred human
frame (:mod:`pic_ros.human.body_frame`). The skeleton node and ``evaluate`` share it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pic_ros.checks import check_choice, check_number
from pic_ros.human.body_frame import to_body_frame
from pic_ros.human.filters import FILTER_KINDS, make_filter, SkeletonFilter
from pic_ros.human.skeleton import make_frame, SkeletonFrame


@dataclass(frozen=True)
class ProcessingConfig:
    """
    Settings of the skeleton processing.

    :param smoothing: Filter kind: ``exponential`` (live default), ``kalman`` (the PIC paper's
        filter, about 1 s of lag) or ``none``.
    :param time_constant: Time constant of the exponential filter [s].
    :param reset_after: The exponential filter restarts after a gap longer than this [s].
    """

    smoothing: str = 'exponential'
    time_constant: float = 0.1
    reset_after: float = 0.5

    def __post_init__(self) -> None:
        check_choice('smoothing', self.smoothing, FILTER_KINDS)
        check_number('time_constant', self.time_constant, 0.0, 10.0)
        check_number('reset_after', self.reset_after, 1e-3, 60.0)

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

    :param config: Processing settings.
    """

    def __init__(self, config: ProcessingConfig | None = None) -> None:
        self.config = config if config is not None else ProcessingConfig()
        self._filter = self.config.make_filter()

    def reset(self) -> None:
        """Forget the filter state (e.g. when the tracked person changes)."""
        self._filter.reset()

    def process(self, frame: SkeletonFrame) -> SkeletonFrame:
        """
        Smooth one tracker-frame skeleton and convert it to the body frame.

        :param frame: Skeleton in the ``tracker`` frame, [m], stamp [s].
        :return: The smoothed skeleton in the ``body`` frame.
        :raises pic_ros.exceptions.SkeletonError: If the body frame cannot be built from the
            smoothed joints (missing or coincident shoulders).
        """
        smoothed = self._filter.update(frame.stamp, frame.positions, frame.valid)
        return to_body_frame(make_frame(frame.stamp, smoothed, frame.valid))
