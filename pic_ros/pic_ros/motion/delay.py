"""
How late a streamed trajectory may reach its controller: the plan-ahead raised to the delays seen.

A chunk planned at a step is stamped with the step's time and first repeats, up to ``plan_ahead``
after the step, what the controller was last sent (:func:`~pic_ros.motion.commander.bridge`). A
chunk that reaches the controller later than that is joined to the command rather than continued
(joint_trajectory_controller samples a late trajectory where it is): a seam. On an idle machine
the transport takes a few milliseconds and ``plan_ahead`` (25 ms) covers it; on a busy robot PC
the trajectory publisher, the transport and the controller manager's executor are all scheduled
late, by tens of milliseconds. :class:`DelayAllowance` estimates that delay from what the
publishing process can measure itself, and the commander plans that much further ahead, up to
``max_plan_ahead`` (:attr:`~pic_ros.motion.commander.ArmCommander.delay_allowance`):

- **its own lateness**: how late its timer fired after the previous step (the scheduler's delay
  on this host, which the receiving process meets too: counted twice, once per end) plus how long
  the step took from reading the clock to the last chunk published;
- **the age of joint_states** on arrival (the controller's stamp against this process's clock):
  the way back, over the same transport and executors, and any offset between the two clocks.

The allowance is the largest of these over the last :data:`DELAY_MEMORY` seconds: it rises at
once with a burst of load and falls back a few seconds after it ends. Everything is in seconds on
the caller's clock (the trajectory publisher's: sim time in replays, so that a test driving it
gets the same plans every run).
"""

from __future__ import annotations

from collections import deque
import math
from typing import Final

DELAY_MEMORY: Final = 5.0
"""How long a measured delay counts for the allowance [s]."""

SCHEDULING_ENDS: Final = 2.0
"""Ends of the path a chunk takes that are scheduled like this process: this one, the receiver."""


class DelayAllowance:
    """
    The delay a streamed trajectory may meet on its way to the controller, from what is measured.

    :param memory: How long a measurement counts [s] (:data:`DELAY_MEMORY`).
    """

    def __init__(self, memory: float = DELAY_MEMORY) -> None:
        if not memory > 0.0:
            raise ValueError(f'memory must be positive, got {memory!r}')
        self._memory = memory
        self._seen: deque[tuple[float, float]] = deque()  # (when [s], delay [s]), increasing
        self._last_tick: float | None = None
        self.largest = 0.0
        """The largest delay measured since the node started [s]."""

    def tick(self, when: float, period: float) -> float:
        """
        Take a timer step that started at ``when``; return how late it fired.

        :param when: The clock at the start of the step [s].
        :param period: The timer's period [s].
        :return: Time since the previous step beyond one period [s] (0 for the first).
        """
        late = 0.0 if self._last_tick is None else max(0.0, when - self._last_tick - period)
        self._last_tick = when
        return late

    def step(self, when: float, lateness: float, duration: float) -> None:
        """
        Record a step: how late it fired (:meth:`tick`) and how long it took to publish.

        :param when: The clock at the end of the step [s].
        :param lateness: How late the step started [s].
        :param duration: From reading the clock to the last chunk published [s].
        """
        self._add(when, SCHEDULING_ENDS * max(lateness, 0.0) + max(duration, 0.0))

    def state_age(self, when: float, age: float) -> None:
        """
        Record the age of a joint_states message on arrival (ignored when not positive).

        :param when: The clock at the arrival [s].
        :param age: This node's clock minus the message's stamp [s].
        """
        if age > 0.0 and math.isfinite(age):
            self._add(when, age)

    def allowance(self, now: float) -> float:
        """
        Return the largest delay measured in the last :data:`DELAY_MEMORY` seconds [s].

        :param now: The clock now [s].
        :return: The delay, 0 when none was measured lately.
        """
        self._forget(now)
        return max((delay for _, delay in self._seen), default=0.0)

    def reset(self) -> None:
        """Forget every measurement (the clock went back: a new run)."""
        self._seen.clear()
        self._last_tick = None

    def _add(self, when: float, delay: float) -> None:
        if not math.isfinite(delay):
            return
        self._forget(when)
        while self._seen and self._seen[-1][1] <= delay:
            self._seen.pop()  # a larger, newer delay outlives it: only the maxima are kept
        self._seen.append((when, delay))
        self.largest = max(self.largest, delay)

    def _forget(self, now: float) -> None:
        while self._seen and self._seen[0][0] < now - self._memory:
            self._seen.popleft()
