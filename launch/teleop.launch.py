"""
Teleoperation by pose imitation: tracker -> skeleton_node -> solver_node -> trajectory_publisher.

Usage::

    ros2 launch pic_ros teleop.launch.py robot:=baxter source:=azure_kinect
    ros2 launch pic_ros teleop.launch.py robot:=tiago solver:=pics eta:=2
    ros2 launch pic_ros teleop.launch.py correspondence:=position user_profile:=~/alice.yaml
    ros2 launch pic_ros teleop.launch.py input_topic:=/kinect2/body_tracking_data
    ros2 launch pic_ros teleop.launch.py robot:=yumi source:=xsens_mvn udp_address:=0.0.0.0
    ros2 launch pic_ros teleop.launch.py robot:=baxter single_process:=true

What it starts, in the namespace ``namespace``:

- by default the three nodes as three processes (each visible to ``ros2 node list``):
  ``skeleton_node`` (subscribes ``body_tracking_data``, remapped to ``input_topic``; publishes
  ``skeleton`` and ``skeleton_markers``), ``solver_node`` (``skeleton`` -> ``joint_targets``)
  and ``trajectory_publisher`` (``joint_targets`` and ``joint_states`` ->
  ``<controller>/joint_trajectory`` for each arm controller of ``config/<robot>.yaml``);
- with ``single_process:=true`` the ``teleop`` executable instead: the same three nodes on one
  executor in one process (lowest latency);
- RViz if ``use_rviz:=true`` (fixed frame ``pic_human``, the skeleton's frame).

Parameters come from ``params_file`` (default: the installed ``config/teleop.yaml``, whose node
keys are wildcards ``/**/<node>`` so they apply in any namespace). Launch arguments left empty
keep the file's values; given ones override them: for separate processes through a second
parameter file keyed by each node's full name, which rclpy applies after (and over) the wildcard
file; for ``single_process`` through ``teleop``'s own options (``--solver``,
``--param NODE.NAME=VALUE``), which become the nodes' constructor overrides.
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, SetParameter
from launch_ros.parameter_descriptions import ParameterFile
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'pic_ros'
SOURCES = ('azure_kinect', 'kinect_v2', 'xsens_mvn')
SOLVERS = ('fabrik', 'pic', 'pics')
MAPPINGS = ('same_side', 'mirror')
CORRESPONDENCES = ('direction', 'position')
BODY_FRAME = 'pic_human'  # skeleton_node's body_frame_id in config/teleop.yaml


def declare_arguments():
    """Return the declared launch arguments, each with its description."""
    return [
        DeclareLaunchArgument(
            'robot', default_value='baxter',
            description='Robot: baxter, yumi, tiago (config/<robot>.yaml + urdf/<robot>.urdf), '
                        'or the path of another robot YAML'),
        DeclareLaunchArgument(
            'source', default_value='azure_kinect', choices=list(SOURCES),
            description='Tracker: azure_kinect or kinect_v2 (visualization_msgs/MarkerArray on '
                        'input_topic) or xsens_mvn (MVN network stream, UDP)'),
        DeclareLaunchArgument(
            'input_topic', default_value='body_tracking_data',
            description="MarkerArray topic of the body tracker, remapped onto skeleton_node's "
                        'body_tracking_data: /body_tracking_data from the Azure Kinect driver, '
                        '/kinect2/body_tracking_data for the sample bag; relative names resolve '
                        'in namespace'),
        DeclareLaunchArgument(
            'solver', default_value='',
            description='Solver: fabrik, pic or pics (empty: the value in params_file, pic)'),
        DeclareLaunchArgument(
            'eta', default_value='',
            description='PICs softening factor eta, 1..3 (empty: the value in params_file, 1)'),
        DeclareLaunchArgument(
            'mapping', default_value='',
            description='Arm mapping: same_side or mirror (face to face) (empty: the value in '
                        'params_file, same_side)'),
        DeclareLaunchArgument(
            'correspondence', default_value='',
            description='How the human arm becomes robot targets: direction (bone directions at '
                        "the robot's own lengths) or position (uniform scale, hand at the scaled "
                        'wrist) (empty: the value in params_file, direction)'),
        DeclareLaunchArgument(
            'user_profile', default_value='',
            description='position correspondence: user profile YAML with the arm lengths '
                        '(from ~/calibrate or python -m pic_ros calibrate; empty: none, the '
                        'scale is learnt from the frames)'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='ROS namespace of the nodes (empty: the root namespace)'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Use /clock (true with Gazebo or a bag played with --clock)'),
        DeclareLaunchArgument(
            'single_process', default_value='false',
            description='Run the three nodes in one process (the teleop executable) instead of '
                        'three processes'),
        DeclareLaunchArgument(
            'udp_address', default_value='',
            description='xsens_mvn: address the UDP receiver binds to; a suit streaming from '
                        "another PC needs this PC's address or 0.0.0.0 (empty: the value in "
                        'params_file, 127.0.0.1)'),
        DeclareLaunchArgument(
            'udp_port', default_value='',
            description='xsens_mvn: UDP port of the MVN network streamer (empty: the value in '
                        'params_file, 9763)'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), 'config',
                                                'teleop.yaml']),
            description='Parameter file of the three nodes (wildcard node keys /**/<node>)'),
        DeclareLaunchArgument(
            'use_rviz', default_value='false',
            description='Start RViz (fixed frame pic_human) to show skeleton_markers'),
    ]


def _text(context, name):
    """Return the value of a launch argument, stripped."""
    return LaunchConfiguration(name).perform(context).strip()


def _choice(context, name, choices):
    """Return a launch argument that must be empty or one of ``choices``."""
    value = _text(context, name)
    if value and value not in choices:
        raise ValueError(f'{name}:={value!r} is not one of {", ".join(choices)}')
    return value


def _integer(context, name, low, high):
    """Return a launch argument that must be empty or an integer in [low, high] (None if empty)."""
    value = _text(context, name)
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or not low <= number <= high:
        raise ValueError(f'{name}:={value!r} must be an integer in [{low}, {high}]')
    return number


def node_overrides(context):
    """
    Collect the parameter values the launch arguments set, per node.

    Empty arguments are left out, so the parameter file keeps its value. Numbers are converted
    here: launch_ros writes a Python ``str`` as a YAML string, and an integer parameter such as
    ``eta`` refuses a string.

    :param context: The launch context.
    :return: Values by node name (``skeleton_node``, ``solver_node``, ``trajectory_publisher``).
    """
    robot = _text(context, 'robot')
    if not robot:
        raise ValueError('robot must not be empty')
    overrides = {
        'skeleton_node': {'source': _choice(context, 'source', SOURCES)},
        'solver_node': {'robot': robot},
        'trajectory_publisher': {'robot': robot},
    }
    solver = _choice(context, 'solver', SOLVERS)
    if solver:
        overrides['solver_node']['solver'] = solver
    eta = _integer(context, 'eta', 1, 3)
    if eta is not None:
        overrides['solver_node']['eta'] = eta
    mapping = _choice(context, 'mapping', MAPPINGS)
    if mapping:
        overrides['solver_node']['mapping'] = mapping
    correspondence = _choice(context, 'correspondence', CORRESPONDENCES)
    if correspondence:
        overrides['solver_node']['correspondence'] = correspondence
    profile = _text(context, 'user_profile')
    if profile:
        overrides['solver_node']['user_profile'] = os.path.expanduser(profile)
    address = _text(context, 'udp_address')
    if address:
        overrides['skeleton_node']['udp_address'] = address
    port = _integer(context, 'udp_port', 1, 65535)
    if port is not None:
        overrides['skeleton_node']['udp_port'] = port
    return overrides


def _teleop_arguments(overrides):
    """Turn the overrides into options of the ``teleop`` executable (pic_ros/ros/teleop.py)."""
    skeleton = dict(overrides['skeleton_node'])
    solver = dict(overrides['solver_node'])
    arguments = ['--robot', solver.pop('robot'), '--source', skeleton.pop('source')]
    for key in ('solver', 'eta', 'mapping', 'correspondence'):
        if key in solver:
            arguments += [f'--{key}', str(solver.pop(key))]
    for node, values in (('skeleton_node', skeleton), ('solver_node', solver)):
        for key, value in values.items():
            arguments += ['--param', f'{node}.{key}={value}']
    return arguments


def launch_setup(context):
    """Create the pipeline's nodes once the launch arguments are known."""
    overrides = node_overrides(context)
    namespace = LaunchConfiguration('namespace')
    parameter_file = ParameterFile(LaunchConfiguration('params_file'), allow_substs=False)
    remappings = [('body_tracking_data', LaunchConfiguration('input_topic'))]
    if IfCondition(LaunchConfiguration('single_process')).evaluate(context):
        # No name=: '-r __node:=...' would rename all three nodes of the process.
        return [
            Node(
                package=PACKAGE, executable='teleop', namespace=namespace,
                arguments=_teleop_arguments(overrides),
                parameters=[parameter_file], remappings=remappings, output='screen',
            ),
        ]
    # name= and namespace= both given: launch_ros then keys the override dictionaries by the
    # node's full name instead of '/**' (launch_ros Node._create_params_file_from_dict). rclpy
    # applies parameter-file entries in the order their keys first appear, and an earlier '/**'
    # entry (SetParameter's use_sim_time) would otherwise let the wildcard file win.
    return [
        Node(
            package=PACKAGE, executable=node, name=node, namespace=namespace,
            parameters=[parameter_file, overrides[node]],
            remappings=remappings if node == 'skeleton_node' else [],
            output='screen',
        )
        for node in ('skeleton_node', 'solver_node', 'trajectory_publisher')
    ]


def generate_launch_description():
    """Launch the teleoperation pipeline of one robot."""
    return LaunchDescription([
        *declare_arguments(),
        # Applies to every node started below (launch_ros SetParameter: same scope).
        SetParameter(name='use_sim_time', value=LaunchConfiguration('use_sim_time')),
        OpaqueFunction(function=launch_setup),
        Node(
            package='rviz2', executable='rviz2', arguments=['-f', BODY_FRAME],
            condition=IfCondition(LaunchConfiguration('use_rviz')), output='screen',
        ),
    ])
