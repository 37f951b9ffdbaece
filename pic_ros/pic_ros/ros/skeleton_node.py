"""
skeleton_node: one tracker in, the tracked person's body-frame skeleton out.

The tracker is the ``source`` parameter, fixed at start-up: any registered
:class:`~pic_ros.trackers.base.TrackerSource`. Built in:

- ``azure_kinect``: ``visualization_msgs/MarkerArray`` on ``body_tracking_data`` (Azure Kinect
  ROS driver encoding: marker id = body * 100 + joint, 32 K4ABT joints, depth camera frame);
- ``kinect_v2``: the same encoding with the 25 Kinect v2 joint ids, Kinect v2 camera space;
- ``xsens_mvn``: Xsens MVN network stream (UDP, MXTP02) on ``udp_address``:``udp_port``.

The node only moves bytes: it subscribes the topic (raw, decoded by the fast CDR reader) or
reads the UDP socket, according to the tracker's transport, and hands every message to the
tracker and its readings to the :class:`~pic_ros.human.front_end.SkeletonFrontEnd` (sessions,
body selection, checks with counted drop reasons, smoothing, body frame). Publishes
``skeleton`` (``geometry_msgs/PoseArray``, one pose per
:class:`~pic_ros.skeleton.HumanJoint` in that order, stamp = capture time) and
``skeleton_markers`` (RViz, at most ``marker_rate``) and ``body_pose``
(``geometry_msgs/PoseStamped`` in ``tracker_frame_id``: the person's footprint, pelvis on the
tracker's x-y plane turned to the chest's heading, which the body frame removes; for
``base_follower``) and ``chest`` (``geometry_msgs/PointStamped`` in ``tracker_frame_id``: z is
the chest's height, which the body frame removes too; for the solver node's whole-body torso)
and ``person`` (``std_msgs/UInt32``, latched: how many people were taken up so far, published
before the first skeleton of each, so that solver_node and base_follower forget what they learnt
about the previous one and trajectory_publisher disengages the robot; a person lost and found
again near their place is the same person).
Empty arrays and lost bodies publish nothing: downstream, the trajectory publisher holds and the
base follower stops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import threading
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PointStamped, PoseArray, PoseStamped
from pic_ros.human.front_end import FrontEndConfig, SkeletonFrontEnd
from pic_ros.ros.conversions import (
    chest_to_cdr,
    footprint_to_cdr,
    marker_positions_from_raw,
    skeleton_markers_to_msg,
    skeleton_to_cdr,
    status_to_msg,
)
from pic_ros.ros.diagnostics import DiagnosticsReporter, RateMeter
from pic_ros.ros.parameters import (
    apply_realtime_priority,
    declare_parameters,
    validation_callback,
    Values,
)
from pic_ros.ros.qos import LATCHED
from pic_ros.ros.runner import run_node
from pic_ros.ros.schema import SKELETON_NODE
from pic_ros.skeleton import SkeletonFrame
from pic_ros.trackers import make_tracker, TrackerReading, Transport
from pic_ros.trackers.frames import DropReason
from pic_ros.trackers.marker_cdr import MarkerCdrError
from pic_ros.trackers.udp import UdpReceiver
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription import Subscription
from std_msgs.msg import UInt32
from visualization_msgs.msg import MarkerArray

PARAMETERS = SKELETON_NODE
"""The node's parameters (:data:`pic_ros.ros.schema.SKELETON_NODE`)."""

SkeletonHandler = Callable[[SkeletonFrame], None]
PersonHandler = Callable[[int], None]

TRACKER_QOS = QoSProfile(
    depth=100, reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST
)
"""
QoS of ``body_tracking_data``: sensor data. The 100 arrays of room (3 s at 30 Hz) are room to
count, not a backlog to work through: each callback takes every array waiting, decodes them all
(the tracker counts gaps on every stamp) and processes only the newest, the others counted as
``superseded``. A process starved for up to 3 s loses no array without a trace; beyond, the
reader drops the oldest, which the tracker counts from the gap in the stamps (``lost_upstream``).
"""


class SkeletonNode(Node):
    """
    Tracker input, validation, smoothing and the ``skeleton`` topic.

    :param start_input: Start reading the tracker (its UDP socket or ``body_tracking_data``)
        at once. False: only once :meth:`start_input` is called, so that a process that hands
        the skeletons to functions of its own (:meth:`add_handler`, the one-process teleop)
        attaches them first and no skeleton leaves before they are there.
    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    """

    def __init__(self, start_input: bool = True, **kwargs: Any) -> None:
        super().__init__('skeleton_node', **kwargs)
        # First: destroy_node needs them, also when rclpy destroys a node that failed to start.
        self._receiver: UdpReceiver | None = None
        self._subscription: Subscription | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._values: Values = declare_parameters(self, PARAMETERS)
        self.scheduling = apply_realtime_priority(self, self._values)
        self._lock = threading.Lock()
        self._handlers: list[SkeletonHandler] = []
        self._person_handlers: list[PersonHandler] = []
        self._people = 0  # people taken up when the last skeleton was delivered
        self._tracker = make_tracker(str(self._values['source']), self._values)
        self._front = SkeletonFrontEnd(FrontEndConfig.from_parameters(self._values))
        self._input = RateMeter()
        self._published = RateMeter()
        self._last_markers = -float('inf')
        self._malformed = 0
        self._handler_errors = 0
        self._last_drop_log = -float('inf')
        reliable = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
        self._skeleton_pub = self.create_publisher(PoseArray, 'skeleton', reliable)
        self._markers_pub = self.create_publisher(MarkerArray, 'skeleton_markers', reliable)
        self._footprint_pub = self.create_publisher(PoseStamped, 'body_pose', reliable)
        self._chest_pub = self.create_publisher(PointStamped, 'chest', reliable)
        self._person_pub = self.create_publisher(UInt32, 'person', LATCHED)
        if self._tracker.transport is Transport.UDP:
            self._bind_udp()  # bound now: what comes before start_input waits in the socket
        if start_input:
            self.start_input()
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        self.get_logger().info(
            f'tracking {self._tracker.name}; publishing {self._skeleton_pub.topic_name}'
        )

    @property
    def chest_height(self) -> float | None:
        """Return the chest height of the last accepted skeleton, tracker frame [m], or None."""
        footprint = self._front.processor.footprint
        return None if footprint is None else footprint.height

    def start_input(self) -> None:
        """
        Start reading the tracker (once; later calls do nothing).

        The UDP receiver's thread (its socket is bound at construction, so datagrams sent
        before this call wait in it), or the ``body_tracking_data`` subscription.
        """
        if self._thread is not None or self._subscription is not None:
            return
        if self._receiver is not None:
            self._thread = threading.Thread(
                target=self._receive, name='udp_receiver', daemon=True
            )
            self._thread.start()
        else:
            self._subscription = self.create_subscription(
                MarkerArray, 'body_tracking_data', self._on_markers, TRACKER_QOS, raw=True,
            )

    def add_handler(self, handler: SkeletonHandler) -> None:
        """
        Hand every accepted skeleton to a function in this process (the one-process teleop).

        :param handler: Called with each body-frame skeleton, in the thread that produced it.
        """
        self._handlers.append(handler)

    def add_person_handler(self, handler: PersonHandler) -> None:
        """
        Tell a function in this process of each person taken up (the one-process teleop).

        :param handler: Called with the number of people taken up so far (1 for the first),
            before the first skeleton of that person reaches the skeleton handlers.
        """
        self._person_handlers.append(handler)

    def _apply(self, values: Values) -> None:
        config = FrontEndConfig.from_parameters(values)
        with self._lock:  # keeps the tracked body, the last stamp and the counts
            self._front.config = config
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # Transports ------------------------------------------------------------------------------

    def _on_markers(self, data: bytes) -> None:
        """
        Read every array waiting behind this one and act on the newest.

        All are decoded (the tracker counts gaps on every stamp); only the newest reading goes
        on to the front end, the older ones are counted as ``superseded``: a busy process
        catches up with the person instead of working through a backlog of the past.
        """
        arrays = [data, *self._waiting_arrays()]
        with self._lock:
            received = self._now()
            messages = []
            for raw in arrays:
                self._input.tick()
                try:
                    messages.append(marker_positions_from_raw(raw))
                except MarkerCdrError as err:
                    self._malformed += 1
                    self._log_drop(f'unreadable MarkerArray: {err}')
            self._act_on_newest(messages, received)

    def _waiting_arrays(self) -> list[bytes]:
        """Take the raw arrays already waiting in the subscription, without waiting."""
        subscription = self._subscription
        taken: list[bytes] = []
        if subscription is None:
            return taken
        while len(taken) < TRACKER_QOS.depth:
            with subscription.handle:
                message = subscription.handle.take_message(subscription.msg_type, True)
            if message is None:
                break
            taken.append(message[0])
        return taken

    def _bind_udp(self) -> None:
        receiver = UdpReceiver(
            str(self._values['udp_address']), int(self._values['udp_port']),
            buffer_size=int(self._values['udp_receive_buffer']),
            max_size=self._tracker.max_message_size,
        )
        self._receiver = receiver
        host, port = receiver.address
        self.get_logger().info(
            f'{self._tracker.name} receiver on udp://{host}:{port}, '
            f'kernel buffer {receiver.buffer_size} bytes'
        )
        if receiver.buffer_capped:
            self.get_logger().warning(
                f'the kernel granted a smaller UDP receive buffer than the {receiver.requested} '
                'bytes asked for (udp_receive_buffer): datagrams may be lost while this process '
                'is busy (counted as lost_in_socket); raise the cap with '
                f'sudo sysctl -w net.core.rmem_max={receiver.requested}'
            )

    def _receive(self) -> None:
        """
        Read the socket until the node stops, acting on the newest sample of each read.

        Every datagram waiting is read and decoded (the tracker counts gaps and drops on all of
        them); of the readings they complete, only the newest goes on to the front end and the
        consumers, the older ones are counted as ``superseded``: a busy process catches up with
        the person instead of working through a backlog of the past.
        """
        receiver = self._receiver
        assert receiver is not None
        while not self._stop.is_set():
            try:
                datagrams = receiver.receive_all()
            except OSError:
                return
            if not datagrams:
                continue
            received = self._now()
            with self._lock:
                try:
                    self._input.tick(len(datagrams))
                    self._act_on_newest(datagrams, received)
                except Exception as err:  # noqa: BLE001 (the receiver thread survives anything)
                    if not self.context.ok():
                        return  # shut down by a signal meanwhile: publishing fails, say nothing
                    self.get_logger().error(
                        f'UDP receiver: {type(err).__name__}: {err}', throttle_duration_sec=2.0
                    )

    def _act_on_newest(self, messages: Sequence[object], received: float) -> None:
        """
        Decode every message and hand the newest reading on; count the others superseded.

        :param messages: Tracker messages in arrival order (lock held).
        :param received: When they were read [s], node clock.
        """
        newest = None
        for message in messages:
            reading = self._tracker.decode(message, received)
            if reading is not None:
                if newest is not None:
                    self._front.skip(DropReason.SUPERSEDED)
                newest = reading
        if newest is not None:
            self._accept(newest)

    def _accept(self, reading: TrackerReading) -> None:
        """Hand one tracker reading to the front end and deliver what it gives."""
        restarts = self._front.restarts
        result = self._front.feed(reading)
        if self._front.restarts != restarts:
            self.get_logger().warning(
                'stamps went back: new session (replay loop or tracker restart)'
            )
        self._deliver(result)

    # Output -----------------------------------------------------------------------------------

    def _log_drop(self, reason: str) -> None:
        now = time.monotonic()
        if now - self._last_drop_log > 2.0:
            self._last_drop_log = now
            self.get_logger().warning(f'dropping tracker frames: {reason}')

    def _deliver(self, result: SkeletonFrame | DropReason) -> None:
        if isinstance(result, DropReason):
            if result is not DropReason.NO_BODY:
                self._log_drop(result.value)
            return
        self._published.tick()
        people = self._front.selector.acquisitions
        if people != self._people:  # a person taken up: before their first skeleton
            self._people = people
            self._person_pub.publish(UInt32(data=people))
            self._call(self._person_handlers, people)
        frame_id = str(self._values['body_frame_id'])
        # Published as serialized bytes: the messages of skeleton_to_msg, footprint_to_msg and
        # chest_to_msg without building and converting message objects.
        if self._skeleton_pub.get_subscription_count() > 0:
            self._skeleton_pub.publish(skeleton_to_cdr(result, frame_id))
        footprint = self._front.processor.footprint
        tracker_frame = str(self._values['tracker_frame_id'])
        if footprint is not None and self._footprint_pub.get_subscription_count() > 0:
            self._footprint_pub.publish(footprint_to_cdr(footprint, tracker_frame))
        if footprint is not None and self._chest_pub.get_subscription_count() > 0:
            self._chest_pub.publish(chest_to_cdr(footprint, tracker_frame))
        rate = float(self._values['marker_rate'])
        if rate > 0.0 and self._markers_pub.get_subscription_count() > 0:
            now = time.monotonic()
            if now - self._last_markers >= 1.0 / rate:
                self._last_markers = now
                self._markers_pub.publish(skeleton_markers_to_msg(result, frame_id))
        self._call(self._handlers, result)

    def _call(self, handlers: Sequence[Callable[[Any], None]], value: object) -> None:
        """Call the in-process consumers with a value; a failure is counted, never raised."""
        for handler in handlers:
            try:
                handler(value)
            except Exception as err:  # noqa: BLE001 (a consumer's failure must not stop the input)
                if not self.context.ok():
                    return  # shut down by a signal meanwhile: the consumer could not publish
                self._handler_errors += 1
                self.get_logger().error(
                    f'skeleton consumer failed: {type(err).__name__}: {err}',
                    throttle_duration_sec=2.0,
                )

    def _statuses(self) -> list[DiagnosticStatus]:
        now = self._now()
        with self._lock:
            counts = {reason.value: count for reason, count in self._front.counts.items()}
            values: dict[str, object] = {
                'source': self._tracker.name,
                'input_rate_hz': round(self._input.rate(now), 2),
                'skeleton_rate_hz': round(self._published.rate(now), 2),
                'frames_in': self._input.total,
                'skeletons_out': self._published.total,
                # readers of /skeleton matched on this side: a skeleton reaches only these
                'skeleton_subscribers': self._skeleton_pub.get_subscription_count(),
                'session_restarts': self._front.restarts,
                'people_taken_up': self._front.selector.acquisitions,
                'handler_errors': self._handler_errors,
            }
            counts['malformed_message'] = self._malformed
            values.update({f'dropped_{key}': value for key, value in counts.items()})
            values.update(self._tracker.status())
            if self._receiver is not None:
                drops = self._receiver.kernel_drops
                values['lost_in_socket'] = 'unknown' if drops is None else drops
                values['udp_buffer_bytes'] = self._receiver.buffer_size
        dropped = sum(counts.values()) - counts.get(DropReason.NO_BODY.value, 0)
        level = DiagnosticStatus.OK
        summary = 'tracking'
        if self._published.total == 0:
            level, summary = DiagnosticStatus.WARN, 'no skeleton yet'
        elif dropped > self._published.total:
            level, summary = DiagnosticStatus.WARN, 'more frames dropped than accepted'
        name = f'pic_ros: {self.get_fully_qualified_name()}'
        return [status_to_msg(name, self._tracker.name, level, summary, values)]

    def destroy_node(self) -> None:
        """Stop the UDP receiver (if any) and destroy the node."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)  # it sees the flag within the 0.2 s socket timeout
        if self._receiver is not None:
            self._receiver.close()  # after the thread: never close a socket another thread reads
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """
    Run the node until shutdown (``ros2 run pic_ros skeleton_node [options]``).

    :param args: The command line, program name first (default: ``sys.argv``): an option per
        parameter (``--help`` lists them), then ``--ros-args ...``.
    """
    run_node(
        SkeletonNode, PARAMETERS, args, prog='skeleton_node',
        description="One body tracker in (body_tracking_data or UDP), the tracked person's "
        'body-frame skeleton out.',
    )


if __name__ == '__main__':
    main()
