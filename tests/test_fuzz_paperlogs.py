"""Fuzzing the paper-log importer (issue 26): hostile files never take it down, and memory stays bounded.

Hypothesis builds paper result files from a readable one with a field
replaced by something hostile: deep nesting, huge and negative numbers,
non-finite numbers, wrong types, lone surrogates, control characters. The
importer may only (a) import the game, (b) list the file or game with a
documented reason (``PaperLogError`` and the engine's ``ValueError``, never
"internal error"), and whatever it imports must be readable by the report,
the replay page and the transcript. A second test imports a directory of
the worst files (at the size limit, a 3,000,000 index, 200,000 levels of
nesting) in a child process whose address space is capped with
``resource.setrlimit``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paper_log_samples import INFO_FIELDS, TURN_FIELDS, dumps, memory_limited, paper_log, write_log

from craft_env.eval.logs import paperlogs
from craft_env.eval.logs.games import read_games
from craft_env.eval.replay.page import replay_data
from craft_env.eval.replay.transcript import game_transcript
from craft_env.eval.report.report import load_results

GAME_FIELDS = ("structure_id", "complexity", "completed", "target_structure", "target_spans", "turns")

SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc80b", "\ud83d"])
TEXT = st.one_of(
    st.text(max_size=20),
    SURROGATES,
    st.sampled_from(["\x1b]0;owned\x07", "\x1b[2J", "\u202e", "../../x", "(0,0)", "", "0", "1e999"]),
)
HUGE = st.sampled_from([2**63, -(2**63) - 1, 10**30, 3_000_000, -5, -1, 10**4000])
NUMBERS = st.one_of(
    st.integers(-3, 25), HUGE,
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["1e999", "-1e999", "1e400"]),  # written as bare number tokens (paper_log_samples)
)


def _nested(depth: int, leaf: object) -> object:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)
#: Mostly odd values; one time in four a nesting around the depth limit (the format sits 5 levels deep).
HOSTILE = st.one_of(VALUES, VALUES, VALUES, st.builds(_nested, st.integers(10, 60), VALUES))

FIELDS = st.sampled_from([*INFO_FIELDS, *GAME_FIELDS, *TURN_FIELDS])


@st.composite
def hostile_logs(draw) -> dict:
    """A readable paper log with one to three fields replaced by hostile values."""
    log = paper_log()
    info, game = log["experiment_info"], log["games"][0]
    first = game["turns"][0]
    for name in draw(st.lists(FIELDS, min_size=1, max_size=3, unique=True)):
        value = draw(HOSTILE)
        if name in INFO_FIELDS:
            info[name] = value
        elif name in GAME_FIELDS:
            game[name] = value
        elif name == "layer":
            if isinstance(first.get("move_attempted"), dict):
                first["move_attempted"]["layer"] = value
        else:
            first[name] = value
    return log


def _readers_work(out) -> None:
    """Everything written reads back: the log, the report rows, the replay page's data, a transcript."""
    games = read_games(out / "run_1" / "log.jsonl") if (out / "run_1").exists() else {}
    (result,) = load_results([out])
    data = replay_data([out])
    json.dumps(data).encode("utf-8")
    assert result.config["source"] == "paper logs"
    for game in games.values():
        game_transcript(out, str(game.structure_index)).encode("utf-8")


@settings(max_examples=40)
@given(log=hostile_logs())
def test_hostile_paper_logs_import_or_are_listed_with_a_documented_reason(tmp_path_factory, log):
    folder = tmp_path_factory.mktemp("fuzz")
    path = write_log(folder / "in" / "log.json", log)
    try:
        result = paperlogs.import_paper_files(path, folder / "out")
    except ValueError as error:  # the one documented error of the call itself: a file that holds no games
        assert "no paper result files" in str(error)
        return
    for failure in result.failures:
        assert not failure.reason.startswith("internal error"), failure
        assert failure.path == str(path)
        str(failure).encode("utf-8")
    if result.written:
        _readers_work(folder / "out")
    else:
        assert result.failures


def _worst_files(folder) -> dict[str, str]:
    """The files of the memory test: name -> the reason the import must give (``""``: it imports)."""
    limit = paperlogs.MAX_PAPER_LOG_BYTES
    head, tail = '{"games": [', "{}]}"
    count = (limit - len(head) - len(tail) - 64) // 3
    files = {
        "a_good.json": (dumps(paper_log()), ""),
        "at_limit.json": (head + "{}," * count + tail, "games: expected at most"),
        "bomb.json": (dumps(paper_log(structure_index=3_000_000)), "structure_index: expected"),
        "deep.json": ('{"games": ' + "[" * 200_000 + "]" * 200_000 + "}", "nested deeper than"),
        "digits.json": ('{"games": [], "n": ' + "9" * 5000 + "}", "not readable JSON"),
        "surrogates.json": (dumps(paper_log(structure_index=1, structure_id="\ud800" * 1000)), ""),
    }
    for name, (text, _) in files.items():
        write_log(folder / name, text)
    with open(folder / "above_limit.json", "wb") as handle:  # sparse: refused by its size, never read
        handle.write(b'{"games": [')
        handle.truncate(limit + 1)
    files["above_limit.json"] = ("", "above the limit")
    return {name: reason for name, (_, reason) in files.items()}


def test_the_worst_files_import_within_a_memory_bound(tmp_path):
    expected = _worst_files(tmp_path / "in")
    done = subprocess.run(
        [sys.executable, "-c", memory_limited(1_024), "import", str(tmp_path / "in"), "-o", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    skipped = {
        line.split(": ", 2)[1].split()[1]: line
        for line in done.stderr.splitlines()
        if line.startswith("craft-env: skipped ")
    }
    for name, reason in expected.items():
        path = str(tmp_path / "in" / name)
        if reason:
            assert reason in skipped[path], done.stderr
        else:
            assert path not in skipped
    assert "Imported 2 game(s)" in done.stdout


@pytest.mark.parametrize("name", ["games", "turns"])
def test_counts_beyond_their_limit_are_refused_by_name(tmp_path, name):
    log = paper_log()
    if name == "games":
        log["games"] = log["games"] * (paperlogs.MAX_GAMES + 1)
    else:
        log["games"][0]["turns"] = log["games"][0]["turns"][:1] * (paperlogs.MAX_TURNS + 1)
    games, failures = paperlogs.read_paper_file(write_log(tmp_path / "many.json", log))
    assert not games and len(failures) == 1 and failures[0].reason.startswith(f"{name}: expected at most")
