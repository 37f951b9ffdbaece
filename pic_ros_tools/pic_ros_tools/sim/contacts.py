"""
Self-contacts as MuJoCo sees them: the independent check of the self-collision model.

:class:`ContactChecker` loads the robot's URDF into MuJoCo as it is (its ``<collision>``
boxes, cylinders and spheres; one MuJoCo body per link, none fused), places it
at a configuration and runs MuJoCo's own collision detection. It counts the contacts between
bodies that may not touch, by the rule of the self-collision model's reference:

- bodies at most ``adjacent_joints`` movable joints apart are not counted (their shapes meet by
  design, as an elbow's two links);
- body pairs already in contact at the neutral pose are not counted (overlapping link shapes).

The robot file's ``collision`` section plays no part here: this is what the capsules of
:mod:`pic_ros.robot.collision` must keep away from, not a copy of them. Joints that are not arm
joints or the torso are held as the collision model holds them
(:attr:`~pic_ros.robot.robot.Robot.held_joints`). Units: metres and radians.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pic_ros.robot.collision import joints_between
from pic_ros.robot.robot import Robot


@dataclass(frozen=True)
class Contact:
    """
    One contact between two bodies that may not touch.

    :param first: A link (MuJoCo body) in contact.
    :param second: The other one.
    :param depth: How far the shapes overlap, > 0 [m].
    """

    first: str
    second: str
    depth: float


class ContactChecker:
    """
    MuJoCo's collision detection on a robot's URDF (see the module docstring).

    :param robot: The robot.
    :param adjacent_joints: Bodies this many movable joints apart or fewer are not counted.
    """

    def __init__(self, robot: Robot, adjacent_joints: int = 2) -> None:
        import mujoco

        self._mujoco = mujoco
        self.robot = robot
        spec = mujoco.MjSpec.from_file(str(robot.urdf_file))
        spec.compiler.fusestatic = False  # one body per link
        for geom in spec.geoms:
            geom.contype = 1
            geom.conaffinity = 1
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        model = self.model
        self._links = [model.body(index).name for index in range(model.nbody)]
        self._address = {
            model.joint(index).name: int(model.jnt_qposadr[index]) for index in range(model.njnt)
        }
        self._held = {
            name: value for name, value in robot.held_joints.items() if name in self._address
        }
        self.excluded: set[frozenset[int]] = set()
        for first in range(1, model.nbody):  # body 0 is MuJoCo's world, with no shapes
            for second in range(first + 1, model.nbody):
                apart = joints_between(robot.model, self._links[first], self._links[second])
                if apart <= adjacent_joints:
                    self.excluded.add(frozenset((first, second)))
        neutral = {name: arm.neutral for name, arm in robot.arms.items()}
        torso = None if robot.torso is None else robot.torso.neutral
        self.excluded |= {
            frozenset((self._links.index(c.first), self._links.index(c.second)))
            for c in self._contacts(neutral, torso)
        }

    def _place(self, arms: Mapping[str, npt.ArrayLike], torso: float | None) -> None:
        qpos = self.data.qpos
        for name, value in self._held.items():
            qpos[self._address[name]] = value
        for name, values in arms.items():
            for joint, value in zip(self.robot.arms[name].joint_names, np.asarray(values)):
                qpos[self._address[joint]] = float(value)
        if torso is not None and self.robot.torso is not None:
            qpos[self._address[self.robot.torso.joint]] = torso
        self._mujoco.mj_kinematics(self.model, self.data)
        self._mujoco.mj_collision(self.model, self.data)

    def _contacts(
        self, arms: Mapping[str, npt.ArrayLike], torso: float | None, excluded: Any = ()
    ) -> list[Contact]:
        self._place(arms, torso)
        found = []
        model, data = self.model, self.data
        for contact in data.contact[: data.ncon]:
            if contact.dist >= 0.0:
                continue
            first = int(model.geom_bodyid[contact.geom[0]])
            second = int(model.geom_bodyid[contact.geom[1]])
            if first == second or frozenset((first, second)) in excluded:
                continue
            found.append(Contact(self._links[first], self._links[second], -float(contact.dist)))
        return found

    def contacts(
        self, arms: Mapping[str, npt.ArrayLike], torso: float | None = None
    ) -> list[Contact]:
        """
        Return the contacts between bodies that may not touch, at a configuration.

        :param arms: Joint values per arm name, arm joint order [rad] (absent arms: neutral).
        :param torso: Torso lift [m] (None: neutral).
        :return: The contacts, one per MuJoCo contact point (a pair may give several).
        """
        full: dict[str, npt.ArrayLike] = {
            name: arm.neutral for name, arm in self.robot.arms.items()
        }
        full.update(arms)
        if torso is None and self.robot.torso is not None:
            torso = self.robot.torso.neutral
        return self._contacts(full, torso, self.excluded)

    def link_distance(
        self, first: str, second: str, arms: Mapping[str, npt.ArrayLike],
        torso: float | None = None, limit: float = 1.0,
    ) -> float:
        """
        Return MuJoCo's distance between the shapes of two links.

        :param first: A link.
        :param second: Another link, on another body.
        :param arms: Joint values per arm name (absent arms: neutral).
        :param torso: Torso lift [m] (None: neutral).
        :param limit: Largest distance computed [m]; farther pairs return it.
        :return: The smallest distance between a geom of each body [m] (negative: overlap).
        """
        full: dict[str, npt.ArrayLike] = {
            name: arm.neutral for name, arm in self.robot.arms.items()
        }
        full.update(arms)
        if torso is None and self.robot.torso is not None:
            torso = self.robot.torso.neutral
        self._place(full, torso)
        model = self.model
        bodies = (self._links.index(first), self._links.index(second))
        geoms = [np.flatnonzero(model.geom_bodyid == body) for body in bodies]
        best = limit
        for one in geoms[0]:
            for other in geoms[1]:
                best = min(best, float(self._mujoco.mj_geomDistance(
                    model, self.data, int(one), int(other), limit, None
                )))
        return best
