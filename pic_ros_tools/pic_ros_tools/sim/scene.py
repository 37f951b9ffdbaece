"""
The world around a simulated robot: floor, sky, light and the camera that frames the arms.

:func:`add_scene` adds to a robot's :class:`mujoco.MjSpec` a chequered floor at the lowest point
of the robot in its initial pose, a skybox, a directional light (shadows optional: they cost
about 2.5x per frame in software GL) and one camera, :data:`CAMERA_NAME`, looking at the robot
from the front-left (azimuth 25 deg, elevation 20 deg) from just far enough for the arms, the
rest of the robot down to 0.25 m below the arms' workspace, and the workspace in front of the
arms (one arm reach ahead of and below each arm's root) to fill a 4:3 image. Frames: the world
frame is the URDF root link (REP-103: x forward, y left, z up, metres).

Contact bits: robot geoms carry :data:`ROBOT_CONTACT`, the floor :data:`FLOOR_CONTACT`; the
floor touches the robot unless the model turns it off (``SimConfig.floor_contacts``).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from pic_ros.robot.robot import Robot

FloatArray = npt.NDArray[np.float64]

CAMERA_NAME: Final = 'pic_ros_view'
"""Name of the camera added to every robot model."""

ROBOT_CONTACT: Final = 2
"""``contype`` bit of the robot geoms."""

FLOOR_CONTACT: Final = 1
"""``contype`` bit of the floor."""

FLOOR_NAME: Final = 'pic_ros_floor'
"""Name of the floor geom."""

_CAMERA_AZIMUTH: Final = math.radians(25.0)
"""Camera direction from the scene centre: azimuth from +x towards +y [rad]."""

_CAMERA_ELEVATION: Final = math.radians(20.0)
"""Camera direction from the scene centre: elevation above the horizontal [rad]."""

_CAMERA_FOVY: Final = 45.0
"""Vertical field of view of the camera [deg]."""

_ASPECT: Final = 4.0 / 3.0
"""Image width / height the camera placement is fitted for (wider images see more)."""

_BELOW_ARMS: Final = 0.25
"""How far below the arms' workspace the camera view extends [m]."""

_SHADOW_MAP_SIZE: Final = 2048
"""Shadow map size [px] (when shadows are on)."""


def _descends_from(model: Any, body: int, ancestor: int) -> bool:
    """Tell whether a body is ``ancestor`` or one of its descendants."""
    while body > 0:
        if body == ancestor:
            return True
        body = int(model.body_parentid[body])
    return ancestor == 0


def _fitting_distance(points: FloatArray, direction: FloatArray) -> float:
    """
    Return how far from the centre a camera must stand to see every point.

    :param points: Points relative to the look-at centre, shape (N, 3), [m].
    :param direction: Unit vector from the centre to the camera.
    :return: Distance [m] that fits the points in the field of view (4:3 image), plus 15 %.
    """
    forward = -direction
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right = right / np.linalg.norm(right)
    up = np.cross(right, forward)
    half_height = math.tan(math.radians(_CAMERA_FOVY) / 2.0)
    half_width = half_height * _ASPECT
    depth = points @ forward
    needed = np.maximum(
        np.abs(points @ up) / half_height - depth, np.abs(points @ right) / half_width - depth
    )
    return 1.15 * float(needed.max())


def _look_at(position: FloatArray, target: FloatArray) -> list[float]:
    """Return MuJoCo ``xyaxes`` of a camera at ``position`` looking at ``target`` (z up)."""
    forward = target - position
    forward = forward / np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right = right / np.linalg.norm(right)
    up = np.cross(right, forward)
    return [*right.tolist(), *up.tolist()]


def _geom_corners(model: Any, data: Any, geom: int) -> FloatArray:
    """Return the 8 world corners of a geom's bounding box, shape (8, 3), [m]."""
    centre = model.geom_aabb[geom][:3]
    half = model.geom_aabb[geom][3:]
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
    local = centre + signs * half
    rotation = data.geom_xmat[geom].reshape(3, 3)
    corners: FloatArray = data.geom_xpos[geom] + local @ rotation.T
    return corners


def add_scene(
    mujoco: Any, spec: Any, model: Any, data: Any, robot: Robot, shadows: bool
) -> None:
    """
    Add the floor, sky, light and :data:`CAMERA_NAME` around a robot.

    :param mujoco: The mujoco module.
    :param spec: The robot's ``mujoco.MjSpec``, edited in place.
    :param model: The model compiled from ``spec`` (without the scene).
    :param data: Its data, forwarded at the initial pose (where the floor and camera are fitted).
    :param robot: The robot (its arms' first joints locate the arms' workspaces).
    :param shadows: Let the light cast shadows.
    """
    corners = [_geom_corners(model, data, geom) for geom in range(model.ngeom)]
    floor = float(min(box[:, 2].min() for box in corners))
    points = []
    arm_low = math.inf
    for arm in robot.arms.values():
        joint = model.joint(arm.joint_names[0])
        first = int(joint.bodyid[0])
        root = data.xanchor[joint.id].copy()
        arm_boxes = [
            corners[geom] for geom in range(model.ngeom)
            if _descends_from(model, int(model.geom_bodyid[geom]), first)
        ]
        reach = max(
            (float(np.linalg.norm(box - root, axis=1).max()) for box in arm_boxes),
            default=0.5,
        )
        ahead = np.array([1.0, 0.0, 0.0])
        down = np.array([math.sqrt(0.5), 0.0, -math.sqrt(0.5)])
        workspace = np.array([root, root + reach * ahead, root + reach * down])
        arm_low = min(arm_low, float(workspace[:, 2].min()))
        points.append(workspace)
    # The rest of the robot frames the arms (torso, head) but not far below them (pedestal).
    points.extend(corners)
    cloud = np.concatenate(points)
    cloud[:, 2] = np.clip(cloud[:, 2], max(floor, arm_low - _BELOW_ARMS), None)
    low, high = cloud.min(axis=0), cloud.max(axis=0)
    centre = (low + high) / 2.0
    direction = np.array([
        math.cos(_CAMERA_ELEVATION) * math.cos(_CAMERA_AZIMUTH),
        math.cos(_CAMERA_ELEVATION) * math.sin(_CAMERA_AZIMUTH),
        math.sin(_CAMERA_ELEVATION),
    ])
    distance = _fitting_distance(cloud - centre, direction)
    position = centre + distance * direction
    spec.worldbody.add_camera(
        name=CAMERA_NAME, pos=position.tolist(), xyaxes=_look_at(position, centre),
        fovy=_CAMERA_FOVY,
    )
    spec.add_texture(
        name='pic_ros_grid', type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.32, 0.36, 0.42],
        rgb2=[0.24, 0.27, 0.32], width=512, height=512,
    )
    spec.add_texture(
        name='pic_ros_sky', type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=[0.55, 0.65, 0.8],
        rgb2=[0.1, 0.12, 0.16], width=256, height=256,
    )
    material = spec.add_material(
        name='pic_ros_floor', texrepeat=[4.0, 4.0], texuniform=True, reflectance=0.0
    )
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = 'pic_ros_grid'
    spec.worldbody.add_geom(
        name=FLOOR_NAME, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05],
        pos=[0.0, 0.0, floor], material='pic_ros_floor', contype=FLOOR_CONTACT,
        conaffinity=ROBOT_CONTACT,
    )
    spec.worldbody.add_light(
        name='pic_ros_sun', type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
        pos=[centre[0], centre[1], high[2] + 2.0], dir=[-0.3, -0.2, -1.0],
        diffuse=[0.7, 0.7, 0.7], specular=[0.2, 0.2, 0.2], castshadow=shadows,
    )
    spec.visual.quality.shadowsize = _SHADOW_MAP_SIZE
    spec.visual.quality.offsamples = 0
    spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
    spec.visual.headlight.diffuse = [0.4, 0.4, 0.4]
