"""
The generated tables of ``docs/results.md``, rendered from a collection: ``report --results``.

Three blocks, each between ``<!-- report:<name>:begin -->`` and ``<!-- report:<name>:end -->``
(:data:`BLOCKS`), each a table and a paragraph saying what was measured, on which recordings,
under which host load and at which commit (``meta.json``):

- ``offline``: per robot and recording, ``evaluate --solver pic``: Pacc (``pacc_paper``), elbow
  MAE (``elbow_mae_rad``), self-contact frames with ``--self-collision-margin 0`` → default
  (``self_contact_frames``) and the share of frames where the avoidance moved the solvers'
  answer (``avoided_share``); a row *all* per robot: the recordings' mean (contacts summed);
- ``live``: per robot, ``evaluate --live`` on the shipped demo: Pacc, elbow MAE and self-contact
  frames of the live record, lag p50 per arm (``arms.<arm>.lag_s_p50``), and from the run's
  notes per arm controller (robot file order): chunks joined of those accepted, trajectories
  taken beyond a limit (``_segment_violations``), the delay p99 (``_delay_p99_ms``) and the
  largest (``_delay_max_ms``), and every controller's rejected trajectories;
- ``bench``: per robot, ``bench --solver pic``: arm solves, CPU time per arm solve p50 / p99 /
  max, and the offline pipeline's frames per second.

A missing source shows ``–`` in its cells and the paragraph says which and why. Only the marked
blocks of the file change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
import re
from typing import Any, Final

from pic_ros_tools.results_collection import BENCH, LIVE, OFFLINE, WITHOUT_AVOIDANCE
from pic_ros_tools.results_reading import (
    arm_controllers,
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
    paragraph,
    read_text,
    replace_block,
    ReportError,
    TITLES,
    total,
    write_if_changed,
)

BLOCKS: Final = ('offline', 'live', 'bench')
"""The generated blocks, in the file's order."""

COMMAND: Final = '`python -m pic_ros_tools report --results docs/results.md`'
"""How the notes name the command that writes the blocks."""

OFFLINE_HEADER: Final = (
    '| robot | recording | Pacc | elbow MAE [rad] '
    '| self-contact frames, without → with the avoidance | avoidance acting [%] |\n'
    '|---|---|---|---|---|---|'
)
LIVE_HEADER: Final = (
    '| robot | Pacc live | elbow MAE live [rad] | lag p50 per arm [ms] '
    '| chunks joined per arm controller, of accepted | beyond a limit per arm controller '
    '| delay p99 / max [ms] | self-contact frames live | rejected '
    '| bound Pacc / elbow MAE [rad] | live / bound elbow MAE |\n'
    '|---|---|---|---|---|---|---|---|---|---|---|'
)
BENCH_HEADER: Final = (
    '| robot | arm solves | solve p50 [ms] | solve p99 [ms] | solve max [ms] '
    '| imitation [frames/s] |\n'
    '|---|---|---|---|---|---|'
)


def markers(name: str) -> tuple[str, str]:
    """
    Return the marker comments around a generated block.

    :param name: One of :data:`BLOCKS`.
    :return: ``<!-- report:<name>:begin -->`` and ``<!-- report:<name>:end -->``.
    """
    return f'<!-- report:{name}:begin -->', f'<!-- report:{name}:end -->'


def _line(cells: Sequence[str]) -> str:
    return '| ' + ' | '.join(cells) + ' |'


def _by_recording(records: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {str(record.get('recording')): record for record in records}


def _percent(value: Any) -> str:
    share = finite(value)
    return fixed(None if share is None else 100.0 * share, 0)


def _offline_cells(
    with_: Sequence[Mapping[str, Any]], without: Sequence[Mapping[str, Any]]
) -> list[str]:
    contacts = (
        f"{count(total(r.get('self_contact_frames') for r in without))} → "
        f"{count(total(r.get('self_contact_frames') for r in with_))}"
    )
    return [
        fixed(mean(r.get('pacc_paper') for r in with_), 3),
        fixed(mean(r.get('elbow_mae_rad') for r in with_), 3),
        MISSING if contacts == f'{MISSING} → {MISSING}' else contacts,
        _percent(mean(r.get('avoided_share') for r in with_)),
    ]


def offline_table(collection: Collection, robots: Sequence[str]) -> str:
    """
    Format the offline table: per robot one row per recording and one for them all.

    :param collection: The measurements.
    :param robots: Robot names, in row order.
    :return: The Markdown table.
    """
    lines = [OFFLINE_HEADER]
    named = [str(name) for name in collection.meta.get('recordings') or ()]
    for robot in robots:
        with_ = _by_recording(collection.records(OFFLINE, robot))
        without = _by_recording(collection.records(WITHOUT_AVOIDANCE, robot))
        recordings = list(dict.fromkeys([*named, *with_, *without]))
        title = TITLES.get(robot, robot)
        for name in recordings:
            cells = _offline_cells(
                [with_[name]] if name in with_ else [], [without[name]] if name in without else []
            )
            lines.append(_line([title, name, *cells]))
        if len(recordings) != 1:
            lines.append(_line([title, 'all', *_offline_cells(
                [with_[n] for n in recordings if n in with_],
                [without[n] for n in recordings if n in without],
            )]))
    return '\n'.join(lines)


def _per_controller(
    controllers: Sequence[str] | None, run: Mapping[str, Any], suffix: str
) -> list[Any]:
    return [run.get(f'{c}{suffix}') for c in controllers or ()]


def _delay_cell(controllers: Sequence[str] | None, run: Mapping[str, Any]) -> str:
    p99 = [
        v for v in map(finite, _per_controller(controllers, run, '_delay_p99_ms')) if v is not None
    ]
    largest = [
        v for v in map(finite, _per_controller(controllers, run, '_delay_max_ms')) if v is not None
    ]
    low, high = (fixed(min(p99), 0), fixed(max(p99), 0)) if p99 else (MISSING, MISSING)
    worst = fixed(max(largest), 0) if largest else MISSING
    return f"{low if low == high else f'{low}–{high}'} / {worst}"


def _rejected(run: Mapping[str, Any]) -> str:
    counts = [
        value for key, value in run.items()
        if key.endswith('_rejected') and not key.startswith('publisher_')
    ]
    return count(total(counts)) if counts else MISSING


def live_row(robot: str, collection: Collection) -> list[str]:
    """
    Return one robot's cells of the live table.

    :param robot: Robot name.
    :param collection: The measurements.
    :return: Eleven cells, ``–`` where the live record is missing (or its bound).
    """
    records = collection.records(LIVE, robot)
    if not records:
        return [TITLES.get(robot, robot), *[MISSING] * 10]
    record = records[0]
    live = record.get('live') or {}
    run = record.get('run') or {}
    bound = record.get('bound') or {}
    arms = [arm for arm in (record.get('arms') or {}).values() if isinstance(arm, dict)]
    lags = [finite(arm.get('lag_s_p50')) for arm in arms]
    controllers = arm_controllers(robot)
    beyond = _per_controller(controllers, run, '_segment_violations')
    return [
        TITLES.get(robot, robot),
        fixed(live.get('pacc_paper'), 2),
        fixed(live.get('elbow_mae_rad'), 3),
        ' / '.join(fixed(None if lag is None else 1e3 * lag, 0) for lag in lags) or MISSING,
        joined_cell(robot, run),
        ' / '.join(count(value) for value in beyond) or MISSING,
        _delay_cell(controllers, run),
        count(live.get('self_contact_frames')),
        _rejected(run),
        f"{fixed(bound.get('bound_pacc'), 2)} / {fixed(bound.get('bound_elbow_mae_rad'), 3)}",
        fixed(bound.get('elbow_mae_live_over_bound'), 2),
    ]


def live_table(collection: Collection, robots: Sequence[str]) -> str:
    """
    Format the live table, one row per robot.

    :param collection: The measurements.
    :param robots: Robot names, in row order.
    :return: The Markdown table.
    """
    return '\n'.join([LIVE_HEADER, *(_line(live_row(r, collection)) for r in robots)])


def bench_row(robot: str, collection: Collection) -> list[str]:
    """
    Return one robot's cells of the bench table.

    :param robot: Robot name.
    :param collection: The measurements.
    :return: Six cells, ``–`` where the bench row is missing.
    """
    solved = collection.records(BENCH, robot)
    row = solved[0] if solved else {}
    throughput = collection.rows(BENCH, robot, 'throughput')
    rate = finite(throughput[0].get('frames_per_s')) if throughput else None
    return [
        TITLES.get(robot, robot),
        count(row.get('arm_solves')),
        fixed(row.get('ms_p50'), 3),
        fixed(row.get('ms_p99'), 3),
        fixed(row.get('ms_max'), 3),
        MISSING if rate is None else f'{rate:,.0f}',
    ]


def bench_table(collection: Collection, robots: Sequence[str]) -> str:
    """
    Format the bench table, one row per robot.

    :param collection: The measurements.
    :param robots: Robot names, in row order.
    :return: The Markdown table.
    """
    return '\n'.join([BENCH_HEADER, *(_line(bench_row(r, collection)) for r in robots)])


def _measured(collection: Collection) -> str:
    return f'Regenerated by {COMMAND} ({measured_when(collection.meta)}).'


def offline_note(collection: Collection, robots: Sequence[str]) -> str:
    """
    Say what the offline table measured: command, recordings, load, commit, gaps.

    :param collection: The measurements.
    :param robots: The table's robots.
    :return: One paragraph.
    """
    recordings = ', '.join(collection.meta.get('recordings') or ()) or 'unknown recordings'
    return paragraph([
        f'`evaluate --solver pic` on {recordings}, default settings ("without": '
        '`--self-collision-margin 0`); Pacc and elbow MAE with the avoidance, over the scored '
        "frames; acting: share of frames where the avoidance moved the solvers' answer; *all*: "
        'the mean of the recordings, contacts summed.',
        _measured(collection),
        load_sentence(collection.meta, (OFFLINE, WITHOUT_AVOIDANCE)),
        missing_sentence(collection, robots, (OFFLINE, WITHOUT_AVOIDANCE)),
    ])


def live_note(collection: Collection, robots: Sequence[str]) -> str:
    """
    Say what the live table measured: command, load, commit, invalid runs, gaps.

    :param collection: The measurements.
    :param robots: The table's robots.
    :return: One paragraph.
    """
    runs = [record for robot in robots for record in collection.records(LIVE, robot)]
    invalid = sum(1 for record in runs if record.get('valid') is False)
    return paragraph([
        '`evaluate --live --solver pic` on the shipped demo, the five processes on the '
        "simulation's clock; per arm and arm controller in the robot file's order; delay: "
        "arrival − `header.stamp` at the simulated controllers, p99 (the arm controllers' "
        'range) / largest; rejected: trajectories any controller refused.',
        _measured(collection),
        load_sentence(collection.meta, (LIVE,)),
        f'{invalid} of {len(runs)} runs flagged invalid.' if runs else '',
        missing_sentence(collection, robots, (LIVE,)),
    ])


def bench_note(collection: Collection, robots: Sequence[str]) -> str:
    """
    Say what the bench table measured: command, recordings, load, commit, gaps.

    :param collection: The measurements.
    :param robots: The table's robots.
    :return: One paragraph.
    """
    played = [
        ', '.join(str(name) for name in parsed.get('recordings') or ())
        for robot in robots
        if isinstance(parsed := collection.data.get((BENCH, robot)), dict)
    ]
    recordings = next((names for names in played if names), "the paper's recordings")
    return paragraph([
        f'`bench --solver pic --ikpy-frames 0` on {recordings}: CPU time per arm solve (point '
        "solver, joint recovery and the arm's share of the avoidance), pooled over every solve; "
        'imitation: frames per second of wall time through the whole offline pipeline.',
        skeleton_sentence(collection, robots),
        _measured(collection),
        load_sentence(collection.meta, (BENCH,)),
        missing_sentence(collection, robots, (BENCH,)),
    ])


def skeleton_sentence(collection: Collection, robots: Sequence[str]) -> str:
    """
    Say what the skeleton stage cost per tracker message in the first robot's bench run.

    The stage does not depend on the robot: one run's figures (``bench``'s ``skeleton`` rows).

    :param collection: The measurements.
    :param robots: The table's robots, in row order.
    :return: One sentence, or an empty string when no bench run has the rows.
    """
    for robot in robots:
        parsed = collection.data.get((BENCH, robot))
        rows = parsed.get('skeleton') if isinstance(parsed, dict) else None
        if not rows:
            continue
        cells = '; '.join(
            f"{row.get('recording')}: {fixed(row.get('ms_p50'), 3)} / "
            f"{fixed(row.get('ms_p99'), 3)}"
            for row in rows if isinstance(row, dict)
        )
        return (
            'Skeleton processing per Azure Kinect MarkerArray (CDR bytes to the body-frame '
            f'skeleton, CPU time, p50 / p99 ms): {cells}.'
        )
    return ''


RENDERERS: Final[Mapping[str, tuple[
    Callable[[Collection, Sequence[str]], str], Callable[[Collection, Sequence[str]], str]
]]] = {
    'offline': (offline_table, offline_note),
    'live': (live_table, live_note),
    'bench': (bench_table, bench_note),
}
"""Table and note of each block."""


def block_names(label: str = '') -> tuple[str, ...]:
    """
    Return the names of one set of blocks: :data:`BLOCKS`, or each with ``-<label>``.

    A label keeps a second run's tables beside the first (``live-busy``: the same tables of a
    run on a loaded host).

    :param label: Lower-case letters, digits and ``_``, or '' (none).
    :return: The block names, in :data:`BLOCKS` order.
    :raises ReportError: If the label has other characters.
    """
    if label and not re.fullmatch(r'[a-z0-9_]+', label):
        raise ReportError(f'a block label is lower-case letters, digits and _, got {label!r}')
    return tuple(f'{name}-{label}' if label else name for name in BLOCKS)


def results_tables(
    directory: Path, robots: Sequence[str] | None = None, label: str = ''
) -> dict[str, str]:
    """
    Render every block of ``docs/results.md`` from a collection directory.

    :param directory: The collection.
    :param robots: Row robots (default: the collection's, else
        :data:`~pic_ros_tools.results_reading.ROBOT_ORDER`).
    :param label: Which set of blocks (:func:`block_names`).
    :return: Per block name, the table, a blank line and its note.
    """
    collection, chosen = load_collection(directory, robots)
    return {
        name: table(collection, chosen) + '\n\n' + note(collection, chosen)
        for name, (table, note) in zip(block_names(label), RENDERERS.values())
    }


def replace_tables(text: str, blocks: Mapping[str, str], where: str = 'the file') -> str:
    """
    Put each block between its markers, the rest of the text as it was.

    :param text: The file's text.
    :param blocks: New content per block name.
    :param where: The file, for the error.
    :return: The text with the blocks replaced.
    :raises ReportError: If a block's markers are not there once each, begin before end.
    """
    for name, block in blocks.items():
        begin, end = markers(name)
        text = replace_block(text, begin, end, block, where)
    return text


def read_results(path: Path, label: str = '') -> str:
    """
    Read a file that can take every block of a set (:func:`block_names`).

    :param path: The file (``docs/results.md``).
    :param label: Which set of blocks.
    :return: Its text.
    :raises ReportError: If it cannot be read or a block's markers are missing.
    """
    text = read_text(path)
    replace_tables(text, dict.fromkeys(block_names(label), ''), str(path))
    return text


def write_results(path: Path, blocks: Mapping[str, str]) -> bool:
    """
    Rewrite the marked blocks of a file.

    :param path: The file.
    :param blocks: New content per block name (:func:`results_tables`).
    :return: Whether the file changed.
    :raises ReportError: If markers are missing (the file is left as it is).
    """
    text = read_text(path)
    return write_if_changed(path, text, replace_tables(text, blocks, str(path)))


__all__ = [
    'bench_note',
    'block_names',
    'bench_row',
    'bench_table',
    'BLOCKS',
    'live_note',
    'live_row',
    'live_table',
    'markers',
    'offline_note',
    'offline_table',
    'read_results',
    'replace_tables',
    'results_tables',
    'write_results',
]
