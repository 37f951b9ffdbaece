"""
Causal smoothing of joint positions, one sample at a time.

All filters share one call, ``update(stamp, values, valid=None)``: ``values`` is an array of any
fixed shape whose first axis are *rows* (for a skeleton: shape (19, 3), one row per
:class:`~pic_ros.skeleton.HumanJoint`, [m], any fixed frame) and ``valid`` flags each row.
Invalid rows, and rows holding a non-finite value, are not ingested: they keep their previous
estimate. Rows that have never been valid are NaN in the output. The output is always a new array
of the input's shape and unit.

- :class:`ExponentialFilter`: first-order low-pass with a time constant in seconds, so that it
  behaves the same at any frame rate; the live default.
- :class:`KalmanFilter`: the PIC paper's scalar random-walk Kalman filter per coordinate
  (``docs/method.md#the-papers-kalman-filter-kalman``); frame-indexed, for reproducing the
  paper (about 1.1 s of lag with the paper's settings, too slow for live use).
- :class:`PassThroughFilter`: no smoothing.
"""

from __future__ import annotations

import math
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError, SkeletonError

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

FILTER_KINDS: Final = ('exponential', 'kalman', 'none')
"""Valid ``kind`` values of :func:`make_filter`."""


class SkeletonFilter(Protocol):
    """Interface shared by every filter of this module."""

    def update(
        self, stamp: float, values: npt.ArrayLike, valid: npt.ArrayLike | None = None
    ) -> FloatArray:
        """
        Ingest one sample and return the current estimate.

        :param stamp: Capture time of the sample [s].
        :param values: Sample, fixed shape (rows, ...), any unit and frame.
        :param valid: Optional validity per row, shape (rows,); default: all rows valid.
        :return: New array, shape and unit of ``values``; NaN rows were never valid.
        """
        ...

    def reset(self) -> None:
        """Forget every sample (the next update starts afresh, with any shape)."""
        ...


def _parameter(
    name: str,
    value: object,
    *,
    unit: str,
    allow_zero: bool = True,
    allow_inf: bool = False,
    signed: bool = False,
) -> float:
    """
    Validate a real filter parameter (non-negative unless ``signed``).

    :param name: Parameter name, for the message.
    :param value: The value given.
    :param unit: Unit text for the message, e.g. ``'s'`` or ``'m^2'``.
    :param allow_zero: Whether 0 is allowed.
    :param allow_inf: Whether +inf is allowed.
    :param signed: Whether negative values are allowed.
    :return: The value as a float.
    :raises ConfigError: If the value is not a real number in range (the message says why).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigError(f'{name} must be a number [{unit}], got {value!r}')
    number = float(value)
    if math.isnan(number) or (math.isinf(number) and not (allow_inf and number > 0.0)):
        finite = 'finite or +inf' if allow_inf else 'finite'
        raise ConfigError(f'{name} must be {finite} [{unit}], got {number!r}')
    if signed:
        return number
    if number < 0.0 or (number == 0.0 and not allow_zero):
        bound = '>= 0' if allow_zero else '> 0'
        raise ConfigError(f'{name} must be {bound} [{unit}], got {number!r}')
    return number


class _RowFilter:
    """Shape locking and validity handling shared by the filters."""

    def __init__(self) -> None:
        self._shape: tuple[int, ...] | None = None

    def reset(self) -> None:
        """Forget every sample (the next update starts afresh, with any shape)."""
        self._shape = None

    def _prepare(
        self, values: npt.ArrayLike, valid: npt.ArrayLike | None
    ) -> tuple[FloatArray, BoolArray]:
        """
        Check a sample against the locked shape and compute the usable rows.

        :param values: Sample, shape (rows, ...).
        :param valid: Validity per row, shape (rows,), or None for all rows.
        :return: The sample as float64 and the usable rows (valid and all finite), shape (rows,).
        :raises SkeletonError: On a scalar sample, a shape change or a wrong mask shape.
        """
        array = np.asarray(values, dtype=np.float64)
        if array.ndim == 0:
            raise SkeletonError('filter input must have at least one axis (rows)')
        if self._shape is not None and array.shape != self._shape:
            raise SkeletonError(
                f'filter input shape changed from {self._shape} to {array.shape}; call reset() '
                'first'
            )
        rows = array.shape[0]
        width = math.prod(array.shape[1:])
        finite: BoolArray = np.all(np.isfinite(array).reshape(rows, width), axis=1)
        if valid is None:
            return array, finite
        flags = np.asarray(valid, dtype=bool)
        if flags.shape != (rows,):
            raise SkeletonError(f'filter validity must have shape ({rows},), got {flags.shape}')
        return array, finite & flags


def _rows(mask: BoolArray, ndim: int) -> BoolArray:
    """Broadcast a per-row mask, shape (rows,), against an array with ``ndim`` axes."""
    return mask.reshape(mask.shape + (1,) * (ndim - 1))


class ExponentialFilter(_RowFilter):
    """
    First-order low-pass filter with a time constant, per element.

    On an update with time step ``dt`` [s] since a row was last ingested,
    ``alpha = 1 - exp(-dt / tau)`` and ``s <- s + alpha (x - s)`` (evaluated as the convex
    combination ``(1 - alpha) s + alpha x`` and clamped between ``s`` and ``x``, so the output
    never leaves the range of the inputs, even by a rounding error).

    Because ``alpha`` follows ``dt``, the response in *seconds* does not depend on the frame rate:
    each sample is taken to hold over the interval since the previous one, so a step sampled at
    30 Hz and at 240 Hz gives the same output at common times (after ``tau`` seconds:
    ``1 - 1/e``). The price is the usual sample-and-hold ambiguity of at most one frame period
    about *when* within that interval a change happened.

    Rules:

    - the first valid sample of a row initialises it (no lag from an arbitrary start value);
    - ``tau = 0`` passes the samples through;
    - invalid or non-finite rows keep their estimate and their last-ingested time;
    - ``dt <= 0`` against the last accepted stamp (repeated or out-of-order sample): nothing is
      updated and the current estimate is returned;
    - a row not ingested for longer than ``reset_after`` seconds re-initialises from the new
      sample, so a tracking loss does not drag the arm through the gap.

    :param time_constant: ``tau`` [s], finite, >= 0.
    :param reset_after: Longest gap [s] that is smoothed over, > 0 (``inf``: never re-initialise).
    :raises ConfigError: If a parameter is out of range (the message says which and why).
    """

    def __init__(self, time_constant: float, reset_after: float = 0.5) -> None:
        super().__init__()
        self._tau = _parameter('time_constant', time_constant, unit='s')
        self._reset_after = _parameter(
            'reset_after', reset_after, unit='s', allow_zero=False, allow_inf=True
        )
        self._estimate: FloatArray | None = None
        self._row_stamps: FloatArray | None = None
        self._last_stamp: float | None = None
        self._all_at: float | None = None  # when every row was last ingested, if together

    @property
    def time_constant(self) -> float:
        """Return the time constant ``tau`` [s]."""
        return self._tau

    @property
    def reset_after(self) -> float:
        """Return the longest gap [s] smoothed over before a row re-initialises."""
        return self._reset_after

    def reset(self) -> None:
        """Forget every sample (the next update starts afresh, with any shape)."""
        super().reset()
        self._estimate = None
        self._row_stamps = None
        self._last_stamp = None
        self._all_at = None

    def update(
        self, stamp: float, values: npt.ArrayLike, valid: npt.ArrayLike | None = None
    ) -> FloatArray:
        """
        Ingest one sample and return the smoothed estimate.

        :param stamp: Capture time of the sample [s], finite.
        :param values: Sample, fixed shape (rows, ...), e.g. (19, 3) joint positions [m] in a
            fixed frame.
        :param valid: Optional validity per row, shape (rows,); default: every finite row.
        :return: New array, shape and unit of ``values``: the estimate after this sample (or the
            unchanged estimate if ``stamp`` is not after the last accepted one); rows never
            valid are NaN.
        :raises SkeletonError: On a non-finite stamp, a shape change or a wrong mask shape.
        """
        when = float(stamp)
        if not math.isfinite(when):
            raise SkeletonError(f'filter stamp must be finite, got {when!r}')
        array, usable = self._prepare(values, valid)
        if self._estimate is None or self._row_stamps is None:
            self._shape = array.shape
            self._estimate = np.full(array.shape, np.nan)
            self._row_stamps = np.full(array.shape[0], np.nan)
        elif self._last_stamp is not None and when <= self._last_stamp:
            return self._estimate.copy()
        self._last_stamp = when
        every = bool(usable.all())
        together = self._all_at
        self._all_at = when if every else None
        estimate = self._estimate
        if self._tau > 0.0 and every and together is not None:
            # every row smoothed after one shared gap (the usual frame): one alpha, whole arrays
            if when - together <= self._reset_after:
                self._row_stamps.fill(when)
                with np.errstate(over='ignore'):
                    return self._blend(estimate, array, -np.expm1(-(when - together) / self._tau))
        elapsed = when - self._row_stamps
        restart = usable & ~(elapsed <= self._reset_after)  # also never-seen rows (NaN)
        blend = usable & ~restart
        if self._tau == 0.0:
            restart = usable
        elif blend.all():  # every row smoothed: whole arrays, no row picking
            self._row_stamps.fill(when)
            with np.errstate(over='ignore'):
                alpha = _rows(-np.expm1(-elapsed / self._tau), array.ndim)
                return self._blend(estimate, array, alpha)
        elif np.any(blend):
            old = estimate[blend]
            new = array[blend]
            with np.errstate(over='ignore'):  # a tiny tau or a huge value saturates harmlessly
                alpha = _rows(-np.expm1(-elapsed[blend] / self._tau), array.ndim)
                mixed = (1.0 - alpha) * old + alpha * new
            estimate[blend] = np.clip(mixed, np.minimum(old, new), np.maximum(old, new))
        estimate[restart] = array[restart]
        self._row_stamps[usable] = when
        return estimate.copy()

    @staticmethod
    def _blend(estimate: FloatArray, array: FloatArray, alpha: Any) -> FloatArray:
        """
        Blend every row of a sample into the estimate, in place; return a copy of it.

        :param estimate: The estimate, updated in place.
        :param array: The sample, the same shape.
        :param alpha: The blend: a scalar, or one per row broadcast against the arrays.
        :return: A copy of the new estimate.
        """
        mixed = (1.0 - alpha) * estimate + alpha * array
        np.minimum(
            np.maximum(mixed, np.minimum(estimate, array)), np.maximum(estimate, array),
            out=estimate,
        )
        return estimate.copy()


class PassThroughFilter(ExponentialFilter):
    """
    No smoothing: an :class:`ExponentialFilter` with ``tau = 0``.

    Valid rows are returned as given; invalid rows hold their last valid value (NaN if never
    valid); samples whose stamp is not after the last accepted one are ignored.
    """

    def __init__(self) -> None:
        super().__init__(0.0, reset_after=math.inf)


class KalmanFilter(_RowFilter):
    """
    The PIC paper's scalar random-walk Kalman filter, independently per element.

    Exactly as ``docs/method.md#the-papers-kalman-filter-kalman``: the state starts at
    ``x0 = initial_estimate`` with variance ``P0 = initial_variance``. The **first** valid
    sample of a row is not ingested: the output for it is ``x0`` (zeros with the paper's
    settings, like row 0 of the paper's ``kalman_smooth_*`` files). Each later valid sample
    ``y`` does ``P- = P + Q``, ``K = P- / (P- + R)``, ``x <- x + K (y - x)``,
    ``P <- (1 - K) P-``.

    The filter is frame-indexed like the paper: time stamps are ignored (repeated stamps are
    ordinary steps, and gaps are not re-initialised). Invalid or non-finite rows keep both their
    estimate and their variance.

    :param process_variance: ``Q`` per step [unit^2], finite, >= 0 (paper: 1e-5 m^2).
    :param measurement_variance: ``R`` [unit^2], finite, > 0 (paper: 0.01 m^2).
    :param initial_estimate: ``x0`` [unit], finite (paper: 0.0).
    :param initial_variance: ``P0`` [unit^2], finite, >= 0 (paper: 1.0).
    :raises ConfigError: If a parameter is out of range (the message says which and why).
    """

    def __init__(
        self,
        process_variance: float = 1e-5,
        measurement_variance: float = 0.01,
        initial_estimate: float = 0.0,
        initial_variance: float = 1.0,
    ) -> None:
        super().__init__()
        self._q = _parameter('process_variance', process_variance, unit='unit^2')
        self._r = _parameter(
            'measurement_variance', measurement_variance, unit='unit^2', allow_zero=False
        )
        self._x0 = _parameter('initial_estimate', initial_estimate, unit='unit', signed=True)
        self._p0 = _parameter('initial_variance', initial_variance, unit='unit^2')
        self._estimate: FloatArray | None = None
        self._variance: FloatArray | None = None
        self._started: BoolArray | None = None

    @property
    def process_variance(self) -> float:
        """Return the process variance ``Q`` per step [unit^2]."""
        return self._q

    @property
    def measurement_variance(self) -> float:
        """Return the measurement variance ``R`` [unit^2]."""
        return self._r

    @property
    def initial_estimate(self) -> float:
        """Return the initial estimate ``x0`` [unit]."""
        return self._x0

    @property
    def initial_variance(self) -> float:
        """Return the initial variance ``P0`` [unit^2]."""
        return self._p0

    @property
    def variance(self) -> FloatArray | None:
        """Return the variance ``P`` per element [unit^2], shape of the input; None if no data."""
        return None if self._variance is None else self._variance.copy()

    def reset(self) -> None:
        """Forget every sample (the next update starts afresh, with any shape)."""
        super().reset()
        self._estimate = None
        self._variance = None
        self._started = None

    def update(
        self, stamp: float, values: npt.ArrayLike, valid: npt.ArrayLike | None = None
    ) -> FloatArray:
        """
        Ingest one sample (one frame) and return the filtered estimate.

        :param stamp: Capture time [s]; ignored (the filter is frame-indexed).
        :param values: Sample, fixed shape (rows, ...), e.g. (19, 3) or (25, 3) joint positions
            [m].
        :param valid: Optional validity per row, shape (rows,); default: every finite row.
        :return: New array, shape and unit of ``values``: the estimate after this frame; rows
            never valid are NaN.
        :raises SkeletonError: On a shape change or a wrong mask shape.
        """
        del stamp  # frame-indexed, like the paper
        array, usable = self._prepare(values, valid)
        if self._estimate is None or self._variance is None or self._started is None:
            self._shape = array.shape
            self._estimate = np.full(array.shape, self._x0)
            self._variance = np.full(array.shape, self._p0)
            self._started = np.zeros(array.shape[0], dtype=bool)
        step = usable & self._started
        self._started |= usable
        if np.any(step):
            predicted = self._variance[step] + self._q
            gain = predicted / (predicted + self._r)
            previous = self._estimate[step]
            self._estimate[step] = previous + gain * (array[step] - previous)
            self._variance[step] = (1.0 - gain) * predicted
        output = self._estimate.copy()
        output[~self._started] = np.nan
        return output


_PARAMETERS: Final = {
    'exponential': ('time_constant', 'reset_after'),
    'kalman': ('process_variance', 'measurement_variance', 'initial_estimate', 'initial_variance'),
    'none': (),
}


def make_filter(kind: str, **params: float) -> SkeletonFilter:
    """
    Build a filter by name, e.g. from a YAML or ROS parameter.

    :param kind: ``'exponential'`` (:class:`ExponentialFilter`, needs ``time_constant`` [s]),
        ``'kalman'`` (:class:`KalmanFilter`) or ``'none'`` (:class:`PassThroughFilter`).
    :param params: Keyword arguments of that filter's constructor (units as documented there).
    :return: A new filter with no samples.
    :raises ConfigError: On an unknown kind (listing the valid ones), an unknown or missing
        parameter, or an out-of-range value.
    """
    names = _PARAMETERS.get(kind) if isinstance(kind, str) else None
    if names is None:
        valid = ', '.join(repr(k) for k in FILTER_KINDS)
        raise ConfigError(f'unknown filter kind {kind!r}; valid kinds: {valid}')
    unknown = sorted(set(params) - set(names))
    if unknown:
        allowed = ', '.join(names) if names else 'none'
        raise ConfigError(
            f'unknown parameter(s) for the {kind!r} filter: {", ".join(unknown)}; '
            f'valid: {allowed}'
        )
    if kind == 'exponential':
        if 'time_constant' not in params:
            raise ConfigError("the 'exponential' filter needs time_constant [s]")
        return ExponentialFilter(**params)
    if kind == 'kalman':
        return KalmanFilter(**params)
    return PassThroughFilter()
