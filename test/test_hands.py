"""Open/closed hands: a scale-free aperture, hysteresis, dwell, holding while unseen."""

from __future__ import annotations

import math

from human_poses import BODY
import numpy as np
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.human.hands import (
    hand_aperture,
    HandConfig,
    HandEstimate,
    HandState,
    HandStateTracker,
    MAX_APERTURE,
    MAX_PAUSE,
)
from pic_ros.skeleton import HAND_JOINTS, HumanJoint, make_frame, Side, SkeletonFrame
import pytest

WIDTH = float(np.linalg.norm(BODY[HumanJoint.SHOULDER_LEFT] - BODY[HumanJoint.SHOULDER_RIGHT]))
CONFIG = HandConfig(close_below=0.35, open_above=0.5, dwell=0.3)
OPEN, CLOSED, UNKNOWN = HandState.OPEN, HandState.CLOSED, HandState.UNKNOWN


def _frame(stamp: float, left: float | None, right: float | None = 0.7) -> SkeletonFrame:
    """Return the body-frame test person with each hand's aperture set (None: points missing)."""
    points = BODY.copy()
    for side, aperture in ((Side.LEFT, left), (Side.RIGHT, right)):
        _, hand, tip, thumb = HAND_JOINTS[side]
        if aperture is None:
            points[[tip, thumb]] = np.nan
            continue
        half = 0.5 * aperture * WIDTH
        points[tip] = points[hand] + (half, 0.0, 0.0)
        points[thumb] = points[tip] + (0.0, 0.0, half)
    return make_frame(stamp, points, frame='body')


def _states(apertures: list[float | None], rate: float = 30.0, start: float = 0.0):
    """Feed left-hand apertures at a rate [Hz]; return the left hand's estimates."""
    tracker = HandStateTracker(CONFIG)
    return [
        tracker.update(_frame(start + index / rate, value))[Side.LEFT]
        for index, value in enumerate(apertures)
    ]


def test_aperture_is_the_finger_spread_over_the_shoulder_width_for_any_size():
    """The same hand pose on a person scaled by any factor gives the same aperture."""
    frame = _frame(0.0, 0.62)
    assert hand_aperture(frame, Side.LEFT) == pytest.approx(0.62)
    for scale in (0.6, 1.3, 2.0):
        scaled = make_frame(0.0, frame.positions * scale, frame='body')
        assert hand_aperture(scaled, Side.LEFT) == pytest.approx(0.62)


def test_aperture_is_none_for_missing_or_implausible_points():
    """A missing finger point, or a spread beyond MAX_APERTURE, gives no aperture."""
    assert hand_aperture(_frame(0.0, None), Side.LEFT) is None
    assert hand_aperture(_frame(0.0, MAX_APERTURE + 0.1), Side.LEFT) is None
    assert hand_aperture(_frame(0.0, 0.2), Side.RIGHT) == pytest.approx(0.7)


def test_the_state_is_unknown_before_the_first_state():
    """A hand that was never seen open or closed is UNKNOWN, also inside the band."""
    estimates = _states([None] * 10 + [0.42] * 20)
    assert all(estimate.state is UNKNOWN for estimate in estimates)
    assert not any(estimate.seen for estimate in estimates)


def test_a_state_is_taken_after_the_dwell():
    """A state indicated continuously is taken at the first frame at least the dwell later."""
    estimates = _states([0.2] * 30)
    taken = [index for index, estimate in enumerate(estimates) if estimate.state is CLOSED]
    assert taken[0] / 30.0 >= CONFIG.dwell
    assert taken[0] / 30.0 < CONFIG.dwell + 1.0 / 30.0 + 1e-9
    assert taken == list(range(taken[0], 30))


@pytest.mark.parametrize('band_value', [0.351, 0.42, 0.499])
def test_values_inside_the_band_never_change_the_state(band_value):
    """Hysteresis: after OPEN, any time inside the band keeps OPEN; so does CLOSED."""
    for first, expected in ((0.7, OPEN), (0.2, CLOSED)):
        estimates = _states([first] * 20 + [band_value] * 100)
        assert [estimate.state for estimate in estimates[20:]] == [expected] * 100
        assert not any(estimate.seen for estimate in estimates[20:])


@pytest.mark.parametrize('flicker_frames', [1, 3, 8])
def test_a_flicker_shorter_than_the_dwell_never_changes_the_state(flicker_frames):
    """Closed-looking frames lasting less than the dwell, repeated, leave an open hand open."""
    assert (flicker_frames - 1) / 30.0 < CONFIG.dwell
    pattern = [0.7] * 20 + ([0.1] * flicker_frames + [0.7] * 2) * 15
    estimates = _states(pattern)
    assert all(estimate.state is OPEN for estimate in estimates[20:])


def test_an_unseen_hand_keeps_its_last_state():
    """Missing points or a band value hold the state; a state is never taken from a gap."""
    estimates = _states([0.2] * 20 + [None] * 60 + [0.45] * 30 + [None] * 10)
    assert [estimate.state for estimate in estimates[20:]] == [CLOSED] * 100
    assert all(math.isnan(estimate.aperture) for estimate in estimates[20:80])


def test_a_contrary_frame_restarts_the_wait_and_a_gap_does_not():
    """Closed frames interrupted by open ones never close; interrupted by gaps they do."""
    contrary = _states([0.7] * 20 + ([0.2] * 6 + [0.7]) * 10)
    assert all(estimate.state is OPEN for estimate in contrary[20:])
    gaps = _states([0.7] * 20 + ([0.2] * 6 + [None, 0.42]) * 10)
    closed = [index for index, estimate in enumerate(gaps) if estimate.state is CLOSED]
    assert closed and (closed[0] - 20) / 30.0 >= CONFIG.dwell
    assert gaps[closed[0]].seen  # taken at a frame that indicates it


def test_a_pause_in_the_frames_restarts_the_wait():
    """
    A wait never runs through a pause longer than MAX_PAUSE; a pause up to it is run through.

    One closed frame, 12 s without frames, one more closed frame (the next person's first) keep
    the hand open; the dwell counts again from the frame after the pause.
    """
    tracker = HandStateTracker(CONFIG)
    for index in range(60):
        tracker.update(_frame(index / 30.0, 0.7))
    start = 59 / 30.0
    assert tracker.update(_frame(start + 1 / 30.0, 0.2))[Side.LEFT].state is OPEN
    later = start + 12.0
    assert tracker.update(_frame(later, 0.2))[Side.LEFT].state is OPEN
    states = [tracker.update(_frame(later + k / 30.0, 0.2))[Side.LEFT].state for k in range(1, 12)]
    first = states.index(CLOSED) + 1  # frames after the one that followed the pause
    assert abs(first / 30.0 - CONFIG.dwell) <= 1 / 30.0 + 1e-9
    through = HandStateTracker(CONFIG)
    for index in range(30):
        through.update(_frame(index / 30.0, 0.7))
    through.update(_frame(1.0, 0.2))
    assert through.update(_frame(1.0 + MAX_PAUSE, 0.2))[Side.LEFT].state is OPEN
    assert through.update(_frame(1.0 + CONFIG.dwell, 0.2))[Side.LEFT].state is CLOSED


def test_the_state_changes_at_most_once_per_dwell():
    """Whatever the input, two state changes are at least the dwell apart."""
    rng = np.random.default_rng(5)
    values: list[float | None] = []
    while len(values) < 3000:  # runs of 1 to 20 frames of one value
        value = rng.choice([0.1, 0.42, 0.8, -1.0])
        values += [None if value < 0 else float(value)] * int(rng.integers(1, 21))
    estimates = _states(values)
    changes = [
        index / 30.0
        for index in range(1, len(estimates))
        if estimates[index].state is not estimates[index - 1].state
    ]
    assert changes
    assert np.all(np.diff(changes) >= CONFIG.dwell - 1e-9)


def test_the_same_input_gives_the_same_output():
    """The tracker is a deterministic function of its input sequence (and reset restarts it)."""
    rng = np.random.default_rng(9)
    values = [float(value) for value in rng.uniform(0.0, 1.0, 300)]
    tracker = HandStateTracker(CONFIG)
    first = [tracker.update(_frame(index / 30.0, value)) for index, value in enumerate(values)]
    tracker.reset()
    second = [tracker.update(_frame(index / 30.0, value)) for index, value in enumerate(values)]
    assert [dict(item) for item in first] == [dict(item) for item in second]


def test_a_stamp_going_back_resets_both_hands():
    """A new session (stamp going back) forgets the states: UNKNOWN again."""
    tracker = HandStateTracker(CONFIG)
    for index in range(30):
        tracker.update(_frame(10.0 + index / 30.0, 0.2))
    after = tracker.update(_frame(1.0, 0.2))
    assert after[Side.LEFT] == HandEstimate(UNKNOWN, True, pytest.approx(0.2))
    assert after[Side.RIGHT].state is UNKNOWN


def test_both_hands_are_independent():
    """Each hand has its own state."""
    tracker = HandStateTracker(CONFIG)
    for index in range(30):
        estimates = tracker.update(_frame(index / 30.0, 0.1, 0.9))
    assert estimates[Side.LEFT].state is CLOSED
    assert estimates[Side.RIGHT].state is OPEN


def test_config_refuses_crossed_thresholds_and_bad_values():
    """close_below must be below open_above; each value within its definition."""
    with pytest.raises(ConfigError, match='must be below'):
        HandConfig(close_below=0.5, open_above=0.4)
    with pytest.raises(ConfigError, match='hand_dwell'):
        HandConfig(dwell=-1.0)
    assert HandConfig.from_parameters({'hand_dwell': 0.5}) == HandConfig(dwell=0.5)
    HandConfig()  # the defaults pass their own definitions


def test_a_non_finite_stamp_is_refused():
    """The dwell is timed by stamps: a NaN stamp raises SkeletonError."""
    with pytest.raises(SkeletonError, match='finite stamp'):
        HandStateTracker().update(_frame(math.nan, 0.2))
