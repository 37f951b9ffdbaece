"""
Every compiled kernel ready before a node needs it (``python -m pic_ros compile``).

The collision checks, the self-collision avoidance, the joint recovery and the motion planning
run loops compiled by numba (:func:`pic_ros.robot.kinematics.compiled.compiler`). numba compiles
them in the first process that runs them after an install and keeps them in its cache beside
the sources, where every later process reads them. On a busy 2-core robot PC that first compile
takes tens of seconds, and the node that pays it subscribes only afterwards.

:func:`prepare_kernels` builds, for each robot, what the solver node and the trajectory
publisher build at their start -- the imitation with its avoidance and joint recovery, the
collision guard, a commander and its continuity check per commanded group -- so that every
kernel is compiled once, in one process, ahead of the launch: after ``colcon build``, in a
container image, or before tests that start nodes in processes of their own. The analytic
solver's solve (``solver: analytic``) is compiled too, whichever solver the robot files name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import time

from pic_ros.imitation import RobotImitator
from pic_ros.motion import plan_phases
from pic_ros.motion.commander import ArmCommander, CommanderConfig
from pic_ros.motion.guard import CollisionGuard
from pic_ros.motion.limiter import MotionLimits
from pic_ros.motion.streaming import ContinuityMonitor
from pic_ros.resources import shipped_robots
from pic_ros.robot.kinematics.compiled import compiled_in_process, compiler
from pic_ros.robot.robot import load_robot
from pic_ros.solvers import analytic_kernel, SolverConfig
from pic_ros.solvers.avoidance import SELF_COLLISION_MARGIN


@dataclass(frozen=True)
class KernelReport:
    """
    What :func:`prepare_kernels` did.

    :param robots: The robots whose start-up objects were built, in order.
    :param compiled: Kernel signatures compiled in this call (0: every one was read from
        numba's cache or was already loaded in this process).
    :param available: Whether the kernels are compiled at all (False: numba is not installed
        or ``PIC_ROS_JIT`` is ``0``, and the numpy paths run instead).
    :param seconds: Wall time of the call [s].
    """

    robots: tuple[str, ...]
    compiled: int
    available: bool
    seconds: float

    def summary(self) -> str:
        """
        Say what was done, in one line.

        :return: The line, naming the robots.
        """
        robots = ', '.join(self.robots)
        if not self.available:
            return (
                f'no compiled kernels for {robots}: numba is not installed or PIC_ROS_JIT=0 '
                '(the numpy paths run instead)'
            )
        if self.compiled:
            return (
                f'compiled {self.compiled} kernel signatures for {robots} in '
                f"{self.seconds:.1f} s; every later process reads them from numba's cache"
            )
        return f"every kernel for {robots} was already in numba's cache ({self.seconds:.1f} s)"


def prepare_kernels(robots: Sequence[str] = ()) -> KernelReport:
    """
    Compile every kernel the nodes run for some robots (or read them from numba's cache).

    Builds, per robot, the solver node's imitation (default solver, avoidance on) and the
    trajectory publisher's collision guard (default margin), commanders and continuity checks,
    and discards them: what stays is numba's cache.

    :param robots: Robot names or robot file paths (:func:`~pic_ros.robot.load_robot`); empty:
        every shipped robot.
    :return: What was compiled, for which robots, in how long.
    :raises ConfigError: If a robot cannot be loaded.
    """
    names = tuple(robots) if robots else shipped_robots()
    began, before = time.monotonic(), compiled_in_process()
    plan_phases.load()  # the trajectory publisher's own call; the rest load as they are built
    analytic_kernel.load()  # built only when the solver parameter names it
    for name in names:
        robot = load_robot(name)
        RobotImitator(robot, SolverConfig())
        CollisionGuard(robot, float(SELF_COLLISION_MARGIN.default))
        for group in robot.groups.values():
            ArmCommander(group, CommanderConfig())
            ContinuityMonitor(MotionLimits.from_arm(group))
    return KernelReport(
        robots=names,
        compiled=compiled_in_process() - before,
        available=compiler() is not None,
        seconds=time.monotonic() - began,
    )


__all__ = ['KernelReport', 'prepare_kernels']
