"""``report``: the README's results table rendered from collected JSON, and the collection."""

from __future__ import annotations

import json
from pathlib import Path
import shutil

from pic_ros_tools.cli import main
from pic_ros_tools.readme_results import (
    BEGIN,
    Collection,
    END,
    HEADER,
    incision_po,
    replace_results_block,
    ReportError,
    results_block,
)
from pic_ros_tools.results_collection import (
    collect,
    LIVE,
    Measurement,
    META_FILE,
    OFFLINE,
    plan,
    SharedInputs,
    SOURCES,
    WITHOUT_AVOIDANCE,
)
import pytest
from report_collection import record as _record
from report_collection import write_collection, write_partial_collection
from report_collection import write_json as _write

ROOT = Path(__file__).resolve().parents[1]

ROWS = {
    'baxter': '| Baxter | 0.999 | 54 → 0 | 0.83 / 0.155 | 0.96 / 0.080 | 0 | 9 / 16 of 2,193 '
    '| 0.297 | – |',
    'tiago': '| TIAGo | 1.000 | 3,369 → 0 | 0.94 / 0.097 | 0.96 / 0.080 | 0 | 8 of 2,146 '
    '| 0.368 | – |',
}


def _rows(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith('| ')][1:]


def test_rendering_gives_one_row_per_robot_in_the_readme_order_and_layout(tmp_path):
    block = results_block(write_collection(tmp_path / 'c', ('tiago', 'baxter')))
    assert block.splitlines()[0] == HEADER
    assert _rows(block) == [ROWS['baxter'], ROWS['tiago']]
    note = ' '.join(block.split('\n\n', 1)[1].split())
    assert 'commit abc1234' in note and '2026-11-27' in note
    assert 'load average (1 min) 3.1 at the start, 6.2 at the end, up to 7.5' in note
    assert '118–370 ms behind' in note and '2 of 2 runs flagged invalid' in note
    assert '–: not measured' not in note


def test_the_readme_table_has_the_rendered_layout():
    text = (ROOT / 'README.md').read_text(encoding='utf-8')
    block = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert block.strip().splitlines()[0] == HEADER


def test_the_report_command_rewrites_only_the_marked_block(tmp_path, capsys):
    readme = tmp_path / 'README.md'
    shutil.copy(ROOT / 'README.md', readme)
    before = readme.read_text(encoding='utf-8')
    collection = write_collection(tmp_path / 'c')
    assert main(['report', '--render', str(collection), '--readme', str(readme)]) == 0
    after = readme.read_text(encoding='utf-8')
    head, rest = before.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    assert after.startswith(head + BEGIN) and after.endswith(END + tail)
    assert _rows(after.split(BEGIN, 1)[1].split(END, 1)[0]) == [ROWS['baxter'], ROWS['tiago']]
    assert main(['report', '--render', str(collection), '--readme', str(readme)]) == 0
    assert readme.read_text(encoding='utf-8') == after
    assert 'unchanged' in capsys.readouterr().err
    assert main(['report', '--render', str(collection)]) == 0
    assert capsys.readouterr().out.startswith(HEADER)


def test_missing_sources_render_as_dashes_with_a_note_saying_why(tmp_path):
    directory = write_partial_collection(tmp_path / 'c')
    block = results_block(directory)
    assert _rows(block) == [
        '| Baxter | 0.999 | – → 0 | – | – | – | – | 0.297 | – |',
        '| TIAGo | 1.000 | 3,369 → 0 | – | – | – | – | – | – |',
    ]
    note = ' '.join(block.split('\n\n', 1)[1].split())
    assert 'bench for tiago (failed)' in note
    assert 'evaluate without the avoidance for baxter (unreadable)' in note
    assert 'evaluate --live for baxter, tiago (skipped)' in note


def test_an_empty_or_foreign_collection_renders_every_cell_missing(tmp_path):
    block = results_block(tmp_path, ['nao'])
    assert _rows(block) == ['| NAO | – | – | – | – | – | – | – | – |']
    assert 'not collected' in block
    _write(tmp_path / 'offline_nao.json', {'results': [_record('a', 'yumi', 'pic', 1.0, 0)]})
    _write(tmp_path / 'live_nao.json', [])
    assert _rows(results_block(tmp_path, ['nao'])) == ['| NAO | – | – | – | – | – | – | – | – |']
    assert 'no PIC record of the robot' in results_block(tmp_path, ['nao'])


def test_the_po_cell_is_the_robot_and_the_person_on_the_incision_recordings(tmp_path):
    """PO robot / person in percent, the incision recordings only; – without a PO."""
    incision = {**_record('incision_straight3', 'nao', 'pic', 0.9, 0),
                'po_robot': 0.417, 'po_human': 0.252}
    assembly = {**_record('assembly1', 'nao', 'pic', 0.9, 0), 'po_robot': 0.9, 'po_human': 0.1}
    assert incision_po([assembly, incision]) == '41.7 / 25.2'
    assert incision_po([assembly]) == incision_po([]) == '–'
    assert incision_po([{**incision, 'po_robot': float('nan')}]) == '–'
    directory = write_collection(tmp_path / 'c', ('baxter',))
    _write(directory / 'offline_baxter.json', {'results': [incision | {'robot': 'baxter'}]})
    assert _rows(results_block(directory))[0].endswith('| 41.7 / 25.2 |')


def test_missing_markers_are_an_error_that_leaves_the_readme_alone(tmp_path, capsys):
    readme = tmp_path / 'README.md'
    readme.write_text('# Title\n\n| a table |\n', encoding='utf-8')
    collection = write_collection(tmp_path / 'c')
    assert main(['report', '--render', str(collection), '--readme', str(readme)]) == 2
    assert readme.read_text(encoding='utf-8') == '# Title\n\n| a table |\n'
    assert BEGIN in capsys.readouterr().err
    assert main(['report', '--collect', str(tmp_path / 'new'), '--readme', str(readme)]) == 2
    assert not (tmp_path / 'new').exists()  # checked before measuring anything
    with pytest.raises(ReportError):
        replace_results_block(f'{END}\nold\n{BEGIN}\n', 'new')
    with pytest.raises(ReportError):
        replace_results_block(f'{BEGIN}\n{BEGIN}\nold\n{END}\n', 'new')
    assert replace_results_block(f'a\n{BEGIN}\nold\n{END}\nb\n', 'new') == (
        f'a\n{BEGIN}\nnew\n{END}\nb\n'
    )


def test_the_plan_runs_each_source_per_robot_with_and_without_the_avoidance():
    inputs = SharedInputs(recordings=('assembly1',), bags=('/data/azure_bag',))
    measurements = plan(['baxter', 'nao'], inputs)
    assert [(m.source, m.robot) for m in measurements] == [
        (source, robot) for source in SOURCES for robot in ('baxter', 'nao')
    ]
    by_key = {(m.source, m.robot): m.arguments for m in measurements}
    assert '--json' in by_key[LIVE, 'nao'] and '--live' in by_key[LIVE, 'nao']
    assert by_key[WITHOUT_AVOIDANCE, 'nao'] == (
        by_key[OFFLINE, 'nao'][:-1] + ('--self-collision-margin', '0', '--json')
    )
    assert '/data/azure_bag' in by_key[OFFLINE, 'nao']
    assert '/data/azure_bag' not in by_key['bench', 'nao']
    assert LIVE not in {m.source for m in plan(['nao'], inputs, skip_live=True)}


def test_a_partial_collection_keeps_what_succeeded_and_notes_what_failed(tmp_path):
    directory = tmp_path / 'c'
    directory.mkdir()
    _write(directory / 'live_nao.json', {'live': ['stale']})
    measurements = [
        Measurement(OFFLINE, 'nao', ('evaluate', '--json')),
        Measurement('bench', 'nao', ('bench', '--json')),
        Measurement(LIVE, 'nao', ('evaluate', '--live', '--json')),
    ]

    def runner(argv, stdout: Path, stderr: Path) -> int:
        stderr.write_text('progress\n', encoding='utf-8')
        if '--live' in argv:
            assert argv[argv.index('--logs') + 1] == str(directory / 'live_nao_logs')
            return 1
        assert '--logs' not in argv
        stdout.write_text('{"results": []}' if 'evaluate' in argv else 'not json',
                          encoding='utf-8')
        return 0

    meta = collect(directory, measurements, SharedInputs(('assembly1',)), runner,
                   say=lambda line: None)
    assert sorted(p.name for p in directory.glob('*.json')) == ['meta.json', 'offline_nao.json']
    assert [entry['status'] for entry in meta['commands']] == [0, 0, 1]
    assert 'no JSON' in meta['commands'][1]['error']
    assert meta['commands'][2]['command'] == 'python -m pic_ros_tools evaluate --live --json'
    assert meta['commands'][2]['logs'] == 'live_nao_logs' and 'logs' not in meta['commands'][0]
    assert json.loads((directory / META_FILE).read_text(encoding='utf-8')) == meta
    assert not list(directory.glob('*.part'))
    collection = Collection.load(directory, ['nao'])
    assert collection.problems[LIVE, 'nao'] == 'failed'
    assert collection.problems['bench', 'nao'] == 'no output'
