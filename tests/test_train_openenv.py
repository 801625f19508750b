"""The text environment served over OpenEnv (a loopback server started here), driven by its client."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("openenv")

import craft_env  # noqa: E402
from craft_env.train.openenv import CraftAction, CraftEnvClient, create_craft_app  # noqa: E402
from openenv_serving import serving  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
CANDIDATE = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


def stub_model(messages: list[dict[str, str]], turn: int) -> str:
    """Copies an offered candidate, except every fourth turn, when it writes something unreadable."""
    if turn % 4 == 3:
        return "hmm, let me think about it"
    candidates = CANDIDATE.findall(messages[-1]["content"])
    return f"MOVE: {candidates[turn % len(candidates)][1]}\nFOLLOWED: D2"


@pytest.fixture()
def server():
    with serving(create_craft_app(2, oracle_n=5, max_turns=12)) as port:
        yield f"http://127.0.0.1:{port}"


def test_the_client_plays_a_game_over_the_socket_as_the_local_environment_would(server):
    local = craft_env.text_env(oracle_n=5, max_turns=12)
    with CraftEnvClient(base_url=server).sync() as remote:
        for seed in (2, 9):
            result = remote.reset(seed=seed)
            messages, _ = local.reset(seed=seed)
            assert result.observation.messages == messages and not result.done
            turn, total = 0, 0.0
            while not result.done:
                reply = stub_model(result.observation.messages, turn)
                result = remote.step(CraftAction(reply=reply))
                messages, reward, terminated, truncated, info = local.step(reply)
                observation = result.observation
                assert observation.messages == (messages or [])
                assert result.reward == pytest.approx(reward) and result.done == (terminated or truncated)
                assert (observation.legal, observation.reason, observation.turn) == (
                    info["legal"],
                    info["reason"],
                    info["turn"],
                )
                assert observation.distance == info["distance"] and observation.progress == pytest.approx(
                    info["progress"]
                )
                if turn % 4 == 3:
                    assert observation.legal is False and "could not parse" in observation.reason
                total += result.reward
                turn += 1
            assert observation.truncated == truncated and turn <= 12
            state = remote.state()
            assert state.step_count == turn and state.seed == seed
    local.close()
