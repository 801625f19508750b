"""A run's numbers, from its logged games: the Table 1 row (``table``), ``RunResult`` (``results``), statistics
(``stats``), the failure taxonomy, team diagnostics and terminal tables (``terminal``).

May import ``craft_env.core``, ``text``, ``models`` and ``eval.logs``.
"""
