"""
The recipes of ``docs/recipes.md``, followed as a user would: a solver, a tracker and a robot.

The plug-ins live in ``test/plugins/pic_ros_toys.py``. In this process they are registered by
importing that module; in another process (``python -m pic_ros``) by an entry point of the group
``pic_ros.plugins``, as a separate package would declare it. The nodes' part of the recipes is in
``test/ros/test_plugins.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
import importlib
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
from types import ModuleType

import numpy as np
from pic_ros.human.front_end import SkeletonFrontEnd
from pic_ros.robot import load_robot
from pic_ros.ros.launch_arguments import node_overrides, parameter_arguments
from pic_ros.ros.teleop import node_parameters, parse_arguments
from pic_ros.skeleton import SkeletonFrame
from pic_ros.solvers import solver_names, SolverConfig, unregister_solver
from pic_ros.trackers import make_tracker, tracker_names, unregister_tracker
from pic_ros_tools.cli import main
import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = Path(__file__).resolve().parent / 'plugins'


@pytest.fixture
def toys(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """Register the toy solver and tracker for one test, and remove them after it."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    module = importlib.import_module('pic_ros_toys')
    if 'json_udp' not in tracker_names():
        module = importlib.reload(module)
    yield module
    unregister_solver('recovery_only')
    unregister_tracker('json_udp')


def _person(stamp: float) -> dict[str, object]:
    """One JSON datagram of the toy tracker: a person in front of the sensor, arms forward."""
    joints = [
        (2.0, 0.0, 0.9), (2.0, 0.0, 1.3), (2.0, 0.0, 1.45), (2.0, 0.0, 1.6),
        (2.0, -0.18, 1.4), (1.75, -0.2, 1.3), (1.5, -0.2, 1.3), (1.45, -0.2, 1.3),
        (2.0, 0.18, 1.4), (1.75, 0.2, 1.3), (1.5, 0.2, 1.3), (1.45, 0.2, 1.3),
    ]
    return {'stamp': stamp, 'bodies': {'7': joints}}


# --- add a solver ----------------------------------------------------------------------------


def test_a_registered_solver_is_accepted_by_the_config_cli_teleop_and_launch(toys, capsys):
    """One decorator, and every front end takes the new name; it imitates within limits."""
    assert 'recovery_only' in solver_names()
    assert SolverConfig.from_parameters({'solver': 'recovery_only'}).name == 'recovery_only'
    args, _ = parse_arguments(['--solver', 'recovery_only'])
    assert node_parameters(args)['solver_node']['solver'] == 'recovery_only'
    overrides = node_overrides(lambda name: 'recovery_only' if name == 'solver' else '', 'yumi')
    assert overrides['solver_node']['solver'] == 'recovery_only'
    described = {argument.name: argument for argument in parameter_arguments()}
    assert 'recovery_only' in described['solver'].description

    status = main([
        'evaluate', '--robot', 'yumi', '--recording', 'demo', '--solver', 'recovery_only',
        '--json',
    ])

    assert status == 0
    (record,) = json.loads(capsys.readouterr().out)['results']
    assert record['solver'] == 'recovery_only'
    assert record['limit_violations'] == 0
    assert record['pacc_paper'] > 0.9


def test_an_unknown_solver_is_refused_everywhere_with_the_known_names(capsys):
    """Without the plug-in the name is refused, and the message lists what is known."""
    with pytest.raises(SystemExit):
        main(['evaluate', '--solver', 'recovery_only'])
    assert "'fabrik', 'pic', 'pics'" in capsys.readouterr().err


# --- add a tracker ---------------------------------------------------------------------------


def test_a_registered_tracker_feeds_the_front_end(toys):
    """The toy tracker's readings give body-frame skeletons, and bad datagrams are counted."""
    tracker = make_tracker('json_udp')
    front = SkeletonFrontEnd()
    results = [
        front.feed(reading) for reading in (
            tracker.decode(json.dumps(_person(1.0 + 0.033 * k)).encode(), 0.0) for k in range(5)
        ) if reading is not None
    ]
    assert len(results) == 5 and all(isinstance(r, SkeletonFrame) for r in results)
    assert front.selector.tracked_id == 7
    assert tracker.decode(b'{"stamp": 1', 0.0) is None
    assert tracker.status() == {'json_unreadable': 1}


# --- add a robot -----------------------------------------------------------------------------


@pytest.fixture
def toy_robot(tmp_path: Path) -> Path:
    """Write a robot the project does not ship: a YAML and its URDF beside it (one YuMi arm)."""
    shutil.copy(ROOT / 'pic_ros' / 'urdf' / 'yumi.urdf', tmp_path / 'toy.urdf')
    (tmp_path / 'toy.yaml').write_text(
        'name: toy\n'
        'urdf: toy.urdf\n'
        'base_frame: yumi_base_link\n'
        'locked_joints: {}\n'
        'arms:\n'
        '  only:\n'
        '    side: right\n'
        '    tool_link: yumi_link_7_r\n'
        '    joints: [yumi_joint_1_r, yumi_joint_2_r, yumi_joint_7_r, yumi_joint_3_r,\n'
        '             yumi_joint_4_r, yumi_joint_5_r, yumi_joint_6_r]\n'
        '    landmarks: {shoulder: yumi_joint_2_r, elbow: yumi_joint_3_r, '
        'wrist: yumi_joint_5_r}\n'
        '    neutral: [0.0, -2.0, -2.0, 0.5, 0.0, 0.7, 0.0]\n'
        '    controller: only_arm_controller\n'
        'mapping: {mode: same_side, correspondence: direction}\n',
        encoding='utf-8',
    )
    return tmp_path / 'toy.yaml'


def test_a_robot_from_a_urdf_and_a_yaml_is_evaluated_and_launched(toy_robot, capsys):
    """No code: the YAML path works in the core, the command line and the launch arguments."""
    robot = load_robot(toy_robot)
    assert robot.name == 'toy' and list(robot.arms) == ['only']
    np.testing.assert_allclose(robot.arms['only'].neutral, [0.0, -2.0, -2.0, 0.5, 0.0, 0.7, 0.0])

    status = main(['evaluate', '--robot', str(toy_robot), '--recording', 'demo', '--solver',
                   'pic', '--json'])

    assert status == 0
    (record,) = json.loads(capsys.readouterr().out)['results']
    assert record['robot'] == 'toy' and record['limit_violations'] == 0
    overrides = node_overrides(lambda name: '', str(toy_robot))
    assert overrides['trajectory_publisher'] == {'robot': str(toy_robot)}


# --- plug-ins in another process -------------------------------------------------------------


def test_an_entry_point_makes_a_plugin_known_to_another_process(tmp_path):
    """A package's entry point (group pic_ros.plugins) is enough for ``python -m pic_ros``."""
    info = tmp_path / 'pic_ros_toys-1.0.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text('Metadata-Version: 2.1\nName: pic-ros-toys\nVersion: 1.0\n')
    (info / 'entry_points.txt').write_text('[pic_ros.plugins]\ntoys = pic_ros_toys\n')
    environment = dict(os.environ)
    environment['PYTHONPATH'] = os.pathsep.join(
        [str(tmp_path), str(PLUGINS), environment.get('PYTHONPATH', '')]
    )

    done = subprocess.run(
        [sys.executable, '-m', 'pic_ros_tools', 'evaluate', '--robot', 'yumi', '--recording',
         'demo', '--solver', 'recovery_only', '--json'],
        capture_output=True, text=True, env=environment, timeout=300, check=False,
    )

    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)['results']
    assert record['solver'] == 'recovery_only'
