"""Hostile and odd inputs to ``craft-env leaderboard`` and its statistics (issue 35, items 4 to 14).

Entry files, run directories and flags that once crashed the command, wiped
an existing board, ate memory or got forged values ranked; and the rank
bands' unit (the structure), comparability and ordering statistic
(docs/leaderboard.md, "Rank bands").
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from craft_env.cli import main
from craft_env.eval.leaderboard.board import BoardOptions, build_board
from craft_env.eval.leaderboard.entries import GameResult, summarise
from craft_env.eval.leaderboard.entryfile import GAME_FIELDS, MAX_ENTRY_BYTES, read_entry
from craft_env.eval.results import checked
from craft_env.eval.results.bands import NOT_COMPARABLE, PAIRED, UNPAIRED, Scores, rank_bands
from craft_env.eval.results.stats import mean_sem
from craft_env.models.jsonl import json_safe

FAST = ["--samples", "200"]
Z = 1.959963984540054


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A scripted paper-protocol run: 3 structures, 2 runs, 6 turns."""
    out = tmp_path_factory.mktemp("hardening") / "scripted"
    args = ["run", "--out", str(out), "--protocol", "paper", "--structures", "0,2,7", "--turns", "6"]
    assert main([*args, "--runs", "2", "--no-progress", "--no-plots"]) == 0
    return out


@pytest.fixture(scope="module")
def entry_data(run, tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("entry") / "scripted.entry.json"
    assert main(["leaderboard", "--entry", str(run), "-o", str(path)]) == 0
    return json.loads(path.read_text())


def _copy(run: Path, target: Path) -> Path:
    shutil.copytree(run, target)
    return target


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _resummed(data: dict) -> dict:
    """``data`` with its summary recomputed from its (changed) games: a forger's file that adds up."""
    games = [GameResult(**{k: g[k] for k in GAME_FIELDS}) for g in data["games"]]
    data["summary"] = json_safe({k: v for k, v in summarise(games).items()})
    return data


def _write(path: Path, data: dict, **dumps) -> Path:
    path.write_text(json.dumps(data, **dumps), encoding="utf-8")
    return path


# ------------------------------------------------------------------ item 4: text and atomic outputs


def test_lone_surrogates_are_made_valid_and_the_board_is_written(run, tmp_path, capsys):
    odd = _copy(run, Path(os.fsdecode(bytes(tmp_path) + b"/\xff-team")))
    for path in [odd / "config.json", *odd.glob("run_*/summary.json")]:
        record = json.loads(path.read_text())
        record["director_model"] = "gpt\ud800x"
        path.write_text(json.dumps(record))
    board = tmp_path / "board.html"
    board.write_text("the board of yesterday")
    assert main(["leaderboard", str(odd), "-o", str(board), "--title", "\udcff", *FAST]) == 0
    html = board.read_bytes().decode("utf-8")
    assert "gpt\ufffdx" in html and "\ufffd-team" in html
    entry = tmp_path / "e.json"
    assert main(["leaderboard", "--entry", str(odd), "-o", str(entry)]) == 0
    markdown = tmp_path / "board.md"
    assert main(["leaderboard", str(entry), "--format", "md", "-o", str(markdown), *FAST]) == 0
    assert "gpt\ufffdx" in markdown.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_a_refused_board_leaves_the_old_file_whole(entry_data, tmp_path, capsys):
    board = tmp_path / "board.html"
    board.write_text("the board of yesterday")
    bad = _write(tmp_path / "bad.entry.json", {**entry_data, "errored": -5})
    assert main(["leaderboard", str(bad), "-o", str(board), *FAST]) == 2
    assert "errored" in _error(capsys)
    assert board.read_text() == "the board of yesterday"


@pytest.mark.parametrize(
    "flags, field",
    [
        (["--samples", str(10**9)], "--samples"),
        (["--seed", "-1"], "--seed"),
        (["-o", "."], "-o"),
    ],
    ids=["samples", "seed", "output-directory"],
)
def test_bad_flags_are_one_line_before_any_work(run, tmp_path, monkeypatch, capsys, flags, field):
    monkeypatch.chdir(tmp_path)
    assert main(["leaderboard", str(run), *flags]) == 2
    assert _error(capsys).startswith(f"craft-env: error: {field}")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ items 5 and 7: size, shape, tracebacks


def test_an_oversized_entry_file_is_refused_before_it_is_parsed(tmp_path, capsys):
    big = tmp_path / "big.entry.json"
    with big.open("wb") as handle:
        handle.truncate(MAX_ENTRY_BYTES + 1)
    assert main(["leaderboard", str(big), *FAST, "-o", str(tmp_path / "b.html")]) == 2
    assert "above the limit" in _error(capsys)
    assert not (tmp_path / "b.html").exists()


def test_too_many_structures_are_refused_naming_the_index(entry_data, tmp_path, capsys):
    data = json.loads(json.dumps(entry_data))
    template = data["games"][0]
    data["settings"]["dataset"] = data["group"]["dataset"] = "mine-0123456789ab"
    data["games"] = [{**template, "structure": f"s{k}", "index": k, "run": 1} for k in range(10_001)]
    data["settings"]["runs"] = 1
    path = _write(tmp_path / "wide.entry.json", _resummed(data))
    assert main(["leaderboard", str(path), *FAST, "-o", str(tmp_path / "b.html")]) == 2
    assert "games[10000].index: expected an int from 0 to 9,999" in _error(capsys)


def test_the_bootstraps_memory_does_not_grow_with_the_structures():
    rng = np.random.default_rng(1)
    structures = [f"s{k:05d}" for k in range(4_000)]
    a = Scores("a", 0.5, 0.0, {s: [float(v)] for s, v in zip(structures, rng.random(4_000))})
    b = Scores("b", 0.5, 0.0, {s: [float(v), float(v)] for s, v in zip(structures, rng.random(4_000))})
    tracemalloc.start()
    try:
        placements = rank_bands([a, b], samples=2_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert placements[0].to_next.method == PAIRED
    # one unblocked (samples, structures) int64 array of picks alone is 64 MB
    assert peak < 40e6, f"peak {peak / 1e6:.0f} MB"


def test_unequal_run_counts_draw_only_the_runs_there_are():
    structures = [f"s{k:04d}" for k in range(2_000)]
    levels = np.random.default_rng(2).random(2_000)
    once = {s: [float(v)] for s, v in zip(structures, levels)}
    repeated = {s: [float(v)] * (1 + k % 3) for k, (s, v) in enumerate(zip(structures, levels))}
    repeated[structures[0]] = [float(levels[0])] * 1_000  # one structure of many runs
    tracemalloc.start()
    try:
        entries = [Scores("once", 0, 0, once), Scores("many", 0, 0, repeated)]
        found = {p.key: p for p in rank_bands(entries, samples=2_000)}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # identical runs within a structure: the same structure draws give the same means
    assert found["many"].interval == pytest.approx(found["once"].interval, rel=1e-12)
    first = min(found.values(), key=lambda p: p.position).to_next
    assert first.method == PAIRED and first.low == pytest.approx(0.0, abs=1e-12)
    assert first.high == pytest.approx(0.0, abs=1e-12)
    assert peak < 60e6, f"peak {peak / 1e6:.0f} MB"


@pytest.mark.parametrize(
    "text, field",
    [
        ("[" * 5_000 + "]" * 5_000, "nested too deep"),
        ('{"format": "craft-env leaderboard entry", "version": ' + "9" * 5_000 + "}", "not a readable"),
    ],
    ids=["nested-5000-deep", "int-of-5000-digits"],
)
def test_unreadable_json_is_one_line(tmp_path, capsys, text, field):
    path = tmp_path / "odd.entry.json"
    path.write_text(text)
    assert main(["leaderboard", str(path), *FAST, "-o", str(tmp_path / "b.html")]) == 2
    assert field in _error(capsys)


@pytest.mark.parametrize(
    "name, value, field",
    [
        ("iou", 1e308, "games[0].iou"),
        ("turns", 10**400, "games[0].turns"),
        ("progress", math.inf, "games[0].progress"),
        ("progress", math.nan, "games[0].progress"),
        ("progress", 5.0, "games[0].progress"),
        ("progress", -3.0, "games[0].progress"),
        ("turns", -7, "games[0].turns"),
        ("failed", 7, "games[0].failed"),  # more than the game's 6 turns
        ("cost", -1e9, "games[0].cost"),
        ("tokens", True, "games[0].tokens"),
    ],
    ids=lambda v: checked.shown(v) if isinstance(v, int) and not isinstance(v, bool) else None,
)
def test_forged_game_values_are_refused_naming_the_field(entry_data, tmp_path, capsys, name, value, field):
    data = json.loads(json.dumps(entry_data))
    data["games"][0][name] = value
    if not isinstance(value, bool) and abs(value) < 1e300 and math.isfinite(value):
        data = _resummed(data)  # a forger who made the summary add up
    path = _write(tmp_path / "forged.entry.json", data)
    assert main(["leaderboard", str(path), "--format", "md", *FAST, "-o", str(tmp_path / "b.md")]) == 2
    assert field in _error(capsys)
    assert not (tmp_path / "b.md").exists()


def _set(data: dict, dotted: str, value) -> None:
    *parts, last = dotted.split(".")
    for part in parts:
        data = data[part]
    data[last] = value


@pytest.mark.parametrize(
    "dotted, value, field",
    [
        ("errored", -5, "errored"),
        ("settings.runs", 0, "settings.runs"),
        ("settings.runs", 7, "settings.runs"),
        ("settings.condition.oracle_n", -5, "settings.condition.oracle_n"),
        ("settings.condition.seats", ["D1", "D1"], "settings.condition.seats[1]"),
        ("credit.lambda_D1", 3.0, "credit.lambda_D1"),
        ("files", [{"path": "x", "sha256": "zz"}], "files[0].sha256"),
        ("judges", {"model": "j", "SG": {"deep": [1]}}, "judges.SG"),
        ("behaviour.messages", 10**400, "behaviour.messages"),
    ],
    ids=lambda v: checked.shown(v) if isinstance(v, int) and not isinstance(v, bool) else None,
)
def test_forged_entry_values_are_refused_naming_the_field(entry_data, tmp_path, capsys, dotted, value, field):
    data = json.loads(json.dumps(entry_data))
    _set(data, dotted, value)
    if dotted.startswith("settings.condition"):
        data["group"]["condition"] = "forged"
    path = _write(tmp_path / "forged.entry.json", data)
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]")):
        read_entry(path)


def test_a_game_repeated_is_refused(entry_data, tmp_path):
    data = json.loads(json.dumps(entry_data))
    data["games"] = data["games"] * 500
    path = _write(tmp_path / "repeated.entry.json", _resummed(data))
    with pytest.raises(ValueError, match=r"games\[6\]: structure 'structure_001' run 1 is already an earlier"):
        read_entry(path)


# ------------------------------------------------------------------ item 8: a badly typed run-log line


def test_a_badly_typed_credit_line_is_skipped_with_a_warning(run, tmp_path, caplog):
    bad = _copy(run, tmp_path / "bad")
    log = bad / "run_1" / "log.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    turns = [line for line in lines if line.get("kind") == "turn"]
    turns[0]["builder"] = "x"
    turns[1]["builder"]["followed"] = 5
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING):
        assert main(["leaderboard", str(bad), "-o", str(tmp_path / "b.html"), *FAST]) == 0
        assert main(["report", str(bad), "--no-plots"]) == 0
    warned = [r.getMessage() for r in caplog.records if "builder credit is unreadable" in r.getMessage()]
    assert any("run 1 structure 0 turn 1:" in m and "'x'" in m for m in warned)
    assert any("turn 2:" in m for m in warned)


# ------------------------------------------------------------------ item 9: replay page names


def test_replay_pages_of_keys_that_look_alike_are_distinct(run, tmp_path):
    dirs = [_copy(run, tmp_path / name) for name in ("x", "x#2", "x_2")]
    for k, out in enumerate(dirs):  # tell the copies apart by their model
        for path in [out / "config.json", *out.glob("run_*/summary.json")]:
            record = json.loads(path.read_text())
            record["director_model"] = f"team-{k}"
            path.write_text(json.dumps(record))
    output = tmp_path / "board.html"
    data = build_board(dirs, BoardOptions(published=False, with_replays=True, output=output, samples=200))
    links = {}
    for card in data["structures"][0]["cards"]:
        for result in card["results"]:
            links.setdefault(result["entry"], set()).add(result["replay"].split("#")[0])
    pages = {key: found.pop() for key, found in links.items() if len(found) == 1}
    assert sorted(pages) == ["x", "x#2", "x_2"] and len(set(pages.values())) == 3
    for k, key in enumerate(["x", "x#2", "x_2"]):
        html = (tmp_path / pages[key]).read_text(encoding="utf-8")
        assert f"team-{k}" in html and all(f"team-{j}" not in html for j in range(3) if j != k)


# ------------------------------------------------------------------ item 10: key order


def test_an_entry_file_with_sorted_keys_is_recognised(entry_data, tmp_path, capsys):
    data = json.loads(json.dumps(entry_data))
    data["files"] += [{"path": f"run_{k}/log.jsonl", "sha256": "0" * 64} for k in range(3, 40)]
    path = _write(tmp_path / "sorted.entry.json", data, sort_keys=True, indent=1)
    assert path.read_bytes()[:4096].find(b"craft-env leaderboard entry") == -1
    assert main(["leaderboard", str(path), "--format", "json", "-o", str(tmp_path / "b.json"), *FAST]) == 0
    keys = [e["key"] for e in json.loads((tmp_path / "b.json").read_text())["entries"]]
    assert "scripted" in keys


# ------------------------------------------------------------------ item 11: runs of other settings


def test_a_run_of_other_settings_is_not_pooled_under_the_configs_name(run, tmp_path, capsys):
    mixed = _copy(run, tmp_path / "mixed")
    summary = json.loads((mixed / "run_2" / "summary.json").read_text())
    summary["director_model"] = summary["builder_model"] = "random"
    (mixed / "run_2" / "summary.json").write_text(json.dumps(summary))
    assert main(["leaderboard", str(mixed), "-o", str(tmp_path / "b.html"), *FAST]) == 2
    err = _error(capsys)
    assert "run_2" in err and "director_model 'random'" in err and "'scripted'" in err
    assert not (tmp_path / "b.html").exists()


# ------------------------------------------------------------------ items 12-14: the statistics


def test_the_unpaired_sem_of_a_run_entry_is_over_its_structures():
    rng = np.random.default_rng(3)
    levels = rng.random(20)
    ours = {f"s{k:02d}": [float(v), float(v) + 0.001, float(v) - 0.001] for k, v in enumerate(levels)}
    games = [v for values in ours.values() for v in values]
    game_mean, game_sem = mean_sem(games)
    entry = Scores("ours", game_mean, game_sem, ours)  # what the board hands over: the games' mean and SEM
    paper = Scores("paper", 0.3, 0.05, None)
    interval = {p.key: p for p in rank_bands([entry, paper], samples=200)}
    first = min(interval.values(), key=lambda p: p.position).to_next
    structure_sem = mean_sem([sum(v) / 3 for v in ours.values()])[1]
    assert first.method == UNPAIRED
    assert first.high - first.low == pytest.approx(2 * Z * math.hypot(structure_sem, 0.05))
    assert structure_sem > 1.5 * game_sem  # 60 nearly repeated games are not 60 samples
    assert interval["ours"].interval_method == PAIRED


def test_entries_over_different_structures_are_not_ranked_against_each_other():
    rng = np.random.default_rng(4)
    full = {f"s{k:02d}": [float(v)] * 3 for k, v in enumerate(rng.random(20) * 0.8)}
    full["s00"] = [1.0, 1.0, 1.0]
    easy = {"s00": [1.0, 1.0, 1.0]}
    found = {
        p.key: p
        for p in rank_bands(
            [Scores("full", 0.5, 0.05, full), Scores("easy", 1.0, 0.0, easy)], samples=200
        )
    }
    assert found["easy"].position == 1 and found["easy"].to_next.method == NOT_COMPARABLE
    assert "share 1 structure" in found["easy"].to_next.reason
    assert found["full"].rank == 1 and found["full"].beaten_by == []
    assert all(math.isnan(v) for v in found["easy"].interval)  # one structure: no spread to measure
    paper = frozenset(full)
    published = Scores("published", 0.6, 0.05, None, paper)
    part = {s: full[s] for s in sorted(full)[:5]}
    found = {
        p.key: p
        for p in rank_bands([published, Scores("part", 0.9, 0.01, part), Scores("full", 0.5, 0.05, full)])
    }
    assert "5 of them the same" in found["part"].not_comparable["published"]
    assert "published" not in found["full"].not_comparable


def test_order_and_intervals_use_one_statistic():
    a_runs = {"s1": [1.0, 1.0, 1.0], "s2": [0.0], "s3": [0.5]}  # games' mean 0.70, structures' mean 0.50
    b_runs = {"s1": [0.9], "s2": [0.2], "s3": [0.5]}  # 0.533 either way
    a = Scores("a", mean_sem([v for r in a_runs.values() for v in r])[0], 0.1, a_runs)
    b = Scores("b", mean_sem([v for r in b_runs.values() for v in r])[0], 0.1, b_runs)
    assert a.mean > b.mean
    placements = rank_bands([a, b], samples=500)
    assert [p.key for p in placements] == ["b", "a"]
    assert placements[0].mean == pytest.approx(1.6 / 3) and placements[1].mean == pytest.approx(0.5)
    assert placements[0].to_next.diff == pytest.approx(1.6 / 3 - 0.5)


def test_a_run_on_three_structures_is_shown_not_comparable_with_table1(entry_data, tmp_path, capsys):
    data = json.loads(json.dumps(entry_data))
    data["settings"]["condition"]["turns"] = 20  # the paper's condition: the published rows' group
    data["group"]["condition"] = "oracle 5 · no tools · 20 turns"
    path = _write(tmp_path / "three.entry.json", data)
    out = tmp_path / "board.md"
    assert main(["leaderboard", str(path), "--format", "md", "-o", str(out), *FAST]) == 0
    rows = [line for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    ours = next(line for line in rows if line.split(" | ")[2] == "scripted")
    assert ours.startswith("| 1 |") and "not comparable: " in ours and "3 of them the same" in ours
    gemini = next(line for line in rows if line.split(" | ")[2] == "Gemini-3-Flash (published)")
    assert gemini.startswith("| 1 |")
