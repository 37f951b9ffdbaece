"""
MuJoCo physics of the project's own URDFs, driven like ros2_control's joint_trajectory_controller.

:class:`SimRobot` loads ``urdf/<robot>.urdf`` with :class:`mujoco.MjSpec`, edits it and compiles
it; one :class:`~pic_ros.sim.trajectory.TrajectoryFollower` per arm controller of
``config/<robot>.yaml`` turns received trajectories into position targets; :meth:`SimRobot.step_to`
advances the physics at a fixed time step. Frames: the world frame is the URDF root link
(REP-103: x forward, y left, z up, metres).

Model choices (:class:`SimConfig` holds the numbers):

* **Fixed base**: the URDF root is welded to the world (MuJoCo's URDF import does that).
* **Arm joints** get a position actuator each, ``force = kp (target - q) - kv qdot``, tuned per
  joint from the joint-space inertia ``I`` at the initial pose (diagonal of the mass matrix, with
  the armature): ``kp = I wn^2``, ``kv = 2 zeta wn I``. That is a second-order servo with natural
  frequency ``wn`` and damping ratio ``zeta`` whose lag behind a ramp is ``kv / kp = 2 zeta / wn``
  (:attr:`SimConfig.tracking_lag`; 33 ms with the defaults wn = 60 rad/s, zeta = 1). The
  stiffness is explicit in the ``implicitfast`` integrator, so ``wn * timestep`` must stay small
  (checked <= 0.5; 0.12 by default). A uniform reflected drive inertia (``armature``, 0.05 kg m^2)
  is added to every arm joint, as gear-driven joints have; without it the wrist joints' inertia
  (down to 2e-4 kg m^2) would need gains too small to reject the coupling torques of the shoulder.
* **URDF dynamics**: the ``<dynamics damping>`` of the arm joints is dropped (it is simulator
  tuning: TIAGo's 40 N m s/rad would need 94 N m at the velocity limit where the effort limit is
  26 N m); the servo's ``kv`` is the joint damping. ``friction`` (Coulomb, TIAGo 1 N m) is kept.
  The URDF effort limit bounds each joint's total actuator torque (MuJoCo ``actuatorfrcrange``).
* **Position limits** are stiff limit stops (time constant 4 ms) that engage 3 mrad before the
  URDF limit: a joint commanded to its limit rests 3 mrad inside it, and no joint passes its
  limit even when every joint is thrown across its whole range at once (MuJoCo's default soft
  limits let YuMi's joints through by 0.04 rad in that test).
* **Gravity** is on, and compensated per body (``gravcomp = 1``) *through the actuators*
  (``actuatorgravcomp``): the compensation torque counts against the effort limit, like a robot
  controller's gravity feed-forward. So an arm at rest holds its pose exactly; an arm whose
  gravity load exceeds the effort limit sags.
* **Every other movable joint** (locked joints such as TIAGo's torso, head, grippers, fingers,
  wheels, casters, suspension) is welded at its held value (the locked value, else 0 clamped
  into its range) and reported with that value and zero velocity. Mimic equalities are dropped
  with them. This is exact and cheap, and avoids servoing TIAGo's hand links, which have
  near-zero inertia.
* **Contacts**: robot geoms touch the floor but not each other. The simplified link shapes of
  the URDFs overlap in the neutral pose (YuMi's first links sink 9 cm into the body, Baxter's
  elbow and forearm shells overlap by 13 mm, TIAGo's arm_1 touches the torso) and YuMi's arms
  collide with each other at the zero configuration; with every contact on, the arms drift from
  the neutral pose by up to 1.2 rad. The simulation shows what the commands do; it is not a
  collision checker. ``self_collisions=True`` turns robot-robot contacts on except for the body
  pairs already touching in the initial pose (so the arms hold still, and arm-arm and
  arm-torso contacts that appear later are simulated).
* **Scene**: a chequered floor at the lowest point of the robot in its initial pose, a skybox,
  a directional light (shadows optional: they cost about 2.5x per frame in software GL) and one
  camera, :data:`CAMERA_NAME`, looking at the robot from the front-left (azimuth 25 deg,
  elevation 20 deg) from just far enough for the arms, the rest of the robot down to 0.25 m below
  the arms' workspace, and the workspace in front of the arms (one arm reach ahead of and below
  each arm's root) to fill a 4:3 image.

Rendering is offscreen. ``MUJOCO_GL`` must be set before mujoco is first imported; this module
imports mujoco lazily and, if ``MUJOCO_GL`` is unset, chooses ``egl`` when libEGL is found, else
``osmesa`` when libOSMesa is found (:func:`select_gl_backend`). A missing or failing backend
raises :class:`RenderError` with the reason.
"""

from __future__ import annotations

import ctypes.util
from dataclasses import dataclass, field
import itertools
import math
import os
from pathlib import Path
import queue
import struct
import sys
import threading
import time
from typing import Any, Final, Mapping
import zlib

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError, PicRosError
from pic_ros.robot.robot import load_robot, Robot
from pic_ros.sim.trajectory import (
    FollowerConfig,
    JointCommand,
    Trajectory,
    TrajectoryFollower,
    Verdict,
)

FloatArray = npt.NDArray[np.float64]

CAMERA_NAME: Final = 'pic_ros_view'
"""Name of the camera added to every robot model."""

MAX_IMAGE_SIZE: Final = (1920, 1080)
"""Largest offscreen image, (width, height) [px]."""

_CAMERA_AZIMUTH: Final = math.radians(25.0)
"""Camera direction from the scene centre: azimuth from +x towards +y [rad]."""

_CAMERA_ELEVATION: Final = math.radians(20.0)
"""Camera direction from the scene centre: elevation above the horizontal [rad]."""

_CAMERA_FOVY: Final = 45.0
"""Vertical field of view of the camera [deg]."""

_ASPECT: Final = 4.0 / 3.0
"""Image width / height the camera placement is fitted for (wider images see more)."""

_BELOW_ARMS: Final = 0.25
"""How far below the arms' workspace the camera view extends [m]."""

_SHADOW_MAP_SIZE: Final = 2048
"""Shadow map size [px] (when shadows are on)."""

_LIMIT_TIME_CONSTANT: Final = 0.004
"""Time constant of the joint limit stops [s] (MuJoCo's default 0.02 lets a fast joint through
by up to 0.04 rad; never below two time steps)."""

_LIMIT_MARGIN: Final = 0.003
"""Distance before a URDF position limit at which the limit stop engages [rad] or [m]."""

_ROBOT_CONTACT: Final = 2
_FLOOR_CONTACT: Final = 1


class RenderError(PicRosError, RuntimeError):
    """Offscreen rendering is not available (no working OpenGL backend) or failed."""


def select_gl_backend() -> str | None:
    """
    Choose MuJoCo's offscreen OpenGL backend before mujoco is imported.

    Leaves a set ``MUJOCO_GL`` alone. Otherwise sets ``egl`` if libEGL is found, else ``osmesa``
    if libOSMesa is found. Has no effect once mujoco is imported (the backend is fixed then).

    :return: The value of ``MUJOCO_GL`` in effect, or None if none could be chosen.
    """
    current = os.environ.get('MUJOCO_GL')
    if current or 'mujoco' in sys.modules:
        return current or None
    for backend, library in (('egl', 'EGL'), ('osmesa', 'OSMesa')):
        if ctypes.util.find_library(library):
            os.environ['MUJOCO_GL'] = backend
            return backend
    return None


def import_mujoco() -> Any:
    """
    Import mujoco, choosing the offscreen GL backend first if this is the first import.

    :return: The mujoco module.
    :raises ConfigError: If mujoco is not installed.
    """
    select_gl_backend()
    try:
        import mujoco  # type: ignore[import-untyped]
    except ImportError as error:
        raise ConfigError(f'the simulation needs the mujoco package: {error}') from error
    return mujoco


@dataclass(frozen=True)
class SimConfig:
    """
    Physics and servo settings of a simulated robot.

    :param timestep: Physics time step [s], in [1e-4, 0.01].
    :param natural_frequency: Natural frequency ``wn`` of every arm joint's servo [rad/s], in
        [1, 500]; ``wn * timestep`` must be <= 0.5.
    :param damping_ratio: Damping ratio ``zeta`` of the servos, in [0.1, 5].
    :param armature: Reflected drive inertia added to every arm joint [kg m^2], in [0, 10].
    :param gravity_compensation: Compensate gravity through the actuators (within the effort
        limits); False lets the servos hold the arms against gravity alone (they sag by
        ``torque / kp``).
    :param self_collisions: Let robot links collide with each other, except the body pairs
        already touching in the initial pose (floor contacts are always on).
    :param limit_velocity: Keep each servo target within ``velocity limit * tracking_lag`` of
        the measured position, so that a far target (a step) is approached at about the URDF
        velocity limit, as a drive's speed limit does; a target that moves within the limits is
        not affected.
    :param shadows: Render shadows (about 2.5x the time per frame on a software renderer).
    :param follower: Options of the trajectory followers.
    :raises ConfigError: If a value is out of range.
    """

    timestep: float = 0.002
    natural_frequency: float = 60.0
    damping_ratio: float = 1.0
    armature: float = 0.05
    gravity_compensation: bool = True
    self_collisions: bool = False
    limit_velocity: bool = True
    shadows: bool = False
    follower: FollowerConfig = field(default_factory=FollowerConfig)

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        set_field(self, 'timestep', check_number('timestep', self.timestep, 1e-4, 0.01))
        set_field(
            self, 'natural_frequency',
            check_number('natural_frequency', self.natural_frequency, 1.0, 500.0),
        )
        set_field(
            self, 'damping_ratio', check_number('damping_ratio', self.damping_ratio, 0.1, 5.0)
        )
        set_field(self, 'armature', check_number('armature', self.armature, 0.0, 10.0))
        for name in ('gravity_compensation', 'self_collisions', 'limit_velocity', 'shadows'):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f'{name} must be a bool, got {getattr(self, name)!r}')
        if not isinstance(self.follower, FollowerConfig):
            raise ConfigError(f'follower must be a FollowerConfig, got {self.follower!r}')
        if self.natural_frequency * self.timestep > 0.5:
            raise ConfigError(
                f'natural_frequency * timestep = {self.natural_frequency * self.timestep:.3f} '
                '> 0.5: the servo stiffness would make the integration unstable; lower one'
            )

    @property
    def tracking_lag(self) -> float:
        """Return the servos' lag behind a constant-velocity target, ``2 zeta / wn`` [s]."""
        return 2.0 * self.damping_ratio / self.natural_frequency


@dataclass(frozen=True)
class ServoGains:
    """
    Position servo of one arm joint.

    :param inertia: Joint-space inertia at the initial pose, armature included [kg m^2].
    :param kp: Stiffness [N m/rad].
    :param kv: Damping [N m s/rad].
    :param effort: Torque limit from the URDF [N m] (inf if none).
    """

    inertia: float
    kp: float
    kv: float
    effort: float


@dataclass
class _Controller:
    """One arm controller: its follower and where its joints live in the model."""

    name: str
    follower: TrajectoryFollower
    actuators: npt.NDArray[np.int_]
    qpos: npt.NDArray[np.int_]
    reach: FloatArray


def _quat_to_matrix(quat: npt.ArrayLike) -> FloatArray:
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def _quat_multiply(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    w1, x1, y1, z1 = np.asarray(a, dtype=float)
    w2, x2, y2, z2 = np.asarray(b, dtype=float)
    return np.array([
        w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
        w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
        w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
    ])


def _weld_joint(mujoco: Any, spec: Any, joint: Any, value: float) -> None:
    """Delete a joint of a spec, first moving its body to where the joint value puts it."""
    body = joint.parent
    if value != 0.0:
        axis = np.asarray(joint.axis, dtype=float)
        axis = axis / np.linalg.norm(axis)
        rotation = _quat_to_matrix(body.quat)
        if joint.type == mujoco.mjtJoint.mjJNT_SLIDE:
            body.pos = np.asarray(body.pos) + rotation @ (axis * value)
        else:
            half = value / 2.0
            turn = np.concatenate([[math.cos(half)], axis * math.sin(half)])
            anchor = np.asarray(joint.pos, dtype=float)
            body.pos = np.asarray(body.pos) + rotation @ (anchor - _quat_to_matrix(turn) @ anchor)
            body.quat = _quat_multiply(body.quat, turn)
    spec.delete(joint)


def _descends_from(model: Any, body: int, ancestor: int) -> bool:
    """Tell whether a body is ``ancestor`` or one of its descendants."""
    while body > 0:
        if body == ancestor:
            return True
        body = int(model.body_parentid[body])
    return ancestor == 0


def _fitting_distance(points: FloatArray, direction: FloatArray) -> float:
    """
    Return how far from the centre a camera must stand to see every point.

    :param points: Points relative to the look-at centre, shape (N, 3), [m].
    :param direction: Unit vector from the centre to the camera.
    :return: Distance [m] that fits the points in the field of view (4:3 image), plus 15 %.
    """
    forward = -direction
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right = right / np.linalg.norm(right)
    up = np.cross(right, forward)
    half_height = math.tan(math.radians(_CAMERA_FOVY) / 2.0)
    half_width = half_height * _ASPECT
    depth = points @ forward
    needed = np.maximum(
        np.abs(points @ up) / half_height - depth, np.abs(points @ right) / half_width - depth
    )
    return 1.15 * float(needed.max())


def _look_at(position: FloatArray, target: FloatArray) -> list[float]:
    """Return MuJoCo ``xyaxes`` of a camera at ``position`` looking at ``target`` (z up)."""
    forward = target - position
    forward = forward / np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right = right / np.linalg.norm(right)
    up = np.cross(right, forward)
    return [*right.tolist(), *up.tolist()]


def _geom_corners(model: Any, data: Any, geom: int) -> FloatArray:
    """Return the 8 world corners of a geom's bounding box, shape (8, 3), [m]."""
    centre = model.geom_aabb[geom][:3]
    half = model.geom_aabb[geom][3:]
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
    local = centre + signs * half
    rotation = data.geom_xmat[geom].reshape(3, 3)
    return data.geom_xpos[geom] + local @ rotation.T


def write_png(path: str | Path, image: npt.NDArray[np.uint8]) -> None:
    """
    Write an RGB or RGBA image as a PNG file (standard library only).

    :param path: Output file.
    :param image: Pixels, shape (height, width, 3 or 4), ``uint8``, first row at the top.
    :raises ConfigError: If the array is not such an image.
    """
    array = np.ascontiguousarray(image)
    if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] not in (3, 4):
        raise ConfigError(f'expected a (H, W, 3|4) uint8 image, got {array.dtype} {array.shape}')
    height, width, channels = array.shape
    rows = np.concatenate(
        [np.zeros((height, 1), dtype=np.uint8), array.reshape(height, width * channels)], axis=1
    )

    def chunk(kind: bytes, payload: bytes) -> bytes:
        body = kind + payload
        return struct.pack('>I', len(payload)) + body + struct.pack('>I', zlib.crc32(body))

    header = struct.pack('>IIBBBBB', width, height, 8, 2 if channels == 3 else 6, 0, 0, 0)
    content = (
        b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header)
        + chunk(b'IDAT', zlib.compress(rows.tobytes(), 1)) + chunk(b'IEND', b'')
    )
    Path(path).write_bytes(content)


class SimRobot:
    """
    A robot in MuJoCo whose arm controllers follow joint trajectories like JTC.

    :param robot: The robot (from :func:`~pic_ros.robot.robot.load_robot`) or its name / YAML
        path.
    :param config: Physics and servo settings.
    :param initial: Initial arm joint positions by name [rad] or [m]; arm joints not given start
        at the neutral pose of the robot file.
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
        self._model, self._joint_names, self._held, self.gains = self._build(start)
        mujoco = self._mujoco
        model = self._model
        self._data = mujoco.MjData(model)
        for name, value in start.items():
            self._data.joint(name).qpos[0] = value
            self._data.actuator(name).ctrl[0] = value
        mujoco.mj_forward(model, self._data)
        self._controllers: dict[str, _Controller] = {}
        for arm in self.robot.arms.values():
            names = arm.joint_names
            follower = TrajectoryFollower(
                names, arm.lower, arm.upper, [start[name] for name in names],
                self.config.follower,
            )
            self._controllers[arm.spec.controller] = _Controller(
                name=arm.spec.controller,
                follower=follower,
                actuators=np.array([model.actuator(name).id for name in names]),
                qpos=np.array([model.joint(name).qposadr[0] for name in names]),
                reach=self._target_reach(arm.velocity),
            )
        self._moving = {
            name: (int(model.joint(name).qposadr[0]), int(model.joint(name).dofadr[0]))
            for name in start
        }
        self._renderer: Any = None
        self._renderer_size: tuple[int, int] | None = None
        self._sim_seconds = 0.0
        self._wall_seconds = 0.0

    # -- construction -------------------------------------------------------------------------

    def _initial_positions(self, initial: Mapping[str, float]) -> dict[str, float]:
        start: dict[str, float] = {}
        for arm in self.robot.arms.values():
            for index, name in enumerate(arm.joint_names):
                start[name] = float(arm.neutral[index])
        unknown = sorted(set(initial) - set(start))
        if unknown:
            raise ConfigError(f'initial positions for joints that are not arm joints: {unknown}')
        for arm in self.robot.arms.values():
            for index, name in enumerate(arm.joint_names):
                if name in initial:
                    start[name] = check_number(
                        f'initial {name}', initial[name], float(arm.lower[index]),
                        float(arm.upper[index]),
                    )
        return start

    def _build(
        self, start: Mapping[str, float]
    ) -> tuple[Any, tuple[str, ...], dict[str, float], dict[str, ServoGains]]:
        """Edit and compile the URDF; return model, URDF joint order, held joints and gains."""
        mujoco = self._mujoco
        config = self.config
        spec = mujoco.MjSpec.from_file(str(self.robot.urdf_file))
        locked = self.robot.spec.locked_joints
        joint_order = tuple(joint.name for joint in spec.joints)
        held: dict[str, float] = {}
        for joint in list(spec.joints):
            if joint.name in start:
                continue
            value = float(locked.get(joint.name, 0.0))
            low, high = (float(bound) for bound in joint.range)
            if low < high:
                value = min(max(value, low), high)
            held[joint.name] = value
            _weld_joint(mujoco, spec, joint, value)
        for equality in list(spec.equalities):
            if equality.name1 in held or equality.name2 in held:
                spec.delete(equality)
        for joint in spec.joints:
            joint.damping = [0.0] * len(joint.damping)
            joint.armature = config.armature
            joint.actgravcomp = config.gravity_compensation
            joint.solref_limit = [max(_LIMIT_TIME_CONSTANT, 2.0 * config.timestep), 1.0]
            joint.margin = _LIMIT_MARGIN
        for body in spec.bodies:
            body.gravcomp = 1.0 if config.gravity_compensation else 0.0
        for geom in spec.geoms:
            geom.contype = _ROBOT_CONTACT
            geom.conaffinity = _FLOOR_CONTACT | (_ROBOT_CONTACT if config.self_collisions else 0)
        spec.option.timestep = config.timestep
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        spec.option.gravity = [0.0, 0.0, -9.81]
        spec.compiler.discardvisual = False  # keep the floor's material (the URDF has no visuals)
        spec.visual.global_.offwidth = MAX_IMAGE_SIZE[0]
        spec.visual.global_.offheight = MAX_IMAGE_SIZE[1]
        model = spec.compile()
        data = mujoco.MjData(model)
        for name, value in start.items():
            data.joint(name).qpos[0] = value
        mujoco.mj_forward(model, data)
        if config.self_collisions:
            self._exclude_initial_contacts(spec, model, data)
        inertia = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, data, inertia)
        gains: dict[str, ServoGains] = {}
        wn = config.natural_frequency
        for name in start:
            joint = model.joint(name)
            dof = int(joint.dofadr[0])
            moment = float(inertia[dof, dof])
            limited = bool(model.jnt_actfrclimited[joint.id])
            effort = float(model.jnt_actfrcrange[joint.id][1]) if limited else math.inf
            gains[name] = ServoGains(
                inertia=moment, kp=moment * wn**2, kv=2.0 * config.damping_ratio * wn * moment,
                effort=effort,
            )
            actuator = spec.add_actuator(
                name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT
            )
            actuator.set_to_position(kp=gains[name].kp, kv=gains[name].kv)
        self._add_scene(spec, model, data)
        return spec.compile(), joint_order, held, gains

    @staticmethod
    def _exclude_initial_contacts(spec: Any, model: Any, data: Any) -> None:
        """Exclude the body pairs in contact in the initial pose (overlapping link shapes)."""
        pairs = set()
        for contact in data.contact[:data.ncon]:
            bodies = sorted(int(model.geom_bodyid[geom]) for geom in contact.geom)
            pairs.add((bodies[0], bodies[1]))
        for first, second in sorted(pairs):
            spec.add_exclude(bodyname1=model.body(first).name, bodyname2=model.body(second).name)

    def _add_scene(self, spec: Any, model: Any, data: Any) -> None:
        mujoco = self._mujoco
        config = self.config
        corners = [_geom_corners(model, data, geom) for geom in range(model.ngeom)]
        floor = float(min(box[:, 2].min() for box in corners))
        points = []
        arm_low = math.inf
        for arm in self.robot.arms.values():
            joint = model.joint(arm.joint_names[0])
            first = int(joint.bodyid[0])
            root = data.xanchor[joint.id].copy()
            arm_boxes = [
                corners[geom] for geom in range(model.ngeom)
                if _descends_from(model, int(model.geom_bodyid[geom]), first)
            ]
            reach = max(
                (float(np.linalg.norm(box - root, axis=1).max()) for box in arm_boxes),
                default=0.5,
            )
            ahead = np.array([1.0, 0.0, 0.0])
            down = np.array([math.sqrt(0.5), 0.0, -math.sqrt(0.5)])
            workspace = np.array([root, root + reach * ahead, root + reach * down])
            arm_low = min(arm_low, float(workspace[:, 2].min()))
            points.append(workspace)
        # The rest of the robot frames the arms (torso, head) but not far below them (pedestal).
        points.extend(corners)
        cloud = np.concatenate(points)
        cloud[:, 2] = np.clip(cloud[:, 2], max(floor, arm_low - _BELOW_ARMS), None)
        low, high = cloud.min(axis=0), cloud.max(axis=0)
        centre = (low + high) / 2.0
        direction = np.array([
            math.cos(_CAMERA_ELEVATION) * math.cos(_CAMERA_AZIMUTH),
            math.cos(_CAMERA_ELEVATION) * math.sin(_CAMERA_AZIMUTH),
            math.sin(_CAMERA_ELEVATION),
        ])
        distance = _fitting_distance(cloud - centre, direction)
        position = centre + distance * direction
        spec.worldbody.add_camera(
            name=CAMERA_NAME, pos=position.tolist(), xyaxes=_look_at(position, centre),
            fovy=_CAMERA_FOVY,
        )
        spec.add_texture(
            name='pic_ros_grid', type=mujoco.mjtTexture.mjTEXTURE_2D,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.32, 0.36, 0.42],
            rgb2=[0.24, 0.27, 0.32], width=512, height=512,
        )
        spec.add_texture(
            name='pic_ros_sky', type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=[0.55, 0.65, 0.8],
            rgb2=[0.1, 0.12, 0.16], width=256, height=256,
        )
        material = spec.add_material(
            name='pic_ros_floor', texrepeat=[4.0, 4.0], texuniform=True, reflectance=0.0
        )
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = 'pic_ros_grid'
        spec.worldbody.add_geom(
            name='pic_ros_floor', type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05],
            pos=[0.0, 0.0, floor], material='pic_ros_floor', contype=_FLOOR_CONTACT,
            conaffinity=_ROBOT_CONTACT,
        )
        spec.worldbody.add_light(
            name='pic_ros_sun', type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
            pos=[centre[0], centre[1], high[2] + 2.0], dir=[-0.3, -0.2, -1.0],
            diffuse=[0.7, 0.7, 0.7], specular=[0.2, 0.2, 0.2], castshadow=config.shadows,
        )
        spec.visual.quality.shadowsize = _SHADOW_MAP_SIZE
        spec.visual.quality.offsamples = 0
        spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
        spec.visual.headlight.diffuse = [0.4, 0.4, 0.4]

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
        return self._data.qpos[self._controller(controller).qpos].copy()

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
        start time (a controller update at the physics rate), and kept within
        ``velocity limit * tracking lag`` of the measured position when ``limit_velocity`` is on.
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
        for _ in range(steps):
            now = float(data.time)
            for entry in self._controllers.values():
                measured = qpos[entry.qpos]
                target = entry.follower.sample(now).positions
                ctrl[entry.actuators] = measured + np.clip(
                    target - measured, -entry.reach, entry.reach
                )
            mujoco.mj_step(model, data)
        self._wall_seconds += time.perf_counter() - started
        self._sim_seconds += steps * dt
        return steps

    # -- rendering ----------------------------------------------------------------------------

    def render(self, width: int = 640, height: int = 480) -> npt.NDArray[np.uint8]:
        """
        Render the scene from :data:`CAMERA_NAME`, offscreen.

        :param width: Image width [px], at most 1920.
        :param height: Image height [px], at most 1080.
        :return: RGB pixels, shape (height, width, 3), ``uint8``.
        :raises RenderError: If no OpenGL backend works (the message says which was tried).
        :raises ConfigError: If the size is out of range.
        """
        renderer = self._renderer_for(width, height)
        try:
            renderer.update_scene(self._data, camera=CAMERA_NAME)
            return np.asarray(renderer.render(), dtype=np.uint8)
        except (RuntimeError, ValueError, self._mujoco.FatalError) as error:
            raise RenderError(f'rendering failed: {error}') from error

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


_WINDOWED_BACKENDS: Final = ('', 'glfw', 'glx', 'enable', 'enabled', 'on', 'true', '1')
"""``MUJOCO_GL`` values that need a display (GLFW): without one, creating a context aborts."""


def gl_backend_in_effect() -> str:
    """
    Return the OpenGL backend mujoco chose when it was imported (``MUJOCO_GL`` at that time).

    :return: The lower-case ``MUJOCO_GL`` value mujoco read ('' if it was unset).
    """
    module = sys.modules.get('mujoco.rendering.classic.gl_context')
    value = getattr(module, '_MUJOCO_GL', None)
    if isinstance(value, str):
        return value
    return os.environ.get('MUJOCO_GL', '').lower().strip()


def make_renderer(mujoco: Any, model: Any, width: int, height: int) -> Any:
    """
    Create a ``mujoco.Renderer`` or explain why it cannot be created.

    A windowed backend without a display is refused here: GLFW would abort the process.

    :param mujoco: The mujoco module.
    :param model: The model to render.
    :param width: Image width [px].
    :param height: Image height [px].
    :return: The renderer (its OpenGL context is current in the calling thread).
    :raises RenderError: If no OpenGL backend works.
    """
    backend = gl_backend_in_effect()
    hint = (
        'install EGL (libegl1 libegl-mesa0 libgl1-mesa-dri) or OSMesa (libosmesa6) and set '
        'MUJOCO_GL=egl or osmesa before mujoco is first imported'
    )
    if backend in ('disable', 'disabled', 'off', 'false', '0'):
        raise RenderError(f'offscreen rendering is disabled (MUJOCO_GL={backend!r})')
    has_display = bool(os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY'))
    if backend in _WINDOWED_BACKENDS and not has_display:
        raise RenderError(
            f'mujoco was imported with MUJOCO_GL={backend!r}, a windowed backend, and there is '
            f'no display; {hint}'
        )
    try:
        return mujoco.Renderer(model, height, width)
    except (ImportError, OSError, RuntimeError, AttributeError, mujoco.FatalError) as error:
        raise RenderError(
            f'offscreen rendering unavailable with MUJOCO_GL={backend!r}: {error}; {hint}'
        ) from error


class FrameRecorder:
    """
    Render frames of a :class:`SimRobot` to numbered PNG files from a background thread.

    :meth:`submit` copies the current joint positions and returns at once; a worker thread with
    its own ``MjData`` and OpenGL context renders them and writes ``frame_000000.png``, ...
    While the worker is busy a submitted frame is skipped (counted), so a slow software renderer
    never delays the simulation.

    :param sim: The simulated robot (its model is shared read-only).
    :param directory: Output folder (created if missing).
    :param width: Image width [px].
    :param height: Image height [px].
    """

    def __init__(self, sim: SimRobot, directory: str | Path, width: int = 640,
                 height: int = 480) -> None:
        if not (1 <= width <= MAX_IMAGE_SIZE[0] and 1 <= height <= MAX_IMAGE_SIZE[1]):
            raise ConfigError(f'image size out of range: {width} x {height}')
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._sim = sim
        self._size = (width, height)
        self._queue: queue.Queue[tuple[float, FloatArray] | None] = queue.Queue(maxsize=1)
        self._lock = threading.Lock()
        self.frames_written = 0
        self.frames_skipped = 0
        self.render_seconds = 0.0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name='pic_ros_frames', daemon=True)
        self._thread.start()

    @property
    def seconds_per_frame(self) -> float:
        """Return the mean wall time to render and write one frame [s] (nan before the first)."""
        with self._lock:
            if self.frames_written == 0:
                return math.nan
            return self.render_seconds / self.frames_written

    def submit(self) -> bool:
        """
        Queue the current state for rendering.

        :return: False if the frame was skipped (worker busy or stopped after an error).
        """
        if self.error is not None or not self._thread.is_alive():
            self.frames_skipped += 1
            return False
        try:
            self._queue.put_nowait((self._sim.time, self._sim.data.qpos.copy()))
        except queue.Full:
            self.frames_skipped += 1
            return False
        return True

    def _run(self) -> None:
        mujoco = self._sim.mujoco
        model = self._sim.model
        data = mujoco.MjData(model)
        width, height = self._size
        try:
            renderer = make_renderer(mujoco, model, width, height)
        except RenderError as error:
            self.error = str(error)
            return
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return
                started = time.perf_counter()
                data.time, data.qpos[:] = item[0], item[1]
                mujoco.mj_forward(model, data)
                renderer.update_scene(data, camera=CAMERA_NAME)
                image = renderer.render()
                path = self.directory / f'frame_{self.frames_written:06d}.png'
                write_png(path, image)
                with self._lock:
                    self.frames_written += 1
                    self.render_seconds += time.perf_counter() - started
        except (OSError, RuntimeError, ValueError, mujoco.FatalError) as error:
            self.error = f'frame recording stopped: {error}'
        finally:
            renderer.close()

    def close(self, timeout: float = 10.0) -> None:
        """
        Finish the queued frame and stop the worker.

        :param timeout: Longest wait for the worker [s].
        """
        if self._thread.is_alive():
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                return
            self._thread.join(timeout)
