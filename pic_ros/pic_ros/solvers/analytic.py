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
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from operator import itemgetter
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.exceptions import ConfigError
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.kinematics.robot_model import JointType
from pic_ros.solvers.base import ArmSolver, register_solver, SolverConfig
from pic_ros.solvers.point_chain import cross, dot, unit, Vector
from pic_ros.solvers.result import ArmSolveResult, FloatArray, Termination

MAX_PASSES: Final = 4
"""Passes of the roll iteration for an arm whose roll axis misses both landmarks."""

LIMIT_WEIGHT: Final = 30.0
"""Cost of a candidate solution per radian outside the working range (against rad^2 moved)."""

STRAIGHT_SINES: Final = (0.05, 0.25)
"""Below the first sine the roll keeps its previous value; above the second it is solved."""

_SOLVED_SQUARED: Final = STRAIGHT_SINES[1] * STRAIGHT_SINES[1]
"""Squared sine above which :func:`_weight` is 1 (checked before calling it)."""

_SETTLED: Final = 1e-9
"""Change of the roll [rad] below which the roll iteration has settled."""

_PARALLEL: Final = 0.99
"""Two axes whose directions' dot product exceeds this (in size) count as parallel."""

_new_tuple: Final = tuple.__new__

_ElbowTerms = tuple[float, float, float, float, float, float, float, float]

_PI: Final = math.pi
_TWO_PI: Final = 2.0 * math.pi
_DOWN: Vector = (0.0, 0.0, -1.0)


def _turn(axis: Vector, cosine: float, sine: float, v: Vector) -> Vector:
    """Rotate ``v`` about the unit ``axis`` by the angle of ``cosine``, ``sine`` (Rodrigues)."""
    kx, ky, kz = axis
    vx, vy, vz = v
    along = (kx * vx + ky * vy + kz * vz) * (1.0 - cosine)
    return (
        vx * cosine + (ky * vz - kz * vy) * sine + kx * along,
        vy * cosine + (kz * vx - kx * vz) * sine + ky * along,
        vz * cosine + (kx * vy - ky * vx) * sine + kz * along,
    )


def _combine(a: Vector, ka: float, b: Vector, kb: float, c: Vector, kc: float) -> Vector:
    """Return ``ka a + kb b + kc c``."""
    return (
        ka * a[0] + kb * b[0] + kc * c[0],
        ka * a[1] + kb * b[1] + kc * c[1],
        ka * a[2] + kb * b[2] + kc * c[2],
    )


def _across(v: Vector, direction: Vector) -> Vector:
    """Return the unit part of ``v`` perpendicular to the unit ``direction``."""
    along = dot(v, direction)
    rest = (v[0] - along * direction[0], v[1] - along * direction[1], v[2] - along * direction[2])
    return unit(rest, _DOWN)


def _angle_about(axis: Vector, p: Vector, q: Vector) -> float:
    """Return the angle about the unit ``axis`` turning ``p`` closest to ``q`` (subproblem 1)."""
    kx, ky, kz = axis
    px, py, pz = p
    qx, qy, qz = q
    return math.atan2(
        kx * (py * qz - pz * qy) + ky * (pz * qx - px * qz) + kz * (px * qy - py * qx),
        px * qx + py * qy + pz * qz
        - (kx * px + ky * py + kz * pz) * (kx * qx + ky * qy + kz * qz),
    )


def _weight(cosine: float) -> float:
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


class _TwoTurns:
    """
    Paden-Kahan subproblem 2: the angles ``(a, b)`` with ``R(first, a) R(second, b) p = y``.

    The axes and the unit vector ``p`` are fixed, so what depends on them alone is computed once.

    :param first: Unit axis of the outer rotation.
    :param second: Unit axis of the inner rotation, not parallel to ``first``.
    :param p: Unit vector to turn.
    """

    __slots__ = ('first', 'second', 'terms')

    def __init__(self, first: Vector, second: Vector, p: Vector) -> None:
        self.first = first
        self.second = second
        n = cross(first, second)
        d = dot(first, second)
        # The inner angle turns p onto c = alpha first + beta second + gamma normal; its sine and
        # cosine are linear in alpha, beta and gamma with these coefficients.
        px, py, pz = p
        ax, ay, az = first
        bx, by, bz = second
        sin_a = bx * (py * az - pz * ay) + by * (pz * ax - px * az) + bz * (px * ay - py * ax)
        sin_g = bx * (py * n[2] - pz * n[1]) + by * (pz * n[0] - px * n[2]) + bz * (
            px * n[1] - py * n[0])
        # What solve reads, in one tuple: the axes, their normal and first x normal, the axes'
        # dot product, p along second, 1 - d^2, and the inner angle's coefficients.
        self.terms = (*first, *second, *n, *cross(first, n), d, bx * px + by * py + bz * pz,
                      1.0 - d * d, sin_a, px * ax + py * ay + pz * az, sin_g,
                      px * n[0] + py * n[1] + pz * n[2])

    def solve(self, y: Vector) -> tuple[tuple[tuple[float, float], ...], bool]:
        """
        Return the angle pairs that turn ``p`` onto the unit vector ``y``.

        The outer angle turns ``c`` (the inner rotation's image of ``p``) onto ``y`` about
        ``first``: its sine ``first . (c x y)`` is ``beta normal . y + gamma across . y``
        (``across = first x normal``), its cosine ``c . y - (first . y)^2``; both are linear in
        gamma, like the inner angle's, so the two solutions share every term but gamma's sign.

        :param y: Target, in the frame of the axes.
        :return: Two pairs, or one when ``y`` is on the edge of what the two rotations reach or
            beyond it (then the pair that turns ``p`` closest to ``y``); and whether ``y`` is
            reached.
        """
        yx, yy, yz = y
        (ax, ay, az, bx, by, bz, nx, ny, nz, mx, my, mz, d, pp, scale, sin_a, cos_a, sin_g, cos_g
         ) = self.terms
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
            return ((math.atan2(outer_sin, outer_cos), math.atan2(inner_sin, inner_cos)),
                    ), gamma2 >= -1e-9
        gamma = math.sqrt(gamma2)
        outer_sin_g = gamma * (mx * yx + my * yy + mz * yz)
        outer_cos_g = gamma * on_normal
        inner_sin_g = gamma * sin_g
        inner_cos_g = gamma * cos_g
        return (
            (math.atan2(outer_sin + outer_sin_g, outer_cos + outer_cos_g),
             math.atan2(inner_sin + inner_sin_g, inner_cos + inner_cos_g)),
            (math.atan2(outer_sin - outer_sin_g, outer_cos - outer_cos_g),
             math.atan2(inner_sin - inner_sin_g, inner_cos - inner_cos_g)),
        ), True


class _Geometry:
    """
    An arm in its root frame (the root joint's frame, the four solved joints at zero), [m].

    With the roll at q3 the upper arm is ``R(w3, q3) upper_rolled + upper_fixed`` and the
    forearm ``R(w3, q3) R(w4, q4) forearm``; the root and shoulder turn both by
    ``R(w1, q1) R(w2, q2)``.

    :param to_root: Rows of the rotation base frame -> root frame.
    :param axes: Unit root, shoulder, roll and elbow axes (w1 .. w4).
    :param upper_fixed: The part of K - S across the roll axis (S shoulder, K roll joint).
    :param upper_rolled: E - K plus the part of K - S along the roll axis (E elbow).
    :param forearm: W - E (W wrist).
    :param lengths: Shoulder -> elbow and elbow -> wrist landmark distances at the neutral pose.
    :param elbow_first: Which closed form: ``True`` elbow angle first, ``False`` upper arm first.
    :param exact: Whether the roll axis passes through the landmark that form needs.
    """

    __slots__ = ('to_root', 'shoulder_axis', 'shoulder_turns', 'roll', 'roll_normal', 'elbow_axis',
                 'upper_fixed', 'upper_rolled', 'forearm', 'forearm_turns', 'fore_along',
                 'fore_across', 'fore_turned', 'upper_length', 'forearm_length', 'fixed_terms',
                 'upper_squared', 'rolled_on_roll', 'roll_cross_rolled', 'roll_cross_fixed',
                 'elbow_first', 'exact', 'elbow', 'upper_turns')

    def __init__(
        self,
        to_root: tuple[Vector, Vector, Vector],
        axes: tuple[Vector, Vector, Vector, Vector],
        upper_fixed: Vector,
        upper_rolled: Vector,
        forearm: Vector,
        lengths: tuple[float, float],
        elbow_first: bool,
        exact: bool,
    ) -> None:
        w1, w2, w3, w4 = axes
        self.to_root = to_root
        self.shoulder_axis = w2
        self.shoulder_turns = _TwoTurns(w1, w2, w3)
        self.roll = w3
        self.roll_normal = _across((1.0, 0.0, 0.0) if abs(w3[0]) < 0.6 else (0.0, 1.0, 0.0), w3)
        self.elbow_axis = w4
        self.upper_fixed = upper_fixed
        self.upper_rolled = upper_rolled
        self.forearm = forearm
        fore = unit(forearm, _DOWN)
        self.forearm_turns = _TwoTurns(w3, w4, fore)
        along = dot(fore, w4)
        self.fore_along = (along * w4[0], along * w4[1], along * w4[2])
        self.fore_across = (fore[0] - self.fore_along[0], fore[1] - self.fore_along[1],
                            fore[2] - self.fore_along[2])
        self.fore_turned = cross(w4, self.fore_across)
        self.upper_length, self.forearm_length = lengths
        # R(w3, q3) h . fixed = cos(q3) h . fixed + sin(q3) (w3 x h) . fixed (fixed is across w3).
        self.fixed_terms = (
            dot(upper_rolled, upper_fixed), dot(cross(w3, upper_rolled), upper_fixed)
        )
        self.upper_squared = dot(upper_rolled, upper_rolled) + dot(upper_fixed, upper_fixed)
        # R(w3, q3) h = (w3 . h) w3 + cos(q3) (h - (w3 . h) w3) + sin(q3) w3 x h, and likewise
        # R(w3, -q3) fixed = cos(q3) fixed - sin(q3) w3 x fixed (fixed is across w3).
        self.rolled_on_roll = dot(w3, upper_rolled)
        self.roll_cross_rolled = cross(w3, upper_rolled)
        self.roll_cross_fixed = cross(w3, upper_fixed)
        self.elbow_first = elbow_first
        self.exact = exact
        self.elbow = self.elbow_seen(0.0)
        self.upper_turns = self._upper_turns(0.0)

    def upper(self, q3: float) -> Vector:
        """Return the upper arm S -> E with the roll at ``q3`` (root and shoulder at zero) [m]."""
        rolled = _turn(self.roll, math.cos(q3), math.sin(q3), self.upper_rolled)
        fixed = self.upper_fixed
        return (rolled[0] + fixed[0], rolled[1] + fixed[1], rolled[2] + fixed[2])

    def elbow_seen(self, q3: float) -> _ElbowTerms:
        """
        Return the elbow equation for the roll at ``q3`` (roll axis not through the shoulder).

        With the forearm ``R(w4, q4) f = along + cos(q4) across + sin(q4) turned`` (unit f) and
        the unit upper arm u seen from the roll joint (``h + R(w3, -q3) fixed``, normalised),
        ``u . R(w4, q4) f = cosine`` reads ``a cos(q4) + b sin(q4) = cosine - u . along``, that
        is ``radius cos(q4 - middle) = cosine - offset``.

        :param q3: The roll [rad].
        :return: ``(ux, uy, uz, offset, radius, middle, u . w3, u . roll_normal)``.
        """
        c, s = math.cos(q3), math.sin(q3)
        hx, hy, hz = self.upper_rolled
        ox, oy, oz = self.upper_fixed
        tx, ty, tz = self.roll_cross_fixed
        ux, uy, uz = hx + c * ox - s * tx, hy + c * oy - s * ty, hz + c * oz - s * tz
        length = math.sqrt(ux * ux + uy * uy + uz * uz)
        if length < 1e-12:
            ux, uy, uz = _DOWN
        else:
            ux, uy, uz = ux / length, uy / length, uz / length
        along, across, turned = self.fore_along, self.fore_across, self.fore_turned
        roll, normal = self.roll, self.roll_normal
        a = ux * across[0] + uy * across[1] + uz * across[2]
        b = ux * turned[0] + uy * turned[1] + uz * turned[2]
        return (ux, uy, uz, ux * along[0] + uy * along[1] + uz * along[2], math.hypot(a, b),
                math.atan2(b, a), ux * roll[0] + uy * roll[1] + uz * roll[2],
                ux * normal[0] + uy * normal[1] + uz * normal[2])

    def upper_turns_for(self, q3: float) -> _TwoTurns:
        """Return subproblem 2 that points the upper arm (roll at ``q3``) with q1, q2."""
        return self.upper_turns if self.exact and not self.elbow_first else self._upper_turns(q3)

    def _upper_turns(self, q3: float) -> _TwoTurns:
        upper = unit(self.upper(q3), _DOWN)
        return _TwoTurns(self.shoulder_turns.first, self.shoulder_axis, upper)

    def back(self, c1: float, s1: float, c2: float, s2: float, v: Vector) -> Vector:
        """
        Turn a root-frame vector back by the root and shoulder rotations, ``R2^T R1^T v``.

        :param c1: Cosine of q1.
        :param s1: Sine of q1.
        :param c2: Cosine of q2.
        :param s2: Sine of q2.
        :param v: The vector.
        :return: The turned vector.
        """
        kx, ky, kz = self.shoulder_turns.first
        vx, vy, vz = v
        along = (kx * vx + ky * vy + kz * vz) * (1.0 - c1)
        vx, vy, vz = (vx * c1 - (ky * vz - kz * vy) * s1 + kx * along,
                      vy * c1 - (kz * vx - kx * vz) * s1 + ky * along,
                      vz * c1 - (kx * vy - ky * vx) * s1 + kz * along)
        kx, ky, kz = self.shoulder_axis
        along = (kx * vx + ky * vy + kz * vz) * (1.0 - c2)
        return (vx * c2 - (ky * vz - kz * vy) * s2 + kx * along,
                vy * c2 - (kz * vx - kx * vz) * s2 + ky * along,
                vz * c2 - (kx * vy - ky * vx) * s2 + kz * along)


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


def measure_geometry(arm: ArmModel, q: FloatArray) -> _Geometry:
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
    return _Geometry(
        to_root=(_vector(to_root[0]), _vector(to_root[1]), _vector(to_root[2])),
        axes=(_vector(axes[0]), _vector(axes[1]), _vector(axes[2]), _vector(axes[3])),
        upper_fixed=_vector(to_roll - along),
        upper_rolled=_vector(below + along),
        forearm=_vector(forearm),
        lengths=(
            float(np.linalg.norm(neutral[2] - neutral[1])),
            float(np.linalg.norm(neutral[3] - neutral[2])),
        ),
        elbow_first=shoulder_miss <= elbow_miss,
        exact=min(shoulder_miss, elbow_miss) < 1e-9,
    )


class _Frame:
    """
    One solve in progress: the angles of q1 .. q4, their ranges, and what happened.

    :param previous: The previous solution of q1 .. q4 [rad].
    :param low: Lower ends of the working ranges [rad].
    :param high: Upper ends of the working ranges [rad].
    :param step: Largest change of a joint in this solve [rad].
    """

    __slots__ = ('previous', 'solution', 'low', 'high', 'step', 'bound', 'reachable',
                 'residual')

    def __init__(self, previous: Sequence[float], low: Sequence[float], high: Sequence[float],
                 step: float) -> None:
        self.previous = previous
        self.solution = list(previous)
        self.low = low
        self.high = high
        self.step = step
        self.bound = False
        self.reachable = True
        self.residual = 0.0

    def take(self, slot: int, value: float) -> float:
        """
        Store a joint's solution, clamped into its range for this solve, and return it.

        The range is the working range within ``step`` of the previous value (a previous value
        outside the working range comes back by ``step``, as in the joint recovery).
        """
        previous, step = self.previous[slot], self.step
        if (self.low[slot] <= value <= self.high[slot]
                and previous - step <= value <= previous + step):
            self.solution[slot] = value
            return value
        # min(max(low, down), up) and max(min(high, up), down), written out.
        low, high = self.low[slot], self.high[slot]
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
            self.bound = True
        self.solution[slot] = value
        return value

    def held(self, slot: int) -> bool:
        """Tell whether a joint's stored value is on an end of its range for this solve."""
        value, previous, step = self.solution[slot], self.previous[slot], self.step
        return value in (min(max(self.low[slot], previous - step), previous + step),
                         max(min(self.high[slot], previous + step), previous - step))


def _nearest(value: float, previous: float, low: float, high: float) -> tuple[float, float]:
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


def _cheaper(first: float, second: float, previous: float, low: float, high: float) -> float:
    """Return the cheaper of two solutions of one joint, each at its :func:`_nearest` turn."""
    # _nearest, written out for an angle inside the range.
    near_first = previous + (first - previous + _PI) % _TWO_PI - _PI
    if low <= near_first <= high:
        cost = (near_first - previous) * (near_first - previous)
    else:
        near_first, cost = _nearest(first, previous, low, high)
    near_second = previous + (second - previous + _PI) % _TWO_PI - _PI
    if low <= near_second <= high:
        other = (near_second - previous) * (near_second - previous)
    else:
        near_second, other = _nearest(second, previous, low, high)
    return near_second if other < cost else near_first


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
        self._low = tuple(float(arm.work_lower[p]) for p in self._positions)
        self._high = tuple(float(arm.work_upper[p]) for p in self._positions)
        self._step = config.recovery.max_step
        self._tolerance = config.iteration.tolerance
        neutral = arm.neutral.tolist()
        self._held_values = tuple(neutral[position] for position in self._held)
        self._geometry = measure_geometry(arm, arm.neutral)
        # Per solve: the four solved joints read off the warm start in one call, and one frame
        # (reset at the start of each solve) rather than a new one.
        self._pick = itemgetter(*self._positions)
        self._frame = _Frame((0.0, 0.0, 0.0, 0.0), self._low, self._high, self._step)

    @property
    def geometry(self) -> _Geometry:
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
        geometry = self._geometry
        frame = self._frame
        frame.previous = previous = self._pick(q)
        frame.solution = list(previous)
        frame.bound = False
        frame.reachable = True
        frame.residual = 0.0
        # The unit target directions, in the root frame (turned first: a rotation keeps lengths).
        (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = geometry.to_root
        x, y, z = upper_bone
        ux, uy, uz = a0 * x + a1 * y + a2 * z, b0 * x + b1 * y + b2 * z, c0 * x + c1 * y + c2 * z
        x, y, z = fore_bone
        fx, fy, fz = a0 * x + a1 * y + a2 * z, b0 * x + b1 * y + b2 * z, c0 * x + c1 * y + c2 * z
        length = math.sqrt(ux * ux + uy * uy + uz * uz)
        # Straight down (robot base frame) when a bone has no length, as _normalised.
        upper = (ux / length, uy / length, uz / length) if length >= 1e-12 else (-a2, -b2, -c2)
        length = math.sqrt(fx * fx + fy * fy + fz * fz)
        fore = (fx / length, fy / length, fz / length) if length >= 1e-12 else (-a2, -b2, -c2)
        iterations = 0
        pass_ = self._elbow_first if geometry.elbow_first else self._upper_first
        for iterations in range(1, MAX_PASSES + 1):  # noqa: B007 (read after)
            roll = frame.solution[2]
            pass_(geometry, upper, fore, frame)
            if (
                geometry.exact
                or frame.residual <= self._tolerance
                or abs(frame.solution[2] - roll) < _SETTLED
            ):
                break
        if frame.residual <= self._tolerance:
            termination = Termination.CONVERGED
        elif frame.bound:
            termination = Termination.STALLED
        elif not frame.reachable:
            termination = Termination.UNREACHABLE
        else:
            termination = Termination.MAX_ITERATIONS
        p1, p2, p3, p4 = self._positions
        q[p1], q[p2], q[p3], q[p4] = frame.solution
        # tuple.__new__ straight away: the named tuple's own __new__ is one more Python call.
        return _new_tuple(ArmSolveResult, (
            np.array(q), None, termination, iterations, frame.residual, None, None
        ))

    def _near(self, frame: _Frame, slot: int, value: float) -> float:
        """Return ``value`` at its whole turn nearest the joint's current solution."""
        previous = frame.solution[slot]
        # _nearest's first step; the rest of it only for an angle outside the working range.
        wrapped = previous + (value - previous + _PI) % _TWO_PI - _PI
        if self._low[slot] <= wrapped <= self._high[slot]:
            return wrapped
        return _nearest(value, previous, self._low[slot], self._high[slot])[0]

    def _pair_of(self, frame: _Frame, slot: int, pairs: Sequence[tuple[float, float]],
                 take: bool = True) -> tuple[float, float]:
        """
        Return the cheapest solution pair of joints ``slot``, ``slot + 1`` (see :func:`_nearest`).

        :param take: Also store both, clamped (:meth:`_take`), and return the stored values.
        """
        solution, low, high = frame.solution, self._low, self._high
        first, second = solution[slot], solution[slot + 1]
        low_a, high_a, low_b, high_b = low[slot], high[slot], low[slot + 1], high[slot + 1]
        best = (0.0, 0.0)
        best_cost = math.inf
        for a, b in pairs:
            # _nearest, written out for an angle inside its range.
            near_a = first + (a - first + _PI) % _TWO_PI - _PI
            if low_a <= near_a <= high_a:
                cost_a = (near_a - first) * (near_a - first)
            else:
                near_a, cost_a = _nearest(a, first, low_a, high_a)
            near_b = second + (b - second + _PI) % _TWO_PI - _PI
            if low_b <= near_b <= high_b:
                cost_b = (near_b - second) * (near_b - second)
            else:
                near_b, cost_b = _nearest(b, second, low_b, high_b)
            if cost_a + cost_b < best_cost:
                best, best_cost = (near_a, near_b), cost_a + cost_b
        if not take:
            return best
        return frame.take(slot, best[0]), frame.take(slot + 1, best[1])

    def _point_upper_arm(self, geometry: _Geometry, upper: Vector, frame: _Frame) -> None:
        """Put the upper arm on its target with q1, q2, the roll as it is."""
        pairs, reachable = geometry.upper_turns_for(frame.solution[2]).solve(upper)
        frame.reachable &= reachable
        self._shoulder(geometry, upper, frame, pairs, upper)

    def _shoulder(self, geometry: _Geometry, upper: Vector, frame: _Frame,
                  pairs: Sequence[tuple[float, float]], aim: Vector) -> tuple[float, float]:
        """
        Take the cheapest (q1, q2) pair of subproblem 2, minding the root's singularity.

        When the vector subproblem 2 aimed along the root axis (``aim``), q1 is not defined by
        it: between :data:`STRAIGHT_SINES` (sine of the angle between them) q1 moves towards
        the solved value by the weight, and q2 points the upper arm for that q1. When a bound
        holds q2, q1 points the upper arm (both by subproblem 1, the closest shape the bound
        allows; q1 is again weighted by how far the upper arm is from the root axis).
        """
        wanted = self._pair_of(frame, 0, pairs, take=False)
        w1, w2 = geometry.shoulder_turns.first, geometry.shoulder_axis
        start = frame.solution[0]
        cosine = w1[0] * aim[0] + w1[1] * aim[1] + w1[2] * aim[2]
        weight = 1.0 if 1.0 - cosine * cosine >= _SOLVED_SQUARED else _weight(cosine)
        if weight < 1.0:
            frame.bound = True
            q1 = frame.take(0, start + weight * (wanted[0] - start))
        else:
            q1 = frame.take(0, wanted[0])
        # Subproblem 1 needs the upper arm's direction only, not its length.
        if q1 != wanted[0]:
            arm = geometry.upper(frame.solution[2])
            seen = _turn(w1, math.cos(q1), -math.sin(q1), upper)
            return q1, frame.take(1, self._near(frame, 1, _angle_about(w2, arm, seen)))
        q2 = frame.take(1, wanted[1])
        if q2 == wanted[1]:
            return q1, q2
        arm = geometry.upper(frame.solution[2])
        turned = _turn(w2, math.cos(q2), math.sin(q2), arm)
        solved = self._near(frame, 0, _angle_about(w1, turned, upper))
        cosine = w1[0] * upper[0] + w1[1] * upper[1] + w1[2] * upper[2]
        weight = 1.0 if 1.0 - cosine * cosine >= _SOLVED_SQUARED else _weight(cosine)
        return frame.take(0, start + weight * (solved - start)), q2

    def _elbow_first(self, geometry: _Geometry, upper: Vector, fore: Vector, frame: _Frame
                     ) -> None:
        """One pass of the elbow-angle-first closed form (roll axis through the shoulder)."""
        solution = frame.solution
        roll_before = solution[2]
        elbow = geometry.elbow if geometry.exact else geometry.elbow_seen(roll_before)
        ux, uy, uz = upper
        fx, fy, fz = fore
        cosine = ux * fx + uy * fy + uz * fz
        # Elbow: the angle between the upper arm seen from the roll joint and the forearm.
        vx, vy, vz, offset, radius, middle, on_roll, on_normal = elbow
        ratio = (cosine - offset) / radius if radius > 1e-12 else 0.0
        if abs(ratio) > 1.0 + 1e-12:
            frame.reachable = False
        half = math.acos(max(-1.0, min(1.0, ratio)))
        wanted = _cheaper(middle + half, middle - half, solution[3], self._low[3],
                          self._high[3])
        q4 = frame.take(3, wanted)
        weight = 1.0 if 1.0 - cosine * cosine >= _SOLVED_SQUARED else _weight(cosine)
        if (q4 != wanted and not geometry.exact
                and self._elbow_angle_by_roll(geometry, upper, fore, frame)):
            # The elbow is on a bound and the roll axis misses the shoulder: the roll keeps the
            # elbow angle as close as it can, and q1, q2 point the upper arm for it.
            self._point_upper_arm(geometry, upper, frame)
            self._finish(geometry, upper, fore, frame, fixed_roll=True)
            return
        c4, s4 = math.cos(q4), math.sin(q4)
        along, across, turned = geometry.fore_along, geometry.fore_across, geometry.fore_turned
        ax = along[0] + c4 * across[0] + s4 * turned[0]
        ay = along[1] + c4 * across[1] + s4 * turned[1]
        az = along[2] + c4 * across[2] + s4 * turned[2]
        if weight > 0.0:
            # The rotation taking the arm's frame (upper arm, forearm) onto the target's; the
            # image of the roll axis, which the roll leaves in place, gives q1, q2.
            # The arm's frame is (v, e2, e3): e2 the forearm's unit part across v, e3 = v x e2;
            # the target's (upper, g2, g3). The image of x is (v . x) upper + (e2 . x) g2 +
            # (e3 . x) g3, and e3 . x = (v x e2) . x.
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
            wx, wy, wz = geometry.roll
            k, k2, k3 = (on_roll, e2x * wx + e2y * wy + e2z * wz,
                         e3x * wx + e3y * wy + e3z * wz)
            image = (k * ux + k2 * g2x + k3 * g3x, k * uy + k2 * g2y + k3 * g3y,
                     k * uz + k2 * g2z + k3 * g3z)
            pairs, reachable = geometry.shoulder_turns.solve(image)
            frame.reachable &= reachable
            q1, q2 = self._shoulder(geometry, upper, frame, pairs, image)
            exact = geometry.exact and frame.reachable and not frame.bound
            if weight == 1.0 and not exact:
                self._finish(geometry, upper, fore, frame, False, (ax, ay, az))
                return
            # The roll turns the roll axis's normal n onto its image (exact when nothing above
            # was held; else only the value the straight-arm blend starts from).
            nx, ny, nz = geometry.roll_normal
            k, k2, k3 = (on_normal, e2x * nx + e2y * ny + e2z * nz,
                         e3x * nx + e3y * ny + e3z * nz)
            image = (k * ux + k2 * g2x + k3 * g3x, k * uy + k2 * g2y + k3 * g3y,
                     k * uz + k2 * g2z + k3 * g3z)
            bx, by, bz = geometry.back(math.cos(q1), math.sin(q1), math.cos(q2), math.sin(q2),
                                       image)
            solved = self._near(frame, 2, math.atan2(
                wx * (ny * bz - nz * by) + wy * (nz * bx - nx * bz) + wz * (nx * by - ny * bx),
                nx * bx + ny * by + nz * bz,
            ))
            if weight == 1.0:
                frame.take(2, solved)
                if not frame.bound:
                    frame.residual = 0.0
                    return
                self._finish(geometry, upper, fore, frame, True, (ax, ay, az))
                return
        else:
            solved = roll_before
        # Nearly straight: the roll (its plane undefined) moves towards the solved value by the
        # weight; q1, q2 point the upper arm with it. If a bound keeps them from it, the roll
        # (which swings the elbow's offset) is solved after all: the target then defines it.
        frame.bound = True
        frame.take(2, roll_before + weight * (solved - roll_before))
        self._point_upper_arm(geometry, upper, frame)
        self._finish(geometry, upper, fore, frame, not (frame.held(0) or frame.held(1)),
                     (ax, ay, az))

    def _upper_first(self, geometry: _Geometry, upper: Vector, fore: Vector, frame: _Frame
                     ) -> None:
        """One pass of the upper-arm-first closed form (roll axis through the elbow)."""
        roll_before = frame.solution[2]
        self._point_upper_arm(geometry, upper, frame)
        q1, q2 = frame.solution[0], frame.solution[1]
        seen = geometry.back(math.cos(q1), math.sin(q1), math.cos(q2), math.sin(q2), fore)
        pairs, reachable = geometry.forearm_turns.solve(seen)
        frame.reachable &= reachable
        q3, q4 = self._pair_of(frame, 2, pairs, take=False)
        roll = geometry.roll
        weight = _weight(dot(roll, seen))
        if weight < 1.0:
            # The forearm nearly along the roll axis: the roll moves towards the solved value by
            # the weight, and the elbow brings the forearm closest for that roll.
            frame.bound = True
            q3 = frame.take(2, roll_before + weight * (q3 - roll_before))
            local = _turn(roll, math.cos(q3), -math.sin(q3), seen)
            w4, forearm = geometry.elbow_axis, geometry.forearm
            q4 = self._near(frame, 3, _angle_about(w4, forearm, local))
        else:
            frame.take(2, q3)
        held = frame.take(3, q4) != q4
        if held and self._elbow_angle_by_roll(geometry, upper, fore, frame):
            # The elbow is on a bound: the roll, which turns the elbow's offset, keeps the
            # elbow angle as close as it can (what Pose Accuracy scores, as in the recovery),
            # and q1, q2 point the upper arm again.
            self._point_upper_arm(geometry, upper, frame)
            self._finish(geometry, upper, fore, frame, fixed_roll=True)
            return
        if geometry.exact and frame.reachable and not frame.bound:
            frame.residual = 0.0
            return
        self._finish(geometry, upper, fore, frame, fixed_roll=weight < 1.0)

    def _elbow_angle_by_roll(self, geometry: _Geometry, upper: Vector, fore: Vector,
                             frame: _Frame) -> bool:
        """
        Set the roll that brings the elbow angle closest to the target's, the elbow as it is.

        Seen from the roll joint the upper arm is ``rolled + R(w3, -q3) fixed``; its dot product
        with the forearm is ``a + b cos(q3) + c sin(q3)``.

        :return: Whether the roll changes the elbow angle at all (it does not when the roll
            axis passes through the shoulder).
        """
        q4 = frame.solution[3]
        c4, s4 = math.cos(q4), math.sin(q4)
        along, across, turned = geometry.fore_along, geometry.fore_across, geometry.fore_turned
        arm_fore = _combine(along, 1.0, across, c4, turned, s4)
        fixed = geometry.upper_fixed
        b = dot(fixed, arm_fore)
        c = -dot(cross(geometry.roll, fixed), arm_fore)
        radius = math.hypot(b, c)
        if radius < 1e-9:
            return False
        seen = _add(geometry.upper_rolled, fixed)
        wanted = dot(upper, fore) * math.sqrt(dot(seen, seen))
        ratio = max(-1.0, min(1.0, (wanted - dot(geometry.upper_rolled, arm_fore)) / radius))
        middle, half = math.atan2(c, b), math.acos(ratio)
        frame.take(2, _cheaper(middle + half, middle - half, frame.solution[2], self._low[2],
                               self._high[2]))
        return True

    def _finish(self, geometry: _Geometry, upper: Vector, fore: Vector, frame: _Frame,
                fixed_roll: bool, arm_fore: Vector | None = None) -> None:
        """
        Solve the roll last (unless ``fixed_roll``) and measure the residual.

        With q1, q2 and q4 set and the targets turned back by q1, q2, the roll turns the rolling
        part h of the upper arm (``h + fixed``) and the forearm f about w3: the angle that brings
        both closest to their targets (weighted by the landmark lengths) is subproblem 1 over
        two pairs. The residual ``sqrt(L_u^2 |du|^2 + L_f^2 |df|^2)`` follows from the same
        sums, each ``p . R(w3, q3) t = along + cos(q3) across + sin(q3) turned``.

        :param arm_fore: The arm's unit forearm ``R(w4, q4) f`` for the stored q4, when the caller
            has it already.
        """
        q1, q2, q3, q4 = frame.solution
        c1, s1, c2, s2 = math.cos(q1), math.sin(q1), math.cos(q2), math.sin(q2)
        # Both targets turned back, R2^T R1^T (as _Geometry.back, written out for the two).
        kx, ky, kz = geometry.shoulder_turns.first
        jx, jy, jz = geometry.shoulder_axis
        vx, vy, vz = upper
        part = (kx * vx + ky * vy + kz * vz) * (1.0 - c1)
        vx, vy, vz = (vx * c1 - (ky * vz - kz * vy) * s1 + kx * part,
                      vy * c1 - (kz * vx - kx * vz) * s1 + ky * part,
                      vz * c1 - (kx * vy - ky * vx) * s1 + kz * part)
        part = (jx * vx + jy * vy + jz * vz) * (1.0 - c2)
        bux = vx * c2 - (jy * vz - jz * vy) * s2 + jx * part
        buy = vy * c2 - (jz * vx - jx * vz) * s2 + jy * part
        buz = vz * c2 - (jx * vy - jy * vx) * s2 + jz * part
        vx, vy, vz = fore
        part = (kx * vx + ky * vy + kz * vz) * (1.0 - c1)
        vx, vy, vz = (vx * c1 - (ky * vz - kz * vy) * s1 + kx * part,
                      vy * c1 - (kz * vx - kx * vz) * s1 + ky * part,
                      vz * c1 - (kx * vy - ky * vx) * s1 + kz * part)
        part = (jx * vx + jy * vy + jz * vz) * (1.0 - c2)
        bfx = vx * c2 - (jy * vz - jz * vy) * s2 + jx * part
        bfy = vy * c2 - (jz * vx - jx * vz) * s2 + jy * part
        bfz = vz * c2 - (jx * vy - jy * vx) * s2 + jz * part
        if arm_fore is None:
            c4, s4 = math.cos(q4), math.sin(q4)
            along, across, turned = (geometry.fore_along, geometry.fore_across,
                                     geometry.fore_turned)
            fx = along[0] + c4 * across[0] + s4 * turned[0]
            fy = along[1] + c4 * across[1] + s4 * turned[1]
            fz = along[2] + c4 * across[2] + s4 * turned[2]
        else:
            fx, fy, fz = arm_fore
        wx, wy, wz = geometry.roll
        hx, hy, hz = geometry.upper_rolled
        ox, oy, oz = geometry.upper_fixed
        tx, ty, tz = geometry.roll_cross_rolled
        # (R h) . b_u and (R f) . b_f: along, across, turned parts.
        h_along = geometry.rolled_on_roll * (wx * bux + wy * buy + wz * buz)
        h_across = hx * bux + hy * buy + hz * buz - h_along
        h_turned = tx * bux + ty * buy + tz * buz
        f_along = (wx * fx + wy * fy + wz * fz) * (wx * bfx + wy * bfy + wz * bfz)
        f_across = fx * bfx + fy * bfy + fz * bfz - f_along
        f_turned = (wx * (fy * bfz - fz * bfy) + wy * (fz * bfx - fx * bfz)
                    + wz * (fx * bfy - fy * bfx))
        length_u, length_f = geometry.upper_length, geometry.forearm_length
        fixed_across, fixed_turned = geometry.fixed_terms
        if not fixed_roll:
            # |R h + fixed - L_u b_u|^2 + L_f^2 |R f - b_f|^2, to be maximised over q3.
            cosine = length_u * h_across - fixed_across + length_f * length_f * f_across
            sine = length_u * h_turned - fixed_turned + length_f * length_f * f_turned
            q3 = frame.take(2, self._near(frame, 2, math.atan2(sine, cosine)))
        c3, s3 = math.cos(q3), math.sin(q3)
        upper_squared = geometry.upper_squared + 2.0 * (c3 * fixed_across + s3 * fixed_turned)
        upper_dot = (h_along + c3 * h_across + s3 * h_turned + ox * bux + oy * buy + oz * buz
                     ) / math.sqrt(upper_squared)
        fore_dot = f_along + c3 * f_across + s3 * f_turned
        frame.residual = math.sqrt(max(0.0, 2.0 * (
            length_u * length_u * (1.0 - upper_dot) + length_f * length_f * (1.0 - fore_dot)
        )))


def _add(a: Vector, b: Vector) -> Vector:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def _normalised(x: float, y: float, z: float) -> Vector:
    """Return ``(x, y, z)`` scaled to unit length (straight down if it has none)."""
    length = math.sqrt(x * x + y * y + z * z)
    if length < 1e-12:
        return _DOWN
    return (x / length, y / length, z / length)


def _floats(point: FloatArray | Sequence[float]) -> list[float]:
    values: list[float] = point.tolist() if isinstance(point, np.ndarray) else list(point)
    return values
