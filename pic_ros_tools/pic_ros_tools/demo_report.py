"""
Pictures and tables of a recorded demo run: the animation, the joint plot, the metrics.

Input is a :class:`DemoRecording` (what the demo's recorder node heard on the topics, with
arrival times on one clock). Output, in a folder:

- ``animation.gif``: the simulated robot (MuJoCo, offscreen) with the person drawn over it as a
  translucent skeleton in the same 3-D view and scale: each arm as the solver node placed it on
  the robot (at the robot's shoulder, the person's bone directions at the robot's link lengths
  with the default correspondence), the trunk and head scaled to the robot's arm length; frame
  by frame over the run;
- ``frame.png``: one frame of it;
- ``joints.png``: every arm joint's target, command and simulated position against its limits;
- ``elbows.png``: the person's and the simulated robot's elbow angle over time, per arm;
- ``metrics.md`` and ``metrics.json``: the live run's figures (``evaluate --live``'s table) and
  the offline ``evaluate`` table.

matplotlib, Pillow and MuJoCo are imported when needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence.mapping import human_side_for, MappingMode
from pic_ros.correspondence.overlay import overlay_person
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.robot import Robot
from pic_ros.skeleton import HumanJoint, make_frame, Side

FloatArray = npt.NDArray[np.float64]

SIDE_COLOURS: Final = MappingProxyType({
    Side.LEFT: (0.16, 0.47, 0.86, 0.6), Side.RIGHT: (0.86, 0.35, 0.16, 0.6),
})
"""Colour and opacity of the person's left and right arm."""

TRUNK_COLOUR: Final = (0.35, 0.35, 0.35, 0.45)
"""Colour and opacity of the person's trunk and head."""

LIMB_RADIUS: Final = 0.045
"""Radius of the person's bones drawn over the robot, as a share of the robot's arm length."""

HEAD_RADIUS: Final = 0.12
"""Radius of the person's head drawn over the robot, as a share of the robot's arm length."""


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


def arm_states(arm: ArmModel, recording: DemoRecording) -> tuple[FloatArray, FloatArray]:
    """
    Return an arm's recorded joint_states with their times, in time order.

    :param arm: The arm.
    :param recording: The run.
    :return: Times, shape (K,), [s], and positions, shape (K, dof), [rad] or [m]; rows missing a
        joint of the arm are left out.
    """
    times = np.asarray(recording.state_times, dtype=float)
    rows = np.array(
        [[state.get(name, np.nan) for name in arm.joint_names] for state in recording.states],
        dtype=float,
    ).reshape(-1, arm.dof)
    keep = np.all(np.isfinite(rows), axis=1)
    order = np.argsort(times[keep], kind='stable')
    return times[keep][order], rows[keep][order]


def person_overlay(
    robot: Robot,
    joints: FloatArray,
    placed: Mapping[str, FloatArray],
    mode: MappingMode = MappingMode.SAME_SIDE,
) -> list[Any]:
    """
    Return the capsules that draw a person over the robot, in the robot's scale.

    The person is placed as the solver node's ``placed_skeleton_markers`` place it
    (:func:`pic_ros.correspondence.overlay.overlay_person`): each placed arm where the solver
    node placed it (its targets, robot base frame), the trunk and head keeping the person's shape
    relative to the middle of their shoulders, scaled by the robot's arm length over the
    person's, from the middle of the placed shoulders, with collar bones to each placed shoulder.

    :param robot: The robot.
    :param joints: The person's body-frame joints, shape (12, 3) or (19, 3), [m] (NaN: invalid).
    :param placed: Per arm, shoulder, elbow and wrist targets, shape (3, 3), [m], base frame.
    :param mode: The mapping mode (``mirror`` reflects the trunk like the arms).
    :return: :class:`~pic_ros_tools.sim.mujoco_robot.Capsule` s, world (robot base) frame.
    """
    from pic_ros_tools.sim.mujoco_robot import Capsule

    capsules: list[Any] = []
    if not placed:
        return capsules
    overlay = overlay_person(make_frame(0.0, joints, frame='body'), placed, mode)
    robot_length = overlay.arm_length
    radius = LIMB_RADIUS * robot_length
    for name, points in overlay.arms.items():
        colour = SIDE_COLOURS[human_side_for(robot.arms[name].side, mode)]
        for start, end in ((0, 1), (1, 2), (2, 2)):
            capsules.append(Capsule(points[start], points[end], radius, colour))
    for start, end in overlay.trunk_bones:
        capsules.append(Capsule(start, end, radius, TRUNK_COLOUR))
    head = overlay.trunk.get(HumanJoint.HEAD)
    if head is not None:
        capsules.append(Capsule(head, head, HEAD_RADIUS * robot_length, TRUNK_COLOUR))
    return capsules


def render_animation(
    robot: Robot,
    recording: DemoRecording,
    placed: Sequence[Mapping[str, FloatArray]],
    out_dir: Path,
    fps: float = 8.0,
    height: int = 360,
    mode: MappingMode = MappingMode.SAME_SIDE,
    avoided: Sequence[bool] | None = None,
) -> tuple[Path, Path, int]:
    """
    Write ``animation.gif`` (the simulated robot with the person over it) and ``frame.png``.

    A frame whose skeleton the self-collision avoidance acted on says so in its caption, framed
    in red; the still frame is one of those when there are any (else the one with the arms
    spread widest).

    :param robot: The robot.
    :param recording: The run.
    :param placed: Each skeleton's arms as placed on the robot
        (:func:`~pic_ros_tools.live_evaluation.place_skeletons`), in the recording's order.
    :param out_dir: Output folder.
    :param fps: Frames per second of the animation [Hz].
    :param height: Frame height [px] (4:3 frames).
    :param mode: The mapping mode (for the person's trunk and colours).
    :param avoided: Per skeleton, whether the avoidance acted on it
        (:func:`~pic_ros_tools.live_evaluation.avoided_skeletons`); None: not shown.
    :return: The GIF path, the still frame path and the number of frames.
    """
    from pic_ros_tools.sim.mujoco_robot import SimRobot
    from PIL import Image, ImageDraw

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
            age = when - recording.skeleton_times[s_index] if s_index is not None else math.inf
            if j_index is not None:
                for name, value in recording.states[j_index].items():
                    if name in model_joints:
                        sim.data.joint(name).qpos[0] = value
                sim.mujoco.mj_forward(sim.model, sim.data)
            caption = f't = {when - start:5.1f} s   person: translucent, blue = their left arm'
            overlay: list[Any] = []
            spread = 0.0
            acting = False
            if s_index is None or age > 0.3:
                caption = f't = {when - start:5.1f} s   (no person tracked)'
            else:
                joints = recording.skeletons[s_index]
                overlay = person_overlay(robot, joints, placed[s_index], mode)
                spread = float(np.nanmax(np.abs(joints[:, 1]))) if np.isfinite(joints).any() else 0
                acting = avoided is not None and s_index < len(avoided) and avoided[s_index]
            frame = Image.fromarray(sim.render(height * 4 // 3, height, overlay))
            draw = ImageDraw.Draw(frame)
            draw.text((8, 8), caption, fill=(20, 20, 20))
            if acting:  # the robot keeps its links apart here instead of copying the person
                draw.text((8, 24), 'self-collision avoidance acting', fill=(200, 0, 0))
                draw.rectangle((0, 0, frame.width - 1, frame.height - 1), outline=(200, 0, 0),
                               width=3)
                spread += 10.0  # the still frame shows the avoidance when it ever acted
            frames.append(frame)
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


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


def plot_elbows(
    traces: Mapping[str, Mapping[str, FloatArray]],
    lags: Mapping[str, float],
    out_path: Path,
    origin: float = 0.0,
) -> Path:
    """
    Plot the person's and the simulated robot's elbow angle over time, one panel per arm.

    :param traces: Per arm, :func:`~pic_ros_tools.live_evaluation.elbow_traces`' series.
    :param lags: Per arm, the lag shown in the panel's title [s].
    :param out_path: PNG to write.
    :param origin: Time shown as 0 [s].
    :return: ``out_path``.
    """
    plt = _pyplot()
    figure, axes = plt.subplots(
        len(traces), 1, figsize=(10.0, 2.4 * len(traces)), sharex=True, squeeze=False
    )
    for axis, (name, series) in zip(axes[:, 0], traces.items()):
        axis.plot(series['person_times'] - origin, np.degrees(series['person']), '.', ms=2.5,
                  color='tab:blue', label='person (as the pipeline saw them)')
        axis.plot(series['robot_times'] - origin, np.degrees(series['robot']), lw=1.0,
                  color='tab:orange', label='simulated robot (joint_states)')
        lag = lags.get(name, math.nan)
        shown = f'{lag * 1e3:.0f} ms' if math.isfinite(lag) else 'n/a'
        axis.set_title(f'{name} arm: interior elbow angle [deg]; lag {shown}', fontsize=9)
        axis.set_ylabel('elbow [deg]', fontsize=8)
        axis.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=7, loc='lower right')
    axes[-1, 0].set_xlabel('time [s]', fontsize=8)
    figure.tight_layout()
    figure.savefig(out_path, dpi=110)
    plt.close(figure)
    return out_path


def plot_joints(robot: Robot, recording: DemoRecording, out_path: Path) -> Path:
    """
    Plot each arm joint's target, command and simulated position against its limits.

    :param robot: The robot.
    :param recording: The run.
    :param out_path: PNG to write.
    :return: ``out_path``.
    """
    plt = _pyplot()
    arms = list(robot.arms.values())
    count = max(arm.dof for arm in arms)
    figure, axes = plt.subplots(
        count, len(arms), figsize=(5.5 * len(arms), 1.6 * count), sharex=True, squeeze=False
    )
    origin = recording.skeleton_times[0] if recording.skeleton_times else 0.0
    for column, arm in enumerate(arms):
        state_t, states = arm_states(arm, recording)
        state_t = state_t - origin
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


def write_metrics(
    out_dir: Path, live: Mapping[str, Any], offline: Sequence[Mapping[str, Any]]
) -> tuple[Path, Path]:
    """
    Write ``metrics.json`` and ``metrics.md``.

    :param out_dir: Output folder.
    :param live: The live run's record (:func:`~pic_ros_tools.live_evaluation.live_record`).
    :param offline: ``evaluate`` records of the same recording and robot.
    :return: The two paths.
    """
    from pic_ros_tools.live_evaluation import live_tables
    from pic_ros_tools.report import metrics_table, pose_accuracy_table

    json_path = out_dir / 'metrics.json'
    json_path.write_text(
        json.dumps({'live': dict(live), 'evaluate': list(offline)}, indent=2, default=str)
    )
    warnings = list(live.get('warnings', []))
    lines = ['# pic_ros demo: metrics', '']
    if warnings:
        lines += [
            '**Invalid run**: it does not show what the pipeline does (the figures below are '
            'those of what happened):', '', *[f'- {line}' for line in warnings], '',
        ]
    lines += [
        '## What the simulated robot did (separate ROS 2 processes over DDS)', '',
        'The same figures as `evaluate --live`: the offline figures of the same skeletons and '
        'settings beside the live ones; lag per arm (left / right); the motion of the simulated '
        "robot's joints and of the streamed commands against the limits the trajectory "
        'publisher enforces.', '',
        live_tables([live]), '', '## The run', '', '| figure | value |', '|---|---|',
    ]
    for key, value in live['run'].items():
        shown = f'{value:.3f}' if isinstance(value, float) else str(value)
        lines.append(f'| {key} | {shown} |')
    lines += ['', '## Offline evaluate on the same recording', '', '```']
    lines += [pose_accuracy_table(offline), '', metrics_table(offline), '```', '']
    md_path = out_dir / 'metrics.md'
    md_path.write_text('\n'.join(lines))
    return json_path, md_path
