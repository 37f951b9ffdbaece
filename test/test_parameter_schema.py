"""
One source of truth for every parameter: the definitions, the tables and what is derived.

The parameter file ``config/teleop.yaml`` and the docs' parameter tables are generated from
the tables; these tests fail when a shipped copy drifts. The core configurations check their
fields with the same definitions, so a range exists once.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
import re

from pic_ros.exceptions import ConfigError
from pic_ros.motion.commander import CommanderConfig
from pic_ros.motion.streaming import stream_chunk
from pic_ros.ros import schema as node_schema
from pic_ros.ros.launch_arguments import node_overrides, parameter_arguments, teleop_options
from pic_ros.ros.parameter_docs import (
    doc_sections,
    PARAMETER_FILE,
    parameter_file,
    write_docs,
    yaml_value,
)
from pic_ros.schema import add_option, ParameterDef, ParameterTable, ParameterType
from pic_ros.solvers import SolverConfig
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

# --- the definitions -------------------------------------------------------------------------


def test_the_type_of_a_parameter_is_the_type_of_its_default() -> None:
    """bool, int, float, str and a list of str map to the ROS parameter types."""
    kinds = [
        ParameterDef('a', True, 'x').ros_type, ParameterDef('b', 1, 'x').ros_type,
        ParameterDef('c', 1.0, 'x').ros_type, ParameterDef('d', 's', 'x').ros_type,
        ParameterDef('e', ['s'], 'x').ros_type,
    ]
    assert kinds == [
        ParameterType.BOOL, ParameterType.INTEGER, ParameterType.DOUBLE, ParameterType.STRING,
        ParameterType.STRING_ARRAY,
    ]


@pytest.mark.parametrize(
    ('definition', 'value'),
    [
        (ParameterDef('n', 1, 'x', low=1, high=3), 4),
        (ParameterDef('n', 1, 'x', low=1, high=3), 2.0),
        (ParameterDef('n', 1, 'x', low=1, high=3), True),
        (ParameterDef('t', 0.5, 'x', low=0.0, high=1.0), math.nan),
        (ParameterDef('t', 0.5, 'x', low=0.0, high=1.0), 1.5),
        (ParameterDef('t', 0.5, 'x', low=0.0, high=1.0), '0.5'),
        (ParameterDef('s', 'a', 'x', choices=('a', 'b')), 'c'),
        (ParameterDef('f', False, 'x'), 1),
        (ParameterDef('l', ['a'], 'x'), 'a'),
    ],
)
def test_a_value_outside_the_definition_is_refused_with_the_parameter_name(
    definition: ParameterDef, value: object
) -> None:
    """Wrong type, out of range, not finite, not a choice: refused, never clamped."""
    with pytest.raises(ConfigError, match=definition.name):
        definition.check(value)


def test_an_integer_is_accepted_for_a_double_and_returned_as_a_float() -> None:
    """YAML and command lines write 1 for 1.0; ROS would refuse it, the check converts it."""
    value = ParameterDef('t', 0.5, 'x', low=0.0, high=2.0).check(1)
    assert value == 1.0 and type(value) is float


def test_choices_from_a_function_are_read_each_time() -> None:
    """A registry's names at the moment of the check, not at the definition."""
    names = ['a']
    definition = ParameterDef('s', 'a', 'x', choices=lambda: tuple(names))
    with pytest.raises(ConfigError):
        definition.check('b')
    names.append('b')
    assert definition.check('b') == 'b' and definition.allowed() == ('a', 'b')


def test_text_is_read_with_the_type_of_the_parameter() -> None:
    """Command lines and launch arguments give text; it is typed, then checked."""
    assert ParameterDef('f', False, 'x').from_text('true') is True
    assert ParameterDef('n', 1, 'x', low=0, high=9).from_text('7') == 7
    assert ParameterDef('t', 0.5, 'x').from_text('2') == 2.0
    assert ParameterDef('l', [''], 'x').from_text('left, right') == ['left', 'right']
    with pytest.raises(ConfigError, match='integer'):
        ParameterDef('n', 1, 'x').from_text('1.5')


def test_a_table_refuses_a_name_defined_twice_and_an_unknown_name() -> None:
    """Each parameter once per node; a typo is reported with the node's parameters."""
    with pytest.raises(ConfigError, match='twice'):
        ParameterTable('n', [ParameterDef('a', 1, 'x'), ParameterDef('a', 2, 'y')])
    table = ParameterTable('n', [ParameterDef('a', 1, 'x')])
    with pytest.raises(ConfigError, match="no parameter 'b'; it has: a"):
        table.check({'b': 1})


def test_a_command_line_option_accepts_exactly_what_the_parameter_accepts() -> None:
    """The option is typed and checked by the definition; argparse reports the reason."""
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_option(parser, ParameterDef('lead_time', 0.05, 'x', unit='s', low=0.001, high=1.0))
    assert parser.parse_args(['--lead-time', '0.1']).lead_time == 0.1
    with pytest.raises(argparse.ArgumentError, match=r'lead_time must be in \[0.001, 1.0\]'):
        parser.parse_args(['--lead-time', '5'])


# --- one range, in one place ----------------------------------------------------------------


def test_lead_time_has_one_range_for_the_node_and_the_core() -> None:
    """The range the node declares is the range the streaming core enforces (it had drifted)."""
    definition = node_schema.TRAJECTORY_PUBLISHER['lead_time']
    assert (definition.low, definition.high) == (0.001, 1.0)
    stream_chunk(['j'], [0.0], [0.0], definition.high)
    for outside in (definition.low / 2, definition.high * 2):
        with pytest.raises(ConfigError, match='lead_time'):
            stream_chunk(['j'], [0.0], [0.0], outside)
        with pytest.raises(ConfigError, match='lead_time'):
            CommanderConfig.from_parameters({'lead_time': outside})


@pytest.mark.parametrize('table', list(node_schema.PIPELINE), ids=lambda table: table.node)
def test_every_default_passes_its_own_definition(table: ParameterTable) -> None:
    """The table is consistent with itself (registry choices included)."""
    assert table.check(table.defaults()).keys() == set(table.names)


def test_the_core_configs_take_their_defaults_from_the_definitions() -> None:
    """A config built from no parameters equals the config with no arguments."""
    assert SolverConfig.from_parameters({}) == SolverConfig()
    assert CommanderConfig.from_parameters({}) == CommanderConfig()


# --- derived documents -----------------------------------------------------------------------


def test_the_shipped_parameter_file_is_the_generated_one() -> None:
    """config/teleop.yaml is `python -m pic_ros params --yaml`, byte for byte."""
    shipped = (ROOT / 'pic_ros' / 'config' / 'teleop.yaml').read_text(encoding='utf-8')
    assert shipped == parameter_file(), (
        'config/teleop.yaml drifted from the parameter tables: run '
        '`python -m pic_ros params --yaml > pic_ros/config/teleop.yaml`'
    )


def test_the_parameter_file_holds_every_default_with_its_ros_type() -> None:
    """Loaded as YAML, each block has the defaults of its node but the launch-chosen ones."""
    data = yaml.safe_load(parameter_file())
    for table in node_schema.PIPELINE:
        values = data[f'/**/{table.node}']['ros__parameters']
        expected = {
            name: value for name, value in table.defaults().items()
            if name not in node_schema.SET_BY_LAUNCH
        }
        assert values == expected
        for name, value in values.items():
            assert type(value) is type(table[name].default), name


def test_the_docs_tables_are_the_generated_ones() -> None:
    """Every generated section is in its document, between its markers, unchanged."""
    for name, (document, text) in doc_sections().items():
        content = (ROOT / document).read_text(encoding='utf-8')
        found = re.search(rf'<!-- {re.escape(name)} -->\n(.*?)\n<!-- /{re.escape(name)} -->',
                          content, flags=re.S)
        assert found, f'{document} lacks the section {name}'
        assert found.group(1) == text, (
            f'{document} section {name} drifted: run `python -m pic_ros params --markdown` and '
            'paste it'
        )


def test_params_write_restores_drifted_tables_and_touches_nothing_else(tmp_path) -> None:
    """``params --write`` puts every generated section back and leaves the prose as it was."""
    documents = {document for document, _ in doc_sections().values()} | {PARAMETER_FILE}
    for document in documents:
        (tmp_path / document).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / document).write_text((ROOT / document).read_text(encoding='utf-8'))
    assert write_docs(tmp_path) == []
    usage = tmp_path / 'docs' / 'usage.md'
    pristine = usage.read_text(encoding='utf-8')
    usage.write_text(pristine.replace('| `rate` |', '| `rate_drifted` |', 1), encoding='utf-8')
    (tmp_path / PARAMETER_FILE).write_text('stale: true\n', encoding='utf-8')
    assert sorted(write_docs(tmp_path)) == ['docs/usage.md', PARAMETER_FILE]
    assert usage.read_text(encoding='utf-8') == pristine


def test_a_yaml_string_that_looks_like_another_type_is_quoted() -> None:
    """'127.0.0.1', '' and 'true' stay strings when the file is read back."""
    definition = ParameterDef('s', 'x', 'x')
    for text in ('127.0.0.1', '', 'true', 'no', 'a b'):
        assert yaml.safe_load(f'v: {yaml_value(definition, text)}')['v'] == text


# --- launch arguments ------------------------------------------------------------------------


def test_launch_arguments_are_described_from_the_tables() -> None:
    """Each argument that sets a parameter says what it does, its values and what empty means."""
    arguments = {argument.name: argument for argument in parameter_arguments()}
    assert set(arguments) == {name for _, name in node_schema.LAUNCH_ARGUMENTS}
    assert arguments['source'].choices == ('azure_kinect', 'kinect_v2', 'xsens_mvn')
    assert 'fabrik, pic, pics' in arguments['solver'].description
    assert arguments['eta'].default == '' and 'Empty:' in arguments['eta'].description


def test_launch_overrides_are_typed_and_checked() -> None:
    """An integer argument becomes an int; a bad value stops the launch with its reason."""
    texts = {'source': 'xsens_mvn', 'eta': '2', 'udp_port': '9000', 'solver': ''}
    overrides = node_overrides(lambda name: texts.get(name, ''), 'yumi')
    assert overrides['solver_node'] == {'robot': 'yumi', 'eta': 2}
    assert overrides['skeleton_node'] == {'source': 'xsens_mvn', 'udp_port': 9000}
    assert overrides['trajectory_publisher'] == {'robot': 'yumi'}
    assert teleop_options(overrides) == [
        '--robot', 'yumi', '--source', 'xsens_mvn', '--param', 'skeleton_node.udp_port=9000',
        '--param', 'solver_node.eta=2',
    ]
    for name, bad in (('eta', '4'), ('solver', 'ik'), ('udp_port', 'x'), ('source', 'kinect')):
        with pytest.raises(ConfigError, match=name):
            node_overrides(lambda key, n=name, b=bad: b if key == n else '', 'baxter')
    with pytest.raises(ConfigError, match='robot'):
        node_overrides(lambda name: '', ' ')
