r"""
Where do the simulated joints' acceleration peaks come from? A reproduction without ROS.

A synthetic moving target (two sines per joint, 30 Hz frames) goes through the trajectory
publisher's commander (ruckig, the defaults) as the node calls it (a step per target and a 50 Hz
timer); each chunk is given to ``SimRobot`` (MuJoCo, 2 ms steps) and the run is measured stage
by stage, each against the acceleration limits the commander enforces:

1. ``plan``: the accelerations of the chunks' points (what ruckig planned);
2. ``reference``: the follower's commanded acceleration at every physics step (what the
   controller asks of the joint);
3. ``joint``: the joint's acceleration over every physics step (velocity change / step; MuJoCo's
   ``qacc`` is not it with the implicit integrator, which damps the servo's ``kv`` implicitly);
4. ``metric``: ``evaluate --live``'s finite differences of the joint positions at joint_states
   stamps (5 ms timer, stepped to the 2 ms physics grid), and the same differences of the
   reference sampled at those stamps.

Timing models (``--timing``):

* ``ideal``: every chunk reaches the controller at the time it was planned;
* ``live``: as in the ROS graph on the simulation clock: the publisher's clock is the last
  ``/clock`` (published with joint_states, every 5 ms), the chunk arrives ``--latency`` later
  and is applied at the next physics step.

The chunk's ``header.stamp`` is the publisher's (``stamp_trajectories``: the step's time, and
with ruckig just before the points the chunk repeats from the previous one, ``plan_ahead``), or
0 ("start on arrival") with ``--zero-stamp``; the servos have the model-based feedforward (the
default, ``SimConfig.feedforward``), or follow the reference position alone with
``--position-servos``.

Lag: the delay that best aligns each stage's positions with the target stream's (least squares
over 0..300 ms by 1 ms, joints pooled), printed per stage.

    python scripts/sim_acceleration.py --robot baxter --duration 4 --timing live
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.motion.streaming import TrajectoryChunk
from pic_ros.robot import load_robot, Robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import run_imitation
from pic_ros_tools.live_evaluation import command_limits
from pic_ros_tools.metrics import derivatives
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.sim.config import SimConfig
from pic_ros_tools.sim.mujoco_robot import SimRobot
from pic_ros_tools.sim.trajectory import Trajectory, Waypoint

SERIES: dict[str, np.ndarray] = {}
"""The last run's samples (for a closer look from Python)."""

CLOCK_PERIOD = 0.005
"""Period of sim_robot's joint_states and /clock [s]."""


def to_trajectory(chunk: TrajectoryChunk, stamp: float) -> Trajectory:
    """Return what the controller receives for a chunk with a header stamp [s] (0: now)."""
    return Trajectory(
        joint_names=chunk.joint_names,
        points=[
            Waypoint(
                point.time_from_start, point.positions.tolist(), point.velocities.tolist(),
                [] if point.accelerations is None else point.accelerations.tolist(),
            )
            for point in chunk.points
        ],
        stamp=stamp,
    )


def targets(arm: object, times: np.ndarray, seed: int, speed: float) -> np.ndarray:
    """Return a smooth synthetic target stream around the neutral pose, shape (T, n), [rad]."""
    rng = np.random.default_rng(seed)
    neutral = np.asarray(arm.neutral, dtype=float)
    lower = np.asarray(arm.lower, dtype=float)
    upper = np.asarray(arm.upper, dtype=float)
    velocity = np.asarray(arm.velocity, dtype=float)
    n = neutral.size
    q = np.tile(neutral, (times.size, 1))
    for frequency in (0.4, 1.1):  # each sine up to `speed` x the velocity limit
        amplitude = speed * velocity / (2 * math.pi * frequency) * rng.uniform(0.5, 1.0, n)
        phase = rng.uniform(0, 2 * math.pi, n)
        q += amplitude * np.sin(2 * math.pi * frequency * times[:, None] + phase)
    return np.clip(q, lower + 0.05, upper - 0.05)


def recorded_targets(
    robot: Robot, arm: str, recording: str, duration: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return the offline imitation's frame times (from 0.5 s) and joint targets of one arm."""
    demonstration = load_demonstration(recording)
    start = demonstration.frames[0].stamp
    frames = [f for f in demonstration.frames if f.stamp - start < duration - 0.5]
    trace = run_imitation(robot, Demonstration.whole(recording, frames), SolverConfig())
    solved = trace.arms[arm].solved
    times = np.asarray(trace.stamps, dtype=float)[solved] - start + 0.5
    return times, trace.arms[arm].q[solved]


def best_lag(t_ref: np.ndarray, ref: np.ndarray, t: np.ndarray, q: np.ndarray) -> float:
    """Return the delay d minimising mean |q(t + d) - ref(t)|^2 over 0..300 ms [s]."""
    best, best_cost = math.nan, math.inf
    inside = (t_ref > t[0] + 0.5) & (t_ref < t[-1] - 0.35)
    for delay in np.arange(0.0, 0.301, 0.001):
        shifted = np.column_stack(
            [np.interp(t_ref[inside] + delay, t, q[:, j]) for j in range(q.shape[1])]
        )
        cost = float(np.mean((shifted - ref[inside]) ** 2))
        if cost < best_cost:
            best, best_cost = float(delay), cost
    return best


def share(values: np.ndarray, limit: np.ndarray) -> tuple[float, int]:
    """Return the peak of |values| / limit and the number of samples beyond 1.001."""
    if values.size == 0:
        return math.nan, 0
    ratio = np.abs(values) / limit
    return float(ratio.max()), int(np.count_nonzero(np.any(ratio > 1.001, axis=1)))


def run(args: argparse.Namespace) -> dict[str, object]:
    """Run one robot arm and return the figures per stage."""
    robot = load_robot(args.robot)
    name = args.arm or next(iter(robot.arms))
    arm = robot.arms[name]
    controller = arm.spec.controller
    sim = SimRobot(robot, SimConfig(feedforward=not args.position_servos))
    config = CommanderConfig(
        prediction_horizon=args.prediction, stamp_trajectories=not args.zero_stamp
    )
    commander = ArmCommander(arm, config, engaged=True)
    commander.start_from(sim.arm_positions(controller))
    limits = command_limits(arm, config)
    dt = sim.config.timestep
    if args.recording:
        frames, wanted = recorded_targets(robot, name, args.recording, args.duration)
    else:
        frames = np.arange(0.5, args.duration, 1.0 / 30.0)
        wanted = targets(arm, frames, args.seed, args.speed)
    ticks = np.arange(0.5 + 0.5 / config.rate, args.duration, 1.0 / config.rate)
    events = sorted([(float(t), 0, k) for k, t in enumerate(frames)]
                    + [(float(t), 1, k) for k, t in enumerate(ticks)])
    rng = np.random.default_rng(args.seed + 1)
    pending: list[tuple[float, Trajectory]] = []
    plan_acc: list[np.ndarray] = []
    ref_t, ref_p, ref_a, joint_a, joint_p = [], [], [], [], []
    states_t, states_p = [], []
    next_state = 0.0
    event = 0
    steps = int(args.duration / dt)
    dofs = [sim.model.joint(joint).dofadr[0] for joint in arm.joint_names]
    limit_type = sim.mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT
    arm_joints = [sim.model.joint(joint).id for joint in arm.joint_names]
    floor_geom = sim.model.geom('pic_ros_floor').id
    stops = floor = 0
    for _ in range(steps):
        now = sim.time
        while event < len(events) and events[event][0] <= now + 1e-9:
            when, kind, index = events[event]
            event += 1
            if args.timing == 'ideal':
                plan_time = when
                arrival = when
            else:  # the publisher's clock is the last /clock; DDS adds latency
                plan_time = math.floor(when / CLOCK_PERIOD) * CLOCK_PERIOD
                arrival = when + args.latency * rng.uniform(0.5, 1.5)
            if kind == 0:
                commander.on_target(plan_time, dict(zip(arm.joint_names, wanted[index])))
            chunk = commander.step(plan_time)
            if chunk is None:
                continue
            plan_acc += [p.accelerations for p in chunk.points if p.accelerations is not None]
            pending.append((arrival, to_trajectory(chunk, chunk.stamp)))
        while pending and pending[0][0] <= now + 1e-9:
            sim.command(controller, pending.pop(0)[1])
        command = sim.commanded(controller)
        ref_t.append(now)
        ref_p.append(command.positions)
        ref_a.append(command.accelerations)
        before = sim.data.qvel[dofs].copy()
        sim.step_to(now + dt)
        on_stop = sim.data.efc_type[:sim.data.nefc] == limit_type
        stops += int(np.any(np.isin(sim.data.efc_id[:sim.data.nefc][on_stop], arm_joints)))
        contacts = sim.data.contact[:sim.data.ncon]
        floor += int(any(floor_geom in contact.geom for contact in contacts))
        joint_a.append((sim.data.qvel[dofs] - before) / dt)
        joint_p.append(sim.arm_positions(controller))
        if sim.time >= next_state - 1e-9:  # joint_states: the 5 ms timer, on the 2 ms grid
            states_t.append(sim.time)
            states_p.append(sim.arm_positions(controller))
            next_state += CLOCK_PERIOD
    t = np.array(ref_t)
    used = t >= 0.6
    a_ref = np.array(ref_a)[used]
    a_joint = np.array(joint_a)[used]
    st = np.array(states_t)
    sp = np.array(states_p)
    keep = (st >= 0.6) & (st <= t[-1])
    measured = derivatives(st[keep], sp[keep]).acceleration
    ref_at_states = np.column_stack(
        [np.interp(st[keep], t, np.array(ref_p)[:, j]) for j in range(arm.dof)]
    )
    referenced = derivatives(st[keep], ref_at_states).acceleration
    t_joint = t + dt
    SERIES.update(t=t, a_ref=np.array(ref_a), a_joint=np.array(joint_a), st=st, sp=sp)
    figures: dict[str, object] = {
        'plan': share(np.array(plan_acc), limits.acceleration),
        'reference': share(a_ref, limits.acceleration),
        'joint (velocity change per step)': share(a_joint, limits.acceleration),
        'metric on reference': share(referenced, limits.acceleration),
        'metric on joint_states': share(measured, limits.acceleration),
        'lag reference [ms]': 1e3 * best_lag(frames, wanted, t, np.array(ref_p)),
        'lag joint [ms]': 1e3 * best_lag(frames, wanted, t_joint, np.array(joint_p)),
        'physics steps with an arm joint on a limit stop': stops,
        'physics steps with a robot-floor contact (any link)': floor,
    }
    return figures


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run, print one line per stage."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', default='baxter')
    parser.add_argument('--arm', default=None)
    parser.add_argument('--duration', type=float, default=4.0)
    parser.add_argument('--timing', choices=('ideal', 'live'), default='live')
    parser.add_argument('--latency', type=float, default=0.001, help='DDS latency [s]')
    parser.add_argument('--zero-stamp', action='store_true',
                        help='stamp chunks 0 ("start on arrival"; default: the planning time)')
    parser.add_argument('--position-servos', action='store_true',
                        help='servos without the feedforward (SimConfig.feedforward false)')
    parser.add_argument('--speed', type=float, default=0.3,
                        help='amplitude of each target sine as a share of the velocity limit')
    parser.add_argument('--prediction', type=float, default=0.03)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--recording', default=None,
                        help="the offline imitation's targets of a recording ('demo', a path) "
                        'instead of the synthetic sines')
    args = parser.parse_args(argv)
    figures = run(args)
    stamped = '0 (arrival)' if args.zero_stamp else 'planning time'
    servo = 'position only' if args.position_servos else 'feedforward'
    print(f'{args.robot}, timing {args.timing}, stamp {stamped}, servo {servo}, '
          f'{args.duration:g} s')
    for key, value in figures.items():
        if isinstance(value, tuple):
            print(f'  acceleration {key}: peak {value[0]:.2f} x limit, {value[1]} samples beyond')
        else:
            print(f'  {key}: {value:.0f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
