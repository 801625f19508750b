"""The JAX game (``craft_env.jax``) against the numba vector env, after every step (``docs/jax.md``).

The numba core is the reference. Each test drives ``vector_env`` and the
JAX env with the same seeds and the same actions (random legal, scripted,
oracle and adversarial: out-of-range intents, illegal and unknown builder
actions, no-ops) and compares every observation array, mask, reward,
termination, truncation, info and the global state after every step;
states are converted both ways (``vector_env`` arrays into a JAX
``State``, a JAX ``State`` written into a ``vector_env`` row).

One compile serves every configuration of a board size: the
configuration travels as traced ``Params`` (``CraftJaxEnv.with_params``),
and the JAX side of a whole turn is one jitted, vmapped call of the
generic ``step`` (JaxMARL's, which dispatches on the phase) scanned over
the turn's two phases.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import craft_env
from craft_env.core import game as core_game
from craft_env.core import random as core_random
from craft_env.core.encoding import VALUE_TO_CODE_INDEX
from craft_env.core.generator import generate_array
from craft_env.core.metrics import METRIC_NAMES, fill_scores
from craft_env.core.starts import fill_start
from craft_env.jax import exact, make, u64
from craft_env.jax.game import PHASE_BUILDER, PHASE_DIRECTORS, State

BATCH = 2048
INT_INFOS = ("reason", "layer", "distance", "optimal", "remove_prescribed", "remove_attempted", "followed_oracle",
             "completed", "turn", "episode", "legal")


class Pair:
    """A ``vector_env`` and the JAX env of one configuration, with the JAX side compiled once per size."""

    compiled: dict = {}

    def __init__(self, num_envs: int, **config):
        self.venv = craft_env.vector_env(num_envs, **config)
        self.env = make(**config)
        self.num_envs = num_envs
        key = (self.env.n, self.env.height, self.env.seats)
        if key not in Pair.compiled:
            Pair.compiled[key] = _compile(self.env)
        self.reset_fn, self.directors_fn, self.builder_fn, self.view_fn, self.score_fn = Pair.compiled[key]

    def reset(self, seed: int):
        obs, _ = self.venv.reset(seed=seed)
        base = u64.from_int64(np.int64(seed))
        self.state = self.reset_fn(self.env.params, self.env.targets, base, self.num_envs)
        return obs


def _compile(env):
    """The jitted reset and phase functions of ``env``'s size (the configuration an argument), each
    returning the step's outputs with the masks and the global state after it."""

    def reset(params, targets, base, num_envs):
        return env.with_params(params, targets).reset_seeded(base, num_envs)[1]

    def view(e, states):
        return jax.vmap(e.get_obs)(states), jax.vmap(e.get_avail_actions)(states), jax.vmap(e.world_state)(states)

    def directors(params, states, intents):
        e = env.with_params(params)
        obs, states, rewards, dones, infos = e.step_directors_batch(states, intents)
        return states, (*view(e, states), rewards["builder"], dones, infos)

    def builder(params, states, actions):
        e = env.with_params(params)
        obs, states, rewards, dones, infos = e.step_builder_batch(states, actions)
        return states, (*view(e, states), rewards["builder"], dones, infos)

    def initial(params, states):
        return view(env.with_params(params), states)

    def scored(params, states, actions):
        """``move_outcome``: the reward, done and the world state after the move, played on a copy."""
        e = env.with_params(params)

        def one(state, action):
            reward, after, done = e.move_outcome(state, action)
            return reward, done, e.world_state(after)

        return jax.vmap(one)(states, actions)

    return (jax.jit(reset, static_argnums=3), jax.jit(directors), jax.jit(builder), jax.jit(initial),
            jax.jit(scored))


def _equal(what: str, numba_value, jax_value) -> None:
    a, b = np.asarray(numba_value), np.asarray(jax_value)
    assert a.shape == b.shape, f"{what}: shape {a.shape} (numba) != {b.shape} (jax)"
    if not np.array_equal(a, b):
        where = np.argwhere(a != b)[:3].tolist()
        raise AssertionError(f"{what}: differs at {where}: numba {a[tuple(np.array(where).T)]} jax {b[tuple(np.array(where).T)]}")


def _pick(rng, mask: np.ndarray, wild: float, low: int, high: int) -> np.ndarray:
    """Per row a uniformly random allowed id, or (probability ``wild``) any id in ``low .. high-1``."""
    counts = mask.sum(1)
    r = (rng.random(len(mask)) * counts).astype(np.int64)
    allowed = np.argmax(np.cumsum(mask, 1) > r[:, None], axis=1)
    return np.where(rng.random(len(mask)) < wild, rng.integers(low, high, len(mask)), allowed)


def _actions(pair: Pair, rng, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """This turn's director intents ``(B, S)`` and builder actions ``(B,)`` under ``policy``."""
    venv = pair.venv
    director_masks = venv._director_masks.astype(bool)
    seats = director_masks.shape[1]
    if policy == "scripted":
        intents = venv.scripted_intents().copy()
    else:
        flat = director_masks.reshape(-1, director_masks.shape[2])
        intents = _pick(rng, flat, 0.1, -3, venv.num_intents + 40).reshape(-1, seats)
    builder_mask = venv._builder_mask.astype(bool)
    if policy == "scripted":  # the oracle builder: an optimal move when there is one, else the no-op
        optimal = venv.optimal_masks.astype(bool)
        actions = np.where(optimal.any(1), _pick(rng, optimal | ~optimal.any(1, keepdims=True), 0.0, 0, 1), venv.noop)
    else:
        actions = _pick(rng, builder_mask, 0.15, -2, venv.num_actions + 3)
    return intents, actions


def play(pair: Pair, seed: int, turns: int, policy: str = "random") -> int:
    """Play ``turns`` turns on both sides from ``reset(seed=seed)``, comparing after every step; returns the
    episodes that ended."""
    rng = np.random.default_rng(seed)
    vobs = pair.reset(seed)
    venv = pair.venv
    obs, masks, world = pair.view_fn(pair.env.params, pair.state)
    _compare_view_arrays(pair, vobs, obs, masks, world, "reset")
    _equal("reset: boards", venv.boards, pair.state.board)
    _equal("reset: targets", venv.targets, pair.state.target)
    _equal("reset: episode seeds", venv.episode_seeds, u64.to_int64(pair.state.seed))
    ended = 0
    for turn in range(turns):
        intents, actions = _actions(pair, rng, policy)
        params = pair.env.params
        pair.state, first = pair.directors_fn(params, pair.state, jnp.asarray(intents, jnp.int32))
        state_after_directors = pair.state
        scored = pair.score_fn(params, pair.state, jnp.asarray(actions, jnp.int32))
        scored = jax.tree_util.tree_map(np.asarray, scored)
        pair.state, second = pair.builder_fn(params, pair.state, jnp.asarray(actions, jnp.int32))
        first, second = jax.tree_util.tree_map(np.asarray, (first, second))
        # The director phase.
        vobs, vrewards, vterm, vtrunc, vinfos = venv.step_directors(intents)
        obs, masks, world, rewards, dones, infos = first
        where = f"turn {turn}, directors"
        _equal(f"{where}: intents", vinfos["intent"], infos["intent"])
        _equal(f"{where}: intent_legal", vinfos["intent_legal"], infos["intent_legal"])
        _equal(f"{where}: rewards", vrewards, rewards)
        _equal(f"{where}: dones", vterm | vtrunc, dones["__all__"])
        _compare_view_arrays(pair, vobs, obs, masks, world, where)
        _equal(f"{where}: spoken", venv.spoken_intents, state_after_directors.spoken)
        # The builder phase.
        vobs, vrewards, vterm, vtrunc, vinfos = venv.step_builder(actions)
        obs, masks, world, rewards, dones, infos = second
        where = f"turn {turn}, builder"
        _equal(f"{where}: rewards", vrewards, rewards)
        _equal(f"{where}: move_outcome's reward (the move played on a copy)", vrewards, scored[0])
        _equal(f"{where}: move_outcome's done", vterm | vtrunc, scored[1])
        going_on = ~(vterm | vtrunc)
        _equal(f"{where}: move_outcome's world state, the next turn's", world[going_on], scored[2][going_on])
        _equal(f"{where}: terminations", vterm, infos["terminated"])
        _equal(f"{where}: truncations", vtrunc, infos["truncated"])
        _equal(f"{where}: dones", vterm | vtrunc, dones["__all__"])
        for name in INT_INFOS:
            _equal(f"{where}: {name}", np.asarray(vinfos[name]).astype(np.int64), infos[name].astype(np.int64))
        for name in METRIC_NAMES:
            _equal(f"{where}: {name}", np.asarray(vinfos[name]).astype(np.float32), infos[name])
        _equal(f"{where}: episode_seed", vinfos["episode_seed"],
               u64.to_int64(u64.U64(infos["episode_seed_hi"], infos["episode_seed_lo"])))
        _compare_view_arrays(pair, vobs, obs, masks, world, where)
        _equal(f"{where}: boards", venv.boards, pair.state.board)
        _equal(f"{where}: spoken", venv.spoken_intents, pair.state.spoken)
        _equal(f"{where}: orders", venv.director_orders, pair.state.order)
        ended += int((vterm | vtrunc).sum())
    return ended


def _compare_view_arrays(pair: Pair, vobs, obs, masks, world, where: str) -> None:
    env, venv = pair.env, pair.venv
    _equal(f"{where}: director observations", vobs["directors"]["observation"],
           np.stack([obs[a] for a in env.directors], 1))
    _equal(f"{where}: builder observation", vobs["builder"]["observation"], obs["builder"])
    _equal(f"{where}: director masks", vobs["directors"]["action_mask"].astype(bool),
           np.stack([masks[a] for a in env.directors], 1))
    _equal(f"{where}: builder mask", vobs["builder"]["action_mask"].astype(bool), masks["builder"])
    _equal(f"{where}: state()", venv.state(), world)


#: Configurations of the default size (one compile for all), each with its policy and seed.
CONFIGS = [
    ({}, "random", 11, 21),
    ({"protocol": "paper", "oracle_n": 3, "reward": "distance", "start": "first_layer", "max_turns": 5},
     "random", 12, 8),
    ({"oracle_n": 2, "reward": "sparse", "start": "wall_D2", "director_order": "fixed", "max_turns": 6},
     "scripted", 13, 8),
    ({"protocol": "paper", "start": "first_two_layers", "max_turns": 6}, "scripted", 14, 8),
    ({"start": "wall_D1", "max_turns": 4, "director_order": ("D3", "D1", "D2"), "director_sees": "walls",
      "oracle_n": 1}, "random", 15, 8),
]


@pytest.mark.parametrize(("config", "policy", "seed", "turns"), CONFIGS, ids=[f"config{i}" for i in range(len(CONFIGS))])
def test_jax_game_equals_vector_env_after_every_step(config, policy, seed, turns):
    """Defaults, both protocols, every reward, oracle_n on and off, the layer and wall starts, fixed and
    given speaking orders, directors who see walls only; random (and adversarial) or scripted and oracle play."""
    pair = Pair(BATCH, **config)
    ended = play(pair, seed, turns, policy)
    assert ended > 0  # episodes ended (completed or truncated) and restarted on both sides


def test_structures_bank_and_protocol_paper_speaker_draws():
    """Targets from a bank (the bundled set, cycled over the envs as ``vector_env`` does), protocol paper's
    speaking slots drawn with replacement (a seat may speak twice or not at all)."""
    pair = Pair(BATCH, structures=list(range(20)), protocol="paper", oracle_n=4, max_turns=5)
    play(pair, 21, 8, "random")
    orders = np.asarray(pair.state.order)
    assert (np.sort(orders, 1)[:, 1:] == np.sort(orders, 1)[:, :-1]).any()  # some seat spoke twice


def _vector_to_state(venv, phase: int) -> State:
    """A ``vector_env``'s episodes as a batched JAX ``State`` (every field from its arrays)."""
    info = venv._info
    table = exact.ratio_table(venv.n, venv.height)
    progress = jax.vmap(lambda b, t: exact.progress(b, t, jnp.asarray(VALUE_TO_CODE_INDEX.astype(np.int32)), table))(
        jnp.asarray(venv.boards), jnp.asarray(venv.targets))
    return State(
        board=jnp.asarray(venv.boards), target=jnp.asarray(venv.targets),
        env_seed=u64.from_int64(info["env_seed"]), seed=u64.from_int64(info["seed"]),
        episode=jnp.asarray(info["episode"], jnp.int32), turn=jnp.asarray(info["turn"], jnp.int32),
        distance=jnp.asarray(info["distance"], jnp.int32), progress=progress,
        spoken=jnp.asarray(venv.spoken_intents, jnp.int32), order=jnp.asarray(venv.director_orders, jnp.int32),
        optimal=jnp.asarray(venv.optimal_masks.astype(bool)), builder_mask=jnp.asarray(venv._builder_mask.astype(bool)),
        phase=jnp.full(venv.num_envs, phase, jnp.int32),
    )


def _state_to_vector(state: State, venv) -> None:
    """Write a batched JAX ``State`` at a turn's start into ``venv``'s rows (then the core rebuilds the turn)."""
    np.copyto(venv._boards, np.asarray(state.board))
    np.copyto(venv._targets, np.asarray(state.target))
    info = venv._info
    info["env_seed"] = u64.to_int64(state.env_seed)
    info["seed"] = u64.to_int64(state.seed)
    info["episode"] = np.asarray(state.episode)
    info["turn"] = np.asarray(state.turn)
    for b in range(venv.num_envs):
        core_game.resync_episode(venv._config_record, venv._episode_record, b)


def test_states_convert_both_ways():
    """vector_env -> State equals the JAX reset field for field; a JAX State played on, written into a fresh
    vector_env, and both continued with the same actions stay equal."""
    pair = Pair(BATCH, protocol="paper", oracle_n=2, start="first_layer")
    play(pair, 31, 5, "random")
    converted = _vector_to_state(pair.venv, PHASE_DIRECTORS)
    for name, mine, theirs in zip(State._fields, pair.state, converted):
        for a, b in zip(jax.tree_util.tree_leaves(mine), jax.tree_util.tree_leaves(theirs)):
            _equal(f"converted {name}", b, a)
    fresh = Pair(BATCH, protocol="paper", oracle_n=2, start="first_layer")
    fresh.reset(99)
    _state_to_vector(pair.state, fresh.venv)
    fresh.venv._phase = "directors"
    fresh.state = pair.state
    vobs = {"directors": {"observation": fresh.venv._director_obs, "action_mask": fresh.venv._director_masks},
            "builder": {"observation": fresh.venv._builder_obs, "action_mask": fresh.venv._idle_builder_mask}}
    obs, masks, world = fresh.view_fn(fresh.env.params, fresh.state)
    _compare_view_arrays(fresh, vobs, obs, masks, world, "written back")
    assert int(np.asarray(pair.state.phase).max()) == PHASE_DIRECTORS < PHASE_BUILDER


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1), st.sampled_from(range(6)))
def test_exact_scores_and_reward_equal_the_float64_ones(target_seed, board_seed, start):
    """The float32 metrics and the progress_delta reward are the numba float64 ones rounded once."""
    n, h = 3, 3
    target = generate_array(target_seed, n, h)
    other = generate_array(board_seed, n, h)
    walls = np.array([[0, 3, 6], [2, 1, 0], [8, 5, 2]], np.int16)
    board = np.zeros_like(other)
    fill_start(other, n, start, walls, np.zeros(n * n, np.int8), board)
    want = np.empty(5)
    fill_scores(board, target, n, VALUE_TO_CODE_INDEX, want)
    before = np.empty(5)
    empty = np.zeros_like(board)
    fill_scores(empty, target, n, VALUE_TO_CODE_INDEX, before)
    scores, progress = _scores_fn(board, target)
    _, progress_before = _scores_fn(empty, target)
    _equal("scores", want.astype(np.float32), scores)
    reward = _delta_fn(progress, progress_before)
    _equal("progress_delta", np.float32(want[3] - before[3]), reward)


_scores_fn = jax.jit(lambda b, t: exact.scores(b, t, jnp.asarray(VALUE_TO_CODE_INDEX.astype(np.int32)),
                                                exact.ratio_table(3, 3)))
_delta_fn = jax.jit(exact.progress_delta)


def test_keywords_vector_env_refuses_are_refused_by_name():
    for keyword, value in (("message_mode", "text"), ("text_observations", True), ("render_mode", "human"),
                           ("render_target", True), ("max_cycles", 3), ("copy", "yes")):
        with pytest.raises(ValueError, match=keyword):
            make(**{keyword: value})
    with pytest.raises(ValueError, match="reward"):
        make(reward="shaped")
    assert make(copy=True).agents == ["director_1", "director_2", "director_3", "builder"]


@numba.njit  # not cached: a test leaves no files behind
def _numba_draws(seed, stream, index, bounds, out):
    state = np.uint64(core_random.derive_seed(seed, stream, index))
    for k in range(bounds.shape[0]):
        state, out[k] = core_random.draw(state, bounds[k])


_jax_draws = jax.jit(lambda seed, stream_index, bounds: jax.lax.scan(
    lambda state, bound: u64.draw(state, bound), u64.derive_seed(seed, 3, stream_index), bounds)[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**63 - 1), st.integers(0, 10**6), st.lists(st.integers(1, 5000), min_size=16, max_size=16))
def test_splitmix_streams_draw_the_cores_numbers(seed, index, bounds):
    """``u64.derive_seed`` and ``u64.draw`` on uint32 pairs give ``core.random``'s uint64 draws."""
    bounds = np.array(bounds, np.int64)
    want = np.empty(16, np.int64)
    _numba_draws(np.int64(seed), core_random.STREAM_CANDIDATES, np.int64(index), bounds, want)
    got = _jax_draws(u64.from_int64(np.int64(seed)), jnp.int32(index), jnp.asarray(bounds, jnp.uint32))
    _equal("draws", want, np.asarray(got).astype(np.int64))
