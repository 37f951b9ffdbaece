"""
The demo take: a synthetic Kinect v2 recording of a person doing six arm tasks, with noise.

The project ships its own small demo recording (``demo/``, made by
``scripts/make_demo_recording.py``) so that it runs without the PIC paper's data.
:func:`generate_recording` generates it deterministically from a seed;
:func:`~pic_ros_tools.synthetic.text_writer.write_kinect_v2_text` writes it in exactly the
paper's text formats (see :mod:`pic_ros_tools.recordings.kinect_v2_text`).

Model (all lengths in metres, angles in radians unless a name says ``_deg``):

- **Body**: the 25 Kinect v2 joints (:mod:`~pic_ros_tools.synthetic.skeleton`) on a
  rigid-segment skeleton (:data:`~pic_ros_tools.synthetic.body.BODY`): pelvis, two spine
  segments, neck, head, shoulders, upper arms, forearms, hands, hand tips, thumbs, hips and legs.
  The pelvis and the legs stand still; the trunk turns about the pelvis (half of the turn in the
  lower spine, all of it above the chest) with a slow sway of about 1 degree plus a lean and
  twist per task (:func:`~pic_ros_tools.synthetic.motion.trunk_at`).
- **Arms**: four angles per arm (:data:`~pic_ros_tools.synthetic.kinematics.ARM_ANGLE_NAMES`):
  shoulder flexion, shoulder abduction, humeral rotation (internal positive) and elbow flexion,
  relative to the chest. Every arm position is forward kinematics of these angles, so the bones
  of the noise-free truth keep their lengths exactly. Angles move along minimum-jerk profiles
  between key poses; key poses are given either as angles or as a wrist target in the stance
  frame, solved by closed-form inverse kinematics with a chosen elbow swivel (20 or 35 degrees
  outwards). Straight strokes (incision, alignment slides) follow a straight minimum-jerk wrist
  path with inverse kinematics at every frame (:mod:`~pic_ros_tools.synthetic.demo_plan`). All
  angles stay inside :data:`~pic_ros_tools.synthetic.kinematics.ARM_ANGLE_LIMITS_DEG` (elbow
  flexion 0 to 150 degrees).
- **Tasks** (:data:`~pic_ros_tools.synthetic.demo_plan.TASKS`, 34.4 s of a 40 s take): right-arm
  reach forward and back, left-arm wave, arms crossing the body midline, bimanual lift and align
  (assembly-like), right-arm straight strokes on a table (incision-like) and a rest pose,
  separated by short idle gaps that no segment covers, as in the paper's recordings.
- **Placement**: the person stands :data:`SUBJECT_DISTANCE` (1.9 m) in front of a level sensor
  mounted :data:`SENSOR_HEIGHT` (1.1 m) above the floor, facing it, slightly off-centre and
  turned by a few degrees.
- **Frames**: ``stance`` -- origin on the floor below the pelvis, x forward out of the person,
  y to the person's left, z up; Kinect v2 ``camera`` space -- origin at the depth sensor, x to
  the sensor's left (the person's right), y up, z out of the sensor into the scene. The right
  shoulder therefore has the larger camera x.
- **Timing**: a nominal 30 Hz clock with positive processing jitter and about 3 % dropped frames,
  giving a median frame interval near 0.035 s (about 27 frames/s); the first stamp is about
  0.05 s (:class:`~pic_ros_tools.synthetic.tracker_model.TrackerModel`).
- **Tracker errors**: per-joint white noise (4 to 8 mm standard deviation per axis, 30 % more
  along the depth axis z, largest at the hands), a slow per-joint bias drift (Ornstein-Uhlenbeck,
  4 mm, 6 s), occasional single-frame outliers (one distal joint jumps 5 to 15 cm for one frame)
  and one tracking loss of 1.2 s in the middle of the take: those frames are marked lost and
  their joints are NaN.

Random draws use only ``np.random.default_rng(seed)``; the same seed gives identical arrays and
byte-identical files.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.body import BODY
from pic_ros_tools.synthetic.demo_plan import left_plan, plan_angles, right_plan, TASKS, TRUNK_KEYS
from pic_ros_tools.synthetic.kinematics import ARM_ANGLE_LIMITS_DEG, rot_z, skeleton_joints
from pic_ros_tools.synthetic.motion import SWAY_FREQUENCY, trunk_at
from pic_ros_tools.synthetic.recording import NAME_PATTERN, read_only, SyntheticRecording
from pic_ros_tools.synthetic.tracker_model import (
    bias_drift,
    draw_outliers,
    frame_stamps,
    TrackerModel,
    WHITE_SIGMA,
)

FloatArray = npt.NDArray[np.float64]

SENSOR_HEIGHT: Final = 1.10
"""Height of the (level) depth sensor above the floor [m]."""

SUBJECT_DISTANCE: Final = 1.90
"""Camera z of the standing person's pelvis [m]: the distance from the sensor."""

SUBJECT_OFFSET: Final = -0.12
"""Camera x of the pelvis [m]: the person stands a little to the sensor's right."""

SUBJECT_YAW_DEG: Final = -4.0
"""Turn of the person about the vertical [deg]; negative: the chest turns to the sensor."""

DEFAULT_SEED: Final = 1122
"""Seed of the shipped demo recording ``demo/synthetic1_*``."""

DEFAULT_NAME: Final = 'synthetic1'
"""Name of the shipped demo recording (``<task><n>``, so its segment file is ``synthetic_1``)."""

STANCE_TO_CAMERA: Final[FloatArray] = read_only(
    np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
    @ rot_z(np.array(np.radians(SUBJECT_YAW_DEG)))
)
"""
Rotation camera <- stance, shape (3, 3), read-only: ``p_c = R @ p_s + STANCE_ORIGIN``.

Without the person's yaw it maps forward to -z, left to -x and up to +y.
"""

STANCE_ORIGIN: Final[FloatArray] = read_only(
    [SUBJECT_OFFSET, -SENSOR_HEIGHT, SUBJECT_DISTANCE]
)
"""Camera-space position [m] of the stance origin (the floor below the pelvis), shape (3,)."""


def _to_camera(points: FloatArray) -> FloatArray:
    return points @ STANCE_TO_CAMERA.T + STANCE_ORIGIN


def generate_recording(
    seed: int = DEFAULT_SEED,
    name: str = DEFAULT_NAME,
    tracker: TrackerModel | None = None,
) -> SyntheticRecording:
    """
    Generate the synthetic take (about 1100 frames over 40 s), deterministically from a seed.

    The seed drives the frame stamps, the sway phases, the white noise, the bias drift and the
    outliers; the tasks, the body and the tracking-loss interval are fixed.

    :param seed: Seed of ``np.random.default_rng``, >= 0.
    :param name: Recording name ``<task><n>`` (it must end with a take number).
    :param tracker: Timing and error model; default :class:`TrackerModel()`.
    :return: The recording: camera space [m], stamps [s], six segments (:data:`TASKS`).
    :raises ConfigError: If the seed is negative, the name has no take number, or (a bug) the
        arm plan leaves the anatomical limits.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f'seed must be an integer >= 0, got {seed!r}')
    if NAME_PATTERN.match(name) is None:
        raise ConfigError(f'recording name {name!r} must end with a take number, e.g. synthetic1')
    tracker = TrackerModel() if tracker is None else tracker
    rng = np.random.default_rng(seed)
    stamps = frame_stamps(rng, tracker)
    sway_phase = rng.uniform(0.0, 2.0 * np.pi, SWAY_FREQUENCY.shape)
    angles = np.stack(
        [
            plan_angles(left_plan(), 1, stamps, sway_phase, BODY),
            plan_angles(right_plan(), -1, stamps, sway_phase, BODY),
        ],
        axis=1,
    )
    limits = np.radians(np.array(ARM_ANGLE_LIMITS_DEG))
    if np.any(angles < limits[:, 0] - 1e-9) or np.any(angles > limits[:, 1] + 1e-9):
        raise ConfigError('synthetic arm plan leaves the anatomical angle limits')
    truth = _to_camera(skeleton_joints(angles, trunk_at(stamps, sway_phase, TRUNK_KEYS), BODY))
    lost = (stamps >= tracker.loss_start) & (stamps < tracker.loss_start + tracker.loss_duration)
    tracked = ~lost
    axes = np.array([1.0, 1.0, tracker.depth_factor])
    sigma = tracker.white_scale * WHITE_SIGMA[:, None] * axes
    white = sigma * rng.standard_normal(truth.shape)
    drift = bias_drift(rng, stamps, tracker)
    outliers, jumps = draw_outliers(rng, tracked, tracker)
    joints = truth + white + drift + jumps
    joints[lost] = np.nan
    segments = tuple(
        (
            int(np.searchsorted(stamps, task.start, side='left')),
            int(np.searchsorted(stamps, task.stop, side='left')),
        )
        for task in TASKS
    )
    return SyntheticRecording(
        name=name,
        seed=seed,
        stamps=stamps,
        joints=joints,
        truth=truth,
        tracked=tracked,
        outliers=outliers,
        arm_angles=angles,
        segments=segments,
        task_names=tuple(task.name for task in TASKS),
        task_arms=tuple(task.arm for task in TASKS),
    )
