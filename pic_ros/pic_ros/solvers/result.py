"""
Result values of the solvers: why a solve stopped, and what it produced.

Not converging is an outcome, not an error: a live teleoperation loop must keep going, so every
solve returns its best-so-far answer with the reason it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


class Termination(enum.Enum):
    """Why a solve stopped (for the analytic solver: why its answer is not exact)."""

    CONVERGED = 'converged'
    """The end effector (analytic: both bone directions) is within the tolerance of its target."""

    STALLED = 'stalled'
    """A pass improved the residual by less than the minimum improvement (constraints bind);
    analytic: a joint limit, the step bound or the straight-arm roll hold kept the exact answer."""

    MAX_ITERATIONS = 'max_iterations'
    """The iteration cap was reached (analytic: the roll iteration of an offset arm)."""

    UNREACHABLE = 'unreachable'
    """The target is farther than the chain can reach; the chain is stretched toward it
    (analytic: the elbow angle or a bone direction is out of the arm's geometric reach)."""


@dataclass(frozen=True)
class PointSolveResult:
    """
    Result of a FABRIK / PIC / PICs solve on a point chain.

    :param points: Best points found, shape (5, 3): root, shoulder, elbow, wrist, tool, [m],
        robot base frame.
    :param residual: Distance from the wrist point to its target [m] (to the pulled-in target
        when the target was out of reach).
    :param iterations: Backward + forward passes done.
    :param termination: Why the solve stopped.
    """

    points: FloatArray
    residual: float
    iterations: int
    termination: Termination


@dataclass(frozen=True)
class RecoveryResult:
    """
    Result of the joint-angle recovery on the real URDF chain.

    :param q: Arm joint angles, shape (n,), [rad] (or [m] for prismatic joints), in the arm's
        joint order, inside the position limits.
    :param residual: Weighted landmark distance to the targets after recovery [m].
    :param iterations: Damped least-squares iterations done.
    :param termination: ``CONVERGED`` (within tolerance), ``STALLED`` or ``MAX_ITERATIONS``.
    """

    q: FloatArray
    residual: float
    iterations: int
    termination: Termination


class ArmSolveResult(NamedTuple):
    """
    Result of solving one arm for one skeleton frame.

    A named tuple rather than a frozen dataclass: it is made once per arm and frame, and a
    frozen dataclass takes several microseconds to build, a sizeable share of the analytic
    solver's whole solve.

    :param q: Arm joint angles, shape (n,), [rad] or [m], arm joint order, inside the limits.
    :param points: Point-chain solution, shape (5, 3), [m], robot base frame; ``None`` for a
        solver without a point chain (analytic).
    :param termination: Why the point solver (analytic: the closed form) stopped.
    :param iterations: Point-solver passes (analytic: closed-form passes).
    :param residual: Point-chain wrist distance to the (pulled-in) wrist target [m] (analytic:
        distance of the landmark bone vectors from the target directions at the robot's bone
        lengths, :mod:`pic_ros.solvers.analytic`).
    :param recovery: The joint recovery's own result; ``None`` when no recovery ran (analytic).
    :param octants: The four human octants used (shoulder-OUT, elbow-IN, elbow-OUT, wrist-IN),
        or ``None`` for an unconstrained solver.
    """

    q: FloatArray
    points: FloatArray | None
    termination: Termination
    iterations: int
    residual: float
    recovery: RecoveryResult | None
    octants: tuple[int, int, int, int] | None
