"""
Forward kinematics and Jacobians of every shipped arm against independent implementations.

The references share nothing with :mod:`pic_ros.robot.kinematics` but the URDF file:

* MuJoCo's own URDF import (``test/mujoco_frames.py``: every link kept as a body) gives link
  frames, joint anchors and axes (``mj_kinematics``) and point Jacobians (``mj_jac``);
* ikpy parses the URDF itself and gives the link frames of a chain;
* the simulation's model (:class:`~pic_ros_tools.sim.SimRobot`, MuJoCo with the held joints welded)
  gives the arm joints' anchors and axes where the simulated robot really has them.

Joint values are drawn at random inside the URDF limits with a fixed seed. MuJoCo and ikpy agree
with the project's FK to about 1e-15; the tolerances (1e-9 m, 1e-9 for rotation entries and unit
axes) leave room for rounding only. The recovery's SHAPE rows (unit bone directions times the
bone length, and the elbow angle) are compared with central differences of the same residual
computed from MuJoCo's landmarks (step 1e-6 rad, truncation about 1e-12, rounding about 1e-10).
"""

from __future__ import annotations

import math
import warnings

from mujoco_frames import mujoco, MujocoReference
import numpy as np
from pic_ros.correspondence import TargetKind
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.solvers import RecoveryConfig
from pic_ros.solvers.recovery import JointRecovery, RecoveryGoal
from pic_ros_tools.sim import SimRobot
import pytest

ROBOTS = shipped_robots()
"""Every robot with a ``config/<robot>.yaml`` and its URDF in ``urdf/``."""
ARMS = [
    (robot, arm) for robot in ROBOTS for arm in load_robot(robot).spec.arms
]
ARM_IDS = [f'{robot}-{arm}' for robot, arm in ARMS]
CONFIGURATIONS = 100
"""Random configurations per arm for the frame comparisons."""

JACOBIAN_CONFIGURATIONS = 20
"""Random configurations per arm for the Jacobian comparisons."""

POSITION_TOLERANCE = 1e-9  # [m]
ROTATION_TOLERANCE = 1e-9  # rotation matrix entries and unit-axis components
JACOBIAN_TOLERANCE = 1e-9  # [m/rad], analytic against analytic (mj_jac)
DIFFERENCE_STEP = 1e-6  # [rad]
DIFFERENCE_TOLERANCE = 1e-7  # [m/rad], analytic against central differences


def test_every_urdf_of_the_project_is_a_shipped_robot(project_root):
    """Each ``urdf/*.urdf`` has its robot file, so the comparisons below cover every URDF."""
    urdf_dir = project_root / 'pic_ros' / 'urdf'
    assert {path.stem for path in urdf_dir.glob('*.urdf')} == set(ROBOTS)
    assert len(ROBOTS) >= 3


@pytest.fixture(scope='module')
def robots():
    """Load each shipped robot once."""
    return {name: load_robot(name) for name in ROBOTS}


@pytest.fixture(scope='module')
def references(robots):
    """Build MuJoCo's model of each robot's URDF once."""
    return {name: MujocoReference(robot) for name, robot in robots.items()}


def inside_limits(arm, rng: np.random.Generator) -> np.ndarray:
    """Draw arm joint values inside the URDF limits (+-pi where a limit is infinite)."""
    lower = np.where(np.isfinite(arm.lower), arm.lower, -math.pi)
    upper = np.where(np.isfinite(arm.upper), arm.upper, math.pi)
    return rng.uniform(lower, upper)


def bent(arm, rng: np.random.Generator, margin: float = 0.3) -> np.ndarray:
    """Draw arm joint values well inside the working range (the elbow clearly bent)."""
    low = np.maximum(arm.work_lower, -math.pi) + margin
    high = np.minimum(arm.work_upper, math.pi) - margin
    return rng.uniform(low, np.maximum(high, low))


# --- forward kinematics ------------------------------------------------------------------------


@pytest.mark.parametrize(('robot_name', 'arm_name'), ARMS, ids=ARM_IDS)
def test_every_link_frame_and_joint_axis_of_the_arm_matches_mujoco(
    robots, references, rng, robot_name, arm_name
):
    """
    Link poses, joint origins and axes, and landmarks equal MuJoCo's (1e-9).

    Every other joint of the robot is set at random too: it must not move the arm.
    """
    arm = robots[robot_name].arms[arm_name]
    chain = arm.chain
    reference = references[robot_name]
    links = [chain.base_link, *(joint.child for joint in chain.joints)]
    for _ in range(CONFIGURATIONS):
        q = inside_limits(arm, rng)
        full = arm.full_q(q)
        reference.set_arm(arm, q, rng)
        message = f'{robot_name} {arm_name} q={q.tolist()}'
        transforms = chain.link_transforms(full)
        assert set(transforms) == set(links)
        for link in links:
            expected = reference.link_frame(link)
            np.testing.assert_allclose(transforms[link][:3, 3], expected[:3, 3], rtol=0.0,
                                       atol=POSITION_TOLERANCE, err_msg=f'{link}: {message}')
            np.testing.assert_allclose(transforms[link][:3, :3], expected[:3, :3], rtol=0.0,
                                       atol=ROTATION_TOLERANCE, err_msg=f'{link}: {message}')
        positions, axes = chain.positions_and_axes(full)
        for index, name in enumerate(chain.joint_names):
            np.testing.assert_allclose(positions[index], reference.joint_origin(name), rtol=0.0,
                                       atol=POSITION_TOLERANCE, err_msg=f'{name}: {message}')
            np.testing.assert_allclose(axes[index], reference.joint_axis(name), rtol=0.0,
                                       atol=ROTATION_TOLERANCE, err_msg=f'{name}: {message}')
        np.testing.assert_allclose(positions[-1], reference.link_frame(chain.tip_link)[:3, 3],
                                   rtol=0.0, atol=POSITION_TOLERANCE, err_msg=message)
        names = (arm.chain.joint_names[arm.root_index], arm.spec.shoulder, arm.spec.elbow,
                 arm.spec.wrist)
        expected_landmarks = np.array(
            [reference.joint_origin(name) for name in names]
            + [reference.link_frame(chain.tip_link)[:3, 3]]
        )
        np.testing.assert_allclose(arm.landmarks(q), expected_landmarks, rtol=0.0,
                                   atol=POSITION_TOLERANCE, err_msg=message)
        hot_path, _ = arm.landmark_tuples(q)
        np.testing.assert_allclose(np.array(hot_path), expected_landmarks, rtol=0.0,
                                   atol=POSITION_TOLERANCE, err_msg=message)


def ikpy_chain(robot, arm):
    """
    Build ikpy's chain of an arm from the URDF: base link -> tool link, every joint of the path.

    ikpy walks on past the last element given when the tool link has one child (Baxter's hand
    camera, YuMi's gripper), so its links are cut at the arm's last joint.
    """
    chain_module = pytest.importorskip('ikpy.chain')
    elements = [arm.chain.base_link]
    for joint in arm.chain.joints:
        elements += [joint.name, joint.child]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        full = chain_module.Chain.from_urdf_file(
            str(robot.urdf_file), base_elements=elements, symbolic=False, jax_precompile=False
        )
        links = full.links[: len(arm.chain.joints) + 1]
        mask = [link.joint_type != 'fixed' for link in links]
        return chain_module.Chain(links, active_links_mask=mask)


@pytest.mark.parametrize(('robot_name', 'arm_name'), ARMS, ids=ARM_IDS)
def test_every_link_frame_of_the_arm_matches_ikpy(robots, rng, robot_name, arm_name):
    """The pose of every link on the arm's chain equals ikpy's forward kinematics (1e-9)."""
    robot = robots[robot_name]
    arm = robot.arms[arm_name]
    chain = arm.chain
    reference = ikpy_chain(robot, arm)
    assert [link.name for link in reference.links[1:]] == [joint.name for joint in chain.joints]
    movable = [index for index, link in enumerate(reference.links) if link.joint_type != 'fixed']
    assert [reference.links[index].name for index in movable] == list(chain.joint_names)
    for _ in range(CONFIGURATIONS):
        q = inside_limits(arm, rng)
        full = arm.full_q(q)
        values = np.zeros(len(reference.links))
        values[movable] = full
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            frames = reference.forward_kinematics(values, full_kinematics=True)
        transforms = chain.link_transforms(full)
        message = f'{robot_name} {arm_name} q={q.tolist()}'
        np.testing.assert_allclose(frames[0], np.eye(4), rtol=0.0, atol=POSITION_TOLERANCE)
        for joint, frame in zip(chain.joints, frames[1:], strict=True):
            got = transforms[joint.child]
            np.testing.assert_allclose(got[:3, 3], frame[:3, 3], rtol=0.0,
                                       atol=POSITION_TOLERANCE, err_msg=f'{joint.child} {message}')
            np.testing.assert_allclose(got[:3, :3], frame[:3, :3], rtol=0.0,
                                       atol=ROTATION_TOLERANCE,
                                       err_msg=f'{joint.child} {message}')
        np.testing.assert_allclose(arm.landmarks(q)[-1], frames[-1][:3, 3], rtol=0.0,
                                   atol=POSITION_TOLERANCE, err_msg=message)


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_the_simulated_robot_has_its_arm_joints_where_the_arm_model_has_them(
    robots, references, rng, robot_name
):
    """
    In the simulation's own model every arm joint's anchor and axis equal the arm model's (1e-9).

    The simulation fuses the static links and welds the held joints, so only the arm joints are
    compared (TIAGo's torso set to its neutral 0.15 m); MuJoCo's unfused model gives the base
    frame.
    """
    robot = robots[robot_name]
    reference = references[robot_name]
    reference.set_joints({})  # the base frame is static: any configuration gives its pose
    sim = SimRobot(robot)
    model = sim.model
    data = mujoco.MjData(model)
    try:
        for _ in range(CONFIGURATIONS // 4):
            values = {arm.name: inside_limits(arm, rng) for arm in robot.arms.values()}
            if robot.torso is not None:  # servoed, not welded: put it where the arms assume
                data.qpos[model.joint(robot.torso.joint).qposadr[0]] = robot.torso.neutral
            for arm in robot.arms.values():
                for name, value in zip(arm.joint_names, values[arm.name], strict=True):
                    data.qpos[model.joint(name).qposadr[0]] = value
            mujoco.mj_kinematics(model, data)
            for arm in robot.arms.values():
                positions, axes = arm.chain.positions_and_axes(arm.full_q(values[arm.name]))
                for index, name in enumerate(arm.chain.joint_names):
                    if name not in arm.joint_names:
                        continue
                    joint = model.joint(name).id
                    message = f'{robot_name} {name} q={values[arm.name].tolist()}'
                    np.testing.assert_allclose(
                        reference.to_base(data.xanchor[joint]), positions[index], rtol=0.0,
                        atol=POSITION_TOLERANCE, err_msg=message,
                    )
                    np.testing.assert_allclose(
                        reference.direction_to_base(data.xaxis[joint]), axes[index], rtol=0.0,
                        atol=ROTATION_TOLERANCE, err_msg=message,
                    )
    finally:
        sim.close()


# --- Jacobians ---------------------------------------------------------------------------------


def mujoco_landmarks(reference: MujocoReference, arm, q) -> np.ndarray:
    """Return MuJoCo's shoulder, elbow and wrist landmarks (joint origins) at ``q``, (3, 3)."""
    reference.set_arm(arm, q)
    names = (arm.spec.shoulder, arm.spec.elbow, arm.spec.wrist)
    return np.array([reference.joint_origin(name) for name in names])


def documented_residual(
    points: np.ndarray, goal: RecoveryGoal, lengths: tuple[float, float], config: RecoveryConfig
) -> np.ndarray:
    """
    Compute the recovery's task residual as its module documents it, from landmark points.

    SHAPE: the upper-arm and forearm unit directions minus the goal's, each times the bone's
    length, then the elbow angle minus the goal's times ``angle_weight * mean bone length``.
    POSITION: the elbow minus its goal, then the wrist minus its goal times ``wrist_weight``.
    """
    shoulder, elbow, wrist = points
    if goal.kind is TargetKind.POSITION:
        return np.concatenate([
            elbow - np.array(goal.elbow), config.wrist_weight * (wrist - np.array(goal.wrist))
        ])
    upper = (elbow - shoulder) / np.linalg.norm(elbow - shoulder)
    fore = (wrist - elbow) / np.linalg.norm(wrist - elbow)
    upper_length, fore_length = lengths
    angle = math.acos(float(np.clip(-upper @ fore, -1.0, 1.0)))
    return np.concatenate([
        upper_length * (upper - np.array(goal.upper)),
        fore_length * (fore - np.array(goal.fore)),
        [config.angle_weight * 0.5 * (upper_length + fore_length) * (angle - goal.angle)],
    ])


def bone_lengths(reference: MujocoReference, arm) -> tuple[float, float]:
    """Return MuJoCo's upper-arm and forearm landmark distances at the neutral pose [m]."""
    shoulder, elbow, wrist = mujoco_landmarks(reference, arm, arm.neutral)
    return float(np.linalg.norm(elbow - shoulder)), float(np.linalg.norm(wrist - elbow))


def recovery_jacobian(recovery: JointRecovery, q: np.ndarray, goal: RecoveryGoal) -> np.ndarray:
    """
    Return the recovery's analytic Jacobian of the residual, shape (rows, moving joints).

    ``JointRecovery`` exposes no public Jacobian: this goes through its private ``_evaluate``
    and ``_columns``, the smallest surface that holds it.
    """
    state = recovery._evaluate(recovery.arm.full_q(q), goal)
    return np.array(recovery._columns(state, goal)[0]).T


@pytest.mark.parametrize(('robot_name', 'arm_name'), ARMS, ids=ARM_IDS)
def test_recovery_residual_is_the_documented_residual_of_mujocos_landmarks(
    robots, references, rng, robot_name, arm_name
):
    """``JointRecovery.residual`` is the norm of the documented residual of MuJoCo's FK (1e-9)."""
    arm = robots[robot_name].arms[arm_name]
    reference = references[robot_name]
    lengths = bone_lengths(reference, arm)
    config = RecoveryConfig(angle_weight=2.0, wrist_weight=1.5)
    recovery = JointRecovery(arm, config)
    for kind in TargetKind:
        for _ in range(JACOBIAN_CONFIGURATIONS):
            goal_points = mujoco_landmarks(reference, arm, bent(arm, rng))
            goal = RecoveryGoal.from_points(kind, *goal_points)
            q = bent(arm, rng)
            expected = documented_residual(mujoco_landmarks(reference, arm, q), goal, lengths,
                                           config)
            assert recovery.residual(q, goal) == pytest.approx(
                float(np.linalg.norm(expected)), abs=1e-9
            ), f'{robot_name} {arm_name} {kind}'


@pytest.mark.parametrize(('robot_name', 'arm_name'), ARMS, ids=ARM_IDS)
def test_recovery_position_rows_are_mujocos_landmark_jacobians(
    robots, references, rng, robot_name, arm_name
):
    """POSITION rows: the elbow's ``mj_jac`` and the wrist's times ``wrist_weight`` (1e-9)."""
    arm = robots[robot_name].arms[arm_name]
    reference = references[robot_name]
    config = RecoveryConfig(wrist_weight=2.5)
    recovery = JointRecovery(arm, config)
    moving = [arm.joint_names[position] for position in recovery.moving_positions]
    elbow_link = arm.chain.movable_joints[arm.elbow_index].parent
    wrist_link = arm.chain.movable_joints[arm.wrist_index].parent
    for _ in range(JACOBIAN_CONFIGURATIONS):
        q = inside_limits(arm, rng)
        goal = RecoveryGoal.from_points(
            TargetKind.POSITION, *mujoco_landmarks(reference, arm, inside_limits(arm, rng))
        )
        _, elbow, wrist = mujoco_landmarks(reference, arm, q)
        expected = np.vstack([
            reference.point_jacobian(elbow, elbow_link, moving),
            config.wrist_weight * reference.point_jacobian(wrist, wrist_link, moving),
        ])
        np.testing.assert_allclose(recovery_jacobian(recovery, q, goal), expected, rtol=0.0,
                                   atol=JACOBIAN_TOLERANCE,
                                   err_msg=f'{robot_name} {arm_name} q={q.tolist()}')


@pytest.mark.parametrize(('robot_name', 'arm_name'), ARMS, ids=ARM_IDS)
def test_recovery_shape_rows_match_differences_of_mujocos_landmarks(
    robots, references, rng, robot_name, arm_name
):
    """
    SHAPE rows (bone directions x length, elbow angle) equal central differences (1e-7).

    The differences are of the documented residual of MuJoCo's landmarks. The elbow is kept
    bent (sine of the elbow angle > 0.1), where the angle row's gradient is not capped.
    """
    arm = robots[robot_name].arms[arm_name]
    reference = references[robot_name]
    lengths = bone_lengths(reference, arm)
    config = RecoveryConfig()
    recovery = JointRecovery(arm, config)
    moving = recovery.moving_positions
    for _ in range(JACOBIAN_CONFIGURATIONS):
        q = bent(arm, rng)
        shoulder, elbow, wrist = mujoco_landmarks(reference, arm, q)
        upper, fore = elbow - shoulder, wrist - elbow
        sine = np.linalg.norm(np.cross(upper, fore)) / np.linalg.norm(upper) / np.linalg.norm(fore)
        assert sine > 0.1, f'{robot_name} {arm_name}: q={q.tolist()} is nearly straight'
        goal = RecoveryGoal.from_points(
            TargetKind.SHAPE, *mujoco_landmarks(reference, arm, bent(arm, rng))
        )
        numeric = np.zeros((7, len(moving)))
        for column, position in enumerate(moving):
            step = np.zeros(arm.dof)
            step[position] = DIFFERENCE_STEP
            ahead = documented_residual(
                mujoco_landmarks(reference, arm, q + step), goal, lengths, config
            )
            behind = documented_residual(
                mujoco_landmarks(reference, arm, q - step), goal, lengths, config
            )
            numeric[:, column] = (ahead - behind) / (2.0 * DIFFERENCE_STEP)
        np.testing.assert_allclose(recovery_jacobian(recovery, q, goal), numeric, rtol=0.0,
                                   atol=DIFFERENCE_TOLERANCE,
                                   err_msg=f'{robot_name} {arm_name} q={q.tolist()}')
