"""
Plain-text tables of ``evaluate`` and ``bench`` results (the JSON is the machine-readable form).

The Pose Accuracy table is laid out like the PIC paper's Table I, with the paper's published value
in brackets beside ours where the paper has one.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from pic_ros.evaluation import paper_column, PAPER_PACC, PAPER_PACC_MEANS, PAPER_TASKS

Record = Mapping[str, Any]


def setting_label(solver: str, eta: int | None) -> str:
    """
    Return the column label of a solver setting.

    :param solver: ``fabrik``, ``pic`` or ``pics``.
    :param eta: η (used for ``pics``).
    :return: ``FABRIK``, ``PIC`` or ``PICs(η=k)``.
    """
    if solver == 'pics':
        return f'PICs(η={eta})'
    return {'fabrik': 'FABRIK', 'pic': 'PIC'}.get(solver, solver)


def _number(value: float, digits: int = 2) -> str:
    return '–' if value is None or not math.isfinite(value) else f'{value:.{digits}f}'


def _settings(records: Sequence[Record]) -> list[tuple[str, int | None]]:
    seen: list[tuple[str, int | None]] = []
    for record in records:
        key = (record['solver'], record['eta'])
        if key not in seen:
            seen.append(key)
    order = {'fabrik': 0, 'pic': 1, 'pics': 2}
    return sorted(seen, key=lambda k: (order.get(k[0], 9), k[1] or 0))


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    body = [list(header)] + [list(row) for row in rows]
    widths = [max(len(row[i]) for row in body) for i in range(len(header))]
    lines = ['  '.join(cell.ljust(width) for cell, width in zip(row, widths)) for row in body]
    lines.insert(1, '  '.join('-' * width for width in widths))
    return '\n'.join(line.rstrip() for line in lines)


def pose_accuracy_table(records: Sequence[Record]) -> str:
    """
    Format Pacc per robot x recording x setting, with the paper's values in brackets.

    :param records: ``evaluate`` records.
    :return: The table, then the pooled means over all segments (the paper's "method mean").
    """
    settings = _settings(records)
    by_key = {(r['robot'], r['recording'], r['solver'], r['eta']): r for r in records}
    robots = list(dict.fromkeys(r['robot'] for r in records))
    recordings = list(dict.fromkeys(r['recording'] for r in records))
    header = ['robot', 'recording'] + [setting_label(*s) for s in settings]
    rows = []
    for robot in robots:
        for recording in recordings:
            cells = [robot, f'{recording} ({PAPER_TASKS[recording]})'
                     if recording in PAPER_TASKS else recording]
            for solver, eta in settings:
                record = by_key.get((robot, recording, solver, eta))
                if record is None:
                    cells.append('')
                    continue
                text = f"{_number(record['pacc_paper'])} ({_number(record['pacc_paper_std'])})"
                paper = PAPER_PACC.get((robot, PAPER_TASKS.get(recording, '')))
                if paper is not None:
                    text += f' [{paper[paper_column(solver, eta or 0)]:.2f}]'
                cells.append(text)
            rows.append(cells)
    for label, scope in (('mean, Baxter + YuMi', ('baxter', 'yumi')), ('mean, all robots', None)):
        cells = [label, 'all segments']
        any_value = False
        for solver, eta in settings:
            values = [
                value
                for r in records
                if r['solver'] == solver and r['eta'] == eta
                and (scope is None or r['robot'] in scope)
                for value in r['segment_pacc_paper']
                if math.isfinite(value)
            ]
            text = _number(float(np.mean(values))) if values else '–'
            any_value = any_value or bool(values)
            if scope is not None:
                text += f' [{PAPER_PACC_MEANS[paper_column(solver, eta or 0)]:.2f}]'
            cells.append(text)
        if any_value:
            rows.append(cells)
    title = (
        'Pose accuracy Pacc: share of (frame x arm) samples, both arms, with '
        '(θ_human - θ_robot)² ≤ 0.087 rad²; mean (population std) over segments; '
        '[PIC paper, 4-link models without joint limits]'
    )
    return title + '\n' + _table(header, rows)


def _pooled(group: Sequence[Record], key: str, index: int | None = None) -> float:
    """Average a per-recording value over recordings, weighted by their segment counts."""
    weights = np.array([max(r['segments'], 0) for r in group], dtype=float)
    values = np.array([r[key] if index is None else r[key][index] for r in group], dtype=float)
    keep = np.isfinite(values) & (weights > 0)
    if not np.any(keep):
        return float('nan')
    return float(np.average(values[keep], weights=weights[keep]))


def metrics_table(records: Sequence[Record]) -> str:
    """
    Format the other metrics per robot x setting, pooled over recordings.

    Segment-based metrics are averaged over every segment; counts are summed; solve-time
    percentiles are the worst recording's.

    :param records: ``evaluate`` records.
    :return: The table.
    """
    settings = _settings(records)
    robots = list(dict.fromkeys(r['robot'] for r in records))
    header = [
        'robot', 'solver', 'frames', 'Pacc', 'Pacc task', 'elbow MAE rad', 'dir err deg (up/fore)',
        'wrist err cm', 'limit viol.', 'jump frames', 'solve ms p50', 'p99',
    ]
    rows = []
    for robot in robots:
        for solver, eta in settings:
            group = [
                r
                for r in records
                if r['robot'] == robot and (r['solver'], r['eta']) == (solver, eta)
            ]
            if not group:
                continue
            upper = _pooled(group, 'dir_err_deg', 0)
            fore = _pooled(group, 'dir_err_deg', 1)
            rows.append([
                robot,
                setting_label(solver, eta),
                str(sum(r['frames'] for r in group)),
                _number(_pooled(group, 'pacc_paper')),
                _number(_pooled(group, 'pacc_task')),
                _number(_pooled(group, 'elbow_mae_rad'), 3),
                f'{_number(upper, 1)} / {_number(fore, 1)}',
                _number(_pooled(group, 'ee_err_cm'), 1),
                str(sum(r['limit_violations'] for r in group)),
                str(sum(r['jump_frames'] for r in group)),
                _number(max(r['solve_ms_p50'] for r in group), 3),
                _number(max(r['solve_ms_p99'] for r in group), 3),
            ])
    return 'Other metrics, pooled over recordings (product §6)\n' + _table(header, rows)


def bench_tables(result: Mapping[str, Any]) -> str:
    """
    Format the result of :func:`pic_ros.bench.bench_solvers`.

    :param result: The benchmark result.
    :return: Solve-time table (with ikpy beside PIC), then the throughput table.
    """
    parts = []
    if 'solvers' in result:
        parts.append(_solver_tables(result))
    if 'latency' in result:
        parts.append(latency_table(result['latency']))
    environment = result.get('environment', {})
    parts.append(', '.join(f'{key} {value}' for key, value in environment.items()))
    return '\n\n'.join(part for part in parts if part)


def latency_table(rows: Sequence[Record]) -> str:
    """
    Format end-to-end latency results (pipeline and floor side by side).

    :param rows: Records of :func:`pic_ros.ros.latency_bench.run_latency_bench`.
    :return: The table.
    """
    body = [
        [
            r['source'], f"{r['rate_hz']:.0f}", 'pic_ros pipeline' if r['path'] == 'pic_ros'
            else 'floor (raw echo)', str(r['sent']), str(r['drops']), _number(r['p50_ms']),
            _number(r['p99_ms']), _number(r['max_ms']), r['matching'],
        ]
        for r in rows
    ]
    header = ['input', 'Hz', 'path', 'sent', 'drops', 'p50 ms', 'p99 ms', 'max ms', 'matching']
    return (
        'End-to-end latency across processes: tracker message sent -> JointTrajectory received\n'
        + _table(header, body)
    )


def _solver_tables(result: Mapping[str, Any]) -> str:
    ikpy: dict[str, list[Record]] = {}
    for row in result.get('ikpy', []):
        ikpy.setdefault(row['robot'], []).append(row)
    rows = []
    for row in result['solvers']:
        peer = ''
        ratio = ''
        if row['solver'] == 'pic' and row['robot'] in ikpy:
            peers = [p for p in ikpy[row['robot']] if 'ms_p50' in p]
            if peers:
                p50 = float(np.median([p['ms_p50'] for p in peers]))
                p99 = float(max(p['ms_p99'] for p in peers))
                peer = f'{p50:.2f} / {p99:.2f} (n={sum(p["solves"] for p in peers)})'
                ratio = f'{p50 / row["ms_p50"]:.0f}x'
        rows.append([
            row['robot'],
            setting_label(row['solver'], row['eta']),
            str(row['arm_solves']),
            _number(row['ms_p50'], 3),
            _number(row['ms_p99'], 3),
            _number(row['ms_max'], 2),
            peer,
            ratio,
        ])
    solve = _table(
        ['robot', 'solver', 'arm solves', 'p50 ms', 'p99 ms', 'max ms', 'ikpy p50 / p99 ms',
         'ikpy / PIC p50'],
        rows,
    )
    throughput = _table(
        ['robot', 'solver', 'frames', 'frames/s', 'arms'],
        [
            [r['robot'], setting_label(r['solver'], r['eta']), str(r['frames']),
             _number(r['frames_per_s'], 0), str(r['arms'])]
            for r in result['throughput']
        ],
    )
    return (
        'Per-arm solve time (point solver + joint recovery) on '
        f"{', '.join(result.get('recordings', []))}\n{solve}\n\n"
        f'Offline pipeline throughput (evaluate)\n{throughput}'
    )
