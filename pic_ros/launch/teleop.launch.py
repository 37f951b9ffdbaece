"""
Teleoperation by pose imitation: tracker -> skeleton_node -> solver_node -> trajectory_publisher.

Usage::

    ros2 launch pic_ros teleop.launch.py robot:=baxter source:=azure_kinect
    ros2 launch pic_ros teleop.launch.py robot:=tiago solver:=pics eta:=2
    ros2 launch pic_ros teleop.launch.py correspondence:=position user_profile:=~/alice.yaml
    ros2 launch pic_ros teleop.launch.py input_topic:=/kinect2/body_tracking_data
    ros2 launch pic_ros teleop.launch.py robot:=yumi source:=xsens_mvn udp_address:=0.0.0.0
    ros2 launch pic_ros teleop.launch.py robot:=baxter single_process:=true
    ros2 launch pic_ros teleop.launch.py robot:=tiago sim:=true   # MuJoCo robot, no hardware
    ros2 launch pic_ros teleop.launch.py robot:=tiago whole_body:=true follow_base:=true
    ros2 launch pic_ros teleop.launch.py robot:=yumi sim:=true start_engaged:=true

The robot starts disengaged: it holds still until an operator engages it
(``ros2 service call /trajectory_publisher/engage std_srvs/srv/Trigger``, or the engage gesture
with solver_node's ``engage_gesture_time``), or at once with ``start_engaged:=true``.
``~/disengage`` stops following; ``estop`` (``std_msgs/Bool``) true latches a stop until
``~/reset_estop``; ``engaged`` (latched) says whether it follows.

What it starts, in the namespace ``namespace``:

- by default the three nodes as three processes (each visible to ``ros2 node list``):
  ``skeleton_node`` (subscribes ``body_tracking_data``, remapped to ``input_topic``; publishes
  ``skeleton`` and ``skeleton_markers``), ``solver_node`` (``skeleton`` -> ``joint_targets``)
  and ``trajectory_publisher`` (``joint_targets`` and ``joint_states`` ->
  ``<controller>/joint_trajectory`` for each arm controller of ``config/<robot>.yaml``);
- with ``single_process:=true`` the ``teleop`` executable instead: the same three nodes on one
  executor in one process (lowest latency);
- with ``sim:=true`` also ``sim_robot`` of the package ``pic_ros_tools``: the MuJoCo
  simulation of the robot follows the trajectories and publishes ``joint_states``, as a robot's
  ros2_control would (no robot, no Gazebo needed; without pic_ros_tools installed the launch
  stops before starting anything and says to install it);
- with ``follow_base:=true`` also ``base_follower``: the person's walking (``body_pose`` from
  ``skeleton_node``) drives the mobile base, its ``cmd_vel`` remapped to ``base_cmd_topic``
  (default: the robot file's ``mobile_base`` ``command_topic``; TIAGo:
  ``mobile_base_controller/cmd_vel_unstamped``, the Twist input of PAL's ROS 2
  diff_drive_controller configuration); off by default: a moving base is opt-in;
- ``robot_state_publisher`` when it is installed (a ROS install; it is not on PyPI): the
  robot's URDF (``urdf/<robot>.urdf``, from the robot file) as its ``robot_description``, so it
  publishes ``robot_description`` (latched) and the robot's TF on ``/tf`` from ``joint_states``;
  when it is not installed the launch says so in its log and runs without TF (``sim_robot``
  still publishes ``robot_description``);
- RViz if ``use_rviz:=true``, with ``rviz/teleop.rviz``: the robot model, TF, and the person
  drawn over the robot (solver_node's ``placed_skeleton_markers``, coloured by whether the robot
  follows), fixed frame the robot's base frame; skeleton_node's ``skeleton_markers`` (frame
  ``pic_human``, which no TF joins to the robot) are in the configuration, switched off.

``admittance:=true`` (and ``whole_body:=true``, the solver that honours it) are solver_node
parameters like ``solver``; the admittance reads each arm's wrist force/torque sensor on the
topic the robot file names (TIAGo: ``ft_sensor_controller/wrench``) or ``<arm>/wrist_wrench``;
``wrench_topic`` remaps a one-arm robot's onto another topic.

A launch that cannot run the whole pipeline stops as a whole, with one message and exit status
1, and leaves no process behind: an unknown ``robot``, ``use_rviz:=true`` without rviz2 (checked
before anything starts), or a pipeline process (or ``sim_robot``) that exits while the launch
runs (:mod:`pic_ros.ros.launch_support`).

Parameters come from ``params_file`` (default: the installed ``config/teleop.yaml``, whose node
keys are wildcards ``/**/<node>`` so they apply in any namespace). Launch arguments left empty
keep the file's values; given ones override them: for separate processes through a second
parameter file keyed by each node's full name, which rclpy applies after (and over) the wildcard
file; for ``single_process`` through ``teleop``'s own options (``--solver``,
``--param NODE.NAME=VALUE``), which become the nodes' constructor overrides.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, SetParameter
from launch_ros.parameter_descriptions import ParameterFile
from launch_ros.substitutions import FindPackageShare
from pic_ros.exceptions import PicRosError
from pic_ros.robot import load_robot
from pic_ros.ros.launch_arguments import (
    base_command_topic,
    node_overrides,
    parameter_arguments,
    teleop_options,
    wrench_remappings,
)
from pic_ros.ros.launch_support import (
    LaunchAbort,
    require_packages,
    require_tools,
    robot_state_publisher,
    state_publisher_missing,
    stop_launch_when_exits,
)
from pic_ros.ros.schema import ROBOT

PACKAGE = 'pic_ros'
TOOLS_PACKAGE = 'pic_ros_tools'
"""The package of sim_robot and replay (:func:`require_tools` checks it is installed)."""


def declare_arguments():
    """Return the declared launch arguments, each with its description."""
    parameters = [
        DeclareLaunchArgument(
            item.name, default_value=item.default, description=item.description,
            **({'choices': list(item.choices)} if item.choices else {}))
        for item in parameter_arguments()
    ]
    return [
        DeclareLaunchArgument(
            'robot', default_value=ROBOT.default,
            description='Robot: any of config/ (config/<robot>.yaml + urdf/<robot>.urdf: '
                        'baxter, nao, tiago, yumi), or the path of another robot YAML'),
        *parameters,
        DeclareLaunchArgument(
            'input_topic', default_value='body_tracking_data',
            description="MarkerArray topic of the body tracker, remapped onto skeleton_node's "
                        'body_tracking_data: /body_tracking_data from the Azure Kinect driver, '
                        '/kinect2/body_tracking_data for the sample bag; relative names resolve '
                        'in namespace'),
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
            'params_file',
            default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), 'config',
                                                'teleop.yaml']),
            description='Parameter file of the three nodes (wildcard node keys /**/<node>)'),
        DeclareLaunchArgument(
            'sim', default_value='false',
            description='Also start sim_robot (package pic_ros_tools): the MuJoCo simulation of '
                        'the robot follows the trajectories and publishes joint_states (no robot '
                        'or Gazebo needed)'),
        DeclareLaunchArgument(
            'use_rviz', default_value='false',
            description='Start RViz with rviz/teleop.rviz (robot model, TF, the person over the '
                        "robot; fixed frame the robot's base frame); needs rviz2"),
        DeclareLaunchArgument(
            'follow_base', default_value='false',
            description="Also start base_follower: the mobile base follows the person's walking "
                        '(opt-in: the robot drives)'),
        DeclareLaunchArgument(
            'base_cmd_topic', default_value='',
            description="Topic base_follower's cmd_vel is remapped to: the base controller's "
                        "Twist input (empty: the robot file's mobile_base command_topic, "
                        'TIAGo: mobile_base_controller/cmd_vel_unstamped)'),
        DeclareLaunchArgument(
            'base_cmd_stamped', default_value='false',
            description='base_follower publishes geometry_msgs/TwistStamped instead of Twist '
                        '(diff_drive_controller on Jazzy and later reads TwistStamped on '
                        '~/cmd_vel)'),
        DeclareLaunchArgument(
            'wrench_topic', default_value='',
            description='WrenchStamped topic of the wrist force/torque sensor of a one-arm '
                        "robot, read with admittance:=true (empty: the robot file's sensor "
                        'topic, else <arm>/wrist_wrench)'),
    ]


def _text(context, name):
    """Return the value of a launch argument, stripped."""
    return LaunchConfiguration(name).perform(context).strip()


def _flag(context, name):
    """Return the value of a boolean launch argument."""
    return IfCondition(LaunchConfiguration(name)).evaluate(context)


def check_robot(robot):
    """
    Load the robot file, so that a wrong ``robot`` stops the launch before anything starts.

    :param robot: The ``robot`` argument: a name or the path of a robot YAML.
    :return: The robot.
    :raises LaunchAbort: Saying what is wrong with it.
    """
    try:
        return load_robot(robot)
    except PicRosError as error:
        raise LaunchAbort(f'robot:={robot}: {error}; nothing was started') from None


def essential(action, name):
    """Return a process action and the handler that stops the launch when it exits."""
    return [action, stop_launch_when_exits(action, name, 'the pipeline is incomplete')]


def launch_setup(context):
    """Check the arguments, then create the pipeline's nodes (all or nothing)."""
    robot = _text(context, 'robot')
    overrides = node_overrides(lambda name: _text(context, name), robot)
    model = check_robot(robot)
    try:
        wrenches = wrench_remappings(robot, _text(context, 'wrench_topic'))
        base_topic = (
            base_command_topic(robot, _text(context, 'base_cmd_topic'))
            if _flag(context, 'follow_base') else ''
        )
    except PicRosError as error:
        raise LaunchAbort(f'{error}; nothing was started') from None
    if _flag(context, 'use_rviz'):
        require_packages(
            ['rviz2'], 'use_rviz:=true',
            'Install RViz (ros-$ROS_DISTRO-rviz2) or leave use_rviz false.')
    if _flag(context, 'sim'):
        require_tools('sim:=true (sim_robot, the MuJoCo robot)', 'leave sim false')
    namespace = LaunchConfiguration('namespace')
    parameter_file = ParameterFile(LaunchConfiguration('params_file'), allow_substs=False)
    remappings = [('body_tracking_data', LaunchConfiguration('input_topic'))]
    actions = []
    if _flag(context, 'single_process'):
        # No name=: '-r __node:=...' would rename all three nodes of the process.
        actions += essential(
            Node(
                package=PACKAGE, executable='teleop', namespace=namespace,
                arguments=teleop_options(overrides),
                parameters=[parameter_file], remappings=remappings + wrenches, output='screen',
            ),
            'teleop',
        )
    else:
        # name= and namespace= both given: launch_ros then keys the override dictionaries by the
        # node's full name instead of '/**' (launch_ros Node._create_params_file_from_dict).
        # rclpy applies parameter-file entries in the order their keys first appear, and an
        # earlier '/**' entry (SetParameter's use_sim_time) would otherwise let the wildcard file
        # win.
        for node in ('skeleton_node', 'solver_node', 'trajectory_publisher'):
            actions += essential(
                Node(
                    package=PACKAGE, executable=node, name=node, namespace=namespace,
                    parameters=[parameter_file, overrides[node]],
                    remappings={'skeleton_node': remappings, 'solver_node': wrenches}.get(
                        node, []),
                    output='screen',
                ),
                node,
            )
    if _flag(context, 'sim'):
        actions += essential(
            Node(
                package=TOOLS_PACKAGE, executable='sim_robot', name='sim_robot',
                namespace=namespace,
                parameters=[{'robot': robot}], output='screen',
            ),
            'sim_robot',
        )
    if _flag(context, 'follow_base'):
        actions += essential(
            Node(
                package=PACKAGE, executable='base_follower', name='base_follower',
                namespace=namespace,
                parameters=[{'follow_base': True, 'stamped': _flag(context, 'base_cmd_stamped')}],
                remappings=[('cmd_vel', base_topic)],
                output='screen',
            ),
            'base_follower',
        )
    actions.append(
        state_publisher_missing()
        or robot_state_publisher(model.urdf_file.read_text(encoding='utf-8'), namespace)
    )
    if _flag(context, 'use_rviz'):
        actions.append(
            Node(package='rviz2', executable='rviz2', namespace=namespace,
                 arguments=['-d', PathJoinSubstitution([FindPackageShare(PACKAGE), 'rviz',
                                                        'teleop.rviz']),
                            '-f', model.base_frame],
                 output='screen'))
    return actions


def generate_launch_description():
    """Launch the teleoperation pipeline of one robot."""
    return LaunchDescription([
        *declare_arguments(),
        # Applies to every node started below (launch_ros SetParameter: same scope).
        SetParameter(name='use_sim_time', value=LaunchConfiguration('use_sim_time')),
        OpaqueFunction(function=launch_setup),
    ])
