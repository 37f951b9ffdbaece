"""
``python -m pic_ros_tools evaluate --live``: score what the simulated robot really did.

Each robot x recording x setting is played through the five processes of the demo
(:func:`pic_ros_tools.ros.live_run.record_pipeline`, on sim_robot's ``/clock``) without drawing
anything, then scored by :func:`pic_ros_tools.live_evaluation.live_record` beside the offline
``evaluate`` of the same skeletons and settings, with the PIC paper's PO on the run's frames
when the recording has a task surface (a paper recording's configurations). With ``--logs``,
each run's folder there (``<robot>_<solver>_<correspondence>``, behind the recording's name
when several are played) holds its processes' logs and ``run.mcap``, the run's topics as a
rosbag2-compatible MCAP (:func:`~pic_ros_tools.ros.live_run.run_topics`), with
``run_scene.mcap`` beside it (the robot and the person as Foxglove scene entities:
:mod:`pic_ros_tools.ros.foxglove_scene`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
import itertools
from pathlib import Path
import sys
import tempfile
from typing import Any

from pic_ros.correspondence import MappingConfig
from pic_ros.human.processing import ProcessingConfig
from pic_ros.robot.robot import Robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import recording_pads, replay_path
from pic_ros_tools.convert import replayable_recording
from pic_ros_tools.evaluation import EvaluationSettings, run_imitation, score
from pic_ros_tools.live_evaluation import live_record
from pic_ros_tools.ros.live_run import MCAP_NAME, record_pipeline


@dataclass(frozen=True)
class LiveSettings:
    """
    What ``evaluate --live`` runs.

    :param robots: The robots, one run each per recording and setting.
    :param recordings: Recordings as ``evaluate`` names them (``demo``, a paper name, a path).
    :param solvers: Solver settings.
    :param mappings: Mapping and correspondence settings (command-line overrides).
    :param processing: The skeleton node's smoothing (as ``evaluate --filter`` sets it).
    :param duration: Play only the first seconds of each recording [s]; None: all of it.
    :param logs: Folder kept for the processes' logs and each run's ``run.mcap`` and
        ``run_scene.mcap``; None: a temporary one (and no MCAP).
    :param user_profile: solver_node's ``user_profile`` (``position`` correspondence).
    :param realtime_priority: Every process's ``realtime_priority`` (0: default scheduling).
    :param sim_realtime_priority: sim_robot's, when it differs (None: ``realtime_priority``).
    """

    robots: Sequence[Robot]
    recordings: Sequence[str]
    solvers: Sequence[SolverConfig]
    mappings: Sequence[MappingConfig]
    processing: ProcessingConfig
    duration: float | None = None
    logs: Path | None = None
    user_profile: str | None = None
    realtime_priority: int = 0
    sim_realtime_priority: int | None = None


def _solver_values(
    solver: SolverConfig, mapping: MappingConfig, user_profile: str | None
) -> dict[str, Any]:
    values: dict[str, Any] = {
        'solver': solver.name,
        'eta': solver.eta,
        'max_iterations': solver.iteration.max_iterations,
        'tolerance': solver.iteration.tolerance,
        'mapping': mapping.mode.value,
        'correspondence': mapping.correspondence,
    }
    if mapping.scale is not None:
        values['scale'] = mapping.scale
    if user_profile:
        values['user_profile'] = user_profile
    return values


def _progress(line: str) -> None:
    print(f'evaluate --live: {line}', file=sys.stderr)


def live_records(settings: LiveSettings) -> list[dict[str, Any]]:
    """
    Run and score every robot x recording x mapping x solver setting live.

    :param settings: What to run.
    :return: One :func:`~pic_ros_tools.live_evaluation.live_record` per run.
    :raises PicRosError: If a recording cannot be read or a run fails.
    """
    records = []
    with tempfile.TemporaryDirectory(prefix='pic_ros_live_') as scratch:
        logs = settings.logs if settings.logs is not None else Path(scratch) / 'logs'
        for name in settings.recordings:
            replayed = replayable_recording(replay_path(name), scratch, notice=_progress)
            played = replayed.played(settings.duration)
            task = replayed.demonstration  # its segments and task surfaces give the live PO
            if not task.pads:
                task = replace(task, pads=recording_pads(name))
            for robot, mapping, solver in itertools.product(
                settings.robots, settings.mappings, settings.solvers
            ):
                _progress(f'{robot.name}, {played.name}, {solver.label}, {mapping.correspondence}')
                run = f'{robot.name}_{solver.name}_{mapping.correspondence}'
                # one folder per run: the recording's name too when several are played
                folder = logs / (f'{played.name}_{run}' if len(settings.recordings) > 1 else run)
                recording = record_pipeline(
                    robot, replayed, _solver_values(solver, mapping, settings.user_profile),
                    folder, settings.duration, say=_progress,
                    mcap=folder / MCAP_NAME if settings.logs is not None else None,
                    skeleton_values={
                        'smoothing': settings.processing.smoothing,
                        'time_constant': settings.processing.time_constant,
                    },
                    realtime_priority=settings.realtime_priority,
                    sim_realtime_priority=settings.sim_realtime_priority,
                )
                asked = run_imitation(
                    robot, played, solver,
                    EvaluationSettings(processing=settings.processing, mapping=mapping),
                )
                offline = score(asked, played, robot, solver)
                records.append(
                    live_record(
                        robot, played, recording, solver, mapping, offline, asked, task=task
                    )
                )
    return records
