"""Shared fixtures: paths to the project and to the shared reference data, and a seeded RNG."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import settings as hypothesis_settings
import numpy as np
import pytest

# Property tests draw the same examples on every run and keep no example database (a fixed seed
# profile, as CI needs); set HYPOTHESIS_PROFILE=explore to draw new ones while developing.
hypothesis_settings.register_profile('pic_ros', derandomize=True, deadline=None, database=None)
hypothesis_settings.register_profile('explore', derandomize=False, deadline=None)
hypothesis_settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'pic_ros'))

# MuJoCo picks its GL backend when first imported: headless machines need EGL, set before that.
os.environ.setdefault('MUJOCO_GL', 'egl')

MARKERS = (
    'linter: ament lint checks',
    'flake8: the ament flake8 check',
    'pep257: the ament pep257 docstring check',
    'ros: needs rclpy and DDS (cross-process tests on loopback)',
    'slow: takes more than a few seconds',
    'launch: needs the ROS 2 launch system, the ros2 CLI and colcon (make ros-tools)',
)
"""The markers of the suite (``--strict-markers``), here for both configurations that run it:
``pytest.ini`` (``make test``) and ``pic_ros_tools/setup.cfg`` (``colcon test``)."""


def pytest_configure(config: pytest.Config) -> None:
    """Register the suite's markers."""
    for marker in MARKERS:
        config.addinivalue_line('markers', marker)


PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get('PIC_ROS_SHARED_DATA', PROJECT_ROOT.parent / 'shared' / 'data'))


@pytest.fixture(scope='session')
def project_root() -> Path:
    """Root of the pic_ros source tree."""
    return PROJECT_ROOT


@pytest.fixture(scope='session')
def shared_data() -> Path:
    """
    Root of the shared reference data (``../shared/data`` beside the project).

    Tests that use it are skipped, with the reason, when it is absent.
    """
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f'shared reference data not found at {SHARED_DATA}; this test needs ../shared/data '
            '(or PIC_ROS_SHARED_DATA) with the PIC demonstrations, the Azure Kinect bag and '
            'the reference URDFs'
        )
    return SHARED_DATA


@pytest.fixture
def rng() -> np.random.Generator:
    """Seeded random generator; each test gets the same stream."""
    return np.random.default_rng(20261122)


@pytest.fixture(scope='session')
def compiled_kernels() -> object:
    """
    Compile every numba kernel once, in this process, before tests that start node processes.

    A node process started right after a fresh install would compile them itself before it
    subscribes (tens of seconds on a busy 2-core machine, close to the tests' bounded waits);
    compiled here, every process reads them from numba's cache. The simulator's own kernel too.

    :return: The report of :func:`pic_ros.kernels.prepare_kernels`.
    """
    from pic_ros.kernels import prepare_kernels
    from pic_ros_tools.sim import plan_state

    report = prepare_kernels()
    plan_state.load()
    return report
