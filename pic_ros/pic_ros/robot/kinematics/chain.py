"""
Serial kinematic chains cut out of a :class:`~pic_ros.robot.kinematics.robot_model.RobotModel`.

A chain runs from a base link to a tip link. Its coordinates ``q`` are the positions of its
movable joints (revolute, continuous, prismatic), in path order, in [rad] or [m]. Fixed joints are
folded into constant transforms when the chain is built, so the per-frame forward kinematics only
multiplies one constant and one joint-motion matrix per movable joint. Each joint frame is also
rotated, once, so that its axis is the local z axis; the per-frame product is then written out in
plain floats, which for 3 x 4 transforms is several times faster than numpy calls.

All positions are in the chain's base-link frame, in [m].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError
from pic_ros.robot.kinematics.compiled import Affine, Vector
from pic_ros.robot.kinematics.robot_model import Joint, JointType, RobotModel
from pic_ros.robot.kinematics.transforms import (
    affine,
    frame_point,
    freeze,
    IDENTITY,
    rotation_taking_z_to,
    skew,
)

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class KinematicChain:
    """
    A serial chain from ``base_link`` to ``tip_link``.

    Build it with :meth:`from_model`. The chain is immutable; its arrays are read-only.

    :param base_link: Link whose frame every result is expressed in.
    :param tip_link: Last link of the chain.
    :param joints: Every joint along the path, fixed ones included, base first.
    """

    base_link: str
    tip_link: str
    joints: tuple[Joint, ...]
    movable_joints: tuple[Joint, ...] = field(init=False)
    joint_names: tuple[str, ...] = field(init=False)
    lower: FloatArray = field(init=False)
    upper: FloatArray = field(init=False)
    velocity: FloatArray = field(init=False)
    _axes: FloatArray = field(init=False, repr=False)
    _skews: tuple[tuple[FloatArray, FloatArray], ...] = field(init=False, repr=False)
    _prismatic: tuple[bool, ...] = field(init=False, repr=False)
    _pre_z: tuple[Affine, ...] = field(init=False, repr=False)
    _post_z: Affine = field(init=False, repr=False)

    def __post_init__(self) -> None:
        movable = tuple(joint for joint in self.joints if joint.joint_type.is_movable)
        pre: list[FloatArray] = []
        accumulated = np.eye(4)
        for joint in self.joints:
            accumulated = accumulated @ joint.origin
            if joint.joint_type.is_movable:
                pre.append(freeze(accumulated))
                accumulated = np.eye(4)
        limits = [joint.limits for joint in movable]
        if any(limit is None for limit in limits):
            raise ChainError('every movable joint of a chain needs limits')
        lower = [limit.lower for limit in limits if limit is not None]
        upper = [limit.upper for limit in limits if limit is not None]
        velocity = [limit.velocity for limit in limits if limit is not None]
        skews = []
        for joint in movable:
            k = skew(joint.axis)
            skews.append((freeze(k), freeze(k @ k)))
        set_field = object.__setattr__
        set_field(self, 'movable_joints', movable)
        set_field(self, 'joint_names', tuple(joint.name for joint in movable))
        set_field(self, 'lower', freeze(lower))
        set_field(self, 'upper', freeze(upper))
        set_field(self, 'velocity', freeze(velocity))
        set_field(self, '_axes', freeze([joint.axis for joint in movable]))
        pre_z: list[Affine] = []
        undo = np.eye(4)
        for index, joint in enumerate(movable):
            align = np.eye(4)
            align[:3, :3] = rotation_taking_z_to(joint.axis)
            pre_z.append(affine(undo @ pre[index] @ align))
            undo = np.eye(4)
            undo[:3, :3] = align[:3, :3].T
        set_field(self, '_pre_z', tuple(pre_z))
        set_field(self, '_post_z', affine(undo @ accumulated))
        set_field(self, '_skews', tuple(skews))
        set_field(
            self, '_prismatic', tuple(joint.joint_type is JointType.PRISMATIC for joint in movable)
        )

    @classmethod
    def from_model(cls, model: RobotModel, base_link: str, tip_link: str) -> KinematicChain:
        """
        Cut the chain ``base_link`` -> ``tip_link`` out of a robot model.

        :param model: Robot model from :func:`~pic_ros.robot.kinematics.load_robot_model`.
        :param base_link: First link.
        :param tip_link: Last link.
        :return: The chain.
        :raises ChainError: If the links are not connected base -> tip.
        """
        return cls(
            base_link=base_link, tip_link=tip_link, joints=model.joint_path(base_link, tip_link)
        )

    @property
    def dof(self) -> int:
        """Return the number of movable joints."""
        return len(self.movable_joints)

    def index(self, joint_name: str) -> int:
        """
        Return the coordinate index of a movable joint.

        :param joint_name: Name of a movable joint of this chain.
        :return: Its index in ``q``.
        :raises ChainError: If the joint is not a movable joint of the chain.
        """
        try:
            return self.joint_names.index(joint_name)
        except ValueError as err:
            raise ChainError(
                f'{joint_name!r} is not a movable joint of chain {self.base_link} -> '
                f'{self.tip_link}; joints: {", ".join(self.joint_names)}'
            ) from err

    def _check(self, q: npt.ArrayLike) -> FloatArray:
        q = np.asarray(q, dtype=float)
        if q.shape != (self.dof,):
            raise ChainError(f'expected {self.dof} joint values, got shape {q.shape}')
        return q

    def _motion(self, index: int, value: float) -> FloatArray:
        motion = np.eye(4)
        if self._prismatic[index]:
            motion[:3, 3] = self._axes[index] * value
        else:
            k, k2 = self._skews[index]
            motion[:3, :3] += np.sin(value) * k + (1.0 - np.cos(value)) * k2
        return motion

    def affine_arrays(self) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
        """
        Return what :meth:`prefix_positions_and_axes` computes from, as arrays (for kernels).

        :return: ``(pre_z, post_z, prismatic)``: per movable joint, the constant transform
            before it turned so that its axis is z, as the 12 numbers of its top 3 x 4 block
            row-major, shape (dof, 12); the last joint's frame to the tip link, shape (12,);
            per movable joint, whether it slides, shape (dof,).
        """
        return (
            np.array(self._pre_z, dtype=float).reshape(-1, 12),
            np.array(self._post_z, dtype=float),
            np.array(self._prismatic, dtype=bool),
        )

    def positions_and_axes(self, q: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """
        Compute the origin and axis of every movable joint, and the tip position.

        :param q: Joint coordinates, shape (dof,), [rad] or [m].
        :return: ``(positions, axes)``: positions of the movable joint origins followed by the
            tip link origin, shape (dof + 1, 3), [m]; unit joint axes, shape (dof, 3); both in
            the base-link frame.
        :raises ChainError: If ``q`` has the wrong shape.
        """
        q = self._check(q)
        positions, axes = self.prefix_positions_and_axes(q.tolist(), self.dof)
        return np.array(positions), np.array(axes)

    def prefix_positions_and_axes(
        self, q: Sequence[float], count: int
    ) -> tuple[list[Vector], list[Vector]]:
        """
        Compute joint origins and axes of the first ``count`` movable joints (the hot path).

        No validation is done: this is the per-frame inner loop of the solvers.

        :param q: Joint coordinates, at least ``count`` values, [rad] or [m].
        :param count: Number of movable joints to evaluate, ``0 <= count <= dof``.
        :return: ``(positions, axes)`` as lists of 3-tuples in the base-link frame: the origins
            of joints ``0 .. count - 1`` then, when ``count == dof``, the tip link origin [m];
            and the ``count`` unit joint axes.
        """
        positions: list[Vector] = []
        axes: list[Vector] = []
        pose = IDENTITY
        pre_z = self._pre_z
        prismatic = self._prismatic
        # joint_frame written inline (the same arithmetic in the same order): a function call and
        # a tuple per joint cost as much as the products themselves.
        r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz = pose
        for index in range(count):
            a00, a01, a02, ax, a10, a11, a12, ay, a20, a21, a22, az = pre_z[index]
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
            positions.append((ox, oy, oz))
            axes.append((n02, n12, n22))
            value = q[index]
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
        if count == self.dof:
            pose = (r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz)
            positions.append(frame_point(pose, self._post_z))
        return positions, axes

    def joint_positions(self, q: npt.ArrayLike) -> FloatArray:
        """
        Compute the origins of the movable joints and of the tip link.

        :param q: Joint coordinates, shape (dof,), [rad] or [m].
        :return: Positions, shape (dof + 1, 3), [m], base-link frame; the last row is the tip.
        :raises ChainError: If ``q`` has the wrong shape.
        """
        return self.positions_and_axes(q)[0]

    def link_transforms(self, q: npt.ArrayLike) -> dict[str, FloatArray]:
        """
        Compute the pose of every link of the chain (the slow, complete form).

        :param q: Joint coordinates, shape (dof,), [rad] or [m].
        :return: Transform base <- link, shape (4, 4), for the base link and every link on the
            path, keyed by link name.
        :raises ChainError: If ``q`` has the wrong shape.
        """
        q = self._check(q)
        transforms = {self.base_link: np.eye(4)}
        transform = np.eye(4)
        index = 0
        for joint in self.joints:
            transform = transform @ joint.origin
            if joint.joint_type.is_movable:
                transform = transform @ self._motion(index, float(q[index]))
                index += 1
            transforms[joint.child] = transform.copy()
        return transforms

    def joint_origin_transforms(self, q: npt.ArrayLike) -> dict[str, FloatArray]:
        """
        Compute the frame of every joint of the chain (fixed joints included), before its motion.

        :param q: Joint coordinates, shape (dof,), [rad] or [m].
        :return: Transform base <- joint frame, shape (4, 4), keyed by joint name.
        :raises ChainError: If ``q`` has the wrong shape.
        """
        q = self._check(q)
        frames: dict[str, FloatArray] = {}
        transform = np.eye(4)
        index = 0
        for joint in self.joints:
            transform = transform @ joint.origin
            frames[joint.name] = transform.copy()
            if joint.joint_type.is_movable:
                transform = transform @ self._motion(index, float(q[index]))
                index += 1
        return frames

    def within_limits(self, q: npt.ArrayLike, tolerance: float = 1e-9) -> bool:
        """
        Tell whether every coordinate is inside its position limits.

        :param q: Joint coordinates, shape (dof,).
        :param tolerance: Allowed excess [rad] or [m] (for rounding).
        :return: ``True`` when ``lower - tolerance <= q <= upper + tolerance`` everywhere.
        """
        q = self._check(q)
        return bool(np.all(q >= self.lower - tolerance) and np.all(q <= self.upper + tolerance))
