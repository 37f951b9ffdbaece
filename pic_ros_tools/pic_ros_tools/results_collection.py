"""
The measurements the README's and results.md's tables are read from: ``report --collect DIR``.

Per robot, four commands of ``python -m pic_ros_tools``, each run as a subprocess with
``--json``; each one's output goes to ``<source>_<robot>.json`` in the directory, its standard
error to ``<source>_<robot>.log``:

- ``bench``: ``bench --solver pic --ikpy-frames 0`` on the PIC paper's four recordings (CPU time
  per arm solve, the avoidance's share included);
- ``offline``: ``evaluate --solver pic`` on the shared recordings (the paper's four and the Azure
  Kinect bag, those of them on this machine; default settings);
- ``offline_margin0``: the same with ``--self-collision-margin 0`` (the avoidance off);
- ``live``: ``evaluate --live`` on the shipped demo (the five ROS processes; rclpy and mujoco).

``meta.json`` (written after every command, so that an interrupted collection keeps it) holds
when they ran, the git commit of the source tree, the host's cores and load average before and
after the whole collection and each command, and every command with its exit status. A command
that fails leaves no JSON (its log says why) and the collection goes on:
:mod:`pic_ros_tools.readme_results` and :mod:`pic_ros_tools.results_tables` render its cells as
missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, UTC
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time
from typing import Any, Final

from pic_ros_tools.catalog import default_recordings, PAPER_RECORDINGS, pic_demos_dir
from pic_ros_tools.recordings.bag_demonstration import is_bag_path

BENCH: Final = 'bench'
OFFLINE: Final = 'offline'
WITHOUT_AVOIDANCE: Final = 'offline_margin0'
LIVE: Final = 'live'
SOURCES: Final = (BENCH, OFFLINE, WITHOUT_AVOIDANCE, LIVE)
"""The measurements, in the order they run."""

META_FILE: Final = 'meta.json'
"""Name of the collection's notes in its directory."""

STOP_WAIT: Final = 60.0
"""Longest wait for an interrupted command to stop its own processes before it is killed [s]."""

PROGRAM: Final = 'python -m pic_ros_tools'

Runner = Callable[[Sequence[str], Path, Path], int]
"""Runs a command line, its stdout to the first file, stderr to the second; returns its status."""


def source_file(source: str, robot: str) -> str:
    """
    Return the name of a measurement's JSON file in the collection directory.

    :param source: One of :data:`SOURCES`.
    :param robot: Robot name.
    :return: ``<source>_<robot>.json``.
    """
    return f'{source}_{robot}.json'


@dataclass(frozen=True)
class Measurement:
    """
    One command of a collection.

    :param source: One of :data:`SOURCES`.
    :param robot: The robot it measures.
    :param arguments: Its arguments after ``python -m pic_ros_tools``.
    """

    source: str
    robot: str
    arguments: tuple[str, ...]

    @property
    def file(self) -> str:
        """Return the name of its JSON file."""
        return source_file(self.source, self.robot)

    @property
    def command(self) -> str:
        """Return its command line as a user types it."""
        return ' '.join((PROGRAM, *self.arguments))


@dataclass(frozen=True)
class SharedInputs:
    """
    The recordings the offline measurements play.

    :param recordings: Recording names for ``--recording`` (the paper's, else ``demo``).
    :param bags: Rosbag2 paths for ``--bag`` (the shared Azure Kinect bag when present).
    """

    recordings: tuple[str, ...]
    bags: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """Return every recording's name (a bag's folder name)."""
        return self.recordings + tuple(Path(bag).name for bag in self.bags)


def shared_inputs() -> SharedInputs:
    """
    Find the shared recordings on this machine.

    :return: The paper's four recordings and ``../shared/data/azure_kinect/
        body_tracking_ergonomics`` beside them, those present (``demo`` without the paper's).
    """
    folder = pic_demos_dir()
    bags: tuple[str, ...] = ()
    if folder is not None:
        bag = folder.parent / 'azure_kinect' / 'body_tracking_ergonomics'
        bags = (str(bag),) if is_bag_path(bag) else ()
    return SharedInputs(recordings=tuple(default_recordings()), bags=bags)


def plan(
    robots: Sequence[str], inputs: SharedInputs, skip_live: bool = False
) -> list[Measurement]:
    """
    List the commands of a collection, in the order they run.

    :param robots: Robot names.
    :param inputs: The recordings of the offline measurements.
    :param skip_live: Leave out ``evaluate --live``.
    :return: Per source of :data:`SOURCES`, one command per robot.
    """
    played: list[str] = []
    for name in inputs.recordings:
        played += ['--recording', name]
    for bag in inputs.bags:
        played += ['--bag', bag]
    benched: list[str] = []
    for name in inputs.recordings:
        if name in PAPER_RECORDINGS or name == 'demo':
            benched += ['--recording', name]
    measurements = []
    for source in SOURCES:
        if source == LIVE and skip_live:
            continue
        for robot in robots:
            common = ('--robot', robot, '--solver', 'pic')
            arguments: tuple[str, ...] = {
                BENCH: ('bench', *common, '--ikpy-frames', '0', *benched, '--json'),
                OFFLINE: ('evaluate', *common, *played, '--json'),
                WITHOUT_AVOIDANCE: (
                    'evaluate', *common, *played, '--self-collision-margin', '0', '--json'
                ),
                LIVE: ('evaluate', '--live', *common, '--json'),
            }[source]
            measurements.append(Measurement(source, robot, arguments))
    return measurements


def run_subprocess(argv: Sequence[str], stdout: Path, stderr: Path) -> int:
    """
    Run a command line, its output to files; an interruption stops it as Ctrl-C would.

    On any exception while it runs (a stop signal turned into one by
    :func:`~pic_ros_tools.ros.processes.run_stopping_children`), the command gets SIGINT, which
    the tools' commands answer by stopping every process they started; after
    :data:`STOP_WAIT` it is killed.

    :param argv: The command line.
    :param stdout: File receiving its standard output.
    :param stderr: File receiving its standard error.
    :return: Its exit status (negative for a signal).
    """
    with open(stdout, 'wb') as out, open(stderr, 'wb') as err:
        process = subprocess.Popen(list(argv), stdout=out, stderr=err)
        try:
            return int(process.wait())
        except BaseException:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=STOP_WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            raise


def git_commit(folder: Path | None = None) -> tuple[str | None, bool | None]:
    """
    Return the commit of the source tree and whether tracked files differ from it.

    :param folder: A folder inside the work tree (default: this package's repository).
    :return: The short commit id and the flag, ``(None, None)`` outside a git work tree.
    """
    where = folder if folder is not None else Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ['git', '-C', str(where), 'rev-parse', '--short', 'HEAD'],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.strip()
        changes = subprocess.run(
            ['git', '-C', str(where), 'status', '--porcelain', '--untracked-files=no'],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, bool(changes)


def load_average() -> list[float] | None:
    """Return the host's load average over 1, 5 and 15 minutes, None where it is unknown."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec='seconds')


def _say(line: str) -> None:
    print(f'report: {line}', file=sys.stderr, flush=True)


def collect(
    directory: Path,
    measurements: Sequence[Measurement],
    inputs: SharedInputs,
    runner: Runner = run_subprocess,
    say: Callable[[str], None] = _say,
    skipped: Sequence[str] = (),
) -> dict[str, Any]:
    """
    Run the measurements one after the other and write their JSON and ``meta.json``.

    A measurement's previous file is removed before it runs, so that a failed one leaves none.
    A live run also keeps its processes' logs and its topics (``evaluate --live --logs``) in
    ``live_<robot>_logs`` beside its JSON (``logs`` in its ``meta.json`` entry), so that an odd
    figure can be looked at afterwards.

    :param directory: Where the files go (created).
    :param measurements: What to run (:func:`plan`).
    :param inputs: The recordings they play (noted in ``meta.json``).
    :param runner: Runs one command line (:func:`run_subprocess`; tests give a fake).
    :param say: Receives a progress line per command.
    :param skipped: Sources left out on purpose (noted so that the table says so).
    :return: The content of ``meta.json``.
    """
    directory.mkdir(parents=True, exist_ok=True)
    commit, modified = git_commit()
    meta: dict[str, Any] = {
        'started': _now(),
        'finished': None,
        'commit': commit,
        'modified': modified,
        'cores': os.cpu_count(),
        'load_before': load_average(),
        'load_after': None,
        'robots': list(dict.fromkeys(m.robot for m in measurements)),
        'recordings': list(inputs.names),
        'skipped': list(skipped),
        'commands': [],
    }
    _write_meta(directory, meta)
    for index, measurement in enumerate(measurements, 1):
        target = directory / measurement.file
        target.unlink(missing_ok=True)
        partial = target.with_suffix('.part')
        log = target.with_suffix('.log')
        say(f'[{index}/{len(measurements)}] {measurement.command}')
        entry: dict[str, Any] = {
            'source': measurement.source,
            'robot': measurement.robot,
            'command': measurement.command,
            'file': measurement.file,
            'load_before': load_average(),
        }
        extra: tuple[str, ...] = ()
        if measurement.source == LIVE:  # its processes' logs and topics, to look at afterwards
            logs = target.with_name(f'{target.stem}_logs')
            extra = ('--logs', str(logs))
            entry['logs'] = logs.name
        started = time.monotonic()
        status = runner([sys.executable, '-m', 'pic_ros_tools', *measurement.arguments, *extra],
                        partial, log)
        entry.update(
            status=status, seconds=round(time.monotonic() - started, 1),
            load_after=load_average(),
        )
        if status == 0:
            try:
                json.loads(partial.read_text(encoding='utf-8'))
            except (OSError, ValueError) as error:
                entry['error'] = f'no JSON on its output ({error})'
            else:
                partial.replace(target)
        else:
            entry['error'] = f'exit status {status} (see {log.name})'
        partial.unlink(missing_ok=True)
        meta['commands'].append(entry)
        _write_meta(directory, meta)
        say(f"    {entry.get('error', 'done')}, {entry['seconds']:.0f} s")
    meta.update(finished=_now(), load_after=load_average())
    _write_meta(directory, meta)
    return meta


def _write_meta(directory: Path, meta: dict[str, Any]) -> None:
    (directory / META_FILE).write_text(json.dumps(meta, indent=1) + '\n', encoding='utf-8')


__all__ = [
    'BENCH',
    'collect',
    'git_commit',
    'LIVE',
    'load_average',
    'Measurement',
    'META_FILE',
    'OFFLINE',
    'plan',
    'run_subprocess',
    'shared_inputs',
    'SharedInputs',
    'source_file',
    'SOURCES',
    'WITHOUT_AVOIDANCE',
]
