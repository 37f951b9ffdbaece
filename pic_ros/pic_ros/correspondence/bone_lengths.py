"""
A running, robust estimate of a person's upper-arm and forearm lengths.

Depth trackers report bones shorter than they are when a limb points at the camera
(foreshortening: the far joint is hidden and placed on the near surface), and now and then far
longer or shorter for one frame (a joint jumps). Noise makes every frame's length scatter by a few
millimetres. So the length of a bone is estimated as a high quantile of *every* valid frame seen
so far -- not the first second alone, which may be spent with the arms crossed or pointing at the
camera:

- shortened frames lie below the quantile, so a large share of the frames may be
  foreshortened without biasing it much;
- single-frame outliers are too few to move a quantile;
- the estimate keeps learning as the person moves, and converges to the length the tracker
  reports when it sees the bone side-on.

Each bone keeps a histogram of lengths (1 mm bins from 0 to :data:`MAX_LENGTH`), so memory is
bounded however long the session, and the quantile is exact to a bin.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_number

BIN_WIDTH: Final = 0.001
"""Width of a histogram bin [m]."""

MAX_LENGTH: Final = 1.0
"""Longest bone the histogram holds [m]; longer ones are tracking errors and are ignored."""

MIN_LENGTH: Final = 0.05
"""Shortest bone counted [m]; shorter ones are coincident or collapsed joints."""

DEFAULT_QUANTILE: Final = 0.7
"""
Quantile of the observed lengths taken as the bone length.

Chosen on the synthetic robustness suite (:mod:`pic_ros_tools.synthetic.suite`), never on a
recording: the smallest arm-length bias there; the median underestimates (foreshortening), 0.9
overestimates (noise lengthens every bone a little). Figures: ``docs/method.md``.
"""

_BINS: Final = int(round(MAX_LENGTH / BIN_WIDTH))


class BoneLengthEstimator:
    """
    Robust running length of a set of bones (e.g. upper arm and forearm of one arm).

    :param bones: Number of bones.
    :param quantile: Quantile of all observed lengths reported as each bone's length, in
        [0.5, 0.99].
    :raises pic_ros.exceptions.ConfigError: If the quantile is out of range.
    """

    def __init__(self, bones: int = 2, quantile: float = DEFAULT_QUANTILE) -> None:
        self.quantile = check_number('bone length quantile', quantile, 0.5, 0.99)
        self._counts = np.zeros((bones, _BINS), dtype=np.int64)
        self._totals = np.zeros(bones, dtype=np.int64)
        self._cache: npt.NDArray[np.float64] | None = None

    @property
    def samples(self) -> npt.NDArray[np.int64]:
        """Return how many lengths each bone has counted, shape (bones,)."""
        return self._totals.copy()

    def reset(self) -> None:
        """Forget every observation (a new person or a new session)."""
        self._counts[:] = 0
        self._totals[:] = 0
        self._cache = None

    def copy_from(self, other: BoneLengthEstimator) -> None:
        """
        Continue another estimator's measurement (its counts are copied, not shared).

        :param other: Estimator with the same number of bones.
        """
        if other._counts.shape == self._counts.shape:
            self._counts[:] = other._counts
            self._totals[:] = other._totals
            self._cache = None

    def observe(self, lengths: npt.ArrayLike) -> None:
        """
        Count one frame's bone lengths.

        :param lengths: One length per bone, [m]; values outside [MIN_LENGTH, MAX_LENGTH) or
            not finite are ignored (that bone only).
        """
        values = np.asarray(lengths, dtype=float).reshape(-1)
        for bone, value in enumerate(values[: self._totals.size]):
            if MIN_LENGTH <= value < MAX_LENGTH:
                self._counts[bone, int(value / BIN_WIDTH)] += 1
                self._totals[bone] += 1
                self._cache = None

    def lengths(self) -> npt.NDArray[np.float64] | None:
        """
        Return the current estimate of every bone.

        :return: Lengths, shape (bones,), [m] (the centre of the quantile's bin); ``None`` until
            every bone has at least one observation.
        """
        if self._cache is not None:
            return self._cache.copy()
        if np.any(self._totals == 0):
            return None
        cumulative = np.cumsum(self._counts, axis=1)
        ranks = np.ceil(self.quantile * self._totals).astype(np.int64)
        index = np.array(
            [np.searchsorted(cumulative[bone], max(rank, 1)) for bone, rank in enumerate(ranks)]
        )
        self._cache = (index + 0.5) * BIN_WIDTH
        return self._cache.copy()
