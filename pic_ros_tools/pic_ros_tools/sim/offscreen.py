"""
Offscreen OpenGL for MuJoCo: choosing the backend, importing mujoco and making renderers.

``MUJOCO_GL`` must be set before mujoco is first imported; :func:`import_mujoco` imports mujoco
lazily and, if ``MUJOCO_GL`` is unset, chooses ``egl`` when libEGL is found, else ``osmesa``
when libOSMesa is found (:func:`select_gl_backend`). :func:`make_renderer` creates a
``mujoco.Renderer``; a missing or failing backend raises :class:`RenderError` with the reason.
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from typing import Any, Final

from pic_ros.exceptions import ConfigError, PicRosError

MAX_IMAGE_SIZE: Final = (1920, 1080)
"""Largest offscreen image, (width, height) [px]."""

_WINDOWED_BACKENDS: Final = ('', 'glfw', 'glx', 'enable', 'enabled', 'on', 'true', '1')
"""``MUJOCO_GL`` values that need a display (GLFW): without one, creating a context aborts."""


class RenderError(PicRosError, RuntimeError):
    """Offscreen rendering is not available (no working OpenGL backend) or failed."""


def select_gl_backend() -> str | None:
    """
    Choose MuJoCo's offscreen OpenGL backend before mujoco is imported.

    Leaves a set ``MUJOCO_GL`` alone. Otherwise sets ``egl`` if libEGL is found, else ``osmesa``
    if libOSMesa is found. Has no effect once mujoco is imported (the backend is fixed then).

    :return: The value of ``MUJOCO_GL`` in effect, or None if none could be chosen.
    """
    current = os.environ.get('MUJOCO_GL')
    if current or 'mujoco' in sys.modules:
        return current or None
    for backend, library in (('egl', 'EGL'), ('osmesa', 'OSMesa')):
        if ctypes.util.find_library(library):
            os.environ['MUJOCO_GL'] = backend
            return backend
    return None


def import_mujoco() -> Any:
    """
    Import mujoco, choosing the offscreen GL backend first if this is the first import.

    :return: The mujoco module.
    :raises ConfigError: If mujoco is not installed.
    """
    select_gl_backend()
    try:
        import mujoco
    except ImportError as error:
        raise ConfigError(
            f'the simulation needs the mujoco package ({error}): pip install mujoco, or rosdep '
            'install --from-paths src --ignore-src (rosdep key python3-mujoco-pip)'
        ) from error
    return mujoco


def gl_backend_in_effect() -> str:
    """
    Return the OpenGL backend mujoco chose when it was imported (``MUJOCO_GL`` at that time).

    :return: The lower-case ``MUJOCO_GL`` value mujoco read ('' if it was unset).
    """
    module = sys.modules.get('mujoco.rendering.classic.gl_context')
    value = getattr(module, '_MUJOCO_GL', None)
    if isinstance(value, str):
        return value
    return os.environ.get('MUJOCO_GL', '').lower().strip()


def make_renderer(mujoco: Any, model: Any, width: int, height: int) -> Any:
    """
    Create a ``mujoco.Renderer`` or explain why it cannot be created.

    A windowed backend without a display is refused here: GLFW would abort the process.

    :param mujoco: The mujoco module.
    :param model: The model to render.
    :param width: Image width [px].
    :param height: Image height [px].
    :return: The renderer (its OpenGL context is current in the calling thread).
    :raises RenderError: If no OpenGL backend works.
    """
    backend = gl_backend_in_effect()
    hint = (
        'install EGL (libegl1 libegl-mesa0 libgl1-mesa-dri) or OSMesa (libosmesa6) and set '
        'MUJOCO_GL=egl or osmesa before mujoco is first imported'
    )
    if backend in ('disable', 'disabled', 'off', 'false', '0'):
        raise RenderError(f'offscreen rendering is disabled (MUJOCO_GL={backend!r})')
    has_display = bool(os.environ.get('DISPLAY') or os.environ.get('WAYLAND_DISPLAY'))
    if backend in _WINDOWED_BACKENDS and not has_display:
        raise RenderError(
            f'mujoco was imported with MUJOCO_GL={backend!r}, a windowed backend, and there is '
            f'no display; {hint}'
        )
    try:
        return mujoco.Renderer(model, height, width)
    except (ImportError, OSError, RuntimeError, AttributeError, mujoco.FatalError) as error:
        raise RenderError(
            f'offscreen rendering unavailable with MUJOCO_GL={backend!r}: {error}; {hint}'
        ) from error
