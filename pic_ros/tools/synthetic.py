"""
A synthetic Kinect v2 recording of a standing person doing six arm tasks, with tracker noise.

The project ships its own small demo recording (``demo/``, made by
``scripts/make_demo_recording.py``) so that it runs without the PIC paper's data. This module
generates it deterministically from a seed and writes it in exactly the paper's text formats
(see :mod:`pic_ros.human.kinect_v2`).

Model (all lengths in metres, angles in radians unless a name says ``_deg``):

- **Body**: the 25 Kinect v2 joints (:data:`JOINT_NAMES`) on a rigid-segment skeleton
  (:class:`BodyModel`, :data:`BONES`): pelvis, two spine segments, neck, head, shoulders, upper
  arms, forearms, hands, hand tips, thumbs, hips and legs. The pelvis and the legs stand still;
  the trunk turns about the pelvis (half of the turn in the lower spine, all of it above the
  chest) with a slow sway of about 1 degree plus a lean and twist per task.
- **Arms**: four angles per arm (:data:`ARM_ANGLE_NAMES`): shoulder flexion, shoulder abduction,
  humeral rotation (internal positive) and elbow flexion, relative to the chest. Every arm
  position is forward kinematics of these angles, so the bones of the noise-free truth keep their
  lengths exactly. Angles move along minimum-jerk profiles between key poses; key poses are given
  either as angles or as a wrist target in the stance frame, solved by closed-form inverse
  kinematics with a chosen elbow swivel (20 or 35 degrees outwards). Straight strokes
  (incision, alignment slides) follow a straight minimum-jerk wrist path with inverse kinematics
  at every frame. All angles stay inside
  :data:`ARM_ANGLE_LIMITS_DEG` (elbow flexion 0 to 150 degrees).
- **Tasks** (:data:`TASKS`, 34.4 s of a 40 s take): right-arm reach forward and back,
  left-arm wave, arms crossing the body midline, bimanual lift and align (assembly-like),
  right-arm straight strokes on a table (incision-like) and a rest pose, separated by short idle
  gaps that no segment covers, as in the paper's recordings.
- **Placement**: the person stands :data:`SUBJECT_DISTANCE` (1.9 m) in front of a level sensor
  mounted :data:`SENSOR_HEIGHT` (1.1 m) above the floor, facing it, slightly off-centre and
  turned by a few degrees.
- **Frames**: ``stance`` -- origin on the floor below the pelvis, x forward out of the person,
  y to the person's left, z up; Kinect v2 ``camera`` space -- origin at the depth sensor, x to
  the sensor's left (the person's right), y up, z out of the sensor into the scene. The right
  shoulder therefore has the larger camera x.
- **Timing**: a nominal 30 Hz clock with positive processing jitter and about 3 % dropped frames,
  giving a median frame interval near 0.035 s (about 27 frames/s); the first stamp is about
  0.05 s (:class:`TrackerModel`).
- **Tracker errors**: per-joint white noise (4 to 8 mm standard deviation per axis, 30 % more
  along the depth axis z, largest at the hands), a slow per-joint bias drift (Ornstein-Uhlenbeck,
  4 mm, 6 s), occasional single-frame outliers (one distal joint jumps 5 to 15 cm for one frame)
  and one tracking loss of 1.2 s in the middle of the take: those frames are marked lost and
  their joints are NaN.

Random draws use only ``np.random.default_rng(seed)``; the same seed gives identical arrays and
byte-identical files.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
import re
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

JOINT_NAMES: Final[tuple[str, ...]] = (
    'SpineBase',
    'SpineMid',
    'Neck',
    'Head',
    'ShoulderLeft',
    'ElbowLeft',
    'WristLeft',
    'HandLeft',
    'ShoulderRight',
    'ElbowRight',
    'WristRight',
    'HandRight',
    'HipLeft',
    'KneeLeft',
    'AnkleLeft',
    'FootLeft',
    'HipRight',
    'KneeRight',
    'AnkleRight',
    'FootRight',
    'SpineShoulder',
    'HandTipLeft',
    'ThumbLeft',
    'HandTipRight',
    'ThumbRight',
)
"""The 25 Kinect v2 ``JointType`` names in index order (SpineBase = 0 ... ThumbRight = 24)."""

JOINT_COUNT: Final = len(JOINT_NAMES)
"""Number of joints per frame (25)."""

_J: Final = {name: index for index, name in enumerate(JOINT_NAMES)}

BONES: Final[tuple[tuple[int, int], ...]] = tuple(
    (_J[parent], _J[child])
    for parent, child in (
        ('SpineBase', 'SpineMid'),
        ('SpineMid', 'SpineShoulder'),
        ('SpineShoulder', 'Neck'),
        ('Neck', 'Head'),
        ('SpineShoulder', 'ShoulderLeft'),
        ('ShoulderLeft', 'ElbowLeft'),
        ('ElbowLeft', 'WristLeft'),
        ('WristLeft', 'HandLeft'),
        ('HandLeft', 'HandTipLeft'),
        ('WristLeft', 'ThumbLeft'),
        ('SpineShoulder', 'ShoulderRight'),
        ('ShoulderRight', 'ElbowRight'),
        ('ElbowRight', 'WristRight'),
        ('WristRight', 'HandRight'),
        ('HandRight', 'HandTipRight'),
        ('WristRight', 'ThumbRight'),
        ('SpineBase', 'HipLeft'),
        ('HipLeft', 'KneeLeft'),
        ('KneeLeft', 'AnkleLeft'),
        ('AnkleLeft', 'FootLeft'),
        ('SpineBase', 'HipRight'),
        ('HipRight', 'KneeRight'),
        ('KneeRight', 'AnkleRight'),
        ('AnkleRight', 'FootRight'),
    )
)
"""The 24 rigid bones as (parent, child) joint indices; lengths in :attr:`BodyModel.bones`."""

ARM_SIDES: Final[tuple[str, str]] = ('left', 'right')
"""Order of the arms along axis 1 of :attr:`SyntheticRecording.arm_angles`."""

ARM_ANGLE_NAMES: Final[tuple[str, ...]] = (
    'shoulder_flexion',
    'shoulder_abduction',
    'humeral_rotation',
    'elbow_flexion',
)
"""
Order of the angles along axis 2 of :attr:`SyntheticRecording.arm_angles`.

All are relative to the chest and zero with the arm hanging straight down, the palm facing the
thigh. Flexion raises the arm forward, abduction raises it sideways (negative: across the body),
rotation turns the upper arm about its own axis (positive: internal, the flexed forearm swings
towards the body midline), elbow flexion bends the forearm towards the front of the upper arm.
The chest-frame rotation of the upper arm is ``Ry(-flexion) @ Rx(s * abduction) @
Rz(-s * rotation)`` with ``s = +1`` for the left and ``-1`` for the right arm (x forward, y left,
z up).
"""

ARM_ANGLE_LIMITS_DEG: Final[tuple[tuple[float, float], ...]] = (
    (-30.0, 180.0),
    (-45.0, 150.0),
    (-90.0, 90.0),
    (0.0, 150.0),
)
"""Anatomical range [deg] of each angle of :data:`ARM_ANGLE_NAMES`; generation checks it."""

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

DURATION: Final = 40.0
"""Length of the take [s]: frames are captured from about 0.05 s up to this time."""

NOMINAL_RATE: Final = 30.0
"""Nominal Kinect v2 body-frame rate [Hz]."""

_ARM_VALUES: Final = ('left', 'right', 'both')
_NAME_PATTERN: Final = re.compile(r'^(?P<task>.+?)(?P<number>\d+)$')
_FLOAT_FORMAT: Final = '{:.6f}'


@dataclass(frozen=True)
class BodyModel:
    """
    Segment lengths and offsets of the synthetic person, calibrated on the PIC recordings.

    All values in metres. Offsets are in the chest or pelvis frame (x forward, y left, z up).

    :param pelvis_height: Height of SpineBase above the floor.
    :param lower_spine: SpineBase to SpineMid.
    :param upper_spine: SpineMid to SpineShoulder.
    :param neck: SpineShoulder to Neck.
    :param head: Neck to Head.
    :param shoulder_half_width: Sideways offset of each shoulder from SpineShoulder (the
        shoulder-to-shoulder width is twice this).
    :param shoulder_drop: Downward offset of the shoulders from SpineShoulder.
    :param upper_arm: Shoulder to elbow.
    :param forearm: Elbow to wrist.
    :param hand: Wrist to HandTip's parent, the Hand joint.
    :param hand_tip: Hand to HandTip.
    :param thumb: Wrist to Thumb.
    :param hip_half_width: Sideways offset of each hip from SpineBase.
    :param hip_drop: Downward offset of the hips from SpineBase.
    :param thigh: Hip to knee.
    :param shank: Knee to ankle.
    :param foot: Ankle to foot.
    """

    pelvis_height: float = 1.00
    lower_spine: float = 0.26
    upper_spine: float = 0.19
    neck: float = 0.062
    head: float = 0.135
    shoulder_half_width: float = 0.165
    shoulder_drop: float = 0.04
    upper_arm: float = 0.25
    forearm: float = 0.22
    hand: float = 0.065
    hand_tip: float = 0.085
    thumb: float = 0.075
    hip_half_width: float = 0.075
    hip_drop: float = 0.025
    thigh: float = 0.45
    shank: float = 0.42
    foot: float = 0.13

    @property
    def bones(self) -> FloatArray:
        """
        Return the length of every bone of :data:`BONES`.

        :return: New array, shape (24,), [m], in :data:`BONES` order.
        """
        shoulder = float(np.hypot(self.shoulder_half_width, self.shoulder_drop))
        hip = float(np.hypot(self.hip_half_width, self.hip_drop))
        arm = [shoulder, self.upper_arm, self.forearm, self.hand, self.hand_tip, self.thumb]
        leg = [hip, self.thigh, self.shank, self.foot]
        spine = [self.lower_spine, self.upper_spine, self.neck, self.head]
        return np.array(spine + arm + arm + leg + leg, dtype=np.float64)


BODY: Final = BodyModel()
"""The body of the generated person."""


@dataclass(frozen=True)
class TrackerModel:
    """
    Frame timing and tracker errors of the synthetic Kinect v2.

    :param white_scale: Factor on the per-joint white-noise table (standard deviation per axis:
        4 mm at the spine, head and hips, 4.5 mm at the shoulders, 5 mm at elbows and knees,
        6 mm at wrists, ankles and feet, 7 mm at hands, 8 mm at hand tips and thumbs; z gets
        ``depth_factor`` times more). 0 disables it.
    :param depth_factor: Extra factor on the white noise along camera z (depth).
    :param drift_sigma: Stationary standard deviation of the per-joint, per-axis bias drift [m].
    :param drift_time: Correlation time of the bias drift [s].
    :param outlier_rate: Probability that a tracked frame holds one outlier.
    :param outlier_min: Smallest outlier jump [m].
    :param outlier_max: Largest outlier jump [m].
    :param loss_start: Time at which tracking is lost [s since the start of the take].
    :param loss_duration: Length of the tracking loss [s]; 0 disables it.
    :param jitter_sigma: Standard deviation of the symmetric frame-interval jitter [s].
    :param delay_mean: Mean of the positive (gamma, shape 2) processing delay per interval [s].
    :param drop_probability: Probability that a frame interval is one nominal period longer
        (a dropped frame).
    :raises ConfigError: If a value is negative, not finite or out of its range.
    """

    white_scale: float = 1.0
    depth_factor: float = 1.3
    drift_sigma: float = 0.004
    drift_time: float = 6.0
    outlier_rate: float = 0.012
    outlier_min: float = 0.05
    outlier_max: float = 0.15
    loss_start: float = 17.7
    loss_duration: float = 1.2
    jitter_sigma: float = 0.0008
    delay_mean: float = 0.0022
    drop_probability: float = 0.03

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise ConfigError(
                    f'TrackerModel.{name} must be a finite number >= 0, got {value!r}'
                )
        if self.drift_time <= 0:
            raise ConfigError(f'TrackerModel.drift_time must be > 0, got {self.drift_time!r}')
        if self.outlier_rate > 1 or self.drop_probability >= 1:
            raise ConfigError('TrackerModel.outlier_rate must be <= 1, drop_probability < 1')
        if self.outlier_min > self.outlier_max:
            raise ConfigError('TrackerModel.outlier_min must not exceed outlier_max')
        if self.loss_start + self.loss_duration > DURATION:
            raise ConfigError(f'the tracking loss must end within the {DURATION} s take')


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


def _read_only(array: npt.ArrayLike) -> FloatArray:
    frozen = np.array(array, dtype=np.float64)
    frozen.setflags(write=False)
    return frozen


def _read_only_flags(array: npt.ArrayLike) -> BoolArray:
    frozen = np.array(array, dtype=np.bool_)
    frozen.setflags(write=False)
    return frozen


@dataclass(frozen=True, eq=False)
class SyntheticRecording:
    """
    A generated take: measured and true joints, tracking state and labelled segments.

    Instances compare by identity (``eq=False``); their arrays are read-only copies.

    :param name: Recording name ``<task><n>``, e.g. ``'synthetic1'``.
    :param seed: Seed of the generator that made it.
    :param stamps: Capture times, shape (T,), [s since the start of the take], strictly
        increasing; lost frames have stamps too.
    :param joints: Measured joints, shape (T, 25, 3), [m], Kinect v2 camera space,
        :data:`JOINT_NAMES` order; rows of lost frames are NaN.
    :param truth: Noise-free joints, shape (T, 25, 3), [m], camera space, finite for every frame
        (including lost ones).
    :param tracked: Whether the body was tracked in each frame, shape (T,).
    :param outliers: Which joints carry a single-frame outlier, shape (T, 25); never set on
        lost frames.
    :param arm_angles: True arm angles, shape (T, 2, 4), [rad]; axis 1 in :data:`ARM_SIDES`
        order, axis 2 in :data:`ARM_ANGLE_NAMES` order.
    :param segments: One ``(start, stop)`` per task: 0-based half-open frame ranges into the
        T frames, in take order.
    :param task_names: Label of each segment.
    :param task_arms: Arm(s) of each segment: ``'left'``, ``'right'`` or ``'both'``.
    :raises ConfigError: On inconsistent shapes, a segment outside the recording or an unknown
        arm.
    """

    name: str
    seed: int
    stamps: FloatArray
    joints: FloatArray
    truth: FloatArray
    tracked: BoolArray
    outliers: BoolArray
    arm_angles: FloatArray
    segments: tuple[tuple[int, int], ...]
    task_names: tuple[str, ...]
    task_arms: tuple[str, ...]

    def __post_init__(self) -> None:
        stamps = _read_only(self.stamps)
        count = stamps.shape[0]
        arrays = {
            'joints': (_read_only(self.joints), (count, JOINT_COUNT, 3)),
            'truth': (_read_only(self.truth), (count, JOINT_COUNT, 3)),
            'tracked': (_read_only_flags(self.tracked), (count,)),
            'outliers': (_read_only_flags(self.outliers), (count, JOINT_COUNT)),
            'arm_angles': (_read_only(self.arm_angles), (count, 2, len(ARM_ANGLE_NAMES))),
        }
        if stamps.ndim != 1 or (count > 1 and not np.all(np.diff(stamps) > 0)):
            raise ConfigError(f'{self.name}: stamps must have shape (T,) and increase strictly')
        for field_name, (array, shape) in arrays.items():
            if array.shape != shape:
                raise ConfigError(
                    f'{self.name}: {field_name} must have shape {shape}, got {array.shape}'
                )
        object.__setattr__(self, 'stamps', stamps)
        for field_name, (array, _) in arrays.items():
            object.__setattr__(self, field_name, array)
        if not len(self.segments) == len(self.task_names) == len(self.task_arms):
            raise ConfigError(f'{self.name}: segments, task_names and task_arms differ in length')
        for start, stop in self.segments:
            if not 0 <= start < stop <= count:
                raise ConfigError(
                    f'{self.name}: segment ({start}, {stop}) is not inside the {count} frames'
                )
        for arm in self.task_arms:
            if arm not in _ARM_VALUES:
                raise ConfigError(
                    f'{self.name}: task arm must be one of {_ARM_VALUES}, got {arm!r}'
                )

    def __len__(self) -> int:
        """Return the number of frames T, lost ones included."""
        return int(self.stamps.shape[0])

    def segment_lines(self) -> tuple[tuple[int, int], ...]:
        """
        Return the segments as line numbers of the written skeleton file.

        The file holds only tracked frames, so line ``k`` (1-based) is the ``k``-th tracked
        frame. Each segment maps to its first and last tracked frame.

        :return: One ``(first, last)`` per segment, 1-based inclusive line numbers.
        :raises ConfigError: If a segment holds no tracked frame.
        """
        line_of = np.cumsum(self.tracked)
        result = []
        for start, stop in self.segments:
            inside = np.flatnonzero(self.tracked[start:stop])
            if inside.size == 0:
                raise ConfigError(f'{self.name}: segment ({start}, {stop}) has no tracked frame')
            first = int(line_of[start + inside[0]])
            last = int(line_of[start + inside[-1]])
            result.append((first, last))
        return tuple(result)


# --- Kinematics --------------------------------------------------------------------------------


def _rot_x(angle: FloatArray) -> FloatArray:
    cos, sin = np.cos(angle), np.sin(angle)
    matrix = np.zeros(angle.shape + (3, 3))
    matrix[..., 0, 0] = 1.0
    matrix[..., 1, 1] = cos
    matrix[..., 1, 2] = -sin
    matrix[..., 2, 1] = sin
    matrix[..., 2, 2] = cos
    return matrix


def _rot_y(angle: FloatArray) -> FloatArray:
    cos, sin = np.cos(angle), np.sin(angle)
    matrix = np.zeros(angle.shape + (3, 3))
    matrix[..., 1, 1] = 1.0
    matrix[..., 0, 0] = cos
    matrix[..., 0, 2] = sin
    matrix[..., 2, 0] = -sin
    matrix[..., 2, 2] = cos
    return matrix


def _rot_z(angle: FloatArray) -> FloatArray:
    cos, sin = np.cos(angle), np.sin(angle)
    matrix = np.zeros(angle.shape + (3, 3))
    matrix[..., 2, 2] = 1.0
    matrix[..., 0, 0] = cos
    matrix[..., 0, 1] = -sin
    matrix[..., 1, 0] = sin
    matrix[..., 1, 1] = cos
    return matrix


def _apply(matrix: FloatArray, vector: npt.ArrayLike) -> FloatArray:
    """Rotate a fixed vector (3,) or per-frame vectors (N, 3) by (N, 3, 3) matrices."""
    vectors = np.asarray(vector, dtype=np.float64)
    if vectors.ndim == 1:
        return matrix @ vectors
    rotated: FloatArray = np.einsum('nij,nj->ni', matrix, vectors)
    return rotated


def _unit(vector: npt.ArrayLike) -> FloatArray:
    array = np.asarray(vector, dtype=np.float64)
    return array / np.linalg.norm(array)


def _min_jerk(phase: FloatArray) -> FloatArray:
    """Minimum-jerk profile 10 s^3 - 15 s^4 + 6 s^5 of a phase clipped to [0, 1]."""
    s = np.clip(phase, 0.0, 1.0)
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


def _interpolate(times: FloatArray, key_times: FloatArray, key_values: FloatArray) -> FloatArray:
    """Minimum-jerk interpolation of (K, D) key values at (N,) times; held outside the keys."""
    index = np.clip(np.searchsorted(key_times, times, side='right') - 1, 0, len(key_times) - 2)
    start, stop = key_times[index], key_times[index + 1]
    weight = _min_jerk((times - start) / (stop - start))[:, None]
    return key_values[index] + weight * (key_values[index + 1] - key_values[index])


@dataclass(frozen=True)
class _Trunk:
    """Trunk state per frame: rotations (N, 3, 3) of the lower spine and chest, head nod (N,)."""

    lower: FloatArray
    chest: FloatArray
    nod: FloatArray

    def spine_shoulder(self, body: BodyModel) -> FloatArray:
        pelvis = np.array([0.0, 0.0, body.pelvis_height])
        mid = pelvis + _apply(self.lower, [0.0, 0.0, body.lower_spine])
        return mid + _apply(self.chest, [0.0, 0.0, body.upper_spine])

    def shoulder(self, body: BodyModel, lateral: int) -> FloatArray:
        offset = [0.0, lateral * body.shoulder_half_width, -body.shoulder_drop]
        return self.spine_shoulder(body) + _apply(self.chest, offset)


# Trunk lean (forward pitch) and twist (yaw, to the person's left) in degrees at key times [s].
_TRUNK_KEYS: Final = np.array(
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

# Sway: amplitude [deg] and frequency [Hz] of two sinusoids per axis (yaw, pitch, roll).
_SWAY_AMPLITUDE_DEG: Final = np.array([[1.2, 0.4], [0.8, 0.3], [1.0, 0.3]])
_SWAY_FREQUENCY: Final = np.array([[0.07, 0.23], [0.11, 0.31], [0.13, 0.27]])


def _trunk(
    times: FloatArray, sway_phase: FloatArray, keys: FloatArray | None = None
) -> _Trunk:
    """
    Trunk rotations at (N,) times [s]: lean and twist keys plus a slow sway.

    ``keys`` (K, 3): time [s], lean (forward pitch) [deg], twist (yaw to the left) [deg],
    interpolated along minimum-jerk profiles; default the demo take's :data:`_TRUNK_KEYS`.
    """
    keys = _TRUNK_KEYS if keys is None else keys
    lean_twist = np.radians(_interpolate(times, keys[:, 0], keys[:, 1:]))
    waves = np.sin(
        2.0 * np.pi * _SWAY_FREQUENCY[None] * times[:, None, None] + sway_phase[None]
    )
    sway = np.radians(np.sum(_SWAY_AMPLITUDE_DEG[None] * waves, axis=2))
    yaw = lean_twist[:, 1] + sway[:, 0]
    pitch = lean_twist[:, 0] + sway[:, 1]
    roll = sway[:, 2]
    lower = _rot_z(0.5 * yaw) @ _rot_y(0.5 * pitch) @ _rot_x(0.5 * roll)
    chest = _rot_z(yaw) @ _rot_y(pitch) @ _rot_x(roll)
    return _Trunk(lower=lower, chest=chest, nod=1.2 * pitch)


def _upper_arm_rotation(angles: FloatArray, lateral: int) -> FloatArray:
    flexion, abduction, rotation = angles[:, 0], angles[:, 1], angles[:, 2]
    return _rot_y(-flexion) @ _rot_x(lateral * abduction) @ _rot_z(-lateral * rotation)


def _arm_ik(
    relative: FloatArray, swivel: FloatArray, lateral: int, body: BodyModel
) -> FloatArray:
    """
    Solve the arm angles that put the wrist at a point.

    :param relative: Wrist target minus shoulder, shape (N, 3), [m], chest frame.
    :param swivel: Elbow swivel about the shoulder-wrist line, shape (N,), [rad]; 0 puts the
        elbow as low as possible, positive moves it outwards (for targets in front).
    :param lateral: +1 for the left arm, -1 for the right arm.
    :param body: Segment lengths.
    :return: Angles, shape (N, 4), [rad], :data:`ARM_ANGLE_NAMES` order.
    :raises ConfigError: If a target is out of reach or straight below or above the shoulder.
    """
    upper, fore = body.upper_arm, body.forearm
    distance = np.linalg.norm(relative, axis=1)
    if np.any(distance > 0.995 * (upper + fore)) or np.any(distance < 1.05 * abs(upper - fore)):
        raise ConfigError('synthetic arm plan: a wrist target is out of reach')
    axis = relative / distance[:, None]
    down = np.array([0.0, 0.0, -1.0])
    across = down[None] - (axis @ down)[:, None] * axis
    across_norm = np.linalg.norm(across, axis=1)
    if np.any(across_norm < 0.1):
        raise ConfigError('synthetic arm plan: a wrist target is straight below or above')
    first = across / across_norm[:, None]
    second = lateral * np.cross(axis, first)
    along = (upper**2 - fore**2 + distance**2) / (2.0 * distance)
    radius = np.sqrt(upper**2 - along**2)
    elbow = along[:, None] * axis + radius[:, None] * (
        np.cos(swivel)[:, None] * first + np.sin(swivel)[:, None] * second
    )
    direction = elbow / upper
    abduction = np.arcsin(np.clip(lateral * direction[:, 1], -1.0, 1.0))
    flexion = np.arctan2(direction[:, 0], -direction[:, 2])
    cos_inner = (upper**2 + fore**2 - distance**2) / (2.0 * upper * fore)
    elbow_flexion = np.pi - np.arccos(np.clip(cos_inner, -1.0, 1.0))
    forearm = (relative - elbow) / fore
    partial = _rot_y(-flexion) @ _rot_x(lateral * abduction)
    local = np.einsum('nji,nj->ni', partial, forearm)
    rotation = -lateral * np.arctan2(local[:, 1], local[:, 0])
    return np.stack([flexion, abduction, rotation, elbow_flexion], axis=1)


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


def _right_plan() -> tuple[_Key, ...]:
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


def _left_plan() -> tuple[_Key, ...]:
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


def _take(trunk: _Trunk, index: npt.NDArray[np.intp] | BoolArray) -> _Trunk:
    return _Trunk(lower=trunk.lower[index], chest=trunk.chest[index], nod=trunk.nod[index])


def _solve_points(
    points: FloatArray, swivel: FloatArray, lateral: int, trunk: _Trunk, body: BodyModel
) -> FloatArray:
    """Arm angles (N, 4) [rad] that put the wrist at stance-frame points (N, 3) [m]."""
    shoulder = trunk.shoulder(body, lateral)
    relative = np.einsum('nji,nj->ni', trunk.chest, points - shoulder)
    return _arm_ik(relative, swivel, lateral, body)


def _arm_angles(
    plan: tuple[_Key, ...], lateral: int, times: FloatArray, sway_phase: FloatArray,
    body: BodyModel,
) -> FloatArray:
    """Evaluate one arm's key plan at (N,) times [s]: angles (N, 4) [rad]."""
    key_times = np.array([key.time for key in plan])
    if np.any(np.diff(key_times) <= 0):
        raise ConfigError('synthetic arm plan: key times must increase strictly')
    key_trunk = _trunk(key_times, sway_phase)
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
    angles = _interpolate(times, key_times, resolved)
    trunk = _trunk(times, sway_phase)
    for before, key in zip(plan[:-1], plan[1:]):
        if not key.line:
            continue
        if before.point is None or key.point is None:
            raise ConfigError('synthetic arm plan: a straight stroke needs points at both ends')
        inside = np.flatnonzero((times >= before.time) & (times < key.time))
        if inside.size == 0:
            continue
        phase = _min_jerk((times[inside] - before.time) / (key.time - before.time))
        start, stop = np.array(before.point), np.array(key.point)
        points = start + phase[:, None] * (stop - start)
        swivel = np.radians(before.swivel_deg + phase * (key.swivel_deg - before.swivel_deg))
        angles[inside] = _solve_points(points, swivel, lateral, _take(trunk, inside), body)
    return angles


_HEAD_DIRECTION: Final = _unit([0.12, 0.0, 1.0])


def _skeleton(angles: FloatArray, trunk: _Trunk, body: BodyModel) -> FloatArray:
    """Joint positions (N, 25, 3) [m] in the stance frame from arm angles (N, 2, 4) [rad]."""
    count = angles.shape[0]
    joints = np.empty((count, JOINT_COUNT, 3))
    pelvis = np.array([0.0, 0.0, body.pelvis_height])
    mid = pelvis + _apply(trunk.lower, [0.0, 0.0, body.lower_spine])
    chest = mid + _apply(trunk.chest, [0.0, 0.0, body.upper_spine])
    neck = chest + _apply(trunk.chest, [0.0, 0.0, body.neck])
    head = neck + body.head * _apply(trunk.chest @ _rot_y(trunk.nod), _HEAD_DIRECTION)
    joints[:, _J['SpineBase']] = pelvis
    joints[:, _J['SpineMid']] = mid
    joints[:, _J['SpineShoulder']] = chest
    joints[:, _J['Neck']] = neck
    joints[:, _J['Head']] = head
    down = np.array([0.0, 0.0, -1.0])
    for arm_index, (side, lateral) in enumerate((('Left', 1), ('Right', -1))):
        shoulder = chest + _apply(
            trunk.chest, [0.0, lateral * body.shoulder_half_width, -body.shoulder_drop]
        )
        upper = trunk.chest @ _upper_arm_rotation(angles[:, arm_index], lateral)
        elbow = shoulder + body.upper_arm * _apply(upper, down)
        fore = upper @ _rot_y(-angles[:, arm_index, 3])
        wrist = elbow + body.forearm * _apply(fore, down)
        hand = wrist + body.hand * _apply(fore, _unit([0.05, -lateral * 0.12, -1.0]))
        tip = hand + body.hand_tip * _apply(fore, _unit([0.08, -lateral * 0.2, -1.0]))
        thumb = wrist + body.thumb * _apply(fore, _unit([0.7, -lateral * 0.3, -0.65]))
        hip = pelvis + np.array([0.0, lateral * body.hip_half_width, -body.hip_drop])
        knee = hip + body.thigh * _unit([0.01, lateral * 0.03, -1.0])
        ankle = knee + body.shank * _unit([-0.01, lateral * 0.01, -1.0])
        foot = ankle + body.foot * _unit([1.0, lateral * 0.15, -0.25])
        for joint, value in (
            ('Shoulder', shoulder), ('Elbow', elbow), ('Wrist', wrist), ('Hand', hand),
            ('HandTip', tip), ('Thumb', thumb), ('Hip', hip), ('Knee', knee),
            ('Ankle', ankle), ('Foot', foot),
        ):
            joints[:, _J[joint + side]] = value
    return joints


STANCE_TO_CAMERA: Final[FloatArray] = _read_only(
    np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
    @ _rot_z(np.array(np.radians(SUBJECT_YAW_DEG)))
)
"""
Rotation camera <- stance, shape (3, 3), read-only: ``p_c = R @ p_s + STANCE_ORIGIN``.

Without the person's yaw it maps forward to -z, left to -x and up to +y.
"""

STANCE_ORIGIN: Final[FloatArray] = _read_only(
    [SUBJECT_OFFSET, -SENSOR_HEIGHT, SUBJECT_DISTANCE]
)
"""Camera-space position [m] of the stance origin (the floor below the pelvis), shape (3,)."""


def _to_camera(points: FloatArray) -> FloatArray:
    return points @ STANCE_TO_CAMERA.T + STANCE_ORIGIN


# --- Tracker ------------------------------------------------------------------------------------

_WHITE_SIGMA: Final = np.array(
    [
        0.004, 0.004, 0.004, 0.004,  # SpineBase, SpineMid, Neck, Head
        0.0045, 0.005, 0.006, 0.007,  # ShoulderLeft, ElbowLeft, WristLeft, HandLeft
        0.0045, 0.005, 0.006, 0.007,  # ShoulderRight, ElbowRight, WristRight, HandRight
        0.004, 0.005, 0.006, 0.006,  # HipLeft, KneeLeft, AnkleLeft, FootLeft
        0.004, 0.005, 0.006, 0.006,  # HipRight, KneeRight, AnkleRight, FootRight
        0.004, 0.008, 0.008, 0.008, 0.008,  # SpineShoulder, HandTip/Thumb Left, Right
    ]
)
_OUTLIER_WEIGHTS: Final = {
    'Elbow': 2.0, 'Wrist': 3.0, 'Hand': 3.0, 'HandTip': 2.0, 'Thumb': 2.0,
    'Knee': 1.0, 'Ankle': 1.0, 'Foot': 1.0,
}


def _stamps(
    rng: np.random.Generator, tracker: TrackerModel, duration: float = DURATION
) -> FloatArray:
    """Kinect-like capture times (T,) [s] from about 0.05 s up to ``duration`` (exclusive)."""
    period = 1.0 / NOMINAL_RATE
    count = int(duration / (0.6 * period)) + 2
    jitter = rng.normal(0.0, tracker.jitter_sigma, count)
    delay = rng.gamma(2.0, tracker.delay_mean / 2.0, count)
    dropped = rng.random(count) < tracker.drop_probability
    steps = np.maximum(period + jitter + delay + dropped * period, 0.6 * period)
    first = 0.04 + 0.02 * rng.random()
    stamps = first + np.concatenate([[0.0], np.cumsum(steps[:-1])])
    return stamps[stamps < duration]


def _drift(rng: np.random.Generator, stamps: FloatArray, tracker: TrackerModel) -> FloatArray:
    """Ornstein-Uhlenbeck bias per joint and axis, shape (T, 25, 3), [m], stationary start."""
    shocks = rng.standard_normal((stamps.shape[0], JOINT_COUNT, 3))
    decay = np.exp(-np.diff(stamps) / tracker.drift_time)
    spread = np.sqrt(1.0 - decay**2)
    drift = np.empty_like(shocks)
    drift[0] = shocks[0]
    for index in range(1, stamps.shape[0]):
        drift[index] = decay[index - 1] * drift[index - 1] + spread[index - 1] * shocks[index]
    return tracker.drift_sigma * drift


def _outliers(
    rng: np.random.Generator, tracked: BoolArray, tracker: TrackerModel
) -> tuple[BoolArray, FloatArray]:
    """Draw single-frame outliers: mask (T, 25) and jumps (T, 25, 3) [m]."""
    count = tracked.shape[0]
    candidates = [
        (_J[joint + side], weight)
        for joint, weight in _OUTLIER_WEIGHTS.items()
        for side in ('Left', 'Right')
    ]
    indices = np.array([index for index, _ in candidates])
    weights = np.array([weight for _, weight in candidates])
    hit = (rng.random(count) < tracker.outlier_rate) & tracked
    joint = indices[rng.choice(indices.size, size=count, p=weights / weights.sum())]
    size = np.asarray(rng.uniform(tracker.outlier_min, tracker.outlier_max, count))
    direction = rng.standard_normal((count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    mask = np.zeros((count, JOINT_COUNT), dtype=bool)
    jumps = np.zeros((count, JOINT_COUNT, 3))
    frames = np.flatnonzero(hit)
    mask[frames, joint[frames]] = True
    jumps[frames, joint[frames]] = size[frames, None] * direction[frames]
    return mask, jumps


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
    if _NAME_PATTERN.match(name) is None:
        raise ConfigError(f'recording name {name!r} must end with a take number, e.g. synthetic1')
    tracker = TrackerModel() if tracker is None else tracker
    rng = np.random.default_rng(seed)
    stamps = _stamps(rng, tracker)
    sway_phase = rng.uniform(0.0, 2.0 * np.pi, _SWAY_FREQUENCY.shape)
    angles = np.stack(
        [
            _arm_angles(_left_plan(), 1, stamps, sway_phase, BODY),
            _arm_angles(_right_plan(), -1, stamps, sway_phase, BODY),
        ],
        axis=1,
    )
    limits = np.radians(np.array(ARM_ANGLE_LIMITS_DEG))
    if np.any(angles < limits[:, 0] - 1e-9) or np.any(angles > limits[:, 1] + 1e-9):
        raise ConfigError('synthetic arm plan leaves the anatomical angle limits')
    truth = _to_camera(_skeleton(angles, _trunk(stamps, sway_phase), BODY))
    lost = (stamps >= tracker.loss_start) & (stamps < tracker.loss_start + tracker.loss_duration)
    tracked = ~lost
    axes = np.array([1.0, 1.0, tracker.depth_factor])
    sigma = tracker.white_scale * _WHITE_SIGMA[:, None] * axes
    white = sigma * rng.standard_normal(truth.shape)
    drift = _drift(rng, stamps, tracker)
    outliers, jumps = _outliers(rng, tracked, tracker)
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


# --- Writers ------------------------------------------------------------------------------------


def _number(value: float) -> str:
    text = _FLOAT_FORMAT.format(value)
    return '0.000000' if text == '-0.000000' else text


def write_kinect_v2_text(
    recording: SyntheticRecording, directory: Path | str, name: str | None = None
) -> tuple[Path, ...]:
    """
    Write a recording in the PIC paper's Kinect v2 text formats.

    Files, all UTF-8 text with Unix line ends, numbers with 6 decimals:

    - ``<name>_skel.txt``: one line per **tracked** frame (lost frames are left out, as in the
      real recordings), 75 numbers: 25 joints x (x, y, z), joint-major, [m], Kinect v2 camera
      space (x to the sensor's left, y up, z into the scene);
    - ``<name>_skelts.txt``: the stamp of each written line [s];
    - ``<task>_<n>.txt`` for ``name == '<task><n>'``: one segment per line, ``first last``,
      1-based inclusive line numbers of the written skeleton file
      (:meth:`SyntheticRecording.segment_lines`);
    - ``<name>_config.json``: ``arm`` (one of ``right``/``left``/``both`` per segment, as in the
      paper's configs), ``task_names``, ``synthetic`` (true) and ``seed``.

    :param recording: The recording to write.
    :param directory: Output directory; created if missing.
    :param name: Recording name ``<task><n>``; default ``recording.name``.
    :return: Paths written: skeleton, stamps, segments, config.
    :raises ConfigError: If the name does not end with a take number or a segment holds no
        tracked frame.
    :raises OSError: If a file cannot be written.
    """
    name = recording.name if name is None else name
    match = _NAME_PATTERN.match(name)
    if match is None:
        raise ConfigError(f'recording name {name!r} must end with a take number, e.g. synthetic1')
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rows = recording.joints[recording.tracked].reshape(-1, 3 * JOINT_COUNT)
    skeleton = ''.join(' '.join(_number(value) for value in row) + '\n' for row in rows)
    stamps = ''.join(_number(value) + '\n' for value in recording.stamps[recording.tracked])
    segments = ''.join(f'{first} {last}\n' for first, last in recording.segment_lines())
    config = {
        'arm': list(recording.task_arms),
        'task_names': list(recording.task_names),
        'synthetic': True,
        'seed': recording.seed,
    }
    files = (
        (directory / f'{name}_skel.txt', skeleton),
        (directory / f'{name}_skelts.txt', stamps),
        (directory / f"{match['task']}_{match['number']}.txt", segments),
        (directory / f'{name}_config.json', json.dumps(config, indent=4) + '\n'),
    )
    for path, text in files:
        path.write_text(text, encoding='utf-8', newline='\n')
    return tuple(path for path, _ in files)
