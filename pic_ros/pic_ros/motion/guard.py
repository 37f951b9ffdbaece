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
(an arm already inside that band moving off is let go). An arm whose chunk fails is first
planned again to the same target with its joints reaching it together (near the straight way
in joint space that the solvers' avoidance checked between their answers; with each joint in
its own minimum time, two arms lagging behind their targets can cut through each other,
:meth:`~pic_ros.motion.commander.ArmCommander.straighten`); if that fails
too, it is made to brake along its path within its acceleration and jerk limits instead, and
the guard counts it (:class:`GuardVerdict`; the trajectory publisher reports the counts on
``/diagnostics``). Only
the arms whose own motion breaks the floor are braked: an arm at rest beside another at rest
may move off while the other waits (:meth:`CollisionGuard.check`), so two arms braked close
together are not held there for as long as the person keeps their arms crossed.

The solvers keep a :data:`~pic_ros.solvers.avoidance.CLEARANCE` share of the margin more than
the guard asks, so the guard acts only on what they did not prevent: a plug-in's answer, a
corner the motion cut.

Units: metres, radians, seconds; positions in the robot base frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.motion.streaming import TrajectoryChunk
from pic_ros.robot.collision import (
    bound_labels,
    CollisionCheck,
    CollisionModel,
    half_space_rows,
    landmark_points,
    STATIC,
)
from pic_ros.robot.collision_spec import HalfSpace
from pic_ros.robot.kinematics import compiled
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

ROUNDING: Final = 1e-9
"""A sample is skipped only when its motion bound keeps this far from every floor [m] (the
distances measured are rounded)."""


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
    :param straightened: The chunks made again with the joints moving together that passed,
        to send instead of the arms' first ones (when it was given a way to straighten).

    A refused arm without a braking chunk (none asked, or its brake would break a joint limit)
    must send nothing at this step: its controller brakes on the tail of what it has.
    """

    refused: frozenset[str]
    min_distance: float
    where: str = ''
    braking: Mapping[str, TrajectoryChunk] = field(default_factory=dict)
    straightened: Mapping[str, TrajectoryChunk] = field(default_factory=dict)

    def to_send(self, chunks: Mapping[str, TrajectoryChunk]) -> dict[str, TrajectoryChunk]:
        """
        Return what to send of a step's chunks, by arm, after this verdict on them.

        :param chunks: The step's chunks, by group (arms and any other).
        :return: Each chunk, an arm's straightened or braking chunk instead of its own, and
            nothing for a refused arm without a braking chunk.
        """
        sent = {**chunks, **self.straightened, **self.braking}
        for name in self.refused - self.braking.keys():
            sent.pop(name, None)
        return sent

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
    :param dense: Measure every sample of the paths; False (the default) skips the samples
        that provably cannot break the floor (:class:`_MotionBounds`), with the same verdicts.
    """

    def __init__(self, robot: Robot, margin: float, dense: bool = False) -> None:
        self.robot = robot
        self.dense = dense
        """Whether every sample is measured (the reference the skipping is tested against)."""
        self.margin = resolve_margin(margin, robot.spec.collision)
        """The margin kept [m] (0: off)."""
        model = robot.collision
        self._model = model
        self._required = GUARD_SHARE * model.required(self.margin)
        self._spaces = () if robot.spec.workspace is None else robot.spec.workspace.half_spaces
        self._landmarks = landmark_points(model, robot.arms) if self._spaces else []
        self._bounds = _MotionBounds(model, self._landmarks, self._spaces)
        owner = {}
        for name, where in model.arm_slices.items():
            for index in range(where.start, where.stop):
                owner[index] = name
        # the arm each capsule rides on (the arm of the last moving joint carrying it)
        self._capsule_arm = [
            owner.get(int(anchor)) if anchor != STATIC else None for anchor in model.anchor
        ]
        self._arms = list(model.arm_slices)
        arm_index = {name: index for index, name in enumerate(self._arms)}
        self._compiled_arrays = (
            np.array([arm_index.get(arm, -1) if arm else -1 for arm in self._capsule_arm],
                     dtype=np.int64),
            np.array([arm_index[arm] for arm, _, _ in self._landmarks for _ in self._spaces],
                     dtype=np.int64),
            np.array([joint for _, _, joint in self._landmarks], dtype=np.int64),
            np.array([space.normal for space in self._spaces], dtype=float).reshape(-1, 3),
            np.array([space.offset for space in self._spaces], dtype=float),
        )
        self._labels = bound_labels(self._landmarks, self._spaces)
        self.checks = 0
        """Steps checked."""
        self.samples_measured = 0
        """Samples of the steps' paths measured (the others were proved clear without it)."""
        # the last step that passed: what it checked (:func:`_step_key`) and its verdict
        self._passed: tuple[tuple[object, ...], GuardVerdict] | None = None
        self.refusals = 0
        """Chunks refused (each made to brake instead)."""
        self.straightened = 0
        """Chunks made again with the joints moving together after a refusal (those that
        still failed are among :attr:`refusals`)."""
        self._warm_up()

    def _warm_up(self) -> None:
        """
        Run the compiled samples once, on the types a step gives them.

        numba compiles on the first call (or loads from its cache): here, while the node
        starts, rather than in its first step. Without numba there is nothing to compile.
        """
        if compiled.guard_samples is None or not self.enabled:
            return
        model = self._model
        start = model.check(model.neutral, self.margin + 0.05)
        depth = np.zeros(len(self._labels))
        self._compiled_refusals(
            np.zeros(1), model.neutral.copy(), start.distances, depth, start.distances, depth,
            {}, first=False,
        )
        self.samples_measured = 0

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
        straighten: Callable[[str], TrajectoryChunk | None] | None = None,
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
        them until none fails. A step whose paths, commands and torso lift are exactly those
        of the last step, when that one passed, passes again without being measured.

        :param chunks: The chunk about to be sent per arm name (arms without one hold their
            command).
        :param commands: The current command of every arm, arm joint order [rad].
        :param torso: The torso lift [m] (None: neutral).
        :param now: The step's time on the chunks' clock [s] (a chunk stamped 0 starts then).
        :param brake: Make an arm's braking chunk instead of its chunk (the commander's
            :meth:`~pic_ros.motion.commander.ArmCommander.brake` at ``now``); None: the caller
            brakes the refused arms (checked against a straight stop from their chunk's start).
        :param straighten: Make an arm's chunk again with its joints moving together (the
            commander's :meth:`~pic_ros.motion.commander.ArmCommander.straighten` at ``now``),
            tried for the refused arms before any brakes; None: not tried.
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
        key = _step_key(paths, held, torso)
        if self._passed is not None and self._passed[0] == key:
            return self._passed[1]  # the same paths from the same commands: the same verdict
        start = self._model.check(self._model.vector(held, torso), self.margin + 0.05)
        start_depth = (
            half_space_rows(self._model, start, self._landmarks, self._spaces, gradients=False)[0]
            if self._spaces else np.zeros(0)
        )
        now_state = (held, torso, start, start_depth)
        refused, lowest, where = self._refusals(paths, *now_state)
        straightened: dict[str, TrajectoryChunk] = {}
        tried: set[str] = set()
        # each refused arm made again once, with its joints together; an arm that passed can
        # be refused against another's new path: it is tried too
        while straighten is not None and refused - tried:
            trying = refused - tried
            tried |= trying
            self._remade(trying, straighten, now, straightened, paths)
            if not straightened:
                break
            refused, lowest, where = self._refusals(paths, *now_state)
        self.straightened += len(straightened)
        chunks = {**chunks, **straightened}
        braking: dict[str, TrajectoryChunk] = {}
        if refused:
            refused = self._settle(chunks, paths, refused, now, now_state, brake, braking)
        verdict = GuardVerdict(
            frozenset(refused), float(lowest), where, braking,
            {name: chunk for name, chunk in straightened.items() if name not in refused},
        )
        self._passed = None
        if refused:
            self.refusals += len(refused)
        elif not straightened:  # a straightened step is made again, not sent as it came
            self._passed = (key, verdict)
        return verdict

    def _remade(
        self,
        names: set[str],
        make: Callable[[str], TrajectoryChunk | None],
        now: float,
        made: dict[str, TrajectoryChunk],
        paths: dict[str, tuple[list[float], FloatArray]],
    ) -> None:
        """
        Have some arms' chunks made again (in name order); keep each made and its path.

        :param names: The arms.
        :param make: Makes an arm's new chunk, or None (the commander's straighten or brake).
        :param now: The step's time [s].
        :param made: Filled with the new chunks.
        :param paths: Each new chunk's path (:meth:`_stopping`) replaces the arm's.
        """
        for name in sorted(names):
            chunk = make(name)
            if chunk is not None:
                made[name] = chunk
                paths[name] = self._stopping(name, *_path(chunk, now), chunk)

    def _settle(
        self,
        chunks: Mapping[str, TrajectoryChunk],
        paths: Mapping[str, tuple[list[float], FloatArray]],
        refused: set[str],
        now: float,
        now_state: tuple[Mapping[str, FloatArray], float | None, CollisionCheck, FloatArray],
        brake: Callable[[str], TrajectoryChunk | None] | None,
        braking: dict[str, TrajectoryChunk],
    ) -> set[str]:
        """
        Let the arms go again one at a time, brake the others (see :meth:`check`).

        :param chunks: The chunks of the step, per arm.
        :param paths: Their paths (:meth:`_stopping`).
        :param refused: The arms of the pairs that broke the floor.
        :param now: The step's time [s].
        :param now_state: The commands, the torso, their check and depths (:meth:`_refusals`).
        :param brake: Makes an arm's braking chunk, or None.
        :param braking: Filled with the braking chunks made.
        :return: The arms refused in the end.
        """
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
            asking = refused - asked
            asked |= asking
            self._remade(asking, brake, now, braking, stops)
            moving = {**{n: stops[n] for n in refused}, **kept}
            late = self._refusals(moving, *now_state)[0] & set(kept)
            refused |= late  # an arm let go that meets another's real braking brakes too
            kept = {name: path for name, path in kept.items() if name not in late}
        return refused

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
            distance [m] and what was closest to breaking, over the samples measured: unless
            :attr:`dense`, a sample whose joints moved too little since the last one measured
            to bring any pair or bound to its floor (:class:`_MotionBounds`) is not measured;
            it could refuse nothing, so the arms refused are those of the dense check.
        """
        model = self._model
        horizon = max((times[-1] for times, _ in paths.values()), default=0.0)
        samples = np.arange(0.0, horizon, SAMPLE_SPACING).tolist() + [horizon]
        refused: set[str] = set()
        lowest, where = np.inf, ''
        required, floor = self._required, GUARD_SHARE * self.margin
        # a pair (a bound) at a sample breaks the floor only below both of these [m]
        pair_floor = np.minimum(required, start.distances - WORSE)
        depth_floor = np.minimum(floor, start_depth - WORSE)
        # the configurations of every sample, shape (s, k); the last one measured (first: the
        # commands now), and per pair group and bound row, how far it was from its floor [m]
        measured = model.vector(held, torso)
        when = np.array(samples)
        if compiled.guard_samples is not None:
            return self._compiled_refusals(
                when, measured, start.distances, start_depth, pair_floor, depth_floor, paths,
                first,
            )
        configurations = np.tile(measured, (len(samples), 1))
        for name, (times, positions) in paths.items():
            configurations[:, model.arm_slices[name]] = _along(times, positions, when)
        room = self._bounds.room(start.distances - pair_floor, start_depth - depth_floor)
        index = 0
        while index < len(samples):
            if not self.dense:
                index += self._bounds.unreachable(configurations[index:], measured, room)
                if index == len(samples):
                    break
            x = configurations[index]
            index += 1
            self.samples_measured += 1
            check = model.check(x, self.margin + 0.05)
            # below the floor, and closer than the arms are now: a command that does not make
            # things worse (an arm already in the band, moving off) passes
            broken = np.flatnonzero(check.distances < pair_floor)
            if check.distances.size and check.minimum < lowest:
                lowest = check.minimum
                where = ' / '.join(model.pair_links(int(np.argmin(check.distances))))
            for pair in broken:
                for capsule in model.pairs[pair]:
                    arm = self._capsule_arm[capsule]
                    if arm is not None and arm in paths:
                        refused.add(arm)
            depth = np.zeros(0)
            if self._spaces:
                depth, _, labels = half_space_rows(
                    model, check, self._landmarks, self._spaces, gradients=False
                )
                for row in np.flatnonzero(depth < depth_floor):
                    arm = labels[row].split(' ', 1)[0]
                    if arm in paths:
                        refused.add(arm)
                    where = labels[row]
            if first and refused:
                break
            measured = x
            room = self._bounds.room(check.distances - pair_floor, depth - depth_floor)
        return refused, lowest, where

    def _compiled_refusals(
        self,
        when: FloatArray,
        measured: FloatArray,
        start_distances: FloatArray,
        start_depth: FloatArray,
        pair_floor: FloatArray,
        depth_floor: FloatArray,
        paths: Mapping[str, tuple[list[float], FloatArray]],
        first: bool,
    ) -> tuple[set[str], float, str]:
        """Do :meth:`_refusals` from its samples' times on in one compiled call (same verdicts)."""
        model = self._model
        capsule_arm, row_arm, joints, normals, offsets = self._compiled_arrays
        moving = np.array([arm in paths for arm in self._arms], dtype=np.bool_)
        table = np.zeros((len(paths), 5), dtype=np.int64)
        times: list[float] = []
        values: list[FloatArray] = []
        offset = 0
        for row, (name, (path_times, positions)) in enumerate(paths.items()):
            columns = model.arm_slices[name]
            table[row] = (len(times), len(path_times), columns.start,
                          columns.stop - columns.start, offset)
            times.extend(path_times)
            values.append(positions.reshape(-1))
            offset += positions.size
        settings = np.array([self.margin + 0.05, ROUNDING, float(self.dense), float(first)])
        refused, lowest, kind, which, count = compiled.guard_samples(
            when, measured, start_distances, start_depth, table, np.array(times, dtype=float),
            np.concatenate(values) if values else np.zeros(0), self._bounds.rows,
            self._bounds.order, self._bounds.starts, pair_floor, depth_floor,
            model.compiled_arguments, joints, normals, offsets, capsule_arm, row_arm, moving,
            settings,
        )
        self.samples_measured += int(count)
        where = (
            '' if kind == 0 else ' / '.join(model.pair_links(which)) if kind == 1
            else self._labels[which]
        )
        return {self._arms[index] for index in np.flatnonzero(refused)}, float(lowest), where

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


class _MotionBounds:
    """
    How far the joints' motion can bring each checked pair, and each bound, toward its floor.

    The guard's conservative advancement along a path: between two configurations ``x`` and
    ``y``, the distance of a capsule pair changes by at most ``row . |x - y|``, the row of its
    two capsules' anchors holding per moving joint 0 when the joint moves both capsules or
    neither (it moves them together, rigidly: their distance stays), else how far a unit of its
    motion can move a point of the capsule it moves (:func:`_anchor_reach`); a landmark's depth
    inside a bound by at most ``|normal|`` times how far its joint origin moves. A sample whose
    motion since the last one measured stays below every row's *room* (how far that measure
    was from its floor) therefore breaks no floor, whatever it measures: it need not be.

    :param model: The collision model.
    :param landmarks: The elbow and wrist landmarks (:func:`landmark_points`).
    :param spaces: The workspace's half-spaces.
    """

    def __init__(
        self,
        model: CollisionModel,
        landmarks: Sequence[tuple[str, str, int]],
        spaces: Sequence[HalfSpace],
    ) -> None:
        capsule_reach, origin_reach = _anchor_reach(model)
        keys = np.stack((model.anchor[model.pair_first], model.anchor[model.pair_second]), 1)
        groups, group = np.unique(keys.reshape(-1, 2), axis=0, return_inverse=True)
        group = group.reshape(-1)
        self.order = np.argsort(group, kind='stable').astype(np.int64)
        """The checked pairs, grouped by their capsules' anchors, shape (p,)."""
        self.starts = np.searchsorted(group[self.order], np.arange(len(groups))).astype(np.int64)
        """Where each group starts in :attr:`order`, shape (g,)."""
        moves_first, moves_second = model.moved_by[groups[:, 0]], model.moved_by[groups[:, 1]]
        pair_rows = (
            np.where(moves_first & ~moves_second, capsule_reach[groups[:, 0]], 0.0)
            + np.where(moves_second & ~moves_first, capsule_reach[groups[:, 1]], 0.0)
        )
        bound_rows = [
            float(np.linalg.norm(space.normal)) * origin_reach[joint]
            for _, _, joint in landmarks for space in spaces
        ]
        self.rows = np.vstack([pair_rows.reshape(-1, model.dof)] + bound_rows)
        """Per pair group, then per (landmark, bound) row as :func:`half_space_rows` orders
        them: how far a unit of each joint's motion can change its distance, shape (r, k)
        [m/rad] or [m/m]."""

    def room(self, pair_room: FloatArray, bound_room: FloatArray) -> FloatArray:
        """
        Return each row's room: its pairs' smallest, or its bound's.

        :param pair_room: Per checked pair, its distance less its floor [m].
        :param bound_room: Per (landmark, bound) row, its depth less its floor [m].
        :return: Per row of :attr:`rows`, shape (r,) [m].
        """
        if not pair_room.size:
            return bound_room
        return np.concatenate(
            (np.minimum.reduceat(pair_room[self.order], self.starts), bound_room)
        )

    def unreachable(
        self, configurations: FloatArray, measured: FloatArray, room: FloatArray
    ) -> int:
        """
        Return how many of the first configurations provably break no floor.

        :param configurations: The samples, in order, shape (s, k).
        :param measured: The last configuration measured, shape (k,).
        :param room: Each row's room at ``measured`` (:meth:`room`) [m].
        :return: The number of leading samples whose motion from ``measured`` stays below every
            row's room (by more than :data:`ROUNDING`).
        """
        if not room.size:
            return len(configurations)
        motion = np.abs(configurations - measured) @ self.rows.T
        reaching = (motion >= room - ROUNDING).any(axis=1)
        return int(np.argmax(reaching)) if reaching.any() else len(configurations)


def _anchor_reach(model: CollisionModel) -> tuple[FloatArray, FloatArray]:
    """
    Return, per anchor and moving joint, how far a unit of the joint's motion moves it.

    The bound of :func:`~pic_ros.robot.collision.joint_reach`, per anchor the joint carries
    instead of over all of them: for a turning joint, the link offsets along the path from the
    joint to the anchor added up (each sliding joint's travel included), plus the largest
    offset of the anchor's capsule ends for its capsules; for a sliding joint, 1; 0 for a joint
    that does not carry the anchor.

    :param model: The collision model.
    :return: ``(capsules, origin)``: bounds for the points of the anchor's capsules and for its
        joint's origin, each shape (k + 1, k), row ``a`` for anchor ``a``, the last row (index
        :data:`STATIC`) zero.
    """
    count = model.dof
    travel = [
        max(abs(low), abs(high)) if slides else 0.0
        for low, high, slides in zip(model.lower.tolist(), model.upper.tolist(), model.prismatic)
    ]
    offset = [math.hypot(rows[3], rows[7], rows[11]) for rows in model.fixed_rows]
    ends = np.zeros(count)  # per anchor, its capsule ends' largest offset
    for anchor, local in zip(model.anchor.tolist(), model.local):
        if anchor != STATIC:
            ends[anchor] = max(ends[anchor], float(np.max(np.linalg.norm(local, axis=1))))
    capsules, origin = np.zeros((count + 1, count)), np.zeros((count + 1, count))
    for carried in range(count):
        for joint in np.flatnonzero(model.carries[carried]).tolist():
            if model.prismatic[joint]:
                capsules[carried, joint] = origin[carried, joint] = 1.0
                continue
            length, node = 0.0, carried
            while node != joint:  # the path from the carried frame back to this joint
                length += offset[node] + travel[node]
                node = model.parents[node]
            origin[carried, joint] = length
            capsules[carried, joint] = length + ends[carried]
    return capsules, origin


def _path(chunk: TrajectoryChunk, now: float) -> tuple[list[float], FloatArray]:
    """
    Return a chunk's point times after ``now`` [s] and their positions, shape (n, dof).

    Up to the point where it comes to rest (:attr:`TrajectoryChunk.stop`: a planned chunk's
    braking tail ends there, and its last point only holds that rest for a late arrival).
    """
    start = chunk.stamp if chunk.stamp > 0.0 else now
    seconds, positions, _, _ = chunk.arrays()  # made once per chunk, no loop over the points
    end = chunk.stop + 1
    times: list[float] = ((start + seconds[:end]) - now).tolist()
    return times, positions[:end]  # a read-only view: nothing here writes a path


def _along(times: list[float], positions: FloatArray, when: FloatArray) -> FloatArray:
    """
    Return the positions of a path at several times, linear between its points, held at its ends.

    :param times: The path's point times [s].
    :param positions: Its points' positions, shape (n, dof).
    :param when: The times, shape (s,) [s].
    :return: The positions, shape (s, dof).
    """
    points = np.asarray(times, dtype=float)
    rows = np.asarray(positions, dtype=float)
    result = np.empty((len(when), rows.shape[1]))
    result[when >= points[-1]] = rows[-1]
    result[when <= points[0]] = rows[0]
    inside = np.flatnonzero((when > points[0]) & (when < points[-1]))
    if inside.size:
        index = np.searchsorted(points, when[inside])
        share = (when[inside] - points[index - 1]) / (points[index] - points[index - 1])
        result[inside] = rows[index - 1] + share[:, None] * (rows[index] - rows[index - 1])
    return result


def _step_key(
    paths: Mapping[str, tuple[list[float], FloatArray]],
    held: Mapping[str, FloatArray],
    torso: float | None,
) -> tuple[object, ...]:
    """Return what a step's check depends on, exactly: its paths, commands and torso lift."""
    return (
        tuple((name, tuple(times), positions.dtype.str, positions.shape, positions.tobytes())
              for name, (times, positions) in sorted(paths.items())),
        tuple((name, value.dtype.str, value.shape, value.tobytes())
              for name, value in sorted(held.items())),
        torso,
    )
