"""
A robustness suite of synthetic Kinect v2 takes of many different people.

The single-person generator :mod:`pic_ros.tools.synthetic` makes the shipped demo take. This module
reuses its skeleton, trunk, timing and tracker-error pieces to make *many* takes, one per
:class:`PersonSpec`, so that an evaluation can check that pose imitation holds for any person
and cannot be tuned to one. :func:`suite_specs` draws the suite (50 takes by default),
:func:`generate_take` makes one take as a :class:`~pic_ros.tools.synthetic.SyntheticRecording`.

Model (lengths in metres, angles in degrees where a name says ``_deg``, else radians):

- **Body**: every segment of :class:`~pic_ros.tools.synthetic.BodyModel` is scaled by
  ``height / REFERENCE_HEIGHT`` (the defaults are a 1.75 m person); then the upper arm, the
  forearm and the shoulder half-width get their own factors (0.85 to 1.15), so the arm
  proportions vary independently of the height (:meth:`PersonSpec.body`).
- **Motion**: four angles per arm (:data:`~pic_ros.tools.synthetic.ARM_ANGLE_NAMES`) relative to
  the chest, moved along minimum-jerk profiles between key poses. Key poses are angles or wrist
  targets in the chest frame given as fractions of the person's own arm length (upper arm plus
  forearm) and shoulder width, solved by closed-form inverse kinematics, so every person can do
  every task. A move between key poses lasts 0.5 to 2 s, from the largest angle change and the
  person's peak joint speed (1.8 to 2.6 rad/s, drawn per take); straight wrist strokes move at
  a peak wrist speed of 0.5 to 0.8 m/s. The trunk sways (as in :mod:`pic_ros.tools.synthetic`) and
  leans or twists per task.
- **Take**: the first 1.0 to 1.2 s hold a *bad start* (:data:`BAD_STARTS`): arms crossed over the
  chest (each wrist beyond the body midline), or both arms pointing at the sensor (the wrist at
  96.5 to 98 % of the arm length along the line from the shoulder to the sensor, so both bones
  point within about 16 degrees of the sensor), or standing at rest. After a 1.2 to 1.6 s move to
  rest, labelled tasks follow (:data:`TASK_NAMES`), separated by 0.5 to 1 s at rest that no segment
  covers: ``cross_midline`` (one hand towards the opposite shoulder, the other below it, both
  beyond the midline, the upper arms adducted by 22 to 38 degrees), ``raise_arms`` (above the
  shoulders, forward or sideways) and ``rest`` (arms hanging slightly behind the trunk) in every
  take, plus as many as fit of ``reach_forward`` (towards the sensor), ``reach_side``, ``assembly``
  (both hands meet in front, lift and slide a part), ``table_strokes`` (incision-like straight
  strokes, forearm horizontal), ``wave`` and ``elbow_range`` (elbow from 2-5 to 140-148 degrees of
  flexion), in a random order. So the upper arm and forearm directions cross the three coordinate
  planes of the chest frame in every take.
- **Placement**: the sensor stands ``camera_height`` above the floor, pitched up by
  ``camera_tilt_deg``. In the sensor's *level* frame (origin at the sensor, x to its left,
  y up along gravity, z horizontal forward) the floor point below the pelvis is at
  ``(camera_lateral, -camera_height, camera_distance)``; the person faces the sensor (their
  forward is level -z) turned by ``person_yaw_deg`` to their left. Kinect v2 camera space is
  the level frame pitched with the sensor: ``x_c = x``, ``y_c = y cos(t) - z sin(t)``,
  ``z_c = y sin(t) + z cos(t)`` (x to the sensor's left, y up relative to the sensor, z along
  the optical axis), so the right shoulder has the larger camera x when the person faces the
  sensor. The sensor lies within :data:`MAX_SENSOR_BEARING_DEG` of the person's forward
  direction, and the upper body (:data:`VIEW_JOINTS`) stays inside the Kinect v2 field of view
  (:data:`FIELD_OF_VIEW_DEG`, :data:`DEPTH_RANGE`) in every frame; :func:`generate_take`
  checks both.
- **Timing**: the Kinect-like clock of :mod:`pic_ros.tools.synthetic` (30 Hz nominal, jitter, about
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
  2. *White noise*: the per-joint table of :class:`~pic_ros.tools.synthetic.TrackerModel` (4 to
     8 mm per axis) times ``noise_scale``, 1.3 times larger along camera z (depth), times
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

from collections.abc import Mapping
from dataclasses import dataclass
import math
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.tools.synthetic import (
    _arm_ik,
    _drift,
    _interpolate,
    _min_jerk,
    _outliers,
    _rot_z,
    _skeleton,
    _stamps,
    _SWAY_FREQUENCY,
    _trunk,
    _WHITE_SIGMA,
    ARM_ANGLE_LIMITS_DEG,
    ARM_ANGLE_NAMES,
    BodyModel,
    JOINT_COUNT,
    JOINT_NAMES,
    SyntheticRecording,
    TrackerModel,
)
from pic_ros.trackers.kinect_v2 import KINECT_V2_TO_HUMAN

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

PERSON_RANGES: Final[Mapping[str, tuple[float, float]]] = MappingProxyType(
    {
        'height': (1.5, 2.0),
        'upper_arm_factor': (0.85, 1.15),
        'forearm_factor': (0.85, 1.15),
        'shoulder_width_factor': (0.85, 1.15),
        'camera_distance': (1.5, 4.0),
        'camera_lateral': (-0.6, 0.6),
        'camera_height': (0.6, 1.8),
        'camera_tilt_deg': (-20.0, 15.0),
        'person_yaw_deg': (-35.0, 35.0),
        'noise_scale': (0.5, 2.0),
        'outlier_rate': (0.0, 0.03),
        'foreshortening': (0.0, 0.35),
        'duration': (20.0, 30.0),
    }
)
"""Closed range ``(low, high)`` of every numeric :class:`PersonSpec` field (units there)."""

BAD_STARTS: Final[tuple[str, ...]] = ('crossed', 'pointing', 'none')
"""What the person does during the first 1.0-1.2 s of a take (:attr:`PersonSpec.bad_start`)."""

TASK_NAMES: Final[tuple[str, ...]] = (
    'cross_midline',
    'raise_arms',
    'rest',
    'reach_forward',
    'reach_side',
    'assembly',
    'table_strokes',
    'wave',
    'elbow_range',
)
"""The task repertoire; the first three are in every take."""

REFERENCE_HEIGHT: Final = 1.75
"""Height [m] of the person whose segment lengths are the :class:`BodyModel` defaults."""

FIELD_OF_VIEW_DEG: Final[tuple[float, float]] = (70.0, 60.0)
"""Kinect v2 depth field of view [deg]: horizontal (about camera y), vertical (about x)."""

DEPTH_RANGE: Final[tuple[float, float]] = (0.5, 4.5)
"""Kinect v2 body-tracking depth range [m] along camera z."""

VIEW_JOINTS: Final[tuple[int, ...]] = tuple(sorted(KINECT_V2_TO_HUMAN))
"""Kinect v2 indices of the 12 upper-body joints that must stay in view (the evaluated ones)."""

MAX_SENSOR_BEARING_DEG: Final = 35.0
"""Largest horizontal angle [deg] between the person's forward direction and the sensor."""

FORESHORTENING_DEPTH_BIAS: Final = 0.10
"""Shift [m] of a distal joint towards the sensor per unit of ``foreshortening * cos**2``."""

SUITE_COUNT: Final = 50
"""Default number of takes of :func:`suite_specs`."""

SUITE_SEED: Final = 2024
"""Default seed of :func:`suite_specs`."""

_J: Final = {name: index for index, name in enumerate(JOINT_NAMES)}
_STANCE_TO_LEVEL: Final = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])
_SIDES: Final[Mapping[str, tuple[int, ...]]] = MappingProxyType(
    {'left': (1,), 'right': (-1,), 'both': (1, -1)}
)
_MOTION_STREAM: Final = 0
_CLOCK_STREAM: Final = 1
_ERROR_STREAM: Final = 2
_MIN_MOVE: Final = 0.5
_MAX_MOVE: Final = 2.0
_PEAK_FACTOR: Final = 1.875  # peak / mean speed of a minimum-jerk move
_END_MARGIN: Final = 0.3
_FIT_RATE: Final = 15.0
_FIT_MARGIN_DEG: Final = 2.0
_CHECK_MARGIN_DEG: Final = 1.0
_BEARING_MARGIN_DEG: Final = 0.5
_LOSS_PROBABILITY: Final = 0.4


def _scaled_body(
    height: float, upper_arm_factor: float, forearm_factor: float, shoulder_width_factor: float
) -> BodyModel:
    """Scale the default body to a height [m], then apply the arm and shoulder factors."""
    default = BodyModel()
    scale = height / REFERENCE_HEIGHT
    scaled = {
        name: scale * float(getattr(default, name)) for name in default.__dataclass_fields__
    }
    scaled['upper_arm'] *= upper_arm_factor
    scaled['forearm'] *= forearm_factor
    scaled['shoulder_half_width'] *= shoulder_width_factor
    return BodyModel(**scaled)


def _level_to_camera(tilt_deg: float) -> FloatArray:
    """Rotation camera <- level (3, 3) of a sensor pitched up by ``tilt_deg``."""
    tilt = math.radians(tilt_deg)
    cos, sin = math.cos(tilt), math.sin(tilt)
    return np.array([[1.0, 0.0, 0.0], [0.0, cos, -sin], [0.0, sin, cos]])


def _stance_to_level(yaw_deg: float) -> FloatArray:
    """Rotation level <- stance (3, 3) of a person facing the sensor, turned left by yaw."""
    rotation: FloatArray = _STANCE_TO_LEVEL @ _rot_z(np.array(math.radians(yaw_deg)))
    return rotation


def _bearing_deg(camera_lateral: float, camera_distance: float, person_yaw_deg: float) -> float:
    """Horizontal angle [deg] from the person's forward direction to the sensor (+: left)."""
    return math.degrees(math.atan2(camera_lateral, camera_distance)) - person_yaw_deg


@dataclass(frozen=True)
class PersonSpec:
    """
    Everything that varies between the takes of the suite: person, placement, errors, start.

    Ranges (inclusive) are in :data:`PERSON_RANGES`.

    :param seed: Seed of every random draw of the take (motion, clock, tracker errors), >= 0.
    :param height: Body height [m], 1.5 to 2.0; all segment lengths scale with it.
    :param upper_arm_factor: Factor on the height-scaled upper-arm length, 0.85 to 1.15.
    :param forearm_factor: Factor on the height-scaled forearm length, 0.85 to 1.15.
    :param shoulder_width_factor: Factor on the height-scaled shoulder width, 0.85 to 1.15.
    :param camera_distance: Horizontal distance [m] of the pelvis from the sensor, along the
        sensor's level forward axis, 1.5 to 4.0.
    :param camera_lateral: Sideways offset [m] of the pelvis from the sensor's optical axis,
        towards the sensor's left (camera +x), -0.6 to 0.6.
    :param camera_height: Sensor height above the floor [m], 0.6 to 1.8.
    :param camera_tilt_deg: Sensor pitch [deg], positive looking up, -20 to 15; camera-space y
        is perpendicular to the tilted optical axis.
    :param person_yaw_deg: Turn of the person about the vertical [deg] from facing straight
        against the optical axis, positive to the person's left, -35 to 35.
    :param noise_scale: Factor on the tracker's white noise and bias drift, 0.5 to 2.0.
    :param outlier_rate: Probability that a tracked frame holds one outlier, 0 to 0.03.
    :param foreshortening: Fraction by which a bone pointing straight at the sensor is
        measured shorter, 0 to 0.35 (see the module docstring).
    :param bad_start: First second of the take, one of :data:`BAD_STARTS`.
    :param duration: Length of the take [s], 20 to 30.
    :raises ConfigError: If a value is of the wrong type or out of its range, or the sensor is
        more than :data:`MAX_SENSOR_BEARING_DEG` away from the person's forward direction.
    """

    seed: int
    height: float
    upper_arm_factor: float
    forearm_factor: float
    shoulder_width_factor: float
    camera_distance: float
    camera_lateral: float
    camera_height: float
    camera_tilt_deg: float
    person_yaw_deg: float
    noise_scale: float
    outlier_rate: float
    foreshortening: float
    bad_start: str
    duration: float

    def __post_init__(self) -> None:
        """Check every field (see the class docstring)."""
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f'PersonSpec.seed must be an integer >= 0, got {self.seed!r}')
        for name, (low, high) in PERSON_RANGES.items():
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or not low <= value <= high
            ):
                raise ConfigError(
                    f'PersonSpec.{name} must be a number in [{low}, {high}], got {value!r}'
                )
        if self.bad_start not in BAD_STARTS:
            raise ConfigError(
                f'PersonSpec.bad_start must be one of {BAD_STARTS}, got {self.bad_start!r}'
            )
        if abs(self.sensor_bearing_deg) > MAX_SENSOR_BEARING_DEG:
            raise ConfigError(
                f'the sensor is {self.sensor_bearing_deg:.1f} deg away from the forward '
                f'direction of the person; at most {MAX_SENSOR_BEARING_DEG} deg is supported'
            )

    @property
    def body(self) -> BodyModel:
        """
        Return the person's segment lengths.

        :return: The :class:`BodyModel` defaults scaled by ``height / REFERENCE_HEIGHT``, with
            the upper arm, forearm and shoulder half-width multiplied by their factors [m].
        """
        return _scaled_body(
            self.height, self.upper_arm_factor, self.forearm_factor, self.shoulder_width_factor
        )

    @property
    def sensor_bearing_deg(self) -> float:
        """
        Return where the sensor is, seen from the person.

        :return: Horizontal angle [deg] from the person's forward direction to the direction
            from the pelvis to the sensor, positive to the person's left.
        """
        return _bearing_deg(self.camera_lateral, self.camera_distance, self.person_yaw_deg)

    def stance_to_camera(self) -> tuple[FloatArray, FloatArray]:
        """
        Return the transform from the person's stance frame to Kinect v2 camera space.

        The stance frame has its origin on the floor below the pelvis, x forward out of the
        person, y to their left and z up.

        :return: ``(rotation, origin)``: rotation camera <- stance, shape (3, 3), and the
            camera-space position [m] of the stance origin, shape (3,); ``p_c = R @ p_s + o``.
        """
        level_to_camera = _level_to_camera(self.camera_tilt_deg)
        rotation = level_to_camera @ _stance_to_level(self.person_yaw_deg)
        origin = level_to_camera @ np.array(
            [self.camera_lateral, -self.camera_height, self.camera_distance]
        )
        return rotation, origin

    def sensor_in_stance(self) -> FloatArray:
        """
        Return the position of the sensor in the person's stance frame.

        :return: Shape (3,), [m], stance frame (origin on the floor below the pelvis, x
            forward, y left, z up).
        """
        level = np.array([self.camera_lateral, -self.camera_height, self.camera_distance])
        sensor: FloatArray = -(_stance_to_level(self.person_yaw_deg).T @ level)
        return sensor


def in_field_of_view(points: npt.ArrayLike, margin_deg: float = 0.0) -> BoolArray:
    """
    Tell which camera-space points a Kinect v2 can see.

    A point is seen when its depth z lies in :data:`DEPTH_RANGE` and its horizontal and
    vertical angles from the optical axis, ``atan(|x| / z)`` and ``atan(|y| / z)``, are within
    half of :data:`FIELD_OF_VIEW_DEG` minus ``margin_deg``. NaN points are not seen.

    :param points: Points, shape (..., 3), [m], Kinect v2 camera space.
    :param margin_deg: Angular margin [deg] kept from the edges of the view, >= 0.
    :return: New boolean array, shape (...).
    :raises ConfigError: If the last axis does not have length 3 or the margin is negative.
    """
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != 3:
        raise ConfigError(f'points must have shape (..., 3), got {array.shape}')
    if not margin_deg >= 0.0:
        raise ConfigError(f'margin_deg must be >= 0, got {margin_deg!r}')
    x, y, z = array[..., 0], array[..., 1], array[..., 2]
    horizontal = math.tan(math.radians(0.5 * FIELD_OF_VIEW_DEG[0] - margin_deg))
    vertical = math.tan(math.radians(0.5 * FIELD_OF_VIEW_DEG[1] - margin_deg))
    with np.errstate(invalid='ignore'):
        seen = (z >= DEPTH_RANGE[0]) & (z <= DEPTH_RANGE[1])
        seen &= (np.abs(x) <= horizontal * z) & (np.abs(y) <= vertical * z)
    result: BoolArray = seen
    return result


# --- Motion plan --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _ArmPose:
    """One arm's key pose: angles (4,) [rad]; wrist minus own shoulder (3,) [m, chest frame]."""

    angles: FloatArray
    point: FloatArray | None = None
    swivel: float = 0.0


@dataclass(frozen=True, eq=False)
class _Key:
    """Both arms' poses (left, right) reached at ``time`` [s]; ``line``: straight wrist path."""

    time: float
    poses: tuple[_ArmPose, _ArmPose]
    line: tuple[bool, bool] = (False, False)


@dataclass(frozen=True, eq=False)
class _Task:
    """A built task: keys and trunk keys (time, lean, twist) relative to its start [s, deg]."""

    name: str
    arm: str
    keys: tuple[_Key, ...]
    trunk: tuple[tuple[float, float, float], ...]

    @property
    def length(self) -> float:
        return self.keys[-1].time


@dataclass(frozen=True, eq=False)
class _Plan:
    """The motion of a take, independent of the clock and (but for pointing) of the camera."""

    keys: tuple[_Key, ...]
    trunk_keys: FloatArray
    sway_phase: FloatArray
    pointing: tuple[int, ...]
    pointing_reach: float
    start_end: float
    tasks: tuple[tuple[str, str, float, float], ...]


def _arm_length(body: BodyModel) -> float:
    return body.upper_arm + body.forearm


def _shoulder_offset(body: BodyModel, lateral: int) -> FloatArray:
    """Shoulder position relative to SpineShoulder [m], chest frame."""
    return np.array([0.0, lateral * body.shoulder_half_width, -body.shoulder_drop])


class _Builder:
    """Collects both arms' key poses and trunk keys along a time axis starting at 0 at rest."""

    def __init__(
        self, body: BodyModel, rng: np.random.Generator, speed: float, wrist_speed: float,
        rest: tuple[_ArmPose, _ArmPose],
    ) -> None:
        self.body = body
        self.rng = rng
        self.speed = speed
        self.wrist_speed = wrist_speed
        self.rest = rest
        self.time = 0.0
        self.current: list[_ArmPose] = list(rest)
        self.keys: list[_Key] = [_Key(0.0, rest)]
        self.trunk: list[tuple[float, float, float]] = []

    def uniform(self, low: float, high: float) -> float:
        return float(self.rng.uniform(low, high))

    def angles(self, degrees: tuple[float, float, float, float]) -> _ArmPose:
        """Pose given by its angles [deg] (:data:`ARM_ANGLE_NAMES` order)."""
        return _ArmPose(angles=np.radians(np.array(degrees, dtype=np.float64)))

    def reachable(self, relative: FloatArray) -> FloatArray:
        """Scale a wrist target (own shoulder, chest frame, [m]) to 30-97 % of the arm length."""
        length = _arm_length(self.body)
        distance = float(np.linalg.norm(relative))
        scaled: FloatArray = (
            relative * float(np.clip(distance, 0.3 * length, 0.97 * length)) / distance
        )
        return scaled

    def point(self, lateral: int, relative: FloatArray, swivel_deg: float = 20.0) -> _ArmPose:
        """Pose putting the wrist at ``relative`` (own shoulder, chest frame, [m]) if reachable."""
        clamped = self.reachable(relative)
        swivel = math.radians(swivel_deg)
        angles = _arm_ik(clamped[None], np.array([swivel]), lateral, self.body)[0]
        return _ArmPose(angles=angles, point=clamped, swivel=swivel)

    def chest_point(
        self, lateral: int, forward: float, across: float, down: float, swivel_deg: float = 20.0
    ) -> _ArmPose:
        """Pose putting the wrist at (forward, across, -down) [m] from SpineShoulder."""
        target = np.array([forward, across, -down])
        return self.point(lateral, target - _shoulder_offset(self.body, lateral), swivel_deg)

    def cross_point(
        self, lateral: int, forward: float, across: float, down: float, adduction_deg: float
    ) -> _ArmPose:
        """
        Pose with the wrist across the midline at (forward, across, -down) [m] from SpineShoulder.

        Among elbow swivels of -10 to 60 degrees, the one whose shoulder abduction is closest to
        ``-adduction_deg`` inside the anatomical limits is taken.
        """
        target = self.reachable(
            np.array([forward, across, -down]) - _shoulder_offset(self.body, lateral)
        )
        swivels = np.radians(np.linspace(-10.0, 60.0, 36))
        candidates = _arm_ik(np.tile(target, (swivels.size, 1)), swivels, lateral, self.body)
        limits = np.radians(np.array(ARM_ANGLE_LIMITS_DEG))
        inside = np.all((candidates >= limits[:, 0]) & (candidates <= limits[:, 1]), axis=1)
        miss = np.abs(candidates[:, 1] + math.radians(adduction_deg)) + 10.0 * ~inside
        best = int(np.argmin(miss))
        return _ArmPose(angles=candidates[best], point=target, swivel=float(swivels[best]))

    def reach(
        self, lateral: int, direction: tuple[float, float, float], fraction: float,
        swivel_deg: float = 20.0,
    ) -> _ArmPose:
        """Pose with the wrist at ``fraction`` of the arm length along (forward, out, up)."""
        vector = np.array([direction[0], lateral * direction[1], direction[2]])
        vector *= fraction * _arm_length(self.body) / np.linalg.norm(vector)
        return self.point(lateral, vector, swivel_deg)

    def move(
        self, targets: Mapping[int, _ArmPose], line: bool = False,
        duration: float | None = None,
    ) -> None:
        """Add a key after a minimum-jerk move of the given arms (+1 left, -1 right)."""
        poses = list(self.current)
        lines = [False, False]
        needed = 0.0
        for lateral, pose in targets.items():
            index = 0 if lateral == 1 else 1
            before = poses[index]
            change = float(np.max(np.abs(pose.angles - before.angles)))
            needed = max(needed, _PEAK_FACTOR * change / self.speed)
            if line and before.point is not None and pose.point is not None:
                lines[index] = True
                path = float(np.linalg.norm(pose.point - before.point))
                needed = max(needed, _PEAK_FACTOR * path / self.wrist_speed)
            poses[index] = pose
        if duration is None:
            duration = float(np.clip(needed * self.uniform(0.95, 1.15), _MIN_MOVE, _MAX_MOVE))
        self.time += duration
        self.current = poses
        self.keys.append(_Key(self.time, (poses[0], poses[1]), (lines[0], lines[1])))

    def hold(self, duration: float) -> None:
        self.time += duration
        self.keys.append(_Key(self.time, (self.current[0], self.current[1])))

    def home(self) -> None:
        self.move({1: self.rest[0], -1: self.rest[1]})

    def lean(self, lean_deg: float, twist_deg: float) -> None:
        if self.trunk and self.trunk[-1][0] >= self.time:
            self.trunk[-1] = (self.time, lean_deg, twist_deg)
        else:
            self.trunk.append((self.time, lean_deg, twist_deg))

    def task(self, name: str, arm: str) -> _Task:
        return _Task(name=name, arm=arm, keys=tuple(self.keys), trunk=tuple(self.trunk))


def _reach_forward(b: _Builder, arm: str) -> None:
    sides = _SIDES[arm]
    ready = {
        s: b.angles((b.uniform(8, 16), 10.0, b.uniform(-5, 10), b.uniform(78, 92)))
        for s in sides
    }
    b.move(ready)
    lean = b.uniform(2, 5)
    twist = 0.0 if arm == 'both' else sides[0] * b.uniform(-4, 0)
    b.lean(lean, twist)
    for _ in range(2):
        b.move({
            s: b.reach(
                s, (1.0, b.uniform(-0.25, 0.08), b.uniform(-0.3, 0.12)),
                b.uniform(0.94, 0.975), b.uniform(5, 25),
            )
            for s in sides
        })
        b.hold(b.uniform(0.3, 0.6))
        b.move(ready)
    b.lean(lean, twist)
    b.home()


def _reach_side(b: _Builder, arm: str) -> None:
    for _ in range(1 + int(b.rng.integers(2))):
        b.move({
            s: b.angles(
                (b.uniform(0, 20), b.uniform(80, 95), b.uniform(-10, 10), b.uniform(3, 15))
            )
            for s in _SIDES[arm]
        })
        b.hold(b.uniform(0.4, 0.8))
        b.home()


def _raise_arms(b: _Builder, arm: str) -> None:
    if b.rng.random() < 0.5:  # forward, above the head
        poses = {
            s: b.angles(
                (b.uniform(140, 165), b.uniform(10, 30), b.uniform(-5, 10), b.uniform(5, 25))
            )
            for s in _SIDES[arm]
        }
    else:  # sideways, above the shoulders
        poses = {
            s: b.angles(
                (b.uniform(5, 20), b.uniform(110, 135), b.uniform(-20, 0), b.uniform(5, 20))
            )
            for s in _SIDES[arm]
        }
    b.move(poses)
    lean = b.uniform(-3, 0)
    b.lean(lean, 0.0)
    b.hold(b.uniform(0.5, 1.0))
    b.lean(lean, 0.0)
    b.home()


def _cross_midline(b: _Builder, arm: str) -> None:
    length, width = _arm_length(b.body), b.body.shoulder_half_width
    upper = 1 if b.rng.random() < 0.5 else -1
    b.move({
        upper: b.cross_point(
            upper, b.uniform(0.3, 0.4) * length, -upper * width * b.uniform(0.6, 0.9),
            b.body.shoulder_drop + b.uniform(0.0, 0.12) * length, b.uniform(28, 38),
        ),
        -upper: b.cross_point(
            -upper, b.uniform(0.35, 0.45) * length + 0.04, upper * width * b.uniform(0.3, 0.6),
            b.body.shoulder_drop + b.uniform(0.35, 0.45) * length, b.uniform(22, 32),
        ),
    })
    b.hold(b.uniform(0.3, 0.6))
    b.home()


def _assembly(b: _Builder, arm: str) -> None:
    length = _arm_length(b.body)
    forward = b.uniform(0.5, 0.65) * length
    down = b.body.shoulder_drop + b.uniform(0.15, 0.35) * length
    gap = b.uniform(0.04, 0.06)
    swivel = b.uniform(20, 35)
    lift = b.uniform(0.10, 0.15) * length
    slide = (1.0 if b.rng.random() < 0.5 else -1.0) * b.uniform(0.06, 0.10) * length

    def hands(across: float, up: float) -> dict[int, _ArmPose]:
        return {s: b.chest_point(s, forward, across + s * gap, down - up, swivel) for s in (1, -1)}

    b.move(hands(0.0, 0.0))
    lean = b.uniform(1, 4)
    b.lean(lean, 0.0)
    b.hold(b.uniform(0.2, 0.4))
    b.move(hands(0.0, lift), line=True)
    b.move(hands(slide, lift), line=True)
    b.hold(b.uniform(0.2, 0.4))
    b.move(hands(-0.5 * slide, lift), line=True)
    b.move(hands(-0.5 * slide, 0.0), line=True)
    b.hold(b.uniform(0.2, 0.4))
    b.lean(lean, 0.0)
    b.home()


def _table_strokes(b: _Builder, arm: str) -> None:
    s = _SIDES[arm][0]
    length = _arm_length(b.body)
    across = s * (b.body.shoulder_half_width + b.uniform(-0.05, 0.05))
    down = b.body.shoulder_drop + b.uniform(0.95, 1.05) * b.body.upper_arm
    far = b.uniform(0.5, 0.6) * length
    near = far - b.uniform(0.18, 0.25) * length
    lift = 0.1 * length

    def wrist(forward: float, up: float) -> dict[int, _ArmPose]:
        return {s: b.chest_point(s, forward, across, down - up, 15.0)}

    b.move(wrist(far, lift))
    lean, twist = b.uniform(5, 10), s * b.uniform(-4, 0)
    b.lean(lean, twist)
    strokes = 2 + int(b.rng.integers(2))
    for stroke in range(strokes):
        b.move(wrist(far, 0.0), line=True)
        b.move(wrist(near, 0.0), line=True)
        b.move(wrist(near, lift), line=True)
        if stroke < strokes - 1:
            b.move(wrist(far, lift), line=True)
    b.lean(lean, twist)
    b.home()


def _wave(b: _Builder, arm: str) -> None:
    s = _SIDES[arm][0]
    flexion, abduction = b.uniform(12, 25), b.uniform(65, 80)
    rotation, bend = b.uniform(-80, -65), b.uniform(90, 100)
    b.move({s: b.angles((flexion, abduction, rotation, bend))})
    low, high = b.uniform(72, 78), b.uniform(108, 115)
    for half in range(4 + int(b.rng.integers(3))):
        elbow = high if half % 2 == 0 else low
        b.move({s: b.angles((flexion, abduction + (elbow - 95) / 12, rotation, elbow))})
    b.home()


def _elbow_range(b: _Builder, arm: str) -> None:
    base = (b.uniform(5, 15), b.uniform(6, 12), b.uniform(0, 15))

    def elbow(low: float, high: float) -> dict[int, _ArmPose]:
        return {s: b.angles(base + (b.uniform(low, high),)) for s in _SIDES[arm]}

    b.move(elbow(2, 5))
    b.hold(b.uniform(0.3, 0.5))
    for _ in range(1 + int(b.rng.random() < 0.4)):
        b.move(elbow(140, 148))
        b.hold(b.uniform(0.2, 0.5))
        b.move(elbow(2, 5))
        b.hold(b.uniform(0.2, 0.4))
    b.home()


def _rest(b: _Builder, arm: str) -> None:
    b.move({
        s: b.angles((b.uniform(-17, -13), b.uniform(6, 10), b.uniform(-5, 5), b.uniform(2, 5)))
        for s in (1, -1)
    })
    b.hold(b.uniform(1.5, 2.5))
    b.home()


def _task_arm(name: str, rng: np.random.Generator) -> str:
    if name in ('cross_midline', 'raise_arms', 'rest', 'assembly'):
        return 'both'
    if name in ('wave', 'table_strokes'):
        return 'right' if rng.random() < 0.6 else 'left'
    return ('left', 'right', 'both')[int(rng.integers(3))]


_TASK_BUILDERS: Final = MappingProxyType({
    'cross_midline': _cross_midline,
    'raise_arms': _raise_arms,
    'rest': _rest,
    'reach_forward': _reach_forward,
    'reach_side': _reach_side,
    'assembly': _assembly,
    'table_strokes': _table_strokes,
    'wave': _wave,
    'elbow_range': _elbow_range,
})
_MANDATORY: Final = TASK_NAMES[:3]


def _plan(seed: int, body: BodyModel, bad_start: str, duration: float) -> _Plan:
    """Draw a take's motion: bad start, then tasks at rest-separated times [s]."""
    rng = np.random.default_rng([seed, _MOTION_STREAM])
    sway_phase = rng.uniform(0.0, 2.0 * np.pi, _SWAY_FREQUENCY.shape)
    speed, wrist_speed = float(rng.uniform(1.8, 2.6)), float(rng.uniform(0.5, 0.8))
    rest = tuple(
        _ArmPose(angles=np.radians([
            rng.uniform(3, 9), rng.uniform(7, 11), rng.uniform(0, 10), rng.uniform(10, 18)
        ]))
        for _ in range(2)
    )
    rest_pair = (rest[0], rest[1])
    builder = _Builder(body, rng, speed, wrist_speed, rest_pair)
    hold, settle = float(rng.uniform(1.0, 1.2)), float(rng.uniform(1.2, 1.6))
    pointing_reach = float(rng.uniform(0.965, 0.98))
    length, width = _arm_length(body), body.shoulder_half_width
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
    keys = [_Key(0.0, start), _Key(hold, start), _Key(hold + settle, rest_pair)]
    pointing = (0, 1) if bad_start == 'pointing' else ()
    time = hold + settle + float(rng.uniform(0.4, 0.7))

    optional = [str(name) for name in rng.permutation(list(TASK_NAMES[3:]))]
    built: dict[str, _Task] = {}
    for name in list(_MANDATORY) + optional:
        task_builder = _Builder(body, rng, speed, wrist_speed, rest_pair)
        arm = _task_arm(name, rng)
        _TASK_BUILDERS[name](task_builder, arm)
        built[name] = task_builder.task(name, arm)
    gaps = {name: float(rng.uniform(0.5, 1.0)) for name in built}
    budget = duration - _END_MARGIN - time
    chosen = list(_MANDATORY)
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
        keys += [_Key(time + key.time, key.poses, key.line) for key in task.keys]
        trunk.append((time, 0.0, 0.0))
        trunk += [(time + t, lean, twist) for t, lean, twist in task.trunk]
        trunk.append((time + task.length, 0.0, 0.0))
        tasks.append((name, task.arm, time, time + task.length))
        time += task.length + gaps[name]
    return _Plan(
        keys=tuple(keys),
        trunk_keys=np.array(trunk),
        sway_phase=sway_phase,
        pointing=pointing,
        pointing_reach=pointing_reach,
        start_end=hold + settle,
        tasks=tuple(tasks),
    )


def _pointing_angles(plan: _Plan, body: BodyModel, sensor: FloatArray) -> FloatArray:
    """Arm angles (2, 4) [rad] pointing both arms at the sensor (stance position [m])."""
    trunk = _trunk(np.zeros(1), plan.sway_phase, plan.trunk_keys)
    angles = np.empty((2, len(ARM_ANGLE_NAMES)))
    for index, lateral in enumerate((1, -1)):
        shoulder = trunk.shoulder(body, lateral)[0]
        direction = trunk.chest[0].T @ (sensor - shoulder)
        relative = plan.pointing_reach * _arm_length(body) * direction / np.linalg.norm(direction)
        angles[index] = _arm_ik(relative[None], np.zeros(1), lateral, body)[0]
    return angles


def _arm_angles(
    plan: _Plan, body: BodyModel, times: FloatArray, pointing: FloatArray | None
) -> FloatArray:
    """Evaluate the plan at (N,) increasing times [s]: angles (N, 2, 4) [rad]."""
    key_times = np.array([key.time for key in plan.keys])
    values = np.array([[pose.angles for pose in key.poses] for key in plan.keys])
    if pointing is not None:
        values[list(plan.pointing)] = pointing
    angles = _interpolate(times, key_times, values.reshape(len(plan.keys), -1))
    angles = angles.reshape(times.shape[0], 2, len(ARM_ANGLE_NAMES))
    for index, lateral in enumerate((1, -1)):
        frames, points, swivels = [], [], []
        for before, key in zip(plan.keys[:-1], plan.keys[1:]):
            start_pose, stop_pose = before.poses[index], key.poses[index]
            if not key.line[index] or start_pose.point is None or stop_pose.point is None:
                continue
            first, last = np.searchsorted(times, [before.time, key.time], side='left')
            if first >= last:
                continue
            phase = _min_jerk((times[first:last] - before.time) / (key.time - before.time))
            frames.append(np.arange(first, last))
            points.append(start_pose.point + phase[:, None] * (stop_pose.point - start_pose.point))
            swivels.append(start_pose.swivel + phase * (stop_pose.swivel - start_pose.swivel))
        if frames:
            rows = np.concatenate(frames)
            angles[rows, index] = _arm_ik(
                np.concatenate(points), np.concatenate(swivels), lateral, body
            )
    return angles


def _stance_joints(
    plan: _Plan, body: BodyModel, times: FloatArray, pointing: FloatArray | None
) -> tuple[FloatArray, FloatArray]:
    """Arm angles (N, 2, 4) [rad] and joints (N, 25, 3) [m, stance frame] at times [s]."""
    angles = _arm_angles(plan, body, times, pointing)
    joints = _skeleton(angles, _trunk(times, plan.sway_phase, plan.trunk_keys), body)
    return angles, joints


def _inside_limits(angles: FloatArray) -> bool:
    limits = np.radians(np.array(ARM_ANGLE_LIMITS_DEG))
    return bool(
        np.all(angles >= limits[:, 0] - 1e-9) and np.all(angles <= limits[:, 1] + 1e-9)
    )


# --- Tracker errors -----------------------------------------------------------------------------

_ARM_CHAINS: Final = tuple(
    (_J[proximal + side], _J[distal + side], tuple(_J[name + side] for name in moved))
    for side in ('Left', 'Right')
    for proximal, distal, moved in (
        ('Shoulder', 'Elbow', ('Elbow', 'Wrist', 'Hand', 'HandTip', 'Thumb')),
        ('Elbow', 'Wrist', ('Wrist', 'Hand', 'HandTip', 'Thumb')),
    )
)


def foreshortening_offsets(truth: npt.ArrayLike, factor: float) -> FloatArray:
    """
    Compute the depth-camera shortening of arm bones that point at the sensor.

    For each upper arm (shoulder to elbow) and forearm (elbow to wrist): with the true proximal
    joint ``p``, bone direction ``u`` and length ``L``, ``c = max(0, u . (-p / |p|))`` and
    ``w = factor * c**2``; the distal joint and every joint beyond it move by ``-w * L * u``
    plus ``w * FORESHORTENING_DEPTH_BIAS`` along the line of sight from the distal joint
    towards the sensor. The shifts of the two bones add up along the chain.

    :param truth: Noise-free joints, shape (T, 25, 3), [m], Kinect v2 camera space (the sensor
        at the origin).
    :param factor: Shortening of a bone pointing straight at the sensor, 0 to 1 [fraction].
    :return: New array of joint shifts, shape (T, 25, 3), [m], camera space; zero outside the
        arms.
    :raises ConfigError: If the shape is wrong or the factor is outside [0, 1].
    """
    joints = np.asarray(truth, dtype=np.float64)
    if joints.ndim != 3 or joints.shape[1:] != (JOINT_COUNT, 3):
        raise ConfigError(f'truth must have shape (T, {JOINT_COUNT}, 3), got {joints.shape}')
    if not 0.0 <= factor <= 1.0:
        raise ConfigError(f'the foreshortening factor must be in [0, 1], got {factor!r}')
    offsets = np.zeros_like(joints)
    for proximal, distal, moved in _ARM_CHAINS:
        bone = joints[:, distal] - joints[:, proximal]
        length = np.linalg.norm(bone, axis=1, keepdims=True)
        direction = bone / length
        towards = -joints[:, proximal] / np.linalg.norm(joints[:, proximal], axis=1, keepdims=True)
        cosine = np.clip(np.sum(direction * towards, axis=1, keepdims=True), 0.0, 1.0)
        weight = factor * cosine**2
        sight = -joints[:, distal] / np.linalg.norm(joints[:, distal], axis=1, keepdims=True)
        shift = weight * (FORESHORTENING_DEPTH_BIAS * sight - length * direction)
        offsets[:, list(moved)] += shift[:, None, :]
    return offsets


# --- Takes --------------------------------------------------------------------------------------


def generate_take(spec: PersonSpec) -> SyntheticRecording:
    """
    Generate one take of the robustness suite, deterministically from its spec.

    :param spec: The person, placement, tracker errors and bad start of the take.
    :return: The take, named ``suite<seed>``: measured joints (NaN in lost frames) and the
        noise-free, unshortened truth in Kinect v2 camera space [m], stamps [s], true arm
        angles [rad] and one segment per task (the bad first second is in no segment).
    :raises ConfigError: If the upper body leaves the Kinect v2 field of view or an arm angle
        leaves :data:`~pic_ros.tools.synthetic.ARM_ANGLE_LIMITS_DEG` (the spec cannot be
        generated).
    """
    body = spec.body
    plan = _plan(spec.seed, body, spec.bad_start, spec.duration)
    pointing = (
        _pointing_angles(plan, body, spec.sensor_in_stance())
        if spec.bad_start == 'pointing' else None
    )
    clock = TrackerModel(loss_duration=0.0)
    stamps = _stamps(np.random.default_rng([spec.seed, _CLOCK_STREAM]), clock, spec.duration)
    angles, stance = _stance_joints(plan, body, stamps, pointing)
    if not _inside_limits(angles):
        raise ConfigError(f'take {spec.seed}: an arm angle leaves the anatomical limits')
    rotation, origin = spec.stance_to_camera()
    truth = stance @ rotation.T + origin
    if not np.all(in_field_of_view(truth[:, list(VIEW_JOINTS)])):
        raise ConfigError(
            f'take {spec.seed}: the upper body leaves the Kinect v2 field of view; move the '
            'sensor (height, tilt, lateral offset) or the person'
        )

    rng = np.random.default_rng([spec.seed, _ERROR_STREAM])
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
    sigma = errors.white_scale * _WHITE_SIGMA[None, :, None] * axes * depth
    white = sigma * rng.standard_normal(truth.shape)
    drift = _drift(rng, stamps, errors)
    outliers, jumps = _outliers(rng, tracked, errors)
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


# --- Suite --------------------------------------------------------------------------------------

_INDEPENDENT: Final = (
    'height', 'upper_arm_factor', 'forearm_factor', 'shoulder_width_factor', 'camera_distance',
    'noise_scale', 'outlier_rate', 'foreshortening', 'duration',
)
_PLACED: Final = ('camera_lateral', 'camera_height', 'camera_tilt_deg', 'person_yaw_deg')


def _spread(rng: np.random.Generator, count: int) -> FloatArray:
    """Latin-hypercube column in [0, 1]: both ends, jittered inner strata, shuffled."""
    if count == 1:
        return np.array([0.5])
    positions = np.arange(count, dtype=np.float64)
    positions[1:-1] += rng.uniform(-0.45, 0.45, count - 2)
    result: FloatArray = rng.permutation(positions / (count - 1))
    return result


def _place(values: dict[str, float | int | str], targets: Mapping[str, float]) -> bool:
    """
    Choose sensor height, tilt, lateral offset and the person's yaw near the targets.

    The choice keeps the upper body (:data:`VIEW_JOINTS`, sampled at 15 Hz) inside the view
    with a 2 degree margin and the sensor within the bearing limit. On success ``values`` gets
    the four placed fields and True is returned.
    """
    body = _scaled_body(
        float(values['height']), float(values['upper_arm_factor']),
        float(values['forearm_factor']), float(values['shoulder_width_factor']),
    )
    seed, bad_start = int(values['seed']), str(values['bad_start'])
    duration, distance = float(values['duration']), float(values['camera_distance'])
    plan = _plan(seed, body, bad_start, duration)
    times = np.arange(0.0, duration, 1.0 / _FIT_RATE)
    points = _stance_joints(plan, body, times, None)[1][:, list(VIEW_JOINTS)].reshape(-1, 3)
    lateral_range, height_range = PERSON_RANGES['camera_lateral'], PERSON_RANGES['camera_height']
    yaw_range = PERSON_RANGES['person_yaw_deg']
    heights = np.unique(np.append(np.arange(0.6, 1.8001, 0.1), targets['camera_height']))
    yaws = np.unique(np.append(np.arange(-35.0, 35.001, 5.0), targets['person_yaw_deg']))
    tilts = np.unique(np.append(np.arange(-20.0, 15.001, 0.5), targets['camera_tilt_deg']))
    tilts_rad = np.radians(tilts)[:, None]
    candidates = sorted(
        (
            abs(height - targets['camera_height']) / (height_range[1] - height_range[0])
            + abs(yaw - targets['person_yaw_deg']) / (yaw_range[1] - yaw_range[0]),
            float(height), float(yaw),
        )
        for height in heights if height_range[0] <= height <= height_range[1]
        for yaw in yaws if yaw_range[0] <= yaw <= yaw_range[1]
    )
    horizontal = math.tan(math.radians(0.5 * FIELD_OF_VIEW_DEG[0] - _FIT_MARGIN_DEG))
    vertical = math.tan(math.radians(0.5 * FIELD_OF_VIEW_DEG[1] - _FIT_MARGIN_DEG))
    bearing = math.radians(MAX_SENSOR_BEARING_DEG - _BEARING_MARGIN_DEG)
    for _, height, yaw in candidates:
        level = points @ _stance_to_level(yaw).T + np.array([0.0, -height, distance])
        depth = np.sin(tilts_rad) * level[:, 1] + np.cos(tilts_rad) * level[:, 2]
        up = np.cos(tilts_rad) * level[:, 1] - np.sin(tilts_rad) * level[:, 2]
        usable = np.all(
            (np.abs(up) <= vertical * depth)
            & (depth >= DEPTH_RANGE[0] + 0.05) & (depth <= DEPTH_RANGE[1] - 0.05),
            axis=1,
        )
        low = np.max(-horizontal * depth - level[:, 0], axis=1)
        high = np.min(horizontal * depth - level[:, 0], axis=1)
        yaw_rad = math.radians(yaw)
        low = np.maximum(low, max(lateral_range[0], distance * math.tan(yaw_rad - bearing)))
        high = np.minimum(high, min(lateral_range[1], distance * math.tan(yaw_rad + bearing)))
        feasible = np.flatnonzero(usable & (low <= high))
        for index in feasible[np.argsort(np.abs(tilts[feasible] - targets['camera_tilt_deg']))]:
            lateral = float(np.clip(targets['camera_lateral'], low[index], high[index]))
            placed = {
                'camera_lateral': round(lateral, 4),
                'camera_height': round(height, 4),
                'camera_tilt_deg': round(float(tilts[index]), 4),
                'person_yaw_deg': round(yaw, 4),
            }
            if bad_start == 'pointing' and not _pointing_fits(values, placed, plan, body):
                continue
            values.update(placed)
            return True
    return False


def _spec(values: Mapping[str, float | int | str]) -> PersonSpec:
    """Build a spec from a row of field values (numbers as floats, seed as int)."""

    def number(name: str) -> float:
        return float(values[name])

    return PersonSpec(
        seed=int(values['seed']),
        height=number('height'),
        upper_arm_factor=number('upper_arm_factor'),
        forearm_factor=number('forearm_factor'),
        shoulder_width_factor=number('shoulder_width_factor'),
        camera_distance=number('camera_distance'),
        camera_lateral=number('camera_lateral'),
        camera_height=number('camera_height'),
        camera_tilt_deg=number('camera_tilt_deg'),
        person_yaw_deg=number('person_yaw_deg'),
        noise_scale=number('noise_scale'),
        outlier_rate=number('outlier_rate'),
        foreshortening=number('foreshortening'),
        bad_start=str(values['bad_start']),
        duration=number('duration'),
    )


def _pointing_fits(
    values: Mapping[str, float | int | str], placed: Mapping[str, float], plan: _Plan,
    body: BodyModel,
) -> bool:
    """Tell whether pointing at this sensor stays in the angle limits and in view (1 deg)."""
    spec = _spec({**values, **placed})
    pointing = _pointing_angles(plan, body, spec.sensor_in_stance())
    times = np.arange(0.0, plan.start_end + 0.1, 1.0 / 30.0)
    angles, stance = _stance_joints(plan, body, times, pointing)
    rotation, origin = spec.stance_to_camera()
    camera = stance[:, list(VIEW_JOINTS)] @ rotation.T + origin
    return _inside_limits(angles) and bool(np.all(in_field_of_view(camera, _CHECK_MARGIN_DEG)))


def suite_specs(count: int = SUITE_COUNT, seed: int = SUITE_SEED) -> tuple[PersonSpec, ...]:
    """
    Draw the specs of the robustness suite, deterministically from a seed.

    Each numeric field of :data:`PERSON_RANGES` not tied to the placement gets a Latin-hypercube
    column over its whole range: the takes hold both ends of every range (for ``count >= 2``),
    for example 1.5 m and 2.0 m tall people, arm factors 0.85 and 1.15 and sensors 1.5 m and
    4.0 m away, and the other takes fill the strata in between in a shuffled order. The sensor
    height, tilt, lateral offset and the person's yaw are drawn the same way as targets, then
    moved to the nearest values that keep the upper body inside the view in every frame of the
    take (with a 2 degree margin) and the sensor within :data:`MAX_SENSOR_BEARING_DEG` of the
    person's forward direction; where no such placement exists the take swaps its sensor
    distance with another take (the column keeps its values). Bad starts cycle
    ``crossed, pointing, crossed, pointing, none`` before shuffling, so each of the first two
    is in at least a third of the takes. Take ``i`` gets the seed ``1000 * seed + i``.

    :param count: Number of takes, >= 1.
    :param seed: Seed of the draw, >= 0.
    :return: The specs, in take order.
    :raises ConfigError: If ``count`` or ``seed`` is not a positive or non-negative integer, or
        a take cannot be placed in view.
    """
    for name, value, least in (('count', count, 1), ('seed', seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ConfigError(f'{name} must be an integer >= {least}, got {value!r}')
    rng = np.random.default_rng(seed)
    columns: dict[str, FloatArray] = {}
    for name in _INDEPENDENT + _PLACED:
        low, high = PERSON_RANGES[name]
        fraction = _spread(rng, count)
        columns[name] = np.round(low * (1.0 - fraction) + high * fraction, 4)
    pattern = ('crossed', 'pointing', 'crossed', 'pointing', 'none')
    starts = rng.permutation([pattern[index % len(pattern)] for index in range(count)])
    rows: list[dict[str, float | int | str]] = [
        {
            'seed': 1000 * seed + index,
            'bad_start': str(starts[index]),
            **{name: float(columns[name][index]) for name in _INDEPENDENT},
        }
        for index in range(count)
    ]
    targets = [
        {name: float(columns[name][index]) for name in _PLACED} for index in range(count)
    ]
    placed = [False] * count
    for index in range(count):
        placed[index] = _place(rows[index], targets[index])
        if placed[index]:
            continue
        for other in rng.permutation(count):
            if other == index:
                continue
            mine, theirs = rows[index]['camera_distance'], rows[other]['camera_distance']
            rows[index]['camera_distance'], rows[other]['camera_distance'] = theirs, mine
            if _place(rows[index], targets[index]) and (
                not placed[other] or _place(rows[other], targets[other])
            ):
                placed[index] = True
                break
            rows[index]['camera_distance'], rows[other]['camera_distance'] = mine, theirs
        if not placed[index]:
            raise ConfigError(f'suite take {index} cannot be placed inside the sensor view')
    return tuple(_spec(row) for row in rows)


__all__ = [
    'BAD_STARTS',
    'DEPTH_RANGE',
    'FIELD_OF_VIEW_DEG',
    'FORESHORTENING_DEPTH_BIAS',
    'MAX_SENSOR_BEARING_DEG',
    'PERSON_RANGES',
    'PersonSpec',
    'REFERENCE_HEIGHT',
    'SUITE_COUNT',
    'SUITE_SEED',
    'TASK_NAMES',
    'VIEW_JOINTS',
    'foreshortening_offsets',
    'generate_take',
    'in_field_of_view',
    'suite_specs',
]
