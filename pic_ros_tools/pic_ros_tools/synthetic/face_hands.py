"""
Face and hand geometry of a synthetic person, varying across people.

:func:`face_hand_geometry` draws a :class:`FaceHandGeometry` for a
:class:`~pic_ros_tools.synthetic.people.PersonSpec` from its seed (its own random stream,
:data:`FACE_HAND_STREAM`, so the existing takes of the suite do not change), within
:data:`FACE_HAND_RANGES`. Lengths in metres, angles in degrees.

Face (head frame of :mod:`pic_ros.skeleton.face`: origin at the ears' midpoint, x forward, y left,
z up): the ears at ``(0, +-ear_half_width, 0)``, the nose tip at ``(nose_forward, 0,
-nose_drop)``. ``head_size`` scales the median adult's ear width and nose depth (heads vary
little with stature); ``nose_drop`` varies on its own, so the rest angle of the nose below the
ears differs between people by about +-3 degrees around the median of
:data:`~pic_ros.skeleton.face.NOSE_REST_PITCH`: the head estimator cannot know it, and the suite
measures what that costs.

Hands (:meth:`FaceHandGeometry.hand_points`): along the forearm's axis ``u`` (wrist -> hand), the
palm normal ``n`` and the thumb side ``t``; ``L`` the hand length (wrist crease to the middle
fingertip, ``hand_length_ratio`` times the height, about 0.19 m for a 1.75 m person). The
tracker's hand joint sits at ``0.5 L`` along ``u`` (mid-palm, as the Azure Kinect puts it). Open
hand: the fingers extended but relaxed by ``open_curl`` (0: straight at ``L u``, 1: a fist) and
the thumb tip at ``0.55 L`` spread by ``thumb_spread_deg`` from ``u`` towards ``t``. Fist: the
finger tips curled to ``closed_curl`` of the way to ``0.62 L u + 0.22 L n`` (the front of the
fist, towards the palm) and the thumb tip over the middle phalanges at
``0.55 L u + 0.12 L n + 0.06 L t``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.skeleton.face import EAR_HALF_WIDTH, NOSE_FORWARD

FloatArray = npt.NDArray[np.float64]

FACE_HAND_STREAM: Final = 3
"""Stream of ``np.random.default_rng([seed, stream])`` that draws a person's face and hands."""

FACE_HAND_RANGES: Final[Mapping[str, tuple[float, float]]] = MappingProxyType(
    {
        'head_size': (0.9, 1.1),
        'nose_drop': (0.018, 0.032),
        'hand_length_ratio': (0.100, 0.118),
        'thumb_spread_deg': (40.0, 60.0),
        'open_curl': (0.0, 0.15),
        'closed_curl': (0.85, 1.0),
    }
)
"""
Closed range of every :class:`FaceHandGeometry` field.

Head breadth and nose position vary by a few percent between adults (bitragion breadth about
0.13-0.16 m); hand length is 0.10-0.12 of the stature; a deliberately opened hand spreads the
thumb by 40-60 degrees from the fingers with them straight or nearly so; a fist curls them fully
or nearly.
"""

_HAND_JOINT: Final = 0.5  # tracker hand joint along the hand, fraction of L
_THUMB_REACH: Final = 0.55  # wrist -> thumb tip, fraction of L
_FIST_TIP: Final = np.array([0.62, 0.22, 0.0])  # (u, n, t) of the fist's finger tips, x L
_FIST_THUMB: Final = np.array([0.55, 0.12, 0.06])  # (u, n, t) of the thumb tip in a fist, x L


@dataclass(frozen=True)
class FaceHandGeometry:
    """
    A person's face and hands (ranges in :data:`FACE_HAND_RANGES`).

    :param head_size: Factor on the median ear width and nose depth.
    :param nose_drop: Nose tip below the ears' level [m].
    :param hand_length_ratio: Hand length over body height.
    :param thumb_spread_deg: Angle of the open hand's thumb from the fingers [deg].
    :param open_curl: Curl of the open hand's fingers, 0 straight, 1 a fist.
    :param closed_curl: Curl of the fist's fingers.
    """

    head_size: float
    nose_drop: float
    hand_length_ratio: float
    thumb_spread_deg: float
    open_curl: float
    closed_curl: float

    def face_offsets(self) -> FloatArray:
        """
        Return the nose, left ear and right ear in the head frame.

        :return: Shape (3, 3), [m], rows nose, left ear, right ear.
        """
        half = EAR_HALF_WIDTH * self.head_size
        return np.array(
            [[NOSE_FORWARD * self.head_size, 0.0, -self.nose_drop], [0.0, half, 0.0],
             [0.0, -half, 0.0]]
        )

    def hand_points(
        self, length: float, closure: FloatArray, axes: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Place the hand joint, hand tip and thumb tip relative to the wrist.

        :param length: Hand length L [m].
        :param closure: Per frame, shape (N,): 0 open, 1 closed (a transition in between).
        :param axes: Per frame, shape (N, 3, 3): rows u (along the hand), n (palm normal),
            t (thumb side), unit vectors in the output frame.
        :return: ``(hand, tip, thumb)`` offsets from the wrist, each shape (N, 3), [m].
        """
        spread = math.radians(self.thumb_spread_deg)
        straight = np.array([1.0, 0.0, 0.0])
        open_tip = straight + self.open_curl * (_FIST_TIP - straight)
        closed_tip = straight + self.closed_curl * (_FIST_TIP - straight)
        open_thumb = _THUMB_REACH * np.array([math.cos(spread), 0.0, math.sin(spread)])
        weight = closure[:, None]
        tip = (1.0 - weight) * open_tip + weight * closed_tip
        thumb = (1.0 - weight) * open_thumb + weight * _FIST_THUMB
        hand = np.broadcast_to(np.array([_HAND_JOINT, 0.0, 0.0]), tip.shape)

        def place(local: FloatArray) -> FloatArray:
            placed: FloatArray = length * np.einsum('nk,nkj->nj', local, axes)
            return placed

        return place(hand), place(tip), place(thumb)


def face_hand_geometry(seed: int) -> FaceHandGeometry:
    """
    Draw the face and hands of the person of a suite take, deterministically from its seed.

    :param seed: The take's seed (:attr:`~pic_ros_tools.synthetic.people.PersonSpec.seed`).
    :return: The geometry, every field uniform in its range of :data:`FACE_HAND_RANGES`.
    """
    rng = np.random.default_rng([seed, FACE_HAND_STREAM])
    values = {
        name: float(rng.uniform(low, high)) for name, (low, high) in FACE_HAND_RANGES.items()
    }
    return FaceHandGeometry(**values)
