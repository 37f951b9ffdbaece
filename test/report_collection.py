"""A collection of ``report --collect`` written by hand, shaped like the commands' JSON output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pic_ros_tools.results_collection import LIVE, META_FILE, SOURCES

FIGURES = {
    # robot: per-recording Pacc, contacts without / with, live Pacc, live elbow MAE,
    # joined per arm controller, accepted, solve p50 [ms]
    'baxter': ((1.0, 0.998), (50, 4), (0, 0), 0.83, 0.155,
               {'left_arm_controller': 9, 'right_arm_controller': 16}, 2193, 0.297),
    'tiago': ((1.0, 1.0), (3369, 0), (0, 0), 0.94, 0.097, {'arm_controller': 8}, 2146, 0.368),
}
"""The figures the README's table shows."""

RECORDINGS = ('assembly1', 'body_tracking_ergonomics')
"""The recordings of the offline records."""

ELBOW_MAE = (0.02, 0.04)
"""Elbow MAE with the avoidance per recording [rad]."""

ACTING = (0.25, 0.5)
"""Share of frames where the avoidance acted, per recording."""

CONTROLLER_NOTES = {
    # per arm controller: segment violations, delay p99 [ms], delay max [ms]
    'left_arm_controller': (8, 32.0, 147.0),
    'right_arm_controller': (9, 36.4, 120.0),
    'arm_controller': (3, 51.0, 142.0),
}
"""The live run's notes per arm controller beside the joins."""


def record(recording: str, robot: str, solver: str, pacc: float, contacts: int,
           elbow: float = 0.01, acting: float = 0.0) -> dict:
    """Return one result of ``evaluate --json``: the fields the tables read, and some others."""
    return {
        'recording': recording, 'robot': robot, 'correspondence': 'direction', 'solver': solver,
        'eta': 0, 'segments': 10, 'frames': 1000, 'pacc_paper': pacc, 'pacc_paper_std': 0.0,
        'elbow_mae_rad': elbow, 'self_contact_frames': contacts, 'solve_ms_p50': 0.3,
        'avoided_share': acting, 'segment_pacc_paper': [pacc] * 10,
    }


def write_json(path: Path, value: Any) -> None:
    """Write a value as JSON."""
    path.write_text(json.dumps(value), encoding='utf-8')


def write_collection(directory: Path, robots: tuple[str, ...] = ('baxter', 'tiago')) -> Path:
    """Write a collection shaped like the commands' real JSON output, and its meta.json."""
    directory.mkdir(parents=True, exist_ok=True)
    for robot in robots:
        paccs, without, with_, live_pacc, live_mae, joined, accepted, p50 = FIGURES[robot]
        offline = [
            record(n, robot, 'pic', p, c, e, a)
            for n, p, c, e, a in zip(RECORDINGS, paccs, with_, ELBOW_MAE, ACTING)
        ]
        offline.append(record('assembly1', robot, 'fabrik', 0.2, 999))  # not the tables' solver
        write_json(directory / f'offline_{robot}.json', {'results': offline})
        margin0 = [record(n, robot, 'pic', p, c) for n, p, c in zip(RECORDINGS, paccs, without)]
        write_json(directory / f'offline_margin0_{robot}.json', {'results': margin0})
        run: dict[str, Any] = {'clock': 'sim', 'head_controller_joined': 12,
                               'head_controller_accepted': accepted, 'head_controller_rejected': 1,
                               'publisher_left_rejected': 5, 'sim_slipped_s': 0.0}
        for controller, count in joined.items():
            beyond, p99, largest = CONTROLLER_NOTES[controller]
            run.update({
                f'{controller}_joined': count, f'{controller}_accepted': accepted,
                f'{controller}_rejected': 0, f'{controller}_segment_violations': beyond,
                f'{controller}_delay_p50_ms': 12.0, f'{controller}_delay_p99_ms': p99,
                f'{controller}_delay_max_ms': largest,
            })
        arms = {name: {'lag_s': 0.3, 'lag_s_p50': lag, 'lag_s_p90': 0.4, 'robot': {}}
                for name, lag in list(zip(('left', 'right'), (0.370, 0.118)))[:len(joined)]}
        write_json(directory / f'live_{robot}.json', {'live': [{
            'live': {'recording': 'synthetic1_bag', 'robot': robot, 'solver': 'pic',
                     'pacc_paper': live_pacc, 'elbow_mae_rad': live_mae,
                     'self_contact_frames': 0},
            'offline': record('synthetic1_bag', robot, 'pic', 1.0, 0),
            'arms': arms, 'run': run, 'warnings': ['a join'], 'valid': False,
            'bound': {'bound_pacc': 0.96, 'bound_elbow_mae_rad': 0.08,
                      'elbow_mae_live_over_bound': live_mae / 0.08},
        }]})
        write_json(directory / f'bench_{robot}.json', {
            'solvers': [{'robot': robot, 'solver': 'pic', 'eta': 0, 'arm_solves': 14520,
                         'ms_p50': p50, 'ms_p99': 0.5, 'ms_max': 2.0}],
            'ikpy': [],
            'throughput': [{'robot': robot, 'solver': 'pic', 'eta': 0, 'frames': 7260,
                            'frames_per_s': 1395.8, 'arms': len(joined)}],
            'environment': {'python': '3.11.7'},
            'recordings': ['assembly1'],
            'skeleton': [{'recording': 'synthetic1_bag', 'messages': 1099, 'skeletons': 1099,
                          'ms_p50': 0.092, 'ms_p99': 0.31, 'ms_max': 1.2}],
        })
    write_json(directory / META_FILE, {
        'started': '2026-11-27T17:00:00+00:00', 'finished': '2026-11-27T17:20:00+00:00',
        'commit': 'abc1234', 'modified': False, 'cores': 2, 'load_before': [3.1, 2.0, 1.5],
        'load_after': [6.2, 4.0, 2.0], 'robots': list(robots),
        'recordings': list(RECORDINGS), 'skipped': [],
        'commands': [
            {'source': s, 'robot': r, 'status': 0, 'load_before': [4.0, 2.0, 1.0],
             'load_after': [7.5, 3.0, 1.0]} for s in SOURCES for r in robots
        ],
    })
    return directory


def write_partial_collection(directory: Path) -> Path:
    """
    Write a collection with sources missing in every way a real one can miss them.

    No live run of Baxter or TIAGo, TIAGo's bench failed (exit status 1, no JSON), Baxter's
    offline run without the avoidance unreadable, and the live source skipped.
    """
    write_collection(directory)
    for robot in ('baxter', 'tiago'):
        (directory / f'live_{robot}.json').unlink()
    (directory / 'bench_tiago.json').unlink()
    (directory / 'offline_margin0_baxter.json').write_text('{"results": [', encoding='utf-8')
    meta = json.loads((directory / META_FILE).read_text(encoding='utf-8'))
    meta['skipped'] = [LIVE]
    for entry in meta['commands']:
        if entry['source'] == 'bench' and entry['robot'] == 'tiago':
            entry['status'] = 1
    (directory / META_FILE).write_text(json.dumps(meta), encoding='utf-8')
    return directory
