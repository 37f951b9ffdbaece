"""Tests of body selection and of frame validation with drop reasons."""

from __future__ import annotations

import math

from human_poses import (
    tracker_frame as _frame,
)
from human_poses import (
    TRACKER_PERSON as _PERSON,
)
from human_poses import (
    tracker_person as _person,
)
import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.skeleton import (
    HumanJoint,
    make_frame,
    MAX_BONE_LENGTH,
    Side,
    SkeletonFrame,
)
from pic_ros.trackers.frames import BodySelector, CHECKED_BONES, DropReason, FrameValidator
import pytest

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.int64]


def _bodies(stamp: float, **bodies: FloatArray) -> dict[int, SkeletonFrame]:
    """Build decoded arrays for :class:`BodySelector`: ``b3=joints`` is body 3."""
    return {int(key[1:]): make_frame(stamp, joints) for key, joints in bodies.items()}


# --- FrameValidator --------------------------------------------------------------------------


def test_good_frame_is_accepted_and_counted() -> None:
    """A complete skeleton passes; accepted counts it and its stamp becomes the last one."""
    validator = FrameValidator()
    assert validator.check(_frame(1.0)) is None
    assert validator.accepted == 1 and validator.last_stamp == 1.0
    assert set(validator.counts) == set(DropReason) and sum(validator.counts.values()) == 0


@pytest.mark.parametrize(
    ('frame', 'reason'),
    [
        (_frame(ELBOW_LEFT=(math.inf, 0.0, 1.0)), DropReason.NON_FINITE),
        (_frame(HAND_RIGHT=(2.0, math.nan, 1.0)), DropReason.NON_FINITE),
        (_frame(math.nan), DropReason.NON_FINITE),
        (_frame(math.inf), DropReason.NON_FINITE),
        (_frame(ELBOW_LEFT=None, WRIST_RIGHT=None), DropReason.MISSING_ARM_JOINTS),
        (_frame(SHOULDER_LEFT=None, SHOULDER_RIGHT=None), DropReason.MISSING_ARM_JOINTS),
        (_frame(WRIST_LEFT=_PERSON[HumanJoint.ELBOW_LEFT]), DropReason.BAD_BONE),
        (_frame(ELBOW_RIGHT=(2.0, 0.2, -0.4)), DropReason.BAD_BONE),
        (_frame(SHOULDER_RIGHT=(2.0, -0.1805, 1.4)), DropReason.BAD_BONE),
        (_frame(HEAD=(2.0, 0.0, 1e300)), DropReason.BAD_BONE),
        (_frame(PELVIS=(2.0, 0.0, -1e308), SPINE_CHEST=(2.0, 0.0, 1e308)), DropReason.BAD_BONE),
    ],
    ids=[
        'inf-elbow', 'nan-hand', 'nan-stamp', 'inf-stamp', 'one-joint-per-arm', 'no-shoulders',
        'zero-forearm', 'long-upper-arm', 'coincident-shoulders', 'huge-head', 'overflowing-spine',
    ],
)
def test_bad_frame_is_dropped_with_its_reason(frame: SkeletonFrame, reason: DropReason) -> None:
    """Each crafted defect gives its reason, counted once, and leaves the last stamp alone."""
    validator = FrameValidator()
    assert validator.check(frame) is reason
    assert validator.counts[reason] == 1 and sum(validator.counts.values()) == 1
    assert validator.accepted == 0 and validator.last_stamp is None


def test_stamp_must_be_after_the_last_accepted_one() -> None:
    """Equal or older stamps are OLD_STAMP; dropped frames do not move the last stamp."""
    validator = FrameValidator()
    assert validator.check(_frame(2.0)) is None
    assert validator.check(_frame(2.0)) is DropReason.OLD_STAMP
    assert validator.check(_frame(1.5)) is DropReason.OLD_STAMP
    assert validator.check(_frame(3.0, ELBOW_LEFT=None, ELBOW_RIGHT=None)) is not None
    assert validator.check(_frame(2.5)) is None
    assert validator.counts[DropReason.OLD_STAMP] == 2 and validator.accepted == 2


def test_invalid_nan_rows_are_missing_not_non_finite() -> None:
    """Invalid rows are NaN by convention: one complete arm is enough, the other is reported."""
    frame = _frame(WRIST_LEFT=None, HAND_LEFT=None, HEAD=None)
    assert FrameValidator().check(frame) is None
    assert frame.has_arm(Side.RIGHT) and not frame.has_arm(Side.LEFT)


def test_bones_with_a_missing_end_are_not_checked() -> None:
    """An absurd position is only a BAD_BONE when the joint at the other end is present."""
    far = (2.0, 0.0, 50.0)
    assert FrameValidator().check(_frame(HEAD=far, NECK=None)) is None
    assert FrameValidator().check(_frame(HEAD=far)) is DropReason.BAD_BONE


def test_hand_may_sit_on_the_wrist_but_not_far_from_it() -> None:
    """The hand bone has no minimum (Kinect v2) but the common maximum."""
    wrist = _PERSON[HumanJoint.WRIST_LEFT]
    assert FrameValidator().check(_frame(HAND_LEFT=(2.0 + wrist[0],) + wrist[1:])) is None
    far = (1.65, -0.22 - 1.01 * MAX_BONE_LENGTH, 1.15)
    assert FrameValidator().check(_frame(HAND_LEFT=far)) is DropReason.BAD_BONE
    assert len(CHECKED_BONES) == 10


def test_non_finite_takes_precedence_over_old_stamp() -> None:
    """Checks run in the documented order: a non-finite old frame is NON_FINITE."""
    validator = FrameValidator()
    validator.check(_frame(5.0))
    assert validator.check(_frame(1.0, NECK=(math.nan, 0.0, 0.0))) is DropReason.NON_FINITE


def test_validator_reset_forgets_stamp_and_counts() -> None:
    """After reset an old stamp is accepted again and every count is zero."""
    validator = FrameValidator()
    validator.check(_frame(5.0))
    validator.check(_frame(4.0))
    validator.reset()
    assert validator.accepted == 0 and sum(validator.counts.values()) == 0
    assert validator.check(_frame(1.0)) is None


# --- BodySelector ----------------------------------------------------------------------------


def test_first_seen_body_is_tracked_while_present() -> None:
    """A lone body is tracked at once and kept even when a nearer body joins."""
    selector = BodySelector(switch_after=1.0)
    assert selector.tracked_id is None
    frame = selector.select(_bodies(0.0, b4=_person(3.0)))
    assert isinstance(frame, SkeletonFrame) and selector.tracked_id == 4
    frame = selector.select(_bodies(0.1, b4=_person(3.0), b2=_person(1.5)))
    assert isinstance(frame, SkeletonFrame) and frame.positions[0, 0] == 3.0
    assert selector.tracked_id == 4


def test_nearest_body_wins_when_several_appear_at_once() -> None:
    """With no tracked body, the body nearest the sensor is chosen; ties go to the lower id."""
    selector = BodySelector()
    selector.select(_bodies(0.0, b7=_person(3.0), b8=_person(1.8, side=0.5), b9=_person(2.5)))
    assert selector.tracked_id == 8
    tied = BodySelector()
    tied.select(_bodies(0.0, b6=_person(2.0, side=0.4), b5=_person(2.0, side=-0.4)))
    assert tied.tracked_id == 5


def test_empty_array_is_no_body_and_keeps_the_tracked_body() -> None:
    """An empty array is NO_BODY; the tracked body is still tracked when it comes back."""
    selector = BodySelector(switch_after=0.5)
    selector.select(_bodies(0.0, b1=_person()))
    for _ in range(59):
        assert selector.select({}) is DropReason.NO_BODY
    assert isinstance(selector.select(_bodies(2.0, b1=_person())), SkeletonFrame)
    assert selector.tracked_id == 1


def test_other_body_is_dropped_until_the_tracked_one_is_gone_long_enough() -> None:
    """Another body gives OTHER_BODY until the tracked one is absent for switch_after seconds."""
    selector = BodySelector(switch_after=0.5)
    selector.select(_bodies(10.0, b1=_person()))
    assert selector.select(_bodies(10.2, b2=_person())) is DropReason.OTHER_BODY
    assert selector.select(_bodies(10.49, b2=_person())) is DropReason.OTHER_BODY
    assert selector.tracked_id == 1
    # After the gap the place decides, not the id: b2 stands where the person was.
    frame = selector.select(_bodies(10.5, b2=_person(), b3=_person(1.0)))
    assert isinstance(frame, SkeletonFrame) and selector.tracked_id == 2
    assert selector.select(_bodies(10.6, b1=_person())) is DropReason.OTHER_BODY


def test_after_a_gap_the_same_id_far_away_is_not_the_person() -> None:
    """A figure 4.2 m away with the person's id after an 8.3 s gap is dropped as FAR_BODY."""
    selector = BodySelector(switch_after=1.0, reacquire_radius=1.0, reacquire_after=10.0)
    for step in range(10):
        assert isinstance(selector.select(_bodies(step / 30, b1=_person())), SkeletonFrame)
    gone = 9 / 30
    for stamp in np.arange(gone + 8.3, gone + 9.9, 1 / 30):
        result = selector.select(_bodies(float(stamp), b1=_person(2.0, side=4.2)))
        assert result is DropReason.FAR_BODY
    assert selector.acquisitions == 1


def test_after_a_gap_the_person_is_found_near_their_place_under_a_new_id() -> None:
    """Back within reacquire_radius with a new id: followed at once, as the same person."""
    selector = BodySelector(switch_after=1.0, reacquire_radius=1.0, reacquire_after=10.0)
    selector.select(_bodies(0.0, b1=_person()))
    frame = selector.select(_bodies(3.0, b7=_person(2.4, side=0.3), b8=_person(1.0, side=-3.0)))
    assert isinstance(frame, SkeletonFrame) and selector.tracked_id == 7
    assert selector.acquisitions == 1


def test_after_reacquire_after_a_body_anywhere_is_a_new_person() -> None:
    """Only after reacquire_after is a far body taken, and counted as a new person."""
    selector = BodySelector(switch_after=1.0, reacquire_radius=1.0, reacquire_after=10.0)
    selector.select(_bodies(0.0, b1=_person()))
    assert selector.select(_bodies(9.9, b1=_person(2.0, side=4.2))) is DropReason.FAR_BODY
    frame = selector.select(_bodies(10.0, b1=_person(2.0, side=4.2)))
    assert isinstance(frame, SkeletonFrame) and selector.tracked_id == 1
    assert selector.acquisitions == 2
    # The new person's place is where they are now: they are kept from here on.
    assert isinstance(selector.select(_bodies(10.1, b1=_person(2.0, side=4.2))), SkeletonFrame)


def test_zero_switch_after_switches_as_soon_as_the_body_is_absent() -> None:
    """With switch_after 0, an array without the tracked body selects another one at once."""
    selector = BodySelector(switch_after=0.0)
    selector.select(_bodies(0.0, b1=_person()))
    assert isinstance(selector.select(_bodies(0.0333, b2=_person())), SkeletonFrame)
    assert selector.tracked_id == 2


def test_non_finite_stamp_does_not_lock_the_selector() -> None:
    """An inf stamp is ignored for the absence clock: another body can still take over."""
    selector = BodySelector(switch_after=0.5)
    selector.select(_bodies(1.0, b1=_person()))
    selector.select(_bodies(math.inf, b1=_person()))
    assert isinstance(selector.select(_bodies(2.0, b2=_person())), SkeletonFrame)
    assert selector.tracked_id == 2


@pytest.mark.parametrize('value', [-0.1, math.nan, math.inf, '1', True, 4000.0])
def test_switch_after_is_validated(value: object) -> None:
    """A negative, non-finite, non-numeric or absurd switch_after raises ConfigError."""
    with pytest.raises(ConfigError, match='switch_after'):
        BodySelector(value)  # type: ignore[arg-type]
