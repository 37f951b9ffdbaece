"""
The analytic solver's solve: plain-float functions, one compiled call with numba.

:mod:`pic_ros.solvers.analytic` describes the method and measures the arm; this module is the
solve itself -- the passes of the two closed forms, the Paden-Kahan subproblems, the clamps into
the working range and the step bound, the singular-pose weights and the residual -- over a
packed copy of the arm's geometry (:func:`pack_geometry`, :data:`GEOMETRY_SIZE` floats) and one
frame array (:data:`FRAME_SIZE` floats: the previous and current solution, the ranges, what
happened). The functions call each other by the names of :data:`PLAIN_FUNCTIONS`, which
:func:`load` binds to their compiled copies when numba is there (``PIC_ROS_JIT=0`` turns it off),
else to the plain functions, which Python runs: one source for both paths, which give the same
joint angles to rounding (tested). Compiled, a solve is one call instead of some fifteen Python
calls, which cost more than its few hundred float operations.

Every function the compiled ones call is in this file (numba's cache watches only the file of
the function it compiled).

Units: radians; vectors in the arm's root frame (the root joint's frame with the four solved
joints at zero), lengths in metres.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.robot.kinematics.compiled import compiler
from pic_ros.solvers.point_chain import cross, dot

FloatArray = npt.NDArray[np.float64]
Vector = tuple[float, float, float]

MAX_PASSES: Final = 4
"""Passes of the roll iteration for an arm whose roll axis misses both landmarks."""

LIMIT_WEIGHT: Final = 30.0
"""Cost of a candidate solution per radian outside the working range (against rad^2 moved)."""

STRAIGHT_SINES: Final = (0.05, 0.25)
"""Below the first sine the roll keeps its previous value; above the second it is solved."""

SOLVED_SQUARED: Final = STRAIGHT_SINES[1] * STRAIGHT_SINES[1]
"""Squared sine above which :func:`straight_share` is 1 (checked before calling it)."""

SETTLED: Final = 1e-9
"""Change of the roll [rad] below which the roll iteration has settled."""

CONVERGED: Final = 0
"""Termination code: the residual is within the tolerance."""

STALLED: Final = 1
"""Termination code: a joint limit, the step bound or a singular-pose hold kept the answer."""

UNREACHABLE: Final = 2
"""Termination code: the elbow angle or a bone direction is out of the arm's reach."""

MAX_ITERATIONS: Final = 3
"""Termination code: the roll iteration of an offset arm ended above the tolerance."""

_PI: Final = math.pi
_TWO_PI: Final = 2.0 * math.pi
_DOWN: Final = (0.0, 0.0, -1.0)

# The frame array: one solve in progress (as the Python path's _Frame).
PREVIOUS: Final = 0
"""Frame slots 0-3: the previous solution of q1 .. q4 [rad]."""
SOLUTION: Final = 4
"""Frame slots 4-7: the solution of q1 .. q4 so far [rad]."""
LOW: Final = 8
"""Frame slots 8-11: lower ends of the working ranges [rad] (set once per solver)."""
HIGH: Final = 12
"""Frame slots 12-15: upper ends of the working ranges [rad] (set once per solver)."""
STEP: Final = 16
"""Frame slot: the largest change of a joint in one solve [rad] (set once per solver)."""
BOUND: Final = 17
"""Frame slot: 1 when a bound or a singular-pose hold kept a joint from its answer."""
REACHABLE: Final = 18
"""Frame slot: 0 when the elbow angle or a bone direction is out of reach."""
RESIDUAL: Final = 19
"""Frame slot: the residual [m]."""
FRAME_SIZE: Final = 20
"""Floats of a frame array."""

# The packed geometry, in the order AnalyticSolver's geometry writes it.
TERMS: Final = 19
"""Floats of one Paden-Kahan subproblem 2's terms (the Python path's ``_TwoTurns.terms``)."""
TO_ROOT: Final = 0
W1: Final = 9
W2: Final = 12
ROLL: Final = 15
ROLL_NORMAL: Final = 18
W4: Final = 21
UPPER_FIXED: Final = 24
UPPER_ROLLED: Final = 27
FOREARM: Final = 30
FORE_ALONG: Final = 33
FORE_ACROSS: Final = 36
FORE_TURNED: Final = 39
UPPER_LENGTH: Final = 42
FOREARM_LENGTH: Final = 43
FIXED_TERMS: Final = 44
UPPER_SQUARED: Final = 46
ROLLED_ON_ROLL: Final = 47
ROLL_CROSS_ROLLED: Final = 48
ROLL_CROSS_FIXED: Final = 51
ELBOW_FIRST: Final = 54
EXACT: Final = 55
ELBOW: Final = 56
SHOULDER_TURNS: Final = 64
FOREARM_TURNS: Final = SHOULDER_TURNS + TERMS
UPPER_TURNS: Final = FOREARM_TURNS + TERMS
GEOMETRY_SIZE: Final = UPPER_TURNS + TERMS
"""Floats of a packed geometry."""


def turn(axis: Vector, cosine: float, sine: float, v: Vector) -> Vector:
    """Rotate ``v`` about the unit ``axis`` by the angle of ``cosine``, ``sine`` (Rodrigues)."""
    kx, ky, kz = axis
    vx, vy, vz = v
    along = (kx * vx + ky * vy + kz * vz) * (1.0 - cosine)
    return (
        vx * cosine + (ky * vz - kz * vy) * sine + kx * along,
        vy * cosine + (kz * vx - kx * vz) * sine + ky * along,
        vz * cosine + (kx * vy - ky * vx) * sine + kz * along,
    )


def angle_about(axis: Vector, p: Vector, q: Vector) -> float:
    """Return the angle about the unit ``axis`` turning ``p`` closest to ``q`` (subproblem 1)."""
    kx, ky, kz = axis
    px, py, pz = p
    qx, qy, qz = q
    return math.atan2(
        kx * (py * qz - pz * qy) + ky * (pz * qx - px * qz) + kz * (px * qy - py * qx),
        px * qx + py * qy + pz * qz
        - (kx * px + ky * py + kz * pz) * (kx * qx + ky * qy + kz * qz),
    )


def straight_share(cosine: float) -> float:
    """
    Return how much of a solved angle to take, from the cosine of the angle that defines it.

    0 below the first of :data:`STRAIGHT_SINES` (sine of that angle), 1 above the second, linear
    in the sine between them.
    """
    low, high = STRAIGHT_SINES
    squared = 1.0 - cosine * cosine
    if squared >= high * high:
        return 1.0
    return max(0.0, (math.sqrt(max(0.0, squared)) - low) / (high - low))


def nearest(value: float, previous: float, low: float, high: float) -> tuple[float, float]:
    """
    Return an angle at its whole turn nearest ``previous``, or one turn on, and its cost.

    The cost is the squared change plus :data:`LIMIT_WEIGHT` per radian outside ``[low, high]``.
    An angle outside the range is also tried one turn on, inside it: taken when that costs
    less (a short way out of the range is clamped rather than travelled the long way round).
    """
    value = previous + (value - previous + _PI) % _TWO_PI - _PI
    change = value - previous
    if low <= value <= high:
        return value, change * change
    if value < low:
        cost = change * change + LIMIT_WEIGHT * (low - value)
        other = value + _TWO_PI
    else:
        cost = change * change + LIMIT_WEIGHT * (value - high)
        other = value - _TWO_PI
    if low <= other <= high:
        other_cost = (other - previous) * (other - previous)
        if other_cost < cost:
            return other, other_cost
    return value, cost


def normalised(x: float, y: float, z: float) -> Vector:
    """Return ``(x, y, z)`` scaled to unit length (straight down if it has none)."""
    length = math.sqrt(x * x + y * y + z * z)
    if length < 1e-12:
        return _DOWN
    return (x / length, y / length, z / length)


# The solve (called by the names of PLAIN_FUNCTIONS).

def _vector_at(g: FloatArray, at: int) -> Vector:
    return (g[at], g[at + 1], g[at + 2])


def _cheaper_of(first: float, second: float, previous: float, low: float, high: float) -> float:
    """Return the cheaper of two solutions of one joint, each at its :func:`nearest` turn."""
    near_first, cost = _nearest(first, previous, low, high)
    near_second, other = _nearest(second, previous, low, high)
    return float(near_second if other < cost else near_first)


def _take_value(f: FloatArray, slot: int, value: float) -> float:
    """
    Store a joint's solution, clamped into its range for this solve, and return it.

    The range is the working range within the step of the previous value (a previous value
    outside the working range comes back by the step, as in the joint recovery).
    """
    previous, step = f[PREVIOUS + slot], f[STEP]
    low, high = f[LOW + slot], f[HIGH + slot]
    if low <= value <= high and previous - step <= value <= previous + step:
        f[SOLUTION + slot] = value
        return value
    down, up = previous - step, previous + step
    if down > low:
        low = down
    if up < low:
        low = up
    if up < high:
        high = up
    if down > high:
        high = down
    if value < low or value > high:
        value = low if value < low else high
        f[BOUND] = 1.0
    f[SOLUTION + slot] = value
    return value


def _held_at(f: FloatArray, slot: int) -> bool:
    """Tell whether a joint's stored value is on an end of its range for this solve."""
    value, previous, step = f[SOLUTION + slot], f[PREVIOUS + slot], f[STEP]
    return bool(value == min(max(f[LOW + slot], previous - step), previous + step)
                or value == max(min(f[HIGH + slot], previous + step), previous - step))


def _near_turn(f: FloatArray, slot: int, value: float) -> float:
    """Return ``value`` at its whole turn nearest the joint's current solution."""
    return float(_nearest(value, f[SOLUTION + slot], f[LOW + slot], f[HIGH + slot])[0])


def _pair_at(f: FloatArray, slot: int, count: int, a1: float, b1: float, a2: float, b2: float
             ) -> tuple[float, float]:
    """
    Return the cheapest of ``count`` solution pairs of joints ``slot``, ``slot + 1``.

    Each angle at its :func:`nearest` turn; the cost is the pair's summed cost. Not stored.
    """
    first, second = f[SOLUTION + slot], f[SOLUTION + slot + 1]
    low_a, high_a = f[LOW + slot], f[HIGH + slot]
    low_b, high_b = f[LOW + slot + 1], f[HIGH + slot + 1]
    best_a, best_b = 0.0, 0.0
    best_cost = math.inf
    for k in range(count):
        a = a1 if k == 0 else a2
        b = b1 if k == 0 else b2
        near_a, cost_a = _nearest(a, first, low_a, high_a)
        near_b, cost_b = _nearest(b, second, low_b, high_b)
        if cost_a + cost_b < best_cost:
            best_a, best_b, best_cost = near_a, near_b, cost_a + cost_b
    return best_a, best_b


def _two_terms(first: Vector, second: Vector, p: Vector, out: FloatArray) -> None:
    """
    Write the terms of Paden-Kahan subproblem 2 for unit axes and a unit ``p`` into ``out``.

    Subproblem 2: the angles ``(a, b)`` with ``R(first, a) R(second, b) p = y``. What depends
    on the axes and ``p`` alone, in :data:`TERMS` floats: the axes, their normal and first x
    normal, the axes' dot product, p along second, 1 - d^2, and the inner angle's coefficients.
    """
    ax, ay, az = first
    bx, by, bz = second
    px, py, pz = p
    n0, n1, n2 = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    d = ax * bx + ay * by + az * bz
    sin_a = bx * (py * az - pz * ay) + by * (pz * ax - px * az) + bz * (px * ay - py * ax)
    sin_g = bx * (py * n2 - pz * n1) + by * (pz * n0 - px * n2) + bz * (px * n1 - py * n0)
    out[0], out[1], out[2] = ax, ay, az
    out[3], out[4], out[5] = bx, by, bz
    out[6], out[7], out[8] = n0, n1, n2
    out[9], out[10], out[11] = ay * n2 - az * n1, az * n0 - ax * n2, ax * n1 - ay * n0
    out[12] = d
    out[13] = bx * px + by * py + bz * pz
    out[14] = 1.0 - d * d
    out[15] = sin_a
    out[16] = px * ax + py * ay + pz * az
    out[17] = sin_g
    out[18] = px * n0 + py * n1 + pz * n2


def _two_solve(t: FloatArray, at: int, y: Vector
               ) -> tuple[int, float, float, float, float, bool]:
    """
    Return the angle pairs that turn ``p`` onto the unit vector ``y`` (terms at ``at``).

    The outer angle turns ``c`` (the inner rotation's image of ``p``) onto ``y`` about
    ``first``: its sine ``first . (c x y)`` is ``beta normal . y + gamma across . y``
    (``across = first x normal``), its cosine ``c . y - (first . y)^2``; both are linear in
    gamma, like the inner angle's, so the two solutions share every term but gamma's sign.

    :return: ``(count, a1, b1, a2, b2, reached)``: two pairs, or one when ``y`` is on the edge
        of what the two rotations reach or beyond it (then the pair that turns ``p`` closest to
        ``y``), and whether ``y`` is reached.
    """
    yx, yy, yz = y
    ax, ay, az, bx, by, bz = t[at], t[at + 1], t[at + 2], t[at + 3], t[at + 4], t[at + 5]
    nx, ny, nz, mx, my, mz = t[at + 6], t[at + 7], t[at + 8], t[at + 9], t[at + 10], t[at + 11]
    d, pp, scale = t[at + 12], t[at + 13], t[at + 14]
    sin_a, cos_a, sin_g, cos_g = t[at + 15], t[at + 16], t[at + 17], t[at + 18]
    on_first = ax * yx + ay * yy + az * yz
    on_normal = nx * yx + ny * yy + nz * yz
    alpha = (on_first - d * pp) / scale
    beta = (pp - d * on_first) / scale
    gamma2 = (1.0 - alpha * alpha - beta * beta - 2.0 * alpha * beta * d) / scale
    outer_sin = beta * on_normal
    outer_cos = alpha * on_first + beta * (bx * yx + by * yy + bz * yz) - on_first * on_first
    inner_sin = alpha * sin_a
    inner_cos = alpha * cos_a + beta * pp - pp * pp
    if gamma2 <= 0.0:
        return (1, math.atan2(outer_sin, outer_cos), math.atan2(inner_sin, inner_cos), 0.0, 0.0,
                gamma2 >= -1e-9)
    gamma = math.sqrt(gamma2)
    outer_sin_g = gamma * (mx * yx + my * yy + mz * yz)
    outer_cos_g = gamma * on_normal
    inner_sin_g = gamma * sin_g
    inner_cos_g = gamma * cos_g
    return (
        2,
        math.atan2(outer_sin + outer_sin_g, outer_cos + outer_cos_g),
        math.atan2(inner_sin + inner_sin_g, inner_cos + inner_cos_g),
        math.atan2(outer_sin - outer_sin_g, outer_cos - outer_cos_g),
        math.atan2(inner_sin - inner_sin_g, inner_cos - inner_cos_g),
        True,
    )


def _upper_at(g: FloatArray, q3: float) -> Vector:
    """Return the upper arm S -> E with the roll at ``q3`` (root and shoulder at zero) [m]."""
    rolled = _turn(_vector_of(g, ROLL), math.cos(q3), math.sin(q3),
                   _vector_of(g, UPPER_ROLLED))
    return (rolled[0] + g[UPPER_FIXED], rolled[1] + g[UPPER_FIXED + 1],
            rolled[2] + g[UPPER_FIXED + 2])


def _elbow_seen(g: FloatArray, q3: float
                ) -> tuple[float, float, float, float, float, float, float, float]:
    """
    Return the elbow equation for the roll at ``q3`` (roll axis not through the shoulder).

    With the forearm ``R(w4, q4) f = along + cos(q4) across + sin(q4) turned`` (unit f) and the
    unit upper arm u seen from the roll joint (``h + R(w3, -q3) fixed``, normalised),
    ``u . R(w4, q4) f = cosine`` reads ``a cos(q4) + b sin(q4) = cosine - u . along``, that is
    ``radius cos(q4 - middle) = cosine - offset``.

    :return: ``(ux, uy, uz, offset, radius, middle, u . w3, u . roll_normal)``.
    """
    c, s = math.cos(q3), math.sin(q3)
    hx, hy, hz = _vector_of(g, UPPER_ROLLED)
    ox, oy, oz = _vector_of(g, UPPER_FIXED)
    tx, ty, tz = _vector_of(g, ROLL_CROSS_FIXED)
    ux, uy, uz = hx + c * ox - s * tx, hy + c * oy - s * ty, hz + c * oz - s * tz
    length = math.sqrt(ux * ux + uy * uy + uz * uz)
    if length < 1e-12:
        ux, uy, uz = _DOWN
    else:
        ux, uy, uz = ux / length, uy / length, uz / length
    along, across = _vector_of(g, FORE_ALONG), _vector_of(g, FORE_ACROSS)
    turned, roll, normal = (_vector_of(g, FORE_TURNED), _vector_of(g, ROLL),
                            _vector_of(g, ROLL_NORMAL))
    a = ux * across[0] + uy * across[1] + uz * across[2]
    b = ux * turned[0] + uy * turned[1] + uz * turned[2]
    return (ux, uy, uz, ux * along[0] + uy * along[1] + uz * along[2], math.hypot(a, b),
            math.atan2(b, a), ux * roll[0] + uy * roll[1] + uz * roll[2],
            ux * normal[0] + uy * normal[1] + uz * normal[2])


def _elbow_terms(g: FloatArray, q3: float
                 ) -> tuple[float, float, float, float, float, float, float, float]:
    """Return :func:`_elbow_seen` at ``q3``; an exact arm's, stored at q3 = 0, serves any."""
    if g[EXACT] != 0.0:
        return (g[ELBOW], g[ELBOW + 1], g[ELBOW + 2], g[ELBOW + 3], g[ELBOW + 4],
                g[ELBOW + 5], g[ELBOW + 6], g[ELBOW + 7])
    terms: tuple[float, float, float, float, float, float, float, float] = _seen(g, q3)
    return terms


def _upper_turns_solve(g: FloatArray, q3: float, y: Vector
                       ) -> tuple[int, float, float, float, float, bool]:
    """Return subproblem 2's pairs that point the upper arm (roll at ``q3``) along ``y``."""
    if g[EXACT] != 0.0 and g[ELBOW_FIRST] == 0.0:
        terms, at = g, UPPER_TURNS
    else:
        ux, uy, uz = _upper_of(g, q3)
        length = math.sqrt(ux * ux + uy * uy + uz * uz)
        upper = _DOWN if length < 1e-12 else (ux / length, uy / length, uz / length)
        terms, at = np.empty(TERMS), 0
        _terms_of(_vector_of(g, W1), _vector_of(g, W2), upper, terms)
    solved: tuple[int, float, float, float, float, bool] = _solve_two(terms, at, y)
    return solved


def _turned_back(g: FloatArray, c1: float, s1: float, c2: float, s2: float, v: Vector
                 ) -> Vector:
    """Turn a root-frame vector back by the root and shoulder rotations, ``R2^T R1^T v``."""
    kx, ky, kz = g[W1], g[W1 + 1], g[W1 + 2]
    vx, vy, vz = v
    along = (kx * vx + ky * vy + kz * vz) * (1.0 - c1)
    vx, vy, vz = (vx * c1 - (ky * vz - kz * vy) * s1 + kx * along,
                  vy * c1 - (kz * vx - kx * vz) * s1 + ky * along,
                  vz * c1 - (kx * vy - ky * vx) * s1 + kz * along)
    kx, ky, kz = g[W2], g[W2 + 1], g[W2 + 2]
    along = (kx * vx + ky * vy + kz * vz) * (1.0 - c2)
    return (vx * c2 - (ky * vz - kz * vy) * s2 + kx * along,
            vy * c2 - (kz * vx - kx * vz) * s2 + ky * along,
            vz * c2 - (kx * vy - ky * vx) * s2 + kz * along)


def _point_upper(g: FloatArray, upper: Vector, f: FloatArray) -> None:
    """Put the upper arm on its target with q1, q2, the roll as it is."""
    count, a1, b1, a2, b2, reachable = _upper_turns(g, f[SOLUTION + 2], upper)
    if not reachable:
        f[REACHABLE] = 0.0
    _shoulder_of(g, upper, f, count, a1, b1, a2, b2, upper)


def _shoulder_pair(g: FloatArray, upper: Vector, f: FloatArray, count: int, a1: float,
                   b1: float, a2: float, b2: float, aim: Vector) -> tuple[float, float]:
    """
    Take the cheapest (q1, q2) pair of subproblem 2, minding the root's singularity.

    When the vector subproblem 2 aimed along the root axis (``aim``), q1 is not defined by it:
    between :data:`STRAIGHT_SINES` (sine of the angle between them) q1 moves towards the solved
    value by the weight, and q2 points the upper arm for that q1. When a bound holds q2, q1
    points the upper arm (both by subproblem 1, the closest shape the bound allows; q1 is again
    weighted by how far the upper arm is from the root axis).
    """
    wanted_1, wanted_2 = _pair_of(f, 0, count, a1, b1, a2, b2)
    w1, w2 = _vector_of(g, W1), _vector_of(g, W2)
    start = f[SOLUTION]
    cosine = w1[0] * aim[0] + w1[1] * aim[1] + w1[2] * aim[2]
    share = 1.0 if 1.0 - cosine * cosine >= SOLVED_SQUARED else _weight(cosine)
    if share < 1.0:
        f[BOUND] = 1.0
        q1 = _take(f, 0, start + share * (wanted_1 - start))
    else:
        q1 = _take(f, 0, wanted_1)
    if q1 != wanted_1:
        arm = _upper_of(g, f[SOLUTION + 2])
        seen = _turn(w1, math.cos(q1), -math.sin(q1), upper)
        return q1, _take(f, 1, _near(f, 1, _angle_about(w2, arm, seen)))
    q2 = _take(f, 1, wanted_2)
    if q2 == wanted_2:
        return q1, q2
    arm = _upper_of(g, f[SOLUTION + 2])
    turned = _turn(w2, math.cos(q2), math.sin(q2), arm)
    solved = _near(f, 0, _angle_about(w1, turned, upper))
    cosine = w1[0] * upper[0] + w1[1] * upper[1] + w1[2] * upper[2]
    share = 1.0 if 1.0 - cosine * cosine >= SOLVED_SQUARED else _weight(cosine)
    return _take(f, 0, start + share * (solved - start)), q2


def _elbow_first_pass(g: FloatArray, upper: Vector, fore: Vector, f: FloatArray) -> None:
    """Run one pass of the elbow-angle-first closed form (roll axis through the shoulder)."""
    roll_before = f[SOLUTION + 2]
    exact = g[EXACT] != 0.0
    vx, vy, vz, offset, radius, middle, on_roll, on_normal = _elbow(g, roll_before)
    ux, uy, uz = upper
    fx, fy, fz = fore
    cosine = ux * fx + uy * fy + uz * fz
    # Elbow: the angle between the upper arm seen from the roll joint and the forearm.
    ratio = (cosine - offset) / radius if radius > 1e-12 else 0.0
    if abs(ratio) > 1.0 + 1e-12:
        f[REACHABLE] = 0.0
    half = math.acos(max(-1.0, min(1.0, ratio)))
    wanted = _cheaper(middle + half, middle - half, f[SOLUTION + 3], f[LOW + 3], f[HIGH + 3])
    q4 = _take(f, 3, wanted)
    share = 1.0 if 1.0 - cosine * cosine >= SOLVED_SQUARED else _weight(cosine)
    if q4 != wanted and not exact and _elbow_by_roll(g, upper, fore, f):
        # The elbow is on a bound and the roll axis misses the shoulder: the roll keeps the
        # elbow angle as close as it can, and q1, q2 point the upper arm for it.
        _point(g, upper, f)
        _finish(g, upper, fore, f, True, False, 0.0, 0.0, 0.0)
        return
    c4, s4 = math.cos(q4), math.sin(q4)
    along, across = _vector_of(g, FORE_ALONG), _vector_of(g, FORE_ACROSS)
    turned = _vector_of(g, FORE_TURNED)
    ax = along[0] + c4 * across[0] + s4 * turned[0]
    ay = along[1] + c4 * across[1] + s4 * turned[1]
    az = along[2] + c4 * across[2] + s4 * turned[2]
    if share > 0.0:
        # The rotation taking the arm's frame (upper arm, forearm) onto the target's; the image
        # of the roll axis, which the roll leaves in place, gives q1, q2. The arm's frame is
        # (v, e2, e3): e2 the forearm's unit part across v, e3 = v x e2; the target's
        # (upper, g2, g3). The image of x is (v . x) upper + (e2 . x) g2 + (e3 . x) g3.
        d = vx * ax + vy * ay + vz * az
        e2x, e2y, e2z = ax - d * vx, ay - d * vy, az - d * vz
        length = math.sqrt(e2x * e2x + e2y * e2y + e2z * e2z)
        if length < 1e-12:
            e2x, e2y, e2z = _DOWN
        else:
            e2x, e2y, e2z = e2x / length, e2y / length, e2z / length
        e3x, e3y, e3z = vy * e2z - vz * e2y, vz * e2x - vx * e2z, vx * e2y - vy * e2x
        g2x, g2y, g2z = _normalised(fx - cosine * ux, fy - cosine * uy, fz - cosine * uz)
        g3x, g3y, g3z = uy * g2z - uz * g2y, uz * g2x - ux * g2z, ux * g2y - uy * g2x
        wx, wy, wz = g[ROLL], g[ROLL + 1], g[ROLL + 2]
        k, k2, k3 = (on_roll, e2x * wx + e2y * wy + e2z * wz, e3x * wx + e3y * wy + e3z * wz)
        image = (k * ux + k2 * g2x + k3 * g3x, k * uy + k2 * g2y + k3 * g3y,
                 k * uz + k2 * g2z + k3 * g3z)
        count, a1, b1, a2, b2, reachable = _solve_two(g, SHOULDER_TURNS, image)
        if not reachable:
            f[REACHABLE] = 0.0
        q1, q2 = _shoulder_of(g, upper, f, count, a1, b1, a2, b2, image)
        solved_exactly = exact and f[REACHABLE] != 0.0 and f[BOUND] == 0.0
        if share == 1.0 and not solved_exactly:
            _finish(g, upper, fore, f, False, True, ax, ay, az)
            return
        # The roll turns the roll axis's normal n onto its image (exact when nothing above
        # was held; else only the value the straight-arm blend starts from).
        nx, ny, nz = g[ROLL_NORMAL], g[ROLL_NORMAL + 1], g[ROLL_NORMAL + 2]
        k, k2, k3 = (on_normal, e2x * nx + e2y * ny + e2z * nz, e3x * nx + e3y * ny + e3z * nz)
        image = (k * ux + k2 * g2x + k3 * g3x, k * uy + k2 * g2y + k3 * g3y,
                 k * uz + k2 * g2z + k3 * g3z)
        bx, by, bz = _back(g, math.cos(q1), math.sin(q1), math.cos(q2), math.sin(q2), image)
        solved = _near(f, 2, math.atan2(
            wx * (ny * bz - nz * by) + wy * (nz * bx - nx * bz) + wz * (nx * by - ny * bx),
            nx * bx + ny * by + nz * bz,
        ))
        if share == 1.0:
            _take(f, 2, solved)
            if f[BOUND] == 0.0:
                f[RESIDUAL] = 0.0
                return
            _finish(g, upper, fore, f, True, True, ax, ay, az)
            return
    else:
        solved = roll_before
    # Nearly straight: the roll (its plane undefined) moves towards the solved value by the
    # weight; q1, q2 point the upper arm with it. If a bound keeps them from it, the roll
    # (which swings the elbow's offset) is solved after all: the target then defines it.
    f[BOUND] = 1.0
    _take(f, 2, roll_before + share * (solved - roll_before))
    _point(g, upper, f)
    _finish(g, upper, fore, f, not (_held(f, 0) or _held(f, 1)), True, ax, ay, az)


def _upper_first_pass(g: FloatArray, upper: Vector, fore: Vector, f: FloatArray) -> None:
    """Run one pass of the upper-arm-first closed form (roll axis through the elbow)."""
    roll_before = f[SOLUTION + 2]
    _point(g, upper, f)
    q1, q2 = f[SOLUTION], f[SOLUTION + 1]
    seen = _back(g, math.cos(q1), math.sin(q1), math.cos(q2), math.sin(q2), fore)
    count, a1, b1, a2, b2, reachable = _solve_two(g, FOREARM_TURNS, seen)
    if not reachable:
        f[REACHABLE] = 0.0
    q3, q4 = _pair_of(f, 2, count, a1, b1, a2, b2)
    roll = _vector_of(g, ROLL)
    share = _weight(roll[0] * seen[0] + roll[1] * seen[1] + roll[2] * seen[2])
    if share < 1.0:
        # The forearm nearly along the roll axis: the roll moves towards the solved value by
        # the weight, and the elbow brings the forearm closest for that roll.
        f[BOUND] = 1.0
        q3 = _take(f, 2, roll_before + share * (q3 - roll_before))
        local = _turn(roll, math.cos(q3), -math.sin(q3), seen)
        q4 = _near(f, 3, _angle_about(_vector_of(g, W4), _vector_of(g, FOREARM), local))
    else:
        _take(f, 2, q3)
    held = _take(f, 3, q4) != q4
    if held and _elbow_by_roll(g, upper, fore, f):
        # The elbow is on a bound: the roll, which turns the elbow's offset, keeps the elbow
        # angle as close as it can (what Pose Accuracy scores, as in the recovery), and q1, q2
        # point the upper arm again.
        _point(g, upper, f)
        _finish(g, upper, fore, f, True, False, 0.0, 0.0, 0.0)
        return
    if g[EXACT] != 0.0 and f[REACHABLE] != 0.0 and f[BOUND] == 0.0:
        f[RESIDUAL] = 0.0
        return
    _finish(g, upper, fore, f, share < 1.0, False, 0.0, 0.0, 0.0)


def _elbow_angle_by_roll(g: FloatArray, upper: Vector, fore: Vector, f: FloatArray) -> bool:
    """
    Set the roll that brings the elbow angle closest to the target's, the elbow as it is.

    Seen from the roll joint the upper arm is ``rolled + R(w3, -q3) fixed``; its dot product
    with the forearm is ``a + b cos(q3) + c sin(q3)``.

    :return: Whether the roll changes the elbow angle at all (it does not when the roll axis
        passes through the shoulder).
    """
    q4 = f[SOLUTION + 3]
    c4, s4 = math.cos(q4), math.sin(q4)
    along, across = _vector_of(g, FORE_ALONG), _vector_of(g, FORE_ACROSS)
    turned = _vector_of(g, FORE_TURNED)
    fx = 1.0 * along[0] + c4 * across[0] + s4 * turned[0]
    fy = 1.0 * along[1] + c4 * across[1] + s4 * turned[1]
    fz = 1.0 * along[2] + c4 * across[2] + s4 * turned[2]
    ox, oy, oz = _vector_of(g, UPPER_FIXED)
    wx, wy, wz = _vector_of(g, ROLL)
    b = ox * fx + oy * fy + oz * fz
    tx, ty, tz = wy * oz - wz * oy, wz * ox - wx * oz, wx * oy - wy * ox
    c = -(tx * fx + ty * fy + tz * fz)
    radius = math.hypot(b, c)
    if radius < 1e-9:
        return False
    hx, hy, hz = _vector_of(g, UPPER_ROLLED)
    sx, sy, sz = hx + ox, hy + oy, hz + oz
    wanted = ((upper[0] * fore[0] + upper[1] * fore[1] + upper[2] * fore[2])
              * math.sqrt(sx * sx + sy * sy + sz * sz))
    ratio = max(-1.0, min(1.0, (wanted - (hx * fx + hy * fy + hz * fz)) / radius))
    middle, half = math.atan2(c, b), math.acos(ratio)
    _take(f, 2, _cheaper(middle + half, middle - half, f[SOLUTION + 2], f[LOW + 2], f[HIGH + 2]))
    return True


def _finish_pass(g: FloatArray, upper: Vector, fore: Vector, f: FloatArray, fixed_roll: bool,
                 given: bool, afx: float, afy: float, afz: float) -> None:
    """
    Solve the roll last (unless ``fixed_roll``) and measure the residual.

    With q1, q2 and q4 set and the targets turned back by q1, q2, the roll turns the rolling
    part h of the upper arm (``h + fixed``) and the forearm f about w3: the angle that brings
    both closest to their targets (weighted by the landmark lengths) is subproblem 1 over two
    pairs. The residual ``sqrt(L_u^2 |du|^2 + L_f^2 |df|^2)`` follows from the same sums, each
    ``p . R(w3, q3) t = along + cos(q3) across + sin(q3) turned``.

    :param given: Whether ``afx, afy, afz`` is the arm's unit forearm ``R(w4, q4) f`` for the
        stored q4 (the caller had it already).
    """
    q1, q2, q3, q4 = f[SOLUTION], f[SOLUTION + 1], f[SOLUTION + 2], f[SOLUTION + 3]
    c1, s1, c2, s2 = math.cos(q1), math.sin(q1), math.cos(q2), math.sin(q2)
    # Both targets turned back, R2^T R1^T.
    bux, buy, buz = _back(g, c1, s1, c2, s2, upper)
    bfx, bfy, bfz = _back(g, c1, s1, c2, s2, fore)
    # (R h) . b_u and (R f) . b_f below: along, across, turned parts.
    if given:
        fx, fy, fz = afx, afy, afz
    else:
        c4, s4 = math.cos(q4), math.sin(q4)
        fx = g[FORE_ALONG] + c4 * g[FORE_ACROSS] + s4 * g[FORE_TURNED]
        fy = g[FORE_ALONG + 1] + c4 * g[FORE_ACROSS + 1] + s4 * g[FORE_TURNED + 1]
        fz = g[FORE_ALONG + 2] + c4 * g[FORE_ACROSS + 2] + s4 * g[FORE_TURNED + 2]
    wx, wy, wz = _vector_of(g, ROLL)
    hx, hy, hz = _vector_of(g, UPPER_ROLLED)
    ox, oy, oz = _vector_of(g, UPPER_FIXED)
    tx, ty, tz = _vector_of(g, ROLL_CROSS_ROLLED)
    h_along = g[ROLLED_ON_ROLL] * (wx * bux + wy * buy + wz * buz)
    h_across = hx * bux + hy * buy + hz * buz - h_along
    h_turned = tx * bux + ty * buy + tz * buz
    f_along = (wx * fx + wy * fy + wz * fz) * (wx * bfx + wy * bfy + wz * bfz)
    f_across = fx * bfx + fy * bfy + fz * bfz - f_along
    f_turned = (wx * (fy * bfz - fz * bfy) + wy * (fz * bfx - fx * bfz)
                + wz * (fx * bfy - fy * bfx))
    length_u, length_f = g[UPPER_LENGTH], g[FOREARM_LENGTH]
    fixed_across, fixed_turned = g[FIXED_TERMS], g[FIXED_TERMS + 1]
    if not fixed_roll:
        # |R h + fixed - L_u b_u|^2 + L_f^2 |R f - b_f|^2, to be maximised over q3.
        cosine = length_u * h_across - fixed_across + length_f * length_f * f_across
        sine = length_u * h_turned - fixed_turned + length_f * length_f * f_turned
        q3 = _take(f, 2, _near(f, 2, math.atan2(sine, cosine)))
    c3, s3 = math.cos(q3), math.sin(q3)
    upper_squared = g[UPPER_SQUARED] + 2.0 * (c3 * fixed_across + s3 * fixed_turned)
    upper_dot = (h_along + c3 * h_across + s3 * h_turned + ox * bux + oy * buy + oz * buz
                 ) / math.sqrt(upper_squared)
    fore_dot = f_along + c3 * f_across + s3 * f_turned
    f[RESIDUAL] = math.sqrt(max(0.0, 2.0 * (
        length_u * length_u * (1.0 - upper_dot) + length_f * length_f * (1.0 - fore_dot)
    )))


def _solve_loops(g: FloatArray, f: FloatArray, p1: float, p2: float, p3: float, p4: float,
                 ux: float, uy: float, uz: float, fx: float, fy: float, fz: float,
                 tolerance: float) -> tuple[float, float, float, float, int, int, float]:
    """
    Solve one frame for the target upper-arm and forearm vectors.

    :param g: The packed geometry, :data:`GEOMETRY_SIZE` floats.
    :param f: The frame array, :data:`FRAME_SIZE` floats; its ranges and step set.
    :param p1: The previous q1 [rad] (``p2`` .. ``p4`` likewise).
    :param ux: Shoulder -> elbow target, robot base frame [m] (``uy``, ``uz``).
    :param fx: Elbow -> wrist target, robot base frame [m] (``fy``, ``fz``).
    :param tolerance: Residual tolerance [m].
    :return: q1 .. q4 [rad], passes, termination code, residual [m].
    """
    f[PREVIOUS], f[PREVIOUS + 1], f[PREVIOUS + 2], f[PREVIOUS + 3] = p1, p2, p3, p4
    f[SOLUTION], f[SOLUTION + 1], f[SOLUTION + 2], f[SOLUTION + 3] = p1, p2, p3, p4
    f[BOUND], f[REACHABLE], f[RESIDUAL] = 0.0, 1.0, 0.0
    a0, a1, a2 = g[TO_ROOT], g[TO_ROOT + 1], g[TO_ROOT + 2]
    b0, b1, b2 = g[TO_ROOT + 3], g[TO_ROOT + 4], g[TO_ROOT + 5]
    c0, c1, c2 = g[TO_ROOT + 6], g[TO_ROOT + 7], g[TO_ROOT + 8]
    rx, ry, rz = (a0 * ux + a1 * uy + a2 * uz, b0 * ux + b1 * uy + b2 * uz,
                  c0 * ux + c1 * uy + c2 * uz)
    sx, sy, sz = (a0 * fx + a1 * fy + a2 * fz, b0 * fx + b1 * fy + b2 * fz,
                  c0 * fx + c1 * fy + c2 * fz)
    # The unit target directions, in the root frame (turned first: a rotation keeps lengths);
    # straight down (robot base frame) when a bone has no length.
    length = math.sqrt(rx * rx + ry * ry + rz * rz)
    upper = (rx / length, ry / length, rz / length) if length >= 1e-12 else (-a2, -b2, -c2)
    length = math.sqrt(sx * sx + sy * sy + sz * sz)
    fore = (sx / length, sy / length, sz / length) if length >= 1e-12 else (-a2, -b2, -c2)
    elbow_first = g[ELBOW_FIRST] != 0.0
    exact = g[EXACT] != 0.0
    iterations = 0
    while iterations < MAX_PASSES:
        iterations += 1
        roll = f[SOLUTION + 2]
        if elbow_first:
            _elbow_first(g, upper, fore, f)
        else:
            _upper_first(g, upper, fore, f)
        if exact or f[RESIDUAL] <= tolerance or abs(f[SOLUTION + 2] - roll) < SETTLED:
            break
    if f[RESIDUAL] <= tolerance:
        code = CONVERGED
    elif f[BOUND] != 0.0:
        code = STALLED
    elif f[REACHABLE] == 0.0:
        code = UNREACHABLE
    else:
        code = MAX_ITERATIONS
    return (f[SOLUTION], f[SOLUTION + 1], f[SOLUTION + 2], f[SOLUTION + 3], iterations, code,
            f[RESIDUAL])


PLAIN_FUNCTIONS: Final = {
    '_turn': turn,
    '_angle_about': angle_about,
    '_weight': straight_share,
    '_nearest': nearest,
    '_normalised': normalised,
    '_vector_of': _vector_at,
    '_cheaper': _cheaper_of,
    '_take': _take_value,
    '_held': _held_at,
    '_near': _near_turn,
    '_pair_of': _pair_at,
    '_terms_of': _two_terms,
    '_solve_two': _two_solve,
    '_upper_of': _upper_at,
    '_seen': _elbow_seen,
    '_elbow': _elbow_terms,
    '_upper_turns': _upper_turns_solve,
    '_back': _turned_back,
    '_point': _point_upper,
    '_shoulder_of': _shoulder_pair,
    '_elbow_first': _elbow_first_pass,
    '_upper_first': _upper_first_pass,
    '_elbow_by_roll': _elbow_angle_by_roll,
    '_finish': _finish_pass,
    'solve': _solve_loops,
}
"""The names the functions call each other by, and the plain function each is bound to (its
compiled copy with numba)."""


def load() -> bool:
    """
    Bind the solve's functions, compiled (or read from numba's cache) when numba is there.

    The first call binds every name of :data:`PLAIN_FUNCTIONS`, to its compiled copy with numba
    (and runs the compiled solve once, so that numba compiles it here rather than in a node's
    first frame), else to the plain function, which Python runs.

    :return: Whether the solve is compiled (False: numba missing or ``PIC_ROS_JIT=0``).
    """
    global _loaded, _compiled
    if not _loaded:
        _loaded = True
        compiled = compiler()
        globals().update({
            name: function if compiled is None else compiled(function)
            for name, function in PLAIN_FUNCTIONS.items()
        })
        _compiled = compiled is not None
        if _compiled:
            _warm_up()
    return _compiled


def pack_geometry(
    to_root: tuple[Vector, Vector, Vector],
    axes: tuple[Vector, Vector, Vector, Vector],
    upper_fixed: Vector,
    upper_rolled: Vector,
    forearm: Vector,
    lengths: tuple[float, float],
    elbow_first: bool,
    exact: bool,
) -> list[float]:
    """
    Pack an arm measured in its root frame, with what the solve derives from it once.

    With the roll at q3 the upper arm is ``R(w3, q3) upper_rolled + upper_fixed`` and the
    forearm ``R(w3, q3) R(w4, q4) forearm``; the root and shoulder turn both by
    ``R(w1, q1) R(w2, q2)``.

    :param to_root: Rows of the rotation base frame -> root frame.
    :param axes: Unit root, shoulder, roll and elbow axes (w1 .. w4).
    :param upper_fixed: The part of K - S across the roll axis (S shoulder, K roll joint) [m].
    :param upper_rolled: E - K plus the part of K - S along the roll axis (E elbow) [m].
    :param forearm: W - E (W wrist) [m].
    :param lengths: Shoulder -> elbow and elbow -> wrist landmark distances at the neutral pose
        [m].
    :param elbow_first: Which closed form: ``True`` elbow angle first, ``False`` upper arm first.
    :param exact: Whether the roll axis passes through the landmark that form needs.
    :return: :data:`GEOMETRY_SIZE` floats, in the order of the slot constants.
    """
    load()
    w1, w2, w3, w4 = axes
    g = [0.0] * GEOMETRY_SIZE
    g[TO_ROOT:TO_ROOT + 9] = [*to_root[0], *to_root[1], *to_root[2]]
    g[W1:W1 + 3], g[W2:W2 + 3], g[ROLL:ROLL + 3], g[W4:W4 + 3] = w1, w2, w3, w4
    side = (1.0, 0.0, 0.0) if abs(w3[0]) < 0.6 else (0.0, 1.0, 0.0)
    along = dot(side, w3)
    g[ROLL_NORMAL:ROLL_NORMAL + 3] = normalised(
        side[0] - along * w3[0], side[1] - along * w3[1], side[2] - along * w3[2]
    )
    g[UPPER_FIXED:UPPER_FIXED + 3] = upper_fixed
    g[UPPER_ROLLED:UPPER_ROLLED + 3] = upper_rolled
    g[FOREARM:FOREARM + 3] = forearm
    fore = normalised(*forearm)
    along = dot(fore, w4)
    fore_along = (along * w4[0], along * w4[1], along * w4[2])
    fore_across = (fore[0] - fore_along[0], fore[1] - fore_along[1], fore[2] - fore_along[2])
    g[FORE_ALONG:FORE_ALONG + 3] = fore_along
    g[FORE_ACROSS:FORE_ACROSS + 3] = fore_across
    g[FORE_TURNED:FORE_TURNED + 3] = cross(w4, fore_across)
    g[UPPER_LENGTH], g[FOREARM_LENGTH] = lengths
    # R(w3, q3) h . fixed = cos(q3) h . fixed + sin(q3) (w3 x h) . fixed (fixed is across w3).
    g[FIXED_TERMS] = dot(upper_rolled, upper_fixed)
    g[FIXED_TERMS + 1] = dot(cross(w3, upper_rolled), upper_fixed)
    g[UPPER_SQUARED] = dot(upper_rolled, upper_rolled) + dot(upper_fixed, upper_fixed)
    # R(w3, q3) h = (w3 . h) w3 + cos(q3) (h - (w3 . h) w3) + sin(q3) w3 x h, and likewise
    # R(w3, -q3) fixed = cos(q3) fixed - sin(q3) w3 x fixed (fixed is across w3).
    g[ROLLED_ON_ROLL] = dot(w3, upper_rolled)
    g[ROLL_CROSS_ROLLED:ROLL_CROSS_ROLLED + 3] = cross(w3, upper_rolled)
    g[ROLL_CROSS_FIXED:ROLL_CROSS_FIXED + 3] = cross(w3, upper_fixed)
    g[ELBOW_FIRST], g[EXACT] = float(elbow_first), float(exact)
    rolled = turn(w3, math.cos(0.0), math.sin(0.0), upper_rolled)
    upper = normalised(rolled[0] + upper_fixed[0], rolled[1] + upper_fixed[1],
                       rolled[2] + upper_fixed[2])
    terms = [0.0] * TERMS
    for at, first, second, p in ((SHOULDER_TURNS, w1, w2, w3), (FOREARM_TURNS, w3, w4, fore),
                                 (UPPER_TURNS, w1, w2, upper)):
        _two_terms(first, second, p, terms)  # type: ignore[arg-type]
        g[at:at + TERMS] = terms
    g[ELBOW:ELBOW + 8] = _elbow_seen(np.array(g), 0.0)
    return g


def _warm_up() -> None:
    """
    Run the compiled solve once, on a made-up arm with a solve's types.

    numba compiles (or loads from its cache) on the first call: here, where the solvers are
    built, rather than in the first frame a node solves.
    """
    g = np.zeros(GEOMETRY_SIZE)
    g[TO_ROOT:TO_ROOT + 9] = np.eye(3).ravel()
    z_axis, y_axis, x_axis = (0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)
    for at, axis in ((W1, z_axis), (W2, y_axis), (ROLL, x_axis), (ROLL_NORMAL, y_axis),
                     (W4, y_axis), (FORE_ACROSS, x_axis)):
        g[at:at + 3] = axis
    g[UPPER_ROLLED], g[FOREARM], g[FORE_TURNED + 2] = 0.3, 0.25, -1.0
    g[UPPER_LENGTH], g[FOREARM_LENGTH], g[UPPER_SQUARED], g[ROLLED_ON_ROLL] = 0.3, 0.25, 0.09, 0.3
    g[ELBOW_FIRST] = 1.0
    for at, first, second in ((SHOULDER_TURNS, z_axis, y_axis), (FOREARM_TURNS, x_axis, y_axis),
                              (UPPER_TURNS, z_axis, y_axis)):
        _two_terms(first, second, x_axis, g[at:at + TERMS])
    f = np.zeros(FRAME_SIZE)
    f[LOW:LOW + 4], f[HIGH:HIGH + 4], f[STEP] = -3.0, 3.0, 0.3
    solve(g, f, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, -0.3, 0.2, 0.0, 0.0, 1e-6)


_loaded = False
_compiled = False

# The bound names (see PLAIN_FUNCTIONS), set by load().
_turn: Any = None
_angle_about: Any = None
_weight: Any = None
_nearest: Any = None
_normalised: Any = None
_vector_of: Any = None
_cheaper: Any = None
_take: Any = None
_held: Any = None
_near: Any = None
_pair_of: Any = None
_terms_of: Any = None
_solve_two: Any = None
_upper_of: Any = None
_seen: Any = None
_elbow: Any = None
_upper_turns: Any = None
_back: Any = None
_point: Any = None
_shoulder_of: Any = None
_elbow_first: Any = None
_upper_first: Any = None
_elbow_by_roll: Any = None
_finish: Any = None

solve: Any = None
"""One whole solve (:func:`_solve_loops`): compiled with numba, else the plain function; bound
by :func:`load`."""
