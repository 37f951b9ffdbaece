"""
Solvers: FABRIK, PIC and PICs(η) with joint recovery, and the analytic closed form.

FABRIK, PIC and PICs(η) solve the robot point chain and recover the joints on the URDF chain;
the analytic solver computes the joint angles in closed form (:mod:`pic_ros.solvers.analytic`).

Importing this package registers the built-in solvers; :func:`make_solver` creates one by name.
Plug-in solvers come from other packages (:mod:`pic_ros.plugins`).
"""

from pic_ros.solvers import analytic  # noqa: F401,I001 - registers analytic.
from pic_ros.solvers import point_imitation  # noqa: F401 - registers fabrik, pic, pics.
from pic_ros.solvers.base import (
    ArmSolver,
    make_solver,
    register_solver,
    solver_names,
    SolverConfig,
    unregister_solver,
)
from pic_ros.solvers.iteration import IterationConfig, OctantConstraints
from pic_ros.solvers.recovery import RecoveryConfig
from pic_ros.solvers.result import ArmSolveResult, PointSolveResult, RecoveryResult, Termination

__all__ = [
    'ArmSolveResult',
    'ArmSolver',
    'IterationConfig',
    'OctantConstraints',
    'PointSolveResult',
    'RecoveryConfig',
    'RecoveryResult',
    'SolverConfig',
    'Termination',
    'make_solver',
    'register_solver',
    'solver_names',
    'unregister_solver',
]
