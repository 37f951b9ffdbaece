"""
Skeleton bags: write skeletons as a rosbag2 of body-tracking MarkerArrays.

The bags hold ``visualization_msgs/msg/MarkerArray`` messages in the Azure Kinect ROS driver
encoding (``docs/interfaces.md#marker-arrays``): one array per body-tracking frame, one SPHERE
marker per joint with ``id = body_id * 100 + joint_index``, positions in metres in the camera
frame of the format, identity orientations, scale 0.05 m, lifetime 0.25 s; a frame without a
body is an **empty** array, as the driver publishes it. The messages are serialized with
``rosbags`` (``ts.serialize_cdr``, typestore ``ROS2_KILTED``; the MarkerArray layout and type hash
are the same from Humble to Kilted), never with ``rclpy.serialization.serialize_message``, whose
buffers carry uninitialised trailing bytes (``docs/interfaces.md#bags``).

The header stamp of every marker **and** the bag's receive time stamp of the message are both the
frame's capture time, so that the bag decodes to the stamps it was given
(:mod:`pic_ros_tools.recordings.stamps`). :mod:`pic_ros_tools.recordings.skeleton_bag_reader`
decodes these bags back into skeletons.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_choice, check_integer
from pic_ros.exceptions import ConfigError
from pic_ros.trackers.markers import MARKER_ID_STRIDE
from pic_ros_tools.recordings.rosbag import absolute_topic, default_typestore, MARKER_ARRAY
from pic_ros_tools.recordings.rosbag_writer import BAG_VERSION, STORAGES, write_messages
from pic_ros_tools.recordings.stamps import NS_PER_S

FloatArray = npt.NDArray[np.float64]

DEFAULT_TOPIC: Final = 'body_tracking_data'
"""Topic of written skeleton bags (stored absolute, ``/body_tracking_data``)."""

KINECT_V2_FRAME_ID: Final = 'kinect_v2_depth'
"""``frame_id`` of converted Kinect v2 recordings (camera space: x left, y up, z out)."""

AZURE_KINECT_FRAME_ID: Final = 'depth_camera_link'
"""``frame_id`` of the Azure Kinect driver's markers (x right, y down, z forward)."""

DEFAULT_BODY_ID: Final = 1
"""Body id of written skeletons (marker ids ``100 + joint``)."""

MARKER_SCALE: Final = 0.05
"""Sphere diameter of written markers [m] (as the Azure Kinect driver)."""

MARKER_LIFETIME_NS: Final = 250_000_000
"""Lifetime of written markers [ns] (0.25 s, as the Azure Kinect driver intends)."""

_SPHERE: Final = 2
_ADD: Final = 0
_PALETTE: Final = (
    (0.10, 0.60, 0.90),
    (0.95, 0.55, 0.10),
    (0.20, 0.75, 0.30),
    (0.85, 0.20, 0.25),
    (0.60, 0.40, 0.80),
    (0.55, 0.55, 0.55),
)


def _serializer(typestore: Any, frame_id: str, body_id: int) -> Any:
    """Return a function (stamp_ns, positions (J, 3) or None) -> MarkerArray CDR bytes."""
    types = typestore.types
    marker_class = types['visualization_msgs/msg/Marker']
    array_class = types[MARKER_ARRAY]
    header_class = types['std_msgs/msg/Header']
    time_class = types['builtin_interfaces/msg/Time']
    duration_class = types['builtin_interfaces/msg/Duration']
    pose_class = types['geometry_msgs/msg/Pose']
    point_class = types['geometry_msgs/msg/Point']
    quaternion_class = types['geometry_msgs/msg/Quaternion']
    vector_class = types['geometry_msgs/msg/Vector3']
    color_class = types['std_msgs/msg/ColorRGBA']
    image_class = types['sensor_msgs/msg/CompressedImage']
    mesh_class = types['visualization_msgs/msg/MeshFile']
    red, green, blue = _PALETTE[body_id % len(_PALETTE)]
    color = color_class(r=red, g=green, b=blue, a=1.0)
    scale = vector_class(x=MARKER_SCALE, y=MARKER_SCALE, z=MARKER_SCALE)
    lifetime = duration_class(sec=0, nanosec=MARKER_LIFETIME_NS)
    orientation = quaternion_class(x=0.0, y=0.0, z=0.0, w=1.0)
    empty_bytes = np.zeros(0, dtype=np.uint8)

    def serialize(stamp_ns: int, positions: FloatArray | None) -> bytes:
        markers = []
        if positions is not None:
            stamp = time_class(sec=stamp_ns // NS_PER_S, nanosec=stamp_ns % NS_PER_S)
            header = header_class(stamp=stamp, frame_id=frame_id)
            for joint, (x, y, z) in enumerate(positions.tolist()):
                markers.append(
                    marker_class(
                        header=header,
                        ns='',
                        id=body_id * MARKER_ID_STRIDE + joint,
                        type=_SPHERE,
                        action=_ADD,
                        pose=pose_class(position=point_class(x=x, y=y, z=z),
                                        orientation=orientation),
                        scale=scale,
                        color=color,
                        lifetime=lifetime,
                        frame_locked=False,
                        points=[],
                        colors=[],
                        texture_resource='',
                        texture=image_class(
                            header=header_class(stamp=time_class(sec=0, nanosec=0), frame_id=''),
                            format='',
                            data=empty_bytes,
                        ),
                        uv_coordinates=[],
                        text='',
                        mesh_resource='',
                        mesh_file=mesh_class(filename='', data=empty_bytes),
                        mesh_use_embedded_materials=False,
                    )
                )
        return bytes(typestore.serialize_cdr(array_class(markers=markers), MARKER_ARRAY))

    return serialize


def write_skeleton_bag(
    out_dir: Path | str,
    stamps_ns: npt.ArrayLike,
    joints: npt.ArrayLike,
    *,
    topic: str = DEFAULT_TOPIC,
    frame_id: str = AZURE_KINECT_FRAME_ID,
    body_id: int = DEFAULT_BODY_ID,
    storage: str = 'mcap',
    version: int = BAG_VERSION,
    compress: bool = True,
    custom_data: Mapping[str, str] | None = None,
) -> Path:
    """
    Write skeletons as a rosbag2 of MarkerArrays in the Azure Kinect driver encoding.

    One message per frame; a frame whose joints are not all finite (a lost body) becomes an
    empty array. Header stamps and receive time stamps are both ``stamps_ns``. The output is
    deterministic: the same inputs give the same bytes (with the same ``rosbags`` and zstd
    versions, whose names and output go into the file).

    :param out_dir: Bag directory to create; it must not exist. The storage file inside is
        named after it (``<out_dir>/<name>.mcap`` or ``.db3``).
    :param stamps_ns: Capture times, shape (T,), [ns], strictly increasing.
    :param joints: Joint positions, shape (T, J, 3), [m], in the camera frame of the format
        (J = 32 for Azure Kinect, 25 for Kinect v2), joint order of the format.
    :param topic: Topic name; stored absolute.
    :param frame_id: ``header.frame_id`` of every marker.
    :param body_id: Body id (marker ids ``body_id * 100 + joint``), 0..21474835.
    :param storage: ``'mcap'`` or ``'sqlite3'``.
    :param version: Metadata version, 8 (Humble-readable) or 9.
    :param compress: Compress MCAP chunks with zstd (ignored for sqlite3).
    :param custom_data: Extra ``custom_data`` entries of the metadata.
    :return: The bag directory.
    :raises ConfigError: On invalid arguments or shapes.
    :raises RecordingError: If the directory exists or cannot be written.
    """
    check_choice('storage', storage, STORAGES)
    check_choice('version', version, (8, 9))
    body = check_integer('body_id', body_id, 0, (2**31 - 1) // MARKER_ID_STRIDE - 1)
    name = absolute_topic(topic)
    stamps = np.asarray(stamps_ns)
    points = np.asarray(joints, dtype=np.float64)
    if stamps.ndim != 1 or stamps.dtype.kind not in 'iu':
        raise ConfigError(f'stamps_ns must be integers of shape (T,), got {stamps.dtype}')
    if points.ndim != 3 or points.shape[0] != stamps.shape[0] or points.shape[2] != 3:
        raise ConfigError(
            f'joints must have shape ({stamps.shape[0]}, J, 3) to match the stamps, got '
            f'{points.shape}'
        )
    if not 0 < points.shape[1] <= MARKER_ID_STRIDE:
        raise ConfigError(f'a body has 1 to {MARKER_ID_STRIDE} joints, got {points.shape[1]}')
    if stamps.size and (np.any(stamps < 0) or np.any(np.diff(stamps) <= 0)):
        raise ConfigError('stamps_ns must be >= 0 and strictly increasing')
    typestore = default_typestore()
    serialize = _serializer(typestore, frame_id, body)
    tracked = np.all(np.isfinite(points), axis=(1, 2))
    messages = (
        (int(stamp), serialize(int(stamp), points[index] if tracked[index] else None))
        for index, stamp in enumerate(stamps.tolist())
    )
    return write_messages(
        out_dir,
        name,
        MARKER_ARRAY,
        messages,
        typestore=typestore,
        storage=storage,
        version=version,
        compress=compress,
        custom_data=custom_data,
    )


__all__ = [
    'AZURE_KINECT_FRAME_ID',
    'DEFAULT_BODY_ID',
    'DEFAULT_TOPIC',
    'KINECT_V2_FRAME_ID',
    'MARKER_LIFETIME_NS',
    'MARKER_SCALE',
    'write_skeleton_bag',
]
