"""Tests of the skeleton front end: tracker readings to the followed person's skeleton."""

from __future__ import annotations

import math
from typing import Any

from human_poses import (
    azure_markers as _markers,
)
from human_poses import (
    tracker_frame as _frame,
)
from human_poses import (
    tracker_person as _person,
)
from hypothesis import given, HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
import numpy as np
import numpy.typing as npt
from pic_ros.human.body_frame import to_body_frame
from pic_ros.human.front_end import FrontEndConfig, SkeletonFrontEnd
from pic_ros.human.processing import ProcessingConfig
from pic_ros.human.skeleton import HumanJoint, JOINT_COUNT, make_frame, Side, SkeletonFrame
from pic_ros.trackers.frames import DropReason
from pic_ros.trackers.marker_cdr import MarkerPositions
from pic_ros.trackers.markers import AZURE_KINECT, MarkerArrayTracker
import pytest

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.int64]


class _MarkerFrontEnd:
    """An Azure Kinect tracker feeding a front end, wired as the skeleton node wires them."""

    def __init__(self, **config: Any) -> None:
        self.tracker = MarkerArrayTracker(AZURE_KINECT)
        self.front = SkeletonFrontEnd(FrontEndConfig(**config))

    def process(
        self, ids: npt.ArrayLike, points: npt.ArrayLike, stamp: float
    ) -> SkeletonFrame | DropReason:
        """Decode one marker array and feed the reading to the front end."""
        message = MarkerPositions(
            float(stamp), 'depth_camera_link', np.asarray(ids, dtype=np.int64),
            np.asarray(points, dtype=float).reshape(-1, 3),
        )
        reading = self.tracker.decode(message, receive_time=0.0)
        return self.front.feed(reading)

    def __getattr__(self, name: str) -> Any:
        """Read the front end's attributes (counts, selector...)."""
        return getattr(self.front, name)


def test_front_end_turns_markers_into_a_body_frame_skeleton() -> None:
    """Azure markers of a facing person give the body-frame skeleton of the same joints."""
    front = _MarkerFrontEnd()
    result = front.process(*_markers(_person(), body=3), stamp=7.0)
    assert isinstance(result, SkeletonFrame) and result.frame == 'body' and result.stamp == 7.0
    expected = to_body_frame(make_frame(7.0, _person()))
    np.testing.assert_allclose(result.positions, expected.positions, atol=1e-12)
    assert front.accepted == 1 and front.selector.tracked_id == 3


@pytest.mark.parametrize(
    ('changes', 'reason'),
    [
        ({'SHOULDER_RIGHT': None}, DropReason.BAD_FRAME),
        ({'ELBOW_LEFT': None, 'ELBOW_RIGHT': None}, DropReason.MISSING_ARM_JOINTS),
        ({'WRIST_RIGHT': (math.nan, 0.0, 1.0)}, DropReason.NON_FINITE),
        ({'ELBOW_RIGHT': (9.0, 0.0, 1.0)}, DropReason.BAD_BONE),
    ],
)
def test_front_end_reports_every_drop_reason(
    changes: dict[str, tuple[float, float, float] | None], reason: DropReason
) -> None:
    """Each defect reaches the node as a reason; the tracker path never raises."""
    frame = _frame(1.0, **changes)
    rows = np.flatnonzero(frame.valid)
    ids, points = _markers(frame.positions, body=1)
    front = _MarkerFrontEnd()
    assert front.process(ids[rows], points[rows], 1.0) is reason
    assert front.counts[reason] == 1 and front.accepted == 0


def test_front_end_counts_no_body_other_body_and_old_stamp() -> None:
    """Empty arrays, other bodies and repeated stamps are counted by reason, once per call."""
    front = _MarkerFrontEnd(switch_after=1.0)
    assert front.process([], [], 0.0) is DropReason.NO_BODY
    assert front.process(np.zeros(0, np.int64), np.zeros((0, 3)), math.nan) is DropReason.NO_BODY
    assert isinstance(front.process(*_markers(_person(), body=1), stamp=1.0), SkeletonFrame)
    assert front.process(*_markers(_person(), body=2), stamp=1.1) is DropReason.OTHER_BODY
    assert front.process(*_markers(_person(), body=1), stamp=1.0) is DropReason.OLD_STAMP
    expected = {DropReason.NO_BODY: 2, DropReason.OTHER_BODY: 1, DropReason.OLD_STAMP: 1}
    assert {reason: n for reason, n in front.counts.items() if n} == expected
    assert front.accepted == 1
    counts = front.counts
    front.reset()
    assert front.accepted == 0 and front.selector.tracked_id is None
    assert sum(counts.values()) == 0  # the view stays live


def test_front_end_restarts_smoothing_for_a_new_body() -> None:
    """The first frame of a newly tracked body is not blended with the previous person."""
    front = _MarkerFrontEnd(switch_after=0.0, processing=ProcessingConfig(time_constant=1.0))
    first = _person(2.0)
    first[HumanJoint.WRIST_LEFT] += [0.0, -0.1, 0.2]
    front.process(*_markers(first, body=1), stamp=0.0)
    result = front.process(*_markers(_person(2.5), body=2), stamp=1 / 30)
    expected = to_body_frame(make_frame(1 / 30, _person(2.5)))
    assert isinstance(result, SkeletonFrame)
    np.testing.assert_allclose(result.positions, expected.positions, atol=1e-12)


def test_a_new_person_under_the_same_id_restarts_smoothing_and_far_bodies_are_counted() -> None:
    """Same id, far away after a gap: FAR_BODY until reacquire_after, then a fresh start."""
    front = _MarkerFrontEnd(
        switch_after=1.0, reacquire_radius=1.0, reacquire_after=5.0,
        processing=ProcessingConfig(time_constant=1.0),
    )
    first = _person(2.0)
    first[HumanJoint.WRIST_LEFT] += [0.0, -0.1, 0.2]
    assert isinstance(front.process(*_markers(first, body=1), stamp=0.0), SkeletonFrame)
    other = _person(2.0, side=3.0)
    assert front.process(*_markers(other, body=1), stamp=3.0) is DropReason.FAR_BODY
    result = front.process(*_markers(other, body=1), stamp=5.0)
    assert isinstance(result, SkeletonFrame)
    expected = to_body_frame(make_frame(5.0, other))
    np.testing.assert_allclose(result.positions, expected.positions, atol=1e-12)
    assert front.counts[DropReason.FAR_BODY] == 1
    assert front.selector.acquisitions == 2


def test_front_end_counts_ignored_and_duplicate_markers() -> None:
    """Markers outside the format and repeated ids are counted across messages."""
    front = _MarkerFrontEnd()
    ids, points = _markers(_person(), body=1)
    front.process(np.append(ids, [150, ids[0]]), np.vstack([points, points[[0, 0]]]), 1.0)
    front.process(np.append(ids, 199), np.vstack([points, points[:1]]), 2.0)
    assert (front.tracker.counts.ignored, front.tracker.counts.duplicates) == (2, 1)
    assert front.accepted == 2


# --- fuzz ------------------------------------------------------------------------------------

_ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)
_WILD_ID = st.integers(-(2**31), 2**31 - 1)


@st.composite
def _messages(draw: st.DrawFn) -> tuple[IdArray, FloatArray, float]:
    """Draw a marker array of 0-3 plausible bodies with dropped, foreign, corrupted markers."""
    ids: list[IdArray] = []
    points: list[FloatArray] = []
    for body in draw(st.lists(st.integers(0, 3), max_size=3)):
        body_ids, body_points = _markers(_person(draw(st.floats(0.5, 4.0))), body)
        keep = np.array(
            draw(st.lists(st.booleans(), min_size=JOINT_COUNT, max_size=JOINT_COUNT))
        )
        keep |= draw(st.booleans())  # often the whole body
        ids.append(body_ids[keep])
        points.append(body_points[keep])
    foreign = draw(st.lists(st.tuples(_WILD_ID, _ANY_FLOAT, _ANY_FLOAT, _ANY_FLOAT), max_size=4))
    ids.append(np.array([row[0] for row in foreign], dtype=np.int64))
    points.append(np.array([row[1:] for row in foreign], dtype=float).reshape(-1, 3))
    all_ids = np.concatenate(ids)
    all_points = np.concatenate(points)
    for index, axis, value in draw(
        st.lists(st.tuples(st.integers(0, 999), st.integers(0, 2), _ANY_FLOAT), max_size=3)
    ):
        if all_ids.size:
            all_points[index % all_ids.size, axis] = value
    stamp = draw(st.one_of(st.floats(0.0, 5.0), _ANY_FLOAT))
    return all_ids, all_points, stamp


def _check_outcome(result: SkeletonFrame | DropReason) -> None:
    """Check that a front-end result is a reason or a finite body-frame skeleton."""
    if isinstance(result, DropReason):
        return
    assert result.frame == 'body' and result.positions.shape == (JOINT_COUNT, 3)
    assert np.isfinite(result.positions[result.valid]).all()
    assert result.has_arm(Side.LEFT) or result.has_arm(Side.RIGHT)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_messages(), min_size=1, max_size=8), st.sampled_from([0.0, 0.1, 1.0]))
def test_front_end_never_raises_on_corrupted_arrays(
    messages: list[tuple[IdArray, FloatArray, float]], switch_after: float
) -> None:
    """Dropped, foreign, NaN/inf/huge markers and stamps give a frame or a reason, never raise."""
    front = _MarkerFrontEnd(switch_after=switch_after)
    for ids, points, stamp in messages:
        _check_outcome(front.process(ids, points, stamp))
    assert front.accepted + sum(front.counts.values()) == len(messages)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 60).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.int64, n, elements=_WILD_ID),
            hnp.arrays(np.float64, (n, 3), elements=_ANY_FLOAT),
        )
    ),
    _ANY_FLOAT,
)
def test_front_end_never_raises_on_random_arrays(
    arrays: tuple[IdArray, FloatArray], stamp: float
) -> None:
    """Arbitrary int32-range ids with arbitrary float positions give a frame or a reason."""
    front = _MarkerFrontEnd()
    _check_outcome(front.process(arrays[0], arrays[1], stamp))
    assert front.accepted + sum(front.counts.values()) == 1


# --- sessions --------------------------------------------------------------------------------


def test_stamps_going_back_beyond_restart_after_start_a_new_session() -> None:
    """A looping replay: the first frame of the next loop is accepted, counted as a restart."""
    front = _MarkerFrontEnd(restart_after=1.0)
    for stamp in (10.0, 10.1, 10.2):
        assert isinstance(front.process(*_markers(_person(), body=1), stamp), SkeletonFrame)
    result = front.process(*_markers(_person(), body=4), stamp=0.5)  # 9.7 s back, another id
    assert isinstance(result, SkeletonFrame) and result.stamp == 0.5
    assert front.restarts == 1 and front.selector.tracked_id == 4
    assert front.accepted == 4  # counts survive the restart


def test_a_small_step_back_is_an_old_frame_not_a_new_session() -> None:
    """Within restart_after, an older stamp is dropped as OLD_STAMP and nothing restarts."""
    front = _MarkerFrontEnd(restart_after=1.0)
    front.process(*_markers(_person(), body=1), stamp=5.0)
    assert front.process(*_markers(_person(), body=1), stamp=4.2) is DropReason.OLD_STAMP
    assert front.restarts == 0 and front.counts[DropReason.OLD_STAMP] == 1


def test_an_empty_array_never_starts_a_session() -> None:
    """An empty array has no stamp (NaN): it is NO_BODY, whatever came before."""
    front = _MarkerFrontEnd(restart_after=0.0)
    front.process(*_markers(_person(), body=1), stamp=5.0)
    assert front.process([], [], math.nan) is DropReason.NO_BODY
    assert front.restarts == 0


def test_changing_the_settings_keeps_the_followed_body_and_the_counts() -> None:
    """A parameter change at run time does not forget who is followed."""
    front = _MarkerFrontEnd(switch_after=1.0)
    front.process(*_markers(_person(), body=2), stamp=1.0)
    front.front.config = FrontEndConfig(
        switch_after=5.0, processing=ProcessingConfig(smoothing='none')
    )
    assert front.selector.tracked_id == 2 and front.selector.switch_after == 5.0
    assert front.process(*_markers(_person(), body=3), stamp=3.0) is DropReason.OTHER_BODY
    assert front.accepted == 1
