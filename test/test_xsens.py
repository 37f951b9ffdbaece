"""Tests of the Xsens MVN MXTP02 stream parser, its datagram builder and the skeleton mapping."""

from __future__ import annotations

import math
import struct

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.human.body_frame import to_body_frame
from pic_ros.skeleton import HumanJoint, JOINT_COUNT
from pic_ros.trackers.xsens import sample_to_skeleton, XSENS_TO_HUMAN, XsensTracker
from pic_ros.trackers.xsens_parser import (
    XsensParser,
    XsensParserConfig,
    XsensSample,
    XsensStampSource,
)
from pic_ros.trackers.xsens_wire import (
    HEADER_SIZE,
    ITEM_SIZE,
    parse_header,
    SEGMENT_COUNT,
    SEGMENT_NAMES,
    XsensDropReason,
    XsensHeader,
    XsensSegment,
)
from pic_ros_tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
import pytest

FUZZ = settings(deadline=None, max_examples=200)
"""Hypothesis settings: no per-example deadline (the CI machine is shared and slow)."""


def _t_pose_datagram(sample_counter: int = 7, time_code_ms: int = 1000) -> bytes:
    """Return the single MXTP02 datagram of a T-pose sample."""
    positions, quaternions = t_pose_segments()
    (datagram,) = build_mxtp02_datagrams(sample_counter, time_code_ms, positions, quaternions)
    return datagram


def _as_float32(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Return values rounded to float32, as the wire carries them, back in float64."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def _total_drops(parser: XsensParser) -> int:
    """Return the sum of every drop count."""
    return sum(parser.drop_counts.values())


def _only_drop(parser: XsensParser) -> XsensDropReason:
    """Return the single reason with a non-zero count (fails if there are several)."""
    reasons = [reason for reason, count in parser.drop_counts.items() if count]
    assert len(reasons) == 1, dict(parser.drop_counts)
    return reasons[0]


def _with_item(datagram: bytes, index: int, fmt: str, offset: int, *values: object) -> bytes:
    """Return a copy of a datagram with a field of item ``index`` overwritten (big-endian)."""
    patched = bytearray(datagram)
    struct.pack_into(fmt, patched, HEADER_SIZE + index * ITEM_SIZE + offset, *values)
    return bytes(patched)


def _random_pose(rng: np.random.Generator) -> tuple[npt.NDArray[np.float64], ...]:
    """Return random segment positions (23, 3) [m] and random unit quaternions (23, 4)."""
    positions = rng.uniform(-2.0, 2.0, size=(SEGMENT_COUNT, 3))
    quaternions = rng.normal(size=(SEGMENT_COUNT, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    return positions, quaternions


def test_single_datagram_sample_round_trips(rng):
    """A one-datagram sample decodes to the float32 values, counters and time code sent."""
    positions, quaternions = _random_pose(rng)
    datagrams = build_mxtp02_datagrams(4242, 98765, positions, quaternions, character_id=3)
    assert len(datagrams) == 1
    assert len(datagrams[0]) == HEADER_SIZE + SEGMENT_COUNT * ITEM_SIZE
    sample = XsensParser().feed(datagrams[0], receive_time=12.5)
    assert isinstance(sample, XsensSample)
    assert sample.sample_counter == 4242
    assert sample.time_code == pytest.approx(98.765)
    assert sample.receive_time == 12.5
    assert sample.character_id == 3
    assert sample.datagram_count == 1
    np.testing.assert_array_equal(sample.positions, _as_float32(positions))
    np.testing.assert_array_equal(sample.quaternions, _as_float32(quaternions))
    assert not sample.positions.flags.writeable
    np.testing.assert_array_equal(
        sample.segment_position(XsensSegment.LEFT_HAND), _as_float32(positions[14])
    )


def test_quaternions_are_taken_as_is_without_degree_scaling():
    """The wire quaternion (w, x, y, z) comes out unscaled, with no 180/pi factor."""
    positions, quaternions = t_pose_segments()
    half = math.radians(80.0) / 2.0
    quaternions[XsensSegment.RIGHT_UPPER_ARM - 1] = (math.cos(half), math.sin(half), 0.0, 0.0)
    (datagram,) = build_mxtp02_datagrams(1, 0, positions, quaternions)
    sample = XsensParser().feed(datagram, 0.0)
    assert sample is not None
    np.testing.assert_allclose(
        sample.quaternions[XsensSegment.RIGHT_UPPER_ARM - 1],
        (math.cos(half), math.sin(half), 0.0, 0.0),
        atol=1e-7,
    )
    np.testing.assert_allclose(np.linalg.norm(sample.quaternions, axis=1), 1.0, atol=1e-6)


def test_hand_packed_datagram_matches_the_documented_layout(rng):
    """A datagram packed field by field from the spec table decodes like the builder's output."""
    positions, quaternions = _random_pose(rng)
    header = struct.pack(
        '>6sIBBIBBBBHH', b'MXTP02', 6681, 0x80, 23, 27837, 0, 23, 0, 0, 0, 23 * 32
    )
    items = b''.join(
        struct.pack('>i7f', segment, *positions[segment - 1], *quaternions[segment - 1])
        for segment in range(1, 24)
    )
    datagram = header + items
    assert datagram == build_mxtp02_datagrams(6681, 27837, positions, quaternions)[0]
    sample = XsensParser().feed(datagram, 0.0)
    assert sample is not None
    assert (sample.sample_counter, sample.time_code) == (6681, 27.837)
    np.testing.assert_array_equal(sample.positions, _as_float32(positions))


def test_header_fields_are_decoded():
    """Every header field is decoded at its offset, big-endian, with the counter's two parts."""
    raw = struct.pack('>6sIBBIBBBBHH', b'MXTP02', 0x01020304, 0x82, 5, 0xA0B0C0D0, 9, 23, 2, 40,
                      0, 160)
    header = parse_header(raw)
    assert header == XsensHeader(
        message_type='02',
        sample_counter=0x01020304,
        datagram_index=2,
        is_last_datagram=True,
        item_count=5,
        time_code_ms=0xA0B0C0D0,
        character_id=9,
        body_segment_count=23,
        prop_count=2,
        finger_segment_count=40,
        reserved=0,
        payload_size=160,
    )
    assert header.total_item_count == 65
    assert header.datagram_counter == 0x82
    assert header.to_bytes() == raw


def test_header_type_digits_are_hex_and_normalised():
    """The two type characters are hex digits, read case-insensitively as upper case."""
    raw = bytearray(_t_pose_datagram()[:HEADER_SIZE])
    raw[4:6] = b'1a'
    header = parse_header(bytes(raw))
    assert isinstance(header, XsensHeader)
    assert header.message_type == '1A'


def test_header_rejects_fields_that_do_not_fit_the_wire():
    """Building a header with a field out of its wire range raises ConfigError."""
    header = parse_header(_t_pose_datagram())
    assert isinstance(header, XsensHeader)
    fields = dict(header.__dict__)
    with pytest.raises(ConfigError):
        XsensHeader(**{**fields, 'sample_counter': 2 ** 32})
    with pytest.raises(ConfigError):
        XsensHeader(**{**fields, 'datagram_index': 128})
    with pytest.raises(ConfigError):
        XsensHeader(**{**fields, 'message_type': '2'})


@pytest.mark.parametrize('max_payload', [32, 100, 160, 400, 735])
def test_split_sample_has_indexed_counters_and_a_last_flag(max_payload):
    """A sample split over k datagrams has counters 0..k-2 and 0x80 | (k-1), sizes that add up."""
    positions, quaternions = t_pose_segments()
    datagrams = build_mxtp02_datagrams(11, 0, positions, quaternions, max_payload=max_payload)
    per_datagram = max_payload // ITEM_SIZE
    assert len(datagrams) == math.ceil(SEGMENT_COUNT / per_datagram)
    headers = [parse_header(datagram) for datagram in datagrams]
    assert all(isinstance(header, XsensHeader) for header in headers)
    assert [h.datagram_counter for h in headers] == (  # type: ignore[union-attr]
        list(range(len(datagrams) - 1)) + [0x80 | (len(datagrams) - 1)]
    )
    assert sum(h.item_count for h in headers) == SEGMENT_COUNT  # type: ignore[union-attr]
    assert all(len(d) <= HEADER_SIZE + max_payload for d in datagrams)


@pytest.mark.parametrize('max_payload', [32, 100, 160, 400])
def test_split_sample_completes_whatever_the_arrival_order(rng, max_payload):
    """Datagrams of one sample in any order give one sample, on the datagram that completes it."""
    positions, quaternions = _random_pose(rng)
    datagrams = build_mxtp02_datagrams(77, 500, positions, quaternions, max_payload=max_payload)
    for _ in range(5):
        parser = XsensParser()
        order = rng.permutation(len(datagrams))
        results = [parser.feed(datagrams[i], receive_time=1.0 + 0.001 * k)
                   for k, i in enumerate(order)]
        assert all(result is None for result in results[:-1])
        sample = results[-1]
        assert sample is not None
        assert sample.datagram_count == len(datagrams)
        assert sample.receive_time == 1.0
        np.testing.assert_array_equal(sample.positions, _as_float32(positions))
        np.testing.assert_array_equal(sample.quaternions, _as_float32(quaternions))
        assert _total_drops(parser) == 0
        assert parser.pending_count == 0


def test_interleaved_split_samples_complete_independently(rng):
    """Two split samples whose datagrams interleave both complete, in counter order."""
    positions, quaternions = _random_pose(rng)
    first = build_mxtp02_datagrams(1, 0, positions, quaternions, max_payload=200)
    second = build_mxtp02_datagrams(2, 4, positions + 1.0, quaternions, max_payload=200)
    parser = XsensParser()
    out = [parser.feed(d, 0.0) for pair in zip(first, second) for d in pair]
    samples = [sample for sample in out if sample is not None]
    assert [sample.sample_counter for sample in samples] == [1, 2]
    assert _total_drops(parser) == 0


@pytest.mark.parametrize('prefix', [b'XXTP02', b'MXTQ02', b'MXTPZZ', b'mxtp02', b'\x00' * 6])
def test_wrong_magic_is_dropped(prefix):
    """A datagram whose ID string is not MXTP + two hex digits is dropped as WRONG_MAGIC."""
    parser = XsensParser()
    assert parser.feed(prefix + _t_pose_datagram()[6:], 0.0) is None
    assert _only_drop(parser) is XsensDropReason.WRONG_MAGIC
    assert parser.drop_counts[XsensDropReason.WRONG_MAGIC] == 1


@pytest.mark.parametrize('code', [b'01', b'03', b'05', b'20', b'22', b'25', b'FF'])
def test_unknown_message_types_are_dropped(code):
    """Message types other than 02 (and the meta data) are dropped as UNKNOWN_TYPE."""
    datagram = bytearray(_t_pose_datagram())
    datagram[4:6] = code
    parser = XsensParser()
    assert parser.feed(bytes(datagram), 0.0) is None
    assert _only_drop(parser) is XsensDropReason.UNKNOWN_TYPE


@pytest.mark.parametrize('code', [b'12', b'13'])
def test_metadata_messages_are_ignored_with_their_own_count(code):
    """Character meta data and scaling data are counted as METADATA, whatever their payload."""
    parser = XsensParser()
    assert parser.feed(b'MXTP' + code + bytes(30), 0.0) is None
    assert _only_drop(parser) is XsensDropReason.METADATA


@FUZZ
@given(cut=st.integers(min_value=0, max_value=HEADER_SIZE + SEGMENT_COUNT * ITEM_SIZE - 1))
def test_a_datagram_cut_anywhere_is_a_counted_truncation(cut):
    """Any prefix of a valid datagram returns None and counts exactly one TRUNCATED drop."""
    parser = XsensParser()
    assert parser.feed(_t_pose_datagram()[:cut], 0.0) is None
    assert parser.drop_counts[XsensDropReason.TRUNCATED] == 1
    assert _total_drops(parser) == 1
    assert parser.pending_count == 0


@FUZZ
@given(cut=st.integers(min_value=0, max_value=99), which=st.integers(min_value=0, max_value=3))
def test_a_cut_datagram_of_a_split_sample_is_truncated_and_the_sample_never_completes(cut, which):
    """Cutting one datagram of a split sample drops it; the rest never completes the sample."""
    positions, quaternions = t_pose_segments()
    datagrams = build_mxtp02_datagrams(3, 0, positions, quaternions, max_payload=200)
    datagrams[which] = datagrams[which][:cut % len(datagrams[which])]
    parser = XsensParser()
    assert all(parser.feed(datagram, 0.0) is None for datagram in datagrams)
    assert parser.drop_counts[XsensDropReason.TRUNCATED] == 1


def test_oversized_datagram_is_dropped():
    """A datagram longer than max_datagram_size is dropped as OVERSIZED, before any parsing."""
    parser = XsensParser()
    assert parser.feed(_t_pose_datagram() + bytes(8192), 0.0) is None
    assert _only_drop(parser) is XsensDropReason.OVERSIZED
    small = XsensParser(XsensParserConfig(max_datagram_size=500))
    assert small.feed(_t_pose_datagram(), 0.0) is None
    assert _only_drop(small) is XsensDropReason.OVERSIZED
    assert small.receive_buffer_size == 501


def test_payload_size_mismatches_are_malformed():
    """Trailing bytes, a payload size or item count that disagree are dropped as MALFORMED."""
    datagram = _t_pose_datagram()
    shorter_field = bytearray(datagram)
    struct.pack_into('>H', shorter_field, 22, 22 * ITEM_SIZE)
    fewer_items = bytearray(datagram)
    fewer_items[11] = 22
    odd_size = bytearray(datagram)
    struct.pack_into('>H', odd_size, 22, 23 * ITEM_SIZE - 1)
    for bad in (datagram + b'\x00', bytes(shorter_field), bytes(fewer_items),
                bytes(odd_size)[:-1]):
        parser = XsensParser()
        assert parser.feed(bad, 0.0) is None
        assert _only_drop(parser) is XsensDropReason.MALFORMED


def test_unsupported_segment_counts_are_malformed():
    """A body other than 23 segments, or no items at all, is dropped as MALFORMED."""
    datagram = bytearray(_t_pose_datagram())
    datagram[17] = 22
    empty = bytearray(_t_pose_datagram()[:HEADER_SIZE])
    empty[11] = 0
    struct.pack_into('>H', empty, 22, 0)
    for bad in (bytes(datagram), bytes(empty)):
        parser = XsensParser()
        assert parser.feed(bad, 0.0) is None
        assert _only_drop(parser) is XsensDropReason.MALFORMED


@pytest.mark.parametrize('segment_id', [0, -1, 24, 255, 2 ** 31 - 1, 5])
def test_bad_segment_ids_are_malformed(segment_id):
    """A segment id outside 1..23 (no props, no fingers), or repeated, is MALFORMED."""
    bad = _with_item(_t_pose_datagram(), 0, '>i', 0, segment_id)
    parser = XsensParser()
    assert parser.feed(bad, 0.0) is None
    assert _only_drop(parser) is XsensDropReason.MALFORMED


@pytest.mark.parametrize('offset', [4, 8, 12, 16, 28])
@pytest.mark.parametrize('value', [math.nan, math.inf, -math.inf])
def test_non_finite_values_are_malformed(offset, value):
    """A NaN or infinite position or quaternion component makes the datagram MALFORMED."""
    bad = _with_item(_t_pose_datagram(), 12, '>f', offset, value)
    parser = XsensParser()
    assert parser.feed(bad, 0.0) is None
    assert _only_drop(parser) is XsensDropReason.MALFORMED


def test_non_unit_quaternions_are_malformed():
    """Quaternions scaled by 180/pi (the C++ decoder bug) or off by 1 % are MALFORMED."""
    positions, quaternions = t_pose_segments()
    for scale in (180.0 / math.pi, 1.01, 0.0):
        scaled = quaternions.copy()
        scaled[4] *= scale
        (bad,) = build_mxtp02_datagrams(1, 0, positions, scaled)
        parser = XsensParser()
        assert parser.feed(bad, 0.0) is None
        assert _only_drop(parser) is XsensDropReason.MALFORMED


def test_quaternion_norm_within_tolerance_is_accepted():
    """A quaternion off unit norm by less than the tolerance is accepted as sent."""
    positions, quaternions = t_pose_segments()
    quaternions[4] *= 1.0005
    (datagram,) = build_mxtp02_datagrams(1, 0, positions, quaternions)
    assert XsensParser().feed(datagram, 0.0) is not None
    assert XsensParser(XsensParserConfig(quaternion_tolerance=1e-4)).feed(datagram, 0.0) is None


def test_repeated_datagram_within_a_split_sample_is_a_duplicate():
    """The same datagram twice in a pending sample counts a DUPLICATE; the sample completes."""
    positions, quaternions = t_pose_segments()
    datagrams = build_mxtp02_datagrams(5, 0, positions, quaternions, max_payload=400)
    parser = XsensParser()
    assert parser.feed(datagrams[0], 0.0) is None
    assert parser.feed(datagrams[0], 0.0) is None
    assert parser.feed(datagrams[1], 0.0) is not None
    assert parser.feed(datagrams[1], 0.0) is None
    assert parser.drop_counts[XsensDropReason.DUPLICATE] == 2
    assert _total_drops(parser) == 2
    assert parser.sample_count == 1


def test_repeated_single_datagram_sample_is_returned_once():
    """A whole sample received twice is returned once; the copy counts as DUPLICATE."""
    parser = XsensParser()
    assert parser.feed(_t_pose_datagram(9), 0.0) is not None
    assert parser.feed(_t_pose_datagram(9), 0.0) is None
    assert _only_drop(parser) is XsensDropReason.DUPLICATE


def test_inconsistent_datagrams_of_one_sample_are_malformed():
    """A datagram whose time code or index disagrees with its sample's others is MALFORMED."""
    positions, quaternions = t_pose_segments()
    datagrams = build_mxtp02_datagrams(5, 100, positions, quaternions, max_payload=400)
    other_time = build_mxtp02_datagrams(5, 101, positions, quaternions, max_payload=400)
    parser = XsensParser()
    assert parser.feed(datagrams[0], 0.0) is None
    assert parser.feed(other_time[1], 0.0) is None
    assert _only_drop(parser) is XsensDropReason.MALFORMED
    beyond_last = bytearray(datagrams[0])
    beyond_last[10] = 2
    parser = XsensParser()
    assert parser.feed(datagrams[1], 0.0) is None
    assert parser.feed(bytes(beyond_last), 0.0) is None
    assert _only_drop(parser) is XsensDropReason.MALFORMED


def test_samples_behind_the_last_returned_are_stale_until_a_restart():
    """A late sample is STALE; one far behind (beyond reorder_window) is a restart, accepted."""
    parser = XsensParser(XsensParserConfig(reorder_window=10))
    assert parser.feed(_t_pose_datagram(100), 0.0) is not None
    assert parser.feed(_t_pose_datagram(95), 0.0) is None
    assert _only_drop(parser) is XsensDropReason.STALE
    assert parser.feed(_t_pose_datagram(101), 0.0) is not None
    restarted = parser.feed(_t_pose_datagram(0), 0.0)
    assert restarted is not None and restarted.sample_counter == 0
    assert parser.restart_count == 1
    assert parser.feed(_t_pose_datagram(1), 0.0) is not None


def test_counter_wrap_is_taken_as_a_restart():
    """After sample 2**32 - 1, sample 0 is accepted (a wrap, seen as a restart)."""
    parser = XsensParser()
    assert parser.feed(_t_pose_datagram(2 ** 32 - 1), 0.0) is not None
    assert parser.feed(_t_pose_datagram(0), 0.0) is not None


def test_a_completed_sample_drops_older_pending_ones_as_stale():
    """Samples are returned in counter order: an older incomplete sample is dropped as STALE."""
    positions, quaternions = t_pose_segments()
    older = build_mxtp02_datagrams(1, 0, positions, quaternions, max_payload=400)
    parser = XsensParser()
    assert parser.feed(older[0], 0.0) is None
    assert parser.feed(_t_pose_datagram(2), 0.0) is not None
    assert parser.pending_count == 0
    assert parser.feed(older[1], 0.0) is None
    assert parser.drop_counts[XsensDropReason.STALE] == 2


def test_pending_samples_stay_bounded_under_a_flood_of_incomplete_samples():
    """First halves of 2,000 samples never hold more than max_pending_samples; the rest evicted."""
    positions, quaternions = t_pose_segments()
    parser = XsensParser(XsensParserConfig(max_pending_samples=4))
    for counter in range(2000):
        first = build_mxtp02_datagrams(counter, counter, positions, quaternions,
                                       max_payload=400)[0]
        assert parser.feed(first, receive_time=0.0) is None
        assert parser.pending_count <= 4
    assert parser.drop_counts[XsensDropReason.EVICTED] == 2000 - 4
    assert _total_drops(parser) == 2000 - 4


def test_pending_sample_is_evicted_after_the_timeout():
    """An incomplete sample older than pending_timeout is evicted at the next datagram."""
    positions, quaternions = t_pose_segments()
    datagrams = build_mxtp02_datagrams(1, 0, positions, quaternions, max_payload=400)
    parser = XsensParser(XsensParserConfig(pending_timeout=0.05))
    assert parser.feed(datagrams[0], receive_time=10.0) is None
    assert parser.feed(datagrams[1], receive_time=10.2) is None
    assert parser.drop_counts[XsensDropReason.EVICTED] == 1
    assert parser.pending_count == 1


def test_the_first_character_seen_is_followed_by_default():
    """By default the first character is locked; others are OTHER_CHARACTER until reset."""
    positions, quaternions = t_pose_segments()
    first = build_mxtp02_datagrams(1, 0, positions, quaternions, character_id=2)[0]
    other = build_mxtp02_datagrams(2, 0, positions, quaternions, character_id=0)[0]
    parser = XsensParser()
    assert parser.character_id is None
    assert parser.feed(first, 0.0) is not None
    assert parser.character_id == 2
    assert parser.feed(other, 0.0) is None
    assert _only_drop(parser) is XsensDropReason.OTHER_CHARACTER
    parser.reset()
    assert parser.feed(other, 0.0) is not None
    assert parser.character_id == 0


def test_a_configured_character_filters_the_others():
    """With character_id set, other characters are dropped even when they come first."""
    positions, quaternions = t_pose_segments()
    parser = XsensParser(XsensParserConfig(character_id=1))
    zero = build_mxtp02_datagrams(1, 0, positions, quaternions, character_id=0)[0]
    one = build_mxtp02_datagrams(1, 0, positions, quaternions, character_id=1)[0]
    assert parser.feed(zero, 0.0) is None
    assert parser.feed(one, 0.0) is not None
    assert _only_drop(parser) is XsensDropReason.OTHER_CHARACTER


def test_bytes_like_datagrams_are_accepted():
    """Datagrams given as bytearray or memoryview decode like bytes."""
    parser = XsensParser()
    assert parser.feed(bytearray(_t_pose_datagram(1)), 0.0) is not None
    assert parser.feed(memoryview(_t_pose_datagram(2)), 0.0) is not None


@FUZZ
@given(data=st.binary(max_size=2048))
def test_random_bytes_never_raise_and_are_counted(data):
    """Random bytes never raise; each is a counted drop (or, at most, held as pending)."""
    parser = XsensParser()
    assert parser.feed(data, 0.0) is None
    assert _total_drops(parser) + parser.pending_count == 1


@FUZZ
@given(
    fields=st.tuples(
        st.sampled_from([b'02', b'12', b'01']),
        st.integers(0, 2 ** 32 - 1),
        st.integers(0, 255),
        st.integers(0, 255),
        st.integers(0, 2 ** 32 - 1),
        st.integers(0, 255),
        st.sampled_from([23, 0, 255]),
        st.integers(0, 3),
        st.integers(0, 3),
        st.integers(0, 2 ** 16 - 1),
        st.integers(0, 2 ** 16 - 1),
    ),
    payload=st.binary(max_size=1024),
)
def test_random_payloads_behind_a_plausible_header_never_raise(fields, payload):
    """A well-formed ID string with random header fields and payload never raises."""
    datagram = struct.pack('>4s2sIBBIBBBBHH', b'MXTP', *fields) + payload
    parser = XsensParser()
    parser.feed(datagram, 0.0)
    assert _total_drops(parser) + parser.pending_count + parser.sample_count == 1


@FUZZ
@given(
    edits=st.lists(
        st.tuples(st.integers(0, HEADER_SIZE + SEGMENT_COUNT * ITEM_SIZE - 1),
                  st.integers(0, 255)),
        min_size=1,
        max_size=8,
    )
)
def test_corrupted_datagrams_never_raise(edits):
    """A valid datagram with random bytes overwritten never raises; every feed is accounted."""
    datagram = bytearray(_t_pose_datagram())
    for position, value in edits:
        datagram[position] = value
    parser = XsensParser()
    parser.feed(bytes(datagram), 0.0)
    parser.feed(_t_pose_datagram(2 ** 31), 1.0)
    assert _total_drops(parser) + parser.pending_count + parser.sample_count == 2
    assert parser.received_count == 2


def test_tracker_status_accounts_for_every_datagram():
    """The tracker's status counts datagrams, samples, pending samples and each drop reason."""
    tracker = XsensTracker()
    tracker.decode(_t_pose_datagram(1), 0.0)
    tracker.decode(b'not a datagram', 0.1)
    status = tracker.status()
    assert status['xsens_datagrams'] == 2
    assert status['xsens_restarts'] == 0
    dropped = sum(value for key, value in status.items() if key.startswith('xsens_dropped_'))
    assert status['xsens_samples'] + status['xsens_pending'] + dropped == 2
    assert dropped >= 1


def test_default_config_is_valid():
    """The default configuration builds and follows the first character seen."""
    config = XsensParserConfig()
    assert config.character_id is None
    assert XsensParser(config).config is config


@pytest.mark.parametrize(
    'fields',
    [
        {'character_id': 256},
        {'character_id': -1},
        {'max_datagram_size': 55},
        {'max_datagram_size': 70000},
        {'max_pending_samples': 0},
        {'pending_timeout': 0.0},
        {'pending_timeout': math.nan},
        {'reorder_window': -1},
        {'quaternion_tolerance': 0.0},
        {'quaternion_tolerance': 1.0},
        {'max_pending_samples': 2.0},
    ],
)
def test_config_rejects_invalid_values(fields):
    """Out-of-range or mistyped parser settings raise ConfigError."""
    with pytest.raises(ConfigError):
        XsensParserConfig(**fields)


def test_parser_rejects_a_config_of_the_wrong_type():
    """A parser needs an XsensParserConfig."""
    with pytest.raises(ConfigError):
        XsensParser({'max_pending_samples': 4})  # type: ignore[arg-type]


def test_builder_rejects_wrong_shapes_and_ranges():
    """The builder raises ConfigError on wrong array shapes and unpackable integers."""
    positions, quaternions = t_pose_segments()
    with pytest.raises(ConfigError):
        build_mxtp02_datagrams(0, 0, positions[:22], quaternions)
    with pytest.raises(ConfigError):
        build_mxtp02_datagrams(0, 0, positions, quaternions[:, :3])
    with pytest.raises(ConfigError):
        build_mxtp02_datagrams(-1, 0, positions, quaternions)
    with pytest.raises(ConfigError):
        build_mxtp02_datagrams(0, 0, positions, quaternions, max_payload=31)


def test_segment_tables_agree():
    """Segment names follow the enum order; the hands, fingers and face lack a source segment."""
    assert len(SEGMENT_NAMES) == len(XsensSegment) == SEGMENT_COUNT
    for segment in XsensSegment:
        assert SEGMENT_NAMES[segment - 1].lower() == segment.name.replace('_', '').lower()
    assert set(HumanJoint) - set(XSENS_TO_HUMAN) == {
        HumanJoint.HAND_LEFT, HumanJoint.HAND_RIGHT, HumanJoint.NOSE, HumanJoint.EAR_LEFT,
        HumanJoint.EAR_RIGHT, HumanJoint.HAND_TIP_LEFT, HumanJoint.THUMB_LEFT,
        HumanJoint.HAND_TIP_RIGHT, HumanJoint.THUMB_RIGHT,
    }


def test_t_pose_skeleton_has_left_at_plus_y_and_t_pose_bones():
    """The T-pose skeleton faces +x: left shoulder at +y; arm bones 0.345 m and 0.282 m."""
    sample = XsensParser().feed(_t_pose_datagram(), 3.0)
    assert sample is not None
    frame = sample_to_skeleton(sample)
    assert frame.frame == 'tracker'
    positions = frame.positions
    left = positions[HumanJoint.SHOULDER_LEFT]
    right = positions[HumanJoint.SHOULDER_RIGHT]
    assert left[1] - right[1] == pytest.approx(0.394, abs=1e-6)
    assert left[[0, 2]] == pytest.approx(right[[0, 2]], abs=1e-6)
    for shoulder, elbow, wrist in (
        (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT),
        (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT),
    ):
        upper = np.linalg.norm(positions[elbow] - positions[shoulder])
        fore = np.linalg.norm(positions[wrist] - positions[elbow])
        assert upper == pytest.approx(0.345, abs=1e-6)
        assert fore == pytest.approx(0.282, abs=1e-6)
    assert positions[HumanJoint.HEAD][2] > positions[HumanJoint.NECK][2]
    assert positions[HumanJoint.NECK][2] > positions[HumanJoint.SPINE_CHEST][2]
    assert positions[HumanJoint.SPINE_CHEST][2] > positions[HumanJoint.PELVIS][2]
    valid = frame.valid
    hands = [
        HumanJoint.HAND_LEFT, HumanJoint.HAND_RIGHT, HumanJoint.HAND_TIP_LEFT,
        HumanJoint.THUMB_LEFT, HumanJoint.HAND_TIP_RIGHT, HumanJoint.THUMB_RIGHT,
    ]
    assert valid.sum() == JOINT_COUNT - len(hands)
    assert not valid[hands].any()
    assert np.all(np.isnan(positions[hands]))
    assert valid[[HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT]].all()


def test_t_pose_body_frame_matches_the_tracker_axes():
    """Facing +x in the MVN frame, the body frame has the same axes: arms along y, left +y."""
    sample = XsensParser().feed(_t_pose_datagram(), 0.0)
    assert sample is not None
    body = to_body_frame(sample_to_skeleton(sample))
    left = body.positions[HumanJoint.WRIST_LEFT]
    right = body.positions[HumanJoint.WRIST_RIGHT]
    assert left[1] == pytest.approx(0.824, abs=1e-6)
    assert right[1] == pytest.approx(-0.824, abs=1e-6)
    assert abs(left[0]) < 1e-6 and abs(left[2]) < 1e-6


def test_skeleton_stamp_comes_from_the_chosen_clock():
    """The stamp is the receive time by default and the MVN time code on request."""
    sample = XsensParser().feed(_t_pose_datagram(time_code_ms=2500), 41.25)
    assert sample is not None
    assert sample_to_skeleton(sample).stamp == 41.25
    assert sample_to_skeleton(sample, XsensStampSource.TIME_CODE).stamp == 2.5
