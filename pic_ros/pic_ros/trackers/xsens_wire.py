"""
Xsens MVN network stream, the wire format: MXTP datagram headers, segment ids, drop reasons.

MVN (Analyze / Animate) streams one UDP datagram per sample and character, or several when a
sample does not fit (``docs/interfaces.md#xsens-mvn``). Every datagram starts with a 24-byte
big-endian header:

======  ====  ===================================================================================
offset  size  field
======  ====  ===================================================================================
0       6     ID string: ``MXTP`` + 2 hex digits giving the message type (``MXTP02``)
6       4     sample counter (uint32), +1 per sampled frame (frames may be skipped)
10      1     datagram counter: bit 7 set = last datagram of the sample, low 7 bits = index
11      1     number of items in *this* datagram (uint8)
12      4     time code (uint32) [ms], MVN clock since the start of the recording
16      1     character (avatar) id
17      1     number of body segments of the character (23)
18      1     number of props
19      1     number of finger-tracking segments
20      2     reserved
22      2     payload size (uint16) [bytes after the header]
======  ====  ===================================================================================

Only message type ``02`` (position + quaternion) is decoded: per item an int32 segment id, three
float32 positions [m] and a float32 unit quaternion (w, x, y, z), 32 bytes, all big-endian. Its
world frame is MVN's Z-up frame, x forward (the person's facing direction at calibration), y left,
z up -- already REP-103, so positions are used as they come, and quaternions are taken **as is**:

:func:`parse_header` decodes the header; :class:`~pic_ros.trackers.xsens.XsensParser` assembles
samples from datagrams.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
import struct
from typing import Final

import numpy as np
from pic_ros.checks import check_integer
from pic_ros.exceptions import ConfigError

HEADER_SIZE: Final = 24
"""Size of the datagram header [bytes]."""

MAGIC: Final = b'MXTP'
"""First four bytes of every MVN datagram; two hex digits of the message type follow."""

MESSAGE_TYPE_POSE_QUATERNION: Final = '02'
"""Message type of ``MXTP02``: segment positions [m] and unit quaternions, Z-up."""

METADATA_MESSAGE_TYPES: Final = frozenset({'12', '13'})
"""Character meta data (``12``) and scaling data (``13``): sent beside ``02``, not decoded."""

ITEM_SIZE: Final = 32
"""Bytes per ``MXTP02`` item: int32 segment id, 3 float32 position, 4 float32 quaternion."""

LAST_DATAGRAM_FLAG: Final = 0x80
"""Bit of the datagram counter set on the last datagram of a sample."""

DATAGRAM_INDEX_MASK: Final = 0x7F
"""Bits of the datagram counter holding the datagram index within the sample."""

MAX_UDP_PAYLOAD: Final = 65507
"""Largest UDP payload over IPv4 [bytes]."""

SEGMENT_COUNT: Final = 23
"""Body segments of an MVN character (ids 1..23); other counts are not supported."""
_HEADER: Final = struct.Struct('>4s2sIBBIBBBBHH')
_HEX_DIGITS: Final = frozenset(b'0123456789ABCDEFabcdef')
_HEADER_LIMITS: Final = (
    ('sample_counter', 0xFFFFFFFF),
    ('datagram_index', DATAGRAM_INDEX_MASK),
    ('item_count', 0xFF),
    ('time_code_ms', 0xFFFFFFFF),
    ('character_id', 0xFF),
    ('body_segment_count', 0xFF),
    ('prop_count', 0xFF),
    ('finger_segment_count', 0xFF),
    ('reserved', 0xFFFF),
    ('payload_size', 0xFFFF),
)
ITEM_DTYPE: Final = np.dtype(
    [('segment', '>i4'), ('position', '>f4', (3,)), ('quaternion', '>f4', (4,))]
)
"""Numpy layout of one payload item: segment id, position [m], quaternion (w, x, y, z)."""


class XsensSegment(enum.IntEnum):
    """MVN body segments; the value is the segment id on the wire (1..23)."""

    PELVIS = 1
    L5 = 2
    L3 = 3
    T12 = 4
    T8 = 5
    NECK = 6
    HEAD = 7
    RIGHT_SHOULDER = 8
    RIGHT_UPPER_ARM = 9
    RIGHT_FORE_ARM = 10
    RIGHT_HAND = 11
    LEFT_SHOULDER = 12
    LEFT_UPPER_ARM = 13
    LEFT_FORE_ARM = 14
    LEFT_HAND = 15
    RIGHT_UPPER_LEG = 16
    RIGHT_LOWER_LEG = 17
    RIGHT_FOOT = 18
    RIGHT_TOE = 19
    LEFT_UPPER_LEG = 20
    LEFT_LOWER_LEG = 21
    LEFT_FOOT = 22
    LEFT_TOE = 23


SEGMENT_NAMES: Final[tuple[str, ...]] = (
    'Pelvis',
    'L5',
    'L3',
    'T12',
    'T8',
    'Neck',
    'Head',
    'RightShoulder',
    'RightUpperArm',
    'RightForeArm',
    'RightHand',
    'LeftShoulder',
    'LeftUpperArm',
    'LeftForeArm',
    'LeftHand',
    'RightUpperLeg',
    'RightLowerLeg',
    'RightFoot',
    'RightToe',
    'LeftUpperLeg',
    'LeftLowerLeg',
    'LeftFoot',
    'LeftToe',
)
"""MVN segment names (as in the type-13 scaling data); entry ``i`` names segment id ``i + 1``."""


class XsensDropReason(enum.Enum):
    """
    Why :class:`XsensParser` dropped a datagram or a sample.

    Each count is one event: a datagram, except ``EVICTED`` and the sample-level ``MALFORMED``
    and ``STALE`` cases, which count an incomplete sample (the datagrams it had are lost with it).

    - ``WRONG_MAGIC``: the ID string is not ``MXTP`` + two hex digits.
    - ``UNKNOWN_TYPE``: a message type other than ``02`` and the meta-data types (e.g. ``01``
      Euler, ``03`` markers, ``20`` joint angles): MVN is streaming something not decoded here.
    - ``METADATA``: character meta data or scaling data (``12``, ``13``); normal, ignored.
    - ``TRUNCATED``: shorter than the header, or than the header's payload size.
    - ``OVERSIZED``: longer than ``max_datagram_size``.
    - ``MALFORMED``: inconsistent header (trailing bytes, payload size not items x 32, no items,
      more items than the character has, not 23 body segments), segment id out of range or
      repeated, non-finite value, quaternion norm off 1 by more than the tolerance, a datagram
      that disagrees with the others of its sample (time code, counts, datagram indices), or a
      sample whose datagrams are all there but not all of its items.
    - ``OTHER_CHARACTER``: a character other than the followed one.
    - ``DUPLICATE``: a datagram index already received for the pending sample, or a sample
      counter equal to the last sample returned.
    - ``STALE``: a sample counter behind the last sample returned (by at most
      ``reorder_window``), or a pending sample overtaken by a later completed one.
    - ``EVICTED``: a pending sample discarded, incomplete, for lack of room
      (``max_pending_samples``), after ``pending_timeout``, or at a stream restart.
    """

    WRONG_MAGIC = 'wrong_magic'
    UNKNOWN_TYPE = 'unknown_type'
    METADATA = 'metadata'
    TRUNCATED = 'truncated'
    OVERSIZED = 'oversized'
    MALFORMED = 'malformed'
    OTHER_CHARACTER = 'other_character'
    DUPLICATE = 'duplicate'
    STALE = 'stale'
    EVICTED = 'evicted'


@dataclass(frozen=True)
class XsensHeader:
    """
    The 24-byte header of an MVN datagram (big-endian on the wire).

    :param message_type: The two hex digits after ``MXTP``, upper case, e.g. ``'02'``.
    :param sample_counter: Sample number, uint32.
    :param datagram_index: Index of this datagram within its sample, 0..127.
    :param is_last_datagram: Whether bit 7 of the datagram counter is set.
    :param item_count: Items in this datagram, 0..255.
    :param time_code_ms: MVN time code [ms], uint32.
    :param character_id: Character (avatar) id, 0..255.
    :param body_segment_count: Body segments of the character, 0..255.
    :param prop_count: Props of the character, 0..255.
    :param finger_segment_count: Finger-tracking segments of the character, 0..255.
    :param reserved: The reserved uint16 (zero in practice; not checked).
    :param payload_size: Bytes after the header, uint16.
    :raises ConfigError: If a field does not fit its wire type.
    """

    message_type: str
    sample_counter: int
    datagram_index: int
    is_last_datagram: bool
    item_count: int
    time_code_ms: int
    character_id: int
    body_segment_count: int
    prop_count: int
    finger_segment_count: int
    reserved: int
    payload_size: int

    def __post_init__(self) -> None:
        code = self.message_type
        if not (isinstance(code, str) and len(code) == 2 and code == code.upper()
                and set(code.encode('ascii', 'replace')) <= _HEX_DIGITS):
            raise ConfigError(f'message_type must be two upper-case hex digits, got {code!r}')
        for name, high in _HEADER_LIMITS:
            value = getattr(self, name)
            # Runs per datagram: check_integer only when needed, for its error message.
            if type(value) is not int or not 0 <= value <= high:
                check_integer(name, value, 0, high)

    @property
    def total_item_count(self) -> int:
        """Return the items of a whole sample: body segments + props + finger segments."""
        return self.body_segment_count + self.prop_count + self.finger_segment_count

    @property
    def datagram_counter(self) -> int:
        """Return the datagram counter byte: the index, with bit 7 set on the last datagram."""
        return self.datagram_index | (LAST_DATAGRAM_FLAG if self.is_last_datagram else 0)

    def to_bytes(self) -> bytes:
        """
        Pack the header as it is sent.

        :return: 24 bytes, big-endian, the layout of the module docstring.
        """
        return _HEADER.pack(
            MAGIC, self.message_type.encode('ascii'), self.sample_counter, self.datagram_counter,
            self.item_count, self.time_code_ms, self.character_id, self.body_segment_count,
            self.prop_count, self.finger_segment_count, self.reserved, self.payload_size,
        )


def parse_header(datagram: bytes | bytearray | memoryview) -> XsensHeader | XsensDropReason:
    """
    Decode the header of a datagram, whatever its type.

    Only the header is looked at: payload consistency is :class:`XsensParser`'s business.

    :param datagram: A received datagram (any length).
    :return: The header, or ``WRONG_MAGIC`` if the bytes present contradict ``MXTP`` + two hex
        digits, or ``TRUNCATED`` if they agree but are fewer than :data:`HEADER_SIZE`.
    """
    prefix = bytes(datagram[:6])
    if prefix[:4] != MAGIC[:len(prefix)] or not set(prefix[4:]) <= _HEX_DIGITS:
        return XsensDropReason.WRONG_MAGIC
    if len(datagram) < HEADER_SIZE:
        return XsensDropReason.TRUNCATED
    (_, code, sample, counter, items, time_code, character, body, props, fingers, reserved,
     payload) = _HEADER.unpack_from(datagram)
    return XsensHeader(
        message_type=code.decode('ascii').upper(),
        sample_counter=sample,
        datagram_index=counter & DATAGRAM_INDEX_MASK,
        is_last_datagram=bool(counter & LAST_DATAGRAM_FLAG),
        item_count=items,
        time_code_ms=time_code,
        character_id=character,
        body_segment_count=body,
        prop_count=props,
        finger_segment_count=fingers,
        reserved=reserved,
        payload_size=payload,
    )
