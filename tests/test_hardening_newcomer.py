"""What a newcomer trips on (issue 35, items 22-28): the install's compile lines, messages, pages, leftovers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from examples_support import load_example  # tests/ is on sys.path (conftest)

ROOT = Path(__file__).resolve().parent.parent

# A stand-in for ``craft_env.precompile --progress``: three kernels, then its total line.
FAKE_PRECOMPILE = (
    "import sys\n"
    "for k in (1, 2, 3):\n"
    "    print(f'progress: {k}/3', flush=True)\n"
    "print('envs: 0.1 s')\n"
    "print('total: 0.1 s, 3 kernels compiled')\n"
)
# The build hook as pip runs it: in a child whose stdout and stderr pip captures (shown only under -v).
HOOK = (
    "import sys; sys.path.insert(0, sys.argv[1]); import craft_build; "
    "craft_build.PRECOMPILE = sys.argv[2]; craft_build.EVERY = 0.0; craft_build._compile_kernels()"
)
FAKE_PIP = (
    "import subprocess, sys\n"
    "done = subprocess.run([sys.executable, '-c', sys.argv[1], sys.argv[2], sys.argv[3]], capture_output=True)\n"
    "print('pip: done', flush=True)\n"
    "sys.exit(done.returncode)\n"
)


def _pip(stdout) -> subprocess.CompletedProcess:
    """The fake pip in a new session (no terminal, as in CI or Docker), its stdout ``stdout``."""
    args = [sys.executable, "-c", FAKE_PIP, HOOK, str(ROOT / "build_backend"), FAKE_PRECOMPILE]
    return subprocess.run(args, stdout=stdout, stderr=subprocess.STDOUT, start_new_session=True, timeout=120)


def _compile_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("craft_env: ")]


def _check(lines: list[str]) -> None:
    assert lines[0].startswith("craft_env: compiling the numba kernels ahead of time (if none is cached: about 45 s")
    assert [line.split(": ", 2)[-1].split(" (")[0] for line in lines[1:4]] == ["1/3", "2/3", "3/3"]
    assert lines[-1].startswith("craft_env: 3 kernels compiled (")


def test_the_install_shows_its_compile_progress_through_a_pipe():
    done = _pip(subprocess.PIPE)
    assert done.returncode == 0
    _check(_compile_lines(done.stdout.decode()))


def test_the_install_shows_its_compile_progress_in_a_log_opened_for_appending(tmp_path):
    log = tmp_path / "install.log"
    log.write_text("earlier\n")
    with log.open("a") as handle:
        assert _pip(handle).returncode == 0
    text = log.read_text()
    assert text.startswith("earlier\n") and text.endswith("pip: done\n")
    _check(_compile_lines(text))


def test_the_training_example_trains_a_fixed_number_of_updates_by_default():
    example = load_example("train_builder")
    default = example.parse_args([])
    assert (default.updates, default.minutes) == (example.DEFAULT_UPDATES, None)
    timed = example.parse_args(["--minutes", "2"])
    assert (timed.updates, timed.minutes) == (None, 2.0)
    for bad in (["--updates", "0"], ["--minutes", "nan"], ["--minutes", "-1"]):
        with pytest.raises(SystemExit):
            example.parse_args(bad)


LEFTOVERS = ("board.html", "replay.html", "model.entry.json", "structures.json", "data/sft/train.jsonl",
             "out/paper.json", "shards/1/config.json", "craft_report/report.md", "sft-model/x", "adapters/dpo/x")


def test_what_the_docs_commands_write_is_ignored_by_git():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "check-ignore", "--no-index", *LEFTOVERS], cwd=ROOT, capture_output=True,
                          text=True)
    assert sorted(done.stdout.split()) == sorted(LEFTOVERS)
    kept = subprocess.run(["git", "check-ignore", "--no-index", "tests/data/x.json", "src/craft_env/data/x"],
                          cwd=ROOT, capture_output=True, text=True)
    assert kept.stdout == ""


def _defined_names(code: str) -> set[str]:
    import ast

    return {node.name for node in ast.parse(code).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def test_a_pasted_python_block_uses_no_function_only_its_hidden_setup_defines():
    from docs_blocks import documented_pages, read_page  # tests/ is on sys.path (conftest)

    hidden = []
    for path in documented_pages():
        for block in read_page(path).blocks:
            if block.language == "python" and block.setup and block.skip is None:
                used = {name for name in _defined_names(block.setup) if f"{name}(" in block.text}
                hidden += [f"{block.where}: {name}" for name in sorted(used - _defined_names(block.text))]
    assert hidden == []


def test_the_docs_say_what_a_pasted_line_needs():
    index = (ROOT / "docs" / "index.md").read_text()
    scripted = next(p for p in index.split("\n\n") if "`scripted/team` runs" in p)
    assert 'pip install -e ".[llm]"' in scripted  # scripted/team is a litellm provider
    pytest_row = next(line for line in index.splitlines() if "python -m pytest" in line)
    assert 'pip install -e ".[test]"' in pytest_row
    readme = (ROOT / "README.md").read_text()
    board = next(line for line in readme.splitlines() if line.startswith("craft-env leaderboard runs/a"))
    assert "--protocol paper runs rank among the paper's published rows" in board


@pytest.fixture(scope="module")
def small_run(tmp_path_factory) -> Path:
    from craft_env.cli import main

    out = tmp_path_factory.mktemp("newcomer") / "run"
    assert main(["run", "--out", str(out), "--structures", "0,1,2", "--turns", "4", "--no-progress",
                 "--no-plots"]) == 0
    return out


def test_import_of_a_missing_directory_says_it_is_missing(tmp_path, capsys):
    from craft_env.cli import main

    assert main(["import", str(tmp_path / "nowhere"), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "nowhere' does not exist" in err and "report:" not in err
    assert not (tmp_path / "out").exists()


def test_import_names_the_report_command_for_what_it_wrote(tmp_path, capsys):
    from paper_log_samples import paper_log, write_log

    from craft_env.cli import main

    write_log(tmp_path / "in" / "good.json", paper_log())
    assert main(["import", str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    assert f"read with craft-env report {tmp_path / 'out'}\n" in capsys.readouterr().out


def test_a_small_board_gives_its_size_in_kilobytes(small_run, tmp_path, capsys):
    from craft_env.cli import main

    assert main(["leaderboard", str(small_run), "--format", "md", "-o", str(tmp_path / "board.md")]) == 0
    out = capsys.readouterr().out
    assert "0.00 MB" not in out and ("kB)" in out or "bytes)" in out)


def test_a_transcript_says_a_pass_is_a_pass():
    from craft_env.eval.replay.transcript import _outcome

    passed = {"builder": {"followed": []}, "move": None, "question": None, "legal": True, "optimal": False}
    assert _outcome(passed) == "Builder follows nobody → passes (no move)"
    unread = {**passed, "legal": False, "reason": "no MOVE line"}
    assert _outcome(unread) == "Builder follows nobody → no move: failed (no MOVE line)"


def _page_at(driver, page: Path, width: int) -> None:
    driver.set_window_size(width, 900)
    driver.get(page.as_uri())
    driver.execute_script("window.scrollTo(0, 0)")


def test_wide_tables_scroll_in_their_own_box_with_the_entry_in_view(small_run, tmp_path):
    chromium = pytest.importorskip("chromium")
    from craft_env.cli import main

    board, replay = tmp_path / "board.html", tmp_path / "replay.html"
    assert main(["leaderboard", str(small_run), "-o", str(board)]) == 0
    assert main(["replay", str(small_run), "-o", str(replay)]) == 0
    driver = chromium.start(tmp_path / "profile", "800,900")
    try:
        for page, table, first in ((board, "table.board", "td:has(> span.name)"),
                                   (replay, "#index-table", "td:first-child")):
            _page_at(driver, page, 800)
            found = driver.execute_script(
                "const t = document.querySelector(arguments[0]); t.scrollLeft = t.scrollWidth;"
                "const cell = t.querySelector(arguments[1]);"
                "return [document.documentElement.scrollWidth, innerWidth, t.scrollWidth, t.clientWidth,"
                " t.scrollLeft, cell.getBoundingClientRect().left - t.getBoundingClientRect().left];",
                table, first)
            page_width, window_width, table_width, box_width, scrolled, cell_left = found
            assert page_width <= window_width, page  # the page itself never scrolls sideways
            assert table_width > box_width and scrolled > 0, page  # the table does, in its box
            assert abs(cell_left) < 2, page  # with its entry (game) column still at its left edge
        _page_at(driver, replay, 1400)
        driver.execute_script("document.querySelector('#index-table tbody tr').click()")
        title = driver.execute_script("return document.getElementById('game-title').textContent")
        assert title.endswith("game #0 of 3"), title
    finally:
        driver.quit()
