"""
One robot imitating one person: a correspondence and a solver per arm, frame after frame.

:class:`RobotImitator` is what the solver node and ``evaluate`` share: it takes a body-frame
skeleton, places the driving human arm on each robot arm (:mod:`pic_ros.correspondence`) and
solves it with the configured solver (:mod:`pic_ros.solvers`), keeping each arm's warm start.

Hand offsets (:meth:`RobotImitator.step`): an input such as the admittance controller
(:mod:`pic_ros.motion.admittance`) may shift an arm's end-effector (wrist landmark) target by an
offset in the robot base frame [m]. It is honoured where the wrist target is a place: the
``position`` correspondence's targets (:attr:`~pic_ros.correspondence.TargetKind.POSITION`) and
the whole-body solver's end-effector task. A shape-only solve (the ``direction``
correspondence with an arm solver) has no wrist place to shift, so a non-zero offset there is
refused (:class:`~pic_ros.exceptions.ConfigError`).

Whole-body imitation (``whole_body``, :data:`WHOLE_BODY`): the arms that ride on the robot's torso
(robot file ``torso``) are solved with the torso by the prioritized inverse kinematics of
:mod:`pic_ros.solvers.prioritized` (joint limits, torso, end effector, elbow), the torso lift
following the person's crouch (:mod:`pic_ros.correspondence.torso`, fed the chest height with
:meth:`RobotImitator.set_chest_height`). The targets ride on the torso: the correspondence's
targets, anchored at the neutral shoulder, move with the lift target. Off, the torso is
commanded to its neutral lift, which the arm solvers assume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
import time
from types import MappingProxyType
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence import (
    ArmTargets,
    Correspondence,
    make_correspondence,
    MappingConfig,
    RobotArmGeometry,
    TargetKind,
)
from pic_ros.correspondence.torso import TorsoTarget
from pic_ros.exceptions import ConfigError
from pic_ros.robot.robot import Robot
from pic_ros.schema import ParameterDef
from pic_ros.skeleton import SkeletonFrame
from pic_ros.solvers import ArmSolver, ArmSolveResult, make_solver, SolverConfig
from pic_ros.solvers.avoidance import AvoidanceConfig, AvoidanceResult, SelfCollisionAvoidance
from pic_ros.solvers.prioritized import PrioritizedConfig, PrioritizedSolver, WholeBodyTargets

FloatArray = npt.NDArray[np.float64]

WHOLE_BODY: Final = ParameterDef(
    'whole_body', False,
    "Whole-body imitation: solve the arms on the robot's torso (robot file: torso) with the "
    'torso by prioritized IK (joint limits, torso, end effector, elbow), the torso lift '
    "following the person's crouch; off: the torso holds its neutral lift",
)
"""The solver node's ``whole_body`` (:class:`RobotImitator` ``whole_body``)."""


@dataclass(frozen=True)
class ArmStep:
    """
    What happened to one arm in one frame.

    :param targets: The human arm as the correspondence placed it (anchored at the robot's
        neutral shoulder landmark), robot base frame [m].
    :param result: The solver's result (joint angles inside the limits).
    :param solve_time: CPU time of the solve (this thread's), joint recovery included [s]: time
        the process was preempted does not count.
    """

    targets: ArmTargets
    result: ArmSolveResult
    solve_time: float


@dataclass(frozen=True)
class TorsoStep:
    """
    The torso in one frame of whole-body imitation.

    :param joint: The torso joint's name.
    :param value: The solved lift [m] (what the solver node commands).
    :param target: The lift target from the person's crouch [m], inside the limits.
    """

    joint: str
    value: float
    target: float


@dataclass(frozen=True)
class ImitationStep:
    """
    One frame of imitation.

    :param stamp: Skeleton capture time [s].
    :param arms: Per solved arm name; arms whose human arm was not valid are absent. Their
        joint angles are the ones to command: after the self-collision avoidance.
    :param torso: The torso, when an arm on it was solved in this frame: its solved lift with
        whole-body imitation, else its neutral lift (which the arm solvers assume).
    :param avoidance: What the self-collision and workspace avoidance did (None when no arm
        was solved).
    """

    stamp: float
    arms: Mapping[str, ArmStep]
    torso: TorsoStep | None = None
    avoidance: AvoidanceResult | None = None


class RobotImitator:
    """
    Place the person on every arm of a robot and solve it.

    :param robot: The robot.
    :param solver: Solver settings (the same solver for every arm).
    :param mapping: Mapping mode and correspondence; default the robot file's ``mapping``.
    :param arms: Names of the arms to solve, in the robot's arm order; default every arm.
    :param whole_body: Solve the arms on the torso with it (:data:`WHOLE_BODY`); the other
        arms keep ``solver``.
    :param prioritized: Stopping rules of the whole-body solve.
    :param avoidance: Self-collision and workspace avoidance settings (default: on, with the
        default margin; :mod:`pic_ros.solvers.avoidance`).
    :raises ConfigError: If an arm name is not an arm of the robot, or ``whole_body`` is asked
        of a robot without a torso.
    """

    def __init__(
        self,
        robot: Robot,
        solver: SolverConfig,
        mapping: MappingConfig | None = None,
        arms: Sequence[str] | None = None,
        whole_body: bool = False,
        prioritized: PrioritizedConfig | None = None,
        avoidance: AvoidanceConfig | None = None,
    ) -> None:
        self.robot = robot
        self.solver_config = solver
        # the robot file's mapping is checked whether or not it is used (a bad one is refused
        # by every process that loads the robot, the nodes too)
        defaults = MappingConfig.from_robot(robot.spec.mapping)
        self.mapping_config = mapping if mapping is not None else defaults
        self.whole_body = bool(WHOLE_BODY.check(whole_body))
        torso = robot.torso
        if self.whole_body and torso is None:
            raise ConfigError(
                f'whole-body imitation needs a torso; {robot.name} has none (robot file: torso)'
            )
        if arms is not None:
            unknown = sorted(set(arms) - set(robot.arms))
            if unknown:
                raise ConfigError(
                    f'arms {unknown} are not arms of {robot.name}; arms: {", ".join(robot.arms)}'
                )
        self._correspondences: dict[str, Correspondence] = {}
        self._solvers: dict[str, ArmSolver] = {}
        self._whole_body: dict[str, PrioritizedSolver] = {}
        self._torso_target: TorsoTarget | None = None
        self._chest_height: float | None = None
        self._last_stamps: dict[str, float] = {}
        self._commanded: dict[str, FloatArray] = {}
        self.avoidance = SelfCollisionAvoidance(
            robot.collision, robot.arms, robot.spec.workspace, avoidance, robot.spec.collision
        )
        for name, arm in robot.arms.items():
            if arms is not None and name not in arms:
                continue
            landmarks = arm.landmarks(arm.neutral)
            geometry = RobotArmGeometry(
                side=arm.side,
                shoulder=landmarks[1],
                upper_arm=float(np.linalg.norm(landmarks[2] - landmarks[1])),
                forearm=float(np.linalg.norm(landmarks[3] - landmarks[2])),
            )
            self._correspondences[name] = make_correspondence(self.mapping_config, geometry)
            if self.whole_body and torso is not None and name in torso.spec.arms:
                self._whole_body[name] = PrioritizedSolver(arm, torso, prioritized)
                if self._torso_target is None:
                    self._torso_target = TorsoTarget(torso, float(landmarks[1][2]))
            else:
                self._solvers[name] = make_solver(arm, solver)

    @property
    def correspondences(self) -> Mapping[str, Correspondence]:
        """Return the correspondence of each solved arm, read-only."""
        return MappingProxyType(self._correspondences)

    def q(self, arm: str) -> FloatArray:
        """
        Return an arm's current answer: what was last commanded (after the avoidance).

        :param arm: Arm name.
        :return: Joint values in the arm's joint order [rad] or [m].
        """
        commanded = self._commanded.get(arm)
        if commanded is not None:
            return commanded.copy()
        return self._solved_q(arm)

    def _solved_q(self, arm: str) -> FloatArray:
        """Return an arm's solver warm start (its own last solution, before the avoidance)."""
        if arm in self._whole_body:
            return self._whole_body[arm].q
        return self._solvers[arm].q

    @property
    def torso_value(self) -> float | None:
        """Return the torso's current lift [m]: solved when whole-body, else the neutral one."""
        torso = self.robot.torso
        if torso is None:
            return None
        for solver in self._whole_body.values():
            return solver.torso_value
        return torso.neutral

    def landmarks(self, arm: str) -> FloatArray:
        """
        Return an arm's landmarks at its current solution and the current torso lift.

        :param arm: Arm name.
        :return: Root, shoulder, elbow, wrist and tool, shape (5, 3), [m], robot base frame.
        """
        if arm in self._whole_body:
            solver = self._whole_body[arm]
            return solver.landmarks(self.q(arm), solver.torso_value)
        return self.robot.arms[arm].landmarks(self.q(arm))

    def set_chest_height(self, height: float | None) -> None:
        """
        Give the person's chest height for the next frames (whole-body imitation's torso lift).

        :param height: Chest (shoulder midpoint) height along the tracker's z axis [m]
            (:attr:`pic_ros.human.body_frame.Footprint.height`), or None when unknown (the torso
            lift target then holds).
        """
        self._chest_height = height

    def reset(
        self,
        q: Mapping[str, npt.ArrayLike] | None = None,
        person: bool = False,
        torso: float | None = None,
    ) -> None:
        """
        Reset the warm starts (and optionally what was learnt about the person).

        :param q: Warm start per arm name; arms not given go to their neutral pose.
        :param person: Also forget what the correspondences learnt (e.g. bone lengths, the
            standing chest height).
        :param torso: Warm start of the torso lift [m] (whole-body); default its neutral lift.
        """
        for name, solver in self._solvers.items():
            solver.reset(None if q is None else q.get(name))
        for name, whole in self._whole_body.items():
            whole.reset(None if q is None else q.get(name), torso)
        self._last_stamps.clear()
        self._commanded.clear()
        model = self.robot.collision
        self.avoidance.reset(
            model.vector({name: self.q(name) for name in self._correspondences}, torso)
        )
        if person:
            for correspondence in self._correspondences.values():
                correspondence.reset()
            if self._torso_target is not None:
                self._torso_target.reset()

    def adopt(self, other: RobotImitator) -> None:
        """
        Continue what another imitator of the same robot learnt about the person.

        The correspondences' estimates, the arm solvers' session state (PIC's octants), the
        chest height and, with whole-body imitation in both, the torso target's standing
        reference and window (its settings are the robot's, the same in both): a parameter
        change does not make a crouching person the new standing height.

        :param other: The imitator being replaced (after a parameter change).
        """
        for name, correspondence in self._correspondences.items():
            if name in other._correspondences:
                correspondence.adopt(other._correspondences[name])
        for name, solver in self._solvers.items():
            if name in other._solvers:
                solver.adopt(other._solvers[name])
        self._chest_height = other._chest_height
        if self._torso_target is not None and other._torso_target is not None:
            self._torso_target = other._torso_target

    def _offsets(
        self, hand_offsets: Mapping[str, FloatArray] | None
    ) -> dict[str, FloatArray]:
        """Check the hand offsets: known arms, finite 3-vectors; drop the zero ones."""
        if not hand_offsets:
            return {}
        offsets: dict[str, FloatArray] = {}
        for name, value in hand_offsets.items():
            if name not in self.robot.arms:
                raise ConfigError(
                    f'hand offset for {name!r}, which is not an arm of {self.robot.name}; '
                    f'arms: {", ".join(self.robot.arms)}'
                )
            offset = np.asarray(value, dtype=float)
            if offset.shape != (3,) or not np.all(np.isfinite(offset)):
                raise ConfigError(
                    f'hand offset of {name!r} must be a finite 3-vector [m], got {value!r}'
                )
            if np.any(offset != 0.0):
                offsets[name] = offset
        return offsets

    def step(
        self, frame: SkeletonFrame, hand_offsets: Mapping[str, FloatArray] | None = None
    ) -> ImitationStep:
        """
        Solve every arm whose driving human arm is valid in a body-frame skeleton.

        :param frame: Skeleton in the ``body`` frame.
        :param hand_offsets: Per arm name, an offset added to that arm's end-effector (wrist
            landmark) target, shape (3,), [m], robot base frame (e.g. the admittance
            controller's displacement); None or absent arms: no offset.
        :return: The per-arm targets (offsets included), results and solve times.
        :raises pic_ros.exceptions.ConfigError: If the frame is not in the body frame, or a hand
            offset names no arm, is not a finite 3-vector, or is non-zero for an arm whose
            targets have no wrist place to shift (shape-only targets without whole-body).
        """
        offsets = self._offsets(hand_offsets)
        arms: dict[str, ArmStep] = {}
        lift = None
        if self._torso_target is not None and frame.frame == 'body':
            lift = self._torso_target.update(frame.stamp, self._chest_height, frame)
        torso_solved = None
        for name, correspondence in self._correspondences.items():
            targets = correspondence.place(frame)
            if targets is None:
                continue
            offset = offsets.get(name)
            whole = self._whole_body.get(name)
            if whole is not None and lift is not None:
                start = time.thread_time()
                rise = (lift - whole.torso.neutral) * whole.torso.axis
                targets = targets.moved_to(targets.shoulder + rise)
                if offset is not None:
                    targets = targets.with_wrist_offset(offset)
                last = self._last_stamps.get(name)
                elapsed = None if last is None or frame.stamp < last else frame.stamp - last
                self._last_stamps[name] = frame.stamp
                outcome = whole.solve(
                    WholeBodyTargets(lift, targets.shoulder, targets.wrist, targets.elbow), elapsed
                )
                result = ArmSolveResult(
                    q=outcome.q, points=None, termination=outcome.termination,
                    iterations=outcome.iterations, residual=outcome.wrist_error, recovery=None,
                    octants=None,
                )
                arms[name] = ArmStep(targets, result, time.thread_time() - start)
                torso_solved = TorsoStep(whole.torso.joint, outcome.torso, lift)
                continue
            if offset is not None:
                if targets.kind is not TargetKind.POSITION:
                    raise ConfigError(
                        f'a hand offset for {name!r} needs a wrist place to shift: the position '
                        f'correspondence or whole-body imitation, not {targets.kind.value} '
                        f'targets of the {self.mapping_config.correspondence} correspondence'
                    )
                targets = targets.with_wrist_offset(offset)
            start = time.thread_time()
            result = self._solvers[name].solve(targets)
            arms[name] = ArmStep(targets, result, time.thread_time() - start)
        torso = self.robot.torso
        if torso_solved is None and torso is not None and not self._whole_body:
            if any(name in arms for name in torso.spec.arms):  # hold what the solvers assume
                torso_solved = TorsoStep(torso.joint, torso.neutral, torso.neutral)
        avoided = None
        if arms and self.avoidance.enabled:
            arms, torso_solved, avoided = self._avoid(arms, torso_solved)
        return ImitationStep(
            stamp=frame.stamp, arms=MappingProxyType(arms), torso=torso_solved, avoidance=avoided
        )

    def _avoid(
        self, arms: dict[str, ArmStep], torso: TorsoStep | None
    ) -> tuple[dict[str, ArmStep], TorsoStep | None, AvoidanceResult]:
        """
        Keep the solved arms clear of self-contact and inside the workspace, together.

        The arms and the torso returned are the configuration the avoidance answered: when it
        keeps its last answer (``held``) or catches up to the solvers' by a step, the torso's
        lift is its answer's too, not the solvers' (the arms were checked with that one).

        :param arms: The solved arms.
        :param torso: The torso the arms were solved on, or None.
        :return: The arms, the torso and what the avoidance did.
        """
        start = time.thread_time()
        model = self.robot.collision
        current = {name: step.result.q for name, step in arms.items()}
        for name in self._correspondences:
            current.setdefault(name, self.q(name))
        x = model.vector(current, None if torso is None else torso.value)
        movable = np.zeros(model.dof, dtype=bool)
        for name in arms:
            movable[model.arm_slices[name]] = True
        outcome = self.avoidance.resolve(x, movable)
        share = (time.thread_time() - start) / len(arms)
        moved_torso = False
        if torso is not None and model.torso_index is not None:
            lift = float(outcome.x[model.torso_index])
            if lift != torso.value:
                torso, moved_torso = replace(torso, value=lift), True
        moved = {}
        for name, step in arms.items():
            q = outcome.x[model.arm_slices[name]]
            self._commanded[name] = q.copy()
            whole = self._whole_body.get(name)
            if not np.array_equal(q, step.result.q) or (whole is not None and moved_torso):
                # the solver goes on from the answer kept: its next one starts near the
                # constraint, not deep inside it (the session's octants stay)
                if whole is None:
                    self._solvers[name].continue_from(q)
                else:
                    whole.reset(q, whole.torso_value if torso is None else torso.value)
                step = ArmStep(step.targets, step.result._replace(q=q), step.solve_time)
            moved[name] = ArmStep(step.targets, step.result, step.solve_time + share)
        return moved, torso, outcome
