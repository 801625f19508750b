"""``vector_env`` plays exactly the game of ``parallel_env()``, batched.

The central test runs a vector env and one ``parallel_env()`` per batch row
side by side from the same seeds, with the same actions (scripted, random,
out-of-range, oracle, illegal), and compares every observation, mask,
reward, termination, truncation and the step's info after every parallel
step, through auto-resets, under a range of configurations.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

import craft_env
from craft_env.core import batch
from craft_env.core.generator import generate_array
from craft_env.core.random import STREAM_TARGET, STREAM_VECTOR_ENV, STREAM_VECTOR_EPISODE, derive_seed
from craft_env.core.scripted import scripted_intent
from craft_env.core.views import seat_cell_indices
from craft_env.envs.craft import BUILDER, DIRECTORS
from craft_env.envs.vector import episode_seed

METRICS = ("iou", "completion", "position_accuracy", "progress", "voxel_iou")
CONFIGS = [
    {},
    {"oracle_n": 5},
    {"director_sees": "walls", "start": "first_layer", "reward": "distance"},
    {"director_order": "fixed", "start": "wall_D2", "reward": "sparse", "max_turns": 7},
    {"structure": 3, "oracle_n": 2, "director_order": ("D3", "D1", "D2")},
    {"n": 4, "height": 2, "start": "first_two_layers", "max_turns": 12},
    {"n": 2, "height": 5, "start": "wall_D3", "max_turns": 5, "director_sees": "walls"},
]


def assert_same_observations(vec, obs, parallel_obs, where):
    for i, pobs in enumerate(parallel_obs):
        for k, agent in enumerate(DIRECTORS):
            assert np.array_equal(obs["directors"]["observation"][i, k], pobs[agent]["observation"]), (where, i, agent)
            assert np.array_equal(obs["directors"]["action_mask"][i, k], pobs[agent]["action_mask"]), (where, i, agent)
        assert np.array_equal(obs["builder"]["observation"][i], pobs[BUILDER]["observation"]), (where, i)
        assert np.array_equal(obs["builder"]["action_mask"][i], pobs[BUILDER]["action_mask"]), (where, i)
        assert obs["builder"]["action_mask"].dtype == np.int8 and obs["directors"]["observation"].dtype == np.float32


def builder_actions(vec, rng, turn):
    """A mix of random legal, oracle, no-op and out-of-range/illegal builder actions."""
    size = vec.num_envs
    roll = rng.random()
    if roll < 0.45:
        return vec.sample_actions(turn)
    if roll < 0.8:
        optimal = vec.optimal_masks
        return np.array([np.flatnonzero(row)[0] if row.any() else vec.noop for row in optimal])
    return rng.integers(-2, vec.num_actions + 2, size)


def director_intents(vec, rng, turn):
    roll = rng.random()
    if roll < 0.5:
        return vec.scripted_intents()
    if roll < 0.8:
        return vec.sample_actions(turn)
    return rng.integers(-1, vec.num_intents + 1, (vec.num_envs, 3))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_vector_env_equals_parallel_env(config):
    size, turns = 3, 45
    vec = craft_env.vector_env(size, **config)
    obs, infos = vec.reset(seed=17)
    assert np.array_equal(infos["episode_seed"], vec.episode_seeds)
    envs = [craft_env.parallel_env(**config) for _ in range(size)]
    parallel_obs = [env.reset(seed=int(seed))[0] for env, seed in zip(envs, vec.episode_seeds)]
    assert_same_observations(vec, obs, parallel_obs, "reset")
    rng = np.random.default_rng(5)
    ended = 0
    for turn in range(turns):
        states = vec.state()
        for i, env in enumerate(envs):
            assert np.array_equal(vec.targets[i], env.game.target)
            assert np.array_equal(vec.boards[i], env.game.board)
            assert vec.director_orders[i].tolist() == env.game.order.tolist()
            assert np.array_equal(states[i], env.state())
        intents = director_intents(vec, rng, turn)
        obs, rewards, terminations, truncations, infos = vec.step(intents)
        assert not rewards.any() and not terminations.any() and not truncations.any()
        steps = [env.step({a: int(intents[i, k]) for k, a in enumerate(DIRECTORS)} | {BUILDER: 0})
                 for i, env in enumerate(envs)]
        assert np.array_equal(vec.state(), np.stack([env.state() for env in envs]))  # with the spoken intents
        assert_same_observations(vec, obs, [s[0] for s in steps], ("directors", turn))
        for i, step in enumerate(steps):
            for k, agent in enumerate(DIRECTORS):
                assert infos["intent"][i, k] == step[4][agent]["intent"]
                assert infos["intent_legal"][i, k] == step[4][agent]["legal"]

        actions = builder_actions(vec, rng, turn)
        obs, rewards, terminations, truncations, infos = vec.step(actions)
        assert rewards.dtype == np.float32 and terminations.dtype == bool and truncations.dtype == bool
        after = []
        for i, env in enumerate(envs):
            seed_before = env.game.seed
            p_obs, p_rewards, p_terms, p_truncs, p_infos = env.step(
                {a: 0 for a in DIRECTORS} | {BUILDER: int(actions[i])}
            )
            assert rewards[i] == np.float32(p_rewards[BUILDER]), (turn, i)
            assert terminations[i] == p_terms[BUILDER] and truncations[i] == p_truncs[BUILDER]
            info = p_infos[BUILDER]
            assert infos["distance"][i] == info["distance"]
            assert bool(infos["legal"][i]) == info["legal"]
            assert bool(infos["optimal"][i]) == info["optimal"]
            assert bool(infos["followed_oracle"][i]) == info["followed_oracle"]
            assert bool(infos["remove_prescribed"][i]) == info["remove_prescribed"]
            assert bool(infos["remove_attempted"][i]) == info["remove_attempted"]
            assert infos["turn"][i] == info["turn"]
            assert infos["episode_seed"][i] == seed_before
            for name in METRICS:
                assert infos[name][i] == info["metrics"][name]
            if terminations[i] or truncations[i]:
                ended += 1
                k = int(vec.episode_counts[i])
                assert infos["episode"][i] == k - 1
                assert vec.episode_seeds[i] == vec.episode_seed(i, k) == episode_seed(17, i, k)
                p_obs = env.reset(seed=int(vec.episode_seeds[i]))[0]
            after.append(p_obs)
        assert_same_observations(vec, obs, after, ("builder", turn))
    assert ended > 0


def test_targets_come_from_the_episode_seed():
    vec = craft_env.vector_env(5)
    vec.reset(seed=99)
    for i in range(5):
        seed = episode_seed(99, i, 0)
        assert np.array_equal(vec.targets[i], generate_array(derive_seed(seed, STREAM_TARGET, 0), 3, 3))


def run_episodes(vec, seed, turns):
    """Play ``turns`` turns with scripted directors and a seeded random builder; return everything seen."""
    obs, _ = vec.reset(seed=seed)
    seen = [obs["builder"]["observation"].copy()]
    for turn in range(turns):
        obs, *_ = vec.step(vec.scripted_intents())
        obs, rewards, terminations, truncations, _ = vec.step(vec.sample_actions(turn))
        seen += [obs["builder"]["observation"].copy(), rewards.copy(), terminations.copy(), truncations.copy(),
                 vec.episode_seeds, vec.targets.copy()]
    return seen


def test_seeding_and_auto_reset_are_reproducible():
    first = run_episodes(craft_env.vector_env(6, max_turns=4), 2024, 13)
    second = run_episodes(craft_env.vector_env(6, max_turns=4), 2024, 13)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    third = run_episodes(craft_env.vector_env(6, max_turns=4), 2025, 13)
    assert not np.array_equal(first[-1], third[-1])


def test_env_i_does_not_depend_on_the_batch_size():
    small, large = craft_env.vector_env(2, max_turns=3), craft_env.vector_env(7, max_turns=3)
    small.reset(seed=8)
    large.reset(seed=8)
    for turn in range(8):
        for vec in (small, large):
            intents = vec.scripted_intents()
            vec.step(intents)
            vec.step(np.array([np.flatnonzero(row)[0] for row in vec.optimal_masks]))
        assert np.array_equal(small.boards, large.boards[:2])
        assert np.array_equal(small.episode_seeds, large.episode_seeds[:2])
    assert (small.episode_counts > 0).all()


def test_episode_seed_formula():
    assert episode_seed(5, 3, 2) == derive_seed(derive_seed(5, STREAM_VECTOR_ENV, 3),
                                                STREAM_VECTOR_EPISODE, 2)
    vec = craft_env.vector_env(4)
    vec.reset(seed=5)
    assert vec.episode_seeds.tolist() == [episode_seed(5, i, 0) for i in range(4)]
    assert vec.base_seed == 5


def test_parallel_and_serial_builder_drivers_agree(monkeypatch):
    def trajectory():
        vec = craft_env.vector_env(80, oracle_n=3, max_turns=6)
        seen = run_episodes(vec, 31, 9)
        return seen + [vec._director_obs.copy(), vec._director_masks.copy(), vec._st.copy()]

    monkeypatch.setattr(batch, "PARALLEL_MIN_BATCH", dict(batch.PARALLEL_MIN_BATCH, builder=10**9))
    serial = trajectory()
    monkeypatch.setattr(batch, "PARALLEL_MIN_BATCH", dict(batch.PARALLEL_MIN_BATCH, builder=1))
    monkeypatch.setattr(batch, "use_parallel", lambda name, size: True)
    parallel = trajectory()
    assert all(np.array_equal(a, b) for a, b in zip(serial, parallel))


def test_scripted_intents_are_the_core_scripted_directors():
    vec = craft_env.vector_env(16, director_sees="walls")
    obs, _ = vec.reset(seed=4)
    walls = [seat_cell_indices(seat, 3) for seat in ("D1", "D2", "D3")]
    for turn in range(12):
        intents = vec.scripted_intents()
        for i in range(16):
            for s in range(3):
                mask = obs["directors"]["action_mask"][i, s]
                assert intents[i, s] == scripted_intent(vec.boards[i], vec.targets[i], 3, walls[s], mask)
                assert mask[intents[i, s]]
        obs, *_ = vec.step(intents)
        obs, *_ = vec.step(vec.sample_actions(turn))


def test_scripted_intents_match_the_scripted_agent():
    scripted = pytest.importorskip("craft_env.agents.scripted")
    director = scripted.ScriptedDirector()
    vec = craft_env.vector_env(8)
    obs, _ = vec.reset(seed=12)
    for turn in range(10):
        intents = vec.scripted_intents()
        for i in range(8):
            for s, seat in enumerate(("D1", "D2", "D3")):
                chosen, _ = director.choose(obs["directors"]["observation"][i, s],
                                            obs["directors"]["action_mask"][i, s], seat, 3, 3)
                assert chosen == intents[i, s]
        obs, *_ = vec.step(intents)
        obs, *_ = vec.step(np.array([np.flatnonzero(row)[0] for row in vec.optimal_masks]))


def test_per_env_structures():
    bundled = craft_env.load_eval_set()
    vec = craft_env.vector_env(5, structures=[0, bundled[4]])
    vec.reset(seed=0)
    for i in range(5):
        assert np.array_equal(vec.targets[i], bundled[(0, 4)[i % 2]].array)


def test_observations_are_read_only_views_unless_copied():
    vec = craft_env.vector_env(3)
    obs, _ = vec.reset(seed=0)
    with pytest.raises(ValueError):
        obs["builder"]["observation"][0, 0] = 1.0
    with pytest.raises(ValueError):
        obs["directors"]["action_mask"][0, 0, 0] = 0
    before = obs["builder"]["observation"].copy()
    vec.step(vec.scripted_intents())
    assert not np.array_equal(before, obs["builder"]["observation"])  # the view follows the env
    copied = craft_env.vector_env(3, copy=True)
    obs, _ = copied.reset(seed=0)
    obs["builder"]["observation"][0, 0] = 5.0
    assert copied._builder_obs[0, 0] != 5.0


def test_masks_follow_the_phase():
    vec = craft_env.vector_env(4)
    obs, _ = vec.reset(seed=1)
    assert vec.phase == "directors"
    assert (obs["builder"]["action_mask"].sum(axis=1) == 1).all() and obs["builder"]["action_mask"][:, vec.noop].all()
    obs, *_ = vec.step(vec.scripted_intents())
    assert vec.phase == "builder"
    assert (obs["directors"]["action_mask"].sum(axis=2) == 1).all() and obs["directors"]["action_mask"][..., 0].all()
    assert (obs["builder"]["action_mask"].sum(axis=1) > 1).all()


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"message_mode": "text"}, "message_mode"),
        ({"text_observations": True}, "text_observations"),
        ({"render_mode": "ansi"}, "render_mode"),
        ({"render_target": True}, "render_target"),
        ({"max_turns": 0}, "max_turns"),
        ({"start": "nowhere"}, "start"),
        ({"structure": 999}, "structure"),
        ({"structures": [0, 1], "structure": 2}, "structures"),
        ({"structures": []}, "structures"),
        ({"copy": "yes"}, "copy"),
    ],
)
def test_bad_config_is_a_clear_error(kwargs, field):
    with pytest.raises(ValueError, match=field):
        craft_env.vector_env(2, **kwargs)


@pytest.mark.parametrize("num_envs", [0, -1, 2.5, True, "4"])
def test_bad_num_envs(num_envs):
    with pytest.raises(ValueError, match="num_envs"):
        craft_env.vector_env(num_envs)


def test_phase_errors():
    vec = craft_env.vector_env(2)
    with pytest.raises(ValueError, match="reset"):
        vec.step(np.zeros((2, 3), np.int64))
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="directors"):
        vec.step_builder(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="shape"):
        vec.step(np.zeros(2, np.int64))
    vec.step({"director_1": np.zeros(2, np.int64)})
    with pytest.raises(ValueError, match="builder"):
        vec.scripted_intents()
    _, rewards, *_ = vec.step({"builder": np.full(2, vec.noop)})
    assert rewards.shape == (2,)


def test_builder_phase_takes_the_prange_driver_from_its_threshold_on_any_thread_count():
    threads = numba.get_num_threads()
    try:
        for count in {1, threads}:
            numba.set_num_threads(count)
            smallest = batch.PARALLEL_MIN_BATCH["builder"]
            assert batch.builder_driver(smallest) is batch.game_builder_parallel
            assert batch.builder_driver(smallest - 1) is batch.game_builder_serial
            assert batch.use_parallel("legal", 1 << 20) == (count > 1)
    finally:
        numba.set_num_threads(threads)


def test_a_step_out_of_phase_names_the_phase():
    vec = craft_env.vector_env(2)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"^step_builder: it is the directors phase; call step_directors\(\) first$"):
        vec.step_builder(np.zeros(2, np.int64))
