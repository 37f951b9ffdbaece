"""
The run-time package's stages import only what is below them (``docs/architecture.md``).

Read from the sources (``ast``): every ``from pic_ros.… import`` of ``pic_ros/pic_ros``, wherever
it stands. The stages in order -- trackers, human, correspondence, solvers, motion -- may import
the stages before them, ``robot`` and the shared modules below everything; ``robot`` and the
shared modules import no stage; nothing below the nodes imports the nodes or the composites built
on the stages.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / 'pic_ros' / 'pic_ros'

STAGES = ('trackers', 'human', 'correspondence', 'solvers', 'motion')
"""The pipeline stages, in the order a frame goes through them."""

SHARED = (
    'skeleton', 'schema', 'checks', 'exceptions', 'resources', 'plugins', 'registry', 'freshness'
)
"""Modules below every stage."""

ABOVE = (
    'ros', 'imitation', 'head_and_hands', 'teleoperation', 'kernels', 'cli', '__main__'
)
"""The nodes and the composites: above every stage."""


def unit(module: str) -> str:
    """Return the stage, package or module of ``pic_ros`` a dotted module name belongs to."""
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else '__init__'


def allowed(source: str, target: str) -> bool:
    """Return whether unit ``source`` may import unit ``target``."""
    if source == target or target in SHARED or source in ABOVE or source == '__init__':
        return True
    if target in ABOVE:
        return False
    if source in SHARED:
        return False
    if source == 'robot':
        return target not in STAGES
    if source in STAGES and target in STAGES:
        return STAGES.index(target) < STAGES.index(source)
    return target == 'robot'


def imports() -> list[tuple[str, str]]:
    """Return every ``(module, imported module)`` pair inside the package."""
    pairs = []
    for path in sorted(PACKAGE.rglob('*.py')):
        module = '.'.join(('pic_ros', *path.relative_to(PACKAGE).with_suffix('').parts))
        for node in ast.walk(ast.parse(path.read_text(encoding='utf-8'), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                if node.module == 'pic_ros' or node.module.startswith('pic_ros.'):
                    pairs.append((module, node.module))
    return pairs


def test_every_stage_imports_only_what_is_below_it() -> None:
    """No import against the stage order."""
    pairs = imports()
    assert len(pairs) > 100  # the package was read
    against = {
        (module, target) for module, target in pairs
        if not allowed(unit(module), unit(target))
    }
    assert against == set(), sorted(against)


def test_the_order_rule_refuses_an_import_backwards() -> None:
    """The rule itself: a later stage from an earlier one, a stage from robot, a node anywhere."""
    assert not allowed('trackers', 'human')
    assert not allowed('motion', 'ros')
    assert not allowed('robot', 'motion')
    assert not allowed('skeleton', 'human')
    assert allowed('motion', 'solvers') and allowed('human', 'trackers')
    assert allowed('human', 'skeleton') and allowed('ros', 'motion')
