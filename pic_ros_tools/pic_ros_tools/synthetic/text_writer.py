"""
Writer of a synthetic take in the PIC paper's Kinect v2 text formats.

:func:`write_kinect_v2_text` writes the skeleton, stamp, segment and config files that
:mod:`pic_ros_tools.recordings.kinect_v2_text` reads (numbers with 6 decimals, [m] and [s]).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from pic_ros.exceptions import ConfigError
from pic_ros_tools.synthetic.recording import NAME_PATTERN, SyntheticRecording
from pic_ros_tools.synthetic.skeleton import JOINT_COUNT

_FLOAT_FORMAT: Final = '{:.6f}'


def _number(value: float) -> str:
    text = _FLOAT_FORMAT.format(value)
    return '0.000000' if text == '-0.000000' else text


def write_kinect_v2_text(
    recording: SyntheticRecording, directory: Path | str, name: str | None = None
) -> tuple[Path, ...]:
    """
    Write a recording in the PIC paper's Kinect v2 text formats.

    Files, all UTF-8 text with Unix line ends, numbers with 6 decimals:

    - ``<name>_skel.txt``: one line per **tracked** frame (lost frames are left out, as in the
      real recordings), 75 numbers: 25 joints x (x, y, z), joint-major, [m], Kinect v2 camera
      space (x to the sensor's left, y up, z into the scene);
    - ``<name>_skelts.txt``: the stamp of each written line [s];
    - ``<task>_<n>.txt`` for ``name == '<task><n>'``: one segment per line, ``first last``,
      1-based inclusive line numbers of the written skeleton file
      (:meth:`SyntheticRecording.segment_lines`);
    - ``<name>_config.json``: ``arm`` (one of ``right``/``left``/``both`` per segment, as in the
      paper's configs), ``task_names``, ``synthetic`` (true) and ``seed``.

    :param recording: The recording to write.
    :param directory: Output directory; created if missing.
    :param name: Recording name ``<task><n>``; default ``recording.name``.
    :return: Paths written: skeleton, stamps, segments, config.
    :raises ConfigError: If the name does not end with a take number or a segment holds no
        tracked frame.
    :raises OSError: If a file cannot be written.
    """
    name = recording.name if name is None else name
    match = NAME_PATTERN.match(name)
    if match is None:
        raise ConfigError(f'recording name {name!r} must end with a take number, e.g. synthetic1')
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rows = recording.joints[recording.tracked].reshape(-1, 3 * JOINT_COUNT)
    skeleton = ''.join(' '.join(_number(value) for value in row) + '\n' for row in rows)
    stamps = ''.join(_number(value) + '\n' for value in recording.stamps[recording.tracked])
    segments = ''.join(f'{first} {last}\n' for first, last in recording.segment_lines())
    config = {
        'arm': list(recording.task_arms),
        'task_names': list(recording.task_names),
        'synthetic': True,
        'seed': recording.seed,
    }
    files = (
        (directory / f'{name}_skel.txt', skeleton),
        (directory / f'{name}_skelts.txt', stamps),
        (directory / f"{match['task']}_{match['number']}.txt", segments),
        (directory / f'{name}_config.json', json.dumps(config, indent=4) + '\n'),
    )
    for path, text in files:
        path.write_text(text, encoding='utf-8', newline='\n')
    return tuple(path for path, _ in files)
