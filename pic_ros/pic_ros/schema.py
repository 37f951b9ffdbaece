"""
Parameters defined once: name, type, default, range or choices, unit, description, read-only.

A :class:`ParameterDef` sits next to the core configuration it builds (e.g. the solver's in
:mod:`pic_ros.solvers.base`, the tracking-loss timing in :mod:`pic_ros.motion.tracking_loss`) and
that configuration checks its fields with it, so a range exists in one place. A
:class:`ParameterTable` gathers the definitions of one ROS node (:mod:`pic_ros.ros.schema`);
everything else is derived from the tables: the nodes' parameter declarations and the checks of
their set requests, ``config/teleop.yaml``, the command-line options of ``teleop`` and
``evaluate``, the launch arguments and the docs' parameter tables
(``python -m pic_ros params`` prints the last two; tests fail when the shipped copies drift).

Choices can be a function, called whenever they are needed: the solver and correspondence
choices are the registries' names at that moment, so a solver registered by a plug-in is
accepted everywhere.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
import enum
import math
from typing import Any

from pic_ros.exceptions import ConfigError

Choices = tuple[str, ...] | Callable[[], Iterable[str]]


class ParameterType(enum.Enum):
    """The ROS type of a parameter (``rcl_interfaces/ParameterType``)."""

    BOOL = 'bool'
    INTEGER = 'integer'
    DOUBLE = 'double'
    STRING = 'string'
    STRING_ARRAY = 'string_array'
    DYNAMIC = 'dynamic'
    """Several types accepted (e.g. ``scale``: ``'auto'`` or a number); ``parse`` checks it."""


def _type_of(default: Any) -> ParameterType:
    if isinstance(default, bool):
        return ParameterType.BOOL
    if isinstance(default, int):
        return ParameterType.INTEGER
    if isinstance(default, float):
        return ParameterType.DOUBLE
    if isinstance(default, str):
        return ParameterType.STRING
    if isinstance(default, (list, tuple)) and all(isinstance(item, str) for item in default):
        return ParameterType.STRING_ARRAY
    raise ConfigError(f'no parameter type for a default of {default!r}')


def _number_text(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else f'{float(value):g}'


@dataclass(frozen=True)
class ParameterDef:
    """
    One parameter: everything a node, a parameter file, a command line or a document needs.

    :param name: Parameter name (``snake_case``; the command-line option is ``--kebab-case``).
    :param default: Default value; its Python type gives the parameter type unless
        ``dynamic`` (bool, int, float, str or a list of str).
    :param description: What it does, one sentence, without the unit.
    :param unit: Unit in brackets-free form (``s``, ``Hz``, ``m``, ``1/s``), or ``''``.
    :param low: Smallest allowed number (numeric parameters), or None.
    :param high: Largest allowed number (numeric parameters), or None.
    :param choices: Allowed strings, or a function returning them when asked (a registry).
    :param read_only: Fixed once the node runs (structural: robot, source, ports).
    :param dynamic: Accept several types; ``parse`` must then check the value.
    :param parse: Extra check and conversion of a value (e.g. ``'auto'`` or a number); returns
        the value the core uses and raises :class:`~pic_ros.exceptions.ConfigError`.
    :raises ConfigError: If the default breaks the definition.
    """

    name: str
    default: Any
    description: str
    unit: str = ''
    low: float | None = None
    high: float | None = None
    choices: Choices = ()
    read_only: bool = False
    dynamic: bool = False
    parse: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ConfigError(f'parameter name must be snake_case, got {self.name!r}')
        if self.dynamic and self.parse is None:
            raise ConfigError(f'{self.name}: a dynamic parameter needs a parse function')
        if not callable(self.choices):  # a registry's choices are checked when asked
            self.check(self.default)

    @property
    def ros_type(self) -> ParameterType:
        """Return the parameter type."""
        return ParameterType.DYNAMIC if self.dynamic else _type_of(self.default)

    @property
    def option(self) -> str:
        """Return the command-line option, e.g. ``--time-constant``."""
        return '--' + self.name.replace('_', '-')

    def allowed(self) -> tuple[str, ...]:
        """
        Return the allowed strings now (a registry is asked each time).

        :return: The choices; empty if any value of the type is allowed.
        """
        choices = self.choices() if callable(self.choices) else self.choices
        return tuple(choices)

    def check(self, value: Any) -> Any:
        """
        Check a value and return it as the core takes it.

        An integer is accepted for a double (and returned as a float), as ROS does not.

        :param value: Candidate value.
        :return: The value, converted (``parse`` applied when given).
        :raises ConfigError: Naming the parameter and what it accepts.
        """
        kind = self.ros_type
        if kind is ParameterType.BOOL:
            if not isinstance(value, bool):
                raise ConfigError(f'{self.name} must be true or false, got {value!r}')
        elif kind is ParameterType.INTEGER:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f'{self.name} must be an integer{self._range()}, got {value!r}')
            self._check_range(value)
        elif kind is ParameterType.DOUBLE:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f'{self.name} must be a number{self._range()}, got {value!r}')
            value = float(value)
            if not math.isfinite(value):
                raise ConfigError(f'{self.name} must be finite, got {value!r}')
            self._check_range(value)
        elif kind is ParameterType.STRING:
            if not isinstance(value, str):
                raise ConfigError(f'{self.name} must be a string, got {value!r}')
            allowed = self.allowed()
            if allowed and value not in allowed:
                listed = ', '.join(repr(choice) for choice in allowed)
                raise ConfigError(f'{self.name} must be one of {listed}, got {value!r}')
        elif kind is ParameterType.STRING_ARRAY:
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(item, str) for item in value
            ):
                raise ConfigError(f'{self.name} must be a list of strings, got {value!r}')
            value = list(value)
        if self.parse is not None:
            return self.parse(value)
        return value

    def read_text(self, text: str) -> Any:
        """
        Read a value written as text (command line, launch argument), without checking it.

        :param text: ``true``/``false`` for a bool, a number, a string, or comma-separated
            strings for a list.
        :return: The value with the parameter's ROS type (a float for a number given to a
            dynamic parameter).
        :raises ConfigError: If the text is not of the parameter's type.
        """
        kind = self.ros_type
        text = text.strip()
        if kind is ParameterType.BOOL:
            if text.lower() not in ('true', 'false'):
                raise ConfigError(f'{self.name} must be true or false, got {text!r}')
            return text.lower() == 'true'
        if kind is ParameterType.INTEGER:
            try:
                return int(text)
            except ValueError:
                raise ConfigError(
                    f'{self.name} must be an integer{self._range()}, got {text!r}'
                ) from None
        if kind is ParameterType.DOUBLE or (kind is ParameterType.DYNAMIC and _is_number(text)):
            try:
                return float(text)
            except ValueError:
                raise ConfigError(
                    f'{self.name} must be a number{self._range()}, got {text!r}'
                ) from None
        if kind is ParameterType.STRING_ARRAY:
            return [item.strip() for item in text.split(',') if item.strip()]
        return text

    def from_text(self, text: str) -> Any:
        """
        Read a value written as text and check it.

        :param text: See :meth:`read_text`.
        :return: The value as the core takes it (:meth:`check`).
        :raises ConfigError: If the text is not a value of this parameter.
        """
        return self.check(self.read_text(text))

    def value_for_ros(self, value: Any) -> Any:
        """
        Return a checked value as a ROS parameter holds it (``parse`` not applied).

        :param value: A value accepted by :meth:`check`.
        :return: The value, a float for a double given as an integer.
        """
        if self.ros_type is ParameterType.DOUBLE and isinstance(value, int):
            return float(value)
        return value

    def constraint_text(self, *, unit: bool = True) -> str:
        """
        Describe the allowed values in words, for documents and descriptors.

        :param unit: Append the unit to a range.
        :return: E.g. ``'1..3'``, ``'[0.001, 1] s'``, ``'fabrik, pic, pics'``, or ``''``.
        """
        allowed = self.allowed()
        if allowed:
            return ', '.join(allowed)
        if self.low is None and self.high is None:
            return ''
        if self.ros_type is ParameterType.INTEGER:
            text = f'{int(self.low or 0)}..{int(self.high or 0)}'
        else:
            text = f'[{_number_text(self.low or 0.0)}, {_number_text(self.high or 0.0)}]'
        return f'{text} {self.unit}'.strip() if unit else text

    def help_text(self) -> str:
        """
        Return the one-line help of a command-line option or a launch argument.

        :return: Description, unit and allowed values.
        """
        unit = f' [{self.unit}]' if self.unit else ''
        constraint = self.constraint_text(unit=False)
        allowed = f' ({constraint})' if constraint and not self.allowed() else ''
        return f'{self.description}{unit}{allowed}'

    def _range(self) -> str:
        if self.low is None and self.high is None:
            return ''
        return f' in [{self.low}, {self.high}]'

    def _check_range(self, value: float) -> None:
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        if not low <= value <= high:
            raise ConfigError(f'{self.name} must be in [{self.low}, {self.high}], got {value!r}')


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class ParameterTable:
    """
    The parameters of one node, in declaration order.

    :param node: Node name (``skeleton_node``...), the key of its block in parameter files.
    :param parameters: Definitions, or groups of definitions, with distinct names.
    :raises ConfigError: If two definitions share a name.
    """

    def __init__(
        self, node: str, parameters: Iterable[ParameterDef | Iterable[ParameterDef]]
    ) -> None:
        flat: list[ParameterDef] = []
        for item in parameters:
            flat.extend([item] if isinstance(item, ParameterDef) else item)
        names = [definition.name for definition in flat]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ConfigError(f'{node}: parameters defined twice: {repeated}')
        self.node = node
        self._definitions = {definition.name: definition for definition in flat}

    def __iter__(self) -> Iterator[ParameterDef]:
        """Iterate over the definitions in declaration order."""
        return iter(self._definitions.values())

    def __len__(self) -> int:
        """Return the number of parameters."""
        return len(self._definitions)

    def __contains__(self, name: object) -> bool:
        """Return whether a parameter of that name exists."""
        return name in self._definitions

    def __getitem__(self, name: str) -> ParameterDef:
        """
        Return a definition by name.

        :param name: Parameter name.
        :return: Its definition.
        :raises ConfigError: If the node has no such parameter (the message lists them).
        """
        try:
            return self._definitions[name]
        except KeyError:
            raise ConfigError(
                f'{self.node} has no parameter {name!r}; it has: {", ".join(self._definitions)}'
            ) from None

    @property
    def names(self) -> tuple[str, ...]:
        """Return the parameter names in declaration order."""
        return tuple(self._definitions)

    def defaults(self) -> dict[str, Any]:
        """
        Return every default value.

        :return: Values by name (lists copied).
        """
        return {
            name: list(item.default) if isinstance(item.default, (list, tuple)) else item.default
            for name, item in self._definitions.items()
        }

    def check(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """
        Check values against the table (unknown names refused).

        :param values: Candidate values by name (any subset).
        :return: The values as the core takes them (:meth:`ParameterDef.check`).
        :raises ConfigError: At the first unknown name or refused value.
        """
        return {name: self[name].check(value) for name, value in values.items()}

    def from_text(self, values: Mapping[str, str]) -> dict[str, Any]:
        """
        Read values written as text (launch arguments, ``--param NODE.NAME=VALUE``).

        :param values: Text values by parameter name; empty strings are left out.
        :return: Checked values with their ROS types (ready for a node or a parameter file).
        :raises ConfigError: At the first unknown name or refused value.
        """
        result = {}
        for name, text in values.items():
            if text.strip():
                definition = self[name]
                value = definition.read_text(text)
                definition.check(value)
                result[name] = value
        return result


def add_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    definition: ParameterDef,
    *,
    repeatable: bool = False,
    default: Any = None,
    extra_choices: Sequence[str] = (),
    help_suffix: str = '',
    flag: str | None = None,
) -> None:
    """
    Add a command-line option for a parameter: type, choices and help from its definition.

    The option parses text with :meth:`ParameterDef.from_text`, so it accepts exactly what the
    parameter accepts; choices are read when the parser is built (a registry's names then). A
    boolean option given without a value means true (``--publish-clock``).

    :param parser: The parser (or an argument group).
    :param definition: The parameter.
    :param repeatable: Collect several values in a list (``action='append'``).
    :param default: The option's default (None: the option is absent unless given).
    :param extra_choices: Strings accepted besides the parameter's values (e.g. ``all``).
    :param help_suffix: Appended to the help (e.g. what the default means).
    :param flag: The option's name, when not :attr:`ParameterDef.option`.
    """
    extra = tuple(extra_choices)

    def convert(text: str) -> Any:
        if text in extra:
            return text
        try:
            value = definition.read_text(text)
            definition.check(value)
        except ConfigError as err:
            raise argparse.ArgumentTypeError(str(err)) from err
        return value

    convert.__name__ = definition.name  # argparse names the option's type in its messages
    kwargs: dict[str, Any] = {
        'type': convert,
        'default': default,
        'help': definition.help_text() + help_suffix,
    }
    allowed = definition.allowed() + extra
    if allowed:
        kwargs['metavar'] = '{' + ','.join(allowed) + '}'
    if repeatable:
        kwargs['action'] = 'append'
    if definition.ros_type is ParameterType.BOOL:
        kwargs.update(nargs='?', const=True, metavar='{true,false}')
    parser.add_argument(flag or definition.option, **kwargs)
