"""
A robot in MuJoCo whose controllers follow joint trajectories like ros2_control's JTC.

:class:`SimRobot` builds the model of ``urdf/<robot>.urdf`` with
:func:`~pic_ros_tools.sim.mujoco_model.build_model` (where the model choices are explained); one
:class:`~pic_ros_tools.sim.trajectory.TrajectoryFollower` per controller of ``config/<robot>.yaml``
(arms, head, grippers) turns received trajectories into position targets;
:meth:`SimRobot.step_to` advances the physics at a fixed time step. Frames: the world frame is
the URDF root link at the start (REP-103: x forward, y left, z up, metres); a robot with a mobile
base drives away from it, and the world frame is then its odometry frame.

A robot file with ``mobile_base`` gets a base that follows velocity commands
(:meth:`SimRobot.command_base`, :class:`~pic_ros_tools.sim.base_drive.BaseDrive`: limits and
command timeout of the file) and reports its pose (:meth:`SimRobot.base_pose`). A robot file with
``force_torque_sensors`` gets wrist wrenches (:meth:`SimRobot.wrench`). Any link can be pushed
with an external force for a while (:meth:`SimRobot.push`, MuJoCo's ``xfrc_applied``).

**Wrench convention** (:class:`Wrench`): what a real six-axis sensor at the wrist reports, the
force [N] and torque [N m] the hand side of the sensor applies on the sensor, in the sensor link's
frame, torque about the link's origin. At rest it is the wrench the environment applies on the
hand (a push toward +x of the sensor frame reads +x) plus the hand's weight (the links welded
beyond the sensor: TIAGo's Hey5 hand and the sensor's own link, 0.87 kg, about 8.5 N). By default
:meth:`SimRobot.wrench` subtracts that weight at the current pose
(:meth:`SimRobot.gravity_wrench`, from the hand's mass model), as a real user's gravity
compensation of the sensor does; what remains at rest is the external wrench. Not subtracted: the
hand's inertia when the arm accelerates (``m a``, about 0.9 N per m/s^2), which a real sensor
reads too.

Rendering is offscreen (:mod:`pic_ros_tools.sim.offscreen`): mujoco is imported when a
:class:`SimRobot` is made, with the OpenGL backend chosen first; a missing or failing backend
raises :class:`~pic_ros_tools.sim.offscreen.RenderError` with the reason. Frames are recorded to
PNG files off the simulation thread by :class:`~pic_ros_tools.sim.frame_recorder.FrameRecorder`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
import time
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.motion.base_following import Pose2D
from pic_ros.robot.mobile_base import MobileBaseSpec
from pic_ros.robot.robot import load_robot, Robot
from pic_ros_tools.sim.base_drive import BaseDrive
from pic_ros_tools.sim.config import SimConfig
from pic_ros_tools.sim.mujoco_model import (
    build_model,
    mimic_positions,
    sensor_names,
    target_margin,
)
from pic_ros_tools.sim.offscreen import import_mujoco, make_renderer, MAX_IMAGE_SIZE, RenderError
from pic_ros_tools.sim.scene import CAMERA_NAME
from pic_ros_tools.sim.trajectory import JointCommand, Trajectory, TrajectoryFollower, Verdict

FloatArray = npt.NDArray[np.float64]


class Capsule(NamedTuple):
    """
    A decorative capsule drawn into a rendered image (no physics): a sphere when both ends meet.

    :param start: One end, world frame, shape (3,), [m].
    :param end: The other end, world frame, shape (3,), [m].
    :param radius: Radius [m].
    :param rgba: Colour and opacity, each in [0, 1].
    """

    start: FloatArray
    end: FloatArray
    radius: float
    rgba: tuple[float, float, float, float]


class Wrench(NamedTuple):
    """
    A force and a torque, in one frame (see the module docstring for the sensors' convention).

    :param force: Force, shape (3,), [N].
    :param torque: Torque about the frame's origin, shape (3,), [N m].
    """

    force: FloatArray
    torque: FloatArray


@dataclass(frozen=True)
class _Sensor:
    """Where an arm's force/torque sensor lives in the model."""

    link: str
    body: int
    site: int
    force: slice
    torque: slice


@dataclass(frozen=True)
class _Push:
    """An external force on a body until a simulation time."""

    body: int
    force: FloatArray
    torque: FloatArray
    point: FloatArray
    local: bool
    until: float


@dataclass
class _Controller:
    """One arm controller: its follower and where its joints live in the model."""

    name: str
    follower: TrajectoryFollower
    actuators: npt.NDArray[np.int_]
    qpos: npt.NDArray[np.int_]
    reach: FloatArray
    low: FloatArray
    high: FloatArray
    dofs: npt.NDArray[np.int_]
    stiffness: FloatArray
    damping: FloatArray


@dataclass(frozen=True, eq=False)
class _Joints:
    """
    Every controller's joints side by side, for one servo update of them all per step.

    ``command`` and ``middle`` hold the commands sampled at a step's start and middle (rows:
    positions, velocities, accelerations); ``spans`` gives each follower its views of both.
    The other arrays are the controllers' :class:`_Controller` arrays, concatenated.
    """

    spans: tuple[tuple[TrajectoryFollower, tuple[FloatArray, ...], tuple[FloatArray, ...]], ...]
    command: FloatArray
    middle: FloatArray
    actuators: npt.NDArray[np.int_]
    qpos: npt.NDArray[np.int_]
    dofs: npt.NDArray[np.int_]
    reach: FloatArray
    low: FloatArray
    high: FloatArray
    stiffness: FloatArray
    damping: FloatArray

    @classmethod
    def of(cls, controllers: Sequence[_Controller]) -> _Joints:
        """Return the controllers' joints side by side (controllers in the order given)."""
        total = sum(len(entry.qpos) for entry in controllers)
        command = np.zeros((3, total))
        middle = np.zeros((3, total))
        spans = []
        start = 0
        for entry in controllers:
            span = slice(start, start + len(entry.qpos))
            start = span.stop
            spans.append((
                entry.follower, tuple(row[span] for row in command),
                tuple(row[span] for row in middle),
            ))

        def joined(field: str) -> npt.NDArray[Any]:
            return np.concatenate([getattr(entry, field) for entry in controllers])

        return cls(
            spans=tuple(spans), command=command, middle=middle,
            actuators=joined('actuators'), qpos=joined('qpos'), dofs=joined('dofs'),
            reach=joined('reach'), low=joined('low'), high=joined('high'),
            stiffness=joined('stiffness'), damping=joined('damping'),
        )


class SimRobot:
    """
    A robot in MuJoCo whose controllers (arms, head, grippers) follow joint trajectories like JTC.

    :param robot: The robot (from :func:`~pic_ros.robot.robot.load_robot`) or its name / YAML
        path.
    :param config: Physics and servo settings.
    :param initial: Initial positions of controlled joints by name [rad] or [m]; those not
        given start at the neutral pose of the robot file.
    :raises ConfigError: If the settings or the initial positions are invalid.
    """

    def __init__(
        self,
        robot: Robot | str | Path,
        config: SimConfig | None = None,
        initial: Mapping[str, float] | None = None,
    ) -> None:
        self.robot = robot if isinstance(robot, Robot) else load_robot(robot)
        self.config = config or SimConfig()
        self._mujoco = import_mujoco()
        start = self._initial_positions(initial or {})
        self._model, self._joint_names, self._held, self.gains = build_model(
            self._mujoco, self.robot, self.config, start
        )
        mujoco = self._mujoco
        model = self._model
        self._data = mujoco.MjData(model)
        for name, value in start.items():
            self._data.joint(name).qpos[0] = value
            self._data.actuator(name).ctrl[0] = value
        for name, value in mimic_positions(self.robot, start).items():
            self._data.joint(name).qpos[0] = value
        mujoco.mj_forward(model, self._data)
        self._controllers: dict[str, _Controller] = {}
        for group in self.robot.groups.values():
            names = group.joint_names
            margins = np.array([target_margin(self.robot, name) for name in names])
            low = np.minimum(group.lower + margins, group.upper)
            high = np.maximum(group.upper - margins, group.lower)
            # the controller starts holding what its servos are sent: the start, kept inside
            # the margins as every target is (NAO's hands start open at their limit, 1.0, and
            # settle at 0.975: a hold at 1.0 made the first command a 25 mrad move in 50 ms)
            follower = TrajectoryFollower(
                names, group.lower, group.upper,
                np.clip([start[name] for name in names], low, high),
                self.config.follower, limits=group,
            )
            self._controllers[group.controller] = _Controller(
                name=group.controller,
                follower=follower,
                actuators=np.array([model.actuator(name).id for name in names]),
                qpos=np.array([model.joint(name).qposadr[0] for name in names]),
                reach=self._target_reach(group.velocity),
                low=low,
                high=high,
                dofs=np.array([model.joint(name).dofadr[0] for name in names]),
                stiffness=np.array([self.gains[name].kp for name in names]),
                damping=np.array([self.gains[name].kv for name in names]),
            )
        self._joints = _Joints.of(list(self._controllers.values()))
        self._moving = {  # driven joints and the mimic joints that follow them
            name: (int(model.joint(name).qposadr[0]), int(model.joint(name).dofadr[0]))
            for name in self._joint_names
            if name not in self._held
        }
        self._renderer: Any = None
        self._renderer_size: tuple[int, int] | None = None
        self._sim_seconds = 0.0
        self._wall_seconds = 0.0
        base = self.robot.spec.mobile_base
        self._base = None if base is None else BaseDrive(base, self.time)
        self._mocap = -1
        if base is not None:
            self._mocap = int(max(model.body_mocapid))  # the root: the only mocap body
            self._mocap_height = float(self._data.mocap_pos[self._mocap][2])
        self._sensors: dict[str, _Sensor] = {}
        for arm, sensor in self.robot.spec.force_torque_sensors.items():
            site_name, force_name, torque_name = sensor_names(arm)
            site = model.site(site_name)
            force_adr = int(model.sensor(force_name).adr[0])
            torque_adr = int(model.sensor(torque_name).adr[0])
            self._sensors[arm] = _Sensor(
                link=sensor.link, body=int(site.bodyid[0]), site=int(site.id),
                force=slice(force_adr, force_adr + 3), torque=slice(torque_adr, torque_adr + 3),
            )
        self._pushes: list[_Push] = []

    # -- construction -------------------------------------------------------------------------

    def _initial_positions(self, initial: Mapping[str, float]) -> dict[str, float]:
        start: dict[str, float] = {}
        groups = self.robot.groups.values()
        for group in groups:
            for index, name in enumerate(group.joint_names):
                start[name] = float(group.neutral[index])
        unknown = sorted(set(initial) - set(start))
        if unknown:
            raise ConfigError(f'initial positions for joints no controller drives: {unknown}')
        for group in groups:
            for index, name in enumerate(group.joint_names):
                if name in initial:
                    start[name] = check_number(
                        f'initial {name}', initial[name], float(group.lower[index]),
                        float(group.upper[index]),
                    )
        return start

    def _target_reach(self, velocity: FloatArray) -> FloatArray:
        """Return how far ahead of the measured position a servo target may be [rad] or [m]."""
        if not self.config.limit_velocity:
            return np.full(len(velocity), np.inf)
        limits = np.where(np.isfinite(velocity) & (velocity > 0.0), velocity, np.inf)
        return limits * self.config.tracking_lag

    # -- state --------------------------------------------------------------------------------

    @property
    def mujoco(self) -> Any:
        """Return the mujoco module (imported with the GL backend chosen)."""
        return self._mujoco

    @property
    def model(self) -> Any:
        """Return the compiled ``mujoco.MjModel``."""
        return self._model

    @property
    def data(self) -> Any:
        """Return the ``mujoco.MjData`` of the simulation (read it, do not step it)."""
        return self._data

    @property
    def time(self) -> float:
        """Return the simulation time [s] (0 at construction)."""
        return float(self._data.time)

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return every movable joint of the URDF, in URDF order (held ones included)."""
        return self._joint_names

    @property
    def held_joints(self) -> Mapping[str, float]:
        """Return the welded joints and the value they are held at [rad] or [m]."""
        return dict(self._held)

    @property
    def controllers(self) -> tuple[str, ...]:
        """Return the arm controller names (from the robot file)."""
        return tuple(self._controllers)

    def follower(self, controller: str) -> TrajectoryFollower:
        """
        Return the trajectory follower of a controller.

        :param controller: Controller name.
        :return: Its follower.
        :raises ConfigError: If there is no such controller.
        """
        return self._controller(controller).follower

    def _controller(self, controller: str) -> _Controller:
        try:
            return self._controllers[controller]
        except KeyError:
            raise ConfigError(
                f'no controller {controller!r}; controllers: {list(self._controllers)}'
            ) from None

    def joint_positions(self) -> dict[str, float]:
        """
        Return the position of every movable joint.

        :return: ``{joint: position}`` [rad] or [m], in :attr:`joint_names` order.
        """
        qpos = self._data.qpos
        return {
            name: float(qpos[self._moving[name][0]]) if name in self._moving else self._held[name]
            for name in self._joint_names
        }

    def joint_velocities(self) -> dict[str, float]:
        """
        Return the velocity of every movable joint (0 for held joints).

        :return: ``{joint: velocity}`` [rad/s] or [m/s], in :attr:`joint_names` order.
        """
        qvel = self._data.qvel
        return {
            name: float(qvel[self._moving[name][1]]) if name in self._moving else 0.0
            for name in self._joint_names
        }

    def arm_positions(self, controller: str) -> FloatArray:
        """
        Return the measured positions of a controller's joints.

        :param controller: Controller name.
        :return: Positions in the controller's joint order, shape (n,), [rad] or [m].
        """
        positions: FloatArray = self._data.qpos[self._controller(controller).qpos].copy()
        return positions

    def commanded(self, controller: str) -> JointCommand:
        """
        Return a controller's commanded state at the current simulation time.

        :param controller: Controller name.
        :return: The command (controller joint order).
        """
        return self._controller(controller).follower.sample(self.time)

    def tracking_error(self, controller: str) -> float:
        """
        Return the largest difference between commanded and measured positions now.

        :param controller: Controller name.
        :return: ``max |commanded - measured|`` over the controller's joints [rad] or [m].
        """
        entry = self._controller(controller)
        command = entry.follower.sample(self.time)
        return float(np.abs(command.positions - self._data.qpos[entry.qpos]).max())

    @property
    def real_time_factor(self) -> float:
        """Return simulated seconds per wall-clock second spent in :meth:`step_to` (nan: none)."""
        if self._wall_seconds <= 0.0:
            return math.nan
        return self._sim_seconds / self._wall_seconds

    # -- mobile base --------------------------------------------------------------------------

    @property
    def mobile_base(self) -> MobileBaseSpec | None:
        """Return the mobile base of the robot file, or None when the base is fixed."""
        return self.robot.spec.mobile_base

    def _drive(self) -> BaseDrive:
        if self._base is None:
            raise ConfigError(f'{self.robot.name} has no mobile_base in its robot file')
        return self._base

    def command_base(self, linear: float, angular: float) -> None:
        """
        Give the base a velocity command now (a Twist's ``linear.x``, ``angular.z``).

        The latest command holds, within the base's limits, until the next one or the command
        timeout (then the base stops).

        :param linear: Forward speed [m/s].
        :param angular: Turning speed, counter-clockwise [rad/s].
        :raises ConfigError: If the robot has no mobile base or a value is not finite.
        """
        self._drive().command(self.time, float(linear), float(angular))

    def base_pose(self) -> Pose2D:
        """
        Return the base frame's pose in the odometry frame (its start), on the floor plane.

        :return: x, y [m] and yaw [rad].
        :raises ConfigError: If the robot has no mobile base.
        """
        return self._drive().pose

    def base_velocity(self) -> tuple[float, float]:
        """
        Return the base's velocity in its own frame.

        :return: ``(forward [m/s], turning [rad/s])``.
        :raises ConfigError: If the robot has no mobile base.
        """
        return self._drive().velocity

    def _place_base(self, now: float) -> None:
        assert self._base is not None
        pose = self._base.advance_to(now)
        data = self._data
        data.mocap_pos[self._mocap] = (pose.x, pose.y, self._mocap_height)
        data.mocap_quat[self._mocap] = (math.cos(pose.yaw / 2), 0.0, 0.0, math.sin(pose.yaw / 2))

    # -- force/torque sensors and pushes ------------------------------------------------------

    @property
    def wrench_sensors(self) -> Mapping[str, str]:
        """Return the force/torque sensors: the link of each, by arm name."""
        return {arm: sensor.link for arm, sensor in self._sensors.items()}

    def _sensor(self, arm: str) -> _Sensor:
        try:
            return self._sensors[arm]
        except KeyError:
            raise ConfigError(
                f'no force/torque sensor on {arm!r}; sensors: {list(self._sensors)}'
            ) from None

    def gravity_wrench(self, arm: str) -> Wrench:
        """
        Return what an arm's sensor reads from the hand's weight alone at the current pose.

        :param arm: Arm name.
        :return: The weight of the bodies beyond the sensor (their mass and centre of mass in
            the model), sensor link frame, torque about its origin [N], [N m].
        :raises ConfigError: If the arm has no sensor.
        """
        sensor = self._sensor(arm)
        model, data = self._model, self._data
        rotation = data.site_xmat[sensor.site].reshape(3, 3)
        weight = float(model.body_subtreemass[sensor.body]) * np.asarray(model.opt.gravity)
        lever = data.subtree_com[sensor.body] - data.site_xpos[sensor.site]
        return Wrench(rotation.T @ weight, rotation.T @ np.cross(lever, weight))

    def wrench(self, arm: str, compensated: bool = True) -> Wrench:
        """
        Return an arm's wrist force/torque reading (convention: the module docstring).

        :param arm: Arm name (a key of the file's ``force_torque_sensors``).
        :param compensated: Subtract the hand's weight (:meth:`gravity_wrench`).
        :return: Force [N] and torque [N m] in the sensor link's frame.
        :raises ConfigError: If the arm has no sensor.
        """
        sensor = self._sensor(arm)
        values = self._data.sensordata
        # MuJoCo's force sensor gives the force of the parent on the sensor's body: the opposite.
        reading = Wrench(-values[sensor.force].copy(), -values[sensor.torque].copy())
        if not compensated:
            return reading
        bias = self.gravity_wrench(arm)
        return Wrench(reading.force - bias.force, reading.torque - bias.torque)

    def push(
        self,
        link: str,
        force: npt.ArrayLike,
        duration: float,
        torque: npt.ArrayLike = (0.0, 0.0, 0.0),
        point: npt.ArrayLike = (0.0, 0.0, 0.0),
        local: bool = False,
        replace: bool = False,
    ) -> None:
        """
        Push a link with an external force (and torque) for a while, from now.

        Pushes add up, each ending on its own, unless ``replace`` ends the link's earlier ones.

        :param link: A link that is a body of the model (one with a joint, or a sensor link).
        :param force: Force, shape (3,), [N].
        :param duration: How long [s], in (0, 3600].
        :param torque: Torque, shape (3,), [N m].
        :param point: Where the force acts, in the link's frame, shape (3,), [m].
        :param local: Force and torque in the link's frame (they turn with it); else world frame.
        :param replace: End the pushes on this link first (a stream of pushes, each the latest).
        :raises ConfigError: If the link is not a body of the model or a value is invalid.
        """
        model = self._model
        bodies = [model.body(index).name for index in range(1, model.nbody)]
        if link not in bodies:
            raise ConfigError(f'cannot push {link!r}: not a body of the model; bodies: {bodies}')
        duration = check_number('push duration', duration, 0.0, 3600.0)
        values = [np.asarray(value, dtype=float) for value in (force, torque, point)]
        if any(value.shape != (3,) or not np.all(np.isfinite(value)) for value in values):
            raise ConfigError('push force, torque and point must be 3 finite numbers each')
        body = int(model.body(link).id)
        if replace:  # the new push on the same body clears its xfrc_applied row first
            self._pushes = [push for push in self._pushes if push.body != body]
        self._pushes.append(_Push(
            body=body, force=values[0], torque=values[1], point=values[2],
            local=local, until=self.time + duration,
        ))

    @property
    def pushing(self) -> bool:
        """Return whether a push is acting."""
        return bool(self._pushes)

    def _apply_pushes(self, now: float) -> None:
        data = self._data
        applied = data.xfrc_applied
        for push in self._pushes:
            applied[push.body] = 0.0
        self._pushes = [push for push in self._pushes if now < push.until]
        for push in self._pushes:
            rotation = data.xmat[push.body].reshape(3, 3)
            force = rotation @ push.force if push.local else push.force
            torque = rotation @ push.torque if push.local else push.torque
            where = data.xpos[push.body] + rotation @ push.point
            applied[push.body, :3] += force
            applied[push.body, 3:] += torque + np.cross(where - data.xipos[push.body], force)

    # -- commands and stepping ----------------------------------------------------------------

    def command(self, controller: str, trajectory: Trajectory) -> Verdict:
        """
        Give a controller a trajectory, arriving at the current simulation time.

        :param controller: Controller name.
        :param trajectory: The trajectory (stamp 0 = start now, else a simulation time [s]).
        :return: The follower's verdict.
        """
        return self._controller(controller).follower.set_trajectory(trajectory, self.time)

    def step_to(self, t: float) -> int:
        """
        Advance the physics to a simulation time in fixed steps.

        Before each step every actuator target is set from its follower, sampled at the step's
        start time (a controller update at the physics rate): the commanded position, kept within
        ``velocity limit * tracking lag`` of the measured position when ``limit_velocity`` is on,
        plus with ``feedforward`` the commanded velocity times ``2 zeta / wn`` and the
        feedforward torque over ``kp``: the servo torque ``kp (target - q) - kv qdot`` then
        carries ``kv v_ref + M(q) a_ref + c(q, qdot) + kv dt a_ref``, the velocity feedforward,
        the inverse dynamics of the commanded accelerations of every controlled joint (sampled
        at the middle of the step: the acceleration over it) with the full joint-space inertia
        ``M`` (the coupling between joints included), the Coriolis and centrifugal torques ``c``
        (with ``gravity_compensation``), and the share of the acceleration the implicit
        integration of ``kv`` takes back over a step; the velocity term fades out as the
        position error nears the speed limit's reach, so a far target (a step) is still
        approached at the velocity limit; the position part of the target is kept a few mrad
        inside the URDF limits
        (:func:`~pic_ros_tools.sim.mujoco_model.target_margin`), clear of the limit stops, which
        engage at the limits (:mod:`~pic_ros_tools.sim.mujoco_model`): a command at a limit does
        not make the joint hit a 4 ms stop. The mobile base, if any, is moved to
        that time and the active pushes are applied.
        Stops at the last step boundary at or before ``t``; a time in the past does nothing.

        :param t: Simulation time to reach [s].
        :return: Number of physics steps taken.
        """
        mujoco = self._mujoco
        model = self._model
        data = self._data
        dt = self.config.timestep
        steps = int(math.floor((t - data.time) / dt + 1e-6))
        if steps <= 0:
            return 0
        started = time.perf_counter()
        ctrl = data.ctrl
        qpos = data.qpos
        base = self._base is not None
        config = self.config
        dynamics = config.feedforward
        gravity = config.gravity_compensation
        lead = config.tracking_lag if dynamics else 0.0
        wanted = np.zeros(model.nv)
        torque = np.zeros(model.nv)
        joints = self._joints
        command, middle = joints.command, joints.middle
        reach = joints.reach
        back = -reach
        speed = reach / lead if dynamics else reach
        for _ in range(steps):
            now = float(data.time)
            if base:
                self._place_base(now)
            if self._pushes:
                self._apply_pushes(now)
            for follower, at_start, _ in joints.spans:
                follower.sample_into(now, *at_start)
            if dynamics:  # the accelerations over the step: at its middle
                for follower, _, at_middle in joints.spans:
                    follower.sample_into(now + 0.5 * dt, *at_middle)
                wanted[:] = 0.0
                wanted[joints.dofs] = middle[2]
                mujoco.mj_mulM(model, data, torque, wanted)
                if gravity:  # Coriolis and centrifugal only: the actuators hold the weight
                    torque += data.qfrc_bias - data.qfrc_gravcomp
            # every controller's joints at once: the same arithmetic joint by joint
            measured = qpos[joints.qpos]
            error = np.clip(command[0] - measured, back, reach)
            target = np.clip(measured + error, joints.low, joints.high)
            if dynamics:  # a target far behind (a step) is approached at the limit
                free = np.clip(2.0 - 2.0 * np.abs(error) / reach, 0.0, 1.0)
                implicit = joints.damping * dt * middle[2]
                target += (
                    lead * free * np.clip(command[1], -speed, speed)
                    + (torque[joints.dofs] + implicit) / joints.stiffness
                )
            ctrl[joints.actuators] = target
            mujoco.mj_step(model, data)
        self._wall_seconds += time.perf_counter() - started
        self._sim_seconds += steps * dt
        return steps

    # -- rendering ----------------------------------------------------------------------------

    def render(
        self, width: int = 640, height: int = 480, overlay: Sequence[Capsule] = ()
    ) -> npt.NDArray[np.uint8]:
        """
        Render the scene from :data:`~pic_ros_tools.sim.scene.CAMERA_NAME`, offscreen.

        :param width: Image width [px], at most 1920.
        :param height: Image height [px], at most 1080.
        :param overlay: Capsules drawn into the scene (e.g. a translucent person), as many as the
            scene has room for.
        :return: RGB pixels, shape (height, width, 3), ``uint8``.
        :raises RenderError: If no OpenGL backend works (the message says which was tried).
        :raises ConfigError: If the size is out of range.
        """
        renderer = self._renderer_for(width, height)
        try:
            renderer.update_scene(self._data, camera=CAMERA_NAME)
            self._draw(renderer.scene, overlay)
            return np.asarray(renderer.render(), dtype=np.uint8)
        except (RuntimeError, ValueError, self._mujoco.FatalError) as error:
            raise RenderError(f'rendering failed: {error}') from error

    def _draw(self, scene: Any, overlay: Sequence[Capsule]) -> None:
        """Add capsules to an updated scene (MuJoCo's decorative geoms)."""
        mujoco = self._mujoco
        for capsule in overlay:
            if scene.ngeom >= scene.maxgeom:
                return
            start = np.asarray(capsule.start, dtype=float)
            end = np.asarray(capsule.end, dtype=float)
            if not (np.all(np.isfinite(start)) and np.all(np.isfinite(end))):
                continue
            geom = scene.geoms[scene.ngeom]
            rgba = np.asarray(capsule.rgba, dtype=np.float32)
            if np.linalg.norm(end - start) < 1e-6:
                mujoco.mjv_initGeom(
                    geom, mujoco.mjtGeom.mjGEOM_SPHERE, np.full(3, capsule.radius), start,
                    np.eye(3).ravel(), rgba,
                )
            else:
                mujoco.mjv_initGeom(
                    geom, mujoco.mjtGeom.mjGEOM_CAPSULE, np.zeros(3), np.zeros(3), np.zeros(9),
                    rgba,
                )
                mujoco.mjv_connector(
                    geom, mujoco.mjtGeom.mjGEOM_CAPSULE, capsule.radius, start, end
                )
            scene.ngeom += 1

    def _renderer_for(self, width: int, height: int) -> Any:
        if not (1 <= width <= MAX_IMAGE_SIZE[0] and 1 <= height <= MAX_IMAGE_SIZE[1]):
            raise ConfigError(
                f'image size must be within 1..{MAX_IMAGE_SIZE[0]} x 1..{MAX_IMAGE_SIZE[1]}, '
                f'got {width} x {height}'
            )
        if self._renderer is not None and self._renderer_size == (width, height):
            return self._renderer
        self.close()
        self._renderer = make_renderer(self._mujoco, self._model, width, height)
        self._renderer_size = (width, height)
        return self._renderer

    def close(self) -> None:
        """Free the offscreen renderer (and its OpenGL context), if any."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
            self._renderer_size = None

    def __enter__(self) -> SimRobot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
