"""
The engage gesture: both wrists held above the head for a while engages the robot.

An operator alone in front of the tracker can engage the robot without a keyboard: raising both
hands above the head is a pose nobody takes by accident while teleoperating, and it is read from
the skeleton the pipeline already has. Off by default (``engage_gesture_time`` 0): the robot is
then engaged only by a service call or ``start_engaged``.

A body-frame frame (:class:`~pic_ros.skeleton.SkeletonFrame`, z up) shows the pose when the
head and both wrists are valid and each wrist is at least :attr:`EngageGestureConfig.margin`
above the head (:func:`wrists_above_head`). :class:`EngageGesture` times the pose on the frames'
stamps: it fires once, on the frame that completes ``hold_time`` of the pose without a break
(a frame out of the pose, or a pause in the frames longer than ``max_gap``), and again only after
such a break. Disengaging is not done by gesture (a pose can be taken by mistake; stopping has
the service and the emergency stop).
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import HumanJoint, SkeletonFrame

ENGAGE_GESTURE_TIME: Final = ParameterDef(
    'engage_gesture_time', 0.0,
    'Both wrists held above the head this long engages the robot (solver_node asks '
    'trajectory_publisher on engage_gesture; 0: off)', unit='s', low=0.0, high=10.0,
)
"""solver_node's ``engage_gesture_time`` (:attr:`EngageGestureConfig.hold_time`)."""


@dataclass(frozen=True)
class EngageGestureConfig:
    """
    What counts as the engage gesture.

    :param hold_time: How long the pose must be held [s], in [0, 10]; 0 turns the gesture off.
    :param margin: How far each wrist must be above the head [m], in [0, 0.5].
    :param max_gap: A pause in the frames longer than this breaks the hold [s], in [0.01, 2].
    :raises ConfigError: If a value is out of range.
    """

    hold_time: float = ENGAGE_GESTURE_TIME.default
    margin: float = 0.05
    max_gap: float = 0.25

    def __post_init__(self) -> None:
        object.__setattr__(self, 'hold_time', ENGAGE_GESTURE_TIME.check(self.hold_time))
        check_number('engage gesture margin', self.margin, 0.0, 0.5)
        check_number('engage gesture max_gap', self.max_gap, 0.01, 2.0)

    @property
    def enabled(self) -> bool:
        """Return whether the gesture is on (``hold_time`` > 0)."""
        return self.hold_time > 0.0


def wrists_above_head(frame: SkeletonFrame, margin: float = 0.05) -> bool:
    """
    Return whether a frame shows both wrists above the head.

    :param frame: A skeleton in the ``body`` frame (z up, [m]).
    :param margin: How far each wrist must be above the head [m].
    :return: True when the head and both wrists are valid and each wrist's z is at least
        ``margin`` above the head's.
    :raises ConfigError: If the frame is not in the body frame.
    """
    if frame.frame != 'body':
        raise ConfigError(f"the engage gesture needs 'body' frame skeletons, got {frame.frame!r}")
    joints = (HumanJoint.HEAD, HumanJoint.WRIST_LEFT, HumanJoint.WRIST_RIGHT)
    if not all(frame.valid[joint] for joint in joints):
        return False
    head = float(frame.positions[HumanJoint.HEAD, 2])
    return all(
        float(frame.positions[wrist, 2]) >= head + margin
        for wrist in (HumanJoint.WRIST_LEFT, HumanJoint.WRIST_RIGHT)
    )


class EngageGesture:
    """
    Time the engage gesture over a stream of body-frame skeletons (see the module docstring).

    :param config: What counts as the gesture; ``hold_time`` 0 never fires.
    """

    def __init__(self, config: EngageGestureConfig | None = None) -> None:
        self._config = config if config is not None else EngageGestureConfig()
        self._since: float | None = None
        self._last = -math.inf
        self._fired = False

    @property
    def config(self) -> EngageGestureConfig:
        """Return what counts as the gesture."""
        return self._config

    @config.setter
    def config(self, config: EngageGestureConfig) -> None:
        """Change what counts as the gesture; a hold in progress starts over."""
        self._config = config
        self.reset()

    def reset(self) -> None:
        """Forget any hold in progress."""
        self._since = None
        self._last = -math.inf
        self._fired = False

    def held(self) -> float:
        """
        Return how long the pose has been held up to the latest frame.

        :return: Seconds [s] (0 when the latest frame is not in the pose).
        """
        return 0.0 if self._since is None else self._last - self._since

    def update(self, frame: SkeletonFrame) -> bool:
        """
        Look at one skeleton.

        :param frame: A skeleton in the ``body`` frame, in time order (an older stamp breaks the
            hold).
        :return: True on the one frame that completes ``hold_time`` of the pose (the operator
            asks to engage); False otherwise, and always while the gesture is off.
        :raises ConfigError: If the frame is not in the body frame.
        """
        config = self._config
        in_pose = wrists_above_head(frame, config.margin)
        stamp = frame.stamp
        broken = (
            not in_pose or not math.isfinite(stamp) or stamp < self._last
            or stamp - self._last > config.max_gap
        )
        if broken:
            self._since = None
            self._fired = False
        if in_pose and math.isfinite(stamp):
            if self._since is None:
                self._since = stamp
            self._last = stamp
        else:
            self._last = -math.inf
        if not config.enabled or self._fired or self.held() < config.hold_time:
            return False
        self._fired = True
        return True
