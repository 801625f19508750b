"""``--max-cost`` that holds (issue 26, #11): each call reserves its estimated cost before it is sent.

The stand-in provider answers like the scripted team and reports its usage
truthfully: the prompt counted with litellm's tokenizer, the reply at its
``max_tokens`` cap, the cost at the price the user gives. Twenty games start
at once; before the fix every first call passed the check (the spend was
still 0) and the run spent several times its cap. litellm has no price for
the stand-in, as for a model behind a local server: without a price the
cap is refused, and the run is warned about at start.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from fake_providers import install  # tests/ is on sys.path (conftest)

from craft_env.cli import main
from craft_env.eval.run.provider import request_context, scripted_reply
from craft_env.models.cost import Budget, BudgetExceeded, TokenPrice
from craft_env.models.llm import import_litellm

litellm = import_litellm()
PRICE = TokenPrice(1e-5, 2e-5)
GAMES = ["--structures", "all", "--turns", "2", "--concurrency", "20", "--no-progress", "--no-plots"]


class Metered(litellm.CustomLLM):
    """The scripted team, billing ``PRICE`` for the prompt's tokens and a reply of ``reply_tokens``."""

    def __init__(self, reply_tokens: int) -> None:
        super().__init__()
        self.reply_tokens = reply_tokens
        self.calls = 0

    async def acompletion(self, model, messages, *args, **kwargs):
        self.calls += 1
        for _ in range(20):  # let the other games' calls start meanwhile
            await asyncio.sleep(0)
        text = scripted_reply("scripted/team", messages, request_context(kwargs))
        prompt = litellm.token_counter(model=model, messages=messages)
        response = litellm.ModelResponse(
            model=model, choices=[{"message": {"role": "assistant", "content": text}}],
            usage={"prompt_tokens": prompt, "completion_tokens": self.reply_tokens,
                   "total_tokens": prompt + self.reply_tokens},
        )
        response._hidden_params = {"response_cost": PRICE.cost(prompt, self.reply_tokens)}
        return response


def _spent(out) -> float:
    return sum(json.loads(line)["cost"] for line in (out / "cache.jsonl").read_text().splitlines())


@pytest.mark.parametrize("cap", [0.05, 0.2])
def test_the_cap_holds_with_twenty_games_at_once(tmp_path, capsys, cap):
    handler = Metered(reply_tokens=100)
    install("metered", handler)
    out = tmp_path / "capped"
    code = main(["run", "--out", str(out), "--director-model", "metered/m", "--builder-model", "metered/m",
                 "--max-tokens", "100", "--max-cost", str(cap), "--price-per-token",
                 f"{PRICE.prompt},{PRICE.completion}", *GAMES])
    assert code == 1  # games that could not afford their calls errored (BudgetExceeded)
    assert 0 < handler.calls and _spent(out) <= cap + 1e-12
    assert "BudgetExceeded" in (out / "run_1" / "log.jsonl").read_text()


def test_without_max_tokens_a_call_reserves_the_longest_reply_seen(tmp_path, capsys):
    handler = Metered(reply_tokens=250)  # within the assumed 300-token reply
    install("metered", handler)
    out = tmp_path / "uncapped_replies"
    main(["run", "--out", str(out), "--director-model", "metered/m", "--builder-model", "metered/m",
          "--max-cost", "0.1", "--price-per-token", f"{PRICE.prompt},{PRICE.completion}", *GAMES])
    assert 0 < handler.calls and _spent(out) <= 0.1 + 1e-12


def test_max_cost_for_a_model_without_a_price_is_refused_before_anything_is_written(tmp_path, capsys):
    install("metered", Metered(reply_tokens=10))
    out = tmp_path / "refused"
    code = main(["run", "--out", str(out), "--builder-model", "metered/m", "--max-cost", "1", *GAMES])
    assert code == 2 and not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "litellm has no price for 'metered/m'" in err[0] and "--price-per-token" in err[0]


def test_a_model_without_a_price_is_warned_about_at_start(tmp_path, capsys):
    install("metered", Metered(reply_tokens=10))
    args = ["--structures", "0", "--turns", "1", "--no-progress", "--no-plots"]
    assert main(["run", "--out", str(tmp_path / "warned"), "--builder-model", "metered/m", *args]) == 0
    err = capsys.readouterr().err
    assert "craft-env: warning: litellm has no price for 'metered/m': its calls count as $0" in err
    assert main(["run", "--out", str(tmp_path / "free"), "--builder-model", "scripted/team", *args]) == 0
    assert "warning" not in capsys.readouterr().err  # the offline agents are free


def test_a_price_given_for_an_unpriced_model_is_what_its_calls_cost(tmp_path, capsys):
    class Unbilled(Metered):
        async def acompletion(self, model, messages, *args, **kwargs):
            response = await super().acompletion(model, messages, *args, **kwargs)
            response._hidden_params = {}
            return response

    install("metered", Unbilled(reply_tokens=10))
    out = tmp_path / "priced_by_hand"
    assert main(["run", "--out", str(out), "--builder-model", "metered/m", "--price-per-token", "1e-6,3e-6",
                 "--structures", "0", "--turns", "1", "--no-progress", "--no-plots"]) == 0
    (record,) = [json.loads(line) for line in (out / "cache.jsonl").read_text().splitlines()]
    assert record["cost"] == pytest.approx(record["prompt_tokens"] * 1e-6 + 10 * 3e-6)


def test_reservations_refuse_what_would_pass_the_cap():
    budget = Budget(limit=1.0)
    first = budget.reserve(0.6)
    with pytest.raises(BudgetExceeded):
        budget.reserve(0.5)  # 0.6 held by a call in flight: a second cannot pass the check at once
    budget.settle(first, 0.3)
    budget.settle(budget.reserve(0.5), 0.5)
    assert budget.spent == pytest.approx(0.8) and budget.reserved == 0


@pytest.mark.parametrize("text", ["", "x", "-1e-6", "inf", "1,2,3", "2"])
def test_prices_are_checked(text):
    with pytest.raises(ValueError, match="price_per_token"):
        TokenPrice.parse(text)
