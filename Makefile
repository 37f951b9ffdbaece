# pic_ros (run-time, pic_ros/) and pic_ros_tools (tools, pic_ros_tools/): `make demo` and
# `make test` are the two commands of the README; the venv holds both packages, editable.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ROBOT ?= baxter
# make demo RECORDING=path: a rosbag2 or a Kinect v2 text recording (empty: the shipped demo bag).
RECORDING ?=
STAMP := $(VENV)/.pic_ros-installed
# The ROS 2 distribution's wheels: Kilted (requirements.txt) unless told otherwise.
REQUIREMENTS ?= requirements.txt
# The ROS 2 launch system, the ros2 CLI and colcon for the launch tests: from ../shared when it is
# there (the launch tests skip, saying what is missing, when it is not).
ROS_TOOLS ?= ../shared/ros-tools
ROS_STAMP := $(VENV)/.pic_ros-ros-tools-installed

.PHONY: setup check test test-jazzy demo evaluate bench lint clean ros-tools

PACKAGE_FILES := $(foreach p,pic_ros pic_ros_tools,$(p)/setup.py $(p)/package.xml)

$(STAMP): $(REQUIREMENTS) requirements-common.txt requirements-tools.txt requirements-test.txt \
		$(PACKAGE_FILES)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r $(REQUIREMENTS)
	# compat: a .pth line per package folder, so that the folders pic_ros/ and pic_ros_tools/ of
	# the repository root never shadow the packages as namespace packages (python run from here)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation --config-settings editable_mode=compat \
		-e pic_ros -e pic_ros_tools
	touch $(VENV)/AMENT_IGNORE
	touch $@

setup: $(STAMP)

$(ROS_STAMP): $(STAMP) requirements-ros-tools.txt $(wildcard $(ROS_TOOLS)/install $(ROS_TOOLS)/wheels/*.whl)
	$(PY) -m pip install --quiet -r requirements-ros-tools.txt
	$(ROS_TOOLS)/install $(VENV)
	touch $@

# Idempotent: installs once per venv, again when the pins or the shared wheels change.
ros-tools: setup
	@if [ -x $(ROS_TOOLS)/install ]; then \
		$(MAKE) --no-print-directory $(ROS_STAMP); \
	else \
		echo "$(ROS_TOOLS)/install not found: the launch and colcon tests will be skipped"; \
	fi

# The gates: ruff (configured to agree with the ament linters) and mypy strict on the core.
# The ament flake8 / pep257 checks run inside the test suite, as `colcon test` runs them.
check: setup
	$(VENV)/bin/ruff check .
	$(PY) -m mypy pic_ros/pic_ros pic_ros_tools/pic_ros_tools

test: check ros-tools
	$(PY) -m pytest -q

# The same suite on ROS 2 Jazzy (rclpy 7.1.6): the same steps in a venv of its own.
test-jazzy:
	$(MAKE) --no-print-directory test VENV=.venv-jazzy REQUIREMENTS=requirements-jazzy.txt

demo: setup
	$(PY) -m pic_ros_tools demo --robot $(ROBOT) --out demo_out $(if $(RECORDING),--recording '$(RECORDING)')

evaluate: setup
	$(PY) -m pic_ros_tools evaluate

bench: setup
	$(PY) -m pic_ros_tools bench

lint: check
	$(PY) -m pytest -q test/test_flake8.py test/test_pep257.py

clean:
	rm -rf $(VENV) .venv-jazzy build install log demo_out *.egg-info */*.egg-info
