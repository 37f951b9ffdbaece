"""
``colcon build`` and ``colcon test`` of the packages, as the README's workspace instructions say.

Both packages, ``pic_ros`` and ``pic_ros_tools``, are built from this repository
(``--base-paths``) into a workspace of the test's own, ``install/setup.bash`` is sourced, and
what a ROS user relies on is checked there: the executables in ``lib/<package>``, the launch
files, configuration and URDFs in ``share/pic_ros``, the demo recording in
``share/pic_ros_tools``, the ament index entries (``ros2 pkg``), and that ``ros2 launch`` finds
the launch files. ``--symlink-install`` links the installed files back to the repository.
``colcon test`` runs pytest for ``pic_ros_tools`` (the repository's suite) and ``colcon
test-result`` reads its results. Running with only ``pic_ros`` installed is
``test_ros2_launch.py``'s.
"""

from __future__ import annotations

import os
from pathlib import Path

from launch_harness import ROOT, run_command, VENV_BIN, Workspace
import pytest

pytestmark = pytest.mark.launch

PACKAGES = ('pic_ros', 'pic_ros_tools')
"""The packages of the repository, each in its folder of the same name."""

EXECUTABLES = {
    'pic_ros': {
        'pic_ros', 'skeleton_node', 'solver_node', 'trajectory_publisher', 'teleop',
        'base_follower',
    },
    'pic_ros_tools': {'pic_ros_tools', 'sim_robot', 'replay'},
}
"""The console scripts of each setup.py, which colcon installs into lib/<package>."""

SHARED_FOLDERS = {
    'pic_ros': {
        'launch': '*.launch.py',
        'config': '*.yaml',
        'config/controllers': '*.yaml',
        'urdf': '*.urdf',
        'rviz': '*.rviz',
        'foxglove': '*.json',
    },
    'pic_ros_tools': {
        'demo': '*',
        'demo/synthetic1_bag': '*',
    },
}
"""Folders of each package installed into share/<package>, with the files each must hold."""


def _expected_files(package: str) -> list[str]:
    """Return the files of a package's folder that must be installed into share/<package>."""
    source = ROOT / package
    files = ['package.xml']
    for folder, pattern in SHARED_FOLDERS[package].items():
        found = sorted(p for p in (source / folder).glob(pattern) if p.is_file())
        assert found, f'{package}/{folder}/{pattern} matches nothing in the repository'
        files += [str(p.relative_to(source)) for p in found]
    return files


def _share(workspace: Workspace, package: str) -> Path:
    """Return the installed share folder of a package."""
    return workspace.install / package / 'share' / package


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
    for package in PACKAGES:
        lib = workspace.install / package / 'lib' / package
        assert {path.name for path in lib.iterdir()} == EXECUTABLES[package]
        for executable in lib.iterdir():
            assert os.access(executable, os.X_OK), executable
            shebang = executable.read_text(encoding='utf-8').splitlines()[0]
            assert shebang == f'#!{VENV_BIN / "python"}', f'{executable.name}: {shebang}'
        for relative in _expected_files(package):
            installed = _share(workspace, package) / relative
            assert installed.is_file() and not installed.is_symlink(), relative
            assert installed.read_bytes() == (ROOT / package / relative).read_bytes(), relative
        index = workspace.install / package / 'share' / 'ament_index' / 'resource_index'
        assert (index / 'packages' / package).is_file()

        prefix = _ros2(workspace, tmp_path, 'pkg', 'prefix', package).strip()
        assert Path(prefix) == workspace.install / package
        listed = _ros2(workspace, tmp_path, 'pkg', 'executables', package).split()
        assert set(listed) - {package} == EXECUTABLES[package] - {package}


def test_the_installed_compile_command_finds_every_kernel_in_the_cache(
    workspace: Workspace, tmp_path
):
    """
    ``ros2 run pic_ros pic_ros compile`` runs the installed package's command.

    The workspace's warm-up compiled every kernel into numba's cache beside the installed
    modules (:meth:`Workspace.warm_up`), so the command, run again, compiles none of them.
    """
    output = _ros2(workspace, tmp_path, 'run', 'pic_ros', 'pic_ros', 'compile', '--robot', 'nao')
    lines = output.strip().splitlines()
    assert lines and "every kernel for nao was already in numba's cache" in lines[-1], output


def test_colcon_symlink_install_links_the_installed_files_to_the_repository(
    ros_tools, tmp_path
):
    """With --symlink-install the installed data files and the code are the repository's."""
    del ros_tools  # installed (or the test skipped, naming what is missing)
    workspace = Workspace(tmp_path / 'ws')
    workspace.root.mkdir()
    workspace.build('--symlink-install')
    for package in PACKAGES:
        for relative in _expected_files(package):
            installed = _share(workspace, package) / relative
            assert installed.is_symlink(), relative
            assert installed.resolve() == (ROOT / package / relative).resolve(), relative
        code = run_command(
            [str(VENV_BIN / 'python'), '-c', f'import {package}; print({package}.__file__)'],
            workspace.environment, tmp_path,
        )
        assert code.returncode == 0, code.stdout
        source = ROOT / package / package / '__init__.py'
        assert Path(code.stdout.strip()).resolve() == source.resolve()
    arguments = _ros2(workspace, tmp_path, 'launch', 'pic_ros', 'teleop.launch.py', '--show-args')
    assert "'robot':" in arguments and "'sim':" in arguments, arguments


def test_colcon_test_runs_the_package_tests_and_reports_them(workspace: Workspace):
    """
    ``colcon test`` runs pytest for pic_ros_tools (here the launch file checks) with results.

    The repository's whole suite (``../test``, ``pic_ros_tools/setup.cfg``) is what ``colcon
    test`` runs for pic_ros_tools by default; it is narrowed here with ``--pytest-args``
    (relative to the package's folder), since this test is part of that suite.
    """
    environment = dict(workspace.environment)
    result = run_command(
        [str(VENV_BIN / 'colcon'), 'test', '--base-paths', str(ROOT), '--packages-select',
         'pic_ros_tools', '--pytest-args', '../test/launch/test_launch_files.py'],
        environment, workspace.root, timeout=180.0,
    )
    assert result.returncode == 0, result.stdout
    summary = run_command(
        [str(VENV_BIN / 'colcon'), 'test-result', '--verbose', '--test-result-base',
         str(workspace.root / 'build' / 'pic_ros_tools')],
        environment, workspace.root,
    )
    assert summary.returncode == 0, summary.stdout
    assert ' 0 errors, 0 failures, 0 skipped' in summary.stdout, summary.stdout
    counted = int(summary.stdout.split('Summary: ')[1].split()[0])
    assert counted > 20, summary.stdout
