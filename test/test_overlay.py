"""The person drawn over the robot: arms where the solver placed them, the trunk scaled around."""

from __future__ import annotations

from human_poses import BODY, body
import numpy as np
from pic_ros.correspondence import MappingConfig, MappingMode
from pic_ros.correspondence.mapping import MIRROR_REFLECTION
from pic_ros.correspondence.overlay import arm_points, overlay_person, TRUNK_JOINTS
from pic_ros.imitation import RobotImitator
from pic_ros.robot import load_robot
from pic_ros.skeleton import HumanJoint, make_frame
from pic_ros.solvers import SolverConfig
import pytest

J = HumanJoint


def placed_on(robot_name: str, frame, mode: MappingMode = MappingMode.SAME_SIDE):
    """Return each arm as the solver's correspondences place the frame on a robot."""
    imitator = RobotImitator(load_robot(robot_name), SolverConfig(), MappingConfig(mode=mode))
    step = imitator.step(frame)
    return {name: arm_points(arm.targets) for name, arm in step.arms.items()}


def person_arm_length(points: np.ndarray) -> float:
    """Mean upper arm + forearm of the person's two arms [m]."""
    return float(np.mean([
        np.linalg.norm(points[e] - points[s]) + np.linalg.norm(points[w] - points[e])
        for s, e, w in ((J.SHOULDER_LEFT, J.ELBOW_LEFT, J.WRIST_LEFT),
                        (J.SHOULDER_RIGHT, J.ELBOW_RIGHT, J.WRIST_RIGHT))
    ]))


@pytest.mark.parametrize('robot', ['baxter', 'yumi', 'tiago', 'nao'])
def test_the_arms_are_drawn_at_the_solvers_targets(robot):
    """Every placed arm's shoulder, elbow and wrist are the correspondence's targets, unchanged."""
    frame = body(BODY, stamp=12.5)
    placed = placed_on(robot, frame)
    overlay = overlay_person(frame, placed)
    assert overlay.stamp == 12.5
    assert set(overlay.arms) == set(placed)
    for name, points in placed.items():
        np.testing.assert_array_equal(overlay.arms[name], points)
    assert overlay.arm_bones.shape == (2 * len(placed), 2, 3)


def test_the_trunk_keeps_the_persons_shape_scaled_to_the_robot_around_the_placed_shoulders():
    """Each trunk joint sits at the placed shoulders' middle plus its scaled body-frame offset."""
    frame = body(BODY)
    placed = placed_on('baxter', frame)
    overlay = overlay_person(frame, placed)
    robot_length = np.mean([
        np.linalg.norm(p[1] - p[0]) + np.linalg.norm(p[2] - p[1]) for p in placed.values()
    ])
    scale = robot_length / person_arm_length(BODY)
    anchor = np.mean([p[0] for p in placed.values()], axis=0)
    middle = (BODY[J.SHOULDER_LEFT] + BODY[J.SHOULDER_RIGHT]) / 2.0
    assert set(overlay.trunk) == set(TRUNK_JOINTS)
    for joint in TRUNK_JOINTS:
        np.testing.assert_allclose(overlay.trunk[joint], anchor + (BODY[joint] - middle) * scale)
    assert overlay.arm_length == pytest.approx(robot_length)
    # three trunk bones and a collar bone from the chest to each placed shoulder
    assert overlay.trunk_bones.shape == (3 + len(placed), 2, 3)


def test_mirror_reflects_the_trunk_like_the_arms():
    """Face to face, the trunk's offsets from the shoulders' middle are reflected through x-z."""
    points = BODY.copy()
    points[J.HEAD] += (0.0, 0.08, 0.0)  # head tilted to the person's left
    frame = body(points)
    same = overlay_person(frame, placed_on('baxter', frame))
    mirror_placed = placed_on('baxter', frame, MappingMode.MIRROR)
    mirror = overlay_person(frame, mirror_placed, MappingMode.MIRROR)
    anchor_same = np.mean([p[0] for p in same.arms.values()], axis=0)
    anchor_mirror = np.mean([p[0] for p in mirror.arms.values()], axis=0)
    np.testing.assert_allclose(
        mirror.trunk[J.HEAD] - anchor_mirror,
        (same.trunk[J.HEAD] - anchor_same) @ MIRROR_REFLECTION,
        atol=1e-12,
    )


def test_without_the_shoulders_only_the_placed_arms_are_drawn():
    """No valid shoulder pair: no trunk and no collar bones, the arms stay."""
    frame = body(BODY)
    placed = placed_on('baxter', frame)
    valid = frame.valid.copy()
    valid[J.SHOULDER_LEFT] = False
    overlay = overlay_person(make_frame(0.0, frame.positions, valid, frame='body'), placed)
    assert not overlay.trunk
    assert overlay.trunk_bones.shape == (0, 2, 3)
    assert overlay.joints.shape == (3 * len(placed), 3)


def test_an_invalid_trunk_joint_is_left_out_with_its_bones():
    """An invalid pelvis: no pelvis point and no pelvis-chest bone; the rest is drawn."""
    frame = body(BODY)
    placed = placed_on('yumi', frame)
    valid = frame.valid.copy()
    valid[J.PELVIS] = False
    overlay = overlay_person(make_frame(0.0, frame.positions, valid, frame='body'), placed)
    assert J.PELVIS not in overlay.trunk
    assert overlay.trunk_bones.shape == (2 + len(placed), 2, 3)


def test_nothing_placed_gives_an_empty_overlay():
    """No arm placed (no driving arm in view): nothing to draw, sizes fall back."""
    overlay = overlay_person(body(BODY), {})
    assert not overlay.arms and not overlay.trunk
    assert overlay.joints.shape == (0, 3)
    assert overlay.arm_length == 0.0


def test_a_tracker_frame_skeleton_or_a_malformed_arm_is_refused():
    """The overlay places body-frame skeletons; arms are (3, 3) rows."""
    frame = body(BODY)
    with pytest.raises(ValueError, match='body-frame'):
        overlay_person(make_frame(0.0, frame.positions, frame.valid), {})
    with pytest.raises(ValueError, match='shape'):
        overlay_person(frame, {'left': np.zeros((2, 3))})
