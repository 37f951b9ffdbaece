"""
The ``evaluate`` table of the PIC paper's occlusion / obstruction metric (PO), beside the paper's.

One row per robot x recording with a task surface; per solver setting the robot's PO (mean and
population std over segments), then the person's, each with the paper's value in brackets where
its Tables II-III or Fig. 8 have one (:data:`pic_ros_tools.occlusion_scores.PAPER_PO`).
"""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np
from pic_ros_tools.evaluation import PAPER_TASKS
from pic_ros_tools.occlusion_scores import PAPER_PO, PAPER_PO_MEANS
from pic_ros_tools.setting_columns import (
    column_label,
    ordered_settings,
    paper_setting_column,
    Record,
    Setting,
    setting_key,
    several_correspondences,
    text_table,
)

_HUMAN_COLUMN = 5
"""Where the person's value sits in a :data:`PAPER_PO` row."""


def _percent(value: float | None) -> str:
    return '–' if value is None or not math.isfinite(value) else f'{100 * value:.1f}'


def _paper(robot: str, recording: str, column: int) -> str:
    row = PAPER_PO.get((robot, PAPER_TASKS.get(recording, '')))
    return '' if row is None else f' [{100 * row[column]:.1f}]'


def _pooled(records: Sequence[Record], key: str) -> float:
    values = [v for r in records for v in r.get(key, []) if v is not None and math.isfinite(v)]
    return float(np.mean(values)) if values else float('nan')


_MEANS = (('mean, Baxter + YuMi', ('baxter', 'yumi')), ('mean, all robots', None))
"""The summary rows: the paper's two robots (with its means in brackets), then every robot."""


def _robot_cell(record: Record | None, setting: Setting, robot: str, recording: str) -> str:
    """Return one setting's cell of a recording's row: the robot's PO (std) [the paper's]."""
    if record is None:
        return ''
    column = paper_setting_column(setting)
    paper = '' if column is None else _paper(robot, recording, column)
    return f"{_percent(record['po_robot'])} ({_percent(record['po_robot_std'])})" + paper


def _recording_row(
    scored: Sequence[Record], settings: Sequence[Setting], robot: str, recording: str
) -> list[str]:
    """Return the row of one robot and recording: each setting, then the person and frames."""
    group = {
        setting_key(r): r for r in scored if (r['robot'], r['recording']) == (robot, recording)
    }
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
        column = paper_setting_column(setting)
        same = [r for r in chosen if setting_key(r) == setting]
        text = _percent(_pooled(same, 'segment_po_robot'))
        if paper and column is not None:
            text += f' [{100 * PAPER_PO_MEANS[column]:.1f}]'
        cells.append(text)
    humans = list({(r['robot'], r['recording']): r for r in chosen}.values())
    text = _percent(_pooled(humans, 'segment_po_human'))
    if paper:
        text += f' [{100 * PAPER_PO_MEANS[_HUMAN_COLUMN]:.1f}]'
    return cells + [text, str(sum(r['po_frames'] for r in humans))]


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
    settings = ordered_settings(scored)
    several = several_correspondences(scored)
    header = ['robot', 'recording'] + [column_label(s, several) for s in settings]
    header += ['person', 'frames']
    rows = []
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
    return title + '\n' + text_table(header, rows)


__all__ = ['occlusion_table']
