"""
The joint tree of a robot, read from its URDF with urdf-parser-py.

A :class:`RobotModel` keeps only what kinematics needs: every joint with its parent and child
link, its ``<origin>`` transform, axis and limits. Geometry, inertia and plugin tags are ignored.
Units are the URDF's: metres, radians, rad/s (m/s for prismatic joints).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import enum
import math
from pathlib import Path
from types import MappingProxyType

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ChainError
from pic_ros.robot.kinematics.transforms import freeze, transform_from_xyz_rpy
from urdf_parser_py import urdf as urdf_model
from urdf_parser_py.xml_reflection import core as xml_core

FloatArray = npt.NDArray[np.float64]


class JointType(enum.Enum):
    """URDF joint types that pic_ros can put in a kinematic chain."""

    REVOLUTE = 'revolute'
    CONTINUOUS = 'continuous'
    PRISMATIC = 'prismatic'
    FIXED = 'fixed'

    @property
    def is_movable(self) -> bool:
        """Whether the joint has a coordinate (everything but ``fixed``)."""
        return self is not JointType.FIXED


@dataclass(frozen=True)
class JointLimits:
    """
    Limits of one joint, as written in the URDF.

    :param lower: Lowest position [rad] or [m]; ``-inf`` for a continuous joint.
    :param upper: Highest position [rad] or [m]; ``+inf`` for a continuous joint.
    :param velocity: Largest speed [rad/s] or [m/s].
    :param effort: Largest effort [N m] or [N].
    """

    lower: float
    upper: float
    velocity: float
    effort: float


@dataclass(frozen=True)
class Joint:
    """
    One URDF joint.

    :param name: Joint name, unique in the robot.
    :param joint_type: Joint type.
    :param parent: Parent link name.
    :param child: Child link name.
    :param origin: Transform parent link <- joint frame, shape (4, 4), read-only, [m].
    :param axis: Unit axis in the joint frame, shape (3,), read-only.
    :param limits: Position, velocity and effort limits (``None`` for fixed joints).
    :param mimic: ``(joint, multiplier, offset)`` when the joint mimics another one.
    """

    name: str
    joint_type: JointType
    parent: str
    child: str
    origin: FloatArray
    axis: FloatArray
    limits: JointLimits | None
    mimic: tuple[str, float, float] | None = None


@dataclass(frozen=True)
class RobotModel:
    """
    The joint tree of a robot.

    :param name: Robot name from the URDF.
    :param root_link: The one link that is no joint's child.
    :param joints: Joints by name (read-only mapping), in URDF order.
    :param links: Every link name, in URDF order.
    """

    name: str
    root_link: str
    joints: Mapping[str, Joint]
    links: tuple[str, ...]

    def joint_path(self, base_link: str, tip_link: str) -> tuple[Joint, ...]:
        """
        Return the joints that connect ``base_link`` to ``tip_link``, from base to tip.

        :param base_link: Link where the chain starts.
        :param tip_link: Link where the chain ends; it must be a descendant of ``base_link``.
        :return: Joints along the path, base first (empty when both links are the same).
        :raises ChainError: If a link is unknown or ``tip_link`` does not descend from
            ``base_link``.
        """
        for link in (base_link, tip_link):
            if link not in self.links:
                raise ChainError(
                    f'link {link!r} is not in robot {self.name!r}; links: {", ".join(self.links)}'
                )
        parent_joint = {joint.child: joint for joint in self.joints.values()}
        path: list[Joint] = []
        link = tip_link
        while link != base_link:
            joint = parent_joint.get(link)
            if joint is None or len(path) > len(self.joints):
                raise ChainError(f'link {tip_link!r} does not descend from {base_link!r}')
            path.append(joint)
            link = joint.parent
        return tuple(reversed(path))


def _suppress_urdf_warnings(message: str) -> None:
    """Drop urdf-parser-py's 'unknown tag' chatter (plugin and Gazebo tags are expected)."""
    del message  # Unused: pic_ros reads kinematics only.


def load_robot_model(path: str | Path) -> RobotModel:
    """
    Read the joint tree of a URDF file.

    :param path: URDF file.
    :return: The robot model.
    :raises ChainError: If the file cannot be read or has a joint type pic_ros cannot use
        (``floating``, ``planar``).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding='utf-8')
    except OSError as err:
        raise ChainError(f'cannot read URDF {path}: {err}') from err
    previous = xml_core.on_error
    xml_core.on_error = _suppress_urdf_warnings
    try:
        robot = urdf_model.URDF.from_xml_string(text)
    except Exception as err:  # noqa: B902 - urdf-parser-py raises bare Exceptions.
        raise ChainError(f'cannot parse URDF {path}: {err}') from err
    finally:
        xml_core.on_error = previous
    joints: dict[str, Joint] = {}
    for raw in robot.joints:
        joints[raw.name] = _joint_from_urdf(raw, path)
    links = tuple(link.name for link in robot.links)
    parents: dict[str, str] = {}
    for joint in joints.values():
        if joint.child in parents:
            raise ChainError(
                f'URDF {path}: link {joint.child!r} is the child of two joints '
                f'({parents[joint.child]!r} and {joint.name!r}); a URDF must be a tree'
            )
        parents[joint.child] = joint.name
    children = set(parents)
    roots = [link for link in links if link not in children]
    if len(roots) != 1:
        raise ChainError(f'URDF {path} must have exactly one root link, found {roots}')
    return RobotModel(
        name=str(robot.name), root_link=roots[0], joints=MappingProxyType(joints), links=links
    )


def _joint_from_urdf(raw: urdf_model.Joint, path: Path) -> Joint:
    try:
        joint_type = JointType(raw.type)
    except ValueError as err:
        raise ChainError(
            f'joint {raw.name!r} in {path} has type {raw.type!r}; supported: '
            f'{", ".join(t.value for t in JointType)}'
        ) from err
    origin = raw.origin
    xyz = origin.xyz if origin is not None and origin.xyz is not None else (0.0, 0.0, 0.0)
    rpy = origin.rpy if origin is not None and origin.rpy is not None else (0.0, 0.0, 0.0)
    axis = np.asarray(raw.axis if raw.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    norm = float(np.linalg.norm(axis))
    if joint_type.is_movable and not norm > 0.0:
        raise ChainError(f'joint {raw.name!r} in {path} has a zero axis')
    limits = _limits_from_urdf(raw, joint_type, path) if joint_type.is_movable else None
    mimic = None
    if raw.mimic is not None:
        mimic = (
            str(raw.mimic.joint),
            float(raw.mimic.multiplier if raw.mimic.multiplier is not None else 1.0),
            float(raw.mimic.offset if raw.mimic.offset is not None else 0.0),
        )
    return Joint(
        name=str(raw.name),
        joint_type=joint_type,
        parent=str(raw.parent),
        child=str(raw.child),
        origin=freeze(transform_from_xyz_rpy(xyz, rpy)),
        axis=freeze(axis / norm if norm > 0.0 else axis),
        limits=limits,
        mimic=mimic,
    )


def _limits_from_urdf(raw: urdf_model.Joint, joint_type: JointType, path: Path) -> JointLimits:
    """Return a movable joint's limits (a continuous joint has no position limits)."""
    limit = raw.limit
    # A limit of 0 is a limit (the joint must not move / push), not a missing value.
    has_velocity = limit is not None and limit.velocity is not None
    has_effort = limit is not None and limit.effort is not None
    velocity = float(limit.velocity) if has_velocity else math.inf
    effort = float(limit.effort) if has_effort else math.inf
    if joint_type is JointType.CONTINUOUS:
        return JointLimits(lower=-math.inf, upper=math.inf, velocity=velocity, effort=effort)
    if limit is None or limit.lower is None or limit.upper is None:
        raise ChainError(f'joint {raw.name!r} in {path} has no position limits')
    lower, upper = float(limit.lower), float(limit.upper)
    if lower > upper:
        raise ChainError(f'joint {raw.name!r} in {path} has lower limit > upper limit')
    return JointLimits(lower=lower, upper=upper, velocity=velocity, effort=effort)
