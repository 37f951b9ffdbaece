"""
When to send a ``control_msgs/action/GripperCommand`` goal, and with what position.

With the trajectory publisher's ``gripper_interface`` ``gripper_action`` a gripper is not streamed
trajectories: its :class:`~pic_ros.motion.commander.ArmCommander` still supervises it (tracking
loss, engagement, the start from ``joint_states``), and :class:`GripperGoals` turns the position
the commander heads to (its tracking supervisor's reference: the target while tracking, the
neutral pose after a loss, the command itself while holding) into goals:

- a goal (``command.position`` the value of the robot file's ``action.joint``, [m] for a
  prismatic joint, [rad] for a revolute one, inside its limits; ``command.max_effort`` the
  file's ``action.max_effort``) when nothing was sent yet, or when the position differs from the
  last goal's by more than ``action.threshold``: on a change of the hand state, not at the
  stream rate. A new goal replaces the last one; the server preempts it (what
  gripper_action_controller does), so no cancel is sent before it;
- a cancel when the robot is disengaged or stopped while a goal may be running (the
  controller then holds where the gripper is, as the streamed arms brake and hold); the next
  goal after re-engaging is sent whatever its position;
- nothing otherwise (no target yet, or the same position).

Pure: no rclpy; the node hands each decision to a client (:mod:`pic_ros.ros.gripper_action`)
and reports back whether it went out (:meth:`GripperGoals.done`).
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion.tracking_loss import TrackingState
from pic_ros.robot.gripper import GripperModel
from pic_ros.schema import ParameterDef

TRAJECTORY: Final = 'trajectory'
"""``gripper_interface``: grippers streamed ``<controller>/joint_trajectory`` like every group."""

GRIPPER_ACTION: Final = 'gripper_action'
"""``gripper_interface``: grippers sent ``control_msgs/action/GripperCommand`` goals."""

GRIPPER_INTERFACE: Final = ParameterDef(
    'gripper_interface', TRAJECTORY,
    'How grippers are commanded: trajectory streams <controller>/joint_trajectory like every '
    'group; gripper_action sends control_msgs/GripperCommand goals to the action of each gripper '
    '(robot file: grippers.<arm>.action; needs control_msgs, a ROS workspace)',
    choices=(TRAJECTORY, GRIPPER_ACTION), read_only=True,
)
"""The trajectory publisher's ``gripper_interface``."""


class GoalKind(enum.Enum):
    """What to do with a gripper's action server at one step."""

    NOTHING = 'nothing'
    SEND = 'send'
    CANCEL = 'cancel'


@dataclass(frozen=True)
class GripperDecision:
    """
    One step's decision.

    :param kind: Send a goal, cancel the running one, or nothing.
    :param position: The goal's ``command.position`` [m] or [rad] (NaN unless SEND).
    :param max_effort: The goal's ``command.max_effort`` [N] or [N m] (NaN unless SEND).
    """

    kind: GoalKind
    position: float = math.nan
    max_effort: float = math.nan


NOTHING: Final = GripperDecision(GoalKind.NOTHING)
CANCEL: Final = GripperDecision(GoalKind.CANCEL)

_IDLE: Final = frozenset({TrackingState.WAITING, TrackingState.DISENGAGED})
"""States with nothing to command: before any target, and disengaged or stopped."""


class GripperGoals:
    """
    Decide the ``GripperCommand`` goals of one gripper (see the module docstring).

    Counters for diagnostics: :attr:`sent` (goals that went out), :attr:`cancelled` (cancels
    that went out), :attr:`last_position` (the last goal's position, NaN before one).

    :param gripper: The gripper; it must have ``action`` settings.
    :raises ConfigError: If the robot file gives the gripper no ``action`` entry.
    """

    def __init__(self, gripper: GripperModel) -> None:
        action = gripper.action
        if action is None:
            raise ConfigError(
                f'{gripper.group.name}: gripper_interface gripper_action needs an action entry '
                f'in the robot file (grippers.{gripper.arm}.action: max_effort, optionally '
                'name, joint, threshold)'
            )
        self.action = action
        self._index = gripper.joint_names.index(action.joint)
        self._lower = float(gripper.group.lower[self._index])
        self._upper = float(gripper.group.upper[self._index])
        self._active = False  # a goal went out and was not cancelled since
        self.last_position = math.nan
        self.sent = 0
        self.cancelled = 0

    @property
    def name(self) -> str:
        """Return the action's name, relative to the node's namespace."""
        return self.action.name

    def decide(self, state: TrackingState, reference: npt.ArrayLike) -> GripperDecision:
        """
        Return what to do at a step; change nothing (:meth:`done` records what went out).

        :param state: The gripper commander's tracking state after the step.
        :param reference: Where its command heads, the gripper's joints in order, [m] or [rad].
        :return: The decision.
        """
        if state in _IDLE:
            return CANCEL if self._active else NOTHING
        values = np.asarray(reference, dtype=float)
        position = float(np.clip(values[self._index], self._lower, self._upper))
        if not math.isfinite(position):
            return NOTHING
        if self._active and abs(position - self.last_position) <= self.action.threshold:
            return NOTHING
        return GripperDecision(GoalKind.SEND, position, self.action.max_effort)

    def done(self, decision: GripperDecision) -> None:
        """
        Record a decision the client carried out (not one it could not: it is decided again).

        :param decision: What went out.
        """
        if decision.kind is GoalKind.SEND:
            self._active = True
            self.last_position = decision.position
            self.sent += 1
        elif decision.kind is GoalKind.CANCEL:
            self._active = False
            self.cancelled += 1
