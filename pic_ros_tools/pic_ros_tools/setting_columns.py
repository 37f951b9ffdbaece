"""
Solver settings as the columns of the ``evaluate`` tables, and the plain-text table they fill.

A setting is the triple (correspondence, solver, η) of an ``evaluate`` record; the pose-accuracy
and occlusion tables (:mod:`pic_ros_tools.report`, :mod:`pic_ros_tools.occlusion_report`) give
one column per setting, in the same order and with the same labels, and put the PIC paper's value
beside ours where the paper has a column for the setting.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pic_ros_tools.evaluation import paper_column

Record = Mapping[str, Any]
"""An ``evaluate`` record (its JSON object)."""

Setting = tuple[str, str, int | None]
"""A solver setting: (correspondence, solver, eta)."""

PAPER_SOLVERS: Final = ('fabrik', 'pic', 'pics')
"""The solvers the PIC paper reports, in its column order."""


def setting_label(solver: str, eta: int | None) -> str:
    """
    Return the column label of a solver setting.

    :param solver: ``fabrik``, ``pic`` or ``pics`` (another solver is labelled by its name).
    :param eta: η (used for ``pics``).
    :return: ``FABRIK``, ``PIC`` or ``PICs(η=k)``.
    """
    if solver == 'pics':
        return f'PICs(η={eta})'
    return {'fabrik': 'FABRIK', 'pic': 'PIC'}.get(solver, solver)


def setting_key(record: Record) -> Setting:
    """Return the setting of an ``evaluate`` record."""
    return (str(record.get('correspondence', '')), str(record['solver']), record['eta'])


def ordered_settings(records: Sequence[Record]) -> list[Setting]:
    """Return the records' settings in column order: by correspondence, then the paper's order."""
    seen = list(dict.fromkeys(setting_key(record) for record in records))
    order = {solver: index for index, solver in enumerate(PAPER_SOLVERS)}
    return sorted(seen, key=lambda k: (k[0], order.get(k[1], 9), k[2] or 0))


def several_correspondences(records: Sequence[Record]) -> bool:
    """Return whether the records use more than one correspondence (labels then name it)."""
    return len({str(r.get('correspondence', '')) for r in records}) > 1


def column_label(setting: Setting, several: bool) -> str:
    """Return a setting's column label, with its correspondence when there are several."""
    correspondence, solver, eta = setting
    label = setting_label(solver, eta)
    return f'{correspondence} {label}' if several and correspondence else label


def paper_setting_column(setting: Setting) -> int | None:
    """Return the setting's column in the PIC paper's tables, or None for a solver it has not."""
    solver, eta = setting[1], setting[2]
    if solver not in PAPER_SOLVERS:
        return None
    return paper_column(solver, eta or 0)


def text_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Return rows as plain-text columns under a header and a rule of dashes."""
    body = [list(header)] + [list(row) for row in rows]
    widths = [max(len(row[i]) for row in body) for i in range(len(header))]
    lines = ['  '.join(cell.ljust(width) for cell, width in zip(row, widths)) for row in body]
    lines.insert(1, '  '.join('-' * width for width in widths))
    return '\n'.join(line.rstrip() for line in lines)


__all__ = [
    'PAPER_SOLVERS',
    'Record',
    'Setting',
    'column_label',
    'ordered_settings',
    'paper_setting_column',
    'setting_key',
    'setting_label',
    'several_correspondences',
    'text_table',
]
