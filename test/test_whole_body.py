"""Whole-body imitation: the torso group, hand offsets, the prioritized IK and the torso target."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

from human_poses import BODY, body
from hypothesis import given, settings
import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
from pic_ros.correspondence import MappingConfig
from pic_ros.correspondence.torso import TorsoTarget
from pic_ros.exceptions import ChainError, ConfigError
from pic_ros.imitation import RobotImitator
from pic_ros.resources import config_path
from pic_ros.robot import load_robot
from pic_ros.robot.config import robot_spec_from_dict
from pic_ros.solvers import SolverConfig, Termination
from pic_ros.solvers.avoidance import AvoidanceConfig
from pic_ros.solvers.prioritized import (
    prioritized_step,
    PrioritizedConfig,
    PrioritizedSolver,
    WholeBodyTargets,
)
from pic_ros_tools.catalog import demonstration_from_synthetic
from pic_ros_tools.cli import main
from pic_ros_tools.evaluation import evaluate_one, EvaluationSettings, run_imitation, score
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper import load_paper_demonstration
from pic_ros_tools.synthetic import generate_take, suite_specs
from pic_ros_tools.synthetic.crouch import crouching_take
import pytest
import yaml


@pytest.fixture(scope='module')
def tiago():
    """Load TIAGo once."""
    return load_robot('tiago')


def _tiago_data() -> dict[str, Any]:
    return yaml.safe_load(config_path('tiago').read_text(encoding='utf-8'))


def test_tiago_torso_is_a_commanded_group_held_at_its_neutral(tiago):
    """The torso is the group ``torso`` on torso_controller; the arm solvers assume its neutral."""
    torso = tiago.groups['torso']
    assert torso.joint_names == ('torso_lift_joint',)
    assert torso.controller == 'torso_controller'
    assert torso.neutral.tolist() == [0.15]
    assert tiago.torso is not None and tiago.torso.velocity == pytest.approx(0.07)
    assert dict(tiago.arms['arm'].locked) == {'torso_lift_joint': 0.15}
    assert 'torso_lift_joint' not in tiago.spec.locked_joints
    assert np.allclose(tiago.torso.axis, (0.0, 0.0, 1.0))


@pytest.mark.parametrize(
    ('change', 'message'),
    [
        (lambda torso: torso.pop('controller'), "missing key 'controller'"),
        (lambda torso: torso.update(neutral='high'), 'neutral must be a number'),
        (lambda torso: torso.update(arms=['left']), 'are not arms'),
        (lambda torso: torso.update(speed=1.0), 'unknown keys'),
        (lambda torso: torso.update(controller='arm_controller'), 'controller'),
        (lambda torso: torso.update(velocity_limits=[0.0]), 'velocity_limits'),
    ],
)
def test_torso_section_is_validated_with_the_reason(change, message):
    """A wrong ``torso`` entry is refused, naming the key."""
    data = _tiago_data()
    change(data['torso'])
    with pytest.raises(ConfigError, match=message):
        robot_spec_from_dict(data, source='tiago.yaml')


def test_torso_joint_must_be_prismatic_and_on_the_arm_chain(tmp_path: Path):
    """A torso joint that is not a prismatic joint on the served arm's chain is refused."""
    for joint in ('head_1_joint', 'arm_1_joint'):
        data = copy.deepcopy(_tiago_data())
        data['urdf'] = str(config_path('tiago').parent.parent / 'pic_ros' / 'urdf' / 'tiago.urdf')
        data['torso']['joint'] = joint
        if joint == 'head_1_joint':
            data.pop('head')
        path = tmp_path / f'{joint}.yaml'
        path.write_text(yaml.safe_dump(data), encoding='utf-8')
        with pytest.raises((ChainError, ConfigError)):
            load_robot(path)


def _imitator(robot: Any, correspondence: str = 'direction', **kwargs: Any) -> RobotImitator:
    return RobotImitator(
        robot, SolverConfig(name='pic'), MappingConfig(correspondence=correspondence), **kwargs
    )


def test_hand_offset_shifts_a_position_wrist_target_only(tiago):
    """A hand offset moves the position correspondence's wrist target by exactly the offset."""
    frame = body(BODY)
    plain = _imitator(tiago, 'position').step(frame).arms['arm'].targets
    offset = np.array([0.03, -0.02, 0.05])
    moved = _imitator(tiago, 'position').step(frame, {'arm': offset}).arms['arm'].targets
    assert np.allclose(moved.wrist - plain.wrist, offset)
    assert np.allclose(moved.elbow, plain.elbow)
    assert np.allclose(moved.shoulder, plain.shoulder)


def test_hand_offset_is_refused_where_it_cannot_be_honoured(tiago):
    """Shape-only targets have no wrist place: a non-zero offset is refused, a zero one is not."""
    imitator = _imitator(tiago, 'direction')
    frame = body(BODY)
    assert 'arm' in imitator.step(frame, {'arm': np.zeros(3)}).arms
    with pytest.raises(ConfigError, match='wrist place'):
        imitator.step(frame, {'arm': np.array([0.0, 0.0, 0.01])})
    with pytest.raises(ConfigError, match='not an arm'):
        imitator.step(frame, {'left': np.zeros(3)})
    with pytest.raises(ConfigError, match='3-vector'):
        imitator.step(frame, {'arm': np.array([np.nan, 0.0, 0.0])})


# The prioritized IK ------------------------------------------------------------------------------


@pytest.fixture(scope='module')
def tiago_arm(tiago):
    """Return the arm and the torso of TIAGo."""
    return tiago.arms['arm'], tiago.torso


def _reachable(arm, torso, rng, q_near=None, spread=0.15):
    """Draw a configuration near ``q_near`` and a lift; return them and the landmarks there."""
    centre = arm.neutral if q_near is None else q_near
    q = np.clip(centre + rng.uniform(-spread, spread, arm.dof), arm.work_lower, arm.work_upper)
    lift = float(rng.uniform(torso.lower, torso.upper))
    solver = PrioritizedSolver(arm, torso)
    points = solver.landmarks(q, lift)
    return q, lift, points


def test_torso_task_is_met_exactly_when_its_target_is_inside_the_limits(tiago_arm):
    """The torso, the highest task after the limits, reaches any lift target inside its range."""
    arm, torso = tiago_arm
    rng = np.random.default_rng(1)
    for _ in range(20):
        q, lift, points = _reachable(arm, torso, rng)
        solver = PrioritizedSolver(arm, torso)
        result = solver.solve(WholeBodyTargets(lift, points[1], points[3], points[2]))
        assert result.torso == pytest.approx(lift, abs=1e-9)
        assert result.torso_error < 1e-9


def test_torso_target_outside_the_limits_is_clamped_not_exceeded(tiago_arm):
    """A lift target beyond the range puts the torso at the limit, never past it."""
    arm, torso = tiago_arm
    solver = PrioritizedSolver(arm, torso)
    points = solver.landmarks(arm.neutral, torso.neutral)
    for wanted, expected in ((torso.upper + 1.0, torso.upper), (torso.lower - 1.0, torso.lower)):
        result = solver.solve(WholeBodyTargets(wanted, points[1], points[3], points[2]))
        assert result.torso == pytest.approx(expected)


def test_adding_the_elbow_task_leaves_a_feasible_end_effector_task_met(tiago_arm):
    """A lower task never degrades a higher one: with or without the elbow, the hand is there."""
    arm, torso = tiago_arm
    rng = np.random.default_rng(2)
    for _ in range(20):
        q, lift, points = _reachable(arm, torso, rng)
        precise = PrioritizedConfig(max_iterations=100, min_step=1e-9, tolerance=1e-6)
        without = PrioritizedSolver(arm, torso, precise)
        with_elbow = PrioritizedSolver(arm, torso, precise)
        start = np.clip(q + rng.uniform(-0.1, 0.1, arm.dof), arm.work_lower, arm.work_upper)
        without.reset(start, lift)
        with_elbow.reset(start, lift)
        alone = without.solve(WholeBodyTargets(lift, points[1], points[3], None))
        both = with_elbow.solve(WholeBodyTargets(lift, points[1], points[3], points[2]))
        assert alone.wrist_error < 1e-5
        assert both.wrist_error < alone.wrist_error + 1e-5
        assert both.torso == pytest.approx(lift, abs=1e-9)


@given(
    jacobians=hnp.arrays(np.float64, (7, 8), elements=st.floats(-1.0, 1.0)),
    errors=hnp.arrays(np.float64, (7,), elements=st.floats(-0.1, 0.1)),
)
@settings(max_examples=60, deadline=None)
def test_a_lower_task_moves_only_in_the_null_space_of_the_higher_ones(jacobians, errors):
    """One step: what the first two tasks get is the same with and without the third task."""
    high = [(jacobians[:1], errors[:1], 0.03), (jacobians[1:4], errors[1:4], 0.03)]
    low_task = (jacobians[4:], errors[4:], 0.1)
    bounds = np.full(8, 1e6)
    step, _ = prioritized_step(high, -bounds, bounds)
    with_low, _ = prioritized_step([*high, low_task], -bounds, bounds)
    stacked = jacobians[:4]
    assert np.allclose(stacked @ step, stacked @ with_low, atol=1e-7)


def warm_solver(arm, torso, seed):
    """Return a solver warm-started at a random pose of the ranges, and the shoulder anchor."""
    rng = np.random.default_rng(seed)
    solver = PrioritizedSolver(arm, torso)
    solver.reset(rng.uniform(arm.work_lower, arm.work_upper), float(rng.uniform(0.0, 0.35)))
    return solver, solver.landmarks(arm.neutral, torso.neutral)[1]


@given(
    wrist=hnp.arrays(np.float64, (3,), elements=st.floats(-1.0, 1.5)),
    elbow=hnp.arrays(np.float64, (3,), elements=st.floats(-1.0, 1.5)),
    lift=st.floats(-1.0, 1.0),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=60, deadline=None)
def test_limits_are_never_exceeded_whatever_the_targets(tiago_arm, wrist, elbow, lift, seed):
    """Any targets, from any warm start: the arm stays in its working range, the torso in its."""
    arm, torso = tiago_arm
    solver, anchor = warm_solver(arm, torso, seed)
    for _ in range(3):
        result = solver.solve(WholeBodyTargets(lift, anchor, wrist, elbow))
        assert np.all(result.q >= arm.work_lower - 1e-12)
        assert np.all(result.q <= arm.work_upper + 1e-12)
        assert torso.lower - 1e-12 <= result.torso <= torso.upper + 1e-12
        assert isinstance(result.termination, Termination)
        assert 0 <= result.iterations <= solver.config.max_iterations


@given(
    wrist=hnp.arrays(np.float64, (3,), elements=st.floats(-1.0, 1.5)),
    elbow=hnp.arrays(np.float64, (3,), elements=st.floats(-1.0, 1.5)),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=40, deadline=None)
def test_no_arm_joint_moves_more_than_the_frame_step_whatever_the_targets(
    tiago_arm, wrist, elbow, seed
):
    """Any targets, from any warm start: each frame moves every arm joint at most frame_step."""
    arm, torso = tiago_arm
    solver, anchor = warm_solver(arm, torso, seed)
    for _ in range(3):
        before = solver.q
        result = solver.solve(WholeBodyTargets(0.2, anchor, wrist, elbow))
        assert np.all(np.abs(result.q - before) <= solver.config.frame_step + 1e-12)


def test_same_input_gives_the_same_output(tiago_arm):
    """Two solvers fed the same frames give bit-identical answers."""
    arm, torso = tiago_arm
    rng = np.random.default_rng(3)
    frames = [_reachable(arm, torso, rng, spread=0.4)[1:] for _ in range(10)]
    answers = []
    for _ in range(2):
        solver = PrioritizedSolver(arm, torso)
        answers.append([
            solver.solve(WholeBodyTargets(lift, p[1], p[3], p[2])) for lift, p in frames
        ])
    for first, second in zip(*answers):
        assert np.array_equal(first.q, second.q) and first.torso == second.torso
        assert first.termination is second.termination


def test_the_solve_says_why_it_stopped(tiago_arm):
    """A target at the warm start converges at once; an unreachable one stops for a reason."""
    arm, torso = tiago_arm
    solver = PrioritizedSolver(arm, torso)
    points = solver.landmarks(arm.neutral, torso.neutral)
    result = solver.solve(WholeBodyTargets(torso.neutral, points[1], points[3], points[2]))
    assert result.termination is Termination.CONVERGED and result.iterations == 0
    far = points[3] + np.array([3.0, 0.0, 0.0])
    result = solver.solve(WholeBodyTargets(torso.neutral, points[1], far, points[2]))
    assert result.termination in (Termination.STALLED, Termination.MAX_ITERATIONS)
    assert result.wrist_error > 1.0


def test_prioritized_config_refuses_bad_values():
    """Stopping rules out of range are refused with the field's name."""
    with pytest.raises(ConfigError, match='max_iterations'):
        PrioritizedConfig(max_iterations=0)
    with pytest.raises(ConfigError, match='damping'):
        PrioritizedConfig(damping=-1.0)
    with pytest.raises(ConfigError, match='frame_step'):
        PrioritizedConfig(frame_step=0.0)


# The torso target -----------------------------------------------------------------------------


def _standing_then_crouching(scale: float, camera: float, drop: float) -> list:
    """Make a person of size ``scale`` stand 10 s, then crouch by ``drop * scale`` metres."""
    points = np.array(BODY) * scale
    samples = []
    for index in range(600):
        stamp = index / 30.0
        height = camera + 1.4 * scale - (drop * scale if stamp >= 10.0 else 0.0)
        samples.append((stamp, height, body(points, stamp)))
    return samples


def test_torso_target_is_scale_free_and_ignores_the_camera_height(tiago):
    """The same crouch by a tall and a short person, seen from any height, gives the same lift."""
    lifts = []
    for scale, camera in ((0.8, -0.3), (1.0, 0.5), (1.25, 1.7)):
        target = TorsoTarget(tiago.torso, 0.8565)
        for stamp, height, frame in _standing_then_crouching(scale, camera, 0.2):
            lift = target.update(stamp, height, frame)
        lifts.append(lift)
    assert lifts[0] < tiago.torso.neutral - 0.05
    assert np.allclose(lifts, lifts[0], atol=1e-9)


def test_torso_target_holds_the_neutral_lift_while_standing_and_respects_the_speed(tiago):
    """Standing (a little sway) keeps the neutral lift; a crouch moves it at most at 0.07 m/s."""
    target = TorsoTarget(tiago.torso, 0.8565)
    rng = np.random.default_rng(4)
    previous = None
    for stamp, height, frame in _standing_then_crouching(1.0, 0.0, 0.3):
        lift = target.update(stamp, height + rng.normal(0.0, 0.003), frame)
        if stamp < 10.0:
            assert lift == pytest.approx(tiago.torso.neutral)
        if previous is not None:
            assert abs(lift - previous) <= tiago.torso.velocity / 30.0 + 1e-9
        assert tiago.torso.lower <= lift <= tiago.torso.upper
        previous = lift


# Whole-body imitation -------------------------------------------------------------------------


def test_whole_body_off_holds_the_torso_at_its_neutral(tiago):
    """Without whole-body the torso is not solved: it is commanded to its neutral lift."""
    imitator = _imitator(tiago)
    step = imitator.step(body(BODY))
    assert step.torso is not None
    assert step.torso.value == step.torso.target == pytest.approx(0.15)
    assert imitator.torso_value == pytest.approx(0.15)


def test_whole_body_needs_a_torso():
    """Asking a robot without a torso for whole-body imitation is refused."""
    with pytest.raises(ConfigError, match='torso'):
        _imitator(load_robot('baxter'), whole_body=True)


def test_whole_body_honours_hand_offsets_on_shape_targets(tiago):
    """With whole-body on, a hand offset moves the direction correspondence's wrist target."""
    frame = body(BODY)
    plain = _imitator(tiago, whole_body=True).step(frame)
    offset = np.array([0.0, 0.02, 0.03])
    moved = _imitator(tiago, whole_body=True).step(frame, {'arm': offset})
    assert plain.torso is not None and moved.torso is not None
    shift = moved.arms['arm'].targets.wrist - plain.arms['arm'].targets.wrist
    assert np.allclose(shift, offset)


UNGUARDED = AvoidanceConfig(0.0)
"""The hierarchy's own figures: the self-collision avoidance after it turned off."""


def test_whole_body_follows_a_crouching_synthetic_person(tiago):
    """
    A crouching generated person: the torso goes down, elbow and hand stay accurate.

    The hierarchy's own accuracy (avoidance off; against the person as smoothed, what it was
    given; against the person as tracked, 0.097 rad and 7.4 cm measured, the smoothing's lag
    and noise included); with the avoidance on, the lowered torso brings the hand near the base,
    which it keeps clear of: no self-contact in MuJoCo, no limit crossed.
    """
    spec = suite_specs(50)[0]
    demonstration = demonstration_from_synthetic(crouching_take(spec))
    settings = EvaluationSettings(whole_body=True, avoidance=UNGUARDED)
    trace = run_imitation(tiago, demonstration, SolverConfig(name='pic'), settings)
    assert trace.whole_body and trace.torso is not None
    lift = trace.torso[np.isfinite(trace.torso)]
    assert lift.min() < tiago.torso.neutral - 0.05
    assert np.all((lift >= 0.0) & (lift <= 0.35))
    record = score(trace, demonstration, tiago, SolverConfig(name='pic'))
    assert record['solver'] == 'whole-body' and record['torso_travel_cm'] > 5.0
    assert record['elbow_mae_rad'] < 0.11
    assert record['ee_err_cm'] < 8.5
    assert record['smoothed_elbow_mae_rad'] < 0.1
    assert record['smoothed_ee_err_cm'] < 6.0
    assert record['limit_violations'] == 0
    guarded = evaluate_one(
        tiago, demonstration, SolverConfig(name='pic'), EvaluationSettings(whole_body=True)
    )
    assert guarded['self_contact_frames'] == 0 and guarded['limit_violations'] == 0
    assert guarded['torso_travel_cm'] > 5.0


def test_whole_body_never_jumps_on_a_synthetic_person(tiago):
    """
    A generated person whose forearm passes near the straight arm: no joint jumps between frames.

    Near the straight arm the upper-arm roll barely moves the wrist, so the unbounded hierarchy
    turned it by up to 0.7 rad in one frame on this person (about 20 frames above 0.35 rad);
    the per-frame step bound keeps every change within 0.3 rad, the elbow and hand accurate (the
    hierarchy's own figures, against the person as smoothed; against the person as tracked
    0.098 rad and 7.4 cm measured), and so does the self-collision avoidance after it.
    """
    demonstration = demonstration_from_synthetic(generate_take(suite_specs(50)[0]))
    solver = SolverConfig(name='pic')
    bound = PrioritizedConfig().frame_step
    for avoidance in (UNGUARDED, None):
        settings = EvaluationSettings(whole_body=True, avoidance=avoidance)
        trace = run_imitation(tiago, demonstration, solver, settings)
        for arm in trace.arms.values():
            assert np.max(np.abs(np.diff(arm.q, axis=0))) <= bound + 1e-9
        record = score(trace, demonstration, tiago, solver)
        assert record['jump_frames'] == 0
        if avoidance is UNGUARDED:
            assert record['elbow_mae_rad'] < 0.11
            assert record['ee_err_cm'] < 8.5
            assert record['smoothed_elbow_mae_rad'] < 0.05
            assert record['smoothed_ee_err_cm'] < 5.0


def test_evaluate_with_the_torso_on_a_few_seconds_of_a_recording(shared_data, capsys):
    """``evaluate --robot tiago --whole-body`` on 3 s of a real recording prints its table."""
    folder = shared_data / 'pic_demos'
    if not (folder / 'assembly1_skel.txt').is_file():
        pytest.skip(f'the PIC demonstrations are not in {folder}')
    demonstration = Demonstration.from_paper(load_paper_demonstration(folder, 'assembly1'))
    short = Demonstration.whole('assembly1', demonstration.frames[:90])
    record = evaluate_one(
        load_robot('tiago'), short, SolverConfig(name='pic'),
        EvaluationSettings(whole_body=True),
    )
    assert record['whole_body'] and record['frames'] == 90
    assert record['limit_violations'] == 0 and math.isfinite(record['ee_err_cm'])
    status = main(['evaluate', '--robot', 'tiago', '--whole-body', '--recording', 'demo'])
    assert status == 0
    assert 'whole-body' in capsys.readouterr().out


def test_bench_times_the_whole_body_solver_once_per_robot_with_a_torso(capsys):
    """``bench --whole-body``: TIAGo timed once as whole-body, Baxter (no torso) as usual."""
    status = main(['bench', '--recording', 'demo', '--robot', 'tiago', '--robot', 'baxter',
                   '--solver', 'pic', '--solver', 'fabrik', '--whole-body', '--ikpy-frames',
                   '0', '--json'])
    result = json.loads(capsys.readouterr().out)
    assert status == 0
    labels = [(row['robot'], row['solver']) for row in result['solvers']]
    assert sorted(labels) == [('baxter', 'fabrik'), ('baxter', 'pic'), ('tiago', 'whole-body')]
    (tiago,) = [row for row in result['solvers'] if row['robot'] == 'tiago']
    assert tiago['eta'] is None
    assert tiago['arm_solves'] > 500 and 0.0 < tiago['ms_p50'] <= tiago['ms_p99']


def test_the_simulated_torso_holds_its_neutral_and_follows_a_command(tiago):
    """The simulated torso (torso_controller) holds 0.15 m, then goes where it is told."""
    pytest.importorskip('mujoco')
    from pic_ros_tools.sim import SimRobot, Trajectory, Waypoint

    sim = SimRobot(tiago)
    assert 'torso_controller' in sim.controllers
    sim.step_to(0.5)
    assert sim.arm_positions('torso_controller')[0] == pytest.approx(0.15, abs=2e-3)
    sim.command('torso_controller', Trajectory(('torso_lift_joint',), [Waypoint(2.0, [0.05])]))
    sim.step_to(3.0)
    assert sim.arm_positions('torso_controller')[0] == pytest.approx(0.05, abs=5e-3)
    sim.close()


def test_velocity_bounded_solve_moves_no_joint_faster_than_its_limit(tiago_arm):
    """With velocity_bounded, a far target is approached at most at the velocity limits."""
    arm, torso = tiago_arm
    solver = PrioritizedSolver(arm, torso, PrioritizedConfig(velocity_bounded=True))
    rng = np.random.default_rng(5)
    _, lift, points = _reachable(arm, torso, rng, spread=1.0)
    before = np.concatenate(([solver.torso_value], solver.q))
    result = solver.solve(WholeBodyTargets(lift, points[1], points[3], points[2]), 1 / 30)
    after = np.concatenate(([result.torso], result.q))
    speed = np.concatenate(([torso.velocity], arm.velocity))
    assert np.all(np.abs(after - before) <= speed / 30 + 1e-12)
