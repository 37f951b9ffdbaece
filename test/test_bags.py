"""Tests of rosbag2 reading, conversion of text recordings, skeleton decoding and the demo bag."""

from __future__ import annotations

import functools
import itertools
import math
from pathlib import Path
import shutil

import numpy as np
from pic_ros.exceptions import ConfigError, RecordingError
from pic_ros.human.skeleton import HumanJoint, Side
from pic_ros.recordings import bags
from pic_ros.recordings.kinect_v2_text import load_kinect_v2_recording
from pic_ros.robot.robot import load_robot
from pic_ros.solvers import SolverConfig
from pic_ros.tools.catalog import load_demonstration
from pic_ros.tools.evaluation import evaluate_one
from pic_ros.tools.synthetic import DEFAULT_SEED, generate_recording
from pic_ros.trackers.kinect_v2 import KINECT_V2_JOINTS
from pic_ros.trackers.marker_cdr import parse_marker_array
from pic_ros.trackers.markers import AZURE_KINECT_JOINTS
import pytest
import yaml

AZURE_TOPIC = '/kinect2/body_tracking_data'
AZURE_MESSAGES = 933
AZURE_EMPTY = 60
DEMO_BAG = Path(__file__).resolve().parents[1] / 'demo' / 'synthetic1_bag'
K4 = {name: index for index, name in enumerate(AZURE_KINECT_JOINTS)}
V2 = {name: index for index, name in enumerate(KINECT_V2_JOINTS)}
TIMING_KEYS = ('solve_ms_p50', 'solve_ms_p99', 'solve_us_histogram')


@pytest.fixture(scope='module')
def azure_bag(shared_data: Path) -> Path:
    """Return the real Azure Kinect bag (MCAP, zstd chunks, metadata version 9)."""
    return shared_data / 'azure_kinect' / 'body_tracking_ergonomics'


@pytest.fixture(scope='module')
def pic_demos(shared_data: Path) -> Path:
    """Return the PIC paper's demonstration folder."""
    return shared_data / 'pic_demos'


@pytest.fixture(scope='module')
def assembly1_bag(pic_demos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Convert the paper's assembly1 recording once for the module."""
    out = tmp_path_factory.mktemp('converted') / 'assembly1_bag'
    return bags.convert_kinect_v2_text(pic_demos / 'assembly1_skel.txt', out)


@pytest.fixture
def small_recording(tmp_path: Path) -> Path:
    """Write the first 40 frames of the shipped demo text recording; return the skeleton file."""
    folder = tmp_path / 'small'
    folder.mkdir()
    for suffix in ('_skel.txt', '_skelts.txt'):
        lines = (DEMO_BAG.parent / f'synthetic1{suffix}').read_text(encoding='utf-8').splitlines()
        (folder / f'small1{suffix}').write_text('\n'.join(lines[:40]) + '\n', encoding='utf-8')
    return folder / 'small1_skel.txt'


@functools.lru_cache(maxsize=8)
def _decoded(bag: Path, topic: str | None = None) -> list[tuple[int, int, tuple, np.ndarray]]:
    """Decode a bag's MarkerArrays with rosbags: (receive ns, header ns, ids, positions)."""
    from rosbags.highlevel import AnyReader

    result = []
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if topic is None or c.topic == topic]
        for connection, stamp, raw in reader.messages(connections=connections):
            markers = reader.deserialize(raw, connection.msgtype).markers
            header = markers[0].header.stamp if markers else None
            result.append((
                stamp,
                -1 if header is None else header.sec * 1_000_000_000 + header.nanosec,
                tuple(marker.id for marker in markers),
                np.array([[m.pose.position.x, m.pose.position.y, m.pose.position.z]
                          for m in markers]).reshape(-1, 3),
            ))
    return result


def _same_frames(first, second) -> bool:
    """Tell whether two frame sequences have identical stamps, positions and validity."""
    return len(first) == len(second) and all(
        a.stamp == b.stamp and a.frame == b.frame and np.array_equal(a.valid, b.valid)
        and np.array_equal(a.positions, b.positions, equal_nan=True)
        for a, b in zip(first, second)
    )


# --- reading any bag ---------------------------------------------------------------------------


def test_real_bag_lists_topics_types_counts_and_qos(azure_bag: Path) -> None:
    """The real Azure Kinect bag: MCAP v9, two topics with their types, counts and QoS."""
    info = bags.bag_info(azure_bag)
    assert info.storage == 'mcap' and info.version == 9
    assert info.message_count == AZURE_MESSAGES + 4
    assert [(t.name, t.msgtype, t.count) for t in info.topics] == [
        (AZURE_TOPIC, bags.MARKER_ARRAY, AZURE_MESSAGES),
        ('/tf_static', 'tf2_msgs/msg/TFMessage', 4),
    ]
    assert info.topic('tf_static').durability == 'transient_local'
    assert info.topic('tf_static').reliability == 'reliable'
    assert info.topic(AZURE_TOPIC).durability is None
    assert 62.0 < info.duration < 62.5
    text = bags.format_bag_info(info)
    assert AZURE_TOPIC in text and '933 msgs' in text


def test_real_bag_messages_come_in_time_order_with_60_empty_arrays(azure_bag: Path) -> None:
    """All 933 MarkerArrays come in recorded-time order; 60 are empty, the others 32 markers."""
    messages = list(bags.read_messages(azure_bag, topics=['kinect2/body_tracking_data']))
    assert len(messages) == AZURE_MESSAGES
    stamps = [message.timestamp_ns for message in messages]
    assert stamps == sorted(stamps)
    counts = [len(parse_marker_array(message.data).ids) for message in messages]
    assert counts.count(0) == AZURE_EMPTY
    assert set(counts) == {0, 32}
    assert {message.msgtype for message in messages} == {bags.MARKER_ARRAY}
    everything = list(bags.read_messages(azure_bag))
    assert len(everything) == AZURE_MESSAGES + 4
    assert [m.timestamp_ns for m in everything] == sorted(m.timestamp_ns for m in everything)


def test_real_bag_raw_bytes_match_the_deserialized_messages(azure_bag: Path) -> None:
    """The raw bytes handed out decode to the same ids and positions as rosbags' own decoding."""
    raw = list(bags.read_messages(azure_bag, topics=[AZURE_TOPIC]))
    reference = _decoded(azure_bag, AZURE_TOPIC)
    for message, (stamp, _, ids, positions) in zip(raw, reference):
        parsed = parse_marker_array(message.data)
        assert message.timestamp_ns == stamp
        assert tuple(parsed.ids.tolist()) == ids
        assert np.array_equal(parsed.positions, positions)


def test_time_window_selects_messages_by_recorded_stamp(azure_bag: Path) -> None:
    """``start_ns`` is inclusive and ``stop_ns`` exclusive, like rosbags and ros2 bag play."""
    every = [m.timestamp_ns for m in bags.read_messages(azure_bag, topics=[AZURE_TOPIC])]
    start, stop = every[100], every[200]
    window = list(bags.read_messages(azure_bag, [AZURE_TOPIC], start_ns=start, stop_ns=stop))
    assert [m.timestamp_ns for m in window] == every[100:200]


def test_real_bag_decodes_to_the_tracked_azure_body(azure_bag: Path) -> None:
    """873 tracker-frame skeletons (32-joint format detected), upright, in increasing time."""
    frames = bags.skeleton_frames_from_bag(azure_bag)
    assert len(frames) == AZURE_MESSAGES - AZURE_EMPTY
    assert all(b.stamp > a.stamp for a, b in zip(frames, frames[1:]))
    head, pelvis = HumanJoint.HEAD, HumanJoint.PELVIS
    assert all(frame.positions[head, 2] > frame.positions[pelvis, 2] for frame in frames)
    assert all(frame.valid.all() for frame in frames)
    explicit = bags.skeleton_frames_from_bag(azure_bag, topic=AZURE_TOPIC, source='azure_kinect')
    assert _same_frames(frames, explicit)
    with pytest.raises(ConfigError, match='azure_kinect'):
        bags.skeleton_frames_from_bag(azure_bag, source='kinect_v2')


def test_whole_bag_is_one_segment_with_both_arms(azure_bag: Path) -> None:
    """A bag without stored segments evaluates as one segment of every frame, both arms."""
    demonstration = load_demonstration(str(azure_bag))
    assert demonstration.name == 'body_tracking_ergonomics'
    assert [(s.start, s.stop) for s in demonstration.segments] == [(0, 873)]
    assert demonstration.task_arms == (frozenset({Side.LEFT, Side.RIGHT}),)


# --- converting the paper's text recordings ------------------------------------------------------


def test_converted_recording_holds_one_kinect_v2_array_per_line(
    assembly1_bag: Path, pic_demos: Path
) -> None:
    """Message k is skeleton line k: 25 markers, ids 100..124, camera space, the file's stamp."""
    recording = load_kinect_v2_recording(pic_demos / 'assembly1_skel.txt')
    decoded = _decoded(assembly1_bag)
    assert len(decoded) == len(recording) == 1404
    for index in (0, 1, 700, 1403):
        receive, header, ids, positions = decoded[index]
        assert ids == tuple(range(100, 125))
        assert np.array_equal(positions, recording.joints[index])
        assert receive == header == round(recording.stamps[index] * 1e9)
        assert bags.stamp_from_ns(header) == recording.stamps[index]
    from rosbags.highlevel import AnyReader

    with AnyReader([assembly1_bag]) as reader:
        connection, _, raw = next(iter(reader.messages()))
        marker = reader.deserialize(raw, connection.msgtype).markers[0]
    assert connection.topic == '/body_tracking_data'
    assert marker.header.frame_id == bags.KINECT_V2_FRAME_ID
    assert (marker.type, marker.action, marker.scale.x) == (2, 0, 0.05)
    assert (marker.pose.orientation.w, marker.lifetime.nanosec) == (1.0, 250_000_000)


def test_converted_recording_evaluates_like_its_text_files(
    assembly1_bag: Path, pic_demos: Path
) -> None:
    """PIC on Baxter: every metric except the solve times is identical for the bag and the text."""
    robot = load_robot('baxter')
    solver = SolverConfig(name='pic')
    text = load_demonstration('assembly1')
    bag = bags.demonstration_from_bag(
        assembly1_bag,
        segments=pic_demos / 'assembly_1.txt',
        task_arms=pic_demos / 'paper_configs' / 'baxter_config_assembly1.json',
        name='assembly1',
    )
    assert _same_frames(text.frames, bag.frames)
    assert bag.segments == text.segments and bag.task_arms == text.task_arms
    expected = evaluate_one(robot, text, solver)
    got = evaluate_one(robot, bag, solver)
    assert expected.keys() == got.keys()
    for key in expected:
        if key not in TIMING_KEYS:
            assert got[key] == expected[key], key
    assert expected['segments'] == 10 and expected['frames'] > 0


def test_converted_recording_keeps_the_paper_segments_in_its_metadata(
    assembly1_bag: Path,
) -> None:
    """Without files, the segments and task arms stored by ``convert`` are used."""
    text = load_demonstration('assembly1')
    stored = load_demonstration(str(assembly1_bag))
    assert stored.name == 'assembly1_bag'
    assert stored.segments == text.segments
    assert stored.task_arms == text.task_arms
    custom = bags.bag_info(assembly1_bag).custom_data
    assert custom['pic_ros.recording'] == 'assembly1'
    assert custom['pic_ros.source'] == 'kinect_v2'


def test_written_metadata_is_version_8_with_qos_as_a_string(assembly1_bag: Path) -> None:
    """Version 8 keeps ``offered_qos_profiles`` a YAML string, which Humble's reader requires."""
    metadata = yaml.safe_load((assembly1_bag / 'metadata.yaml').read_text(encoding='utf-8'))
    information = metadata['rosbag2_bagfile_information']
    assert information['version'] == 8
    assert information['storage_identifier'] == 'mcap'
    for topic in information['topics_with_message_count']:
        assert isinstance(topic['topic_metadata']['offered_qos_profiles'], str)
    assert information['starting_time']['nanoseconds_since_epoch'] == 33_589_800


def test_an_independent_mcap_reader_decodes_the_zstd_bags(assembly1_bag: Path) -> None:
    """The mcap + mcap_ros2 libraries read the written bags (zstd chunks, embedded schema)."""
    mcap_reader = pytest.importorskip('mcap_ros2.reader')
    summary = pytest.importorskip('mcap.reader')
    for bag, count in ((assembly1_bag, 1404), (DEMO_BAG, 1099)):
        mcap_file = next(bag.glob('*.mcap'))
        with mcap_file.open('rb') as stream:
            found = summary.make_reader(stream).get_summary()
        assert found.statistics.message_count == count
        assert found.chunk_indexes
        assert {chunk.compression for chunk in found.chunk_indexes} == {'zstd'}
        messages = itertools.islice(mcap_reader.read_ros2_messages(str(mcap_file)), 40)
        for message, (stamp, _, ids, positions) in zip(messages, _decoded(bag)[:40], strict=True):
            assert message.log_time_ns == stamp
            assert tuple(m.id for m in message.ros_msg.markers) == ids
            assert [m.pose.position.z for m in message.ros_msg.markers] == positions[:, 2].tolist()


def test_sqlite3_and_version_9_bags_read_back_the_same(
    small_recording: Path, tmp_path: Path
) -> None:
    """The sqlite3 storage and metadata version 9 hold the same skeletons as MCAP version 8."""
    mcap = bags.convert_kinect_v2_text(small_recording, tmp_path / 'small_mcap')
    sqlite = bags.convert_kinect_v2_text(
        small_recording, tmp_path / 'small_sqlite', storage='sqlite3', version=9
    )
    assert (bags.bag_info(mcap).storage, bags.bag_info(mcap).version) == ('mcap', 8)
    assert (bags.bag_info(sqlite).storage, bags.bag_info(sqlite).version) == ('sqlite3', 9)
    frames = bags.skeleton_frames_from_bag(mcap)
    assert len(frames) == 40
    assert _same_frames(bags.skeleton_frames_from_bag(sqlite), frames)
    assert _same_frames(bags.skeleton_frames_from_bag(sqlite / 'small_sqlite.db3'), frames)
    assert 'pic_ros.segments' not in bags.bag_info(mcap).custom_data


def test_epoch_shifts_every_stamp(small_recording: Path, tmp_path: Path) -> None:
    """``epoch_ns`` is added to the header and receive stamps; the joints do not change."""
    epoch = 1_700_000_000 * 1_000_000_000
    plain = bags.convert_kinect_v2_text(small_recording, tmp_path / 'plain')
    shifted = bags.convert_kinect_v2_text(small_recording, tmp_path / 'epoch', epoch_ns=epoch)
    for before, after in zip(_decoded(plain), _decoded(shifted), strict=True):
        assert after[0] == after[1] == before[0] + epoch
        assert np.array_equal(after[3], before[3])


def test_convert_command_writes_and_describes_the_bag(
    small_recording: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m pic_ros convert`` exits 0 and prints the bag; a bad input exits 2."""
    out = tmp_path / 'cli_bag'
    status = bags.run_convert(
        [str(small_recording), str(out), '--topic', 'skeletons', '--body-id', '3', '--epoch', '5']
    )
    assert status == 0
    printed = capsys.readouterr().out
    assert '/skeletons' in printed and '40 msgs' in printed
    first = _decoded(out)[0]
    assert first[2] == tuple(range(300, 325))
    assert first[0] == 5_000_000_000 + 46_842_000
    assert bags.run_convert([str(tmp_path / 'none_skel.txt'), str(tmp_path / 'x')]) == 2
    assert 'not found' in capsys.readouterr().err
    assert bags.run_convert([str(small_recording), str(out)]) == 2
    assert 'exists' in capsys.readouterr().err


# --- the shipped demo bag ------------------------------------------------------------------------


def test_demo_bag_decodes_to_the_text_recording_skeletons() -> None:
    """The demo bag and the demo text files give identical tracker-frame skeletons and segments."""
    text = load_demonstration('demo')
    bag = load_demonstration(str(DEMO_BAG))
    assert _same_frames(text.frames, bag.frames)
    assert [s.frame_slice for s in bag.segments] == [s.frame_slice for s in text.segments]
    assert bag.task_arms == text.task_arms


def test_demo_bag_is_the_text_recording_in_azure_axes() -> None:
    """Shared joints are the text's (-x, -y, z); the person's left is on the camera's right."""
    recording = load_kinect_v2_recording(DEMO_BAG.parent / 'synthetic1_skel.txt')
    arrays = [entry for entry in _decoded(DEMO_BAG) if entry[2]]
    assert len(arrays) == len(recording)
    flip = np.array([-1.0, -1.0, 1.0])
    for row in (0, 500, len(recording) - 1):
        _, _, ids, positions = arrays[row]
        assert ids == tuple(range(100, 132))
        for azure, v2 in (('SHOULDER_LEFT', 'ShoulderLeft'), ('WRIST_RIGHT', 'WristRight'),
                          ('SPINE_CHEST', 'SpineShoulder'), ('HEAD', 'Head')):
            assert np.array_equal(positions[K4[azure]], recording.joints[row, V2[v2]] * flip)
        assert positions[K4['HEAD'], 1] < positions[K4['PELVIS'], 1]  # y down
        assert positions[K4['SHOULDER_LEFT'], 0] > positions[K4['SHOULDER_RIGHT'], 0]
        assert positions[K4['NOSE'], 2] < positions[K4['HEAD'], 2]  # the face looks at the camera
        assert 1.5 < positions[K4['PELVIS'], 2] < 2.3


def test_demo_bag_has_empty_arrays_during_the_tracking_loss() -> None:
    """Every generated frame is one message; the 34 lost ones are empty arrays at their stamps."""
    recording = generate_recording(seed=DEFAULT_SEED)
    decoded = _decoded(DEMO_BAG)
    assert len(decoded) == len(recording) == 1099
    empty = np.array([not ids for _, _, ids, _ in decoded])
    assert np.array_equal(empty, ~recording.tracked)
    assert int(empty.sum()) == 34
    receive = np.array([entry[0] for entry in decoded])
    assert np.array_equal(receive, bags.stamps_to_ns(bags.text_rounded(recording.stamps)))
    info = bags.bag_info(DEMO_BAG)
    assert info.custom_data['pic_ros.synthetic'] == 'true'
    assert info.custom_data['pic_ros.seed'] == str(DEFAULT_SEED)
    size = sum(path.stat().st_size for path in DEMO_BAG.iterdir())
    assert size < 2_000_000


def test_demo_bag_evaluates_like_the_text_demo() -> None:
    """``evaluate`` on the demo bag gives the text demo's metrics (solve times aside)."""
    robot = load_robot('baxter')
    solver = SolverConfig(name='pic')
    expected = evaluate_one(robot, load_demonstration('demo'), solver)
    got = evaluate_one(robot, load_demonstration(str(DEMO_BAG)), solver)
    for key in expected:
        if key not in TIMING_KEYS + ('recording',):
            assert got[key] == expected[key], key


def test_same_seed_gives_the_same_bag_bytes(tmp_path: Path) -> None:
    """Two writes of the same take are byte-identical (metadata and MCAP file)."""
    recording = generate_recording(seed=DEFAULT_SEED)
    first = bags.write_synthetic_bag(recording, tmp_path / 'one' / 'synthetic1_bag')
    second = bags.write_synthetic_bag(recording, tmp_path / 'two' / 'synthetic1_bag')
    for name in ('metadata.yaml', 'synthetic1_bag.mcap'):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_shipped_demo_bag_is_what_the_script_writes(tmp_path: Path) -> None:
    """``demo/synthetic1_bag`` holds what the demo script writes (metadata and every message)."""
    assert DEMO_BAG.is_dir(), f'{DEMO_BAG} is missing; run scripts/make_demo_recording.py'
    fresh = bags.write_synthetic_bag(generate_recording(), tmp_path / 'synthetic1_bag')
    assert (fresh / 'metadata.yaml').read_bytes() == (DEMO_BAG / 'metadata.yaml').read_bytes()
    for shipped, made in zip(_decoded(DEMO_BAG), _decoded(fresh), strict=True):
        assert shipped[:3] == made[:3]
        assert np.array_equal(shipped[3], made[3])


# --- joints and stamps ---------------------------------------------------------------------------


def test_azure_joints_keep_sides_and_flip_x_and_y() -> None:
    """The 25 shared joints are copied by name with (x, y) negated; lost rows stay lost."""
    rng = np.random.default_rng(7)
    joints = rng.normal(size=(3, 25, 3))
    joints[2] = np.nan
    azure = bags.azure_joints_from_kinect_v2(joints)
    assert azure.shape == (3, 32, 3)
    assert np.array_equal(azure[:2, K4['ELBOW_LEFT']], joints[:2, V2['ElbowLeft']] * [-1, -1, 1])
    assert np.all(np.isnan(azure[2]))
    with pytest.raises(ConfigError, match='25'):
        bags.azure_joints_from_kinect_v2(np.zeros((4, 32, 3)))


def test_stamps_round_trip_exactly() -> None:
    """Stamps with up to 9 decimals come back as the same floats."""
    stamps = np.array([0.0335898, 12.345678, 54.99999999, 1e-9])
    restored = [bags.stamp_from_ns(ns) for ns in bags.stamps_to_ns(stamps).tolist()]
    assert restored == stamps.tolist()
    with pytest.raises(ConfigError):
        bags.stamps_to_ns([-1.0])
    with pytest.raises(ConfigError):
        bags.stamps_to_ns([math.nan])


# --- bad paths and options -----------------------------------------------------------------------


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _truncated(source: Path, target: Path) -> Path:
    target.mkdir()
    data = next(source.glob('*.mcap')).read_bytes()
    (target / 'cut.mcap').write_bytes(data[: len(data) // 3])
    return target / 'cut.mcap'


@pytest.mark.parametrize(
    'make, message',
    [
        (lambda tmp: tmp / 'missing', 'bag not found'),
        (lambda tmp: tmp, 'no metadata.yaml'),
        (lambda tmp: _file(tmp / 'x.bag', b'#ROSBAG V2.0\n'), 'ROS 1 bag'),
        (lambda tmp: _file(tmp / 'x.txt', b'1 2 3'), 'not a rosbag2'),
        (lambda tmp: _file(tmp / 'x.db3', b'not sqlite'), 'cannot read the bag'),
        (lambda tmp: _truncated(DEMO_BAG, tmp / 'cut'), 'cannot read the bag'),
    ],
    ids=['missing', 'no-metadata', 'ros1', 'suffix', 'garbage-db3', 'truncated-mcap'],
)
def test_unreadable_bags_raise_recording_error_saying_why(make, message, tmp_path: Path) -> None:
    """Every unreadable path gives a RecordingError with a reason, from every entry point."""
    path = make(tmp_path)
    for call in (
        bags.bag_info,
        lambda p: list(bags.read_messages(p)),
        bags.skeleton_frames_from_bag,
        bags.demonstration_from_bag,
    ):
        with pytest.raises(RecordingError, match=message):
            call(path)


@pytest.mark.parametrize(
    'metadata, message',
    [
        ('[unclosed', 'cannot read the bag metadata'),
        ('just: text', 'not rosbag2 metadata'),
        ('rosbag2_bagfile_information: {version: 8}', 'cannot read the bag'),
    ],
    ids=['bad-yaml', 'not-rosbag2', 'incomplete'],
)
def test_broken_metadata_raises_recording_error(metadata: str, message: str,
                                                tmp_path: Path) -> None:
    """A bag directory whose metadata.yaml is damaged gives a RecordingError."""
    bag = tmp_path / 'broken'
    shutil.copytree(DEMO_BAG, bag)
    (bag / 'metadata.yaml').write_text(metadata, encoding='utf-8')
    with pytest.raises(RecordingError, match=message):
        bags.bag_info(bag)


def test_missing_storage_file_raises_recording_error(tmp_path: Path) -> None:
    """Metadata that lists a storage file which is not there gives a RecordingError."""
    bag = tmp_path / 'hollow'
    shutil.copytree(DEMO_BAG, bag)
    next(bag.glob('*.mcap')).unlink()
    with pytest.raises(RecordingError, match='missing'):
        bags.bag_info(bag)


def test_wrong_topics_and_options_are_reported(azure_bag: Path, tmp_path: Path) -> None:
    """Unknown topics list the bag's topics; unknown sources and existing outputs are refused."""
    with pytest.raises(RecordingError, match='/tf_static'):
        list(bags.read_messages(azure_bag, topics=['/nowhere']))
    with pytest.raises(RecordingError, match='not visualization_msgs'):
        bags.skeleton_frames_from_bag(azure_bag, topic='/tf_static')
    with pytest.raises(ConfigError, match='source'):
        bags.skeleton_frames_from_bag(azure_bag, source='kinect')
    with pytest.raises(RecordingError, match='exists'):
        bags.write_skeleton_bag(tmp_path, np.array([1]), np.zeros((1, 32, 3)))
    with pytest.raises(ConfigError, match='storage'):
        bags.write_skeleton_bag(tmp_path / 'x', np.array([1]), np.zeros((1, 32, 3)),
                                storage='rosbag1')
    assert not (tmp_path / 'x').exists()


def test_bag_without_any_body_cannot_be_evaluated(tmp_path: Path) -> None:
    """A bag of empty arrays decodes to no frame and cannot make a demonstration."""
    stamps = np.array([10, 20, 30], dtype=np.int64)
    bag = bags.write_skeleton_bag(tmp_path / 'empty', stamps, np.full((3, 32, 3), np.nan))
    assert bags.skeleton_frames_from_bag(bag) == ()
    with pytest.raises(RecordingError, match='no skeleton'):
        bags.demonstration_from_bag(bag)


def test_bare_storage_files_are_read_too(tmp_path: Path) -> None:
    """A bag's .mcap file read without its directory gives the same skeletons."""
    bare = tmp_path / 'bare.mcap'
    shutil.copy(next(DEMO_BAG.glob('*.mcap')), bare)
    assert bags.resolve_bag_path(bare) == bare
    assert bags.bag_info(bare).version is None
    assert bags.resolve_bag_path(next(DEMO_BAG.glob('*.mcap'))) == DEMO_BAG
    assert _same_frames(
        bags.skeleton_frames_from_bag(bare), bags.skeleton_frames_from_bag(DEMO_BAG)
    )
