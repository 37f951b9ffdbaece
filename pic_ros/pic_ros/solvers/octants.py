"""
Octants, their Hamming neighbourhoods, and projection of a link direction onto them.

The PIC paper (Gonzalez & Wachs, *Pose Imitation Constraints for Collaborative Robots*) divides the
space around a joint into the 8 octants of a frame aligned with the world axes and constrains the
*direction* of a link to an octant. pic_ros takes the octants in the robot base frame (REP-103:
x forward, y left, z up) and keeps the paper's numbering by meaning, so that octant 1 is still
"right, up, back" as in the paper's table:

====== ===================== =====================
octant in words              signs (x fwd, y left, z up)
====== ===================== =====================
1      right, up, back       (-, -, +)
2      left, up, back        (-, +, +)
3      left, up, front       (+, +, +)
4      right, up, front      (+, -, +)
5      right, down, back     (-, -, -)
6      left, down, back      (-, +, -)
7      left, down, front     (+, +, -)
8      right, down, front    (+, -, -)
====== ===================== =====================

Relabelling the axes does not change Hamming distances, so the neighbourhoods are the paper's:
η = 1 admits the octant and its 3 face neighbours, η = 2 admits all but the antipode, η = 3 admits
all 8 (PICs, Eq. 3). Octants are closed sets: a direction with a zero component lies in both
octants that share that face, and membership allows a small tolerance for rounding.

Unlike the authors' research code, membership and projection use the link *direction* (a relative
vector), never absolute positions (``docs/method.md#human-octants-per-frame``).
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from typing import Final

from pic_ros.exceptions import ConfigError

Vector = tuple[float, float, float]

OCTANT_SIGNS: Final[tuple[tuple[int, int, int], ...]] = (
    (-1, -1, 1),
    (-1, 1, 1),
    (1, 1, 1),
    (1, -1, 1),
    (-1, -1, -1),
    (-1, 1, -1),
    (1, 1, -1),
    (1, -1, -1),
)
"""Sign pattern (x, y, z) of octants 1..8 (index 0 is octant 1)."""

_ANTIPODES: Final = tuple(
    OCTANT_SIGNS.index((-x, -y, -z)) + 1 for x, y, z in OCTANT_SIGNS
)

OCTANT_NAMES: Final = (
    'right-up-back',
    'left-up-back',
    'left-up-front',
    'right-up-front',
    'right-down-back',
    'left-down-back',
    'left-down-front',
    'right-down-front',
)
"""Octants 1..8 in words (person's or robot's right/left, up/down, back/front)."""

MEMBERSHIP_TOLERANCE: Final = 1e-9
"""A unit direction component down to ``-MEMBERSHIP_TOLERANCE`` still counts as on the face."""


def check_octant(octant: int) -> int:
    """
    Validate an octant id.

    :param octant: Octant id, 1..8.
    :return: The same id.
    :raises ConfigError: If it is not an integer in 1..8.
    """
    if isinstance(octant, bool) or not isinstance(octant, int) or not 1 <= octant <= 8:
        raise ConfigError(f'octant must be an integer in 1..8, got {octant!r}')
    return octant


def check_eta(eta: int) -> int:
    """
    Validate a PICs softening factor.

    :param eta: Hamming radius η, 0..3 (0 is PIC).
    :return: The same value.
    :raises ConfigError: If it is not an integer in 0..3.
    """
    if isinstance(eta, bool) or not isinstance(eta, int) or not 0 <= eta <= 3:
        raise ConfigError(f'eta must be an integer in 0..3, got {eta!r}')
    return eta


def octant_of(direction: Sequence[float]) -> int:
    """
    Return the octant whose corner diagonal is closest in angle to a direction.

    That is the octant of the direction's sign pattern; a zero component counts as positive.

    :param direction: A vector, shape (3,), any length, base-frame axes.
    :return: Octant id 1..8.
    """
    signs = (
        1 if direction[0] >= 0.0 else -1,
        1 if direction[1] >= 0.0 else -1,
        1 if direction[2] >= 0.0 else -1,
    )
    return OCTANT_SIGNS.index(signs) + 1


def octant_with_hysteresis(direction: Sequence[float], previous: int, band: float) -> int:
    """
    Return the octant of a direction, keeping the previous octant's sign near a boundary.

    A tracked bone that lies close to a coordinate plane flips octant with every bit of tracker
    noise, and each flip moves the PIC constraint to another octant. A component whose sign
    differs from the previous octant's but whose magnitude is below ``band`` keeps the previous
    sign, so the octant only changes once the bone has clearly crossed the plane.

    :param direction: A unit vector, shape (3,), base-frame axes.
    :param previous: The octant of the previous frame, 1..8, or 0 for none.
    :param band: Half-width of the dead band, as a unit-vector component (0 disables it).
    :return: Octant id 1..8.
    """
    if not previous or band <= 0.0:
        return octant_of(direction)
    kept = OCTANT_SIGNS[previous - 1]
    x, y, z = direction[0], direction[1], direction[2]
    signs = (
        kept[0] if abs(x) < band else (1 if x >= 0.0 else -1),
        kept[1] if abs(y) < band else (1 if y >= 0.0 else -1),
        kept[2] if abs(z) < band else (1 if z >= 0.0 else -1),
    )
    return OCTANT_SIGNS.index(signs) + 1


def antipode(octant: int) -> int:
    """
    Return the opposite octant (every sign flipped).

    :param octant: Octant id 1..8.
    :return: Octant id 1..8 of ``-signs``.
    """
    return _ANTIPODES[check_octant(octant) - 1]


def hamming(first: int, second: int) -> int:
    """
    Return the Hamming distance between the sign patterns of two octants.

    :param first: Octant id 1..8.
    :param second: Octant id 1..8.
    :return: Number of axes whose sign differs, 0..3.
    """
    a = OCTANT_SIGNS[check_octant(first) - 1]
    b = OCTANT_SIGNS[check_octant(second) - 1]
    return sum(1 for i in range(3) if a[i] != b[i])


def neighbourhood(octant: int, eta: int) -> frozenset[int]:
    """
    Return the admissible octants of PICs(η): every octant within Hamming distance η (Eq. 3).

    :param octant: The human's octant, 1..8.
    :param eta: Softening factor η, 0..3 (0 gives the octant alone, as in PIC).
    :return: Octant ids, sizes 1, 4, 7 and 8 for η = 0..3.
    """
    check_eta(eta)
    return frozenset(k for k in range(1, 9) if hamming(octant, k) <= eta)


def mismatches(direction: Sequence[float], octant: int, tolerance: float) -> int:
    """
    Count the components of a direction that have the wrong sign for an octant.

    :param direction: A vector, shape (3,), base-frame axes.
    :param octant: Octant id 1..8.
    :param tolerance: A component of the right sign or within ``tolerance`` of zero is fine.
    :return: Number of wrong components, 0..3.
    """
    signs = OCTANT_SIGNS[octant - 1]
    return sum(1 for i in range(3) if signs[i] * direction[i] < -tolerance)


def is_admissible(
    direction: Sequence[float], octant: int, eta: int = 0, tolerance: float = MEMBERSHIP_TOLERANCE
) -> bool:
    """
    Tell whether a direction lies in the octant or in a PICs(η) neighbour of it.

    :param direction: A unit vector, shape (3,), base-frame axes.
    :param octant: The constraint octant, 1..8.
    :param eta: Softening factor η, 0..3.
    :param tolerance: Slack on each unit-vector component (closed octants, rounding).
    :return: ``True`` if at most η components have the wrong sign.
    """
    return mismatches(direction, octant, tolerance) <= eta


def project_direction(
    direction: Sequence[float], octant: int, eta: int = 0, tolerance: float = 0.0
) -> Vector:
    """
    Project a direction onto the closest admissible face (the paper's Fig. 3).

    The admissible set is the union of the octants within Hamming distance η of ``octant``,
    each widened by ``tolerance`` (a unit-direction component of the wrong sign but no larger
    than ``tolerance`` still counts as on the face: the octant hysteresis band); such a
    direction is returned as it is. Otherwise the closest admissible direction keeps every
    component of the right sign and every wrong-signed component except the ``m - η`` smallest
    in magnitude, which are set to zero: that is the orthogonal projection onto the nearest face
    (or edge) of the admissible cone. When all components are wrong and η = 0 the projection is
    the apex, and the closest direction of the octant is then the octant's axis nearest to the
    direction (the smallest-magnitude component's axis), which is what is returned.

    :param direction: A vector, shape (3,), base-frame axes; it need not be unit length.
    :param octant: The constraint octant, 1..8.
    :param eta: Softening factor η, 0..3.
    :param tolerance: Slack on each unit-direction component, >= 0.
    :return: A unit vector in the admissible set; the input direction, normalised, when it is
        already admissible. A zero input returns the octant's corner diagonal.
    """
    x, y, z = float(direction[0]), float(direction[1]), float(direction[2])
    signs = OCTANT_SIGNS[octant - 1]
    length = math.sqrt(x * x + y * y + z * z)
    if length <= 1e-12:
        scale = 1.0 / math.sqrt(3.0)
        return (signs[0] * scale, signs[1] * scale, signs[2] * scale)
    values = [x / length, y / length, z / length]
    wrong = [i for i in range(3) if signs[i] * values[i] < 0.0]
    if sum(1 for i in wrong if signs[i] * values[i] < -tolerance) <= eta:
        return (values[0], values[1], values[2])
    # A projection is needed: every wrong-signed component counts, those within the tolerance
    # (the smallest) are zeroed first, so that none is blown up by the renormalisation.
    excess = len(wrong) - eta
    original = list(values)
    wrong.sort(key=lambda i: abs(values[i]))
    for i in wrong[:excess]:
        values[i] = 0.0
    norm = math.sqrt(values[0] ** 2 + values[1] ** 2 + values[2] ** 2)
    if norm > 1e-12:
        return (values[0] / norm, values[1] / norm, values[2] / norm)
    axis = min(range(3), key=lambda i: abs(original[i]))
    unit = [0.0, 0.0, 0.0]
    unit[axis] = float(signs[axis])
    return (unit[0], unit[1], unit[2])
