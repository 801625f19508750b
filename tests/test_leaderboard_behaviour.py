"""Director behaviour measures (craft_env.eval.results.behaviour) on hand-written turns.

Each turn below is written out the way the runner logs it (only the fields
the measures read), so the expected counts can be checked by eye.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from craft_env.eval.results.behaviour import (
    PANIC_COUNTS,
    BehaviourCounts,
    game_behaviour,
    measures,
    panics,
    repeats,
    total,
)
from craft_env.text import named_information


def turn(number, messages, thinks=None, executed=True, progress=0.0, legal=True):
    """One logged turn: ``messages`` maps seat -> message (None: the seat said nothing usable)."""
    thinks = thinks or {}
    return {
        "turn_number": number,
        "director_responses": [
            {"director": seat, "message": message, "think": thinks.get(seat)}
            for seat, message in messages.items()
        ],
        "executed": executed,
        "legal": legal,
        "progress_data": {"progress": progress},
    }


INSTRUCTION = "put a small red block on my left column, bottom layer"


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        (INSTRUCTION, {"block", "position", "layer"}),
        ("place gs (0,0) L0", {"block", "position", "layer"}),
        ("Great teamwork, everyone!", set()),
        ("Nothing to add from me.", set()),
        ("we still need more blue", {"block"}),
        ("the middle layer looks wrong", {"layer"}),  # "middle" of a layer phrase is not a column
        ("check (1,2) again", {"position"}),
        ("2nd from left is off", {"position"}),
        ("a large one", {"block"}),
        ("", set()),
    ],
)
def test_named_information_reads_the_directors_vocabulary(text, kinds):
    assert named_information(text) == frozenset(kinds)


@given(st.text(max_size=300))
def test_named_information_reads_any_text_into_the_three_kinds(text):
    found = named_information(text)
    assert found <= {"block", "position", "layer"}
    assert named_information(text + " (0,0) L1 red") == {"block", "position", "layer"}


def test_named_information_never_raises_on_odd_input():
    assert named_information(None) == frozenset()
    assert named_information(12) == frozenset()
    assert named_information("(" * 10_000 + "red") == frozenset({"block"})


def test_chatter_counts_messages_that_name_nothing_and_skips_silence():
    turns = [
        turn(1, {"D1": INSTRUCTION, "D2": "Great teamwork!", "D3": "Nothing to add from me."}),
        turn(2, {"D1": "   ", "D2": None, "D3": "blue on top"}),
    ]
    counts = game_behaviour(turns)
    assert (counts.messages, counts.chatter) == (4, 2)  # "   " and None are silence, not chatter
    assert measures(counts)["chatter"] == 0.5


def test_broken_record_only_after_a_turn_that_left_the_board_unchanged():
    turns = [
        turn(1, {"D1": INSTRUCTION, "D2": "remove the top block on my right", "D3": None}, executed=False),
        # board unchanged: D1 repeats itself word for word, D2 says something new, D3 did not speak on turn 1
        turn(2, {"D1": INSTRUCTION, "D2": "add a large green block in my middle column", "D3": INSTRUCTION}),
        # turn 2's move was executed: nothing on turn 3 can be a broken record
        turn(3, {"D1": INSTRUCTION, "D2": "add a large green block in my middle column", "D3": INSTRUCTION}),
    ]
    counts = game_behaviour(turns)
    assert (counts.repeat_chances, counts.repeats) == (2, 1)
    assert measures(counts)["broken_record"] == 0.5


def test_a_rephrasing_with_the_same_words_is_a_repeat_and_a_new_instruction_is_not():
    assert repeats(
        "Bottom layer, my left column: a small red block please", INSTRUCTION.replace("put ", "please ")
    )
    assert repeats(INSTRUCTION + "!", INSTRUCTION)
    assert not repeats(INSTRUCTION, "put a small red block on my right column, top layer")
    assert not repeats("", INSTRUCTION)


def test_a_seat_that_spoke_twice_in_one_turn_is_compared_by_its_last_message():
    first = turn(1, {"D1": "blue on the left"}, executed=False)
    first["director_responses"].append({"director": "D1", "message": INSTRUCTION, "think": None})
    counts = game_behaviour([first, turn(2, {"D1": INSTRUCTION})])
    assert (counts.repeat_chances, counts.repeats) == (1, 1)


@pytest.mark.parametrize(
    "message",
    [
        "Start over!",
        "ok, let's start again from the bottom",
        "we have to begin from scratch",
        "Remove everything.",
        "REMOVE ALL THE BLOCKS",
        "please clear the board",
        "scrap the whole structure and rebuild it",
        "tear it all down",
        "restart",
        "STOP",
        "Stop!",
        "WRONG colour",
        "No! not there",
        "no !",
        "oops!",
        "That was a MISTAKE",
    ],
)
def test_reset_and_alarm_language_is_panic(message):
    assert panics(message)


@pytest.mark.parametrize(
    "message",
    [
        INSTRUCTION,
        "remove everything on the left column",  # narrowed to a part: a targeted correction
        "clear the board of red blocks",
        "remove all blocks except the base",
        "stop placing blue there",  # a calm "stop", "wrong", "no" is an ordinary correction
        "that is the wrong colour",
        "no block goes there",
        "Oops",
        "NOT yet, NOTHING on top",  # capitals that are not alarm words
        "Nobody moves the yellow one",
        "",
    ],
)
def test_corrections_and_instructions_are_not_panic(message):
    assert not panics(message)


@given(st.text(max_size=200))
def test_panic_reads_any_text_and_a_shout_always_counts(text):
    assert panics(text) in (True, False)
    assert panics(text + " STOP")


MESSAGES = st.sampled_from([INSTRUCTION, "Start over!", "STOP", "no block there", "hi", "", None])


@given(
    st.lists(
        st.tuples(
            st.dictionaries(st.sampled_from(["D1", "D2", "D3"]), MESSAGES, max_size=3),
            st.booleans(),
            st.booleans(),
            st.one_of(st.none(), st.floats(0.0, 1.0)),
        ),
        max_size=12,
    )
)
def test_counts_of_any_game_are_parts_of_their_wholes_and_survive_plain_data(plays):
    turns = []
    for number, (messages, executed, legal, progress) in enumerate(plays, 1):
        record = turn(number, messages, executed=executed, legal=legal, progress=progress)
        turns.append(record)
    counts = game_behaviour(turns)
    assert counts.panics <= counts.panic_chances <= counts.messages
    assert BehaviourCounts.from_dict(counts.as_dict()) == counts
    assert all(0.0 <= v <= 1.0 for k, v in measures(counts).items() if k != "overthink" and not math.isnan(v))


def test_panic_reads_the_messages_right_after_a_failed_move_or_a_fall_in_progress():
    turns = [
        turn(1, {"D1": INSTRUCTION}, progress=0.2, legal=False),  # failed: turn 2 is read
        turn(2, {"D1": "STOP! start over", "D2": INSTRUCTION, "D3": None}, progress=0.3),  # progress rose
        turn(3, {"D1": "Start over!", "D2": "remove everything"}, progress=0.1),  # not read; it fell
        turn(4, {"D1": "wrong!", "D2": INSTRUCTION, "D3": "   "}, progress=0.1),  # read; flat, legal
        turn(5, {"D1": "Start over!"}, progress=0.05, legal=False),  # not read; the last setback has no next
    ]
    counts = game_behaviour(turns)
    # chances: turn 2's two messages (D3 said nothing) and turn 4's two (D3's blank is silence)
    assert (counts.panic_chances, counts.panics) == (4, 2)
    assert measures(counts)["panic"] == 0.5


def test_the_first_turn_is_a_setback_only_when_its_move_failed():
    calm = [turn(1, {"D1": INSTRUCTION}, progress=0.0), turn(2, {"D1": "Start over!"}, progress=0.0)]
    assert game_behaviour(calm).panic_chances == 0
    failed = [turn(1, {"D1": INSTRUCTION}, legal=False), turn(2, {"D1": "Start over!"})]
    assert (game_behaviour(failed).panic_chances, game_behaviour(failed).panics) == (1, 1)


def test_a_fall_needs_both_progress_values_and_a_question_is_no_setback():
    turns = [turn(1, {}, progress=0.4), turn(2, {}, progress=0.2), turn(3, {"D1": "Start over!"})]
    turns[0]["progress_data"] = {}  # turn 2's fall cannot be seen
    assert game_behaviour(turns).panic_chances == 0
    asked = [turn(1, {"D1": INSTRUCTION}, executed=False, progress=0.0), turn(2, {"D1": "STOP"})]
    assert game_behaviour(asked).panic_chances == 0  # an unexecuted but legal move (a question) is no setback


def test_panic_without_a_setback_is_not_a_number_never_zero():
    calm = [turn(k, {"D1": "Start over!"}, progress=0.1 * k) for k in range(1, 5)]
    counts = game_behaviour(calm)
    assert counts.panic_chances == 0
    assert math.isnan(measures(counts)["panic"])
    # a setback followed only by silence: still nothing to read
    quiet = [turn(1, {"D1": INSTRUCTION}, legal=False), turn(2, {"D1": None})]
    assert math.isnan(measures(game_behaviour(quiet))["panic"])


def test_teammate_counts_one_minus_panic_when_panic_is_defined():
    counts = BehaviourCounts(
        messages=4, chatter=1, repeat_chances=2, repeats=1, replies=4, grounded=2, stalls=4, recoveries=1,
        message_chars=10, panic_chances=4, panics=3,
    )
    found = measures(counts)
    assert found["panic"] == 0.75
    assert found["teammate"] == pytest.approx(((1 - 0.25) + (1 - 0.5) + (1 - 0.75) + 0.5 + 0.25) / 5)


def test_counts_written_before_panic_read_as_not_measured():
    old = {"messages": 2, "chatter": 1, "repeat_chances": 0, "repeats": 0, "replies": 2, "grounded": 1,
           "stalls": 0, "recoveries": 0, "think_chars": 0, "message_chars": 9}
    counts = BehaviourCounts.from_dict(old, predates=PANIC_COUNTS)
    assert (counts.panic_chances, counts.panics) == (0, 0)
    assert math.isnan(measures(counts)["panic"])
    assert measures(counts)["teammate"] == pytest.approx(((1 - 0.5) + 0.5) / 2)
    with pytest.raises(ValueError, match=r"behaviour\.panic_chances: expected a count"):
        BehaviourCounts.from_dict(old)
    with pytest.raises(ValueError, match=r"behaviour\.panics: 3 is more than behaviour\.panic_chances \(2\)"):
        BehaviourCounts.from_dict({**old, "panic_chances": 2, "panics": 3})


def test_grounding_reads_think_or_message_and_needs_a_position():
    turns = [
        turn(
            1,
            {"D1": "blue please", "D2": "my left column, bottom layer", "D3": "bottom layer"},
            thinks={"D1": "the gap is at (1,2)", "D3": "layer 1 is full"},
        ),
        turn(2, {"D1": None, "D2": None}, thinks={"D1": None, "D2": "the right column is done"}),
    ]
    counts = game_behaviour(turns)
    # replies with text: D1, D2, D3 on turn 1, D2 (think only) on turn 2; D1 on turn 2 has no text at all
    assert (counts.replies, counts.grounded) == (4, 3)
    assert measures(counts)["grounding"] == 0.75


def test_recovery_counts_stalls_after_turn_one_that_have_a_next_turn():
    progress = [0.1, 0.1, 0.2, 0.15, 0.15, 0.15]
    turns = [turn(k + 1, {"D1": INSTRUCTION}, progress=p) for k, p in enumerate(progress)]
    counts = game_behaviour(turns)
    # stalls: turn 2 (0.1 -> 0.1; next rises: recovered), turn 4 (fell; next flat: not), turn 5 (flat; next
    # flat: not); turn 6 stalls too but no turn follows it, and turn 1 has no turn before it
    assert (counts.stalls, counts.recoveries) == (3, 1)
    assert measures(counts)["recovery"] == pytest.approx(1 / 3)


def test_a_turn_without_progress_data_is_left_out_of_recovery():
    turns = [turn(1, {}, progress=0.1), turn(2, {}, progress=0.1), turn(3, {}, progress=0.3)]
    turns[1]["progress_data"] = {}
    assert game_behaviour(turns).stalls == 0


def test_overthink_is_think_characters_over_message_characters():
    turns = [turn(1, {"D1": "ab", "D2": "cd"}, thinks={"D1": "abcdefgh"})]
    counts = game_behaviour(turns)
    assert (counts.think_chars, counts.message_chars) == (8, 4)
    assert measures(counts)["overthink"] == 2.0


def test_empty_denominators_are_nan_never_zero_and_teammate_averages_what_is_defined():
    assert all(math.isnan(v) for v in measures(BehaviourCounts()).values())
    # one informative message, grounded; no unchanged-board turn, no stall: only chatter and grounding defined
    counts = game_behaviour([turn(1, {"D1": INSTRUCTION})])
    found = measures(counts)
    assert math.isnan(found["broken_record"]) and math.isnan(found["recovery"])
    assert found["chatter"] == 0.0 and found["grounding"] == 1.0
    assert found["teammate"] == 1.0


def test_teammate_is_the_mean_of_the_parts_that_are_defined():
    counts = BehaviourCounts(
        messages=4,
        chatter=1,
        repeat_chances=2,
        repeats=1,
        replies=4,
        grounded=2,
        stalls=4,
        recoveries=1,
        think_chars=0,
        message_chars=10,
    )
    found = measures(counts)
    assert found["teammate"] == pytest.approx(((1 - 0.25) + (1 - 0.5) + 0.5 + 0.25) / 4)
    assert found["overthink"] == 0.0


def test_counts_pool_by_adding_and_survive_plain_data():
    a = game_behaviour(
        [turn(1, {"D1": INSTRUCTION, "D2": "hi"}, executed=False), turn(2, {"D1": INSTRUCTION})]
    )
    b = game_behaviour([turn(1, {"D1": "(0,0)"}, thinks={"D1": "xyz"})])
    pooled = total([a, b])
    assert pooled.messages == a.messages + b.messages and pooled.repeats == a.repeats + b.repeats
    assert BehaviourCounts.from_dict(pooled.as_dict()) == pooled
    with pytest.raises(ValueError, match=r"behaviour\.chatter: expected a count"):
        BehaviourCounts.from_dict({**pooled.as_dict(), "chatter": -1})
    with pytest.raises(ValueError, match=r"behaviour\.stalls"):
        BehaviourCounts.from_dict({k: v for k, v in pooled.as_dict().items() if k != "stalls"})


def test_odd_turn_records_are_read_without_error():
    odd = [{"turn_number": 1}, {"director_responses": "not a list"}, {"director_responses": [None, 3, {}]}]
    counts = game_behaviour(odd)
    assert counts == BehaviourCounts()
