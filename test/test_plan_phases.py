"""
The phases of a Ruckig plan: extrema that bound each joint's profile and are reached, switches.

Plans are made by ruckig from random states (seeded) under random limits, with and without a
target velocity, and braking plans; the compiled functions (numba) and the paths without it
must give the same floats.
"""

from __future__ import annotations

from collections.abc import Iterator
import itertools
from typing import Any

import numpy as np
from pic_ros.motion import plan_phases
import pytest

ruckig = pytest.importorskip('ruckig', reason='the plans are Ruckig plans')

DOF = 7


def _plans(count: int, seed: int = 7) -> Iterator[Any]:
    """Yield ``count`` calculated plans, position and braking ones, from random states."""
    generator = np.random.default_rng(seed)
    planner = ruckig.Ruckig(DOF)
    for index in range(count):
        item = ruckig.InputParameter(DOF)
        item.synchronization = ruckig.Synchronization.No
        velocity = generator.uniform(0.3, 3.0, DOF)
        acceleration = velocity * generator.uniform(1.0, 20.0, DOF)
        item.max_velocity = velocity.tolist()
        item.max_acceleration = acceleration.tolist()
        item.max_jerk = (acceleration * generator.uniform(2.0, 100.0, DOF)).tolist()
        item.current_position = [0.0] * DOF
        item.current_velocity = (velocity * generator.uniform(-1.0, 1.0, DOF)).tolist()
        item.current_acceleration = (acceleration * generator.uniform(-0.5, 0.5, DOF)).tolist()
        if index % 3 == 2:  # braking: the velocity interface to rest
            item.control_interface = ruckig.ControlInterface.Velocity
            item.target_velocity = [0.0] * DOF
        else:
            item.target_position = generator.uniform(-1.0, 1.0, DOF).tolist()
            speeds = velocity * generator.uniform(-0.8, 0.8, DOF) if index % 3 else 0.0 * velocity
            item.target_velocity = speeds.tolist()
        item.target_acceleration = [0.0] * DOF
        plan = ruckig.Trajectory(DOF)
        result = planner.calculate(item, plan)
        assert result in (ruckig.Result.Working, ruckig.Result.Finished)
        yield plan


def _switches_reference(plan: Any, until: float) -> list[float]:
    """Read the jerk switches straight from the profiles, in plain Python."""
    times: set[float] = set()
    for profile in plan.profiles[0]:
        brake = profile.brake
        switches = list(itertools.accumulate(brake.t))
        switches += [brake.duration + end for end in itertools.accumulate(profile.t)]
        times.update(float(t) for t in switches if 0.0 < t < until)
    return sorted(times)


def test_the_extrema_bound_the_plan_and_are_reached() -> None:
    for plan in _plans(60):
        low, high = plan_phases.extrema(plan_phases.phase_table(plan))
        durations = np.array(plan.independent_min_durations)
        for joint, duration in enumerate(durations):  # each joint over its own profile
            times = np.linspace(0.0, duration, 2001)
            positions = np.array([plan.at_time(float(t))[0][joint] for t in times])
            slack = 1e-9 * max(high[joint] - low[joint], 1.0)
            assert positions.min() >= low[joint] - slack
            assert positions.max() <= high[joint] + slack
            # reached: dense sampling comes within what the joint moves between two samples
            step = np.abs(np.diff(positions)).max(initial=0.0) + slack
            assert positions.min() - low[joint] <= step
            assert high[joint] - positions.max() <= step


def test_the_switch_times_are_the_profiles_phase_ends_each_once() -> None:
    for plan in _plans(60, seed=11):
        for until in (plan.duration, 0.5 * plan.duration, 0.01):
            table = plan_phases.phase_table(plan)
            assert plan_phases.switch_times(table, until).tolist() == _switches_reference(
                plan, until
            )


def test_compiled_and_plain_paths_give_the_same_floats() -> None:
    plan_phases.load()
    compiled_extrema, compiled_switches = plan_phases._kernels()
    if compiled_extrema is plan_phases._extrema_numpy:
        pytest.skip('numba is not installed (or PIC_ROS_JIT=0): only the plain paths run')
    for plan in _plans(90, seed=3):
        table = plan_phases.phase_table(plan)
        for mine, theirs in zip(compiled_extrema(table), plan_phases._extrema_numpy(table)):
            assert mine.tobytes() == theirs.tobytes()
        for mine, theirs in zip(compiled_extrema(table), plan_phases._extrema(table)):
            assert mine.tobytes() == theirs.tobytes()
        until = 0.7 * plan.duration
        assert (
            compiled_switches(table, until).tobytes()
            == plan_phases._switch_times(table, until).tobytes()
        )


def test_the_duration_table_gives_the_switch_times_of_the_whole_table() -> None:
    """Braking plans are read for their switches alone: the same times, to the bit."""
    for plan in _plans(60, seed=5):
        for until in (plan.duration, 0.3 * plan.duration):
            whole = plan_phases.switch_times(plan_phases.phase_table(plan), until)
            durations = plan_phases.switch_times(plan_phases.duration_table(plan), until)
            assert durations.tobytes() == whole.tobytes()
