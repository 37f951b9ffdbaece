"""``evaluate``: scoring, the pipeline on the paper's real recording, and the command line."""

from __future__ import annotations

import json
import math
from pathlib import Path
import re
from types import MappingProxyType
from typing import Any

import numpy as np
from pic_ros.correspondence import load_user_profile
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.skeleton import Side
from pic_ros.solvers import SolverConfig
from pic_ros.solvers.avoidance import AvoidanceConfig
from pic_ros.trackers.kinect_v2 import KINECT_V2_JOINTS
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.cli import _json_ready, main
from pic_ros_tools.evaluation import (
    ArmTrace,
    Demonstration,
    evaluate_one,
    EvaluationSettings,
    histogram_percentile_ms,
    paper_column,
    PAPER_PACC,
    score,
    SMOOTHED_PREFIX,
    solve_time_histogram,
    Trace,
)
from pic_ros_tools.recordings.paper import load_paper_demonstration, Segment
import pytest

RECORD_KEYS = (
    'recording', 'robot', 'correspondence', 'solver', 'eta', 'segments', 'frames', 'pacc_paper',
    'pacc_paper_std', 'pacc_task', 'elbow_mae_rad', 'elbow_mae_free_rad', 'dir_err_deg',
    'dir_err_free_deg', 'ee_err_cm', 'free_share', 'limit_share', 'limit_violations',
    'jump_frames', 'solve_ms_p50', 'solve_ms_p99', 'solve_us_histogram', 'avoided_share',
    'elbow_mae_avoided_rad', 'min_distance_cm', 'self_contact_frames', 'reference', 'smoothing',
    'time_constant_s', 'smoothed_pacc_paper', 'smoothed_pacc_task', 'smoothed_elbow_mae_rad',
    'smoothed_elbow_mae_free_rad', 'smoothed_dir_err_deg', 'smoothed_dir_err_free_deg',
    'smoothed_ee_err_cm', 'smoothed_segment_pacc_paper',
)
"""Keys every ``evaluate`` record has (``docs/method.md#definitions`` and the evaluate issue)."""

WITHOUT_SAMPLES = {
    'free_share': ('elbow_mae_free_rad', 'dir_err_free_deg.0', 'dir_err_free_deg.1'),
    'avoided_share': ('elbow_mae_avoided_rad',),
}
"""Metrics over a share of the samples: NaN (None in JSON) when that share is empty."""

TIMING_KEYS = ('solve_ms_p50', 'solve_ms_p99', 'solve_us_histogram')
SHORT_FRAMES = 240
PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEMO_DIR = PROJECT_ROOT / 'pic_ros_tools' / 'demo'


@pytest.fixture
def short_recording(tmp_path: Path) -> Path:
    """Write the first 8 s of the shipped demo as a recording without segments; return it."""
    for suffix in ('_skel.txt', '_skelts.txt'):
        lines = (DEMO_DIR / f'synthetic1{suffix}').read_text().splitlines()
        (tmp_path / f'short1{suffix}').write_text('\n'.join(lines[:SHORT_FRAMES]) + '\n')
    return tmp_path / 'short1_skel.txt'


def _numbers(record: dict[str, Any]) -> dict[str, float]:
    """Return the numeric values of a record, lists flattened (``dir_err_deg.0`` ...)."""
    values: dict[str, float] = {}
    for key, value in record.items():
        if isinstance(value, list):
            values.update({f'{key}.{i}': item for i, item in enumerate(value)})
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            values[key] = value
    return values


def _check_record(record: dict[str, Any]) -> None:
    """Assert the invariants every real ``evaluate`` record must meet."""
    missing = [key for key in RECORD_KEYS if key not in record]
    assert not missing, f'record lacks {missing}'
    assert len(record['dir_err_deg']) == 2 and len(record['dir_err_free_deg']) == 2
    empty = {
        prefix + key for share, keys in WITHOUT_SAMPLES.items() if record[share] == 0
        for key in keys for prefix in ('', SMOOTHED_PREFIX)
    }
    not_finite = {k: v for k, v in _numbers(record).items()
                  if k != 'eta' and not k.startswith('solve_us_histogram')
                  and k not in empty and not math.isfinite(v)}
    assert not not_finite, f'non-finite metrics: {not_finite}'
    for key in ('pacc_paper', 'pacc_task', 'smoothed_pacc_paper', 'smoothed_pacc_task'):
        assert 0.0 <= record[key] <= 1.0
    assert record['reference'] == 'tracked'
    assert record['limit_violations'] == 0
    assert record['self_contact_frames'] == 0
    assert isinstance(record['jump_frames'], int) and record['jump_frames'] >= 0
    assert 0.0 < record['solve_ms_p50'] <= record['solve_ms_p99']
    assert sum(count for _, count in record['solve_us_histogram']) > 0
    assert all(0.0 <= share <= 1.0 for share in record['limit_share'].values())
    json.dumps(_json_ready(record), allow_nan=False)  # plain Python types, ready for --json


@pytest.fixture(scope='module')
def assembly1(shared_data: Path) -> Demonstration:
    """Load the PIC paper's real Kinect v2 recording ``assembly1`` with its 10 segments."""
    folder = shared_data / 'pic_demos'
    if not (folder / 'assembly1_skel.txt').is_file():
        pytest.skip(f'the PIC demonstrations are not in {folder}')
    return Demonstration.from_paper(load_paper_demonstration(folder, 'assembly1'))


@pytest.mark.parametrize('robot_name', shipped_robots())
def test_pic_on_the_real_assembly1_recording_gives_a_complete_record(assembly1, robot_name):
    """PIC on ``assembly1``: every metric present and finite, 10 segments, 757 frames, 0 limits."""
    record = evaluate_one(load_robot(robot_name), assembly1, SolverConfig(name='pic'))
    _check_record(record)
    assert (record['recording'], record['robot'], record['solver'], record['eta']) == (
        'assembly1', robot_name, 'pic', 0,
    )
    assert record['segments'] == 10
    assert record['frames'] == 757


def _run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``python -m pic_ros`` in-process and return its status, stdout and stderr."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _refuse_nan(constant: str) -> None:
    """Refuse NaN and infinity, which are not JSON."""
    raise AssertionError(f'--json printed {constant}, which is not JSON')


def test_cli_json_prints_one_object_with_one_record_per_setting(capsys):
    """``evaluate --json`` prints exactly one JSON object, ``results``, one record per setting."""
    status, out, err = _run_cli(
        capsys, 'evaluate', '--recording', 'demo', '--robot', 'yumi', '--solver', 'pic', '--json'
    )
    assert status == 0, err
    document, end = json.JSONDecoder(parse_constant=_refuse_nan).raw_decode(out.lstrip())
    assert out.lstrip()[end:].strip() == '', 'more than one JSON value on stdout'
    assert list(document) == ['results']
    [record] = document['results']
    _check_record(record)
    assert (record['recording'], record['robot'], record['solver'], record['eta']) == (
        'synthetic1', 'yumi', 'pic', 0,
    )
    assert None not in _numbers(record).values()
    assert all(value is not None for value in record.values()), record


def test_cli_json_uses_null_only_for_fabriks_eta(capsys, short_recording):
    """FABRIK has no η: its ``eta`` is the one documented null; settings come in order."""
    status, out, _ = _run_cli(
        capsys, 'evaluate', '--recording', str(short_recording), '--robot', 'tiago',
        '--solver', 'fabrik', '--solver', 'pic', '--json',
    )
    assert status == 0
    results = json.loads(out, parse_constant=_refuse_nan)['results']
    assert [(r['solver'], r['eta']) for r in results] == [('fabrik', None), ('pic', 0)]
    assert {(r['recording'], r['segments'], r['frames']) for r in results} == {
        ('short1', 1, SHORT_FRAMES)
    }
    for record in results:
        nulls = [key for key, value in record.items() if value is None]
        assert nulls == (['eta'] if record['solver'] == 'fabrik' else [])


@pytest.mark.parametrize(
    'option, value, message',
    [
        ('--robot', 'r2d2', "no robot file for 'r2d2'"),
        ('--recording', 'nowhere', "unknown recording 'nowhere': use one of demo, assembly1"),
    ],
)
def test_cli_unknown_robot_or_recording_exits_2_with_one_line(capsys, option, value, message):
    """A name the user can fix gives status 2, nothing on stdout and one line on stderr."""
    argv = {'--robot': 'yumi', '--recording': 'demo', option: value}
    status, out, err = _run_cli(
        capsys, 'evaluate', '--robot', argv['--robot'], '--recording', argv['--recording'],
        '--solver', 'pic', '--json',
    )
    assert status == 2
    assert out == ''
    assert len(err.splitlines()) == 1, err
    assert re.match(rf'pic_ros_tools evaluate: .*{re.escape(message)}', err)


def test_cli_table_shows_the_paper_values_in_brackets(capsys, shared_data, monkeypatch):
    """The text output has the Pacc table with the paper's published value beside ours."""
    folder = shared_data / 'pic_demos'
    if not (folder / 'assembly1_skel.txt').is_file():
        pytest.skip(f'the PIC demonstrations are not in {folder}')
    monkeypatch.setenv('PIC_ROS_PIC_DEMOS', str(folder))
    status, out, err = _run_cli(
        capsys, 'evaluate', '--recording', 'assembly1', '--robot', 'yumi', '--solver', 'pic'
    )
    assert status == 0, err
    paper = PAPER_PACC[('yumi', 'A-1')][paper_column('pic', 0)]
    row = next(line for line in out.splitlines() if line.startswith('yumi '))
    assert 'assembly1 (A-1)' in row
    assert re.search(rf'\d\.\d\d \(\d\.\d\d\) \[{paper:.2f}\]', row), row
    assert 'Pose accuracy' in out and 'PIC' in out


def test_same_input_gives_the_same_metrics(short_recording):
    """Two runs on the same recording agree on every metric but the solve times."""
    robot = load_robot('yumi')
    demonstration = load_demonstration(str(short_recording))
    first = evaluate_one(robot, demonstration, SolverConfig(name='pic'))
    second = evaluate_one(robot, demonstration, SolverConfig(name='pic'))
    for key in TIMING_KEYS:
        del first[key], second[key]
    # NaN (a metric with no sample, e.g. no free frame) counts as the same NaN
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


ARM_DOWN = np.array([(0.0, -0.2, 0.0), (0.0, -0.2, -0.3), (0.3, -0.2, -0.3)])
"""Human right arm in the body frame: upper arm down, forearm forward (a right angle)."""


def _synthetic_trace(robot, frames: int, bend: float) -> tuple[Trace, np.ndarray]:
    """
    Build a TIAGo trace: frames 0..4 imitate exactly, later ones bend the forearm by ``bend``.

    :return: The trace and the joint values it holds (to edit before scoring).
    """
    arm = robot.arms['arm']
    offset = np.array([0.1, -0.15, 0.8])
    targets = np.tile(ARM_DOWN + offset, (frames, 1, 1))
    landmarks = np.empty((frames, 5, 3))
    landmarks[:, 0] = targets[:, 0] + (0.0, 0.0, 0.1)
    landmarks[:, 1:4] = targets
    bent = targets[0, 1] + 0.3 * np.array([math.cos(bend), 0.0, -math.sin(bend)])
    landmarks[5:, 3] = bent
    landmarks[:, 4] = landmarks[:, 3] + (0.1, 0.0, 0.0)
    q = np.tile(arm.neutral, (frames, 1))
    trace = Trace(
        stamps=np.arange(frames) / 30.0,
        arms=MappingProxyType({
            'arm': ArmTrace(
                human_side=Side.RIGHT,
                solved=np.ones(frames, dtype=bool),
                q=q,
                human=np.tile(ARM_DOWN, (frames, 1, 1)),
                targets=targets,
                landmarks=landmarks,
                solve_time=np.full(frames, 0.002),
                iterations=np.full(frames, 3, dtype=np.int64),
                at_limit=np.zeros((frames, arm.dof), dtype=bool),
            )
        }),
    )
    return trace, q


def test_score_of_a_known_trace():
    """Hand-made trace: exact segment, 0.5 rad segment, empty segment, frames outside segments."""
    robot = load_robot('tiago')
    bend = 0.5
    trace, q = _synthetic_trace(robot, 12, bend)
    arm = robot.arms['arm']
    trace.arms['arm'].at_limit[6] = True  # one frame of the second segment is limit-bound
    q[7, 0] = arm.upper[0] + 0.1  # outside the limits, and a jump in and out (frames 7 and 8)
    q[11, 1] = arm.upper[1] + 0.1  # outside the limits, but not in any segment
    demonstration = Demonstration(
        name='synthetic',
        frames=(),
        segments=(
            Segment(index=0, start=0, stop=5, first_line=1, last_line=5),
            Segment(index=1, start=5, stop=10, first_line=6, last_line=10),
            Segment(index=2, start=10, stop=10, first_line=11, last_line=11),
        ),
        task_arms=(frozenset({Side.RIGHT}), frozenset({Side.LEFT}), frozenset({Side.RIGHT})),
    )
    record = score(trace, demonstration, robot, SolverConfig(name='pics', eta=2))
    wrist_error = 2 * 0.3 * math.sin(bend / 2)
    expected = {
        'recording': 'synthetic', 'robot': 'tiago', 'solver': 'pics', 'eta': 2,
        'segments': 2, 'frames': 10,
        'pacc_paper': 0.5, 'pacc_paper_std': 0.5,
        'pacc_task': 1.0,  # the second segment's task arm is the left: no samples, left out
        'elbow_mae_rad': bend / 2,
        'elbow_mae_free_rad': (0.0 + 4 * bend / 4) / 2,  # segment means: 0, and bend over 4
        'ee_err_cm': 100 * wrist_error / 2,
        'limit_violations': 1, 'jump_frames': 2,
        'solve_ms_p50': 2.0, 'solve_ms_p99': 2.0,
        'iterations_mean': 3.0,
        'dropped_frames': 0,
    }
    for key, value in expected.items():
        assert record[key] == pytest.approx(value, abs=1e-9), key
    assert record['dir_err_deg'] == pytest.approx([0.0, math.degrees(bend) / 2], abs=1e-6)
    assert record['segment_pacc_paper'] == [1.0, 0.0]
    assert record['free_share'] == pytest.approx(9 / 10)
    assert record['limit_share'] == dict.fromkeys(arm.joint_names, 0.1)
    assert record['solve_us_histogram'] == [[2000, 10]]
    assert record['reference'] == 'smoothed'  # the trace has no tracked person: the smoothed one
    for key in ('pacc_paper', 'elbow_mae_rad', 'ee_err_cm', 'dir_err_deg', 'segment_pacc_paper'):
        assert record[SMOOTHED_PREFIX + key] == record[key], key


def test_pooled_solve_time_percentiles_come_from_every_solve():
    """Percentiles pooled from two recordings' histograms are those of all solves together."""
    rng = np.random.default_rng(3)
    fast, slow = rng.uniform(1e-4, 2e-4, 900), rng.uniform(5e-4, 9e-4, 100)
    pooled = histogram_percentile_ms(
        [solve_time_histogram(fast), solve_time_histogram(slow)], 99.0
    )
    every = np.round(np.concatenate([fast, slow]) * 1e6)
    assert pooled == pytest.approx(np.percentile(every, 99.0, method='inverted_cdf') / 1e3)
    assert histogram_percentile_ms([], 50.0) != histogram_percentile_ms([], 50.0)  # NaN


def test_any_kinect_v2_text_file_is_scored_whole_and_made_up_stamps_are_announced(
    capsys, tmp_path
):
    """A 75-column file with no stamps or segments is one segment; one line says 30 Hz."""
    lines = (DEMO_DIR / 'synthetic1_skel.txt').read_text().splitlines()[:90]
    path = tmp_path / 'person.txt'
    path.write_text('\n'.join(lines) + '\n')
    status, out, err = _run_cli(
        capsys, 'evaluate', '--recording', str(path), '--robot', 'tiago', '--solver', 'pic',
        '--json',
    )
    assert status == 0
    assert err.count('\n') == 1 and 'made-up 30 Hz stamps' in err
    [record] = json.loads(out)['results']
    assert (record['recording'], record['segments'], record['frames']) == ('person', 1, 90)


def test_whole_scores_a_segmented_recording_as_one_segment(capsys):
    """--whole ignores the segment file: every frame, both arms."""
    status, out, _ = _run_cli(
        capsys, 'evaluate', '--recording', 'demo', '--robot', 'yumi', '--solver', 'pic',
        '--whole', '--json',
    )
    assert status == 0
    [record] = json.loads(out)['results']
    assert record['segments'] == 1
    assert record['frames'] == len(load_demonstration('demo').frames)


def test_the_synthetic_suite_is_scored_per_take(capsys):
    """--suite synthetic scores each generated person as a recording of its own."""
    status, out, err = _run_cli(
        capsys, 'evaluate', '--suite', 'synthetic', '--suite-size', '2', '--robot', 'tiago',
        '--solver', 'pic', '--json',
    )
    assert status == 0, err
    results = json.loads(out)['results']
    assert len({r['recording'] for r in results}) == 2
    for record in results:
        _check_record(record)
        assert record['segments'] >= 3


def test_both_correspondences_are_evaluated_side_by_side(capsys):
    """--correspondence all runs every registered correspondence; the table names them."""
    status, out, err = _run_cli(
        capsys, 'evaluate', '--recording', 'demo', '--robot', 'tiago', '--solver', 'pic',
        '--correspondence', 'all',
    )
    assert status == 0, err
    assert 'direction PIC' in out and 'position PIC' in out
    assert 'Share of solved frames with a joint at a position limit' in out


TRACKED_DEMO = {'pacc_paper': 0.98, 'elbow_mae_rad': 0.065, 'elbow_mae_free_rad': 0.095,
                'dir_err_free_deg': 10.0}
"""
Figures against the person as tracked on the demo, every robot: Pacc at least, errors at most.

Measured (exponential smoothing, 0.1 s): Pacc 0.991..1.000 (avoidance off), elbow MAE
0.050..0.057 rad (off), 0.050..0.083 rad on free frames and 2.9..8.9 deg of bone direction on free
frames (off and on; Baxter with the avoidance the largest): the smoothing's lag, which the
figures against the smoothed person (below) do not see.
"""

FREE_DIRECTION_ERROR = {'nao': 3.5}
"""
Mean bone-direction error on free frames [deg] against the smoothed person allowed on the demo
where it is not 2.0.

NAO's arms hang nearly straight through much of the demo, where the joint recovery damps the
elbow yaw (a roll about the upper arm) so that noise does not swing it: its forearm stays 3.4 deg
(3 mm at the wrist) from the target on average; without that damping it would be 0.7 deg.
"""


def test_default_settings_keep_their_quality_on_the_shipped_demo():
    """
    Regression: the default correspondence and solver on the demo take, every robot.

    Against the person as tracked (:data:`TRACKED_DEMO`), smoothing lag included. Against the
    person as smoothed, what the solver was given, the solver's own fidelity: the imitation
    itself (avoidance off) keeps its figures over every frame; with the self-collision avoidance
    on (the default), so do the frames where it does not act (the solvers keep their own warm
    start, so those answers are the same). No frame touches itself in MuJoCo, and no frame
    jumps.
    """
    demonstration = load_demonstration('demo')
    for name in shipped_robots():
        robot = load_robot(name)
        off = EvaluationSettings(avoidance=AvoidanceConfig(0.0))
        unguarded = evaluate_one(robot, demonstration, SolverConfig(), off)
        assert unguarded['correspondence'] == 'direction' and unguarded['solver'] == 'pic'
        assert unguarded['pacc_paper'] >= TRACKED_DEMO['pacc_paper'], name
        assert unguarded['elbow_mae_rad'] <= TRACKED_DEMO['elbow_mae_rad'], name
        assert unguarded['smoothed_pacc_paper'] >= 0.98, name
        assert unguarded['smoothed_elbow_mae_rad'] <= 0.02, name
        guarded = evaluate_one(robot, demonstration, SolverConfig())
        for record in (unguarded, guarded):
            assert record['elbow_mae_free_rad'] <= TRACKED_DEMO['elbow_mae_free_rad'], name
            assert max(record['dir_err_free_deg']) <= TRACKED_DEMO['dir_err_free_deg'], name
            assert record['smoothed_elbow_mae_free_rad'] <= 0.02, name
            assert (
                max(record['smoothed_dir_err_free_deg']) <= FREE_DIRECTION_ERROR.get(name, 2.0)
            ), name
            assert record['jump_frames'] == 0 and record['limit_violations'] == 0, name
        assert guarded['self_contact_frames'] == 0, name
        assert guarded['min_distance_cm'] > 0.0, name


def _t_pose_recording(path: Path, upper: float, fore: float, seconds: float = 3.0) -> Path:
    """
    Write a Kinect v2 text recording of a person holding the calibration pose.

    The person stands 2 m in front of the sensor, arms stretched out sideways.
    """
    camera = np.zeros((25, 3))
    tracker_points = {
        'SpineBase': (2.0, 0.0, 0.0), 'SpineShoulder': (2.0, 0.0, 0.5),
        'ShoulderLeft': (2.0, -0.18, 0.45), 'ShoulderRight': (2.0, 0.18, 0.45),
        'ElbowLeft': (2.0, -0.18 - upper, 0.45), 'ElbowRight': (2.0, 0.18 + upper, 0.45),
        'WristLeft': (2.0, -0.18 - upper - fore, 0.45),
        'WristRight': (2.0, 0.18 + upper + fore, 0.45),
    }
    for name, (x, y, z) in tracker_points.items():
        camera[KINECT_V2_JOINTS.index(name)] = (y, z, x)  # tracker (x, y, z) = camera (z, x, y)
    lines = [' '.join(f'{value:.6f}' for value in camera.ravel())] * int(seconds * 30)
    stamps = [f'{index / 30.0 + 0.05:.6f}' for index in range(len(lines))]
    skeleton = path / 'pose1_skel.txt'
    skeleton.write_text('\n'.join(lines) + '\n')
    (path / 'pose1_skelts.txt').write_text('\n'.join(stamps) + '\n')
    return skeleton


def test_calibrate_writes_a_profile_that_position_evaluation_uses(capsys, tmp_path):
    """The calibrate command measures the bone lengths of a held pose; evaluate then uses them."""
    recording = _t_pose_recording(tmp_path, 0.29, 0.24)
    out = tmp_path / 'alice.yaml'
    status, _, err = _run_cli(
        capsys, 'calibrate', '--recording', str(recording), '--name', 'alice', '--out', str(out)
    )
    assert status == 0, err
    profile = load_user_profile(out)
    assert profile.name == 'alice'
    for side in Side:
        assert profile.arms[side].upper_arm == pytest.approx(0.29, abs=1e-3)
        assert profile.arms[side].forearm == pytest.approx(0.24, abs=1e-3)
    status, out_json, err = _run_cli(
        capsys, 'evaluate', '--recording', 'demo', '--robot', 'tiago', '--solver', 'pic',
        '--correspondence', 'position', '--user-profile', str(out), '--json',
    )
    assert status == 0, err
    assert json.loads(out_json)['results'][0]['correspondence'] == 'position'


def test_calibrate_says_why_when_the_pose_is_not_held(capsys):
    """A recording without the calibration pose: status 2 and one line saying what to do."""
    status, out, err = _run_cli(capsys, 'calibrate', '--recording', 'demo')
    assert status == 2 and out == ''
    assert len(err.splitlines()) == 1
    assert 'stand facing the tracker with both arms stretched out sideways' in err
