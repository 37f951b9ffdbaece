"""
Scoring a live run: a robot that does exactly the offline solution scores the offline figures.

The runs here are made up from the offline imitation of the demo recording (no process): the
skeletons the pipeline would publish and a simulated robot that follows the offline solution
with a chosen delay.
"""

from __future__ import annotations

import math

import numpy as np
from pic_ros.human.processing import SkeletonProcessor
from pic_ros.robot.robot import load_robot
from pic_ros.skeleton import HumanJoint, Side
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.demo_report import DemoRecording, person_overlay
from pic_ros_tools.evaluation import run_imitation, score
from pic_ros_tools.live_evaluation import (
    avoided_skeletons,
    guard_rows,
    live_occlusion,
    live_record,
    live_tables,
    live_trace,
    occlusion_rows,
    place_skeletons,
    publisher_rows,
    run_warnings,
    stream_table,
)
from pic_ros_tools.metrics import LAG_STEP
from pic_ros_tools.occlusion_scores import occlusion_figures
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper import Segment
from pic_ros_tools.recordings.paper_task import PaperPad, SIM_TO_TRACKER
import pytest

HEARD_AFTER = 0.004
"""Delay between a skeleton's capture and its publication in the made-up runs [s]."""


@pytest.fixture(scope='module')
def offline():
    """Twenty seconds of the demo recording, the robot and its offline imitation."""
    whole = load_demonstration('demo')
    demonstration = Demonstration.whole('demo', whole.frames[:540])
    robot = load_robot('baxter')
    trace = run_imitation(robot, demonstration, SolverConfig())
    return robot, demonstration, trace


def _run(robot, demonstration, trace, delay: float) -> DemoRecording:
    """Make the run of a robot that reaches the offline solution ``delay`` after a skeleton."""
    recording = DemoRecording()
    processor = SkeletonProcessor()
    origin = demonstration.frames[0].stamp
    for frame in demonstration.frames:
        body = processor.process(frame)
        recording.skeleton_stamps.append(frame.stamp)
        recording.skeleton_times.append(frame.stamp - origin + HEARD_AFTER)
        recording.skeletons.append(body.positions)
    frame_times = trace.stamps - origin + HEARD_AFTER
    grid = np.arange(frame_times[0] - 1.0, frame_times[-1] + 1.0, 0.005)
    state_times = np.union1d(grid, frame_times + delay)  # the robot is sampled at its poses
    states = {
        name: np.column_stack([
            np.interp(state_times - delay, frame_times, arm.q[:, j])
            for j in range(arm.q.shape[1])
        ])
        for name, arm in trace.arms.items()
    }
    for index, when in enumerate(state_times):
        recording.state_times.append(float(when))
        recording.states.append({
            joint: float(states[name][index, j])
            for name in trace.arms for j, joint in enumerate(robot.arms[name].joint_names)
        })
    return recording


def test_a_robot_doing_the_offline_solution_at_once_scores_the_offline_figures(offline):
    """No delay: the live trace is the offline one, so every figure of ``evaluate`` agrees."""
    robot, demonstration, trace = offline
    recording = _run(robot, demonstration, trace, delay=0.0)
    live = live_trace(robot, demonstration, recording)
    for name, arm in trace.arms.items():
        assert np.array_equal(live.arms[name].solved, arm.solved)
        assert np.allclose(live.arms[name].q, arm.q, atol=1e-9)
    expected = score(trace, demonstration, robot, SolverConfig())
    got = score(live, demonstration, robot, SolverConfig())
    for key in ('pacc_paper', 'elbow_mae_rad', 'ee_err_cm', 'limit_violations', 'jump_frames',
                'smoothed_pacc_paper', 'smoothed_elbow_mae_rad', 'smoothed_ee_err_cm'):
        assert got[key] == pytest.approx(expected[key], abs=1e-9), key
    assert got['dir_err_deg'] == pytest.approx(expected['dir_err_deg'], abs=1e-6)
    assert got['reference'] == expected['reference'] == 'tracked'


def test_a_late_robot_shows_its_delay_as_lag_and_scores_lower(offline):
    """A robot 150 ms late: the lag of each arm is 150 ms and the elbow error grows."""
    robot, demonstration, trace = offline
    delay = 0.15
    recording = _run(robot, demonstration, trace, delay=delay)
    record = live_record(robot, demonstration, recording, SolverConfig())
    offline_record = score(trace, demonstration, robot, SolverConfig())
    assert record['live']['elbow_mae_rad'] > offline_record['elbow_mae_rad']
    for figures in record['arms'].values():
        assert figures['lag_s'] == pytest.approx(delay, abs=2 * LAG_STEP)
        assert figures['lag_windows'] >= 1
        assert figures['lag_s_p50'] == pytest.approx(delay, abs=2 * LAG_STEP)
        motion = figures['robot']
        for key in ('velocity_peak', 'velocity_rms', 'acceleration_peak', 'acceleration_rms'):
            assert math.isfinite(motion[key]) and motion[key] >= 0.0, key
        assert 0.0 <= motion['at_velocity_limit'] <= 1.0
        assert motion['position_violations'] == 0
        asked = figures['targets']  # the offline targets the delayed robot followed exactly
        assert asked['velocity_peak'] == pytest.approx(motion['velocity_peak'], rel=0.05)
        assert 0.0 <= asked['at_velocity_limit'] <= 1.0
    bound = record['bound']  # the feasibility bound of the same targets, and the live against it
    assert 0.0 <= bound['bound_pacc'] <= 1.0 and bound['bound_elbow_mae_rad'] >= 0.0
    assert bound['guarded'] == 0
    assert bound['elbow_mae_live_over_bound'] == pytest.approx(
        record['live']['elbow_mae_rad'] / bound['bound_elbow_mae_rad']
    )
    assert record['occlusion'] is None  # the demo has no task surface
    tables = live_tables([record])
    assert 'Pacc live' in tables and '| targets |' in tables
    assert 'PO robot live' not in tables
    assert 'Pacc / elbow MAE bound' in tables
    assert 'delay p50' not in tables  # no controller figures in a made-up run
    assert 'collision guard' not in tables
    record['run'] = {**record['run'], 'guard_steps_checked': 10, 'guard_chunks_refused': 0}
    assert 'steps checked by the collision guard' in live_tables([record])


def test_the_guard_table_has_a_row_per_run_that_reported_its_guard():
    """The guard's counts from the notes, as they are; nothing for a run without them."""
    runs = [
        {'live': {'robot': 'baxter', 'recording': 'demo'},
         'run': {'guard_steps_checked': 2890, 'guard_chunks_straightened': 30,
                 'guard_chunks_refused': 12}},
        {'live': {'robot': 'yumi', 'recording': 'demo'}, 'run': {'clock': 'sim'}},
        {'live': {'robot': 'tiago', 'recording': 'demo'}, 'run': {'guard_steps_checked': 40}},
    ]
    assert guard_rows(runs).splitlines()[2:] == [
        '| baxter | demo | 2890 | 30 | 12 |',
        '| tiago | demo | 40 | - | - |',
    ]
    assert guard_rows(runs[1:2]) == ''


def test_the_publisher_table_has_a_row_per_group_with_its_continuity_check():
    """The publisher's figures from the notes, per group it commands; '-' when unknown."""
    run = {
        'publisher_left_commands_published': 1797, 'publisher_left_segment_violations': 0,
        'publisher_left_segment_peak': 0.98, 'publisher_left_stalls': 2,
        'publisher_left_chunks_withdrawn_late': 1, 'publisher_left_chunks_sent_late': 0,
        'publisher_head_commands_published': 1790, 'publisher_head_segment_violations': 3,
        'publisher_right_stalls': 5,  # no count of chunks published: no row
        'left_arm_controller_accepted': 1797,
    }
    table = publisher_rows([{'live': {'robot': 'baxter'}, 'run': run}])
    assert table.splitlines()[2:] == [
        '| baxter | head | 1790 | 3 | - | - | - | - |',
        '| baxter | left | 1797 | 0 | 0.98 | 2 | 1 | 0 |',
    ]
    assert publisher_rows([{'live': {'robot': 'baxter'}, 'run': {'clock': 'sim'}}]) == ''


def test_the_stream_table_has_a_row_per_controller_with_its_delays():
    """sim_robot's figures from the notes: counts as they are, delays in ms, '-' when unknown."""
    run = {
        'clock': 'sim',
        'left_arm_controller_accepted': 300, 'left_arm_controller_late': 299,
        'left_arm_controller_joined': 2, 'left_arm_controller_delay_p50_ms': 3.31,
        'left_arm_controller_delay_p99_ms': 21.0, 'left_arm_controller_delay_max_ms': 40.5,
        'right_arm_controller_accepted': 7,
    }
    table = stream_table([{'live': {'robot': 'baxter'}, 'run': run}])
    rows = table.splitlines()[2:]
    assert rows == [
        '| baxter | left_arm_controller | 300 | - | 299 | 2 | 3.3 / 21.0 / 40.5 | - |',
        '| baxter | right_arm_controller | 7 | - | - | - | - / - / - | - |',
    ]
    assert stream_table([{'live': {'robot': 'baxter'}, 'run': {'clock': 'sim'}}]) == ''


def test_the_person_is_drawn_from_the_robot_shoulders_at_the_robot_scale(offline):
    """Arms start at the placed shoulders; the trunk is the person's, scaled by the arm lengths."""
    robot, demonstration, trace = offline
    recording = _run(robot, demonstration, trace, delay=0.0)
    [placed] = place_skeletons(robot, recording)[100:101]
    joints = recording.skeletons[100]
    capsules = person_overlay(robot, joints, placed)
    shoulders = [points[0] for points in placed.values()]
    for points in placed.values():
        assert any(np.allclose(c.start, points[0]) and np.allclose(c.end, points[1])
                   for c in capsules)
    collar = [c for c in capsules if any(np.allclose(c.end, s) for s in shoulders)
              and not any(np.allclose(c.start, s) for s in shoulders)]
    assert len(collar) == 2
    robot_arm = np.mean([np.linalg.norm(p[1] - p[0]) + np.linalg.norm(p[2] - p[1])
                         for p in placed.values()])
    person_arm = np.mean([
        np.linalg.norm(joints[e] - joints[s]) + np.linalg.norm(joints[w] - joints[e])
        for s, e, w in ((HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT),
                        (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT,
                         HumanJoint.WRIST_RIGHT))
    ])
    [head] = [c for c in capsules if c.radius > capsules[0].radius]
    person_middle = (joints[HumanJoint.SHOULDER_LEFT] + joints[HumanJoint.SHOULDER_RIGHT]) / 2.0
    expected = (joints[HumanJoint.HEAD] - person_middle) * robot_arm / person_arm
    assert np.allclose(head.start - np.mean(shoulders, axis=0), expected)


def test_the_skeletons_the_avoidance_acted_on_are_those_of_the_offline_trace(offline):
    """Each skeleton heard is matched to its frame by stamp: its avoidance flag is the frame's."""
    robot, demonstration, trace = offline
    recording = _run(robot, demonstration, trace, 0.05)
    acting = avoided_skeletons(demonstration, recording, trace)
    assert len(acting) == len(recording.skeleton_stamps)
    assert acting == [bool(flag) for flag in trace.avoided]
    assert any(acting) and not all(acting)  # Baxter avoids on part of the demo


def test_a_run_that_does_not_show_the_pipeline_is_marked_invalid_with_every_cause(offline):
    """
    Rejected trajectories, a simulation that slipped, a robot beyond a limit: one line each.

    (The loaded-PC run of issue 28 rejected 1,740 chunks and jumped, and printed nothing.) A
    run without any of them has no warning and is valid.
    """
    robot, demonstration, trace = offline
    recording = _run(robot, demonstration, trace, 0.1)
    record = live_record(
        robot, demonstration, recording, SolverConfig(), targets=trace, bound=False
    )
    assert record['bound'] is None
    # the made-up robot does the offline solution, which no motion layer has limited
    assert record['warnings'] == [
        f'{name}: the simulated joints reached {arm["robot"]["velocity_peak"]:.2f} x their '
        'velocity limit' for name, arm in record['arms'].items()
    ] and not record['valid']
    for arm in record['arms'].values():
        arm['robot']['velocity_peak'] = 1.05  # within the servos' few percent
    assert run_warnings(record) == []
    record['run'].update({
        'left_arm_controller_accepted': 149, 'left_arm_controller_rejected': 1740,
        'left_arm_controller_rejected_in_the_past': 1740, 'sim_slipped_s': 2.5,
        'right_arm_controller_segment_violations': 3, 'right_arm_controller_segment_peak': 20.0,
        'publisher_left_stalls': 4, 'publisher_left_segment_violations': 0,
        'publisher_right_segment_violations': 2, 'publisher_right_segment_peak': 1.4,
    })
    record['arms']['left']['robot']['velocity_peak'] = 1.3
    warnings = run_warnings(record)
    assert warnings == [
        'left_arm_controller rejected 1740 trajectories (149 accepted): in_the_past 1740',
        'the simulation slipped 2.50 s behind real time (the host could not run it in real '
        'time)',
        'left: the simulated joints reached 1.30 x their velocity limit',
        'right_arm_controller took 3 trajectories beyond a velocity, acceleration or jerk '
        'limit, or jumped onto them (peak 20 x a limit)',
        'the trajectory publisher sent chunks whose consecutive points or seam break a '
        'velocity, acceleration or jerk limit (its continuity check): right 2 (peak 1.4 x)',
        'the trajectory publisher stalled (steps after its last plan had run out, the arm '
        'braking meanwhile): left 4',
    ]
    record['warnings'] = warnings
    assert 'invalid run**: left_arm_controller rejected 1740' in live_tables([record])


def _task_under_the_right_wrist(frames, played: int) -> Demonstration:
    """
    Make a recording with a 60 cm pad 10 cm under the person's median right wrist.

    Two right-arm segments; the first ``played`` frames end inside the second one.
    """
    shoulder = np.median([f.positions[HumanJoint.SHOULDER_RIGHT] for f in frames], axis=0)
    wrist = np.median([f.positions[HumanJoint.WRIST_RIGHT] for f in frames], axis=0)
    below = SIM_TO_TRACKER.T @ (wrist - shoulder) * 100.0 - np.array([0.0, 10.0, 0.0])
    pad = PaperPad(scale=1.0, dims=(60.0, 2.0, 60.0), axis=(1.0, 0.0, 0.0),
                   centre=tuple(below - np.array([0.0, 1.0, 0.0])))
    half = (played + len(frames)) // 2 - played // 2
    segments = (
        Segment(index=0, start=0, stop=half, first_line=1, last_line=half),
        Segment(index=1, start=half, stop=len(frames), first_line=half + 1,
                last_line=len(frames)),
    )
    right = frozenset({Side.RIGHT})
    return Demonstration('pad', tuple(frames), segments, (right, right), {'baxter': pad})


def test_the_live_po_scores_the_frames_played_of_the_whole_recordings_segments(offline):
    """
    A robot doing the offline solution at once has the offline PO on the frames played.

    The run played the first frames of a longer recording with a task surface: its PO is that of
    the person and the robot on those frames only, in the whole recording's segments.
    """
    robot, demonstration, trace = offline
    played = len(demonstration.frames)
    more = load_demonstration('demo').frames[played:played + 200]
    task = _task_under_the_right_wrist(demonstration.frames + more, played)
    recording = _run(robot, demonstration, trace, delay=0.0)
    record = live_record(
        robot, demonstration, recording, SolverConfig(), targets=trace, bound=False, task=task
    )
    figures = record['occlusion']
    assert figures is not None and figures['po_frames'] > 0
    every = np.ones(played, dtype=bool)
    expected = occlusion_figures(trace, task, robot, every)
    assert figures['po_frames'] == expected['po_frames'] <= played
    for key in ('po_human', 'po_robot'):
        assert 0.0 < figures[key] < 1.0
        assert figures[key] == pytest.approx(expected[key], abs=1e-9), key
    assert figures['po_robot_offline'] == pytest.approx(figures['po_robot'], abs=1e-9)
    assert len(figures['segment_po_robot']) == len(figures['segment_po_robot_offline']) == 2
    assert all(math.isfinite(value) for value in figures['segment_po_human'])
    whole = live_occlusion(robot, task, live_trace(robot, demonstration, recording))
    assert whole is not None and math.isnan(whole['po_robot_offline'])
    assert whole['po_robot'] == pytest.approx(figures['po_robot'], abs=1e-9)
    lines = live_tables([record]).splitlines()
    row = lines[next(i for i, line in enumerate(lines) if 'PO robot live' in line) + 2]
    assert f"| {figures['po_frames']} | {100 * figures['po_human']:.1f} (" in row
    read_back = {**record, 'occlusion': {**figures, 'po_robot_offline': None}}  # NaN in JSON
    assert ' | - (' in occlusion_rows([read_back])


def test_the_live_po_leaves_out_the_frames_the_pipeline_did_not_publish(offline):
    """Frames without a published skeleton have no live robot pose of theirs: not scored."""
    robot, demonstration, trace = offline
    task = _task_under_the_right_wrist(demonstration.frames, len(demonstration.frames))
    recording = _run(robot, demonstration, trace, delay=0.0)
    live = live_trace(robot, demonstration, recording)
    full = live_occlusion(robot, task, live, trace)
    for index in range(0, len(recording.skeletons), 2):  # every other skeleton never heard
        recording.skeleton_stamps[index] = -1.0
    halved = live_occlusion(robot, task, live_trace(robot, demonstration, recording), trace)
    assert full is not None and halved is not None
    assert 0.3 * full['po_frames'] < halved['po_frames'] < 0.7 * full['po_frames']
