"""TEMPORARY stand-in until the human side lands (issue10-human)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum
import math
from typing import Any

from pic_ros.human.skeleton import Side, SkeletonFrame
from pic_ros.schema import ParameterDef


class HandState(enum.Enum):
    """Hand state."""

    OPEN = 'open'
    CLOSED = 'closed'
    UNKNOWN = 'unknown'


HAND_PARAMETERS: tuple[ParameterDef, ...] = ()


@dataclass(frozen=True)
class HandConfig:
    """Stand-in."""

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> HandConfig:
        """Stand-in."""
        del values
        return cls()


@dataclass(frozen=True)
class HandEstimate:
    """Stand-in."""

    state: HandState
    seen: bool
    aperture: float


class HandStateTracker:
    """Stand-in."""

    def __init__(self, config: HandConfig | None = None) -> None:
        self.config = config

    def update(self, frame: SkeletonFrame) -> Mapping[Side, HandEstimate]:
        """Return unknown (stand-in)."""
        del frame
        return {side: HandEstimate(HandState.UNKNOWN, False, math.nan) for side in Side}

    def reset(self) -> None:
        """Stand-in."""
