"""
Engagement: the operator's clutch and the latched emergency stop, without ROS.

Every transition and every refusal, with its reason, source and time; the emergency stop latched
on its first true input whatever follows (a 1 kHz flapping input included), its reset refused
while the input is still set and never re-engaging by itself; an engagement for one person,
another person taken up disengaging the robot.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from pic_ros.exceptions import ConfigError
from pic_ros.motion.engagement import (
    ENGAGE_EACH_PERSON,
    Engagement,
    EngagementRequest,
    EngagementSource,
    EngagementState,
    START_ENGAGED,
    Transition,
)
import pytest

SERVICE = EngagementSource.SERVICE
TOPIC = EngagementSource.TOPIC
GESTURE = EngagementSource.GESTURE
TRACKER = EngagementSource.TRACKER
DISENGAGED = EngagementState.DISENGAGED
ENGAGED = EngagementState.ENGAGED
ESTOPPED = EngagementState.ESTOPPED


def estopped(time: float = 1.0) -> Engagement:
    """Return an engagement whose emergency stop was set (input still true) at ``time``."""
    engagement = Engagement(engaged=True)
    engagement.set_estop(time, True)
    return engagement


def test_starts_disengaged_by_default_and_says_why() -> None:
    """No start_engaged: DISENGAGED, the start recorded as the last transition at its time."""
    engagement = Engagement(time=12.5)

    assert engagement.state is DISENGAGED and not engagement.engaged
    assert not engagement.estopped and not engagement.estop_input
    assert engagement.last_transition == Transition(
        EngagementRequest.START, EngagementSource.PARAMETER, True, DISENGAGED, DISENGAGED,
        'started disengaged: the robot holds still until an operator engages it', 12.5,
    )
    assert START_ENGAGED.default is False and START_ENGAGED.read_only


def test_start_engaged_starts_engaged() -> None:
    """start_engaged true: ENGAGED from the start, and the start's reason says so."""
    engagement = Engagement(engaged=True, time=3.0)

    assert engagement.state is ENGAGED and engagement.engaged
    assert engagement.last_transition.reason == 'started engaged (start_engaged)'


def test_engage_and_disengage_change_the_state_with_source_reason_and_time() -> None:
    """Engage then disengage: accepted changes, recorded as the last transition."""
    engagement = Engagement()

    engaged = engagement.engage(2.0, SERVICE)

    assert engaged == Transition(
        EngagementRequest.ENGAGE, SERVICE, True, DISENGAGED, ENGAGED, 'engaged by service', 2.0
    )
    assert engaged.changed and engagement.engaged
    assert engagement.last_transition is engaged

    disengaged = engagement.disengage(3.5, TOPIC, 'operator left')

    assert disengaged == Transition(
        EngagementRequest.DISENGAGE, TOPIC, True, ENGAGED, DISENGAGED,
        'disengaged by topic: operator left', 3.5,
    )
    assert engagement.state is DISENGAGED and engagement.last_transition is disengaged


def test_gesture_engage_carries_its_detail() -> None:
    """The gesture's own words are appended to the reason."""
    transition = Engagement().engage(1.0, GESTURE, 'both wrists above the head for 2.0 s')

    assert transition.reason == 'engaged by gesture: both wrists above the head for 2.0 s'
    assert transition.source is GESTURE


def test_repeated_requests_are_accepted_without_a_change() -> None:
    """Engage when engaged, disengage when disengaged: accepted, nothing changes or is recorded."""
    engagement = Engagement()
    engaged = engagement.engage(1.0, SERVICE)

    again = engagement.engage(2.0, SERVICE)
    assert again.accepted and not again.changed and again.reason == 'already engaged'
    assert engagement.last_transition is engaged

    engagement.disengage(3.0, SERVICE)
    twice = engagement.disengage(4.0, SERVICE)
    assert twice.accepted and not twice.changed and twice.reason == 'already disengaged'
    assert engagement.last_transition.time == 3.0


@pytest.mark.parametrize('start_engaged', [False, True])
def test_estop_latches_from_any_state(start_engaged: bool) -> None:
    """A true input stops the robot, engaged or not, with the source and the time."""
    engagement = Engagement(engaged=start_engaged)

    stop = engagement.set_estop(5.0, True)

    assert stop.accepted and stop.changed
    assert stop.request is EngagementRequest.ESTOP_SET and stop.source is TOPIC
    assert stop.reason == 'emergency stop set by topic' and stop.time == 5.0
    assert engagement.state is ESTOPPED and engagement.estopped and not engagement.engaged
    assert engagement.last_transition is stop


def test_estop_stays_latched_when_its_input_is_released() -> None:
    """A false input after the stop: recorded, but the state stays ESTOPPED."""
    engagement = estopped()

    released = engagement.set_estop(2.0, False)

    assert released.accepted and not released.changed
    assert released.reason == 'emergency stop input released; the stop stays latched until reset'
    assert engagement.estopped and not engagement.estop_input


def test_engage_is_refused_while_estopped_with_the_reason() -> None:
    """Engaging while the stop is latched is refused (input set or released) and counted."""
    engagement = estopped()

    refused = engagement.engage(2.0, SERVICE)
    engagement.set_estop(3.0, False)
    refused_again = engagement.engage(4.0, GESTURE)

    for transition in (refused, refused_again):
        assert not transition.accepted and not transition.changed
        assert transition.reason == 'refused: the emergency stop is latched; reset it first'
    assert engagement.state is ESTOPPED and engagement.refused == 2


def test_disengage_while_estopped_keeps_the_stop() -> None:
    """Disengaging a stopped robot changes nothing: the stop stays latched."""
    engagement = estopped()

    transition = engagement.disengage(2.0, SERVICE)

    assert transition.accepted and not transition.changed
    assert transition.reason == 'already stopped: the emergency stop is latched'
    assert engagement.estopped


def test_reset_is_refused_while_the_input_is_still_set() -> None:
    """A reset while the input says stop is refused with the reason; the stop stays."""
    engagement = estopped()

    refused = engagement.reset_estop(2.0, SERVICE)

    assert not refused.accepted and refused.request is EngagementRequest.ESTOP_RESET
    assert refused.reason == 'refused: the emergency stop input is still set; release it first'
    assert engagement.estopped and engagement.refused == 1


def test_reset_after_release_leaves_the_robot_disengaged() -> None:
    """Released then reset: DISENGAGED, never engaged by itself; engaging is then accepted."""
    engagement = estopped()
    engagement.set_estop(2.0, False)

    reset = engagement.reset_estop(3.0, SERVICE)

    assert reset.accepted and reset.changed and reset.previous is ESTOPPED
    assert reset.state is DISENGAGED and not engagement.engaged
    assert reset.reason == 'emergency stop reset by service; disengaged until engaged again'
    assert engagement.last_transition is reset
    assert engagement.engage(4.0, SERVICE).state is ENGAGED


def test_reset_without_a_stop_changes_nothing() -> None:
    """A reset when nothing is latched is accepted and says so."""
    engagement = Engagement(engaged=True)

    transition = engagement.reset_estop(1.0, SERVICE)

    assert transition.accepted and not transition.changed
    assert transition.reason == 'the emergency stop is not set' and engagement.engaged


def test_a_second_true_input_does_not_record_a_new_transition() -> None:
    """Repeated true inputs keep the first stop as the last transition."""
    engagement = estopped(time=1.0)

    repeated = engagement.set_estop(1.5, True)

    assert repeated.accepted and not repeated.changed
    assert repeated.reason == 'the emergency stop is already latched'
    assert engagement.last_transition.time == 1.0


def test_a_released_input_alone_never_stops_or_engages() -> None:
    """False inputs on a running robot are recorded and change nothing."""
    engagement = Engagement(engaged=True)

    transition = engagement.set_estop(1.0, False)

    assert transition.reason == 'emergency stop input released' and not transition.changed
    assert engagement.engaged and engagement.estop_inputs == 1


@pytest.mark.parametrize('time', [math.nan, math.inf, 'now', None])
def test_a_time_that_is_not_a_finite_number_is_refused(time: object) -> None:
    """Times come from the caller's clock and must be finite numbers."""
    with pytest.raises(ConfigError, match='engagement time'):
        Engagement().engage(time, SERVICE)  # type: ignore[arg-type]


def test_estop_flapping_at_1_khz_latches_on_the_first_true_and_refuses_resets() -> None:
    """
    A 1 kHz input flapping for 2 s: stopped on the first true, latched throughout.

    Engage and reset requests come in between; an engage is always refused, a reset is refused
    whenever the last input was true; once a reset is accepted the robot is DISENGAGED and the
    next true input stops it again.
    """
    engagement = Engagement(engaged=True)
    first_true = 0.004
    for tick in range(2000):
        now = tick * 1e-3
        active = tick % 8 in (4, 5) or (tick % 13 == 0 and tick > 0)
        engagement.set_estop(now, active)
        if now >= first_true:
            assert engagement.estopped, f'not latched at {now} s'
        else:
            assert engagement.engaged
        if tick % 7 == 0:
            assert not engagement.engage(now, SERVICE).accepted or now < first_true
    assert engagement.last_transition.time == first_true
    assert engagement.last_transition.state is ESTOPPED

    engagement.set_estop(2.0, True)
    assert not engagement.reset_estop(2.0, SERVICE).accepted
    engagement.set_estop(2.001, False)
    assert engagement.reset_estop(2.002, SERVICE).state is DISENGAGED
    engagement.set_estop(2.003, True)
    assert engagement.estopped and engagement.estop_inputs == 2003


@settings(max_examples=200, deadline=None)
@given(st.lists(
    st.one_of(
        st.booleans().map(lambda value: ('input', value)),
        st.sampled_from([('engage', None), ('disengage', None), ('reset', None)]),
    ),
    max_size=300,
))
def test_any_sequence_keeps_the_stop_latched_until_a_reset_with_the_input_released(
    requests: list[tuple[str, bool | None]],
) -> None:
    """
    Whatever the order of inputs and requests, 1 ms apart.

    Once a true input came the robot is never engaged until a reset is accepted; a reset is
    accepted only when the last input was false and then leaves the robot DISENGAGED; engage is
    refused exactly while stopped.
    """
    engagement = Engagement(engaged=True)
    latched = False
    last_input = False
    for tick, (kind, value) in enumerate(requests):
        now = tick * 1e-3
        if kind == 'input':
            assert value is not None
            engagement.set_estop(now, value)
            last_input = value
            latched = latched or value
        elif kind == 'engage':
            assert engagement.engage(now, SERVICE).accepted is (not latched)
        elif kind == 'disengage':
            engagement.disengage(now, SERVICE)
        else:
            transition = engagement.reset_estop(now, SERVICE)
            assert transition.accepted is (not latched or not last_input)
            if latched and not last_input:
                latched = False
                assert transition.state is DISENGAGED
        assert engagement.estopped is latched
        assert not (latched and engagement.engaged)


def test_another_person_taken_up_while_engaged_disengages_with_the_reason() -> None:
    """Engaged for person 1, person 2 taken up: DISENGAGED, by the tracker, saying why."""
    engagement = Engagement()
    engagement.take_person(1.0, 1)
    engagement.engage(2.0, SERVICE)

    transition = engagement.take_person(3.0, 2)

    assert transition.request is EngagementRequest.PERSON and transition.source is TRACKER
    assert (transition.previous, transition.state) == (ENGAGED, DISENGAGED)
    assert transition.reason == (
        'disengaged: another person (number 2) was taken up; engage again to follow them'
    )
    assert engagement.last_transition == transition and ENGAGE_EACH_PERSON.default is True


def test_started_engaged_follows_the_first_person_and_the_same_one_found_again() -> None:
    """start_engaged is for whoever comes first; their count heard again changes nothing."""
    engagement = Engagement(engaged=True)

    first = engagement.take_person(1.0, 1)
    again = engagement.take_person(5.0, 1)  # the latched count, heard by a late subscription

    assert not first.changed and not again.changed and engagement.engaged
    assert engagement.person == 1
    assert engagement.take_person(6.0, 2).state is DISENGAGED


def test_engaging_is_for_the_person_taken_up_last() -> None:
    """Two people came and went while disengaged: the operator engages for the second."""
    engagement = Engagement()
    for time, person in ((1.0, 1), (2.0, 2)):
        assert not engagement.take_person(time, person).changed

    engagement.engage(3.0, GESTURE)

    assert engagement.person == 2
    assert not engagement.take_person(4.0, 2).changed and engagement.engaged
    assert engagement.take_person(5.0, 3).state is DISENGAGED
    engagement.engage(6.0, SERVICE)  # engaged again: for person 3
    assert engagement.person == 3 and engagement.engaged


def test_a_restarted_skeleton_node_counting_from_one_is_another_person() -> None:
    """Any other count disengages, a lower one too: after a restart anyone may be taken up."""
    engagement = Engagement()
    engagement.take_person(1.0, 4)
    engagement.engage(2.0, SERVICE)

    assert engagement.take_person(3.0, 1).state is DISENGAGED


def test_with_each_person_off_another_person_is_followed() -> None:
    """engage_each_person false: the robot stays engaged and follows the new person."""
    engagement = Engagement(engaged=True, each_person=False)
    engagement.take_person(1.0, 1)

    transition = engagement.take_person(2.0, 2)

    assert not transition.changed and transition.accepted and engagement.engaged
    assert engagement.person == 2 and 'engage_each_person off' in transition.reason
    engagement.each_person = True  # changed at run time
    assert engagement.take_person(3.0, 3).state is DISENGAGED


def test_a_person_taken_up_while_stopped_never_engages_or_releases_the_stop() -> None:
    """While DISENGAGED or ESTOPPED a count is only recorded."""
    stopped = estopped()
    assert not stopped.take_person(2.0, 1).changed and stopped.estopped
    idle = Engagement()
    assert not idle.take_person(2.0, 1).changed and idle.state is DISENGAGED


@settings(max_examples=200, deadline=None)
@given(st.lists(
    st.one_of(
        st.tuples(st.just('person'), st.integers(1, 4)),
        st.tuples(st.sampled_from(['engage', 'disengage', 'estop', 'reset']), st.none()),
    ),
    max_size=100,
))
def test_the_robot_is_never_engaged_for_anyone_but_the_person_taken_up_last(
    requests: list[tuple[str, int | None]],
) -> None:
    """
    Whatever the order of counts and requests.

    While engaged the engagement is for the count heard last (or for the next one, before any);
    a count other than the one it was for never leaves the robot engaged.
    """
    engagement = Engagement(engaged=True)
    latest = None
    for tick, (kind, value) in enumerate(requests):
        now = tick * 1e-3
        if kind == 'person':
            assert value is not None
            before = engagement.person if engagement.engaged else None
            engagement.take_person(now, value)
            if before is not None and before != value:
                assert not engagement.engaged
            latest = value
        elif kind == 'engage':
            engagement.engage(now, SERVICE)
        elif kind == 'disengage':
            engagement.disengage(now, SERVICE)
        elif kind == 'estop':
            engagement.set_estop(now, True)
            engagement.set_estop(now, False)
        else:
            engagement.reset_estop(now, SERVICE)
        if engagement.engaged:
            assert engagement.person == latest
