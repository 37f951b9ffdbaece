# pic_ros: `make demo` and `make test` are the two commands of the README.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ROBOT ?= baxter
STAMP := $(VENV)/.pic_ros-installed

.PHONY: setup check test test-jazzy demo evaluate bench lint clean

$(STAMP): requirements.txt requirements-common.txt setup.py package.xml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(VENV)/AMENT_IGNORE
	touch $@

setup: $(STAMP)

# The gates: ruff (configured to agree with the ament linters) and mypy strict on the core.
# The ament flake8 / pep257 checks run inside the test suite, as `colcon test` runs them.
check: setup
	$(VENV)/bin/ruff check .
	$(PY) -m mypy pic_ros

test: check
	$(PY) -m pytest -q

# The same suite on ROS 2 Jazzy (rclpy 7.1.6) in a venv of its own; the gates and the ament
# linters do not depend on the distro, so they run once, in `make test`.
JAZZY_VENV ?= .venv-jazzy
JAZZY_STAMP := $(JAZZY_VENV)/.pic_ros-installed

$(JAZZY_STAMP): requirements-jazzy.txt requirements-common.txt setup.py package.xml
	$(PYTHON) -m venv $(JAZZY_VENV)
	$(JAZZY_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(JAZZY_VENV)/bin/python -m pip install --quiet -r requirements-jazzy.txt
	$(JAZZY_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(JAZZY_VENV)/AMENT_IGNORE
	touch $@

test-jazzy: $(JAZZY_STAMP)
	$(JAZZY_VENV)/bin/python -m pytest -q --deselect test/test_flake8.py --deselect test/test_pep257.py

demo: setup
	$(PY) -m pic_ros demo --robot $(ROBOT) --out demo_out

evaluate: setup
	$(PY) -m pic_ros evaluate

bench: setup
	$(PY) -m pic_ros bench

lint: check
	$(PY) -m pytest -q test/test_flake8.py test/test_pep257.py

clean:
	rm -rf $(VENV) $(JAZZY_VENV) build install log demo_out *.egg-info
