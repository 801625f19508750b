"""``ppo_config`` checks every argument before anything is built (issue 35, item 21); no Ray is started.

Each bad value is a ``ValueError`` naming the argument and its range,
raised before the probe env, Ray's registry or an RLlib config exists.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

from craft_env.wrappers import rllib as craft_rllib  # noqa: E402

BAD = [
    ("lr", math.nan, r"^lr: expected a finite number above 0, at most 1, got nan"),
    ("lr", math.inf, r"^lr: expected a finite number above 0"),
    ("lr", -1, r"^lr: expected a finite number above 0"),
    ("lr", 0.0, r"^lr: expected a finite number above 0"),
    ("lr", "0.001", r"^lr: expected a finite number above 0"),
    ("num_epochs", 0, r"^num_epochs: expected an int from 1 to 1,000, got 0"),
    ("num_epochs", 1.5, r"^num_epochs: expected an int from 1 to 1,000"),
    ("train_batch_size", 0, r"^train_batch_size: expected an int from 1 to 10,000,000, got 0"),
    ("train_batch_size", True, r"^train_batch_size: expected an int"),
    ("minibatch_size", 0, r"^minibatch_size: expected an int from 1 to 1,000, got 0"),
    ("minibatch_size", 5000, r"^minibatch_size: expected an int from 1 to 1,000, got 5000"),
    ("hidden", (0,), r"^hidden: expected 1 to 16 layer widths, each an int from 1 to 16,384 .*got \(0,\)"),
    ("hidden", (), r"^hidden: expected 1 to 16 layer widths"),
    ("hidden", "128", r"^hidden: expected 1 to 16 layer widths"),
    ("hidden", (64, 2.5), r"^hidden: expected 1 to 16 layer widths"),
    ("hidden", 128, r"^hidden: expected 1 to 16 layer widths"),
    ("torch_threads", -1, r"^torch_threads: expected an int from 1 to 1,024, got -1"),
    ("torch_threads", 0, r"^torch_threads: expected an int from 1 to 1,024, got 0"),
    ("seed", 2**70, r"^seed: expected an int from 0 to 2,147,483,647, got 1180591620717411303424"),
    ("seed", -1, r"^seed: expected an int from 0 to 2,147,483,647"),
    ("seed", "x", r"^seed: expected an int from 0 to 2,147,483,647, got 'x'"),
    ("shared_policy", "no", r"^shared_policy: expected True or False, got 'no'"),
    ("shared_policy", 0, r"^shared_policy: expected True or False, got 0"),
    ("env_config", "oops", r"^env_config: expected None or a dict of parallel_env\(\) options, got 'oops'"),
    ("env_config", [("oracle_n", 5)], r"^env_config: expected None or a dict"),
    ("num_env_runners", -1, r"^num_env_runners: expected an int from 0 to 1,024, got -1"),
    ("num_envs_per_env_runner", 0, r"^num_envs_per_env_runner: expected an int from 1 to 1,024, got 0"),
]


@pytest.mark.parametrize(("field", "value", "message"), BAD, ids=[f"{f}={v!r}" for f, v, _ in BAD])
def test_a_bad_argument_is_refused_naming_it_before_anything_is_built(monkeypatch, field, value, message):
    def built(*args, **kwargs):
        raise AssertionError("the config was built before the arguments were checked")

    monkeypatch.setattr(craft_rllib, "CraftMultiAgentEnv", built)
    monkeypatch.setattr(craft_rllib, "PPOConfig", built)
    with pytest.raises(ValueError, match=message):
        craft_rllib.ppo_config(**{field: value})


def test_a_bad_env_config_value_is_the_envs_own_error_naming_the_field():
    with pytest.raises(ValueError, match="oracle_n"):
        craft_rllib.ppo_config(env_config={"oracle_n": -3})


def test_good_arguments_of_any_integer_type_build_the_config_they_name(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    config = craft_rllib.ppo_config(
        train_batch_size=np.int64(64), minibatch_size=32, num_epochs=np.int32(1), lr=1e-3,
        hidden=[np.int64(16), 8], torch_threads=1, seed=2**31 - 1, env_config={"max_turns": 2},
    )
    assert (config.train_batch_size_per_learner, config.minibatch_size, config.num_epochs) == (64, 32, 1)
    assert config.lr == 1e-3 and config.seed == 2**31 - 1
    assert config.rl_module_spec.rl_module_specs["builder"].model_config["fcnet_hiddens"] == [16, 8]
    assert not ray.is_initialized()


def test_a_bad_omp_num_threads_is_named_when_it_would_set_torchs_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "lots")
    with pytest.raises(ValueError, match=r"^OMP_NUM_THREADS: expected an int from 1 to 1,024, got 'lots'"):
        craft_rllib.ppo_config()
    craft_rllib.ppo_config(torch_threads=2)  # a value given outright does not read the variable
