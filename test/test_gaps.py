"""Frames lost upstream, counted from gaps in a tracker's own sequence."""

from __future__ import annotations

import numpy as np
from pic_ros.tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
from pic_ros.trackers.gaps import GapCounter
from pic_ros.trackers.marker_cdr import MarkerPositions
from pic_ros.trackers.markers import AZURE_KINECT, AZURE_KINECT_TO_HUMAN, MarkerArrayTracker
from pic_ros.trackers.xsens import XsensTracker
import pytest

PERIOD = 1 / 30
"""A 30 Hz camera [s]."""


def test_every_skipped_counter_is_one_lost_frame() -> None:
    """Counters 1, 2, 5, 6, 10: 2 + 3 = 5 frames never arrived."""
    gaps = GapCounter()
    for value in (1, 2, 5, 6, 10):
        gaps.counter(value)
    assert gaps.lost == 5


def test_repeated_and_late_counters_are_not_losses() -> None:
    """Several datagrams of one sample, or a late one, count nothing."""
    gaps = GapCounter()
    for value in (1, 1, 1, 2, 2, 1, 3):
        gaps.counter(value)
    assert gaps.lost == 0


def test_a_restart_starts_the_sequence_over_and_keeps_the_count() -> None:
    """After restart(), the first counter is not compared with the old sequence."""
    gaps = GapCounter()
    for value in (100, 103):
        gaps.counter(value)
    gaps.restart()
    for value in (1, 2):
        gaps.counter(value)
    assert gaps.lost == 2


@pytest.mark.parametrize('missing', [1, 2, 7])
def test_a_stamp_step_of_several_periods_counts_the_missing_frames(missing: int) -> None:
    """With a steady 30 Hz (and jitter), a step of k + 1 periods is k lost frames."""
    rng = np.random.default_rng(3)
    gaps = GapCounter()
    stamps = list(np.arange(0.0, 1.0, PERIOD) + rng.uniform(-0.002, 0.002, 30))
    stamps.append(stamps[-1] + (missing + 1) * PERIOD)
    stamps.append(stamps[-1] + PERIOD)
    for stamp in stamps:
        gaps.stamp(float(stamp))
    assert gaps.lost == missing
    assert gaps.period == pytest.approx(PERIOD, abs=0.003)


def test_an_empty_reading_explains_the_step_and_long_pauses_are_not_losses() -> None:
    """A step across an empty array, or longer than max_gap, counts no lost frame."""
    gaps = GapCounter(max_gap=1.0)
    for index in range(10):
        gaps.stamp(index * PERIOD)
    gaps.interrupt()
    gaps.stamp(20 * PERIOD)
    gaps.stamp(21 * PERIOD)
    gaps.stamp(21 * PERIOD + 3.0)
    assert gaps.lost == 0 and gaps.pauses == 1


def test_stamps_going_back_start_over_without_counting() -> None:
    """A replay loop: the stamps jump back, nothing is lost."""
    gaps = GapCounter()
    for loop in range(2):
        for index in range(20):
            gaps.stamp(index * PERIOD)
        del loop
    assert gaps.lost == 0


def test_the_marker_tracker_reports_arrays_lost_between_bodies() -> None:
    """Arrays with a body at 30 Hz, four missing (10..13): lost_upstream is 4."""
    tracker = MarkerArrayTracker(AZURE_KINECT)
    ids = np.array(AZURE_KINECT_TO_HUMAN, dtype=np.int64) + 100
    points = np.tile([0.0, 0.0, 2.0], (ids.size, 1)) + np.arange(ids.size)[:, None] * 0.05
    for index in [*range(10), *range(14, 20)]:
        tracker.decode(MarkerPositions(index * PERIOD, 'depth_camera_link', ids, points), 0.0)
    assert tracker.status()['lost_upstream'] == 4


def test_the_xsens_tracker_reports_samples_missing_from_the_counter() -> None:
    """Samples 1..10 without 4 and 5: lost_upstream is 2."""
    tracker = XsensTracker()
    positions, quaternions = t_pose_segments()
    for counter in (1, 2, 3, 6, 7, 8, 9, 10):
        for datagram in build_mxtp02_datagrams(counter, 10 * counter, positions, quaternions):
            tracker.decode(datagram, counter * 0.01)
    assert tracker.status()['lost_upstream'] == 2
