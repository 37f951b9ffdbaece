"""
Motion in time of a synthetic person: minimum-jerk profiles between keys and the trunk's sway.

Angles and positions move along minimum-jerk profiles between key poses (:func:`interpolate`);
the trunk turns about the pelvis (half of the turn in the lower spine, all of it above the
chest) with lean and twist keys plus a slow sway of about 1 degree (:func:`trunk_at`). Times in
seconds, angles in degrees where a name says ``_deg``, else radians.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros_tools.synthetic.kinematics import rot_x, rot_y, rot_z, Trunk

FloatArray = npt.NDArray[np.float64]


def min_jerk(phase: FloatArray) -> FloatArray:
    """Return the minimum-jerk profile 10 s^3 - 15 s^4 + 6 s^5 of a phase clipped to [0, 1]."""
    s = np.clip(phase, 0.0, 1.0)
    return s * s * s * (10.0 - 15.0 * s + 6.0 * s * s)


def interpolate(times: FloatArray, key_times: FloatArray, key_values: FloatArray) -> FloatArray:
    """Interpolate (K, D) key values at (N,) times along minimum-jerk profiles; hold outside."""
    index = np.clip(np.searchsorted(key_times, times, side='right') - 1, 0, len(key_times) - 2)
    start, stop = key_times[index], key_times[index + 1]
    weight = min_jerk((times - start) / (stop - start))[:, None]
    return key_values[index] + weight * (key_values[index + 1] - key_values[index])


_SWAY_AMPLITUDE_DEG: Final = np.array([[1.2, 0.4], [0.8, 0.3], [1.0, 0.3]])
"""Trunk sway amplitudes [deg], shape (3, 2): two sinusoids per axis (yaw, pitch, roll)."""

SWAY_FREQUENCY: Final = np.array([[0.07, 0.23], [0.11, 0.31], [0.13, 0.27]])
"""Trunk sway frequencies [Hz], shape (3, 2), as :data:`_SWAY_AMPLITUDE_DEG`; a take draws one
phase per sinusoid."""


def trunk_at(times: FloatArray, sway_phase: FloatArray, keys: FloatArray) -> Trunk:
    """
    Return the trunk rotations at times: lean and twist keys plus a slow sway.

    :param times: Times, shape (N,), [s].
    :param sway_phase: Phase of each sway sinusoid, shape (3, 2), [rad].
    :param keys: Shape (K, 3): time [s], lean (forward pitch) [deg], twist (yaw to the left)
        [deg], interpolated along minimum-jerk profiles.
    :return: The trunk state at each time (stance frame).
    """
    lean_twist = np.radians(interpolate(times, keys[:, 0], keys[:, 1:]))
    waves = np.sin(
        2.0 * np.pi * SWAY_FREQUENCY[None] * times[:, None, None] + sway_phase[None]
    )
    sway = np.radians(np.sum(_SWAY_AMPLITUDE_DEG[None] * waves, axis=2))
    yaw = lean_twist[:, 1] + sway[:, 0]
    pitch = lean_twist[:, 0] + sway[:, 1]
    roll = sway[:, 2]
    lower = rot_z(0.5 * yaw) @ rot_y(0.5 * pitch) @ rot_x(0.5 * roll)
    chest = rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)
    return Trunk(lower=lower, chest=chest, nod=1.2 * pitch)
