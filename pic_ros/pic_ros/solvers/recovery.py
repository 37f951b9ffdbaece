"""
Joint-angle recovery: the arm's real joint angles that reproduce a point-chain solution.

The point solvers (FABRIK, PIC, PICs) give the elbow and wrist landmark points the arm should
take; this module finds joint angles that put the real URDF chain's landmarks there, or as close
as the joint limits allow. It is a small weighted least-squares problem over the arm joints that
move the landmarks (those before the wrist landmark), solved by damped Gauss-Newton
(Levenberg-Marquardt) steps from the previous solution.

**Tasks** (rows of the residual, all in metres):

- ``SHAPE`` goals (the ``direction`` correspondence): the shoulder -> elbow and elbow -> wrist
  landmark *directions* equal the goal directions (each unit-vector difference times the bone's
  length), measured from where the landmarks are now -- the joint before the shoulder landmark
  swings the shoulder, and the goal shape goes with it -- and the interior elbow angle equals
  the goal's, weighted by :attr:`RecoveryConfig.angle_weight`: when a limit makes the directions
  unreachable, the elbow angle (what Pose Accuracy measures) is kept first;
- ``POSITION`` goals (the ``position`` correspondence): the elbow and wrist landmarks are at the
  goal points in the base frame, the wrist weighted by :attr:`RecoveryConfig.wrist_weight`.

**Redundancy and continuity.** The arms have one more joint than the four direction constraints
need (an upper-arm or forearm roll); a step is the smallest change that reduces the residual
(damping ``lambda``), plus a pull of the joints towards the middle of their ranges *in the null
space of the tasks* (``comfort``; each joint weighted by ``(pi / range)^2``): it moves the
redundant roll without changing the shape, and keeps it -- and the joint before the shoulder --
away from its limits, so that a roll does not run into a limit and then have to swing the other
way round. Every solve takes at least this one step.
Each solve starts at the previous solution and no joint moves by more than
:attr:`RecoveryConfig.max_step` per solve, so consecutive solutions stay on the same branch and
never jump. Position limits and the step bound are handled as bounds on the step (an active set):
a joint that would cross one is held on it and the others are solved again. A step is only taken
if it does not increase the task residual (or keeps it within half the tolerance), so the
residual never grows across iterations beyond that.

Only the arm joints before the wrist landmark move the landmarks; the joints from the wrist on
keep their warm-start values. The moving joints stay inside the arm's working range (the URDF
limits, with the elbow stopped at its straight position: :attr:`~pic_ros.robot.arm.ArmModel.
work_lower`); a warm start outside it is brought back within the step bound. Every result is
inside the URDF position limits.

With numba installed, each solve runs as one compiled call of the same steps
(:mod:`pic_ros.solvers.recovery_kernel`); the plain-float Python steps below run without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math
from operator import mul
from typing import Any

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_integer, check_number
from pic_ros.correspondence.targets import TargetKind
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.kinematics.robot_model import JointType
from pic_ros.solvers import recovery_kernel
from pic_ros.solvers.result import RecoveryResult, Termination

FloatArray = npt.NDArray[np.float64]
Vector = tuple[float, float, float]

_MIN_SINE = 0.05
"""Below this sine of the elbow angle (arm nearly straight) the angle row's gradient is capped."""

_ROLL_DAMPING = 0.3
"""Extra damping [m/rad] of an upper-arm roll joint when the arm is straight."""

_STRAIGHT_SINE = math.sin(math.radians(45.0))
"""Below this sine of the elbow bend the upper-arm roll gets extra damping (in proportion)."""

_ATTEMPTS = 4
"""Tries per iteration before the iteration stops (stalled): the step, then more damped ones."""

_MIN_RATIO = 0.25
"""Share of the linear model's predicted gain a step must achieve to be taken."""

_MIN_GAIN = 0.1
"""A step that removes less than this share of the residual ends the iteration (stalled)."""

_TERMINATIONS = {
    recovery_kernel.CONVERGED: Termination.CONVERGED,
    recovery_kernel.STALLED: Termination.STALLED,
    recovery_kernel.MAX_ITERATIONS: Termination.MAX_ITERATIONS,
}
"""The compiled solve's termination codes."""


@dataclass(frozen=True)
class RecoveryConfig:
    """
    Settings of the joint recovery.

    :param damping: Levenberg-Marquardt damping lambda [m/rad]: larger gives smaller, safer steps
        near singular poses (a straight arm).
    :param comfort: Share of the way to the middle of their ranges that the joints move per
        iteration in the null space of the tasks; it resolves the redundant roll and keeps the
        joints away from their limits. 0 disables it.
    :param max_iterations: Cap on least-squares steps per solve.
    :param tolerance: Stop when the task residual norm is below this [m].
    :param max_step: Largest change of any joint in one solve [rad] (or [m] for a prismatic
        joint): consecutive solutions never differ by more.
    :param angle_weight: Weight of the elbow-angle task of ``SHAPE`` goals.
    :param wrist_weight: Weight of the wrist-position task against the elbow-position task of
        ``POSITION`` goals.
    """

    damping: float = 0.02
    comfort: float = 0.05
    max_iterations: int = 5
    tolerance: float = 1e-3
    max_step: float = 0.3
    angle_weight: float = 3.0
    wrist_weight: float = 1.0

    def __post_init__(self) -> None:
        check_number('recovery damping', self.damping, 1e-6, 1.0)
        check_number('recovery comfort', self.comfort, 0.0, 1.0)
        check_integer('recovery max_iterations', self.max_iterations, 1, 200)
        check_number('recovery tolerance', self.tolerance, 1e-9, 0.1)
        check_number('recovery max_step', self.max_step, 1e-3, 2.0 * math.pi)
        check_number('recovery angle_weight', self.angle_weight, 0.0, 100.0)
        check_number('recovery wrist_weight', self.wrist_weight, 0.0, 100.0)


@dataclass(frozen=True)
class RecoveryGoal:
    """
    What the landmarks should do, from a point-chain solution.

    :param kind: ``SHAPE``: directions and elbow angle; ``POSITION``: elbow and wrist points.
    :param upper: Goal shoulder -> elbow unit direction, base frame (``SHAPE``).
    :param fore: Goal elbow -> wrist unit direction, base frame (``SHAPE``).
    :param angle: Goal interior elbow angle [rad] (``SHAPE``).
    :param wrist: Goal wrist landmark position, base frame [m] (``POSITION``).
    :param elbow: Goal elbow landmark position, base frame [m] (``POSITION``).
    """

    kind: TargetKind
    upper: Vector
    fore: Vector
    angle: float
    wrist: Vector
    elbow: Vector

    @classmethod
    def from_points(
        cls, kind: TargetKind, shoulder: Vector, elbow: Vector, wrist: Vector
    ) -> RecoveryGoal:
        """
        Build a goal from solved shoulder, elbow and wrist points.

        :param kind: Goal kind.
        :param shoulder: Shoulder point, base frame [m].
        :param elbow: Elbow point, base frame [m].
        :param wrist: Wrist point, base frame [m].
        :return: The goal.
        """
        upper = _unit(_sub(elbow, shoulder))
        fore = _unit(_sub(wrist, elbow))
        cosine = -(upper[0] * fore[0] + upper[1] * fore[1] + upper[2] * fore[2])
        angle = math.acos(max(-1.0, min(1.0, cosine)))
        return cls(kind=kind, upper=upper, fore=fore, angle=angle, wrist=wrist, elbow=elbow)


def _sub(a: Sequence[float], b: Sequence[float]) -> Vector:
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _unit(a: Vector) -> Vector:
    length = math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])
    if length < 1e-12:
        return (0.0, 0.0, -1.0)
    return (a[0] / length, a[1] / length, a[2] / length)


class JointRecovery:
    """
    Recover arm joint angles from a landmark goal, for one arm.

    :param arm: The arm.
    :param config: Recovery settings.
    """

    def __init__(self, arm: ArmModel, config: RecoveryConfig) -> None:
        self.arm = arm
        self.config = config
        # The whole chain, tool included, although only the joints before the wrist landmark
        # move: the kinematics of the answer are then the next solve's landmarks as well.
        self._count = arm.chain.dof
        self._moving = tuple(
            (position, index)
            for position, index in enumerate(arm.active)
            if index < arm.wrist_index
        )
        self._limits = (arm.lower.tolist(), arm.upper.tolist())
        self._lower = [float(arm.work_lower[p]) for p, _ in self._moving]
        self._upper = [float(arm.work_upper[p]) for p, _ in self._moving]
        # The comfortable pose: the middle of each joint's working range, each joint weighted by
        # (pi / range)^2 so that a short-range joint is kept from its limits as much as a long one.
        middle, weight = [], []
        for lower, upper in zip(self._lower, self._upper):
            finite = math.isfinite(lower) and math.isfinite(upper) and upper > lower
            middle.append(0.5 * (lower + upper) if finite else 0.0)
            weight.append((math.pi / (upper - lower)) ** 2 if finite else 0.0)
        self._comfort = middle
        self._comfort_weight = weight
        self._prismatic = tuple(
            arm.chain.movable_joints[index].joint_type is JointType.PRISMATIC
            for _, index in self._moving
        )
        landmarks = arm.landmarks(arm.neutral)
        self._upper_length = float(np.linalg.norm(landmarks[2] - landmarks[1]))
        self._fore_length = float(np.linalg.norm(landmarks[3] - landmarks[2]))
        self._regular = config.damping**2
        self._roll = _ROLL_DAMPING**2
        self._pull = config.comfort * config.damping**2
        # the compiled solve (numba), given the same numbers packed in arrays
        self._compiled: Any = recovery_kernel.recover if recovery_kernel.load() else None
        self._kernel_arrays = (
            *arm.chain.affine_arrays(),
            np.array([index for _, index in self._moving], dtype=np.int64),
            np.array([arm.shoulder_index, arm.elbow_index, arm.wrist_index], dtype=np.int64),
            np.array([self._lower, self._upper]).reshape(2, -1),
            np.array([self._comfort, self._comfort_weight]).reshape(2, -1),
        )
        self._kernel_settings = np.array([
            self._regular, self._roll, self._pull, config.tolerance, config.max_step,
            _MIN_GAIN, config.angle_weight, config.wrist_weight, self._upper_length,
            self._fore_length, _MIN_SINE, _STRAIGHT_SINE, _MIN_RATIO,
        ])

    @property
    def moving_positions(self) -> tuple[int, ...]:
        """Return the positions (in the arm's joint order) of the joints the recovery moves."""
        return tuple(position for position, _ in self._moving)

    def _evaluate(
        self,
        full: Sequence[float],
        goal: RecoveryGoal,
        kinematics: tuple[Sequence[Vector], Sequence[Vector]] | None = None,
    ) -> _State:
        """Return the task residual at ``full``, with what its Jacobian needs."""
        arm = self.arm
        positions: Sequence[Vector]
        axes: Sequence[Vector]
        if kinematics is None:
            positions, axes = arm.chain.prefix_positions_and_axes(full, self._count)
        else:
            positions, axes = kinematics
        sx, sy, sz = positions[arm.shoulder_index]
        ex, ey, ez = positions[arm.elbow_index]
        wx, wy, wz = positions[arm.wrist_index]
        ux, uy, uz = ex - sx, ey - sy, ez - sz
        fx, fy, fz = wx - ex, wy - ey, wz - ez
        upper_len = math.sqrt(ux * ux + uy * uy + uz * uz) or 1e-12
        fore_len = math.sqrt(fx * fx + fy * fy + fz * fz) or 1e-12
        ux, uy, uz = ux / upper_len, uy / upper_len, uz / upper_len
        fx, fy, fz = fx / fore_len, fy / fore_len, fz / fore_len
        lu, lf = self._upper_length, self._fore_length
        gu, gf = goal.upper, goal.fore
        cosine = -(ux * fx + uy * fy + uz * fz)
        if goal.kind is TargetKind.SHAPE:
            residual = [
                lu * (ux - gu[0]), lu * (uy - gu[1]), lu * (uz - gu[2]),
                lf * (fx - gf[0]), lf * (fy - gf[1]), lf * (fz - gf[2]),
            ]
            angle = math.acos(max(-1.0, min(1.0, cosine)))
            residual.append(self.config.angle_weight * 0.5 * (lu + lf) * (angle - goal.angle))
        else:
            gw, ge, weight = goal.wrist, goal.elbow, self.config.wrist_weight
            residual = [ex - ge[0], ey - ge[1], ez - ge[2],
                        weight * (wx - gw[0]), weight * (wy - gw[1]), weight * (wz - gw[2])]
        norm = math.sqrt(sum(map(mul, residual, residual)))
        return _State(
            residual, norm, positions, axes, (ux, uy, uz), (fx, fy, fz), upper_len, fore_len,
            max(math.sqrt(max(0.0, 1.0 - cosine * cosine)), _MIN_SINE),
        )

    def _columns(self, state: _State, goal: RecoveryGoal) -> tuple[list[list[float]], list[float]]:
        """
        Return the Jacobian of the residual (one column per moving joint) and extra damping.

        A joint whose axis lies along the upper arm or the forearm rolls the elbow's plane. When
        the arm is nearly straight that plane is barely defined -- the forearm direction hardly
        depends on it -- and tracker noise would swing the roll round; such a joint gets up to
        ``_ROLL_DAMPING^2`` more damping, in proportion to how straight the arm is.
        """
        arm = self.arm
        shoulder_index, elbow_index = arm.shoulder_index, arm.elbow_index
        positions = state.positions
        sx, sy, sz = positions[shoulder_index]
        ex, ey, ez = positions[elbow_index]
        wx, wy, wz = positions[arm.wrist_index]
        ux, uy, uz = state.upper
        fx, fy, fz = state.fore
        upper_len, fore_len = state.upper_length, state.fore_length
        lu, lf = self._upper_length, self._fore_length
        shape = goal.kind is TargetKind.SHAPE
        angle_scale = self.config.angle_weight * 0.5 * (lu + lf) / state.sine
        weight = self.config.wrist_weight
        zero = (0.0, 0.0, 0.0)
        columns: list[list[float]] = []
        extra: list[float] = []
        straight = max(0.0, 1.0 - (state.sine / _STRAIGHT_SINE) ** 2)
        for (_, index), prismatic in zip(self._moving, self._prismatic):
            ax, ay, az = state.axes[index]
            roll = max((ax * ux + ay * uy + az * uz) ** 2, (ax * fx + ay * fy + az * fz) ** 2)
            extra.append(self._roll * roll * straight)
            if prismatic:
                d_s = (ax, ay, az) if index < shoulder_index else zero
                d_e = (ax, ay, az) if index < elbow_index else zero
                d_w = (ax, ay, az)
            else:
                ox, oy, oz = positions[index]
                d_w = (ay * (wz - oz) - az * (wy - oy), az * (wx - ox) - ax * (wz - oz),
                       ax * (wy - oy) - ay * (wx - ox))
                d_e = zero if index >= elbow_index else (
                    ay * (ez - oz) - az * (ey - oy), az * (ex - ox) - ax * (ez - oz),
                    ax * (ey - oy) - ay * (ex - ox))
                d_s = zero if index >= shoulder_index else (
                    ay * (sz - oz) - az * (sy - oy), az * (sx - ox) - ax * (sz - oz),
                    ax * (sy - oy) - ay * (sx - ox))
            # d(unit upper) = (I - u u^T)(dE - dS) / |E - S|, and the same for the forearm.
            vx, vy, vz = d_e[0] - d_s[0], d_e[1] - d_s[1], d_e[2] - d_s[2]
            along = ux * vx + uy * vy + uz * vz
            dux = (vx - along * ux) / upper_len
            duy = (vy - along * uy) / upper_len
            duz = (vz - along * uz) / upper_len
            vx, vy, vz = d_w[0] - d_e[0], d_w[1] - d_e[1], d_w[2] - d_e[2]
            along = fx * vx + fy * vy + fz * vz
            dfx = (vx - along * fx) / fore_len
            dfy = (vy - along * fy) / fore_len
            dfz = (vz - along * fz) / fore_len
            if shape:
                # cos(theta) = -u.f, so d theta = (du.f + u.df) / sin(theta).
                d_angle = dux * fx + duy * fy + duz * fz + ux * dfx + uy * dfy + uz * dfz
                column = [lu * dux, lu * duy, lu * duz, lf * dfx, lf * dfy, lf * dfz,
                          angle_scale * d_angle]
            else:
                column = [d_e[0], d_e[1], d_e[2],
                          weight * d_w[0], weight * d_w[1], weight * d_w[2]]
            columns.append(column)
        return columns, extra

    def residual(self, q: Sequence[float], goal: RecoveryGoal) -> float:
        """
        Return the task residual norm of arm joint values (what :meth:`recover` minimises).

        :param q: Arm joint values, arm order, [rad] or [m].
        :param goal: The goal.
        :return: Residual norm [m].
        """
        return self._evaluate(self.arm.full_q(q), goal).norm

    def _step(
        self,
        columns: tuple[list[list[float]], list[float]],
        residual: list[float],
        values: list[float],
        low: list[float],
        high: list[float],
        comfort: bool = True,
        damping: float = 1.0,
    ) -> tuple[list[float], float]:
        """
        Return the damped Gauss-Newton step with bounds ``low <= step <= high``.

        With ``H = J^T J + lambda^2 I`` the step is ``-H^-1 (J^T r + c lambda^2 (x - x_c))``: the
        damped least-squares step of the tasks plus ``c (x_c - x)`` projected by the damped
        null-space projector ``I - H^-1 J^T J = lambda^2 H^-1`` -- the comfort pull moves the
        joints only where the tasks do not need them. A joint whose step would cross a bound (or
        that sits on one and is pushed further out) is held on the bound and the others are
        solved again (:func:`_bounded_solution`). ``damping`` multiplies lambda^2
        (Levenberg-Marquardt: a larger one gives a shorter step, closer to the gradient).

        :param columns: The Jacobian, one column per moving joint [m/rad] or [m/m], and each
            joint's extra damping (:meth:`_columns`).
        :param residual: The task residual [m].
        :param values: The moving joints' values now [rad] or [m].
        :param low: Lowest step of each moving joint (<= 0) [rad] or [m].
        :param high: Highest step of each moving joint (>= 0) [rad] or [m].
        :param comfort: Add the pull towards the comfortable pose.
        :param damping: Factor on lambda^2.
        :return: The step of each moving joint [rad] or [m], and the residual norm the linear
            model predicts after it [m].
        """
        jacobian, extra = columns
        # One product gives J J^T and J r: the residual is the last row beside the Jacobian's.
        rows = np.array(jacobian + [residual])
        products = (rows @ rows.T).tolist()
        hessian, gradient = self._normal_equations(
            products, extra, values if comfort else None, damping
        )
        step = _bounded_solution(hessian, gradient, low, high)
        after = np.array(step + [1.0]) @ rows  # r + J^T step
        predicted = math.sqrt(float(after @ after))
        return step, predicted

    def _normal_equations(
        self,
        products: list[list[float]],
        extra: list[float],
        values: list[float] | None,
        damping: float,
    ) -> tuple[list[list[float]], list[float]]:
        """
        Return the damped ``H = J^T J + lambda^2 I`` and the gradient ``J^T r`` (+ comfort).

        :param products: The Gram matrix of the Jacobian's columns with the residual after them:
            ``[[J^T J, J^T r], [r^T J, r^T r]]``, k + 1 rows of k + 1.
        :param extra: Extra damping per moving joint (added to lambda^2).
        :param values: The moving joints' values [rad] or [m] for the comfort pull, or None
            for none.
        :param damping: Factor on the damping.
        :return: ``H`` (k rows of k) and the gradient (k).
        """
        count = len(extra)
        hessian = []
        gradient = []
        regular = self._regular
        for i in range(count):
            line = products[i]
            gradient.append(line[count])
            del line[count]
            line[i] += (regular + extra[i]) * damping
            hessian.append(line)
        if values is not None and self._pull:
            pull = self._pull
            gradient = [
                g + pull * w * (x - c)
                for g, w, x, c in zip(gradient, self._comfort_weight, values, self._comfort)
            ]
        return hessian, gradient

    def recover(
        self,
        q_init: npt.ArrayLike,
        goal: RecoveryGoal,
        kinematics: tuple[Sequence[Vector], Sequence[Vector]] | None = None,
    ) -> RecoveryResult:
        """
        Move the arm's landmarks towards a goal, starting from the previous solution.

        :param q_init: Warm start (the previous solution), arm joint order, shape (dof,).
        :param goal: What the landmarks should do.
        :param kinematics: Joint origins and axes at ``q_init`` from
            :meth:`~pic_ros.robot.kinematics.chain.KinematicChain.prefix_positions_and_axes`
            (at least up to the wrist landmark), when the caller already has them and ``q_init``
            is inside the limits.
        :return: Joint angles inside the limits and within ``max_step`` of the (clamped) warm
            start, the remaining task residual and why the iteration stopped.
        """
        return self.recover_with_kinematics(q_init, goal, kinematics)[0]

    def kinematics(self, q: Sequence[float] | FloatArray) -> tuple[list[Vector], list[Vector]]:
        """
        Return the chain's joint origins (then the tip) and joint axes at some joint values.

        With numba, one compiled call (the kernel's own forward kinematics, the same arithmetic
        as :meth:`~pic_ros.robot.kinematics.chain.KinematicChain.prefix_positions_and_axes`).

        :param q: Arm joint values, arm order, shape (dof,) [rad] or [m].
        :return: ``(positions, axes)`` as that method gives them for the whole chain, base
            frame [m].
        """
        chain = self.arm.chain
        full = self.arm.full_q(q)
        if self._compiled is not None:
            positions, axes = recovery_kernel.chain_kinematics(
                np.array(full), *self._kernel_arrays[:3]
            )
            return positions.tolist(), axes.tolist()
        return chain.prefix_positions_and_axes(full, chain.dof)

    def recover_with_kinematics(
        self,
        q_init: npt.ArrayLike,
        goal: RecoveryGoal,
        kinematics: tuple[Sequence[Vector], Sequence[Vector]] | None = None,
    ) -> tuple[RecoveryResult, tuple[Sequence[Vector], Sequence[Vector]]]:
        """
        Do :meth:`recover`, and return the chain's joint origins and axes at its answer too.

        :param q_init: Warm start, as for :meth:`recover`.
        :param goal: What the landmarks should do.
        :param kinematics: Joint origins and axes at ``q_init``, as for :meth:`recover`.
        :return: The result of :meth:`recover`, and the joint origins and axes at its joint
            angles in the form of
            :meth:`~pic_ros.robot.kinematics.chain.KinematicChain.prefix_positions_and_axes`
            (the whole chain, tool included, unless ``kinematics`` was given shorter).
        """
        values = [
            min(max(value, low), high)
            for value, low, high in zip(np.asarray(q_init, dtype=float).tolist(), *self._limits)
        ]
        if self._compiled is not None:
            return self._recover_compiled(values, goal)
        search = self._start(values, goal, kinematics)
        termination, iterations = self._iterate(search, goal)
        for (position, _), x, d in zip(self._moving, search.start, search.offset):
            values[position] = x + d
        state = search.state
        result = RecoveryResult(
            q=np.array(values), residual=state.norm, iterations=iterations,
            termination=termination,
        )
        return result, (state.positions, state.axes)

    def _recover_compiled(
        self, values: list[float], goal: RecoveryGoal
    ) -> tuple[RecoveryResult, tuple[Sequence[Vector], Sequence[Vector]]]:
        """
        Do :meth:`recover_with_kinematics` in one compiled call (the recovery kernel).

        The kernel computes the warm start's kinematics itself (a fraction of a microsecond).

        :param values: The warm start inside the URDF limits, arm joint order; changed in place
            to the answer.
        :param goal: What the landmarks should do.
        :return: As :meth:`recover_with_kinematics`.
        """
        packed = np.array(
            [*goal.upper, *goal.fore, goal.angle, *goal.wrist, *goal.elbow], dtype=float
        )
        full, norm, iterations, code, positions, axes = self._compiled(
            np.array(self.arm.full_q(values)), *self._kernel_arrays, packed,
            goal.kind is TargetKind.SHAPE, self._kernel_settings, self.config.max_iterations,
        )
        answer = full.tolist()
        for position, index in self._moving:
            values[position] = answer[index]
        result = RecoveryResult(
            q=np.array(values), residual=norm, iterations=iterations,
            termination=_TERMINATIONS[code],
        )
        return result, (positions.tolist(), axes.tolist())

    def _start(
        self,
        q: Sequence[float],
        goal: RecoveryGoal,
        kinematics: tuple[Sequence[Vector], Sequence[Vector]] | None,
    ) -> _Search:
        """
        Set up a solve: the step bounds around the warm start, and its residual.

        Each moving joint may move by at most ``max_step`` and stays in its working range. A
        start outside that range (a warm start set by hand) moves in first, within the step
        bound, whatever that does to the residual.

        :param q: The warm start inside the URDF limits, arm joint order [rad] or [m].
        :param goal: The goal.
        :param kinematics: Joint origins and axes at ``q`` (see :meth:`recover`), or None.
        :return: The search, at the start brought into the working range.
        """
        full = self.arm.full_q(q)
        start = [full[index] for _, index in self._moving]
        bound = self.config.max_step
        low = [min(max(lo, x - bound), x + bound) - x for lo, x in zip(self._lower, start)]
        high = [max(min(hi, x + bound), x - bound) - x for hi, x in zip(self._upper, start)]
        offset = [min(max(0.0, lo), hi) for lo, hi in zip(low, high)]
        search = _Search(full, start, low, high, offset)
        if any(offset):
            search.place(self._moving, offset)
            kinematics = None
        search.state = self._evaluate(full, goal, kinematics)
        return search

    def _iterate(self, search: _Search, goal: RecoveryGoal) -> tuple[Termination, int]:
        """
        Take Gauss-Newton steps until the residual converges, stalls, or the cap is reached.

        When the start already meets the tolerance, one step still moves the redundant joints
        towards the comfortable pose (the tasks' part of the step is tiny).

        :param search: The solve, moved on in place.
        :param goal: The goal.
        :return: Why the iteration stopped, and the steps taken.
        """
        config = self.config
        for iterations in range(1, config.max_iterations + 1):
            converged = search.state.norm <= config.tolerance
            if converged and (iterations > 1 or not self._pull):
                return Termination.CONVERGED, iterations - 1
            stop = self._iteration(search, goal, converged, iterations > 1)
            if stop is not None:
                return stop, iterations
        if search.state.norm <= config.tolerance:
            return Termination.CONVERGED, config.max_iterations
        return Termination.MAX_ITERATIONS, config.max_iterations

    def _iteration(
        self, search: _Search, goal: RecoveryGoal, converged: bool, later: bool
    ) -> Termination | None:
        """
        Take one step, or find that the iteration stops.

        :param search: The solve, moved on in place when a step is taken.
        :param goal: The goal.
        :param converged: Whether the residual is within the tolerance before the step (the
            comfort step, first iteration only).
        :param later: Whether this is not the first iteration.
        :return: Why the iteration stops, or None to go on.
        """
        state = search.state
        columns = self._columns(state, goal)
        values, lows, highs = search.box()
        step, predicted = self._step(columns, state.residual, values, lows, highs)
        if not converged and later and state.norm - predicted < _MIN_GAIN * state.norm:
            # Not even the linear model gains much more: a limit or the step bound binds.
            return Termination.STALLED
        taken = self._taken_step(search, goal, columns, step, predicted)
        if taken is None:
            return Termination.CONVERGED if converged else Termination.STALLED
        trial, candidate = taken
        improvement = state.norm - candidate.norm
        search.offset, search.state = trial, candidate
        if converged:  # The comfort step kept the residual within the tolerance.
            return Termination.CONVERGED
        if candidate.norm > self.config.tolerance and improvement < _MIN_GAIN * (
            candidate.norm + improvement
        ):
            # A limit or the step bound binds: the next frame goes on from here.
            return Termination.STALLED
        return None

    def _taken_step(
        self,
        search: _Search,
        goal: RecoveryGoal,
        columns: tuple[list[list[float]], list[float]],
        step: list[float],
        predicted: float,
    ) -> tuple[list[float], _State] | None:
        """
        Return the first step tried that the residual accepts, with its state, or None.

        If the step raises the residual: the tasks' step alone (the comfort pull can outweigh a
        small task gradient), with the damping raised tenfold each time (Levenberg-Marquardt:
        shorter steps, closer to the gradient's direction), up to ``_ATTEMPTS`` tries.

        :param search: The solve (its joints are set to each step tried).
        :param goal: The goal.
        :param columns: The Jacobian and extra damping at the current state.
        :param step: The first step to try [rad] or [m].
        :param predicted: Its residual norm by the linear model [m].
        :return: The new offset from the start and its state, or None.
        """
        state = search.state
        for attempt in range(_ATTEMPTS):
            if attempt:
                step, predicted = self._step(
                    columns, state.residual, *search.box(), comfort=False,
                    damping=10.0 ** attempt,
                )
            trial = [d + s for d, s in zip(search.offset, step)]
            search.place(self._moving, trial)
            candidate = self._evaluate(search.full, goal)
            if self._accepted(state.norm, candidate.norm, predicted):
                return trial, candidate
        return None

    def _accepted(self, before: float, after: float, predicted: float) -> bool:
        """
        Return whether a step is taken, from the residual norms [m].

        Taken if it stays within half the tolerance, or gains at least a share of what the linear
        model promised (a step that overshoots to the far side of the optimum gains nothing and
        would make the next frame swing back).

        :param before: Residual norm before the step [m].
        :param after: Residual norm after it [m].
        :param predicted: Residual norm after it by the linear model [m].
        :return: Whether the step is taken.
        """
        gain = before - after
        return after <= 0.5 * self.config.tolerance or (
            gain >= 0.0 and gain >= _MIN_RATIO * (before - predicted)
        )


def _bounded_solution(
    hessian: list[list[float]], gradient: list[float], low: list[float], high: list[float]
) -> list[float]:
    """
    Return the step solving ``H step = -gradient`` with ``low <= step <= high`` (an active set).

    A joint that sits on a bound and is pushed further out, or whose step would cross a bound,
    is held on that bound, and the others are solved again with it fixed.

    :param hessian: ``H`` (k rows of k), symmetric positive definite.
    :param gradient: The gradient (k).
    :param low: Lowest step per joint (<= 0).
    :param high: Highest step per joint (>= 0).
    :return: The step, clamped into the bounds.
    """
    held = [
        (lo >= 0.0 and g > 0.0) or (hi <= 0.0 and g < 0.0)
        for lo, hi, g in zip(low, high, gradient)
    ]
    if not any(held):  # the usual case: the unbounded step, if it is inside the bounds
        step = solve_symmetric(hessian, [-g for g in gradient])
        if all(lo <= d <= hi for d, lo, hi in zip(step, low, high)):
            return step
    step = _active_set_step(hessian, gradient, low, high, held)
    return [min(max(d, lo), hi) for d, lo, hi in zip(step, low, high)]


def _active_set_step(
    hessian: list[list[float]],
    gradient: list[float],
    low: list[float],
    high: list[float],
    held: list[bool],
) -> list[float]:
    """
    Hold joints on their bounds until the others' solution is inside theirs.

    :param hessian: ``H`` (k rows of k), symmetric positive definite.
    :param gradient: The gradient (k).
    :param low: Lowest step per joint (<= 0).
    :param high: Highest step per joint (>= 0).
    :param held: Per joint, whether it starts held on a bound; changed in place.
    :return: The step (the held joints on their bounds; not yet clamped).
    """
    count = len(low)
    step = [0.0] * count
    for _ in range(count):
        free = [i for i in range(count) if not held[i]]
        fixed = [i for i in range(count) if held[i]]
        for i in fixed:
            step[i] = low[i] if gradient[i] > 0.0 else high[i]
        if not free:
            break
        solved = _free_solution(hessian, gradient, free, fixed, step)
        outside = False
        for i, value in zip(free, solved):
            step[i] = value
            if not low[i] <= value <= high[i]:
                held[i] = True
                outside = True
        if not outside:
            break
    return step


def _free_solution(
    hessian: list[list[float]],
    gradient: list[float],
    free: list[int],
    fixed: list[int],
    step: list[float],
) -> list[float]:
    """
    Solve ``H step = -gradient`` for the free joints, the fixed ones held at their ``step``.

    :param hessian: ``H`` (k rows of k).
    :param gradient: The gradient (k).
    :param free: Indices of the joints solved for.
    :param fixed: Indices of the joints held.
    :param step: The step, of which the held joints' entries are used.
    :return: The free joints' steps, in the order of ``free``.
    """
    if not fixed:
        return solve_symmetric(hessian, [-g for g in gradient])
    matrix = [[hessian[i][j] for j in free] for i in free]
    rhs = [
        -gradient[i] - sum(hessian[i][j] * step[j] for j in fixed) for i in free
    ]
    return solve_symmetric(matrix, rhs)


def solve_symmetric(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """
    Solve ``A x = b`` for a small symmetric positive definite ``A`` (Gaussian elimination).

    For the handful of joints of an arm this is several times faster than ``numpy.linalg.solve``,
    whose cost at this size is its call overhead.

    :param matrix: ``A``, n rows of n, symmetric positive definite (no pivoting is needed).
    :param rhs: ``b``, n values.
    :return: ``x``, n values.
    :raises ValueError: If ``A`` is not positive definite.
    """
    count = len(rhs)
    rows = [row[:] + [value] for row, value in zip(matrix, rhs)]
    for k in range(count):
        pivot_row = rows[k]
        pivot = pivot_row[k]
        if not pivot > 0.0:
            raise ValueError('the matrix is not positive definite')
        for i in range(k + 1, count):
            row = rows[i]
            factor = row[k] / pivot
            if factor:
                for column in range(k + 1, count + 1):
                    row[column] -= factor * pivot_row[column]
    solution = [0.0] * count
    for i in range(count - 1, -1, -1):
        row = rows[i]
        total = row[count]
        for column in range(i + 1, count):
            total -= row[column] * solution[column]
        solution[i] = total / row[i]
    return solution


@dataclass
class _Search:
    """
    The progress of one solve of :meth:`JointRecovery.recover`.

    :param full: The chain's joint values, changed in place to each configuration tried.
    :param start: The moving joints' warm-start values [rad] or [m].
    :param low: Lowest offset of each moving joint from ``start`` [rad] or [m].
    :param high: Highest offset [rad] or [m].
    :param offset: The offset from ``start`` taken so far [rad] or [m].
    """

    full: list[float]
    start: list[float]
    low: list[float]
    high: list[float]
    offset: list[float]
    state: _State = field(init=False)

    def place(self, moving: Sequence[tuple[int, int]], offset: Sequence[float]) -> None:
        """Set the moving joints of :attr:`full` to ``start + offset``."""
        for (_, index), x, d in zip(moving, self.start, offset):
            self.full[index] = x + d

    def box(self) -> tuple[list[float], list[float], list[float]]:
        """Return the moving joints' values and their step bounds from the current offset."""
        offset = self.offset
        values = [x + d for x, d in zip(self.start, offset)]
        lows = [lo - d for lo, d in zip(self.low, offset)]
        highs = [hi - d for hi, d in zip(self.high, offset)]
        return values, lows, highs


@dataclass(frozen=True)
class _State:
    """The residual at one configuration, with the geometry its Jacobian needs."""

    residual: list[float]
    norm: float
    positions: Sequence[Vector]
    axes: Sequence[Vector]
    upper: Vector
    fore: Vector
    upper_length: float
    fore_length: float
    sine: float
