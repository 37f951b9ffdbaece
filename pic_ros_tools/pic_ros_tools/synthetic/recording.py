"""
A generated take: measured and true joints, tracking state and labelled task segments.

:class:`SyntheticRecording` is what both generators return (the demo take,
:func:`~pic_ros_tools.synthetic.demo_take.generate_recording`, and the suite's takes,
:func:`~pic_ros_tools.synthetic.suite_take.generate_take`); joints in Kinect v2 camera space [m],
stamps [s].
"""

from __future__ import annotations

from dataclasses import dataclass
import re
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.kinematics import ARM_ANGLE_NAMES
from pic_ros_tools.synthetic.skeleton import JOINT_COUNT

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_ARM_VALUES: Final = ('left', 'right', 'both')

NAME_PATTERN: Final = re.compile(r'^(?P<task>.+?)(?P<number>\d+)$')
"""Recording names: ``<task><n>``, e.g. ``synthetic1`` (groups ``task`` and ``number``)."""


def read_only(array: npt.ArrayLike) -> FloatArray:
    """
    Return a read-only float64 copy of an array.

    :param array: The values.
    :return: New read-only array of the same shape.
    """
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
        :data:`~pic_ros_tools.synthetic.skeleton.JOINT_NAMES` order; rows of lost frames are NaN.
    :param truth: Noise-free joints, shape (T, 25, 3), [m], camera space, finite for every frame
        (including lost ones).
    :param tracked: Whether the body was tracked in each frame, shape (T,).
    :param outliers: Which joints carry a single-frame outlier, shape (T, 25); never set on
        lost frames.
    :param arm_angles: True arm angles, shape (T, 2, 4), [rad]; axis 1 in
        :data:`~pic_ros_tools.synthetic.kinematics.ARM_SIDES` order, axis 2 in
        :data:`~pic_ros_tools.synthetic.kinematics.ARM_ANGLE_NAMES` order.
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
        stamps = read_only(self.stamps)
        count = stamps.shape[0]
        arrays = {
            'joints': (read_only(self.joints), (count, JOINT_COUNT, 3)),
            'truth': (read_only(self.truth), (count, JOINT_COUNT, 3)),
            'tracked': (_read_only_flags(self.tracked), (count,)),
            'outliers': (_read_only_flags(self.outliers), (count, JOINT_COUNT)),
            'arm_angles': (read_only(self.arm_angles), (count, 2, len(ARM_ANGLE_NAMES))),
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
