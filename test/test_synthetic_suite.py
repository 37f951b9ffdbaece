"""Tests of the synthetic robustness suite (:mod:`pic_ros_tools.synthetic.suite`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros_tools.recordings import kinect_v2_text
from pic_ros_tools.synthetic import (
    ARM_ANGLE_LIMITS_DEG,
    BAD_STARTS,
    BodyModel,
    FORESHORTENING_DEPTH_BIAS,
    foreshortening_offsets,
    generate_take,
    in_field_of_view,
    JOINT_NAMES,
    PERSON_RANGES,
    PersonSpec,
    suite_specs,
    SyntheticRecording,
    TASK_NAMES,
    VIEW_JOINTS,
    write_kinect_v2_text,
)
import pytest

J = {name: index for index, name in enumerate(JOINT_NAMES)}
SIDES = ('Left', 'Right')
ARM_BONES = (('Shoulder', 'Elbow'), ('Elbow', 'Wrist'))
ARRAYS = ('stamps', 'joints', 'truth', 'tracked', 'outliers', 'arm_angles')

Suite = list[tuple[PersonSpec, SyntheticRecording]]


@pytest.fixture(scope='module')
def suite() -> Suite:
    """Draw the default suite and generate every take once per module."""
    return [(spec, generate_take(spec)) for spec in suite_specs()]


def _spec(**changes: object) -> PersonSpec:
    """Return a valid, centred spec with some fields changed."""
    values: dict[str, object] = {
        'seed': 5,
        'height': 1.75,
        'upper_arm_factor': 1.0,
        'forearm_factor': 1.0,
        'shoulder_width_factor': 1.0,
        'camera_distance': 2.5,
        'camera_lateral': 0.0,
        'camera_height': 1.2,
        'camera_tilt_deg': 0.0,
        'person_yaw_deg': 0.0,
        'noise_scale': 1.0,
        'outlier_rate': 0.01,
        'foreshortening': 0.2,
        'bad_start': 'none',
        'duration': 25.0,
    }
    values.update(changes)
    return PersonSpec(**values)  # type: ignore[arg-type]


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Normalise vectors along the last axis."""
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def _chest_axes(joints: np.ndarray) -> np.ndarray:
    """Rows x (forward), y (left), z (up) of the chest frame per frame, shape (T, 3, 3)."""
    left = _unit(joints[:, J['ShoulderLeft']] - joints[:, J['ShoulderRight']])
    up = joints[:, J['SpineShoulder']] - joints[:, J['SpineMid']]
    up = _unit(up - np.sum(up * left, axis=1, keepdims=True) * left)
    forward = np.cross(left, up)
    return np.stack([forward, left, up], axis=1)


def _bone(joints: np.ndarray, side: str, proximal: str, distal: str) -> np.ndarray:
    """Vectors proximal -> distal of one arm bone, shape (T, 3)."""
    return joints[:, J[distal + side]] - joints[:, J[proximal + side]]


def _cosine_to_sensor(joints: np.ndarray, side: str, proximal: str, distal: str) -> np.ndarray:
    """Cosine between a bone and the line of sight from its proximal joint to the sensor."""
    towards = _unit(-joints[:, J[proximal + side]])
    return np.sum(_unit(_bone(joints, side, proximal, distal)) * towards, axis=1)


# --- Suite specs --------------------------------------------------------------------------------


def test_suite_holds_at_least_50_distinct_takes(suite: Suite) -> None:
    """The default suite has >= 50 takes with distinct seeds and names ending in digits."""
    assert len(suite) >= 50
    assert len({spec.seed for spec, _ in suite}) == len(suite)
    names = [take.name for _, take in suite]
    assert len(set(names)) == len(names)
    assert all(name[-1].isdigit() for name in names)


def test_suite_reaches_both_ends_of_the_person_and_camera_ranges(suite: Suite) -> None:
    """Heights 1.5 and 2.0 m, arm factors 0.85 and 1.15, sensor 1.5 and 4.0 m away are present."""
    specs = [spec for spec, _ in suite]
    for name in (
        'height', 'upper_arm_factor', 'forearm_factor', 'shoulder_width_factor',
        'camera_distance', 'noise_scale', 'foreshortening', 'duration',
    ):
        values = [getattr(spec, name) for spec in specs]
        low, high = PERSON_RANGES[name]
        assert min(values) == pytest.approx(low), name
        assert max(values) == pytest.approx(high), name
    for name in ('camera_lateral', 'camera_tilt_deg', 'person_yaw_deg'):
        values = np.array([getattr(spec, name) for spec in specs])
        assert np.any(values < -0.5 * abs(PERSON_RANGES[name][0])), name
        assert np.any(values > 0.5 * PERSON_RANGES[name][1]), name
    heights = [spec.camera_height for spec in specs]
    assert max(heights) - min(heights) > 0.6


def test_suite_is_stratified_over_the_height_range(suite: Suite) -> None:
    """Each tenth of the height range holds some takes (a spread, not a cluster)."""
    heights = np.array([spec.height for spec, _ in suite])
    counts = np.histogram(heights, bins=10, range=PERSON_RANGES['height'])[0]
    assert np.all(counts >= 3)


def test_both_bad_starts_are_in_at_least_a_third_of_the_takes(suite: Suite) -> None:
    """Crossed arms and pointing at the sensor each start >= 1/3 of the takes."""
    starts = [spec.bad_start for spec, _ in suite]
    assert set(starts) <= set(BAD_STARTS)
    for start in ('crossed', 'pointing'):
        assert starts.count(start) >= len(starts) / 3


def test_suite_specs_are_deterministic_and_depend_on_the_seed() -> None:
    """The same arguments give equal specs; another seed gives other specs."""
    assert suite_specs(8, seed=3) == suite_specs(8, seed=3)
    assert suite_specs(8, seed=3) != suite_specs(8, seed=4)


def test_a_small_suite_of_another_seed_is_generated_in_view() -> None:
    """Any seed and size gives takes that generate (in view, inside the angle limits)."""
    specs = suite_specs(6, seed=77)
    assert len(specs) == 6
    for spec in specs:
        take = generate_take(spec)
        assert np.all(in_field_of_view(take.truth[:, list(VIEW_JOINTS)]))


@pytest.mark.parametrize('arguments', [{'count': 0}, {'seed': -1}, {'count': 2.0}])
def test_suite_specs_rejects_bad_arguments(arguments: dict[str, object]) -> None:
    """A count below 1 or a negative or non-integer argument is refused."""
    with pytest.raises(ConfigError):
        suite_specs(**arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    'changes',
    [
        {'seed': -1},
        {'seed': 1.5},
        {'height': 1.45},
        {'height': float('nan')},
        {'upper_arm_factor': 1.2},
        {'forearm_factor': 0.8},
        {'camera_distance': 4.5},
        {'camera_lateral': 0.7},
        {'noise_scale': 3.0},
        {'foreshortening': 0.5},
        {'bad_start': 'waving'},
        {'person_yaw_deg': 30.0, 'camera_lateral': -0.6, 'camera_distance': 1.6},
    ],
)
def test_person_spec_rejects_values_out_of_range(changes: dict[str, object]) -> None:
    """Out-of-range fields, an unknown bad start or a sensor far to the side are refused."""
    with pytest.raises(ConfigError):
        _spec(**changes)


# --- Bodies and motion --------------------------------------------------------------------------


def test_body_scales_with_height_and_arm_factors() -> None:
    """Segments scale with height / 1.75 m; arm and shoulder factors apply on top."""
    assert _spec().body == BodyModel()
    spec = _spec(height=2.0, upper_arm_factor=0.85, forearm_factor=1.15)
    body = spec.body
    assert body.upper_arm == pytest.approx(0.25 * 2.0 / 1.75 * 0.85)
    assert body.forearm == pytest.approx(0.22 * 2.0 / 1.75 * 1.15)
    assert body.lower_spine == pytest.approx(0.26 * 2.0 / 1.75)


def test_truth_arm_bones_are_rigid_and_have_the_persons_lengths(suite: Suite) -> None:
    """Upper arm and forearm keep the person's own lengths in every frame of every take."""
    for spec, take in suite:
        lengths = {'Shoulder': spec.body.upper_arm, 'Elbow': spec.body.forearm}
        for side in SIDES:
            for proximal, distal in ARM_BONES:
                bone = np.linalg.norm(_bone(take.truth, side, proximal, distal), axis=1)
                assert np.max(np.abs(bone - lengths[proximal])) < 1e-9


def test_true_arm_angles_stay_inside_the_anatomical_limits(suite: Suite) -> None:
    """Every true angle of every take lies inside ARM_ANGLE_LIMITS_DEG."""
    limits = np.array(ARM_ANGLE_LIMITS_DEG)
    for _, take in suite:
        angles = np.degrees(take.arm_angles)
        assert np.all(angles >= limits[:, 0] - 1e-6)
        assert np.all(angles <= limits[:, 1] + 1e-6)


def test_bone_directions_cross_every_plane_of_the_chest_frame(suite: Suite) -> None:
    """Each arm bone points forward and back, out and across, up and down during every take."""
    for spec, take in suite:
        axes = _chest_axes(take.truth)
        for side, outward in zip(SIDES, (1.0, -1.0)):
            for proximal, distal in ARM_BONES:
                local = np.einsum(
                    'nij,nj->ni', axes, _unit(_bone(take.truth, side, proximal, distal))
                )
                local[:, 1] *= outward
                assert np.all(local.max(axis=0) > 0.1), (spec.seed, side, proximal)
                assert np.all(local.min(axis=0) < -0.1), (spec.seed, side, proximal)


def test_joint_speeds_are_human(suite: Suite) -> None:
    """True joint speeds stay below 3 rad/s (99th percentile) and never exceed 4 rad/s."""
    speeds = []
    for _, take in suite:
        steps = np.diff(take.stamps)[:, None, None]
        speeds.append(np.abs(np.diff(take.arm_angles, axis=0) / steps).ravel())
    every = np.concatenate(speeds)
    assert np.percentile(every, 99) < 3.0
    assert every.max() < 4.0


def test_crossed_start_puts_each_wrist_beyond_the_body_midline(suite: Suite) -> None:
    """In the first second of a crossed take each wrist is on the other side of the midline."""
    crossed = [take for spec, take in suite if spec.bad_start == 'crossed']
    assert crossed
    for take in crossed:
        first = take.stamps < 1.0
        truth = take.truth[first]
        left_axis = _chest_axes(truth)[:, 1]
        middle = truth[:, J['SpineShoulder']]
        left = np.sum((truth[:, J['WristLeft']] - middle) * left_axis, axis=1)
        right = np.sum((truth[:, J['WristRight']] - middle) * left_axis, axis=1)
        assert np.all(left < -0.02) and np.all(right > 0.02)


def test_pointing_start_points_both_arms_at_the_sensor(suite: Suite) -> None:
    """In the first second of a pointing take both bones of each arm point within 20 deg."""
    pointing = [take for spec, take in suite if spec.bad_start == 'pointing']
    assert pointing
    for take in pointing:
        truth = take.truth[take.stamps < 1.0]
        for side in SIDES:
            for proximal, distal in ARM_BONES:
                cosine = _cosine_to_sensor(truth, side, proximal, distal)
                assert np.all(cosine > np.cos(np.radians(20.0)))


def test_tasks_are_labelled_segments_after_the_bad_first_second(suite: Suite) -> None:
    """Segments are ordered, disjoint, start after 1 s and hold the three tasks of every take."""
    for _, take in suite:
        assert set(take.task_names) <= set(TASK_NAMES)
        assert {'cross_midline', 'raise_arms', 'rest'} <= set(take.task_names)
        assert len(set(take.task_names)) == len(take.task_names) >= 3
        assert set(take.task_arms) <= {'left', 'right', 'both'}
        previous = 0
        for start, stop in take.segments:
            assert previous <= start < stop <= len(take)
            assert take.stamps[start] > 1.0
            assert take.stamps[stop - 1] - take.stamps[start] > 1.5
            previous = stop
        assert len(take.segment_lines()) == len(take.segments)


# --- Placement ----------------------------------------------------------------------------------


def test_upper_body_stays_in_the_kinect_v2_field_of_view(suite: Suite) -> None:
    """The 12 evaluated joints are inside 70 x 60 deg and 0.5-4.5 m in every tracked frame."""
    for _, take in suite:
        joints = take.truth[take.tracked][:, list(VIEW_JOINTS)]
        depth = joints[..., 2]
        assert np.all((depth > 0.5) & (depth < 4.5))
        assert np.all(np.degrees(np.arctan2(np.abs(joints[..., 0]), depth)) <= 35.0)
        assert np.all(np.degrees(np.arctan2(np.abs(joints[..., 1]), depth)) <= 30.0)


def test_in_field_of_view_knows_the_kinect_v2_frustum() -> None:
    """Points on the axis are seen; too wide, too high, too near or behind are not."""
    points = np.array(
        [[0.0, 0.0, 2.0], [1.5, 0.0, 2.0], [0.0, 1.3, 2.0], [0.0, 0.0, 0.3], [0.0, 0.0, -2.0],
         [np.nan, 0.0, 2.0], [1.3, 1.1, 2.0]]
    )
    assert in_field_of_view(points).tolist() == [True, False, False, False, False, False, True]
    assert not in_field_of_view([1.3, 0.0, 2.0], margin_deg=2.0)


def test_a_person_out_of_view_is_refused() -> None:
    """A sensor looking down at the floor 1.5 m away cannot see the upper body."""
    spec = _spec(camera_distance=1.5, camera_height=0.6, camera_tilt_deg=-20.0)
    with pytest.raises(ConfigError, match='field of view'):
        generate_take(spec)


def test_camera_space_is_kinect_v2s(suite: Suite) -> None:
    """Right shoulder at larger x, head up, the person in front; depth matches the distance."""
    take = generate_take(_spec())
    truth = take.truth
    assert np.all(truth[:, J['ShoulderRight'], 0] > truth[:, J['ShoulderLeft'], 0])
    assert np.all(truth[:, J['Head'], 1] > truth[:, J['SpineBase'], 1])
    assert np.median(truth[:, J['SpineBase'], 2]) == pytest.approx(2.5, abs=0.05)
    assert np.median(truth[:, J['SpineBase'], 1]) == pytest.approx(1.0 - 1.2, abs=0.05)
    for _, other in suite:
        shoulders = other.truth[:, [J['ShoulderRight'], J['ShoulderLeft']], 0]
        assert np.all(shoulders[:, 0] > shoulders[:, 1])


def test_stance_to_camera_places_the_sensor_where_the_spec_says() -> None:
    """The sensor seen from the stance frame maps back to the camera origin; tilt pitches y."""
    spec = _spec(camera_lateral=0.3, camera_tilt_deg=10.0, person_yaw_deg=20.0)
    rotation, origin = spec.stance_to_camera()
    assert np.allclose(rotation @ rotation.T, np.eye(3))
    assert np.allclose(rotation @ spec.sensor_in_stance() + origin, 0.0)
    assert spec.sensor_in_stance()[2] == pytest.approx(1.2)
    level = _spec(camera_lateral=0.3, person_yaw_deg=20.0).stance_to_camera()[1]
    assert origin[1] < level[1]


# --- Tracker errors -----------------------------------------------------------------------------


def test_same_spec_gives_identical_arrays_and_another_seed_differs() -> None:
    """Generation is deterministic in the spec."""
    spec = _spec(seed=11, bad_start='pointing')
    first, second = generate_take(spec), generate_take(spec)
    for name in ARRAYS:
        assert np.array_equal(getattr(first, name), getattr(second, name), equal_nan=True)
    assert first.segments == second.segments and first.task_names == second.task_names
    other = generate_take(dataclasses.replace(spec, seed=12))
    assert not np.array_equal(first.truth[:100], other.truth[:100])


def test_foreshortening_shortens_an_upper_arm_pointing_at_the_sensor() -> None:
    """With 30 % foreshortening a bone at the sensor measures clearly shorter than side-on."""
    spec = _spec(bad_start='pointing', foreshortening=0.3, noise_scale=0.5, outlier_rate=0.0)
    take = generate_take(spec)
    for side in SIDES:
        cosine = _cosine_to_sensor(take.truth, side, 'Shoulder', 'Elbow')
        measured = np.linalg.norm(_bone(take.joints, side, 'Shoulder', 'Elbow'), axis=1)
        ratio = measured / spec.body.upper_arm
        at_sensor = take.tracked & (cosine > 0.9)
        side_on = take.tracked & (np.abs(cosine) < 0.2)
        assert at_sensor.sum() > 15 and side_on.sum() > 15
        assert np.median(ratio[at_sensor]) < 0.85
        assert np.median(ratio[side_on]) == pytest.approx(1.0, abs=0.02)


def test_no_foreshortening_leaves_bone_lengths_unbiased() -> None:
    """With foreshortening 0 the measured arm bones keep their length, even at the sensor."""
    spec = _spec(bad_start='pointing', foreshortening=0.0, noise_scale=0.5, outlier_rate=0.0)
    take = generate_take(spec)
    for side in SIDES:
        for proximal, distal in ARM_BONES:
            cosine = _cosine_to_sensor(take.truth, side, proximal, distal)
            truth = np.linalg.norm(_bone(take.truth, side, proximal, distal), axis=1)
            measured = np.linalg.norm(_bone(take.joints, side, proximal, distal), axis=1)
            ratio = measured / truth
            assert np.median(ratio[take.tracked]) == pytest.approx(1.0, abs=0.02)
            at_sensor = take.tracked & (cosine > 0.9)
            assert np.median(ratio[at_sensor]) == pytest.approx(1.0, abs=0.04)


def test_foreshortening_offsets_follow_the_documented_model() -> None:
    """A bone straight at the sensor shifts its distal chain by -f L u + f bias; others do not."""
    joints = np.zeros((3, len(JOINT_NAMES), 3))
    joints[:, :, 2] = 2.0
    for side, x in zip(SIDES, (-0.2, 0.2)):
        shoulder = np.array([x, 0.0, 2.0])
        towards = -shoulder / np.linalg.norm(shoulder)
        joints[:, J['Shoulder' + side]] = shoulder
        joints[0, J['Elbow' + side]] = shoulder + 0.25 * towards  # straight at the sensor
        joints[1, J['Elbow' + side]] = shoulder + [0.0, -0.25, 0.0]  # hanging: side-on
        joints[2, J['Elbow' + side]] = shoulder - 0.25 * towards  # pointing away
        for joint in ('Wrist', 'Hand', 'HandTip', 'Thumb'):
            joints[:, J[joint + side]] = joints[:, J['Elbow' + side]] + [0.0, -0.22, 0.0]
    factor = 0.3
    offsets = foreshortening_offsets(joints, factor)
    bias = FORESHORTENING_DEPTH_BIAS
    for side in SIDES:
        shoulder, elbow = joints[0, J['Shoulder' + side]], joints[0, J['Elbow' + side]]
        towards = -shoulder / np.linalg.norm(shoulder)
        expected = factor * (bias * -elbow / np.linalg.norm(elbow) - 0.25 * towards)
        assert np.allclose(offsets[0, J['Elbow' + side]], expected)
        assert np.allclose(offsets[0, J['Hand' + side]], offsets[0, J['Wrist' + side]])
        assert np.allclose(offsets[0, J['Shoulder' + side]], 0.0)
        assert np.allclose(offsets[1:, J['Elbow' + side]], 0.0, atol=1e-12)
        assert np.allclose(offsets[2, J['Wrist' + side]], 0.0)
    assert np.allclose(foreshortening_offsets(joints, 0.0), 0.0)
    with pytest.raises(ConfigError):
        foreshortening_offsets(joints, 1.5)


def test_truth_is_noise_free_and_errors_sit_in_the_measured_joints(suite: Suite) -> None:
    """Measured joints differ from the truth by millimetres; outliers only in tracked frames."""
    for _spec, take in suite[:10]:
        tracked = take.tracked
        error = np.linalg.norm(take.joints[tracked] - take.truth[tracked], axis=2)
        clean = ~take.outliers[tracked]
        spine = error[:, J['SpineBase']][clean[:, J['SpineBase']]]
        assert 0.002 < np.median(spine) < 0.05
        assert not np.any(take.outliers[~tracked])


def test_tracking_loss_marks_frames_lost_with_nan_joints(suite: Suite) -> None:
    """Some takes lose the person for under 1.1 s once; lost frames hold NaN joints only."""
    with_loss = 0
    for _, take in suite:
        lost = ~take.tracked
        assert np.all(np.isnan(take.joints[lost]))
        assert np.all(np.isfinite(take.joints[take.tracked]))
        assert np.all(np.isfinite(take.truth))
        if lost.any():
            with_loss += 1
            frames = np.flatnonzero(lost)
            assert np.all(np.diff(frames) == 1)
            assert take.stamps[frames[-1]] - take.stamps[frames[0]] < 1.1
            assert take.stamps[frames[0]] > 2.9
    assert 5 <= with_loss <= len(suite) - 5


def test_stamps_look_like_a_kinect_v2_over_the_take(suite: Suite) -> None:
    """About 27 frames/s with a median interval near 35 ms over the spec's duration."""
    for spec, take in suite[:10]:
        steps = np.diff(take.stamps)
        assert np.all(steps > 0)
        assert 0.033 <= np.median(steps) <= 0.037
        assert take.stamps[-1] == pytest.approx(spec.duration, abs=0.1)


def test_a_take_is_written_and_read_like_a_kinect_v2_recording(
    suite: Suite, tmp_path: Path
) -> None:
    """The text writer and the Kinect v2 loader accept a suite take; rows map to the tracker."""
    _, take = suite[0]
    write_kinect_v2_text(take, tmp_path)
    loaded = kinect_v2_text.load_kinect_v2_recording(tmp_path / f'{take.name}_skel.txt')
    assert len(loaded) == int(take.tracked.sum())
    tracker = loaded.tracker_positions()
    expected = kinect_v2_text.kinect_v2_to_human(take.joints[take.tracked])
    assert np.allclose(tracker, expected, atol=1e-6, equal_nan=True)
