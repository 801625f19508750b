"""Tables of text cells in the terminal (rich), shared by ``craft-env report`` and ``craft-env judge``.

rich is imported where a table is drawn, so the command line runs without it (``tests/test_cli.py``).
"""

from __future__ import annotations

from typing import Any


def terminal_console() -> Any:
    """A rich console (``None`` without rich); off a terminal, wide enough that tables never wrap."""
    try:
        from rich.console import Console
    except ImportError:
        return None
    console = Console()
    return console if console.is_terminal else Console(width=200)


def rich_table(title: str, headers: list[str], rows: list[list[str]]) -> Any:
    """A rich table of text cells: the first column left-aligned, the numbers right-aligned."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 else "right", no_wrap=True)
    for cells in rows:
        table.add_row(*cells)
    return table
