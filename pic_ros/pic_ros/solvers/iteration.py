"""
The backward-forward loop shared by FABRIK, PIC and PICs.

FABRIK (Aristidou & Lasenby 2011) alternates a *backward* pass, which puts the end effector on the
target and walks back towards the base keeping link lengths, and a *forward* pass, which re-anchors
the base and walks out again. PIC (Gonzalez & Wachs) adds octant constraints on link directions:
IN constraints (seen from the link's far joint) in the backward pass and OUT constraints (seen from
its near joint) in the forward pass, so OUT constraints win when the two disagree. A direction
outside its admissible octant set is projected onto the closest face
(:func:`~pic_ros.solvers.octants.project_direction`). PICs(η) widens the admissible set to the
octants within Hamming distance η.

The loop stops for a stated reason (:class:`~pic_ros.solvers.result.Termination`) and returns the
best points it saw. Link lengths are kept exactly on every pass.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

import numpy as np
from pic_ros.checks import check_number
from pic_ros.schema import ParameterDef
from pic_ros.solvers.octants import MEMBERSHIP_TOLERANCE, OCTANT_SIGNS, project_direction
from pic_ros.solvers.point_chain import add_scaled, distance, PointChain, sub, unit, Vector
from pic_ros.solvers.result import PointSolveResult, Termination

_DOWN: Vector = (0.0, 0.0, -1.0)


MAX_ITERATIONS: Final = ParameterDef(
    'max_iterations', 20, 'Cap on backward-forward passes per arm and frame', low=1, high=1000
)
"""The solver node's ``max_iterations`` (:attr:`IterationConfig.max_iterations`)."""

TOLERANCE: Final = ParameterDef(
    'tolerance', 0.001, 'Wrist tolerance of the point solver', unit='m', low=1e-6, high=0.1
)
"""The solver node's ``tolerance`` (:attr:`IterationConfig.tolerance`)."""


@dataclass(frozen=True)
class IterationConfig:
    """
    Stopping rules of the backward-forward loop.

    :param max_iterations: Cap on backward + forward passes (the paper: 20).
    :param tolerance: Stop when the wrist is this close to its target [m].
    :param min_improvement: Stop (stalled) when a pass improves the residual by less [m].
    :param min_elbow_bend: A target farther than the arm reaches with its elbow bent by this much
        is pulled in along the shoulder->target line to that distance [rad]. Keeping the arm off
        the fully stretched (singular) pose keeps the elbow and the roll joints from flipping
        between straight and bent when a target hovers at the edge of the reach.
    """

    max_iterations: int = MAX_ITERATIONS.default
    tolerance: float = TOLERANCE.default
    min_improvement: float = 1e-6
    min_elbow_bend: float = 0.1

    def __post_init__(self) -> None:
        MAX_ITERATIONS.check(self.max_iterations)
        TOLERANCE.check(self.tolerance)
        check_number('min_improvement', self.min_improvement, 0.0, 0.1)
        check_number('min_elbow_bend', self.min_elbow_bend, 0.0, 1.0)


@dataclass(frozen=True)
class OctantConstraints:
    """
    The four PIC constraints of one arm, with the PICs softening factor.

    A bone whose human direction is undefined (coincident joints) carries no constraint.

    :param shoulder_out: Octant of the upper arm seen from the shoulder, 1..8.
    :param elbow_in: Octant of the upper arm seen from the elbow (towards the shoulder), 1..8.
    :param elbow_out: Octant of the forearm seen from the elbow, 1..8.
    :param wrist_in: Octant of the forearm seen from the wrist (towards the elbow), 1..8.
    :param eta: Softening factor η, 0..3 (0 is PIC).
    :param upper_arm: Whether the upper-arm constraints apply.
    :param forearm: Whether the forearm constraints apply.
    :param tolerance: Slack on each unit-direction component: a component of the wrong sign but
        no larger than this still counts as on the octant's face (the octant hysteresis band, so
        that the human's own bones always satisfy the octants read from them).
    """

    shoulder_out: int
    elbow_in: int
    elbow_out: int
    wrist_in: int
    eta: int = 0
    upper_arm: bool = True
    forearm: bool = True
    tolerance: float = MEMBERSHIP_TOLERANCE

    @property
    def octants(self) -> tuple[int, int, int, int]:
        """Return the octants in the paper's order: shoulder-OUT, elbow-IN, elbow-OUT, wrist-IN."""
        return (self.shoulder_out, self.elbow_in, self.elbow_out, self.wrist_in)

    def satisfied_by(self, points: tuple[Vector, ...]) -> bool:
        """
        Tell whether every constrained link direction of a point chain is admissible.

        :param points: Root, shoulder, elbow, wrist (and tool), base frame [m].
        :return: ``True`` if all four constraints hold (within :attr:`tolerance`).
        """
        tolerance = self.tolerance + MEMBERSHIP_TOLERANCE
        eta = self.eta
        shoulder, elbow, wrist = points[1], points[2], points[3]
        if self.upper_arm:
            upper = unit(sub(elbow, shoulder), _DOWN)
            if _wrong(upper, self.shoulder_out, tolerance) > eta:
                return False
            if _wrong(upper, self.elbow_in, tolerance, -1.0) > eta:
                return False
        if self.forearm:
            fore = unit(sub(wrist, elbow), _DOWN)
            if _wrong(fore, self.elbow_out, tolerance) > eta:
                return False
            if _wrong(fore, self.wrist_in, tolerance, -1.0) > eta:
                return False
        return True


def _wrong(direction: Vector, octant: int, tolerance: float, sign: float = 1.0) -> int:
    """Count the components of ``sign * direction`` of the wrong sign for an octant."""
    x, y, z = OCTANT_SIGNS[octant - 1]
    return (
        (sign * x * direction[0] < -tolerance)
        + (sign * y * direction[1] < -tolerance)
        + (sign * z * direction[2] < -tolerance)
    )


def _place(
    start: Vector,
    toward: Vector,
    length: float,
    octant: int,
    eta: int,
    fallback: Vector,
    tolerance: float,
) -> Vector:
    """
    Put the next point ``length`` from ``start`` towards ``toward`` (FABRIK's step).

    With ``octant`` > 0 the direction is first projected into the admissible octant set (PIC),
    widened by ``tolerance``.
    """
    direction = sub(toward, start)
    if octant:
        if direction == (0.0, 0.0, 0.0):
            direction = fallback
        return add_scaled(start, project_direction(direction, octant, eta, tolerance), length)
    return add_scaled(start, unit(direction, fallback), length)


def _with_tool(chain: PointChain, shoulder: Vector, elbow: Vector, wrist: Vector) -> np.ndarray:
    forearm = unit(sub(wrist, elbow), _DOWN)
    tool = add_scaled(wrist, forearm, chain.lengths[3])
    return np.array([chain.points[0], shoulder, elbow, wrist, tool])


def solve_point_chain(
    chain: PointChain,
    target: Vector,
    config: IterationConfig,
    constraints: OctantConstraints | None = None,
) -> PointSolveResult:
    """
    Move the wrist of a point chain to a target, FABRIK-style, optionally under octant constraints.

    Without constraints this is FABRIK, with constraints PIC / PICs. A target beyond the reach
    (see :attr:`IterationConfig.min_elbow_bend`) is first pulled in along the line from the
    shoulder; the loop then runs to that point and the result reports ``UNREACHABLE``.

    :param chain: The arm's point chain at its current configuration (the warm start).
    :param target: Wrist target, base frame [m].
    :param config: Stopping rules.
    :param constraints: PIC/PICs octant constraints, or ``None`` for FABRIK.
    :return: The best points found and why the loop stopped.
    """
    _, shoulder, elbow, wrist, _ = chain.points
    _, upper_length, fore_length, _ = chain.lengths
    residual = distance(wrist, target)
    if residual <= config.tolerance and (
        constraints is None or constraints.satisfied_by(chain.points)
    ):
        return PointSolveResult(
            points=np.array(chain.points),
            residual=residual,
            iterations=0,
            termination=Termination.CONVERGED,
        )
    reach = math.sqrt(
        upper_length**2
        + fore_length**2
        + 2.0 * upper_length * fore_length * math.cos(config.min_elbow_bend)
    )
    unreachable = distance(target, shoulder) > reach
    if unreachable:
        target = add_scaled(shoulder, unit(sub(target, shoulder), _DOWN), reach)
        residual = distance(wrist, target)
    best = (elbow, wrist)
    best_residual = residual
    termination = Termination.MAX_ITERATIONS
    iterations = 0
    eta = constraints.eta if constraints is not None else 0
    slack = constraints.tolerance if constraints is not None else 0.0
    upper_out = constraints.shoulder_out if constraints and constraints.upper_arm else 0
    fore_out = constraints.elbow_out if constraints and constraints.forearm else 0
    fore_in = constraints.wrist_in if constraints and constraints.forearm else 0
    upper_fallback = unit(sub(elbow, shoulder), _DOWN)
    fore_fallback = unit(sub(wrist, elbow), _DOWN)
    fore_back = (-fore_fallback[0], -fore_fallback[1], -fore_fallback[2])
    for iterations in range(1, config.max_iterations + 1):  # noqa: B007 (read after)
        # Backward pass: wrist on the target, the forearm's IN constraint seen from the wrist.
        # (The upper arm's IN constraint, seen from the elbow, would only move the shoulder,
        # which is the fixed base; the same bone is held by shoulder-OUT in the forward pass.)
        back_elbow = _place(target, elbow, fore_length, fore_in, eta, fore_back, slack)
        # Forward pass: from the fixed shoulder, OUT constraints seen from the near joint.
        elbow = _place(shoulder, back_elbow, upper_length, upper_out, eta, upper_fallback, slack)
        wrist = _place(elbow, target, fore_length, fore_out, eta, fore_fallback, slack)
        previous = residual
        residual = distance(wrist, target)
        if residual < best_residual:
            best, best_residual = (elbow, wrist), residual
        if residual <= config.tolerance:
            termination = Termination.CONVERGED
            break
        if previous - residual < config.min_improvement:
            termination = Termination.STALLED
            break
    if unreachable:
        termination = Termination.UNREACHABLE
    return PointSolveResult(
        points=_with_tool(chain, shoulder, *best),
        residual=best_residual,
        iterations=iterations,
        termination=termination,
    )
