"""``craft-env leaderboard``: every run side by side, beside the paper's published rows (docs/leaderboard.md).

* ``entries``: one row per run directory or paper-log group, and its group
  (dataset, protocol, condition); ``entryfile``: entries to share, checked;
  ``published``: the paper's Table 1 rows; ``targets``: datasets and
  complexity labels;
* ``board``: all of it as one dict, with the rank bands and director
  behaviour measures of ``eval.results`` (``bands``, ``behaviour``);
* ``page`` (HTML), ``markdown``, and ``command`` (the subcommand; its
  options in ``options``).

Importing this package loads nothing: the CLI reads ``options`` to build
its parser without loading the readers.
"""
