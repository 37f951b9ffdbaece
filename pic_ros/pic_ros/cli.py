"""
Command line of the run-time package: ``python -m pic_ros <command>``.

What a robot PC needs: ``teleop`` (the three nodes in one ROS 2 process), ``params`` (the
nodes' parameters as a parameter file or Markdown tables) and ``compile`` (the numba kernels
compiled into numba's cache ahead of the first launch, :mod:`pic_ros.kernels`). The tools
(``evaluate``, ``bench``, ``calibrate``, ``demo``, ``sim``, ``replay``, ``convert``) are
``python -m pic_ros_tools <command>`` of the package ``pic_ros_tools``; asked here, they print
where they are and exit with status 2, without importing it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import logging
import sys
from typing import Final


def run_teleop(argv: Sequence[str]) -> int:
    """
    Run the one-process ROS pipeline (needs rclpy).

    :param argv: The teleop arguments.
    :return: Process exit status.
    """
    from pic_ros.ros.teleop import main as teleop_main

    return int(teleop_main(argv))


def run_params(argv: Sequence[str]) -> int:
    """
    Print the documents derived from the nodes' parameter tables (no ROS needed).

    :param argv: The params arguments.
    :return: Process exit status.
    """
    from pic_ros.ros.parameter_docs import main as params_main

    return int(params_main(list(argv)))


def run_compile(argv: Sequence[str]) -> int:
    """
    Compile the kernels the nodes run, or find them in numba's cache (no ROS needed).

    :param argv: The compile arguments (``--robot NAME``, repeatable; default every shipped
        robot).
    :return: Process exit status (0 done, 1 a robot that cannot be loaded).
    """
    from pic_ros.exceptions import PicRosError
    from pic_ros.kernels import prepare_kernels

    parser = argparse.ArgumentParser(
        prog='python -m pic_ros compile',
        description='Compile the collision, avoidance, joint-recovery and motion kernels (numba) '
        'into its cache, so that the first launch after an install does not wait for them.',
    )
    parser.add_argument(
        '--robot', action='append', default=[], metavar='NAME',
        help='a robot name or robot file (repeatable); default: every shipped robot',
    )
    arguments = parser.parse_args(list(argv))
    try:
        report = prepare_kernels(arguments.robot)
    except PicRosError as error:
        print(f'python -m pic_ros compile: {error}', file=sys.stderr)
        return 1
    print(report.summary())
    return 0


COMMANDS: Final[dict[str, tuple[Callable[[Sequence[str]], int], str]]] = {
    'teleop': (run_teleop, 'tracker -> robot trajectories in one ROS 2 process'),
    'params': (run_params, "the nodes' parameters: config/teleop.yaml or the docs' tables"),
    'compile': (run_compile, "the numba kernels into numba's cache, ahead of the first launch"),
}
"""The commands, each parsing its own arguments, with their help."""

TOOL_COMMANDS: Final = ('evaluate', 'bench', 'calibrate', 'demo', 'sim', 'replay', 'convert')
"""The commands of ``python -m pic_ros_tools`` (package ``pic_ros_tools``)."""


def tool_message(command: str) -> str:
    """
    Say where a tool command is.

    :param command: One of :data:`TOOL_COMMANDS`.
    :return: One line naming the command to run and the package to install.
    """
    return (
        f'python -m pic_ros: {command} is a command of the tools: run python -m pic_ros_tools '
        f'{command} (install the package pic_ros_tools: colcon build --packages-up-to '
        'pic_ros_tools, or pip install -e pic_ros_tools)'
    )


def build_parser() -> argparse.ArgumentParser:
    """
    Build the argument parser of ``python -m pic_ros`` (for its usage and help).

    :return: The parser.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros',
        description='Robot arm teleoperation by human pose imitation: the run-time commands '
        '(the tools are python -m pic_ros_tools).',
    )
    commands = parser.add_subparsers(dest='command', required=True)
    for name, (_, text) in COMMANDS.items():
        commands.add_parser(name, add_help=False, help=f'{text} (see {name} --help)')
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the command line.

    :param argv: Arguments without the program name; default ``sys.argv[1:]``.
    :return: Process exit status (0 success, 2 usage error or a tool command).
    """
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in COMMANDS:
        return COMMANDS[arguments[0]][0](arguments[1:])
    if arguments and arguments[0] in TOOL_COMMANDS:
        print(tool_message(arguments[0]), file=sys.stderr)
        return 2
    build_parser().parse_args(arguments)
    return 2
