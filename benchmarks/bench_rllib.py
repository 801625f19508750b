"""RLlib throughput: env steps per second with 0 and 2 remote env runners, against the env alone.

Run: ``python benchmarks/bench_rllib.py [--iterations 3]`` (needs the
``rllib`` extra). Rows:

* ``env alone``: ``CraftMultiAgentEnv`` (``craft_env.wrappers.rllib``)
  stepped in a Python loop with masked random actions: the ceiling of any
  RLlib setup on one core;
* ``N runners``: ``ppo_config(num_env_runners=N)`` with its defaults
  (1000 env steps, 2 epochs of 250 per iteration), one warm-up iteration,
  then ``--iterations`` timed ones: ``training`` is env steps over their
  wall time (sampling and learning). Then ``--iterations`` batches of the
  same size sampled as PPO's training step samples them
  (``synchronous_parallel_sample`` over the algorithm's env runners):
  ``sampling`` is env steps over their wall time. RLlib's own
  ``timers/env_runner_sampling_timer`` is not used: it is an exponential
  average (coefficient 0.01) that starts at the warm-up's value, so after
  a few iterations it still reports mostly the warm-up;
* ``2 runners, torch on 2 threads``: the same with ``torch_threads=2``
  (torch's own default on 2 cores), the case ``ppo_config`` avoids.

The ratio column is each row's sampling rate over the env alone's. An env
step is one parallel step: a turn is two (directors, then builder), each
with all four agents acting.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import ray
from ray.rllib.execution.rollout_ops import synchronous_parallel_sample

from craft_env.wrappers.rllib import make_env, ppo_config

ENV_CONFIG = {"oracle_n": 5}


def env_alone(steps: int = 20_000) -> float:
    """Env steps per second of ``CraftMultiAgentEnv`` with masked random actions."""
    env = make_env(ENV_CONFIG)
    rng = np.random.default_rng(0)
    observations, _ = env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in observations.items()}
        observations, _, terminations, truncations, _ = env.step(actions)
        if terminations["__all__"] or truncations["__all__"]:
            observations, _ = env.reset()
    return steps / (time.perf_counter() - start)


def rllib_rates(num_env_runners: int, iterations: int, torch_threads: int | None = None) -> tuple[float, float]:
    """(sampling, training) env steps per second of ``ppo_config(num_env_runners=...)``."""
    algo = ppo_config(num_env_runners=num_env_runners, env_config=ENV_CONFIG, torch_threads=torch_threads
                      ).build_algo()
    try:
        algo.train()  # warm-up: runners start, modules build
        steps = 0
        start = time.perf_counter()
        for _ in range(iterations):
            steps += algo.train()["env_runners"]["num_env_steps_sampled"]
        training = steps / (time.perf_counter() - start)
        steps = 0
        start = time.perf_counter()
        for _ in range(iterations):
            episodes = synchronous_parallel_sample(worker_set=algo.env_runner_group,
                                                   max_env_steps=algo.config.total_train_batch_size,
                                                   _uses_new_env_runners=True)
            steps += sum(episode.env_steps() for episode in episodes)
        sampling = steps / (time.perf_counter() - start)
    finally:
        algo.stop()
    return sampling, training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3, help="timed iterations per row (default 3)")
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    alone = env_alone()
    rows = [("env alone", alone, None)]
    for name, runners, threads in (("0 runners", 0, None), ("2 runners", 2, None),
                                   ("2 runners, torch on 2 threads", 2, 2)):
        sampling, training = rllib_rates(runners, args.iterations, threads)
        rows.append((name, sampling, training))
    ray.shutdown()
    print(f"{'':31} {'sampling/s':>11} {'training/s':>11} {'x env':>7}")
    for name, sampling, training in rows:
        trained = "" if training is None else f"{training:11.0f}"
        print(f"{name:31} {sampling:11.0f} {trained:>11} {sampling / alone:7.3f}")


if __name__ == "__main__":
    main()
