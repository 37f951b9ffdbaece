"""
Human -> robot mapping: which human arm drives which robot arm, and where its points go.

Product §3: the body-centred human frame and the robot base frame share their axes (REP-103,
x forward, y left, z up), as if the person stood in the robot's place. Each arm is mapped on its
own: the human shoulder is pinned to the robot arm's shoulder landmark (at the neutral pose) and
the arm is scaled uniformly, so link *directions* and the elbow angle are kept; only lengths
change.

- ``same_side``: the person's right arm drives the robot's right arm (what the PIC paper does).
- ``mirror``: face to face; the person's right arm drives the robot's left arm and the motion is
  reflected through the robot's sagittal plane (y -> -y), so a person raising their right hand
  to their right sees the robot raise its left hand to its left.

``scale: auto`` is robot arm length (shoulder->elbow + elbow->wrist landmarks) / human arm length,
measured over the first ``scale_window`` seconds of valid data, then held. The human length is the
90th percentile of the upper-arm length plus that of the forearm over the window: depth trackers
shorten a bone that points at the camera (foreshortening) far more often than they lengthen one, so
a high percentile estimates the true length better than the median. On the PIC paper's Kinect v2
recordings the first-second median was up to 18 % below the arm length during the tasks, which
over-stretched the robot arms; the 90th percentile was within a few percent.
"""

from __future__ import annotations

from dataclasses import dataclass
import enum
from typing import Any, Final, Mapping

import numpy as np
import numpy.typing as npt

from pic_ros.exceptions import ConfigError
from pic_ros.human.skeleton import Side, SkeletonFrame
from pic_ros.validation import check_choice, check_number

FloatArray = npt.NDArray[np.float64]

MIRROR_REFLECTION: Final = np.diag([1.0, -1.0, 1.0])
"""Reflection through the sagittal (x-z) plane, used by the ``mirror`` mapping."""


class MappingMode(enum.Enum):
    """How the person's arms are assigned to the robot's arms."""

    SAME_SIDE = 'same_side'
    MIRROR = 'mirror'


@dataclass(frozen=True)
class MappingConfig:
    """
    Settings of the human -> robot mapping.

    :param mode: ``same_side`` or ``mirror``.
    :param scale: Fixed human -> robot length factor, or ``None`` for ``auto``.
    :param scale_window: Seconds of valid data the automatic scale is measured over [s].
    """

    mode: MappingMode = MappingMode.SAME_SIDE
    scale: float | None = None
    scale_window: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.mode, MappingMode):
            raise ConfigError(f'mapping mode must be a MappingMode, got {self.mode!r}')
        if self.scale is not None:
            check_number('mapping scale', self.scale, 0.05, 20.0)
        check_number('mapping scale_window', self.scale_window, 0.0, 60.0)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = 'mapping') -> MappingConfig:
        """
        Build a config from YAML or parameter values.

        :param data: Keys ``mode`` (``same_side``/``mirror``), ``scale`` (``auto`` or a number)
            and ``scale_window`` [s]; all optional.
        :param where: Prefix for error messages.
        :return: The validated config.
        :raises ConfigError: On an unknown key or an invalid value.
        """
        unknown = sorted(set(data) - {'mode', 'scale', 'scale_window'})
        if unknown:
            raise ConfigError(f'{where}: unknown keys {unknown}; known: mode, scale, scale_window')
        mode = check_choice(
            f'{where}.mode', data.get('mode', 'same_side'), [m.value for m in MappingMode]
        )
        raw_scale = data.get('scale', 'auto')
        scale = None
        if raw_scale != 'auto':
            scale = check_number(f'{where}.scale', raw_scale, 0.05, 20.0)
        window = check_number(f'{where}.scale_window', data.get('scale_window', 1.0), 0.0, 60.0)
        return cls(mode=MappingMode(mode), scale=scale, scale_window=window)


def human_side_for(robot_side: Side, mode: MappingMode) -> Side:
    """
    Return which of the person's arms drives a robot arm.

    :param robot_side: Side of the robot arm.
    :param mode: Mapping mode.
    :return: The person's arm side.
    """
    return robot_side if mode is MappingMode.SAME_SIDE else robot_side.other


@dataclass(frozen=True)
class ArmTargets:
    """
    A human arm placed on a robot arm, in the robot base frame.

    :param shoulder: Shoulder target (the robot's shoulder landmark at neutral), shape (3,), [m].
    :param elbow: Elbow target, shape (3,), [m].
    :param wrist: Wrist (end-effector) target, shape (3,), [m].
    :param scale: Length factor used [-].
    """

    shoulder: FloatArray
    elbow: FloatArray
    wrist: FloatArray
    scale: float

    def moved_to(self, shoulder: npt.ArrayLike) -> ArmTargets:
        """
        Translate the whole arm so that its shoulder is at another point.

        :param shoulder: New shoulder position, shape (3,), [m], robot base frame.
        :return: The translated targets (same directions, lengths and scale).
        """
        offset = np.asarray(shoulder, dtype=float) - self.shoulder
        return ArmTargets(
            shoulder=self.shoulder + offset,
            elbow=self.elbow + offset,
            wrist=self.wrist + offset,
            scale=self.scale,
        )

    @property
    def upper_arm(self) -> FloatArray:
        """Shoulder -> elbow vector, shape (3,), [m], base frame."""
        return self.elbow - self.shoulder

    @property
    def forearm(self) -> FloatArray:
        """Elbow -> wrist vector, shape (3,), [m], base frame."""
        return self.wrist - self.elbow


class ArmMapper:
    """
    Map one human arm onto one robot arm, frame after frame (holds the automatic scale).

    :param config: Mapping settings.
    :param robot_side: Side of the robot arm.
    :param robot_shoulder: Robot shoulder landmark at the neutral pose, shape (3,), [m], base
        frame; the human shoulder is pinned there.
    :param robot_arm_length: Robot shoulder->elbow + elbow->wrist landmark distance [m].
    """

    def __init__(
        self,
        config: MappingConfig,
        robot_side: Side,
        robot_shoulder: npt.ArrayLike,
        robot_arm_length: float,
    ) -> None:
        self.config = config
        self.human_side = human_side_for(robot_side, config.mode)
        self._rotation = np.eye(3) if config.mode is MappingMode.SAME_SIDE else MIRROR_REFLECTION
        self._shoulder = np.array(robot_shoulder, dtype=float).reshape(3)
        self._shoulder.setflags(write=False)
        self._robot_length = check_number('robot arm length', robot_arm_length, 1e-3, 10.0)
        self._bones: list[tuple[float, float]] = []
        self._first_stamp: float | None = None
        self._held: float | None = config.scale

    def adopt(self, other: ArmMapper) -> None:
        """
        Continue another mapper's scale measurement (after a settings change).

        :param other: The mapper being replaced; its measurement is copied, not shared.
        """
        if other.config.scale is None and self.config.scale is None:
            self._bones = list(other._bones)
            self._first_stamp = other._first_stamp
            self._held = other._held

    def reset(self) -> None:
        """Forget the automatic scale measurement (a new person, or a new session)."""
        self._bones.clear()
        self._first_stamp = None
        self._held = self.config.scale

    @property
    def scale(self) -> float | None:
        """Return the current scale; ``None`` before any valid data when ``scale`` is ``auto``."""
        if self._held is not None:
            return self._held
        return self._measured()

    def _measured(self) -> float | None:
        if not self._bones:
            return None
        bones = np.array(self._bones)
        length = float(np.percentile(bones[:, 0], 90.0) + np.percentile(bones[:, 1], 90.0))
        return self._robot_length / length

    def _observe(self, stamp: float, upper: float, fore: float) -> None:
        if self._held is not None or not (0.02 < upper < 1.5 and 0.02 < fore < 1.5):
            return
        if self._first_stamp is None:
            self._first_stamp = stamp
        self._bones.append((upper, fore))
        if stamp - self._first_stamp >= self.config.scale_window:
            self._held = self._measured()

    def place(self, frame: SkeletonFrame) -> ArmTargets | None:
        """
        Place the driving human arm of a body-frame skeleton on the robot arm.

        :param frame: Skeleton in the ``body`` frame.
        :return: The targets, or ``None`` when the driving arm is not valid in this frame.
        :raises ConfigError: If the frame is not in the ``body`` frame.
        """
        if frame.frame != 'body':
            raise ConfigError(f"the mapping needs a 'body' frame skeleton, got {frame.frame!r}")
        if not frame.has_arm(self.human_side):
            return None
        shoulder, elbow, wrist = frame.arm(self.human_side)
        self._observe(
            frame.stamp,
            float(np.linalg.norm(elbow - shoulder)),
            float(np.linalg.norm(wrist - elbow)),
        )
        scale = self.scale
        if scale is None:
            return None
        rotation = self._rotation
        return ArmTargets(
            shoulder=self._shoulder.copy(),
            elbow=self._shoulder + scale * (rotation @ (elbow - shoulder)),
            wrist=self._shoulder + scale * (rotation @ (wrist - shoulder)),
            scale=scale,
        )
