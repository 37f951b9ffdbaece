"""
Exceptions raised by the pic_ros core.

Every error the core raises on purpose derives from :class:`PicRosError`, so callers (the ROS
nodes, the command line) can catch the whole family at one boundary. Solver outcomes such as
"did not converge" are *not* exceptions: they are reported in result values.
"""

from __future__ import annotations


class PicRosError(Exception):
    """Base class of every error raised on purpose by pic_ros."""


class ConfigError(PicRosError, ValueError):
    """A configuration value, parameter or YAML file is invalid."""


class ChainError(PicRosError):
    """A URDF, kinematic chain or arm definition cannot be used."""


class SkeletonError(PicRosError, ValueError):
    """A skeleton frame is invalid and must be dropped (the message says why)."""


class RecordingError(PicRosError):
    """A recording, segment file or bag cannot be read."""
