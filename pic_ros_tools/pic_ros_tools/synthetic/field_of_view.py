"""
What a Kinect v2 sees: its depth field of view and range, and the joints that must stay in it.

Kinect v2 camera space: origin at the depth sensor, x to the sensor's left, y up, z along the
optical axis [m].
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.skeleton import BODY_JOINT_COUNT
from pic_ros.trackers.kinect_v2 import KINECT_V2_TO_HUMAN

BoolArray = npt.NDArray[np.bool_]

FIELD_OF_VIEW_DEG: Final[tuple[float, float]] = (70.0, 60.0)
"""Kinect v2 depth field of view [deg]: horizontal (about camera y), vertical (about x)."""

DEPTH_RANGE: Final[tuple[float, float]] = (0.5, 4.5)
"""Kinect v2 body-tracking depth range [m] along camera z."""

VIEW_JOINTS: Final[tuple[int, ...]] = tuple(
    sorted(index for index in KINECT_V2_TO_HUMAN[:BODY_JOINT_COUNT] if index is not None)
)
"""Kinect v2 indices of the 12 upper-body joints that must stay in view (the evaluated ones)."""


def in_field_of_view(points: npt.ArrayLike, margin_deg: float = 0.0) -> BoolArray:
    """
    Tell which camera-space points a Kinect v2 can see.

    A point is seen when its depth z lies in :data:`DEPTH_RANGE` and its horizontal and
    vertical angles from the optical axis, ``atan(|x| / z)`` and ``atan(|y| / z)``, are within
    half of :data:`FIELD_OF_VIEW_DEG` minus ``margin_deg``. NaN points are not seen.

    :param points: Points, shape (..., 3), [m], Kinect v2 camera space.
    :param margin_deg: Angular margin [deg] kept from the edges of the view, >= 0.
    :return: New boolean array, shape (...).
    :raises ConfigError: If the last axis does not have length 3 or the margin is negative.
    """
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != 3:
        raise ConfigError(f'points must have shape (..., 3), got {array.shape}')
    if not margin_deg >= 0.0:
        raise ConfigError(f'margin_deg must be >= 0, got {margin_deg!r}')
    x, y, z = array[..., 0], array[..., 1], array[..., 2]
    horizontal = math.tan(math.radians(0.5 * FIELD_OF_VIEW_DEG[0] - margin_deg))
    vertical = math.tan(math.radians(0.5 * FIELD_OF_VIEW_DEG[1] - margin_deg))
    with np.errstate(invalid='ignore'):
        seen = (z >= DEPTH_RANGE[0]) & (z <= DEPTH_RANGE[1])
        seen &= (np.abs(x) <= horizontal * z) & (np.abs(y) <= vertical * z)
    result: BoolArray = seen
    return result
