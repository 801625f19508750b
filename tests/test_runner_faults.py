"""Runner faults of issue 15: one writer per run directory (#3), logs and data that stopped everything (#11),
model checks (#9), credentials in --api-base (#12), honest replays (#8) and Ctrl-C (#10)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

import craft_env
from craft_env.cli import main
from craft_env.datasets import load_structures
from craft_env.eval.logs.games import read_games
from craft_env.eval.run.runner import load_settings, run_benchmark
from craft_env.eval.run.settings import RunSettings
from fake_providers import install  # tests/ is on sys.path (conftest)
from gated_process import gated, gated_run, wait_for

# ------------------------------------------------------------------ #3 one writer


def test_a_second_process_cannot_write_a_live_run_directory(tmp_path):
    out = tmp_path / "live"
    first = gated_run(tmp_path, out)
    wait_for(first, tmp_path / "waiting")
    second = gated(tmp_path / "second", "run", "--resume", "--out", str(out), "--no-progress", "--no-plots")
    _, second_err = second.communicate(timeout=600)  # a safety net should the lock fail: no hang
    (tmp_path / "gate").touch()
    stdout, stderr = first.communicate()
    assert second.returncode != 0
    lines = second_err.strip().splitlines()
    expected = f"craft-env: error: run directory {out} is in use by another craft-env process "
    expected += f"(pid {first.pid})"
    assert lines == [expected]
    assert first.returncode == 0, stderr
    raw = [json.loads(line) for line in (out / "run_1" / "log.jsonl").read_text().splitlines()]
    assert sorted(r["structure_index"] for r in raw if r.get("event") == "done") == [0, 1]
    assert sorted(r["structure_index"] for r in raw if r.get("event") == "start") == [0, 1]
    again = run_benchmark(load_settings(out), resume=True)  # the lock went with the first process
    assert again[0]["done"] == 2


def test_a_killed_run_leaves_no_stuck_lock(tmp_path):
    out = tmp_path / "killed"
    first = gated_run(tmp_path, out)
    wait_for(first, tmp_path / "waiting")
    first.kill()
    first.communicate()
    from craft_env.eval.run.lock import RunLock

    with RunLock(out):
        pass


# ------------------------------------------------------------------ #10 Ctrl-C


def test_ctrl_c_prints_one_line_with_what_was_saved_and_the_resume_command(tmp_path):
    out = tmp_path / "interrupted"
    process = gated_run(tmp_path, out)
    wait_for(process, tmp_path / "waiting")  # inside a model call: a state, never a time
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "Traceback" not in stdout
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "interrupted" in lines[0] and f"craft-env run --resume --out {out}" in lines[0]


# ------------------------------------------------------------------ #11 logs and data


def _finished(tmp_path) -> Path:
    out = tmp_path / "done"
    run_benchmark(RunSettings(out=str(out), structures="0,1", turns=3))
    return out


def test_log_lines_without_turn_number_or_progress_are_skipped(tmp_path):
    out = _finished(tmp_path)
    log = out / "run_1" / "log.jsonl"
    lines = log.read_text().splitlines()
    broken = [json.loads(line) for line in lines]
    turns = [r for r in broken if r["kind"] == "turn"]
    del turns[0]["turn_number"]
    del turns[1]["progress_data"]
    log.write_text("\n".join(json.dumps(r) for r in broken) + "\n")
    games = read_games(log)
    assert sum(len(g.turns) for g in games.values()) == len(turns) - 2
    from craft_env.eval.report.report import write_report

    write_report([out], plots=False)


def test_non_utf8_bytes_at_the_tail_are_a_skipped_line(tmp_path):
    out = _finished(tmp_path)
    log = out / "run_1" / "log.jsonl"
    with log.open("ab") as handle:
        handle.write(b'{"kind": "turn", "text": "\xff\xfe')
    assert {g.status for g in read_games(log).values()} == {"done"}
    summary = run_benchmark(load_settings(out), resume=True)[0]
    assert summary["done"] == 2


def test_a_config_without_the_models_does_not_resume_as_scripted(tmp_path):
    out = _finished(tmp_path)
    config = json.loads((out / "config.json").read_text())
    del config["director_model"]
    (out / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="director_model"):
        load_settings(out)


@pytest.mark.parametrize(
    "content, words",
    [
        (b"[", ["not valid JSON", "line 1"]),
        (b"\xff\xfe[]", ["not UTF-8"]),
        (b"[" * 100_000 + b"]" * 100_000, ["nested too deeply"]),
        (b"[]", ["no structures"]),
        (b'[{"structure": {"(0,0)": ["gs"], "( 0 , 0 )": ["bs"]}}]', ["entry 0", "same cell"]),
        (b'[{"structure": {}}]', ["entry 0", "empty"]),
        (b'[{"structure": {"(0,0)": []}}]', ["entry 0", "empty"]),
        (b'[{"structure": {"(0,0)": ["gs"]}, "metadata": {"n": 0}}]', ["entry 0", "n"]),
    ],
    ids=["json", "encoding", "deep", "empty-list", "duplicate-keys", "empty-target", "empty-stack", "n-0"],
)
def test_dataset_errors_name_the_file(tmp_path, content, words):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as error:
        load_structures(path)
    message = str(error.value)
    assert str(path) in message and all(word in message for word in words), message


def test_a_failed_load_writes_no_config(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("[]")
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="no structures"):
        run_benchmark(RunSettings(out=str(out), dataset=str(path)))
    assert not (out / "config.json").exists()
    rerun = ["run", "--out", str(out), "--no-progress", "--no-plots", "--structures", "0", "--turns", "1"]
    assert main(rerun) == 0


@pytest.mark.parametrize(
    "config, field",
    [({"max_turns": 2**63}, "max_turns"), ({"director_order": [0, 1, 2.7]}, "director_order")],
)
def test_env_settings_out_of_range_are_refused(config, field):
    with pytest.raises(ValueError, match=field):
        craft_env.env(**config)


def test_seeds_beyond_64_bits_are_refused_not_cut():
    env = craft_env.env()
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=2**64)


def test_raw_env_step_before_reset_is_a_clear_error():
    with pytest.raises(RuntimeError, match="reset"):
        craft_env.raw_env().step(0)


# ------------------------------------------------------------------ #9 model strings


def test_a_mistyped_model_is_refused_before_any_game(tmp_path, capsys):
    out = tmp_path / "typo"
    code = main(["run", "--out", str(out), "--builder-model", "gpt-4o-mni-typo", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 2 and "gpt-4o-mni-typo" in captured.err and "LLM Provider NOT provided" in captured.err
    assert not (out / "config.json").exists()


def test_the_cause_of_an_errored_game_is_on_the_terminal(tmp_path, capsys):
    from craft_env.models.llm import import_litellm

    litellm = import_litellm()

    class Down(litellm.CustomLLM):
        async def acompletion(self, *args, **kwargs):
            raise litellm.BadRequestError(message="model gone away", model="m", llm_provider="down")

    install("down", Down())
    code = main(["run", "--out", str(tmp_path / "down"), "--builder-model", "down/m", "--structures", "0",
                 "--turns", "1", "--no-progress", "--no-plots", "--num-retries", "0"])
    assert code == 1 and "model gone away" in capsys.readouterr().err


# ------------------------------------------------------------------ #12 credentials in --api-base


def test_credentials_in_the_api_base_reach_no_file(tmp_path):
    out = tmp_path / "creds"
    api_base = "http://alice:hunter2pass@localhost:9/v1?token=tok-SECRET-123&mode=fast"
    run_benchmark(RunSettings(out=str(out), structures="0", turns=1, api_base=api_base))
    config = (out / "config.json").read_text()
    assert "hunter2pass" not in config and "tok-SECRET-123" not in config and "alice" not in config
    assert "localhost:9/v1" in config and "mode=fast" in config
    from craft_env.models.redact import Redactor

    redactor = Redactor()
    redactor.add_url(api_base)
    assert "hunter2pass" not in redactor.text("login failed for password hunter2pass")


# ------------------------------------------------------------------ #8 replays


def test_replay_from_takes_models_and_settings_from_the_source_run(tmp_path):
    source = tmp_path / "source"
    args = ["--director-model", "scripted/team", "--builder-model", "scripted/team", "--structures", "0",
            "--turns", "2", "--oracle-n", "3", "--no-progress", "--no-plots"]
    assert main(["run", "--out", str(source), *args]) == 0
    replay = tmp_path / "replay"
    assert main(["run", "--out", str(replay), "--replay-from", str(source), "--no-progress"]) == 0
    config = json.loads((replay / "config.json").read_text())
    assert config["builder_model"] == "scripted/team" and config["turns"] == 2 and config["oracle_n"] == 3
    assert config["replay_only"] is True
    moves = [[t["move"] for t in g.turns] for g in read_games(replay / "run_1" / "log.jsonl").values()]
    played = read_games(source / "run_1" / "log.jsonl").values()
    assert moves == [[t["move"] for t in g.turns] for g in played]
    changed = ["run", "--out", str(tmp_path / "r2"), "--replay-from", str(source), "--turns", "5"]
    assert main(changed) == 1  # a setting the source did not play: its calls are misses, not new calls
