"""
Evaluation of the head and hand estimators on labelled synthetic takes.

For each take of :func:`~pic_ros_tools.synthetic.head_hands_take.generate_head_hands_take` the
tracker skeletons go through the skeleton processing of the live pipeline
(:class:`~pic_ros.human.processing.SkeletonProcessor`: extremity screening, smoothing, body frame),
then :func:`~pic_ros.human.head.head_angles` and
:class:`~pic_ros.human.hands.HandStateTracker`. Measured (:class:`HeadHandsRow`):

- **head**: the absolute yaw and pitch errors against the truth over the frames with an
  estimate, median and 95th percentile [deg], and the share of frames with an estimate. The
  points are Azure-Kinect-like (face rows present); Kinect v2 has no face points, so there is no
  head estimate for it at all;
- **hands**: agreement of the debounced state with the annotation, in % of the frames of both
  hands, leaving out the :data:`AGREEMENT_TOLERANCE` seconds after each annotated change and
  after the start of the take (the time a hand needs to be seen changing: smoothing plus dwell;
  the annotation switches at the middle of the hand's movement). UNKNOWN counts as a
  disagreement;
- **chatter**: the most state changes of one hand in any 1 s window, and the changes per second
  of both hands together next to the annotated changes per second (a state taken from UNKNOWN is
  not a change).

Run ``python -m pic_ros_tools.head_hands`` for the table of :data:`HEAD_HANDS_COUNT` suite people.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Final

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import SkeletonError
from pic_ros.human.hands import HandConfig, HandState, HandStateTracker
from pic_ros.human.head import head_angles
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.skeleton import Side
from pic_ros_tools.synthetic.head_hands_take import generate_head_hands_take, HeadHandsTake
from pic_ros_tools.synthetic.suite import SUITE_SEED, suite_specs

FloatArray = npt.NDArray[np.float64]

AGREEMENT_TOLERANCE: Final = 0.5
"""Time after each annotated change (and the start) left out of the hand agreement [s]."""

HEAD_HANDS_COUNT: Final = 12
"""Default number of suite people evaluated."""

_SIDES: Final = (Side.LEFT, Side.RIGHT)


@dataclass(frozen=True)
class HeadHandsRow:
    """
    The figures of one take (or of all takes pooled, ``take == 'all'``).

    :param take: Take name.
    :param height: The person's height [m] (NaN for the pooled row).
    :param distance: Sensor distance [m] (NaN for the pooled row).
    :param head_coverage: Frames with a head estimate [%].
    :param yaw_median: Median absolute yaw error [deg].
    :param yaw_p95: 95th percentile of the absolute yaw error [deg].
    :param pitch_median: Median absolute pitch error [deg].
    :param pitch_p95: 95th percentile of the absolute pitch error [deg].
    :param hand_agreement: Frames of both hands whose state matches the annotation [%].
    :param max_changes_per_window: Most changes of one hand's state in any 1 s window.
    :param changes_per_second: State changes per second, both hands [1/s].
    :param annotated_per_second: Annotated changes per second, both hands [1/s].
    """

    take: str
    height: float
    distance: float
    head_coverage: float
    yaw_median: float
    yaw_p95: float
    pitch_median: float
    pitch_p95: float
    hand_agreement: float
    max_changes_per_window: int
    changes_per_second: float
    annotated_per_second: float


@dataclass(frozen=True)
class _TakeResult:
    row: HeadHandsRow
    yaw_errors: FloatArray
    pitch_errors: FloatArray
    agree: int
    counted: int
    changes: int
    annotated: int
    duration: float


def _wrap_deg(angle: FloatArray) -> FloatArray:
    wrapped: FloatArray = np.degrees(np.abs((angle + np.pi) % (2.0 * np.pi) - np.pi))
    return wrapped


def max_in_window(times: Sequence[float], window: float = 1.0) -> int:
    """
    Return the most events within any half-open time window.

    :param times: Event times [s], any order.
    :param window: Window length [s].
    :return: The largest count (0 without events).
    """
    ordered = sorted(times)
    best = 0
    for index, start in enumerate(ordered):
        best = max(best, int(np.searchsorted(ordered, start + window, side='left')) - index)
    return best


def counted_frames(take: HeadHandsTake, column: int) -> npt.NDArray[np.bool_]:
    """
    Return the frames of one hand that count for agreement with the annotation.

    :param take: The labelled take.
    :param column: 0 for the left hand, 1 for the right.
    :return: Per frame, False within :data:`AGREEMENT_TOLERANCE` after the take's start or an
        annotated change of that hand.
    """
    starts = np.concatenate([[take.stamps[0]], take.hand_changes[column]])
    after = np.searchsorted(starts, take.stamps, side='right') - 1
    counted: npt.NDArray[np.bool_] = take.stamps - starts[after] >= AGREEMENT_TOLERANCE
    return counted


def _evaluate(
    take: HeadHandsTake, processing: ProcessingConfig, hands: HandConfig
) -> _TakeResult:
    processor = SkeletonProcessor(processing)
    tracker = HandStateTracker(hands)
    count = len(take.frames)
    yaw = np.full(count, np.nan)
    pitch = np.full(count, np.nan)
    states = np.full((count, 2), HandState.UNKNOWN, dtype=object)
    for index, frame in enumerate(take.frames):
        try:
            body = processor.process(frame)
        except SkeletonError:
            continue
        angles = head_angles(body)
        if angles is not None:
            yaw[index], pitch[index] = angles.yaw, angles.pitch
        estimates = tracker.update(body)
        for column, side in enumerate(_SIDES):
            states[index, column] = estimates[side].state
    seen = np.isfinite(yaw)
    yaw_errors = _wrap_deg(yaw[seen] - take.head_yaw[seen])
    pitch_errors = _wrap_deg(pitch[seen] - take.head_pitch[seen])

    stamps = take.stamps
    agree = counted = changes = 0
    change_times: list[list[float]] = [[], []]
    for column in range(2):
        excluded = ~counted_frames(take, column)
        expected = [HandState.OPEN if opened else HandState.CLOSED
                    for opened in take.hand_open[:, column]]
        matches = np.array([state is want for state, want in zip(states[:, column], expected)])
        agree += int(np.count_nonzero(matches & ~excluded))
        counted += int(np.count_nonzero(~excluded))
        for index in range(1, count):
            before, now = states[index - 1, column], states[index, column]
            if now is not before and before is not HandState.UNKNOWN:
                change_times[column].append(float(stamps[index]))
        changes += len(change_times[column])
    annotated = sum(len(times) for times in take.hand_changes)
    duration = take.duration
    row = HeadHandsRow(
        take=take.name,
        height=take.spec.height,
        distance=take.spec.camera_distance,
        head_coverage=100.0 * float(np.mean(seen)),
        yaw_median=float(np.median(yaw_errors)) if seen.any() else math.nan,
        yaw_p95=float(np.percentile(yaw_errors, 95)) if seen.any() else math.nan,
        pitch_median=float(np.median(pitch_errors)) if seen.any() else math.nan,
        pitch_p95=float(np.percentile(pitch_errors, 95)) if seen.any() else math.nan,
        hand_agreement=100.0 * agree / counted if counted else math.nan,
        max_changes_per_window=max(max_in_window(times) for times in change_times),
        changes_per_second=changes / duration,
        annotated_per_second=annotated / duration,
    )
    return _TakeResult(row, yaw_errors, pitch_errors, agree, counted, changes, annotated,
                       duration)


def evaluate_head_hands_take(
    take: HeadHandsTake,
    processing: ProcessingConfig | None = None,
    hands: HandConfig | None = None,
) -> HeadHandsRow:
    """
    Measure the head and hand estimators on one labelled take.

    :param take: The take.
    :param processing: Skeleton processing (smoothing); default :class:`ProcessingConfig()`,
        the live pipeline's.
    :param hands: Hand thresholds and dwell; default :class:`HandConfig()`.
    :return: The take's figures.
    """
    return _evaluate(take, processing or ProcessingConfig(), hands or HandConfig()).row


def evaluate_head_hands_suite(
    count: int = HEAD_HANDS_COUNT,
    seed: int = SUITE_SEED,
    processing: ProcessingConfig | None = None,
    hands: HandConfig | None = None,
) -> list[HeadHandsRow]:
    """
    Measure the estimators on the head-and-hands takes of the first suite people.

    :param count: Number of people (:func:`~pic_ros_tools.synthetic.suite.suite_specs`), >= 1.
    :param seed: Suite seed.
    :param processing: Skeleton processing; default :class:`ProcessingConfig()`.
    :param hands: Hand settings; default :class:`HandConfig()`.
    :return: One row per take, then the pooled row ``'all'`` (errors and agreement pooled over
        frames, the largest window count, the rates over the total duration).
    """
    results = [
        _evaluate(
            generate_head_hands_take(spec), processing or ProcessingConfig(),
            hands or HandConfig(),
        )
        for spec in suite_specs(count, seed)
    ]
    yaw = np.concatenate([result.yaw_errors for result in results])
    pitch = np.concatenate([result.pitch_errors for result in results])
    duration = sum(result.duration for result in results)
    pooled = HeadHandsRow(
        take='all',
        height=math.nan,
        distance=math.nan,
        head_coverage=float(np.mean([result.row.head_coverage for result in results])),
        yaw_median=float(np.median(yaw)),
        yaw_p95=float(np.percentile(yaw, 95)),
        pitch_median=float(np.median(pitch)),
        pitch_p95=float(np.percentile(pitch, 95)),
        hand_agreement=100.0 * sum(r.agree for r in results) / sum(r.counted for r in results),
        max_changes_per_window=max(result.row.max_changes_per_window for result in results),
        changes_per_second=sum(result.changes for result in results) / duration,
        annotated_per_second=sum(result.annotated for result in results) / duration,
    )
    return [result.row for result in results] + [pooled]


def head_hands_table(rows: Sequence[HeadHandsRow]) -> str:
    """
    Format rows as a markdown table.

    :param rows: Rows of :func:`evaluate_head_hands_suite` or :func:`evaluate_head_hands_take`.
    :return: The table, one line per row, with a header.
    """
    lines = [
        '| take | height [m] | distance [m] | head seen [%] | yaw err med / p95 [deg] | '
        'pitch err med / p95 [deg] | hands agree [%] | max changes in 1 s | '
        'changes/s (annotated) |',
        '|---|---|---|---|---|---|---|---|---|',
    ]
    for row in rows:
        height = '' if math.isnan(row.height) else f'{row.height:.2f}'
        distance = '' if math.isnan(row.distance) else f'{row.distance:.2f}'
        lines.append(
            f'| {row.take} | {height} | {distance} | {row.head_coverage:.1f} | '
            f'{row.yaw_median:.1f} / {row.yaw_p95:.1f} | '
            f'{row.pitch_median:.1f} / {row.pitch_p95:.1f} | {row.hand_agreement:.1f} | '
            f'{row.max_changes_per_window} | {row.changes_per_second:.2f} '
            f'({row.annotated_per_second:.2f}) |'
        )
    return '\n'.join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """
    Print the head-and-hands table of the synthetic suite.

    :param argv: ``[--count N] [--seed S] [--smoothing exponential|kalman|none]``.
    :return: 0.
    """
    parser = argparse.ArgumentParser(
        prog='python -m pic_ros_tools.head_hands',
        description='Head yaw/pitch error and hand-state agreement on synthetic people.',
    )
    parser.add_argument('--count', type=int, default=HEAD_HANDS_COUNT)
    parser.add_argument('--seed', type=int, default=SUITE_SEED)
    parser.add_argument('--smoothing', default=ProcessingConfig().smoothing)
    args = parser.parse_args(argv)
    rows = evaluate_head_hands_suite(
        args.count, args.seed, ProcessingConfig(smoothing=args.smoothing)
    )
    print(head_hands_table(rows))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
