"""
The smallest joint step that meets linearized constraints, within the joint limits.

The self-collision avoidance (:mod:`pic_ros.solvers.avoidance`) moves a configuration by the
smallest step ``d`` with ``rows @ d >= needed`` -- one row per constraint near its target (a
pair's distance gradient, a workspace bound's) -- holding the joints at a limit the step pushes
against (:func:`bounded_step`). The solve (:func:`smallest_step`) is an active-set method on
the dual: non-negative multipliers ``lam`` with ``d = rows.T @ lam``; the most violated
constraint joins the active set, the active ones are met as equalities (damped, for the nearly
parallel rows of neighbouring links), and a constraint whose multiplier turns negative leaves
it.

With numba (:func:`load`), :func:`bounded_step` runs a compiled copy written in loops
(:data:`pic_ros.robot.kinematics.compiled.active_set_step`, beside the collision kernels the
avoidance's compiled slide calls with it), its small linear systems solved by Gaussian
elimination with partial pivoting instead of LAPACK: the same steps to rounding (tested),
without some thirty numpy calls per solve.

Units: the rows' (joint steps in [rad] or [m], constraint values in [m]).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.robot.kinematics import compiled

FloatArray = npt.NDArray[np.float64]

DAMPING: Final = 1e-4
"""Damping of the equality solves [m]."""

AT_LIMIT: Final = 1e-9
"""A joint this close to a limit is at it [rad] or [m]."""

LIMIT_ROUNDS: Final = 3
"""Times the joints a step pushes against a limit are held and the step solved again."""


def _solved(matrix: FloatArray, values: FloatArray) -> FloatArray:
    """
    Return ``np.linalg.solve(matrix, values)``; one equation by a division (far cheaper).

    :param matrix: The system, shape (k, k).
    :param values: The right-hand side, shape (k,).
    :return: The solution, shape (k,); a singular system raises as ``np.linalg.solve`` does.
    """
    if len(values) == 1:
        quotient: FloatArray = values / matrix[0]
        return quotient
    return np.linalg.solve(matrix, values).astype(np.float64, copy=False)


def smallest_step(rows: FloatArray, needed: FloatArray, damping: float = DAMPING) -> FloatArray:
    """
    Return the smallest joint step ``d`` with ``rows @ d >= needed``.

    An active-set solve of the dual (non-negative multipliers ``lam``, ``d = rows.T @ lam``):
    the most violated constraint joins the active set, the active ones are met as equalities
    (damped, for the nearly parallel rows of neighbouring links), and a constraint whose
    multiplier turns negative leaves it; at most ``2 m`` rounds. At most
    :data:`~pic_ros.robot.kinematics.compiled.ACTIVE_PER_JOINT` constraints per joint are
    active: a full set ends the solve with the step meeting them (a configuration deep in
    contact has hundreds that no step meets together).

    :param rows: Constraint gradients, shape (m, k).
    :param needed: Required change of each constraint, shape (m,) (negative: already met by
        that much).
    :param damping: Damping of the equality solves [m].
    :return: The step, shape (k,).
    """
    step = np.zeros(rows.shape[1])
    if not needed.size:
        return step
    active: list[int] = []
    # the first round's step is zero: its slack is -needed (the product with it adds zeros)
    slack = -needed
    most = compiled.ACTIVE_PER_JOINT * rows.shape[1]
    for _ in range(2 * len(needed) + 1):
        if active:
            slack = rows @ step - needed
            slack[active] = np.inf
        worst = int(slack.argmin())
        if slack[worst] >= -1e-9 or len(active) == most:
            break
        active.append(worst)
        multipliers: FloatArray | None = None  # of the active set as it stands, when solved
        for _ in range(len(active)):
            chosen = rows.take(active, axis=0)
            gram = chosen @ chosen.T + _damped_identity(damping, len(active))
            multipliers = _solved(gram, needed.take(active))
            if multipliers.min() >= 0.0:
                break
            del active[int(multipliers.argmin())]
            multipliers = None
        if not active:
            break
        if multipliers is None:
            chosen = rows.take(active, axis=0)
            multipliers = _solved(
                chosen @ chosen.T + _damped_identity(damping, len(active)), needed.take(active)
            )
        step = chosen.T @ multipliers  # chosen: the active rows
    return step


_IDENTITIES: dict[tuple[float, int], FloatArray] = {}


def _damped_identity(damping: float, size: int) -> FloatArray:
    """Return ``damping**2 * np.eye(size)``, made once per damping and size (read-only)."""
    key = (damping, size)
    identity = _IDENTITIES.get(key)
    if identity is None:
        identity = damping**2 * np.eye(size)
        identity.setflags(write=False)
        _IDENTITIES[key] = identity
    return identity


def bounded_step(
    rows: FloatArray,
    needed: FloatArray,
    x: FloatArray,
    free: npt.NDArray[np.bool_],
    lower: FloatArray,
    upper: FloatArray,
) -> FloatArray:
    """
    Return the smallest step meeting the linearized constraints, the joints at a limit held.

    A joint that is not free, or that the step would push further past a limit it is at, is
    held (its column of ``rows`` left out) and the step solved again, up to
    :data:`LIMIT_ROUNDS` times.

    :param rows: Constraint gradients, shape (m, k).
    :param needed: Required change of each constraint, shape (m,).
    :param x: The configuration the step starts from, shape (k,).
    :param free: Per joint, whether it may move, shape (k,).
    :param lower: Lower bounds of the joints, shape (k,).
    :param upper: Upper bounds of the joints, shape (k,).
    :return: The step, shape (k,).
    """
    if compiled.active_set_step is not None:
        step: FloatArray = compiled.active_set_step(
            np.ascontiguousarray(rows, dtype=np.float64),
            np.ascontiguousarray(needed, dtype=np.float64),
            np.ascontiguousarray(x, dtype=np.float64), np.ascontiguousarray(free, dtype=np.bool_),
            np.ascontiguousarray(lower, dtype=np.float64),
            np.ascontiguousarray(upper, dtype=np.float64), DAMPING, LIMIT_ROUNDS, AT_LIMIT,
        )
        return step
    return bounded_step_numpy(rows, needed, x, free, lower, upper)


def bounded_step_numpy(
    rows: FloatArray,
    needed: FloatArray,
    x: FloatArray,
    free: npt.NDArray[np.bool_],
    lower: FloatArray,
    upper: FloatArray,
) -> FloatArray:
    """
    Return what :func:`bounded_step` returns, with numpy alone (the compiled path's reference).

    :param rows: Constraint gradients, shape (m, k).
    :param needed: Required change of each constraint, shape (m,).
    :param x: The configuration the step starts from, shape (k,).
    :param free: Per joint, whether it may move, shape (k,).
    :param lower: Lower bounds of the joints, shape (k,).
    :param upper: Upper bounds of the joints, shape (k,).
    :return: The step, shape (k,).
    """
    active = free.copy()
    step = np.zeros(rows.shape[1])
    for _ in range(LIMIT_ROUNDS):
        masked = rows * active
        step = smallest_step(masked, needed)
        at_upper = (x >= upper - AT_LIMIT) & (step > 0.0)
        beyond = active & (at_upper | ((x <= lower + AT_LIMIT) & (step < 0.0)))
        if not beyond.any():
            break
        active &= ~beyond
    return step


def load() -> bool:
    """
    Compile the loops, or load them from numba's cache, on the first call (the avoidance's).

    :return: Whether the compiled step is there (False: numba missing or turned off).
    """
    compiled.load()
    return compiled.active_set_step is not None
