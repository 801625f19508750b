"""Tables of text cells in the terminal (rich), shared by ``craft-env report`` and ``craft-env judge``.

``fitted_tables`` draws a table so that it fits the console and no cell is
ever cut to "…" (docs/benchmark.md, "Report"), in the first of three
layouts that fits:

* **wide**: one line per row, as ``report.md`` has it;
* **stacked**: the leading identity columns (run, directors, builder,
  oracle) become lines of the first cell, each ``mean ± SEM`` becomes the
  mean over ``±SEM``, and long names fold inside the first column: Table 1
  of the paper fits 80 columns this way, one row per run;
* **transposed**: one column per row, one line per header, in as many
  blocks side by side as the width needs.

rich is imported where a table is drawn, so the command line runs without it (``tests/test_cli.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from craft_env.text.clean import printable

#: Leading headers that name a row rather than measure it: stacked together into the first cell.
IDENTITY_HEADERS = ("Run", "Directors", "Builder", "Oracle")
PLUS_MINUS = " ± "
#: The narrowest first column a stacked table is drawn with (its names fold to this width).
MIN_NAME_WIDTH = 12
#: The widest a transposed block's name column and row columns are made before their text folds.
MAX_TRANSPOSED_WIDTH = 24


def terminal_console() -> Any:
    """A rich console (``None`` without rich); off a terminal, wide enough that tables never wrap."""
    try:
        from rich.console import Console
    except ImportError:
        return None
    console = Console()
    return console if console.is_terminal else Console(width=200)


def rich_table(title: str, headers: list[str], rows: list[list[str]]) -> Any:
    """A rich table of text cells: the first column left-aligned, the numbers right-aligned.

    Cells may hold text from files or models (run labels, model names): control characters are escaped
    (``text.clean.printable``) and rich markup in them is not read.
    """
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(printable(title)), title_justify="left")
    for index, header in enumerate(headers):
        table.add_column(header, justify="left" if index == 0 else "right", no_wrap=True)
    for cells in rows:
        table.add_row(*(Text(printable(str(cell))) for cell in cells))
    return table


def fitted_tables(console: Any, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[Any]:
    """The table as rich tables that fit ``console.width`` without cutting a cell (the module docstring).

    Its text may come from files or models (run labels, model names): control characters are escaped first
    (``text.clean.printable``), whatever the layout.
    """
    title = printable(title)
    headers, rows = [printable(h) for h in headers], [[printable(str(c)) for c in cells] for cells in rows]
    width = console.width
    wide = rich_table(title, headers, rows)
    if console.measure(wide, options=console.options.update_width(10**6)).maximum <= width:
        return [wide]
    stacked = stacked_table(title, headers, rows, width)
    if stacked is not None:
        return [stacked]
    return transposed_tables(title, headers, rows, width)


def _identity_columns(headers: Sequence[str]) -> int:
    count = 0
    while count < len(headers) and headers[count] in IDENTITY_HEADERS:
        count += 1
    return max(count, 1)


def _lines(cell: str) -> list[str]:
    """A cell as the stacked layout draws it: ``mean ± sem`` on two lines, anything else as it is."""
    mean, sign, sem = cell.partition(PLUS_MINUS)
    return [mean, "±" + sem] if sign else cell.splitlines() or [""]


def _longest_word(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


def stacked_table(title: str, headers: list[str], rows: list[list[str]], width: int) -> Any | None:
    """The stacked layout (one row per table row, identity lines in the first cell), or None if too wide."""
    from rich import box
    from rich.table import Table

    keys = _identity_columns(headers)
    stacked_rows = [[_lines(cell) for cell in cells[keys:]] for cells in rows]
    widths = [
        max([_longest_word(header)] + [len(line) for cells in stacked_rows for line in cells[column]])
        for column, header in enumerate(headers[keys:])
    ]
    columns = 1 + len(widths)
    # Square box without outer edges: one rule between columns, one space of padding each side of it.
    overhead = 3 * (columns - 1)
    if MIN_NAME_WIDTH + sum(widths) + overhead > width:
        return None
    split = any(len(lines) > 1 for cells in stacked_rows for lines in cells)
    table = Table(
        title=title, title_justify="left", box=box.SQUARE, show_edge=False, pad_edge=False,
        show_lines=split or keys > 1,
        caption="Each ± line is the standard error of the mean above it." if split else None,
        caption_justify="left",
    )
    table.add_column(headers[0], overflow="fold")
    for header, column_width in zip(headers[keys:], widths):
        table.add_column(header, justify="right", width=column_width, overflow="fold")
    for cells, lines in zip(rows, stacked_rows):
        name = [cells[0], *(f"{header.lower()}: {cell}" for header, cell in zip(headers[1:keys], cells[1:keys]))]
        table.add_row("\n".join(name), *("\n".join(cell) for cell in lines))
    return table


def transposed_tables(title: str, headers: list[str], rows: list[list[str]], width: int) -> list[Any]:
    """The transposed layout: a row per header, a column per table row, in blocks that fit ``width``."""
    from rich import box
    from rich.table import Table

    names = max(
        min(max((len(h) for h in headers[1:]), default=1), MAX_TRANSPOSED_WIDTH),
        max((_longest_word(h) for h in headers[1:]), default=1),
    )
    column_widths = [
        max(min(len(cells[0]), MAX_TRANSPOSED_WIDTH), max(len(cell) for cell in cells[1:]) if cells[1:] else 1)
        for cells in rows
    ]
    blocks: list[list[int]] = [[]]
    used = names
    for index, column_width in enumerate(column_widths):
        if blocks[-1] and used + 3 + column_width > width:
            blocks.append([])
            used = names
        blocks[-1].append(index)
        used += 3 + column_width
    tables = []
    for number, block in enumerate(blocks, 1):
        part = f" ({number}/{len(blocks)})" if len(blocks) > 1 else ""
        table = Table(title=title + part, title_justify="left", box=box.SQUARE, show_edge=False, pad_edge=False)
        table.add_column(headers[0], width=names, overflow="fold")
        for index in block:
            table.add_column(rows[index][0], justify="right", width=column_widths[index], overflow="fold")
        for position, header in enumerate(headers[1:], 1):
            table.add_row(header, *(rows[index][position] for index in block))
        tables.append(table)
    return tables
