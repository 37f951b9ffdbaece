"""
The robustness suite: many different synthetic people, drawn deterministically from a seed.

:func:`suite_specs` draws the :class:`~pic_ros_tools.synthetic.people.PersonSpec` of every
take (50 by default) as Latin-hypercube columns over
:data:`~pic_ros_tools.synthetic.people.PERSON_RANGES`, then places each sensor so that the upper
body stays in view; each take is then made by
:func:`~pic_ros_tools.synthetic.suite_take.generate_take`, so that an evaluation can check that
pose imitation holds for any person and cannot be tuned to one.
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.body import BodyModel, scaled_body
from pic_ros_tools.synthetic.field_of_view import (
    DEPTH_RANGE,
    FIELD_OF_VIEW_DEG,
    in_field_of_view,
    VIEW_JOINTS,
)
from pic_ros_tools.synthetic.kinematics import inside_limits
from pic_ros_tools.synthetic.people import (
    MAX_SENSOR_BEARING_DEG,
    PERSON_RANGES,
    PersonSpec,
    stance_to_level,
)
from pic_ros_tools.synthetic.suite_plan import draw_plan, Plan, pointing_angles, stance_joints

FloatArray = npt.NDArray[np.float64]

SUITE_COUNT: Final = 50
"""Default number of takes of :func:`suite_specs`."""

SUITE_SEED: Final = 2024
"""Default seed of :func:`suite_specs`."""

_FIT_RATE: Final = 15.0  # rate [Hz] at which a placement is checked against the view
_FIT_MARGIN_DEG: Final = 2.0  # view margin [deg] of a placement
_CHECK_MARGIN_DEG: Final = 1.0  # view margin [deg] of the pointing start
_BEARING_MARGIN_DEG: Final = 0.5  # margin [deg] kept from MAX_SENSOR_BEARING_DEG

_INDEPENDENT: Final = (
    'height', 'upper_arm_factor', 'forearm_factor', 'shoulder_width_factor', 'camera_distance',
    'noise_scale', 'outlier_rate', 'foreshortening', 'duration',
)

_PLACED: Final = ('camera_lateral', 'camera_height', 'camera_tilt_deg', 'person_yaw_deg')
"""The spec fields that :func:`_place` chooses (the others are drawn independently)."""


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
    body = scaled_body(
        float(values['height']), float(values['upper_arm_factor']),
        float(values['forearm_factor']), float(values['shoulder_width_factor']),
    )
    seed, bad_start = int(values['seed']), str(values['bad_start'])
    duration, distance = float(values['duration']), float(values['camera_distance'])
    plan = draw_plan(seed, body, bad_start, duration)
    times = np.arange(0.0, duration, 1.0 / _FIT_RATE)
    points = stance_joints(plan, body, times, None)[1][:, list(VIEW_JOINTS)].reshape(-1, 3)
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
        level = points @ stance_to_level(yaw).T + np.array([0.0, -height, distance])
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
    values: Mapping[str, float | int | str], placed: Mapping[str, float], plan: Plan,
    body: BodyModel,
) -> bool:
    """Tell whether pointing at this sensor stays in the angle limits and in view (1 deg)."""
    spec = _spec({**values, **placed})
    pointing = pointing_angles(plan, body, spec.sensor_in_stance())
    times = np.arange(0.0, plan.start_end + 0.1, 1.0 / 30.0)
    angles, stance = stance_joints(plan, body, times, pointing)
    rotation, origin = spec.stance_to_camera()
    camera = stance[:, list(VIEW_JOINTS)] @ rotation.T + origin
    return inside_limits(angles) and bool(np.all(in_field_of_view(camera, _CHECK_MARGIN_DEG)))


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
