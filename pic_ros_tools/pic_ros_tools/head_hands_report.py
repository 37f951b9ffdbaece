"""
What ``evaluate --head-hands`` (``python -m pic_ros_tools``) measures on robots and recordings.

Beside the estimator table of :mod:`pic_ros_tools.head_hands` (the person's head angles and hand
states against the labelled synthetic takes), two more:

- **robots** (:func:`robot_rows`): the same takes through the whole core path of the solver node
  (:class:`~pic_ros.human.processing.SkeletonProcessor`, then
  :class:`~pic_ros.head_and_hands.HeadAndHandsImitator`) for every robot with a head or
  grippers. Head: the error of each head joint target against the target the true head angles
  give, over the frames where that true target lies inside the joint's limits (median and 95th
  percentile, [deg]). Grippers: the share of frames whose gripper target is the annotated
  state's position (both grippers; the frames of
  :func:`~pic_ros_tools.head_hands.counted_frames`), and the most changes of one
  gripper's target in any 1 s window;
- **real recordings** (:func:`recording_rows`), which have no labels: how often the head is seen,
  and how the hand states behave (share of frames open, state changes per second, the most in
  any 1 s window): chatter shows here whatever the truth was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

import numpy as np
import numpy.typing as npt
from pic_ros.correspondence import human_side_for, MappingMode
from pic_ros.exceptions import SkeletonError
from pic_ros.head_and_hands import HeadAndHandsImitator
from pic_ros.human.hands import HandState, HandStateTracker
from pic_ros.human.head import head_angles
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.robot.robot import Robot
from pic_ros.skeleton import Side
from pic_ros_tools.head_hands import counted_frames, max_in_window
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.synthetic.head_hands_take import HeadHandsTake

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RobotHeadHandsRow:
    """
    One robot on the labelled takes.

    :param robot: Robot name.
    :param head_joints: Head joints driven ('' without a head).
    :param head_median: Median head joint error where the truth is within limits [deg].
    :param head_p95: Its 95th percentile [deg].
    :param head_within: Share of the joint samples whose true target is within limits [%].
    :param grippers: Grippers driven (their arm names, '' without).
    :param gripper_agreement: Frames whose gripper target is the annotated state's [%].
    :param gripper_max_changes: Most target changes of one gripper in any 1 s window.
    """

    robot: str
    head_joints: str
    head_median: float
    head_p95: float
    head_within: float
    grippers: str
    gripper_agreement: float
    gripper_max_changes: int


@dataclass(frozen=True)
class RecordingHandsRow:
    """
    One real recording (no labels).

    :param recording: Recording name.
    :param frames: Skeletons the processing accepted.
    :param head_seen: Frames with a head estimate [%].
    :param open_share: Per hand (left, right), frames whose state is open, of those known [%].
    :param changes_per_second: Per hand, state changes per second of recording.
    :param max_changes: Per hand, the most changes in any 1 s window.
    """

    recording: str
    frames: int
    head_seen: float
    open_share: tuple[float, float]
    changes_per_second: tuple[float, float]
    max_changes: tuple[int, int]


def robot_rows(
    robots: Sequence[Robot],
    takes: Sequence[HeadHandsTake],
    processing: ProcessingConfig | None = None,
) -> list[RobotHeadHandsRow]:
    """
    Measure each robot's head and gripper targets on labelled takes.

    :param robots: Robots; those with neither head nor grippers are left out.
    :param takes: Labelled takes (:func:`~pic_ros_tools.synthetic.generate_head_hands_take`).
    :param processing: Skeleton processing; default :class:`ProcessingConfig()`.
    :return: One row per robot with a head or grippers.
    """
    rows = []
    for robot in robots:
        if robot.head is None and not robot.grippers:
            continue
        tally = _HeadHandsTally(robot)
        for take in takes:
            tally.add_take(take, SkeletonProcessor(processing or ProcessingConfig()))
        rows.append(tally.row())
    return rows


class _HeadHandsTally:
    """
    One robot's head errors and gripper agreement, summed over labelled takes (:func:`robot_rows`).

    :param robot: A robot with a head or grippers.
    """

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        mode = MappingMode(robot.spec.mapping.mode)
        self.mirror = mode is MappingMode.MIRROR
        self.columns = {
            arm: 0 if human_side_for(robot.arms[arm].side, mode) is Side.LEFT else 1
            for arm in robot.grippers
        }
        """Per gripper arm, the person's hand that drives it (0 left, 1 right)."""
        self.head_errors: list[float] = []
        self.head_samples = 0
        self.agree = 0
        self.counted = 0
        self.worst = 0

    def add_take(self, take: HeadHandsTake, processor: SkeletonProcessor) -> None:
        """Imitate one take frame by frame and add its head errors and gripper states."""
        imitator = HeadAndHandsImitator(self.robot)
        changes: dict[str, list[float]] = {arm: [] for arm in self.robot.grippers}
        last: dict[str, FloatArray] = {}
        weights = {arm: counted_frames(take, column) for arm, column in self.columns.items()}
        for index, frame in enumerate(take.frames):
            try:
                body = processor.process(frame)
            except SkeletonError:
                continue
            step = imitator.step(body)
            self._add_head(take, index, step.head)
            for arm, column in self.columns.items():
                target = step.grippers.get(arm)
                if target is not None and arm in last and not np.allclose(target, last[arm]):
                    changes[arm].append(float(take.stamps[index]))
                if target is not None:
                    last[arm] = target
                if weights[arm][index]:
                    self._add_gripper(arm, target, not take.hand_open[index, column])
        self.worst = max([self.worst] + [max_in_window(times) for times in changes.values()])

    def _add_head(self, take: HeadHandsTake, index: int, head: FloatArray | None) -> None:
        """Add a frame's head error [deg] on the joints whose true target is within limits."""
        if self.robot.head is None:
            return
        raw = self.robot.head.unlimited_targets(
            take.head_yaw[index], take.head_pitch[index], self.mirror
        )
        truth = self.robot.head.group.clamp(raw)
        within = truth == raw
        self.head_samples += within.size
        if head is not None:
            self.head_errors += np.degrees(np.abs(head - truth)[within]).tolist()

    def _add_gripper(self, arm: str, target: FloatArray | None, closed: bool) -> None:
        """Add whether a gripper's target agrees with the labelled hand state."""
        self.counted += 1
        gripper = self.robot.grippers[arm]
        self.agree += target is not None and bool(np.allclose(target, gripper.targets(closed)))

    def row(self) -> RobotHeadHandsRow:
        """Return the robot's row."""
        robot = self.robot
        errors = np.array(self.head_errors)
        return RobotHeadHandsRow(
            robot=robot.name,
            head_joints=', '.join(robot.head.joint_names) if robot.head is not None else '',
            head_median=float(np.median(errors)) if errors.size else math.nan,
            head_p95=float(np.percentile(errors, 95)) if errors.size else math.nan,
            head_within=(
                100.0 * errors.size / self.head_samples if self.head_samples else math.nan
            ),
            grippers=', '.join(robot.grippers),
            gripper_agreement=100.0 * self.agree / self.counted if self.counted else math.nan,
            gripper_max_changes=self.worst,
        )


def recording_rows(
    demonstrations: Sequence[Demonstration], processing: ProcessingConfig | None = None
) -> list[RecordingHandsRow]:
    """
    Measure how often the head is seen and how the hand states behave on real recordings.

    :param demonstrations: Recordings (``tracker`` frames).
    :param processing: Skeleton processing; default :class:`ProcessingConfig()`.
    :return: One row per recording.
    """
    rows = []
    for demonstration in demonstrations:
        processor = SkeletonProcessor(processing or ProcessingConfig())
        tracker = HandStateTracker()
        frames = seen = 0
        opened = [0, 0]
        known = [0, 0]
        changes: list[list[float]] = [[], []]
        previous = [HandState.UNKNOWN, HandState.UNKNOWN]
        stamps = []
        for frame in demonstration.frames:
            try:
                body = processor.process(frame)
            except SkeletonError:
                continue
            frames += 1
            stamps.append(body.stamp)
            seen += head_angles(body) is not None
            estimates = tracker.update(body)
            for column, side in enumerate((Side.LEFT, Side.RIGHT)):
                state = estimates[side].state
                if state is HandState.UNKNOWN:
                    continue
                known[column] += 1
                opened[column] += state is HandState.OPEN
                if previous[column] not in (HandState.UNKNOWN, state):
                    changes[column].append(body.stamp)
                previous[column] = state
        duration = (stamps[-1] - stamps[0]) if len(stamps) > 1 else math.nan
        rows.append(RecordingHandsRow(
            recording=demonstration.name,
            frames=frames,
            head_seen=100.0 * seen / frames if frames else math.nan,
            open_share=(
                100.0 * opened[0] / known[0] if known[0] else math.nan,
                100.0 * opened[1] / known[1] if known[1] else math.nan,
            ),
            changes_per_second=(len(changes[0]) / duration, len(changes[1]) / duration),
            max_changes=(max_in_window(changes[0]), max_in_window(changes[1])),
        ))
    return rows


def robot_table(rows: Sequence[RobotHeadHandsRow]) -> str:
    """
    Format :func:`robot_rows` as a markdown table.

    :param rows: The rows.
    :return: The table.
    """
    lines = [
        '| robot | head joints | head error med / p95 [deg] (truth within limits) | '
        'grippers | gripper = annotation [%] | max gripper changes in 1 s |',
        '|---|---|---|---|---|---|',
    ]
    for row in rows:
        head = (
            f'{row.head_median:.1f} / {row.head_p95:.1f} ({row.head_within:.0f} %)'
            if row.head_joints else '–'
        )
        grippers = f'{row.gripper_agreement:.1f}' if row.grippers else '–'
        changes = str(row.gripper_max_changes) if row.grippers else '–'
        lines.append(
            f'| {row.robot} | {row.head_joints or "–"} | {head} | {row.grippers or "–"} | '
            f'{grippers} | {changes} |'
        )
    return '\n'.join(lines)


def recording_table(rows: Sequence[RecordingHandsRow]) -> str:
    """
    Format :func:`recording_rows` as a markdown table.

    :param rows: The rows.
    :return: The table.
    """
    lines = [
        '| recording | frames | head seen [%] | open [%] left / right | '
        'changes/s left / right | max changes in 1 s left / right |',
        '|---|---|---|---|---|---|',
    ]
    for row in rows:
        lines.append(
            f'| {row.recording} | {row.frames} | {row.head_seen:.0f} | '
            f'{row.open_share[0]:.0f} / {row.open_share[1]:.0f} | '
            f'{row.changes_per_second[0]:.2f} / {row.changes_per_second[1]:.2f} | '
            f'{row.max_changes[0]} / {row.max_changes[1]} |'
        )
    return '\n'.join(lines)
