"""
The feasibility bound: perfect-foresight tracking within the limits the commands are planned with.

The joint-level tests use made-up limits and targets; the robot-level test runs a synthetic take
through the offline commander path (:mod:`pic_ros_tools.streamed`) and compares. No timing.
"""

from __future__ import annotations

import math

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion.commander import CommanderConfig
from pic_ros.motion.limiter import MotionLimits
from pic_ros.robot import load_robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import synthetic_suite
from pic_ros_tools.evaluation import run_imitation
from pic_ros_tools.feasibility import (
    bound_ratios,
    feasibility_bound,
    feasible_trajectory,
    FeasibleTrajectory,
)
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.streamed import stream_trace, streamed_metrics
import pytest

LIMITS = MotionLimits(
    lower=np.array([-2.0, -1.0, -math.inf]),
    upper=np.array([2.0, 1.0, math.inf]),
    velocity=np.array([1.0, 1.5, 2.0]),
    acceleration=np.array([4.0, 6.0, 8.0]),
    jerk=np.array([40.0, 60.0, 80.0]),
)
"""Made-up limits: two bounded joints and a continuous one."""

TIMES = np.arange(0.0, 6.0, 1.0 / 30.0)
"""Frame times of the made-up takes, 30 Hz [s]."""


def _slow() -> np.ndarray:
    """Targets well within the limits."""
    return np.column_stack([
        0.3 * np.sin(0.5 * TIMES), 0.2 * np.cos(0.7 * TIMES), 0.5 * np.sin(0.3 * TIMES)
    ])


def _fast() -> np.ndarray:
    """Targets far beyond the limits: a fast sine, a step onto a limit, a faster sine."""
    return np.column_stack([
        1.5 * np.sin(4.0 * TIMES), np.where(TIMES > 2.0, 1.0, -1.0), 3.0 * np.sin(6.0 * TIMES)
    ])


def _assert_within(run: FeasibleTrajectory, limits: MotionLimits) -> None:
    """Every sample within position, velocity, acceleration and jerk limits (up to rounding)."""
    assert limits.jerk is not None
    assert np.all(run.position >= limits.lower - 1e-9)
    assert np.all(run.position <= limits.upper + 1e-9)
    assert np.all(np.abs(run.velocity) <= limits.velocity * (1.0 + 1e-9))
    assert np.all(np.abs(run.acceleration) <= limits.acceleration * (1.0 + 1e-9))
    change = np.abs(np.diff(run.acceleration, axis=0))
    assert np.all(change <= limits.jerk * np.diff(run.times)[:, None] * (1.0 + 1e-6) + 1e-9)
    assert run.guarded == 0


@pytest.mark.parametrize('horizon', [0.0, 0.1, 0.5])
@pytest.mark.parametrize('targets', [_slow, _fast])
def test_the_bound_respects_every_limit_on_every_sample(targets, horizon: float) -> None:
    """Position, velocity, acceleration and jerk stay within the limits, whatever the targets."""
    run = feasible_trajectory(TIMES, targets(), LIMITS, horizon)
    _assert_within(run, LIMITS)
    assert run.frame_q.shape == (TIMES.size, 3)


def test_a_slow_take_is_tracked_almost_exactly() -> None:
    """Targets the limits can follow are followed to a few mrad on every frame."""
    targets = _slow()
    run = feasible_trajectory(TIMES, targets, LIMITS, 0.1)
    assert np.max(np.abs(run.frame_q - targets)) < 3e-3


def test_a_fast_take_lags_within_the_limits_and_settles_on_a_held_target() -> None:
    """A step and fast sines are followed late and smaller; the step's target is reached."""
    targets = _fast()
    run = feasible_trajectory(TIMES, targets, LIMITS, 0.1)
    _assert_within(run, LIMITS)
    after_step = (TIMES > 2.0) & (TIMES < 2.2)
    assert np.all(run.frame_q[after_step, 1] < 1.0 - 0.05)  # lags behind the step
    assert run.frame_q[-1, 1] == pytest.approx(1.0, abs=1e-6)  # reached, on the limit
    assert np.ptp(run.frame_q[TIMES > 1.0, 0]) < np.ptp(targets[:, 0])  # a smaller swing
    assert np.mean(np.abs(run.frame_q[:, 0] - targets[:, 0])) > 0.1


def test_foresight_starts_a_step_before_it_comes() -> None:
    """With a horizon the joint leaves before the step; without, only after it."""
    targets = np.column_stack([np.where(TIMES > 2.0, 0.5, 0.0)] * 3)
    before = TIMES < 2.0
    ahead = feasible_trajectory(TIMES, targets, LIMITS, 0.3)
    late = feasible_trajectory(TIMES, targets, LIMITS, 0.0)
    assert np.max(ahead.frame_q[before, 0]) > 0.01
    assert np.max(np.abs(late.frame_q[before])) < 1e-6


def test_malformed_targets_are_refused() -> None:
    """Shapes, times and horizon are checked; the limits must have jerk limits."""
    with pytest.raises(ConfigError):
        feasible_trajectory(TIMES, _slow()[:, :2], LIMITS, 0.1)
    with pytest.raises(ConfigError):
        feasible_trajectory(TIMES[::-1], _slow(), LIMITS, 0.1)
    with pytest.raises(ConfigError):
        feasible_trajectory(TIMES, _slow(), LIMITS, -0.1)
    no_jerk = MotionLimits(LIMITS.lower, LIMITS.upper, LIMITS.velocity, LIMITS.acceleration)
    with pytest.raises(ConfigError):
        feasible_trajectory(TIMES, _slow(), no_jerk, 0.1)


def test_the_ratios_compare_the_live_figures_with_the_bound() -> None:
    """Pacc as a ratio and a difference, elbow error as a ratio; NaN without a figure."""
    ratios = bound_ratios(
        {'pacc_paper': 0.9, 'elbow_mae_rad': 0.2},
        {'bound_pacc': 1.0, 'bound_elbow_mae_rad': 0.1},
    )
    assert ratios['pacc_live_over_bound'] == pytest.approx(0.9)
    assert ratios['pacc_live_minus_bound'] == pytest.approx(-0.1)
    assert ratios['elbow_mae_live_over_bound'] == pytest.approx(2.0)
    assert math.isnan(bound_ratios({}, {'bound_pacc': 0.0})['pacc_live_over_bound'])


@pytest.fixture(scope='module')
def synthetic_take() -> Demonstration:
    """Return the first take of the synthetic suite."""
    return synthetic_suite(1)[0]


def test_the_bound_is_never_worse_than_the_commander_path(synthetic_take) -> None:
    """On a synthetic take the bound scores at least the streamed commands, within the limits."""
    robot = load_robot('baxter')
    solver = SolverConfig()
    trace = run_imitation(robot, synthetic_take, solver)
    runs = stream_trace(robot, trace, CommanderConfig())
    live = streamed_metrics(robot, synthetic_take, solver, trace, runs)['live']
    bound = feasibility_bound(robot, synthetic_take, solver, trace)
    assert bound['guarded'] == 0
    assert bound['bound_pacc'] >= live['pacc_paper']
    assert bound['bound_elbow_mae_rad'] <= live['elbow_mae_rad']
    ratios = bound_ratios(live, bound)
    assert ratios['elbow_mae_live_over_bound'] >= 1.0
    assert ratios['pacc_live_minus_bound'] <= 0.0
