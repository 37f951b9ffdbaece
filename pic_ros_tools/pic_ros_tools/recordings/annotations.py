"""
Bag annotations: the ``pic_ros.*`` entries of a rosbag2's ``custom_data``.

rosbag2 metadata has a ``custom_data`` map of strings (Humble's reader ignores it). The bags
this package writes store there what a text recording keeps in files beside it, so that a bag
evaluates like its text files without them:

- ``pic_ros.recording``: the recording name; ``pic_ros.source``: the marker format;
  ``pic_ros.topic``: the topic the annotations are for; ``pic_ros.epoch_ns``: the epoch added to
  the stamps; ``pic_ros.synthetic`` and ``pic_ros.seed`` for a synthetic take;
- ``pic_ros.segments``: one line per segment, ``start stop first last``: the half-open range of
  0-based **message** indices on the topic and the first and last line as written in the
  segment file, 1-based inclusive (the fields of :class:`~pic_ros_tools.recordings.paper.Segment`);
- ``pic_ros.task_arms``: the task arm(s) of each segment, comma-separated ``right``, ``left`` or
  ``both``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pic_ros.exceptions import RecordingError
from pic_ros.skeleton import Side
from pic_ros_tools.recordings.paper import Segment

CUSTOM_PREFIX: Final = 'pic_ros.'
"""Prefix of the ``custom_data`` keys written by this package."""

_ARM_TEXT: Final = {
    frozenset({Side.RIGHT}): 'right',
    frozenset({Side.LEFT}): 'left',
    frozenset({Side.LEFT, Side.RIGHT}): 'both',
}

TEXT_ARM: Final = {text: arms for arms, text in _ARM_TEXT.items()}
"""The task arms each ``pic_ros.task_arms`` item names (``right``, ``left`` or ``both``)."""


def _segments_text(segments: Sequence[Segment]) -> str:
    return '\n'.join(
        f'{s.start} {s.stop} {s.first_line} {s.last_line}' for s in segments
    )


def segment_annotations(
    segments: Sequence[Segment], task_arms: Sequence[frozenset[Side]] | None
) -> dict[str, str]:
    """
    Make the ``custom_data`` entries that store segments and, when known, their task arms.

    :param segments: The segments, message ranges on the annotated topic.
    :param task_arms: The task arm(s) of each segment, or None when unknown.
    :return: ``pic_ros.segments`` and, with task arms, ``pic_ros.task_arms``.
    """
    data = {CUSTOM_PREFIX + 'segments': _segments_text(segments)}
    if task_arms is not None:
        data[CUSTOM_PREFIX + 'task_arms'] = ','.join(_ARM_TEXT[arms] for arms in task_arms)
    return data


def segments_from_text(text: str, where: Path) -> tuple[Segment, ...]:
    """
    Parse the stored ``pic_ros.segments`` entry.

    :param text: The entry: one ``start stop first last`` line per segment.
    :param where: The bag, for error messages.
    :return: The segments, in order (``index`` = line number - 1).
    :raises RecordingError: If a line is not four integers.
    """
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


def task_arms_from_text(text: str, where: Path) -> tuple[frozenset[Side], ...]:
    """
    Parse the stored ``pic_ros.task_arms`` entry.

    :param text: The entry: comma-separated ``right``, ``left`` or ``both``.
    :param where: The bag, for error messages.
    :return: The task arm(s) of each segment, in order.
    :raises RecordingError: If an item is none of the three.
    """
    arms = []
    for item in text.split(','):
        if item.strip() not in TEXT_ARM:
            raise RecordingError(
                f'{where}: custom_data {CUSTOM_PREFIX}task_arms must list right, left or both, '
                f'got {item!r}'
            )
        arms.append(TEXT_ARM[item.strip()])
    return tuple(arms)


__all__ = [
    'CUSTOM_PREFIX',
    'TEXT_ARM',
    'segment_annotations',
    'segments_from_text',
    'task_arms_from_text',
]
