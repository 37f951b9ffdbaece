"""
Recordings in and out: rosbag2 files, the Kinect v2 text files, and the PIC paper's segments.

Every reader gives a :class:`~pic_ros_tools.recordings.demonstration.Demonstration`, what
``evaluate`` and ``bench`` score.
"""
