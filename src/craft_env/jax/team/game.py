"""``TurnGame``: the JAX game as the team trainer sees it, one env, one turn in two phases.

The trainer needs, per env (it ``vmap``s over envs and seeds itself):

* ``reset(key) -> state``
* ``directors(state) -> (obs (seats, Dd), mask (seats, I), world (S,))``: the director phase's inputs
* ``step_directors(key, state, intents (seats,)) -> state``
* ``builder(state) -> (obs (Db,), mask (A,), world (S,))``: the builder phase's inputs, this turn's
  intents heard
* ``step_builder(key, state, action) -> (state, reward, done, progress, completion)``: the turn ends;
  an ended episode restarts at once (``progress``/``completion`` are the finished board's)
* ``scripted(state) -> intents (seats,)``: the scripted directors' intents (``core.scripted``), or ``None``
* ``move_outcome(state, action) -> (reward, world, done)``: in a builder-phase state, what ``action``
  would earn, the world state after it and whether the episode would end, with nothing played (for the
  counterfactual credit, ``TeamConfig.director_credit``), or ``None``

``world`` is the global state of ``vector_env().state()`` (``core.observation``), for the centralized
critic. ``meaning[k, i]`` is the builder action intent ``i`` of seat ``k`` names (-1 for none;
``core.intents``): the literal meaning the listener and the learned builder's input use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax.numpy as jnp
import numpy as np

from craft_env.core.encoding import action_table
from craft_env.core.intents import intent_table
from craft_env.core.observation import board_dim
from craft_env.core.views import BUILDER, DEFAULT_SEATS
from craft_env.jax.env import make
from craft_env.jax.team.scripted import scripted_intents, walls_of


@dataclass(frozen=True)
class TurnGame:
    """A game's sizes and pure per-env phase functions (see the module docstring)."""

    seats: tuple[str, ...]
    n: int
    height: int
    director_dim: int
    builder_dim: int
    state_dim: int
    num_intents: int
    num_actions: int
    noop: int
    #: ``meaning[k, i]``: the builder action intent ``i`` of seat ``k`` names, -1 for none.
    meaning: np.ndarray
    #: Where the builder observation's block of this turn's intents (seat-major one-hots) starts.
    intents_offset: int
    reset: Callable[..., Any]
    directors: Callable[..., Any]
    step_directors: Callable[..., Any]
    builder: Callable[..., Any]
    step_builder: Callable[..., Any]
    scripted: Callable[..., Any] | None = None
    move_outcome: Callable[..., Any] | None = None


def intent_actions(seats: tuple[str, ...] = DEFAULT_SEATS, n: int = 3, height: int = 3) -> np.ndarray:
    """int32 ``(seats, I)``: the builder action each seat's intent names, -1 for none."""
    return np.stack([intent_table(seat, n, height).action for seat in seats]).astype(np.int32)


def noop_action(n: int) -> int:
    return action_table(n).noop


def intents_offset(n: int, height: int) -> int:
    """Where this turn's intents start in the builder observation (``core.observation``: after the board)."""
    return board_dim(n, height)


def jax_game(**config: Any) -> TurnGame:
    """The JAX game (``craft_env.jax.make(**config)``, ``vector_env``'s keywords) as a ``TurnGame``.

    The scripted directors are ``team.scripted.scripted_intents`` on the directors' observations.
    """
    env = make(**config)
    walls = walls_of(env.seats, env.n)

    def directors(state):
        obs, masks = env.get_obs(state), env.get_avail_actions(state)
        return (jnp.stack([obs[a] for a in env.directors]), jnp.stack([masks[a] for a in env.directors]),
                env.world_state(state))

    def builder(state):
        return env.get_obs(state)[BUILDER], env.get_avail_actions(state)[BUILDER], env.world_state(state)

    def step_builder(key, state, action):
        _, state, rewards, dones, infos = env.step_builder(state, action)
        return state, rewards[BUILDER], dones["__all__"], infos["progress"], infos["completion"]

    def scripted(state):
        obs, masks, _ = directors(state)
        return scripted_intents(obs, masks, walls, env.n, env.height)

    def move_outcome(state, action):
        reward, played, done = env.move_outcome(state, action)
        return reward, env.world_state(played), done

    return TurnGame(
        seats=tuple(env.seats), n=env.n, height=env.height, director_dim=env.director_dim,
        builder_dim=env.builder_dim, state_dim=env.state_dim, num_intents=env.num_intents,
        num_actions=env.num_actions, noop=env.noop, meaning=intent_actions(tuple(env.seats), env.n, env.height),
        intents_offset=intents_offset(env.n, env.height), reset=lambda key: env.reset(key)[1],
        directors=directors, step_directors=lambda key, state, intents: env.step_directors(state, intents)[1],
        builder=builder, step_builder=step_builder, scripted=scripted, move_outcome=move_outcome,
    )
