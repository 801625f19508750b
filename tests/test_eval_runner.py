"""The benchmark runner end to end: scripted team, model path, faults, resume, secrets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from craft_env import Move, Structure
from craft_env.eval.logs.games import read_games
from craft_env.eval.run.provider import request_context, scripted_reply
from craft_env.eval.report.report import load_results, write_report
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings
from fake_providers import install  # tests/ is on sys.path (conftest)

SECRET = "sk-test-RUNNERSECRET0123456789abcdef"


def _strip(value):
    """A record without its timing fields (latency is measured, everything else is reproducible)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "latency"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _lines(out: Path, run: int = 1) -> list[dict]:
    return [_strip(json.loads(line)) for line in (out / f"run_{run}" / "log.jsonl").read_text().splitlines()]


def _moves(out: Path) -> dict[int, list]:
    games = read_games(out / "run_1" / "log.jsonl")
    return {key[1]: [t["move"] for t in game.turns] for key, game in games.items() if game.status == "done"}


def _litellm():
    from craft_env.models.llm import import_litellm

    return import_litellm()


class ScriptedWithFaults:
    """A litellm provider answering like ``scripted/`` after raising the queued errors."""

    def __new__(cls, errors=(), always=None):
        litellm = _litellm()

        class Handler(litellm.CustomLLM):
            def __init__(self):
                super().__init__()
                self.errors = list(errors)
                self.always = always
                self.calls = 0

            def _answer(self, model, messages, kwargs):
                self.calls += 1
                if self.always is not None:
                    raise self.always()
                if self.errors:
                    raise self.errors.pop(0)()
                text = scripted_reply(model, messages, request_context(kwargs))
                return litellm.ModelResponse(
                    model=model, choices=[{"message": {"role": "assistant", "content": text}}]
                )

            def completion(self, model, messages, *args, **kwargs):
                return self._answer(model, messages, kwargs)

            async def acompletion(self, model, messages, *args, **kwargs):
                return self._answer(model, messages, kwargs)

        return Handler()


async def _no_sleep(delay):
    return None


FAST = {"sleep": _no_sleep, "jitter": lambda: 0.0}


# ------------------------------------------------------------------ the scripted team


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("scripted") / "out"
    summaries = run_benchmark(RunSettings(out=str(out)))
    return out, summaries


def test_scripted_team_completes_the_bundled_set_and_writes_everything(scripted_run):
    out, summaries = scripted_run
    summary = summaries[0]
    assert summary["done"] == 20 and summary["errored"] == 0
    assert summary["table"]["progress"] > 0.9
    for name in ("config.json", "run_1/log.jsonl", "run_1/summary.json"):
        assert (out / name).exists()
    lines = _lines(out)
    turns = [line for line in lines if line["kind"] == "turn"]
    assert all({"structure_id", "run", "turn_number"} <= set(line) for line in lines)
    first = turns[0]
    for field in (
        "structure_before",
        "director_responses",
        "oracle_moves",
        "move_attempted",
        "executed",
        "followed_oracle",
        "progress_data",
        "reason",
        "optimal",
        "remove_prescribed",
        "tokens",
        "cost",
    ):
        assert field in first
    assert len(first["director_responses"]) == 3
    assert {"think", "message"} <= set(first["director_responses"][0])
    results, target = write_report([out])
    assert (target / "report.md").exists() and (target / "plots" / "progress.png").exists()
    assert (target / "plots" / "removes.png").exists()


def test_logged_boards_replay_move_by_move(scripted_run):
    """Each turn's ``structure_before`` plus its executed ``move_attempted`` is the next turn's board."""
    out, _ = scripted_run
    games: dict[tuple, list[dict]] = {}
    for line in _lines(out):
        if line["kind"] == "turn":
            games.setdefault((line["structure_id"], line["attempt"]), []).append(line)
    assert games
    for turns in games.values():
        assert Structure.from_dict(turns[0]["structure_before"]).num_blocks == 0
        for before, after in zip(turns, turns[1:]):
            board = Structure.from_dict(before["structure_before"])
            if before["executed"]:
                board = board.apply(Move.from_dict(before["move_attempted"]))
            assert board == Structure.from_dict(after["structure_before"])


def test_scripted_team_is_reproducible_from_the_seed(scripted_run, tmp_path):
    out, _ = scripted_run
    again = tmp_path / "again"
    run_benchmark(RunSettings(out=str(again)))
    assert _lines(again) == _lines(out)
    other_seed = tmp_path / "other"
    run_benchmark(RunSettings(out=str(other_seed), seed=1, structures="0,1,2"))
    assert _moves(other_seed) != {k: v for k, v in _moves(out).items() if k < 3}


def test_scripted_team_beats_the_random_team(scripted_run, tmp_path):
    _, summaries = scripted_run
    for oracle_n in (5, 0):
        scripted = (
            summaries[0]["table"]
            if oracle_n == 5
            else run_benchmark(RunSettings(out=str(tmp_path / "s0"), oracle_n=0))[0]["table"]
        )
        random = run_benchmark(
            RunSettings(
                out=str(tmp_path / f"random{oracle_n}"),
                director_model="random",
                builder_model="random",
                oracle_n=oracle_n,
            )
        )[0]["table"]
        assert scripted["progress"] > random["progress"] + 2 * (
            scripted["progress_sem"] + random["progress_sem"]
        )


def test_report_reproduces_the_table_from_logs_alone(scripted_run, tmp_path):
    out, summaries = scripted_run
    copy = tmp_path / "logs_only" / "run_1"
    copy.mkdir(parents=True)
    copy.joinpath("log.jsonl").write_bytes((out / "run_1" / "log.jsonl").read_bytes())
    (result,) = load_results([copy.parent])
    expected = summaries[0]["table"]
    for key, value in expected.items():
        assert result.row[key] == pytest.approx(value, nan_ok=True), key


# ------------------------------------------------------------------ the model path


def test_model_path_through_the_scripted_provider_plays_like_the_scripted_team(tmp_path):
    direct = tmp_path / "direct"
    through = tmp_path / "through"
    run_benchmark(RunSettings(out=str(direct), structures="0,5", turns=8))
    summary = run_benchmark(
        RunSettings(
            out=str(through),
            structures="0,5",
            turns=8,
            director_model="scripted/team",
            builder_model="scripted/team",
        )
    )[0]
    assert _moves(through) == _moves(direct)
    assert summary["table"]["calls"] == 2 * 8 * 4
    assert summary["table"]["prompt_tokens"] > 0
    turn = next(line for line in _lines(through) if line["kind"] == "turn")
    assert turn["director_responses"][0]["raw"].startswith("<think>")
    assert turn["builder"]["raw"] and turn["builder"]["sent"].startswith("place")
    assert (through / "cache.jsonl").exists()


def test_a_recorded_run_replays_offline_bit_for_bit(tmp_path):
    from craft_env.cli import main

    litellm = _litellm()
    install("rec", ScriptedWithFaults())
    recorded = tmp_path / "recorded"
    common = [
        "--structures",
        "2,9",
        "--turns",
        "6",
        "--director-model",
        "rec/team",
        "--builder-model",
        "rec/team",
        "--no-progress",
        "--no-plots",
    ]
    assert main(["run", "--out", str(recorded), *common]) == 0
    install(
        "rec",
        ScriptedWithFaults(
            always=lambda: litellm.APIConnectionError(message="offline", llm_provider="rec", model="m")
        ),
    )
    replayed = tmp_path / "replayed"
    assert main(["run", "--out", str(replayed), "--replay-from", str(recorded), *common]) == 0

    def lines(out):
        return sorted((out / "run_1" / "log.jsonl").read_text().splitlines())

    assert lines(replayed) == lines(recorded)
    assert (
        main(
            [
                "run",
                "--out",
                str(tmp_path / "miss"),
                "--replay-from",
                str(recorded),
                *common[:1],
                "3",
                *common[2:],
            ]
        )
        == 1
    )


@pytest.mark.parametrize(
    "reply",
    ["I think we should build something nice together.", "}{ %%% \x00 ### ;; lorem ipsum", "z" * 60000],
    ids=["no-tags", "garbage", "huge"],
)
def test_malformed_model_replies_are_failed_turns_with_reasons(tmp_path, reply):
    out = tmp_path / "mock"
    summary = run_benchmark(
        RunSettings(
            out=str(out),
            structures="0",
            turns=3,
            director_model="openai/gpt-4o-mini",
            builder_model="openai/gpt-4o-mini",
        ),
        client_options={"extra": {"mock_response": reply}, **FAST},
    )[0]
    assert summary["errored"] == 0 and summary["done"] == 1
    turns = [line for line in _lines(out) if line["kind"] == "turn"]
    assert len(turns) == 3
    for turn in turns:
        assert turn["failed"] and turn["reason"]
        assert turn["builder"]["reason"]
        assert all(d["reason"] for d in turn["director_responses"])
        assert len(json.dumps(turn)) < 200_000


def test_rate_limits_and_timeouts_are_retried_inside_a_game(tmp_path):
    litellm = _litellm()
    handler = ScriptedWithFaults(
        errors=[
            lambda: litellm.RateLimitError(message="slow down", llm_provider="faulty", model="m"),
            lambda: litellm.Timeout(message="timed out", model="m", llm_provider="faulty"),
            lambda: litellm.RateLimitError(message="slow down", llm_provider="faulty", model="m"),
        ]
    )
    install("faulty", handler)
    summary = run_benchmark(
        RunSettings(
            out=str(tmp_path / "retry"),
            structures="1",
            turns=4,
            director_model="faulty/team",
            builder_model="faulty/team",
        ),
        client_options=FAST,
    )[0]
    assert summary["done"] == 1 and summary["errored"] == 0
    assert handler.calls == 4 * 4 + 3


def test_an_internal_crash_errors_only_that_game_and_logs_like_a_model_failure(tmp_path, monkeypatch):
    import craft_env.eval.run.runner as runner

    def crash_on_structure_0(info, *args):
        if info["turn"] == 2 and crash_on_structure_0.armed:
            crash_on_structure_0.armed = False
            raise RuntimeError("boom")
        return original(info, *args)

    original = runner._turn_fields
    crash_on_structure_0.armed = True
    monkeypatch.setattr(runner, "_turn_fields", crash_on_structure_0)
    out = tmp_path / "crash"
    summary = run_benchmark(RunSettings(out=str(out), structures="0,1", turns=4))[0]
    assert summary["errored"] == 1 and summary["done"] == 1
    errored = [line for line in _lines(out) if line.get("event") == "errored"]
    assert len(errored) == 1
    event = errored[0]
    assert event["error_type"] == "InternalError" and event["error"] == "RuntimeError: boom"
    assert {"tokens", "cost"} <= set(event)


def test_a_provider_that_keeps_failing_errors_the_game_and_resume_finishes_it(tmp_path):
    litellm = _litellm()
    out = tmp_path / "errored"
    settings = dict(
        out=str(out),
        structures="0,1",
        turns=5,
        director_model="scripted/team",
        builder_model="broken/team",
        num_retries=2,
    )
    broken = ScriptedWithFaults(
        always=lambda: litellm.ServiceUnavailableError(message="down", llm_provider="broken", model="m")
    )
    install("broken", broken)
    summary = run_benchmark(RunSettings(**settings), client_options=FAST)[0]
    assert summary["errored"] == 2 and summary["done"] == 0
    assert broken.calls == 2 * 3
    errored = [line for line in _lines(out) if line.get("event") == "errored"]
    assert len(errored) == 2 and "ServiceUnavailableError" in errored[0]["error"]
    assert all(line["kind"] != "turn" for line in _lines(out))

    install("broken", ScriptedWithFaults())
    summary = run_benchmark(RunSettings(**settings), resume=True, client_options=FAST)[0]
    assert summary["errored"] == 0 and summary["done"] == 2
    games = read_games(out / "run_1" / "log.jsonl")
    assert {g.status for g in games.values()} == {"done"} and {g.attempt for g in games.values()} == {2}
    assert [t["turn_number"] for t in games[(1, 0)].turns] == [1, 2, 3, 4, 5]


def test_resume_refuses_a_fresh_run_over_an_old_one(scripted_run):
    out, _ = scripted_run
    with pytest.raises(ValueError, match="--resume"):
        run_benchmark(RunSettings(out=str(out)))


def test_the_api_key_reaches_no_file(tmp_path, monkeypatch):
    litellm = _litellm()
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    class Leaky(litellm.CustomLLM):
        def __init__(self):
            super().__init__()
            self.builder_calls = 0

        def _answer(self, model, messages, kwargs):
            if "builder" in messages[0]["content"].split(".")[0]:
                self.builder_calls += 1
                if self.builder_calls > 2:
                    raise litellm.AuthenticationError(
                        message=f"Incorrect API key provided: {os.environ['OPENAI_API_KEY']}",
                        llm_provider="leaky",
                        model="m",
                    )
            text = scripted_reply(model, messages, request_context(kwargs))
            text = text.replace("</message>", f" (key {SECRET})</message>")
            return litellm.ModelResponse(
                model=model, choices=[{"message": {"role": "assistant", "content": text}}]
            )

        def completion(self, model, messages, *args, **kwargs):
            return self._answer(model, messages, kwargs)

        async def acompletion(self, model, messages, *args, **kwargs):
            return self._answer(model, messages, kwargs)

    install("leaky", Leaky())
    out = tmp_path / "secret"
    summary = run_benchmark(
        RunSettings(
            out=str(out), structures="0", turns=5, director_model="leaky/team", builder_model="leaky/team"
        ),
        client_options=FAST,
    )[0]
    assert summary["errored"] == 1
    write_report([out])
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) >= 5
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert "[REDACTED]" in (out / "run_1" / "log.jsonl").read_text()


# ------------------------------------------------------------------ kill and resume


def _start(out: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "craft_env.cli",
        "-vv",
        "run",
        "--out",
        str(out),
        "--no-progress",
        "--no-plots",
        "--concurrency",
        "3",
        "--structures",
        KILL_SET,
    ]
    return subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)


KILL_SET = "0,1,2,3,4,5,6,7"


@pytest.mark.parametrize("kill_after", [5, 70])
def test_kill_and_resume_loses_and_duplicates_nothing(tmp_path, scripted_run, kill_after):
    out = tmp_path / "killed"
    process = _start(out)
    logged = 0
    for line in process.stderr:
        if "turn logged" in line:
            logged += 1
            if logged == kill_after:
                process.send_signal(signal.SIGKILL)
                break
    process.wait()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    games = read_games(out / "run_1" / "log.jsonl")
    assert sum(g.status == "done" for g in games.values()) < 8
    interrupted = {key for key, g in games.items() if g.status == "partial"}

    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "craft_env.cli",
            "run",
            "--out",
            str(out),
            "--resume",
            "--no-progress",
            "--no-plots",
        ],
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    raw = [json.loads(line) for line in (out / "run_1" / "log.jsonl").read_text().splitlines()]
    done_markers = [(r["structure_index"]) for r in raw if r.get("event") == "done"]
    assert sorted(done_markers) == list(range(8))
    reference, _ = scripted_run
    assert _moves(out) == {k: v for k, v in _moves(reference).items() if k < 8}
    games = read_games(out / "run_1" / "log.jsonl")
    for key, game in games.items():
        numbers = [t["turn_number"] for t in game.turns]
        assert numbers == list(range(1, len(numbers) + 1))
        assert game.attempt == (2 if key in interrupted else 1)
    raw_turns = sum(1 for r in raw if r["kind"] == "turn")
    assert raw_turns >= sum(len(g.turns) for g in games.values())
    summary = json.loads((out / "run_1" / "summary.json").read_text())
    assert summary["done"] == 8 and summary["errored"] == 0
