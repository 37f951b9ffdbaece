"""
The simulated mobile base and wrist sensor: robot file sections, base drive, pushes, following.

TIAGo's robot file declares a differential base (PAL's limits: 1 m/s forward, 0.2 m/s backward,
0.5 m/s^2, 1.05 rad/s and rad/s^2, 0.25 s command timeout) and a wrist force/torque sensor. The
base test walks a synthetic person (as ``test_base_following.py`` does), feeds the paper's
follower and drives the MuJoCo base with its commands: the simulated base, not the follower's
own integral, must end each move within 10 cm and 5 deg, never above the base's limits.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.human.body_frame import Footprint
from pic_ros.motion.base_following import BaseFollower, BaseFollowingConfig, Pose2D
from pic_ros.resources import config_path
from pic_ros.robot.config import robot_spec_from_dict
from pic_ros.robot.mobile_base import MobileBaseSpec
from pic_ros_tools.sim import SimRobot, Trajectory, Waypoint
from pic_ros_tools.sim.base_drive import BaseDrive
from pic_ros_tools.sim.mujoco_model import target_margin
import pytest
import yaml

pytest.importorskip('mujoco', reason='the simulation needs mujoco')

TIAGO_FILE = config_path('tiago')
BASE = MobileBaseSpec(
    max_linear_velocity=1.0, min_linear_velocity=-0.2, max_angular_velocity=1.05,
    max_linear_acceleration=0.5, max_angular_acceleration=1.05, command_timeout=0.25,
)
SLACK = 1e-9
DT = 1.0 / 30.0
"""The tracker's frame period, the follower's step [s]."""


def tiago_data() -> dict:
    """Return TIAGo's robot file, parsed."""
    return yaml.safe_load(Path(TIAGO_FILE).read_text(encoding='utf-8'))


# --- the robot file -------------------------------------------------------------------------


def test_tiago_declares_its_base_and_wrist_sensor_with_relative_topics() -> None:
    """The sections read back as PAL's configuration; topics are relative names."""
    spec = robot_spec_from_dict(tiago_data(), 'tiago.yaml')
    assert spec.mobile_base == MobileBaseSpec(
        command_topic='mobile_base_controller/cmd_vel_unstamped',
        odometry_topic='mobile_base_controller/odom', odom_frame='odom',
        max_linear_velocity=1.0, min_linear_velocity=-0.2, max_angular_velocity=1.05,
        max_linear_acceleration=0.5, max_angular_acceleration=1.05, command_timeout=0.25,
    )
    sensor = spec.force_torque_sensors['arm']
    assert (sensor.link, sensor.topic) == ('wrist_ft_link', 'ft_sensor_controller/wrench')


@pytest.mark.parametrize('section, value, message', [
    ('mobile_base', {'kind': 'omni'}, 'kind'),
    ('mobile_base', {'command_topic': '/cmd_vel'}, 'relative'),
    ('mobile_base', {'min_linear_velocity': 0.1}, 'min_linear_velocity'),
    ('mobile_base', {'max_angular_acceleration': 0.0}, 'max_angular_acceleration'),
    ('mobile_base', {'wheel_radius': 0.1}, 'unknown keys'),
    ('force_torque_sensors', {'left': {'link': 'wrist_ft_link'}}, 'not an arm'),
    ('force_torque_sensors', {'arm': {'link': ''}}, 'link'),
])
def test_a_bad_section_is_refused_naming_the_key(section: str, value: dict, message: str) -> None:
    """Each bad value is refused with the file and the key in the message."""
    data = tiago_data()
    if section == 'mobile_base':
        data[section].update(value)
    else:
        data[section] = value
    with pytest.raises(ConfigError, match=message):
        robot_spec_from_dict(copy.deepcopy(data), 'tiago.yaml')


def test_a_robot_without_the_sections_has_none() -> None:
    """Baxter's file has no base and no sensor."""
    from pic_ros.robot.config import load_robot_spec

    spec = load_robot_spec(config_path('baxter'))
    assert spec.mobile_base is None and dict(spec.force_torque_sensors) == {}


# --- the base drive (no physics) ------------------------------------------------------------


def drive(commands: list[tuple[float, float, float]], until: float, dt: float = 0.002):
    """Run a BaseDrive on timed commands; return it and the velocities of every step."""
    base = BaseDrive(BASE)
    velocities = []
    pending = sorted(commands)
    now = 0.0
    while now < until:
        while pending and pending[0][0] <= now + 1e-12:
            _, linear, angular = pending.pop(0)
            base.command(now, linear, angular)
        now = round(now + dt, 9)
        base.advance_to(now)
        velocities.append(base.velocity)
    return base, np.array(velocities)


def check_base_limits(velocities: np.ndarray, dt: float) -> None:
    """Assert the base's velocity and acceleration limits over a velocity record."""
    linear, angular = velocities[:, 0], velocities[:, 1]
    assert np.all(linear <= BASE.max_linear_velocity + SLACK)
    assert np.all(linear >= BASE.min_linear_velocity - SLACK)
    assert np.all(np.abs(angular) <= BASE.max_angular_velocity + SLACK)
    assert np.all(np.abs(np.diff(linear)) <= BASE.max_linear_acceleration * dt + SLACK)
    assert np.all(np.abs(np.diff(angular)) <= BASE.max_angular_acceleration * dt + SLACK)


def test_the_drive_keeps_the_limits_and_the_turning_radius() -> None:
    """Too fast forward and backward: scaled by one factor (radius kept), ramped, no sideways."""
    commands = [(0.1 * k, 3.0, 0.5) for k in range(40)]
    base, velocities = drive(commands, 4.0)
    check_base_limits(velocities, 0.002)
    assert base.target == pytest.approx((1.0, 0.5 / 3.0))
    base.command(4.0, -1.0, 0.5)
    assert base.target == pytest.approx((-0.2, 0.1))
    straight, velocities = drive([(0.1 * k, 0.5, 0.0) for k in range(20)], 2.0)
    assert straight.pose.y == pytest.approx(0.0, abs=1e-12)
    assert straight.pose.x > 0.5


def test_without_commands_the_base_stops_within_its_deceleration() -> None:
    """The last command at 1 s: the timeout (0.25 s) then |v| / a to stop, and it stays."""
    base, velocities = drive([(0.1 * k, 0.4, 0.6) for k in range(11)], 5.0)
    check_base_limits(velocities, 0.002)
    times = np.arange(1, len(velocities) + 1) * 0.002
    stop = 1.0 + BASE.command_timeout + max(0.4 / 0.5, 0.6 / 1.05) + 0.01
    assert np.all(velocities[times > stop] == 0.0)
    assert base.timeouts == 1
    with pytest.raises(ConfigError, match='finite'):
        base.command(5.0, math.nan, 0.0)


# --- the MuJoCo robot -----------------------------------------------------------------------


@pytest.fixture(scope='module')
def tiago() -> SimRobot:
    """Return one simulated TIAGo for the module's physics tests."""
    return SimRobot('tiago')


def test_a_robot_without_a_mobile_base_gets_no_mocap_body_nor_sensor() -> None:
    """Baxter's model is what it was: no mocap body, no sensor; its base cannot be driven."""
    sim = SimRobot('baxter')
    assert sim.model.nmocap == 0 and sim.model.nsensor == 0
    assert sim.mobile_base is None
    with pytest.raises(ConfigError, match='no mobile_base'):
        sim.command_base(0.1, 0.0)


def test_the_wrench_at_rest_is_the_hands_weight_and_compensates_to_zero(tiago) -> None:
    """Raw: the 0.87 kg beyond the sensor (8.5 N); compensated: zero."""
    tiago.step_to(tiago.time + 0.5)
    raw = tiago.wrench('arm', compensated=False)
    mass = float(tiago.model.body_subtreemass[tiago.model.body('wrist_ft_link').id])
    assert np.linalg.norm(raw.force) == pytest.approx(mass * 9.81, rel=1e-6)
    bias = tiago.gravity_wrench('arm')
    np.testing.assert_allclose(raw.force, bias.force, atol=1e-6)
    np.testing.assert_allclose(raw.torque, bias.torque, atol=1e-6)
    compensated = tiago.wrench('arm')
    assert np.abs(compensated.force).max() < 1e-3 and np.abs(compensated.torque).max() < 1e-3


@pytest.mark.parametrize('force, point', [
    ((0.0, 0.0, -20.0), (0.0, 0.0, 0.0)),
    ((15.0, 0.0, 0.0), (0.0, 0.0, 0.1)),
    ((0.0, -10.0, 5.0), (0.05, 0.0, 0.08)),
], ids=['along_z', 'sideways_with_lever', 'oblique'])
def test_a_push_on_the_hand_reads_on_the_wrist_and_the_arm_comes_back(
    tiago, force, point
) -> None:
    """
    A push in the sensor's frame reads as itself (force) and r x F (torque); then it returns.

    Read at the end of a 1.5 s push, when the servos hold the pushed arm still; the reading is
    the force the environment applies on the hand, in the sensor frame.
    """
    tiago.step_to(tiago.time + 0.5)
    before = tiago.arm_positions('arm_controller')
    start = tiago.time
    tiago.push('wrist_ft_link', force, 1.5, point=point, local=True)
    tiago.step_to(start + 1.45)
    assert tiago.pushing
    reading = tiago.wrench('arm')
    np.testing.assert_allclose(reading.force, force, atol=0.05)
    np.testing.assert_allclose(reading.torque, np.cross(point, force), atol=0.01)
    moved = np.abs(tiago.arm_positions('arm_controller') - before).max()
    tiago.step_to(start + 4.0)
    assert not tiago.pushing
    assert np.abs(tiago.wrench('arm').force).max() < 0.05
    assert np.abs(tiago.arm_positions('arm_controller') - before).max() < 1e-3 < moved


def test_a_bad_push_is_refused(tiago) -> None:
    """A link fused into its parent, or a non-finite force: refused with the reason."""
    with pytest.raises(ConfigError, match='not a body'):
        tiago.push('arm_tool_link', (1.0, 0.0, 0.0), 0.1)
    with pytest.raises(ConfigError, match='finite'):
        tiago.push('wrist_ft_link', (math.inf, 0.0, 0.0), 0.1)


class SimWalk:
    """A person walking in front of the tracker; the follower drives the simulated base."""

    def __init__(self, sim: SimRobot, config: BaseFollowingConfig) -> None:
        self.sim = sim
        self.follower = BaseFollower(config)
        self.start = Pose2D(3.0, 0.5, math.pi)
        self.person = self.start
        self.origin = sim.base_pose()
        self.velocities: list[tuple[float, float]] = []
        self.frame()

    def frame(self) -> None:
        """Feed a footprint, step the follower, send its command, simulate one frame."""
        now = self.sim.time
        pose = self.person
        self.follower.observe(now, Footprint(now, pose.x, pose.y, pose.yaw))
        command = self.follower.step(now)
        self.sim.command_base(command.linear, command.angular)
        step = self.sim.config.timestep
        while self.sim.time + step <= now + DT + 1e-9:  # one physics step at a time
            self.sim.step_to(self.sim.time + step)
            self.velocities.append(self.sim.base_velocity())

    def move(self, forward: float, turn: float, seconds: float) -> None:
        """Walk ``forward`` while turning ``turn``, then stop."""
        steps = int(round(seconds / DT))
        for _ in range(steps):
            self.person = self.person.compose(Pose2D(forward / steps, 0.0, turn / steps))
            self.frame()

    def stand(self, seconds: float) -> None:
        """Stand still."""
        for _ in range(int(round(seconds / DT))):
            self.frame()

    def error(self) -> Pose2D:
        """Return the person's displacement seen from the simulated base (its start = origin)."""
        base = self.sim.base_pose().relative_to(self.origin)
        return self.person.relative_to(self.start).relative_to(base)


@pytest.mark.parametrize('moves', [
    [(1.0, 0.0), (0.0, math.pi / 2), (1.5, 0.0), (0.0, -math.pi), (1.0, 0.0)],
    [(1.0, 0.8), (0.8, -0.8), (-0.5, 0.0), (0.0, 0.3), (1.5, 0.0)],
], ids=['square', 'curves_and_back'])
def test_the_simulated_base_follows_a_walking_person_within_10_cm_and_5_deg(moves) -> None:
    """
    The follower's commands drive the MuJoCo base; it ends each move at the person's displacement.

    The follower is set within TIAGo's base limits (0.2 m/s: the backward limit, since its speed
    limit is symmetric; 1 rad/s; 0.5 m/s^2; 1 rad/s^2).
    """
    sim = SimRobot('tiago')
    config = BaseFollowingConfig(
        follow_base=True, base_max_linear_velocity=0.2, base_max_angular_velocity=1.0,
        base_max_linear_acceleration=0.5, base_max_angular_acceleration=1.0,
    )
    walk = SimWalk(sim, config)
    errors = []
    for forward, turn in moves:
        walk.move(forward, turn, seconds=max(abs(forward) / 0.8, abs(turn) / 1.0, 0.5))
        walk.stand(abs(forward) / 0.2 + abs(turn) / 1.0 + 6.0)
        error = walk.error()
        errors.append((math.hypot(error.x, error.y), abs(math.degrees(error.yaw))))
    assert all(distance <= 0.10 for distance, _ in errors), errors
    assert all(degrees <= 5.0 for _, degrees in errors), errors
    check_base_limits(np.array(walk.velocities), 0.002)


def test_pushes_add_up_unless_a_push_replaces_the_links_earlier_ones(tiago) -> None:
    """Two 5 N pushes read 10 N; a replacing third leaves its own 5 N."""
    tiago.step_to(tiago.time + 0.5)
    start = tiago.time
    for _ in range(2):
        tiago.push('wrist_ft_link', (0.0, 0.0, 5.0), 2.0, local=True)
    tiago.step_to(start + 1.0)
    assert tiago.wrench('arm').force[2] == pytest.approx(10.0, abs=0.05)
    tiago.push('wrist_ft_link', (0.0, 0.0, 5.0), 1.0, local=True, replace=True)
    tiago.step_to(start + 1.95)
    assert tiago.wrench('arm').force[2] == pytest.approx(5.0, abs=0.05)
    tiago.step_to(start + 4.0)
    assert not tiago.pushing


def test_a_prismatic_lift_in_a_commanded_group_is_driven_like_the_arms() -> None:
    """
    The torso lift of TIAGo (0.35 m, 0.07 m/s, 2000 N) as a commanded joint: held, followed.

    The servo is tuned from its joint-space inertia (the 18 kg it lifts plus the 0.05 kg drive
    inertia), gravity is compensated through it within its effort limit: it holds its start, a
    4 s ramp is tracked within 2 mm, a step to the bottom goes at the velocity limit and rests
    inside the lower limit, about the target margin (15 mm) in (TIAGo's robot file, whose
    ``torso`` is a commanded group).
    """
    sim = SimRobot('tiago')
    assert sim.gains['torso_lift_joint'].inertia == pytest.approx(18.3, abs=0.5)
    sim.step_to(0.5)
    assert sim.arm_positions('torso_controller')[0] == pytest.approx(0.15, abs=1e-4)
    sim.command('torso_controller', Trajectory(
        joint_names=['torso_lift_joint'], points=[Waypoint(time_from_start=4.0, positions=[0.33])]
    ))
    worst = 0.0
    while sim.time < 6.0:
        sim.step_to(sim.time + 0.01)
        worst = max(worst, sim.tracking_error('torso_controller'))
    assert worst < 0.002
    assert sim.arm_positions('torso_controller')[0] == pytest.approx(0.33, abs=1e-4)
    sim.command('torso_controller', Trajectory(
        joint_names=['torso_lift_joint'], points=[Waypoint(time_from_start=0.1, positions=[0.0])]
    ))
    speeds, lowest = [], 1.0
    while sim.time < 12.0:
        sim.step_to(sim.time + 0.01)
        speeds.append(abs(sim.joint_velocities()['torso_lift_joint']))
        lowest = min(lowest, float(sim.arm_positions('torso_controller')[0]))
    assert max(speeds) <= 0.07 * 1.01
    margin = target_margin(sim.robot, 'torso_lift_joint')  # where the publisher stops it too
    assert 0.0 <= lowest <= margin + 0.005
