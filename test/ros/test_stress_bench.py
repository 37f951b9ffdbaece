"""
The stress run: a real-time stream into teleop, every frame accounted for, one person.

Accounted for at each stage: the skeleton node (sent = frames_in + lost_upstream, frames_in =
skeletons + counted drops) and the solver (every skeleton handed to it solved, or counted as
superseded, too old or rejected).
"""

from __future__ import annotations

import pytest

pytest.importorskip('rclpy')
stress = pytest.importorskip('pic_ros_tools.ros.stress_bench')

pytestmark = [pytest.mark.ros, pytest.mark.slow]

SHORT = stress.Scenario(start=1.5, every=30.0, gap=1.5, stranger=2.0)
"""The person leaves at 1.5 s for 1.5 s, then a second figure is alone in view for 2 s."""


def test_scenario_shows_the_person_then_nobody_then_the_second_figure_then_the_person():
    scenario = stress.Scenario(start=10.0, every=60.0, gap=3.0, stranger=5.0)
    assert [scenario.scene(t) for t in (0.0, 9.9, 10.0, 12.9, 13.0, 17.9, 18.0, 70.0, 73.5)] == [
        'person', 'person', 'nobody', 'nobody', 'stranger', 'stranger', 'person', 'nobody',
        'stranger',
    ]


def test_marker_stream_every_frame_is_processed_or_counted_and_nobody_new_is_taken_up(tmp_path):
    result = stress.run_stress('azure_kinect', 6.0, hog=False, log_dir=tmp_path, scenario=SHORT)

    assert result.sent == 180
    assert result.frames_in + result.lost_upstream == result.sent
    assert result.unaccounted == 0
    assert result.unprocessed == 0
    assert result.handed_to_solver == result.skeletons_out
    assert result.solver_unprocessed == 0
    assert result.stranger_frames_sent == 60
    far = result.dropped['far_body']
    skipped = result.lost_upstream + result.dropped.get('superseded', 0)  # never looked at
    assert result.stranger_frames_sent - skipped <= far <= result.stranger_frames_sent
    assert result.people_taken_up == 1
    assert result.identity_switches == 0
    assert result.commands > 0


def test_xsens_stream_every_datagram_is_processed_or_counted(tmp_path):
    result = stress.run_stress('xsens_mvn', 3.0, hog=False, log_dir=tmp_path)

    assert result.sent == 720
    assert result.unaccounted == 0
    assert result.unprocessed == 0
    assert result.lost_in_socket is not None and result.lost_in_socket <= result.lost_upstream
    assert result.handed_to_solver == result.skeletons_out
    assert result.solver_unprocessed == 0
    assert result.identity_switches == 0
    assert result.commands > 0
