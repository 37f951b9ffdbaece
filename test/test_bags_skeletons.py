"""Tests of skeleton bags: writing, decoding, bag demonstrations and bag stamps."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from bag_helpers import AZURE_EMPTY, AZURE_MESSAGES, AZURE_TOPIC, same_frames
import numpy as np
from pic_ros.exceptions import ConfigError, RecordingError
from pic_ros.skeleton import HumanJoint, Side
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.recordings.bag_demonstration import demonstration_from_bag
from pic_ros_tools.recordings.rosbag import read_messages
from pic_ros_tools.recordings.skeleton_bag_reader import skeleton_frames_from_bag
from pic_ros_tools.recordings.skeleton_bag_writer import write_skeleton_bag
from pic_ros_tools.recordings.stamps import stamp_from_ns, stamps_to_ns
import pytest


@pytest.fixture(scope='module')
def azure_bag(shared_data: Path) -> Path:
    """Return the real Azure Kinect bag (MCAP, zstd chunks, metadata version 9)."""
    return shared_data / 'azure_kinect' / 'body_tracking_ergonomics'


def test_real_bag_decodes_to_the_tracked_azure_body(azure_bag: Path) -> None:
    """873 tracker-frame skeletons (32-joint format detected), upright, in increasing time."""
    frames = skeleton_frames_from_bag(azure_bag)
    assert len(frames) == AZURE_MESSAGES - AZURE_EMPTY
    assert all(b.stamp > a.stamp for a, b in itertools.pairwise(frames))
    head, pelvis = HumanJoint.HEAD, HumanJoint.PELVIS
    assert all(frame.positions[head, 2] > frame.positions[pelvis, 2] for frame in frames)
    assert all(frame.valid.all() for frame in frames)
    explicit = skeleton_frames_from_bag(azure_bag, topic=AZURE_TOPIC, source='azure_kinect')
    assert same_frames(frames, explicit)
    with pytest.raises(ConfigError, match='azure_kinect'):
        skeleton_frames_from_bag(azure_bag, source='kinect_v2')


def test_whole_bag_is_one_segment_with_both_arms(azure_bag: Path) -> None:
    """A bag without stored segments evaluates as one segment of every frame, both arms."""
    demonstration = load_demonstration(str(azure_bag))
    assert demonstration.name == 'body_tracking_ergonomics'
    assert [(s.start, s.stop) for s in demonstration.segments] == [(0, 873)]
    assert demonstration.task_arms == (frozenset({Side.LEFT, Side.RIGHT}),)


def test_wrong_topics_and_options_are_reported(azure_bag: Path, tmp_path: Path) -> None:
    """Unknown topics list the bag's topics; unknown sources and existing outputs are refused."""
    with pytest.raises(RecordingError, match='/tf_static'):
        list(read_messages(azure_bag, topics=['/nowhere']))
    with pytest.raises(RecordingError, match='not visualization_msgs'):
        skeleton_frames_from_bag(azure_bag, topic='/tf_static')
    with pytest.raises(ConfigError, match='source'):
        skeleton_frames_from_bag(azure_bag, source='kinect')
    with pytest.raises(RecordingError, match='exists'):
        write_skeleton_bag(tmp_path, np.array([1]), np.zeros((1, 32, 3)))
    with pytest.raises(ConfigError, match='storage'):
        write_skeleton_bag(tmp_path / 'x', np.array([1]), np.zeros((1, 32, 3)), storage='rosbag1')
    assert not (tmp_path / 'x').exists()


def test_bag_without_any_body_cannot_be_evaluated(tmp_path: Path) -> None:
    """A bag of empty arrays decodes to no frame and cannot make a demonstration."""
    stamps = np.array([10, 20, 30], dtype=np.int64)
    bag = write_skeleton_bag(tmp_path / 'empty', stamps, np.full((3, 32, 3), np.nan))
    assert skeleton_frames_from_bag(bag) == ()
    with pytest.raises(RecordingError, match='no skeleton'):
        demonstration_from_bag(bag)


def test_stamps_round_trip_exactly() -> None:
    """Stamps with up to 9 decimals come back as the same floats."""
    stamps = np.array([0.0335898, 12.345678, 54.99999999, 1e-9])
    restored = [stamp_from_ns(ns) for ns in stamps_to_ns(stamps).tolist()]
    assert restored == stamps.tolist()
    with pytest.raises(ConfigError):
        stamps_to_ns([-1.0])
    with pytest.raises(ConfigError):
        stamps_to_ns([math.nan])
