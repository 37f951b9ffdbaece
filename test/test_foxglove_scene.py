"""
The Foxglove scene of a recorded run: the robot's link poses and the person, read back.

A small ``run.mcap`` is written here as the recorder writes one (profile ``ros2``, CDR from
``rosbags``' serializer): ``/joint_states`` at random values of every joint of the URDF and a few
``/skeleton_markers``. The scene written from it is read back with the ``mcap`` library; the link
poses in it are compared with the project's forward kinematics and with MuJoCo's own import of
the URDF (``test/mujoco_frames.py``), for every robot.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcap.reader import make_reader
from mcap.writer import Writer
from mujoco_frames import MujocoReference
import numpy as np
from pic_ros.robot import load_robot
from pic_ros.robot.kinematics.chain import KinematicChain
from pic_ros_tools.recordings.rosbag import default_typestore, open_reader
from pic_ros_tools.ros import foxglove_scene as scene
import pytest

ROBOTS = ('baxter', 'nao', 'tiago', 'yumi')
STATES = 5
"""``/joint_states`` messages in the run."""
PEOPLE = 3
"""``/skeleton_markers`` messages in the run."""
POSITION_TOLERANCE = 1e-9
ROTATION_TOLERANCE = 1e-9


def _joint_state(typestore: Any, index: int, values: dict[str, float]) -> Any:
    types = typestore.types
    stamp = types['builtin_interfaces/msg/Time'](sec=index, nanosec=5)
    return types['sensor_msgs/msg/JointState'](
        header=types['std_msgs/msg/Header'](stamp=stamp, frame_id=''),
        name=list(values), position=np.array(list(values.values()), dtype=float),
        velocity=np.zeros(0), effort=np.zeros(0),
    )


def _markers(typestore: Any, index: int) -> Any:
    types = typestore.types
    header = types['std_msgs/msg/Header'](
        stamp=types['builtin_interfaces/msg/Time'](sec=index, nanosec=0), frame_id='human'
    )
    point = types['geometry_msgs/msg/Point']
    pose = types['geometry_msgs/msg/Pose'](
        position=point(x=0.0, y=0.0, z=0.0),
        orientation=types['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0),
    )
    markers = []
    for marker_id, kind in ((0, scene.MARKER_SPHERE_LIST), (1, scene.MARKER_LINE_LIST)):
        markers.append(types['visualization_msgs/msg/Marker'](
            header=header, ns='skeleton', id=marker_id, type=kind, action=0, pose=pose,
            scale=types['geometry_msgs/msg/Vector3'](x=0.05, y=0.05, z=0.05),
            color=types['std_msgs/msg/ColorRGBA'](r=1.0, g=0.5, b=0.0, a=1.0),
            lifetime=types['builtin_interfaces/msg/Duration'](sec=0, nanosec=0),
            frame_locked=False,
            points=[point(x=float(index), y=0.1, z=0.2), point(x=0.3, y=0.4, z=0.5)],
            colors=[], texture_resource='',
            texture=types['sensor_msgs/msg/CompressedImage'](
                header=header, format='', data=np.zeros(0, dtype=np.uint8)
            ),
            uv_coordinates=[], text='', mesh_resource='',
            mesh_file=types['visualization_msgs/msg/MeshFile'](
                filename='', data=np.zeros(0, dtype=np.uint8)
            ),
            mesh_use_embedded_materials=False,
        ))
    return types['visualization_msgs/msg/MarkerArray'](markers=markers)


def _write_run(path: Path, states: list[dict[str, float]]) -> None:
    """Write a rosbag2-like MCAP with the joint states and a few skeleton markers."""
    typestore = default_typestore()
    with path.open('wb') as stream:
        writer = Writer(stream)
        writer.start(profile='ros2', library='test')
        channels = {}
        for topic, msgtype in ((scene.JOINT_STATES, 'sensor_msgs/msg/JointState'),
                               ('/skeleton_markers', 'visualization_msgs/msg/MarkerArray')):
            schema = writer.register_schema(
                msgtype, 'ros2msg', typestore.generate_msgdef(msgtype)[0].encode()
            )
            channels[topic] = (writer.register_channel(topic, 'cdr', schema), msgtype)
        messages = [(scene.JOINT_STATES, _joint_state(typestore, i, values))
                    for i, values in enumerate(states)]
        messages += [('/skeleton_markers', _markers(typestore, i)) for i in range(PEOPLE)]
        for time, (topic, message) in enumerate(messages):
            channel, msgtype = channels[topic]
            data = typestore.serialize_cdr(message, msgtype)
            writer.add_message(channel, time + 1, bytes(data), time + 1)
        writer.finish()


def _read_scene(path: Path) -> dict[str, list[tuple[str, Any]]]:
    """Read the scene back: per topic, (schema name, decoded JSON) of each message in order."""
    topics: dict[str, list[tuple[str, Any]]] = {}
    with path.open('rb') as stream:
        for schema, channel, message in make_reader(stream).iter_messages(log_time_order=True):
            assert channel.message_encoding == 'json'
            assert schema is not None and schema.encoding == 'jsonschema'
            topics.setdefault(channel.topic, []).append(
                (schema.name, json.loads(message.data))
            )
    return topics


def _rotation(quaternion: dict[str, float]) -> np.ndarray:
    x, y, z, w = (quaternion[key] for key in 'xyzw')
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _ancestors(model: Any, link: str) -> set[str]:
    """Return a link and every link above it (NAO's ``base_link``, YuMi's ``world``)."""
    parent = {joint.child: joint.parent for joint in model.joints.values()}
    found = {link}
    while link in parent:
        link = parent[link]
        found.add(link)
    return found


@pytest.fixture(scope='module')
def references():
    """Build MuJoCo's kinematics of each robot once."""
    return {name: MujocoReference(load_robot(name)) for name in ROBOTS}


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_written_link_poses_equal_the_projects_kinematics_and_mujocos(
    tmp_path, references, robot_name
):
    """Every link pose written per joint_states equals the chain FK and MuJoCo's (1e-9)."""
    robot = load_robot(robot_name)
    reference = references[robot_name]
    rng = np.random.default_rng(31)
    states = [reference.random_joints(rng) for _ in range(STATES)]
    run = tmp_path / 'run.mcap'
    _write_run(run, states)

    counts = scene.write_scene(run, robot)

    assert counts.path == tmp_path / scene.SCENE_NAME
    assert (counts.robot, counts.person, counts.person_topic) == (
        STATES, PEOPLE, '/skeleton_markers'
    )
    topics = _read_scene(counts.path)
    assert len(topics[scene.LINKS_TOPIC]) == STATES
    assert len(topics[scene.ROBOT_TOPIC]) == STATES
    model = robot.model
    for values, (schema, frames), (_, update) in zip(
        states, topics[scene.LINKS_TOPIC], topics[scene.ROBOT_TOPIC], strict=True
    ):
        assert schema == 'foxglove.FrameTransforms'
        reference.set_joints(values)
        written = {item['child_frame_id']: item for item in frames['transforms']}
        assert {item['parent_frame_id'] for item in frames['transforms']} == {robot.base_frame}
        assert set(written) == set(model.links) - _ancestors(model, robot.base_frame)
        for link, item in written.items():
            chain = KinematicChain.from_model(model, robot.base_frame, link)
            fk = chain.link_transforms([values[name] for name in chain.joint_names])[link]
            mujoco = reference.link_frame(link)
            translation = np.array([item['translation'][key] for key in 'xyz'])
            rotation = _rotation(item['rotation'])
            for expected in (fk, mujoco):
                np.testing.assert_allclose(translation, expected[:3, 3], rtol=0.0,
                                           atol=POSITION_TOLERANCE, err_msg=link)
                np.testing.assert_allclose(rotation, expected[:3, :3], rtol=0.0,
                                           atol=ROTATION_TOLERANCE, err_msg=link)
        (entity,) = update['entities']
        assert entity['frame_id'] == robot.base_frame
        origins = np.array([item['translation'][key] for item in written.values()
                            for key in 'xyz']).reshape(-1, 3)
        origins = np.vstack([origins, np.zeros(3)])
        points = np.array([[p[key] for key in 'xyz'] for p in entity['lines'][0]['points']])
        assert len(points) == 2 * len(scene.RobotPoses(robot).edges)
        gaps = np.linalg.norm(points[:, None, :] - origins[None, :, :], axis=2).min(axis=1)
        assert gaps.max() < POSITION_TOLERANCE  # every line ends at a link origin


def test_the_person_is_drawn_from_its_markers_in_their_frame(tmp_path, references):
    """One scene update per marker message: the line list as lines, the sphere list as spheres."""
    robot = load_robot('yumi')
    rng = np.random.default_rng(7)
    run = tmp_path / 'run.mcap'
    _write_run(run, [references['yumi'].random_joints(rng)])

    counts = scene.write_scene(run, robot, tmp_path / 'elsewhere.mcap')

    topics = _read_scene(counts.path)
    people = topics[scene.PERSON_TOPIC]
    assert len(people) == PEOPLE
    for index, (schema, update) in enumerate(people):
        assert schema == 'foxglove.SceneUpdate'
        spheres, bones = update['entities']
        assert (spheres['id'], bones['id']) == ('skeleton/0', 'skeleton/1')
        assert {spheres['frame_id'], bones['frame_id']} == {'human'}
        assert spheres['timestamp'] == {'sec': index, 'nsec': 0}
        assert [s['pose']['position'] for s in spheres['spheres']] == [
            {'x': float(index), 'y': 0.1, 'z': 0.2}, {'x': 0.3, 'y': 0.4, 'z': 0.5}
        ]
        (line,) = bones['lines']
        assert line['type'] == scene.LINE_LIST and len(line['points']) == 2
        assert bones['spheres'] == [] and spheres['lines'] == []


def test_the_run_file_stays_readable_by_the_replays_reader(tmp_path, references):
    """run.mcap is left as it was: rosbags, the replay's reader, still opens it."""
    run = tmp_path / 'run.mcap'
    _write_run(run, [references['nao'].random_joints(np.random.default_rng(3))])
    before = run.read_bytes()

    scene.write_scene(run, load_robot('nao'))

    assert run.read_bytes() == before
    with open_reader(run) as reader:
        assert {connection.topic for connection in reader.connections} == {
            scene.JOINT_STATES, '/skeleton_markers'
        }


def test_a_rotation_matrix_turns_into_the_unit_quaternion_that_gives_it_back():
    """quaternion() inverts the quaternion's matrix, w >= 0, near every branch."""
    rng = np.random.default_rng(11)
    matrices = [np.eye(3), np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]),
                np.diag([-1.0, -1.0, 1.0])]
    for _ in range(50):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        matrices.append(_rotation(dict(zip('xyzw', q))))
    for matrix in matrices:
        x, y, z, w = scene.quaternion(matrix)
        assert w >= 0.0
        assert abs(x * x + y * y + z * z + w * w - 1.0) < 1e-12
        np.testing.assert_allclose(_rotation({'x': x, 'y': y, 'z': z, 'w': w}), matrix,
                                   rtol=0.0, atol=1e-12)
