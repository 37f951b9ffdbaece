"""The body-centred human frame, the skeleton processing and the human -> robot arm mapping."""

from __future__ import annotations

import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.human.body_frame import body_axes, to_body_frame
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.human.skeleton import HumanJoint, make_frame, Side, SkeletonFrame
from pic_ros.mapping import (
    ArmMapper,
    ArmTargets,
    human_side_for,
    MappingConfig,
    MappingMode,
    MIRROR_REFLECTION,
)
import pytest

J = HumanJoint
HALF_WIDTH = 0.18  # [m] half the shoulder width of the test person

BODY = np.array(
    [
        (0.0, 0.0, -0.5),  # pelvis
        (0.0, 0.0, -0.05),  # spine_chest
        (0.0, 0.0, 0.1),  # neck
        (0.05, 0.0, 0.25),  # head
        (0.0, HALF_WIDTH, 0.0),  # shoulder_left
        (0.05, 0.25, -0.28),  # elbow_left
        (0.3, 0.2, -0.3),  # wrist_left
        (0.38, 0.2, -0.3),  # hand_left
        (0.0, -HALF_WIDTH, 0.0),  # shoulder_right
        (0.1, -0.22, -0.27),  # elbow_right
        (0.35, -0.1, -0.2),  # wrist_right
        (0.43, -0.1, -0.2),  # hand_right
    ]
)
"""A person in the body frame: spine along z, shoulders on y, both forearms forward."""

unit_floats = st.floats(-1.0, 1.0, allow_nan=False)
quaternions = st.tuples(unit_floats, unit_floats, unit_floats, unit_floats).filter(
    lambda q: math.fsum(c * c for c in q) > 0.01
)
translations = st.tuples(*(st.floats(-5.0, 5.0, allow_nan=False),) * 3)


def _rotation(quaternion: tuple[float, float, float, float]) -> np.ndarray:
    """Return the rotation matrix of a (not necessarily unit) quaternion ``(w, x, y, z)``."""
    w, x, y, z = np.asarray(quaternion) / np.linalg.norm(quaternion)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _tracker(points: np.ndarray, rotation: np.ndarray, translation, stamp: float = 0.0):
    """Place body-frame points in a tracker frame: ``p_tracker = R p + t``."""
    return make_frame(stamp, points @ rotation.T + np.asarray(translation, dtype=float))


def _body(points: np.ndarray, stamp: float = 0.0) -> SkeletonFrame:
    """Make a body-frame skeleton."""
    return make_frame(stamp, points, frame='body')


def _with_right_arm(length: float, stamp: float) -> SkeletonFrame:
    """Return the test person in the body frame with a right arm of the given total length."""
    points = BODY.copy()
    shoulder = points[J.SHOULDER_RIGHT]
    upper = np.array([0.2, -0.1, -0.9]) / np.linalg.norm([0.2, -0.1, -0.9])
    fore = np.array([1.0, 0.2, 0.1]) / np.linalg.norm([1.0, 0.2, 0.1])
    points[J.ELBOW_RIGHT] = shoulder + 0.5 * length * upper
    points[J.WRIST_RIGHT] = points[J.ELBOW_RIGHT] + 0.5 * length * fore
    return _body(points, stamp)


@settings(max_examples=60, deadline=None)
@given(quaternion=quaternions, translation=translations)
def test_body_frame_recovers_the_person_from_any_tracker_pose(quaternion, translation):
    """Shoulders on y (left at +y), chest at the origin, spine on z, whatever the camera pose."""
    body = to_body_frame(_tracker(BODY, _rotation(quaternion), translation))
    assert body.frame == 'body'
    np.testing.assert_allclose(body.positions, BODY, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(quaternion=quaternions, translation=translations, lean=st.tuples(unit_floats, unit_floats))
def test_body_frame_coordinates_are_invariant_to_the_tracker_pose(quaternion, translation, lean):
    """A leaning person gives the same body-frame skeleton from every tracker placement."""
    points = BODY.copy()
    points[J.PELVIS] += (0.3 * lean[0], 0.2 * lean[1], 0.0)  # spine not perpendicular to y
    reference = to_body_frame(make_frame(0.0, points))
    moved = to_body_frame(_tracker(points, _rotation(quaternion), translation))
    np.testing.assert_allclose(moved.positions, reference.positions, atol=1e-9)
    left, right = moved.positions[J.SHOULDER_LEFT], moved.positions[J.SHOULDER_RIGHT]
    np.testing.assert_allclose(left, (0.0, HALF_WIDTH, 0.0), atol=1e-9)
    np.testing.assert_allclose(right, (0.0, -HALF_WIDTH, 0.0), atol=1e-9)
    spine = moved.positions[J.SPINE_CHEST] - moved.positions[J.PELVIS]
    assert abs(spine[0]) < 1e-9 and spine[2] > 0.0  # z is the spine, made perpendicular to y


def test_body_axes_are_a_right_handed_rotation(rng):
    """The body axes form a rotation (x = y cross z) and the origin is the shoulders' midpoint."""
    points = BODY @ _rotation(tuple(rng.normal(size=4))).T + rng.normal(size=3)
    rotation, origin = body_axes(make_frame(0.0, points))
    np.testing.assert_allclose(rotation.T @ rotation, np.eye(3), atol=1e-12)
    assert np.linalg.det(rotation) == pytest.approx(1.0)
    np.testing.assert_allclose(origin, 0.5 * (points[J.SHOULDER_LEFT] + points[J.SHOULDER_RIGHT]))


def test_person_facing_the_camera_has_forward_towards_the_camera():
    """Facing a tracker (x away from the sensor), the person's left is the tracker's -y."""
    points = np.full((12, 3), np.nan)
    points[J.PELVIS] = (2.0, 0.0, 0.5)
    points[J.SPINE_CHEST] = (2.0, 0.0, 0.95)
    points[J.SHOULDER_LEFT] = (2.0, -0.18, 1.0)
    points[J.SHOULDER_RIGHT] = (2.0, 0.18, 1.0)
    points[J.WRIST_LEFT] = (1.7, -0.3, 1.1)  # hand held out towards the camera, to the left
    body = to_body_frame(make_frame(1.0, points))
    np.testing.assert_allclose(body.positions[J.WRIST_LEFT], (0.3, 0.3, 0.1), atol=1e-12)
    assert body.stamp == 1.0
    assert not body.valid[J.HEAD] and np.all(np.isnan(body.positions[J.HEAD]))


def test_body_frame_without_a_spine_uses_the_tracker_up_axis():
    """Without pelvis or chest, z is the tracker's up axis made perpendicular to the shoulders."""
    points = BODY.copy()
    points[J.PELVIS] = np.nan
    rotation = _rotation((math.cos(0.4), 0.0, 0.0, math.sin(0.4)))  # a yaw keeps up as up
    body = to_body_frame(_tracker(points, rotation, (1.0, 2.0, 0.5)))
    np.testing.assert_allclose(body.positions[J.SPINE_CHEST], BODY[J.SPINE_CHEST], atol=1e-12)
    assert not body.valid[J.PELVIS]


@pytest.mark.parametrize('missing', [J.SHOULDER_LEFT, J.SHOULDER_RIGHT])
def test_missing_shoulder_has_no_body_frame(missing):
    """Both shoulders are needed; the error says so."""
    points = BODY.copy()
    points[missing] = np.nan
    with pytest.raises(SkeletonError, match='both shoulders are needed for the body frame'):
        to_body_frame(make_frame(0.0, points))


def test_coincident_shoulders_have_no_body_frame():
    """Shoulders closer than 1 mm are rejected."""
    points = BODY.copy()
    points[J.SHOULDER_LEFT] = points[J.SHOULDER_RIGHT] + 1e-4
    with pytest.raises(SkeletonError, match='the shoulders coincide'):
        to_body_frame(make_frame(0.0, points))


def test_spine_along_the_shoulders_has_no_body_frame():
    """A spine parallel to the shoulder line leaves the up axis undefined."""
    points = BODY.copy()
    points[J.PELVIS] = (0.0, -0.5, 0.0)
    points[J.SPINE_CHEST] = (0.0, 0.5, 0.0)
    with pytest.raises(SkeletonError, match='the spine is parallel to the shoulder line'):
        to_body_frame(make_frame(0.0, points))


def test_body_frame_input_is_rejected():
    """Converting a skeleton that is already in the body frame is an error."""
    with pytest.raises(SkeletonError, match="expected a 'tracker' frame skeleton, got 'body'"):
        to_body_frame(_body(BODY))


@pytest.mark.parametrize(
    'mode, robot_side, human_side',
    [
        (MappingMode.SAME_SIDE, Side.RIGHT, Side.RIGHT),
        (MappingMode.SAME_SIDE, Side.LEFT, Side.LEFT),
        (MappingMode.MIRROR, Side.RIGHT, Side.LEFT),
        (MappingMode.MIRROR, Side.LEFT, Side.RIGHT),
    ],
)
def test_mapping_mode_chooses_the_driving_arm(mode, robot_side, human_side):
    """same_side drives each robot arm with the person's arm on that side; mirror crosses over."""
    assert human_side_for(robot_side, mode) is human_side
    mapper = ArmMapper(MappingConfig(mode=mode, scale=1.0), robot_side, (0.0, 0.0, 0.0), 0.6)
    assert mapper.human_side is human_side


def test_same_side_maps_the_right_arm_onto_the_right_arm_unreflected():
    """The person's right arm, scaled, hangs from the robot's right shoulder, same directions."""
    robot_shoulder = np.array([0.06, -0.26, 0.4])
    mapper = ArmMapper(MappingConfig(scale=2.0), Side.RIGHT, robot_shoulder, 0.7)
    targets = mapper.place(_body(BODY))
    assert targets is not None and targets.scale == 2.0
    shoulder, elbow, wrist = BODY[J.SHOULDER_RIGHT], BODY[J.ELBOW_RIGHT], BODY[J.WRIST_RIGHT]
    np.testing.assert_array_equal(targets.shoulder, robot_shoulder)
    np.testing.assert_allclose(targets.elbow, robot_shoulder + 2.0 * (elbow - shoulder))
    np.testing.assert_allclose(targets.wrist, robot_shoulder + 2.0 * (wrist - shoulder))


def test_mirror_maps_the_right_arm_onto_the_left_arm_reflected_in_y():
    """Face to face, the person's right arm drives the robot's left arm with y reflected."""
    robot_shoulder = np.array([0.06, 0.26, 0.4])
    mapper = ArmMapper(MappingConfig(mode=MappingMode.MIRROR, scale=1.5), Side.LEFT,
                       robot_shoulder, 0.7)
    points = BODY.copy()
    points[J.WRIST_RIGHT] = points[J.ELBOW_RIGHT] + (0.0, -0.3, 0.0)  # hand out to their right
    targets = mapper.place(_body(points))
    assert targets is not None
    upper = points[J.ELBOW_RIGHT] - points[J.SHOULDER_RIGHT]
    np.testing.assert_allclose(targets.upper_arm, 1.5 * (MIRROR_REFLECTION @ upper))
    np.testing.assert_allclose(targets.forearm, (0.0, 0.45, 0.0), atol=1e-12)  # robot's left
    np.testing.assert_array_equal(targets.shoulder, robot_shoulder)


@settings(max_examples=30, deadline=None)
@given(offset=translations)
def test_the_shoulder_is_pinned_to_the_robot_shoulder(offset):
    """Wherever the person's shoulder is in the body frame, the target shoulder is the robot's."""
    robot_shoulder = (0.1, -0.2, 0.3)
    points = BODY.copy()
    points[[J.SHOULDER_RIGHT, J.ELBOW_RIGHT, J.WRIST_RIGHT]] += np.asarray(offset) * 0.1
    for mode in MappingMode:
        side = Side.RIGHT if mode is MappingMode.SAME_SIDE else Side.LEFT
        targets = ArmMapper(MappingConfig(mode=mode, scale=1.3), side, robot_shoulder, 0.7).place(
            _body(points)
        )
        assert targets is not None
        np.testing.assert_array_equal(targets.shoulder, robot_shoulder)
        reference = ArmMapper(MappingConfig(mode=mode, scale=1.3), side, robot_shoulder, 0.7)
        expected = reference.place(_body(BODY))
        assert expected is not None
        np.testing.assert_allclose(targets.elbow, expected.elbow, atol=1e-12)
        np.testing.assert_allclose(targets.wrist, expected.wrist, atol=1e-12)


def test_mapping_keeps_the_elbow_angle():
    """Uniform scaling (and the mirror reflection) keep the elbow angle of the person."""
    def angle(a, b, c):
        u, v = a - b, c - b
        return math.acos(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    human = angle(BODY[J.SHOULDER_RIGHT], BODY[J.ELBOW_RIGHT], BODY[J.WRIST_RIGHT])
    for mode, side in ((MappingMode.SAME_SIDE, Side.RIGHT), (MappingMode.MIRROR, Side.LEFT)):
        targets = ArmMapper(MappingConfig(mode=mode, scale=0.7), side, (0, 0, 0), 0.5).place(
            _body(BODY)
        )
        assert targets is not None
        robot = angle(targets.shoulder, targets.elbow, targets.wrist)
        assert robot == pytest.approx(human, abs=1e-12)


@pytest.mark.parametrize('window, expected', [(1.0, 0.8 / 0.5), (2.0, 0.8 / 0.8)])
def test_auto_scale_is_measured_over_the_window_then_held(window, expected):
    """``scale: auto`` = robot length / human length over the first window, then held."""
    robot_length = 0.8
    mapper = ArmMapper(MappingConfig(scale=None, scale_window=window), Side.RIGHT, (0, 0, 0),
                       robot_length)
    assert mapper.scale is None
    first = 5.0
    for index in range(int(round(30 * window)) + 1):  # 30 Hz, the window's ends included
        length = 0.5 if index < 30 else 0.8  # the first second 0.5 m, then 0.8 m
        targets = mapper.place(_with_right_arm(length, first + index / 30.0))
        assert targets is not None
        if index < 30:
            assert targets.scale == pytest.approx(robot_length / 0.5)
    assert mapper.scale == pytest.approx(expected)
    held = mapper.scale
    for index, length in enumerate((0.3, 0.7, 1.2, 0.6) * 10):  # the person stretches, or leaves
        frame = _with_right_arm(length, first + window + 0.1 + index / 30.0)
        targets = mapper.place(frame)
        assert targets is not None
        assert targets.scale == held
        human = frame.positions[J.WRIST_RIGHT] - frame.positions[J.SHOULDER_RIGHT]
        np.testing.assert_allclose(targets.wrist - targets.shoulder, held * human, atol=1e-12)
    mapper.reset()
    assert mapper.scale is None


def test_auto_scale_is_robust_to_a_glitch_in_the_window():
    """One implausible frame inside the window does not change the measured scale."""
    mapper = ArmMapper(MappingConfig(scale=None, scale_window=1.0), Side.RIGHT, (0, 0, 0), 0.6)
    for index in range(31):
        mapper.place(_with_right_arm(1.4 if index == 12 else 0.6, index / 30.0))
    assert mapper.scale == pytest.approx(1.0)


def test_auto_scale_ignores_invalid_arms_and_tiny_lengths():
    """Frames without the driving arm, or with a tiny arm, do not start the window."""
    mapper = ArmMapper(MappingConfig(scale=None, scale_window=0.5), Side.RIGHT, (0, 0, 0), 0.6)
    no_arm = BODY.copy()
    no_arm[J.WRIST_RIGHT] = np.nan
    assert mapper.place(_body(no_arm, 0.0)) is None
    assert mapper.place(_with_right_arm(0.01, 0.1)) is None
    assert mapper.scale is None
    assert mapper.place(_with_right_arm(0.6, 10.0)) is not None
    assert mapper.place(_with_right_arm(0.6, 10.4)).scale == 1.0
    assert mapper.place(_with_right_arm(0.3, 10.5)).scale == 1.0  # median(0.6, 0.6, 0.3), held
    assert mapper.place(_with_right_arm(0.3, 10.6)).scale == 1.0


def test_fixed_scale_is_used_as_is():
    """A fixed scale applies from the first frame, whatever the person's arm length."""
    mapper = ArmMapper(MappingConfig(scale=1.25), Side.RIGHT, (0, 0, 0), 0.8)
    assert mapper.scale == 1.25
    for stamp, length in ((0.0, 0.4), (0.5, 0.9), (3.0, 0.6)):
        targets = mapper.place(_with_right_arm(length, stamp))
        assert targets is not None and targets.scale == 1.25
        assert np.linalg.norm(targets.upper_arm) == pytest.approx(1.25 * 0.5 * length)
    mapper.reset()
    assert mapper.scale == 1.25


def test_mapper_needs_a_body_frame_skeleton():
    """A tracker-frame skeleton is refused with the reason."""
    mapper = ArmMapper(MappingConfig(scale=1.0), Side.RIGHT, (0, 0, 0), 0.8)
    with pytest.raises(ConfigError, match="the mapping needs a 'body' frame skeleton, got "
                                          "'tracker'"):
        mapper.place(make_frame(0.0, BODY))


def test_mapper_rejects_a_bad_robot_arm_length():
    """The robot arm length must be a positive, believable number."""
    with pytest.raises(ConfigError, match=re.escape('robot arm length must be in [0.001, 10.0], '
                                                    'got 0.0')):
        ArmMapper(MappingConfig(), Side.RIGHT, (0, 0, 0), 0.0)


@settings(max_examples=40, deadline=None)
@given(shoulder=translations, new=translations)
def test_moved_targets_keep_directions_lengths_and_scale(shoulder, new):
    """``moved_to`` translates the arm: same upper arm, forearm and scale, new shoulder."""
    start = np.asarray(shoulder, dtype=float)
    targets = ArmTargets(start, start + (0.1, -0.2, -0.25), start + (0.3, -0.1, -0.3), 1.7)
    moved = targets.moved_to(new)
    np.testing.assert_allclose(moved.shoulder, new, atol=1e-12)
    np.testing.assert_allclose(moved.upper_arm, targets.upper_arm, atol=1e-12)
    np.testing.assert_allclose(moved.forearm, targets.forearm, atol=1e-12)
    assert moved.scale == targets.scale
    np.testing.assert_array_equal(targets.shoulder, start)  # the original is untouched


def test_mapping_config_from_dict_reads_defaults_and_values():
    """Missing keys take the defaults; ``auto`` means no fixed scale."""
    assert MappingConfig.from_dict({}) == MappingConfig(MappingMode.SAME_SIDE, None, 1.0)
    config = MappingConfig.from_dict({'mode': 'mirror', 'scale': 1.5, 'scale_window': 2})
    assert config == MappingConfig(MappingMode.MIRROR, 1.5, 2.0)
    assert MappingConfig.from_dict({'scale': 'auto'}).scale is None


@pytest.mark.parametrize(
    'data, message',
    [
        ({'offset': 1}, "mapping: unknown keys ['offset']; known: mode, scale, scale_window"),
        ({'mode': 'opposite'}, "mapping.mode must be one of 'same_side', 'mirror', got "
                               "'opposite'"),
        ({'scale': 30}, 'mapping.scale must be in [0.05, 20.0], got 30'),
        ({'scale': 0.0}, 'mapping.scale must be in [0.05, 20.0], got 0.0'),
        ({'scale': 'large'}, "mapping.scale must be a number in [0.05, 20.0], got 'large'"),
        ({'scale': True}, 'mapping.scale must be a number in [0.05, 20.0], got True'),
        ({'scale': math.nan}, 'mapping.scale must be in [0.05, 20.0], got nan'),
        ({'scale_window': -1}, 'mapping.scale_window must be in [0.0, 60.0], got -1'),
    ],
)
def test_mapping_config_from_dict_rejects_bad_values(data, message):
    """Each bad mapping value is rejected with the key, the allowed range and the value."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        MappingConfig.from_dict(data)


def test_mapping_config_constructor_validates():
    """Direct construction checks the same rules."""
    with pytest.raises(ConfigError, match="mapping mode must be a MappingMode, got 'mirror'"):
        MappingConfig(mode='mirror')  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=re.escape('mapping scale must be in [0.05, 20.0]')):
        MappingConfig(scale=0.0)


def _step_sequence(rotation: np.ndarray, translation, step: np.ndarray, count: int):
    """Yield tracker frames at 30 Hz: the test person, right wrist moved by ``step`` after t=0."""
    for index in range(count):
        points = BODY.copy()
        if index > 0:
            points[J.WRIST_RIGHT] += step
        yield _tracker(points, rotation, translation, stamp=index / 30.0)


def test_processor_smooths_a_step_with_the_time_constant():
    """A wrist step approaches its new value as ``1 - exp(-t / tau)``, in the body frame."""
    tau = 0.1
    processor = SkeletonProcessor(ProcessingConfig(time_constant=tau))
    rotation = _rotation((0.9, 0.1, -0.3, 0.2))
    step = np.array([0.0, 0.1, 0.05])
    for frame in _step_sequence(rotation, (2.0, -1.0, 0.8), step, 20):
        body = processor.process(frame)
        assert body.frame == 'body' and body.stamp == frame.stamp
        fraction = 1.0 - math.exp(-frame.stamp / tau)
        np.testing.assert_allclose(
            body.positions[J.WRIST_RIGHT], BODY[J.WRIST_RIGHT] + fraction * step, atol=1e-9
        )
        unmoved = [joint for joint in J if joint is not J.WRIST_RIGHT]
        np.testing.assert_allclose(body.positions[unmoved], BODY[unmoved], atol=1e-9)
    assert 1.0 - math.exp(-3 / 30.0 / tau) == pytest.approx(1.0 - math.exp(-1.0))


def test_processor_without_smoothing_is_the_body_frame():
    """With ``smoothing: none`` each output is the body frame of that input."""
    processor = SkeletonProcessor(ProcessingConfig(smoothing='none'))
    for frame in _step_sequence(np.eye(3), (1.0, 0.0, 0.0), np.array([0.1, 0.0, 0.0]), 5):
        np.testing.assert_allclose(
            processor.process(frame).positions, to_body_frame(frame).positions, atol=1e-12
        )


def test_processor_is_unaffected_by_the_person_walking():
    """Translating the whole skeleton is smoothed equally on every joint: the body frame holds."""
    processor = SkeletonProcessor(ProcessingConfig(time_constant=0.2))
    for index in range(10):
        frame = _tracker(BODY, np.eye(3), (2.0 + 0.1 * index, 0.05 * index, 0.0), index / 30.0)
        np.testing.assert_allclose(processor.process(frame).positions, BODY, atol=1e-9)


def test_processor_reports_frames_without_a_body_frame():
    """A skeleton without shoulders raises the body-frame error; reset starts afresh."""
    processor = SkeletonProcessor()
    points = BODY.copy()
    points[J.SHOULDER_LEFT] = np.nan
    with pytest.raises(SkeletonError, match='both shoulders are needed'):
        processor.process(make_frame(0.0, points))
    processor.reset()
    np.testing.assert_allclose(processor.process(make_frame(1.0, BODY)).positions, BODY,
                               atol=1e-12)


@pytest.mark.parametrize(
    'kwargs, message',
    [
        ({'smoothing': 'median'},
         "smoothing must be one of 'exponential', 'kalman', 'none', got 'median'"),
        ({'time_constant': -0.1}, 'time_constant must be in [0.0, 10.0], got -0.1'),
        ({'reset_after': 0.0}, 'reset_after must be in [0.001, 60.0], got 0.0'),
    ],
)
def test_processing_config_rejects_bad_values(kwargs, message):
    """Bad processing settings are rejected with the field, range and value."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        ProcessingConfig(**kwargs)
