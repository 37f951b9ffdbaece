"""
Plausibility of the extremity points: a bad face or finger point is invalidated alone.

The appended rows of :class:`~pic_ros.skeleton.HumanJoint` (nose, ears, hand tips, thumbs;
:data:`~pic_ros.skeleton.EXTREMITY_JOINTS`) are the trackers' least reliable points, and no
solver needs them: a frame is never dropped for them (the body rows are checked by
:class:`~pic_ros.trackers.frames.FrameValidator`). :func:`screen_extremities` invalidates, one by
one, the extremity points that are not finite or too far from their anchor:

- a face point farther than :data:`FACE_REACH` from the head joint (or with no valid head joint);
- a hand tip farther than :data:`HAND_REACH` from its hand joint, a thumb farther than that from
  its wrist -- their parents in the trackers' joint chains (K4ABT and Kinect v2 alike); the other
  of the two when the parent is invalid; neither valid: invalid. (The Kinect v2 wrist wanders:
  in the PIC recordings the hand tip is up to 0.33 m from the wrist but within 0.13 m of the
  hand joint.)

The limits are anthropometric upper bounds with a margin for tracker noise, the same for every
person: they only catch gross errors (a point on another body part or swapped between the
hands); the estimators check the finer geometry themselves, scale-free.
"""

from __future__ import annotations

import functools
from typing import Final

import numpy as np
from pic_ros.skeleton import FACE_JOINTS, HumanJoint, SkeletonFrame

FACE_REACH: Final = 0.25
"""
Farthest a nose or ear point may be from the head joint [m].

The longest adult heads (glabella to the back of the skull) are about 0.21 m, so no face point is
farther than that from any estimate of the head's centre; 0.04 m more for tracker noise. (The real
Azure Kinect recording has its nose 0.14-0.16 m from its head joint.)
"""

HAND_REACH: Final = 0.25
"""
Farthest a hand tip may be from its hand joint, or a thumb from its wrist [m].

The longest adult hands (wrist crease to the middle fingertip) are about 0.21 m; 0.04 m more for
tracker noise.
"""

_FINGERS: Final = (
    (HumanJoint.HAND_TIP_LEFT, HumanJoint.HAND_LEFT, HumanJoint.WRIST_LEFT),
    (HumanJoint.THUMB_LEFT, HumanJoint.WRIST_LEFT, HumanJoint.HAND_LEFT),
    (HumanJoint.HAND_TIP_RIGHT, HumanJoint.HAND_RIGHT, HumanJoint.WRIST_RIGHT),
    (HumanJoint.THUMB_RIGHT, HumanJoint.WRIST_RIGHT, HumanJoint.HAND_RIGHT),
)
"""Each finger point with its anchor (its tracker parent) and the fallback anchor."""


def _near(frame: SkeletonFrame, point: int, anchor: int, reach: float) -> bool:
    with np.errstate(over='ignore', invalid='ignore'):
        distance = float(np.linalg.norm(frame.positions[point] - frame.positions[anchor]))
    return distance <= reach  # False for NaN or inf


_CERTAIN: Final = 1e-9
"""
Relative margin of a squared distance from a reach's square beyond which it decides.

The squares are summed on Python floats, at most a few units in the last place from
:func:`numpy.linalg.norm`'s sum; a point this close to its reach is decided by :func:`_near`.
"""


def implausible_extremities(frame: SkeletonFrame) -> list[HumanJoint]:
    """
    List the valid extremity points that :func:`screen_extremities` would invalidate.

    :param frame: Skeleton, any frame, [m].
    :return: The joints, in :class:`~pic_ros.skeleton.HumanJoint` order.
    """
    points, anchors, reaches, unanchored = _checks(tuple(frame.valid.tolist()))
    bad = list(unanchored)
    if points:
        rows = frame.positions.tolist()
        for point, base, reach in zip(points, anchors, reaches):
            (x0, y0, z0), (x1, y1, z1) = rows[point], rows[base]
            x, y, z = x0 - x1, y0 - y1, z0 - z1
            square = x * x + y * y + z * z  # Python floats: inf or NaN, never a warning
            limit = reach * reach
            if square <= limit * (1.0 - _CERTAIN):
                continue  # near, whatever the rounding
            if square > limit * (1.0 + _CERTAIN) or not _near(frame, point, base, reach):
                bad.append(HumanJoint(point))  # far, or NaN (never near)
    return sorted(bad)


@functools.lru_cache(maxsize=64)
def _checks(
    valid: tuple[bool, ...]
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...], tuple[HumanJoint, ...]]:
    """
    Return what to check of a skeleton with these valid rows (a few patterns recur).

    :param valid: Validity per :class:`~pic_ros.skeleton.HumanJoint` row.
    :return: The extremity points to check, their anchors and reaches [m], and the valid
        points without a valid anchor (implausible whatever their place).
    """
    points: list[int] = []
    anchors: list[int] = []
    reaches: list[float] = []
    bad: list[HumanJoint] = []
    if valid[HumanJoint.HEAD]:
        for joint in FACE_JOINTS:
            if valid[joint]:
                points.append(joint)
                anchors.append(HumanJoint.HEAD)
                reaches.append(FACE_REACH)
    else:
        bad.extend(joint for joint in FACE_JOINTS if valid[joint])
    for joint, parent, other in _FINGERS:
        if not valid[joint]:
            continue
        anchor = parent if valid[parent] else other if valid[other] else None
        if anchor is None:
            bad.append(joint)
        else:
            points.append(joint)
            anchors.append(anchor)
            reaches.append(HAND_REACH)
    return tuple(points), tuple(anchors), tuple(reaches), tuple(bad)


def screen_extremities(frame: SkeletonFrame) -> SkeletonFrame:
    """
    Invalidate the implausible extremity points of a skeleton (the body rows are untouched).

    :param frame: Skeleton, any frame, [m], stamp [s].
    :return: ``frame`` itself when every valid extremity point is plausible, else a new frame
        (same stamp and frame name) with those points invalid and NaN.
    """
    bad = implausible_extremities(frame)
    if not bad:
        return frame
    positions = frame.positions.copy()
    valid = frame.valid.copy()
    positions[bad] = np.nan
    valid[bad] = False
    return SkeletonFrame(stamp=frame.stamp, positions=positions, valid=valid, frame=frame.frame)
