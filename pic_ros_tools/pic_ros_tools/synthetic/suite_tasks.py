"""
The task repertoire of the robustness suite and the builder of each task's key poses.

A :class:`Builder` collects both arms' key poses and trunk keys along a time axis. Key poses
are angles or wrist targets in the chest frame given as fractions of the person's own arm
length (upper arm plus forearm) and shoulder width, solved by closed-form inverse kinematics,
so every person can do every task. A move between key poses lasts 0.5 to 2 s, from the largest
angle change and the person's peak joint speed; straight wrist strokes move at a peak wrist
speed. :data:`TASK_BUILDERS` builds each task of :data:`TASK_NAMES`. Lengths in metres, times
in seconds, angles in degrees where a name says ``_deg`` or the builder takes degrees, else
radians.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros_tools.synthetic.body import BodyModel
from pic_ros_tools.synthetic.kinematics import ARM_ANGLE_LIMITS_DEG, arm_ik

FloatArray = npt.NDArray[np.float64]

TASK_NAMES: Final[tuple[str, ...]] = (
    'cross_midline',
    'raise_arms',
    'rest',
    'reach_forward',
    'reach_side',
    'assembly',
    'table_strokes',
    'wave',
    'elbow_range',
)
"""The task repertoire; the first three are in every take."""

_SIDES: Final[Mapping[str, tuple[int, ...]]] = MappingProxyType(
    {'left': (1,), 'right': (-1,), 'both': (1, -1)}
)

_MIN_MOVE: Final = 0.5  # shortest move between key poses [s]
_MAX_MOVE: Final = 2.0  # longest move between key poses [s]
_PEAK_FACTOR: Final = 1.875  # peak / mean speed of a minimum-jerk move


@dataclass(frozen=True, eq=False)
class ArmPose:
    """One arm's key pose: angles (4,) [rad]; wrist minus own shoulder (3,) [m, chest frame]."""

    angles: FloatArray
    point: FloatArray | None = None
    swivel: float = 0.0


@dataclass(frozen=True, eq=False)
class Key:
    """Both arms' poses (left, right) reached at ``time`` [s]; ``line``: straight wrist path."""

    time: float
    poses: tuple[ArmPose, ArmPose]
    line: tuple[bool, bool] = (False, False)


@dataclass(frozen=True, eq=False)
class BuiltTask:
    """A built task: keys and trunk keys (time, lean, twist) relative to its start [s, deg]."""

    name: str
    arm: str
    keys: tuple[Key, ...]
    trunk: tuple[tuple[float, float, float], ...]

    @property
    def length(self) -> float:
        """Return the task's duration [s]."""
        return self.keys[-1].time


def arm_length(body: BodyModel) -> float:
    """Return the arm length, upper arm plus forearm [m]."""
    return body.upper_arm + body.forearm


def _shoulder_offset(body: BodyModel, lateral: int) -> FloatArray:
    """Shoulder position relative to SpineShoulder [m], chest frame."""
    return np.array([0.0, lateral * body.shoulder_half_width, -body.shoulder_drop])


class Builder:
    """Collects both arms' key poses and trunk keys along a time axis starting at 0 at rest."""

    def __init__(
        self, body: BodyModel, rng: np.random.Generator, speed: float, wrist_speed: float,
        rest: tuple[ArmPose, ArmPose],
    ) -> None:
        self.body = body
        self.rng = rng
        self.speed = speed
        self.wrist_speed = wrist_speed
        self.rest = rest
        self.time = 0.0
        self.current: list[ArmPose] = list(rest)
        self.keys: list[Key] = [Key(0.0, rest)]
        self.trunk: list[tuple[float, float, float]] = []

    def uniform(self, low: float, high: float) -> float:
        """Draw a number uniformly from [low, high)."""
        return float(self.rng.uniform(low, high))

    def angles(self, degrees: tuple[float, float, float, float]) -> ArmPose:
        """Return the pose given by its angles [deg] (``ARM_ANGLE_NAMES`` order)."""
        return ArmPose(angles=np.radians(np.array(degrees, dtype=np.float64)))

    def reachable(self, relative: FloatArray) -> FloatArray:
        """Scale a wrist target (own shoulder, chest frame, [m]) to 30-97 % of the arm length."""
        length = arm_length(self.body)
        distance = float(np.linalg.norm(relative))
        scaled: FloatArray = (
            relative * float(np.clip(distance, 0.3 * length, 0.97 * length)) / distance
        )
        return scaled

    def point(self, lateral: int, relative: FloatArray, swivel_deg: float = 20.0) -> ArmPose:
        """
        Return the pose putting the wrist at ``relative`` [m] (own shoulder, chest frame).

        The target is first scaled into reach (:meth:`reachable`).
        """
        clamped = self.reachable(relative)
        swivel = math.radians(swivel_deg)
        angles = arm_ik(clamped[None], np.array([swivel]), lateral, self.body)[0]
        return ArmPose(angles=angles, point=clamped, swivel=swivel)

    def chest_point(
        self, lateral: int, forward: float, across: float, down: float, swivel_deg: float = 20.0
    ) -> ArmPose:
        """Return the pose putting the wrist at (forward, across, -down) [m] from SpineShoulder."""
        target = np.array([forward, across, -down])
        return self.point(lateral, target - _shoulder_offset(self.body, lateral), swivel_deg)

    def cross_point(
        self, lateral: int, forward: float, across: float, down: float, adduction_deg: float
    ) -> ArmPose:
        """
        Return the pose with the wrist across the midline at (forward, across, -down) [m].

        The point is relative to SpineShoulder (chest frame).

        Among elbow swivels of -10 to 60 degrees, the one whose shoulder abduction is closest to
        ``-adduction_deg`` inside the anatomical limits is taken.
        """
        target = self.reachable(
            np.array([forward, across, -down]) - _shoulder_offset(self.body, lateral)
        )
        swivels = np.radians(np.linspace(-10.0, 60.0, 36))
        candidates = arm_ik(np.tile(target, (swivels.size, 1)), swivels, lateral, self.body)
        limits = np.radians(np.array(ARM_ANGLE_LIMITS_DEG))
        inside = np.all((candidates >= limits[:, 0]) & (candidates <= limits[:, 1]), axis=1)
        miss = np.abs(candidates[:, 1] + math.radians(adduction_deg)) + 10.0 * ~inside
        best = int(np.argmin(miss))
        return ArmPose(angles=candidates[best], point=target, swivel=float(swivels[best]))

    def reach(
        self, lateral: int, direction: tuple[float, float, float], fraction: float,
        swivel_deg: float = 20.0,
    ) -> ArmPose:
        """Return the pose with the wrist at a fraction of the arm length along (fwd, out, up)."""
        vector = np.array([direction[0], lateral * direction[1], direction[2]])
        vector *= fraction * arm_length(self.body) / np.linalg.norm(vector)
        return self.point(lateral, vector, swivel_deg)

    def move(
        self, targets: Mapping[int, ArmPose], line: bool = False,
        duration: float | None = None,
    ) -> None:
        """Add a key after a minimum-jerk move of the given arms (+1 left, -1 right)."""
        poses = list(self.current)
        lines = [False, False]
        needed = 0.0
        for lateral, pose in targets.items():
            index = 0 if lateral == 1 else 1
            before = poses[index]
            change = float(np.max(np.abs(pose.angles - before.angles)))
            needed = max(needed, _PEAK_FACTOR * change / self.speed)
            if line and before.point is not None and pose.point is not None:
                lines[index] = True
                path = float(np.linalg.norm(pose.point - before.point))
                needed = max(needed, _PEAK_FACTOR * path / self.wrist_speed)
            poses[index] = pose
        if duration is None:
            duration = float(np.clip(needed * self.uniform(0.95, 1.15), _MIN_MOVE, _MAX_MOVE))
        self.time += duration
        self.current = poses
        self.keys.append(Key(self.time, (poses[0], poses[1]), (lines[0], lines[1])))

    def hold(self, duration: float) -> None:
        """Add a key holding the current poses for a duration [s]."""
        self.time += duration
        self.keys.append(Key(self.time, (self.current[0], self.current[1])))

    def home(self) -> None:
        """Move both arms back to rest."""
        self.move({1: self.rest[0], -1: self.rest[1]})

    def lean(self, lean_deg: float, twist_deg: float) -> None:
        """Add (or replace, at the same time) a trunk key: lean and twist [deg] now."""
        if self.trunk and self.trunk[-1][0] >= self.time:
            self.trunk[-1] = (self.time, lean_deg, twist_deg)
        else:
            self.trunk.append((self.time, lean_deg, twist_deg))

    def task(self, name: str, arm: str) -> BuiltTask:
        """Return the keys collected so far as a task."""
        return BuiltTask(name=name, arm=arm, keys=tuple(self.keys), trunk=tuple(self.trunk))


def _reach_forward(b: Builder, arm: str) -> None:
    sides = _SIDES[arm]
    ready = {
        s: b.angles((b.uniform(8, 16), 10.0, b.uniform(-5, 10), b.uniform(78, 92)))
        for s in sides
    }
    b.move(ready)
    lean = b.uniform(2, 5)
    twist = 0.0 if arm == 'both' else sides[0] * b.uniform(-4, 0)
    b.lean(lean, twist)
    for _ in range(2):
        b.move({
            s: b.reach(
                s, (1.0, b.uniform(-0.25, 0.08), b.uniform(-0.3, 0.12)),
                b.uniform(0.94, 0.975), b.uniform(5, 25),
            )
            for s in sides
        })
        b.hold(b.uniform(0.3, 0.6))
        b.move(ready)
    b.lean(lean, twist)
    b.home()


def _reach_side(b: Builder, arm: str) -> None:
    for _ in range(1 + int(b.rng.integers(2))):
        b.move({
            s: b.angles(
                (b.uniform(0, 20), b.uniform(80, 95), b.uniform(-10, 10), b.uniform(3, 15))
            )
            for s in _SIDES[arm]
        })
        b.hold(b.uniform(0.4, 0.8))
        b.home()


def _raise_arms(b: Builder, arm: str) -> None:
    if b.rng.random() < 0.5:  # forward, above the head
        poses = {
            s: b.angles(
                (b.uniform(140, 165), b.uniform(10, 30), b.uniform(-5, 10), b.uniform(5, 25))
            )
            for s in _SIDES[arm]
        }
    else:  # sideways, above the shoulders
        poses = {
            s: b.angles(
                (b.uniform(5, 20), b.uniform(110, 135), b.uniform(-20, 0), b.uniform(5, 20))
            )
            for s in _SIDES[arm]
        }
    b.move(poses)
    lean = b.uniform(-3, 0)
    b.lean(lean, 0.0)
    b.hold(b.uniform(0.5, 1.0))
    b.lean(lean, 0.0)
    b.home()


def _cross_midline(b: Builder, arm: str) -> None:
    length, width = arm_length(b.body), b.body.shoulder_half_width
    upper = 1 if b.rng.random() < 0.5 else -1
    b.move({
        upper: b.cross_point(
            upper, b.uniform(0.3, 0.4) * length, -upper * width * b.uniform(0.6, 0.9),
            b.body.shoulder_drop + b.uniform(0.0, 0.12) * length, b.uniform(28, 38),
        ),
        -upper: b.cross_point(
            -upper, b.uniform(0.35, 0.45) * length + 0.04, upper * width * b.uniform(0.3, 0.6),
            b.body.shoulder_drop + b.uniform(0.35, 0.45) * length, b.uniform(22, 32),
        ),
    })
    b.hold(b.uniform(0.3, 0.6))
    b.home()


def _assembly(b: Builder, arm: str) -> None:
    length = arm_length(b.body)
    forward = b.uniform(0.5, 0.65) * length
    down = b.body.shoulder_drop + b.uniform(0.15, 0.35) * length
    gap = b.uniform(0.04, 0.06)
    swivel = b.uniform(20, 35)
    lift = b.uniform(0.10, 0.15) * length
    slide = (1.0 if b.rng.random() < 0.5 else -1.0) * b.uniform(0.06, 0.10) * length

    def hands(across: float, up: float) -> dict[int, ArmPose]:
        return {s: b.chest_point(s, forward, across + s * gap, down - up, swivel) for s in (1, -1)}

    b.move(hands(0.0, 0.0))
    lean = b.uniform(1, 4)
    b.lean(lean, 0.0)
    b.hold(b.uniform(0.2, 0.4))
    b.move(hands(0.0, lift), line=True)
    b.move(hands(slide, lift), line=True)
    b.hold(b.uniform(0.2, 0.4))
    b.move(hands(-0.5 * slide, lift), line=True)
    b.move(hands(-0.5 * slide, 0.0), line=True)
    b.hold(b.uniform(0.2, 0.4))
    b.lean(lean, 0.0)
    b.home()


def _table_strokes(b: Builder, arm: str) -> None:
    s = _SIDES[arm][0]
    length = arm_length(b.body)
    across = s * (b.body.shoulder_half_width + b.uniform(-0.05, 0.05))
    down = b.body.shoulder_drop + b.uniform(0.95, 1.05) * b.body.upper_arm
    far = b.uniform(0.5, 0.6) * length
    near = far - b.uniform(0.18, 0.25) * length
    lift = 0.1 * length

    def wrist(forward: float, up: float) -> dict[int, ArmPose]:
        return {s: b.chest_point(s, forward, across, down - up, 15.0)}

    b.move(wrist(far, lift))
    lean, twist = b.uniform(5, 10), s * b.uniform(-4, 0)
    b.lean(lean, twist)
    strokes = 2 + int(b.rng.integers(2))
    for stroke in range(strokes):
        b.move(wrist(far, 0.0), line=True)
        b.move(wrist(near, 0.0), line=True)
        b.move(wrist(near, lift), line=True)
        if stroke < strokes - 1:
            b.move(wrist(far, lift), line=True)
    b.lean(lean, twist)
    b.home()


def _wave(b: Builder, arm: str) -> None:
    s = _SIDES[arm][0]
    flexion, abduction = b.uniform(12, 25), b.uniform(65, 80)
    rotation, bend = b.uniform(-80, -65), b.uniform(90, 100)
    b.move({s: b.angles((flexion, abduction, rotation, bend))})
    low, high = b.uniform(72, 78), b.uniform(108, 115)
    for half in range(4 + int(b.rng.integers(3))):
        elbow = high if half % 2 == 0 else low
        b.move({s: b.angles((flexion, abduction + (elbow - 95) / 12, rotation, elbow))})
    b.home()


def _elbow_range(b: Builder, arm: str) -> None:
    base = (b.uniform(5, 15), b.uniform(6, 12), b.uniform(0, 15))

    def elbow(low: float, high: float) -> dict[int, ArmPose]:
        return {s: b.angles(base + (b.uniform(low, high),)) for s in _SIDES[arm]}

    b.move(elbow(2, 5))
    b.hold(b.uniform(0.3, 0.5))
    for _ in range(1 + int(b.rng.random() < 0.4)):
        b.move(elbow(140, 148))
        b.hold(b.uniform(0.2, 0.5))
        b.move(elbow(2, 5))
        b.hold(b.uniform(0.2, 0.4))
    b.home()


def _rest(b: Builder, arm: str) -> None:
    b.move({
        s: b.angles((b.uniform(-17, -13), b.uniform(6, 10), b.uniform(-5, 5), b.uniform(2, 5)))
        for s in (1, -1)
    })
    b.hold(b.uniform(1.5, 2.5))
    b.home()


def task_arm(name: str, rng: np.random.Generator) -> str:
    """Draw the arm(s) of a task: ``'left'``, ``'right'`` or ``'both'``."""
    if name in ('cross_midline', 'raise_arms', 'rest', 'assembly'):
        return 'both'
    if name in ('wave', 'table_strokes'):
        return 'right' if rng.random() < 0.6 else 'left'
    return ('left', 'right', 'both')[int(rng.integers(3))]


TASK_BUILDERS: Final = MappingProxyType({
    'cross_midline': _cross_midline,
    'raise_arms': _raise_arms,
    'rest': _rest,
    'reach_forward': _reach_forward,
    'reach_side': _reach_side,
    'assembly': _assembly,
    'table_strokes': _table_strokes,
    'wave': _wave,
    'elbow_range': _elbow_range,
})
"""Builder of each task of :data:`TASK_NAMES`: ``builder(b, arm)`` adds its keys to ``b``."""

MANDATORY_TASKS: Final = TASK_NAMES[:3]
"""The tasks of every take."""
