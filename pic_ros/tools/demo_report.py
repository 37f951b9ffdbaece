"""
Pictures and tables of a recorded demo run: the animation, the joint plot, the metrics.

Input is a :class:`DemoRecording` (what the demo's recorder node heard on the topics, with
arrival times on one clock). Output, in a folder:

- ``animation.gif``: the person's skeleton (body frame, drawn from the robot camera's direction)
  beside the simulated robot (MuJoCo, offscreen), frame by frame over the run;
- ``frame.png``: one frame of it;
- ``joints.png``: every arm joint's target, command and simulated position against its limits;
- ``metrics.md`` and ``metrics.json``: the live run's figures and the offline ``evaluate`` table.

matplotlib, Pillow and MuJoCo are imported when needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pic_ros.human.skeleton import HumanJoint
from pic_ros.robot.robot import Robot
from pic_ros.tools.metrics import elbow_angle, PACC_THRESHOLD

FloatArray = npt.NDArray[np.float64]

BONES = (
    (HumanJoint.PELVIS, HumanJoint.SPINE_CHEST), (HumanJoint.SPINE_CHEST, HumanJoint.NECK),
    (HumanJoint.NECK, HumanJoint.HEAD), (HumanJoint.SPINE_CHEST, HumanJoint.SHOULDER_LEFT),
    (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT),
    (HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT), (HumanJoint.WRIST_LEFT, HumanJoint.HAND_LEFT),
    (HumanJoint.SPINE_CHEST, HumanJoint.SHOULDER_RIGHT),
    (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT),
    (HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT),
    (HumanJoint.WRIST_RIGHT, HumanJoint.HAND_RIGHT),
)
"""Bones drawn in the skeleton panel."""

VIEW_AZIMUTH = math.radians(25.0)
VIEW_ELEVATION = math.radians(20.0)
"""Direction the skeleton is drawn from: the simulator camera's (front-left, above)."""


@dataclass
class DemoRecording:
    """
    What the demo heard, in arrival order; every time is on the recorder's clock [s].

    The recorder's clock is the simulation's (``/clock``) or its own monotonic clock
    (``notes['clock']``: ``sim`` or ``wall``); with the simulation's, ``state_times`` are the
    joint_states stamps.

    :param skeleton_times: Arrival of each ``skeleton`` message, shape (S,).
    :param skeletons: Body-frame joints, shape (S, 12, 3), [m] (NaN: invalid).
    :param skeleton_stamps: Capture stamp of each skeleton (its header) [s].
    :param state_times: Arrival of each ``joint_states`` message, shape (J,).
    :param states: Joint positions by name, one dict per message [rad] or [m].
    :param command_times: Arrival of each trajectory, per controller.
    :param commands: Commanded positions per controller, shape (C, n).
    :param velocities: Commanded velocities per controller, shape (C, n).
    :param target_times: Arrival of each ``joint_targets`` message.
    :param targets: Targets by joint name, one dict per message.
    :param notes: Free-form figures of the run (rates, counts).
    """

    skeleton_times: list[float] = field(default_factory=list)
    skeletons: list[FloatArray] = field(default_factory=list)
    skeleton_stamps: list[float] = field(default_factory=list)
    state_times: list[float] = field(default_factory=list)
    states: list[dict[str, float]] = field(default_factory=list)
    command_times: dict[str, list[float]] = field(default_factory=dict)
    commands: dict[str, list[list[float]]] = field(default_factory=dict)
    velocities: dict[str, list[list[float]]] = field(default_factory=dict)
    target_times: list[float] = field(default_factory=list)
    targets: list[dict[str, float]] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)


def _latest(times: Sequence[float], when: float) -> int | None:
    index = int(np.searchsorted(np.asarray(times), when, side='right')) - 1
    return index if index >= 0 else None


def _arm_series(robot: Robot, recording: DemoRecording, arm_name: str) -> FloatArray:
    names = robot.arms[arm_name].joint_names
    rows = [[state.get(name, np.nan) for name in names] for state in recording.states]
    return np.array(rows, dtype=float).reshape(-1, len(names))


def project_skeleton(joints: FloatArray, size: int, scale: float = 0.7) -> FloatArray:
    """
    Project body-frame joints to panel pixels, seen from the simulator camera's direction.

    :param joints: Body-frame joints, shape (12, 3), [m].
    :param size: Panel size [px] (square).
    :param scale: Metres shown from the centre to the panel edge [m].
    :return: Pixel coordinates (x right, y down), shape (12, 2); NaN rows stay NaN.
    """
    ca, sa = math.cos(VIEW_AZIMUTH), math.sin(VIEW_AZIMUTH)
    ce, se = math.cos(VIEW_ELEVATION), math.sin(VIEW_ELEVATION)
    view = np.array([ca * ce, sa * ce, se])
    right = np.array([-sa, ca, 0.0])
    up = np.cross(view, right)
    centred = joints - np.array([0.15, 0.0, -0.2])
    u = centred @ right
    v = centred @ up
    half = size / 2.0
    return np.column_stack((half + u / scale * half, half - v / scale * half))


def draw_skeleton(joints: FloatArray, size: int, caption: str) -> Any:
    """
    Draw one skeleton panel.

    :param joints: Body-frame joints, shape (12, 3), [m].
    :param size: Panel size [px].
    :param caption: Text in the top-left corner.
    :return: A Pillow RGB image.
    """
    from PIL import Image, ImageDraw

    image = Image.new('RGB', (size, size), (245, 245, 240))
    draw = ImageDraw.Draw(image)
    points = project_skeleton(joints, size)
    colours = {'left': (40, 120, 220), 'right': (220, 90, 40), 'trunk': (90, 90, 90)}
    for first, second in BONES:
        a, b = points[first], points[second]
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            continue
        side = 'left' if 'LEFT' in second.name else 'right' if 'RIGHT' in second.name else 'trunk'
        draw.line([tuple(a), tuple(b)], fill=colours[side], width=max(size // 80, 2))
    radius = max(size // 100, 2)
    for x, y in points:
        if math.isfinite(x) and math.isfinite(y):
            draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=(30, 30, 30))
    draw.text((8, 8), caption, fill=(20, 20, 20))
    return image


def render_animation(
    robot: Robot,
    recording: DemoRecording,
    out_dir: Path,
    fps: float = 8.0,
    height: int = 300,
) -> tuple[Path, Path, int]:
    """
    Write ``animation.gif`` (skeleton | simulated robot) and ``frame.png``.

    :param robot: The robot.
    :param recording: The run.
    :param out_dir: Output folder.
    :param fps: Frames per second of the animation [Hz].
    :param height: Frame height [px] (the robot panel is 4:3 beside a square skeleton panel).
    :return: The GIF path, the still frame path and the number of frames.
    """
    from pic_ros.sim.mujoco_robot import SimRobot
    from PIL import Image

    if not recording.skeleton_times or not recording.state_times:
        raise ValueError('the run recorded no skeleton or no joint_states: nothing to animate')
    start = max(recording.skeleton_times[0], recording.state_times[0])
    end = min(recording.skeleton_times[-1], recording.state_times[-1]) + 1.0
    times = np.arange(start, end, 1.0 / fps)
    sim = SimRobot(robot)
    frames = []
    still: Any = None
    best_spread = -1.0
    try:
        model_joints = {name for arm in robot.arms.values() for name in arm.joint_names}
        for when in times:
            s_index = _latest(recording.skeleton_times, when)
            j_index = _latest(recording.state_times, when)
            skeleton = recording.skeletons[s_index] if s_index is not None else None
            age = when - recording.skeleton_times[s_index] if s_index is not None else math.inf
            if j_index is not None:
                for name, value in recording.states[j_index].items():
                    if name in model_joints:
                        sim.data.joint(name).qpos[0] = value
                sim.mujoco.mj_forward(sim.model, sim.data)
            robot_image = Image.fromarray(sim.render(height * 4 // 3, height))
            caption = f't = {when - start:5.1f} s'
            if skeleton is None or age > 0.3:
                caption += '  (no person tracked)'
                skeleton = np.full((12, 3), np.nan)
            panel = draw_skeleton(skeleton, height, caption)
            frame = Image.new('RGB', (height + robot_image.width, height), (255, 255, 255))
            frame.paste(panel, (0, 0))
            frame.paste(robot_image, (height, 0))
            frames.append(frame)
            finite = np.isfinite(skeleton).any()
            spread = float(np.nanmax(np.abs(skeleton[:, 1]))) if finite else 0.0
            if spread > best_spread:
                best_spread, still = spread, frame
    finally:
        sim.close()
    gif = out_dir / 'animation.gif'
    palette = [frame.convert('P', palette=Image.Palette.ADAPTIVE, colors=128) for frame in frames]
    palette[0].save(
        gif, save_all=True, append_images=palette[1:], duration=int(1000 / fps), loop=0,
        optimize=True,
    )
    png = out_dir / 'frame.png'
    still.save(png)
    return gif, png, len(frames)


def plot_joints(robot: Robot, recording: DemoRecording, out_path: Path) -> Path:
    """
    Plot each arm joint's target, command and simulated position against its limits.

    :param robot: The robot.
    :param recording: The run.
    :param out_path: PNG to write.
    :return: ``out_path``.
    """
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    arms = list(robot.arms.values())
    count = max(arm.dof for arm in arms)
    figure, axes = plt.subplots(
        count, len(arms), figsize=(5.5 * len(arms), 1.6 * count), sharex=True, squeeze=False
    )
    origin = recording.skeleton_times[0] if recording.skeleton_times else 0.0
    for column, arm in enumerate(arms):
        states = _arm_series(robot, recording, arm.name)
        state_t = np.asarray(recording.state_times) - origin
        command_t = np.asarray(recording.command_times.get(arm.spec.controller, [])) - origin
        commands = np.array(recording.commands.get(arm.spec.controller, []), dtype=float)
        target_t = np.asarray(recording.target_times) - origin
        for row in range(count):
            axis = axes[row][column]
            if row >= arm.dof:
                axis.axis('off')
                continue
            name = arm.joint_names[row]
            targets = np.array([t.get(name, np.nan) for t in recording.targets], dtype=float)
            if targets.size:
                axis.plot(target_t, targets, '.', ms=2, color='0.6', label='solver target')
            if commands.size:
                axis.plot(command_t, commands[:, row], lw=1.0, color='tab:blue', label='command')
            if states.size:
                axis.plot(state_t, states[:, row], lw=1.0, color='tab:orange',
                          label='simulated robot')
            for limit in (arm.lower[row], arm.upper[row]):
                axis.axhline(limit, color='tab:red', lw=0.8, ls='--')
            axis.set_ylabel(name, fontsize=7)
            axis.tick_params(labelsize=6)
        axes[0][column].set_title(f'{robot.name} {arm.name} arm [rad]; dashed: URDF limits',
                                  fontsize=8)
    axes[0][0].legend(fontsize=6, loc='upper right')
    for column in range(len(arms)):
        axes[count - 1][column].set_xlabel('time [s]', fontsize=7)
    figure.tight_layout()
    figure.savefig(out_path, dpi=110)
    plt.close(figure)
    return out_path


def live_metrics(robot: Robot, recording: DemoRecording, lag: float = 0.15) -> dict[str, Any]:
    """
    Score the live run: pose accuracy of the simulated robot, limits, speeds, tracking error.

    The robot state used for each skeleton is the joint_states heard ``lag`` seconds after it
    (the pipeline plus the simulated servo's delay).

    :param robot: The robot.
    :param recording: The run.
    :param lag: Delay between a skeleton and the robot state compared with it [s].
    :return: Figures by name (JSON-ready numbers).
    """
    result: dict[str, Any] = {
        'skeletons': len(recording.skeleton_times),
        'joint_states': len(recording.state_times),
    }
    hits, errors, violations, speed_ratio, tracking = [], [], 0, 0.0, []
    mirror = robot.spec.mapping.mode.value == 'mirror'
    for arm in robot.arms.values():
        series = _arm_series(robot, recording, arm.name)
        if series.size:
            outside = (series < arm.lower - 1e-6) | (series > arm.upper + 1e-6)
            violations += int(np.count_nonzero(np.any(outside, axis=1)))
        side = arm.side if not mirror else arm.side.other
        shoulder, elbow_j, wrist = (
            (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT)
            if side.value == 'left'
            else (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT)
        )
        for when, joints in zip(recording.skeleton_times, recording.skeletons):
            index = _latest(recording.state_times, when + lag)
            if index is None or not np.all(np.isfinite(joints[[shoulder, elbow_j, wrist]])):
                continue
            q = series[index]
            if not np.all(np.isfinite(q)):
                continue
            landmarks = arm.landmarks(q)
            human = elbow_angle(joints[shoulder], joints[elbow_j], joints[wrist])
            machine = elbow_angle(landmarks[1], landmarks[2], landmarks[3])
            difference = float(human - machine)
            hits.append(difference**2 <= PACC_THRESHOLD)
            errors.append(abs(difference))
        command_times = np.asarray(recording.command_times.get(arm.spec.controller, []))
        commands = np.array(recording.commands.get(arm.spec.controller, []), dtype=float)
        velocities = np.array(recording.velocities.get(arm.spec.controller, []), dtype=float)
        if velocities.size:
            speed_ratio = max(speed_ratio, float(np.max(np.abs(velocities) / arm.velocity)))
        if len(command_times) > 1:
            for when, command in zip(command_times, commands):
                index = _latest(recording.state_times, when + 0.05)
                if index is not None and np.all(np.isfinite(series[index])):
                    tracking.append(float(np.max(np.abs(series[index] - command))))
    result['pacc_sim_robot'] = float(np.mean(hits)) if hits else None
    result['elbow_mae_rad_sim_robot'] = float(np.mean(errors)) if errors else None
    result['limit_violations_sim'] = violations
    result['peak_command_velocity_over_limit'] = speed_ratio
    result['tracking_error_rad_median'] = float(np.median(tracking)) if tracking else None
    result['tracking_error_rad_p95'] = float(np.percentile(tracking, 95)) if tracking else None
    result.update(recording.notes)
    return result


def write_metrics(
    out_dir: Path, live: Mapping[str, Any], offline: Sequence[Mapping[str, Any]]
) -> tuple[Path, Path]:
    """
    Write ``metrics.json`` and ``metrics.md``.

    :param out_dir: Output folder.
    :param live: Figures of :func:`live_metrics`.
    :param offline: ``evaluate`` records of the same recording and robot.
    :return: The two paths.
    """
    from pic_ros.tools.report import metrics_table, pose_accuracy_table

    json_path = out_dir / 'metrics.json'
    json_path.write_text(
        json.dumps({'live_run': dict(live), 'evaluate': list(offline)}, indent=2, default=str)
    )
    lines = ['# pic_ros demo: metrics', '', '## Live run (separate ROS 2 processes over DDS)', '']
    lines += ['| figure | value |', '|---|---|']
    for key, value in live.items():
        shown = f'{value:.3f}' if isinstance(value, float) else str(value)
        lines.append(f'| {key} | {shown} |')
    lines += ['', '## Offline evaluate on the same recording', '', '```']
    lines += [pose_accuracy_table(offline), '', metrics_table(offline), '```', '']
    md_path = out_dir / 'metrics.md'
    md_path.write_text('\n'.join(lines))
    return json_path, md_path
