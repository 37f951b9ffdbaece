"""
Plain-float kernels of the kinematics and the collision check, compiled when numba is installed.

The arithmetic of the collision model and of the avoidance lives here, in plain floats:

- :func:`joint_frame`: a joint's frame from its parent's, a constant transform and the joint's
  motion (the per-frame hot path of the collision model's kinematics);
- :func:`segment_pair`: the closest points of two segments (the clamped closed form of Ericson,
  *Real-Time Collision Detection*, 5.1.9);
- :data:`collision_check`: :meth:`~pic_ros.robot.collision.CollisionModel.check` whole -- the
  anchor frames, both broad phases and the exact distances of every pair -- in one call;
- :data:`excess_over` and :data:`constraint_rows`: what the self-collision avoidance
  (:mod:`pic_ros.solvers.avoidance`) asks of a check -- each constraint's excess over its
  target and over its floor, and the gradients of those near it (as
  :meth:`~pic_ros.robot.collision.CollisionModel.gradients` and ``moved_along`` give them);
- :data:`active_set_step`: the avoidance's smallest step within the joint limits
  (:mod:`pic_ros.solvers.active_set`), its small systems solved by Gaussian elimination;
- :data:`first_look` and :data:`slide`: the avoidance's own steps whole --
  the check of the solvers' answer with the checks along the way to it from the last answer,
  and the slide along the constraints -- so that a frame costs a handful of compiled calls,
  not some fifteen Python calls per step;
- :data:`guard_samples`: the collision guard's samples of a step
  (:mod:`pic_ros.motion.guard`), the skipped ones and the measured ones, in one call.

The Python paths call the first two as they are. When numba is installed (and
``PIC_ROS_JIT`` is not ``0``), :func:`load` -- called when a collision model is built -- has all
compiled once per machine (numba's cache, beside this
file or in the user's cache directory) and :data:`collision_check` is what
:meth:`~pic_ros.robot.collision.CollisionModel.check` runs: one call instead of some forty numpy
calls, whose fixed cost dominated the self-collision avoidance and the trajectory publisher's
guard. Without numba the numpy path of ``check`` runs; the two agree to rounding (tested).
Every function the compiled ones call is in this file, so that numba's cache, which watches
only the file of the function it compiled, never runs stale code.

Units: metres and radians; positions in the robot base frame.
"""

from __future__ import annotations

import math
import os
from typing import Any, Final

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Affine = tuple[float, float, float, float, float, float, float, float, float, float, float, float]
"""A rigid transform's top 3 x 4 block, row-major: ``(r00, r01, r02, x, r10, ..., r22, z)``."""
Pose = tuple[float, float, float, float, float, float, float, float, float, float, float, float]
"""A frame in plain floats: its rotation row-major, then its origin (``r00 .. r22, x, y, z``)."""
Vector = tuple[float, float, float]

JIT_VARIABLE: Final = 'PIC_ROS_JIT'
"""Environment variable: ``0`` keeps every caller on the numpy path even with numba installed."""

PARALLEL: Final = 1e-12
"""Squared-length products below this count as parallel or degenerate segments [m^4]."""

ACTIVE_PER_JOINT: Final = 16
"""
The active-set solve of the avoidance's step holds at most this many constraints per joint.

On the shipped recordings, the adversarial takes and random goals it holds at most 9 (of up to
321 constraints, 8 to 14 joints). From a configuration deep in contact, the hundreds of
constraints that no step of a few joints meets together would otherwise each join the set, a
solve of several hundred equations per round (one TIAGo frame took 39 s; 0.22 s with this
bound). A full set ends the solve with the step that meets the constraints taken so far; that
step depends on the order the constraints joined in, which rounding decides between nearly
equal ones, so a bound that binds more often (4 per joint) parted the compiled and numpy steps
on random starts in contact.
"""


def joint_frame(parent: Pose, fixed: Affine, value: float, prismatic: bool) -> tuple[Pose, Vector]:
    """
    Place a joint's frame: its parent's frame, a constant transform, then the joint's motion.

    Written out in plain floats (a dozen numpy calls on 3 x 3 matrices cost more than the
    arithmetic).

    :param parent: The frame the constant transform starts from.
    :param fixed: Parent -> joint frame, turned so that the joint's axis is its z axis.
    :param value: The joint's position [rad] (about z) or [m] (along z).
    :param prismatic: Whether the joint slides.
    :return: ``(frame, origin)``: the joint's frame after its motion, and its origin before the
        motion (where its axis passes), both in the parent's base.
    """
    r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz = parent
    a00, a01, a02, ax, a10, a11, a12, ay, a20, a21, a22, az = fixed
    n00 = r00 * a00 + r01 * a10 + r02 * a20
    n01 = r00 * a01 + r01 * a11 + r02 * a21
    n02 = r00 * a02 + r01 * a12 + r02 * a22
    n10 = r10 * a00 + r11 * a10 + r12 * a20
    n11 = r10 * a01 + r11 * a11 + r12 * a21
    n12 = r10 * a02 + r11 * a12 + r12 * a22
    n20 = r20 * a00 + r21 * a10 + r22 * a20
    n21 = r20 * a01 + r21 * a11 + r22 * a21
    n22 = r20 * a02 + r21 * a12 + r22 * a22
    ox = r00 * ax + r01 * ay + r02 * az + px
    oy = r10 * ax + r11 * ay + r12 * az + py
    oz = r20 * ax + r21 * ay + r22 * az + pz
    if prismatic:
        return (
            n00, n01, n02, n10, n11, n12, n20, n21, n22,
            ox + n02 * value, oy + n12 * value, oz + n22 * value,
        ), (ox, oy, oz)
    cosine, sine = math.cos(value), math.sin(value)
    return (
        n00 * cosine + n01 * sine, n01 * cosine - n00 * sine, n02,
        n10 * cosine + n11 * sine, n11 * cosine - n10 * sine, n12,
        n20 * cosine + n21 * sine, n21 * cosine - n20 * sine, n22,
        ox, oy, oz,
    ), (ox, oy, oz)


def segment_pair(p1: Vector, q1: Vector, p2: Vector, q2: Vector) -> tuple[float, Vector, Vector]:
    """
    Return the closest points of two segments and their distance.

    Dot products are summed as the vectorized path of :func:`~pic_ros.robot.capsules.
    closest_pairs` sums them (the first and third terms, then the second), so both give the
    same numbers.

    :param p1: Start of the first segment [m].
    :param q1: End of the first segment [m].
    :param p2: Start of the second segment [m].
    :param q2: End of the second segment [m].
    :return: ``(distance, c1, c2)``: the distance [m] and the closest point on each segment.
    """
    d1x, d1y, d1z = q1[0] - p1[0], q1[1] - p1[1], q1[2] - p1[2]
    d2x, d2y, d2z = q2[0] - p2[0], q2[1] - p2[1], q2[2] - p2[2]
    rx, ry, rz = p1[0] - p2[0], p1[1] - p2[1], p1[2] - p2[2]
    a = (d1x * d1x + d1z * d1z) + d1y * d1y
    e = (d2x * d2x + d2z * d2z) + d2y * d2y
    b = (d1x * d2x + d1z * d2z) + d1y * d2y
    c = (d1x * rx + d1z * rz) + d1y * ry
    f = (d2x * rx + d2z * rz) + d2y * ry
    safe_a, safe_e = max(a, PARALLEL), max(e, PARALLEL)
    denominator = a * e - b * b
    s = 0.0
    if denominator > 1e-12 * a * e + 1e-300:
        s = min(max((b * f - c * e) / denominator, 0.0), 1.0)
    t = (b * s + f) / safe_e
    if t < 0.0:
        s, t = min(max(-c / safe_a, 0.0), 1.0), 0.0
    elif t > 1.0:
        s, t = min(max((b - c) / safe_a, 0.0), 1.0), 1.0
    if a <= PARALLEL:
        s, t = 0.0, (0.0 if e <= PARALLEL else min(max(f / safe_e, 0.0), 1.0))
    elif e <= PARALLEL:
        s, t = min(max(-c / safe_a, 0.0), 1.0), 0.0
    c1 = (p1[0] + d1x * s, p1[1] + d1y * s, p1[2] + d1z * s)
    c2 = (p2[0] + d2x * t, p2[1] + d2y * t, p2[2] + d2z * t)
    gx, gy, gz = c1[0] - c2[0], c1[1] - c2[1], c1[2] - c2[2]
    return math.sqrt((gx * gx + gz * gz) + gy * gy), c1, c2


def _frames_of(
    x: FloatArray,
    fixed: FloatArray,
    prismatic: npt.NDArray[np.bool_],
    parents: npt.NDArray[np.int64],
    order: npt.NDArray[np.int64],
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Return the anchor rotations and positions, joint axes and origins (compiled only)."""
    count = x.shape[0]
    rotations = np.zeros((count + 1, 3, 3))
    positions = np.zeros((count + 1, 3))
    rotations[0, 0, 0] = rotations[0, 1, 1] = rotations[0, 2, 2] = 1.0
    for index in order:
        row = parents[index] + 1
        r = rotations[row]
        p = positions[row]
        f = fixed[index]
        pose, _ = _joint_frame(
            (r[0, 0], r[0, 1], r[0, 2], r[1, 0], r[1, 1], r[1, 2], r[2, 0], r[2, 1], r[2, 2],
             p[0], p[1], p[2]),
            (f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11]),
            x[index], prismatic[index],
        )
        out = rotations[index + 1]
        for item in range(9):
            out[item // 3, item % 3] = pose[item]
        positions[index + 1, 0] = pose[9]
        positions[index + 1, 1] = pose[10]
        positions[index + 1, 2] = pose[11]
    axes = np.empty((count, 3))
    origins = np.empty((count, 3))
    for joint in range(count):
        for item in range(3):
            axes[joint, item] = rotations[joint + 1, item, 2]
            origins[joint, item] = positions[joint + 1, item]
            if prismatic[joint]:
                origins[joint, item] -= axes[joint, item] * x[joint]
    return rotations, positions, axes, origins


def _placed_point(
    rotations: FloatArray, positions: FloatArray, row: int, point: FloatArray
) -> Vector:
    """Return where a point of an anchor frame lands in the base frame (compiled only)."""
    r = rotations[row]
    p = positions[row]
    return (
        point[0] * r[0, 0] + point[1] * r[0, 1] + point[2] * r[0, 2] + p[0],
        point[0] * r[1, 0] + point[1] * r[1, 1] + point[2] * r[1, 2] + p[1],
        point[0] * r[2, 0] + point[1] * r[2, 1] + point[2] * r[2, 2] + p[2],
    )


def _check_pairs(
    x: FloatArray,
    fixed: FloatArray,
    prismatic: npt.NDArray[np.bool_],
    parents: npt.NDArray[np.int64],
    order: npt.NDArray[np.int64],
    body_rows: npt.NDArray[np.int64],
    body_centre: FloatArray,
    body_first: npt.NDArray[np.int64],
    body_second: npt.NDArray[np.int64],
    body_reach: FloatArray,
    pair_body: npt.NDArray[np.int64],
    anchor_rows: npt.NDArray[np.int64],
    local: FloatArray,
    pair_first: npt.NDArray[np.int64],
    pair_second: npt.NDArray[np.int64],
    pair_reach: FloatArray,
    radii: FloatArray,
    exact_within: float,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Measure every pair at a configuration (compiled only: :data:`collision_check`)."""
    rotations, positions, axes, origins = _frames(x, fixed, prismatic, parents, order)
    bodies = body_rows.shape[0]
    centres = np.empty((bodies, 3))
    for body in range(bodies):
        centre = _placed(rotations, positions, body_rows[body], body_centre[body])
        centres[body, 0], centres[body, 1], centres[body, 2] = centre
    bounds = np.empty(body_first.shape[0])
    for index in range(bounds.shape[0]):
        first, second = centres[body_first[index]], centres[body_second[index]]
        bx, by, bz = first[0] - second[0], first[1] - second[1], first[2] - second[2]
        bounds[index] = math.sqrt((bx * bx + bz * bz) + by * by) - body_reach[index]
    pairs = pair_body.shape[0]
    distances = np.empty(pairs)
    near = False
    for pair in range(pairs):
        distances[pair] = bounds[pair_body[pair]]
        near = near or distances[pair] < exact_within
    capsules = anchor_rows.shape[0]
    ends = np.zeros((capsules, 2, 3))
    points = np.empty((2, pairs, 3))  # set for the pairs measured exactly
    if not near:
        return distances, points, rotations, positions, axes, origins, ends
    for capsule in range(capsules):
        for end in range(2):
            placed = _placed(rotations, positions, anchor_rows[capsule], local[capsule, end])
            ends[capsule, end, 0], ends[capsule, end, 1], ends[capsule, end, 2] = placed
    for pair in range(pairs):
        if not distances[pair] < exact_within:
            continue
        one, two = ends[pair_first[pair]], ends[pair_second[pair]]
        mx = (one[0, 0] + one[1, 0]) - (two[0, 0] + two[1, 0])
        my = (one[0, 1] + one[1, 1]) - (two[0, 1] + two[1, 1])
        mz = (one[0, 2] + one[1, 2]) - (two[0, 2] + two[1, 2])
        apart = 0.5 * math.sqrt((mx * mx + mz * mz) + my * my) - pair_reach[pair]
        distances[pair] = max(distances[pair], apart)
        if not apart < exact_within:
            continue
        gap, c1, c2 = _segment_pair(
            (one[0, 0], one[0, 1], one[0, 2]), (one[1, 0], one[1, 1], one[1, 2]),
            (two[0, 0], two[0, 1], two[0, 2]), (two[1, 0], two[1, 1], two[1, 2]),
        )
        distances[pair] = gap - radii[pair_first[pair]] - radii[pair_second[pair]]
        for item in range(3):
            points[0, pair, item] = c1[item]
            points[1, pair, item] = c2[item]
    return distances, points, rotations, positions, axes, origins, ends


def _add_point_row(
    rows: FloatArray,
    row: int,
    anchor: int,
    point: Vector,
    normal: Vector,
    sign: float,
    axes: FloatArray,
    origins: FloatArray,
    prismatic: npt.NDArray[np.bool_],
    moved_by: npt.NDArray[np.bool_],
) -> None:
    """Add ``sign`` times how fast a carried point moves along a normal to a row (compiled)."""
    px, py, pz = point
    nx, ny, nz = normal
    # the point crossed with the normal, for the turning joints
    cx, cy, cz = py * nz - pz * ny, pz * nx - px * nz, px * ny - py * nx
    for joint in range(axes.shape[0]):
        if not moved_by[anchor, joint]:
            continue
        ax, ay, az = axes[joint, 0], axes[joint, 1], axes[joint, 2]
        if prismatic[joint]:
            value = nx * ax + ny * ay + nz * az
        else:
            ox, oy, oz = origins[joint, 0], origins[joint, 1], origins[joint, 2]
            mx, my, mz = oy * az - oz * ay, oz * ax - ox * az, ox * ay - oy * ax
            value = (cx * ax + cy * ay + cz * az) + (nx * mx + ny * my + nz * mz)
        rows[row, joint] += sign * value


def _add_pair_row(
    rows: FloatArray,
    row: int,
    pair: int,
    points: FloatArray,
    ends: FloatArray,
    pair_first: npt.NDArray[np.int64],
    pair_second: npt.NDArray[np.int64],
    pair_anchors: npt.NDArray[np.int64],
    axes: FloatArray,
    origins: FloatArray,
    prismatic: npt.NDArray[np.bool_],
    moved_by: npt.NDArray[np.bool_],
) -> None:
    """Put how a pair's distance changes with the joints in a row (compiled only)."""
    nx = points[0, pair, 0] - points[1, pair, 0]
    ny = points[0, pair, 1] - points[1, pair, 1]
    nz = points[0, pair, 2] - points[1, pair, 2]
    length = math.sqrt((nx * nx + ny * ny) + nz * nz)
    if length < 1e-9:  # crossing segments: apart along the line of their midpoints
        one, two = ends[pair_first[pair]], ends[pair_second[pair]]
        nx = (one[0, 0] + one[1, 0]) / 2.0 - (two[0, 0] + two[1, 0]) / 2.0
        ny = (one[0, 1] + one[1, 1]) / 2.0 - (two[0, 1] + two[1, 1]) / 2.0
        nz = (one[0, 2] + one[1, 2]) / 2.0 - (two[0, 2] + two[1, 2]) / 2.0
        length = math.sqrt((nx * nx + ny * ny) + nz * nz)
        if length < 1e-9:
            nx, ny, nz, length = 0.0, 0.0, 1.0, 1.0
    normal = (nx / length, ny / length, nz / length)
    for side in range(2):
        _point_row(
            rows, row, pair_anchors[side, pair],
            (points[side, pair, 0], points[side, pair, 1], points[side, pair, 2]), normal,
            1.0 if side == 0 else -1.0, axes, origins, prismatic, moved_by,
        )


def _constraint_rows(
    points: FloatArray,
    ends: FloatArray,
    pair_excess: FloatArray,
    bound_excess: FloatArray,
    within: float,
    aim: float,
    pair_first: npt.NDArray[np.int64],
    pair_second: npt.NDArray[np.int64],
    pair_anchors: npt.NDArray[np.int64],
    bound_joints: npt.NDArray[np.int64],
    bound_anchors: npt.NDArray[np.int64],
    bound_normals: FloatArray,
    axes: FloatArray,
    origins: FloatArray,
    prismatic: npt.NDArray[np.bool_],
    moved_by: npt.NDArray[np.bool_],
) -> tuple[FloatArray, FloatArray]:
    """Return the gradients and needs of the constraints near their targets (compiled only)."""
    count = 0
    for value in pair_excess:
        count += value < within
    for value in bound_excess:
        count += value < within
    rows = np.zeros((count, axes.shape[0]))
    needed = np.empty(count)
    row = 0
    for pair in range(pair_excess.shape[0]):
        if pair_excess[pair] < within:
            _pair_row(
                rows, row, pair, points, ends, pair_first, pair_second, pair_anchors, axes,
                origins, prismatic, moved_by,
            )
            needed[row] = aim - pair_excess[pair]
            row += 1
    for bound in range(bound_excess.shape[0]):
        if bound_excess[bound] < within:
            joint = bound_joints[bound]
            _point_row(
                rows, row, bound_anchors[bound],
                (origins[joint, 0], origins[joint, 1], origins[joint, 2]),
                (bound_normals[bound, 0], bound_normals[bound, 1], bound_normals[bound, 2]),
                1.0, axes, origins, prismatic, moved_by,
            )
            needed[row] = aim - bound_excess[bound]
            row += 1
    return rows, needed


def _landmark_depths(
    origins: FloatArray,
    landmark_joints: npt.NDArray[np.int64],
    normals: FloatArray,
    offsets: FloatArray,
    depth: FloatArray,
) -> None:
    """Fill how deep each landmark is in each half-space, landmark-major [m] (compiled only)."""
    spaces = normals.shape[0]
    for landmark in range(landmark_joints.shape[0]):
        origin = origins[landmark_joints[landmark]]
        for space in range(spaces):
            normal = normals[space]
            depth[landmark * spaces + space] = (
                origin[0] * normal[0] + origin[1] * normal[1] + origin[2] * normal[2]
            ) - offsets[space]


def _excess(
    distances: FloatArray,
    target: FloatArray,
    required: FloatArray,
    origins: FloatArray,
    landmark_joints: npt.NDArray[np.int64],
    normals: FloatArray,
    offsets: FloatArray,
    bound_floor: float,
    margin: float,
) -> tuple[FloatArray, FloatArray, float, float]:
    """
    Return each constraint's excess over its target, the lowest, and the lowest over the floors.

    In one pass over the pairs (compiled only): each pair's distance less its target, each
    workspace bound's depth less ``bound_floor`` (landmark-major), the smallest of those, and
    the smallest excess over what each requires (the pair's ``required`` distance, the bound's
    ``margin``) [m].
    """
    lowest = math.inf
    slack = math.inf
    pairs = np.empty(distances.shape[0])
    for pair in range(distances.shape[0]):
        pairs[pair] = distances[pair] - target[pair]
        lowest = min(lowest, pairs[pair])
        slack = min(slack, distances[pair] - required[pair])
    bounds = np.empty(landmark_joints.shape[0] * normals.shape[0])
    _depths(origins, landmark_joints, normals, offsets, bounds)
    for row in range(bounds.shape[0]):
        depth = bounds[row]
        bounds[row] = depth - bound_floor
        lowest = min(lowest, bounds[row])
        slack = min(slack, depth - margin)
    return pairs, bounds, lowest, slack


def _solve_small(matrix: FloatArray, values: FloatArray) -> FloatArray:
    """Solve a small linear system by Gaussian elimination, partial pivoting (compiled only)."""
    size = values.shape[0]
    if size == 1:
        quotient: FloatArray = values / matrix[0, 0]
        return quotient
    a = matrix.copy()
    b = values.copy()
    for column in range(size):
        pivot = column
        for row in range(column + 1, size):
            if abs(a[row, column]) > abs(a[pivot, column]):
                pivot = row
        if pivot != column:
            for item in range(size):
                a[column, item], a[pivot, item] = a[pivot, item], a[column, item]
            b[column], b[pivot] = b[pivot], b[column]
        inverse = 1.0 / a[column, column]
        for row in range(column + 1, size):
            factor = a[row, column] * inverse
            for item in range(column + 1, size):
                a[row, item] -= factor * a[column, item]
            b[row] -= factor * b[column]
    solution = np.empty(size)
    for row in range(size - 1, -1, -1):
        total = b[row]
        for item in range(row + 1, size):
            total -= a[row, item] * solution[item]
        solution[row] = total / a[row, row]
    return solution


def _multipliers(
    rows: FloatArray, needed: FloatArray, active: npt.NDArray[np.int64], count: int,
    damping: float,
) -> FloatArray:
    """Return the active constraints' multipliers, met as damped equalities (compiled only)."""
    gram = np.empty((count, count))
    for one in range(count):
        for two in range(count):
            total = 0.0
            for joint in range(rows.shape[1]):
                total += rows[active[one], joint] * rows[active[two], joint]
            gram[one, two] = total
        gram[one, one] += damping * damping
    right = np.empty(count)
    for one in range(count):
        right[one] = needed[active[one]]
    multipliers: FloatArray = _solve(gram, right)
    return multipliers


def _smallest_step_loops(rows: FloatArray, needed: FloatArray, damping: float) -> FloatArray:
    """Return what :func:`~pic_ros.solvers.active_set.smallest_step` returns, in loops."""
    constraints, joints = rows.shape
    step = np.zeros(joints)
    if constraints == 0:
        return step
    active = np.empty(constraints, dtype=np.int64)
    count = 0
    slack = -needed
    for _ in range(2 * constraints + 1):
        if count:
            slack = np.empty(constraints)
            for row in range(constraints):
                total = 0.0
                for joint in range(joints):
                    total += rows[row, joint] * step[joint]
                slack[row] = total - needed[row]
            for index in range(count):
                slack[active[index]] = math.inf
        worst = int(np.argmin(slack))
        if slack[worst] >= -1e-9 or count == ACTIVE_PER_JOINT * joints:
            break
        active[count] = worst
        count += 1
        multipliers = np.empty(0)
        solved = False
        for _ in range(count):
            multipliers = _combine(rows, needed, active, count, damping)
            if multipliers.min() >= 0.0:
                solved = True
                break
            drop = int(np.argmin(multipliers))
            for index in range(drop, count - 1):
                active[index] = active[index + 1]
            count -= 1
        if count == 0:
            break
        if not solved:
            multipliers = _combine(rows, needed, active, count, damping)
        step = np.zeros(joints)
        for index in range(count):
            for joint in range(joints):
                step[joint] += rows[active[index], joint] * multipliers[index]
    return step


def _bounded_step_loops(
    rows: FloatArray,
    needed: FloatArray,
    x: FloatArray,
    free: npt.NDArray[np.bool_],
    lower: FloatArray,
    upper: FloatArray,
    damping: float,
    limit_rounds: int,
    at_limit: float,
) -> FloatArray:
    """
    Return the smallest step meeting linearized constraints, the joints at a limit held.

    What :func:`pic_ros.solvers.active_set.bounded_step_numpy` returns, in loops (compiled
    only): ``limit_rounds`` and ``at_limit`` are that module's ``LIMIT_ROUNDS`` and
    ``AT_LIMIT`` [rad] or [m].
    """
    active = free.copy()
    step = np.zeros(rows.shape[1])
    masked = np.empty_like(rows)
    for _ in range(limit_rounds):
        for joint in range(rows.shape[1]):
            for row in range(rows.shape[0]):
                masked[row, joint] = rows[row, joint] if active[joint] else 0.0
        step = _smallest(masked, needed, damping)
        beyond = False
        for joint in range(rows.shape[1]):
            pushed = (x[joint] >= upper[joint] - at_limit and step[joint] > 0.0) or (
                x[joint] <= lower[joint] + at_limit and step[joint] < 0.0
            )
            if active[joint] and pushed:
                active[joint] = False
                beyond = True
        if not beyond:
            break
    return step


def _path_is_clear(
    start: FloatArray,
    end: FloatArray,
    path_step: float,
    exact_within: float,
    model: tuple[npt.NDArray[Any], ...],
    required: FloatArray,
    landmark_joints: npt.NDArray[np.int64],
    normals: FloatArray,
    offsets: FloatArray,
    margin: float,
) -> bool:
    """
    Tell whether the straight joint-space path between two configurations keeps every floor.

    The avoidance's ``_path_clear`` in one call (compiled only): the configurations
    ``path_step`` apart [rad] strictly between the two are checked (``model``: the collision
    model's arrays, as :func:`_check_pairs` takes them), each constraint against its required
    distance (pairs) or the margin (workspace bounds) [m].
    """
    largest = 0.0
    for joint in range(start.shape[0]):
        largest = max(largest, abs(end[joint] - start[joint]))
    steps = int(math.ceil(largest / path_step))
    x = np.empty(start.shape[0])
    for index in range(1, steps):
        share = index / max(steps, 1)
        for joint in range(start.shape[0]):
            x[joint] = start[joint] + share * (end[joint] - start[joint])
        distances, _, _, _, _, origins, _ = collision_check(x, *model, exact_within)
        slack = excess_over(
            distances, required, required, origins, landmark_joints, normals, offsets, margin,
            margin,
        )[3]
        if slack < 0.0:
            return False
    return True


def _first_look_at(
    goal: FloatArray,
    previous: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    model: tuple[npt.NDArray[Any], ...],
    target: FloatArray,
    required: FloatArray,
    landmark_joints: npt.NDArray[np.int64],
    normals: FloatArray,
    offsets: FloatArray,
    settings: FloatArray,
) -> tuple[
    FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray,
    FloatArray, FloatArray, float, float, FloatArray, FloatArray, bool, bool,
]:
    """
    Check the solvers' answer and the way to it from the last answer (compiled only).

    What :meth:`pic_ros.solvers.avoidance.SelfCollisionAvoidance.resolve` asks first, in one
    call (``model``: the collision model's arrays, as :func:`_check_pairs` takes them):
    ``goal`` checked exactly within ``settings[0]`` [m], its excesses (:func:`_excess`, with the
    workspace floor ``settings[1]`` and the margin ``settings[2]`` [m]), this frame's joint
    window (``previous`` +- ``settings[3]``, inside ``[lower, upper]``), whether ``goal`` is in
    it, and whether every target holds at ``goal`` and every floor on the way to it
    (:func:`_path_is_clear`, configurations ``settings[4]`` apart).

    :return: The check (distances, points, anchor rotations and positions, axes, origins,
        ends), the pairs' and the bounds' excess over their targets, the lowest of them, the
        slack, the window's low and high ends, whether ``goal`` is in it, and whether the way
        is clear.
    """
    near, floor, margin, frame_step, path_step = (
        settings[0], settings[1], settings[2], settings[3], settings[4]
    )
    distances, points, rotations, positions, axes, origins, ends = collision_check(
        goal, *model, near
    )
    pairs, bounds, lowest, slack = excess_over(
        distances, target, required, origins, landmark_joints, normals, offsets, floor, margin
    )
    count = goal.shape[0]
    low = np.empty(count)
    high = np.empty(count)
    within = True
    for joint in range(count):
        low[joint] = max(lower[joint], previous[joint] - frame_step)
        high[joint] = min(upper[joint], previous[joint] + frame_step)
        within = within and low[joint] <= goal[joint] <= high[joint]
    clear = lowest >= 0.0 and _path(
        previous, goal, path_step, near, model, required, landmark_joints, normals, offsets,
        margin,
    )
    return (
        distances, points, rotations, positions, axes, origins, ends, pairs, bounds, lowest,
        slack, low, high, within, clear,
    )


def _slide_loops(
    goal: FloatArray,
    start: FloatArray,
    free: npt.NDArray[np.bool_],
    low: FloatArray,
    high: FloatArray,
    distances: FloatArray,
    points: FloatArray,
    rotations: FloatArray,
    positions: FloatArray,
    axes: FloatArray,
    origins: FloatArray,
    ends: FloatArray,
    model: tuple[npt.NDArray[Any], ...],
    target: FloatArray,
    required: FloatArray,
    landmark_joints: npt.NDArray[np.int64],
    normals: FloatArray,
    offsets: FloatArray,
    pair_anchors: npt.NDArray[np.int64],
    bound_joints: npt.NDArray[np.int64],
    bound_anchors: npt.NDArray[np.int64],
    bound_normals: FloatArray,
    moved_by: npt.NDArray[np.bool_],
    settings: FloatArray,
    max_iterations: int,
    limit_rounds: int,
) -> tuple[
    FloatArray, int, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray,
    FloatArray, FloatArray, FloatArray, float, float,
]:
    """
    Slide a configuration toward a goal along the linearized constraints (compiled only).

    The loop of :meth:`pic_ros.solvers.avoidance.SelfCollisionAvoidance.resolve` in one call,
    step for step (``model``: the collision model's arrays, as :func:`_check_pairs` takes
    them): from ``start`` (checked as ``distances .. ends``), each step is the straight
    move toward ``goal`` (the free joints) plus the smallest correction meeting the constraints
    near their targets (:func:`_constraint_rows`, :func:`_bounded_step_loops`), scaled to the
    largest step, clamped into ``[low, high]`` and checked, until the constraints hold and a
    step is small, or ``max_iterations``.

    ``settings``: the exact-measure distance of the checks [m], the workspace floor (margin
    plus clearance) [m], the lookahead [m], the aim [m], the settled excess (negative) [m],
    the largest step and the settled step [rad] or [m], the active set's damping [m], its
    at-limit distance [rad] or [m], and the margin [m].

    :return: The configuration, the steps taken, its check (distances, points, anchor
        rotations and positions, axes, origins, ends) and the check's excesses
        (:func:`_excess`: pairs, bounds, the lowest, the slack) [m].
    """
    prismatic, pair_first, pair_second = model[1], model[12], model[13]
    reach, floor, lookahead, aim = settings[0], settings[1], settings[2], settings[3]
    settled_excess, max_step, settled_step = settings[4], settings[5], settings[6]
    damping, at_limit, margin = settings[7], settings[8], settings[9]
    count = goal.shape[0]
    current = start.copy()
    towards = np.empty(count)
    step = np.empty(count)
    pair_excess, bound_excess, lowest, slack = excess_over(
        distances, target, required, origins, landmark_joints, normals, offsets, floor, margin
    )
    iteration = 0
    while iteration < max_iterations:
        iteration += 1
        for joint in range(count):
            towards[joint] = goal[joint] - current[joint] if free[joint] else 0.0
        rows, needed = constraint_rows(
            points, ends, pair_excess, bound_excess, lookahead, aim, pair_first, pair_second,
            pair_anchors, bound_joints, bound_anchors, bound_normals, axes, origins, prismatic,
            moved_by,
        )
        for joint in range(count):
            step[joint] = towards[joint]
        if rows.shape[0]:
            for row in range(rows.shape[0]):
                total = 0.0
                for joint in range(count):
                    total += rows[row, joint] * towards[joint]
                needed[row] -= total
            correction = active_set_step(
                rows, needed, current, free, low, high, damping, limit_rounds, at_limit
            )
            for joint in range(count):
                step[joint] += correction[joint]
        largest = 0.0
        for joint in range(count):
            largest = max(largest, abs(step[joint]))
        if largest > max_step:
            scale = max_step / largest
            for joint in range(count):
                step[joint] *= scale
        for joint in range(count):
            current[joint] = min(max(current[joint] + step[joint], low[joint]), high[joint])
        distances, points, rotations, positions, axes, origins, ends = collision_check(
            current, *model, reach
        )
        pair_excess, bound_excess, lowest, slack = excess_over(
            distances, target, required, origins, landmark_joints, normals, offsets, floor,
            margin,
        )
        if lowest >= settled_excess and largest < settled_step:
            break
    return (
        current, iteration, distances, points, rotations, positions, axes, origins, ends,
        pair_excess, bound_excess, lowest, slack,
    )


def _first_reaching(
    configurations: FloatArray,
    start: int,
    measured: FloatArray,
    rows: FloatArray,
    room: FloatArray,
    rounding: float,
) -> int:
    """
    Return the first sample from ``start`` whose motion may reach a floor (compiled only).

    The collision guard's ``_MotionBounds.unreachable`` in loops: sample ``i`` may reach one
    when ``rows[r] . |configurations[i] - measured|`` is at least ``room[r] - rounding`` for a
    row ``r`` [m]; the number of samples when none does (or there is no row).
    """
    samples: int = configurations.shape[0]
    count = configurations.shape[1]
    if room.shape[0] == 0:
        return samples
    for index in range(start, samples):
        for row in range(rows.shape[0]):
            motion = 0.0
            for joint in range(count):
                motion += abs(configurations[index, joint] - measured[joint]) * rows[row, joint]
            if motion >= room[row] - rounding:
                return index
    return samples


def _group_room(
    distances: FloatArray,
    pair_floor: FloatArray,
    depth: FloatArray,
    depth_floor: FloatArray,
    order: npt.NDArray[np.int64],
    starts: npt.NDArray[np.int64],
    room: FloatArray,
) -> None:
    """Fill the guard's rows' room: each pair group's least, then each bound's (compiled only)."""
    groups = starts.shape[0]
    for group in range(groups):
        end = starts[group + 1] if group + 1 < groups else order.shape[0]
        least = math.inf
        for item in range(starts[group], end):
            least = min(least, distances[order[item]] - pair_floor[order[item]])
        room[group] = least
    for row in range(depth.shape[0]):
        room[groups + row] = depth[row] - depth_floor[row]


def _sampled_paths(
    when: FloatArray,
    measured: FloatArray,
    table: npt.NDArray[np.int64],
    times: FloatArray,
    values: FloatArray,
) -> FloatArray:
    """
    Return the configuration of every sample of some arms' paths (compiled only).

    ``measured`` everywhere, but each path's columns linear between its points at the times
    ``when`` and held at its ends (the guard's ``_along``). Row ``p`` of ``table``: path ``p``'s
    first time in ``times``, its number of points, its first column, its number of columns and
    its first value in ``values`` (its positions row by row).
    """
    samples = when.shape[0]
    configurations = np.empty((samples, measured.shape[0]))
    for sample in range(samples):
        configurations[sample] = measured
    for path in range(table.shape[0]):
        first, count, column, width, offset = (
            table[path, 0], table[path, 1], table[path, 2], table[path, 3], table[path, 4]
        )
        last = first + count - 1
        for sample in range(samples):
            moment = when[sample]
            if moment <= times[first]:
                for joint in range(width):
                    configurations[sample, column + joint] = values[offset + joint]
            elif moment >= times[last]:
                for joint in range(width):
                    configurations[sample, column + joint] = values[
                        offset + (count - 1) * width + joint
                    ]
            else:
                index = 1
                while times[first + index] < moment:
                    index += 1
                before, after = times[first + index - 1], times[first + index]
                share = (moment - before) / (after - before)
                for joint in range(width):
                    low = values[offset + (index - 1) * width + joint]
                    high = values[offset + index * width + joint]
                    configurations[sample, column + joint] = low + share * (high - low)
    return configurations


def _guard_samples_loops(
    when: FloatArray,
    measured: FloatArray,
    start_distances: FloatArray,
    start_depth: FloatArray,
    table: npt.NDArray[np.int64],
    times: FloatArray,
    values: FloatArray,
    rows: FloatArray,
    order: npt.NDArray[np.int64],
    starts: npt.NDArray[np.int64],
    pair_floor: FloatArray,
    depth_floor: FloatArray,
    model: tuple[npt.NDArray[Any], ...],
    landmark_joints: npt.NDArray[np.int64],
    normals: FloatArray,
    offsets: FloatArray,
    capsule_arm: npt.NDArray[np.int64],
    row_arm: npt.NDArray[np.int64],
    moving: npt.NDArray[np.bool_],
    settings: FloatArray,
) -> tuple[npt.NDArray[np.bool_], float, int, int, int]:
    """
    Measure a step's samples as the collision guard does (compiled only).

    The loop of :meth:`pic_ros.motion.guard.CollisionGuard._refusals` in one call, sample for
    sample (``model``: the collision model's arrays, as :func:`_check_pairs` takes them): the
    samples at ``when`` [s] (:func:`_sampled_paths`, from the commands ``measured``); from the
    first sample whose motion since the last one measured may reach a floor
    (:func:`_first_reaching`, against the rows' room, first at the commands: their check's
    ``start_distances`` and ``start_depth``; every sample when ``settings[2]`` is not 0),
    each sample is checked exactly within ``settings[0]`` [m]; a pair below ``pair_floor``,
    or a landmark row (``landmark_joints`` x the half-spaces ``normals``, ``offsets``) below
    ``depth_floor``, refuses the moving arms it belongs to (``capsule_arm``, ``row_arm``: arm
    indices, -1 for none). With ``settings[3]`` not 0 it stops at the first sample that
    refuses an arm. ``settings[1]``: the rounding slack of the rows [m]; ``order``,
    ``starts``: the rows' pair groups (:func:`_group_room`).

    :return: Per arm, whether it is refused; the smallest pair distance measured [m] (inf:
        none); what was closest to breaking (0: nothing, 1: a pair, 2: a landmark row) and its
        index, the last one the samples set, in the order the Python loop sets it; the number of
        samples measured.
    """
    pair_first, pair_second = model[12], model[13]
    exact_within, rounding = settings[0], settings[1]
    dense, first = settings[2] != 0.0, settings[3] != 0.0
    configurations = _sampled(when, measured, table, times, values)
    samples, count = configurations.shape
    pairs, groups = pair_first.shape[0], starts.shape[0]
    refused = np.zeros(moving.shape[0], dtype=np.bool_)
    anything = False
    lowest = math.inf
    kind, which = 0, -1
    last = measured.copy()
    room = np.empty(groups + start_depth.shape[0])
    _room(start_distances, pair_floor, start_depth, depth_floor, order, starts, room)
    depth = np.empty(row_arm.shape[0])
    index = measured_count = 0
    while index < samples:
        if not dense:
            index = _reaching(configurations, index, last, rows, room, rounding)
            if index == samples:
                break
        x = configurations[index]
        index += 1
        measured_count += 1
        distances, _, _, _, _, origins, _ = collision_check(x, *model, exact_within)
        smallest, at = math.inf, -1
        for pair in range(pairs):
            distance = distances[pair]
            if distance < smallest:
                smallest, at = distance, pair
            if distance < pair_floor[pair]:
                for arm in (capsule_arm[pair_first[pair]], capsule_arm[pair_second[pair]]):
                    if arm >= 0 and moving[arm]:
                        refused[arm] = True
                        anything = True
        if pairs and smallest < lowest:
            lowest, kind, which = smallest, 1, at
        _depths(origins, landmark_joints, normals, offsets, depth)
        for row in range(depth.shape[0]):
            if depth[row] < depth_floor[row]:
                if row_arm[row] >= 0 and moving[row_arm[row]]:
                    refused[row_arm[row]] = True
                    anything = True
                kind, which = 2, row
        if first and anything:
            break
        for joint in range(count):
            last[joint] = x[joint]
        _room(distances, pair_floor, depth, depth_floor, order, starts, room)
    return refused, lowest, kind, which, measured_count


def compiler() -> Any:
    """
    Return numba's ``njit`` as this package compiles with it, or None.

    :return: ``numba.njit(cache=True)``, recording what it compiles for
        :func:`compiled_in_process`; None when numba is not installed or ``PIC_ROS_JIT`` is
        ``0``. The GIL stays held: the calls are tens of microseconds, and a thread that
        releases it waits for it again behind any other busy thread of the process (up to the
        interpreter's 5 ms switch interval, each call).
    """
    if os.environ.get(JIT_VARIABLE, '1').strip() == '0':
        return None
    try:
        import numba
    except ImportError:
        return None

    def compile_cached(function: Any) -> Any:
        dispatcher = numba.njit(cache=True)(function)
        _dispatchers.append(dispatcher)
        return dispatcher

    return compile_cached


class Kernel:
    """
    A plain-float loop compiled by :func:`compiler` on its first use, or its numpy path.

    For a module's one kernel: :meth:`function` is the loop compiled when numba is there (and
    ``PIC_ROS_JIT`` is not ``0``), else the numpy path, which gives the same floats.

    :param numpy_path: The function without numba.
    :param loops: The same function in plain floats, for numba.
    """

    def __init__(self, numpy_path: Any, loops: Any) -> None:
        self._numpy_path = numpy_path
        self._loops = loops
        self._function: Any = None

    @property
    def loaded(self) -> bool:
        """Return whether :meth:`function` was chosen (and compiled) already."""
        return self._function is not None

    def function(self) -> Any:
        """Return the compiled loop, or the numpy path; compiled on the first call."""
        if self._function is None:
            compiled = compiler()
            self._function = self._numpy_path if compiled is None else compiled(self._loops)
        return self._function


def compiled_in_process() -> int:
    """
    Return how many kernel signatures this process compiled rather than read from the cache.

    Non-zero in the first process that runs the kernels after an install or a change of this
    package (numba takes several seconds per process then); zero when every one came from
    numba's cache.

    :return: The number of cache misses of every kernel so far.
    """
    return sum(sum(dispatcher.stats.cache_misses.values()) for dispatcher in _dispatchers)


_dispatchers: list[Any] = []


def load() -> bool:
    """
    Compile the kernels, or load them from numba's cache, once (the first call).

    Called when a collision model is built, so that a process that never builds one (the
    skeleton node, the tools' simulator and replay) never imports numba.

    :return: Whether the compiled kernels are there (False: numba missing or turned off).
    """
    global _loaded, _joint_frame, _segment_pair, _frames, _placed, _point_row, _pair_row
    global constraint_rows, excess_over, collision_check, _solve, _combine, _smallest
    global active_set_step, _path, slide, first_look, _reaching, _room, _depths, _sampled
    global guard_samples
    if not _loaded:
        _loaded = True
        compiled = compiler()
        if compiled is not None:
            # the compiled functions call each other by these names (resolved at first call)
            excess_over = compiled(_excess)
            _point_row = compiled(_add_point_row)
            _pair_row = compiled(_add_pair_row)
            constraint_rows = compiled(_constraint_rows)
            _joint_frame = compiled(joint_frame)
            _segment_pair = compiled(segment_pair)
            _frames = compiled(_frames_of)
            _placed = compiled(_placed_point)
            collision_check = compiled(_check_pairs)
            _solve = compiled(_solve_small)
            _combine = compiled(_multipliers)
            _smallest = compiled(_smallest_step_loops)
            active_set_step = compiled(_bounded_step_loops)
            _path = compiled(_path_is_clear)
            first_look = compiled(_first_look_at)
            slide = compiled(_slide_loops)
            _reaching = compiled(_first_reaching)
            _room = compiled(_group_room)
            _depths = compiled(_landmark_depths)
            _sampled = compiled(_sampled_paths)
            guard_samples = compiled(_guard_samples_loops)
    return collision_check is not None


_loaded = False
_joint_frame: Any = None
_point_row: Any = None
_pair_row: Any = None
_segment_pair: Any = None
_frames: Any = None
_placed: Any = None

excess_over: Any = None
"""The compiled :func:`_excess` -- ``(distances, target, required, origins, landmark_joints,
normals, offsets, bound_floor, margin) -> (pairs, bounds, lowest, slack)`` -- or None (numba
missing, or before :func:`load`)."""

constraint_rows: Any = None
"""The compiled :func:`_constraint_rows` -- the self-collision avoidance's linearization, pairs
and workspace bounds -- or None (numba missing, or before :func:`load`)."""

_solve: Any = None
_combine: Any = None
_smallest: Any = None
_path: Any = None
_reaching: Any = None
_room: Any = None
_depths: Any = None
_sampled: Any = None

active_set_step: Any = None
"""The compiled :func:`_bounded_step_loops` -- ``(rows, needed, x, free, lower, upper,
damping, limit_rounds, at_limit) -> step`` -- or None (numba missing, or before :func:`load`)."""

first_look: Any = None
"""The compiled :func:`_first_look_at` -- the avoidance's check of the solvers' answer and of
the way to it -- or None (numba missing, or before :func:`load`)."""

slide: Any = None
"""The compiled :func:`_slide_loops` -- the avoidance's slide along the constraints, whole --
or None (numba missing, or before :func:`load`)."""

guard_samples: Any = None
"""The compiled :func:`_guard_samples_loops` -- the collision guard's samples of one step,
measured -- or None (numba missing, or before :func:`load`)."""

collision_check: Any = None
"""The compiled :func:`_check_pairs` -- ``(x, *arrays, exact_within) -> (distances, points,
rotations, positions, axes, origins, ends)`` -- or None (numba missing, or before :func:`load`:
the numpy path runs)."""
