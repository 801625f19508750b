"""Reports from logs alone: Table 1 arithmetic, the taxonomy, the log reader, plots."""

from __future__ import annotations

import builtins
import json
import logging
import math

import pytest

from craft_env.models.jsonl import AppendOnlyJsonl
from craft_env.eval.logs.games import GameLog, RunLog, read_games
from craft_env.eval.report.report import load_results, markdown, write_report
from craft_env.eval.results.stats import cluster_sem, mean_sem
from craft_env.models.jsonl import dumps, json_safe
from craft_env.eval.results.table import progress_curve, remove_curves, table_row
from craft_env.eval.results.taxonomy import classify, taxonomy

def turn(
    number, progress, *, legal=True, remove=False, prescribed=False, optimal=True, offered=None, move=None
):
    metrics = {
        "progress": progress,
        "completion": progress,
        "position_accuracy": progress,
        "iou": progress,
        "voxel_iou": progress,
        "distance": 0 if progress == 1 else 5,
    }
    return {
        "kind": "turn",
        "turn_number": number,
        "legal": legal,
        "remove_attempted": remove,
        "remove_prescribed": prescribed,
        "followed_oracle": optimal,
        "optimal": optimal,
        "progress_data": metrics,
        "oracle_moves": offered,
        "move_attempted": move,
        "calls": 1,
        "tokens": {"prompt": 10, "completion": 2},
        "cost": 0.5,
    }

def game(index, turns):
    return GameLog(1, index, f"s{index}", status="done", attempt=1, attempts=1, turns=turns)

def test_table_row_follows_the_paper_definitions():
    games = [
        game(0, [turn(1, 0.2, legal=False, remove=True, prescribed=True), turn(2, 0.4)]),
        game(1, [turn(1, 0.1), turn(2, 0.3, prescribed=True), turn(3, 0.6, legal=False), turn(4, 0.8)]),
    ]
    row = table_row(games, errored=1)
    assert row["progress"] == pytest.approx(0.6)
    assert row["progress_sem"] == pytest.approx(math.sqrt(((0.4 - 0.6) ** 2 + (0.8 - 0.6) ** 2) / 1 / 2))
    assert row["fail"] == pytest.approx((0.5 + 0.25) / 2)
    assert row["fail_sem"] == pytest.approx(0.125)
    assert row["remove"] == pytest.approx(1 / 6)
    assert row["remove_prescribed"] == pytest.approx(2 / 6)
    assert row["gap"] == pytest.approx(-1 / 6)
    assert (row["games"], row["errored"], row["turns"], row["calls"], row["cost"]) == (2, 1, 6, 6, 3.0)
    assert row["mean_turns"] == 3

def test_curves_carry_finished_games_forward():
    games = [
        game(0, [turn(1, 0.5), turn(2, 1.0)]),
        game(1, [turn(1, 0.0, remove=True), turn(2, 0.2), turn(3, 0.4)]),
    ]
    curve = progress_curve(games, 4)
    assert [m for m, _ in curve] == pytest.approx([0.25, 0.6, 0.7, 0.7])
    attempted, prescribed = remove_curves(games, 4)
    assert attempted[:3] == [0.5, 0.0, 0.0] and math.isnan(attempted[3])
    assert prescribed[:3] == [0.0, 0.0, 0.0]

def test_cluster_sem_counts_each_cluster_once():
    """A structure played the same way in all its seeds is one observation, not ten: the SEM is that of
    the clusters' means, whatever the number of copies; one cluster gives NaN; lengths must agree."""
    means = [0.2, 0.6, 0.7]
    copies = [m for m in means for _ in range(10)]
    labels = [k for k in range(3) for _ in range(10)]
    assert cluster_sem(copies, labels) == pytest.approx(mean_sem(means)[1])
    assert cluster_sem(copies, labels) > 3 * mean_sem(copies)[1]
    assert cluster_sem([0.1, 0.3, 0.5, 0.9], ["a", "b", "a", "b"]) == pytest.approx(mean_sem([0.3, 0.6])[1])
    assert math.isnan(cluster_sem([0.1, 0.2], ["a", "a"]))
    with pytest.raises(ValueError, match="clusters: expected one per value"):
        cluster_sem([0.1, 0.2], ["a"])


def test_mean_sem_edge_cases():
    """One rule for small samples: one value has a mean and no SEM (NaN), none has neither."""
    mean, sem = mean_sem([0.5])
    assert mean == 0.5 and math.isnan(sem)
    assert all(math.isnan(x) for x in mean_sem([]))


def test_json_files_write_nan_as_null_and_infinity_as_a_string():
    record = json_safe({"sem": float("nan"), "d": [float("inf"), -float("inf")], "t": (1.5,)})
    assert record == {"sem": None, "d": ["Infinity", "-Infinity"], "t": [1.5]}
    assert dumps(record) == '{"d":["Infinity","-Infinity"],"sem":null,"t":[1.5]}'


RS_00 = {"action": "place", "block": "rs", "position": "(0,0)", "layer": 0, "span_to": None}
RL_00_01 = {"action": "place", "block": "rl", "position": "(0,0)", "layer": 0, "span_to": "(0,1)"}
REMOVE_12 = {"action": "remove", "position": "(1,2)", "layer": 1, "span_to": None}


@pytest.mark.parametrize(
    "move, offered, expected",
    [
        ({**RS_00, "layer": 1}, [RS_00], "layer"),
        ({**RL_00_01, "span_to": "(1,0)"}, [RL_00_01], "span"),
        (RS_00, [RL_00_01], "span"),
        ({**RS_00, "block": "gs"}, [RS_00], "wrong_colour"),
        ({**RS_00, "position": "(2,2)"}, [RS_00], "wrong_position"),
        ({**REMOVE_12, "layer": 0}, [REMOVE_12], "layer"),
        ({**REMOVE_12, "position": "(0,0)"}, [REMOVE_12], "wrong_position"),
        (REMOVE_12, [RS_00], "other"),
        (None, [RS_00], "other"),
        ({"action": "noop"}, [RS_00], "other"),
        (
            {**RS_00, "block": "gs", "position": "(2,2)"},
            [RS_00, {**RS_00, "position": "(2,2)"}],
            "wrong_colour",
        ),
    ],
)
def test_taxonomy_categories(move, offered, expected):
    assert classify(move, False, offered) == expected

def test_taxonomy_counts_only_turns_with_offered_moves():
    turns = [
        turn(1, 0.1, optimal=True, offered=[RS_00], move=RS_00),
        turn(2, 0.1, optimal=False, offered=[RS_00], move={**RS_00, "layer": 2}),
        turn(3, 0.1, optimal=False, offered=None, move=RS_00),
    ]
    found = taxonomy(turns)
    assert found["turns"] == 2 and found["correct"] == 0.5 and found["layer"] == 0.5

def _write_log(tmp_path, records, torn=""):
    path = tmp_path / "run_1" / "log.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + torn, encoding="utf-8")
    return path

def _marker(index, attempt, event):
    return {
        "kind": "game",
        "event": event,
        "run": 1,
        "structure_index": index,
        "structure_id": f"s{index}",
        "attempt": attempt,
        "turn_number": 0,
    }

def _turn_line(index, attempt, number, progress=0.5):
    return {
        **turn(number, progress),
        "run": 1,
        "structure_index": index,
        "structure_id": f"s{index}",
        "attempt": attempt,
    }

def test_reader_keeps_one_attempt_per_game_and_one_line_per_turn(tmp_path):
    records = [
        _marker(0, 1, "start"),
        _turn_line(0, 1, 1, 0.9),
        _turn_line(0, 1, 2, 0.9),  # killed: partial
        _marker(1, 1, "start"),
        _turn_line(1, 1, 1),
        _marker(1, 1, "errored"),
        _marker(2, 1, "start"),
        _turn_line(2, 1, 1),
        _marker(2, 1, "done"),
        _marker(0, 2, "start"),
        _turn_line(0, 2, 1, 0.1),
        _turn_line(0, 2, 2, 0.2),
        _marker(0, 2, "done"),
    ]
    path = _write_log(tmp_path, records, torn='{"kind": "turn", "run": 1, "struc')
    games = read_games(path)
    assert {k: g.status for k, g in games.items()} == {(1, 0): "done", (1, 1): "errored", (1, 2): "done"}
    assert [t["progress_data"]["progress"] for t in games[(1, 0)].turns] == [0.1, 0.2]
    assert games[(1, 0)].attempt == 2 and games[(1, 1)].attempts == 1
    (result,) = load_results([tmp_path])
    assert result.row["games"] == 2 and result.row["errored"] == 1

def test_appending_after_a_torn_line_starts_a_clean_line(tmp_path):
    path = _write_log(tmp_path, [_marker(0, 1, "start")], torn='{"kind": "tu')
    writer = RunLog(tmp_path, 1)
    writer.game_event("done", 0, "s0", 1, 0)
    writer.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["event"] for line in lines] == ["start", "done"]

def test_writer_redacts_and_flushes_each_line(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_API_KEY", "very-secret-value-42")
    from craft_env.models.redact import Redactor

    writer = AppendOnlyJsonl(tmp_path / "x.jsonl", Redactor())
    writer.write({"text": "key is very-secret-value-42", "quote": 'say "hi"'})
    assert "very-secret-value-42" not in (tmp_path / "x.jsonl").read_text()
    assert json.loads((tmp_path / "x.jsonl").read_text())["quote"] == 'say "hi"'
    writer.close()

def test_report_writes_markdown_json_and_skips_plots_without_matplotlib(tmp_path, monkeypatch, caplog):
    records = [_marker(0, 1, "start"), _turn_line(0, 1, 1, 0.3), _marker(0, 1, "done")]
    _write_log(tmp_path, records)
    (tmp_path / "config.json").write_text(
        json.dumps({"director_model": "d/m", "builder_model": "b/m", "oracle_n": 5, "turns": 3})
    )
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with caplog.at_level(logging.WARNING):
        results, target = write_report([tmp_path])
    assert "matplotlib" in caplog.text and not (target / "plots" / "progress.png").exists()
    text = (target / "report.md").read_text()
    assert "| Run | Directors | Builder | Oracle | Prog." in text and "0.300 ± n/a" in text  # one game: no SEM (docs/benchmark.md)
    data = json.loads((target / "report.json").read_text())
    assert data[0]["director_model"] == "d/m" and data[0]["progress"] == pytest.approx(0.3)
    assert "Failure taxonomy" in markdown(results)

def test_report_rejects_a_directory_without_logs(tmp_path):
    with pytest.raises(ValueError, match="no run logs"):
        load_results([tmp_path])
    with pytest.raises(ValueError, match="not a directory"):
        load_results([tmp_path / "missing"])

def test_several_runs_get_a_pooled_row(tmp_path):
    for run in (1, 2):
        path = tmp_path / f"run_{run}" / "log.jsonl"
        path.parent.mkdir()
        lines = [
            dict(_marker(0, 1, "start"), run=run),
            dict(_turn_line(0, 1, 1, 0.2 * run), run=run),
            dict(_marker(0, 1, "done"), run=run),
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    results = load_results([tmp_path])
    assert [r.label.split("/")[1] for r in results] == ["run_1", "run_2", "all"]
    assert results[2].row["progress"] == pytest.approx(0.3) and results[2].row["games"] == 2
