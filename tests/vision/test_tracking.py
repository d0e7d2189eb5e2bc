"""The card tracker: confirmation after N frames, dropping after M, codes by vote, no flicker.

Expectations come from the rules of ``vision/tracking.py``'s docstring (quoted per test) and,
for flicker, from the still table of ``live_scene.py`` whose true cards are known.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from live_scene import BANKER, LAYOUT, PLAYER, NoisyReader

from vision.detections import CardReading, Reading, ReadingFlag
from vision.flicker import FlickerMeter
from vision.tracking import (
    CardTracker,
    TrackerError,
    TrackerSettings,
    merge_shown,
    tracks_to_reading,
)

BOX = (100.0, 100.0, 122.0, 134.0)
FAR = (400.0, 300.0, 422.0, 334.0)


def card(code: str, box: tuple[float, float, float, float] = BOX, **extra: object) -> CardReading:
    return CardReading(code, extra.pop("confidence", 0.9), box, **extra)  # type: ignore[arg-type]


def shown_codes(tracker: CardTracker) -> list[str]:
    return [track.code for track in tracker.shown]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("confirm_frames", 0),
        ("drop_after", 0),
        ("vote_window", 0),
        ("min_overlap", 0.0),
        ("min_overlap", 1.5),
        ("max_center_distance", -1.0),
        ("code_penalty", -0.1),
        ("smoothing", 0.0),
        ("smoothing", 1.2),
        ("certain_above", 1.0),
        ("uncertain_below", 0.9),  # above certain_above: no hysteresis gap
    ],
)
def test_settings_out_of_range_are_refused_naming_the_field(field: str, value: float) -> None:
    with pytest.raises(TrackerError, match=field):
        TrackerSettings(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("confirm", [1, 2, 3, 5])
def test_a_card_is_shown_once_seen_in_confirm_frames_consecutive_frames(confirm: int) -> None:
    # Rule: "shown once it has been matched in confirm_frames consecutive read frames".
    tracker = CardTracker(TrackerSettings(confirm_frames=confirm))
    for frame in range(1, confirm + 3):
        tracker.update([card("10H")])
        assert shown_codes(tracker) == (["10H"] if frame >= confirm else []), frame


@pytest.mark.parametrize("drop_after", [1, 2, 5])
def test_a_shown_card_stays_through_misses_and_is_dropped_after_drop_after(drop_after: int) -> None:
    # Rule: "stays shown (with its last box) and is deleted once missed in drop_after
    # consecutive read frames".
    tracker = CardTracker(TrackerSettings(drop_after=drop_after))
    for _ in range(3):
        tracker.update([card("10H")])
    for missed in range(1, drop_after + 1):
        tracker.update([])
        expected = ["10H"] if missed < drop_after else []
        assert shown_codes(tracker) == expected, missed
    assert tracker.tracks == ()


def test_a_card_back_before_drop_after_keeps_its_track() -> None:
    tracker = CardTracker()
    for _ in range(3):
        tracker.update([card("10H")])
    first = tracker.shown[0].track_id
    for _ in range(4):
        tracker.update([])
    tracker.update([card("10H")])
    assert [track.track_id for track in tracker.shown] == [first]
    assert tracker.shown[0].missed == 0


def test_a_one_frame_ghost_is_never_shown_and_is_forgotten() -> None:
    # Rule: "A tentative track missed once is deleted".
    tracker = CardTracker()
    tracker.update([card("10H"), card("5S", FAR)])
    for _ in range(4):
        tracker.update([card("10H")])
    assert shown_codes(tracker) == ["10H"]
    assert [track.code for track in tracker.tracks] == ["10H"]


def test_an_occasional_misread_does_not_change_the_code() -> None:
    # Rule: a shown track's code changes only when another holds more than switch_ratio times
    # its weight (or when it has left the window): one misread, or two that agree, never do.
    tracker = CardTracker()
    sequence = ["10H"] * 5 + ["10D"] + ["10H"] * 3 + ["10D", "10D"] + ["10H"]
    for code in sequence:
        tracker.update([card(code)])
        assert shown_codes(tracker) in ([], ["10H"])
    assert shown_codes(tracker) == ["10H"]


@pytest.mark.parametrize(
    ("before", "window", "memory", "uncertain", "frames_to_switch"),
    [
        # rule (a): once the old code has left the last vote_window readings, a new code read as
        # certain wins at once: a replaced card that reads well shows after vote_window frames
        (24, 24, 64, False, 24),
        (5, 5, 64, False, 5),
        (30, 12, 64, False, 12),
        # ... one read as uncertain only once the old code has left the whole memory
        (24, 24, 64, True, 64),
        (10, 8, 16, True, 16),
        # rule (b): a new code read as certain wins sooner when it holds more than 3 times the
        # old one's weight in the memory: after 3 frames of 10H, at the 10th frame of QS
        (3, 24, 64, False, 10),
        (3, 24, 64, True, 64),
    ],
)
def test_a_card_replaced_in_place_shows_its_new_code_within_a_bounded_number_of_frames(
    before: int, window: int, memory: int, uncertain: bool, frames_to_switch: int
) -> None:
    tracker = CardTracker(TrackerSettings(vote_window=window, memory=memory))
    for _ in range(before):
        tracker.update([card("10H")])
    assert shown_codes(tracker) == ["10H"]
    codes = []
    for _ in range(memory + 2):
        tracker.update([card("QS", uncertain=uncertain, confidence=0.2 if uncertain else 0.9)])
        codes.append(shown_codes(tracker)[0])
    assert codes.index("QS") + 1 == frames_to_switch
    assert set(codes[frames_to_switch - 1 :]) == {"QS"}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("stay", "certain"), [(0.0, False), (0.7, False), (0.0, True)])
def test_a_reader_wavering_between_codes_does_not_flip_the_shown_code(
    seed: int, stay: float, certain: bool
) -> None:
    # Modelled on the real reader on a still video (examples/hand.jpg, one corner over 300
    # frames: KC 46 %, 3C 39 %, 2C 14 %, confidence about 0.2, flagged uncertain, in runs of up
    # to a dozen frames, as video compression makes neighbouring frames alike): each frame
    # keeps the previous code with probability ``stay``, else draws KC 50 %, 3C 40 %, 2C 10 %.
    # Uncertain, 3C needs KC absent from 64 readings (rule a); certain, it needs 3 times KC's
    # weight in them (rule b): neither happens in a minute at 25 fps.
    rng = np.random.default_rng(seed)
    tracker = CardTracker()
    meter = FlickerMeter(25.0)
    code = "KC"
    for _ in range(1500):
        if rng.random() >= stay:
            code = str(rng.choice(["KC", "3C", "2C"], p=[0.5, 0.4, 0.1]))
        confidence = float(rng.uniform(0.5, 0.7) if certain else rng.uniform(0.15, 0.3))
        tracker.update([card(code, confidence=confidence, uncertain=not certain)])
        meter.add_tracks(tracker.shown)
    assert meter.count.code_changes == 0
    assert meter.count.set_changes == 1  # the card shown once, never hidden
    assert tracker.shown[0].uncertain is not certain


def test_a_certain_new_code_that_dominates_the_memory_wins_though_the_old_one_lingers() -> None:
    # Rule (b): 10H shown after 3 frames; then 10D (certain), with 10H read again every 6th
    # frame, so rule (a) never applies. After n frames 10H holds 3 + ceil(n / 6) readings and
    # 10D the other n - ceil(n / 6), all at 0.9: 10D wins at the first n where
    # n - ceil(n / 6) > 3 * (3 + ceil(n / 6)), that is n = 30 (25 > 24).
    tracker = CardTracker()
    for _ in range(3):
        tracker.update([card("10H")])
    codes = []
    for frame in range(40):
        tracker.update([card("10H" if frame % 6 == 0 else "10D")])
        codes.append(shown_codes(tracker)[0])
    assert codes.index("10D") + 1 == 30
    assert set(codes[29:]) == {"10D"}


@pytest.mark.parametrize(
    ("codes", "shown_from", "code"),
    [
        # "its code read in at least confirm_frames of them and holding more than half of its
        # votes": 10H is read for the 3rd time in frame 4, with 3 of 4 votes
        (["JS", "10H", "10H", "10H"], 4, "10H"),
        (["10H", "10H", "10H"], 3, "10H"),
        # "after twice that many frames when its code leads the votes": 2 of 6, others 1 each
        (["JS", "10H", "QD", "10H", "4C", "7D"], 6, "10H"),
        # "whatever the votes, after max(2 * confirm_frames, vote_window)" = 9 frames here
        (["JS", "10H", "QD", "4C", "7D", "8S", "9S", "2H", "3D"], 9, None),
    ],
)
def test_a_card_is_shown_only_once_its_code_is_agreed(
    codes: list[str], shown_from: int, code: str | None
) -> None:
    tracker = CardTracker(TrackerSettings(vote_window=9))
    for frame, read in enumerate(codes, start=1):
        tracker.update([card(read)])
        assert bool(tracker.shown) == (frame >= shown_from), frame
    if code is not None:
        assert shown_codes(tracker) == [code]
    else:  # no code agreed: shown, but as uncertain
        assert tracker.shown[0].uncertain


def test_uncertainty_has_hysteresis() -> None:
    # Rule: uncertain below 1/3 support, certain again only above 1/2.
    tracker = CardTracker(TrackerSettings(vote_window=6))
    for _ in range(6):
        tracker.update([card("10H")])
    assert not tracker.shown[0].uncertain
    flags = []
    for _ in range(6):  # readings flagged uncertain by the reader push the support down
        tracker.update([card("10H", uncertain=True, confidence=0.3)])
        flags.append(tracker.shown[0].uncertain)
    # support after each: 5/6, 4/6, 3/6, 2/6 (not below 1/3), 1/6, 0/6
    assert flags == [False, False, False, False, True, True]
    back = []
    for _ in range(5):
        tracker.update([card("10H")])
        back.append(tracker.shown[0].uncertain)
    # support: 1/6, 2/6, 3/6 (not above 1/2), 4/6, 5/6
    assert back == [True, True, True, False, False]


def test_tracks_are_ordered_by_first_sighting_whatever_the_reading_order() -> None:
    tracker = CardTracker()
    left, right = card("AS", (10, 10, 30, 40)), card("KD", (200, 10, 220, 40))
    tracker.update([right, left])
    tracker.update([left, right])
    tracker.update([right, left])
    assert shown_codes(tracker) == ["KD", "AS"]


def test_corner_box_and_whole_card_box_of_one_card_stay_one_track() -> None:
    # A reader box covers one corner index or the union of a card's corners (corners >= 2);
    # the union covers the corner's track: a sighting, and it starts no track of its own.
    tracker = CardTracker()
    corner, whole = (100.0, 100.0, 122.0, 134.0), (100.0, 100.0, 170.0, 200.0)
    for box in [corner, whole, corner, whole, whole, corner]:
        tracker.update([card("9C", box, corners=1 if box == corner else 2)])
    assert len(tracker.tracks) == 1
    assert shown_codes(tracker) == ["9C"]
    assert tracker.tracks[0].box_xyxy == corner  # the union moves no box


def test_two_copies_of_a_card_in_different_places_are_two_tracks() -> None:
    tracker = CardTracker()
    for _ in range(3):
        tracker.update([card("9C", BOX), card("9C", FAR)])
    assert shown_codes(tracker) == ["9C", "9C"]


def test_boxes_are_smoothed_towards_the_readings() -> None:
    tracker = CardTracker(TrackerSettings(smoothing=0.5))
    tracker.update([card("9C", (100, 100, 120, 130))])
    tracker.update([card("9C", (104, 100, 124, 130))])
    assert tracker.tracks[0].box_xyxy == (102.0, 100.0, 122.0, 130.0)


def test_reset_forgets_tracks_but_ids_keep_counting() -> None:
    tracker = CardTracker()
    tracker.update([card("9C")])
    tracker.reset()
    assert tracker.tracks == () and tracker.frames == 0
    tracker.update([card("9C")])
    assert tracker.tracks[0].track_id == 1


def test_tracks_to_reading_keeps_shown_tracks_and_recomputes_flags() -> None:
    tracker = CardTracker(TrackerSettings(confirm_frames=1))
    doubtful = card("2D", (600, 10, 620, 40), uncertain=True)
    tracker.update([card("9C", BOX), card("9C", FAR), doubtful])
    reading = tracks_to_reading(tracker.tracks, (640, 480), ReadingFlag.UNREADABLE)
    assert [c.code for c in reading.cards] == ["9C", "9C", "2D"]
    expected = ReadingFlag.UNREADABLE | ReadingFlag.DUPLICATE | ReadingFlag.LOW_CONFIDENCE
    assert reading.flags == expected
    assert isinstance(reading, Reading) and reading.size_wh == (640, 480)


def test_flicker_meter_counts_code_and_set_changes() -> None:
    meter = FlickerMeter(fps=1.0)
    for shown in [[], [(1, "AS")], [(1, "AS")], [(1, "KS")], [(1, "KS"), (2, "2D")], [(2, "2D")]]:
        meter.add(shown)
    count = meter.count
    # code changes: AS -> KS on track 1; set changes: {} -> {AS}, -> {KS}, -> +2D, -> -KS
    assert (count.code_changes, count.set_changes) == (1, 4)
    assert count.per_minute(count.code_changes) == pytest.approx(10.0)  # 1 change in 6 s


def run_still_table(
    reader: NoisyReader, frames: int, tracker: CardTracker, settle: int = 10
) -> tuple[FlickerMeter, FlickerMeter, int]:
    """Feed ``frames`` noisy readings; (tracked meter, raw meter, frames from ``settle`` on
    that show another set of cards than the table's)."""
    tracked, raw = FlickerMeter(25.0), FlickerMeter(25.0)
    truth = sorted(BANKER + PLAYER)
    wrong = 0
    for frame in range(frames):
        reading = reader.reading_for(frame)
        tracker.update(reading)
        tracked.add_tracks(tracker.tracks)
        raw.add_reading(reading)
        if frame >= settle and sorted(shown_codes(tracker)) != truth:
            wrong += 1
    return tracked, raw, wrong


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_still_table_with_misreads_shows_no_code_change_in_a_minute(seed: int) -> None:
    # One minute at 25 fps of the still table (10 cards) with 10 % misreads (random codes at
    # high confidence), 5 % missed cards and 5 % one-frame ghosts per frame.
    reader = NoisyReader(seed=seed, misread=0.10, miss=0.05, ghost=0.05)
    tracked, raw, wrong = run_still_table(reader, 1500, CardTracker())
    assert tracked.count.code_changes == 0
    # the shown set changes only while the cards are first confirmed (a few frames)
    assert tracked.count.set_changes <= 4
    assert wrong == 0
    # the raw readings, by contrast, change their card set in most frames
    assert raw.count.per_minute(raw.count.set_changes) > 500


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    misread=st.floats(0.0, 0.15),
    miss=st.floats(0.0, 0.05),
)
def test_property_shown_cards_settle_on_the_truth(seed: int, misread: float, miss: float) -> None:
    # Statistical, hence derandomized: in 600 random runs of 300 frames with up to 20 %
    # misreads one shown code changed once; at up to 15 % none did.
    reader = NoisyReader(seed=seed, misread=misread, miss=miss, ghost=0.1)
    tracked, _, wrong = run_still_table(reader, 300, CardTracker(), settle=20)
    assert wrong == 0
    assert tracked.count.code_changes == 0


@settings(max_examples=25, deadline=None)
@given(order=st.permutations(range(len(LAYOUT))), seed=st.integers(0, 1000))
def test_property_reading_order_does_not_change_what_is_shown(order: list[int], seed: int) -> None:
    reader = NoisyReader(seed=seed, misread=0.1, miss=0.0, ghost=0.0)
    plain, shuffled = CardTracker(), CardTracker()
    for frame in range(12):
        cards = reader.reading_for(frame).cards
        plain.update(cards)
        shuffled.update([cards[i] for i in order])

    def key(tracker: CardTracker) -> list[tuple[str, tuple[float, ...]]]:
        return sorted((t.code, tuple(round(v, 6) for v in t.box_xyxy)) for t in tracker.shown)

    assert key(plain) == key(shuffled)


# --- cards made of several corners ---------------------------------------------------------------

TOP_LEFT = (100.0, 100.0, 122.0, 134.0)
BOTTOM_RIGHT = (148.0, 166.0, 170.0, 200.0)
WHOLE = (100.0, 100.0, 170.0, 200.0)  # the union of the two corners


def test_a_card_read_now_as_one_now_as_its_two_corners_shows_once_and_still() -> None:
    # The real reader on a still card: both corners read alike -> one card (corners=2, the
    # union box); one corner misread -> two cards, one per corner. Rule 2: the union covers
    # both corners' tracks (they touch its border): a sighting and a vote for each, and it
    # starts no track; the corners are linked, so the two tracks show as one card (rule 6).
    tracker = CardTracker()
    meter = FlickerMeter(25.0)
    rng = np.random.default_rng(7)
    for frame in range(300):
        if frame < 3 or rng.random() < 0.4:
            cards = [card("9C", TOP_LEFT), card("7C", BOTTOM_RIGHT, confidence=0.2)]
        else:
            cards = [card("9C", WHOLE, corners=2, confidence=0.95)]
        tracker.update(cards)
        meter.add_tracks(tracker.shown)
    assert [track.code for track in tracker.tracks] == ["9C", "9C"]  # 7C outvoted by the union
    (shown,) = tracker.shown
    assert shown.code == "9C" and shown.members == (0, 1)
    assert shown.box_xyxy == pytest.approx(WHOLE, abs=0.01)
    assert meter.count.code_changes == 0
    # shown as 9C and 7C from frame 3, then the 7C corner turns 9C and joins its card
    assert meter.count.set_changes == 2


@pytest.mark.parametrize(
    ("box", "corners", "relation"),
    [
        (TOP_LEFT, 2, "corner"),  # inside the union, on its border: one of its corners
        (BOTTOM_RIGHT, 2, "corner"),
        ((124.0, 130.0, 146.0, 164.0), 2, "inside"),  # in the middle: seen, no vote
        (TOP_LEFT, 1, "none"),  # a one-corner reading covers nothing
        ((90.0, 60.0, 112.0, 94.0), 2, "none"),  # only a third of it inside
        ((100.0, 100.0, 140.0, 160.0), 2, "paired"),  # not twice smaller: pairs (rule 1)
    ],
)
def test_what_a_several_corner_reading_covers(
    box: tuple[float, float, float, float], corners: int, relation: str
) -> None:
    # Rule 2: covered when more than rescale_limit (2) times smaller with cover_inside (0.8)
    # of it inside; a corner when it also touches the border (within 0.3 of its size).
    tracker = CardTracker()
    for _ in range(3):
        tracker.update([card("4D", box)])
    tracker.update([card("9C", WHOLE, corners=corners)])
    (track,) = [t for t in tracker.tracks if t.track_id == 0]
    if relation == "none":
        assert track.missed == 1
        assert len(tracker.tracks) == 2  # the reading started its own track
    elif relation == "paired":
        assert track.votes == ("4D",) * 3 + ("9C",) and len(tracker.tracks) == 1
        assert track.box_xyxy == (100.0, 100.0, 155.0, 180.0)  # halfway to the reading's box
    else:
        votes = ("4D",) * 3 + (("9C",) if relation == "corner" else ())
        assert track.missed == 0 and track.votes == votes
        assert len(tracker.tracks) == 1
        assert track.box_xyxy == box  # a covering reading moves no box


def test_linked_corners_of_different_codes_stay_two_cards() -> None:
    tracker = CardTracker(TrackerSettings(confirm_frames=1))
    tracker.update([card("9C", TOP_LEFT), card("7C", BOTTOM_RIGHT)])
    tracker.update([card("9C", WHOLE, corners=2)])
    assert [track.links for track in tracker.tracks] == [(1,), (0,)]
    assert [track.code for track in tracker.shown] == ["9C", "7C"]


@pytest.mark.parametrize(
    ("second", "codes", "merged"),
    [
        (FAR, ("9C", "9C"), False),  # one code, apart, not linked: two copies of the card
        ((110.0, 110.0, 132.0, 144.0), ("9C", "9C"), True),  # one code, boxes intersect
        ((110.0, 110.0, 132.0, 144.0), ("9C", "7C"), False),  # intersect, other codes
    ],
)
def test_merge_shown_joins_one_code_only_when_linked_or_intersecting(
    second: tuple[float, float, float, float], codes: tuple[str, str], merged: bool
) -> None:
    tracker = CardTracker(TrackerSettings(confirm_frames=1))
    tracker.update([card(codes[0], BOX), card(codes[1], second)])
    shown = merge_shown(tracker.tracks)
    assert len(shown) == (1 if merged else 2)
    if merged:
        assert shown[0].members == (0, 1) and shown[0].track_id == 0
