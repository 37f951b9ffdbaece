"""
``colcon build`` and ``colcon test`` of the package, as the README's workspace instructions run it.

The package is built from this repository (``--base-paths``) into a workspace of the test's own,
``install/setup.bash`` is sourced, and what a ROS user relies on is checked there: the
executables in ``lib/pic_ros``, the launch files, configuration, URDFs and the demo recording in
``share/pic_ros``, the ament index entry (``ros2 pkg``), and that ``ros2 launch`` finds the launch
files. ``--symlink-install`` links the installed files back to the repository. ``colcon test``
runs pytest on the package and ``colcon test-result`` reads its results.
"""

from __future__ import annotations

import os
from pathlib import Path

from launch_harness import ROOT, run_command, VENV_BIN, Workspace
import pytest

pytestmark = pytest.mark.launch

EXECUTABLES = {
    'pic_ros', 'skeleton_node', 'solver_node', 'trajectory_publisher', 'teleop', 'sim_robot',
    'replay', 'base_follower',
}
"""The console scripts of setup.py, which colcon installs into lib/pic_ros."""

SHARED_FOLDERS = {
    'launch': '*.launch.py',
    'config': '*.yaml',
    'config/controllers': '*.yaml',
    'urdf': '*.urdf',
    'demo': '*',
    'demo/synthetic1_bag': '*',
}
"""Folders of the repository installed into share/pic_ros, with the files each must hold."""


def _expected_files() -> list[str]:
    """Return the repository files that must be installed into share/pic_ros."""
    files = ['package.xml']
    for folder, pattern in SHARED_FOLDERS.items():
        found = sorted(p for p in (ROOT / folder).glob(pattern) if p.is_file())
        assert found, f'{folder}/{pattern} matches nothing in the repository'
        files += [str(p.relative_to(ROOT)) for p in found]
    return files


def _ros2(workspace: Workspace, tmp_path: Path, *argv: str) -> str:
    """Run a short ``ros2`` command in the workspace's environment; return its output."""
    result = run_command(
        [str(VENV_BIN / 'ros2'), *argv], workspace.ros_environment(tmp_path / 'ros_home'),
        tmp_path,
    )
    assert result.returncode == 0, result.stdout
    return result.stdout


def test_colcon_build_installs_the_executables_launch_files_config_and_urdfs(
    workspace: Workspace, tmp_path
):
    """A plain build installs every executable and data file, found through the ament index."""
    lib = workspace.install / 'pic_ros' / 'lib' / 'pic_ros'
    assert {path.name for path in lib.iterdir()} == EXECUTABLES
    for executable in lib.iterdir():
        assert os.access(executable, os.X_OK), executable
        shebang = executable.read_text(encoding='utf-8').splitlines()[0]
        assert shebang == f'#!{VENV_BIN / "python"}', f'{executable.name}: {shebang}'
    for relative in _expected_files():
        installed = workspace.share / relative
        assert installed.is_file() and not installed.is_symlink(), relative
        assert installed.read_bytes() == (ROOT / relative).read_bytes(), relative
    index = workspace.install / 'pic_ros' / 'share' / 'ament_index' / 'resource_index'
    assert (index / 'packages' / 'pic_ros').is_file()

    prefix = _ros2(workspace, tmp_path, 'pkg', 'prefix', 'pic_ros').strip()
    assert Path(prefix) == workspace.install / 'pic_ros'
    listed = _ros2(workspace, tmp_path, 'pkg', 'executables', 'pic_ros').split()
    assert set(listed) - {'pic_ros'} == EXECUTABLES - {'pic_ros'}


def test_colcon_symlink_install_links_the_installed_files_to_the_repository(
    ros_tools, tmp_path
):
    """With --symlink-install the installed data files and the code are the repository's."""
    del ros_tools  # installed (or the test skipped, naming what is missing)
    workspace = Workspace(tmp_path / 'ws')
    workspace.root.mkdir()
    workspace.build('--symlink-install')
    for relative in _expected_files():
        installed = workspace.share / relative
        assert installed.is_symlink(), relative
        assert installed.resolve() == (ROOT / relative).resolve(), relative
    code = run_command(
        [str(VENV_BIN / 'python'), '-c', 'import pic_ros; print(pic_ros.__file__)'],
        workspace.environment, tmp_path,
    )
    assert code.returncode == 0, code.stdout
    assert Path(code.stdout.strip()).resolve() == (ROOT / 'pic_ros' / '__init__.py').resolve()
    arguments = _ros2(workspace, tmp_path, 'launch', 'pic_ros', 'teleop.launch.py', '--show-args')
    assert "'robot':" in arguments and "'sim':" in arguments, arguments


def test_colcon_test_runs_the_package_tests_and_reports_them(workspace: Workspace):
    """
    ``colcon test`` runs pytest on the package (here the launch file checks) with results.

    The whole suite is what ``colcon test`` runs by default; it is narrowed here with
    ``--pytest-args``, since this test is part of that suite.
    """
    environment = dict(workspace.environment)
    result = run_command(
        [str(VENV_BIN / 'colcon'), 'test', '--base-paths', str(ROOT), '--packages-select',
         'pic_ros', '--pytest-args', 'test/launch/test_launch_files.py'],
        environment, workspace.root, timeout=180.0,
    )
    assert result.returncode == 0, result.stdout
    summary = run_command(
        [str(VENV_BIN / 'colcon'), 'test-result', '--verbose', '--test-result-base',
         str(workspace.root / 'build' / 'pic_ros')],
        environment, workspace.root,
    )
    assert summary.returncode == 0, summary.stdout
    assert ' 0 errors, 0 failures, 0 skipped' in summary.stdout, summary.stdout
    counted = int(summary.stdout.split('Summary: ')[1].split()[0])
    assert counted > 20, summary.stdout
