"""The text observation beyond 200,000 characters drops the oldest conversation first (issue 15 #7)."""

from __future__ import annotations

import craft_env
from craft_env.envs.textobs import TEXT_MAX_LENGTH

BUILDER = "builder"


def test_a_long_conversation_keeps_rules_board_candidates_and_this_turn():
    env = craft_env.env(message_mode="text", oracle_n=5, director_order="fixed", max_turns=40,
                        text_observations=True)
    env.reset(seed=3)
    for turn in range(1, 14):
        for _ in range(3):
            seat = env.agent_selection
            env.step("Nothing to add from me. " + "blah " * 1600 + f"marker-{turn}-{seat}")
        text = env.observe(BUILDER)["text"]
        env.step("pass")
    assert len(text) <= TEXT_MAX_LENGTH
    assert text.startswith("You are the builder.")
    assert "Current board:" in text and "Candidate moves" in text
    directors = [agent for agent in env.possible_agents if agent != BUILDER]
    assert all(f"marker-13-{agent}" in text for agent in directors)
    assert f"marker-1-{directors[0]}" not in text
    assert "earlier conversation entries left out" in text
    director_text = env.observe(env.agent_selection)["text"]
    assert len(director_text) <= TEXT_MAX_LENGTH and "Your private target view" in director_text
    assert f"marker-13-{directors[-1]}" in director_text
