"""Tests of the synthetic Kinect v2 take (:mod:`pic_ros_tools.synthetic`) and the shipped demo."""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.trackers import kinect_v2
from pic_ros_tools import synthetic
from pic_ros_tools.recordings import kinect_v2_text, paper
from pic_ros_tools.synthetic import (
    BODY,
    BONES,
    generate_recording,
    SyntheticRecording,
    TrackerModel,
    write_kinect_v2_text,
)
import pytest

J = {name: index for index, name in enumerate(synthetic.JOINT_NAMES)}
DEMO_FILES = (
    'synthetic1_skel.txt',
    'synthetic1_skelts.txt',
    'synthetic_1.txt',
    'synthetic1_config.json',
)


@pytest.fixture(scope='module')
def recording() -> SyntheticRecording:
    """Generate the default take (seed :data:`synthetic.DEFAULT_SEED`) once per module."""
    return generate_recording()


def _read_rows(path: Path) -> list[list[str]]:
    """Split a text file into lines of whitespace-separated tokens (a tiny local parser)."""
    return [line.split() for line in path.read_text(encoding='utf-8').splitlines()]


def _lost_runs(tracked: np.ndarray) -> list[tuple[int, int]]:
    """Return the half-open index ranges of consecutive untracked frames."""
    edges = np.diff(np.concatenate([[0], (~tracked).astype(int), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


def _check_invariants(recording: SyntheticRecording) -> None:
    """Assert the seed-independent properties of a recording."""
    truth = recording.truth
    for (parent, child), length in zip(BONES, BODY.bones):
        bone = np.linalg.norm(truth[:, child] - truth[:, parent], axis=1)
        assert np.max(np.abs(bone - length)) < 1e-9
    assert np.all(truth[:, J['ShoulderRight'], 0] > truth[:, J['ShoulderLeft'], 0])
    for start, stop in recording.segments:
        assert 0 <= start < stop <= len(recording)
    assert len(_lost_runs(recording.tracked)) == 1


def test_same_seed_gives_identical_arrays_and_bytes(tmp_path: Path) -> None:
    """Two runs with one seed give equal arrays and byte-identical files; another seed differs."""
    first, second = generate_recording(seed=7), generate_recording(seed=7)
    for field in ('stamps', 'joints', 'truth', 'tracked', 'outliers', 'arm_angles'):
        assert np.array_equal(getattr(first, field), getattr(second, field), equal_nan=True)
    assert first.segments == second.segments
    for paths_a, paths_b in zip(
        write_kinect_v2_text(first, tmp_path / 'a'), write_kinect_v2_text(second, tmp_path / 'b')
    ):
        assert paths_a.read_bytes() == paths_b.read_bytes()
    other = generate_recording(seed=8)
    assert not np.array_equal(first.joints, other.joints, equal_nan=True)


def test_truth_bones_have_constant_nominal_length(recording: SyntheticRecording) -> None:
    """Every bone of the noise-free truth keeps its body-model length to 1e-9 m."""
    for (parent, child), length in zip(BONES, BODY.bones):
        bone = np.linalg.norm(recording.truth[:, child] - recording.truth[:, parent], axis=1)
        assert np.ptp(bone) < 1e-9
        assert bone[0] == pytest.approx(length, abs=1e-9)


def test_body_is_calibrated_like_the_paper_recordings() -> None:
    """Upper arm 0.25 m, forearm 0.22 m and shoulder width about 0.33 m, as in the brief."""
    assert BODY.upper_arm == pytest.approx(0.25)
    assert BODY.forearm == pytest.approx(0.22)
    assert 2 * BODY.shoulder_half_width == pytest.approx(0.33, abs=0.01)


def test_noisy_bones_stay_between_15_and_40_cm_except_at_outliers(
    recording: SyntheticRecording,
) -> None:
    """Measured spine, upper-arm and forearm lengths stay in 0.15-0.40 m away from outliers."""
    joints = recording.joints[recording.tracked]
    outliers = recording.outliers[recording.tracked]
    for parent, child in (
        ('SpineBase', 'SpineMid'),
        ('SpineMid', 'SpineShoulder'),
        ('ShoulderLeft', 'ElbowLeft'),
        ('ElbowLeft', 'WristLeft'),
        ('ShoulderRight', 'ElbowRight'),
        ('ElbowRight', 'WristRight'),
    ):
        clean = ~(outliers[:, J[parent]] | outliers[:, J[child]])
        bone = np.linalg.norm(joints[clean, J[child]] - joints[clean, J[parent]], axis=1)
        assert np.all((bone >= 0.15) & (bone <= 0.40)), (parent, child, bone.min(), bone.max())


def test_outliers_are_rare_single_frame_jumps(recording: SyntheticRecording) -> None:
    """Outliers exist, are rare, sit on tracked frames only and jump by about 5 to 15 cm."""
    frames, joints = np.nonzero(recording.outliers)
    assert 3 <= frames.size <= 0.05 * len(recording)
    assert np.all(recording.tracked[frames])
    jump = np.linalg.norm(
        recording.joints[frames, joints] - recording.truth[frames, joints], axis=1
    )
    assert np.all((jump > 0.05 - 0.04) & (jump < 0.15 + 0.04))
    neighbours = np.clip(np.concatenate([frames - 1, frames + 1]), 0, len(recording) - 1)
    assert not np.any(recording.outliers[neighbours, np.concatenate([joints, joints])])


def test_white_noise_is_a_few_millimetres_and_largest_at_the_hands(
    recording: SyntheticRecording,
) -> None:
    """The frame-to-frame noise is about 4 mm at the pelvis and larger at the hands."""
    joints = recording.joints[recording.tracked]
    second = joints[2:] - 2.0 * joints[1:-1] + joints[:-2]
    deviation = np.median(np.abs(second - np.median(second, axis=0)), axis=0)
    sigma = 1.4826 * deviation / np.sqrt(6.0)
    assert 0.003 < sigma[J['SpineBase'], 0] < 0.0055
    assert sigma[J['HandRight'], 0] > 1.3 * sigma[J['SpineBase'], 0]
    assert np.all(sigma[:, 2] > sigma[:, 0])


def test_right_shoulder_has_larger_camera_x(recording: SyntheticRecording) -> None:
    """Camera x grows to the sensor's left, which is the facing person's right."""
    joints = recording.joints[recording.tracked]
    for side_joint in ('Shoulder', 'Hip'):
        assert np.all(joints[:, J[side_joint + 'Right'], 0] > joints[:, J[side_joint + 'Left'], 0])
        truth = recording.truth
        assert np.all(truth[:, J[side_joint + 'Right'], 0] > truth[:, J[side_joint + 'Left'], 0])


def test_person_stands_about_1_9_m_in_front_of_the_sensor(recording: SyntheticRecording) -> None:
    """The pelvis is about 1.9 m along camera z, the head is up (+y) and the feet are lowest."""
    truth = recording.truth
    assert np.median(truth[:, J['SpineBase'], 2]) == pytest.approx(1.9, abs=0.05)
    assert np.all(truth[:, J['Head'], 1] > truth[:, J['SpineShoulder'], 1])
    assert np.all(truth[:, J['SpineShoulder'], 1] > truth[:, J['SpineBase'], 1] + 0.4)
    assert np.all(truth[:, J['FootLeft'], 1] < truth[:, J['KneeLeft'], 1])
    assert np.all(truth[:, J['FootRight'], 2] < truth[:, J['AnkleRight'], 2])


def test_tracking_loss_is_one_gap_of_at_least_one_second(recording: SyntheticRecording) -> None:
    """One run of lost frames lasting >= 1 s lies in the middle; its joints are NaN."""
    runs = _lost_runs(recording.tracked)
    assert len(runs) == 1
    start, stop = runs[0]
    stamps = recording.stamps
    assert 0 < start and stop < len(recording)
    assert stamps[stop] - stamps[start - 1] >= 1.0
    assert stamps[stop - 1] - stamps[start] == pytest.approx(1.2, abs=0.1)
    assert 0.25 * stamps[-1] < stamps[start] < 0.75 * stamps[-1]
    assert np.all(np.isnan(recording.joints[start:stop]))
    assert np.all(np.isfinite(recording.joints[recording.tracked]))
    assert np.all(np.isfinite(recording.truth))


def test_stamps_look_like_a_kinect_v2(recording: SyntheticRecording) -> None:
    """First stamp about 0.05 s, median interval 0.033-0.037 s, about 27 frames/s, some drops."""
    stamps = recording.stamps
    steps = np.diff(stamps)
    assert 0.03 <= stamps[0] <= 0.07
    assert np.all(steps > 0)
    assert 0.033 <= np.median(steps) <= 0.037
    assert 25.0 <= (len(stamps) - 1) / (stamps[-1] - stamps[0]) <= 29.5
    assert np.count_nonzero(steps > 0.06) >= 5
    assert stamps[-1] == pytest.approx(synthetic.DURATION, abs=0.1)


def test_segments_lie_within_the_recording_in_order(recording: SyntheticRecording) -> None:
    """Six labelled segments, ascending and disjoint, each inside the frames and the file."""
    segments = recording.segments
    assert len(segments) == len(recording.task_names) == len(recording.task_arms) == 6
    assert set(recording.task_arms) <= {'left', 'right', 'both'}
    previous_stop = 0
    for start, stop in segments:
        assert previous_stop <= start < stop <= len(recording)
        assert recording.stamps[stop - 1] - recording.stamps[start] > 2.0
        previous_stop = stop
    lines = recording.segment_lines()
    written = int(recording.tracked.sum())
    previous_last = 0
    for first, last in lines:
        assert previous_last < first <= last <= written
        previous_last = last


def test_arm_angles_stay_within_anatomical_limits(recording: SyntheticRecording) -> None:
    """Shoulder and elbow angles stay inside their ranges; the elbow within 0-150 degrees."""
    angles = np.degrees(recording.arm_angles)
    for index, (low, high) in enumerate(synthetic.ARM_ANGLE_LIMITS_DEG):
        assert np.all(angles[:, :, index] >= low - 1e-6)
        assert np.all(angles[:, :, index] <= high + 1e-6)
    elbow = angles[:, :, synthetic.ARM_ANGLE_NAMES.index('elbow_flexion')]
    assert elbow.min() >= 0.0 and elbow.max() <= 150.0


def test_written_files_have_75_columns_and_matching_line_counts(
    recording: SyntheticRecording, tmp_path: Path
) -> None:
    """A local parser reads 75 numbers per tracked frame, one stamp per line, valid segments."""
    paths = write_kinect_v2_text(recording, tmp_path, 'synthetic1')
    assert [path.name for path in paths] == list(DEMO_FILES)
    skeleton = _read_rows(tmp_path / 'synthetic1_skel.txt')
    stamps = _read_rows(tmp_path / 'synthetic1_skelts.txt')
    segments = _read_rows(tmp_path / 'synthetic_1.txt')
    config = json.loads((tmp_path / 'synthetic1_config.json').read_text(encoding='utf-8'))
    assert len(skeleton) == len(stamps) == int(recording.tracked.sum())
    assert all(len(row) == 75 for row in skeleton)
    assert all(len(row) == 1 for row in stamps)
    values = np.array(skeleton, dtype=float).reshape(-1, 25, 3)
    assert np.max(np.abs(values - recording.joints[recording.tracked])) <= 5.1e-7
    times = np.array(stamps, dtype=float)[:, 0]
    assert np.all(np.diff(times) > 0)
    assert [tuple(int(v) for v in row) for row in segments] == list(recording.segment_lines())
    assert config['arm'] == list(recording.task_arms)
    total = sum(path.stat().st_size for path in paths)
    assert total < 1_000_000


def test_written_files_load_with_the_project_loader(
    recording: SyntheticRecording, tmp_path: Path
) -> None:
    """The Kinect v2 loaders of :mod:`pic_ros.human.kinect_v2` read the written files."""
    write_kinect_v2_text(recording, tmp_path)
    loaded = kinect_v2_text.load_kinect_v2_recording(tmp_path / 'synthetic1_skel.txt')
    assert loaded.name == 'synthetic1'
    assert len(loaded) == int(recording.tracked.sum())
    segments = paper.load_segments(tmp_path / 'synthetic_1.txt', frame_count=len(loaded))
    assert [(s.first_line, s.last_line) for s in segments] == list(recording.segment_lines())
    arms = paper.load_task_arms(tmp_path / 'synthetic1_config.json')
    assert len(arms) == len(segments)
    assert synthetic.JOINT_NAMES == kinect_v2.KINECT_V2_JOINTS


def test_shipped_demo_files_are_what_the_script_writes(
    project_root: Path, tmp_path: Path
) -> None:
    """``demo/`` holds exactly the bytes ``scripts/make_demo_recording.py`` writes by default."""
    environment = dict(os.environ)
    environment['PYTHONPATH'] = os.pathsep.join(
        [str(project_root)] + [p for p in [environment.get('PYTHONPATH', '')] if p]
    )
    result = subprocess.run(
        [sys.executable, str(project_root / 'scripts' / 'make_demo_recording.py'),
         '--out', str(tmp_path)],
        env=environment, capture_output=True, text=True, check=False, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    for name in DEMO_FILES:
        shipped = project_root / 'pic_ros_tools' / 'demo' / name
        assert shipped.is_file(), f'{shipped} is missing; run scripts/make_demo_recording.py'
        assert shipped.read_bytes() == (tmp_path / name).read_bytes(), (
            f'{shipped} differs from the script output; regenerate it, do not edit it by hand'
        )
    readme = (project_root / 'pic_ros_tools' / 'demo' / 'README.md').read_text(encoding='utf-8')
    assert f'seed {synthetic.DEFAULT_SEED}' in readme


def test_noise_free_tracker_reproduces_the_truth() -> None:
    """With every error switched off, the measured joints equal the truth and nothing is lost."""
    quiet = TrackerModel(white_scale=0.0, drift_sigma=0.0, outlier_rate=0.0, loss_duration=0.0)
    recording = generate_recording(seed=3, tracker=quiet)
    assert np.all(recording.tracked)
    assert not np.any(recording.outliers)
    assert np.array_equal(recording.joints, recording.truth)


def test_arrays_are_read_only(recording: SyntheticRecording) -> None:
    """The recording's arrays cannot be modified in place."""
    for field in ('stamps', 'joints', 'truth', 'tracked', 'outliers', 'arm_angles'):
        with pytest.raises(ValueError):
            getattr(recording, field).flat[0] = 0


@pytest.mark.parametrize(
    'arguments',
    [
        {'seed': -1},
        {'seed': 1.5},
        {'name': 'synthetic'},
    ],
)
def test_generate_rejects_bad_arguments(arguments: dict[str, object]) -> None:
    """A negative or non-integer seed, or a name without a take number, is refused."""
    with pytest.raises(ConfigError):
        generate_recording(**arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    'arguments',
    [
        {'white_scale': -1.0},
        {'drift_time': 0.0},
        {'outlier_min': 0.2, 'outlier_max': 0.1},
        {'loss_start': 39.5},
        {'drop_probability': 1.0},
    ],
)
def test_tracker_model_rejects_bad_values(arguments: dict[str, float]) -> None:
    """Negative, empty or out-of-take tracker parameters are refused."""
    with pytest.raises(ConfigError):
        TrackerModel(**arguments)


def test_writer_rejects_a_name_without_take_number(
    recording: SyntheticRecording, tmp_path: Path
) -> None:
    """The segment file name ``<task>_<n>.txt`` needs a name ending with a number."""
    with pytest.raises(ConfigError):
        write_kinect_v2_text(recording, tmp_path, 'synthetic')


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_invariants_hold_for_any_seed(seed: int) -> None:
    """For any seed: rigid truth, right shoulder at larger x, segments inside, one loss."""
    _check_invariants(generate_recording(seed=seed))
