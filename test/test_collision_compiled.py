"""The compiled collision check measures what the numpy check measures, and is optional."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.robot.kinematics import compiled
import pytest

ROBOTS = shipped_robots()

needs_numba = pytest.mark.skipif(
    not compiled.load(),
    reason='numba is not installed (or PIC_ROS_JIT=0): the check runs on numpy only',
)

# exact below: every pair, none, the margin band the avoidance and the guard use
EXACT_WITHIN = (math.inf, -1.0, 0.05, 0.2)


def configurations(model, rng, count):
    """Return the neutral pose, then random configurations inside the limits."""
    lower = np.where(np.isfinite(model.lower), model.lower, -math.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, math.pi)
    return [model.neutral] + [rng.uniform(lower, upper) for _ in range(count)]


@needs_numba
@pytest.mark.parametrize('robot_name', ROBOTS)
def test_the_compiled_check_measures_what_the_numpy_check_measures(robot_name, rng):
    model = load_robot(robot_name).collision
    for x in configurations(model, rng, 60):
        for exact_within in EXACT_WITHIN:
            fast = model.check(x, exact_within)
            slow = model.check_numpy(x, exact_within)
            np.testing.assert_allclose(fast.distances, slow.distances, rtol=0.0, atol=1e-12)
            for mine, theirs in zip(fast.anchors, slow.anchors):
                np.testing.assert_allclose(mine, theirs, rtol=0.0, atol=1e-12)
            np.testing.assert_allclose(fast.axes, slow.axes, rtol=0.0, atol=1e-12)
            np.testing.assert_allclose(fast.origins, slow.origins, rtol=0.0, atol=1e-12)
            exact = slow.distances < exact_within
            if exact.any():  # the ends are placed, and the exact pairs' closest points
                np.testing.assert_allclose(fast.ends, slow.ends, rtol=0.0, atol=1e-12)
                measured = np.flatnonzero(exact)
                np.testing.assert_allclose(
                    fast.points[:, measured], slow.points[:, measured], rtol=0.0, atol=1e-12
                )


@needs_numba
def test_the_compiled_check_gives_the_same_answer_for_the_same_configuration(rng):
    model = load_robot(ROBOTS[0]).collision
    x = configurations(model, rng, 1)[1]
    first, second = model.check(x, 0.1), model.check(x, 0.1)
    assert np.array_equal(first.distances, second.distances)
    measured = np.flatnonzero(first.distances < 0.1)  # the pairs with closest points
    assert np.array_equal(first.points[:, measured], second.points[:, measured])


def test_a_process_that_builds_no_collision_model_does_not_import_numba():
    answer = subprocess.run(
        [sys.executable, '-c',
         'import sys; import pic_ros.ros.skeleton_node; print("numba" in sys.modules)'],
        capture_output=True, text=True, timeout=120, check=True,
    )
    assert answer.stdout.strip() == 'False'


def test_without_the_compiled_path_the_check_runs_on_numpy(monkeypatch, rng):
    model = load_robot(ROBOTS[0]).collision
    x = configurations(model, rng, 1)[1]
    expected = model.check_numpy(x, 0.1)
    monkeypatch.setattr(compiled, 'collision_check', None)
    measured = model.check(x, 0.1)
    assert np.array_equal(measured.distances, expected.distances)


def test_the_environment_variable_turns_the_compiled_path_off():
    environment = dict(os.environ, **{compiled.JIT_VARIABLE: '0'})
    answer = subprocess.run(
        [sys.executable, '-c',
         'from pic_ros.robot.kinematics import compiled; compiled.load(); '
         'print(compiled.collision_check)'],
        env=environment, capture_output=True, text=True, timeout=120, check=True,
    )
    assert answer.stdout.strip() == 'None'


START_AND_RESOLVE = """
import numpy as np
from pic_ros.robot import load_robot
from pic_ros.robot.kinematics import compiled
from pic_ros.solvers.avoidance import SelfCollisionAvoidance
robot = load_robot({robot!r})
avoidance = SelfCollisionAvoidance(
    robot.collision, robot.arms, robot.spec.workspace, None, robot.spec.collision
)
built = compiled.compiled_in_process()
model = robot.collision
rng = np.random.default_rng(0)
for _ in range(20):
    avoidance.resolve(rng.uniform(np.maximum(model.lower, -3.0), np.minimum(model.upper, 3.0)))
print(built, compiled.compiled_in_process())
"""


@needs_numba
def test_a_start_compiles_every_kernel_a_frame_needs_and_the_next_start_reads_them_cached(
    tmp_path,
):
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    script = START_AND_RESOLVE.format(robot=ROBOTS[-1])

    def start() -> list[int]:
        answer = subprocess.run(
            [sys.executable, '-c', script], env=environment, capture_output=True, text=True,
            timeout=600, check=True,
        )
        return [int(value) for value in answer.stdout.split()]

    built, after_frames = start()
    assert built > 0 and after_frames == built  # compiled at the start, none in the frames
    assert start() == [0, 0]  # every kernel from the cache
