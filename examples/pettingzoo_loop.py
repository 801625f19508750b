"""The plain PettingZoo loop with action masks: a random team plays one game of CRAFT.

Copy the middle ten lines. A turn is two parallel steps (the directors
speak, then the builder moves); the idle side's mask allows only its no-op,
so "sample an allowed action for everyone" is always right.
"""

import numpy as np

import craft_env

env = craft_env.parallel_env(oracle_n=5)  # the paper's oracle condition: 5 candidate moves + no-op
observations, infos = env.reset(seed=0)
rng = np.random.default_rng(0)
while env.agents:
    actions = {
        agent: int(rng.choice(np.flatnonzero(obs["action_mask"])))  # any allowed action id
        for agent, obs in observations.items()
    }
    observations, rewards, terminations, truncations, infos = env.step(actions)
print(f"turns: {env.turn}, progress: {infos['builder']['metrics']['progress']:.3f}")
