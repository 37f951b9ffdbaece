"""
TIAGo whole-body teleoperation after Arduengo et al.: torso and arm, optionally base, admittance.

Usage::

    ros2 launch pic_ros tiago_whole_body.launch.py sim:=true
    ros2 launch pic_ros tiago_whole_body.launch.py follow_base:=true admittance:=true

It is ``teleop.launch.py`` with ``robot:=tiago whole_body:=true``: ``solver_node`` solves the
torso lift and the arm in one prioritized IK (the torso follows the person's crouching) and
``trajectory_publisher`` streams ``torso_controller/joint_trajectory`` beside
``arm_controller/joint_trajectory``, ``head_controller/joint_trajectory`` and
``hand_controller/joint_trajectory``. Two switches, both off by default:

- ``follow_base:=true``: ``base_follower`` drives the base after the person's walking, on
  ``base_cmd_topic`` (default ``mobile_base_controller/cmd_vel_unstamped`` from
  ``config/tiago.yaml``: a ROS 2 TIAGo's diff_drive_controller reads ``geometry_msgs/Twist``
  there). The robot drives: keep the
  emergency stop at hand;
- ``admittance:=true``: the hand yields to a push measured by the wrist force/torque sensor
  (a ``geometry_msgs/WrenchStamped`` topic: by default ``ft_sensor_controller/wrench`` in the
  frame ``wrist_ft_link``, as on a TIAGo with the sensor; ``wrench_topic`` remaps it) and
  returns to the imitation target.

The robot starts disengaged, as with ``teleop.launch.py``: it moves once an operator calls
``/trajectory_publisher/engage`` (or with ``start_engaged:=true``); keep the emergency stop
(``estop``) at hand.

Every other argument of ``teleop.launch.py`` is passed through as declared here.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'pic_ros'


def declare_arguments():
    """Return the declared launch arguments, each with its description."""
    return [
        DeclareLaunchArgument(
            'source', default_value='azure_kinect',
            description='Tracker: azure_kinect, kinect_v2 or xsens_mvn (or one registered by a '
                        'plug-in)'),
        DeclareLaunchArgument(
            'input_topic', default_value='body_tracking_data',
            description="MarkerArray topic of the body tracker, remapped onto skeleton_node's "
                        'body_tracking_data'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='ROS namespace of the nodes (empty: the root namespace)'),
        DeclareLaunchArgument(
            'sim', default_value='false',
            description='Also start sim_robot (package pic_ros_tools): the MuJoCo TIAGo follows '
                        'the trajectories (no robot needed)'),
        DeclareLaunchArgument(
            'single_process', default_value='false',
            description='Run the three pipeline nodes in one process'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Use /clock (a bag played with --clock, or Gazebo)'),
        DeclareLaunchArgument(
            'follow_base', default_value='false',
            description="Also start base_follower: the base follows the person's walking "
                        '(opt-in: the robot drives)'),
        DeclareLaunchArgument(
            'base_cmd_topic', default_value='',
            description="Topic base_follower's cmd_vel is remapped to: the base controller's "
                        'Twist input (empty: mobile_base_controller/cmd_vel_unstamped, from '
                        'config/tiago.yaml)'),
        DeclareLaunchArgument(
            'admittance', default_value='',
            description='Let a person push the hand: the wrist force drives a variable '
                        "admittance (empty: solver_node's value in params_file, false)"),
        DeclareLaunchArgument(
            'base_cmd_stamped', default_value='false',
            description='base_follower publishes geometry_msgs/TwistStamped instead of Twist '
                        '(diff_drive_controller on Jazzy and later reads TwistStamped on '
                        '~/cmd_vel)'),
        DeclareLaunchArgument(
            'wrench_topic', default_value='',
            description='WrenchStamped topic of the wrist force/torque sensor (empty: '
                        'ft_sensor_controller/wrench, from config/tiago.yaml)'),
        DeclareLaunchArgument(
            'start_engaged', default_value='',
            description='Follow the person from the start; false: the robot holds still until '
                        'an operator engages it (/trajectory_publisher/engage) (empty: '
                        "trajectory_publisher's value in params_file, false)"),
    ]


PASSED = (
    'source', 'input_topic', 'namespace', 'sim', 'single_process', 'use_sim_time', 'follow_base',
    'base_cmd_topic', 'base_cmd_stamped', 'admittance', 'wrench_topic', 'start_engaged',
)
"""The arguments passed on to teleop.launch.py."""


def generate_launch_description():
    """Launch teleop.launch.py for TIAGo with the whole-body solver."""
    teleop = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            PathJoinSubstitution([FindPackageShare(PACKAGE), 'launch', 'teleop.launch.py'])
        ),
        launch_arguments=[
            ('robot', 'tiago'),
            ('whole_body', 'true'),
            *((name, LaunchConfiguration(name)) for name in PASSED),
        ],
    )
    return LaunchDescription([*declare_arguments(), teleop])
