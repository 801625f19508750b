"""The CRAFT environment as one unit: thin shells over ``craft_env.core``, one part per job.

Read in this order (the parts Jumanji gives an environment, by their names here):

=============  ==============================================================
env            ``craft`` (``raw_env``, ``env()``, ``parallel_env()``: PettingZoo AEC and Parallel)
               and ``vector`` (``vector_env()``: many episodes in lock-step)
state machine  ``game.CraftGame``: one episode over the kernels of ``core.game``
types          ``config.EnvConfig`` (the validated keywords); the kernels' records
               ``core.game.Config`` / ``Episode`` (``core.records`` packs them)
generator      ``core.generator`` (seeded targets) and ``core.starts`` (starting boards)
observer       ``core.observation`` (numbers), ``core.views`` (walls), ``textobs`` (text)
viewer         ``render`` (RGB, ANSI, PNG) with ``font``; logged games: ``eval.replay``
JIT            ``core.jit`` (compile notice, compiled entries), ``core.caches``
=============  ==============================================================
"""
