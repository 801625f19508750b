"""The report of runs from their logs alone: terminal, Markdown and JSON tables (``report``) and PNG plots
(``plots``), with the judges' tables where judges were run.

May import everything below it in docs/architecture.md: ``eval.logs``, ``eval.results``, ``eval.run``,
``eval.judges``.
"""
