"""The evaluation every team gets: the bundled set on ``vector_env``, greedy policies, no oracle, 20 turns.

Each team plays the 20 bundled structures x ``seeds`` games in one
``vector_env`` (env ``i`` plays structure ``i % 20``; ``reset(seed=EVAL_SEED)``),
so every team plays exactly the same episodes (targets and speaking
orders) and differences between teams are paired game by game. A learned
team is played by the same policy functions it trained with (``team.policy``,
jitted, greedy: argmax of the masked logits), on the numba game rather than
the JAX one: the evaluation is also a check that both games agree. The
learned builder plays under its training mask (``mask_pass``; as
``examples/train_builder.py``'s evaluation does).

Seats:

* directors: ``random`` (uniform over each mask), ``scripted`` (``core.scripted``),
  ``learned``;
* either: a callable ``(observations, masks) -> actions`` on the role's
  batched ``vector_env`` arrays (``homogeneous_policy`` makes them from
  a one-policy-for-all-agents predictor, as SB3 and RLlib train);
* builder: ``random`` (uniform over its mask: legal moves and the pass),
  ``listener`` (the move the first director in speaking order asked for,
  when legal, else a random legal move; ``examples/builder_ppo.py``'s),
  ``learned``, ``oracle`` (a uniformly random optimal move).

The paired difference between two teams is the leaderboard's paired
bootstrap (``eval.results.bands``: structures, then games within them).
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

import craft_env
from craft_env.core.batch import sample_masks
from craft_env.core.board import Structure
from craft_env.core.metrics import score
from craft_env.core.views import visible_part
from craft_env.eval.leaderboard.targets import structure_key
from craft_env.eval.results.bands import Interval, Scores, rank_bands
from craft_env.eval.results.stats import cluster_sem
from craft_env.jax.team import policy as pol
from craft_env.jax.team.config import TeamConfig
from craft_env.jax.team.game import intents_offset

EVAL_SEED = 10_000
MAX_TURNS = 20
FINAL = ("progress", "completion", "turn", "position_accuracy", "iou")
#: Per-game counts over its turns: name -> the builder step's info column (``failed``: reason != 0).
COUNTED = {"failed": "reason", "removes": "remove_attempted", "removes_prescribed": "remove_prescribed",
           "followed": "followed_oracle"}


@dataclass(frozen=True)
class Games:
    """Per-game results of one team on the evaluation episodes (game ``i`` plays structure ``i % 20``)."""

    name: str
    progress: np.ndarray
    completion: np.ndarray
    turns: np.ndarray
    structures: tuple[str, ...]
    #: The other per-game values a leaderboard entry holds (``eval.leaderboard.entries.GameResult``).
    extra: dict[str, np.ndarray] | None = None

    def summary(self) -> dict[str, float]:
        """Means over the games; ``se``: the progress's standard error over the structures' means
        (``stats.cluster_sem``: a structure's games are not independent), ``se_games``: over the games."""
        size = len(self.progress)
        structures = [i % len(self.structures) for i in range(size)]
        return {
            "progress": float(self.progress.mean()),
            "se": cluster_sem([float(x) for x in self.progress], structures),
            "se_games": float(self.progress.std(ddof=1) / np.sqrt(size)) if size > 1 else 0.0,
            "completion": float(self.completion.mean()),
            "completed": float(np.mean(self.completion >= 1.0)),
            "turns": float(self.turns.mean()),
            "games": size,
        }

    def scores(self) -> Scores:
        """The bands' view: progress per structure name."""
        by_structure: dict[str, list[float]] = {}
        for i, value in enumerate(self.progress):
            by_structure.setdefault(self.structures[i % len(self.structures)], []).append(float(value))
        s = self.summary()
        return Scores(self.name, s["progress"], s["se"], by_structure)


def structure_names() -> tuple[str, ...]:
    return tuple(structure_key(s.id, i) for i, s in enumerate(craft_env.load_eval_set()))


class LearnedPolicies:
    """A trained team's greedy policies on numpy observations (jitted once per shape)."""

    def __init__(self, params: dict, cfg: TeamConfig, shapes: pol.Shapes, meaning: np.ndarray) -> None:
        self.params, self.cfg, self.shapes = params, cfg, shapes
        self.meaning = jnp.asarray(meaning, jnp.int32)
        self._directors = jax.jit(self._director_actions)
        self._builder = jax.jit(self._builder_actions)

    def _director_actions(self, params, obs, mask, memory):
        script = pol.scripted_from_observations(self.shapes, obs, mask) if self.cfg.script_prior else None
        x = pol.director_inputs(self.shapes, obs, memory, script)
        return jnp.argmax(pol.director_logits(params, self.cfg, x, mask), -1)

    def _builder_actions(self, params, obs, mask, memory):
        mask = pol.training_builder_mask(self.shapes, self.cfg, mask)
        x = pol.builder_inputs(self.shapes, obs, memory, pol.heard_moves(self.shapes, self.meaning, obs))
        return jnp.argmax(pol.builder_logits(params, self.cfg, x, mask), -1)

    def directors(self, obs, mask, memory) -> np.ndarray:
        return np.asarray(self._directors(self.params, obs, mask, memory))

    def builder(self, obs, mask, memory) -> np.ndarray:
        return np.asarray(self._builder(self.params, obs, mask, memory))


def homogeneous_policy(predict, director_dim: int, builder_dim: int, num_intents: int = 145):
    """``(directors, builder)`` callables for ``play`` from one policy over ``wrappers.homogeneous``'s flat
    observations (own observation zero-padded, the role one-hot, then the padded mask).

    ``predict(observations (N, D), masks (N, I)) -> actions (N,)``: e.g. SB3's
    ``lambda o, m: model.predict(o, action_masks=m, deterministic=True)[0]``.
    """
    pad = max(director_dim, builder_dim)

    def flat(own: np.ndarray, mask: np.ndarray, role: int) -> tuple[np.ndarray, np.ndarray]:
        rows = own.shape[0]
        out = np.zeros((rows, pad + 2 + num_intents), np.float32)
        out[:, :own.shape[1]] = own
        out[:, pad + role] = 1.0
        masks = np.zeros((rows, num_intents), bool)
        masks[:, :mask.shape[1]] = mask
        out[:, pad + 2:] = masks
        return out, masks

    def directors(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        batch, seats = obs.shape[:2]
        o, m = flat(obs.reshape(batch * seats, -1), masks.reshape(batch * seats, -1), 0)
        return np.asarray(predict(o, m)).reshape(batch, seats)

    def builder(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        o, m = flat(obs, mask, 1)
        return np.asarray(predict(o, m))

    return directors, builder


def listen(env, mask: np.ndarray, meaning: np.ndarray, seed: int) -> np.ndarray:
    """The listener (module docstring): the first director in speaking order with a legal request."""
    spoken = env.spoken_intents.astype(np.int64)
    rows = np.arange(env.num_envs)
    actions = env.sample_actions(seed)
    chosen = np.zeros(env.num_envs, bool)
    for k in range(len(env.seats)):
        seat = env.director_orders[:, k]
        action = meaning[seat, np.maximum(spoken[rows, seat], 0)]
        usable = ~chosen & (spoken[rows, seat] > 0) & (action >= 0)
        usable &= mask[rows, np.maximum(action, 0)].astype(bool)
        actions[usable] = action[usable]
        chosen |= usable
    return actions


def _director_move(env, kind, obs, memory, policies, rng):
    if callable(kind):
        return kind(obs["directors"]["observation"], obs["directors"]["action_mask"])
    if kind == "scripted":
        return env.scripted_intents()
    if kind == "random":
        return env.sample_actions(int(rng.integers(1 << 62)))
    return policies.directors(obs["directors"]["observation"], obs["directors"]["action_mask"], memory)


def _builder_move(env, kind, obs, memory, policies, meaning, rng):
    b = obs["builder"]
    if callable(kind):
        return kind(b["observation"], b["action_mask"])
    if kind == "random":
        return env.sample_actions(int(rng.integers(1 << 62)))
    if kind == "listener":
        return listen(env, b["action_mask"], meaning, int(rng.integers(1 << 62)))
    if kind == "oracle":
        return sample_masks(env.optimal_masks, int(rng.integers(1 << 62)))
    return policies.builder(b["observation"], b["action_mask"], memory)


def play(name: str, directors: str, builder: str, seeds: int = 10, policies: LearnedPolicies | None = None,
         memory_turns: int = 0, base_seed: int = EVAL_SEED, watch=None,
         targets: list[Structure] | None = None) -> Games:
    """Every bundled structure ``seeds`` times with the given seats; one episode per env.

    ``watch(env, actions, playing, scripted)``, when given, sees every turn after the directors spoke and
    before the builder's ``actions`` are played (``playing``: the envs still in their first episode;
    ``scripted``: what the scripted directors would have said this turn, ``(B, seats)``).
    ``targets``, one per bundled structure, are played in their place (``play_walls_oracle``).
    """
    names = structure_names()
    structures = list(range(len(names))) if targets is None else targets
    env = craft_env.vector_env(len(names) * seeds, structures=structures, max_turns=MAX_TURNS, copy=True)
    meaning = np.stack([intents.action for intents in env.intents]).astype(np.int64)
    obs, _ = env.reset(seed=base_seed)
    shapes = pol.Shapes(len(env.seats), env.num_intents, env.num_actions, env.noop, env.director_dim,
                        env.builder_dim, env.state_dim, intents_offset(env.n, env.height))
    memory = np.zeros((env.num_envs, memory_turns, shapes.memory_width), np.float32)
    final = {key: np.full(env.num_envs, np.nan) for key in FINAL}
    counts = {key: np.zeros(env.num_envs, np.int64) for key in COUNTED}
    finished = np.zeros(env.num_envs, bool)
    rng = np.random.default_rng(base_seed)
    while not finished.all():
        scripted = env.scripted_intents() if watch is not None else None
        obs, *_ = env.step_directors(_director_move(env, directors, obs, memory, policies, rng))
        spoken = obs["builder"]["observation"][:, shapes.intents_offset:shapes.intents_offset + shapes.memory_width]
        actions = _builder_move(env, builder, obs, memory, policies, meaning, rng)
        if watch is not None:
            watch(env, actions, ~finished, scripted)
        obs, _, terminated, truncated, info = env.step_builder(actions)
        done = terminated | truncated
        for key, column in COUNTED.items():
            counts[key] += np.where(finished, 0, (info[column] != 0) if key == "failed" else info[column] > 0)
        memory = np.asarray(pol.push_memory(jnp.asarray(memory), jnp.asarray(spoken), jnp.asarray(done)))
        ended = done & ~finished
        for key, values in final.items():
            values[ended] = info[key][ended]
        finished |= ended
    extra = {key: final[key] for key in ("position_accuracy", "iou")} | counts
    return Games(name, final["progress"], final["completion"], final["turn"], names, extra)


def play_walls_oracle(name: str, seeds: int = 10, base_seed: int = EVAL_SEED) -> Games:
    """The oracle builder toward what the walls show (``core.views.visible_part``), scored against the
    targets.

    A reference, not a team: it is what perfect speech (every wall described
    exactly) and a builder that fills no gap would reach, so the distance
    from it to the oracle is what no message can carry (the hidden cells,
    the large blocks that look small). ``play``'s episodes, with the walls'
    boards as targets; the directors' words do not matter to it.
    """
    targets = craft_env.load_eval_set()
    shown = [Structure(visible_part(t.array, t.n), t.n, id=t.id) for t in targets]
    built = play(name, "scripted", "oracle", seeds, base_seed=base_seed, targets=shown)
    if (built.completion < 1.0).any():
        raise RuntimeError(f"play_walls_oracle: the walls' board not built in {MAX_TURNS} turns")
    scores = [score(board, target) for board, target in zip(shown, targets)]
    column = {key: np.array([scores[i % len(targets)][key] for i in range(len(built.progress))])
              for key in ("progress", "completion", "position_accuracy", "iou")}
    extra = {key: column[key] for key in ("position_accuracy", "iou")}
    return Games(name, column["progress"], column["completion"], built.turns, built.structures, extra)


def paired_difference(a: Games, b: Games) -> Interval:
    """``a - b`` in progress with the leaderboard's 95% paired-bootstrap interval (``eval.results.bands``)."""
    if a.name == b.name:
        raise ValueError(f"paired_difference: two teams named {a.name!r}")
    top, _ = rank_bands([a.scores(), b.scores()])
    interval = top.to_next
    if top.key == a.name:
        return interval
    return Interval(-interval.diff, -interval.high, -interval.low, interval.method, interval.structures)
