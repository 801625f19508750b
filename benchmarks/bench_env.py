"""Agent steps per second of the PettingZoo envs, beside a do-nothing env of the same shape.

Run: ``python benchmarks/bench_env.py [--steps 200000]``.

Every env is driven by the same loop with random legal actions (a uniform
draw over the action mask from a pre-drawn pool of random numbers), so the
do-nothing env's rate is the floor set by PettingZoo's API and the loop
itself; the ratio says how much of the budget the game takes. Each row
alternates ``--repeat`` runs of the env and of the do-nothing env and
prints the medians; the ratio is the median of the pair-by-pair ratios (the
machine may be shared and drift: a pair is measured at one speed).

The row ``parallel_env(), no game`` is ``parallel_env()`` with its game
kernels replaced by stand-ins that only count turns: what the env's
Python (dicts, observation copies, infos, the conversation) costs alone,
the ceiling that no kernel work can lift. The row ``do-nothing + game``
is the other ceiling: the do-nothing env's step plus the game kernels one
``parallel_env()`` step calls (the same compiled entries, legal actions
from the game's masks), so its ratio is the most any Python shell around
today's kernels could reach while returning what the do-nothing env
returns (fresh observation copies, four dicts).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from numba import njit
from pettingzoo import AECEnv, ParallelEnv

import craft_env
from craft_env.core import game as kernels

AGENTS = ["director_1", "director_2", "director_3", "builder"]


@njit(cache=True)
def _nth_set(mask, u):
    """The set position of ``mask`` at fraction ``u`` of its count (a uniform draw when ``u`` is)."""
    count = 0
    for a in range(mask.shape[0]):
        count += mask[a] != 0
    target = int(u * count)
    for a in range(mask.shape[0]):
        if mask[a] != 0:
            if target == 0:
                return a
            target -= 1
    return -1


class _Picker:
    """Uniform random legal action from an int8 mask, cheap enough not to dominate the loop."""

    def __init__(self, seed: int = 0) -> None:
        self.pool = np.random.default_rng(seed).random(1 << 16).tolist()
        self.index = 0

    def __call__(self, mask: np.ndarray) -> int:
        self.index = (self.index + 1) & 0xFFFF
        return _nth_set(mask, self.pool[self.index])


class NullAEC(AECEnv):
    """A do-nothing AEC env with CRAFT's agents, spaces and episode length."""

    metadata = {"name": "null_v0", "render_modes": []}

    def __init__(self, max_turns: int = 20) -> None:
        super().__init__()
        reference = craft_env.raw_env()
        self.possible_agents = list(AGENTS)
        self.observation_spaces = dict(reference.observation_spaces)
        self.action_spaces = dict(reference.action_spaces)
        self.max_steps = 4 * max_turns
        self._obs = {a: self.observation_spaces[a].sample() for a in AGENTS}
        for obs in self._obs.values():
            obs["action_mask"][:] = 1

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self.steps = 0
        self._index = 0
        self.agent_selection = AGENTS[0]

    def observe(self, agent):
        obs = self._obs[agent]
        return {"observation": obs["observation"].copy(), "action_mask": obs["action_mask"].copy()}

    def step(self, action):
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        self.steps += 1
        if self.steps >= self.max_steps:
            for agent in AGENTS:
                self.truncations[agent] = True
        self._index = (self._index + 1) % 4
        self.agent_selection = AGENTS[self._index]


class NullParallel(ParallelEnv):
    """A do-nothing Parallel env with CRAFT's agents, spaces and two parallel steps per turn."""

    metadata = {"name": "null_parallel_v0", "render_modes": []}

    def __init__(self, max_turns: int = 20) -> None:
        self.inner = NullAEC(max_turns)
        self.possible_agents = list(AGENTS)
        self.max_steps = 2 * max_turns
        self.observe = self.inner.observe

    def observation_space(self, agent):
        return self.inner.observation_spaces[agent]

    def action_space(self, agent):
        return self.inner.action_spaces[agent]

    def reset(self, seed=None, options=None):
        self.agents = list(AGENTS)
        self.steps = 0
        return {a: self.observe(a) for a in AGENTS}, {a: {} for a in AGENTS}

    def step(self, actions):
        self.steps += 1
        done = self.steps >= self.max_steps
        observations = {a: self.observe(a) for a in AGENTS}
        rewards = dict.fromkeys(AGENTS, 0.0)
        terminations = dict.fromkeys(AGENTS, False)
        truncations = dict.fromkeys(AGENTS, done)
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, {a: {} for a in AGENTS}


class NullParallelWithGame(NullParallel):
    """The do-nothing Parallel env that also plays CRAFT: its step adds only the game's kernel calls.

    Observations are fresh copies of the game's kept rows and masks (the
    do-nothing env copies as many arrays); infos stay empty.
    """

    metadata = {"name": "null_parallel_game_v0", "render_modes": []}

    def __init__(self, max_turns: int = 20) -> None:
        super().__init__(max_turns)
        self.game = game = craft_env.parallel_env(max_turns=max_turns).game
        self.observe = self._observe_game
        self._rows = {agent: (game.director_obs[seat], game.director_masks[seat])
                      for seat, agent in enumerate(AGENTS[:3])}
        self._rows["builder"] = (game.builder_obs, game.builder_mask)
        self._builder_phase = False

    def _observe_game(self, agent):
        obs, mask = self._rows[agent]
        return {"observation": obs.copy(), "action_mask": mask.copy()}

    def reset(self, seed=None, options=None):
        self.game.reset(seed)
        self._builder_phase = False
        return super().reset(seed, options)

    def step(self, actions):
        game = self.game
        if self._builder_phase:
            game._play_builder(game._config_record, game._episode_record, 0, actions["builder"], 0, game.result)
            if game.result[kernels.RESULT_COMPLETED] == 1.0:
                self.steps = self.max_steps - 1  # the game is complete: this step ends the episode
        else:
            for seat in game.order.tolist():
                game._speak(game.director_masks, game.spoken, seat, actions[AGENTS[seat]], game.director_obs,
                            game.builder_obs)
        self._builder_phase = not self._builder_phase
        return super().step(actions)


def _counting_builder(info):
    """A builder kernel for the episode scalars ``info`` that plays nothing: the turn advances, all else is 0."""

    def count_turn(config, episode, b, action, override, out):
        info[b]["turn"] += 1
        out[kernels.RESULT_TURN] = info[b]["turn"]
        return 0

    return count_turn


def parallel_env_without_game(**config):
    """``parallel_env()`` whose game kernels do nothing (see the module docstring)."""
    env = craft_env.parallel_env(**config)
    env.game._speak = lambda *rows: True
    env.game._play_builder = _counting_builder(env.game.episode.info)
    return env


def aec_rate(env, steps: int) -> float:
    """Agent steps per second over ``steps`` steps (episodes restarted as needed)."""
    pick = _Picker()
    env.reset(seed=0)
    done = 0
    start = time.perf_counter()
    while done < steps:
        for agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            env.step(None if termination or truncation else pick(obs["action_mask"]))
            done += 1
            if done >= steps:
                break
        else:
            env.reset()
    return done / (time.perf_counter() - start)


def parallel_rate(env, steps: int) -> float:
    """Joint (parallel) steps per second."""
    pick = _Picker()
    observations, _ = env.reset(seed=0)
    done = 0
    start = time.perf_counter()
    while done < steps:
        actions = {agent: pick(obs["action_mask"]) for agent, obs in observations.items()}
        observations, *_ = env.step(actions)
        done += 1
        if not env.agents:
            observations, _ = env.reset()
    return done / (time.perf_counter() - start)


def paired(rate, make_env, make_null, steps: int, rounds: int) -> tuple[float, float, float]:
    """``(env rate, do-nothing rate, ratio)``: medians over ``rounds`` alternating runs of both.

    The ratio is taken run pair by run pair, so a machine whose speed
    drifts during the measurement (a shared VM) moves both sides alike.
    """
    env, null = make_env(), make_null()
    rates, floors, ratios = [], [], []
    for _ in range(rounds):
        rates.append(rate(env, steps))
        floors.append(rate(null, steps))
        ratios.append(rates[-1] / floors[-1])
    return statistics.median(rates), statistics.median(floors), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="agent steps per measurement")
    parser.add_argument("--repeat", type=int, default=5, help="alternating env / do-nothing runs per row")
    args = parser.parse_args()
    aec_rate(craft_env.raw_env(), 2_000)
    parallel_rate(craft_env.parallel_env(), 1_000)
    steps, joint = args.steps, args.steps // 4
    rows = [
        ("raw_env (AEC)", aec_rate, craft_env.raw_env, NullAEC, steps, "agent steps/s", 200_000),
        ("env() (AEC, checked)", aec_rate, craft_env.env, NullAEC, steps, "agent steps/s", 50_000),
        ("parallel_env()", parallel_rate, craft_env.parallel_env, NullParallel, joint, "joint steps/s", 150_000),
        ("parallel_env(), no game", parallel_rate, parallel_env_without_game, NullParallel, joint, "joint steps/s",
         None),
        ("do-nothing + game", parallel_rate, NullParallelWithGame, NullParallel, joint, "joint steps/s", None),
        ("raw_env, oracle_n=5", aec_rate, lambda: craft_env.raw_env(oracle_n=5), NullAEC, steps,
         "agent steps/s", None),
        ("raw_env, text mode", aec_rate, lambda: craft_env.raw_env(message_mode="text"), NullAEC, steps // 20,
         "agent steps/s", None),
    ]
    print(f"{'env':24} {'rate':>12} {'null env':>12} {'ratio':>7} {'goal':>9}  unit")
    for name, rate, make_env, make_null, count, unit, goal in rows:
        value, floor, ratio = paired(rate, make_env, make_null, count, args.repeat)
        goal_text = f"{goal:,}" if goal else "-"
        print(f"{name:24} {value:12,.0f} {floor:12,.0f} {ratio:7.2f} {goal_text:>9}  {unit}")


if __name__ == "__main__":
    main()
