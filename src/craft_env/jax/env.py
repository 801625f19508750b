"""``CraftJaxEnv``: the JAX game in JaxMARL's multi-agent interface (``docs/jax.md``).

One env, pure functions of a ``game.State``: ``jax.jit`` them, ``jax.vmap``
them over a batch. The interface is JaxMARL's ``MultiAgentEnv``:
``reset(key) -> (obs, state)``, ``step(key, state, actions) -> (obs, state,
rewards, dones, infos)`` with auto-reset (``dones["__all__"]``),
``get_avail_actions``, ``get_obs``, ``agents``, ``num_agents``,
``observation_space(agent)``, ``action_space(agent)``, plus
``world_state(state)`` for centralized critics.

A step is one phase, as in ``vector_env``: the directors' (every seated
director's intent) or the builder's (its move, which ends the turn); the
state holds the phase and ``step`` dispatches on it. All agents pass an
action every step; the idle role's masks allow only the no-op and its
actions are ignored. ``step_directors`` and ``step_builder`` are the two
phases alone, for loops that know the phase (every env of a batch is
always in the same one): half the work of ``step`` under ``vmap``.

Seeds: ``reset_batch(seed, num_envs)`` is ``vector_env(num_envs,
**config).reset(seed=seed)``, env for env; ``reset(key)`` takes the env's
stream seed from the key (``jax.random.bits``, the one use of
``jax.random`` in the game, with the bank index of ``structures=``), and
from there every episode and turn draws the core's SplitMix64 streams.
``step``'s key is not used (no randomness of the game comes from it).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from craft_env.core.board import Structure
from craft_env.core.game import REWARDS
from craft_env.core.metrics import METRIC_NAMES
from craft_env.core.observation import builder_obs_dim, director_obs_dim, state_dim
from craft_env.core.protocol import CANDIDATES_PAPER, SPEAKERS_WITH_REPLACEMENT, protocol_action_mask
from craft_env.core.starts import start_code
from craft_env.core.views import BUILDER, agent_name
from craft_env.envs.config import EnvConfig, make_config, resolve_structures
from craft_env.jax import exact, game, oracle, u64
from craft_env.jax.game import PHASE_DIRECTORS, Params, State
from craft_env.jax.spaces import Box, Discrete
from craft_env.jax.tables import Tables, make_tables

#: ``vector_env`` keywords the JAX env refuses, with why (the vector env refuses them too).
REFUSED = {
    "message_mode": "the JAX env plays intents only (message_mode='intent')",
    "text_observations": "the JAX env has numeric observations only",
    "render_mode": "the JAX env does not render; replay an episode in parallel_env(render_mode=...)",
    "render_target": "the JAX env does not render",
}
#: Every keyword ``make``/``CraftJaxEnv`` accepts: ``make_config``'s plus ``vector_env``'s own.
KEYWORDS = frozenset(inspect.signature(make_config).parameters) | {"structures", "copy"}

#: The step infos of a builder step (``vector_env``'s names), each a scalar per env.
MOVE_INFOS = ("reason", "layer", "distance", "optimal", "remove_prescribed", "remove_attempted",
              "followed_oracle", "completed", "turn", *METRIC_NAMES)


def _check_keywords(config: dict[str, Any]) -> None:
    unknown = sorted(set(config) - KEYWORDS)
    if unknown:
        raise ValueError(f"{unknown[0]}: not a keyword of vector_env() (the JAX env takes {', '.join(sorted(KEYWORDS))})")
    if config.get("message_mode", "intent") != "intent":
        raise ValueError(f"message_mode: {REFUSED['message_mode']}; got {config['message_mode']!r}")
    if config.get("text_observations"):
        raise ValueError(f"text_observations: {REFUSED['text_observations']}; got {config['text_observations']!r}")
    if config.get("render_mode") is not None:
        raise ValueError(f"render_mode: {REFUSED['render_mode']}; got {config['render_mode']!r}")
    if config.get("render_target", False) is not False:
        raise ValueError(f"render_target: {REFUSED['render_target']}; got {config['render_target']!r}")
    if not isinstance(config.get("copy", False), bool):
        raise ValueError(f"copy: must be a bool, got {config['copy']!r}")


def make_params(cfg: EnvConfig, generate: bool, tables: Tables) -> Params:
    """The ``Params`` of a validated configuration (``game.config_record``'s values)."""
    protocol = cfg.protocol
    seats = len(cfg.seats)
    visible = np.ones(cfg.n * cfg.n, bool)
    if cfg.director_sees == "walls":
        visible[:] = False
        visible[np.asarray(tables.walls).ravel()] = True
    order = cfg.director_order if cfg.director_order is not None else (-1,) * seats
    complete_at = protocol.complete_at
    return Params(
        max_turns=jnp.int32(cfg.max_turns),
        oracle_n=jnp.int32(0 if cfg.oracle_n is None else cfg.oracle_n),
        reward=jnp.int32(REWARDS.index(cfg.reward)),
        start=jnp.int32(start_code(cfg.start, cfg.seats)),
        generate=jnp.bool_(generate),
        hidden_span_ban=jnp.bool_(protocol.hidden_span_ban),
        with_replacement=jnp.bool_(protocol.speakers == SPEAKERS_WITH_REPLACEMENT),
        exact_completion=jnp.bool_(complete_at is None),
        complete_at=u64.const(exact.threshold(complete_at if complete_at is not None else 2.0)),
        paper_candidates=jnp.bool_(protocol.candidates == CANDIDATES_PAPER),
        fixed_order=jnp.asarray(order, jnp.int32),
        visible=jnp.asarray(visible),
        allowed=jnp.asarray(protocol_action_mask(protocol, cfg.n).astype(bool)),
    )


class CraftJaxEnv:
    """CRAFT as a JaxMARL multi-agent env (see the module docstring); ``make(**config)`` builds one."""

    def __init__(self, structures: Sequence[Structure | int] | None = None, **config: Any) -> None:
        _check_keywords({**config, **({"structures": structures} if structures is not None else {})})
        config.pop("copy", None)  # JAX arrays are immutable: every step returns fresh ones
        fixed = resolve_structures(structures, config)
        self.config = cfg = make_config(**config)
        if fixed is None and cfg.structure is not None:
            fixed = [cfg.structure]
        self.n, self.height, self.seats = cfg.n, cfg.height, cfg.seats
        self.tables = make_tables(cfg.n, cfg.height, cfg.seats)
        self.oracle_tables = oracle.oracle_tables(cfg.n, cfg.height)
        self.params = make_params(cfg, fixed is None, self.tables)
        cells = cfg.n * cfg.n
        bank = np.zeros((1, cells, cfg.height), np.int8) if fixed is None else np.stack([s.array for s in fixed])
        self.targets = jnp.asarray(bank.astype(np.int8))
        self.directors = tuple(agent_name(seat) for seat in cfg.seats)
        self.agents = [*self.directors, BUILDER]
        self.num_agents = len(self.agents)
        self.num_actions = int(self.tables.kind.shape[0])
        self.num_intents = self.tables.num_intents
        self.noop = self.tables.noop
        seats = len(cfg.seats)
        self.builder_dim = builder_obs_dim(cfg.n, cfg.height, seats, self.num_intents)
        self.director_dim = director_obs_dim(cfg.n, cfg.height, seats, self.num_intents)
        self.state_dim = state_dim(cfg.n, cfg.height, seats, self.num_intents)
        self.observation_spaces = {a: Box(0.0, 1.0, (self.director_dim,)) for a in self.directors}
        self.observation_spaces[BUILDER] = Box(0.0, 1.0, (self.builder_dim,))
        self.action_spaces = {a: Discrete(self.num_intents) for a in self.directors}
        self.action_spaces[BUILDER] = Discrete(self.num_actions)
        self._reset_seeded = None

    def with_params(self, params: Params, targets: jax.Array | None = None) -> CraftJaxEnv:
        """This env with other ``Params`` (and target bank): pass them as traced arguments to one jitted
        function and every configuration of this board size and seating shares its compile."""
        other = copy.copy(self)
        other.params = params
        other._reset_seeded = None
        if targets is not None:
            other.targets = targets
        return other

    # ------------------------------------------------------------------ JaxMARL's interface

    @property
    def name(self) -> str:
        return "craft"

    @property
    def agent_classes(self) -> dict[str, list[str]]:
        return {"directors": list(self.directors), "builder": [BUILDER]}

    def observation_space(self, agent: str) -> Box:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Discrete:
        return self.action_spaces[agent]

    def reset(self, key: jax.Array) -> tuple[dict[str, jax.Array], State]:
        """A new env: its stream seed (and its ``structures=`` entry) from ``key``, at episode 0's first turn."""
        bits = jax.random.bits(key, (2,), jnp.uint32)
        env_seed = u64.U64(bits[0] & 0x7FFFFFFF, bits[1])
        index = jax.random.randint(jax.random.fold_in(key, 1), (), 0, self.targets.shape[0])
        return self.reset_env(env_seed, index)

    def reset_env(self, env_seed: u64.U64, env_index: jax.Array) -> tuple[dict[str, jax.Array], State]:
        """Env ``env_index`` with stream seed ``env_seed`` at episode 0 (``vector_env.reset``'s row)."""
        target = self.targets[jnp.asarray(env_index) % self.targets.shape[0]]
        state = game.new_episode(env_seed, jnp.int32(0), target, self.tables, self.params, self.oracle_tables)
        return self.get_obs(state), state

    def reset_batch(self, seed: int, num_envs: int) -> tuple[dict[str, jax.Array], State]:
        """``vector_env(num_envs, **config).reset(seed=seed)``, batched: env ``i`` has its stream seed and
        its ``structures[i % len]``. Host side (the seed is a Python int): jits ``reset_seeded`` once."""
        if self._reset_seeded is None:
            self._reset_seeded = jax.jit(self.reset_seeded, static_argnums=1)
        return self._reset_seeded(u64.from_int64(np.int64(int(seed) & ((1 << 63) - 1))), num_envs)

    def reset_seeded(self, base_seed: u64.U64, num_envs: int) -> tuple[dict[str, jax.Array], State]:
        """``reset_batch`` with the base seed as a (traced) ``U64``: one compile for every seed."""
        index = jnp.arange(num_envs, dtype=jnp.int32)
        seeds = game.env_seed_of(u64.U64(jnp.broadcast_to(base_seed.hi, index.shape),
                                         jnp.broadcast_to(base_seed.lo, index.shape)), index)
        return jax.vmap(self.reset_env)(seeds, index)

    def get_obs(self, state: State) -> dict[str, jax.Array]:
        directors, builder = game.observations(state, self.tables, self.params)
        obs = {agent: directors[k] for k, agent in enumerate(self.directors)}
        obs[BUILDER] = builder
        return obs

    def get_avail_actions(self, state: State) -> dict[str, jax.Array]:
        """bool masks per agent; the idle role's allow only the no-op (intent 0, action ``noop``)."""
        directors, builder = game.avail_actions(state, self.tables, self.params)
        masks = {agent: directors[k] for k, agent in enumerate(self.directors)}
        masks[BUILDER] = builder
        return masks

    def world_state(self, state: State) -> jax.Array:
        """float32 ``(state_dim,)``: ``vector_env.state()``'s row, for centralized critics (the whole target)."""
        return game.world_state(state, self.tables, self.params)

    def step(self, key: jax.Array, state: State, actions: dict[str, jax.Array], reset_state: State | None = None):
        """One phase: the directors' or the builder's, as ``state.phase`` says; auto-reset after an episode.

        ``reset_state``, when given, replaces the env's next episode (JaxMARL's ``step`` argument).
        """
        intents = jnp.stack([jnp.asarray(actions[a]) for a in self.directors]).astype(jnp.int32)
        action = jnp.asarray(actions[BUILDER]).astype(jnp.int32)
        obs, state, rewards, dones, infos = jax.lax.cond(
            state.phase == PHASE_DIRECTORS,
            lambda s: self.step_directors(s, intents),
            lambda s: self.step_builder(s, action),
            state,
        )
        if reset_state is not None:
            done = dones["__all__"]
            state = jax.tree_util.tree_map(lambda x, y: jnp.where(done, x, y), reset_state, state)
            obs = jax.tree_util.tree_map(lambda x, y: jnp.where(done, x, y), self.get_obs(reset_state), obs)
        return obs, state, rewards, dones, infos

    # ------------------------------------------------------------------ the two phases

    def _outputs(self, state: State, reward: jax.Array, done: jax.Array, infos: dict[str, jax.Array]):
        rewards = {agent: reward for agent in self.agents}
        dones = {agent: done for agent in self.agents}
        dones["__all__"] = done
        return self.get_obs(state), state, rewards, dones, infos

    def _infos(self, spoken: jax.Array, legal: jax.Array, move: game.Move | None, extra: dict[str, jax.Array]):
        zero = jnp.int32(0)
        infos: dict[str, jax.Array] = {"intent": spoken, "intent_legal": legal}
        for name in MOVE_INFOS:
            if name in METRIC_NAMES:
                value = jnp.float32(0) if move is None else move.scores[METRIC_NAMES.index(name)]
            else:
                value = zero if move is None else getattr(move, name).astype(jnp.int32)
            infos[name] = value
        infos.update(extra)
        return infos

    def step_directors(self, state: State, intents: jax.Array):
        """The director phase: ``intents[k]`` is seat ``seats[k]``'s intent (``vector_env.step_directors``)."""
        state, legal = game.step_directors(state, jnp.asarray(intents), self.tables, self.params)
        false = jnp.bool_(False)
        extra = {"legal": false, "terminated": false, "truncated": false, "episode": state.episode,
                 "episode_seed_hi": state.seed.hi, "episode_seed_lo": state.seed.lo}
        return self._outputs(state, jnp.float32(0), false, self._infos(state.spoken, legal, None, extra))

    def step_builder(self, state: State, action: jax.Array):
        """The builder phase: the move, then the next turn or the next episode (``vector_env.step_builder``)."""
        spoken = state.spoken
        following, move, reward, terminated, truncated, seed, episode = game.step_builder(
            state, jnp.asarray(action), self.tables, self.params, self.oracle_tables)
        extra = {"legal": move.reason == 0, "terminated": terminated, "truncated": truncated, "episode": episode,
                 "episode_seed_hi": seed.hi, "episode_seed_lo": seed.lo}
        infos = self._infos(spoken, jnp.ones_like(spoken, bool), move, extra)
        return self._outputs(following, reward, terminated | truncated, infos)

    def move_outcome(self, state: State, action: jax.Array) -> tuple[jax.Array, State, jax.Array]:
        """``(reward, state after, done)`` of the builder phase's ``action`` in ``state``, the move played on
        a copy: ``step_builder``'s reward and done, for what-if questions of a trainer's credit assignment
        (``team.ppo``'s counterfactual director credit) at the cost of one move. The state after is the
        next turn's as far as ``world_state`` reads it (board, target, no intents yet, turn); its speaking
        slots and moves are not drawn, and an ended episode is not replaced."""
        played, _, reward, done = game.play(state, jnp.asarray(action), self.tables, self.params,
                                            self.oracle_tables)
        return reward, game.turn_cleared(played), done

    # ------------------------------------------------------------------ batches (leading axis)

    def step_directors_batch(self, states: State, intents: jax.Array):
        """``step_directors`` over a batch: ``intents`` int ``(B, S)``."""
        return jax.vmap(self.step_directors)(states, intents)

    def step_builder_batch(self, states: State, actions: jax.Array, reserve: int | None = None):
        """``step_builder`` over a batch (``actions`` int ``(B,)``), equal to ``vmap(step_builder)`` and
        much cheaper: new episodes are drawn only for the envs whose episode ended
        (``game.step_builder_batch``)."""
        spoken = states.spoken
        following, move, reward, terminated, truncated, seed, episode = game.step_builder_batch(
            states, jnp.asarray(actions), self.tables, self.params, self.oracle_tables, reserve)

        def outputs(following, move, reward, terminated, truncated, seed, episode, spoken):
            extra = {"legal": move.reason == 0, "terminated": terminated, "truncated": truncated,
                     "episode": episode, "episode_seed_hi": seed.hi, "episode_seed_lo": seed.lo}
            infos = self._infos(spoken, jnp.ones_like(spoken, bool), move, extra)
            return self._outputs(following, reward, terminated | truncated, infos)

        return jax.vmap(outputs)(following, move, reward, terminated, truncated, seed, episode, spoken)


def make(**config: Any) -> CraftJaxEnv:
    """A ``CraftJaxEnv`` for ``vector_env()``'s keyword arguments (``structures=`` included)."""
    return CraftJaxEnv(**config)
