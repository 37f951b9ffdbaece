"""Build script of the pic_ros_tools ament_python package: evaluation, simulation, recordings."""

from glob import glob
import os
import re

from setuptools import find_packages, setup

PACKAGE = 'pic_ros_tools'
HERE = os.path.dirname(os.path.abspath(__file__))


def read_version():
    """Return the version from package.xml, the single source of the version."""
    with open(os.path.join(HERE, 'package.xml'), encoding='utf-8') as stream:
        match = re.search(r'<version>([^<]+)</version>', stream.read())
    if match is None:
        raise RuntimeError('package.xml has no <version>')
    return match.group(1).strip()


def share(folder, pattern='*'):
    """Return a data_files entry installing folder/pattern into share/pic_ros_tools/folder."""
    files = sorted(path for path in glob(os.path.join(folder, pattern)) if os.path.isfile(path))
    return (os.path.join('share', PACKAGE, folder), files)


setup(
    name=PACKAGE,
    version=read_version(),
    packages=find_packages(exclude=['test', 'test.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        (os.path.join('share', PACKAGE), ['package.xml']),
        share('demo'),
        share('demo/synthetic1_bag'),
    ],
    # pic_ros (the run-time) comes from the same workspace or venv; the ROS 2 Python packages
    # from a ROS install or the PyPI ros-* wheels, as for pic_ros.
    install_requires=[
        'setuptools', 'pic_ros', 'numpy', 'PyYAML', 'rosbags', 'mujoco', 'matplotlib', 'Pillow',
        'mcap',
    ],
    extras_require={'bench': ['ikpy'], 'test': ['pytest', 'hypothesis']},
    zip_safe=False,
    maintainer='pic_ros maintainers',
    maintainer_email='pic-ros@example.org',
    description='Tools of pic_ros: evaluation, benchmarks, recordings, replay, MuJoCo simulation.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'pic_ros_tools = pic_ros_tools.cli:main',
            'sim_robot = pic_ros_tools.ros.sim_robot_node:main',
            'replay = pic_ros_tools.ros.replay_node:main',
        ],
        'pic_ros.parameter_tables': [
            'sim_robot = pic_ros_tools.ros.schema:SIM_ROBOT',
        ],
    },
)
