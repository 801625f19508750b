"""A tiny signalling game with ``TurnGame``'s interface, for testing the trainer's plumbing fast.

Each episode hides one target move out of ``moves``; each director sees it
only when its seat's bit of the target is set (so the team must pool what
it sees), says an intent (intent ``i > 0`` names move ``i - 1``), and the
builder scores 1 when it plays the target. Episodes last ``turns`` turns.
With ``scripted=True`` the game has scripted directors: each one that sees
the target names it, the others say nothing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from craft_env.jax.team.game import TurnGame

SEATS = ("D1", "D2", "D3")


def mock_game(moves: int = 6, turns: int = 2, scripted: bool = False) -> TurnGame:
    seats = len(SEATS)
    intents = moves + 1
    actions = moves + 1  # the last one is the pass
    block = seats * intents

    def reset(key):
        return {"target": jax.random.randint(key, (), 0, moves), "turn": jnp.zeros((), jnp.int32),
                "spoken": jnp.zeros((seats,), jnp.int32), "hits": jnp.zeros((), jnp.float32)}

    def seeing(state):
        return ((state["target"] >> jnp.arange(seats)) & 1) | (jnp.arange(seats) == 0)

    def directors(state):
        sees = seeing(state)
        view = jax.nn.one_hot(state["target"], moves) * sees[:, None]
        obs = jnp.concatenate([view, jnp.eye(seats)], axis=1)
        return obs, jnp.ones((seats, intents), jnp.int8), world(state)

    def world(state):
        return jnp.concatenate([jax.nn.one_hot(state["target"], moves), jax.nn.one_hot(state["spoken"], intents)
                                .reshape(-1), state["turn"][None] / turns])

    def step_directors(key, state, said):
        return {**state, "spoken": said.astype(jnp.int32)}

    def builder(state):
        obs = jnp.concatenate([jax.nn.one_hot(state["spoken"], intents).reshape(-1), state["turn"][None] / turns])
        return obs, jnp.ones((actions,), jnp.int8), world(state)

    def play(state, action):
        """The state after ``action`` (an ended episode not yet replaced), its reward and whether it ended."""
        reward = (action == state["target"]).astype(jnp.float32)
        turn = state["turn"] + 1
        return {**state, "turn": turn, "hits": state["hits"] + reward}, reward, turn >= turns

    def step_builder(key, state, action):
        played, reward, done = play(state, action)
        after = jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), reset(key), played)
        return after, reward, done, played["hits"] / turns, played["hits"] / turns

    def move_outcome(state, action):
        played, reward, done = play(state, action)
        return reward, world(played), done

    def say_what_is_seen(state):
        return jnp.where(seeing(state) > 0, state["target"] + 1, 0)

    meaning = np.stack([np.concatenate([[-1], np.arange(moves)]) for _ in SEATS]).astype(np.int32)
    return TurnGame(SEATS, 3, 3, moves + seats, block + 1, moves + block + 1, intents, actions, moves, meaning, 0,
                    reset, directors, step_directors, builder, step_builder,
                    say_what_is_seen if scripted else None, move_outcome)
