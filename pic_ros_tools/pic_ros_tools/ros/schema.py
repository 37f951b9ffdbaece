"""
The parameter table of ``sim_robot``, built like the run-time ones (:mod:`pic_ros.ros.schema`).

``python -m pic_ros params`` finds it through the entry point ``sim_robot`` of the group
``pic_ros.parameter_tables`` (``setup.py``), so the docs' tables list it when this package is
installed. No rclpy here.
"""

from __future__ import annotations

from typing import Final

from pic_ros.realtime import REALTIME_PRIORITY
from pic_ros.ros.schema import DIAGNOSTICS_PERIOD, ROBOT
from pic_ros.schema import ParameterDef, ParameterTable
from pic_ros_tools.sim.config import SIM_CONFIG_PARAMETERS
from pic_ros_tools.sim.frame_recorder import RENDER_PARAMETERS

SIM_RATE: Final = ParameterDef(
    'rate', 200.0, 'Rate of joint_states and of the simulation updates', unit='Hz', low=100.0,
    high=1000.0,
)
PUBLISH_CLOCK: Final = ParameterDef(
    'publish_clock', False, 'Publish the simulation time on /clock and stamp joint_states with it',
    read_only=True,
)

SIM_ROBOT: Final = ParameterTable('sim_robot', (
    ROBOT, SIM_RATE, PUBLISH_CLOCK, RENDER_PARAMETERS, SIM_CONFIG_PARAMETERS, DIAGNOSTICS_PERIOD,
    REALTIME_PRIORITY,
))
"""``sim_robot``: the MuJoCo stand-in for the robot and its controllers."""
