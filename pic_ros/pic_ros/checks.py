"""
One helper per validation rule, so that every config reports errors the same way.

Each helper returns the checked value (converted to the expected Python type) or raises
:class:`~pic_ros.exceptions.ConfigError` naming the field, the value and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable
import math
from typing import TypeVar

from pic_ros.exceptions import ConfigError

T = TypeVar('T')


def check_number(name: str, value: object, low: float, high: float) -> float:
    """
    Check that a value is a finite real number in ``[low, high]``.

    :param name: Field name for the message.
    :param value: Value to check (bools are rejected).
    :param low: Smallest allowed value.
    :param high: Largest allowed value.
    :return: The value as a float.
    :raises ConfigError: If it is not a number, not finite or out of range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f'{name} must be a number in [{low}, {high}], got {value!r}')
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise ConfigError(f'{name} must be in [{low}, {high}], got {value!r}')
    return number


def check_integer(name: str, value: object, low: int, high: int) -> int:
    """
    Check that a value is an integer in ``[low, high]``.

    :param name: Field name for the message.
    :param value: Value to check (bools and floats are rejected).
    :param low: Smallest allowed value.
    :param high: Largest allowed value.
    :return: The value as an int.
    :raises ConfigError: If it is not an integer or out of range.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f'{name} must be an integer in [{low}, {high}], got {value!r}')
    return int(value)


def check_choice(name: str, value: T, choices: Iterable[T]) -> T:
    """
    Check that a value is one of a fixed set.

    :param name: Field name for the message.
    :param value: Value to check.
    :param choices: Allowed values.
    :return: The value.
    :raises ConfigError: If it is not one of ``choices`` (the message lists them).
    """
    allowed = list(choices)
    if value not in allowed:
        listed = ', '.join(repr(choice) for choice in allowed)
        raise ConfigError(f'{name} must be one of {listed}, got {value!r}')
    return value
