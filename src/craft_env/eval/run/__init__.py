"""Playing the benchmark: validated settings, the concurrent resumable runner, its lock and progress, dry runs,
and a person's seat (``play``).

May import ``craft_env.core``, ``text``, ``envs``, ``models``, ``agents``, ``eval.logs`` and ``eval.results``.
"""
