"""
The MuJoCo model of a robot: its URDF loaded with :class:`mujoco.MjSpec`, edited and compiled.

:func:`build_model` makes the model a :class:`~pic_ros_tools.sim.mujoco_robot.SimRobot` runs.
Frames: the world frame is the URDF root link (REP-103: x forward, y left, z up, metres).

Model choices (:class:`~pic_ros_tools.sim.config.SimConfig` holds the numbers):

* **Fixed base**: the URDF root is welded to the world (MuJoCo's URDF import does that).
* **Arm joints** get a position actuator each, ``force = kp (target - q) - kv qdot``, tuned per
  joint from the joint-space inertia ``I`` at the initial pose (diagonal of the mass matrix, with
  the armature): ``kp = I wn^2``, ``kv = 2 zeta wn I`` (:class:`ServoGains`). That is a
  second-order servo with natural frequency ``wn`` and damping ratio ``zeta`` whose lag behind a
  ramp is ``kv / kp = 2 zeta / wn`` (:attr:`~pic_ros_tools.sim.config.SimConfig.tracking_lag`; 33
  ms with the defaults wn = 60 rad/s, zeta = 1). The stiffness is explicit in the ``implicitfast``
  integrator, so ``wn * timestep`` must stay small (checked <= 0.5; 0.12 by default). A uniform
  reflected drive inertia (``armature``, 0.05 kg m^2) is added to every arm joint, as
  gear-driven joints have; without it the wrist joints' inertia (down to 2e-4 kg m^2) would need
  gains too small to reject the coupling torques of the shoulder. A joint whose effort limit
  cannot accelerate that inertia at :data:`DRIVE_ACCELERATION` times its velocity limit per
  second (to its speed limit in 50 ms) gets the inertia it can (NAO: 0.008 kg m^2 at the
  shoulders, 0.0008 at the wrists; every joint of Baxter, YuMi and TIAGo keeps 0.05): a small
  drive is a small motor, and a drive too heavy for its motor overshoots every step.
* **URDF dynamics**: the ``<dynamics damping>`` of the arm joints is dropped (it is simulator
  tuning: TIAGo's 40 N m s/rad would need 94 N m at the velocity limit where the effort limit is
  26 N m); the servo's ``kv`` is the joint damping. ``friction`` (Coulomb, TIAGo 1 N m) is kept
  for the position servos alone; with ``feedforward`` (the default) the drives compensate it, as
  they compensate gravity and the joints' dynamics, and it is left out of the model (a sign
  feedforward on MuJoCo's regularised dry friction left 1.6-2.5x acceleration peaks at every
  reversal of TIAGo's joints; the 1 N m is 4 % of their 26 N m).
  The URDF effort limit bounds each joint's total actuator torque (MuJoCo ``actuatorfrcrange``).
* **Position limits** are stiff limit stops (time constant 4 ms). The servo targets are kept
  :func:`target_margin` inside the URDF limits, the margin within which the trajectory
  publisher plans (:func:`~pic_ros.motion.limiter.position_margin`: 15 mrad, or as far as the
  joint travels in 3 ms at its velocity limit when that is more, NAO's 8.3 rad/s shoulders
  25 mrad; at most 5 % of the range), and a stop engages halfway between that and the URDF
  limit (:data:`STOP_SHARE`). So a joint commanded to its limit rests clear of the stop: the
  publisher's commands never make a joint meet a stop (tested with every joint of Baxter, YuMi
  and TIAGo driven to its limits: the coupling torques of the other joints push a joint up to
  6.4 mrad past its commanded limit, YuMi's ``joint_3``); and a joint thrown across its whole
  range by raw steps (which the publisher never sends) still stays inside the URDF limits
  (NAO's effort-limited shoulders sink 9 mrad into the stop; MuJoCo's default soft limits let
  YuMi's joints through by 0.04 rad). Until issue 8 the stops engaged where the targets ended:
  a joint resting at its commanded limit sat on the stop and the other joints pushed it in
  (Baxter's ``s1`` on the demo recording at 13x its acceleration limit).
* **Gravity** is on, and compensated per body (``gravcomp = 1``) *through the actuators*
  (``actuatorgravcomp``): the compensation torque counts against the effort limit, like a robot
  controller's gravity feed-forward. So an arm at rest holds its pose exactly; an arm whose
  gravity load exceeds the effort limit sags.
* **Joints no controller drives** (locked joints such as TIAGo's torso, Hey5 finger links,
  wheels, casters, suspension) are welded at their held value (the locked value, else 0 clamped
  into its range) and reported with that value and zero velocity; their mimic equalities are
  dropped. A joint that mimics a driven joint (YuMi's second finger) keeps its URDF equality and
  moves with it. This is exact and cheap, and avoids servoing TIAGo's hand links, which have
  near-zero inertia.
* **Contacts**: by default robot geoms touch neither the floor (``floor_contacts``: the floor
  is a picture at the robot's lowest point; a fixed-base robot stands where its user mounted
  it, YuMi on a table whose edge its hands reach below) nor each other. The simplified link
  shapes of the URDFs overlap in the neutral pose (YuMi's first links sink 9 cm into the body,
  Baxter's elbow and forearm shells overlap by 13 mm, TIAGo's arm_1 touches the torso) and
  YuMi's arms collide with each other at the zero configuration; with every contact on, the
  arms drift from the neutral pose by up to 1.2 rad. The simulation shows what the commands
  do; it is not a collision checker. ``self_collisions=True`` turns robot-robot contacts on
  except for the body pairs already touching in the initial pose (so the arms hold still, and
  arm-arm and arm-torso contacts that appear later are simulated).
* **Scene**: floor, sky, light and camera (:func:`pic_ros_tools.sim.scene.add_scene`).
* **Mobile base** (a robot file with ``mobile_base``): the URDF root body is a MuJoCo *mocap*
  body, placed on the floor plane at every step by the base's kinematics
  (:class:`~pic_ros_tools.sim.base_drive.BaseDrive`): the robot drives exactly as commanded (no
  wheel slip, no contact with the floor for the base, which is static to the physics), and the arms
  do not feel the base's accelerations (<= 0.5 m/s^2 on TIAGo). Without ``mobile_base`` the
  model is unchanged.
* **Wrist force/torque sensors** (``force_torque_sensors``): a site at the origin of the sensor
  link with a MuJoCo ``force`` and ``torque`` sensor on it: the wrench between the sensor link
  (with everything welded beyond it: the hand) and its parent, in the link's frame. Naming the
  link in a sensor keeps MuJoCo from fusing it into its parent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion.limiter import position_margin
from pic_ros.robot.robot import Robot
from pic_ros_tools.sim.config import SimConfig
from pic_ros_tools.sim.offscreen import MAX_IMAGE_SIZE
from pic_ros_tools.sim.scene import add_scene, FLOOR_CONTACT, FLOOR_NAME, ROBOT_CONTACT

FloatArray = npt.NDArray[np.float64]

_LIMIT_TIME_CONSTANT: Final = 0.004
"""Time constant of the joint limit stops [s] (MuJoCo's default 0.02 lets a fast joint through
by up to 0.04 rad; never below two time steps)."""

STOP_SHARE: Final = 0.5
"""Where a limit stop engages, as a share of the target margin inside the URDF limit: halfway
between the limit and the farthest servo target."""

DRIVE_ACCELERATION: Final = 20.0
"""Acceleration a joint's effort limit must give its drive inertia, as its velocity limit per
second [1/s]."""


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


def _exclude_initial_contacts(spec: Any, model: Any, data: Any) -> None:
    """Exclude the body pairs in contact in the initial pose (overlapping link shapes)."""
    pairs = set()
    for contact in data.contact[:data.ncon]:
        bodies = sorted(int(model.geom_bodyid[geom]) for geom in contact.geom)
        pairs.add((bodies[0], bodies[1]))
    for first, second in sorted(pairs):
        spec.add_exclude(bodyname1=model.body(first).name, bodyname2=model.body(second).name)


def _drive(robot: Robot, name: str) -> tuple[float, float]:
    """Return a joint's URDF effort and velocity limits (infinite when it has none)."""
    joint = robot.model.joints.get(name)
    limits = None if joint is None else joint.limits
    if limits is None or not (limits.effort > 0.0 and limits.velocity > 0.0):
        return math.inf, math.inf
    return limits.effort, limits.velocity


def _armature(robot: Robot, name: str, armature: float) -> float:
    """Return a joint's drive inertia: ``armature``, or what its effort limit can accelerate."""
    effort, velocity = _drive(robot, name)
    if not (math.isfinite(effort) and math.isfinite(velocity)):
        return armature
    return min(armature, effort / (DRIVE_ACCELERATION * velocity))


def target_margin(robot: Robot, name: str) -> float:
    """
    Return how far inside its URDF position limits a joint's servo target is kept.

    :param robot: The robot.
    :param name: Joint name.
    :return: The margin the trajectory publisher keeps too
        (:func:`~pic_ros.motion.limiter.position_margin`) [rad] or [m] (0 without finite
        limits).
    """
    joint = robot.model.joints.get(name)
    limits = None if joint is None else joint.limits
    if limits is None:
        return 0.0
    velocity = _drive(robot, name)[1]
    return float(position_margin([limits.lower], [limits.upper], [velocity])[0])


def _follows(robot: Robot, name: str, start: Mapping[str, float]) -> bool:
    """Whether a joint mimics a driven joint (its URDF mimic equality then moves it)."""
    joint = robot.model.joints.get(name)
    return joint is not None and joint.mimic is not None and joint.mimic[0] in start


def mimic_positions(robot: Robot, start: Mapping[str, float]) -> dict[str, float]:
    """
    Return where the joints that mimic driven joints start: multiplier x leader + offset.

    :param robot: The robot.
    :param start: Initial position of every driven joint [rad] or [m].
    :return: ``{mimic joint: position}``.
    """
    positions = {}
    for joint in robot.model.joints.values():
        if joint.mimic is not None and joint.mimic[0] in start:
            leader, multiplier, offset = joint.mimic
            positions[joint.name] = multiplier * start[leader] + offset
    return positions


def sensor_names(arm: str) -> tuple[str, str, str]:
    """
    Return the names of an arm's force/torque site and sensors in the model.

    :param arm: Arm name.
    :return: ``(site, force sensor, torque sensor)``.
    """
    return f'{arm}_ft_site', f'{arm}_ft_force', f'{arm}_ft_torque'


def _add_robot_extras(mujoco: Any, spec: Any, robot: Robot) -> None:
    """Make the root a mocap body (mobile base) and add the force/torque sensors."""
    if robot.spec.mobile_base is not None:
        root = spec.worldbody.first_body()
        if root is None or list(root.joints):
            raise ConfigError(f'{robot.name}: a mobile base needs a URDF root link without joints')
        root.mocap = True
    for arm, sensor in robot.spec.force_torque_sensors.items():
        body = spec.body(sensor.link)
        if body is None:
            raise ConfigError(
                f'{robot.name}: force_torque_sensors.{arm}: no link {sensor.link!r} in the URDF'
            )
        site, force, torque = sensor_names(arm)
        body.add_site(name=site)
        for name, kind in ((force, mujoco.mjtSensor.mjSENS_FORCE),
                           (torque, mujoco.mjtSensor.mjSENS_TORQUE)):
            spec.add_sensor(
                name=name, type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=site
            )


def _weld_the_others(
    mujoco: Any, spec: Any, robot: Robot, start: Mapping[str, float]
) -> dict[str, float]:
    """
    Weld every joint that is neither driven nor a mimic of a driven one; drop their couplings.

    :param mujoco: The mujoco module.
    :param spec: The model being edited (``mujoco.MjSpec``).
    :param robot: The robot (its locked joints' values).
    :param start: Initial position of every driven joint by name [rad] or [m].
    :return: The welded joints with the value they are held at (the locked value, within the
        joint's range), [rad] or [m].
    """
    locked = robot.spec.locked_joints
    held: dict[str, float] = {}
    for joint in list(spec.joints):
        if joint.name in start or _follows(robot, joint.name, start):
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
    return held


def _set_physics(
    mujoco: Any, spec: Any, robot: Robot, config: SimConfig, start: Mapping[str, float]
) -> None:
    """
    Set the joints' friction, armature and limits, the contacts and the solver options.

    :param mujoco: The mujoco module.
    :param spec: The model being edited (``mujoco.MjSpec``).
    :param robot: The robot (armature and limit margins per joint).
    :param config: Physics settings.
    :param start: The driven joints (their dry friction is fed forward when ``feedforward``).
    """
    for joint in spec.joints:
        joint.damping = [0.0] * len(joint.damping)
        if config.feedforward and joint.name in start:
            joint.frictionloss = 0.0  # the drive's feedforward compensates its dry friction
        joint.armature = _armature(robot, joint.name, config.armature)
        joint.actgravcomp = config.gravity_compensation
        joint.solref_limit = [max(_LIMIT_TIME_CONSTANT, 2.0 * config.timestep), 1.0]
        joint.margin = STOP_SHARE * target_margin(robot, joint.name)
    for body in spec.bodies:
        body.gravcomp = 1.0 if config.gravity_compensation else 0.0
    for geom in spec.geoms:
        geom.contype = ROBOT_CONTACT
        geom.conaffinity = (
            (FLOOR_CONTACT if config.floor_contacts else 0)
            | (ROBOT_CONTACT if config.self_collisions else 0)
        )
    spec.option.timestep = config.timestep
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.gravity = [0.0, 0.0, -9.81]
    spec.compiler.discardvisual = False  # keep the floor's material (the URDF has no visuals)
    spec.visual.global_.offwidth = MAX_IMAGE_SIZE[0]
    spec.visual.global_.offheight = MAX_IMAGE_SIZE[1]


def _add_servos(
    mujoco: Any, spec: Any, model: Any, data: Any, config: SimConfig,
    start: Mapping[str, float],
) -> dict[str, ServoGains]:
    """
    Add a position servo per driven joint, tuned to the joint's inertia at the start pose.

    :param mujoco: The mujoco module.
    :param spec: The model being edited (``mujoco.MjSpec``).
    :param model: The model compiled so far, at the start pose in ``data``.
    :param data: Its state at the start pose (``mj_forward`` done).
    :param config: The servo's natural frequency and damping ratio.
    :param start: The driven joints.
    :return: Each driven joint's servo gains.
    """
    inertia = np.zeros((model.nv, model.nv))
    mujoco.mj_fullM(model, data, inertia)
    gains: dict[str, ServoGains] = {}
    wn = config.natural_frequency
    for name in start:
        joint = model.joint(name)
        moment = float(inertia[int(joint.dofadr[0]), int(joint.dofadr[0])])
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
    return gains


def build_model(
    mujoco: Any, robot: Robot, config: SimConfig, start: Mapping[str, float]
) -> tuple[Any, tuple[str, ...], dict[str, float], dict[str, ServoGains]]:
    """
    Edit and compile a robot's URDF into the simulated model.

    :param mujoco: The mujoco module.
    :param robot: The robot (its URDF file and locked joints).
    :param config: Physics and servo settings.
    :param start: Initial position of every arm joint by name [rad] or [m]; the joints not in it
        are welded.
    :return: ``(model, joint_order, held, gains)``: the compiled ``mujoco.MjModel``, every
        movable joint of the URDF in URDF order, the welded joints with the value they are held
        at [rad] or [m], and the servo of every arm joint.
    """
    spec = mujoco.MjSpec.from_file(str(robot.urdf_file))
    _add_robot_extras(mujoco, spec, robot)
    joint_order = tuple(joint.name for joint in spec.joints)
    held = _weld_the_others(mujoco, spec, robot, start)
    _set_physics(mujoco, spec, robot, config, start)
    model = spec.compile()
    data = mujoco.MjData(model)
    for name, value in (dict(start) | mimic_positions(robot, start)).items():
        data.joint(name).qpos[0] = value
    mujoco.mj_forward(model, data)
    if config.self_collisions:
        _exclude_initial_contacts(spec, model, data)
    gains = _add_servos(mujoco, spec, model, data, config, start)
    add_scene(mujoco, spec, model, data, robot, config.shadows)
    if not config.floor_contacts:
        floor = spec.geom(FLOOR_NAME)
        floor.contype = 0
        floor.conaffinity = 0
    return spec.compile(), joint_order, held, gains
