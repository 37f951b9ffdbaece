"""
Documents derived from the parameter tables: ``config/teleop.yaml`` and the docs' tables.

``python -m pic_ros params --yaml`` prints the parameter file the launch files load and
``python -m pic_ros params --markdown`` the generated tables of the docs (the launch arguments in
``README.md``, every node's parameters in ``docs/usage.md``); tests compare both with
the shipped copies, so a parameter, default, range or description changed in one place shows up
as a failing test until the copies are regenerated. No rclpy here.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from importlib.metadata import entry_points
import json
from pathlib import Path
import sys
import textwrap
from typing import Any, Final

from pic_ros.ros.launch_arguments import parameter_arguments
from pic_ros.ros.schema import PIPELINE, SET_BY_LAUNCH, TABLES
from pic_ros.schema import ParameterDef, ParameterTable, ParameterType

YAML_HEADER: Final = """\
# Parameters of the pic_ros teleoperation pipeline: skeleton_node, solver_node and
# trajectory_publisher (launch/teleop.launch.py, launch/multi_robot.launch.py and
# launch/gazebo.launch.py load this file; `teleop`, the one-process pipeline, reads it too).
#
# GENERATED from the parameter tables (pic_ros/ros/schema.py): edit those, then run
#   python -m pic_ros params --yaml > config/teleop.yaml
# A test fails when this file and the tables disagree. Values are the nodes' defaults; each
# comment gives the unit, the allowed values and the meaning. Doubles are written with a decimal
# point: ROS parameters are strictly typed and an int here would be refused by a double.
#
# The node keys use the wildcard /**/<node name>, so a block applies to its node in any
# namespace (/solver_node, /baxter/solver_node, ...). Wildcards in node names are supported by
# the rcl YAML parser and matched by rclpy since Humble (ros2/rclpy#987, backported to Humble as
# #1002 in rclpy 3.3.5; "*" is one name token, "**" zero or more); checked here with rclpy 9.1.2
# (Kilted). Keep the flat "/**/node:" form: the nested form (a node key under "/**:" beside its
# ros__parameters) could fail to parse depending on key order until ros2/rcl#1253 (2025; Humble:
# rcl 5.3.11).
#
# Not set here, because the launch files choose them per run and per robot:
#   source (skeleton_node), robot (solver_node, trajectory_publisher) and arms (solver_node;
#   empty by default: every arm of the robot file).
# Launch arguments of the same name as a parameter override the values below when they are given.
#
# Overriding by hand: rclpy (checked with 9.1.2) applies the entries of all parameter sources in
# the order their node keys first appear, and every `-p name:=value` is a "/**" entry. So
#   ros2 run pic_ros solver_node --ros-args --params-file teleop.yaml -p solver:=pics
# works, but a `-p` placed *before* --params-file makes "/**" come first, and then every later
# `-p` loses to the "/**/solver_node" block here. Put `-p` after the file, or use a parameter
# file keyed by the node's full name (/solver_node), as the launch files do.
"""


_YAML_WORDS: Final = frozenset({'true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n'})
"""Plain words YAML would not read as strings."""


def yaml_value(definition: ParameterDef, value: Any) -> str:
    """
    Write a value as YAML with the parameter's ROS type.

    :param definition: The parameter.
    :param value: Its value.
    :return: YAML text (a double always with a decimal point, strings quoted when needed).
    """
    if definition.ros_type is ParameterType.BOOL:
        return 'true' if value else 'false'
    if definition.ros_type is ParameterType.DOUBLE:
        return repr(float(value))
    if definition.ros_type is ParameterType.STRING_ARRAY:
        return json.dumps(list(value))
    if isinstance(value, str):
        plain = value and value.replace('_', '').replace('.', '').replace('/', '').isalnum()
        if plain and not value[0].isdigit() and value.lower() not in _YAML_WORDS:
            return value
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _comment(definition: ParameterDef) -> list[str]:
    text = definition.description
    if definition.unit:
        text += f' [{definition.unit}]'
    allowed = definition.allowed()
    constraint = definition.constraint_text(unit=False)
    if allowed:
        text += f'; one of: {", ".join(allowed)}'
    elif constraint:
        text += f'; {constraint}'
    return textwrap.wrap(
        text + '.', width=99, initial_indent='    # ', subsequent_indent='    # ',
        break_long_words=False, break_on_hyphens=False,
    )


def parameter_file(tables: Iterable[ParameterTable] = PIPELINE) -> str:
    """
    Write the teleoperation parameter file.

    :param tables: The nodes, in file order.
    :return: The text of ``config/teleop.yaml``.
    """
    lines = [YAML_HEADER.rstrip('\n')]
    for table in tables:
        lines += ['', f'/**/{table.node}:', '  ros__parameters:']
        for definition in table:
            if definition.name in SET_BY_LAUNCH:
                continue
            lines += _comment(definition)
            lines.append(f'    {definition.name}: {yaml_value(definition, definition.default)}')
    return '\n'.join(lines) + '\n'


def _cell(text: str) -> str:
    return text.replace('|', '\\|')


def _default_cell(definition: ParameterDef) -> str:
    if definition.ros_type is ParameterType.STRING_ARRAY:
        return '`' + json.dumps(list(definition.default)).replace('"', "'") + '`'
    text = yaml_value(definition, definition.default)
    return f'`{text}`'


def parameter_table(table: ParameterTable) -> str:
    """
    Write one node's parameters as a Markdown table.

    :param table: The node's parameters.
    :return: Header, separator and one row per parameter.
    """
    rows = [
        f'**{table.node}**',
        '',
        '| parameter | default | unit | allowed | meaning |',
        '|---|---|---|---|---|',
    ]
    for definition in table:
        allowed = definition.constraint_text(unit=False)
        meaning = definition.description + ('. Read-only.' if definition.read_only else '.')
        rows.append(
            f'| `{definition.name}` | {_default_cell(definition)} | {definition.unit} | '
            f'{_cell(allowed)} | {_cell(meaning)} |'
        )
    return '\n'.join(rows)


def launch_table() -> str:
    """
    Write the launch arguments that set node parameters as a Markdown table.

    :return: Header, separator and one row per argument.
    """
    rows = ['| launch argument | default | meaning |', '|---|---|---|']
    for argument in parameter_arguments():
        default = f'`{argument.default}`' if argument.default else "`''`"
        rows.append(f'| `{argument.name}` | {default} | {_cell(argument.description)} |')
    return '\n'.join(rows)


LAUNCH_DOCUMENT: Final = 'README.md'
"""Where the launch arguments' table is, from the repository root."""

PARAMETER_DOCUMENT: Final = 'docs/usage.md'
"""Where the nodes' parameter tables are, from the repository root."""

PARAMETER_FILE: Final = 'pic_ros/config/teleop.yaml'
"""Where the parameter file is, from the repository root."""

TABLE_ENTRY_POINTS: Final = 'pic_ros.parameter_tables'
"""Entry-point group of other packages' node tables (``pic_ros_tools``: ``sim_robot``)."""


def documented_tables() -> dict[str, ParameterTable]:
    """
    Return the tables the docs list: the run-time nodes' and those of installed packages.

    Another package (``pic_ros_tools`` for ``sim_robot``) names its
    :class:`~pic_ros.schema.ParameterTable` in the :data:`TABLE_ENTRY_POINTS` group; nothing of
    it is imported unless it is installed.

    :return: Node name -> table, the run-time nodes first.
    """
    tables = dict(TABLES)
    for point in sorted(entry_points(group=TABLE_ENTRY_POINTS), key=lambda point: point.name):
        table = point.load()
        tables[table.node] = table
    return tables


def doc_sections() -> dict[str, tuple[str, str]]:
    """
    Return the generated sections of the docs by marker name, with the document of each.

    :return: ``{'parameters:<node>': (document, table), 'launch-arguments': (document, table)}``;
        documents are paths from the repository root.
    """
    sections = {
        f'parameters:{node}': (PARAMETER_DOCUMENT, parameter_table(table))
        for node, table in documented_tables().items()
    }
    sections['launch-arguments'] = (LAUNCH_DOCUMENT, launch_table())
    return sections


def markdown() -> str:
    """
    Write every generated section of the docs, each between its markers (``params --markdown``).

    :return: The sections, separated by blank lines.
    """
    return '\n\n'.join(
        f'<!-- {name} -->\n{text}\n<!-- /{name} -->'
        for name, (_, text) in doc_sections().items()
    ) + '\n'


def write_docs(root: Path) -> list[str]:
    """
    Regenerate the parameter file and every generated section of the docs in place.

    :param root: The repository root.
    :return: The files that changed, relative to ``root``.
    :raises ValueError: If a document lacks the markers of one of its sections.
    """
    changed = []
    texts: dict[str, str] = {}
    for name, (document, text) in doc_sections().items():
        content = texts.get(document)
        if content is None:
            content = (root / document).read_text(encoding='utf-8')
        start, end = f'<!-- {name} -->\n', f'\n<!-- /{name} -->'
        if start not in content or end not in content:
            raise ValueError(f'{document} lacks the markers of the section {name}')
        head, rest = content.split(start, 1)
        texts[document] = head + start + text + end + rest.split(end, 1)[1]
    texts[PARAMETER_FILE] = parameter_file()
    for document, content in texts.items():
        path = root / document
        if path.read_text(encoding='utf-8') != content:
            path.write_text(content, encoding='utf-8')
            changed.append(document)
    return changed


def main(argv: list[str] | None = None) -> int:
    """
    Run ``python -m pic_ros params [--yaml | --markdown | --write ROOT]``.

    :param argv: Arguments without the program name and the command.
    :return: Process exit status.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros params',
        description="Print the nodes' parameters, derived from their tables.",
    )
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument(
        '--yaml', action='store_true', help='the parameter file config/teleop.yaml (default)'
    )
    kind.add_argument(
        '--markdown', action='store_true',
        help="the docs' generated tables (README.md, docs/usage.md)",
    )
    kind.add_argument(
        '--write', metavar='ROOT', type=Path,
        help='rewrite pic_ros/config/teleop.yaml and the generated tables of the docs in the '
        'repository at ROOT, and name the files that changed',
    )
    args = parser.parse_args(argv)
    if args.write is not None:
        for document in write_docs(args.write):
            print(f'params: rewrote {document}')
        return 0
    sys.stdout.write(markdown() if args.markdown else parameter_file())
    return 0
