"""
Trackers: what a body tracker sends, decoded into skeleton frames in the ``tracker`` frame.

Each tracker is a :class:`~pic_ros.trackers.base.TrackerSource`: the Azure Kinect and the Kinect
v2 (body-tracking ``MarkerArray`` messages, :mod:`~pic_ros.trackers.markers`) and Xsens MVN (UDP
datagrams, :mod:`~pic_ros.trackers.xsens`). :mod:`~pic_ros.trackers.frames` checks frames and
picks the person to follow.
"""
