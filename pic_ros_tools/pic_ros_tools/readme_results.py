"""
The README's headline results table, rendered from a collection: ``report --render DIR``.

A collection (:mod:`pic_ros_tools.results_collection`) holds per robot the JSON of ``bench``,
``evaluate`` with and without the avoidance and ``evaluate --live``. One row per robot:

- *Pacc offline*: the mean of the recordings' Pacc (``pacc_paper``, each recording weighing the
  same), PIC, with the avoidance;
- *self-contact frames offline, without → with the avoidance*: ``self_contact_frames`` summed
  over the recordings, ``--self-collision-margin 0`` → default;
- *live Pacc / elbow MAE* and *live self-contact frames*: the live record's
  (``pacc_paper``, ``elbow_mae_rad``, ``self_contact_frames``);
- *chunks joined per arm*: the simulated arm controllers' ``<controller>_joined`` of the run's
  notes, per arm in the robot file's order, of the trajectories they accepted;
- *solve time p50*: ``bench``'s ``ms_p50`` of PIC (CPU time per arm solve).

A source that is missing (skipped, failed, not collected, unreadable, without the robot's
record) shows ``–`` in its cells, and a note under the table says which and why. The README
block between :data:`BEGIN` and :data:`END` is the table and a paragraph saying what was measured
and how (``meta.json``: date, commit, host load); nothing else of the README changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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

BEGIN: Final = '<!-- results:begin -->'
END: Final = '<!-- results:end -->'
"""The marker comments around the generated block of the README."""

ROBOT_ORDER: Final = ('baxter', 'yumi', 'tiago', 'nao')
"""The README's row order (other robots follow, sorted)."""

TITLES: Final = {'baxter': 'Baxter', 'yumi': 'YuMi', 'tiago': 'TIAGo', 'nao': 'NAO'}
"""Robot names as the README writes them."""

HEADER: Final = (
    '| robot | Pacc offline | self-contact frames offline, without → with the avoidance '
    '| live Pacc / elbow MAE [rad] | live self-contact frames | chunks joined per arm '
    '| solve time p50 [ms] |'
)
RULE: Final = '|---|---|---|---|---|---|---|'

MISSING: Final = '–'
"""What a cell without its source shows."""

WIDTH: Final = 100
"""Line width of the paragraph under the table."""


class ReportError(PicRosError):
    """The README cannot take the generated block (markers missing or out of order)."""


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
        meta = _read_json(directory / META_FILE)
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
                    parsed = _read_json(path)
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
        parsed = self.data.get((source, robot))
        if not isinstance(parsed, dict):
            return []
        if source == LIVE:
            rows = [r for r in parsed.get('live', []) if isinstance(r, dict)]
            return [r for r in rows if (r.get('live') or {}).get('robot') == robot]
        key = 'solvers' if source == BENCH else 'results'
        rows = [r for r in parsed.get(key, []) if isinstance(r, dict)]
        return [r for r in rows if r.get('robot') == robot and r.get('solver') == 'pic']


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding='utf-8'))
    except (OSError, ValueError):
        return None


def ordered_robots(names: Sequence[str]) -> list[str]:
    """
    Order robot names as the README's rows.

    :param names: Robot names.
    :return: :data:`ROBOT_ORDER` first, the others sorted.
    """
    known = [name for name in ROBOT_ORDER if name in names]
    return known + sorted(set(names) - set(known))


def _finite(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _fixed(value: Any, digits: int) -> str:
    number = _finite(value)
    return MISSING if number is None else f'{number:.{digits}f}'


def _count(value: Any) -> str:
    number = _finite(value)
    return MISSING if number is None else f'{int(number):,}'


def _mean(values: Sequence[Any]) -> float | None:
    finite = [v for v in (_finite(value) for value in values) if v is not None]
    return sum(finite) / len(finite) if finite else None


def _contacts(records: Sequence[Mapping[str, Any]]) -> int | None:
    counts = [_finite(record.get('self_contact_frames')) for record in records]
    if not counts or None in counts:
        return None
    return int(sum(c for c in counts if c is not None))


def _arm_controllers(robot: str) -> list[str] | None:
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
    controllers = _arm_controllers(robot)
    if not controllers:
        return MISSING
    joined = ' / '.join(_count(run.get(f'{c}_joined')) for c in controllers)
    accepted = list(dict.fromkeys(_count(run.get(f'{c}_accepted')) for c in controllers))
    return f"{joined} of {' / '.join(accepted)}"


def headline_row(robot: str, collection: Collection) -> list[str]:
    """
    Return one robot's cells of the table.

    :param robot: Robot name.
    :param collection: The measurements.
    :return: Seven cells, ``–`` where a source is missing.
    """
    offline = collection.records(OFFLINE, robot)
    without = collection.records(WITHOUT_AVOIDANCE, robot)
    live_records = collection.records(LIVE, robot)
    bench = collection.records(BENCH, robot)
    pacc = _mean([record.get('pacc_paper') for record in offline])
    contacts = (
        f'{_count(_contacts(without) if without else None)} → '
        f'{_count(_contacts(offline) if offline else None)}'
    )
    live_pacc = live_mae = live_contacts = joined = MISSING
    if live_records:
        live = live_records[0].get('live') or {}
        live_pacc = _fixed(live.get('pacc_paper'), 2)
        live_mae = _fixed(live.get('elbow_mae_rad'), 3)
        live_contacts = _count(live.get('self_contact_frames'))
        joined = joined_cell(robot, live_records[0].get('run') or {})
    return [
        TITLES.get(robot, robot),
        _fixed(pacc, 3),
        MISSING if contacts == f'{MISSING} → {MISSING}' else contacts,
        MISSING if live_pacc == live_mae == MISSING else f'{live_pacc} / {live_mae}',
        live_contacts,
        joined,
        _fixed(bench[0].get('ms_p50') if bench else None, 3),
    ]


def headline_table(collection: Collection, robots: Sequence[str]) -> str:
    """
    Format the table, one row per robot.

    :param collection: The measurements.
    :param robots: Robot names, in row order.
    :return: The Markdown table.
    """
    rows = ['| ' + ' | '.join(headline_row(robot, collection)) + ' |' for robot in robots]
    return '\n'.join([HEADER, RULE, *rows])


def _load_text(values: Any) -> str:
    return f'{values[0]:.1f}' if isinstance(values, list) and values else MISSING


def measured_note(collection: Collection, robots: Sequence[str]) -> str:
    """
    Say what was measured and how: date, commit, recordings, host load, live lags, gaps.

    :param collection: The measurements.
    :param robots: The table's robots.
    :return: One paragraph, wrapped at :data:`WIDTH`.
    """
    meta = collection.meta
    parts = []
    started = str(meta.get('started') or '')[:10] or 'an unknown date'
    commit = meta.get('commit')
    where = f'commit {commit}' if commit else 'an unknown commit'
    if meta.get('modified'):
        where += ' with uncommitted changes'
    recordings = ', '.join(meta.get('recordings') or ()) or 'unknown recordings'
    parts.append(
        f'Regenerated by `python -m pic_ros_tools report` ({started}, {where}): offline on '
        f'{recordings} (PIC, default settings; "without": `--self-collision-margin 0`), live on '
        'the shipped demo, solve time from `bench --solver pic` (CPU time per arm solve, the '
        "paper's recordings)."
    )
    loads = [meta.get('load_before'), meta.get('load_after')]
    for entry in meta.get('commands') or ():
        if isinstance(entry, dict):
            loads += [entry.get('load_before'), entry.get('load_after')]
    peaks = [values[0] for values in loads if isinstance(values, list) and values]
    if peaks:
        parts.append(
            f"Host: {meta.get('cores', '?')} cores, load average (1 min) "
            f"{_load_text(meta.get('load_before'))} at the start, "
            f"{_load_text(meta.get('load_after'))} at the end, up to {max(peaks):.1f}."
        )
    lags = [
        _finite(arm.get('lag_s_p50'))
        for robot in robots for record in collection.records(LIVE, robot)
        for arm in (record.get('arms') or {}).values() if isinstance(arm, dict)
    ]
    runs = [record for robot in robots for record in collection.records(LIVE, robot)]
    found = [lag for lag in lags if lag is not None]
    if runs:
        invalid = sum(1 for record in runs if record.get('valid') is False)
        lag = (
            f'the robots {1e3 * min(found):.0f}–{1e3 * max(found):.0f} ms behind the person '
            '(lag p50 per arm), ' if found else ''
        )
        parts.append(f'Live: {lag}{invalid} of {len(runs)} runs flagged invalid.')
    gaps = missing_sources(collection, robots)
    if gaps:
        parts.append(f'{MISSING}: not measured: ' + '; '.join(gaps) + '.')
    return textwrap.fill(' '.join(parts), WIDTH, break_on_hyphens=False, break_long_words=False)


def missing_sources(collection: Collection, robots: Sequence[str]) -> list[str]:
    """
    List the sources without figures, with the robots and why.

    :param collection: The measurements.
    :param robots: The table's robots.
    :return: One ``<source> for <robots> (<why>)`` per source and reason.
    """
    reasons: dict[tuple[str, str], list[str]] = {}
    for source in SOURCES:
        for robot in robots:
            why = collection.problems.get((source, robot))
            if why is None and not collection.records(source, robot):
                why = 'no PIC record of the robot'
            if why is not None:
                reasons.setdefault((source, why), []).append(robot)
    names = {
        BENCH: 'bench', OFFLINE: 'evaluate', WITHOUT_AVOIDANCE: 'evaluate without the avoidance',
        LIVE: 'evaluate --live',
    }
    return [
        f"{names[source]} for {', '.join(found)} ({why})"
        for (source, why), found in reasons.items()
    ]


def results_block(directory: Path, robots: Sequence[str] | None = None) -> str:
    """
    Render the README's block from a collection directory.

    :param directory: The collection.
    :param robots: Row robots (default: the collection's, else :data:`ROBOT_ORDER`).
    :return: The table, a blank line and the paragraph saying how it was measured.
    """
    meta = _read_json(directory / META_FILE)
    named = meta.get('robots') if isinstance(meta, dict) else None
    chosen = ordered_robots(list(robots or named or ROBOT_ORDER))
    collection = Collection.load(directory, chosen)
    return headline_table(collection, chosen) + '\n\n' + measured_note(collection, chosen)


def replace_results_block(text: str, block: str) -> str:
    """
    Put a block between the README's markers, the rest of the text as it was.

    :param text: The README.
    :param block: The new content (without the markers).
    :return: The README with the block replaced.
    :raises ReportError: If the markers are not there once each, begin before end.
    """
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise ReportError(
            f'the README needs one {BEGIN} and one {END} line around the results table '
            f'(found {text.count(BEGIN)} and {text.count(END)})'
        )
    start = text.index(BEGIN) + len(BEGIN)
    end = text.index(END)
    if end < start:
        raise ReportError(f'{END} comes before {BEGIN} in the README')
    return text[:start] + '\n' + block.strip('\n') + '\n' + text[end:]


def read_readme(readme: Path) -> str:
    """
    Read a README that can take the results block.

    :param readme: The README file.
    :return: Its text.
    :raises ReportError: If it cannot be read or its markers are missing.
    """
    try:
        text = readme.read_text(encoding='utf-8')
    except OSError as error:
        raise ReportError(f'cannot read {readme}: {error}') from error
    replace_results_block(text, '')
    return text


def write_readme(readme: Path, block: str) -> bool:
    """
    Rewrite the README's results block.

    :param readme: The README file.
    :param block: The new content (:func:`results_block`).
    :return: Whether the file changed.
    :raises ReportError: If the markers are missing (the file is left as it is).
    """
    text = read_readme(readme)
    updated = replace_results_block(text, block)
    if updated == text:
        return False
    partial = readme.with_name(readme.name + '.part')
    partial.write_text(updated, encoding='utf-8')
    partial.replace(readme)
    return True


__all__ = [
    'BEGIN',
    'Collection',
    'END',
    'headline_row',
    'headline_table',
    'joined_cell',
    'measured_note',
    'missing_sources',
    'ordered_robots',
    'read_readme',
    'replace_results_block',
    'ReportError',
    'results_block',
    'write_readme',
]
