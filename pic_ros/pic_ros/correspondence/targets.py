"""
What a correspondence hands to a solver: the person's arm placed on one robot arm.

A correspondence (:mod:`pic_ros.correspondence`) turns the person's arm into shoulder, elbow and
wrist targets in the robot base frame, anchored at the robot's shoulder landmark at its neutral
pose. What the targets mean depends on their :class:`TargetKind`:

- ``SHAPE`` (the ``direction`` correspondence): only the arm's shape counts -- the upper-arm and
  forearm directions and so the elbow angle. The targets are at the robot's own landmark
  distances, so they form a chain the robot can take; they move with the robot's shoulder
  (:meth:`ArmTargets.moved_to`) when the joint before it swings it.
- ``POSITION`` (the ``position`` correspondence): the wrist target is a place in the base frame
  (the scaled human wrist); the elbow gives the preferred bone directions.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


class TargetKind(enum.Enum):
    """What the solver must reproduce from a set of targets."""

    SHAPE = 'shape'
    """The bone directions (and so the elbow angle); the targets follow the robot's shoulder."""

    POSITION = 'position'
    """The wrist position in the base frame first, then the bone directions."""


@dataclass(frozen=True)
class ArmTargets:
    """
    A human arm placed on a robot arm, in the robot base frame.

    :param shoulder: Shoulder target: the robot's shoulder landmark at the neutral pose, shape
        (3,), [m].
    :param elbow: Elbow target, shape (3,), [m].
    :param wrist: Wrist (end-effector) target, shape (3,), [m].
    :param kind: What the targets ask for (see :class:`TargetKind`).
    :param scale: Human -> robot length factor used by ``position`` [-]; ``None`` for a
        scale-free correspondence.
    """

    shoulder: FloatArray
    elbow: FloatArray
    wrist: FloatArray
    kind: TargetKind = TargetKind.POSITION
    scale: float | None = None

    def moved_to(self, shoulder: npt.ArrayLike) -> ArmTargets:
        """
        Translate the whole arm so that its shoulder is at another point.

        :param shoulder: New shoulder position, shape (3,), [m], robot base frame.
        :return: The translated targets (same directions, lengths, kind and scale).
        """
        offset = np.asarray(shoulder, dtype=float) - self.shoulder
        return ArmTargets(
            shoulder=self.shoulder + offset,
            elbow=self.elbow + offset,
            wrist=self.wrist + offset,
            kind=self.kind,
            scale=self.scale,
        )

    def with_wrist_offset(self, offset: npt.ArrayLike) -> ArmTargets:
        """
        Shift the wrist (end-effector) target alone, e.g. by an admittance displacement.

        :param offset: Displacement, shape (3,), [m], robot base frame.
        :return: The same targets with the wrist moved (shoulder, elbow, kind, scale kept).
        """
        return ArmTargets(
            shoulder=self.shoulder,
            elbow=self.elbow,
            wrist=self.wrist + np.asarray(offset, dtype=float),
            kind=self.kind,
            scale=self.scale,
        )

    @property
    def upper_arm(self) -> FloatArray:
        """Shoulder -> elbow vector, shape (3,), [m], base frame."""
        return self.elbow - self.shoulder

    @property
    def forearm(self) -> FloatArray:
        """Elbow -> wrist vector, shape (3,), [m], base frame."""
        return self.wrist - self.elbow
