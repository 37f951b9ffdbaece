"""
Declaring node parameters from one table, with descriptions, ranges and validation.

Every node lists its parameters as :class:`ParameterSpec` rows. They are declared with a
``ParameterDescriptor`` (description, numeric range, read-only flag, the allowed values in
``additional_constraints``); a set request is validated by building the node's core configuration
from the candidate values, and rejected with the core's reason when that fails (never clamped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pic_ros.checks import check_choice
from pic_ros.exceptions import ConfigError
from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

Values = dict[str, Any]


@dataclass(frozen=True)
class ParameterSpec:
    """
    One node parameter.

    :param name: Parameter name.
    :param default: Default value (its type is the parameter's type unless ``dynamic``).
    :param description: What it is, with its unit.
    :param read_only: Fixed after start-up (structural parameters: robot, source, port).
    :param low: Smallest allowed number (numeric parameters).
    :param high: Largest allowed number (numeric parameters).
    :param choices: Allowed strings (string parameters).
    :param dynamic: Accept several types (e.g. ``scale``: ``'auto'`` or a number).
    """

    name: str
    default: Any
    description: str
    read_only: bool = False
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    dynamic: bool = False

    def descriptor(self) -> ParameterDescriptor:
        """
        Build the ROS descriptor of this parameter.

        :return: Descriptor with description, range and read-only flag.
        """
        descriptor = ParameterDescriptor(
            description=self.description, read_only=self.read_only, dynamic_typing=self.dynamic
        )
        if self.choices:
            descriptor.additional_constraints = 'one of: ' + ', '.join(self.choices)
        if self.low is not None and self.high is not None and not self.dynamic:
            if isinstance(self.default, bool):
                pass
            elif isinstance(self.default, int):
                descriptor.integer_range = [
                    IntegerRange(from_value=int(self.low), to_value=int(self.high), step=0)
                ]
            elif isinstance(self.default, float):
                descriptor.floating_point_range = [
                    FloatingPointRange(from_value=self.low, to_value=self.high, step=0.0)
                ]
        return descriptor


def declare_parameters(node: Node, specs: Sequence[ParameterSpec]) -> Values:
    """
    Declare every parameter of a node and return their values.

    :param node: The node.
    :param specs: Its parameter table.
    :return: Values by name (overrides from launch files or the command line applied).
    :raises ConfigError: If a value breaks a choice rule.
    """
    values: Values = {}
    for spec in specs:
        node.declare_parameter(spec.name, spec.default, spec.descriptor())
        values[spec.name] = node.get_parameter(spec.name).value
    check_values(specs, values)
    return values


def check_values(specs: Sequence[ParameterSpec], values: Mapping[str, Any]) -> None:
    """
    Check the allowed-value rules that descriptors cannot express.

    :param specs: The parameter table.
    :param values: Candidate values by name.
    :raises ConfigError: Naming the parameter and the allowed values.
    """
    for spec in specs:
        if spec.choices and spec.name in values:
            check_choice(spec.name, values[spec.name], spec.choices)


def validation_callback(
    node: Node,
    specs: Sequence[ParameterSpec],
    values: Values,
    apply: Callable[[Values], None],
) -> Callable[[list[Parameter]], SetParametersResult]:
    """
    Make the on-set-parameters callback of a node.

    The callback merges the requested values into the current ones, checks the choices and calls
    ``apply`` with the candidate; ``apply`` builds the node's core configuration and raises
    :class:`~pic_ros.exceptions.ConfigError` to refuse. Refusals are logged and returned with
    their reason.

    :param node: The node (for logging).
    :param specs: Its parameter table.
    :param values: The node's current values; updated in place when a request is accepted.
    :param apply: Builds and installs the configuration from candidate values.
    :return: A callback for ``Node.add_on_set_parameters_callback``.
    """
    known = {spec.name for spec in specs}

    def on_set(parameters: list[Parameter]) -> SetParametersResult:
        candidate = dict(values)
        for parameter in parameters:
            if parameter.name in known:
                candidate[parameter.name] = parameter.value
        try:
            check_values(specs, candidate)
            apply(candidate)
        except ConfigError as err:
            node.get_logger().warning(f'parameter change refused: {err}')
            return SetParametersResult(successful=False, reason=str(err))
        values.update(candidate)
        return SetParametersResult(successful=True)

    return on_set
