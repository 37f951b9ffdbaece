"""
The Kinect v2 skeleton of the synthetic people: its 25 joints and 24 rigid bones.

Joint order and names are the Kinect v2 ``JointType`` order (:data:`JOINT_NAMES`); the bones
(:data:`BONES`) connect them into the rigid-segment skeleton whose lengths are a
:class:`~pic_ros_tools.synthetic.body.BodyModel`.
"""

from __future__ import annotations

from typing import Final

from pic_ros.trackers.kinect_v2 import KINECT_V2_JOINTS

JOINT_NAMES: Final = KINECT_V2_JOINTS
"""The 25 Kinect v2 ``JointType`` names in index order (the tracker's own table)."""

JOINT_COUNT: Final = len(JOINT_NAMES)
"""Number of joints per frame (25)."""

JOINT_INDEX: Final = {name: index for index, name in enumerate(JOINT_NAMES)}
"""Index of each joint name in :data:`JOINT_NAMES` (``{name: index}``)."""

BONES: Final[tuple[tuple[int, int], ...]] = tuple(
    (JOINT_INDEX[parent], JOINT_INDEX[child])
    for parent, child in (
        ('SpineBase', 'SpineMid'),
        ('SpineMid', 'SpineShoulder'),
        ('SpineShoulder', 'Neck'),
        ('Neck', 'Head'),
        ('SpineShoulder', 'ShoulderLeft'),
        ('ShoulderLeft', 'ElbowLeft'),
        ('ElbowLeft', 'WristLeft'),
        ('WristLeft', 'HandLeft'),
        ('HandLeft', 'HandTipLeft'),
        ('WristLeft', 'ThumbLeft'),
        ('SpineShoulder', 'ShoulderRight'),
        ('ShoulderRight', 'ElbowRight'),
        ('ElbowRight', 'WristRight'),
        ('WristRight', 'HandRight'),
        ('HandRight', 'HandTipRight'),
        ('WristRight', 'ThumbRight'),
        ('SpineBase', 'HipLeft'),
        ('HipLeft', 'KneeLeft'),
        ('KneeLeft', 'AnkleLeft'),
        ('AnkleLeft', 'FootLeft'),
        ('SpineBase', 'HipRight'),
        ('HipRight', 'KneeRight'),
        ('KneeRight', 'AnkleRight'),
        ('AnkleRight', 'FootRight'),
    )
)
"""
The 24 rigid bones as (parent, child) joint indices.

Their lengths are :attr:`~pic_ros_tools.synthetic.body.BodyModel.bones`.
"""
