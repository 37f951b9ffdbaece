"""
Prioritized whole-body inverse kinematics: an arm and the torso it rides on, as a task hierarchy.

The whole-body control of Arduengo et al. (TIAGo teleoperation, Sec. II-C) at the position level:
from the warm start, a bounded number of differential steps, each solving a strict hierarchy of
tasks by null-space projection (Siciliano and Slotine's recursive form with damped
pseudo-inverses):

1. **joint limits** (highest): no step leaves the working range of the arm
   (:attr:`~pic_ros.robot.arm.ArmModel.work_lower`, ``work_upper``) or the torso's URDF range.
   A joint that would leave it is *saturated* at its bound and removed from every task, and the
   hierarchy is solved again with the others (saturation in the null space, the SNS scheme of
   Flacco et al.), so no lower task can push a joint out. The same holds for the per-frame
   bound :attr:`PrioritizedConfig.frame_step`: no revolute joint moves further than it from the
   previous frame's solution, so consecutive solutions never jump, whatever the targets (near
   the straight arm the upper-arm roll hardly moves the wrist, and the wrist task alone would
   turn it by half a radian for a few centimetres);
2. *self-collision avoidance*, the paper's second task, is not a task of this hierarchy: the
   answer goes through :mod:`pic_ros.solvers.avoidance` after it, like every arm solver's
   (as an equality task here, its rows entering and leaving the hierarchy from one step to the
   next made the answer for a still person swing by the per-frame step bound every frame);
3. **torso position**: the lift reaches its target (one coordinate; met exactly when the target
   is inside the limits);
4. **end effector**: the wrist landmark reaches its target (the end-effector target, with any
   admittance offset) at the person's *reach*: the goal is the point at the target's distance
   from the anchor it was placed from (the shoulder, :attr:`WholeBodyTargets.shoulder`),
   measured from the robot's shoulder landmark as it is now, toward the target. While the
   shoulder is at the anchor the goal is the target itself. An arm whose first joint swings the
   shoulder (TIAGo's arm_1 moves it on a 13 cm circle when the upper arm turns sideways) cannot
   keep its shoulder at the anchor; the goal then keeps the shoulder -> wrist distance, and so
   the person's elbow angle, and gives up only the hand's place along that line (a few
   centimetres), instead of bending the elbow to put the hand exactly there;
5. **elbow**: the elbow landmark reaches its target position, in what the tasks above leave.

A lower task moves the joints only in the null space of every higher task (the exact projector
of the stacked Jacobian, from a singular value decomposition), so it never changes a higher
task's result to first order; damping only shortens steps near singularities. The Jacobians of
the landmark points are analytic, from the chain's joint origins and axes
(:meth:`~pic_ros.robot.kinematics.chain.KinematicChain.prefix_positions_and_axes`): a revolute
joint moves a point at ``p`` by ``axis x (p - origin)`` per radian, a prismatic one by ``axis``
per metre.

Units: metres and radians; positions in the robot base frame.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.kinematics.robot_model import JointType
from pic_ros.robot.torso import TorsoModel
from pic_ros.solvers.result import Termination

FloatArray = npt.NDArray[np.float64]

RANK_THRESHOLD: Final = 1e-6
"""Singular values of a projected task Jacobian above this [m/rad] or [m/m] count as directions
the task uses; the lower tasks are projected out of them."""


@dataclass(frozen=True)
class PrioritizedConfig:
    """
    Stopping rules and step bounds of the prioritized solve.

    :param max_iterations: Differential steps per frame at most, 1..200.
    :param tolerance: The torso, wrist and elbow tasks are met when each is this close [m].
    :param min_step: A step whose largest joint change is below this [rad] or [m] means the
        lower tasks are as close as the higher ones and the limits let them be (stalled).
    :param damping: Damping of the torso and end-effector pseudo-inverses [m]: steps shrink
        near singularities.
    :param elbow_damping: Damping of the elbow task [m], larger: near the straight arm the
        upper-arm roll hardly moves the elbow, and a lightly damped posture task would swing it
        far for millimetres.
    :param max_step: Largest joint change per step [rad] or [m] (keeps the linearization valid).
    :param max_error: Largest task error used per step [m] (a far target is approached in
        bounded steps).
    :param frame_step: Largest change of any revolute joint in one frame [rad], whatever the
        targets do (part of the highest task, as the joint limits): consecutive solutions never
        jump. The same bound as the per-arm solvers' recovery ``max_step``. Near the straight
        arm the upper-arm roll barely moves the wrist, and a few centimetres of target motion
        (tracker noise, or the forearm swinging through the straight arm) would otherwise turn
        it by half a radian or more in one frame; bounded, the roll turns over a few frames.
    :param velocity_bounded: Bound each frame's change of every joint by its velocity limit
        times the time since the previous frame (joint velocity limits as part of the highest
        task). Off by default: the trajectory publisher applies the limits downstream, and the
        targets stay what the hierarchy asks for.
    """

    max_iterations: int = 10
    tolerance: float = 1e-4
    min_step: float = 1e-3
    damping: float = 0.03
    elbow_damping: float = 0.1
    max_step: float = 0.3
    max_error: float = 0.1
    frame_step: float = 0.3
    velocity_bounded: bool = False

    def __post_init__(self) -> None:
        if (
            not isinstance(self.max_iterations, int) or isinstance(self.max_iterations, bool)
            or not 1 <= self.max_iterations <= 200
        ):
            raise ConfigError(f'max_iterations must be an integer in [1, 200], got '
                              f'{self.max_iterations!r}')
        check_number('tolerance', self.tolerance, 1e-9, 0.1)
        check_number('min_step', self.min_step, 1e-12, 0.1)
        check_number('damping', self.damping, 0.0, 1.0)
        check_number('elbow_damping', self.elbow_damping, 0.0, 1.0)
        check_number('max_step', self.max_step, 1e-3, math.pi)
        check_number('max_error', self.max_error, 1e-3, 10.0)
        check_number('frame_step', self.frame_step, 1e-3, 2.0 * math.pi)
        if not isinstance(self.velocity_bounded, bool):
            raise ConfigError(f'velocity_bounded must be a bool, got {self.velocity_bounded!r}')


class WholeBodyTargets(NamedTuple):
    """
    What the hierarchy is asked for in one frame.

    :param torso: Torso lift target [m] (clamped into its limits by the solver).
    :param shoulder: The anchor the arm targets were placed from: the robot's shoulder landmark
        at the neutral arm pose and the lift target, shape (3,), [m], base frame.
    :param wrist: End-effector (wrist landmark) target, shape (3,), [m], base frame.
    :param elbow: Elbow landmark target, shape (3,), [m], base frame; None drops the elbow task.
    """

    torso: float
    shoulder: FloatArray
    wrist: FloatArray
    elbow: FloatArray | None


class WholeBodyResult(NamedTuple):
    """
    Result of one prioritized solve.

    :param q: Arm joint values, arm order, inside the working range [rad] or [m].
    :param torso: Torso lift, inside its limits [m].
    :param torso_error: |torso target (clamped) - torso| [m].
    :param wrist_error: Wrist landmark distance to the end-effector task's goal (the target
        at the person's reach from the robot's shoulder, see the module) [m].
    :param elbow_error: Elbow landmark distance to its target [m] (NaN without an elbow task).
    :param iterations: Differential steps done.
    :param termination: ``CONVERGED`` (every task within the tolerance), ``STALLED`` (the step
        vanished: the tasks are as close as the hierarchy and the limits allow) or
        ``MAX_ITERATIONS``.
    :param saturated: Joints (chain names) held at a bound in the last step.
    """

    q: FloatArray
    torso: float
    torso_error: float
    wrist_error: float
    elbow_error: float
    iterations: int
    termination: Termination
    saturated: tuple[str, ...]


def prioritized_step(
    tasks: list[tuple[FloatArray, FloatArray, float]],
    low: FloatArray,
    high: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """
    Solve one differential step of a strict task hierarchy inside step bounds.

    Each task ``(J, e, damping)`` asks ``J dq = e``; task ``i`` is solved in the null space of
    tasks ``0 .. i-1`` with a pseudo-inverse damped by ``damping``. Variables that would leave
    ``[low, high]`` are saturated at the bound one at a time (the worst first) and the hierarchy
    is solved again without them.

    :param tasks: ``(jacobian (m, n), error (m,), damping)``, highest priority first.
    :param low: Lowest allowed step per variable, shape (n,), <= 0.
    :param high: Highest allowed step per variable, shape (n,), >= 0.
    :return: ``(step, saturated)``: the step, shape (n,), inside the bounds; and a mask of the
        saturated variables.
    """
    count = low.shape[0]
    free = np.ones(count, dtype=bool)
    fixed = np.zeros(count)
    for _ in range(count + 1):
        step = fixed.copy()
        projector = np.diag(free.astype(float))
        for jacobian, error, damping in tasks:
            damping2 = damping * damping
            projected = jacobian @ projector
            residual = error - jacobian @ step
            if projected.shape[0] == 1:  # one row: its norm is its singular value
                size = float(np.sqrt(projected @ projected.T)[0, 0])
                if size > RANK_THRESHOLD:
                    row = projected[0] / size
                    step = step + row * (size / (size * size + damping2) * float(residual[0]))
                    projector = projector - np.outer(row, row)
                continue
            u, s, vt = np.linalg.svd(projected, full_matrices=False)
            gains = s / (s * s + damping2)
            step = step + vt.T @ (gains * (u.T @ residual))
            used = vt[s > RANK_THRESHOLD]
            projector = projector - used.T @ used
        over = np.where(free, np.maximum(step - high, low - step), 0.0)
        worst = int(np.argmax(over))
        if over[worst] <= 1e-12:
            return np.clip(step, low, high), ~free
        free[worst] = False
        fixed[worst] = high[worst] if step[worst] > high[worst] else low[worst]
    return np.clip(fixed, low, high), ~free


class PrioritizedSolver:
    """
    Solve one arm and the torso it rides on, frame after frame, from the warm start.

    :param arm: The arm (built with the torso at its neutral value).
    :param torso: The torso; its joint lies on the arm's chain.
    :param config: Stopping rules and step bounds.
    :raises ConfigError: If the torso joint is not on the arm's chain.
    """

    def __init__(
        self, arm: ArmModel, torso: TorsoModel, config: PrioritizedConfig | None = None
    ) -> None:
        if torso.joint not in arm.chain.joint_names:
            raise ConfigError(f'the torso {torso.joint!r} is not on the chain of arm {arm.name!r}')
        self.arm = arm
        self.torso = torso
        self.config = config if config is not None else PrioritizedConfig()
        chain = arm.chain
        torso_index = chain.index(torso.joint)
        self._columns = (torso_index, *arm.active)  # chain index of each variable
        self._low = np.concatenate(([torso.lower], arm.work_lower))
        self._high = np.concatenate(([torso.upper], arm.work_upper))
        self._prismatic = tuple(
            chain.movable_joints[index].joint_type is JointType.PRISMATIC
            for index in self._columns
        )
        self._revolute = ~np.array(self._prismatic)
        self._template = arm.full_q(arm.neutral)
        self._speed = np.concatenate(([torso.velocity], arm.velocity))
        self._q = arm.clamp(np.clip(arm.neutral, arm.work_lower, arm.work_upper))
        self._torso = torso.neutral

    @property
    def q(self) -> FloatArray:
        """Return the arm's warm start, arm order [rad] or [m]."""
        return self._q.copy()

    @property
    def torso_value(self) -> float:
        """Return the torso's warm start [m]."""
        return self._torso

    def reset(self, q: npt.ArrayLike | None = None, torso: float | None = None) -> None:
        """
        Set the warm start (clamped into the working range).

        :param q: Arm joint values; default the neutral pose.
        :param torso: Torso lift [m]; default its neutral value.
        """
        values = self.arm.neutral if q is None else np.asarray(q, dtype=float)
        self._q = np.clip(values, self.arm.work_lower, self.arm.work_upper)
        self._torso = self.torso.clamp(self.torso.neutral if torso is None else torso)

    def landmarks(self, q: npt.ArrayLike, torso: float) -> FloatArray:
        """
        Compute the arm's landmarks at a torso lift.

        :param q: Arm joint values, arm order.
        :param torso: Torso lift [m].
        :return: Root, shoulder, elbow, wrist and tool, shape (5, 3), [m], base frame.
        """
        full = self._full(np.concatenate(([torso], np.asarray(q, dtype=float))))
        positions = self.arm.chain.joint_positions(full)
        arm = self.arm
        rows = [arm.root_index, arm.shoulder_index, arm.elbow_index, arm.wrist_index, -1]
        return positions[rows]

    def _full(self, variables: FloatArray) -> list[float]:
        full = list(self._template)
        for index, value in zip(self._columns, variables.tolist()):
            full[index] = value
        return full

    def _point_jacobian(
        self, point: tuple[float, float, float], point_index: int,
        positions: list[tuple[float, float, float]], axes: list[tuple[float, float, float]],
    ) -> FloatArray:
        """Jacobian of a joint origin (chain index ``point_index``) w.r.t. the variables."""
        jacobian = np.zeros((3, len(self._columns)))
        px, py, pz = point
        for column, (index, prismatic) in enumerate(zip(self._columns, self._prismatic)):
            if index >= point_index:
                continue  # a joint does not move its own origin or those before it
            ax, ay, az = axes[index]
            if prismatic:
                jacobian[:, column] = (ax, ay, az)
            else:
                ox, oy, oz = positions[index]
                dx, dy, dz = px - ox, py - oy, pz - oz
                jacobian[:, column] = (ay * dz - az * dy, az * dx - ax * dz, ax * dy - ay * dx)
        return jacobian

    def solve(self, targets: WholeBodyTargets, elapsed: float | None = None) -> WholeBodyResult:
        """
        Solve one frame and keep the answer as the next warm start.

        :param targets: Torso, wrist and elbow targets, base frame [m].
        :param elapsed: Time since the previous frame [s], or None (the first frame); with
            :attr:`PrioritizedConfig.velocity_bounded` every joint then moves at most its
            velocity limit times this.
        :return: Arm joints and torso lift inside the limits, with the task errors and why the
            iteration stopped.
        :raises ConfigError: If a target is not finite.
        """
        wrist_target = _point(targets.wrist)
        anchor = _point(targets.shoulder)
        elbow_target = None if targets.elbow is None else _point(targets.elbow)
        if not math.isfinite(targets.torso):
            raise ConfigError(f'the torso target must be finite, got {targets.torso!r}')
        config = self.config
        torso_target = self.torso.clamp(targets.torso)
        reach = float(np.linalg.norm(wrist_target - anchor))
        variables = np.concatenate(([self._torso], self._q))
        frame_step = np.where(self._revolute, config.frame_step, np.inf)
        lowest = np.maximum(self._low, variables - frame_step)
        highest = np.minimum(self._high, variables + frame_step)
        if elapsed is not None and config.velocity_bounded:
            travel = self._speed * max(float(elapsed), 0.0)
            lowest = np.maximum(lowest, variables - travel)
            highest = np.minimum(highest, variables + travel)
        chain = self.arm.chain
        wrist_index = self.arm.wrist_index
        elbow_index = self.arm.elbow_index
        shoulder_index = self.arm.shoulder_index
        termination = Termination.MAX_ITERATIONS
        saturated = np.zeros(len(variables), dtype=bool)
        iterations = 0
        torso_jacobian = np.zeros((1, len(variables)))
        torso_jacobian[0, 0] = 1.0
        while True:
            positions, axes = chain.prefix_positions_and_axes(self._full(variables), chain.dof)
            wrist = positions[wrist_index]
            elbow = positions[elbow_index]
            torso_error = torso_target - float(variables[0])
            goal = _reach_goal(wrist_target, positions[shoulder_index], reach)
            wrist_error = goal - np.array(wrist)
            elbow_error = None if elbow_target is None else elbow_target - np.array(elbow)
            largest = max(
                abs(torso_error), float(np.linalg.norm(wrist_error)),
                0.0 if elbow_error is None else float(np.linalg.norm(elbow_error)),
            )
            if largest <= config.tolerance:
                termination = Termination.CONVERGED
                break
            if iterations >= config.max_iterations:
                break
            tasks = [
                (torso_jacobian, np.array([torso_error]), config.damping),
                (
                    self._point_jacobian(wrist, wrist_index, positions, axes),
                    _bounded(wrist_error, config.max_error), config.damping,
                ),
            ]
            if elbow_error is not None:
                tasks.append((
                    self._point_jacobian(elbow, elbow_index, positions, axes),
                    _bounded(elbow_error, config.max_error), config.elbow_damping,
                ))
            low = np.maximum(lowest - variables, -config.max_step)
            high = np.minimum(highest - variables, config.max_step)
            step, saturated = prioritized_step(tasks, low, high)
            variables = np.clip(variables + step, lowest, highest)
            iterations += 1
            if float(np.max(np.abs(step))) < config.min_step:
                termination = Termination.STALLED
                positions, _ = chain.prefix_positions_and_axes(self._full(variables), chain.dof)
                wrist, elbow = positions[wrist_index], positions[elbow_index]
                break
        self._torso = float(variables[0])
        self._q = variables[1:].copy()
        names = tuple(
            chain.joint_names[index] for index, flag in zip(self._columns, saturated) if flag
        )
        return WholeBodyResult(
            q=self._q.copy(),
            torso=self._torso,
            torso_error=abs(torso_target - self._torso),
            wrist_error=float(np.linalg.norm(
                _reach_goal(wrist_target, positions[shoulder_index], reach) - np.array(wrist)
            )),
            elbow_error=(
                float('nan') if elbow_target is None
                else float(np.linalg.norm(elbow_target - np.array(elbow)))
            ),
            iterations=iterations,
            termination=termination,
            saturated=names,
        )


def _point(value: npt.ArrayLike) -> FloatArray:
    """Check a target point: a finite 3-vector [m]."""
    point = np.asarray(value, dtype=float)
    if point.shape != (3,) or not np.all(np.isfinite(point)):
        raise ConfigError(f'whole-body target points must be finite 3-vectors [m], got {value!r}')
    return point


def _reach_goal(
    place: FloatArray, shoulder: tuple[float, float, float], reach: float
) -> FloatArray:
    """
    Return the end-effector goal: at the person's reach from the robot's shoulder, toward place.

    :param place: The wrist target [m], base frame.
    :param shoulder: The robot's shoulder landmark now [m], base frame.
    :param reach: The target's shoulder -> wrist distance [m] (from the anchor it was placed at).
    :return: The goal [m]: ``place`` itself while the shoulder is at the anchor.
    """
    away = place - np.array(shoulder)
    distance = float(np.linalg.norm(away))
    if distance < 1e-9:
        return place
    goal: FloatArray = np.array(shoulder) + (reach / distance) * away
    return goal


def _bounded(error: FloatArray, largest: float) -> FloatArray:
    """Shorten an error vector to at most ``largest`` [m], keeping its direction."""
    norm = float(np.linalg.norm(error))
    return error if norm <= largest else error * (largest / norm)


__all__ = [
    'PrioritizedConfig',
    'PrioritizedSolver',
    'WholeBodyResult',
    'WholeBodyTargets',
    'prioritized_step',
]
