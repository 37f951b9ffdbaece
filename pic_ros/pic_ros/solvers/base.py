"""
The solver interface, its configuration and the registry of solvers by name.

Every solver takes, per arm and per frame, the mapped human shoulder / elbow / wrist
(:class:`~pic_ros.correspondence.targets.ArmTargets`, robot base frame) and returns joint angles
inside the URDF position limits with a result record
(:class:`~pic_ros.solvers.result.ArmSolveResult`). A solver object holds its arm's warm start.
Adding a solver means adding a module with an :class:`ArmSolver` subclass decorated with
:func:`register_solver`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
import math
from typing import Any, Final, TypeVar

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence.targets import ArmTargets
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.registry import Registry
from pic_ros.robot.arm import ArmModel
from pic_ros.schema import ParameterDef
from pic_ros.solvers.iteration import IterationConfig, MAX_ITERATIONS, TOLERANCE
from pic_ros.solvers.octants import check_eta
from pic_ros.solvers.recovery import RecoveryConfig
from pic_ros.solvers.result import ArmSolveResult

FloatArray = npt.NDArray[np.float64]


SOLVER: Final = ParameterDef(
    'solver', 'pic', 'Arm solver: fabrik, pic, pics on the point chain, analytic in closed form '
    '(plug-ins add theirs)',
    choices=lambda: solver_names(),
)
"""The solver node's ``solver``: a registered solver name (:attr:`SolverConfig.name`)."""

ETA: Final = ParameterDef(
    'eta', 1, 'PICs softening factor η (Hamming radius of the accepted octants)', low=1, high=3
)
"""The solver node's ``eta`` (:attr:`SolverConfig.eta`; 0 is PIC, internally)."""

OCTANT_HYSTERESIS: Final = ParameterDef(
    'octant_hysteresis', 0.1,
    'PIC/PICs: how far (unit-direction component) a human bone must cross a coordinate plane '
    "before its octant changes; also the octants' membership slack",
    low=0.0, high=0.5,
)
"""The solver node's ``octant_hysteresis`` (:attr:`SolverConfig.octant_hysteresis`)."""

SOLVER_PARAMETERS: Final = (SOLVER, ETA, MAX_ITERATIONS, TOLERANCE, OCTANT_HYSTERESIS)
"""Everything :meth:`SolverConfig.from_parameters` reads."""


@dataclass(frozen=True)
class SolverConfig:
    """
    Which solver to run and its settings.

    :param name: Registered solver name (``fabrik``, ``pic``, ``pics``, ``analytic``).
    :param eta: PICs softening factor η, 1..3 for ``pics`` (ignored otherwise).
    :param iteration: Stopping rules of the backward-forward loop.
    :param recovery: Settings of the joint-angle recovery.
    :param octant_hysteresis: PIC/PICs: a human bone must cross a coordinate plane by this much
        (unit-direction component, 0.1 is about 6 degrees) before its octant changes; 0 disables.
    """

    name: str = SOLVER.default
    eta: int = ETA.default
    iteration: IterationConfig = field(default_factory=IterationConfig)
    recovery: RecoveryConfig = field(default_factory=RecoveryConfig)
    octant_hysteresis: float = OCTANT_HYSTERESIS.default

    def __post_init__(self) -> None:
        SOLVERS.get(self.name)  # unknown: the message lists the registered names
        check_eta(self.eta)
        OCTANT_HYSTERESIS.check(self.octant_hysteresis)
        if self.name == 'pics' and self.eta == 0:
            raise ConfigError('pics needs eta in 1..3 (eta 0 is pic)')

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> SolverConfig:
        """
        Build the settings from parameter values (:data:`SOLVER_PARAMETERS`).

        :param values: ``solver``, ``eta``, ``max_iterations``, ``tolerance`` and
            ``octant_hysteresis`` (missing ones take their defaults).
        :return: The settings (default joint recovery).
        :raises ConfigError: If a value is refused.
        """
        given = {item.name: item.check(values.get(item.name, item.default))
                 for item in SOLVER_PARAMETERS}
        return cls(
            name=given['solver'],
            eta=given['eta'],
            iteration=IterationConfig(
                max_iterations=given['max_iterations'], tolerance=given['tolerance']
            ),
            octant_hysteresis=given['octant_hysteresis'],
        )

    @property
    def label(self) -> str:
        """Short label for tables, e.g. ``PICs(η=2)``."""
        if self.name == 'pics':
            return f'PICs(η={self.eta})'
        return {'fabrik': 'FABRIK', 'pic': 'PIC'}.get(self.name, self.name)


class ArmSolver(abc.ABC):
    """
    Solve one arm frame after frame, keeping the warm start.

    :param arm: The arm.
    :param config: Solver settings.
    """

    def __init__(self, arm: ArmModel, config: SolverConfig) -> None:
        self.arm = arm
        self.config = config
        self._q = arm.neutral.copy()

    @property
    def q(self) -> FloatArray:
        """Return the current warm start (the last solution), arm joint order [rad] or [m]."""
        return self._q.copy()

    def reset(self, q: npt.ArrayLike | None = None) -> None:
        """
        Set the warm start.

        :param q: Arm joint values; default the neutral pose. They are clamped into the limits.
        :raises SkeletonError: If ``q`` has the wrong shape or is not finite.
        """
        if q is None:
            self._q = self.arm.neutral.copy()
            return
        values = np.asarray(q, dtype=float)
        if values.shape != (self.arm.dof,) or not np.all(np.isfinite(values)):
            raise SkeletonError(f'warm start must be {self.arm.dof} finite values')
        self._q = self.arm.clamp(values)

    def continue_from(self, q: npt.ArrayLike) -> None:
        """
        Go on from another configuration than the last answer, in the same session.

        What the self-collision avoidance calls when it moved the answer: the next frame
        starts from ``q``, and what a solver keeps between the frames of a session stays (PIC's
        octants, whose hysteresis keeps a bone lying near a coordinate plane from flipping its
        constraint with the tracker's noise). :meth:`reset` starts a new session instead. A
        solver that keeps nothing but the warm start does the same in both.

        :param q: Arm joint values, arm order [rad] or [m]; clamped into the limits.
        :raises SkeletonError: If ``q`` has the wrong shape or is not finite.
        """
        self.reset(q)

    def adopt(self, other: ArmSolver) -> None:
        """
        Go on with what another solver of the same arm kept of the session (a parameter change).

        The warm start is not taken (the caller sets it); a solver that keeps nothing else
        takes nothing.

        :param other: The solver being replaced.
        """
        del other

    def solve(self, targets: ArmTargets) -> ArmSolveResult:
        """
        Solve one frame and keep the answer as the next warm start.

        :param targets: Mapped human arm, robot base frame [m].
        :return: Joint angles inside the limits and the result record.
        :raises SkeletonError: If a target is not a finite 3-vector (the frame must be dropped).
        """
        points = (targets.shoulder, targets.elbow, targets.wrist)
        if not _finite_points(points):
            try:
                values = np.array(points, dtype=float)
            except (TypeError, ValueError) as err:
                raise SkeletonError(f'targets must be finite 3-vectors: {err}') from err
            names = ('shoulder', 'elbow', 'wrist')
            for name, value in zip(names, values):
                if value.shape != (3,) or not np.all(np.isfinite(value)):
                    raise SkeletonError(f'{name} target must be a finite 3-vector, got {value!r}')
        result = self._solve(targets, self._q)
        self._q = result.q.copy()
        return result

    @abc.abstractmethod
    def _solve(self, targets: ArmTargets, q_previous: FloatArray) -> ArmSolveResult:
        """Solve one validated frame from the warm start ``q_previous``."""


def _finite_points(points: tuple[object, ...]) -> bool:
    """
    Tell whether every target is three finite numbers (the per-frame check, in plain floats).

    A sum of finite numbers is finite unless it overflows, and NaN or infinity spreads to it.
    ``False`` sends the targets to the full check, which names what is wrong.
    """
    total = 0.0
    for point in points:
        if isinstance(point, np.ndarray):
            values = point.tolist()
        elif isinstance(point, (list, tuple)):
            values = list(point)
        else:
            return False
        try:
            if len(values) != 3:
                return False
            total += values[0] + values[1] + values[2]
        except TypeError:
            return False
    try:
        return math.isfinite(total)
    except TypeError:
        return False


SolverType = TypeVar('SolverType', bound=type[ArmSolver])
SOLVERS: Final = Registry[Callable[[ArmModel, SolverConfig], ArmSolver]]('solver')
"""The solvers by name (:mod:`pic_ros.registry`: snake_case, each name once, sorted)."""


def register_solver(*names: str) -> Callable[[SolverType], SolverType]:
    """
    Register a solver class under one or more names.

    :param names: Names users select it by (the ``solver`` parameter), ``snake_case``.
    :return: A class decorator.
    :raises ConfigError: When decorating, if a name is not ``snake_case`` or already taken.
    """

    def decorate(cls: SolverType) -> SolverType:
        for name in names:
            SOLVERS.add(name, cls)
        return cls

    return decorate


def unregister_solver(name: str) -> None:
    """
    Remove a registered solver (for plug-ins that are unloaded, and tests).

    :param name: A registered name.
    :raises ConfigError: If no solver has that name.
    """
    SOLVERS.remove(name)


def solver_names() -> tuple[str, ...]:
    """
    Return the registered solver names, sorted (plug-ins loaded first, :mod:`pic_ros.plugins`).

    :return: E.g. ``('analytic', 'fabrik', 'pic', 'pics')``.
    """
    return SOLVERS.names()


def make_solver(arm: ArmModel, config: SolverConfig) -> ArmSolver:
    """
    Create the solver a config names, for one arm.

    :param arm: The arm.
    :param config: Solver settings (its name is already validated against the registry).
    :return: A new solver with its warm start at the arm's neutral pose.
    :raises ConfigError: If the solver was unregistered since the config was made.
    """
    return SOLVERS.get(config.name)(arm, config)
