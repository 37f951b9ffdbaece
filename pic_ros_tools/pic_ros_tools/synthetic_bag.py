"""
Synthetic bags: a synthetic take written as an Azure Kinect body-tracking rosbag2.

This is how ``scripts/make_demo_recording.py`` makes the shipped demo bag,
``demo/synthetic1_bag``: the take of :mod:`pic_ros_tools.synthetic` as the Azure Kinect ROS
driver would have published it (:mod:`pic_ros_tools.recordings.skeleton_bag_writer`), holding
exactly the data of the take's Kinect v2 text files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
from pic_ros.trackers.markers import AZURE_KINECT
from pic_ros_tools.azure_joints import azure_joints_from_kinect_v2
from pic_ros_tools.recordings.annotations import CUSTOM_PREFIX, segment_annotations, TEXT_ARM
from pic_ros_tools.recordings.paper import Segment
from pic_ros_tools.recordings.rosbag import absolute_topic
from pic_ros_tools.recordings.rosbag_writer import BAG_VERSION
from pic_ros_tools.recordings.skeleton_bag_writer import (
    AZURE_KINECT_FRAME_ID,
    DEFAULT_TOPIC,
    write_skeleton_bag,
)
from pic_ros_tools.recordings.stamps import stamps_to_ns
from pic_ros_tools.synthetic import SyntheticRecording

FloatArray = npt.NDArray[np.float64]


def text_rounded(values: npt.ArrayLike) -> FloatArray:
    """
    Round values the way the Kinect v2 text files store them (6 decimals) and read them back.

    :param values: Any array; NaN stays NaN.
    :return: New float array, same shape: each value is ``float(f'{value:.6f}')``.
    """
    array = np.asarray(values, dtype=np.float64)
    rounded: FloatArray = np.char.mod('%.6f', array).astype(np.float64)
    return rounded


def write_synthetic_bag(
    recording: SyntheticRecording,
    out_dir: Path | str,
    *,
    storage: str = 'mcap',
    version: int = BAG_VERSION,
    compress: bool = True,
) -> Path:
    """
    Write a synthetic take as an Azure Kinect body-tracking bag (the shipped demo bag).

    The take is written as the Azure Kinect ROS driver would publish it: one MarkerArray per
    frame on ``/body_tracking_data``, 32 K4ABT joints of body 1 in the depth camera frame
    ``depth_camera_link`` (x right, y down, z forward;
    :func:`~pic_ros_tools.azure_joints.azure_joints_from_kinect_v2`), and an **empty** array for
    every frame of the tracking loss. Positions and stamps are first rounded like the text files
    (6 decimals, :func:`text_rounded`), so the bag holds exactly the data of
    ``write_kinect_v2_text``: decoded, it gives the same tracker-frame skeletons and the same
    ``evaluate`` metrics. Stamps are seconds since the start of the take (epoch 0).
    ``custom_data`` stores the segments (message ranges of each task), the task arms, the seed
    and ``pic_ros.synthetic: true``.

    :param recording: The take (:func:`pic_ros_tools.synthetic.generate_recording`).
    :param out_dir: Bag directory to create; it must not exist.
    :param storage: ``'mcap'`` or ``'sqlite3'``.
    :param version: Metadata version, 8 (Humble-readable) or 9.
    :param compress: Compress MCAP chunks with zstd.
    :return: The bag directory.
    :raises RecordingError: If the directory exists or cannot be written.
    """
    stamps = stamps_to_ns(text_rounded(recording.stamps))
    joints = np.array(text_rounded(recording.joints))
    joints[~np.asarray(recording.tracked)] = np.nan
    segments = tuple(
        Segment(index, start, stop, start + 1, stop)
        for index, (start, stop) in enumerate(recording.segments)
    )
    arms = tuple(TEXT_ARM[arm] for arm in recording.task_arms)
    custom = {
        CUSTOM_PREFIX + 'recording': recording.name,
        CUSTOM_PREFIX + 'source': AZURE_KINECT.name,
        CUSTOM_PREFIX + 'topic': absolute_topic(DEFAULT_TOPIC),
        CUSTOM_PREFIX + 'epoch_ns': '0',
        CUSTOM_PREFIX + 'synthetic': 'true',
        CUSTOM_PREFIX + 'seed': str(recording.seed),
        **segment_annotations(segments, arms),
    }
    return write_skeleton_bag(
        out_dir,
        stamps,
        azure_joints_from_kinect_v2(joints),
        frame_id=AZURE_KINECT_FRAME_ID,
        storage=storage,
        version=version,
        compress=compress,
        custom_data=custom,
    )


__all__ = ['text_rounded', 'write_synthetic_bag']
