"""Head yaw and pitch from the nose and ears: known rotations back, any head size, or None."""

from __future__ import annotations

import math

from human_poses import BODY
import numpy as np
from pic_ros.exceptions import SkeletonError
from pic_ros.human.body_frame import body_axes, to_body_frame
from pic_ros.human.head import head_angles, HeadAngles
from pic_ros.skeleton import FACE_JOINTS, HumanJoint, make_frame
from pic_ros.skeleton.face import EAR_HALF_WIDTH, FACE_OFFSETS, face_points, NOSE_REST_PITCH
from pic_ros.trackers.xsens import sample_to_skeleton
from pic_ros.trackers.xsens_parser import XsensParser
from pic_ros.trackers.xsens_wire import XsensSegment
from pic_ros_tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
import pytest


def _rotation(yaw: float, pitch: float, roll: float = 0.0) -> np.ndarray:
    """Rz(yaw) Ry(pitch) Rx(roll) [rad]."""
    cy, sy, cp, sp = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    cr, sr = math.cos(roll), math.sin(roll)
    z = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    y = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    x = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    return z @ y @ x


def _with_face(yaw: float, pitch: float, roll: float = 0.0, size: float = 1.0, stamp: float = 0.0):
    """Return the body-frame test person with a median face of a size turned by yaw and pitch."""
    points = BODY.copy()
    middle = points[HumanJoint.HEAD] + (-0.02, 0.0, -0.01)
    points[list(FACE_JOINTS)] = middle + size * FACE_OFFSETS @ _rotation(yaw, pitch, roll).T
    return make_frame(stamp, points, frame='body')


@pytest.mark.parametrize('size', [0.6, 1.0, 1.5])
def test_known_rotations_of_a_face_give_back_yaw_and_pitch_for_any_head_size(size, rng):
    """Yaw and pitch of a rotated median face are recovered to 1e-9 rad, whatever its size."""
    for _ in range(50):
        yaw = rng.uniform(-1.4, 1.4)
        pitch = rng.uniform(-1.0, 1.0)
        roll = rng.uniform(-0.5, 0.5)
        angles = head_angles(_with_face(yaw, pitch, roll, size))
        assert angles is not None
        assert angles.yaw == pytest.approx(yaw, abs=1e-9)
        assert angles.pitch == pytest.approx(pitch, abs=1e-9)


def test_signs_follow_the_body_axes():
    """Turning the head to the person's left is positive yaw; looking down is positive pitch."""
    assert head_angles(_with_face(0.0, 0.0)) == HeadAngles(pytest.approx(0.0), pytest.approx(0.0))
    left = head_angles(_with_face(0.5, 0.0))
    down = head_angles(_with_face(0.0, 0.4))
    assert left is not None and left.yaw > 0.0
    assert down is not None and down.pitch > 0.0
    frame = _with_face(0.0, 0.4)
    nose = frame.positions[HumanJoint.NOSE]
    ears = 0.5 * (frame.positions[HumanJoint.EAR_LEFT] + frame.positions[HumanJoint.EAR_RIGHT])
    assert math.atan2(ears[2] - nose[2], nose[0] - ears[0]) == pytest.approx(0.4 + NOSE_REST_PITCH)


def test_a_lower_nose_reads_as_looking_down_by_the_difference():
    """A nose lower than the median face biases pitch by the change of the rest angle only."""
    frame = _with_face(0.3, 0.1)
    points = frame.positions.copy()
    middle = 0.5 * (points[HumanJoint.EAR_LEFT] + points[HumanJoint.EAR_RIGHT])
    rotation = _rotation(0.3, 0.1)
    points[HumanJoint.NOSE] = middle + rotation @ (0.12, 0.0, -0.035)
    angles = head_angles(make_frame(0.0, points, frame='body'))
    assert angles is not None
    assert angles.yaw == pytest.approx(0.3, abs=1e-9)
    assert angles.pitch - 0.1 == pytest.approx(math.atan2(0.035, 0.12) - NOSE_REST_PITCH)


@pytest.mark.parametrize('missing', FACE_JOINTS)
def test_a_missing_face_point_gives_none(missing):
    """Without the nose or an ear (Kinect v2 has none) there is no head estimate."""
    points = _with_face(0.2, 0.1).positions.copy()
    points[missing] = np.nan
    assert head_angles(make_frame(0.0, points, frame='body')) is None


@pytest.mark.parametrize(
    'change',
    [
        {HumanJoint.NOSE: (0.0, 0.0, 0.0)},  # nose at the ear midpoint (plus head offset)
        {HumanJoint.NOSE: (1.0, 0.0, 0.2)},  # nose far away
        {HumanJoint.EAR_LEFT: (0.03, 0.0, 0.4)},  # ear axis nearly vertical
        {HumanJoint.NOSE: (0.03, 0.3, 0.24)},  # nose along the ear axis
    ],
)
def test_implausible_face_points_give_none(change):
    """Points that cannot be a face (by ratios, for any head size) give no estimate."""
    points = _with_face(0.0, 0.0).positions.copy()
    middle = 0.5 * (points[HumanJoint.EAR_LEFT] + points[HumanJoint.EAR_RIGHT])
    for joint, value in change.items():
        points[joint] = value if joint is not HumanJoint.NOSE else middle + value
    assert head_angles(make_frame(0.0, points, frame='body')) is None


def test_a_tracker_frame_is_refused():
    """The angles are relative to the body: a tracker-frame skeleton raises SkeletonError."""
    frame = _with_face(0.0, 0.0)
    tracker = make_frame(0.0, frame.positions, frame='tracker')
    with pytest.raises(SkeletonError, match="'body' frame"):
        head_angles(tracker)


def test_face_points_place_the_ears_a_median_width_apart():
    """face_points puts the ears 2 * EAR_HALF_WIDTH apart and the nose ahead and below."""
    nose, left, right = face_points(np.zeros(3), np.eye(3))
    assert np.linalg.norm(left - right) == pytest.approx(2 * EAR_HALF_WIDTH)
    assert nose[0] > 0.0 and nose[2] < 0.0 and left[1] > 0.0


@pytest.mark.parametrize(('yaw', 'pitch'), [(0.0, 0.0), (0.6, 0.0), (-0.4, 0.3), (0.2, -0.5)])
def test_xsens_head_segment_orientation_gives_its_yaw_and_pitch(yaw, pitch):
    """
    Xsens MVN: the face made from the Head segment quaternion gives that segment's angles.

    The angles are relative to the body frame, which the T-pose spine tilts slightly back.
    """
    positions, quaternions = t_pose_segments()
    matrix = _rotation(yaw, pitch)
    w = math.sqrt(max(0.0, 1.0 + np.trace(matrix))) / 2.0
    quaternion = np.array([
        w,
        (matrix[2, 1] - matrix[1, 2]) / (4 * w),
        (matrix[0, 2] - matrix[2, 0]) / (4 * w),
        (matrix[1, 0] - matrix[0, 1]) / (4 * w),
    ])
    quaternions = np.array(quaternions, dtype=float)
    quaternions[int(XsensSegment.HEAD) - 1] = quaternion
    (datagram,) = build_mxtp02_datagrams(1, 0, positions, quaternions)
    sample = XsensParser().feed(datagram, 0.0)
    assert sample is not None
    frame = sample_to_skeleton(sample)
    assert frame.valid[list(FACE_JOINTS)].all()
    angles = head_angles(to_body_frame(frame))
    assert angles is not None
    body, _ = body_axes(frame)
    relative = body.T @ matrix
    expected_yaw = math.atan2(relative[1, 0], relative[0, 0])
    expected_pitch = math.asin(-relative[2, 0])
    assert abs(expected_pitch - pitch) < 0.05  # the spine leans back by 1.5 deg
    assert angles.yaw == pytest.approx(expected_yaw, abs=1e-5)  # float32 on the wire
    assert angles.pitch == pytest.approx(expected_pitch, abs=1e-5)


def test_kinect_v2_skeletons_give_no_head_estimate():
    """Kinect v2 has no face points: a Kinect v2 frame gives None, documented, never a guess."""
    from pic_ros_tools.recordings.kinect_v2_text import kinect_v2_to_human
    from pic_ros_tools.synthetic import generate_take, suite_specs

    take = generate_take(suite_specs(1)[0])
    frame = make_frame(0.0, kinect_v2_to_human(take.truth[10]))
    assert head_angles(to_body_frame(frame)) is None
