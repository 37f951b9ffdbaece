"""
Labelled head-and-hands takes: a person turns and tilts the head and opens and closes the hands.

:func:`generate_head_hands_take` makes one take of a suite person
(:class:`~pic_ros_tools.synthetic.people.PersonSpec`, face and hands from
:func:`~pic_ros_tools.synthetic.face_hands.face_hand_geometry`) as the 19 rows of
:class:`~pic_ros.skeleton.HumanJoint` of an Azure-Kinect-like tracker (every row, face
included), with the truth: the head's yaw and pitch relative to the true body frame, and each
hand's annotated state. Deterministic from the spec's seed. Lengths in metres, times in seconds.

Model:

- **Body**: the suite person (:attr:`PersonSpec.body`) stands with a slow trunk sway and holds
  both hands in front, as when teleoperating: each arm moves between key poses every 1.5 to
  3.5 s (shoulder flexion 25-60 deg, abduction 5-25 deg, internal rotation 0-35 deg, elbow
  flexion 60-100 deg) along minimum-jerk profiles.
- **Head**: holds of 0.5 to 2 s, then a minimum-jerk turn to a new yaw (-60 to 60 deg), pitch
  (-25 to 35 deg, positive down) and roll (-8 to 8 deg) at a peak angular speed of 120 to
  250 deg/s (voluntary head turns; the duration follows from the largest angle change, at least
  0.3 s); the head pivots at the neck. The truth is ``Rz(yaw) Ry(pitch) Rx(roll)`` relative to
  the body frame of the noise-free joints (:func:`~pic_ros.human.body_frame.body_axes`), so
  truth and estimator share one definition. The face is the person's own (head size, nose
  drop), not the median face the estimator assumes.
- **Hands**: each hand holds its state 0.7 to 3 s, then changes in 0.2 to 0.35 s (minimum jerk
  between the open and the closed shape, :meth:`FaceHandGeometry.hand_points`); the annotation
  switches at the middle of the change. The hand's axes follow the forearm (palm towards the
  body midline, thumb up when the forearm points forward).
- **Tracker** (in camera space, the placement of the spec; :data:`FINGER_SIGMA` and the episode
  rates are assumptions, stated because no labelled finger data exist here):

  1. white noise per row and axis: the body rows as the suite's Kinect v2 table (4-7 mm), the
     face rows :data:`FACE_SIGMA`, the hand tips and thumbs :data:`FINGER_SIGMA`, all times
     ``noise_scale``, 1.3 times more along depth, times ``clip(depth / 2 m, 0.75, 2)``;
  2. a slow bias drift per row (Ornstein-Uhlenbeck, 6 s): 4 mm times ``noise_scale`` on the
     body and finger rows, 2 mm on the face rows;
  3. finger episodes per hand, each starting in a frame with a small probability: tip and
     thumb *swapped* (0.5 %, 1-4 frames), both *collapsed* onto the hand joint within 1 cm as
     when the tracker loses the fingers (0.5 %, 2-6 frames, up to 0.2 s: a closed-looking
     flicker of an open hand), both *dropped* (invalid, 0.3 %, 3-15 frames), and single-frame
     *outliers* of one finger point by 5-15 cm (1 %).

  No whole-body tracking loss and no foreshortening are modelled here (the pose suite has
  them); the person faces the sensor within the spec's bearing.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.skeleton import HumanJoint, JOINT_COUNT, make_frame, Side, SkeletonFrame
from pic_ros.trackers.kinect_v2 import camera_to_tracker, KINECT_V2_TO_HUMAN
from pic_ros_tools.synthetic.face_hands import face_hand_geometry, FaceHandGeometry
from pic_ros_tools.synthetic.kinematics import (
    rot_x,
    rot_y,
    rot_z,
    skeleton_joints,
    upper_arm_rotation,
)
from pic_ros_tools.synthetic.motion import interpolate, min_jerk, trunk_at
from pic_ros_tools.synthetic.people import CLOCK_STREAM, PersonSpec
from pic_ros_tools.synthetic.skeleton import JOINT_INDEX
from pic_ros_tools.synthetic.tracker_model import frame_stamps, TrackerModel, WHITE_SIGMA

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

MOTION_STREAM: Final = 4
"""Stream of ``np.random.default_rng([seed, stream])`` drawing the head, arm and hand motion."""

ERROR_STREAM: Final = 5
"""Stream drawing the tracker errors of a head-and-hands take."""

FACE_SIGMA: Final = 0.005
"""
White noise of the nose and ear points per axis [m], before ``noise_scale``.

The real Azure Kinect bag's nose and ears jitter by 3-4 mm per axis at 1.2 m.
"""

FINGER_SIGMA: Final = 0.008
"""
White noise of the hand tip and thumb points per axis [m], before ``noise_scale``.

The suite's Kinect v2 value for these joints (:data:`~pic_ros_tools.synthetic.WHITE_SIGMA`); the
real recordings jitter by 4-9 mm per axis (thumbs of the PIC Kinect v2 takes at 2 m, hand tips
and thumbs of the Azure Kinect bag at 1.2 m), and ``noise_scale`` spans 0.5 to 2 times it.
"""

HEAD_YAW_RANGE_DEG: Final = (-60.0, 60.0)
"""Range of the head yaw keys [deg], positive to the person's left."""

HEAD_PITCH_RANGE_DEG: Final = (-25.0, 35.0)
"""Range of the head pitch keys [deg], positive looking down."""

HAND_HOLD_RANGE: Final = (0.7, 3.0)
"""How long a hand holds a state [s]."""

HAND_CHANGE_RANGE: Final = (0.2, 0.35)
"""How long a hand takes to open or close [s]."""

_SIDES: Final = (Side.LEFT, Side.RIGHT)
_FACE_ROWS: Final = (HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT)
_HAND_ROWS: Final = {
    Side.LEFT: (HumanJoint.HAND_LEFT, HumanJoint.HAND_TIP_LEFT, HumanJoint.THUMB_LEFT),
    Side.RIGHT: (HumanJoint.HAND_RIGHT, HumanJoint.HAND_TIP_RIGHT, HumanJoint.THUMB_RIGHT),
}


@dataclass(frozen=True, eq=False)
class HeadHandsTake:
    """
    A labelled head-and-hands take.

    :param name: ``head_hands<seed>``.
    :param spec: The person and placement.
    :param geometry: The person's face and hands.
    :param stamps: Capture times, shape (T,), [s], strictly increasing.
    :param frames: The tracker's skeletons, ``'tracker'`` frame, 19 rows (invalid where a finger
        point dropped out).
    :param truth: Noise-free rows, shape (T, 19, 3), [m], tracker frame.
    :param head_yaw: True yaw relative to the body frame, shape (T,), [rad], left positive.
    :param head_pitch: True pitch, shape (T,), [rad], down positive.
    :param hand_open: Annotated state per frame and hand (left, right), shape (T, 2), True open.
    :param hand_changes: Per hand (left, right), the annotated change times [s].
    """

    name: str
    spec: PersonSpec
    geometry: FaceHandGeometry
    stamps: FloatArray
    frames: tuple[SkeletonFrame, ...]
    truth: FloatArray
    head_yaw: FloatArray
    head_pitch: FloatArray
    hand_open: BoolArray
    hand_changes: tuple[FloatArray, FloatArray]

    @property
    def duration(self) -> float:
        """Return the time from the first to the last frame [s]."""
        return float(self.stamps[-1] - self.stamps[0])


def _head_keys(rng: np.random.Generator, duration: float) -> FloatArray:
    """Key times and (yaw, pitch, roll) [rad], shape (K, 4): holds then turns."""
    keys = [[0.0, 0.0, 0.0, 0.0]]
    time = 0.0
    while time < duration:
        time += float(rng.uniform(0.5, 2.0))
        keys.append([time, *keys[-1][1:]])
        target = [
            math.radians(rng.uniform(*HEAD_YAW_RANGE_DEG)),
            math.radians(rng.uniform(*HEAD_PITCH_RANGE_DEG)),
            math.radians(rng.uniform(-8.0, 8.0)),
        ]
        change = max(abs(a - b) for a, b in zip(target, keys[-1][1:]))
        speed = math.radians(rng.uniform(120.0, 250.0))
        time += max(0.3, 1.875 * change / speed)  # minimum-jerk peak speed 1.875 x mean
        keys.append([time, *target])
    return np.array(keys)


def _arm_keys(rng: np.random.Generator, duration: float) -> tuple[FloatArray, FloatArray]:
    """Key times (K,) and both arms' angles (K, 2, 4) [rad] of the hands-in-front posture."""
    times = [0.0]
    while times[-1] < duration:
        times.append(times[-1] + float(rng.uniform(1.5, 3.5)))
    low = np.radians([25.0, 5.0, 0.0, 60.0])
    high = np.radians([60.0, 25.0, 35.0, 100.0])
    angles = rng.uniform(low, high, size=(len(times), 2, 4))
    return np.array(times), angles


def _hand_closure(
    rng: np.random.Generator, stamps: FloatArray, duration: float
) -> tuple[FloatArray, BoolArray, FloatArray]:
    """One hand's closure (T,) in [0, 1], annotated open (T,) and change times [s]."""
    closed = bool(rng.random() < 0.5)
    starts, lengths, targets = [], [], []
    time = float(rng.uniform(*HAND_HOLD_RANGE))
    state = closed
    while time < duration:
        length = float(rng.uniform(*HAND_CHANGE_RANGE))
        state = not state
        starts.append(time)
        lengths.append(length)
        targets.append(state)
        time += length + float(rng.uniform(*HAND_HOLD_RANGE))
    closure = np.full(stamps.shape, 1.0 if closed else 0.0)
    annotated_closed = np.full(stamps.shape, closed)
    previous = closed
    for start, length, target in zip(starts, lengths, targets):
        phase = min_jerk((stamps - start) / length)
        begin, end = (1.0, 0.0) if previous else (0.0, 1.0)
        inside = stamps >= start
        closure[inside] = begin + (end - begin) * phase[inside]
        annotated_closed[stamps >= start + 0.5 * length] = target
        previous = target
    changes = np.array([start + 0.5 * length for start, length in zip(starts, lengths)])
    return closure, ~annotated_closed, changes


def _body_rotations(joints: FloatArray) -> FloatArray:
    """Return the body frames (T, 3, 3) of noise-free Kinect v2 joints (T, 25, 3)."""
    left = joints[:, JOINT_INDEX['ShoulderLeft']]
    right = joints[:, JOINT_INDEX['ShoulderRight']]
    y_axis = (left - right) / np.linalg.norm(left - right, axis=1, keepdims=True)
    up = joints[:, JOINT_INDEX['SpineShoulder']] - joints[:, JOINT_INDEX['SpineBase']]
    z_axis = up - np.sum(up * y_axis, axis=1, keepdims=True) * y_axis
    z_axis /= np.linalg.norm(z_axis, axis=1, keepdims=True)
    x_axis = np.cross(y_axis, z_axis)
    rotations: FloatArray = np.stack([x_axis, y_axis, z_axis], axis=2)
    return rotations


def _drift(
    rng: np.random.Generator, stamps: FloatArray, sigma: FloatArray, time: float = 6.0
) -> FloatArray:
    """Ornstein-Uhlenbeck bias per row and axis, (T, R, 3), stationary sigma (R,) [m]."""
    shocks = rng.standard_normal((stamps.shape[0], sigma.shape[0], 3))
    decay = np.exp(-np.diff(stamps) / time)
    spread = np.sqrt(1.0 - decay**2)
    drift = np.empty_like(shocks)
    drift[0] = shocks[0]
    for index in range(1, stamps.shape[0]):
        drift[index] = decay[index - 1] * drift[index - 1] + spread[index - 1] * shocks[index]
    result: FloatArray = drift * sigma[None, :, None]
    return result


def _episodes(
    rng: np.random.Generator, count: int, rate: float, shortest: int, longest: int
) -> BoolArray:
    """Frames (T,) inside episodes that start with probability ``rate`` per frame."""
    inside = np.zeros(count, dtype=bool)
    for start in np.flatnonzero(rng.random(count) < rate):
        inside[start:start + int(rng.integers(shortest, longest + 1))] = True
    return inside


def _finger_errors(
    rng: np.random.Generator, measured: FloatArray, truth_hand: FloatArray, side: Side
) -> None:
    """Apply swaps, collapses, dropouts and outliers to one hand's finger rows in place."""
    hand, tip, thumb = _HAND_ROWS[side]
    count = measured.shape[0]
    swap = _episodes(rng, count, 0.005, 1, 4)
    collapse = _episodes(rng, count, 0.005, 2, 6) & ~swap
    drop = _episodes(rng, count, 0.003, 3, 15)
    outlier = rng.random(count) < 0.01
    measured[swap, tip], measured[swap, thumb] = (
        measured[swap, thumb].copy(), measured[swap, tip].copy()
    )
    for row in (tip, thumb):
        jitter = rng.normal(0.0, 0.01, (count, 3))
        measured[collapse, row] = truth_hand[collapse] + jitter[collapse]
    which = np.where(rng.random(count) < 0.5, tip, thumb)
    size = np.asarray(rng.uniform(0.05, 0.15, count), dtype=np.float64)
    direction = rng.standard_normal((count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    frames = np.flatnonzero(outlier)
    measured[frames, which[frames]] += size[frames, None] * direction[frames]
    measured[drop, tip] = np.nan
    measured[drop, thumb] = np.nan


def generate_head_hands_take(spec: PersonSpec, duration: float | None = None) -> HeadHandsTake:
    """
    Generate the labelled head-and-hands take of a suite person.

    :param spec: The person, placement and tracker noise scale.
    :param duration: Length of the take [s]; default ``spec.duration`` (20-30 s).
    :return: The take (deterministic from ``spec.seed``).
    :raises ConfigError: If ``duration`` is not in [2, 600] s.
    """
    length = spec.duration if duration is None else float(duration)
    if not 2.0 <= length <= 600.0:
        raise ConfigError(f'duration must be in [2, 600] s, got {duration!r}')
    body = spec.body
    geometry = face_hand_geometry(spec.seed)
    motion = np.random.default_rng([spec.seed, MOTION_STREAM])
    clock = np.random.default_rng([spec.seed, CLOCK_STREAM])
    stamps = frame_stamps(clock, TrackerModel(loss_duration=0.0), length)

    key_times, key_angles = _arm_keys(motion, length)
    flat = key_angles.reshape(len(key_times), 8)
    angles = interpolate(stamps, key_times, flat).reshape(-1, 2, 4)
    still = np.array([[0.0, 0.0, 0.0], [length + 1.0, 0.0, 0.0]])  # no lean or twist, sway only
    trunk = trunk_at(stamps, motion.uniform(0.0, 2.0 * np.pi, (3, 2)), still)
    joints = skeleton_joints(angles, trunk, body)
    body_rotation = _body_rotations(joints)

    head_keys = _head_keys(motion, length)
    yaw, pitch, roll = interpolate(stamps, head_keys[:, 0], head_keys[:, 1:]).T
    head = body_rotation @ rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)
    size = geometry.head_size
    neck = joints[:, JOINT_INDEX['Neck']]
    ears = neck + np.einsum('nij,j->ni', head, [-0.01, 0.0, 0.08 * size])
    stance = np.full((stamps.shape[0], JOINT_COUNT, 3), np.nan)
    for row, source in enumerate(KINECT_V2_TO_HUMAN):
        if source is not None:
            stance[:, row] = joints[:, source]
    stance[:, HumanJoint.HEAD] = ears + np.einsum('nij,j->ni', head, [0.02, 0.0, 0.05 * size])
    stance[:, list(_FACE_ROWS)] = ears[:, None] + np.einsum(
        'nij,kj->nki', head, geometry.face_offsets()
    )

    hand_open = np.zeros((stamps.shape[0], 2), dtype=bool)
    changes = []
    hand_length = geometry.hand_length_ratio * spec.height
    for index, (side, lateral) in enumerate(zip(_SIDES, (1, -1))):
        closure, opened, times = _hand_closure(motion, stamps, length)
        hand_open[:, index] = opened
        changes.append(times)
        fore = (
            trunk.chest @ upper_arm_rotation(angles[:, index], lateral)
            @ rot_y(-angles[:, index, 3])
        )
        axes = np.stack(
            [fore @ np.array([0.0, 0.0, -1.0]), fore @ np.array([0.0, -lateral, 0.0]),
             fore @ np.array([1.0, 0.0, 0.0])],
            axis=1,
        )
        wrist = joints[:, JOINT_INDEX['Wrist' + side.value.capitalize()]]
        offsets = geometry.hand_points(hand_length, closure, axes)
        for row, offset in zip(_HAND_ROWS[side], offsets):
            stance[:, row] = wrist + offset

    rotation, origin = spec.stance_to_camera()
    camera = stance @ rotation.T + origin
    errors = np.random.default_rng([spec.seed, ERROR_STREAM])
    sigma = np.empty(JOINT_COUNT)
    for row, source in enumerate(KINECT_V2_TO_HUMAN):
        sigma[row] = WHITE_SIGMA[source] if source is not None else FACE_SIGMA
    for side in _SIDES:
        sigma[list(_HAND_ROWS[side][1:])] = FINGER_SIGMA
    depth = np.clip(camera[:, :, 2:] / 2.0, 0.75, 2.0)
    axes_factor = np.array([1.0, 1.0, TrackerModel().depth_factor])
    white = spec.noise_scale * sigma[None, :, None] * axes_factor * depth
    drift_sigma = np.full(JOINT_COUNT, 0.004 * spec.noise_scale)
    drift_sigma[list(_FACE_ROWS)] = 0.002 * spec.noise_scale
    measured = (
        camera + white * errors.standard_normal(camera.shape) + _drift(errors, stamps, drift_sigma)
    )
    for side in _SIDES:
        _finger_errors(errors, measured, camera[:, _HAND_ROWS[side][0]], side)

    tracker = camera_to_tracker(measured)
    frames = tuple(
        make_frame(float(stamp), points) for stamp, points in zip(stamps.tolist(), tracker)
    )
    return HeadHandsTake(
        name=f'head_hands{spec.seed}',
        spec=spec,
        geometry=geometry,
        stamps=stamps,
        frames=frames,
        truth=camera_to_tracker(camera),
        head_yaw=yaw,
        head_pitch=pitch,
        hand_open=hand_open,
        hand_changes=(changes[0], changes[1]),
    )
