"""
The synthetic Kinect v2 tracker: frame timing and tracker errors.

:class:`TrackerModel` holds the numbers; :func:`frame_stamps` draws the Kinect-like clock (a
nominal 30 Hz with positive processing jitter and dropped frames), :data:`WHITE_SIGMA` is the
per-joint white noise, :func:`bias_drift` the slow per-joint bias (Ornstein-Uhlenbeck) and
:func:`draw_outliers` the single-frame outliers; the clock runs for :data:`DURATION` by default.
Lengths in metres, times in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.skeleton import JOINT_COUNT, JOINT_INDEX

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

DURATION: Final = 40.0
"""
Length of the demo take [s]: frames are captured from about 0.05 s up to this time.

It is the default span of :func:`frame_stamps`, and a tracking loss must end within it.
"""

NOMINAL_RATE: Final = 30.0
"""Nominal Kinect v2 body-frame rate [Hz]."""


@dataclass(frozen=True)
class TrackerModel:
    """
    Frame timing and tracker errors of the synthetic Kinect v2.

    :param white_scale: Factor on the per-joint white-noise table (standard deviation per axis:
        4 mm at the spine, head and hips, 4.5 mm at the shoulders, 5 mm at elbows and knees,
        6 mm at wrists, ankles and feet, 7 mm at hands, 8 mm at hand tips and thumbs; z gets
        ``depth_factor`` times more). 0 disables it.
    :param depth_factor: Extra factor on the white noise along camera z (depth).
    :param drift_sigma: Stationary standard deviation of the per-joint, per-axis bias drift [m].
    :param drift_time: Correlation time of the bias drift [s].
    :param outlier_rate: Probability that a tracked frame holds one outlier.
    :param outlier_min: Smallest outlier jump [m].
    :param outlier_max: Largest outlier jump [m].
    :param loss_start: Time at which tracking is lost [s since the start of the take].
    :param loss_duration: Length of the tracking loss [s]; 0 disables it.
    :param jitter_sigma: Standard deviation of the symmetric frame-interval jitter [s].
    :param delay_mean: Mean of the positive (gamma, shape 2) processing delay per interval [s].
    :param drop_probability: Probability that a frame interval is one nominal period longer
        (a dropped frame).
    :raises ConfigError: If a value is negative, not finite or out of its range.
    """

    white_scale: float = 1.0
    depth_factor: float = 1.3
    drift_sigma: float = 0.004
    drift_time: float = 6.0
    outlier_rate: float = 0.012
    outlier_min: float = 0.05
    outlier_max: float = 0.15
    loss_start: float = 17.7
    loss_duration: float = 1.2
    jitter_sigma: float = 0.0008
    delay_mean: float = 0.0022
    drop_probability: float = 0.03

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise ConfigError(
                    f'TrackerModel.{name} must be a finite number >= 0, got {value!r}'
                )
        if self.drift_time <= 0:
            raise ConfigError(f'TrackerModel.drift_time must be > 0, got {self.drift_time!r}')
        if self.outlier_rate > 1 or self.drop_probability >= 1:
            raise ConfigError('TrackerModel.outlier_rate must be <= 1, drop_probability < 1')
        if self.outlier_min > self.outlier_max:
            raise ConfigError('TrackerModel.outlier_min must not exceed outlier_max')
        if self.loss_start + self.loss_duration > DURATION:
            raise ConfigError(f'the tracking loss must end within the {DURATION} s take')


WHITE_SIGMA: Final = np.array(
    [
        0.004, 0.004, 0.004, 0.004,  # SpineBase, SpineMid, Neck, Head
        0.0045, 0.005, 0.006, 0.007,  # ShoulderLeft, ElbowLeft, WristLeft, HandLeft
        0.0045, 0.005, 0.006, 0.007,  # ShoulderRight, ElbowRight, WristRight, HandRight
        0.004, 0.005, 0.006, 0.006,  # HipLeft, KneeLeft, AnkleLeft, FootLeft
        0.004, 0.005, 0.006, 0.006,  # HipRight, KneeRight, AnkleRight, FootRight
        0.004, 0.008, 0.008, 0.008, 0.008,  # SpineShoulder, HandTip/Thumb Left, Right
    ]
)
"""
White-noise standard deviation per joint and axis [m], before the depth factor.

In :data:`~pic_ros_tools.synthetic.skeleton.JOINT_NAMES` order.
"""

_OUTLIER_WEIGHTS: Final = {
    'Elbow': 2.0, 'Wrist': 3.0, 'Hand': 3.0, 'HandTip': 2.0, 'Thumb': 2.0,
    'Knee': 1.0, 'Ankle': 1.0, 'Foot': 1.0,
}


def frame_stamps(
    rng: np.random.Generator, tracker: TrackerModel, duration: float = DURATION
) -> FloatArray:
    """Draw Kinect-like capture times (T,) [s] from about 0.05 s up to ``duration`` (exclusive)."""
    period = 1.0 / NOMINAL_RATE
    count = int(duration / (0.6 * period)) + 2
    jitter = rng.normal(0.0, tracker.jitter_sigma, count)
    delay = rng.gamma(2.0, tracker.delay_mean / 2.0, count)
    dropped = rng.random(count) < tracker.drop_probability
    steps = np.maximum(period + jitter + delay + dropped * period, 0.6 * period)
    first = 0.04 + 0.02 * rng.random()
    stamps = first + np.concatenate([[0.0], np.cumsum(steps[:-1])])
    return stamps[stamps < duration]


def bias_drift(rng: np.random.Generator, stamps: FloatArray, tracker: TrackerModel) -> FloatArray:
    """Draw an Ornstein-Uhlenbeck bias per joint and axis, (T, 25, 3), [m], stationary start."""
    shocks = rng.standard_normal((stamps.shape[0], JOINT_COUNT, 3))
    decay = np.exp(-np.diff(stamps) / tracker.drift_time)
    spread = np.sqrt(1.0 - decay**2)
    drift = np.empty_like(shocks)
    drift[0] = shocks[0]
    for index in range(1, stamps.shape[0]):
        drift[index] = decay[index - 1] * drift[index - 1] + spread[index - 1] * shocks[index]
    return tracker.drift_sigma * drift


def draw_outliers(
    rng: np.random.Generator, tracked: BoolArray, tracker: TrackerModel
) -> tuple[BoolArray, FloatArray]:
    """Draw single-frame outliers: mask (T, 25) and jumps (T, 25, 3) [m]."""
    count = tracked.shape[0]
    candidates = [
        (JOINT_INDEX[joint + side], weight)
        for joint, weight in _OUTLIER_WEIGHTS.items()
        for side in ('Left', 'Right')
    ]
    indices = np.array([index for index, _ in candidates])
    weights = np.array([weight for _, weight in candidates])
    hit = (rng.random(count) < tracker.outlier_rate) & tracked
    joint = indices[rng.choice(indices.size, size=count, p=weights / weights.sum())]
    size = np.asarray(rng.uniform(tracker.outlier_min, tracker.outlier_max, count))
    direction = rng.standard_normal((count, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    mask = np.zeros((count, JOINT_COUNT), dtype=bool)
    jumps = np.zeros((count, JOINT_COUNT, 3))
    frames = np.flatnonzero(hit)
    mask[frames, joint[frames]] = True
    jumps[frames, joint[frames]] = size[frames, None] * direction[frames]
    return mask, jumps
