"""Tests of the joint-position filters: exponential (time constant), paper Kalman, pass-through."""

from __future__ import annotations

from collections.abc import Callable
import math
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.human.filters import (
    ExponentialFilter,
    FILTER_KINDS,
    KalmanFilter,
    make_filter,
    PassThroughFilter,
    SkeletonFilter,
)
from pic_ros_tools.recordings.kinect_v2_text import load_kinect_v2_recording
import pytest

FloatArray = npt.NDArray[np.float64]


def _step_response(rate: float, tau: float, step_time: float, duration: float) -> FloatArray:
    """
    Sample a unit step at ``rate`` [Hz] through an exponential filter.

    The input is 0 up to and including ``step_time`` [s] and 1 after it. Returns the outputs at
    the common 30 Hz instants ``k / 30`` s, shape (duration * 30 + 1,).
    """
    filt = ExponentialFilter(tau, reset_after=math.inf)
    stride = round(rate / 30.0)
    outputs = []
    for index in range(round(duration * rate) + 1):
        stamp = index / rate
        value = 1.0 if index / rate > step_time + 1e-12 else 0.0
        estimate = filt.update(stamp, [[value, -2.0 * value, 0.0]])
        if index % stride == 0:
            outputs.append(estimate[0, 0])
    return np.array(outputs)


# --- exponential filter ----------------------------------------------------------------------


def test_exponential_converges_to_a_constant_input(rng: np.random.Generator) -> None:
    """After many time constants the estimate equals a constant (12, 3) input."""
    target = rng.normal(size=(12, 3))
    filt = ExponentialFilter(0.1)
    filt.update(0.0, np.zeros((12, 3)))
    for index in range(1, 61):
        estimate = filt.update(index / 30.0, target)
    np.testing.assert_allclose(estimate, target, atol=1e-8)


def test_exponential_first_sample_initialises() -> None:
    """The first valid sample is returned as is (no lag from an arbitrary start value)."""
    filt = ExponentialFilter(5.0)
    np.testing.assert_array_equal(filt.update(3.0, [[1.0, 2.0, 3.0]]), [[1.0, 2.0, 3.0]])


def test_exponential_step_response_is_the_same_at_30_and_240_hz() -> None:
    """
    A step sampled at 30 Hz and at 240 Hz gives the same output at the common instants.

    The step happens just after t = 1 s, a sample instant of both streams. After one time
    constant the response is 1 - 1/e, whatever the rate.
    """
    tau = 0.2
    slow = _step_response(30.0, tau, step_time=1.0, duration=3.0)
    fast = _step_response(240.0, tau, step_time=1.0, duration=3.0)
    assert slow.shape == fast.shape == (91,)
    np.testing.assert_allclose(fast, slow, atol=1e-3)
    assert np.max(np.abs(fast - slow)) < 1e-12
    assert slow[30] == 0.0
    assert slow[36] == pytest.approx(1.0 - math.exp(-1.0), abs=1e-12)  # t = 1.2 s = step + tau


def test_exponential_alpha_follows_the_time_step() -> None:
    """A sample ``dt`` after the previous one moves the estimate by 1 - exp(-dt / tau)."""
    filt = ExponentialFilter(0.5)
    filt.update(0.0, [0.0])
    assert filt.update(0.1, [1.0])[0] == pytest.approx(1.0 - math.exp(-0.2))
    filt.reset()
    filt.update(0.0, [0.0])
    assert filt.update(0.3, [1.0])[0] == pytest.approx(1.0 - math.exp(-0.6))


def test_exponential_zero_time_constant_passes_through(rng: np.random.Generator) -> None:
    """With tau = 0 every valid sample is returned unchanged."""
    filt = ExponentialFilter(0.0)
    for index in range(5):
        sample = rng.normal(size=(12, 3))
        np.testing.assert_array_equal(filt.update(index * 0.03, sample), sample)


def test_exponential_invalid_rows_hold_their_estimate() -> None:
    """Invalid or NaN rows keep the previous estimate; a row first valid later initialises."""
    filt = ExponentialFilter(0.2)
    first = filt.update(0.0, [[1.0, 1.0], [5.0, 5.0], [9.0, 9.0]], valid=[True, True, False])
    np.testing.assert_array_equal(first[:2], [[1.0, 1.0], [5.0, 5.0]])
    assert np.all(np.isnan(first[2]))  # never valid yet
    second = filt.update(0.1, [[2.0, 2.0], [np.nan, 7.0], [8.0, 8.0]], valid=[False, True, True])
    np.testing.assert_array_equal(second[0], [1.0, 1.0])  # flagged invalid: held
    np.testing.assert_array_equal(second[1], [5.0, 5.0])  # NaN in the row: held, not ingested
    np.testing.assert_array_equal(second[2], [8.0, 8.0])  # first valid sample initialises
    third = filt.update(0.2, [[2.0, 2.0], [7.0, 7.0], [8.0, 8.0]])
    # Held rows catch up with the time elapsed since they were last ingested (0.2 s).
    expected = 1.0 + (2.0 - 1.0) * (1.0 - math.exp(-1.0))
    np.testing.assert_allclose(third[0], [expected, expected])
    assert np.all(np.isfinite(third))


def test_exponential_ignores_repeated_and_out_of_order_stamps() -> None:
    """A sample whose stamp is not after the last accepted one changes nothing."""
    filt = ExponentialFilter(0.2)
    filt.update(1.0, [0.0])
    before = filt.update(1.1, [1.0])
    np.testing.assert_array_equal(filt.update(1.1, [50.0]), before)
    np.testing.assert_array_equal(filt.update(0.9, [-50.0]), before)
    after = filt.update(1.2, [1.0])
    assert after[0] == pytest.approx(1.0 - math.exp(-1.0))  # 0.2 s of input 1 from 0


def test_exponential_gap_longer_than_reset_after_reinitialises() -> None:
    """After a gap longer than ``reset_after`` the new sample is taken as is."""
    filt = ExponentialFilter(0.2, reset_after=0.5)
    filt.update(0.0, [[0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(filt.update(0.6, [[1.0, 2.0, 3.0]]), [[1.0, 2.0, 3.0]])
    smoothed = filt.update(0.9, [[0.0, 0.0, 0.0]])  # 0.3 s: within reset_after, smoothed
    np.testing.assert_allclose(smoothed, np.exp(-1.5) * np.array([[1.0, 2.0, 3.0]]))


def test_exponential_row_lost_for_longer_than_reset_after_reinitialises() -> None:
    """A joint invalid for longer than ``reset_after`` restarts from its new measurement."""
    filt = ExponentialFilter(0.2, reset_after=0.5)
    filt.update(0.0, [[0.0], [0.0]])
    for index in range(1, 20):
        filt.update(index * 0.05, [[1.0], [0.0]], valid=[False, True])
    estimate = filt.update(1.0, [[1.0], [0.0]])
    np.testing.assert_array_equal(estimate, [[1.0], [0.0]])


def test_exponential_returns_copies() -> None:
    """Modifying a returned estimate does not change the filter state."""
    filt = ExponentialFilter(0.2)
    out = filt.update(0.0, [1.0, 2.0])
    out[:] = 100.0
    np.testing.assert_array_equal(filt.update(0.0, [3.0, 3.0]), [1.0, 2.0])


def test_exponential_reset_forgets_state_and_shape() -> None:
    """After reset() the next sample initialises, with any shape."""
    filt = ExponentialFilter(1.0)
    filt.update(0.0, [0.0, 0.0])
    filt.update(0.1, [1.0, 1.0])
    filt.reset()
    np.testing.assert_array_equal(filt.update(0.0, [[4.0, 5.0, 6.0]]), [[4.0, 5.0, 6.0]])


@pytest.mark.parametrize(
    ('params', 'message'),
    [
        ({'time_constant': -0.1}, r'time_constant must be >= 0 \[s\], got -0.1'),
        ({'time_constant': math.nan}, r'time_constant must be finite \[s\], got nan'),
        ({'time_constant': math.inf}, r'time_constant must be finite \[s\], got inf'),
        ({'time_constant': '0.1'}, r"time_constant must be a number \[s\], got '0.1'"),
        ({'time_constant': True}, r'time_constant must be a number'),
        ({'time_constant': 0.1, 'reset_after': 0.0}, r'reset_after must be > 0 \[s\], got 0.0'),
        ({'time_constant': 0.1, 'reset_after': -1}, r'reset_after must be > 0 \[s\], got -1.0'),
        ({'time_constant': 0.1, 'reset_after': math.nan}, r'reset_after must be finite or \+inf'),
    ],
)
def test_exponential_rejects_bad_parameters(params: dict[str, object], message: str) -> None:
    """Out-of-range parameters raise ConfigError with the exact reason."""
    with pytest.raises(ConfigError, match=message):
        ExponentialFilter(**params)  # type: ignore[arg-type]


def test_exponential_accepts_an_infinite_reset_after() -> None:
    """``reset_after = inf`` means a gap is never treated as a tracking loss."""
    filt = ExponentialFilter(1.0, reset_after=math.inf)
    filt.update(0.0, [0.0])
    assert filt.update(1000.0, [1.0])[0] == pytest.approx(1.0)
    assert filt.reset_after == math.inf
    assert filt.time_constant == 1.0


@pytest.mark.parametrize('make', [lambda: ExponentialFilter(0.1), KalmanFilter])
def test_filters_reject_shape_changes_and_bad_masks(make: Callable[[], SkeletonFilter]) -> None:
    """A sample of another shape, a wrong mask shape or a scalar raises SkeletonError."""
    filt = make()
    filt.update(0.0, np.zeros((12, 3)))
    with pytest.raises(SkeletonError, match='shape changed'):
        filt.update(0.1, np.zeros((11, 3)))
    with pytest.raises(SkeletonError, match=r'validity must have shape \(12,\)'):
        filt.update(0.1, np.zeros((12, 3)), valid=np.ones(3, dtype=bool))
    with pytest.raises(SkeletonError, match='at least one axis'):
        make().update(0.0, 1.0)


def test_exponential_rejects_a_non_finite_stamp() -> None:
    """A NaN stamp raises SkeletonError (it cannot be ordered)."""
    with pytest.raises(SkeletonError, match='stamp'):
        ExponentialFilter(0.1).update(math.nan, [1.0])


_finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def _sample_streams(
    draw: st.DrawFn,
) -> tuple[float, float, list[tuple[float, FloatArray, npt.NDArray[np.bool_]]]]:
    """Draw tau, reset_after and a stream of (dt, values (rows, 2), valid (rows,)) samples."""
    tau = draw(st.floats(0.0, 5.0))
    reset_after = draw(st.floats(0.01, 2.0))
    rows = draw(st.integers(1, 4))
    count = draw(st.integers(1, 25))
    stream = []
    for _ in range(count):
        dt = draw(st.one_of(st.just(0.0), st.floats(-0.1, 1.0)))
        values = np.array(draw(st.lists(_finite, min_size=2 * rows, max_size=2 * rows)))
        valid = np.array(draw(st.lists(st.booleans(), min_size=rows, max_size=rows)))
        stream.append((dt, values.reshape(rows, 2), valid))
    return tau, reset_after, stream


@settings(max_examples=300, deadline=None)
@given(_sample_streams())
def test_exponential_output_stays_within_the_range_of_its_inputs(
    case: tuple[float, float, list[tuple[float, FloatArray, npt.NDArray[np.bool_]]]],
) -> None:
    """
    Every output coordinate lies within the range of the valid inputs accepted so far.

    It is never NaN once its row has had a finite valid input, and NaN before that.
    """
    tau, reset_after, stream = case
    filt = ExponentialFilter(tau, reset_after=reset_after)
    stamp = 0.0
    last_accepted: float | None = None
    low = high = None
    for dt, values, valid in stream:
        stamp += dt
        output = filt.update(stamp, values, valid)
        if last_accepted is None or stamp > last_accepted:
            last_accepted = stamp
            if low is None or high is None:
                low = np.where(valid[:, None], values, np.inf)
                high = np.where(valid[:, None], values, -np.inf)
            else:
                low = np.where(valid[:, None], np.minimum(low, values), low)
                high = np.where(valid[:, None], np.maximum(high, values), high)
        assert low is not None and high is not None
        seen = np.isfinite(low)
        assert np.all(np.isfinite(output[seen]))
        assert np.all(np.isnan(output[~seen]))
        assert np.all(output[seen] >= low[seen])
        assert np.all(output[seen] <= high[seen])


def test_exponential_smooths_a_row_the_same_whether_or_not_another_row_is_held(
    rng: np.random.Generator,
) -> None:
    """
    A row's estimate does not depend on whether the other rows were valid (bit for bit).

    Frames where every row is smoothed after one shared gap take a whole-array path with one
    blend, frames with a held row the row-by-row one, and the frame after it (rows last
    ingested at different times) a blend per row: all give the smoothed rows the same numbers.
    """
    all_valid = ExponentialFilter(0.1, reset_after=math.inf)
    one_held = ExponentialFilter(0.1, reset_after=math.inf)
    for index in range(200):
        values = rng.normal(size=(4, 3))
        valid = np.ones(4, dtype=bool)
        valid[3] = index % 3 != 0  # the last row held on every third frame
        stamp = index / 30.0 + rng.uniform(0.0, 0.01)
        whole = all_valid.update(stamp, values)
        picked = one_held.update(stamp, values, valid)
        np.testing.assert_array_equal(whole[:3], picked[:3])


# --- paper Kalman filter ---------------------------------------------------------------------


def test_kalman_reproduces_the_paper_reference_file(shared_data: Path) -> None:
    """
    Column-by-column Kalman over assembly1 equals kalman_smooth_assembly1_skel.txt to 1e-9.

    That file is the paper's own filter output (Q = 1e-5, R = 0.01, x0 = 0, P0 = 1); its row 0
    is all zeros.
    """
    folder = shared_data / 'pic_demos'
    recording = load_kinect_v2_recording(folder / 'assembly1_skel.txt')
    reference = np.loadtxt(folder / 'kalman_smooth_assembly1_skel.txt')
    filt = KalmanFilter()
    output = np.array(
        [filt.update(stamp, joints) for stamp, joints in zip(recording.stamps, recording.joints)]
    )
    assert output.shape == (1404, 25, 3)
    assert reference.shape == (1404, 75)
    np.testing.assert_array_equal(output[0], np.zeros((25, 3)))
    np.testing.assert_allclose(output.reshape(1404, 75), reference, rtol=0.0, atol=1e-9)


def test_kalman_gain_sequence_matches_the_paper() -> None:
    """The gains at frames 1, 2, 5, 10, 20 are about 0.99, 0.50, 0.20, 0.10, 0.056."""
    filt = KalmanFilter()
    filt.update(0.0, [0.0])
    gains = {}
    for frame in range(1, 41):
        before = filt.variance
        assert before is not None
        filt.update(0.0, [0.0])
        predicted = before[0] + 1e-5
        gains[frame] = predicted / (predicted + 0.01)
    for frame, gain in ((1, 0.99), (2, 0.50), (5, 0.20), (10, 0.10), (20, 0.056), (40, 0.037)):
        assert gains[frame] == pytest.approx(gain, abs=0.005)


def test_kalman_first_output_is_the_initial_estimate() -> None:
    """The first sample is not ingested: the output is x0, like row 0 of the paper's files."""
    filt = KalmanFilter(initial_estimate=0.25)
    np.testing.assert_array_equal(filt.update(0.0, [[1.0, 2.0]]), [[0.25, 0.25]])
    second = filt.update(0.0, [[1.0, 2.0]])  # stamps are ignored: a repeated stamp is a step
    gain = (1.0 + 1e-5) / (1.0 + 1e-5 + 0.01)
    np.testing.assert_allclose(second, [[0.25 + gain * 0.75, 0.25 + gain * 1.75]])


def test_kalman_converges_to_a_constant_input() -> None:
    """A constant input is approached geometrically (gain settles near 0.031)."""
    filt = KalmanFilter()
    for frame in range(600):
        estimate = filt.update(frame / 30.0, [[0.3, -0.2, 1.9]])
    np.testing.assert_allclose(estimate, [[0.3, -0.2, 1.9]], atol=1e-6)


def test_kalman_invalid_rows_hold_estimate_and_variance() -> None:
    """Invalid rows are neither updated nor predicted; rows never valid are NaN."""
    filt = KalmanFilter()
    filt.update(0.0, [[1.0], [1.0], [1.0]], valid=[True, True, False])
    step = filt.update(0.0, [[1.0], [1.0], [1.0]], valid=[True, True, False])
    held = filt.update(0.0, [[5.0], [1.0], [1.0]], valid=[False, True, False])
    assert held[0, 0] == step[0, 0]
    assert np.isnan(held[2, 0])
    variance = filt.variance
    assert variance is not None
    assert variance[0, 0] > variance[1, 0]


@pytest.mark.parametrize(
    ('params', 'message'),
    [
        ({'process_variance': -1e-5}, r'process_variance must be >= 0'),
        ({'measurement_variance': 0.0}, r'measurement_variance must be > 0'),
        ({'initial_variance': math.inf}, r'initial_variance must be finite'),
        ({'initial_estimate': math.nan}, r'initial_estimate must be finite'),
    ],
)
def test_kalman_rejects_bad_parameters(params: dict[str, float], message: str) -> None:
    """Out-of-range Kalman parameters raise ConfigError with the reason."""
    with pytest.raises(ConfigError, match=message):
        KalmanFilter(**params)


def test_kalman_accepts_a_negative_initial_estimate() -> None:
    """The initial estimate is a position, so it may be negative."""
    assert KalmanFilter(initial_estimate=-1.5).initial_estimate == -1.5


# --- pass-through and factory ----------------------------------------------------------------


def test_pass_through_returns_valid_rows_unchanged() -> None:
    """The 'none' filter returns valid rows as given and holds invalid ones."""
    filt = PassThroughFilter()
    np.testing.assert_array_equal(filt.update(0.0, [[1.0], [2.0]]), [[1.0], [2.0]])
    out = filt.update(10.0, [[3.0], [4.0]], valid=[True, False])
    np.testing.assert_array_equal(out, [[3.0], [2.0]])


def test_make_filter_builds_each_kind() -> None:
    """make_filter maps each kind to its class with the given parameters."""
    exponential = make_filter('exponential', time_constant=0.15, reset_after=1.0)
    assert isinstance(exponential, ExponentialFilter)
    assert (exponential.time_constant, exponential.reset_after) == (0.15, 1.0)
    kalman = make_filter('kalman', measurement_variance=0.02)
    assert isinstance(kalman, KalmanFilter)
    assert kalman.measurement_variance == 0.02
    assert isinstance(make_filter('none'), PassThroughFilter)
    assert FILTER_KINDS == ('exponential', 'kalman', 'none')


@pytest.mark.parametrize(
    ('kind', 'params', 'message'),
    [
        ('median', {}, r"unknown filter kind 'median'; valid kinds: 'exponential', 'kalman'"),
        ('Kalman', {}, r'valid kinds'),
        ('exponential', {}, r'needs time_constant'),
        ('exponential', {'time_constant': 0.1, 'alpha': 0.6}, r'unknown parameter\(s\).*alpha'),
        ('none', {'time_constant': 0.1}, r"for the 'none' filter: time_constant; valid: none"),
        ('exponential', {'time_constant': -1.0}, r'time_constant must be >= 0'),
    ],
)
def test_make_filter_rejects_bad_configuration(
    kind: str, params: dict[str, float], message: str
) -> None:
    """Unknown kinds and parameters, missing or bad values raise ConfigError."""
    with pytest.raises(ConfigError, match=message):
        make_filter(kind, **params)
