"""
Convert: a Kinect v2 text recording (the PIC paper's format) as a rosbag2 of body-tracking markers.

``python -m pic_ros_tools convert`` (:func:`run_convert`) writes every skeleton line of a
``<task><n>_skel.txt`` as one MarkerArray in the Kinect v2 marker encoding
(:mod:`pic_ros_tools.recordings.skeleton_bag_writer`), and stores the recording's segments and task
arms in the bag's ``custom_data`` (:mod:`pic_ros_tools.recordings.annotations`) when known, so that
a converted paper recording evaluates like its text files without them.

Time stamps: the header stamp of every marker **and** the bag's receive time stamp of the message
are both the frame's capture time, ``epoch_ns`` plus the recording's own time rounded to the
nanosecond. The text recordings count seconds from the start of the take, so with the default
``epoch_ns = 0`` the bag starts near 1970-01-01 00:00:00 UTC: no date is made up, ``ros2 bag
play`` plays relative to the first message anyway, and stamps decode to exactly the floats of the
text file (:mod:`pic_ros_tools.recordings.stamps`), so ``evaluate`` gives bit-identical results on
a converted bag and on its text recording. Nodes that compare stamps with their wall clock need
``ros2 bag play --clock`` and ``use_sim_time``, as for any old bag, or a non-zero ``epoch_ns``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
import contextlib
from dataclasses import dataclass
from pathlib import Path
import sys

from pic_ros.exceptions import PicRosError, RecordingError
from pic_ros.skeleton import Side
from pic_ros.trackers.markers import KINECT_V2
from pic_ros_tools.recordings.annotations import CUSTOM_PREFIX, segment_annotations
from pic_ros_tools.recordings.bag_demonstration import demonstration_from_decoded
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.kinect_v2_text import (
    load_kinect_v2_recording,
    recording_name,
    synthetic_stamps_notice,
)
from pic_ros_tools.recordings.paper import (
    load_paper_demonstration,
    load_segments,
    load_task_arms,
    Segment,
)
from pic_ros_tools.recordings.rosbag import (
    absolute_topic,
    bag_info,
    BAG_SUFFIXES,
    format_bag_info,
    resolve_bag_path,
)
from pic_ros_tools.recordings.rosbag_writer import BAG_VERSION, STORAGES
from pic_ros_tools.recordings.skeleton_bag_reader import decode_skeleton_bag
from pic_ros_tools.recordings.skeleton_bag_writer import (
    DEFAULT_BODY_ID,
    DEFAULT_TOPIC,
    KINECT_V2_FRAME_ID,
    write_skeleton_bag,
)
from pic_ros_tools.recordings.stamps import NS_PER_S, stamps_to_ns


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
    notice: Callable[[str], None] | None = None,
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
    ``<task><n>_config.json``), as :func:`~pic_ros_tools.recordings.paper.load_paper_demonstration`
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
    :param notice: Called with one line when the stamps are made up (no time-stamp file).
    :return: The bag directory.
    :raises RecordingError: If a file is missing or malformed, or the output exists.
    :raises ConfigError: On invalid options.
    """
    skeleton = Path(skeleton_path)
    recording = load_kinect_v2_recording(skeleton, stamps_path)
    if notice is not None and recording.synthetic_stamps:
        notice(synthetic_stamps_notice(recording, skeleton_path))
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
        custom.update(segment_annotations(segments, task_arms))
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


@dataclass(frozen=True)
class ReplayableRecording:
    """
    A recording ready to be replayed into the skeleton node, and what it holds.

    :param bag: The rosbag2 to replay (the given bag, or the conversion of a text recording).
    :param topic: Its body-tracking MarkerArray topic (absolute).
    :param source: The skeleton node's ``source`` for its markers: ``azure_kinect`` or
        ``kinect_v2``, detected from the joint indices.
    :param demonstration: Its skeletons, segments and task arms, as ``evaluate --bag`` reads
        them.
    """

    bag: Path
    topic: str
    source: str
    demonstration: Demonstration

    @property
    def seconds(self) -> float:
        """Return the time from its first to its last skeleton [s]."""
        frames = self.demonstration.frames
        return frames[-1].stamp - frames[0].stamp

    def played(self, duration: float | None) -> Demonstration:
        """
        Return what a replay of the first seconds of the recording plays.

        :param duration: Seconds played from the first skeleton, or None for all of it.
        :return: The whole demonstration, or the skeletons stamped less than ``duration`` after
            the first one, as one segment with both arms (segments cut short are not the
            recording's segments).
        """
        frames = self.demonstration.frames
        if duration is None:
            return self.demonstration
        end = frames[0].stamp + duration
        return Demonstration.whole(
            self.demonstration.name, tuple(frame for frame in frames if frame.stamp < end)
        )


def replayable_recording(
    path: Path | str, scratch: Path | str, *, notice: Callable[[str], None] | None = None
) -> ReplayableRecording:
    """
    Prepare a recording for replay: a bag as it is, a Kinect v2 text recording converted.

    A directory, a ``metadata.yaml`` or a ``.mcap`` / ``.db3`` file is read as a rosbag2 of
    MarkerArrays (Azure Kinect or Kinect v2 encoding, detected); any other path as a Kinect v2
    text recording (:func:`convert_kinect_v2_text`, its time-stamp and segment files used when
    they are beside it), written as a bag into ``scratch``. The bag's skeletons are decoded once.

    :param path: The recording.
    :param scratch: An existing folder for the converted bag.
    :param notice: Called with one line when the stamps of a text recording are made up.
    :return: The bag to replay, its topic and tracker source, and its skeletons.
    :raises PicRosError: If the recording cannot be read or holds no tracked body
        (:class:`~pic_ros.exceptions.RecordingError`, or
        :class:`~pic_ros.exceptions.ConfigError` for contradictory markers).
    """
    given = Path(path)
    if given.is_dir() or given.name == 'metadata.yaml' or given.suffix in BAG_SUFFIXES:
        bag, name = resolve_bag_path(given), None
    else:
        name = recording_name(given)
        bag = convert_kinect_v2_text(given, Path(scratch) / name, notice=notice)
    decoded = decode_skeleton_bag(bag, None, 'auto')
    demonstration = demonstration_from_decoded(bag, decoded, name=name)
    assert decoded.tracker is not None  # a bag with a skeleton has markers
    return ReplayableRecording(bag, decoded.topic, decoded.tracker.name, demonstration)


def _epoch_argument(text: str) -> int:
    try:
        seconds = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f'expected whole seconds since 1970, got {text!r}'
        ) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f'expected whole seconds >= 0, got {text!r}')
    return seconds * NS_PER_S


def build_convert_parser() -> argparse.ArgumentParser:
    """
    Build the argument parser of ``python -m pic_ros_tools convert``.

    :return: The parser.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros_tools convert',
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
    Run ``python -m pic_ros_tools convert`` and print what was written.

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
            notice=lambda line: print(line, file=sys.stderr),
        )
        info = bag_info(path)
    except PicRosError as err:
        print(f'pic_ros convert: {err}', file=sys.stderr)
        return 2
    print(format_bag_info(info))
    return 0


__all__ = [
    'ReplayableRecording',
    'build_convert_parser',
    'convert_kinect_v2_text',
    'replayable_recording',
    'run_convert',
]
