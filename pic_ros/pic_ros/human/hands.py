"""
Open or closed hands, for a robot's grippers: a scale-free aperture, hysteresis and a dwell.

**Aperture** (:func:`hand_aperture`), per hand::

    aperture = (|hand_tip - hand| + |thumb - hand_tip|) / |shoulder_left - shoulder_right|

The first term grows as the fingers straighten (the tip leaves the palm), the second as the thumb
spreads from the fingers; both shrink in a fist. Dividing by the shoulder width makes it
scale-free: hand length and shoulder width (joint centres) are both close to proportional to
stature (about 0.11 and 0.19 of it), so a child's and an adult's open hands read alike. The
shoulders are chosen over the forearm or the hand itself because they are in every accepted
frame (the body frame is built from them), are measured at the trunk where trackers are most
accurate, and do not change with the arm's pose: a forearm pointing at the sensor is measured up
to a third shorter (foreshortening), which would inflate the aperture of that hand, and the hand's
own length changes with the very finger curl being measured. A median adult gives about 0.7 open
(hand flat, thumb spread) and about 0.2 in a fist (``docs/method.md#head-and-hands``).

**State** (:class:`HandStateTracker`): a frame *indicates* CLOSED when the aperture is below
``hand_close_below``, OPEN when it is above ``hand_open_above``, and nothing in between (the
hysteresis band) or when the hand is unseen (a point invalid, or the aperture beyond
:data:`MAX_APERTURE`). A new state is taken at a frame that indicates it when it has been
indicated since at least ``hand_dwell`` seconds earlier (stamps of the frames) with no frame
indicating the current state in between: a contrary frame restarts the wait, frames indicating
nothing neither restart nor complete it (a noisy aperture dips into the band now and then;
restarting at every dip would delay a real change by seconds). A pause in the frames longer
than :data:`MAX_PAUSE` restarts the wait too: the frames before it (perhaps of the person the
tracker lost) do not count toward a state the frames after it indicate. So values in the band
never change the state, a flicker shorter than the dwell never does, and the state changes at
most once per dwell. While a hand is unseen it keeps its last state; it is UNKNOWN only before its
first state. A stamp going back resets the tracker (a new session). This follows UBRI's rule of
confirming a hand state only after it was detected several times (Zhang et al., UBRI), in seconds
instead of frames so that it holds at any rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum
import math
from types import MappingProxyType
from typing import Any, Final

import numpy as np
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import HAND_JOINTS, HumanJoint, Side, SkeletonFrame

HAND_CLOSE_BELOW: Final = ParameterDef(
    'hand_close_below', 0.35,
    'A hand aperture (finger and thumb spread over the shoulder width) below this indicates a '
    'closed hand',
    low=0.05, high=2.0,
)
"""The hand estimator's ``hand_close_below`` (:attr:`HandConfig.close_below`)."""

HAND_OPEN_ABOVE: Final = ParameterDef(
    'hand_open_above', 0.5,
    'A hand aperture above this indicates an open hand; between the two thresholds the state '
    'is kept (hysteresis)',
    low=0.05, high=2.0,
)
"""The hand estimator's ``hand_open_above`` (:attr:`HandConfig.open_above`)."""

HAND_DWELL: Final = ParameterDef(
    'hand_dwell', 0.3,
    'How long a new hand state must be indicated, with no frame indicating the current one, '
    'before it is taken',
    unit='s', low=0.0, high=5.0,
)
"""The hand estimator's ``hand_dwell`` (:attr:`HandConfig.dwell`)."""

HAND_PARAMETERS: Final = (HAND_CLOSE_BELOW, HAND_OPEN_ABOVE, HAND_DWELL)
"""Everything :meth:`HandConfig.from_parameters` reads."""

MAX_APERTURE: Final = 1.25
"""
Largest believable aperture (dimensionless); above it the hand is unseen.

The longest hands (about 0.21 m) fully spread on the narrowest shoulders (about 0.28 m between
the joint centres) give about 1.1; more means a finger point belongs to something else.
"""


MAX_PAUSE: Final = 0.25
"""
Longest pause in the frames that a hand's wait for a new state runs through [s].

As the engage gesture's ``max_gap``: trackers send 30 frames per second or more, and a skeleton
node drops a few frames now and then; a longer pause is a hand out of sight, a person lost, or a
stalled process, after which a single frame must not complete a wait that started before it.
"""


class HandState(enum.Enum):
    """State of one hand; the value is the text used in logs and tables."""

    OPEN = 'open'
    CLOSED = 'closed'
    UNKNOWN = 'unknown'


@dataclass(frozen=True)
class HandConfig:
    """
    Settings of :class:`HandStateTracker`.

    Defaults (reasoned, not fitted to a recording; ``docs/method.md#head-and-hands``): a median
    hand reads about 0.7 open and 0.2 closed; the noise-free hands of the synthetic people
    (hand length 0.10-0.118 of the height, shoulder width factor 0.85-1.15, fingers nearly
    straight or fully curled) read 0.52 to 0.86 open and 0.16 to 0.3 closed. The band 0.35-0.5
    lies between, about the geometric mean of the two medians (0.37 to 0.45), with room for the
    noise of the finger points, which inflates small distances (a fist) more than large ones. The
    dwell, 0.3 s, is longer than the tracker flickers (a finger point collapsing or swapping for
    a few frames, up to about 0.2 s) and well shorter than a deliberate grasp or release held for
    0.7 s or more.

    :param close_below: Aperture below which a frame indicates CLOSED (dimensionless).
    :param open_above: Aperture above which a frame indicates OPEN; > ``close_below``.
    :param dwell: Time a new state must be indicated continuously before it is taken [s].
    :raises ConfigError: If a value is out of range or the thresholds are not increasing.
    """

    close_below: float = HAND_CLOSE_BELOW.default
    open_above: float = HAND_OPEN_ABOVE.default
    dwell: float = HAND_DWELL.default

    def __post_init__(self) -> None:
        object.__setattr__(self, 'close_below', HAND_CLOSE_BELOW.check(self.close_below))
        object.__setattr__(self, 'open_above', HAND_OPEN_ABOVE.check(self.open_above))
        object.__setattr__(self, 'dwell', HAND_DWELL.check(self.dwell))
        if not self.close_below < self.open_above:
            raise ConfigError(
                f'hand_close_below ({self.close_below}) must be below hand_open_above '
                f'({self.open_above})'
            )

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> HandConfig:
        """
        Build the settings from parameter values.

        :param values: ``hand_close_below``, ``hand_open_above``, ``hand_dwell`` (missing ones
            take their defaults).
        :return: The settings.
        :raises ConfigError: If a value is refused.
        """
        return cls(
            close_below=values.get(HAND_CLOSE_BELOW.name, HAND_CLOSE_BELOW.default),
            open_above=values.get(HAND_OPEN_ABOVE.name, HAND_OPEN_ABOVE.default),
            dwell=values.get(HAND_DWELL.name, HAND_DWELL.default),
        )


@dataclass(frozen=True)
class HandEstimate:
    """
    One hand after one frame.

    :param state: The debounced state (the last state taken; UNKNOWN before the first).
    :param seen: Whether this frame indicated a state: the hand's points valid and plausible and
        the aperture outside the hysteresis band.
    :param aperture: The frame's aperture (dimensionless, :func:`hand_aperture`), NaN when the
        points are missing or implausible.
    """

    state: HandState
    seen: bool
    aperture: float


def hand_aperture(frame: SkeletonFrame, side: Side) -> float | None:
    """
    Measure how open one hand is, relative to the person's shoulder width.

    :param frame: Skeleton in any frame, [m]; reads both shoulders and the hand, hand tip and
        thumb of ``side``.
    :param side: Which hand of the person.
    :return: ``(|tip - hand| + |thumb - tip|) / shoulder width`` (dimensionless; about 0.7 open,
        0.2 closed), or None when a point is invalid or not finite, the shoulders coincide, or
        the value exceeds :data:`MAX_APERTURE`.
    """
    _, hand, tip, thumb = HAND_JOINTS[side]
    rows = [HumanJoint.SHOULDER_LEFT, HumanJoint.SHOULDER_RIGHT, hand, tip, thumb]
    if not frame.valid[rows].all():
        return None
    points = frame.positions[rows]
    if not np.all(np.isfinite(points)):
        return None
    width = float(np.linalg.norm(points[0] - points[1]))
    if not width > 1e-3:
        return None
    spread = float(np.linalg.norm(points[3] - points[2]) + np.linalg.norm(points[4] - points[3]))
    aperture = spread / width
    return aperture if aperture <= MAX_APERTURE else None


class _HandMemory:
    """The debouncing state of one hand."""

    def __init__(self) -> None:
        self.state = HandState.UNKNOWN
        self.candidate: HandState | None = None
        self.since = math.nan


class HandStateTracker:
    """
    Debounced open/closed state of both hands, frame after frame.

    :param config: Thresholds and dwell; default :class:`HandConfig()`.
    """

    def __init__(self, config: HandConfig | None = None) -> None:
        self.config = config if config is not None else HandConfig()
        self._hands = {side: _HandMemory() for side in Side}
        self._last_stamp: float | None = None

    def reset(self) -> None:
        """Forget both hands' states and the last stamp (every hand UNKNOWN again)."""
        self._hands = {side: _HandMemory() for side in Side}
        self._last_stamp = None

    def update(self, frame: SkeletonFrame) -> Mapping[Side, HandEstimate]:
        """
        Take one skeleton and return both hands' estimates.

        :param frame: Skeleton (any frame), [m], stamp [s] (capture time; drives the dwell).
        :return: Read-only ``{side: estimate}`` for both sides.
        :raises SkeletonError: If the stamp is not finite.
        """
        stamp = float(frame.stamp)
        if not math.isfinite(stamp):
            raise SkeletonError(f'hand state needs a finite stamp, got {frame.stamp!r}')
        if self._last_stamp is not None and stamp < self._last_stamp:
            self.reset()
        elif self._last_stamp is not None and stamp - self._last_stamp > MAX_PAUSE:
            for memory in self._hands.values():
                memory.candidate = None  # the wait starts again at this frame
        self._last_stamp = stamp
        return MappingProxyType(
            {side: self._update_hand(self._hands[side], frame, side, stamp) for side in Side}
        )

    def _indicated(self, aperture: float | None) -> HandState | None:
        if aperture is None:
            return None
        if aperture < self.config.close_below:
            return HandState.CLOSED
        if aperture > self.config.open_above:
            return HandState.OPEN
        return None

    def _update_hand(
        self, memory: _HandMemory, frame: SkeletonFrame, side: Side, stamp: float
    ) -> HandEstimate:
        aperture = hand_aperture(frame, side)
        indicated = self._indicated(aperture)
        if indicated is memory.state:
            memory.candidate = None  # a contrary frame restarts the wait
        elif indicated is not None:
            if memory.candidate is not indicated:
                memory.candidate = indicated
                memory.since = stamp
            if stamp - memory.since >= self.config.dwell:
                memory.state = indicated
                memory.candidate = None
        return HandEstimate(
            state=memory.state,
            seen=indicated is not None,
            aperture=math.nan if aperture is None else aperture,
        )
