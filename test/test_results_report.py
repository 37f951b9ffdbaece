"""``report --results``: the generated tables of docs/results.md rendered from collected JSON."""

from __future__ import annotations

from pathlib import Path
import re
import shutil

from pic_ros_tools.cli import main
from pic_ros_tools.readme_results import BEGIN
from pic_ros_tools.results_reading import ReportError
from pic_ros_tools.results_tables import (
    BENCH_HEADER,
    BLOCKS,
    LIVE_HEADER,
    markers,
    OFFLINE_HEADER,
    replace_tables,
    results_tables,
)
import pytest
from report_collection import write_collection, write_partial_collection

ROOT = Path(__file__).resolve().parents[1]

OFFLINE_ROWS = [
    '| Baxter | assembly1 | 1.000 | 0.020 | 50 → 0 | 25 |',
    '| Baxter | body_tracking_ergonomics | 0.998 | 0.040 | 4 → 0 | 50 |',
    '| Baxter | all | 0.999 | 0.030 | 54 → 0 | 38 |',
    '| TIAGo | assembly1 | 1.000 | 0.020 | 3,369 → 0 | 25 |',
    '| TIAGo | body_tracking_ergonomics | 1.000 | 0.040 | 0 → 0 | 50 |',
    '| TIAGo | all | 1.000 | 0.030 | 3,369 → 0 | 38 |',
]
LIVE_ROWS = [
    '| Baxter | 0.83 | 0.155 | 370 / 118 | 9 / 16 of 2,193 | 8 / 9 | 32–36 / 147 | 0 | 1 '
    '| 0.96 / 0.080 | 1.94 |',
    '| TIAGo | 0.94 | 0.097 | 370 | 8 of 2,146 | 3 | 51 / 142 | 0 | 1 | 0.96 / 0.080 | 1.21 |',
]
BENCH_ROWS = [
    '| Baxter | 14,520 | 0.297 | 0.500 | 2.000 | 1,396 |',
    '| TIAGo | 14,520 | 0.368 | 0.500 | 2.000 | 1,396 |',
]
HEADERS = {'offline': OFFLINE_HEADER, 'live': LIVE_HEADER, 'bench': BENCH_HEADER}


def _rows(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith('| ')][1:]


def _note(block: str) -> str:
    return ' '.join(block.split('\n\n', 1)[1].split())


def _outside(text: str) -> str:
    """Return the text with every generated block emptied."""
    for name in BLOCKS:
        begin, end = markers(name)
        text = re.sub(f'{re.escape(begin)}.*?{re.escape(end)}', begin + end, text, flags=re.S)
    return text


def _blocks(text: str) -> dict[str, str]:
    found = {}
    for name in BLOCKS:
        begin, end = markers(name)
        found[name] = text.split(begin, 1)[1].split(end, 1)[0].strip('\n')
    return found


def test_the_three_tables_have_one_row_per_robot_and_recording_and_a_note(tmp_path):
    blocks = results_tables(write_collection(tmp_path / 'c', ('tiago', 'baxter')))
    assert list(blocks) == list(BLOCKS)
    for name, header in HEADERS.items():
        assert blocks[name].startswith(header + '\n')
    assert _rows(blocks['offline']) == OFFLINE_ROWS
    assert _rows(blocks['live']) == LIVE_ROWS
    assert _rows(blocks['bench']) == BENCH_ROWS
    for block in blocks.values():
        note = _note(block)
        assert '(2026-11-27, commit abc1234)' in note and 'report --results' in note
        assert 'load average (1 min) 4.0–7.5 during these commands' in note
        assert '–: not measured' not in note
    assert 'assembly1, body_tracking_ergonomics' in _note(blocks['offline'])
    assert '2 of 2 runs flagged invalid' in _note(blocks['live'])
    assert '`bench --solver pic --ikpy-frames 0` on assembly1:' in _note(blocks['bench'])
    assert 'p50 / p99 ms): synthetic1_bag: 0.092 / 0.310.' in _note(blocks['bench'])


def test_the_results_file_has_each_block_once_in_the_rendered_layout():
    text = (ROOT / 'docs' / 'results.md').read_text(encoding='utf-8')
    for name, block in _blocks(text).items():
        begin, end = markers(name)
        assert text.count(begin) == text.count(end) == 1
        assert block.startswith(HEADERS[name] + '\n')
    assert text.index('## Regenerated tables') < text.index(markers('offline')[0])


def test_the_report_command_rewrites_only_the_marked_blocks_and_then_nothing(tmp_path, capsys):
    results = tmp_path / 'results.md'
    readme = tmp_path / 'README.md'
    shutil.copy(ROOT / 'docs' / 'results.md', results)
    shutil.copy(ROOT / 'README.md', readme)
    before = results.read_text(encoding='utf-8')
    collection = write_collection(tmp_path / 'c')
    assert main(['report', '--render', str(collection), '--results', str(results)]) == 0
    after = results.read_text(encoding='utf-8')
    assert after != before and _outside(after) == _outside(before)
    blocks = _blocks(after)
    assert _rows(blocks['offline']) == OFFLINE_ROWS
    assert _rows(blocks['live']) == LIVE_ROWS
    assert _rows(blocks['bench']) == BENCH_ROWS
    assert readme.read_text(encoding='utf-8') == (ROOT / 'README.md').read_text(encoding='utf-8')
    assert capsys.readouterr().out == ''
    assert main(['report', '--render', str(collection), '--readme', str(readme),
                 '--results', str(results)]) == 0
    assert results.read_text(encoding='utf-8') == after
    err = capsys.readouterr().err
    assert f'{results}: unchanged' in err and f'{readme}: results table rewritten' in err
    assert '| Baxter | 0.999 | 54 → 0 |' in readme.read_text(encoding='utf-8').split(BEGIN)[1]


def test_missing_sources_render_as_dashes_with_a_note_saying_why(tmp_path):
    directory = write_partial_collection(tmp_path / 'c')
    blocks = results_tables(directory)
    assert _rows(blocks['offline'])[:3] == [
        '| Baxter | assembly1 | 1.000 | 0.020 | – → 0 | 25 |',
        '| Baxter | body_tracking_ergonomics | 0.998 | 0.040 | – → 0 | 50 |',
        '| Baxter | all | 0.999 | 0.030 | – → 0 | 38 |',
    ]
    assert _rows(blocks['live']) == [
        '| Baxter | – | – | – | – | – | – | – | – | – | – |',
        '| TIAGo | – | – | – | – | – | – | – | – | – | – |',
    ]
    assert _rows(blocks['bench']) == [BENCH_ROWS[0], '| TIAGo | – | – | – | – | – |']
    assert 'evaluate without the avoidance for baxter (unreadable)' in _note(blocks['offline'])
    assert 'evaluate --live for baxter, tiago (skipped)' in _note(blocks['live'])
    assert 'bench for tiago (failed)' in _note(blocks['bench'])
    assert 'evaluate --live' not in _note(blocks['bench'])  # each note names its own sources


def test_an_empty_collection_renders_every_cell_missing(tmp_path):
    blocks = results_tables(tmp_path, ['nao'])
    assert _rows(blocks['offline']) == ['| NAO | all | – | – | – | – |']
    assert _rows(blocks['live']) == ['| NAO | – | – | – | – | – | – | – | – | – | – |']
    assert _rows(blocks['bench']) == ['| NAO | – | – | – | – | – |']
    assert all('not collected' in block for block in blocks.values())


def test_missing_markers_are_an_error_before_anything_is_measured(tmp_path, capsys):
    results = tmp_path / 'results.md'
    begin, end = markers('offline')
    partial = f'# Results\n\n{begin}\nold\n{end}\n'
    results.write_text(partial, encoding='utf-8')
    collection = write_collection(tmp_path / 'c')
    assert main(['report', '--render', str(collection), '--results', str(results)]) == 2
    assert results.read_text(encoding='utf-8') == partial
    assert markers('live')[0] in capsys.readouterr().err
    assert main(['report', '--collect', str(tmp_path / 'new'), '--results', str(results)]) == 2
    assert not (tmp_path / 'new').exists()
    with pytest.raises(ReportError, match='comes before'):
        replace_tables(f'{end}\nold\n{begin}\n', {'offline': 'new'})
    assert replace_tables(partial, {'offline': 'new'}) == f'# Results\n\n{begin}\nnew\n{end}\n'


def test_a_labelled_run_rewrites_its_own_blocks_and_leaves_the_others(tmp_path):
    """``--label busy`` fills ``offline-busy`` and the like; the unlabelled blocks stay."""
    results = tmp_path / 'results.md'
    labelled = ''.join(
        f'{begin}\nold\n{end}\n' for begin, end in (markers(f'{n}-busy') for n in BLOCKS)
    )
    plain = ''.join(f'{begin}\nkept\n{end}\n' for begin, end in (markers(n) for n in BLOCKS))
    results.write_text(plain + labelled, encoding='utf-8')
    collection = write_collection(tmp_path / 'c')
    assert main(['report', '--render', str(collection), '--results', str(results),
                 '--label', 'busy']) == 0
    text = results.read_text(encoding='utf-8')
    assert text.startswith(plain) and 'old' not in text
    assert LIVE_ROWS[0] in text.split(markers('live-busy')[0], 1)[1]
    with pytest.raises(ReportError, match='label'):
        results_tables(collection, label='Busy!')


def test_a_labelled_run_leaves_the_readme_table_to_the_first_run(tmp_path, capsys):
    """``--label`` with ``--readme`` is refused before anything is read or written."""
    readme = tmp_path / 'README.md'
    readme.write_text('# x\n\n<!-- results:begin -->\nidle\n<!-- results:end -->\n')
    collection = write_collection(tmp_path / 'c')
    assert main(['report', '--render', str(collection), '--readme', str(readme),
                 '--label', 'busy']) == 2
    assert 'leave out --readme' in capsys.readouterr().err
    assert 'idle' in readme.read_text()
