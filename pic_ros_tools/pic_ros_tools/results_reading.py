"""
Reading a collection of ``report --collect`` and the pieces every rendered block shares.

A collection (:mod:`pic_ros_tools.results_collection`) holds per robot the JSON of ``bench``,
``evaluate`` with and without the avoidance and ``evaluate --live`` and a ``meta.json``.
:class:`Collection` reads it without judging it; the number formats (``–`` for a missing
value), the note's sentences (when, at which commit, under which host load, what is missing)
and the replacement of a marked block in a Markdown file are shared by the README's block
(:mod:`pic_ros_tools.readme_results`) and the blocks of ``docs/results.md``
(:mod:`pic_ros_tools.results_tables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import json
import math
from pathlib import Path
import textwrap
from typing import Any, Final

from pic_ros.exceptions import PicRosError
from pic_ros.resources import config_path
from pic_ros.robot.config import load_robot_spec
from pic_ros_tools.results_collection import (
    BENCH,
    LIVE,
    META_FILE,
    OFFLINE,
    source_file,
    SOURCES,
    WITHOUT_AVOIDANCE,
)

ROBOT_ORDER: Final = ('baxter', 'yumi', 'tiago', 'nao')
"""The tables' row order (other robots follow, sorted)."""

TITLES: Final = {'baxter': 'Baxter', 'yumi': 'YuMi', 'tiago': 'TIAGo', 'nao': 'NAO'}
"""Robot names as the tables write them."""

MISSING: Final = '–'
"""What a cell without its source shows."""

WIDTH: Final = 100
"""Line width of the paragraph under a table."""

SOURCE_NAMES: Final = {
    BENCH: 'bench', OFFLINE: 'evaluate', WITHOUT_AVOIDANCE: 'evaluate without the avoidance',
    LIVE: 'evaluate --live',
}
"""How the notes name the sources."""


class ReportError(PicRosError):
    """A file cannot take a generated block (markers missing or out of order, unreadable)."""


@dataclass(frozen=True)
class Collection:
    """
    What a collection directory holds, read without judging it.

    :param meta: ``meta.json`` (empty when absent or unreadable).
    :param data: Parsed JSON per (source, robot).
    :param problems: Why a (source, robot) has no data, for the notes.
    """

    meta: Mapping[str, Any]
    data: Mapping[tuple[str, str], Any]
    problems: Mapping[tuple[str, str], str]

    @classmethod
    def load(cls, directory: Path, robots: Sequence[str]) -> Collection:
        """
        Read a collection directory.

        :param directory: The directory (it may hold only some of the files, or none).
        :param robots: The robots whose files to read.
        :return: The collection.
        """
        meta = read_json(directory / META_FILE)
        meta = meta if isinstance(meta, dict) else {}
        statuses = {
            (entry.get('source'), entry.get('robot')): entry
            for entry in meta.get('commands', []) if isinstance(entry, dict)
        }
        skipped = set(meta.get('skipped') or ())
        data: dict[tuple[str, str], Any] = {}
        problems: dict[tuple[str, str], str] = {}
        for source in SOURCES:
            for robot in robots:
                path = directory / source_file(source, robot)
                if path.is_file():
                    parsed = read_json(path)
                    if parsed is None:
                        problems[source, robot] = 'unreadable'
                    else:
                        data[source, robot] = parsed
                elif source in skipped:
                    problems[source, robot] = 'skipped'
                elif (source, robot) in statuses:
                    entry = statuses[source, robot]
                    problems[source, robot] = 'failed' if entry.get('status') else 'no output'
                else:
                    problems[source, robot] = 'not collected'
        return cls(meta=meta, data=data, problems=problems)

    def records(self, source: str, robot: str) -> list[Mapping[str, Any]]:
        """
        Return a source's records of one robot.

        :param source: One of :data:`~pic_ros_tools.results_collection.SOURCES`.
        :param robot: Robot name.
        :return: ``evaluate``'s PIC records, ``evaluate --live``'s records or ``bench``'s PIC
            solver rows of the robot (empty when there are none).
        """
        return self.rows(source, robot, 'live' if source == LIVE else (
            'solvers' if source == BENCH else 'results'
        ))

    def rows(self, source: str, robot: str, key: str) -> list[Mapping[str, Any]]:
        """
        Return the robot's PIC rows of one list of a source's JSON.

        :param source: One of :data:`~pic_ros_tools.results_collection.SOURCES`.
        :param robot: Robot name.
        :param key: The list's key (``results``, ``solvers``, ``throughput``, ``live``).
        :return: Its rows of the robot and PIC (live records: of the robot), possibly empty.
        """
        parsed = self.data.get((source, robot))
        if not isinstance(parsed, dict):
            return []
        rows = [r for r in parsed.get(key, []) if isinstance(r, dict)]
        if source == LIVE:
            return [r for r in rows if (r.get('live') or {}).get('robot') == robot]
        return [r for r in rows if r.get('robot') == robot and r.get('solver') == 'pic']


def read_json(path: Path) -> Any:
    """
    Read a JSON file.

    :param path: The file.
    :return: Its value, None when it cannot be read or parsed.
    """
    try:
        return json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return None


def ordered_robots(names: Sequence[str]) -> list[str]:
    """
    Order robot names as the tables' rows.

    :param names: Robot names.
    :return: :data:`ROBOT_ORDER` first, the others sorted.
    """
    known = [name for name in ROBOT_ORDER if name in names]
    return known + sorted(set(names) - set(known))


def load_collection(
    directory: Path, robots: Sequence[str] | None = None
) -> tuple[Collection, list[str]]:
    """
    Read a collection directory for the robots of its tables.

    :param directory: The collection.
    :param robots: Row robots (default: the collection's, else :data:`ROBOT_ORDER`).
    :return: The collection and its robots in row order.
    """
    meta = read_json(directory / META_FILE)
    named = meta.get('robots') if isinstance(meta, dict) else None
    chosen = ordered_robots(list(robots or named or ROBOT_ORDER))
    return Collection.load(directory, chosen), chosen


def finite(value: Any) -> float | None:
    """Return a finite number as a float, else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def fixed(value: Any, digits: int) -> str:
    """Format a number with ``digits`` decimals, :data:`MISSING` for anything else."""
    number = finite(value)
    return MISSING if number is None else f'{number:.{digits}f}'


def count(value: Any) -> str:
    """Format a count with thousands separators, :data:`MISSING` for anything else."""
    number = finite(value)
    return MISSING if number is None else f'{int(number):,}'


def mean(values: Iterable[Any]) -> float | None:
    """Return the mean of the finite numbers among the values, None without any."""
    found = [v for v in (finite(value) for value in values) if v is not None]
    return sum(found) / len(found) if found else None


def total(values: Iterable[Any]) -> int | None:
    """Return the sum of counts, None when there is none or one of them is not a number."""
    numbers = [finite(value) for value in values]
    if not numbers or None in numbers:
        return None
    return int(sum(n for n in numbers if n is not None))


def arm_controllers(robot: str) -> list[str] | None:
    """
    Return the robot's arm controllers, in its robot file's arm order.

    :param robot: Robot name.
    :return: Controller names, None when the robot file cannot be read.
    """
    try:
        spec = load_robot_spec(config_path(robot))
    except (PicRosError, OSError):
        return None
    return [arm.controller for arm in spec.arms.values()]


def joined_cell(robot: str, run: Mapping[str, Any]) -> str:
    """
    Format the chunks each arm controller joined, of the trajectories it accepted.

    :param robot: Robot name (its file names the arm controllers).
    :param run: The live run's notes (``run`` of the live record).
    :return: ``joined left / joined right of accepted`` (accepted per arm when they differ).
    """
    controllers = arm_controllers(robot)
    if not controllers:
        return MISSING
    joined = ' / '.join(count(run.get(f'{c}_joined')) for c in controllers)
    accepted = list(dict.fromkeys(count(run.get(f'{c}_accepted')) for c in controllers))
    return f"{joined} of {' / '.join(accepted)}"


def measured_when(meta: Mapping[str, Any]) -> str:
    """
    Say when and at which commit a collection was measured.

    :param meta: ``meta.json``.
    :return: ``<date>, commit <id>`` (with uncommitted changes when the tree had some).
    """
    started = str(meta.get('started') or '')[:10] or 'an unknown date'
    commit = meta.get('commit')
    where = f'commit {commit}' if commit else 'an unknown commit'
    if meta.get('modified'):
        where += ' with uncommitted changes'
    return f'{started}, {where}'


def _first(values: Any) -> float | None:
    return finite(values[0]) if isinstance(values, list) and values else None


def load_sentence(meta: Mapping[str, Any], sources: Sequence[str] | None = None) -> str:
    """
    Say how busy the host was.

    :param meta: ``meta.json``.
    :param sources: Only during these sources' commands (default: the whole collection, its
        start and end too).
    :return: A sentence with the cores and the 1-minute load average, empty without figures.
    """
    commands = [e for e in meta.get('commands') or () if isinstance(e, dict)]
    if sources is None:
        ends = [_first(meta.get('load_before')), _first(meta.get('load_after'))]
        loads = ends + [_first(e.get(k)) for e in commands for k in ('load_before', 'load_after')]
        peaks = [value for value in loads if value is not None]
        if not peaks:
            return ''
        start, end = (MISSING if v is None else f'{v:.1f}' for v in ends)
        return (
            f"Host: {meta.get('cores', '?')} cores, load average (1 min) {start} at the start, "
            f'{end} at the end, up to {max(peaks):.1f}.'
        )
    loads = [
        _first(e.get(k)) for e in commands if e.get('source') in sources
        for k in ('load_before', 'load_after')
    ]
    found = [value for value in loads if value is not None]
    if not found:
        return ''
    return (
        f"Host: {meta.get('cores', '?')} cores, load average (1 min) "
        f'{min(found):.1f}–{max(found):.1f} during these commands.'
    )


def missing_sources(
    collection: Collection, robots: Sequence[str], sources: Sequence[str] = SOURCES
) -> list[str]:
    """
    List the sources without figures, with the robots and why.

    :param collection: The measurements.
    :param robots: The table's robots.
    :param sources: The sources the table reads.
    :return: One ``<source> for <robots> (<why>)`` per source and reason.
    """
    reasons: dict[tuple[str, str], list[str]] = {}
    for source in sources:
        for robot in robots:
            why = collection.problems.get((source, robot))
            if why is None and not collection.records(source, robot):
                why = 'no PIC record of the robot'
            if why is not None:
                reasons.setdefault((source, why), []).append(robot)
    return [
        f"{SOURCE_NAMES[source]} for {', '.join(found)} ({why})"
        for (source, why), found in reasons.items()
    ]


def missing_sentence(
    collection: Collection, robots: Sequence[str], sources: Sequence[str] = SOURCES
) -> str:
    """
    Say which sources are missing (:func:`missing_sources`), empty when none is.

    :param collection: The measurements.
    :param robots: The table's robots.
    :param sources: The sources the table reads.
    :return: ``–: not measured: ...`` or an empty string.
    """
    gaps = missing_sources(collection, robots, sources)
    return f'{MISSING}: not measured: ' + '; '.join(gaps) + '.' if gaps else ''


def paragraph(parts: Iterable[str]) -> str:
    """
    Join sentences into one paragraph wrapped at :data:`WIDTH`.

    :param parts: The sentences (empty ones left out).
    :return: The paragraph.
    """
    text = ' '.join(part for part in parts if part)
    return textwrap.fill(text, WIDTH, break_on_hyphens=False, break_long_words=False)


def replace_block(text: str, begin: str, end: str, block: str, where: str = 'the file') -> str:
    """
    Put a block between two marker lines, the rest of the text as it was.

    :param text: The file's text.
    :param begin: The marker before the block.
    :param end: The marker after it.
    :param block: The new content (without the markers).
    :param where: The file, for the error.
    :return: The text with the block replaced.
    :raises ReportError: If the markers are not there once each, begin before end.
    """
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ReportError(
            f'{where} needs one {begin} and one {end} line around the generated block '
            f'(found {text.count(begin)} and {text.count(end)})'
        )
    start = text.index(begin) + len(begin)
    stop = text.index(end)
    if stop < start:
        raise ReportError(f'{end} comes before {begin} in {where}')
    return text[:start] + '\n' + block.strip('\n') + '\n' + text[stop:]


def read_text(path: Path) -> str:
    """
    Read a file that is to take generated blocks.

    :param path: The file.
    :return: Its text.
    :raises ReportError: If it cannot be read.
    """
    try:
        return path.read_text(encoding='utf-8')
    except OSError as error:
        raise ReportError(f'cannot read {path}: {error}') from error


def write_if_changed(path: Path, before: str, after: str) -> bool:
    """
    Replace a file's text, through a temporary file beside it, when it changed.

    :param path: The file.
    :param before: Its text as read.
    :param after: Its new text.
    :return: Whether it changed.
    """
    if after == before:
        return False
    partial = path.with_name(path.name + '.part')
    partial.write_text(after, encoding='utf-8')
    partial.replace(path)
    return True


__all__ = [
    'arm_controllers',
    'Collection',
    'count',
    'finite',
    'fixed',
    'joined_cell',
    'load_collection',
    'load_sentence',
    'mean',
    'measured_when',
    'missing_sentence',
    'missing_sources',
    'MISSING',
    'ordered_robots',
    'paragraph',
    'read_json',
    'read_text',
    'replace_block',
    'ReportError',
    'ROBOT_ORDER',
    'TITLES',
    'total',
    'WIDTH',
    'write_if_changed',
]
