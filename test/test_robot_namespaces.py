"""
The ``robots`` argument of ``multi_robot.launch.py``: robot types and the namespaces they run in.

Read by :func:`pic_ros.ros.launch_arguments.placed_robots` (plain Python, no ROS needed).
"""

from __future__ import annotations

from pic_ros.exceptions import ConfigError
from pic_ros.resources import shipped_robots
from pic_ros.ros.launch_arguments import placed_robots, PlacedRobot
import pytest

KNOWN = shipped_robots()


def test_a_robot_without_a_namespace_runs_in_its_own_name() -> None:
    """The existing form: ``baxter,tiago`` places each robot in ``/<robot>``, in order."""
    assert placed_robots('baxter, tiago', KNOWN) == [
        PlacedRobot('baxter', '/baxter'), PlacedRobot('tiago', '/tiago')
    ]


def test_two_robots_of_one_type_get_the_namespaces_given() -> None:
    """``baxter:left_cell,baxter:right_cell``: two Baxters, each in its namespace."""
    assert placed_robots('baxter:left_cell,baxter:/right_cell/', KNOWN) == [
        PlacedRobot('baxter', '/left_cell'), PlacedRobot('baxter', '/right_cell')
    ]


def test_both_forms_mix_and_nested_namespaces_are_accepted() -> None:
    """A plain robot beside a placed one; a namespace of several tokens."""
    assert placed_robots('yumi,baxter:lab/cell_2', KNOWN) == [
        PlacedRobot('yumi', '/yumi'), PlacedRobot('baxter', '/lab/cell_2')
    ]


def test_an_item_given_twice_counts_once() -> None:
    """``baxter,baxter`` and ``baxter,baxter:baxter`` are one Baxter."""
    assert placed_robots('baxter,baxter,baxter:baxter', KNOWN) == [
        PlacedRobot('baxter', '/baxter')
    ]


@pytest.mark.parametrize(
    'text, message',
    [
        ('baxter,foo', "'foo' is not one of"),
        ('baxter:cell,yumi:cell', r'namespace /cell is given twice \(baxter and yumi\)'),
        ('baxter,baxter:2cell', "'2cell' is not a namespace"),
        ('baxter:left cell', "'left cell' is not a namespace"),
        ('baxter:/', "'/' is not a namespace"),
        (' , ', 'robots is empty'),
    ],
)
def test_a_list_that_cannot_run_is_refused_with_the_reason(text, message) -> None:
    """Unknown robot, one namespace for two robots, a bad namespace, nothing: refused."""
    with pytest.raises(ConfigError, match=message):
        placed_robots(text, KNOWN)
