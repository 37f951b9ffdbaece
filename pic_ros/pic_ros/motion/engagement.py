"""
The operator's clutch: whether the robot follows the person, and the latched emergency stop.

:class:`Engagement` is the state machine the trajectory publisher keeps (one per robot). The
robot follows the person only while ENGAGED; otherwise every arm brakes to rest within its limits
and holds (:class:`~pic_ros.motion.commander.ArmCommander`), while the targets keep coming in.

- DISENGAGED: the state at start (unless ``start_engaged``) and after a disengage or a reset of
  the emergency stop. :meth:`Engagement.engage` leaves it.
- ENGAGED: the robot follows the person (the tracking-loss behaviour of
  :mod:`pic_ros.motion.tracking_loss` applies). :meth:`Engagement.disengage` leaves it, and so
  does another person (below).
- ESTOPPED: the emergency-stop input was set. The stop is *latched*: whatever the input does
  afterwards the state stays ESTOPPED until :meth:`Engagement.reset_estop`, which is refused while
  the input is still set and leaves the robot DISENGAGED -- it never re-engages by itself. An
  engage while ESTOPPED is refused.

An engagement is for one person. The skeleton node counts the people it takes up (``person``:
1 for the first; a person lost and found again near their place keeps their number), and
:meth:`Engagement.take_person` is told each count. Engaging is for the person taken up last, or,
before anyone was taken up (``start_engaged``), for the first one. When another person is taken
up while ENGAGED, the robot is DISENGAGED: whoever walks in after the operator's person left is
not followed until the operator engages again. ``engage_each_person`` false (:attr:`each_person`)
follows whoever is taken up instead.

Every request returns a :class:`Transition`: whether it was accepted, the state before and after,
and why, with its source (a service, a topic, the gesture, a parameter) and its time. Times are
passed in (the core never reads a clock). The last accepted change of state is kept for
diagnostics (:attr:`Engagement.last_transition`).
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
import math
from typing import Final

from pic_ros.checks import check_number
from pic_ros.schema import ParameterDef

START_ENGAGED: Final = ParameterDef(
    'start_engaged', False,
    'Follow the person from the start; false starts disengaged: the robot holds still until an '
    'operator engages it (~/engage, or the engage gesture)', read_only=True,
)
"""The trajectory publisher's ``start_engaged``."""

ENGAGE_EACH_PERSON: Final = ParameterDef(
    'engage_each_person', True,
    'Another person taken up by the skeleton node (person) while engaged disengages the robot: '
    'it brakes and holds until the operator engages again; false follows whoever is taken up',
)
"""The trajectory publisher's ``engage_each_person``."""


class EngagementState(enum.Enum):
    """Whether the robot follows the person."""

    DISENGAGED = 'disengaged'
    """Not following: every arm brakes to rest within its limits and holds."""

    ENGAGED = 'engaged'
    """Following the person."""

    ESTOPPED = 'estopped'
    """The emergency stop is latched: as DISENGAGED, and engaging is refused until a reset."""


class EngagementSource(enum.Enum):
    """Where a request came from (recorded with each transition)."""

    SERVICE = 'service'
    TOPIC = 'topic'
    GESTURE = 'gesture'
    PARAMETER = 'parameter'
    TRACKER = 'tracker'
    """The skeleton node's person count."""


class EngagementRequest(enum.Enum):
    """What was asked of the state machine."""

    START = 'start'
    ENGAGE = 'engage'
    DISENGAGE = 'disengage'
    ESTOP_SET = 'estop_set'
    ESTOP_CLEARED = 'estop_cleared'
    ESTOP_RESET = 'estop_reset'
    PERSON = 'person'


@dataclass(frozen=True)
class Transition:
    """
    The outcome of one request to :class:`Engagement`.

    :param request: What was asked.
    :param source: Who asked.
    :param accepted: False when the request was refused (``reason`` says why); a request that
        finds the state already as asked is accepted without a change.
    :param previous: The state before the request.
    :param state: The state after it.
    :param reason: What happened, or why it was refused, in words.
    :param time: When it was asked, on the caller's clock [s].
    """

    request: EngagementRequest
    source: EngagementSource
    accepted: bool
    previous: EngagementState
    state: EngagementState
    reason: str
    time: float

    @property
    def changed(self) -> bool:
        """Return whether the state changed."""
        return self.state is not self.previous


class Engagement:
    """
    Engage / disengage / latched emergency stop (see the module docstring).

    Counters for diagnostics: :attr:`refused` (requests refused) and :attr:`estop_inputs`
    (values of the emergency-stop input received).

    :param engaged: Start ENGAGED (``start_engaged``) instead of DISENGAGED.
    :param time: The start time, on the caller's clock [s].
    :param source: What decided the starting state.
    :param each_person: Another person disengages (``engage_each_person``); changeable later
        through :attr:`each_person`.
    :raises ConfigError: If ``time`` is not a finite number.
    """

    def __init__(
        self,
        engaged: bool = False,
        time: float = 0.0,
        source: EngagementSource = EngagementSource.PARAMETER,
        each_person: bool = True,
    ) -> None:
        now = _check_time(time)
        state = EngagementState.ENGAGED if engaged else EngagementState.DISENGAGED
        reason = (
            'started engaged (start_engaged)' if engaged
            else 'started disengaged: the robot holds still until an operator engages it'
        )
        self._state = state
        self._estop_input = False
        self._last = Transition(
            EngagementRequest.START, source, True, state, state, reason, now
        )
        self.refused = 0
        self.estop_inputs = 0
        self.each_person = bool(each_person)
        self._latest: int | None = None  # the person count heard last
        self._person: int | None = None  # whom the engagement is for (None: the next one)

    @property
    def person(self) -> int | None:
        """Return the person count the engagement is for (None while nobody was taken up)."""
        return self._person

    @property
    def state(self) -> EngagementState:
        """Return the current state."""
        return self._state

    @property
    def engaged(self) -> bool:
        """Return whether the robot follows the person."""
        return self._state is EngagementState.ENGAGED

    @property
    def estopped(self) -> bool:
        """Return whether the emergency stop is latched."""
        return self._state is EngagementState.ESTOPPED

    @property
    def estop_input(self) -> bool:
        """Return the last value of the emergency-stop input (False before any)."""
        return self._estop_input

    @property
    def last_transition(self) -> Transition:
        """Return the last change of state (the start until the first one)."""
        return self._last

    def engage(
        self, now: float, source: EngagementSource, detail: str = ''
    ) -> Transition:
        """
        Ask to follow the person.

        :param now: Time of the request [s].
        :param source: Who asks.
        :param detail: Appended to the reason (e.g. how a gesture was made).
        :return: ENGAGED, or refused while the emergency stop is latched.
        :raises ConfigError: If ``now`` is not a finite number.
        """
        if self._state is EngagementState.ESTOPPED:
            return self._refuse(
                EngagementRequest.ENGAGE, source, now,
                'refused: the emergency stop is latched; reset it first',
            )
        if self._state is EngagementState.ENGAGED:
            return self._keep(EngagementRequest.ENGAGE, source, now, 'already engaged')
        self._person = self._latest
        return self._move(
            EngagementRequest.ENGAGE, source, now, EngagementState.ENGAGED,
            _with_detail(f'engaged by {source.value}', detail),
        )

    def disengage(
        self, now: float, source: EngagementSource, detail: str = ''
    ) -> Transition:
        """
        Ask to stop following the person (the arms brake and hold).

        :param now: Time of the request [s].
        :param source: Who asks.
        :param detail: Appended to the reason.
        :return: DISENGAGED (an emergency stop stays latched: nothing changes then).
        :raises ConfigError: If ``now`` is not a finite number.
        """
        if self._state is EngagementState.ESTOPPED:
            return self._keep(
                EngagementRequest.DISENGAGE, source, now,
                'already stopped: the emergency stop is latched',
            )
        if self._state is EngagementState.DISENGAGED:
            return self._keep(EngagementRequest.DISENGAGE, source, now, 'already disengaged')
        return self._move(
            EngagementRequest.DISENGAGE, source, now, EngagementState.DISENGAGED,
            _with_detail(f'disengaged by {source.value}', detail),
        )

    def set_estop(
        self, now: float, active: bool, source: EngagementSource = EngagementSource.TOPIC
    ) -> Transition:
        """
        Take one value of the emergency-stop input.

        True latches the stop (from any state); False only records that the input was released:
        the stop stays latched until :meth:`reset_estop`.

        :param now: Time of the value [s].
        :param active: The input: True asks to stop.
        :param source: Where the input comes from.
        :return: ESTOPPED on the first True; no change otherwise.
        :raises ConfigError: If ``now`` is not a finite number.
        """
        self.estop_inputs += 1
        self._estop_input = bool(active)
        if not active:
            reason = (
                'emergency stop input released; the stop stays latched until reset'
                if self._state is EngagementState.ESTOPPED
                else 'emergency stop input released'
            )
            return self._keep(EngagementRequest.ESTOP_CLEARED, source, now, reason)
        if self._state is EngagementState.ESTOPPED:
            return self._keep(
                EngagementRequest.ESTOP_SET, source, now, 'the emergency stop is already latched'
            )
        return self._move(
            EngagementRequest.ESTOP_SET, source, now, EngagementState.ESTOPPED,
            f'emergency stop set by {source.value}',
        )

    def reset_estop(self, now: float, source: EngagementSource) -> Transition:
        """
        Ask to release the latched emergency stop; the robot is then DISENGAGED.

        :param now: Time of the request [s].
        :param source: Who asks.
        :return: DISENGAGED; refused while the emergency-stop input is still set; no change
            when the stop is not latched.
        :raises ConfigError: If ``now`` is not a finite number.
        """
        if self._state is not EngagementState.ESTOPPED:
            return self._keep(
                EngagementRequest.ESTOP_RESET, source, now, 'the emergency stop is not set'
            )
        if self._estop_input:
            return self._refuse(
                EngagementRequest.ESTOP_RESET, source, now,
                'refused: the emergency stop input is still set; release it first',
            )
        return self._move(
            EngagementRequest.ESTOP_RESET, source, now, EngagementState.DISENGAGED,
            f'emergency stop reset by {source.value}; disengaged until engaged again',
        )

    def take_person(
        self, now: float, person: int, source: EngagementSource = EngagementSource.TRACKER
    ) -> Transition:
        """
        Take the skeleton node's person count (``person``); another person disengages.

        :param now: Time the count was heard [s].
        :param person: How many people were taken up so far (1 for the first).
        :param source: Where the count comes from.
        :return: DISENGAGED when ENGAGED for another person and :attr:`each_person`; no change
            otherwise (the first person taken up after engaging is the engaged one).
        :raises ConfigError: If ``now`` is not a finite number.
        """
        person = int(person)
        self._latest = person
        request = EngagementRequest.PERSON
        if self._state is not EngagementState.ENGAGED:
            return self._keep(request, source, now, f'person {person} taken up')
        if self._person is None or self._person == person:
            self._person = person
            return self._keep(request, source, now, f'following person {person}')
        if not self.each_person:
            self._person = person
            return self._keep(
                request, source, now,
                f'following person {person}, taken up after another (engage_each_person off)',
            )
        return self._move(
            request, source, now, EngagementState.DISENGAGED,
            f'disengaged: another person (number {person}) was taken up; engage again to '
            'follow them',
        )

    def _move(
        self,
        request: EngagementRequest,
        source: EngagementSource,
        now: float,
        state: EngagementState,
        reason: str,
    ) -> Transition:
        transition = Transition(
            request, source, True, self._state, state, reason, _check_time(now)
        )
        self._state = state
        self._last = transition
        return transition

    def _keep(
        self, request: EngagementRequest, source: EngagementSource, now: float, reason: str
    ) -> Transition:
        return Transition(
            request, source, True, self._state, self._state, reason, _check_time(now)
        )

    def _refuse(
        self, request: EngagementRequest, source: EngagementSource, now: float, reason: str
    ) -> Transition:
        self.refused += 1
        return Transition(
            request, source, False, self._state, self._state, reason, _check_time(now)
        )


def _check_time(now: float) -> float:
    """Return a request's time as a float, or raise naming it."""
    return check_number('engagement time', now, -math.inf, math.inf)


def _with_detail(reason: str, detail: str) -> str:
    """Return a reason with the caller's detail appended (if any)."""
    return f'{reason}: {detail}' if detail else reason
