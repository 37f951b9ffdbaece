"""
The ROS domain of a run: an exported ``ROS_DOMAIN_ID`` (and discovery range) wins.

On a shared host the user exports the domain reserved for them; the test suite, the demo and the
latency benchmark must use it as it is, and only choose a domain of their own when none is
exported (:mod:`pic_ros_tools.ros.processes`, which imports no rclpy).
"""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

from pic_ros_tools.ros import processes
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Remove the ROS variables, so that each test sets exactly the ones it is about."""
    for name in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY'):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_an_exported_domain_id_is_used_as_it_is(clean_environment) -> None:
    """ROS_DOMAIN_ID=163 gives 163 to the run, its children and its own contexts."""
    clean_environment.setenv('ROS_DOMAIN_ID', '163')

    assert processes.domain_id() == 163
    assert processes.loopback_environment()['ROS_DOMAIN_ID'] == '163'
    assert processes.use_run_domain() == 163
    assert processes.domain_id() == 163


def test_an_exported_domain_id_wins_over_a_seed(clean_environment) -> None:
    """The seed only picks a domain when none is exported."""
    clean_environment.setenv('ROS_DOMAIN_ID', ' 7 ')

    assert processes.domain_id(seed=41) == 7


def test_without_an_exported_domain_the_run_chooses_its_own(clean_environment) -> None:
    """No ROS_DOMAIN_ID: one in 1..100 from the seed (the process id), then given to children."""
    assert processes.domain_id(seed=41) == 42
    assert 1 <= processes.domain_id() <= 100

    chosen = processes.use_run_domain()

    assert processes.loopback_environment()['ROS_DOMAIN_ID'] == str(chosen)
    assert processes.domain_id() == chosen


def test_an_empty_exported_domain_counts_as_none(clean_environment) -> None:
    """ROS_DOMAIN_ID='' is what rcl reads as unset: the run chooses."""
    clean_environment.setenv('ROS_DOMAIN_ID', '')

    assert processes.domain_id(seed=9) == 10


@pytest.mark.parametrize('text', ['abc', '-1', '233', '1.5'])
def test_an_exported_domain_that_is_no_domain_id_is_refused_with_the_reason(
    clean_environment, text: str
) -> None:
    """A value rcl could not use stops the run with the variable and the allowed range named."""
    clean_environment.setenv('ROS_DOMAIN_ID', text)

    with pytest.raises(ValueError, match=r'ROS_DOMAIN_ID=.*0\.\.232'):
        processes.domain_id()


def test_an_exported_discovery_range_is_kept(clean_environment) -> None:
    """ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET stays SUBNET for the children; unset is LOCALHOST."""
    assert processes.loopback_environment(5)['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'

    clean_environment.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'SUBNET')

    assert processes.discovery_range() == 'SUBNET'
    assert processes.loopback_environment(5)['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'SUBNET'


def test_the_node_tests_take_the_exported_domain_and_range() -> None:
    """Loading the node tests' conftest leaves an exported domain and range as they were."""
    pytest.importorskip('rclpy', reason='the node tests need rclpy')
    script = (
        'import os, sys\n'
        f'sys.path.insert(0, {str(ROOT / "test" / "ros")!r})\n'
        'import conftest\n'
        "print(os.environ['ROS_DOMAIN_ID'], os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'],"
        ' conftest.RUN_DOMAIN)\n'
    )
    environment = processes.loopback_environment(
        extra={'ROS_DOMAIN_ID': '161', 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET'}
    )

    completed = subprocess.run(
        [sys.executable, '-c', script], env=environment, cwd=ROOT, capture_output=True,
        text=True, timeout=60.0, check=False,
    )

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ['161', 'SUBNET', '161']
