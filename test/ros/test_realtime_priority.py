"""Every pipeline node puts its process under its ``realtime_priority`` when asked."""

from __future__ import annotations

from typing import Any

from pic_ros.realtime import Scheduling, SchedulingOutcome
from pic_ros.ros import parameters
from pic_ros.ros.base_follower_node import BaseFollowerNode
from pic_ros.ros.skeleton_node import SkeletonNode
from pic_ros.ros.solver_node import SolverNode
from pic_ros.ros.trajectory_publisher_node import TrajectoryPublisherNode
import pytest

NODES = [
    (SkeletonNode, {'source': 'azure_kinect'}),
    (SolverNode, {'robot': 'baxter'}),
    (TrajectoryPublisherNode, {'robot': 'baxter'}),
    (BaseFollowerNode, {}),
]


@pytest.mark.parametrize(('node_class', 'values'), NODES, ids=lambda item: getattr(
    item, '__name__', ''))
def test_a_node_asks_for_its_realtime_priority_and_runs_on_when_refused(
    make_node: Any, monkeypatch: pytest.MonkeyPatch, node_class: Any, values: dict[str, Any]
) -> None:
    """
    The node asks for the priority once, while it starts; a refusal leaves it running.

    The kernel is not asked here (the test process must keep the default scheduling): the
    request is recorded and refused as a user without the right would be.
    """
    asked: list[int] = []

    def refuse(priority: int) -> Scheduling:
        asked.append(priority)
        return Scheduling(SchedulingOutcome.REFUSED, priority, reason='no right (test)')

    monkeypatch.setattr(parameters, 'use_fifo', refuse)
    node = make_node(node_class, {**values, 'realtime_priority': 50})
    assert asked == [50]
    assert node.scheduling.outcome is SchedulingOutcome.REFUSED
    assert node.get_parameter('realtime_priority').value == 50


@pytest.mark.parametrize(('node_class', 'values'), NODES[:1], ids=['SkeletonNode'])
def test_by_default_a_node_keeps_the_default_scheduling(
    make_node: Any, node_class: Any, values: dict[str, Any]
) -> None:
    """realtime_priority 0: nothing is asked of the kernel."""
    node = make_node(node_class, values)
    assert node.scheduling.outcome is SchedulingOutcome.OFF
