"""
The torso correspondence: the person's crouch becomes the robot's torso lift.

Arduengo et al. (TIAGo whole-body teleoperation, Sec. II-B) place the robot's torso at the
person's footprint -> torso height scaled to the robot. The body frame removes height, so the
input is the chest's height in the tracker frame (the shoulder midpoint's z,
:attr:`pic_ros.human.body_frame.Footprint.height`). Nothing here depends on the person's size or
on where the camera is:

- **drop**: how far the chest is below the person's *standing* chest height, the
  :attr:`TorsoTargetConfig.percentile` of the chest heights of the last
  :attr:`TorsoTargetConfig.window` seconds (a person stands more than they crouch; a high
  percentile ignores the crouches and the tracker's outliers, and the sliding window follows a
  camera or floor that changes);
- **relative drop**: the drop divided by the person's trunk (pelvis -> chest) length, the median
  over the same window of the body-frame pelvis distance (so the same crouch by a tall and a
  short person gives the same number), less a dead zone of :attr:`TorsoTargetConfig.dead_zone`
  trunk lengths (breathing and sway);
- **robot drop**: the relative drop times the robot's equivalent trunk length, its neutral
  shoulder height above the base frame divided by :data:`SHOULDER_HEIGHT_PER_TRUNK` (a person's
  shoulder height in trunk lengths): the robot's shoulder goes down by the share of its height
  the person's goes down by;
- **lift**: the neutral lift minus the robot drop along the torso axis, clamped into the limits
  and moved at most at the torso's velocity limit per frame.

Units: metres, seconds; heights on the tracker's z axis (up).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import math
from typing import Final

import numpy as np
from pic_ros.checks import check_number
from pic_ros.exceptions import ConfigError
from pic_ros.robot.torso import TorsoModel
from pic_ros.skeleton import HumanJoint, MIN_BONE_LENGTH, SkeletonFrame

MAX_SAMPLES: Final = 8192
"""Most chest heights and trunk lengths kept, whatever the stamps (34 s at 240 Hz)."""

SHOULDER_HEIGHT_PER_TRUNK: Final = 2.84
"""
A standing person's shoulder height over their trunk (hip -> shoulder) length [-].

Anthropometry (Drillis and Contini's segment proportions): shoulder height 0.818 H, hip height
0.530 H, so the trunk is 0.288 H and the shoulder stands 0.818 / 0.288 = 2.84 trunk lengths above
the floor, for any body height H. A human proportion, not a value fitted to a recording.
"""


@dataclass(frozen=True)
class TorsoTargetConfig:
    """
    Settings of :class:`TorsoTarget`.

    :param window: Length of the sliding window of the standing reference and the trunk
        length [s].
    :param percentile: Percentile of the window's chest heights taken as standing, in
        [50, 100].
    :param dead_zone: Drops smaller than this many trunk lengths are ignored [-].
    """

    window: float = 30.0
    percentile: float = 90.0
    dead_zone: float = 0.05

    def __post_init__(self) -> None:
        check_number('window', self.window, 1.0, 3600.0)
        check_number('percentile', self.percentile, 50.0, 100.0)
        check_number('dead_zone', self.dead_zone, 0.0, 1.0)


class TorsoTarget:
    """
    Turn the person's chest height into a torso lift target, frame after frame.

    :param torso: The robot's torso.
    :param shoulder_height: The robot's shoulder landmark height above its base frame at the
        neutral lift [m] (along the base z axis).
    :param config: Settings.
    :raises ConfigError: If the torso does not move the shoulder up and down, or the shoulder
        height is not positive.
    """

    def __init__(
        self, torso: TorsoModel, shoulder_height: float, config: TorsoTargetConfig | None = None
    ) -> None:
        self.torso = torso
        self.config = config if config is not None else TorsoTargetConfig()
        self._rise = float(torso.axis[2])  # shoulder rise per metre of lift
        if abs(self._rise) < 0.1:
            raise ConfigError(f'the torso {torso.joint!r} does not lift the arms (axis '
                              f'{torso.axis.tolist()} in the base frame)')
        check_number('robot shoulder height', shoulder_height, 1e-3, 10.0)
        self._robot_trunk = shoulder_height / SHOULDER_HEIGHT_PER_TRUNK
        size = MAX_SAMPLES
        self._heights: tuple[deque[float], deque[float]] = (  # stamps, values
            deque(maxlen=size), deque(maxlen=size)
        )
        self._trunks: tuple[deque[float], deque[float]] = (deque(maxlen=size), deque(maxlen=size))
        self._last_stamp: float | None = None
        self._lift = torso.neutral

    @property
    def lift(self) -> float:
        """Return the last lift target [m] (the neutral lift before any update)."""
        return self._lift

    def reset(self) -> None:
        """Forget the person (reference, trunk length) and go back to the neutral lift."""
        for samples in (self._heights, self._trunks):
            samples[0].clear()
            samples[1].clear()
        self._last_stamp = None
        self._lift = self.torso.neutral

    def relative_drop(self) -> float | None:
        """
        Return how far the chest is below standing, in trunk lengths, after the dead zone.

        :return: The drop [-] (0 when standing), or None before any chest height and trunk.
        """
        heights, trunks = self._heights[1], self._trunks[1]
        if not heights or not trunks:
            return None
        reference = float(np.percentile(np.array(heights), self.config.percentile))
        trunk = float(np.median(np.array(trunks)))
        drop = (reference - heights[-1]) / trunk
        return max(0.0, drop - self.config.dead_zone)

    def update(self, stamp: float, chest_height: float | None, frame: SkeletonFrame) -> float:
        """
        Take one frame and return the torso lift target.

        :param stamp: Capture time [s]; a stamp earlier than the last one starts over, a
            non-finite one changes nothing.
        :param chest_height: The chest's (shoulder midpoint's) height in the tracker frame [m],
            or None when unknown (the target then holds).
        :param frame: The same skeleton in the body frame (its pelvis gives the trunk length).
        :return: The lift target [m], inside the torso's limits.
        """
        if not math.isfinite(stamp):
            return self._lift
        if self._last_stamp is not None and stamp < self._last_stamp:
            self.reset()
        elapsed = 0.0 if self._last_stamp is None else stamp - self._last_stamp
        self._last_stamp = stamp
        if frame.valid[HumanJoint.PELVIS]:
            trunk = float(np.linalg.norm(frame.positions[HumanJoint.PELVIS]))
            if math.isfinite(trunk) and trunk >= MIN_BONE_LENGTH:
                self._trunks[0].append(stamp)
                self._trunks[1].append(trunk)
        if chest_height is not None and math.isfinite(chest_height):
            self._heights[0].append(stamp)
            self._heights[1].append(float(chest_height))
        for stamps, values in (self._heights, self._trunks):
            while stamps and stamps[0] < stamp - self.config.window:
                stamps.popleft()
                values.popleft()
        drop = self.relative_drop()
        if drop is None or chest_height is None or not math.isfinite(chest_height):
            return self._lift
        wanted = self.torso.clamp(self.torso.neutral - drop * self._robot_trunk / self._rise)
        largest = self.torso.velocity * max(elapsed, 0.0)
        self._lift = self.torso.clamp(min(max(wanted, self._lift - largest), self._lift + largest))
        return self._lift


__all__ = ['SHOULDER_HEIGHT_PER_TRUNK', 'TorsoTarget', 'TorsoTargetConfig']
