"""
Occlusion of a region of interest by capsules: the geometry of the PIC paper's PO metric.

The PIC paper's percentage of occlusion / obstruction (PO, its Eq. 5) is the share of a
rectangular region of interest (ROI) in a task plane that the arm links cover when projected
onto that plane. Here a link is a *capsule*: every point within a radius of a segment, so a
link has a thickness and covers an area (a bare segment covers none). Its orthogonal projection
onto the plane is exact and simple: the projected segment thickened by the same radius (a 2-D
"stadium"), a disc when the segment is perpendicular to the plane.

:func:`covered_fraction` measures the area of the *union* of the projected capsules inside the
ROI, over the ROI's area: overlapping links are counted once. The area is integrated over
``rows`` cells of rows across the ROI (height ``h = height / rows`` each): a line across the
plane cuts every stadium in one interval, computed exactly, and the union of a line's intervals
is measured exactly. The share is the midpoint rule (each cell's mid-line cut times ``h``); the
same union measured on sets that provably lie inside and contain every cut of the cell bounds
the exact area from below and above (:class:`Coverage`).

Units: metres; every point in one frame chosen by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

DEFAULT_ROWS: Final = 1000
"""Rows across the ROI in :func:`covered_fraction` (0.25 mm for a 25 cm pad)."""

_UNIT_TOLERANCE: Final = 1e-9
"""Allowed deviation of the plane axes from unit length and orthogonality [-]."""

_SLOPE: Final = 1e-12
"""Coefficients below this make a row constraint independent of the in-row coordinate."""


def _vector(name: str, value: npt.ArrayLike) -> FloatArray:
    array = np.array(value, dtype=float)
    if array.shape != (3,) or not np.all(np.isfinite(array)):
        raise ConfigError(f'{name} must be three finite numbers, got {value!r}')
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class TaskPlane:
    """
    A plane with an origin and two in-plane axes.

    :param origin: A point of the plane, shape (3,), [m].
    :param u_axis: First in-plane axis, unit vector, shape (3,).
    :param v_axis: Second in-plane axis, unit vector orthogonal to ``u_axis``, shape (3,).
    :raises ConfigError: If a vector is not three finite numbers, or the axes are not unit and
        orthogonal (within 1e-9).
    """

    origin: FloatArray
    u_axis: FloatArray
    v_axis: FloatArray

    def __post_init__(self) -> None:
        for name in ('origin', 'u_axis', 'v_axis'):
            object.__setattr__(self, name, _vector(f'task plane {name}', getattr(self, name)))
        for name in ('u_axis', 'v_axis'):
            if abs(float(np.linalg.norm(getattr(self, name))) - 1.0) > _UNIT_TOLERANCE:
                raise ConfigError(f'task plane {name} must be a unit vector')
        if abs(float(self.u_axis @ self.v_axis)) > _UNIT_TOLERANCE:
            raise ConfigError('task plane axes must be orthogonal')

    @property
    def normal(self) -> FloatArray:
        """Return the unit normal ``u_axis x v_axis``, shape (3,)."""
        return np.cross(self.u_axis, self.v_axis)

    def coordinates(self, points: npt.ArrayLike) -> FloatArray:
        """
        Project points orthogonally onto the plane.

        :param points: Points, shape (..., 3), [m].
        :return: Their (u, v) coordinates from the origin, shape (..., 2), [m].
        """
        relative = np.asarray(points, dtype=float) - self.origin
        return np.stack((relative @ self.u_axis, relative @ self.v_axis), axis=-1)

    def moved(
        self, rotation: npt.ArrayLike, translation: npt.ArrayLike, scale: float = 1.0
    ) -> TaskPlane:
        """
        Map the plane by ``p -> scale * rotation @ p + translation``.

        :param rotation: Orthogonal matrix (a rotation, or a reflection), shape (3, 3).
        :param translation: Shape (3,), [m].
        :param scale: Positive length factor [-].
        :return: The mapped plane (axes mapped by ``rotation``, still unit).
        """
        matrix = np.asarray(rotation, dtype=float)
        return TaskPlane(
            origin=scale * (matrix @ self.origin) + np.asarray(translation, dtype=float),
            u_axis=matrix @ self.u_axis,
            v_axis=matrix @ self.v_axis,
        )


@dataclass(frozen=True)
class RegionOfInterest:
    """
    A rectangle in a task plane: ``0 <= u <= width``, ``0 <= v <= height`` from its origin.

    :param plane: The plane; its origin is a corner of the rectangle.
    :param width: Extent along ``plane.u_axis``, > 0 [m].
    :param height: Extent along ``plane.v_axis``, > 0 [m].
    :raises ConfigError: If an extent is not a positive finite number.
    """

    plane: TaskPlane
    width: float
    height: float

    def __post_init__(self) -> None:
        for name in ('width', 'height'):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value > 0.0
            ):
                raise ConfigError(f'ROI {name} must be a positive number [m], got {value!r}')
            object.__setattr__(self, name, float(value))

    @property
    def area(self) -> float:
        """Return ``width * height`` [m^2]."""
        return self.width * self.height

    def over(self, points: npt.ArrayLike) -> BoolArray:
        """
        Tell which points project strictly inside the rectangle.

        :param points: Points, shape (..., 3), [m]; NaN points are never over it.
        :return: Shape (...,).
        """
        uv = self.plane.coordinates(points)
        with np.errstate(invalid='ignore'):
            inside = (uv[..., 0] > 0.0) & (uv[..., 0] < self.width)
            inside &= (uv[..., 1] > 0.0) & (uv[..., 1] < self.height)
        return np.asarray(inside)

    def moved(
        self, rotation: npt.ArrayLike, translation: npt.ArrayLike, scale: float = 1.0
    ) -> RegionOfInterest:
        """
        Map the region by ``p -> scale * rotation @ p + translation`` (extents scale too).

        :param rotation: Orthogonal matrix, shape (3, 3).
        :param translation: Shape (3,), [m].
        :param scale: Positive length factor [-].
        :return: The mapped region.
        """
        return RegionOfInterest(
            plane=self.plane.moved(rotation, translation, scale),
            width=scale * self.width,
            height=scale * self.height,
        )


@dataclass(frozen=True)
class Coverage:
    """
    The share of a ROI covered by projected capsules.

    :param fraction: Covered area inside the ROI over the ROI's area, in [0, 1].
    :param error_bound: Bound on ``|fraction - exact|`` from the row integration. In each cell
        of rows, each stadium's cut at any height contains the intersection of its cuts at the
        cell's two edges and lies within the hull of those cuts and of the stadium's extreme
        points inside the cell (a stadium is convex); the unions of these inner and outer
        intervals, times the cell height, bound the exact area from below and above, and the
        mid-line cut lies between them. The bound is the larger distance from ``fraction`` to
        those two bounds (so it counts each overlap once too).
    """

    fraction: float
    error_bound: float


def _row_interval(
    alpha: FloatArray, gamma: FloatArray, low: FloatArray, high: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Return the u-interval where ``low <= alpha * u + gamma <= high`` (empty: lo > hi)."""
    steep = np.abs(alpha) > _SLOPE
    safe = np.where(steep, alpha, 1.0)
    first = (low - gamma) / safe
    second = (high - gamma) / safe
    always = (gamma >= low) & (gamma <= high)
    lo = np.where(steep, np.minimum(first, second), np.where(always, -np.inf, np.inf))
    hi = np.where(steep, np.maximum(first, second), np.where(always, np.inf, -np.inf))
    return lo, hi


def _stadium_rows(
    start: FloatArray, end: FloatArray, radius: FloatArray, v: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """
    Cut stadiums by horizontal rows.

    :param start: Projected segment starts, shape (k, 2).
    :param end: Projected segment ends, shape (k, 2).
    :param radius: Radii, shape (k,).
    :param v: Row lines, shape (r,).
    :return: ``(lo, hi)``, shape (r, k); ``lo > hi`` where the row misses the stadium.
    """
    rows = v[:, None]
    lo = np.full((v.size, radius.size), np.inf)
    hi = np.full((v.size, radius.size), -np.inf)
    for centre in (start, end):  # the two end discs
        offset = rows - centre[None, :, 1]
        square = radius[None, :] ** 2 - offset**2
        half = np.sqrt(np.where(square >= 0.0, square, 0.0))
        hit = square >= 0.0
        lo = np.where(hit, np.minimum(lo, centre[None, :, 0] - half), lo)
        hi = np.where(hit, np.maximum(hi, centre[None, :, 0] + half), hi)
    along = end - start
    length = np.linalg.norm(along, axis=1)
    body = length > 0.0
    direction = along / np.where(body, length, 1.0)[:, None]
    normal = np.stack((-direction[:, 1], direction[:, 0]), axis=1)
    offset = rows - start[None, :, 1]
    # the band between the discs: 0 <= (x - start) . direction <= length, |(x - start) . normal|
    # <= radius, for x = (u, row)
    lo_t, hi_t = _row_interval(
        np.broadcast_to(direction[:, 0], lo.shape),
        offset * direction[None, :, 1] - start[None, :, 0] * direction[None, :, 0],
        np.zeros_like(lo), np.broadcast_to(length, lo.shape),
    )
    lo_n, hi_n = _row_interval(
        np.broadcast_to(normal[:, 0], lo.shape),
        offset * normal[None, :, 1] - start[None, :, 0] * normal[None, :, 0],
        np.broadcast_to(-radius, lo.shape), np.broadcast_to(radius, lo.shape),
    )
    band_lo = np.maximum(lo_t, lo_n)
    band_hi = np.minimum(hi_t, hi_n)
    band = body[None, :] & (band_lo <= band_hi)
    lo = np.where(band, np.minimum(lo, band_lo), lo)
    hi = np.where(band, np.maximum(hi, band_hi), hi)
    return lo, hi


def covered_fraction(
    roi: RegionOfInterest,
    starts: npt.ArrayLike,
    ends: npt.ArrayLike,
    radii: npt.ArrayLike,
    rows: int = DEFAULT_ROWS,
) -> Coverage:
    """
    Measure the share of a ROI covered by the orthogonal projections of capsules.

    :param roi: The region of interest.
    :param starts: One end of each capsule's segment, shape (k, 3), [m]; rows with NaN are
        skipped.
    :param ends: The other end, shape (k, 3), [m] (equal to the start for a sphere).
    :param radii: Radius of each capsule, shape (k,) or a scalar, >= 0 [m].
    :param rows: Rows across the ROI (see the module docstring), >= 1.
    :return: The covered share (overlaps counted once) and its error bound.
    :raises ConfigError: If the shapes disagree, a radius is negative, or ``rows`` < 1.
    """
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise ConfigError(f'rows must be a positive integer, got {rows!r}')
    first = np.asarray(starts, dtype=float).reshape(-1, 3)
    second = np.asarray(ends, dtype=float).reshape(-1, 3)
    radius = np.broadcast_to(np.asarray(radii, dtype=float), (first.shape[0],)).copy()
    if second.shape != first.shape:
        raise ConfigError(f'starts and ends differ in shape: {first.shape} vs {second.shape}')
    if np.any(radius < 0.0):
        raise ConfigError('capsule radii must be >= 0 [m]')
    keep = np.all(np.isfinite(first), axis=1) & np.all(np.isfinite(second), axis=1)
    keep &= np.isfinite(radius) & (radius > 0.0)
    a = roi.plane.coordinates(first[keep])
    b = roi.plane.coordinates(second[keep])
    radius = radius[keep]
    # leave out the capsules whose projection's bounding box misses the ROI
    near = (np.minimum(a[:, 0], b[:, 0]) - radius < roi.width)
    near &= (np.maximum(a[:, 0], b[:, 0]) + radius > 0.0)
    near &= (np.minimum(a[:, 1], b[:, 1]) - radius < roi.height)
    near &= (np.maximum(a[:, 1], b[:, 1]) + radius > 0.0)
    if not np.any(near):
        return Coverage(fraction=0.0, error_bound=0.0)
    a, b, radius = a[near], b[near], radius[near]
    step = roi.height / rows
    bottom = float(np.min(np.minimum(a[:, 1], b[:, 1]) - radius))
    top = float(np.max(np.maximum(a[:, 1], b[:, 1]) + radius))
    first_row = max(0, int(math.floor(bottom / step)))
    last_row = min(rows, int(math.ceil(top / step)))
    cells = np.arange(first_row, last_row, dtype=np.float64)
    mid_lines: FloatArray = (cells + 0.5) * step
    edges: FloatArray = np.append(cells, last_row) * step
    middle = _clipped(*_stadium_rows(a, b, radius, mid_lines), roi.width)
    edge_lo, edge_hi = _stadium_rows(a, b, radius, edges)
    inner, outer = _cell_bounds(a, b, radius, edge_lo, edge_hi, first_row, step)
    estimate = _union_length(*middle) * step / roi.area
    low = _union_length(*_clipped(*inner, roi.width)) * step / roi.area
    high = _union_length(*_clipped(*outer, roi.width)) * step / roi.area
    return Coverage(
        fraction=float(min(1.0, estimate)),
        error_bound=float(max(high - estimate, estimate - low, 0.0)),
    )


def _clipped(lo: FloatArray, hi: FloatArray, width: float) -> tuple[FloatArray, FloatArray]:
    """Clip row intervals to ``[0, width]``; empty ones become ``[0, 0]``."""
    lo = np.clip(lo, 0.0, width)
    hi = np.clip(hi, 0.0, width)
    empty = ~(hi > lo)
    return np.where(empty, 0.0, lo), np.where(empty, 0.0, hi)


def _union_length(lo: FloatArray, hi: FloatArray) -> float:
    """Return the summed length over rows of the union of each row's intervals, shape (r, k)."""
    order = np.argsort(lo, axis=1)
    lo = np.take_along_axis(lo, order, axis=1)
    hi = np.take_along_axis(hi, order, axis=1)
    reach = np.maximum.accumulate(hi, axis=1)
    before = np.concatenate((np.full((lo.shape[0], 1), -np.inf), reach[:, :-1]), axis=1)
    return float(np.clip(hi - np.maximum(lo, before), 0.0, None).sum())


def _cell_bounds(
    start: FloatArray,
    end: FloatArray,
    radius: FloatArray,
    edge_lo: FloatArray,
    edge_hi: FloatArray,
    first_row: int,
    step: float,
) -> tuple[tuple[FloatArray, FloatArray], tuple[FloatArray, FloatArray]]:
    """
    Bound each stadium's cut within each cell of rows from inside and outside.

    A stadium is convex: over a cell, the left end of its cut is a convex function of v and the
    right end a concave one. So every cut in the cell contains the intersection of the cuts at
    the cell's two edges (when both exist), and lies within the hull of those cuts and of the
    stadium's leftmost, rightmost, lowest and highest points inside the cell (those of its end
    discs, all points of the stadium).

    :param start: Projected segment starts, shape (k, 2).
    :param end: Projected segment ends, shape (k, 2).
    :param radius: Radii, shape (k,).
    :param edge_lo: Cuts at the cell edges, left ends, shape (c + 1, k) (``lo > hi``: none).
    :param edge_hi: Right ends, shape (c + 1, k).
    :param first_row: Index of the first cell in the ROI's rows.
    :param step: Row spacing [m].
    :return: ``((lo, hi), (lo, hi))``: inner and outer intervals, shape (c, k) each.
    """
    present = edge_lo <= edge_hi
    both = present[:-1] & present[1:]
    inner_lo = np.where(both, np.maximum(edge_lo[:-1], edge_lo[1:]), np.inf)
    inner_hi = np.where(both, np.minimum(edge_hi[:-1], edge_hi[1:]), -np.inf)
    masked_lo = np.where(present, edge_lo, np.inf)
    masked_hi = np.where(present, edge_hi, -np.inf)
    outer_lo = np.minimum(masked_lo[:-1], masked_lo[1:])
    outer_hi = np.maximum(masked_hi[:-1], masked_hi[1:])
    columns = np.arange(radius.size)
    extremes = []  # points of the stadium: its end discs' leftmost, rightmost, lowest, highest
    for centre in (start, end):
        for axis in (0, 1):
            for sign in (-1.0, 1.0):
                point = centre.copy()
                point[:, axis] += sign * radius
                extremes.append(point)
    for point in extremes:
        cell = np.floor(point[:, 1] / step).astype(np.int64) - first_row
        inside = (cell >= 0) & (cell < outer_lo.shape[0])
        np.minimum.at(outer_lo, (cell[inside], columns[inside]), point[inside, 0])
        np.maximum.at(outer_hi, (cell[inside], columns[inside]), point[inside, 0])
    return (inner_lo, inner_hi), (outer_lo, outer_hi)


__all__ = [
    'Coverage',
    'DEFAULT_ROWS',
    'RegionOfInterest',
    'TaskPlane',
    'covered_fraction',
]
