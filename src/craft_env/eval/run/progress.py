"""One rich progress bar for long commands (``craft-env run``, ``craft-env judge``), or nothing.

A task counts finished items and shows named numeric fields beside the bar
(mean progress, model calls, cost). The bar is drawn only when asked for and
given a rich console, so commands run the same without a terminal.
"""

from __future__ import annotations

from typing import Any

# Field name -> the column that shows it (rich's task-field syntax).
FIELD_COLUMNS = {
    "progress": "progress {task.fields[progress]:.3f}",
    "calls": "calls {task.fields[calls]}",
    "cost": "${task.fields[cost]:.4f}",
}


class ProgressBar:
    """Tasks of ``total`` items with the ``fields`` of ``FIELD_COLUMNS`` beside each bar."""

    def __init__(self, enabled: bool, console: Any, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self.bar = None
        if enabled and console is not None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                *(TextColumn(FIELD_COLUMNS[name]) for name in fields),
                TimeElapsedColumn(),
                console=console,
            )

    def __enter__(self) -> ProgressBar:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def add(self, label: str, total: int, done: int) -> Any:
        """A new task, ``done`` of ``total`` items already finished; its fields start at 0."""
        if self.bar is None:
            return None
        return self.bar.add_task(label, total=total, completed=done, **dict.fromkeys(self.fields, 0))

    def advance(self, task: Any, **fields: float) -> None:
        """One more item finished; ``fields`` are the task's new values."""
        if self.bar is not None:
            self.bar.update(task, advance=1, **fields)
