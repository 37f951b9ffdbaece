"""
The people of the robustness suite: who they are, where the sensor stands, their tracker errors.

:class:`PersonSpec` holds everything that varies between the suite's takes, within
:data:`PERSON_RANGES`; it places the person in Kinect v2 camera space
(:meth:`PersonSpec.stance_to_camera`). Its seed drives the take's random draws, one
``np.random.default_rng([seed, stream])`` per stream (:data:`MOTION_STREAM`,
:data:`CLOCK_STREAM`, :data:`ERROR_STREAM`). Lengths in metres, angles in degrees.
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
from pic_ros_tools.synthetic.body import BodyModel, scaled_body
from pic_ros_tools.synthetic.kinematics import rot_z

FloatArray = npt.NDArray[np.float64]

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

MAX_SENSOR_BEARING_DEG: Final = 35.0
"""Largest horizontal angle [deg] between the person's forward direction and the sensor."""

MOTION_STREAM: Final = 0
"""Stream of ``np.random.default_rng([seed, stream])`` that draws a take's motion."""

CLOCK_STREAM: Final = 1
"""Stream that draws a take's frame stamps."""

ERROR_STREAM: Final = 2
"""Stream that draws a take's tracker errors and tracking loss."""

_STANCE_TO_LEVEL: Final = np.array([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]])


def _level_to_camera(tilt_deg: float) -> FloatArray:
    """Rotation camera <- level (3, 3) of a sensor pitched up by ``tilt_deg``."""
    tilt = math.radians(tilt_deg)
    cos, sin = math.cos(tilt), math.sin(tilt)
    return np.array([[1.0, 0.0, 0.0], [0.0, cos, -sin], [0.0, sin, cos]])


def stance_to_level(yaw_deg: float) -> FloatArray:
    """
    Return the rotation level <- stance of a person facing the sensor, turned left by a yaw.

    :param yaw_deg: Turn of the person to their left [deg].
    :return: Rotation, shape (3, 3).
    """
    rotation: FloatArray = _STANCE_TO_LEVEL @ rot_z(np.array(math.radians(yaw_deg)))
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
        measured shorter, 0 to 0.35
        (:func:`~pic_ros_tools.synthetic.foreshortening.foreshortening_offsets`).
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
        return scaled_body(
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
        rotation = level_to_camera @ stance_to_level(self.person_yaw_deg)
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
        sensor: FloatArray = -(stance_to_level(self.person_yaw_deg).T @ level)
        return sensor
