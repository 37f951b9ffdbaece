"""
The ``evaluate`` table of the PIC paper's occlusion / obstruction metric (PO), beside the paper's.

One row per robot x recording with a task surface; per solver setting the robot's PO (mean and
population std over segments), then the person's, each with the paper's value in brackets where
its Tables II-III or Fig. 8 have one (:data:`pic_ros_tools.occlusion_scores.PAPER_PO`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math
from typing import Any

import numpy as np
from pic_ros_tools.evaluation import paper_column, PAPER_TASKS
from pic_ros_tools.occlusion_scores import PAPER_PO, PAPER_PO_MEANS

Record = Mapping[str, Any]

Setting = tuple[str, str, int | None]
"""A solver setting: (correspondence, solver, eta)."""

_HUMAN_COLUMN = 5
"""Where the person's value sits in a :data:`PAPER_PO` row."""


def _percent(value: float | None) -> str:
    return '–' if value is None or not math.isfinite(value) else f'{100 * value:.1f}'


def _setting(record: Record) -> Setting:
    return (str(record.get('correspondence', '')), str(record['solver']), record['eta'])


def _label(setting: Setting, several: bool) -> str:
    correspondence, solver, eta = setting
    label = {'fabrik': 'FABRIK', 'pic': 'PIC'}.get(solver, f'PICs(η={eta})')
    if solver not in ('fabrik', 'pic', 'pics'):
        label = solver
    return f'{correspondence} {label}' if several and correspondence else label


def _paper(robot: str, recording: str, column: int) -> str:
    row = PAPER_PO.get((robot, PAPER_TASKS.get(recording, '')))
    return '' if row is None else f' [{100 * row[column]:.1f}]'


def _column(setting: Setting) -> int | None:
    solver, eta = setting[1], setting[2]
    if solver not in ('fabrik', 'pic', 'pics'):
        return None
    return paper_column(solver, eta or 0)


def _pooled(records: Sequence[Record], key: str) -> float:
    values = [v for r in records for v in r.get(key, []) if v is not None and math.isfinite(v)]
    return float(np.mean(values)) if values else float('nan')


_SOLVER_ORDER = {'fabrik': 0, 'pic': 1, 'pics': 2}
"""The settings' column order: FABRIK, PIC, PICs (by eta), then any other solver."""

_MEANS = (('mean, Baxter + YuMi', ('baxter', 'yumi')), ('mean, all robots', None))
"""The summary rows: the paper's two robots (with its means in brackets), then every robot."""


def _settings(scored: Sequence[Record]) -> list[Setting]:
    """Return the settings of the records, in column order."""
    return sorted(
        dict.fromkeys(_setting(r) for r in scored),
        key=lambda s: (s[0], _SOLVER_ORDER.get(s[1], 9), s[2] or 0),
    )


def _robot_cell(record: Record | None, setting: Setting, robot: str, recording: str) -> str:
    """Return one setting's cell of a recording's row: the robot's PO (std) [the paper's]."""
    if record is None:
        return ''
    column = _column(setting)
    paper = '' if column is None else _paper(robot, recording, column)
    return f"{_percent(record['po_robot'])} ({_percent(record['po_robot_std'])})" + paper


def _recording_row(
    scored: Sequence[Record], settings: Sequence[Setting], robot: str, recording: str
) -> list[str]:
    """Return the row of one robot and recording: each setting, then the person and frames."""
    group = {_setting(r): r for r in scored if (r['robot'], r['recording']) == (robot, recording)}
    task = PAPER_TASKS.get(recording)
    cells = [robot, f'{recording} ({task})' if task else recording]
    cells += [_robot_cell(group.get(s), s, robot, recording) for s in settings]
    first = next(iter(group.values()))
    cells.append(
        f"{_percent(first['po_human'])} ({_percent(first['po_human_std'])})"
        + _paper(robot, recording, _HUMAN_COLUMN)
    )
    cells.append(str(first['po_frames']))
    return cells


def _mean_row(
    chosen: Sequence[Record], settings: Sequence[Setting], label: str, paper: bool
) -> list[str]:
    """Return a summary row: every segment pooled per setting and for the person."""
    cells = [label, 'all segments']
    for setting in settings:
        column = _column(setting)
        text = _percent(_pooled([r for r in chosen if _setting(r) == setting], 'segment_po_robot'))
        if paper and column is not None:
            text += f' [{100 * PAPER_PO_MEANS[column]:.1f}]'
        cells.append(text)
    humans = list({(r['robot'], r['recording']): r for r in chosen}.values())
    text = _percent(_pooled(humans, 'segment_po_human'))
    if paper:
        text += f' [{100 * PAPER_PO_MEANS[_HUMAN_COLUMN]:.1f}]'
    return cells + [text, str(sum(r['po_frames'] for r in humans))]


def _aligned(rows: Sequence[Sequence[str]]) -> str:
    """Return rows as plain-text columns, a rule under the first (the header)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ['  '.join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, '  '.join('-' * w for w in widths))
    return '\n'.join(lines)


def occlusion_table(records: Sequence[Record]) -> str:
    """
    Format the PO of the robot per setting and of the person, per robot x recording.

    :param records: ``evaluate`` records; those without ``po_robot`` are left out.
    :return: The table in percent, the paper's values in brackets; an empty string when no
        record has a PO.
    """
    scored = [r for r in records if 'po_robot' in r]
    if not scored:
        return ''
    settings = _settings(scored)
    several = len({s[0] for s in settings}) > 1
    header = ['robot', 'recording'] + [_label(s, several) for s in settings]
    rows = [header + ['person', 'frames']]
    for robot, recording in dict.fromkeys((r['robot'], r['recording']) for r in scored):
        rows.append(_recording_row(scored, settings, robot, recording))
    for label, scope in _MEANS:
        chosen = [r for r in scored if scope is None or r['robot'] in scope]
        if chosen:
            rows.append(_mean_row(chosen, settings, label, paper=scope is not None))
    title = (
        "Occlusion / obstruction PO [%] of the task surface (the PIC paper's Eq. 5 with link "
        'thickness, overlaps once; frames with a task wrist over the ROI): robot per setting, '
        'then the person; mean (population std) over segments; [PIC paper Tables II-III / '
        'Fig. 8, its 4-link models and line-area count, pic_method.md section 8]'
    )
    return title + '\n' + _aligned(rows)


__all__ = ['occlusion_table']
