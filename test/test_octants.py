"""Octant numbering, Hamming neighbourhoods and face projection (PIC paper §III, Eq. 3)."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.solvers.octants import (
    antipode,
    check_eta,
    hamming,
    is_admissible,
    neighbourhood,
    OCTANT_NAMES,
    octant_of,
    OCTANT_SIGNS,
    project_direction,
)
import pytest

# The paper's neighbourhood table (docs/method.md#numbering), by octant: η=1 adds, η=2 adds,
# antipode.
PAPER_TABLE = {
    1: ({2, 4, 5}, {3, 6, 8}, 7),
    2: ({1, 3, 6}, {4, 5, 7}, 8),
    3: ({2, 4, 7}, {1, 6, 8}, 5),
    4: ({1, 3, 8}, {2, 5, 7}, 6),
    5: ({1, 6, 8}, {2, 4, 7}, 3),
    6: ({2, 5, 7}, {1, 3, 8}, 4),
    7: ({3, 6, 8}, {2, 4, 5}, 1),
    8: ({4, 5, 7}, {1, 3, 6}, 2),
}

directions = st.tuples(
    st.floats(-1.0, 1.0, allow_nan=False),
    st.floats(-1.0, 1.0, allow_nan=False),
    st.floats(-1.0, 1.0, allow_nan=False),
)


def test_octants_keep_the_papers_meaning_in_robot_axes():
    """Octant 1 is right-up-back, 3 left-up-front, 8 right-down-front (x fwd, y left, z up)."""
    assert OCTANT_SIGNS[0] == (-1, -1, 1)
    assert OCTANT_NAMES[0] == 'right-up-back'
    assert OCTANT_SIGNS[2] == (1, 1, 1)
    assert OCTANT_NAMES[7] == 'right-down-front'
    assert sorted(OCTANT_SIGNS) == sorted(itertools.product((-1, 1), repeat=3))


@pytest.mark.parametrize('octant', range(1, 9))
def test_neighbourhoods_match_the_papers_table(octant):
    """η = 1, 2, 3 add exactly the octants of the paper's table; η = 3 admits all eight."""
    face, edge, opposite = PAPER_TABLE[octant]
    assert neighbourhood(octant, 0) == {octant}
    assert neighbourhood(octant, 1) == {octant} | face
    assert neighbourhood(octant, 2) == {octant} | face | edge
    assert neighbourhood(octant, 3) == set(range(1, 9))
    assert antipode(octant) == opposite
    assert hamming(octant, opposite) == 3


@pytest.mark.parametrize('octant', range(1, 9))
def test_octant_of_a_corner_diagonal_is_that_octant(octant):
    """The sign pattern of a direction names its octant."""
    assert octant_of(OCTANT_SIGNS[octant - 1]) == octant


def test_invalid_eta_and_octant_are_rejected_with_a_reason():
    """η must be 0..3 and octants 1..8."""
    with pytest.raises(ConfigError, match='eta must be an integer in 0..3'):
        check_eta(4)
    with pytest.raises(ConfigError, match='octant must be an integer in 1..8'):
        neighbourhood(9, 1)


def test_projection_onto_the_closest_face_drops_the_wrong_component():
    """A link just outside octant 3 (+,+,+) is projected onto the face it crossed."""
    projected = project_direction((0.6, 0.7, -0.1), 3)
    assert projected[2] == 0.0
    assert projected[0] > 0 and projected[1] > 0
    assert math.isclose(np.linalg.norm(projected), 1.0)


def test_projection_of_the_antipode_is_the_nearest_axis_of_the_octant():
    """When every sign is wrong the closest octant direction is its nearest axis."""
    assert project_direction((-0.1, -0.9, -0.4), 3) == (1.0, 0.0, 0.0)


@settings(max_examples=300, deadline=None)
@given(direction=directions, octant=st.integers(1, 8), eta=st.integers(0, 3))
def test_projection_is_admissible_unit_and_idempotent(direction, octant, eta):
    """Projected directions are unit, admissible, and projecting twice changes nothing."""
    projected = project_direction(direction, octant, eta)
    assert math.isclose(float(np.linalg.norm(projected)), 1.0, rel_tol=1e-9)
    assert is_admissible(projected, octant, eta)
    again = project_direction(projected, octant, eta)
    assert np.allclose(again, projected, atol=1e-12)


@settings(max_examples=300, deadline=None)
@given(direction=directions, octant=st.integers(1, 8), eta=st.integers(0, 3))
def test_admissible_directions_are_left_unchanged(direction, octant, eta):
    """A direction already in the admissible set is only normalised."""
    norm = float(np.linalg.norm(direction))
    if norm < 1e-6 or not is_admissible(np.array(direction) / norm, octant, eta, 0.0):
        return
    assert np.allclose(project_direction(direction, octant, eta), np.array(direction) / norm)


@settings(max_examples=200, deadline=None)
@given(direction=directions, octant=st.integers(1, 8), eta=st.integers(0, 3))
def test_projection_is_the_closest_admissible_direction(direction, octant, eta):
    """No admissible corner, edge or face direction is closer in angle than the projection."""
    vector = np.array(direction)
    if np.linalg.norm(vector) < 1e-6:
        return
    unit = vector / np.linalg.norm(vector)
    best = float(unit @ np.array(project_direction(direction, octant, eta)))
    for candidate in itertools.product((-1.0, 0.0, 1.0), repeat=3):
        c = np.array(candidate)
        if not c.any() or not is_admissible(c / np.linalg.norm(c), octant, eta):
            continue
        assert float(unit @ (c / np.linalg.norm(c))) <= best + 1e-9
