"""Tests of the shipped demo bag, a synthetic take written as an Azure Kinect body-tracking bag."""

from __future__ import annotations

from pathlib import Path

from bag_helpers import decoded_markers, DEMO_BAG, K4, same_frames, TIMING_KEYS, V2, without_face
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.robot.robot import load_robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.azure_joints import azure_joints_from_kinect_v2
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import evaluate_one
from pic_ros_tools.recordings.kinect_v2_text import load_kinect_v2_recording
from pic_ros_tools.recordings.rosbag import bag_info
from pic_ros_tools.recordings.stamps import stamps_to_ns
from pic_ros_tools.synthetic import DEFAULT_SEED, generate_recording
from pic_ros_tools.synthetic_bag import text_rounded, write_synthetic_bag
import pytest


def test_demo_bag_decodes_to_the_text_recording_skeletons() -> None:
    """The demo bag and the demo text give identical skeletons (but the face) and segments."""
    text = load_demonstration('demo')
    bag = load_demonstration(str(DEMO_BAG))
    assert same_frames(text.frames, without_face(bag.frames))
    assert [s.frame_slice for s in bag.segments] == [s.frame_slice for s in text.segments]
    assert bag.task_arms == text.task_arms


def test_demo_bag_is_the_text_recording_in_azure_axes() -> None:
    """Shared joints are the text's (-x, -y, z); the person's left is on the camera's right."""
    recording = load_kinect_v2_recording(DEMO_BAG.parent / 'synthetic1_skel.txt')
    arrays = [entry for entry in decoded_markers(DEMO_BAG) if entry[2]]
    assert len(arrays) == len(recording)
    flip = np.array([-1.0, -1.0, 1.0])
    for row in (0, 500, len(recording) - 1):
        _, _, ids, positions = arrays[row]
        assert ids == tuple(range(100, 132))
        for azure, v2 in (('SHOULDER_LEFT', 'ShoulderLeft'), ('WRIST_RIGHT', 'WristRight'),
                          ('SPINE_CHEST', 'SpineShoulder'), ('HEAD', 'Head')):
            assert np.array_equal(positions[K4[azure]], recording.joints[row, V2[v2]] * flip)
        assert positions[K4['HEAD'], 1] < positions[K4['PELVIS'], 1]  # y down
        assert positions[K4['SHOULDER_LEFT'], 0] > positions[K4['SHOULDER_RIGHT'], 0]
        assert positions[K4['NOSE'], 2] < positions[K4['HEAD'], 2]  # the face looks at the camera
        assert 1.5 < positions[K4['PELVIS'], 2] < 2.3


def test_demo_bag_has_empty_arrays_during_the_tracking_loss() -> None:
    """Every generated frame is one message; the 34 lost ones are empty arrays at their stamps."""
    recording = generate_recording(seed=DEFAULT_SEED)
    decoded = decoded_markers(DEMO_BAG)
    assert len(decoded) == len(recording) == 1099
    empty = np.array([not ids for _, _, ids, _ in decoded])
    assert np.array_equal(empty, ~recording.tracked)
    assert int(empty.sum()) == 34
    receive = np.array([entry[0] for entry in decoded])
    assert np.array_equal(receive, stamps_to_ns(text_rounded(recording.stamps)))
    info = bag_info(DEMO_BAG)
    assert info.custom_data['pic_ros.synthetic'] == 'true'
    assert info.custom_data['pic_ros.seed'] == str(DEFAULT_SEED)
    size = sum(path.stat().st_size for path in DEMO_BAG.iterdir())
    assert size < 2_000_000


def test_demo_bag_evaluates_like_the_text_demo() -> None:
    """``evaluate`` on the demo bag gives the text demo's metrics (solve times aside)."""
    robot = load_robot('baxter')
    solver = SolverConfig(name='pic')
    expected = evaluate_one(robot, load_demonstration('demo'), solver)
    got = evaluate_one(robot, load_demonstration(str(DEMO_BAG)), solver)
    for key in expected:
        if key not in TIMING_KEYS + ('recording',):
            assert got[key] == expected[key], key


def test_same_seed_gives_the_same_bag_bytes(tmp_path: Path) -> None:
    """Two writes of the same take are byte-identical (metadata and MCAP file)."""
    recording = generate_recording(seed=DEFAULT_SEED)
    first = write_synthetic_bag(recording, tmp_path / 'one' / 'synthetic1_bag')
    second = write_synthetic_bag(recording, tmp_path / 'two' / 'synthetic1_bag')
    for name in ('metadata.yaml', 'synthetic1_bag.mcap'):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_shipped_demo_bag_is_what_the_script_writes(tmp_path: Path) -> None:
    """``demo/synthetic1_bag`` holds what the demo script writes (metadata and every message)."""
    assert DEMO_BAG.is_dir(), f'{DEMO_BAG} is missing; run scripts/make_demo_recording.py'
    fresh = write_synthetic_bag(generate_recording(), tmp_path / 'synthetic1_bag')
    assert (fresh / 'metadata.yaml').read_bytes() == (DEMO_BAG / 'metadata.yaml').read_bytes()
    for shipped, made in zip(decoded_markers(DEMO_BAG), decoded_markers(fresh), strict=True):
        assert shipped[:3] == made[:3]
        assert np.array_equal(shipped[3], made[3])


def test_azure_joints_keep_sides_and_flip_x_and_y() -> None:
    """The 25 shared joints are copied by name with (x, y) negated; lost rows stay lost."""
    rng = np.random.default_rng(7)
    joints = rng.normal(size=(3, 25, 3))
    joints[2] = np.nan
    azure = azure_joints_from_kinect_v2(joints)
    assert azure.shape == (3, 32, 3)
    assert np.array_equal(azure[:2, K4['ELBOW_LEFT']], joints[:2, V2['ElbowLeft']] * [-1, -1, 1])
    assert np.all(np.isnan(azure[2]))
    with pytest.raises(ConfigError, match='25'):
        azure_joints_from_kinect_v2(np.zeros((4, 32, 3)))
