"""
The body-centred human frame.

Defined in ``docs/method.md#body-centred-human-frame-body-ros-frame-pic_human``. Origin at the
chest (midpoint of the shoulders); y along the shoulder line to the person's left; z up along the
spine (pelvis -> chest), made perpendicular to y; x = y x z, forward out of the chest. When the
pelvis or chest is missing, the tracker's up axis stands in for the spine. This removes the camera
placement: every tracker looks the same downstream, and the arms are expressed relative to the
torso, as a robot with a fixed torso must copy them.

:func:`footprint` keeps what the body frame removes: where the person stands and which way they
face on the tracker's floor plane (the base follower's input), and how high their chest is (the
torso lift's input, :mod:`pic_ros.correspondence.torso`).
"""

from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import SkeletonError
from pic_ros.skeleton import HumanJoint, MIN_BONE_LENGTH, SkeletonFrame

FloatArray = npt.NDArray[np.float64]

_TRACKER_UP = np.array([0.0, 0.0, 1.0])


def body_axes(frame: SkeletonFrame) -> tuple[FloatArray, FloatArray]:
    """
    Compute the body frame of a tracker-frame skeleton.

    :param frame: Skeleton in the ``tracker`` frame.
    :return: ``(rotation, origin)``: rotation tracker <- body, shape (3, 3), whose columns are the
        body x, y, z axes in tracker coordinates; origin (chest), shape (3,), [m], tracker frame.
    :raises SkeletonError: If a shoulder is missing, the shoulders coincide, or the spine is
        parallel to the shoulder line.
    """
    valid = frame.valid
    if not (valid[HumanJoint.SHOULDER_LEFT] and valid[HumanJoint.SHOULDER_RIGHT]):
        raise SkeletonError('both shoulders are needed for the body frame')
    positions = frame.positions
    left = positions[HumanJoint.SHOULDER_LEFT]
    right = positions[HumanJoint.SHOULDER_RIGHT]
    across = left - right
    width = _norm(across)
    if width < MIN_BONE_LENGTH:
        raise SkeletonError('the shoulders coincide')
    y_axis = across / width
    if valid[HumanJoint.PELVIS] and valid[HumanJoint.SPINE_CHEST]:
        up = positions[HumanJoint.SPINE_CHEST] - positions[HumanJoint.PELVIS]
    else:
        up = _TRACKER_UP
    z_axis = up - float(up @ y_axis) * y_axis
    height = _norm(z_axis)
    if height < 1e-6 * max(_norm(up), 1.0):
        raise SkeletonError('the spine is parallel to the shoulder line')
    z_axis = z_axis / height
    # x = y cross z, with the products and differences of numpy.cross, on Python floats
    y0, y1, y2 = y_axis.tolist()
    z0, z1, z2 = z_axis.tolist()
    rotation = np.array((
        (y1 * z2 - y2 * z1, y0, z0),
        (y2 * z0 - y0 * z2, y1, z1),
        (y0 * z1 - y1 * z0, y2, z2),
    ))
    return rotation, 0.5 * (left + right)


def _norm(vector: FloatArray) -> float:
    """Return the length of a vector, shape (3,): what :func:`numpy.linalg.norm` computes."""
    return math.sqrt(float(vector.dot(vector)))


def to_body_frame(
    frame: SkeletonFrame, axes: tuple[FloatArray, FloatArray] | None = None
) -> SkeletonFrame:
    """
    Express a tracker-frame skeleton in the body-centred human frame.

    :param frame: Skeleton in the ``tracker`` frame.
    :param axes: :func:`body_axes` of ``frame`` when the caller has them (computed otherwise).
    :return: The same joints in the ``body`` frame [m]; invalid joints stay NaN.
    :raises SkeletonError: If the body frame cannot be built (see :func:`body_axes`), or if the
        frame is not in the tracker frame.
    """
    if frame.frame != 'tracker':
        raise SkeletonError(f"expected a 'tracker' frame skeleton, got {frame.frame!r}")
    rotation, origin = body_axes(frame) if axes is None else axes
    positions = (frame.positions - origin) @ rotation
    return SkeletonFrame(
        stamp=frame.stamp, positions=positions, valid=frame.valid.copy(), frame='body'
    )


@dataclass(frozen=True)
class Footprint:
    """
    Where a person stands and faces, on the tracker's floor plane (its x-y plane).

    The TIAGo paper's virtual footprint: the pelvis projected onto the floor, turned to the
    person's heading. It is taken in the ``tracker`` frame, so it assumes a level sensor (a
    camera's z is its own up, ``docs/method.md#tracker-frame-tracker``).

    :param stamp: Capture time of the skeleton [s].
    :param x: Pelvis x, tracker frame [m] (away from the sensor).
    :param y: Pelvis y, tracker frame [m] (the sensor's left).
    :param heading: Direction the chest faces, about the tracker's z axis from its x axis [rad],
        in (-pi, pi]; a person facing the sensor has a heading near pi.
    :param height: Chest (shoulder midpoint) height along the tracker's z axis [m], from the
        tracker's origin (so only its changes mean something); NaN when unknown.
    """

    stamp: float
    x: float
    y: float
    heading: float
    height: float = math.nan


def footprint(
    frame: SkeletonFrame, axes: tuple[FloatArray, FloatArray] | None = None
) -> Footprint | None:
    """
    Compute a person's footprint from a tracker-frame skeleton.

    The position is the pelvis'; the heading is the body frame's x axis (out of the chest,
    perpendicular to the shoulder line, :func:`body_axes`) projected onto the floor plane.

    :param frame: Skeleton in the ``tracker`` frame.
    :param axes: :func:`body_axes` of ``frame`` when the caller has them (computed otherwise).
    :return: The footprint, or None when the pelvis or a shoulder is missing, or the chest faces
        straight up or down (no heading on the floor).
    :raises SkeletonError: If the frame is not in the tracker frame.
    """
    if frame.frame != 'tracker':
        raise SkeletonError(f"expected a 'tracker' frame skeleton, got {frame.frame!r}")
    if not frame.valid[HumanJoint.PELVIS]:
        return None
    if axes is None:
        try:
            axes = body_axes(frame)
        except SkeletonError:
            return None
    rotation, chest = axes
    forward_x, forward_y = float(rotation[0, 0]), float(rotation[1, 0])
    if math.hypot(forward_x, forward_y) < 1e-3:
        return None
    x, y, z = frame.positions[HumanJoint.PELVIS].tolist()
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return None
    return Footprint(
        stamp=frame.stamp, x=x, y=y, heading=math.atan2(forward_y, forward_x),
        height=float(chest[2]),
    )
