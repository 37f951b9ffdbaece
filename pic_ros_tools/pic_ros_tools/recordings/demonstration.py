"""
A recording to score: tracker-frame skeletons cut into task segments, with the task arm(s) of each.

Every source of recordings (the PIC paper's Kinect v2 text files, rosbags, synthetic takes) is
turned into a :class:`Demonstration`; ``evaluate`` and ``bench`` take nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pic_ros.skeleton import Side, SkeletonFrame
from pic_ros_tools.recordings.paper import PaperDemonstration, Segment
from pic_ros_tools.recordings.paper_task import PaperPad


@dataclass(frozen=True)
class Demonstration:
    """
    A recording to evaluate: tracker-frame skeletons, segments and task arms.

    :param name: Recording name.
    :param frames: Every skeleton of the recording, in time order, ``tracker`` frame.
    :param segments: Demonstration segments (frame index ranges); one covering everything when the
        recording has no segment file.
    :param task_arms: The person's task arm(s) per segment.
    :param pads: The task surface per paper robot name, for the occlusion metric
        (:mod:`pic_ros_tools.occlusion_scores`); empty when the recording has no task surface.
    """

    name: str
    frames: tuple[SkeletonFrame, ...]
    segments: tuple[Segment, ...]
    task_arms: tuple[frozenset[Side], ...]
    pads: Mapping[str, PaperPad] = field(default_factory=dict)

    @classmethod
    def from_paper(cls, paper: PaperDemonstration) -> Demonstration:
        """
        Wrap a PIC paper recording.

        :param paper: Recording with segments and task arms.
        :return: The demonstration.
        """
        return cls(
            name=paper.name,
            frames=tuple(paper.recording.frames()),
            segments=paper.segments,
            task_arms=paper.task_arms,
            pads=paper.pads,
        )

    @classmethod
    def whole(cls, name: str, frames: Sequence[SkeletonFrame]) -> Demonstration:
        """
        Make one segment of a whole recording, with both arms as task arms.

        :param name: Recording name.
        :param frames: Tracker-frame skeletons.
        :return: The demonstration.
        """
        count = len(frames)
        segment = Segment(index=0, start=0, stop=count, first_line=1, last_line=max(count, 1))
        return cls(name, tuple(frames), (segment,), (frozenset({Side.LEFT, Side.RIGHT}),))
