"""The demo: separate ROS 2 processes over DDS, recorded and drawn."""

from __future__ import annotations

import json

import pytest

pytest.importorskip('rclpy')
pytest.importorskip('mujoco')
run_demo = pytest.importorskip('pic_ros.ros.demo').run_demo

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_short_demo_run_writes_every_output(tmp_path):
    """A few seconds of the shipped bag through the five processes give all the outputs."""
    out = tmp_path / 'demo_out'
    status = run_demo(['--robot', 'baxter', '--duration', '4', '--out', str(out), '--fps', '4'])
    assert status == 0, (out / 'logs').glob('*.log')
    for name in ('animation.gif', 'frame.png', 'joints.png', 'metrics.md', 'metrics.json'):
        assert (out / name).stat().st_size > 1000, name
    metrics = json.loads((out / 'metrics.json').read_text())
    live = metrics['live_run']
    assert live['skeletons'] > 50
    assert live['limit_violations_sim'] == 0
    assert live['peak_command_velocity_over_limit'] <= 1.0 + 1e-9
    assert {record['solver'] for record in metrics['evaluate']} == {'fabrik', 'pic', 'pics'}
