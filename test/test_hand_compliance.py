"""
Hand compliance: wrist forces in the sensor's frame in, base-frame hand offsets out.

Behaviours of :mod:`pic_ros.motion.hand_compliance` on TIAGo's URDF: a push settles the hand at
``f / k`` along the push, a stale or missing force brings it back, a rotated sensor link is
placed by the forward kinematics of the current joints, and an unknown frame changes nothing.
"""

from __future__ import annotations

import numpy as np
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.motion.admittance import AdmittanceConfig, AdmittanceRole
from pic_ros.motion.hand_compliance import (
    ForceInput,
    HAND_COMPLIANCE_PARAMETERS,
    HandCompliance,
    HandComplianceConfig,
    robot_orientation,
    wrench_topic,
)
from pic_ros.robot import load_robot
from pic_ros.robot.kinematics.chain import KinematicChain
import pytest

SENSOR = 'wrist_ft_link'
"""TIAGo's wrist force/torque sensor link (its ``frame_id`` on the real robot)."""

DT = 0.01


@pytest.fixture(scope='module')
def tiago():
    """Return TIAGo."""
    return load_robot('tiago')


def compliance(robot, **settings) -> HandCompliance:
    """Return the hand compliance of every arm of a robot."""
    return HandCompliance(
        robot_orientation(robot), list(robot.arms), HandComplianceConfig(**settings)
    )


def push(hands: HandCompliance, frame: str, force, start: float, seconds: float, joints=None):
    """Observe a constant force every period and step; return (end time, last offsets)."""
    now = start
    offsets: dict = {}
    for _ in range(round(seconds / DT)):
        now += DT
        assert hands.observe('arm', now, frame, force, joints) is ForceInput.ACCEPTED
        offsets = hands.step(now, DT)
    return now, offsets


def idle(hands: HandCompliance, start: float, seconds: float):
    """Step without any new force; return (end time, last offsets)."""
    now = start
    offsets: dict = {}
    for _ in range(round(seconds / DT)):
        now += DT
        offsets = hands.step(now, DT)
    return now, offsets


def test_the_parameters_build_the_config_and_refuse_an_unstable_set() -> None:
    """``admittance`` and ``admittance_*`` parameters build it; the stability bounds still hold."""
    names = [item.name for item in HAND_COMPLIANCE_PARAMETERS]
    assert names[0] == 'admittance' and 'admittance_force_timeout' in names
    config = HandComplianceConfig.from_parameters({'admittance': True})
    assert config.enabled and config.admittance == AdmittanceConfig()
    with pytest.raises(ConfigError, match='stability bound'):
        HandComplianceConfig.from_parameters({'admittance_period': 0.2})
    with pytest.raises(ConfigError, match='admittance_force_timeout'):
        HandComplianceConfig.from_parameters({'admittance_force_timeout': 0.0})


def test_the_wrench_topic_is_the_robot_files_sensor_topic_else_per_arm(tiago) -> None:
    """The robot file's sensor topic (TIAGo: PAL's broadcaster), else ``<arm>/wrist_wrench``."""
    assert wrench_topic(tiago, 'arm') == 'ft_sensor_controller/wrench'
    assert tiago.spec.force_torque_sensors['arm'].link == SENSOR
    baxter = load_robot('baxter')
    assert wrench_topic(baxter, 'left') == 'left/wrist_wrench'


def test_a_constant_push_along_x_settles_at_force_over_stiffness_along_x(tiago) -> None:
    """A base-frame push: the offset points along it and settles at f / k (compliant role)."""
    hands = compliance(tiago)
    force = np.array([8.0, 0.0, 0.0])
    _, offsets = push(hands, tiago.base_frame, force, 0.0, 12.0)
    last = hands.last['arm']
    assert last.role is AdmittanceRole.COMPLIANT
    np.testing.assert_allclose(offsets['arm'], force / last.stiffness, rtol=1e-3, atol=1e-6)
    assert offsets['arm'][0] > 0.5  # the compliant role yields far: k is about 10 N/m


def test_a_stale_force_counts_as_zero_and_the_hand_returns(tiago) -> None:
    """When the sensor stops, after the timeout the force is zero and the offset decays to 0."""
    hands = compliance(tiago, force_timeout=0.3)
    now, offsets = push(hands, tiago.base_frame, [0.0, 6.0, 0.0], 0.0, 3.0)
    assert offsets['arm'][1] > 0.1
    np.testing.assert_array_equal(hands.force('arm', now + 0.2), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(hands.force('arm', now + 0.31), np.zeros(3))
    _, offsets = idle(hands, now, 20.0)
    assert np.linalg.norm(offsets['arm']) < 1e-3


def test_without_any_force_the_offset_stays_zero_and_the_hand_stiff(tiago) -> None:
    """No wrench ever: zero offsets, stiff role."""
    hands = compliance(tiago)
    _, offsets = idle(hands, 0.0, 1.0)
    np.testing.assert_array_equal(offsets['arm'], np.zeros(3))
    assert hands.last['arm'].role is AdmittanceRole.STIFF
    assert hands.status()['admittance_role_arm'] == 'stiff'


def test_a_rotated_sensor_link_is_placed_by_the_forward_kinematics_of_the_joints(tiago) -> None:
    """A force along the sensor's x is rotated into the base frame as the URDF chain places it."""
    arm = tiago.arms['arm']
    rng = np.random.default_rng(3)
    q_arm = arm.lower + rng.random(arm.dof) * (arm.upper - arm.lower)
    joints = dict(zip(arm.joint_names, q_arm.tolist(), strict=True))
    joints['torso_lift_joint'] = 0.2
    chain = KinematicChain.from_model(tiago.model, tiago.base_frame, SENSOR)
    q_chain = [joints[name] for name in chain.joint_names]
    expected = chain.link_transforms(q_chain)[SENSOR][:3, :3]
    orientation = robot_orientation(tiago)
    rotation = orientation.rotation(SENSOR, joints)
    np.testing.assert_allclose(rotation, expected, atol=1e-12)
    assert not np.allclose(rotation, np.eye(3), atol=0.1)  # really rotated
    hands = compliance(tiago)
    assert hands.observe('arm', 0.0, '/' + SENSOR, [5.0, 0.0, 0.0], joints) is ForceInput.ACCEPTED
    np.testing.assert_allclose(hands.force('arm', 0.0), 5.0 * expected[:, 0], atol=1e-12)
    _, offsets = push(hands, SENSOR, [9.0, 0.0, 0.0], 0.0, 3.0, joints)
    direction = offsets['arm'] / np.linalg.norm(offsets['arm'])
    np.testing.assert_allclose(direction, expected[:, 0], atol=1e-9)


def test_missing_joints_take_the_neutral_pose(tiago) -> None:
    """Without joint positions the sensor is placed at the arm's neutral pose."""
    arm = tiago.arms['arm']
    neutral = dict(zip(arm.joint_names, arm.neutral.tolist(), strict=True))
    orientation = robot_orientation(tiago)
    np.testing.assert_allclose(
        orientation.rotation(SENSOR), orientation.rotation(SENSOR, neutral), atol=1e-12
    )


def test_an_unknown_frame_or_arm_or_bad_force_is_refused_and_changes_nothing(tiago) -> None:
    """Refused inputs are counted and leave the latest force as it was."""
    hands = compliance(tiago)
    assert hands.observe('arm', 0.0, tiago.base_frame, [1.0, 2.0, 3.0]) is ForceInput.ACCEPTED
    assert hands.observe('arm', 0.1, 'no_such_link', [50.0, 0, 0]) is ForceInput.UNKNOWN_FRAME
    assert hands.observe('left', 0.1, tiago.base_frame, [50.0, 0, 0]) is ForceInput.UNKNOWN_ARM
    assert hands.observe('arm', 0.1, SENSOR, [np.nan, 0, 0]) is ForceInput.BAD_FORCE
    assert hands.observe('arm', 0.1, SENSOR, [1.0, 0]) is ForceInput.BAD_FORCE
    np.testing.assert_array_equal(hands.force('arm', 0.1), [1.0, 2.0, 3.0])
    assert hands.refused == {
        ForceInput.UNKNOWN_ARM: 1, ForceInput.UNKNOWN_FRAME: 1, ForceInput.BAD_FORCE: 2,
    }
    assert hands.received == {'arm': 1}
    assert not robot_orientation(tiago).knows('no_such_link')
    with pytest.raises(ChainError, match='no_such_link'):
        robot_orientation(tiago).rotation('no_such_link')


def test_a_bad_time_step_changes_nothing(tiago) -> None:
    """A zero or negative dt leaves every offset where it was."""
    hands = compliance(tiago)
    _, offsets = push(hands, tiago.base_frame, [8.0, 0.0, 0.0], 0.0, 1.0)
    for dt in (0.0, -0.01, float('nan')):
        np.testing.assert_array_equal(hands.step(1.0, dt)['arm'], offsets['arm'])


def test_adopt_keeps_the_forces_and_restarts_the_admittance(tiago) -> None:
    """After a parameter change the latest force is kept; the new admittance starts at rest."""
    old = compliance(tiago)
    now, _ = push(old, tiago.base_frame, [8.0, 0.0, 0.0], 0.0, 1.0)
    new = compliance(tiago, admittance=AdmittanceConfig(stiffness_stiff=300.0))
    new.adopt(old)
    np.testing.assert_array_equal(new.force('arm', now), [8.0, 0.0, 0.0])
    assert new.received == old.received
    assert 'arm' not in new.last


def test_no_arm_is_refused(tiago) -> None:
    """A compliance without arms is a configuration error."""
    with pytest.raises(ConfigError, match='at least one arm'):
        HandCompliance(robot_orientation(tiago), [])
