"""
What the person of the demo take does: six labelled tasks as arm key poses and trunk keys.

:data:`TASKS` are the labelled tasks in take order; :func:`left_plan` and :func:`right_plan`
are each arm's key poses, given either as angles or as a wrist target in the stance frame
(solved by closed-form inverse kinematics with a chosen elbow swivel, 20 or 35 degrees
outwards); straight strokes follow a straight minimum-jerk wrist path with inverse kinematics
at every frame (:func:`plan_angles`). :data:`TRUNK_KEYS` lean and twist the trunk per task.
Times in seconds since the start of the take, lengths in metres, angles in degrees in the keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.body import BodyModel
from pic_ros_tools.synthetic.kinematics import ARM_ANGLE_NAMES, arm_ik, Trunk
from pic_ros_tools.synthetic.motion import interpolate, min_jerk, trunk_at
from pic_ros_tools.synthetic.tracker_model import DURATION

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Task:
    """
    One labelled task of the take.

    :param name: Task label.
    :param arm: Arm(s) of the person doing it: ``'left'``, ``'right'`` or ``'both'``.
    :param start: Start time [s since the start of the take].
    :param stop: End time [s], exclusive.
    """

    name: str
    arm: str
    start: float
    stop: float


TASKS: Final[tuple[Task, ...]] = (
    Task('reach_forward', 'right', 1.0, 7.0),
    Task('wave', 'left', 7.8, 12.4),
    Task('cross_midline', 'both', 13.2, 19.6),
    Task('assembly_align', 'both', 20.4, 26.8),
    Task('incision_strokes', 'right', 27.6, 36.1),
    Task('rest', 'both', 36.9, 39.4),
)
"""The labelled tasks in take order; each becomes one segment."""

TRUNK_KEYS: Final = np.array(
    [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [2.3, 3.0, -4.0],
        [6.6, 0.0, 0.0],
        [7.8, 0.0, 0.0],
        [9.0, -1.0, 3.0],
        [12.3, 0.0, 0.0],
        [13.2, 0.0, 0.0],
        [14.6, 2.0, 0.0],
        [19.5, 0.0, 0.0],
        [20.4, 0.0, 0.0],
        [21.8, 3.0, 0.0],
        [26.7, 0.0, 0.0],
        [27.6, 0.0, 0.0],
        [28.8, 8.0, -3.0],
        [34.6, 8.0, -3.0],
        [35.9, 0.0, 0.0],
        [DURATION, 0.0, 0.0],
    ]
)
"""Trunk lean (forward pitch) and twist (yaw, to the person's left) [deg] at key times [s]."""


@dataclass(frozen=True)
class _Key:
    """
    An arm key pose, reached at ``time`` [s].

    Either ``angles`` [deg] (:data:`ARM_ANGLE_NAMES` order) or a wrist ``point`` [m, stance
    frame] with an elbow swivel [deg]. ``line``: reach it along a straight wrist path from the
    previous key (both keys must be points); otherwise the angles move along minimum-jerk
    profiles.
    """

    time: float
    angles: tuple[float, float, float, float] | None = None
    point: tuple[float, float, float] | None = None
    swivel_deg: float = 20.0
    line: bool = False


_REST: Final = (6.0, 9.0, 5.0, 14.0)


def _pose(time: float, angles: tuple[float, float, float, float] = _REST) -> _Key:
    return _Key(time=time, angles=angles)


def _at(time: float, point: tuple[float, float, float], line: bool = False,
        swivel_deg: float = 20.0) -> _Key:
    return _Key(time=time, point=point, line=line, swivel_deg=swivel_deg)


def _mirror(point: tuple[float, float, float]) -> tuple[float, float, float]:
    return (point[0], -point[1], point[2])


def right_plan() -> tuple[_Key, ...]:
    """
    Return the right arm's key poses of the demo take.

    :return: The keys, in time order.
    """
    reach_a, ready, reach_b = (0.42, -0.14, 1.30), (0.22, -0.19, 1.14), (0.38, -0.06, 1.22)
    cross, open_ = (0.30, 0.08, 1.19), (0.32, -0.22, 1.20)
    meet = (0.36, -0.07, 1.18)
    above, start, end = (0.37, -0.12, 1.18), (0.37, -0.12, 1.14), (0.23, -0.12, 1.14)
    end_up = (0.23, -0.12, 1.18)
    keys = [
        _pose(0.0),
        _pose(1.0),
        _at(2.3, reach_a), _at(2.8, reach_a, line=True), _at(3.7, ready),
        _at(4.6, reach_b), _at(5.1, reach_b, line=True), _pose(6.6),
        _pose(13.2),
        _at(14.6, cross, swivel_deg=35.0), _at(15.6, cross, line=True, swivel_deg=35.0),
        _at(16.5, open_), _at(17.4, cross, swivel_deg=35.0),
        _at(18.4, cross, line=True, swivel_deg=35.0), _pose(19.5),
        _pose(20.4),
    ]
    keys += _assembly_keys(meet)
    keys += [
        _pose(26.7),
        _pose(27.6),
        _at(28.8, above), _at(29.2, start, line=True), _at(30.2, end, line=True),
    ]
    time = 30.2
    for _ in range(2):
        keys += [
            _at(time + 0.3, end_up, line=True), _at(time + 0.9, above, line=True),
            _at(time + 1.2, start, line=True), _at(time + 2.2, end, line=True),
        ]
        time += 2.2
    keys += [_at(time + 0.3, end_up, line=True), _pose(35.9), _pose(DURATION)]
    return tuple(keys)


def _assembly_keys(meet: tuple[float, float, float]) -> list[_Key]:
    """Both hands meet, lift a part, slide it left then right to align it, and put it down."""
    x, y, z = meet
    return [
        _at(21.8, meet), _at(22.3, meet, line=True),
        _at(23.0, (x, y, z + 0.10), line=True),
        _at(23.7, (x, y + 0.06, z + 0.10), line=True),
        _at(24.2, (x, y + 0.06, z + 0.10), line=True),
        _at(24.9, (x, y - 0.03, z + 0.10), line=True),
        _at(25.4, (x, y - 0.03, z), line=True),
        _at(25.7, (x, y - 0.03, z), line=True),
    ]


def left_plan() -> tuple[_Key, ...]:
    """
    Return the left arm's key poses of the demo take.

    :return: The keys, in time order.
    """
    up = (20.0, 70.0, -75.0, 95.0)
    keys = [_pose(0.0), _pose(7.8), _pose(9.0, up)]
    time = 9.0
    for bend in (70.0, 118.0, 72.0, 115.0, 70.0, 95.0):
        time += 0.35
        keys.append(_pose(time, (20.0, 70.0 + (bend - 95.0) / 12.0, -75.0, bend)))
    keys += [
        _pose(12.3),
        _pose(13.2),
        _at(14.6, (0.38, -0.07, 1.33), swivel_deg=35.0),
        _at(15.6, (0.38, -0.07, 1.33), line=True, swivel_deg=35.0),
        _at(16.5, (0.34, 0.22, 1.24)),
        _at(17.4, (0.38, -0.07, 1.33), swivel_deg=35.0),
        _at(18.4, (0.38, -0.07, 1.33), line=True, swivel_deg=35.0),
        _pose(19.5),
        _pose(20.4),
    ]
    keys += _assembly_keys(_mirror((0.36, -0.07, 1.18)))
    keys += [
        _pose(26.7),
        _pose(27.6),
        _at(28.8, (0.26, 0.17, 1.13)), _at(34.6, (0.26, 0.17, 1.13), line=True),
        _pose(35.9), _pose(DURATION),
    ]
    return tuple(keys)


def _take(trunk: Trunk, index: npt.NDArray[np.intp] | BoolArray) -> Trunk:
    return Trunk(lower=trunk.lower[index], chest=trunk.chest[index], nod=trunk.nod[index])


def _solve_points(
    points: FloatArray, swivel: FloatArray, lateral: int, trunk: Trunk, body: BodyModel
) -> FloatArray:
    """Arm angles (N, 4) [rad] that put the wrist at stance-frame points (N, 3) [m]."""
    shoulder = trunk.shoulder(body, lateral)
    relative = np.einsum('nji,nj->ni', trunk.chest, points - shoulder)
    return arm_ik(relative, swivel, lateral, body)


def plan_angles(
    plan: tuple[_Key, ...], lateral: int, times: FloatArray, sway_phase: FloatArray,
    body: BodyModel,
) -> FloatArray:
    """Evaluate one arm's key plan at (N,) times [s]: angles (N, 4) [rad]."""
    key_times = np.array([key.time for key in plan])
    if np.any(np.diff(key_times) <= 0):
        raise ConfigError('synthetic arm plan: key times must increase strictly')
    key_trunk = trunk_at(key_times, sway_phase, TRUNK_KEYS)
    resolved = np.empty((len(plan), len(ARM_ANGLE_NAMES)))
    for index, key in enumerate(plan):
        if key.angles is not None:
            resolved[index] = np.radians(key.angles)
        elif key.point is not None:
            resolved[index] = _solve_points(
                np.array([key.point]), np.radians([key.swivel_deg]), lateral,
                _take(key_trunk, np.array([index])), body,
            )[0]
        else:
            raise ConfigError('synthetic arm plan: a key needs angles or a point')
    angles = interpolate(times, key_times, resolved)
    trunk = trunk_at(times, sway_phase, TRUNK_KEYS)
    for before, key in zip(plan[:-1], plan[1:], strict=True):
        if not key.line:
            continue
        if before.point is None or key.point is None:
            raise ConfigError('synthetic arm plan: a straight stroke needs points at both ends')
        inside = np.flatnonzero((times >= before.time) & (times < key.time))
        if inside.size == 0:
            continue
        phase = min_jerk((times[inside] - before.time) / (key.time - before.time))
        start, stop = np.array(before.point), np.array(key.point)
        points = start + phase[:, None] * (stop - start)
        swivel = np.radians(before.swivel_deg + phase * (key.swivel_deg - before.swivel_deg))
        angles[inside] = _solve_points(points, swivel, lateral, _take(trunk, inside), body)
    return angles
