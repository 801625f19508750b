"""Training on the game: datasets from run logs, a text environment for LLM RL, and trainer adapters.

``docs/train.md`` is the guide. The modules, lightest first:

* ``clients``: chat clients the language-model agents call, scripted from a
  log (``ScriptedClient``) or answered by a learner (``SeatClient``);
* ``recorder``: the stand-in for a run's log that keeps turns in memory;
* ``replay``: a logged game played again through the runner, giving every
  seat's chat and reply;
* ``outcome``, ``split``, ``sft``, ``dpo``, ``export``: ``craft-env export
  --format sft|dpo``;
* ``rewards``, ``text_env``: ``craft_env.text_env(...)``; ``workers``: its
  games in several processes (``workers=K``);
* ``trl`` (needs the ``train`` extra: torch, transformers, trl): a
  ``rollout_func`` for TRL's ``GRPOTrainer``;
* ``openenv`` (needs the ``openenv`` package): the text environment as an
  OpenEnv server and its client.

Nothing here is imported by ``import craft_env``; ``craft_env.text_env`` loads
``text_env`` on first use.
"""
