"""
A person pushes the simulated TIAGo's hand: it yields along the push and comes back (issue 9).

The whole loop without ROS, as the nodes run it: the MuJoCo TIAGo's wrist force/torque sensor
(gravity compensated) -> :class:`~pic_ros.motion.hand_compliance.HandCompliance` (the variable
admittance) -> hand offsets -> the whole-body IK of a still person -> the arm and torso
trajectory controllers of the simulator, 30 frames a second. The push is an external force on the
sensor link (``xfrc_applied``), in the world frame, which is the base frame while the base stands.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from pic_ros.human.body_frame import to_body_frame
from pic_ros.imitation import RobotImitator
from pic_ros.motion.admittance import AdmittanceConfig
from pic_ros.motion.hand_compliance import (
    HandCompliance,
    HandComplianceConfig,
    robot_orientation,
)
from pic_ros.robot import load_robot
from pic_ros.skeleton import make_frame, SkeletonFrame
from pic_ros.solvers import SolverConfig
from pic_ros.solvers.avoidance import AvoidanceConfig
from pic_ros_tools.recordings.kinect_v2_text import kinect_v2_to_human
from pic_ros_tools.sim import SimRobot, Trajectory, Waypoint
from pic_ros_tools.synthetic import generate_recording
import pytest

FloatArray = npt.NDArray[np.float64]

RATE = 30.0
"""Frames per second of the loop [Hz]."""

PUSH = np.array([20.0, 0.0, 0.0])
"""The push on the hand, base frame [N]: over the 5 N threshold, so the hand turns soft."""

COMPLIANT = 100.0
"""Compliant stiffness of the test [N/m]: the push should settle the offset at 0.2 m."""


class PushedHand:
    """The closed loop: sensor, admittance, whole-body IK, simulated controllers."""

    def __init__(self, person: SkeletonFrame) -> None:
        self.robot = load_robot('tiago')
        self.sim = SimRobot('tiago')
        self.person = person
        # without the self-collision avoidance: this person holds the hand within the margin of
        # TIAGo's base, where the avoidance would hold it; what is tested is the admittance
        self.imitator = RobotImitator(
            self.robot, SolverConfig(), whole_body=True, avoidance=AvoidanceConfig(0.0)
        )
        config = HandComplianceConfig(admittance=AdmittanceConfig(stiffness_compliant=COMPLIANT))
        self.compliance = HandCompliance(robot_orientation(self.robot), ['arm'], config)
        self.link = self.sim.wrench_sensors['arm']
        self.body = int(self.sim.model.body(self.link).id)
        self.offsets: list[FloatArray] = []
        self.still: list[FloatArray] = []
        self.pushed: list[FloatArray] = []
        self.released: list[FloatArray] = []

    def hand(self) -> FloatArray:
        """Return where the simulated sensor link is, base frame [m]."""
        return np.array(self.sim.data.xpos[self.body], dtype=float)

    def run(self, seconds: float, push: FloatArray | None = None) -> list[FloatArray]:
        """Run the loop, pushing the hand all along if told to; return the hand's positions."""
        sim, arm = self.sim, self.robot.arms['arm']
        period = 1.0 / RATE
        positions = []
        for _ in range(round(seconds * RATE)):
            now = sim.time + period
            if push is not None:
                sim.push(self.link, push, period + 0.01, replace=True)
            sim.step_to(now)
            wrench = sim.wrench('arm')
            self.compliance.observe('arm', now, self.link, wrench.force, sim.joint_positions())
            offsets = self.compliance.step(now, period)
            self.offsets.append(offsets['arm'])
            frame = make_frame(now, self.person.positions, self.person.valid, frame='body')
            self.imitator.step(frame, offsets)
            sim.command(arm.spec.controller, Trajectory(
                joint_names=list(arm.joint_names),
                points=[Waypoint(time_from_start=period, positions=list(self.imitator.q('arm')))],
            ))
            lift = self.imitator.torso_value
            if lift is not None:
                torso = self.robot.groups['torso']
                sim.command(torso.controller, Trajectory(
                    joint_names=list(torso.joint_names),
                    points=[Waypoint(time_from_start=period, positions=[lift])],
                ))
            positions.append(self.hand())
        return positions


@pytest.fixture(scope='module')
def loop() -> PushedHand:
    """Return the loop after 3 still seconds, a 4 s push and 8 s without it."""
    recording = generate_recording()
    index = int(np.flatnonzero(recording.tracked)[200])
    person = to_body_frame(make_frame(0.0, kinect_v2_to_human(recording.joints[index])))
    pushed = PushedHand(person)
    pushed.still = pushed.run(3.0)
    pushed.pushed = pushed.run(4.0, PUSH)
    pushed.released = pushed.run(8.0)
    return pushed


def test_without_a_push_the_hand_stays_where_the_imitation_puts_it(loop: PushedHand) -> None:
    """
    Once the arm has come from its neutral pose, the sensor's reading does not move the hand.

    (While the arm swings into the person's pose the hand's inertia shows on the sensor, which
    only removes the hand's weight: the stiff hand gives way by about a centimetre then.)
    """
    settled = round(RATE)
    drift = np.linalg.norm(loop.still[-1] - loop.still[-settled])
    assert drift < 1e-3
    last_second = loop.offsets[len(loop.still) - settled: len(loop.still)]
    assert max(np.linalg.norm(offset) for offset in last_second) < 1e-3


def test_a_pushed_hand_yields_along_the_push_by_force_over_stiffness(loop: PushedHand) -> None:
    """Pushed along x, the hand settles about f / k_min further along x, mostly along x."""
    rest = loop.still[-1]
    moved = loop.pushed[-1] - rest
    expected = float(PUSH[0]) / COMPLIANT
    assert 0.5 * expected < moved[0] < 1.5 * expected, moved
    assert moved[0] > 2.0 * np.linalg.norm(moved[1:]), moved
    offset = loop.offsets[len(loop.still) + len(loop.pushed) - 1]
    np.testing.assert_allclose(offset, [expected, 0.0, 0.0], atol=0.1 * expected)


def test_the_yield_stays_bounded_and_the_hand_returns_when_the_push_ends(
    loop: PushedHand,
) -> None:
    """Stable: no offset beyond the compliant yield (+20 %); released, the hand comes back."""
    expected = float(PUSH[0]) / COMPLIANT
    assert all(np.all(np.isfinite(offset)) for offset in loop.offsets)
    assert max(np.linalg.norm(offset) for offset in loop.offsets) < 1.2 * expected
    rest = loop.still[-1]
    moved = np.linalg.norm(loop.pushed[-1] - rest)
    back = np.linalg.norm(loop.released[-1] - rest)
    assert back < 0.1 * moved, (back, moved)
    assert np.linalg.norm(loop.offsets[-1]) < 1e-3
