"""``craft-env run --dry-run``: what a run would cost, before it costs anything.

Counts the games, the model calls (every turn, each of the three directors
and the builder, for the roles a model plays), and estimates tokens from
the real prompts of the first game's first turn (later turns hold a longer
conversation, so prompt tokens are a lower bound). Replies are assumed
``max_tokens`` long, or ``ASSUMED_REPLY_TOKENS`` without it (``models.cost``).
The cost comes from litellm's price table where it prices the model, else
from ``--price-per-token``; no call is made.
"""

from __future__ import annotations

from typing import Any

import craft_env
from craft_env.agents.prompts import archetype_for, builder_messages, director_messages
from craft_env.models.cost import ASSUMED_REPLY_TOKENS, TokenPrice, count_prompt_tokens, model_price
from craft_env.models.llm import import_litellm
from craft_env.eval.run.settings import RunSettings, game_seed, is_model

def _price(model: str, prompt_tokens: int, completion_tokens: int, given: TokenPrice | None) -> float | None:
    price = model_price(import_litellm(), model) or given
    return None if price is None else price.cost(prompt_tokens, completion_tokens)


def first_turn_prompts(settings: RunSettings) -> dict[str, list[dict[str, Any]]]:
    """The messages a director and the builder are sent on the first turn of the first game."""
    index = settings.selected()[0]
    structure = settings.load_structures()[index]
    env = craft_env.env(
        message_mode="text", structure=structure, oracle_n=settings.oracle_n or None,
        max_turns=settings.turns, start=settings.start, director_order=settings.director_order,
        text_observations=True, seats=settings.seats,
    )
    env.reset(seed=game_seed(settings.seed, 1, index))
    u = env.unwrapped
    seat = u.seat_of[env.agent_selection]
    director = director_messages(
        env.observe(env.agent_selection)["text"], seat, archetype_for(index, 1, seat), structure.n,
        structure.height, settings.rules, seats=settings.seats,
    )
    for _ in settings.seats:  # one speaking slot per seat
        env.step("Nothing to add from me.")
    text = env.observe("builder")["text"]
    builder = builder_messages(
        text, structure.n, structure.height, bool(settings.oracle_n), settings.rules, seats=settings.seats
    )
    env.close()
    return {"director": director, "builder": builder}


def estimate(settings: RunSettings) -> dict[str, Any]:
    """Games, calls, tokens and (where priced) cost of ``settings``, per role and in all."""
    games = len(settings.games())
    prompts = first_turn_prompts(settings)
    reply = settings.max_tokens or ASSUMED_REPLY_TOKENS
    roles = {}
    for role, model, per_turn in (
        ("director", settings.director_model, len(settings.seats)), ("builder", settings.builder_model, 1)
    ):
        if not is_model(model):
            continue
        calls = games * settings.turns * per_turn
        prompt = count_prompt_tokens(import_litellm(), model, prompts[role]) * calls
        completion = reply * calls
        roles[role] = {
            "model": model, "calls": calls, "prompt_tokens": prompt, "completion_tokens": completion,
            "cost": _price(model, prompt, completion, settings.token_price),
        }
    costs = [r["cost"] for r in roles.values()]
    return {
        "games": games,
        "roles": roles,
        "calls": sum(r["calls"] for r in roles.values()),
        "cost": sum(costs) if costs and None not in costs else None,
    }


def describe(result: dict[str, Any]) -> str:
    """The estimate as a few lines for the terminal."""
    lines = [f"{result['games']} game(s), up to {result['calls']} model call(s)"]
    for role, r in result["roles"].items():
        cost = "not priced by litellm" if r["cost"] is None else f"about ${r['cost']:.4f}"
        lines.append(
            f"  {role} {r['model']}: {r['calls']} calls, >= {r['prompt_tokens']} prompt tokens "
            f"(first-turn prompts), ~{r['completion_tokens']} reply tokens, {cost}"
        )
    if result["cost"] is not None:
        lines.append(f"estimated cost: about ${result['cost']:.4f} (prompts grow each turn: a lower bound)")
    return "\n".join(lines)
