"""
The parameter table of every node, assembled from the definitions beside the core configs.

One :class:`~pic_ros.schema.ParameterTable` per node. The nodes declare exactly these; the
launch files, ``teleop``'s options, ``config/teleop.yaml`` and the parameter tables of the docs
are derived from them (``python -m pic_ros params``). This module imports no rclpy, so launch
files and tools can read it anywhere.

Parameters that only a node has (its robot, its topics' frame, the diagnostics period) are
defined here; every other one is defined next to the core configuration it builds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from pic_ros.correspondence.base import MAPPING_PARAMETERS
from pic_ros.exceptions import ConfigError
from pic_ros.freshness import MAX_FRAME_AGE
from pic_ros.head_and_hands import HEAD_AND_HANDS_PARAMETERS
from pic_ros.human.engage_gesture import ENGAGE_GESTURE_TIME
from pic_ros.human.front_end import RESTART_AFTER
from pic_ros.human.hands import HAND_PARAMETERS
from pic_ros.human.processing import SMOOTHING, TIME_CONSTANT
from pic_ros.imitation import WHOLE_BODY
from pic_ros.motion.base_following import BASE_FOLLOWING_PARAMETERS
from pic_ros.motion.commander import COMMANDER_PARAMETERS
from pic_ros.motion.engagement import ENGAGE_EACH_PERSON, START_ENGAGED
from pic_ros.motion.gripper_goals import GRIPPER_INTERFACE
from pic_ros.motion.hand_compliance import HAND_COMPLIANCE_PARAMETERS
from pic_ros.realtime import REALTIME_PRIORITY
from pic_ros.schema import ParameterDef, ParameterTable
from pic_ros.solvers.avoidance import SELF_COLLISION_MARGIN
from pic_ros.solvers.base import SOLVER_PARAMETERS
from pic_ros.trackers import SOURCE
from pic_ros.trackers.frames import REACQUIRE_AFTER, REACQUIRE_RADIUS, SWITCH_AFTER
from pic_ros.trackers.udp import UDP_RECEIVE_BUFFER
from pic_ros.trackers.xsens import XSENS_CHARACTER

ROBOT: Final = ParameterDef(
    'robot', 'baxter',
    'Robot name (config/<robot>.yaml + its URDF) or the path of a robot YAML', read_only=True,
)
ARMS: Final = ParameterDef(
    'arms', [], 'Arms to solve (names from the robot file); empty solves every arm, and the node '
    "then reports the robot's arms as the value ([''] is read as empty)",
    read_only=True,
)


def frame_id(name: str) -> Callable[[str], str]:
    """
    Return the check of a frame id parameter: a name tf2 accepts.

    :param name: The parameter's name, for the message.
    :return: A ``parse`` function that returns the frame id, or raises
        :class:`~pic_ros.exceptions.ConfigError` for an empty one (messages that name no frame)
        or one that starts with ``/`` (tf2 refuses it).
    """

    def check(value: str) -> str:
        if not value.strip():
            raise ConfigError(
                f'{name} must name a frame, got {value!r}: an empty frame_id puts the messages '
                'in no frame (RViz and tf2 cannot place them)'
            )
        if value.startswith('/'):
            raise ConfigError(f"{name} must not start with '/' (tf2 refuses it), got {value!r}")
        return value

    return check


BODY_FRAME_ID: Final = ParameterDef(
    'body_frame_id', 'pic_human', "frame_id of the skeleton topics (not empty, no leading '/')",
    parse=frame_id('body_frame_id'),
)
TRACKER_FRAME_ID: Final = ParameterDef(
    'tracker_frame_id', 'pic_tracker',
    "frame_id of body_pose (the tracker's origin with REP-103 axes: x away from the sensor; not "
    "empty, no leading '/')", parse=frame_id('tracker_frame_id'),
)
MARKER_RATE: Final = ParameterDef(
    'marker_rate', 30.0, 'Largest publish rate of skeleton_markers for RViz (0: off)', unit='Hz',
    low=0.0, high=30.0,
)
UDP_ADDRESS: Final = ParameterDef(
    'udp_address', '127.0.0.1',
    'UDP trackers (xsens_mvn): address the receiver binds to (a tracker on another PC needs '
    "this PC's address on that network, or 0.0.0.0)", read_only=True,
)
UDP_PORT: Final = ParameterDef(
    'udp_port', 9763, 'UDP trackers (xsens_mvn): port the receiver binds to', low=1, high=65535,
    read_only=True,
)
DIAGNOSTICS_PERIOD: Final = ParameterDef(
    'diagnostics_period', 1.0, 'Time between reports on /diagnostics', unit='s', low=0.1,
    high=60.0,
)

SKELETON_NODE: Final = ParameterTable('skeleton_node', (
    SOURCE, SMOOTHING, TIME_CONSTANT, SWITCH_AFTER, REACQUIRE_RADIUS, REACQUIRE_AFTER,
    RESTART_AFTER, BODY_FRAME_ID, TRACKER_FRAME_ID, MARKER_RATE, UDP_ADDRESS, UDP_PORT,
    UDP_RECEIVE_BUFFER, XSENS_CHARACTER,
    DIAGNOSTICS_PERIOD, REALTIME_PRIORITY,
))
"""``skeleton_node``: tracker in, body-frame skeleton out."""

SOLVER_NODE: Final = ParameterTable('solver_node', (
    ROBOT, SOLVER_PARAMETERS[:2], ARMS, MAPPING_PARAMETERS, SOLVER_PARAMETERS[2:], WHOLE_BODY,
    SELF_COLLISION_MARGIN,
    HEAD_AND_HANDS_PARAMETERS, HAND_PARAMETERS, HAND_COMPLIANCE_PARAMETERS, ENGAGE_GESTURE_TIME,
    MAX_FRAME_AGE, DIAGNOSTICS_PERIOD, REALTIME_PRIORITY,
))
"""``solver_node``: skeleton in, joint targets out."""

TRAJECTORY_PUBLISHER: Final = ParameterTable('trajectory_publisher', (
    ROBOT, START_ENGAGED, ENGAGE_EACH_PERSON, COMMANDER_PARAMETERS, SELF_COLLISION_MARGIN,
    GRIPPER_INTERFACE, DIAGNOSTICS_PERIOD, REALTIME_PRIORITY,
))
"""``trajectory_publisher``: joint targets in, trajectory chunks out."""

BASE_RATE: Final = ParameterDef(
    'rate', 20.0, 'Rate of the cmd_vel commands while following', unit='Hz', low=1.0, high=200.0,
)
"""``base_follower``'s ``rate``: above a diff_drive_controller's 2 Hz default command timeout."""

STAMPED: Final = ParameterDef(
    'stamped', False,
    'Publish cmd_vel as geometry_msgs/TwistStamped instead of Twist (diff_drive_controller from '
    'Jazzy on reads only TwistStamped on ~/cmd_vel)', read_only=True,
)
"""``base_follower``'s ``stamped``: the message type of ``cmd_vel``."""

ENGAGED_ONLY: Final = ParameterDef(
    'engaged_only', True,
    'Drive the base only while trajectory_publisher says engaged (engaged, latched) and no '
    'emergency stop (estop) came since; false: follow whenever follow_base is true, engaged or '
    'not',
)
"""``base_follower``'s ``engaged_only``: the base moves only while the robot is engaged."""

BASE_FRAME_ID: Final = ParameterDef(
    'frame_id', 'base_footprint',
    "frame_id of a stamped cmd_vel (the base controller's base frame; not empty, no leading '/')",
    parse=frame_id('frame_id'),
)
"""``base_follower``'s ``frame_id``: only used with ``stamped``."""

BASE_FOLLOWER: Final = ParameterTable('base_follower', (
    BASE_FOLLOWING_PARAMETERS, ENGAGED_ONLY, BASE_RATE, STAMPED, BASE_FRAME_ID,
    DIAGNOSTICS_PERIOD, REALTIME_PRIORITY,
))
"""``base_follower``: the person's footprint in, the mobile base's cmd_vel out."""

PIPELINE: Final = (SKELETON_NODE, SOLVER_NODE, TRAJECTORY_PUBLISHER)
"""The teleoperation nodes, upstream first (the blocks of ``config/teleop.yaml``)."""

SET_BY_LAUNCH: Final = frozenset({'source', 'robot', 'arms'})
"""Parameters the launch files choose per run and per robot, so not in ``config/teleop.yaml``."""

LAUNCH_ARGUMENTS: Final = (
    ('skeleton_node', 'source'),
    ('solver_node', 'solver'),
    ('solver_node', 'eta'),
    ('solver_node', 'mapping'),
    ('solver_node', 'correspondence'),
    ('solver_node', 'user_profile'),
    ('solver_node', 'whole_body'),
    ('solver_node', 'admittance'),
    ('skeleton_node', 'udp_address'),
    ('skeleton_node', 'udp_port'),
    ('trajectory_publisher', 'start_engaged'),
    ('trajectory_publisher', 'gripper_interface'),
    ('skeleton_node', 'realtime_priority'),
    ('solver_node', 'realtime_priority'),
    ('trajectory_publisher', 'realtime_priority'),
)
"""Node parameters that ``teleop.launch.py`` exposes as launch arguments of the same name (one
argument for a name several nodes have: it sets each of them)."""

TABLES: Final = {table.node: table for table in (*PIPELINE, BASE_FOLLOWER)}
"""Every run-time node's table by node name (``sim_robot``'s is ``pic_ros_tools.ros.schema``)."""
