"""
Prediction, planned chunks and what the robot really does (streamed through a controller).

The streamed evaluation runs a few seconds of the shipped demo recording; the figures are
checked for presence and for the limits, never for speed.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.motion.prediction import MAX_AGE, MAX_GAP, TargetPredictor
from pic_ros.motion.streaming import MIN_POINT_GAP, planned_chunk
from pic_ros.motion.tracking_loss import TrackingState
from pic_ros.robot import load_robot
from pic_ros.robot.arm import ArmModel
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import run_imitation
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.sim.trajectory import TrajectoryFollower
from pic_ros_tools.streamed import (
    _chunk_trajectory,
    foresight_trace,
    stream_trace,
    streamed_metrics,
)
import pytest


def test_prediction_extrapolates_a_steady_target_by_age_and_horizon() -> None:
    """A target moving at 0.5 rad/s is predicted ahead by the time since it and the horizon."""
    predictor = TargetPredictor([2.0], 0.03)
    for index in range(30):
        predictor.update(index / 30, [0.5 * index / 30])
    assert predictor.velocity[0] == pytest.approx(0.5, rel=1e-3)
    last = 0.5 * 29 / 30
    ahead = predictor.predict(29 / 30 + 0.01, [last])[0]
    assert ahead == pytest.approx(last + 0.5 * 0.04, rel=1e-3)
    far = predictor.predict(29 / 30 + 5.0, [last])[0]
    assert far == pytest.approx(last + 0.5 * (0.03 + MAX_AGE), rel=1e-3)  # bounded


def test_prediction_is_bounded_off_at_zero_and_restarts_after_a_gap() -> None:
    """Noise cannot exceed the velocity limit; horizon 0 is off; a gap restarts at rest."""
    predictor = TargetPredictor([1.0], 0.05)
    predictor.update(0.0, [0.0])
    predictor.update(0.01, [5.0])  # 500 rad/s of noise
    assert abs(predictor.velocity[0]) <= 1.0
    predictor.update(0.01 + MAX_GAP + 0.1, [5.0])
    assert predictor.velocity[0] == 0.0
    off = TargetPredictor([1.0], 0.0)
    off.update(0.0, [0.0])
    off.update(0.1, [0.1])
    assert off.predict(0.2, [0.1])[0] == 0.1
    with pytest.raises(ConfigError, match='prediction_horizon'):
        TargetPredictor([1.0], 0.5)


def retuned(predictor: TargetPredictor, limit: list[float], horizon: float) -> TargetPredictor:
    """Return a predictor of other settings that adopted ``predictor`` (a parameter change)."""
    new = TargetPredictor(limit, horizon)
    new.adopt(predictor)
    return new


def test_a_retuned_prediction_goes_on_from_the_filtered_velocity() -> None:
    """Other settings (a parameter change) keep the last target and the velocity, clipped."""
    predictor = TargetPredictor([2.0], 0.03)
    for index in range(30):
        predictor.update(index / 30, [0.5 * index / 30])
    last, now = 0.5 * 29 / 30, 29 / 30 + 0.01
    longer = retuned(predictor, [2.0], 0.1)
    assert longer.velocity[0] == predictor.velocity[0]
    assert longer.predict(now, [last])[0] == pytest.approx(
        last + predictor.velocity[0] * 0.11, rel=1e-9
    )
    slower = retuned(predictor, [0.2], 0.03)
    assert slower.velocity[0] == 0.2
    assert predictor.predict(now, [last])[0] == pytest.approx(last + 0.5 * 0.04, rel=1e-3)
    fresh = retuned(TargetPredictor([2.0], 0.03), [2.0], 0.1)
    assert fresh.predict(1.0, [last])[0] == last  # nothing to go on from


def test_a_planned_chunk_has_increasing_points_at_breakpoints_and_the_lead() -> None:
    """Points at the breakpoints, every 10 ms and at the lead, never closer than the gap."""
    def plan(when: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array([when]), np.array([1.0]), np.array([0.0])

    chunk = planned_chunk(['j'], plan, 0.05, [0.013, 0.013 + MIN_POINT_GAP / 2, 0.02, -1.0, 0.3])
    times = [point.time_from_start for point in chunk.points]
    assert times == sorted(times) and times[-1] == 0.05 and 0.013 in times
    assert min(np.diff(times)) >= MIN_POINT_GAP
    assert all(point.accelerations is not None for point in chunk.points)


@pytest.fixture(scope='module')
def demo_start() -> Demonstration:
    """Return the first 300 frames (10 s) of the shipped demo recording, scored whole."""
    demo = load_demonstration('demo')
    return Demonstration.whole('demo-start', demo.frames[:300])


@pytest.mark.parametrize('generator', ['ruckig', 'limiter'])
def test_streamed_evaluation_of_a_few_seconds_gives_every_figure(
    demo_start: Demonstration, generator: str
) -> None:
    """The live figures exist per arm and for the robot; ruckig keeps every limit."""
    robot = load_robot('yumi')
    solver = SolverConfig()
    trace = run_imitation(robot, demo_start, solver)
    config = CommanderConfig.from_parameters(
        {'motion_generator': generator, 'wait_for_joint_states': False}
    )
    runs = stream_trace(robot, trace, config)
    figures = streamed_metrics(robot, demo_start, solver, trace, runs)
    assert 0.0 <= figures['live']['pacc_paper'] <= 1.0
    for arm in figures['arms'].values():
        for key in (
            'pacc_offline', 'pacc_live', 'elbow_mae_offline', 'elbow_mae_live', 'lag_s',
            'lag_s_p50', 'lag_s_p90', 'lag_offline_s_p50', 'velocity_peak', 'velocity_rms',
            'acceleration_peak', 'acceleration_rms', 'jerk_peak', 'jerk_rms',
            'at_velocity_limit', 'step_us_p50', 'step_us_p99',
        ):
            assert math.isfinite(arm[key]), key
        assert arm['position_violations'] == 0 and arm['chunks'] > 0 and arm['lag_windows'] > 0
        if generator == 'ruckig':
            assert arm['velocity_violations'] == 0
            assert arm['acceleration_violations'] == 0
            assert arm['jerk_violations'] == 0


def test_foresight_moves_only_the_targets_and_holds_the_last_one_past_the_end(
    demo_start: Demonstration,
) -> None:
    """Perfect prediction changes the solved targets only; past the end it is the last one."""
    robot = load_robot('tiago')
    trace = run_imitation(robot, Demonstration.whole('short', demo_start.frames[:60]),
                          SolverConfig())
    assert foresight_trace(trace, 0.0) is trace
    with pytest.raises(ValueError):
        foresight_trace(trace, -0.1)
    shifted = foresight_trace(trace, 0.05)
    beyond = foresight_trace(trace, 100.0)
    for name, arm in trace.arms.items():
        solved = arm.solved
        assert np.array_equal(shifted.arms[name].solved, solved)
        assert np.array_equal(shifted.arms[name].human, arm.human, equal_nan=True)
        assert np.array_equal(shifted.arms[name].q[~solved], arm.q[~solved])
        last = arm.q[np.flatnonzero(solved)[-1]]
        assert np.allclose(beyond.arms[name].q[solved], last)
        low, high = arm.q[solved].min(axis=0), arm.q[solved].max(axis=0)
        moved = shifted.arms[name].q[solved]
        assert np.all((moved >= low) & (moved <= high))


def follow(arm: ArmModel, commander: ArmCommander, events: list[tuple[float, object]]) -> dict:
    """Run a commander into a simulated controller; return its samples at 500 Hz."""
    follower = TrajectoryFollower(arm.joint_names, arm.lower, arm.upper, arm.neutral)
    samples: dict[str, list] = {'t': [], 'a': [], 'v': [], 'q': []}
    for now, target in events:
        if target is not None:
            commander.on_target(now, dict(zip(arm.joint_names, np.ravel(target))))
        chunk = commander.step(now)
        if chunk is not None:
            follower.set_trajectory(_chunk_trajectory(chunk), now)
        for when in np.arange(now, now + 0.01 - 1e-9, 0.002):
            command = follower.sample(float(when))
            samples['t'].append(float(when))
            samples['q'].append(command.positions)
            samples['v'].append(command.velocities)
            samples['a'].append(command.accelerations)
    return {key: np.array(value) for key, value in samples.items()}


def test_tracking_loss_hold_neutral_and_blend_stay_within_every_limit() -> None:
    """Track, lose the person (hold, then neutral), find them far away: the robot keeps limits."""
    arm = load_robot('baxter').arms['left']
    commander = ArmCommander(arm, CommanderConfig.from_parameters({
        'wait_for_joint_states': False, 'hold_timeout': 0.25, 'neutral_timeout': 1.0,
        'blend_time': 0.5,
    }), engaged=True)
    far = np.clip(arm.neutral - 0.8, arm.lower, arm.upper)
    events: list[tuple[float, object]] = []
    states = []
    for tick in range(800):  # 8 s in 10 ms ticks; targets at 1/30 s while the person is seen
        now = 0.01 * tick
        seen = now < 2.0 or now >= 5.0
        frame = tick % 3 == 0
        target = None
        if seen and frame:
            target = far if now >= 5.0 else arm.neutral + 0.4 * math.sin(2.0 * now)
        events.append((now, target))
    run = follow(arm, commander, events)
    states.append(commander.state)
    limits = arm.jerk
    assert np.all(run['q'] >= arm.lower - 1e-9) and np.all(run['q'] <= arm.upper + 1e-9)
    assert np.all(np.abs(run['v']) <= arm.velocity * (1 + 1e-3))
    assert np.all(np.abs(run['a']) <= arm.acceleration * (1 + 1e-3))
    jerk = np.diff(run['a'], axis=0) / np.diff(run['t'])[:, None]
    assert np.all(np.abs(jerk) <= limits * 1.01)
    assert commander.state is TrackingState.TRACKING
    np.testing.assert_allclose(run['q'][-1], far, atol=1e-6)


def seam_slack(arm: ArmModel) -> float:
    """
    Return the relative error a dropped breakpoint may leave in the reference's acceleration.

    A breakpoint within ``MIN_POINT_GAP`` of another point is dropped, so the quintic misses up
    to ``jerk * MIN_POINT_GAP`` of acceleration: relative to the acceleration limit, the ratio
    of the limits times the gap (1e-3 with the 100 /s jerk rule), at least 1e-4 for rounding.
    """
    return max(float(np.max(arm.jerk / arm.acceleration)) * MIN_POINT_GAP, 1e-4)


def test_chunks_arriving_up_to_plan_ahead_late_are_followed_without_a_seam() -> None:
    """
    Each chunk reaches the controller 0 to 24 ms after its step (plan_ahead is 25 ms).

    The chunk repeats what the controller was last sent up to its plan's start, so the
    controller finds itself on it: every late chunk is followed as it is (none joined), and the
    reference stays within the planned limits (to :func:`seam_slack`: a quintic through a
    breakpoint dropped within ``MIN_POINT_GAP`` of another point) -- no step in position,
    velocity or acceleration anywhere, whatever the delay.
    """
    arm = load_robot('yumi').arms['left']
    config = CommanderConfig.from_parameters({'wait_for_joint_states': False})
    commander = ArmCommander(arm, config, engaged=True)
    follower = TrajectoryFollower(arm.joint_names, arm.lower, arm.upper, arm.neutral)
    rng = np.random.default_rng(8)
    pending: list[tuple[float, object]] = []
    samples = []
    last_arrival = 0.0
    for tick in range(400):  # 4 s in 10 ms ticks, targets at 1/30 s
        now = 0.01 * tick
        if tick % 3 == 0:
            wave = 0.5 * math.sin(2.5 * now) + 0.2 * math.sin(7.0 * now + 1.0)
            commander.on_target(now, dict(zip(arm.joint_names, arm.neutral + wave)))
        chunk = commander.step(now)
        if chunk is not None:  # in order, as a reliable DDS topic delivers them
            arrival = max(now + float(rng.uniform(0.0, 0.024)), last_arrival)
            last_arrival = arrival
            pending.append((arrival, _chunk_trajectory(chunk)))
        for when in np.arange(now, now + 0.01 - 1e-9, 0.001):
            for arrival, trajectory in [item for item in pending if item[0] <= when]:
                follower.set_trajectory(trajectory, float(arrival))
                pending.remove((arrival, trajectory))
            samples.append(follower.sample(float(when)))
    stats = follower.stats  # the 30 Hz targets' chunks, and the ticks they leave no time for
    assert stats.accepted >= 120 and stats.late > 0.9 * stats.accepted and stats.joined == 0
    acceleration = np.array([sample.accelerations for sample in samples])
    velocity = np.array([sample.velocities for sample in samples])
    share = 1.0 - commander.config.limit_headroom
    slack = seam_slack(arm)
    assert np.all(np.abs(velocity) <= share * arm.velocity * (1 + slack))
    assert np.all(np.abs(acceleration) <= share * arm.acceleration * (1 + slack))
    jerk = np.diff(acceleration, axis=0) / 0.001
    assert np.all(np.abs(jerk) <= share * arm.jerk * (1 + 2 * slack))


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_random_streams_and_delays_never_make_a_seam(data) -> None:
    """
    Random targets (jumps, tracking loss), steps and delays up to plan_ahead: no seam.

    Targets anywhere in the working range at random steps, with stretches without any (long
    enough for hold and neutral), steps 5-30 ms apart (targets and the timer), each chunk
    delivered in order 0 to 24 ms after its step: every chunk that arrives late is followed as
    it is, never joined, and the controller's reference, sampled every ms, stays within the
    planned velocity and acceleration limits.
    """
    arm = load_robot('baxter').arms['left']
    config = CommanderConfig.from_parameters({
        'wait_for_joint_states': False, 'hold_timeout': 0.1, 'neutral_timeout': 0.3,
        'blend_time': 0.2,
    })
    commander = ArmCommander(arm, config, engaged=True)
    follower = TrajectoryFollower(arm.joint_names, arm.lower, arm.upper, arm.neutral)
    share = 1.0 - config.limit_headroom
    now, sampled, last_arrival, lost_until = 0.0, 0.0, 0.0, -1.0
    pending: list[tuple[float, object]] = []
    worst = np.zeros(2)  # velocity, acceleration as shares of the limits
    for _ in range(data.draw(st.integers(20, 120), label='steps')):
        now += data.draw(st.floats(0.005, 0.03), label='step')
        if now >= lost_until and data.draw(st.integers(0, 19), label='lose') == 0:
            lost_until = now + 0.5  # past neutral_timeout: hold, back to neutral, blend in
        if now >= lost_until and data.draw(st.booleans(), label='target'):
            where = data.draw(st.lists(st.floats(0.0, 1.0), min_size=arm.dof, max_size=arm.dof))
            target = arm.lower + np.array(where) * (arm.upper - arm.lower)
            commander.on_target(now, dict(zip(arm.joint_names, target)))
        chunk = commander.step(now)
        if chunk is not None:
            delay = data.draw(st.floats(0.0, 0.024), label='delay')
            last_arrival = max(now + delay, last_arrival)
            pending.append((last_arrival, _chunk_trajectory(chunk)))
        while sampled + 0.001 <= now:
            sampled += 0.001
            for item in [item for item in pending if item[0] <= sampled]:
                follower.set_trajectory(item[1], sampled)
                pending.remove(item)
            command = follower.sample(sampled)
            worst = np.maximum(worst, [
                np.max(np.abs(command.velocities) / arm.velocity),
                np.max(np.abs(command.accelerations) / arm.acceleration),
            ])
    assert follower.stats.joined == 0
    assert np.all(worst <= share * (1 + seam_slack(arm)))


def test_a_chunk_arriving_inside_its_shortest_bridge_segment_continues_the_command() -> None:
    """
    A late chunk that arrives between two of its bridge points a few microseconds apart continues.

    The bridge repeats the points the controller is following, but each point reaches it on the
    nanosecond. Were a point's state the plan's at a time up to half a nanosecond away, the
    controller's quintic over a segment of microseconds would turn that into an acceleration
    tens of rad/s^2 off, the chunk would not continue the command there, and its join would
    cut a jerk switch (live: 2.1x YuMi's jerk limit, 18 ms late). Every chunk here arrives in
    the middle of its shortest segment between its step and its plan's start (the step times
    are not whole nanoseconds).
    """
    arm = load_robot('yumi').arms['right']
    config = CommanderConfig.from_parameters({'wait_for_joint_states': False})
    commander = ArmCommander(arm, config, engaged=True)
    follower = TrajectoryFollower(arm.joint_names, arm.lower, arm.upper, arm.neutral)
    rng = np.random.default_rng(3)
    tried = 0
    for tick in range(300):  # 3 s in 10 ms ticks, targets at 1/30 s
        now = 0.01 * tick + 1e-4 / 3.0
        if tick % 3 == 0:  # a wave with tracker noise: the joints' jerk switches fall close
            wave = 0.6 * math.sin(2.5 * now) + 0.3 * math.sin(7.0 * now + 1.0)
            noisy = arm.neutral + wave + rng.normal(0.0, 0.03, arm.dof)
            commander.on_target(now, dict(zip(arm.joint_names, noisy)))
        chunk = commander.step(now)
        if chunk is None:
            continue
        received = _chunk_trajectory(chunk)
        times = [received.stamp + point.time_from_start for point in received.points]
        start = chunk.stamp + chunk.points[chunk.start].time_from_start
        pairs = [
            (later - earlier, earlier) for earlier, later in zip(times, times[1:])
            if earlier > now and later <= start + 1e-9
        ]
        if received.stamp == 0.0 or not pairs:
            follower.set_trajectory(received, now)
            continue
        gap, earlier = min(pairs)
        tried += gap < 2e-4
        follower.set_trajectory(received, earlier + gap / 2.0)
    assert tried >= 5  # segments under 0.2 ms were hit
    assert follower.stats.late > 50 and follower.stats.joined == 0


def _sent_points(chunk) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Return a chunk's points by the nanosecond the controller places them at."""
    stamp = round(chunk.stamp * 1e9)
    return {
        stamp + nanoseconds: (point.positions, point.velocities)
        for point, nanoseconds in zip(chunk.points, chunk.times_ns)
    }


def test_every_bridge_point_repeats_a_point_sent_before_on_the_same_nanosecond() -> None:
    """
    The bridge of each chunk is the last chunk's points, at their nanoseconds, with their states.

    The controller places a point at ``header.stamp`` plus its ``time_from_start``, both on the
    nanosecond. A bridge point one nanosecond off the point it repeats is a segment of one
    nanosecond between two chunks' views of the same state; steps at times that are not whole
    nanoseconds must not shift it. (A bridge from rest starts at the step with the rest, which
    is exact anywhere.)
    """
    arm = load_robot('yumi').arms['right']
    config = CommanderConfig.from_parameters({'wait_for_joint_states': False})
    commander = ArmCommander(arm, config, engaged=True)
    previous = None
    compared = 0
    for tick in range(200):  # 2 s in 10 ms ticks, targets at 1/30 s
        now = 0.01 * tick + 1e-4 / 3.0 + 1e-10 * math.sqrt(tick)
        if tick % 3 == 0:
            wave = 0.6 * math.sin(2.5 * now) + 0.3 * math.sin(7.0 * now + 1.0)
            commander.on_target(now, dict(zip(arm.joint_names, arm.neutral + wave)))
        chunk = commander.step(now)
        if chunk is None:
            continue
        if previous is not None and chunk.stamp > 0.0 and previous.stamp > 0.0:
            sent = _sent_points(previous)
            stamp = round(chunk.stamp * 1e9)
            for point, nanoseconds in list(zip(chunk.points, chunk.times_ns))[:chunk.start]:
                if not np.any(point.velocities):
                    continue  # a rest (the step's, when at rest): exact wherever it is
                assert stamp + nanoseconds in sent, 'a bridge point off the point it repeats'
                positions, velocities = sent[stamp + nanoseconds]
                np.testing.assert_allclose(point.positions, positions, rtol=1e-13, atol=1e-13)
                np.testing.assert_allclose(point.velocities, velocities, rtol=1e-13, atol=1e-13)
                compared += 1
        previous = chunk
    assert compared > 100
