"""
The body of a synthetic person: segment lengths and offsets of the rigid-segment skeleton.

:class:`BodyModel` holds the lengths (metres) of the bones of
:data:`~pic_ros_tools.synthetic.skeleton.BONES`; its defaults are a 1.75 m person calibrated on
the PIC recordings (:data:`BODY`). :func:`scaled_body` makes other people from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class BodyModel:
    """
    Segment lengths and offsets of the synthetic person, calibrated on the PIC recordings.

    All values in metres. Offsets are in the chest or pelvis frame (x forward, y left, z up).

    :param pelvis_height: Height of SpineBase above the floor.
    :param lower_spine: SpineBase to SpineMid.
    :param upper_spine: SpineMid to SpineShoulder.
    :param neck: SpineShoulder to Neck.
    :param head: Neck to Head.
    :param shoulder_half_width: Sideways offset of each shoulder from SpineShoulder (the
        shoulder-to-shoulder width is twice this).
    :param shoulder_drop: Downward offset of the shoulders from SpineShoulder.
    :param upper_arm: Shoulder to elbow.
    :param forearm: Elbow to wrist.
    :param hand: Wrist to HandTip's parent, the Hand joint.
    :param hand_tip: Hand to HandTip.
    :param thumb: Wrist to Thumb.
    :param hip_half_width: Sideways offset of each hip from SpineBase.
    :param hip_drop: Downward offset of the hips from SpineBase.
    :param thigh: Hip to knee.
    :param shank: Knee to ankle.
    :param foot: Ankle to foot.
    """

    pelvis_height: float = 1.00
    lower_spine: float = 0.26
    upper_spine: float = 0.19
    neck: float = 0.062
    head: float = 0.135
    shoulder_half_width: float = 0.165
    shoulder_drop: float = 0.04
    upper_arm: float = 0.25
    forearm: float = 0.22
    hand: float = 0.065
    hand_tip: float = 0.085
    thumb: float = 0.075
    hip_half_width: float = 0.075
    hip_drop: float = 0.025
    thigh: float = 0.45
    shank: float = 0.42
    foot: float = 0.13

    @property
    def bones(self) -> FloatArray:
        """
        Return the length of every bone of :data:`~pic_ros_tools.synthetic.skeleton.BONES`.

        :return: New array, shape (24,), [m], in :data:`~pic_ros_tools.synthetic.skeleton.BONES`
            order.
        """
        shoulder = float(np.hypot(self.shoulder_half_width, self.shoulder_drop))
        hip = float(np.hypot(self.hip_half_width, self.hip_drop))
        arm = [shoulder, self.upper_arm, self.forearm, self.hand, self.hand_tip, self.thumb]
        leg = [hip, self.thigh, self.shank, self.foot]
        spine = [self.lower_spine, self.upper_spine, self.neck, self.head]
        return np.array(spine + arm + arm + leg + leg, dtype=np.float64)


BODY: Final = BodyModel()
"""The body of the generated person."""

REFERENCE_HEIGHT: Final = 1.75
"""Height [m] of the person whose segment lengths are the :class:`BodyModel` defaults."""


def scaled_body(
    height: float, upper_arm_factor: float, forearm_factor: float, shoulder_width_factor: float
) -> BodyModel:
    """
    Scale the default body to a height, then apply the arm and shoulder factors.

    :param height: Body height [m]; every segment scales by ``height / REFERENCE_HEIGHT``.
    :param upper_arm_factor: Factor on the scaled upper-arm length.
    :param forearm_factor: Factor on the scaled forearm length.
    :param shoulder_width_factor: Factor on the scaled shoulder half-width.
    :return: The person's segment lengths [m].
    """
    default = BodyModel()
    scale = height / REFERENCE_HEIGHT
    scaled = {
        name: scale * float(getattr(default, name)) for name in default.__dataclass_fields__
    }
    scaled['upper_arm'] *= upper_arm_factor
    scaled['forearm'] *= forearm_factor
    scaled['shoulder_half_width'] *= shoulder_width_factor
    return BodyModel(**scaled)
