"""Running the benchmark and reading what it wrote: one sub-package per job.

* ``logs``: run directories and paper result logs in, one record per game
  out (``GameLog``);
* ``results``: a run's numbers (``RunResult``, Table 1 rows, statistics,
  taxonomy, diagnostics, director behaviour, rank bands);
* ``run``: playing many games (settings, runner, resume, lock, dry run, a
  person's seat);
* ``report``: the paper's Table 1, statistics, the failure taxonomy,
  diagnostics and plots, from logs alone;
* ``judges``: the SG/MM/PS judges and credit over logged games;
* ``replay``: the offline replay page and Markdown transcripts;
* ``leaderboard``: every run side by side with the paper's published rows.

Imports run down only, in the order of docs/architecture.md: ``logs``,
``results``, ``run``, ``judges``, ``report``, ``replay``, ``leaderboard``.
Model calls go through ``craft_env.models``, below this package
(docs/architecture.md).
"""
