"""
Bag time stamps: recording seconds to rosbag2 nanoseconds and back, exactly.

A rosbag2 stores time as integer nanoseconds (a message's receive time stamp, and
``builtin_interfaces/Time`` ``sec`` + ``nanosec`` in headers); the recordings and the pipeline
count float seconds. Seconds become nanoseconds by rounding to the nearest nanosecond
(:func:`stamps_to_ns`), and nanoseconds become seconds by one correctly rounded division
(:func:`stamp_from_ns`), so a stamp with up to 9 decimals (the text recordings have 6 or 7)
comes back as the very float it was.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_integer
from pic_ros.exceptions import ConfigError

IntArray = npt.NDArray[np.int64]

NS_PER_S: Final = 1_000_000_000
"""Nanoseconds per second."""


def stamps_to_ns(stamps: npt.ArrayLike, epoch_ns: int = 0) -> IntArray:
    """
    Convert recording stamps [s] to bag time stamps [ns].

    :param stamps: Stamps, shape (T,), [s], finite, non-negative.
    :param epoch_ns: Added to every stamp [ns], >= 0.
    :return: ``epoch_ns + round(stamps * 1e9)``, shape (T,), int64.
    :raises ConfigError: If a stamp is negative or not finite, or ``epoch_ns`` is negative.
    """
    values = np.asarray(stamps, dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any(values < 0.0):
        raise ConfigError('stamps must be finite and >= 0 s')
    base = check_integer('epoch_ns', epoch_ns, 0, 2**62)
    converted: IntArray = base + np.rint(values * 1e9).astype(np.int64)
    return converted


def stamp_from_ns(stamp_ns: int) -> float:
    """
    Convert a time stamp [ns] to seconds, exactly rounded.

    ``(sec * 10**9 + nanosec) / 1e9`` is the double nearest to the decimal number of seconds, so
    a stamp written from a text file with up to 9 decimals reads back as the same float.

    :param stamp_ns: Time stamp [ns].
    :return: Seconds [s].
    """
    return int(stamp_ns) / 1e9


__all__ = ['NS_PER_S', 'stamp_from_ns', 'stamps_to_ns']
