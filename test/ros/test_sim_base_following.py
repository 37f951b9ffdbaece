"""
base_follower drives the simulated TIAGo's base over DDS; the wrist sensor reads a sim/push.

Two processes on the run's domain, discovery on loopback, in a namespace of their own:
``sim_robot`` (TIAGo: its base listens on ``mobile_base_controller/cmd_vel_unstamped`` like PAL's
controller) and ``base_follower`` (``follow_base`` on, its ``cmd_vel`` remapped to that topic). The
test process publishes ``engaged`` true (latched, as trajectory_publisher does once the robot
is engaged) and the person's ``body_pose`` walking 1 m forward, and reads the base's odometry;
then it pushes the hand on ``sim/push`` and reads the wrist wrench. The wall clock only bounds
the waits; the processes are stopped by their process group.
"""

from __future__ import annotations

import importlib.util
import time

from pic_ros.human.body_frame import Footprint
from pic_ros_tools.ros.processes import (
    discovery_range,
    domain_id,
    loopback_environment,
    ManagedProcess,
    python_module,
)
import pytest

rclpy = pytest.importorskip('rclpy')
if importlib.util.find_spec('mujoco') is None:
    pytest.skip('sim_robot needs mujoco', allow_module_level=True)
geometry_msgs = pytest.importorskip('geometry_msgs.msg')
Odometry = pytest.importorskip('nav_msgs.msg').Odometry
std_msgs = pytest.importorskip('std_msgs.msg')
SingleThreadedExecutor = pytest.importorskip('rclpy.executors').SingleThreadedExecutor
_qos = pytest.importorskip('rclpy.qos')
QoSProfile, ReliabilityPolicy = _qos.QoSProfile, _qos.ReliabilityPolicy

pytestmark = [pytest.mark.ros, pytest.mark.slow]

DOMAIN_ID = domain_id()
NAMESPACE = '/sim_base_following_test'
TIMEOUT = 60.0
"""Longest wall-clock wait for anything [s] (a timeout, not a figure)."""


@pytest.fixture(scope='module')
def processes(tmp_path_factory):
    """Start sim_robot (TIAGo) and base_follower in the test's namespace; stop them after."""
    logs = tmp_path_factory.mktemp('sim_base_following')
    env = loopback_environment(DOMAIN_ID)
    env.setdefault('MUJOCO_GL', 'egl')
    sim = ManagedProcess(
        python_module(
            'pic_ros_tools.ros.sim_robot_node', '--ros-args', '-r', f'__ns:={NAMESPACE}',
            '-p', 'robot:=tiago',
        ),
        env, logs / 'sim_robot.log',
    )
    follower = ManagedProcess(
        python_module(
            'pic_ros.ros.base_follower_node', '--ros-args', '-r', f'__ns:={NAMESPACE}',
            '-r', 'cmd_vel:=mobile_base_controller/cmd_vel_unstamped',
            '-p', 'follow_base:=true',
        ),
        env, logs / 'base_follower.log',
    )
    try:
        yield sim, follower
    finally:
        follower.stop(10.0)
        sim.stop(10.0)


class Probe:
    """The test's node: body_pose and sim/push out, odometry and the wrist wrench in."""

    def __init__(self, context) -> None:
        self.node = rclpy.create_node('sim_base_probe', namespace=NAMESPACE, context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.body_pose = self.node.create_publisher(
            geometry_msgs.PoseStamped, 'body_pose', reliable
        )
        self.push = self.node.create_publisher(geometry_msgs.WrenchStamped, 'sim/push', reliable)
        from pic_ros.ros.qos import LATCHED  # needs rclpy: imported once it is there

        self.engaged = self.node.create_publisher(std_msgs.Bool, 'engaged', LATCHED)
        self.engaged.publish(std_msgs.Bool(data=True))  # the base follows only while engaged
        self.odometry: list = []
        self.wrenches: list = []
        self.node.create_subscription(
            Odometry, 'mobile_base_controller/odom', self.odometry.append, reliable
        )
        self.node.create_subscription(
            geometry_msgs.WrenchStamped, 'ft_sensor_controller/wrench', self.wrenches.append,
            reliable,
        )

    def spin_for(self, seconds: float) -> None:
        """Process callbacks for a while (wall clock)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def spin_until(self, predicate, timeout: float = TIMEOUT) -> bool:
        """Process callbacks until ``predicate()`` holds or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return bool(predicate())


@pytest.fixture(scope='module')
def probe(processes):
    """Join the domain on loopback and wait for the odometry and the follower's subscription."""
    sim, follower = processes
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', discovery_range())
        patch.setenv('ROS_DOMAIN_ID', str(DOMAIN_ID))
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=DOMAIN_ID)
        probe = Probe(context)
        try:
            ready = probe.spin_until(
                lambda: (
                    len(probe.odometry) > 5 and len(probe.wrenches) > 5
                    and probe.body_pose.get_subscription_count() > 0
                    and probe.push.get_subscription_count() > 0
                    and probe.engaged.get_subscription_count() > 0
                ) or not (sim.alive() and follower.alive()),
            )
            logs = ''.join(
                process.log_path.read_text(errors='replace')[-2000:]
                for process in (sim, follower) if process.log_path is not None
            )
            assert ready and sim.alive() and follower.alive(), f'did not start:\n{logs}'
            yield probe
        finally:
            probe.node.destroy_node()
            rclpy.try_shutdown(context=context)


def footprint_message(stamp: float, distance: float):
    """Return a body_pose: the person ``distance`` from the sensor on its x axis, facing it."""
    from pic_ros.ros.conversions import footprint_to_msg

    return footprint_to_msg(Footprint(stamp, distance, 0.0, 3.141592653589793), 'tracker')


def test_the_simulated_base_drives_forward_when_the_person_walks(probe) -> None:
    """The person walks 1 m toward the sensor (forward for them): the base drives forward."""
    start = probe.odometry[-1].pose.pose.position
    assert (start.x, start.y) == (0.0, 0.0)
    assert probe.odometry[-1].header.frame_id == 'odom'
    assert probe.odometry[-1].child_frame_id == 'base_footprint'
    t0 = time.time()
    for step in range(60):  # 2 s at 30 Hz: 1 m
        probe.body_pose.publish(footprint_message(t0 + step / 30.0, 3.0 - step / 59.0))
        probe.spin_for(1.0 / 30.0)

    def arrived() -> bool:
        probe.body_pose.publish(footprint_message(time.time(), 2.0))  # standing at the goal
        probe.spin_for(1.0 / 30.0)
        return probe.odometry[-1].pose.pose.position.x > 0.8

    assert probe.spin_until(arrived), probe.odometry[-1].pose.pose
    position = probe.odometry[-1].pose.pose.position
    assert abs(position.y) < 0.05
    assert max(message.twist.twist.linear.x for message in probe.odometry) <= 1.0 + 1e-9


def test_a_push_on_sim_push_reads_on_the_wrist_wrench(probe) -> None:
    """
    20 N along the sensor's -z, pushed on and on: the wrench reads it; released, about zero.

    Each push message holds for 0.1 s of simulation time, so a busy host may let the push lapse
    between two messages: the test waits for the readings (bounded), it does not time them.
    """
    assert all(message.header.frame_id == 'wrist_ft_link' for message in probe.wrenches[-5:])
    push = geometry_msgs.WrenchStamped()
    push.header.frame_id = 'wrist_ft_link'
    push.wrench.force.z = -20.0

    def pushed() -> bool:
        probe.push.publish(push)
        probe.spin_for(0.02)
        return abs(probe.wrenches[-1].wrench.force.z + 20.0) < 1.0

    assert probe.spin_until(pushed), probe.wrenches[-1].wrench
    released = len(probe.wrenches)
    assert probe.spin_until(
        lambda: len(probe.wrenches) > released and abs(probe.wrenches[-1].wrench.force.z) < 0.5
    ), probe.wrenches[-1].wrench
