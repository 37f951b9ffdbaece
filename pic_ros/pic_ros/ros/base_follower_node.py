"""
base_follower: the person's footprint in, the mobile base's velocity commands out.

Subscribes ``body_pose`` (``geometry_msgs/PoseStamped`` from skeleton_node: the person's pelvis
on the tracker's floor plane and heading, tracker frame) and publishes ``cmd_vel``
(``geometry_msgs/Twist``: ``linear.x`` [m/s], ``angular.z`` [rad/s]) at ``rate``. What is sent is
decided by :class:`~pic_ros.motion.base_following.BaseFollower` (the TIAGo paper's
differential-drive algorithm within velocity and acceleration limits, dead zones, stop on
tracking loss); this node only wires it: footprints are timed on the node's clock when they
arrive (``use_sim_time`` for replays), and the follower is stepped from a timer. It also reads
``person`` (``std_msgs/UInt32``, latched, from skeleton_node: the number of people taken up): when
another person is taken up, the follower drops the last one's reference and takes the new
person's first footprint as the new one (the base does not drive toward where the last person
would now be).

The base moves only while the robot is engaged (``engaged_only``, default true): the node reads
``engaged`` (``std_msgs/Bool``, latched, from trajectory_publisher) and ``estop``
(``std_msgs/Bool``, every value kept, the same topic trajectory_publisher reads). Until
``engaged`` says true, and from a true ``estop`` until ``engaged`` says true again (after the
stop's reset and an engage), the base comes to a stop within its acceleration limits and stays
there (state ``disengaged``); engaged again, it resumes toward the person's displacement since the
same reference. The stop does not wait for trajectory_publisher: a base follower whose
trajectory publisher is gone stops on ``estop`` alone. ``engaged_only`` false follows whenever
``follow_base`` is true (a base without arms to engage).

With ``stamped`` true ``cmd_vel`` is a ``geometry_msgs/TwistStamped`` (stamp: the node's clock,
``frame_id``: the parameter), as diff_drive_controller reads it on ``~/cmd_vel`` from ROS 2
Jazzy on; the default Twist suits a Humble controller with ``use_stamped_vel: false`` (PAL's
TIAGo configuration, topic ``~/cmd_vel_unstamped``).

Off by default (``follow_base`` false): nothing is published and the diagnostics say so. While
the follower drives the base (following, at the goal, stopping) a command goes out every period;
when it stops driving (tracking lost and stopped, turned off) one zero command goes out, then
nothing, so that other sources of ``cmd_vel`` (a joystick through a multiplexer) are not
blocked and the base controller's command timeout applies.
"""

from __future__ import annotations

import threading
from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PoseStamped, Twist, TwistStamped
from pic_ros.motion.base_following import BaseFollower, BaseFollowingConfig
from pic_ros.ros.conversions import command_to_msg, footprint_from_msg, status_to_msg
from pic_ros.ros.diagnostics import DiagnosticsReporter
from pic_ros.ros.parameters import (
    apply_realtime_priority,
    declare_parameters,
    validation_callback,
    Values,
)
from pic_ros.ros.qos import EVERY_VALUE, LATCHED
from pic_ros.ros.runner import run_node
from pic_ros.ros.schema import BASE_FOLLOWER
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Bool, UInt32

PARAMETERS = BASE_FOLLOWER
"""The node's parameters (:data:`pic_ros.ros.schema.BASE_FOLLOWER`)."""


class BaseFollowerNode(Node):
    """
    Drive a differential-drive base after the person's walking.

    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('base_follower', **kwargs)
        self._values: Values = declare_parameters(self, PARAMETERS)
        self.scheduling = apply_realtime_priority(self, self._values)
        self._lock = threading.Lock()
        self._engaged_input = False  # the last engaged value (false before any)
        self._estop_latched = False  # a true estop came after the last true engaged
        self.follower = BaseFollower(
            BaseFollowingConfig.from_parameters(self._values), self._gate(self._values)
        )
        self._was_active = False
        self.published = 0
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._stamped = bool(self._values['stamped'])
        self.cmd_vel = self.create_publisher(
            TwistStamped if self._stamped else Twist, 'cmd_vel', reliable
        )
        self.create_subscription(PoseStamped, 'body_pose', self.on_body_pose, reliable)
        self._person: int | None = None
        self.create_subscription(UInt32, 'person', self.on_person, LATCHED)
        self.create_subscription(Bool, 'engaged', self.on_engaged, LATCHED)
        self.create_subscription(Bool, 'estop', self.on_estop, EVERY_VALUE)
        self._timer = self.create_timer(1.0 / float(self._values['rate']), self.on_timer)
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        if self.follower.config.follow_base:
            engaged = ' while the robot is engaged' if self._values['engaged_only'] else ''
            self.get_logger().info(
                f'following the person on {self.cmd_vel.topic_name}{engaged}'
            )
        else:
            self.get_logger().info('follow_base is false: publishing nothing')

    def _gate(self, values: Values) -> bool:
        """Return whether the base may follow: engaged and no stop since, or not asked (lock)."""
        if not values['engaged_only']:
            return True
        return self._engaged_input and not self._estop_latched

    def _apply(self, values: Values) -> None:
        config = BaseFollowingConfig.from_parameters(values)  # refuses before anything changes
        with self._lock:
            self.follower.config = config  # keeps the reference, the odometry and the command
            self.follower.engaged = self._gate(values)
        if values['rate'] != self._values['rate']:
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(1.0 / float(values['rate']), self.on_timer)
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))
        if config.follow_base != self._values['follow_base']:  # the values change after this
            state = 'on' if config.follow_base else 'off (stopping)'
            self.get_logger().info(f'base following turned {state}')

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def on_body_pose(self, message: PoseStamped) -> None:
        """
        Take the person's footprint.

        :param message: ``body_pose`` from skeleton_node (tracker frame).
        """
        with self._lock:
            self.follower.observe(self._now(), footprint_from_msg(message))

    def on_person(self, message: UInt32) -> None:
        """
        Take the number of people taken up: another person gets a reference of their own.

        :param message: ``person`` from skeleton_node.
        """
        with self._lock:
            people, self._person = self._person, int(message.data)
            if people is None or people == self._person:
                return
            self.follower.reset()
        self.get_logger().info(
            f'another person (number {message.data} taken up): a new reference'
        )

    def on_engaged(self, message: Bool) -> None:
        """
        Take trajectory_publisher's engagement: the base follows only while it is true.

        :param message: ``engaged`` (latched): true while the robot follows the person.
        """
        with self._lock:
            self._engaged_input = bool(message.data)
            if message.data:
                self._estop_latched = False  # engaged after the stop: it was reset
            was, self.follower.engaged = self.follower.engaged, self._gate(self._values)
            changed = was != self.follower.engaged
        if changed:
            self.get_logger().info(
                'engaged: following the person' if message.data
                else 'disengaged: the base stops'
            )

    def on_estop(self, message: Bool) -> None:
        """
        Take a value of the emergency-stop input: true stops the base until engaged again.

        :param message: ``estop``.
        """
        if not message.data:
            return
        with self._lock:
            was = self._estop_latched
            self._estop_latched = True
            self.follower.engaged = self._gate(self._values)
        if not was:
            self.get_logger().warning(
                'emergency stop: the base stops until the robot is engaged again'
            )

    def on_timer(self) -> None:
        """Step the follower and publish its command while it drives the base (and one zero)."""
        with self._lock:
            command = self.follower.step(self._now())
            active = command.state.active
            send = active or self._was_active
            self._was_active = active
            if send:
                self.published += 1
        if not send:
            return
        twist = command_to_msg(command)
        if not self._stamped:
            self.cmd_vel.publish(twist)
            return
        message = TwistStamped()
        message.header.stamp = self.get_clock().now().to_msg()
        message.header.frame_id = str(self._values['frame_id'])
        message.twist = twist
        self.cmd_vel.publish(message)

    def _statuses(self) -> list[DiagnosticStatus]:
        with self._lock:
            follower = self.follower
            command = follower.command
            odometry = follower.odometry
            values: dict[str, object] = {
                'follow_base': follower.config.follow_base,
                'engaged_only': self._values['engaged_only'],
                'engaged_input': self._engaged_input,
                'estop_latched': self._estop_latched,
                'state': command.state.value,
                'linear_mps': round(command.linear, 3),
                'angular_radps': round(command.angular, 3),
                'odometry_x_m': round(odometry.x, 3),
                'odometry_y_m': round(odometry.y, 3),
                'odometry_yaw_rad': round(odometry.yaw, 3),
                'footprints_received': follower.footprints,
                'footprints_rejected': follower.rejected,
                'sessions': follower.sessions,
                'commands_published': self.published,
            }
        if not follower.config.follow_base:
            level, summary = DiagnosticStatus.OK, 'off (follow_base is false): publishing nothing'
        elif command.state.value in ('waiting_for_person', 'lost', 'disengaged'):
            level, summary = DiagnosticStatus.WARN, command.state.value
        else:
            level, summary = DiagnosticStatus.OK, command.state.value
        name = f'pic_ros: {self.get_fully_qualified_name()}'
        return [status_to_msg(name, 'base', level, summary, values)]


def main(args: list[str] | None = None) -> None:
    """
    Run the node until shutdown (``ros2 run pic_ros base_follower [options]``).

    :param args: The command line, program name first (default: ``sys.argv``): an option per
        parameter (``--help`` lists them), then ``--ros-args ...``.
    """
    run_node(
        BaseFollowerNode, PARAMETERS, args, prog='base_follower',
        description="The person's footprint (body_pose) in, the mobile base's cmd_vel out "
        '(off unless follow_base is true).',
    )


if __name__ == '__main__':
    main()
