"""Tests of the marker-based tracker formats and of the decoding of one marker array."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from pic_ros.exceptions import ConfigError, SkeletonError
from pic_ros.human.body_frame import body_axes, to_body_frame
from pic_ros.human.front_end import SkeletonFrontEnd
from pic_ros.skeleton import BODY_JOINT_COUNT, HumanJoint, JOINT_COUNT, Side
from pic_ros.trackers import make_tracker
from pic_ros.trackers.frames import DropReason
from pic_ros.trackers.kinect_v2 import (
    camera_to_tracker,
    CAMERA_TO_TRACKER_ROTATION,
    KINECT_V2_TO_HUMAN,
)
from pic_ros.trackers.markers import (
    azure_camera_to_tracker,
    AZURE_KINECT,
    AZURE_KINECT_JOINTS,
    AZURE_KINECT_TO_HUMAN,
    decode_joints,
    decode_markers,
    KINECT_V2,
    MarkerCounts,
    MAX_BODIES,
    TRACKER_FORMATS,
    TrackerFormat,
)
from pic_ros_tools.recordings.kinect_v2_text import KINECT_V2_ROWS, kinect_v2_to_human
import pytest

FloatArray = npt.NDArray[np.float64]

BAG_TOPIC = '/kinect2/body_tracking_data'
BAG_MESSAGES = 933
BAG_EMPTY = 60
BAG_BODY = 9
K4 = {name: index for index, name in enumerate(AZURE_KINECT_JOINTS)}


class BagMessage(NamedTuple):
    """One MarkerArray of the bag as the ROS layer hands it over."""

    ids: npt.NDArray[np.int64]
    positions: FloatArray
    stamp: float
    frame_ids: frozenset[str]


@pytest.fixture(scope='module')
def azure_bag(shared_data: Path) -> list[BagMessage]:
    """Read every body-tracking MarkerArray of the real Azure Kinect bag, in order."""
    highlevel = pytest.importorskip('rosbags.highlevel')
    messages = []
    with highlevel.AnyReader([shared_data / 'azure_kinect' / 'body_tracking_ergonomics']) as bag:
        connections = [c for c in bag.connections if c.topic == BAG_TOPIC]
        for connection, log_time, raw in bag.messages(connections=connections):
            markers = bag.deserialize(raw, connection.msgtype).markers
            ids = np.array([marker.id for marker in markers], dtype=np.int64)
            points = [[m.pose.position.x, m.pose.position.y, m.pose.position.z] for m in markers]
            if markers:
                header = markers[0].header
                stamp = header.stamp.sec + 1e-9 * header.stamp.nanosec
            else:
                stamp = 1e-9 * log_time  # unused by the front end for an empty array
            messages.append(
                BagMessage(
                    ids=ids,
                    positions=np.array(points, dtype=float).reshape(-1, 3),
                    stamp=stamp,
                    frame_ids=frozenset(marker.header.frame_id for marker in markers),
                )
            )
    return messages


def _azure_markers(
    camera_joints: npt.ArrayLike, body: int = 1
) -> tuple[npt.NDArray[np.int64], FloatArray]:
    """Marker ids and positions of one body given its joints, shape (J, 3), camera frame."""
    points = np.asarray(camera_joints, dtype=float)
    return body * 100 + np.arange(points.shape[0]), points


def _facing_person(distance: float = 2.0) -> FloatArray:
    """
    Return the 32 Azure joints of a person ``distance`` [m] in front of the camera, facing it.

    Depth camera frame: x right, y down, z forward. The person faces the camera, so their left
    side is on the camera's right (+x); elbows are bent towards the camera (smaller z).
    """
    joints = np.zeros((32, 3))
    joints[:, 2] = distance
    joints[K4['PELVIS']] = [0.0, 0.2, distance]
    joints[K4['SPINE_CHEST']] = [0.0, -0.2, distance]
    joints[K4['NECK']] = [0.0, -0.35, distance]
    joints[K4['HEAD']] = [0.0, -0.5, distance]
    for sign, side in ((1.0, 'LEFT'), (-1.0, 'RIGHT')):
        joints[K4[f'SHOULDER_{side}']] = [sign * 0.18, -0.3, distance]
        joints[K4[f'ELBOW_{side}']] = [sign * 0.22, -0.05, distance - 0.1]
        joints[K4[f'WRIST_{side}']] = [sign * 0.22, -0.05, distance - 0.35]
        joints[K4[f'HAND_{side}']] = [sign * 0.22, -0.05, distance - 0.43]
    return joints


# --- formats and axes ------------------------------------------------------------------------


def test_azure_joint_table_follows_the_k4abt_order() -> None:
    """32 K4ABT names in index order; the human rows come from the documented indices."""
    assert len(AZURE_KINECT_JOINTS) == AZURE_KINECT.joint_count == 32
    assert AZURE_KINECT_JOINTS[0] == 'PELVIS' and AZURE_KINECT_JOINTS[26] == 'HEAD'
    assert AZURE_KINECT_JOINTS[31] == 'EAR_RIGHT'
    assert AZURE_KINECT_TO_HUMAN[:12] == (0, 2, 3, 26, 5, 6, 7, 8, 12, 13, 14, 15)
    assert AZURE_KINECT_TO_HUMAN[12:] == (27, 29, 31, 9, 10, 16, 17)
    for joint in HumanJoint:
        source = AZURE_KINECT_TO_HUMAN[joint]
        assert source is not None
        assert AZURE_KINECT_JOINTS[source] == joint.name.replace('HAND_TIP', 'HANDTIP')


def test_appended_rows_keep_the_body_indices() -> None:
    """The 12 body rows keep their indices; the face and finger rows follow them."""
    assert [joint.name for joint in HumanJoint][:12] == [
        'PELVIS', 'SPINE_CHEST', 'NECK', 'HEAD', 'SHOULDER_LEFT', 'ELBOW_LEFT', 'WRIST_LEFT',
        'HAND_LEFT', 'SHOULDER_RIGHT', 'ELBOW_RIGHT', 'WRIST_RIGHT', 'HAND_RIGHT',
    ]
    assert [(joint.name, int(joint)) for joint in HumanJoint][12:] == [
        ('NOSE', 12), ('EAR_LEFT', 13), ('EAR_RIGHT', 14), ('HAND_TIP_LEFT', 15),
        ('THUMB_LEFT', 16), ('HAND_TIP_RIGHT', 17), ('THUMB_RIGHT', 18),
    ]
    assert JOINT_COUNT == 19 and BODY_JOINT_COUNT == 12


def test_azure_kinect_fills_every_row_on_the_persons_own_side() -> None:
    """Azure Kinect fills all 19 rows; left ears and fingers sit on the left shoulder's side."""
    joints = _facing_person(2.0)
    for sign, side in ((1.0, 'LEFT'), (-1.0, 'RIGHT')):
        joints[K4[f'EAR_{side}']] = [sign * 0.075, -0.52, 2.02]
        joints[K4[f'HANDTIP_{side}']] = [sign * 0.22, -0.05, 2.0 - 0.52]
        joints[K4[f'THUMB_{side}']] = [sign * 0.17, -0.03, 2.0 - 0.41]
    joints[K4['NOSE']] = [0.0, -0.47, 1.9]
    frame = decode_markers(AZURE_KINECT, 100 + np.arange(32), joints, stamp=1.0)[1]
    assert frame.valid.all()
    body = to_body_frame(frame)
    for side, sign in ((Side.LEFT, 1.0), (Side.RIGHT, -1.0)):
        ear = HumanJoint.EAR_LEFT if side is Side.LEFT else HumanJoint.EAR_RIGHT
        tip = HumanJoint.HAND_TIP_LEFT if side is Side.LEFT else HumanJoint.HAND_TIP_RIGHT
        assert sign * body.positions[ear, 1] > 0.0
        assert sign * body.positions[tip, 1] > 0.0
    assert body.positions[HumanJoint.NOSE, 0] > body.positions[HumanJoint.EAR_LEFT, 0]


def test_kinect_v2_leaves_only_the_face_rows_invalid(rng: np.random.Generator) -> None:
    """Kinect v2 markers fill every row but the nose and ears, which have no Kinect v2 source."""
    joints = rng.uniform(-0.5, 0.5, size=(25, 3)) + [0.0, 0.0, 2.0]
    frame = decode_markers(KINECT_V2, 700 + np.arange(25), joints, stamp=3.5)[7]
    face = [HumanJoint.NOSE, HumanJoint.EAR_LEFT, HumanJoint.EAR_RIGHT]
    assert not frame.valid[face].any() and np.isnan(frame.positions[face]).all()
    assert frame.valid[[joint for joint in HumanJoint if joint not in face]].all()
    assert [KINECT_V2_TO_HUMAN[joint] for joint in face] == [None, None, None]


def test_markers_of_the_twelve_body_joints_only_decode_with_the_extra_rows_invalid() -> None:
    """An older array with markers for the 12 body joints only still gives a frame."""
    joints = _facing_person(2.0)
    ids = 100 + np.array(AZURE_KINECT_TO_HUMAN[:12])
    frame = decode_markers(AZURE_KINECT, ids, joints[ids - 100], stamp=1.0)[1]
    assert frame.valid[:12].all() and not frame.valid[12:].any()


def test_a_format_may_leave_extra_rows_without_source_but_not_body_rows() -> None:
    """None marks a row the tracker does not have; the 12 body rows always need a joint."""
    names = tuple(f'j{index}' for index in range(20))
    TrackerFormat('toy', names, tuple(range(12)) + (None,) * 7, camera_to_tracker)
    with pytest.raises(ConfigError, match='body row'):
        TrackerFormat('toy', names, (None,) + tuple(range(1, 19)), camera_to_tracker)


def test_azure_conversion_is_a_proper_rotation_to_rep103_axes() -> None:
    """Camera z (forward) -> tracker x, camera x (right) -> -y, camera y (down) -> -z."""
    rotation = AZURE_KINECT.rotation
    np.testing.assert_array_equal(rotation, [[0, 0, 1], [-1, 0, 0], [0, -1, 0]])
    assert np.linalg.det(rotation) == pytest.approx(1.0)
    np.testing.assert_array_equal(azure_camera_to_tracker([0.3, 0.0, 0.0]), [0.0, -0.3, 0.0])
    np.testing.assert_array_equal(azure_camera_to_tracker([0.0, 0.0, 2.0]), [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(azure_camera_to_tracker([0.0, -0.5, 0.0]), [0.0, 0.0, 0.5])
    with pytest.raises(SkeletonError, match='shape'):
        azure_camera_to_tracker(np.zeros((2, 2)))


def test_kinect_v2_format_reuses_the_kinect_v2_tables() -> None:
    """The kinect_v2 format is the 25-joint table and camera-space conversion of kinect_v2.py."""
    assert KINECT_V2.joint_count == 25
    assert KINECT_V2.to_human == KINECT_V2_TO_HUMAN
    assert KINECT_V2.to_tracker is camera_to_tracker
    np.testing.assert_array_equal(KINECT_V2.rotation, CAMERA_TO_TRACKER_ROTATION)


def test_formats_are_listed_by_source_name() -> None:
    """Each marker-based format is under its ``source`` parameter value."""
    assert dict(TRACKER_FORMATS) == {'azure_kinect': AZURE_KINECT, 'kinect_v2': KINECT_V2}


@pytest.mark.parametrize(
    ('names', 'rows'),
    [
        (('a',) * 101, tuple(range(19))),
        (('a',) * 32, tuple(range(18))),
        (('a',) * 32, (0,) * 19),
        (('a',) * 32, tuple(range(18)) + (0,)),
        (('a',) * 10, tuple(range(19))),
    ],
)
def test_inconsistent_format_tables_are_rejected(
    names: tuple[str, ...], rows: tuple[int, ...]
) -> None:
    """Too many joints, a wrong row count, repeated or out-of-range indices raise ConfigError."""
    with pytest.raises(ConfigError):
        TrackerFormat('bad', names, rows, azure_camera_to_tracker)


def test_person_facing_the_camera_has_the_left_shoulder_on_the_sensor_right() -> None:
    """
    Facing the camera, the person's left is the sensor's right: *smaller* tracker y.

    The left shoulder is at +y only in the body frame (y to the person's left); the body frame
    built from the decoded shoulders and spine has its x (forward) towards the sensor.
    """
    frame = decode_markers(AZURE_KINECT, *_azure_markers(_facing_person()), stamp=1.0)[1]
    left = frame.positions[HumanJoint.SHOULDER_LEFT]
    right = frame.positions[HumanJoint.SHOULDER_RIGHT]
    assert left[1] < right[1]
    assert frame.positions[HumanJoint.HEAD, 2] > frame.positions[HumanJoint.PELVIS, 2]
    assert frame.positions[HumanJoint.PELVIS, 0] == pytest.approx(2.0)
    rotation, _ = body_axes(frame)
    np.testing.assert_allclose(rotation[:, 0], [-1.0, 0.0, 0.0], atol=1e-12)
    body = to_body_frame(frame)
    assert body.positions[HumanJoint.SHOULDER_LEFT, 1] > 0.0
    assert body.positions[HumanJoint.WRIST_LEFT, 0] > body.positions[HumanJoint.ELBOW_LEFT, 0]


# --- decoding --------------------------------------------------------------------------------


def test_kinect_v2_markers_decode_like_a_recording_frame(rng: np.random.Generator) -> None:
    """Kinect v2 markers in any order give the rows of camera_to_tracker(joints[table])."""
    joints = rng.uniform(-0.5, 0.5, size=(25, 3)) + [0.0, 0.0, 2.0]
    ids = 700 + np.arange(25)
    order = rng.permutation(25)
    frame = decode_markers(KINECT_V2, ids[order], joints[order], stamp=3.5)[7]
    expected = kinect_v2_to_human(joints)
    np.testing.assert_array_equal(frame.positions, expected)
    assert frame.valid[list(KINECT_V2_ROWS)].all()
    assert frame.stamp == 3.5 and frame.frame == 'tracker'


def test_several_bodies_in_one_array_are_separated(rng: np.random.Generator) -> None:
    """Shuffled markers of bodies 1 and 3 give two frames, each with its own joints."""
    first = _facing_person(2.0)
    second = _facing_person(3.0) + [0.8, 0.0, 0.0]
    ids = np.concatenate([100 + np.arange(32), 300 + np.arange(32)])
    points = np.concatenate([first, second])
    order = rng.permutation(64)
    bodies = decode_markers(AZURE_KINECT, ids[order], points[order], stamp=0.5)
    assert sorted(bodies) == [1, 3]
    for body, camera in ((1, first), (3, second)):
        expected = azure_camera_to_tracker(camera[list(AZURE_KINECT_TO_HUMAN)])
        np.testing.assert_array_equal(bodies[body].positions, expected)


def test_joints_outside_the_format_are_ignored_and_counted() -> None:
    """Azure joint indices 32..99 and negative ids are skipped and counted; Kinect v2 has 25."""
    counts = MarkerCounts()
    ids, points = _azure_markers(_facing_person())
    extra_ids = np.concatenate([ids, [132, 199, -5]])
    extra_points = np.concatenate([points, np.full((3, 3), 7.0)])
    bodies = decode_markers(AZURE_KINECT, extra_ids, extra_points, 1.0, counts)
    assert sorted(bodies) == [1]
    assert counts == MarkerCounts(ignored=3, duplicates=0)
    joints = decode_joints(KINECT_V2, ids, points, counts)[1]
    assert joints.present.sum() == 25 and counts.ignored == 3 + 7


def test_duplicate_ids_keep_the_last_marker_and_are_counted() -> None:
    """A repeated id is overwritten by its last occurrence; each earlier copy is counted."""
    counts = MarkerCounts()
    ids, points = _azure_markers(_facing_person())
    wrist = 100 + K4['WRIST_LEFT']
    ids = np.concatenate([[wrist], ids, [wrist, wrist]])
    points = np.concatenate([[[9.0, 9.0, 9.0]], points, [[8.0, 8.0, 8.0], [0.3, -0.1, 1.5]]])
    frame = decode_markers(AZURE_KINECT, ids, points, 1.0, counts)[1]
    np.testing.assert_array_equal(frame.positions[HumanJoint.WRIST_LEFT], [1.5, -0.3, 0.1])
    assert counts.duplicates == 3 and counts.ignored == 0  # four markers for one id


def test_an_array_with_more_bodies_than_a_camera_sees_keeps_the_lowest_ids_and_counts_the_rest(
) -> None:
    """
    40 bodies in one array (shuffled): the 32 lowest ids come out, as they would alone.

    The 8 others are counted; an array of 100,000 markers, each its own body (a stray
    publisher), gives 32 bodies too, the rest counted.
    """
    rng = np.random.default_rng(7)
    people = [_azure_markers(_facing_person(1.0 + 0.1 * body), body) for body in range(1, 41)]
    ids = np.concatenate([item[0] for item in people])
    points = np.concatenate([item[1] for item in people])
    shuffle = rng.permutation(ids.shape[0])
    counts = MarkerCounts()

    frames = decode_markers(AZURE_KINECT, ids[shuffle], points[shuffle], 1.0, counts)

    assert list(frames) == list(range(1, MAX_BODIES + 1)) and counts.bodies == 40 - MAX_BODIES
    alone = decode_markers(
        AZURE_KINECT, ids[: MAX_BODIES * 32], points[: MAX_BODIES * 32], 1.0
    )
    for body, frame in alone.items():
        np.testing.assert_array_equal(frames[body].positions, frame.positions)
        np.testing.assert_array_equal(frames[body].valid, frame.valid)
    stray = np.arange(100_000) * 100
    counts = MarkerCounts()
    frames = decode_markers(AZURE_KINECT, stray, rng.normal(size=(100_000, 3)), 1.0, counts)
    assert len(frames) == MAX_BODIES and counts.bodies == 100_000 - MAX_BODIES
    assert make_tracker('azure_kinect').status()['bodies_ignored'] == 0


def test_missing_joints_are_invalid_nan_rows() -> None:
    """Joints without a marker are invalid and NaN; the others keep their values."""
    ids, points = _azure_markers(_facing_person())
    keep = ~np.isin(ids % 100, [K4['ELBOW_RIGHT'], K4['HEAD']])
    frame = decode_markers(AZURE_KINECT, ids[keep], points[keep], 1.0)[1]
    missing = [HumanJoint.ELBOW_RIGHT, HumanJoint.HEAD]
    assert not frame.valid[missing].any() and np.isnan(frame.positions[missing]).all()
    assert frame.valid.sum() == JOINT_COUNT - 2
    assert np.isfinite(frame.positions[frame.valid]).all()


def test_received_non_finite_values_stay_valid_for_the_validator() -> None:
    """A NaN or inf marker is a *received* joint: valid, with its non-finite value."""
    ids, points = _azure_markers(_facing_person())
    points[K4['ELBOW_LEFT']] = [np.inf, 0.0, 1.0]
    points[K4['WRIST_LEFT']] = [0.0, np.nan, 1.0]
    frame = decode_markers(AZURE_KINECT, ids, points, 1.0)[1]
    assert frame.valid.all()
    assert frame.positions[HumanJoint.ELBOW_LEFT, 1] == -np.inf
    assert np.isnan(frame.positions[HumanJoint.WRIST_LEFT, 2])


@pytest.mark.parametrize(
    ('ids', 'points'),
    [([], []), (np.zeros(0, dtype=np.int64), np.zeros((0, 3))), ([], np.zeros((0, 3)))],
)
def test_empty_array_decodes_to_no_body(ids: npt.ArrayLike, points: npt.ArrayLike) -> None:
    """An empty marker array, however the ROS layer shapes it, holds no body."""
    assert decode_markers(AZURE_KINECT, ids, points, 1.0) == {}
    assert decode_joints(AZURE_KINECT, [199], [[0.0, 0.0, 0.0]]) == {}


@pytest.mark.parametrize(
    ('ids', 'points'),
    [
        ([100, 101], np.zeros((3, 3))),
        ([100, 101], np.zeros((2, 2))),
        ([100.0, 101.0], np.zeros((2, 3))),
        ([[100, 101]], np.zeros((2, 3))),
    ],
)
def test_inconsistent_arrays_are_a_caller_error(ids: npt.ArrayLike, points: npt.ArrayLike) -> None:
    """Mismatched lengths, wrong widths, float or 2-D ids raise SkeletonError."""
    with pytest.raises(SkeletonError, match='marker'):
        decode_markers(AZURE_KINECT, ids, points, 1.0)


# --- the real Azure Kinect bag ---------------------------------------------------------------


def test_real_bag_decodes_to_body_nine_with_all_32_joints(azure_bag: list[BagMessage]) -> None:
    """873 arrays hold the 32 finite joints of body 9; 60 are empty; no marker is odd."""
    counts = MarkerCounts()
    non_empty = [message for message in azure_bag if message.ids.size]
    assert len(azure_bag) == BAG_MESSAGES
    assert len(azure_bag) - len(non_empty) == BAG_EMPTY
    for message in non_empty:
        assert message.frame_ids == {'kinect2_depth_camera_link'}
        bodies = decode_joints(AZURE_KINECT, message.ids, message.positions, counts)
        assert list(bodies) == [BAG_BODY]
        joints = bodies[BAG_BODY]
        assert joints.present.all() and np.isfinite(joints.positions).all()
        frame = decode_markers(AZURE_KINECT, message.ids, message.positions, message.stamp)
        assert frame[BAG_BODY].valid.all()
    assert counts == MarkerCounts()


def test_real_bag_head_is_above_the_pelvis_after_conversion(azure_bag: list[BagMessage]) -> None:
    """Camera y points down (head y < pelvis y), so in tracker axes the head has the larger z."""
    camera = np.array([m.positions for m in azure_bag if m.ids.size])
    assert np.all(camera[:, K4['HEAD'], 1] < camera[:, K4['PELVIS'], 1])
    tracker = azure_camera_to_tracker(camera)
    assert np.all(tracker[:, K4['HEAD'], 2] > tracker[:, K4['PELVIS'], 2])
    assert np.all(tracker[:, K4['PELVIS'], 0] > 0.3)  # in front of the sensor


def test_real_bag_left_and_right_are_the_persons_own(azure_bag: list[BagMessage]) -> None:
    """
    The body frame from the decoded shoulders and spine matches the face on every frame.

    The nose is ahead of the head (body +x) and the left eye is on the person's left (body +y) of
    the right eye. This holds whichever way the person faces the sensor (here mostly sideways),
    so it checks that K4ABT's LEFT is the person's left and that the conversion is not mirrored.
    """
    for message in (m for m in azure_bag if m.ids.size):
        joints = decode_joints(AZURE_KINECT, message.ids, message.positions)[BAG_BODY].positions
        frame = decode_markers(AZURE_KINECT, message.ids, message.positions, message.stamp)
        rotation, _ = body_axes(frame[BAG_BODY])
        nose = (joints[K4['NOSE']] - joints[K4['HEAD']]) @ rotation
        eyes = (joints[K4['EYE_LEFT']] - joints[K4['EYE_RIGHT']]) @ rotation
        assert nose[0] > 0.05
        assert eyes[1] > 0.02


def test_real_bag_through_the_front_end(azure_bag: list[BagMessage]) -> None:
    """
    The skeleton node's per-message path on the real bag.

    Empty arrays are NO_BODY, the large majority of frames give a body-frame skeleton, and its
    upper arms and forearms have believable lengths [m].
    """
    tracker = make_tracker('azure_kinect')
    front = SkeletonFrontEnd()
    results = [front.feed(tracker.decode(message, 0.0)) for message in azure_bag]
    for message, result in zip(azure_bag, results):
        if not message.ids.size:
            assert result is DropReason.NO_BODY
    assert front.counts[DropReason.NO_BODY] == BAG_EMPTY
    assert front.accepted >= 0.95 * (BAG_MESSAGES - BAG_EMPTY)
    assert front.accepted + sum(front.counts.values()) == BAG_MESSAGES
    assert front.selector.tracked_id == BAG_BODY
    skeletons = np.array([r.positions for r in results if not isinstance(r, DropReason)])
    assert np.isfinite(skeletons).all()
    for shoulder, elbow, wrist in (
        (HumanJoint.SHOULDER_LEFT, HumanJoint.ELBOW_LEFT, HumanJoint.WRIST_LEFT),
        (HumanJoint.SHOULDER_RIGHT, HumanJoint.ELBOW_RIGHT, HumanJoint.WRIST_RIGHT),
    ):
        upper = np.linalg.norm(skeletons[:, elbow] - skeletons[:, shoulder], axis=1)
        fore = np.linalg.norm(skeletons[:, wrist] - skeletons[:, elbow], axis=1)
        assert np.all((upper > 0.18) & (upper < 0.40))
        assert np.all((fore > 0.15) & (fore < 0.35))
    shoulders = skeletons[:, [HumanJoint.SHOULDER_LEFT, HumanJoint.SHOULDER_RIGHT]]
    np.testing.assert_allclose(shoulders.mean(axis=1), 0.0, atol=1e-9)  # origin at the chest
    assert np.all(skeletons[:, HumanJoint.SHOULDER_LEFT, 1] > 0.1)
    assert np.all(skeletons[:, HumanJoint.HEAD, 2] > 0.0)


def test_real_bag_fills_the_face_and_finger_rows(azure_bag: list[BagMessage]) -> None:
    """
    On the real Azure Kinect bag the seven appended rows are filled and plausible.

    Every accepted skeleton holds a nose away from the ears and not behind them (the person
    looks down at the work at times), the left ear on the person's left, and hand tips and
    thumbs within reach of their wrists (none is screened out as implausible).
    """
    tracker = make_tracker('azure_kinect')
    front = SkeletonFrontEnd()
    results = [front.feed(tracker.decode(message, 0.0)) for message in azure_bag]
    skeletons = [r for r in results if not isinstance(r, DropReason)]
    assert skeletons
    for skeleton in skeletons:
        assert skeleton.valid.all()
        points = skeleton.positions
        ears = 0.5 * (points[HumanJoint.EAR_LEFT] + points[HumanJoint.EAR_RIGHT])
        assert np.linalg.norm(points[HumanJoint.NOSE] - ears) > 0.1
        assert points[HumanJoint.NOSE, 0] - ears[0] > 0.0
        assert points[HumanJoint.EAR_LEFT, 1] > points[HumanJoint.EAR_RIGHT, 1]
