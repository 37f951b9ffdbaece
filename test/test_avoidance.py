"""Self-collision avoidance: every answer keeps the margin; an answer clear of it is untouched."""

from __future__ import annotations

from human_poses import BODY, body, J
from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from pic_ros.imitation import RobotImitator
from pic_ros.resources import shipped_robots
from pic_ros.robot import load_robot
from pic_ros.robot.kinematics import compiled
from pic_ros.solvers import OctantConstraints, SolverConfig
from pic_ros.solvers.avoidance import (
    AvoidanceConfig,
    AvoidanceTermination,
    SelfCollisionAvoidance,
)
from pic_ros.solvers.octants import antipode
from pic_ros.solvers.point_imitation import human_octants
import pytest

ROBOTS = shipped_robots()
SOLVERS = ('fabrik', 'pic', 'pics', 'analytic')


def two_arms(
    right: tuple[np.ndarray, np.ndarray], left: tuple[np.ndarray, np.ndarray], stamp: float
):
    """Return the test person with both arms given by their elbow and wrist [m], body frame."""
    points = BODY.copy()
    points[J.ELBOW_RIGHT], points[J.WRIST_RIGHT] = right
    points[J.ELBOW_LEFT], points[J.WRIST_LEFT] = left
    points[J.HAND_RIGHT] = points[J.WRIST_RIGHT] + 0.05 * (right[1] - right[0])
    points[J.HAND_LEFT] = points[J.WRIST_LEFT] + 0.05 * (left[1] - left[0])
    return body(points, stamp)


def mirrored(point) -> np.ndarray:
    """Return a body-frame point mirrored to the other side."""
    x, y, z = point
    return np.array([x, -y, z])


def arm(elbow, wrist) -> tuple[np.ndarray, np.ndarray]:
    return np.array(elbow, dtype=float), np.array(wrist, dtype=float)


ADVERSARIAL = {
    'arms crossed': [
        two_arms(arm((0.15, -0.25, -0.22), (0.3, 0.22 - s, -0.12)),
                 arm((0.15, 0.25, -0.22), (0.3, -0.22 + s, -0.1)), 0.1 * k)
        for k, s in enumerate(np.linspace(0.0, 0.1, 6))
    ],
    'hands together': [
        two_arms(arm((0.12, -0.25, -0.25), (0.35, -s, -0.1)),
                 arm((0.12, 0.25, -0.25), (0.35, s, -0.1)), 0.1 * k)
        for k, s in enumerate(np.linspace(0.25, 0.0, 6))
    ],
    'hands together and apart fast': [
        two_arms(arm((0.12, -0.25, -0.25), (0.35, -s, -0.1)),
                 arm((0.12, 0.25, -0.25), (0.35, s, -0.1)), 0.03 * k)
        for k, s in enumerate([0.3, 0.0, 0.3, 0.0, 0.3, 0.0])
    ],
    'hand on the chest': [
        two_arms(arm((0.1, -0.3, -0.25), (0.08 + s, 0.0, -0.1)),
                 arm((0.0, 0.2, -0.3), (0.0, 0.2, -0.58)), 0.1 * k)
        for k, s in enumerate(np.linspace(0.1, 0.0, 6))
    ],
    'arm swept across the body': [
        two_arms(arm((0.28 * np.cos(a), -0.18 + 0.28 * np.sin(a), -0.05),
                     (0.56 * np.cos(a), -0.18 + 0.56 * np.sin(a), -0.1)),
                 arm((0.0, 0.2, -0.3), (0.0, 0.2, -0.58)), 0.05 * k)
        for k, a in enumerate(np.linspace(-1.2, 1.4, 14))
    ],
    'hand below the table': [
        two_arms(arm((0.05, -0.2, -0.29), (0.2 + s, -0.2, -0.55)),
                 arm((0.05, 0.2, -0.29), (0.2 + s, 0.2, -0.55)), 0.1 * k)
        for k, s in enumerate(np.linspace(0.0, 0.2, 5))
    ],
}
"""Poses that drive an unguarded robot into itself, each as a short take."""


def floors_kept(imitator: RobotImitator, step) -> float:
    """Return the smallest excess of any pair over its required distance after a step [m]."""
    model = imitator.robot.collision
    current = {name: imitator.q(name) for name in imitator.correspondences}
    torso = None if step.torso is None else step.torso.value
    check = model.check(model.vector(current, torso))
    excess = check.distances - model.required(imitator.avoidance.margin)
    workspace = imitator.robot.spec.workspace
    if workspace is not None:
        _, _, axes, origins = model.frames(model.vector(current, torso))
        for arm_model in imitator.robot.arms.values():
            for label in ('elbow', 'wrist'):
                point = origins[model.joints.index(getattr(arm_model.spec, label))]
                for space in workspace.half_spaces:
                    excess = np.append(
                        excess, space.normal @ point - space.offset - imitator.avoidance.margin
                    )
    return float(excess.min())


@pytest.mark.parametrize('robot_name', ROBOTS)
@pytest.mark.parametrize('take', sorted(ADVERSARIAL))
def test_adversarial_poses_never_bring_two_links_within_the_margin(robot_name, take):
    imitator = RobotImitator(load_robot(robot_name), SolverConfig())
    acted = 0
    for frame in ADVERSARIAL[take]:
        step = imitator.step(frame)
        assert floors_kept(imitator, step) >= -1e-9, (take, frame.stamp)
        acted += step.avoidance.active
    assert step.avoidance.termination is not AvoidanceTermination.OFF


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_adversarial_poses_give_no_contact_in_mujoco(robot_name):
    pytest.importorskip('mujoco')
    from pic_ros_tools.sim.contacts import ContactChecker

    robot = load_robot(robot_name)
    checker = ContactChecker(robot)
    unguarded = 0
    for margin, counted in ((-1.0, 'guarded'), (0.0, 'unguarded')):
        for take in ADVERSARIAL.values():
            imitator = RobotImitator(robot, SolverConfig(), avoidance=AvoidanceConfig(margin))
            for frame in take:
                imitator.step(frame)
                contacts = checker.contacts(
                    {name: imitator.q(name) for name in imitator.correspondences}
                )
                if counted == 'guarded':
                    assert not contacts, contacts
                else:
                    unguarded += bool(contacts)
    if robot_name in ('yumi', 'nao', 'baxter'):
        assert unguarded > 0  # the takes are adversarial: without avoidance the arms touch


direction = st.tuples(
    st.floats(-1.0, 1.0), st.floats(-1.0, 1.0), st.floats(-1.0, 1.0)
).filter(lambda v: np.linalg.norm(v) > 0.2)


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from(ROBOTS), st.sampled_from(SOLVERS),
    st.lists(st.tuples(direction, direction, direction, direction), min_size=3, max_size=6),
)
def test_every_solver_keeps_the_margin_on_random_arms(robot_name, solver, poses):
    imitator = RobotImitator(load_robot(robot_name), SolverConfig(name=solver))
    for index, (up_r, fore_r, up_l, fore_l) in enumerate(poses):
        shoulder_r, shoulder_l = BODY[J.SHOULDER_RIGHT], BODY[J.SHOULDER_LEFT]
        unit = [np.array(v) / np.linalg.norm(v) for v in (up_r, fore_r, up_l, fore_l)]
        elbow_r = shoulder_r + 0.28 * unit[0]
        elbow_l = shoulder_l + 0.28 * unit[2]
        frame = two_arms(
            (elbow_r, elbow_r + 0.26 * unit[1]), (elbow_l, elbow_l + 0.26 * unit[3]), 0.1 * index
        )
        step = imitator.step(frame)
        assert floors_kept(imitator, step) >= -1e-9


@pytest.mark.parametrize('robot_name', ROBOTS)
def test_an_answer_clear_of_every_constraint_is_returned_untouched(robot_name):
    """Where nothing binds, the answer is the solvers' own (from the same warm start)."""
    robot = load_robot(robot_name)
    guarded = RobotImitator(robot, SolverConfig())
    free = RobotImitator(robot, SolverConfig(), avoidance=AvoidanceConfig(0.0))
    clear = 0
    spread = [two_arms(arm((0.0, -0.45, 0.0), (0.0, -0.7, 0.05)),
                       arm((0.0, 0.45, 0.0), (0.0, 0.7, 0.05)), 10.0 + 0.1 * k) for k in range(8)]
    for take in (*ADVERSARIAL.values(), spread):
        for frame in take:
            free.reset({name: guarded.q(name) for name in guarded.correspondences})
            step = guarded.step(frame)
            reference = free.step(frame)
            if step.avoidance.termination is AvoidanceTermination.CLEAR:
                clear += 1
                for name in reference.arms:
                    np.testing.assert_array_equal(
                        step.arms[name].result.q, reference.arms[name].result.q
                    )
    assert clear > 0


@pytest.mark.parametrize('robot_name', ('yumi', 'baxter'))
def test_an_arm_swept_through_the_other_slides_around_it_without_jumping(robot_name):
    imitator = RobotImitator(load_robot(robot_name), SolverConfig())
    previous = None
    for frame in ADVERSARIAL['arm swept across the body']:
        imitator.step(frame)
        q = np.concatenate([imitator.q(name) for name in imitator.correspondences])
        if previous is not None:
            assert np.abs(q - previous).max() < 0.35  # the jump rule of evaluate
        previous = q


HANDS_MEETING_FLAT = [
    two_arms(arm((0.12, -0.25, -0.25), (0.35, -s, -0.25 + d)),
             arm((0.12, 0.25, -0.25), (0.35, s, -0.25 - d)), 0.05 * k)
    for k, (s, d) in enumerate(zip(np.linspace(0.25, 0.0, 16), 0.01 * (-1.0) ** np.arange(16)))
]
"""Hands brought together with forearms level: their vertical component within the octant band."""


@pytest.mark.parametrize('robot_name', ('yumi', 'baxter'))
def test_a_pushed_answer_keeps_the_octants_of_the_session(robot_name):
    """
    Where the avoidance moved the answers, the next frame still reads its octants with hysteresis.

    The forearms stay level, their vertical component flipping sign inside the band every frame:
    each frame keeps the previous frame's octants, pushed or not (a push moves the warm start
    only; it does not start a new session).
    """
    config = SolverConfig()
    imitator = RobotImitator(load_robot(robot_name), config)
    before: dict[str, tuple[int, ...]] = {}
    pushed = compared = 0
    for frame in HANDS_MEETING_FLAT:
        step = imitator.step(frame)
        for name, arm_step in step.arms.items():
            targets, octants = arm_step.targets, arm_step.result.octants
            if name in before:
                shoulder, elbow = before[name][0], before[name][2]
                previous = OctantConstraints(shoulder, antipode(shoulder), elbow, antipode(elbow))
                read = human_octants(
                    targets.elbow - targets.shoulder, targets.wrist - targets.elbow,
                    previous=previous, hysteresis=config.octant_hysteresis,
                )
                assert octants == read.octants, f'{name} at {frame.stamp:.2f} s'
                compared += 1
            before[name] = octants
        pushed += step.avoidance.termination is AvoidanceTermination.PUSHED
    assert pushed >= 3 and compared >= 2 * (len(HANDS_MEETING_FLAT) - 1)


def test_the_avoidance_is_deterministic():
    robot = load_robot('yumi')
    answers = []
    for _ in range(2):
        imitator = RobotImitator(robot, SolverConfig())
        for frame in ADVERSARIAL['hands together']:
            imitator.step(frame)
        answers.append(np.concatenate([imitator.q(name) for name in imitator.correspondences]))
    np.testing.assert_array_equal(answers[0], answers[1])


def test_whole_body_keeps_the_margin_as_its_second_task():
    robot = load_robot('tiago')
    imitator = RobotImitator(robot, SolverConfig(), whole_body=True)
    for take in ('hand below the table', 'hand on the chest', 'arm swept across the body'):
        imitator.reset()
        for frame in ADVERSARIAL[take]:
            imitator.set_chest_height(0.9)  # crouching: the torso lift goes down
            step = imitator.step(frame)
            assert floors_kept(imitator, step) >= -1e-9, take


def test_a_margin_of_zero_turns_the_avoidance_off():
    imitator = RobotImitator(load_robot('yumi'), SolverConfig(), avoidance=AvoidanceConfig(0.0))
    step = imitator.step(ADVERSARIAL['hands together'][-1])
    assert step.avoidance is None or step.avoidance.termination is AvoidanceTermination.OFF


def robot_avoidance(
    robot_name: str, config: AvoidanceConfig | None = None
) -> SelfCollisionAvoidance:
    """Return a shipped robot's avoidance, with its file's workspace and margin."""
    robot = load_robot(robot_name)
    return SelfCollisionAvoidance(
        robot.collision, robot.arms, robot.spec.workspace, config, spec=robot.spec.collision
    )


@pytest.mark.skipif(
    not compiled.load(), reason='numba is not installed (or PIC_ROS_JIT=0)'
)
@pytest.mark.parametrize('robot_name', ROBOTS)
def test_the_compiled_constraints_are_the_numpy_constraints(robot_name, monkeypatch, rng):
    """Excess over the targets, slack over the floors and linearization: both paths agree."""
    avoidance = robot_avoidance(robot_name)
    model = avoidance.model

    def constraints(check):
        avoidance._memo = None
        return (*avoidance._excess(check), avoidance._slack(check), *avoidance._linearized(check))

    for _ in range(30):
        x = rng.uniform(model.lower, model.upper)
        check = model.check(x, 0.2)
        fast = constraints(check)
        with monkeypatch.context() as patch:
            for name in ('constraint_rows', 'excess_over'):
                patch.setattr(compiled, name, None)
            slow = constraints(check)
        for mine, theirs in zip(fast, slow):
            np.testing.assert_allclose(mine, theirs, rtol=0.0, atol=1e-12)


@pytest.mark.skipif(
    not compiled.load(), reason='numba is not installed (or PIC_ROS_JIT=0)'
)
@pytest.mark.parametrize('robot_name', ROBOTS)
def test_the_compiled_look_and_slide_are_the_numpy_ones(robot_name, monkeypatch, rng):
    """
    One compiled call per look and per slide: the same steps, stops and checks as numpy's.

    The slides are compared step by step, both paths going on from numpy's configuration.
    Over a whole slide, a difference at rounding (1e-9 rad after a few steps) can decide
    whether the active set holds a joint that sits on a limit with a first-round step near
    zero; from there two right slides part by centiradians (seen on an AVX-512 host). From
    one configuration, each step, each stop and each check must be the same.
    """
    slides = AvoidanceConfig().max_iterations
    one_step = robot_avoidance(robot_name, AvoidanceConfig(max_iterations=1))
    two_steps = robot_avoidance(robot_name, AvoidanceConfig(max_iterations=2))
    avoidance = robot_avoidance(robot_name)
    model = avoidance.model
    free = np.ones(model.dof, dtype=bool)
    if model.torso_index is not None:
        free[model.torso_index] = False
    slid = 0
    for _ in range(40):
        start = rng.uniform(model.lower, model.upper)
        goal = np.clip(start + rng.normal(scale=0.3, size=model.dof), model.lower, model.upper)
        low = np.maximum(model.lower, start - 0.3)
        high = np.minimum(model.upper, start + 0.3)
        current, check = start, model.check(start, avoidance._reach)
        for _ in range(slides):
            fast = one_step._slide(goal, current, free, low, high, check)
            fast_steps = two_steps._slide(goal, current, free, low, high, check)[1]
            with monkeypatch.context() as patch:
                patch.setattr(compiled, 'slide', None)
                slow = one_step._slide(goal, current, free, low, high, check)
                slow_steps = two_steps._slide(goal, current, free, low, high, check)[1]
            assert fast_steps == slow_steps  # both stop after this step, or both go on
            # the constraint products summed in another order, through the damped systems'
            # condition (up to 1e8): as the active set's own compiled and numpy steps
            np.testing.assert_allclose(fast[0], slow[0], rtol=0.0, atol=1e-7)
            np.testing.assert_allclose(
                fast[2].distances, slow[2].distances, rtol=0.0, atol=1e-7
            )
            current, check = slow[0], slow[2]
            if slow_steps == 1:
                break
        slid += bool(np.any(current != np.clip(goal, low, high)))
        fast_look = avoidance._first_look(goal, start)
        with monkeypatch.context() as patch:
            patch.setattr(compiled, 'first_look', None)
            slow_look = avoidance._first_look(goal, start)
        np.testing.assert_array_equal(fast_look[0].distances, slow_look[0].distances)
        for mine, theirs in zip(fast_look[1:], slow_look[1:]):
            np.testing.assert_array_equal(mine, theirs)
    assert slid  # some slides met constraints on the way


def test_a_held_whole_body_answer_keeps_the_torso_it_was_checked_with(rng):
    """
    The avoidance holds its last answer (arms and torso) when no safe way is found from it.

    TIAGo whole-body, its last answer put deep in contact with the torso raised (0.35 m) while
    the person stands (lift target 0.15 m): when the avoidance holds, the step's torso is the
    held lift, not the solver's, and the solver goes on from the held arms and lift.
    """
    robot = load_robot('tiago')
    model = robot.collision
    frames = ADVERSARIAL['hand on the chest']
    held = None
    imitator = RobotImitator(robot, SolverConfig(), whole_body=True)
    for _ in range(300):
        x = rng.uniform(model.lower, model.upper)
        x[model.torso_index] = model.upper[model.torso_index]
        if model.check(x, 0.2).minimum > -0.03:
            continue
        imitator.reset()
        for frame in frames[:3]:
            imitator.set_chest_height(1.3)
            imitator.step(frame)
        imitator.avoidance._safe, imitator.avoidance._safe_check = x.copy(), None
        step = imitator.step(frames[3])
        if step.avoidance.termination is AvoidanceTermination.HELD:
            held = step, x
            break
    assert held is not None, 'no held answer in 300 configurations in contact'
    step, x = held
    assert step.torso.target == pytest.approx(0.15)
    assert step.torso.value == x[model.torso_index] == step.avoidance.x[model.torso_index]
    np.testing.assert_array_equal(step.arms['arm'].result.q, x[model.arm_slices['arm']])
    assert imitator._whole_body['arm'].torso_value == x[model.torso_index]
