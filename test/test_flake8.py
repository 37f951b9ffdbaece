"""The ament flake8 check, as `colcon test` runs it on a ROS machine."""

from pathlib import Path

import pytest

ament_flake8 = pytest.importorskip('ament_flake8.main')

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.flake8
@pytest.mark.linter
def test_code_follows_ament_flake8_style(monkeypatch):
    """Every Python file of the package passes ament_flake8 (99 columns, quotes, imports)."""
    monkeypatch.chdir(ROOT)
    rc, errors = ament_flake8.main_with_errors(argv=[])
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
