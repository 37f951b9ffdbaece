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

Grippers, with ``gripper_interface`` ``gripper_action``: instead of a trajectory stream, each
gripper's ``control_msgs/action/GripperCommand`` action (robot file: ``grippers.<arm>.action``,
default ``<controller>/gripper_cmd``) gets a goal when the position its commander heads to
changes by more than the file's threshold, and a cancel when the robot is disengaged or stopped
(:mod:`pic_ros.motion.gripper_goals`; the client: :mod:`pic_ros.ros.gripper_action`). The node
refuses to start when a gripper has no ``action`` entry or ``control_msgs`` cannot be imported.

What is sent is decided by one :class:`~pic_ros.motion.commander.ArmCommander` per group (position,
velocity and acceleration limits; hold, neutral and re-engagement on tracking loss; pacing; clock
jumps); this node only wires it: it times the targets on its own clock when they arrive
(``use_sim_time`` for replays), steps every arm on each target and from a timer at ``rate``, and
publishes the chunks. On simulated time a timer step, and targets taken from ``joint_targets``,
first take the newest ``/clock`` waiting (:mod:`pic_ros.ros.sim_clock`), so a starved process does
not stamp its chunks with the time from before its stall. Targets handed over in-process by
``teleop``'s solver thread (:meth:`TrajectoryPublisherNode.hand_over_targets`) are taken there at
once on the system clock, and by the executor's thread on simulated time, after the newest
``/clock``.

Engagement (:class:`~pic_ros.motion.engagement.Engagement`, one per node): the node starts
disengaged unless ``start_engaged`` -- every arm holds still, nothing is sent before anything was
commanded -- and follows the person only while engaged; disengaged or stopped, each arm brakes to
rest within its limits and holds. The services ``~/engage``, ``~/disengage`` and
``~/reset_estop`` (``std_srvs/srv/Trigger``) answer with what happened or why they were refused;
``estop`` (``std_msgs/Bool``, reliable, every value kept) latches a stop on a true value until
``~/reset_estop``, which is refused while the last value is still true and leaves the robot
disengaged; ``engage_gesture`` (``std_msgs/Empty``, from solver_node's engage gesture) engages
like ``~/engage``. ``person`` (``std_msgs/UInt32``, latched, skeleton_node's count of the
people taken up): an engagement is for one person; another person taken up while engaged
disengages the robot until an operator engages again (``engage_each_person``; false follows
whoever is taken up). ``engaged`` (``std_msgs/Bool``, reliable, transient local, depth 1: a late
subscriber gets the current value) is published at start and on every change. The state and the
reason of the last transition are a status of ``/diagnostics`` of their own
(``<node> engagement``).

Timing on ``/diagnostics``, per controller: ``stalls`` (steps that came after the last chunk's
plan had run out, so that the controller was braking on its tail or at rest: a starved process
or a stalled clock; WARN in a report with a new one), the longest time between two steps since
the previous report, the chunks stamped 0 (holding still), the delay of ``joint_states`` (this
node's clock minus their stamp, the largest since the previous report: how late the robot's
state reaches the node, on a shared clock), the age of the targets on arrival (this node's clock
minus the skeleton's capture stamp, the largest since the previous report: the delay from the
tracker to here, on a shared clock) and the continuity check of every chunk sent
(:class:`~pic_ros.motion.streaming.ContinuityMonitor` against the joints' velocity, acceleration
and jerk limits, each chunk taken at its step: ``segment_violations``, ERROR when not 0, and the
peak share of a limit), the chunks made again because the process was starved before publishing
(``chunks_withdrawn_late``) and those whose publish calls ended after their plans' start
(``chunks_sent_late``: the process waited for the CPU while publishing; WARN in a report with a
new one), the current ``plan_ahead`` and the largest delay this node measured
(:class:`~pic_ros.motion.delay.DelayAllowance`: its timer's lateness, twice, plus its step's
duration, and the age of ``joint_states``; the plans start that much later after their step,
up to ``max_plan_ahead``, so that a late chunk still continues the command). A delay shows
there; it never freezes the arm: a chunk that holds still
is stamped 0 (start on arrival) and a moving one stays acceptable ``LATE_WINDOW`` after its stamp
(:mod:`pic_ros.motion.streaming`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import math
import threading
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticStatus
from pic_ros.exceptions import PicRosError, SkeletonError
from pic_ros.motion import plan_phases
from pic_ros.motion.clock import NANOSECONDS, RelativeClock
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.motion.delay import DelayAllowance
from pic_ros.motion.engagement import (
    Engagement,
    EngagementRequest,
    EngagementSource,
    EngagementState,
    Transition,
)
from pic_ros.motion.gripper_goals import GoalKind, GRIPPER_ACTION, GripperGoals
from pic_ros.motion.guard import CollisionGuard, GuardVerdict
from pic_ros.motion.limiter import MotionLimits
from pic_ros.motion.streaming import ContinuityMonitor, TrajectoryChunk
from pic_ros.robot.kinematics.compiled import compiled_in_process
from pic_ros.robot.robot import load_robot
from pic_ros.robot.torso import TORSO_GROUP
from pic_ros.ros.conversions import (
    joint_state_from_msg,
    status_to_msg,
    trajectory_to_cdr,
)
from pic_ros.ros.diagnostics import DiagnosticsReporter
from pic_ros.ros.gripper_action import (
    ActionGripperClient,
    GripperClient,
    GripperClientFactory,
    require_control_msgs,
)
from pic_ros.ros.parameters import (
    apply_realtime_priority,
    declare_parameters,
    validation_callback,
    Values,
)
from pic_ros.ros.qos import EVERY_VALUE, LATCHED  # estop: every value; engaged: the last one
from pic_ros.ros.runner import run_node
from pic_ros.ros.schema import TRAJECTORY_PUBLISHER
from pic_ros.ros.sim_clock import take_newest_clock
from pic_ros.teleoperation import RobotTargets
from rclpy.exceptions import InvalidHandle
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Empty, UInt32
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

PARAMETERS = TRAJECTORY_PUBLISHER
"""The node's parameters (:data:`pic_ros.ros.schema.TRAJECTORY_PUBLISHER`)."""


class _Timing:
    """What one controller's stream looked like since the previous report (lock held)."""

    def __init__(self, limits: MotionLimits) -> None:
        self.monitor = ContinuityMonitor(limits)
        self.reported_stalls = 0
        self.reported_withdrawn = 0
        self.sent_late = 0
        """Chunks whose publishing ended after their plan's start (:meth:`_check_sent`)."""
        self.reported_sent_late = 0
        self.last_step: float | None = None
        self.gap = 0.0


class _GripperLink:
    """A gripper commanded by action: its goal decisions and its client (lock held)."""

    def __init__(
        self, name: str, goals: GripperGoals, client: GripperClient, resolved: str
    ) -> None:
        self.name = name
        self.goals = goals
        self.client = client
        self.resolved = resolved
        self.unsent = 0
        """Goals decided but not sent since the last one sent (no server)."""

    def step(self, commander: ArmCommander) -> None:
        """Decide on the step the commander just made, and carry it out."""
        guidance = commander.guidance
        if guidance is None:
            return
        decision = self.goals.decide(guidance.state, guidance.reference)
        if decision.kind is GoalKind.SEND:
            if self.client.send(decision.position, decision.max_effort):
                self.goals.done(decision)
                self.unsent = 0
            else:
                self.unsent += 1  # decided again at the next step
        elif decision.kind is GoalKind.CANCEL:
            self.client.cancel()
            self.goals.done(decision)

    def values(self) -> dict[str, object]:
        """Return the diagnostics' values of the gripper's action."""
        last = self.goals.last_position
        return {
            'interface': 'gripper_action',
            'action': self.resolved,
            'action_server': 'ready' if self.client.ready() else 'not available',
            'goals_sent': self.goals.sent,
            'cancels_sent': self.goals.cancelled,
            'last_goal_position': '-' if math.isnan(last) else f'{last:.4f}',
            'goals_waiting_for_server': self.unsent,
        }


class TrajectoryPublisherNode(Node):
    """
    Stream the commands of every arm controller of one robot.

    :param subscribe: Subscribe ``joint_targets`` (the one-process teleop hands them over
        directly instead).
    :param gripper_client: Makes a gripper's action client with ``gripper_interface``
        ``gripper_action`` (default: :class:`~pic_ros.ros.gripper_action.ActionGripperClient`,
        which needs ``control_msgs``).
    :param kwargs: Passed to :class:`rclpy.node.Node` (e.g. ``parameter_overrides``).
    :raises ConfigError: With ``gripper_action``, if a gripper has no ``action`` entry or
        ``control_msgs`` cannot be imported (and no ``gripper_client`` was given).
    """

    def __init__(
        self, *, subscribe: bool = True, gripper_client: GripperClientFactory | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__('trajectory_publisher', **kwargs)
        self._values: Values = declare_parameters(self, PARAMETERS)
        self.scheduling = apply_realtime_priority(self, self._values)
        self._lock = threading.Lock()
        self._time_base = RelativeClock()  # the node's times: seconds since an origin of its own
        self.robot = load_robot(str(self._values['robot']))
        config = CommanderConfig.from_parameters(self._values)
        self._engagement = Engagement(
            bool(self._values['start_engaged']), self._now(), EngagementSource.PARAMETER,
            bool(self._values['engage_each_person']),
        )
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._groups: dict[str, tuple[ArmCommander, Publisher | None]] = {}
        self._timing: dict[str, _Timing] = {}
        self._state_delay = 0.0
        self._target_age = -math.inf
        self._delays = DelayAllowance()
        self._grippers = self._gripper_links(gripper_client)
        for name, model in self.robot.groups.items():
            publisher = None if name in self._grippers else self.create_publisher(
                JointTrajectory, f'{model.controller}/joint_trajectory', reliable
            )
            commander = ArmCommander(model, config, engaged=self._engagement.engaged)
            self._groups[name] = (commander, publisher)
            self._timing[name] = _Timing(MotionLimits.from_arm(model))
        self._clock_restarts = 0
        self._limit_refusals = 0
        building, compiled = time.monotonic(), compiled_in_process()
        plan_phases.load()  # now, not in the first step
        self._guard = CollisionGuard(self.robot, float(self._values['self_collision_margin']))
        if compiled_in_process() > compiled:
            self.get_logger().info(
                'compiled the motion and collision kernels in '
                f'{time.monotonic() - building:.1f} s '
                '(numba, once after an install; later starts read them from its cache)'
            )
        self._guard_last = GuardVerdict(frozenset(), float('inf'))
        self._engaged_publisher = self.create_publisher(Bool, 'engaged', LATCHED)
        self._engaged_publisher.publish(Bool(data=self._engagement.engaged))
        self.create_subscription(
            JointState, 'joint_states', self._on_joint_states, qos_profile_sensor_data
        )
        self.create_subscription(Bool, 'estop', self._on_estop, EVERY_VALUE)
        if subscribe:
            self.create_subscription(JointState, 'joint_targets', self._on_targets, reliable)
            self.create_subscription(
                Empty, 'engage_gesture', lambda _message: self.engage_by_gesture(), reliable
            )
            self.create_subscription(
                UInt32, 'person', lambda message: self.set_person(int(message.data)), LATCHED
            )
        engagement = self._engagement
        for name, action in (
            ('~/engage', engagement.engage),
            ('~/disengage', engagement.disengage),
            ('~/reset_estop', engagement.reset_estop),
        ):
            self.create_service(Trigger, name, self._trigger(action))
        self._timer = self.create_timer(config.period, self._on_timer)
        self._handover_lock = threading.Lock()  # targets handed over from another thread
        self._waiting: RobotTargets | None = None
        self._superseded = 0
        self._handover = self.create_guard_condition(self._take_waiting_targets)
        self.add_on_set_parameters_callback(
            validation_callback(self, PARAMETERS, self._values, self._apply)
        )
        self._diagnostics = DiagnosticsReporter(
            self, float(self._values['diagnostics_period']), self._statuses
        )
        topics = ', '.join(
            publisher.topic_name for _, publisher in self._groups.values() if publisher
        )
        self.get_logger().info(f'{self.robot.name}: streaming to {topics}')
        for link in self._grippers.values():
            self.get_logger().info(
                f'{link.name}: GripperCommand goals to {link.resolved} (position of '
                f'{link.goals.action.joint}, max_effort {link.goals.action.max_effort:g})'
            )
        self.get_logger().info(self._engagement.last_transition.reason)

    def _gripper_links(
        self, factory: GripperClientFactory | None
    ) -> dict[str, _GripperLink]:
        """
        Return the grippers commanded by action, by group name (none with ``trajectory``).

        :param factory: The clients' factory, or None for the rclpy one.
        :raises ConfigError: If a gripper has no ``action`` entry, or ``control_msgs`` is
            missing while the rclpy clients are to be made.
        """
        if self._values['gripper_interface'] != GRIPPER_ACTION:
            return {}
        if not self.robot.grippers:
            self.get_logger().warning(
                f'gripper_interface is gripper_action but {self.robot.name} has no grippers'
            )
            return {}
        goals = {
            gripper.group.name: GripperGoals(gripper) for gripper in self.robot.grippers.values()
        }  # the robot file's entries are checked before the package
        if factory is None:
            require_control_msgs()
            factory = ActionGripperClient
        links = {}
        for name, item in goals.items():
            client = factory(self, item.name)
            resolved = self.resolve_topic_name(item.name)
            links[name] = _GripperLink(name, item, client, resolved)
        return links

    @property
    def engagement(self) -> EngagementState:
        """Return whether the robot follows the person, is disengaged or emergency-stopped."""
        with self._lock:
            return self._engagement.state

    def engage_by_gesture(self) -> Transition:
        """
        Engage because the operator made the engage gesture (solver_node's, in-process or topic).

        :return: What happened (refused while the emergency stop is latched).
        """
        return self._request(lambda now: self._engagement.engage(now, EngagementSource.GESTURE))

    def set_person(self, people: int) -> Transition:
        """
        Take skeleton_node's person count (``person``; the in-process teleop calls this).

        Another person than the one engaged for disengages the robot (``engage_each_person``).

        :param people: How many people were taken up so far (1 for the first).
        :return: What happened.
        """
        return self._request(lambda now: self._engagement.take_person(now, people))

    def _trigger(
        self, action: Callable[[float, EngagementSource], Transition]
    ) -> Callable[[Trigger.Request, Trigger.Response], Trigger.Response]:
        """Return a Trigger service callback that puts one engagement request from a service."""
        def answer(request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            del request  # Trigger has no fields.
            return self._answer(
                response, self._request(lambda now: action(now, EngagementSource.SERVICE))
            )
        return answer

    def _on_estop(self, message: Bool) -> None:
        self._request(
            lambda now: self._engagement.set_estop(now, bool(message.data), EngagementSource.TOPIC)
        )

    @staticmethod
    def _answer(response: Trigger.Response, transition: Transition) -> Trigger.Response:
        response.success = transition.accepted
        response.message = transition.reason
        return response

    def _request(self, ask: Callable[[float], Transition]) -> Transition:
        """
        Put one request to the engagement; on a change, tell every arm, step it and publish.

        :param ask: Makes the request at the given time [s] (this node's clock).
        :return: The engagement's answer.
        """
        with self._lock:
            now = self._now()
            was_engaged = self._engagement.engaged
            transition = ask(now)
            engaged = self._engagement.engaged
            if transition.changed:
                for commander, _ in self._groups.values():
                    commander.engaged = engaged
                self._step_groups(now, list(self._groups))  # brake or blend in at once
            if engaged != was_engaged:
                self._engaged_publisher.publish(Bool(data=engaged))
        logger = self.get_logger()
        if transition.changed and (
            transition.state is EngagementState.ESTOPPED
            or transition.request is EngagementRequest.PERSON
        ):
            logger.warning(transition.reason)
        elif transition.changed:
            logger.info(transition.reason)
        elif not transition.accepted:
            logger.warning(
                f'{transition.request.value} ({transition.source.value}): {transition.reason}',
                throttle_duration_sec=1.0,
            )
        return transition

    def _apply(self, values: Values) -> None:
        config = CommanderConfig.from_parameters(values)  # refuses before anything changes
        with self._lock:
            self._engagement.each_person = bool(values['engage_each_person'])
            for commander, _ in self._groups.values():
                commander.config = config  # keeps the state, the command and any blend
            if values['self_collision_margin'] != self._values['self_collision_margin']:
                guard = CollisionGuard(self.robot, float(values['self_collision_margin']))
                # /diagnostics counts since the node started, whatever the margin
                guard.checks, guard.refusals = self._guard.checks, self._guard.refusals
                guard.straightened = self._guard.straightened
                self._guard = guard
                self._guard_last = GuardVerdict(frozenset(), float('inf'))
        if values['rate'] != self._values['rate']:
            self.destroy_timer(self._timer)
            self._timer = self.create_timer(config.period, self._on_timer)
        if values['diagnostics_period'] != self._values['diagnostics_period']:
            self._diagnostics.set_period(float(values['diagnostics_period']))

    def _now(self) -> float:
        """Return this node's time: its clock since its origin [s] (:class:`RelativeClock`)."""
        return self._time_base.seconds(self.get_clock().now().nanoseconds)

    def _fresh_now(self, poll: bool) -> float:
        """
        Return :meth:`_now`; with ``poll`` (the executor's thread) after the newest ``/clock``.

        On simulated time a step must not read the time from before a stall of this process
        (:mod:`pic_ros.ros.sim_clock`); another thread reads the clock as the executor set it.
        """
        if poll:
            take_newest_clock(self)
        return self._now()

    def _on_joint_states(self, message: JointState) -> None:
        try:
            _, positions = joint_state_from_msg(message)
        except SkeletonError:
            return
        stamp = message.header.stamp
        with self._lock:
            if stamp.sec > 0 or stamp.nanosec > 0:
                now = self._now()
                age = now - self._time_base.since_origin(stamp.sec * NANOSECONDS + stamp.nanosec)
                self._state_delay = max(self._state_delay, age)
                self._delays.state_age(now, age)
            for arm, (commander, _) in self._groups.items():
                names = commander.joint_names
                if not all(name in positions for name in names):
                    continue
                measured = [positions[name] for name in names]
                if not commander.started:
                    commander.start_from(measured)
                    self.get_logger().info(f'{arm}: starting from joint_states')
                else:
                    commander.observe(measured)

    def _on_targets(self, message: JointState) -> None:
        try:
            stamp, positions = joint_state_from_msg(message)
        except SkeletonError as err:
            self.get_logger().warning(f'dropping joint targets: {err}', throttle_duration_sec=2.0)
            return
        # the executor's thread, as the timer's: it may take the newest /clock
        self._take_targets(RobotTargets.from_joints(self.robot, stamp, positions), poll=True)

    def handle_targets(self, targets: RobotTargets) -> None:
        """
        Take a frame's targets and publish the next command of every group they cover.

        The node times the targets on its own clock when they arrive (the tracking-loss
        supervisor needs arrival times); the capture stamp gives the age of the targets on
        arrival, on ``/diagnostics`` (on a clock shared with the tracker).

        :param targets: The targets by group, with the skeleton's capture stamp.
        """
        self._take_targets(targets, poll=False)  # any thread: the clock as the executor set it

    def hand_over_targets(self, targets: RobotTargets) -> None:
        """
        Take a frame's targets from another thread (the one-process ``teleop``'s solver thread).

        On the system clock they are taken at once, in the caller's thread
        (:meth:`handle_targets`: the shortest way to the controllers). On simulated time the
        caller cannot apply the newest ``/clock`` (only the executor's thread may,
        :mod:`pic_ros.ros.sim_clock`): the targets wait for the executor's thread, which takes
        the newest ``/clock`` and then them, as it takes ``joint_targets``. Targets still
        waiting when newer ones come are replaced, and counted (``targets_superseded`` on
        ``/diagnostics``): the arms follow the newest.

        :param targets: The targets by group, with the skeleton's capture stamp.
        """
        if not self.get_clock().ros_time_is_active:
            self.handle_targets(targets)
            return
        with self._handover_lock:
            if self._waiting is not None:
                self._superseded += 1
            self._waiting = targets
        try:
            self._handover.trigger()  # thread-safe: the executor calls _take_waiting_targets
        except InvalidHandle:  # destroyed: the node is shutting down
            pass

    def _take_waiting_targets(self) -> None:
        """Take the targets handed over last, if any (the executor's thread, guard condition)."""
        with self._handover_lock:
            targets, self._waiting = self._waiting, None
        if targets is not None:
            self._take_targets(targets, poll=True)

    def _take_targets(self, targets: RobotTargets, poll: bool) -> None:
        """Take targets (:meth:`handle_targets`); ``poll``: on the executor's thread."""
        values = dict(zip(targets.joint_names, targets.positions))
        with self._lock:  # the clock is read under the lock: times in the order of the steps
            now = self._fresh_now(poll)
            if targets.stamp > 0.0:
                captured = self._time_base.since_origin(round(targets.stamp * NANOSECONDS))
                self._target_age = max(self._target_age, now - captured)
            covered = [
                name for name, (commander, _) in self._groups.items()
                if commander.covers(values) and not commander.on_target(now, values).rejected
            ]
            self._step_groups(now, covered, poll=poll)

    def _on_timer(self) -> None:
        with self._lock:
            now = self._fresh_now(poll=True)
            period = next(iter(self._groups.values()))[0].config.period if self._groups else 0.0
            self._step_groups(now, list(self._groups), self._delays.tick(now, period), poll=True)

    def _step_groups(
        self, now: float, names: Sequence[str], lateness: float = 0.0, poll: bool = False
    ) -> None:
        """
        Step some groups, check the arms' chunks with the collision guard, publish (lock held).

        An arm whose chunk the guard refuses brakes along its path instead (the guard's counts
        are on ``/diagnostics``). Each plan starts ``plan_ahead`` plus the delays measured
        lately after the step (:class:`~pic_ros.motion.delay.DelayAllowance`); the step's own
        lateness (``lateness``, a timer's) and duration are measured for the next, on the node's
        clock (sim time in replays). ``poll``: called on the executor's thread, which may take
        the newest ``/clock`` (:mod:`pic_ros.ros.sim_clock`).
        """
        allowance = self._delays.allowance(now)
        for commander, _ in self._groups.values():
            commander.delay_allowance = allowance
        self._publish_steps(now, names, poll)
        ended = self._now()
        self._delays.step(ended, lateness, ended - now)

    def _publish_steps(self, now: float, names: Sequence[str], poll: bool) -> None:
        """
        Step the groups, guard the arms' chunks, publish them (lock held).

        The arms and the torso (what the collision guard checks) are stepped, guarded and
        published first; the head and the grippers after them, so that the arms' commands do not
        wait for theirs.

        :param now: The step's time [s].
        :param names: The groups to step.
        :param poll: Called on the executor's thread (may take the newest ``/clock``).
        """
        guarded = [name for name in names if name in self.robot.arms or name == TORSO_GROUP]
        others = [name for name in names if name not in guarded]
        for phase in (guarded, others):
            if phase:
                now = self._publish_phase(now, phase, poll)

    def _publish_phase(self, now: float, names: Sequence[str], poll: bool) -> float:
        """
        Step some groups, guard the arms' chunks among them, publish them (lock held).

        Just before publishing, the clock is read again: when a chunk would reach its controller
        after its plan's start (the process was starved since the step read the clock), every
        chunk of the phase is withdrawn and the phase made again at the present, from what the
        controllers were last sent (:meth:`~pic_ros.motion.commander.ArmCommander.withdraw`;
        counted on ``/diagnostics``), but for a group's move to its start, which is stamped 0
        and cannot be late: it is sent as made. Once: a second late step is published as it is.
        The chunks are serialized before that reading, so that only the publish calls come after
        it.

        :param now: The step's time [s].
        :param names: The groups to step.
        :param poll: Called on the executor's thread (may take the newest ``/clock``).
        :return: The time the chunks published were made at [s] (``now``, or later if made
            again).
        """
        chunks = self._guarded_chunks(now, names)
        payloads = self._serialized(chunks)  # before the second reading: nothing slow after it
        later = self._overtaken(now, chunks, poll)
        if later is not None:
            # a chunk that cannot be withdrawn (a group's move to its start: stamped 0, it is
            # never late) is sent as it was made; the others are made again
            kept = {
                name: chunk for name, chunk in chunks.items()
                if not self._groups[name][0].withdraw(now)
            }
            self.get_logger().warning(
                f'{", ".join(sorted(set(chunks) - set(kept)))}: the chunks made '
                f'{1e3 * (later - now):.0f} ms before they could be published would have come '
                'after the start of their plans (this node was starved): made again at the '
                'present', throttle_duration_sec=1.0,
            )
            now = later
            chunks = {
                **kept, **self._guarded_chunks(now, [name for name in names if name not in kept])
            }
            payloads = self._serialized(chunks)
        for publisher, payload in payloads.values():
            publisher.publish(payload)  # serialized
        self._check_sent(now, chunks, poll)
        for name in chunks:
            link = self._grippers.get(name)
            if link is not None:
                link.step(self._groups[name][0])
        for name, chunk in chunks.items():  # the diagnostics' checks once every chunk is out
            if name in self._grippers:
                continue  # no stream: the server moves the gripper
            timing = self._timing[name]
            timing.monitor.add(chunk, now)
            if timing.last_step is not None:
                timing.gap = max(timing.gap, now - timing.last_step)
            timing.last_step = now
        return now

    def _check_sent(self, now: float, chunks: dict[str, TrajectoryChunk], poll: bool) -> None:
        """
        Count the chunks whose publishing ended after their plan's start (lock held).

        The clock is read a third time, once the publish calls returned (:meth:`_late_groups`): a
        process that waited for the CPU while publishing (a busy neighbour took it; the check
        before publishing could not see it) sent chunks that its controllers join rather than
        continue. Counted per controller (``chunks_sent_late`` on ``/diagnostics``) and logged,
        throttled.
        """
        after, late = self._late_groups(now, chunks, poll)
        for name in late:
            self._timing[name].sent_late += 1
        if late:
            self.get_logger().warning(
                f'{", ".join(sorted(late))}: publishing ended {1e3 * (after - now):.0f} ms after '
                'the step, after the start of the plans (this node waited for the CPU while '
                'publishing): the controllers join these chunks rather than continue them; '
                'realtime_priority gives this node the CPU before its busy neighbours',
                throttle_duration_sec=1.0,
            )

    def _serialized(
        self, chunks: dict[str, TrajectoryChunk]
    ) -> dict[str, tuple[Publisher, bytes]]:
        """Return the publisher and CDR bytes of each chunk sent as a trajectory, by group."""
        payloads = {}
        for name, chunk in chunks.items():
            publisher = self._groups[name][1]
            if name not in self._grippers and publisher is not None:
                payloads[name] = (publisher, trajectory_to_cdr(chunk, self._time_base))
        return payloads

    def _guarded_chunks(self, now: float, names: Sequence[str]) -> dict[str, TrajectoryChunk]:
        """Step the named groups, then guard the arms' chunks; return the chunks (lock held)."""
        chunks = self._step_chunks(now, names)
        self._after_clock_restarts()
        chunks = self._guard_arms(now, chunks)
        self._report_limit_refusals()
        return chunks

    def _overtaken(
        self, now: float, chunks: dict[str, TrajectoryChunk], poll: bool
    ) -> float | None:
        """Return the clock if a chunk made at ``now`` comes after its plan's start, else None."""
        later, late = self._late_groups(now, chunks, poll)
        return later if late else None

    def _late_groups(
        self, now: float, chunks: dict[str, TrajectoryChunk], poll: bool
    ) -> tuple[float, list[str]]:
        """
        Read the clock; return it and the groups whose chunk made at ``now`` comes after its start.

        Only stamped chunks count: one stamped 0 (holding still) starts whenever it arrives;
        without any, the clock is not read (``now`` is returned).
        """
        stamped = [name for name, chunk in chunks.items() if chunk.stamp > 0.0]
        if not stamped:
            return now, []
        later = self._fresh_now(poll)
        return later, [name for name in stamped if self._groups[name][0].overtaken(now, later)]

    def _step_chunks(self, now: float, names: Sequence[str]) -> dict[str, TrajectoryChunk]:
        """Step the named groups' commanders; return the chunks made, by group (lock held)."""
        chunks: dict[str, TrajectoryChunk] = {}
        for name in names:
            commander, _ = self._groups[name]
            try:
                chunk = commander.step(now)
            except PicRosError as err:
                self.get_logger().error(f'{name}: not publishing: {err}')
                continue
            if chunk is not None:
                chunks[name] = chunk
        return chunks

    def _after_clock_restarts(self) -> None:
        """When a commander saw the clock go back: forget the delays and checks (lock held)."""
        restarts = sum(item.clock_restarts for item, _ in self._groups.values())
        if restarts == self._clock_restarts:
            return
        self._clock_restarts = restarts
        self._delays.reset()
        for timing in self._timing.values():
            timing.monitor.reset()
            timing.last_step = None
        self.get_logger().warning('the clock went back: tracking starts over')

    def _guard_arms(
        self, now: float, chunks: dict[str, TrajectoryChunk]
    ) -> dict[str, TrajectoryChunk]:
        """Guard the arms' chunks; return the step's chunks to send (lock held)."""
        arms = {name: chunk for name, chunk in chunks.items() if name in self.robot.arms}
        if not (arms and self._guard.enabled):
            return chunks
        verdict = self._guard.check(
            arms, self._commands(), self._torso_command(), now,
            brake=lambda name: self._groups[name][0].brake(now),
            straighten=lambda name: self._groups[name][0].straighten(now),
        )
        self._guard_last = verdict
        if verdict.refused:
            self.get_logger().warning(
                f'collision guard: {", ".join(sorted(verdict.refused))} braking, '
                f'{verdict.where} within the margin', throttle_duration_sec=1.0,
            )
        return verdict.to_send(chunks)

    def _report_limit_refusals(self) -> None:
        """Log the chunks beyond a joint limit made and not sent since the last log (lock held)."""
        refusals = sum(item.limit_refusals for item, _ in self._groups.values())
        if refusals == self._limit_refusals:
            return
        self._limit_refusals = refusals
        breaches = [f'{name}: {item.last_breach}' for name, (item, _) in self._groups.items()]
        self.get_logger().error(
            'a chunk beyond a joint limit was made and not sent (the arm braked): '
            + '; '.join(breach for breach in breaches if not breach.endswith(': '))
        )

    def _commands(self) -> dict[str, Any]:
        """Return the current command of every started arm (lock held)."""
        commands = {}
        for name in self.robot.arms:
            position = self._groups[name][0].position
            if position is not None:
                commands[name] = position
        return commands

    def _torso_command(self) -> float | None:
        """Return the torso lift commanded now, or None (lock held)."""
        torso = self._groups.get(TORSO_GROUP)
        if torso is None or torso[0].position is None:
            return None
        return float(torso[0].position[0])

    def _statuses(self) -> list[DiagnosticStatus]:
        statuses = []
        with self._lock:
            state_delay, self._state_delay = self._state_delay, 0.0
            target_age, self._target_age = self._target_age, -math.inf
            with self._handover_lock:
                superseded = self._superseded
            for name, (commander, _publisher) in self._groups.items():
                model = self.robot.groups[name]
                started = commander.started
                timing = self._timing[name]
                checked = timing.monitor.total
                values: dict[str, object] = {
                    'controller': model.controller,
                    'state': commander.state.value if started else 'waiting_for_joint_states',
                    'commands_published': commander.published,
                    'targets_received': commander.targets,
                    'targets_rejected': commander.rejected,
                    'targets_superseded': superseded,
                    'targets_clamped_to_limits': commander.clamped,
                    'stalls': commander.stalls,
                    'step_gap_max [ms]': f'{1e3 * timing.gap:.1f}',
                    'chunks_holding_still': commander.at_rest,
                    'joint_states_delay_max [ms]': f'{1e3 * state_delay:.1f}',
                    'target_age_max [ms]': (
                        f'{1e3 * target_age:.1f}' if math.isfinite(target_age) else '-'
                    ),
                    'plan_ahead [ms]': f'{1e3 * commander.plan_ahead:.1f}',
                    'delay_measured_max [ms]': f'{1e3 * self._delays.largest:.1f}',
                    'segment_violations': checked.violations + checked.ran_out,
                    'chunks_beyond_limits_not_sent': commander.limit_refusals,
                    'chunks_withdrawn_late': commander.withdrawn,
                    'chunks_sent_late': timing.sent_late,
                    'last_beyond_limits': commander.last_breach or '-',
                    'segment_peak': f'{checked.peak:.3f}',
                }
                timing.gap = 0.0
                link = self._grippers.get(name)
                if link is not None:
                    values.update(link.values())
                stalled = commander.stalls - timing.reported_stalls
                timing.reported_stalls = commander.stalls
                withdrawn = commander.withdrawn - timing.reported_withdrawn
                timing.reported_withdrawn = commander.withdrawn
                sent_late = timing.sent_late - timing.reported_sent_late
                timing.reported_sent_late = timing.sent_late
                level = DiagnosticStatus.OK if started else DiagnosticStatus.WARN
                summary = str(values['state'])
                if stalled:
                    level = DiagnosticStatus.WARN
                    summary += (
                        f', {stalled} steps since the last report came after the last plan '
                        'had run out (the arm braked: this node was starved or its clock stalled)'
                    )
                if withdrawn:
                    level = DiagnosticStatus.WARN
                    summary += (
                        f', {withdrawn} chunks since the last report made again before publishing '
                        '(this node was starved after the step read its clock)'
                    )
                if sent_late:
                    level = DiagnosticStatus.WARN
                    summary += (
                        f', {sent_late} chunks since the last report published after their '
                        "plan's start (this node waited for the CPU while publishing)"
                    )
                if commander.limit_refusals:
                    level = DiagnosticStatus.ERROR
                    summary += f', {commander.limit_refusals} chunks beyond a limit not sent'
                if checked.violations or checked.ran_out:
                    level = DiagnosticStatus.ERROR
                    summary += f', {values["segment_violations"]} chunks beyond a limit'
                if link is not None and link.unsent:
                    level = max(level, DiagnosticStatus.WARN)
                    summary += f', {link.resolved}: no action server (goals not sent)'
                title = f'pic_ros: {self.get_fully_qualified_name()} {model.name}'
                statuses.append(status_to_msg(title, self.robot.name, level, summary, values))
            statuses.append(self._engagement_status())
            statuses.append(self._guard_status())
        return statuses

    def _guard_status(self) -> DiagnosticStatus:
        """Return the collision guard's status: steps checked, chunks refused (lock held)."""
        guard = self._guard
        last = self._guard_last
        values: dict[str, object] = {
            'self_collision_margin_m': guard.margin,
            'steps_checked': guard.checks,
            'chunks_refused': guard.refusals,
            'chunks_straightened': guard.straightened,
            'closest_last_step_m': round(last.min_distance, 4)
            if last.min_distance != float('inf') else 'n/a',
            'closest_where': last.where or 'n/a',
        }
        level = DiagnosticStatus.WARN if guard.refusals else DiagnosticStatus.OK
        summary = 'off' if not guard.enabled else (
            f'{guard.refusals} chunks refused' if guard.refusals else 'no chunk refused'
        )
        title = f'pic_ros: {self.get_fully_qualified_name()} collision guard'
        return status_to_msg(title, self.robot.name, level, summary, values)

    def _engagement_status(self) -> DiagnosticStatus:
        """Return the engagement's status: the state and its last transition (lock held)."""
        engagement = self._engagement
        last = engagement.last_transition
        values: dict[str, object] = {
            'state': engagement.state.value,
            'reason': last.reason,
            'source': last.source.value,
            'since': round(last.time, 3),
            'estop_input': engagement.estop_input,
            'estop_messages': engagement.estop_inputs,
            'requests_refused': engagement.refused,
            'person': '-' if engagement.person is None else engagement.person,
            'engage_each_person': engagement.each_person,
        }
        level = DiagnosticStatus.WARN if engagement.estopped else DiagnosticStatus.OK
        title = f'pic_ros: {self.get_fully_qualified_name()} engagement'
        return status_to_msg(title, self.robot.name, level, engagement.state.value, values)


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
