"""A team that learns to talk: multi-agent PPO on the JAX game, the whole loop jitted (docs/rl.md).

* ``config``: ``TeamConfig``, every setting of a run (presets live in ``examples/train_team.py``);
* ``game``: ``TurnGame``, the JAX game as the trainer sees it (one env, a turn in two phases);
* ``networks``: masked MLP policies with a linear path, critics (plain JAX);
* ``policy``: the team's policies and critics on observations plus the intent memory, the listener;
* ``ppo``: rollout (``lax.scan``), GAE and the PPO update, IPPO or MAPPO;
* ``mock``: a tiny signalling game with the same interface, for tests.

Importing it needs jax and optax (the ``jax`` extra); ``import craft_env`` never imports it.
"""
