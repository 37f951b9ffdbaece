"""``python -m pic_ros``: the run-time's commands, and where the tools' commands are."""

from __future__ import annotations

import json
import subprocess
import sys

from pic_ros.cli import main, TOOL_COMMANDS
from pic_ros.ros.parameter_docs import parameter_file
import pytest


def test_params_prints_the_parameter_file(capsys) -> None:
    """``python -m pic_ros params --yaml`` is the run-time's: the parameter file."""
    assert main(['params', '--yaml']) == 0
    assert capsys.readouterr().out == parameter_file()


@pytest.mark.parametrize('command', TOOL_COMMANDS)
def test_a_tool_command_names_the_tools_package_and_exits_2(command, capsys) -> None:
    """``python -m pic_ros evaluate`` (and each tool) says to run pic_ros_tools, status 2."""
    assert main([command, '--whatever']) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert f'run python -m pic_ros_tools {command}' in error
    assert 'install the package pic_ros_tools' in error


def test_no_command_is_a_usage_error_listing_the_runtime_commands(capsys) -> None:
    """Without a command: the usage, naming teleop and params, and status 2."""
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith('usage: python -m pic_ros') and 'teleop' in error


def test_asking_for_a_tool_imports_nothing_of_the_tools() -> None:
    """The tool commands are told apart by name: pic_ros_tools is never imported."""
    script = (
        'import json, sys\n'
        'from pic_ros.cli import main\n'
        "status = main(['demo'])\n"
        'print(json.dumps([status, sorted(sys.modules)]))\n'
    )
    completed = subprocess.run(
        [sys.executable, '-c', script], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    status, modules = json.loads(completed.stdout)
    assert status == 2
    assert not [name for name in modules if name.split('.')[0] == 'pic_ros_tools']


def test_compile_prepares_the_kernels_of_the_robots_asked_for(capsys) -> None:
    """``python -m pic_ros compile --robot nao``: status 0, one line naming the robot."""
    assert main(['compile', '--robot', 'nao']) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and 'nao' in lines[0]


def test_compile_refuses_a_robot_it_cannot_load_with_status_1(capsys) -> None:
    """An unknown robot: status 1 and the reason on stderr, nothing on stdout."""
    assert main(['compile', '--robot', 'no_such_robot']) == 1
    captured = capsys.readouterr()
    assert captured.out == '' and 'no_such_robot' in captured.err


def test_kernels_prepared_once_are_not_compiled_again() -> None:
    """A second preparation in the same process compiles no kernel signature."""
    from pic_ros.kernels import prepare_kernels

    first = prepare_kernels(['yumi'])
    second = prepare_kernels(['yumi'])
    assert first.robots == second.robots == ('yumi',)
    assert second.compiled == 0
    assert second.available == first.available
    if not second.available:
        assert first.compiled == 0  # nothing compiled without numba
