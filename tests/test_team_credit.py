"""The team trainer's counterfactual director credit (``craft_env.jax.team.ppo``,
``director_credit="counterfactual"``): the replays of each turn's builder phase against a slow model on
the mock game, the credit's advantages, its value of later turns and its checks.

Apart from ``tests/test_team_training.py`` so that ``pytest -n 2 --dist loadfile`` (README.md) may give
the two files to two workers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

import jax.numpy as jnp

from craft_env.jax.team.config import TeamConfig
from craft_env.jax.team.mock import mock_game


def _listener_rewards(intents: np.ndarray, target: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """The mock game's reward of the listener's move (``policy.listener_logits``), slowly: the first seat
    whose intent names a move (intent ``i > 0``: move ``i - 1``) is followed, else the ``fallback`` draw."""
    rewards = np.zeros(intents.shape[:-1], np.float32)
    for index in np.ndindex(*intents.shape[:-1]):
        env = index[-1]
        named = [int(i) - 1 for i in intents[index] if i > 0]
        move = named[0] if named else int(fallback[env])
        rewards[index] = float(move == int(target[env]))
    return rewards


def test_counterfactual_credit_replays_each_directors_alternatives_with_the_builders_own_draw():
    """``director_credit="counterfactual"``: a director's baseline is the mean reward of the builder's move
    when that director alone says each of ``counterfactuals`` intents drawn from its policy, the builder
    drawing with the turn's key; checked against a slow model of the listener on the mock game."""
    from craft_env.jax.team.ppo import Team

    game, envs, draws = mock_game(), 64, 5
    cfg = TeamConfig(num_envs=envs, rollout=2, updates=2, hidden=16, memory=1, minibatches=1, seeds=(0,),
                     builder="listener", director_credit="counterfactual", counterfactuals=draws)
    team = Team(game, cfg)
    runner = team.init(jax.random.PRNGKey(0))
    k_logits, k_said, k_steps, k_builder, k_draws = jax.random.split(jax.random.PRNGKey(1), 5)
    logits = 2.0 * jax.random.normal(k_logits, (envs, 3, game.num_intents))
    logits = logits.at[..., 0].add(3.0)  # silence is common: many replays fall back on the builder's draw
    intents = jax.random.categorical(k_said, logits)
    world = team.v_builder(runner.env_state)[2]
    base = jax.jit(team._counterfactual_baselines)(runner.params, k_draws, jax.random.split(k_steps, envs),
                                                   runner.env_state, intents, logits, k_builder, world,
                                                   runner.memory)

    alternatives = np.asarray(jax.random.categorical(k_draws, logits, shape=(draws, envs, 3)))
    moves = np.arange(game.num_actions)
    fallback = np.asarray(jax.random.categorical(
        k_builder, jnp.broadcast_to(jnp.where(moves < game.noop, 0.0, -1e9), (envs, game.num_actions))))
    target = np.asarray(runner.env_state["target"])

    def model(fallback):
        want = np.zeros((envs, 3), np.float32)
        for seat in range(3):
            variants = np.broadcast_to(np.asarray(intents), (draws, envs, 3)).copy()
            variants[..., seat] = alternatives[..., seat]
            want[:, seat] = _listener_rewards(variants, target, fallback).mean(0)
        return want

    want = model(fallback)
    np.testing.assert_allclose(np.asarray(base), want, rtol=1e-6)
    assert 0.05 < want.mean() < 0.95 and len(np.unique(want)) > 3
    assert np.abs(model((fallback + 1) % game.noop) - want).max() > 0.1  # the builder's own draw matters


def test_counterfactual_credit_leaves_a_director_who_changes_nothing_without_advantage():
    """In a rollout with the listener, a turn's director advantages are the reward less each baseline, and
    every director after the first one naming a move (who cannot change the move) gets exactly 0; the
    builder's advantage and every return are the team credit's."""
    from craft_env.jax.team.ppo import Team

    game = mock_game()
    cfg = TeamConfig(num_envs=32, rollout=4, updates=2, hidden=16, memory=1, minibatches=1, seeds=(0,),
                     builder="listener", director_credit="counterfactual", counterfactuals=3)
    team = Team(game, cfg)
    _, batch, last = jax.jit(team.rollout)(team.init(jax.random.PRNGKey(6)))
    d_adv, d_ret, b_adv, b_ret = team.advantages(batch, last)
    want = np.asarray(batch.reward)[..., None] - np.asarray(batch.d_base)
    np.testing.assert_allclose(np.asarray(d_adv), want)
    said = np.asarray(batch.d_act) > 0
    first = np.where(said.any(-1), said.argmax(-1), 3)
    after_first = np.arange(3) > first[..., None]
    assert after_first.sum() > 10 and (np.asarray(d_adv)[after_first] == 0).all()
    assert (np.asarray(d_adv)[~after_first] != 0).any()
    plain = Team(game, cfg.replace(director_credit="team")).advantages(batch, last)
    for got, same in zip((d_ret, b_adv, b_ret), plain[1:]):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(same))


def test_counterfactual_credit_with_gamma_adds_the_critics_value_after_each_replayed_move():
    """With ``gamma > 0`` a replay's return is its reward plus ``gamma`` times the central critic's value
    after the move, none where the episode would end; the director's advantage is the team's GAE
    advantage with the turn's value replaced by the replays' mean. A critic that says 1.5 everywhere adds
    ``gamma x 1.5`` on every turn but an episode's last."""
    from craft_env.jax.team.ppo import Team

    game = mock_game(turns=2)
    cfg = TeamConfig(num_envs=32, rollout=4, updates=2, hidden=16, memory=1, minibatches=1, seeds=(0,),
                     builder="listener", director_credit="counterfactual", counterfactuals=3, gamma=0.5)
    team = Team(game, cfg)
    runner = team.init(jax.random.PRNGKey(8))
    critic = runner.params["critic"]
    flat = {"w": jnp.zeros_like(critic["out"]["w"]), "b": jnp.full_like(critic["out"]["b"], 1.5)}
    constant = {**critic, "out": flat}
    runner = runner._replace(params={**runner.params, "critic": constant})
    _, batch, last = jax.jit(team.rollout)(runner)
    _, myopic, _ = jax.jit(Team(game, cfg.replace(gamma=0.0)).rollout)(runner)
    np.testing.assert_array_equal(np.asarray(batch.d_act), np.asarray(myopic.d_act))
    done = np.asarray(batch.done)
    assert done[1].all() and not done[0].any()  # every env ends its 2-turn episode on the same turns
    added = np.asarray(batch.d_base) - np.asarray(myopic.d_base)
    np.testing.assert_allclose(added, np.broadcast_to(0.75 * (1 - done)[..., None], added.shape), atol=1e-6)
    d_adv = team.advantages(batch, last)[0]
    plain = Team(game, cfg.replace(director_credit="team")).advantages(batch, last)[0]
    want = np.asarray(plain) + 1.5 - np.asarray(batch.d_base)
    np.testing.assert_allclose(np.asarray(d_adv), want, atol=1e-6)


def test_counterfactual_credit_is_checked_where_it_is_configured():
    from craft_env.jax.team.ppo import Team

    with pytest.raises(ValueError, match="director_credit: 'counterfactual' with gamma > 0 values the "
                                         "replays with the central critic, got critic='independent'"):
        TeamConfig(director_credit="counterfactual", gamma=0.9, critic="independent")
    with pytest.raises(ValueError, match="director_credit: 'counterfactual' only for learned directors, got "
                                         "directors='scripted'"):
        TeamConfig(director_credit="counterfactual", directors="scripted")
    with pytest.raises(ValueError, match="counterfactuals: must be a positive int, got 0"):
        TeamConfig(director_credit="counterfactual", counterfactuals=0)
    blind = dataclasses.replace(mock_game(), move_outcome=None)
    with pytest.raises(ValueError, match="needs a game that scores a move without playing it"):
        Team(blind, TeamConfig(director_credit="counterfactual"))
    with pytest.raises(ValueError, match="director_credit: expected one of team, followed, counterfactual"):
        TeamConfig(director_credit="seat")
