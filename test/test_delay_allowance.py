"""
The delay allowance: what the trajectory publisher measures of its delays, and how long it counts.

Explicit times throughout (no clock is read): each test hands the measurements over with their
times, as the node does with its monotonic clock.
"""

from __future__ import annotations

from pic_ros.motion.delay import DELAY_MEMORY, DelayAllowance, SCHEDULING_ENDS
import pytest


def test_nothing_measured_allows_no_delay() -> None:
    """Before any measurement the plans start ``plan_ahead`` after their step."""
    assert DelayAllowance().allowance(0.0) == 0.0


def test_a_late_timer_counts_for_both_ends_plus_the_step_duration() -> None:
    """A timer 30 ms late and a 4 ms step: 2 x 30 + 4 ms (this process and the receiver)."""
    delays = DelayAllowance()
    assert delays.tick(10.0, 0.02) == 0.0  # the first step: nothing to be late against
    late = delays.tick(10.05, 0.02)
    assert late == pytest.approx(0.03)
    delays.step(10.054, late, 0.004)
    assert delays.allowance(10.06) == pytest.approx(SCHEDULING_ENDS * 0.03 + 0.004)


def test_the_age_of_joint_states_counts_and_a_negative_one_does_not() -> None:
    """The way back over the same path is measured; an age below 0 (clock offset) is ignored."""
    delays = DelayAllowance()
    delays.state_age(1.0, -0.5)
    assert delays.allowance(1.0) == 0.0
    delays.state_age(1.0, 0.07)
    assert delays.allowance(1.5) == pytest.approx(0.07)


def test_the_largest_delay_counts_for_its_memory_then_smaller_later_ones() -> None:
    """A burst of load raises the allowance at once; it falls back after ``DELAY_MEMORY``."""
    delays = DelayAllowance()
    delays.state_age(0.0, 0.2)
    for step in range(1, 100):
        delays.state_age(0.1 * step, 0.01 if step % 2 else 0.03)
        now = 0.1 * step
        expected = 0.2 if now <= DELAY_MEMORY else 0.03
        assert delays.allowance(now) == pytest.approx(expected)
    assert delays.largest == pytest.approx(0.2)


def test_a_reset_forgets_the_measurements_but_not_the_largest() -> None:
    """A clock that went back starts a new run: nothing allowed until measured again."""
    delays = DelayAllowance()
    delays.state_age(1.0, 0.1)
    delays.reset()
    assert delays.allowance(1.0) == 0.0
    assert delays.tick(2.0, 0.02) == 0.0
    assert delays.largest == pytest.approx(0.1)


def test_a_memory_that_is_not_positive_is_refused() -> None:
    """A zero memory would forget every measurement at once."""
    with pytest.raises(ValueError, match='memory'):
        DelayAllowance(0.0)
