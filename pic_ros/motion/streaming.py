"""
The trajectory chunk streamed to ros2_control's joint_trajectory_controller, without ROS types.

At every publish tick the node sends the command as a short trajectory: every controller joint
named, and points with positions and velocities at strictly increasing ``time_from_start > 0`` (a
first point at 0 would make the controller jump instead of interpolating from its current state).
A generator that knows its accelerations sends them too; the controller then interpolates with
quintic splines from its current state, so the acceleration it commands stays continuous. MoveIt
Servo sends one point at one publish period; a lead of :data:`DEFAULT_LEAD_PERIODS` periods keeps
the controller interpolating when a message arrives a little late, for one period more of lag
(unless the point is the planned state at that time, as the jerk-limited generator sends).

``header.stamp`` (:attr:`TrajectoryChunk.stamp`) is either 0, "start when it arrives", or the
time on the publisher's clock the chunk was planned for, which must then be the controller's
clock (both on ``/clock`` in simulation). A planned chunk stamped 0 is shifted by its transport
delay: the controller, already on the previous chunk's plan, must make up ``velocity * delay``
within the first point's 10 ms, an acceleration far beyond the limits (measured:
``scripts/sim_acceleration.py``); stamped, consecutive chunks lie on the generator's one
continuous trajectory. The node copies a :class:`TrajectoryChunk` into a
``trajectory_msgs/JointTrajectory`` (:func:`duration_parts` gives the
``builtin_interfaces/Duration`` fields).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

DEFAULT_LEAD_PERIODS: Final = 2.0
"""Suggested ``lead_time`` in publish periods (1 is MoveIt Servo's choice: less lag, no slack)."""

POINT_SPACING: Final = 0.01
"""
Time between the points of a planned chunk (:func:`planned_chunk`) [s].

Short enough that the controller's quintic between two points of a jerk-limited plan is that
plan (exactly within a constant-jerk phase), so the controller commands what was planned.
"""

MIN_POINT_GAP: Final = 1e-5
"""
Shortest time between two points of a planned chunk [s].

A quintic spline over a far shorter segment (two breakpoints a nanosecond apart) turns rounding
errors into huge accelerations; dropping a breakpoint closer than this to another point leaves an
interpolation error of the order of ``jerk * MIN_POINT_GAP^2``.
"""

PlannedState = tuple[float, FloatArray, FloatArray, FloatArray]
"""A planned state: ``(time_from_start [s], positions, velocities, accelerations)``."""

LEAD_TIME: Final = ParameterDef(
    'lead_time', 0.05,
    "How far ahead the commands are streamed: the limiter's one point at this time_from_start; "
    "ruckig's plan up to this long after its start (plan_ahead after the step)", unit='s',
    low=0.001, high=1.0,
)
"""The trajectory publisher's ``lead_time`` (:func:`stream_chunk`, :func:`planned_chunk`)."""

_NANOSECONDS: Final = 1_000_000_000
_MAX_SECONDS: Final = 2.0**31 - 1.0


def duration_parts(seconds: float) -> tuple[int, int]:
    """
    Split a non-negative duration into whole seconds and nanoseconds, rounded to the nanosecond.

    :param seconds: Duration [s], in [0, 2^31 - 1].
    :return: ``(sec, nanosec)`` with ``0 <= nanosec < 10^9`` (``builtin_interfaces/Duration``).
    :raises ConfigError: If the duration is not finite or out of range.
    """
    value = check_number('duration', seconds, 0.0, _MAX_SECONDS)
    whole = math.floor(value)
    total = whole * _NANOSECONDS + round((value - whole) * _NANOSECONDS)
    return total // _NANOSECONDS, total % _NANOSECONDS


def _joint_row(name: str, values: npt.ArrayLike, dof: int) -> FloatArray:
    """
    Convert one row of joint values to a read-only float array, or raise.

    :param name: What the values are, for the message.
    :param values: Numbers, shape (dof,).
    :param dof: Number of joints.
    :return: A new read-only ``float64`` array.
    :raises ConfigError: If the values are not ``dof`` finite numbers.
    """
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError(f'{name} must be numbers, got {values!r}') from error
    if array.shape != (dof,) or not np.isfinite(array).all():
        raise ConfigError(f'{name} must be {dof} finite numbers (one per joint), got {values!r}')
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class TrajectoryPoint:
    """
    One point of a streamed trajectory.

    :param time_from_start: Time of the point after the (zero) stamp, finite and > 0 [s].
    :param positions: Joint positions in the chunk's joint order, shape (n,), [rad] or [m].
    :param velocities: Joint velocities, shape (n,), [rad/s] or [m/s].
    :param accelerations: Joint accelerations, shape (n,), [rad/s^2] or [m/s^2], or None (not
        sent).
    """

    time_from_start: float
    positions: FloatArray
    velocities: FloatArray
    accelerations: FloatArray | None = None


@dataclass(frozen=True, eq=False)
class TrajectoryChunk:
    """
    A validated trajectory for the joint_trajectory_controller (stamp 0, all joints named).

    :param joint_names: Joint names, non-empty, unique, in the order of the point arrays.
    :param points: Points with ``time_from_start`` strictly increasing in whole nanoseconds, the
        first > 0, each with finite positions and velocities, shape (n,).
    :param stamp: ``header.stamp``: the time on the publisher's clock the points'
        ``time_from_start`` count from [s], >= 0; 0 means "start when it arrives".
    :param start: Index of the point where the motion planned at this step begins; the points
        before it repeat the trajectory the controller was last sent (a bridge,
        :func:`planned_chunk`), 0 when there are none.
    :raises ConfigError: If a name, a time, an array or the start index breaks these rules.
    """

    joint_names: tuple[str, ...]
    points: tuple[TrajectoryPoint, ...]
    stamp: float = 0.0
    start: int = 0
    times_ns: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        names = tuple(self.joint_names)
        if not names:
            raise ConfigError('a trajectory needs at least one joint name')
        blank = [name for name in names if not isinstance(name, str) or not name.strip()]
        if blank:
            raise ConfigError(f'joint names must be non-empty strings, got {blank!r}')
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ConfigError(f'joint names must be unique, repeated: {repeated}')
        points = tuple(self.points)
        if not points:
            raise ConfigError('a trajectory needs at least one point')
        checked_times = _checked_at_once(points, len(names))
        checked, times = checked_times if checked_times is not None else _checked_one_by_one(
            points, len(names)
        )
        if not isinstance(self.start, int) or not 0 <= self.start < len(points):
            raise ConfigError(f'start must be a point index, got {self.start!r}')
        set_field = object.__setattr__
        set_field(self, 'stamp', check_number('stamp', self.stamp, 0.0, _MAX_SECONDS))
        set_field(self, 'joint_names', names)
        set_field(self, 'points', tuple(checked))
        set_field(self, 'times_ns', tuple(times))

    @property
    def command(self) -> TrajectoryPoint:
        """Return the point where this step's motion begins (``points[start]``)."""
        return self.points[self.start]


def _checked_one_by_one(
    points: Sequence[TrajectoryPoint], dof: int
) -> tuple[list[TrajectoryPoint], list[int]]:
    """
    Return read-only copies of the points and their times [ns], checking each in turn.

    :param points: The chunk's points.
    :param dof: Number of joints.
    :return: The checked points and their ``time_from_start`` in whole nanoseconds.
    :raises ConfigError: Naming the first point and field at fault.
    """
    checked: list[TrajectoryPoint] = []
    times: list[int] = []
    for index, point in enumerate(points):
        where = f'point {index}'
        seconds, nanoseconds = duration_parts(point.time_from_start)
        total = seconds * _NANOSECONDS + nanoseconds
        if total <= (times[-1] if times else 0):
            raise ConfigError(
                f'{where}: time_from_start must be > 0 and strictly increasing (to the '
                f'nanosecond), got {[p.time_from_start for p in points]}'
            )
        times.append(total)
        checked.append(
            TrajectoryPoint(
                time_from_start=float(point.time_from_start),
                positions=_joint_row(f'{where} positions', point.positions, dof),
                velocities=_joint_row(f'{where} velocities', point.velocities, dof),
                accelerations=None if point.accelerations is None else _joint_row(
                    f'{where} accelerations', point.accelerations, dof
                ),
            )
        )
    return checked, times


def _checked_at_once(
    points: Sequence[TrajectoryPoint], dof: int
) -> tuple[list[TrajectoryPoint], list[int]] | None:
    """
    Return read-only copies of the points and their times [ns], checked in one pass.

    The same rules as :func:`_checked_one_by_one` with one array per field instead of one per
    point (a streamed chunk has tens of points, checked at every step). The rows of the returned
    points are views of read-only arrays.

    :param points: The chunk's points.
    :param dof: Number of joints.
    :return: The checked points and their ``time_from_start`` in whole nanoseconds, or None when
        any rule is broken (or the points mix points with and without accelerations): the
        point-by-point check then names the fault.
    """
    count = len(points)
    accelerated = points[0].accelerations is not None
    if any((point.accelerations is not None) != accelerated for point in points):
        return None
    stamps = [point.time_from_start for point in points]
    if any(isinstance(value, bool) or not isinstance(value, (int, float)) for value in stamps):
        return None
    try:
        seconds = np.array(stamps, dtype=float)
        fields = [
            np.array([point.positions for point in points], dtype=float),
            np.array([point.velocities for point in points], dtype=float),
        ]
        if accelerated:
            fields.append(np.array([point.accelerations for point in points], dtype=float))
    except (TypeError, ValueError, OverflowError):
        return None
    if seconds.shape != (count,) or any(array.shape != (count, dof) for array in fields):
        return None
    if not all(np.isfinite(array).all() for array in [seconds, *fields]):
        return None
    if np.any(seconds < 0.0) or np.any(seconds > _MAX_SECONDS):
        return None
    whole = np.floor(seconds)  # as duration_parts: whole seconds, then the nanoseconds rounded
    nanoseconds = whole.astype(np.int64) * _NANOSECONDS + np.rint(
        (seconds - whole) * _NANOSECONDS
    ).astype(np.int64)
    if nanoseconds[0] <= 0 or np.any(np.diff(nanoseconds) <= 0):
        return None
    for array in fields:
        array.setflags(write=False)
    accelerations = fields[2] if accelerated else None
    checked = [
        TrajectoryPoint(
            time_from_start=float(seconds[index]),
            positions=fields[0][index],
            velocities=fields[1][index],
            accelerations=None if accelerations is None else accelerations[index],
        )
        for index in range(count)
    ]
    return checked, nanoseconds.tolist()


def stream_chunk(
    joint_names: Sequence[str],
    positions: npt.ArrayLike,
    velocities: npt.ArrayLike,
    lead_time: float,
    accelerations: npt.ArrayLike | None = None,
    stamp: float = 0.0,
) -> TrajectoryChunk:
    """
    Build the one-point chunk that streams the command to the controller.

    :param joint_names: Every joint of the controller, in the order of the arrays.
    :param positions: Commanded positions for ``lead_time`` from now, shape (n,), [rad] or [m].
    :param velocities: Commanded velocities, shape (n,), [rad/s] or [m/s].
    :param lead_time: ``time_from_start`` of the point, in [0.001, 1] [s]; typically
        :data:`DEFAULT_LEAD_PERIODS` publish periods.
    :param accelerations: Commanded accelerations, shape (n,), [rad/s^2] or [m/s^2], or None
        (not sent).
    :param stamp: The chunk's ``header.stamp`` [s] (:class:`TrajectoryChunk`; 0: on arrival).
    :return: The validated chunk (one point).
    :raises ConfigError: If the names, arrays, lead time or stamp are invalid.
    """
    lead = float(LEAD_TIME.check(lead_time))
    dof = len(joint_names)
    point = TrajectoryPoint(
        time_from_start=lead,
        positions=_joint_row('positions', positions, dof),
        velocities=_joint_row('velocities', velocities, dof),
        accelerations=(
            None if accelerations is None else _joint_row('accelerations', accelerations, dof)
        ),
    )
    return TrajectoryChunk(joint_names=tuple(joint_names), points=(point,), stamp=stamp)


def planned_chunk(
    joint_names: Sequence[str],
    plan: Callable[[float], tuple[FloatArray, FloatArray, FloatArray]],
    lead_time: float,
    breakpoints: Sequence[float] = (),
    spacing: float = POINT_SPACING,
    stamp: float = 0.0,
    start_point: bool = False,
    bridge: Sequence[PlannedState] = (),
) -> TrajectoryChunk:
    """
    Build the chunk that streams a planned trajectory up to ``lead_time`` ahead.

    Points at ``lead_time``, at the plan's ``breakpoints`` and every ``spacing`` seconds, but
    none within :data:`MIN_POINT_GAP` of another (the earlier kind wins), each with the planned
    positions, velocities and accelerations at that time.

    :param joint_names: Every joint of the controller, in the order of the arrays.
    :param plan: The planned state some time ahead of now: ``plan(t)`` gives positions,
        velocities and accelerations, each shape (n,), for ``t`` [s] > 0.
    :param lead_time: How far the plan is streamed: ``time_from_start`` of the last point
        after the plan's start (the stamp, or the end of ``bridge``), in [0.001, 1] [s].
    :param breakpoints: Times where the plan changes its jerk (see
        :meth:`~pic_ros.motion.generator.JerkLimitedGenerator.breakpoints`) [s]; those outside
        (0, ``lead_time``) are ignored.
    :param spacing: Time between the regular points, in [1e-4, 1] [s].
    :param stamp: The chunk's ``header.stamp``: the time ``plan`` counts from, on the
        publisher's clock [s] (0: on arrival; :class:`TrajectoryChunk`).
    :param start_point: Also a point at :data:`MIN_POINT_GAP`, the plan's start state: a chunk
        that reaches the controller before its stamp then joins the command to the plan where
        the plan starts.
    :param bridge: States before the plan, increasing ``time_from_start`` from the stamp; the
        plan starts at the last one's time (its state), and the times above are counted from
        there (with ``start_point`` false: the bridge ends on the plan's start).
    :return: The validated chunk.
    :raises ConfigError: If the names, the planned states, the lead time or the stamp are
        invalid.
    """
    offset = float(bridge[-1][0]) if bridge else 0.0
    lead = float(LEAD_TIME.check(lead_time))
    step = check_number('spacing', spacing, 1e-4, 1.0)
    grid = [step * index for index in range(1, math.ceil(lead / step - 1e-9))]
    times = [lead]
    starts = [MIN_POINT_GAP] if start_point else []
    # the start point, then the plan's own breakpoints, then the grid
    for when in starts + [float(t) for t in breakpoints] + grid:
        apart = all(abs(when - kept) >= MIN_POINT_GAP for kept in times)
        if MIN_POINT_GAP <= when < lead and apart:
            times.append(when)
    times.sort()
    points = [TrajectoryPoint(*state) for state in bridge]
    for when in times:  # TrajectoryChunk checks every array
        positions, velocities, accelerations = plan(when)
        points.append(TrajectoryPoint(offset + when, positions, velocities, accelerations))
    return TrajectoryChunk(
        joint_names=tuple(joint_names), points=tuple(points), stamp=stamp,
        start=max(len(bridge) - 1, 0),
    )
