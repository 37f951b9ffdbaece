"""
The hand's variable admittance: it yields to a push and returns, and only stable sets are taken.

Behaviours and invariants of :mod:`pic_ros.motion.admittance`: the push and the return, the
three stability bounds (admitted sets decay, refused sets are named), the role switching of the
paper's interaction factor, determinism and rejected inputs.
"""

from __future__ import annotations

import itertools

import numpy as np
from pic_ros.exceptions import ConfigError
from pic_ros.motion.admittance import (
    ADMITTANCE_PARAMETERS,
    AdmittanceConfig,
    AdmittanceInput,
    AdmittanceRole,
    update_matrix,
    VariableAdmittance,
)
import pytest

TARGET = np.array([0.6, -0.2, 1.0])
PUSH = np.array([6.0, -3.0, 2.0])  # 7 N, over the 5 N threshold


def run(
    admittance: VariableAdmittance, force: np.ndarray, seconds: float, dt: float = 0.01
) -> list:
    """Step with a constant force and target for a time; return every step."""
    return [admittance.step(TARGET, force, dt) for _ in range(round(seconds / dt))]


# --- configuration --------------------------------------------------------------------------


def test_the_defaults_are_the_papers_values_and_pass_every_bound() -> None:
    """The paper's parameters (Sec. II-E) are the defaults, and the bounds admit them."""
    config = AdmittanceConfig()
    assert (config.mass, config.damping_ratio) == (1.0, 1.1)
    assert (config.stiffness_compliant, config.stiffness_stiff) == (10.0, 500.0)
    assert (config.transition_gain, config.transition_offset) == (20.0, -5.5)
    assert (config.fall_rate, config.rise_rate, config.force_window) == (-0.2, 1.5, 25)
    assert config.damping_stiff == pytest.approx(2 * 1.1 * np.sqrt(500.0))
    assert config.period < config.max_stable_period


def test_parameters_build_the_config_and_default_to_it() -> None:
    """``from_parameters`` reads the ``admittance_*`` parameters; missing ones take defaults."""
    assert AdmittanceConfig.from_parameters({}) == AdmittanceConfig()
    assert all(item.name.startswith('admittance_') for item in ADMITTANCE_PARAMETERS)
    config = AdmittanceConfig.from_parameters({'admittance_stiffness_stiff': 300})
    assert config.stiffness_stiff == 300.0
    with pytest.raises(ConfigError, match='admittance_mass'):
        AdmittanceConfig.from_parameters({'admittance_mass': -1.0})


def test_a_value_out_of_range_is_refused_with_the_field_name() -> None:
    """Ranges come from the ParameterDefs; the message names the config field."""
    with pytest.raises(ConfigError, match=r'^damping_ratio must be'):
        AdmittanceConfig(damping_ratio=0.0)
    with pytest.raises(ConfigError, match='at least stiffness_compliant'):
        AdmittanceConfig(stiffness_compliant=100.0, stiffness_stiff=50.0)
    with pytest.raises(ConfigError, match=r'^period must be in \[0.001, 1.0\]'):
        AdmittanceConfig(period=1e-5)  # every frame split into thousands of steps


def test_a_set_outside_the_papers_closed_form_bound_is_refused_with_both_sides() -> None:
    """A fast return to stiff (c_minus -5 /s) breaks the paper's sufficient condition."""
    with pytest.raises(ConfigError) as caught:
        AdmittanceConfig(fall_rate=-5.0)
    message = str(caught.value)
    assert 'stability bound of Arduengo et al. (Sec. II-E, sufficient condition)' in message
    assert '198.625 N/(m s) must be < 4 zeta k_min^1.5 / (sqrt(m) (1 + 4 zeta^2)) = 23.8254' in (
        message
    )


def test_the_rate_bound_refuses_a_set_the_closed_form_admits() -> None:
    """The stiffness rises fastest mid-transition, where the closed form does not look."""
    with pytest.raises(ConfigError) as caught:
        AdmittanceConfig(stiffness_stiff=40.0, fall_rate=-1.0)
    message = str(caught.value)
    assert 'stiffness-rate bound over the role range' in message
    assert 'rises at up to 142.655 N/(m s)' in message


def test_a_period_over_the_discrete_bound_is_refused_and_really_unstable() -> None:
    """Bound 3 is exact: the refused period gives an update matrix with an eigenvalue >= 1."""
    config = AdmittanceConfig()
    period = 0.04
    with pytest.raises(ConfigError) as caught:
        AdmittanceConfig(period=period)
    assert 'discrete-time stability bound' in str(caught.value)
    assert 'largest stable period is 0.0345792 s' in str(caught.value)
    matrix = update_matrix(config.mass, config.damping_stiff, config.stiffness_stiff, period)
    assert max(abs(np.linalg.eigvals(matrix))) >= 1.0


# --- stability sweeps -----------------------------------------------------------------------

MASSES = (0.5, 1.0, 4.0)
RATIOS = (0.5, 1.1, 2.0)
COMPLIANT = (10.0, 50.0)
STIFF = (50.0, 500.0, 2000.0)
PERIODS = (0.002, 0.01, 0.02, 0.05)


def _grid() -> list[tuple[float, float, float, float, float]]:
    return [
        case for case in itertools.product(MASSES, RATIOS, COMPLIANT, STIFF, PERIODS)
        if case[3] >= case[2]
    ]


def _config(case: tuple[float, float, float, float, float]) -> AdmittanceConfig | None:
    mass, ratio, k_min, k_max, period = case
    try:
        return AdmittanceConfig(
            mass=mass, damping_ratio=ratio, stiffness_compliant=k_min, stiffness_stiff=k_max,
            period=period,
        )
    except ConfigError:
        return None


def test_the_sweep_has_admitted_and_refused_sets() -> None:
    """The grid crosses the bounds, so the sweeps below test both sides."""
    admitted = [_config(case) is not None for case in _grid()]
    assert any(admitted) and not all(admitted)


@pytest.mark.parametrize('case', _grid())
def test_every_admitted_set_has_a_contracting_update_at_every_stiffness(case) -> None:
    """Eigenvalues of the discrete update inside the unit circle from k_min to k_max."""
    config = _config(case)
    if config is None:
        return
    for k in np.linspace(config.stiffness_compliant, config.stiffness_stiff, 9):
        matrix = update_matrix(config.mass, config.damping(k), k, config.period)
        assert max(abs(np.linalg.eigvals(matrix))) < 1.0
        # and its response to a unit force impulse (1 N s: e' jumps by 1 / m) decays, 20 s
        state = np.array([0.0, 1.0 / config.mass])
        peak = float(abs(state).max())
        for _ in range(round(20.0 / config.period)):
            state = matrix @ state
            peak = max(peak, float(abs(state).max()))
        assert float(abs(state).max()) < 1e-3 * peak


def test_every_period_the_discrete_bound_refuses_is_unstable_at_the_stiff_role() -> None:
    """On the grid, bound 3 refuses exactly the frozen stiff systems with an eigenvalue >= 1."""
    for mass, ratio, _, k_max, period in _grid():
        damping = 2.0 * ratio * np.sqrt(mass * k_max)
        radius = max(abs(np.linalg.eigvals(update_matrix(mass, damping, k_max, period))))
        refused = period**2 * k_max + 2.0 * period * damping >= 4.0 * mass
        assert refused == (radius >= 1.0)


@pytest.mark.parametrize('case', _grid())
def test_every_admitted_set_returns_after_an_impulse_and_a_push(case) -> None:
    """Time-varying stiffness: a kick, then a 3 s push that turns the hand compliant, decay."""
    config = _config(case)
    if config is None:
        return
    admittance = VariableAdmittance(config)
    dt = 0.05
    admittance.step(TARGET, 200.0 * PUSH, dt)  # an impulse: one sample, 70 N s / 25 filtered
    steps = run(admittance, np.zeros(3), 5.0, dt)
    steps += run(admittance, PUSH, 3.0, dt) + run(admittance, np.zeros(3), 25.0, dt)
    peak = max(float(np.linalg.norm(step.deviation)) for step in steps)
    assert all(np.isfinite(step.deviation).all() for step in steps)
    assert float(np.linalg.norm(steps[-1].deviation)) < 1e-3 * peak
    assert steps[-1].role is AdmittanceRole.STIFF


# --- the push -------------------------------------------------------------------------------


def test_a_push_makes_the_hand_yield_along_the_force_like_the_compliant_spring() -> None:
    """Under a sustained push the hand turns compliant and settles at F / k_min."""
    config = AdmittanceConfig()
    admittance = VariableAdmittance(config)
    steps = run(admittance, PUSH, 4.0)
    final = steps[-1]
    assert final.role is AdmittanceRole.COMPLIANT
    assert final.stiffness == pytest.approx(config.stiffness_compliant, rel=1e-4)
    direction = final.deviation / np.linalg.norm(final.deviation)
    assert direction @ PUSH / np.linalg.norm(PUSH) > 1.0 - 1e-9
    expected = np.linalg.norm(PUSH) / config.stiffness_compliant
    assert np.linalg.norm(final.deviation) == pytest.approx(expected, rel=0.01)
    np.testing.assert_allclose(final.position, TARGET + final.deviation)
    # the hand moves away monotonically while pushed (overdamped, stiffness only falling)
    along = [float(step.deviation @ PUSH) for step in steps]
    assert all(b >= a for a, b in zip(along, along[1:]))


def test_after_release_the_hand_returns_to_the_target_and_turns_stiff() -> None:
    """Released, the deviation decays below 1 mm within 8 s, without overshooting the target."""
    admittance = VariableAdmittance()
    run(admittance, PUSH, 4.0)
    steps = run(admittance, np.zeros(3), 8.0)
    along = [float(step.deviation @ PUSH) for step in steps]
    assert min(along) > -1e-9  # approaches from the pushed side, never passes the target
    assert np.linalg.norm(steps[-1].deviation) < 1e-3
    assert steps[-1].role is AdmittanceRole.STIFF
    np.testing.assert_allclose(steps[-1].position, TARGET, atol=1e-3)


def test_with_no_force_the_hand_is_at_the_target_and_stiff() -> None:
    """No force, no deviation: the commanded position is the imitation target."""
    admittance = VariableAdmittance()
    for step in run(admittance, np.zeros(3), 2.0):
        np.testing.assert_array_equal(step.position, TARGET)
        assert step.role is AdmittanceRole.STIFF


def test_a_bounded_force_gives_a_bounded_deviation(rng) -> None:
    """Random forces up to 20 N per axis: each axis stays within 20 N / k_min."""
    config = AdmittanceConfig()
    admittance = VariableAdmittance(config)
    worst = 0.0
    for _ in range(3000):
        step = admittance.step(TARGET, rng.uniform(-20.0, 20.0, 3), 0.01)
        worst = max(worst, float(np.abs(step.deviation).max()))
    assert worst <= 20.0 / config.stiffness_compliant


# --- role switching -------------------------------------------------------------------------


def test_a_force_under_the_threshold_keeps_the_hand_stiff(rng) -> None:
    """Noisy contact under 5 N: the interaction factor stays 0, the role stiff, k = k(0)."""
    config = AdmittanceConfig()
    admittance = VariableAdmittance(config)
    for _ in range(500):
        noise = rng.normal(size=3)
        force = 4.9 * noise / np.linalg.norm(noise)
        step = admittance.step(TARGET, force, 0.01)
        assert step.interaction == 0.0
        assert step.role is AdmittanceRole.STIFF
        assert step.stiffness == config.stiffness(0.0)


def test_sustained_guidance_turns_the_hand_compliant_at_the_papers_rate() -> None:
    """Over the threshold, psi rises at c_plus; compliant once a psi + b > 0."""
    config = AdmittanceConfig(force_window=1)
    admittance = VariableAdmittance(config)
    steps = run(admittance, PUSH, 1.0)
    psi = [step.interaction for step in steps]
    np.testing.assert_allclose(np.diff(psi)[:50], config.rise_rate * 0.01)
    switch = -config.transition_offset / config.transition_gain  # 0.275
    for step in steps:
        expected = AdmittanceRole.STIFF if step.interaction <= switch else AdmittanceRole.COMPLIANT
        assert step.role is expected
    assert steps[-1].interaction == 1.0


def test_released_the_interaction_factor_falls_at_the_papers_rate_and_stops_at_zero() -> None:
    """Under the threshold, psi falls at c_minus, never below 0; the stiffness only rises."""
    config = AdmittanceConfig(force_window=1)
    admittance = VariableAdmittance(config)
    run(admittance, PUSH, 1.0)
    steps = run(admittance, np.zeros(3), 6.0)
    psi = np.array([step.interaction for step in steps])
    np.testing.assert_allclose(np.diff(psi)[:400], config.fall_rate * 0.01, atol=1e-12)
    assert psi.min() == 0.0 and psi[-1] == 0.0
    stiffness = np.array([step.stiffness for step in steps])
    assert (np.diff(stiffness) >= 0.0).all()


def test_the_force_filter_delays_the_switch_by_the_papers_moving_average() -> None:
    """A single 7 N sample averaged over 25 is under the threshold: no role change."""
    admittance = VariableAdmittance()
    step = admittance.step(TARGET, PUSH, 0.01)
    assert step.interaction > 0.0  # the first sample is its own average
    admittance.reset()
    admittance.step(TARGET, np.zeros(3), 0.01)
    step = admittance.step(TARGET, PUSH, 0.01)
    np.testing.assert_allclose(step.force, PUSH / 2)
    assert step.interaction == 0.0


# --- determinism, time steps and bad input --------------------------------------------------


def _script(rng) -> list[tuple[np.ndarray, np.ndarray, float]]:
    return [
        (rng.normal(size=3), rng.normal(scale=8.0, size=3), float(rng.uniform(0.001, 0.05)))
        for _ in range(400)
    ]


def test_the_same_inputs_give_the_same_outputs(rng) -> None:
    """Two admittances fed the same inputs agree exactly, step by step."""
    script = _script(rng)
    first, second = VariableAdmittance(), VariableAdmittance()
    for target, force, dt in script:
        a, b = first.step(target, force, dt), second.step(target, force, dt)
        np.testing.assert_array_equal(a.position, b.position)
        assert (a.interaction, a.stiffness) == (b.interaction, b.stiffness)


@pytest.mark.parametrize(
    ('target', 'force', 'dt', 'status'),
    [
        ([np.nan, 0.0, 0.0], [0.0, 0.0, 0.0], 0.01, AdmittanceInput.BAD_TARGET),
        ([0.0, 0.0], [0.0, 0.0, 0.0], 0.01, AdmittanceInput.BAD_TARGET),
        ('here', [0.0, 0.0, 0.0], 0.01, AdmittanceInput.BAD_TARGET),
        (TARGET, [np.inf, 0.0, 0.0], 0.01, AdmittanceInput.BAD_FORCE),
        (TARGET, [[1.0, 0.0, 0.0]], 0.01, AdmittanceInput.BAD_FORCE),
        (TARGET, PUSH, np.nan, AdmittanceInput.BAD_DT),
        (TARGET, PUSH, 0.0, AdmittanceInput.BAD_DT),
        (TARGET, PUSH, -0.01, AdmittanceInput.BAD_DT),
        (TARGET, PUSH, True, AdmittanceInput.BAD_DT),
    ],
)
def test_a_rejected_input_changes_nothing(target, force, dt, status, rng) -> None:
    """A rejected step reports why, and the next steps equal those of a twin that never saw it."""
    script = _script(rng)
    seen, twin = VariableAdmittance(), VariableAdmittance()
    for item in script[:100]:
        before = seen.step(*item)
        twin.step(*item)
    rejected = seen.step(target, force, dt)
    assert rejected.status is status
    assert rejected.dt == 0.0
    np.testing.assert_array_equal(rejected.position, before.position)
    assert rejected.interaction == before.interaction
    for item in script[100:]:
        np.testing.assert_array_equal(seen.step(*item).position, twin.step(*item).position)


def test_no_position_before_a_target() -> None:
    """Until a target is accepted the step has no position to command."""
    step = VariableAdmittance().step([np.nan] * 3, np.zeros(3), 0.01)
    assert step.position is None and step.target is None


def test_a_long_step_is_split_into_periods() -> None:
    """One 50 ms step equals five 10 ms steps (unfiltered force): stable past the bound."""
    config = AdmittanceConfig(force_window=1)
    long, short = VariableAdmittance(config), VariableAdmittance(config)
    for _ in range(100):
        one = long.step(TARGET, PUSH, 0.05)
        five = [short.step(TARGET, PUSH, 0.01) for _ in range(5)][-1]
        np.testing.assert_allclose(one.deviation, five.deviation, rtol=1e-12, atol=1e-15)
    assert one.dt == 0.05
    assert long.step(TARGET, PUSH, 5.0).dt == 0.1  # a stalled loop is cut to max_dt
