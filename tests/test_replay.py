"""``craft-env replay`` and ``craft-env transcript`` on logs of real runs (the page's data and HTML).

The page itself is exercised in a real browser in test_replay_browser.py.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from pathlib import Path

import pytest

from craft_env.cli import main
from craft_env.core.board import Structure
from craft_env.core.moves import Move
from craft_env.datasets import load_eval_set
from craft_env.eval.replay.page import board_boxes, json_for_html, render_html, replay_data
from craft_env.eval.results.taxonomy import classify
from craft_env.eval.replay.transcript import game_transcript, parse_turns

SCRIPT_MESSAGE = "<img src=x onerror=alert(1)>"
BREAKOUT = "</script><script>window.__pwned = 1</script><!--"


def _log_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "run_1" / "log.jsonl").read_text().splitlines()]


def _write_lines(out: Path, lines: list[dict]) -> None:
    (out / "run_1" / "log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("replay") / "run"
    args = ["run", "--out", str(out), "--dataset", "craft", "--structures", "0,2", "--turns", "8", "--no-progress", "--no-plots"]
    assert main(args) == 0
    return out


def _data_block(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert match, "the data block is missing"
    return json.loads(match.group(1))


def test_every_turn_is_rebuilt_from_the_log(run_dir):
    data = replay_data([run_dir])
    lines = [line for line in _log_lines(run_dir) if line["kind"] == "turn"]
    targets = load_eval_set()
    assert [g["sid"] for g in data["games"]] == ["eval_001", "eval_003"]
    for game in data["games"]:
        turns = [t for t in lines if t["structure_index"] == game["index"]]
        assert len(game["turns"]) == len(turns) > 0
        first = Structure.from_dict(turns[0]["structure_before"])
        assert game["start"] == board_boxes(first)
        for k, (record, line) in enumerate(zip(game["turns"], turns)):
            assert record["t"] == line["turn_number"]
            assert record["move"] == line["move"]
            assert record["legal"] == line["legal"] and record["reason"] == line["reason"]
            assert record["m"]["progress"] == line["progress_data"]["progress"]
            assert record["m"]["distance"] == line["progress_data"]["distance"]
            assert record["cat"] == classify(line["move_attempted"], line["optimal"], line["oracle_moves"])
            assert [d["msg"] for d in record["dirs"]] == [d["message"] for d in line["director_responses"]]
            if k + 1 < len(turns):
                after = Structure.from_dict(turns[k + 1]["structure_before"])
            else:
                before = Structure.from_dict(line["structure_before"])
                after = before.apply(Move.from_dict(line["move_attempted"]))
            assert record["after"] == board_boxes(after)
        target = targets[game["index"]]
        assert game["target"] == board_boxes(target)
        views = target.to_dict()["director_views"]
        for seat, wall in game["walls"].items():
            for level, row in enumerate(wall["layers"]):
                assert [size for _, size in row] == [slot["size"] for slot in views[seat][f"row_{level}"]]


def test_board_boxes_lists_a_large_block_once_with_its_partner():
    board = Structure.empty().apply(Move.place("gl", (0, 0), span_to=(0, 1), layer=0))
    board = board.apply(Move.place("rs", (2, 2), layer=0))
    assert sorted(board_boxes(board)) == [[0, 0, 0, 0, 0, 1], [2, 2, 0, 2, 2, 2]]


def test_a_wall_shows_a_large_block_as_small_when_its_partner_is_off_the_wall():
    # D1 sees column j = 0: the block (0,0)-(0,1) has one half there, so D1 sees size 1;
    # D2 sees row i = 0 and both halves, size 2.
    target = Structure.empty().apply(Move.place("bl", (0, 0), span_to=(0, 1), layer=0))
    from craft_env.eval.replay.page import _walls

    walls = _walls(target)
    assert walls["D1"]["layers"][0][0] == [1, 1]
    assert walls["D2"]["layers"][0][1:] == [[1, 2], [1, 2]]


def test_the_page_is_self_contained_and_its_policy_allows_only_its_own_code(run_dir):
    html = render_html(replay_data([run_dir]))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in policy and "img-src data:" in policy
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    for text in (script, style):
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy
    # nothing that could fetch: no URL other than the SVG namespace name, no eval, no innerHTML
    urls = set(re.findall(r"https?://[^\s\"')]+", html))
    assert urls == {"http://www.w3.org/2000/svg"}
    assert "eval(" not in script and "innerHTML" not in script and "new Function" not in script
    assert _data_block(html)["games"]


def test_model_text_cannot_close_the_data_block(run_dir, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text((run_dir / "config.json").read_text())
    (out / "run_1").mkdir()
    lines = _log_lines(run_dir)
    turn = next(line for line in lines if line["kind"] == "turn")
    turn["director_responses"][0]["message"] = SCRIPT_MESSAGE
    turn["director_responses"][0]["think"] = BREAKOUT
    turn["question"] = "a\u2028b & c"
    _write_lines(out, lines)
    html = render_html(replay_data([out]))
    assert "</script><script>" not in html and SCRIPT_MESSAGE not in html
    assert html.count("</script>") == 2  # the data block and the page script, nothing else
    first = _data_block(html)["games"][0]["turns"][0]
    assert first["dirs"][0]["msg"] == SCRIPT_MESSAGE and first["dirs"][0]["think"] == BREAKOUT
    assert first["question"] == "a\u2028b & c"
    assert json.loads(json_for_html({"x": "<>&\u2029"})) == {"x": "<>&\u2029"}


def test_logs_missing_optional_fields_still_replay(run_dir, tmp_path):
    out = tmp_path / "run"
    (out / "run_1").mkdir(parents=True)
    lines = _log_lines(run_dir)
    for line in lines:
        if line["kind"] == "turn":
            for key in ("builder", "oracle_moves", "reason", "question", "move", "optimal"):
                line.pop(key, None)
            for director in line["director_responses"]:
                director.pop("think", None)
                director.pop("archetype", None)
            line["progress_data"].pop("distance")
    # a second attempt of game 0 that errored after one turn, so game 0 is errored, game 2 done
    unfinished = copy.deepcopy([line for line in lines if line["structure_index"] == 0][:2])
    for line in unfinished:
        line["attempt"] = 2
    unfinished.append({**unfinished[0], "kind": "game", "event": "errored", "error": "timeout", "attempt": 2})
    lines = [line for line in lines if line["structure_index"] != 0 or line["kind"] == "turn"] + unfinished
    last_turn = [line for line in lines if line["kind"] == "turn" and line["structure_index"] == 2][-1]
    del last_turn["progress_data"]  # the final metrics then come from the done marker
    _write_lines(out, lines)
    data = replay_data([out])  # no config.json: the bundled set and unknown models
    status = {g["sid"]: g for g in data["games"]}
    assert status["eval_001"]["status"] == "errored" and status["eval_001"]["error"] == "timeout"
    assert len(status["eval_001"]["turns"]) == 1
    done = status["eval_003"]
    assert done["status"] == "done" and done["turns"][0]["oracle"] is None
    marker = next(line for line in lines if line.get("event") == "done" and line["structure_index"] == 2)
    # logs.read_games skips a turn line without progress_data (with a warning); the marker still ends the game
    logged = [line for line in lines if line["kind"] == "turn" and line["structure_index"] == 2]
    assert done["final"]["progress"] == marker["final"]["progress"] and len(done["turns"]) == len(logged) - 1
    assert done["turns"][0]["dirs"][0]["think"] is None and "distance" not in done["turns"][0]["m"]
    assert "?" in done["condition"]
    render_html(data)


def test_cli_replay_writes_the_page(run_dir, tmp_path, capsys):
    target = tmp_path / "page.html"
    assert main(["replay", str(run_dir), "-o", str(target)]) == 0
    assert "Wrote 2 game(s)" in capsys.readouterr().out
    assert len(_data_block(target.read_text())["games"]) == 2
    assert main(["replay", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_sixty_long_games_fit_in_five_megabytes(run_dir, tmp_path):
    """3 runs x 20 games x 20 turns with model-length texts (turns copied from a real log) stay under 5 MB."""
    out = tmp_path / "big"
    source = [line for line in _log_lines(run_dir) if line["structure_index"] == 2]
    start, done = source[0], source[-1]
    turns = [line for line in source if line["kind"] == "turn"]
    think = "I compare my wall with the board, slot by slot, layer by layer. " * 10
    message = "Please place " * 20
    for run in (1, 2, 3):
        lines = []
        for index in range(20):
            header = {"run": run, "structure_index": index, "structure_id": f"eval_{index + 1:03d}"}
            lines.append({**start, **header})
            for number in range(1, 21):
                turn = copy.deepcopy(turns[(number - 1) % len(turns)])
                for director in turn["director_responses"]:
                    director["think"], director["message"] = think, message
                turn["builder"]["think"] = think
                lines.append({**turn, **header, "turn_number": number})
            lines.append({**done, **header, "turn_number": 20})
        (out / f"run_{run}").mkdir(parents=True)
        (out / f"run_{run}" / "log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    data = replay_data([out])
    assert len(data["games"]) == 60 and all(len(g["turns"]) == 20 for g in data["games"])
    size = len(render_html(data).encode("utf-8"))
    assert size <= 5 * 1024 * 1024, f"{size} bytes"


def test_transcript_follows_the_paper_table(run_dir, capsys):
    lines = [line for line in _log_lines(run_dir) if line["kind"] == "turn" and line["structure_index"] == 2]
    text = game_transcript(run_dir, "eval_003", "2-3")
    rows = [row for row in text.splitlines() if re.match(r"\| T\d", row)]
    assert [row.split(" | ")[0] for row in rows] == ["| T2", "| T3"]
    header = "| Turn | Oracle (top move) | Director messages | Builder move and outcome | Progress |"
    assert text.splitlines()[4] == header
    for row, line in zip(rows, lines[1:3]):
        cells = row.split(" | ")
        assert cells[1] == str(Move.from_dict(line["oracle_moves"][0]))
        for director in line["director_responses"]:
            assert f'{director["director"]}: "{director["message"]}"' in cells[2]
        assert line["move"] in cells[3] and "✓" in cells[3]
        assert cells[4].rstrip(" |") == f'{line["progress_data"]["progress"]:.3f}'
    assert main(["transcript", str(run_dir), "--game", "run_1/2", "--turns", "1"]) == 0
    assert "| T1 |" in capsys.readouterr().out


def test_transcript_shows_a_failed_move_and_escapes_pipes(run_dir, tmp_path):
    out = tmp_path / "run"
    (out / "run_1").mkdir(parents=True)
    lines = _log_lines(run_dir)
    turn = next(line for line in lines if line["kind"] == "turn" and line["structure_index"] == 0)
    turn.update(legal=False, executed=False, reason="Cannot remove layer 0 at (1,0)")
    turn["director_responses"][0]["message"] = "left | right\nnext line"
    _write_lines(out, lines)
    row = next(r for r in game_transcript(out, "eval_001", "1").splitlines() if r.startswith("| T1"))
    assert "failed (Cannot remove layer 0 at (1,0))" in row
    assert "left \\| right next line" in row


@pytest.mark.parametrize(
    ("arguments", "message"),
    [(["--game", "eval_099"], "no game 'eval_099'"), (["--game", "eval_001", "--turns", "4-2"], "--turns")],
)
def test_transcript_errors_name_the_option(run_dir, capsys, arguments, message):
    assert main(["transcript", str(run_dir), *arguments]) == 2
    assert message in capsys.readouterr().err


def test_parse_turns():
    assert parse_turns("5-9") == (5, 9) and parse_turns(" 7 ") == (7, 7) and parse_turns(None) is None
    for bad in ("0", "a-b", "3-", "9-1"):
        with pytest.raises(ValueError, match="--turns"):
            parse_turns(bad)
