"""The team trainer's training steps (``craft_env.jax.team.ppo``): per-seat losses and learning rates, a frozen
builder, runs started from a saved builder, the scripted start, imitation and the followed credit
(the counterfactual credit: ``tests/test_team_credit.py``).

Apart from ``tests/test_team.py`` so that ``pytest -n 2 --dist loadfile`` (README.md) gives the two
files' small trainings to two workers."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

import jax.numpy as jnp

from craft_env.jax.team import checkpoint
from craft_env.jax.team import policy as pol
from craft_env.jax.team.config import TeamConfig
from craft_env.jax.team.mock import mock_game


def test_director_entropy_and_learning_rate_apply_to_the_directors_alone():
    """``director_entropy`` replaces ``entropy`` in the directors' loss only; ``director_lr`` is the
    director network's step size while every other network keeps ``lr``."""
    from craft_env.jax.team.ppo import Team

    game = mock_game(scripted=True)
    cfg = TeamConfig(num_envs=16, rollout=4, updates=2, hidden=16, memory=1, minibatches=1, seeds=(0,))
    team = Team(game, cfg)
    runner = team.init(jax.random.PRNGKey(4))
    _, batch, last = team.rollout(runner)
    parts = (runner.params, batch, *team.advantages(batch, last))
    plain, metrics = team.loss(*parts)
    quiet, _ = Team(game, cfg.replace(director_entropy=0.0)).loss(*parts)
    np.testing.assert_allclose(float(quiet) - float(plain), cfg.entropy * float(metrics["director_entropy"]),
                               rtol=1e-4)
    for bad in (0.0, -1e-3, float("nan")):
        with pytest.raises(ValueError, match="director_lr: must be None or a number > 0"):
            TeamConfig(director_lr=bad)
    with pytest.raises(ValueError, match="director_entropy: must be None or a number >= 0, got -0.1"):
        TeamConfig(director_entropy=-0.1)

    def moved(config):
        team = Team(game, config)
        start = team.init(jax.random.PRNGKey(4))
        after, _ = jax.jit(team.update)(start)
        change = jax.tree_util.tree_map(lambda a, b: float(jnp.abs(a - b).max()), after.params, start.params)
        return tuple(max(jax.tree_util.tree_leaves(change[name])) for name in ("director", "builder"))

    director, builder = moved(cfg)
    assert director > 1e-4 and builder > 1e-4
    director, builder = moved(cfg.replace(director_lr=1e-9))
    assert director < 1e-7 and builder > 1e-4, (director, builder)


def test_a_frozen_builder_stays_put_and_takes_no_part_in_the_clip():
    """``builder_lr=0``: the builder's parameters do not move over updates, the directors' do, and the
    directors' step is the one a config whose builder had no gradient at all would take (the frozen
    builder's gradient is dropped before the global-norm clip, so it does not shrink theirs)."""
    from craft_env.jax.team.ppo import Team, optimiser

    game = mock_game(scripted=True)
    cfg = TeamConfig(num_envs=16, rollout=4, updates=2, hidden=16, memory=1, minibatches=1, seeds=(0,),
                     builder_lr=0.0, max_grad_norm=1e-3)
    team = Team(game, cfg)
    start = team.init(jax.random.PRNGKey(5))
    after, _ = jax.jit(team.update)(start)
    after, _ = jax.jit(team.update)(after)
    for name, value in checkpoint.flatten({"builder": start.params["builder"]}).items():
        np.testing.assert_array_equal(checkpoint.flatten({"builder": after.params["builder"]})[name], value)
    change = jax.tree_util.tree_map(lambda a, b: float(jnp.abs(a - b).max()), after.params, start.params)
    assert max(jax.tree_util.tree_leaves(change["director"])) > 1e-5

    grads = jax.tree_util.tree_map(jnp.ones_like, start.params)
    without = {**grads, "builder": jax.tree_util.tree_map(jnp.zeros_like, grads["builder"])}
    frozen_tx, plain_tx = optimiser(cfg), optimiser(cfg.replace(builder_lr=None, director_lr=cfg.lr))
    frozen, _ = frozen_tx.update(grads, frozen_tx.init(start.params), start.params)
    plain, _ = plain_tx.update(without, plain_tx.init(start.params), start.params)
    for name in ("director", "critic"):
        for got, want in zip(jax.tree_util.tree_leaves(frozen[name]), jax.tree_util.tree_leaves(plain[name])):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert all(float(jnp.abs(leaf).max()) == 0.0 for leaf in jax.tree_util.tree_leaves(frozen["builder"]))
    for bad in (-1e-3, float("inf"), "0"):
        with pytest.raises(ValueError, match="builder_lr: must be None or a number >= 0"):
            TeamConfig(builder_lr=bad)
    with pytest.raises(ValueError, match="builder_lr: only for a learned builder, got builder='listener'"):
        TeamConfig(builder="listener", builder_lr=0.0)


def test_a_greedy_frozen_builder_plays_its_most_likely_move_in_training():
    """``greedy_builder``: every builder move of a rollout is the argmax of its masked logits (what the
    evaluation plays), where the sampling builder strays from it; it needs ``builder_lr=0``."""
    from craft_env.jax.team.ppo import Team

    game = mock_game(scripted=True)
    cfg = TeamConfig(num_envs=32, rollout=4, updates=2, hidden=16, memory=1, minibatches=1, seeds=(0,),
                     builder_lr=0.0, prior=0.5)

    def agreement(config):
        team = Team(game, config)
        runner = team.init(jax.random.PRNGKey(3))
        _, batch, _ = team.rollout(runner)
        x = pol.builder_inputs(team.shapes, batch.b_obs, batch.memory, batch.b_heard)
        logits = pol.builder_logits(runner.params, config, x, batch.b_mask.astype(bool))
        return float((np.asarray(jnp.argmax(logits, -1)) == np.asarray(batch.b_act)).mean())

    assert agreement(cfg.replace(greedy_builder=True)) == 1.0
    assert agreement(cfg) < 0.9
    with pytest.raises(ValueError, match="greedy_builder: only with a frozen builder \\(builder_lr=0\\), got "
                                         "builder_lr=None"):
        TeamConfig(greedy_builder=True)
    with pytest.raises(ValueError, match="greedy_builder: expected True or False, got 1"):
        TeamConfig(greedy_builder=1, builder_lr=0.0)


def test_a_run_starts_from_a_saved_builder_and_critic(tmp_path):
    """``checkpoint.networks_from`` takes the saved team's builder and critic, seed by seed (seed ``s``
    from its seed ``s``, whatever the order), and ``train(start=...)`` begins from them; with
    ``builder_lr=0`` the trained run ends with that builder. Another width, a missing seed or a
    network the run lacks is refused by name."""
    from craft_env.jax.team.train import train

    game = mock_game(scripted=True)
    shapes = pol.shapes_of(game)
    saved_cfg = TeamConfig(hidden=16, memory=1, seeds=(0, 1, 2), num_envs=8, rollout=2, minibatches=1)
    stacked = [pol.init_params(jax.random.PRNGKey(seed), shapes, saved_cfg) for seed in (10, 11, 12)]
    params = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *stacked)
    checkpoint.save(tmp_path / "saved", params, saved_cfg, shapes)

    cfg = saved_cfg.replace(seeds=(2, 0), updates=2, builder_lr=0.0, script_prior=8.0, speaker_prior=0.0)
    start = checkpoint.networks_from(tmp_path / "saved", ("builder", "critic"), cfg, shapes)
    assert sorted(start) == ["builder", "critic"]
    for name in ("builder", "critic"):
        for got, want in zip(jax.tree_util.tree_leaves(start[name]), jax.tree_util.tree_leaves(params[name])):
            np.testing.assert_array_equal(got, np.asarray(want)[[2, 0]])
    run = train(game, cfg, chunk=2, start=start)
    for got, want in zip(jax.tree_util.tree_leaves(run.params["builder"]),
                         jax.tree_util.tree_leaves(start["builder"])):
        np.testing.assert_array_equal(np.asarray(got), want)

    with pytest.raises(ValueError, match="no seed 3 in that run \\(its seeds: 0, 1, 2\\)"):
        checkpoint.networks_from(tmp_path / "saved", ("builder",), cfg.replace(seeds=(3,)), shapes)
    with pytest.raises(ValueError, match="parameter 'builder/h1/b' is \\(16,\\), this config needs \\(8,\\)"):
        checkpoint.networks_from(tmp_path / "saved", ("builder",), cfg.replace(hidden=8), shapes)
    with pytest.raises(ValueError, match="network 'builder_critic' is not in both"):
        checkpoint.networks_from(tmp_path / "saved", ("builder_critic",), cfg, shapes)


def test_scripted_start_trains_with_the_scripted_intent_in_the_directors_input():
    """In training the scripted intent is a director input: the rollout's intents are mostly the
    scripted ones from the first update (sampling may stray from them), the batch keeps them, and the
    loss reads them from the batch (the same loss as recomputing the inputs)."""
    from craft_env.jax.team.ppo import Team

    game = mock_game(scripted=True)
    cfg = TeamConfig(num_envs=32, rollout=4, updates=2, hidden=16, memory=1, minibatches=1, script_prior=8.0,
                     speaker_prior=0.0, seeds=(0,))
    team = Team(game, cfg)
    runner = team.init(jax.random.PRNGKey(2))
    assert runner.params["director"]["wide"].shape[1] == (game.director_dim + team.shapes.memory_width
                                                          + game.num_intents)
    runner, batch, last = team.rollout(runner)
    said, labels = np.asarray(batch.d_act), np.asarray(batch.d_script)
    assert (said == labels).mean() > 0.9, (said == labels).mean()
    parts = (runner.params, batch, *team.advantages(batch, last))
    loss, _ = team.loss(*parts)
    blind, _ = team.loss(*parts[:1], batch._replace(d_script=jnp.zeros_like(batch.d_script)), *parts[2:])
    assert abs(float(loss) - float(blind)) > 1e-3  # the loss reads the scripted intents


def test_imitating_directors_say_the_scripted_intents_then_their_own():
    """While ``imitate`` lasts the scripted directors speak and the director network learns their
    intents (cross-entropy), so its greedy intents end up theirs; afterwards the network speaks."""
    from craft_env.jax.team.ppo import Team

    game = mock_game(scripted=True)
    cfg = TeamConfig(num_envs=32, rollout=4, updates=40, hidden=32, memory=0, minibatches=2, imitate=0.75,
                     seeds=(0,))
    team = Team(game, cfg)
    scripted = jax.vmap(game.scripted)
    runner = jax.jit(team.init)(jax.random.PRNGKey(0))
    rollout = jax.jit(team.rollout)

    def spoken_and_scripted(runner):
        """One rollout's intents, what the scripted directors would have said in those states, and the
        labels the rollout kept."""
        _, batch, _ = rollout(runner)
        said = np.asarray(batch.d_act)
        sees = np.asarray(batch.d_obs[..., :6]).sum(-1) > 0
        target = np.asarray(batch.d_obs[..., 0, :6]).argmax(-1)  # D1 always sees it
        return said, np.where(sees, target[..., None] + 1, 0), np.asarray(batch.d_script)

    said, want, labels = spoken_and_scripted(runner)
    np.testing.assert_array_equal(said, want)  # imitating: the scripted intents, whatever the network says
    np.testing.assert_array_equal(labels, want)

    states = jax.vmap(game.reset)(jax.random.split(jax.random.PRNGKey(7), 256))
    d_obs, d_mask, _ = jax.vmap(game.directors)(states)
    x = pol.director_inputs(team.shapes, d_obs, jnp.zeros((256, 0, team.shapes.memory_width)))

    def agreement(params):
        logits = pol.director_logits(params, cfg, x, d_mask)
        return float((np.asarray(logits.argmax(-1)) == np.asarray(scripted(states))).mean())

    before = agreement(runner.params)
    runner, metrics = jax.jit(team.train_chunk, static_argnums=1)(runner, cfg.imitation_updates)
    assert int(runner.update) == cfg.imitation_updates and not bool(team.imitating(runner))
    loss = np.asarray(metrics["imitation_loss"])
    assert loss[-1] < 0.25 * loss[0], loss
    assert before < 0.6 and agreement(runner.params) > 0.95, (before, agreement(runner.params))
    said, want, _ = spoken_and_scripted(runner)  # the network speaks now: what it learned
    assert (said == want).mean() > 0.8
    silenced = jax.tree_util.tree_map(jnp.zeros_like, runner.params["director"])
    said, want, _ = spoken_and_scripted(runner._replace(params={**runner.params, "director": silenced}))
    assert (said == want).mean() < 0.5  # a network that says anything (uniform logits): not the script


def test_script_pull_adds_its_weight_times_the_cross_entropy_on_the_scripted_intents():
    """After imitation, the directors' loss is PPO's plus ``script_pull`` x the cross-entropy of their
    logits on what the scripted directors would say; while imitating it is that cross-entropy alone."""
    from craft_env.jax.team.ppo import Team

    game = mock_game(scripted=True)
    cfg = TeamConfig(num_envs=16, rollout=4, updates=4, hidden=16, memory=1, minibatches=1, imitate=0.5,
                     seeds=(0,))
    team, pulled = Team(game, cfg), Team(game, cfg.replace(script_pull=2.0))
    runner = team.init(jax.random.PRNGKey(3))
    runner = runner._replace(update=jnp.asarray(cfg.imitation_updates))  # past the imitation
    runner, batch, last = team.rollout(runner)
    assert np.asarray(batch.d_script).any() and (np.asarray(batch.d_script) != np.asarray(batch.d_act)).any()
    parts = (runner.params, batch, *team.advantages(batch, last))
    plain, metrics = team.loss(*parts, imitating=False)
    pull, _ = pulled.loss(*parts, imitating=False)
    np.testing.assert_allclose(float(pull) - float(plain), 2.0 * float(metrics["imitation_loss"]), rtol=1e-4)
    listening = Team(game, cfg.replace(builder="listener"))  # the directors' terms alone
    imitated, metrics = listening.loss(*parts, imitating=True)
    want = (metrics["imitation_loss"] + cfg.value_coef * metrics["director_value_loss"]
            - cfg.entropy * metrics["director_entropy"])
    np.testing.assert_allclose(float(imitated), float(want), rtol=1e-5)


def test_training_curves_hold_the_imitation_loss_only_where_directors_imitate():
    from craft_env.jax.team.train import train

    cfg = TeamConfig(num_envs=8, rollout=2, updates=4, hidden=8, memory=0, minibatches=1, imitate=0.5,
                     seeds=(0, 1))
    lines = []
    run = train(mock_game(scripted=True), cfg, chunk=2, report=lines.append)
    assert run.curves["imitation_loss"].shape == run.curves["progress"].shape == (4, 2)
    assert (run.curves["imitation_loss"] > 0).all() and " imitation " in lines[-1]
    plain = train(mock_game(), cfg.replace(imitate=0.0), chunk=4)
    assert "imitation_loss" not in plain.curves and plain.curves["progress"].shape == (4, 2)




def test_followed_credit_keeps_the_advantage_of_the_directors_whose_move_was_played():
    """``director_credit="followed"``: a director's advantage is the team's where the builder played the
    move its intent named, and 0 elsewhere; the builder's advantage does not change."""
    from craft_env.jax.team.ppo import Team, followed

    game = mock_game()
    cfg = TeamConfig(num_envs=16, rollout=4, updates=2, hidden=16, memory=1, minibatches=1, seeds=(0,))
    team = Team(game, cfg)
    _, batch, last = team.rollout(team.init(jax.random.PRNGKey(5)))
    d_adv, d_ret, b_adv, b_ret = team.advantages(batch, last)
    credited = Team(game, cfg.replace(director_credit="followed")).advantages(batch, last)
    named = np.asarray(batch.b_heard).argmax(-1)
    said = np.asarray(batch.b_heard).max(-1) > 0
    want = (said & (named == np.asarray(batch.b_act)[..., None])).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(followed(batch)), want)
    assert 0 < want.mean() < 1
    np.testing.assert_allclose(np.asarray(credited[0]), np.asarray(d_adv) * want)
    for got, same in zip(credited[1:], (d_ret, b_adv, b_ret)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(same))

