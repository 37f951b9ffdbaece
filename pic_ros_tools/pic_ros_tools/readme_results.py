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
- *solve time p50*: ``bench``'s ``ms_p50`` of PIC (CPU time per arm solve);
- *PO incision, robot / person*: the PIC paper's occlusion of the task surface
  (``po_robot`` / ``po_human``, :mod:`pic_ros_tools.occlusion_scores`) on the incision recordings
  (:data:`~pic_ros_tools.evaluation.PAPER_TASKS` ``I-…``), offline, PIC, with the avoidance, in
  percent (the mean of the recordings' when several); the paper claims the robot's is not above
  the person's.

A source that is missing (skipped, failed, not collected, unreadable, without the robot's
record) shows ``–`` in its cells, and a note under the table says which and why. The README
block between :data:`BEGIN` and :data:`END` is the table and a paragraph saying what was measured
and how (``meta.json``: date, commit, host load); nothing else of the README changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from pic_ros_tools.evaluation import PAPER_TASKS
from pic_ros_tools.results_collection import BENCH, LIVE, OFFLINE, WITHOUT_AVOIDANCE
from pic_ros_tools.results_reading import (
    Collection,
    count,
    finite,
    fixed,
    joined_cell,
    load_collection,
    load_sentence,
    mean,
    measured_when,
    MISSING,
    missing_sentence,
    missing_sources,
    ordered_robots,
    paragraph,
    read_text,
    replace_block,
    ReportError,
    ROBOT_ORDER,
    TITLES,
    total,
    write_if_changed,
)

BEGIN: Final = '<!-- results:begin -->'
END: Final = '<!-- results:end -->'
"""The marker comments around the generated block of the README."""

HEADER: Final = (
    '| robot | Pacc offline | self-contact frames offline, without → with the avoidance '
    '| live Pacc / elbow MAE [rad] | feasibility bound Pacc / elbow MAE [rad] '
    '| live self-contact frames | chunks joined per arm | solve time p50 [ms] '
    '| PO incision, robot / person [%] |'
)
RULE: Final = '|---|---|---|---|---|---|---|---|---|'


def incision_po(records: Sequence[Mapping[str, Any]]) -> str:
    """
    Return the PO cell: robot / person on the incision recordings, in percent.

    :param records: A robot's ``evaluate`` records.
    :return: ``robot / person`` (the means over the incision recordings with a PO, one
        decimal), :data:`~pic_ros_tools.results_reading.MISSING` without any.
    """
    incisions = [
        record for record in records
        if PAPER_TASKS.get(str(record.get('recording')), '').startswith('I')
        and finite(record.get('po_robot')) is not None
    ]
    robot = mean(record.get('po_robot') for record in incisions)
    person = mean(record.get('po_human') for record in incisions)
    if robot is None or person is None:
        return MISSING
    return f'{100.0 * robot:.1f} / {100.0 * person:.1f}'


def headline_row(robot: str, collection: Collection) -> list[str]:
    """
    Return one robot's cells of the table.

    :param robot: Robot name.
    :param collection: The measurements.
    :return: Nine cells, ``–`` where a source is missing.
    """
    offline = collection.records(OFFLINE, robot)
    without = collection.records(WITHOUT_AVOIDANCE, robot)
    live_records = collection.records(LIVE, robot)
    bench = collection.records(BENCH, robot)
    pacc = mean(record.get('pacc_paper') for record in offline)
    contacts = (
        f"{count(total(r.get('self_contact_frames') for r in without))} → "
        f"{count(total(r.get('self_contact_frames') for r in offline))}"
    )
    live_pacc = live_mae = live_contacts = joined = bound_pacc = bound_mae = MISSING
    if live_records:
        bound = live_records[0].get('bound') or {}
        bound_pacc = fixed(bound.get('bound_pacc'), 2)
        bound_mae = fixed(bound.get('bound_elbow_mae_rad'), 3)
        live = live_records[0].get('live') or {}
        live_pacc = fixed(live.get('pacc_paper'), 2)
        live_mae = fixed(live.get('elbow_mae_rad'), 3)
        live_contacts = count(live.get('self_contact_frames'))
        joined = joined_cell(robot, live_records[0].get('run') or {})
    return [
        TITLES.get(robot, robot),
        fixed(pacc, 3),
        MISSING if contacts == f'{MISSING} → {MISSING}' else contacts,
        MISSING if live_pacc == live_mae == MISSING else f'{live_pacc} / {live_mae}',
        MISSING if bound_pacc == bound_mae == MISSING else f'{bound_pacc} / {bound_mae}',
        live_contacts,
        joined,
        fixed(bench[0].get('ms_p50') if bench else None, 3),
        incision_po(offline),
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


def measured_note(collection: Collection, robots: Sequence[str]) -> str:
    """
    Say what was measured and how: date, commit, recordings, host load, live lags, gaps.

    :param collection: The measurements.
    :param robots: The table's robots.
    :return: One paragraph, wrapped at :data:`~pic_ros_tools.results_reading.WIDTH`.
    """
    meta = collection.meta
    recordings = ', '.join(meta.get('recordings') or ()) or 'unknown recordings'
    parts = [
        f'Regenerated by `python -m pic_ros_tools report` ({measured_when(meta)}): offline on '
        f'{recordings} (PIC, default settings; "without": `--self-collision-margin 0`), live on '
        'the shipped demo, solve time from `bench --solver pic` (CPU time per arm solve, the '
        "paper's recordings).",
        load_sentence(meta),
    ]
    lags = [
        finite(arm.get('lag_s_p50'))
        for robot in robots for record in collection.records(LIVE, robot)
        for arm in (record.get('arms') or {}).values() if isinstance(arm, dict)
    ]
    runs = [record for robot in robots for record in collection.records(LIVE, robot)]
    found = [lag for lag in lags if lag is not None]
    if runs:
        invalid = sum(1 for record in runs if record.get('valid') is False)
        ends = (min(found), max(found)) if found else ()
        span = '–'.join(dict.fromkeys(f'{1e3 * value:.0f}' for value in ends))
        lag = f'the robots {span} ms behind the person (lag p50 per arm), ' if found else ''
        parts.append(f'Live: {lag}{invalid} of {len(runs)} runs flagged invalid.')
    parts.append(missing_sentence(collection, robots))
    return paragraph(parts)


def results_block(directory: Path, robots: Sequence[str] | None = None) -> str:
    """
    Render the README's block from a collection directory.

    :param directory: The collection.
    :param robots: Row robots (default: the collection's, else
        :data:`~pic_ros_tools.results_reading.ROBOT_ORDER`).
    :return: The table, a blank line and the paragraph saying how it was measured.
    """
    collection, chosen = load_collection(directory, robots)
    return headline_table(collection, chosen) + '\n\n' + measured_note(collection, chosen)


def replace_results_block(text: str, block: str) -> str:
    """
    Put a block between the README's markers, the rest of the text as it was.

    :param text: The README.
    :param block: The new content (without the markers).
    :return: The README with the block replaced.
    :raises ReportError: If the markers are not there once each, begin before end.
    """
    return replace_block(text, BEGIN, END, block, 'the README')


def read_readme(readme: Path) -> str:
    """
    Read a README that can take the results block.

    :param readme: The README file.
    :return: Its text.
    :raises ReportError: If it cannot be read or its markers are missing.
    """
    text = read_text(readme)
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
    return write_if_changed(readme, text, replace_results_block(text, block))


__all__ = [
    'BEGIN',
    'Collection',
    'END',
    'headline_row',
    'headline_table',
    'incision_po',
    'joined_cell',
    'measured_note',
    'missing_sources',
    'ordered_robots',
    'read_readme',
    'replace_results_block',
    'ReportError',
    'results_block',
    'ROBOT_ORDER',
    'write_readme',
]
