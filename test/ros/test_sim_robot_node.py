"""
sim_robot across processes over DDS: trajectories in, joint_states out, as ros2_control does.

The node runs as its own process (``python -m pic_ros_tools.ros.sim_robot_node``, robot YuMi) on a
domain id of this test run, discovery kept on loopback; the test process is the client. The node
publishes its simulation time (``publish_clock``) and stamps joint_states with it, so every
behaviour is judged on the simulation's clock: a trajectory is sent with a start stamp in the
simulated future and the measured positions are compared with it at their stamps. The wall clock
only bounds the waits (a timeout, never the thing asserted); how fast the host runs the node is
``python -m pic_ros_tools bench``'s business, not a test's. Every wait is bounded and the node is
stopped by its pid (SIGINT, then SIGKILL after 10 s).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
import signal
import subprocess
import sys
import time
import types
from typing import NamedTuple

import numpy as np
from pic_ros.robot import load_robot
from pic_ros_tools.ros.processes import discovery_range, domain_id, loopback_environment
import pytest

rclpy = pytest.importorskip('rclpy')
if importlib.util.find_spec('mujoco') is None:  # the node needs it; this process does not
    pytest.skip('sim_robot needs mujoco', allow_module_level=True)

Time = pytest.importorskip('builtin_interfaces.msg').Time
Duration = pytest.importorskip('builtin_interfaces.msg').Duration
DiagnosticArray = pytest.importorskip('diagnostic_msgs.msg').DiagnosticArray
DiagnosticStatus = pytest.importorskip('diagnostic_msgs.msg').DiagnosticStatus
ClockMessage = pytest.importorskip('rosgraph_msgs.msg').Clock
SingleThreadedExecutor = pytest.importorskip('rclpy.executors').SingleThreadedExecutor
_qos = pytest.importorskip('rclpy.qos')
QoSProfile, ReliabilityPolicy = _qos.QoSProfile, _qos.ReliabilityPolicy
JointState = pytest.importorskip('sensor_msgs.msg').JointState
_trajectory_msgs = pytest.importorskip('trajectory_msgs.msg')
JointTrajectory, JointTrajectoryPoint = (
    _trajectory_msgs.JointTrajectory, _trajectory_msgs.JointTrajectoryPoint
)

pytestmark = [pytest.mark.ros, pytest.mark.slow]

DOMAIN_ID = domain_id()
"""The run's domain (exported, else its own: ``conftest.py``)."""

SIDE_NAMESPACE = '/sim_command_test'
"""Namespace of the sim processes started beside the module's node: the probe never hears them."""

STARTUP_TIMEOUT = 60.0
"""Longest wait for the node's first joint_states [s] (wall clock, a timeout)."""

WAIT_TIMEOUT = 60.0
"""Longest wall-clock wait for the simulation to reach a time or a count [s] (a timeout)."""

LEAD = 1.0
"""How far in the simulated future a timed trajectory starts [s]: time for DDS to deliver it."""

LIMIT_TOLERANCE = 0.0
"""How far outside a URDF limit a measured position may be [rad]: not at all."""

ROBOT = load_robot('yumi')
ARMS = {arm.spec.controller: arm for arm in ROBOT.arms.values()}


class State(NamedTuple):
    """One joint_states message: its stamp (simulation time) and the joints by name."""

    stamp: float
    positions: dict[str, float]
    velocities: dict[str, float]


def seconds(stamp) -> float:
    """Return a ``builtin_interfaces/Time`` in seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


class Probe:
    """The test's side of the graph: trajectory publishers, joint_states and /clock recorders."""

    def __init__(self, context) -> None:
        self.node = rclpy.create_node('sim_robot_probe', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.publishers = {
            controller: self.node.create_publisher(
                JointTrajectory, f'{controller}/joint_trajectory', reliable
            )
            for controller in ARMS
        }
        self.states: list[State] = []
        self.clock: list[float] = []
        self.diagnostics: list[DiagnosticArray] = []
        self.node.create_subscription(
            JointState, 'joint_states', self._on_state,
            QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE),
        )
        self.node.create_subscription(
            ClockMessage, '/clock', lambda message: self.clock.append(seconds(message.clock)),
            QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE),
        )
        self.node.create_subscription(
            DiagnosticArray, '/diagnostics', self.diagnostics.append, 10
        )

    def _on_state(self, message: JointState) -> None:
        self.states.append(State(
            seconds(message.header.stamp),
            dict(zip(message.name, message.position, strict=True)),
            dict(zip(message.name, message.velocity, strict=True)),
        ))

    def spin_until(self, predicate, timeout: float = WAIT_TIMEOUT) -> bool:
        """Process callbacks until ``predicate()`` holds or ``timeout`` [s] of wall time passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return bool(predicate())

    @property
    def sim_time(self) -> float:
        """Return the stamp of the last joint_states received (simulation time) [s]."""
        return self.states[-1].stamp

    def spin_until_sim_time(self, t: float) -> None:
        """Process callbacks until a joint_states stamped at or after ``t`` arrives (bounded)."""
        if not self.spin_until(lambda: self.sim_time >= t):
            pytest.fail(f'the simulation did not reach {t:.3f} s (it is at {self.sim_time:.3f})')

    def positions(self, controller: str) -> np.ndarray:
        """Return the last measured positions of a controller's joints [rad]."""
        named = self.states[-1].positions
        return np.array([named[name] for name in ARMS[controller].joint_names])

    def send(self, controller, points, names=None, start: float = 0.0) -> None:
        """
        Publish a trajectory.

        :param points: ``(time_from_start [s], positions, velocities or None)`` tuples.
        :param names: Joint names (default: the controller's, in order).
        :param start: Header stamp, simulation time [s]; 0 starts it on arrival.
        """
        message = JointTrajectory()
        whole = math.floor(start)
        message.header.stamp = Time(sec=int(whole), nanosec=int(round((start - whole) * 1e9)))
        message.joint_names = list(ARMS[controller].joint_names if names is None else names)
        for offset, positions, velocities in points:
            point = JointTrajectoryPoint()
            point.positions = [float(value) for value in positions]
            if velocities is not None:
                point.velocities = [float(value) for value in velocities]
            whole = math.floor(offset)
            point.time_from_start = Duration(
                sec=int(whole), nanosec=int(round((offset - whole) * 1e9))
            )
            message.points.append(point)
        self.publishers[controller].publish(message)

    def window(self, since: float, until: float = math.inf) -> list[State]:
        """Return the states stamped in ``[since, until]`` (simulation time)."""
        return [state for state in self.states if since <= state.stamp <= until]


def joint_values(states: list[State], arm) -> np.ndarray:
    """Return an arm's measured positions in some states, shape (len(states), dof)."""
    return np.array([[state.positions[name] for name in arm.joint_names] for state in states])


def outside_limits(states: list[State]) -> float:
    """Return how far the measured arm positions went outside their URDF limits [rad]."""
    worst = -math.inf
    for arm in ARMS.values():
        values = joint_values(states, arm)
        worst = max(worst, float(np.max(values - arm.upper)), float(np.max(arm.lower - values)))
    return worst


@pytest.fixture(scope='module')
def sim_node(tmp_path_factory):
    """Start sim_robot (YuMi, publishing its clock) in its own process; stop it by pid."""
    log_path = tmp_path_factory.mktemp('sim_robot') / 'sim_robot.log'
    env = loopback_environment(DOMAIN_ID)
    env.setdefault('MUJOCO_GL', 'egl')
    command = [
        sys.executable, '-m', 'pic_ros_tools.ros.sim_robot_node', '--ros-args',
        '-p', 'robot:=yumi', '-p', 'diagnostics_period:=0.5', '-p', 'publish_clock:=true',
    ]
    with open(log_path, 'wb') as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process, log_path
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10.0)


@pytest.fixture(scope='module')
def probe(sim_node):
    """Join the node's domain (loopback only) and wait for its first joint_states."""
    process, log_path = sim_node
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', discovery_range())
        patch.setenv('ROS_DOMAIN_ID', str(DOMAIN_ID))
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=DOMAIN_ID)
        probe = Probe(context)
        try:
            ready = probe.spin_until(
                lambda: len(probe.states) > 20 and all(
                    publisher.get_subscription_count() > 0
                    for publisher in probe.publishers.values()
                ) or process.poll() is not None,
                STARTUP_TIMEOUT,
            )
            log = Path(log_path).read_text(errors='replace')
            assert ready and process.poll() is None, f'sim_robot did not start:\n{log[-3000:]}'
            yield probe
        finally:
            probe.node.destroy_node()
            rclpy.try_shutdown(context=context)


def move_to(probe: Probe, targets: dict[str, np.ndarray]) -> None:
    """Send arms to positions in 0.5 s, let 1.5 s of simulation pass, check they are there."""
    for controller, target in targets.items():
        probe.send(controller, [(0.5, target, None)])
    probe.spin_until_sim_time(probe.sim_time + 1.5)
    for controller, target in targets.items():
        np.testing.assert_allclose(probe.positions(controller), target, atol=5e-3)


def go_to_neutral(probe: Probe) -> None:
    """Send both arms to the neutral pose and check they are there."""
    move_to(probe, {controller: arm.neutral for controller, arm in ARMS.items()})


def test_joint_states_carry_every_movable_joint_stamped_with_the_sim_time(probe):
    """
    joint_states has all 18 YuMi joints with velocities, stamped with the simulation's /clock.

    Over 200 messages the stamps strictly increase, and every /clock time received among them is
    the stamp of a joint_states message.
    """
    first = len(probe.states)
    assert probe.spin_until(lambda: len(probe.states) >= first + 200)
    states = probe.states[first:]
    stamps = np.array([state.stamp for state in states])
    assert np.all(np.diff(stamps) > 0.0)
    ticks = [t for t in probe.clock if stamps[0] <= t <= stamps[-1]]
    assert ticks and set(ticks) <= set(stamps.tolist())
    names = set(states[-1].positions)
    assert names == {name for arm in ARMS.values() for name in arm.joint_names} | {
        'gripper_l_joint', 'gripper_l_joint_m', 'gripper_r_joint', 'gripper_r_joint_m'
    }
    assert set(states[-1].velocities) == names


def test_a_step_is_followed_fast_within_the_limits(probe):
    """A 0.2 rad jump at a set simulation time settles to 10 mrad in 0.6 s, overshoot < 0.03."""
    go_to_neutral(probe)
    controller = 'left_arm_controller'
    arm = ARMS[controller]
    target = np.clip(arm.neutral, arm.lower, arm.upper - 0.25) + 0.2
    start = probe.sim_time + LEAD
    # Hold the neutral pose until `start`, then jump to the target in 1 ms.
    probe.send(controller, [(0.0, arm.neutral, None), (0.001, target, None)], start=start)
    jump = start + 0.001
    probe.spin_until_sim_time(jump + 1.2)
    before = probe.window(start - LEAD, start - 0.01)
    assert before, 'no joint_states before the step'
    np.testing.assert_allclose(joint_values(before, arm), np.tile(arm.neutral, (len(before), 1)),
                               atol=5e-3, err_msg='the arm moved before the step was due')
    after = probe.window(jump)
    times = np.array([state.stamp for state in after]) - jump
    errors = joint_values(after, arm) - target
    assert np.abs(errors[times > 0.6]).max() < 0.01
    assert errors.max() < 0.03
    assert outside_limits(after) <= LIMIT_TOLERANCE


def test_a_sine_trajectory_is_tracked_closely_with_the_feedforward(probe):
    """
    A 0.3 rad, 0.5 Hz sine (points every 10 ms with velocities) is tracked within 3 mrad.

    A position servo alone would lag 33 ms behind a ramp, 0.031 rad at the sine's peak speed of
    0.94 rad/s; with the default feedforward (the commanded velocity and the inverse dynamics
    of the cubic's accelerations) the measured positions stay within a tenth of that of the
    sine at their stamps after the first second (measured: 0.1 mrad). They never leave the
    limits.
    """
    amplitude, omega, duration = 0.3, 2 * math.pi * 0.5, 3.0
    inside = amplitude + 0.02  # clear of the servo targets' margin at the limits (15 mrad)
    centres = {
        controller: np.clip(arm.neutral, arm.lower + inside, arm.upper - inside)
        for controller, arm in ARMS.items()
    }
    # The sine starts at its trough with zero velocity: first go there.
    move_to(probe, {controller: centre - amplitude for controller, centre in centres.items()})
    start = probe.sim_time + LEAD
    times = np.arange(0.0, duration + 1e-9, 0.01)
    for controller, centre in centres.items():
        points = [
            (t, centre - amplitude * math.cos(omega * t),
             np.full(centre.size, amplitude * omega * math.sin(omega * t)))
            for t in times
        ]
        probe.send(controller, points, start=start)
    probe.spin_until_sim_time(start + duration)
    states = probe.window(start + 1.0, start + duration)
    # Sampled throughout (how often depends on how busy the host is): no gap of a quarter period.
    stamps = [start + 1.0] + [state.stamp for state in states] + [start + duration]
    assert len(states) >= 4 and max(np.diff(stamps)) < 0.25 * 2 * math.pi / omega, stamps
    errors = []
    for controller, arm in ARMS.items():
        reference = np.array([
            centres[controller] - amplitude * math.cos(omega * (state.stamp - start))
            for state in states
        ])
        errors.append(np.abs(joint_values(states, arm) - reference).max())
    lag_error = amplitude * omega * 2.0 / 60.0  # peak speed x tracking lag (wn 60, zeta 1)
    assert max(errors) < 0.1 * lag_error, errors
    assert outside_limits(probe.window(start)) <= LIMIT_TOLERANCE


def test_a_new_trajectory_replaces_the_old_one(probe):
    """A slow move is cut short by the next trajectory, which is followed from there."""
    go_to_neutral(probe)
    controller = 'right_arm_controller'
    arm = ARMS[controller]
    far = np.clip(arm.neutral + 0.6, arm.lower, arm.upper)
    start = probe.sim_time + LEAD
    probe.send(controller, [(0.0, arm.neutral, None), (4.0, far, None)], start=start)
    probe.spin_until_sim_time(start + 1.0)
    replaced = probe.sim_time  # the replacement arrives at or after this simulation time
    probe.send(controller, [(0.5, arm.neutral, None)])
    probe.spin_until_sim_time(replaced + 2.0)
    span = far - arm.neutral
    moving = np.abs(span) > 0.1
    progress = (joint_values(probe.window(start), arm) - arm.neutral)[:, moving] / span[moving]
    at_replacement = (joint_values(probe.window(replaced, replaced), arm) - arm.neutral)
    assert np.all(at_replacement[:, moving] / span[moving] > 0.15), 'the slow move was not on'
    assert np.max(progress) < 0.6, 'the slow move went on after it was replaced'
    np.testing.assert_allclose(probe.positions(controller), arm.neutral, atol=5e-3)


def rejected_counts(probe: Probe, controller: str) -> dict[str, str]:
    """Return the key values of a controller's last diagnostics status."""
    for message in reversed(probe.diagnostics):
        for status in message.status:
            if status.name.endswith(controller):
                return {value.key: value.value for value in status.values}
    return {}


def test_invalid_trajectories_are_rejected_and_the_robot_does_not_move(probe):
    """Unknown joint, missing joint, non-increasing times, empty: rejected, nothing moves."""
    go_to_neutral(probe)
    controller = 'left_arm_controller'
    arm = ARMS[controller]
    names = list(arm.joint_names)
    far = np.clip(arm.neutral + 0.5, arm.lower, arm.upper)
    before = rejected_counts(probe, controller)
    sent = probe.sim_time
    probe.send(controller, [(0.5, list(far) + [0.0], None)], names=names + ['yumi_joint_9_l'])
    probe.send(controller, [(0.5, far[:-1], None)], names=names[:-1])
    probe.send(controller, [(0.5, far, None), (0.5, arm.neutral, None)])
    probe.send(controller, [(0.5, far, None), (0.2, arm.neutral, None)])
    probe.send(controller, [])
    probe.send(controller, [(0.5, [], None)], names=[])
    probe.spin_until_sim_time(sent + 1.5)
    states = probe.window(sent)
    np.testing.assert_allclose(joint_values(states, arm), np.tile(arm.neutral, (len(states), 1)),
                               atol=5e-3)
    probe.spin_until(
        lambda: int(rejected_counts(probe, controller).get('rejected', 0))
        >= int(before.get('rejected', 0)) + 6,
    )
    after = rejected_counts(probe, controller)
    assert int(after['rejected']) - int(before.get('rejected', 0)) == 6
    for reason in ('unknown_joint', 'missing_joint', 'time_not_increasing', 'empty_points',
                   'empty_joint_names'):
        assert int(after[f'rejected_{reason}']) >= 1, after


def controller_reports(probe: Probe, controller: str, since: int) -> list[tuple[int, str, dict]]:
    """Return ``(level, message, values)`` of a controller's statuses after ``since`` messages."""
    return [
        (status.level[0], status.message, {value.key: value.value for value in status.values})
        for message in probe.diagnostics[since:] for status in message.status
        if status.name.endswith(controller)
    ]


def test_a_trajectory_arriving_after_its_first_point_is_joined_and_reported(probe):
    """
    A trajectory stamped 0.3 s before it is sent is joined and reported as a WARN.

    The WARN names plan_ahead and the figures carry the delay (the joined ones' too, and the
    wait of the trajectories in the node between reception and callback); the next report,
    with no new join (and no rejection), is OK again.
    """
    go_to_neutral(probe)
    controller = 'right_arm_controller'
    arm = ARMS[controller]
    far = np.clip(arm.neutral + 0.3, arm.lower, arm.upper)
    heard = len(probe.diagnostics)
    before = int(rejected_counts(probe, controller).get('joined', 0))
    probe.send(controller, [(0.1, far, None), (1.5, far, None)], start=probe.sim_time - 0.3)

    def reports_after_the_join() -> list[tuple[int, str, dict]]:
        reports = controller_reports(probe, controller, heard)
        first = next((i for i, (_, _, v) in enumerate(reports) if int(v['joined']) > before),
                     len(reports))
        return reports[first:]

    assert probe.spin_until(lambda: len(reports_after_the_join()) >= 2), 'no reports after it'
    (level, message, values), (next_level, _, next_values) = reports_after_the_join()[:2]
    assert int(values['joined']) == before + 1
    assert level == DiagnosticStatus.WARN[0]
    assert 'plan_ahead' in message
    assert float(values['delay_max [ms]']) >= 300.0
    assert float(values['delay_p50 [ms]']) <= float(values['delay_p99 [ms]'])
    assert float(values['joined_delay_max [ms]']) >= 300.0  # the join's own delay
    assert float(values['joined_delay_min [ms]']) <= float(values['joined_delay_max [ms]'])
    assert float(values['queued_max [ms]']) >= 0.0
    assert next_values['joined'] == values['joined']
    if next_values['rejected'] == '0':
        assert next_level == DiagnosticStatus.OK[0]


def test_the_node_stops_cleanly_on_sigint(sim_node, probe):
    """SIGINT ends the node with exit status 0 (within a bound for a busy host)."""
    process, log_path = sim_node
    process.send_signal(signal.SIGINT)
    try:
        status = process.wait(timeout=WAIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10.0)
        pytest.fail(f'sim_robot ignored SIGINT for {WAIT_TIMEOUT} s')
    log = Path(log_path).read_text(errors='replace')
    assert status == 0, log[-3000:]
    assert 'rejected trajectory (unknown_joint)' in log


def test_the_sim_command_stops_after_its_duration_having_written_frames(tmp_path):
    """
    ``run_sim`` with ``--duration 3 --render-dir D`` (TIAGo) exits 0 having written PNGs.

    How many frames fit in the 3 s depends on how fast the host renders, so at least one is
    asked for (the recorder finishes the frame it has when the command stops).
    """
    frames = tmp_path / 'frames'
    env = loopback_environment(DOMAIN_ID)
    env.setdefault('MUJOCO_GL', 'egl')
    script = (
        'import sys\n'
        'from pic_ros_tools.ros.sim_robot_node import run_sim\n'
        f"sys.exit(run_sim(['--robot', 'tiago', '--duration', '3', '--render-dir', "
        f"{str(frames)!r}, '--render-rate', '5', '--ros-args', '-r', "
        f"'__ns:={SIDE_NAMESPACE}']))\n"
    )
    process = subprocess.Popen(
        [sys.executable, '-c', script], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        output, _ = process.communicate(timeout=2 * WAIT_TIMEOUT)  # start-up on a busy host
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        try:
            output, _ = process.communicate(timeout=10.0)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate(timeout=10.0)
        pytest.fail(f'the sim command outlived its duration:\n{output.decode(errors="replace")}')
    log = output.decode(errors='replace')
    assert process.returncode == 0, log[-3000:]
    if 'no more frames' in log:
        pytest.skip(f'no offscreen OpenGL in this environment: {log[-500:]}')
    written = sorted(frames.glob('frame_*.png'))
    assert len(written) >= 1, log[-3000:]
    assert written[0].read_bytes().startswith(b'\x89PNG')


def test_the_sim_command_refuses_an_unknown_robot():
    """An unknown robot is an input error: one line on stderr, exit status 2."""
    env = loopback_environment(DOMAIN_ID)
    script = (
        'import sys\n'
        'from pic_ros_tools.ros.sim_robot_node import run_sim\n'
        "sys.exit(run_sim(['--robot', 'no_such_robot', '--duration', '1', '--ros-args', '-r', "
        f"'__ns:={SIDE_NAMESPACE}']))\n"
    )
    completed = subprocess.run(
        [sys.executable, '-c', script], env=env, capture_output=True, text=True, timeout=60.0,
        check=False,
    )
    assert completed.returncode == 2, completed.stderr
    assert 'no_such_robot' in completed.stderr


def test_on_the_wall_clock_a_stamp_and_the_simulated_time_map_one_to_one(make_node):
    """
    Without ``publish_clock``, the stamp of the simulation's present converts back to it exactly.

    joint_states are stamped with the system time the simulated state stands for, and a
    trajectory's stamp is placed on the simulation by the same offset between the system and the
    steady clock: the points of successive chunks that repeat one another fall on one simulated
    time, whatever each one waited for its callback.
    """
    from pic_ros_tools.ros.sim_robot_node import SimRobotNode

    node = make_node(SimRobotNode, {'robot': 'yumi', 'publish_clock': False})
    for _ in range(5):
        node._step_wall(node._wall_now())
        stamp = node._stamp()
        assert abs(node._to_sim_time(stamp) - node.sim.time) < 2e-9
        later = Time(sec=stamp.sec + 1, nanosec=stamp.nanosec)
        assert abs(node._to_sim_time(later) - (node.sim.time + 1.0)) < 2e-9


def _hold_message(node, controller: str, stamp, offset: float = 0.0) -> JointTrajectory:
    """Build a trajectory to the command plus ``offset`` [rad], points 10 ms and 0.2 s in."""
    from builtin_interfaces.msg import Duration

    message = JointTrajectory()
    message.header.stamp = stamp
    follower = node.sim.follower(controller)
    message.joint_names = list(follower.joint_names)
    positions = [float(value) + offset for value in node.sim.commanded(controller).positions]
    for nanoseconds in (10_000_000, 200_000_000):
        point = JointTrajectoryPoint()
        point.positions = positions
        point.velocities = [0.0] * len(positions)
        point.time_from_start = Duration(sec=0, nanosec=nanoseconds)
        message.points.append(point)
    return message


def test_on_its_own_clock_the_simulations_hold_up_is_not_counted_as_a_late_arrival(make_node):
    """
    While sim_robot's thread is held up, a trajectory stamped with its last clock is not late.

    The graph's clock stands still while the node publishes no ``/clock``: a trajectory stamped
    with the time last published and received 0.15 s later (the node busy meanwhile) arrives one
    ``rate`` period after that time, and is continued, not joined. One stamped 0.2 s before that
    time (a publisher late on its own) is still late and joined. The steady clock is the test's.
    """
    from pic_ros.ros.conversions import time_to_msg
    from pic_ros_tools.ros.sim_robot_node import SimRobotNode

    node = make_node(SimRobotNode, {'robot': 'yumi', 'publish_clock': True, 'rate': 200.0})
    steady = [node._wall_now()]
    node._wall_now = lambda: steady[0]
    node._on_tick()
    for _ in range(20):  # a second of simulation, published
        steady[0] += 0.05
        node._on_tick()
    published = node._published_time
    assert published == node.sim.time
    controller = 'right_arm_controller'
    stats = node.sim.follower(controller).stats
    steady[0] += 0.15  # held up: no tick, no /clock
    received = node._system.now().nanoseconds
    node._on_trajectory(controller, _hold_message(node, controller, node._stamp()), received)
    assert stats.accepted == 1 and stats.late == 0 and stats.joined == 0
    assert published < node.sim.time <= published + 1.0 / 200.0
    node._on_tick()  # the simulation catches up
    assert node.sim.time > published + 0.05
    stale = time_to_msg(node.sim.time - 0.1)
    steady[0] += 0.005
    node._on_trajectory(controller, _hold_message(node, controller, stale, 0.05),
                        node._system.now().nanoseconds)
    assert stats.accepted == 2 and stats.late == 1 and stats.joined == 1


def test_a_late_trajectory_says_how_long_after_its_stamp_it_was_published(make_node):
    """
    The publisher's ``source_timestamp`` tells a late publisher from a late delivery.

    A trajectory stamped 0.1 s before the simulation's present and published 0.03 s ago was
    published 0.07 s after its stamp, on the simulation's clock; without a source timestamp, or
    for a trajectory stamped 0 (start on arrival), nothing is said (NaN).
    """
    from pic_ros_tools.ros.sim_robot_node import SimRobotNode

    node = make_node(SimRobotNode, {'robot': 'yumi', 'publish_clock': True, 'rate': 200.0})
    steady = [node._wall_now()]
    node._wall_now = lambda: steady[0]
    node._on_tick()
    for _ in range(10):
        steady[0] += 0.05
        node._on_tick()
    present = node._sim_time_of(steady[0], node._wall_start)
    system = node._system.now()  # the system clock held still too: no time passes between reads
    node._system = types.SimpleNamespace(now=lambda: system)
    source = system.nanoseconds - 30_000_000
    sent = node._sent_after_stamp(source, present - 0.1)
    assert sent == pytest.approx(0.07, abs=2e-3)
    assert math.isnan(node._sent_after_stamp(0, present - 0.1))
    assert math.isnan(node._sent_after_stamp(source, 0.0))
