"""
``ros2 launch`` of the installed package, driven by the real Azure Kinect bag.

Each test runs what a ROS user types, from a colcon workspace (``conftest.py``): ``ros2 launch
pic_ros <file> ...`` with ``sim:=true`` (``sim_robot``, the MuJoCo robot, follows the
trajectories and publishes ``joint_states``, closing the loop the trajectory publisher waits for),
and ``ros2 run pic_ros_tools replay`` playing a few seconds of the Azure Kinect bag
(``../shared/data/azure_kinect/body_tracking_ergonomics``) at 4x into ``/body_tracking_data``
(the topic the Azure Kinect driver publishes). A node of the
test's own records every controller's trajectories and ``/diagnostics``. Then the launch gets
SIGINT on its process group, as Ctrl-C in a terminal, and must end with status 0 leaving no
process of its session behind.

The launches that cannot run (unknown robot, ``use_rviz:=true`` without rviz2, a pipeline node
that dies, Gazebo without its packages, ``sim:=true`` without pic_ros_tools) must stop as a
whole: status 1, one message saying why, no process left. With only pic_ros built (a workspace
of its own, the tools' modules made unimportable), ``teleop.launch.py`` runs.

One robot (Baxter, separate processes) is checked fully -- engaged with ``ros2 service call``,
trajectories within the URDF limits on every controller, ``/diagnostics`` of every node, ``ros2
param set`` refused with its reason, the calibration service, disengaging, the emergency stop
with ``ros2 topic pub`` and its reset -- and the other robot / ``single_process`` combinations
(``start_engaged:=true``) and ``multi_robot.launch.py`` (each robot engaged by its own service)
more briefly, to keep the launch tests within a few minutes on two cores. ``ros2 param list``
answers while ``replay`` plays, and two Baxters run side by side in the namespaces the
``robots`` argument gives them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
import re
import socket
import time

from launch_harness import (
    BAG_TOPIC,
    controller_joints,
    DOMAIN_ID,
    Probe,
    ROOT,
    RosProcess,
    STOP_TIMEOUT,
    urdf_limits,
    VENV_BIN,
    wait_for,
    Workspace,
)
import numpy as np
from pic_ros.resources import shipped_robots
from pic_ros_tools.xsens_stream import build_mxtp02_datagrams, t_pose_segments
import pytest

pytestmark = [pytest.mark.launch, pytest.mark.ros]

INPUT_TOPIC = '/body_tracking_data'
"""Where the launches read the tracker (README: ``input_topic:=/body_tracking_data``)."""

BAG = Path('azure_kinect') / 'body_tracking_ergonomics'
START_TIMEOUT = 60.0
"""Longest wait for a launch's nodes to appear in the graph [s] (two cores, up to 10 processes)."""

FIRST_REPORT_TIMEOUT = 300.0
"""
Longest wait for a solver node's first report on /diagnostics [s].

In the first start after an install, each node process compiles the numba kernels it uses
(numba's cache, beside the installed modules, is empty in a fresh colcon workspace): the solver
node alone takes about 25 s of CPU, while the other nodes compile theirs on the same two cores;
on a busy machine that is minutes. Later starts load the cache.
"""

RUN_TIMEOUT = 60.0
"""Longest wait for the replay to end and the trajectories to arrive [s]."""

MIN_TRAJECTORIES = 20
"""Trajectories each controller must receive for a run to count as driven."""

LIMIT_SLACK = 1e-9
"""Rounding allowed on a position limit [rad]."""


def bag_path(shared_data: Path) -> Path:
    """Return the Azure Kinect bag, or skip naming it."""
    path = shared_data / BAG
    if not path.is_dir():
        pytest.skip(f'the Azure Kinect bag is not at {path}')
    return path


def start_replay(
    ros2: Callable[..., RosProcess], bag: Path, start: float, duration: float, rate: float = 4.0
) -> RosProcess:
    """
    Play part of the bag's tracker topic into ``/body_tracking_data``: ``ros2 run ... replay``.

    :param ros2: The ``ros2`` starter.
    :param bag: The bag.
    :param start: Bag time skipped [s].
    :param duration: Bag time played [s].
    :param rate: Speed factor.
    :return: The replay process; it waits for the skeleton node's subscription, then plays.
    """
    return ros2(
        'run', 'pic_ros_tools', 'replay', str(bag), '--topics', BAG_TOPIC,
        '--remap', f'{BAG_TOPIC}:={INPUT_TOPIC}', '--start-offset', str(start),
        '--playback-duration', str(duration), '--rate', str(rate), '--wait-for-subscribers',
        log='replay',
    )


def topics_of(share: Path, robot: str, namespace: str = '') -> dict[str, list[str]]:
    """Return each controller's trajectory topic (absolute) with the arm's joints."""
    return {
        f'{namespace}/{controller}/joint_trajectory': joints
        for controller, joints in controller_joints(share, robot).items()
    }


def wait_for_nodes(launch: RosProcess, probe: Probe, names: Sequence[str]) -> None:
    """
    Wait until the launched nodes are in the graph and every solver has started, or fail.

    A solver node is in the graph before it has built its robot and subscribed (seconds, in the
    first start after an install, while numba compiles the collision kernels); its first report
    on /diagnostics comes once it has, as a user watching ``ros2 topic echo /diagnostics`` sees.
    """
    wait_for(
        lambda: set(names) <= probe.node_names() or not launch.alive(),
        f'the nodes {sorted(names)}', START_TIMEOUT, launch.output(),
    )
    solvers = {f'pic_ros: {name}' for name in names if name.endswith('/solver_node')}
    wait_for(
        lambda: solvers <= set(probe.diagnostic_statuses()) or not launch.alive(),
        f'the first report of {sorted(solvers)} on /diagnostics', FIRST_REPORT_TIMEOUT,
        launch.output(),
    )
    assert launch.alive(), launch.output()


def play_and_collect(
    launch: RosProcess, replay: RosProcess, probe: Probe, topics: Sequence[str]
) -> None:
    """Wait for the replay to end and for every controller to have been driven."""
    status = replay.wait(RUN_TIMEOUT)
    assert status == 0, f'replay: status {status}\n{replay.output()}\n{launch.output()}'
    wait_for(
        lambda: all(probe.counts()[topic] >= MIN_TRAJECTORIES for topic in topics),
        f'{MIN_TRAJECTORIES} trajectories on each of {list(topics)}: got {probe.counts()}',
        RUN_TIMEOUT, launch.output(),
    )
    assert launch.alive(), launch.output()


def check_trajectories(
    probe: Probe, share: Path, robot: str, namespace: str = ''
) -> None:
    """
    Assert that each controller of the robot got trajectories of its arm, within the URDF limits.

    Every point's positions lie within the URDF position limits and its velocities within the
    URDF velocity limits; and the arm moved (the commands follow the person, not a fixed pose).
    """
    limits = urdf_limits(share, robot)
    for topic, joints in topics_of(share, robot, namespace).items():
        messages = probe.trajectories[topic]
        assert len(messages) >= MIN_TRAJECTORIES, f'{topic}: {len(messages)} trajectories'
        spans = {joint: [float('inf'), float('-inf')] for joint in joints}
        for message in messages:
            assert list(message.joint_names) == joints, topic
            assert message.points, f'{topic}: a trajectory without points'
            for point in message.points:
                assert len(point.positions) == len(joints), topic
                for joint, position, velocity in zip(
                    joints, point.positions, point.velocities or [0.0] * len(joints),
                    strict=True,
                ):
                    lower, upper, speed = limits[joint]
                    assert lower - LIMIT_SLACK <= position <= upper + LIMIT_SLACK, (
                        f'{topic}: {joint} = {position} outside [{lower}, {upper}]'
                    )
                    assert abs(velocity) <= speed * (1 + 1e-6), (
                        f'{topic}: {joint} velocity {velocity} over the limit {speed}'
                    )
                    spans[joint][0] = min(spans[joint][0], position)
                    spans[joint][1] = max(spans[joint][1], position)
        moved = max(high - low for low, high in spans.values())
        assert moved > 0.05, f'{topic}: the arm did not follow the person (span {moved:.3f} rad)'


def stop_cleanly(launch: RosProcess) -> str:
    """
    Send SIGINT to the launch's process group (Ctrl-C) and check the end.

    :return: The launch's output.
    """
    status = launch.stop(timeout=STOP_TIMEOUT)
    left = launch.leftovers()
    output = launch.output()
    assert not left, f'processes left running after the launch ended: {left}\n{output}'
    assert status == 0, f'ros2 launch ended with {status}\n{output}'
    assert 'Caught exception' not in output, output
    return output


def check_stopped_as_a_whole(launch: RosProcess, message: str, timeout: float = 30.0) -> str:
    """
    Assert that a launch ends by itself with status 1, saying ``message``, leaving nothing.

    :param launch: The launch.
    :param message: Regular expression the launch's error line must match.
    :param timeout: Longest wait for the end [s].
    :return: The output.
    """
    status = launch.wait(timeout)
    output = launch.output()
    left = launch.leftovers()
    assert status is not None, f'the launch still runs after {timeout} s\n{output}'
    assert not left, f'processes left running after the launch ended: {left}\n{output}'
    assert status == 1, f'ros2 launch ended with {status}\n{output}'
    errors = [line for line in output.splitlines() if 'Caught exception in launch' in line]
    assert len(errors) == 1, output
    assert re.search(message, errors[0]), errors[0]
    return output


# The pipeline, fully: Baxter as three processes --------------------------------------------


ROS2CLI_NEEDS_NEWER_RCLPY = "'NoneType' object does not support the context manager protocol"
"""How ``ros2 service call`` of the shared tools fails on Jazzy's rclpy (nothing to do with us)."""

ENGAGE = '/trajectory_publisher/engage'
DISENGAGE = '/trajectory_publisher/disengage'
RESET_ESTOP = '/trajectory_publisher/reset_estop'


def service_call(service: str) -> list[str]:
    """Return the ``ros2 service call`` of a Trigger service (the README's line)."""
    return ['service', 'call', service, 'std_srvs/srv/Trigger']


def estop(value: bool) -> list[str]:
    """
    Return the README's ``ros2 topic pub --once /estop`` line for a value.

    ``--keep-alive 1``: the publisher stays a second after publishing, so that a loaded machine
    delivers the reliable message before it is gone (0.1 s by default).
    """
    return ['topic', 'pub', '--once', '--keep-alive', '1', '/estop', 'std_msgs/msg/Bool',
            f'{{data: {str(value).lower()}}}']


ECHO_ENGAGED = [
    'topic', 'echo', '--no-daemon', '--timeout', '30', '--once', '--qos-reliability', 'reliable',
    '--qos-durability', 'transient_local', '/engaged', 'std_msgs/msg/Bool',
]
"""
The README's ``ros2 topic echo`` of the latched ``/engaged``, with no daemon (it would outlive us).

The QoS and the type are given: left to the CLI, both are read from the graph it has seen after
``--spin-time``, and on a loaded host it may have heard a subscriber of ``/engaged`` but not yet
the publisher, then subscribes volatile and never hears the latched value. ``--timeout`` bounds
the wait.
"""


def answered(output: str, probe: Probe, service: str) -> str:
    """
    Return a ``ros2 service call``'s output, or the probe's own call where the CLI cannot run.

    The shared ros2cli (built from rolling) calls ``with rclpy.init()``, which Jazzy's rclpy 7
    does not offer: the CLI fails before calling, and the node is called directly instead.
    """
    return probe.call_trigger(service) if ROS2CLI_NEEDS_NEWER_RCLPY in output else output


def published(output: str, probe: Probe, value: bool) -> str:
    """Return a ``ros2 topic pub``'s output, or publish with the probe where the CLI cannot run."""
    if ROS2CLI_NEEDS_NEWER_RCLPY in output:
        return probe.publish_bool('/estop', value)
    return output


def echoed(output: str, probe: Probe) -> str:
    """Return a ``ros2 topic echo``'s output, or read with the probe where the CLI cannot run."""
    return probe.latched_bool('/engaged') if ROS2CLI_NEEDS_NEWER_RCLPY in output else output


def check_visualization(
    skeletons: Callable[[], list], overlays: list, descriptions: list, robot,
    engaged_colour: tuple,
) -> None:
    """
    Check what RViz would show of an engaged run: the model and the person over the robot.

    The overlays are read first: the solver's overlay of a skeleton and the skeleton itself come
    from two processes, so the probe may hear the overlay first; the skeletons heard are read
    until they hold every overlay's stamp (bounded wait).

    :param skeletons: Returns the ``skeleton`` messages heard so far.
    :param overlays: The ``placed_skeleton_markers`` arrays heard.
    :param descriptions: The ``robot_description`` strings heard.
    :param robot: The robot.
    :param engaged_colour: The arms' colour while the robot follows.
    """
    urdf = robot.urdf_file.read_text(encoding='utf-8')
    assert descriptions and all(message.data == urdf for message in descriptions)
    assert overlays, 'no placed_skeleton_markers'
    placed = {
        (m.header.stamp.sec, m.header.stamp.nanosec) for array in overlays for m in array.markers
    }

    def heard() -> set:
        return {(m.header.stamp.sec, m.header.stamp.nanosec) for m in skeletons()}

    wait_for(lambda: placed <= heard(), 'the skeleton of every overlay heard', 30.0)
    stamps = heard()
    for array in overlays:
        headers = {(m.header.frame_id, m.header.stamp.sec, m.header.stamp.nanosec)
                   for m in array.markers}
        assert len(headers) == 1, headers
        ((frame_id, sec, nanosec),) = headers
        assert frame_id == robot.base_frame and (sec, nanosec) in stamps
    assert any(len(array.markers[0].points) == 3 * len(robot.arms) for array in overlays)
    arms = overlays[-1].markers[0]  # heard well after the engage
    colour = (arms.color.r, arms.color.g, arms.color.b, arms.color.a)
    assert colour == pytest.approx(engaged_colour)


def test_teleop_launch_drives_baxter_from_the_azure_kinect_bag(
    ros2, ros2_commands, probe, workspace: Workspace, shared_data
):
    """
    The README's first command, with sim:=true and the bag replayed, drives both of Baxter's arms.

    The robot starts disengaged; ``ros2 service call /trajectory_publisher/engage`` engages it.
    Trajectories reach both controller topics within the URDF's position and velocity limits,
    every node reports on /diagnostics (the skeleton node having taken the bag's frames), an
    invalid ``ros2 param set`` is refused with its reason (the value stays) while a valid one is
    taken, the calibration service answers (no calibration pose in this recording),
    ``~/disengage`` answers, ``ros2 topic pub --once /estop`` latches a stop that refuses
    ``~/engage`` and, while the input is true, ``~/reset_estop``; released, the reset is taken.
    ``ros2 topic echo --once /engaged`` reads the latched state. Ctrl-C ends everything with
    status 0. What RViz would show: sim_robot's latched ``robot_description`` (Baxter's URDF)
    and the person over the robot on ``placed_skeleton_markers``, in Baxter's base frame, each
    array stamped with a skeleton's stamp, the arms green while engaged.
    """
    from geometry_msgs.msg import PoseArray
    from pic_ros.correspondence.overlay import FOLLOW_COLOURS, FollowState
    from pic_ros.robot import load_robot
    from pic_ros.ros.qos import LATCHED
    from std_msgs.msg import String
    from visualization_msgs.msg import MarkerArray

    bag = bag_path(shared_data)
    topics = topics_of(workspace.share, 'baxter')
    watcher = probe(list(topics))
    skeletons = watcher.watch('/skeleton', PoseArray)
    overlays = watcher.watch('/placed_skeleton_markers', MarkerArray)
    descriptions = watcher.watch('/robot_description', String, LATCHED)
    launch = ros2(
        'launch', 'pic_ros', 'teleop.launch.py', 'robot:=baxter', 'source:=azure_kinect',
        f'input_topic:={INPUT_TOPIC}', 'sim:=true', log='launch',
    )
    wait_for_nodes(
        launch, watcher, ['/skeleton_node', '/solver_node', '/trajectory_publisher', '/sim_robot']
    )
    [engaged] = ros2_commands(service_call(ENGAGE))
    engaged = answered(engaged, watcher, ENGAGE)
    assert 'success=True' in engaged and 'engaged by service' in engaged, engaged
    replay = start_replay(ros2, bag, start=2.0, duration=12.0)
    play_and_collect(launch, replay, watcher, list(topics))
    check_trajectories(watcher, workspace.share, 'baxter')
    check_visualization(
        lambda: watcher.snapshot(skeletons), watcher.snapshot(overlays),
        watcher.snapshot(descriptions), load_robot('baxter'), FOLLOW_COLOURS[FollowState.ENGAGED],
    )

    # What a user types (--no-daemon: a ros2 daemon would outlive the test), side by side.
    refused, taken, answer, disengaged = ros2_commands(
        ['param', 'set', '--no-daemon', '--timeout', '10', '/solver_node', 'eta', '7'],
        ['param', 'set', '--no-daemon', '--timeout', '10', '/solver_node', 'solver', 'pics'],
        ['service', 'call', '/solver_node/calibrate', 'std_srvs/srv/Trigger'],
        service_call(DISENGAGE),
    )
    assert 'Setting parameter failed' in refused, refused
    assert re.search(r'eta .*(out of range|must be)', refused), refused
    assert 'Set parameter successful' in taken, taken
    answer = answered(answer, watcher, '/solver_node/calibrate')
    assert 'success=False' in answer and 'message=' in answer, answer
    disengaged = answered(disengaged, watcher, DISENGAGE)
    assert 'success=True' in disengaged and 'disengaged by service' in disengaged, disengaged

    # The emergency stop: latched by a true input, reset only once the input is false.
    stop, state = ros2_commands(estop(True), ECHO_ENGAGED)
    stop = published(stop, watcher, True)
    assert 'Bool(data=True)' in stop or stop == 'data: true', stop
    assert 'data: false' in echoed(state, watcher), state
    # the node has taken the stop (the pub command returns once sent, not once received)
    wait_for(
        lambda: watcher.diagnostic_statuses().get(
            'pic_ros: /trajectory_publisher engagement', {}
        ).get('state') == 'estopped',
        'the emergency stop on /diagnostics', 30.0, launch.output(),
    )
    refused_engage, refused_reset = ros2_commands(service_call(ENGAGE), service_call(RESET_ESTOP))
    refused_engage = answered(refused_engage, watcher, ENGAGE)
    refused_reset = answered(refused_reset, watcher, RESET_ESTOP)
    assert 'success=False' in refused_engage, refused_engage
    assert 'the emergency stop is latched' in refused_engage, refused_engage
    assert 'success=False' in refused_reset, refused_reset
    assert 'input is still set' in refused_reset, refused_reset
    [release] = ros2_commands(estop(False))
    release = published(release, watcher, False)
    assert 'Bool(data=False)' in release or release == 'data: false', release
    wait_for(
        lambda: watcher.diagnostic_statuses().get(
            'pic_ros: /trajectory_publisher engagement', {}
        ).get('estop_input') == 'False',
        'the released emergency stop input on /diagnostics', 30.0, launch.output(),
    )
    [reset] = ros2_commands(service_call(RESET_ESTOP))
    reset = answered(reset, watcher, RESET_ESTOP)
    assert 'success=True' in reset and 'emergency stop reset by service' in reset, reset
    assert watcher.get_parameter('/solver_node', 'eta') == 1
    assert watcher.get_parameter('/solver_node', 'solver') == 'pics'
    assert watcher.set_parameter('/solver_node', 'solver', 'foo') == (
        False, "solver must be one of 'analytic', 'fabrik', 'pic', 'pics', got 'foo'"
    )

    wait_for(
        lambda: {
            'pic_ros: /skeleton_node', 'pic_ros: /solver_node',
            'pic_ros: /trajectory_publisher left', 'pic_ros: /trajectory_publisher right',
            'pic_ros: /trajectory_publisher engagement', 'pic_ros: /sim_robot simulation',
        } <= set(watcher.diagnostic_statuses()),
        f'the statuses of every node on /diagnostics: got {sorted(watcher.diagnostic_statuses())}',
        10.0, launch.output(),
    )
    skeleton = watcher.diagnostic_statuses()['pic_ros: /skeleton_node']
    assert int(skeleton['frames_in']) > 100 and int(skeleton['skeletons_out']) > 100, skeleton
    wait_for(
        lambda: watcher.diagnostic_statuses()['pic_ros: /trajectory_publisher engagement'][
            'reason'].startswith('emergency stop reset by service'),
        'the reset on /diagnostics', 10.0, launch.output(),
    )
    stop_cleanly(launch)


# Every robot, one process and three -----------------------------------------------------------


@pytest.mark.parametrize(
    'robot, single_process',
    [('baxter', 'true'), ('yumi', 'false'), ('yumi', 'true'), ('tiago', 'false'),
     ('tiago', 'true'), ('nao', 'false')],
)
def test_teleop_launch_drives_every_controller_of_each_robot(
    robot, single_process, ros2, probe, workspace: Workspace, shared_data
):
    """
    Each robot, in one process or three, turns a few seconds of the bag into trajectories.

    ``start_engaged:=true`` (the README's sim line) reaches trajectory_publisher in either form.
    """
    bag = bag_path(shared_data)
    topics = topics_of(workspace.share, robot)
    watcher = probe(list(topics))
    launch = ros2(
        'launch', 'pic_ros', 'teleop.launch.py', f'robot:={robot}',
        f'single_process:={single_process}', f'input_topic:={INPUT_TOPIC}', 'sim:=true',
        'start_engaged:=true', log='launch',
    )
    nodes = ['/skeleton_node', '/solver_node', '/trajectory_publisher', '/sim_robot']
    wait_for_nodes(launch, watcher, nodes)
    replay = start_replay(ros2, bag, start=2.0, duration=8.0)
    play_and_collect(launch, replay, watcher, list(topics))
    check_trajectories(watcher, workspace.share, robot)
    output = stop_cleanly(launch)
    executables = ['teleop'] if single_process == 'true' else nodes
    for name in [*executables, 'sim_robot']:
        assert re.search(rf'\[{name.strip("/")}-\d+\]: process started', output), name


def test_teleop_launch_takes_the_xsens_stream_over_udp(ros2, probe, workspace: Workspace):
    """
    The README's Xsens command: MXTP02 datagrams sent to the bound UDP port drive TIAGo's arm.

    ``udp_port`` is given besides the README's arguments so that runs in parallel do not meet;
    the robot is engaged by its service, as an operator does.
    """
    port = 31000 + DOMAIN_ID
    topics = topics_of(workspace.share, 'tiago')
    watcher = probe(list(topics))
    launch = ros2(
        'launch', 'pic_ros', 'teleop.launch.py', 'robot:=tiago', 'source:=xsens_mvn',
        'udp_address:=0.0.0.0', f'udp_port:={port}', 'sim:=true', log='launch',
    )
    wait_for_nodes(
        launch, watcher, ['/skeleton_node', '/solver_node', '/trajectory_publisher', '/sim_robot']
    )
    assert 'success=True' in watcher.call_trigger(ENGAGE)
    positions, quaternions = t_pose_segments()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for index in range(360):  # 3 s at 120 Hz: the arms rise and fall
            moved = positions.copy()
            moved[:, 2] += 0.02 * np.sin(index / 30.0)
            for datagram in build_mxtp02_datagrams(index + 1, index * 8, moved, quaternions):
                sender.sendto(datagram, ('127.0.0.1', port))
            time.sleep(1.0 / 120.0)
    wait_for(
        lambda: all(watcher.counts()[topic] >= MIN_TRAJECTORIES for topic in topics),
        f'{MIN_TRAJECTORIES} trajectories on {list(topics)}: got {watcher.counts()}',
        RUN_TIMEOUT, launch.output(),
    )
    check_trajectories(watcher, workspace.share, 'tiago')
    stop_cleanly(launch)


def test_multi_robot_launch_drives_every_controller_of_every_robot(
    ros2, probe, workspace: Workspace, shared_data
):
    """
    One skeleton node feeds Baxter, YuMi and TIAGo, each in its namespace with its sim.

    Each robot is engaged by its own service (``/<robot>/trajectory_publisher/engage``).
    """
    bag = bag_path(shared_data)
    robots = ('baxter', 'yumi', 'tiago')
    topics = {
        topic: joints for robot in robots
        for topic, joints in topics_of(workspace.share, robot, f'/{robot}').items()
    }
    watcher = probe(list(topics))
    launch = ros2(
        'launch', 'pic_ros', 'multi_robot.launch.py', 'source:=azure_kinect',
        f'input_topic:={INPUT_TOPIC}', 'sim:=true', log='launch',
    )
    nodes = ['/skeleton_node'] + [
        f'/{robot}/{node}' for robot in robots
        for node in ('solver_node', 'trajectory_publisher', 'sim_robot')
    ]
    wait_for_nodes(launch, watcher, nodes)
    for robot in robots:
        answer = watcher.call_trigger(f'/{robot}{ENGAGE}')
        assert answer == "success=True message='engaged by service'", answer
    replay = start_replay(ros2, bag, start=2.0, duration=8.0)
    play_and_collect(launch, replay, watcher, list(topics))
    for robot in robots:
        check_trajectories(watcher, workspace.share, robot, f'/{robot}')
    wait_for(
        lambda: {f'pic_ros: /{robot}/solver_node' for robot in robots}
        <= set(watcher.diagnostic_statuses()),
        'the solver statuses of every robot on /diagnostics', 10.0, launch.output(),
    )
    stop_cleanly(launch)


def test_ros2_param_list_answers_while_replay_plays(ros2, ros2_commands, probe):
    """
    ``ros2 param list /replay`` and ``ros2 param get`` answer while a looping replay plays.

    The replay of the shipped demo bag runs as a user starts it (``ros2 run``); the ``ros2``
    commands' own timeouts bound the waits.
    """
    bag = ROOT / 'pic_ros_tools' / 'demo' / 'synthetic1_bag'
    watcher = probe([])
    replay = ros2('run', 'pic_ros_tools', 'replay', str(bag), '--loop', log='replay')
    wait_for_nodes(replay, watcher, ['/replay'])

    listed, got = ros2_commands(
        ['param', 'list', '--no-daemon', '--spin-time', '10', '/replay'],
        ['param', 'get', '--no-daemon', '--spin-time', '10', '/replay', 'use_sim_time'],
    )

    assert 'use_sim_time' in listed.split(), f'{listed}\n{replay.output()}'
    assert 'Boolean value is: False' in got, f'{got}\n{replay.output()}'
    assert replay.alive(), replay.output()
    status = replay.stop(timeout=STOP_TIMEOUT)
    assert status == 0, replay.output()


def test_two_robots_of_one_type_run_side_by_side_in_the_namespaces_given(ros2, probe):
    """
    ``robots:=baxter:left_cell,baxter:right_cell``: two Baxters, each in its own namespace.

    Both pipelines come up beside the one skeleton node and answer their parameter services
    under their own names, each with Baxter's arms.
    """
    from pic_ros.robot import load_robot

    cells = ('/left_cell', '/right_cell')
    watcher = probe([])
    launch = ros2(
        'launch', 'pic_ros', 'multi_robot.launch.py', 'robots:=baxter:left_cell,baxter:right_cell',
        log='launch',
    )
    nodes = ['/skeleton_node'] + [
        f'{cell}/{node}' for cell in cells for node in ('solver_node', 'trajectory_publisher')
    ]
    wait_for_nodes(launch, watcher, nodes)
    for cell in cells:
        assert watcher.get_parameter(f'{cell}/solver_node', 'robot') == 'baxter'
        assert watcher.get_parameter(f'{cell}/trajectory_publisher', 'robot') == 'baxter'
        assert list(watcher.get_parameter(f'{cell}/solver_node', 'arms')) == list(
            load_robot('baxter').arms
        )
    stop_cleanly(launch)


# Launches that cannot run stop as a whole ------------------------------------------------------


@pytest.mark.parametrize(
    'arguments, message',
    [
        (['teleop.launch.py', 'robot:=foo'], r"robot:=foo: no robot file for 'foo'"),
        (['teleop.launch.py', 'robot:=foo', 'single_process:=true'],
         r"robot:=foo: no robot file for 'foo'"),
        (['multi_robot.launch.py', 'robots:=baxter,foo'],
         rf"robots: 'foo' is not one of {', '.join(shipped_robots())}"),
        (['multi_robot.launch.py', 'robots:=baxter:cell,yumi:cell'],
         r'robots: the namespace /cell is given twice'),
        (['teleop.launch.py', 'eta:=7'], r'eta'),
    ],
    ids=['teleop-robot-foo', 'teleop-single-process-robot-foo', 'multi-robot-foo',
         'multi-robot-one-namespace-twice', 'teleop-eta-7'],
)
def test_launch_with_a_wrong_argument_starts_nothing(arguments, message, ros2):
    """A wrong argument ends the launch with status 1 and one message, before any node starts."""
    launch = ros2('launch', 'pic_ros', *arguments, log='launch')
    output = check_stopped_as_a_whole(launch, message)
    assert 'process started' not in output, output


def test_use_rviz_without_rviz2_starts_nothing(ros2):
    """
    use_rviz:=true where rviz2 is not installed: one message naming rviz2, nothing started.

    (It used to start the three nodes, fail on rviz2 and exit, leaving them running.)
    """
    launch = ros2('launch', 'pic_ros', 'teleop.launch.py', 'use_rviz:=true', log='launch')
    output = check_stopped_as_a_whole(launch, r'use_rviz:=true needs .*: rviz2 ')
    assert 'process started' not in output, output


def test_a_pipeline_node_that_dies_stops_the_whole_launch(ros2, tmp_path):
    """
    A node that exits while the launch runs takes the launch down, with status 1 and its name.

    The parameter file gives solver_node an eta it refuses, so solver_node exits at start; the
    skeleton node and the trajectory publisher must not keep running without it.
    """
    params = tmp_path / 'bad_params.yaml'
    params.write_text(
        '/**/solver_node:\n  ros__parameters:\n    eta: 7\n', encoding='utf-8'
    )
    launch = ros2(
        'launch', 'pic_ros', 'teleop.launch.py', f'params_file:={params}', log='launch'
    )
    output = check_stopped_as_a_whole(
        launch, r'solver_node exited with code 1: the pipeline is incomplete; stopping the launch'
    )
    assert 'process started' in output, output


def _fake_package(prefix: Path, package: str, executable: str) -> Path:
    """
    Install a stand-in ROS package whose executable only writes a mark and waits (bounded).

    :return: The mark file, which exists once the executable has started.
    """
    (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True)
    (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / package).touch()
    (prefix / 'share' / package).mkdir(parents=True)
    mark = prefix / f'{executable}.started'
    script = prefix / 'lib' / package / executable
    script.parent.mkdir(parents=True)
    script.write_text(f'#!/bin/sh\ntouch {mark}\nexec sleep 60\n', encoding='utf-8')
    script.chmod(0o755)
    return mark


@pytest.mark.parametrize('with_robot_state_publisher', [False, True],
                         ids=['nothing-installed', 'robot-state-publisher-installed'])
def test_gazebo_launch_without_gazebo_names_every_missing_package(
    with_robot_state_publisher, ros2, workspace: Workspace, shared_data, tmp_path
):
    """
    The README's Gazebo command without Gazebo: status 1, one message naming what is missing.

    Nothing is started: with robot_state_publisher installed (a stand-in here) it used to be, and
    to keep running after the launch had failed on ros_gz_sim.
    """
    bag = bag_path(shared_data)
    missing = ['ros_gz_sim', 'ros_gz_bridge', 'controller_manager', 'joint_state_broadcaster',
               'joint_trajectory_controller', 'gz_ros2_control']
    arguments = ['launch', 'pic_ros', 'gazebo.launch.py', 'robot:=baxter', f'replay_bag:={bag}']
    mark = None
    if with_robot_state_publisher:
        mark = _fake_package(tmp_path / 'fake', 'robot_state_publisher', 'robot_state_publisher')
        launch = ros2(*arguments, log='launch', prefix=tmp_path / 'fake')
    else:
        missing.insert(0, 'robot_state_publisher')
        launch = ros2(*arguments, log='launch')
    output = check_stopped_as_a_whole(
        launch, r'gazebo.launch.py \(distro \w+\) needs ROS packages that are not installed: '
        + re.escape(', '.join(missing)) + r' \(searched AMENT_PREFIX_PATH'
    )
    assert 'process started' not in output, output
    if mark is not None:
        assert not mark.exists(), 'robot_state_publisher was started'


# Only pic_ros installed: the run-time alone, as on a robot PC ----------------------------------


TOOLS_MODULES = ('pic_ros_tools', 'mujoco', 'rosbags', 'matplotlib', 'PIL')
"""What the run-time must never import: the tools package and what only the tools need."""


@pytest.fixture(scope='module')
def runtime_workspace(ros_tools, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """Build only pic_ros with ``colcon build`` (no pic_ros_tools in the workspace)."""
    del ros_tools  # installed (or the test skipped, naming what is missing)
    built = Workspace(tmp_path_factory.mktemp('runtime_ws'), packages=('pic_ros',))
    built.build()
    assert not (built.install / 'pic_ros_tools').exists()
    built.warm_up()
    return built


@pytest.fixture
def runtime_ros2(
    runtime_workspace: Workspace, tmp_path: Path
) -> Iterator[Callable[..., RosProcess]]:
    """
    Return a starter of ``ros2 ...`` in the pic_ros-only workspace; stopped after the test.

    The test venv holds pic_ros_tools and the tools' libraries too: a folder first on
    ``PYTHONPATH`` shadows each of :data:`TOOLS_MODULES` with a module that fails to import, so
    that any process of the launch that imported one of them would fail, as it would where they
    are not installed.
    """
    blocked = tmp_path / 'not_installed'
    blocked.mkdir()
    for name in TOOLS_MODULES:
        (blocked / f'{name}.py').write_text(
            f'raise ImportError({name!r} + " is not installed (only pic_ros is)")\n',
            encoding='utf-8',
        )
    environment = runtime_workspace.ros_environment(tmp_path / 'ros_home')
    environment['PYTHONPATH'] = f'{blocked}:{environment.get("PYTHONPATH", "")}'
    started: list[RosProcess] = []

    def start(*argv: str, log: str) -> RosProcess:
        process = RosProcess(
            [str(VENV_BIN / 'ros2'), *argv], environment, tmp_path / f'{log}.log', cwd=tmp_path
        )
        started.append(process)
        return process

    yield start
    for process in reversed(started):
        process.stop(timeout=STOP_TIMEOUT)
        process.leftovers()


def test_teleop_launch_runs_with_only_pic_ros_installed(runtime_ros2, probe):
    """
    ``ros2 launch pic_ros teleop.launch.py`` with pic_ros alone: the three nodes run, and stop.

    None of them imports pic_ros_tools, mujoco, rosbags, matplotlib or PIL (each would fail to
    import here); Ctrl-C ends the launch with status 0. robot_state_publisher (not on PyPI) is
    named in the log as missing.
    """
    watcher = probe([])
    launch = runtime_ros2('launch', 'pic_ros', 'teleop.launch.py', 'robot:=yumi', log='launch')
    wait_for_nodes(launch, watcher, ['/skeleton_node', '/solver_node', '/trajectory_publisher'])
    output = stop_cleanly(launch)
    assert 'is not installed (only pic_ros is)' not in output, output
    # no robot_state_publisher in the venv: said once, and the pipeline runs without TF
    assert output.count('robot_state_publisher is not installed') == 1, output


def test_sim_without_pic_ros_tools_says_to_install_it_and_starts_nothing(runtime_ros2):
    """``sim:=true`` with pic_ros alone: status 1, one message saying to install pic_ros_tools."""
    launch = runtime_ros2(
        'launch', 'pic_ros', 'teleop.launch.py', 'robot:=yumi', 'sim:=true', log='launch'
    )
    output = check_stopped_as_a_whole(
        launch, r'sim:=true .*needs ROS packages that are not installed: pic_ros_tools .*'
        r'Install pic_ros_tools beside pic_ros'
    )
    assert 'process started' not in output, output
