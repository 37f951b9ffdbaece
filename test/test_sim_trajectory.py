"""The JTC-like trajectory follower: validation, replacement, interpolation and holding."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion.limiter import MotionLimits
from pic_ros.motion.streaming import segment_state
from pic_ros_tools.sim.trajectory import (
    DELAY_WINDOW,
    FollowerConfig,
    Interpolation,
    Trajectory,
    TrajectoryFollower,
    TrajectoryStatus,
    Waypoint,
)
import pytest

NAMES = ('j1', 'j2', 'j3')
LOWER = np.array([-1.0, -2.0, -3.0])
UPPER = np.array([1.0, 2.0, 3.0])


def make_follower(initial=(0.0, 0.0, 0.0), **config) -> TrajectoryFollower:
    """Return a 3-joint follower holding ``initial``."""
    return TrajectoryFollower(NAMES, LOWER, UPPER, initial, FollowerConfig(**config))


def one_point(time, positions, velocities=(), names=NAMES, stamp=0.0) -> Trajectory:
    """Return a trajectory with one point."""
    return Trajectory(names, [Waypoint(time, positions, velocities)], stamp=stamp)


def test_holds_the_initial_positions_before_any_trajectory():
    """With no trajectory the command is the initial pose, at rest."""
    follower = make_follower((0.1, 0.2, 0.3))
    command = follower.sample(5.0)
    np.testing.assert_array_equal(command.positions, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(command.velocities, 0.0)
    assert not command.moving


def test_positions_only_interpolate_linearly_from_the_current_state():
    """A positions-only point is reached along a straight line in joint space."""
    follower = make_follower()
    verdict = follower.set_trajectory(one_point(2.0, [0.4, -0.8, 1.2]), now=10.0)
    assert verdict.accepted and verdict.status is TrajectoryStatus.ACCEPTED
    assert follower.segment_kind(0) is Interpolation.LINEAR
    for t, fraction in ((10.0, 0.0), (10.5, 0.25), (11.0, 0.5), (11.9, 0.95)):
        command = follower.sample(t)
        np.testing.assert_allclose(command.positions, fraction * np.array([0.4, -0.8, 1.2]))
        np.testing.assert_allclose(command.velocities, [0.2, -0.4, 0.6])


def test_positions_and_velocities_interpolate_as_a_cubic_hermite():
    """With velocities the segment is the cubic matching both end states."""
    follower = make_follower()
    p1, v1, duration = np.array([0.5, -0.5, 1.0]), np.array([0.2, 0.0, -0.4]), 2.0
    follower.set_trajectory(one_point(duration, p1.tolist(), v1.tolist()), now=0.0)
    assert follower.segment_kind(0) is Interpolation.CUBIC
    for t in (0.3, 1.0, 1.7):
        s = t / duration
        expected = (-2 * s**3 + 3 * s**2) * p1 + (s**3 - s**2) * duration * v1
        expected_velocity = (-6 * s**2 + 6 * s) * p1 / duration + (3 * s**2 - 2 * s) * v1
        command = follower.sample(t)
        np.testing.assert_allclose(command.positions, expected, atol=1e-12)
        np.testing.assert_allclose(command.velocities, expected_velocity, atol=1e-12)


def test_accelerations_make_a_quintic_that_matches_both_end_states():
    """Positions, velocities and accelerations give a quintic: p, v and a match at both ends."""
    start = (np.array([0.1]), np.array([0.3]), np.array([-1.0]))
    end = (np.array([0.7]), np.array([-0.2]), np.array([0.5]))
    duration = 1.5
    at_start = segment_state(Interpolation.QUINTIC, duration, 0.0, start, end)
    at_end = segment_state(Interpolation.QUINTIC, duration, duration, start, end)
    for got, want in zip(at_start + at_end, start + end):
        np.testing.assert_allclose(got, want, atol=1e-12)
    follower = make_follower()
    trajectory = Trajectory(NAMES, [Waypoint(1.0, [0.1, 0.2, 0.3], [0.0] * 3, [0.0] * 3)])
    follower.set_trajectory(trajectory, now=0.0)
    assert follower.segment_kind(0) is Interpolation.QUINTIC
    # Rest to rest: the quintic is the minimum-jerk profile 10s^3 - 15s^4 + 6s^5.
    np.testing.assert_allclose(follower.sample(0.5).positions, [0.05, 0.1, 0.15], atol=1e-12)


def test_cubic_and_linear_segments_derivatives_are_consistent():
    """The velocity of each interpolation is the time derivative of its position."""
    start = (np.array([0.2, -0.1]), np.array([0.5, 0.0]), np.array([0.0, 1.0]))
    end = (np.array([-0.3, 0.4]), np.array([0.1, -0.6]), np.array([2.0, 0.0]))
    h = 1e-6
    for kind in Interpolation:
        for t in (0.2, 0.55, 0.9):
            before = segment_state(kind, 1.1, t - h, start, end)
            after = segment_state(kind, 1.1, t + h, start, end)
            here = segment_state(kind, 1.1, t, start, end)
            np.testing.assert_allclose((after[0] - before[0]) / (2 * h), here[1], atol=1e-6)
            np.testing.assert_allclose((after[1] - before[1]) / (2 * h), here[2], atol=1e-5)


def test_joints_are_mapped_by_name_whatever_their_order():
    """A trajectory naming the joints in another order drives each joint by its name."""
    follower = make_follower()
    trajectory = one_point(1.0, [0.3, 0.1, 0.2], names=('j3', 'j1', 'j2'))
    assert follower.set_trajectory(trajectory, now=0.0).accepted
    np.testing.assert_allclose(follower.sample(1.0).positions, [0.1, 0.2, 0.3])


def test_holds_the_last_point_at_rest_after_the_end():
    """After the last point the command stays there with zero velocity."""
    follower = make_follower()
    follower.set_trajectory(one_point(0.5, [0.5, 0.5, 0.5], [1.0, 1.0, 1.0]), now=0.0)
    assert follower.end_time == pytest.approx(0.5)
    for t in (0.5, 0.8, 100.0):
        command = follower.sample(t)
        np.testing.assert_allclose(command.positions, 0.5)
        np.testing.assert_array_equal(command.velocities, 0.0)
        assert not command.moving
    assert follower.end_time is None


def test_a_new_trajectory_replaces_the_old_one_from_the_commanded_state():
    """A trajectory arriving mid-motion starts from where the old command is, at that time."""
    follower = make_follower()
    follower.set_trajectory(one_point(2.0, [1.0, 1.0, 1.0]), now=0.0)
    midway = follower.sample(1.0)
    np.testing.assert_allclose(midway.positions, 0.5)
    follower.set_trajectory(one_point(1.0, [-0.5, -0.5, -0.5]), now=1.0)
    # Linear from 0.5 at t=1 to -0.5 at t=2: the old target (1.0) is forgotten.
    np.testing.assert_allclose(follower.sample(1.0).positions, 0.5)
    np.testing.assert_allclose(follower.sample(1.5).positions, 0.0, atol=1e-12)
    np.testing.assert_allclose(follower.sample(2.5).positions, -0.5)


def test_a_replacing_cubic_is_velocity_continuous():
    """With velocities, the replacement starts with the old command's velocity (no jerk step)."""
    follower = make_follower()
    follower.set_trajectory(one_point(1.0, [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]), now=0.0)
    before = follower.sample(0.6)
    follower.set_trajectory(one_point(0.05, [0.6, 0.6, 0.6], [0.5, 0.5, 0.5]), now=0.6)
    after = follower.sample(0.6)
    np.testing.assert_allclose(after.positions, before.positions)
    np.testing.assert_allclose(after.velocities, before.velocities)


def test_a_first_point_due_on_arrival_is_joined_from_the_current_command():
    """time_from_start = 0 on the first point: no jump; the command runs on to the next point."""
    follower = make_follower()
    trajectory = Trajectory(NAMES, [Waypoint(0.0, [0.3] * 3), Waypoint(1.0, [0.5] * 3)])
    assert follower.set_trajectory(trajectory, now=4.0).accepted
    np.testing.assert_allclose(follower.sample(4.0).positions, 0.0)
    np.testing.assert_allclose(follower.sample(4.5).positions, 0.25)
    np.testing.assert_allclose(follower.sample(5.0 - 1e-9).positions, 0.5)


def test_a_single_point_due_on_arrival_is_taken_at_once():
    """A trajectory whose only point is due on arrival puts the command there (nothing to join)."""
    follower = make_follower()
    assert follower.set_trajectory(one_point(0.0, [0.3] * 3), now=4.0).accepted
    np.testing.assert_allclose(follower.sample(4.0).positions, 0.3)


def test_a_non_zero_stamp_is_the_start_time():
    """A stamped trajectory is timed from its stamp, interpolating from the arrival state."""
    follower = make_follower()
    trajectory = one_point(1.0, [0.6, 0.6, 0.6], stamp=3.0)
    assert follower.set_trajectory(trajectory, now=2.0).accepted
    # First segment: from (t=2, 0) to (t=4, 0.6), linear.
    np.testing.assert_allclose(follower.sample(3.0).positions, 0.3)
    np.testing.assert_allclose(follower.sample(4.0).positions, 0.6)


def test_points_outside_the_limits_are_clamped_and_counted():
    """Points beyond the position limits are accepted, clamped and counted."""
    follower = make_follower()
    trajectory = Trajectory(
        NAMES, [Waypoint(1.0, [5.0, 0.0, 0.0]), Waypoint(2.0, [0.0, -9.0, 0.0]),
                Waypoint(3.0, [0.0, 0.0, 0.0])],
    )
    verdict = follower.set_trajectory(trajectory, now=0.0)
    assert verdict.accepted and verdict.clamped_points == 2
    assert 'clamped' in verdict.detail
    assert follower.stats.clamped_points == 2
    np.testing.assert_allclose(follower.sample(1.0).positions, [1.0, 0.0, 0.0])
    np.testing.assert_allclose(follower.sample(2.0).positions, [0.0, -2.0, 0.0])


def test_samples_never_leave_the_limits_even_when_a_cubic_overshoots():
    """A cubic that would overshoot a limit between points is clamped there, at rest."""
    follower = make_follower()
    trajectory = one_point(1.0, [1.0, 0.0, 0.0], [5.0, 0.0, 0.0])
    follower.set_trajectory(trajectory, now=0.0)
    samples = [follower.sample(t) for t in np.linspace(0.0, 1.0, 101)]
    assert max(sample.positions[0] for sample in samples) <= UPPER[0]
    clamped = [sample for sample in samples if sample.positions[0] == UPPER[0]]
    assert clamped and all(sample.velocities[0] == 0.0 for sample in clamped)


@pytest.mark.parametrize(
    'trajectory, status',
    [
        (Trajectory((), [Waypoint(1.0, [])]), TrajectoryStatus.EMPTY_JOINT_NAMES),
        (Trajectory(NAMES, []), TrajectoryStatus.EMPTY_POINTS),
        (one_point(1.0, [0.0] * 3, names=('j1', 'j2', 'j2')), TrajectoryStatus.DUPLICATE_JOINT),
        (one_point(1.0, [0.0] * 4, names=NAMES + ('elbow',)), TrajectoryStatus.UNKNOWN_JOINT),
        (one_point(1.0, [0.0] * 2, names=('j1', 'j2')), TrajectoryStatus.MISSING_JOINT),
        (one_point(1.0, [0.0] * 2), TrajectoryStatus.SIZE_MISMATCH),
        (one_point(1.0, [0.0] * 3, [0.0] * 2), TrajectoryStatus.SIZE_MISMATCH),
        (Trajectory(NAMES, [Waypoint(1.0, [0.0] * 3, [], [0.0])]),
         TrajectoryStatus.SIZE_MISMATCH),
        (Trajectory(NAMES, [Waypoint(1.0, [0.0] * 3, effort=[1.0] * 3)]),
         TrajectoryStatus.EFFORT_NOT_SUPPORTED),
        (one_point(1.0, [0.0, math.nan, 0.0]), TrajectoryStatus.NOT_FINITE),
        (one_point(1.0, [0.0] * 3, [0.0, math.inf, 0.0]), TrajectoryStatus.NOT_FINITE),
        (one_point(math.nan, [0.0] * 3), TrajectoryStatus.NOT_FINITE),
        (Trajectory(NAMES, [Waypoint(1.0, [0.0] * 3), Waypoint(1.0, [0.1] * 3)]),
         TrajectoryStatus.TIME_NOT_INCREASING),
        (Trajectory(NAMES, [Waypoint(2.0, [0.0] * 3), Waypoint(1.0, [0.1] * 3)]),
         TrajectoryStatus.TIME_NOT_INCREASING),
        (one_point(-0.1, [0.0] * 3), TrajectoryStatus.TIME_NOT_INCREASING),
        (one_point(1.0, [0.0] * 3, stamp=5.0), TrajectoryStatus.IN_THE_PAST),
    ],
    ids=lambda value: value.value if isinstance(value, TrajectoryStatus) else '',
)
def test_invalid_trajectories_are_rejected_with_their_reason(trajectory, status):
    """Each JTC validation rule rejects with its own status, and the command goes on unchanged."""
    follower = make_follower()
    follower.set_trajectory(one_point(2.0, [0.8, 0.8, 0.8]), now=0.0)
    verdict = follower.set_trajectory(trajectory, now=10.0 if status is
                                      TrajectoryStatus.IN_THE_PAST else 1.0)
    assert not verdict.accepted
    assert verdict.status is status
    assert verdict.detail
    assert follower.stats.rejected == 1 and follower.stats.rejections == {status: 1}
    assert follower.stats.last_rejection == verdict
    if status is not TrajectoryStatus.IN_THE_PAST:
        np.testing.assert_allclose(follower.sample(1.5).positions, 0.6)


def test_nonzero_end_velocity_is_rejected_only_when_not_allowed():
    """``allow_nonzero_velocity_at_trajectory_end`` false (Jazzy) rejects a moving last point."""
    moving_end = one_point(1.0, [0.1] * 3, [0.2] * 3)
    assert make_follower().set_trajectory(moving_end, now=0.0).accepted
    strict = make_follower(allow_nonzero_velocity_at_trajectory_end=False)
    verdict = strict.set_trajectory(moving_end, now=0.0)
    assert verdict.status is TrajectoryStatus.NONZERO_END_VELOCITY
    assert strict.set_trajectory(one_point(1.0, [0.1] * 3, [0.0] * 3), now=0.0).accepted


def test_a_stamped_trajectory_still_running_is_joined_from_the_current_command():
    """A stamp in the past whose end is still ahead: from the command to the next point due."""
    follower = make_follower()
    points = [Waypoint(1.0, [0.0] * 3), Waypoint(3.0, [1.0] * 3), Waypoint(4.0, [0.5] * 3)]
    stamped = Trajectory(NAMES, points, stamp=1.0)
    assert follower.set_trajectory(stamped, now=3.0).accepted
    np.testing.assert_allclose(follower.sample(3.0).positions, 0.0)
    np.testing.assert_allclose(follower.sample(4.0).positions, 1.0)
    np.testing.assert_allclose(follower.sample(4.5).positions, 0.75)


def test_follower_rejects_inconsistent_construction():
    """Names, limits and initial positions must agree."""
    with pytest.raises(ConfigError):
        TrajectoryFollower(('a', 'a'), [0, 0], [1, 1], [0, 0])
    with pytest.raises(ConfigError):
        TrajectoryFollower(('a', 'b'), [0, 0], [1], [0, 0])
    with pytest.raises(ConfigError):
        TrajectoryFollower(('a',), [1.0], [0.0], [0.5])
    with pytest.raises(ConfigError):
        FollowerConfig(allow_nonzero_velocity_at_trajectory_end='yes')


def test_reset_drops_the_trajectory_and_holds():
    """``reset`` holds the given positions (clamped) and forgets the active trajectory."""
    follower = make_follower()
    follower.set_trajectory(one_point(5.0, [1.0] * 3), now=0.0)
    follower.reset([0.2, 9.0, -0.2])
    np.testing.assert_allclose(follower.sample(1.0).positions, [0.2, 2.0, -0.2])
    assert follower.end_time is None


def drawn_points(
    draw: st.DrawFn, times: list[float], values: st.SearchStrategy[float]
) -> list[Waypoint]:
    """Draw a point per time: positions from ``values``, velocities 4x, accelerations 40x."""
    return [
        Waypoint(
            time,
            [draw(values) for _ in NAMES],
            [4 * draw(values) for _ in NAMES],
            [40 * draw(values) for _ in NAMES],
        )
        for time in times
    ]


@st.composite
def chunk_streams(draw: st.DrawFn) -> list[tuple[float, Trajectory]]:
    """
    Draw a stream of quintic chunks with their arrival times, as a publisher streams them.

    Each chunk has 1-5 points (positions inside the limits, velocities, accelerations), is
    stamped 0 or with a time up to 40 ms before its arrival, and its first point is still ahead
    on arrival (as a streamed chunk's is unless it comes later than that point).
    """
    arrivals = st.floats(0.001, 0.06, allow_nan=False)
    values = st.floats(-0.9, 0.9, allow_nan=False)
    now = 0.0
    stream = []
    for _ in range(draw(st.integers(2, 12))):
        now += draw(arrivals)
        stamp = 0.0 if draw(st.booleans()) else now - draw(st.floats(0.0, 0.04))
        origin = now if stamp == 0.0 else stamp
        first = now - origin + draw(st.floats(1e-4, 0.02))
        times = [first + 0.01 * index for index in range(draw(st.integers(1, 5)))]
        points = drawn_points(draw, times, values)
        stream.append((now, Trajectory(NAMES, points, stamp=stamp)))
    return stream


@settings(max_examples=60, deadline=None)
@given(stream=chunk_streams())
def test_a_chunk_switch_keeps_the_command_continuous(stream):
    """
    Whatever the chunks, a switch keeps the commanded position, velocity and acceleration.

    The new chunk starts from the old command at its arrival (JTC's open-loop replacement), so
    the reference a servo follows has no step there.
    """
    follower = make_follower()
    for arrival, trajectory in stream:
        before = follower.sample(arrival)
        assert follower.set_trajectory(trajectory, now=arrival).accepted
        after = follower.sample(arrival)
        np.testing.assert_allclose(after.positions, before.positions, atol=1e-12)
        np.testing.assert_allclose(after.velocities, before.velocities, atol=1e-9)
        np.testing.assert_allclose(after.accelerations, before.accelerations, atol=1e-6)


@st.composite
def late_chunk_streams(draw: st.DrawFn) -> list[tuple[float, Trajectory]]:
    """
    Draw a stream of stamped quintic chunks that reach the follower after their first points.

    Each chunk has 2-6 points every 0.5-10 ms after its stamp (positions inside the limits,
    velocities, accelerations) and arrives up to 3 points late, but before its last point.
    """
    values = st.floats(-0.3, 0.3, allow_nan=False)
    now = 0.0
    stream = []
    for _ in range(draw(st.integers(2, 10))):
        stamp = now + draw(st.floats(0.001, 0.05))
        times = [0.0]
        for _ in range(draw(st.integers(1, 5))):
            times.append(times[-1] + draw(st.floats(0.0005, 0.01)))
        times = times[1:] if len(times) > 2 else times
        late = draw(st.integers(0, len(times) - 1))
        now = stamp + times[late] + draw(st.floats(0.0, 0.9)) * (
            times[-1] - times[late] if late < len(times) - 1 else 0.0
        ) + 1e-6
        now = min(now, stamp + times[-1] - 1e-6)
        points = drawn_points(draw, times, values)
        stream.append((now, Trajectory(NAMES, points, stamp=stamp)))
    return stream


@settings(max_examples=80, deadline=None)
@given(stream=late_chunk_streams())
def test_a_late_chunk_never_makes_the_command_jump(stream):
    """
    A chunk that arrives after its first point is joined from the command, without a step.

    The follower's reference (what the servo follows) keeps its position, velocity and
    acceleration at the arrival, and its position and velocity are continuous at every point
    of the chunk after it (left and right of each point 2 ns apart they differ by no more than
    their derivatives allow).
    """
    follower = make_follower()
    for arrival, trajectory in stream:
        before = follower.sample(arrival)
        assert follower.set_trajectory(trajectory, now=arrival).accepted
        after = follower.sample(arrival)
        np.testing.assert_allclose(after.positions, before.positions, atol=1e-12)
        np.testing.assert_allclose(after.velocities, before.velocities, atol=1e-9)
        np.testing.assert_allclose(after.accelerations, before.accelerations, atol=1e-6)
        due = [trajectory.stamp + point.time_from_start for point in trajectory.points]
        for when in [t for t in due if arrival + 1e-8 < t < due[-1] - 1e-8]:
            left, right = follower.sample(when - 1e-9), follower.sample(when + 1e-9)
            speed = np.maximum(np.abs(left.velocities), np.abs(right.velocities))
            rate = np.maximum(np.abs(left.accelerations), np.abs(right.accelerations))
            assert np.all(np.abs(right.positions - left.positions) <= 4e-9 * speed + 1e-12)
            assert np.all(np.abs(right.velocities - left.velocities) <= 4e-9 * rate + 1e-9)


def test_a_first_point_due_within_a_nanosecond_of_the_arrival_is_taken_as_due():
    """
    A first point due less than a nanosecond after the arrival counts as due, without error.

    Times closer than a nanosecond are equal (a ROS duration's resolution): such a trajectory
    is late, and it is followed from the point that is due.
    """
    follower = make_follower()
    arrival = 10.0
    points = [Waypoint(0.1, [0.0] * 3, [0.0] * 3, [0.0] * 3),
              Waypoint(0.2, [0.1] * 3, [0.0] * 3, [0.0] * 3)]
    trajectory = Trajectory(NAMES, points, stamp=arrival - 0.1 + 5e-10)
    assert follower.set_trajectory(trajectory, now=arrival).accepted
    assert follower.stats.late == 1
    assert follower.sample(arrival + 0.1).positions == pytest.approx([0.1] * 3)


def test_the_delay_of_stamped_trajectories_is_recorded_and_of_unstamped_ones_not():
    """
    Arrival - stamp of each accepted stamped trajectory: percentiles, the largest, a bound.

    A trajectory stamped 0 ("start on arrival") has no delay to tell, and a rejected one is not
    counted; the percentiles keep the latest DELAY_WINDOW delays and the largest stays.
    """
    follower = make_follower()
    assert math.isnan(follower.stats.delay_ms(50.0)) and math.isnan(follower.stats.delay_max)
    assert follower.set_trajectory(one_point(1.0, [0.1] * 3), now=1.0).accepted
    assert not follower.stats.delays
    bad = Trajectory(NAMES, [Waypoint(1.0, [0.1] * 2)], stamp=1.0)
    assert not follower.set_trajectory(bad, now=1.5).accepted
    assert not follower.stats.delays
    now = 2.0
    for delay in (0.004, 0.002, 0.030):
        assert follower.set_trajectory(one_point(1.0, [0.2] * 3, stamp=now - delay), now).accepted
        now += 0.04
    assert follower.stats.delay_max == pytest.approx(0.030)
    assert follower.stats.delay_ms(50.0) == pytest.approx(4.0)
    assert follower.stats.delay_ms(0.0) == pytest.approx(2.0)
    for _ in range(DELAY_WINDOW):
        assert follower.set_trajectory(one_point(1.0, [0.2] * 3, stamp=now - 0.001), now).accepted
        now += 0.04
    assert len(follower.stats.delays) == DELAY_WINDOW
    assert follower.stats.delay_ms(100.0) == pytest.approx(1.0)
    assert follower.stats.delay_max == pytest.approx(0.030)


def test_a_joined_trajectory_records_its_delay_and_the_shares_of_the_limits_it_reaches():
    """
    A late stamped trajectory that leaves the command is joined: its delay and peaks are kept.

    The join delays are the smallest and the largest of the joined ones only (a trajectory
    taken on arrival is not one), and the peaks those of the joins as followed.
    """
    limits = MotionLimits(
        lower=LOWER, upper=UPPER, velocity=np.full(3, 1.0), acceleration=np.full(3, 2.0),
        jerk=np.full(3, 20.0),
    )
    follower = TrajectoryFollower(NAMES, LOWER, UPPER, [0.0] * 3, limits=limits)
    assert math.isnan(follower.stats.join_delays[0]) and follower.stats.last_join is None
    assert follower.set_trajectory(one_point(0.5, [0.1] * 3), now=1.0).accepted
    assert follower.stats.joined == 0 and math.isnan(follower.stats.join_delays[1])
    for delay in (0.05, 0.02):
        points = [Waypoint(0.01, [0.3] * 3, [0.0] * 3), Waypoint(1.0, [0.3] * 3, [0.0] * 3)]
        now = 1.2 + delay
        assert follower.set_trajectory(Trajectory(NAMES, points, stamp=now - delay), now).accepted
    stats = follower.stats
    assert stats.joined == 2
    assert stats.join_delays == pytest.approx((0.02, 0.05))
    assert stats.last_join is not None and stats.last_join[0] == pytest.approx(0.02)
    assert stats.join_peaks.pairs > 0
    assert stats.join_peaks.peak == max(stats.join_peaks.velocity, stats.join_peaks.acceleration,
                                        stats.join_peaks.jerk) > 0.0


def test_a_continued_trajectory_is_judged_by_its_segments_not_by_where_it_arrived_in_one():
    """
    A trajectory continuing the command is checked from the point before its arrival.

    Between two points within the limits (their mean velocity, acceleration and jerk), the
    quintic bends: near its ends its jerk is several times the mean. Checking from the arrival,
    a few microseconds before the next point, measured that bend as the trajectory's jerk (the
    demo's one "invalid" segment, 1.28x, on an idle machine). A later pair beyond a limit is
    still counted, and so is a trajectory the command jumps onto.
    """
    limits = MotionLimits(
        lower=LOWER, upper=UPPER, velocity=np.full(3, 1.0), acceleration=np.full(3, 1.0),
        jerk=np.full(3, 1.0),
    )
    zero = [0.0] * 3
    points = [Waypoint(0.0, zero, zero, zero), Waypoint(1.0, [0.2] * 3, zero, zero),
              Waypoint(2.0, [0.4] * 3, zero, zero)]
    follower = TrajectoryFollower(NAMES, LOWER, UPPER, zero, limits=limits)
    assert follower.set_trajectory(Trajectory(NAMES, points, stamp=1.0), now=1.0).accepted
    assert follower.stats.segment_violations == 0
    follower.sample(1.99)  # a microsecond-scale piece of the first segment's bend is ahead
    assert follower.set_trajectory(Trajectory(NAMES, points, stamp=1.0), now=1.999).accepted
    assert follower.stats.segment_violations == 0 and follower.stats.joined == 0
    assert follower.stats.last_violation is None
    steep = points + [Waypoint(2.5, [1.5] * 3, zero, zero)]  # 2.2 rad/s mean: beyond
    assert follower.set_trajectory(Trajectory(NAMES, steep, stamp=1.0), now=2.2).accepted
    assert follower.stats.segment_violations == 1 and follower.stats.joined == 0
    assert follower.stats.last_violation is not None
    delay, peaks, jumped = follower.stats.last_violation
    assert delay == pytest.approx(1.2) and peaks.velocity > 2.0 and not jumped
    away = Trajectory(NAMES, [Waypoint(0.0, [0.9] * 3)], stamp=2.5)  # due now: taken at once
    assert follower.set_trajectory(away, now=2.5).accepted
    assert follower.stats.segment_violations == 2 and follower.stats.last_violation[2]


def test_the_compiled_plan_sampling_gives_the_numpy_path_s_states() -> None:
    """Both paths of plan_state_into agree to rounding: every kind, before, inside, clamped."""
    from pic_ros_tools.sim import plan_state

    rng = np.random.default_rng(7)
    lower, upper = np.full(3, -1.2), np.full(3, 1.2)
    compiled = plan_state._PLAN_STATE.function()
    for _ in range(300):
        count = int(rng.integers(2, 7))
        times = 10.0 + np.cumsum(rng.uniform(0.002, 0.05, count))
        positions, velocities, accelerations = rng.normal(size=(3, count, 3))
        codes = rng.integers(0, 3, count - 1)
        instants = [times[0] - 0.01, times[0], times[-2], *rng.uniform(times[0], times[-1], 4)]
        for t in instants:
            arguments = (times, positions, velocities, accelerations, codes, lower, upper, t)
            expected = [np.empty(3) for _ in range(3)]
            plan_state._plan_state_numpy(*arguments, *expected)
            for path in (plan_state._plan_state_loops, compiled):
                got = [np.empty(3) for _ in range(3)]
                path(*arguments, *got)
                for mine, theirs in zip(got, expected):
                    np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-9)
