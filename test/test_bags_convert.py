"""Tests of converting the paper's Kinect v2 text recordings to rosbag2 (``convert``)."""

from __future__ import annotations

import itertools
from pathlib import Path

from bag_helpers import (
    AZURE_TOPIC,
    decoded_markers,
    DEMO_BAG,
    same_frames,
    TIMING_KEYS,
    without_face,
)
import numpy as np
from pic_ros.exceptions import PicRosError
from pic_ros.robot.robot import load_robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.convert import convert_kinect_v2_text, replayable_recording, run_convert
from pic_ros_tools.evaluation import evaluate_one
from pic_ros_tools.recordings.bag_demonstration import demonstration_from_bag
from pic_ros_tools.recordings.kinect_v2_text import load_kinect_v2_recording
from pic_ros_tools.recordings.rosbag import bag_info, read_messages
from pic_ros_tools.recordings.skeleton_bag_reader import skeleton_frames_from_bag
from pic_ros_tools.recordings.skeleton_bag_writer import KINECT_V2_FRAME_ID
from pic_ros_tools.recordings.stamps import stamp_from_ns
import pytest
import yaml


@pytest.fixture(scope='module')
def pic_demos(shared_data: Path) -> Path:
    """Return the PIC paper's demonstration folder."""
    return shared_data / 'pic_demos'


@pytest.fixture(scope='module')
def assembly1_bag(pic_demos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Convert the paper's assembly1 recording once for the module."""
    out = tmp_path_factory.mktemp('converted') / 'assembly1_bag'
    return convert_kinect_v2_text(pic_demos / 'assembly1_skel.txt', out)


@pytest.fixture
def small_recording(tmp_path: Path) -> Path:
    """Write the first 40 frames of the shipped demo text recording; return the skeleton file."""
    folder = tmp_path / 'small'
    folder.mkdir()
    for suffix in ('_skel.txt', '_skelts.txt'):
        lines = (DEMO_BAG.parent / f'synthetic1{suffix}').read_text(encoding='utf-8').splitlines()
        (folder / f'small1{suffix}').write_text('\n'.join(lines[:40]) + '\n', encoding='utf-8')
    return folder / 'small1_skel.txt'


def test_converted_recording_holds_one_kinect_v2_array_per_line(
    assembly1_bag: Path, pic_demos: Path
) -> None:
    """Message k is skeleton line k: 25 markers, ids 100..124, camera space, the file's stamp."""
    recording = load_kinect_v2_recording(pic_demos / 'assembly1_skel.txt')
    decoded = decoded_markers(assembly1_bag)
    assert len(decoded) == len(recording) == 1404
    for index in (0, 1, 700, 1403):
        receive, header, ids, positions = decoded[index]
        assert ids == tuple(range(100, 125))
        assert np.array_equal(positions, recording.joints[index])
        assert receive == header == round(recording.stamps[index] * 1e9)
        assert stamp_from_ns(header) == recording.stamps[index]
    from rosbags.highlevel import AnyReader

    with AnyReader([assembly1_bag]) as reader:
        connection, _, raw = next(iter(reader.messages()))
        marker = reader.deserialize(raw, connection.msgtype).markers[0]
    assert connection.topic == '/body_tracking_data'
    assert marker.header.frame_id == KINECT_V2_FRAME_ID
    assert (marker.type, marker.action, marker.scale.x) == (2, 0, 0.05)
    assert (marker.pose.orientation.w, marker.lifetime.nanosec) == (1.0, 250_000_000)


def test_converted_recording_evaluates_like_its_text_files(
    assembly1_bag: Path, pic_demos: Path
) -> None:
    """PIC on Baxter: every metric except the solve times is identical for the bag and the text."""
    robot = load_robot('baxter')
    solver = SolverConfig(name='pic')
    text = load_demonstration('assembly1')
    bag = demonstration_from_bag(
        assembly1_bag,
        segments=pic_demos / 'assembly_1.txt',
        task_arms=pic_demos / 'paper_configs' / 'baxter_config_assembly1.json',
        name='assembly1',
    )
    assert same_frames(text.frames, bag.frames)
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
    custom = bag_info(assembly1_bag).custom_data
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
        reference = decoded_markers(bag)[:40]
        for message, (stamp, _, ids, positions) in zip(messages, reference, strict=True):
            assert message.log_time_ns == stamp
            assert tuple(m.id for m in message.ros_msg.markers) == ids
            assert [m.pose.position.z for m in message.ros_msg.markers] == positions[:, 2].tolist()


def test_sqlite3_and_version_9_bags_read_back_the_same(
    small_recording: Path, tmp_path: Path
) -> None:
    """The sqlite3 storage and metadata version 9 hold the same skeletons as MCAP version 8."""
    mcap = convert_kinect_v2_text(small_recording, tmp_path / 'small_mcap')
    sqlite = convert_kinect_v2_text(
        small_recording, tmp_path / 'small_sqlite', storage='sqlite3', version=9
    )
    assert (bag_info(mcap).storage, bag_info(mcap).version) == ('mcap', 8)
    assert (bag_info(sqlite).storage, bag_info(sqlite).version) == ('sqlite3', 9)
    frames = skeleton_frames_from_bag(mcap)
    assert len(frames) == 40
    assert same_frames(skeleton_frames_from_bag(sqlite), frames)
    assert same_frames(skeleton_frames_from_bag(sqlite / 'small_sqlite.db3'), frames)
    assert 'pic_ros.segments' not in bag_info(mcap).custom_data


def test_epoch_shifts_every_stamp(small_recording: Path, tmp_path: Path) -> None:
    """``epoch_ns`` is added to the header and receive stamps; the joints do not change."""
    epoch = 1_700_000_000 * 1_000_000_000
    plain = convert_kinect_v2_text(small_recording, tmp_path / 'plain')
    shifted = convert_kinect_v2_text(small_recording, tmp_path / 'epoch', epoch_ns=epoch)
    for before, after in zip(decoded_markers(plain), decoded_markers(shifted), strict=True):
        assert after[0] == after[1] == before[0] + epoch
        assert np.array_equal(after[3], before[3])


def test_convert_command_writes_and_describes_the_bag(
    small_recording: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m pic_ros_tools convert`` exits 0 and prints the bag; a bad input exits 2."""
    out = tmp_path / 'cli_bag'
    status = run_convert(
        [str(small_recording), str(out), '--topic', 'skeletons', '--body-id', '3', '--epoch', '5']
    )
    assert status == 0
    printed = capsys.readouterr().out
    assert '/skeletons' in printed and '40 msgs' in printed
    first = decoded_markers(out)[0]
    assert first[2] == tuple(range(300, 325))
    assert first[0] == 5_000_000_000 + 46_842_000
    assert run_convert([str(tmp_path / 'none_skel.txt'), str(tmp_path / 'x')]) == 2
    assert 'not found' in capsys.readouterr().err
    assert run_convert([str(small_recording), str(out)]) == 2
    assert 'exists' in capsys.readouterr().err


def test_convert_says_in_one_line_when_it_makes_up_stamps(tmp_path: Path, capsys) -> None:
    """A recording without its _skelts.txt is converted with a one-line notice on stderr."""
    skeleton = tmp_path / 'take1_skel.txt'
    demo = Path(__file__).parent.parent / 'pic_ros_tools' / 'demo' / 'synthetic1_skel.txt'
    lines = demo.read_text().splitlines()[:30]
    skeleton.write_text('\n'.join(lines) + '\n')
    assert run_convert([str(skeleton), str(tmp_path / 'bag')]) == 0
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'made-up 30 Hz stamps' in err
    assert load_kinect_v2_recording(skeleton).synthetic_stamps


def test_a_text_recording_is_replayed_as_its_kinect_v2_conversion(
    small_recording: Path, tmp_path: Path
) -> None:
    """A text recording becomes a Kinect v2 bag in the scratch folder with the text's skeletons."""
    replayable = replayable_recording(small_recording, tmp_path)
    text = load_demonstration(str(small_recording))
    assert (replayable.source, replayable.topic) == ('kinect_v2', '/body_tracking_data')
    assert replayable.bag.parent == tmp_path
    assert replayable.demonstration.name == text.name == 'small1'
    assert same_frames(replayable.demonstration.frames, text.frames)


def test_a_bag_is_replayed_as_it_is_with_the_source_its_markers_give(tmp_path: Path) -> None:
    """The demo bag is not copied; its markers are Azure Kinect's; its segments are kept."""
    replayable = replayable_recording(DEMO_BAG / 'synthetic1_bag.mcap', tmp_path)
    text = load_demonstration('demo')
    assert replayable.bag == DEMO_BAG
    assert (replayable.source, replayable.topic) == ('azure_kinect', '/body_tracking_data')
    segments = replayable.demonstration.segments
    assert [(s.start, s.stop) for s in segments] == [(s.start, s.stop) for s in text.segments]
    assert replayable.demonstration.task_arms == text.task_arms
    assert same_frames(without_face(replayable.demonstration.frames), text.frames)
    assert not any(tmp_path.iterdir())


def test_the_shared_azure_kinect_bag_is_replayed_from_its_own_topic(
    shared_data: Path, tmp_path: Path
) -> None:
    """The real bag's topic and encoding are found; its skeletons are those of evaluate --bag."""
    bag = shared_data / 'azure_kinect' / 'body_tracking_ergonomics'
    replayable = replayable_recording(bag, tmp_path)
    assert (replayable.source, replayable.topic) == ('azure_kinect', AZURE_TOPIC)
    assert replayable.bag == bag and not any(tmp_path.iterdir())
    assert same_frames(replayable.demonstration.frames, demonstration_from_bag(bag).frames)


@pytest.mark.parametrize('seconds', [0.2, 0.5, 1.0, 10.0])
def test_the_played_part_holds_the_skeletons_a_replay_of_that_duration_publishes(
    small_recording: Path, tmp_path: Path, seconds: float
) -> None:
    """The frames scored for ``--duration S`` are those of the messages the replay sends."""
    replayable = replayable_recording(small_recording, tmp_path)
    start = bag_info(replayable.bag).start_ns
    sent = list(read_messages(replayable.bag, start_ns=start, stop_ns=start + int(seconds * 1e9)))
    played = replayable.played(seconds)
    assert len(played.frames) == len(sent)
    assert same_frames(played.frames, replayable.demonstration.frames[: len(sent)])
    assert len(played.segments) == 1 and replayable.played(None) is replayable.demonstration


@pytest.mark.parametrize(
    'name, content',
    [('short_skel.txt', '1 2 3\n'), ('missing_skel.txt', None), ('folder', ''),
     ('nothing.mcap', None)],
)
def test_a_recording_that_cannot_be_read_is_refused_with_its_reason(
    tmp_path: Path, name: str, content: str | None
) -> None:
    """Malformed text, a missing file, a folder that is no bag, a missing bag: one error each."""
    path = tmp_path / name
    if content == '':
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    with pytest.raises(PicRosError, match=name):
        replayable_recording(path, tmp_path)
