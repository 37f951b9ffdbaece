"""
Trackers: what a body tracker sends, decoded into skeleton frames in the ``tracker`` frame.

Each tracker is a :class:`~pic_ros.trackers.base.TrackerSource`, registered by its ``source``
name: ``azure_kinect`` and ``kinect_v2`` (body-tracking ``MarkerArray`` messages,
:mod:`~pic_ros.trackers.markers`) and ``xsens_mvn`` (UDP datagrams,
:mod:`~pic_ros.trackers.xsens`); importing this package registers them.
:mod:`~pic_ros.trackers.frames` picks the person to follow, checks each frame and smooths it,
whatever the tracker.
"""

from pic_ros.trackers import markers, xsens  # noqa: F401 - registers the built-in trackers.
from pic_ros.trackers.base import (
    make_tracker,
    register_tracker,
    SOURCE,
    tracker_names,
    TrackerReading,
    TrackerSource,
    Transport,
    unregister_tracker,
)

__all__ = [
    'SOURCE',
    'TrackerReading',
    'TrackerSource',
    'Transport',
    'make_tracker',
    'register_tracker',
    'tracker_names',
    'unregister_tracker',
]
