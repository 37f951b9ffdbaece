"""
The robot's link poses and the person of a recorded run as Foxglove scene entities.

:func:`write_scene` reads a finished ``run.mcap`` (:mod:`pic_ros_tools.ros.mcap_recorder`) and
writes ``run_scene.mcap`` beside it, for Foxglove's 3-D panel on a computer with no ROS and no
URDF loader. Per ``/joint_states`` message, the robot's pose computed with the project's own
forward kinematics (:class:`~pic_ros.robot.kinematics.chain.KinematicChain` on the robot's URDF,
one chain from the base frame to each leaf link):

- ``/foxglove/robot_links`` (``foxglove.FrameTransforms``): one transform per link below the base
  frame, parent the base frame, child the link (translation [m], rotation as a unit quaternion
  ``x, y, z, w``), so every link frame can be shown as axes;
- ``/foxglove/robot`` (``foxglove.SceneUpdate``): one entity ``robot`` in the base frame, a line
  from each link's origin to each child link's origin and a sphere on every joint that moves.

A joint the message does not name takes the robot's held value (``locked_joints``), else 0.
Links above the base frame (NAO's ``base_link``) are not drawn. Per person message
(``/placed_skeleton_markers``, the person where the solver placed the arms, base frame, when the
run recorded it; else ``/skeleton_markers`` in the human frame), ``/foxglove/person``
(``foxglove.SceneUpdate``): one entity per marker, its line lists and strips as lines, its
sphere lists as spheres, in the marker's own frame. Every scene message keeps the source
message's log time; entities are stamped with the source's header stamp and replaced by the next
message (no lifetime).

Why a second file: the scene channels are JSON (message encoding ``json``, schema encoding
``jsonschema``), which MCAP allows beside ``cdr`` channels, but ``rosbags`` (what the project's
``replay`` reads) fails on a schema encoding that is not a ROS one, and ``ros2 bag play`` expects
CDR, so ``run.mcap`` stays a pure rosbag2 file.

Why hand-written schemas rather than ``foxglove-sdk``: the SDK (one 19 MB wheel) would be the
tools' only dependency for three message types, while the ``mcap`` writer the recorder already
uses writes JSON channels as they are. The schemas below are the subset of Foxglove's published
``foxglove.*`` schemas (same names, fields and enum values) for the fields written; every field
of a written entity is present, so nothing depends on a reader's defaults.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
import json
from pathlib import Path
from typing import Any

from mcap.reader import make_reader
from mcap.writer import CompressionType, Writer
import numpy as np
import numpy.typing as npt
from pic_ros.robot.kinematics.chain import KinematicChain
from pic_ros.robot.robot import Robot
from pic_ros_tools.recordings.rosbag import default_typestore

FloatArray = npt.NDArray[np.float64]

SCENE_NAME = 'run_scene.mcap'
"""The scene file's name, beside ``run.mcap``."""

JOINT_STATES = '/joint_states'
"""The topic the robot's pose is computed from."""

PERSON_TOPICS = ('/placed_skeleton_markers', '/skeleton_markers')
"""The person's topics, by preference: the first one the run recorded is drawn."""

LINKS_TOPIC = '/foxglove/robot_links'
"""``foxglove.FrameTransforms``: base frame -> every link."""

ROBOT_TOPIC = '/foxglove/robot'
"""``foxglove.SceneUpdate``: the robot as lines and spheres."""

PERSON_TOPIC = '/foxglove/person'
"""``foxglove.SceneUpdate``: the person as lines and spheres."""

LINE_WIDTH = 0.02
"""Thickness of the robot's lines [m]."""

JOINT_SIZE = 0.04
"""Diameter of the robot's joint spheres [m]."""

ROBOT_COLOR = {'r': 0.75, 'g': 0.75, 'b': 0.8, 'a': 1.0}
JOINT_COLOR = {'r': 0.2, 'g': 0.4, 'b': 0.9, 'a': 1.0}

LINE_STRIP, LINE_LIST = 0, 2
"""``foxglove.LinePrimitive`` types."""

MARKER_LINE_STRIP, MARKER_LINE_LIST, MARKER_SPHERE_LIST = 4, 5, 7
"""``visualization_msgs/Marker`` types drawn."""

_NUMBER = {'type': 'number'}
_VECTOR = {'type': 'object', 'properties': dict.fromkeys('xyz', _NUMBER)}
_QUATERNION = {'type': 'object', 'properties': dict.fromkeys('xyzw', _NUMBER)}
_TIME = {'type': 'object', 'properties': {'sec': {'type': 'integer'}, 'nsec': {'type': 'integer'}}}
_COLOR = {'type': 'object', 'properties': dict.fromkeys('rgba', _NUMBER)}
_POSE = {'type': 'object', 'properties': {'position': _VECTOR, 'orientation': _QUATERNION}}
_LINE = {'type': 'object', 'properties': {
    'type': {'type': 'integer', 'enum': [0, 1, 2]}, 'pose': _POSE, 'thickness': _NUMBER,
    'scale_invariant': {'type': 'boolean'}, 'points': {'type': 'array', 'items': _VECTOR},
    'color': _COLOR, 'colors': {'type': 'array', 'items': _COLOR},
    'indices': {'type': 'array', 'items': {'type': 'integer'}},
}}
_SPHERE = {'type': 'object', 'properties': {'pose': _POSE, 'size': _VECTOR, 'color': _COLOR}}
_ENTITY = {'type': 'object', 'properties': {
    'timestamp': _TIME, 'frame_id': {'type': 'string'}, 'id': {'type': 'string'},
    'lifetime': _TIME, 'frame_locked': {'type': 'boolean'},
    'metadata': {'type': 'array', 'items': {'type': 'object'}},
    'lines': {'type': 'array', 'items': _LINE}, 'spheres': {'type': 'array', 'items': _SPHERE},
    **{kind: {'type': 'array', 'items': {'type': 'object'}} for kind in (
        'arrows', 'cubes', 'cylinders', 'triangles', 'texts', 'models')},
}}
SCENE_UPDATE_SCHEMA = {'title': 'foxglove.SceneUpdate', 'type': 'object', 'properties': {
    'deletions': {'type': 'array', 'items': {'type': 'object'}},
    'entities': {'type': 'array', 'items': _ENTITY},
}}
"""JSON schema of ``foxglove.SceneUpdate`` (the fields written)."""

FRAME_TRANSFORMS_SCHEMA = {'title': 'foxglove.FrameTransforms', 'type': 'object', 'properties': {
    'transforms': {'type': 'array', 'items': {'type': 'object', 'properties': {
        'timestamp': _TIME, 'parent_frame_id': {'type': 'string'},
        'child_frame_id': {'type': 'string'}, 'translation': _VECTOR, 'rotation': _QUATERNION,
    }}},
}}
"""JSON schema of ``foxglove.FrameTransforms``."""


def quaternion(rotation: npt.ArrayLike) -> tuple[float, float, float, float]:
    """
    Convert a rotation matrix to a unit quaternion.

    :param rotation: Rotation, shape (3, 3).
    :return: ``(x, y, z, w)``, ``w >= 0``.
    """
    m = np.asarray(rotation, dtype=float)
    trace = float(np.trace(m))
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4]
    else:
        i = int(np.argmax(np.diag(m)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + m[i, i] - m[j, j] - m[k, k])
        q = [0.0, 0.0, 0.0, (m[k, j] - m[j, k]) / s]
        q[i] = s / 4
        q[j] = (m[j, i] + m[i, j]) / s
        q[k] = (m[k, i] + m[i, k]) / s
    x, y, z, w = (float(value) for value in np.asarray(q) / np.linalg.norm(q))
    return (-x, -y, -z, -w) if w < 0.0 else (x, y, z, w)


class RobotPoses:
    """
    Every link pose of a robot below its base frame, by the project's forward kinematics.

    :param robot: The robot (its URDF model, base frame and held joints).
    """

    def __init__(self, robot: Robot) -> None:
        model = robot.model
        self.base_frame = robot.base_frame
        self._held = dict(robot.held_joints)
        parents = {joint.parent for joint in model.joints.values()}
        self.chains: tuple[KinematicChain, ...] = tuple(
            KinematicChain.from_model(model, self.base_frame, link)
            for link in model.links
            if link not in parents and _descends(model, self.base_frame, link)
        )
        self.edges: tuple[tuple[str, str], ...] = tuple(dict.fromkeys(
            (joint.parent, joint.child) for chain in self.chains for joint in chain.joints
        ))
        """(parent link, child link) of every joint below the base frame."""
        self.moving_links: tuple[str, ...] = tuple(dict.fromkeys(
            joint.child for chain in self.chains for joint in chain.movable_joints
        ))
        """Child links of the movable joints (their origins are the joints')."""

    def link_transforms(self, positions: Mapping[str, float]) -> dict[str, FloatArray]:
        """
        Compute the pose of every link below the base frame.

        :param positions: Joint positions by name [rad] or [m]; a joint not named takes its
            held value, else 0.
        :return: Transform base <- link, shape (4, 4), keyed by link name (base included).
        """
        transforms: dict[str, FloatArray] = {}
        for chain in self.chains:
            q = [positions.get(name, self._held.get(name, 0.0)) for name in chain.joint_names]
            transforms.update(chain.link_transforms(np.array(q, dtype=float)))
        return transforms


def _descends(model: Any, base: str, link: str) -> bool:
    parent = {joint.child: joint.parent for joint in model.joints.values()}
    while link != base:
        if link not in parent:
            return False
        link = parent[link]
    return True


def _time(stamp: Any) -> dict[str, int]:
    return {'sec': int(stamp.sec), 'nsec': int(stamp.nanosec)}


def _vector(values: Iterable[float]) -> dict[str, float]:
    return dict(zip('xyz', (float(value) for value in values), strict=True))


def _pose(position: Iterable[float] = (0.0, 0.0, 0.0),
          orientation: Iterable[float] = (0.0, 0.0, 0.0, 1.0)) -> dict[str, Any]:
    return {
        'position': _vector(position),
        'orientation': dict(zip('xyzw', (float(value) for value in orientation), strict=True)),
    }


def _entity(
    stamp: dict[str, int], frame_id: str, name: str, lines: list[dict[str, Any]],
    spheres: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        'timestamp': stamp, 'frame_id': frame_id, 'id': name,
        'lifetime': {'sec': 0, 'nsec': 0}, 'frame_locked': False, 'metadata': [],
        'arrows': [], 'cubes': [], 'spheres': spheres, 'cylinders': [], 'lines': lines,
        'triangles': [], 'texts': [], 'models': [],
    }


def _line(kind: int, points: list[dict[str, float]], thickness: float, color: dict[str, float],
          pose: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        'type': kind, 'pose': pose or _pose(), 'thickness': thickness, 'scale_invariant': False,
        'points': points, 'color': color, 'colors': [], 'indices': [],
    }


def _sphere(position: Iterable[float], size: float, color: dict[str, float]) -> dict[str, Any]:
    return {'pose': _pose(position), 'size': _vector((size, size, size)), 'color': color}


def robot_messages(
    poses: RobotPoses, stamp: dict[str, int], positions: Mapping[str, float]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """
    Draw the robot at some joint positions.

    :param poses: The robot's kinematics.
    :param stamp: The joint states' stamp, ``{'sec', 'nsec'}``.
    :param positions: Joint positions by name [rad] or [m].
    :return: ``(FrameTransforms, SceneUpdate)`` as JSON-ready dictionaries.
    """
    transforms = poses.link_transforms(positions)
    frames = {'transforms': [
        {
            'timestamp': stamp, 'parent_frame_id': poses.base_frame, 'child_frame_id': link,
            'translation': _vector(transform[:3, 3]), 'rotation': dict(
                zip('xyzw', quaternion(transform[:3, :3]), strict=True)
            ),
        }
        for link, transform in transforms.items() if link != poses.base_frame
    ]}
    points = [
        _vector(transforms[link][:3, 3]) for edge in poses.edges for link in edge
    ]
    spheres = [
        _sphere(transforms[link][:3, 3], JOINT_SIZE, JOINT_COLOR) for link in poses.moving_links
    ]
    lines = [_line(LINE_LIST, points, LINE_WIDTH, ROBOT_COLOR)]
    scene = {'deletions': [], 'entities': [
        _entity(stamp, poses.base_frame, 'robot', lines, spheres)
    ]}
    return frames, scene


def person_message(markers: Any) -> dict[str, Any]:
    """
    Draw a ``visualization_msgs/MarkerArray`` of the person as a scene update.

    :param markers: The decoded message (``rosbags``' form).
    :return: ``SceneUpdate``: one entity per marker (id ``namespace/id``), line lists and strips
        as lines, sphere lists as spheres, in the marker's frame; other marker types are left out.
    """
    entities = []
    for marker in markers.markers:
        color = {key: float(getattr(marker.color, key)) for key in 'rgba'}
        points = [_vector((p.x, p.y, p.z)) for p in marker.points]
        pose = _pose(
            (marker.pose.position.x, marker.pose.position.y, marker.pose.position.z),
            (marker.pose.orientation.x, marker.pose.orientation.y, marker.pose.orientation.z,
             marker.pose.orientation.w),
        )
        lines, spheres = [], []
        if marker.type in (MARKER_LINE_LIST, MARKER_LINE_STRIP):
            kind = LINE_LIST if marker.type == MARKER_LINE_LIST else LINE_STRIP
            lines.append(_line(kind, points, float(marker.scale.x), color, pose))
        elif marker.type == MARKER_SPHERE_LIST:
            spheres = [
                {'pose': _pose((p['x'], p['y'], p['z'])),
                 'size': _vector((marker.scale.x, marker.scale.y, marker.scale.z)),
                 'color': color}
                for p in points
            ]
        else:
            continue
        entities.append(_entity(
            _time(marker.header.stamp), str(marker.header.frame_id),
            f'{marker.ns}/{marker.id}', lines, spheres,
        ))
    return {'deletions': [], 'entities': entities}


@dataclass(frozen=True)
class SceneCounts:
    """
    What :func:`write_scene` wrote.

    :param path: The scene file.
    :param robot: Messages written on each robot topic (one per ``/joint_states`` message).
    :param person: Person messages written.
    :param person_topic: The topic the person was drawn from (None: none recorded).
    """

    path: Path
    robot: int
    person: int
    person_topic: str | None


def _messages(path: Path, topics: Iterable[str]) -> Iterator[tuple[str, int, bytes]]:
    """Yield ``(topic, log time [ns], CDR bytes)`` of some topics of an MCAP file, in order."""
    with path.open('rb') as stream:
        for _, channel, message in make_reader(stream).iter_messages(topics=list(topics)):
            yield channel.topic, int(message.log_time), bytes(message.data)


def _recorded_topics(path: Path) -> dict[str, str]:
    with path.open('rb') as stream:
        summary = make_reader(stream).get_summary()
    if summary is None:
        return {}
    schemas = summary.schemas
    return {
        channel.topic: schemas[channel.schema_id].name if channel.schema_id in schemas else ''
        for channel in summary.channels.values()
    }


def write_scene(run: Path, robot: Robot, path: Path | None = None) -> SceneCounts:
    """
    Write the scene of a recorded run (see the module's description).

    :param run: The run's rosbag2 MCAP file.
    :param robot: The robot that ran.
    :param path: The scene file to write (replaced); None: :data:`SCENE_NAME` beside ``run``.
    :return: What was written.
    """
    path = run.parent / SCENE_NAME if path is None else path
    typestore = default_typestore()
    recorded = _recorded_topics(run)
    person_topic = next((topic for topic in PERSON_TOPICS if topic in recorded), None)
    poses = RobotPoses(robot)
    wanted = [JOINT_STATES] + ([] if person_topic is None else [person_topic])
    counts = {ROBOT_TOPIC: 0, PERSON_TOPIC: 0}
    with path.open('wb') as stream:
        writer = Writer(stream, compression=CompressionType.ZSTD)
        writer.start(profile='', library='pic_ros_tools')
        scene = writer.register_schema(
            'foxglove.SceneUpdate', 'jsonschema', json.dumps(SCENE_UPDATE_SCHEMA).encode()
        )
        frames = writer.register_schema(
            'foxglove.FrameTransforms', 'jsonschema',
            json.dumps(FRAME_TRANSFORMS_SCHEMA).encode(),
        )
        channels = {
            LINKS_TOPIC: writer.register_channel(LINKS_TOPIC, 'json', frames),
            ROBOT_TOPIC: writer.register_channel(ROBOT_TOPIC, 'json', scene),
            PERSON_TOPIC: writer.register_channel(PERSON_TOPIC, 'json', scene),
        }

        def write(topic: str, time: int, content: dict[str, Any]) -> None:
            sequence = counts.get(topic, 0)
            writer.add_message(
                channels[topic], time, json.dumps(content).encode(), time, sequence=sequence
            )
            counts[topic] = sequence + 1

        for topic, time, data in _messages(run, wanted):
            if topic == JOINT_STATES:
                state = typestore.deserialize_cdr(data, recorded[topic])
                positions = dict(zip(state.name, (float(v) for v in state.position)))
                links, robot_scene = robot_messages(poses, _time(state.header.stamp), positions)
                write(LINKS_TOPIC, time, links)
                write(ROBOT_TOPIC, time, robot_scene)
            else:
                write(PERSON_TOPIC, time, person_message(
                    typestore.deserialize_cdr(data, recorded[topic])
                ))
        writer.finish()
    return SceneCounts(path, counts[ROBOT_TOPIC], counts[PERSON_TOPIC], person_topic)
