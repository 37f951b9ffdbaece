"""
Base following (:mod:`pic_ros.motion.base_following`): limits, dead zones, loss, walking.

A synthetic person walks in front of the tracker (tracker frame: x away from the sensor); the
follower's commands are integrated as the base would move, and the base must end each move
within 10 cm and 5 deg of the person's displacement, never above its limits.
"""

from __future__ import annotations

import math

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.human.body_frame import Footprint, footprint
from pic_ros.motion.base_following import (
    BaseCommand,
    BaseFollower,
    BaseFollowingConfig,
    FollowState,
    integrate,
    paper_law,
    Pose2D,
)
from pic_ros.skeleton import HumanJoint, make_frame
import pytest

DT = 1.0 / 30.0
"""Step of the tests, a tracker's frame period [s]."""

ON = BaseFollowingConfig(follow_base=True)

START = Pose2D(3.0, 0.5, math.pi)
"""The person's first footprint: 3 m from the sensor, facing it."""

SLACK = 1e-9


class Walk:
    """A person walking in front of the tracker, and a follower fed at every frame."""

    def __init__(self, config: BaseFollowingConfig = ON) -> None:
        self.follower = BaseFollower(config)
        self.person = START
        self.time = 0.0
        self.commands: list[tuple[float, BaseCommand]] = []
        self.frame()

    def frame(self, *, seen: bool = True) -> None:
        """Feed the person's footprint (unless hidden) and step the follower."""
        if seen:
            pose = self.person
            self.follower.observe(self.time, Footprint(self.time, pose.x, pose.y, pose.yaw))
        self.commands.append((self.time, self.follower.step(self.time)))
        self.time += DT

    def move(self, forward: float = 0.0, turn: float = 0.0, seconds: float = 2.0) -> None:
        """Walk ``forward`` [m] (out of the chest) while turning ``turn`` [rad], then stop."""
        steps = int(round(seconds / DT))
        for _ in range(steps):
            self.person = self.person.compose(Pose2D(forward / steps, 0.0, turn / steps))
            self.frame()

    def stand(self, seconds: float) -> None:
        """Stand still for a while."""
        for _ in range(int(round(seconds / DT))):
            self.frame()

    def error(self) -> Pose2D:
        """Return the person's displacement since the start, seen from the integrated base."""
        return self.person.relative_to(START).relative_to(self.follower.odometry)


def check_limits(commands: list[tuple[float, BaseCommand]], config: BaseFollowingConfig) -> None:
    """Assert the velocity and acceleration limits over a command sequence."""
    linear = np.array([command.linear for _, command in commands])
    angular = np.array([command.angular for _, command in commands])
    times = np.array([time for time, _ in commands])
    assert np.all(np.abs(linear) <= config.base_max_linear_velocity + SLACK)
    assert np.all(np.abs(angular) <= config.base_max_angular_velocity + SLACK)
    steps = np.minimum(np.diff(times), 0.1)
    assert np.all(np.abs(np.diff(linear)) <= config.base_max_linear_acceleration * steps + SLACK)
    assert np.all(
        np.abs(np.diff(angular)) <= config.base_max_angular_acceleration * steps + SLACK
    )


# --- configuration --------------------------------------------------------------------------


def test_following_is_off_by_default_and_the_config_reads_its_parameters() -> None:
    """A moving base is opt-in; the parameters build the same config as the defaults."""
    assert BaseFollowingConfig().follow_base is False
    assert BaseFollowingConfig.from_parameters({}) == BaseFollowingConfig()
    assert BaseFollowingConfig.from_parameters({'follow_base': True}) == ON


@pytest.mark.parametrize('name, value', [
    ('base_max_linear_velocity', 0.0),
    ('base_max_angular_velocity', -1.0),
    ('base_max_linear_acceleration', math.inf),
    ('base_position_deadband', -0.1),
    ('follow_base', 'yes'),
])
def test_a_bad_value_is_refused_naming_the_parameter(name: str, value: object) -> None:
    """Refused with the parameter's name, never clamped."""
    with pytest.raises(ConfigError, match=name):
        BaseFollowingConfig.from_parameters({name: value})


# --- the paper's law ------------------------------------------------------------------------


def test_the_law_drives_forward_backs_up_and_turns_as_algorithm_1() -> None:
    """The three branches of Algorithm 1, with sigma = lambda = 1."""
    config = ON
    assert paper_law(Pose2D(1.0, 0.0, 0.0), config) == pytest.approx((1.0, 0.0))
    assert paper_law(Pose2D(0.0, 1.0, 0.0), config) == pytest.approx((1.0, math.pi / 2))
    # Behind, facing the base's way: back up, the base's back turned to the goal.
    v, omega = paper_law(Pose2D(-1.0, 0.1, 0.0), config)
    assert v == pytest.approx(-math.hypot(1.0, 0.1))
    assert omega == pytest.approx(-math.atan(0.1))
    # Behind but facing the other way: drive forward, turning to the goal.
    v, omega = paper_law(Pose2D(-1.0, 0.1, math.pi), config)
    assert v > 0.0 and omega == pytest.approx(math.atan2(0.1, -1.0))
    # Within epsilon: turn in place to the heading, or nothing in the angular dead zone.
    assert paper_law(Pose2D(0.01, 0.0, 0.5), config) == pytest.approx((0.0, 0.5))
    assert paper_law(Pose2D(0.01, 0.01, 0.02), config) == (0.0, 0.0)


def test_integration_is_the_exact_unicycle_motion() -> None:
    """A quarter circle of radius 1 ends at (1, 1) turned 90 deg; a straight line is a line."""
    end = integrate(Pose2D(), 1.0, 1.0, math.pi / 2)
    assert (end.x, end.y, end.yaw) == pytest.approx((1.0, 1.0, math.pi / 2))
    end = integrate(Pose2D(0.0, 0.0, math.pi / 2), 0.5, 0.0, 2.0)
    assert (end.x, end.y, end.yaw) == pytest.approx((0.0, 1.0, math.pi / 2), abs=1e-12)


# --- guarantees -----------------------------------------------------------------------------


def test_off_publishes_nothing_but_zero() -> None:
    """follow_base false: the person walks, the base stays still and says it is off."""
    walk = Walk(BaseFollowingConfig())
    walk.move(forward=1.0, turn=1.0)
    assert all(command == BaseCommand(0.0, 0.0, FollowState.OFF) for _, command in walk.commands)
    assert not FollowState.OFF.active


def test_inside_the_dead_zone_the_command_is_zero() -> None:
    """Sway within epsilon and the angular dead zone: not one nonzero command."""
    walk = Walk()
    rng = np.random.default_rng(7)
    for _ in range(200):
        sway = rng.uniform(-0.03, 0.03, 2)
        walk.person = START.compose(Pose2D(sway[0], sway[1], float(rng.uniform(-0.03, 0.03))))
        walk.frame()
    assert all(
        (command.linear, command.angular) == (0.0, 0.0) for _, command in walk.commands
    )
    assert walk.follower.command.state is FollowState.AT_GOAL


def test_limits_hold_for_a_wild_person_and_tight_limits() -> None:
    """Teleporting footprints and low limits: every command within velocity and acceleration."""
    config = BaseFollowingConfig(
        follow_base=True, base_max_linear_velocity=0.3, base_max_angular_velocity=0.5,
        base_max_linear_acceleration=0.2, base_max_angular_acceleration=0.4,
        base_linear_gain=5.0, base_angular_gain=8.0,
    )
    walk = Walk(config)
    rng = np.random.default_rng(3)
    for _ in range(600):
        if rng.random() < 0.05:
            walk.person = Pose2D(*rng.uniform(-3.0, 3.0, 2), float(rng.uniform(-3.0, 3.0)))
        walk.frame(seen=bool(rng.random() > 0.1))
    check_limits(walk.commands, config)
    assert any(abs(command.linear) > 0.29 for _, command in walk.commands)


def test_tracking_loss_stops_the_base_within_the_deceleration_bound() -> None:
    """No footprint for base_timeout: zero within |v| / a (plus one step), then LOST."""
    walk = Walk()
    walk.move(forward=3.0, seconds=3.0)
    moving = walk.follower.command
    assert moving.linear > 0.3
    lost_at = walk.time - DT  # the last footprint's arrival
    while walk.time < lost_at + 5.0:
        walk.frame(seen=False)
    check_limits(walk.commands, ON)
    bound = lost_at + ON.base_timeout + max(
        abs(moving.linear) / ON.base_max_linear_acceleration,
        abs(moving.angular) / ON.base_max_angular_acceleration,
    ) + 2 * DT
    for time, command in walk.commands:
        if time > bound:
            assert (command.linear, command.angular, command.state) == (0.0, 0.0, FollowState.LOST)
        if time <= lost_at + ON.base_timeout:
            assert command.state is not FollowState.STOPPING
    assert any(command.state is FollowState.STOPPING for _, command in walk.commands)


def test_disengaged_the_base_stops_within_the_deceleration_bound_and_follows_nothing() -> None:
    """
    Disengaged while driving: zero within |v| / a (plus one step), DISENGAGED.

    The person walks on meanwhile; engaged again, the base resumes toward the same reference,
    within the limits.
    """
    walk = Walk()
    walk.move(forward=3.0, seconds=3.0)
    moving = walk.follower.command
    assert moving.linear > 0.3
    walk.follower.engaged = False
    stopped_at = walk.time
    walk.move(forward=1.0, seconds=4.0)  # the person walks on: nothing follows
    bound = stopped_at + abs(moving.linear) / ON.base_max_linear_acceleration + 2 * DT
    for time, command in walk.commands:
        if time > bound:
            assert (command.linear, command.angular, command.state) == (
                0.0, 0.0, FollowState.DISENGAGED
            )
    held = walk.follower.odometry
    walk.stand(1.0)
    assert walk.follower.odometry == held
    assert walk.follower.footprints == len(walk.commands)  # still taken

    walk.follower.engaged = True
    walk.stand(12.0)

    check_limits(walk.commands, ON)
    error = walk.error()
    assert math.hypot(error.x, error.y) < 0.1  # the same reference: the whole walk made up


def test_same_input_same_output() -> None:
    """Two followers fed the same footprints at the same times give the same commands."""

    def run() -> list[tuple[float, BaseCommand]]:
        walk = Walk()
        walk.move(forward=1.0, turn=0.5)
        walk.stand(1.0)
        walk.move(forward=-0.5, turn=-1.0)
        return walk.commands

    assert run() == run()


def test_stale_and_non_finite_footprints_are_refused_and_a_replay_loop_re_anchors() -> None:
    """Out of order or NaN: refused and counted; a stamp back by > 1 s: a new reference."""
    follower = BaseFollower(ON)
    assert follower.observe(0.0, Footprint(10.0, 1.0, 0.0, math.pi))
    assert not follower.observe(0.1, Footprint(9.9, 2.0, 0.0, math.pi))
    assert not follower.observe(0.2, Footprint(10.5, math.nan, 0.0, math.pi))
    assert follower.rejected == 2
    assert follower.goal == Pose2D(0.0, 0.0, 0.0)
    assert follower.observe(0.3, Footprint(10.6, 0.5, 0.0, math.pi))
    goal = follower.goal
    assert goal is not None and goal.x == pytest.approx(0.5)
    assert follower.observe(0.4, Footprint(0.0, 3.0, 1.0, 0.0))  # a looping replay
    assert follower.sessions == 2
    assert follower.goal == Pose2D(0.0, 0.0, 0.0)


# --- the walking person ---------------------------------------------------------------------


@pytest.mark.parametrize('moves', [
    [(1.0, 0.0), (0.0, math.pi / 2), (1.5, 0.0), (0.0, -math.pi), (1.0, 0.0)],
    [(1.0, 0.8), (0.8, -0.8), (-0.5, 0.0), (0.0, 0.3), (2.0, 0.0)],
    [(0.5, 0.0), (0.0, math.pi), (1.5, 0.0), (-0.3, 0.0)],
], ids=['square', 'curves_and_back', 'about_turn'])
def test_the_base_ends_each_move_within_10_cm_and_5_deg(moves) -> None:
    """After each move and a pause, the integrated base is where the person's displacement is."""
    walk = Walk()
    for forward, turn in moves:
        walk.move(forward, turn, seconds=max(abs(forward) / 0.8, abs(turn) / 1.0, 0.5))
        walk.stand(6.0)
        error = walk.error()
        assert math.hypot(error.x, error.y) <= 0.10, (forward, turn)
        assert abs(math.degrees(error.yaw)) <= 5.0, (forward, turn)
    check_limits(walk.commands, ON)


def test_a_step_to_the_left_moves_the_base_to_its_left() -> None:
    """Same side: the person's left is the base's left (the person faces the sensor)."""
    walk = Walk()
    steps = 30
    for _ in range(steps):
        walk.person = walk.person.compose(Pose2D(0.0, 0.5 / steps, 0.0))
        walk.frame()
    walk.stand(25.0)
    odometry = walk.follower.odometry
    assert odometry.y == pytest.approx(0.5, abs=0.1)
    assert abs(odometry.x) <= 0.1
    # In the tracker frame the step went toward -y: the person's left, facing the sensor.
    assert walk.person.y < START.y


# --- the footprint of a skeleton ------------------------------------------------------------


def test_the_footprint_is_the_pelvis_and_the_chest_direction_on_the_floor() -> None:
    """A person facing the sensor, turned 30 deg: pelvis x-y, heading pi - 30 deg."""
    positions = np.full((19, 3), np.nan)
    turn = math.radians(30.0)
    facing = np.array([math.cos(math.pi - turn), math.sin(math.pi - turn), 0.0])
    left = np.array([-facing[1], facing[0], 0.0])
    pelvis = np.array([2.5, 0.2, 0.9])
    positions[HumanJoint.PELVIS] = pelvis
    positions[HumanJoint.SPINE_CHEST] = pelvis + [0.0, 0.0, 0.5]
    positions[HumanJoint.SHOULDER_LEFT] = pelvis + [0.0, 0.0, 0.5] + 0.2 * left
    positions[HumanJoint.SHOULDER_RIGHT] = pelvis + [0.0, 0.0, 0.5] - 0.2 * left
    valid = np.isfinite(positions[:, 0])
    found = footprint(make_frame(4.0, positions, valid))
    assert found is not None
    assert (found.stamp, found.x, found.y) == pytest.approx((4.0, 2.5, 0.2))
    assert found.heading == pytest.approx(math.pi - turn)
    valid[HumanJoint.PELVIS] = False
    assert footprint(make_frame(4.0, positions, valid)) is None
