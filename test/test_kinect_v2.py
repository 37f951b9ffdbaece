"""Tests of the Kinect v2 recordings, segment files and paper demonstrations of the PIC paper."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import RecordingError, SkeletonError
from pic_ros.skeleton import HumanJoint, JOINT_COUNT, Side
from pic_ros.trackers.kinect_v2 import (
    camera_to_tracker,
    CAMERA_TO_TRACKER_ROTATION,
    KINECT_V2_JOINTS,
    KINECT_V2_TO_HUMAN,
)
from pic_ros_tools.recordings.kinect_v2_text import KinectV2Recording, load_kinect_v2_recording
from pic_ros_tools.recordings.paper import (
    find_paper_demonstrations,
    load_paper_demonstration,
    load_segments,
    load_task_arms,
    PaperDemonstration,
    Segment,
)
import pytest

FRAME_COUNTS = {
    'assembly1': 1404,
    'assembly2': 1423,
    'assembly3': 1384,
    'incision_straight3': 3049,
}
"""Lines of each available skeleton recording (pic_demos/README.md)."""

SEGMENT_FRAMES = {
    'incision_straight_3': (201, 241, 214, 221, 166, 163, 200, 203, 160, 211),
    'incision_curvy_1': (169, 180, 184, 225, 11, 224, 264, 209, 54, 8),
    'assembly_1': (84, 76, 85, 66, 88, 100, 94, 95, 12, 57),
    'assembly_2': (115, 101, 111, 109, 1, 101, 104, 102, 139, 118),
    'assembly_3': (97, 98, 98, 119, 103, 112, 113, 100, 90, 90),
}
"""
Frames processed per segment by the original evaluator.

See docs/method.md#segment-files-task_ntxt-and-the-single-cursor.
"""

SEGMENT_TOTALS = {
    'incision_straight_3': 1980,
    'incision_curvy_1': 1528,
    'assembly_1': 757,
    'assembly_2': 1001,
    'assembly_3': 1020,
}

BOTH = frozenset({Side.LEFT, Side.RIGHT})
RIGHT = frozenset({Side.RIGHT})


@pytest.fixture(scope='module')
def pic_demos(shared_data: Path) -> Path:
    """Return the ``pic_demos`` folder of the shared reference data (read in place)."""
    return shared_data / 'pic_demos'


@pytest.fixture(scope='module')
def demonstrations(pic_demos: Path) -> dict[str, PaperDemonstration]:
    """Load every paper demonstration found in ``pic_demos``, by name."""
    return {demo.name: demo for demo in find_paper_demonstrations(pic_demos)}


def _write_skeleton(path: Path, joints: npt.NDArray[np.float64]) -> None:
    """Write a (T, 25, 3) array as a 75-column skeleton text file."""
    rows = joints.reshape(joints.shape[0], 75)
    path.write_text(''.join(' '.join(repr(float(v)) for v in row) + '\n' for row in rows))


def _write_stamps(path: Path, stamps: npt.ArrayLike) -> None:
    """Write one time stamp per line."""
    path.write_text(''.join(f'{float(v)!r}\n' for v in np.asarray(stamps, dtype=float)))


def _fake_joints(rng: np.random.Generator, count: int) -> npt.NDArray[np.float64]:
    """Random joints, shape (count, 25, 3), a metre or two in front of the camera."""
    joints = rng.uniform(-0.5, 0.5, size=(count, 25, 3))
    joints[..., 2] += 1.9
    return joints


def _write_paper_demo(
    folder: Path,
    rng: np.random.Generator,
    *,
    frames: int = 30,
    segments: str = '3 10\n12 20\n',
    baxter_arms: tuple[str, ...] = ('right', 'both'),
    yumi_arms: tuple[str, ...] | None = ('right', 'both'),
) -> None:
    """Write a small synthetic ``task7`` demonstration in the pic_demos layout."""
    _write_skeleton(folder / 'task7_skel.txt', _fake_joints(rng, frames))
    _write_stamps(folder / 'task7_skelts.txt', 0.1 + np.arange(frames) * 0.037)
    (folder / 'task_7.txt').write_text(segments)
    configs = folder / 'paper_configs'
    configs.mkdir(exist_ok=True)
    (configs / 'baxter_config_task7.json').write_text(json.dumps({'arm': list(baxter_arms)}))
    if yumi_arms is not None:
        (configs / 'yumi_config_task7.json').write_text(json.dumps({'arm': list(yumi_arms)}))


# --- joint tables and frame conversion -------------------------------------------------------


def test_joint_names_follow_the_kinect_enumeration(pic_demos: Path) -> None:
    """KINECT_V2_JOINTS lists the 25 names in the index order of kinect_joint_names.json."""
    table = json.loads((pic_demos / 'kinect_joint_names.json').read_text())
    expected = {name.removeprefix('JointType_'): index for name, index in table.items()}
    assert expected.pop('Count') == 25
    assert len(KINECT_V2_JOINTS) == 25
    assert {name: index for index, name in enumerate(KINECT_V2_JOINTS)} == expected


def test_human_table_maps_each_joint_to_its_kinect_source() -> None:
    """KINECT_V2_TO_HUMAN has one Kinect index per HumanJoint row, as the brief specifies."""
    expected = {
        HumanJoint.PELVIS: 'SpineBase',
        HumanJoint.SPINE_CHEST: 'SpineShoulder',
        HumanJoint.NECK: 'Neck',
        HumanJoint.HEAD: 'Head',
        HumanJoint.SHOULDER_LEFT: 'ShoulderLeft',
        HumanJoint.ELBOW_LEFT: 'ElbowLeft',
        HumanJoint.WRIST_LEFT: 'WristLeft',
        HumanJoint.HAND_LEFT: 'HandLeft',
        HumanJoint.SHOULDER_RIGHT: 'ShoulderRight',
        HumanJoint.ELBOW_RIGHT: 'ElbowRight',
        HumanJoint.WRIST_RIGHT: 'WristRight',
        HumanJoint.HAND_RIGHT: 'HandRight',
        HumanJoint.HAND_TIP_LEFT: 'HandTipLeft',
        HumanJoint.THUMB_LEFT: 'ThumbLeft',
        HumanJoint.HAND_TIP_RIGHT: 'HandTipRight',
        HumanJoint.THUMB_RIGHT: 'ThumbRight',
    }
    assert isinstance(KINECT_V2_TO_HUMAN, tuple)
    assert len(KINECT_V2_TO_HUMAN) == JOINT_COUNT
    assert KINECT_V2_TO_HUMAN[:12] == (0, 20, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
    for joint, name in expected.items():
        source = KINECT_V2_TO_HUMAN[joint]
        assert source is not None and KINECT_V2_JOINTS[source] == name
    for joint in (HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT):
        assert KINECT_V2_TO_HUMAN[joint] is None  # Kinect v2 has no face points


def test_camera_to_tracker_is_a_proper_rotation() -> None:
    """The conversion is linear with an orthonormal matrix of determinant +1 (no mirroring)."""
    matrix = camera_to_tracker(np.eye(3)).T  # column j = image of camera axis j
    np.testing.assert_array_equal(matrix, CAMERA_TO_TRACKER_ROTATION)
    np.testing.assert_allclose(matrix @ matrix.T, np.eye(3), atol=1e-15)
    assert np.linalg.det(matrix) == pytest.approx(1.0)
    assert not CAMERA_TO_TRACKER_ROTATION.flags.writeable


def test_camera_to_tracker_maps_the_camera_axes_to_rep103_axes() -> None:
    """Camera z (into the scene) -> tracker x, x (sensor's left) -> y, y (up) -> z."""
    np.testing.assert_array_equal(camera_to_tracker([0.0, 0.0, 2.0]), [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(camera_to_tracker([0.5, 0.0, 0.0]), [0.0, 0.5, 0.0])
    np.testing.assert_array_equal(camera_to_tracker([0.0, 1.5, 0.0]), [0.0, 0.0, 1.5])


def test_camera_to_tracker_is_vectorised(rng: np.random.Generator) -> None:
    """Any leading shape (..., 3) is converted point by point; other shapes are rejected."""
    points = rng.normal(size=(4, 5, 3))
    converted = camera_to_tracker(points)
    assert converted.shape == (4, 5, 3)
    np.testing.assert_allclose(converted, points @ CAMERA_TO_TRACKER_ROTATION.T, atol=0.0)
    with pytest.raises(SkeletonError, match='shape'):
        camera_to_tracker(np.zeros((4, 2)))


def test_subject_right_shoulder_has_the_larger_tracker_y(
    demonstrations: dict[str, PaperDemonstration],
) -> None:
    """
    Tracker y points to the sensor's left, which is the facing subject's right side.

    The Kinect v2 subject faces the camera, so the subject's left shoulder (Kinect index 4) has
    the *smaller* camera x and the right shoulder (index 8) the larger; the conversion keeps that
    ordering on tracker y. The subject stands 1.5-2.5 m in front of the sensor (tracker x) with the
    head above the pelvis (tracker z).
    """
    for demo in demonstrations.values():
        joints = demo.recording.joints
        assert np.all(joints[:, 4, 0] < joints[:, 8, 0])
        tracker = demo.recording.tracker_positions()
        assert np.all(
            tracker[:, HumanJoint.SHOULDER_RIGHT, 1] > tracker[:, HumanJoint.SHOULDER_LEFT, 1]
        )
        assert np.all((tracker[:, HumanJoint.PELVIS, 0] > 1.5) & (tracker[:, 0, 0] < 2.5))
        assert np.all(tracker[:, HumanJoint.HEAD, 2] > tracker[:, HumanJoint.PELVIS, 2])


# --- real recordings -------------------------------------------------------------------------


@pytest.mark.parametrize(('name', 'frames'), sorted(FRAME_COUNTS.items()))
def test_real_recording_loads_with_its_frame_count(
    pic_demos: Path, name: str, frames: int
) -> None:
    """Each available recording has the documented line count and strictly increasing stamps."""
    recording = load_kinect_v2_recording(pic_demos / f'{name}_skel.txt')
    assert recording.name == name
    assert len(recording) == frames
    assert recording.stamps.shape == (frames,)
    assert recording.joints.shape == (frames, 25, 3)
    assert np.all(np.diff(recording.stamps) > 0.0)
    assert 0.0 < recording.stamps[0] < 0.2
    assert np.all(np.isfinite(recording.joints))


def test_real_stamps_come_from_the_sibling_file(pic_demos: Path) -> None:
    """Without an explicit path the sibling ``_skelts.txt`` supplies the stamps (not 30 Hz)."""
    recording = load_kinect_v2_recording(pic_demos / 'assembly1_skel.txt')
    expected = np.loadtxt(pic_demos / 'assembly1_skelts.txt')
    np.testing.assert_array_equal(recording.stamps, expected)
    assert recording.duration == pytest.approx(expected[-1] - expected[0])


def test_real_arm_bones_have_human_lengths(demonstrations: dict[str, PaperDemonstration]) -> None:
    """
    Upper arms and forearms are 0.15-0.40 m long.

    Every frame's upper arm is in range, and the median forearm too. Kinect v2 foreshortens the
    forearm when the hand points at the sensor: incision_straight3's right forearm drops to
    0.08 m in about 4 % of its frames, so forearms are only required in range in 95 % of frames.
    """
    bones = {
        'upper_left': (4, 5),
        'forearm_left': (5, 6),
        'upper_right': (8, 9),
        'forearm_right': (9, 10),
    }
    assert set(demonstrations) == set(FRAME_COUNTS)
    for demo in demonstrations.values():
        joints = demo.recording.joints
        for bone, (a, b) in bones.items():
            length = np.linalg.norm(joints[:, a] - joints[:, b], axis=1)
            inside = (length >= 0.15) & (length <= 0.40)
            assert 0.15 <= np.median(length) <= 0.40, (demo.name, bone)
            if bone.startswith('upper'):
                assert np.all(inside), (demo.name, bone, length.min(), length.max())
            else:
                assert np.mean(inside) >= 0.95, (demo.name, bone, np.mean(inside))


def test_recording_arrays_are_read_only(demonstrations: dict[str, PaperDemonstration]) -> None:
    """Callers cannot modify a recording's stamps or joints in place."""
    recording = demonstrations['assembly1'].recording
    with pytest.raises(ValueError):
        recording.joints[0, 0, 0] = 1.0
    with pytest.raises(ValueError):
        recording.stamps[0] = 1.0


def test_frames_are_tracker_skeleton_frames(demonstrations: dict[str, PaperDemonstration]) -> None:
    """frames() yields one 'tracker' SkeletonFrame per line, equal to frame(i); no face rows."""
    recording = demonstrations['assembly2'].recording
    frames = list(recording.frames())
    assert len(frames) == len(recording)
    for index in (0, 680, len(recording) - 1):
        frame = recording.frame(index)
        assert frame.frame == 'tracker'
        assert frame.stamp == recording.stamps[index]
        face = [HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT]
        assert not frame.valid[face].any()
        assert frame.valid[[joint for joint in HumanJoint if joint not in face]].all()
        expected = np.full((JOINT_COUNT, 3), np.nan)
        for joint in HumanJoint:
            source = KINECT_V2_TO_HUMAN[joint]
            if source is not None:
                expected[joint] = camera_to_tracker(recording.joints[index, source])
        np.testing.assert_array_equal(frame.positions, expected)
        np.testing.assert_array_equal(frames[index].positions, expected)
        assert frames[index].stamp == frame.stamp
    np.testing.assert_array_equal(recording.frame(-1).positions, frames[-1].positions)
    with pytest.raises(IndexError):
        recording.frame(len(recording))


# --- synthetic and malformed recordings ------------------------------------------------------


def test_missing_stamp_file_gives_synthetic_30_hz_stamps(
    tmp_path: Path, rng: np.random.Generator
) -> None:
    """Without a ``_skelts.txt`` sibling the stamps are i / 30 s."""
    joints = _fake_joints(rng, 7)
    _write_skeleton(tmp_path / 'demo2_skel.txt', joints)
    recording = load_kinect_v2_recording(tmp_path / 'demo2_skel.txt')
    assert recording.name == 'demo2'
    np.testing.assert_allclose(recording.stamps, np.arange(7) / 30.0)
    np.testing.assert_array_equal(recording.joints, joints)


def test_explicit_stamp_file_is_used(tmp_path: Path, rng: np.random.Generator) -> None:
    """An explicit ``stamps_path`` wins over the sibling file."""
    _write_skeleton(tmp_path / 'demo2_skel.txt', _fake_joints(rng, 3))
    _write_stamps(tmp_path / 'demo2_skelts.txt', [1.0, 2.0, 3.0])
    _write_stamps(tmp_path / 'other.txt', [0.5, 0.6, 0.75])
    recording = load_kinect_v2_recording(tmp_path / 'demo2_skel.txt', tmp_path / 'other.txt')
    np.testing.assert_array_equal(recording.stamps, [0.5, 0.6, 0.75])


def test_trailing_blank_lines_are_ignored(tmp_path: Path, rng: np.random.Generator) -> None:
    """A final newline or trailing blank lines do not add frames."""
    path = tmp_path / 'demo_skel.txt'
    _write_skeleton(path, _fake_joints(rng, 4))
    path.write_text(path.read_text() + '\n   \n')
    assert len(load_kinect_v2_recording(path)) == 4


@pytest.mark.parametrize(
    ('line', 'replacement', 'message'),
    [
        (3, ' '.join(['0.5'] * 74), r'line 3 has 74 columns, expected 75'),
        (2, ' '.join(['0.5'] * 76), r'line 2 has 76 columns, expected 75'),
        (4, ' '.join(['0.5'] * 40 + ['abc'] + ['0.5'] * 34), r"line 4, column 41: 'abc' is not"),
        (2, ' '.join(['0.5'] * 74 + ['nan']), r"line 2, column 75: 'nan' is not finite"),
        (3, '', r'line 3 is blank'),
    ],
)
def test_malformed_skeleton_line_is_reported_with_its_number(
    tmp_path: Path, rng: np.random.Generator, line: int, replacement: str, message: str
) -> None:
    """A bad skeleton line raises RecordingError naming the 1-based line and the problem."""
    path = tmp_path / 'bad_skel.txt'
    _write_skeleton(path, _fake_joints(rng, 5))
    lines = path.read_text().splitlines()
    lines[line - 1] = replacement
    path.write_text('\n'.join(lines) + '\n')
    with pytest.raises(RecordingError, match=message):
        load_kinect_v2_recording(path)


def test_uniformly_wrong_column_count_is_reported(tmp_path: Path) -> None:
    """A file whose every line has 74 columns fails on line 1."""
    path = tmp_path / 'bad_skel.txt'
    path.write_text(('0.5 ' * 74 + '\n') * 3)
    with pytest.raises(RecordingError, match='line 1 has 74 columns'):
        load_kinect_v2_recording(path)


def test_missing_or_empty_skeleton_file_is_reported(tmp_path: Path) -> None:
    """A missing or empty file raises RecordingError naming the path."""
    with pytest.raises(RecordingError, match='not found'):
        load_kinect_v2_recording(tmp_path / 'absent_skel.txt')
    (tmp_path / 'empty_skel.txt').write_text('\n')
    with pytest.raises(RecordingError, match='empty'):
        load_kinect_v2_recording(tmp_path / 'empty_skel.txt')


def test_stamp_count_mismatch_is_reported(tmp_path: Path, rng: np.random.Generator) -> None:
    """A stamp file with a different line count than the skeleton raises RecordingError."""
    _write_skeleton(tmp_path / 'demo_skel.txt', _fake_joints(rng, 4))
    _write_stamps(tmp_path / 'demo_skelts.txt', [0.1, 0.2, 0.3])
    with pytest.raises(RecordingError, match='3 time stamps but .* 4 frames'):
        load_kinect_v2_recording(tmp_path / 'demo_skel.txt')


@pytest.mark.parametrize('stamps', [[0.1, 0.2, 0.2, 0.3], [0.1, 0.2, 0.15, 0.3]])
def test_repeated_or_decreasing_stamps_are_rejected(
    tmp_path: Path, rng: np.random.Generator, stamps: list[float]
) -> None:
    """Stamps must be strictly increasing; the message names the offending line (3)."""
    _write_skeleton(tmp_path / 'demo_skel.txt', _fake_joints(rng, 4))
    _write_stamps(tmp_path / 'demo_skelts.txt', stamps)
    with pytest.raises(RecordingError, match=r'strictly increasing.*line 3'):
        load_kinect_v2_recording(tmp_path / 'demo_skel.txt')


def test_non_numeric_stamp_is_reported(tmp_path: Path, rng: np.random.Generator) -> None:
    """A stamp that is not a number raises RecordingError with its line."""
    _write_skeleton(tmp_path / 'demo_skel.txt', _fake_joints(rng, 3))
    (tmp_path / 'demo_skelts.txt').write_text('0.1\n0.2x\n0.3\n')
    with pytest.raises(RecordingError, match="line 2, column 1: '0.2x' is not a number"):
        load_kinect_v2_recording(tmp_path / 'demo_skel.txt')


def test_recording_constructor_validates_shapes() -> None:
    """A KinectV2Recording built by hand must have matching (T,) and (T, 25, 3) arrays."""
    with pytest.raises(RecordingError, match='shape'):
        KinectV2Recording('x', np.arange(3.0), np.zeros((2, 25, 3)))
    with pytest.raises(RecordingError, match='finite'):
        KinectV2Recording('x', np.array([0.0, np.nan]), np.zeros((2, 25, 3)))


# --- segment files ---------------------------------------------------------------------------


@pytest.mark.parametrize('stem', sorted(SEGMENT_FRAMES))
def test_real_segment_files_give_the_paper_frame_counts(pic_demos: Path, stem: str) -> None:
    """Single-cursor semantics reproduce the frames per segment of the original evaluator."""
    segments = load_segments(pic_demos / f'{stem}.txt')
    assert tuple(len(segment) for segment in segments) == SEGMENT_FRAMES[stem]
    assert sum(len(segment) for segment in segments) == SEGMENT_TOTALS[stem]
    assert [segment.index for segment in segments] == list(range(10))
    for previous, segment in zip(segments, segments[1:], strict=False):
        assert previous.stop <= segment.start


def test_overlapping_segment_only_covers_unread_lines(pic_demos: Path) -> None:
    """In incision_straight_3, segments 5 and 6 share line 1440: segment 6 starts at line 1441."""
    segments = load_segments(pic_demos / 'incision_straight_3.txt', frame_count=3049)
    fifth, sixth = segments[4], segments[5]
    assert (fifth.first_line, fifth.last_line, fifth.start, fifth.stop) == (1275, 1440, 1274, 1440)
    assert (sixth.first_line, sixth.last_line) == (1440, 1603)
    assert (sixth.start, sixth.stop) == (1440, 1603)  # 0-based 1440 is line 1441
    curvy = load_segments(pic_demos / 'incision_curvy_1.txt')[4]
    assert (curvy.first_line, curvy.start, curvy.stop) == (1343, 1386, 1397)


def test_single_line_segment_has_one_frame(pic_demos: Path) -> None:
    """``681 681`` in assembly_2.txt is the one frame at 0-based index 680."""
    segment = load_segments(pic_demos / 'assembly_2.txt', frame_count=1423)[4]
    assert segment == Segment(index=4, start=680, stop=681, first_line=681, last_line=681)
    assert segment.frame_slice == slice(680, 681)


def test_fully_consumed_segment_is_kept_empty(tmp_path: Path) -> None:
    """
    A segment entirely behind the cursor is returned with ``start == stop``.

    Keeping it preserves the numbering that aligns segments with the per-segment task arms.
    """
    path = tmp_path / 'task_1.txt'
    path.write_text('1 10\n3 8\n\n12 12\n10 14\n')
    segments = load_segments(path, frame_count=20)
    assert [len(segment) for segment in segments] == [10, 0, 1, 2]
    assert [segment.index for segment in segments] == [0, 1, 2, 3]
    assert (segments[1].start, segments[1].stop) == (10, 10)
    assert (segments[1].first_line, segments[1].last_line) == (3, 8)
    assert (segments[3].start, segments[3].stop) == (12, 14)


@pytest.mark.parametrize(
    ('content', 'message'),
    [
        ('1 5\n7\n', r'line 2 must be two integers'),
        ('1 5\n7 9 11\n', r'line 2 must be two integers'),
        ('1 5\n7.0 9\n', r'line 2 must be two integers'),
        ('1 5\nstart end\n', r'line 2 must be two integers'),
        ('1 5\n9 7\n', r'line 2: end 7 is before start 9'),
        ('0 5\n', r'line 1: line numbers are 1-based'),
        ('1 5\n6 21\n', r'line 2: end 21 is beyond the 20 frames'),
        ('\n', r'empty'),
    ],
)
def test_malformed_segment_file_is_reported(tmp_path: Path, content: str, message: str) -> None:
    """Bad segment lines raise RecordingError naming the 1-based line."""
    path = tmp_path / 'task_1.txt'
    path.write_text(content)
    with pytest.raises(RecordingError, match=message):
        load_segments(path, frame_count=20)


def test_segment_end_is_unchecked_without_a_frame_count(tmp_path: Path) -> None:
    """Without ``frame_count`` a segment may end anywhere (the recording may be missing)."""
    path = tmp_path / 'task_1.txt'
    path.write_text('1 5000\n')
    assert len(load_segments(path)[0]) == 5000


def test_missing_segment_file_is_reported(tmp_path: Path) -> None:
    """A missing segment file raises RecordingError."""
    with pytest.raises(RecordingError, match='segment file not found'):
        load_segments(tmp_path / 'absent_1.txt')


# --- task arms and paper demonstrations ------------------------------------------------------


@pytest.mark.parametrize(
    'name', ['assembly1', 'assembly2', 'assembly3', 'incision_curvy1', 'incision_straight3']
)
def test_paper_configs_agree_on_task_arms_between_robots(pic_demos: Path, name: str) -> None:
    """The YuMi and Baxter paper configs list the same ten task arms for every recording."""
    configs = pic_demos / 'paper_configs'
    baxter = load_task_arms(configs / f'baxter_config_{name}.json')
    yumi = load_task_arms(configs / f'yumi_config_{name}.json')
    assert baxter == yumi
    assert baxter == ((RIGHT if name.startswith('incision') else BOTH),) * 10


@pytest.mark.parametrize(
    ('content', 'message'),
    [
        ('{"arm": ["right", "Left"]}', r'arm\[1\] must be one of'),
        ('{"arm": "right"}', r'"arm" must be a list'),
        ('{"scale": 2.1}', r'"arm" must be a list'),
        ('{"arm": [', r'cannot read paper configuration'),
    ],
)
def test_bad_task_arms_are_reported(tmp_path: Path, content: str, message: str) -> None:
    """A config whose ``arm`` field is missing or wrong raises RecordingError."""
    path = tmp_path / 'baxter_config_task1.json'
    path.write_text(content)
    with pytest.raises(RecordingError, match=message):
        load_task_arms(path)


def test_find_paper_demonstrations_finds_the_four_available(
    demonstrations: dict[str, PaperDemonstration], pic_demos: Path
) -> None:
    """The four recordings with skeleton, segments and paper config are found, sorted by name."""
    names = [demo.name for demo in find_paper_demonstrations(pic_demos)]
    assert names == ['assembly1', 'assembly2', 'assembly3', 'incision_straight3']
    for name, demo in demonstrations.items():
        stem = name[:-1] + '_' + name[-1]
        assert len(demo.recording) == FRAME_COUNTS[name]
        assert tuple(len(segment) for segment in demo.segments) == SEGMENT_FRAMES[stem]
        assert len(demo.task_arms) == len(demo.segments) == 10
        assert demo.task_arms == ((RIGHT if name.startswith('incision') else BOTH),) * 10


def test_missing_curvy_skeleton_is_reported(pic_demos: Path) -> None:
    """incision_curvy1 has segments and configs but no skeleton: loading it says so."""
    with pytest.raises(RecordingError, match='skeleton recording not found'):
        load_paper_demonstration(pic_demos, 'incision_curvy1')


def test_synthetic_demonstration_is_discovered(tmp_path: Path, rng: np.random.Generator) -> None:
    """A complete ``task7`` demo is found; a skeleton without segments or config is skipped."""
    _write_paper_demo(tmp_path, rng)
    _write_skeleton(tmp_path / 'lonely3_skel.txt', _fake_joints(rng, 4))
    (demo,) = find_paper_demonstrations(tmp_path)
    assert demo.name == 'task7'
    assert [(s.start, s.stop) for s in demo.segments] == [(2, 10), (11, 20)]
    assert demo.task_arms == (RIGHT, BOTH)
    assert load_paper_demonstration(tmp_path, 'task7').segments == demo.segments


def test_missing_yumi_config_is_not_required(tmp_path: Path, rng: np.random.Generator) -> None:
    """Only the Baxter paper config is required; the YuMi one is cross-checked when present."""
    _write_paper_demo(tmp_path, rng, yumi_arms=None)
    assert find_paper_demonstrations(tmp_path)[0].task_arms == (RIGHT, BOTH)


def test_disagreeing_robot_configs_are_rejected(tmp_path: Path, rng: np.random.Generator) -> None:
    """Task arms that differ between the Baxter and YuMi paper configs raise RecordingError."""
    _write_paper_demo(tmp_path, rng, yumi_arms=('right', 'left'))
    with pytest.raises(RecordingError, match='differ'):
        find_paper_demonstrations(tmp_path)


def test_segment_and_arm_counts_must_match(tmp_path: Path, rng: np.random.Generator) -> None:
    """A config with a different number of task arms than segments raises RecordingError."""
    _write_paper_demo(tmp_path, rng, baxter_arms=('right',), yumi_arms=None)
    with pytest.raises(RecordingError, match='2 segments but 1 task-arm'):
        find_paper_demonstrations(tmp_path)


def test_segments_beyond_the_recording_are_rejected(
    tmp_path: Path, rng: np.random.Generator
) -> None:
    """A segment ending after the last skeleton line raises RecordingError."""
    _write_paper_demo(tmp_path, rng, frames=15)
    with pytest.raises(RecordingError, match='beyond the 15 frames'):
        find_paper_demonstrations(tmp_path)


def test_missing_data_directory_is_reported(tmp_path: Path) -> None:
    """A data directory that does not exist raises RecordingError."""
    with pytest.raises(RecordingError, match='not found'):
        find_paper_demonstrations(tmp_path / 'absent')
