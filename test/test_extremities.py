"""Implausible face and finger points are invalidated alone; the frame is never dropped."""

from __future__ import annotations

from human_poses import tracker_person
import numpy as np
from pic_ros.human.extremities import FACE_REACH, HAND_REACH, screen_extremities
from pic_ros.human.front_end import SkeletonFrontEnd
from pic_ros.skeleton import EXTREMITY_JOINTS, HumanJoint, make_frame, SkeletonFrame
from pic_ros.trackers.base import TrackerReading
from pic_ros.trackers.frames import DropReason
import pytest


def _frame(stamp: float = 1.0, **moves: tuple[float, float, float]):
    positions = tracker_person()
    for name, offset in moves.items():
        positions[HumanJoint[name]] += offset
    return make_frame(stamp, positions)


def test_plausible_points_are_kept_as_they_are():
    """A frame whose extremity points are all plausible is returned unchanged."""
    frame = _frame()
    assert screen_extremities(frame) is frame


@pytest.mark.parametrize(
    ('joint', 'offset'),
    [
        ('NOSE', (-FACE_REACH, 0.0, 0.0)),
        ('EAR_LEFT', (0.0, -0.3, 0.0)),
        ('HAND_TIP_LEFT', (-HAND_REACH, 0.0, 0.0)),
        ('THUMB_RIGHT', (0.0, 0.0, 0.4)),
    ],
)
def test_a_point_too_far_from_its_anchor_is_invalidated_alone(joint, offset):
    """A nose far from the head or a finger far from its parent joint loses only that row."""
    frame = _frame(**{joint: offset})
    screened = screen_extremities(frame)
    expected = frame.valid.copy()
    expected[HumanJoint[joint]] = False
    np.testing.assert_array_equal(screened.valid, expected)
    assert np.isnan(screened.positions[HumanJoint[joint]]).all()
    np.testing.assert_array_equal(screened.positions[:12], frame.positions[:12])


def test_face_points_need_a_head_and_finger_points_a_wrist_or_hand():
    """Without an anchor the point cannot be checked and is invalidated."""
    valid = np.ones(len(HumanJoint), dtype=bool)
    valid[[HumanJoint.HEAD, HumanJoint.WRIST_LEFT, HumanJoint.HAND_LEFT]] = False
    screened = screen_extremities(make_frame(1.0, tracker_person(), valid))
    faces = [HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT]
    lefts = [HumanJoint.HAND_TIP_LEFT, HumanJoint.THUMB_LEFT]
    assert not screened.valid[faces + lefts].any()
    assert screened.valid[[HumanJoint.HAND_TIP_RIGHT, HumanJoint.THUMB_RIGHT]].all()


def test_the_front_end_keeps_a_frame_with_bad_extremity_points():
    """Non-finite or wild face and finger points never drop the frame; they come out invalid."""
    positions = tracker_person()
    positions[HumanJoint.NOSE] = (np.inf, 0.0, 0.0)
    positions[HumanJoint.THUMB_LEFT] += (0.0, 0.0, 1.0)
    valid = np.ones(len(HumanJoint), dtype=bool)
    frame = SkeletonFrame(stamp=1.0, positions=positions, valid=valid)  # a received inf
    front = SkeletonFrontEnd()
    result = front.feed(TrackerReading(1.0, {1: frame}))
    assert not isinstance(result, DropReason)
    assert not result.valid[[HumanJoint.NOSE, HumanJoint.THUMB_LEFT]].any()
    others = [joint for joint in EXTREMITY_JOINTS if joint not in (
        HumanJoint.NOSE, HumanJoint.THUMB_LEFT)]
    assert result.valid[others].all() and result.valid[:12].all()
