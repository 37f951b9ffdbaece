"""MuJoCo simulation of the shipped robots: model, holding, tracking, limits and rendering."""

from __future__ import annotations

import math
import os
from pathlib import Path
import time

os.environ.setdefault('MUJOCO_GL', 'egl')  # before mujoco is first imported

import numpy as np  # noqa: E402
from pic_ros.exceptions import ConfigError  # noqa: E402
from pic_ros.motion.commander import ArmCommander, CommanderConfig  # noqa: E402
from pic_ros.resources import shipped_robots  # noqa: E402
from pic_ros.robot import load_robot  # noqa: E402
from pic_ros_tools.live_evaluation import command_limits  # noqa: E402
from pic_ros_tools.sim import (  # noqa: E402
    FrameRecorder,
    RenderError,
    SimConfig,
    SimRobot,
    Trajectory,
    Waypoint,
)
from pic_ros_tools.sim.frame_recorder import write_png  # noqa: E402
from pic_ros_tools.sim.mujoco_model import target_margin  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip('mujoco')

ROBOTS = shipped_robots()
"""Every robot of ``config/`` (a robot file with its URDF)."""

SINE_AMPLITUDE = 0.3
"""Amplitude of the tracking sine on every arm joint [rad]."""

SINE_FREQUENCY = 0.5
"""Frequency of the tracking sine [Hz]; peak speed 0.94 rad/s."""

STREAM_PERIOD = 0.01
"""Period of the streamed one-point trajectories, like trajectory_publisher at 100 Hz [s]."""

LEAD = 0.02
"""time_from_start of each streamed point [s]."""


@pytest.fixture(scope='module', params=ROBOTS)
def robot(request):
    """Each shipped robot, loaded once per module."""
    return load_robot(request.param)


def arms_by_controller(sim: SimRobot):
    """Return the robot's arms keyed by controller name."""
    return {arm.spec.controller: arm for arm in sim.robot.arms.values()}


def sine_centre(arm):
    """Return the arm's neutral pose moved so that the sine stays inside the limits."""
    return np.clip(arm.neutral, arm.lower + SINE_AMPLITUDE, arm.upper - SINE_AMPLITUDE)


def stream_sine(sim: SimRobot, duration: float, settle: float):
    """
    Stream a sine on every joint of every arm as one-point trajectories with velocities.

    :return: Per controller, the largest ``|measured - sine(t)|`` after ``settle`` [rad], and
        the largest distance outside the position limits over the whole run [rad].
    """
    arms = arms_by_controller(sim)
    omega = 2 * math.pi * SINE_FREQUENCY
    errors = dict.fromkeys(arms, 0.0)
    outside = 0.0
    start = sim.time
    while sim.time < start + duration:
        for controller, arm in arms.items():
            t = sim.time - start + LEAD
            positions = sine_centre(arm) + SINE_AMPLITUDE * math.sin(omega * t)
            velocities = np.full(arm.dof, SINE_AMPLITUDE * omega * math.cos(omega * t))
            point = Waypoint(LEAD, positions.tolist(), velocities.tolist())
            assert sim.command(controller, Trajectory(arm.joint_names, [point])).accepted
        sim.step_to(sim.time + STREAM_PERIOD)
        for controller, arm in arms.items():
            measured = sim.arm_positions(controller)
            outside = max(outside, float(np.max(measured - arm.upper)),
                          float(np.max(arm.lower - measured)))
            if sim.time - start >= settle:
                reference = sine_centre(arm) + SINE_AMPLITUDE * math.sin(
                    omega * (sim.time - start)
                )
                errors[controller] = max(
                    errors[controller], float(np.abs(measured - reference).max())
                )
    return errors, outside


def test_each_robot_builds_with_an_actuator_per_controlled_joint(robot):
    """
    The model has every URDF joint, one servo per controlled joint, the held joints welded.

    Controlled joints are those of the arms, head and grippers; a joint that mimics one of them
    follows it (not welded, no servo); every other joint is welded.
    """
    sim = SimRobot(robot)
    model = sim.model
    driven = {name for group in robot.groups.values() for name in group.joint_names}
    followers = {
        joint.name for joint in robot.model.joints.values()
        if joint.mimic is not None and joint.mimic[0] in driven
    }
    assert model.nu == len(driven)
    assert {model.actuator(i).name for i in range(model.nu)} == driven
    assert set(sim.controllers) == {group.controller for group in robot.groups.values()}
    assert set(sim.joint_names) == driven | followers | set(sim.held_joints)
    assert not (driven | followers) & set(sim.held_joints)
    for name, value in robot.spec.locked_joints.items():
        assert sim.held_joints[name] == pytest.approx(value)
        assert sim.joint_positions()[name] == pytest.approx(value)
    assert model.camera('pic_ros_view') is not None
    assert model.opt.timestep == pytest.approx(0.002)
    for name, gains in sim.gains.items():
        assert gains.kv / gains.kp == pytest.approx(sim.config.tracking_lag), name
        assert gains.kp > 0 and gains.effort > 0


def test_the_model_kinematics_match_the_core_urdf_chains(robot):
    """
    The model's joint anchors at the neutral pose are the core's landmarks.

    MuJoCo's world is the URDF root; the core's frame is the robot's base frame, the same link
    for Baxter and TIAGo (so TIAGo's torso, servoed at its neutral 0.15 m, is checked too) and
    0.1 m above the root for YuMi. So the two sets differ by one constant offset.
    """
    sim = SimRobot(robot)
    offsets = []
    for arm in robot.arms.values():
        landmarks = arm.landmarks(arm.neutral)[:4]
        names = (arm.joint_names[0], arm.spec.shoulder, arm.spec.elbow, arm.spec.wrist)
        anchors = np.array([sim.data.joint(name).xanchor for name in names])
        offsets.extend(anchors - landmarks)
    offsets = np.array(offsets)
    np.testing.assert_allclose(offsets, np.broadcast_to(offsets[0], offsets.shape), atol=1e-9)
    if robot.model.root_link == robot.base_frame:
        np.testing.assert_allclose(offsets[0], 0.0, atol=1e-9)


def test_the_neutral_pose_holds_still_under_gravity(robot):
    """
    Gravity on, no trajectory: over 2 s no joint drifts by 1e-3 rad.

    A joint whose neutral value is at a position limit (an open gripper) is pushed inside by the
    servo target's margin, and only that far; its mimic joints follow it.
    """
    sim = SimRobot(robot)
    before = sim.joint_positions()
    assert sim.step_to(2.0) == 1000
    after = sim.joint_positions()
    for name in before:
        joint = robot.model.joints[name]
        leader = robot.model.joints[joint.mimic[0]] if joint.mimic is not None else joint
        limits = leader.limits
        allowed = 1e-3
        if limits is not None and name not in robot.spec.locked_joints:
            at_limit = min(abs(before[leader.name] - limits.lower),
                           abs(before[leader.name] - limits.upper))
            margin = target_margin(robot, leader.name)
            if at_limit < margin:
                scale = abs(joint.mimic[1]) if joint.mimic is not None else 1.0
                allowed += scale * (margin - at_limit)
        assert abs(after[name] - before[name]) < allowed, name
    assert sim.model.opt.gravity[2] == pytest.approx(-9.81)


def test_an_arm_without_gravity_compensation_sags_but_holds(robot):
    """Without compensation the servos alone hold the arm: it sags by torque / kp, boundedly."""
    sim = SimRobot(robot, SimConfig(gravity_compensation=False))
    before = sim.joint_positions()
    sim.step_to(2.0)
    after = sim.joint_positions()
    sag = max(abs(after[name] - before[name]) for name in before)
    assert 1e-4 < sag < 0.1


def test_a_streamed_sine_is_tracked_with_the_servo_lag(robot):
    """
    Without feedforward a 0.3 rad, 0.5 Hz sine streamed at 100 Hz is tracked within 0.045 rad.

    Measured: 0.032 (Baxter, YuMi) to 0.037 rad (TIAGo), the lag of 33 ms times the peak speed
    of 0.94 rad/s (0.031 rad) plus TIAGo's joint friction. The error is also not near zero:
    a pure position servo lags.
    """
    sim = SimRobot(robot, SimConfig(feedforward=False))
    errors, outside = stream_sine(sim, duration=3.0, settle=1.0)
    expected_lag_error = SINE_AMPLITUDE * 2 * math.pi * SINE_FREQUENCY * sim.config.tracking_lag
    for controller, error in errors.items():
        assert 0.5 * expected_lag_error < error < 0.045, controller
    assert outside <= 0.0


@pytest.mark.parametrize('feedforward', [False, True])
def test_a_ramp_lags_by_the_configured_tracking_lag(robot, feedforward):
    """
    A constant-speed move lags its command by ``2 zeta / wn`` (33 ms) plus friction / (kp v).

    Measured: 33 ms on Baxter and YuMi; 34-44 ms on TIAGo, whose joints keep the URDF's 1 N m
    Coulomb friction. With the velocity feedforward the servo's own lag is gone: friction alone.
    """
    sim = SimRobot(robot, SimConfig(feedforward=feedforward))
    speed = 0.5
    for controller, arm in arms_by_controller(sim).items():
        start = np.clip(arm.neutral, arm.lower + 0.05, arm.upper - 0.6)
        sim.command(controller, Trajectory(arm.joint_names, [Waypoint(0.0, start.tolist())]))
    sim.step_to(1.0)
    for controller, arm in arms_by_controller(sim).items():
        start = np.clip(arm.neutral, arm.lower + 0.05, arm.upper - 0.6)
        end = start + speed * 1.0
        sim.command(controller, Trajectory(arm.joint_names, [Waypoint(1.0, end.tolist())]))
    sim.step_to(1.8)
    model = sim.model
    for controller, arm in arms_by_controller(sim).items():
        lag = (sim.commanded(controller).positions - sim.arm_positions(controller)) / speed
        friction = np.array([
            model.dof_frictionloss[model.joint(name).dofadr[0]] / sim.gains[name].kp
            for name in arm.joint_names
        ]) / speed
        expected = (0.0 if feedforward else sim.config.tracking_lag) + friction
        assert np.all(np.abs(lag - expected) < 0.003), (controller, lag, expected)


def test_a_step_settles_fast_with_little_overshoot(robot):
    """
    A 0.2 rad jump on every joint (first point at time 0) settles to 10 mrad within 0.35 s.

    Measured: 0.08-0.22 s, overshoot at most 0.011 rad (Baxter's shoulder, effort-limited),
    residual error after 0.6 s none, except on TIAGo, whose 1 N m joint friction holds a joint up
    to friction / kp = 5.4 mrad from its target (3 mrad measured).
    """
    sim = SimRobot(robot)
    arms = arms_by_controller(sim)
    targets = {}
    for controller, arm in arms.items():
        targets[controller] = np.clip(arm.neutral, arm.lower, arm.upper - 0.25) + 0.2
        point = Waypoint(0.0, targets[controller].tolist())
        assert sim.command(controller, Trajectory(arm.joint_names, [point])).accepted
    history = []
    while sim.time < 1.0:
        sim.step_to(sim.time + 0.002)
        history.append((sim.time, {c: sim.arm_positions(c) - targets[c] for c in arms}))
    for controller in arms:
        errors = np.array([errors[controller] for _, errors in history])
        times = np.array([t for t, _ in history])
        assert np.abs(errors[times >= 0.35]).max() < 0.01, controller
        assert errors.max() < 0.03, controller  # overshoot past the target
        arm = arms[controller]
        stiction = max(  # Coulomb friction holds a joint within friction / kp of its target
            sim.model.dof_frictionloss[sim.model.joint(name).dofadr[0]] / sim.gains[name].kp
            for name in arm.joint_names
        )
        assert np.abs(errors[times >= 0.6]).max() < stiction + 1e-3, controller


def test_joint_positions_never_leave_the_urdf_limits(robot):
    """Commands far outside the limits, jumps across the range: positions stay inside."""
    sim = SimRobot(robot)
    arms = arms_by_controller(sim)
    worst = 0.0
    for jump in range(4):
        for controller, arm in arms.items():
            beyond = arm.upper + 1.0 if jump % 2 == 0 else arm.lower - 1.0
            verdict = sim.command(controller, Trajectory(arm.joint_names, [Waypoint(0.0, beyond)]))
            assert verdict.accepted and verdict.clamped_points == 1
        end = sim.time + 1.5
        while sim.time < end:
            sim.step_to(sim.time + 0.002)
            for controller, arm in arms.items():
                measured = sim.arm_positions(controller)
                worst = max(worst, float(np.max(measured - arm.upper)),
                            float(np.max(arm.lower - measured)))
    assert worst <= 0.0
    for name, value in sim.joint_positions().items():
        joint = sim.model.joint(name) if name not in sim.held_joints else None
        if joint is not None and sim.model.jnt_limited[joint.id]:
            low, high = sim.model.jnt_range[joint.id]
            assert low <= value <= high


def test_a_new_trajectory_replaces_the_old_one_in_the_simulation():
    """Mid-way through a slow move, a new trajectory takes over from the commanded state."""
    sim = SimRobot('yumi')
    arm = sim.robot.arms['left']
    controller = arm.spec.controller
    far = np.clip(arm.neutral + 0.5, arm.lower, arm.upper)
    sim.command(controller, Trajectory(arm.joint_names, [Waypoint(4.0, far.tolist())]))
    sim.step_to(1.0)
    commanded = sim.commanded(controller).positions
    sim.command(controller, Trajectory(arm.joint_names, [Waypoint(1.0, arm.neutral.tolist())]))
    np.testing.assert_allclose(sim.commanded(controller).positions, commanded)
    sim.step_to(3.0)
    np.testing.assert_allclose(sim.arm_positions(controller), arm.neutral, atol=2e-3)


def test_rejected_trajectories_leave_the_robot_still():
    """An invalid trajectory is rejected with its reason and nothing moves."""
    sim = SimRobot('yumi')
    arm = sim.robot.arms['right']
    before = sim.arm_positions(arm.spec.controller)
    bad = Trajectory(arm.joint_names[:-1], [Waypoint(0.5, [0.0] * (arm.dof - 1))])
    verdict = sim.command(arm.spec.controller, bad)
    assert not verdict.accepted and 'missing' in verdict.detail
    sim.step_to(1.0)
    np.testing.assert_allclose(sim.arm_positions(arm.spec.controller), before, atol=1e-9)
    with pytest.raises(ConfigError, match='controllers'):
        sim.command('no_such_controller', bad)


def test_self_collisions_stop_yumis_arms_against_each_other_only_when_asked():
    """
    The arms of a YuMi swung to the zero configuration meet: with self-collisions on they stop.

    Off (the default) they pass through each other and reach the target; on, the pairs touching
    in the neutral pose are excluded (the arms still hold still there) and the wrists collide,
    leaving 0.085 rad of error (measured).
    """
    for self_collisions in (False, True):
        sim = SimRobot('yumi', SimConfig(self_collisions=self_collisions))
        before = sim.joint_positions()
        sim.step_to(1.0)
        after = sim.joint_positions()
        arm_joints = [name for arm in sim.robot.arms.values() for name in arm.joint_names]
        assert max(abs(after[name] - before[name]) for name in arm_joints) < 1e-3
        for controller, arm in arms_by_controller(sim).items():
            zero = np.clip(np.zeros(arm.dof), arm.lower, arm.upper)
            sim.command(controller, Trajectory(arm.joint_names, [Waypoint(2.0, zero.tolist())]))
        sim.step_to(5.0)
        error = max(sim.tracking_error(controller) for controller in arms_by_controller(sim))
        if self_collisions:
            assert error > 0.03
        else:
            assert error < 1e-3


def test_invalid_settings_are_refused():
    """Settings outside their ranges, or a stiffness too high for the step, are refused."""
    with pytest.raises(ConfigError, match='timestep'):
        SimConfig(timestep=0.5)
    with pytest.raises(ConfigError, match='unstable'):
        SimConfig(timestep=0.01, natural_frequency=100.0)
    with pytest.raises(ConfigError, match='armature'):
        SimConfig(armature=-1.0)
    with pytest.raises(ConfigError, match='no controller drives'):
        SimRobot('yumi', initial={'gripper_l_joint_m': 0.01})
    with pytest.raises(ConfigError):
        SimRobot('yumi', initial={'yumi_joint_1_l': 10.0})


def test_initial_positions_are_where_the_robot_starts():
    """Given initial positions replace the neutral pose and are held."""
    sim = SimRobot('tiago', initial={'arm_4_joint': 1.0})
    assert sim.joint_positions()['arm_4_joint'] == pytest.approx(1.0)
    sim.step_to(1.0)
    assert sim.joint_positions()['arm_4_joint'] == pytest.approx(1.0, abs=1e-3)


def render_or_skip(sim: SimRobot, width: int = 320, height: int = 240):
    """Render a frame, or skip the test with the reason when no OpenGL backend works."""
    try:
        return sim.render(width, height)
    except RenderError as error:
        pytest.skip(f'no offscreen OpenGL (MUJOCO_GL=egl or osmesa): {error}')


def test_rendering_produces_a_picture_of_the_robot(robot):
    """An offscreen frame is not blank, and moving an arm changes it."""
    with SimRobot(robot) as sim:
        image = render_or_skip(sim)
        assert image.shape == (240, 320, 3) and image.dtype == np.uint8
        assert image.std() > 10.0
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 50
        for controller, arm in arms_by_controller(sim).items():
            moved = np.clip(arm.neutral + 0.8, arm.lower, arm.upper)
            sim.command(controller, Trajectory(arm.joint_names, [Waypoint(0.0, moved.tolist())]))
        sim.step_to(1.0)
        other = sim.render(320, 240)
        assert np.abs(other.astype(int) - image.astype(int)).sum(axis=2).astype(bool).mean() > 0.01


def test_frames_are_recorded_as_png_files(tmp_path: Path):
    """The background recorder writes numbered PNG files without blocking the simulation."""
    sim = SimRobot('yumi')
    render_or_skip(sim, 64, 48)
    sim.close()
    recorder = FrameRecorder(sim, tmp_path / 'frames', 160, 120)
    submitted = 0
    deadline = time.monotonic() + 60.0  # a bound for a busy host, not a figure
    while recorder.frames_written < 3 and time.monotonic() < deadline:
        sim.step_to(sim.time + 0.1)
        submitted += recorder.submit()
        time.sleep(0.05)
    recorder.close()
    assert recorder.error is None
    files = sorted((tmp_path / 'frames').glob('frame_*.png'))
    assert len(files) == recorder.frames_written >= 3
    assert files[0].name == 'frame_000000.png'
    content = files[0].read_bytes()
    assert content.startswith(b'\x89PNG\r\n\x1a\n')
    assert int.from_bytes(content[16:20], 'big') == 160
    assert recorder.seconds_per_frame > 0.0


def test_png_writer_checks_its_input(tmp_path: Path):
    """The PNG writer takes (H, W, 3|4) uint8 arrays only."""
    write_png(tmp_path / 'ok.png', np.zeros((2, 3, 4), dtype=np.uint8))
    assert (tmp_path / 'ok.png').read_bytes()[:4] == b'\x89PNG'
    with pytest.raises(ConfigError):
        write_png(tmp_path / 'bad.png', np.zeros((2, 3), dtype=np.uint8))


def test_held_joints_are_welded_where_their_value_puts_them(tmp_path: Path):
    """
    Welding a joint at a value puts every link where MuJoCo's own kinematics put it.

    TIAGo with its torso locked at 0.15 m and, in a modified robot file, the head locked at
    0.5 rad pan and -0.3 rad tilt: every geom of the simulated model (held joints welded) is where
    the unmodified URDF model puts it with those joint values.
    """
    import mujoco
    import yaml

    spec = yaml.safe_load(Path(load_robot('tiago').spec.source).read_text(encoding='utf-8'))
    spec['urdf'] = str(load_robot('tiago').urdf_file)
    spec['locked_joints'] = {'torso_lift_joint': 0.15, 'head_1_joint': 0.5, 'head_2_joint': -0.3}
    del spec['head']  # its joints are locked instead
    del spec['torso']  # and so is the torso, to weld it
    path = tmp_path / 'tiago_head.yaml'
    path.write_text(yaml.safe_dump(spec), encoding='utf-8')
    sim = SimRobot(path)
    assert sim.held_joints['head_1_joint'] == pytest.approx(0.5)
    reference = mujoco.MjModel.from_xml_path(str(sim.robot.urdf_file))
    data = mujoco.MjData(reference)
    values = dict(sim.held_joints)
    values.update(zip(sim.robot.arms['arm'].joint_names, sim.robot.arms['arm'].neutral))
    for name, value in values.items():
        data.joint(name).qpos[0] = value
    mujoco.mj_kinematics(reference, data)
    expected = data.geom_xpos.copy()
    floor = sim.model.geom('pic_ros_floor').id
    simulated = np.delete(sim.data.geom_xpos, floor, axis=0)
    assert len(simulated) == len(expected)
    distances = np.linalg.norm(expected[:, None, :] - simulated[None, :, :], axis=2).min(axis=1)
    assert distances.max() < 1e-9


@pytest.mark.parametrize('feedforward', [False, True])
def test_a_joint_follows_a_stamped_ruckig_stream_within_its_limits(feedforward):
    """
    On a ruckig stream the joints' acceleration stays within the limit (1.6x with servos alone).

    The trajectory publisher's commander follows two sines per joint (within the limits, 30 Hz
    targets, its 50 Hz timer); each chunk's plan starts ``plan_ahead`` after its step, the
    chunk first repeats the previous one up to there and reaches the controller at the next
    physics step, so the follower's reference continues without a seam, within
    ``1 - limit_headroom`` of the limits. With the model-based feedforward (the
    default) the joint follows it within a few percent of the limit, the coupling between
    joints included: inside the limit. Position servos alone filter it with their own
    transients (measured on Baxter's left arm: 1.05x).
    """
    sim = SimRobot('baxter', SimConfig(feedforward=feedforward))
    arm = sim.robot.arms['left']
    controller = arm.spec.controller
    config = CommanderConfig()
    commander = ArmCommander(arm, config, engaged=True)
    commander.start_from(sim.arm_positions(controller))
    limits = command_limits(arm, config)
    rng = np.random.default_rng(5)
    amplitude = 0.3 * arm.velocity / (2 * math.pi) * rng.uniform(0.5, 1.0, (2, arm.dof))
    amplitude /= np.array([[0.4], [1.1]])
    phase = rng.uniform(0.0, 2 * math.pi, (2, arm.dof))
    centre = np.clip(arm.neutral, arm.lower + 0.4, arm.upper - 0.4)

    def target(t: float) -> dict[str, float]:
        wave = amplitude[0] * np.sin(0.8 * math.pi * t + phase[0])
        wave = wave + amplitude[1] * np.sin(2.2 * math.pi * t + phase[1])
        return dict(zip(arm.joint_names, (centre + wave).tolist()))

    events = sorted([(t, 0) for t in np.arange(0.2, 2.5, 1 / 30)]
                    + [(t, 1) for t in np.arange(0.21, 2.5, 1 / config.rate)])
    dofs = [sim.model.joint(name).dofadr[0] for name in arm.joint_names]
    accelerations = []
    while sim.time < 2.5:
        now = sim.time
        while events and events[0][0] <= now:
            when, kind = events.pop(0)
            if kind == 0:
                commander.on_target(when, target(when))
            chunk = commander.step(when)
            if chunk is not None:
                if chunk.stamp > 0.0:  # a chunk holding still is stamped 0 (on arrival)
                    begins = chunk.stamp + chunk.command.time_from_start
                    assert begins == pytest.approx(when + config.plan_ahead)
                points = [
                    Waypoint(p.time_from_start, p.positions.tolist(), p.velocities.tolist(),
                             [] if p.accelerations is None else p.accelerations.tolist())
                    for p in chunk.points
                ]
                verdict = sim.command(
                    controller, Trajectory(chunk.joint_names, points, stamp=chunk.stamp)
                )
                assert verdict.accepted
        before = sim.data.qvel[dofs].copy()
        sim.step_to(now + 0.002)
        if now >= 0.7:
            accelerations.append((sim.data.qvel[dofs] - before) / 0.002)
    share = np.abs(np.array(accelerations)) / limits.acceleration
    assert 0.5 < share.max() < (1.0 if feedforward else 1.6)


@pytest.mark.parametrize('feedforward', [False, True])
def test_commands_within_the_commanders_limits_never_reach_a_limit_stop(robot, feedforward):
    """
    The trajectory publisher's commands drive every joint to its limits: no joint meets a stop.

    Each arm's commander (ruckig, the defaults) follows targets at 30 Hz beyond both position
    limits of every joint (it plans within the URDF limits narrowed by the position margin):
    every joint to its upper limit, to its lower one, then twice each to a random one of the
    two (1 s each); each chunk is stamped and reaches the controller at the next physics step.
    The servo targets keep the same margin and the stops engage halfway to the URDF limits, so
    no arm joint's limit constraint is ever active in MuJoCo (a joint resting on a stop, or
    hitting it, would make it active). Floor contacts are off (the default).
    """
    sim = SimRobot(robot, SimConfig(feedforward=feedforward))
    config = CommanderConfig()
    commanders = {}
    for controller, arm in arms_by_controller(sim).items():
        commanders[controller] = ArmCommander(arm, config, engaged=True)
        commanders[controller].start_from(sim.arm_positions(controller))
    rng = np.random.default_rng(3)
    sides = {  # per phase of 1 s: every joint up, every joint down, then each up or down
        controller: [np.ones(arm.dof), -np.ones(arm.dof)]
        + [rng.choice([-1.0, 1.0], arm.dof) for _ in range(2)]
        for controller, arm in arms_by_controller(sim).items()
    }
    limit_type = sim.mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
    arm_joints = [
        sim.model.joint(name).id for arm in robot.arms.values() for name in arm.joint_names
    ]
    touched: dict[str, float] = {}
    frame = 1 / 30
    next_frame = next_tick = 0.1
    while sim.time < 4.0:
        now = sim.time
        phase = int(now / 1.0)
        for controller, arm in arms_by_controller(sim).items():
            commander = commanders[controller]
            chunk = None
            if now >= next_frame - 1e-9:
                side = sides[controller][phase]
                beyond = np.where(side > 0, arm.upper + 0.2, arm.lower - 0.2)
                commander.on_target(now, dict(zip(arm.joint_names, beyond.tolist())))
                chunk = commander.step(now)
            elif now >= next_tick - 1e-9:
                chunk = commander.step(now)
            if chunk is not None:
                points = [
                    Waypoint(p.time_from_start, p.positions.tolist(), p.velocities.tolist(),
                             [] if p.accelerations is None else p.accelerations.tolist())
                    for p in chunk.points
                ]
                sim.command(controller, Trajectory(chunk.joint_names, points, stamp=chunk.stamp))
        if now >= next_frame - 1e-9:
            next_frame += frame
        if now >= next_tick - 1e-9:
            next_tick += 1 / config.rate
        sim.step_to(now + 0.002)
        data = sim.data
        on_stop = data.efc_type[:data.nefc] == limit_type
        for joint in data.efc_id[:data.nefc][on_stop]:
            if joint in arm_joints:
                touched.setdefault(sim.model.joint(int(joint)).name, sim.time)
    assert not touched, touched


@pytest.mark.parametrize('floor_contacts', [False, True])
def test_the_floor_is_touched_only_when_floor_contacts_are_on(floor_contacts):
    """
    The floor is a picture by default: YuMi's hands reach below its base plane and touch nothing.

    A representative pose set (200 random poses of both arms within the limits, arms hanging
    down among them) is placed in the model; with ``floor_contacts`` off no contact involves the
    floor, with it on some pose makes one (so the setting is what decides).
    """
    sim = SimRobot('yumi', SimConfig(floor_contacts=floor_contacts))
    mujoco = sim.mujoco
    model, data = sim.model, mujoco.MjData(sim.model)
    floor = model.geom('pic_ros_floor').id
    rng = np.random.default_rng(8)
    touching = 0
    for _ in range(200):
        for arm in sim.robot.arms.values():
            for name, value in zip(arm.joint_names, rng.uniform(arm.lower, arm.upper)):
                data.joint(name).qpos[0] = value
        mujoco.mj_forward(model, data)
        touching += any(floor in contact.geom for contact in data.contact[:data.ncon])
    assert (touching > 0) == floor_contacts
