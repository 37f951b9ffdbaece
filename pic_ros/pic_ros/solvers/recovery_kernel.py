"""
The joint recovery's whole solve in one compiled call (numba), when numba is installed.

:class:`~pic_ros.solvers.recovery.JointRecovery` is written in plain Python floats; a solve
there is some fifteen Python calls per iteration, which costs more than its arithmetic. With
numba (:func:`load`, :func:`~pic_ros.robot.kinematics.compiled.compiler`) the recovery hands
each solve to :data:`recover` instead: the same steps in loops over arrays -- the chain's
forward kinematics, the residual and its Jacobian, the damped normal equations, the bounded
solve on an active set, the Levenberg-Marquardt retries -- in the same order and the same
arithmetic, so both give the same joint angles to rounding (tested against the numpy
reference of ``test/test_recovery_reference.py``). Without numba the Python path runs.

Every function the compiled ones call is in this file (numba's cache watches only the file of
the function it compiled).

Units: metres and radians (metres for a prismatic joint); positions in the chain's base frame.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.robot.kinematics.compiled import compiler

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

CONVERGED: Final = 0
"""Termination code: the residual is within the tolerance."""

STALLED: Final = 1
"""Termination code: a step gained too little (a limit or the step bound binds)."""

MAX_ITERATIONS: Final = 2
"""Termination code: the iteration cap was reached."""

GOAL_SIZE: Final = 13
"""Floats of a packed goal: upper direction (3), forearm direction (3), elbow angle, wrist
point (3), elbow point (3)."""

SETTINGS_SIZE: Final = 13
"""Floats of the packed settings, in this order: lambda^2 (damping squared), roll damping
squared, comfort pull (``comfort`` lambda^2), tolerance [m], max step [rad], the minimum gain
share, angle weight, wrist weight, the upper-arm and forearm landmark lengths at the neutral pose
[m], the sine floor of the angle row, the sine below which the roll is damped, the accepted share
of the predicted gain (as :class:`~pic_ros.solvers.recovery.JointRecovery` packs them)."""


def _chain_kinematics(
    full: FloatArray, pre_z: FloatArray, post_z: FloatArray, prismatic: BoolArray
) -> tuple[FloatArray, FloatArray]:
    """
    Return the joint origins (then the tip) and the joint axes of a chain, base frame.

    The arithmetic of :meth:`~pic_ros.robot.kinematics.chain.KinematicChain.
    prefix_positions_and_axes` in the same order, over the whole chain.

    :param full: Chain coordinates, shape (n,) [rad] or [m].
    :param pre_z: Per joint, the constant transform before it turned so its axis is z, as the
        12 numbers of its top 3 x 4 block row-major, shape (n, 12).
    :param post_z: The last joint's frame to the tip link, the same 12 numbers.
    :param prismatic: Per joint, whether it slides, shape (n,).
    :return: ``(positions, axes)``, shapes (n + 1, 3) and (n, 3) [m].
    """
    count = full.shape[0]
    positions = np.empty((count + 1, 3))
    axes = np.empty((count, 3))
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    px, py, pz = 0.0, 0.0, 0.0
    for index in range(count):
        a = pre_z[index]
        a00, a01, a02, ax, a10, a11, a12, ay = a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]
        a20, a21, a22, az = a[8], a[9], a[10], a[11]
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
        positions[index, 0], positions[index, 1], positions[index, 2] = ox, oy, oz
        axes[index, 0], axes[index, 1], axes[index, 2] = n02, n12, n22
        value = full[index]
        r02, r12, r22 = n02, n12, n22
        if prismatic[index]:
            r00, r01, r10, r11, r20, r21 = n00, n01, n10, n11, n20, n21
            px, py, pz = ox + n02 * value, oy + n12 * value, oz + n22 * value
        else:
            cosine, sine = math.cos(value), math.sin(value)
            r00, r01 = n00 * cosine + n01 * sine, n01 * cosine - n00 * sine
            r10, r11 = n10 * cosine + n11 * sine, n11 * cosine - n10 * sine
            r20, r21 = n20 * cosine + n21 * sine, n21 * cosine - n20 * sine
            px, py, pz = ox, oy, oz
    tx, ty, tz = post_z[3], post_z[7], post_z[11]
    positions[count, 0] = r00 * tx + r01 * ty + r02 * tz + px
    positions[count, 1] = r10 * tx + r11 * ty + r12 * tz + py
    positions[count, 2] = r20 * tx + r21 * ty + r22 * tz + pz
    return positions, axes


def _residual_at(
    positions: FloatArray,
    landmarks: IntArray,
    goal: FloatArray,
    shape: bool,
    settings: FloatArray,
    residual: FloatArray,
    geometry: FloatArray,
) -> float:
    """
    Fill the task residual and the geometry its Jacobian needs; return the residual norm.

    As :meth:`~pic_ros.solvers.recovery.JointRecovery._evaluate`.

    :param positions: Joint origins, from :func:`_chain_kinematics`.
    :param landmarks: Chain indices of the shoulder, elbow and wrist landmarks.
    :param goal: The packed goal (:data:`GOAL_SIZE`).
    :param shape: Directions and elbow angle (else elbow and wrist points).
    :param settings: The packed settings.
    :param residual: Filled: the residual, shape (7,) (6 used for points).
    :param geometry: Filled: upper unit (3), forearm unit (3), their lengths, the capped sine.
    :return: The residual norm [m].
    """
    shoulder, elbow, wrist = landmarks[0], landmarks[1], landmarks[2]
    sx, sy, sz = positions[shoulder, 0], positions[shoulder, 1], positions[shoulder, 2]
    ex, ey, ez = positions[elbow, 0], positions[elbow, 1], positions[elbow, 2]
    wx, wy, wz = positions[wrist, 0], positions[wrist, 1], positions[wrist, 2]
    ux, uy, uz = ex - sx, ey - sy, ez - sz
    fx, fy, fz = wx - ex, wy - ey, wz - ez
    upper_len = math.sqrt(ux * ux + uy * uy + uz * uz)
    if upper_len == 0.0:
        upper_len = 1e-12
    fore_len = math.sqrt(fx * fx + fy * fy + fz * fz)
    if fore_len == 0.0:
        fore_len = 1e-12
    ux, uy, uz = ux / upper_len, uy / upper_len, uz / upper_len
    fx, fy, fz = fx / fore_len, fy / fore_len, fz / fore_len
    lu, lf = settings[8], settings[9]
    cosine = -(ux * fx + uy * fy + uz * fz)
    if shape:
        residual[0] = lu * (ux - goal[0])
        residual[1] = lu * (uy - goal[1])
        residual[2] = lu * (uz - goal[2])
        residual[3] = lf * (fx - goal[3])
        residual[4] = lf * (fy - goal[4])
        residual[5] = lf * (fz - goal[5])
        angle = math.acos(max(-1.0, min(1.0, cosine)))
        residual[6] = settings[6] * 0.5 * (lu + lf) * (angle - goal[6])
        rows = 7
    else:
        weight = settings[7]
        residual[0] = ex - goal[10]
        residual[1] = ey - goal[11]
        residual[2] = ez - goal[12]
        residual[3] = weight * (wx - goal[7])
        residual[4] = weight * (wy - goal[8])
        residual[5] = weight * (wz - goal[9])
        rows = 6
    total = 0.0
    for row in range(rows):
        total += residual[row] * residual[row]
    geometry[0], geometry[1], geometry[2] = ux, uy, uz
    geometry[3], geometry[4], geometry[5] = fx, fy, fz
    geometry[6], geometry[7] = upper_len, fore_len
    geometry[8] = max(math.sqrt(max(0.0, 1.0 - cosine * cosine)), settings[10])
    return math.sqrt(total)


def _jacobian_at(
    positions: FloatArray,
    axes: FloatArray,
    moving: IntArray,
    prismatic: BoolArray,
    landmarks: IntArray,
    shape: bool,
    settings: FloatArray,
    geometry: FloatArray,
    rows: FloatArray,
    extra: FloatArray,
) -> None:
    """
    Fill the Jacobian's columns (as rows) and each joint's extra damping.

    As :meth:`~pic_ros.solvers.recovery.JointRecovery._columns`.

    :param rows: Filled: row ``j`` is the residual's derivative by moving joint ``j``.
    :param extra: Filled: extra damping per moving joint.
    """
    shoulder, elbow, wrist = landmarks[0], landmarks[1], landmarks[2]
    sx, sy, sz = positions[shoulder, 0], positions[shoulder, 1], positions[shoulder, 2]
    ex, ey, ez = positions[elbow, 0], positions[elbow, 1], positions[elbow, 2]
    wx, wy, wz = positions[wrist, 0], positions[wrist, 1], positions[wrist, 2]
    ux, uy, uz, fx, fy, fz = (
        geometry[0], geometry[1], geometry[2], geometry[3], geometry[4], geometry[5]
    )
    upper_len, fore_len, sine = geometry[6], geometry[7], geometry[8]
    lu, lf = settings[8], settings[9]
    angle_scale = settings[6] * 0.5 * (lu + lf) / sine
    weight = settings[7]
    straight = max(0.0, 1.0 - (sine / settings[11]) ** 2)
    roll_damping = settings[1]
    for column in range(moving.shape[0]):
        index = moving[column]
        ax, ay, az = axes[index, 0], axes[index, 1], axes[index, 2]
        roll = max((ax * ux + ay * uy + az * uz) ** 2, (ax * fx + ay * fy + az * fz) ** 2)
        extra[column] = roll_damping * roll * straight
        if prismatic[index]:
            dsx, dsy, dsz = (ax, ay, az) if index < shoulder else (0.0, 0.0, 0.0)
            dex, dey, dez = (ax, ay, az) if index < elbow else (0.0, 0.0, 0.0)
            dwx, dwy, dwz = ax, ay, az
        else:
            ox, oy, oz = positions[index, 0], positions[index, 1], positions[index, 2]
            dwx = ay * (wz - oz) - az * (wy - oy)
            dwy = az * (wx - ox) - ax * (wz - oz)
            dwz = ax * (wy - oy) - ay * (wx - ox)
            dex, dey, dez = 0.0, 0.0, 0.0
            if index < elbow:
                dex = ay * (ez - oz) - az * (ey - oy)
                dey = az * (ex - ox) - ax * (ez - oz)
                dez = ax * (ey - oy) - ay * (ex - ox)
            dsx, dsy, dsz = 0.0, 0.0, 0.0
            if index < shoulder:
                dsx = ay * (sz - oz) - az * (sy - oy)
                dsy = az * (sx - ox) - ax * (sz - oz)
                dsz = ax * (sy - oy) - ay * (sx - ox)
        vx, vy, vz = dex - dsx, dey - dsy, dez - dsz
        along = ux * vx + uy * vy + uz * vz
        dux = (vx - along * ux) / upper_len
        duy = (vy - along * uy) / upper_len
        duz = (vz - along * uz) / upper_len
        vx, vy, vz = dwx - dex, dwy - dey, dwz - dez
        along = fx * vx + fy * vy + fz * vz
        dfx = (vx - along * fx) / fore_len
        dfy = (vy - along * fy) / fore_len
        dfz = (vz - along * fz) / fore_len
        if shape:
            d_angle = dux * fx + duy * fy + duz * fz + ux * dfx + uy * dfy + uz * dfz
            rows[column, 0], rows[column, 1], rows[column, 2] = lu * dux, lu * duy, lu * duz
            rows[column, 3], rows[column, 4], rows[column, 5] = lf * dfx, lf * dfy, lf * dfz
            rows[column, 6] = angle_scale * d_angle
        else:
            rows[column, 0], rows[column, 1], rows[column, 2] = dex, dey, dez
            rows[column, 3] = weight * dwx
            rows[column, 4] = weight * dwy
            rows[column, 5] = weight * dwz


def _solve_symmetric(matrix: FloatArray, rhs: FloatArray) -> FloatArray:
    """Solve ``A x = b`` as :func:`~pic_ros.solvers.recovery.solve_symmetric` (a copy)."""
    count = rhs.shape[0]
    rows = np.empty((count, count + 1))
    for i in range(count):
        for j in range(count):
            rows[i, j] = matrix[i, j]
        rows[i, count] = rhs[i]
    for k in range(count):
        pivot = rows[k, k]
        if not pivot > 0.0:
            raise ValueError('the matrix is not positive definite')
        for i in range(k + 1, count):
            factor = rows[i, k] / pivot
            if factor != 0.0:
                for column in range(k + 1, count + 1):
                    rows[i, column] -= factor * rows[k, column]
    solution = np.zeros(count)
    for i in range(count - 1, -1, -1):
        total = rows[i, count]
        for column in range(i + 1, count):
            total -= rows[i, column] * solution[column]
        solution[i] = total / rows[i, i]
    return solution


def _held_on_bounds(
    gradient: FloatArray, low: FloatArray, high: FloatArray, held: BoolArray
) -> bool:
    """Mark the joints on a bound pushed further out; return whether there is one."""
    any_held = False
    for i in range(low.shape[0]):
        held[i] = (low[i] >= 0.0 and gradient[i] > 0.0) or (high[i] <= 0.0 and gradient[i] < 0.0)
        any_held = any_held or held[i]
    return any_held


def _inside(step: FloatArray, low: FloatArray, high: FloatArray) -> bool:
    """Return whether every joint's step is within its bounds."""
    for i in range(step.shape[0]):
        if not low[i] <= step[i] <= high[i]:
            return False
    return True


def _bounded(
    hessian: FloatArray, gradient: FloatArray, low: FloatArray, high: FloatArray
) -> FloatArray:
    """Return the step with ``low <= step <= high``, as ``recovery._bounded_solution``."""
    held = np.zeros(low.shape[0], dtype=np.bool_)
    if not _held_on(gradient, low, high, held):
        step: FloatArray = _solve(hessian, -gradient)
        if _within(step, low, high):
            return step
    step = _active(hessian, gradient, low, high, held)
    for i in range(step.shape[0]):
        step[i] = min(max(step[i], low[i]), high[i])
    return step


def _free_system(
    hessian: FloatArray, gradient: FloatArray, held: BoolArray, step: FloatArray
) -> tuple[IntArray, FloatArray, FloatArray]:
    """
    Return the free joints and their equations, the held ones at their ``step``.

    As ``recovery._free_solution``: ``H step = -gradient`` restricted to the free joints.
    """
    count = held.shape[0]
    free = 0
    for i in range(count):
        if not held[i]:
            free += 1
    indices = np.empty(free, dtype=np.int64)
    position = 0
    for i in range(count):
        if not held[i]:
            indices[position] = i
            position += 1
    matrix = np.empty((free, free))
    rhs = np.empty(free)
    for a in range(free):
        i = indices[a]
        for b in range(free):
            matrix[a, b] = hessian[i, indices[b]]
        total = 0.0
        for j in range(count):
            if held[j]:
                total += hessian[i, j] * step[j]
        rhs[a] = -gradient[i] - total  # total is 0.0 without held joints: -gradient exactly
    return indices, matrix, rhs


def _active_set(
    hessian: FloatArray, gradient: FloatArray, low: FloatArray, high: FloatArray, held: BoolArray
) -> FloatArray:
    """Hold joints on their bounds until the others' solution is inside theirs (unclamped)."""
    count = low.shape[0]
    step = np.zeros(count)
    for _ in range(count):
        for i in range(count):
            if held[i]:
                step[i] = low[i] if gradient[i] > 0.0 else high[i]
        indices, matrix, rhs = _free(hessian, gradient, held, step)
        if indices.shape[0] == 0:
            break
        solved = _solve(matrix, rhs)
        outside = False
        for a in range(indices.shape[0]):
            i = indices[a]
            step[i] = solved[a]
            if not low[i] <= solved[a] <= high[i]:
                held[i] = True
                outside = True
        if not outside:
            break
    return step


def _damped_step(
    jacobian: FloatArray,
    extra: FloatArray,
    residual: FloatArray,
    box: tuple[FloatArray, FloatArray, FloatArray],
    comfort: FloatArray,
    settings: FloatArray,
    shape: bool,
    pull: bool,
    damping: float,
    step: FloatArray,
) -> float:
    """
    Fill the bounded damped Gauss-Newton step; return the linear model's residual after it.

    As :meth:`~pic_ros.solvers.recovery.JointRecovery._step`.

    :param box: The moving joints' values, lowest and highest steps.
    :param comfort: The comfortable pose, then each joint's weight, shape (2, k).
    """
    values, low, high = box
    rows = 7 if shape else 6
    count = low.shape[0]
    hessian = np.empty((count, count))
    gradient = np.empty(count)
    for i in range(count):
        for j in range(count):
            total = 0.0
            for row in range(rows):
                total += jacobian[i, row] * jacobian[j, row]
            hessian[i, j] = total
        total = 0.0
        for row in range(rows):
            total += jacobian[i, row] * residual[row]
        gradient[i] = total
        hessian[i, i] += (settings[0] + extra[i]) * damping
    if pull and settings[2] != 0.0:
        for i in range(count):
            gradient[i] += settings[2] * comfort[1, i] * (values[i] - comfort[0, i])
    solved = _bound(hessian, gradient, low, high)
    total = 0.0
    for row in range(rows):
        after = residual[row]
        for i in range(count):
            after += solved[i] * jacobian[i, row]
        total += after * after
    for i in range(count):
        step[i] = solved[i]
    return math.sqrt(total)


def _recover_loops(
    full: FloatArray,
    pre_z: FloatArray,
    post_z: FloatArray,
    prismatic: BoolArray,
    moving: IntArray,
    landmarks: IntArray,
    work: FloatArray,
    comfort: FloatArray,
    goal: FloatArray,
    shape: bool,
    settings: FloatArray,
    max_iterations: int,
) -> tuple[FloatArray, float, int, int, FloatArray, FloatArray]:
    """
    Do one whole :meth:`~pic_ros.solvers.recovery.JointRecovery.recover` (compiled: ``recover``).

    :param full: Chain coordinates of the warm start, inside the URDF limits; not changed.
    :param pre_z: The chain's constant transforms (:func:`_chain_kinematics`).
    :param post_z: The chain's last transform to its tip.
    :param prismatic: Per chain joint, whether it slides.
    :param moving: Chain indices of the joints the recovery moves, shape (k,).
    :param landmarks: Chain indices of the shoulder, elbow and wrist landmarks.
    :param work: The moving joints' working range, lower then upper, shape (2, k).
    :param comfort: The comfortable pose, then each joint's weight, shape (2, k).
    :param goal: The packed goal (:data:`GOAL_SIZE`).
    :param shape: ``SHAPE`` goal (else ``POSITION``).
    :param settings: The packed settings (:data:`SETTINGS_SIZE` says which).
    :param max_iterations: Cap on steps.
    :return: ``(full, norm, iterations, termination, positions, axes)``: the answer's chain
        coordinates, its residual norm [m], the steps taken, a termination code, and the
        chain's joint origins (then the tip) and axes at the answer.
    """
    chain = (pre_z, post_z, prismatic, moving, landmarks)
    tolerance = settings[3]
    full = full.copy()
    start, low, high, offset = _box(full, moving, work, settings[4])
    positions, axes = _kinematics(full, pre_z, post_z, prismatic)
    residual = np.zeros(7)
    geometry = np.empty(9)
    norm = _residual(positions, landmarks, goal, shape, settings, residual, geometry)
    jacobian = np.zeros((moving.shape[0], 7))
    extra = np.empty(moving.shape[0])
    termination, iterations = -1, max_iterations
    for iteration in range(1, max_iterations + 1):
        converged = norm <= tolerance
        if converged and (iteration > 1 or settings[2] == 0.0):
            termination, iterations = CONVERGED, iteration - 1
            break
        _jacobian(
            positions, axes, moving, prismatic, landmarks, shape, settings, geometry, jacobian,
            extra,
        )
        box = (start + offset, low - offset, high - offset)
        step = np.empty(moving.shape[0])
        predicted = _damped(
            jacobian, extra, residual, box, comfort, settings, shape, True, 1.0, step
        )
        if not converged and iteration > 1 and norm - predicted < settings[5] * norm:
            termination, iterations = STALLED, iteration
            break
        trial, trial_norm, trial_positions, trial_axes, trial_residual, trial_geometry = _attempts(
            full, start, offset, step, predicted, norm, jacobian, extra, residual, box, comfort,
            chain, goal, shape, settings,
        )
        if trial_norm < 0.0:  # no step taken
            termination, iterations = (CONVERGED if converged else STALLED), iteration
            break
        improvement = norm - trial_norm
        offset, residual, geometry = trial, trial_residual, trial_geometry
        norm, positions, axes = trial_norm, trial_positions, trial_axes
        termination = _stop(converged, norm, improvement, settings)
        if termination >= 0:
            iterations = iteration
            break
    if termination < 0:
        termination = CONVERGED if norm <= tolerance else MAX_ITERATIONS
    for j in range(moving.shape[0]):
        full[moving[j]] = start[j] + offset[j]
    return full, norm, iterations, termination, positions, axes


def _start_box(
    full: FloatArray, moving: IntArray, work: FloatArray, bound: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """
    Return the moving joints' start, step bounds and first offset; place that offset in ``full``.

    As :meth:`~pic_ros.solvers.recovery.JointRecovery._start`.
    """
    count = moving.shape[0]
    start = np.empty(count)
    low = np.empty(count)
    high = np.empty(count)
    offset = np.empty(count)
    moved = False
    for j in range(count):
        x = full[moving[j]]
        start[j] = x
        low[j] = min(max(work[0, j], x - bound), x + bound) - x
        high[j] = max(min(work[1, j], x + bound), x - bound) - x
        offset[j] = min(max(0.0, low[j]), high[j])
        moved = moved or offset[j] != 0.0
    if moved:
        for j in range(count):
            full[moving[j]] = start[j] + offset[j]
    return start, low, high, offset


def _tried(
    full: FloatArray,
    start: FloatArray,
    offset: FloatArray,
    step: FloatArray,
    predicted: float,
    norm: float,
    jacobian: FloatArray,
    extra: FloatArray,
    residual: FloatArray,
    box: tuple[FloatArray, FloatArray, FloatArray],
    comfort: FloatArray,
    chain: tuple[FloatArray, FloatArray, BoolArray, IntArray, IntArray],
    goal: FloatArray,
    shape: bool,
    settings: FloatArray,
) -> tuple[FloatArray, float, FloatArray, FloatArray, FloatArray, FloatArray]:
    """
    Return the first step the residual accepts, with its state (a norm of -1: none).

    As :meth:`~pic_ros.solvers.recovery.JointRecovery._taken_step`: the step, then the tasks'
    step alone with the damping raised tenfold each time, four tries in all.

    :return: ``(offset, norm, positions, axes, residual, geometry)`` after the step.
    """
    pre_z, post_z, prismatic, moving, landmarks = chain
    trial = np.empty(moving.shape[0])
    trial_residual = np.zeros(7)
    trial_geometry = np.empty(9)
    for attempt in range(4):
        if attempt:
            predicted = _damped(
                jacobian, extra, residual, box, comfort, settings, shape, False,
                10.0 ** attempt, step,
            )
        for j in range(moving.shape[0]):
            trial[j] = offset[j] + step[j]
            full[moving[j]] = start[j] + trial[j]
        positions, axes = _kinematics(full, pre_z, post_z, prismatic)
        trial_norm = _residual(
            positions, landmarks, goal, shape, settings, trial_residual, trial_geometry
        )
        gain = norm - trial_norm
        if trial_norm <= 0.5 * settings[3] or (
            gain >= 0.0 and gain >= settings[12] * (norm - predicted)
        ):
            return trial, trial_norm, positions, axes, trial_residual, trial_geometry
    return trial, -1.0, positions, axes, trial_residual, trial_geometry


def _stop_after(converged: bool, norm: float, improvement: float, settings: FloatArray) -> int:
    """Return why the iteration stops after a step taken, or -1 to go on."""
    if converged:  # the comfort step kept the residual within the tolerance
        return CONVERGED
    if norm > settings[3] and improvement < settings[5] * (norm + improvement):
        return STALLED
    return -1


def load() -> bool:
    """
    Compile the solve, or load it from numba's cache, on the first call.

    :return: Whether the compiled solve is there (False: numba missing or turned off).
    """
    global _loaded, _kinematics, _residual, _jacobian, _solve, _held_on, _within, _free
    global _active, _bound, _damped, _box, _attempts, _stop, recover, chain_kinematics
    if not _loaded:
        _loaded = True
        compiled = compiler()
        if compiled is not None:
            # the compiled functions call each other by these names (resolved at first call)
            _kinematics = compiled(_chain_kinematics)
            _residual = compiled(_residual_at)
            _jacobian = compiled(_jacobian_at)
            _solve = compiled(_solve_symmetric)
            _held_on = compiled(_held_on_bounds)
            _within = compiled(_inside)
            _free = compiled(_free_system)
            _active = compiled(_active_set)
            _bound = compiled(_bounded)
            _damped = compiled(_damped_step)
            _box = compiled(_start_box)
            _attempts = compiled(_tried)
            _stop = compiled(_stop_after)
            recover = compiled(_recover_loops)
            chain_kinematics = _kinematics
            _warm_up()
    return recover is not None


def _warm_up() -> None:
    """
    Run the compiled solve and kinematics once, on a made-up chain with a solve's types.

    numba compiles (or loads from its cache) on the first call: here, where the solvers are
    built, rather than in the first frame a node solves (milliseconds from the cache, seconds
    the first time after an install).
    """
    pre_z = np.zeros((3, 12))
    pre_z[:, 0] = pre_z[:, 5] = pre_z[:, 10] = 1.0
    pre_z[1:, 11] = -0.3
    post_z = pre_z[2].copy()
    recover(
        np.zeros(3), pre_z, post_z, np.zeros(3, dtype=np.bool_), np.arange(2, dtype=np.int64),
        np.arange(3, dtype=np.int64), np.array([[-1.0, -1.0], [1.0, 1.0]]),
        np.array([[0.0, 0.0], [1.0, 1.0]]), np.zeros(GOAL_SIZE), True,
        np.full(SETTINGS_SIZE, 0.1), 5,
    )
    chain_kinematics(np.zeros(3), pre_z, post_z, np.zeros(3, dtype=np.bool_))


_loaded = False
_kinematics: Any = None
_residual: Any = None
_jacobian: Any = None
_solve: Any = None
_held_on: Any = None
_within: Any = None
_free: Any = None
_active: Any = None
_bound: Any = None
_damped: Any = None
_box: Any = None
_attempts: Any = None
_stop: Any = None

recover: Any = None
"""The compiled :func:`_recover_loops`, or None (numba missing, or before :func:`load`)."""

chain_kinematics: Any = None
"""The compiled :func:`_chain_kinematics` -- ``(full, pre_z, post_z, prismatic) -> (positions,
axes)`` -- or None (numba missing, or before :func:`load`)."""
