"""
URDF joint model and kinematic chains: fast FK against the complete form, Jacobians, errors.

These tests check the project's kinematics against itself (the hot path against the complete
4 x 4 transforms) and against hand-built URDFs; ``test_kinematics_reference.py`` checks the same
FK and Jacobians against independent implementations (MuJoCo, ikpy).
"""

from __future__ import annotations

import math
from pathlib import Path
import re

import numpy as np
from pic_ros.exceptions import ChainError
from pic_ros.resources import shipped_robots, urdf_path
from pic_ros.robot import load_robot
from pic_ros.robot.kinematics import JointType, KinematicChain, load_robot_model, RobotModel
import pytest

CONFIGURATIONS = 40
FK_TOLERANCE = 1e-12  # [m] and axis components


def _arm_chains() -> list[tuple[str, KinematicChain]]:
    """Return every shipped arm chain and TIAGo's torso + arm chain, with an id each."""
    chains = []
    for robot_name in shipped_robots():
        robot = load_robot(robot_name)
        for arm_name, arm in robot.arms.items():
            chains.append((f'{robot_name}-{arm_name}', arm.chain))
    tiago = load_robot_model(urdf_path('tiago'))
    chains.append(
        ('tiago-torso', KinematicChain.from_model(tiago, 'base_footprint', 'arm_tool_link'))
    )
    return chains


CHAINS = _arm_chains()
CHAIN_IDS = [name for name, _ in CHAINS]


def _urdf(tmp_path: Path, body: str, name: str = 'probe') -> Path:
    """Write a URDF whose ``<robot>`` element holds ``body`` and return its path."""
    path = tmp_path / f'{name}.urdf'
    path.write_text(f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n',
                    encoding='utf-8')
    return path


def _joint(name: str, kind: str, parent: str, child: str, extra: str = '') -> str:
    """Return the XML of one joint."""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{extra}</joint>')


def _links(*names: str) -> str:
    """Return the XML of empty links."""
    return ''.join(f'<link name="{name}"/>' for name in names)


def _random_q(chain: KinematicChain, rng: np.random.Generator) -> np.ndarray:
    """Draw joint values inside the limits (+-pi where a limit is infinite)."""
    lower = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
    upper = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
    return rng.uniform(lower, upper)


def _complete_positions_and_axes(
    chain: KinematicChain, q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Compute joint origins, tip and axes with the slow, complete transforms."""
    frames = chain.joint_origin_transforms(q)
    links = chain.link_transforms(q)
    positions = [frames[joint.name][:3, 3] for joint in chain.movable_joints]
    positions.append(links[chain.tip_link][:3, 3])
    axes = [frames[joint.name][:3, :3] @ joint.axis for joint in chain.movable_joints]
    return np.array(positions), np.array(axes)


def _odd_axes_chain(tmp_path: Path) -> KinematicChain:
    """Build a chain with every joint type, antiparallel, oblique and unnormalised axes."""
    specs = [
        ('j0', 'revolute', '0 0 -1', '0.1 0 0.2', '0.3 -0.2 0.1'),
        ('f0', 'fixed', None, '0 0.05 0', '0 1.5707963 0'),
        ('j1', 'prismatic', '1 2 -2', '0 0 0.3', '0 0 0'),
        ('j2', 'continuous', '1 0 0', '0.2 0 0', '-0.4 0.2 1.1'),
        ('j3', 'revolute', '0 0 2', '0 -0.1 0.25', '3.1 0 0'),
        ('j4', 'revolute', '0 -1 0', '0.05 0.05 0.05', '0 0 0'),
        ('j5', 'prismatic', '0 0 -1', '0 0 0.1', '0.2 0.2 0.2'),
        ('f1', 'fixed', None, '0 0 0.12', '0.5 -0.5 0.5'),
    ]
    body = _links('base', *[f'l{i}' for i in range(len(specs))])
    parent = 'base'
    for index, (name, kind, axis, xyz, rpy) in enumerate(specs):
        extra = f'<origin xyz="{xyz}" rpy="{rpy}"/>'
        if axis is not None:
            extra += f'<axis xyz="{axis}"/>'
        if kind in ('revolute', 'prismatic'):
            extra += '<limit lower="-2" upper="2" velocity="1" effort="1"/>'
        body += _joint(name, kind, parent, f'l{index}', extra)
        parent = f'l{index}'
    model = load_robot_model(_urdf(tmp_path, body))
    return KinematicChain.from_model(model, 'base', parent)


@pytest.mark.parametrize('chain', [c for _, c in CHAINS], ids=CHAIN_IDS)
def test_fast_fk_equals_the_complete_transforms(chain, rng):
    """``positions_and_axes`` equals origins and axes from the 4x4 link transforms (1e-12)."""
    for _ in range(CONFIGURATIONS):
        q = _random_q(chain, rng)
        positions, axes = chain.positions_and_axes(q)
        expected_positions, expected_axes = _complete_positions_and_axes(chain, q)
        assert positions.shape == (chain.dof + 1, 3)
        np.testing.assert_allclose(positions, expected_positions, rtol=0.0, atol=FK_TOLERANCE)
        np.testing.assert_allclose(axes, expected_axes, rtol=0.0, atol=FK_TOLERANCE)
        np.testing.assert_allclose(chain.joint_positions(q), positions, rtol=0.0, atol=0.0)


@pytest.mark.parametrize('chain', [c for _, c in CHAINS], ids=CHAIN_IDS)
def test_prefix_fk_is_a_prefix_of_the_full_fk(chain, rng):
    """The first ``count`` origins and axes do not depend on how many joints are evaluated."""
    q = _random_q(chain, rng).tolist()
    full_positions, full_axes = chain.prefix_positions_and_axes(q, chain.dof)
    assert len(full_positions) == chain.dof + 1
    for count in range(chain.dof):
        positions, axes = chain.prefix_positions_and_axes(q, count)
        assert len(positions) == len(axes) == count
        np.testing.assert_allclose(
            np.reshape(positions, (-1, 3)), np.reshape(full_positions[:count], (-1, 3)), atol=0.0
        )
        np.testing.assert_allclose(
            np.reshape(axes, (-1, 3)), np.reshape(full_axes[:count], (-1, 3)), atol=0.0
        )


def test_fast_fk_handles_every_joint_type_and_axis(tmp_path, rng):
    """Prismatic, continuous, antiparallel, oblique and unnormalised axes agree (1e-12)."""
    chain = _odd_axes_chain(tmp_path)
    assert [joint.joint_type for joint in chain.movable_joints] == [
        JointType.REVOLUTE, JointType.PRISMATIC, JointType.CONTINUOUS, JointType.REVOLUTE,
        JointType.REVOLUTE, JointType.PRISMATIC,
    ]
    np.testing.assert_allclose(np.linalg.norm(chain.positions_and_axes(np.zeros(6))[1], axis=1),
                               1.0, atol=1e-15)
    for _ in range(CONFIGURATIONS):
        q = _random_q(chain, rng)
        positions, axes = chain.positions_and_axes(q)
        expected_positions, expected_axes = _complete_positions_and_axes(chain, q)
        np.testing.assert_allclose(positions, expected_positions, rtol=0.0, atol=FK_TOLERANCE)
        np.testing.assert_allclose(axes, expected_axes, rtol=0.0, atol=FK_TOLERANCE)


@pytest.mark.parametrize('chain', [c for _, c in CHAINS], ids=CHAIN_IDS)
def test_link_transforms_are_rigid(chain, rng):
    """Every link pose has an orthonormal, right-handed rotation."""
    for transform in chain.link_transforms(_random_q(chain, rng)).values():
        rotation = transform[:3, :3]
        np.testing.assert_allclose(rotation @ rotation.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_array_equal(transform[3], [0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize('chain', [c for _, c in CHAINS], ids=CHAIN_IDS)
def test_a_joint_moves_only_what_comes_after_it(chain, rng):
    """Changing joint k leaves origins 0..k in place (a joint does not move its own origin)."""
    q = _random_q(chain, rng)
    before = chain.joint_positions(q)
    for index in range(chain.dof):
        moved = q.copy()
        moved[index] += 0.3
        after = chain.joint_positions(moved)
        np.testing.assert_allclose(after[: index + 1], before[: index + 1], atol=1e-12)


def test_prismatic_torso_translates_the_arm_along_its_axis(rng):
    """Raising TIAGo's torso by d moves every arm point by d along the torso axis."""
    chain = dict(CHAINS)['tiago-torso']
    assert chain.movable_joints[0].joint_type is JointType.PRISMATIC
    q = _random_q(chain, rng)
    q[0] = 0.1
    positions, axes = chain.positions_and_axes(q)
    raised = q.copy()
    raised[0] += 0.2
    moved = chain.joint_positions(raised)
    np.testing.assert_allclose(moved[0], positions[0], atol=1e-12)
    np.testing.assert_allclose(moved[1:] - positions[1:], np.tile(0.2 * axes[0], (chain.dof, 1)),
                               atol=1e-12)


def test_within_limits_checks_every_coordinate_with_a_tolerance():
    """Inside passes, outside fails, the tolerance absorbs rounding, NaN is never inside."""
    arm = load_robot('baxter').arms['left']
    chain = arm.chain
    assert chain.within_limits(arm.neutral)
    assert chain.within_limits(chain.lower) and chain.within_limits(chain.upper)
    for index in range(chain.dof):
        low = chain.lower.copy()
        low[index] -= 1e-3
        assert not chain.within_limits(low)
        high = chain.upper.copy()
        high[index] += 1e-10
        assert chain.within_limits(high)
        assert not chain.within_limits(high, tolerance=0.0)
        nan = arm.neutral.copy()
        nan[index] = math.nan
        assert not chain.within_limits(nan)


def test_continuous_joints_have_no_position_limits(tmp_path):
    """A continuous joint is inside its limits at any angle."""
    body = _links('a', 'b') + _joint('spin', 'continuous', 'a', 'b', '<axis xyz="0 0 1"/>')
    chain = KinematicChain.from_model(load_robot_model(_urdf(tmp_path, body)), 'a', 'b')
    assert chain.lower[0] == -math.inf and chain.upper[0] == math.inf
    assert chain.velocity[0] == math.inf
    assert chain.within_limits([1e6])


def test_wrong_number_of_joint_values_is_rejected():
    """FK and the limit check name the expected count and the shape received."""
    chain = load_robot('yumi').arms['left'].chain
    message = re.escape('expected 7 joint values, got shape (3,)')
    for method in (chain.positions_and_axes, chain.link_transforms,
                   chain.joint_origin_transforms, chain.within_limits):
        with pytest.raises(ChainError, match=message):
            method([0.0, 0.0, 0.0])


def test_chain_index_of_an_unknown_joint_lists_the_joints():
    """Asking for a joint that is not on the chain names the chain and its joints."""
    chain = load_robot('yumi').arms['left'].chain
    with pytest.raises(
        ChainError,
        match=re.escape("'head_pan' is not a movable joint of chain yumi_base_link -> "
                        'yumi_link_7_l; joints: yumi_joint_1_l, yumi_joint_2_l'),
    ):
        chain.index('head_pan')


def test_zero_velocity_and_effort_limits_are_kept(tmp_path):
    """A URDF velocity or effort limit of 0 is a limit, not a missing value (regression)."""
    limit = '<limit lower="-1" upper="1" velocity="0" effort="0"/>'
    body = _links('a', 'b', 'c') + _joint('r', 'revolute', 'a', 'b', limit)
    body += _joint('p', 'prismatic', 'b', 'c', limit.replace('velocity="0"', 'velocity="0.5"'))
    model = load_robot_model(_urdf(tmp_path, body))
    revolute = model.joints['r'].limits
    prismatic = model.joints['p'].limits
    assert revolute is not None and prismatic is not None
    assert (revolute.velocity, revolute.effort) == (0.0, 0.0)
    assert (prismatic.velocity, prismatic.effort) == (0.5, 0.0)
    chain = KinematicChain.from_model(model, 'a', 'c')
    np.testing.assert_array_equal(chain.velocity, [0.0, 0.5])


def test_revolute_limit_without_lower_and_upper_defaults_to_zero(tmp_path):
    """
    Document the URDF default: a ``<limit>`` without ``lower``/``upper`` means 0 and 0.

    The URDF specification gives both attributes a default of 0, and urdf-parser-py follows it,
    so such a revolute joint is pinned at 0 (not unlimited, and not an error).
    """
    body = _links('a', 'b') + _joint(
        'r', 'revolute', 'a', 'b', '<axis xyz="0 0 1"/><limit velocity="1" effort="2"/>'
    )
    model = load_robot_model(_urdf(tmp_path, body))
    limits = model.joints['r'].limits
    assert limits is not None
    assert (limits.lower, limits.upper, limits.velocity, limits.effort) == (0.0, 0.0, 1.0, 2.0)
    chain = KinematicChain.from_model(model, 'a', 'b')
    assert chain.within_limits([0.0])
    assert not chain.within_limits([0.01])


def test_joint_without_origin_or_axis_gets_the_urdf_defaults(tmp_path):
    """No ``<origin>`` is the identity; no ``<axis>`` is x, as the URDF spec says."""
    body = _links('a', 'b') + _joint(
        'r', 'revolute', 'a', 'b', '<limit lower="-1" upper="1" velocity="1" effort="1"/>'
    )
    joint = load_robot_model(_urdf(tmp_path, body)).joints['r']
    np.testing.assert_array_equal(joint.origin, np.eye(4))
    np.testing.assert_array_equal(joint.axis, [1.0, 0.0, 0.0])
    assert not joint.origin.flags.writeable and not joint.axis.flags.writeable


def test_mimic_joint_is_read(tmp_path):
    """A ``<mimic>`` tag is kept as (joint, multiplier, offset), with the URDF defaults."""
    limit = '<limit lower="-1" upper="1" velocity="1" effort="1"/>'
    body = _links('a', 'b', 'c') + _joint('r', 'revolute', 'a', 'b', limit)
    body += _joint('m', 'revolute', 'a', 'c', limit + '<mimic joint="r"/>')
    model = load_robot_model(_urdf(tmp_path, body))
    assert model.joints['m'].mimic == ('r', 1.0, 0.0)
    assert model.joints['r'].mimic is None


def test_missing_urdf_file_is_a_chain_error(tmp_path):
    """A missing file is reported with its path."""
    path = tmp_path / 'nowhere.urdf'
    with pytest.raises(ChainError, match=re.escape(f'cannot read URDF {path}')):
        load_robot_model(path)


def test_malformed_urdf_is_a_chain_error(tmp_path):
    """Broken XML is reported as unparsable, with the path."""
    path = tmp_path / 'broken.urdf'
    path.write_text('<robot name="broken"><link name="a"></robot>', encoding='utf-8')
    with pytest.raises(ChainError, match=re.escape(f'cannot parse URDF {path}')):
        load_robot_model(path)


@pytest.mark.parametrize('kind', ['floating', 'planar'])
def test_unsupported_joint_type_is_a_chain_error(tmp_path, kind):
    """Floating and planar joints are rejected, naming the joint and the supported types."""
    path = _urdf(tmp_path, _links('a', 'b') + _joint('free', kind, 'a', 'b'))
    with pytest.raises(
        ChainError,
        match=re.escape(f"joint 'free' in {path} has type '{kind}'; supported: revolute, "
                        'continuous, prismatic, fixed'),
    ):
        load_robot_model(path)


@pytest.mark.parametrize(
    'extra, message',
    [
        ('<axis xyz="0 0 0"/><limit lower="-1" upper="1" velocity="1" effort="1"/>',
         'has a zero axis'),
        ('<axis xyz="0 0 1"/><limit lower="1" upper="-1" velocity="1" effort="1"/>',
         'has lower limit > upper limit'),
        ('<axis xyz="0 0 1"/>', 'has no position limits'),
    ],
    ids=['zero axis', 'inverted limits', 'no limit tag'],
)
def test_bad_revolute_joint_is_a_chain_error(tmp_path, extra, message):
    """A zero axis, inverted limits or a missing ``<limit>`` is rejected, naming the joint."""
    path = _urdf(tmp_path, _links('a', 'b') + _joint('bad', 'revolute', 'a', 'b', extra))
    with pytest.raises(ChainError, match=re.escape(f"joint 'bad' in {path} {message}")):
        load_robot_model(path)


def test_urdf_with_two_roots_is_a_chain_error(tmp_path):
    """A URDF must be one tree."""
    path = _urdf(tmp_path, _links('a', 'b', 'island') + _joint('f', 'fixed', 'a', 'b'))
    with pytest.raises(
        ChainError, match=re.escape(f"URDF {path} must have exactly one root link, found ['a', ")
    ):
        load_robot_model(path)


@pytest.fixture(scope='module')
def small_tree(tmp_path_factory) -> RobotModel:
    """Load a tree: base -> torso -> (left, right), plus a fixed camera on the torso."""
    limit = '<axis xyz="0 0 1"/><limit lower="-1" upper="1" velocity="1" effort="1"/>'
    body = _links('base', 'torso', 'left', 'right', 'camera')
    body += _joint('waist', 'revolute', 'base', 'torso', limit)
    body += _joint('left_joint', 'revolute', 'torso', 'left', limit)
    body += _joint('right_joint', 'revolute', 'torso', 'right', limit)
    body += _joint('camera_mount', 'fixed', 'torso', 'camera')
    return load_robot_model(_urdf(tmp_path_factory.mktemp('tree'), body, name='tree'))


def test_joint_path_follows_the_tree_base_to_tip(small_tree):
    """The path lists the joints from the base down to the tip, fixed ones included."""
    assert small_tree.root_link == 'base'
    assert [j.name for j in small_tree.joint_path('base', 'left')] == ['waist', 'left_joint']
    assert [j.name for j in small_tree.joint_path('torso', 'camera')] == ['camera_mount']
    assert small_tree.joint_path('left', 'left') == ()


def test_joint_path_rejects_an_unknown_link(small_tree):
    """An unknown link is named with the robot and its links."""
    for base, tip in (('base', 'hand'), ('hand', 'left')):
        with pytest.raises(
            ChainError,
            match=re.escape("link 'hand' is not in robot 'tree'; links: base, torso, left, "
                            'right, camera'),
        ):
            small_tree.joint_path(base, tip)


def test_joint_path_rejects_a_tip_that_does_not_descend_from_the_base(small_tree):
    """Sibling branches and upward paths are not chains."""
    for base, tip in (('left', 'right'), ('left', 'base')):
        message = f'link {tip!r} does not descend from {base!r}'
        with pytest.raises(ChainError, match=re.escape(message)):
            small_tree.joint_path(base, tip)
    with pytest.raises(ChainError, match='does not descend from'):
        KinematicChain.from_model(small_tree, 'left', 'right')


def test_model_data_is_read_only(small_tree):
    """Joint tables and chain arrays cannot be mutated by callers."""
    with pytest.raises(TypeError):
        small_tree.joints['waist'] = small_tree.joints['left_joint']  # type: ignore[index]
    chain = KinematicChain.from_model(small_tree, 'base', 'left')
    for array in (chain.lower, chain.upper, chain.velocity):
        with pytest.raises(ValueError):
            array[0] = 0.0
