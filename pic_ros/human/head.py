"""TEMPORARY stand-in until the human side lands (issue10-human)."""

from __future__ import annotations

from dataclasses import dataclass

from pic_ros.human.skeleton import SkeletonFrame


@dataclass(frozen=True)
class HeadAngles:
    """Head yaw and pitch [rad] in the body frame."""

    yaw: float
    pitch: float


def head_angles(frame: SkeletonFrame) -> HeadAngles | None:
    """Return None (stand-in)."""
    del frame
    return None
