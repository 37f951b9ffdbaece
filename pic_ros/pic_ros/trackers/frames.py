"""
Which tracker frames reach the solvers: body selection, frame checks and counted drop reasons.

A frame with NaN/inf, missing arm joints, zero-length or impossible bones, a stamp not after the
last accepted one, or a body that is not the tracked one is dropped with a counted
:class:`DropReason` (``docs/architecture.md``, "Bad input"); downstream, the last valid target
is held. An empty marker array or a lost body is :attr:`DropReason.NO_BODY`, never an exception
or a zero pose.

- :class:`BodySelector` keeps one body id across the readings of a tracker;
- :class:`FrameValidator` checks one tracker-frame skeleton.

:class:`~pic_ros.human.front_end.SkeletonFrontEnd` composes them with the smoothing.
"""

from __future__ import annotations

from collections.abc import Mapping
import enum
import math
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import (
    ARM_JOINTS,
    BODY_JOINT_COUNT,
    HumanJoint,
    MAX_BONE_LENGTH,
    MIN_BONE_LENGTH,
    Side,
    SkeletonFrame,
)

FloatArray = npt.NDArray[np.float64]

SWITCH_AFTER = ParameterDef(
    'switch_after', 1.0, 'Absence of the tracked body before another body may be tracked',
    unit='s', low=0.0, high=3600.0,
)
"""The skeleton node's ``switch_after`` (:class:`BodySelector`)."""

REACQUIRE_RADIUS = ParameterDef(
    'reacquire_radius', 1.0,
    'After a gap longer than switch_after, a body (whatever its id) is taken for the person only '
    'within this distance of where the person was last seen', unit='m', low=0.0, high=100.0,
)
"""The skeleton node's ``reacquire_radius`` (:class:`BodySelector`)."""

REACQUIRE_AFTER = ParameterDef(
    'reacquire_after', 10.0,
    'Absence of the person after which a body anywhere is taken as a new person (a new '
    'session); 0 never waits', unit='s', low=0.0, high=3600.0,
)
"""The skeleton node's ``reacquire_after`` (:class:`BodySelector`)."""


class DropReason(enum.Enum):
    """
    Why a tracker message gave no skeleton; the value is the key used in diagnostics.

    - ``NO_BODY``: the array holds no usable marker (empty array, body lost);
    - ``OTHER_BODY``: only bodies other than the tracked one, which is absent for less than
      ``switch_after``;
    - ``FAR_BODY``: after a gap longer than ``switch_after``, only bodies (whatever their id)
      farther than ``reacquire_radius`` from where the person was, before ``reacquire_after``;
    - ``NON_FINITE``: a received body joint (rows 0 to 11), or the stamp, is NaN or inf (a bad
      extremity point is invalidated alone, :mod:`pic_ros.human.extremities`);
    - ``OLD_STAMP``: the stamp is not after the last accepted one;
    - ``MISSING_ARM_JOINTS``: neither arm has its shoulder, elbow and wrist;
    - ``BAD_BONE``: a bone between two present joints is shorter than its minimum or longer than
      :data:`~pic_ros.skeleton.MAX_BONE_LENGTH`;
    - ``BAD_FRAME``: the body frame cannot be built (e.g. a shoulder is missing) or is not
      finite;
    - ``SUPERSEDED``: a newer message of the tracker was already waiting when this one would
      have been processed (the live path acts on the newest frame only, never on a backlog).
    """

    NO_BODY = 'no_body'
    OTHER_BODY = 'other_body'
    FAR_BODY = 'far_body'
    NON_FINITE = 'non_finite'
    OLD_STAMP = 'old_stamp'
    MISSING_ARM_JOINTS = 'missing_arm_joints'
    BAD_BONE = 'bad_bone'
    BAD_FRAME = 'bad_frame'
    SUPERSEDED = 'superseded'


CHECKED_BONES: Final[tuple[tuple[HumanJoint, HumanJoint, float], ...]] = (
    (HumanJoint.PELVIS, HumanJoint.SPINE_CHEST, MIN_BONE_LENGTH),
    (HumanJoint.SPINE_CHEST, HumanJoint.NECK, MIN_BONE_LENGTH),
    (HumanJoint.NECK, HumanJoint.HEAD, MIN_BONE_LENGTH),
    (HumanJoint.SHOULDER_LEFT, HumanJoint.SHOULDER_RIGHT, MIN_BONE_LENGTH),
    (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, MIN_BONE_LENGTH),
    (HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT, MIN_BONE_LENGTH),
    (HumanJoint.WRIST_LEFT, HumanJoint.HAND_LEFT, 0.0),
    (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, MIN_BONE_LENGTH),
    (HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT, MIN_BONE_LENGTH),
    (HumanJoint.WRIST_RIGHT, HumanJoint.HAND_RIGHT, 0.0),
)
"""
Bones checked by :class:`FrameValidator`: ``(joint, joint, shortest [m])``.

Every bone may be at most :data:`~pic_ros.skeleton.MAX_BONE_LENGTH` long. The hands have
no minimum: Kinect v2 puts the hand within a few millimetres of the wrist (3 mm in the PIC
recordings).
"""

_BONES: Final = tuple((int(first), int(second), least) for first, second, least in CHECKED_BONES)
_ARM_ROWS: Final = tuple(np.array(ARM_JOINTS[side]) for side in Side)

_CERTAIN: Final = 1e-9
"""
Relative margin of a squared distance from the radius' square beyond which the sum of three
squares on Python floats decides; closer, numpy's sum (a few units in the last place apart)
does.
"""


class DropCounter:
    """Counts of accepted frames and of drops per reason."""

    def __init__(self) -> None:
        self._counts = dict.fromkeys(DropReason, 0)
        self._accepted = 0

    @property
    def counts(self) -> Mapping[DropReason, int]:
        """Return the drops per reason, every reason present (read-only live view)."""
        return MappingProxyType(self._counts)

    @property
    def accepted(self) -> int:
        """Return the number of accepted frames."""
        return self._accepted

    @property
    def total(self) -> int:
        """Return accepted plus dropped frames."""
        return self._accepted + sum(self._counts.values())

    def record(self, reason: DropReason | None) -> None:
        """
        Count one outcome.

        :param reason: The drop reason, or None for an accepted frame.
        """
        if reason is None:
            self._accepted += 1
        else:
            self._counts[reason] += 1

    def reset(self) -> None:
        """Set every count to zero (views from :attr:`counts` stay live)."""
        for reason in self._counts:
            self._counts[reason] = 0
        self._accepted = 0


def _centre(frame: SkeletonFrame) -> FloatArray | None:
    """Return the mean [m] of the finite valid joints, shape (3,), or None if there is none."""
    total: list[float] | None = None
    count = 0
    for row, valid in zip(frame.positions.tolist(), frame.valid.tolist()):
        x, y, z = row
        if not (valid and math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            continue
        count += 1
        if total is None:
            total = row
        else:  # numpy.mean's sum along the rows, in their order (inf on overflow, no warning)
            total = [total[0] + x, total[1] + y, total[2] + z]
    if total is None:
        return None
    mean = [total[0] / count, total[1] / count, total[2] / count]
    return np.array(mean) if all(map(math.isfinite, mean)) else None


def _distance(frame: SkeletonFrame) -> float:
    """Distance [m] from the sensor to the mean of the finite valid joints; inf if none."""
    centre = _centre(frame)
    if centre is None:
        return math.inf
    with np.errstate(over='ignore'):  # a finite but huge centre is simply far (inf)
        return float(np.linalg.norm(centre))


class BodySelector:
    """
    Follow one person across marker arrays, by body id and, after a gap, by place.

    Rules, per array (``{body_id: frame}`` from
    :func:`~pic_ros.trackers.markers.decode_markers`); the person's *place* is the mean of the
    finite valid joints of their last frame, in the tracker frame:

    - no body: :attr:`DropReason.NO_BODY`, nothing changes (an empty array is not "another
      body");
    - nothing followed yet: follow the body nearest to the sensor (ties go to the lower id), so a
      single body is followed as soon as it is seen;
    - the followed id is in the array, within ``reacquire_radius`` of the person's place, and
      the person was seen less than ``switch_after`` ago: return it (other bodies are ignored).
      A body with the followed id farther away is somebody else (another publisher on the
      topic, or the tracker gave the id to another person): it is treated as another id;
    - only other ids, the person seen less than ``switch_after`` ago:
      :attr:`DropReason.OTHER_BODY`;
    - a gap: the person not seen for ``switch_after`` or more, or a new session of the stream
      (:meth:`rebase`). A tracker may give the person a new id, or give the old id to somebody
      else (Kinect v2 recordings carry one id), so the id no longer decides: the body nearest to
      the person's place is followed if it is within ``reacquire_radius``; otherwise
      :attr:`DropReason.FAR_BODY` until the absence reaches ``reacquire_after``, when the body
      nearest to the sensor is followed as a new person (:attr:`acquisitions` counts it, and
      the front end starts the smoothing over).

    The absence is measured on the stamps and, when the caller gives them, on the receive times
    too (the shorter counts): a message stamped seconds ahead of the person (a stray publisher,
    a replay) does not make the person absent.

    "Present" means that markers came for the body, whatever their values: a followed body with
    broken joints stays followed and its frames are dropped by the validator.

    :param switch_after: Absence [s] of the person that makes a gap, in [0, 3600].
    :param reacquire_radius: Largest distance [m] from the person's place at which a body is
        taken for the person after a gap, in [0, 100].
    :param reacquire_after: Absence [s] after which a body anywhere is taken as a new person, in
        [0, 3600]; values below ``switch_after`` act as ``switch_after``.
    :raises ConfigError: If a value is out of range.
    """

    def __init__(
        self,
        switch_after: float = SWITCH_AFTER.default,
        reacquire_radius: float = REACQUIRE_RADIUS.default,
        reacquire_after: float = REACQUIRE_AFTER.default,
    ) -> None:
        self._switch_after = float(SWITCH_AFTER.check(switch_after))
        self._radius = float(REACQUIRE_RADIUS.check(reacquire_radius))
        self._reacquire_after = float(REACQUIRE_AFTER.check(reacquire_after))
        self._tracked: int | None = None
        self._last_seen = -math.inf
        self._last_received = math.nan
        self._gap = False
        self._place: FloatArray | None = None
        self._acquisitions = 0

    @property
    def switch_after(self) -> float:
        """Return the absence [s] of the person that makes a gap."""
        return self._switch_after

    @switch_after.setter
    def switch_after(self, value: float) -> None:
        """Change the absence [s] that makes a gap, keeping the person."""
        self._switch_after = float(SWITCH_AFTER.check(value))

    @property
    def reacquire_radius(self) -> float:
        """Return the distance [m] from the person's place within which a body is the person."""
        return self._radius

    @reacquire_radius.setter
    def reacquire_radius(self, value: float) -> None:
        """Change the re-acquisition distance [m], keeping the person."""
        self._radius = float(REACQUIRE_RADIUS.check(value))

    @property
    def reacquire_after(self) -> float:
        """Return the absence [s] after which a body anywhere is taken as a new person."""
        return self._reacquire_after

    @reacquire_after.setter
    def reacquire_after(self, value: float) -> None:
        """Change the absence [s] after which a new person is taken, keeping the person."""
        self._reacquire_after = float(REACQUIRE_AFTER.check(value))

    @property
    def tracked_id(self) -> int | None:
        """Return the followed body id, or None before the first body."""
        return self._tracked

    @property
    def acquisitions(self) -> int:
        """Return how many times a person was taken up without continuity (first one included)."""
        return self._acquisitions

    @property
    def place(self) -> FloatArray | None:
        """Return the person's place [m], shape (3,), tracker frame (a copy), or None."""
        return None if self._place is None else self._place.copy()

    def reset(self) -> None:
        """Forget the followed person."""
        self._tracked = None
        self._last_seen = -math.inf
        self._last_received = math.nan
        self._gap = False
        self._place = None

    def rebase(self, stamp: float, received: float = math.nan) -> None:
        """
        Start a new session of the stream at ``stamp``, keeping who the person is.

        The stamps before it mean nothing any more (a replay loop, a restarted tracker): the
        person counts as last seen at ``stamp`` and as absent for a gap, so the identity rule
        decides (a body near the person's place is the person; a new person only after
        ``reacquire_after`` of the new session). Without a person followed, nothing changes.

        :param stamp: First stamp of the new session [s].
        :param received: When that session's first message was received [s], or NaN.
        """
        if self._tracked is None:
            return
        self._last_seen = stamp if math.isfinite(stamp) else -math.inf
        self._last_received = received
        self._gap = True

    def is_near(self, bodies: Mapping[int, SkeletonFrame]) -> bool:
        """
        Return whether a body of the reading is the person by place (or nobody is followed).

        :param bodies: ``{body_id: frame}`` of one array.
        :return: True when no person is followed yet, or a body is within
            ``reacquire_radius`` of the person's place (or the place is unknown).
        """
        if self._tracked is None or self._place is None:
            return True
        return self._nearest_to_place(bodies) is not None

    def select(
        self, bodies: Mapping[int, SkeletonFrame], received: float = math.nan
    ) -> SkeletonFrame | DropReason:
        """
        Choose the frame of the followed person in one decoded marker array.

        :param bodies: ``{body_id: frame}`` of one array (any frame; stamps [s]).
        :param received: When the array was received [s] (a clock that does not jump), or NaN
            when unknown.
        :return: The person's frame, or :attr:`DropReason.NO_BODY`,
            :attr:`DropReason.OTHER_BODY` or :attr:`DropReason.FAR_BODY`.
        """
        if not bodies:
            return DropReason.NO_BODY
        if self._tracked is None:
            return self._acquire(bodies, received)
        absent = self._absence(max(frame.stamp for frame in bodies.values()), received)
        if not (self._gap or absent >= self._switch_after):  # no gap (also for NaN stamps)
            frame = bodies.get(self._tracked)
            if frame is not None:
                centre = _centre(frame)
                if self._continues(centre):
                    return self._keep(self._tracked, frame, received, centre)
            return DropReason.OTHER_BODY
        near = self._nearest_to_place(bodies)
        if near is not None:
            return self._keep(near[0], bodies[near[0]], received, near[1])
        if absent >= self._reacquire_after:
            return self._acquire(bodies, received)
        return DropReason.FAR_BODY

    def _absence(self, now: float, received: float) -> float:
        """
        How long the person has been absent [s]: the stamps' and the receive times' least.

        Without receive times (NaN), or when the receive clock went back, the stamps alone
        count.
        """
        absent = now - self._last_seen
        waited = received - self._last_received
        if math.isfinite(waited) and waited >= 0.0 and not waited >= absent:
            return waited
        return absent

    def _continues(self, centre: FloatArray | None) -> bool:
        """Whether a body with the followed id is where the person was (or either is unknown)."""
        if self._place is None or centre is None:
            return True
        x, y, z = (a - b for a, b in zip(centre.tolist(), self._place.tolist()))
        square = x * x + y * y + z * z  # Python floats: inf on overflow, never a warning
        limit = self._radius * self._radius
        if square <= limit * (1.0 - _CERTAIN):
            return True
        if square > limit * (1.0 + _CERTAIN):
            return False
        with np.errstate(over='ignore', invalid='ignore'):  # this close: numpy's rounding
            offset = centre - self._place
            return bool(math.sqrt(float(offset @ offset)) <= self._radius)

    def _acquire(self, bodies: Mapping[int, SkeletonFrame], received: float) -> SkeletonFrame:
        body = min(bodies, key=lambda item: (_distance(bodies[item]), item))
        self._acquisitions += 1
        self._last_seen = -math.inf
        self._last_received = math.nan
        self._place = None
        return self._keep(body, bodies[body], received, _centre(bodies[body]))

    def _keep(
        self, body: int, frame: SkeletonFrame, received: float, centre: FloatArray | None
    ) -> SkeletonFrame:
        """Follow ``body``, seen in ``frame`` at ``centre`` (its place, or None if unknown)."""
        self._tracked = body
        self._gap = False
        if math.isfinite(frame.stamp) and frame.stamp > self._last_seen:
            self._last_seen = frame.stamp
        if math.isfinite(received) and not received <= self._last_received:
            self._last_received = received
        if centre is not None:
            self._place = centre
        return frame

    def _nearest_to_place(
        self, bodies: Mapping[int, SkeletonFrame]
    ) -> tuple[int, FloatArray] | None:
        """Return the body nearest to the person's place within the radius, and its centre."""
        if self._place is None:
            return None
        best: tuple[float, int, FloatArray] | None = None
        for body, frame in bodies.items():
            centre = _centre(frame)
            if centre is None:
                continue
            with np.errstate(over='ignore', invalid='ignore'):
                distance = float(np.linalg.norm(centre - self._place))
            if distance <= self._radius and (best is None or (distance, body) < best[:2]):
                best = (distance, body, centre)
        return None if best is None else (best[1], best[2])


class FrameValidator:
    """
    Check tracker skeletons one by one, keeping the last accepted stamp and counts.

    Checks, in this order (the first failing one is the reason):

    1. :attr:`DropReason.NON_FINITE`: the stamp, or a valid body row (rows 0 to 11), is not
       finite (invalid rows are NaN by convention and are not checked; the extremity rows are
       screened one by one, :func:`~pic_ros.human.extremities.screen_extremities`);
    2. :attr:`DropReason.OLD_STAMP`: the stamp is not after the last accepted one;
    3. :attr:`DropReason.MISSING_ARM_JOINTS`: neither arm has a valid shoulder, elbow and wrist
       (one complete arm is enough; the other is then reported by ``frame.has_arm``);
    4. :attr:`DropReason.BAD_BONE`: a bone of :data:`CHECKED_BONES` whose two joints are valid
       is shorter than its minimum or longer than
       :data:`~pic_ros.skeleton.MAX_BONE_LENGTH`.

    Lengths do not depend on the frame, so tracker and body frames are checked alike.
    """

    def __init__(self) -> None:
        self._counter = DropCounter()
        self._last_stamp = -math.inf

    @property
    def counts(self) -> Mapping[DropReason, int]:
        """Return the drops per reason so far (read-only live view)."""
        return self._counter.counts

    @property
    def accepted(self) -> int:
        """Return the number of frames accepted so far."""
        return self._counter.accepted

    @property
    def last_stamp(self) -> float | None:
        """Return the stamp [s] of the last accepted frame, or None."""
        return self._last_stamp if math.isfinite(self._last_stamp) else None

    def reset(self, *, keep_counts: bool = False) -> None:
        """
        Forget the last accepted stamp and zero the counts.

        :param keep_counts: Keep the counts (a new session of the same stream).
        """
        if not keep_counts:
            self._counter.reset()
        self._last_stamp = -math.inf

    def check(self, frame: SkeletonFrame) -> DropReason | None:
        """
        Check one skeleton and count the outcome.

        :param frame: Skeleton, shape (19, 3), [m], stamp [s].
        :return: None if the frame is accepted (its stamp becomes the last accepted one),
            else the reason to drop it.
        """
        reason = self._reason(frame)
        self._counter.record(reason)
        if reason is None:
            self._last_stamp = frame.stamp
        return reason

    def _reason(self, frame: SkeletonFrame) -> DropReason | None:
        valid = frame.valid
        positions = frame.positions
        whole = bool(valid[:BODY_JOINT_COUNT].all())  # every body row: both arms, every bone
        body = positions[:BODY_JOINT_COUNT]
        if not whole:
            body = body[valid[:BODY_JOINT_COUNT]]
        if not math.isfinite(frame.stamp) or not np.isfinite(body).all():
            return DropReason.NON_FINITE
        if not frame.stamp > self._last_stamp:
            return DropReason.OLD_STAMP
        if not whole and not any(valid[arm].all() for arm in _ARM_ROWS):
            return DropReason.MISSING_ARM_JOINTS
        rows = positions[:BODY_JOINT_COUNT].tolist()
        flags = valid[:BODY_JOINT_COUNT].tolist()
        for start, end, shortest in _BONES:
            if not (flags[start] and flags[end]):
                continue
            (x0, y0, z0), (x1, y1, z1) = rows[start], rows[end]
            x, y, z = x0 - x1, y0 - y1, z0 - z1
            # numpy.linalg.norm's sum of squares, on Python floats (inf on overflow, no warning)
            length = math.sqrt(x * x + y * y + z * z)
            if not shortest <= length <= MAX_BONE_LENGTH:
                return DropReason.BAD_BONE
        return None
