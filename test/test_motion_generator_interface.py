"""The one motion-generator interface: both generators are built by name and used alike."""

from __future__ import annotations

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion import make_motion_generator, MotionGenerator, MotionLimits
from pic_ros.motion.motion_generator import MOTION_GENERATORS
from pic_ros.robot import load_robot
import pytest


@pytest.fixture(scope='module')
def limits() -> MotionLimits:
    """Return the limits of Baxter's left arm (with its jerk limits)."""
    return MotionLimits.from_arm(load_robot('baxter').arms['left'])


@pytest.mark.parametrize('name', MOTION_GENERATORS)
def test_every_generator_starts_at_rest_inside_the_limits(
    limits: MotionLimits, name: str
) -> None:
    """A generator built by name starts at the position given, clamped, with zero velocity."""
    outside = limits.upper + 1.0
    generator: MotionGenerator = make_motion_generator(name, limits, outside)
    np.testing.assert_array_equal(generator.position, limits.clamp(outside))
    assert not np.any(generator.velocity != 0.0)
    assert generator.limits is limits


@pytest.mark.parametrize('name', MOTION_GENERATORS)
def test_every_generator_steps_towards_a_target_within_the_limits(
    limits: MotionLimits, name: str
) -> None:
    """Reset with a state, then stepped towards a far target: positions and speeds stay bounded."""
    start = 0.5 * (limits.lower + limits.upper)
    generator = make_motion_generator(name, limits, start)
    generator.reset(start, 0.5 * limits.velocity, np.zeros(limits.dof))
    for _ in range(100):
        command = generator.step(limits.upper, 0.02)
        assert np.all(command.position >= limits.lower)
        assert np.all(command.position <= limits.upper)
        assert np.all(np.abs(command.velocity) <= limits.velocity * (1.0 + 1e-9))
    assert np.all(generator.position > start)


def test_only_the_jerk_limited_generator_plans_ahead_and_keeps_an_acceleration(
    limits: MotionLimits,
) -> None:
    """The ruckig plan is sampled ahead; the limiter's command is its state, without one."""
    start = 0.5 * (limits.lower + limits.upper)
    ruckig = make_motion_generator('ruckig', limits, start)
    limiter = make_motion_generator('limiter', limits, start)
    assert ruckig.plans_ahead and not limiter.plans_ahead
    assert ruckig.acceleration is not None and limiter.acceleration is None


def test_an_unknown_generator_name_is_refused(limits: MotionLimits) -> None:
    """Only the names of ``motion_generator``'s choices build a generator."""
    with pytest.raises(ConfigError, match='motion_generator'):
        make_motion_generator('servo', limits, np.zeros(limits.dof))
