"""The team evaluation's row "scripted directors + the trained builder of ``examples/train_builder.py``".

A tiny ``train_builder.py`` run saves its builder (``--save``); the file
loads back to the same greedy moves, and ``train_team.py --torch-builder``
plays it on the team evaluation's games. Both evaluations play one
``vector_env`` of the 20 bundled structures x ``seeds``, the scripted
directors and the greedy builder (under the same mask, ``learner_mask``).
``train_builder.py`` resets it with seed ``10_000 + --seed``, the team
evaluation with ``10_000``: so for ``--seed 0`` the games are the same. For
another seed the reset seed changes only what neither player reads (the
speaking order: the builder's observation holds every seat's intent in
seat order, and the scripted directors answer the board and their walls;
the numbers of the random and listener builders, which draw, do change), so
the numbers are equal there too, and equal ``builder_ppo.evaluate`` at the
team's seed. Skipped without torch (or jax).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from examples_support import load_example, run_without  # tests/ is on sys.path (conftest)

pytest.importorskip("torch")
pytest.importorskip("jax")

import craft_env
from craft_env.jax.team.evaluate import EVAL_SEED, play

TINY = ["--updates", "3", "--num-envs", "16", "--rollout", "6", "--minibatch", "48", "--epochs", "2",
        "--hidden", "32", "--eval-seeds", "1", "--log-every", "1", "--threads", "1"]
SUMMARY = ("progress", "se", "se_games", "completion", "completed", "turns", "games")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """``train_builder.py`` (tiny) for seeds 0 and 1, saved: ``{seed: (file, its own evaluation)}``."""
    folder = tmp_path_factory.mktemp("torch_builder")
    runs = {}
    for seed in (0, 1):
        path = folder / f"builder-seed{seed}.pt"
        results = load_example("train_builder").main([*TINY, "--seed", str(seed), "--save", str(path)])
        runs[seed] = (path, results["trained"])
    return runs


@pytest.fixture(scope="module")
def trainer():
    return load_example("train_builder").load_trainer()


def test_the_loaded_builder_plays_exactly_the_moves_of_the_trained_one(tmp_path, trainer):
    args = load_example("train_builder").parse_args([*TINY, "--seed", "3"])
    model = trainer.train(args)
    model.eval()
    path = tmp_path / "builder.pt"
    trainer.save_builder(model, craft_env.vector_env(1), args, path)
    loaded, saved = trainer.load_builder(path)
    assert saved["hidden"] == 32 and saved["training"]["seed"] == 3
    for name, value in model.state_dict().items():
        assert loaded.state_dict()[name].equal(value), name
    env = craft_env.vector_env(64)
    env.reset(seed=5)
    policy = trainer.greedy_policy(loaded, saved["layout"]["noop"])
    for turn in range(30):
        obs, *_ = env.step_directors(env.scripted_intents())
        builder = obs["builder"]
        want = trainer.greedy_actions(model, builder["observation"],
                                      trainer.learner_mask(builder["action_mask"], env.noop))
        np.testing.assert_array_equal(policy(builder["observation"], builder["action_mask"]), want,
                                      err_msg=f"turn {turn}")
        env.step_builder(want)


def test_a_file_of_another_observation_layout_is_refused_naming_the_field(tmp_path, trained, trainer):
    import torch

    path, _ = trained[0]
    saved = torch.load(path, weights_only=True)
    saved["layout"]["builder_dim"] += 1
    torch.save(saved, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="builder_dim"):
        trainer.load_builder(tmp_path / "other.pt")
    torch.save({"weights": 1}, tmp_path / "not-a-builder.pt")
    (tmp_path / "text.pt").write_text("not a torch file\n", encoding="utf-8")
    for name in ("not-a-builder.pt", "text.pt"):
        with pytest.raises(ValueError, match="not a builder"):
            trainer.load_builder(tmp_path / name)


def test_the_row_equals_train_builders_own_evaluation_on_the_same_games(tmp_path, trained, trainer):
    """``train_team.py --baselines-only --torch-builder`` (both seeds): each row is ``train_builder.py``'s
    printed evaluation of that file (module docstring: seed 1's on other reset seeds, the same games)."""
    team = load_example("train_team")
    out = tmp_path / "eval"
    paths = [str(trained[seed][0]) for seed in (0, 1)]
    assert team.main(["--baselines-only", "--eval-seeds", "1", "--out", str(out),
                      "--torch-builder", paths[0], "--torch-builder", paths[1]]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    rows = results["rows"]
    for seed in (0, 1):
        row = rows[f"train_builder.py builder seed {seed}"]
        assert {key: row[key] for key in SUMMARY} == trained[seed][1]
    model, _ = trainer.load_builder(trained[1][0])
    at_team_seed = trainer.evaluate("trained", model, 1, base_seed=EVAL_SEED)
    assert {key: rows["train_builder.py builder seed 1"][key] for key in SUMMARY} == at_team_seed
    assert rows["train_builder.py builder seed 0"]["games"] == 20
    assert "train_builder.py builder seed 1" in (out / "table.md").read_text(encoding="utf-8")


def test_the_row_is_the_reference_when_it_is_the_best_team_that_does_not_learn_to_talk(trained, trainer):
    """``pipeline._reference`` picks among the listener and the trained builders."""
    from craft_env.jax.team.pipeline import _reference

    listener = play("scripted + listener", "scripted", "listener", seeds=1)
    model, saved = trainer.load_builder(trained[0][0])
    policy = trainer.greedy_policy(model, saved["layout"]["noop"])
    row = play("train_builder.py builder seed 0", "scripted", policy, seeds=1)
    better = type(row)(row.name, row.progress + 1.0, row.completion, row.turns, row.structures)
    assert _reference([listener], [[row]]).name == "scripted + listener"
    assert _reference([listener], [[better]]).name == row.name


def test_train_team_runs_without_torch_and_says_how_to_install_it_when_asked_for_a_torch_builder(tmp_path,
                                                                                                 trained):
    done = run_without(("torch",), "train_team", "--baselines-only", "--eval-seeds", "1", "--out",
                       str(tmp_path / "baselines"))
    assert done.returncode == 0, done.stderr
    assert "scripted + listener" in (tmp_path / "baselines" / "table.md").read_text(encoding="utf-8")
    asked = run_without(("torch",), "train_team", "--baselines-only", "--out", str(tmp_path / "asked"),
                        "--torch-builder", str(trained[0][0]))
    assert asked.returncode == 1 and "Traceback" not in asked.stderr
    assert "needs torch" in asked.stderr
