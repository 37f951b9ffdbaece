"""
Capsules: the shape the self-collision model is made of, and the distances between them.

A capsule is every point within ``radius`` of the segment ``a``-``b`` (a sphere when ``a`` and
``b`` coincide). Two capsules are apart by the distance between their segments minus both radii,
which is exact, cheap, and differentiable almost everywhere: the gradient of the distance is the
unit vector between the two closest points of the segments.

:func:`covering_capsules` turns a URDF collision primitive (box, cylinder, sphere) into capsules
that contain it, so a positive capsule distance proves that the primitives do not touch.
:func:`segment_distances` computes the closest points of many segment pairs at once (the
clamped closed form of Ericson, *Real-Time Collision Detection*, 5.1.9); :func:`closest_points`
does the same on the ends stacked in one array (the collision check's hot path), up to
:data:`FEW` pairs in plain floats with the same arithmetic, so both give the same numbers.

Units: metres; every point in one common frame chosen by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.robot.kinematics.compiled import PARALLEL, segment_pair
from pic_ros.robot.kinematics.transforms import freeze

FloatArray = npt.NDArray[np.float64]

_PARALLEL: Final = PARALLEL
"""Squared-length products below this count as parallel or degenerate segments [m^4]."""

MAX_BOX_CELLS: Final = 4
"""Most capsules across each short side of a box (:func:`covering_capsules`)."""

BOX_CELL: Final = 0.12
"""Largest cell of a box's cross-section covered by one capsule [m]: a capsule reaches at most
about a fifth of its cell's side beyond the box's faces (:func:`covering_capsules`)."""


@dataclass(frozen=True)
class Capsule:
    """
    A capsule fixed to a link.

    :param link: The URDF link it moves with.
    :param a: One end of its segment in the link frame, shape (3,), [m] (read-only).
    :param b: The other end, shape (3,), [m] (read-only); equal to ``a`` for a sphere.
    :param radius: Radius, > 0 [m].
    :param source: Where it came from (``urdf`` or ``config``), for messages and reports.
    :raises ConfigError: If a point is not a finite 3-vector or the radius is not positive.
    """

    link: str
    a: FloatArray
    b: FloatArray
    radius: float
    source: str = 'urdf'

    def __post_init__(self) -> None:
        for name in ('a', 'b'):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (3,) or not np.all(np.isfinite(value)):
                raise ConfigError(
                    f'capsule of {self.link!r}: {name} must be three finite numbers [m], got '
                    f'{getattr(self, name)!r}'
                )
            object.__setattr__(self, name, freeze(value))
        radius = self.radius
        if isinstance(radius, bool) or not isinstance(radius, (int, float)) or not (
            math.isfinite(radius) and radius > 0.0
        ):
            raise ConfigError(
                f'capsule of {self.link!r}: radius must be a positive number [m], got {radius!r}'
            )
        object.__setattr__(self, 'radius', float(radius))

    def moved(self, transform: FloatArray) -> Capsule:
        """
        Return the same capsule expressed through a rigid transform.

        :param transform: Homogeneous transform ``new <- current``, shape (4, 4).
        :return: The capsule with both ends mapped (same link, radius and source).
        """
        rotation, translation = transform[:3, :3], transform[:3, 3]
        return Capsule(
            self.link, rotation @ self.a + translation, rotation @ self.b + translation,
            self.radius, self.source,
        )


def _segment_capsule(
    link: str, transform: FloatArray, half: FloatArray, radius: float
) -> Capsule:
    """Return the capsule of the segment ``-half .. half`` of a primitive's frame."""
    return Capsule(link, -half, half, radius).moved(transform)


def covering_capsules(
    link: str, kind: str, dimensions: tuple[float, ...], transform: FloatArray
) -> list[Capsule]:
    """
    Return capsules that together contain a URDF collision primitive.

    - ``sphere`` ``(radius,)``: itself;
    - ``cylinder`` ``(radius, length)`` (axis z): the capsule on its axis, as long as it, of its
      radius, when the cylinder is at least as long as its radius; a flatter one (a disc) is cut
      into parallel strips no wider than its thickness or :data:`BOX_CELL`, each covered by a
      capsule along its longest chord;
    - ``box`` ``(x, y, z)``: capsules along its longest side, over a grid of cells of its
      cross-section no larger than its shorter side or :data:`BOX_CELL` (at most
      :data:`MAX_BOX_CELLS` along each side), each of the radius of its cell's half diagonal.

    :param link: The link the primitive belongs to.
    :param kind: ``box``, ``cylinder`` or ``sphere``.
    :param dimensions: The primitive's sizes [m] as listed above.
    :param transform: Pose of the primitive in the link frame (the ``<collision><origin>``),
        shape (4, 4).
    :return: The capsules, in the link frame.
    :raises ConfigError: If the kind is unknown or a size is not positive.
    """
    if any(not (math.isfinite(value) and value > 0.0) for value in dimensions):
        raise ConfigError(f'{link}: {kind} sizes must be positive, got {dimensions}')
    if kind == 'sphere':
        (radius,) = dimensions
        return [_segment_capsule(link, transform, np.zeros(3), radius)]
    if kind == 'cylinder':
        radius, length = dimensions
        if length >= radius:
            return [_segment_capsule(link, transform, np.array([0.0, 0.0, length / 2]), radius)]
        # a disc: capsules along parallel chords, each covering a strip of the disc
        count = max(1, math.ceil(2.0 * radius / max(length, BOX_CELL) - 1e-9))
        width = 2.0 * radius / count
        capsules = []
        for strip in range(count):
            low, high = -radius + strip * width, -radius + (strip + 1) * width
            inner = 0.0 if low <= 0.0 <= high else min(abs(low), abs(high))
            chord = math.sqrt(max(radius**2 - inner**2, 0.0))  # the strip's longest, halved
            centre = np.array([0.0, 0.5 * (low + high), 0.0])
            capsules.append(
                Capsule(
                    link, centre - [chord, 0.0, 0.0], centre + [chord, 0.0, 0.0],
                    math.hypot(width / 2, length / 2),
                ).moved(transform)
            )
        return capsules
    if kind == 'box':
        sizes = np.asarray(dimensions, dtype=float)
        axis = int(np.argmax(sizes))
        across = [index for index in range(3) if index != axis]
        cell = min(float(min(sizes[across])), BOX_CELL)
        counts = [min(MAX_BOX_CELLS, max(1, math.ceil(sizes[i] / cell - 1e-9))) for i in across]
        cells = [sizes[i] / count for i, count in zip(across, counts)]
        radius = 0.5 * math.hypot(*cells)
        capsules = []
        for row in range(counts[0]):
            for column in range(counts[1]):
                centre = np.zeros(3)
                centre[across[0]] = -sizes[across[0]] / 2 + (row + 0.5) * cells[0]
                centre[across[1]] = -sizes[across[1]] / 2 + (column + 0.5) * cells[1]
                half = np.zeros(3)
                half[axis] = sizes[axis] / 2
                capsules.append(
                    Capsule(link, centre - half, centre + half, radius).moved(transform)
                )
        return capsules
    raise ConfigError(f'{link}: no capsules for a {kind!r} (box, cylinder or sphere)')


def segment_distances(
    p1: FloatArray, q1: FloatArray, p2: FloatArray, q2: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """
    Find the closest points of many pairs of segments at once.

    :param p1: Starts of the first segments, shape (n, 3) [m].
    :param q1: Ends of the first segments, shape (n, 3) [m].
    :param p2: Starts of the second segments, shape (n, 3) [m].
    :param q2: Ends of the second segments, shape (n, 3) [m].
    :return: ``(distance, c1, c2)``: the distance between each pair, shape (n,) [m], and the
        closest point on each first and second segment, shape (n, 3).
    """
    return closest_points(np.stack((p1, q1, p2, q2)))


FEW: Final = 10
"""Up to this many pairs, :func:`closest_points` works in plain floats: a numpy call costs more
than the arithmetic of a few pairs."""

_TIPS: Final = np.array([1, 3, 0])
_TAILS: Final = np.array([0, 2, 2])
"""The differences of :func:`closest_points`: d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2."""

_DOTS: Final = (np.array([0, 1, 0, 0, 1]), np.array([0, 1, 1, 2, 2]))
"""Which of (d1, d2, r) each product of :func:`closest_points` takes: a, e, b, c, f."""


def closest_points(ends: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """
    Find the closest points of many pairs of segments at once (:func:`segment_distances`).

    :param ends: Per pair, the first segment's start and end, then the second's, stacked
        first, shape (4, n, 3) [m].
    :return: ``(distance, c1, c2)``: the distance between each pair, shape (n,) [m], and the
        closest point on each first and second segment, shape (n, 3).
    """
    if ends.shape[1] <= FEW:
        return _closest_few(ends)
    distance, closest = closest_pairs(ends)
    return distance, closest[0], closest[1]


def closest_pairs(ends: FloatArray) -> tuple[FloatArray, FloatArray]:
    """
    Return what :func:`closest_points` returns, the closest points as one array.

    :param ends: Per pair, the first segment's start and end, then the second's, stacked
        first, shape (4, n, 3) [m].
    :return: ``(distance, closest)``: the distance between each pair, shape (n,) [m], and the
        closest points on the first and on the second segments, shape (2, n, 3) [m].
    """
    if ends.shape[1] <= FEW:
        distance, first, second = _closest_few(ends)
        return distance, np.stack((first, second))
    vectors = ends.take(_TIPS, axis=0) - ends.take(_TAILS, axis=0)  # d1, d2, r
    products = dots(vectors.take(_DOTS[0], axis=0), vectors.take(_DOTS[1], axis=0))
    a, e, b, c, f = products
    safe_a, safe_e = np.maximum(products[:2], _PARALLEL)
    denominator = a * e - b * b
    # s on the first segment where the infinite lines come closest (0 for parallel lines);
    # s and t side by side, so that one call clamps both
    along = np.zeros((2, len(a)))
    s, t = along
    np.divide(b * f - c * e, denominator, out=s, where=denominator > 1e-12 * a * e + 1e-300)
    np.minimum(np.maximum(s, 0.0, out=s), 1.0, out=s)
    np.divide(b * s + f, safe_e, out=t)
    # t outside [0, 1]: clamp it and take the s closest to the clamped end (with this many
    # pairs some usually are; for the others it changes nothing)
    s[...] = np.where(t < 0.0, -c / safe_a, np.where(t > 1.0, (b - c) / safe_a, s))
    np.minimum(np.maximum(along, 0.0, out=along), 1.0, out=along)
    # degenerate segments (spheres): a point against a segment, or two points
    points = products[:2] <= _PARALLEL
    if points.any():
        point1, point2 = points
        along1 = np.minimum(np.maximum(-c / safe_a, 0.0), 1.0)
        along2 = np.minimum(np.maximum(f / safe_e, 0.0), 1.0)
        s[...], t[...] = (
            np.where(point1, 0.0, np.where(point2, along1, s)),
            np.where(point2, 0.0, np.where(point1, along2, t)),
        )
    closest = ends[0::2] + vectors[:2] * along[:, :, None]
    gap = closest[0] - closest[1]
    return np.sqrt(dots(gap, gap)), closest


def dots(x: FloatArray, y: FloatArray) -> FloatArray:
    """
    Return the dot products of two arrays of 3-vectors (last axis).

    Summed as ``np.einsum('...j,...j->...')`` sums three terms (the first and third, then the
    second), in fewer and cheaper calls.

    :param x: 3-vectors, shape (..., 3).
    :param y: 3-vectors, the same shape.
    :return: The products, shape (...).
    """
    products = x * y
    result: FloatArray = (products[..., 0] + products[..., 2]) + products[..., 1]
    return result


def _closest_few(ends: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return what :func:`closest_points` returns, pair by pair in plain floats."""
    starts1, stops1, starts2, stops2 = ends.tolist()
    rows = [segment_pair(*pair) for pair in zip(starts1, stops1, starts2, stops2)]
    if not rows:
        return np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3))
    distances, first, second = zip(*rows)
    return np.array(distances), np.array(first), np.array(second)
