"""
Variable admittance of the hand: it yields to a push and comes back to the imitation target.

After Arduengo et al.'s whole-body teleoperation of the TIAGo robot by human motion transfer,
Sec. II-E, *Variable Admittance Control* (its equations are unnumbered). The commanded hand
position is the imitation target plus a deviation ``e`` [m] (base frame) that obeys, per axis,
the virtual dynamics

    m e'' + d(t) e' + k(t) e = f_ext,    d(t) = 2 zeta sqrt(m k(t))

with a constant mass ``m`` [kg], a constant damping ratio ``zeta`` and a stiffness that moves
between the stiff (leader) value ``k_max`` and the compliant (follower) value ``k_min`` [N/m]
through the role factor ``alpha`` in [0, 1]:

    k(t) = k_min + alpha(t) (k_max - k_min),    alpha = 1 / (1 + exp(a psi + b))

The interaction factor ``psi`` in [0, 1] rises at ``c_plus`` [1/s] while the (moving-average
filtered) force exceeds ``force_threshold`` and falls at ``c_minus`` [1/s] otherwise, clipped to
[0, 1]. So the hand is stiff when nobody touches it and turns compliant within a fraction of a
second under a sustained push (fast stiff to compliant, slow return, as the paper asks).

Sign of the sigmoid: the paper prints ``alpha = 1 / (1 + exp(-(a psi + b)))``, which with
``k = k_min + alpha (k_max - k_min)`` would *stiffen* the hand under contact; its text, its
experiment (Sec. III-C: the interaction factor rises while the stiffness decreases) and its
stability bound (the stiffness rises only while ``psi`` falls, at ``c_minus``) all need the
stiffness to fall as ``psi`` rises. The exponent's sign is flipped here so that the three agree;
``a``, ``b``, ``c_plus`` and ``c_minus`` keep the paper's values and meaning.

Stability (:class:`AdmittanceConfig` refuses a parameter set that breaks any of the three):

1. The paper's sufficient condition (Sec. II-E, after Kronander and Billard's conditions for a
   constant mass and varying damping and stiffness, with ``gamma = 2 zeta sqrt(k_min / m)``)::

       -a e^-b (k_max - k_min) c_minus / (1 + e^-b)^2 < 4 zeta k_min^1.5 / (sqrt(m) (1 + 4 zeta^2))

   The right side is the paper's stiffness-rate bound (below) at ``k_min`` with its ``gamma``;
   the paper's text copy prints the denominator as ``1 + 4 zeta sqrt(m)`` (m = 1 kg there), which
   is not dimensionally consistent; the substituted form is used.
2. The paper's stiffness-rate bound, ``k' < 2 gamma k^(3/2) / (sqrt(k) + 2 zeta gamma sqrt(m))``,
   checked over the whole role range rather than at ``psi = 0`` only: the closed form (1) takes
   the sigmoid's slope at ``psi = 0``, but the stiffness changes fastest at the transition
   (``a psi + b = 0``, slope ``a / 4``), so (1) alone can admit a set whose transition breaks the
   bound. Checked rigorously on 2000 intervals of ``psi`` (the largest slope of each interval
   against the bound at its smallest stiffness).
3. The discrete-time condition of the integrator (not in the paper, which works in continuous
   time): each period ``T`` the deviation is advanced by semi-implicit Euler,
   ``v += T (f - d v - k e) / m; e += T v``. Its update matrix has determinant ``1 - T d / m``
   and trace ``2 - T d / m - T^2 k / m``; by Jury's criterion it is stable (both eigenvalues
   inside the unit circle) iff ``T^2 k + 2 T d < 4 m``, tightest at ``k_max``::

       T^2 k_max + 4 zeta T sqrt(m k_max) < 4 m

   This one is exact for the frozen system: a period on or over it gives an eigenvalue on or
   outside the unit circle. A step longer than ``T`` is integrated in equal sub-steps of at
   most ``T``, so the condition holds for any ``dt``.

Scope: position only (the three translational degrees of freedom, the same law on each). The
paper applies the same law to the three rotational ones with torques [N m] and stiffnesses
[N m/rad]; this pipeline's hand targets are positions, so orientation is left out.

Defaults: the paper's values (``zeta`` 1.1, ``m`` 1 kg, ``k_min`` 10 N/m, ``k_max`` 500 N/m,
``a`` 20, ``b`` -5.5, ``c_minus`` -0.2 /s, ``c_plus`` 1.5 /s, a 25-sample moving average of the
force). The paper gives neither the force threshold nor the control period: 5 N and 0.01 s are
chosen here (``docs/method.md#variable-admittance``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
import enum
import math
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError
from pic_ros.motion.limiter import DEFAULT_MAX_DT
from pic_ros.schema import ParameterDef

FloatArray = npt.NDArray[np.float64]

MASS: Final = ParameterDef(
    'admittance_mass', 1.0, 'Virtual mass of the hand (each axis)', unit='kg',
    low=1e-3, high=1e3,
)
"""Virtual mass ``m`` (:attr:`AdmittanceConfig.mass`); paper: 1 kg."""

DAMPING_RATIO: Final = ParameterDef(
    'admittance_damping_ratio', 1.1,
    'Damping ratio kept constant as the stiffness varies: damping = 2 ratio sqrt(mass stiffness)',
    low=1e-3, high=100.0,
)
"""Damping ratio ``zeta`` (:attr:`AdmittanceConfig.damping_ratio`); paper: 1.1."""

STIFFNESS_COMPLIANT: Final = ParameterDef(
    'admittance_stiffness_compliant', 10.0,
    'Stiffness of the compliant (follower) role, when pushed', unit='N/m', low=1e-3, high=1e5,
)
"""Compliant stiffness ``k_min`` (:attr:`AdmittanceConfig.stiffness_compliant`); paper: 10 N/m."""

STIFFNESS_STIFF: Final = ParameterDef(
    'admittance_stiffness_stiff', 500.0,
    'Stiffness of the stiff (leader) role, when free (at least the compliant stiffness)',
    unit='N/m', low=1e-3, high=1e5,
)
"""Stiff stiffness ``k_max`` (:attr:`AdmittanceConfig.stiffness_stiff`); paper: 500 N/m."""

TRANSITION_GAIN: Final = ParameterDef(
    'admittance_transition_gain', 20.0,
    'Slope a of the role sigmoid in the interaction factor (higher: faster role change)',
    low=1e-3, high=1e3,
)
"""Sigmoid slope ``a`` (:attr:`AdmittanceConfig.transition_gain`); paper: 20."""

TRANSITION_OFFSET: Final = ParameterDef(
    'admittance_transition_offset', -5.5,
    'Offset b of the role sigmoid (the role changes where a psi + b = 0)', low=-1e3, high=1e3,
)
"""Sigmoid offset ``b`` (:attr:`AdmittanceConfig.transition_offset`); paper: -5.5."""

RISE_RATE: Final = ParameterDef(
    'admittance_rise_rate', 1.5,
    'Rate c+ of the interaction factor while the force is over the threshold (stiff to '
    'compliant)', unit='1/s', low=1e-3, high=1e3,
)
"""Interaction rise rate ``c_plus`` (:attr:`AdmittanceConfig.rise_rate`); paper: 1.5 /s."""

FALL_RATE: Final = ParameterDef(
    'admittance_fall_rate', -0.2,
    'Rate c- (negative) of the interaction factor while the force is at or under the threshold '
    '(compliant to stiff)', unit='1/s', low=-1e3, high=-1e-3,
)
"""Interaction fall rate ``c_minus`` < 0 (:attr:`AdmittanceConfig.fall_rate`); paper: -0.2 /s."""

FORCE_THRESHOLD: Final = ParameterDef(
    'admittance_force_threshold', 5.0,
    'Force magnitude above which the hand counts as pushed by a person', unit='N',
    low=0.0, high=1e4,
)
"""Interaction threshold ``F_thres`` (:attr:`AdmittanceConfig.force_threshold`); not in paper."""

FORCE_WINDOW: Final = ParameterDef(
    'admittance_force_window', 25,
    'Samples in the moving average of the measured force (1: no filtering)', low=1, high=1000,
)
"""Moving-average length (:attr:`AdmittanceConfig.force_window`); paper: 25 samples."""

PERIOD: Final = ParameterDef(
    'admittance_period', 0.01,
    'Longest integration step of the admittance (longer steps are split)', unit='s',
    low=1e-3, high=1.0,
)
"""Integration period ``T`` (:attr:`AdmittanceConfig.period`); not in the paper. At least 1 ms:
every frame is split into steps of at most ``T`` (100 per arm after a 0.1 s stall at 1 ms), and
at 1e-5 s two arms took 30 ms of CPU per 30 Hz frame (88 ms after a stall) for no gain at
tracker rates."""

ADMITTANCE_PARAMETERS: Final = (
    MASS, DAMPING_RATIO, STIFFNESS_COMPLIANT, STIFFNESS_STIFF, TRANSITION_GAIN, TRANSITION_OFFSET,
    RISE_RATE, FALL_RATE, FORCE_THRESHOLD, FORCE_WINDOW, PERIOD,
)
"""Everything :meth:`AdmittanceConfig.from_parameters` reads."""

_FIELDS: Final = {
    'admittance_mass': 'mass',
    'admittance_damping_ratio': 'damping_ratio',
    'admittance_stiffness_compliant': 'stiffness_compliant',
    'admittance_stiffness_stiff': 'stiffness_stiff',
    'admittance_transition_gain': 'transition_gain',
    'admittance_transition_offset': 'transition_offset',
    'admittance_rise_rate': 'rise_rate',
    'admittance_fall_rate': 'fall_rate',
    'admittance_force_threshold': 'force_threshold',
    'admittance_force_window': 'force_window',
    'admittance_period': 'period',
}

RATE_CHECK_INTERVALS: Final = 2000
"""Intervals of the interaction factor on which bound 2 is checked."""


def sigmoid_slope(z: FloatArray | float) -> FloatArray:
    """
    Return ``s (1 - s)`` of the logistic ``s = 1 / (1 + exp(z))``, without overflow.

    :param z: Sigmoid argument(s) ``a psi + b``.
    :return: ``1 / (4 cosh(z / 2)^2)``, in (0, 1/4], same shape as ``z``.
    """
    half = np.minimum(np.abs(np.asarray(z, dtype=float)) / 2.0, 350.0)
    return np.asarray(0.25 / np.cosh(half) ** 2, dtype=float)


def update_matrix(mass: float, damping: float, stiffness: float, period: float) -> FloatArray:
    """
    Return the matrix of one semi-implicit Euler step of ``m e'' + d e' + k e = 0``.

    :param mass: Virtual mass ``m`` [kg].
    :param damping: Damping ``d`` [N s/m].
    :param stiffness: Stiffness ``k`` [N/m].
    :param period: Step ``T`` [s].
    :return: ``A``, shape (2, 2), with ``(e, e')_next = A (e, e')`` for a zero force.
    """
    v_from_e = -period * stiffness / mass
    v_from_v = 1.0 - period * damping / mass
    return np.array([
        [1.0 + period * v_from_e, period * v_from_v],
        [v_from_e, v_from_v],
    ])


class RateBoundCheck(NamedTuple):
    """
    Where the stiffness rises fastest against the paper's rate bound (bound 2).

    :param interaction: Interaction factor ``psi`` of the worst interval's smaller end.
    :param stiffness_rate: Largest stiffness rise on that interval, ``k'`` [N/(m s)].
    :param bound: The paper's rate bound at the interval's smallest stiffness [N/(m s)].
    """

    interaction: float
    stiffness_rate: float
    bound: float


@dataclass(frozen=True)
class AdmittanceConfig:
    """
    Parameters of the variable admittance; refused when outside the stability bounds.

    See the module docstring for the law and the three bounds.

    :param mass: Virtual mass ``m``, in [1e-3, 1e3] [kg].
    :param damping_ratio: Damping ratio ``zeta``, in [1e-3, 100].
    :param stiffness_compliant: Compliant (follower) stiffness ``k_min``, in [1e-3, 1e5] [N/m].
    :param stiffness_stiff: Stiff (leader) stiffness ``k_max``, in [k_min, 1e5] [N/m].
    :param transition_gain: Sigmoid slope ``a``, in [1e-3, 1e3].
    :param transition_offset: Sigmoid offset ``b``, in [-1e3, 1e3].
    :param rise_rate: ``c_plus``, in [1e-3, 1e3] [1/s].
    :param fall_rate: ``c_minus``, in [-1e3, -1e-3] [1/s].
    :param force_threshold: ``F_thres``, in [0, 1e4] [N].
    :param force_window: Moving-average length, in [1, 1000] samples.
    :param period: Longest integration step ``T``, in [1e-3, 1] [s].
    :raises ConfigError: If a value is out of range, or the set breaks a stability bound (the
        message names the bound and gives both sides).
    """

    mass: float = MASS.default
    damping_ratio: float = DAMPING_RATIO.default
    stiffness_compliant: float = STIFFNESS_COMPLIANT.default
    stiffness_stiff: float = STIFFNESS_STIFF.default
    transition_gain: float = TRANSITION_GAIN.default
    transition_offset: float = TRANSITION_OFFSET.default
    rise_rate: float = RISE_RATE.default
    fall_rate: float = FALL_RATE.default
    force_threshold: float = FORCE_THRESHOLD.default
    force_window: int = FORCE_WINDOW.default
    period: float = PERIOD.default

    def __post_init__(self) -> None:
        for item in ADMITTANCE_PARAMETERS:
            name = _FIELDS[item.name]
            try:
                value = item.check(getattr(self, name))
            except ConfigError as error:
                raise ConfigError(str(error).replace(item.name, name, 1)) from None
            object.__setattr__(self, name, value)
        if self.stiffness_stiff < self.stiffness_compliant:
            raise ConfigError(
                f'stiffness_stiff must be in [{self.stiffness_compliant}, {STIFFNESS_STIFF.high}]'
                f' (at least stiffness_compliant), got {self.stiffness_stiff!r}'
            )
        self._check_closed_form_bound()
        self._check_rate_bound()
        self._check_discrete_bound()

    @classmethod
    def from_parameters(cls, values: Mapping[str, Any]) -> AdmittanceConfig:
        """
        Build the configuration from parameter values (:data:`ADMITTANCE_PARAMETERS`).

        :param values: Values by parameter name (``admittance_*``); missing ones take their
            defaults.
        :return: The configuration.
        :raises ConfigError: If a value is refused or the set breaks a stability bound.
        """
        return cls(**{
            _FIELDS[item.name]: item.check(values.get(item.name, item.default))
            for item in ADMITTANCE_PARAMETERS
        })

    # --- derived quantities ---------------------------------------------------------------

    @property
    def gamma(self) -> float:
        """Return the paper's Lyapunov weight ``gamma = 2 zeta sqrt(k_min / m)`` [1/s]."""
        return 2.0 * self.damping_ratio * math.sqrt(self.stiffness_compliant / self.mass)

    def damping(self, stiffness: float) -> float:
        """
        Return the damping that keeps the damping ratio at a stiffness.

        :param stiffness: Stiffness ``k`` [N/m].
        :return: ``2 zeta sqrt(m k)`` [N s/m].
        """
        return 2.0 * self.damping_ratio * math.sqrt(self.mass * stiffness)

    @property
    def damping_stiff(self) -> float:
        """Return the damping of the stiff role [N s/m]."""
        return self.damping(self.stiffness_stiff)

    @property
    def damping_compliant(self) -> float:
        """Return the damping of the compliant role [N s/m]."""
        return self.damping(self.stiffness_compliant)

    def role_factor(self, interaction: float) -> float:
        """
        Return the role factor ``alpha`` (1: stiff, 0: compliant) at an interaction factor.

        :param interaction: Interaction factor ``psi`` in [0, 1].
        :return: ``1 / (1 + exp(a psi + b))``, in (0, 1).
        """
        z = self.transition_gain * interaction + self.transition_offset
        return 0.5 * (1.0 - math.tanh(z / 2.0))  # the logistic, without overflow

    def stiffness(self, interaction: float) -> float:
        """
        Return the stiffness at an interaction factor.

        :param interaction: Interaction factor ``psi`` in [0, 1].
        :return: ``k_min + alpha (k_max - k_min)`` [N/m].
        """
        span = self.stiffness_stiff - self.stiffness_compliant
        return self.stiffness_compliant + self.role_factor(interaction) * span

    def rate_bound(self, stiffness: float | FloatArray) -> FloatArray:
        """
        Return the paper's bound on the stiffness rise rate at a stiffness (Sec. II-E).

        :param stiffness: Stiffness(es) ``k`` [N/m].
        :return: ``2 gamma k^(3/2) / (sqrt(k) + 2 zeta gamma sqrt(m))`` [N/(m s)].
        """
        k = np.asarray(stiffness, dtype=float)
        gamma = self.gamma
        root_m = math.sqrt(self.mass)
        return np.asarray(
            2.0 * gamma * k ** 1.5 / (np.sqrt(k) + 2.0 * self.damping_ratio * gamma * root_m),
            dtype=float,
        )

    def rate_bound_check(self) -> RateBoundCheck:
        """
        Compare the stiffness rise with the paper's rate bound over the whole role range.

        Rigorous on :data:`RATE_CHECK_INTERVALS` intervals of ``psi``: on each, the largest
        sigmoid slope (at ``a psi + b = 0`` if inside, else at the end nearer to it) against the
        bound at the interval's smallest stiffness (its larger ``psi``: the bound grows with
        ``k`` and ``k`` falls as ``psi`` rises).

        :return: The interval with the smallest margin.
        """
        edges = np.linspace(0.0, 1.0, RATE_CHECK_INTERVALS + 1)
        z = self.transition_gain * edges + self.transition_offset
        low, high = z[:-1], z[1:]
        nearest = np.where((low <= 0.0) & (high >= 0.0), 0.0, np.minimum(abs(low), abs(high)))
        span = self.stiffness_stiff - self.stiffness_compliant
        rise = -self.fall_rate * self.transition_gain * span * sigmoid_slope(nearest)
        smallest = self.stiffness_compliant + span * 0.5 * (1.0 - np.tanh(high / 2.0))
        bound = self.rate_bound(smallest)
        worst = int(np.argmin(bound - rise))
        return RateBoundCheck(float(edges[worst]), float(rise[worst]), float(bound[worst]))

    @property
    def max_stable_period(self) -> float:
        """Return the period at which the discrete bound (3) becomes an equality [s]."""
        omega = math.sqrt(self.stiffness_stiff / self.mass)
        zeta = self.damping_ratio
        return 2.0 * (math.sqrt(zeta * zeta + 1.0) - zeta) / omega

    # --- the three bounds -------------------------------------------------------------------

    def _check_closed_form_bound(self) -> None:
        zeta, k_min = self.damping_ratio, self.stiffness_compliant
        span = self.stiffness_stiff - k_min
        left = -self.transition_gain * span * self.fall_rate * float(
            sigmoid_slope(self.transition_offset)
        )
        right = 4.0 * zeta * k_min ** 1.5 / (math.sqrt(self.mass) * (1.0 + 4.0 * zeta * zeta))
        if not left < right:
            raise ConfigError(
                'admittance parameters outside the stability bound of Arduengo et al. (Sec. II-E,'
                ' sufficient condition): -a e^-b (k_max - k_min) c_minus / (1 + e^-b)^2 = '
                f'{left:.6g} N/(m s) must be < 4 zeta k_min^1.5 / (sqrt(m) (1 + 4 zeta^2)) = '
                f'{right:.6g} N/(m s)'
            )

    def _check_rate_bound(self) -> None:
        worst = self.rate_bound_check()
        if not worst.stiffness_rate < worst.bound:
            raise ConfigError(
                'admittance parameters outside the stability bound of Arduengo et al. (Sec. II-E,'
                ' stiffness-rate bound over the role range): at psi = '
                f'{worst.interaction:.4g} the stiffness rises at up to {worst.stiffness_rate:.6g}'
                ' N/(m s), must be < 2 gamma k^1.5 / (sqrt(k) + 2 zeta gamma sqrt(m)) = '
                f'{worst.bound:.6g} N/(m s)'
            )

    def _check_discrete_bound(self) -> None:
        period = self.period
        left = period**2 * self.stiffness_stiff + 2.0 * period * self.damping_stiff
        right = 4.0 * self.mass
        if not left < right:
            raise ConfigError(
                'admittance parameters outside the discrete-time stability bound of the '
                'semi-implicit Euler step (Jury): T^2 k_max + 2 T d_max = '
                f'{left:.6g} kg must be < 4 m = {right:.6g} kg (period {period!r} s; the '
                f'largest stable period is {self.max_stable_period:.6g} s)'
            )


class AdmittanceRole(enum.Enum):
    """Which role the hand plays (the side of the sigmoid the role factor is on)."""

    STIFF = 'stiff'
    """The paper's leader: role factor >= 1/2, the hand tracks the imitation target closely."""

    COMPLIANT = 'compliant'
    """The paper's follower: role factor < 1/2, the hand yields to the person pushing it."""


class AdmittanceInput(enum.Enum):
    """What happened to the inputs of one :meth:`VariableAdmittance.step`."""

    ACCEPTED = 'accepted'
    """Target, force and time step used (a time step over ``max_dt`` is cut, see ``dt``)."""

    BAD_TARGET = 'bad_target'
    """Rejected: the target is not 3 finite numbers; nothing changed."""

    BAD_FORCE = 'bad_force'
    """Rejected: the force is not 3 finite numbers; nothing changed."""

    BAD_DT = 'bad_dt'
    """Rejected: the time step is not a finite number > 0; nothing changed."""


class AdmittanceStep(NamedTuple):
    """
    The state after one step of :class:`VariableAdmittance` (arrays read-only, base frame).

    :param status: What happened to the inputs; on a rejection the state is as before.
    :param position: Commanded hand position, target + deviation, shape (3,) [m]; None until a
        target has been accepted.
    :param target: The imitation target in use, shape (3,) [m]; None until one is accepted.
    :param deviation: Deviation ``e`` from the target, shape (3,) [m].
    :param velocity: Its rate ``e'``, shape (3,) [m/s].
    :param force: Filtered external force driving the deviation, shape (3,) [N].
    :param interaction: Interaction factor ``psi``, in [0, 1].
    :param role_factor: Role factor ``alpha``, in (0, 1) (1: stiff).
    :param role: Stiff (``alpha >= 1/2``) or compliant.
    :param mass: Virtual mass [kg].
    :param damping: Damping in use [N s/m].
    :param stiffness: Stiffness in use [N/m].
    :param dt: Time integrated by this step [s] (0 on a rejection).
    """

    status: AdmittanceInput
    position: FloatArray | None
    target: FloatArray | None
    deviation: FloatArray
    velocity: FloatArray
    force: FloatArray
    interaction: float
    role_factor: float
    role: AdmittanceRole
    mass: float
    damping: float
    stiffness: float
    dt: float


def finite_vector3(values: npt.ArrayLike) -> FloatArray | None:
    """
    Read a 3-vector input that must not raise (a force, a target).

    :param values: Anything array-like.
    :return: A new float array of shape (3,) when it is 3 finite numbers, else None.
    """
    try:
        array = np.array(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return None
    if array.shape != (3,) or not np.isfinite(array).all():
        return None
    return array


def _frozen(array: FloatArray) -> FloatArray:
    copy = array.copy()
    copy.setflags(write=False)
    return copy


class VariableAdmittance:
    """
    The hand's variable admittance around the imitation target (see the module docstring).

    Guarantees, for a configuration the bounds admit: with no force the deviation decays to 0
    (the hand returns to the target); a bounded force gives a bounded deviation; the same
    inputs from the same state give the same outputs; a rejected input changes nothing.

    Call :meth:`step` once per control period with the imitation target, the measured force and
    the time since the previous call. Times are passed in (the core never reads a clock).

    :param config: Parameters (defaults: the paper's).
    """

    def __init__(self, config: AdmittanceConfig | None = None) -> None:
        self._config = AdmittanceConfig() if config is None else config
        self._forces: deque[FloatArray] = deque(maxlen=self._config.force_window)
        self._deviation = np.zeros(3)
        self._velocity = np.zeros(3)
        self._force = np.zeros(3)
        self._interaction = 0.0
        self._target: FloatArray | None = None

    @property
    def config(self) -> AdmittanceConfig:
        """Return the parameters."""
        return self._config

    def reset(self) -> None:
        """Forget everything: no deviation, at rest, stiff, empty force filter, no target."""
        self._forces.clear()
        self._deviation = np.zeros(3)
        self._velocity = np.zeros(3)
        self._force = np.zeros(3)
        self._interaction = 0.0
        self._target = None

    def step(self, target: npt.ArrayLike, force: npt.ArrayLike, dt: float) -> AdmittanceStep:
        """
        Advance the deviation by ``dt`` under a force and return the commanded hand position.

        Never raises on bad input: a rejected input is reported in the result's ``status`` and
        leaves the state (force filter included) unchanged.

        :param target: Imitation target of the hand, shape (3,) [m], robot base frame.
        :param force: External force on the hand, shape (3,) [N], base frame, gravity
            compensated (the wrist sensor's reading of the tool's weight removed).
        :param dt: Time since the previous step [s], finite and > 0; cut to ``max_dt``
            (:data:`~pic_ros.motion.limiter.DEFAULT_MAX_DT`) and integrated in sub-steps of at
            most the configured period.
        :return: The new state and the commanded position.
        """
        target_array = finite_vector3(target)
        if target_array is None:
            return self._result(AdmittanceInput.BAD_TARGET, 0.0)
        force_array = finite_vector3(force)
        if force_array is None:
            return self._result(AdmittanceInput.BAD_FORCE, 0.0)
        if isinstance(dt, bool) or not isinstance(dt, (int, float)):
            return self._result(AdmittanceInput.BAD_DT, 0.0)
        if not math.isfinite(dt) or dt <= 0.0:
            return self._result(AdmittanceInput.BAD_DT, 0.0)
        span = min(float(dt), DEFAULT_MAX_DT)
        self._target = target_array
        self._forces.append(force_array)
        self._force = np.mean(np.stack(self._forces), axis=0)
        config = self._config
        pushed = float(np.linalg.norm(self._force)) > config.force_threshold
        rate = config.rise_rate if pushed else config.fall_rate
        count = max(1, math.ceil(span / config.period - 1e-9))
        h = span / count
        for _ in range(count):
            self._interaction = min(1.0, max(0.0, self._interaction + rate * h))
            stiffness = config.stiffness(self._interaction)
            damping = config.damping(stiffness)
            acceleration = (
                self._force - damping * self._velocity - stiffness * self._deviation
            ) / config.mass
            self._velocity = self._velocity + h * acceleration
            self._deviation = self._deviation + h * self._velocity
        return self._result(AdmittanceInput.ACCEPTED, span)

    def _result(self, status: AdmittanceInput, dt: float) -> AdmittanceStep:
        config = self._config
        alpha = config.role_factor(self._interaction)
        stiffness = config.stiffness(self._interaction)
        target = None if self._target is None else _frozen(self._target)
        position = None if self._target is None else _frozen(self._target + self._deviation)
        return AdmittanceStep(
            status=status,
            position=position,
            target=target,
            deviation=_frozen(self._deviation),
            velocity=_frozen(self._velocity),
            force=_frozen(self._force),
            interaction=self._interaction,
            role_factor=alpha,
            role=AdmittanceRole.STIFF if alpha >= 0.5 else AdmittanceRole.COMPLIANT,
            mass=config.mass,
            damping=config.damping(stiffness),
            stiffness=stiffness,
            dt=dt,
        )
