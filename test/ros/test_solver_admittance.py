"""
solver_node with ``admittance`` on: a wrist wrench on the loopback moves the hand along the push.

TIAGo, a still person, with each solver that shifts a hand target (the ``position``
correspondence, the whole-body IK): the wrench arrives over DDS (a helper node publishes
``geometry_msgs/WrenchStamped`` on the robot file's sensor topic), the node runs on simulated
time (``use_sim_time``, ``/clock`` from the test) so that the force's staleness is decided by the
test, and the published joint targets place the hand (URDF forward kinematics) away from where it
was, along the push; when the wrenches stop, the hand returns.
"""

from __future__ import annotations

from geometry_msgs.msg import WrenchStamped
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.human.body_frame import to_body_frame
from pic_ros.motion.hand_compliance import wrench_topic
from pic_ros.ros.solver_node import SolverNode
from pic_ros.skeleton import make_frame, SkeletonFrame
from pic_ros_tools.recordings.kinect_v2_text import kinect_v2_to_human
from pic_ros_tools.synthetic import generate_recording
import pytest
from rclpy.parameter import Parameter

RATE = 30.0
"""Skeleton rate of the test [Hz]."""

PUSH = 8.0
"""Push along the robot's x [N] (over the 5 N threshold: the hand turns compliant)."""

SETTINGS = {
    'robot': 'tiago', 'correspondence': 'position', 'admittance': True, 'use_sim_time': True,
    'admittance_stiffness_compliant': 40.0,  # 8 N / 40 N/m: a 0.2 m yield, within reach
    # the test person holds the hand within the margin of TIAGo's base, where the
    # self-collision avoidance would hold it: what is tested is the admittance
    'self_collision_margin': 0.0,
}

SOLVERS = {
    'position': {},
    'whole_body': {'correspondence': 'direction', 'whole_body': True},
}
"""The two ways a hand target can be shifted: the position correspondence, whole-body IK."""


@pytest.fixture(scope='module')
def still_person() -> SkeletonFrame:
    """Return one tracked body-frame skeleton of the synthetic take."""
    recording = generate_recording()
    index = int(np.flatnonzero(recording.tracked)[200])
    return to_body_frame(make_frame(0.0, kinect_v2_to_human(recording.joints[index])))


def at(frame: SkeletonFrame, stamp: float) -> SkeletonFrame:
    """Return the skeleton with another stamp."""
    return make_frame(stamp, frame.positions, frame.valid, frame='body')


def hand(node: SolverNode, names, positions) -> np.ndarray:
    """Return the wrist landmark (what the offset shifts) for published joint targets [m]."""
    arm = node.robot.arms['arm']
    given = dict(zip(names, positions, strict=True))
    torso = node._imitator.torso_value
    if node._imitator.whole_body and torso is not None:
        return node._imitator.landmarks('arm')[3]  # the solution's, at its torso lift
    return arm.landmarks([given[name] for name in arm.joint_names])[3]


def test_admittance_without_a_solver_that_takes_offsets_is_refused(make_node) -> None:
    """The direction correspondence without whole_body cannot shift a hand: refused at start."""
    with pytest.raises(ConfigError, match='admittance needs .*whole_body'):
        make_node(SolverNode, {'robot': 'tiago', 'admittance': True})


@pytest.mark.parametrize('solver', SOLVERS)
def test_a_wrench_on_the_loopback_moves_the_hand_along_the_push_and_it_returns(
    make_node, helper_node, sim_clock, wait_for, diagnostics, still_person, solver
) -> None:
    """Pushed along x the hand moves along x; without wrenches it comes back (bounded waits)."""
    node = make_node(SolverNode, {**SETTINGS, **SOLVERS[solver]})
    handed: list = []
    node.add_handler(lambda targets: handed.append((targets.joint_names, targets.positions)))
    publisher = helper_node.create_publisher(WrenchStamped, wrench_topic(node.robot, 'arm'), 10)
    wait_for(lambda: publisher.get_subscription_count() > 0, 'the wrench subscription')
    clock = sim_clock(node)
    now = 1.0

    def run(seconds: float, force: float | None) -> np.ndarray:
        nonlocal now
        for _ in range(round(seconds * RATE)):
            now += 1.0 / RATE
            if force is not None:
                message = WrenchStamped()
                message.header.frame_id = node.robot.base_frame
                message.wrench.force.x = force
                publisher.publish(message)
            clock.advance_to(now)
            node.handle_skeleton(at(still_person, now))
        return hand(node, *handed[-1])

    rest = run(1.0, None)
    received = node._compliance.received['arm']
    pushed = run(4.0, PUSH)
    assert node._compliance.received['arm'] > received  # they came over DDS
    # another parameter changes: the compliance's own settings did not, the hand stays pushed
    yielded = np.linalg.norm(node._compliance.last['arm'].deviation)
    assert node.set_parameters([Parameter('max_frame_age', value=0.6)])[0].successful
    run(1.0 / RATE, PUSH)
    assert np.linalg.norm(node._compliance.last['arm'].deviation) > 0.9 * yielded > 0.05
    moved = pushed - rest
    assert moved[0] > 0.05, moved
    assert abs(moved[0]) > 2.0 * np.linalg.norm(moved[1:]), moved
    report = diagnostics(node)[0]
    assert report['admittance'] == 'True'
    assert report['admittance_role_arm'] == 'compliant'
    back = run(12.0, None)
    assert np.linalg.norm(node._compliance.last['arm'].deviation) < 1e-3
    # The offset is gone; the arm solver closes the last centimetre from its displaced warm start
    # over several more seconds (bounded steps per frame), so: most of the way back, not all.
    assert np.linalg.norm(back - rest) < 0.15 * np.linalg.norm(moved), (back, rest, moved)
    assert diagnostics(node)[0]['admittance_role_arm'] == 'stiff'


def test_a_wrench_in_an_unknown_frame_is_ignored(make_node, still_person) -> None:
    """A frame that is not a URDF link is refused (counted), and the hand does not move."""
    node = make_node(SolverNode, {**SETTINGS, 'use_sim_time': False})
    message = WrenchStamped()
    message.header.frame_id = 'somewhere_else'
    message.wrench.force.x = 50.0
    node._on_wrench('arm', message)
    assert node._compliance.received['arm'] == 0
    assert sum(node._compliance.refused.values()) == 1
