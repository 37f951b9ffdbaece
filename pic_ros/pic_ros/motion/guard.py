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
brake along its path within its acceleration and jerk limits instead, and the guard counts it
(:class:`GuardVerdict`; the trajectory publisher reports the counts on ``/diagnostics``). Only
the arms whose own motion breaks the floor are braked: an arm at rest beside another at rest
may move off while the other waits (:meth:`CollisionGuard.check`), so two arms braked close
together are not held there for as long as the person keeps their arms crossed.

The solvers keep a :data:`~pic_ros.solvers.avoidance.CLEARANCE` share of the margin more than
the guard asks, so the guard acts only on what they did not prevent: a plug-in's answer, a
corner the motion cut.

Units: metres, radians, seconds; positions in the robot base frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.motion.streaming import TrajectoryChunk
from pic_ros.robot.collision import (
    CollisionCheck,
    half_space_rows,
    joint_reach,
    landmark_points,
    STATIC,
)
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
    :param braking: The braking chunks made for the refused arms, to send instead of theirs
        (when :meth:`CollisionGuard.check` was given a way to brake).
    """

    refused: frozenset[str]
    min_distance: float
    where: str = ''
    braking: Mapping[str, TrajectoryChunk] = field(default_factory=dict)

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
        self._reach = joint_reach(model)
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
        brake: Callable[[str], TrajectoryChunk | None] | None = None,
    ) -> GuardVerdict:
        """
        Check the chunks of one step along their paths; brake the arms that must.

        When a sample breaks the floor, every arm of the pairs that break it is refused; then
        the arms are let go again one at a time, the ones that passed first, then (only when
        every refused arm stands still: its braking is a hold) the refused ones in name order,
        each whose path keeps the floor with the arms let go so far and the others braking
        (straight to where their chunk's start velocity stops). So an arm at rest next to
        another at rest moves off along its own path while the other waits, instead of both
        staying braked for as long as each one's path toward its answer goes deeper first
        (which held both of Baxter's arms for seconds, 3 mm apart). With ``brake``, the
        refused arms' braking chunks are made and the arms let go are checked again against
        them until none fails.

        :param chunks: The chunk about to be sent per arm name (arms without one hold their
            command).
        :param commands: The current command of every arm, arm joint order [rad].
        :param torso: The torso lift [m] (None: neutral).
        :param now: The step's time on the chunks' clock [s] (a chunk stamped 0 starts then).
        :param brake: Make an arm's braking chunk instead of its chunk (the commander's
            :meth:`~pic_ros.motion.commander.ArmCommander.brake` at ``now``); None: the caller
            brakes the refused arms (checked against a straight stop from their chunk's start).
        :return: The verdict; :attr:`GuardVerdict.refused` names the arms to brake,
            :attr:`GuardVerdict.braking` their braking chunks (with ``brake``).
        """
        if not self.enabled:
            return GuardVerdict(frozenset(), np.inf)
        self.checks += 1
        paths = {
            name: self._stopping(name, *_path(chunk, now), chunk)
            for name, chunk in chunks.items()
        }
        held = {name: np.asarray(value, dtype=float) for name, value in commands.items()}
        start = self._model.check(self._model.vector(held, torso), self.margin + 0.05)
        start_depth = (
            half_space_rows(self._model, start, self._landmarks, self._spaces, gradients=False)[0]
            if self._spaces else np.zeros(0)
        )
        now_state = (held, torso, start, start_depth)
        refused, lowest, where = self._refusals(paths, *now_state)
        braking: dict[str, TrajectoryChunk] = {}
        if refused:
            stops = {name: self._braking(name, chunk, now) for name, chunk in chunks.items()}
            # a refused arm may still move off only while the arms it was refused with stand
            # still (their braking is then a hold: nothing unchecked moves)
            still = all(len(stops[name][0]) == 1 for name in refused)
            kept: dict[str, tuple[list[float], FloatArray]] = {}
            for name in sorted(paths, key=lambda arm: (arm in refused, arm)):
                if name in refused and not still:
                    continue
                trial = {**stops, **kept, name: paths[name]}
                if not self._refusals(trial, *now_state, first=True)[0]:
                    kept[name] = paths[name]
            refused = set(paths) - set(kept)
            asked: set[str] = set()
            while brake is not None and refused - asked:
                for name in sorted(refused - asked):
                    asked.add(name)
                    chunk = brake(name)
                    if chunk is not None:
                        braking[name] = chunk
                        stops[name] = self._stopping(name, *_path(chunk, now), chunk)
                moving = {**{n: stops[n] for n in refused}, **kept}
                late = self._refusals(moving, *now_state)[0] & set(kept)
                refused |= late  # an arm let go that meets another's real braking brakes too
                kept = {name: path for name, path in kept.items() if name not in late}
        if refused:
            self.refusals += len(refused)
        return GuardVerdict(frozenset(refused), float(lowest), where, braking)

    def _refusals(
        self,
        paths: Mapping[str, tuple[list[float], FloatArray]],
        held: Mapping[str, FloatArray],
        torso: float | None,
        start: CollisionCheck,
        start_depth: FloatArray,
        first: bool = False,
    ) -> tuple[set[str], float, str]:
        """
        Sample some arms' paths together, the other arms held at their commands.

        :param paths: Per moving arm, its path's times after the step [s] and positions [rad].
        :param held: Every arm's current command [rad].
        :param torso: The torso lift [m] (None: neutral).
        :param start: The check of the current commands.
        :param start_depth: The current commands' depths inside the workspace bounds [m].
        :param first: Return at the first sample that refuses an arm (a yes / no check; the
            smallest distance and its place are then those sampled so far).
        :return: The moving arms that break the floor while coming closer, the smallest pair
            distance [m] and what was closest to breaking, over the samples measured: a sample
            whose joints moved too little since the last one measured to bring anything to the
            floor (:func:`~pic_ros.robot.collision.joint_reach`) is not measured.
        """
        model = self._model
        horizon = max((times[-1] for times, _ in paths.values()), default=0.0)
        samples = np.arange(0.0, horizon, SAMPLE_SPACING).tolist() + [horizon]
        refused: set[str] = set()
        lowest, where = np.inf, ''
        required, floor = self._required, GUARD_SHARE * self.margin
        # the last configuration measured (first: the commands now), and how far it was from
        # breaking anything, pairs and bounds [m]
        measured = model.vector(held, torso)
        room = float(np.min(start.distances - required, initial=np.inf))
        if self._spaces:
            room = min(room, float(np.min(start_depth - floor, initial=np.inf)))
        for when in samples:
            arms = dict(held)
            for name, (times, positions) in paths.items():
                arms[name] = _at(times, positions, when)
            x = model.vector(arms, torso)
            if float(self._reach @ np.abs(x - measured)) < room:
                continue  # nothing moved far enough since to break the floor: skip the check
            check = model.check(x, self.margin + 0.05)
            # below the floor, and closer than the arms are now: a command that does not make
            # things worse (an arm already in the band, moving off) passes
            broken = np.flatnonzero(
                (check.distances < required)
                & (check.distances < start.distances - WORSE)
            )
            if check.distances.size and check.minimum < lowest:
                lowest = check.minimum
                where = ' / '.join(model.pair_links(int(np.argmin(check.distances))))
            for index in broken:
                for capsule in model.pairs[index]:
                    arm = self._capsule_arm[capsule]
                    if arm is not None and arm in paths:
                        refused.add(arm)
            if self._spaces:
                depth, _, labels = half_space_rows(
                    model, check, self._landmarks, self._spaces, gradients=False
                )
                for value, before, label in zip(depth, start_depth, labels):
                    if value < floor and value < before - WORSE:
                        arm = label.split(' ', 1)[0]
                        if arm in paths:
                            refused.add(arm)
                        where = label
            if first and refused:
                break
            measured = x
            room = float(np.min(check.distances - required, initial=np.inf))
            if self._spaces:
                room = min(room, float(np.min(depth - floor, initial=np.inf)))
        return refused, lowest, where

    def _braking(
        self, arm: str, chunk: TrajectoryChunk, now: float
    ) -> tuple[list[float], FloatArray]:
        """
        Return the path of an arm braking instead of following its chunk, roughly.

        The brake plans from the same start as the chunk (its first point): straight from there
        to where that velocity stops (:meth:`_stopping`).
        """
        times, positions = _path(chunk, now)
        velocity = np.asarray(chunk.points[0].velocities, dtype=float)
        return self._extend(arm, times[:1], positions[:1], velocity)

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
        velocity = np.asarray(chunk.points[chunk.stop].velocities, dtype=float)
        return self._extend(arm, times, positions, velocity)

    def _extend(
        self, arm: str, times: list[float], positions: FloatArray, velocity: FloatArray
    ) -> tuple[list[float], FloatArray]:
        """Extend a path ending at ``velocity`` [rad/s] by its arm's stop (:meth:`_stopping`)."""
        model = self.robot.arms[arm]
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
