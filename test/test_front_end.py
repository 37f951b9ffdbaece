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
from pic_ros.human.front_end import FrontEndConfig, RESTART_READINGS, SkeletonFrontEnd
from pic_ros.human.processing import ProcessingConfig
from pic_ros.skeleton import HumanJoint, JOINT_COUNT, make_frame, Side, SkeletonFrame
from pic_ros.trackers.frames import DropReason
from pic_ros.trackers.marker_cdr import MarkerPositions
from pic_ros.trackers.markers import AZURE_KINECT, MarkerArrayTracker
import pytest

FloatArray = npt.NDArray[np.float64]
IdArray = npt.NDArray[np.int64]

P = 1 / 30
"""A 30 Hz tracker [s]."""


class _MarkerFrontEnd:
    """An Azure Kinect tracker feeding a front end, wired as the skeleton node wires them."""

    def __init__(self, **config: Any) -> None:
        self.tracker = MarkerArrayTracker(AZURE_KINECT)
        self.front = SkeletonFrontEnd(FrontEndConfig(**config))

    def process(
        self, ids: npt.ArrayLike, points: npt.ArrayLike, stamp: float, received: float = math.nan
    ) -> SkeletonFrame | DropReason:
        """Decode one marker array and feed the reading to the front end."""
        message = MarkerPositions(
            float(stamp), 'depth_camera_link', np.asarray(ids, dtype=np.int64),
            np.asarray(points, dtype=float).reshape(-1, 3),
        )
        reading = self.tracker.decode(message, receive_time=received)
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
    """
    A looping replay: once the stream stays on the new timeline, a new session.

    The person (here under a new id) is where they were: taken at the fifth array of the next
    loop (RESTART_READINGS), counted as a restart; the four before are old stamps.
    """
    front = _MarkerFrontEnd(restart_after=1.0)
    for stamp in (10.0, 10.1, 10.2):
        assert isinstance(front.process(*_markers(_person(), body=1), stamp), SkeletonFrame)
    loop = [0.5 + index * P for index in range(RESTART_READINGS)]  # 9.7 s back, another id
    results = [front.process(*_markers(_person(), body=4), stamp) for stamp in loop]
    assert results[:-1] == [DropReason.OLD_STAMP] * (RESTART_READINGS - 1)
    assert isinstance(results[-1], SkeletonFrame) and results[-1].stamp == loop[-1]
    assert front.restarts == 1 and front.selector.tracked_id == 4
    assert front.selector.acquisitions == 1  # the same person
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


# --- Sessions that belong to the person (issue 27) -----------------------------------------------

STRANGER_SIDE = 2.5
"""Where a stray publisher's body stands [m], beside the person (beyond reacquire_radius)."""


def _run(
    front: _MarkerFrontEnd, seconds: float, stray: dict[str, Any] | None = None,
    gone: tuple[float, float] = (0.0, 0.0),
) -> tuple[int, int]:
    """
    Feed the person at 30 Hz for ``seconds`` (received at their stamps), with a stray stream.

    :param stray: ``offset`` of its stamps [s], ``body`` id, ``start`` [s]: one array beside
        the person after each of the person's arrays from ``start`` on (``once``: only one).
    :param gone: The person is out of view (empty arrays) between these times [s].
    :return: The person's arrays accepted, the stray arrays accepted.
    """
    person = stranger = 0
    for index in range(round(seconds / P)):
        now = 100.0 + index * P
        if gone[0] <= now - 100.0 < gone[1]:
            front.process([], [], math.nan, received=now)
        else:
            result = front.process(*_markers(_person(), body=1), stamp=now, received=now)
            person += isinstance(result, SkeletonFrame)
        if stray is not None and now - 100.0 >= stray.get('start', 0.0):
            markers = _markers(_person(side=STRANGER_SIDE), body=stray.get('body', 1))
            result = front.process(*markers, stamp=now + stray['offset'], received=now + 0.001)
            stranger += isinstance(result, SkeletonFrame)
            if stray.get('once'):
                stray = None
    return person, stranger


@pytest.mark.parametrize('body', [1, 2])
def test_one_stranger_array_two_seconds_old_is_an_old_stamp(body: int) -> None:
    """
    Regression: one array of another body, stamped 2 s before the person's last one.

    Before, it started a new session and took the nearest body, the stranger: the real person
    was then dropped as far_body for 8 s (239 arrays). Now it is one old_stamp, nothing else.
    """
    front = _MarkerFrontEnd()
    stray = {'offset': -2.0, 'body': body, 'start': 10.0, 'once': True}
    person, stranger = _run(front, 20.0, stray)
    assert (person, stranger) == (600, 0)
    assert front.counts[DropReason.OLD_STAMP] == 1 and front.restarts == 0
    assert front.accepted + sum(front.counts.values()) == 601


@pytest.mark.parametrize('offset', [-10.0, -2.0, -0.5, 0.0, 0.5, 2.0, 10.0])
@pytest.mark.parametrize('body', [1, 2])
def test_a_second_driver_on_the_topic_never_takes_the_person_over(
    offset: float, body: int
) -> None:
    """
    A stray publisher beside the person, its stamps ``offset`` from the person's, all along.

    Regression (2 s behind): before, it took the robot over (every one of its arrays accepted
    after the first, the person's dropped as far_body). Now none of its arrays is accepted,
    with the person's id or another, behind, level or ahead.
    """
    front = _MarkerFrontEnd()
    person, stranger = _run(front, 10.0, {'offset': offset, 'body': body, 'start': 1.0})
    assert (person, stranger) == (300, 0)
    assert front.selector.acquisitions == 1 and front.restarts == 0


@pytest.mark.parametrize('offset', [-10.0, 10.0])
def test_a_stray_stream_takes_nobody_while_the_person_is_briefly_out_of_view(
    offset: float
) -> None:
    """The person out of view for 1 s, a stray 10 s ahead or behind: nobody new is taken."""
    front = _MarkerFrontEnd()
    person, stranger = _run(front, 10.0, {'offset': offset, 'body': 2}, gone=(4.0, 5.0))
    assert stranger == 0 and person == 270
    assert front.selector.acquisitions == 1


def test_a_new_session_keeps_the_identity_rule() -> None:
    """
    A restarted tracker that shows a stranger first: never taken for the person.

    The stream goes 50 s back with only the stranger in view for 2 s: old stamps, never a new
    session (nobody near the person's place, and shorter than reacquire_after). Then the person
    is back at their place on that timeline: a new session after RESTART_READINGS arrays, the
    same person.
    """
    front = _MarkerFrontEnd(reacquire_after=3.0)
    for index in range(30):
        front.process(*_markers(_person(), body=1), stamp=100.0 + index * P)
    stranger = _markers(_person(side=STRANGER_SIDE), body=1)
    results = [front.process(*stranger, stamp=50.0 + index * P) for index in range(60)]
    assert set(results) == {DropReason.OLD_STAMP} and front.restarts == 0
    back = [front.process(*_markers(_person(), body=1), stamp=52.0 + index * P)
            for index in range(RESTART_READINGS)]
    assert back[:-1] == [DropReason.OLD_STAMP] * (RESTART_READINGS - 1)
    assert isinstance(back[-1], SkeletonFrame)
    assert front.restarts == 1 and front.selector.acquisitions == 1


def test_after_a_restart_a_far_body_is_taken_only_after_reacquire_after() -> None:
    """A new timeline with only a far body: a new person once it lasted reacquire_after."""
    front = _MarkerFrontEnd(reacquire_after=3.0)
    for index in range(30):
        front.process(*_markers(_person(), body=1), stamp=100.0 + index * P)
    stranger = _markers(_person(side=STRANGER_SIDE), body=1)
    results = [front.process(*stranger, stamp=50.0 + index * P) for index in range(100)]
    first = next(index for index, result in enumerate(results)
                 if isinstance(result, SkeletonFrame))
    assert first * P == pytest.approx(3.0, abs=P)
    assert front.restarts == 1 and front.selector.acquisitions == 2


def test_the_followed_id_far_from_the_person_is_another_body() -> None:
    """Two figures, one id (a replayed bag on the topic): only the one at the person's place."""
    front = _MarkerFrontEnd()
    assert isinstance(front.process(*_markers(_person(), body=1), 1.0), SkeletonFrame)
    far = _markers(_person(side=STRANGER_SIDE), body=1)
    assert front.process(*far, 1.0 + P) is DropReason.OTHER_BODY
    assert isinstance(front.process(*_markers(_person(), body=1), 1.0 + 2 * P), SkeletonFrame)
