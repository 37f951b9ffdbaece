"""Correspondences (direction, position), the running bone-length estimate and calibration."""

from __future__ import annotations

import math
import re

from human_poses import BODY, body, J, with_arm, with_right_arm
from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.correspondence import (
    ArmLengths,
    ArmTargets,
    BoneLengthEstimator,
    CalibrationConfig,
    Calibrator,
    Correspondence,
    correspondence_names,
    human_side_for,
    load_user_profile,
    make_correspondence,
    MappingConfig,
    MappingMode,
    register_correspondence,
    RobotArmGeometry,
    TargetKind,
    unregister_correspondence,
    UserProfile,
)
from pic_ros.correspondence.mapping import MIRROR_REFLECTION
from pic_ros.correspondence.user_profile import profile_from_dict
from pic_ros.exceptions import ConfigError
from pic_ros.skeleton import make_frame, Side, SkeletonFrame
import pytest

ROBOT_SHOULDER = np.array([0.06, -0.26, 0.4])


def geometry(side: Side = Side.RIGHT, upper: float = 0.37, fore: float = 0.37):
    """Return a robot arm's geometry: shoulder landmark and landmark distances [m]."""
    shoulder = ROBOT_SHOULDER * (1.0, 1.0 if side is Side.RIGHT else -1.0, 1.0)
    return RobotArmGeometry(side=side, shoulder=shoulder, upper_arm=upper, forearm=fore)


def unit(vector) -> np.ndarray:
    """Return a unit vector."""
    array = np.asarray(vector, dtype=float)
    return array / np.linalg.norm(array)


bones = st.tuples(*(st.floats(-1.0, 1.0, allow_nan=False),) * 3).filter(
    lambda v: math.fsum(c * c for c in v) > 0.01
)
factors = st.floats(0.3, 3.0, allow_nan=False)


def test_registry_holds_direction_and_position():
    """Both built-in correspondences are registered; an unknown one is refused with the list."""
    assert {'direction', 'position'} <= set(correspondence_names())
    with pytest.raises(ConfigError, match="correspondence must be one of 'direction', 'position'"):
        MappingConfig(correspondence='elastic')


@pytest.mark.parametrize(
    'mode, robot_side, human_side',
    [
        (MappingMode.SAME_SIDE, Side.RIGHT, Side.RIGHT),
        (MappingMode.SAME_SIDE, Side.LEFT, Side.LEFT),
        (MappingMode.MIRROR, Side.RIGHT, Side.LEFT),
        (MappingMode.MIRROR, Side.LEFT, Side.RIGHT),
    ],
)
@pytest.mark.parametrize('name', ['direction', 'position'])
def test_mapping_mode_chooses_the_driving_arm(mode, robot_side, human_side, name):
    """same_side drives each robot arm with the person's arm on that side; mirror crosses over."""
    assert human_side_for(robot_side, mode) is human_side
    config = MappingConfig(mode=mode, correspondence=name, scale=1.0)
    assert make_correspondence(config, geometry(robot_side)).human_side is human_side


@settings(max_examples=60, deadline=None)
@given(upper=bones, fore=bones, size=factors)
def test_direction_keeps_bone_directions_at_the_robots_lengths_for_any_person(upper, fore, size):
    """The targets follow the person's bone directions, at the robot's landmark distances."""
    robot = geometry(upper=0.31, fore=0.35)
    direction = make_correspondence(MappingConfig(), robot)
    targets = direction.place(with_arm(0.25 * np.asarray(upper), 0.22 * np.asarray(fore)))
    assert targets is not None and targets.kind is TargetKind.SHAPE and targets.scale is None
    np.testing.assert_array_equal(targets.shoulder, robot.shoulder)
    np.testing.assert_allclose(targets.upper_arm, 0.31 * unit(upper), atol=1e-12)
    np.testing.assert_allclose(targets.forearm, 0.35 * unit(fore), atol=1e-12)
    # Scale-free: a person of another size making the same gesture gives the same targets.
    other = direction.place(
        with_arm(0.25 * size * np.asarray(upper), 0.22 * size * np.asarray(fore))
    )
    assert other is not None
    np.testing.assert_allclose(other.elbow, targets.elbow, atol=1e-12)
    np.testing.assert_allclose(other.wrist, targets.wrist, atol=1e-12)


def test_direction_mirror_reflects_the_persons_right_arm_onto_the_robots_left():
    """Face to face, the person's right arm drives the robot's left arm with y reflected."""
    robot = geometry(Side.LEFT, upper=0.3, fore=0.3)
    config = MappingConfig(mode=MappingMode.MIRROR)
    upper, fore = np.array([0.1, -0.05, -0.25]), np.array([0.0, -0.3, 0.0])
    targets = make_correspondence(config, robot).place(with_arm(upper, fore))
    assert targets is not None
    np.testing.assert_allclose(targets.upper_arm, 0.3 * unit(MIRROR_REFLECTION @ upper))
    np.testing.assert_allclose(targets.forearm, (0.0, 0.3, 0.0), atol=1e-12)  # robot's left


def test_direction_skips_a_frame_with_coincident_joints():
    """A bone shorter than 1 mm has no direction: the frame places nothing."""
    targets = make_correspondence(MappingConfig(), geometry()).place(
        with_arm(np.zeros(3), np.array([0.2, 0.0, 0.0]))
    )
    assert targets is None


def test_position_scales_the_arm_uniformly_from_the_robot_shoulder():
    """The person's right arm, scaled, hangs from the robot's right shoulder, same directions."""
    config = MappingConfig(correspondence='position', scale=2.0)
    targets = make_correspondence(config, geometry()).place(body(BODY))
    assert targets is not None and targets.scale == 2.0 and targets.kind is TargetKind.POSITION
    shoulder, elbow, wrist = BODY[J.SHOULDER_RIGHT], BODY[J.ELBOW_RIGHT], BODY[J.WRIST_RIGHT]
    np.testing.assert_array_equal(targets.shoulder, ROBOT_SHOULDER)
    np.testing.assert_allclose(targets.elbow, ROBOT_SHOULDER + 2.0 * (elbow - shoulder))
    np.testing.assert_allclose(targets.wrist, ROBOT_SHOULDER + 2.0 * (wrist - shoulder))


@pytest.mark.parametrize('name', ['direction', 'position'])
def test_every_correspondence_keeps_the_elbow_angle(name):
    """Neither keeping directions nor uniform scaling (nor the mirror) changes the elbow angle."""
    def angle(a, b, c):
        u, v = a - b, c - b
        return math.acos(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    human = angle(BODY[J.SHOULDER_RIGHT], BODY[J.ELBOW_RIGHT], BODY[J.WRIST_RIGHT])
    for mode, side in ((MappingMode.SAME_SIDE, Side.RIGHT), (MappingMode.MIRROR, Side.LEFT)):
        config = MappingConfig(mode=mode, correspondence=name, scale=0.7)
        targets = make_correspondence(config, geometry(side)).place(body(BODY))
        assert targets is not None
        assert angle(targets.shoulder, targets.elbow, targets.wrist) == pytest.approx(human)


def test_position_learns_the_scale_from_every_frame_despite_a_bad_first_second():
    """A first second of shortened arms does not fix the scale: later frames correct it."""
    robot = geometry(upper=0.37, fore=0.37)
    position = make_correspondence(MappingConfig(correspondence='position'), robot)
    assert position.status()['scale'] == 'measuring'
    for index in range(30):  # one second of arms pointing at the camera: 40 % short
        position.place(with_right_arm(0.3, index / 30.0))
    assert position.status()['scale'] == pytest.approx(0.74 / 0.3, rel=0.01)
    for index in range(30, 600):  # then 19 s of the true 0.5 m arm
        targets = position.place(with_right_arm(0.5, index / 30.0))
    assert targets is not None and targets.scale == pytest.approx(0.74 / 0.5, rel=0.01)


def test_position_uses_a_user_profile_before_any_frame():
    """With a calibrated profile the scale is known from the first frame and never drifts."""
    profile = UserProfile(
        'p', {Side.LEFT: ArmLengths(0.3, 0.25), Side.RIGHT: ArmLengths(0.28, 0.26)}
    )
    config = MappingConfig(correspondence='position', profile=profile)
    position = make_correspondence(config, geometry(upper=0.3, fore=0.3))
    targets = position.place(with_right_arm(0.9, 0.0))  # the tracker says a 0.9 m arm: ignored
    assert targets is not None and targets.scale == pytest.approx(0.6 / 0.54)
    assert position.status()['scale_source'] == 'user profile p'


def test_fixed_scale_is_used_as_is():
    """A fixed scale applies from the first frame, whatever the person's arm length."""
    position = make_correspondence(
        MappingConfig(correspondence='position', scale=1.25), geometry()
    )
    for stamp, length in ((0.0, 0.4), (0.5, 0.9), (3.0, 0.6)):
        targets = position.place(with_right_arm(length, stamp))
        assert targets is not None and targets.scale == 1.25
        assert np.linalg.norm(targets.upper_arm) == pytest.approx(1.25 * 0.5 * length)


def test_position_continues_a_replaced_correspondences_estimate_and_forgets_on_reset():
    """adopt() carries the learnt lengths over a settings change; reset() forgets them."""
    config = MappingConfig(correspondence='position')
    first = make_correspondence(config, geometry())
    for index in range(40):
        first.place(with_right_arm(0.5, index / 30.0))
    second = make_correspondence(config, geometry())
    second.adopt(first)
    assert second.status()['scale'] == first.status()['scale']
    second.reset()
    assert second.status()['scale'] == 'measuring'


def test_correspondences_need_a_body_frame_and_the_driving_arm():
    """A tracker-frame skeleton is refused with the reason; a missing arm places nothing."""
    direction = make_correspondence(MappingConfig(), geometry())
    with pytest.raises(ConfigError, match="the mapping needs a 'body' frame skeleton"):
        direction.place(make_frame(0.0, BODY))
    missing = BODY.copy()
    missing[J.WRIST_RIGHT] = np.nan
    assert direction.place(body(missing)) is None


def test_moved_targets_keep_directions_kind_and_scale():
    """``moved_to`` translates the arm: same bones, kind and scale, new shoulder."""
    start = np.array([0.1, 0.2, 0.3])
    targets = ArmTargets(start, start + (0.1, -0.2, -0.25), start + (0.3, -0.1, -0.3),
                         TargetKind.SHAPE, None)
    moved = targets.moved_to((1.0, -1.0, 0.5))
    np.testing.assert_allclose(moved.shoulder, (1.0, -1.0, 0.5))
    np.testing.assert_allclose(moved.upper_arm, targets.upper_arm, atol=1e-12)
    np.testing.assert_allclose(moved.forearm, targets.forearm, atol=1e-12)
    assert moved.kind is TargetKind.SHAPE and moved.scale is None


def test_mapping_config_from_dict_reads_defaults_and_values(tmp_path):
    """Missing keys take the defaults (direction, same side, auto scale); a profile is loaded."""
    assert MappingConfig.from_dict({}) == MappingConfig(MappingMode.SAME_SIDE, 'direction')
    profile = UserProfile('a', {side: ArmLengths(0.3, 0.25) for side in Side})
    path = profile.save(tmp_path / 'a.yaml')
    config = MappingConfig.from_dict(
        {'mode': 'mirror', 'correspondence': 'position', 'scale': 'auto',
         'user_profile': str(path)}
    )
    assert config.mode is MappingMode.MIRROR and config.correspondence == 'position'
    assert config.scale is None and config.profile is not None
    assert config.profile.arms[Side.LEFT] == ArmLengths(0.3, 0.25)


@pytest.mark.parametrize(
    'data, message',
    [
        ({'offset': 1}, "mapping: unknown keys ['offset']; known: correspondence, mode, scale, "
                        'user_profile'),
        ({'mode': 'opposite'}, "mapping.mode must be one of 'same_side', 'mirror', got "
                               "'opposite'"),
        ({'correspondence': 'elastic'}, 'mapping.correspondence must be one of'),
        ({'scale': 30}, 'mapping.scale must be in [0.05, 20.0], got 30'),
        ({'scale': 'large'}, "mapping.scale must be 'auto' or a number, got 'large'"),
        ({'scale': True}, "mapping.scale must be 'auto' or a number, got True"),
        ({'scale': math.nan}, 'mapping.scale must be in [0.05, 20.0], got nan'),
        ({'user_profile': '/nowhere/alice.yaml'}, 'cannot read user profile /nowhere/alice.yaml'),
        ({'user_profile': 3}, 'mapping.user_profile must be a string, got 3'),
    ],
)
def test_mapping_config_from_dict_rejects_bad_values(data, message):
    """Each bad mapping value is rejected with the key, the allowed values and the value."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        MappingConfig.from_dict(data)


def test_a_new_correspondence_is_one_registered_class():
    """Recipe: a correspondence registered in one module is accepted everywhere by name."""

    @register_correspondence('hold_still')
    class HoldStill(Correspondence):
        """A toy correspondence: the robot arm stays at its neutral shoulder, arm hanging."""

        def _place(self, frame: SkeletonFrame) -> ArmTargets | None:
            shoulder = self.robot.shoulder
            return ArmTargets(shoulder, shoulder + (0, 0, -0.2), shoulder + (0, 0, -0.4),
                              TargetKind.SHAPE)

    try:
        assert 'hold_still' in correspondence_names()
        config = MappingConfig.from_dict({'correspondence': 'hold_still'})
        targets = make_correspondence(config, geometry()).place(body(BODY))
        assert targets is not None
        np.testing.assert_allclose(targets.wrist, ROBOT_SHOULDER + (0, 0, -0.4))
    finally:
        unregister_correspondence('hold_still')


def test_bone_length_estimate_ignores_foreshortened_frames_and_outliers(rng):
    """Half the frames shortened and rare long glitches leave the estimate at the truth."""
    estimator = BoneLengthEstimator(bones=2)
    assert estimator.lengths() is None
    true = np.array([0.27, 0.24])
    for _ in range(3000):
        lengths = true + rng.normal(0.0, 0.002, 2)
        if rng.random() < 0.5:
            lengths *= rng.uniform(0.6, 0.97)  # pointing at the camera: shorter
        if rng.random() < 0.01:
            lengths *= 1.6  # a joint jumps for one frame
        estimator.observe(lengths)
    np.testing.assert_allclose(estimator.lengths(), true, atol=0.004)
    estimator.observe([np.nan, 5.0])  # not counted
    assert list(estimator.samples) == [3000, 3000]
    estimator.reset()
    assert estimator.lengths() is None


def t_pose(upper: float, fore: float, stamp: float, noise: float = 0.0, rng=None) -> SkeletonFrame:
    """Return the test person holding the calibration pose (arms straight out sideways)."""
    points = BODY.copy()
    for shoulder, elbow, wrist, sign in (
        (J.SHOULDER_LEFT, J.ELBOW_LEFT, J.WRIST_LEFT, 1.0),
        (J.SHOULDER_RIGHT, J.ELBOW_RIGHT, J.WRIST_RIGHT, -1.0),
    ):
        points[elbow] = points[shoulder] + upper * unit((0.0, sign, 0.08))
        points[wrist] = points[elbow] + fore * unit((0.08, sign, 0.0))
    if rng is not None:
        points[[J.ELBOW_LEFT, J.WRIST_LEFT, J.ELBOW_RIGHT, J.WRIST_RIGHT]] += rng.normal(
            0.0, noise, (4, 3)
        )
    return body(points, stamp)


def test_calibration_measures_the_bone_lengths_of_a_held_t_pose(rng):
    """Two seconds of the pose (with tracker noise) give the bone lengths within 2 mm."""
    calibrator = Calibrator(CalibrationConfig(duration=2.0))
    frames = [body(BODY, 0.0)] + [
        t_pose(0.28, 0.25, 0.5 + index / 30.0, 0.003, rng) for index in range(75)
    ]
    profile = calibrator.calibrate(frames, name='alice')
    assert profile.name == 'alice' and profile.frames >= 60
    for side in Side:
        assert profile.arms[side].upper_arm == pytest.approx(0.28, abs=0.002)
        assert profile.arms[side].forearm == pytest.approx(0.25, abs=0.002)


def test_calibration_says_how_long_the_pose_was_held():
    """A hold too short, or the wrong pose, is refused with the time held and the pose."""
    calibrator = Calibrator(CalibrationConfig(duration=2.0))
    short = [t_pose(0.28, 0.25, index / 30.0) for index in range(30)]
    with pytest.raises(ConfigError, match=r'held for at most 1\.0 s of the 2\.0 s needed: stand '):
        calibrator.calibrate(short)
    arms_down = [body(BODY, index / 30.0) for index in range(90)]
    with pytest.raises(ConfigError, match=r'held for at most 0\.0 s'):
        calibrator.calibrate(arms_down)


def test_live_calibration_keeps_only_recent_frames():
    """Fed continuously, the calibrator uses the latest hold and forgets older frames."""
    calibrator = Calibrator(CalibrationConfig(duration=1.0), keep=3.0)
    for index in range(60):  # an old hold with other lengths
        calibrator.add(t_pose(0.30, 0.30, index / 30.0))
    for index in range(60, 150):  # arms down
        calibrator.add(body(BODY, index / 30.0))
    assert calibrator.held() == 0.0
    with pytest.raises(ConfigError, match='calibration pose held for 0.0 s'):
        calibrator.profile()
    for index in range(150, 200):
        calibrator.add(t_pose(0.27, 0.24, index / 30.0))
    profile = calibrator.profile()
    assert profile.arms[Side.RIGHT].upper_arm == pytest.approx(0.27)


def test_user_profile_round_trips_through_its_yaml_file(tmp_path):
    """A saved profile reads back equal; the file says what it is."""
    profile = UserProfile(
        'bob', {Side.LEFT: ArmLengths(0.3, 0.26), Side.RIGHT: ArmLengths(0.31, 0.25)}, frames=64
    )
    path = profile.save(tmp_path / 'profiles' / 'bob.yaml')
    assert path.read_text(encoding='utf-8').startswith('# pic_ros user profile')
    loaded = load_user_profile(path)
    assert loaded.name == 'bob' and loaded.frames == 64
    assert dict(loaded.arms) == dict(profile.arms)


@pytest.mark.parametrize(
    'data, message',
    [
        ([], 'a user profile must be a mapping'),
        ({'arms': {}, 'height': 1.8}, "unknown keys ['height']"),
        ({'arms': {'left': {'upper_arm': 0.3, 'forearm': 0.25}}},
         'arms.right must give upper_arm and forearm lengths'),
        ({'arms': {'left': {'upper_arm': 0.3, 'forearm': 0.25},
                   'right': {'upper_arm': 0.9, 'forearm': 0.25}}},
         'arms.right: upper_arm length must be in [0.1, 0.6], got 0.9'),
        ({'arms': {'left': {'upper_arm': 0.3, 'forearm': 0.25},
                   'right': {'upper_arm': 0.3, 'forearm': 0.25}}, 'frames': -1},
         'frames must be a count >= 0'),
    ],
)
def test_a_bad_user_profile_is_refused_with_the_reason(data, message):
    """Missing arms, unknown keys and unbelievable lengths are refused, naming the key."""
    with pytest.raises(ConfigError, match=re.escape(message)):
        profile_from_dict(data, source='p.yaml')
