"""The judges: questions as data, prompts, the reply parser, the engine judge, and resumable judging."""

from __future__ import annotations

import io
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from judge_logs import BOARD, TARGET, turn_record, write_run

from craft_env.eval.judges import offline
from craft_env.eval.judges import run as judge_run
from craft_env.eval.judges.engine import engine_answers, engine_reply
from craft_env.eval.judges.items import load_items
from craft_env.eval.judges.parse import parse_judge_reply
from craft_env.eval.judges.prompts import judge_messages
from craft_env.eval.judges.questions import (
    BY_CODE,
    FAMILIES,
    ORACLE,
    QUESTIONS,
    family_questions,
    parse_families,
)
from craft_env.eval.judges.run import JudgeSettings, done_keys, judge, model_folder, results_path
from craft_env.eval.judges.scoring import load_judged, question_stats, score

SAID = {
    "D1": "put a small green block on my left column, middle layer",
    "D2": "put a small red block on my left column, bottom layer",
    "D3": "put a small red block on my right column, middle layer",
}
OFFERED = ["place rs (0,2) L0", "place bl (2,0)-(2,1) L0"]


def items_of(tmp_path, turns, families=FAMILIES):
    write_run(tmp_path / "out", [turns])
    return load_items(tmp_path / "out", families)[1]


def answers(item):
    return {code: a.answer for code, a in engine_answers(item).items()}


def by_seat(items, family):
    return {i.seat: i for i in items if i.family == family}


# ----------------------------------------------------------------------- questions and prompts


def test_questions_cover_the_paper_codes_once():
    sizes = (("SG", 7), ("MM", 8), ("PS", 6))
    expected = [f"{family}{k}" for family, count in sizes for k in range(1, count + 1)]
    assert [q.code for q in QUESTIONS] == expected
    assert all(ORACLE not in q.reads for q in family_questions("MM"))
    assert parse_families("ps, SG") == ("SG", "PS")
    with pytest.raises(ValueError, match="unknown judge 'xx'"):
        parse_families("sg,xx")


def test_items_are_per_director_for_sg_mm_and_per_turn_for_ps(tmp_path):
    items = items_of(tmp_path, [turn_record(1, SAID, offered=OFFERED), turn_record(2, {"D2": SAID["D2"]})])
    keys = [i.key for i in items]
    assert len(keys) == len(set(keys))
    assert sum(i.family == "SG" for i in items) == 4
    assert sum(i.family == "MM" for i in items) == 4
    assert [i.turn for i in items if i.family == "PS"] == [1, 2]


def test_prompts_hold_what_each_question_reads_and_nothing_a_seat_may_not_know(tmp_path):
    items = items_of(tmp_path, [turn_record(1, SAID, offered=OFFERED)])
    sg, mm, ps = by_seat(items, "SG")["D1"], by_seat(items, "MM")["D1"], by_seat(items, "PS")[None]
    sg_text = judge_messages(sg)[1]["content"]
    mm_text = judge_messages(mm)[1]["content"]
    ps_text = judge_messages(ps)[1]["content"]
    for code in ("SG1", "SG7"):
        assert f"{code}: {BY_CODE[code].text}" in sg_text
    assert "D1's wall" in sg_text and "D2's wall" not in sg_text and "D3's wall" not in sg_text
    assert "place rs (0,2) L0" in sg_text and "(0,0): L0 gs" in sg_text
    assert SAID["D1"] in sg_text
    # MM: own reasoning and message, the others' messages, the conversation; no oracle, no board.
    assert "Correct next moves" not in mm_text and "place bl (2,0)-(2,1) L0" not in mm_text
    assert "(0,0): L0 gs" not in mm_text
    assert SAID["D2"] in mm_text and SAID["D3"] in mm_text
    assert "turn 1 builder: place rs (0,2) L0 (done)" in mm_text
    assert "D2's wall" not in mm_text and "D3's wall" not in mm_text
    # PS: every message, the candidates, the builder's move and its outcome; no private wall.
    assert all(text in ps_text for text in SAID.values())
    assert "wall, left to right" not in ps_text
    assert "was it one of the correct next moves: yes" in ps_text
    assert judge_messages(sg) == judge_messages(sg)


def test_without_the_oracle_the_prompt_lists_every_optimal_move(tmp_path):
    items = items_of(tmp_path, [turn_record(1, SAID, offered=None)], ("SG",))
    text = judge_messages(items[0])[1]["content"]
    assert "oracle was off" in text
    assert "place rs (0,2) L0" in text and "place bl (2,0)-(2,1) L0" in text


# ------------------------------------------------------------------------------ reply parser

CODES = [q.code for q in family_questions("SG")]


def test_parser_reads_fenced_json_with_prose_lower_case_and_missing_keys():
    text = 'Sure! Here is my verdict:\n```json\n{"sg1": {"answer": "yes", "reason": "ok"}, "SG2": "NO",' \
           ' "SG3": {"answer": "n/a"}, "SG4": {"answer": "maybe"}}\n```\nHope this helps.'
    parsed = parse_judge_reply(text, CODES)
    assert parsed.unreadable is None
    assert parsed.answers["SG1"].answer == "Yes" and parsed.answers["SG1"].reason == "ok"
    assert parsed.answers["SG2"].answer == "No"
    assert parsed.answers["SG3"].answer == "N/A"
    assert parsed.answers["SG4"] is None  # not one of the four answers: missing, never guessed
    assert parsed.missing == ["SG4", "SG5", "SG6", "SG7"]


def test_parser_reads_answer_lines_when_there_is_no_json():
    parsed = parse_judge_reply("SG1: Yes - the block is missing\nSG5 = unclear\n", CODES)
    assert parsed.answers["SG1"].answer == "Yes" and "missing" in parsed.answers["SG1"].reason
    assert parsed.answers["SG5"].answer == "Unclear"
    assert parsed.answers["SG2"] is None


@pytest.mark.parametrize("text", ["", "   ", "I cannot help with that.", '{"foo": 1}', "{not json", None, 42])
def test_unreadable_replies_are_recorded_as_such(text):
    parsed = parse_judge_reply(text, CODES)
    assert parsed.unreadable
    assert all(a is None for a in parsed.answers.values())


@given(st.text(max_size=400))
def test_parser_never_raises_and_never_answers_outside_the_four(text):
    parsed = parse_judge_reply(text, CODES)
    assert set(parsed.answers) == set(CODES)
    for answer in parsed.answers.values():
        assert answer is None or answer.answer in ("Yes", "No", "Unclear", "N/A")


@given(st.dictionaries(st.sampled_from(CODES), st.sampled_from(["Yes", "No", "Unclear", "N/A"]), min_size=1),
       st.text(alphabet="abc \n", max_size=30), st.booleans())
def test_parser_recovers_every_answer_written_as_json(found, prose, fenced):
    body = json.dumps({code: {"answer": a.lower(), "reason": "r"} for code, a in found.items()})
    text = prose + ("```json\n" + body + "\n```" if fenced else body) + prose
    parsed = parse_judge_reply(text, CODES)
    assert {c: a.answer for c, a in parsed.answers.items() if a is not None} == found


# ------------------------------------------------------------------------------- engine judge


def test_engine_judge_on_a_drawn_board(tmp_path):
    # TARGET: gs (0,0), rs (0,2), bl (2,0)-(2,1) on layer 0; BOARD: gs (0,0).
    said = {
        "D1": SAID["D1"],  # place gs (0,0) L1: legal, but the target has nothing there
        "D2": SAID["D2"],  # place rs (0,2) L0: optimal
        "D3": SAID["D3"],  # place rs (0,2) L1: nothing underneath
    }
    items = items_of(tmp_path, [turn_record(1, said, offered=OFFERED)])
    sg = {seat: answers(item) for seat, item in by_seat(items, "SG").items()}
    assert sg["D1"] == {"SG1": "No", "SG2": "Yes", "SG3": "Yes", "SG4": "No", "SG5": "Yes", "SG6": "N/A",
                        "SG7": "Yes"}
    assert sg["D2"] == {"SG1": "Yes", "SG2": "Yes", "SG3": "Yes", "SG4": "Yes", "SG5": "Yes", "SG6": "Yes",
                        "SG7": "Yes"}
    assert sg["D3"] == {"SG1": "No", "SG2": "Yes", "SG3": "No", "SG4": "No", "SG5": "No", "SG6": "N/A",
                        "SG7": "Yes"}
    ps = answers(by_seat(items, "PS")[None])
    assert ps == {"PS1": "Yes", "PS2": "Yes", "PS3": "Yes", "PS4": "Unclear", "PS5": "Yes", "PS6": "N/A"}
    mm = answers(by_seat(items, "MM")["D2"])
    assert mm["MM2"] == "Yes" and mm["MM6"] == "Yes" and mm["MM1"] == "Unclear"


def test_engine_judge_on_removals_sizes_foreign_cells_and_passes(tmp_path):
    said = {
        "D1": "take the top block off my left column (bottom layer)",  # removes the correct gs
        "D2": "Nothing to add from me.",
        "D3": "the block at (1,0) is wrong; put a small red block on my right column, bottom layer",
    }
    items = items_of(tmp_path, [turn_record(1, said, move="remove (0,0) L0", optimal=False, offered=OFFERED)])
    sg = {seat: answers(item) for seat, item in by_seat(items, "SG").items()}
    assert sg["D1"] == {"SG1": "N/A", "SG2": "No", "SG3": "Yes", "SG4": "No", "SG5": "Yes", "SG6": "N/A",
                        "SG7": "Yes"}
    assert sg["D2"]["SG1"] == "No" and sg["D2"]["SG4"] == "N/A"  # passes while its wall still lacks rs (0,2)
    assert sg["D3"]["SG7"] == "No" and sg["D3"]["SG4"] == "Yes"
    ps = answers(by_seat(items, "PS")[None])
    # The builder did what D1 asked, which was wrong: the directors' fault.
    assert ps["PS3"] == "Yes" and ps["PS5"] == "Yes" and ps["PS6"] == "Yes"


def test_engine_judge_size_and_builder_mechanics(tmp_path):
    said = {"D1": "put a small blue block on my right column, bottom layer",  # the target there is large
            "D2": SAID["D2"]}
    turn = turn_record(1, said, move="place rs (0,2) L1", optimal=False, legal=False, offered=OFFERED)
    items = items_of(tmp_path, [turn])
    assert answers(by_seat(items, "SG")["D1"])["SG6"] == "No"
    ps = answers(by_seat(items, "PS")[None])
    assert ps["PS6"] == "No"  # right block and cell, wrong layer: the builder's slip
    assert ps["PS5"] == "No"


def test_engine_judge_on_unreadable_and_silent_turns(tmp_path):
    passes = {"D1": "Nothing to add from me.", "D2": "Nothing to add from me."}
    items = items_of(tmp_path, [turn_record(1, {"D1": "I think we should do something nice"}),
                                turn_record(2, passes, move=None, optimal=False)])
    sg = answers(by_seat([i for i in items if i.turn == 1], "SG")["D1"])
    assert set(sg.values()) == {"Unclear"}
    ps1 = answers([i for i in items if i.family == "PS" and i.turn == 1][0])
    assert ps1["PS1"] == "Unclear"
    ps2 = answers([i for i in items if i.family == "PS" and i.turn == 2][0])
    assert ps2["PS1"] == ps2["PS2"] == ps2["PS3"] == "No"


def test_engine_reply_round_trips_through_the_parser(tmp_path):
    for item in items_of(tmp_path, [turn_record(1, SAID, offered=OFFERED)]):
        codes = [q.code for q in family_questions(item.family)]
        parsed = parse_judge_reply(engine_reply(item), codes)
        assert {c: a.answer for c, a in parsed.answers.items()} == answers(item)


def test_targets_come_from_the_runs_dataset_when_the_log_has_none(tmp_path):
    dataset = tmp_path / "set.json"
    dataset.write_text(json.dumps([TARGET.to_dict(views=False)]), encoding="utf-8")
    out = tmp_path / "out"
    write_run(out, [[turn_record(1, SAID, offered=OFFERED)]], config={"dataset": str(dataset)})
    lines = [json.loads(line) for line in (out / "run_1" / "log.jsonl").read_text().splitlines()]
    for line in lines:
        line.pop("target", None)
    (out / "run_1" / "log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    items = load_items(out, ("SG",))[1]
    assert items[0].target == TARGET and items[0].board == BOARD


# ------------------------------------------------------------------------- judging and resume


def test_model_folder_is_a_safe_name():
    assert model_folder("openai/gpt-4o-mini") == "openai__gpt-4o-mini"
    assert model_folder("ollama/llama3:8b@x") == "ollama__llama3_8b_x"
    with pytest.raises(ValueError, match="judge_model"):
        model_folder(" ")


def _game(tmp_path):
    first = [turn_record(1, SAID, offered=OFFERED), turn_record(2, {"D1": SAID["D1"], "D2": SAID["D2"]})]
    second = [turn_record(1, {"D3": SAID["D3"], "D2": SAID["D2"]}, offered=OFFERED),
              turn_record(2, {"D1": "Nothing to add from me.", "D3": SAID["D1"]})]
    return write_run(tmp_path / "out", [first, second])


def test_engine_judge_run_is_killed_and_resumed_without_duplicates(tmp_path, monkeypatch):
    out = _game(tmp_path)
    settings = JudgeSettings(path=str(out), judge_model="engine")
    total = len(load_items(out, FAMILIES)[1])
    real, calls = judge_run.engine_answers, []

    def dying(item):
        if len(calls) == 5:
            raise RuntimeError("killed")
        calls.append(item.key)
        return real(item)

    monkeypatch.setattr(judge_run, "engine_answers", dying)
    with pytest.raises(RuntimeError, match="killed"):
        judge(settings)
    assert len(done_keys(results_path(out, "engine", 1))) == 5
    monkeypatch.setattr(judge_run, "engine_answers", real)
    _, counts = judge(settings)
    assert counts[0].skipped == 5 and counts[0].judged == total - 5
    keys = [r["key"] for r in map(json.loads, results_path(out, "engine", 1).read_text().splitlines())]
    assert len(keys) == len(set(keys)) == total
    _, again = judge(settings)
    assert again[0].judged == 0 and again[0].skipped == total


# litellm runs a custom provider's ``completion`` in a thread that hands back the ``acompletion`` coroutine;
# a call cancelled there (the calls in flight when the run is killed below) leaves that coroutine unawaited.
@pytest.mark.filterwarnings("ignore:coroutine .*ScriptedLLM.acompletion' was never awaited:RuntimeWarning")
def test_model_judge_run_offline_matches_the_engine_and_resumes_without_paying_twice(tmp_path, monkeypatch):
    out = _game(tmp_path)
    total = len(load_items(out, FAMILIES)[1])
    judge(JudgeSettings(path=str(out), judge_model="engine"))
    settings = JudgeSettings(path=str(out), judge_model="scripted/judge", concurrency=1, runs=2)
    real, seen = judge_run._judge_with_model, []
    items = load_items(out, FAMILIES)[1]
    distinct = len({json.dumps(judge_messages(item)) for item in items})
    answered = offline.offline_judge_reply
    paid = []

    def counting(messages):
        paid.append(1)
        return answered(messages)

    monkeypatch.setattr(offline, "offline_judge_reply", counting)

    async def dying(item, client):
        fields, completion = await real(item, client)
        seen.append(item.key)
        if len(seen) == 4:  # the 4th reply was paid for but is never written
            raise RuntimeError("killed")
        return fields, completion

    monkeypatch.setattr(judge_run, "_judge_with_model", dying)
    with pytest.raises(RuntimeError, match="killed"):
        judge(settings)
    monkeypatch.setattr(judge_run, "_judge_with_model", real)
    _, counts = judge(settings)
    first, second = counts
    assert first.skipped == 3 and first.judged == total - 3
    # Each distinct prompt is paid for once per grader run; the reply paid before the kill came back free.
    assert len(paid) == 2 * distinct
    assert first.cached >= 1
    assert second.judged == total
    judged = load_judged(out)
    for run in (1, 2):
        keys = [r["key"] for r in judged["scripted/judge"][run]]
        assert len(keys) == len(set(keys)) == total
    engine = {r["key"]: r["answers"] for r in judged["engine"][1]}
    for record in judged["scripted/judge"][1]:
        assert record["unreadable"] is None and record["answers"] == engine[record["key"]]
        assert record["tokens"]["prompt"] > 0


def test_an_unreadable_model_reply_is_recorded_with_its_text(tmp_path):
    out = _game(tmp_path)
    settings = JudgeSettings(path=str(out), judge_model="openai/fake", families=("PS",))
    _, counts = judge(settings, client_options={"extra": {"mock_response": "I'd rather not say."}})
    assert counts[0].unreadable == counts[0].judged == 4
    records = load_judged(out)["openai/fake"][1]
    for record in records:
        assert record["unreadable"] and record["raw"] == "I'd rather not say." and record["answers"] is None


def test_scores_default_and_paper():
    assert [score("SG", a) for a in ("Yes", "No", "Unclear", "N/A", "missing")] == [1, 0, None, None, None]
    paper = [score("MM", a, "paper") for a in ("Unclear", "N/A", "missing", "unreadable")]
    assert paper == [0.5, 0.5, 0.5, None]
    assert [score("PS", a, "paper") for a in ("Unclear", "N/A", "missing")] == [0.5, None, None]


def _record(key, family, answers, run_followed=False):
    return {"key": key, "family": family, "answers": {c: {"answer": a} for c, a in answers.items()},
            "unreadable": None, "followed_oracle": run_followed, "oracle_available": True}


def test_question_stats_over_items_and_over_grader_runs():
    by_run = {
        1: [_record("a", "SG", {"SG1": "Yes"}), _record("b", "SG", {"SG1": "No"}),
            _record("c", "SG", {"SG1": "Unclear"})],
        2: [_record("a", "SG", {"SG1": "Yes"}), _record("b", "SG", {"SG1": "Yes"}),
            _record("c", "SG", {"SG1": "Yes"})],
    }
    default = question_stats(by_run, "SG1")
    assert default["n"] == 5 and default["mean"] == pytest.approx(0.8)
    assert default["sem_items"] == pytest.approx((0.2 / 5) ** 0.5)  # sample var of [1,0,1,1,1] is 0.2
    assert default["mean_runs"] == pytest.approx(0.75) and default["sem_runs"] == pytest.approx(0.25)
    assert default["counts"]["Unclear"] == 1
    paper = question_stats(by_run, "SG1", "paper")
    assert paper["n"] == 6 and paper["mean_runs"] == pytest.approx((0.5 + 1.0) / 2)


def test_ps6_leaves_out_followed_turns():
    by_run = {1: [_record("a", "PS", {"PS6": "N/A"}, True), _record("b", "PS", {"PS6": "No"}),
                  _record("c", "PS", {"PS6": "Yes"})]}
    stats = question_stats(by_run, "PS6")
    assert stats["n"] == 2 and stats["counts"]["N/A"] == 0
    assert question_stats(by_run, "PS6", split="rejected")["mean"] == pytest.approx(0.5)


def test_judge_command_prints_scores(tmp_path, capsys):
    from craft_env.cli import main

    out = _game(tmp_path)
    assert main(["judge", str(out), "--judge-model", "engine", "--judges", "sg", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "SG4" in printed and "MM1" not in printed
    assert main(["judge", str(out), "--judge-model", "engine", "--judges", "zz"]) == 2


@pytest.mark.parametrize("width", [60, 80, 100])
def test_judge_table_fits_the_terminal_and_no_cell_is_cut(tmp_path, monkeypatch, width):
    """The judge's score table is drawn as the report's tables are (``eval.results.terminal.fitted_tables``):
    within the terminal's width, no cell cut to "…", every number of every row shown."""
    rich = pytest.importorskip("rich.console")
    from craft_env.cli import main
    from craft_env.eval.judges import command

    console = rich.Console(width=width, file=io.StringIO(), record=True, color_system=None)
    monkeypatch.setattr(command, "terminal_console", lambda: console)
    out = _game(tmp_path)
    assert main(["judge", str(out), "--judge-model", "engine", "--no-progress"]) == 0
    text = console.export_text()
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    rows = command.score_rows(out, "engine", "default")
    assert len(rows) > 20  # every question and family of SG, MM and PS
    for code, *cells in rows:
        line = next(line for line in text.splitlines() if re.match(rf"\W*{code}\b", line))
        assert cells[-1] in line  # the count scored, on the question's own line
        assert all(number in text for cell in cells for number in re.findall(r"\d+\.\d+", cell))



def test_items_read_the_papers_turn_fields_too(tmp_path):
    record = turn_record(1, {}, offered=OFFERED)
    record["director_responses"] = {
        "D2": {"internal_thinking": "my left bottom is red", "public_message": SAID["D2"]},
        "D1": {"internal_thinking": "", "public_message": SAID["D1"]},
    }
    record["structure_before"] = record["structure_before"]["structure"]
    record["spans_before"] = {}
    items = items_of(tmp_path, [record])
    sg = by_seat(items, "SG")
    assert set(sg) == {"D1", "D2"} and sg["D2"].board == BOARD
    assert answers(sg["D2"])["SG4"] == "Yes"
    assert "my left bottom is red" in judge_messages(sg["D2"])[1]["content"]
