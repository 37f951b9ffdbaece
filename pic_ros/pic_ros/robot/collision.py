"""
The self-collision model of a robot: capsules on its links, and which pairs may not touch.

:func:`build_collision_model` makes a :class:`CollisionModel` from the robot's files only:

- **shapes**: every ``<collision>`` primitive of the URDF becomes capsules that contain it
  (:func:`~pic_ros.robot.capsules.covering_capsules`); a link with capsules in the robot file's
  ``collision`` section takes those instead, and ``exclude_links`` drops links
  (:mod:`pic_ros.robot.collision_spec`);
- **pairs**: two capsules are checked unless they ride on the same rigid body, their links are at
  most ``adjacent_joints`` movable joints apart in the URDF tree, the file lists the link pair in
  ``ignore_pairs``, or the two links touch at the neutral pose (shapes that overlap by
  construction, such as a first arm link sunk into the body). :attr:`CollisionModel.ignored`
  says why each link pair is left out. A pair closer than the margin at the neutral pose keeps
  part of that distance instead (:meth:`CollisionModel.required`);
- **motion**: the *moving joints* are every arm joint (in arm order) and the torso lift; every
  other joint is held (``locked_joints``, the torso's and the head's neutral values, the
  grippers open, else 0 within its limits). :meth:`CollisionModel.check` places the capsules at
  a configuration and measures every pair; :meth:`CollisionModel.gradients` gives how each
  pair's distance changes with the moving joints (the Jacobian of the closest points).

The same model drives the solvers' avoidance (:mod:`pic_ros.solvers.avoidance`), the trajectory
publisher's guard and ``evaluate``; MuJoCo's collision detection on the URDF is the independent
reference in the tests. Units: metres and radians; positions in the robot base frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import functools
import itertools
import math
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.capsules import Capsule, closest_pairs, covering_capsules, dots
from pic_ros.robot.collision_spec import CollisionSpec, HalfSpace
from pic_ros.robot.kinematics import compiled
from pic_ros.robot.kinematics.compiled import Affine, joint_frame, Pose
from pic_ros.robot.kinematics.robot_model import Joint, JointType, RobotModel
from pic_ros.robot.kinematics.transforms import (
    affine,
    freeze,
    IDENTITY,
    rotation_taking_z_to,
    skew,
    transform_from_xyz_rpy,
)
from urdf_parser_py import urdf as urdf_model
from urdf_parser_py.xml_reflection import core as xml_core

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NEUTRAL_SHARE: Final = 0.5
"""A pair closer than the margin at the neutral pose may come this share of its neutral
distance close, no closer (:meth:`CollisionModel.required`): the neutral pose stays a safe place
to return to, and the pair never touches."""

STATIC: Final = -1
"""Anchor of a capsule that no moving joint moves (fixed to the base frame)."""


class CollisionCheck(NamedTuple):
    """
    Every checked pair at one configuration.

    :param distances: Surface distance of each pair (negative: overlap), shape (p,) [m].
    :param points: Closest points on the first and second capsule of each pair's segments,
        shape (2, p, 3) [m], base frame; set only for the pairs measured exactly (a distance
        below the check's ``exact_within``).
    :param anchors: Anchor frames: rotations (k + 1, 3, 3) and positions (k + 1, 3), row 0 the
        base frame, row ``1 + j`` after moving joint ``j``'s motion.
    :param axes: Unit axes of the moving joints, shape (k, 3), base frame.
    :param origins: Origins of the moving joints, shape (k, 3) [m], base frame.
    :param ends: Both ends of every capsule's segment, shape (c, 2, 3) [m], base frame.
    """

    distances: FloatArray
    points: FloatArray
    anchors: tuple[FloatArray, FloatArray]
    axes: FloatArray
    origins: FloatArray
    ends: FloatArray

    @property
    def minimum(self) -> float:
        """Return the smallest pair distance [m] (inf when no pair is checked)."""
        return float(self.distances.min()) if self.distances.size else math.inf


@dataclass(frozen=True, eq=False)
class CollisionModel:
    """
    Capsules on a robot's links and the pairs that may not touch.

    Build it with :func:`build_collision_model`.

    :param robot: Robot name, for messages.
    :param joints: The moving joints, in vector order: each arm's joints, then the torso lift.
    :param arm_slices: Where each arm's joints sit in that vector.
    :param torso_index: Where the torso lift sits, or None.
    :param neutral: The neutral configuration, shape (k,).
    :param lower: Lower position limits of the moving joints, shape (k,).
    :param upper: Upper position limits, shape (k,).
    :param capsules: The capsules, in their links' frames.
    :param anchor: Per capsule, the moving joint whose motion carries it, or :data:`STATIC`.
    :param local: Per capsule, both ends in its anchor's frame, shape (c, 2, 3) [m].
    :param radii: Per capsule, its radius, shape (c,) [m].
    :param pairs: Checked capsule pairs, shape (p, 2).
    :param ignored: Link pairs left out, with the reason.
    :param neutral_distances: Per checked pair, the distance of its two links at the neutral
        pose (the closest of their capsule pairs) [m].
    :param parents: Per moving joint, the moving joint before it on its path from the base, or
        :data:`STATIC`.
    :param order: The moving joints, each after its parent (the order frames are placed in).
    :param fixed_rows: Per moving joint, the constant transform from its parent anchor's frame
        to its joint frame turned so that its axis is z, as the 12 numbers of its top 3 x 4
        block, row-major.
    :param prismatic: Per moving joint, whether it slides.
    :param prismatic_mask: The same as an array, shape (k,).
    :param carries: ``carries[i, j]``: moving joint ``j`` moves anchor frame ``i`` (itself
        included), shape (k, k).
    :param moved_by: ``carries`` with a last row of False for :data:`STATIC` (index -1),
        shape (k + 1, k).
    :param body_anchor: Per link with capsules (a *body* of the broad phase), its anchor.
    :param body_rows: The same plus one: the body's row in the anchor frames.
    :param anchor_rows: Per capsule, its anchor plus one: its row in the anchor frames.
    :param local_rows: ``local`` as rows of 3, shape (2 c, 3) [m].
    :param end_picks: Where each capsule end's coordinates lie in ``local_rows`` times every
        anchor rotation transposed side by side (shape (2 c, 3 (k + 1)), flattened), shape
        (6 c,).
    :param body_first: The first body of each body pair (a copy of ``body_pairs[:, 0]``).
    :param body_second: The second body of each body pair.
    :param pair_first: The first capsule of each checked pair (``pairs[:, 0]``).
    :param pair_second: The second capsule of each checked pair.
    :param pair_anchors: The anchors of each checked pair's first and of its second capsule,
        shape (2, p).
    :param pair_ends: Per checked pair, the rows of its four segment ends (the first capsule's
        start and end, the second's) in the capsule ends taken as rows of 3, shape (4, p).
    :param body_centre: Per body, the centre of a sphere around its capsules, anchor frame,
        shape (b, 3) [m].
    :param body_radius: Per body, that sphere's radius, shape (b,) [m].
    :param body_pairs: The pairs of bodies that have checked capsule pairs, shape (q, 2).
    :param body_reach: Per body pair, the sum of the two spheres' radii, shape (q,) [m].
    :param pair_body: Per checked capsule pair, its body pair, shape (p,).
    :param pair_reach: Per checked capsule pair, the sum of the radii of the spheres around its
        two capsules (centred on their segments' midpoints), shape (p,) [m].
    """

    robot: str
    joints: tuple[str, ...]
    arm_slices: Mapping[str, slice]
    torso_index: int | None
    neutral: FloatArray
    lower: FloatArray
    upper: FloatArray
    capsules: tuple[Capsule, ...]
    anchor: IntArray
    local: FloatArray
    radii: FloatArray
    pairs: IntArray
    ignored: Mapping[frozenset[str], str]
    neutral_distances: FloatArray
    parents: tuple[int, ...]
    order: tuple[int, ...]
    fixed_rows: tuple[Affine, ...]
    prismatic: tuple[bool, ...]
    prismatic_mask: npt.NDArray[np.bool_]
    carries: npt.NDArray[np.bool_]
    moved_by: npt.NDArray[np.bool_]
    body_anchor: IntArray
    body_rows: IntArray
    anchor_rows: IntArray
    local_rows: FloatArray
    end_picks: IntArray
    body_first: IntArray
    body_second: IntArray
    pair_first: IntArray
    pair_second: IntArray
    pair_anchors: IntArray
    pair_ends: IntArray
    body_centre: FloatArray
    body_radius: FloatArray
    body_pairs: IntArray
    body_reach: FloatArray
    pair_body: IntArray
    pair_reach: FloatArray

    @property
    def dof(self) -> int:
        """Return the number of moving joints."""
        return len(self.joints)

    def required(self, margin: float) -> FloatArray:
        """
        Return the distance each checked pair must keep.

        :param margin: The self-collision margin [m].
        :return: Per pair, ``margin``, or :data:`NEUTRAL_SHARE` of its neutral distance when
            that is smaller, shape (p,) [m].
        """
        return np.minimum(margin, NEUTRAL_SHARE * self.neutral_distances)

    def pair_links(self, index: int) -> tuple[str, str]:
        """
        Return the links of a checked pair.

        :param index: Pair index.
        :return: The two link names.
        """
        first, second = self.pairs[index]
        return self.capsules[first].link, self.capsules[second].link

    def vector(
        self, arms: Mapping[str, npt.ArrayLike], torso: float | None = None
    ) -> FloatArray:
        """
        Assemble a configuration of the moving joints.

        :param arms: Joint values per arm name, each in its arm's joint order; arms not given
            stay at their neutral pose.
        :param torso: Torso lift [m]; None: its neutral value.
        :return: The configuration, shape (k,).
        :raises ConfigError: If an arm is unknown or its values have the wrong length.
        """
        x = self.neutral.copy()
        for name, values in arms.items():
            where = self.arm_slices.get(name)
            if where is None:
                raise ConfigError(f'{self.robot} has no arm {name!r}')
            row = np.asarray(values, dtype=float)
            if row.shape != (where.stop - where.start,):
                raise ConfigError(f'{name}: expected {where.stop - where.start} joint values')
            x[where] = row
        if torso is not None and self.torso_index is not None:
            x[self.torso_index] = torso
        return x

    def frames(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """
        Place the anchor frames of a configuration.

        Each anchor frame is its joint's frame turned so that the joint axis is its z axis,
        after the joint's motion (:func:`~pic_ros.robot.kinematics.transforms.joint_frame`).

        :param x: Moving-joint values, shape (k,), [rad] or [m].
        :return: ``(rotations, positions, axes, origins)``: anchor rotations (k + 1, 3, 3) and
            positions (k + 1, 3) [m] (row 0 the base frame), the joints' unit axes (k, 3) and
            origins (k, 3) [m], base frame.
        """
        poses: list[Pose] = [IDENTITY] * (self.dof + 1)
        values = x.tolist() if isinstance(x, np.ndarray) else list(x)
        fixed, prismatic, parents = self.fixed_rows, self.prismatic, self.parents
        for index in self.order:
            poses[index + 1], _ = joint_frame(
                poses[parents[index] + 1], fixed[index], values[index], prismatic[index]
            )
        table = np.fromiter(itertools.chain.from_iterable(poses), float, 12 * len(poses))
        table = table.reshape(-1, 12)
        rotations = table[:, :9].reshape(-1, 3, 3)
        positions = table[:, 9:]
        axes = rotations[1:, :, 2]
        if not any(self.prismatic):  # every joint turns about its frame's origin
            return rotations, positions, axes, positions[1:]
        origins = positions[1:] - axes * np.where(self.prismatic_mask, x, 0.0)[:, None]
        return rotations, positions, axes, origins

    def placed(
        self, x: FloatArray, capsules: npt.ArrayLike | None = None
    ) -> tuple[FloatArray, tuple[FloatArray, ...]]:
        """
        Place capsules at a configuration.

        :param x: Moving-joint values, shape (k,).
        :param capsules: Indices of the capsules to place; None: all.
        :return: ``(ends, frames)``: both ends of each capsule asked for, shape (n, 2, 3) [m],
            base frame; and what :meth:`frames` returned.
        """
        frames = self.frames(x)
        rotations, positions = frames[0], frames[1]
        chosen = slice(None) if capsules is None else np.asarray(capsules, dtype=np.int64)
        rows = self.anchor[chosen] + 1
        ends = np.matmul(self.local[chosen], rotations[rows].transpose(0, 2, 1))
        return ends + positions[rows][:, None, :], frames

    def check(self, x: npt.ArrayLike, exact_within: float = math.inf) -> CollisionCheck:
        """
        Measure every checked pair at a configuration.

        Two broad phases first bound each pair from below: by the spheres around its two links,
        then by the spheres around its two capsules. A pair bounded ``exact_within`` apart or
        more gets the larger bound as its distance (and no closest points); the others are
        measured exactly.

        With numba installed, one compiled call does it all
        (:mod:`~pic_ros.robot.kinematics.compiled`; the same numbers to rounding).

        :param x: Moving-joint values, shape (k,) (:meth:`vector`).
        :param exact_within: Pairs are measured exactly below this distance [m].
        :return: The distances, the closest points and the frames (for :meth:`gradients`).
        """
        if compiled.collision_check is not None:
            distances, points, rotations, positions, axes, origins, ends = (
                compiled.collision_check(
                    np.array(x, dtype=np.float64), *self.compiled_arguments, float(exact_within)
                )
            )
            return CollisionCheck(distances, points, (rotations, positions), axes, origins, ends)
        return self.check_numpy(x, exact_within)

    @functools.cached_property
    def compiled_arguments(self) -> tuple[npt.NDArray[Any], ...]:
        """Return the model's arrays in the order the compiled check takes them (made once)."""
        def ints(values: Any) -> npt.NDArray[np.int64]:
            return np.array(values, dtype=np.int64)

        return (
            np.array(self.fixed_rows, dtype=np.float64).reshape(-1, 12),
            np.array(self.prismatic, dtype=np.bool_), ints(self.parents), ints(self.order),
            ints(self.body_rows), np.array(self.body_centre, dtype=np.float64),
            ints(self.body_first), ints(self.body_second),
            np.array(self.body_reach, dtype=np.float64), ints(self.pair_body),
            ints(self.anchor_rows), np.array(self.local, dtype=np.float64).reshape(-1, 2, 3),
            ints(self.pair_first), ints(self.pair_second),
            np.array(self.pair_reach, dtype=np.float64), np.array(self.radii, dtype=np.float64),
        )

    def check_numpy(self, x: npt.ArrayLike, exact_within: float = math.inf) -> CollisionCheck:
        """
        Measure every checked pair as :meth:`check` does, with numpy alone.

        What :meth:`check` runs without numba, and the reference its compiled path is tested
        against.

        :param x: Moving-joint values, shape (k,).
        :param exact_within: Pairs are measured exactly below this distance [m].
        :return: The distances, the closest points and the frames.
        """
        values = np.asarray(x, dtype=float)
        rotations, positions, axes, origins = self.frames(values)
        rows = self.body_rows
        # take(): the same rows as fancy indexing, several times faster
        centres = np.matmul(rotations.take(rows, axis=0), self.body_centre[:, :, None])[:, :, 0]
        centres += positions.take(rows, axis=0)
        between = centres.take(self.body_first, axis=0) - centres.take(self.body_second, axis=0)
        bounds = np.sqrt(dots(between, between)) - self.body_reach
        distances = bounds.take(self.pair_body)
        points = np.empty((2, len(self.pairs), 3))  # set for the pairs measured exactly
        near = (distances < exact_within).nonzero()[0]
        if not near.size:
            return CollisionCheck(
                distances, points, (rotations, positions), axes, origins,
                np.zeros((len(self.capsules), 2, 3)),
            )
        # every capsule at once: fewer calls than picking the ones the near pairs use; one
        # product of every end with every anchor rotation, then each end's own (far cheaper
        # than a 2 x 3 by 3 x 3 product per capsule, and the same sums)
        anchors = self.anchor_rows
        turned = self.local_rows @ rotations.transpose(2, 0, 1).reshape(3, -1)
        ends = turned.reshape(-1).take(self.end_picks).reshape(-1, 2, 3)
        ends += positions.take(anchors, axis=0)[:, None, :]
        first, second = self.pair_first.take(near), self.pair_second.take(near)
        middles = ends[:, 0] + ends[:, 1]  # twice the midpoints
        between = middles.take(first, axis=0) - middles.take(second, axis=0)
        apart = 0.5 * np.sqrt(dots(between, between))
        apart -= self.pair_reach.take(near)
        distances[near] = np.maximum(distances.take(near), apart)
        close = apart < exact_within
        if not close.all():
            near, first, second = near[close], first[close], second[close]
        if near.size:
            gap, closest = closest_pairs(
                ends.reshape(-1, 3).take(self.pair_ends.take(near, axis=1), axis=0)
            )
            distances[near] = gap - self.radii.take(first) - self.radii.take(second)
            points[:, near] = closest
        return CollisionCheck(
            distances, points, (rotations, positions), axes, origins, ends
        )

    def point_jacobian(
        self, check: CollisionCheck, anchor: int, point: FloatArray
    ) -> FloatArray:
        """
        Return how a point carried by an anchor frame moves with the moving joints.

        :param check: A check at the configuration (its joint axes and origins).
        :param anchor: The moving joint carrying the point, or :data:`STATIC`.
        :param point: The point, shape (3,) [m], base frame.
        :return: Jacobian, shape (3, k) [m/rad] or [m/m].
        """
        jacobian = np.zeros((3, self.dof))
        if anchor == STATIC:
            return jacobian
        moving = self.carries[anchor]
        axes = check.axes[moving]
        offset = point - check.origins[moving]
        turned = _cross(axes, offset)
        sliding = self.prismatic_mask[moving]
        jacobian[:, moving] = np.where(sliding[:, None], axes, turned).T
        return jacobian

    def screws(self, check: CollisionCheck) -> FloatArray:
        """
        Return how a point moves with each moving joint, as one matrix.

        A point ``p`` carried by every moving joint moves along a unit direction ``n`` by
        ``concat(p x n, n) @ screws`` per unit of each joint: column ``j`` is ``(a, o x a)``
        for a revolute joint of axis ``a`` through ``o`` (``n . (a x (p - o))``), ``(0, a)``
        for a sliding one.

        :param check: A check at the configuration (its joint axes and origins).
        :return: Shape (6, k), base frame, [m/rad] or [m/m] per metre of ``p``.
        """
        axes = check.axes
        moment = _cross(check.origins, axes)
        if self.prismatic_mask.any():
            sliding = self.prismatic_mask[:, None]
            return np.concatenate((np.where(sliding, 0.0, axes), np.where(sliding, axes, moment)),
                                  axis=1).T
        return np.concatenate((axes, moment), axis=1).T

    def moved_along(
        self,
        screws: FloatArray,
        anchors: IntArray,
        points: FloatArray,
        normals: FloatArray,
    ) -> FloatArray:
        """
        Return how fast points move along directions with each moving joint.

        :param screws: From :meth:`screws` at the configuration.
        :param anchors: Per point, the moving joint carrying it, or :data:`STATIC`, shape (m,).
        :param points: The points, shape (m, 3) [m], base frame.
        :param normals: Per point, a unit direction, shape (m, 3), base frame.
        :return: ``normal . d(point)/dx``, shape (m, k) [m/rad] or [m/m] (0 for the joints
            that do not carry the point).
        """
        rows = np.concatenate((_cross(points, normals), normals), axis=1) @ screws
        return np.where(self.moved_by.take(anchors, axis=0), rows, 0.0)

    def gradients(
        self, check: CollisionCheck, pairs: npt.ArrayLike, screws: FloatArray | None = None
    ) -> FloatArray:
        """
        Return how the distance of some pairs changes with the moving joints.

        Where a pair's segments cross (no direction between the closest points), the direction
        from the second capsule's segment midpoint to the first's is used.

        :param check: The check at the configuration (the pairs measured exactly).
        :param pairs: Pair indices.
        :param screws: :meth:`screws` at the configuration, when already made.
        :return: Gradients, shape (len(pairs), k) [m/rad] or [m/m].
        """
        chosen = np.asarray(pairs, dtype=np.int64)
        sides = check.points.take(chosen, axis=1)  # the closest points on the first capsules,
        normal = sides[0] - sides[1]  # then the second's
        length = np.sqrt((normal * normal).sum(axis=1))  # as np.linalg.norm, fewer calls
        crossing = length < 1e-9
        if crossing.any():  # crossing segments: apart along the line of their midpoints
            first, second = self.pair_first[chosen], self.pair_second[chosen]
            middle = check.ends[first].mean(axis=1) - check.ends[second].mean(axis=1)
            normal[crossing] = middle[crossing]
            length = np.sqrt((normal * normal).sum(axis=1))
            still = length < 1e-9
            normal[still] = (0.0, 0.0, 1.0)
            length[still] = 1.0
        normal /= length[:, None]
        # both sides in one pass: the first capsule's points, then the second's
        rows = self.moved_along(
            self.screws(check) if screws is None else screws,
            self.pair_anchors.take(chosen, axis=1).reshape(-1),
            sides.reshape(-1, 3),
            np.concatenate((normal, normal)),
        )
        return rows[: len(chosen)] - rows[len(chosen):]


_NEXT: Final = np.array([1, 2, 0])
_AFTER: Final = np.array([2, 0, 1])


def _cross(a: FloatArray, b: FloatArray) -> FloatArray:
    """Return the cross products of two arrays of 3-vectors (last axis), broadcast."""
    return (
        a.take(_NEXT, axis=-1) * b.take(_AFTER, axis=-1)
        - a.take(_AFTER, axis=-1) * b.take(_NEXT, axis=-1)
    )


def _held_values(model: RobotModel, held: Mapping[str, float]) -> dict[str, float]:
    """Return a value for every movable joint: given, mimicked, or 0 clamped into its limits."""
    values: dict[str, float] = {}
    for joint in model.joints.values():
        if not joint.joint_type.is_movable:
            continue
        if joint.name in held:
            values[joint.name] = float(held[joint.name])
        elif joint.limits is not None:
            values[joint.name] = min(max(0.0, joint.limits.lower), joint.limits.upper)
        else:
            values[joint.name] = 0.0
    for joint in model.joints.values():
        if joint.mimic is not None and joint.name not in held:
            source, multiplier, offset = joint.mimic
            values[joint.name] = multiplier * values.get(source, 0.0) + offset
    return values


def _motion(joint: Joint, value: float) -> FloatArray:
    motion = np.eye(4)
    if joint.joint_type is JointType.PRISMATIC:
        motion[:3, 3] = joint.axis * value
    elif joint.joint_type.is_movable:
        k = skew(joint.axis)
        motion[:3, :3] += math.sin(value) * k + (1.0 - math.cos(value)) * (k @ k)
    return motion


def _link_poses(
    model: RobotModel, values: Mapping[str, float], moving: frozenset[str]
) -> dict[str, FloatArray]:
    """Return every link's pose in the URDF root frame, moving joints at 0, the rest held."""
    children: dict[str, list[Joint]] = {}
    for joint in model.joints.values():
        children.setdefault(joint.parent, []).append(joint)
    poses = {model.root_link: np.eye(4)}
    stack = [model.root_link]
    while stack:
        link = stack.pop()
        for joint in children.get(link, []):
            value = 0.0 if joint.name in moving else values.get(joint.name, 0.0)
            poses[joint.child] = poses[link] @ joint.origin @ _motion(joint, value)
            stack.append(joint.child)
    return poses


def _urdf_capsules(path: str) -> dict[str, list[Capsule]]:
    """Return the capsules covering each link's URDF ``<collision>`` primitives."""
    previous = xml_core.on_error
    xml_core.on_error = lambda message: None
    try:
        robot = urdf_model.URDF.from_xml_file(path)
    finally:
        xml_core.on_error = previous
    shapes: dict[str, list[Capsule]] = {}
    for link in robot.links:
        for item in link.collisions or []:
            geometry = item.geometry
            origin = item.origin
            transform = transform_from_xyz_rpy(
                origin.xyz if origin is not None and origin.xyz is not None else (0, 0, 0),
                origin.rpy if origin is not None and origin.rpy is not None else (0, 0, 0),
            )
            if isinstance(geometry, urdf_model.Box):
                kind, sizes = 'box', tuple(float(v) for v in geometry.size)
            elif isinstance(geometry, urdf_model.Cylinder):
                kind, sizes = 'cylinder', (float(geometry.radius), float(geometry.length))
            elif isinstance(geometry, urdf_model.Sphere):
                kind, sizes = 'sphere', (float(geometry.radius),)
            else:
                raise ConfigError(
                    f'{path}: link {link.name!r} has a {type(geometry).__name__} collision '
                    'shape; give it capsules in the robot file (collision.capsules)'
                )
            shapes.setdefault(link.name, []).extend(
                covering_capsules(link.name, kind, sizes, transform)
            )
    return shapes


def joints_between(model: RobotModel, first: str, second: str) -> int:
    """
    Return how many movable joints lie on the tree path between two links.

    :param model: The URDF joint tree.
    :param first: A link.
    :param second: Another link.
    :return: The count (0 for links on one rigid body).
    """
    parent_joint = {joint.child: joint for joint in model.joints.values()}

    def ancestry(link: str) -> list[str]:
        chain = [link]
        while chain[-1] in parent_joint:
            chain.append(parent_joint[chain[-1]].parent)
        return chain

    up_first, up_second = ancestry(first), ancestry(second)
    common = next(link for link in up_first if link in set(up_second))
    count = 0
    for chain in (up_first, up_second):
        for link in chain[: chain.index(common)]:
            count += parent_joint[link].joint_type.is_movable
    return count


def build_collision_model(
    model: RobotModel,
    urdf_file: str,
    base_frame: str,
    arms: Mapping[str, ArmModel],
    spec: CollisionSpec,
    held: Mapping[str, float],
    torso_joint: str | None = None,
    torso_neutral: float = 0.0,
) -> CollisionModel:
    """
    Build a robot's self-collision model from its URDF and robot file (module docstring).

    :param model: The URDF joint tree.
    :param urdf_file: The URDF file (its ``<collision>`` geometry).
    :param base_frame: The robot base frame every position is expressed in.
    :param arms: The arms, by name, in file order.
    :param spec: The robot file's ``collision`` section.
    :param held: Values of the joints that are not moving joints (locked, head, grippers).
    :param torso_joint: The torso lift joint, a moving joint when given.
    :param torso_neutral: Its neutral value [m].
    :return: The model.
    :raises ConfigError: If the section names an unknown link, or a URDF shape has no capsules.
    """
    _check_links(model, spec)
    compiled.load()  # numba, when installed: the model's checks are compiled (or cached) now
    fields = _moving_joints(model, arms, torso_joint, torso_neutral)
    joints: tuple[str, ...] = fields['joints']
    poses = _link_poses(model, _held_values(model, held), frozenset(joints))
    anchors = _Anchors(model, joints, poses, base_frame)
    fields.update(anchors.fields())
    shapes = _urdf_capsules(urdf_file)
    declared: dict[str, list[Capsule]] = {}
    for capsule in spec.capsules:
        declared.setdefault(capsule.link, []).append(capsule)
    shapes.update(declared)
    capsules: list[Capsule] = []
    carried_by: list[int] = []
    local: list[FloatArray] = []
    for link in model.links:
        if link in spec.exclude_links or link not in shapes or link not in poses:
            continue
        anchor = anchors.anchor_of(link)
        to_anchor = np.linalg.inv(anchors.frame_of(anchor)) @ poses[link]
        for capsule in shapes[link]:
            capsules.append(capsule)
            carried_by.append(anchor)
            moved = capsule.moved(to_anchor)
            local.append(np.stack((moved.a, moved.b)))
    fields.update({
        'capsules': tuple(capsules), 'anchor': np.array(carried_by, dtype=np.int64),
        'local': freeze(np.array(local).reshape(-1, 2, 3)),
        'radii': freeze(np.array([capsule.radius for capsule in capsules])),
    })
    pairs, ignored = _candidate_pairs(model, capsules, carried_by, spec)
    return _without_touching(fields, pairs, ignored)


def _check_links(model: RobotModel, spec: CollisionSpec) -> None:
    """Refuse a ``collision`` section that names a link the URDF does not have."""
    links = set(model.links)
    for name in [c.link for c in spec.capsules] + sorted(spec.exclude_links) + [
        link for pair in spec.ignore_pairs for link in sorted(pair)
    ]:
        if name not in links:
            raise ConfigError(f'collision: {name!r} is not a link of {model.name}')


def _moving_joints(
    model: RobotModel,
    arms: Mapping[str, ArmModel],
    torso_joint: str | None,
    torso_neutral: float,
) -> dict[str, Any]:
    """Return the moving joints (each arm's, then the torso lift) with their ranges."""
    joints: list[str] = []
    slices: dict[str, slice] = {}
    neutral: list[float] = []
    lower: list[float] = []
    upper: list[float] = []
    for name, arm in arms.items():
        slices[name] = slice(len(joints), len(joints) + arm.dof)
        joints += arm.joint_names
        neutral += arm.neutral.tolist()
        lower += arm.lower.tolist()
        upper += arm.upper.tolist()
    torso_index = None
    if torso_joint is not None:
        torso_index = len(joints)
        joints.append(torso_joint)
        neutral.append(torso_neutral)
        limits = model.joints[torso_joint].limits
        lower.append(limits.lower if limits is not None else -math.inf)
        upper.append(limits.upper if limits is not None else math.inf)
    prismatic = tuple(model.joints[name].joint_type is JointType.PRISMATIC for name in joints)
    return {
        'robot': model.name, 'joints': tuple(joints), 'arm_slices': MappingProxyType(slices),
        'torso_index': torso_index, 'neutral': freeze(neutral), 'lower': freeze(lower),
        'upper': freeze(upper), 'prismatic': prismatic,
        'prismatic_mask': freeze(prismatic).astype(bool),
    }


class _Anchors:
    """
    The anchor frames of the moving joints at the zero configuration (module docstring).

    :param model: The URDF joint tree.
    :param joints: The moving joints, in vector order.
    :param poses: Every link's pose in the base frame with the moving joints at zero.
    :param base_frame: The robot base frame (the static anchor).
    """

    def __init__(
        self,
        model: RobotModel,
        joints: Sequence[str],
        poses: Mapping[str, FloatArray],
        base_frame: str,
    ) -> None:
        self._model = model
        self._joints = tuple(joints)
        self._poses = poses
        self._base = poses[base_frame]
        self._parent_joint = {joint.child: joint for joint in model.joints.values()}
        self._index_of = {name: index for index, name in enumerate(joints)}
        self._aligned = []
        for name in joints:
            turn = np.eye(4)
            turn[:3, :3] = rotation_taking_z_to(model.joints[name].axis)
            self._aligned.append(turn)

    def anchor_of(self, link: str) -> int:
        """Return the last moving joint on the link's path from the root, or STATIC."""
        while link in self._parent_joint:
            joint = self._parent_joint[link]
            if joint.name in self._index_of:
                return self._index_of[joint.name]
            link = joint.parent
        return STATIC

    def frame_of(self, anchor: int) -> FloatArray:
        """Return an anchor frame at the zero configuration (its joint axis along z)."""
        if anchor == STATIC:
            return self._base
        joint = self._model.joints[self._joints[anchor]]
        return self._poses[joint.child] @ self._aligned[anchor]

    def fields(self) -> dict[str, Any]:
        """Return the model's fields of the anchor tree: parents, order, fixed rows, carries."""
        parents: list[int] = []
        fixed: list[FloatArray] = []
        for index, name in enumerate(self._joints):
            joint = self._model.joints[name]
            parent = self.anchor_of(joint.parent)
            parents.append(parent)
            fixed.append(
                np.linalg.inv(self.frame_of(parent)) @ self._poses[joint.parent]
                @ joint.origin @ self._aligned[index]
            )
        count = len(self._joints)
        carries = np.zeros((count, count), dtype=bool)
        for index in range(count):
            walk: int = index
            while walk != STATIC:
                carries[index, walk] = True
                walk = parents[walk]
        order = tuple(sorted(range(count), key=lambda index: int(carries[index].sum())))
        return {
            'parents': tuple(parents), 'order': order,
            'fixed_rows': tuple(affine(item) for item in fixed), 'carries': carries,
            'moved_by': np.vstack((carries, np.zeros((1, count), dtype=bool))),
        }


def _candidate_pairs(
    model: RobotModel,
    capsules: Sequence[Capsule],
    anchors: Sequence[int],
    spec: CollisionSpec,
) -> tuple[IntArray, dict[frozenset[str], str]]:
    """Return the capsule pairs to check, and the link pairs left out with the reason."""
    ignored: dict[frozenset[str], str] = {}
    candidates: list[tuple[int, int]] = []
    apart: dict[frozenset[str], int] = {}
    for first in range(len(capsules)):
        for second in range(first + 1, len(capsules)):
            if anchors[first] == anchors[second]:
                continue
            names = frozenset((capsules[first].link, capsules[second].link))
            if names in ignored:
                continue
            if names in spec.ignore_pairs:
                ignored[names] = 'ignore_pairs of the robot file'
                continue
            if names not in apart:
                apart[names] = joints_between(model, capsules[first].link, capsules[second].link)
            if apart[names] <= spec.adjacent_joints:
                ignored[names] = f'{apart[names]} movable joints apart'
                continue
            candidates.append((first, second))
    return np.array(candidates, dtype=np.int64).reshape(-1, 2), ignored


def _without_touching(
    fields: dict[str, Any], pairs: IntArray, ignored: dict[frozenset[str], str]
) -> CollisionModel:
    """Return the model without the link pairs that touch at the neutral pose."""
    draft = _with_pairs(fields, pairs, ignored, np.full(len(pairs), math.inf))
    at_neutral = draft.check(draft.neutral)
    touching = np.flatnonzero(at_neutral.distances <= 0.0)
    for touch in touching.tolist():
        names = frozenset(draft.pair_links(touch))
        ignored.setdefault(
            names, f'touching at the neutral pose ({at_neutral.distances[touch]:.3f} m)'
        )
    # a link pair is checked whole or not at all
    dropped = {frozenset(draft.pair_links(int(index))) for index in touching}
    kept = [
        index for index in range(len(pairs))
        if frozenset(draft.pair_links(index)) not in dropped
    ]
    kept_pairs = pairs[kept].reshape(-1, 2)
    neutral_distances = at_neutral.distances[kept]
    # every capsule pair of a link pair keeps what the link pair keeps at the neutral pose
    link_pairs = [frozenset(draft.pair_links(index)) for index in kept]
    closest: dict[frozenset[str], float] = {}
    for link_pair, distance in zip(link_pairs, neutral_distances.tolist()):
        closest[link_pair] = min(closest.get(link_pair, math.inf), distance)
    return _with_pairs(
        fields, kept_pairs, ignored, np.array([closest[pair] for pair in link_pairs])
    )


def _with_pairs(
    fields: dict[str, Any],
    pairs: IntArray,
    ignored: Mapping[frozenset[str], str],
    neutral_distances: FloatArray,
) -> CollisionModel:
    """Return the model with its checked pairs and their broad phase (bodies: links)."""
    capsules: tuple[Capsule, ...] = fields['capsules']
    anchor: IntArray = fields['anchor']
    local: FloatArray = fields['local']
    radii: FloatArray = fields['radii']
    bodies = sorted({capsule.link for capsule in capsules})
    body_of = np.array([bodies.index(capsule.link) for capsule in capsules], dtype=np.int64)
    centres, spheres, anchors = [], [], []
    for body in range(len(bodies)):
        members = np.flatnonzero(body_of == body)
        points = local[members].reshape(-1, 3)
        centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
        reach = np.linalg.norm(local[members] - centre, axis=2).max(axis=1) + radii[members]
        centres.append(centre)
        spheres.append(float(reach.max()))
        anchors.append(int(anchor[members[0]]))
    keys = [tuple(sorted((body_of[a], body_of[b]))) for a, b in pairs]
    capsule_reach = 0.5 * np.linalg.norm(local[:, 1] - local[:, 0], axis=1) + radii
    body_pairs = sorted(set(keys))
    index_of = {key: index for index, key in enumerate(body_pairs)}
    pair_array = np.array(body_pairs, dtype=np.int64).reshape(-1, 2)
    reach = np.array(spheres)[pair_array].sum(axis=1) if len(body_pairs) else np.zeros(0)
    return CollisionModel(
        **fields,
        pairs=pairs, ignored=MappingProxyType(dict(ignored)),
        neutral_distances=freeze(neutral_distances),
        body_anchor=np.array(anchors, dtype=np.int64),
        body_rows=np.array(anchors, dtype=np.int64) + 1,
        anchor_rows=anchor + 1,
        local_rows=freeze(local.reshape(-1, 3)),
        end_picks=_end_picks(anchor + 1, len(fields['joints']) + 1),
        body_first=np.ascontiguousarray(pair_array[:, 0]),
        body_second=np.ascontiguousarray(pair_array[:, 1]),
        pair_first=np.ascontiguousarray(pairs[:, 0]),
        pair_second=np.ascontiguousarray(pairs[:, 1]),
        pair_anchors=np.ascontiguousarray(anchor[pairs].reshape(-1, 2).T),
        pair_ends=np.stack((
            2 * pairs[:, 0], 2 * pairs[:, 0] + 1, 2 * pairs[:, 1], 2 * pairs[:, 1] + 1
        )),
        body_centre=freeze(np.array(centres).reshape(-1, 3)),
        body_radius=freeze(spheres),
        body_pairs=pair_array,
        body_reach=freeze(reach),
        pair_body=np.array([index_of[key] for key in keys], dtype=np.int64),
        pair_reach=freeze(capsule_reach[pairs[:, 0]] + capsule_reach[pairs[:, 1]]),
    )


def _end_picks(anchor_rows: IntArray, frames: int) -> IntArray:
    """
    Return where each capsule end's coordinates lie in the product of all ends by all frames.

    :param anchor_rows: Per capsule, its row in the anchor frames, shape (c,).
    :param frames: Number of anchor frames (moving joints plus the base).
    :return: Flat indices into the (2 c, 3 frames) product, shape (6 c,).
    """
    rows = np.arange(2 * len(anchor_rows), dtype=np.int64)[:, None]
    columns = 3 * np.repeat(anchor_rows, 2)[:, None] + np.arange(3, dtype=np.int64)
    picks: IntArray = (rows * (3 * frames) + columns).reshape(-1)
    return picks


def landmark_points(
    model: CollisionModel, arms: Mapping[str, ArmModel]
) -> list[tuple[str, str, int]]:
    """
    Return the elbow and wrist landmarks as moving-joint origins (for workspace bounds).

    :param model: The collision model.
    :param arms: The arms, by name.
    :return: ``(arm, landmark, joint index)`` per landmark; the landmark is the origin of its
        joint, which the joints before it move.
    """
    points = []
    for name, arm in arms.items():
        for label in ('elbow', 'wrist'):
            joint = getattr(arm.spec, label)
            points.append((name, label, model.joints.index(joint)))
    return points


def bound_labels(
    landmarks: Sequence[tuple[str, str, int]], spaces: Sequence[HalfSpace]
) -> list[str]:
    """
    Return the label of each (landmark, bound) row, landmark-major: ``arm wrist: table``.

    :param landmarks: From :func:`landmark_points`.
    :param spaces: The workspace's half-spaces.
    :return: The labels, in the order of :func:`half_space_rows`' rows.
    """
    return [f'{arm} {label}: {space.name}' for arm, label, _ in landmarks for space in spaces]


def half_space_rows(
    model: CollisionModel,
    check: CollisionCheck,
    landmarks: Sequence[tuple[str, str, int]],
    spaces: Sequence[HalfSpace],
    gradients: bool = True,
) -> tuple[FloatArray, FloatArray, list[str]]:
    """
    Return how far each landmark is inside each bound, and how that changes with the joints.

    :param model: The collision model.
    :param check: A check at the configuration (joint origins and axes).
    :param landmarks: From :func:`landmark_points`.
    :param spaces: The workspace's half-spaces.
    :param gradients: Compute the gradients (else an empty array).
    :return: ``(depth, gradients, labels)``: ``normal . p - offset`` per (landmark, bound),
        shape (m,) [m] (negative: outside); gradients shape (m, k); labels ``arm wrist: table``.
    """
    joints = [joint for _, _, joint in landmarks]
    points = check.origins[joints]
    normals = np.array([space.normal for space in spaces])
    offsets = np.array([space.offset for space in spaces])
    depths = (points @ normals.T - offsets).reshape(-1)
    labels = bound_labels(landmarks, spaces)
    if not gradients:
        return depths, np.zeros((0, model.dof)), labels
    count = len(spaces)
    rows = model.moved_along(
        model.screws(check),
        np.repeat(np.array([model.parents[joint] for joint in joints], dtype=np.int64), count),
        np.repeat(points, count, axis=0),
        np.tile(normals, (len(joints), 1)),
    )
    return depths, rows.reshape(-1, model.dof), labels


def joint_reach(model: CollisionModel) -> FloatArray:
    """
    Return, per moving joint, how far a unit of its motion can move a point it carries.

    A bound over every configuration: for a turning joint, the largest distance from its origin
    to a capsule end or a joint origin it carries (the link offsets along the path there added
    up, each sliding joint's travel included, then the capsule end's offset); for a sliding joint,
    1. So between two configurations ``x`` and ``y`` no capsule end and no joint origin moves more
    than ``reach . |x - y|``, and no pair distance, nor a landmark's depth inside a bound, changes
    more than that (the joints that carry both of a pair move them together).

    :param model: The collision model.
    :return: Per moving joint, [m/rad] for a turning joint, 1 for a sliding one, shape (k,).
    """
    travel = [
        max(abs(low), abs(high)) if slides else 0.0
        for low, high, slides in zip(model.lower.tolist(), model.upper.tolist(), model.prismatic)
    ]
    offset = [math.hypot(rows[3], rows[7], rows[11]) for rows in model.fixed_rows]
    ends = np.zeros(model.dof)  # per anchor, its capsule ends' largest offset
    for anchor, local in zip(model.anchor.tolist(), model.local):
        if anchor != STATIC:
            ends[anchor] = max(ends[anchor], float(np.max(np.linalg.norm(local, axis=1))))
    reach = np.zeros(model.dof)
    for joint in range(model.dof):
        if model.prismatic[joint]:
            reach[joint] = 1.0
            continue
        for carried in np.flatnonzero(model.carries[:, joint]).tolist():
            length, node = 0.0, carried
            while node != joint:  # the path from the carried frame back to this joint
                length += offset[node] + travel[node]
                node = model.parents[node]
            reach[joint] = max(reach[joint], length + float(ends[carried]))
    return reach
