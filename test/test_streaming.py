"""Streaming chunks for the joint_trajectory_controller: names, times and arrays validated."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion import (
    duration_parts,
    JointLimiter,
    MotionLimits,
    stream_chunk,
    streaming,
    TrajectoryChunk,
    TrajectoryPoint,
)
from pic_ros.motion.streaming import MIN_POINT_GAP, planned_chunk, sent_time
import pytest

NAMES = ('a1', 'a2', 'a3')


def point(time: float, value: float = 0.0) -> TrajectoryPoint:
    """Make a point for the three joints of NAMES."""
    return TrajectoryPoint(time, np.full(3, value), np.zeros(3))


def test_stream_chunk_holds_one_point_at_the_lead_time() -> None:
    """The streamed chunk names every joint and has one point at lead_time with the command."""
    chunk = stream_chunk(list(NAMES), [0.1, 0.2, 0.3], [0.0, -1.0, 2.0], 0.02)
    assert chunk.joint_names == NAMES
    assert len(chunk.points) == 1
    only = chunk.points[0]
    assert only.time_from_start == 0.02
    assert chunk.times_ns == (20_000_000,)
    np.testing.assert_array_equal(only.positions, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(only.velocities, [0.0, -1.0, 2.0])
    assert not only.positions.flags.writeable


def test_stream_chunk_carries_a_limiter_command() -> None:
    """A limiter command for shipped-size arms converts without loss."""
    limits = MotionLimits(np.full(3, -1.0), np.full(3, 1.0), np.ones(3), np.full(3, 3.0))
    limiter = JointLimiter(limits, np.zeros(3))
    step = limiter.step([1.0, -1.0, 0.5], 0.01)
    chunk = stream_chunk(NAMES, step.position, step.velocity, 0.02)
    np.testing.assert_array_equal(chunk.points[0].positions, step.position)
    np.testing.assert_array_equal(chunk.points[0].velocities, step.velocity)


@pytest.mark.parametrize(
    ('names', 'message'),
    [
        ((), 'at least one joint name'),
        (('a1', '', 'a3'), 'non-empty strings'),
        (('a1', '  ', 'a3'), 'non-empty strings'),
        (('a1', 3, 'a3'), 'non-empty strings'),
        (('a1', 'a1', 'a3'), "unique, repeated: ['a1']"),
        (('a1', ['a2'], 'a3'), 'non-empty strings'),
    ],
)
def test_chunk_rejects_bad_joint_names(names: tuple, message: str) -> None:
    """Names must be present, non-empty strings and unique, each time they are given."""
    for _ in range(2):  # good names are checked once per process; bad ones every time
        TrajectoryChunk(NAMES, (point(0.01),))
        with pytest.raises(ConfigError, match=message.replace('[', r'\[')):
            TrajectoryChunk(names, (point(0.01),))


@pytest.mark.parametrize(
    ('positions', 'velocities'),
    [
        ([0.0, 0.0], [0.0, 0.0, 0.0]),
        ([0.0, 0.0, 0.0], [0.0, math.nan, 0.0]),
        ([0.0, math.inf, 0.0], [0.0, 0.0, 0.0]),
        ([[0.0, 0.0, 0.0]], [0.0, 0.0, 0.0]),
        (['x', 0.0, 0.0], [0.0, 0.0, 0.0]),
    ],
)
def test_stream_chunk_rejects_bad_arrays(positions: list, velocities: list) -> None:
    """Positions and velocities must be finite, one per named joint."""
    with pytest.raises(ConfigError, match='finite|numbers'):
        stream_chunk(NAMES, positions, velocities, 0.02)


@pytest.mark.parametrize('lead_time', [0.0, -0.01, 0.0005, math.nan, math.inf, 1.5, True, '0.02'])
def test_stream_chunk_rejects_bad_lead_times(lead_time: object) -> None:
    """lead_time must be a number in [0.001, 1] s (a point at 0 would make the robot jump)."""
    with pytest.raises(ConfigError, match='lead_time'):
        stream_chunk(NAMES, np.zeros(3), np.zeros(3), lead_time)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    'times',
    [(0.0,), (0.02, 0.02), (0.02, 0.01), (0.02, 0.0200000001), (math.nan,), (-1.0, 0.02)],
)
def test_chunk_rejects_times_not_strictly_increasing(times: tuple[float, ...]) -> None:
    """time_from_start must be > 0 and strictly increasing at nanosecond resolution."""
    with pytest.raises(ConfigError, match='time_from_start|duration'):
        TrajectoryChunk(NAMES, tuple(point(time) for time in times))


def test_chunk_rejects_no_points() -> None:
    """A trajectory without points is refused."""
    with pytest.raises(ConfigError, match='at least one point'):
        TrajectoryChunk(NAMES, ())


@given(st.lists(st.floats(1e-6, 100.0), min_size=1, max_size=10, unique=True))
def test_chunk_times_are_strictly_increasing(raw: list[float]) -> None:
    """Any valid chunk has strictly increasing positive times, in seconds and nanoseconds."""
    times = sorted(raw)
    try:
        chunk = TrajectoryChunk(NAMES, tuple(point(time) for time in times))
    except ConfigError:
        nanoseconds = [round(time * 1e9) for time in times]
        assert any(b <= a for a, b in zip([0] + nanoseconds, nanoseconds))
        return
    assert all(0 < a < b for a, b in zip(chunk.times_ns, chunk.times_ns[1:]))
    assert chunk.times_ns[0] > 0
    seconds = [p.time_from_start for p in chunk.points]
    assert all(a < b for a, b in zip(seconds, seconds[1:]))


@given(
    st.lists(st.floats(1e-6, 100.0), min_size=1, max_size=30, unique=True),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_chunk_times_and_arrays_are_those_of_each_point(
    raw: list[float], accelerated: bool, seed: int
) -> None:
    """A chunk's times are each point's duration_parts, its arrays the points' values, frozen."""
    times = sorted(raw)
    rng = np.random.default_rng(seed)
    given_points = [
        TrajectoryPoint(
            time, rng.normal(size=3).tolist(), rng.normal(size=3),
            rng.normal(size=3) if accelerated else None,
        )
        for time in times
    ]
    expected = [sec * 10**9 + nanosec for sec, nanosec in map(duration_parts, times)]
    if any(b <= a for a, b in zip([0] + expected, expected)):
        with pytest.raises(ConfigError, match='strictly increasing'):
            TrajectoryChunk(NAMES, tuple(given_points))
        return
    chunk = TrajectoryChunk(NAMES, tuple(given_points))
    assert list(chunk.times_ns) == expected
    for made, original in zip(chunk.points, given_points):
        assert made.time_from_start == original.time_from_start
        assert np.array_equal(made.positions, original.positions)
        assert np.array_equal(made.velocities, original.velocities)
        assert (made.accelerations is None) == (original.accelerations is None)
        for values in (made.positions, made.velocities, made.accelerations):
            if values is not None:
                assert values.shape == (3,) and not values.flags.writeable


@pytest.mark.parametrize(
    ('field', 'value', 'message'),
    [
        ('positions', [0.0, math.inf, 0.0], 'point 2 positions'),
        ('velocities', [0.0, 0.0], 'point 2 velocities'),
        ('accelerations', [math.nan, 0.0, 0.0], 'point 2 accelerations'),
        ('accelerations', None, None),
        ('time_from_start', True, 'duration'),
    ],
)
def test_chunk_names_the_point_at_fault(field: str, value: object, message: str | None) -> None:
    """A bad point among good ones is refused by index and field; mixed accelerations pass."""
    points = [
        TrajectoryPoint(0.01 * (index + 1), np.zeros(3), np.zeros(3), np.zeros(3))
        for index in range(4)
    ]
    changed = dict(vars(points[2]), **{field: value})
    points[2] = TrajectoryPoint(**changed)
    if message is None:
        chunk = TrajectoryChunk(NAMES, tuple(points))
        assert [p.accelerations is None for p in chunk.points] == [False, False, True, False]
        return
    with pytest.raises(ConfigError, match=message):
        TrajectoryChunk(NAMES, tuple(points))


@given(st.floats(0.0, 2.0**31 - 1.0))
def test_duration_parts_round_trip(seconds: float) -> None:
    """Duration parts are whole seconds plus nanoseconds below 1e9, within half a nanosecond."""
    sec, nanosec = duration_parts(seconds)
    assert isinstance(sec, int) and isinstance(nanosec, int)
    assert 0 <= nanosec < 1_000_000_000
    whole = math.floor(seconds)
    assert sec in (whole, whole + 1)
    assert abs(sec - whole + nanosec * 1e-9 - (seconds - whole)) <= 0.5e-9 + 1e-15


@pytest.mark.parametrize('seconds', [-1e-3, math.nan, math.inf, 2.0**31, '1'])
def test_duration_parts_rejects_bad_durations(seconds: object) -> None:
    """Negative, non-finite, too long or non-numeric durations raise ConfigError."""
    with pytest.raises(ConfigError, match='duration'):
        duration_parts(seconds)  # type: ignore[arg-type]


def test_a_bridge_with_two_states_a_rounding_apart_keeps_the_later() -> None:
    """Bridge states closer than MIN_POINT_GAP (float rounding) make one point, not a refusal."""
    state = (np.zeros(2), np.ones(2), np.zeros(2))
    bridge = [(9.999999999996123e-06, *state), (1.0000000000010001e-05, *state)]
    chunk = planned_chunk(
        ('a', 'b'), lambda t: (t * np.ones(2), np.ones(2), np.zeros(2)), 0.05, bridge=bridge,
    )
    times = [point.time_from_start for point in chunk.points]
    assert times[0] == sent_time(1.0000000000010001e-05)
    assert all(later - earlier >= MIN_POINT_GAP for earlier, later in zip(times, times[1:]))
    assert chunk.points[chunk.start].time_from_start == times[0]


def test_every_point_of_a_planned_chunk_is_the_plan_at_the_time_the_controller_reads() -> None:
    """
    Bridge, plan and tail points carry the state of the nanosecond their message gives them.

    A cubic motion (constant jerk) sampled at times that are not whole nanoseconds (a bridge
    from an earlier stamp, a plan starting a third of a microsecond off the grid, a braking
    tail): each point's positions, velocities and accelerations are the motion's at
    ``times_ns``, to rounding.
    """
    jerk = np.array([3.0, -40.0])

    def motion(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (
            np.array([0.2, -0.1]) + 1.5 * t + 0.5 * 2.0 * t**2 + jerk * t**3 / 6.0,
            1.5 + 2.0 * t + 0.5 * jerk * t**2, 2.0 + jerk * t,
        )

    stamp = 7.0000000004
    origin = 0.0123456781  # where the plan starts after the stamp [s]
    bridge = [(when, *motion(when - origin)) for when in (1e-5 + 1e-10, 0.0051234567, origin)]
    tail = [(0.0, *motion(0.05)), (0.0031234567, *motion(0.0531234567))]
    chunk = planned_chunk(
        ('a', 'b'), lambda t: motion(t), 0.05, breakpoints=[0.0133333333, 0.0133433333],
        stamp=stamp, bridge=bridge, tail=tail,
    )
    for point, nanoseconds in zip(chunk.points, chunk.times_ns):
        assert point.time_from_start == pytest.approx(nanoseconds * 1e-9, rel=0.0, abs=1e-15)
        expected = motion(nanoseconds * 1e-9 - origin)
        np.testing.assert_allclose(point.positions, expected[0], rtol=0.0, atol=1e-14)
        np.testing.assert_allclose(point.velocities, expected[1], rtol=0.0, atol=1e-13)
        np.testing.assert_allclose(point.accelerations, expected[2], rtol=0.0, atol=1e-7)


def _random_points(count: int, dof: int, seed: int) -> tuple[np.ndarray, ...]:
    """Return times strictly increasing in nanoseconds (not whole ones) and random rows."""
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.uniform(1e-4, 2e-2, count)) + 1e-10
    return times, *(rng.normal(size=(count, dof)) for _ in range(3))


def test_a_chunk_made_from_arrays_is_the_chunk_made_from_its_points() -> None:
    """The same times, arrays and points, read one at a time, sliced or iterated."""
    names = ('a', 'b', 'c')
    times, q, v, a = _random_points(12, 3, seed=4)
    made = TrajectoryChunk.from_arrays(names, times, q, v, a, stamp=3.5, start=2, end=8, stop=10)
    given = TrajectoryChunk(
        joint_names=names,
        points=[TrajectoryPoint(float(t), *rows) for t, *rows in zip(times, q, v, a)],
        stamp=3.5, start=2, end=8, stop=10,
    )
    assert made.times_ns == given.times_ns
    assert (made.stamp, made.start, made.end, made.stop) == (3.5, 2, 8, 10)
    for mine, theirs in zip(made.arrays(), given.arrays()):
        assert mine is not None and theirs is not None
        np.testing.assert_array_equal(mine, theirs)
        assert not mine.flags.writeable
    assert len(made.points) == 12
    assert made.command.time_from_start == given.command.time_from_start
    for index in (0, 5, -1):
        np.testing.assert_array_equal(made.points[index].positions, given.points[index].positions)
    assert [p.time_from_start for p in made.points[3:6]] == times[3:6].tolist()
    for mine, theirs in zip(made.points, given.points):
        assert mine.time_from_start == theirs.time_from_start
        np.testing.assert_array_equal(mine.accelerations, theirs.accelerations)
    q[0, 0] = 99.0  # the chunk keeps its own copy
    assert made.points[0].positions[0] != 99.0


@pytest.mark.parametrize(
    ('spoil', 'message'),
    [
        (lambda t, q, v, a: v.__setitem__((2, 1), math.nan), 'point 2 velocities'),
        (lambda t, q, v, a: t.__setitem__(4, t[3]), 'strictly increasing'),
        (lambda t, q, v, a: t.__setitem__(0, -1.0), 'duration'),
    ],
)
def test_a_chunk_made_from_bad_arrays_names_the_point_at_fault(spoil, message: str) -> None:
    """Arrays that break a rule are refused with the point-by-point check's reason."""
    times, q, v, a = _random_points(6, 2, seed=5)
    spoil(times, q, v, a)
    with pytest.raises(ConfigError, match=message):
        TrajectoryChunk.from_arrays(('a', 'b'), times, q, v, a)


def test_the_compiled_quintic_gives_the_numpy_floats() -> None:
    """Segments from microseconds to a second long, anywhere along them: the same floats."""
    streaming.load_segments()
    compiled = streaming._quintic()
    if compiled is streaming._quintic_numpy:
        pytest.skip('numba is not installed (or PIC_ROS_JIT=0): no compiled path')
    rng = np.random.default_rng(8)
    for _ in range(500):
        width = int(rng.integers(1, 8))
        scales = np.array([1.0, 2.0, 20.0, 1.0, 2.0, 20.0])[:, None]  # q, v, a at both ends
        rows = rng.normal(0.0, 1.0, (6, width)) * scales
        T = float(rng.choice((1e-5, 1e-3, 0.01, 0.3, 1.0)) * rng.uniform(0.5, 2.0))
        t = float(T * rng.choice((0.0, rng.uniform(), 1.0)))
        powers = (T**2, T**3, T**4, T**5, t**2, t**3, t**4, t**5)
        expected = streaming._quintic_numpy(rows, T, t, powers)
        for path in (compiled, streaming._quintic_loops):
            for mine, theirs in zip(path(rows, T, t, powers), expected):
                assert mine.tobytes() == theirs.tobytes()
