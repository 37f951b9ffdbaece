"""
The plug-ins of ``docs/recipes.md``: a solver and a tracker that pic_ros does not ship.

- ``recovery_only``: no point chain; the joint recovery is given the mapped human arm directly.
- ``json_udp``: a tracker that sends one JSON object per UDP datagram,
  ``{"stamp": s, "bodies": {"<id>": [[x, y, z] x 12]}}``, joints in
  :class:`~pic_ros.skeleton.HumanJoint` order, already in the ``tracker`` frame [m].

Importing this module registers both; a package makes them available to every process with an
entry point of the group ``pic_ros.plugins`` that names this module.
"""

from __future__ import annotations

from collections.abc import Mapping
import json
from typing import Any

import numpy as np
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.robot.arm import ArmModel
from pic_ros.skeleton import BODY_JOINT_COUNT, JOINT_COUNT, make_frame
from pic_ros.solvers import ArmSolver, ArmSolveResult, register_solver, SolverConfig, Termination
from pic_ros.solvers.recovery import JointRecovery, RecoveryGoal
from pic_ros.trackers import register_tracker, TrackerReading, TrackerSource, Transport


@register_solver('recovery_only')
class RecoveryOnlySolver(ArmSolver):
    """Hand the mapped human arm straight to the joint recovery (no point solver)."""

    def __init__(self, arm: ArmModel, config: SolverConfig) -> None:
        super().__init__(arm, config)
        self._recovery = JointRecovery(arm, config.recovery)

    def _solve(self, targets: ArmTargets, q_previous: np.ndarray) -> ArmSolveResult:
        goal = RecoveryGoal.from_points(
            targets.kind, tuple(targets.shoulder), tuple(targets.elbow), tuple(targets.wrist)
        )
        recovery = self._recovery.recover(q_previous, goal)
        return ArmSolveResult(
            q=recovery.q,
            points=self.arm.landmarks(recovery.q),
            termination=Termination.CONVERGED,
            iterations=0,
            residual=0.0,
            recovery=recovery,
            octants=None,
        )


class JsonUdpTracker(TrackerSource):
    """One JSON object per datagram: every body's 12 joints in the tracker frame."""

    transport = Transport.UDP

    def __init__(self) -> None:
        super().__init__('json_udp')
        self.unreadable = 0

    def decode(self, message: Any, receive_time: float) -> TrackerReading | None:
        """Read one datagram; an unreadable one is counted and gives None."""
        try:
            data = json.loads(bytes(message))
            stamp = float(data['stamp'])
            joints = {
                int(body): np.array(rows, dtype=float) for body, rows in data['bodies'].items()
            }
        except (ValueError, KeyError, TypeError, AttributeError):
            self.unreadable += 1
            return None
        shapes = ((JOINT_COUNT, 3), (BODY_JOINT_COUNT, 3))  # all rows, or the body rows only
        if any(rows.shape not in shapes for rows in joints.values()):
            self.unreadable += 1
            return None
        bodies = {body: make_frame(stamp, rows) for body, rows in joints.items()}
        return TrackerReading(stamp, bodies)

    def status(self) -> dict[str, int | float | str]:
        """Return the count of unreadable datagrams."""
        return {'json_unreadable': self.unreadable}


def _make_json_udp(options: Mapping[str, Any]) -> TrackerSource:
    del options  # no options of its own
    return JsonUdpTracker()


register_tracker('json_udp', _make_json_udp)
