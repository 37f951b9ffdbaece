"""Tests of rosbag2 reading (:mod:`pic_ros_tools.recordings.rosbag`): topics, messages, errors."""

from __future__ import annotations

from pathlib import Path
import shutil

from bag_helpers import (
    AZURE_EMPTY,
    AZURE_MESSAGES,
    AZURE_TOPIC,
    decoded_markers,
    DEMO_BAG,
    same_frames,
)
import numpy as np
from pic_ros.exceptions import RecordingError
from pic_ros.trackers.marker_cdr import parse_marker_array
from pic_ros_tools.recordings.bag_demonstration import demonstration_from_bag
from pic_ros_tools.recordings.rosbag import (
    bag_info,
    format_bag_info,
    MARKER_ARRAY,
    read_messages,
    resolve_bag_path,
)
from pic_ros_tools.recordings.skeleton_bag_reader import skeleton_frames_from_bag
import pytest


@pytest.fixture(scope='module')
def azure_bag(shared_data: Path) -> Path:
    """Return the real Azure Kinect bag (MCAP, zstd chunks, metadata version 9)."""
    return shared_data / 'azure_kinect' / 'body_tracking_ergonomics'


def test_real_bag_lists_topics_types_counts_and_qos(azure_bag: Path) -> None:
    """The real Azure Kinect bag: MCAP v9, two topics with their types, counts and QoS."""
    info = bag_info(azure_bag)
    assert info.storage == 'mcap' and info.version == 9
    assert info.message_count == AZURE_MESSAGES + 4
    assert [(t.name, t.msgtype, t.count) for t in info.topics] == [
        (AZURE_TOPIC, MARKER_ARRAY, AZURE_MESSAGES),
        ('/tf_static', 'tf2_msgs/msg/TFMessage', 4),
    ]
    assert info.topic('tf_static').durability == 'transient_local'
    assert info.topic('tf_static').reliability == 'reliable'
    assert info.topic(AZURE_TOPIC).durability is None
    assert 62.0 < info.duration < 62.5
    text = format_bag_info(info)
    assert AZURE_TOPIC in text and '933 msgs' in text


def test_real_bag_messages_come_in_time_order_with_60_empty_arrays(azure_bag: Path) -> None:
    """All 933 MarkerArrays come in recorded-time order; 60 are empty, the others 32 markers."""
    messages = list(read_messages(azure_bag, topics=['kinect2/body_tracking_data']))
    assert len(messages) == AZURE_MESSAGES
    stamps = [message.timestamp_ns for message in messages]
    assert stamps == sorted(stamps)
    counts = [len(parse_marker_array(message.data).ids) for message in messages]
    assert counts.count(0) == AZURE_EMPTY
    assert set(counts) == {0, 32}
    assert {message.msgtype for message in messages} == {MARKER_ARRAY}
    everything = list(read_messages(azure_bag))
    assert len(everything) == AZURE_MESSAGES + 4
    assert [m.timestamp_ns for m in everything] == sorted(m.timestamp_ns for m in everything)


def test_real_bag_raw_bytes_match_the_deserialized_messages(azure_bag: Path) -> None:
    """The raw bytes handed out decode to the same ids and positions as rosbags' own decoding."""
    raw = list(read_messages(azure_bag, topics=[AZURE_TOPIC]))
    reference = decoded_markers(azure_bag, AZURE_TOPIC)
    for message, (stamp, _, ids, positions) in zip(raw, reference, strict=True):
        parsed = parse_marker_array(message.data)
        assert message.timestamp_ns == stamp
        assert tuple(parsed.ids.tolist()) == ids
        assert np.array_equal(parsed.positions, positions)


def test_time_window_selects_messages_by_recorded_stamp(azure_bag: Path) -> None:
    """``start_ns`` is inclusive and ``stop_ns`` exclusive, like rosbags and ros2 bag play."""
    every = [m.timestamp_ns for m in read_messages(azure_bag, topics=[AZURE_TOPIC])]
    start, stop = every[100], every[200]
    window = list(read_messages(azure_bag, [AZURE_TOPIC], start_ns=start, stop_ns=stop))
    assert [m.timestamp_ns for m in window] == every[100:200]


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _truncated(source: Path, target: Path) -> Path:
    target.mkdir()
    data = next(source.glob('*.mcap')).read_bytes()
    (target / 'cut.mcap').write_bytes(data[: len(data) // 3])
    return target / 'cut.mcap'


@pytest.mark.parametrize(
    'make, message',
    [
        (lambda tmp: tmp / 'missing', 'bag not found'),
        (lambda tmp: tmp, 'no metadata.yaml'),
        (lambda tmp: _file(tmp / 'x.bag', b'#ROSBAG V2.0\n'), 'ROS 1 bag'),
        (lambda tmp: _file(tmp / 'x.txt', b'1 2 3'), 'not a rosbag2'),
        (lambda tmp: _file(tmp / 'x.db3', b'not sqlite'), 'cannot read the bag'),
        (lambda tmp: _truncated(DEMO_BAG, tmp / 'cut'), 'cannot read the bag'),
    ],
    ids=['missing', 'no-metadata', 'ros1', 'suffix', 'garbage-db3', 'truncated-mcap'],
)
def test_unreadable_bags_raise_recording_error_saying_why(make, message, tmp_path: Path) -> None:
    """Every unreadable path gives a RecordingError with a reason, from every entry point."""
    path = make(tmp_path)
    for call in (
        bag_info,
        lambda p: list(read_messages(p)),
        skeleton_frames_from_bag,
        demonstration_from_bag,
    ):
        with pytest.raises(RecordingError, match=message):
            call(path)


@pytest.mark.parametrize(
    'metadata, message',
    [
        ('[unclosed', 'cannot read the bag metadata'),
        ('just: text', 'not rosbag2 metadata'),
        ('rosbag2_bagfile_information: {version: 8}', 'cannot read the bag'),
    ],
    ids=['bad-yaml', 'not-rosbag2', 'incomplete'],
)
def test_broken_metadata_raises_recording_error(metadata: str, message: str,
                                                tmp_path: Path) -> None:
    """A bag directory whose metadata.yaml is damaged gives a RecordingError."""
    bag = tmp_path / 'broken'
    shutil.copytree(DEMO_BAG, bag)
    (bag / 'metadata.yaml').write_text(metadata, encoding='utf-8')
    with pytest.raises(RecordingError, match=message):
        bag_info(bag)


def test_missing_storage_file_raises_recording_error(tmp_path: Path) -> None:
    """Metadata that lists a storage file which is not there gives a RecordingError."""
    bag = tmp_path / 'hollow'
    shutil.copytree(DEMO_BAG, bag)
    next(bag.glob('*.mcap')).unlink()
    with pytest.raises(RecordingError, match='missing'):
        bag_info(bag)


def test_bare_storage_files_are_read_too(tmp_path: Path) -> None:
    """A bag's .mcap file read without its directory gives the same skeletons."""
    bare = tmp_path / 'bare.mcap'
    shutil.copy(next(DEMO_BAG.glob('*.mcap')), bare)
    assert resolve_bag_path(bare) == bare
    assert bag_info(bare).version is None
    assert resolve_bag_path(next(DEMO_BAG.glob('*.mcap'))) == DEMO_BAG
    assert same_frames(
        skeleton_frames_from_bag(bare), skeleton_frames_from_bag(DEMO_BAG)
    )
