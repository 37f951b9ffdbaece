"""The self-collision model: capsules that contain the URDF's shapes, checked against MuJoCo."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.resources import config_path, shipped_robots, urdf_path
from pic_ros.robot import load_robot
from pic_ros.robot.capsules import (
    Capsule,
    closest_points,
    covering_capsules,
    FEW,
    segment_distances,
)
from pic_ros.robot.collision import half_space_rows, joint_reach, landmark_points
from pic_ros.robot.collision_spec import CollisionSpec, WorkspaceSpec
from pic_ros.robot.kinematics.transforms import transform_from_xyz_rpy
import pytest

ROBOTS = shipped_robots()


def random_arms(robot, rng):
    """Return a random configuration of every arm, inside the limits."""
    return {name: rng.uniform(arm.lower, arm.upper) for name, arm in robot.arms.items()}


def brute_distance(p1, q1, p2, q2, samples=400):
    """Return the distance of two segments by dense sampling (an upper bound)."""
    s = np.linspace(0.0, 1.0, samples)[:, None]
    one = p1 + s * (q1 - p1)
    two = p2 + s * (q2 - p2)
    return float(np.min(np.linalg.norm(one[:, None, :] - two[None, :, :], axis=2)))


point = st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3).map(np.array)


@settings(max_examples=150, deadline=None)
@given(point, point, point, point)
def test_segment_distance_is_the_closest_approach_of_the_two_segments(p1, q1, p2, q2):
    distance, c1, c2 = segment_distances(p1[None], q1[None], p2[None], q2[None])
    assert distance[0] <= brute_distance(p1, q1, p2, q2) + 1e-6  # segments under 1 um: points
    assert distance[0] == pytest.approx(np.linalg.norm(c1[0] - c2[0]), abs=1e-12)
    for p, q, c in ((p1, q1, c1[0]), (p2, q2, c2[0])):  # the closest points lie on the segments
        along = q - p
        length = float(along @ along)
        share = 0.0 if length < 1e-24 else float((c - p) @ along) / length
        assert -1e-9 <= share <= 1 + 1e-9
        assert np.linalg.norm(p + np.clip(share, 0.0, 1.0) * along - c) < 1e-6


def test_a_few_segment_pairs_in_plain_floats_match_the_vectorized_pairs_exactly(rng):
    count = 4 * FEW
    ends = rng.normal(size=(4, count, 3)) * rng.choice([0.01, 0.1, 1.0], size=(1, count, 1))
    ends[1, :4] = ends[0, :4]  # first segments that are points
    ends[3, 2:6] = ends[2, 2:6]  # second ones, two pairs of two points
    ends[3, 6:10] = ends[2, 6:10] + 0.7 * (ends[1, 6:10] - ends[0, 6:10])  # parallel
    ends[2, 10:12] = ends[0, 10:12]  # touching
    together = closest_points(ends)
    for start in range(0, count, FEW):
        few = closest_points(ends[:, start:start + FEW])
        for whole, part in zip(together, few):
            assert np.array_equal(whole[start:start + FEW], part)


def inside(capsules, points):
    """Return, per point, whether some capsule contains it."""
    found = np.zeros(len(points), dtype=bool)
    for capsule in capsules:
        n = len(points)
        distance, _, _ = segment_distances(
            np.repeat(capsule.a[None], n, 0), np.repeat(capsule.b[None], n, 0), points, points
        )
        found |= distance <= capsule.radius + 1e-9
    return found


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(['box', 'cylinder', 'sphere']),
    st.lists(st.floats(0.004, 0.9), min_size=3, max_size=3),
    st.lists(st.floats(-0.5, 0.5), min_size=3, max_size=3),
    st.lists(st.floats(-math.pi, math.pi), min_size=3, max_size=3),
)
def test_covering_capsules_contain_every_point_of_the_primitive(kind, sizes, xyz, rpy):
    transform = transform_from_xyz_rpy(xyz, rpy)
    dimensions = {'box': tuple(sizes), 'cylinder': tuple(sizes[:2]), 'sphere': (sizes[0],)}[kind]
    capsules = covering_capsules('link', kind, dimensions, transform)
    rng = np.random.default_rng(7)
    if kind == 'box':
        local = (rng.uniform(-0.5, 0.5, (3000, 3)) * np.array(dimensions))
        corners = np.array([[x, y, z] for x in (-.5, .5) for y in (-.5, .5) for z in (-.5, .5)])
        local = np.vstack((local, corners * np.array(dimensions)))
    elif kind == 'cylinder':
        radius, length = dimensions
        angle = rng.uniform(0, 2 * math.pi, 3000)
        reach = radius * np.sqrt(rng.uniform(0, 1, 3000))
        reach[:500] = radius  # the rim
        height = rng.uniform(-length / 2, length / 2, 3000)
        local = np.column_stack((reach * np.cos(angle), reach * np.sin(angle), height))
        local[:250, 2] = length / 2
    else:
        direction = rng.normal(size=(3000, 3))
        direction /= np.linalg.norm(direction, axis=1)[:, None]
        local = direction * dimensions[0] * rng.uniform(0, 1, (3000, 1)) ** (1 / 3)
    points = local @ transform[:3, :3].T + transform[:3, 3]
    assert inside(capsules, points).all()


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_capsule_distances_never_exceed_mujocos_distances_on_random_configurations(
    robot_name, rng
):
    """The capsules contain the URDF shapes: they are never farther apart than MuJoCo's shapes."""
    pytest.importorskip('mujoco')
    from pic_ros_tools.sim.contacts import ContactChecker

    robot = load_robot(robot_name)
    model = robot.collision
    checker = ContactChecker(robot)
    compared = 0
    for _ in range(15):
        arms = random_arms(robot, rng)
        check = model.check(model.vector(arms))
        by_links: dict[tuple[str, str], float] = {}
        for index in np.argsort(check.distances)[:12]:
            links = model.pair_links(int(index))
            by_links[links] = min(by_links.get(links, math.inf), check.distances[index])
        for (first, second), ours in by_links.items():
            theirs = checker.link_distance(first, second, arms, limit=2.0)
            # apart: the capsules are nearer; overlapping: the capsules overlap too (their
            # depths measure different shapes)
            assert ours <= max(theirs, 0.0) + 1e-6, (first, second, ours, theirs)
            compared += 1
    assert compared > 0


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_mujoco_finds_no_contact_where_the_capsules_keep_apart(robot_name, rng):
    """On random configurations: every MuJoCo self-contact is a capsule overlap too."""
    pytest.importorskip('mujoco')
    from pic_ros_tools.sim.contacts import ContactChecker

    robot = load_robot(robot_name)
    model = robot.collision
    checker = ContactChecker(robot)
    contacts = 0
    for _ in range(150):
        arms = random_arms(robot, rng)
        found = checker.contacts(arms)
        contacts += bool(found)
        if found:
            assert model.check(model.vector(arms)).minimum < 0.0, found
    assert contacts > 0  # the random configurations do reach self-contacts


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_link_pairs_left_out_for_touching_at_neutral_touch_there_in_mujoco_too(robot_name):
    pytest.importorskip('mujoco')
    from pic_ros_tools.sim.contacts import ContactChecker

    robot = load_robot(robot_name)
    checker = ContactChecker(robot)
    links = [checker.model.body(index).name for index in range(checker.model.nbody)]
    for pair, reason in robot.collision.ignored.items():
        if reason.startswith('touching'):
            first, second = sorted(pair)
            assert frozenset((links.index(first), links.index(second))) in checker.excluded, (
                pair, reason,
            )


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_the_neutral_pose_keeps_every_required_distance(robot_name):
    model = load_robot(robot_name).collision
    check = model.check(model.neutral)
    assert np.all(check.distances >= model.required(0.2) - 1e-12)
    assert len(model.pairs) > 0


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_distance_gradients_match_finite_differences(robot_name, rng):
    model = load_robot(robot_name).collision
    robot = load_robot(robot_name)
    for _ in range(5):
        x = model.vector(random_arms(robot, rng))
        check = model.check(x)
        pairs = np.argsort(check.distances)[:5]
        gradients = model.gradients(check, pairs)
        step = 1e-6
        for joint in range(model.dof):
            moved = x.copy()
            moved[joint] += step
            after = model.check(moved).distances[pairs]
            numeric = (after - check.distances[pairs]) / step
            np.testing.assert_allclose(gradients[:, joint], numeric, atol=2e-4)


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_workspace_bound_gradients_match_finite_differences(robot_name, rng):
    robot = load_robot(robot_name)
    if robot.spec.workspace is None:
        pytest.skip(f'{robot_name} has no workspace bounds')
    model = robot.collision
    landmarks = landmark_points(model, robot.arms)
    spaces = robot.spec.workspace.half_spaces
    for _ in range(5):
        x = model.vector(random_arms(robot, rng))
        depths, gradients, _ = half_space_rows(model, model.check(x), landmarks, spaces)
        step = 1e-6
        for joint in range(model.dof):
            moved = x.copy()
            moved[joint] += step
            after = half_space_rows(model, model.check(moved), landmarks, spaces, False)[0]
            np.testing.assert_allclose(gradients[:, joint], (after - depths) / step, atol=2e-4)


@pytest.mark.parametrize(
    ('section', 'field'),
    [
        ({'capsules': [{'link': 'torso', 'a': [0, 0], 'radius': 0.1}]}, 'capsules[0].a'),
        ({'capsules': [{'link': 'torso', 'a': [0, 0, 0], 'radius': -1}]}, 'capsules[0].radius'),
        ({'capsules': [{'link': 'torso', 'a': [0, 0, 0]}]}, 'capsules[0]: missing'),
        ({'capsules': [{'link': '', 'a': [0, 0, 0], 'radius': 0.1}]}, 'capsules[0].link'),
        ({'capsules': [{'link': 'torso', 'a': [0, 0, 0], 'radius': 0.1, 'r': 1}]}, 'unknown'),
        ({'capsules': {'link': 'torso'}}, 'capsules must be a list'),
        ({'ignore_pairs': [['torso']]}, 'ignore_pairs[0]'),
        ({'exclude_links': 'torso'}, 'exclude_links'),
        ({'adjacent_joints': -1}, 'adjacent_joints'),
        ({'shapes': []}, 'unknown keys'),
        ([], 'must be a mapping'),
    ],
)
def test_a_malformed_collision_section_is_refused_naming_the_field(section, field):
    with pytest.raises(ConfigError, match='collision') as caught:
        CollisionSpec.from_dict(section, 'robot.yaml: collision')
    assert field in str(caught.value)


def test_a_collision_section_naming_an_unknown_link_is_refused(tmp_path):
    text = config_path('nao').read_text()
    text += '\ncollision:\n  exclude_links: [no_such_link]\n'
    (tmp_path / 'nao.yaml').write_text(text)
    (tmp_path / 'nao.urdf').write_text(urdf_path('nao').read_text())
    robot = load_robot(tmp_path / 'nao.yaml')
    with pytest.raises(ConfigError, match="'no_such_link' is not a link"):
        _ = robot.collision


def test_declared_capsules_replace_the_links_urdf_shapes(tmp_path):
    text = config_path('nao').read_text()
    text += (
        '\ncollision:\n  capsules:\n'
        '    - {link: Head, a: [0.0, 0.0, 0.05], radius: 0.07}\n'
    )
    (tmp_path / 'nao.yaml').write_text(text)
    (tmp_path / 'nao.urdf').write_text(urdf_path('nao').read_text())
    model = load_robot(tmp_path / 'nao.yaml').collision
    heads = [capsule for capsule in model.capsules if capsule.link == 'Head']
    assert heads == [capsule for capsule in heads if capsule.source == 'config']
    assert len(heads) == 1 and heads[0].radius == 0.07


@pytest.mark.parametrize(
    ('section', 'field'),
    [
        ({'table_height': 'low'}, 'table_height'),
        ({'box': {'min': [0, 0, 0]}}, 'box: missing'),
        ({'box': {'min': [0, 0, 0], 'max': [1, -1, 1]}}, 'min must be below max'),
        ({'wall': 1.0}, 'unknown keys'),
    ],
)
def test_a_malformed_workspace_section_is_refused_naming_the_field(section, field):
    with pytest.raises(ConfigError, match='workspace') as caught:
        WorkspaceSpec.from_dict(section, 'robot.yaml: workspace')
    assert field in str(caught.value)


def test_a_capsule_needs_finite_ends_and_a_positive_radius():
    with pytest.raises(ConfigError, match='radius'):
        Capsule('link', np.zeros(3), np.zeros(3), 0.0)
    with pytest.raises(ConfigError, match='finite'):
        Capsule('link', np.array([0.0, math.nan, 0.0]), np.zeros(3), 0.1)


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_no_point_moves_more_than_the_joint_reach_allows(robot_name):
    """
    Between two configurations nothing moves more than ``joint_reach . |x - y|``.

    Capsule ends, joint origins and pair distances alike (the collision guard skips samples by
    it).
    """
    model = load_robot(robot_name).collision
    reach = joint_reach(model)
    assert np.all(reach > 0.0)
    rng = np.random.default_rng(3)
    for step in (0.01, 0.1, 1.0):
        for _ in range(100):
            x = rng.uniform(model.lower, model.upper)
            y = np.clip(x + rng.normal(0.0, step, model.dof), model.lower, model.upper)
            bound = float(reach @ np.abs(x - y)) + 1e-12
            ends_x, frames_x = model.placed(x)
            ends_y, frames_y = model.placed(y)
            assert np.linalg.norm(ends_x - ends_y, axis=2).max() <= bound
            assert np.linalg.norm(frames_x[3] - frames_y[3], axis=1).max() <= bound
            assert np.abs(model.check(x).distances - model.check(y).distances).max() <= bound
