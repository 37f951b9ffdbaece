"""
The last guard before the controllers: no command, nor the path to it, enters the margin.

Whatever a solver or a plug-in returned, :class:`CollisionGuard` checks what the trajectory
publisher is about to send, all arms together, against the robot's self-collision model
(:mod:`pic_ros.robot.collision`) and workspace bounds: every chunk of the step is sampled along
its path (every :data:`SAMPLE_SPACING` and at its last point; a planned chunk's path ends braking
to rest, its tail) and on to where its arm would stop if the stream ended there (within its
acceleration and jerk limits; nothing to add after a tail), the other arms and the
torso at their current commands, and every sample must keep each checked pair at its required
distance (a :data:`GUARD_SHARE` of
:meth:`~pic_ros.robot.collision.CollisionModel.required`) and the elbow and wrist landmarks
inside the bounds by that share of the margin, unless it is no closer than the arms are now
(an arm already inside that band moving off is let go). An arm whose chunk fails is made to
brake along its path
within its acceleration and jerk limits instead, and the guard counts it
(:class:`GuardVerdict`; the trajectory publisher reports the counts on ``/diagnostics``).

The solvers keep a :data:`~pic_ros.solvers.avoidance.CLEARANCE` share of the margin more than
the guard asks, so the guard acts only on what they did not prevent: a plug-in's answer, a
corner the motion cut.

Units: metres, radians, seconds; positions in the robot base frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.motion.streaming import TrajectoryChunk
from pic_ros.robot.collision import half_space_rows, landmark_points, STATIC
from pic_ros.robot.robot import Robot
from pic_ros.solvers.avoidance import resolve_margin

FloatArray = npt.NDArray[np.float64]

GUARD_SHARE: Final = 0.0
"""The guard refuses commands closer than this share of each pair's required distance (and of
the margin to the workspace bounds): 0, the capsules never overlap, so the real shapes, which
they contain with 1-4 cm to spare, never touch. The margin itself is the solvers' to keep (they
aim at 4/3 of it); the motion between two of their answers cuts corners into it, and a guard at
the margin braked YuMi's hanging arms on most steps of the shipped demo (its neutral pose holds
the grippers within millimetres of its base plate's capsules)."""

WORSE: Final = 1e-4
"""A sample closer than the arms are now by more than this counts as coming closer [m]."""

SAMPLE_SPACING: Final = 0.02
"""Time between two checked samples of a chunk's path [s]."""


@dataclass(frozen=True)
class GuardVerdict:
    """
    The guard's check of one step.

    :param refused: Arms whose chunk would enter the margin (they must brake instead).
    :param min_distance: Smallest pair distance over the samples [m] (a lower bound when above
        the margin plus 5 cm).
    :param where: What was closest to breaking: a link pair or a workspace bound, else ``''``.
    """

    refused: frozenset[str]
    min_distance: float
    where: str = ''

    @property
    def safe(self) -> bool:
        """Return whether every chunk may be sent."""
        return not self.refused


class CollisionGuard:
    """
    Check the chunks of a step, all arms together (see the module docstring).

    :param robot: The robot (its collision model, arms, torso and workspace).
    :param margin: ``self_collision_margin`` [m]: negative, the robot file's margin; 0 turns
        the guard off.
    """

    def __init__(self, robot: Robot, margin: float) -> None:
        self.robot = robot
        self.margin = resolve_margin(margin, robot.spec.collision)
        """The margin kept [m] (0: off)."""
        model = robot.collision
        self._model = model
        self._required = GUARD_SHARE * model.required(self.margin)
        self._spaces = () if robot.spec.workspace is None else robot.spec.workspace.half_spaces
        self._landmarks = landmark_points(model, robot.arms) if self._spaces else []
        owner = {}
        for name, where in model.arm_slices.items():
            for index in range(where.start, where.stop):
                owner[index] = name
        # the arm each capsule rides on (the arm of the last moving joint carrying it)
        self._capsule_arm = [
            owner.get(int(anchor)) if anchor != STATIC else None for anchor in model.anchor
        ]
        self.checks = 0
        """Steps checked."""
        self.refusals = 0
        """Chunks refused (each made to brake instead)."""

    @property
    def enabled(self) -> bool:
        """Return whether the guard checks anything (a positive margin)."""
        return self.margin > 0.0

    def check(
        self,
        chunks: Mapping[str, TrajectoryChunk],
        commands: Mapping[str, npt.ArrayLike],
        torso: float | None = None,
        now: float = 0.0,
    ) -> GuardVerdict:
        """
        Check the chunks of one step along their paths.

        :param chunks: The chunk about to be sent per arm name (arms without one hold their
            command).
        :param commands: The current command of every arm, arm joint order [rad].
        :param torso: The torso lift [m] (None: neutral).
        :param now: The step's time on the chunks' clock [s] (a chunk stamped 0 starts then).
        :return: The verdict; :attr:`GuardVerdict.refused` names the arms to brake.
        """
        if not self.enabled:
            return GuardVerdict(frozenset(), np.inf)
        self.checks += 1
        model = self._model
        paths = {
            name: self._stopping(name, *_path(chunk, now), chunk)
            for name, chunk in chunks.items()
        }
        horizon = max((times[-1] for times, _ in paths.values()), default=0.0)
        samples = np.arange(0.0, horizon, SAMPLE_SPACING).tolist() + [horizon]
        refused: set[str] = set()
        lowest, where = np.inf, ''
        now_arms = {name: np.asarray(value, dtype=float) for name, value in commands.items()}
        start = model.check(model.vector(now_arms, torso), self.margin + 0.05)
        start_depth = (
            half_space_rows(model, start, self._landmarks, self._spaces, gradients=False)[0]
            if self._spaces else np.zeros(0)
        )
        for when in samples:
            arms = dict(now_arms)
            for name, (times, positions) in paths.items():
                arms[name] = _at(times, positions, when)
            x = model.vector(arms, torso)
            check = model.check(x, self.margin + 0.05)
            # below the floor, and closer than the arms are now: a command that does not make
            # things worse (an arm already in the band, moving off) passes
            broken = np.flatnonzero(
                (check.distances < self._required)
                & (check.distances < start.distances - WORSE)
            )
            if check.distances.size and check.minimum < lowest:
                lowest = check.minimum
                where = ' / '.join(model.pair_links(int(np.argmin(check.distances))))
            for index in broken:
                first, second = model.pairs[index]
                for capsule in (first, second):
                    arm = self._capsule_arm[capsule]
                    if arm is not None and arm in chunks:
                        refused.add(arm)
            if self._spaces:
                depth, _, labels = half_space_rows(
                    model, check, self._landmarks, self._spaces, gradients=False
                )
                floor = GUARD_SHARE * self.margin
                for value, before, label in zip(depth, start_depth, labels):
                    if value < floor and value < before - WORSE:
                        arm = label.split(' ', 1)[0]
                        if arm in chunks:
                            refused.add(arm)
                        where = label
        if refused:
            self.refusals += len(refused)
        return GuardVerdict(frozenset(refused), float(lowest), where)

    def _stopping(
        self, arm: str, times: list[float], positions: FloatArray, chunk: TrajectoryChunk
    ) -> tuple[list[float], FloatArray]:
        """
        Extend a chunk's path by where its arm would stop if the stream stopped there.

        From the last point's velocity ``v``, each joint brakes within its acceleration and
        jerk limits ``a``, ``j`` over about ``|v| a / j + v^2 / (2 a)``; the path is extended
        straight to that stop, reached ``|v| / a + a / j`` later. Checking it makes the guard
        brake while braking is still enough, not once the margin is reached.
        """
        model = self.robot.arms[arm]
        velocity = np.asarray(chunk.points[chunk.stop].velocities, dtype=float)
        speed = np.abs(velocity)
        acceleration, jerk = model.acceleration, model.jerk
        reach = speed * acceleration / jerk + speed * speed / (2.0 * acceleration)
        if not np.any(reach > 0.0):
            return times, positions
        stop = positions[-1] + np.sign(velocity) * reach
        stop = np.clip(stop, model.lower, model.upper)
        after = float(np.max(speed / acceleration + acceleration / jerk))
        return times + [times[-1] + after], np.vstack((positions, stop))


def _path(chunk: TrajectoryChunk, now: float) -> tuple[list[float], FloatArray]:
    """
    Return a chunk's point times after ``now`` [s] and their positions, shape (n, dof).

    Up to the point where it comes to rest (:attr:`TrajectoryChunk.stop`: a planned chunk's
    braking tail ends there, and its last point only holds that rest for a late arrival).
    """
    start = chunk.stamp if chunk.stamp > 0.0 else now
    points = chunk.points[:chunk.stop + 1]
    times = [start + point.time_from_start - now for point in points]
    positions = np.array([point.positions for point in points])
    return times, positions


def _at(times: list[float], positions: FloatArray, when: float) -> FloatArray:
    """Return the positions of a path at a time, linear between its points, held at its ends."""
    if when <= times[0]:
        return np.asarray(positions[0], dtype=float)
    if when >= times[-1]:
        return np.asarray(positions[-1], dtype=float)
    index = int(np.searchsorted(times, when))
    share = (when - times[index - 1]) / (times[index] - times[index - 1])
    return np.asarray(
        positions[index - 1] + share * (positions[index] - positions[index - 1]), dtype=float
    )
