"""Additions of issue 15: spend limit, prompts in the logs, dry run, --version, -v after the subcommand."""

from __future__ import annotations

import json

import pytest

from craft_env import __version__
from craft_env.cli import main
from craft_env.models.llm import import_litellm
from craft_env.eval.logs.games import read_games
from craft_env.eval.run.provider import request_context, scripted_reply
from fake_providers import install  # tests/ is on sys.path (conftest)

litellm = import_litellm()


class Priced(litellm.CustomLLM):
    """Answers like ``scripted/`` at a price of one cent a call."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    async def acompletion(self, model, messages, *args, **kwargs):
        self.calls += 1
        text = scripted_reply("scripted/team", messages, request_context(kwargs))
        message = {"role": "assistant", "content": text}
        response = litellm.ModelResponse(model=model, choices=[{"message": message}])
        response._hidden_params = {"response_cost": 0.01}
        return response


RUN = ["--structures", "0", "--turns", "3", "--no-progress", "--no-plots", "--concurrency", "1"]


def test_max_cost_stops_new_calls_and_resume_with_more_finishes(tmp_path):
    handler = Priced()
    install("priced", handler)
    out = tmp_path / "budget"
    code = main(["run", "--out", str(out), "--builder-model", "priced/m", "--max-cost", "0.02",
                 "--price-per-token", "1e-6", *RUN])  # litellm's table lacks priced/m: the cap needs a price
    assert code == 1 and handler.calls == 2
    games = read_games(out / "run_1" / "log.jsonl")
    assert [g.status for g in games.values()] == ["errored"]
    assert games[(1, 0)].marker["error_type"] == "BudgetExceeded"
    assert main(["run", "--out", str(out), "--resume", "--max-cost", "1", "--price-per-token", "1e-6",
                 "--no-progress", "--no-plots"]) == 0
    assert handler.calls == 3


def test_log_prompts_stores_the_messages_of_each_call(tmp_path):
    install("priced", Priced())
    out = tmp_path / "prompts"
    assert main(["run", "--out", str(out), "--builder-model", "priced/m", "--log-prompts", *RUN]) == 0
    records = [json.loads(line) for line in (out / "cache.jsonl").read_text().splitlines()]
    assert len(records) == 3
    for record in records:
        assert record["messages"][0]["role"] == "system" and "builder" in record["messages"][-1]["content"]


def test_dry_run_counts_games_calls_and_tokens_and_plays_nothing(tmp_path, capsys):
    out = tmp_path / "dry"
    code = main(["run", "--out", str(out), "--director-model", "openai/gpt-4o-mini", "--builder-model",
                 "scripted/team", "--structures", "0,1", "--turns", "4", "--dry-run"])
    text = capsys.readouterr().out
    assert code == 0 and not out.exists()
    assert "2 game(s), up to 32 model call(s)" in text
    assert "director openai/gpt-4o-mini: 24 calls" in text and "$" in text
    assert "builder scripted/team: 8 calls" in text  # the offline team is free: the total is priced
    assert "estimated cost: about $" in text
    code = main(["run", "--out", str(out), "--builder-model", "elsewhere/model", "--api-base", "http://127.0.0.1:9",
                 "--structures", "0", "--turns", "1", "--dry-run"])
    assert code == 0 and "not priced by litellm" in capsys.readouterr().out


def test_version_and_verbose_after_the_subcommand(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and __version__ in capsys.readouterr().out
    assert main(["generate", "-v", "--n", "1", "-o", str(tmp_path / "s.json")]) == 0
