"""bench --latency: the processes come up and answer; inputs and answers paired in order."""

from __future__ import annotations

import numpy as np
from pic_ros_tools.ros.latency_bench import _result, pair_answers, run_latency_bench
import pytest

PERIOD = 1.0 / 30.0


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


def test_the_latency_bench_runs_the_pipeline_and_the_floor(tmp_path) -> None:
    """Each path and input is measured end to end: the pipeline process comes up and answers."""
    results = run_latency_bench(robot='baxter', seconds=1.0, log_dir=tmp_path)
    assert {(item['path'], item['source']) for item in results} == {
        (path, source) for path in ('floor', 'pic_ros') for source in ('azure_kinect', 'xsens_mvn')
    }
    for item in results:
        assert item['sent'] > 0 and item['received'] > 0, item
