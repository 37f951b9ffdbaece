"""The evaluation's reference person is the person as tracked: the smoothing's lag counts."""

from __future__ import annotations

import math

from human_poses import BODY
import numpy as np
from pic_ros.human.processing import ProcessingConfig, SkeletonProcessor
from pic_ros.robot import load_robot
from pic_ros.skeleton import HumanJoint, make_frame, Side, SkeletonFrame
from pic_ros.solvers import SolverConfig
from pic_ros.solvers.avoidance import AvoidanceConfig
from pic_ros_tools.evaluation import (
    evaluate_one,
    EvaluationSettings,
    run_imitation,
    SMOOTHED_PREFIX,
    tracked_body,
)
from pic_ros_tools.metrics import elbow_angle, landmark_elbow_angle
from pic_ros_tools.recordings.demonstration import Demonstration
import pytest

J = HumanJoint
RATE = 30.0
"""Frame rate of the synthetic take [Hz]."""

SECONDS = 8.0
"""Length of the synthetic take [s]."""

FREQUENCY = 0.5
"""Frequency of the elbow's flexion [Hz]."""

ACCURACY_KEYS = (
    'pacc_paper', 'pacc_task', 'elbow_mae_rad', 'elbow_mae_free_rad', 'dir_err_deg',
    'dir_err_free_deg', 'ee_err_cm', 'elbow_mae_avoided_rad', 'segment_pacc_paper',
)
"""Figures of a record that have a counterpart against the smoothed person."""


def flexion(stamp: float) -> float:
    """Return the right forearm's flexion from hanging straight [rad] at a time [s]."""
    return 0.9 + 0.6 * math.sin(2.0 * math.pi * FREQUENCY * stamp)


def bending_take() -> Demonstration:
    """
    Make a person standing still whose right elbow bends and straightens as a sine.

    The tracker frame is the body frame of :data:`~human_poses.BODY` (spine on z, shoulders on
    y); the right upper arm hangs down and the forearm swings in the x-z plane, 0.3..1.5 rad from
    straight down, so the elbow angle is pi minus that. No noise: whatever separates the
    person as tracked from the person as smoothed is the filter's lag.
    """
    frames: list[SkeletonFrame] = []
    for index in range(int(SECONDS * RATE)):
        stamp = index / RATE
        points = BODY.copy()
        shoulder = points[J.SHOULDER_RIGHT]
        elbow = shoulder + np.array([0.0, 0.0, -0.28])
        angle = flexion(stamp)
        forearm = np.array([math.sin(angle), 0.0, -math.cos(angle)])
        points[J.ELBOW_RIGHT] = elbow
        points[J.WRIST_RIGHT] = elbow + 0.25 * forearm
        points[J.HAND_RIGHT] = elbow + 0.33 * forearm
        points[[J.HAND_TIP_RIGHT, J.THUMB_RIGHT]] = np.nan  # not tracked
        frames.append(make_frame(stamp, points))
    return Demonstration.whole('bending', frames)


@pytest.fixture(scope='module')
def take() -> Demonstration:
    """Return the bending take."""
    return bending_take()


@pytest.fixture(scope='module')
def yumi():
    """Load YuMi."""
    return load_robot('yumi')


def _evaluate(robot, take: Demonstration, processing: ProcessingConfig) -> dict:
    """Score PIC on the take with a smoothing, the avoidance off."""
    settings = EvaluationSettings(processing=processing, avoidance=AvoidanceConfig(0.0))
    return evaluate_one(robot, take, SolverConfig(name='pic'), settings)


def test_the_tracked_body_is_what_the_processor_gives_without_smoothing(take):
    """With smoothing ``none`` the pipeline's skeleton is the person as tracked, frame by frame."""
    processor = SkeletonProcessor(ProcessingConfig(smoothing='none'))
    for frame in take.frames:
        smoothed = processor.process(frame)
        tracked = tracked_body(frame)
        assert tracked.frame == 'body'
        assert np.array_equal(tracked.valid, smoothed.valid)
        assert np.allclose(tracked.positions[tracked.valid], smoothed.positions[smoothed.valid])


def test_without_smoothing_the_two_references_coincide(yumi, take):
    """``--filter none``: every figure against the tracked person equals the smoothed one's."""
    record = _evaluate(yumi, take, ProcessingConfig(smoothing='none'))
    assert record['reference'] == 'tracked' and record['smoothing'] == 'none'
    for key in ACCURACY_KEYS:
        assert record[key] == pytest.approx(record[SMOOTHED_PREFIX + key], nan_ok=True), key


def test_the_smoothings_lag_counts_against_the_person_as_tracked(yumi, take):
    """
    A sinusoidal elbow: the robot follows the smoothed person closely and the tracked one late.

    The error against the tracked person is the filter's lag (plus the small solver error): it
    is several times the error against the smoothed person and grows with the time constant,
    while the error against the smoothed person stays small.
    """
    errors = []
    for tau in (0.05, 0.1, 0.3):
        record = _evaluate(yumi, take, ProcessingConfig(time_constant=tau))
        assert record['smoothing'] == 'exponential' and record['time_constant_s'] == tau
        assert record['smoothed_elbow_mae_rad'] < 0.02
        assert record['elbow_mae_rad'] > 2.0 * record['smoothed_elbow_mae_rad']
        assert record['pacc_paper'] <= record['smoothed_pacc_paper']
        errors.append(record['elbow_mae_rad'])
    assert errors == sorted(errors) and errors[-1] > 2.0 * errors[0]


def test_the_elbow_error_is_scored_on_the_tracked_arm_and_on_the_smoothed_one(yumi, take):
    """
    The record's elbow MAE is that of the tracked arm; its ``smoothed_`` one, the smoothed arm's.

    The tracked arm is the take's own elbow, exactly. Per sample the error against it lies
    within the gap between the two people plus or minus the error against the smoothed one
    (the triangle inequality), so the lag shows in full.
    """
    settings = EvaluationSettings(
        processing=ProcessingConfig(time_constant=0.2), avoidance=AvoidanceConfig(0.0)
    )
    trace = run_imitation(yumi, take, SolverConfig(name='pic'), settings)
    record = _evaluate(yumi, take, ProcessingConfig(time_constant=0.2))
    against: dict[str, list[np.ndarray]] = {'tracked': [], 'smoothed': []}
    sides = []
    for arm in trace.arms.values():
        assert arm.tracked is not None
        solved = arm.solved
        robot = landmark_elbow_angle(arm.landmarks[solved])
        tracked = elbow_angle(*np.moveaxis(arm.tracked[solved], 1, 0))
        smoothed = elbow_angle(*np.moveaxis(arm.human[solved], 1, 0))
        against['tracked'].append(np.abs(tracked - robot))
        against['smoothed'].append(np.abs(smoothed - robot))
        sides.append(arm.human_side)
        if arm.human_side is Side.RIGHT:
            truth = np.pi - np.array([flexion(t) for t in trace.stamps[solved]])
            assert tracked == pytest.approx(truth, abs=1e-9)
            gap = np.abs(tracked - smoothed)
            assert float(np.mean(gap)) > 0.05  # the filter's lag on the bending elbow
            assert np.all(np.abs(against['tracked'][-1] - gap) <= against['smoothed'][-1] + 1e-9)
    assert Side.RIGHT in sides
    assert record['elbow_mae_rad'] == pytest.approx(float(np.mean(np.concatenate(
        against['tracked']))))
    assert record['smoothed_elbow_mae_rad'] == pytest.approx(float(np.mean(np.concatenate(
        against['smoothed']))))
