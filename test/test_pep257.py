"""The ament pep257 docstring check, as `colcon test` runs it on a ROS machine."""

import logging
from pathlib import Path

import pytest

ament_pep257 = pytest.importorskip('ament_pep257.main')

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.linter
@pytest.mark.pep257
def test_docstrings_follow_ament_pep257(monkeypatch, caplog):
    """Every docstring passes ament_pep257 (reST fields, summary on the second line)."""
    monkeypatch.chdir(ROOT)
    caplog.set_level(logging.WARNING)
    rc = ament_pep257.main(argv=['.', 'test'])
    assert rc == 0, 'Found docstring style errors (see the captured output)'
