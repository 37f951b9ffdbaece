"""
Declaring a node's parameters from its table, with descriptors, and checking set requests.

The table (:mod:`pic_ros.ros.schema`) gives each parameter's type, default, description, unit,
range, choices and read-only flag. :func:`declare_parameters` declares them with a
``ParameterDescriptor`` (description with the unit, numeric range, read-only flag, the allowed
values in ``additional_constraints``); a set request is checked against the table and then by
building the node's core configuration from the candidate values, and refused with the reason
when either fails (never clamped).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pic_ros.exceptions import ConfigError
from pic_ros.realtime import REALTIME_PRIORITY, Scheduling, SchedulingOutcome, use_fifo
from pic_ros.schema import ParameterDef, ParameterTable, ParameterType
from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.node import Node
from rclpy.parameter import Parameter

Values = dict[str, Any]


def descriptor(definition: ParameterDef) -> ParameterDescriptor:
    """
    Build the ROS descriptor of a parameter.

    :param definition: The parameter.
    :return: Descriptor with description (and unit), range, choices and read-only flag.
    """
    unit = f' [{definition.unit}]' if definition.unit else ''
    result = ParameterDescriptor(
        description=definition.description + unit,
        read_only=definition.read_only,
        dynamic_typing=definition.dynamic,
    )
    allowed = definition.allowed()
    if allowed:
        result.additional_constraints = 'one of: ' + ', '.join(allowed)
    if definition.low is not None and definition.high is not None:
        if definition.ros_type is ParameterType.INTEGER:
            result.integer_range = [IntegerRange(
                from_value=int(definition.low), to_value=int(definition.high), step=0
            )]
        elif definition.ros_type is ParameterType.DOUBLE:
            result.floating_point_range = [FloatingPointRange(
                from_value=float(definition.low), to_value=float(definition.high), step=0.0
            )]
    return result


DefaultOf = Callable[[Values], Any]
"""The default a node declares for a parameter, from the values of those declared before it."""


def declare_parameters(
    node: Node, table: ParameterTable, defaults: Mapping[str, DefaultOf] | None = None
) -> Values:
    """
    Declare every parameter of a node and return their values.

    rclpy infers a parameter's type from the value it is declared with, and reads an empty list
    as a byte array: a string array whose table default is empty (``arms``: every arm) is
    declared with the value its node gives in ``defaults`` (the robot's arms), never with ``[]``.

    :param node: The node.
    :param table: Its parameter table.
    :param defaults: Parameter name -> the value declared in place of the table default, made
        from the values of the parameters declared before it (table order).
    :return: Values by name (overrides from launch files or the command line applied).
    :raises ConfigError: If a value breaks a rule the descriptors cannot express (a choice).
    :raises ValueError: If a string array with an empty default has no entry in ``defaults``.
    """
    values: Values = {}
    for definition in table:
        default = definition.default
        if defaults is not None and definition.name in defaults:
            default = definition.value_for_ros(definition.check(defaults[definition.name](values)))
        if definition.ros_type is ParameterType.STRING_ARRAY and not default:
            raise ValueError(
                f'{definition.name}: rclpy would declare an empty list as a byte array; give the '
                'default in defaults'
            )
        node.declare_parameter(definition.name, default, descriptor(definition))
        values[definition.name] = node.get_parameter(definition.name).value
    table.check(values)
    return values


def validation_callback(
    node: Node,
    table: ParameterTable,
    values: Values,
    apply: Callable[[Values], None],
) -> Callable[[list[Parameter]], SetParametersResult]:
    """
    Make the on-set-parameters callback of a node.

    The callback merges the requested values into the current ones, checks them against the
    table and calls ``apply`` with the candidate; ``apply`` builds the node's core configuration
    and raises :class:`~pic_ros.exceptions.ConfigError` to refuse. Refusals are logged and
    returned with their reason.

    :param node: The node (for logging).
    :param table: Its parameter table.
    :param values: The node's current values; updated in place when a request is accepted.
    :param apply: Builds and installs the configuration from candidate values.
    :return: A callback for ``Node.add_on_set_parameters_callback``.
    """

    def on_set(parameters: list[Parameter]) -> SetParametersResult:
        candidate = dict(values)
        for parameter in parameters:
            if parameter.name in table:
                candidate[parameter.name] = parameter.value
        try:
            table.check(candidate)
            apply(candidate)
        except ConfigError as err:
            node.get_logger().warning(f'parameter change refused: {err}')
            return SetParametersResult(successful=False, reason=str(err))
        values.update(candidate)
        return SetParametersResult(successful=True)

    return on_set


def apply_realtime_priority(node: Node, values: Values) -> Scheduling:
    """
    Put the node's process under its ``realtime_priority`` (:func:`~pic_ros.realtime.use_fifo`).

    Logged: the threads now under ``SCHED_FIFO`` (info), or why not (a warning; the node runs on
    with the default scheduling). Priority 0 says nothing.

    :param node: The node (its logger).
    :param values: Its parameter values, with ``realtime_priority``.
    :return: What was done.
    """
    scheduling = use_fifo(int(values[REALTIME_PRIORITY.name]))
    if scheduling.outcome is SchedulingOutcome.APPLIED:
        node.get_logger().info(scheduling.describe())
    elif scheduling.outcome is not SchedulingOutcome.OFF:
        node.get_logger().warning(scheduling.describe())
    return scheduling
