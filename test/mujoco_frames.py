"""
An independent forward kinematics for the tests: MuJoCo's own import of a robot's URDF.

MuJoCo parses the URDF itself and computes link frames, joint anchors, joint axes and point
Jacobians with its own code, so it is a reference that shares nothing with
:mod:`pic_ros.robot.kinematics` but the file. The model is compiled with
``<compiler fusestatic="false">``: by default MuJoCo fuses every link without a joint into its
moving ancestor (Baxter's ``left_hand``, YuMi's ``yumi_base_link``), and then those frames would
not exist; with fusing off every URDF link is a body. Mimic joints become equality constraints,
which forward kinematics ignores, so every joint is set independently here.

Everything this module returns is expressed in the robot's base frame (the frame of
:class:`~pic_ros.robot.robot.Robot` and its arms), in metres; MuJoCo's world is the URDF root.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math

import numpy as np
from pic_ros.robot.arm import ArmModel
from pic_ros.robot.robot import Robot
import pytest

mujoco = pytest.importorskip('mujoco')


class MujocoReference:
    """
    MuJoCo's kinematics of a robot's URDF, every link kept as a body.

    :param robot: The robot whose URDF file MuJoCo reads.
    """

    def __init__(self, robot: Robot) -> None:
        spec = mujoco.MjSpec.from_file(str(robot.urdf_file))
        spec.compiler.fusestatic = False
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        self.base_frame = robot.base_frame
        kinds = {int(kind) for kind in self.model.jnt_type}
        allowed = {int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)}
        assert kinds <= allowed, 'a URDF gives hinge and slide joints only'

    def body_id(self, link: str) -> int:
        """
        Return the body id of a URDF link.

        :param link: Link name.
        :return: MuJoCo body id.
        """
        index = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, link)
        assert index >= 0, f'MuJoCo has no body {link!r}'
        return int(index)

    def joint_id(self, joint: str) -> int:
        """
        Return the joint id of a URDF joint.

        :param joint: Joint name.
        :return: MuJoCo joint id.
        """
        index = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        assert index >= 0, f'MuJoCo has no joint {joint!r}'
        return int(index)

    def random_joints(self, rng: np.random.Generator) -> dict[str, float]:
        """
        Draw a value for every joint of the model inside its range (+-pi when unlimited).

        :param rng: Random generator.
        :return: Joint values by name [rad] or [m].
        """
        values = {}
        for index in range(self.model.njnt):
            low, high = (float(bound) for bound in self.model.jnt_range[index])
            if not self.model.jnt_limited[index] or not low < high:
                low, high = -math.pi, math.pi
            values[self.model.joint(index).name] = float(rng.uniform(low, high))
        return values

    def set_joints(self, values: Mapping[str, float]) -> None:
        """
        Set joint positions by name and compute the kinematics (frames, anchors, axes, cdof).

        :param values: Joint values [rad] or [m]; joints not named keep their value.
        """
        for name, value in values.items():
            self.data.qpos[self.model.jnt_qposadr[self.joint_id(name)]] = value
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)

    def set_arm(
        self, arm: ArmModel, q: Sequence[float], rng: np.random.Generator | None = None
    ) -> None:
        """
        Put an arm at ``q`` and its locked joints at their values; optionally the rest at random.

        :param arm: The arm.
        :param q: Arm joint values, arm order.
        :param rng: When given, every joint off the arm's chain gets a random value, which must
            not move the arm.
        """
        values = self.random_joints(rng) if rng is not None else {}
        values.update(zip(arm.chain.joint_names, arm.full_q(q), strict=True))
        self.set_joints(values)

    def _base(self) -> tuple[np.ndarray, np.ndarray]:
        body = self.body_id(self.base_frame)
        return self.data.xmat[body].reshape(3, 3), self.data.xpos[body]

    def to_base(self, point: np.ndarray) -> np.ndarray:
        """
        Express a world point in the base frame.

        :param point: World point, shape (3,), [m].
        :return: The point in the base frame.
        """
        rotation, origin = self._base()
        result: np.ndarray = rotation.T @ (np.asarray(point) - origin)
        return result

    def to_world(self, point: np.ndarray) -> np.ndarray:
        """
        Express a base-frame point in the world frame.

        :param point: Base-frame point, shape (3,), [m].
        :return: The point in the world frame.
        """
        rotation, origin = self._base()
        result: np.ndarray = rotation @ np.asarray(point) + origin
        return result

    def direction_to_base(self, direction: np.ndarray) -> np.ndarray:
        """
        Express a world direction in the base frame.

        :param direction: World vector, shape (3,).
        :return: The vector in the base frame.
        """
        rotation, _ = self._base()
        result: np.ndarray = rotation.T @ np.asarray(direction)
        return result

    def link_frame(self, link: str) -> np.ndarray:
        """
        Return the pose of a link.

        :param link: Link name.
        :return: Transform base <- link, shape (4, 4).
        """
        rotation, origin = self._base()
        body = self.body_id(link)
        transform = np.eye(4)
        transform[:3, :3] = rotation.T @ self.data.xmat[body].reshape(3, 3)
        transform[:3, 3] = rotation.T @ (self.data.xpos[body] - origin)
        return transform

    def joint_origin(self, joint: str) -> np.ndarray:
        """
        Return the origin (MuJoCo's anchor) of a joint in the base frame [m].

        :param joint: Joint name.
        :return: Shape (3,).
        """
        return self.to_base(self.data.xanchor[self.joint_id(joint)])

    def joint_axis(self, joint: str) -> np.ndarray:
        """
        Return the unit axis of a joint in the base frame.

        :param joint: Joint name.
        :return: Shape (3,).
        """
        return self.direction_to_base(self.data.xaxis[self.joint_id(joint)])

    def point_jacobian(
        self, point: np.ndarray, link: str, joints: Sequence[str]
    ) -> np.ndarray:
        """
        Return MuJoCo's Jacobian (``mj_jac``) of a point fixed to a link, w.r.t. some joints.

        :param point: The point, base frame [m].
        :param link: The link that carries it.
        :param joints: Joints whose columns are returned, in that order.
        :return: ``d point / d q`` in the base frame, shape (3, len(joints)).
        """
        rotation, _ = self._base()
        jacp = np.zeros((3, self.model.nv))
        mujoco.mj_jac(
            self.model, self.data, jacp, None, self.to_world(point), self.body_id(link)
        )
        columns = [int(self.model.jnt_dofadr[self.joint_id(name)]) for name in joints]
        result: np.ndarray = rotation.T @ jacp[:, columns]
        return result
