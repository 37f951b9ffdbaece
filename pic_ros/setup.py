"""Build script of the pic_ros ament_python package: the run-time (also pip-installable)."""

from glob import glob
import os
import re

from setuptools import find_packages, setup

PACKAGE = 'pic_ros'
HERE = os.path.dirname(os.path.abspath(__file__))


def read_version():
    """Return the version from package.xml, the single source of the version."""
    with open(os.path.join(HERE, 'package.xml'), encoding='utf-8') as stream:
        match = re.search(r'<version>([^<]+)</version>', stream.read())
    if match is None:
        raise RuntimeError('package.xml has no <version>')
    return match.group(1).strip()


def share(folder, pattern='*'):
    """Return a data_files entry installing folder/pattern into share/pic_ros/folder."""
    files = sorted(path for path in glob(os.path.join(folder, pattern)) if os.path.isfile(path))
    return (os.path.join('share', PACKAGE, folder), files)


setup(
    name=PACKAGE,
    version=read_version(),
    packages=find_packages(exclude=['test', 'test.*']),
    package_data={PACKAGE: ['py.typed']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        (os.path.join('share', PACKAGE), ['package.xml']),
        share('launch', '*.launch.py'),
        share('config', '*.yaml'),
        share('config/controllers', '*.yaml'),
        share('urdf', '*.urdf'),
        share('rviz', '*.rviz'),
        share('foxglove', '*.json'),
    ],
    # The ROS 2 Python packages (rclpy, *_msgs) come from a ROS install or, for the standalone
    # venv, from the PyPI ros-* wheels pinned in requirements.txt; they are not listed here.
    install_requires=['setuptools', 'numpy', 'PyYAML', 'transforms3d', 'urdf-parser-py', 'ruckig'],
    zip_safe=False,
    maintainer='pic_ros maintainers',
    maintainer_email='pic-ros@example.org',
    description='Robot arm teleoperation by human pose imitation (PIC / PICs / FABRIK): run-time.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'pic_ros = pic_ros.cli:main',
            'skeleton_node = pic_ros.ros.skeleton_node:main',
            'solver_node = pic_ros.ros.solver_node:main',
            'trajectory_publisher = pic_ros.ros.trajectory_publisher_node:main',
            'teleop = pic_ros.ros.teleop:console_main',
            'base_follower = pic_ros.ros.base_follower_node:main',
        ],
    },
)
