"""The collision guard: whatever a solver returns, the commands sent never bring links together."""

from __future__ import annotations

import numpy as np
from pic_ros.exceptions import SkeletonError
from pic_ros.human.processing import SkeletonProcessor
from pic_ros.imitation import RobotImitator
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.motion.guard import CollisionGuard, GuardVerdict
from pic_ros.motion.streaming import TrajectoryChunk, TrajectoryPoint
from pic_ros.robot import load_robot
from pic_ros.robot.collision import half_space_rows
from pic_ros.robot.kinematics import compiled
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import run_imitation
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.streamed import stream_trace
import pytest

PERIOD = 0.01
"""Step period of the simulated trajectory publisher [s]."""


def toy_solver(robot, arm, t):
    """Return where a plug-in solver gone wrong sends an arm: across the body, into the other."""
    model = robot.arms[arm]
    share = min(t / 1.5, 1.0)
    crossed = model.neutral.copy()
    crossed[0] = np.clip(
        model.neutral[0] + (1.0 if model.side.value == 'right' else -1.0) * 2.0 * share,
        model.lower[0], model.upper[0],
    )  # the first joint swings each arm toward the other
    crossed[1] = np.clip(model.neutral[1] + 0.8 * share, model.lower[1], model.upper[1])
    return crossed


def executed(chunks_sent, now):
    """Return where each arm's controller is at ``now``: the last chunk it got, sampled."""
    positions = {}
    for arm, (stamp, chunk) in chunks_sent.items():
        start = chunk.stamp if chunk.stamp > 0.0 else stamp
        times = [start + point.time_from_start for point in chunk.points]
        rows = np.array([point.positions for point in chunk.points])
        if now <= times[0]:
            positions[arm] = rows[0]
        elif now >= times[-1]:
            positions[arm] = rows[-1]
        else:
            index = int(np.searchsorted(times, now))
            share = (now - times[index - 1]) / (times[index] - times[index - 1])
            positions[arm] = rows[index - 1] + share * (rows[index] - rows[index - 1])
    return positions


def engaged_commanders(robot, config):
    """Return an engaged commander per arm of the robot."""
    return {name: ArmCommander(arm, config, engaged=True) for name, arm in robot.arms.items()}


def guarded_step(guard, commanders, now):
    """
    Step every commander at ``now`` and guard their chunks as the trajectory publisher does.

    :return: The chunks to send (a refused arm's step made again with its joints moving
        together, or its braking chunk, instead of its own) and the verdict.
    """
    chunks = {}
    for name, commander in commanders.items():
        chunk = commander.step(now)
        if chunk is not None:
            chunks[name] = chunk
    verdict = guard.check(
        chunks, {name: c.position for name, c in commanders.items()}, None, now,
        brake=lambda name: commanders[name].brake(now),
        straighten=lambda name: commanders[name].straighten(now),
    )
    return verdict.to_send(chunks), verdict


@pytest.mark.parametrize('robot_name', ('yumi', 'baxter'))
@pytest.mark.parametrize('generator', ('ruckig', 'limiter'))
def test_the_guard_refuses_the_colliding_commands_of_a_toy_solver(robot_name, generator):
    """
    The toy solver drives the arms into each other; the guard brakes them before they meet.

    What the controllers execute (the chunks sent, followed in time) keeps every pair of
    capsules apart (they contain the real shapes), and the guard counts the refusals.
    """
    robot = load_robot(robot_name)
    commanders = engaged_commanders(
        robot, CommanderConfig(wait_for_joint_states=False, motion_generator=generator)
    )
    guard = CollisionGuard(robot, -1.0)
    model = robot.collision
    sent = {}
    lowest = np.inf
    for now in np.arange(1.0, 5.0, PERIOD):
        for name, commander in commanders.items():
            target = dict(zip(robot.arms[name].joint_names, toy_solver(robot, name, now - 1.0)))
            commander.on_target(now, target)
        chunks, _ = guarded_step(guard, commanders, now)
        sent.update({name: (now, chunk) for name, chunk in chunks.items()})
        for later in (now, now + 0.5 * PERIOD):
            x = model.vector(executed(sent, later))
            lowest = min(lowest, model.check(x).minimum)
    assert guard.refusals > 0  # the toy solver does drive the arms into each other
    assert lowest >= -5e-3  # braked before the links meet (5 mm: linear sampling of the chunks)


@pytest.mark.parametrize('robot_name', ('yumi', 'baxter'))
def test_the_corners_the_motion_cuts_between_safe_answers_are_braked(robot_name):
    """
    The shipped demo through the imitation (avoidance on) and the commanders, guarded.

    What the controllers execute keeps every pair of capsules apart where the motion cuts a
    corner between two safe answers (the guard brakes those steps).
    """
    robot = load_robot(robot_name)
    imitator = RobotImitator(robot, SolverConfig())
    processor = SkeletonProcessor()
    commanders = engaged_commanders(robot, CommanderConfig(wait_for_joint_states=False))
    guard = CollisionGuard(robot, -1.0)
    model = robot.collision
    sent = {}
    lowest = np.inf
    frames = load_demonstration('demo').frames[:450]
    origin = frames[0].stamp
    for frame in frames:
        try:
            body = processor.process(frame)
        except SkeletonError:
            continue
        imitator.step(body)
        now = 1.0 + frame.stamp - origin
        for name, commander in commanders.items():
            commander.on_target(now, dict(zip(robot.arms[name].joint_names, imitator.q(name))))
        chunks, _ = guarded_step(guard, commanders, now)
        sent.update({name: (now, chunk) for name, chunk in chunks.items()})
        lowest = min(lowest, model.check(model.vector(executed(sent, now))).minimum)
    assert guard.checks > 400
    assert lowest >= -5e-3


def test_a_margin_of_zero_turns_the_guard_off():
    robot = load_robot('yumi')
    guard = CollisionGuard(robot, 0.0)
    assert not guard.enabled
    assert guard.check({}, {}).safe and guard.checks == 0


def test_brake_replaces_only_the_step_just_made():
    robot = load_robot('yumi')
    arm = robot.arms['left']
    commander = ArmCommander(arm, CommanderConfig(wait_for_joint_states=False), engaged=True)
    commander.on_target(1.0, dict(zip(arm.joint_names, arm.neutral + 0.5)))
    first = commander.step(1.0)
    assert first is not None
    assert commander.brake(1.5) is None  # no step at 1.5
    braking = commander.brake(1.0)
    assert braking is not None and commander.published == 1
    final = braking.points[-1]
    start = first.points[0]
    # braking: the velocity at its end is smaller than where it starts from
    assert np.abs(final.velocities).max() <= np.abs(start.velocities).max() + 1e-9


def test_straighten_replaces_only_the_step_just_made():
    """The step at ``now`` planned again from its start, joints together; the limiter has none."""
    robot = load_robot('yumi')
    arm = robot.arms['left']
    commander = ArmCommander(arm, CommanderConfig(wait_for_joint_states=False), engaged=True)
    target = np.clip(arm.neutral + np.linspace(0.6, 0.1, arm.dof), arm.lower, arm.upper)
    commander.on_target(1.0, dict(zip(arm.joint_names, target)))
    first = commander.step(1.0)
    assert first is not None
    assert commander.straighten(1.5) is None  # no step at 1.5
    again = commander.straighten(1.0)
    assert again is not None and commander.published == 1 and commander.straightened == 1
    np.testing.assert_allclose(again.points[0].positions, first.points[0].positions, atol=1e-12)
    assert again.stamp == first.stamp
    # together, the joints that have far to go and those that have not move at one pace: the
    # share of its way each joint has gone is about the same at every point
    way = target - first.points[0].positions
    moving = np.abs(way) > 0.05
    for point in again.points[1:]:
        shares = ((point.positions - first.points[0].positions) / np.where(moving, way, 1.0))
        assert np.ptp(shares[moving]) < 0.2
    assert commander.straighten(1.0) is None  # once per step
    braking = commander.brake(1.0)  # the guard may still brake it
    assert braking is not None and commander.published == 1
    commander.on_target(1.02, dict(zip(arm.joint_names, target)))
    commander.engaged = False  # a step that does not follow the person is left as it is
    assert commander.step(1.02) is not None and commander.straighten(1.02) is None
    limiter = ArmCommander(
        arm, CommanderConfig(wait_for_joint_states=False, motion_generator='limiter'),
        engaged=True,
    )
    limiter.on_target(1.0, dict(zip(arm.joint_names, target)))
    assert limiter.step(1.0) is not None and limiter.straighten(1.0) is None


def test_a_refused_arm_sends_its_replacement_or_nothing():
    """What a step sends after the verdict: a brake or a straightened chunk, not a refused one."""
    first, second, third = (
        TrajectoryChunk(('j',), (TrajectoryPoint(t, np.zeros(1), np.zeros(1)),))
        for t in (0.1, 0.2, 0.3)
    )
    chunks = {'left': first, 'right': first, 'head': first}
    verdict = GuardVerdict(
        frozenset({'left', 'right'}), 0.0, 'a / b', {'right': second}, {'left': third},
    )
    assert verdict.to_send(chunks) == {'right': second, 'head': first}
    passed = GuardVerdict(frozenset(), 0.1, '', {}, {'left': third})
    assert passed.to_send(chunks) == {'left': third, 'right': first, 'head': first}


def test_arms_whose_paths_cross_go_on_with_their_joints_together_instead_of_braking(
    monkeypatch,
):
    """
    Baxter's demo, 10-30 s (crossed forearms and hands), streamed with the guard.

    Each joint in its own minimum time, the two arms, lagging behind their targets, cut
    through each other, and the guard braked them on 246 steps of the demo: the braking
    added to the lag, the lag to the crossings (elbow error 0.188 rad against 0.147 without
    the guard). Planned again with the joints together, the paths keep near the ones the
    solvers' avoidance checked: far fewer arms brake, and what the controllers execute
    still keeps every pair of capsules apart.
    """
    robot = load_robot('baxter')
    demo = load_demonstration('demo')
    take = Demonstration.whole('demo-crossing', demo.frames[300:900])
    trace = run_imitation(robot, take, SolverConfig())
    config = CommanderConfig(wait_for_joint_states=False)
    model = robot.collision

    def streamed():
        guard = CollisionGuard(robot, -1.0)
        runs = stream_trace(robot, trace, config, guard=guard)
        lowest = min(
            model.check(model.vector({name: run.position[k] for name, run in runs.items()}))
            .minimum
            for k in range(len(runs['left'].times))
        )
        return guard, lowest

    guard, lowest = streamed()
    assert guard.straightened > 0 and lowest >= -5e-3
    with monkeypatch.context() as patch:
        patch.setattr(ArmCommander, 'straighten', lambda self, now: None)
        braking_only, braking_lowest = streamed()
    assert braking_only.straightened == 0 and braking_lowest >= -5e-3
    assert braking_only.refusals > 50
    assert guard.refusals <= braking_only.refusals // 2, (guard.refusals, braking_only.refusals)


def test_arms_braked_close_together_are_let_go_one_at_a_time(monkeypatch):
    """
    Baxter's demo, targets at the frames and steps at the timer's rate: no lasting lock.

    Every refused arm brakes here (no step is made again with the joints together), which is
    what happens when that too would bring the links together.

    On this run the guard once braked both arms for 4 s with the right forearm 3 mm from the
    left one: each step toward the avoidance's answers went deeper first, and each arm was
    refused for the pair both belong to (on the live robot the same held both arms for the
    last 20 s). An arm at rest beside another at rest is now let go when its own path keeps
    the floor; no run of steps with both arms refused lasts 1 s, and what the controllers
    execute keeps every pair of capsules apart.
    """
    monkeypatch.setattr(ArmCommander, 'straighten', lambda self, now: None)
    robot = load_robot('baxter')
    imitator = RobotImitator(robot, SolverConfig())
    processor = SkeletonProcessor()
    config = CommanderConfig(wait_for_joint_states=False)
    commanders = engaged_commanders(robot, config)
    guard = CollisionGuard(robot, -1.0)
    model = robot.collision
    frames = load_demonstration('demo').frames
    origin = frames[0].stamp
    steps = [(1.0 + frame.stamp - origin, frame) for frame in frames
             if frame.stamp - origin < 28.0]
    steps += [(now, None) for now in np.arange(1.0, steps[-1][0], config.period)]
    sent, lowest, since, longest = {}, np.inf, None, 0.0
    for now, frame in sorted(steps, key=lambda item: (item[0], item[1] is None)):
        if frame is not None:
            try:
                imitator.step(processor.process(frame))
            except SkeletonError:
                continue
            for name, commander in commanders.items():
                arm = robot.arms[name]
                commander.on_target(now, dict(zip(arm.joint_names, imitator.q(name))))
        chunks, verdict = guarded_step(guard, commanders, now)
        if not chunks:
            continue
        if len(chunks) == 2:  # how long both arms have been refused together [s]
            if verdict.refused != set(chunks):
                since = None
            elif since is None:
                since = now
            longest = max(longest, 0.0 if since is None else now - since)
        sent.update({name: (now, chunk) for name, chunk in chunks.items()})
        lowest = min(lowest, model.check(model.vector(executed(sent, now))).minimum)
    assert guard.refusals > 100  # the arms do come close
    assert longest < 1.0
    assert lowest >= -5e-3


def random_chunk(rng, arm, start):
    """Return a chunk from ``start`` through a few random points within the arm's limits."""
    count = int(rng.integers(1, 6))
    times = np.cumsum(rng.uniform(0.01, 0.12, count))
    positions = np.clip(
        start + np.cumsum(rng.normal(0.0, 0.25, (count, arm.dof)), axis=0),
        arm.lower, arm.upper,
    )
    velocities = rng.normal(0.0, 0.3, (count, arm.dof))
    velocities[-1] *= rng.integers(0, 2)  # half of them end at rest
    points = tuple(
        TrajectoryPoint(float(t), q, v) for t, q, v in zip(times, positions, velocities)
    )
    return TrajectoryChunk(tuple(arm.joint_names), points)


def random_steps(robot, seed, count=300):
    """Yield random commands and random chunks from them, many into each other or the table."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        commands = {
            name: rng.uniform(arm.lower, arm.upper) if trial % 2 else
            np.clip(arm.neutral + rng.normal(0.0, 0.4, arm.dof), arm.lower, arm.upper)
            for name, arm in robot.arms.items()
        }
        chunks = {
            name: random_chunk(rng, robot.arms[name], commands[name])
            for name in robot.arms if rng.uniform() < 0.8
        }
        yield chunks, commands


@pytest.mark.parametrize('compiled_path', (True, False), ids=('compiled', 'numpy'))
@pytest.mark.parametrize('robot_name', ('yumi', 'baxter'))
def test_skipping_samples_refuses_exactly_what_measuring_every_sample_refuses(
    robot_name, compiled_path, monkeypatch
):
    """
    The guard skips the samples its motion bound proves safe: never a sample that refuses.

    Random commands and random paths from them, many running the arms into each other or
    the table: the guard refuses the same arms as one that measures every sample, and
    measures fewer; compiled (numba) or not.
    """
    robot = load_robot(robot_name)  # builds the collision model, which loads the kernels
    if not compiled_path:
        monkeypatch.setattr(compiled, 'guard_samples', None)
    elif compiled.guard_samples is None:
        pytest.skip('numba is not installed (or PIC_ROS_JIT=0): no compiled path')
    guard = CollisionGuard(robot, -1.0)
    dense = CollisionGuard(robot, -1.0, dense=True)
    refusing = 0
    for chunks, commands in random_steps(robot, 7):
        verdict = guard.check(chunks, commands, None, 0.0)
        assert verdict.refused == dense.check(chunks, commands, None, 0.0).refused
        refusing += bool(verdict.refused)
    assert refusing > 30  # the paths do run into the margin
    assert guard.samples_measured < 0.8 * dense.samples_measured


@pytest.mark.parametrize('robot_name', ('yumi', 'baxter', 'tiago'))
def test_the_compiled_samples_give_the_numpy_verdicts(robot_name, monkeypatch):
    """One compiled call per step refuses the same arms, at the same closest place and distance."""
    robot = load_robot(robot_name)  # builds the collision model, which loads the kernels
    if compiled.guard_samples is None:
        pytest.skip('numba is not installed (or PIC_ROS_JIT=0): no compiled path')
    fast, plain = CollisionGuard(robot, -1.0), CollisionGuard(robot, -1.0)
    kernel = compiled.guard_samples
    for chunks, commands in random_steps(robot, 11, 200):
        verdict = fast.check(chunks, commands, None, 0.0)
        monkeypatch.setattr(compiled, 'guard_samples', None)
        expected = plain.check(chunks, commands, None, 0.0)
        monkeypatch.setattr(compiled, 'guard_samples', kernel)
        assert verdict.refused == expected.refused
        assert verdict.where == expected.where
        assert verdict.min_distance == pytest.approx(expected.min_distance, abs=1e-9)
    assert fast.samples_measured == plain.samples_measured


@pytest.mark.parametrize('robot_name', ('yumi', 'baxter'))
def test_no_pair_distance_nor_depth_changes_more_than_the_motion_bound_allows(robot_name):
    """Between two configurations each row's distance changes at most ``row . |x - y|``."""
    robot = load_robot(robot_name)
    guard = CollisionGuard(robot, -1.0)
    bounds = guard._bounds
    model = robot.collision
    rng = np.random.default_rng(3)
    for _ in range(200):
        x = rng.uniform(model.lower, model.upper)
        y = np.clip(x + rng.normal(0.0, rng.choice((0.01, 0.3)), model.dof),
                    model.lower, model.upper)
        checks = [model.check(q) for q in (x, y)]
        depths = [
            half_space_rows(model, check, guard._landmarks, guard._spaces, gradients=False)[0]
            if guard._spaces else np.zeros(0)
            for check in checks
        ]
        # a zero room per pair and per bound: the change is the room each row's pairs keep
        before = bounds.room(checks[0].distances, depths[0])
        after = bounds.room(checks[1].distances, depths[1])
        change = np.abs(after - before)
        allowed = bounds.rows @ np.abs(y - x)
        assert np.all(change <= allowed + 1e-9)


def test_a_step_repeating_the_last_one_that_passed_is_not_measured_again():
    """The same paths from the same commands pass again unmeasured; other commands do not."""
    robot = load_robot('yumi')
    guard = CollisionGuard(robot, -1.0)
    model = robot.collision
    calls = []
    original = model.check

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    resting = {name: arm.neutral for name, arm in robot.arms.items()}
    hold = {
        name: TrajectoryChunk(tuple(arm.joint_names), (
            TrajectoryPoint(0.1, arm.neutral, np.zeros(arm.dof)),
        )) for name, arm in robot.arms.items()
    }
    object.__setattr__(model, 'check', counted)
    try:
        first = guard.check(hold, resting, None, 1.0)
        measured = len(calls)
        again = guard.check(hold, resting, None, 1.0)
        assert first.safe and again.safe and len(calls) == measured > 0
        moved = {name: value + 1e-3 for name, value in resting.items()}
        assert guard.check(hold, moved, None, 1.0).safe and len(calls) > measured
    finally:
        object.__delattr__(model, 'check')
    assert guard.checks == 3
