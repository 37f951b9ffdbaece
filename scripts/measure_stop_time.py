"""
Measure how long each node executable takes to exit after a stop signal (a figure, not a test).

Every executable is started as a process of its own on loopback (the run's ROS domain, a
namespace of its own); once it has logged that it is up, one SIGINT (or SIGTERM) is sent and the
time until the process has exited is taken with the monotonic clock. Each executable is run
``--repeats`` times; the median and the largest time are printed per executable, with the exit
status seen. Run it idle and again with busy processes beside it to see the time under load::

    .venv/bin/python scripts/measure_stop_time.py --repeats 5 --signal SIGINT
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from pic_ros_tools.ros.processes import loopback_environment

ROOT = Path(__file__).resolve().parents[1]
DEMO_BAG = ROOT / 'pic_ros_tools' / 'demo' / 'synthetic1_bag'
NAMESPACE = '/stop_time_probe'
ROS_ARGS = ('--ros-args', '-r', f'__ns:={NAMESPACE}')
START_TIMEOUT = 120.0
"""Longest wait for an executable to log that it is up [s]."""
EXIT_TIMEOUT = 30.0
"""Longest wait for an executable to exit once signalled [s] (then it is killed)."""


def _python_m(*arguments: str) -> list[str]:
    return [sys.executable, '-m', *arguments]


RUNS = {
    'skeleton_node': (_python_m('pic_ros.ros.skeleton_node', *ROS_ARGS), r'skeleton_node\]: '),
    'solver_node': (
        _python_m('pic_ros.ros.solver_node', '--robot', 'yumi', *ROS_ARGS),
        r'solver_node\]: yumi: solving',
    ),
    'trajectory_publisher': (
        _python_m('pic_ros.ros.trajectory_publisher_node', '--robot', 'yumi', *ROS_ARGS),
        r'trajectory_publisher\]: yumi: streaming',
    ),
    'teleop': (
        _python_m('pic_ros', 'teleop', '--robot', 'tiago', *ROS_ARGS),
        r'trajectory_publisher\]: tiago: streaming',
    ),
    'sim_robot': (
        _python_m('pic_ros_tools.ros.sim_robot_node', '--robot', 'tiago', *ROS_ARGS),
        r'sim_robot\]: tiago: following',
    ),
    'replay': (
        _python_m('pic_ros_tools.ros.replay_node', str(DEMO_BAG), '--loop', *ROS_ARGS),
        r'replay\]: playing',
    ),
    'teleop_streaming': (
        _python_m(
            'pic_ros', 'teleop', '--robot', 'baxter', '--source', 'xsens_mvn', '--engaged',
            '--param', 'trajectory_publisher.wait_for_joint_states=false',
            '--param', 'skeleton_node.udp_port={port}', *ROS_ARGS,
        ),
        r'trajectory_publisher\]: baxter: streaming',
    ),
}
"""
How to run each executable, and the pattern of its log line saying it is up.

``{port}`` in a command line is a free UDP port to which 240 Hz Xsens samples are streamed from
before the start until the exit (the whole pipeline busy when the signal arrives).
"""

STREAM_RATE = 240.0
"""Rate of the streamed Xsens samples [Hz]."""


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(('127.0.0.1', 0))
        return int(probe.getsockname()[1])


def _stream(port: int, stop: threading.Event) -> None:
    from pic_ros_tools.ros.latency_bench import WavingXsens

    person = WavingXsens(STREAM_RATE)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        index = 0
        while not stop.wait(1.0 / STREAM_RATE):
            sender.sendto(person.datagram(index), ('127.0.0.1', port))
            index += 1


def measure_once(argv: list[str], ready: str, number: int, log_dir: Path) -> tuple[float, int]:
    """
    Start one executable, signal it once it is up, and time its exit.

    :param argv: Its command line.
    :param ready: Pattern of its start-up log line (stderr).
    :param number: The signal sent.
    :param log_dir: Where its output goes.
    :return: Seconds from the signal to the exit, and the exit status (-9: killed at the bound).
    """
    err_path = log_dir / 'stderr.txt'
    stop = threading.Event()
    streamer = None
    if any('{port}' in item for item in argv):
        port = _free_udp_port()
        argv = [item.replace('{port}', str(port)) for item in argv]
        streamer = threading.Thread(target=_stream, args=(port, stop), daemon=True)
        streamer.start()
    environment = loopback_environment(extra={'MUJOCO_GL': 'egl'})
    with (log_dir / 'stdout.txt').open('wb') as out, err_path.open('wb') as err:
        process = subprocess.Popen(
            argv, env=environment, cwd=ROOT, stdout=out, stderr=err, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not re.search(ready, err_path.read_text(errors='replace')):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f'{argv} did not start:\n{err_path.read_text()[-2000:]}')
            time.sleep(0.05)
        time.sleep(1.0)  # running, not starting
        began = time.monotonic()
        os.kill(process.pid, number)
        try:
            status = process.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            status = -9
        return time.monotonic() - began, status
    finally:
        stop.set()
        if streamer is not None:
            streamer.join(timeout=EXIT_TIMEOUT)
        if process.poll() is None:
            process.kill()
            process.wait(timeout=EXIT_TIMEOUT)


def main() -> int:
    """Measure and print the exit times; return 1 if an executable did not exit cleanly."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--signal', choices=('SIGINT', 'SIGTERM'), default='SIGINT')
    parser.add_argument('names', nargs='*', choices=[[], *RUNS], default=[])
    args = parser.parse_args()
    number = getattr(signal, args.signal)
    failed = False
    for name in args.names or RUNS:
        argv, ready = RUNS[name]
        times, statuses = [], set()
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as directory:
                seconds, status = measure_once(argv, ready, number, Path(directory))
            times.append(seconds)
            statuses.add(status)
        failed = failed or statuses != {0}
        print(
            f'{name:22s} {args.signal}: median {statistics.median(times):.3f} s, '
            f'max {max(times):.3f} s over {len(times)} (exit status {sorted(statuses)})',
            flush=True,
        )
    return 1 if failed else 0


if __name__ == '__main__':
    raise SystemExit(main())
