"""
Crouching people: the robustness suite's takes with the person bending the knees now and then.

Whole-body imitation moves the robot's torso with the person's chest height
(:mod:`pic_ros.correspondence.torso`); the suite's people stand, so :func:`crouching_take` adds
crouches to a suite take: the whole upper body goes straight down along the person's up axis
(a knee bend with the trunk upright) by :data:`CROUCH_DEPTH` of the person's height, in smooth
cycles (:func:`crouch_profile`), the arms doing the take's tasks meanwhile. The drop is the same
share of every person's height, so a tall and a short person crouch alike; the sensor does not
move, so the chest also changes its place in the image.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros_tools.synthetic.people import PersonSpec
from pic_ros_tools.synthetic.recording import SyntheticRecording
from pic_ros_tools.synthetic.suite_take import generate_take

FloatArray = npt.NDArray[np.float64]

CROUCH_DEPTH: Final = 0.1
"""Deepest crouch: how far the shoulders go down, as a share of the person's height [-] (a
knee bend of about 45 degrees)."""

STAND_FIRST: Final = 3.0
"""Standing time at the start of a take [s], before the first crouch."""

CYCLE: Final = (2.0, 2.0, 2.0, 3.0)
"""One crouch: going down, holding, coming up, standing [s] (the shoulders move at most at
about 0.14 m/s for a 1.8 m person)."""


def crouch_profile(stamps: npt.ArrayLike) -> FloatArray:
    """
    Return how deep the person crouches at each time, 0 (standing) to 1 (deepest).

    :param stamps: Times since the start of the take [s].
    :return: Shape (T,): raised-cosine ramps down and up between holds.
    """
    times = np.asarray(stamps, dtype=float) - STAND_FIRST
    down, hold, up, stand = CYCLE
    phase = np.mod(times, sum(CYCLE))
    depth = np.zeros_like(phase)
    going = phase < down
    depth[going] = 0.5 - 0.5 * np.cos(np.pi * phase[going] / down)
    held = (phase >= down) & (phase < down + hold)
    depth[held] = 1.0
    rising = (phase >= down + hold) & (phase < down + hold + up)
    depth[rising] = 0.5 + 0.5 * np.cos(np.pi * (phase[rising] - down - hold) / up)
    depth[times < 0.0] = 0.0
    return depth


def crouching_take(spec: PersonSpec) -> SyntheticRecording:
    """
    Generate a suite take with crouches (:func:`crouch_profile`, :data:`CROUCH_DEPTH`).

    :param spec: The person, placement and tracker errors (as for the suite).
    :return: The take, named ``crouch<seed>``: every joint, measured and true, moved down along
        the person's up axis [m], Kinect v2 camera space.
    """
    take = generate_take(spec)
    rotation, _ = spec.stance_to_camera()
    up = rotation @ np.array([0.0, 0.0, 1.0])  # the stance frame's up, in camera space
    drop = CROUCH_DEPTH * spec.height * crouch_profile(take.stamps)
    offset = -drop[:, None, None] * up[None, None, :]
    return dataclasses.replace(
        take, name=f'crouch{spec.seed}', joints=take.joints + offset, truth=take.truth + offset
    )


__all__ = ['CROUCH_DEPTH', 'crouch_profile', 'crouching_take']
