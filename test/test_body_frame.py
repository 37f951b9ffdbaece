"""The body-centred human frame and the skeleton processing."""

from __future__ import annotations

import math
import re

from human_poses import BODY, HALF_WIDTH
from human_poses import body as _body
from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.human.body_frame import body_axes, to_body_frame
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.skeleton import HumanJoint, JOINT_COUNT, make_frame
import pytest

J = HumanJoint

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
    points = np.full((JOINT_COUNT, 3), np.nan)
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
