"""
Synthetic Xsens MVN streams for tests and benchmarks: MXTP02 datagrams of a given pose.

:func:`build_mxtp02_datagrams` encodes one sample the way MVN sends it, and
:func:`t_pose_segments` gives a T-pose to encode; the latency bench and the tests of the parser
and of the skeleton node stream them.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_integer
from pic_ros.exceptions import ConfigError
from pic_ros.trackers.xsens_wire import (
    DATAGRAM_INDEX_MASK,
    HEADER_SIZE,
    ITEM_DTYPE,
    ITEM_SIZE,
    MAX_UDP_PAYLOAD,
    MESSAGE_TYPE_POSE_QUATERNION,
    SEGMENT_COUNT,
    XsensHeader,
)

FloatArray = npt.NDArray[np.float64]

DEFAULT_MAX_PAYLOAD: Final = 1472 - HEADER_SIZE
"""
Default payload per datagram [bytes] of :func:`build_mxtp02_datagrams` (1448).

The whole datagram then fits a 1500-byte Ethernet MTU (1472 bytes of UDP payload), and the 23
segments (736 bytes) go in one datagram.
"""


def build_mxtp02_datagrams(
    sample_counter: int,
    time_code_ms: int,
    positions: npt.ArrayLike,
    quaternions: npt.ArrayLike,
    character_id: int = 0,
    max_payload: int = DEFAULT_MAX_PAYLOAD,
) -> list[bytes]:
    """
    Encode one sample as MXTP02 datagrams, for tests and benchmarks.

    Segments go in id order, ``max_payload // 32`` per datagram; datagram ``k`` has index ``k``
    and the last one has bit 7 set (a single datagram has counter ``0x80``). The header declares
    23 body segments, no props, no fingers. Values are written as given (float32, big-endian),
    even NaN or non-unit quaternions, so that tests can build bad input.

    :param sample_counter: Sample counter, uint32.
    :param time_code_ms: Time code [ms], uint32.
    :param positions: Segment origins, shape (23, 3), [m], MVN Z-up frame, rows by segment id.
    :param quaternions: Segment orientations, shape (23, 4), (w, x, y, z).
    :param character_id: Character id, 0..255.
    :param max_payload: Largest payload per datagram [bytes], 32..65483.
    :return: The datagrams in index order.
    :raises ConfigError: On a wrong shape, an integer out of range, or more than 128 datagrams.
    """
    check_integer('sample_counter', sample_counter, 0, 0xFFFFFFFF)
    check_integer('time_code_ms', time_code_ms, 0, 0xFFFFFFFF)
    check_integer('character_id', character_id, 0, 0xFF)
    check_integer('max_payload', max_payload, ITEM_SIZE, MAX_UDP_PAYLOAD - HEADER_SIZE)
    points = np.asarray(positions, dtype=np.float64)
    rotations = np.asarray(quaternions, dtype=np.float64)
    if points.shape != (SEGMENT_COUNT, 3) or rotations.shape != (SEGMENT_COUNT, 4):
        raise ConfigError(
            f'positions and quaternions must have shapes ({SEGMENT_COUNT}, 3) and '
            f'({SEGMENT_COUNT}, 4), got {points.shape} and {rotations.shape}'
        )
    items = np.zeros(SEGMENT_COUNT, dtype=ITEM_DTYPE)
    items['segment'] = np.arange(1, SEGMENT_COUNT + 1)
    with np.errstate(over='ignore', invalid='ignore'):
        items['position'] = points
        items['quaternion'] = rotations
    per_datagram = max_payload // ITEM_SIZE
    chunks = [items[start:start + per_datagram] for start in range(0, SEGMENT_COUNT, per_datagram)]
    if len(chunks) > DATAGRAM_INDEX_MASK + 1:
        raise ConfigError(f'max_payload {max_payload} needs more than 128 datagrams')
    datagrams = []
    for index, chunk in enumerate(chunks):
        header = XsensHeader(
            message_type=MESSAGE_TYPE_POSE_QUATERNION,
            sample_counter=sample_counter,
            datagram_index=index,
            is_last_datagram=index == len(chunks) - 1,
            item_count=len(chunk),
            time_code_ms=time_code_ms,
            character_id=character_id,
            body_segment_count=SEGMENT_COUNT,
            prop_count=0,
            finger_segment_count=0,
            reserved=0,
            payload_size=len(chunk) * ITEM_SIZE,
        )
        datagrams.append(header.to_bytes() + chunk.tobytes())
    return datagrams


NULL_POSE: Final = np.array([
    (0.0, 0.0, 1.052),
    (-0.013, 0.0, 1.165),
    (-0.013, 0.0, 1.290),
    (-0.012, 0.0, 1.405),
    (-0.012, 0.0, 1.520),
    (-0.012, 0.0, 1.680),
    (-0.013, 0.0, 1.787),
    (-0.012, -0.035, 1.610),
    (-0.012, -0.197, 1.610),
    (-0.012, -0.542, 1.610),
    (-0.012, -0.824, 1.610),
    (-0.012, 0.035, 1.610),
    (-0.012, 0.197, 1.610),
    (-0.012, 0.542, 1.610),
    (-0.012, 0.824, 1.610),
    (0.0, -0.092, 1.052),
    (0.0, -0.092, 0.575),
    (0.0, -0.092, 0.109),
    (0.201, -0.092, 0.020),
    (0.0, 0.092, 1.052),
    (0.0, 0.092, 0.575),
    (0.0, 0.092, 0.109),
    (0.201, 0.092, 0.020),
])


def t_pose_segments() -> tuple[FloatArray, FloatArray]:
    """
    Return a T-pose (MVN null pose) facing +x, for tests and benchmarks.

    Positions are the null-pose segment origins decoded from a real MVN type-13 packet
    (``docs/interfaces.md#xsens-mvn``): arms straight out sideways at 1.61 m, left side at
    +y, toes at +x; upper arms 0.345 m, forearms 0.282 m. Orientations are identity, segment
    frames aligned with the world as in the null pose.

    :return: ``(positions, quaternions)``: new arrays of shapes (23, 3) [m] in the MVN Z-up
        frame and (23, 4) (w, x, y, z), rows by segment id.
    """
    quaternions = np.zeros((SEGMENT_COUNT, 4))
    quaternions[:, 0] = 1.0
    return NULL_POSE.copy(), quaternions
