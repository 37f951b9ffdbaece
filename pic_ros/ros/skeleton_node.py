"""
skeleton_node: one tracker in, the tracked person's body-frame skeleton out.

Sources (parameter ``source``, fixed at start-up):

- ``azure_kinect``: ``visualization_msgs/MarkerArray`` on ``body_tracking_data`` (Azure Kinect
  ROS driver encoding: marker id = body * 100 + joint, 32 K4ABT joints, depth camera frame);
- ``kinect_v2``: the same encoding with the 25 Kinect v2 joint ids, Kinect v2 camera space;
- ``xsens_mvn``: Xsens MVN network stream (UDP, MXTP02) on ``udp_address``:``udp_port``.

Every frame is decoded, the tracked body chosen and kept, validated (drops are counted by reason,
product §7), smoothed with a time-constant filter and expressed in the body-centred human frame.
Publishes ``skeleton`` (``geometry_msgs/PoseArray``, one pose per
:class:`~pic_ros.human.skeleton.HumanJoint` in that order, stamp = capture time) and
``skeleton_markers`` (RViz, at most ``marker_rate``). Empty arrays and lost bodies publish
nothing: downstream, the trajectory publisher holds.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from typing import Any, Callable

from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PoseArray
from pic_ros.exceptions import ConfigError
from pic_ros.human.filters import FILTER_KINDS
from pic_ros.human.processing import ProcessingConfig
from pic_ros.human.skeleton import SkeletonFrame
from pic_ros.ros.conversions import (
    marker_positions_from_raw,
    skeleton_markers_to_msg,
    skeleton_to_msg,
    status_to_msg,
)
from pic_ros.ros.diagnostics import DiagnosticsReporter, RateMeter
from pic_ros.ros.parameters import declare_parameters, ParameterSpec, validation_callback, Values
from pic_ros.ros.runner import run_node
from pic_ros.trackers.frames import DropReason, SkeletonFrontEnd
from pic_ros.trackers.marker_cdr import MarkerCdrError
from pic_ros.trackers.markers import tracker_format
from pic_ros.trackers.xsens import (
    sample_to_skeleton,
    XsensParser,
    XsensParserConfig,
    XsensStampSource,
)
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from visualization_msgs.msg import MarkerArray

SOURCES = ('azure_kinect', 'kinect_v2', 'xsens_mvn')

PARAMETERS = (
    ParameterSpec(
        'source', 'azure_kinect',
        'Tracker: azure_kinect or kinect_v2 (MarkerArray on body_tracking_data), or xsens_mvn '
        '(MXTP02 UDP datagrams)',
        read_only=True, choices=SOURCES,
    ),
    ParameterSpec(
        'smoothing', 'exponential', 'Joint smoothing: exponential, kalman (the PIC paper, ~1 s '
        'of lag) or none', choices=FILTER_KINDS,
    ),
    ParameterSpec(
        'time_constant', 0.1, 'Time constant of the exponential smoothing [s]', low=0.0, high=10.0
    ),
    ParameterSpec(
        'switch_after', 1.0,
        'Absence of the tracked body before another body may be tracked [s]', low=0.0,
        high=3600.0,
    ),
    ParameterSpec(
        'restart_after', 1.0,
        'A stamp older than the last accepted one by more than this starts a new session (a '
        'looping replay, a tracker restart) instead of being dropped [s]', low=0.0, high=3600.0,
    ),
    ParameterSpec('body_frame_id', 'pic_human', 'frame_id of the skeleton topics'),
    ParameterSpec(
        'marker_rate', 30.0, 'Largest publish rate of skeleton_markers for RViz [Hz] (0: off)',
        low=0.0, high=30.0,
    ),
    ParameterSpec(
        'udp_address', '127.0.0.1',
        'Address the Xsens receiver binds to (a suit on another PC needs that PC-facing '
        'address, or 0.0.0.0)', read_only=True,
    ),
    ParameterSpec('udp_port', 9763, 'UDP port of the Xsens MVN stream', read_only=True, low=1,
                  high=65535),
    ParameterSpec(
        'xsens_character', -1, 'Xsens character (avatar) id to follow; -1 follows the first seen',
        read_only=True, low=-1, high=255,
    ),
    ParameterSpec(
        'diagnostics_period', 1.0, 'Seconds between reports on /diagnostics [s]', low=0.1,
        high=60.0,
    ),
)

SkeletonHandler = Callable[[SkeletonFrame], None]


class SkeletonNode(Node):
    """
    Tracker input, validation, smoothing and the ``skeleton`` topic.

    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__('skeleton_node', **kwargs)
        self._values: Values = declare_parameters(self, PARAMETERS)
        self._lock = threading.Lock()
        self._handlers: list[SkeletonHandler] = []
        self._source = str(self._values['source'])
        self._front = self._make_front_end(self._values)
        self._input = RateMeter()
        self._published = RateMeter()
        self._last_markers = -float('inf')
        self._restarts = 0
        self._malformed = 0
        self._handler_errors = 0
        self._last_drop_log = -float('inf')
        reliable = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
        self._skeleton_pub = self.create_publisher(PoseArray, 'skeleton', reliable)
        self._markers_pub = self.create_publisher(MarkerArray, 'skeleton_markers', reliable)
        self._socket: socket.socket | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._parser: XsensParser | None = None
        self._queue_overflows = 0
        if self._source == 'xsens_mvn':
            self._start_xsens()
        else:
            self.create_subscription(
                MarkerArray, 'body_tracking_data', self._on_markers, qos_profile_sensor_data,
                raw=True,
            )
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        self.get_logger().info(
            f'tracking {self._source}; publishing {self._skeleton_pub.topic_name}'
        )

    def add_handler(self, handler: SkeletonHandler) -> None:
        """
        Hand every accepted skeleton to a function in this process (the one-process teleop).

        :param handler: Called with each body-frame skeleton, in the thread that produced it.
        """
        self._handlers.append(handler)

    @staticmethod
    def _processing(values: Values) -> ProcessingConfig:
        return ProcessingConfig(
            smoothing=str(values['smoothing']), time_constant=float(values['time_constant'])
        )

    def _make_front_end(self, values: Values) -> SkeletonFrontEnd:
        tracker = None if self._source == 'xsens_mvn' else tracker_format(self._source)
        return SkeletonFrontEnd(
            tracker, switch_after=float(values['switch_after']),
            processing=self._processing(values),
        )

    def _apply(self, values: Values) -> None:
        processing = self._processing(values)
        with self._lock:  # keeps the tracked body, the last stamp and the counts
            self._front.configure(
                switch_after=float(values['switch_after']), processing=processing
            )
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    # Marker trackers -----------------------------------------------------------------------

    def _on_markers(self, data: bytes) -> None:
        with self._lock:
            self._input.tick()
            try:
                markers = marker_positions_from_raw(data)
            except MarkerCdrError as err:
                self._malformed += 1
                self._log_drop(f'unreadable MarkerArray: {err}')
                return
            self._check_restart(markers.stamp)
            self._deliver(self._front.process(markers.ids, markers.positions, markers.stamp))

    def _check_restart(self, stamp: float) -> None:
        """Start a new session if the stamps went back by more than ``restart_after``."""
        last = self._front.validator.last_stamp
        if last is None or not math.isfinite(stamp):
            return  # nothing accepted yet, or an empty array (NaN stamp)
        if last - stamp <= float(self._values['restart_after']):
            return
        self._front.reset(keep_counts=True)
        self._restarts += 1
        self.get_logger().warning(
            f'stamps went back by {last - stamp:.3f} s: new session (replay loop or tracker '
            'restart)'
        )

    # Xsens MVN --------------------------------------------------------------------------------

    def _start_xsens(self) -> None:
        character = int(self._values['xsens_character'])
        self._parser = XsensParser(
            XsensParserConfig(character_id=None if character < 0 else character)
        )
        address = (str(self._values['udp_address']), int(self._values['udp_port']))
        receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            receiver.bind(address)
        except OSError as err:
            receiver.close()
            raise ConfigError(f'cannot bind the Xsens receiver to {address}: {err}') from err
        receiver.settimeout(0.2)
        self._socket = receiver
        self._thread = threading.Thread(
            target=self._receive_xsens, name='xsens_receiver', daemon=True
        )
        self._thread.start()
        self.get_logger().info(f'Xsens MVN receiver on udp://{address[0]}:{address[1]}')

    def _receive_xsens(self) -> None:
        assert self._socket is not None and self._parser is not None
        size = self._parser.receive_buffer_size
        while not self._stop.is_set():
            try:
                datagram, _ = self._socket.recvfrom(size)
            except socket.timeout:
                continue
            except OSError:
                return
            received = self._now()
            with self._lock:
                self._input.tick()
                try:
                    sample = self._parser.feed(datagram, received)
                    if sample is None:
                        continue
                    frame = sample_to_skeleton(sample, XsensStampSource.RECEIVE_TIME)
                    self._check_restart(frame.stamp)
                    self._deliver(self._front.process_frame(frame))
                except Exception as err:  # the receiver thread must survive anything
                    self.get_logger().error(
                        f'Xsens receiver: {type(err).__name__}: {err}',
                        throttle_duration_sec=2.0,
                    )

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
        frame_id = str(self._values['body_frame_id'])
        if self._skeleton_pub.get_subscription_count() > 0:
            self._skeleton_pub.publish(skeleton_to_msg(result, frame_id))
        rate = float(self._values['marker_rate'])
        if rate > 0.0 and self._markers_pub.get_subscription_count() > 0:
            now = time.monotonic()
            if now - self._last_markers >= 1.0 / rate:
                self._last_markers = now
                self._markers_pub.publish(skeleton_markers_to_msg(result, frame_id))
        for handler in self._handlers:
            try:
                handler(result)
            except Exception as err:  # a consumer's failure must not stop the tracker input
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
                'source': self._source,
                'input_rate_hz': round(self._input.rate(now), 2),
                'skeleton_rate_hz': round(self._published.rate(now), 2),
                'frames_in': self._input.total,
                'skeletons_out': self._published.total,
                'session_restarts': self._restarts,
                'handler_errors': self._handler_errors,
            }
            counts['malformed_message'] = self._malformed
            values.update({f'dropped_{key}': value for key, value in counts.items()})
            if self._parser is not None:
                for reason, count in self._parser.drop_counts.items():
                    values[f'xsens_dropped_{reason.value}'] = count
                values['xsens_samples'] = self._parser.sample_count
        dropped = sum(counts.values()) - counts.get(DropReason.NO_BODY.value, 0)
        level = DiagnosticStatus.OK
        summary = 'tracking'
        if self._published.total == 0:
            level, summary = DiagnosticStatus.WARN, 'no skeleton yet'
        elif dropped > self._published.total:
            level, summary = DiagnosticStatus.WARN, 'more frames dropped than accepted'
        name = f'pic_ros: {self.get_fully_qualified_name()}'
        return [status_to_msg(name, self._source, level, summary, values)]

    def destroy_node(self) -> None:
        """Stop the Xsens receiver (if any) and destroy the node."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)  # it sees the flag within the 0.2 s socket timeout
        if self._socket is not None:
            self._socket.close()  # after the thread: never close a socket another thread reads
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """
    Run the node until shutdown (``ros2 run pic_ros skeleton_node``).

    :param args: Command-line arguments for rclpy (``--ros-args ...``).
    """
    run_node(SkeletonNode, args)


if __name__ == '__main__':
    main()
