r"""
Compare motion generators on recordings: what the robot really does (pic_ros_tools.streamed).

Each recording is imitated offline as ``evaluate`` does (default solver and mapping), then its
targets are streamed through the trajectory publisher's commander with each setting, into a
simulated joint_trajectory_controller, on a simulated clock. Prints one Markdown row per robot,
recording and setting (arms pooled: the worst arm for peaks, lags and shares, the sum for
violations), and with ``--json`` every figure. Beside them, the feasibility bound of the same
targets (:func:`pic_ros_tools.feasibility.feasibility_bound`: the best tracking within the
limits the commands are planned with, with perfect foresight) and the live / bound ratios.

    python scripts/compare_motion.py --robot baxter yumi --recording demo assembly1 \
        --setting limiter:0 ruckig:0.03

A setting is ``motion_generator:prediction_horizon``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
import json
import sys
from typing import Any

from pic_ros.motion.commander import CommanderConfig
from pic_ros.motion.guard import CollisionGuard
from pic_ros.robot import load_robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import load_demonstration
from pic_ros_tools.evaluation import run_imitation
from pic_ros_tools.feasibility import bound_ratios, feasibility_bound
from pic_ros_tools.streamed import stream_trace, streamed_metrics

COLUMNS = (
    'robot', 'recording', 'setting', 'Pacc off', 'Pacc live', 'MAE off', 'MAE live',
    'lag p50 [ms]', 'lag p90 [ms]', 'v peak', 'v rms', 'a peak', 'a rms', 'j peak', 'j rms',
    'at v limit', 'violations p/v/a/j', 'chunks', 'us per chunk p50', 'Pacc bound', 'MAE bound',
    'Pacc live / bound', 'MAE live / bound', 'guard refused',
)


def row(
    robot: str, recording: str, setting: str, figures: dict[str, Any], bound: dict[str, Any]
) -> list[str]:
    """Return one table row: the robot's Pacc and MAE, each arm's worst figure, the bound."""
    ratios = bound_ratios(figures['live'], bound)
    arms = list(figures['arms'].values())

    def worst(key: str) -> float:
        return max(float(arm[key]) for arm in arms)

    def total(key: str) -> int:
        return sum(int(arm[key]) for arm in arms)

    violations = '/'.join(
        str(total(f'{kind}_violations'))
        for kind in ('position', 'velocity', 'acceleration', 'jerk')
    )
    return [
        robot, recording, setting,
        f"{figures['offline']['pacc_paper']:.3f}", f"{figures['live']['pacc_paper']:.3f}",
        f"{figures['offline']['elbow_mae_rad']:.3f}", f"{figures['live']['elbow_mae_rad']:.3f}",
        f"{1e3 * worst('lag_s_p50'):.0f}", f"{1e3 * worst('lag_s_p90'):.0f}",
        f"{worst('velocity_peak'):.3f}", f"{worst('velocity_rms'):.2f}",
        f"{worst('acceleration_peak'):.3f}", f"{worst('acceleration_rms'):.2f}",
        f"{worst('jerk_peak'):.2f}", f"{worst('jerk_rms'):.2f}",
        f"{100 * worst('at_velocity_limit'):.1f} %", violations,
        str(max(int(arm['chunks']) for arm in arms)),
        f"{worst('step_us_p50'):.0f}",
        f"{bound['bound_pacc']:.3f}", f"{bound['bound_elbow_mae_rad']:.3f}",
        f"{ratios['pacc_live_over_bound']:.2f}", f"{ratios['elbow_mae_live_over_bound']:.2f}",
        str(total('guard_refused')),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """
    Run the comparison and print it.

    :param argv: Command-line arguments (default: ``sys.argv[1:]``).
    :return: Exit status.
    """
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robot', nargs='+', default=['baxter', 'yumi', 'tiago'])
    parser.add_argument('--recording', nargs='+', default=['demo'])
    parser.add_argument('--setting', nargs='+', default=['limiter:0', 'ruckig:0.03'])
    parser.add_argument(
        '--no-guard', action='store_true',
        help="stream without the trajectory publisher's collision guard",
    )
    parser.add_argument('--json', action='store_true', help='print every figure as JSON')
    args = parser.parse_args(argv)
    solver = SolverConfig()
    results = []
    print('| ' + ' | '.join(COLUMNS) + ' |')
    print('|' + '---|' * len(COLUMNS))
    for recording in args.recording:
        demonstration = load_demonstration(recording)
        for name in args.robot:
            robot = load_robot(name)
            trace = run_imitation(robot, demonstration, solver)
            bound = feasibility_bound(robot, demonstration, solver, trace)
            bound.pop('records')
            for setting in args.setting:
                generator, horizon = setting.split(':')
                config = CommanderConfig.from_parameters({
                    'motion_generator': generator, 'prediction_horizon': float(horizon),
                    'wait_for_joint_states': False,
                })
                guard = None if args.no_guard else CollisionGuard(robot, -1.0)
                runs = stream_trace(robot, trace, config, guard=guard)
                figures = streamed_metrics(robot, demonstration, solver, trace, runs)
                line = row(name, recording, setting, figures, bound)
                print('| ' + ' | '.join(line) + ' |', flush=True)
                results.append({
                    'robot': name, 'recording': recording, 'setting': setting, **figures,
                    'bound': {**bound, **bound_ratios(figures['live'], bound)},
                })
    if args.json:
        json.dump(results, sys.stdout, default=str)
        print()
    return 0


if __name__ == '__main__':
    sys.exit(main())
