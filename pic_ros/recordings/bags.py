"""
rosbag2 recordings: read any bag, write skeleton bags, and decode them into skeletons.

Reading goes through ``rosbags`` (pure Python, no ROS install): MCAP bags (zstd- or
lz4-compressed chunks included) and sqlite3 bags, given as the bag directory (with its
``metadata.yaml``), as one of its storage files, or as a bare ``.mcap`` / ``.db3`` file. ROS 1
bags are refused with the ``rosbags-convert`` command that turns them into rosbag2.
Messages come out in time order of their recorded (receive) time stamps, as raw CDR bytes with
their recorded type (:func:`read_messages`).

Writing makes bags of ``visualization_msgs/msg/MarkerArray`` in the Azure Kinect ROS driver
encoding (``docs/ros_interfaces.md`` section 1.1): one array per body-tracking frame, one SPHERE
marker per joint with ``id = body_id * 100 + joint_index``, positions in metres in the camera
frame of the format, identity orientations, scale 0.05 m, lifetime 0.25 s; a frame without a
body is an **empty** array, as the driver publishes it. The messages are serialized with
``rosbags`` (``ts.serialize_cdr``, typestore ``ROS2_KILTED``; the MarkerArray layout and type hash
are the same from Humble to Kilted), never with ``rclpy.serialization.serialize_message``, whose
buffers carry uninitialised trailing bytes (``docs/environment.md`` section 5).

Time stamps of the bags this module writes: the header stamp of every marker **and** the bag's
receive time stamp of the message are both the frame's capture time, ``epoch_ns`` plus the
recording's own time rounded to the nanosecond. The text recordings count seconds from the start
of the take, so with the default ``epoch_ns = 0`` the bag starts near 1970-01-01 00:00:00 UTC:
no date is made up, ``ros2 bag play`` plays relative to the first message anyway, and stamps
decode to exactly the floats of the text file (``(sec * 10**9 + nanosec) / 1e9``), so
``evaluate`` gives bit-identical results on a converted bag and on its text recording. Nodes
that compare stamps with their wall clock need ``ros2 bag play --clock`` and ``use_sim_time``,
as for any old bag, or a non-zero ``epoch_ns``.

Metadata version: 8 by default, 9 on request. Humble (version 5) and Iron (version 8) readers have
no upper version check but read ``offered_qos_profiles`` as a YAML *string*, which version 9
turned into a list ("bad conversion", ros2/rosbag2#1520); they read only the keys they know, so
the newer ``type_description_hash``, ``ros_distro`` and ``custom_data`` are ignored by Humble.
Jazzy and Kilted read both. (Inferred from the rosbag2 metadata parsers; not run on a Humble
machine.) No QoS profile is recorded, so the string is empty and every player uses its default,
reliable and volatile, which matches the Azure Kinect driver. ``custom_data`` carries
``pic_ros.*`` keys: the recording name, the source format, and the demonstration segments and
task arms when known, so that a converted paper recording evaluates like its text files without
them.

Decoding (:func:`skeleton_frames_from_bag`) follows the skeleton node: marker ids and positions
are parsed straight from the CDR bytes (:mod:`pic_ros.trackers.marker_cdr`, with a regular
deserialization fallback for older Marker layouts), the format is detected from the joint
indices when asked (``auto``: any joint index >= 25 means Azure Kinect's 32 joints, otherwise
Kinect v2's 25), the tracked body is chosen by
:class:`~pic_ros.trackers.frames.BodySelector`, and empty arrays give no frame.
"""

from __future__ import annotations

import argparse
from collections.abc import Generator, Iterator, Mapping, Sequence
import contextlib
from dataclasses import dataclass
import math
from pathlib import Path
import shutil
import sqlite3
import struct
import sys
from types import MappingProxyType
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.checks import check_choice, check_integer
from pic_ros.exceptions import ConfigError, PicRosError, RecordingError
from pic_ros.human.skeleton import Side, SkeletonFrame
from pic_ros.recordings.demonstration import Demonstration
from pic_ros.recordings.kinect_v2_text import load_kinect_v2_recording
from pic_ros.recordings.paper import (
    load_paper_demonstration,
    load_segments,
    load_task_arms,
    Segment,
)
from pic_ros.tools.synthetic import SyntheticRecording
from pic_ros.trackers.frames import BodySelector
from pic_ros.trackers.kinect_v2 import KINECT_V2_JOINT_COUNT, KINECT_V2_JOINTS
from pic_ros.trackers.marker_cdr import MarkerCdrError, parse_marker_array
from pic_ros.trackers.markers import (
    AZURE_KINECT,
    AZURE_KINECT_JOINTS,
    decode_markers,
    KINECT_V2,
    MARKER_ID_STRIDE,
    tracker_format,
    TrackerFormat,
)
import yaml

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MARKER_ARRAY: Final = 'visualization_msgs/msg/MarkerArray'
"""The message type of body-tracking topics."""

DEFAULT_TOPIC: Final = 'body_tracking_data'
"""Topic of written skeleton bags (stored absolute, ``/body_tracking_data``)."""

KINECT_V2_FRAME_ID: Final = 'kinect_v2_depth'
"""``frame_id`` of converted Kinect v2 recordings (camera space: x left, y up, z out)."""

AZURE_KINECT_FRAME_ID: Final = 'depth_camera_link'
"""``frame_id`` of the Azure Kinect driver's markers (x right, y down, z forward)."""

DEFAULT_BODY_ID: Final = 1
"""Body id of written skeletons (marker ids ``100 + joint``)."""

BAG_VERSION: Final = 8
"""Metadata version of written bags (see the module docstring)."""

STORAGES: Final = ('mcap', 'sqlite3')
"""Storage plugins that :func:`write_skeleton_bag` can write."""

SOURCES: Final = ('auto', 'azure_kinect', 'kinect_v2')
"""Marker formats :func:`skeleton_frames_from_bag` accepts (``auto`` detects)."""

CUSTOM_PREFIX: Final = 'pic_ros.'
"""Prefix of the ``custom_data`` keys written by this module."""

MARKER_SCALE: Final = 0.05
"""Sphere diameter of written markers [m] (as the Azure Kinect driver)."""

MARKER_LIFETIME_NS: Final = 250_000_000
"""Lifetime of written markers [ns] (0.25 s, as the Azure Kinect driver intends)."""

_TYPESTORE_NAME: Final = 'ROS2_KILTED'
_BAG_SUFFIXES: Final = ('.mcap', '.db3')
_SPHERE: Final = 2
_ADD: Final = 0
_NS_PER_S: Final = 1_000_000_000
_PALETTE: Final = (
    (0.10, 0.60, 0.90),
    (0.95, 0.55, 0.10),
    (0.20, 0.75, 0.30),
    (0.85, 0.20, 0.25),
    (0.60, 0.40, 0.80),
    (0.55, 0.55, 0.55),
)
_ARM_TEXT: Final = {
    frozenset({Side.RIGHT}): 'right',
    frozenset({Side.LEFT}): 'left',
    frozenset({Side.LEFT, Side.RIGHT}): 'both',
}
_TEXT_ARM: Final = {text: arms for arms, text in _ARM_TEXT.items()}


# --- Reading -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BagTopic:
    """
    One topic of a bag.

    :param name: Topic name as recorded (absolute, e.g. ``/kinect2/body_tracking_data``).
    :param msgtype: ROS 2 type, e.g. ``visualization_msgs/msg/MarkerArray``.
    :param count: Number of messages.
    :param reliability: ``'reliable'`` or ``'best_effort'`` when every recorded publisher
        offered it, else None (unknown, mixed or not recorded).
    :param durability: ``'transient_local'`` or ``'volatile'`` likewise, else None.
    """

    name: str
    msgtype: str
    count: int
    reliability: str | None = None
    durability: str | None = None


@dataclass(frozen=True)
class BagInfo:
    """
    What a bag holds.

    :param path: The path read (a bag directory or a bare storage file).
    :param storage: ``'mcap'`` or ``'sqlite3'``.
    :param version: Metadata version, or None for a bare storage file.
    :param start_ns: Receive time stamp of the first message [ns] (0 for an empty bag).
    :param end_ns: Receive time stamp of the last message [ns] (0 for an empty bag).
    :param message_count: Number of messages.
    :param topics: The topics, sorted by name.
    :param custom_data: ``custom_data`` of the metadata (read-only; empty if none).
    """

    path: Path
    storage: str
    version: int | None
    start_ns: int
    end_ns: int
    message_count: int
    topics: tuple[BagTopic, ...]
    custom_data: Mapping[str, str]

    @property
    def duration(self) -> float:
        """Return the time from the first to the last message [s]."""
        return (self.end_ns - self.start_ns) / 1e9

    def topic(self, name: str) -> BagTopic:
        """
        Find a topic by name, with or without the leading slash.

        :param name: Topic name.
        :return: The topic.
        :raises RecordingError: If the bag has no such topic (the message lists them).
        """
        wanted = absolute_topic(name)
        for topic in self.topics:
            if topic.name == wanted:
                return topic
        raise RecordingError(
            f'{self.path}: no topic {wanted}; the bag has '
            f'{", ".join(t.name for t in self.topics) or "no topics"}'
        )


class BagMessage(NamedTuple):
    """
    One recorded message.

    :param topic: Topic name as recorded.
    :param msgtype: ROS 2 type.
    :param timestamp_ns: Recorded (receive) time stamp [ns].
    :param data: The CDR bytes as recorded (with the 4-byte encapsulation header).
    """

    topic: str
    msgtype: str
    timestamp_ns: int
    data: bytes


def absolute_topic(name: str) -> str:
    """
    Return a topic name with a leading slash, as rosbag2 records names.

    :param name: Topic name, relative or absolute.
    :return: The absolute name.
    :raises ConfigError: If the name is empty.
    """
    text = str(name).strip()
    if not text.strip('/'):
        raise ConfigError(f'a topic name cannot be empty, got {name!r}')
    return text if text.startswith('/') else '/' + text


def is_bag_path(path: Path | str) -> bool:
    """
    Tell whether a path looks like a rosbag2 (without opening it).

    :param path: A path.
    :return: True for a directory holding ``metadata.yaml`` and for an existing ``.mcap`` or
        ``.db3`` file.
    """
    candidate = Path(path)
    if candidate.is_dir():
        return (candidate / 'metadata.yaml').is_file()
    return candidate.is_file() and candidate.suffix in _BAG_SUFFIXES


def _metadata(directory: Path) -> dict[str, Any]:
    """Read ``metadata.yaml`` of a bag directory (the ``rosbag2_bagfile_information`` map)."""
    path = directory / 'metadata.yaml'
    try:
        content = yaml.safe_load(path.read_text(encoding='utf-8'))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        raise RecordingError(
            f'{directory}: cannot read the bag metadata {path}: {error}'
        ) from None
    information = content.get('rosbag2_bagfile_information') if isinstance(content, dict) else None
    if not isinstance(information, dict):
        raise RecordingError(
            f'{directory}: {path} is not rosbag2 metadata (no rosbag2_bagfile_information map)'
        )
    return information


def resolve_bag_path(path: Path | str) -> Path:
    """
    Return the path to hand to the bag reader.

    A bag directory is read whole. A storage file inside a bag directory whose metadata lists
    it is read through that directory (the metadata holds the recorded QoS profiles). Any other
    ``.mcap`` or ``.db3`` file is read bare.

    :param path: A bag directory, its ``metadata.yaml``, one of its storage files, or a bare
        ``.mcap`` / ``.db3`` file.
    :return: The directory or file to read.
    :raises RecordingError: If the path does not exist, is a directory without
        ``metadata.yaml``, a ROS 1 bag, or a file of another kind.
    """
    candidate = Path(path)
    if not candidate.exists():
        raise RecordingError(f'bag not found: {candidate}')
    if candidate.is_dir():
        if not (candidate / 'metadata.yaml').is_file():
            raise RecordingError(
                f'{candidate} is not a rosbag2 directory: it has no metadata.yaml (pass the '
                '.mcap or .db3 file itself to read it bare, or rebuild the metadata with '
                '"ros2 bag reindex")'
            )
        return candidate
    if candidate.name == 'metadata.yaml':
        return candidate.parent
    if candidate.suffix == '.bag':
        raise RecordingError(
            f'{candidate} is a ROS 1 bag; convert it to rosbag2 first, e.g. '
            f'"rosbags-convert --src {candidate} --dst <out> --dst-storage mcap '
            '--dst-typestore ros2_humble"'
        )
    if candidate.suffix not in _BAG_SUFFIXES:
        raise RecordingError(
            f'{candidate} is not a rosbag2: expected a bag directory or a .mcap or .db3 file'
        )
    metadata_path = candidate.parent / 'metadata.yaml'
    if metadata_path.is_file():
        with contextlib.suppress(RecordingError):
            files = _metadata(candidate.parent).get('relative_file_paths') or []
            if candidate.name in [Path(str(name)).name for name in files]:
                return candidate.parent
    return candidate


def _typestore() -> Any:
    from rosbags.typesys import get_typestore, Stores

    return get_typestore(getattr(Stores, _TYPESTORE_NAME))


def _reader_errors() -> tuple[type[BaseException], ...]:
    """Return the exceptions a damaged or unsupported bag raises while being read."""
    from rosbags.highlevel import AnyReaderError
    from rosbags.rosbag2 import ReaderError
    from rosbags.serde import SerdeError

    return (
        AnyReaderError, ReaderError, SerdeError, OSError, EOFError, KeyError, IndexError,
        ValueError, TypeError, struct.error, sqlite3.Error,
    )


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[Any]:
    """Open a resolved bag path with ``AnyReader``, turning reader errors into RecordingError."""
    from rosbags.highlevel import AnyReader

    errors = _reader_errors()
    try:
        reader = AnyReader([path], default_typestore=_typestore())
        reader.open()
    except errors as error:
        raise RecordingError(f'cannot read the bag {path}: {error}') from None
    try:
        yield reader
    except PicRosError:
        raise
    except errors as error:
        raise RecordingError(f'cannot read the bag {path}: {error}') from None
    finally:
        with contextlib.suppress(*errors):
            reader.close()


def _unanimous(values: Sequence[str], allowed: tuple[str, ...]) -> str | None:
    if values and all(value == values[0] for value in values) and values[0] in allowed:
        return values[0]
    return None


def _topics(reader: Any) -> tuple[BagTopic, ...]:
    grouped: dict[str, list[Any]] = {}
    for connection in reader.connections:
        grouped.setdefault(connection.topic, []).append(connection)
    topics = []
    for name in sorted(grouped):
        connections = grouped[name]
        types = sorted({connection.msgtype for connection in connections})
        profiles = [
            profile
            for connection in connections
            for profile in getattr(connection.ext, 'offered_qos_profiles', None) or ()
        ]
        reliability = [profile.reliability.name.lower() for profile in profiles]
        durability = [profile.durability.name.lower() for profile in profiles]
        topics.append(
            BagTopic(
                name=name,
                msgtype=types[0] if len(types) == 1 else '|'.join(types),
                count=sum(int(connection.msgcount) for connection in connections),
                reliability=_unanimous(reliability, ('reliable', 'best_effort')),
                durability=_unanimous(durability, ('transient_local', 'volatile')),
            )
        )
    return tuple(topics)


def bag_info(path: Path | str) -> BagInfo:
    """
    Describe a bag: storage, time span, topics with types, counts and offered QoS.

    :param path: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :return: The description.
    :raises RecordingError: If the bag cannot be found or read (the message says why).
    """
    resolved = resolve_bag_path(path)
    version: int | None = None
    custom: dict[str, str] = {}
    storage = 'mcap' if resolved.suffix == '.mcap' else 'sqlite3'
    if resolved.is_dir():
        metadata = _metadata(resolved)
        raw_version = metadata.get('version')
        version = raw_version if isinstance(raw_version, int) else None
        storage = str(metadata.get('storage_identifier', ''))
        data = metadata.get('custom_data')
        if isinstance(data, dict):
            custom = {str(key): str(value) for key, value in data.items()}
    with _reading(resolved) as reader:
        if not reader.is2:
            raise RecordingError(f'{resolved} is not a rosbag2')
        count = int(reader.message_count)
        return BagInfo(
            path=resolved,
            storage=storage,
            version=version,
            start_ns=int(reader.start_time) if count else 0,
            end_ns=int(reader.end_time) - 1 if count else 0,
            message_count=count,
            topics=_topics(reader),
            custom_data=MappingProxyType(custom),
        )


def format_bag_info(info: BagInfo) -> str:
    """
    Render a bag description as text, like ``ros2 bag info``.

    :param info: The description.
    :return: Several lines, without a trailing newline.
    """
    version = 'bare file' if info.version is None else f'metadata version {info.version}'
    lines = [
        f'bag:       {info.path}',
        f'storage:   {info.storage} ({version})',
        f'duration:  {info.duration:.3f} s',
        f'start:     {info.start_ns // _NS_PER_S}.{info.start_ns % _NS_PER_S:09d} s since 1970',
        f'messages:  {info.message_count}',
        'topics:',
    ]
    width = max((len(topic.name) for topic in info.topics), default=0)
    for topic in info.topics:
        qos = ', '.join(value for value in (topic.reliability, topic.durability) if value)
        lines.append(
            f'  {topic.name:<{width}}  {topic.msgtype}  {topic.count} msgs'
            + (f'  ({qos})' if qos else '')
        )
    for key in sorted(info.custom_data):
        if key.startswith(CUSTOM_PREFIX) and '\n' not in info.custom_data[key]:
            lines.append(f'{key}: {info.custom_data[key]}')
    return '\n'.join(lines)


def read_messages(
    path: Path | str,
    topics: Sequence[str] | None = None,
    start_ns: int | None = None,
    stop_ns: int | None = None,
) -> Generator[BagMessage, None, None]:
    """
    Yield the messages of a bag in time order, as raw CDR bytes with their recorded type.

    The bag is opened when iteration starts and closed when it ends (or the iterator is
    closed).

    :param path: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :param topics: Topic names to keep (with or without the leading slash); None keeps all.
    :param start_ns: Keep messages recorded at or after this time [ns].
    :param stop_ns: Keep messages recorded before this time [ns].
    :return: Generator of the messages, ordered by recorded time stamp (close it to release
        the bag early).
    :raises RecordingError: If the bag cannot be read or a topic is not in it.
    """
    resolved = resolve_bag_path(path)
    with _reading(resolved) as reader:
        if not reader.is2:
            raise RecordingError(f'{resolved} is not a rosbag2')
        connections = list(reader.connections)
        if topics is not None:
            wanted = {absolute_topic(name) for name in topics}
            present = {connection.topic for connection in connections}
            missing = sorted(wanted - present)
            if missing:
                raise RecordingError(
                    f'{resolved}: no topic {", ".join(missing)}; the bag has '
                    f'{", ".join(sorted(present)) or "no topics"}'
                )
            connections = [c for c in connections if c.topic in wanted]
        if not connections:
            return
        for connection, timestamp, data in reader.messages(
            connections=connections, start=start_ns, stop=stop_ns
        ):
            yield BagMessage(connection.topic, connection.msgtype, int(timestamp), bytes(data))


# --- Writing -------------------------------------------------------------------------------------


def kinect_v2_to_azure_camera(points: npt.ArrayLike) -> FloatArray:
    """
    Convert points from Kinect v2 camera space to the Azure Kinect depth camera axes.

    Kinect v2: x to the sensor's left, y up, z out of the sensor. Azure Kinect: x right, y down,
    z forward. So ``(x, y, z)_azure = (-x, -y, z)_v2``, a rotation by 180 degrees about the
    optical axis (same origin and unit). Both frames map to the same ``'tracker'`` axes.

    :param points: Points, shape (..., 3), any unit, Kinect v2 camera space.
    :return: New array, shape (..., 3), same unit, Azure Kinect depth camera frame.
    """
    array = np.array(points, dtype=np.float64)
    array[..., 0] = -array[..., 0]
    array[..., 1] = -array[..., 1]
    return array


_V2: Final = {name: index for index, name in enumerate(KINECT_V2_JOINTS)}
_K4: Final = {name: index for index, name in enumerate(AZURE_KINECT_JOINTS)}
_AZURE_FROM_V2: Final = {
    'PELVIS': 'SpineBase',
    'SPINE_NAVEL': 'SpineMid',
    'SPINE_CHEST': 'SpineShoulder',
    'NECK': 'Neck',
    'HEAD': 'Head',
    'SHOULDER_LEFT': 'ShoulderLeft',
    'ELBOW_LEFT': 'ElbowLeft',
    'WRIST_LEFT': 'WristLeft',
    'HAND_LEFT': 'HandLeft',
    'HANDTIP_LEFT': 'HandTipLeft',
    'THUMB_LEFT': 'ThumbLeft',
    'SHOULDER_RIGHT': 'ShoulderRight',
    'ELBOW_RIGHT': 'ElbowRight',
    'WRIST_RIGHT': 'WristRight',
    'HAND_RIGHT': 'HandRight',
    'HANDTIP_RIGHT': 'HandTipRight',
    'THUMB_RIGHT': 'ThumbRight',
    'HIP_LEFT': 'HipLeft',
    'KNEE_LEFT': 'KneeLeft',
    'ANKLE_LEFT': 'AnkleLeft',
    'FOOT_LEFT': 'FootLeft',
    'HIP_RIGHT': 'HipRight',
    'KNEE_RIGHT': 'KneeRight',
    'ANKLE_RIGHT': 'AnkleRight',
    'FOOT_RIGHT': 'FootRight',
}
# Face joints relative to HEAD: (forward, left, up) offsets [m] in the person's head axes.
_FACE: Final = {
    'NOSE': (0.10, 0.0, -0.02),
    'EYE_LEFT': (0.08, 0.032, 0.03),
    'EAR_LEFT': (0.0, 0.075, 0.0),
    'EYE_RIGHT': (0.08, -0.032, 0.03),
    'EAR_RIGHT': (0.0, -0.075, 0.0),
}
_CLAVICLE_FRACTION: Final = 0.3


def _unit_rows(vectors: FloatArray) -> FloatArray:
    with np.errstate(invalid='ignore', divide='ignore'):
        unit: FloatArray = vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)
    return unit


def azure_joints_from_kinect_v2(joints: npt.ArrayLike) -> FloatArray:
    """
    Make the 32 Azure Kinect (K4ABT) joints of bodies given as 25 Kinect v2 joints.

    The 25 joints that both trackers have are copied by name (the person's left stays the
    person's left; the K4ABT ``SPINE_CHEST`` takes the Kinect v2 ``SpineShoulder``, as both map
    to :attr:`~pic_ros.human.skeleton.HumanJoint.SPINE_CHEST`) and their axes converted by
    :func:`kinect_v2_to_azure_camera`. The seven joints Kinect v2 lacks are synthesized, for
    display only (the pipeline does not read them): each clavicle 30 % of the way from
    ``SPINE_CHEST`` to the shoulder, and nose, eyes and ears at fixed offsets from ``HEAD`` in
    the person's axes (left = left shoulder - right shoulder, up = neck - spine navel, forward =
    left x up). Rows with a non-finite value stay non-finite (a lost body).

    :param joints: Joint positions, shape (..., 25, 3), [m], Kinect v2 camera space, Kinect v2
        joint order.
    :return: New array, shape (..., 32, 3), [m], Azure Kinect depth camera frame (x right,
        y down, z forward), K4ABT joint order.
    :raises ConfigError: If the shape is not (..., 25, 3).
    """
    source = np.asarray(joints, dtype=np.float64)
    if source.ndim < 2 or source.shape[-2:] != (KINECT_V2_JOINT_COUNT, 3):
        raise ConfigError(
            f'Kinect v2 joints must have shape (..., {KINECT_V2_JOINT_COUNT}, 3), got '
            f'{source.shape}'
        )
    camera = kinect_v2_to_azure_camera(source)
    result = np.full(camera.shape[:-2] + (AZURE_KINECT.joint_count, 3), np.nan)
    for azure, v2 in _AZURE_FROM_V2.items():
        result[..., _K4[azure], :] = camera[..., _V2[v2], :]
    chest = result[..., _K4['SPINE_CHEST'], :]
    for side in ('LEFT', 'RIGHT'):
        shoulder = result[..., _K4[f'SHOULDER_{side}'], :]
        result[..., _K4[f'CLAVICLE_{side}'], :] = chest + _CLAVICLE_FRACTION * (shoulder - chest)
    left = _unit_rows(result[..., _K4['SHOULDER_LEFT'], :] - result[..., _K4['SHOULDER_RIGHT'], :])
    up = _unit_rows(result[..., _K4['NECK'], :] - result[..., _K4['SPINE_NAVEL'], :])
    forward = _unit_rows(np.cross(left, up))
    up = np.cross(forward, left)
    head = result[..., _K4['HEAD'], :]
    for name, (ahead, aside, above) in _FACE.items():
        result[..., _K4[name], :] = head + ahead * forward + aside * left + above * up
    return result


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
            stamp = time_class(sec=stamp_ns // _NS_PER_S, nanosec=stamp_ns % _NS_PER_S)
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


def stamps_to_ns(stamps: npt.ArrayLike, epoch_ns: int = 0) -> IntArray:
    """
    Convert recording stamps [s] to bag time stamps [ns].

    :param stamps: Stamps, shape (T,), [s], finite, non-negative.
    :param epoch_ns: Added to every stamp [ns], >= 0.
    :return: ``epoch_ns + round(stamps * 1e9)``, shape (T,), int64.
    :raises ConfigError: If a stamp is negative or not finite, or ``epoch_ns`` is negative.
    """
    values = np.asarray(stamps, dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any(values < 0.0):
        raise ConfigError('stamps must be finite and >= 0 s')
    base = check_integer('epoch_ns', epoch_ns, 0, 2**62)
    converted: IntArray = base + np.rint(values * 1e9).astype(np.int64)
    return converted


def stamp_from_ns(stamp_ns: int) -> float:
    """
    Convert a time stamp [ns] to seconds, exactly rounded.

    ``(sec * 10**9 + nanosec) / 1e9`` is the double nearest to the decimal number of seconds, so
    a stamp written from a text file with up to 9 decimals reads back as the same float.

    :param stamp_ns: Time stamp [ns].
    :return: Seconds [s].
    """
    return int(stamp_ns) / 1e9


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
    from rosbags.rosbag2 import (
        CompressionFormat,
        CompressionMode,
        StoragePlugin,
        Writer,
        WriterError,
    )

    out = Path(out_dir)
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
    if out.exists():
        raise RecordingError(f'{out} exists already; a bag is never overwritten')
    typestore = _typestore()
    serialize = _serializer(typestore, frame_id, body)
    tracked = np.all(np.isfinite(points), axis=(1, 2))
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    opened = done = False
    try:
        writer = Writer(out, version=8 if version == 8 else 9, storage_plugin=plugin)
        if compress and storage == 'mcap':
            writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        for key, value in sorted((custom_data or {}).items()):
            writer.set_custom_data(str(key), str(value))
        with writer:
            opened = True
            connection = writer.add_connection(name, MARKER_ARRAY, typestore=typestore)
            for index, stamp in enumerate(stamps.tolist()):
                data = serialize(int(stamp), points[index] if tracked[index] else None)
                writer.write(connection, int(stamp), data)
        done = True
    except (WriterError, OSError) as error:
        raise RecordingError(f'cannot write the bag {out}: {error}') from error
    finally:
        if opened and not done:
            shutil.rmtree(out, ignore_errors=True)
    return out


def _segments_text(segments: Sequence[Segment]) -> str:
    return '\n'.join(
        f'{s.start} {s.stop} {s.first_line} {s.last_line}' for s in segments
    )


def _annotations(
    segments: Sequence[Segment], task_arms: Sequence[frozenset[Side]] | None
) -> dict[str, str]:
    data = {CUSTOM_PREFIX + 'segments': _segments_text(segments)}
    if task_arms is not None:
        data[CUSTOM_PREFIX + 'task_arms'] = ','.join(_ARM_TEXT[arms] for arms in task_arms)
    return data


def convert_kinect_v2_text(
    skeleton_path: Path | str,
    out_dir: Path | str,
    *,
    stamps_path: Path | str | None = None,
    segments_path: Path | str | None = None,
    config_path: Path | str | None = None,
    topic: str = DEFAULT_TOPIC,
    storage: str = 'mcap',
    frame_id: str = KINECT_V2_FRAME_ID,
    body_id: int = DEFAULT_BODY_ID,
    epoch_ns: int = 0,
    version: int = BAG_VERSION,
    compress: bool = True,
) -> Path:
    """
    Convert a Kinect v2 text recording (the PIC paper's format) into a rosbag2.

    Every skeleton line becomes one MarkerArray in the Kinect v2 encoding: 25 SPHERE markers,
    ``id = body_id * 100 + joint`` (Kinect v2 joint order), positions in metres in Kinect v2
    camera space (x to the sensor's left, y up, z out), ``frame_id`` as given. Header stamps and
    receive stamps are ``epoch_ns`` + the recording's stamps (seconds since the start of the
    take; see the module docstring). So message *k* (1-based) on the topic is skeleton line *k*,
    and the paper's segment files apply to the bag unchanged.

    Segments and task arms are stored in the metadata's ``custom_data`` when known: from the
    given files, else (when the sibling time stamps are used) from the paper layout around the
    skeleton file (``<task>_<n>.txt`` with ``paper_configs/baxter_config_<task><n>.json`` or
    ``<task><n>_config.json``), as :func:`~pic_ros.recordings.paper.load_paper_demonstration`
    finds them.

    :param skeleton_path: ``<task><n>_skel.txt``.
    :param out_dir: Bag directory to create; it must not exist.
    :param stamps_path: Time-stamp file; default the sibling ``_skelts.txt`` (or 30 Hz).
    :param segments_path: Segment file to store; default: the paper layout's, if any.
    :param config_path: Paper config whose ``arm`` field gives the task arms; default: the
        paper layout's, if any.
    :param topic: Topic name; stored absolute.
    :param storage: ``'mcap'`` or ``'sqlite3'``.
    :param frame_id: ``header.frame_id`` of the markers.
    :param body_id: Body id of the markers.
    :param epoch_ns: Added to every stamp [ns], >= 0.
    :param version: Metadata version, 8 (Humble-readable) or 9.
    :param compress: Compress MCAP chunks with zstd.
    :return: The bag directory.
    :raises RecordingError: If a file is missing or malformed, or the output exists.
    :raises ConfigError: On invalid options.
    """
    skeleton = Path(skeleton_path)
    recording = load_kinect_v2_recording(skeleton, stamps_path)
    custom = {
        CUSTOM_PREFIX + 'recording': recording.name,
        CUSTOM_PREFIX + 'source': KINECT_V2.name,
        CUSTOM_PREFIX + 'topic': absolute_topic(topic),
        CUSTOM_PREFIX + 'epoch_ns': str(epoch_ns),
    }
    segments: tuple[Segment, ...] | None = None
    task_arms: tuple[frozenset[Side], ...] | None = None
    if stamps_path is None:
        with contextlib.suppress(RecordingError):
            paper = load_paper_demonstration(skeleton.parent, recording.name)
            segments, task_arms = paper.segments, paper.task_arms
    if segments_path is not None:
        segments = load_segments(segments_path, frame_count=len(recording))
    if config_path is not None:
        task_arms = load_task_arms(config_path)
    if task_arms is not None and segments is not None and len(task_arms) != len(segments):
        raise RecordingError(
            f'{skeleton}: {len(segments)} segments but {len(task_arms)} task-arm entries '
            f'(config {config_path or "of the paper layout"})'
        )
    if segments is not None:
        custom.update(_annotations(segments, task_arms))
    return write_skeleton_bag(
        out_dir,
        stamps_to_ns(recording.stamps, epoch_ns),
        recording.joints,
        topic=topic,
        frame_id=frame_id,
        body_id=body_id,
        storage=storage,
        version=version,
        compress=compress,
        custom_data=custom,
    )


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
    ``depth_camera_link`` (x right, y down, z forward; :func:`azure_joints_from_kinect_v2`), and
    an **empty** array for every frame of the tracking loss. Positions and stamps are first
    rounded like the text files (6 decimals, :func:`text_rounded`), so the bag holds exactly
    the data of ``write_kinect_v2_text``: decoded, it gives the same tracker-frame skeletons and
    the same ``evaluate`` metrics. Stamps are seconds since the start of the take (epoch 0).
    ``custom_data`` stores the segments (message ranges of each task), the task arms, the seed
    and ``pic_ros.synthetic: true``.

    :param recording: The take (:func:`pic_ros.tools.synthetic.generate_recording`).
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
    arms = tuple(_TEXT_ARM[arm] for arm in recording.task_arms)
    custom = {
        CUSTOM_PREFIX + 'recording': recording.name,
        CUSTOM_PREFIX + 'source': AZURE_KINECT.name,
        CUSTOM_PREFIX + 'topic': absolute_topic(DEFAULT_TOPIC),
        CUSTOM_PREFIX + 'epoch_ns': '0',
        CUSTOM_PREFIX + 'synthetic': 'true',
        CUSTOM_PREFIX + 'seed': str(recording.seed),
        **_annotations(segments, arms),
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


# --- Decoding skeletons --------------------------------------------------------------------------


class _Markers(NamedTuple):
    stamp: float
    ids: IntArray
    positions: FloatArray


def _first_stamp_ns(data: bytes) -> int:
    """Read the first marker's header stamp [ns] of a non-empty MarkerArray's CDR bytes."""
    prefix = '<' if data[1:2] in (b'\x01', b'\x03') else '>'
    seconds, nanoseconds = struct.unpack_from(prefix + 'iI', data, 8)
    return int(seconds) * _NS_PER_S + int(nanoseconds)


def _parse(reader: Any, connection: Any, data: bytes) -> _Markers:
    try:
        parsed = parse_marker_array(data)
        stamp = stamp_from_ns(_first_stamp_ns(data)) if parsed.ids.size else math.nan
        return _Markers(stamp, parsed.ids, parsed.positions)
    except (MarkerCdrError, struct.error):
        message = reader.deserialize(data, connection.msgtype)
    markers = list(message.markers)
    ids = np.array([marker.id for marker in markers], dtype=np.int64)
    positions = np.array(
        [[m.pose.position.x, m.pose.position.y, m.pose.position.z] for m in markers],
        dtype=np.float64,
    ).reshape(-1, 3)
    stamp = math.nan
    if markers:
        header = markers[0].header.stamp
        stamp = stamp_from_ns(int(header.sec) * _NS_PER_S + int(header.nanosec))
    return _Markers(stamp, ids, positions)


def _marker_topic(resolved: Path, connections: Sequence[Any], topic: str | None) -> str:
    """Choose the MarkerArray topic to decode."""
    arrays = sorted({c.topic for c in connections if c.msgtype == MARKER_ARRAY})
    if topic is not None:
        wanted = absolute_topic(topic)
        types = {c.msgtype for c in connections if c.topic == wanted}
        if not types:
            raise RecordingError(
                f'{resolved}: no topic {wanted}; its MarkerArray topics are '
                f'{", ".join(arrays) or "none"}'
            )
        if types != {MARKER_ARRAY}:
            raise RecordingError(f'{resolved}: {wanted} is {", ".join(sorted(types))}, not '
                                 f'{MARKER_ARRAY}')
        return wanted
    if len(arrays) == 1:
        return arrays[0]
    tracking = [name for name in arrays if name.endswith('body_tracking_data')]
    if len(tracking) == 1:
        return tracking[0]
    if not arrays:
        raise RecordingError(f'{resolved}: the bag has no {MARKER_ARRAY} topic')
    raise RecordingError(
        f'{resolved}: several MarkerArray topics ({", ".join(arrays)}); choose one'
    )


@dataclass(frozen=True)
class _Decoded:
    topic: str
    tracker: TrackerFormat | None
    frames: tuple[SkeletonFrame, ...]
    frames_before: IntArray  # (messages + 1,): frames decoded from the messages before each


def _detect(messages: Sequence[_Markers]) -> TrackerFormat | None:
    top = -1
    for message in messages:
        usable = message.ids[message.ids >= 0]
        if usable.size:
            top = max(top, int(np.max(usable % MARKER_ID_STRIDE)))
    if top < 0:
        return None
    return AZURE_KINECT if top >= KINECT_V2.joint_count else KINECT_V2


def _decode(path: Path | str, topic: str | None, source: str) -> _Decoded:
    check_choice('source', source, SOURCES)
    resolved = resolve_bag_path(path)
    messages: list[_Markers] = []
    with _reading(resolved) as reader:
        if not reader.is2:
            raise RecordingError(f'{resolved} is not a rosbag2')
        name = _marker_topic(resolved, reader.connections, topic)
        connections = [c for c in reader.connections if c.topic == name]
        for connection, _, data in reader.messages(connections=connections):
            messages.append(_parse(reader, connection, bytes(data)))
    detected = _detect(messages)
    if source == 'auto':
        tracker = detected
    else:
        tracker = tracker_format(source)
        if tracker is KINECT_V2 and detected is AZURE_KINECT:
            raise ConfigError(
                f'{resolved}: {name} has joint indices beyond the 25 of kinect_v2; its markers '
                'are azure_kinect'
            )
    frames: list[SkeletonFrame] = []
    frames_before = np.zeros(len(messages) + 1, dtype=np.int64)
    selector = BodySelector()
    for index, message in enumerate(messages):
        if tracker is not None and message.ids.size:
            chosen = selector.select(
                decode_markers(tracker, message.ids, message.positions, message.stamp)
            )
            if isinstance(chosen, SkeletonFrame):
                frames.append(chosen)
        frames_before[index + 1] = len(frames)
    return _Decoded(name, tracker, tuple(frames), frames_before)


def skeleton_frames_from_bag(
    bag: Path | str, topic: str | None = None, source: str = 'auto'
) -> tuple[SkeletonFrame, ...]:
    """
    Decode the tracked person's skeletons from a bag of body-tracking MarkerArrays.

    :param bag: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :param topic: The MarkerArray topic; default: the bag's only MarkerArray topic, or its only
        one ending in ``body_tracking_data``.
    :param source: ``'auto'`` (detect from the joint indices), ``'azure_kinect'`` or
        ``'kinect_v2'``.
    :return: One frame per message that holds the tracked body, in time order: 12
        :class:`~pic_ros.human.skeleton.HumanJoint` rows, [m], ``'tracker'`` frame, stamp = the
        markers' header stamp [s]. Empty arrays and arrays without the tracked body give none.
    :raises RecordingError: If the bag cannot be read or has no suitable topic.
    :raises ConfigError: If ``source`` is unknown or contradicts the markers.
    """
    return _decode(bag, topic, source).frames


def _embedded_segments(text: str, where: Path) -> tuple[Segment, ...]:
    segments = []
    for index, line in enumerate(text.splitlines()):
        try:
            start, stop, first, last = (int(token) for token in line.split())
            segments.append(Segment(index, start, stop, first, last))
        except ValueError:
            raise RecordingError(
                f'{where}: custom_data {CUSTOM_PREFIX}segments line {index + 1} must be '
                f'"start stop first last", got {line!r}'
            ) from None
    return tuple(segments)


def _embedded_arms(text: str, where: Path) -> tuple[frozenset[Side], ...]:
    arms = []
    for item in text.split(','):
        if item.strip() not in _TEXT_ARM:
            raise RecordingError(
                f'{where}: custom_data {CUSTOM_PREFIX}task_arms must list right, left or both, '
                f'got {item!r}'
            )
        arms.append(_TEXT_ARM[item.strip()])
    return tuple(arms)


def _bag_name(resolved: Path) -> str:
    return resolved.name if resolved.is_dir() else resolved.stem


def demonstration_from_bag(
    path: Path | str,
    topic: str | None = None,
    *,
    segments: Path | str | None = None,
    task_arms: Path | str | None = None,
    source: str = 'auto',
    name: str | None = None,
) -> Demonstration:
    """
    Load a bag of body-tracking MarkerArrays as a recording to evaluate.

    Segments, in this order: the given segment file (the paper's format: ``first last`` per
    line, 1-based inclusive **message numbers on the topic**, single-cursor semantics of
    :func:`~pic_ros.recordings.paper.load_segments`; for a bag converted from a paper recording
    these are its skeleton line numbers); else the segments stored in the bag's ``custom_data``
    by :func:`convert_kinect_v2_text` or the demo script (when the topic is the one they were
    written for); else one segment over the whole bag. Message ranges become frame ranges by
    leaving out the messages that gave no frame (empty arrays). Task arms: the given paper config
    (``arm`` field), else those stored in the bag, else both arms for every segment.

    :param path: A bag directory, one of its files, or a bare ``.mcap`` / ``.db3`` file.
    :param topic: The MarkerArray topic (see :func:`skeleton_frames_from_bag`).
    :param segments: Optional segment file.
    :param task_arms: Optional paper configuration JSON whose ``arm`` field lists the task
        arm(s) of each segment.
    :param source: ``'auto'``, ``'azure_kinect'`` or ``'kinect_v2'``.
    :param name: Recording name; default the bag directory name (or the file stem).
    :return: The demonstration, ``'tracker'``-frame skeletons.
    :raises RecordingError: If the bag or a file cannot be read, no message holds a body, or
        the segments and task arms disagree in number.
    :raises ConfigError: If ``source`` is unknown or contradicts the markers.
    """
    resolved = resolve_bag_path(path)
    decoded = _decode(resolved, topic, source)
    label = name if name is not None else _bag_name(resolved)
    if not decoded.frames:
        raise RecordingError(
            f'{resolved}: no skeleton on {decoded.topic}: no message holds a tracked body'
        )
    messages = decoded.frames_before.shape[0] - 1
    custom: Mapping[str, str] = {}
    if resolved.is_dir():
        data = _metadata(resolved).get('custom_data')
        if isinstance(data, dict):
            custom = {str(key): str(value) for key, value in data.items()}
    embedded = custom.get(CUSTOM_PREFIX + 'topic') == decoded.topic
    found: tuple[Segment, ...] | None = None
    if segments is not None:
        found = load_segments(segments, frame_count=messages)
    elif embedded and CUSTOM_PREFIX + 'segments' in custom:
        found = _embedded_segments(custom[CUSTOM_PREFIX + 'segments'], resolved)
        if any(segment.stop > messages for segment in found):
            raise RecordingError(
                f'{resolved}: the stored segments go beyond the {messages} messages of '
                f'{decoded.topic}'
            )
    arms: tuple[frozenset[Side], ...] | None = None
    if task_arms is not None:
        arms = load_task_arms(task_arms)
    elif embedded and CUSTOM_PREFIX + 'task_arms' in custom:
        arms = _embedded_arms(custom[CUSTOM_PREFIX + 'task_arms'], resolved)
    if found is None:
        whole = Demonstration.whole(label, decoded.frames)
        if arms is not None and len(arms) != 1:
            raise RecordingError(
                f'{resolved}: {len(arms)} task-arm entries but no segments; give the segment '
                'file too'
            )
        return whole if arms is None else Demonstration(label, whole.frames, whole.segments, arms)
    if arms is None:
        arms = (frozenset({Side.LEFT, Side.RIGHT}),) * len(found)
    if len(arms) != len(found):
        raise RecordingError(
            f'{resolved}: {len(found)} segments but {len(arms)} task-arm entries'
        )
    before = decoded.frames_before
    mapped = tuple(
        Segment(
            index=segment.index,
            start=int(before[segment.start]),
            stop=int(before[segment.stop]),
            first_line=segment.first_line,
            last_line=segment.last_line,
        )
        for segment in found
    )
    return Demonstration(label, decoded.frames, mapped, arms)


# --- Command line --------------------------------------------------------------------------------


def _epoch_argument(text: str) -> int:
    try:
        seconds = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'expected whole seconds since 1970, got {text!r}'
        ) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f'expected whole seconds >= 0, got {text!r}')
    return seconds * _NS_PER_S


def build_convert_parser() -> argparse.ArgumentParser:
    """
    Build the argument parser of ``python -m pic_ros convert``.

    :return: The parser.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros convert',
        description='Convert a Kinect v2 text recording (the PIC paper format, *_skel.txt) into '
        'a rosbag2 of visualization_msgs/MarkerArray in the Kinect v2 marker encoding '
        '(source: kinect_v2).',
    )
    parser.add_argument('skeleton', type=Path, help='the <task><n>_skel.txt file')
    parser.add_argument('out', type=Path, help='bag directory to create (must not exist)')
    parser.add_argument('--stamps', type=Path, help='time-stamp file (default: the _skelts.txt)')
    parser.add_argument(
        '--segments', type=Path, help="segment file to store (default: the paper layout's)"
    )
    parser.add_argument(
        '--config', type=Path,
        help='paper config whose "arm" field gives the task arms (default: the paper '
        "layout's)",
    )
    parser.add_argument('--topic', default=DEFAULT_TOPIC, help='topic (default: %(default)s)')
    parser.add_argument('--storage', choices=STORAGES, default='mcap', help='storage plugin')
    parser.add_argument(
        '--frame-id', default=KINECT_V2_FRAME_ID, help='marker frame_id (default: %(default)s)'
    )
    parser.add_argument('--body-id', type=int, default=DEFAULT_BODY_ID, help='marker body id')
    parser.add_argument(
        '--epoch', type=_epoch_argument, default=0,
        help='whole seconds since 1970 added to every stamp (default 0: stamps are seconds '
        'since the start of the take)',
    )
    parser.add_argument(
        '--metadata-version', type=int, choices=(8, 9), default=BAG_VERSION,
        help='rosbag2 metadata version (8 is readable by Humble; default: %(default)s)',
    )
    parser.add_argument(
        '--no-compression', action='store_true', help='do not zstd-compress the MCAP chunks'
    )
    return parser


def run_convert(argv: Sequence[str] | None = None) -> int:
    """
    Run ``python -m pic_ros convert`` and print what was written.

    :param argv: Arguments without the program and command names; default ``sys.argv[1:]``.
    :return: Process exit status (0 success, 2 for an input or usage error).
    """
    args = build_convert_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        path = convert_kinect_v2_text(
            args.skeleton,
            args.out,
            stamps_path=args.stamps,
            segments_path=args.segments,
            config_path=args.config,
            topic=args.topic,
            storage=args.storage,
            frame_id=args.frame_id,
            body_id=args.body_id,
            epoch_ns=args.epoch,
            version=args.metadata_version,
            compress=not args.no_compression,
        )
        info = bag_info(path)
    except PicRosError as err:
        print(f'pic_ros convert: {err}', file=sys.stderr)
        return 2
    print(format_bag_info(info))
    return 0


__all__ = [
    'AZURE_KINECT_FRAME_ID',
    'BAG_VERSION',
    'BagInfo',
    'BagMessage',
    'BagTopic',
    'DEFAULT_BODY_ID',
    'DEFAULT_TOPIC',
    'KINECT_V2_FRAME_ID',
    'MARKER_ARRAY',
    'SOURCES',
    'STORAGES',
    'absolute_topic',
    'azure_joints_from_kinect_v2',
    'bag_info',
    'build_convert_parser',
    'convert_kinect_v2_text',
    'demonstration_from_bag',
    'format_bag_info',
    'is_bag_path',
    'kinect_v2_to_azure_camera',
    'read_messages',
    'resolve_bag_path',
    'run_convert',
    'skeleton_frames_from_bag',
    'stamp_from_ns',
    'stamps_to_ns',
    'text_rounded',
    'write_skeleton_bag',
    'write_synthetic_bag',
]
