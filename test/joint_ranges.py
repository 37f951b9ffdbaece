"""Hypothesis draws of joint position ranges, shared by the motion generator and limiter tests."""

from __future__ import annotations

import math

from hypothesis import strategies as st


def position_ranges(draw: st.DrawFn, dof: int) -> tuple[list[float], list[float]]:
    """
    Draw position limits for ``dof`` joints: mostly ranges, some pinned, some continuous.

    :param draw: Hypothesis' draw function of a composite strategy.
    :param dof: Number of joints.
    :return: ``(lower, upper)`` [rad]; a continuous joint is (-inf, inf), a pinned one has
        lower == upper, a range is 1 mrad to 5 rad wide, starting in [-4, 1].
    """
    lower, upper = [], []
    for _ in range(dof):
        kind = draw(st.sampled_from(('range', 'range', 'range', 'pinned', 'continuous')))
        low = draw(st.floats(-4.0, 1.0))
        if kind == 'continuous':
            lower.append(-math.inf)
            upper.append(math.inf)
        else:
            lower.append(low)
            upper.append(low if kind == 'pinned' else low + draw(st.floats(1e-3, 5.0)))
    return lower, upper
