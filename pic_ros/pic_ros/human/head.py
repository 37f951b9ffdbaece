"""
Head yaw and pitch from the face points, for a robot's pan-tilt head.

:func:`head_angles` reads a body-frame skeleton (``docs/method.md#head-and-hands``): the ears give
the head's left-right axis and the nose its forward direction. With ``m`` the ears' midpoint,

1. ``y_h = (ear_left - ear_right) / |ear_left - ear_right|``;
2. ``f``: the part of ``nose - m`` perpendicular to ``y_h``, normalised;
3. the head's forward axis ``x_h`` is ``f`` turned *up* about ``y_h`` by the rest angle
   :data:`~pic_ros.skeleton.face.NOSE_REST_PITCH` (the nose tip sits below the ears' level when the
   head is upright), and ``z_h = x_h x y_h``;
4. the head rotation ``[x_h y_h z_h]`` is split as ``Rz(yaw) Ry(pitch) Rx(roll)`` about the body
   axes: yaw first about body z, then pitch about the turned y -- the joint order of a pan-tilt
   head. Roll is not returned.

Only directions between the three points are used, so the angles do not depend on the size of the
head or on where the tracker puts its head joint. The result is None when a point is invalid, and
when the points are implausible for a face (checked by ratios, so for any head size): the
nose-to-ear-midpoint distance must lie within :data:`NOSE_TO_EARS_RATIO` of the ear distance,
the nose must be off the ear axis by at least :data:`MIN_NOSE_OFF_AXIS_DEG`, and the ear axis
must be within :data:`MAX_EAR_AXIS_TILT_DEG` of horizontal.

Kinect v2 has no face points (:data:`~pic_ros.trackers.kinect_v2.KINECT_V2_TO_HUMAN`), so for
Kinect v2 skeletons :func:`head_angles` always returns None. Xsens MVN gets its face points from
the head segment's orientation (:func:`~pic_ros.trackers.xsens.xsens_face_points`), made with
the same face geometry, so the angles are the segment's own.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

import numpy as np
from pic_ros.exceptions import SkeletonError
from pic_ros.skeleton import HumanJoint, SkeletonFrame
from pic_ros.skeleton.face import NOSE_REST_PITCH

NOSE_TO_EARS_RATIO: Final = (0.35, 2.0)
"""
Accepted range of ``|nose - ear midpoint| / |ear_left - ear_right|`` (dimensionless).

A median face gives about 0.85 (:mod:`pic_ros.skeleton.face`: 0.123 m over 0.144 m; the real Azure
Kinect recording about 0.9). Outside 0.35-2 a point is on something other than that face.
"""

MIN_NOSE_OFF_AXIS_DEG: Final = 30.0
"""Smallest angle [deg] between the ear axis and the ear-midpoint -> nose line (about 90)."""

MAX_EAR_AXIS_TILT_DEG: Final = 60.0
"""
Largest angle [deg] of the ear axis from the body's horizontal plane (head roll).

A person tilts the head sideways by at most about 45 degrees; beyond 60 the ear points are wrong.
"""


@dataclass(frozen=True)
class HeadAngles:
    """
    Orientation of the head relative to the body, as a pan-tilt head would take it.

    :param yaw: Rotation about the body z axis [rad], positive when the person turns the head to
        their left, in (-pi, pi].
    :param pitch: Rotation about the turned body y axis [rad] (REP-103 right-hand rule), positive
        when the person looks down, in [-pi/2, pi/2].
    """

    yaw: float
    pitch: float


def head_angles(frame: SkeletonFrame) -> HeadAngles | None:
    """
    Compute the head's yaw and pitch from the nose and ears of a body-frame skeleton.

    :param frame: Skeleton in the ``'body'`` frame (x forward, y to the person's left, z up),
        [m]; only the rows NOSE, EAR_LEFT and EAR_RIGHT are read.
    :return: The angles [rad], or None when one of the three points is invalid or the points are
        implausible for a face (see the module docstring). Always None for Kinect v2, which has
        no face points.
    :raises SkeletonError: If the frame is not in the ``'body'`` frame.
    """
    if frame.frame != 'body':
        raise SkeletonError(f"head_angles needs a 'body' frame skeleton, got {frame.frame!r}")
    rows = [HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT]
    if not frame.valid[rows].all():
        return None
    nose, left, right = frame.positions[rows]
    if not np.all(np.isfinite(frame.positions[rows])):
        return None
    across = left - right
    width = float(np.linalg.norm(across))
    if not width > 0.0:
        return None
    y_axis = across / width
    middle = 0.5 * (left + right)
    ahead = nose - middle
    length = float(np.linalg.norm(ahead))
    low, high = NOSE_TO_EARS_RATIO
    if not low * width <= length <= high * width:
        return None
    forward = ahead - float(ahead @ y_axis) * y_axis
    if float(np.linalg.norm(forward)) < length * math.sin(math.radians(MIN_NOSE_OFF_AXIS_DEG)):
        return None
    if abs(float(y_axis[2])) > math.sin(math.radians(MAX_EAR_AXIS_TILT_DEG)):
        return None
    forward = forward / float(np.linalg.norm(forward))
    up = np.cross(forward, y_axis)
    # Turn the nose direction up about the ear axis by the rest angle: x_h = Ry_h(-rest) f.
    x_axis = math.cos(NOSE_REST_PITCH) * forward + math.sin(NOSE_REST_PITCH) * up
    yaw = math.atan2(float(x_axis[1]), float(x_axis[0]))
    pitch = math.asin(max(-1.0, min(1.0, -float(x_axis[2]))))
    return HeadAngles(yaw=yaw, pitch=pitch)
