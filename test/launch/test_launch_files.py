"""
The launch files and the configuration files they load.

Two layers: with the ROS tools installed (``make ros-tools``, whenever ``../shared`` is present),
each launch file is loaded with launch's own Python loader and its declared arguments are compared
with the documented ones (running them is ``test_ros2_launch.py``'s). Everywhere (no ``launch``
needed), the launch files are read with :mod:`ast`:
every argument is declared with a description, every executable exists, every file of this
package they name exists and is installed; and ``config/teleop.yaml`` and
``config/controllers/*.yaml`` are checked against the node parameter tables and the robot files.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
import fnmatch
import json
from pathlib import Path
from typing import Any

from pic_ros.resources import shipped_robots
from pic_ros.ros.launch_arguments import parameter_arguments
from pic_ros.ros.schema import PIPELINE, SET_BY_LAUNCH
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_DIR = ROOT / 'pic_ros' / 'launch'
CONFIG_DIR = ROOT / 'pic_ros' / 'config'
PACKAGE = 'pic_ros'
TOOLS_PACKAGE = 'pic_ros_tools'
ROBOTS = shipped_robots()
"""Every robot of ``config/`` (a robot file with its URDF)."""

DOCUMENTED_ARGUMENTS = {
    'teleop.launch.py': {
        'robot', 'source', 'input_topic', 'solver', 'eta', 'mapping', 'correspondence',
        'user_profile', 'namespace', 'use_sim_time', 'single_process', 'udp_address', 'udp_port',
        'params_file', 'use_rviz', 'sim', 'admittance', 'follow_base', 'base_cmd_topic',
        'base_cmd_stamped', 'wrench_topic', 'whole_body', 'start_engaged', 'gripper_interface',
        'realtime_priority',
    },
    'multi_robot.launch.py': {
        'robots', 'source', 'input_topic', 'solver', 'eta', 'mapping', 'correspondence',
        'user_profile', 'udp_address', 'udp_port', 'use_sim_time', 'params_file', 'sim',
        'admittance', 'whole_body', 'start_engaged', 'gripper_interface', 'realtime_priority',
    },
    'gazebo.launch.py': {
        'robot', 'source', 'input_topic', 'solver', 'gz_args', 'replay_bag', 'distro',
        'controllers_file', 'start_engaged', 'admittance', 'follow_base',
    },
    'tiago_whole_body.launch.py': {
        'source', 'input_topic', 'namespace', 'sim', 'single_process', 'use_sim_time',
        'follow_base', 'base_cmd_topic', 'base_cmd_stamped', 'admittance', 'wrench_topic',
        'start_engaged',
    },
}
"""Launch arguments each launch file must declare (and no others)."""

INCLUDES = {'tiago_whole_body.launch.py': 'teleop.launch.py'}
"""
Launch files that include another: loaded, they may show its arguments too.

Whether they do depends on whether the included file is found from where the test runs (it is
named through ``FindPackageShare``): in a colcon workspace it is, from the repository it is not.
"""

EXTERNAL_EXECUTABLES = {
    ('robot_state_publisher', 'robot_state_publisher'),
    ('ros_gz_sim', 'create'),
    ('ros_gz_bridge', 'parameter_bridge'),
    ('controller_manager', 'spawner'),
    ('rviz2', 'rviz2'),
}
"""Executables of other ROS packages the launch files may start."""

PENDING_SCRIPTS = {'replay': 'pic_ros_tools.ros.replay_node'}
"""pic_ros executables whose console script is still to be added to setup.py (module)."""

TELEOP_NODES = {f'/**/{table.node}': table for table in PIPELINE}
"""Node keys of config/teleop.yaml and the nodes' parameter tables."""

TRAJECTORY_CONTROLLER = 'joint_trajectory_controller/JointTrajectoryController'
STATE_PUBLISHER = 'robot_state_publisher'
BROADCASTER = 'joint_state_broadcaster/JointStateBroadcaster'
DIFF_DRIVE = 'diff_drive_controller/DiffDriveController'
FORCE_TORQUE = 'force_torque_sensor_broadcaster/ForceTorqueSensorBroadcaster'


def _launch_files() -> list[Path]:
    """Return the launch files of the package."""
    return sorted(LAUNCH_DIR.glob('*.launch.py'))


def _tree(path: Path) -> ast.Module:
    """Parse a Python file."""
    return ast.parse(path.read_text(encoding='utf-8'), filename=str(path))


def _calls(tree: ast.AST, name: str) -> Iterator[ast.Call]:
    """Yield the calls of ``name`` (plain or attribute call) in a tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(
                function, 'id', None
            )
            if called == name:
                yield node


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    """Return the value of a keyword argument of a call, if given."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _loop_values(tree: ast.AST) -> dict[str, list[str]]:
    """Map loop variables iterating over literal string tuples/lists to their values."""
    values: dict[str, list[str]] = {}
    loops = [
        (node.target, node.iter)
        for node in ast.walk(tree)
        if isinstance(node, (ast.For, ast.comprehension))
    ]
    for target, iterable in loops:
        if isinstance(target, ast.Name) and isinstance(iterable, (ast.Tuple, ast.List)):
            items = [e.value for e in iterable.elts if isinstance(e, ast.Constant)]
            if items and all(isinstance(item, str) for item in items):
                values[target.id] = items
    return values


def _strings(node: ast.expr | None, tree: ast.AST) -> list[str] | None:
    """Return the possible string values of an expression: a literal or a literal loop var."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        found = _loop_values(tree).get(node.id)
        if found is not None:
            return found
        for assign in ast.walk(tree):
            if (
                isinstance(assign, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == node.id for t in assign.targets)
                and isinstance(assign.value, ast.Constant)
                and isinstance(assign.value.value, str)
            ):
                return [assign.value.value]
    return None


def _setup_tree(package: str = PACKAGE) -> ast.Module:
    """Parse a package's setup.py."""
    return _tree(ROOT / package / 'setup.py')


def _console_scripts(package: str = PACKAGE) -> set[str]:
    """Return the console script names of a package's setup.py."""
    names = set()
    for node in ast.walk(_setup_tree(package)):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == 'console_scripts':
                    assert isinstance(value, ast.List)
                    for item in value.elts:
                        assert isinstance(item, ast.Constant)
                        names.add(item.value.split('=')[0].strip())
    assert names, 'setup.py declares no console_scripts'
    return names


def _installed_patterns() -> list[str]:
    """Return the data_files patterns of setup.py's share(folder, pattern) calls."""
    patterns = []
    for call in _calls(_setup_tree(), 'share'):
        parts = [a.value for a in call.args if isinstance(a, ast.Constant)]
        if len(parts) == 2:
            patterns.append(f'{parts[0]}/{parts[1]}')
        elif len(parts) == 1:
            patterns.append(f'{parts[0]}/*')
    return patterns


def _is_installed(relative: str) -> bool:
    """Tell whether a share/pic_ros path is installed by setup.py's data_files."""
    folder = relative.rsplit('/', 1)[0]
    return any(
        pattern.rsplit('/', 1)[0] == folder and fnmatch.fnmatch(relative, pattern)
        for pattern in _installed_patterns()
    )


def _package_paths(tree: ast.AST) -> list[list[str]]:
    """Return the literal parts of PathJoinSubstitution([FindPackageShare('pic_ros'), ...])."""
    found = []
    for call in _calls(tree, 'PathJoinSubstitution'):
        if not call.args or not isinstance(call.args[0], (ast.List, ast.Tuple)):
            continue
        first, *rest = call.args[0].elts
        if not (
            isinstance(first, ast.Call)
            and getattr(first.func, 'id', None) == 'FindPackageShare'
            and _strings(first.args[0] if first.args else None, tree) == [PACKAGE]
        ):
            continue
        parts = [_strings(part, tree) for part in rest]
        assert all(p is not None and len(p) == 1 for p in parts), (
            f'PathJoinSubstitution with a non-literal part: {ast.unparse(call)}'
        )
        found.append([p[0] for p in parts])
    return found


# Always: static checks of the launch files ------------------------------------------------------


def test_documented_launch_files_are_the_shipped_ones():
    """Every launch file has its documented argument list, and vice versa."""
    assert {path.name for path in _launch_files()} == set(DOCUMENTED_ARGUMENTS)


def _parameter_argument_names(tree: ast.AST) -> set[str]:
    """Return the arguments a launch file declares from parameter_arguments(...), if it does."""
    names: set[str] = set()
    for call in _calls(tree, 'parameter_arguments'):
        wanted = None
        if call.args:
            assert isinstance(call.args[0], ast.Tuple), ast.unparse(call)
            wanted = tuple(element.value for element in call.args[0].elts)
        names.update(argument.name for argument in parameter_arguments(wanted))
    return names


def _from_table(call: ast.Call) -> bool:
    """Tell whether a DeclareLaunchArgument takes its name from a parameter_arguments() item."""
    first = call.args[0] if call.args else _keyword(call, 'name')
    return isinstance(first, ast.Attribute) and first.attr == 'name'


@pytest.mark.parametrize('path', _launch_files(), ids=lambda path: path.name)
def test_every_argument_is_declared_with_a_description(path):
    """Each DeclareLaunchArgument has a literal name and description, or comes from a table."""
    tree = _tree(path)
    declarations = list(_calls(tree, 'DeclareLaunchArgument'))
    assert declarations
    for call in declarations:
        if _from_table(call):
            assert _parameter_argument_names(tree), f'{path.name}: {ast.unparse(call)}'
            continue  # described from the parameter tables (test_parameter_schema.py)
        name = _strings(call.args[0] if call.args else _keyword(call, 'name'), tree)
        assert name is not None and len(name) == 1, ast.unparse(call)
        description = _keyword(call, 'description')
        assert isinstance(description, ast.Constant), f'{name[0]}: no literal description'
        assert isinstance(description.value, str) and description.value.strip(), name[0]


@pytest.mark.parametrize('path', _launch_files(), ids=lambda path: path.name)
def test_documented_arguments_are_declared(path):
    """The declared arguments are exactly the documented ones."""
    tree = _tree(path)
    declared = _parameter_argument_names(tree)
    for call in _calls(tree, 'DeclareLaunchArgument'):
        if not _from_table(call):
            declared.update(_strings(call.args[0] if call.args else _keyword(call, 'name'), tree))
    assert declared == DOCUMENTED_ARGUMENTS[path.name]


def _executables() -> list[tuple[str, str, str]]:
    """Return (launch file, package, executable) of every Node action in the launch files."""
    found = []
    for path in _launch_files():
        tree = _tree(path)
        for call in _calls(tree, 'Node'):
            packages = _strings(_keyword(call, 'package'), tree)
            executables = _strings(_keyword(call, 'executable'), tree)
            assert packages is not None and executables is not None, (
                f'{path.name}: cannot read the package/executable of {ast.unparse(call)}'
            )
            found += [(path.name, p, e) for p in packages for e in executables]
    return found


@pytest.mark.parametrize('launch_file, package, executable', _executables())
def test_every_executable_exists(launch_file, package, executable):
    """
    pic_ros(_tools) executables are console scripts of its setup.py; others are known ones.

    ``sim_robot`` and ``replay`` are pic_ros_tools': a launch file of pic_ros starts them only
    after checking that package is installed.
    """
    if package not in (PACKAGE, TOOLS_PACKAGE):
        assert (package, executable) in EXTERNAL_EXECUTABLES
        return
    if executable in _console_scripts(package):
        return
    if executable in PENDING_SCRIPTS:
        pytest.skip(
            f'{launch_file} starts {executable!r}, which setup.py does not list yet: add '
            f"'{executable} = {PENDING_SCRIPTS[executable]}:main' to console_scripts"
        )
    pytest.fail(f'{launch_file}: {executable!r} is not a console script of setup.py')


@pytest.mark.parametrize('path', _launch_files(), ids=lambda path: path.name)
def test_package_files_named_by_the_launch_files_exist_and_are_installed(path):
    """Each FindPackageShare('pic_ros') path exists in the repository and is in data_files."""
    for parts in _package_paths(_tree(path)):
        relative = '/'.join(parts)
        assert (ROOT / PACKAGE / relative).is_file(), f'{path.name} names missing {relative}'
        assert _is_installed(relative), f'{relative} is not installed by setup.py data_files'


def test_gazebo_controllers_files_exist_and_are_installed():
    """gazebo.launch.py takes config/controllers/<robot>_controllers.yaml for each robot."""
    for robot in ROBOTS:
        relative = f'config/controllers/{robot}_controllers.yaml'
        assert (ROOT / PACKAGE / relative).is_file()
        assert _is_installed(relative)


# Always: config/controllers/*.yaml against the robot files ----------------------------------


def _robot_file(robot: str) -> dict[str, Any]:
    """Load config/<robot>.yaml as plain data."""
    return yaml.safe_load((CONFIG_DIR / f'{robot}.yaml').read_text(encoding='utf-8'))


def _controllers(robot: str) -> dict[str, Any]:
    """Load config/controllers/<robot>_controllers.yaml as plain data."""
    path = CONFIG_DIR / 'controllers' / f'{robot}_controllers.yaml'
    return yaml.safe_load(path.read_text(encoding='utf-8'))


def _teleop_yaml() -> dict[str, Any]:
    """Load config/teleop.yaml as plain data."""
    return yaml.safe_load((CONFIG_DIR / 'teleop.yaml').read_text(encoding='utf-8'))


def test_every_controllers_file_belongs_to_a_robot():
    """config/controllers holds one <robot>_controllers.yaml per robot file, nothing else."""
    names = {path.name for path in (CONFIG_DIR / 'controllers').glob('*.yaml')}
    assert names == {f'{robot}_controllers.yaml' for robot in ROBOTS}


@pytest.mark.parametrize('robot', ROBOTS)
def test_controller_manager_declares_the_broadcaster_and_the_arm_controllers(robot):
    """
    update_rate is a positive int; the arm controllers are trajectory controllers.

    Besides trajectory controllers only a robot file's mobile base and wrist sensors bring
    controllers of their own (a diff_drive_controller, force/torque sensor broadcasters).
    """
    manager = _controllers(robot)['controller_manager']['ros__parameters']
    assert isinstance(manager['update_rate'], int) and manager['update_rate'] > 0
    types = {name: entry['type'] for name, entry in manager.items() if isinstance(entry, dict)}
    assert types.pop('joint_state_broadcaster') == BROADCASTER
    spec = _robot_file(robot)
    arms = {arm['controller'] for arm in spec['arms'].values()}
    assert arms <= set(types)
    kinds = set(types.values()) - {TRAJECTORY_CONTROLLER}
    allowed = set()
    if spec.get('mobile_base'):
        allowed.add(DIFF_DRIVE)
    if spec.get('force_torque_sensors'):
        allowed.add(FORCE_TORQUE)
    assert kinds <= allowed


@pytest.mark.parametrize('robot', ROBOTS)
def test_arm_controllers_command_exactly_the_arm_joints(robot):
    """Joints, interfaces and streaming settings of each arm controller."""
    data = _controllers(robot)
    lead_time = _teleop_yaml()['/**/trajectory_publisher']['ros__parameters']['lead_time']
    for arm in _robot_file(robot)['arms'].values():
        parameters = data[arm['controller']]['ros__parameters']
        assert parameters['joints'] == arm['joints']
        assert parameters['command_interfaces'] == ['position']
        assert parameters['state_interfaces'] == ['position', 'velocity']
        assert parameters['allow_nonzero_velocity_at_trajectory_end'] is True
        constraints = parameters['constraints']
        timeout = parameters['cmd_timeout']
        assert isinstance(timeout, float) and timeout > lead_time
        assert timeout > constraints['goal_time']  # else joint_trajectory_controller ignores it
        for name in arm['joints']:
            assert set(constraints[name]) == {'trajectory', 'goal'}


@pytest.mark.parametrize('robot', ROBOTS)
def test_other_trajectory_controllers_hold_locked_joints_only(robot):
    """
    A controller of no arm, torso, head or gripper commands locked joints only.

    The torso's, the head's and each gripper's controller command exactly their joints of the
    robot file.
    """
    data = _controllers(robot)
    spec = _robot_file(robot)
    driven = {arm['controller'] for arm in spec['arms'].values()}
    groups = [spec['head']] if spec.get('head') else []
    groups += [spec['torso']] if spec.get('torso') else []
    groups += list((spec.get('grippers') or {}).values())
    for group in groups:
        joints = group.get('joints') or [
            name for name in (group.get('yaw'), group.get('pitch'), group.get('joint')) if name
        ]
        assert data[group['controller']]['ros__parameters']['joints'] == joints
        driven.add(group['controller'])
    manager = data['controller_manager']['ros__parameters']
    for name, entry in manager.items():
        if not isinstance(entry, dict) or entry['type'] != TRAJECTORY_CONTROLLER:
            continue
        assert name in data, f'{name} has no ros__parameters block'
        if name not in driven:
            assert set(data[name]['ros__parameters']['joints']) <= set(spec['locked_joints'])
    blocks = set(data) - {'controller_manager'}
    assert blocks <= set(manager), 'a parameter block for an undeclared controller'


def _numbers(value: Any, path: str = '') -> Iterator[tuple[str, Any]]:
    """Yield (dotted key, value) of every number in nested dictionaries."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, f'{path}.{key}' if path else str(key))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, value


@pytest.mark.parametrize('robot', ROBOTS)
def test_controller_doubles_are_written_as_doubles(robot):
    """Every number but update_rate is a float (ROS parameters are strictly typed)."""
    for key, value in _numbers(_controllers(robot)):
        if key.endswith('update_rate'):
            assert isinstance(value, int), key
        else:
            assert isinstance(value, float), f'{key}: {value!r} must be written with .0'


# config/teleop.yaml against the nodes' parameter tables ---------------------------------------


def test_teleop_yaml_has_one_wildcard_block_per_node():
    """Three /**/<node> keys, each with only ros__parameters."""
    data = _teleop_yaml()
    assert set(data) == set(TELEOP_NODES)
    for block in data.values():
        assert set(block) == {'ros__parameters'}


@pytest.mark.parametrize('key', sorted(TELEOP_NODES))
def test_teleop_yaml_values_are_accepted_by_the_node_table(key):
    """Every parameter of the node but the launch-chosen ones, each value accepted."""
    table = TELEOP_NODES[key]
    values = _teleop_yaml()[key]['ros__parameters']
    assert set(values) == set(table.names) - SET_BY_LAUNCH
    table.check(values)


def test_the_rviz_configuration_shows_the_robot_model_tf_and_the_person_over_the_robot():
    """
    rviz/teleop.rviz: RobotModel from the latched robot_description, TF, the overlay markers.

    Topic names are relative (RViz runs in the launch's namespace); the human-frame skeleton is
    there, switched off (no TF joins pic_human to the robot).
    """
    config = yaml.safe_load((ROOT / PACKAGE / 'rviz' / 'teleop.rviz').read_text(encoding='utf-8'))
    displays = config['Visualization Manager']['Displays']
    by_class: dict[str, list[dict[str, Any]]] = {}
    for display in displays:
        by_class.setdefault(display['Class'], []).append(display)
    (model,) = by_class['rviz_default_plugins/RobotModel']
    assert model['Enabled'] and model['Description Source'] == 'Topic'
    topic = model['Description Topic']
    assert topic['Value'] == 'robot_description'
    assert topic['Durability Policy'] == 'Transient Local'
    assert topic['Reliability Policy'] == 'Reliable'
    (tf,) = by_class['rviz_default_plugins/TF']
    assert tf['Enabled']
    markers = {d['Topic']['Value']: d for d in by_class['rviz_default_plugins/MarkerArray']}
    assert set(markers) == {'placed_skeleton_markers', 'skeleton_markers'}
    assert markers['placed_skeleton_markers']['Enabled']
    assert markers['placed_skeleton_markers']['Namespaces'] == {'placed_skeleton': True}
    assert not markers['skeleton_markers']['Enabled']
    for display in displays:
        for key in ('Topic', 'Description Topic'):
            if key in display:
                assert not display[key]['Value'].startswith('/'), display['Name']


def _mosaic_panels(node: Any) -> list[str]:
    """Return the panel ids of a Foxglove layout's mosaic tree."""
    if isinstance(node, str):
        return [node]
    return _mosaic_panels(node['first']) + _mosaic_panels(node['second'])


def test_the_foxglove_layout_shows_the_robot_the_person_over_it_and_the_state():
    """
    foxglove/teleop_layout.json: the robot and the person over it in 3-D, engaged, diagnostics.

    Every panel placed is configured; the 3-D panel draws the URDF from robot_description and
    placed_skeleton_markers.
    """
    layout = json.loads(
        (ROOT / PACKAGE / 'foxglove' / 'teleop_layout.json').read_text(encoding='utf-8')
    )
    panels = _mosaic_panels(layout['layout'])
    assert sorted(panels) == sorted(layout['configById'])
    (scene_id,) = [panel for panel in panels if panel.startswith('3D!')]
    scene = layout['configById'][scene_id]
    assert scene['topics']['/placed_skeleton_markers']['visible']
    urdf_layers = [
        layer for layer in scene['layers'].values() if layer['layerId'] == 'foxglove.Urdf'
    ]
    assert [(layer['sourceType'], layer['topic']) for layer in urdf_layers] == [
        ('topic', '/robot_description'),
    ]
    configs = layout['configById']
    topics = {
        config.get('topicPath') or config.get('topicToRender') for config in configs.values()
    }
    assert {'/engaged', '/diagnostics'} <= topics


# With the ROS tools: load each launch file with launch's own loader -------------------------


@pytest.mark.parametrize('path', _launch_files(), ids=lambda path: path.name)
def test_launch_file_loads_and_declares_the_documented_arguments(path, ros_tools):
    """get_launch_description_from_python_launch_file builds a LaunchDescription."""
    del ros_tools  # installed (or the test skipped, naming what is missing)
    from launch import launch_description_sources as sources
    from launch import LaunchDescription

    description = sources.get_launch_description_from_python_launch_file(str(path))
    assert isinstance(description, LaunchDescription)
    arguments = description.get_launch_arguments()
    names = {argument.name for argument in arguments}
    if path.name in INCLUDES:
        own = DOCUMENTED_ARGUMENTS[path.name]
        assert own <= names <= own | DOCUMENTED_ARGUMENTS[INCLUDES[path.name]]
    else:
        assert names == DOCUMENTED_ARGUMENTS[path.name]
    for argument in arguments:
        assert argument.description != 'no description given', argument.name


# With the ROS tools: what the launch files start, with and without the optional packages ------


def _fake_prefix(root: Path, packages: tuple[str, ...]) -> Path:
    """Make an ament prefix whose index lists some packages (their files are not needed here)."""
    index = root / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    for package in packages:
        (index / package).touch()
    return root


def _launch_actions(name: str, arguments: dict[str, str]) -> tuple[list[Any], Any]:
    """
    Run a launch file's ``launch_setup`` in this process with the given arguments.

    The other arguments keep their literal defaults (the ones naming installed files are left
    empty: nothing here reads them).

    :return: The actions it returns, and the launch context.
    """
    from launch import LaunchContext
    from launch.launch_description_sources import python_launch_file_utilities as loader
    from launch.substitutions import TextSubstitution

    module = loader.load_python_launch_file_as_module(str(LAUNCH_DIR / name))
    context = LaunchContext()
    for argument in module.declare_arguments():
        parts = argument.default_value
        literal = all(isinstance(part, TextSubstitution) for part in parts)
        context.launch_configurations[argument.name] = (
            ''.join(part.perform(context) for part in parts) if literal else ''
        )
    context.launch_configurations.update(arguments)
    return list(module.launch_setup(context)), context


def _nodes(actions: list[Any], package: str) -> list[Any]:
    """Return the ``Node`` actions of a package."""
    return [action for action in actions if getattr(action, 'node_package', None) == package]


def _logged(actions: list[Any], context: Any) -> list[str]:
    """Return the messages of the ``LogInfo`` actions."""
    from launch.actions import LogInfo

    return [
        ''.join(part.perform(context) for part in action.msg)
        for action in actions if isinstance(action, LogInfo)
    ]


def _performed(value: Any, context: Any) -> str:
    """Return the text of a string or of substitutions, as launch performs it."""
    from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions

    return perform_substitutions(context, normalize_to_list_of_substitutions(value))


def _robot_description(node: Any, context: Any) -> str:
    """Return the ``robot_description`` parameter a Node action would be given."""
    from launch_ros.utilities import evaluate_parameters

    # launch_ros keeps a Node's parameters private until it runs; evaluate them as it does
    (values,) = evaluate_parameters(context, node._Node__parameters)
    return values['robot_description']


@pytest.mark.parametrize('single_process', ['false', 'true'])
def test_teleop_launch_starts_robot_state_publisher_with_the_urdf_when_installed(
    single_process, ros_tools, tmp_path, monkeypatch
):
    """robot_state_publisher installed: started in the namespace with the robot's URDF."""
    del ros_tools  # installed (or the test skipped, naming what is missing)
    from pic_ros.robot import load_robot

    monkeypatch.setenv('AMENT_PREFIX_PATH', str(_fake_prefix(tmp_path, (STATE_PUBLISHER,))))
    actions, context = _launch_actions('teleop.launch.py', {
        'robot': 'yumi', 'namespace': 'arm_a', 'single_process': single_process,
    })
    (node,) = _nodes(actions, STATE_PUBLISHER)
    assert node.node_executable == 'robot_state_publisher'
    assert _performed(node._Node__node_namespace, context) == 'arm_a'
    urdf = load_robot('yumi').urdf_file.read_text(encoding='utf-8')
    assert _robot_description(node, context) == urdf
    assert not any('robot_state_publisher' in text for text in _logged(actions, context))


def test_teleop_launch_without_robot_state_publisher_says_so_and_starts_the_pipeline(
    ros_tools, tmp_path, monkeypatch
):
    """Not installed (the standalone venv): one log naming it and what is lost; nodes start."""
    del ros_tools
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(_fake_prefix(tmp_path, ())))
    actions, context = _launch_actions('teleop.launch.py', {'robot': 'baxter', 'sim': 'false'})
    assert not _nodes(actions, STATE_PUBLISHER)
    (message,) = [text for text in _logged(actions, context) if 'robot_state_publisher' in text]
    assert 'robot_state_publisher is not installed' in message
    assert str(tmp_path) in message and 'no TF' in message
    assert {node.node_executable for node in _nodes(actions, PACKAGE)} == {
        'skeleton_node', 'solver_node', 'trajectory_publisher',
    }


def test_use_rviz_starts_rviz2_with_the_shipped_configuration_in_the_robots_base_frame(
    ros_tools, tmp_path, monkeypatch
):
    """rviz2 installed: started with -d rviz/teleop.rviz and -f the robot's base frame."""
    del ros_tools
    from pic_ros.robot import load_robot

    monkeypatch.setenv('AMENT_PREFIX_PATH', str(_fake_prefix(tmp_path, ('rviz2',))))
    actions, context = _launch_actions('teleop.launch.py', {'robot': 'tiago', 'use_rviz': 'true'})
    (node,) = _nodes(actions, 'rviz2')
    arguments = node._Node__arguments
    assert arguments[0] == '-d' and arguments[2:] == ['-f', load_robot('tiago').base_frame]
    assert [part.perform(context) for part in arguments[1].substitutions[1:]] == [
        'rviz', 'teleop.rviz',
    ]


def test_use_rviz_without_rviz2_stops_before_anything_starts(ros_tools, tmp_path, monkeypatch):
    """rviz2 missing: LaunchAbort naming it, so the launch starts nothing."""
    del ros_tools
    from pic_ros.ros.launch_support import LaunchAbort

    monkeypatch.setenv('AMENT_PREFIX_PATH', str(_fake_prefix(tmp_path, (STATE_PUBLISHER,))))
    with pytest.raises(LaunchAbort, match=r'use_rviz:=true needs ROS packages .*: rviz2 '):
        _launch_actions('teleop.launch.py', {'robot': 'yumi', 'use_rviz': 'true'})


@pytest.mark.parametrize('installed', [False, True], ids=['missing', 'installed'])
def test_multi_robot_launch_gives_each_robot_its_state_publisher_or_says_once_it_is_missing(
    installed, ros_tools, tmp_path, monkeypatch
):
    """One robot_state_publisher per robot namespace, TF kept apart; else one log line."""
    del ros_tools
    packages = (STATE_PUBLISHER,) if installed else ()
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(_fake_prefix(tmp_path, packages)))
    actions, context = _launch_actions('multi_robot.launch.py', {'robots': 'baxter,tiago'})
    nodes = _nodes(actions, STATE_PUBLISHER)
    missing = [text for text in _logged(actions, context) if 'robot_state_publisher' in text]
    if not installed:
        assert not nodes and len(missing) == 1
        return
    assert not missing
    namespaces = [_performed(node._Node__node_namespace, context) for node in nodes]
    assert namespaces == ['/baxter', '/tiago']
    for node in nodes:
        remappings = [
            tuple(_performed(side, context) for side in pair)
            for pair in node._Node__remappings
        ]
        assert remappings == [('/tf', 'tf'), ('/tf_static', 'tf_static')]


def test_multi_robot_launch_shares_the_person_topics_with_every_solver(ros_tools):
    """
    The skeleton node and each robot's solver meet on /skeleton, /chest and /person.

    Each trajectory publisher reads /person too (another person disengages its robot).
    """
    del ros_tools
    from launch.actions import GroupAction

    actions, context = _launch_actions('multi_robot.launch.py', {'robots': 'baxter,tiago'})
    grouped = [
        entity for action in actions if isinstance(action, GroupAction)
        for entity in action.get_sub_entities()
    ]
    shared = {'skeleton': '/skeleton', 'chest': '/chest', 'person': '/person'}
    expected = {
        'skeleton_node': shared, 'solver_node': shared,
        'trajectory_publisher': {'person': '/person'},
    }
    nodes = [
        action for action in _nodes(actions + grouped, 'pic_ros')
        if getattr(action, 'node_executable', None) in expected
    ]
    assert len(nodes) == 5
    for node in nodes:
        remappings = dict(
            tuple(_performed(side, context) for side in pair) for pair in node._Node__remappings
        )
        wanted = expected[node.node_executable]
        assert {topic: remappings[topic] for topic in wanted} == wanted


@pytest.mark.parametrize('distro', ['humble', 'jazzy'])
def test_gazebo_follow_base_feeds_the_base_controller_of_the_distro(distro, ros_tools):
    """
    follow_base:=true hands teleop.launch.py the diff_drive_controller's input of the distro.

    The arguments it passes are teleop.launch.py's own, and none are passed without following.
    """
    del ros_tools  # installed (or the test skipped, naming what is missing)
    from launch.launch_description_sources import get_launch_description_from_python_launch_file
    from launch.launch_description_sources.python_launch_file_utilities import (
        load_python_launch_file_as_module,
    )
    from pic_ros.robot.gazebo import base_command, read_controllers

    module = load_python_launch_file_as_module(str(LAUNCH_DIR / 'gazebo.launch.py'))
    base = base_command(
        read_controllers(CONFIG_DIR / 'controllers' / 'tiago_controllers.yaml'), distro
    )
    passed = module._base_arguments(base)
    teleop = get_launch_description_from_python_launch_file(str(LAUNCH_DIR / 'teleop.launch.py'))
    assert set(passed) <= {argument.name for argument in teleop.get_launch_arguments()}
    stamped = distro != 'humble'
    assert passed == {
        'follow_base': 'true',
        'base_cmd_topic': 'mobile_base_controller/cmd_vel' + ('' if stamped else '_unstamped'),
        'base_cmd_stamped': str(stamped).lower(),
    }
    assert module._base_arguments(None) == {}
