"""
Octant hysteresis: the human's octants read with a dead band, and the slack it gives the octants.

The invariants, from :mod:`pic_ros.solvers.octants`, :mod:`pic_ros.solvers.iteration` and
:func:`~pic_ros.solvers.point_imitation.human_octants`:

* with a band of 0, or no previous octant, the octant is the plain sign pattern of the direction
  (a zero component counts as positive);
* otherwise a component whose sign differs from the previous octant's keeps the previous sign
  while its magnitude is *below* the band, and takes its own sign from the band on; every axis
  is decided on its own, the same way on each axis and for each sign;
* the band is also the constraints' membership slack (``OctantConstraints.tolerance``), so the
  human's own bones always satisfy the octants read from them;
* ``project_direction(..., tolerance)`` leaves a direction alone when at most η of its components
  are wrong by more than the tolerance; otherwise the result lies in the admissible set itself.
"""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.correspondence import ArmTargets, TargetKind
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.skeleton import MIN_BONE_LENGTH
from pic_ros.solvers import make_solver, OctantConstraints, SolverConfig
from pic_ros.solvers.octants import (
    antipode,
    hamming,
    is_admissible,
    MEMBERSHIP_TOLERANCE,
    octant_of,
    OCTANT_SIGNS,
    octant_with_hysteresis,
    project_direction,
)
from pic_ros.solvers.point_imitation import human_octants
import pytest

BAND = 0.1
"""The default octant hysteresis (SolverConfig.octant_hysteresis)."""

SEEDED = settings(deadline=None, derandomize=True)
"""Hypothesis settings of this module: the same examples on every run."""

OCTANTS = range(1, 9)
AXES = range(3)

components = st.floats(-1.0, 1.0, allow_nan=False)
directions = st.tuples(components, components, components)
bones = directions.filter(lambda v: float(np.linalg.norm(v)) >= 2.0 * MIN_BONE_LENGTH)


def signs_of(direction) -> tuple[int, int, int]:
    """Return the sign pattern of a vector, a zero component counting as positive."""
    return tuple(1 if value >= 0.0 else -1 for value in direction)


def with_component(octant: int, axis: int, value: float) -> tuple[float, float, float]:
    """
    Return a unit vector with ``value`` on ``axis``, the other two on the octant's side.

    The other two components are equal in magnitude and carry the octant's signs.
    """
    signs = OCTANT_SIGNS[octant - 1]
    rest = math.sqrt((1.0 - value * value) / 2.0)
    vector = [signs[i] * rest for i in AXES]
    vector[axis] = value
    return (vector[0], vector[1], vector[2])


def flipped(octant: int, *axes: int) -> int:
    """Return the octant whose signs are the given octant's with some axes flipped."""
    signs = list(OCTANT_SIGNS[octant - 1])
    for axis in axes:
        signs[axis] = -signs[axis]
    return OCTANT_SIGNS.index(tuple(signs)) + 1


def constraints_of(octant: int, band: float) -> OctantConstraints:
    """Return the constraints of a previous frame whose two bones were in ``octant``."""
    return OctantConstraints(octant, antipode(octant), octant, antipode(octant), tolerance=band)


# --- reading the octant -----------------------------------------------------------------------


@settings(SEEDED, max_examples=300)
@given(direction=directions, previous=st.integers(0, 8))
def test_without_hysteresis_the_octant_is_the_plain_sign_pattern(direction, previous):
    """A band of 0 ignores the previous octant: the octant is the direction's sign pattern."""
    octant = octant_with_hysteresis(direction, previous, 0.0)
    assert octant == octant_of(direction)
    assert OCTANT_SIGNS[octant - 1] == signs_of(direction)


@settings(SEEDED, max_examples=300)
@given(direction=directions, band=st.floats(0.0, 0.5))
def test_without_a_previous_octant_the_band_changes_nothing(direction, band):
    """The first frame (previous 0) reads the plain sign pattern whatever the band."""
    assert octant_with_hysteresis(direction, 0, band) == octant_of(direction)


@pytest.mark.parametrize('axis', AXES)
@pytest.mark.parametrize('previous', OCTANTS)
@settings(SEEDED, max_examples=30)
@given(fraction=st.floats(0.0, 1.0, exclude_max=True))
def test_a_component_inside_the_band_keeps_the_previous_octant(previous, axis, fraction):
    """A bone that crossed a plane by less than the band stays in its previous octant."""
    wrong = -OCTANT_SIGNS[previous - 1][axis] * fraction * BAND
    direction = with_component(previous, axis, wrong)
    assert octant_of(direction) != previous or wrong == 0.0
    assert octant_with_hysteresis(direction, previous, BAND) == previous
    read = human_octants(direction, direction, previous=constraints_of(previous, BAND),
                         hysteresis=BAND)
    assert (read.shoulder_out, read.elbow_out) == (previous, previous)


@pytest.mark.parametrize('axis', AXES)
@pytest.mark.parametrize('previous', OCTANTS)
@settings(SEEDED, max_examples=30)
@given(magnitude=st.floats(BAND, 0.99))
def test_a_component_beyond_the_band_switches_to_the_neighbour_octant(previous, axis, magnitude):
    """A bone that crossed a plane by the band or more moves to the octant across that plane."""
    direction = with_component(previous, axis, -OCTANT_SIGNS[previous - 1][axis] * magnitude)
    octant = octant_with_hysteresis(direction, previous, BAND)
    assert octant == flipped(previous, axis) == octant_of(direction)
    assert hamming(octant, previous) == 1
    read = human_octants(direction, direction, previous=constraints_of(previous, BAND),
                         hysteresis=BAND)
    assert (read.shoulder_out, read.elbow_out) == (octant, octant)


@pytest.mark.parametrize('axis', AXES)
@pytest.mark.parametrize('previous', OCTANTS)
def test_the_band_edge_itself_switches(previous, axis):
    """A wrong component of exactly the band switches; one just below keeps (strict ``<``)."""
    sign = -OCTANT_SIGNS[previous - 1][axis]
    at_edge = [0.5 * s for s in OCTANT_SIGNS[previous - 1]]
    at_edge[axis] = sign * BAND
    assert octant_with_hysteresis(at_edge, previous, BAND) == flipped(previous, axis)
    at_edge[axis] = sign * math.nextafter(BAND, 0.0)
    assert octant_with_hysteresis(at_edge, previous, BAND) == previous


@pytest.mark.parametrize('previous', OCTANTS)
@pytest.mark.parametrize(('kept', 'switched'), list(itertools.permutations(AXES, 2)))
def test_each_axis_keeps_or_switches_on_its_own(previous, kept, switched):
    """One component inside the band and another beyond it: only the second one flips."""
    signs = OCTANT_SIGNS[previous - 1]
    direction = [0.0, 0.0, 0.0]
    direction[kept] = -signs[kept] * 0.5 * BAND
    direction[switched] = -signs[switched] * 0.7
    third = 3 - kept - switched
    direction[third] = signs[third] * math.sqrt(1.0 - direction[kept] ** 2 - 0.49)
    assert octant_with_hysteresis(direction, previous, BAND) == flipped(previous, switched)


@pytest.mark.parametrize('previous', OCTANTS)
def test_a_zero_component_keeps_a_negative_previous_sign(previous):
    """Without a band a zero component reads positive; with one it keeps the previous sign."""
    signs = OCTANT_SIGNS[previous - 1]
    for axis in AXES:
        direction = [0.6 * s for s in signs]
        direction[axis] = 0.0
        assert OCTANT_SIGNS[octant_of(direction) - 1][axis] == 1
        assert octant_with_hysteresis(direction, previous, BAND) == previous


@pytest.mark.parametrize('axis', AXES)
def test_a_bone_sweeping_across_a_plane_switches_once_each_way(axis):
    """
    A bone sweeping across a plane and back, with noise smaller than the band, switches twice.

    Going one way it switches at the first frame whose component is past ``-band``, coming back
    at the first past ``+band``; without hysteresis the same noise makes it flicker.
    """
    rng = np.random.default_rng(7)
    sweep = np.concatenate([np.linspace(0.5, -0.5, 200), np.linspace(-0.5, 0.5, 200)])
    frames = np.tile([0.6, -0.6, 0.6], (sweep.size, 1))
    frames[:, axis] = sweep + rng.uniform(-0.05, 0.05, sweep.size)
    unit = frames[:, axis] / np.linalg.norm(frames, axis=1)  # the component the band applies to
    for band, most in ((BAND, 2), (0.0, None)):
        previous = None
        switches = []
        for index, direction in enumerate(frames):
            read = human_octants(direction, direction, previous=previous, hysteresis=band)
            if previous is not None and read.shoulder_out != previous.shoulder_out:
                switches.append(index)
            previous = read
        if most is None:
            assert len(switches) > 2, 'the noise should make a band-less reading flicker'
            continue
        assert len(switches) == most
        down, up = switches
        assert unit[down] <= -band and np.all(unit[:down] > -band)
        assert down < 200 <= up
        assert unit[up] >= band and np.all(unit[200:up] < band)


def test_human_octants_follow_the_out_octants_and_their_antipodes():
    """IN octants are the OUT ones' antipodes; the slack is the band (never below rounding)."""
    # Only the previous OUT octants count: the IN ones here are not their antipodes.
    previous = OctantConstraints(3, 1, 8, 1)
    upper = (0.5, -0.05, 0.5)  # y wrong for octant 3 (+,+,+) but inside the band
    fore = (0.5, -0.5, 0.05)  # z wrong for octant 8 (+,-,-) but inside the band
    read = human_octants(upper, fore, 2, previous, BAND)
    assert read.octants == (3, antipode(3), 8, antipode(8))
    assert (read.eta, read.tolerance) == (2, BAND)
    plain = human_octants(upper, fore, 0, previous, 0.0)
    assert plain.octants == (4, antipode(4), 4, antipode(4))
    assert plain.tolerance == MEMBERSHIP_TOLERANCE
    short = human_octants((0.0, 0.0, 0.5 * MIN_BONE_LENGTH), fore, hysteresis=BAND)
    assert not short.upper_arm and short.forearm


@settings(SEEDED, max_examples=300)
@given(
    upper=bones,
    fore=bones,
    previous=st.none() | st.tuples(st.integers(1, 8), st.integers(1, 8)),
    band=st.floats(0.0, 0.5),
    eta=st.integers(0, 3),
)
def test_the_human_bones_always_satisfy_the_octants_read_from_them(
    upper, fore, previous, band, eta
):
    """Whatever the previous octants, the human's own arm is admissible under its constraints."""
    before = None
    if previous is not None:
        before = OctantConstraints(previous[0], antipode(previous[0]), previous[1],
                                   antipode(previous[1]))
    constraints = human_octants(upper, fore, eta, before, band)
    shoulder = np.zeros(3)
    elbow = shoulder + np.array(upper)
    wrist = elbow + np.array(fore)
    points = tuple(tuple(p) for p in (shoulder + (0, 0, 0.1), shoulder, elbow, wrist, wrist))
    assert constraints.satisfied_by(points)


# --- membership slack ---------------------------------------------------------------------------


SLOTS = ('shoulder_out', 'elbow_in', 'elbow_out', 'wrist_in')


@pytest.mark.parametrize('axis', AXES)
@pytest.mark.parametrize('slot', SLOTS)
@pytest.mark.parametrize(('excess', 'satisfied'), [(0.9, True), (1.1, False)])
def test_a_constraint_holds_while_the_wrong_component_is_within_its_tolerance(
    slot, axis, excess, satisfied
):
    """
    Each of the four constraints admits a wrong component up to the tolerance, and no more.

    The bone direction each constraint looks at (the upper arm or forearm, reversed for the IN
    constraints) is wrong on one axis by ``excess`` x the tolerance; every other constraint is
    met by the same points.
    """
    octant = 3
    seen = with_component(octant, axis, -excess * BAND)  # the direction this slot checks
    other = (0.3, -0.5, 0.8)
    reverse = slot.endswith('_in')
    bone = tuple(-v for v in seen) if reverse else seen
    upper_arm = slot in ('shoulder_out', 'elbow_in')
    upper, fore = (bone, other) if upper_arm else (other, bone)
    octants = {
        'shoulder_out': octant_of(upper), 'elbow_in': octant_of([-v for v in upper]),
        'elbow_out': octant_of(fore), 'wrist_in': octant_of([-v for v in fore]),
    }
    octants[slot] = octant
    constraints = OctantConstraints(**octants, tolerance=BAND)
    elbow = tuple(upper)
    wrist = tuple(e + f for e, f in zip(elbow, fore, strict=True))
    points = ((0.0, 0.0, 0.1), (0.0, 0.0, 0.0), elbow, wrist, wrist)
    assert constraints.satisfied_by(points) is satisfied
    assert OctantConstraints(**octants, tolerance=excess * BAND * 1.01).satisfied_by(points)
    unconstrained = OctantConstraints(**octants, tolerance=BAND, upper_arm=not upper_arm,
                                      forearm=upper_arm)
    assert unconstrained.satisfied_by(points)
    assert OctantConstraints(**octants, eta=1, tolerance=0.0).satisfied_by(points)


# --- projection with a tolerance ----------------------------------------------------------------


def widened_mismatches(unit, octant: int, tolerance: float) -> int:
    """Count the components of a unit direction wrong by more than ``tolerance``."""
    signs = OCTANT_SIGNS[octant - 1]
    return sum(1 for i in AXES if signs[i] * unit[i] < -tolerance)


@settings(SEEDED, max_examples=500)
@given(
    direction=directions,
    octant=st.integers(1, 8),
    eta=st.integers(0, 3),
    tolerance=st.floats(0.0, 0.5),
)
def test_projection_lands_in_the_widened_octant_and_keeps_what_is_already_there(
    direction, octant, eta, tolerance
):
    """
    The result is unit and admissible with the slack; an input already there is only normalised.

    When a projection is needed the result is admissible without any slack.
    """
    norm = float(np.linalg.norm(direction))
    projected = np.array(project_direction(direction, octant, eta, tolerance))
    assert math.isclose(float(np.linalg.norm(projected)), 1.0, rel_tol=1e-9)
    assert is_admissible(projected, octant, eta, tolerance + MEMBERSHIP_TOLERANCE)
    if norm < 1e-9:
        return
    unit = np.array(direction) / norm
    if widened_mismatches(unit, octant, tolerance) <= eta:
        np.testing.assert_allclose(projected, unit, rtol=0.0, atol=1e-12)
    else:
        assert is_admissible(projected, octant, eta, 0.0)


@settings(SEEDED, max_examples=300)
@given(
    direction=directions,
    octant=st.integers(1, 8),
    eta=st.integers(0, 3),
    narrow=st.floats(0.0, 0.5),
    wider=st.floats(0.0, 0.5),
)
def test_a_wider_tolerance_leaves_more_directions_alone(direction, octant, eta, narrow, wider):
    """What a narrower slack leaves unchanged a wider one leaves alone too; 0 is the default."""
    narrow, wider = sorted((narrow, wider))
    assert project_direction(direction, octant, eta, 0.0) == project_direction(
        direction, octant, eta
    )
    norm = float(np.linalg.norm(direction))
    if norm < 1e-9:
        return
    unit = np.array(direction) / norm
    if np.allclose(project_direction(direction, octant, eta, narrow), unit, rtol=0.0, atol=1e-12):
        np.testing.assert_allclose(project_direction(direction, octant, eta, wider), unit,
                                   rtol=0.0, atol=1e-12)


def test_a_projection_zeroes_the_components_inside_the_band_first():
    """Octant 3 (+,+,+): y is wrong within the band, z beyond it."""
    direction = (0.7, -0.05, -0.7)
    # η = 0: one component beyond the band, so project; both wrong components are dropped.
    assert project_direction(direction, 3, 0, BAND) == (1.0, 0.0, 0.0)
    # η = 1: one component beyond the band is allowed: the direction is kept.
    unit = np.array(direction) / np.linalg.norm(direction)
    np.testing.assert_allclose(project_direction(direction, 3, 1, BAND), unit, atol=1e-15)
    # η = 1 with both beyond the band: the smaller wrong component goes, the larger stays.
    projected = project_direction((0.6, -0.3, -0.2), 3, 1, BAND)
    assert projected[2] == 0.0 and projected[1] < -BAND
    np.testing.assert_allclose(np.linalg.norm(projected), 1.0, atol=1e-15)


# --- in the solver ------------------------------------------------------------------------------


def wobbling_targets(arm, values, axis: int):
    """Yield SHAPE targets whose upper-arm direction has ``values`` on one axis."""
    shoulder = arm.landmarks(arm.neutral)[1]
    for value in values:
        upper = np.array([0.3, 0.0, -0.6])
        upper[axis] = value
        upper = 0.3 * upper / np.linalg.norm(upper)
        elbow = shoulder + upper
        yield ArmTargets(shoulder, elbow, elbow + np.array([0.25, 0.0, 0.0]), TargetKind.SHAPE)


@pytest.mark.parametrize('robot_name', shipped_robots())
def test_the_pic_solver_keeps_its_octants_while_a_bone_wobbles_inside_the_band(robot_name):
    """
    A human upper arm wobbling across the y = 0 plane inside the band keeps the solver's octants.

    Without hysteresis the same frames change the octants; after ``reset`` the octants are read
    afresh (a new previous octant).
    """
    arm = next(iter(load_robot(robot_name).arms.values()))
    wobble = 0.25 * BAND * np.sin(np.arange(40) * 0.9)  # unit y component stays below the band
    counts = {}
    for band in (BAND, 0.0):
        solver = make_solver(arm, SolverConfig(name='pic', octant_hysteresis=band))
        read = [solver.solve(targets).octants for targets in wobbling_targets(arm, wobble, 1)]
        counts[band] = sum(1 for a, b in zip(read, read[1:], strict=False) if a != b)
        if band:
            solver.reset()
            first = next(wobbling_targets(arm, [-0.05], 1))
            assert read[-1][0] != octant_of(first.upper_arm)
            assert solver.solve(first).octants[0] == octant_of(first.upper_arm)
    assert counts[BAND] == 0
    assert counts[0.0] > 5


@pytest.mark.parametrize('robot_name', shipped_robots())
def test_continuing_from_another_answer_keeps_the_octants_and_a_reset_forgets_them(robot_name):
    """
    ``continue_from`` (the avoidance moved the answer) moves the warm start only; ``reset`` too.

    After either, the solver starts from the configuration given; only ``reset`` reads the next
    octants afresh.
    """
    arm = next(iter(load_robot(robot_name).arms.values()))
    solver = make_solver(arm, SolverConfig(name='pic', octant_hysteresis=BAND))
    kept = solver.solve(next(wobbling_targets(arm, [0.05], 1))).octants
    across = next(wobbling_targets(arm, [-0.05], 1))  # across y = 0, inside the band
    assert octant_of(across.upper_arm) != kept[0]
    moved = arm.clamp(arm.neutral + 0.1)
    solver.continue_from(moved)
    np.testing.assert_array_equal(solver.q, moved)
    assert solver.solve(across).octants[0] == kept[0]
    solver.continue_from(moved)
    solver.reset(moved)
    np.testing.assert_array_equal(solver.q, moved)
    assert solver.solve(across).octants[0] == octant_of(across.upper_arm)


@pytest.mark.parametrize('robot_name', shipped_robots())
def test_a_solver_that_replaces_another_keeps_its_octants(robot_name):
    """
    ``adopt`` (a parameter change builds new solvers) carries the previous octants over.

    A PICs solver replacing a PIC one reads a bone just across a plane, inside the band, in the
    octant the replaced solver had; a fresh one reads the plain sign octant.
    """
    arm = next(iter(load_robot(robot_name).arms.values()))
    old = make_solver(arm, SolverConfig(name='pic', octant_hysteresis=BAND))
    kept = old.solve(next(wobbling_targets(arm, [0.05], 1))).octants
    across = next(wobbling_targets(arm, [-0.05], 1))
    new = make_solver(arm, SolverConfig(name='pics', eta=1, octant_hysteresis=BAND))
    new.reset(old.q)
    new.adopt(old)
    assert new.solve(across).octants[0] == kept[0] != octant_of(across.upper_arm)
    fresh = make_solver(arm, SolverConfig(name='pics', eta=1, octant_hysteresis=BAND))
    fresh.reset(old.q)
    assert fresh.solve(across).octants[0] == octant_of(across.upper_arm)
