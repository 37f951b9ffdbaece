"""
base_follower: body_pose in, cmd_vel out, off unless asked.

The node's wiring: the subscription, the timer on the node's clock, the publish policy,
parameters and diagnostics. What the commands do (the paper's law, limits, dead zones, loss) is
tested on :class:`~pic_ros.motion.base_following.BaseFollower` itself
(``test/test_base_following.py``).
"""

from __future__ import annotations

import math

from pic_ros.human.body_frame import Footprint
from pic_ros.ros.base_follower_node import BaseFollowerNode
from pic_ros.ros.conversions import footprint_to_msg
import pytest
from rclpy.parameter import Parameter
from std_msgs.msg import Bool, UInt32

START = 50.0
"""Sim time at which every test starts [s]."""

PERIOD = 0.05
"""The node's default command period (rate 20 Hz) [s]."""


@pytest.fixture
def follower(make_node, capture, sim_clock):
    """
    Return a factory: ``(node, clock, published)`` on sim time, cmd_vel captured.

    ``engaged`` (default true) hands the node trajectory_publisher's ``engaged`` true first.
    """

    def make(engaged: bool = True, **parameters):
        node = make_node(BaseFollowerNode, {'use_sim_time': True, **parameters})
        clock = sim_clock(node)
        published = capture(node, node.cmd_vel)
        clock.advance_to(START)
        if engaged:
            node.on_engaged(Bool(data=True))
        return node, clock, published

    return make


def walk(node, clock, start: float, stop: float, speed: float = 0.5, seen: bool = True) -> None:
    """Advance the clock by periods; a person facing the sensor walks toward it at ``speed``."""
    now = start
    while now < stop:
        now = round(now + PERIOD, 9)
        clock.advance_to(now)
        if seen:
            distance = 3.0 - speed * (now - START)
            node.on_body_pose(footprint_to_msg(Footprint(now, distance, 0.0, math.pi), 'tr'))


def test_off_by_default_publishes_nothing_and_says_so(follower, diagnostics):
    """follow_base false: a walking person, not one cmd_vel; the diagnostics say off."""
    node, clock, published = follower()
    walk(node, clock, START, START + 1.0)
    assert published == []
    values = diagnostics(node)[0]
    assert (values['follow_base'], values['state']) == ('False', 'off')
    assert 'off' in node._statuses()[0].message


def test_following_drives_forward_within_limits_then_stops_and_goes_quiet(
    follower, diagnostics
):
    """
    The person walks toward the sensor: the base drives forward, limited, then stops.

    Walking toward the sensor is forward for the person. Tracking lost: the base stops, one zero
    command goes out, then nothing.
    """
    node, clock, published = follower(follow_base=True, base_max_linear_velocity=0.3)
    walk(node, clock, START, START + 3.0)
    linear = [item.message.linear.x for item in published]
    assert max(linear) == pytest.approx(0.3)
    assert all(0.0 <= value <= 0.3 + 1e-9 for value in linear)
    assert all(item.message.linear.y == 0.0 for item in published)
    assert diagnostics(node)[0]['state'] == 'following'

    walk(node, clock, START + 3.0, START + 6.0, seen=False)
    last = published[-1].message
    assert (last.linear.x, last.angular.z) == (0.0, 0.0)
    count = len(published)
    walk(node, clock, START + 6.0, START + 7.0, seen=False)
    assert len(published) == count
    values = diagnostics(node)[0]
    assert values['state'] == 'lost'
    assert float(values['odometry_x_m']) > 0.5


def test_another_person_gets_a_reference_of_their_own(follower):
    """
    A new person is taken up 1.5 m to the side of where the last one stood: the base stays.

    Without the ``person`` change the follower would drive to the new person's offset from the
    last person's reference; the same count again changes nothing.
    """
    node, clock, published = follower(follow_base=True)
    node.on_person(UInt32(data=1))
    now = START
    for _ in range(20):  # the first person stands still, 3 m in front
        now = round(now + PERIOD, 9)
        clock.advance_to(now)
        node.on_body_pose(footprint_to_msg(Footprint(now, 3.0, 0.0, math.pi), 'tr'))
    assert node.follower.sessions == 1
    node.on_person(UInt32(data=1))
    node.on_person(UInt32(data=2))
    for _ in range(40):  # the next person stands still, 1.5 m to the side
        now = round(now + PERIOD, 9)
        clock.advance_to(now)
        node.on_body_pose(footprint_to_msg(Footprint(now, 3.0, 1.5, math.pi), 'tr'))
    assert node.follower.sessions == 2
    assert all(
        (item.message.linear.x, item.message.angular.z) == (0.0, 0.0) for item in published
    )


def test_turning_following_off_stops_the_base(follower):
    """follow_base set false while driving: the commands come down to zero, then nothing."""
    node, clock, published = follower(follow_base=True)
    walk(node, clock, START, START + 2.0)
    assert published[-1].message.linear.x > 0.2
    result = node.set_parameters([Parameter('follow_base', value=False)])[0]
    assert result.successful
    walk(node, clock, START + 2.0, START + 4.0)
    assert published[-1].message.linear.x == 0.0
    count = len(published)
    walk(node, clock, START + 4.0, START + 5.0)
    assert len(published) == count


def test_a_bad_limit_is_refused_with_its_reason(follower):
    """A zero speed limit: refused, naming the parameter; the old value stays."""
    node, _, _ = follower(follow_base=True)
    result = node.set_parameters([Parameter('base_max_linear_velocity', value=0.0)])[0]
    assert not result.successful
    assert 'base_max_linear_velocity' in result.reason
    assert node.follower.config.base_max_linear_velocity == 0.5


def test_stamped_publishes_twist_stamped_in_the_given_frame_on_the_node_clock(follower):
    """With ``stamped`` true: TwistStamped (frame_id, sim-time stamp) carrying the command."""
    node, clock, published = follower(follow_base=True, stamped=True, frame_id='base_link')
    walk(node, clock, START, START + 1.0)
    assert published
    for item in published:
        message = item.message
        assert type(message).__name__ == 'TwistStamped'
        assert message.header.frame_id == 'base_link'
        stamp = message.header.stamp.sec + message.header.stamp.nanosec * 1e-9
        assert stamp == pytest.approx(item.time, abs=1e-6)
    assert max(item.message.twist.linear.x for item in published) > 0.0


def test_the_base_waits_for_engaged_and_stops_when_disengaged(follower, diagnostics):
    """
    Until trajectory_publisher says engaged, a walking person moves nothing (``disengaged``).

    Engaged, the base drives; disengaged while driving, the commands come down to zero within
    the acceleration limit, then nothing. The node reads ``engaged`` latched and ``estop``.
    """
    node, clock, published = follower(engaged=False, follow_base=True)
    topics = {sub.topic_name: sub.qos_profile for sub in node.subscriptions}
    assert topics['/engaged'].durability.name == 'TRANSIENT_LOCAL'
    assert topics['/estop'].history.name == 'KEEP_ALL'
    walk(node, clock, START, START + 2.0)
    assert published == []
    values = diagnostics(node)[0]
    assert (values['state'], values['engaged_input']) == ('disengaged', 'False')

    node.on_engaged(Bool(data=True))
    walk(node, clock, START + 2.0, START + 4.0)
    assert published[-1].message.linear.x > 0.2
    node.on_engaged(Bool(data=False))
    walk(node, clock, START + 4.0, START + 6.0)

    linear = [item.message.linear.x for item in published]
    limit = node.follower.config.base_max_linear_acceleration * PERIOD
    assert all(abs(b - a) <= limit + 1e-9 for a, b in zip(linear, linear[1:]))
    assert linear[-1] == 0.0
    count = len(published)
    walk(node, clock, START + 6.0, START + 7.0)
    assert len(published) == count
    assert diagnostics(node)[0]['state'] == 'disengaged'


def test_an_estop_stops_the_base_until_the_robot_is_engaged_again(follower, diagnostics):
    """
    A true estop stops the base at once, on its own (whatever engaged last said).

    Released, the base stays stopped; only engaged true again (the stop reset, an engage)
    lets it follow, from the same reference.
    """
    node, clock, published = follower(follow_base=True)
    walk(node, clock, START, START + 2.0)
    assert published[-1].message.linear.x > 0.2

    node.on_estop(Bool(data=True))
    node.on_estop(Bool(data=False))
    walk(node, clock, START + 2.0, START + 5.0)
    assert published[-1].message.linear.x == 0.0
    values = diagnostics(node)[0]
    assert (values['state'], values['estop_latched']) == ('disengaged', 'True')

    node.on_engaged(Bool(data=False))  # reset_estop: disengaged
    node.on_engaged(Bool(data=True))  # engaged again
    walk(node, clock, START + 5.0, START + 6.0)
    assert published[-1].message.linear.x > 0.0
    assert diagnostics(node)[0]['estop_latched'] == 'False'


def test_engaged_only_false_follows_without_an_engagement(follower):
    """A base without arms to engage: engaged_only false follows whenever follow_base."""
    node, clock, published = follower(engaged=False, follow_base=True, engaged_only=False)
    walk(node, clock, START, START + 2.0)
    assert published[-1].message.linear.x > 0.2
    assert node.set_parameters([Parameter('engaged_only', value=True)])[0].successful
    walk(node, clock, START + 2.0, START + 4.0)
    assert published[-1].message.linear.x == 0.0
