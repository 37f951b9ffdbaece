"""
Each package.xml declares, with its rosdep key, every package its code imports; the tests' too.

The imports are read from the sources (``ast``), not from the installed environment: every
``import``/``from`` of ``pic_ros/pic_ros/`` and ``pic_ros/launch/`` (the run-time package), of
``pic_ros_tools/pic_ros_tools/`` (the tools) (wherever it stands: inside a function, under
``try``) and, for the tests, also every ``pytest.importorskip('name')``. Each top-level module
that is neither in the standard library nor part of the package must map to a rosdep key
(:data:`ROSDEP_KEYS`, or the module's own name for a ROS package: ``rclpy``, ``launch``, any
``*_msgs``, ``*_srvs``, ``*_interfaces``), and that key must be declared in that package's
package.xml: an ``exec_depend`` (or ``depend``) for what the package imports at run time; the
tests (run by ``colcon test`` of pic_ros_tools) need a ``test_depend`` or better of pic_ros_tools
or an ``exec_depend`` of pic_ros (which pic_ros_tools depends on). A new import without a key here
fails with the line to add.

The run-time package never imports the tools package nor what only the tools need
(:data:`TOOLS_ONLY`), and declares none of it: a robot PC installs only what it runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path
import re
import sys
import xml.etree.ElementTree as ElementTree

import pytest

ROOT = Path(__file__).resolve().parents[1]

ROSDEP_KEYS = {
    'numpy': 'python3-numpy',
    'yaml': 'python3-yaml',
    'transforms3d': 'python3-transforms3d',
    'urdf_parser_py': 'urdfdom_py',
    'ruckig': 'python3-ruckig-pip',
    'numba': 'python3-numba',
    'rosbags': 'python3-rosbags-pip',
    'mujoco': 'python3-mujoco-pip',
    'matplotlib': 'python3-matplotlib',
    'PIL': 'python3-pil',
    'ikpy': 'python3-ikpy-pip',
    'pytest': 'python3-pytest',
    'hypothesis': 'python3-hypothesis',
    'mcap': 'python3-mcap-pip',
    'mcap_ros2': 'mcap-ros2-support',
    'pic_ros': 'pic_ros',
}
"""Top-level module -> rosdep key, for the modules that are not ROS packages."""

OPTIONAL = {
    'ikpy': 'python -m pic_ros_tools bench compares with ikpy only when it is installed',
}
"""Modules the package imports at run time only if present: a test_depend is enough."""

ROS_PACKAGE = re.compile(r'^(rclpy|launch|launch_ros|ament_\w+|\w+_(msgs|srvs|interfaces))$')
"""ROS packages: the module is the package, its name is the rosdep key."""

RUN = ('exec_depend', 'depend')
TEST = ('test_depend', 'exec_depend', 'depend')

RUNTIME = 'pic_ros'
TOOLS = 'pic_ros_tools'

TOOLS_ONLY = {
    'pic_ros_tools': 'pic_ros_tools',
    'mujoco': 'python3-mujoco-pip',
    'rosbags': 'python3-rosbags-pip',
    'matplotlib': 'python3-matplotlib',
    'PIL': 'python3-pil',
    'mcap': 'python3-mcap-pip',
}
"""Modules (with their rosdep keys) the run-time package must neither import nor declare."""


def declared(kinds: Iterable[str], package: str) -> set[str]:
    """Return the keys a package's package.xml declares with the given tags."""
    root = ElementTree.parse(ROOT / package / 'package.xml').getroot()
    return {(element.text or '').strip() for kind in kinds for element in root.iter(kind)}


def imported_modules(source: str, filename: str) -> set[str]:
    """
    Return the top-level modules a Python source imports, anywhere in it.

    Absolute imports and the literal names of ``pytest.importorskip`` / ``importorskip`` calls;
    relative imports are the repository's own.

    :param source: The source text.
    :param filename: Its name, for syntax errors.
    :return: Top-level module names.
    """
    names: set[str] = set()
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(
                function, 'id', ''
            )
            first = node.args[0]
            if called == 'importorskip' and isinstance(first, ast.Constant):
                names.add(str(first.value))
    return {name.split('.')[0] for name in names}


def third_party(files: Iterable[Path], local: set[str]) -> dict[str, list[str]]:
    """
    Return the modules from outside the standard library and this repository, with their users.

    :param files: Python files to read.
    :param local: Top-level names that belong to the repository.
    :return: Module -> the files (relative to the root) that import it.
    """
    found: dict[str, list[str]] = {}
    for path in sorted(files):
        for name in imported_modules(path.read_text(encoding='utf-8'), str(path)):
            if name in sys.stdlib_module_names or name in local:
                continue
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def rosdep_key(module: str) -> str | None:
    """Return the rosdep key that provides a top-level module, or None if it is unknown."""
    if module in ROSDEP_KEYS:
        return ROSDEP_KEYS[module]
    return module if ROS_PACKAGE.match(module) else None


def missing(modules: dict[str, list[str]], allowed: set[str], tag: str) -> list[str]:
    """Describe each module whose key is unknown or not declared with an allowed tag."""
    problems = []
    for module, users in sorted(modules.items()):
        key = rosdep_key(module)
        if key is None:
            problems.append(
                f'{module} (imported by {users[0]}): no rosdep key known; add it to ROSDEP_KEYS '
                'and declare it in package.xml'
            )
        elif key not in allowed:
            problems.append(f'{module} (imported by {users[0]}): add <{tag}>{key}</{tag}>')
    return problems


def package_sources(package: str) -> list[Path]:
    """Return a package's installed Python sources: its Python package and launch files."""
    folder = ROOT / package
    return [*(folder / package).rglob('*.py'), *(folder / 'launch').glob('*.py')]


@pytest.mark.parametrize('package', [RUNTIME, TOOLS])
def test_every_import_of_a_package_is_declared_as_its_exec_depend(package: str) -> None:
    """Each module a package or its launch files import is its exec_depend (optional: any)."""
    modules = third_party(package_sources(package), {package})
    required = {name: users for name, users in modules.items() if name not in OPTIONAL}
    optional = {name: users for name, users in modules.items() if name in OPTIONAL}
    problems = missing(required, declared(RUN, package), 'exec_depend')
    problems += missing(optional, declared(TEST, package), 'test_depend')
    assert not problems, '\n'.join(problems)


def runtime_tools_imports(modules: dict[str, list[str]]) -> list[str]:
    """Describe each module of :data:`TOOLS_ONLY` among a package's imports, with a user."""
    return [f'{name} (imported by {modules[name][0]})' for name in TOOLS_ONLY if name in modules]


def test_the_runtime_package_neither_imports_nor_declares_the_tools() -> None:
    """pic_ros imports no pic_ros_tools, mujoco, rosbags, matplotlib or PIL, and lists none."""
    imported = runtime_tools_imports(third_party(package_sources(RUNTIME), {RUNTIME}))
    assert not imported, 'the run-time package imports tools: ' + ', '.join(imported)
    listed = declared(TEST, RUNTIME) & set(TOOLS_ONLY.values())
    assert not listed, f'pic_ros/package.xml declares what only the tools need: {listed}'


def test_the_runtime_package_declares_only_what_it_imports() -> None:
    """Every exec_depend of pic_ros is imported by it: a robot PC installs nothing more."""
    keys = {rosdep_key(name) for name in third_party(package_sources(RUNTIME), {RUNTIME})}
    unused = declared(RUN, RUNTIME) - keys
    assert not unused, f'pic_ros/package.xml declares what pic_ros does not import: {unused}'


def test_the_runtime_check_finds_a_tools_import_wherever_it_stands() -> None:
    """A run-time source importing pic_ros_tools or mujoco inside a function fails the check."""
    source = 'def f():\n    from pic_ros_tools.sim import SimRobot\n    import mujoco\n'
    found = runtime_tools_imports(
        {name: ['node.py'] for name in imported_modules(source, 'node.py')}
    )
    assert found == ['pic_ros_tools (imported by node.py)', 'mujoco (imported by node.py)']


def test_the_tools_depend_on_the_runtime_and_not_the_reverse() -> None:
    """pic_ros_tools declares pic_ros; pic_ros does not declare pic_ros_tools."""
    assert RUNTIME in declared(RUN, TOOLS)
    assert TOOLS not in declared(TEST, RUNTIME)


def test_every_test_import_is_declared() -> None:
    """Each module the tests import (or importorskip) is declared for ``colcon test``."""
    tests = list((ROOT / 'test').rglob('*.py'))
    local = {RUNTIME, TOOLS, 'test', 'conftest'} | {path.stem for path in tests}
    available = declared(TEST, TOOLS) | declared(RUN, RUNTIME)
    problems = missing(third_party(tests, local), available, 'test_depend')
    assert not problems, '\n'.join(problems)


def test_the_imports_found_include_the_ones_the_issue_named() -> None:
    """The walk sees the imports that were once undeclared: rosbags, mujoco, rcl_interfaces."""
    assert 'rcl_interfaces' in third_party(package_sources(RUNTIME), {RUNTIME})
    tools = third_party(package_sources(TOOLS), {TOOLS})
    assert {'rosbags', 'mujoco', 'PIL', 'matplotlib', 'pic_ros'} <= set(tools)


@pytest.mark.parametrize(('source', 'expected'), [
    ('import numpy as np', {'numpy'}),
    ('from rclpy.node import Node', {'rclpy'}),
    ('def f():\n    try:\n        import mujoco\n    except ImportError:\n        pass',
     {'mujoco'}),
    ("chain = pytest.importorskip('ikpy.chain')", {'ikpy'}),
    ('from . import sibling', set()),
])
def test_imports_are_found_wherever_they_stand(source: str, expected: set[str]) -> None:
    """Imports inside functions and ``try``, and importorskip names, count; relative ones not."""
    assert imported_modules(source, '<test>') == expected
