"""Frames lost upstream, counted from gaps in a tracker's own sequence."""

from __future__ import annotations

import numpy as np
from pic_ros.trackers.gaps import CONFIRM_READINGS, GapCounter
from pic_ros.trackers.marker_cdr import MarkerPositions
from pic_ros.trackers.markers import AZURE_KINECT, AZURE_KINECT_TO_HUMAN, MarkerArrayTracker
from pic_ros.trackers.xsens import XsensTracker
from pic_ros_tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
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
    for index in range(30):
        gaps.stamp(index * PERIOD)
    gaps.interrupt()
    gaps.stamp(40 * PERIOD)
    gaps.stamp(41 * PERIOD)
    for index in range(CONFIRM_READINGS):  # the stream goes on 3 s later
        gaps.stamp(41 * PERIOD + 3.0 + index * PERIOD)
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
    """Arrays with a body at 30 Hz, four missing (20..23): lost_upstream is 4."""
    tracker = MarkerArrayTracker(AZURE_KINECT)
    for index in [*range(20), *range(24, 30)]:
        tracker.decode(_array(index * PERIOD), index * PERIOD)
    assert tracker.status()['lost_upstream'] == 4
    assert tracker.status()['sequence_restarts'] == tracker.status()['sequence_pauses'] == 0


def _array(stamp: float) -> MarkerPositions:
    """One Azure Kinect array of body 1 (any pose: only the stamp matters here)."""
    ids = np.array(AZURE_KINECT_TO_HUMAN, dtype=np.int64) + 100
    points = np.tile([0.0, 0.0, 2.0], (ids.size, 1)) + np.arange(ids.size)[:, None] * 0.05
    return MarkerPositions(stamp, 'depth_camera_link', ids, points)


def test_the_xsens_tracker_reports_samples_missing_from_the_counter() -> None:
    """Samples 1..10 without 4 and 5: lost_upstream is 2."""
    tracker = XsensTracker()
    positions, quaternions = t_pose_segments()
    for counter in (1, 2, 3, 6, 7, 8, 9, 10):
        for datagram in build_mxtp02_datagrams(counter, 10 * counter, positions, quaternions):
            tracker.decode(datagram, counter * 0.01)
    assert tracker.status()['lost_upstream'] == 2


# --- Counters that stay true (issue 27) ---------------------------------------------------------


def _samples(counters: list[int]) -> list[tuple[int, list[bytes]]]:
    """Build the datagrams of a T-pose sample per counter."""
    positions, quaternions = t_pose_segments()
    return [
        (counter, build_mxtp02_datagrams(counter, counter % 1000, positions, quaternions))
        for counter in counters
    ]


def test_a_truncated_datagram_with_counter_2_31_is_no_loss_and_later_losses_count() -> None:
    """
    Regression: one truncated datagram with sample counter 2^31 - 1 among 1000 samples.

    Before, its counter was fed before the datagram was checked: lost_upstream became
    2,147,483,146 and the real losses after it were never counted. Now it is a counted drop
    (truncated) and lost_upstream is the 10 samples really lost.
    """
    tracker = XsensTracker()
    for counter, datagrams in _samples([*range(1, 1001), *range(1011, 1101)]):
        for datagram in datagrams:
            tracker.decode(datagram, counter / 240)
        if counter == 500:
            (bad,) = _samples([2**31 - 1])[0][1]
            tracker.decode(bad[:-40], counter / 240 + 1e-4)
    status = tracker.status()
    assert status['lost_upstream'] == 10
    assert status['xsens_dropped_truncated'] == 1
    assert status['xsens_samples'] == 1090


def test_a_valid_counter_jump_or_wrap_is_a_restart_not_losses() -> None:
    """A well-formed sample numbered 2^31 - 1, then the stream again, and a wrap: no loss."""
    tracker = XsensTracker()
    counters = [*range(1, 101), 2**31 - 1, *range(101, 201), 2**32 - 2, 2**32 - 1, 0, 1, 2]
    for step, (_, datagrams) in enumerate(_samples(counters)):
        for datagram in datagrams:
            tracker.decode(datagram, step / 240)
    status = tracker.status()
    assert status['lost_upstream'] == 0
    assert status['xsens_restarts'] >= 3  # up to 2^31 - 1, back, and the wrap


def test_a_large_skip_is_a_loss_when_the_time_allows_it() -> None:
    """5000 samples skipped after 30 s of silence are lost; after 10 ms they are a restart."""
    gaps = GapCounter()
    gaps.counter(1, 0.0)
    gaps.counter(5002, 30.0)
    assert gaps.lost == 5000 and gaps.restarts == 0
    gaps.counter(10003, 30.01)
    assert gaps.lost == 5000 and gaps.restarts == 1
    gaps.counter(10004, 30.02)
    assert gaps.lost == 5000


def _burst_stamps(count: int, share: float, seed: int) -> list[float]:
    """
    Publish stamps of a starved 30 Hz driver: ``share`` of the arrays come in bursts.

    A burst holds the arrays of a few periods and sends them 0.5 ms apart, stamped when sent.
    Nothing is lost.
    """
    rng = np.random.default_rng(seed)
    stamps: list[float] = []
    index = 0
    while len(stamps) < count:
        if rng.random() < share / 4:
            size = int(rng.integers(2, 7))
            sent = (index + size - 1) * PERIOD
            stamps.extend(sent + 0.0005 * k for k in range(size))
            index += size
        else:
            stamps.append(index * PERIOD)
            index += 1
    return stamps[:count]


@pytest.mark.parametrize('share', [0.2, 0.5])
def test_a_burst_stream_loses_nothing(share: float) -> None:
    """
    Regression: 3000 arrays, none lost, 20 % (or half) of them in bursts 0.5 ms apart.

    Before, the burst steps drove the median step towards 0.5 ms and the marker tracker counted
    390 (20 %) and 189,904 (half) arrays as lost; now none.
    """
    tracker = MarkerArrayTracker(AZURE_KINECT)
    for stamp in _burst_stamps(3000, share, seed=4):
        tracker.decode(_array(stamp), stamp)
    assert tracker.status()['lost_upstream'] == 0
    assert tracker.gaps.period == pytest.approx(PERIOD, rel=0.02)


def test_pairs_half_a_millisecond_apart_lose_nothing() -> None:
    """An array pair every two periods, 0.5 ms apart: none lost (196,238 counted before)."""
    gaps = GapCounter()
    for index in range(1500):
        for stamp in (index * 2 * PERIOD, index * 2 * PERIOD + 0.0005):
            gaps.stamp(stamp)
    assert gaps.lost == 0


def test_a_burst_pays_back_its_stall_and_a_real_loss_stays() -> None:
    """A stall of 5 periods then 5 arrays at once: nothing lost; one missing from a burst: 1."""
    gaps = GapCounter()
    stamps = [index * PERIOD for index in range(40)]
    stamps += [44 * PERIOD + 0.0005 * k for k in range(5)]  # arrays 40..44, held and sent
    stamps += [index * PERIOD for index in range(45, 60)]
    stamps += [64 * PERIOD + 0.0005 * k for k in range(4)]  # 60..64 held, one of them lost
    stamps += [index * PERIOD for index in range(65, 80)]
    for stamp in stamps:
        gaps.stamp(stamp)
    assert gaps.lost == 1


def test_late_and_repeated_arrays_are_no_losses() -> None:
    """Two arrays swapped, and one sent twice: no loss; the swap's step is paid back."""
    gaps = GapCounter()
    order = [*range(30), 31, 30, *range(32, 40), 39, *range(40, 60)]
    for index in order:
        gaps.stamp(index * PERIOD)
    assert gaps.lost == 0


@pytest.mark.parametrize('offset', [-3600.0, -10.0, -2.0, 2.0, 10.0, 2.2e9])
def test_one_stamp_off_the_sequence_is_ignored(offset: float) -> None:
    """One array stamped far behind or ahead (a glitch, a stray publisher): nothing changes."""
    gaps = GapCounter()
    for index in range(60):
        gaps.stamp(index * PERIOD)
        if index == 30:
            gaps.stamp(index * PERIOD + offset)
    assert (gaps.lost, gaps.restarts, gaps.pauses) == (0, 0, 0)


def test_a_sustained_new_timeline_starts_the_sequence_over() -> None:
    """A replay loop: the stamps go 80 s back and stay there; counted again from there."""
    gaps = GapCounter()
    for index in range(60):
        gaps.stamp(100.0 + index * PERIOD)
    for index in [*range(40), *range(42, 60)]:  # two arrays of the second loop lost
        gaps.stamp(20.0 + index * PERIOD)
    assert gaps.restarts == 1 and gaps.lost == 2


@pytest.mark.parametrize('kind', ['stamps', 'counters'])
def test_the_gap_counter_memory_is_bounded_whatever_the_stamps(kind: str) -> None:
    """Far-future, far-past, repeated and random stamps or counters: a bounded buffer."""
    rng = np.random.default_rng(7)
    gaps = GapCounter(window=64)
    for index in range(20_000):
        value = float(rng.choice([index * PERIOD, 2.2e9, -1e9, 0.0, rng.uniform(-10, 10)]))
        if kind == 'stamps':
            gaps.stamp(value)
        else:
            gaps.counter(int(abs(value)) % 2**32, index / 240)
        assert gaps.buffered <= 3 * 64
