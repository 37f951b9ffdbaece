"""
Imitation metrics: elbow angle, Pose Accuracy hits, jumps, limits, percentiles.

The definitions are in docs/method.md#definitions.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros_tools.metrics import (
    angle_between,
    elbow_angle,
    jump_frames,
    JUMP_THRESHOLD,
    limit_violation_frames,
    PACC_THRESHOLD,
    percentile_ms,
    pose_hits,
)
import pytest

coordinates = st.floats(-10.0, 10.0, allow_nan=False)
points = st.tuples(coordinates, coordinates, coordinates)


def test_straight_arm_has_an_elbow_angle_of_pi():
    """Shoulder, elbow and wrist on a line, elbow in the middle: the interior angle is pi."""
    assert elbow_angle((0, 0, 1), (0, 0, 0), (0, 0, -1)) == pytest.approx(math.pi)
    assert elbow_angle((0.3, 0, 0), (0.1, 0, 0), (-2, 0, 0)) == pytest.approx(math.pi)


def test_right_angle_elbow_is_half_pi():
    """Upper arm down, forearm forward: pi / 2."""
    assert elbow_angle((0, 0, 0.3), (0, 0, 0), (0.25, 0, 0)) == pytest.approx(math.pi / 2)


def test_folded_arm_has_an_elbow_angle_of_zero():
    """A wrist back at the shoulder side gives 0 (fully folded)."""
    assert elbow_angle((0, 0, 0.3), (0, 0, 0), (0, 0, 0.1)) == pytest.approx(0.0, abs=1e-7)


def test_elbow_angle_of_known_triangles():
    """An equilateral triangle gives pi / 3; a 3-4-5 triangle gives the right angles."""
    assert elbow_angle((1, 0, 0), (0, 0, 0), (0.5, math.sqrt(3) / 2, 0)) == pytest.approx(
        math.pi / 3
    )
    assert elbow_angle((0, 3, 0), (0, 0, 0), (4, 0, 0)) == pytest.approx(math.pi / 2)
    assert elbow_angle((0, 0, 0), (0, 3, 0), (4, 0, 0)) == pytest.approx(math.atan2(4, 3))


def test_elbow_angle_works_row_by_row():
    """Stacked samples give one angle each."""
    shoulders = np.array([(0, 0, 1), (0, 0, 0.3)])
    elbows = np.zeros((2, 3))
    wrists = np.array([(0, 0, -1), (0.25, 0, 0)])
    np.testing.assert_allclose(elbow_angle(shoulders, elbows, wrists), [math.pi, math.pi / 2])


@settings(max_examples=100, deadline=None)
@given(shoulder=points, elbow=points, wrist=points, offset=points,
       scale=st.floats(0.01, 100.0, allow_nan=False))
def test_elbow_angle_is_invariant_to_scale_and_translation(shoulder, elbow, wrist, offset, scale):
    """Moving and scaling the arm uniformly keeps its elbow angle, which lies in [0, pi]."""
    s, e, w, t = (np.asarray(p, dtype=float) for p in (shoulder, elbow, wrist, offset))
    if min(np.linalg.norm(s - e), np.linalg.norm(w - e)) < 1e-3:
        return
    angle = float(elbow_angle(s, e, w))
    assert 0.0 <= angle <= math.pi
    moved = float(elbow_angle(scale * s + t, scale * e + t, scale * w + t))
    assert moved == pytest.approx(angle, abs=1e-6)


def test_elbow_angle_is_invariant_to_rotation(rng):
    """Rotating the arm keeps its elbow angle."""
    arm = rng.normal(size=(50, 3, 3))
    rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    turned = arm @ rotation.T
    np.testing.assert_allclose(
        elbow_angle(turned[:, 0], turned[:, 1], turned[:, 2]),
        elbow_angle(arm[:, 0], arm[:, 1], arm[:, 2]),
        atol=1e-7,
    )


def test_zero_length_bone_has_no_angle():
    """A wrist on the elbow has no direction, so the angle is NaN (not a number we invent)."""
    assert math.isnan(elbow_angle((0, 0, 1), (0, 0, 0), (0, 0, 0)))
    assert math.isnan(angle_between((0, 0, 0), (1, 0, 0)))


def test_angle_between_known_vectors():
    """Parallel 0, opposite pi, perpendicular pi / 2, whatever the lengths."""
    np.testing.assert_allclose(
        angle_between([(1, 0, 0), (2, 0, 0), (0, 3, 0)], [(5, 0, 0), (-1, 0, 0), (0, 0, 0.1)]),
        [0.0, math.pi, math.pi / 2],
        atol=1e-7,
    )


def test_pose_accuracy_threshold_is_the_papers():
    """The threshold is 0.087 rad^2, i.e. about 0.295 rad (16.9 degrees)."""
    assert PACC_THRESHOLD == 0.087
    assert math.degrees(math.sqrt(PACC_THRESHOLD)) == pytest.approx(16.9, abs=0.05)


@pytest.mark.parametrize('sign', [1.0, -1.0])
def test_pose_hits_at_the_threshold(sign):
    """|dtheta| = 0.29 rad is a hit and 0.30 rad a miss, in either direction."""
    human = np.array([2.0, 2.0, 2.0, 2.0, 2.0])
    robot = human + sign * np.array([0.0, 0.29, 0.30, 0.2949, 0.2951])
    np.testing.assert_array_equal(pose_hits(human, robot), [True, True, False, True, False])


def test_pose_hits_with_a_custom_threshold():
    """The threshold is on the squared difference."""
    np.testing.assert_array_equal(pose_hits([1.0, 1.0], [1.1, 1.3], threshold=0.02),
                                  [True, False])


def test_pose_hits_of_nan_is_a_miss():
    """A sample without an angle is never counted as accurate."""
    np.testing.assert_array_equal(pose_hits([math.nan, 1.0], [1.0, math.nan]), [False, False])


def test_jump_frames_marks_steps_above_the_threshold():
    """A step over 0.35 rad in any joint (either sign) marks the frame that made it."""
    assert JUMP_THRESHOLD == 0.35
    q = np.array(
        [
            [0.0, 0.0],
            [0.34, 0.0],  # below
            [0.34, 0.36],  # above, second joint
            [0.34, 0.36],  # still
            [-0.02, 0.36],  # above, downwards
            [0.0, 0.0],  # above
        ]
    )
    np.testing.assert_array_equal(jump_frames(q), [False, False, True, False, True, True])


def test_first_frame_is_never_a_jump():
    """A single frame, or none, has no jumps."""
    np.testing.assert_array_equal(jump_frames([[5.0, -5.0]]), [False])
    assert jump_frames(np.zeros((0, 7))).shape == (0,)


def test_jump_frames_with_a_custom_threshold():
    """The threshold is a parameter."""
    np.testing.assert_array_equal(jump_frames([[0.0], [0.1], [0.3]], threshold=0.15),
                                  [False, False, True])


def test_limit_violation_frames_marks_frames_outside_the_limits():
    """A frame with any joint below, above, NaN or infinite is a violation."""
    lower = np.array([-1.0, 0.0])
    upper = np.array([1.0, 0.5])
    q = np.array(
        [
            [0.0, 0.25],
            [-1.0, 0.5],  # on the limits
            [-1.0 - 1e-10, 0.0],  # within the rounding tolerance
            [1.01, 0.0],
            [0.0, -0.01],
            [math.nan, 0.0],
            [0.0, math.inf],
        ]
    )
    np.testing.assert_array_equal(
        limit_violation_frames(q, lower, upper), [False, False, False, True, True, True, True]
    )
    assert limit_violation_frames(q, lower, upper, tolerance=0.0)[2]


def test_limit_violation_frames_with_infinite_limits():
    """Continuous joints (infinite limits) never violate, but NaN still does."""
    lower = np.array([-math.inf])
    upper = np.array([math.inf])
    np.testing.assert_array_equal(
        limit_violation_frames([[1e9], [-1e9], [math.nan]], lower, upper), [False, False, True]
    )


def test_percentile_ms_converts_seconds_to_milliseconds():
    """The percentile of durations in seconds is reported in milliseconds."""
    durations = [0.001, 0.002, 0.003, 0.004, 0.005]
    assert percentile_ms(durations, 50.0) == pytest.approx(3.0)
    assert percentile_ms(durations, 100.0) == pytest.approx(5.0)
    assert percentile_ms(durations, 0.0) == pytest.approx(1.0)
    assert percentile_ms([0.0005], 99.0) == pytest.approx(0.5)


def test_percentile_ms_of_no_samples_is_nan():
    """No samples give NaN, not an error or a zero."""
    assert math.isnan(percentile_ms([], 50.0))
    assert math.isnan(percentile_ms(np.zeros(0), 99.0))
