"""
Xsens MVN as a tracker: complete samples to skeleton frames.

The datagrams are parsed by :class:`~pic_ros.trackers.xsens_parser.XsensParser` (the wire format
is in :mod:`pic_ros.trackers.xsens_wire`). :func:`sample_to_skeleton` maps a completed
:class:`~pic_ros.trackers.xsens_parser.XsensSample` to the
:class:`~pic_ros.skeleton.SkeletonFrame` rows. :class:`XsensTracker` is the
:class:`~pic_ros.trackers.base.TrackerSource` (registered as ``xsens_mvn``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import FACE_JOINTS, HumanJoint, JOINT_COUNT, make_frame, SkeletonFrame
from pic_ros.skeleton.face import face_points
from pic_ros.trackers.base import register_tracker, TrackerReading, TrackerSource, Transport
from pic_ros.trackers.xsens_parser import (
    XsensParser,
    XsensParserConfig,
    XsensSample,
    XsensStampSource,
)
from pic_ros.trackers.xsens_wire import (
    XsensSegment,
)

FloatArray = npt.NDArray[np.float64]

XSENS_TO_HUMAN: Final[Mapping[HumanJoint, XsensSegment]] = MappingProxyType({
    HumanJoint.PELVIS: XsensSegment.PELVIS,
    HumanJoint.SPINE_CHEST: XsensSegment.T8,
    HumanJoint.NECK: XsensSegment.NECK,
    HumanJoint.HEAD: XsensSegment.HEAD,
    HumanJoint.SHOULDER_LEFT: XsensSegment.LEFT_UPPER_ARM,
    HumanJoint.ELBOW_LEFT: XsensSegment.LEFT_FORE_ARM,
    HumanJoint.WRIST_LEFT: XsensSegment.LEFT_HAND,
    HumanJoint.SHOULDER_RIGHT: XsensSegment.RIGHT_UPPER_ARM,
    HumanJoint.ELBOW_RIGHT: XsensSegment.RIGHT_FORE_ARM,
    HumanJoint.WRIST_RIGHT: XsensSegment.RIGHT_HAND,
})
"""
Segment whose *origin* gives each :class:`HumanJoint` row.

A segment's origin is its proximal joint: the upper arm's origin is the glenohumeral joint (the
``*Shoulder`` segments are the clavicles, whose origins sit near the sternum), the forearm's the
elbow, the hand's the wrist. ``HAND_LEFT`` and ``HAND_RIGHT`` are absent: the hand's far end is no
segment origin, and locating it would need the hand length from the scaling data (type 13) and the
hand orientation -- an estimate, not a measurement -- so those rows are left invalid. So are the
hand tips and thumbs (no finger segments without gloves). The face rows are made from the head
segment's pose (:data:`XSENS_HEAD_TO_EARS`, :func:`xsens_face_points`).
"""

XSENS_HEAD_TO_EARS: Final[FloatArray] = np.array([0.01, 0.0, 0.025])
"""
Midpoint of the ears in the MVN ``Head`` segment frame [m], read-only.

The head segment's origin is its proximal joint, the head-neck joint at the base of the skull
(MVN's ``c1_head``, above the first cervical vertebra); the ear canals lie about 2-3 cm above it
and about 1 cm in front. Only the face's *orientation* matters to the head estimator; this offset
only keeps the made-up face points where a camera tracker would put them.
"""
XSENS_HEAD_TO_EARS.setflags(write=False)


def quaternion_to_matrix(quaternion: npt.ArrayLike) -> FloatArray:
    """
    Convert a unit quaternion to a rotation matrix.

    :param quaternion: ``(w, x, y, z)``, shape (4,); normalised here.
    :return: Rotation, shape (3, 3) (for an MVN segment: world <- segment).
    """
    w, x, y, z = np.asarray(quaternion, dtype=np.float64) / np.linalg.norm(quaternion)
    return np.array([
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
        [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
        [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
    ])


def xsens_face_points(sample: XsensSample) -> FloatArray:
    """
    Make the nose and ear points from the pose of the ``Head`` segment.

    MVN segment frames are aligned with the world frame in the calibration (null) pose: x forward,
    y to the person's left, z up (``docs/interfaces.md``, Xsens MVN) -- the head frame of
    :mod:`pic_ros.skeleton.face` for a head held upright. The median face of
    :data:`~pic_ros.skeleton.face.FACE_OFFSETS` is placed with its ear midpoint at
    :data:`XSENS_HEAD_TO_EARS`, so the head estimator reads the head segment's own yaw and pitch.

    :param sample: A completed sample.
    :return: Nose, left ear, right ear, shape (3, 3), [m], MVN Z-up world frame.
    """
    index = int(XsensSegment.HEAD) - 1
    rotation = quaternion_to_matrix(sample.quaternions[index])
    ears = sample.positions[index] + rotation @ XSENS_HEAD_TO_EARS
    return face_points(ears, rotation)


def sample_to_skeleton(
    sample: XsensSample, stamp_source: XsensStampSource = XsensStampSource.RECEIVE_TIME
) -> SkeletonFrame:
    """
    Map a sample to the :class:`HumanJoint` rows.

    The body rows come from :data:`XSENS_TO_HUMAN`, the face rows from
    :func:`xsens_face_points`.

    The ``'tracker'`` frame of an Xsens skeleton is the MVN Z-up world frame (x forward as at
    calibration, y left, z up), positions unchanged. The hands, hand tips and thumbs are invalid
    (see :data:`XSENS_TO_HUMAN`); a non-finite segment would make its row invalid too.

    Stamp: ``RECEIVE_TIME`` (default) uses :attr:`XsensSample.receive_time`, the host-clock time
    the sample arrived -- for a live node the best available capture time on the ROS clock (the
    stream adds MVN's processing and network delay, typically milliseconds), comparable with
    other ROS stamps and timeouts. ``TIME_CODE`` uses the MVN time code, the true capture clock
    but relative to the recording start and on MVN's machine: right for offline analysis of one
    stream, wrong for comparing with ROS time.

    :param sample: A completed sample.
    :param stamp_source: Which clock gives the frame's stamp.
    :return: Frame in the ``'tracker'`` frame, [m], stamp [s]; hand, hand tip and thumb rows NaN
        and invalid.
    """
    positions = np.full((JOINT_COUNT, 3), np.nan)
    for joint, segment in XSENS_TO_HUMAN.items():
        positions[joint] = sample.segment_position(segment)
    positions[list(FACE_JOINTS)] = xsens_face_points(sample)
    valid = np.zeros(JOINT_COUNT, dtype=bool)
    valid[[int(joint) for joint in XSENS_TO_HUMAN]] = True
    valid[list(FACE_JOINTS)] = True
    if stamp_source is XsensStampSource.TIME_CODE:
        stamp = sample.time_code
    else:
        stamp = sample.receive_time
    return make_frame(stamp, positions, valid, frame='tracker')


XSENS_CHARACTER = ParameterDef(
    'xsens_character', -1,
    'Xsens MVN character (avatar) id to follow; -1 follows the first seen', low=-1, high=255,
    read_only=True,
)
"""The skeleton node's choice of MVN character (:attr:`XsensParserConfig.character_id`)."""


class XsensTracker(TrackerSource):
    """
    Xsens MVN: MXTP02 datagrams in, the followed character's skeleton out.

    Stamps are the receive times (:attr:`XsensStampSource.RECEIVE_TIME`): MVN's time code runs
    on the MVN machine's clock, not the node's. The body id of the reading is the character id.

    :param config: Parser settings.
    """

    transport = Transport.UDP

    def __init__(self, config: XsensParserConfig | None = None) -> None:
        super().__init__('xsens_mvn')
        self.parser = XsensParser(config)

    @property
    def max_message_size(self) -> int:
        """Return the receive size: one byte more than the longest accepted datagram [bytes]."""
        return self.parser.receive_buffer_size

    def decode(self, message: Any, receive_time: float) -> TrackerReading | None:
        """
        Feed one datagram to the parser.

        :param message: The datagram's bytes.
        :param receive_time: When it was received [s], the node's clock.
        :return: The character's skeleton when the datagram completes a sample, else None.
        """
        sample = self.parser.feed(message, receive_time)
        if sample is None:
            return None
        frame = sample_to_skeleton(sample, XsensStampSource.RECEIVE_TIME)
        return TrackerReading(frame.stamp, {sample.character_id: frame}, sample.receive_time)

    def status(self) -> dict[str, int | float | str]:
        """
        Return the parser's counters.

        :return: ``lost_upstream`` (samples missing from the sample counter's sequence),
            ``xsens_datagrams`` fed, ``xsens_samples`` returned, ``xsens_pending`` incomplete
            samples held, ``xsens_restarts`` of the sample counter and
            ``xsens_dropped_<reason>`` per drop reason.
        """
        values: dict[str, int | float | str] = {
            'lost_upstream': self.parser.gaps.lost,
            'xsens_datagrams': self.parser.received_count,
            'xsens_samples': self.parser.sample_count,
            'xsens_pending': self.parser.pending_count,
            'xsens_restarts': self.parser.restart_count,
        }
        values.update({
            f'xsens_dropped_{reason.value}': count
            for reason, count in self.parser.drop_counts.items()
        })
        return values

    def reset(self) -> None:
        """Forget pending samples and the followed character (counters kept)."""
        self.parser.reset()


def _make_xsens(options: Mapping[str, Any]) -> TrackerSource:
    character = int(XSENS_CHARACTER.check(options.get('xsens_character', -1)))
    return XsensTracker(XsensParserConfig(character_id=None if character < 0 else character))


register_tracker('xsens_mvn', _make_xsens)
