"""
Self-collision and workspace avoidance: the closest configuration that keeps the margin.

Every arm solver (FABRIK, PIC, PICs, analytic, plug-ins) answers per arm; the arms then meet
here, together (:class:`SelfCollisionAvoidance`, run by :class:`~pic_ros.imitation.
RobotImitator` after the arm solves). Given the solvers' configuration ``x_s`` of every moving
joint (:class:`~pic_ros.robot.collision.CollisionModel`: the arms, then the torso lift), it
returns the configuration nearest to it, in the joint space, where

- every checked capsule pair is at least its required distance apart
  (:meth:`~pic_ros.robot.collision.CollisionModel.required`: ``self_collision_margin``, less for
  a pair closer than that at the neutral pose) and a :data:`CLEARANCE` share of it more, left
  for the motion layer, whose guard refuses commands below the required distance;
- every elbow and wrist landmark is inside the robot file's workspace bounds by the margin;
- every joint is inside its position limits.

Method: most frames bind nothing and cost one broad-phase check; the solvers' answer is then
returned untouched, provided the straight way to it from the last answer keeps clear too.
Otherwise the configuration *slides* from the last answer toward the solvers' one: each step is
the one nearest to the straight move that meets the constraints linearized where it stands
(distance gradients from the closest points' Jacobians,
:meth:`~pic_ros.robot.collision.CollisionModel.gradients`; an active-set solve of a handful of
constraints, joints at a limit held), up to ``max_iterations`` steps. Starting from the last
answer keeps consecutive answers close: an arm goes around the other, never through it, and
never flips to the far side of an obstacle. When the floors cannot be met (a pose with no way
out within the limits), the last configuration that met them is kept
(:attr:`AvoidanceTermination.HELD`), so the answer always keeps the margin once one was ever
returned (the neutral pose does).

Units: metres and radians; positions in the robot base frame.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum
import functools
import math
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.collision import (
    bound_labels,
    CollisionCheck,
    CollisionModel,
    landmark_points,
)
from pic_ros.robot.collision_spec import CollisionSpec, WorkspaceSpec
from pic_ros.robot.kinematics import compiled
from pic_ros.schema import ParameterDef
from pic_ros.solvers import active_set
from pic_ros.solvers.active_set import bounded_step

FloatArray = npt.NDArray[np.float64]


SELF_COLLISION_MARGIN: Final = ParameterDef(
    'self_collision_margin', -1.0,
    "Smallest distance kept between robot links that may not touch (the robot file's collision "
    'model) and between the elbow and wrist and the workspace bounds; negative: the robot '
    "file's collision margin (3 cm unless it says); 0 turns avoidance and the guard off",
    unit='m', low=-1.0, high=0.2,
)
"""The solver node's and the trajectory publisher's ``self_collision_margin``."""

CLEARANCE: Final = 1.0 / 3.0
"""What the solvers keep beyond each required distance, as a share of it, for the motion
between two commands (the trajectory publisher's guard refuses commands below the required
distance itself)."""

OVERSHOOT: Final = 0.25
"""How far past its target a linearized step aims each unmet constraint, as a share of the
clearance: the distances are curved, so a step aimed exactly at the target falls short."""


def resolve_margin(value: float, spec: CollisionSpec) -> float:
    """
    Return the margin a ``self_collision_margin`` value means for a robot.

    :param value: The parameter value [m]; negative: the robot file's.
    :param spec: The robot file's ``collision`` section.
    :return: The margin [m] (0: off).
    """
    return spec.margin if value < 0.0 else float(value)


FRAME_STEP: Final = 0.3
"""Farthest any joint moves from one answer to the next [rad] or [m], as the solvers' own step
bound (:attr:`~pic_ros.solvers.recovery.RecoveryConfig.max_step`): the avoidance never makes a
jump the solvers would not."""

PATH_STEP: Final = 0.1
"""Joint-space spacing of the configurations checked on the way between two answers [rad]."""

MAX_STEP: Final = 0.15
"""Largest joint change of one linearized step [rad] or [m]."""

SETTLED_STEP: Final = 0.02
"""A slide ends once the constraints hold and its last step moved no joint this far [rad]:
what is left to the solvers' answer lies against a constraint."""

LOOKAHEAD: Final = 0.08
"""Constraints this far from their target or nearer are linearized at every step [m]: a step
moves a link by up to about :data:`MAX_STEP` times its reach, and a constraint left out could be
stepped through."""


class AvoidanceTermination(enum.Enum):
    """How the avoidance left a configuration."""

    CLEAR = 'clear'
    """Nothing was within reach of a constraint: the solvers' answer, untouched."""

    PUSHED = 'pushed'
    """Moved to the nearest configuration that keeps the margin."""

    HELD = 'held'
    """No configuration keeping the margin was found near the answer: the last one that kept
    it is returned."""

    OFF = 'off'
    """Avoidance is off (``self_collision_margin`` 0)."""


class AvoidanceResult(NamedTuple):
    """
    What the avoidance did to one configuration.

    :param x: The configuration to command, shape (k,) (the model's moving joints).
    :param termination: Why it is that one.
    :param iterations: Linearized steps taken.
    :param min_distance: Smallest capsule-pair distance at ``x`` [m] (exact below the margin
        plus 5 cm, a lower bound above).
    :param slack: Smallest excess of any constraint over what it requires at ``x`` [m]
        (negative: a constraint is not met, which only ``HELD`` from an unsafe start allows).
    :param binding: Labels of the constraints that moved the answer (link pairs, workspace
        bounds), when ``PUSHED`` or ``HELD``.
    """

    x: FloatArray
    termination: AvoidanceTermination
    iterations: int
    min_distance: float
    slack: float
    binding: tuple[str, ...]

    @property
    def active(self) -> bool:
        """Return whether a constraint changed the solvers' answer."""
        return self.termination in (AvoidanceTermination.PUSHED, AvoidanceTermination.HELD)


@dataclass(frozen=True)
class AvoidanceConfig:
    """
    Settings of :class:`SelfCollisionAvoidance`.

    :param margin: ``self_collision_margin`` [m]: negative, the robot file's margin; 0 turns
        the avoidance off.
    :param max_iterations: Linearized steps per frame at most, 1..50.
    :raises ConfigError: If a value is out of range.
    """

    margin: float = SELF_COLLISION_MARGIN.default
    max_iterations: int = 8

    def __post_init__(self) -> None:
        object.__setattr__(self, 'margin', SELF_COLLISION_MARGIN.check(self.margin))
        if isinstance(self.max_iterations, bool) or not isinstance(self.max_iterations, int) or (
            not 1 <= self.max_iterations <= 50
        ):
            raise ConfigError(f'max_iterations must be an integer in 1..50, got '
                              f'{self.max_iterations!r}')


def _lowest(values: FloatArray) -> float:
    """Return the smallest value, inf for none."""
    return float(values.min()) if values.size else math.inf


def _clipped(values: FloatArray, low: FloatArray, high: FloatArray) -> FloatArray:
    """Return the values clamped into ``[low, high]`` (as ``np.clip``, in fewer calls)."""
    return np.minimum(np.maximum(values, low), high)


class SelfCollisionAvoidance:
    """
    Keep a robot's configurations clear of self-contact and inside its workspace (module doc).

    :param model: The robot's collision model.
    :param arms: The robot's arms (their elbow and wrist landmarks, for the workspace).
    :param workspace: The robot file's workspace bounds, or None.
    :param config: Settings.
    :param spec: The robot file's ``collision`` section (its margin).
    """

    def __init__(
        self,
        model: CollisionModel,
        arms: Mapping[str, ArmModel],
        workspace: WorkspaceSpec | None = None,
        config: AvoidanceConfig | None = None,
        spec: CollisionSpec | None = None,
    ) -> None:
        self.model = model
        self.config = config if config is not None else AvoidanceConfig()
        self.margin = resolve_margin(self.config.margin, spec or CollisionSpec())
        """The margin kept [m] (0: off)."""
        margin = self.margin
        self._clearance = CLEARANCE * margin
        self._required = model.required(margin)
        self._target = self._required * (1.0 + CLEARANCE)
        self._spaces = () if workspace is None else workspace.half_spaces
        self._landmarks = landmark_points(model, arms) if self._spaces else []
        self._landmark_joints = np.array([joint for _, _, joint in self._landmarks], dtype=int)
        self._normals = np.array([space.normal for space in self._spaces]).reshape(-1, 3)
        self._offsets = np.array([space.offset for space in self._spaces])
        # per (landmark, bound), landmark-major as the depths: the joint whose origin the
        # landmark is, the joint carrying it, the bound's normal
        count = len(self._spaces)
        self._bound_joints = np.repeat(self._landmark_joints, count)
        self._bound_anchors = np.repeat(
            np.array([model.parents[joint] for _, _, joint in self._landmarks], dtype=np.int64),
            count,
        )
        self._bound_normals = np.tile(self._normals, (len(self._landmarks), 1))
        self._bound_names = bound_labels(self._landmarks, self._spaces)
        self._pair_names = [  # the labels of the checked pairs
            ' / '.join(model.pair_links(index)) for index in range(len(model.pairs))
        ]
        self._reach = margin + self._clearance + LOOKAHEAD + 0.01
        # enough to tell whether an answer keeps every target (pairs farther are bounded)
        self._near = float(self._target.max()) + 1e-3 if self._target.size else 0.0
        self._safe: FloatArray = model.neutral.copy()
        self._safe_check: CollisionCheck | None = None  # the check at it, when made
        self._memo: tuple[CollisionCheck, tuple[FloatArray, FloatArray, float, float]] | None = (
            None
        )
        if self.enabled:
            active_set.load()
            self._warm_up()

    def _warm_up(self) -> None:
        """
        Run every compiled piece once, on the types a frame gives them.

        numba compiles a function on its first call (or loads it from its cache): here, while
        the node starts, rather than in the first frame it solves (seconds, the first time after
        an install). The pieces a frame calls from Python are the check, the excesses, the
        first look and the slide (which calls the linearization and the active-set step itself);
        without numba there is nothing to compile.
        """
        if compiled.slide is None:
            return
        model = self.model
        start = model.neutral.copy()
        check = model.check(start, self._reach)
        self._slack(check)
        self._first_look(start + 2.0 * PATH_STEP, start)
        free = np.ones(model.dof, dtype=bool)
        self._slide(start, start, free, model.lower.copy(), model.upper.copy(), check)
        self._memo = None

    @property
    def enabled(self) -> bool:
        """Return whether the avoidance acts (a positive margin)."""
        return self.margin > 0.0

    def reset(self, x: npt.ArrayLike | None = None) -> None:
        """
        Start a new session from a configuration (default: the neutral pose).

        :param x: Where the robot is, shape (k,); kept as the last safe answer when it keeps
            every floor, else the neutral pose is (which always does).
        """
        model = self.model
        start = model.neutral.copy() if x is None else np.asarray(x, dtype=float)
        if x is not None and self.enabled:
            if self._slack(model.check(start, self._reach)) < 0.0:
                start = model.neutral.copy()
        self._safe = start
        self._safe_check = None

    def _over_target(self, check: CollisionCheck) -> tuple[FloatArray, FloatArray]:
        """
        Return each pair's and each bound's excess over its target [m], for a check.

        :param check: A check.
        :return: ``(pairs, bounds)``; bounds empty without a workspace.
        """
        return self._excess(check)[:2]

    def _excess(self, check: CollisionCheck) -> tuple[FloatArray, FloatArray, float, float]:
        """
        Return :meth:`_over_target`, the smallest of them, and :meth:`_slack` [m] (inf: none).

        Kept for the last check asked about: a step asks several times about the same one.
        """
        memo = self._memo
        if memo is not None and memo[0] is check:
            return memo[1]
        floor = self.margin + self._clearance
        if compiled.excess_over is not None:
            excess: tuple[FloatArray, FloatArray, float, float] = compiled.excess_over(
                check.distances, self._target, self._required, check.origins,
                self._landmark_joints, self._normals, self._offsets, floor, self.margin,
            )
        else:
            pairs = check.distances - self._target
            # writable when empty, as the compiled linearization takes every one
            depths = self._depths(check) if self._spaces else np.zeros(0)
            bounds = depths - floor
            lowest = min(_lowest(pairs), _lowest(bounds))
            slack = min(_lowest(check.distances - self._required), _lowest(depths - self.margin))
            excess = (pairs, bounds, lowest, slack)
        self._memo = (check, excess)
        return excess

    def _lowest_over_target(self, check: CollisionCheck) -> float:
        """Return the smallest excess of any constraint over its target [m]."""
        return self._excess(check)[2]

    def _depths(self, check: CollisionCheck) -> FloatArray:
        """Return how far each landmark is inside each bound [m] (negative: outside)."""
        points = check.origins.take(self._landmark_joints, axis=0)
        depths: FloatArray = (points @ self._normals.T - self._offsets).reshape(-1)
        return depths

    def _slack(self, check: CollisionCheck) -> float:
        """Return the smallest excess of any constraint over its floor [m]."""
        return self._excess(check)[3]

    def _labels(self, check: CollisionCheck, below: float) -> set[str]:
        """Return what the constraints under ``below`` of their target are (pairs, bounds)."""
        excess, extra = self._over_target(check)
        names = self._pair_names
        labels = {names[index] for index in (excess < below).nonzero()[0].tolist()}
        if self._spaces:
            labels |= {
                name for name, value in zip(self._bound_names, extra.tolist()) if value < below
            }
        return labels

    def _path_clear(self, start: FloatArray, end: FloatArray) -> bool:
        """Tell whether the straight joint-space path between two configurations keeps clear."""
        steps = int(np.ceil(np.abs(end - start).max() / PATH_STEP))
        for share in np.arange(1, steps) / max(steps, 1):
            check = self.model.check(start + share * (end - start), self._near)
            if self._slack(check) < 0.0:
                return False
        return True

    def resolve(
        self, x: npt.ArrayLike, movable: npt.ArrayLike | None = None
    ) -> AvoidanceResult:
        """
        Return the configuration to command instead of the solvers' one (module docstring).

        When the solvers' answer keeps every constraint, and the way to it from the last
        answer does too, it is returned as it is. Otherwise the configuration slides from the
        last safe answer toward the solvers' one along the constraints (each step the one
        nearest to the straight move that keeps the linearized constraints), so consecutive
        answers stay close and an arm never passes through the other to reach its target.

        :param x: The solvers' configuration, shape (k,).
        :param movable: Per moving joint, whether the avoidance may move it, shape (k,) bool
            (e.g. the torso lift only with whole-body imitation); default every arm joint.
        :return: The result.
        """
        model = self.model
        goal = _clipped(np.asarray(x, dtype=float), model.lower, model.upper)
        if not self.enabled:
            return AvoidanceResult(goal, AvoidanceTermination.OFF, 0, math.nan, math.inf, ())
        if movable is None:
            free = np.ones(model.dof, dtype=bool)
            if model.torso_index is not None:
                free[model.torso_index] = False
        else:
            free = np.asarray(movable, dtype=bool)
        previous = self._safe
        check, low, high, within, clear = self._first_look(goal, previous)
        if clear:
            if within:
                self._safe, self._safe_check = goal, None
                return AvoidanceResult(
                    goal, AvoidanceTermination.CLEAR, 0, check.minimum, self._slack(check), (),
                )
            # the way is clear but long (the last answer was held back): catch up by a step
            current = _clipped(goal, low, high)
            check = model.check(current, self._near)
            self._safe, self._safe_check = current, None
            return AvoidanceResult(
                current, AvoidanceTermination.PUSHED, 0, check.minimum,
                self._slack(check), ('catching up',),
            )
        binding = self._labels(check, 0.0)
        current = previous.copy()
        unchanged = True  # current is previous
        if not free.all():
            held = ~free
            current[held] = goal[held]
            unchanged = bool((current == previous).all())
        if self._safe_check is not None and unchanged:
            check = self._safe_check  # where the last answer was checked
        else:
            check = model.check(current, self._reach)
        current, iteration, check = self._slide(goal, current, free, low, high, check)
        binding |= self._labels(check, 0.5 * self._clearance)
        slack = self._slack(check)
        if slack >= 0.0:
            self._safe, self._safe_check = current, check
            return AvoidanceResult(
                current, AvoidanceTermination.PUSHED, iteration, check.minimum,
                slack, tuple(sorted(binding)),
            )
        kept = previous
        final = model.check(kept, self._reach)
        return AvoidanceResult(
            kept, AvoidanceTermination.HELD, iteration, final.minimum,
            self._slack(final), tuple(sorted(binding)),
        )

    @functools.cached_property
    def _slide_arguments(self) -> tuple[npt.NDArray[Any], ...]:
        """Return the arrays the compiled slide takes after the model's (made once)."""
        model = self.model
        settings = np.array([
            self._reach, self.margin + self._clearance, LOOKAHEAD,
            OVERSHOOT * self._clearance, -0.5 * self._clearance, MAX_STEP, SETTLED_STEP,
            active_set.DAMPING, active_set.AT_LIMIT, self.margin,
        ])
        return (
            self._target, self._required, self._landmark_joints, self._normals, self._offsets,
            model.pair_anchors, self._bound_joints, self._bound_anchors, self._bound_normals,
            model.moved_by, settings,
        )

    def _first_look(
        self, goal: FloatArray, previous: FloatArray
    ) -> tuple[CollisionCheck, FloatArray, FloatArray, bool, bool]:
        """
        Check the solvers' answer, and the straight way to it from the last answer.

        With numba, one compiled call (:data:`~pic_ros.robot.kinematics.compiled.first_look`).

        :param goal: The solvers' configuration, clamped into the limits, shape (k,).
        :param previous: The last answer, shape (k,).
        :return: The check at ``goal``, this frame's lowest and highest joint values (within
            :data:`FRAME_STEP` of ``previous`` and the limits), whether ``goal`` is between
            them, and whether every target holds at ``goal`` and every floor on the way.
        """
        model = self.model
        if compiled.first_look is not None:
            *arrays, pairs, bounds, lowest, slack, low, high, within, clear = (
                compiled.first_look(
                    goal, previous, model.lower, model.upper, model.compiled_arguments,
                    self._target, self._required, self._landmark_joints, self._normals,
                    self._offsets, self._look_settings,
                )
            )
            distances, points, rotations, positions, axes, origins, ends = arrays
            check = CollisionCheck(distances, points, (rotations, positions), axes, origins, ends)
            self._memo = (check, (pairs, bounds, lowest, slack))
            return check, low, high, within, clear
        check = model.check(goal, self._near)
        lowest = self._lowest_over_target(check)
        low = np.maximum(model.lower, previous - FRAME_STEP)
        high = np.minimum(model.upper, previous + FRAME_STEP)
        within = bool(((goal >= low) & (goal <= high)).all())
        return check, low, high, within, lowest >= 0.0 and self._path_clear(previous, goal)

    @functools.cached_property
    def _look_settings(self) -> FloatArray:
        """Return the distances and steps of the compiled first look (made once)."""
        return np.array([
            self._near, self.margin + self._clearance, self.margin, FRAME_STEP, PATH_STEP,
        ])

    def _slide(
        self,
        goal: FloatArray,
        start: FloatArray,
        free: npt.NDArray[np.bool_],
        low: FloatArray,
        high: FloatArray,
        check: CollisionCheck,
    ) -> tuple[FloatArray, int, CollisionCheck]:
        """
        Slide from a configuration toward the goal along the linearized constraints.

        With numba, one compiled call does the whole loop (:data:`~pic_ros.robot.kinematics.
        compiled.slide`: the same steps, to rounding).

        :param goal: The solvers' configuration, clamped into the limits, shape (k,).
        :param start: Where the slide starts (the last safe answer), shape (k,).
        :param free: Per moving joint, whether it may move, shape (k,).
        :param low: Lowest value of each joint this frame, shape (k,).
        :param high: Highest value of each joint this frame, shape (k,).
        :param check: The check at ``start``.
        :return: Where it ended, the steps taken, and the check there.
        """
        model = self.model
        if compiled.slide is not None:
            rotations, positions = check.anchors
            current, iterations, *arrays, pairs, bounds, lowest, slack = compiled.slide(
                goal, start, free, low, high, check.distances, check.points, rotations,
                positions, check.axes, check.origins, check.ends, model.compiled_arguments,
                *self._slide_arguments, self.config.max_iterations, active_set.LIMIT_ROUNDS,
            )
            distances, points, rotations, positions, axes, origins, ends = arrays
            check = CollisionCheck(distances, points, (rotations, positions), axes, origins, ends)
            self._memo = (check, (pairs, bounds, lowest, slack))  # the slide measured them
            return current, iterations, check
        current = start
        iteration = 0
        while iteration < self.config.max_iterations:
            iteration += 1
            towards = np.where(free, goal - current, 0.0)
            rows, needed = self._linearized(check)
            if rows.size:
                step = towards + bounded_step(
                    rows, needed - rows @ towards, current, free, low, high
                )
            else:
                step = towards
            largest = float(np.abs(step).max()) if step.size else 0.0
            if largest > MAX_STEP:
                step *= MAX_STEP / largest
            current = _clipped(current + step, low, high)
            check = model.check(current, self._reach)
            settled = self._lowest_over_target(check) >= -0.5 * self._clearance
            if settled and largest < SETTLED_STEP:
                break
        return current, iteration, check

    def _linearized(self, check: CollisionCheck) -> tuple[FloatArray, FloatArray]:
        """Return the gradients and needed changes of the constraints near their targets."""
        model = self.model
        excess, extra = self._over_target(check)
        aim = OVERSHOOT * self._clearance
        if compiled.constraint_rows is not None:
            linearized: tuple[FloatArray, FloatArray] = compiled.constraint_rows(
                check.points, check.ends, excess, extra, LOOKAHEAD, aim, model.pair_first,
                model.pair_second, model.pair_anchors, self._bound_joints, self._bound_anchors,
                self._bound_normals, check.axes, check.origins, model.prismatic_mask,
                model.moved_by,
            )
            return linearized
        near = (excess < LOOKAHEAD).nonzero()[0]
        rows: list[FloatArray] = []
        needed: list[FloatArray] = []
        screws = model.screws(check)  # how points move, for every row
        if near.size:
            rows.append(model.gradients(check, near, screws))
            needed.append(aim - excess[near])
        if self._spaces:
            close = (extra < LOOKAHEAD).nonzero()[0]
            if close.size:  # only the bounds within reach get gradients
                rows.append(model.moved_along(
                    screws, self._bound_anchors[close],
                    check.origins.take(self._bound_joints[close], axis=0),
                    self._bound_normals.take(close, axis=0),
                ))
                needed.append(aim - extra[close])
        if not rows:
            return np.zeros((0, model.dof)), np.zeros(0)
        if len(rows) == 1:  # pairs or bounds only: nothing to join
            return rows[0], needed[0]
        return np.vstack(rows), np.concatenate(needed)
