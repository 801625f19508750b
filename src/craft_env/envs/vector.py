"""``vector_env(num_envs, **config)``: CRAFT for ``num_envs`` episodes at once, in numba.

The same game as ``parallel_env()`` (same rules, seeds, observation encoding,
masks, rewards and action ids; a test plays both side by side), batched:
every episode of the batch advances in lock-step, numpy arrays in and out,
one numba call per phase.

====================  ========================================================
Import                ``craft_env.vector_env(num_envs, **config)``
Config                the keyword arguments of ``parallel_env()``
                      (``envs.config.make_config``) except text
                      (``message_mode="text"``, ``text_observations``) and
                      rendering (``render_mode``, ``render_target``): both
                      are errors; plus ``structures=`` (one structure, or
                      bundled-set index, per env, cycled) and ``copy=``
Turn                  two steps, as in ``parallel_env()``: a director phase
                      (``step_directors``) then a builder phase
                      (``step_builder``); ``step`` dispatches on the phase
Director actions      int ``(num_envs, seats)``: column ``k`` is the intent id
                      of seat ``seats[k]`` (agent ``directors[k]``; three
                      columns D1, D2, D3 by default); an intent outside its
                      mask is the no-op.
                      Under protocol paper a director is spoken once per
                      speaking slot it holds (twice, once or not at all;
                      ``director_orders``), as in ``parallel_env()``
Builder actions       int ``(num_envs,)``: action ids; an illegal one is a
                      failed turn (board unchanged), never an exception
Observations          ``{"directors": {"observation": float32 (B, seats, Dd),
                      "action_mask": int8 (B, seats, I)}, "builder":
                      {"observation": float32 (B, Db), "action_mask": int8
                      (B, A)}}``; the idle role's masks are only the no-op
Rewards               float32 ``(B,)``, the team reward of the builder phase
                      (zeros after the director phase)
Terminations          bool ``(B,)``: the game is complete (the protocol's
                      completion, ``infos["completed"]``); truncations at
                      ``max_turns``
State                 ``state()``: float32 ``(B, S)``, each row
                      ``parallel_env().state()`` (board, whole target,
                      intents, turn), for centralized critics
Auto-reset            an episode that ends in a builder phase restarts at once:
                      that row of the returned observations is already the
                      next episode's first (``infos`` still describe the
                      finished step: its metrics, distance, seed)
====================  ========================================================

Seeds
-----
``reset(seed=s)`` fixes everything. Env ``i`` has the stream seed
``derive_seed(s, 101, i)`` and its episode ``k`` (``k = 0`` after
``reset``) has the seed::

    episode_seed(s, i, k) = derive_seed(derive_seed(s, 101, i), 102, k)

(``core.random.derive_seed``; 101/102 are ``core.random.STREAM_VECTOR_ENV`` /
``STREAM_VECTOR_EPISODE``). That episode is exactly
``parallel_env(**config).reset(seed=episode_seed(s, i, k))``: same target,
director orders and candidates. ``env.episode_seeds`` holds every env's
current seed, ``infos["episode_seed"]`` the seed of the episode each
builder step belonged to.

Buffers
-------
The returned observation and mask arrays are read-only views of the env's
own buffers, updated in place by the next ``step``: copy what you keep
(``copy=True`` makes every step return fresh copies instead). The kernels
update them incrementally; see ``core.batch``.

Pickling
--------
The env pickles at any point, mid-episode included (Ray actors, process
pools, checkpoints): as its constructor arguments, a copy of the episode
arrays and of the last step's buffers; unpickling builds the env again and
copies them in (``envs.game``, "Pickling"), and the copy steps exactly as
the original would.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from craft_env.core import batch as kernels
from craft_env.core import game
from craft_env.core.board import Structure
from craft_env.core.encoding import action_table
from craft_env.core.game import (
    RESULT_DISTANCE,
    RESULT_FOLLOWED,
    RESULT_LAYER,
    RESULT_OPTIMAL,
    RESULT_REASON,
    RESULT_REMOVE_ATTEMPTED,
    RESULT_REMOVE_PRESCRIBED,
)
from craft_env.core.intents import intent_table
from craft_env.core.metrics import METRIC_NAMES
from craft_env.core.observation import builder_obs_dim, director_obs_dim, state_dim
from craft_env.core.random import STREAM_VECTOR_ENV, STREAM_VECTOR_EPISODE, derive_seed, normalise_seed
from craft_env.core.views import BUILDER, agent_name
from craft_env.envs.config import make_config, resolve_structures
from craft_env.core.jit import announce_cold_kernels, compiled_entry
from craft_env.envs.game import episode_arrays, restore_episode

#: The directors under the default seats; an env's own are ``directors`` (``seats`` keyword).
ROLES = ("directors", "builder")


def episode_seed(base_seed: int, env_index: int, episode: int) -> int:
    """The seed of episode ``episode`` of env ``env_index`` after ``reset(seed=base_seed)``."""
    env_seed = derive_seed(normalise_seed(base_seed), STREAM_VECTOR_ENV, env_index)
    return int(derive_seed(env_seed, STREAM_VECTOR_EPISODE, episode))


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


def _check_arguments(num_envs: Any, copy: Any, config: dict[str, Any]) -> None:
    """The constructor's own arguments, and the ``parallel_env()`` keywords the vector env cannot honour
    (text and rendering: the module docstring's "Config")."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"num_envs: must be a positive int, got {num_envs!r}")
    if config.get("message_mode") == "text":
        raise ValueError(
            "message_mode: the vector env plays intents only (message_mode='intent'); "
            "use craft_env.env() or parallel_env() for text"
        )
    if config.get("text_observations"):
        raise ValueError(
            "text_observations: the vector env has numeric observations only; "
            "use craft_env.env() or parallel_env() for text"
        )
    for field, idle in (("render_mode", None), ("render_target", False)):
        if config.get(field, idle) != idle:
            raise ValueError(
                f"{field}: the vector env does not render; replay an episode in "
                "parallel_env(render_mode=...) with reset(seed=env.episode_seeds[i])"
            )
    if not isinstance(copy, bool):
        raise ValueError(f"copy: must be a bool, got {copy!r}")


class CraftVectorEnv:
    """``num_envs`` CRAFT episodes in lock-step (see the module docstring)."""

    metadata = {"name": "craft_vector_v0"}
    #: The buffers that hold the last step's outputs, pickled beside the episode arrays.
    STEP_BUFFERS = ("_rewards", "_terminations", "_truncations", "_result", "_intent_legal", "_actions",
                    "_intent_buffer")

    def __init__(
        self,
        num_envs: int,
        structures: Sequence[Structure | int] | None = None,
        copy: bool = False,
        **config: Any,
    ) -> None:
        _check_arguments(num_envs, copy, config)
        self._arguments = (num_envs, structures, copy, dict(config))  # what a pickled copy is built from
        fixed = resolve_structures(structures, config)
        announce_cold_kernels(kernels.game_builder_serial, kernels.game_reset)
        self.config = make_config(**config)
        self.metadata = {**type(self).metadata, "protocol": self.config.protocol.name}
        self.num_envs = int(num_envs)
        self.copy = copy
        self._set_sizes()
        self._new_episodes(fixed)
        self._allocate_step_buffers()
        self._make_views()
        self._make_spaces()
        self.base_seed: int | None = None
        self._phase: str | None = None

    def _set_sizes(self) -> None:
        """The board size, seats, action and intent tables and the observation widths of ``self.config``."""
        cfg = self.config
        self.n, self.height = n, height = cfg.n, cfg.height
        self.table = table = action_table(n)
        self.seats = cfg.seats
        self.directors = tuple(agent_name(seat) for seat in self.seats)
        self.intents = [intent_table(seat, n, height) for seat in self.seats]
        self.num_actions = table.num_actions
        self.num_intents = intents = self.intents[0].num_intents
        self.noop = table.noop
        seats = len(self.seats)
        self.builder_dim = builder_obs_dim(n, height, seats, intents)
        self.director_dim = director_obs_dim(n, height, seats, intents)
        self.state_dim = state_dim(n, height, seats, intents)

    def _new_episodes(self, fixed: list[Structure] | None) -> None:
        """The kernels' config record and the batch's episode arrays (``core.game``), with their short names.

        ``fixed`` (the ``structures=`` of the constructor, else ``structure=``) is cycled over the envs as
        their targets; without it every episode draws its own.
        """
        cfg, num_envs = self.config, self.num_envs
        if fixed is None and cfg.structure is not None:
            fixed = [cfg.structure]
        fixed_targets = None
        if fixed is not None:
            fixed_targets = np.stack([fixed[i % len(fixed)].array for i in range(num_envs)]).astype(np.int8)
        self._fixed = fixed
        config = game.config_record(
            self.seats, self.intents, self.n, self.height, cfg.max_turns, cfg.oracle_n, cfg.reward, cfg.start,
            cfg.director_order, cfg.director_sees, cfg.protocol, fixed_targets,
        )
        episode = game.new_episodes(config, num_envs, self.height, self.director_dim, self.builder_dim)
        self._config, self._episode = config, episode
        # The kernels take the records packed (``core.records``).
        self._config_record, self._episode_record = game.kernel_records(config, episode)
        self._entries: dict[Any, Any] = {}  # kernel -> its compiled entry (``_call``)
        self._boards, self._targets, self._info = episode.boards, episode.targets, episode.info
        self._st = self._info  # the episodes' scalars (``game.EPISODE_INFO``), under the name tests use
        self._scores, self._spoken, self._order = episode.scores, episode.spoken, episode.order
        self._optimal, self._builder_mask = episode.optimal, episode.builder_mask
        self._director_masks, self._director_obs = episode.director_masks, episode.director_obs
        self._builder_obs = episode.builder_obs

    def _allocate_step_buffers(self) -> None:
        """The buffers a step writes (``STEP_BUFFERS``) and the constant arrays the idle role returns."""
        num_envs, seats = self.num_envs, len(self.seats)
        self._rewards = np.zeros(num_envs, np.float32)
        self._terminations = np.zeros(num_envs, bool)
        self._truncations = np.zeros(num_envs, bool)
        self._result = np.zeros((num_envs, game.RESULT_WIDTH), np.float64)
        self._intent_legal = np.zeros((num_envs, seats), bool)
        self._actions = np.zeros(num_envs, np.int64)
        self._intent_buffer = np.zeros((num_envs, seats), np.int64)
        self._zero_rewards = _read_only(np.zeros(num_envs, np.float32))
        self._false = _read_only(np.zeros(num_envs, bool))
        noop_director = np.zeros(self.num_intents, np.int8)
        noop_director[0] = 1
        noop_builder = np.zeros(self.num_actions, np.int8)
        noop_builder[self.noop] = 1
        self._idle_director_masks = np.broadcast_to(noop_director, (num_envs, seats, self.num_intents))
        self._idle_builder_mask = np.broadcast_to(noop_builder, (num_envs, self.num_actions))

    def _make_views(self) -> None:
        """The read-only views a step returns (the module docstring, "Buffers"): observations, masks,
        rewards and flags, and the builder step's ``infos`` as columns of the result buffer."""
        self._views = {
            "director_obs": _read_only(self._director_obs),
            "builder_obs": _read_only(self._builder_obs),
            "director_masks": _read_only(self._director_masks),
            "builder_mask": _read_only(self._builder_mask),
            "rewards": _read_only(self._rewards),
            "terminations": _read_only(self._terminations),
            "truncations": _read_only(self._truncations),
        }
        result = self._result
        info_columns = {
            "reason": result[:, RESULT_REASON],
            "layer": result[:, RESULT_LAYER],
            "distance": result[:, RESULT_DISTANCE],
            "optimal": result[:, RESULT_OPTIMAL],
            "remove_prescribed": result[:, RESULT_REMOVE_PRESCRIBED],
            "remove_attempted": result[:, RESULT_REMOVE_ATTEMPTED],
            "followed_oracle": result[:, RESULT_FOLLOWED],
            "completed": result[:, game.RESULT_COMPLETED],
            "turn": result[:, game.RESULT_TURN],
            **{name: result[:, game.RESULT_SCORES + m] for m, name in enumerate(METRIC_NAMES)},
            "episode_seed": self._info["step_seed"],
            "episode": self._info["step_episode"],
        }
        self._builder_info_views = {k: _read_only(v) for k, v in info_columns.items()}

    def _make_spaces(self) -> None:
        """The agents and each one's observation and action space, as ``parallel_env()`` has them."""
        self.possible_agents = [*self.directors, BUILDER]
        director_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (self.director_dim,), np.float32),
            "action_mask": spaces.Box(0, 1, (self.num_intents,), np.int8),
        })
        builder_space = spaces.Dict({
            "observation": spaces.Box(0.0, 1.0, (self.builder_dim,), np.float32),
            "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
        })
        self.single_observation_spaces = {a: director_space for a in self.directors}
        self.single_observation_spaces[BUILDER] = builder_space
        self.single_action_spaces = {a: spaces.Discrete(self.num_intents) for a in self.directors} | {
            BUILDER: spaces.Discrete(self.num_actions)
        }
        self.single_state_space = spaces.Box(0.0, 1.0, (self.state_dim,), np.float32)

    def __getstate__(self) -> dict[str, Any]:
        """The env as plain data (the module docstring, "Pickling")."""
        return {
            "arguments": self._arguments,
            "episode": episode_arrays(self._episode),
            "buffers": {name: getattr(self, name).copy() for name in self.STEP_BUFFERS},
            "base_seed": self.base_seed,
            "phase": self._phase,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        num_envs, structures, copy, config = state["arguments"]
        self.__init__(num_envs, structures=structures, copy=copy, **config)
        restore_episode(self._episode, state["episode"])
        for name, saved in state["buffers"].items():
            np.copyto(getattr(self, name), saved)
        self.base_seed = state["base_seed"]
        self._phase = state["phase"]

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        """The observation space of one env's ``agent`` (as in ``parallel_env()``)."""
        return self.single_observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.single_action_spaces[agent]

    # ----------------------------------------------------------------- episode

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start episode 0 of every env; ``seed`` is the base seed (random when ``None``)."""
        self.base_seed = secrets.randbits(63) if seed is None else normalise_seed(seed)
        info = self._info
        info[:] = 0
        for i in range(self.num_envs):
            info["env_seed"][i] = derive_seed(self.base_seed, STREAM_VECTOR_ENV, i)
        kernels.game_reset(self._config_record, self._episode_record)
        self._phase = "directors"
        infos = {"episode_seed": self.episode_seeds, "episode": self.episode_counts}
        return self._observations(), infos

    def step(self, actions: Any):
        """One parallel step: the directors' phase or the builder's, whichever is next.

        ``actions``: an int array ``(B, seats)`` (directors) or ``(B,)`` (builder),
        or a dict from agent name to a ``(B,)`` array.
        """
        if self._phase == "builder":
            if isinstance(actions, dict):
                actions = actions[BUILDER]
            return self.step_builder(actions)
        if isinstance(actions, dict):
            zeros = np.zeros(self.num_envs, np.int64)
            actions = np.stack([np.asarray(actions.get(a, zeros)) for a in self.directors], axis=1)
        return self.step_directors(actions)

    def step_directors(self, intents: Any):
        """Director phase: ``intents[b, k]`` is seat ``seats[k]``'s (``directors[k]``) intent in env ``b``."""
        self._expect("directors")
        buffer = self._intent_buffer
        intents = np.asarray(intents)
        if intents.shape != buffer.shape:
            raise ValueError(f"intents: expected shape {buffer.shape}, got {intents.shape}")
        np.copyto(buffer, intents, casting="unsafe")
        self._call(kernels.game_directors, buffer, self._intent_legal)
        self._phase = "builder"
        infos = {"intent": _read_only(self._spoken), "intent_legal": _read_only(self._intent_legal)}
        return self._observations(), self._zero_rewards, self._false, self._false, infos

    def step_builder(self, actions: Any):
        """Builder phase: ``actions[b]`` is the builder's action id in env ``b``; ends the turn."""
        self._expect("builder")
        buffer = self._actions
        actions = np.asarray(actions)
        if actions.shape != buffer.shape:
            raise ValueError(f"actions: expected shape {buffer.shape}, got {actions.shape}")
        np.copyto(buffer, actions, casting="unsafe")
        self._call(kernels.builder_driver(self.num_envs), buffer, self._rewards, self._terminations,
                   self._truncations, self._result)
        self._phase = "directors"
        views = self._views
        infos = dict(self._builder_info_views)
        infos["legal"] = self._result[:, RESULT_REASON] == 0
        if self.copy:
            infos = {k: np.array(v) for k, v in infos.items()}
            return (self._observations(), views["rewards"].copy(), views["terminations"].copy(),
                    views["truncations"].copy(), infos)
        return self._observations(), views["rewards"], views["terminations"], views["truncations"], infos

    def _call(self, kernel: Any, *buffers: np.ndarray) -> None:
        """``kernel(records, *buffers)`` through its compiled entry (``core.jit.compiled_entry``).

        Every step passes the same packed records and this env's own buffers,
        so numba's per-call typing is skipped; the entry is made on first use.
        """
        records = (self._config_record, self._episode_record)
        entry = self._entries.get(kernel)
        if entry is None:
            entry = self._entries[kernel] = compiled_entry(kernel, (*records, *buffers))
        entry(*records, *buffers)

    def _expect(self, phase: str) -> None:
        if self._phase is None:
            raise ValueError("step: call reset() first")
        if self._phase != phase:
            other = "step_directors" if self._phase == "directors" else "step_builder"
            raise ValueError(f"step_{phase}: it is the {self._phase} phase; call {other}() first")

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        views = self._views
        directors_active = self._phase == "directors"
        obs = {
            "directors": {
                "observation": views["director_obs"],
                "action_mask": views["director_masks"] if directors_active else self._idle_director_masks,
            },
            "builder": {
                "observation": views["builder_obs"],
                "action_mask": self._idle_builder_mask if directors_active else views["builder_mask"],
            },
        }
        if self.copy:
            obs = {role: {k: np.array(v) for k, v in entry.items()} for role, entry in obs.items()}
        return obs

    # ------------------------------------------------------------- policies

    def scripted_intents(self, out: np.ndarray | None = None) -> np.ndarray:
        """The scripted directors' intents (``core.scripted``), every env: int64 ``(B, seats)``, one call."""
        self._expect("directors")
        if out is None:
            out = np.empty((self.num_envs, len(self.seats)), np.int64)
        kernels.game_scripted(self._config_record, self._episode_record, out)
        return out

    def sample_actions(self, seed: int) -> np.ndarray:
        """Uniformly random allowed actions for the role to move: ``(B, seats)`` intents or ``(B,)`` ids."""
        if self._phase is None:
            raise ValueError("sample_actions: call reset() first")
        if self._phase == "directors":
            masks = self._director_masks.reshape(self.num_envs * len(self.seats), -1)
            return kernels.sample_masks(masks, seed).reshape(self.num_envs, len(self.seats))
        return kernels.sample_masks(self._builder_mask, seed)

    # ------------------------------------------------------------------ state

    @property
    def phase(self) -> str | None:
        """``"directors"`` or ``"builder"``: who moves next (``None`` before ``reset``)."""
        return self._phase

    @property
    def builder_phase(self) -> bool:
        return self._phase == "builder"

    @property
    def episode_seeds(self) -> np.ndarray:
        """Each env's current episode seed (int64 ``(B,)``; ``parallel_env().reset(seed=...)`` replays it)."""
        return self._info["seed"].copy()

    @property
    def episode_counts(self) -> np.ndarray:
        """Each env's current episode index ``k`` (0 after ``reset``)."""
        return self._info["episode"].copy()

    def episode_seed(self, env_index: int, episode: int) -> int:
        """The seed of episode ``episode`` of env ``env_index`` under the current base seed."""
        if self.base_seed is None:
            raise ValueError("episode_seed: call reset() first")
        return episode_seed(self.base_seed, env_index, episode)

    def state(self) -> np.ndarray:
        """Every env's global state, float32 ``(B, S)`` (a new array): ``parallel_env().state()`` per row.

        ``[board | target | intents | turn]`` (``core.observation``), for
        centralized critics; it holds the whole target.
        """
        out = np.empty((self.num_envs, self.state_dim), np.float32)
        kernels.game_states(self._config_record, self._episode_record, out)
        return out

    @property
    def turns(self) -> np.ndarray:
        return self._info["turn"].copy()

    @property
    def distances(self) -> np.ndarray:
        """Oracle distance of every env's current board."""
        return self._info["distance"].copy()

    @property
    def scores(self) -> np.ndarray:
        """The paper's metrics of every env's current board, ``(B, 5)`` in ``metrics.METRIC_NAMES`` order."""
        return _read_only(self._scores)

    @property
    def boards(self) -> np.ndarray:
        """Current boards, int8 ``(B, n*n, h)`` (read-only view)."""
        return _read_only(self._boards)

    @property
    def targets(self) -> np.ndarray:
        """Every env's target, int8 ``(B, n*n, h)`` (read-only view)."""
        return _read_only(self._targets)

    @property
    def optimal_masks(self) -> np.ndarray:
        """This turn's optimal-move masks (the oracle's moves), int8 ``(B, A)`` (read-only view)."""
        return _read_only(self._optimal)

    @property
    def spoken_intents(self) -> np.ndarray:
        """The intents spoken this turn per env and seat, int16 ``(B, seats)`` (-1 before the directors')."""
        return _read_only(self._spoken)

    @property
    def director_orders(self) -> np.ndarray:
        """This turn's speaking order per env (seat indices), int64 ``(B, seats)``."""
        return _read_only(self._order)

    def close(self) -> None:
        pass


def vector_env(num_envs: int, **config: Any) -> CraftVectorEnv:
    """``num_envs`` CRAFT episodes in lock-step as one batched numba env (see the module docstring)."""
    return CraftVectorEnv(num_envs, **config)
