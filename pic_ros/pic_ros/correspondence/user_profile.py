"""
Per-user arm lengths: the calibration pose, the calibration itself and the profile file.

The ``position`` correspondence scales the person's arm to the robot's, so it needs the person's
bone lengths. They can be learnt on the fly (:mod:`pic_ros.correspondence.bone_lengths`) or
measured once per person: the person holds the **calibration pose** for a few seconds and the
lengths are written to a small YAML file (a *user profile*) that the solver loads
(``user_profile`` parameter / ``--user-profile`` option).

Calibration pose: standing, both arms stretched out sideways at shoulder height, palms down (a
"T-pose"). Seen by a depth camera in front of the person, both bones of both arms are then side-on,
so none is foreshortened. A frame counts when, in the body frame, each arm's elbow is straight
within :attr:`CalibrationConfig.max_bend_deg` and both bones point sideways (to the person's own
side) within :attr:`CalibrationConfig.max_axis_deg`. The lengths are the medians over the most
recent run of :attr:`CalibrationConfig.duration` seconds of such frames.

Profile file (YAML; lengths in metres)::

    # pic_ros user profile (python -m pic_ros_tools calibrate)
    name: alice
    frames: 90
    arms:
      left: {upper_arm: 0.281, forearm: 0.252}
      right: {upper_arm: 0.279, forearm: 0.255}
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_integer, check_number
from pic_ros.exceptions import ConfigError
from pic_ros.resources import read_yaml
from pic_ros.skeleton import Side, SkeletonFrame
import yaml

FloatArray = npt.NDArray[np.float64]

LENGTH_RANGE: Final = (0.1, 0.6)
"""Believable range of a human upper arm or forearm [m]."""

POSE_TEXT: Final = (
    'stand facing the tracker with both arms stretched out sideways at shoulder height'
)
"""The calibration pose, in words, for prompts and error messages."""


@dataclass(frozen=True)
class ArmLengths:
    """
    The two bone lengths of one human arm.

    :param upper_arm: Shoulder -> elbow [m].
    :param forearm: Elbow -> wrist [m].
    :raises ConfigError: If a length is outside :data:`LENGTH_RANGE`.
    """

    upper_arm: float
    forearm: float

    def __post_init__(self) -> None:
        low, high = LENGTH_RANGE
        check_number('upper_arm length', self.upper_arm, low, high)
        check_number('forearm length', self.forearm, low, high)

    @property
    def total(self) -> float:
        """Return upper arm + forearm [m]."""
        return self.upper_arm + self.forearm


@dataclass(frozen=True)
class UserProfile:
    """
    A person's measured arm lengths.

    :param name: Who it is (free text, e.g. a user id).
    :param arms: Lengths per arm of the person.
    :param frames: Frames the measurement used.
    :param source: Where it was read from or measured, for messages.
    :raises ConfigError: If an arm is missing.
    """

    name: str
    arms: Mapping[Side, ArmLengths]
    frames: int = 0
    source: str = '<memory>'

    def __post_init__(self) -> None:
        if set(self.arms) != {Side.LEFT, Side.RIGHT}:
            raise ConfigError(f'{self.source}: a user profile needs both arms, left and right')
        object.__setattr__(self, 'arms', MappingProxyType(dict(self.arms)))

    def to_yaml(self) -> str:
        """
        Write the profile as YAML text (the format of the module docstring).

        :return: The text, with a comment line saying what it is.
        """
        data = {
            'name': self.name,
            'frames': int(self.frames),
            'arms': {
                side.value: {
                    'upper_arm': round(lengths.upper_arm, 4),
                    'forearm': round(lengths.forearm, 4),
                }
                for side, lengths in sorted(self.arms.items(), key=lambda item: item[0].value)
            },
        }
        header = '# pic_ros user profile: arm lengths [m] (python -m pic_ros_tools calibrate)\n'
        return header + str(yaml.safe_dump(data, sort_keys=False, default_flow_style=None))

    def save(self, path: str | Path) -> Path:
        """
        Write the profile to a file (its folder is created).

        :param path: Target file.
        :return: The path written.
        :raises OSError: If it cannot be written.
        """
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.to_yaml(), encoding='utf-8')
        return target


def profile_from_dict(data: Any, source: str = '<memory>') -> UserProfile:
    """
    Validate a parsed profile file.

    :param data: The YAML document.
    :param source: Where it came from, for messages.
    :return: The profile.
    :raises ConfigError: On a missing, unknown or invalid key (the message names it).
    """
    if not isinstance(data, dict):
        raise ConfigError(f'{source}: a user profile must be a mapping')
    unknown = sorted(set(data) - {'name', 'frames', 'arms'})
    if unknown:
        raise ConfigError(f'{source}: unknown keys {unknown}; known: arms, frames, name')
    arms_data = data.get('arms')
    if not isinstance(arms_data, dict):
        raise ConfigError(f'{source}: arms must map left and right to their lengths')
    arms: dict[Side, ArmLengths] = {}
    for side in Side:
        entry = arms_data.get(side.value)
        if not isinstance(entry, dict) or set(entry) != {'upper_arm', 'forearm'}:
            raise ConfigError(
                f'{source}: arms.{side.value} must give upper_arm and forearm lengths [m]'
            )
        try:
            arms[side] = ArmLengths(entry['upper_arm'], entry['forearm'])
        except ConfigError as err:
            raise ConfigError(f'{source}: arms.{side.value}: {err}') from err
    frames = data.get('frames', 0)
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 0:
        raise ConfigError(f'{source}: frames must be a count >= 0, got {frames!r}')
    return UserProfile(
        name=str(data.get('name', '')), arms=arms, frames=frames, source=source
    )


def load_user_profile(path: str | Path) -> UserProfile:
    """
    Read a user profile file.

    :param path: The YAML file.
    :return: The validated profile.
    :raises ConfigError: If the file cannot be read or is invalid.
    """
    return profile_from_dict(read_yaml(path, 'user profile'), source=str(path))


@dataclass(frozen=True)
class CalibrationConfig:
    """
    What counts as holding the calibration pose.

    :param duration: Seconds the pose must be held [s].
    :param max_bend_deg: Largest elbow bend (180 degrees minus the interior angle) [deg].
    :param max_axis_deg: Largest angle between a bone and the person's sideways axis [deg].
    :param max_gap: A pause in the frames longer than this ends a hold [s].
    """

    duration: float = 2.0
    max_bend_deg: float = 25.0
    max_axis_deg: float = 30.0
    max_gap: float = 0.25

    def __post_init__(self) -> None:
        check_number('calibration duration', self.duration, 0.2, 60.0)
        check_number('calibration max_bend_deg', self.max_bend_deg, 1.0, 90.0)
        check_number('calibration max_axis_deg', self.max_axis_deg, 1.0, 90.0)
        check_number('calibration max_gap', self.max_gap, 0.01, 10.0)


@dataclass(frozen=True)
class _Sample:
    stamp: float
    lengths: FloatArray  # (2 arms, 2 bones), [m], arm order left, right
    in_pose: bool


@dataclass
class Calibrator:
    """
    Measure a person's arm lengths while they hold the calibration pose.

    Feed body-frame skeletons with :meth:`add` (in time order); :meth:`profile` then returns the
    lengths of the most recent hold or raises with what is missing. Only the last
    ``keep`` seconds are kept, and at most ``max_frames`` frames whatever their stamps, so it can
    run all the time beside a live pipeline: a stamp that goes back (a new session, or a frame
    stamped far in the future before it) starts the buffer over, and a non-finite stamp is
    ignored.

    :param config: What counts as holding the pose.
    :param keep: Seconds of frames kept [s] (at least the hold duration).
    :param max_frames: Most frames kept (the oldest go first), in [16, 100000]; the default
        holds 34 s at 240 Hz.
    """

    config: CalibrationConfig = field(default_factory=CalibrationConfig)
    keep: float = 10.0
    max_frames: int = 8192
    _samples: deque[_Sample] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_number('calibration keep', self.keep, self.config.duration, 600.0)
        check_integer('calibration max_frames', self.max_frames, 16, 100_000)
        self._samples = deque(maxlen=self.max_frames)

    @property
    def kept(self) -> int:
        """Return the number of frames held, at most ``max_frames``."""
        return len(self._samples)

    def reset(self) -> None:
        """Forget every frame."""
        self._samples.clear()

    def add(self, frame: SkeletonFrame) -> bool:
        """
        Look at one body-frame skeleton.

        :param frame: Skeleton in the ``body`` frame.
        :return: Whether the frame shows the calibration pose.
        :raises ConfigError: If the frame is not in the body frame.
        """
        if frame.frame != 'body':
            raise ConfigError(f"calibration needs 'body' frame skeletons, got {frame.frame!r}")
        if not math.isfinite(frame.stamp):
            return False
        if self._samples and frame.stamp < self._samples[-1].stamp:
            self._samples.clear()  # the stamps went back: what came before is another timeline
        if not (frame.has_arm(Side.LEFT) and frame.has_arm(Side.RIGHT)):
            sample = _Sample(frame.stamp, np.full((2, 2), np.nan), False)
        else:
            lengths = np.empty((2, 2))
            in_pose = True
            for row, side in enumerate((Side.LEFT, Side.RIGHT)):
                shoulder, elbow, wrist = frame.arm(side)
                upper, fore = elbow - shoulder, wrist - elbow
                lengths[row] = (np.linalg.norm(upper), np.linalg.norm(fore))
                in_pose = in_pose and self._arm_in_pose(side, upper, fore, lengths[row])
            sample = _Sample(frame.stamp, lengths, in_pose)
        self._samples.append(sample)
        horizon = frame.stamp - self.keep
        while self._samples and self._samples[0].stamp < horizon:
            self._samples.popleft()
        return sample.in_pose

    def _arm_in_pose(
        self, side: Side, upper: FloatArray, fore: FloatArray, lengths: FloatArray
    ) -> bool:
        if np.any(lengths < 1e-3):
            return False
        outward = 1.0 if side is Side.LEFT else -1.0
        limit = math.cos(math.radians(self.config.max_axis_deg))
        bend = math.degrees(
            math.acos(float(np.clip(upper @ fore / (lengths[0] * lengths[1]), -1.0, 1.0)))
        )
        return bool(
            outward * upper[1] / lengths[0] >= limit
            and outward * fore[1] / lengths[1] >= limit
            and bend <= self.config.max_bend_deg
        )

    def held(self) -> float:
        """
        Return how long the pose has been held up to the latest frame.

        :return: Seconds of the current hold [s] (0 when the latest frame is not in the pose).
        """
        run = self._latest_run(self._samples)
        return 0.0 if not run else run[-1].stamp - run[0].stamp

    def _latest_run(self, samples: Iterable[_Sample]) -> list[_Sample]:
        run: list[_Sample] = []
        for sample in reversed(list(samples)):
            if not sample.in_pose:
                break
            if run and run[-1].stamp - sample.stamp > self.config.max_gap:
                break
            run.append(sample)
        return run[::-1]

    def profile(self, name: str = '') -> UserProfile:
        """
        Return the lengths measured over the latest hold of the pose.

        :param name: Name written into the profile.
        :return: The profile (medians over the hold).
        :raises ConfigError: If the pose has not been held long enough (the message says how
            long it was held and what the pose is).
        """
        run = self._latest_run(self._samples)
        held = 0.0 if not run else run[-1].stamp - run[0].stamp
        if held < self.config.duration:
            raise ConfigError(
                f'calibration pose held for {held:.1f} s of the {self.config.duration:.1f} s '
                f'needed: {POSE_TEXT}, elbows straight, and hold still'
            )
        start = run[-1].stamp - self.config.duration
        used = np.array([sample.lengths for sample in run if sample.stamp >= start])
        medians = np.median(used, axis=0)
        try:
            arms = {
                side: ArmLengths(float(medians[row, 0]), float(medians[row, 1]))
                for row, side in enumerate((Side.LEFT, Side.RIGHT))
            }
        except ConfigError as err:
            raise ConfigError(f'calibration measured unbelievable arm lengths: {err}') from err
        return UserProfile(name=name, arms=arms, frames=int(used.shape[0]), source='calibration')

    def calibrate(self, frames: Iterable[SkeletonFrame], name: str = '') -> UserProfile:
        """
        Measure over a whole sequence: the first hold long enough is used.

        :param frames: Body-frame skeletons in time order (e.g. a recording).
        :param name: Name written into the profile.
        :return: The profile.
        :raises ConfigError: If the pose is never held long enough.
        """
        self.reset()
        longest = 0.0
        for frame in frames:
            if self.add(frame):
                held = self.held()
                longest = max(longest, held)
                if held >= self.config.duration:
                    return self.profile(name)
        raise ConfigError(
            f'the calibration pose was held for at most {longest:.1f} s of the '
            f'{self.config.duration:.1f} s needed: {POSE_TEXT}, elbows straight, and hold still'
        )
