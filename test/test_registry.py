"""The one registry of solvers, trackers and correspondences (:mod:`pic_ros.registry`)."""

from __future__ import annotations

import re

from pic_ros.correspondence import correspondence_names
from pic_ros.correspondence.base import CORRESPONDENCES
from pic_ros.exceptions import ConfigError
from pic_ros.registry import Registry
from pic_ros.solvers import register_solver, solver_names
from pic_ros.solvers.analytic import AnalyticSolver
from pic_ros.solvers.base import SOLVERS
from pic_ros.trackers import tracker_names
from pic_ros.trackers.base import TRACKERS
import pytest


def test_a_name_is_registered_once():
    """A second entry under a taken name is refused; the first one stays."""
    registry: Registry[int] = Registry('widget')
    registry.add('round', 1)
    with pytest.raises(ConfigError, match=re.escape("widget 'round' is already registered")):
        registry.add('round', 2)
    assert registry.get('round') == 1


@pytest.mark.parametrize('name', ['Round', 'round-one', '', '1st', '_hidden', 'ronde é', 3])
def test_a_name_that_is_not_snake_case_is_refused(name):
    """Only lowercase ASCII letters, digits and underscores, starting with a letter."""
    registry: Registry[int] = Registry('widget')
    with pytest.raises(ConfigError, match='widget name must be snake_case'):
        registry.add(name, 1)
    assert registry.names() == ()


def test_an_unknown_name_is_refused_with_the_registered_names():
    """The message names the kind, the name asked for and every name there is, sorted."""
    registry: Registry[int] = Registry('widget')
    registry.add('square', 1)
    registry.add('round', 2)
    with pytest.raises(
        ConfigError, match=re.escape("unknown widget 'oval'; available: round, square")
    ):
        registry.get('oval')
    assert 'round' in registry and 'oval' not in registry


def test_names_are_sorted_whatever_the_registration_order():
    """One documented order for every registry."""
    registry: Registry[int] = Registry('widget')
    for name in ('c', 'a', 'b'):
        registry.add(name, 0)
    assert registry.names() == ('a', 'b', 'c')


def test_a_removed_name_is_gone_and_may_be_registered_again():
    """Remove, then add again under the same name; removing an unknown name is refused."""
    registry: Registry[int] = Registry('widget')
    registry.add('round', 1)
    registry.remove('round')
    assert 'round' not in registry and registry.names() == ()
    with pytest.raises(ConfigError, match=re.escape("no widget 'round' to unregister")):
        registry.remove('round')
    registry.add('round', 2)
    assert registry.get('round') == 2


def test_the_plugins_are_loaded_before_the_names_are_listed(monkeypatch):
    """A name a plug-in registers when it is loaded is among the names at the first asking."""
    registry: Registry[int] = Registry('widget')

    def load() -> tuple[str, ...]:
        if 'from_plugin' not in registry._items:
            registry.add('from_plugin', 7)
        return ('toy',)

    monkeypatch.setattr('pic_ros.registry.load_plugins', load)
    assert registry.names() == ('from_plugin',)


def test_every_built_in_name_is_snake_case_and_listed_sorted():
    """The solvers, trackers and correspondences shipped use the one registry."""
    for names, registry in (
        (solver_names(), SOLVERS),
        (tracker_names(), TRACKERS),
        (correspondence_names(), CORRESPONDENCES),
    ):
        assert names == tuple(sorted(names)) == registry.names()
        assert all(re.fullmatch('[a-z][a-z0-9_]*', name) for name in names)
    assert {'analytic', 'fabrik', 'pic', 'pics'} <= set(solver_names())
    assert {'azure_kinect', 'kinect_v2', 'xsens_mvn'} <= set(tracker_names())
    assert {'direction', 'position'} <= set(correspondence_names())


def test_a_built_in_name_cannot_be_taken_over():
    """Registering a shipped name again is refused instead of silently replacing it."""
    with pytest.raises(ConfigError, match=re.escape("solver 'pic' is already registered")):
        register_solver('pic')(AnalyticSolver)
    assert SOLVERS.get('pic') is not AnalyticSolver
