"""A node's clock counted from an origin of its own (:mod:`pic_ros.motion.clock`)."""

from __future__ import annotations

from pic_ros.motion.clock import NANOSECONDS, RELATIVE_SPAN, RelativeClock


def test_simulated_time_counts_from_zero_and_stamps_as_it_is() -> None:
    """Readings up to the span keep their value: sim time and tests see the clock's own times."""
    clock = RelativeClock()
    assert clock.seconds(100 * NANOSECONDS + 5) == 100.000000005
    assert clock.origin_ns == 0
    assert clock.stamp(100.000000005) == (100, 5)
    assert clock.stamp(0.0) == (0, 0)  # unstamped stays unstamped


def test_wall_time_counts_from_a_second_before_the_first_reading() -> None:
    """1.8e9 s in: times from about 1 s, stamped back on the very nanosecond they came from."""
    clock = RelativeClock()
    reading = 1_795_922_741 * NANOSECONDS + 123_456_789
    assert clock.seconds(reading) == 1.0
    assert clock.origin_ns == reading - NANOSECONDS
    for offset in (0, 1, 999_999_999, 7 * 3600 * NANOSECONDS + 3):
        later = clock.seconds(reading + offset)
        sec, nanosec = clock.stamp(later)
        assert sec * NANOSECONDS + nanosec == reading + offset
    age = clock.seconds(reading + 80_000_000) - clock.since_origin(reading)
    assert abs(age - 0.08) < 1e-12


def test_a_clock_that_jumps_out_of_the_span_takes_a_new_origin_and_goes_back() -> None:
    """A jump back before the origin, or beyond the span, hands out an earlier time: a restart."""
    clock = RelativeClock()
    start = 1_795_922_741 * NANOSECONDS + 700_000_000
    first = clock.seconds(start)
    back = clock.seconds(start - 3600 * NANOSECONDS + 900_000_000)  # a replay looping
    assert 0.0 < back < first
    late = clock.seconds(start - 3600 * NANOSECONDS + 1_000_000_000)
    assert abs(late - back - 0.1) < 1e-12
    far = clock.seconds(start + (RELATIVE_SPAN + 10) * NANOSECONDS)
    assert 0.0 < far < late
    sec, nanosec = clock.stamp(far)
    assert sec * NANOSECONDS + nanosec == start + (RELATIVE_SPAN + 10) * NANOSECONDS
