"""Looking at logged games: the self-contained replay page (``page`` with its ``assets``) and one game as a
Markdown transcript (``transcript``).

May import ``craft_env.core``, ``datasets``, ``text``, ``envs``, ``eval.logs`` and ``eval.results``.
"""
