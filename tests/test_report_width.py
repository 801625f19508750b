"""``craft-env report`` in an 80 or 100 column terminal: every table fits, no cell is cut, every value is there."""

from __future__ import annotations

import io
import json
import re

import pytest

from craft_env.eval.report.report import load_results, print_tables, table1_cells
from craft_env.eval.results.terminal import fitted_tables
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings

rich = pytest.importorskip("rich")
from rich.console import Console  # after the skip: rich is optional

LONG_DIRECTOR = "openrouter/meta-llama/llama-3.1-405b-instruct-turbo"
LONG_BUILDER = "anthropic/claude-3-5-sonnet-20241022"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Two run directories (one of two runs, so a pooled row too) with long model names, as a report reads them."""
    paths = []
    for name, oracle_n in (("a-run-directory-with-a-long-name", 0), ("b", 5)):
        out = tmp_path_factory.mktemp("width") / name
        run_benchmark(RunSettings(out=str(out), structures=[0, 1, 2], turns=4, runs=2, oracle_n=oracle_n))
        config = json.loads((out / "config.json").read_text())
        config.update(director_model=LONG_DIRECTOR, builder_model=LONG_BUILDER)
        (out / "config.json").write_text(json.dumps(config))
        paths.append(out)
    return load_results(paths)


def render(results, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    print_tables(results, console)
    return console.export_text()


def table1_block(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Table 1"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Each ± line"))
    return lines[start + 1 : end]


def stacked_cells(block: list[str]) -> list[list[str]]:
    """The cells of a stacked table as drawn: each row's lines joined per column, whitespace dropped."""
    rules = [i for i, line in enumerate(block) if re.fullmatch(r"[─┼]+", line.strip())]
    rows = []
    for start, end in zip(rules, rules[1:] + [len(block)]):
        pieces = [line.split("│") for line in block[start + 1 : end]]
        rows.append(["".join(re.sub(r"\s", "", piece[k]) for piece in pieces) for k in range(len(pieces[0]))])
    return rows


def squeeze(text: str) -> str:
    return re.sub(r"\s", "", text)


@pytest.mark.parametrize("width", [80, 100])
def test_every_table_fits_the_terminal_and_no_cell_is_cut(results, width):
    text = render(results, width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width


@pytest.mark.parametrize("width", [80, 100])
def test_table1_shows_every_value_of_every_row_in_its_own_cell(results, width):
    drawn = stacked_cells(table1_block(render(results, width)))
    assert len(drawn) == len(results) == 6  # 2 runs + pooled, twice
    for result, cells in zip(results, drawn):
        name = [result.label, f"directors:{result.director_model}", f"builder:{result.builder_model}",
                f"oracle:{result.oracle}"]
        assert cells[0] == squeeze("".join(name))
        assert cells[1:] == [squeeze(cell) for cell in table1_cells(result)]
    assert any("n/a" not in cell and cell != "0.000±0.000" for cells in drawn for cell in cells[1:6])


def test_a_wide_terminal_keeps_one_line_per_run(results):
    text = render(results, 300)
    for result in results:
        line = next(line for line in text.splitlines() if f" {result.label} " in line)
        assert all(cell in line for cell in table1_cells(result))
        assert result.director_model in line and result.builder_model in line


def test_a_table_too_wide_to_stack_is_transposed_with_every_value():
    headers = ["Run", *(f"Measure number {k}" for k in range(12))]
    rows = [[f"run-{r}", *(f"{r}.{k:03d}" for k in range(12))] for r in range(12)]
    console = Console(width=80, file=io.StringIO(), record=True, color_system=None)
    tables = fitted_tables(console, "Extras", headers, rows)
    assert len(tables) >= 2  # twelve rows do not fit side by side in 80 columns
    for table in tables:
        console.print(table)
    text = console.export_text()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    for cells in rows:
        assert all(cell in text for cell in cells)
    assert all(f"Measure number {k}" in text for k in range(12))

