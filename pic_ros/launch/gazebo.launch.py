"""
Gazebo (gz sim) with ros2_control and the teleoperation pipeline: pose imitation in simulation.

Usage::

    ros2 launch pic_ros gazebo.launch.py robot:=baxter
    ros2 launch pic_ros gazebo.launch.py robot:=tiago input_topic:=/kinect2/body_tracking_data
    ros2 launch pic_ros gazebo.launch.py robot:=yumi replay_bag:=/data/take start_engaged:=true
    ros2 launch pic_ros gazebo.launch.py robot:=baxter gz_args:='-r -v 2 empty.sdf'
    ros2 launch pic_ros gazebo.launch.py robot:=tiago follow_base:=true admittance:=true

Needs (a ROS machine): ros_gz_sim, ros_gz_bridge, gz_ros2_control (Humble: ign_ros2_control),
robot_state_publisher, controller_manager, and the package of every controller of the controllers
file (ros2_controllers: joint_state_broadcaster, joint_trajectory_controller; TIAGo also
diff_drive_controller and force_torque_sensor_broadcaster).

Sequence (as gz_ros2_control_demos' launch files do it):

1. ``robot_state_publisher`` publishes ``robot_description``: the robot's plain URDF plus the
   ``<ros2_control>`` and ``<gazebo>`` tags that
   :func:`pic_ros.robot.gazebo.gazebo_robot_description` adds (hardware plugin chosen by
   ``distro``; controllers from ``config/controllers/<robot>_controllers.yaml``, whose joints
   and sensors get the interfaces their controllers claim); the base is welded to the world,
   unless the robot file has a ``mobile_base`` (TIAGo stands on its wheels).
2. ``ros_gz_sim``'s ``gz_sim.launch.py`` starts Gazebo with ``gz_args``. The default,
   ``-r -s -v 2 empty.sdf``, runs the simulation at once (``-r``: the clock must advance for the
   controllers to switch) and without GUI (``-s``: server only, fine on a headless machine;
   attach a GUI with ``gz sim -g``, or pass ``gz_args:='-r -v 2 empty.sdf'``).
3. ``ros_gz_bridge parameter_bridge`` bridges Gazebo's ``/clock`` to ROS (``use_sim_time``).
4. ``ros_gz_sim create -topic robot_description`` spawns the robot; gz_ros2_control's plugin
   starts the controller manager inside Gazebo.
5. When ``create`` has exited successfully: ``controller_manager spawner`` for
   ``joint_state_broadcaster``, then, each after the previous one exited successfully, one
   spawner per controller of the controllers file (arms, head, grippers; TIAGo's torso, base
   and wrist force/torque broadcaster).
   A failed step logs why and shuts the launch down.
6. When the last controller is active: ``teleop.launch.py`` (the three nodes, with
   ``use_sim_time:=true``), and the ``replay`` executable (package ``pic_ros_tools``) with
   ``replay_bag`` if one is given. ``follow_base:=true`` also starts ``base_follower``, its
   ``cmd_vel`` remapped onto the diff_drive_controller's input of the distro
   (:func:`pic_ros.robot.gazebo.base_command`: ``mobile_base_controller/cmd_vel_unstamped``,
   ``Twist``, on Humble; ``mobile_base_controller/cmd_vel``, ``TwistStamped``, from Jazzy on).
   ``admittance:=true`` makes ``solver_node`` read the wrist sensor the robot file names
   (TIAGo: ``ft_sensor_controller/wrench``, what the force_torque_sensor_broadcaster
   publishes).
   The replay publishes the bag's tracker topic at its original pace; it does not publish
   ``/clock`` (Gazebo owns the clock); point ``input_topic`` at the bag's topic. The robot
   follows once engaged: ``start_engaged:=true``, or ``/trajectory_publisher/engage``.

Before step 1 the robot, the controllers file and the distro are checked, and every ROS package
the sequence needs is looked up: if any is missing, the launch starts nothing and exits with
status 1 and one message naming them all. A failed step (spawn, spawner) or a process of the
sequence that exits (robot_state_publisher, the clock bridge) stops the launch as a whole, also
with status 1 (:mod:`pic_ros.ros.launch_support`).
"""

from pathlib import Path

from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    GroupAction,
    IncludeLaunchDescription,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.conditions import IfCondition
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import EnvironmentVariable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare
from pic_ros.exceptions import PicRosError
from pic_ros.robot import load_robot
from pic_ros.robot.gazebo import (
    base_command,
    controller_names,
    gazebo_names,
    gazebo_robot_description,
    read_controllers,
)
from pic_ros.ros.launch_arguments import parameter_arguments
from pic_ros.ros.launch_support import (
    abort_unless_shutting_down,
    LaunchAbort,
    require_packages,
    require_tools,
    stop_launch_when_exits,
)

PACKAGE = 'pic_ros'
TOOLS_PACKAGE = 'pic_ros_tools'
"""The package of sim_robot and replay (:func:`require_tools` checks it is installed)."""
CONTROLLER_MANAGER = '/controller_manager'
ROS_PACKAGES = ('robot_state_publisher', 'ros_gz_sim', 'ros_gz_bridge', 'controller_manager')
"""ROS packages the sequence needs, besides the plugin package and the controllers' packages."""


def declare_arguments():
    """Return the declared launch arguments, each with its description."""
    parameters = [
        DeclareLaunchArgument(
            item.name, default_value=item.default, description=item.description,
            **({'choices': list(item.choices)} if item.choices else {}))
        for item in parameter_arguments(('source', 'solver', 'admittance', 'start_engaged'))
    ]
    return [
        DeclareLaunchArgument(
            'robot', default_value='baxter',
            description='Robot: any of config/ (baxter, nao, tiago, yumi), or the path of '
                        'another robot YAML, with controllers_file'),
        *parameters,
        DeclareLaunchArgument(
            'input_topic', default_value='body_tracking_data',
            description='MarkerArray topic of the tracker or of the replayed bag (e.g. '
                        '/kinect2/body_tracking_data for the sample bag)'),
        DeclareLaunchArgument(
            'gz_args', default_value='-r -s -v 2 empty.sdf',
            description='Arguments of gz sim: -r runs at once, -s without GUI (headless), -v '
                        'verbosity, then the world'),
        DeclareLaunchArgument(
            'replay_bag', default_value='',
            description='rosbag2 (MCAP or sqlite3) to replay into the pipeline with the replay '
                        'executable of pic_ros_tools once the controllers are up (empty: none; '
                        'use a live tracker)'),
        DeclareLaunchArgument(
            'distro', default_value=EnvironmentVariable('ROS_DISTRO', default_value='jazzy'),
            description='ROS distro, picks the plugin names: humble (ign_ros2_control, Gazebo '
                        'Fortress) or jazzy, kilted, rolling (gz_ros2_control); default '
                        '$ROS_DISTRO'),
        DeclareLaunchArgument(
            'controllers_file', default_value='',
            description='ros2_control controllers YAML (empty: the installed '
                        'config/controllers/<robot>_controllers.yaml)'),
        DeclareLaunchArgument(
            'follow_base', default_value='false',
            description="Also start base_follower: the mobile base follows the person's walking "
                        "through the controllers file's diff_drive_controller (opt-in: the "
                        'robot drives)'),
    ]


def _text(context, name):
    """Return the value of a launch argument, stripped."""
    return LaunchConfiguration(name).perform(context).strip()


def _after(process, what, actions):
    """
    Start ``actions`` when ``process`` exits with status 0; otherwise stop the launch (status 1).

    :param process: The process action to wait for.
    :param what: What the process does, for the message.
    :param actions: Actions to start next.
    :return: The event handler registration.
    """
    def on_exit(event, context):
        if event.returncode == 0:
            return actions
        if context.is_shutdown:
            return None  # stopped by Ctrl-C or by another failure
        return [abort_unless_shutting_down(
            f'{what} failed (exit code {event.returncode}); stopping the launch')]

    # OnProcessExit takes a callable (event, context) -> actions (launch/event_handlers).
    return RegisterEventHandler(OnProcessExit(target_action=process, on_exit=on_exit))


def _base_arguments(base):
    """
    Return the teleop.launch.py arguments that drive the base controller, or none.

    :param base: ``(topic, stamped)`` of the diff_drive_controller's input
        (:func:`pic_ros.robot.gazebo.base_command`), or None not to follow.
    :return: ``follow_base``, ``base_cmd_topic`` and ``base_cmd_stamped``, or an empty dict.
    """
    if base is None:
        return {}
    topic, stamped = base
    return {'follow_base': 'true', 'base_cmd_topic': topic,
            'base_cmd_stamped': 'true' if stamped else 'false'}


def _spawner(controller):
    """Return the controller_manager spawner of one controller (loads, configures, activates)."""
    # One controller per spawner: the multi-controller form is not in every distro's spawner.
    return Node(
        package='controller_manager', executable='spawner',
        arguments=[controller, '--controller-manager', CONTROLLER_MANAGER,
                   '--controller-manager-timeout', '60'],
        output='screen',
    )


def launch_setup(context):
    """Build the robot description, then start Gazebo, the spawn and the controller chain."""
    share = Path(FindPackageShare(PACKAGE).perform(context))
    robot_argument = _text(context, 'robot')
    is_file = robot_argument.endswith(('.yaml', '.yml'))
    distro = _text(context, 'distro')
    try:
        robot = load_robot(
            robot_argument if is_file else share / 'config' / f'{robot_argument}.yaml'
        )
        controllers_file = _text(context, 'controllers_file') or str(
            share / 'config' / 'controllers' / f'{robot.name}_controllers.yaml')
        if not Path(controllers_file).is_file():
            raise LaunchAbort(
                f'no controllers file {controllers_file} for {robot.name}; nothing was started')
        names = gazebo_names(distro)
        description = gazebo_robot_description(robot, controllers_file, distro=distro)
        controllers = controller_names(controllers_file)
        entries = read_controllers(controllers_file)
        base = base_command(entries, distro)
    except PicRosError as error:
        raise LaunchAbort(f'{error}; nothing was started') from None
    follow_base = IfCondition(LaunchConfiguration('follow_base')).evaluate(context)
    if follow_base and base is None:
        raise LaunchAbort(
            f'follow_base:=true: {controllers_file} has no diff_drive_controller; nothing was '
            'started')
    # All or nothing: a missing package found by a Node half-way would leave the processes
    # started before it running.
    plugin_package = names.system_filename.removesuffix('-system')
    controller_packages = sorted({entry.package for entry in entries})
    require_packages(
        [*ROS_PACKAGES, *controller_packages, plugin_package],
        f'gazebo.launch.py (distro {distro})',
        'Install Gazebo with ros_gz and ros2_control (e.g. ros-$ROS_DISTRO-ros-gz, '
        'ros-$ROS_DISTRO-gz-ros2-control, ros-$ROS_DISTRO-ros2-controllers, '
        'ros-$ROS_DISTRO-robot-state-publisher), or run teleop.launch.py sim:=true for the '
        'MuJoCo simulation.')
    if _text(context, 'replay_bag'):
        require_tools('replay_bag (the replay executable)', 'leave replay_bag empty')

    robot_state_publisher = Node(
        package='robot_state_publisher', executable='robot_state_publisher',
        parameters=[{
            # value_type=str: keep the URDF a string (launch_ros would otherwise YAML-parse it).
            'robot_description': ParameterValue(description, value_type=str),
            'use_sim_time': True,
        }],
        output='screen',
    )
    gazebo = GroupAction([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution([FindPackageShare('ros_gz_sim'), 'launch',
                                      'gz_sim.launch.py'])),
            # on_exit_shutdown: closing Gazebo ends the launch (newer ros_gz_sim; ignored by
            # older ones, as are all undeclared launch arguments of an include).
            launch_arguments={'gz_args': LaunchConfiguration('gz_args'),
                              'on_exit_shutdown': 'true'}.items(),
        ),
    ])
    clock_bridge = Node(
        package='ros_gz_bridge', executable='parameter_bridge',
        arguments=[f'/clock@rosgraph_msgs/msg/Clock[{names.clock_message}'],
        output='screen',
    )
    # Flags as parsed by ros_gz_sim/src/create.cpp (-topic, -name, -allow_renaming).
    spawn = Node(
        package='ros_gz_sim', executable='create',
        arguments=['-topic', 'robot_description', '-name', robot.name,
                   '-allow_renaming', 'true'],
        output='screen',
    )

    pipeline = [
        GroupAction([  # scoped: teleop.launch.py's SetParameter(use_sim_time) stays inside
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(
                    PathJoinSubstitution([FindPackageShare(PACKAGE), 'launch',
                                          'teleop.launch.py'])),
                launch_arguments={
                    'robot': robot_argument,
                    'source': LaunchConfiguration('source'),
                    'input_topic': LaunchConfiguration('input_topic'),
                    'solver': LaunchConfiguration('solver'),
                    'admittance': LaunchConfiguration('admittance'),
                    'start_engaged': LaunchConfiguration('start_engaged'),
                    'use_sim_time': 'true',
                    **_base_arguments(base if follow_base else None),
                }.items(),
            ),
        ]),
    ]
    bag = _text(context, 'replay_bag')
    if bag:
        pipeline.append(
            Node(package=TOOLS_PACKAGE, executable='replay', arguments=[bag], output='screen')
        )

    spawners = [_spawner(name) for name in controllers]
    handlers = [_after(spawn, 'spawning the robot in Gazebo', [spawners[0]])]
    for current, following in zip(spawners, spawners[1:]):
        handlers.append(_after(current, 'a controller spawner', [following]))
    handlers.append(_after(spawners[-1], 'a controller spawner', pipeline))
    handlers += [
        stop_launch_when_exits(robot_state_publisher, 'robot_state_publisher',
                               'the controllers would have no robot_description'),
        stop_launch_when_exits(clock_bridge, 'the /clock bridge',
                               'the simulated clock would stop'),
    ]
    return [*handlers, robot_state_publisher, gazebo, clock_bridge, spawn]


def generate_launch_description():
    """Launch Gazebo, the robot with its controllers, and the teleoperation pipeline."""
    return LaunchDescription([
        *declare_arguments(),
        OpaqueFunction(function=launch_setup),
    ])
