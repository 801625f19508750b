"""A run's numbers, from its logged games: the Table 1 row (``table``), ``RunResult`` (``results``), statistics
(``stats``), the failure taxonomy, team diagnostics and terminal tables (``terminal``); director behaviour
measures (``behaviour``) and the paired bootstrap rank bands that compare runs (``bands``); the checks of
numbers and text a file states (``checked``).

May import ``craft_env.core``, ``text``, ``models`` and ``eval.logs``.
"""
