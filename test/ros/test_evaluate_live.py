"""``evaluate --live``: a few seconds of the demo recording through the processes, scored."""

from __future__ import annotations

import json
import math

from pic_ros_tools.cli import main
from pic_ros_tools.metrics import LAG_SEARCH
import pytest

pytest.importorskip('rclpy')
pytest.importorskip('mujoco')

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_live_evaluation_of_a_few_seconds_gives_every_figure_beside_the_offline_ones(
    tmp_path, capsys
):
    """
    Figures of evaluate for the live robot and offline, lags, and motion shares of limits.

    How many trajectories a few seconds bring depends on how busy the host is: every controller
    must have taken some, and none of them may break a limit; every chunk the trajectory
    publisher sent passed its continuity check (consecutive points and seams within the limits).
    """
    status = main([
        'evaluate', '--live', '--robot', 'baxter', '--duration', '5', '--json',
        '--logs', str(tmp_path / 'logs'),
    ])
    assert status == 0, sorted((tmp_path / 'logs').rglob('*.log'))
    [record] = json.loads(capsys.readouterr().out)['live']
    live, offline = record['live'], record['offline']
    for key in ('pacc_paper', 'elbow_mae_rad', 'ee_err_cm'):
        assert 0.0 <= live[key] < math.inf and 0.0 <= offline[key] < math.inf, key
    assert len(live['dir_err_deg']) == 2 and len(offline['dir_err_deg']) == 2
    assert live['frames'] == offline['frames'] > 100
    assert live['solver'] == offline['solver'] == 'pic'
    assert live['limit_violations'] == 0
    run = record['run']
    assert run['clock'] == 'sim'
    assert run['engaged'] == 'engaged by service'
    assert run['guard_steps_checked'] > 0  # the collision guard's counts, from /diagnostics
    assert 0 <= run['guard_chunks_refused'] <= 2 * run['guard_steps_checked']
    for group in ('left', 'right'):  # the publisher's continuity check of every chunk it sent
        assert run[f'publisher_{group}_commands_published'] > 0
        assert run[f'publisher_{group}_segment_violations'] == 0, run
    for controller in ('left_arm_controller', 'right_arm_controller'):
        assert run[f'{controller}_accepted'] > 0
        delays = [run[f'{controller}_delay_{which}_ms'] for which in ('p50', 'p99', 'max')]
        assert all(math.isfinite(value) for value in delays), delays
        assert delays == sorted(delays)
    assert set(record['arms']) == {'left', 'right'}
    for figures in record['arms'].values():
        low, high = LAG_SEARCH  # the lag is a delay of the searched range
        assert low - 1e-9 <= figures['lag_s'] <= high + 1e-9
        for source in ('robot', 'command', 'targets'):
            motion = figures[source]
            assert 0.0 <= motion['velocity_peak'] < math.inf
            assert 0.0 <= motion['velocity_rms'] <= motion['velocity_peak']
            assert 0.0 <= motion['at_velocity_limit'] <= 1.0
        assert figures['command']['velocity_violations'] == 0
        assert figures['command']['commands'] > 0
        robot = figures['robot']
        assert robot['position_violations'] == 0
        assert 0.0 <= robot['acceleration_rms'] <= robot['acceleration_peak'] < math.inf
    # the run's MCAP, beside its logs: every topic of the run recorded
    from mcap.reader import make_reader

    with (tmp_path / 'logs' / 'baxter_pic_direction' / 'run.mcap').open('rb') as stream:
        summary = make_reader(stream).get_summary()
    counts = {
        channel.topic: summary.statistics.channel_message_counts[key]
        for key, channel in summary.channels.items()
    }
    assert sum(counts.values()) == run['mcap_messages']
    for topic in (
        '/body_tracking_data', '/skeleton', '/joint_targets', '/joint_states',
        '/left_arm_controller/joint_trajectory', '/right_arm_controller/joint_trajectory',
    ):
        assert counts[topic] > 0, topic


def test_live_evaluation_refuses_the_synthetic_suite(capsys):
    """The suite has no recording to replay: one line, exit status 2, nothing started."""
    assert main(['evaluate', '--live', '--suite', 'synthetic']) == 2
    assert 'no --suite' in capsys.readouterr().err
