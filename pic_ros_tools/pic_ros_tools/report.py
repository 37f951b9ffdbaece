"""
Plain-text tables of ``evaluate`` and ``bench`` results (the JSON is the machine-readable form).

The Pose Accuracy table is laid out like the PIC paper's Table I, with the paper's published value
in brackets beside ours where the paper has one. Every accuracy figure is against the person as
tracked (unsmoothed); the reference table puts the figures against the person as smoothed beside
them (``docs/method.md#metrics``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math
from types import MappingProxyType
from typing import Any, Final

import numpy as np
from pic_ros_tools.evaluation import (
    histogram_percentile_ms,
    PAPER_PACC,
    PAPER_PACC_MEANS,
    PAPER_TASKS,
    SMOOTHED_PREFIX,
)
from pic_ros_tools.occlusion_report import occlusion_table
from pic_ros_tools.setting_columns import (
    column_label,
    ordered_settings,
    paper_setting_column,
    Record,
    Setting,
    setting_key,
    setting_label,
    several_correspondences,
    text_table,
)


def _number(value: float | None, digits: int = 2) -> str:
    return '–' if value is None or not math.isfinite(value) else f'{value:.{digits}f}'


def _paper_pacc(setting: Setting, robot: str, recording: str) -> str:
    """Return the paper's Pacc of a setting on a robot's task, in brackets, or ''."""
    paper = PAPER_PACC.get((robot, PAPER_TASKS.get(recording, '')))
    column = paper_setting_column(setting)
    return '' if paper is None or column is None else f' [{paper[column]:.2f}]'


def _pacc_cell(record: Record | None, setting: Setting, robot: str, recording: str) -> str:
    """Return one setting's cell of a recording's row: Pacc (std) [the paper's]."""
    if record is None:
        return ''
    return (
        f"{_number(record['pacc_paper'])} ({_number(record['pacc_paper_std'])})"
        + _paper_pacc(setting, robot, recording)
    )


def _pacc_mean_row(
    records: Sequence[Record], settings: Sequence[Setting], label: str, scope: Sequence[str] | None
) -> list[str] | None:
    """Return a summary row: Pacc pooled over every segment per setting; None without any."""
    cells = [label, 'all segments']
    any_value = False
    for setting in settings:
        values = [
            value
            for r in records
            if setting_key(r) == setting and (scope is None or r['robot'] in scope)
            for value in r['segment_pacc_paper']
            if value is not None and math.isfinite(value)
        ]
        text = _number(float(np.mean(values))) if values else '–'
        any_value = any_value or bool(values)
        column = paper_setting_column(setting)
        if scope is not None and column is not None:
            text += f' [{PAPER_PACC_MEANS[column]:.2f}]'
        cells.append(text)
    return cells if any_value else None


def pose_accuracy_table(records: Sequence[Record]) -> str:
    """
    Format Pacc per robot x recording x setting, with the paper's values in brackets.

    :param records: ``evaluate`` records.
    :return: The table, then the pooled means over all segments (the paper's "method mean").
    """
    settings = ordered_settings(records)
    several = several_correspondences(records)
    by_key = {(r['robot'], r['recording']) + setting_key(r): r for r in records}
    header = ['robot', 'recording'] + [column_label(s, several) for s in settings]
    rows = []
    for robot in dict.fromkeys(r['robot'] for r in records):
        for recording in dict.fromkeys(r['recording'] for r in records):
            task = PAPER_TASKS.get(recording)
            rows.append([robot, f'{recording} ({task})' if task else recording] + [
                _pacc_cell(by_key.get((robot, recording) + s), s, robot, recording)
                for s in settings
            ])
    for label, scope in (('mean, Baxter + YuMi', ('baxter', 'yumi')), ('mean, all robots', None)):
        mean = _pacc_mean_row(records, settings, label, scope)
        if mean is not None:
            rows.append(mean)
    title = (
        'Pose accuracy Pacc against the person as tracked: share of (frame x arm) samples, both '
        'arms, with (θ_human - θ_robot)² ≤ 0.087 rad²; mean (population std) over segments; '
        '[PIC paper, 4-link models without joint limits]'
    )
    return title + '\n' + text_table(header, rows)


def _pooled(group: Sequence[Record], key: str, index: int | None = None) -> float:
    """Average a per-recording value over recordings, weighted by their segment counts."""
    weights = np.array([max(r['segments'], 0) for r in group], dtype=float)
    raw = [r[key] if index is None else r[key][index] for r in group]
    values = np.array([np.nan if v is None else v for v in raw], dtype=float)
    keep = np.isfinite(values) & (weights > 0)
    if not np.any(keep):
        return float('nan')
    return float(np.average(values[keep], weights=weights[keep]))


def _groups(records: Sequence[Record]) -> list[tuple[str, Setting, list[Record]]]:
    robots = list(dict.fromkeys(r['robot'] for r in records))
    groups = []
    for robot in robots:
        for setting in ordered_settings(records):
            group = [r for r in records if r['robot'] == robot and setting_key(r) == setting]
            if group:
                groups.append((robot, setting, group))
    return groups


def _solve_ms(group: Sequence[Record], percentile: float) -> float:
    return histogram_percentile_ms((r.get('solve_us_histogram') or [] for r in group), percentile)


def metrics_table(records: Sequence[Record]) -> str:
    """
    Format the other metrics per robot x setting, pooled over recordings.

    Segment-based metrics are averaged over every segment; counts are summed; solve-time
    percentiles are pooled over every solve (CPU time per arm solve).

    :param records: ``evaluate`` records.
    :return: The table.
    """
    several = several_correspondences(records)
    header = [
        'robot', 'setting', 'frames', 'Pacc', 'Pacc task', 'elbow MAE rad all / free',
        'dir err deg all (up/fore)', 'free (up/fore)', 'wrist err cm', 'free frames',
        'limit viol.', 'jump frames', 'avoiding', 'elbow MAE avoiding', 'min dist cm',
        'self-contact frames', 'solve ms p50', 'p99',
    ]
    rows = []
    for robot, setting, group in _groups(records):
        free_share = _pooled(group, 'free_share')
        avoided = _pooled(group, 'avoided_share')
        distances = [r.get('min_distance_cm') for r in group]
        nearest = min((d for d in distances if d is not None and math.isfinite(d)), default=None)
        contacts = [r.get('self_contact_frames') for r in group]
        rows.append([
            robot,
            column_label(setting, several),
            str(sum(r['frames'] for r in group)),
            _number(_pooled(group, 'pacc_paper')),
            _number(_pooled(group, 'pacc_task')),
            f"{_number(_pooled(group, 'elbow_mae_rad'), 3)} / "
            f"{_number(_pooled(group, 'elbow_mae_free_rad'), 3)}",
            f"{_number(_pooled(group, 'dir_err_deg', 0), 1)} / "
            f"{_number(_pooled(group, 'dir_err_deg', 1), 1)}",
            f"{_number(_pooled(group, 'dir_err_free_deg', 0), 1)} / "
            f"{_number(_pooled(group, 'dir_err_free_deg', 1), 1)}",
            _number(_pooled(group, 'ee_err_cm'), 1),
            f'{100 * free_share:.0f} %' if math.isfinite(free_share) else '–',
            str(sum(r['limit_violations'] for r in group)),
            str(sum(r['jump_frames'] for r in group)),
            f'{100 * avoided:.1f} %' if math.isfinite(avoided) else '–',
            _number(_pooled(group, 'elbow_mae_avoided_rad'), 3),
            _number(nearest, 1) if nearest is not None else '–',
            '–' if None in contacts else str(sum(c for c in contacts if c is not None)),
            _number(_solve_ms(group, 50.0), 3),
            _number(_solve_ms(group, 99.0), 3),
        ])
    return (
        'Other metrics, pooled over recordings (free: samples with no joint of the arm at a '
        'position limit and no avoidance acting; avoiding: frames where the self-collision or '
        'workspace avoidance moved the answer, and the elbow error there; min dist: the closest '
        'two links came; self-contact frames: MuJoCo contacts on the URDF shapes; solve time: '
        'CPU time per arm solve, avoidance included, pooled over every solve)\n'
        + text_table(header, rows)
    )


def _smoothings(records: Sequence[Record]) -> str:
    """Name the smoothing(s) the records were made with (``exponential 0.1 s``)."""
    names = []
    for record in records:
        kind = record.get('smoothing')
        if kind is None:
            continue
        tau = record.get('time_constant_s')
        names.append(f'{kind} {tau:g} s' if isinstance(tau, (int, float)) else str(kind))
    return ', '.join(dict.fromkeys(names)) or 'as run'


def reference_table(records: Sequence[Record]) -> str:
    """
    Format the accuracy figures against the person as tracked and as smoothed, side by side.

    Pooled over recordings per robot x setting, like :func:`metrics_table`; each cell is
    ``tracked / smoothed``. The difference is what the smoothing costs (its lag, the corners it
    cuts) or saves (tracker noise the robot does not copy).

    :param records: ``evaluate`` records (records without the smoothed figures show ``–``).
    :return: The table.
    """
    several = several_correspondences(records)
    header = [
        'robot', 'setting', 'Pacc', 'Pacc task', 'elbow MAE rad', 'elbow MAE free rad',
        'dir err up deg', 'dir err fore deg', 'wrist err cm',
    ]
    fields = (
        ('pacc_paper', None, 2), ('pacc_task', None, 2), ('elbow_mae_rad', None, 3),
        ('elbow_mae_free_rad', None, 3), ('dir_err_deg', 0, 1), ('dir_err_deg', 1, 1),
        ('ee_err_cm', None, 1),
    )
    rows = []
    for robot, setting, group in _groups(records):
        cells = [robot, column_label(setting, several)]
        for key, index, digits in fields:
            smoothed = SMOOTHED_PREFIX + key
            pooled = (
                _pooled(group, smoothed, index) if all(smoothed in r for r in group)
                else float('nan')
            )
            cells.append(
                f'{_number(_pooled(group, key, index), digits)} / {_number(pooled, digits)}'
            )
        rows.append(cells)
    return (
        'Reference person: as tracked (unsmoothed; every other table) / as smoothed (what the '
        f'solver was given), pooled over recordings; smoothing: {_smoothings(records)}\n'
        + text_table(header, rows)
    )


def limit_table(records: Sequence[Record], threshold: float = 0.005) -> str:
    """
    Format the share of frames each joint spends at a position limit, per robot x setting.

    :param records: ``evaluate`` records.
    :param threshold: Joints below this share are left out.
    :return: The table (one row per robot x setting; "none" when no joint reaches a limit).
    """
    several = several_correspondences(records)
    rows = []
    for robot, setting, group in _groups(records):
        weights: dict[str, list[tuple[float, int]]] = {}
        for record in group:
            for joint, share in (record.get('limit_share') or {}).items():
                weights.setdefault(joint, []).append((float(share), int(record['frames'])))
        shares = {
            joint: sum(s * n for s, n in pairs) / max(sum(n for _, n in pairs), 1)
            for joint, pairs in weights.items()
        }
        listed = [f'{joint} {100 * share:.0f} %' for joint, share in shares.items()
                  if share >= threshold]
        rows.append([robot, column_label(setting, several), ', '.join(listed) or 'none'])
    return (
        'Share of solved frames with a joint at a position limit (per joint)\n'
        + text_table(['robot', 'setting', 'joints at a limit'], rows)
    )


def suite_table(records: Sequence[Record]) -> str:
    """
    Format the synthetic suite: per robot x setting, the mean and the worst take.

    :param records: ``evaluate`` records, one per take.
    :return: The table.
    """
    several = several_correspondences(records)
    header = [
        'robot', 'setting', 'takes', 'Pacc mean / min', 'elbow MAE rad mean / max',
        'free mean / max', 'dir err deg mean / max', 'wrist err cm', 'limit viol.',
        'jump frames', 'solve ms p50', 'p99',
    ]
    rows = []
    for robot, setting, group in _groups(records):
        def values(
            key: str, index: int | None = None, group: list[Record] = group
        ) -> np.ndarray:
            raw = [r[key] if index is None else r[key][index] for r in group]
            return np.array([np.nan if v is None else v for v in raw], dtype=float)

        pacc = values('pacc_paper')
        mae = values('elbow_mae_rad')
        free = values('elbow_mae_free_rad')
        direction = np.fmax(values('dir_err_deg', 0), values('dir_err_deg', 1))
        rows.append([
            robot,
            column_label(setting, several),
            str(len(group)),
            f'{_number(np.nanmean(pacc))} / {_number(np.nanmin(pacc))}',
            f'{_number(np.nanmean(mae), 3)} / {_number(np.nanmax(mae), 3)}',
            f'{_number(np.nanmean(free), 3)} / {_number(np.nanmax(free), 3)}',
            f'{_number(np.nanmean(direction), 1)} / {_number(np.nanmax(direction), 1)}',
            _number(float(np.nanmean(values('ee_err_cm'))), 1),
            str(sum(r['limit_violations'] for r in group)),
            str(sum(r['jump_frames'] for r in group)),
            _number(_solve_ms(group, 50.0), 3),
            _number(_solve_ms(group, 99.0), 3),
        ])
    return (
        'Synthetic robustness suite: per take, then the mean and the worst take (direction '
        'error: the larger of upper arm and forearm)\n' + text_table(header, rows)
    )


def evaluation_tables(records: Sequence[Record], suite: bool = False) -> str:
    """
    Format every table of ``evaluate``.

    :param records: ``evaluate`` records.
    :param suite: The records are the synthetic suite's takes.
    :return: The tables, separated by blank lines.
    """
    if suite:
        parts = [suite_table(records), reference_table(records), metrics_table(records),
                 limit_table(records)]
    else:
        parts = [pose_accuracy_table(records), reference_table(records), metrics_table(records),
                 limit_table(records), occlusion_table(records)]
    return '\n\n'.join(part for part in parts if part)


def bench_tables(result: Mapping[str, Any]) -> str:
    """
    Format the result of :func:`pic_ros_tools.bench.bench_solvers`.

    :param result: The benchmark result.
    :return: Solve-time table (with ikpy beside PIC), then the throughput table.
    """
    parts = []
    if 'solvers' in result:
        parts.append(_solver_tables(result))
    if 'skeleton' in result:
        parts.append(skeleton_table(result['skeleton']))
    if 'latency' in result:
        parts.append(latency_table(result['latency']))
    if 'stress' in result:
        parts.append(stress_table(result['stress']))
    environment = result.get('environment', {})
    parts.append(', '.join(f'{key} {value}' for key, value in environment.items()))
    return '\n\n'.join(part for part in parts if part)


def skeleton_table(rows: Sequence[Record]) -> str:
    """
    Format the skeleton processing time per tracker message.

    :param rows: Records of :func:`pic_ros_tools.bench.bench_skeleton`.
    :return: The table.
    """
    body = [
        [r['recording'], str(r['messages']), str(r['skeletons']), _number(r['ms_p50'], 3),
         _number(r['ms_p99'], 3), _number(r['ms_max'], 2)]
        for r in rows
    ]
    return (
        'Skeleton processing per Azure Kinect MarkerArray (CDR bytes -> body-frame skeleton, '
        'CPU time)\n'
        + text_table(['recording', 'messages', 'skeletons', 'p50 ms', 'p99 ms', 'max ms'], body)
    )


_LATENCY_PATHS: Final = MappingProxyType({
    'floor': 'floor (raw echo)',
    'pic_ros': 'pic_ros pipeline (timer 14 Hz, min_interval 1 ms)',
    'pic_ros_defaults': 'pic_ros pipeline, shipped defaults',
})
"""The latency bench's paths as the table names them."""


def latency_table(rows: Sequence[Record]) -> str:
    """
    Format end-to-end latency results (pipeline and floor side by side).

    :param rows: Records of :func:`pic_ros_tools.ros.latency_bench.run_latency_bench`.
    :return: The table.
    """
    body = [
        [
            r['source'], f"{r['rate_hz']:.0f}", _LATENCY_PATHS.get(r['path'], r['path']),
            str(r['sent']), str(r['drops']), _number(r['p50_ms']),
            _number(r['p99_ms']), _number(r['max_ms']), str(r.get('superseded', 0)),
            str(r['unpaired']),
        ]
        for r in rows
    ]
    header = [
        'input', 'Hz', 'path', 'sent', 'drops', 'p50 ms', 'p99 ms', 'max ms', 'superseded',
        'unpaired answers',
    ]
    return (
        'End-to-end latency across processes: tracker message sent -> JointTrajectory received\n'
        + text_table(header, body)
    )


def stress_table(rows: Sequence[Record]) -> str:
    """
    Format stress runs: every frame accounted for, command timing, identity after gaps.

    :param rows: Records of :func:`pic_ros_tools.ros.stress_bench.run_stress_bench`.
    :return: The table.
    """
    body = []
    for r in rows:
        dropped = ', '.join(f'{key} {value}' for key, value in sorted(r['dropped'].items()))
        socket_drops = '' if r['lost_in_socket'] is None else f" ({r['lost_in_socket']} in socket)"
        body.append([
            r['source'], f"{r['rate_hz']:.0f}", f"{r['seconds']:.0f}", 'yes' if r['hog'] else 'no',
            str(r['sent']), str(r['frames_in']), f"{r['lost_upstream']}{socket_drops}",
            str(r['unaccounted']), str(r['skeletons_out']), dropped or '-',
            str(r['unprocessed']),
            f"{r['handed_to_solver']} / {r['solved']}",
            ', '.join(f'{key} {value}' for key, value in sorted(r['solver_dropped'].items()))
            or '-',
            str(r['solver_unprocessed']),
            f"{_number(r['interarrival_p50_ms'])} / {_number(r['interarrival_p99_ms'])} / "
            f"{_number(r['interarrival_max_ms'])}",
            f"{r['interarrival_p99_ms'] / r['period_ms']:.2f}",
            f"{r['stranger_frames_sent']} / {r['identity_switches']}",
        ])
    header = [
        'input', 'Hz', 's', 'hog', 'sent', 'frames_in', 'lost_upstream', 'unaccounted',
        'skeletons', 'dropped (counted)', 'unprocessed', 'to solver / solved',
        'solver dropped (counted)', 'solver unprocessed', 'command gap p50 / p99 / max ms',
        'p99 / period', 'second-figure frames / identity switches',
    ]
    return (
        'Real-time replay into teleop beside a CPU hog: sent = frames_in + lost_upstream, '
        'frames_in = skeletons + dropped, skeletons = solved + solver dropped\n'
        + text_table(header, body)
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
    solve = text_table(
        ['robot', 'solver', 'arm solves', 'p50 ms', 'p99 ms', 'max ms', 'ikpy p50 / p99 ms',
         'ikpy / PIC p50'],
        rows,
    )
    throughput = text_table(
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
