"""
trajectory_publisher: joint targets in, safe streamed trajectories for ros2_control out.

Subscribes ``joint_targets`` (``sensor_msgs/JointState`` from solver_node) and ``joint_states``
(where the robot is, to start from it). For every controller named in ``config/<robot>.yaml``
(arms, head, grippers: :attr:`~pic_ros.robot.robot.Robot.groups`) it publishes
``<controller>/joint_trajectory`` (``trajectory_msgs/JointTrajectory``, reliable QoS,
``header.stamp`` the time the points were planned for on this node's clock, or 0 with
``stamp_trajectories`` false; points up to ``lead_time`` with positions and velocities, every
controller joint named) -- the form joint_trajectory_controller accepts for streaming (set
``allow_nonzero_velocity_at_trajectory_end: true`` on Jazzy and later).

What is sent is decided by one :class:`~pic_ros.motion.commander.ArmCommander` per group (position,
velocity and acceleration limits; hold, neutral and re-engagement on tracking loss; pacing; clock
jumps); this node only wires it: it times the targets on its own clock when they arrive
(``use_sim_time`` for replays), steps every arm on each target and from a timer at ``rate``, and
publishes the chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
import threading
from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus
from pic_ros.exceptions import PicRosError, SkeletonError
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.robot.robot import load_robot
from pic_ros.ros.conversions import joint_state_from_msg, status_to_msg, trajectory_to_msg
from pic_ros.ros.diagnostics import DiagnosticsReporter
from pic_ros.ros.parameters import declare_parameters, validation_callback, Values
from pic_ros.ros.runner import run_node
from pic_ros.ros.schema import TRAJECTORY_PUBLISHER
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

PARAMETERS = TRAJECTORY_PUBLISHER
"""The node's parameters (:data:`pic_ros.ros.schema.TRAJECTORY_PUBLISHER`)."""


class TrajectoryPublisherNode(Node):
    """
    Stream the commands of every arm controller of one robot.

    :param subscribe: Subscribe ``joint_targets`` (the one-process teleop hands them over
        directly instead).
    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    """

    def __init__(self, *, subscribe: bool = True, **kwargs: Any) -> None:
        super().__init__('trajectory_publisher', **kwargs)
        self._values: Values = declare_parameters(self, PARAMETERS)
        self._lock = threading.Lock()
        self.robot = load_robot(str(self._values['robot']))
        config = CommanderConfig.from_parameters(self._values)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._groups: dict[str, tuple[ArmCommander, Publisher]] = {}
        for name, model in self.robot.groups.items():
            publisher = self.create_publisher(
                JointTrajectory, f'{model.controller}/joint_trajectory', reliable
            )
            self._groups[name] = (ArmCommander(model, config, engaged=True), publisher)
        self._clock_restarts = 0
        self.create_subscription(
            JointState, 'joint_states', self._on_joint_states, qos_profile_sensor_data
        )
        if subscribe:
            self.create_subscription(JointState, 'joint_targets', self._on_targets, reliable)
        self._timer = self.create_timer(config.period, self._on_timer)
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        topics = ', '.join(publisher.topic_name for _, publisher in self._groups.values())
        self.get_logger().info(f'{self.robot.name}: streaming to {topics}')

    def _apply(self, values: Values) -> None:
        config = CommanderConfig.from_parameters(values)  # refuses before anything changes
        with self._lock:
            for commander, _ in self._groups.values():
                commander.config = config  # keeps the state, the command and any blend
        if values['rate'] != self._values['rate']:
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(config.period, self._on_timer)
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_joint_states(self, message: JointState) -> None:
        try:
            _, positions = joint_state_from_msg(message)
        except SkeletonError:
            return
        with self._lock:
            for arm, (commander, _) in self._groups.items():
                names = commander.joint_names
                if not commander.started and all(name in positions for name in names):
                    commander.start_from([positions[name] for name in names])
                    self.get_logger().info(f'{arm}: starting from joint_states')

    def _on_targets(self, message: JointState) -> None:
        try:
            _, positions = joint_state_from_msg(message)
        except SkeletonError as err:
            self.get_logger().warning(f'dropping joint targets: {err}', throttle_duration_sec=2.0)
            return
        self.handle_targets(0.0, list(positions), list(positions.values()))

    def handle_targets(
        self, stamp: float, names: Sequence[str], positions: Sequence[float]
    ) -> None:
        """
        Take joint targets and publish the next command of every arm they cover.

        :param stamp: Capture stamp of the skeleton [s] (informative; the node times the targets
            on its own clock when they arrive).
        :param names: Joint names.
        :param positions: Target positions [rad] or [m], same order.
        """
        del stamp  # The supervisor needs arrival times on this node's clock.
        values = dict(zip(names, positions))
        with self._lock:  # the clock is read under the lock: times in the order of the steps
            now = self._now()
            for arm, (commander, publisher) in self._groups.items():
                if commander.covers(values) and not commander.on_target(now, values).rejected:
                    self._step(arm, commander, publisher, now)

    def _on_timer(self) -> None:
        with self._lock:
            now = self._now()
            for arm, (commander, publisher) in self._groups.items():
                self._step(arm, commander, publisher, now)

    def _step(
        self, arm: str, commander: ArmCommander, publisher: Publisher, now: float
    ) -> None:
        try:
            chunk = commander.step(now)
        except PicRosError as err:
            self.get_logger().error(f'{arm}: not publishing: {err}')
            return
        restarts = sum(item.clock_restarts for item, _ in self._groups.values())
        if restarts != self._clock_restarts:
            self._clock_restarts = restarts
            self.get_logger().warning('the clock went back: tracking starts over')
        if chunk is not None:
            publisher.publish(trajectory_to_msg(chunk))

    def _statuses(self) -> list[DiagnosticStatus]:
        statuses = []
        with self._lock:
            for name, (commander, _publisher) in self._groups.items():
                model = self.robot.groups[name]
                started = commander.started
                values: dict[str, object] = {
                    'controller': model.controller,
                    'state': commander.state.value if started else 'waiting_for_joint_states',
                    'commands_published': commander.published,
                    'targets_received': commander.targets,
                    'targets_rejected': commander.rejected,
                    'targets_clamped_to_limits': commander.clamped,
                }
                level = DiagnosticStatus.OK if started else DiagnosticStatus.WARN
                summary = str(values['state'])
                title = f'pic_ros: {self.get_fully_qualified_name()} {model.name}'
                statuses.append(status_to_msg(title, self.robot.name, level, summary, values))
        return statuses


def main(args: list[str] | None = None) -> None:
    """
    Run the node until shutdown (``ros2 run pic_ros trajectory_publisher [options]``).

    :param args: The command line, program name first (default: ``sys.argv``): an option per
        parameter (``--help`` lists them), then ``--ros-args ...``.
    """
    run_node(
        TrajectoryPublisherNode, PARAMETERS, args, prog='trajectory_publisher',
        description='Joint targets in, limited joint trajectories out to the arm controllers.',
    )


if __name__ == '__main__':
    main()
