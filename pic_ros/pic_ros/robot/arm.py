"""
An arm of a robot: its URDF chain, landmark joints, limits and neutral pose.

The chain runs from the robot's base frame to the arm's tool link. Its movable joints are the arm's
joints plus any ``locked_joints`` of the robot that lie on the path (TIAGo's torso lift), which are
held at their configured value. Arm joint values ``q`` are in the arm's joint order.

Landmarks (``docs/method.md#robot-landmarks-and-the-point-chain``) are the origins of the
shoulder, elbow and wrist joints. The *root* is the origin of the movable joint just before the
shoulder (Baxter ``s0``, YuMi ``joint_1``, TIAGo ``arm_1``): the point chain that FABRIK and PIC
move starts there, because that joint is the one that swings the shoulder around.

Joint limits: positions and velocities from the URDF; accelerations and jerks from the robot file
(``acceleration_limits``, ``jerk_limits``), or by the rules of :mod:`pic_ros.robot.config` when
the file gives none.

Besides the URDF limits, an arm has a *working range* for imitation (:attr:`ArmModel.work_lower`,
:attr:`ArmModel.work_upper`): the URDF range, except that the elbow landmark joint stops where
its landmarks are straightest. Elbow joints usually go a little past straight (Baxter ``e1`` to
-0.05 rad, the straight landmark triangle being at 0.17 rad; TIAGo ``arm_4`` to -0.39 rad, straight
at 0.13 rad); past that point the landmark triangle bends *backwards*, and a solution there would
have to cross the straight-arm singularity to bend forwards again when the person bends the
elbow. The straight position is found on the URDF at load time, so it holds for any robot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError
from pic_ros.robot.config import ArmSpec
from pic_ros.robot.joint_group import derived_limits
from pic_ros.robot.kinematics.chain import KinematicChain
from pic_ros.robot.kinematics.robot_model import RobotModel
from pic_ros.robot.kinematics.transforms import freeze
from pic_ros.skeleton import Side

FloatArray = npt.NDArray[np.float64]
Vector = tuple[float, float, float]

LANDMARK_LENGTH_SPREAD = 0.1
"""Largest relative change of a landmark distance over the joint range the point model accepts."""


@dataclass(frozen=True, eq=False)
class ArmModel:
    """
    One robot arm, ready for solving.

    Build it with :meth:`build`.

    :param spec: The arm's entry of the robot file.
    :param chain: URDF chain base frame -> tool link.
    :param locked: Values of the locked joints on the chain, by name [rad] or [m].
    """

    spec: ArmSpec
    chain: KinematicChain
    locked: Mapping[str, float]
    joint_names: tuple[str, ...] = field(init=False)
    lower: FloatArray = field(init=False)
    upper: FloatArray = field(init=False)
    velocity: FloatArray = field(init=False)
    acceleration: FloatArray = field(init=False)
    jerk: FloatArray = field(init=False)
    neutral: FloatArray = field(init=False)
    root_index: int = field(init=False)
    shoulder_index: int = field(init=False)
    elbow_index: int = field(init=False)
    wrist_index: int = field(init=False)
    active: tuple[int, ...] = field(init=False)
    work_lower: FloatArray = field(init=False)
    work_upper: FloatArray = field(init=False)
    _full_template: tuple[float, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        chain = self.chain
        spec = self.spec
        expected = set(spec.joints) | {name for name in chain.joint_names if name in self.locked}
        if set(chain.joint_names) != expected:
            missing = sorted(set(chain.joint_names) - expected)
            extra = sorted(expected - set(chain.joint_names))
            raise ChainError(
                f'arm {spec.name!r}: the chain {chain.base_link} -> {chain.tip_link} has movable '
                f'joints {list(chain.joint_names)}; not in the arm or locked: {missing}; '
                f'listed but not on the chain: {extra}'
            )
        arm_in_chain = [name for name in chain.joint_names if name in spec.joints]
        if tuple(arm_in_chain) != spec.joints:
            raise ChainError(
                f'arm {spec.name!r}: joints must be listed base to tip: {list(arm_in_chain)}'
            )
        indices = [chain.index(name) for name in spec.joints]
        shoulder = chain.index(spec.shoulder)
        if shoulder == 0 or chain.joint_names[shoulder - 1] not in spec.joints:
            raise ChainError(
                f'arm {spec.name!r}: the shoulder landmark {spec.shoulder!r} needs a movable arm '
                'joint before it (the root that swings the shoulder)'
            )
        neutral = np.array(spec.neutral, dtype=float)
        lower = chain.lower[indices]
        upper = chain.upper[indices]
        outside = [
            name
            for name, value, low, high in zip(spec.joints, neutral, lower, upper)
            if not low <= value <= high
        ]
        if outside:
            raise ChainError(f'arm {spec.name!r}: neutral pose outside the limits for {outside}')
        template = [0.0] * chain.dof
        for name, value in self.locked.items():
            index = chain.index(name)
            limits = chain.movable_joints[index].limits
            if limits is not None and not limits.lower <= value <= limits.upper:
                raise ChainError(f'locked joint {name!r} = {value} is outside its limits')
            template[index] = float(value)
        set_field = object.__setattr__
        set_field(self, 'joint_names', spec.joints)
        set_field(self, 'lower', freeze(lower))
        set_field(self, 'upper', freeze(upper))
        velocity = chain.velocity[indices]
        acceleration, jerk = derived_limits(velocity, spec.acceleration_limits, spec.jerk_limits)
        set_field(self, 'velocity', freeze(velocity))
        set_field(self, 'acceleration', freeze(acceleration))
        set_field(self, 'jerk', freeze(jerk))
        set_field(self, 'neutral', freeze(neutral))
        set_field(self, 'root_index', shoulder - 1)
        set_field(self, 'shoulder_index', shoulder)
        set_field(self, 'elbow_index', chain.index(spec.elbow))
        set_field(self, 'wrist_index', chain.index(spec.wrist))
        set_field(self, 'active', tuple(indices))
        set_field(self, '_full_template', tuple(template))
        work_lower, work_upper = self._working_range()
        set_field(self, 'work_lower', freeze(work_lower))
        set_field(self, 'work_upper', freeze(work_upper))

    def _working_range(
        self, configurations: int = 32, samples: int = 181
    ) -> tuple[FloatArray, FloatArray]:
        """
        Narrow the elbow landmark joint to the bent side of its straightest position.

        The straight position depends a little on the roll joints around the elbow (offsets), so
        it is found for ``configurations`` seeded random values of the other joints between the
        shoulder and wrist landmarks, and the bound is the one furthest to the bent side: every
        value in the working range then bends the landmarks the normal way.
        """
        lower = np.array(self.lower, dtype=float)
        upper = np.array(self.upper, dtype=float)
        position = self.joint_names.index(self.spec.elbow)
        low, high = lower[position], upper[position]
        if not (np.isfinite(low) and np.isfinite(high)):
            return lower, upper
        values = np.linspace(low, high, samples)
        step = values[1] - values[0]
        bent_above = True
        rng = np.random.default_rng(0)
        between = [
            index
            for index, joint in enumerate(self.joint_names)
            if self.shoulder_index < self.active[index] < self.wrist_index and index != position
        ]
        straight_points = []
        for trial in range(configurations):
            q = self.neutral.copy()
            if trial:
                for index in between:
                    q[index] = rng.uniform(max(lower[index], -np.pi), min(upper[index], np.pi))
            lengths = []
            for value in values:
                q[position] = value
                points = self.landmarks(q)
                lengths.append(float(np.linalg.norm(points[3] - points[1])))
            straight = float(values[int(np.argmax(lengths))])
            if trial == 0:
                bent_above = bool(self.neutral[position] >= straight)
            straight_points.append(straight)
        if bent_above:
            lower[position] = min(max(straight_points) + step, self.neutral[position])
        else:
            upper[position] = max(min(straight_points) - step, self.neutral[position])
        return lower, upper

    @classmethod
    def build(
        cls, model: RobotModel, base_frame: str, spec: ArmSpec, locked: Mapping[str, float]
    ) -> ArmModel:
        """
        Build an arm from the robot model and its YAML entry, and check the point model fits it.

        :param model: Robot model from the URDF.
        :param base_frame: Base link of the robot.
        :param spec: The arm's YAML entry.
        :param locked: Locked joint values of the robot, by name.
        :return: The arm.
        :raises ChainError: If the chain, joints or landmarks do not match the URDF, or if the
            landmark distances vary by more than 10 % over the joint range.
        """
        chain = KinematicChain.from_model(model, base_frame, spec.tool_link)
        on_chain = {name: value for name, value in locked.items() if name in chain.joint_names}
        arm = cls(spec=spec, chain=chain, locked=on_chain)
        arm.check_landmark_rigidity()
        return arm

    @property
    def side(self) -> Side:
        """Return the side of the robot this arm is on."""
        return self.spec.side

    @property
    def name(self) -> str:
        """Return the arm name."""
        return self.spec.name

    @property
    def controller(self) -> str:
        """Return the name of the arm's joint_trajectory_controller."""
        return self.spec.controller

    @property
    def dof(self) -> int:
        """Return the number of arm joints."""
        return len(self.joint_names)

    def full_q(self, q: Sequence[float] | FloatArray) -> list[float]:
        """
        Expand arm joint values to chain coordinates (inserting the locked joints).

        :param q: Arm joint values, arm order, [rad] or [m].
        :return: Chain coordinates, chain order.
        """
        full = list(self._full_template)
        for index, value in zip(self.active, q):
            full[index] = float(value)
        return full

    def landmarks(self, q: Sequence[float] | FloatArray) -> FloatArray:
        """
        Compute the landmark points of the arm.

        :param q: Arm joint values, arm order, shape (dof,), [rad] or [m].
        :return: Root, shoulder, elbow, wrist and tool positions, shape (5, 3), [m], base frame.
        """
        positions = self.chain.joint_positions(self.full_q(q))
        rows = [self.root_index, self.shoulder_index, self.elbow_index, self.wrist_index, -1]
        return positions[rows]

    def landmark_tuples(
        self, q: Sequence[float] | FloatArray
    ) -> tuple[list[Vector], tuple[list[Vector], list[Vector]]]:
        """
        Compute the landmark points in plain floats (the per-frame path of the solvers).

        :param q: Arm joint values, arm order, [rad] or [m].
        :return: ``(landmarks, (positions, axes))``: root, shoulder, elbow, wrist and tool as
            3-tuples, base frame [m]; and every joint origin and axis of the chain, for reuse.
        """
        positions, axes = self.chain.prefix_positions_and_axes(self.full_q(q), self.chain.dof)
        landmarks = [
            positions[self.root_index],
            positions[self.shoulder_index],
            positions[self.elbow_index],
            positions[self.wrist_index],
            positions[-1],
        ]
        return landmarks, (positions, axes)

    def clamp(self, q: npt.ArrayLike) -> FloatArray:
        """
        Clamp arm joint values into the position limits.

        :param q: Arm joint values, shape (dof,).
        :return: A clamped copy.
        """
        clamped: FloatArray = np.clip(np.asarray(q, dtype=float), self.lower, self.upper)
        return clamped

    def check_landmark_rigidity(self, samples: int = 64) -> None:
        """
        Check that the landmark distances are (nearly) configuration-independent.

        The point model treats root->shoulder, shoulder->elbow, elbow->wrist and wrist->tool as
        rigid bones; joints between landmarks must be rolls about the bone. Baxter and TIAGo keep
        these distances within 0.3 mm; YuMi's vary by about 4 %.

        :param samples: Random configurations tried (seeded, so the check is repeatable).
        :raises ChainError: If a distance changes by more than ``LANDMARK_LENGTH_SPREAD``.
        """
        rng = np.random.default_rng(0)
        lower = np.where(np.isfinite(self.lower), self.lower, -np.pi)
        upper = np.where(np.isfinite(self.upper), self.upper, np.pi)
        lengths = []
        for _ in range(samples):
            points = self.landmarks(rng.uniform(lower, upper))
            lengths.append(np.linalg.norm(np.diff(points, axis=0), axis=1))
        table = np.array(lengths)
        spread = (table.max(axis=0) - table.min(axis=0)) / np.maximum(table.mean(axis=0), 1e-9)
        names = ('root-shoulder', 'shoulder-elbow', 'elbow-wrist', 'wrist-tool')
        for name, value in zip(names, spread):
            if value > LANDMARK_LENGTH_SPREAD:
                raise ChainError(
                    f'arm {self.spec.name!r}: the {name} distance varies by {100 * value:.0f} % '
                    'over the joint range; choose landmark joints whose origins lie on the bones'
                )
