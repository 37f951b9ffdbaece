"""
What the README and ``docs/usage.md`` tell a user to type is run by a test, or they say it is not.

Every command line of their code blocks (and every inline ``ros2 ...`` command) must match one
entry of :data:`COMMANDS`: the tests that run it, or the phrase of those docs that says it is not
tested here. A new command fails the first test until it is placed; an entry whose command left
the docs fails the second. And the docs document every argument ``ros2 launch pic_ros <file>
--show-args`` prints, in the README's table generated from the parameter tables or in the table
of the other arguments in ``docs/usage.md``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
import os
import re
import sys

from launch_harness import ROOT, run_command, VENV_BIN, Workspace
from pic_ros.ros.parameter_docs import parameter_file
import pytest

README = ROOT / 'README.md'
USER_DOCS = (README, ROOT / 'docs' / 'usage.md')
"""The documents whose commands a user types."""
COMMAND_WORDS = ('make', 'cd', 'source', 'pip', 'ros2', 'python', 'colcon', 'rosdep')
"""First words of the lines of the docs' code blocks that are commands to type."""

LAUNCH = 'test/launch/test_ros2_launch.py'
COLCON = 'test/launch/test_colcon.py'
BUILD = f'{COLCON}::test_colcon_build_installs_the_executables_launch_files_config_and_urdfs'


@dataclass(frozen=True)
class Placed:
    """
    Where a command of the docs is exercised.

    :param pattern: Regular expression matching the command line (comments stripped).
    :param tests: ``path::function`` of the tests that run it.
    :param not_tested: Phrase of the docs saying what of it is not tested here ('' if none).
    """

    pattern: str
    tests: tuple[str, ...] = ()
    not_tested: str = ''


COMMANDS = (
    Placed(r'make demo', ('test/ros/test_demo.py::test_short_demo_run_writes_every_output',)),
    Placed(r'make demo RECORDING=\.\./shared/data/pic_demos/assembly1_skel\.txt',
           ('test/ros/test_demo.py::test_make_demo_passes_a_given_recording_and_no_empty_one',
            'test/ros/test_demo.py::test_a_kinect_v2_text_recording_is_replayed_and_scored_'
            'offline_as_evaluate_scores_it')),
    Placed(r'make test', not_tested='as CI runs it (.ci/run)'),  # the run these tests are in
    Placed(r'cd ~/ros2_ws/src && git clone .* pic_ros',
           not_tested='`git clone` and `rosdep install`'),
    Placed(r'cd ~/ros2_ws && rosdep install .*&& colcon build --packages-up-to pic_ros_tools',
           (BUILD,
            f'{COLCON}::test_colcon_symlink_install_links_the_installed_files_to_the_repository'),
           not_tested='`git clone` and `rosdep install`'),
    Placed(r'cd ~/ros2_ws && rosdep install --from-paths src/pic_ros/pic_ros .*'
           r'&& colcon build --packages-select pic_ros',
           (f'{LAUNCH}::test_teleop_launch_runs_with_only_pic_ros_installed',
            f'{LAUNCH}::test_sim_without_pic_ros_tools_says_to_install_it_and_starts_nothing'),
           not_tested='`git clone` and `rosdep install`'),
    Placed(r'source install/setup\.bash',
           (BUILD,)),
    Placed(r'pip install .*', not_tested='`pip install` lines'),
    Placed(r'ros2 bag (play|record)( .*)?', not_tested='rosbag2 has no PyPI wheel'),
    Placed(r'ros2 launch pic_ros teleop\.launch\.py robot:=baxter source:=azure_kinect '
           r'input_topic:=/body_tracking_data',
           (f'{LAUNCH}::test_teleop_launch_drives_baxter_from_the_azure_kinect_bag',),
           not_tested='a live Azure Kinect driver'),
    Placed(r'ros2 launch pic_ros teleop\.launch\.py robot:=tiago source:=xsens_mvn '
           r'udp_address:=0\.0\.0\.0',
           (f'{LAUNCH}::test_teleop_launch_takes_the_xsens_stream_over_udp',),
           not_tested='Xsens suit'),
    Placed(r'ros2 launch pic_ros multi_robot\.launch\.py source:=azure_kinect',
           (f'{LAUNCH}::test_multi_robot_launch_drives_every_controller_of_every_robot',)),
    Placed(r'ros2 launch pic_ros teleop\.launch\.py robot:=yumi sim:=true '
           r'input_topic:=/body_tracking_data start_engaged:=true',
           (f'{LAUNCH}::test_teleop_launch_drives_every_controller_of_each_robot',)),
    Placed(r'ros2 run pic_ros_tools replay \.\./shared/data/azure_kinect/body_tracking_ergonomics '
           r'--remap /kinect2/body_tracking_data:=/body_tracking_data',
           (f'{LAUNCH}::test_teleop_launch_drives_every_controller_of_each_robot',)),
    Placed(r'ros2 launch pic_ros gazebo\.launch\.py robot:=baxter replay_bag:=.*',
           (f'{LAUNCH}::test_gazebo_launch_without_gazebo_names_every_missing_package',),
           not_tested='Gazebo, ros2_control and RViz themselves'),
    Placed(r'ros2 service call /solver_node/calibrate std_srvs/srv/Trigger',
           (f'{LAUNCH}::test_teleop_launch_drives_baxter_from_the_azure_kinect_bag',)),
    Placed(r'ros2 param set /solver_node eta 7',
           (f'{LAUNCH}::test_teleop_launch_drives_baxter_from_the_azure_kinect_bag',)),
    Placed(r'ros2 service call /trajectory_publisher/(engage|disengage|reset_estop) '
           r'std_srvs/srv/Trigger',
           (f'{LAUNCH}::test_teleop_launch_drives_baxter_from_the_azure_kinect_bag',)),
    Placed(r'ros2 topic pub --once --keep-alive 1 /estop std_msgs/msg/Bool '
           r"'\{data: (true|false)\}'",
           (f'{LAUNCH}::test_teleop_launch_drives_baxter_from_the_azure_kinect_bag',)),
    Placed(r'ros2 topic echo --once --qos-reliability reliable --qos-durability transient_local '
           r'/engaged std_msgs/msg/Bool',
           (f'{LAUNCH}::test_teleop_launch_drives_baxter_from_the_azure_kinect_bag',)),
    Placed(r'ros2 run pic_ros_tools replay',
           (f'{LAUNCH}::test_teleop_launch_drives_every_controller_of_each_robot',)),
    Placed(r'ros2 launch pic_ros teleop\.launch\.py',
           (f'{LAUNCH}::test_teleop_launch_runs_with_only_pic_ros_installed',
            f'{LAUNCH}::test_sim_without_pic_ros_tools_says_to_install_it_and_starts_nothing')),
    Placed(r'ros2 launch pic_ros <file> --show-args',
           ('test/launch/test_readme_commands.py::'
            'test_every_launch_argument_is_documented_in_the_readme',)),
    Placed(r'python -m pic_ros teleop --robot baxter --source azure_kinect',
           ('test/ros/test_cross_process.py::'
            'test_real_azure_kinect_bag_drives_every_controller_across_processes',)),
    Placed(r'python -m pic_ros_tools sim --robot baxter',
           ('test/ros/test_sim_robot_node.py::'
            'test_the_sim_command_stops_after_its_duration_having_written_frames',)),
    Placed(r'python -m pic_ros_tools replay .* '
           r'--remap /kinect2/body_tracking_data:=/body_tracking_data',
           ('test/ros/test_replay_node.py::'
            'test_topics_and_remap_choose_and_rename_what_is_published',
            f'{LAUNCH}::test_teleop_launch_drives_every_controller_of_each_robot')),
    Placed(r'python -m pic_ros_tools convert .*',
           ('test/test_bags_convert.py::test_convert_command_writes_and_describes_the_bag',)),
    Placed(r'python -m pic_ros_tools evaluate --live .*',
           ('test/ros/test_evaluate_live.py::'
            'test_live_evaluation_of_a_few_seconds_gives_every_figure_beside_the_offline_ones',)),
    Placed(r'python -m pic_ros_tools evaluate (?!--live).*',
           ('test/test_evaluate.py::test_cli_json_prints_one_object_with_one_record_per_setting',
            'test/test_evaluate.py::test_the_synthetic_suite_is_scored_per_take')),
    Placed(r'python -m pic_ros_tools calibrate --recording PATH.*',
           ('test/test_evaluate.py::'
            'test_calibrate_writes_a_profile_that_position_evaluation_uses',)),
    Placed(r'python -m pic_ros params .*',
           ('test/launch/test_readme_commands.py::'
            'test_params_prints_the_readme_tables_and_the_parameter_file',)),
    Placed(r'python -m pic_ros compile.*',
           ('test/test_runtime_cli.py::'
            'test_compile_prepares_the_kernels_of_the_robots_asked_for',)),
    Placed(r'ros2 run pic_ros pic_ros compile',
           (f'{COLCON}::test_the_installed_compile_command_finds_every_kernel_in_the_cache',)),
    Placed(r'python -m pic_ros_tools bench.*', not_tested='`bench` aside'),
    Placed(r'python -m pic_ros_tools report .*',
           ('test/test_readme_results.py::'
            'test_the_report_command_rewrites_only_the_marked_block',
            'test/test_results_report.py::'
            'test_the_report_command_rewrites_only_the_marked_blocks_and_then_nothing'),
           not_tested='Of `report` the tests run the rendering only'),
    Placed(r'ros2 launch pic_ros tiago_whole_body\.launch\.py follow_base:=true',
           ('test/launch/test_whole_body_launch.py::'
            'test_tiago_whole_body_launch_starts_the_base_follower_and_the_whole_body_solver',),
           not_tested='real robots'),
    Placed(r'python -m pic_ros teleop --robot tiago --follow-base',
           ('test/ros/test_teleop_pipeline.py::'
            'test_follow_base_adds_the_base_follower_on_the_robot_files_base_topic',)),
    Placed(r'ros2 control list_controllers|ros2 topic info -v', not_tested='real robots'),
)
"""Each command the docs tell a user to type, and where it is run or said not to be."""


def _user_text() -> str:
    """Return the text of the documents a user types commands from, one after the other."""
    return '\n'.join(path.read_text(encoding='utf-8') for path in USER_DOCS)


def readme_commands() -> list[str]:
    """
    Return the commands of the README and ``docs/usage.md``.

    :return: The code-block lines that start with a command word (trailing comments stripped)
        and the inline ``ros2 ...`` commands of three words or more, each once.
    """
    text = _user_text()
    commands = []
    for line in text.splitlines():
        if line.startswith('    ') and line.split()[0] in COMMAND_WORDS:
            commands.append(re.sub(r'\s+#.*$', '', line.strip()))
    # Inline: a command with its arguments, not a mention of a verb such as `ros2 launch`.
    commands += [
        found for found in re.findall(r'`(ros2 [^`]+)`', text) if len(found.split()) > 2
    ]
    return list(dict.fromkeys(commands))


def _functions(path: str) -> set[str]:
    """Return the names of the functions defined at the top of a test file."""
    tree = ast.parse((ROOT / path).read_text(encoding='utf-8'))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_readme_command_is_run_by_a_test_or_said_not_to_be():
    """Each command has its place, whose tests exist and whose caveat the docs state."""
    text = _user_text()
    commands = readme_commands()
    assert len(commands) > 15, commands
    for command in commands:
        places = [place for place in COMMANDS if re.fullmatch(place.pattern, command)]
        assert len(places) == 1, f'{command!r} matches {len(places)} entries of COMMANDS'
        place = places[0]
        assert place.tests or place.not_tested, command
        for test in place.tests:
            path, _, function = test.partition('::')
            assert function in _functions(path), f'{command!r}: no test {test}'
        if place.not_tested:
            assert place.not_tested in text, f'{command!r}: the docs do not say it'


def test_every_placed_command_is_in_the_readme():
    """No entry of COMMANDS outlives its command in the docs."""
    commands = readme_commands()
    for place in COMMANDS:
        assert any(re.fullmatch(place.pattern, command) for command in commands), place.pattern


def _table(marker: str) -> dict[str, list[str]]:
    """Return the rows of a docs table between ``<!-- marker -->`` comments, by first cell."""
    text = _user_text()
    section = text.split(f'<!-- {marker} -->')[1].split(f'<!-- /{marker} -->')[0]
    rows = {}
    for line in section.strip().splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip('|').split('|')]
        rows[cells[0].strip('`')] = cells[1:]
    return rows


def _shown_arguments(workspace: Workspace, tmp_path, launch_file: str) -> dict[str, str]:
    """Return the arguments ``ros2 launch pic_ros <file> --show-args`` prints, with defaults."""
    result = run_command(
        [str(VENV_BIN / 'ros2'), 'launch', 'pic_ros', launch_file, '--show-args'],
        workspace.ros_environment(tmp_path / 'ros_home'), tmp_path,
    )
    assert result.returncode == 0, result.stdout
    shown = dict(re.findall(
        r"^    '(\w+)':\n(?:        .*\n)*?        \(default: (.*)\)$", result.stdout, re.M
    ))
    assert len(shown) == result.stdout.count("\n    '"), result.stdout
    return shown


@pytest.mark.launch
@pytest.mark.parametrize(
    'launch_file',
    ['teleop.launch.py', 'multi_robot.launch.py', 'gazebo.launch.py', 'tiago_whole_body.launch.py']
)
def test_every_launch_argument_is_documented_in_the_readme(launch_file, workspace, tmp_path):
    """
    Each argument --show-args prints is a row of the README, for this launch file, default too.

    Node parameter arguments are rows of the generated table; the others of the table of the
    other arguments, whose launch-file column names this file and whose default is the one
    printed (where it is a plain value, not a substitution).
    """
    generated = _table('launch-arguments')
    others = _table('other-launch-arguments')
    short = launch_file.removesuffix('.launch.py')
    shown = _shown_arguments(workspace, tmp_path, launch_file)
    assert shown
    for name, default in shown.items():
        if name in generated:
            assert generated[name][0].strip('`') == default.strip("'") or (
                default == "''" and generated[name][0] == "`''`"
            ), f'{name}: README default {generated[name][0]}, launch default {default}'
            continue
        assert name in others, f'{launch_file}: {name} is not in the docs'
        files, documented = others[name][0], others[name][1]
        assert short in [item.strip() for item in files.split(',')], f'{name}: {files}'
        if default.startswith("'"):
            value = default.strip("'")
            assert documented.strip('`') == (value or "''"), (
                f'{name}: README default {documented}, launch default {default}'
            )


def test_params_prints_the_readme_tables_and_the_parameter_file(tmp_path):
    """``python -m pic_ros params --markdown`` prints the docs' sections; --yaml the file."""
    text = _user_text()
    markdown = run_command(
        [sys.executable, '-m', 'pic_ros', 'params', '--markdown'], dict(os.environ), tmp_path
    )
    assert markdown.returncode == 0, markdown.stdout
    sections = re.findall(r'(<!-- ([\w:-]+) -->\n.*?\n<!-- /\2 -->)', markdown.stdout, re.S)
    assert len(sections) >= 5, markdown.stdout
    for section, _ in sections:
        assert section in text
    yaml_text = run_command(
        [sys.executable, '-m', 'pic_ros', 'params', '--yaml'], dict(os.environ), tmp_path
    )
    assert yaml_text.returncode == 0, yaml_text.stdout
    assert yaml_text.stdout == parameter_file()
    shipped = ROOT / 'pic_ros' / 'config' / 'teleop.yaml'
    assert yaml_text.stdout == shipped.read_text(encoding='utf-8')
