"""
The PIC paper's task surfaces: the pad (incision) and the insertion area (assembly) of its configs.

Each paper configuration ``paper_configs/<robot>_config_<task><n>.json`` describes the surface
whose occlusion the paper measures as a box (``docs/method.md#percentage-of-occlusion``):

- ``pad_offset``: the box's centre [cm] in the paper's simulation frame, where the person's right
  shoulder, scaled by ``scale`` and pinned to the right arm's base, is the origin; +x is the
  person's left, +y up, +z the person's forward direction (the Kinect v2 camera frame turned
  180 degrees about the vertical);
- ``pad_dim``: the box's length, height, width [cm] at the person's size (times ``scale`` in the
  simulation frame);
- ``pad_axis``: with ``pad_dim``, which face of the box is the region of interest (ROI):

  * ``pad_axis`` along x: the top face (horizontal; u = +x over the length, v = +z over the
    width) -- the incision pad and assembly 1;
  * the largest ``pad_axis`` component on the smallest dimension: the face at +x of a thin box
    (vertical y-z plane; u = +y over the length, v = +z over the width) -- assembly 3;
  * otherwise the face at +z (vertical x-y plane; u = +x over the height, v = +y over the
    length) -- assembly 2.

These are the faces and extents the authors' evaluation used for its tables (reproduced in
``pic_method.md`` section 3.4). :class:`PaperPad` keeps the published numbers and places the ROI
in the simulation frame, at the person's size, and in the ``tracker`` frame of a recording.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import math
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import RecordingError
from pic_ros_tools.occlusion import RegionOfInterest, TaskPlane

FloatArray = npt.NDArray[np.float64]

SIM_TO_TRACKER: Final = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
"""
Rotation ``tracker <- simulation frame`` of the paper (a proper rotation).

The simulation frame is Kinect v2 camera space turned 180 degrees about its y axis,
``(-x, y, -z)``; the tracker frame is ``(z, x, y)`` of camera space
(:func:`pic_ros.trackers.kinect_v2.camera_to_tracker`); so ``tracker = (-z, -x, y)`` of the
simulation frame.
"""
SIM_TO_TRACKER.setflags(write=False)

_CM: Final = 0.01
"""Metres per centimetre."""


def _triple(path: Path, content: dict[str, object], key: str) -> tuple[float, float, float]:
    value = content.get(key)
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        or not all(math.isfinite(float(v)) for v in value)
    ):
        raise RecordingError(f'{path}: {key!r} must be three numbers, got {value!r}')
    return float(value[0]), float(value[1]), float(value[2])


@dataclass(frozen=True)
class PaperPad:
    """
    A paper configuration's task surface, as published.

    :param scale: The person -> robot length factor of the configuration (``scale``) [-].
    :param dims: ``pad_dim``: length, height, width at the person's size [cm].
    :param axis: ``pad_axis``: the face selector.
    :param centre: ``pad_offset``: the box's centre in the simulation frame [cm].
    :raises RecordingError: If ``scale`` or a dimension is not positive, or ``axis`` is zero.
    """

    scale: float
    dims: tuple[float, float, float]
    axis: tuple[float, float, float]
    centre: tuple[float, float, float]

    def __post_init__(self) -> None:
        if not (math.isfinite(self.scale) and self.scale > 0.0):
            raise RecordingError(f'pad: scale must be positive, got {self.scale!r}')
        if not all(math.isfinite(d) and d > 0.0 for d in self.dims):
            raise RecordingError(f'pad: pad_dim must be positive, got {self.dims!r}')
        if not any(a != 0.0 for a in self.axis):
            raise RecordingError('pad: pad_axis must not be zero')

    def robot_region(self) -> RegionOfInterest:
        """
        Return the ROI in the paper's simulation frame at the robot's size.

        :return: The ROI [m]: origin at the corner the authors' code used, axes along the
            simulation axes (see the module docstring).
        """
        length, height, width = (self.scale * d * _CM for d in self.dims)
        centre = np.array(self.centre) * _CM
        x_axis, y_axis, z_axis = np.eye(3)
        if int(np.argmax(self.axis)) == 0:  # the top face
            origin = centre + 0.5 * np.array([-length, height, -width])
            return RegionOfInterest(TaskPlane(origin, x_axis, z_axis), length, width)
        if int(np.argmax(self.axis)) == int(np.argmin(self.dims)):  # vertical y-z face
            origin = centre + 0.5 * np.array([height, -length, -width])
            return RegionOfInterest(TaskPlane(origin, y_axis, z_axis), length, width)
        origin = centre + 0.5 * np.array([-height, -length, width])  # vertical x-y face
        return RegionOfInterest(TaskPlane(origin, x_axis, y_axis), height, length)

    def human_region(self) -> RegionOfInterest:
        """
        Return the ROI at the person's size, from the person's right shoulder.

        :return: The ROI [m], simulation-frame axes, origin of coordinates at the right shoulder
            (the robot region divided by ``scale``).
        """
        return self.robot_region().moved(np.eye(3), np.zeros(3), 1.0 / self.scale)

    def tracker_region(self, right_shoulder: npt.ArrayLike) -> RegionOfInterest:
        """
        Return the ROI in a recording's ``tracker`` frame.

        :param right_shoulder: Where the person's right shoulder is, tracker frame, shape (3,),
            [m].
        :return: The ROI at the person's size, fixed in the tracker frame [m].
        """
        return self.human_region().moved(SIM_TO_TRACKER, np.asarray(right_shoulder, float))


def load_paper_pad(path: Path | str) -> PaperPad | None:
    """
    Read the task surface of a paper configuration.

    :param path: ``<robot>_config_<task><n>.json``.
    :return: The pad as published, or None when the file has no ``pad_dim`` (a configuration
        without a task surface, e.g. the project's synthetic demo).
    :raises RecordingError: If the file cannot be read or a pad field is malformed.
    """
    path = Path(path)
    try:
        content = json.loads(path.read_text(encoding='utf-8'))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RecordingError(f'cannot read paper configuration {path}: {error}') from error
    if not isinstance(content, dict):
        raise RecordingError(f'{path}: expected a JSON object')
    if 'pad_dim' not in content:
        return None
    scale = content.get('scale')
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise RecordingError(f'{path}: "scale" must be a number, got {scale!r}')
    return PaperPad(
        scale=float(scale),
        dims=_triple(path, content, 'pad_dim'),
        axis=_triple(path, content, 'pad_axis'),
        centre=_triple(path, content, 'pad_offset'),
    )


__all__ = ['PaperPad', 'SIM_TO_TRACKER', 'load_paper_pad']
