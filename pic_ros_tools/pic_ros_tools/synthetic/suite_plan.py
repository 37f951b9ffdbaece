"""
The motion plan of a suite take: bad start, tasks in a random order, and its evaluation in time.

:func:`draw_plan` draws a take's motion (from the
:data:`~pic_ros_tools.synthetic.people.MOTION_STREAM` of its seed, so the motion does not depend
on the clock); :func:`stance_joints` evaluates it at frame times: arm angles [rad] and joints [m]
in the person's stance frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.body import BodyModel
from pic_ros_tools.synthetic.kinematics import ARM_ANGLE_NAMES, arm_ik, skeleton_joints
from pic_ros_tools.synthetic.motion import interpolate, min_jerk, SWAY_FREQUENCY, trunk_at
from pic_ros_tools.synthetic.people import MOTION_STREAM
from pic_ros_tools.synthetic.suite_tasks import (
    arm_length,
    ArmPose,
    Builder,
    BuiltTask,
    Key,
    MANDATORY_TASKS,
    task_arm,
    TASK_BUILDERS,
    TASK_NAMES,
)

FloatArray = npt.NDArray[np.float64]

_END_MARGIN: Final = 0.3
"""Time [s] at rest kept at the end of a take after the last task and its gap."""


@dataclass(frozen=True, eq=False)
class Plan:
    """The motion of a take, independent of the clock and (but for pointing) of the camera."""

    keys: tuple[Key, ...]
    trunk_keys: FloatArray
    sway_phase: FloatArray
    pointing: tuple[int, ...]
    pointing_reach: float
    start_end: float
    tasks: tuple[tuple[str, str, float, float], ...]


def draw_plan(seed: int, body: BodyModel, bad_start: str, duration: float) -> Plan:
    """Draw a take's motion: bad start, then tasks at rest-separated times [s]."""
    rng = np.random.default_rng([seed, MOTION_STREAM])
    sway_phase = rng.uniform(0.0, 2.0 * np.pi, SWAY_FREQUENCY.shape)
    speed, wrist_speed = float(rng.uniform(1.8, 2.6)), float(rng.uniform(0.5, 0.8))
    rest = tuple(
        ArmPose(angles=np.radians([
            rng.uniform(3, 9), rng.uniform(7, 11), rng.uniform(0, 10), rng.uniform(10, 18)
        ]))
        for _ in range(2)
    )
    rest_pair = (rest[0], rest[1])
    builder = Builder(body, rng, speed, wrist_speed, rest_pair)
    hold, settle = float(rng.uniform(1.0, 1.2)), float(rng.uniform(1.2, 1.6))
    pointing_reach = float(rng.uniform(0.965, 0.98))
    length, width = arm_length(body), body.shoulder_half_width
    upper_first = 1 if rng.random() < 0.5 else -1
    crossed = tuple(
        builder.cross_point(
            lateral, rng.uniform(0.3, 0.38) * length + (0.03 if lateral == upper_first else 0.0),
            -lateral * width * rng.uniform(0.4, 0.7),
            body.shoulder_drop + rng.uniform(0.3, 0.4) * length
            - (0.03 if lateral == upper_first else 0.0),
            rng.uniform(22, 35),
        )
        for lateral in (1, -1)
    )
    start = (crossed[0], crossed[1]) if bad_start == 'crossed' else rest_pair
    keys = [Key(0.0, start), Key(hold, start), Key(hold + settle, rest_pair)]
    pointing = (0, 1) if bad_start == 'pointing' else ()
    time = hold + settle + float(rng.uniform(0.4, 0.7))

    optional = [str(name) for name in rng.permutation(list(TASK_NAMES[3:]))]
    built: dict[str, BuiltTask] = {}
    for name in list(MANDATORY_TASKS) + optional:
        task_builder = Builder(body, rng, speed, wrist_speed, rest_pair)
        arm = task_arm(name, rng)
        TASK_BUILDERS[name](task_builder, arm)
        built[name] = task_builder.task(name, arm)
    gaps = {name: float(rng.uniform(0.5, 1.0)) for name in built}
    budget = duration - _END_MARGIN - time
    chosen = list(MANDATORY_TASKS)
    used = sum(built[name].length + gaps[name] for name in chosen)
    if used > budget:
        raise ConfigError(f'a {duration} s take is too short for the tasks every take holds')
    for name in optional:
        if used + built[name].length + gaps[name] <= budget:
            chosen.append(name)
            used += built[name].length + gaps[name]
    order = [str(name) for name in rng.permutation(chosen)]

    trunk = [(0.0, 0.0, 0.0)]
    tasks = []
    for name in order:
        task = built[name]
        keys += [Key(time + key.time, key.poses, key.line) for key in task.keys]
        trunk.append((time, 0.0, 0.0))
        trunk += [(time + t, lean, twist) for t, lean, twist in task.trunk]
        trunk.append((time + task.length, 0.0, 0.0))
        tasks.append((name, task.arm, time, time + task.length))
        time += task.length + gaps[name]
    return Plan(
        keys=tuple(keys),
        trunk_keys=np.array(trunk),
        sway_phase=sway_phase,
        pointing=pointing,
        pointing_reach=pointing_reach,
        start_end=hold + settle,
        tasks=tuple(tasks),
    )


def pointing_angles(plan: Plan, body: BodyModel, sensor: FloatArray) -> FloatArray:
    """Return the arm angles (2, 4) [rad] pointing both arms at the sensor (stance frame, [m])."""
    trunk = trunk_at(np.zeros(1), plan.sway_phase, plan.trunk_keys)
    angles = np.empty((2, len(ARM_ANGLE_NAMES)))
    for index, lateral in enumerate((1, -1)):
        shoulder = trunk.shoulder(body, lateral)[0]
        direction = trunk.chest[0].T @ (sensor - shoulder)
        relative = plan.pointing_reach * arm_length(body) * direction / np.linalg.norm(direction)
        angles[index] = arm_ik(relative[None], np.zeros(1), lateral, body)[0]
    return angles


def _arm_angles(
    plan: Plan, body: BodyModel, times: FloatArray, pointing: FloatArray | None
) -> FloatArray:
    """Evaluate the plan at (N,) increasing times [s]: angles (N, 2, 4) [rad]."""
    key_times = np.array([key.time for key in plan.keys])
    values = np.array([[pose.angles for pose in key.poses] for key in plan.keys])
    if pointing is not None:
        values[list(plan.pointing)] = pointing
    angles = interpolate(times, key_times, values.reshape(len(plan.keys), -1))
    angles = angles.reshape(times.shape[0], 2, len(ARM_ANGLE_NAMES))
    for index, lateral in enumerate((1, -1)):
        frames, points, swivels = [], [], []
        for before, key in zip(plan.keys[:-1], plan.keys[1:], strict=True):
            start_pose, stop_pose = before.poses[index], key.poses[index]
            if not key.line[index] or start_pose.point is None or stop_pose.point is None:
                continue
            first, last = np.searchsorted(times, [before.time, key.time], side='left')
            if first >= last:
                continue
            phase = min_jerk((times[first:last] - before.time) / (key.time - before.time))
            frames.append(np.arange(first, last))
            points.append(start_pose.point + phase[:, None] * (stop_pose.point - start_pose.point))
            swivels.append(start_pose.swivel + phase * (stop_pose.swivel - start_pose.swivel))
        if frames:
            rows = np.concatenate(frames)
            angles[rows, index] = arm_ik(
                np.concatenate(points), np.concatenate(swivels), lateral, body
            )
    return angles


def stance_joints(
    plan: Plan, body: BodyModel, times: FloatArray, pointing: FloatArray | None
) -> tuple[FloatArray, FloatArray]:
    """Return the arm angles (N, 2, 4) [rad] and joints (N, 25, 3) [m, stance] at times [s]."""
    angles = _arm_angles(plan, body, times, pointing)
    joints = skeleton_joints(angles, trunk_at(times, plan.sway_phase, plan.trunk_keys), body)
    return angles, joints
