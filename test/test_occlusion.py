"""The PIC paper's occlusion metric (PO): capsules on hand-built ROIs, the paper's task configs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from pic_ros.exceptions import ConfigError, RecordingError
from pic_ros.robot import load_robot
from pic_ros.solvers import SolverConfig
from pic_ros_tools.catalog import recording_pads
from pic_ros_tools.evaluation import evaluate_one
from pic_ros_tools.occlusion import covered_fraction, RegionOfInterest, TaskPlane
from pic_ros_tools.occlusion_report import occlusion_table
from pic_ros_tools.occlusion_scores import occlusion_figures, PAPER_PO
from pic_ros_tools.recordings.demonstration import Demonstration
from pic_ros_tools.recordings.paper import load_paper_demonstration
from pic_ros_tools.recordings.paper_task import load_paper_pad, PaperPad, SIM_TO_TRACKER
import pytest

SQUARE = RegionOfInterest(TaskPlane((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), 1.0, 1.0)
"""A unit square in the z = 0 plane, corner at the origin."""

RADIUS = 0.05


def _exact(roi, starts, ends, radii, expected):
    """Assert that the covered share is ``expected`` within the stated error bound."""
    coverage = covered_fraction(roi, starts, ends, radii)
    assert abs(coverage.fraction - expected) <= coverage.error_bound + 1e-12
    assert coverage.error_bound < 0.02
    return coverage


def test_a_capsule_across_the_roi_covers_a_band_of_its_diameter():
    """A link lying across the whole square, above it, covers a 2 r wide band."""
    _exact(SQUARE, [(-1.0, 0.5, 0.3)], [(2.0, 0.5, 0.3)], RADIUS, 2 * RADIUS)


def test_a_diagonal_capsule_covers_the_band_along_the_diagonal():
    """Corner to corner: the square minus two right triangles of leg 1 - r sqrt(2)."""
    leg = 1.0 - RADIUS * math.sqrt(2.0)
    _exact(SQUARE, [(-1.0, -1.0, 0.0)], [(2.0, 2.0, 0.0)], RADIUS, 1.0 - leg**2)


def test_a_capsule_outside_the_roi_covers_nothing():
    """Beside the square, and above a point beside it: nothing covered, no error."""
    for start, end in (((1.2, 0.0, 0.0), (1.2, 1.0, 0.0)), ((2.0, 2.0, -1.0), (2.0, 2.0, 1.0))):
        coverage = covered_fraction(SQUARE, [start], [end], RADIUS)
        assert coverage.fraction == 0.0


def test_a_capsule_ending_inside_covers_half_a_band_and_half_a_disc():
    """From the centre outwards: a rectangle 0.5 x 2 r plus the half disc at its inner end."""
    expected = 0.5 * 2 * RADIUS + 0.5 * math.pi * RADIUS**2
    _exact(SQUARE, [(0.5, 0.5, 0.0)], [(5.0, 0.5, 0.0)], RADIUS, expected)


def test_a_tilted_capsule_inside_covers_its_rectangle_and_two_half_discs():
    """A free segment inside: length x 2 r + pi r^2, whatever its direction."""
    length = math.hypot(0.5, 0.3)
    expected = length * 2 * RADIUS + math.pi * RADIUS**2
    _exact(SQUARE, [(0.2, 0.3, -0.2)], [(0.7, 0.6, -0.2)], RADIUS, expected)


def test_a_capsule_perpendicular_to_the_plane_covers_a_disc():
    """Along the normal (and a sphere, both ends equal): the projection is a disc."""
    disc = math.pi * 0.1**2
    _exact(SQUARE, [(0.5, 0.5, -1.0)], [(0.5, 0.5, 1.0)], 0.1, disc)
    _exact(SQUARE, [(0.5, 0.5, 0.4)], [(0.5, 0.5, 0.4)], 0.1, disc)


def test_overlapping_capsules_are_counted_once():
    """The same band twice at two heights, and a cross: the union's area, not the sum."""
    band = 2 * RADIUS
    _exact(
        SQUARE, [(-1.0, 0.5, 0.0), (-1.0, 0.5, 1.0)], [(2.0, 0.5, 0.0), (2.0, 0.5, 1.0)],
        [RADIUS, RADIUS], band,
    )
    _exact(
        SQUARE, [(-1.0, 0.5, 0.0), (0.5, -1.0, 0.0)], [(2.0, 0.5, 0.0), (0.5, 2.0, 0.0)],
        RADIUS, 2 * band - band**2,
    )


def test_a_capsule_covering_everything_gives_one():
    """A capsule thicker than the square covers all of it, never more."""
    coverage = covered_fraction(SQUARE, [(0.5, 0.5, 0.0)], [(0.6, 0.5, 0.0)], 2.0)
    assert coverage.fraction == pytest.approx(1.0)
    assert coverage.fraction <= 1.0


def test_the_share_does_not_depend_on_where_the_plane_is(rng):
    """Turning and moving the ROI and the capsules together keeps the share."""
    starts = rng.uniform(-0.2, 1.2, size=(4, 3))
    ends = rng.uniform(-0.2, 1.2, size=(4, 3))
    radii = rng.uniform(0.02, 0.1, size=4)
    rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    rotation *= np.sign(np.linalg.det(rotation))
    shift = rng.normal(size=3)
    first = covered_fraction(SQUARE, starts, ends, radii)
    moved = covered_fraction(
        SQUARE.moved(rotation, shift), starts @ rotation.T + shift, ends @ rotation.T + shift,
        radii,
    )
    assert abs(first.fraction - moved.fraction) <= first.error_bound + moved.error_bound
    assert 0.0 < first.fraction < 1.0


def test_the_error_bound_holds_against_a_finer_integration(rng):
    """Fifty overlapping capsules: coarse and fine rows agree within their bounds."""
    starts = rng.uniform(-0.2, 1.2, size=(50, 3))
    ends = starts + rng.normal(0.0, 0.1, size=(50, 3))
    radii = rng.uniform(0.002, 0.07, size=50)
    coarse = covered_fraction(SQUARE, starts, ends, radii, rows=200)
    fine = covered_fraction(SQUARE, starts, ends, radii, rows=8000)
    assert abs(coarse.fraction - fine.fraction) <= coarse.error_bound + fine.error_bound
    assert fine.error_bound < coarse.error_bound


def test_the_share_does_not_depend_on_the_scale():
    """The same scene twice as large covers the same share of a twice-as-large ROI."""
    starts, ends = [(0.1, 0.2, 0.0), (0.3, 0.9, 0.5)], [(0.8, 0.4, 0.2), (0.6, 0.1, 0.0)]
    first = covered_fraction(SQUARE, starts, ends, [0.05, 0.08])
    double = covered_fraction(
        SQUARE.moved(np.eye(3), np.zeros(3), 2.0), 2 * np.array(starts), 2 * np.array(ends),
        [0.1, 0.16],
    )
    assert double.fraction == pytest.approx(first.fraction, abs=1e-9)


def test_untracked_links_are_skipped():
    """A link with a NaN end adds nothing."""
    coverage = covered_fraction(
        SQUARE, [(np.nan, 0.5, 0.0), (-1.0, 0.5, 0.0)], [(2.0, 0.5, 0.0), (2.0, 0.5, 0.0)], RADIUS
    )
    assert abs(coverage.fraction - 2 * RADIUS) <= coverage.error_bound


def test_over_tells_which_points_project_inside():
    """Points above the square are over it whatever their height; NaN is not."""
    points = np.array([(0.5, 0.5, 3.0), (1.5, 0.5, 0.0), (0.5, -0.1, 0.0), (np.nan, 0.5, 0.0)])
    assert SQUARE.over(points).tolist() == [True, False, False, False]


@pytest.mark.parametrize(
    'build',
    [
        lambda: TaskPlane((0, 0, 0), (1, 0, 0), (1, 1, 0)),
        lambda: TaskPlane((0, 0, 0), (2, 0, 0), (0, 1, 0)),
        lambda: TaskPlane((0, 0, np.nan), (1, 0, 0), (0, 1, 0)),
        lambda: RegionOfInterest(SQUARE.plane, 0.0, 1.0),
        lambda: RegionOfInterest(SQUARE.plane, 1.0, math.inf),
    ],
)
def test_invalid_planes_and_regions_are_refused(build):
    """Axes that are not unit or orthogonal, non-finite points, empty extents: ConfigError."""
    with pytest.raises(ConfigError):
        build()


PUBLISHED = {
    # robot config (pic_method.md section 3.4): (scale, pad_dim, pad_axis, pad_offset) and the
    # ROI the authors' evaluation used, robot cm: origin corner, u axis, width, v axis, height
    'baxter_config_incision_straight3.json': (
        2.1, [25, 2.3, 25], [1, 0, 0], [8.2, -83.8, 35.5],
        ((-18.05, -81.385, 9.25), 0, 52.5, 2, 52.5),
    ),
    'yumi_config_assembly1.json': (
        1.7, [60, 0.2, 40], [1, 0, 0], [10.7, -70, 25.5],
        ((-40.3, -69.83, -8.5), 0, 102.0, 2, 68.0),
    ),
    'baxter_config_assembly2.json': (
        2.1, [40, 60, 0.2], [0, 1, 0], [26.5, -18.7, 96],
        ((-36.5, -60.7, 96.21), 0, 126.0, 1, 84.0),
    ),
    'baxter_config_assembly3.json': (
        2.1, [30, 0.2, 40], [0, 1, 0], [-56.2, -13.5, 27.6],
        ((-55.99, -45.0, -14.4), 1, 63.0, 2, 84.0),
    ),
}


def _check_region(pad: PaperPad, expected) -> None:
    origin, u_index, width, v_index, height = expected
    region = pad.robot_region()
    assert np.allclose(100 * region.plane.origin, origin, atol=1e-9)
    assert np.allclose(region.plane.u_axis, np.eye(3)[u_index])
    assert np.allclose(region.plane.v_axis, np.eye(3)[v_index])
    assert 100 * region.width == pytest.approx(width)
    assert 100 * region.height == pytest.approx(height)


@pytest.mark.parametrize('name', sorted(PUBLISHED))
def test_each_pad_face_is_the_one_the_paper_used(tmp_path: Path, name: str):
    """Top face, vertical y-z face, vertical x-y face: origins and extents as published."""
    scale, dims, axis, offset, expected = PUBLISHED[name]
    path = tmp_path / name
    path.write_text(json.dumps(
        {'scale': scale, 'pad_dim': dims, 'pad_axis': axis, 'pad_offset': offset, 'arm': []}
    ))
    pad = load_paper_pad(path)
    assert pad is not None
    _check_region(pad, expected)


def test_the_shared_paper_configs_are_read_as_published(shared_data: Path):
    """The ten paper configs in the shared data give the ROIs of pic_method.md section 3.4."""
    folder = shared_data / 'pic_demos' / 'paper_configs'
    if not folder.is_dir():
        pytest.skip(f'the PIC paper configs are not in {folder}')
    for name, (_, _, _, _, expected) in PUBLISHED.items():
        pad = load_paper_pad(folder / name)
        assert pad is not None, name
        _check_region(pad, expected)
    assert len(list(folder.glob('*_config_*.json'))) == 10
    for path in folder.glob('*_config_*.json'):
        assert load_paper_pad(path) is not None


def test_a_paper_text_recording_finds_its_task_surfaces_in_the_configs_beside_it(tmp_path: Path):
    """``evaluate --live`` of a *_skel.txt: its robots' pads from paper_configs beside it."""
    scale, dims, axis, offset, _ = PUBLISHED['baxter_config_incision_straight3.json']
    configs = tmp_path / 'paper_configs'
    configs.mkdir()
    (configs / 'baxter_config_cut1.json').write_text(json.dumps(
        {'scale': scale, 'pad_dim': dims, 'pad_axis': axis, 'pad_offset': offset, 'arm': []}
    ))
    (configs / 'yumi_config_cut1.json').write_text(json.dumps({'arm': []}))
    pads = recording_pads(str(tmp_path / 'cut1_skel.txt'))
    assert set(pads) == {'baxter'} and pads['baxter'].scale == scale
    assert recording_pads(str(tmp_path / 'cut2_skel.txt')) == {}
    assert recording_pads('demo') == recording_pads(str(tmp_path / 'a_bag')) == {}


def test_a_config_without_a_pad_has_no_task_surface(tmp_path: Path):
    """The synthetic demo's config has task arms only: no pad."""
    path = tmp_path / 'x_config.json'
    path.write_text(json.dumps({'arm': ['right']}))
    assert load_paper_pad(path) is None
    path.write_text(json.dumps({'scale': 2, 'pad_dim': [1, 2], 'pad_axis': [1, 0, 0],
                                'pad_offset': [0, 0, 0]}))
    with pytest.raises(RecordingError):
        load_paper_pad(path)


def test_the_incision_pad_lies_below_and_in_front_of_the_right_shoulder():
    """In the tracker frame (x away from the sensor, z up) the pad is below, nearer the sensor."""
    scale, dims, axis, offset, _ = PUBLISHED['baxter_config_incision_straight3.json']
    pad = PaperPad(scale=scale, dims=tuple(dims), axis=tuple(axis), centre=tuple(offset))
    shoulder = np.array([1.9, -0.2, 0.4])
    region = pad.tracker_region(shoulder)
    centre = region.plane.origin + 0.5 * (
        region.width * region.plane.u_axis + region.height * region.plane.v_axis
    )
    assert np.allclose(np.abs(region.plane.normal), (0.0, 0.0, 1.0))  # horizontal
    assert centre[2] < shoulder[2] - 0.3  # about 40 cm below at the person's size
    assert centre[0] < shoulder[0] - 0.1  # in front of the person, towards the sensor
    assert region.width == pytest.approx(0.25) and region.height == pytest.approx(0.25)
    assert np.isclose(np.linalg.det(SIM_TO_TRACKER), 1.0)


def test_a_recording_without_a_task_surface_has_no_po():
    """No pad in the recording's configs: no PO fields in the record."""
    demonstration = Demonstration(name='none', frames=(), segments=(), task_arms=())
    assert occlusion_figures(None, demonstration, load_robot('yumi')) == {}


def test_po_on_the_real_incision_recording(shared_data: Path):
    """PIC on the straight incision: a PO for the person and the robot on wrist-over-pad frames."""
    folder = shared_data / 'pic_demos'
    if not (folder / 'incision_straight3_skel.txt').is_file():
        pytest.skip(f'the PIC demonstrations are not in {folder}')
    demonstration = Demonstration.from_paper(
        load_paper_demonstration(folder, 'incision_straight3')
    )
    assert set(demonstration.pads) == {'baxter', 'yumi'}
    robot = load_robot('yumi')
    record = evaluate_one(robot, demonstration, SolverConfig(name='pic'))
    assert record['po_frames'] > 0
    assert len(record['segment_po_robot']) == len(record['segment_po_human']) == 10
    for key in ('po_human', 'po_robot'):
        assert 0.0 < record[key] < 1.0
        assert record[f'{key}_std'] >= 0.0
    assert 0.0 <= record['po_error'] < 0.05
    table = occlusion_table([record])
    assert 'incision_straight3 (I-S)' in table
    assert f"[{100 * PAPER_PO[('yumi', 'I-S')][1]:.1f}]" in table  # the paper's PIC value
