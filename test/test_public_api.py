"""
The public API resolves; the cores stay free of ROS; the run-time loads nothing of the tools.

The two boundaries: the core of each package (all but its ``ros/``) imports no rclpy and no
``*_msgs``; a process of the run-time package (a node, ``python -m pic_ros``) loads no module of
pic_ros_tools nor what only the tools need.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
import subprocess
import sys

import pic_ros
import pic_ros_tools
import pytest

PACKAGE_DIR = Path(pic_ros.__file__).resolve().parent
ROS_LAYER = PACKAGE_DIR / 'ros'
TOOLS_DIR = Path(pic_ros_tools.__file__).resolve().parent
TOOLS_ROS_LAYER = TOOLS_DIR / 'ros'
CORE_MODULES = ('pic_ros', 'pic_ros_tools.evaluation', 'pic_ros_tools.cli', 'pic_ros_tools.bench')

RUNTIME_PROCESS_MODULES = (
    'pic_ros.cli', 'pic_ros.ros.skeleton_node', 'pic_ros.ros.solver_node',
    'pic_ros.ros.trajectory_publisher_node', 'pic_ros.ros.base_follower_node',
    'pic_ros.ros.teleop', 'pic_ros.ros.parameter_docs',
)
"""What the run-time's processes run: ``python -m pic_ros`` and every node executable."""

TOOLS_ONLY = ('pic_ros_tools', 'mujoco', 'rosbags', 'matplotlib', 'PIL')
"""Top-level modules no process of the run-time package may load."""


def _is_ros_module(name: str) -> bool:
    """Tell whether a dotted module name is rclpy or a ROS message package."""
    parts = name.split('.')
    return parts[0] == 'rclpy' or any(part.endswith('_msgs') for part in parts)


def ros_imports(source: str, filename: str = '<source>') -> list[tuple[int, str]]:
    """
    Find the ROS imports of a Python source.

    Catches ``import rclpy``, ``from rclpy... import``, any module ending in ``_msgs``, and
    ``importlib.import_module`` / ``__import__`` calls with such a literal name.

    :param source: Python source text.
    :param filename: Name for syntax errors.
    :return: ``(line, module)`` of each offending import, in file order.
    """
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f'{node.module}.{alias.name}' for alias in node.names]
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(
                function, 'id', ''
            )
            first = node.args[0]
            if called in ('import_module', '__import__') and isinstance(first, ast.Constant):
                names = [str(first.value)]
        offending = [name for name in names if _is_ros_module(name)]
        if offending:
            found.append((node.lineno, offending[0]))
    return sorted(found)


def _core_files() -> list[Path]:
    """Return every Python file of the cores (each package minus its ``ros/``)."""
    return sorted(
        path
        for package, ros_layer in ((PACKAGE_DIR, ROS_LAYER), (TOOLS_DIR, TOOLS_ROS_LAYER))
        for path in package.rglob('*.py')
        if ros_layer not in path.parents and '__pycache__' not in path.parts
    )


@pytest.mark.parametrize('name', pic_ros.__all__)
def test_every_exported_name_resolves(name):
    """Each name in ``pic_ros.__all__`` is an attribute of the package."""
    assert getattr(pic_ros, name) is not None


def test_all_lists_each_name_once():
    """``__all__`` has no duplicates."""
    assert len(set(pic_ros.__all__)) == len(pic_ros.__all__)


def test_every_subpackage_all_resolves():
    """The ``__all__`` of the sub-packages resolve too."""
    import pic_ros.robot
    import pic_ros.robot.kinematics
    import pic_ros.solvers
    import pic_ros_tools.evaluation

    modules = (pic_ros_tools.evaluation, pic_ros.robot.kinematics, pic_ros.robot, pic_ros.solvers)
    for module in modules:
        for name in module.__all__:
            assert hasattr(module, name), f'{module.__name__}.__all__ names missing {name!r}'


def test_core_imports_without_rclpy_or_messages():
    """Importing the core, ``evaluate``, the CLI and ``bench`` loads no rclpy and no ``*_msgs``."""
    script = (
        f'import json, sys\n'
        f'import {", ".join(CORE_MODULES)}\n'
        'print(json.dumps(sorted(sys.modules)))\n'
    )
    completed = subprocess.run(
        [sys.executable, '-c', script], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    modules = json.loads(completed.stdout)
    assert set(CORE_MODULES) <= set(modules)
    leaked = [name for name in modules if name.startswith('rclpy') or _is_ros_module(name)]
    assert not leaked, f'the core imported ROS modules: {leaked}'


def test_a_runtime_process_loads_nothing_of_the_tools():
    """
    The node executables and ``python -m pic_ros`` load no pic_ros_tools, mujoco, rosbags, ...

    What their modules import, at import time, in a fresh interpreter.
    """
    pytest.importorskip('rclpy', reason='the nodes need rclpy')
    script = (
        'import json, sys\n'
        f'import {", ".join(RUNTIME_PROCESS_MODULES)}\n'
        'print(json.dumps(sorted(sys.modules)))\n'
    )
    completed = subprocess.run(
        [sys.executable, '-c', script], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    modules = json.loads(completed.stdout)
    assert set(RUNTIME_PROCESS_MODULES) <= set(modules)
    loaded = [name for name in modules if name.split('.')[0] in TOOLS_ONLY]
    assert not loaded, f'a run-time process loaded modules of the tools: {loaded}'


def test_no_core_file_imports_ros():
    """No file of either package outside its ``ros/`` imports rclpy or a ``*_msgs`` module."""
    files = _core_files()
    assert PACKAGE_DIR / 'correspondence' / 'base.py' in files
    assert TOOLS_DIR / 'sim' / 'trajectory.py' in files
    violations = [
        f'{path}:{line}: imports {module}'
        for path in files
        for line, module in ros_imports(path.read_text(encoding='utf-8'), str(path))
    ]
    assert not violations, 'the core must not import ROS:\n' + '\n'.join(violations)


@pytest.mark.parametrize(
    'source, expected',
    [
        ('import rclpy\n', [(1, 'rclpy')]),
        ('import os\nfrom rclpy.node import Node\n', [(2, 'rclpy.node')]),
        ('import numpy\nimport sensor_msgs.msg\n', [(2, 'sensor_msgs.msg')]),
        ('from geometry_msgs.msg import PoseArray\n', [(1, 'geometry_msgs.msg')]),
        ('from std_msgs import msg\n', [(1, 'std_msgs')]),
        ('def f():\n    import rclpy.qos\n', [(2, 'rclpy.qos')]),
        ("import importlib\nimportlib.import_module('rclpy')\n", [(2, 'rclpy')]),
        ("__import__('trajectory_msgs.msg')\n", [(1, 'trajectory_msgs.msg')]),
        ('import rclpyx_helpers\nfrom . import sensor_msgs\nimport msgs\n', []),
        ('# import rclpy\ntext = "from rclpy import Node"\n', []),
    ],
)
def test_ros_import_check_finds_every_form(source, expected):
    """The boundary check catches each import form and ignores look-alikes and strings."""
    assert ros_imports(source) == expected
