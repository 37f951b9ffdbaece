"""
A joint trajectory follower with the topic semantics of ros2_control's joint_trajectory_controller.

:class:`TrajectoryFollower` is the command side of one simulated JTC (one arm controller): it takes
:class:`Trajectory` values (the fields of a ``trajectory_msgs/JointTrajectory`` without ROS types),
checks them the way JTC's ``validate_trajectory_msg`` does and answers with a :class:`Verdict`
(accepted, or rejected with a :class:`TrajectoryStatus` and a readable reason), and gives the
commanded state at any time with :meth:`TrajectoryFollower.sample`. No exception is raised for a
bad trajectory: a controller logs it and keeps doing what it did.

Semantics (``docs/interfaces.md#ros2_control``), those of ros2_controllers'
joint_trajectory_controller as released for Humble (2.54.0), Jazzy (4.42.1) and Kilted (5.17.0),
whose rules below are the same in all three (and on the master branch, 6.9.0), unless said
otherwise:

* Times are seconds on the follower's clock (the simulation clock). **Stamp 0 starts the
  trajectory on arrival**: JTC's ``Trajectory::sample`` takes the time of the first control
  update that samples it as the start when ``header.stamp`` is 0, so ``time_from_start`` counts
  from then (here: from the arrival, the simulation's update). **A non-zero stamp is the start
  time**, and ``validate_trajectory_msg`` rejects, on reception, a trajectory whose end -- stamp
  plus the *last* point's ``time_from_start`` -- is before the controller's clock (``ends in
  the past``); a stamped trajectory that has not ended is accepted however late it is. The same
  rule here: rejected when ``stamp + times[-1] < now``, accepted otherwise (the trajectory
  publisher keeps the last point of a moving chunk ``LATE_WINDOW`` after its stamp and stamps a
  chunk that holds still 0, so that a late chunk is taken: :mod:`pic_ros.motion.streaming`). A
  future stamp does *not* delay the motion: as in JTC the first segment runs from the current
  state at arrival to the first point.
* A new trajectory replaces the old one at once ("the current implementation just forgets the old
  trajectory"). It starts from the **commanded** state at arrival (position, velocity and
  acceleration of the old command: JTC's ``interpolate_from_desired_state`` / open-loop mode,
  which keeps streamed trajectories smooth), not from the measured state.
* Joints are matched by name: a trajectory may name them in any order, must name every joint of
  the controller (``allow_partial_joints_goal`` false), no unknown and no repeated name.
* Points: at least one; ``time_from_start`` >= 0 and strictly increasing; ``positions`` one per
  joint; ``velocities`` and ``accelerations`` empty or one per joint; ``effort`` must be empty;
  every value finite. With ``allow_nonzero_velocity_at_trajectory_end`` false (Jazzy's default)
  the last point's velocities must be zero; the default here is true (Humble's default, and what
  streaming with velocities needs).
* Interpolation per segment, from what both ends carry: positions only -> linear (velocity steps
  at the points); positions + velocities -> cubic Hermite; + accelerations -> quintic. The
  current state always carries all three, so the first segment is linear when the first point
  has positions only. Accelerations without velocities are ignored (linear).
* **Late trajectories are joined, never jumped to** (here the follower departs from JTC, whose
  command jumps to the new trajectory's state at the arrival when its first point is already
  due): the points due at or before the arrival, and then also those due less than
  :data:`JOIN_TIME` after it, are left out (the last point is always kept), and the first
  segment runs from the current command to the first point kept, as for a trajectory whose
  first point is ahead (which is followed point by point, as before). A
  streamed chunk that reaches the controller after its first point (transport delay) then
  continues the command with no step in position, velocity or acceleration (when its points
  carry them), and rejoins the plan at most ``JOIN_TIME`` plus one point spacing later. Only a
  trajectory whose last point is due on arrival makes the command jump (to that point).
* After the last point the follower holds its positions with zero velocity (JTC keeps publishing
  the last point; for a position-controlled joint that is the same hold).

Position limits: JTC does not reject points outside the URDF limits. Here such points are accepted
and **clamped** into ``[lower, upper]``, and the number of clamped points is reported in the
verdict and in :attr:`TrajectoryFollower.stats`; every sample is clamped too (a cubic can
overshoot between points inside the limits), with zero velocity and acceleration on a joint held
at a limit by the clamp. So the commanded position never leaves the limits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
import enum
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion import peak_shares
from pic_ros.motion.streaming import (
    Interpolation,
    JUMP_TOLERANCE,
    LimitsLike,
    segment_peaks,
    SegmentPeaks,
)
from pic_ros.schema import ParameterDef
from pic_ros_tools.sim import plan_state
from pic_ros_tools.sim.plan_state import interpolation, plan_state_into, segment_codes

FloatArray = npt.NDArray[np.float64]

_TIME_EPSILON = 1e-9
"""Times closer than this are equal [s] (one nanosecond, the resolution of a ROS duration)."""

JOIN_TIME: Final = 0.01
"""Shortest first segment of a late trajectory (its first point due on arrival) [s]: its
points due sooner after the arrival are left out (except the last), so that the segment that
joins the current command to the trajectory cannot be so short that a small difference between
the two becomes a large acceleration."""


CONTINUITY: Final = JUMP_TOLERANCE
"""
Largest difference between a late trajectory's state at its arrival and the current command for
the trajectory to be followed as it is, in position [rad], velocity [rad/s] and acceleration
[rad/s^2]: it continues the command (a streamed chunk that repeats, up to where it changes, the
plan the command is on). A larger difference is joined (:data:`JOIN_TIME`).
"""


DELAY_WINDOW: Final = 1000
"""Stamped trajectories whose delay :class:`FollowerStats` keeps for its percentiles (the
latest: about half a minute of a stream of 30 to 50 trajectories a second)."""


class TrajectoryStatus(enum.Enum):
    """Outcome of giving a trajectory to a :class:`TrajectoryFollower`."""

    ACCEPTED = 'accepted'
    EMPTY_JOINT_NAMES = 'empty_joint_names'
    DUPLICATE_JOINT = 'duplicate_joint'
    UNKNOWN_JOINT = 'unknown_joint'
    MISSING_JOINT = 'missing_joint'
    EMPTY_POINTS = 'empty_points'
    SIZE_MISMATCH = 'size_mismatch'
    EFFORT_NOT_SUPPORTED = 'effort_not_supported'
    NOT_FINITE = 'not_finite'
    TIME_NOT_INCREASING = 'time_not_increasing'
    IN_THE_PAST = 'in_the_past'
    NONZERO_END_VELOCITY = 'nonzero_end_velocity'


@dataclass(frozen=True)
class Waypoint:
    """
    One point of a trajectory, as received (checked by the follower, not here).

    :param time_from_start: Time of the point after the trajectory's start [s].
    :param positions: Joint positions in the trajectory's joint order [rad] or [m].
    :param velocities: Joint velocities [rad/s] or [m/s], empty or one per joint.
    :param accelerations: Joint accelerations [rad/s^2] or [m/s^2], empty or one per joint.
    :param effort: Joint efforts; must be empty (JTC rejects them on its topic).
    """

    time_from_start: float
    positions: Sequence[float]
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()
    effort: Sequence[float] = ()


@dataclass(frozen=True)
class Trajectory:
    """
    A joint trajectory as received on ``<controller>/joint_trajectory``, without ROS types.

    :param joint_names: Joint names, the order of every point's arrays.
    :param points: The points.
    :param stamp: Start time on the follower's clock [s]; 0 means "start now".
    """

    joint_names: Sequence[str]
    points: Sequence[Waypoint]
    stamp: float = 0.0


@dataclass(frozen=True)
class Verdict:
    """
    The follower's answer to a trajectory.

    :param status: ``ACCEPTED`` or the rejection reason.
    :param detail: A readable explanation (names the joint, point or value at fault).
    :param clamped_points: Accepted points that had a position outside the limits (clamped).
    """

    status: TrajectoryStatus
    detail: str = ''
    clamped_points: int = 0

    @property
    def accepted(self) -> bool:
        """Return whether the trajectory replaced the previous one."""
        return self.status is TrajectoryStatus.ACCEPTED


@dataclass(frozen=True)
class JointCommand:
    """
    The commanded state of a controller's joints at one time, in the controller's joint order.

    :param positions: Commanded positions, shape (n,), [rad] or [m], inside the limits.
    :param velocities: Commanded velocities, shape (n,), [rad/s] or [m/s].
    :param accelerations: Commanded accelerations, shape (n,), [rad/s^2] or [m/s^2].
    :param moving: Whether a trajectory is being followed (False while holding).
    """

    positions: FloatArray
    velocities: FloatArray
    accelerations: FloatArray
    moving: bool


ALLOW_NONZERO_VELOCITY_AT_END: Final = ParameterDef(
    'allow_nonzero_velocity_at_trajectory_end', True,
    "Accept trajectories whose last point moves (the trajectory controller's parameter; "
    'true on Humble)', read_only=True,
)


@dataclass(frozen=True)
class FollowerConfig:
    """
    Options of the follower (names as in JTC's parameters).

    :param allow_nonzero_velocity_at_trajectory_end: Accept a last point with non-zero
        velocities (JTC default: true on Humble, false on Jazzy and later).
    """

    allow_nonzero_velocity_at_trajectory_end: bool = ALLOW_NONZERO_VELOCITY_AT_END.default

    def __post_init__(self) -> None:
        if not isinstance(self.allow_nonzero_velocity_at_trajectory_end, bool):
            raise ConfigError(
                'allow_nonzero_velocity_at_trajectory_end must be a bool, got '
                f'{self.allow_nonzero_velocity_at_trajectory_end!r}'
            )


@dataclass
class FollowerStats:
    """
    Counters of one follower since it was made.

    :param accepted: Trajectories accepted.
    :param rejected: Trajectories rejected, all reasons.
    :param clamped_points: Accepted points clamped into the position limits.
    :param rejections: Rejected trajectories per reason.
    :param last_rejection: The most recent rejection (``None`` if none yet).
    :param late: Accepted trajectories whose first point was due on arrival.
    :param joined: Late ones that did not continue the command and were joined to it
        (:data:`JOIN_TIME`); the others were followed as they are.
    :param delays: Arrival minus ``header.stamp`` of the latest :data:`DELAY_WINDOW` accepted
        trajectories with a non-zero stamp [s]: transport and scheduling delay plus what the
        publisher put between its step and the stamp (pic_ros's trajectory publisher stamps a
        chunk with the point it repeats first, up to one point spacing before the step). A
        streamed chunk continues the command when it arrives less than ``plan_ahead`` after
        its step, and is joined when it arrives later.
    :param delay_max: The largest of all those delays since the follower was made [s] (NaN
        before the first).
    :param segment_violations: Accepted trajectories whose states as followed break the
        velocity, acceleration or jerk limits between two of them, or that the command jumps
        onto. As followed: a joined trajectory from the command at the arrival, then its points
        after it; a continued one from its point before the arrival (the segment the command is
        in, whole: a part of it would measure how the interpolation bends between two points),
        then the next ones
        (:func:`~pic_ros.motion.streaming.segment_peaks`; only with ``limits``).
    :param segment_peak: The largest share of a limit over them (0 before the first).
    :param join_delays: Arrival minus ``header.stamp`` of the stamped trajectories that were
        joined, the smallest and the largest [s] (NaN before the first): how late a chunk was
        when it found the controller past the part it repeats.
    :param join_peaks: What the joins as followed imply, merged over every joined trajectory
        (:class:`~pic_ros.motion.streaming.SegmentPeaks`: shares of the velocity, acceleration
        and jerk limits, the worst segment); only with ``limits``.
    :param last_join: The latest joined trajectory's delay [s] (NaN for stamp 0) and peaks.
    :param last_violation: The latest trajectory counted in :attr:`segment_violations`: its
        delay [s] (NaN for stamp 0), its peaks, and whether the command jumped onto it.
    """

    accepted: int = 0
    rejected: int = 0
    clamped_points: int = 0
    late: int = 0
    joined: int = 0
    rejections: dict[TrajectoryStatus, int] = field(default_factory=dict)
    last_rejection: Verdict | None = None
    delays: deque[float] = field(default_factory=lambda: deque(maxlen=DELAY_WINDOW))
    delay_max: float = math.nan
    segment_violations: int = 0
    segment_peak: float = 0.0
    join_delays: tuple[float, float] = (math.nan, math.nan)
    join_peaks: SegmentPeaks = field(default_factory=SegmentPeaks)
    last_join: tuple[float, SegmentPeaks] | None = None
    last_violation: tuple[float, SegmentPeaks, bool] | None = None

    def delay_ms(self, percentile: float) -> float:
        """
        Return a percentile of :attr:`delays` [ms] (NaN before any stamped trajectory).

        :param percentile: In [0, 100].
        :return: Milliseconds.
        """
        if not self.delays:
            return math.nan
        return float(np.percentile(np.fromiter(self.delays, float), percentile) * 1e3)


@dataclass(frozen=True, eq=False)
class _Plan:
    """Knots of the active trajectory in the follower's joint order (absolute times [s])."""

    times: FloatArray
    positions: FloatArray
    velocities: FloatArray
    accelerations: FloatArray
    has_velocity: tuple[bool, ...]
    has_acceleration: tuple[bool, ...]
    codes: npt.NDArray[np.int64]  # per segment (plan_state.segment_codes)


class _Rejected(Exception):
    """Internal: carries a rejection out of the checks."""

    def __init__(self, status: TrajectoryStatus, detail: str) -> None:
        super().__init__(detail)
        self.verdict = Verdict(status, detail)


def _row(values: Sequence[float], size: int, what: str, allow_empty: bool) -> FloatArray | None:
    """Check the size and finiteness of one point array; return it (None if empty and allowed)."""
    count = len(values)
    if count == 0 and allow_empty:
        return None
    if count != size:
        expected = f'0 or {size}' if allow_empty else str(size)
        raise _Rejected(
            TrajectoryStatus.SIZE_MISMATCH, f'{what} has {count} values, expected {expected}'
        )
    try:
        array = np.array([float(value) for value in values], dtype=float)
    except (TypeError, ValueError) as error:
        raise _Rejected(TrajectoryStatus.NOT_FINITE, f'{what} must be numbers: {error}') from error
    if not np.isfinite(array).all():
        raise _Rejected(TrajectoryStatus.NOT_FINITE, f'{what} has non-finite values: {values!r}')
    return array


def _checked_points(
    trajectory: Trajectory, size: int
) -> tuple[list[float], list[tuple[FloatArray, FloatArray | None, FloatArray | None]]]:
    """
    Return a trajectory's point times [s] and rows (positions, velocities, accelerations).

    :param trajectory: The trajectory, in its own joint order.
    :param size: How many joints each row must have.
    :raises _Rejected: If there is no point, a point has efforts or rows of the wrong size or
        non-finite values, or the times are not increasing from 0.
    """
    points = list(trajectory.points)
    if not points:
        raise _Rejected(TrajectoryStatus.EMPTY_POINTS, 'the trajectory has no point')
    checked = _checked_at_once(points, size)
    if checked is not None:
        return checked
    times: list[float] = []
    rows: list[tuple[FloatArray, FloatArray | None, FloatArray | None]] = []
    for index, point in enumerate(points):
        where = f'point {index}'
        if len(point.effort) != 0:
            raise _Rejected(TrajectoryStatus.EFFORT_NOT_SUPPORTED, f'{where} has effort values')
        positions = _row(point.positions, size, f'{where} positions', allow_empty=False)
        velocities = _row(point.velocities, size, f'{where} velocities', allow_empty=True)
        accelerations = _row(point.accelerations, size, f'{where} accelerations', allow_empty=True)
        time = float(point.time_from_start)
        if not math.isfinite(time):
            raise _Rejected(TrajectoryStatus.NOT_FINITE, f'{where} time_from_start is {time}')
        if time < 0.0 or (times and time <= times[-1]):
            raise _Rejected(
                TrajectoryStatus.TIME_NOT_INCREASING,
                'time_from_start must be >= 0 and strictly increasing, got '
                f'{[float(p.time_from_start) for p in points]}',
            )
        times.append(time)
        assert positions is not None
        rows.append((positions, velocities, accelerations))
    return times, rows


def _checked_at_once(
    points: Sequence[Waypoint], size: int
) -> tuple[list[float], list[tuple[FloatArray, FloatArray | None, FloatArray | None]]] | None:
    """
    Return :func:`_checked_points`'s answer for a well-formed trajectory, a field at a time.

    A streamed trajectory is well formed: every point has ``size`` positions, the same fields,
    no effort, finite values and increasing times. Anything else returns None, and the point
    by point checks name what is wrong.
    """
    if any(len(point.effort) != 0 or len(point.positions) != size for point in points):
        return None
    fields: list[FloatArray | None] = []
    for rows in (
        [point.velocities for point in points], [point.accelerations for point in points]
    ):
        counts = {len(row) for row in rows}
        if counts == {0}:
            fields.append(None)
            continue
        if counts != {size}:
            return None
        try:
            fields.append(np.array(rows, dtype=float))
        except (TypeError, ValueError):
            return None
    try:
        positions = np.array([point.positions for point in points], dtype=float)
        times = np.array([point.time_from_start for point in points], dtype=float)
    except (TypeError, ValueError):
        return None
    arrays = [positions, times, *(field for field in fields if field is not None)]
    if not all(np.isfinite(array).all() for array in arrays) or times[0] < 0.0 or (
        len(times) > 1 and not (np.diff(times) > 0.0).all()
    ):
        return None
    velocities, accelerations = fields
    return times.tolist(), [
        (
            positions[index],
            None if velocities is None else velocities[index],
            None if accelerations is None else accelerations[index],
        )
        for index in range(len(points))
    ]


class TrajectoryFollower:
    """
    Follow trajectories for one controller the way joint_trajectory_controller does.

    :param joint_names: The controller's joints (its ``joints`` parameter), unique.
    :param lower: Lower position limits, shape (n,), [rad] or [m].
    :param upper: Upper position limits, shape (n,), [rad] or [m].
    :param initial: Commanded positions held until the first trajectory, shape (n,) (clamped
        into the limits).
    :param config: Options.
    :param limits: Velocity, acceleration and jerk limits to check each accepted trajectory
        against, as followed (:attr:`FollowerStats.segment_violations`); None: not checked.
    :raises ConfigError: If names, limits or the initial positions are inconsistent.
    """

    def __init__(
        self,
        joint_names: Sequence[str],
        lower: npt.ArrayLike,
        upper: npt.ArrayLike,
        initial: npt.ArrayLike,
        config: FollowerConfig | None = None,
        limits: LimitsLike | None = None,
    ) -> None:
        names = tuple(joint_names)
        if not names or len(set(names)) != len(names):
            raise ConfigError(f'a follower needs unique joint names, got {list(names)}')
        arrays = []
        for what, values in (('lower', lower), ('upper', upper), ('initial', initial)):
            array = np.array(values, dtype=float)
            if array.shape != (len(names),) or not np.isfinite(array).all():
                raise ConfigError(f'{what} must be {len(names)} finite numbers, got {values!r}')
            arrays.append(array)
        low, high, start = arrays
        if not (low <= high).all():
            raise ConfigError(f'lower limits {low.tolist()} exceed upper {high.tolist()}')
        self._names = names
        self._index = {name: i for i, name in enumerate(names)}
        self._lower = low
        self._upper = high
        self._lower.setflags(write=False)
        self._upper.setflags(write=False)
        self._config = config or FollowerConfig()
        self._limits = limits
        plan_state.load()  # the sampling compiled (or read from numba's cache) now
        if limits is not None:
            peak_shares.load()  # the check compiled (or read from numba's cache) now
        self._plan: _Plan | None = None
        zero = np.zeros(len(names))
        self._hold = JointCommand(np.clip(start, low, high), zero, zero, moving=False)
        self.stats = FollowerStats()

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Return the controller's joints, the order of every array of the follower."""
        return self._names

    @property
    def lower(self) -> FloatArray:
        """Return the lower position limits, shape (n,), [rad] or [m] (read-only)."""
        return self._lower

    @property
    def upper(self) -> FloatArray:
        """Return the upper position limits, shape (n,), [rad] or [m] (read-only)."""
        return self._upper

    @property
    def end_time(self) -> float | None:
        """Return the time of the active trajectory's last point [s], or None when holding."""
        return None if self._plan is None else float(self._plan.times[-1])

    def reset(self, positions: npt.ArrayLike) -> None:
        """
        Drop the active trajectory and hold positions (clamped into the limits).

        :param positions: Positions to hold, shape (n,), [rad] or [m].
        :raises ConfigError: If the positions are not n finite numbers.
        """
        array = np.array(positions, dtype=float)
        if array.shape != (len(self._names),) or not np.isfinite(array).all():
            raise ConfigError(f'positions must be {len(self._names)} finite numbers')
        zero = np.zeros(len(self._names))
        self._plan = None
        self._hold = JointCommand(np.clip(array, self._lower, self._upper), zero, zero, False)

    def set_trajectory(self, trajectory: Trajectory, now: float) -> Verdict:
        """
        Check a trajectory and, if valid, replace the active one with it.

        :param trajectory: The received trajectory.
        :param now: Arrival time on the follower's clock [s].
        :return: The verdict; on rejection the previous command continues unchanged.
        """
        current = self.sample(now)
        joined = self.stats.joined
        violations = self.stats.segment_violations
        try:
            plan, clamped = self._plan_for(trajectory, now)
        except _Rejected as rejected:
            verdict = rejected.verdict
            self.stats.rejected += 1
            counts = self.stats.rejections
            counts[verdict.status] = counts.get(verdict.status, 0) + 1
            self.stats.last_rejection = verdict
            return verdict
        joined = self.stats.joined > joined
        peaks, jumped = SegmentPeaks(), False
        if self._limits is not None:
            peaks, jumped = self._check_segments(plan, current, now)
            if joined:
                self.stats.join_peaks = self.stats.join_peaks.merged(peaks)
        self._plan = plan
        self.stats.accepted += 1
        stamp = float(trajectory.stamp)
        if joined:
            self.stats.last_join = (now - stamp if stamp != 0.0 else math.nan, peaks)
        if self.stats.segment_violations > violations:
            self.stats.last_violation = (
                now - stamp if stamp != 0.0 else math.nan, peaks, jumped
            )
        if stamp != 0.0:
            delay = now - stamp
            self.stats.delays.append(delay)
            if math.isnan(self.stats.delay_max) or delay > self.stats.delay_max:
                self.stats.delay_max = delay
            if joined:
                low, high = self.stats.join_delays
                self.stats.join_delays = (
                    delay if math.isnan(low) else min(low, delay),
                    delay if math.isnan(high) else max(high, delay),
                )
        self.stats.clamped_points += clamped
        detail = f'{clamped} point(s) clamped into the position limits' if clamped else ''
        return Verdict(TrajectoryStatus.ACCEPTED, detail, clamped)

    def _check_segments(
        self, plan: _Plan, current: JointCommand, now: float
    ) -> tuple[SegmentPeaks, bool]:
        """
        Count a trajectory whose states as followed break a limit or are jumped onto.

        :return: What its states as followed reach, and whether the command jumps onto it.
        """
        assert self._limits is not None
        states: list[tuple[float, FloatArray, FloatArray | None, FloatArray | None]] = []
        jumped = False
        if plan.times[0] > now + _TIME_EPSILON:  # joined from the command now
            states.append((now, current.positions, current.velocities, current.accelerations))
        elif len(plan.times) > 1 and now < plan.times[-1]:  # continued
            taken = _evaluate(plan, now, self._lower, self._upper)
            jumped = not _continues(current, taken)
            # the whole segment the command is in, from its point before now: a part of it
            # would measure how the spline bends between two points, not the trajectory
            first = int(np.searchsorted(plan.times, now + _TIME_EPSILON, side='right')) - 1
            states.append(self._point_state(plan, first))
        else:  # held at its last point
            zero = np.zeros(len(self._names))
            taken = JointCommand(plan.positions[-1], zero, zero, False)
            jumped = not _continues(current, taken)
            states.append((now, taken.positions, taken.velocities, taken.accelerations))
        for index, when in enumerate(plan.times):
            if when > now + _TIME_EPSILON:
                states.append(self._point_state(plan, index))
        peaks = segment_peaks(states, self._limits)
        stats = self.stats
        stats.segment_peak = max(stats.segment_peak, math.inf if jumped else peaks.peak)
        stats.segment_violations += int(jumped or peaks.violations > 0)
        return peaks, jumped

    @staticmethod
    def _point_state(
        plan: _Plan, index: int
    ) -> tuple[float, FloatArray, FloatArray | None, FloatArray | None]:
        """Return a plan's point as a state for :func:`segment_peaks` (None: not given)."""
        return (
            float(plan.times[index]), plan.positions[index],
            plan.velocities[index] if plan.has_velocity[index] else None,
            plan.accelerations[index] if plan.has_acceleration[index] else None,
        )

    def _order(self, names: Sequence[str]) -> list[int]:
        """Return, per controller joint, its column in the trajectory, or reject."""
        if len(names) == 0:
            raise _Rejected(TrajectoryStatus.EMPTY_JOINT_NAMES, 'the trajectory names no joint')
        seen: dict[str, int] = {}
        for column, name in enumerate(names):
            if name in seen:
                raise _Rejected(TrajectoryStatus.DUPLICATE_JOINT, f'joint {name!r} named twice')
            seen[name] = column
        unknown = [name for name in names if name not in self._index]
        if unknown:
            raise _Rejected(
                TrajectoryStatus.UNKNOWN_JOINT,
                f'joints {unknown} are not controlled here (controller joints: '
                f'{list(self._names)})',
            )
        missing = [name for name in self._names if name not in seen]
        if missing:
            raise _Rejected(
                TrajectoryStatus.MISSING_JOINT,
                f'joints {missing} are missing; every controller joint must be named',
            )
        return [seen[name] for name in self._names]

    def _plan_for(self, trajectory: Trajectory, now: float) -> tuple[_Plan, int]:
        """
        Return the plan of an accepted trajectory and how many of its points were clamped.

        :raises _Rejected: If the controller refuses it (the reason as its status).
        """
        order = self._order(trajectory.joint_names)
        times, rows = _checked_points(trajectory, len(order))
        start = self._checked_start(trajectory, now, times, rows)
        current = self.sample(now)
        late = start + times[0] <= now + _TIME_EPSILON
        mapped = np.array([positions for positions, _, _ in rows])[:, order]
        inside = np.clip(mapped, self._lower, self._upper)
        clamped = int(np.count_nonzero((inside != mapped).any(axis=1)))
        if late:
            self.stats.late += 1
        if late and len(times) > 1:
            due = max(  # the first point is due (late), so some index is
                index for index, time in enumerate(times)
                if start + time <= now + _TIME_EPSILON
            )
            if due < len(times) - 1:  # the arrival is inside the trajectory: does it continue?
                direct = self._knots(start, times, rows, order, inside, due, None)
                if _continues(current, _evaluate(direct, now, self._lower, self._upper)):
                    return direct, clamped
        join = now + JOIN_TIME if late else now
        self.stats.joined += int(late)
        first = next(
            (index for index, time in enumerate(times) if start + time >= join),
            len(times) - 1,
        )
        head = (now, current) if start + times[first] > now + _TIME_EPSILON else None
        return self._knots(start, times, rows, order, inside, first, head), clamped

    def _checked_start(
        self,
        trajectory: Trajectory,
        now: float,
        times: Sequence[float],
        rows: Sequence[tuple[FloatArray, FloatArray | None, FloatArray | None]],
    ) -> float:
        """
        Return when a trajectory starts (its stamp, or now for a zero stamp).

        :raises _Rejected: If the stamp is not finite, the trajectory ended before now, or it
            ends moving while the controller does not allow it.
        """
        stamp = float(trajectory.stamp)
        if not math.isfinite(stamp):
            raise _Rejected(TrajectoryStatus.NOT_FINITE, f'stamp is {stamp}')
        start = now if stamp == 0.0 else stamp
        if start + times[-1] < now - _TIME_EPSILON:
            raise _Rejected(
                TrajectoryStatus.IN_THE_PAST,
                f'the trajectory ended at {start + times[-1]:.6f} s, before now ({now:.6f} s)',
            )
        last_velocities = rows[-1][1]
        if (
            not self._config.allow_nonzero_velocity_at_trajectory_end
            and last_velocities is not None
            and np.any(last_velocities != 0.0)
        ):
            raise _Rejected(
                TrajectoryStatus.NONZERO_END_VELOCITY,
                'the last point has non-zero velocities and '
                'allow_nonzero_velocity_at_trajectory_end is false',
            )
        return start

    def _knots(
        self,
        start: float,
        times: Sequence[float],
        rows: Sequence[tuple[FloatArray, FloatArray | None, FloatArray | None]],
        order: Sequence[int],
        inside: FloatArray,
        first: int,
        head: tuple[float, JointCommand] | None,
    ) -> _Plan:
        """Return the knots: ``head`` (a time and the command then), then points ``first``..."""
        columns = list(order)
        zero = np.zeros(len(columns))
        knot_times: list[float] = []
        knot_p: list[FloatArray] = []
        knot_v: list[FloatArray] = []
        knot_a: list[FloatArray] = []
        has_v: list[bool] = []
        has_a: list[bool] = []
        if head is not None:
            knot_times.append(head[0])
            knot_p.append(head[1].positions)
            knot_v.append(head[1].velocities)
            knot_a.append(head[1].accelerations)
            has_v.append(True)
            has_a.append(True)
        for index in range(first, len(times)):
            _, velocities, accelerations = rows[index]
            knot_times.append(start + times[index])
            knot_p.append(inside[index])
            knot_v.append(zero if velocities is None else velocities[columns])
            knot_a.append(zero if accelerations is None else accelerations[columns])
            has_v.append(velocities is not None)
            has_a.append(velocities is not None and accelerations is not None)
        return _Plan(
            times=np.array(knot_times),
            positions=np.array(knot_p),
            velocities=np.array(knot_v),
            accelerations=np.array(knot_a),
            has_velocity=tuple(has_v),
            has_acceleration=tuple(has_a),
            codes=segment_codes(has_v, has_a),
        )

    def segment_kind(self, index: int) -> Interpolation:
        """
        Return how the active trajectory's segment ``index`` (knot index -> index + 1) runs.

        :param index: Segment index, 0 for the first segment.
        :return: The interpolation of that segment.
        :raises ConfigError: If there is no active trajectory or no such segment.
        """
        plan = self._plan
        if plan is None or not 0 <= index < len(plan.times) - 1:
            raise ConfigError(f'no segment {index} in the active trajectory')
        return self._kind(plan, index)

    @staticmethod
    def _kind(plan: _Plan, index: int) -> Interpolation:
        return _kind_of(plan, index)

    def sample(self, t: float) -> JointCommand:
        """
        Return the commanded state at a time.

        Before the first knot the first knot's state is returned; after the last point the
        last positions are held with zero velocity (and the trajectory is dropped).

        :param t: Time on the follower's clock [s].
        :return: The command, positions inside the limits.
        """
        plan = self._plan
        if plan is not None and t >= plan.times[-1]:
            self._drop(plan)
            plan = None
        if plan is None:
            return self._hold
        return _evaluate(plan, t, self._lower, self._upper)

    def sample_into(
        self, t: float, positions: FloatArray, velocities: FloatArray, accelerations: FloatArray
    ) -> None:
        """
        Write the commanded state at a time into arrays (:meth:`sample` without a new value).

        :param t: Time on the follower's clock [s].
        :param positions: Written: positions, shape (n,), contiguous, [rad] or [m].
        :param velocities: Written: velocities, shape (n,), contiguous.
        :param accelerations: Written: accelerations, shape (n,), contiguous.
        """
        plan = self._plan
        if plan is not None and t >= plan.times[-1]:
            self._drop(plan)
            plan = None
        if plan is None:
            hold = self._hold
            positions[:] = hold.positions
            velocities[:] = hold.velocities
            accelerations[:] = hold.accelerations
            return
        plan_state_into(
            plan.times, plan.positions, plan.velocities, plan.accelerations, plan.codes,
            self._lower, self._upper, t, positions, velocities, accelerations,
        )

    def _drop(self, plan: _Plan) -> None:
        """Hold the plan's last positions with zero velocity, and drop it (its end passed)."""
        zero = np.zeros(len(self._names))
        self._hold = JointCommand(plan.positions[-1].copy(), zero, zero, moving=False)
        self._plan = None


def _kind_of(plan: _Plan, index: int) -> Interpolation:
    """Return how a plan's segment ``index`` (knot index -> index + 1) is interpolated."""
    return interpolation(int(plan.codes[index]))


def _evaluate(plan: _Plan, t: float, lower: FloatArray, upper: FloatArray) -> JointCommand:
    """Return a plan's state at a time before its last knot, clamped into the limits."""
    count = len(lower)
    position, velocity, acceleration = np.empty(count), np.empty(count), np.empty(count)
    plan_state_into(
        plan.times, plan.positions, plan.velocities, plan.accelerations, plan.codes, lower,
        upper, t, position, velocity, acceleration,
    )
    return JointCommand(position, velocity, acceleration, moving=True)


def _continues(current: JointCommand, joined: JointCommand) -> bool:
    """Return whether a late trajectory's state at the arrival is the current command's."""
    return bool(
        np.all(np.abs(joined.positions - current.positions) <= CONTINUITY[0])
        and np.all(np.abs(joined.velocities - current.velocities) <= CONTINUITY[1])
        and np.all(np.abs(joined.accelerations - current.accelerations) <= CONTINUITY[2])
    )
