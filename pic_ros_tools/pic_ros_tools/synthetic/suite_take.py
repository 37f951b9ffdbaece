"""
One take of the robustness suite: a synthetic Kinect v2 recording of one generated person.

The demo generator (:mod:`~pic_ros_tools.synthetic.demo_take`) makes the shipped demo take. The
suite reuses its skeleton, trunk, timing and tracker-error pieces to make *many* takes, one per
:class:`~pic_ros_tools.synthetic.people.PersonSpec`, so that an evaluation can check that pose
imitation holds for any person and cannot be tuned to one.
:func:`~pic_ros_tools.synthetic.suite.suite_specs` draws the suite (50 takes by default),
:func:`generate_take` makes one take as a
:class:`~pic_ros_tools.synthetic.recording.SyntheticRecording`.

Model (lengths in metres, angles in degrees where a name says ``_deg``, else radians):

- **Body**: every segment of :class:`~pic_ros_tools.synthetic.body.BodyModel` is scaled by
  ``height / REFERENCE_HEIGHT`` (the defaults are a 1.75 m person); then the upper arm, the forearm
  and the shoulder half-width get their own factors (0.85 to 1.15), so the arm proportions vary
  independently of the height (:attr:`~pic_ros_tools.synthetic.people.PersonSpec.body`).
- **Motion**: four angles per arm (:data:`~pic_ros_tools.synthetic.kinematics.ARM_ANGLE_NAMES`)
  relative to the chest, moved along minimum-jerk profiles between key poses. Key poses are angles
  or wrist targets in the chest frame given as fractions of the person's own arm length (upper arm
  plus forearm) and shoulder width, solved by closed-form inverse kinematics, so every person can
  do every task. A move between key poses lasts 0.5 to 2 s, from the largest angle change and the
  person's peak joint speed (1.8 to 2.6 rad/s, drawn per take); straight wrist strokes move at a
  peak wrist speed of 0.5 to 0.8 m/s. The trunk sways (as in the demo take) and leans or twists per
  task.
- **Take**: the first 1.0 to 1.2 s hold a *bad start*
  (:data:`~pic_ros_tools.synthetic.people.BAD_STARTS`): arms crossed over the chest (each wrist
  beyond the body midline), or both arms pointing at the sensor (the wrist at 96.5 to 98 % of the
  arm length along the line from the shoulder to the sensor, so both bones point within about 16
  degrees of the sensor), or standing at rest. After a 1.2 to 1.6 s move to rest, labelled tasks
  follow (:data:`~pic_ros_tools.synthetic.suite_tasks.TASK_NAMES`), separated by 0.5 to 1 s at rest
  that no segment covers: ``cross_midline`` (one hand towards the opposite shoulder, the other
  below it, both beyond the midline, the upper arms adducted by 22 to 38 degrees), ``raise_arms``
  (above the shoulders, forward or sideways) and ``rest`` (arms hanging slightly behind the trunk)
  in every take, plus as many as fit of ``reach_forward`` (towards the sensor), ``reach_side``,
  ``assembly`` (both hands meet in front, lift and slide a part), ``table_strokes`` (incision-like
  straight strokes, forearm horizontal), ``wave`` and ``elbow_range`` (elbow from 2-5 to 140-148
  degrees of flexion), in a random order. So the upper arm and forearm directions cross the three
  coordinate planes of the chest frame in every take.
- **Placement**: the sensor stands ``camera_height`` above the floor, pitched up by
  ``camera_tilt_deg``. In the sensor's *level* frame (origin at the sensor, x to its left, y up
  along gravity, z horizontal forward) the floor point below the pelvis is at
  ``(camera_lateral, -camera_height, camera_distance)``; the person faces the sensor (their forward
  is level -z) turned by ``person_yaw_deg`` to their left. Kinect v2 camera space is the level
  frame pitched with the sensor: ``x_c = x``, ``y_c = y cos(t) - z sin(t)``,
  ``z_c = y sin(t) + z cos(t)`` (x to the sensor's left, y up relative to the sensor, z along the
  optical axis), so the right shoulder has the larger camera x when the person faces the sensor.
  The sensor lies within :data:`~pic_ros_tools.synthetic.people.MAX_SENSOR_BEARING_DEG` of the
  person's forward direction, and the upper body
  (:data:`~pic_ros_tools.synthetic.field_of_view.VIEW_JOINTS`) stays inside the Kinect v2 field of
  view (:mod:`~pic_ros_tools.synthetic.field_of_view`) in every frame; :func:`generate_take` checks
  both.
- **Timing**: the Kinect-like clock of the demo take (30 Hz nominal, jitter, about
  3 % dropped frames) over ``duration``.
- **Tracker errors** (added to the noise-free ``truth``, in this order of the model, all in
  camera space):

  1. *Foreshortening*: for each bone B of each arm (upper arm: shoulder to elbow, forearm:
     elbow to wrist) with true proximal joint ``p``, unit direction ``u`` and length ``L``,
     ``c = max(0, u . (-p / |p|))`` is the cosine of the angle between the bone and the line of
     sight towards the sensor, clipped at 0 (a bone pointing away is not shortened). With
     ``w = foreshortening * c**2`` the distal joint and every joint beyond it (the hand, hand
     tip and thumb follow) move by ``-w * L * u`` (towards the proximal joint) plus
     ``w * FORESHORTENING_DEPTH_BIAS`` (at most 3.5 cm) along the line of sight from the distal
     joint towards the sensor. The two bones' shifts, computed from the true pose, add up
     along the chain.
  2. *White noise*: the per-joint table of
     :class:`~pic_ros_tools.synthetic.tracker_model.TrackerModel` (4 to 8 mm per axis) times
     ``noise_scale``, 1.3 times larger along camera z (depth), times
     ``clip(depth / 2 m, 0.75, 2)``.
  3. *Bias drift*: Ornstein-Uhlenbeck, ``4 mm * noise_scale``, 6 s correlation time.
  4. *Outliers*: a tracked frame holds a single-joint jump of 5 to 15 cm with probability
     ``outlier_rate``.
  5. *Tracking loss*: 40 % of the takes lose the person once, for 0.3 to 1 s somewhere after
     3 s; those frames are marked untracked and their joints are NaN.

Random draws come from ``np.random.default_rng([seed, stream])`` with separate streams for the
motion, the clock and the tracker errors, so the motion does not depend on the clock; the same
spec gives identical arrays.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.field_of_view import in_field_of_view, VIEW_JOINTS
from pic_ros_tools.synthetic.foreshortening import foreshortening_offsets
from pic_ros_tools.synthetic.kinematics import inside_limits
from pic_ros_tools.synthetic.people import CLOCK_STREAM, ERROR_STREAM, PersonSpec
from pic_ros_tools.synthetic.recording import SyntheticRecording
from pic_ros_tools.synthetic.suite_plan import draw_plan, pointing_angles, stance_joints
from pic_ros_tools.synthetic.tracker_model import (
    bias_drift,
    draw_outliers,
    frame_stamps,
    TrackerModel,
    WHITE_SIGMA,
)

_LOSS_PROBABILITY: Final = 0.4
"""Fraction of the takes that lose the person once."""


def generate_take(spec: PersonSpec) -> SyntheticRecording:
    """
    Generate one take of the robustness suite, deterministically from its spec.

    :param spec: The person, placement, tracker errors and bad start of the take.
    :return: The take, named ``suite<seed>``: measured joints (NaN in lost frames) and the
        noise-free, unshortened truth in Kinect v2 camera space [m], stamps [s], true arm
        angles [rad] and one segment per task (the bad first second is in no segment).
    :raises ConfigError: If the upper body leaves the Kinect v2 field of view or an arm angle
        leaves :data:`~pic_ros_tools.synthetic.ARM_ANGLE_LIMITS_DEG` (the spec cannot be
        generated).
    """
    body = spec.body
    plan = draw_plan(spec.seed, body, spec.bad_start, spec.duration)
    pointing = (
        pointing_angles(plan, body, spec.sensor_in_stance())
        if spec.bad_start == 'pointing' else None
    )
    clock = TrackerModel(loss_duration=0.0)
    stamps = frame_stamps(np.random.default_rng([spec.seed, CLOCK_STREAM]), clock, spec.duration)
    angles, stance = stance_joints(plan, body, stamps, pointing)
    if not inside_limits(angles):
        raise ConfigError(f'take {spec.seed}: an arm angle leaves the anatomical limits')
    rotation, origin = spec.stance_to_camera()
    truth = stance @ rotation.T + origin
    if not np.all(in_field_of_view(truth[:, list(VIEW_JOINTS)])):
        raise ConfigError(
            f'take {spec.seed}: the upper body leaves the Kinect v2 field of view; move the '
            'sensor (height, tilt, lateral offset) or the person'
        )

    rng = np.random.default_rng([spec.seed, ERROR_STREAM])
    has_loss = rng.random() < _LOSS_PROBABILITY
    loss_start = float(rng.uniform(3.0, spec.duration - 2.0))
    loss_length = float(rng.uniform(0.3, 1.0))
    lost = has_loss & (stamps >= loss_start) & (stamps < loss_start + loss_length)
    tracked = ~lost
    errors = TrackerModel(
        white_scale=spec.noise_scale,
        drift_sigma=0.004 * spec.noise_scale,
        outlier_rate=spec.outlier_rate,
        loss_duration=0.0,
    )
    axes = np.array([1.0, 1.0, errors.depth_factor])
    depth = np.clip(truth[:, :, 2:] / 2.0, 0.75, 2.0)
    sigma = errors.white_scale * WHITE_SIGMA[None, :, None] * axes * depth
    white = sigma * rng.standard_normal(truth.shape)
    drift = bias_drift(rng, stamps, errors)
    outliers, jumps = draw_outliers(rng, tracked, errors)
    joints = truth + foreshortening_offsets(truth, spec.foreshortening) + white + drift + jumps
    joints[lost] = np.nan
    segments = tuple(
        (
            int(np.searchsorted(stamps, start, side='left')),
            int(np.searchsorted(stamps, stop, side='left')),
        )
        for _, _, start, stop in plan.tasks
    )
    return SyntheticRecording(
        name=f'suite{spec.seed}',
        seed=spec.seed,
        stamps=stamps,
        joints=joints,
        truth=truth,
        tracked=tracked,
        outliers=outliers,
        arm_angles=angles,
        segments=segments,
        task_names=tuple(name for name, _, _, _ in plan.tasks),
        task_arms=tuple(arm for _, arm, _, _ in plan.tasks),
    )
