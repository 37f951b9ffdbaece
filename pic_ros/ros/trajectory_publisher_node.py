"""
trajectory_publisher: joint targets in, safe streamed trajectories for ros2_control out.

Subscribes ``joint_targets`` (``sensor_msgs/JointState`` from solver_node) and ``joint_states``
(where the robot is, to start from it). For every arm controller named in
``config/<robot>.yaml`` it publishes ``<controller>/joint_trajectory``
(``trajectory_msgs/JointTrajectory``, reliable QoS, ``header.stamp`` 0, one point at
``lead_time`` with positions and velocities, every controller joint named) — the form
joint_trajectory_controller accepts for streaming (set ``allow_nonzero_velocity_at_trajectory_end:
true`` on Jazzy and later).

Whatever the solver sends, each command is clamped to the URDF position limits and rate-limited to
the velocity limits and an acceleration limit (:mod:`pic_ros.motion.limiter`). Tracking loss
follows product §7 (:mod:`pic_ros.motion.tracking_loss`): no valid target for ``hold_timeout`` ->
hold; after ``neutral_timeout`` -> back to the neutral pose; targets again -> blend back in.

Commands go out at ``rate`` from a timer and at once on each new target (the timer skips an arm
that a target stepped less than half a period ago), so a tracker slower than ``rate`` still gives
a steady stream. Nothing is sent before the first valid target, and an arm that stands still
outside tracking is sent its final command once, then nothing until it moves again. Time is the
node's clock (``use_sim_time`` for replays); if it goes back (a looping replay), tracking starts
over from the current command.
"""

from __future__ import annotations

from dataclasses import dataclass
import threading
from typing import Any, Sequence

from diagnostic_msgs.msg import DiagnosticStatus
import numpy as np
from pic_ros.exceptions import PicRosError, SkeletonError
from pic_ros.motion.limiter import JointLimiter, MotionLimits
from pic_ros.motion.streaming import stream_chunk
from pic_ros.motion.tracking_loss import TrackingConfig, TrackingState, TrackingSupervisor
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.robot import load_robot
from pic_ros.ros.conversions import joint_state_from_msg, status_to_msg, trajectory_to_msg
from pic_ros.ros.diagnostics import DiagnosticsReporter
from pic_ros.ros.parameters import declare_parameters, ParameterSpec, validation_callback, Values
from pic_ros.ros.runner import run_node
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

PARAMETERS = (
    ParameterSpec(
        'robot', 'baxter',
        'Robot name (config/<robot>.yaml + its URDF) or a path to a robot YAML', read_only=True,
    ),
    ParameterSpec(
        'hold_timeout', 0.25, 'Time without a valid target before holding position [s]',
        low=0.001, high=60.0,
    ),
    ParameterSpec(
        'neutral_timeout', 3.0,
        'Time without a valid target before returning to the neutral pose [s]', low=0.001,
        high=3600.0,
    ),
    ParameterSpec(
        'blend_time', 1.0, 'Speed ramp when the person is found again [s]', low=0.0, high=60.0
    ),
    ParameterSpec(
        'neutral_speed_scale', 0.5, 'Speed of the return to neutral, fraction of the limits',
        low=0.01, high=1.0,
    ),
    ParameterSpec(
        'velocity_scale', 1.0, 'Fraction of the URDF velocity limits the commands may use',
        low=0.01, high=1.0,
    ),
    ParameterSpec(
        'acceleration_scale', 3.0,
        'Acceleration limit as velocity limit x this [1/s] (URDFs give no acceleration limits)',
        low=0.1, high=100.0,
    ),
    ParameterSpec(
        'lead_time', 0.05, 'time_from_start of the streamed point [s]', low=0.001, high=1.0
    ),
    ParameterSpec(
        'rate', 50.0,
        'Rate of the commands sent between tracker frames slower than it, and of the hold / '
        'neutral motions [Hz]', low=1.0, high=1000.0,
    ),
    ParameterSpec(
        'wait_for_joint_states', True,
        'Publish only once joint_states gave every arm joint (start from where the robot is); '
        'false starts from the neutral pose', read_only=True,
    ),
    ParameterSpec(
        'diagnostics_period', 1.0, 'Seconds between reports on /diagnostics [s]', low=0.1,
        high=60.0,
    ),
)


@dataclass
class _Arm:
    """Command state of one arm controller."""

    model: ArmModel
    publisher: Publisher
    limiter: JointLimiter | None
    supervisor: TrackingSupervisor
    last_step: float | None = None
    published: int = 0
    targets: int = 0
    rejected: int = 0
    clamped: int = 0
    idle: bool = False


class TrajectoryPublisherNode(Node):
    """
    Limit, supervise and stream joint commands to the arm controllers of one robot.

    :param subscribe: Subscribe ``joint_targets`` (the one-process teleop hands them over
        directly instead).
    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    """

    def __init__(self, *, subscribe: bool = True, **kwargs: Any) -> None:
        super().__init__('trajectory_publisher', **kwargs)
        self._values: Values = declare_parameters(self, PARAMETERS)
        self._lock = threading.Lock()
        self.robot = load_robot(str(self._values['robot']))
        tracking = self._tracking_config(self._values)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._arms: dict[str, _Arm] = {}
        self._last_now: float | None = None
        for name, model in self.robot.arms.items():
            publisher = self.create_publisher(
                JointTrajectory, f'{model.spec.controller}/joint_trajectory', reliable
            )
            self._arms[name] = _Arm(
                model=model,
                publisher=publisher,
                limiter=None,
                supervisor=TrackingSupervisor(model.neutral, tracking),
            )
            if not self._values['wait_for_joint_states']:
                self._arms[name].limiter = self._make_limiter(model, model.neutral, self._values)
        self.create_subscription(
            JointState, 'joint_states', self._on_joint_states, qos_profile_sensor_data
        )
        if subscribe:
            self.create_subscription(JointState, 'joint_targets', self._on_targets, reliable)
        self._timer = self.create_timer(1.0 / float(self._values['rate']), self._on_timer)
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        topics = ', '.join(arm.publisher.topic_name for arm in self._arms.values())
        self.get_logger().info(f'{self.robot.name}: streaming to {topics}')

    @staticmethod
    def _tracking_config(values: Values) -> TrackingConfig:
        return TrackingConfig(
            hold_timeout=float(values['hold_timeout']),
            neutral_timeout=float(values['neutral_timeout']),
            blend_time=float(values['blend_time']),
            neutral_speed_scale=float(values['neutral_speed_scale']),
        )

    @staticmethod
    def _make_limiter(model: ArmModel, position: Any, values: Values) -> JointLimiter:
        limits = MotionLimits.from_arm(
            model,
            float(values['acceleration_scale']),
            velocity_scale=float(values['velocity_scale']),
        )
        return JointLimiter(limits, limits.clamp(position))

    def _apply(self, values: Values) -> None:
        tracking = self._tracking_config(values)
        rescale = any(
            values[key] != self._values[key] for key in ('acceleration_scale', 'velocity_scale')
        )
        with self._lock:
            limiters: dict[str, JointLimiter] = {}
            for name, arm in self._arms.items():
                if rescale and arm.limiter is not None:
                    limiter = self._make_limiter(arm.model, arm.limiter.position, values)
                    limiter.reset(arm.limiter.position, arm.limiter.velocity)
                    limiters[name] = limiter
            # Everything is built: nothing below can refuse the change half-way.
            for name, arm in self._arms.items():
                arm.supervisor.config = tracking  # keeps the state, the last target, a blend
                arm.limiter = limiters.get(name, arm.limiter)
        if values['rate'] != self._values['rate']:
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(1.0 / float(values['rate']), self._on_timer)
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _check_clock(self, now: float) -> None:
        """Start tracking over if the clock went back (a looping replay with use_sim_time)."""
        if self._last_now is not None and now < self._last_now:
            self.get_logger().warning(
                f'clock went back by {self._last_now - now:.3f} s: tracking starts over'
            )
            for arm in self._arms.values():
                arm.supervisor.reset()
                arm.last_step = None
                arm.idle = False
                if arm.limiter is not None:
                    arm.limiter.reset(arm.limiter.position)  # the controller has stopped there
        self._last_now = now

    def _on_joint_states(self, message: JointState) -> None:
        try:
            _, positions = joint_state_from_msg(message)
        except SkeletonError:
            return
        with self._lock:
            for arm in self._arms.values():
                if arm.limiter is not None:
                    continue
                names = arm.model.joint_names
                if all(name in positions for name in names):
                    arm.limiter = self._make_limiter(
                        arm.model, [positions[name] for name in names], self._values
                    )
                    self.get_logger().info(f'{arm.model.name}: starting from joint_states')

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
            self._check_clock(now)
            for arm in self._arms.values():
                joint_names = arm.model.joint_names
                given = [name in values for name in joint_names]
                if not any(given):
                    continue  # targets for another arm
                arm.targets += 1
                if not all(given):  # on the topic, a non-finite value is left out
                    arm.rejected += 1
                    continue
                status = arm.supervisor.on_target(now, [values[name] for name in joint_names])
                if status.rejected:
                    arm.rejected += 1
                    continue
                target = arm.supervisor.last_target
                if np.any((target < arm.model.lower) | (target > arm.model.upper)):
                    arm.clamped += 1  # the limiter clamps it
                self._step(arm, now)

    def _on_timer(self) -> None:
        period = 1.0 / float(self._values['rate'])
        with self._lock:
            now = self._now()
            self._check_clock(now)
            for arm in self._arms.values():
                if arm.last_step is not None and now - arm.last_step < 0.5 * period:
                    continue  # a target has just stepped this arm
                self._step(arm, now)

    def _step(self, arm: _Arm, now: float) -> None:
        if arm.limiter is None:
            return
        guidance = arm.supervisor.step(now, arm.limiter.position)
        if guidance.state is TrackingState.WAITING:
            return  # no command before the first target
        dt = 0.0 if arm.last_step is None else now - arm.last_step
        arm.last_step = now
        step = arm.limiter.step(guidance.reference, dt, guidance.speed_scale)
        moving = bool(np.any(step.velocity != 0.0))
        if not moving and arm.idle and guidance.state is not TrackingState.TRACKING:
            return
        arm.idle = not moving
        try:
            chunk = stream_chunk(
                arm.model.joint_names, step.position, step.velocity,
                float(self._values['lead_time']),
            )
        except PicRosError as err:
            self.get_logger().error(f'{arm.model.name}: not publishing: {err}')
            return
        arm.publisher.publish(trajectory_to_msg(chunk))
        arm.published += 1

    def _statuses(self) -> list[DiagnosticStatus]:
        statuses = []
        with self._lock:
            for arm in self._arms.values():
                started = arm.limiter is not None
                values: dict[str, object] = {
                    'controller': arm.model.spec.controller,
                    'state': arm.supervisor.state.value if started else 'waiting_for_joint_states',
                    'commands_published': arm.published,
                    'targets_received': arm.targets,
                    'targets_rejected': arm.rejected,
                    'targets_clamped_to_limits': arm.clamped,
                }
                level = DiagnosticStatus.OK if started else DiagnosticStatus.WARN
                summary = values['state']
                name = f'pic_ros: {self.get_fully_qualified_name()} {arm.model.name}'
                statuses.append(status_to_msg(name, self.robot.name, level, str(summary), values))
        return statuses


def main(args: list[str] | None = None) -> None:
    """
    Run the node until shutdown (``ros2 run pic_ros trajectory_publisher``).

    :param args: Command-line arguments for rclpy (``--ros-args ...``).
    """
    run_node(TrajectoryPublisherNode, args)


if __name__ == '__main__':
    main()
