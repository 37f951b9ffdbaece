"""
Read the marker ids and positions straight out of a serialized ``visualization_msgs/MarkerArray``.

rclpy turns a 32-marker MarkerArray into Python objects in 1-3 ms, most of which is spent on
fields the skeleton node never reads (colours, textures, meshes). This module walks the CDR bytes
(XCDR1, as ROS 2 middlewares serialize by default) and keeps only the header stamp, the frame id
and, per marker, its ``id`` and ``pose.position``. A marker's layout is set by its length fields;
the markers of one array (and of the arrays that follow) usually share it, and are then read in
one array operation instead of field by field (:func:`parse_marker_array`).

The layout is the ``Marker`` of ROS 2 Humble and later (with ``texture_resource``, ``texture``,
``uv_coordinates``, ``mesh_file``); older layouts (Foxy) fail the consistency checks, and callers
then fall back to regular deserialization. Any inconsistency raises :class:`MarkerCdrError`; the
parser never reads outside the buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
import struct
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import PicRosError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_ENCAPSULATION_LITTLE = (b'\x00\x01', b'\x00\x03')
_ENCAPSULATION_BIG = (b'\x00\x00', b'\x00\x02')
_MAX_MARKERS = 100_000


class MarkerCdrError(PicRosError, ValueError):
    """The bytes are not a MarkerArray in the expected layout."""


@dataclass(frozen=True)
class MarkerPositions:
    """
    What the skeleton node needs from one MarkerArray.

    :param stamp: Stamp of the first marker's header [s] (NaN for an empty array).
    :param frame_id: Frame of the first marker ('' for an empty array).
    :param ids: Marker ids, shape (N,).
    :param positions: Marker positions, shape (N, 3), in the markers' frame [m].
    """

    stamp: float
    frame_id: str
    ids: IntArray
    positions: FloatArray


class _Reader:
    """Cursor over a CDR payload; alignment is relative to the payload start (after 4 bytes)."""

    __slots__ = ('data', 'lengths', 'offset', 'prefix')

    def __init__(self, data: bytes, prefix: str) -> None:
        self.data = data
        self.offset = 4
        self.prefix = prefix
        self.lengths: list[int] = []
        """Offsets of the length fields read so far (string lengths, sequence counts)."""

    def align(self, size: int) -> None:
        shift = (self.offset - 4) % size
        if shift:
            self.offset += size - shift

    def need(self, size: int) -> None:
        if size < 0 or self.offset + size > len(self.data):
            raise MarkerCdrError('MarkerArray bytes end early')

    def uint32(self) -> int:
        self.align(4)
        self.need(4)
        value = struct.unpack_from(self.prefix + 'I', self.data, self.offset)[0]
        self.offset += 4
        return int(value)

    def length(self) -> int:
        """Read a string length or a sequence count, noting where it was."""
        self.align(4)
        self.lengths.append(self.offset)
        return self.uint32()

    def uint32_at(self, offset: int) -> int:
        """Read a uint32 at an offset already checked, leaving the cursor."""
        return int(struct.unpack_from(self.prefix + 'I', self.data, offset)[0])

    def int32(self) -> int:
        self.align(4)
        self.need(4)
        value = struct.unpack_from(self.prefix + 'i', self.data, self.offset)[0]
        self.offset += 4
        return int(value)

    def skip(self, size: int, alignment: int) -> None:
        self.align(alignment)
        self.need(size)
        self.offset += size

    def string(self) -> str:
        length = self.length()
        if length == 0:
            return ''
        self.need(length)
        raw = self.data[self.offset: self.offset + length]
        self.offset += length
        if raw[-1:] != b'\x00':
            raise MarkerCdrError('string without terminating NUL')
        return raw[:-1].decode('utf-8', errors='replace')

    def skip_string(self) -> None:
        length = self.length()
        self.need(length)
        self.offset += length

    def skip_sequence(self, element_size: int, alignment: int) -> None:
        count = self.length()
        if count:
            self.skip(count * element_size, alignment)

    def float64s(self, count: int) -> tuple[float, ...]:
        self.align(8)
        self.need(8 * count)
        values = struct.unpack_from(f'{self.prefix}{count}d', self.data, self.offset)
        self.offset += 8 * count
        return values


def _skip_header(reader: _Reader) -> None:
    reader.skip(8, 4)
    reader.skip_string()


class _Layout(NamedTuple):
    """Where one marker's fields lie, relative to the marker's first byte."""

    size: int
    """Bytes of the marker."""
    stride: int
    """Bytes from the marker to the next one (its size, aligned to 4: a marker starts with
    an int32)."""
    lengths: npt.NDArray[np.intp]
    """Its length fields (string lengths, sequence counts), as indices of 4-byte words (a
    length field is aligned to 4, and so is a marker)."""
    length_values: npt.NDArray[np.uint32]
    """Their values (as stored: compared, never interpreted)."""
    frame_nul: int | None
    """The terminating NUL of its header's frame id (None for an empty frame id)."""
    marker_id: int
    """Its ``id`` (int32)."""
    position: int
    """Its ``pose.position`` (three float64)."""


_FIRST = 8
"""Offset of the first marker: the encapsulation header and the marker count."""

_STAMP = struct.Struct('<iI'), struct.Struct('>iI')
"""A marker's header stamp (seconds, nanoseconds), at its start, little and big endian."""


class _LayoutMemory:
    """The layout of the last array's first marker: the next array's markers likely repeat it."""

    layout: _Layout | None = None


def _walk_marker(
    reader: _Reader, ids: IntArray, positions: FloatArray, index: int
) -> tuple[float, str, _Layout]:
    """
    Read one marker at the reader's offset into row ``index``; return its stamp, frame, layout.

    :raises MarkerCdrError: If the marker does not parse.
    """
    start = reader.offset
    first_length = len(reader.lengths)
    seconds = reader.int32()
    nanoseconds = reader.uint32()
    name = reader.string()
    frame_nul = reader.offset - 1 - start if reader.offset > reader.lengths[-1] + 4 else None
    reader.skip_string()  # ns
    ids[index] = reader.int32()
    id_offset = reader.offset - 4 - start
    reader.skip(8, 4)  # type, action
    pose = reader.float64s(7)
    position_offset = reader.offset - 56 - start
    positions[index] = pose[:3]
    reader.skip(24, 8)  # scale
    reader.skip(16, 4)  # color
    reader.skip(8, 4)  # lifetime
    reader.skip(1, 1)  # frame_locked
    reader.skip_sequence(24, 8)  # points
    reader.skip_sequence(16, 4)  # colors
    reader.skip_string()  # texture_resource
    _skip_header(reader)  # texture.header
    reader.skip_string()  # texture.format
    reader.skip_sequence(1, 1)  # texture.data
    reader.skip_sequence(8, 4)  # uv_coordinates
    reader.skip_string()  # text
    reader.skip_string()  # mesh_resource
    reader.skip_string()  # mesh_file.filename
    reader.skip_sequence(1, 1)  # mesh_file.data
    reader.skip(1, 1)  # mesh_use_embedded_materials
    lengths = (np.array(reader.lengths[first_length:], dtype=np.intp) - start) // 4
    size = reader.offset - start
    layout = _Layout(
        size=size,
        stride=size + (4 - (reader.offset - 4) % 4) % 4,
        lengths=lengths,
        length_values=np.frombuffer(
            reader.data, dtype=np.uint32, count=size // 4, offset=start
        )[lengths],
        frame_nul=frame_nul,
        marker_id=id_offset,
        position=position_offset,
    )
    return seconds + nanoseconds * 1e-9, name, layout


def _read_alike(
    reader: _Reader, start: int, layout: _Layout, ids: IntArray, positions: FloatArray
) -> bool:
    """
    Read the markers from ``start`` on at once when they all have the given layout.

    The layout of a marker is set by its length fields alone (every other field has a fixed
    size) and by its alignment, which repeats when the stride is a multiple of 8. A marker
    at the same alignment with the same length fields (and a NUL where its frame id ends) is
    walked exactly as the layout's marker was, so its id and position lie at the same offsets:
    they are read for all markers in one array operation, with the values the walk would read.
    Otherwise nothing is read.

    :param reader: Its data is read; its offset is set past the last marker when they are read.
    :param start: Offset of the first marker to read, at the alignment of the layout's marker.
    :param layout: The layout of a marker walked at that alignment.
    :param ids: Marker ids, the rows to fill (one per marker).
    :param positions: Marker positions, the rows to fill.
    :return: Whether the markers were read.
    """
    count = ids.shape[0]
    end = start + (count - 1) * layout.stride + layout.size
    if (count > 1 and layout.stride % 8) or end > len(reader.data):
        return False
    words: npt.NDArray[np.uint32] = np.ndarray(
        (count, layout.size // 4), dtype=np.uint32, buffer=reader.data, offset=start,
        strides=(layout.stride, 4),
    )
    if not (words[:, layout.lengths] == layout.length_values).all():
        return False
    rows: npt.NDArray[np.uint8] = np.ndarray(
        (count, layout.size), dtype=np.uint8, buffer=reader.data, offset=start,
        strides=(layout.stride, 1),
    )
    if layout.frame_nul is not None and rows[:, layout.frame_nul].any():
        return False
    order = reader.prefix  # the fields read in place, a stride apart
    ids[:] = np.ndarray(
        (count,), dtype=f'{order}i4', buffer=reader.data, offset=start + layout.marker_id,
        strides=(layout.stride,),
    )
    positions[:] = np.ndarray(
        (count, 3), dtype=f'{order}f8', buffer=reader.data, offset=start + layout.position,
        strides=(layout.stride, 8),
    )
    reader.offset = end
    return True


def _first_header(reader: _Reader) -> tuple[float, str]:
    """Return the stamp [s] and frame id of the first marker (its layout already checked)."""
    data = reader.data
    seconds, nanoseconds = _STAMP[reader.prefix == '>'].unpack_from(data, _FIRST)
    length = reader.uint32_at(_FIRST + 8)
    if length == 0:
        return seconds + nanoseconds * 1e-9, ''
    text = data[_FIRST + 12: _FIRST + 11 + length].decode('utf-8', errors='replace')
    return seconds + nanoseconds * 1e-9, text


def parse_marker_array(data: bytes) -> MarkerPositions:
    """
    Extract stamps, ids and positions from a serialized MarkerArray.

    The markers are read in one array operation when they all have the layout of the last
    array's first marker (the driver's arrays: the same frame id, namespace and empty
    variable-length fields in every marker, array after array). Otherwise the first marker is
    walked field by field, and the others are read in one array operation when they repeat its
    layout, else walked one by one. Either way the values are those of the walk.

    :param data: CDR bytes with their 4-byte encapsulation header, as delivered by a raw
        subscription or stored in a rosbag2.
    :return: The header of the first marker and every marker's id and position.
    :raises MarkerCdrError: If the bytes do not parse as a Humble-or-later MarkerArray.
    """
    if len(data) < 8:
        raise MarkerCdrError('MarkerArray bytes too short')
    kind = bytes(data[:2])
    if kind in _ENCAPSULATION_LITTLE:
        prefix = '<'
    elif kind in _ENCAPSULATION_BIG:
        prefix = '>'
    else:
        raise MarkerCdrError(f'unknown CDR encapsulation {kind!r}')
    reader = _Reader(bytes(data), prefix)
    count = reader.uint32()
    if count > _MAX_MARKERS:
        raise MarkerCdrError(f'implausible marker count {count}')
    ids = np.empty(count, dtype=np.int64)
    positions = np.empty((count, 3))
    stamp = float('nan')
    frame_id = ''
    if count:
        known = _LayoutMemory.layout
        if known is not None and _read_alike(reader, _FIRST, known, ids, positions):
            stamp, frame_id = _first_header(reader)
        else:
            stamp, frame_id, layout = _walk_marker(reader, ids, positions, 0)
            _LayoutMemory.layout = layout
            if count > 1 and not _read_alike(
                reader, reader.offset - layout.size + layout.stride, layout, ids[1:],
                positions[1:],
            ):
                for index in range(1, count):
                    _walk_marker(reader, ids, positions, index)
    if len(data) - reader.offset > 8:
        raise MarkerCdrError('trailing bytes after the last marker: not the expected layout')
    return MarkerPositions(stamp=stamp, frame_id=frame_id, ids=ids, positions=positions)
