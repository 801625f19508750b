"""The JAX game through JaxMARL's interface: ``MultiAgentEnv``'s methods, the generic ``step``, a logged loop.

jaxmarl itself is not a test dependency (``docs/jax.md``, "JaxMARL": it
pulls in flax, orbax, gymnax and every JaxMARL environment), so the
interface is held against the signatures of jaxmarl 0.2.0's
``MultiAgentEnv``, and the generic ``step`` (all agents act every step,
``dones["__all__"]``, auto-reset) is played under ``vmap`` inside one
jitted ``lax.scan`` that keeps episode returns the way JaxMARL's
``LogWrapper`` does, against ``vector_env``.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import craft_env
from craft_env.jax import make

#: jaxmarl 0.2.0 ``MultiAgentEnv``: method -> its parameters after ``self``.
MULTI_AGENT_ENV = {
    "reset": ["key"],
    "step": ["key", "state", "actions", "reset_state"],
    "get_obs": ["state"],
    "get_avail_actions": ["state"],
    "observation_space": ["agent"],
    "action_space": ["agent"],
}


def test_the_env_has_jaxmarls_multi_agent_env_interface():
    env = make(seats=("D1", "D3"))
    for method, parameters in MULTI_AGENT_ENV.items():
        assert list(inspect.signature(getattr(env, method)).parameters) == parameters, method
    assert inspect.signature(env.step).parameters["reset_state"].default is None
    assert env.agents == ["director_1", "director_3", "builder"] and env.num_agents == 3
    assert env.agent_classes == {"directors": ["director_1", "director_3"], "builder": ["builder"]}
    assert isinstance(env.name, str)
    assert env.action_space("builder").n == env.num_actions and env.action_space("director_3").n == env.num_intents
    assert env.observation_space("builder").shape == (env.builder_dim,)
    assert set(env.observation_spaces) == set(env.action_spaces) == set(env.agents)


def test_reset_from_keys_under_vmap():
    env = make(structures=[0, 5, 7])  # a bank: each key draws an entry
    obs, states = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(3), 8))
    masks = jax.vmap(env.get_avail_actions)(states)
    assert obs["builder"].shape == (8, env.builder_dim) and obs["director_2"].shape == (8, env.director_dim)
    assert not np.asarray(masks["builder"])[:, :env.noop].any()  # the directors move first: builder only no-op
    assert np.asarray(masks["director_1"]).sum(1).min() > 1
    assert len({int(x) for x in np.asarray(states.seed.lo)}) == 8  # each key its own episode
    bank = np.asarray(env.targets)
    assert all(any((t == b).all() for b in bank) for t in np.asarray(states.target))


def test_generic_step_with_episode_returns_equals_vector_env():
    """``vmap(env.step)`` in a jitted scan (every agent acts every step; the idle role's no-op), returns
    kept like ``LogWrapper`` (running return, zeroed at ``dones["__all__"]``), against ``vector_env``, on a
    4x4x2 board with seats D0, D2, D3: every observation, mask, reward, done and the global state."""
    batch, turns, seed = 128, 14, 5
    # Another size and seating than test_jax_game.py's (its own compile either way).
    config = {"protocol": "paper", "oracle_n": 3, "max_turns": 5, "n": 4, "height": 2, "seats": ("D0", "D2", "D3")}
    env = make(**config)
    venv = craft_env.vector_env(batch, **config)
    venv.reset(seed=seed)
    _, states = env.reset_batch(seed, batch)
    rng = np.random.default_rng(seed)
    intents = rng.integers(-1, env.num_intents, (turns, batch, len(env.directors)))
    builder = rng.integers(-1, env.num_actions + 1, (turns, batch))

    def phase(carry, actions):
        states, running, returned = carry
        obs, states, rewards, dones, infos = jax.vmap(env.step)(jax.random.split(jax.random.key(0), batch), states,
                                                                actions)
        running = running + rewards["builder"]
        done = dones["__all__"]
        returned = jnp.where(done, running, returned)
        running = jnp.where(done, 0.0, running)
        masks = jax.vmap(env.get_avail_actions)(states)
        return (states, running, returned), (obs, masks, jax.vmap(env.world_state)(states), rewards["builder"],
                                             done, returned)

    steps = []
    for t in range(turns):
        steps.append({**{a: intents[t, :, k] for k, a in enumerate(env.directors)}, "builder": np.full(batch, env.noop)})
        steps.append({**{a: np.zeros(batch, np.int64) for a in env.directors}, "builder": builder[t]})
    stacked = {a: jnp.asarray(np.stack([s[a] for s in steps]), jnp.int32) for a in env.agents}
    zeros = jnp.zeros(batch, jnp.float32)
    _, outputs = jax.jit(lambda s, a: jax.lax.scan(phase, (s, zeros, zeros), a))(states, stacked)
    obs, masks, world, rewards, dones, returned = jax.tree_util.tree_map(np.asarray, outputs)
    running = np.zeros(batch, np.float32)
    last = np.zeros(batch, np.float32)
    for t in range(turns):
        for p, actions in ((2 * t, intents[t]), (2 * t + 1, builder[t])):
            vobs, r, term, trunc, _ = venv.step(actions)
            np.testing.assert_array_equal(vobs["builder"]["observation"], obs["builder"][p], err_msg=f"step {p}")
            np.testing.assert_array_equal(vobs["builder"]["action_mask"].astype(bool), masks["builder"][p])
            for k, agent in enumerate(env.directors):
                np.testing.assert_array_equal(vobs["directors"]["observation"][:, k], obs[agent][p], err_msg=agent)
                np.testing.assert_array_equal(vobs["directors"]["action_mask"][:, k].astype(bool), masks[agent][p])
            np.testing.assert_array_equal(venv.state(), world[p], err_msg=f"step {p}")
            np.testing.assert_array_equal(r, np.asarray(rewards[p]), err_msg=f"step {p}")
            np.testing.assert_array_equal(term | trunc, np.asarray(dones[p]), err_msg=f"step {p}")
            running = running + r
            last = np.where(term | trunc, running, last)
            running = np.where(term | trunc, 0.0, running)
            np.testing.assert_array_equal(last, np.asarray(returned[p]), err_msg=f"step {p}")
    assert np.asarray(dones).any()
