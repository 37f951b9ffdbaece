"""
Fixtures of the launch tests: the ROS 2 tools, a colcon workspace of the package, ROS processes.

The tools (``launch``, ``launch_ros``, the ``ros2`` CLI, colcon) come from ``../shared/ros-tools``
and ``requirements-ros-tools.txt``, installed into the test venv by ``make ros-tools`` (``make
test`` runs it). Without ``../shared/ros-tools`` the tests that need them skip, naming what is
missing; with it they must run, so a venv it was not installed into fails them with the command
that installs it. How the processes are run: ``launch_harness.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from launch_harness import (
    COMMAND_TIMEOUT,
    missing_tools,
    Probe,
    ROS_TOOLS,
    RosProcess,
    run_commands,
    STOP_TIMEOUT,
    VENV,
    VENV_BIN,
    Workspace,
)
import pytest


@pytest.fixture(scope='session')
def ros_tools() -> Path:
    """
    Return the venv's bin folder once the ROS tools are known to be installed there.

    Skips (saying what is missing) without ``../shared/ros-tools``; fails with the command to run
    when they are shared but not installed.
    """
    if not (ROS_TOOLS / 'install').is_file():
        pytest.skip(
            f'needs the ROS 2 launch system and ros2 CLI of ../shared/ros-tools, not found at '
            f'{ROS_TOOLS}: launch, launch_ros, ros2 launch/run/param and colcon are unavailable'
        )
    missing = missing_tools()
    if missing:
        pytest.fail(
            f'the ROS tools are not installed in {VENV} (missing: {", ".join(missing)}); run '
            '`make ros-tools` (make test does): it runs ../shared/ros-tools/install .venv and '
            'installs requirements-ros-tools.txt'
        )
    return VENV_BIN


@pytest.fixture(scope='session')
def workspace(ros_tools: Path, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """Build the packages once with ``colcon build`` (plain install) for the launch tests."""
    built = Workspace(tmp_path_factory.mktemp('colcon_ws'))
    built.build()
    built.warm_up()
    return built


@pytest.fixture
def ros2(workspace: Workspace, tmp_path: Path) -> Iterator[Callable[..., RosProcess]]:
    """
    Return a starter of ``ros2 ...`` processes in the workspace environment; stopped after.

    ``ros2('launch', 'pic_ros', 'teleop.launch.py', 'robot:=yumi', log='launch')``; ``prefix=``
    puts one more ament prefix (e.g. stand-in packages) in front of ``AMENT_PREFIX_PATH``.
    """
    started: list[RosProcess] = []
    environment = workspace.ros_environment(tmp_path / 'ros_home')

    def start(*argv: str, log: str, prefix: Path | None = None) -> RosProcess:
        variables = dict(environment)
        if prefix is not None:
            variables['AMENT_PREFIX_PATH'] = f'{prefix}:{variables["AMENT_PREFIX_PATH"]}'
        process = RosProcess(
            [str(VENV_BIN / 'ros2'), *argv], variables, tmp_path / f'{log}.log', cwd=tmp_path
        )
        started.append(process)
        return process

    yield start
    for process in reversed(started):
        process.stop(timeout=STOP_TIMEOUT)
        process.leftovers()


@pytest.fixture
def ros2_commands(workspace: Workspace, tmp_path: Path) -> Callable[..., list[str]]:
    """
    Return a runner of short ``ros2 ...`` commands (param, service), run side by side.

    ``ros2_commands(['param', 'set', ...], ['service', 'call', ...])`` returns their outputs.
    ``--no-daemon`` is the caller's to give where the verb takes it: a ros2 daemon would outlive
    the test.
    """
    environment = workspace.ros_environment(tmp_path / 'ros_home')

    def run(*commands: Sequence[str], timeout: float = COMMAND_TIMEOUT) -> list[str]:
        results = run_commands(
            [[str(VENV_BIN / 'ros2'), *argv] for argv in commands], environment, tmp_path,
            timeout,
        )
        return [result.stdout for result in results]

    return run


@pytest.fixture
def probe() -> Iterator[Callable[[Sequence[str]], Probe]]:
    """Return a maker of :class:`Probe` (closed after the test)."""
    pytest.importorskip('rclpy', reason='the launch tests need rclpy and the message packages')
    made: list[Probe] = []

    def make(topics: Sequence[str]) -> Probe:
        made.append(Probe(topics))
        return made[-1]

    yield make
    for item in made:
        item.close()
