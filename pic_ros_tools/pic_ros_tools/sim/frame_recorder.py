"""
Recording rendered frames of a simulated robot to numbered PNG files, off the simulation thread.

:class:`FrameRecorder` renders from a worker thread with its own ``MjData`` and OpenGL context;
:func:`write_png` writes one image (with Pillow, imported when the first image is written).
"""

from __future__ import annotations

import math
from pathlib import Path
import queue
import threading
import time
from typing import Final, TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.schema import ParameterDef
from pic_ros_tools.sim.offscreen import make_renderer, MAX_IMAGE_SIZE, RenderError
from pic_ros_tools.sim.scene import CAMERA_NAME

if TYPE_CHECKING:
    from pic_ros_tools.sim.mujoco_robot import SimRobot

FloatArray = npt.NDArray[np.float64]

RENDER_DIR: Final = ParameterDef(
    'render_dir', '', 'Folder for PNG frames of the robot (empty: no rendering)', read_only=True
)
RENDER_RATE: Final = ParameterDef(
    'render_rate', 10.0, 'Frames per second written to render_dir', unit='Hz', low=0.1,
    high=60.0, read_only=True,
)
RENDER_WIDTH: Final = ParameterDef(
    'render_width', 640, 'Frame width', unit='px', low=16, high=MAX_IMAGE_SIZE[0], read_only=True
)
RENDER_HEIGHT: Final = ParameterDef(
    'render_height', 480, 'Frame height', unit='px', low=16, high=MAX_IMAGE_SIZE[1],
    read_only=True,
)
RENDER_PARAMETERS: Final = (RENDER_DIR, RENDER_RATE, RENDER_WIDTH, RENDER_HEIGHT)
"""What a node recording frames reads: where, how often, how large."""


def write_png(path: str | Path, image: npt.NDArray[np.uint8]) -> None:
    """
    Write an RGB or RGBA image as a PNG file (8 bits per channel, fast zlib level 1).

    :param path: Output file.
    :param image: Pixels, shape (height, width, 3 or 4), ``uint8``, first row at the top.
    :raises ConfigError: If the array is not such an image.
    """
    array = np.ascontiguousarray(image)
    if array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] not in (3, 4):
        raise ConfigError(f'expected a (H, W, 3|4) uint8 image, got {array.dtype} {array.shape}')
    from PIL import Image

    Image.fromarray(array).save(Path(path), format='PNG', compress_level=1)


class FrameRecorder:
    """
    Render frames of a :class:`~pic_ros_tools.sim.mujoco_robot.SimRobot` to numbered PNG files.

    :meth:`submit` copies the current joint positions and returns at once; a worker thread with
    its own ``MjData`` and OpenGL context renders them and writes ``frame_000000.png``, ...
    While the worker is busy a submitted frame is skipped (counted), so a slow software renderer
    never delays the simulation.

    :param sim: The simulated robot (its model is shared read-only).
    :param directory: Output folder (created if missing).
    :param width: Image width [px].
    :param height: Image height [px].
    """

    def __init__(self, sim: SimRobot, directory: str | Path,
                 width: int = RENDER_WIDTH.default,
                 height: int = RENDER_HEIGHT.default) -> None:
        if not (1 <= width <= MAX_IMAGE_SIZE[0] and 1 <= height <= MAX_IMAGE_SIZE[1]):
            raise ConfigError(f'image size out of range: {width} x {height}')
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._sim = sim
        self._size = (width, height)
        self._queue: queue.Queue[tuple[float, FloatArray] | None] = queue.Queue(maxsize=1)
        self._lock = threading.Lock()
        self.frames_written = 0
        self.frames_skipped = 0
        self.render_seconds = 0.0
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name='pic_ros_frames', daemon=True)
        self._thread.start()

    @property
    def seconds_per_frame(self) -> float:
        """Return the mean wall time to render and write one frame [s] (nan before the first)."""
        with self._lock:
            if self.frames_written == 0:
                return math.nan
            return self.render_seconds / self.frames_written

    def submit(self) -> bool:
        """
        Queue the current state for rendering.

        :return: False if the frame was skipped (worker busy or stopped after an error).
        """
        if self.error is not None or not self._thread.is_alive():
            self.frames_skipped += 1
            return False
        try:
            self._queue.put_nowait((self._sim.time, self._sim.data.qpos.copy()))
        except queue.Full:
            self.frames_skipped += 1
            return False
        return True

    def _run(self) -> None:
        mujoco = self._sim.mujoco
        model = self._sim.model
        data = mujoco.MjData(model)
        width, height = self._size
        try:
            renderer = make_renderer(mujoco, model, width, height)
        except RenderError as error:
            self.error = str(error)
            return
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return
                started = time.perf_counter()
                data.time, data.qpos[:] = item[0], item[1]
                mujoco.mj_forward(model, data)
                renderer.update_scene(data, camera=CAMERA_NAME)
                image = renderer.render()
                path = self.directory / f'frame_{self.frames_written:06d}.png'
                write_png(path, image)
                with self._lock:
                    self.frames_written += 1
                    self.render_seconds += time.perf_counter() - started
        except (ImportError, OSError, RuntimeError, ValueError, mujoco.FatalError) as error:
            self.error = f'frame recording stopped: {error}'
        finally:
            renderer.close()

    def close(self, timeout: float = 10.0) -> None:
        """
        Finish the queued frame and stop the worker.

        :param timeout: Longest wait for the worker [s].
        """
        if self._thread.is_alive():
            try:
                self._queue.put(None, timeout=timeout)
            except queue.Full:
                return
            self._thread.join(timeout)
