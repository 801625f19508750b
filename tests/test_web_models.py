"""``craft-env serve`` with model seats: a model's fault is the runner's, keys stay on the server, and a load
of 50 concurrent games with built-in and fake-model seats loses nothing.

Model seats go through the real model path (litellm, the client, the
run's cache) with stand-in providers: the package's offline ``scripted/``
models and the test's own (tests/fake_providers.py).
"""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from craft_env.datasets import generate_structures, save_structures
from craft_env.eval.logs.games import LOG_NAME, read_games
from craft_env.models.llm import import_litellm

from fake_providers import install
from web_client import Served

litellm = import_litellm()
SECRET = "SECRET-KEY-4471"
API_BASE = f"http://user:{SECRET}@127.0.0.1:9/v1"
GAMES = 50


class Faulty(litellm.CustomLLM):
    """``webfault/refuse`` fails for good (an authentication error: not retried); ``webfault/babble`` answers
    text with no move or message in it."""

    def _answer(self, model):
        if model.endswith("refuse"):
            raise litellm.AuthenticationError(
                message=f"bad key {SECRET}", llm_provider="webfault", model=model
            )
        return litellm.ModelResponse(
            model=model, choices=[{"message": {"role": "assistant", "content": "I like turtles."}}],
            usage={"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        )

    def completion(self, model, messages, *args, **kwargs):
        return self._answer(model)

    async def acompletion(self, model, messages, *args, **kwargs):
        return self._answer(model)


@pytest.fixture(scope="module")
def structures(tmp_path_factory):
    """A small set of three structures, offered to the organiser by ``--dataset``."""
    path = tmp_path_factory.mktemp("set") / "three.json"
    save_structures(generate_structures(3, seed=11), path)
    return str(path)


@pytest.fixture(scope="module")
def served(tmp_path_factory, structures):
    install("webfault", Faulty())
    server = Served(tmp_path_factory.mktemp("served") / "games", api_base=API_BASE, datasets=(structures,))
    yield server
    server.stop()


def _game(served: Served, game_id: str):
    out = served.root / served.lobby.games[game_id].out.name
    (game,) = read_games(out / "run_1" / LOG_NAME).values()
    return out, game


def _everything_written(out) -> str:
    files = [p for p in out.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")]
    return "".join(p.read_text(errors="replace") for p in files)


def test_a_model_seats_fault_is_a_failed_turn_or_an_errored_game_and_the_server_goes_on(served):
    babble = served.create(structures=[0], turns=2, seats={"builder": "webfault/babble", "D1": "person"})
    refuse = served.create(structures=[0], turns=2, seats={"D3": "webfault/refuse", "builder": "person"})
    sent = []
    for created in (babble, refuse):
        token = next(iter(created["tokens"].values()))
        while True:
            state = served.state(token, wait=5)
            sent.append(state)
            if state["public"]["status"] != "playing":
                break
            if state["your_turn"]:
                assert served.act(token, {"pass": True})[0] == 200
    _, game = _game(served, babble["id"])
    assert game.status == "done" and all(t["failed"] and t["reason"] for t in game.turns)
    out, game = _game(served, refuse["id"])
    assert game.status == "errored" and "AuthenticationError" in game.marker["error_type"]
    assert sent[-1]["public"]["status"] == "errored"
    assert served.state(served.create(structures=[0], turns=1, seats={})["spectator"])  # the server goes on
    assert SECRET not in json.dumps(sent) and SECRET not in _everything_written(out)


def test_fifty_concurrent_games_lose_nothing(served, structures):
    kinds = [
        {"builder": "scripted/team"},
        {"D1": "scripted/team", "D2": "random", "builder": "scripted"},
        {"D2": "scripted/random", "builder": "random"},
    ]
    created = [
        served.create(dataset=structures, structures=[k % 3], turns=3, seed=k, seats=kinds[k % len(kinds)])
        for k in range(GAMES)
    ]
    polled = []

    def watch():  # the spectators' pages keep asking while the games play
        for _ in range(3):
            for game in created:
                polled.append(served.state(game["spectator"])["public"]["status"])

    watchers = [threading.Thread(target=watch) for _ in range(4)]
    for thread in watchers:
        thread.start()
    asyncio.run_coroutine_threadsafe(served.lobby.wait_all(), served.loop).result(120)
    for thread in watchers:
        thread.join(60)
    assert len(polled) == 4 * 3 * GAMES
    for game in created:
        out, logged = _game(served, game["id"])
        assert logged.status == "done", logged.marker
        assert [t["turn_number"] for t in logged.turns] == list(range(1, logged.marker["turn_number"] + 1))
        summary = json.loads((out / "run_1" / "summary.json").read_text())
        assert (summary["games"], summary["done"]) == (1, 1)
        assert served.lobby.games[game["id"]].status == "done"
    _, logged = _game(served, created[0]["id"])
    assert all(t["builder"]["calls"] == 1 for t in logged.turns)  # the builder was the model, every turn
