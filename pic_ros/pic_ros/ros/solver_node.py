"""
solver_node: the person's skeleton in, the robot's joint targets out (one node per robot).

Subscribes ``skeleton`` (``geometry_msgs/PoseArray`` in the body-centred human frame, from
skeleton_node) and ``chest`` (``geometry_msgs/PointStamped``, tracker frame, from skeleton_node:
z is the person's chest height, the input of whole-body imitation's torso lift) and publishes
``joint_targets`` (``sensor_msgs/JointState``: the solved arms' joints, the torso joint of a
robot file with a ``torso`` -- solved with ``whole_body``, else its neutral lift, which the arm
solvers assume --, then the head and gripper joints the robot file configures, positions
inside the URDF limits, stamp copied from the skeleton). The robot, its arms, head, grippers,
landmarks and neutral pose come from ``config/<robot>.yaml`` and ``urdf/<robot>.urdf``; the solver
(FABRIK, PIC, PICs(η)), the mapping, the correspondence and the stopping rules are parameters,
changeable at run time (a change keeps each arm's warm start and what was learnt of the person).
What was learnt of the person (the correspondences' bone lengths, the torso's standing height) is
forgotten when skeleton_node takes up another person: the node reads ``person``
(``std_msgs/UInt32``, latched: the number of people taken up) and, when it changes, starts over
from the arms' last answers (counted as ``person_changes`` on ``/diagnostics``).

Freshest frame: the subscription (and the one-process teleop) only leaves each skeleton in a
:class:`~pic_ros.freshness.NewestMailbox`; the node's solver thread takes the newest one whenever
it is free, so a starved solver catches up with the person instead of working through a backlog.
A skeleton replaced by a newer one before it was solved is counted as ``superseded``, one that
waited longer than ``max_frame_age`` (node clock) as ``too_old`` (the trajectory publisher holds
meanwhile); on ``/diagnostics``, ``skeletons_in = skeletons_solved + frames_rejected +
dropped_superseded + dropped_too_old + skeletons_waiting``, exactly.

Service ``~/calibrate`` (``std_srvs/Trigger``): measures the person's arm lengths from the last
seconds of skeletons, while they hold the calibration pose (arms stretched out sideways), writes
them to the ``user_profile`` file and uses them from then on (the ``position`` correspondence's
scale). The response says what was measured, or why not (how long the pose was held).

Hand compliance (``admittance`` true; off by default): the node also subscribes a
``geometry_msgs/WrenchStamped`` per solved arm, on the topic of the arm's wrist sensor in the
robot file (``force_torque_sensors``; TIAGo: ``ft_sensor_controller/wrench``, PAL's
force_torque_sensor_broadcaster) or else ``<arm>/wrist_wrench`` (relative, remappable).
Each wrench's force is rotated from its ``frame_id`` link into the base frame by the URDF forward
kinematics at the latest solution; each solver frame steps one variable admittance per arm with
the frame's time step and hands its deviation to the imitator as that arm's target offset, so the
hand yields to a push and comes back (:mod:`pic_ros.motion.hand_compliance`). A wrench older than
``admittance_force_timeout`` counts as zero. Only a solver that honours target offsets can do it
(``whole_body`` true, or the ``position`` correspondence): otherwise the node refuses to start.
Role, stiffness, deviation and force per arm are in the node's ``/diagnostics`` status.

The person over the robot: ``placed_skeleton_markers`` (``visualization_msgs/MarkerArray``, frame
the robot's base frame, stamp the skeleton's) draws the person where the correspondence placed
each solved arm -- at the robot arm's shoulder, robot base frame --, the trunk and head scaled to
the robot around them (:mod:`pic_ros.correspondence.overlay`), beside skeleton_node's
``skeleton_markers`` in the human frame. Published for every solved frame while something
subscribes. The arms are green while the robot follows the person, red while it holds still
(disengaged or emergency-stopped), grey before anything was heard: the node reads ``engaged``
(``std_msgs/Bool``, latched, from trajectory_publisher).

Engage gesture (``engage_gesture_time`` > 0; off by default): when the person holds both wrists
above the head that long (:mod:`pic_ros.human.engage_gesture`), the node publishes
``engage_gesture`` (``std_msgs/Empty``), which trajectory_publisher takes as a request to engage
(the one-process teleop hands it over directly). It fires once per hold.
"""

from __future__ import annotations

from collections.abc import Callable
import math
import os
from pathlib import Path
import threading
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import PointStamped, PoseArray, WrenchStamped
import numpy as np
from pic_ros.correspondence import Calibrator, MappingConfig
from pic_ros.correspondence.overlay import (
    arm_points,
    FollowState,
    overlay_person,
    PersonOverlay,
)
from pic_ros.exceptions import ConfigError, PicRosError, SkeletonError
from pic_ros.freshness import NewestMailbox
from pic_ros.head_and_hands import HeadAndHandsConfig, HeadAndHandsImitator
from pic_ros.human.engage_gesture import EngageGesture, EngageGestureConfig
from pic_ros.imitation import RobotImitator
from pic_ros.motion.hand_compliance import (
    ForceInput,
    HandCompliance,
    HandComplianceConfig,
    robot_orientation,
    wrench_topic,
)
from pic_ros.robot.kinematics.compiled import compiled_in_process
from pic_ros.robot.robot import load_robot, Robot
from pic_ros.ros.conversions import (
    joint_state_to_msg,
    person_overlay_to_msg,
    skeleton_from_msg,
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
from pic_ros.ros.schema import SOLVER_NODE
from pic_ros.skeleton import SkeletonFrame
from pic_ros.solvers import SolverConfig, Termination
from pic_ros.solvers.avoidance import AvoidanceConfig, AvoidanceTermination
from pic_ros.teleoperation import RobotTargets, Teleoperation
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Empty, UInt32
from std_srvs.srv import Trigger
from visualization_msgs.msg import MarkerArray

PARAMETERS = SOLVER_NODE
"""The node's parameters (:data:`pic_ros.ros.schema.SOLVER_NODE`)."""

TargetsHandler = Callable[[RobotTargets], None]
GestureHandler = Callable[[], object]

IDLE_WAIT = 0.5
"""Longest sleep of the idle solver thread [s] (wall time): how soon it sees a stop anyway."""

STOP_WAIT = 10.0
"""Longest wait for the solver thread to finish its solve when the node is destroyed [s]."""


def default_profile_path() -> Path:
    """
    Return where ``~/calibrate`` writes when ``user_profile`` is empty.

    :return: ``$ROS_HOME/pic_ros/user_profile.yaml`` (``ROS_HOME`` defaults to ``~/.ros``).
    """
    home = os.environ.get('ROS_HOME') or os.path.join(os.path.expanduser('~'), '.ros')
    return Path(home) / 'pic_ros' / 'user_profile.yaml'


class SolverNode(Node):
    """
    Map the skeleton onto one robot and solve its arms.

    :param subscribe: Subscribe ``skeleton`` and ``chest`` (False: the one-process teleop hands
        them over with :meth:`offer` and :meth:`set_chest_height`).
    :param solve_thread: Solve in the node's own thread, which takes the newest skeleton offered
        whenever it is free (live). False: :meth:`offer` solves at once in the caller's thread,
        through the same mailbox (deterministic tests on a simulated clock).
    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    """

    def __init__(
        self, *, subscribe: bool = True, solve_thread: bool = True, **kwargs: Any
    ) -> None:
        super().__init__('solver_node', **kwargs)
        # First: destroy_node needs them, also when rclpy destroys a node that failed to start.
        self._mailbox: NewestMailbox[SkeletonFrame] = NewestMailbox()
        self._thread: threading.Thread | None = None
        self.robot: Robot
        self._values: Values = declare_parameters(
            self, PARAMETERS, defaults={'arms': self._robot_arms}
        )
        self.scheduling = apply_realtime_priority(self, self._values)
        self._mailbox.max_age = float(self._values['max_frame_age'])
        self._lock = threading.Lock()
        self._chest_lock = threading.Lock()
        self._chest: tuple[float | None] | None = None  # a chest height not yet applied
        self._person_heard: int | None = None  # a person count not yet applied (chest lock)
        self._person: int | None = None  # the person count the imitation is of (lock held)
        self._people = 0  # person changes: people taken up after the first (lock held)
        self._handlers: list[TargetsHandler] = []
        self._gesture_handlers: list[GestureHandler] = []
        chosen = dict.fromkeys(str(name) for name in self._values['arms'] if str(name))
        self._arms = list(chosen) or list(self.robot.arms)
        building = time.monotonic()
        self._teleoperation = Teleoperation(  # refuses unknown arms
            self._make_imitator(self._values), self._make_head_hands(self._values),
            EngageGesture(self._gesture_config(self._values)), Calibrator(),
        )
        if compiled_in_process():
            # the topics are subscribed only now: say why the start took long
            self.get_logger().info(
                f'compiled the collision and joint-recovery kernels in '
                f'{time.monotonic() - building:.1f} s '
                '(numba, once after an install; later starts read them from its cache)'
            )
        self._head_targets = 0
        self._torso_targets = 0
        self._hand_changes = 0
        self._hand_states: dict[str, str] = {}
        self._frames = RateMeter()
        self._solved = RateMeter()
        self._times: list[float] = []
        self._terminations: dict[str, int] = {t.value: 0 for t in Termination}
        self._avoidance: dict[str, int] = {t.value: 0 for t in AvoidanceTermination}
        self._closest = math.inf
        self._rejected = 0  # frames the solve refused (lock held)
        self._unreadable = 0  # messages that are no skeleton (executor thread)
        self._direct = 0  # frames handed to handle_skeleton directly (lock held)
        self._solved_frames = 0  # frames solved, with targets or (no arm in view) without
        self._too_old_seen = 0  # too_old count at the last warning (lock held)
        self._too_old_reported = 0  # too_old count at the last report (executor thread)
        self._orientation = robot_orientation(self.robot)
        self._joints: dict[str, float] = {}
        self._previous_stamp: float | None = None
        self._compliance = self._make_compliance(self._values)
        self._gestures = 0
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._publisher = self.create_publisher(JointState, 'joint_targets', reliable)
        self._gesture_publisher = self.create_publisher(Empty, 'engage_gesture', reliable)
        self._follow = FollowState.UNKNOWN
        self._markers_publisher = self.create_publisher(
            MarkerArray, 'placed_skeleton_markers', reliable
        )
        self.create_subscription(Bool, 'engaged', self._on_engaged, LATCHED)
        if subscribe:
            self.create_subscription(
                PoseArray, 'skeleton', self._on_skeleton, qos_profile_sensor_data
            )
            self.create_subscription(PointStamped, 'chest', self._on_chest, reliable)
            self.create_subscription(UInt32, 'person', self._on_person, LATCHED)
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self.create_service(Trigger, '~/calibrate', self._on_calibrate)
        if self._compliance is not None:
            for arm_name in self._compliance.arms:
                self.create_subscription(
                    WrenchStamped, wrench_topic(self.robot, arm_name),
                    lambda message, arm=arm_name: self._on_wrench(arm, message),
                    qos_profile_sensor_data,
                )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        if solve_thread:
            self._thread = threading.Thread(target=self._solve_loop, name='solver', daemon=True)
            self._thread.start()
        self.get_logger().info(
            f'{self.robot.name}: solving {", ".join(self._arms)} with '
            f'{self._imitator.solver_config.label}, '
            f'{self._imitator.mapping_config.correspondence} correspondence'
            + ('' if self._compliance is None else
               '; hand admittance on, wrist wrenches on '
               + ', '.join(wrench_topic(self.robot, arm) for arm in self._compliance.arms))
        )

    @property
    def _imitator(self) -> RobotImitator:
        """Return the arms' imitation (lock held, or during start-up)."""
        return self._teleoperation.imitator

    def add_handler(self, handler: TargetsHandler) -> None:
        """
        Hand every solution to a function in this process (the one-process teleop).

        :param handler: Called with the targets of each solved frame that has any.
        """
        self._handlers.append(handler)

    def add_gesture_handler(self, handler: GestureHandler) -> None:
        """
        Hand every engage gesture to a function in this process (the one-process teleop).

        :param handler: Called without arguments each time the gesture is completed.
        """
        self._gesture_handlers.append(handler)

    @staticmethod
    def _gesture_config(values: Values) -> EngageGestureConfig:
        return EngageGestureConfig(hold_time=float(values['engage_gesture_time']))

    def _make_imitator(self, values: Values) -> RobotImitator:
        return RobotImitator(
            self.robot,
            SolverConfig.from_parameters(values),
            MappingConfig.from_parameters(values),
            arms=self._arms,
            whole_body=bool(values['whole_body']),
            avoidance=AvoidanceConfig(margin=float(values['self_collision_margin'])),
        )

    def set_chest_height(self, height: float | None) -> None:
        """
        Give the person's chest height for whole-body imitation (the in-process teleop).

        It is used from the next solve on; the call never waits for a solve in progress.

        :param height: Chest height along the tracker's z axis [m], or None when unknown.
        """
        with self._chest_lock:
            self._chest = (height,)

    def set_person(self, people: int) -> None:
        """
        Say how many people skeleton_node has taken up so far (the in-process teleop).

        From the next solve on: when the count differs from the one the imitation is of, what
        was learnt of the person is forgotten (the arms go on from their last answers).

        :param people: The count (``person``; 1 for the first).
        """
        with self._chest_lock:
            self._person_heard = int(people)

    def _on_person(self, message: UInt32) -> None:
        self.set_person(int(message.data))

    def _take_person(self) -> None:
        """Apply the person count heard last: another person starts over (lock held)."""
        with self._chest_lock:
            heard, self._person_heard = self._person_heard, None
        if heard is None or heard == self._person:
            return
        if self._person is not None:
            imitator = self._imitator
            imitator.reset(
                {name: imitator.q(name) for name in self._arms}, person=True,
                torso=imitator.torso_value,
            )
            self._people += 1
            self.get_logger().info(
                f'another person (number {heard} taken up): what was learnt of the last one is '
                'forgotten'
            )
        self._person = heard

    def _on_engaged(self, message: Bool) -> None:
        self._follow = FollowState.ENGAGED if message.data else FollowState.STOPPED

    @property
    def follow_state(self) -> FollowState:
        """Return whether the robot follows, as last heard on ``engaged`` (the markers' colour)."""
        return self._follow

    def _on_chest(self, message: PointStamped) -> None:
        self.set_chest_height(float(message.point.z))

    def _make_head_hands(self, values: Values) -> HeadAndHandsImitator:
        return HeadAndHandsImitator(
            self.robot,
            HeadAndHandsConfig.from_parameters(values),
            MappingConfig.from_parameters(values),
            arms=self._arms,
        )

    def _make_compliance(self, values: Values) -> HandCompliance | None:
        """Return the hand compliance (None when off); refuse a solver that cannot honour it."""
        config = HandComplianceConfig.from_parameters(values)
        if not config.enabled:
            return None
        correspondence = MappingConfig.from_parameters(values).correspondence
        if not values.get('whole_body', False) and correspondence != 'position':
            raise ConfigError(
                'admittance needs a solver that takes hand target offsets: set whole_body true '
                f'(or correspondence position); got whole_body false and correspondence '
                f'{correspondence}'
            )
        return HandCompliance(self._orientation, self._arms, config)

    def _apply(self, values: Values) -> None:
        imitator = self._make_imitator(values)
        head_hands = self._make_head_hands(values)
        compliance = self._make_compliance(values)
        gesture = self._gesture_config(values)
        self._mailbox.max_age = float(values['max_frame_age'])
        with self._lock:
            teleoperation = self._teleoperation
            if gesture != teleoperation.gesture.config:
                teleoperation.gesture.config = gesture
            old = self._compliance
            if compliance is not None and old is not None:
                if (compliance.config, compliance.arms) == (old.config, old.arms):
                    compliance = old  # its settings unchanged: a pushed hand stays compliant
                else:
                    compliance.adopt(old)  # new settings start stiff, at the target
            self._compliance = compliance
            imitator.reset(
                {name: self._imitator.q(name) for name in self._arms},
                torso=self._imitator.torso_value,
            )
            imitator.adopt(self._imitator)
            teleoperation.imitator = imitator
            head_hands.adopt(teleoperation.head_and_hands)
            teleoperation.head_and_hands = head_hands
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))

    def _on_calibrate(
        self, request: Trigger.Request, response: Trigger.Response
    ) -> Trigger.Response:
        """Measure the arm lengths from the latest hold of the calibration pose; save them."""
        del request  # Trigger has no fields.
        target = Path(str(self._values['user_profile']) or default_profile_path())
        try:
            with self._lock:
                profile = self._teleoperation.calibrator.profile(name=target.stem)
            written = profile.save(target)
        except (ConfigError, OSError) as err:
            response.success = False
            response.message = f'calibration failed: {err}'
            self.get_logger().warning(response.message)
            return response
        lengths = ', '.join(
            f'{side.value} {arm.upper_arm:.3f} / {arm.forearm:.3f} m'
            for side, arm in sorted(profile.arms.items(), key=lambda item: item[0].value)
        )
        results = self.set_parameters([Parameter('user_profile', value=str(written))])
        if not results[0].successful:
            response.success = False
            response.message = f'wrote {written} but could not use it: {results[0].reason}'
            return response
        response.success = True
        response.message = (
            f'wrote {written} (upper arm / forearm: {lengths}; {profile.frames} frames); '
            f'used by the position correspondence'
        )
        self.get_logger().info(response.message)
        return response

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_wrench(self, arm: str, message: WrenchStamped) -> None:
        """Keep an arm's latest wrist force (base frame, at the latest solution)."""
        force = message.wrench.force
        with self._lock:
            if self._compliance is None:
                return
            status = self._compliance.observe(
                arm, self._now(), message.header.frame_id, (force.x, force.y, force.z),
                self._joints,
            )
        topic = wrench_topic(self.robot, arm)
        if status is ForceInput.UNKNOWN_FRAME:
            self.get_logger().warning(
                f'{topic}: ignoring wrenches in frame {message.header.frame_id!r}: not a link of '
                f'{self.robot.name} below {self.robot.base_frame}',
                throttle_duration_sec=5.0,
            )
        elif status is not ForceInput.ACCEPTED:
            self.get_logger().warning(
                f'{topic}: ignoring a wrench ({status.value})', throttle_duration_sec=5.0
            )

    def _hand_offsets(self, stamp: float) -> dict[str, np.ndarray] | None:
        """Step the hands' admittances by the skeleton's time step; None when compliance is off."""
        if self._compliance is None:
            return None
        previous, self._previous_stamp = self._previous_stamp, stamp
        dt = 0.0 if previous is None else stamp - previous
        return self._compliance.step(self._now(), dt)

    def _on_skeleton(self, message: PoseArray) -> None:
        try:
            frame = skeleton_from_msg(message)
        except SkeletonError as err:
            self._unreadable += 1
            self.get_logger().warning(f'dropping skeleton: {err}', throttle_duration_sec=2.0)
            return
        self.offer(frame)

    def offer(self, frame: SkeletonFrame) -> None:
        """
        Hand a skeleton to the solver; it is solved if it is still the newest when it is free.

        Never waits for a solve in progress (with the solver thread). The frame's arrival time
        is the node clock now: it is dropped as ``too_old`` if it waits longer than
        ``max_frame_age``.

        :param frame: Skeleton in the body frame (from the topic or handed over in-process).
        """
        self._mailbox.put(frame, self._now())
        if self._thread is None:
            self.solve_newest()

    def solve_newest(self) -> bool:
        """
        Solve the newest skeleton offered, in the caller's thread (the solver thread's step).

        :return: Whether one was solved (False: none waited, or it was too old).
        """
        with self._lock:
            frame = self._mailbox.take(self._now())
            if frame is None:
                self._warn_too_old()
                return False
            targets, overlay = self._solve(frame)
        self._hand_on(targets, overlay)
        return True

    def _warn_too_old(self) -> None:
        too_old = self._mailbox.counts.too_old
        if too_old != self._too_old_seen:
            self._too_old_seen = too_old
            self.get_logger().warning(
                f'dropping skeletons that waited longer than max_frame_age '
                f'({self._mailbox.max_age:g} s) for the solver ({too_old} so far): the computer '
                'is too busy; the robot holds instead of following the past',
                throttle_duration_sec=2.0,
            )

    def _solve_loop(self) -> None:
        """Take the newest skeleton whenever one waits and solve it, until the node stops."""
        mailbox = self._mailbox
        while not mailbox.closed:
            if not mailbox.wait(IDLE_WAIT):
                continue
            try:
                self.solve_newest()
            except Exception as err:  # noqa: BLE001 (the solver thread survives anything)
                if not self.context.ok():
                    return  # shut down by a signal meanwhile: publishing fails, nothing to say
                self.get_logger().error(
                    f'solver thread: {type(err).__name__}: {err}', throttle_duration_sec=2.0
                )

    def handle_skeleton(self, frame: SkeletonFrame) -> None:
        """
        Solve one body-frame skeleton now, in the caller's thread, and publish the joint targets.

        The live path goes through :meth:`offer` (the newest frame only); this solves every
        frame it is given (tests, tools). Counted in ``skeletons_in`` as well.

        :param frame: Skeleton in the body frame.
        """
        with self._lock:
            self._direct += 1
            targets, overlay = self._solve(frame)
        self._hand_on(targets, overlay)

    def _hand_on(self, targets: RobotTargets | None, overlay: PersonOverlay | None) -> None:
        """Publish the joint targets of a solved frame and hand them over (lock not held)."""
        if overlay is not None:
            self._markers_publisher.publish(
                person_overlay_to_msg(overlay, self.robot.base_frame, self._follow)
            )
        if targets is None or not targets.groups:
            return
        if self._publisher.get_subscription_count() > 0:
            self._publisher.publish(
                joint_state_to_msg(targets.stamp, targets.joint_names, targets.positions)
            )
        for handler in self._handlers:
            handler(targets)

    def _solve(
        self, frame: SkeletonFrame
    ) -> tuple[RobotTargets | None, PersonOverlay | None]:
        """
        Solve one skeleton (lock held) and count what the step did.

        :return: The targets, None when the frame was refused; the person over the robot when
            something subscribes to ``placed_skeleton_markers`` and an arm was placed.
        """
        self._take_person()
        with self._chest_lock:
            chest, self._chest = self._chest, None
        if chest is not None:
            self._imitator.set_chest_height(chest[0])
        try:
            targets = self._teleoperation.step(frame, self._hand_offsets(frame.stamp))
        except PicRosError as err:
            self._rejected += 1
            self.get_logger().warning(f'dropping skeleton: {err}', throttle_duration_sec=2.0)
            return None, None
        finally:
            self._count_gesture()
        self._solved_frames += 1
        self._count(targets)
        if targets.groups:
            self._joints.update(zip(targets.joint_names, targets.positions, strict=True))
            self._solved.tick()
        return targets, self._overlay(frame, targets)

    def _overlay(self, frame: SkeletonFrame, targets: RobotTargets) -> PersonOverlay | None:
        """Place the person on the robot where the solved arms were placed (lock held)."""
        step = targets.imitation
        if step is None or not step.arms or self._markers_publisher.get_subscription_count() == 0:
            return None
        placed = {name: arm_points(arm.targets) for name, arm in step.arms.items()}
        return overlay_person(frame, placed, self._imitator.mapping_config.mode)

    def _count_gesture(self) -> None:
        """Ask to engage when the gesture was completed, solved or not (lock held)."""
        completed = self._teleoperation.gestures
        if completed != self._gestures:
            self._gestures = completed
            self._engage_gesture()

    def _count(self, targets: RobotTargets) -> None:
        """Add a solved frame to the counts on ``/diagnostics`` (lock held)."""
        step = targets.imitation
        assert step is not None and targets.head_and_hands is not None  # a solved frame
        for arm_step in step.arms.values():
            self._times.append(arm_step.solve_time)
            self._terminations[arm_step.result.termination.value] += 1
        if step.avoidance is not None:
            self._avoidance[step.avoidance.termination.value] += 1
            if math.isfinite(step.avoidance.min_distance):
                self._closest = min(self._closest, step.avoidance.min_distance)
        self._torso_targets += step.torso is not None
        extra = targets.head_and_hands
        self._head_targets += extra.head is not None
        for side, estimate in extra.hands.items():
            if self._hand_states.get(side.value, estimate.state.value) != estimate.state.value:
                self._hand_changes += 1
            self._hand_states[side.value] = estimate.state.value
        if len(self._times) > 2000:
            del self._times[:1000]

    def _engage_gesture(self) -> None:
        """Ask trajectory_publisher to engage: on the topic and to the in-process handlers."""
        self.get_logger().info(
            f'engage gesture: both wrists above the head for '
            f'{self._teleoperation.gesture.config.hold_time:g} s; asking to engage'
        )
        self._gesture_publisher.publish(Empty())
        for handler in self._gesture_handlers:
            handler()

    def _statuses(self) -> list[DiagnosticStatus]:
        now = self.get_clock().now().nanoseconds * 1e-9
        with self._lock:  # the solver thread takes and solves under it: counts read together
            counts = self._mailbox.counts
            arrived = counts.put + self._direct + self._unreadable
            self._frames.tick(arrived - self._frames.total)
            times = np.array(self._times[-1000:]) * 1e3
            values: dict[str, object] = {
                'robot': self.robot.name,
                'solver': self._imitator.solver_config.label,
                'skeleton_rate_hz': round(self._frames.rate(now), 2),
                'solved_rate_hz': round(self._solved.rate(now), 2),
                'skeletons_in': arrived,
                'skeletons_solved': self._solved_frames,
                'frames_rejected': self._rejected + self._unreadable,
                'dropped_superseded': counts.superseded,
                'dropped_too_old': counts.too_old,
                'skeletons_waiting': counts.waiting,
                'max_frame_age_s': self._mailbox.max_age,
                'solve_ms_p50': round(float(np.percentile(times, 50)), 3) if times.size else 'n/a',
                'solve_ms_p99': round(float(np.percentile(times, 99)), 3) if times.size else 'n/a',
            }
            values.update({f'arm_solves_{key}': n for key, n in self._terminations.items()})
            values['self_collision_margin_m'] = self._imitator.avoidance.margin
            values.update({f'avoidance_{key}': n for key, n in self._avoidance.items()})
            values['closest_links_m'] = (
                round(self._closest, 4) if math.isfinite(self._closest) else 'n/a'
            )
            values['correspondence'] = self._imitator.mapping_config.correspondence
            for name, correspondence in self._imitator.correspondences.items():
                for key, value in correspondence.status().items():
                    values[f'{key}_{name}'] = value
            values['calibration_pose_held_s'] = round(self._teleoperation.calibrator.held(), 2)
            values['person_changes'] = self._people
            values['whole_body'] = self._imitator.whole_body
            values['torso_targets'] = self._torso_targets
            values['head_targets'] = self._head_targets
            for side, state in sorted(self._hand_states.items()):
                values[f'hand_{side}'] = state
            values['hand_state_changes'] = self._hand_changes
            values['engage_gesture_time'] = self._teleoperation.gesture.config.hold_time
            values['engage_gestures'] = self._gestures
            values['admittance'] = self._compliance is not None
            if self._compliance is not None:
                values.update(self._compliance.status())
        level = DiagnosticStatus.OK if self._solved.total else DiagnosticStatus.WARN
        summary = 'solving' if self._solved.total else 'no skeleton solved yet'
        if counts.too_old > self._too_old_reported:
            level, summary = DiagnosticStatus.WARN, 'skeletons too old when solved: holding'
        self._too_old_reported = counts.too_old
        name = f'pic_ros: {self.get_fully_qualified_name()}'
        return [status_to_msg(name, self.robot.name, level, summary, values)]

    def _robot_arms(self, values: Values) -> list[str]:
        """Load the robot the ``robot`` parameter names; return its arms (``arms``' default)."""
        self.robot = load_robot(str(values['robot']))
        return list(self.robot.arms)

    def destroy_node(self) -> None:
        """Stop the solver thread (it finishes the solve in progress) and destroy the node."""
        self._mailbox.close()
        if self._thread is not None:
            self._thread.join(timeout=STOP_WAIT)
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    """
    Run the node until shutdown (``ros2 run pic_ros solver_node [options]``).

    :param args: The command line, program name first (default: ``sys.argv``): an option per
        parameter (``--help`` lists them), then ``--ros-args ...``.
    """
    run_node(
        SolverNode, PARAMETERS, args, prog='solver_node',
        description="The skeleton in, the joint targets of one robot's arms out (PIC, PICs "
        'or FABRIK).',
    )


if __name__ == '__main__':
    main()
