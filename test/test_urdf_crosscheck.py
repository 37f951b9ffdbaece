"""
Cross-check of the project's URDFs (``urdf/``) against the reference URDFs in ``../shared/data``.

Our URDFs keep every joint of the upstream models but use primitive geometry and inertia of
their own. The reference tests need ``../shared/data`` and are skipped without it; the validity
tests (parsing, inertias, MuJoCo) only read our files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from pic_ros.resources import shipped_robots
from pic_ros.robot.kinematics import Joint, KinematicChain, load_robot_model, RobotModel
import pytest
from urdf_parser_py import urdf as urdf_model
from urdf_parser_py.xml_reflection import core as xml_core
import yaml

URDF_DIR = Path(__file__).resolve().parents[1] / 'pic_ros' / 'urdf'
ROBOTS = shipped_robots()
"""Every robot of ``config/`` (a robot file with its URDF): the validity tests."""
REFERENCE_ROBOTS = ('baxter', 'yumi', 'tiago')
"""The robots with a reference URDF in ``../shared/data/robots`` (NAO has none: its URDF is
checked against the published figures instead)."""
CONFIGURATIONS = 50
POSITION_TOLERANCE = 1e-6  # [m]
ROTATION_TOLERANCE = 1e-6  # rotation matrix entries
MUJOCO_TOLERANCE = 1e-9  # [m] and axis components


def _ours(robot: str) -> Path:
    """Return the path of our URDF of ``robot``."""
    return URDF_DIR / f'{robot}.urdf'


def _reference(shared_data: Path, robot: str) -> Path:
    """Return the path of the reference URDF of ``robot``, skipping when it is missing."""
    path = shared_data / 'robots' / robot / f'{robot}.urdf'
    if not path.is_file():
        pytest.skip(f'reference URDF {path} not found')
    return path


def _arms(shared_data: Path, robot: str) -> dict[str, dict]:
    """Return the ``arms`` section of the reference ``chains.yaml`` of ``robot``."""
    path = shared_data / 'robots' / robot / 'chains.yaml'
    if not path.is_file():
        pytest.skip(f'reference chains {path} not found')
    with path.open(encoding='utf-8') as stream:
        return yaml.safe_load(stream)['arms']


def _random_configuration(chain: KinematicChain, rng: np.random.Generator) -> np.ndarray:
    """Draw joint values uniformly within the chain's limits (+-pi where a limit is infinite)."""
    lower = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
    upper = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
    return rng.uniform(lower, upper)


def _parse_quietly(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[object, list[str]]:
    """Parse a URDF with urdf-parser-py and return the robot and every warning it raised."""
    messages: list[str] = []
    monkeypatch.setattr(xml_core, 'on_error', messages.append)
    robot = urdf_model.URDF.from_xml_string(path.read_text(encoding='utf-8'))
    return robot, messages


def _inertia_matrix(inertia: urdf_model.Inertia) -> np.ndarray:
    """Return the symmetric 3x3 matrix of a URDF ``<inertia>``."""
    return np.array(
        [
            [inertia.ixx, inertia.ixy, inertia.ixz],
            [inertia.ixy, inertia.iyy, inertia.iyz],
            [inertia.ixz, inertia.iyz, inertia.izz],
        ]
    )


def _movable(model: RobotModel) -> list[Joint]:
    """Return the movable joints of a model, in URDF order."""
    return [joint for joint in model.joints.values() if joint.joint_type.is_movable]


@pytest.mark.parametrize('robot', REFERENCE_ROBOTS)
def test_every_reference_joint_and_link_is_kept_unchanged(shared_data: Path, robot: str) -> None:
    """Every reference joint exists in ours with the same kinematic data, and every link exists."""
    reference = load_robot_model(_reference(shared_data, robot))
    ours = load_robot_model(_ours(robot))
    assert set(ours.joints) == set(reference.joints)
    assert set(ours.links) == set(reference.links)
    assert ours.root_link == reference.root_link
    for name, expected in reference.joints.items():
        joint = ours.joints[name]
        assert joint.joint_type is expected.joint_type, name
        assert (joint.parent, joint.child) == (expected.parent, expected.child), name
        np.testing.assert_allclose(joint.origin, expected.origin, rtol=0.0, atol=1e-12,
                                   err_msg=name)
        np.testing.assert_allclose(joint.axis, expected.axis, rtol=0.0, atol=1e-12, err_msg=name)
        assert joint.limits == expected.limits, name
        assert joint.mimic == expected.mimic, name


@pytest.mark.parametrize('robot', REFERENCE_ROBOTS)
def test_arm_forward_kinematics_matches_reference(
    shared_data: Path, rng: np.random.Generator, robot: str
) -> None:
    """Every joint frame and the tool link of each arm chain match the reference FK."""
    reference = load_robot_model(_reference(shared_data, robot))
    ours = load_robot_model(_ours(robot))
    for arm, spec in _arms(shared_data, robot).items():
        expected_chain = KinematicChain.from_model(reference, spec['base_link'], spec['tip_link'])
        chain = KinematicChain.from_model(ours, spec['base_link'], spec['tip_link'])
        assert chain.joint_names == expected_chain.joint_names == tuple(spec['actuated_joints'])
        for _ in range(CONFIGURATIONS):
            q = _random_configuration(expected_chain, rng)
            frames = chain.joint_origin_transforms(q)
            expected_frames = expected_chain.joint_origin_transforms(q)
            frames['tool'] = chain.link_transforms(q)[chain.tip_link]
            expected_frames['tool'] = expected_chain.link_transforms(q)[chain.tip_link]
            assert frames.keys() == expected_frames.keys()
            for name, expected in expected_frames.items():
                message = f'{robot} {arm} {name} at q={q.tolist()}'
                np.testing.assert_allclose(frames[name][:3, 3], expected[:3, 3], rtol=0.0,
                                           atol=POSITION_TOLERANCE, err_msg=message)
                np.testing.assert_allclose(frames[name][:3, :3], expected[:3, :3], rtol=0.0,
                                           atol=ROTATION_TOLERANCE, err_msg=message)
            np.testing.assert_allclose(chain.joint_positions(q),
                                       expected_chain.joint_positions(q), rtol=0.0,
                                       atol=POSITION_TOLERANCE)


@pytest.mark.parametrize('robot', REFERENCE_ROBOTS)
def test_arm_joint_limits_match_reference(shared_data: Path, robot: str) -> None:
    """The lower, upper and velocity limits of every arm chain joint are identical."""
    reference = load_robot_model(_reference(shared_data, robot))
    ours = load_robot_model(_ours(robot))
    for spec in _arms(shared_data, robot).values():
        expected = KinematicChain.from_model(reference, spec['base_link'], spec['tip_link'])
        chain = KinematicChain.from_model(ours, spec['base_link'], spec['tip_link'])
        assert chain.dof == expected.dof
        np.testing.assert_array_equal(chain.lower, expected.lower)
        np.testing.assert_array_equal(chain.upper, expected.upper)
        np.testing.assert_array_equal(chain.velocity, expected.velocity)


@pytest.mark.parametrize('robot', ROBOTS)
def test_urdf_parses_cleanly_with_valid_inertias(
    monkeypatch: pytest.MonkeyPatch, robot: str
) -> None:
    """Our URDF parses without warnings, has one root, primitives only and valid inertias."""
    parsed, messages = _parse_quietly(_ours(robot), monkeypatch)
    assert messages == []
    children = {joint.child for joint in parsed.joints}
    roots = [link.name for link in parsed.links if link.name not in children]
    assert len(roots) == 1
    assert load_robot_model(_ours(robot)).root_link == roots[0]
    colours = {material.name for material in parsed.materials if material.color is not None}
    with_inertial = 0
    for link in parsed.links:
        for element in [*link.visuals, *link.collisions]:
            assert isinstance(element.geometry, (urdf_model.Box, urdf_model.Cylinder,
                                                 urdf_model.Sphere)), link.name
        for visual in link.visuals:
            assert visual.material is not None and visual.material.name in colours, link.name
        if link.inertial is None:
            assert not link.visuals and not link.collisions, f'{link.name} has no inertial'
            continue
        with_inertial += 1
        assert link.inertial.mass > 0.0, link.name
        moments = np.linalg.eigvalsh(_inertia_matrix(link.inertial.inertia))
        assert moments[0] > 0.0, f'{link.name} inertia is not positive definite: {moments}'
        assert moments[0] + moments[1] >= moments[2], f'{link.name} violates A + B >= C'
    assert with_inertial > 0


@pytest.mark.parametrize('robot', ROBOTS)
def test_mujoco_loads_urdf_with_matching_joint_frames(robot: str) -> None:
    """Our URDF loads in MuJoCo and its zero-configuration joint frames match our FK."""
    mujoco = pytest.importorskip('mujoco')
    model = load_robot_model(_ours(robot))
    movable = _movable(model)
    mimics = [joint for joint in movable if joint.mimic is not None]
    mj_model = mujoco.MjModel.from_xml_path(str(_ours(robot)))
    # MuJoCo fuses every link without a joint into its moving ancestor (or the world) and turns
    # URDF mimic joints into equality constraints.
    assert mj_model.njnt == len(movable)
    assert mj_model.nbody == len(movable) + 1
    assert mj_model.neq == len(mimics)
    spec = mujoco.MjSpec.from_file(str(_ours(robot)))
    spec.compiler.fusestatic = False
    unfused = spec.compile()
    # A root link called 'world' is MuJoCo's world body; any other root is a body of its own.
    assert unfused.nbody == len(model.links) + (0 if model.root_link == 'world' else 1)
    data = mujoco.MjData(mj_model)
    data.qpos[:] = 0.0
    mujoco.mj_kinematics(mj_model, data)
    for joint in movable:
        chain = KinematicChain.from_model(model, model.root_link, joint.child)
        frame = chain.joint_origin_transforms(np.zeros(chain.dof))[joint.name]
        index = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_JOINT, joint.name)
        assert index >= 0, joint.name
        np.testing.assert_allclose(data.xanchor[index], frame[:3, 3], rtol=0.0,
                                   atol=MUJOCO_TOLERANCE, err_msg=joint.name)
        np.testing.assert_allclose(data.xaxis[index], frame[:3, :3] @ joint.axis, rtol=0.0,
                                   atol=MUJOCO_TOLERANCE, err_msg=joint.name)


NAO_LENGTHS = {
    'shoulder_offset_y': 0.098, 'shoulder_offset_z': 0.100, 'upper_arm': 0.105,
    'elbow_offset_y': 0.015, 'lower_arm': 0.05595, 'hand_offset_x': 0.05775,
    'hand_offset_z': 0.01231, 'neck_offset_z': 0.1265,
}
"""NAO H25 V5 link lengths [m] as Aldebaran's documentation publishes them."""

NAO_LIMITS = {
    'HeadYaw': (-119.5, 119.5), 'HeadPitch': (-38.5, 29.5),
    'LShoulderPitch': (-119.5, 119.5), 'LShoulderRoll': (-18.0, 76.0),
    'LElbowYaw': (-119.5, 119.5), 'LElbowRoll': (-88.5, -2.0), 'LWristYaw': (-104.5, 104.5),
    'RShoulderPitch': (-119.5, 119.5), 'RShoulderRoll': (-76.0, 18.0),
    'RElbowYaw': (-119.5, 119.5), 'RElbowRoll': (2.0, 88.5), 'RWristYaw': (-104.5, 104.5),
}
"""NAO H25 V5 joint ranges [deg] as Aldebaran's documentation publishes them."""


def test_nao_urdf_has_the_published_nao_v5_figures() -> None:
    """Our NAO: the documented link lengths (zero-pose joint origins) and joint ranges."""
    model = load_robot_model(_ours('nao'))
    lengths = NAO_LENGTHS
    for side, sign in (('L', 1.0), ('R', -1.0)):
        tool = 'l_tool' if side == 'L' else 'r_tool'
        chain = KinematicChain.from_model(model, 'torso', tool)
        points = chain.joint_positions(np.zeros(chain.dof))
        shoulder = (0.0, sign * lengths['shoulder_offset_y'], lengths['shoulder_offset_z'])
        elbow = np.add(shoulder, (lengths['upper_arm'], sign * lengths['elbow_offset_y'], 0.0))
        wrist = elbow + (lengths['lower_arm'], 0.0, 0.0)
        hand = wrist + (lengths['hand_offset_x'], 0.0, -lengths['hand_offset_z'])
        expected = [shoulder, shoulder, elbow, elbow, wrist, hand]
        np.testing.assert_allclose(points, expected, rtol=0.0, atol=1e-12, err_msg=side)
    head = KinematicChain.from_model(model, 'torso', 'Head')
    np.testing.assert_allclose(head.joint_positions(np.zeros(2))[0],
                               (0.0, 0.0, lengths['neck_offset_z']), rtol=0.0, atol=1e-12)
    for name, (low, high) in NAO_LIMITS.items():
        limits = model.joints[name].limits
        assert limits is not None, name
        assert np.degrees([limits.lower, limits.upper]) == pytest.approx((low, high), abs=0.01)
