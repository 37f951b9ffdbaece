"""
The analytic solver (``solver: analytic``): arm joint angles in closed form from the arm vectors.

The UBRI paper (``papers/ubri_upper_body_imitation.txt``, Sec. 2) reads NAO's shoulder pitch and
roll and elbow yaw and roll straight off the person's upper-arm and forearm vectors, as angles
between vectors: no iteration, a few hundredths of a millisecond per pose. This module does the
same for any arm, from its URDF chain and the landmarks of its robot file: nothing in it is
specific to a robot.

**Joints.** Four arm joints shape the landmarks
(``docs/method.md#robot-landmarks-and-the-point-chain``): the root (the joint before the
shoulder landmark, which swings the shoulder), the shoulder landmark joint, the one joint
between the shoulder and elbow landmarks (the upper-arm roll) and the elbow landmark joint.
They are solved, in that order written ``q1 .. q4``; every other arm joint keeps its warm-start
value (the forearm roll between the elbow and wrist landmarks, the wrist). An arm of another
shape is refused with a :class:`~pic_ros.exceptions.ConfigError`.

**Only rotations count.** The targets are two directions: shoulder -> elbow and elbow -> wrist
landmark (the ``direction`` correspondence's bones; with ``position`` targets their bone
directions, the wrist position is not sought). A direction does not change when a joint is
moved sideways, so the offsets between the root and the shoulder (Baxter's 69 mm, TIAGo's)
do not matter and no spherical shoulder is assumed. Everything is written in the root joint's
frame with the four joints at zero (*root frame*): axes w1 .. w4, landmarks S, K (roll joint), E,
W. With the roll turned by q3 the upper arm is ``(K - S) + R(w3, q3) (E - K)`` and the forearm
``R(w3, q3) R(w4, q4) (W - E)``; the root and shoulder turn both by ``R(w1, q1) R(w2, q2)``.

**Two closed forms**, chosen when the arm is loaded by where the roll axis runs:

- *elbow angle first*, exact when the roll axis passes through the shoulder landmark (Baxter;
  TIAGo is 1.5 mm off): the upper arm is then a rigid part of the roll joint's body, so the
  elbow angle depends on q4 alone: ``a cos q4 + b sin q4 = c`` gives q4. The rotation that takes
  the arm's (upper arm, forearm) pair, seen from the roll joint, onto the target pair is then
  split into the root, shoulder and roll rotations (Paden-Kahan subproblem 2 for q1, q2 on the
  roll axis, subproblem 1 for q3);
- *upper arm first*, exact when the roll axis passes through the elbow landmark (NAO, the UBRI
  robot): the upper arm then depends on q1, q2 alone (UBRI's Eqs. 1-2: shoulder pitch and roll
  from the upper-arm vector), so subproblem 2 puts it on its target; the forearm, seen from the
  roll joint, then gives q3 and q4 by subproblem 2 again (UBRI's Eqs. 3-6: elbow yaw and roll).

When the roll axis misses both landmarks (YuMi: 30 mm from the shoulder, 42 mm from the elbow)
the method with the smaller miss is iterated on q3 (from the warm start, at most
:data:`MAX_PASSES` passes, stopping when q3 settles to 1e-9 rad or the residual is within the
tolerance): the result is an approximation whose residual is reported, as ``max_iterations``
when it exceeds the tolerance.

**Every answer is continuous and inside the limits.** Each subproblem has two solutions. Each
angle is taken at its whole turn nearest the previous solution (or one turn on, when that is
inside the working range and cheaper), and the solution with the smaller cost is taken: the
squared change plus :data:`LIMIT_WEIGHT` per radian outside the working range. Each joint is
then clamped into the arm's working range (the URDF limits with the elbow stopped at its
straight position, as for the other solvers) and to ``max_step`` of the recovery settings from
the previous solution (0.3 rad: no jump frames). What a clamp takes away is made up where it
can be: when a bound holds q1 or q2 the other points the upper arm; the roll q3 is solved last,
by subproblem 1, as the angle that brings the upper arm and forearm closest to their targets
given the other three (weighted by the landmark lengths), so a clamped shoulder still gets the
best forearm and an exact solution stays exact; when the elbow is on a bound and the roll
turns the upper arm's offset from its axis (NAO, YuMi, TIAGo), the roll brings the elbow angle
as close as it can, as the joint recovery keeps the elbow angle first.

**Singular poses.** Where the target does not define an angle, the angle moves from its previous
value only by a weight, 0 to 1 as the sine of the angle that defines it goes through
:data:`STRAIGHT_SINES`, and the others are solved for it: the roll for a nearly straight arm
(the bend; upper arm first: the forearm's angle to the roll axis), and q1 when what it aims (the
roll axis's image, or the upper arm) lies along the root axis. So tracker noise on a straight
arm does not spin the roll. Where a bound keeps the upper arm from its target, the roll is
solved after all: the elbow's offset from the roll axis then defines it.

**Result** (:class:`~pic_ros.solvers.result.ArmSolveResult`): ``residual`` compares the
robot's upper-arm and forearm landmark directions with the targets at the robot's landmark
lengths, ``sqrt(L_u^2 |du|^2 + L_f^2 |df|^2)`` [m], measured on the solution (0 when the closed
form was exact: nothing held, everything reachable, the roll axis through the landmark its form
needs); ``termination`` is ``converged`` (residual within the ``tolerance``), else
``stalled`` (a joint limit, the step bound or a singular-pose hold kept the exact answer),
``unreachable`` (the elbow angle or a bone direction is out of the arm's geometric reach, no
bound involved) or ``max_iterations`` (the roll iteration of an offset arm ended above the
tolerance); ``iterations`` counts passes; there is no point chain (``points`` is ``None``) and no
joint recovery (``recovery`` is ``None``).

**The solve** is :mod:`~pic_ros.solvers.analytic_kernel` (with the constants
:data:`MAX_PASSES`, :data:`LIMIT_WEIGHT` and :data:`STRAIGHT_SINES`): plain-float functions over a
packed copy of the arm's geometry, one compiled call per solve with numba, run by Python without
it. This module measures the arm and keeps the warm start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.exceptions import ConfigError
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.kinematics.robot_model import JointType
from pic_ros.solvers import analytic_kernel
from pic_ros.solvers.base import ArmSolver, register_solver, SolverConfig
from pic_ros.solvers.point_chain import Vector
from pic_ros.solvers.result import ArmSolveResult, FloatArray, Termination

_PARALLEL: Final = 0.99
"""Two axes whose directions' dot product exceeds this (in size) count as parallel."""

_new_tuple: Final = tuple.__new__

_TERMINATIONS: Final = {
    analytic_kernel.CONVERGED: Termination.CONVERGED,
    analytic_kernel.STALLED: Termination.STALLED,
    analytic_kernel.UNREACHABLE: Termination.UNREACHABLE,
    analytic_kernel.MAX_ITERATIONS: Termination.MAX_ITERATIONS,
}
"""The solve's termination codes."""


@dataclass(frozen=True)
class ArmGeometry:
    """
    An arm measured for the closed form, packed as the solve reads it.

    :param values: :data:`~pic_ros.solvers.analytic_kernel.GEOMETRY_SIZE` floats
        (:func:`~pic_ros.solvers.analytic_kernel.pack_geometry`): root frame, axes, bones [m].
    :param array: The same floats as an array (what the compiled solve reads).
    :param elbow_first: Which closed form: ``True`` elbow angle first, ``False`` upper arm first.
    :param exact: Whether the roll axis passes through the landmark that form needs.
    """

    values: list[float]
    array: FloatArray
    elbow_first: bool
    exact: bool


def solved_joints(arm: ArmModel) -> tuple[int, int, int, int]:
    """
    Return the chain indices of the four joints the analytic solver solves.

    :param arm: The arm.
    :return: Root, shoulder landmark, upper-arm roll and elbow landmark joints, chain indices.
    :raises ConfigError: If the arm has not exactly one joint between its shoulder and elbow
        landmarks, or if one of the four is prismatic or not an arm joint.
    """
    between = arm.elbow_index - arm.shoulder_index - 1
    if between != 1:
        raise ConfigError(
            f'arm {arm.name!r}: the analytic solver needs exactly one joint (the upper-arm roll) '
            f'between the shoulder landmark {arm.spec.shoulder} and the elbow landmark '
            f'{arm.spec.elbow}; the chain has {between}'
        )
    indices = (arm.root_index, arm.shoulder_index, arm.shoulder_index + 1, arm.elbow_index)
    for index in indices:
        joint = arm.chain.movable_joints[index]
        if joint.joint_type is JointType.PRISMATIC:
            raise ConfigError(
                f'arm {arm.name!r}: the analytic solver needs revolute joints; {joint.name} is '
                'prismatic'
            )
        if joint.name not in arm.joint_names:
            raise ConfigError(
                f'arm {arm.name!r}: the analytic solver would move {joint.name}, which is not '
                'an arm joint'
            )
    return indices


def _vector(values: FloatArray) -> Vector:
    x, y, z = values.tolist()
    return (float(x), float(y), float(z))


def measure_geometry(arm: ArmModel, q: FloatArray) -> ArmGeometry:
    """
    Measure an arm for the closed form: its root frame, axes, bones and roll-axis offsets.

    :param arm: The arm.
    :param q: Arm joint values [rad]; those of the four solved joints are ignored (taken as
        zero), the others (forearm roll, joints before the root) are used as they are.
    :return: The geometry.
    :raises ConfigError: If the closed form does not apply (:func:`solved_joints`), two axes it
        pairs are parallel, or the elbow does not bend the forearm.
    """
    indices = solved_joints(arm)
    chain = arm.chain
    full = arm.full_q(q)
    for index in indices:
        full[index] = 0.0
    frames = chain.joint_origin_transforms(np.array(full))
    points = chain.joint_positions(np.array(full))
    root = frames[chain.joint_names[indices[0]]]
    to_root = root[:3, :3].T
    axes = []
    for index in indices:
        joint = chain.movable_joints[index]
        axis = to_root @ frames[joint.name][:3, :3] @ joint.axis
        axes.append(axis / np.linalg.norm(axis))
    names = [chain.joint_names[index] for index in indices]
    for first, second in ((0, 1), (2, 3)):
        if abs(float(axes[first] @ axes[second])) > _PARALLEL:
            raise ConfigError(
                f'arm {arm.name!r}: the analytic solver needs the axes of {names[first]} and '
                f'{names[second]} not to be parallel'
            )
    shoulder, roll_joint, elbow = (
        to_root @ (points[index] - root[:3, 3]) for index in indices[1:]
    )
    wrist = to_root @ (points[arm.wrist_index] - root[:3, 3])
    forearm = wrist - elbow
    if np.linalg.norm(np.cross(forearm, axes[3])) < 1e-6:
        raise ConfigError(
            f'arm {arm.name!r}: the elbow {names[3]} does not bend the forearm (the forearm lies '
            'along its axis)'
        )
    roll = axes[2]
    to_roll = roll_joint - shoulder
    along = roll * float(to_roll @ roll)
    below = elbow - roll_joint
    shoulder_miss = float(np.linalg.norm(to_roll - along))
    elbow_miss = float(np.linalg.norm(below - roll * float(below @ roll)))
    neutral = arm.landmarks(arm.neutral)
    elbow_first = shoulder_miss <= elbow_miss
    exact = min(shoulder_miss, elbow_miss) < 1e-9
    values = analytic_kernel.pack_geometry(
        to_root=(_vector(to_root[0]), _vector(to_root[1]), _vector(to_root[2])),
        axes=(_vector(axes[0]), _vector(axes[1]), _vector(axes[2]), _vector(axes[3])),
        upper_fixed=_vector(to_roll - along),
        upper_rolled=_vector(below + along),
        forearm=_vector(forearm),
        lengths=(
            float(np.linalg.norm(neutral[2] - neutral[1])),
            float(np.linalg.norm(neutral[3] - neutral[2])),
        ),
        elbow_first=elbow_first,
        exact=exact,
    )
    return ArmGeometry(values, np.array(values), elbow_first, exact)


@register_solver('analytic')
class AnalyticSolver(ArmSolver):
    """
    Closed-form arm angles from the target bone directions (after UBRI; see the module).

    :param arm: The arm.
    :param config: Solver settings: ``iteration.tolerance`` is the residual tolerance [m],
        ``recovery.max_step`` the largest change of a joint in one solve [rad].
    :raises ConfigError: If the arm's joints do not have the shape the closed form needs.
    """

    def __init__(self, arm: ArmModel, config: SolverConfig) -> None:
        super().__init__(arm, config)
        indices = solved_joints(arm)
        order = list(arm.active)
        self._positions = tuple(order.index(index) for index in indices)
        self._held = tuple(
            position
            for position, index in enumerate(arm.active)
            if index < arm.wrist_index and position not in self._positions
        )
        low = [float(arm.work_lower[p]) for p in self._positions]
        high = [float(arm.work_upper[p]) for p in self._positions]
        self._tolerance = config.iteration.tolerance
        neutral = arm.neutral.tolist()
        self._held_values = tuple(neutral[position] for position in self._held)
        self._geometry = measure_geometry(arm, arm.neutral)
        # One frame array per solver (its ranges and step set once): an array for the compiled
        # solve, a list for Python.
        self._compiled = analytic_kernel.load()
        frame = [0.0] * analytic_kernel.FRAME_SIZE
        frame[analytic_kernel.LOW:analytic_kernel.LOW + 4] = low
        frame[analytic_kernel.HIGH:analytic_kernel.HIGH + 4] = high
        frame[analytic_kernel.STEP] = config.recovery.max_step
        self._frame: Any = np.array(frame) if self._compiled else frame

    @property
    def geometry(self) -> ArmGeometry:
        """Return the arm's geometry for the current values of the joints it holds."""
        return self._geometry

    # The warm start is kept as a list of floats, which is what a solve reads and writes; the
    # base class's array attribute reads and sets it.
    @property
    def _q(self) -> FloatArray:
        """Return the warm start as an array (a new one)."""
        return np.array(self._warm)

    @_q.setter
    def _q(self, q: FloatArray) -> None:
        self._warm: list[float] = q.tolist()

    def reset(self, q: npt.ArrayLike | None = None) -> None:
        """
        Set the warm start (see :meth:`ArmSolver.reset`).

        The arm is measured again when the new warm start moves a joint the solver holds.

        :param q: Arm joint values; default the neutral pose. They are clamped into the limits.
        :raises SkeletonError: If ``q`` has the wrong shape or is not finite.
        """
        super().reset(q)
        self._measure_for(self._warm)

    def solve(self, targets: ArmTargets) -> ArmSolveResult:
        """
        Solve one frame and keep the answer as the next warm start (see :meth:`ArmSolver.solve`).

        Targets given as numpy rows are read as plain floats once, which is also their check
        for finite values; anything else (or anything not finite) takes the base class's path,
        which names what is wrong.

        :param targets: Mapped human arm, robot base frame [m].
        :return: Joint angles inside the limits and the result record.
        :raises SkeletonError: If a target is not a finite 3-vector (the frame must be dropped).
        """
        try:
            sx, sy, sz = targets.shoulder.tolist()
            ex, ey, ez = targets.elbow.tolist()
            wx, wy, wz = targets.wrist.tolist()
            finite = math.isfinite(sx + sy + sz + ex + ey + ez + wx + wy + wz)
        except (AttributeError, TypeError, ValueError):
            finite = False
        if not finite:
            return super().solve(targets)
        # The warm start's solved joints are overwritten in place: it becomes the next one.
        return self._solve_bones(
            (ex - sx, ey - sy, ez - sz), (wx - ex, wy - ey, wz - ez), self._warm
        )

    def _solve(self, targets: ArmTargets, q_previous: FloatArray) -> ArmSolveResult:
        self._measure_for(q_previous.tolist())
        sx, sy, sz = _floats(targets.shoulder)
        ex, ey, ez = _floats(targets.elbow)
        wx, wy, wz = _floats(targets.wrist)
        return self._solve_bones(
            (ex - sx, ey - sy, ez - sz), (wx - ex, wy - ey, wz - ez), q_previous.tolist()
        )

    def _measure_for(self, values: list[float]) -> None:
        """Measure the arm again if the joints it holds are not where it was measured."""
        held = tuple([values[position] for position in self._held])
        if held != self._held_values:
            self._held_values = held
            self._geometry = measure_geometry(self.arm, np.array(values))

    def _solve_bones(self, upper_bone: Vector, fore_bone: Vector, q: list[float]
                     ) -> ArmSolveResult:
        """
        Solve for the target upper-arm and forearm vectors from the warm start ``q``.

        :param upper_bone: Shoulder -> elbow target, robot base frame [m].
        :param fore_bone: Elbow -> wrist target, robot base frame [m].
        :param q: The warm start, arm joint order [rad]; its solved joints are overwritten.
        :return: The result.
        """
        p1, p2, p3, p4 = self._positions
        geometry = self._geometry
        q[p1], q[p2], q[p3], q[p4], iterations, code, residual = analytic_kernel.solve(
            geometry.array if self._compiled else geometry.values, self._frame,
            q[p1], q[p2], q[p3], q[p4], *upper_bone, *fore_bone, self._tolerance,
        )
        # tuple.__new__ straight away: the named tuple's own __new__ is one more Python call.
        return _new_tuple(ArmSolveResult, (
            np.array(q), None, _TERMINATIONS[code], iterations, residual, None, None
        ))


def _floats(point: FloatArray | Sequence[float]) -> list[float]:
    values: list[float] = point.tolist() if isinstance(point, np.ndarray) else list(point)
    return values
