"""
Xsens MVN real-time network stream: MXTP02 datagrams to complete samples.

Only message type ``02`` (position + quaternion) is decoded (the wire format is in
:mod:`pic_ros.trackers.xsens_wire`). Its world frame is MVN's Z-up frame, x forward (the person's
facing direction at calibration), y left, z up -- already REP-103, so positions are used as they
come, and quaternions are taken **as is**: the C++ decoder vendored by the MVN ROS drivers scales
them by 180/pi, a bug this parser would reject as a non-unit quaternion.

:class:`XsensParser` is the network-facing part. It never raises on what it is fed: every datagram
it cannot use is dropped and counted by :class:`~pic_ros.trackers.xsens_wire.XsensDropReason`,
and the memory it keeps is bounded by its configuration (:class:`XsensParserConfig`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
import enum
from types import MappingProxyType

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_integer, check_number
from pic_ros.exceptions import ConfigError
from pic_ros.trackers.gaps import GapCounter
from pic_ros.trackers.xsens_wire import (
    HEADER_SIZE,
    ITEM_SIZE,
    MAX_UDP_PAYLOAD,
    MESSAGE_TYPE_POSE_QUATERNION,
    METADATA_MESSAGE_TYPES,
    parse_header,
    SEGMENT_COUNT,
    XsensDropReason,
    XsensHeader,
    XsensSegment,
)

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


class XsensStampSource(enum.Enum):
    """Which clock :func:`sample_to_skeleton` stamps a skeleton with."""

    RECEIVE_TIME = 'receive_time'
    TIME_CODE = 'time_code'


@dataclass(frozen=True, eq=False)
class XsensSample:
    """
    One complete MXTP02 sample of one character (body segments only; props and fingers dropped).

    Instances compare by identity (they hold arrays); the arrays are read-only.

    :param sample_counter: MVN sample counter.
    :param time_code: MVN time code [s]: capture time on MVN's clock, since the start of the
        recording (not comparable with host or ROS time).
    :param receive_time: Host time [s] at which the sample's first datagram was received, on
        the clock the caller passed to :meth:`XsensParser.feed`.
    :param character_id: Character (avatar) id.
    :param positions: Segment origins, shape (23, 3), [m], MVN Z-up world frame (x forward,
        y left, z up; REP-103); row ``i`` is segment id ``i + 1`` (:class:`XsensSegment`).
    :param quaternions: Segment orientations, shape (23, 4), unit quaternions (w, x, y, z),
        segment -> MVN world, exactly as sent.
    :param datagram_count: Datagrams the sample arrived in.
    """

    sample_counter: int
    time_code: float
    receive_time: float
    character_id: int
    positions: FloatArray
    quaternions: FloatArray
    datagram_count: int = 1

    def segment_position(self, segment: XsensSegment) -> FloatArray:
        """
        Return the origin of one segment.

        :param segment: The segment.
        :return: Position, shape (3,), [m], MVN Z-up world frame (a read-only view).
        """
        row: FloatArray = self.positions[int(segment) - 1]
        return row


@dataclass(frozen=True)
class XsensParserConfig:
    """
    Limits and choices of :class:`XsensParser`.

    :param character_id: Character to follow, 0..255; None (default) follows the first character
        whose datagram passes validation and keeps it until :meth:`XsensParser.reset`. Datagrams
        of other characters are dropped as ``OTHER_CHARACTER``.
    :param max_datagram_size: Longest accepted datagram [bytes], 56..65507; longer ones are
        ``OVERSIZED``. Receive with a buffer of ``max_datagram_size + 1`` bytes so that an
        oversized datagram is seen as such rather than silently cut.
    :param max_pending_samples: Most incomplete multi-datagram samples kept at once, 1..1024;
        the oldest (by first arrival) is evicted to make room.
    :param pending_timeout: Longest time [s] an incomplete sample is kept after its first
        datagram, in (0, 60].
    :param reorder_window: Samples [count] a sample counter may fall behind the last returned
        sample and still count as late (``STALE``), 0..65535; further behind is taken as a
        stream restart (a new MVN session or counter wrap) and accepted.
    :param quaternion_tolerance: Largest accepted ``| |q| - 1 |``, in [1e-6, 0.5].
    :raises ConfigError: If a value is out of range.
    """

    character_id: int | None = None
    max_datagram_size: int = 8192
    max_pending_samples: int = 8
    pending_timeout: float = 0.1
    reorder_window: int = 64
    quaternion_tolerance: float = 1e-3

    def __post_init__(self) -> None:
        if self.character_id is not None:
            check_integer('character_id', self.character_id, 0, 0xFF)
        check_integer(
            'max_datagram_size', self.max_datagram_size, HEADER_SIZE + ITEM_SIZE, MAX_UDP_PAYLOAD
        )
        check_integer('max_pending_samples', self.max_pending_samples, 1, 1024)
        timeout = check_number('pending_timeout', self.pending_timeout, 0.0, 60.0)
        if timeout <= 0.0:
            raise ConfigError(f'pending_timeout must be > 0 s, got {self.pending_timeout!r}')
        check_integer('reorder_window', self.reorder_window, 0, 0xFFFF)
        check_number('quaternion_tolerance', self.quaternion_tolerance, 1e-6, 0.5)


@dataclass
class _Pending:
    """An incomplete sample: what its first datagram declared and what has arrived."""

    header: XsensHeader
    receive_time: float
    values: FloatArray
    seen_items: BoolArray
    indices: set[int] = field(default_factory=set)
    last_index: int | None = None
    item_total: int = 0


class XsensParser:
    """
    Stateful MXTP02 stream parser: validates datagrams and assembles samples.

    Feed every received datagram to :meth:`feed`; it returns a sample when one completes. It
    never raises on the datagram: anything unusable is dropped and counted in
    :attr:`drop_counts`. Samples are returned in increasing sample-counter order: a sample
    behind the last returned one is dropped as ``STALE`` (or, beyond ``reorder_window``, taken
    as a restart of the stream). Memory is bounded: datagram bytes are never kept, and at most
    ``max_pending_samples`` incomplete samples of fixed size (their 23 segments and a flag per
    item, at most 533 items) are held.

    :param config: Limits and the character to follow; default :class:`XsensParserConfig`.
    :raises ConfigError: If ``config`` is not an :class:`XsensParserConfig`.
    """

    def __init__(self, config: XsensParserConfig | None = None) -> None:
        if config is None:
            config = XsensParserConfig()
        if not isinstance(config, XsensParserConfig):
            raise ConfigError(f'config must be an XsensParserConfig, got {config!r}')
        self._config = config
        self._drops: Counter[XsensDropReason] = Counter(dict.fromkeys(XsensDropReason, 0))
        self._pending: dict[int, _Pending] = {}
        self._character: int | None = config.character_id
        self._last_counter: int | None = None
        self._received = 0
        self._emitted = 0
        self.gaps = GapCounter()
        """Samples never received, from gaps in the sample counter (``lost_upstream``)."""
        self._restarts = 0

    @property
    def config(self) -> XsensParserConfig:
        """Return the configuration."""
        return self._config

    @property
    def drop_counts(self) -> Mapping[XsensDropReason, int]:
        """Return the drops so far per reason (every reason present), a read-only live view."""
        return MappingProxyType(self._drops)

    @property
    def received_count(self) -> int:
        """Return the datagrams fed so far."""
        return self._received

    @property
    def sample_count(self) -> int:
        """Return the samples returned so far."""
        return self._emitted

    @property
    def restart_count(self) -> int:
        """
        Return how many times the sample counter started over.

        It jumped back beyond ``reorder_window`` (a new MVN session, a wrap), or forward by more
        than a loss explains (:class:`~pic_ros.trackers.gaps.GapCounter`): neither is counted in
        ``lost_upstream``.
        """
        return self._restarts + self.gaps.restarts

    @property
    def pending_count(self) -> int:
        """Return the incomplete samples held (at most ``max_pending_samples``)."""
        return len(self._pending)

    @property
    def character_id(self) -> int | None:
        """Return the character followed, or None while waiting for the first one."""
        return self._character

    @property
    def receive_buffer_size(self) -> int:
        """Return the socket receive size to use [bytes]: ``max_datagram_size + 1``."""
        return self._config.max_datagram_size + 1

    def reset(self) -> None:
        """
        Forget the stream: pending samples, the last sample counter and a chosen character.

        The counters are kept. Pending samples are dropped without being counted.
        """
        self._pending.clear()
        self._last_counter = None
        self._character = self._config.character_id

    def feed(
        self, datagram: bytes | bytearray | memoryview, receive_time: float
    ) -> XsensSample | None:
        """
        Take one received datagram.

        :param datagram: The UDP payload as received.
        :param receive_time: Host time of reception [s], on a clock that does not jump
            (``time.monotonic()`` or the node clock); it drives ``pending_timeout`` and becomes
            :attr:`XsensSample.receive_time`.
        :return: The sample this datagram completed, or None (stored as part of a pending
            sample, or dropped and counted in :attr:`drop_counts`).
        """
        self._received += 1
        self._expire(receive_time)
        outcome = self._take(datagram, receive_time)
        if isinstance(outcome, XsensDropReason):
            self._drops[outcome] += 1
            return None
        if outcome is not None:
            self._emitted += 1
        return outcome

    def _expire(self, now: float) -> None:
        timeout = self._config.pending_timeout
        for counter in [c for c, p in self._pending.items() if now - p.receive_time > timeout]:
            del self._pending[counter]
            self._drops[XsensDropReason.EVICTED] += 1

    def _take(
        self, datagram: bytes | bytearray | memoryview, receive_time: float
    ) -> XsensSample | XsensDropReason | None:
        if len(datagram) > self._config.max_datagram_size:
            return XsensDropReason.OVERSIZED
        header = parse_header(datagram)
        if isinstance(header, XsensDropReason):
            return header
        if header.message_type != MESSAGE_TYPE_POSE_QUATERNION:
            if header.message_type in METADATA_MESSAGE_TYPES:
                return XsensDropReason.METADATA
            return XsensDropReason.UNKNOWN_TYPE
        outcome = self._take_pose(datagram, header, receive_time)
        if (isinstance(outcome, XsensDropReason) and outcome is not XsensDropReason.OTHER_CHARACTER
                and (self._character is None or header.character_id == self._character)):
            # It came, unusable: counted as this drop, so not also as lost (if it was skipped).
            self.gaps.arrived(header.sample_counter)
        return outcome

    def _take_pose(
        self, datagram: bytes | bytearray | memoryview, header: XsensHeader, receive_time: float
    ) -> XsensSample | XsensDropReason | None:
        payload = len(datagram) - HEADER_SIZE
        if payload < header.payload_size:
            return XsensDropReason.TRUNCATED
        if (payload > header.payload_size or header.payload_size != header.item_count * ITEM_SIZE
                or header.item_count == 0 or header.item_count > header.total_item_count
                or header.body_segment_count != SEGMENT_COUNT):
            return XsensDropReason.MALFORMED
        decoded = _decode_items(datagram, header, self._config.quaternion_tolerance)
        if isinstance(decoded, XsensDropReason):
            return decoded
        ids, values, marks = decoded
        if self._character is None:
            self._character = header.character_id
        elif header.character_id != self._character:
            return XsensDropReason.OTHER_CHARACTER
        order = self._check_order(header.sample_counter)
        if order is not None:
            return order
        # Only a validated, in-order datagram of the followed character says what was lost.
        self.gaps.counter(header.sample_counter, receive_time)
        pending = self._pending.get(header.sample_counter)
        if pending is None:
            pending = _Pending(
                header=header,
                receive_time=receive_time,
                values=np.full((SEGMENT_COUNT, 7), np.nan),
                seen_items=marks,
            )
        else:
            problem = _check_fits(pending, header, marks)
            if problem is not None:
                return problem
            pending.seen_items |= marks
        pending.indices.add(header.datagram_index)
        if header.is_last_datagram:
            pending.last_index = header.datagram_index
        pending.item_total += ids.size
        body = ids <= SEGMENT_COUNT
        pending.values[ids[body] - 1] = values[body]
        if pending.last_index is None or len(pending.indices) != pending.last_index + 1:
            self._hold(header.sample_counter, pending)
            return None
        self._pending.pop(header.sample_counter, None)
        if pending.item_total != pending.header.total_item_count:
            return XsensDropReason.MALFORMED
        return self._complete(pending)

    def _hold(self, counter: int, pending: _Pending) -> None:
        """Keep an incomplete sample, evicting the oldest ones if there is no room."""
        if counter not in self._pending:
            while len(self._pending) >= self._config.max_pending_samples:
                del self._pending[next(iter(self._pending))]
                self._drops[XsensDropReason.EVICTED] += 1
            self._pending[counter] = pending

    def _check_order(self, counter: int) -> XsensDropReason | None:
        """Classify a sample counter against the last returned one (restart resets state)."""
        last = self._last_counter
        if last is None or counter > last:
            return None
        if counter == last:
            return XsensDropReason.DUPLICATE
        if last - counter <= self._config.reorder_window:
            return XsensDropReason.STALE
        self._restarts += 1
        self.gaps.restart()
        self._drops[XsensDropReason.EVICTED] += len(self._pending)
        self._pending.clear()
        self._last_counter = None
        return None

    def _complete(self, pending: _Pending) -> XsensSample:
        header = pending.header
        overtaken = [counter for counter in self._pending if counter < header.sample_counter]
        for counter in overtaken:
            del self._pending[counter]
        self._drops[XsensDropReason.STALE] += len(overtaken)
        self._last_counter = header.sample_counter
        positions = pending.values[:, :3].copy()
        quaternions = pending.values[:, 3:].copy()
        positions.setflags(write=False)
        quaternions.setflags(write=False)
        return XsensSample(
            sample_counter=header.sample_counter,
            time_code=header.time_code_ms / 1000.0,
            receive_time=pending.receive_time,
            character_id=header.character_id,
            positions=positions,
            quaternions=quaternions,
            datagram_count=len(pending.indices),
        )


def _decode_items(
    datagram: bytes | bytearray | memoryview, header: XsensHeader, tolerance: float
) -> tuple[npt.NDArray[np.int64], FloatArray, BoolArray] | XsensDropReason:
    """
    Decode and check the items of a datagram whose header and size are consistent.

    :return: ``(ids, values, marks)``: segment ids (n,); values (n, 7), position [m] then
        quaternion (w, x, y, z); flags (total items + 1,) set at the ids -- or ``MALFORMED`` on an
        id out of ``1..total`` or repeated, a non-finite value or a quaternion norm off 1 by
        more than ``tolerance``.
    """
    count = header.item_count
    words = count * ITEM_SIZE // 4
    ids = np.frombuffer(datagram, dtype='>i4', count=words, offset=HEADER_SIZE)[::8]
    ids = ids.astype(np.int64)
    if int(ids.min()) < 1 or int(ids.max()) > header.total_item_count:
        return XsensDropReason.MALFORMED
    marks = np.zeros(header.total_item_count + 1, dtype=bool)
    marks[ids] = True
    if np.count_nonzero(marks) != count:
        return XsensDropReason.MALFORMED
    raw = np.frombuffer(datagram, dtype='>f4', count=words, offset=HEADER_SIZE)
    with np.errstate(invalid='ignore'):  # corrupted bytes may be signalling NaNs: refused below
        values = raw.reshape(count, 8)[:, 1:].astype(np.float64)
    if not np.isfinite(values).all():
        return XsensDropReason.MALFORMED
    rotations = values[:, 3:]
    norms = np.sqrt(np.einsum('ij,ij->i', rotations, rotations))
    if float(np.max(np.abs(norms - 1.0))) > tolerance:
        return XsensDropReason.MALFORMED
    return ids, values, marks


def _check_fits(
    pending: _Pending, header: XsensHeader, marks: BoolArray
) -> XsensDropReason | None:
    """Check a further datagram against the pending sample it claims to belong to."""
    first = pending.header
    if header.datagram_index in pending.indices:
        return XsensDropReason.DUPLICATE
    if (header.time_code_ms != first.time_code_ms
            or header.total_item_count != first.total_item_count
            or header.prop_count != first.prop_count):
        return XsensDropReason.MALFORMED
    last = pending.last_index
    if last is not None and (header.is_last_datagram or header.datagram_index > last):
        return XsensDropReason.MALFORMED
    if header.is_last_datagram and max(pending.indices) > header.datagram_index:
        return XsensDropReason.MALFORMED
    if np.any(pending.seen_items & marks):
        return XsensDropReason.MALFORMED
    return None
