"""
The launch tests' tools: a colcon workspace of the package, ROS processes, a DDS probe.

Everything runs as a user would run it: ``colcon build`` into a workspace of the test's own,
``source install/setup.bash`` (over ``AMENT_PREFIX_PATH`` = the venv, which holds the ROS
packages of the wheels), then ``ros2 launch`` / ``ros2 run`` / ``ros2 param`` as separate
processes. Each process runs in a session of its own and is stopped by its process group;
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` keeps DDS on loopback and ``ROS_DOMAIN_ID`` is the
exported one, else one of 215..220 (outside the ranges the other tests pick, and safe for Fast
DDS's ports). ``ROS_HOME`` and ``TMPDIR`` point into the test's temporary directory, so logs and
launch_ros's parameter files stay there. Every wait is bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import importlib.util
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time
from typing import Any
from xml.etree import ElementTree

from pic_ros_tools.ros.processes import ManagedProcess, wait_until
from pic_ros_tools.ros.service_call import ask
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROS_TOOLS = Path(os.environ.get('PIC_ROS_ROS_TOOLS', ROOT.parent / 'shared' / 'ros-tools'))
VENV = Path(sys.prefix)
VENV_BIN = Path(sys.executable).parent
PACKAGE = 'pic_ros'
TOOLS_PACKAGE = 'pic_ros_tools'
BAG_TOPIC = '/kinect2/body_tracking_data'

# Read before test/ros/conftest.py (imported after this one) sets a domain of its own.
_EXPORTED_DOMAIN = os.environ.get('ROS_DOMAIN_ID', '').strip()
DOMAIN_ID = int(_EXPORTED_DOMAIN) if _EXPORTED_DOMAIN.isdigit() else 215 + os.getpid() % 6
"""ROS domain of every launch test (they run one after the other and leave nothing running)."""

COMMAND_TIMEOUT = 60.0
"""Longest run of one short command (colcon build, ros2 param, --show-args) [s]."""

WARM_UP_TIMEOUT = 600.0
"""Longest compile of the package's numba kernels in a fresh workspace (:meth:`Workspace.warm_up`)
[s]: a bound for a busy host (about 90 s of CPU on these machines), never a figure."""

STOP_TIMEOUT = 60.0
"""
Longest wait for a launch to stop after SIGINT (launch escalates to SIGTERM after 5 s) [s].

A bound for a busy host, never a figure: the wait ends when the launch has exited.
"""


def missing_tools() -> list[str]:
    """Return what the launch tests need that is not installed in this interpreter's venv."""
    missing = [
        f'{name} ({VENV_BIN / name})' for name in ('ros2', 'colcon')
        if not (VENV_BIN / name).exists()
    ]
    missing += [
        module for module in ('launch_ros.actions', 'ros2cli', 'ros2launch', 'psutil')
        if importlib.util.find_spec(module.split('.')[0]) is None
    ]
    return missing


def base_environment() -> dict[str, str]:
    """Return this process's environment with the venv first on PATH and as the ament prefix."""
    environment = dict(os.environ)
    environment['PATH'] = f'{VENV_BIN}{os.pathsep}{environment.get("PATH", "")}'
    environment['AMENT_PREFIX_PATH'] = str(VENV)
    for name in ('PYTHONPATH', 'COLCON_PREFIX_PATH', 'PIC_ROS_SHARE'):
        environment.pop(name, None)
    environment['PYTHONUNBUFFERED'] = '1'
    return environment


def run_commands(
    commands: Sequence[Sequence[str]], environment: dict[str, str], cwd: Path,
    timeout: float = COMMAND_TIMEOUT,
) -> list[subprocess.CompletedProcess[str]]:
    """
    Run short commands side by side, each in a session of its own; kill any that overruns.

    :param commands: Command lines.
    :param environment: Their environment.
    :param cwd: Working directory.
    :param timeout: Longest run of all of them [s]; the test fails when it is exceeded.
    :return: The finished processes, in order, stdout and stderr merged into ``stdout``.
    """
    processes = [
        subprocess.Popen(
            list(argv), env=environment, cwd=cwd, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        for argv in commands
    ]
    deadline = time.monotonic() + timeout
    results = []
    for argv, process in zip(commands, processes, strict=True):
        try:
            output, _ = process.communicate(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            for other in processes:
                if other.poll() is None:
                    os.killpg(other.pid, signal.SIGKILL)
                    other.communicate(timeout=10.0)
            pytest.fail(f'{" ".join(argv)} did not finish in {timeout} s')
        results.append(subprocess.CompletedProcess(list(argv), process.returncode, output, ''))
    return results


def run_command(
    argv: Sequence[str], environment: dict[str, str], cwd: Path,
    timeout: float = COMMAND_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """
    Run a short command in a session of its own; kill its process group if it overruns.

    :param argv: Command line.
    :param environment: Its environment.
    :param cwd: Working directory.
    :param timeout: Longest run [s]; the test fails when it is exceeded.
    :return: The finished process, stdout and stderr merged into ``stdout``.
    """
    return run_commands([argv], environment, cwd, timeout)[0]


def sourced_environment(setup_script: Path, environment: dict[str, str]) -> dict[str, str]:
    """
    Return the environment after ``source <setup_script>`` in bash.

    :param setup_script: ``install/setup.bash`` of a colcon workspace.
    :param environment: The environment it is sourced in.
    :return: The variables bash exports after sourcing it.
    """
    result = run_command(
        ['bash', '-c', 'source "$1" && env -0', 'bash', str(setup_script)],
        environment, setup_script.parent,
    )
    assert result.returncode == 0, result.stdout
    pairs = (item.partition('=') for item in result.stdout.split('\0') if '=' in item)
    return {name: value for name, _, value in pairs}


class Workspace:
    """
    A colcon workspace that holds the built packages.

    :param root: The workspace folder (``build/``, ``install/``, ``log/`` in it).
    :param packages: The packages of the repository to build (default: both).
    """

    def __init__(
        self, root: Path, packages: Sequence[str] = (PACKAGE, TOOLS_PACKAGE)
    ) -> None:
        self.root = root
        self.packages = tuple(packages)
        self.install = root / 'install'
        self.share = self.install / PACKAGE / 'share' / PACKAGE
        self.environment: dict[str, str] = {}

    def build(self, *options: str) -> subprocess.CompletedProcess[str]:
        """Run ``colcon build --packages-select <packages>`` on the repository (fails the test)."""
        result = run_command(
            [str(VENV_BIN / 'colcon'), 'build', '--base-paths', str(ROOT),
             '--packages-select', *self.packages, *options],
            base_environment(), self.root, timeout=180.0,
        )
        assert result.returncode == 0, result.stdout
        self.environment = sourced_environment(self.install / 'setup.bash', base_environment())
        return result

    def warm_up(self) -> None:
        """
        Compile the installed package's numba kernels into its cache, once for the workspace.

        Each node compiles them on its first start (the solver node about 25 s of CPU) unless
        numba's cache beside the installed modules has them: done here once, the launches the
        tests make start as a user's second launch does, rather than several nodes compiling
        the same kernels side by side on a busy host. Runs the installed ``python -m pic_ros
        compile`` (every shipped robot's imitation, collision guard, commanders and continuity
        checks) in the workspace's environment, then compiles the trajectory sampling of
        ``sim_robot`` (or finds nothing to do without numba).
        """
        compiled = run_command(
            [str(VENV_BIN / 'python'), '-m', 'pic_ros', 'compile'], self.environment, self.root,
            timeout=WARM_UP_TIMEOUT,
        )
        assert compiled.returncode == 0, compiled.stdout
        script = (
            'try:\n'
            '    from pic_ros_tools.sim import plan_state\n'
            'except ImportError:\n'
            '    pass\n'
            'else:\n'
            '    plan_state.load()\n'
        )
        result = run_command(
            [str(VENV_BIN / 'python'), '-c', script], self.environment, self.root,
            timeout=WARM_UP_TIMEOUT,
        )
        assert result.returncode == 0, result.stdout

    def ros_environment(self, home: Path, domain_id: int = DOMAIN_ID) -> dict[str, str]:
        """
        Return the environment of ROS processes run from this workspace.

        :param home: Folder for ``ROS_HOME`` (logs) and ``TMPDIR`` (launch_ros's files).
        :param domain_id: ROS domain.
        """
        home.mkdir(parents=True, exist_ok=True)
        environment = dict(self.environment)
        environment.update({
            'ROS_DOMAIN_ID': str(domain_id),
            'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
            'ROS_HOME': str(home),
            'TMPDIR': str(home),
            'MUJOCO_GL': environment.get('MUJOCO_GL', 'egl'),
        })
        environment.pop('ROS_LOCALHOST_ONLY', None)
        return environment


def session_processes(session: int) -> list[str]:
    """
    List the live processes of a session (a process started with ``start_new_session``).

    :param session: The session id, i.e. the pid of the process that started it.
    :return: ``pid: command line`` of each, zombies excluded.
    """
    found = []
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / 'stat').read_text()
            fields = stat[stat.rindex(')') + 2:].split()
            if int(fields[3]) != session or fields[0] == 'Z':
                continue
            command = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode(
                errors='replace')
        except (OSError, ValueError, IndexError):
            continue
        found.append(f'{entry.name}: {command.strip()}')
    return found


class RosProcess(ManagedProcess):
    """A ``ros2`` command running in its own session, with its output in a log file."""

    def output(self) -> str:
        """Return what it printed so far."""
        if self.log_path is None or not self.log_path.exists():
            return ''
        return self.log_path.read_text(encoding='utf-8', errors='replace')

    def wait(self, timeout: float) -> int | None:
        """
        Wait for it to end by itself.

        :param timeout: Longest wait [s].
        :return: Its exit status, or None if it still runs.
        """
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def leftovers(self) -> list[str]:
        """
        Return the processes of its session still alive, and kill them.

        :return: ``pid: command line`` of each process that outlived the stop.
        """
        left = session_processes(self.pid)
        if left:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


# The robots as the installed package describes them ---------------------------------------------


def controller_joints(share: Path, robot: str) -> dict[str, list[str]]:
    """
    Return each arm controller of ``config/<robot>.yaml`` with the arm's joints.

    :param share: The installed ``share/pic_ros``.
    :param robot: Robot name.
    """
    spec = yaml.safe_load((share / 'config' / f'{robot}.yaml').read_text(encoding='utf-8'))
    return {arm['controller']: list(arm['joints']) for arm in spec['arms'].values()}


def urdf_limits(share: Path, robot: str) -> dict[str, tuple[float, float, float]]:
    """
    Read the position and velocity limits of the installed URDF (ElementTree, no pic_ros code).

    :param share: The installed ``share/pic_ros``.
    :param robot: Robot name.
    :return: ``(lower, upper, velocity)`` by joint name, for joints that have a ``<limit>``.
    """
    spec = yaml.safe_load((share / 'config' / f'{robot}.yaml').read_text(encoding='utf-8'))
    tree = ElementTree.parse(share / 'urdf' / Path(spec['urdf']).name)
    limits = {}
    for joint in tree.getroot().iter('joint'):
        limit = joint.find('limit')
        if limit is not None and joint.get('type') in ('revolute', 'prismatic'):
            limits[joint.get('name')] = (
                float(limit.get('lower')), float(limit.get('upper')), float(limit.get('velocity'))
            )
    return limits


# A node of the test's own over DDS ------------------------------------------------------------


class Probe:
    """
    The test's node: records trajectories and diagnostics, and looks at the ROS graph.

    :param topics: Trajectory topics to record (absolute names).
    :param domain_id: ROS domain.
    """

    def __init__(self, topics: Sequence[str], domain_id: int = DOMAIN_ID) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from pic_ros_tools.ros.background_spin import BackgroundSpin
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from trajectory_msgs.msg import JointTrajectory

        self._rclpy = rclpy
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain_id)
        self.node = rclpy.create_node('pic_ros_launch_probe', context=self.context)
        self._lock = threading.Lock()
        self.trajectories: dict[str, list[Any]] = {topic: [] for topic in topics}
        self.diagnostics: list[Any] = []
        reliable = QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
        for topic in topics:
            self.node.create_subscription(
                JointTrajectory, topic, self._recorder(self.trajectories[topic]), reliable
            )
        self.node.create_subscription(
            DiagnosticArray, '/diagnostics', self._recorder(self.diagnostics), reliable
        )
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        self._spin = BackgroundSpin(executor)

    def _recorder(self, into: list[Any]) -> Callable[[Any], None]:
        def record(message: Any) -> None:
            with self._lock:
                into.append(message)

        return record

    def watch(self, topic: str, message_type: Any, qos: Any = None) -> list[Any]:
        """
        Record every message of one more topic.

        :param topic: Absolute topic name.
        :param message_type: Its message class.
        :param qos: Subscription QoS (default reliable, depth 500).
        :return: The list the messages are appended to (read it with :meth:`snapshot`).
        """
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        received: list[Any] = []
        profile = qos or QoSProfile(depth=500, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(message_type, topic, self._recorder(received), profile)
        return received

    def snapshot(self, received: list[Any]) -> list[Any]:
        """Return a copy of a list :meth:`watch` fills, taken under the probe's lock."""
        with self._lock:
            return list(received)

    def counts(self) -> dict[str, int]:
        """Return how many trajectories each topic brought so far."""
        with self._lock:
            return {topic: len(messages) for topic, messages in self.trajectories.items()}

    def node_names(self) -> set[str]:
        """Return the full names of the nodes in the graph."""
        return {
            f'{namespace.rstrip("/")}/{name}'
            for name, namespace in self.node.get_node_names_and_namespaces()
        }

    def diagnostic_statuses(self) -> dict[str, dict[str, str]]:
        """Return the last reported key values of each status name."""
        with self._lock:
            arrays = list(self.diagnostics)
        return {
            status.name: {item.key: item.value for item in status.values}
            for array in arrays for status in array.status
        }

    def _parameter_client(self, node_name: str) -> Any:
        from rclpy.parameter_client import AsyncParameterClient

        client = AsyncParameterClient(self.node, node_name)
        ready = client.wait_for_services(timeout_sec=COMMAND_TIMEOUT)
        assert ready, f'no parameter services of {node_name}'
        return client

    def _result(self, send: Callable[[], Any], what: str) -> Any:
        answer = ask(send, COMMAND_TIMEOUT)  # sent again if an answer is lost under load
        assert answer is not None, f'no answer within {COMMAND_TIMEOUT} s: {what}'
        return answer

    def set_parameter(self, node_name: str, name: str, value: Any) -> tuple[bool, str]:
        """
        Set a parameter of a node as ``ros2 param set`` does (bounded wait).

        :return: Whether it was taken, and the node's reason.
        """
        from rclpy.parameter import Parameter

        client = self._parameter_client(node_name)
        response = self._result(
            lambda: client.set_parameters([Parameter(name, value=value)]),
            f'{node_name} {name}:={value}',
        )
        return response.results[0].successful, response.results[0].reason

    def get_parameter(self, node_name: str, name: str) -> Any:
        """Return the value of a parameter of a node (bounded wait)."""
        from rclpy.parameter import parameter_value_to_python

        client = self._parameter_client(node_name)
        response = self._result(lambda: client.get_parameters([name]), f'{node_name} {name}')
        return parameter_value_to_python(response.values[0])

    def call_trigger(self, service: str) -> str:
        """
        Call a ``std_srvs/Trigger`` service (bounded wait) and describe the answer.

        :return: ``success=<bool> message=<text>``, as ``ros2 service call`` prints its fields.
        """
        from std_srvs.srv import Trigger

        client = self.node.create_client(Trigger, service)
        try:
            assert client.wait_for_service(timeout_sec=COMMAND_TIMEOUT), f'no service {service}'
            response = self._result(lambda: client.call_async(Trigger.Request()), service)
        finally:
            self.node.destroy_client(client)
        return f'success={response.success} message={response.message!r}'

    def publish_bool(self, topic: str, value: bool) -> str:
        """
        Publish one ``std_msgs/Bool`` (reliable) once a subscriber matched, as ``ros2 topic pub``.

        :return: ``data: <value>``, as ``ros2 topic pub`` prints what it publishes.
        """
        from rclpy.duration import Duration
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from std_msgs.msg import Bool

        publisher = self.node.create_publisher(
            Bool, topic, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        )
        try:
            wait_for(lambda: publisher.get_subscription_count() > 0, f'a subscriber of {topic}',
                     10.0)
            publisher.publish(Bool(data=value))
            wait_for(lambda: publisher.wait_for_all_acked(Duration(seconds=0.1)),
                     f'{topic} delivered', 10.0)
        finally:
            self.node.destroy_publisher(publisher)
        return f'data: {str(value).lower()}'

    def latched_bool(self, topic: str) -> str:
        """
        Read a latched ``std_msgs/Bool`` (transient local) as ``ros2 topic echo --once`` does.

        :return: ``data: <value>``.
        """
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import Bool

        values: list[bool] = []
        latched = QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        subscription = self.node.create_subscription(
            Bool, topic, lambda message: values.append(message.data), latched
        )
        try:
            wait_for(lambda: values, f'a value on {topic}', 10.0)
        finally:
            self.node.destroy_subscription(subscription)
        return f'data: {str(values[0]).lower()}'

    def close(self) -> None:
        """Stop spinning (the thread ends first) and shut the context down."""
        self._spin.stop()
        self.node.destroy_node()
        self._rclpy.try_shutdown(context=self.context)


def wait_for(condition: Callable[[], object], what: str, timeout: float, log: str = '') -> None:
    """
    Wait (bounded) for a condition, or fail the test with what was awaited and a log.

    :param condition: Polled every 50 ms.
    :param what: For the failure message.
    :param timeout: Longest wait [s].
    :param log: Output to show on failure (e.g. the launch's).
    """
    if not wait_until(condition, timeout):
        pytest.fail(f'timed out after {timeout} s waiting for {what}\n{log[-6000:]}')
