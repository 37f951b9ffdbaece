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

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
import enum
import itertools
import math
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.motion.peak_shares import load as peak_shares_load
from pic_ros.motion.peak_shares import peak_shares
from pic_ros.robot.kinematics.compiled import Kernel
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

LATE_WINDOW: Final = 2.0
"""
How late a stamped, moving chunk may arrive and still be taken by the controller [s].

joint_trajectory_controller refuses a trajectory with a non-zero stamp whose last point is
already in the past when it arrives (``validate_trajectory_msg``, every ros2_controllers
release up to 6.x). A planned chunk ends at rest after its braking tail; its last point, that
rest again, is placed this long after the stamp, so that a chunk delayed by up to this much (a
loaded computer, a starved process) is still taken: a delay never freezes the arm. A chunk
holding still is stamped 0 (start on arrival) and is taken whenever it comes.
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
    if isinstance(seconds, float) and 0.0 <= seconds <= _MAX_SECONDS:
        value = float(seconds)  # the usual call: a float in range (NaN fails the comparisons)
    else:
        value = check_number('duration', seconds, 0.0, _MAX_SECONDS)
    total = _whole_nanoseconds(value)
    return total // _NANOSECONDS, total % _NANOSECONDS


def _whole_nanoseconds(value: float) -> int:
    """Return a time in [0, 2^31 - 1] s in whole nanoseconds: whole seconds, then ns rounded."""
    whole = math.floor(value)
    return whole * _NANOSECONDS + round((value - whole) * _NANOSECONDS)


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


_Arrays = tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]
"""A chunk's points as arrays (:meth:`TrajectoryChunk.arrays`)."""


class _RowPoints(Sequence[TrajectoryPoint]):
    """
    The points of a chunk made from checked arrays: each made when it is read, from its rows.

    Only :meth:`TrajectoryChunk.from_arrays` makes one, after checking the arrays.
    """

    def __init__(self, seconds: list[float], times_ns: list[int], arrays: _Arrays) -> None:
        self._seconds = seconds
        self.times_ns = times_ns
        self.arrays = arrays
        self.dof = arrays[1].shape[1]
        self._made: tuple[TrajectoryPoint, ...] | None = None

    def __len__(self) -> int:
        return len(self._seconds)

    def _point(self, index: int) -> TrajectoryPoint:
        _, positions, velocities, accelerations = self.arrays
        return TrajectoryPoint(
            self._seconds[index], positions[index], velocities[index],
            None if accelerations is None else accelerations[index],
        )

    def _all(self) -> tuple[TrajectoryPoint, ...]:
        if self._made is None:
            self._made = tuple(self._point(index) for index in range(len(self)))
        return self._made

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self._all()[index]
        if self._made is not None:
            return self._made[index]
        return self._point(range(len(self))[index])

    def __iter__(self) -> Iterator[TrajectoryPoint]:
        return iter(self._all())


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
    :param end: Index of the last point of the plan streamed (``lead_time`` after its start);
        the points after it brake to rest (:func:`planned_chunk`'s ``tail``). -1: the last
        point.
    :param stop: Index of the point where the braking reaches rest; the points after it hold
        that rest (``hold_until``). -1: the last point.
    :raises ConfigError: If a name, a time, an array or an index breaks these rules.
    """

    joint_names: tuple[str, ...]
    points: Sequence[TrajectoryPoint]
    stamp: float = 0.0
    start: int = 0
    end: int = -1
    stop: int = -1
    times_ns: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        names = tuple(self.joint_names)
        try:
            known = names in _NAMES_CHECKED  # a controller's names, checked once
        except TypeError:  # an unhashable name, which the check names
            known = False
        if not known:
            _check_names(names)
            if len(_NAMES_CHECKED) < 64:
                _NAMES_CHECKED.add(names)
        checked, times, arrays = _checked_points(self.points, len(names))
        if arrays is not None:
            self.__dict__['_arrays'] = arrays  # the arrays checked are those of arrays()
        count = len(checked)
        if not isinstance(self.start, int) or not 0 <= self.start < count:
            raise ConfigError(f'start must be a point index, got {self.start!r}')
        set_field = object.__setattr__
        for name in ('end', 'stop'):
            value = getattr(self, name)
            if not isinstance(value, int) or not -count <= value < count:
                raise ConfigError(f'{name} must be a point index, got {value!r}')
            set_field(self, name, value % count)
        if not self.start <= self.end <= self.stop:
            raise ConfigError(
                f'start <= end <= stop must hold, got {self.start}, {self.end}, {self.stop}'
            )
        set_field(self, 'stamp', check_number('stamp', self.stamp, 0.0, _MAX_SECONDS))
        set_field(self, 'joint_names', names)
        set_field(self, 'points', checked)
        set_field(self, 'times_ns', tuple(times))

    @classmethod
    def from_arrays(
        cls,
        joint_names: Sequence[str],
        times: FloatArray,
        positions: FloatArray,
        velocities: FloatArray,
        accelerations: FloatArray,
        stamp: float = 0.0,
        start: int = 0,
        end: int = -1,
        stop: int = -1,
    ) -> TrajectoryChunk:
        """
        Make a chunk from its points as arrays, checked at once (one point object made on demand).

        :param joint_names: As :class:`TrajectoryChunk`.
        :param times: ``time_from_start`` of the points, shape (k,) [s].
        :param positions: Positions, shape (k, n), [rad] or [m]; row ``i`` is point ``i``'s.
        :param velocities: Velocities, shape (k, n), [rad/s] or [m/s].
        :param accelerations: Accelerations, shape (k, n), [rad/s^2] or [m/s^2].
        :param stamp: As :class:`TrajectoryChunk`.
        :param start: As :class:`TrajectoryChunk`.
        :param end: As :class:`TrajectoryChunk`.
        :param stop: As :class:`TrajectoryChunk`.
        :return: The chunk, the same as one made of the points (:attr:`points` reads the rows).
        :raises ConfigError: As :class:`TrajectoryChunk` (the point at fault named).
        """
        dof = len(joint_names)
        arrays = [
            np.array(array, dtype=float) for array in (positions, velocities, accelerations)
        ]
        seconds = np.array(times, dtype=float)
        count = seconds.shape[0] if seconds.ndim == 1 else -1
        well_formed = _well_formed(seconds, arrays, dof, count)
        nanoseconds = _increasing_nanoseconds(seconds) if well_formed else None
        if nanoseconds is None:  # the point-by-point check names the fault
            points: Sequence[TrajectoryPoint] = [
                TrajectoryPoint(float(when), *rows) for when, *rows in zip(times, *arrays)
            ]
        else:
            for array in (seconds, *arrays):
                array.setflags(write=False)
            points = _RowPoints(
                seconds.tolist(), nanoseconds, (seconds, arrays[0], arrays[1], arrays[2]),
            )
        return cls(
            joint_names=tuple(joint_names), points=points, stamp=stamp, start=start, end=end,
            stop=stop,
        )

    @property
    def command(self) -> TrajectoryPoint:
        """Return the point where this step's motion begins (``points[start]``)."""
        return self.points[self.start]

    def arrays(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
        """
        Return the points as arrays, made once (by the check of the points, when it ran at once).

        :return: ``time_from_start`` (k,) [s], positions (k, n), velocities (k, n) and
            accelerations (k, n), or None when the points carry none (read-only).
        """
        made = self.__dict__.get('_arrays')
        if made is None:
            points = self.points
            times = np.array([point.time_from_start for point in points])
            q = np.array([point.positions for point in points])
            v = np.array([point.velocities for point in points])
            a = (
                np.array([point.accelerations for point in points])
                if points[0].accelerations is not None else None
            )
            for array in (times, q, v, a):
                if array is not None:
                    array.setflags(write=False)
            made = (times, q, v, a)
            self.__dict__['_arrays'] = made
        return made


def limit_breach(
    chunk: TrajectoryChunk, lower: FloatArray, upper: FloatArray, velocity: FloatArray
) -> str | None:
    """
    Return the first point of a chunk beyond the joints' limits, described, or None.

    The last check before a chunk leaves the commander: positions within ``[lower, upper]``
    and velocities within ``velocity`` (both with a relative slack of 1e-6 for rounding).

    :param chunk: The chunk.
    :param lower: Lower position limits, in the chunk's joint order, shape (n,), [rad] or [m].
    :param upper: Upper position limits, shape (n,).
    :param velocity: Velocity limits, shape (n,), [rad/s] or [m/s].
    :return: ``'point k of m (part): joint velocity v over the limit l'`` (part: ``bridge``,
        ``plan``, ``tail`` or ``hold``, see :class:`TrajectoryChunk`), or None when within.
    """
    _, q, v, _ = chunk.arrays()
    slack = 1e-6 * np.maximum(np.abs(upper - lower), 1.0)
    outside = (q < lower - slack) | (q > upper + slack)
    fast = np.abs(v) > velocity * (1.0 + 1e-6)
    bad = np.flatnonzero(np.any(outside | fast, axis=1))
    if bad.size == 0:
        return None
    index = int(bad[0])
    joint = int(np.flatnonzero(outside[index] | fast[index])[0])
    count = len(chunk.points)
    end = chunk.end % count
    stop = chunk.stop % count
    part = (
        'bridge' if index < chunk.start else 'plan' if index <= end
        else 'tail' if index <= stop else 'hold'
    )
    name = chunk.joint_names[joint]
    if fast[index, joint]:
        what = f'velocity {v[index, joint]:.4g} over the limit {velocity[joint]:.4g}'
    else:
        what = f'position {q[index, joint]:.6g} outside [{lower[joint]:.6g}, {upper[joint]:.6g}]'
    return f'point {index + 1} of {count} ({part}): {name} {what}'


_NAMES_CHECKED: set[tuple[str, ...]] = set()
"""Joint names that passed :func:`_check_names` (a few per process: one tuple per controller)."""


def _check_names(names: tuple[Any, ...]) -> None:
    """Raise ConfigError unless the names are non-empty strings, at least one, all different."""
    if not names:
        raise ConfigError('a trajectory needs at least one joint name')
    blank = [name for name in names if not isinstance(name, str) or not name.strip()]
    if blank:
        raise ConfigError(f'joint names must be non-empty strings, got {blank!r}')
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f'joint names must be unique, repeated: {repeated}')


def _checked_points(
    given: Sequence[TrajectoryPoint], dof: int
) -> tuple[Sequence[TrajectoryPoint], list[int], _Arrays | None]:
    """
    Return a chunk's points checked, their times [ns] and their arrays (None if not made).

    :param given: The points given to :class:`TrajectoryChunk` (those of
        :meth:`TrajectoryChunk.from_arrays` are checked already).
    :param dof: Number of joints.
    :return: The points (read-only), their ``time_from_start`` in whole nanoseconds and the
        arrays of :meth:`TrajectoryChunk.arrays` when the check made them.
    :raises ConfigError: If there is no point, or naming the first point and field at fault.
    """
    if isinstance(given, _RowPoints) and given.dof == dof:
        return given, given.times_ns, given.arrays
    points = tuple(given)
    if not points:
        raise ConfigError('a trajectory needs at least one point')
    at_once = _checked_at_once(points, dof)
    if at_once is not None:
        return tuple(at_once[0]), at_once[1], at_once[2]
    checked, times = _checked_one_by_one(points, dof)
    return tuple(checked), times, None


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
) -> tuple[list[TrajectoryPoint], list[int], _Arrays] | None:
    """
    Return read-only copies of the points, their times [ns] and arrays, checked in one pass.

    The same rules as :func:`_checked_one_by_one` with one array per field instead of one per
    point (a streamed chunk has tens of points, checked at every step). The rows of the returned
    points are views of read-only arrays, which are returned too (those of
    :meth:`TrajectoryChunk.arrays`: the chunk builds them once).

    :param points: The chunk's points.
    :param dof: Number of joints.
    :return: The checked points, their ``time_from_start`` in whole nanoseconds and the arrays
        ``(time_from_start (k,), positions, velocities, accelerations or None)``, or None when
        any rule is broken (or the points mix points with and without accelerations): the
        point-by-point check then names the fault.
    """
    arrays = _field_arrays(points, dof)
    if arrays is None:
        return None
    seconds, fields = arrays
    nanoseconds = _increasing_nanoseconds(seconds)
    if nanoseconds is None:
        return None
    for array in (seconds, *fields):
        array.setflags(write=False)
    positions, velocities = fields[0], fields[1]
    accelerations = fields[2] if len(fields) > 2 else None
    rows = zip(
        seconds.tolist(), positions, velocities,
        itertools.repeat(None) if accelerations is None else accelerations,
    )  # the arrays' rows, as views
    checked = [TrajectoryPoint(when, q, v, a) for when, q, v, a in rows]
    return checked, nanoseconds, (seconds, positions, velocities, accelerations)


def _field_arrays(
    points: Sequence[TrajectoryPoint], dof: int
) -> tuple[FloatArray, list[FloatArray]] | None:
    """
    Return the points' fields as arrays when they are all well formed, else None.

    :param points: The chunk's points.
    :param dof: Number of joints.
    :return: ``time_from_start`` (k,) [s] and the positions, velocities and (when every point
        has them) accelerations, each (k, dof), all finite; None when a point's time is not a
        number, a field does not convert or has the wrong shape, a value is not finite, or the
        points mix points with and without accelerations.
    """
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
    return (seconds, fields) if _well_formed(seconds, fields, dof, len(points)) else None


def _well_formed(seconds: FloatArray, fields: Sequence[FloatArray], dof: int, count: int) -> bool:
    """Whether the times are (count,) and every field (count, dof), all finite, count > 0."""
    if count <= 0 or seconds.shape != (count,):
        return False
    if any(array.shape != (count, dof) for array in fields):
        return False
    return all(np.isfinite(array).all() for array in [seconds, *fields])


def _increasing_nanoseconds(seconds: FloatArray) -> list[int] | None:
    """
    Return times in whole nanoseconds, rounded as :func:`duration_parts` rounds them.

    Plain floats and ints: a chunk has a few to a few tens of points, where numpy's call cost
    is the whole cost (``round`` rounds half to even, as ``np.rint``).

    :param seconds: Finite times, shape (k,) [s].
    :return: The times [ns], or None unless every time is in [0, 2^31 - 1] s and they are > 0
        and strictly increasing in nanoseconds.
    """
    nanoseconds: list[int] = []
    previous = 0
    for when in seconds.tolist():
        if not 0.0 <= when <= _MAX_SECONDS:
            return None
        value = _whole_nanoseconds(when)  # as duration_parts rounds it
        if value <= previous:  # the first > 0, then strictly increasing
            return None
        nanoseconds.append(value)
        previous = value
    return nanoseconds


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


def sent_time(seconds: float) -> float:
    """
    Return a time as a message carries it: whole seconds, then nanoseconds rounded.

    :param seconds: A ``time_from_start`` (or a stamp) >= 0 [s].
    :return: The time the controller reads from the message [s] (:func:`duration_parts`, as
        :class:`TrajectoryChunk` rounds its ``times_ns``).
    """
    whole, nanoseconds = duration_parts(seconds)
    return whole + nanoseconds / _NANOSECONDS


def at_sent_times(
    times: FloatArray, positions: FloatArray, velocities: FloatArray, accelerations: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """
    Return planned states as points at the times the controller will read (:func:`sent_time`).

    Each state is carried along its own motion over the rounding (under half a nanosecond:
    ``q + v dt + a dt^2 / 2``, ``v + a dt``; the jerk's share is below 1e-6 rad/s^2). A point
    left at its state of half a nanosecond away is that far off its neighbours: over a segment of
    some microseconds, which close jerk switches of different joints make, the controller's
    quintic turns it into an acceleration tens of rad/s^2 off, and a chunk arriving there does
    not continue the command it repeats. A state already at a whole nanosecond is kept as it is.

    :param times: ``time_from_start`` of the states, shape (k,) [s], in [0, 2^31 - 1].
    :param positions: Positions, shape (k, n).
    :param velocities: Velocities, shape (k, n).
    :param accelerations: Accelerations, shape (k, n).
    :return: The sent times (k,) and the positions, velocities and accelerations there.
    """
    whole = np.floor(times)  # as duration_parts: whole seconds, then the nanoseconds rounded
    moved = whole + np.rint((times - whole) * _NANOSECONDS) / _NANOSECONDS
    shift = (moved - times)[:, None]
    same = shift == 0.0
    carried_q = positions + shift * velocities + (0.5 * shift * shift) * accelerations
    carried_v = velocities + shift * accelerations
    return (
        moved, np.where(same, positions, carried_q), np.where(same, velocities, carried_v),
        accelerations,
    )


def _bridge_kept(sent: list[float]) -> list[int]:
    """Return which bridge states stay: of two closer than MIN_POINT_GAP, the later."""
    kept: list[int] = []
    for index, when in enumerate(sent):
        if kept and when - sent[kept[-1]] < MIN_POINT_GAP:
            kept.pop()
        kept.append(index)
    return kept


def _state_rows(states: Sequence[PlannedState]) -> tuple[FloatArray, ...]:
    """Stack planned states: times (k,), positions, velocities and accelerations (k, n)."""
    return tuple(
        np.array([state[field] for state in states], dtype=float) for field in range(4)
    )


def _plan_times(lead: float, offset: float, wanted: Sequence[float]) -> list[float]:
    """
    Return the times of a chunk's plan points, as sent (:func:`sent_time`), increasing.

    :param lead: The last point's time after the plan's start [s].
    :param offset: The plan's start after the stamp [s].
    :param wanted: Other times after the plan's start, first wanted first [s]: each is kept
        unless it is outside [MIN_POINT_GAP, lead) or, as sent, within MIN_POINT_GAP of a
        time kept before it.
    :return: Times after the plan's start [s], the lead last.
    """
    def sent(when: float) -> float:  # a plan time, moved to where the controller will put it
        return sent_time(offset + when) - offset

    times = [sent(lead)]  # kept sorted
    for when in wanted:
        if not MIN_POINT_GAP <= when < lead:
            continue
        when = sent(when)
        index = bisect.bisect_left(times, when)
        if (index == 0 or when - times[index - 1] >= MIN_POINT_GAP) and (
            index == len(times) or times[index] - when >= MIN_POINT_GAP
        ):
            times.insert(index, when)
    return times


def planned_chunk(
    joint_names: Sequence[str],
    plan: Callable[[float], tuple[FloatArray, FloatArray, FloatArray]],
    lead_time: float,
    breakpoints: Sequence[float] = (),
    spacing: float = POINT_SPACING,
    stamp: float = 0.0,
    start_point: bool = False,
    bridge: Sequence[PlannedState] = (),
    tail: Sequence[PlannedState] = (),
    hold_until: float = 0.0,
    plan_many: Callable[
        [Sequence[float]], tuple[FloatArray, FloatArray, FloatArray]
    ] | None = None,
) -> TrajectoryChunk:
    """
    Build the chunk that streams a planned trajectory up to ``lead_time`` ahead.

    Points at ``lead_time``, at the plan's ``breakpoints`` and every ``spacing`` seconds, but
    none within :data:`MIN_POINT_GAP` of another (the earlier kind wins), each with the planned
    positions, velocities and accelerations at that time. Every time is the one the message
    will carry (:func:`sent_time`): the plan is sampled there, and the bridge's and the tail's
    states are carried to it (:func:`at_sent_times`).

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
        there (with ``start_point`` false: the bridge ends on the plan's start). Of two states
        closer than :data:`MIN_POINT_GAP` only the later is kept.
    :param tail: States after the plan: how its state at ``lead_time`` brakes to rest
        (:meth:`~pic_ros.motion.generator.JerkLimitedGenerator.stopping`), times after that
        state, the first (the state itself, at 0) left out; the last is at rest.
    :param hold_until: A last point, the tail's rest again, at this ``time_from_start`` [s]
        when it is later than the tail's end by :data:`MIN_POINT_GAP` or more (0: none).
    :param plan_many: ``plan`` at several times at once (rows of positions, velocities and
        accelerations: the same states, fewer calls), or None.
    :return: The validated chunk (:attr:`TrajectoryChunk.end` at the plan's last point,
        :attr:`TrajectoryChunk.stop` at the tail's).
    :raises ConfigError: If the names, the planned states, the lead time or the stamp are
        invalid.
    """
    offset = float(bridge[-1][0]) if bridge else 0.0
    lead = float(LEAD_TIME.check(lead_time))
    step = check_number('spacing', spacing, 1e-4, 1.0)
    grid = [step * index for index in range(1, math.ceil(lead / step - 1e-9))]
    starts = [MIN_POINT_GAP] if start_point else []
    # the start point, then the plan's own breakpoints, then the grid
    times = _plan_times(lead, offset, starts + [float(t) for t in breakpoints] + grid)
    dof = len(joint_names)
    parts: list[tuple[FloatArray, ...]] = []
    if bridge:  # of two states closer than MIN_POINT_GAP the later stays
        rows = _state_rows(bridge)
        carried = at_sent_times(*rows)
        kept = _bridge_kept(carried[0].tolist())
        parts.append(tuple(array[kept] for array in carried))
    bridged = len(parts[0][0]) if parts else 0
    if plan_many is not None:
        parts.append((offset + np.array(times), *plan_many(times)))
    else:
        states = [plan(when) for when in times]
        parts.append((
            offset + np.array(times),
            *(np.array([state[k] for state in states], dtype=float) for k in range(3)),
        ))
    end = bridged + len(times) - 1
    if len(tail) > 1:
        rows = _state_rows(tail[1:])
        parts.append(at_sent_times((offset + lead) + rows[0], *rows[1:]))
    stop = end + max(len(tail) - 1, 0)
    last_time = float(parts[-1][0][-1])
    if hold_until >= last_time + MIN_POINT_GAP:
        zero = np.zeros((1, dof))
        parts.append((np.array([hold_until]), parts[-1][1][-1:], zero, zero))
    times_all, positions, velocities, accelerations = (
        np.concatenate([part[k] for part in parts]) for k in range(4)
    )
    return TrajectoryChunk.from_arrays(
        joint_names, times_all, positions, velocities, accelerations, stamp=stamp,
        start=max(bridged - 1, 0), end=end, stop=stop,
    )


CONTINUITY_TOLERANCE: Final = 1e-3
"""
Relative slack of the continuity check (:func:`segment_peaks`): a ratio up to ``1 + 1e-3`` of a
limit passes. It covers rounding only -- the times sent are whole nanoseconds, each point's
state carried to its sent time (:func:`at_sent_times`), and ruckig's states are exact to about
1e-12 -- while the planned motion keeps ``limit_headroom`` (5 %) below the limits.
"""


@dataclass(frozen=True)
class SegmentPeaks:
    """
    What consecutive states of a trajectory imply, as shares of the limits (:func:`segment_peaks`).

    :param velocity: Largest ``|q1 - q0| / h`` and ``|v|`` over the pairs and points, as a share
        of the velocity limits.
    :param acceleration: Largest ``|v1 - v0| / h`` and ``|a|``, as a share of the acceleration
        limits.
    :param jerk: Largest ``|a1 - a0| / h``, as a share of the jerk limits (0 without
        accelerations or jerk limits).
    :param pairs: Consecutive pairs checked.
    :param violations: Pairs (a pair with a point of its own beyond a limit counts) beyond a
        limit by more than the tolerance.
    :param ran_out: Chunks that ended moving before the next one began (the controller then
        holds the last point: a step in velocity); :class:`ContinuityMonitor` only.
    :param where: The worst pair, readably (empty when none was checked).
    """

    velocity: float = 0.0
    acceleration: float = 0.0
    jerk: float = 0.0
    pairs: int = 0
    violations: int = 0
    ran_out: int = 0
    where: str = ''

    @property
    def peak(self) -> float:
        """Return the largest of the three shares."""
        return max(self.velocity, self.acceleration, self.jerk)

    def merged(self, other: SegmentPeaks) -> SegmentPeaks:
        """Return the peaks and counts of both (the worst ``where``)."""
        worst = self if self.peak >= other.peak else other
        return SegmentPeaks(
            max(self.velocity, other.velocity), max(self.acceleration, other.acceleration),
            max(self.jerk, other.jerk), self.pairs + other.pairs,
            self.violations + other.violations, self.ran_out + other.ran_out, worst.where,
        )


class LimitsLike(Protocol):
    """The limits :func:`segment_peaks` reads (a :class:`~pic_ros.motion.limiter.MotionLimits`)."""

    @property
    def velocity(self) -> FloatArray:
        """Return the velocity limits, shape (n,)."""
        ...

    @property
    def acceleration(self) -> FloatArray:
        """Return the acceleration limits, shape (n,)."""
        ...

    @property
    def jerk(self) -> FloatArray | None:
        """Return the jerk limits, shape (n,), or None."""
        ...


def segment_peaks(
    states: Sequence[tuple[float, npt.ArrayLike, npt.ArrayLike | None, npt.ArrayLike | None]],
    limits: LimitsLike,
    tolerance: float = CONTINUITY_TOLERANCE,
) -> SegmentPeaks:
    """
    Check consecutive states of a trajectory against velocity, acceleration and jerk limits.

    The check, per joint, for each pair of consecutive states ``(t0, q0, v0, a0)``,
    ``(t1, q1, v1, a1)`` with ``h = t1 - t0``::

        |q1 - q0| / h <= v_max,   |v1 - v0| / h <= a_max,   |a1 - a0| / h <= j_max

    and for every state ``|v| <= v_max`` and ``|a| <= a_max``. These are the mean velocity,
    acceleration and jerk over the pair: any motion through the two states -- the controller's
    spline between them -- reaches at least them somewhere, so a pair beyond a limit is a command
    the controller cannot follow within it. A state without velocities skips the terms that need
    them (and so for accelerations); no jerk limits, no jerk term. ``h <= 0`` between different
    states is an infinite ratio (a jump); repeated identical states are skipped.

    :param states: ``(time [s], positions, velocities or None, accelerations or None)`` in
        increasing time.
    :param limits: The limits (velocity and acceleration, shape (n,); jerk or None).
    :param tolerance: Relative slack: a share up to ``1 + tolerance`` passes
        (:data:`CONTINUITY_TOLERANCE`).
    :return: The peaks and the number of pairs beyond a limit.
    """
    if not states:
        return SegmentPeaks()
    return _peaks(_track(states), limits, tolerance)


_Track = tuple[FloatArray, FloatArray, FloatArray | None, FloatArray | None]
"""States as arrays: times (k,), positions (k, n), velocities and accelerations (k, n) or None."""


def _track(states: Sequence[Sequence[Any]]) -> _Track:
    """Return states as arrays (velocities or accelerations None unless every state has them)."""
    times = np.array([float(state[0]) for state in states])
    q = np.array([np.asarray(state[1], dtype=float) for state in states])
    have_v = all(state[2] is not None for state in states)
    have_a = have_v and all(state[3] is not None for state in states)
    v = np.array([np.asarray(state[2], dtype=float) for state in states]) if have_v else None
    a = np.array([np.asarray(state[3], dtype=float) for state in states]) if have_a else None
    return times, q, v, a


def _peaks(track: _Track, limits: LimitsLike, tolerance: float) -> SegmentPeaks:
    """Do :func:`segment_peaks` on states as arrays (:mod:`~pic_ros.motion.peak_shares`)."""
    times, q, v, a = track
    velocity, acceleration, jerk, violations, index, *shares = peak_shares(
        times, q, v, a, (limits.velocity, limits.acceleration, limits.jerk), tolerance
    )
    kind = ('velocity', 'acceleration', 'jerk')[int(np.argmax(shares))]
    span_text = f'{times[index]:.6f} s' if times.size == 1 else (
        f'{times[index]:.6f} -> {times[index + 1]:.6f} s'
    )
    return SegmentPeaks(
        velocity=velocity,
        acceleration=acceleration,
        jerk=jerk,
        pairs=times.size - 1,
        violations=violations,
        where=f'{kind} {max(shares):.3g} x its limit at {span_text}',
    )


def _chunk_track(chunk: TrajectoryChunk, start: float) -> _Track:
    """Return a chunk's points as arrays, absolute times."""
    times, q, v, a = chunk.arrays()
    return start + times, q, v, a


JUMP_TOLERANCE: Final = (1e-6, 1e-4, 1e-2)
"""
Largest difference between the command a controller is on and a new chunk's state at the
moment it takes over, for the two to count as the same state: position [rad], velocity [rad/s],
acceleration [rad/s^2] (a chunk that repeats the trajectory it replaces up to there; rounding
only). A larger one is a jump (:class:`ContinuityMonitor`); the simulated controller uses the
same figures (:data:`pic_ros_tools.sim.trajectory.CONTINUITY`).
"""

State = tuple[float, FloatArray, FloatArray | None, FloatArray | None]
"""A state on a trajectory: ``(time [s], positions, velocities, accelerations)`` (None: not
carried)."""


class ContinuityMonitor:
    """
    Check a stream of chunks as joint_trajectory_controller takes them: every point and seam.

    A chunk takes over when it arrives, from the command the controller is on then (the
    previous chunk's trajectory at that moment, interpolated as the controller interpolates it;
    after its last point, that point held at rest). Arriving before its first point, the chunk
    is joined from that command to its first point; arriving after it, the controller samples
    the chunk where it is (a jump, counted as a violation, unless the two states agree within
    :data:`JUMP_TOLERANCE`). :func:`segment_peaks` then checks the joined takeover state and
    the chunk's points after it, or for a chunk taken where it is, its points from the one
    before the takeover (the segment the controller is in, whole: a part of it would measure
    how the interpolation bends between two points rather than the chunk). A previous chunk
    that ended moving before the new one arrived left the controller holding its last point: a
    step in velocity, counted as :attr:`SegmentPeaks.ran_out`.

    :param limits: The limits the stream must keep.
    :param tolerance: Relative slack (:data:`CONTINUITY_TOLERANCE`).
    """

    def __init__(self, limits: LimitsLike, tolerance: float = CONTINUITY_TOLERANCE) -> None:
        self.limits = limits
        self.tolerance = tolerance
        peak_shares_load()  # compiled (or read from numba's cache) now, not in the first check
        self._previous: _Track | None = None
        self.total = SegmentPeaks()
        self.chunks = 0

    def reset(self) -> None:
        """Forget the previous chunk (the controller was restarted or reset)."""
        self._previous = None

    def add(self, chunk: TrajectoryChunk, arrival: float) -> SegmentPeaks:
        """
        Check one chunk and its seam with the command it replaces.

        :param chunk: The chunk.
        :param arrival: When the controller takes it [s] (its ``time_from_start`` count from
            its stamp, or from this for a chunk stamped 0).
        :return: This chunk's peaks (also merged into :attr:`total`).
        """
        track = _chunk_track(chunk, chunk.stamp if chunk.stamp > 0.0 else arrival)
        ran_out = False
        jumped = ''
        previous = self._previous
        if previous is not None:
            end = previous[0].size - 1
            ran_out = arrival > previous[0][end] and _moving_at(previous, end)
            current = _track_at(previous, arrival)
            times, q, v, a = track
            if arrival < times[0] - 1e-9:
                track = _prepend(track, arrival, current)
            else:  # the controller samples the chunk where it is
                taken = _track_at(track, arrival)
                if not _same_state(current, taken):
                    jumped = f'jump at {arrival:.6f} s'
                # checked from its point before the arrival: the segment the controller is in,
                # whole (a part of it would measure how the interpolation bends between two
                # points, not the chunk)
                first = max(int(np.searchsorted(times, arrival + 1e-9, side='right')) - 1, 0)
                track = (times[first:], q[first:], None if v is None else v[first:],
                         None if a is None else a[first:])
        peaks = _peaks(track, self.limits, self.tolerance)
        if ran_out or jumped:
            peaks = SegmentPeaks(
                peaks.velocity, peaks.acceleration, peaks.jerk, peaks.pairs,
                peaks.violations + int(bool(jumped)), int(ran_out),
                jumped or ('ran out moving' if not peaks.violations else peaks.where),
            )
        self._previous = track
        self.total = self.total.merged(peaks)
        self.chunks += 1
        return peaks


def _moving_at(track: _Track, index: int) -> bool:
    """Return whether a state of a track has a non-zero velocity or acceleration."""
    _, _, v, a = track
    return bool(
        (v is not None and np.any(v[index] != 0.0)) or (a is not None and np.any(a[index] != 0.0))
    )


def _prepend(
    track: _Track, when: float, state: tuple[FloatArray, FloatArray, FloatArray]
) -> _Track:
    """Return a track with a state put first (velocities, accelerations kept where carried)."""
    times, q, v, a = track
    return (
        np.concatenate(([when], times)), np.vstack((state[0], q)),
        None if v is None else np.vstack((state[1], v)),
        None if a is None else np.vstack((state[2], a)),
    )


def _same_state(
    first: tuple[FloatArray, FloatArray, FloatArray],
    second: tuple[FloatArray, FloatArray, FloatArray],
) -> bool:
    """Return whether two states agree within :data:`JUMP_TOLERANCE`."""
    return all(
        not np.any(np.abs(one - two) > bound)
        for one, two, bound in zip(first, second, JUMP_TOLERANCE)
    )


def _track_at(track: _Track, when: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`state_at` on a track (zeros for what it does not carry)."""
    times, q, v, a = track
    zero = np.zeros(q.shape[1])
    index = int(np.searchsorted(times, when, side='right')) - 1
    if index < 0:
        index = 0
    last = times.size - 1
    if index >= last:
        moving = when > times[last]
        return (
            q[last], zero if v is None or moving else v[last],
            zero if a is None or moving else a[last],
        )

    def row(values: FloatArray | None, at: int) -> FloatArray | None:
        return None if values is None else values[at]

    return state_at(
        [(times[index], q[index], row(v, index), row(a, index)),
         (times[index + 1], q[index + 1], row(v, index + 1), row(a, index + 1))],
        float(when),
    )


class Interpolation(enum.Enum):
    """How one segment between two knots is interpolated."""

    LINEAR = 'linear'
    CUBIC = 'cubic'
    QUINTIC = 'quintic'


def segment_state(
    kind: Interpolation,
    duration: float,
    elapsed: float,
    start: tuple[FloatArray, FloatArray, FloatArray],
    end: tuple[FloatArray, FloatArray, FloatArray],
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """
    Evaluate one interpolated segment (the polynomials JTC uses).

    The quintic, which the commander and the simulated controller evaluate most, is a
    plain-float loop compiled when numba is installed (and ``PIC_ROS_JIT`` is not ``0``;
    :func:`pic_ros.robot.kinematics.compiled.compiler`): about 4 us instead of some forty numpy
    calls on arrays of a few joints. Both paths give the same floats (the same operations in the
    same order, the powers of the times taken once; tested).

    :param kind: Linear (positions), cubic Hermite (positions, velocities) or quintic (positions,
        velocities, accelerations).
    :param duration: Segment duration ``T`` > 0 [s].
    :param elapsed: Time since the segment start, in ``[0, T]`` [s].
    :param start: Position, velocity, acceleration at the start, each shape (n,).
    :param end: Position, velocity, acceleration at the end, each shape (n,).
    :return: Position, velocity and acceleration at ``elapsed``, each shape (n,).
    """
    p0, v0, a0 = start
    p1, v1, a1 = end
    T = duration
    t = elapsed
    if kind is Interpolation.LINEAR:
        slope = (p1 - p0) / T
        return p0 + slope * t, slope, np.zeros_like(p0)
    if kind is Interpolation.CUBIC:
        s = t / T
        h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, \
            s**3 - s**2
        position = h00 * p0 + h10 * T * v0 + h01 * p1 + h11 * T * v1
        velocity = ((6 * s**2 - 6 * s) * (p0 - p1) / T + (3 * s**2 - 4 * s + 1) * v0
                    + (3 * s**2 - 2 * s) * v1)
        acceleration = ((12 * s - 6) * (p0 - p1) / T**2 + (6 * s - 4) * v0 / T
                        + (6 * s - 2) * v1 / T)
        return position, velocity, acceleration
    rows = np.array((p0, v0, a0, p1, v1, a1), dtype=float)  # one kernel signature, whatever came
    powers = (T**2, T**3, T**4, T**5, t**2, t**3, t**4, t**5)  # as the numpy path takes them
    return _quintic()(rows, float(T), float(t), powers)  # type: ignore[no-any-return]


def _quintic_numpy(
    rows: FloatArray, T: float, t: float, powers: tuple[float, ...]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """
    Return the quintic segment's state at ``t`` with numpy (:func:`segment_state`).

    :param rows: ``p0, v0, a0, p1, v1, a1``, shape (6, n).
    :param T: The segment's duration [s].
    :param t: The time into it [s].
    :param powers: ``T**2`` to ``T**5``, then ``t**2`` to ``t**5``.
    :return: Position, velocity and acceleration, each shape (n,).
    """
    p0, v0, a0, p1, v1, a1 = rows
    T2, T3, T4, T5, t2, t3, t4, t5 = powers
    c3 = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T2) / (2 * T3)
    c4 = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T2) / (2 * T4)
    c5 = (12 * (p1 - p0) - 6 * (v1 + v0) * T - (a0 - a1) * T2) / (2 * T5)
    position = p0 + v0 * t + a0 / 2 * t2 + c3 * t3 + c4 * t4 + c5 * t5
    velocity = v0 + a0 * t + 3 * c3 * t2 + 4 * c4 * t3 + 5 * c5 * t4
    acceleration = a0 + 6 * c3 * t + 12 * c4 * t2 + 20 * c5 * t3
    return position, velocity, acceleration


def _quintic_loops(
    rows: FloatArray, T: float, t: float, powers: tuple[float, ...]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return :func:`_quintic_numpy` joint by joint in plain floats (compiled by numba)."""
    p0, v0, a0, p1, v1, a1 = rows[0], rows[1], rows[2], rows[3], rows[4], rows[5]
    T2, T3, T4, T5, t2, t3, t4, t5 = powers
    count = rows.shape[1]
    position = np.empty(count)
    velocity = np.empty(count)
    acceleration = np.empty(count)
    for k in range(count):  # each operation of the numpy path, in its order
        c3 = (
            20.0 * (p1[k] - p0[k]) - (8.0 * v1[k] + 12.0 * v0[k]) * T
            - (3.0 * a0[k] - a1[k]) * T2
        ) / (2.0 * T3)
        c4 = (
            30.0 * (p0[k] - p1[k]) + (14.0 * v1[k] + 16.0 * v0[k]) * T
            + (3.0 * a0[k] - 2.0 * a1[k]) * T2
        ) / (2.0 * T4)
        c5 = (
            12.0 * (p1[k] - p0[k]) - 6.0 * (v1[k] + v0[k]) * T - (a0[k] - a1[k]) * T2
        ) / (2.0 * T5)
        position[k] = p0[k] + v0[k] * t + a0[k] / 2.0 * t2 + c3 * t3 + c4 * t4 + c5 * t5
        velocity[k] = v0[k] + a0[k] * t + 3.0 * c3 * t2 + 4.0 * c4 * t3 + 5.0 * c5 * t4
        acceleration[k] = a0[k] + 6.0 * c3 * t + 12.0 * c4 * t2 + 20.0 * c5 * t3
    return position, velocity, acceleration


_QUINTIC = Kernel(_quintic_numpy, _quintic_loops)


def _quintic() -> Any:
    """Return the quintic's evaluation, compiled on the first call when numba is there."""
    return _QUINTIC.function()


def load_segments() -> None:
    """Compile :func:`segment_state`'s quintic (or read it from numba's cache), the first time."""
    if not _QUINTIC.loaded:
        ones = np.ones(1)
        segment_state(Interpolation.QUINTIC, 1.0, 0.5, (ones, ones, ones), (ones, ones, ones))


def state_at(
    states: Sequence[PlannedState] | Sequence[State], when: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """
    Return the state a controller commands at a time on a trajectory given by its states.

    Between consecutive states as joint_trajectory_controller interpolates them: quintic when
    both carry accelerations, cubic with velocities only, linear with positions only -- exact
    on a plan whose jerk changes only at its states. Before the first state, the first; after
    the last, its positions at rest (the controller holds its last point).

    :param states: ``(time [s], positions, velocities, accelerations)``, increasing times
        (velocities or accelerations may be None).
    :param when: The time [s].
    :return: Positions, velocities and accelerations, each shape (n,) (zeros for what the
        states do not carry).
    """
    if when <= states[0][0]:
        return _filled(states[0])
    if when >= states[-1][0]:
        position, velocity, acceleration = _filled(states[-1])
        if when == states[-1][0]:
            return position, velocity, acceleration
        zero = np.zeros_like(position)
        return position, zero, zero
    index = bisect.bisect_right([state[0] for state in states], when) - 1
    p0, v0, a0 = _filled(states[index])
    p1, v1, a1 = _filled(states[index + 1])
    T = float(states[index + 1][0]) - float(states[index][0])
    t = when - float(states[index][0])
    if states[index][2] is None or states[index + 1][2] is None:
        kind = Interpolation.LINEAR
    elif states[index][3] is None or states[index + 1][3] is None:
        kind = Interpolation.CUBIC
    else:
        kind = Interpolation.QUINTIC
    return segment_state(kind, T, t, (p0, v0, a0), (p1, v1, a1))


def _filled(state: Sequence[Any]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return a state's arrays with zeros for missing velocities or accelerations."""
    position = np.asarray(state[1], dtype=float)
    zero = np.zeros_like(position)
    velocity = zero if state[2] is None else np.asarray(state[2], dtype=float)
    acceleration = zero if state[3] is None else np.asarray(state[3], dtype=float)
    return position, velocity, acceleration
