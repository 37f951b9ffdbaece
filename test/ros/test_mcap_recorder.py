"""
The MCAP recorder: topics of a small graph in this process, written and read back.

Publishers of a helper node and the recorder's node share the module's context (DDS on loopback,
the run's domain: ``conftest.py``); every wait is bounded and ends on a count. The file is read
back with the ``mcap`` library and the ``mcap_ros2`` decoder, and with the project's bag reader
(``rosbags``: what ``replay`` plays). Content is compared decoded, never as CDR bytes.
"""

from __future__ import annotations

from typing import Any

from pic_ros_tools.recordings import rosbag as bags
from pic_ros_tools.ros.background_spin import BackgroundSpin
import pytest
import yaml

rclpy = pytest.importorskip('rclpy')
mcap_ros2 = pytest.importorskip('mcap_ros2')

pytestmark = pytest.mark.ros

COUNT = 12
"""Messages published on each streamed topic."""


def _markers(index: int) -> Any:
    from geometry_msgs.msg import Point
    from visualization_msgs.msg import Marker, MarkerArray

    message = MarkerArray()
    for joint in range(3):
        marker = Marker(id=100 + joint, type=Marker.SPHERE)
        marker.header.frame_id = 'depth_camera_link'
        marker.header.stamp.sec = index
        marker.pose.position = Point(x=float(index), y=float(joint), z=2.0)
        message.markers.append(marker)
    return message


def _trajectory(index: int) -> Any:
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    return JointTrajectory(
        joint_names=['a', 'b'],
        points=[JointTrajectoryPoint(positions=[0.1 * index, -0.1 * index])],
    )


def _poses(index: int) -> Any:
    from geometry_msgs.msg import Point, Pose, PoseArray

    message = PoseArray(poses=[Pose(position=Point(x=float(index)))])
    message.header.frame_id = 'world'
    return message


def test_a_definition_holds_every_type_it_uses_once_read_from_the_installed_msg_files():
    """The schema of MarkerArray: its file, then Marker's and each type below it, once each."""
    from pic_ros_tools.ros.message_definitions import message_definition, SEPARATOR, used_types

    text = message_definition('visualization_msgs/msg/MarkerArray')
    blocks = text.split(SEPARATOR + '\n')
    assert blocks[0].strip() == 'Marker[] markers'
    names = [block.splitlines()[0] for block in blocks[1:]]
    assert len(names) == len(set(names))
    for name in ('visualization_msgs/Marker', 'std_msgs/Header', 'builtin_interfaces/Time',
                 'geometry_msgs/Pose', 'geometry_msgs/Point', 'builtin_interfaces/Duration'):
        assert f'MSG: {name}' in names
    defined = {('visualization_msgs', 'MarkerArray')} | {
        tuple(name.removeprefix('MSG: ').split('/')) for name in names
    }
    for block in blocks[1:]:  # closed: every type a block uses is defined in the schema
        header, text = block.split('\n', 1)
        assert set(used_types(header.removeprefix('MSG: ').split('/')[0], text)) <= defined


def test_recorded_topics_read_back_with_their_schemas_counts_and_fields(
    ros_context, helper_node, wait_for, tmp_path
):
    """
    Listed topics from the start, discovered ones (a latched description published earlier).

    The MCAP is rosbag2's layout (profile ros2, cdr, ros2msg schemas named package/msg/Name),
    decodes with mcap_ros2 to the fields published, and the bag reader of replay opens it with
    the same topics, counts and the latched topic's QoS.
    """
    from geometry_msgs.msg import PoseArray
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from pic_ros_tools.ros.mcap_recorder import DiscoveryRule, McapRecorder, RecordedTopic
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectory
    from visualization_msgs.msg import MarkerArray

    reliable = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
    latched = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    description = helper_node.create_publisher(String, '/mcap_test/robot_description', latched)
    description.publish(String(data='<robot name="r"/>'))
    markers = helper_node.create_publisher(MarkerArray, '/mcap_test/markers', reliable)
    trajectory = helper_node.create_publisher(
        JointTrajectory, '/mcap_test/arm/joint_trajectory', reliable
    )
    poses = helper_node.create_publisher(PoseArray, '/mcap_test/poses', reliable)
    unrecorded = helper_node.create_publisher(String, '/mcap_test/chatter', reliable)
    node = Node('mcap_test_recorder', context=ros_context)
    path = tmp_path / 'out' / 'run.mcap'
    recorder = McapRecorder(
        node, path,
        [RecordedTopic('/mcap_test/markers', 'visualization_msgs/msg/MarkerArray'),
         RecordedTopic('/mcap_test/unpublished', 'geometry_msgs/msg/PoseArray')],
        DiscoveryRule(
            types=frozenset(('trajectory_msgs/msg/JointTrajectory',)),
            names=frozenset(('/mcap_test/poses',)), suffixes=('/robot_description',),
        ),
    )
    executor = SingleThreadedExecutor(context=ros_context)
    executor.add_node(node)
    spin = BackgroundSpin(executor)
    try:
        expected = {
            '/mcap_test/robot_description', '/mcap_test/arm/joint_trajectory',
            '/mcap_test/poses',
        }
        wait_for(lambda: expected <= set(recorder.discover()) | set(recorder.topics),
                 'the discovered topics')
        assert '/mcap_test/chatter' not in recorder.topics
        for publisher in (markers, trajectory, poses):
            wait_for(lambda p=publisher: p.get_subscription_count() > 0, publisher.topic_name)
        for index in range(COUNT):
            markers.publish(_markers(index))
            trajectory.publish(_trajectory(index))
            poses.publish(_poses(index))
            unrecorded.publish(String(data='not recorded'))
        wait_for(
            lambda: all(recorder.counts.get(topic, 0) == COUNT for topic in (
                '/mcap_test/markers', '/mcap_test/arm/joint_trajectory', '/mcap_test/poses'
            )) and recorder.counts.get('/mcap_test/robot_description') == 1,
            'every message at the recorder',
        )
    finally:
        spin.stop()
        counts = recorder.close()
        node.destroy_node()
    assert counts == {
        '/mcap_test/markers': COUNT, '/mcap_test/arm/joint_trajectory': COUNT,
        '/mcap_test/poses': COUNT, '/mcap_test/robot_description': 1,
    }

    decoded: dict[str, list] = {}
    with path.open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        assert reader.get_header().profile == 'ros2'
        summary = reader.get_summary()
        types = {
            channel.topic: summary.schemas[channel.schema_id].name
            for channel in summary.channels.values()
        }
        assert {channel.message_encoding for channel in summary.channels.values()} == {'cdr'}
        assert {schema.encoding for schema in summary.schemas.values()} == {'ros2msg'}
        for _, channel, message, ros in reader.iter_decoded_messages():
            assert message.log_time == message.publish_time > 0
            decoded.setdefault(channel.topic, []).append(ros)
        [record] = [item for item in reader.iter_metadata() if item.name == 'rosbag2']
    bag = yaml.safe_load(record.metadata['serialized_metadata'])
    assert bag['version'] == 8 and bag['storage_identifier'] == 'mcap'
    assert bag['message_count'] == sum(counts.values())
    assert {
        item['topic_metadata']['name']: item['message_count']
        for item in bag['topics_with_message_count']
    } == counts
    assert types == {
        '/mcap_test/markers': 'visualization_msgs/msg/MarkerArray',
        '/mcap_test/arm/joint_trajectory': 'trajectory_msgs/msg/JointTrajectory',
        '/mcap_test/poses': 'geometry_msgs/msg/PoseArray',
        '/mcap_test/robot_description': 'std_msgs/msg/String',
    }
    assert decoded['/mcap_test/robot_description'][0].data == '<robot name="r"/>'
    for index, message in enumerate(decoded['/mcap_test/markers']):
        assert [m.id for m in message.markers] == [100, 101, 102]
        assert [m.pose.position.x for m in message.markers] == [float(index)] * 3
        assert message.markers[0].header.frame_id == 'depth_camera_link'
        assert message.markers[0].header.stamp.sec == index
    for index, message in enumerate(decoded['/mcap_test/arm/joint_trajectory']):
        assert message.joint_names == ['a', 'b']
        assert list(message.points[0].positions) == pytest.approx([0.1 * index, -0.1 * index])
    assert [m.poses[0].position.x for m in decoded['/mcap_test/poses']] == [
        float(index) for index in range(COUNT)
    ]

    info = bags.bag_info(path)
    topics = {topic.name: topic for topic in info.topics}
    assert {name: topic.msgtype for name, topic in topics.items()} == types
    assert {name: topic.count for name, topic in topics.items()} == counts
    assert topics['/mcap_test/robot_description'].durability == 'transient_local'
    assert topics['/mcap_test/markers'].reliability == 'reliable'
    played = list(bags.read_messages(path, ['/mcap_test/markers']))
    assert len(played) == COUNT
