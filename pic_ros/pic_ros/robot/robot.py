"""A robot ready for imitation: URDF model, description file, arms, torso, head and grippers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import functools
from pathlib import Path
from types import MappingProxyType

from pic_ros.exceptions import ConfigError
from pic_ros.resources import config_path, urdf_path
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.collision import build_collision_model, CollisionModel
from pic_ros.robot.config import load_robot_spec, RobotSpec
from pic_ros.robot.gripper import GripperModel
from pic_ros.robot.head import HeadModel
from pic_ros.robot.joint_group import CommandedGroup
from pic_ros.robot.kinematics.robot_model import load_robot_model, RobotModel
from pic_ros.robot.torso import TORSO_GROUP, TorsoModel


@dataclass(frozen=True, eq=False)
class Robot:
    """
    A robot: URDF model, description file, built arms, head and grippers.

    :param spec: The robot file.
    :param model: The URDF joint tree.
    :param arms: Arms by name, in file order.
    :param urdf_file: Path of the URDF that was loaded.
    :param head: The head, or None when the robot file has none.
    :param grippers: Grippers by the name of the arm they end.
    :param torso: The torso lift, or None when the robot file has none.
    """

    spec: RobotSpec
    model: RobotModel
    arms: Mapping[str, ArmModel]
    urdf_file: Path
    head: HeadModel | None = None
    grippers: Mapping[str, GripperModel] = field(default_factory=lambda: MappingProxyType({}))
    torso: TorsoModel | None = None

    @functools.cached_property
    def held_joints(self) -> Mapping[str, float]:
        """
        Return where the joints that no solver moves are held, for collision checks.

        :return: The locked joints, the head at its neutral pose and the grippers open (the
            widest their fingers go), by joint name [rad] or [m]; other joints count as 0
            within their limits.
        """
        spec = self.spec
        still = dict(spec.locked_joints)
        if spec.head is not None:
            still.update(zip(spec.head.joints, spec.head.neutral))
        for gripper in spec.grippers.values():
            still.update(zip(gripper.joints, gripper.open_position))
        return MappingProxyType(still)

    @functools.cached_property
    def collision(self) -> CollisionModel:
        """
        Return the self-collision model (:mod:`pic_ros.robot.collision`), built on first use.

        :raises ConfigError: If the robot file's ``collision`` section does not fit the URDF.
        """
        spec = self.spec
        return build_collision_model(
            self.model, str(self.urdf_file), spec.base_frame, self.arms, spec.collision,
            self.held_joints,
            torso_joint=None if spec.torso is None else spec.torso.joint,
            torso_neutral=0.0 if spec.torso is None else spec.torso.neutral,
        )

    @property
    def groups(self) -> Mapping[str, CommandedGroup]:
        """
        Return every joint group a controller drives: the arms, the torso, the head, the grippers.

        :return: Groups by name (arm names, ``torso``, ``head``, ``<arm>_gripper``), read-only.
        """
        groups: dict[str, CommandedGroup] = dict(self.arms)
        if self.torso is not None:
            groups[TORSO_GROUP] = self.torso.group
        if self.head is not None:
            groups['head'] = self.head.group
        for gripper in self.grippers.values():
            groups[gripper.group.name] = gripper.group
        return MappingProxyType(groups)

    @property
    def name(self) -> str:
        """Return the robot name."""
        return self.spec.name

    @property
    def base_frame(self) -> str:
        """Return the base link every solver position is expressed in."""
        return self.spec.base_frame


def load_robot(robot: str | Path) -> Robot:
    """
    Load a robot by name (``baxter``, ``yumi``, ``tiago``) or from a robot YAML path.

    A name is looked up as ``config/<name>.yaml`` in the package share directory; anything ending
    in ``.yaml`` or ``.yml`` is a path. The URDF named in the file is looked up beside the YAML,
    then in the share directory's ``urdf/``, unless it is an absolute path.

    :param robot: Robot name or YAML path.
    :return: The robot with its arms built.
    :raises ConfigError: If the robot file is missing or invalid.
    :raises ChainError: If the URDF does not match the robot file.
    """
    candidate = Path(robot)
    if candidate.suffix in ('.yaml', '.yml'):
        spec_path = candidate
    else:
        spec_path = config_path(str(robot))
    if not spec_path.exists():
        raise ConfigError(f'no robot file for {str(robot)!r} (looked for {spec_path})')
    spec = load_robot_spec(spec_path)
    urdf_file = Path(spec.urdf)
    if not urdf_file.is_absolute():
        beside = spec_path.parent / urdf_file
        urdf_file = beside if beside.exists() else urdf_path(spec.urdf)
    model = load_robot_model(urdf_file)
    held = dict(spec.locked_joints)
    if spec.torso is not None:  # the arm solvers see the torso held at its neutral value
        held[spec.torso.joint] = spec.torso.neutral
    arms = {
        name: ArmModel.build(model, spec.base_frame, arm, held)
        for name, arm in spec.arms.items()
    }
    torso = None if spec.torso is None else TorsoModel.build(model, spec.torso, arms)
    head = (
        None if spec.head is None
        else HeadModel.build(model, spec.base_frame, spec.head, held)
    )
    grippers = {arm: GripperModel.build(model, entry) for arm, entry in spec.grippers.items()}
    names = list(arms) + ([TORSO_GROUP] if torso is not None else [])
    names += ['head'] if head is not None else []
    names += [gripper.group.name for gripper in grippers.values()]
    if len(set(names)) != len(names):
        raise ConfigError(
            f'{spec_path}: an arm is named like the torso, the head or a gripper: {names}'
        )
    return Robot(
        spec=spec, model=model, arms=MappingProxyType(arms), urdf_file=urdf_file, head=head,
        grippers=MappingProxyType(grippers), torso=torso,
    )
