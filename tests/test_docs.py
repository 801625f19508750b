"""The docs run: every shell and Python block of README.md and docs/*.md, offline, against a small run.

The rules (what runs, placeholders, ``<!-- docs-test: skip "reason" -->``, the static checks) are in the
docstring of ``tests/docs_blocks.py``. One test per block that runs (a skip, with its reason, for a marked
block), one static check per page, and the collector's own tests on pages written here. The whole file
takes about 70 s on 2 cores (see README.md, "Developing").
"""

from __future__ import annotations

import re

import pytest

from craft_env.cli import build_parser
from craft_env.datasets import load_dataset
from docs_blocks import (  # tests/ is on sys.path (conftest)
    SHRUNK_MODEL_TURNS,
    SHRUNK_RUN,
    Block,
    DocsError,
    DocsRun,
    PageRun,
    Sandbox,
    SharedBlocks,
    cheaper,
    documented_pages,
    page_name,
    read_page,
    skip_reason,
    static_problems,
    substitute,
)

PAGES = {page_name(path): read_page(path) for path in documented_pages()}
BLOCKS = [(name, block) for name, page in PAGES.items() for block in page.blocks if block.runs]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Sandbox:
    return Sandbox(tmp_path_factory.mktemp("docs"))


@pytest.fixture(scope="module")
def docs_run(sandbox):
    run = DocsRun(sandbox, PAGES)
    yield run
    run.close()


@pytest.fixture(scope="module")
def small_run_games() -> tuple[set[str], int]:
    """The structure ids of the small run's dataset (the default, the paper's 20) and their count."""
    structures = load_dataset("paper")
    return {s.id for s in structures}, len(structures)


@pytest.mark.parametrize("name, block", BLOCKS, ids=[f"{name}:{block.line}" for name, block in BLOCKS])
def test_documented_block_runs(name, block, docs_run):
    if skip_reason(block):
        pytest.skip(skip_reason(block))
    failure = docs_run.result(name, block)
    if failure:
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize("name", list(PAGES))
def test_documented_commands_flags_games_and_files_exist(name, small_run_games):
    problems = static_problems(PAGES[name], build_parser(), *small_run_games)
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ the collector itself


def write(tmp_path, text: str):
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return read_page(page)


def test_a_broken_documented_command_fails_naming_page_line_and_command(tmp_path, sandbox):
    page = write(
        tmp_path,
        "# A page\n\n```bash\ncraft-env run --out runs/x\n"
        "craft-env transcript runs/<ts> --game structure_099\necho never\n```\n",
    )
    failure = PageRun(sandbox, page).result(page.blocks[0])
    assert failure.startswith("page.md, block at line 3 (bash) failed")
    assert "command at line 5: craft-env transcript runs/<ts> --game structure_099" in failure
    assert "craft-env transcript runs/docs-run --game structure_099 (at line 5) exited with 2" in failure
    assert "structure_099" in failure.split("last 40 lines of output:")[1]  # the CLI's own error, in the tail


def test_a_failure_inside_an_and_list_is_caught(tmp_path, sandbox):
    page = write(
        tmp_path, "```sh\ncraft-env report no-such-dir && echo skipped\necho the block goes on\n```\n"
    )
    failure = PageRun(sandbox, page).result(page.blocks[0])
    assert "craft-env report no-such-dir (at line 2) exited with 2" in failure


def test_a_python_block_fails_with_the_page_line_of_its_error(tmp_path, sandbox):
    page = write(
        tmp_path,
        "```python\nimport craft_env\nvalue = 1\n```\n\ntext\n\n"
        "```python\nassert value == 1\nraise RuntimeError('documented code broke')\n```\n",
    )
    run = PageRun(sandbox, page)
    assert run.result(page.blocks[0]) is None
    failure = run.result(page.blocks[1])
    run.close()
    assert 'page.md", line 10' in failure and "RuntimeError: documented code broke" in failure


def test_a_console_block_must_print_the_output_it_shows(tmp_path, sandbox):
    page = write(
        tmp_path,
        "```console\n$ craft-env generate --n 2 -o two.json\nWrote 2 ... two.json\n```\n\n"
        "```console\n$ echo hello\nhello\ngoodbye\n```\n",
    )
    run = PageRun(sandbox, page)
    assert run.result(page.blocks[0]) is None, run.result(page.blocks[0])
    assert "shows output line 'goodbye'" in run.result(page.blocks[1])


def test_a_flag_or_command_that_does_not_exist_fails_the_static_check(tmp_path):
    page = write(
        tmp_path,
        '<!-- docs-test: skip "needs a key" -->\n```bash\n'
        "craft-env run --director-model openai/x --turn 3   # one flag wrong\n"
        "craft-env transcript runs/<ts> --game eval_003\n```\n\n"
        "Prose with `craft-env export DIR --format paper|yaml` and `craft-env frobnicate`,\n"
        "and `craft-env report DIR [--no-plots] [--out OUT]` is fine; `tests/no_such_test.py`.\n",
    )
    problems = static_problems(page, build_parser(), {"structure_001", "structure_002"}, 2)
    assert [re.split(r" \(commands: | is not one of ", problem)[0] for problem in problems] == [
        "page.md:3: craft-env run --director-model openai/x --turn 3: craft-env run has no option --turn",
        "page.md:4: craft-env transcript runs/<ts> --game eval_003: --game eval_003: no game of that id "
        "(ids look like structure_001, or an index 0..1)",
        "page.md:7: craft-env export DIR --format paper|yaml: craft-env export --format: yaml",
        "page.md:7: craft-env frobnicate: craft-env has no command 'frobnicate'",
        "page.md:8: tests/no_such_test.py: no such file in the repository",
    ]


def test_a_synopsis_is_checked_across_its_indented_lines(tmp_path):
    page = write(tmp_path, "```text\ncraft-env report DIR [--out OUT]\n    [--no-plots] [--colour]\n```\n")
    assert static_problems(page, build_parser(), set(), 0) == [
        "page.md:2: craft-env report DIR [--out OUT] [--no-plots] [--colour]: craft-env report has no option --colour"
    ]


def test_a_skipped_block_is_a_skip_and_still_checked(tmp_path):
    page = write(
        tmp_path,
        '<!-- docs-test: skip "needs Ray" -->\n\n```python\n'
        "from craft_env.wrappers import no_such_wrapper\n```\n",
    )
    assert skip_reason(page.blocks[0]) == "needs Ray"
    problems = static_problems(page, build_parser(), set(), 0)
    assert problems == [
        "page.md, block at line 3 (python): from craft_env.wrappers import no_such_wrapper: no such name"
    ]
    page = write(tmp_path, "```python\nimport numpy\nfrom no_such_library.sub import thing\n```\n")
    assert skip_reason(page.blocks[0]) == "needs no_such_library, which is not installed"


def test_an_unmarked_install_command_is_refused(tmp_path):
    page = write(tmp_path, "```bash\npython -m pip install -e .\n```\n")
    assert static_problems(page, build_parser(), set(), 0) == [
        "page.md, block at line 1 (bash): installs something; "
        'mark it <!-- docs-test: skip "an install command" -->'
    ]


def test_directives_must_be_well_formed_and_next_to_a_block(tmp_path):
    with pytest.raises(DocsError, match="page.md:1: a docs-test directive must come just before"):
        write(tmp_path, '<!-- docs-test: skip "x" -->\n\nsome prose\n\n```bash\ntrue\n```\n')
    with pytest.raises(DocsError, match=r'page.md:1: write a skip as <!-- docs-test: skip "reason" -->'):
        write(tmp_path, "<!-- docs-test: skip -->\n```bash\ntrue\n```\n")
    with pytest.raises(DocsError, match="unknown docs-test directive 'skipp'"):
        write(tmp_path, '<!-- docs-test: skipp "x" -->\n```bash\ntrue\n```\n')
    page = write(
        tmp_path,
        "<!-- docs-test: setup\ndef my_builder(obs, mask):\n    return 0\n-->\n"
        "```python\nmy_builder(None, None)\n```\n",
    )
    assert page.blocks[0].setup.strip() == "def my_builder(obs, mask):\n    return 0"


def test_a_shell_block_two_pages_hold_runs_once(tmp_path):
    ran, calls = SharedBlocks(), []
    first = Block(tmp_path / "a.md", 3, "bash", "false\n")
    again = Block(tmp_path / "b.md", 9, "bash", "false\n")

    def run(block):
        calls.append(block)
        return "a.md, block at line 3 (bash) failed"

    assert ran.once(first, run) == "a.md, block at line 3 (bash) failed"
    assert ran.once(again, run) == (
        "b.md, block at line 9 (bash): the same block as a.md, block at line 3 (bash), "
        "which failed:\na.md, block at line 3 (bash) failed"
    )
    assert calls == [first]


def test_placeholders_and_the_shrunk_run():
    text = (
        "craft-env run --director-model M --builder-model M\ncraft-env judge DIR --judge-model M\n"
        "craft-env replay runs/<timestamp> runs/<ts> -o r.html\ncraft-env leaderboard RUN_DIR... -o b.html\n"
    )
    assert substitute(text) == (
        "craft-env run --director-model scripted/team --builder-model scripted/team\n"
        "craft-env judge runs/docs-run --judge-model scripted/team\n"
        "craft-env replay runs/docs-run runs/docs-run -o r.html\n"
        "craft-env leaderboard runs/docs-run -o b.html\n"
    )
    assert substitute('M = read("runs/<ts>")', python=True) == 'M = read("runs/docs-run")'
    assert cheaper(["run", "--runs", "3"]) == ["run", "--runs", "3", "--no-plots", *SHRUNK_RUN]
    assert cheaper(["run", "--director-model", "scripted/team", "--no-plots"]) == [
        "run",
        "--director-model",
        "scripted/team",
        "--no-plots",
        *SHRUNK_RUN,
        *SHRUNK_MODEL_TURNS,
    ]
    assert cheaper(["run", "--structures", "0,3", "--turns", "9", "--builder-model", "a/b"]) == [
        "run",
        "--structures",
        "0,3",
        "--turns",
        "9",
        "--builder-model",
        "a/b",
        "--no-plots",
    ]
    assert cheaper(["run", "--out", "x", "--resume"]) == ["run", "--out", "x", "--resume", "--no-plots"]
    assert cheaper(["report", "x"]) == ["report", "x", "--no-plots"]
    for kept in (["replay", "x"], ["run", "--help"], ["frobnicate"]):
        assert cheaper(kept) == kept
