"""CRAFT as PettingZoo environments: ``env()`` / ``raw_env`` (AEC) and ``parallel_env()``.

Directors (three by default) each see one private wall of a target 3D
block structure; they must talk a builder into building it.

====================  ========================================================
Import                ``craft_env.env()``, ``craft_env.parallel_env()``,
                      ``craft_env.raw_env``
Agents                ``director_1``, ``director_2``, ``director_3`` (seats
                      D1 left, D2 far, D3 right) and ``builder``; with
                      ``seats=``, ``director_k`` per seated ``Dk`` (D0 near,
                      ``docs/rules.md`` "Seats") in the order given
Turn                  one speaking slot per seat, then the builder moves.
                      Protocol craft: every director speaks once (seeded
                      shuffled order, or fixed). Protocol paper: each slot
                      is a seeded draw with replacement, so a director may
                      speak twice and another not at all; the AEC env
                      selects a director once per slot it holds, the
                      Parallel and vector envs take one action per director
                      per director phase and speak it in each of its slots
Director action       ``Discrete(145)``: intent ids (``core.intents``; no-op,
                      place small/large at a slot of its own wall, remove);
                      text mode also accepts a message ``str``
Builder action        ``Discrete(115)``: action ids (``core.encoding``; 114
                      moves + no-op/clarify = 114); text mode also accepts a
                      ``str`` move line or question
Observation           ``{"observation": Box(0, 1, (D,), float32),
                      "action_mask": Box(0, 1, (A,), int8)}`` plus ``"text"``
                      (``Text``) when text observations are on;
                      D = 943 (directors) / 841 (builder) at 3x3x3 and
                      three seats, layout in ``core.observation``
Rewards               shared by the team, paid on the builder's step:
                      ``progress_delta`` (change in the paper's progress),
                      ``distance`` (oracle distance before minus after), or
                      ``sparse`` (1 on completion)
Termination           the game is complete (protocol craft: the board equals
                      the target; paper: progress >= 0.95); truncation at
                      ``max_turns``
Truncation in cycles  ``max_cycles`` (PettingZoo's keyword; use it or
                      ``max_turns``, not both): truncation after
                      ``max_cycles`` cycles, a cycle being one step of every
                      agent. AEC: one turn per cycle (``max_turns =
                      max_cycles``). Parallel: a turn is two steps, so
                      ``max_turns = ceil(max_cycles / 2)``, and an odd
                      ``max_cycles`` ends after that turn's director phase
Info (builder)        turn, action, move, text, question, legal, reason,
                      metrics, distance, optimal, remove_prescribed,
                      remove_attempted, followed_oracle, completed
                      (the protocol's completion), candidates, reward,
                      terminated, truncated; directors get only the public
                      part (turn, move, question, legal, reason), and on
                      their own step their own intent
State                 ``state()`` / ``state_space``: ``Box(0, 1, (S,),
                      float32)``, board, whole target, intents, turn (S =
                      1246 at 3x3x3), for centralized critics only
Render modes          ``human`` (prints the ``ansi`` frame), ``ansi``,
                      ``rgb_array`` (turn and seat labels); with
                      ``render_target=True`` the target beside the board
====================  ========================================================

Configuration (keyword arguments, validated; see ``envs.config``):
``structure`` (a ``Structure``, an index into the bundled evaluation set, or
``None`` = generate from the reset seed), ``seats`` (the seated directors,
default ``("D1", "D2", "D3")``; any non-empty subset of D0..D3),
``max_turns=20`` (or
``max_cycles``, see the table), ``oracle_n=None``
(None: the builder's mask is every legal move; n: n sampled optimal moves +
no-op, the paper's oracle condition), ``start`` (``empty``, ``first_layer``,
``first_two_layers``, ``wall_D0`` .. ``wall_D3`` of a seated director),
``director_order`` (``"random"``, ``"fixed"`` or a permutation of the seats),
``director_sees`` (``full`` board or only the ``walls``; default: the
protocol's), ``reward``, ``protocol`` (``"craft"`` default or ``"paper"``,
the paper's code: see ``core.protocol`` and ``docs/rules.md``),
``message_mode`` (``intent`` default, or ``text``), ``text_observations``
(default: on in text mode), ``render_mode``, ``render_target=False``.

Illegal or unparseable actions are failed turns (board unchanged,
``info["reason"]`` says why), never exceptions. A builder action outside
the oracle's candidates but legal under the rules is played (the paper's
builder could ignore the oracle); ``followed_oracle`` records it.

Parallel env: a turn is two parallel steps. Step 1 (director phase): the
directors' actions are taken in this turn's order; the builder's mask is
only the no-op and its action is ignored. Step 2 (builder phase): the
builder moves; the directors' masks are only the no-op. Rewards,
terminations and truncations arrive at the builder phase. The same seed and
actions give the same trajectory as the AEC env (tested).

Version history: ``craft_v0`` — first release.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers

from craft_env.core.protocol import SPEAKERS_WITH_REPLACEMENT
from craft_env.core.views import BUILDER, DIRECTORS, agent_name, director_views
from craft_env.envs import render as drawing
from craft_env.envs.config import make_config, turns_for_cycles
from craft_env.envs.game import CraftGame
from craft_env.envs.textobs import (
    TEXT_CHARSET,
    TEXT_MAX_LENGTH,
    conversation_lines,
    public_conversation,
    text_observation,
)

#: The agents under the default seats; an env's own are ``possible_agents`` (``seats`` keyword).
AGENTS = (*DIRECTORS, BUILDER)
# Not "parallelizable" in PettingZoo's sense (``aec_to_parallel``): the AEC env changes state within a
# cycle (a later director hears the earlier ones) and the speaking order is shuffled each turn.
# ``parallel_env()`` is this game's Parallel form.
METADATA = {
    "name": "craft_v0",
    "render_modes": ["human", "ansi", "rgb_array"],
    "is_parallelizable": False,
    "render_fps": 2,
}


def _observation_space(dim: int, actions: int, text: bool) -> spaces.Dict:
    entries: dict[str, gymnasium.Space] = {
        "observation": spaces.Box(0.0, 1.0, (dim,), np.float32),
        "action_mask": spaces.Box(0, 1, (actions,), np.int8),
    }
    if text:
        entries["text"] = spaces.Text(TEXT_MAX_LENGTH, min_length=0, charset="".join(sorted(TEXT_CHARSET)))
    return spaces.Dict(entries)


class _CraftBase:
    """What both env classes share: config, game, spaces, observations, rendering."""

    metadata = METADATA

    _steps_per_turn = 1

    def _setup(self, **config: Any) -> None:
        config, self.max_cycles = turns_for_cycles(config, self._steps_per_turn)
        self.config = make_config(**config)
        self.metadata = {**METADATA, "protocol": self.config.protocol.name}
        self.render_mode = self.config.render_mode
        self._text_observations = text = self.config.text_observations
        self.game = CraftGame(self.config)
        #: This env's directors in seat index order, then every agent (the hot paths loop over these).
        self.directors = directors = tuple(agent_name(seat) for seat in self.config.seats)
        self._agents = agents = (*directors, BUILDER)
        self.possible_agents = list(agents)
        director_obs = _observation_space(self.game.director_dim, self.game.num_intents, text)
        builder_obs = _observation_space(self.game.builder_dim, self.game.num_actions, text)
        self.observation_spaces = {a: director_obs for a in directors} | {BUILDER: builder_obs}
        self.action_spaces = {a: spaces.Discrete(self.game.num_intents) for a in directors} | {
            BUILDER: spaces.Discrete(self.game.num_actions)
        }
        self.state_space = spaces.Box(0.0, 1.0, (self.game.state_dim,), np.float32)
        self.seat_of = dict(zip(directors, self.config.seats))
        self._seat_index = {a: k for k, a in enumerate(directors)}
        self._seated = tuple(enumerate(directors))
        self._noop_director_masks = np.zeros((len(directors), self.game.num_intents), np.int8)
        self._noop_director_masks[:, 0] = 1
        self._noop_builder_mask = np.zeros(self.game.num_actions, np.int8)
        self._noop_builder_mask[self.game.noop] = 1
        self._keep_views()

    def _keep_views(self) -> None:
        """Per agent: views of the game's kept observation and mask (updated in place)."""
        game = self.game
        self._kept_views = {agent: (game.director_obs[seat], game.director_masks[seat])
                            for seat, agent in enumerate(self.directors)}
        self._kept_views[BUILDER] = (game.builder_obs, game.builder_mask)

    def __getstate__(self) -> dict[str, Any]:
        """Everything but the views into the game's arrays (the game pickles itself: ``envs.game``).

        So an env pickles at any point, mid-episode included, and the copy
        continues exactly as the original would.
        """
        state = self.__dict__.copy()
        del state["_kept_views"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._keep_views()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def state(self) -> np.ndarray:
        """The global state for centralized training: ``[board | target | intents | turn]`` (``state_space``).

        It holds the whole target, so it is for critics and analysis, never
        for a policy that acts as one agent; no observation or info contains it.
        """
        return self.game.state()

    # The episode state, for logging, agents and tests.
    @property
    def board(self):
        return self.game.board_structure()

    @property
    def target(self):
        return self.game.target_structure()

    @property
    def turn(self) -> int:
        return self.game.turn

    @property
    def last_move(self):
        """The ``Move`` the builder's last action named, played or not.

        None after a no-op, an unknown action id, or before the first move.
        """
        return self.game.last_move

    @property
    def candidates(self):
        return self.game.candidate_moves()

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """The public conversation: ``turn``, ``speaker`` and ``text`` of every entry so far.

        A new list each time; its entries are made once per episode (they never
        change once said, ``envs.textobs``) and are shared, so treat them as read-only.
        """
        return public_conversation(self.game)

    @property
    def director_order(self) -> list[str]:
        seats = self.config.seats
        return [seats[k] for k in self.game.order_list]

    def _observe_all(self, builder_idle: bool) -> dict[str, dict[str, Any]]:
        """Every agent's observation at once (the Parallel env's path): one copy per block, rows as views."""
        game = self.game
        obs = game.director_obs.copy()
        masks = (game.director_masks if builder_idle else self._noop_director_masks).copy()
        builder_mask = (self._noop_builder_mask if builder_idle else game.builder_mask).copy()
        observations = {}
        for seat, agent in self._seated:  # rows by index: iterating an array costs more per row
            observations[agent] = {"observation": obs[seat], "action_mask": masks[seat]}
        observations[BUILDER] = {"observation": game.builder_obs.copy(), "action_mask": builder_mask}
        if self._text_observations:
            for agent, obs in observations.items():
                obs["text"] = self._text(agent)
        return observations

    def _text(self, agent: str) -> str:
        """The ``"text"`` observation of ``agent`` (``envs.textobs``)."""
        return text_observation(self.game, self._seat_index.get(agent))

    def text_observation(self, agent: str) -> str:
        """``agent``'s ``"text"`` observation now, also when observations leave it out.

        The runner asks for it only for agents that read text, so a game of
        built-in agents (which read the numeric observation) renders none.
        """
        return self._text(agent)

    def _infos_after_build(self, outcome: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Every agent's info after the builder's move.

        The builder gets ``outcome``; the directors only its public part
        (nothing derived from the target).
        """
        public = {
            "turn": outcome["turn"],
            "move": outcome["move"],
            "question": outcome["question"],
            "legal": outcome["legal"],
            "reason": outcome["reason"],
        }
        infos = dict.fromkeys(self.directors, public)
        infos[BUILDER] = outcome
        return infos

    def render(self) -> str | np.ndarray | None:
        """The current frame: ``ansi`` text, an ``rgb_array`` picture, or ``human`` (ansi printed, None).

        Spectator views: they show the whole target (every director's wall,
        and with ``render_target=True`` the target itself beside the board),
        so they are for people and logs, never for an agent.
        """
        mode = self.render_mode
        if mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; pass render_mode='human', 'ansi' or 'rgb_array'"
            )
            return None
        game = self.game
        board = game.board_structure()
        target = game.target_structure() if self.config.render_target else None
        if mode == "rgb_array":
            return drawing.render_frame(
                board, f"TURN {game.turn}/{self.config.max_turns}", target, seats=self.config.seats
            )
        lines = conversation_lines(game)[-(len(self.directors) + 1):]
        text = drawing.render_ansi(
            board,
            target_views=director_views(game.target_structure(), self.config.seats),
            messages=lines,
            title=f"CRAFT turn {game.turn}/{self.config.max_turns}",
            target=target,
            color=mode == "human" and sys.stdout.isatty(),
        )
        if mode == "ansi":
            return text
        sys.stdout.write(text)
        sys.stdout.flush()
        return None

    def close(self) -> None:
        pass


class raw_env(_CraftBase, AECEnv):  # noqa: N801 - PettingZoo naming convention
    """The AEC (turn-by-turn) CRAFT environment without wrappers. See the module docstring."""

    def __init__(self, **config: Any) -> None:
        super().__init__()
        self._setup(**config)
        self.agents: list[str] = []

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.game.reset(seed)
        agents = self._agents
        self.agents = list(agents)
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {a: {} for a in agents}
        self._speaker_index = 0
        self._rewards_paid = False
        self.agent_selection = self.directors[self.game.order_list[0]]

    def observe(self, agent: str) -> dict[str, Any]:
        observation, mask = self._kept_views[agent]
        obs = {"observation": observation.copy(), "action_mask": mask.copy()}
        if self._text_observations:
            obs["text"] = self._text(agent)
        return obs

    def step(self, action: Any) -> None:
        if not self.agents and not getattr(self, "terminations", None):
            raise RuntimeError("step: call reset() before the first step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        agents = self._agents
        if self._rewards_paid:
            self.rewards = dict.fromkeys(agents, 0.0)
            self._rewards_paid = False
        game = self.game
        if agent != BUILDER:
            seat = self._seat_index[agent]
            self.infos[agent] = game.speak(seat, action)
            self._speaker_index += 1
            if self._speaker_index < len(game.order_list):
                self.agent_selection = self.directors[game.order_list[self._speaker_index]]
            else:
                self.agent_selection = BUILDER
        else:
            outcome = game.build(action)
            reward = outcome["reward"]
            self.rewards = dict.fromkeys(agents, reward)
            self._rewards_paid = True
            cumulative = self._cumulative_rewards
            for name in agents:
                cumulative[name] += reward
            if game.done:
                self.terminations = dict.fromkeys(agents, outcome["terminated"])
                self.truncations = dict.fromkeys(agents, outcome["truncated"])
            self.infos = self._infos_after_build(outcome)
            self._speaker_index = 0
            self.agent_selection = self.directors[game.order_list[0]]


def _before_reset(name: str) -> AttributeError:
    return AttributeError(f"{name} cannot be accessed before reset")


class _CheckedAEC(wrappers.OrderEnforcingWrapper):
    """``env()``'s single wrapper: PettingZoo's order checks plus a bounds check on integer actions.

    The classic stack (assert-out-of-bounds + order enforcing) costs several
    Python layers per step, mostly attribute look-ups that fall through
    ``__getattr__``; here the hot attributes are plain properties and
    ``last()`` is one call, so the checks stay and the overhead goes.
    Illegal (masked) actions are not errors: they are failed turns.
    """

    @property
    def agent_selection(self) -> str:
        if not self._has_reset:
            raise _before_reset("agent_selection")
        return self.env.agent_selection

    @property
    def agents(self) -> list[str]:
        if not self._has_reset:
            raise _before_reset("agents")
        return self.env.agents

    @property
    def terminations(self) -> dict[str, bool]:
        if not self._has_reset:
            raise _before_reset("terminations")
        return self.env.terminations

    @property
    def truncations(self) -> dict[str, bool]:
        if not self._has_reset:
            raise _before_reset("truncations")
        return self.env.truncations

    @property
    def rewards(self) -> dict[str, float]:
        if not self._has_reset:
            raise _before_reset("rewards")
        return self.env.rewards

    @property
    def infos(self) -> dict[str, dict]:
        if not self._has_reset:
            raise _before_reset("infos")
        return self.env.infos

    @property
    def _cumulative_rewards(self) -> dict[str, float]:
        return self.env._cumulative_rewards

    def last(self, observe: bool = True):
        if not self._has_reset:
            raise _before_reset("last()")
        return self.env.last(observe)

    def step(self, action: Any) -> None:
        inner = self.env
        if self._has_reset and inner.agents and action is not None and not isinstance(action, str):
            agent = inner.agent_selection
            if not (inner.terminations[agent] or inner.truncations[agent]):
                space = inner.action_spaces[agent]
                in_bounds = 0 <= action < space.n if type(action) is int else space.contains(action)
                if not in_bounds:
                    raise ValueError(f"action: {action!r} is outside {agent}'s action space {space}")
        super().step(action)


def env(**config: Any) -> AECEnv:
    """The AEC environment wrapped as PettingZoo users expect (order checks, action bounds)."""
    return _CheckedAEC(raw_env(**config))


class CraftParallelEnv(_CraftBase, ParallelEnv):
    """The Parallel CRAFT environment: a director phase and a builder phase per turn."""

    _steps_per_turn = 2

    def __init__(self, **config: Any) -> None:
        self._setup(**config)
        self.agents: list[str] = []
        self._builder_phase = False
        # Per-step dicts of every agent, copied from these (a copy costs a third of ``dict.fromkeys``).
        self._all_zero = dict.fromkeys(self._agents, 0.0)
        self._all_false = dict.fromkeys(self._agents, False)
        self._all_true = dict.fromkeys(self._agents, True)
        #: Speaking slots drawn with replacement (protocol paper): a director may hold no slot in a turn.
        self._slots_drawn = self.config.protocol.speakers == SPEAKERS_WITH_REPLACEMENT
        # An odd max_cycles ends the episode after a director phase (the only truncation there).
        self._last_director_turn = None if self.max_cycles is None or self.max_cycles % 2 == 0 else (
            self.config.max_turns - 1
        )

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.game.reset(seed)
        self.agents = list(self._agents)
        self._builder_phase = False
        return self._observe_all(builder_idle=True), {a: {} for a in self._agents}

    def step(self, actions: dict[str, Any]):
        if not self.agents:
            raise ValueError("step: the episode is over; call reset() first")
        game = self.game
        if not self._builder_phase:
            directors = self.directors
            infos = dict.fromkeys(directors)  # seat order; a seat without a slot this turn gets {} below
            for seat in game.order_list:
                agent = directors[seat]
                infos[agent] = game.speak(seat, actions.get(agent, 0))
            if self._slots_drawn:
                for agent, info in infos.items():
                    if info is None:
                        infos[agent] = {}
            infos[BUILDER] = {}
            self._builder_phase = True
            observations = self._observe_all(builder_idle=False)
            if game.turn == self._last_director_turn:
                self.agents = []
                truncated = self._all_true.copy()
            else:
                truncated = self._all_false.copy()
            return observations, self._all_zero.copy(), self._all_false.copy(), truncated, infos
        outcome = game.build(actions.get(BUILDER, game.noop))
        self._builder_phase = False
        infos = self._infos_after_build(outcome)
        rewards = dict.fromkeys(self._agents, outcome["reward"])
        terminations = (self._all_true if outcome["terminated"] else self._all_false).copy()
        truncations = (self._all_true if outcome["truncated"] else self._all_false).copy()
        observations = self._observe_all(builder_idle=True)
        if game.done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    @property
    def builder_phase(self) -> bool:
        """True when the next step is the builder's move."""
        return self._builder_phase


def parallel_env(**config: Any) -> CraftParallelEnv:
    """The Parallel environment (see the module docstring for the two-phase turn)."""
    return CraftParallelEnv(**config)
