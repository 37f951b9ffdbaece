"""
One person, several robots: the paper's classroom of heterogeneous robots imitating one teacher.

Usage::

    ros2 launch pic_ros multi_robot.launch.py
    ros2 launch pic_ros multi_robot.launch.py robots:=baxter,tiago solver:=pics eta:=2
    ros2 launch pic_ros multi_robot.launch.py input_topic:=/kinect2/body_tracking_data
    ros2 launch pic_ros multi_robot.launch.py sim:=true   # one MuJoCo robot per namespace
    ros2 launch pic_ros multi_robot.launch.py robots:=baxter:left_cell,baxter:right_cell

What it starts:

- one ``skeleton_node`` in the root namespace: tracker input (``body_tracking_data`` remapped to
  ``input_topic``, or the Xsens UDP stream) -> the shared ``/skeleton`` topic;
- for each robot of ``robots`` (default ``baxter,yumi,tiago``; any robot of ``config/``), in its
  namespace ``/<ns>``: a ``solver_node`` whose ``skeleton`` (``chest``, ``person``) is
  remapped to ``/skeleton`` (``/chest``, ``/person``) and
  that publishes ``/<ns>/joint_targets``, and a ``trajectory_publisher`` that reads
  ``/<ns>/joint_states`` (and ``/person``: another person disengages) and streams
  ``/<ns>/<controller>/joint_trajectory`` (so each robot's controller manager runs in its
  namespace, e.g. ``/baxter/left_arm_controller``).

Each item of ``robots`` is ``ROBOT`` (namespace ``/<robot>``) or ``ROBOT:NAMESPACE``, so that two
robots of one type run side by side (``baxter:left_cell,baxter:right_cell``); two robots given
one namespace stop the launch before anything starts.

With ``sim:=true``, each robot also gets a ``sim_robot`` (MuJoCo, package ``pic_ros_tools``) in
its namespace that follows its trajectories and publishes ``/<ns>/joint_states`` and
``/<ns>/robot_description``.

When ``robot_state_publisher`` is installed (a ROS install; not on PyPI), each robot gets one in
its namespace, with its URDF: ``/<ns>/robot_description`` (latched) and the robot's TF on
``/<ns>/tf`` and ``/<ns>/tf_static`` (remapped from ``/tf``, so that the robots' trees stay
apart); otherwise the launch says so in its log and runs without TF. The person drawn over each
robot is ``/<ns>/placed_skeleton_markers`` (frame the robot's base frame). To see one robot
in RViz: ``rviz2 -d $(ros2 pkg prefix pic_ros)/share/pic_ros/rviz/teleop.rviz -f <base frame>
--ros-args -r __ns:=/<ns> -r /tf:=tf -r /tf_static:=tf_static``.

Each robot starts disengaged and is engaged on its own
(``/<ns>/trajectory_publisher/engage``; ``/<ns>/estop`` stops it), or all at once with
``start_engaged:=true``.

Every process is essential: when one exits while the launch runs, the launch stops as a whole
(exit status 1, one message naming it); an unknown robot stops it before anything starts.

Parameters come from ``params_file`` (default ``config/teleop.yaml``: wildcard node keys, so one
file serves every namespace); non-empty launch arguments override it per node, as in
``teleop.launch.py``.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, PushRosNamespace, SetParameter
from launch_ros.parameter_descriptions import ParameterFile
from launch_ros.substitutions import FindPackageShare
from pic_ros.exceptions import ConfigError
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.ros.launch_arguments import node_overrides, parameter_arguments, placed_robots
from pic_ros.ros.launch_support import (
    LaunchAbort,
    require_tools,
    robot_state_publisher,
    state_publisher_missing,
    stop_launch_when_exits,
)

PACKAGE = 'pic_ros'
TOOLS_PACKAGE = 'pic_ros_tools'
"""The package of sim_robot and replay (:func:`require_tools` checks it is installed)."""
DEFAULT_ROBOTS = ('baxter', 'yumi', 'tiago')
SHARED_SKELETON = '/skeleton'
SHARED_CHEST = '/chest'
SHARED_PERSON = '/person'


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
            'robots', default_value=','.join(DEFAULT_ROBOTS),
            description='Comma-separated robots to drive, each in its own namespace: any of '
                        'config/ (baxter, nao, tiago, yumi), each as ROBOT (namespace /ROBOT) '
                        'or ROBOT:NAMESPACE (e.g. baxter:left_cell,baxter:right_cell)'),
        *parameters,
        DeclareLaunchArgument(
            'input_topic', default_value='body_tracking_data',
            description="MarkerArray topic of the body tracker, remapped onto skeleton_node's "
                        'body_tracking_data (e.g. /kinect2/body_tracking_data for the sample '
                        'bag)'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Use /clock (true with Gazebo or a bag played with --clock)'),
        DeclareLaunchArgument(
            'sim', default_value='false',
            description='Also start one sim_robot (package pic_ros_tools) per robot, in its '
                        'namespace: the MuJoCo simulation follows the trajectories and publishes '
                        'joint_states'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([FindPackageShare(PACKAGE), 'config',
                                                'teleop.yaml']),
            description='Parameter file of the nodes (wildcard node keys /**/<node>)'),
    ]


def _text(context, name):
    """Return the value of a launch argument, stripped."""
    return LaunchConfiguration(name).perform(context).strip()


def robot_list(text):
    """
    Parse the ``robots`` argument.

    :param text: Comma-separated ``ROBOT`` or ``ROBOT:NAMESPACE`` items.
    :return: The robots with their namespaces
        (:class:`~pic_ros.ros.launch_arguments.PlacedRobot`), in the given order.
    :raises LaunchAbort: If the list is empty, names an unknown robot or a bad namespace, or
        gives one namespace twice.
    """
    try:
        return placed_robots(text, shipped_robots())
    except ConfigError as error:
        raise LaunchAbort(str(error)) from None


def launch_setup(context):
    """Create the shared skeleton node and one solver + trajectory publisher per robot."""
    parameter_file = ParameterFile(LaunchConfiguration('params_file'), allow_substs=False)
    placed = robot_list(_text(context, 'robots'))
    overrides = {
        one.robot: node_overrides(lambda name: _text(context, name), one.robot)
        for one in placed
    }
    skeleton_values = overrides[placed[0].robot]['skeleton_node']  # one tracker for every robot
    # name= and namespace given (directly or by PushRosNamespace): launch_ros keys the override
    # dictionaries by the node's full name, which rclpy applies over the wildcard file.
    skeleton = Node(
        package=PACKAGE, executable='skeleton_node', name='skeleton_node', namespace='/',
        parameters=[parameter_file, skeleton_values],
        remappings=[('body_tracking_data', LaunchConfiguration('input_topic')),
                    ('skeleton', SHARED_SKELETON), ('chest', SHARED_CHEST),
                    ('person', SHARED_PERSON)],
        output='screen',
    )
    actions = [skeleton, _essential(skeleton, 'skeleton_node')]
    sim = IfCondition(LaunchConfiguration('sim')).evaluate(context)
    if sim:
        require_tools('sim:=true (a sim_robot per robot)', 'leave sim false')
    missing = state_publisher_missing()  # said once, for every robot
    if missing is not None:
        actions.append(missing)
    for one in placed:
        robot = one.robot
        nodes = {
            'solver_node': Node(
                package=PACKAGE, executable='solver_node', name='solver_node',
                parameters=[parameter_file, overrides[robot]['solver_node']],
                remappings=[('skeleton', SHARED_SKELETON), ('chest', SHARED_CHEST),
                            ('person', SHARED_PERSON)],
                output='screen',
            ),
            'trajectory_publisher': Node(
                package=PACKAGE, executable='trajectory_publisher',
                name='trajectory_publisher',
                parameters=[parameter_file, overrides[robot]['trajectory_publisher']],
                remappings=[('person', SHARED_PERSON)],
                output='screen',
            ),
        }
        if sim:
            nodes['sim_robot'] = Node(
                package=TOOLS_PACKAGE, executable='sim_robot', name='sim_robot',
                parameters=[{'robot': robot}], output='screen',
            )
        # PushRosNamespace: the Iron+ name is PushROSNamespace; the old one stays exported
        # (launch_ros actions/__init__.py) and is the only one on Humble.
        actions.append(GroupAction([PushRosNamespace(one.namespace), *nodes.values()]))
        if missing is None:
            urdf = load_robot(robot).urdf_file.read_text(encoding='utf-8')
            actions.append(robot_state_publisher(urdf, one.namespace, separate_tf=True))
        actions += [_essential(node, f'{one.namespace}/{name}') for name, node in nodes.items()]
    return actions


def _essential(node, name):
    """Return the handler that stops the whole launch when a node's process exits."""
    return stop_launch_when_exits(node, name, 'the pipeline is incomplete')


def generate_launch_description():
    """Launch one skeleton node and a solver + trajectory publisher for each robot."""
    return LaunchDescription([
        *declare_arguments(),
        SetParameter(name='use_sim_time', value=LaunchConfiguration('use_sim_time')),
        OpaqueFunction(function=launch_setup),
    ])
