"""
Synthetic Kinect v2 recordings: the shipped demo take and a robustness suite of many people.

Both generators are deterministic from a seed and return a
:class:`~pic_ros_tools.synthetic.recording.SyntheticRecording` (joints in Kinect v2 camera
space [m], stamps [s], labelled task segments):

- the demo take (:func:`generate_recording`, model in :mod:`pic_ros_tools.synthetic.demo_take`),
  written in the PIC paper's text formats by :func:`write_kinect_v2_text` and shipped in
  ``demo/``;
- the robustness suite: :func:`suite_specs` draws a :class:`PersonSpec` per take,
  :func:`generate_take` makes each take (model in :mod:`pic_ros_tools.synthetic.suite_take`).

Modules, one concept each: :mod:`~pic_ros_tools.synthetic.skeleton` (joints and bones),
:mod:`~pic_ros_tools.synthetic.body` (segment lengths), :mod:`~pic_ros_tools.synthetic.kinematics`
(arm angles, trunk, joint positions), :mod:`~pic_ros_tools.synthetic.motion` (minimum-jerk
profiles, trunk sway), :mod:`~pic_ros_tools.synthetic.tracker_model` (frame timing and tracker
errors), :mod:`~pic_ros_tools.synthetic.recording` (the generated take),
:mod:`~pic_ros_tools.synthetic.text_writer` (Kinect v2 text files),
:mod:`~pic_ros_tools.synthetic.demo_plan` and :mod:`~pic_ros_tools.synthetic.demo_take` (the demo
take), :mod:`~pic_ros_tools.synthetic.people`, :mod:`~pic_ros_tools.synthetic.field_of_view`,
:mod:`~pic_ros_tools.synthetic.suite_tasks`, :mod:`~pic_ros_tools.synthetic.suite_plan`,
:mod:`~pic_ros_tools.synthetic.foreshortening`, :mod:`~pic_ros_tools.synthetic.suite_take` and
:mod:`~pic_ros_tools.synthetic.suite` (the suite). This package re-exports their public API.
"""

from pic_ros_tools.synthetic.body import BODY, BodyModel, REFERENCE_HEIGHT
from pic_ros_tools.synthetic.demo_plan import Task, TASKS
from pic_ros_tools.synthetic.demo_take import (
    DEFAULT_NAME,
    DEFAULT_SEED,
    generate_recording,
    SENSOR_HEIGHT,
    STANCE_ORIGIN,
    STANCE_TO_CAMERA,
    SUBJECT_DISTANCE,
    SUBJECT_OFFSET,
    SUBJECT_YAW_DEG,
)
from pic_ros_tools.synthetic.field_of_view import (
    DEPTH_RANGE,
    FIELD_OF_VIEW_DEG,
    in_field_of_view,
    VIEW_JOINTS,
)
from pic_ros_tools.synthetic.foreshortening import (
    FORESHORTENING_DEPTH_BIAS,
    foreshortening_offsets,
)
from pic_ros_tools.synthetic.kinematics import ARM_ANGLE_LIMITS_DEG, ARM_ANGLE_NAMES, ARM_SIDES
from pic_ros_tools.synthetic.people import (
    BAD_STARTS,
    MAX_SENSOR_BEARING_DEG,
    PERSON_RANGES,
    PersonSpec,
)
from pic_ros_tools.synthetic.recording import SyntheticRecording
from pic_ros_tools.synthetic.skeleton import BONES, JOINT_COUNT, JOINT_NAMES
from pic_ros_tools.synthetic.suite import SUITE_COUNT, SUITE_SEED, suite_specs
from pic_ros_tools.synthetic.suite_take import generate_take
from pic_ros_tools.synthetic.suite_tasks import TASK_NAMES
from pic_ros_tools.synthetic.text_writer import write_kinect_v2_text
from pic_ros_tools.synthetic.tracker_model import DURATION, NOMINAL_RATE, TrackerModel

__all__ = [
    'ARM_ANGLE_LIMITS_DEG',
    'ARM_ANGLE_NAMES',
    'ARM_SIDES',
    'BAD_STARTS',
    'BODY',
    'BodyModel',
    'BONES',
    'DEFAULT_NAME',
    'DEFAULT_SEED',
    'DEPTH_RANGE',
    'DURATION',
    'FIELD_OF_VIEW_DEG',
    'FORESHORTENING_DEPTH_BIAS',
    'JOINT_COUNT',
    'JOINT_NAMES',
    'MAX_SENSOR_BEARING_DEG',
    'NOMINAL_RATE',
    'PERSON_RANGES',
    'PersonSpec',
    'REFERENCE_HEIGHT',
    'SENSOR_HEIGHT',
    'STANCE_ORIGIN',
    'STANCE_TO_CAMERA',
    'SUBJECT_DISTANCE',
    'SUBJECT_OFFSET',
    'SUBJECT_YAW_DEG',
    'SUITE_COUNT',
    'SUITE_SEED',
    'SyntheticRecording',
    'Task',
    'TASK_NAMES',
    'TASKS',
    'TrackerModel',
    'VIEW_JOINTS',
    'foreshortening_offsets',
    'generate_recording',
    'generate_take',
    'in_field_of_view',
    'suite_specs',
    'write_kinect_v2_text',
]
