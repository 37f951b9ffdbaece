"""
bench --latency: the processes come up and answer, each answer paired with its input.

The pipeline's answers and the MarkerArray echo's are paired by the capture stamps they carry,
the UDP echo's in order.
"""

from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace

import numpy as np
from pic_ros_tools.report import latency_table
from pic_ros_tools.ros.latency_bench import (
    _reflected_result,
    _result,
    LatencyResult,
    pair_answers,
    reflected_latencies,
    run_latency_bench,
)
import pytest

PERIOD = 1.0 / 30.0
MS = 1_000_000  # [ns]


def test_one_answer_per_input_gives_each_its_own_latency() -> None:
    sent = np.arange(10) * PERIOD
    delays = np.linspace(0.002, 0.011, 10)
    assert pair_answers(sent, sent + delays) == pytest.approx(delays)


def test_a_keep_alive_answer_between_inputs_is_left_unpaired() -> None:
    sent = np.arange(30) * PERIOD
    answers = sorted([*(sent + 0.005), sent[12] + 0.027])  # the timer, 27 ms after input 12
    latencies = pair_answers(sent, answers)
    assert latencies == pytest.approx(np.full(30, 0.005))
    result = _result('pic_ros', 'azure_kinect', 30.0, list(sent), answers, warm=0)
    assert (result.drops, result.unpaired) == (0, 1)
    assert result.max_ms == pytest.approx(5.0)


def test_an_answer_later_than_the_next_input_still_pairs_with_its_own() -> None:
    sent = np.arange(5) * 0.004
    answers = sent + np.array([0.002, 0.006, 0.002, 0.003, 0.002])
    assert pair_answers(sent, np.sort(answers)) == pytest.approx(answers - sent)


def test_inputs_left_when_the_answers_run_out_are_drops() -> None:
    sent = np.arange(6) * PERIOD
    latencies = pair_answers(sent, sent[:4] + 0.004)
    assert np.isnan(latencies[4:]).all() and latencies[:4] == pytest.approx(0.004)
    result = _result('pic_ros', 'azure_kinect', 30.0, list(sent), list(sent[:4] + 0.004), 2)
    assert (result.sent, result.received, result.drops, result.unpaired) == (4, 2, 2, 0)


def test_warm_up_answers_are_not_scored() -> None:
    sent = np.arange(8) * PERIOD
    answers = list(sent + np.array([0.020, 0.020, 0.004, 0.004, 0.004, 0.004, 0.004, 0.004]))
    result = _result('pic_ros', 'azure_kinect', 30.0, list(sent), answers, warm=2)
    assert result.sent == 6 and result.drops == 0 and result.max_ms == pytest.approx(4.0)


def test_a_warm_up_answer_arriving_after_the_first_measured_input_is_not_unpaired() -> None:
    sent = np.arange(8) * PERIOD
    delays = np.array([0.004, 0.040, 0.010, 0.004, 0.004, 0.004, 0.004, 0.004])
    answers = sorted(sent + delays)  # input 1's answer comes after input 2 was sent
    assert answers[1] > sent[2]
    result = _result('pic_ros', 'azure_kinect', 30.0, list(sent), answers, warm=2)
    assert (result.sent, result.drops, result.unpaired) == (6, 0, 0)
    assert result.max_ms == pytest.approx(10.0)


def test_each_solved_input_is_timed_to_the_first_answer_published_after_its_targets() -> None:
    sent = [k * 33 * MS for k in range(6)]
    solved = [(t + 2 * MS, t) for t in sent]  # joint_targets published 2 ms after each input
    answers = [(t + 3 * MS, t + 4 * MS) for t in sent]  # its trajectory, received 1 ms later
    latencies, own, carrying = reflected_latencies(sent, solved, answers)
    assert latencies == pytest.approx(np.full(6, 0.004))
    assert own.all() and carrying.all()


def test_a_skipped_input_is_timed_to_the_answer_of_the_newer_input_that_carried_it() -> None:
    step = 4_166_667  # 240 Hz [ns]
    sent = [k * step for k in range(9)]
    solved = [(sent[k] + MS, sent[k]) for k in (0, 3, 6)]  # every third input solved
    answers = [(sent[k] + 2 * MS, sent[k] + 3 * MS) for k in (0, 3, 6)]
    latencies, own, _ = reflected_latencies(sent, solved, answers)
    assert own.tolist() == [k in (0, 3, 6) for k in range(9)]
    assert latencies[1] == pytest.approx((sent[3] + 3 * MS - sent[1]) * 1e-9)
    assert latencies[3] == pytest.approx(0.003)
    assert np.isnan(latencies[7:]).all()  # never carried: drops
    probe = SimpleNamespace(answers=answers, solved=solved)
    result = _reflected_result('pic_ros', 'xsens_mvn', 240.0, probe, sent, warm=1)
    assert (result.sent, result.drops, result.superseded, result.unpaired) == (8, 2, 4, 0)


def test_an_answer_before_any_new_target_carries_nothing() -> None:
    sent = [10 * MS, 43 * MS]
    solved = [(12 * MS, 10 * MS), (45 * MS, 43 * MS)]
    answers = [(5 * MS, 6 * MS), (13 * MS, 14 * MS), (30 * MS, 31 * MS), (46 * MS, 47 * MS)]
    latencies, _, carrying = reflected_latencies(sent, solved, answers)
    assert latencies * 1e3 == pytest.approx([4.0, 4.0])
    assert carrying.tolist() == [False, True, False, True]  # the timer's answers carry none
    result = _reflected_result('pic_ros', 'azure_kinect', 30.0, SimpleNamespace(
        answers=answers, solved=solved), sent, warm=0)
    assert (result.received, result.unpaired, result.superseded) == (3, 1, 0)


def test_a_capture_stamp_rounded_through_float_seconds_still_names_its_input() -> None:
    sent = [1_764_472_000 * 1_000_000_000 + k * 33 * MS for k in range(3)]
    solved = [(t + 2 * MS, t - 240) for t in sent]  # float seconds: a few hundred ns off
    answers = [(t + 3 * MS, t + 5 * MS) for t in sent]
    latencies, own, _ = reflected_latencies(sent, solved, answers)
    assert own.all() and latencies == pytest.approx(np.full(3, 0.005))


def test_the_latency_bench_runs_the_pipeline_and_the_floor(tmp_path) -> None:
    """
    Each path and input is measured end to end: the pipeline process comes up and answers.

    The pipeline twice: set to step on every input, and with the trajectory publisher's shipped
    timer and spacing.
    """
    results = run_latency_bench(robot='baxter', seconds=1.0, log_dir=tmp_path)
    assert {(item['path'], item['source']) for item in results} == {
        (path, source)
        for path in ('floor', 'pic_ros', 'pic_ros_defaults')
        for source in ('azure_kinect', 'xsens_mvn')
    }
    for item in results:
        assert item['sent'] > 0 and item['received'] > 0, item


def test_the_latency_table_says_how_each_pipeline_row_was_set() -> None:
    """The row measured at the bench's spacing and the row with the shipped defaults differ."""
    rows = [
        asdict(LatencyResult(path, 'azure_kinect', 30.0, 600, 600, 0, 5.0, 9.0, 12.0, 14))
        for path in ('floor', 'pic_ros', 'pic_ros_defaults')
    ]
    lines = latency_table(rows).splitlines()[-3:]
    assert 'floor (raw echo)' in lines[0]
    assert 'timer 14 Hz, min_interval 1 ms' in lines[1]
    assert 'shipped defaults' in lines[2]
