"""The skeleton row of ``bench``: the skeleton node's processing of each tracker message."""

from __future__ import annotations

from pic_ros_tools.bench import bench_skeleton, skeleton_bags
from pic_ros_tools.report import skeleton_table
from pic_ros_tools.resources import demo_dir


def test_skeleton_row_times_every_message_of_the_bag():
    """Every MarkerArray of the shipped demo bag is timed; the accepted ones are counted."""
    (row,) = bench_skeleton([demo_dir() / 'synthetic1_bag'], passes=1)

    assert row['recording'] == 'synthetic1_bag'
    assert row['messages'] == 1099
    assert 0 < row['skeletons'] <= row['messages']
    assert 0.0 < row['ms_p50'] <= row['ms_p99'] <= row['ms_max']
    assert 'synthetic1_bag' in skeleton_table([row])


def test_skeleton_bags_always_include_the_shipped_demo_bag():
    """The shipped bag is timed on every machine; the real recording only where it is."""
    bags = skeleton_bags()

    assert bags[-1] == demo_dir() / 'synthetic1_bag'
    assert all(bag.exists() for bag in bags)
