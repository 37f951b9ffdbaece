"""
sim_robot: a simulated robot that takes trajectories like ros2_control and publishes joint_states.

MuJoCo physics of ``urdf/<robot>.urdf`` (:class:`~pic_ros_tools.sim.mujoco_robot.SimRobot`). For
every arm controller named in ``config/<robot>.yaml`` the node subscribes
``<controller>/joint_trajectory`` (``trajectory_msgs/JointTrajectory``, reliable like JTC's
SystemDefaultsQoS) and follows the trajectories the way joint_trajectory_controller does
(:mod:`pic_ros_tools.sim.trajectory`: stamp 0 = now, a new trajectory replaces the old one, linear
/ cubic / quintic interpolation, joints by name, JTC's validation). It publishes ``joint_states``
(``sensor_msgs/JointState``: every movable URDF joint, positions and velocities, stamped) at
``rate``; with ``publish_clock`` it also publishes the simulation time on ``/clock`` and stamps
``joint_states`` with it (for ``use_sim_time`` graphs); without, ``joint_states`` carry the
system time their state stands for, and a trajectory's stamp is placed on the simulation by the
same offset between the system and the steady clock (:meth:`SimRobotNode._to_sim_time`). It
publishes the robot's URDF (the file it simulates) once on ``robot_description``
(``std_msgs/String``, latched: reliable, transient local, depth 1, as robot_state_publisher
does), so that RViz's RobotModel and Foxglove find the model without a ROS install; TF from
``joint_states`` needs robot_state_publisher (``tf2_msgs`` has no PyPI wheel), which the launch
files start when it is installed.

The simulation is advanced by a wall-clock (steady) timer, so it runs in real time whatever
``use_sim_time`` says; when the host cannot keep up, simulated time slips (reported) rather than
the node falling behind. A rejected trajectory is logged with its reason (throttled per controller
and reason) and changes nothing. ``/diagnostics`` carries, per controller, the accepted, rejected
(by reason) and clamped counts, the late and joined counts, the delay of the stamped trajectories
(arrival - ``header.stamp``: p50 and p99 of the latest ones, and the largest), the trajectories
taken whose reference as followed breaks the joints' velocity, acceleration or jerk limits (or
jumps: ``segment_violations``, and the peak share of a limit) and the tracking
error (commanded - measured, now and the largest since the previous report); for the simulation,
the real-time factor of the physics, the joint_states rate and the frame recorder's figures. A
controller's status is WARN after a rejection and in a report with a new join or a new
trajectory beyond a limit: a streamed chunk is joined rather than continued when it arrives
more than the trajectory publisher's
``plan_ahead`` after the step that made it (its stamp is up to one point spacing, 10 ms, before
that step), which the delay tells; each join is logged (throttled) with its delay, how long after
its stamp it was published (the message info's ``source_timestamp``: a publisher held up before
sending, or a delivery held up after) and the shares of the velocity, acceleration and jerk
limits it reaches, and ``/diagnostics`` gives the
smallest and largest delay of the joined ones and those peaks (``joined_*``). A trajectory
continued, not joined, that still breaks a limit as followed is logged (throttled) the same way,
with the segment where it does.

A trajectory reaches its simulated controller when the middleware received it (the message
info's ``received_timestamp``; the physics is first stepped to that time), not when this node's
one thread, which also steps the physics and publishes, gets to its callback: JTC takes its
topic in the controller manager's executor thread, apart from the control loop. So before each
physics update (whose timer the executor runs before the subscriptions) the trajectories
waiting in the subscriptions' queues are taken, in the order of their reception. The longest
wait in this process since the previous report is on ``/diagnostics`` (``queued_max``); a
reception time the middleware does not give, or more than :data:`MAX_QUEUED` back, is not used
(the trajectory arrives when its callback runs). On its own ``/clock`` (``publish_clock``) a
trajectory arrives no later than one ``rate`` period after the time last published
(:meth:`SimRobotNode._step_to_arrival`): while this node is held up the other nodes' clocks stand
still, so its own hold-up is not counted as the publisher's delay.

A robot file with ``mobile_base`` (:mod:`pic_ros.robot.mobile_base`) adds the base's interface of
the real robot: the node subscribes its velocity command topic (``geometry_msgs/Twist``, a relative
name: TIAGo's ``mobile_base_controller/cmd_vel_unstamped``) and publishes ``nav_msgs/Odometry`` on
its odometry topic (TIAGo's ``mobile_base_controller/odom``; frame the file's ``odom_frame``, child
its ``base_frame``; pose and velocity, no covariance; no TF is broadcast). With
``force_torque_sensors`` it publishes each wrist's wrench (``geometry_msgs/WrenchStamped``, frame
the sensor link, gravity of the hand compensated: :mod:`pic_ros_tools.sim.mujoco_robot`) on the
sensor's topic (TIAGo's ``ft_sensor_controller/wrench``). Both at ``rate``, like joint_states.

``sim/push`` (``geometry_msgs/WrenchStamped``) pushes a link: ``header.frame_id`` names it (a body
of the model, e.g. TIAGo's ``wrist_ft_link``, which carries the hand), the wrench is in that
link's frame and acts at its origin, for :data:`PUSH_HOLD` after each message; a message replaces
the previous one on that link (publish continuously to push longer).

With ``render_dir`` set, PNG frames of the robot are written there at ``render_rate`` from a
background thread (offscreen OpenGL: ``MUJOCO_GL=egl`` or ``osmesa``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import math
import sys
from typing import Any, TYPE_CHECKING

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import Twist, WrenchStamped
from nav_msgs.msg import Odometry
from pic_ros.exceptions import ConfigError
from pic_ros.motion.streaming import SegmentPeaks
from pic_ros.ros.conversions import (
    joint_state_to_cdr,
    status_to_msg,
    time_from_msg,
    time_to_msg,
)
from pic_ros.ros.diagnostics import DiagnosticsReporter, RateMeter
from pic_ros.ros.parameters import (
    apply_realtime_priority,
    declare_parameters,
    validation_callback,
    Values,
)
from pic_ros.ros.qos import LATCHED
from pic_ros.ros.runner import (
    node_parser,
    parameter_overrides,
    parse_command_line,
    run_nodes,
    spin_until_shutdown,
    START_FAILED,
)
from pic_ros_tools.ros.background_spin import spin_for
from pic_ros_tools.ros.schema import SIM_ROBOT
from pic_ros_tools.sim.config import SimConfig
from pic_ros_tools.sim.frame_recorder import FrameRecorder
from pic_ros_tools.sim.mujoco_robot import SimRobot
from pic_ros_tools.sim.trajectory import Trajectory, TrajectoryStatus, Waypoint
from rclpy.clock import Clock, ClockType
import rclpy.exceptions
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from rosgraph_msgs.msg import Clock as ClockMessage
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

if TYPE_CHECKING:
    from rclpy.subscription import MessageInfo

MESSAGE_INFO = hasattr(Subscription, 'CallbackType')
"""Whether rclpy gives a subscription callback the message info (Iron and later; not Humble's,
where a trajectory's reception is not known and it arrives when it is taken)."""

_INVALID_HANDLE: type[Exception] = getattr(rclpy.exceptions, 'InvalidHandle', RuntimeError)

PARAMETERS = SIM_ROBOT
"""The node's parameters (:data:`pic_ros_tools.ros.schema.SIM_ROBOT`)."""

MAX_CATCH_UP = 0.1
"""Most simulated time one update may step [s]; a longer stall is dropped (time slips)."""

ARRIVAL_TICKS = 1.0
"""On the simulation's clock a trajectory arrives at most this many ``rate`` periods after the
time last published on ``/clock`` (:meth:`SimRobotNode._step_to_arrival`)."""

PUSH_HOLD = 0.1
"""How long one ``sim/push`` message pushes [s] (simulation time)."""

CLOCK_STEP = 0.001
"""
A change of the system clock against the steady clock taken as a step of it [s]: the offset that
turns wall-clock stamps into simulation time is measured again
(:meth:`SimRobotNode._to_sim_time`).
"""

MAX_QUEUED = 1.0
"""Longest wait of a trajectory between its reception and its callback taken as such [s]: a
reception time further back (another clock's, or none) is not used and the trajectory arrives
when its callback runs."""

LOG_THROTTLE = 2.0
"""Shortest interval between two logs of the same rejection reason of a controller [s]."""


def trajectory_from_msg(message: JointTrajectory, stamp: float) -> Trajectory:
    """
    Convert a JointTrajectory to the follower's trajectory (values are checked by the follower).

    :param message: The message.
    :param stamp: Start time on the simulation clock [s] (0 = start now).
    :return: The trajectory.
    """
    points = [
        Waypoint(
            time_from_start=float(point.time_from_start.sec)
            + float(point.time_from_start.nanosec) * 1e-9,
            positions=list(point.positions),
            velocities=list(point.velocities),
            accelerations=list(point.accelerations),
            effort=list(point.effort),
        )
        for point in message.points
    ]
    return Trajectory(joint_names=list(message.joint_names), points=points, stamp=stamp)


def _milliseconds(value: float) -> str:
    """Format a time in [ms] for a diagnostic value (``n/a`` for NaN: nothing measured yet)."""
    return f'{value:.1f}' if math.isfinite(value) else 'n/a'


class _ControllerReport:
    """Tracking error, joins and log throttling of one controller."""

    def __init__(self) -> None:
        self.max_error = 0.0
        self.last_error = 0.0
        self.joined = 0  # the follower's joined count at the previous report
        self.segment_violations = 0  # and its count of trajectories beyond a limit
        self.queued_max = 0.0  # longest wait of a trajectory in this process since the report
        # per kind of seam logged (:meth:`SimRobotNode._log_seam`): wall-clock time of the last
        # log, and how many were left out since
        self.seam_logged: dict[str, float] = {}
        self.seams_suppressed: dict[str, int] = {}
        self.last_logged: dict[TrajectoryStatus, float] = {}
        self.suppressed: dict[TrajectoryStatus, int] = {}


class SimRobotNode(Node):
    """
    Simulate one robot, follow its controllers' trajectories, publish its joint states.

    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    :raises ConfigError: If the robot or the settings are invalid.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('sim_robot', **kwargs)
        self._recorder: FrameRecorder | None = None  # first: destroy_node needs it
        try:
            self._values: Values = declare_parameters(self, PARAMETERS)
            self.scheduling = apply_realtime_priority(self, self._values)
            self.sim = SimRobot(
                str(self._values['robot']), SimConfig.from_parameters(self._values)
            )
        except BaseException:
            self.destroy_node()  # a node that failed to start leaves nothing behind for rclpy
            raise
        self._steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._system = Clock(clock_type=ClockType.SYSTEM_TIME)  # the middleware's timestamps
        self._wall_start: float | None = None
        self._sim_origin = self.sim.time
        self._slipped = 0.0
        self._clock_offset: int | None = None  # system minus steady clock [ns] (_to_sim_time)
        self._publish_clock = bool(self._values['publish_clock'])
        self._names = tuple(self.sim.joint_names)
        self._reports = {controller: _ControllerReport() for controller in self.sim.controllers}
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._trajectory_subscriptions: dict[str, Any] = {}
        for controller in self.sim.controllers:
            self._trajectory_subscriptions[controller] = self.create_subscription(
                JointTrajectory, f'{controller}/joint_trajectory',
                self._trajectory_callback(controller), reliable,
            )
        self._joint_states = self.create_publisher(JointState, 'joint_states', reliable)
        self._description = self.create_publisher(String, 'robot_description', LATCHED)
        self._description.publish(
            String(data=self.sim.robot.urdf_file.read_text(encoding='utf-8'))
        )
        base = self.sim.mobile_base
        self._odometry: Any = None
        if base is not None:
            self.create_subscription(Twist, base.command_topic, self._on_base_command, reliable)
            self._odometry = self.create_publisher(Odometry, base.odometry_topic, reliable)
        self._wrenches = {
            arm: self.create_publisher(WrenchStamped, sensor.topic, reliable)
            for arm, sensor in self.sim.robot.spec.force_torque_sensors.items()
        }
        self.create_subscription(WrenchStamped, 'sim/push', self._on_push, reliable)
        self.pushes = 0
        self.base_commands = 0
        self._clock_publisher = (
            self.create_publisher(ClockMessage, '/clock', QoSProfile(depth=10))
            if self._publish_clock else None
        )
        self._published = RateMeter()
        self._published_time: float | None = None  # simulation time of the last joint_states
        self._render_timer: Any = None
        if self._values['render_dir']:
            self._recorder = FrameRecorder(
                self.sim, str(self._values['render_dir']), int(self._values['render_width']),
                int(self._values['render_height']),
            )
            self._render_timer = self.create_timer(
                1.0 / float(self._values['render_rate']), self._on_render_tick,
                clock=self._steady,
            )
        self._timer = self.create_timer(
            1.0 / float(self._values['rate']), self._on_tick, clock=self._steady
        )
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        topics = ', '.join(f'{c}/joint_trajectory' for c in self.sim.controllers)
        self.get_logger().info(
            f'{self.sim.robot.name}: following {topics}; publishing joint_states at '
            f'{self._values["rate"]:g} Hz (servo lag {self.sim.config.tracking_lag * 1e3:.0f} ms)'
        )
        if base is not None:
            self.get_logger().info(
                f'mobile base: commands on {base.command_topic}, odometry on '
                f'{base.odometry_topic}'
            )

    def _wall_now(self) -> float:
        return self._steady.now().nanoseconds * 1e-9

    def _apply(self, values: Values) -> None:
        if values['rate'] != self._values['rate']:
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(
                1.0 / float(values['rate']), self._on_tick, clock=self._steady
            )
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))

    def _advance(self, taken: tuple[str, JointTrajectory, int, int] | None = None) -> None:
        """
        Step the simulation to now, first taking the trajectories received meanwhile.

        Every trajectory waiting in a subscription's queue is taken, in the order of reception
        over all controllers, each once the physics reached its reception: a trajectory waits
        behind this node's own work (the physics, the publishing: the executor runs the timer
        before the subscriptions) no more than it would in JTC's executor thread.

        :param taken: A trajectory the executor took already, with its controller, its
            ``received_timestamp`` and its ``source_timestamp`` [ns], or None.
        """
        pending: list[tuple[float, int, str, JointTrajectory, int, int]] = []
        if taken is not None:
            reception = self._reception(taken[2])
            pending.append((math.inf if reception is None else reception, 0, *taken))
        for controller, subscription in self._trajectory_subscriptions.items():
            while True:
                try:
                    with subscription.handle:
                        waiting = subscription.handle.take_message(
                            subscription.msg_type, subscription.raw
                        )
                except _INVALID_HANDLE:  # destroyed: shutting down
                    break
                if waiting is None:
                    break
                message, info = waiting if isinstance(waiting, tuple) else (waiting, {})
                received = int(info.get('received_timestamp', 0))
                reception = self._reception(received)
                order = math.inf if reception is None else reception
                pending.append((
                    order, len(pending), controller, message, received,
                    int(info.get('source_timestamp', 0)),
                ))
        for _, _, controller, message, received, source in sorted(pending):
            self._on_trajectory(controller, message, received, source)
        self._step_wall(self._wall_now())

    def _step_wall(self, now: float) -> None:
        """
        Step the simulation to a steady-clock time, as the time since the first update.

        :param now: The steady clock's time to reach [s] (minus slips); a time the simulation
            has passed already does nothing.
        """
        if self._wall_start is None:
            self._wall_start = now
        target = self._sim_time_of(now, self._wall_start)
        behind = target - self.sim.time
        if behind > MAX_CATCH_UP:
            self._slipped += behind - MAX_CATCH_UP
            target = self.sim.time + MAX_CATCH_UP
        self.sim.step_to(target)

    def _step_to_arrival(self, reception: float) -> None:
        """
        Step the simulation to a trajectory's arrival, from its reception on the steady clock.

        On its own ``/clock`` the graph's time is the simulation's as last published: while this
        node's thread is held up (its own physics catching up, a starved process), the other
        nodes' clocks stand still, and what they stamp meanwhile is stamped with that time. A
        trajectory received then arrives, on that clock, no later than one ``rate`` period after
        the time last published (:data:`ARRIVAL_TICKS`), not at the steady time of its reception,
        which would count this node's own hold-up as the publisher's delay and join the
        trajectory (a stand-in for ros2_control, whose controller manager is not held up by the
        simulation). On the wall clock the reception is the arrival.

        :param reception: When the trajectory was received (or taken), steady clock [s].
        """
        published = self._published_time
        if self._publish_clock and published is not None and self._wall_start is not None:
            ceiling = published + ARRIVAL_TICKS / float(self._values['rate'])
            if self._sim_time_of(reception, self._wall_start) > ceiling:
                self.sim.step_to(ceiling)
                return
        self._step_wall(reception)

    def _sim_time_of(self, steady: float, start: float) -> float:
        """
        Return the simulation time a steady-clock time stands for (slips taken out).

        :param steady: The steady clock's time [s].
        :param start: The steady time of the first update (or, before it, ``steady`` itself).
        :return: The simulation time [s].
        """
        return self._sim_origin + steady - start - self._slipped

    def _stamp(self) -> Time:
        """
        Return the stamp of the simulation's present.

        Its time, or on the wall clock the system time it stands for
        (:meth:`_clock_offset_ns`), not the time of publishing.
        """
        if self._publish_clock:
            return time_to_msg(self.sim.time)
        if self._wall_start is None:
            return self.get_clock().now().to_msg()
        steady = self.sim.time - self._sim_origin + self._wall_start + self._slipped
        nanoseconds = round(steady * 1e9) + self._clock_offset_ns()
        return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)

    def _clock_offset_ns(self) -> int:
        """
        Return the system clock minus the steady clock the simulation follows [ns].

        The system clock is read between two readings of the steady clock, and a reading is
        used only when those are less than :data:`CLOCK_STEP` apart (not preempted between
        them); the offset is kept until a reading differs by more than that (the system clock
        was stepped). Measured anew at each use, it would move by microseconds to
        milliseconds, and the points a chunk repeats would no longer fall on the ones the
        controller follows.
        """
        for _ in range(10):
            before = self._wall_now()
            system = self._system.now().nanoseconds
            after = self._wall_now()
            offset = system - round((before + after) * 0.5e9)
            if after - before < CLOCK_STEP:
                known = self._clock_offset
                if known is None or abs(offset - known) > CLOCK_STEP * 1e9:
                    self._clock_offset = offset
                break
        if self._clock_offset is None:
            self._clock_offset = offset  # every reading preempted: the last one
        return self._clock_offset

    def _to_sim_time(self, stamp: Time) -> float:
        """
        Convert a non-zero trajectory stamp to simulation time (0 stays 0: start now).

        On the wall clock the stamp is placed on the steady clock the simulation follows
        (:meth:`_step_wall`) by :meth:`_clock_offset_ns`, in whole nanoseconds (floats of wall
        time are 238 ns apart), not against the simulation's present (the trajectory's
        reception, which would shift each trajectory by its wait for the callback).
        """
        seconds = time_from_msg(stamp)
        if seconds == 0.0 or self._publish_clock:
            return seconds
        nanoseconds = stamp.sec * 1_000_000_000 + stamp.nanosec
        steady = (nanoseconds - self._clock_offset_ns()) / 1e9
        return self._sim_time_of(steady, steady if self._wall_start is None else self._wall_start)

    def _trajectory_callback(self, controller: str) -> Any:
        """Return the subscription callback of a controller's trajectories (with message info)."""
        def on_message(message: JointTrajectory, info: MessageInfo) -> None:
            self._advance((
                controller, message, int(info['received_timestamp']),
                int(info.get('source_timestamp', 0)),
            ))

        def on_message_only(message: JointTrajectory) -> None:
            self._advance((controller, message, 0, 0))

        return on_message if MESSAGE_INFO else on_message_only

    def _reception(self, received: int) -> float | None:
        """
        Return when the middleware received a message, on the steady clock [s].

        :param received: ``received_timestamp`` of its message info, system time [ns] (0: not
            given by the middleware).
        :return: That time, or None when unknown or not in the last :data:`MAX_QUEUED`.
        """
        if received <= 0:
            return None
        age = self._system.now().nanoseconds * 1e-9 - received * 1e-9
        if not 0.0 <= age <= MAX_QUEUED:
            return None
        return self._wall_now() - age

    def _on_trajectory(
        self, controller: str, message: JointTrajectory, received: int = 0, source: int = 0
    ) -> None:
        reception = self._reception(received)
        report = self._reports[controller]
        queued = math.nan
        now = self._wall_now()
        if reception is not None:  # taken when received, as JTC's own executor thread does
            queued = now - reception
            report.queued_max = max(report.queued_max, queued)
        self._step_to_arrival(now if reception is None else reception)
        stamp = self._to_sim_time(message.header.stamp)
        trajectory = trajectory_from_msg(message, stamp)
        stats = self.sim.follower(controller).stats
        joined, violations = stats.joined, stats.segment_violations
        verdict = self.sim.command(controller, trajectory)
        sent = self._sent_after_stamp(source, stamp)
        if verdict.accepted and stats.joined > joined and stats.last_join is not None:
            self._log_seam(controller, report, now, queued, sent, *stats.last_join,
                           'joined a trajectory', '; the join reaches ')
        elif (
            verdict.accepted and stats.segment_violations > violations
            and stats.last_violation is not None
        ):
            delay, peaks, jumped = stats.last_violation
            what = 'jumped onto a trajectory' if jumped else 'took a trajectory beyond a limit'
            self._log_seam(controller, report, now, queued, sent, delay, peaks, what, ': ')
        if verdict.accepted:
            return
        last = report.last_logged.get(verdict.status)
        if last is not None and now - last < LOG_THROTTLE:
            report.suppressed[verdict.status] = report.suppressed.get(verdict.status, 0) + 1
            return
        suppressed = report.suppressed.pop(verdict.status, 0)
        more = f' ({suppressed} more since the last log)' if suppressed else ''
        report.last_logged[verdict.status] = now
        self.get_logger().warning(
            f'{controller}: rejected trajectory ({verdict.status.value}): {verdict.detail}{more}'
        )

    def _sent_after_stamp(self, source: int, stamp: float) -> float:
        """
        Return how long after its stamp a trajectory was published, on the simulation's clock.

        The publisher's ``source_timestamp`` (system time) is placed on the steady clock as the
        reception is (:meth:`_reception`), then on the simulation's time; with the reception's
        delay it tells where a late trajectory lost its time: before it was sent (the
        publisher) or after (the middleware, this process).

        :param source: ``source_timestamp`` of its message info [ns] (0: not given).
        :param stamp: Its stamp on the simulation's clock [s] (0: start on arrival).
        :return: The time [s], NaN when unknown or for a trajectory stamped 0.
        """
        sent = self._reception(source)
        if sent is None or stamp == 0.0 or self._wall_start is None:
            return math.nan
        return self._sim_time_of(sent, self._wall_start) - stamp

    def _log_seam(
        self, controller: str, report: _ControllerReport, now: float, queued: float,
        sent: float, delay: float, peaks: SegmentPeaks, what: str, reaches: str,
    ) -> None:
        """
        Log a trajectory taken with a seam or beyond a limit, throttled per controller and kind.

        :param sent: How long after its stamp it was published [s]
            (:meth:`_sent_after_stamp`; NaN: unknown).
        :param what: What the controller did (``joined a trajectory``, ...): the kind throttled.
        :param reaches: The words before the shares of the limits reached.
        """
        if now - report.seam_logged.get(what, -math.inf) < LOG_THROTTLE:
            report.seams_suppressed[what] = report.seams_suppressed.get(what, 0) + 1
            return
        suppressed = report.seams_suppressed.pop(what, 0)
        more = f' ({suppressed} more since the last log)' if suppressed else ''
        report.seam_logged[what] = now
        self.get_logger().warning(
            f'{controller}: {what} {_milliseconds(1e3 * delay)} ms after its stamp '
            f'(published {_milliseconds(1e3 * sent)} ms after it, received '
            f'{_milliseconds(1e3 * queued)} ms before its callback){reaches}'
            f'{peaks.velocity:.2f} x the velocity, {peaks.acceleration:.2f} x '
            f'the acceleration and {peaks.jerk:.2f} x the jerk limit'
            f"{f' ({peaks.where})' if peaks.where else ''}{more}"
        )

    def _on_base_command(self, message: Twist) -> None:
        self._advance()
        try:
            self.sim.command_base(message.linear.x, message.angular.z)
        except ConfigError as error:
            self.get_logger().warning(f'base command refused: {error}', throttle_duration_sec=2.0)
            return
        self.base_commands += 1

    def _on_push(self, message: WrenchStamped) -> None:
        self._advance()
        force = message.wrench.force
        torque = message.wrench.torque
        try:
            self.sim.push(
                message.header.frame_id, (force.x, force.y, force.z), PUSH_HOLD,
                torque=(torque.x, torque.y, torque.z), local=True, replace=True,
            )
        except ConfigError as error:
            self.get_logger().warning(f'sim/push refused: {error}', throttle_duration_sec=2.0)
            return
        self.pushes += 1

    def _publish_base_and_wrenches(self, stamp: Time) -> None:
        base = self.sim.mobile_base
        if base is not None and self._odometry is not None:
            pose = self.sim.base_pose()
            linear, angular = self.sim.base_velocity()
            odometry = Odometry()
            odometry.header.stamp = stamp
            odometry.header.frame_id = base.odom_frame
            odometry.child_frame_id = self.sim.robot.base_frame
            odometry.pose.pose.position.x = pose.x
            odometry.pose.pose.position.y = pose.y
            odometry.pose.pose.orientation.z = math.sin(pose.yaw / 2.0)
            odometry.pose.pose.orientation.w = math.cos(pose.yaw / 2.0)
            odometry.twist.twist.linear.x = linear
            odometry.twist.twist.angular.z = angular
            self._odometry.publish(odometry)
        for arm, publisher in self._wrenches.items():
            wrench = self.sim.wrench(arm)
            message = WrenchStamped()
            message.header.stamp = stamp
            message.header.frame_id = self.sim.wrench_sensors[arm]
            message.wrench.force.x, message.wrench.force.y, message.wrench.force.z = (
                float(value) for value in wrench.force
            )
            message.wrench.torque.x, message.wrench.torque.y, message.wrench.torque.z = (
                float(value) for value in wrench.torque
            )
            publisher.publish(message)

    def _on_render_tick(self) -> None:
        recorder = self._recorder
        if recorder is None:
            return
        if recorder.error is None:
            recorder.submit()
            return
        self.get_logger().error(f'no more frames: {recorder.error}')
        if self._render_timer is not None:
            self.destroy_timer(self._render_timer)
            self._render_timer = None

    def _on_tick(self) -> None:
        self._advance()
        if self.sim.time == self._published_time:
            return  # a late tick caught up within one physics step: nothing new to publish
        self._published_time = self.sim.time
        stamp = self._stamp()
        # written as bytes: a JointState of every joint, converted by rclpy at the tick rate,
        # cost this process more than its physics
        self._joint_states.publish(joint_state_to_cdr(
            (stamp.sec, stamp.nanosec), self._names,
            list(self.sim.joint_positions().values()), list(self.sim.joint_velocities().values()),
        ))
        self._publish_base_and_wrenches(stamp)
        self._published.tick()
        if self._clock_publisher is not None:
            self._clock_publisher.publish(ClockMessage(clock=stamp))
        for controller, report in self._reports.items():
            error = self.sim.tracking_error(controller)
            report.last_error = error
            report.max_error = max(report.max_error, error)

    def _statuses(self) -> list[DiagnosticStatus]:
        statuses = []
        name = self.get_fully_qualified_name()
        for controller, report in self._reports.items():
            stats = self.sim.follower(controller).stats
            values: dict[str, object] = {
                'accepted': stats.accepted,
                'rejected': stats.rejected,
                'clamped_points': stats.clamped_points,
                'late': stats.late,
                'joined': stats.joined,
                'delay_p50 [ms]': _milliseconds(stats.delay_ms(50.0)),
                'delay_p99 [ms]': _milliseconds(stats.delay_ms(99.0)),
                'delay_max [ms]': _milliseconds(1e3 * stats.delay_max),
                'segment_violations': stats.segment_violations,
                'segment_peak': f'{stats.segment_peak:.3f}',
                'queued_max [ms]': f'{1e3 * report.queued_max:.1f}',
                'joined_delay_min [ms]': _milliseconds(1e3 * stats.join_delays[0]),
                'joined_delay_max [ms]': _milliseconds(1e3 * stats.join_delays[1]),
                'joined_peak_velocity': f'{stats.join_peaks.velocity:.3f}',
                'joined_peak_acceleration': f'{stats.join_peaks.acceleration:.3f}',
                'joined_peak_jerk': f'{stats.join_peaks.jerk:.3f}',
                'tracking_error_now [rad]': f'{report.last_error:.4f}',
                'tracking_error_max [rad]': f'{report.max_error:.4f}',
            }
            for status, count in sorted(stats.rejections.items(), key=lambda item: item[0].value):
                values[f'rejected_{status.value}'] = count
            if stats.last_rejection is not None:
                values['last_rejection'] = stats.last_rejection.detail
            report.max_error = 0.0
            report.queued_max = 0.0
            joined, report.joined = stats.joined - report.joined, stats.joined
            level = DiagnosticStatus.WARN if stats.rejected or joined else DiagnosticStatus.OK
            summary = f'{stats.accepted} accepted, {stats.rejected} rejected'
            if joined:  # a seam in the command: the chunk came after its plan had moved on
                summary += (
                    f', {joined} joined since the last report (arrived after the point where '
                    "they left the command: raise the trajectory publisher's plan_ahead above "
                    'the delay)'
                )
            beyond = stats.segment_violations - report.segment_violations
            report.segment_violations = stats.segment_violations
            if beyond:  # what the controller followed broke a limit, since the last report
                level = DiagnosticStatus.WARN
                summary += (
                    f', {beyond} taken beyond a velocity, acceleration or jerk limit since the '
                    f'last report (peak {values["segment_peak"]} x)'
                )
            statuses.append(status_to_msg(
                f'pic_ros: {name} {controller}', self.sim.robot.name, level, summary, values
            ))
        rate = self._published.rate(self._wall_now())
        factor = self.sim.real_time_factor
        values = {
            'sim_time [s]': f'{self.sim.time:.3f}',
            'physics_real_time_factor': f'{factor:.1f}' if math.isfinite(factor) else 'n/a',
            'slipped [s]': f'{self._slipped:.3f}',
            'joint_states_rate [Hz]': f'{rate:.1f}',
            'joint_states_published': self._published.total,
        }
        if self.sim.mobile_base is not None:
            pose = self.sim.base_pose()
            values['base_commands'] = self.base_commands
            values['base_pose [m, m, rad]'] = f'{pose.x:.3f}, {pose.y:.3f}, {pose.yaw:.3f}'
        values['pushes'] = self.pushes
        level = DiagnosticStatus.OK
        if self._slipped > 0.0:
            level = DiagnosticStatus.WARN
        if self._recorder is not None:
            values['frames_written'] = self._recorder.frames_written
            values['frames_skipped'] = self._recorder.frames_skipped
            per_frame = self._recorder.seconds_per_frame
            values['seconds_per_frame'] = f'{per_frame:.3f}' if math.isfinite(per_frame) else 'n/a'
            if self._recorder.error is not None:
                values['render_error'] = self._recorder.error
                level = DiagnosticStatus.WARN
        statuses.append(status_to_msg(
            f'pic_ros: {name} simulation', self.sim.robot.name, level,
            f'real-time factor {values["physics_real_time_factor"]}', values,
        ))
        return statuses

    def destroy_node(self) -> None:
        """Stop the frame recorder, free the renderer and destroy the node."""
        if self._recorder is not None:
            self._recorder.close()
        sim = getattr(self, 'sim', None)  # None when the simulation failed to start
        if sim is not None:
            sim.close()
        super().destroy_node()


DESCRIPTION = (
    'Simulated robot (MuJoCo) in place of ros2_control: <controller>/joint_trajectory in, '
    'joint_states out.'
)
"""What ``sim_robot`` does, for its usage."""


def build_parser(prog: str = 'sim_robot') -> argparse.ArgumentParser:
    """
    Build the parser of ``sim_robot`` and ``python -m pic_ros_tools sim``: parameters, duration.

    :param prog: The program name shown in the usage.
    :return: The parser.
    """
    parser = node_parser(PARAMETERS, prog, DESCRIPTION)
    parser.add_argument(
        '--duration', type=float, help='stop after this many seconds (default: until Ctrl-C)'
    )
    return parser


def parse_arguments(
    argv: Sequence[str], prog: str = 'sim_robot'
) -> tuple[argparse.Namespace, list[Parameter], list[str]]:
    """
    Parse the command line of ``sim_robot``; what follows ``--ros-args`` goes to rclpy.

    ``--help`` prints the usage and exits 0, an unknown option exits 2 (``SystemExit``).

    :param argv: Arguments without the program name.
    :param prog: The program name shown in the usage.
    :return: The options, the parameter overrides they ask for (``--robot tiago`` is
        ``robot:=tiago``) and the ROS arguments.
    """
    parser = build_parser(prog)
    args, ros_arguments = parse_command_line(parser, argv)
    if args.duration is not None and not args.duration > 0.0:
        parser.error(f'--duration must be > 0, got {args.duration}')
    return args, parameter_overrides(PARAMETERS, args), ros_arguments


def run_sim(
    argv: Sequence[str], prog: str = 'python -m pic_ros_tools sim', error_status: int = 2
) -> int:
    """
    Run ``sim_robot [--robot R] [--render-dir D] [--duration S] ... [--ros-args ...]``.

    :param argv: Arguments without the program name (and without the command).
    :param prog: The program name shown in the usage and the error messages.
    :param error_status: Exit status for an invalid robot or setting or a missing mujoco (2 for
        ``python -m pic_ros_tools sim``, 1 for ``sim_robot``: its node could not start).
    :return: Exit status (0, ``error_status``, or 2 for an invalid command line).
    """
    args, overrides, ros_arguments = parse_arguments(argv, prog)
    spin = spin_until_shutdown if args.duration is None else spin_for(args.duration)
    return run_nodes(
        prog, ros_arguments, lambda: [SimRobotNode(parameter_overrides=overrides)], spin=spin,
        error_status=error_status,
    )


def main(args: list[str] | None = None) -> None:
    """
    Run the simulated robot until shutdown (``ros2 run pic_ros sim_robot [options]``).

    :param args: The command line, program name first (default: ``sys.argv``): an option per
        parameter (``--help`` lists them), ``--duration``, then ``--ros-args ...``.
    """
    arguments = sys.argv if args is None else args
    raise SystemExit(run_sim(list(arguments[1:]), prog='sim_robot', error_status=START_FAILED))


if __name__ == '__main__':
    main()
