"""
The face geometry shared by the head estimator and the trackers that have no face points.

One rigid *head frame*: origin at the midpoint of the ears (the two tragia), y along the ear axis
to the person's left, x forward, perpendicular to y and level with the ears when the head is
upright (the Frankfort horizontal: the tragion and the lowest point of the eye socket are level),
z = x cross y, up; metres. In it the ears are at ``(0, +-EAR_HALF_WIDTH, 0)`` and the nose tip at
``(NOSE_FORWARD, 0, -NOSE_DROP)``.

:func:`pic_ros.human.head.head_angles` reads only the *rest angle* of the ear-midpoint -> nose line
below the head's horizontal (:data:`NOSE_REST_PITCH`), so it works for any head size; the
lengths are used where face points must be made: Xsens MVN streams the head segment's pose but
no face points, and :func:`face_points` places a median adult face on it, so that one estimator
serves every tracker.

Sources of the constants: adult craniofacial norms (e.g. Farkas, *Anthropometry of the Head and
Face*, 1994; the ANSUR II survey for the bitragion breadth), rounded. Bitragion breadth about
0.145 m (women about 0.14, men about 0.15); the nose tip (pronasale) is about 0.12 m in front of
the tragion and about 0.025 m below the Frankfort plane (the nose tip lies about 3.5 cm below the
nasion, which is about 1 cm above the lower rim of the eye socket). These are population values,
not tuned to a recording: a person's own nose drop differs by a few millimetres, which biases that
person's pitch by a few degrees (``docs/method.md#head-and-hands``).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import SkeletonError

FloatArray = npt.NDArray[np.float64]

EAR_HALF_WIDTH: Final = 0.072
"""Half the distance between the ears (half the bitragion breadth of a median adult) [m]."""

NOSE_FORWARD: Final = 0.12
"""Distance of the nose tip in front of the ear axis, head frame x [m]."""

NOSE_DROP: Final = 0.025
"""Distance of the nose tip below the ears' level (the Frankfort plane), head frame z [m]."""

NOSE_REST_PITCH: Final = math.atan2(NOSE_DROP, NOSE_FORWARD)
"""
Angle of the ear-midpoint -> nose-tip line below the head's horizontal [rad] (about 11.8 deg).

The head estimator subtracts it: a person looking straight ahead has pitch 0.
"""

FACE_OFFSETS: Final[FloatArray] = np.array(
    [
        [NOSE_FORWARD, 0.0, -NOSE_DROP],
        [0.0, EAR_HALF_WIDTH, 0.0],
        [0.0, -EAR_HALF_WIDTH, 0.0],
    ]
)
"""
Nose, left ear and right ear in the head frame, shape (3, 3), [m], read-only.

Rows in :data:`~pic_ros.skeleton.FACE_JOINTS` order.
"""
FACE_OFFSETS.setflags(write=False)


def face_points(ear_midpoint: npt.ArrayLike, rotation: npt.ArrayLike) -> FloatArray:
    """
    Place the median face (:data:`FACE_OFFSETS`) on a head pose.

    :param ear_midpoint: Origin of the head frame (the midpoint of the ears), shape (3,), [m],
        any frame F.
    :param rotation: Rotation F <- head frame, shape (3, 3) (columns: the head's forward, left
        and up axes in F).
    :return: Nose, left ear and right ear, shape (3, 3), [m], frame F.
    :raises SkeletonError: If the shapes are wrong.
    """
    origin = np.asarray(ear_midpoint, dtype=np.float64)
    matrix = np.asarray(rotation, dtype=np.float64)
    if origin.shape != (3,) or matrix.shape != (3, 3):
        raise SkeletonError(
            f'face_points needs a (3,) origin and a (3, 3) rotation, got {origin.shape} and '
            f'{matrix.shape}'
        )
    points: FloatArray = origin + FACE_OFFSETS @ matrix.T
    return points
