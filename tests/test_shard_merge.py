"""``craft-env run --shard I/N`` and ``craft-env merge``: shards partition a run, and merged they are the run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from craft_env.cli import main
from craft_env.eval.judges.items import load_items
from craft_env.eval.judges.questions import FAMILIES
from craft_env.eval.logs.games import read_games
from craft_env.eval.logs.paperlogs import export_paper_logs
from craft_env.eval.replay.page import replay_data
from craft_env.eval.report.report import as_json, load_results
from craft_env.eval.run.lock import RunDirectoryInUse, RunLock
from craft_env.eval.run.merge import merge_shards
from craft_env.eval.run.runner import load_settings, run_benchmark
from craft_env.eval.run.settings import RESULT_FIELDS, RunSettings
from craft_env.eval.run.shard import Shard, canonical_shard, run_games, shard_games
from craft_env.models.jsonl import read_jsonl

#: Seven structures, two runs, no oracle (so results differ from game to game), eight turns: 14 games.
GAME = {"structures": [0, 1, 2, 3, 4, 5, 6], "runs": 2, "turns": 8, "oracle_n": 0}


def play(out: Path, **options) -> Path:
    run_benchmark(RunSettings(out=str(out), **{**GAME, **options}))
    return out


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """The whole run on one machine, and the same run as three shards."""
    root = tmp_path_factory.mktemp("shards")
    whole = play(root / "whole")
    shards = [play(root / f"shard{i}", shard=f"{i}/3") for i in (1, 2, 3)]
    return root, whole, shards


@pytest.fixture(scope="module")
def merged(played):
    root, _, shards = played
    merge_shards(shards, root / "merged")
    return root / "merged"


def lines_by_game(out: Path) -> dict[tuple[int, int], list[dict]]:
    found: dict[tuple[int, int], list[dict]] = {}
    for path in sorted(out.glob("run_*/log.jsonl")):
        for record in read_jsonl(path):
            found.setdefault((record["run"], record["structure_index"]), []).append(record)
    return found


def without(value, keys):
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


# ---------------------------------------------------------------------------------------------- shards


@settings(max_examples=200, deadline=None)
@given(
    runs=st.integers(1, 4),
    selected=st.lists(st.integers(0, 40), min_size=1, max_size=25, unique=True).map(sorted),
    count=st.integers(1, 60),
)
def test_shards_partition_the_games_whatever_their_number(runs, selected, count):
    games = run_games(runs, selected)
    if count > len(games):
        with pytest.raises(ValueError, match=r"shard: .* holds no games"):
            shard_games(f"{count}/{count}", runs, selected)
        return
    shares = [shard_games(f"{i}/{count}", runs, selected) for i in range(1, count + 1)]
    dealt = [game for share in shares for game in share]
    assert sorted(dealt) == sorted(games) and len(dealt) == len(set(dealt))  # each game in exactly one shard
    assert max(map(len, shares)) - min(map(len, shares)) <= 1
    assert shard_games(None, runs, selected) == games


@given(st.text(max_size=12))
def test_a_shard_is_read_as_i_of_n_or_refused_naming_the_field(text):
    try:
        shard = Shard.parse(text)
    except ValueError as error:
        assert str(error).startswith("shard: ")
        return
    assert 1 <= shard.index <= shard.count and canonical_shard(text) == f"{shard.index}/{shard.count}"


@pytest.mark.parametrize("bad", ["0/3", "4/3", "3", "1/0", "-1/3", "a/b", "1/3/5", ""])
def test_run_refuses_a_bad_shard_naming_the_option(bad, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["run", f"--shard={bad}", "--dry-run"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert f"argument --shard: expected I/N with 1 <= I <= N (e.g. 2/3), got {bad!r}" in error


def test_a_shard_plays_its_share_and_records_it(played):
    _, whole, shards = played
    for number, shard in enumerate(shards, 1):
        config = json.loads((shard / "config.json").read_text())
        assert config["shard"] == f"{number}/3"
        assert set(lines_by_game(shard)) == set(shard_games(f"{number}/3", 2, GAME["structures"]))
    assert json.loads((whole / "config.json").read_text())["shard"] is None


def test_dry_run_counts_the_shards_games_only(capsys):
    assert main(["run", "--dry-run", "--structures", "0,1,2,3,4", "--shard", "2/3"]) == 0
    assert capsys.readouterr().out.startswith("2 game(s)")


def test_resume_keeps_the_shard(played, capsys):
    _, _, shards = played
    assert main(["run", "--resume", "--out", str(shards[0]), "--shard", "2/3", "--no-progress"]) == 2
    assert "--shard: '2/3' differs from the run being resumed ('1/3')" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------- merge


def test_merged_shards_log_every_game_as_the_whole_run_does(played, merged):
    _, whole, _ = played
    assert lines_by_game(merged) == lines_by_game(whole)
    for run in (1, 2):
        ours, theirs = read_games(merged / f"run_{run}/log.jsonl"), read_games(whole / f"run_{run}/log.jsonl")
        assert {k: (g.status, g.turns, g.marker) for k, g in ours.items()} == {
            k: (g.status, g.turns, g.marker) for k, g in theirs.items()
        }


def test_merged_config_and_summaries_look_like_the_whole_runs(played, merged):
    _, whole, shards = played
    ours, theirs = (json.loads((d / "config.json").read_text()) for d in (merged, whole))
    assert {f: ours[f] for f in RESULT_FIELDS} == {f: theirs[f] for f in RESULT_FIELDS}
    assert ours["shard"] is None and ours["dataset_sha256"] == theirs["dataset_sha256"]
    assert [(m["dir"], m["shard"], m["games"]) for m in ours["merged_from"]] == [
        (str(shards[0]), "1/3", 5), (str(shards[1]), "2/3", 5), (str(shards[2]), "3/3", 4)
    ]
    assert set(ours) - set(theirs) == {"merged", "merged_from"}
    created = [json.loads((shard / "config.json").read_text())["created"] for shard in shards]
    assert ours["created"] == min(created)
    for run in (1, 2):
        summaries = [json.loads((d / f"run_{run}/summary.json").read_text()) for d in (merged, whole)]
        assert without(summaries[0], {"seconds_this_session"}) == without(summaries[1], {"seconds_this_session"})
    assert load_settings(merged).games() == load_settings(whole).games()


def test_report_export_replay_and_judge_read_the_merged_run_as_the_whole_run(played, merged, tmp_path):
    _, whole, _ = played
    rows = [without(as_json(load_results([d])), {"label"}) for d in (merged, whole)]
    assert rows[0] == rows[1]
    exported = {}
    for name, d in (("merged", merged), ("whole", whole)):
        paths = export_paper_logs(d, tmp_path / name)
        exported[name] = {
            p.relative_to(tmp_path / name): without(json.loads(p.read_text()), {"timestamp"}) for p in paths
        }
    assert exported["merged"] == exported["whole"] and len(exported["whole"]) == 14
    games = [without(replay_data([d])["games"], {"run", "label", "source"}) for d in (merged, whole)]
    assert games[0] == games[1]
    judged = [[(i.key, i.fields, i.record) for i in load_items(d, FAMILIES)[1]] for d in (merged, whole)]
    assert judged[0] == judged[1] and judged[0]


def test_merge_from_the_command_line_prints_table_one(played, tmp_path, capsys):
    _, _, shards = played
    out = tmp_path / "merged"
    assert main(["merge", *map(str, shards), "-o", str(out), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    assert "Table 1" in printed and f"Merged 3 shard(s) into {out}: 14 game(s)." in printed
    assert (out / "report.md").exists()


def test_merge_refuses_shards_whose_settings_differ_naming_the_field(played, tmp_path):
    _, _, shards = played
    other = play(tmp_path / "other", shard="2/3", turns=6)
    with pytest.raises(ValueError, match=r"^turns: the shards were played with different settings"):
        merge_shards([shards[0], other, shards[2]], tmp_path / "out")
    copy = shutil.copytree(shards[1], tmp_path / "newer")
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "craft_env_version": "99.0"}))
    with pytest.raises(ValueError, match=r"^craft_env_version: "):
        merge_shards([shards[0], copy, shards[2]], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_merge_refuses_overlapping_shards_and_foreign_games(played, tmp_path):
    _, whole, shards = played
    twin = shutil.copytree(shards[0], tmp_path / "twin")
    with pytest.raises(ValueError, match=r"^overlap: .* both hold run 1 structure_001"):
        merge_shards([*shards, twin], tmp_path / "out")
    with pytest.raises(ValueError, match=r"^overlap: "):
        merge_shards([shards[0], whole], tmp_path / "out")
    with pytest.raises(ValueError, match=r"is given twice"):
        merge_shards([shards[0], shards[0]], tmp_path / "out")
    config = json.loads((twin / "config.json").read_text())
    (twin / "config.json").write_text(json.dumps({**config, "shard": "2/3"}))
    with pytest.raises(ValueError, match=r"is shard 2/3 but holds run 1 structure_001, a game of shard 1/3"):
        merge_shards([twin], tmp_path / "out", allow_missing=True)


def test_merge_refuses_missing_games_naming_them_unless_allowed_then_resume_plays_them(played, tmp_path):
    _, whole, shards = played
    out = tmp_path / "out"
    with pytest.raises(ValueError) as refused:
        merge_shards([shards[0], shards[2]], out)
    message = str(refused.value)
    assert message.startswith("missing: 5 game(s)") and "shard 2/3 is not among them" in message
    assert "run 1 structure_002" in message and "--allow-missing" in message
    assert not out.exists()
    result = merge_shards([shards[0], shards[2]], out, allow_missing=True)
    assert [(s.run, s.index) for s in result.missing] == shard_games("2/3", 2, GAME["structures"])
    summaries = [json.loads((out / f"run_{run}/summary.json").read_text()) for run in (1, 2)]
    assert sum(s["errored"] for s in summaries) == 5 and sum(s["games"] for s in summaries) == 14
    assert {"structure_id": "structure_002", "error": None} in summaries[0]["errors"]
    run_benchmark(load_settings(out), resume=True)
    assert lines_by_game(out) == lines_by_game(whole)


def test_merge_refuses_an_output_that_holds_anything_or_is_a_shard(played, merged, tmp_path):
    _, _, shards = played
    with pytest.raises(ValueError, match=r"^output: .* already holds a run"):
        merge_shards(shards, merged)
    with pytest.raises(ValueError, match=r"^output: .* is one of the shards"):
        merge_shards(shards, shards[1])
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"^output: .* is not an empty directory"):
        merge_shards(shards, tmp_path / "full")


def test_merge_waits_for_no_shard_a_process_still_writes(played, tmp_path):
    _, _, shards = played
    with RunLock(shards[1]), pytest.raises(RunDirectoryInUse, match="in use by another craft-env process"):
        merge_shards(shards, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_shards_of_one_dataset_file_at_different_paths_merge(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        assert main(["generate", "--n", "4", "--seed", "3", "-o", str(tmp_path / name / "set.json")]) == 0
    options = {"structures": None, "runs": 1, "turns": 3}
    first = play(tmp_path / "s1", shard="1/2", dataset=str(tmp_path / "a" / "set.json"), **options)
    second = play(tmp_path / "s2", shard="2/2", dataset=str(tmp_path / "b" / "set.json"), **options)
    merge_shards([first, second], tmp_path / "merged")
    assert len(read_games(tmp_path / "merged" / "run_1" / "log.jsonl")) == 4
    assert main(["generate", "--n", "4", "--seed", "4", "-o", str(tmp_path / "b" / "other.json")]) == 0
    third = play(tmp_path / "s3", shard="2/2", dataset=str(tmp_path / "b" / "other.json"), **options)
    with pytest.raises(ValueError, match=r"^dataset: the shards were played with different settings"):
        merge_shards([first, third], tmp_path / "refused")


def test_merged_calls_keep_the_first_answer_of_a_request_two_shards_answered_differently(played, tmp_path, caplog):
    _, _, shards = played
    copies = [shutil.copytree(shard, tmp_path / shard.name) for shard in shards]
    for copy, text in zip(copies, ("first", "second", "first")):
        (copy / "cache.jsonl").write_text(json.dumps({"key": "same request", "text": text}) + "\n")
    result = merge_shards(copies, tmp_path / "merged")
    assert result.cache_conflicts == 1 and "answered differently in two shards" in caplog.text
    assert list(read_jsonl(tmp_path / "merged" / "cache.jsonl")) == [{"key": "same request", "text": "first"}]


def test_merged_model_calls_replay_the_whole_run_offline(tmp_path, capsys):
    """Shards played through litellm (the offline scripted/team model) merge their recorded calls."""
    common = ["--director-model", "scripted/team", "--builder-model", "scripted/team", "--structures", "0,1",
              "--turns", "2", "--no-progress", "--no-plots"]
    for number in (1, 2):
        assert main(["run", *common, "--shard", f"{number}/2", "--out", str(tmp_path / f"s{number}")]) == 0
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "-o", str(tmp_path / "m"), "--no-plots"]) == 0
    recorded = [list(read_jsonl(tmp_path / name / "cache.jsonl")) for name in ("s1", "s2", "m")]
    assert len(recorded[2]) == len(recorded[0]) + len(recorded[1]) > 0
    assert main(["run", "--replay-from", str(tmp_path / "m"), "--out", str(tmp_path / "again"), "--no-progress",
                 "--no-plots"]) == 0
    capsys.readouterr()
    assert without(lines_by_game(tmp_path / "again"), {"latency"}) == without(lines_by_game(tmp_path / "m"),
                                                                               {"latency"})
