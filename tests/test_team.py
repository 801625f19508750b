"""The team trainer's pieces (``craft_env.jax.team``): scripted directors, memory, listener, PPO, save/load."""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("optax")

import jax.numpy as jnp

import craft_env
from craft_env.jax.team import checkpoint
from craft_env.jax.team import policy as pol
from craft_env.jax.team.config import TeamConfig
from craft_env.jax.team.mock import mock_game
from craft_env.jax.team.scripted import scripted_intents, walls_of


@pytest.mark.parametrize("protocol", ["craft", "paper"])
def test_scripted_directors_match_vector_env(protocol):
    """The JAX scripted directors say what ``vector_env().scripted_intents()`` says, state after state."""
    env = craft_env.vector_env(128, protocol=protocol)
    walls = walls_of(env.seats, env.n)
    say = jax.jit(jax.vmap(lambda o, m: scripted_intents(o, m, walls, env.n, env.height)))
    obs, _ = env.reset(seed=11)
    for turn in range(24):
        want = env.scripted_intents()
        got = np.asarray(say(obs["directors"]["observation"], obs["directors"]["action_mask"]))
        np.testing.assert_array_equal(got, want, err_msg=f"turn {turn}")
        obs, *_ = env.step_directors(env.sample_actions(turn) if turn % 3 == 0 else want)
        obs, *_ = env.step_builder(env.sample_actions(1000 + turn))


def test_memory_keeps_the_last_turns_and_forgets_at_episode_end():
    memory = jnp.zeros((2, 2, 3))
    first = pol.push_memory(memory, jnp.array([[1.0, 0, 0], [0, 1.0, 0]]), jnp.array([False, False]))
    second = pol.push_memory(first, jnp.array([[0, 0, 1.0], [0, 0, 1.0]]), jnp.array([False, True]))
    np.testing.assert_array_equal(second[0], [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(second[1], np.zeros((2, 3)))
    assert pol.push_memory(jnp.zeros((2, 0, 3)), jnp.ones((2, 3)), jnp.array([False, False])).shape == (2, 0, 3)


@pytest.mark.parametrize("share, critic", [(True, "central"), (False, "independent")])
def test_one_hot_rows_give_the_dense_inputs_numbers(share, critic):
    """``policy``'s inputs (memory, heard moves and the phase flag as gathered one-hot rows) give the
    logits and values of the plain concatenated input through the same parameters."""
    from craft_env.jax.team import networks as nets

    shapes = pol.Shapes(3, 7, 6, 5, 11, 13, 9, 2)
    cfg = TeamConfig(memory=2, hidden=16, share_directors=share, critic=critic, num_envs=4, minibatches=1)

    rng = np.random.default_rng(0)
    layout = jax.eval_shape(lambda key: pol.init_params(key, shapes, cfg), jax.random.PRNGKey(0))
    params = jax.tree_util.tree_map(lambda leaf: jnp.asarray(rng.normal(size=leaf.shape), jnp.float32),
                                    layout)
    batch = (5, 4)
    said = rng.integers(0, shapes.num_intents, (*batch, cfg.memory, shapes.seats))
    kept = rng.random((*batch, cfg.memory, 3, 1)) < 0.8
    spoken = np.eye(shapes.num_intents, dtype=np.float32)[said] * kept
    memory = jnp.asarray(spoken.reshape(*batch, cfg.memory, shapes.memory_width))
    d_obs = jnp.asarray(rng.random((*batch, 3, shapes.director_dim)), jnp.float32)
    b_obs = jnp.asarray(rng.random((*batch, shapes.builder_dim)), jnp.float32)
    moves = rng.integers(0, shapes.num_actions, (*batch, 3))
    understood = rng.random((*batch, 3, 1)) < 0.7
    heard = jnp.asarray(np.eye(shapes.num_actions, dtype=np.float32)[moves] * understood)
    world = jnp.asarray(rng.random((*batch, shapes.state_dim)), jnp.float32)

    def both(params, d_obs, b_obs, memory, heard, world):
        """Pairs (through one-hot rows, through the dense input): director and builder logits, critics,
        and the builder's gradients."""
        flat = memory.reshape(*batch, -1)
        shared = jnp.broadcast_to(flat[..., None, :], (*batch, 3, flat.shape[-1]))
        d_dense = jnp.concatenate([d_obs, shared], -1)
        b_dense = jnp.concatenate([b_obs, flat, heard.sum(-2)], -1)
        d_in = pol.director_inputs(shapes, d_obs, memory)
        b_in = pol.builder_inputs(shapes, b_obs, memory, heard)
        pairs = [(nets.seat_mlp(params["director"], d_in, cfg.wide_scale),
                  nets.seat_mlp(params["director"], d_dense, cfg.wide_scale)),
                 (nets.mlp(params["builder"], b_in, cfg.wide_scale),
                  nets.mlp(params["builder"], b_dense, cfg.wide_scale))]
        for phase, got in ((0.0, pol.director_values(params, cfg, shapes, d_in, world, memory)[..., 0]),
                           (1.0, pol.builder_value(params, cfg, shapes, b_in, world, memory))):
            if critic == "central":
                flag = jnp.full((*batch, 1), phase)
                want = nets.value(params["critic"], jnp.concatenate([world, flat, flag], -1))
            elif phase == 0.0:
                want = nets.seat_mlp(params["director_critic"], d_dense)[..., 0, 0]
            else:
                want = nets.value(params["builder_critic"], b_dense)
            pairs.append((got, want))
        grad = jax.grad(lambda p, x: nets.mlp(p, x, cfg.wide_scale).sum())
        pairs.append((grad(params["builder"], b_in), grad(params["builder"], b_dense)))
        return pairs

    for got, want in jax.jit(both)(params, d_obs, b_obs, memory, heard, world):
        jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5), got, want)


def test_listener_plays_the_first_legal_request_else_any_legal_move():
    shapes = pol.Shapes(3, 4, 5, 4, 0, 0, 0, 0)
    meaning = jnp.array([[-1, 0, 1, 2], [-1, 3, 1, 2], [-1, 2, 2, 2]])
    spoken = jnp.zeros((3, 4)).at[0, 1].set(1).at[1, 1].set(1).at[2, 0].set(1)  # D1 asks 0, D2 asks 3
    heard = pol.heard_moves(shapes, meaning, spoken.reshape(-1))
    assert np.asarray(jnp.argmax(heard, -1)).tolist() == [0, 3, 0] and float(heard[2].sum()) == 0
    mask = jnp.array([0, 1, 1, 1, 1])
    assert int(jnp.argmax(pol.listener_logits(heard, mask))) == 3  # D1's move is illegal: D2's
    none = pol.listener_logits(jnp.zeros((3, 5)), mask)
    assert np.asarray(none).tolist()[0] < -1e8 and len(set(np.asarray(none)[1:].tolist())) == 1


@pytest.mark.parametrize("dtype", [jnp.bool_, jnp.int8])
def test_training_mask_drops_the_pass_unless_it_is_the_only_move_in_the_masks_own_dtype(dtype):
    """Bool masks (the JAX game's) and int8 ones alike, with no cast JAX warns of (a future error)."""
    shapes = pol.Shapes(3, 4, 5, 4, 0, 0, 0, 0)
    masks = jnp.array([[0, 1, 0, 0, 1], [0, 0, 0, 0, 1]], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = pol.training_builder_mask(shapes, TeamConfig(), masks)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got, np.int8), [[0, 1, 0, 0, 0], [0, 0, 0, 0, 1]])
    unmasked = pol.training_builder_mask(shapes, TeamConfig(mask_pass=False), masks)
    np.testing.assert_array_equal(unmasked, masks)


def test_config_refuses_bad_values_naming_the_field():
    with pytest.raises(ValueError, match="critic"):
        TeamConfig(critic="both")
    with pytest.raises(ValueError, match="minibatches"):
        TeamConfig(num_envs=10, minibatches=4)
    with pytest.raises(ValueError, match="directors, builder"):
        TeamConfig(directors="scripted", builder="listener")


def test_config_refuses_imitation_settings_out_of_range_or_without_learning_directors():
    with pytest.raises(ValueError, match="imitate: must be a share of the updates in \\[0, 1\\), got 1.0"):
        TeamConfig(imitate=1.0)
    with pytest.raises(ValueError, match="imitate: only for learned directors"):
        TeamConfig(imitate=0.5, directors="scripted")
    with pytest.raises(ValueError, match="script_pull: must be a number >= 0, got -1"):
        TeamConfig(script_pull=-1)
    for endless in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match=f"script_pull: must be a number >= 0, got {endless}"):
            TeamConfig(script_pull=endless)
    with pytest.raises(ValueError, match="script_pull: only for learned directors"):
        TeamConfig(script_pull=1.0, directors="scripted")
    assert TeamConfig(imitate=0.25, updates=10).imitation_updates == 2  # round(2.5): to even
    for bad in (-1, float("nan"), True):
        with pytest.raises(ValueError, match=f"script_prior: must be a number >= 0, got {bad}"):
            TeamConfig(script_prior=bad)
    with pytest.raises(ValueError, match="script_prior: only for learned directors"):
        TeamConfig(script_prior=8.0, directors="scripted")


def test_scripted_start_directors_say_what_the_scripted_directors_say_on_vector_env():
    """With ``script_prior`` the untrained directors' greedy intents are the scripted ones, state after
    state of the numba game (the evaluation computes the scripted intent from their observations);
    the same network without the scripted intent in its input does not say them."""
    from craft_env.jax.team.evaluate import LearnedPolicies
    from craft_env.jax.team.game import intent_actions, intents_offset

    env = craft_env.vector_env(64)
    shapes = pol.Shapes(len(env.seats), env.num_intents, env.num_actions, env.noop, env.director_dim,
                        env.builder_dim, env.state_dim, intents_offset(env.n, env.height))
    assert pol.board_size(shapes) == (env.n, env.height)
    started = TeamConfig(script_prior=8.0, speaker_prior=0.0, hidden=16, memory=1)
    plain = started.replace(script_prior=0.0)
    policies = {cfg.script_prior: LearnedPolicies(pol.init_params(jax.random.PRNGKey(1), shapes, cfg), cfg,
                                                  shapes, intent_actions())
                for cfg in (started, plain)}
    memory = np.zeros((env.num_envs, 1, shapes.memory_width), np.float32)
    obs, _ = env.reset(seed=5)
    agreeing = []
    for turn in range(16):
        want = env.scripted_intents()
        d = obs["directors"]
        said = policies[8.0].directors(d["observation"], d["action_mask"], memory)
        np.testing.assert_array_equal(said, want, err_msg=f"turn {turn}")
        agreeing.append((policies[0.0].directors(d["observation"], d["action_mask"], memory) == want).mean())
        obs, *_ = env.step_directors(env.sample_actions(turn) if turn % 4 == 3 else want)
        obs, *_ = env.step_builder(env.sample_actions(500 + turn))
    assert np.mean(agreeing) < 0.5, agreeing


def test_save_refuses_a_file_of_another_config_naming_the_parameter(tmp_path):
    game = mock_game()
    shapes = pol.shapes_of(game)
    cfg = TeamConfig(hidden=16, memory=1, seeds=(0,))
    params = jax.tree_util.tree_map(lambda leaf: leaf[None], pol.init_params(jax.random.PRNGKey(0), shapes, cfg))
    checkpoint.save(tmp_path / "run", params, cfg, shapes)
    loaded, loaded_cfg, loaded_shapes, _ = checkpoint.load(tmp_path / "run")
    assert loaded_cfg == cfg and loaded_shapes == shapes
    for name, value in checkpoint.flatten(params).items():
        np.testing.assert_array_equal(checkpoint.flatten(loaded)[name], value)
    checkpoint.save(tmp_path / "other", params, cfg.replace(hidden=8), shapes)
    with pytest.raises(ValueError, match="parameter 'builder/h1/"):
        checkpoint.load(tmp_path / "other")


def load_cli():
    """``examples/train_team.py`` as a module."""
    path = Path(__file__).resolve().parents[1] / "examples" / "train_team.py"
    spec = importlib.util.spec_from_file_location("craft_train_team", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_config_is_a_valid_team_config_in_every_preset():
    """Each name of ``--configs`` builds (a bad setting would only fail minutes into a GPU run); the
    imitation configs imitate for their share of the preset's updates."""
    cli = load_cli()
    for preset in cli.PRESETS:
        for name in cli.CONFIGS:
            cfg = cli.configs_of(cli.parse_args(["--preset", preset, "--configs", name, "--out", "x"]))[name]
            assert isinstance(cfg, TeamConfig), (preset, name)
    names = "team-imitate,team-imitate-only"
    imitating = cli.configs_of(cli.parse_args(["--preset", "cpu", "--configs", names, "--updates", "100",
                                               "--out", "x"]))
    assert imitating["team-imitate"].imitation_updates == 50 and imitating["team-imitate"].script_pull == 1.0
    assert imitating["team-imitate-only"].imitation_updates == 99


def test_every_config_with_scripted_directors_may_be_the_reference():
    """The reference is chosen among the trained builders of every config whose directors are scripted
    (``scripted+builder-memory4`` too) and ``train_builder.py``'s, never among learned directors."""
    from craft_env.jax.team.pipeline import TORCH_BUILDER, untalking

    teams = {"team": (None, TeamConfig()),
             "scripted+builder-memory4": (None, TeamConfig(directors="scripted")),
             "directors+listener": (None, TeamConfig(builder="listener")),
             "scripted+builder": (None, TeamConfig(directors="scripted"))}
    assert untalking(teams) == ["scripted+builder-memory4", "scripted+builder", TORCH_BUILDER]


def test_cli_refuses_bad_arguments_in_one_line_and_writes_nothing(tmp_path, capsys):
    main = load_cli().main
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as raised:
        main(["--preset", "ci", "--updates", "0", "--out", str(out)])
    assert raised.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["train_team.py: error: --updates: must be a positive int, got 0"]
    assert not out.exists()
    for argv, message in (
            (["--builder-from", str(tmp_path)], f"--builder-from: no saved team (team.json) in {tmp_path}"),
            (["--builder-from", str(tmp_path), "--load", str(tmp_path)],
             "--builder-from: only when training (not with --load or --baselines-only)")):
        with pytest.raises(SystemExit) as raised:
            main(["--preset", "ci", "--out", str(out), *argv])
        assert raised.value.code == 2
        assert capsys.readouterr().err.strip().splitlines() == [f"train_team.py: error: {message}"]
    assert not out.exists()


@pytest.fixture(scope="module")
def ci_run(tmp_path_factory):
    """``examples/train_team.py --preset ci``: about a minute of training on CPU, then the evaluation."""
    out = tmp_path_factory.mktemp("team") / "ci"
    assert load_cli().main(["--preset", "ci", "--out", str(out)]) == 0
    return out, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_ci_team_beats_the_random_team_on_the_held_out_structures(ci_run):
    """Two seeds trained at once (vmap) on generated targets, played on the bundled set: both far above
    the random team."""
    _, results = ci_run
    rows = results["rows"]
    random_team = rows["random team"]["progress"]
    for seed in (0, 1):
        team = rows[f"team seed {seed}"]
        assert team["games"] == 200
        assert team["progress"] > 3 * random_team, (seed, team["progress"], random_team)


def test_cli_builder_from_starts_the_directors_on_the_saved_builder(ci_run, tmp_path, capsys):
    """``--builder-from``: ``team-best-response`` trains on the saved team's builder and critic, keeps
    that builder frozen, and its saved run says where the builder came from; a saved team of another
    width stops the command before any training, naming the parameter."""
    out, _ = ci_run
    main = load_cli().main
    assert main(["--preset", "ci", "--configs", "team-best-response", "--updates", "2", "--eval-seeds", "1",
                 "--builder-from", str(out / "team"), "--out", str(tmp_path / "br")]) == 0
    params, cfg, _, extra = checkpoint.load(tmp_path / "br" / "team-best-response")
    saved, _, _, _ = checkpoint.load(out / "team")
    assert cfg.builder_lr == 0.0 and extra["builder_from"] == str(out / "team")
    for name, value in checkpoint.flatten({"builder": saved["builder"]}).items():
        np.testing.assert_array_equal(checkpoint.flatten({"builder": params["builder"]})[name], value)
    with pytest.raises(SystemExit) as raised:
        main(["--preset", "ci", "--configs", "team-best-response", "--hidden", "32", "--builder-from",
              str(out / "team"), "--out", str(tmp_path / "narrow")])
    assert raised.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"train_team.py: error: --builder-from: {out / 'team'}: parameter 'builder/h1/b' is (64,), "
        "this config needs (32,)")


def test_the_table_holds_the_walls_only_oracle_between_the_listener_and_the_oracle(ci_run):
    """The reference of perfect speech with nothing guessed: every bundled target scored as what its walls
    show (the same for every seed of a structure), above the scripted team and below the oracle."""
    from craft_env.jax.team.pipeline import WALLS_ORACLE

    _, results = ci_run
    rows = results["rows"]
    walls = rows[WALLS_ORACLE]
    assert walls["games"] == 200
    per_game = np.array(walls["per_game_progress"]).reshape(10, 20)
    assert (per_game == per_game[0]).all()
    assert rows["scripted + listener"]["progress"] < walls["progress"] < rows["scripted + oracle builder"]["progress"]
    assert walls["completed"] == pytest.approx(0.1)


def test_ci_team_saved_loaded_and_evaluated_again_gives_the_same_games(ci_run):
    from craft_env.jax.team.evaluate import LearnedPolicies, play
    from craft_env.jax.team.game import intent_actions

    out, results = ci_run
    params, cfg, shapes, _ = checkpoint.load(out / "team")
    policies = LearnedPolicies(checkpoint.seed_params(params, 0), cfg, shapes, intent_actions())
    again = play("team seed 0", "learned", "learned", 10, policies, cfg.memory)
    assert again.progress.tolist() == results["rows"]["team seed 0"]["per_game_progress"]
    entry = craft_env_entry(out / "team-seed-0.entry.json")
    assert entry.summary["progress"] == pytest.approx(results["rows"]["team seed 0"]["progress"])


def craft_env_entry(path):
    from craft_env.eval.leaderboard.entryfile import read_entry

    return read_entry(path)


def test_a_one_policy_predictor_plays_the_evaluation_through_the_homogeneous_layout():
    """``homogeneous_policy`` feeds a predictor what ``wrappers.homogeneous`` (flat) feeds SB3: the own
    observation zero-padded, the role one-hot, the padded mask; its actions play the evaluation."""
    from craft_env.jax.team.evaluate import homogeneous_policy, play
    from craft_env.wrappers import homogeneous_parallel_env

    wrapped = homogeneous_parallel_env(flat=True)
    wrapped_obs, _ = wrapped.reset(seed=0)
    seen = []

    def predict(obs, masks):
        seen.append((obs.copy(), masks.copy()))
        return np.argmax(masks, axis=1)

    env = craft_env.vector_env(1)
    directors, builder = homogeneous_policy(predict, env.director_dim, env.builder_dim)
    games = play("first legal", directors, builder, seeds=1)
    assert len(games.progress) == 20 and np.isfinite(games.progress).all()
    obs, masks = seen[0]
    assert obs.shape[1] == wrapped.observation_space("builder").shape[0]
    assert obs.shape[1] == wrapped_obs["builder"].shape[0]
    np.testing.assert_array_equal(obs[:, wrapped.mask_slice], masks)
    np.testing.assert_array_equal(obs[:, wrapped.obs_dim - 2], 1.0)  # every row seen first is a director's


def test_speech_table_says_how_often_each_seat_says_what_the_script_says():
    """``speech.md``'s last column: the scripted directors say their own intents on every turn; random
    directors seldom do."""
    from craft_env.jax.team.evaluate import play
    from craft_env.jax.team.speech import HEADER, SpeechLog

    env = craft_env.vector_env(1)
    shares = {}
    for directors in ("scripted", "random"):
        log = SpeechLog(env.seats, env.n, env.height)
        play(directors, directors, "listener", seeds=1, watch=log.watch)
        rows = log.table(directors)
        assert len(rows) == 3 and all(row.count("|") == HEADER[0].count("|") for row in rows)
        shares[directors] = [float(row.rstrip(" |").rsplit("| ", 1)[1].rstrip("%")) for row in rows]
    assert shares["scripted"] == [100.0] * 3
    assert max(shares["random"]) < 20.0, shares
