"""
Lag and motion metrics on signals whose answers are known: delays, sines, limits.

The definitions are in :mod:`pic_ros_tools.metrics` (lag, motion against limits).
"""

from __future__ import annotations

import math

import numpy as np
from pic_ros_tools.metrics import (
    best_delay,
    derivatives,
    LAG_STEP,
    limit_share,
    share_at_limit,
    window_delays,
)
import pytest


def _wave(t):
    """Return a reference with motion at several rates (no period within the delays searched)."""
    return 1.2 + 0.4 * np.sin(1.3 * t) + 0.2 * np.sin(3.7 * t + 0.5)


@pytest.mark.parametrize('delay', [0.0, 0.035, 0.12, 0.3])
def test_a_follower_delayed_by_a_known_time_gives_that_lag(delay):
    """A follower that is the reference ``delay`` later has that lag, to one search step."""
    times = np.arange(0.0, 20.0, 1.0 / 30.0)
    samples = np.arange(-1.0, 21.0, 0.005)
    lag = best_delay(times, _wave(times), samples, _wave(samples - delay))
    assert lag == pytest.approx(delay, abs=LAG_STEP / 2.0 + 1e-9)


def test_window_delays_skip_still_windows_and_find_the_delay_in_the_others():
    """Windows where the reference does not move are not counted; moving ones give the delay."""
    times = np.arange(0.0, 12.0, 1.0 / 30.0)
    reference = np.where(times < 6.0, 1.0, _wave(times))
    samples = np.arange(-1.0, 13.0, 0.005)
    follower = np.interp(samples - 0.08, times, reference)
    delays = window_delays(times, reference, samples, follower)
    assert 3 <= delays.size <= 6
    assert np.allclose(delays, 0.08, atol=LAG_STEP)


def test_best_delay_without_samples_is_nan():
    """No finite reference sample: no lag."""
    assert math.isnan(best_delay([0.0, 1.0], [math.nan, math.nan], [0.0, 1.0], [1.0, 2.0]))


def test_a_sine_has_its_known_peak_velocity_acceleration_and_jerk():
    """``A sin(w t)`` peaks at ``A w``, ``A w^2`` and ``A w^3``; RMS is the peak over sqrt 2."""
    amplitude, omega = 0.7, 2.0 * math.pi * 0.8
    times = np.arange(0.0, 10.0, 0.001)
    positions = np.column_stack((amplitude * np.sin(omega * times), np.zeros(times.size)))
    moved = derivatives(times, positions)
    for order, values in enumerate((moved.velocity, moved.acceleration, moved.jerk), start=1):
        peak = amplitude * omega**order
        assert values.shape == (times.size - order, 2)
        assert np.max(np.abs(values[:, 0])) == pytest.approx(peak, rel=2e-3)
        share = limit_share(values, [peak, 1.0])
        assert share.peak == pytest.approx(1.0, rel=2e-3)
        # RMS over both joints: the second one never moves.
        assert share.rms == pytest.approx(1.0 / 2.0, rel=5e-3)


def test_uneven_sampling_is_differentiated_by_the_real_time_steps():
    """A ramp sampled at irregular times has its slope everywhere and no acceleration."""
    rng = np.random.default_rng(3)
    times = np.cumsum(rng.uniform(0.002, 0.02, 500))
    times = np.concatenate((times[:100], times[99:]))  # a repeated sample is dropped
    moved = derivatives(times, 0.4 * times[:, None])
    assert np.allclose(moved.velocity, 0.4)
    assert np.allclose(moved.acceleration, 0.0, atol=1e-9)


def test_a_jerk_limited_motion_sampled_unevenly_never_reads_above_its_jerk():
    """
    Jerk switching between +-1 every 20 ms, sampled every 4 ms / 6 ms: the jerk reads <= 1.

    Divided differences average the true derivative with non-negative weights; difference
    quotients at midpoints read 7 % high on this sampling (a 5 ms timer on a 2 ms grid).
    """
    step = 1e-5
    fine = np.arange(0.0, 1.0, step)
    jerk = np.where((fine // 0.02) % 2 == 0, 1.0, -1.0)
    acceleration = np.cumsum(jerk) * step
    velocity = np.cumsum(acceleration) * step
    position = np.cumsum(velocity) * step
    times = 0.01 + np.cumsum(np.tile([0.004, 0.006], 90))
    moved = derivatives(times, np.interp(times, fine, position)[:, None])
    assert np.max(np.abs(moved.jerk)) <= 1.0 + 1e-6
    assert np.max(np.abs(moved.jerk)) >= 0.99  # and it does read the peak
    assert np.max(np.abs(moved.acceleration)) <= 0.02 + 1e-6


def test_limit_share_counts_samples_beyond_and_share_at_limit_the_samples_at_it():
    """One sample over a limit is one violation; samples at 99 % or more count as at the limit."""
    values = np.array([[0.5, 0.0], [1.0, 0.0], [0.0, -2.2], [0.1, 0.1]])
    limits = np.array([1.0, 2.0])
    share = limit_share(values, limits)
    assert share.peak == pytest.approx(1.1)
    assert share.beyond == 1
    assert share_at_limit(values, limits) == pytest.approx(0.5)
    assert limit_share(np.zeros((0, 2)), limits).beyond == 0
    assert math.isnan(share_at_limit(np.zeros((0, 2)), limits))
