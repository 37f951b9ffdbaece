"""The engage gesture: both wrists above the head, held, fires once per hold; off by default."""

from __future__ import annotations

from human_poses import BODY, body
from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.human.engage_gesture import (
    ENGAGE_GESTURE_TIME,
    EngageGesture,
    EngageGestureConfig,
    wrists_above_head,
)
from pic_ros.skeleton import HumanJoint, make_frame, SkeletonFrame
import pytest

J = HumanJoint
RATE = 30.0
"""Frame rate of the simulated tracker [Hz]."""


def hands_up(stamp: float = 0.0, height: float = 0.45) -> SkeletonFrame:
    """Return the test person with both wrists (and hands) at ``height`` in the body frame."""
    points = BODY.copy()
    for side, (elbow, wrist, hand) in {
        1.0: (J.ELBOW_LEFT, J.WRIST_LEFT, J.HAND_LEFT),
        -1.0: (J.ELBOW_RIGHT, J.WRIST_RIGHT, J.HAND_RIGHT),
    }.items():
        points[elbow] = (0.0, side * 0.25, 0.25)
        points[wrist] = (0.0, side * 0.22, height)
        points[hand] = (0.0, side * 0.22, height + 0.08)
    return body(points, stamp)


def hands_down(stamp: float = 0.0) -> SkeletonFrame:
    """Return the test person with both forearms forward (the teleoperation pose)."""
    return body(BODY, stamp)


def feed(gesture: EngageGesture, frames: list[SkeletonFrame]) -> list[float]:
    """Feed frames in order; return the stamps of the frames on which the gesture fired."""
    return [frame.stamp for frame in frames if gesture.update(frame)]


def test_the_gesture_is_off_by_default() -> None:
    """engage_gesture_time defaults to 0: holding the pose for long never fires."""
    gesture = EngageGesture()
    frames = [hands_up(k / RATE) for k in range(300)]

    assert ENGAGE_GESTURE_TIME.default == 0.0 and not gesture.config.enabled
    assert feed(gesture, frames) == []
    assert gesture.held() == pytest.approx(299 / RATE)


def test_the_pose_needs_both_wrists_above_the_head() -> None:
    """Both wrists above the head by the margin: yes; one, or the forearms forward: no."""
    one = hands_up().positions.copy()
    one[J.WRIST_RIGHT] = BODY[J.WRIST_RIGHT]
    low = hands_up(height=BODY[J.HEAD, 2] + 0.01)

    assert wrists_above_head(hands_up())
    assert not wrists_above_head(hands_down())
    assert not wrists_above_head(body(one))
    assert not wrists_above_head(low, margin=0.05) and wrists_above_head(low, margin=0.0)


@pytest.mark.parametrize('missing', [J.HEAD, J.WRIST_LEFT, J.WRIST_RIGHT])
def test_a_frame_without_the_head_or_a_wrist_does_not_count(missing: HumanJoint) -> None:
    """An invalid head or wrist is not taken as the pose (nothing is guessed)."""
    points = hands_up().positions.copy()
    points[missing] = np.nan

    assert not wrists_above_head(body(points))


def test_a_tracker_frame_is_refused() -> None:
    """The pose is defined in the body frame (z up from the chest)."""
    frame = make_frame(0.0, hands_up().positions, frame='tracker')

    with pytest.raises(ConfigError, match="'body' frame"):
        wrists_above_head(frame)


def test_holding_the_pose_fires_once_when_the_time_is_reached() -> None:
    """Held for 3 s with hold_time 2 s: one firing, on the first frame 2 s after the start."""
    gesture = EngageGesture(EngageGestureConfig(hold_time=2.0))
    frames = [hands_down(k / RATE) for k in range(30)]
    frames += [hands_up(1.0 + k / RATE) for k in range(90)]

    fired = feed(gesture, frames)

    assert fired == [pytest.approx(1.0 + 60 / RATE)]


def test_lowering_the_hands_rearms_the_gesture() -> None:
    """Two holds separated by the hands coming down: two firings."""
    gesture = EngageGesture(EngageGestureConfig(hold_time=1.0))
    frames = [hands_up(k / RATE) for k in range(45)]
    frames += [hands_down(1.5 + k / RATE) for k in range(15)]
    frames += [hands_up(2.0 + k / RATE) for k in range(45)]

    assert len(feed(gesture, frames)) == 2


def test_a_short_hold_or_a_pause_in_the_frames_does_not_fire() -> None:
    """Held 0.9 s of 1 s, or 2 s with a 0.5 s gap (no frames) in the middle: no firing."""
    gesture = EngageGesture(EngageGestureConfig(hold_time=1.0))
    short = [hands_up(k / RATE) for k in range(27)] + [hands_down(1.0)]
    gap = [hands_up(2.0 + k / RATE) for k in range(25)]
    gap += [hands_up(3.3 + k / RATE) for k in range(25)]

    assert feed(gesture, short + gap) == []


def test_an_older_stamp_starts_the_hold_over() -> None:
    """A frame from the past (a replay looping) breaks the hold instead of lengthening it."""
    gesture = EngageGesture(EngageGestureConfig(hold_time=1.0))
    frames = [hands_up(5.0 + k / RATE) for k in range(20)]
    frames += [hands_up(k / RATE) for k in range(20)]

    assert feed(gesture, frames) == []
    assert gesture.held() == pytest.approx(19 / RATE)


@pytest.mark.parametrize(
    ('values', 'name'),
    [({'hold_time': -1.0}, 'engage_gesture_time'), ({'hold_time': 11.0}, 'engage_gesture_time'),
     ({'margin': 2.0}, 'margin'), ({'max_gap': 0.0}, 'max_gap')],
)
def test_a_config_out_of_range_is_refused(values: dict[str, float], name: str) -> None:
    """Every field is checked, the message naming it."""
    with pytest.raises(ConfigError, match=name):
        EngageGestureConfig(**values)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), max_size=200))
def test_it_fires_at_most_once_per_unbroken_hold(poses: list[bool]) -> None:
    """For any sequence of poses at 30 Hz, firings = holds of at least 15 frames (0.5 s)."""
    gesture = EngageGesture(EngageGestureConfig(hold_time=13.5 / RATE))
    frames = [
        (hands_up if up else hands_down)(k / RATE) for k, up in enumerate(poses)
    ]
    runs = ''.join('u' if up else 'd' for up in poses).split('d')

    assert len(feed(gesture, frames)) == sum(len(run) >= 15 for run in runs)
