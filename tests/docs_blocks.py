"""The docs under test: the code blocks of ``README.md`` and ``docs/*.md``, read, checked and run offline.

``tests/test_docs.py`` drives this module; the rules a page's author needs are these.

**What runs.** Every fenced block tagged ``bash``, ``sh``, ``shell`` or ``console`` is run by bash
(``set -eo pipefail``), and every ``python`` block by one Python process per page (the page's blocks share
one namespace, in page order, as a reader's session would). A page's blocks run in order in a work
directory of their own, which holds the repository's top-level entries as links (so ``examples/...`` and
``benchmarks/...`` resolve) and the files of the table below; two pages run at a time. In a ``console``
block the lines starting with ``$ `` are run and the other lines are output the page promises: each must
appear in the real output, in order, spaces collapsed, ``...`` standing for any text. Every command must
succeed (a failing ``craft-env`` anywhere in a block, ``a && b`` included, fails it), within
``BLOCK_TIMEOUT_S``. Blocks with another tag show output or formats and are not run; an untagged block of
commands is an error. ``craft-env`` runs the code under test (the ``craft_env`` the tests import), ``python``
is the tests' interpreter, ``pip`` refuses. A python block that imports a module that is not installed
(``ray``) is skipped, naming it. A shell block that two pages hold word for word runs once.

**Placeholders** (``PLACEHOLDERS``, the one table of them) resolve to a small run made once for the session
(``SESSION_RUN``: the paper's set, 4 games of 20 turns, the scripted team), copied into every page's work
directory:

============================  ======================================================================
in a block                    runs as
============================  ======================================================================
``runs/<timestamp>``          ``runs/docs-run`` (the small run), also ``runs/<ts>``
``DIR``, ``RUN_DIR...``       ``runs/docs-run``
``M``                         ``scripted/team`` (the offline litellm provider: the whole model path)
``FILE``                      ``structures.json`` (8 generated structures)
``craft_results/``            a directory of the paper's result logs: the small run and a run without
                              the oracle, exported with ``--format paper``
============================  ======================================================================

Only the path placeholders (the first row) apply in ``python`` blocks. To keep the test fast every
``craft-env`` command skips its plots (plots have tests of their own), and a ``craft-env run`` that neither
resumes nor replays plays ``SHRUNK_RUN`` when it picks no structures and ``SHRUNK_MODEL_TURNS`` when a model
plays and it sets no turns (``cheaper``); every other flag is as documented.

**Directives**, in an HTML comment on the lines just before a block (a reader of the rendered page does not
see them):

* ``<!-- docs-test: skip "reason" -->``: the block cannot run offline or in a test's time (a provider key,
  a model server, Ray, minutes of training, an install command). It is reported as a pytest skip with the
  reason, and still checked statically.
* ``<!-- docs-test: setup`` ... ``-->``: code (of the block's language) run just before the block, for what
  the page leaves to the reader (``my_builder``, ``s, i, k``).

**Static checks** of every page, run or not: each ``craft-env SUBCOMMAND --flag`` in any block or inline
code span (a command starts a line or a span, or follows ``&&``, ``|``, ``;`` or ``$ ``) names a subcommand
and flags of the real parser (``craft_env.cli.build_parser``; a literal value of a flag with choices, ``a|b``
alternatives included, must be one of them); ``--game ID`` of a transcript names a game of the small run's
dataset; repository paths (``tests/test_x.py``, ``examples/...``, ``craft_env/agents/prompts.py``,
``eval/run/play.py``) exist; a skipped ``python`` block compiles and its ``craft_env`` imports resolve; a
block that is run installs nothing.

**A failure** names the page, the block's line, the command's line and the command as written and as run,
its exit status and the last ``OUTPUT_TAIL`` lines of its output (for python, the traceback, whose line
numbers are the page's).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import io
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import craft_env
from craft_env.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
SHELL = {"bash", "sh", "shell", "console"}
PYTHON = {"python", "py"}
RUN_NAME = "runs/docs-run"
#: The session's small run: few games, the default 20 turns (the transcript examples need turns 10-14).
SESSION_RUN = ("run", "--structures", "0,1,2,3", "--no-progress", "--no-plots")
#: What a ``craft-env run`` that picks no structures and neither resumes nor replays plays instead of all.
SHRUNK_RUN = ("--structures", "0")
#: The turns of a shrunk run in which a model plays (a model name has a "/": ``scripted/team``).
SHRUNK_MODEL_TURNS = ("--turns", "4")
#: ``(pattern, replacement, also in python blocks)``: every placeholder a documented command may hold.
PLACEHOLDERS: tuple[tuple[str, str, bool], ...] = (
    (r"runs/<(?:timestamp|ts)>", RUN_NAME, True),
    (r"\bRUN_DIR(?:\.\.\.)?(?![\w-])", RUN_NAME, False),
    (r"(?<![\w/-])DIR(?![\w/-])", RUN_NAME, False),
    (r"(?<![\w/-])M(?![\w/-])", "scripted/team", False),
    (r"(?<![\w/-])FILE(?![\w/-])", "structures.json", False),
)
WORKERS = min(2, os.cpu_count() or 1)  # pages run side by side
BLOCK_TIMEOUT_S = 300  # a safety net against a hang, not a speed check
OUTPUT_TAIL = 40
INSTALL = re.compile(r"\b(?:pip3?|uv|conda|apt-get|apt|poetry)\s+(?:-\S+\s+)*(?:install|add|sync)\b")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<verb>[\w-]+)(?P<body>.*?)(?:-->\s*)?$", re.DOTALL)
INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(?P<code>.+?)(?<!`)\1(?!`)", re.DOTALL)
# A command starts a line or inline code span, or follows a shell operator or a "$ " prompt.
COMMAND = re.compile(r"(?:^|[;&|(]|\$ )[ \t]*(?:\w+=\S*[ \t]+)*craft-env[ \t]+")
ERR_MARK = re.compile(
    r"^docs-test: line (?P<line>-?\d+) exited with (?P<status>\d+): (?P<command>.*)$", re.MULTILINE
)
REPO_TOP = ("src", "tests", "benchmarks", "examples", "docs", ".ci", "build_backend")
PATH_TOKEN = re.compile(r"(?<![\w./<-])(?:[\w.-]+/)+[\w.-]*\w|(?<![\w./-])(?:test|bench)_\w+\.py\b")
FILE_SUFFIXES = (".py", ".md", ".json", ".js", ".css", ".html", ".toml")
UNTAGGED_COMMAND = re.compile(r"^(?:\$ )?(?:craft-env|python|pip)\s", re.MULTILINE)


class DocsError(AssertionError):
    """A documented block or command that does not do what the page says; the message says where."""


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown page."""

    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    skip: str | None = None
    setup: str = ""

    @property
    def where(self) -> str:
        return f"{page_name(self.page)}, block at line {self.line} ({self.language or 'untagged'})"

    @property
    def runs(self) -> bool:
        return self.language in SHELL | PYTHON


@dataclass
class Page:
    """A Markdown page: its blocks, and its prose with the blocks blanked out (line numbers kept)."""

    path: Path
    blocks: list[Block]
    prose: str


def page_name(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.name


def documented_pages(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


# ------------------------------------------------------------------ reading a page


def read_page(path: Path) -> Page:
    """The page's fenced blocks with their directives; a directive not followed by a block is an error."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    prose = list(lines)
    pending: dict[str, str] = {}
    pending_line = i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if DIRECTIVE.match(lines[i]):
            end = next((j for j in range(i, len(lines)) if "-->" in lines[j]), None)
            if end is None:
                raise DocsError(f"{page_name(path)}:{i + 1}: docs-test directive never closed (-->)")
            pending.update(_directive(path, i + 1, "\n".join(lines[i : end + 1])))
            pending_line, i = i + 1, end + 1
        elif fence:
            closing = re.compile(rf"^ {{0,3}}{fence.group('fence')[0]}{{{len(fence.group('fence'))},}}\s*$")
            end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), len(lines))
            body = "".join(line.removeprefix(fence.group("indent")) + "\n" for line in lines[i + 1 : end])
            info = fence.group("info").split()
            language = info[0].lower() if info else ""
            blocks.append(Block(path, i + 1, language, body, pending.get("skip"), pending.get("setup", "")))
            prose[i : end + 1] = [""] * (min(end, len(lines) - 1) + 1 - i)
            pending, i = {}, end + 1
        elif pending and lines[i].strip():
            raise _misplaced(path, pending_line)
        else:
            i += 1
    if pending:
        raise _misplaced(path, pending_line)
    return Page(path, blocks, "\n".join(prose))


def _misplaced(path: Path, line: int) -> DocsError:
    return DocsError(
        f"{page_name(path)}:{line}: a docs-test directive must come just before a fenced code block"
    )


def _directive(path: Path, line: int, text: str) -> dict[str, str]:
    found = DIRECTIVE.match(text)
    verb, body = found.group("verb"), found.group("body").rsplit("-->", 1)[0]
    if verb == "skip":
        reason = re.fullmatch(r'\s*"(?P<reason>[^"]+)"\s*', body)
        if not reason:
            raise DocsError(f'{page_name(path)}:{line}: write a skip as <!-- docs-test: skip "reason" -->')
        return {"skip": reason.group("reason")}
    if verb == "setup":
        return {"setup": textwrap.dedent(body.strip("\n"))}
    raise DocsError(f"{page_name(path)}:{line}: unknown docs-test directive {verb!r} (skip or setup)")


def inline_code(prose: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every inline code span of ``prose``, its whitespace collapsed."""
    spans = []
    for found in INLINE_CODE.finditer(prose):
        code = " ".join(found.group("code").split())
        spans.append((prose.count("\n", 0, found.start()) + 1, code))
    return spans


# ------------------------------------------------------------------ static checks


@dataclass(frozen=True)
class Command:
    """A ``craft-env`` command line as a page writes it: where it is and its words after ``craft-env``."""

    line: int
    text: str
    words: tuple[str, ...]


def commands_in(text: str, first_line: int = 1, synopsis: bool = False) -> list[Command]:
    """Every ``craft-env ...`` command of ``text`` (a block, or one inline code span).

    A line ending in ``\\`` goes on on the next; in a ``synopsis`` (a block that is not run), so does an
    indented line after a command.
    """
    lines = text.split("\n")
    found = []
    k = 0
    while k < len(lines):
        start, line = k, lines[k]
        k += 1
        while k < len(lines) and (
            line.endswith("\\") or (synopsis and lines[k][:1].isspace() and lines[k].strip())
        ):
            line = line.removesuffix("\\") + " " + lines[k]
            k += 1
        found += [_command(line[match.end() :], first_line + start) for match in COMMAND.finditer(line)]
    return found


def _command(rest: str, line: int) -> Command:
    """A command's words after ``craft-env``, up to a comment or the next command; ``[--x]`` is ``--x``."""
    rest = re.split(r"(?:^|\s)#|&&|\|\||;|\s\|\s|`", rest, maxsplit=1)[0]
    try:
        words = shlex.split(rest)
    except ValueError:
        words = rest.split()
    words = [w.strip("[]").removesuffix("...").rstrip(",") for w in words]
    return Command(line, " ".join(["craft-env", *rest.split()]), tuple(w for w in words if w))


def options_of(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """Every option string of ``parser`` and its action (argparse keeps them only as attributes)."""
    return {option: action for action in parser._actions for option in action.option_strings}


def subcommands_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def is_placeholder(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][A-Z0-9_]*(?:\.\.\.)?|<[^>]*>|.*<[\w-]+>.*", word))


def command_problems(parser: argparse.ArgumentParser, command: Command) -> list[str]:
    """What in ``command`` the real parser does not have: the subcommand, a flag, a flag's value."""
    main_options, commands = options_of(parser), subcommands_of(parser)
    words = list(command.words)
    while words and words[0].startswith("-"):
        flag = words.pop(0).split("=", 1)[0]
        if flag not in main_options:
            return [f"craft-env has no option {flag}"]
    if not words:
        return []
    name = words.pop(0)
    if is_placeholder(name):
        return []
    if name not in commands:
        return [f"craft-env has no command {name!r} (commands: {', '.join(sorted(commands))})"]
    options = options_of(commands[name])
    problems = []
    for k, word in enumerate(words):
        if not re.match(r"--?[A-Za-z]", word):
            continue
        flag, _, value = word.partition("=")
        if flag not in options:
            problems.append(f"craft-env {name} has no option {flag}")
            continue
        action = options[flag]
        if not value and action.nargs != 0 and k + 1 < len(words) and not words[k + 1].startswith("-"):
            value = words[k + 1]
        if action.choices and value and not is_placeholder(value):
            wrong = [v for v in value.split("|") if v not in action.choices]
            if wrong:
                problems.append(
                    f"craft-env {name} {flag}: {', '.join(wrong)} is not one of "
                    f"{', '.join(map(str, action.choices))}"
                )
    return problems


def game_problems(command: Command, structure_ids: set[str], count: int) -> list[str]:
    """A transcript's ``--game`` that names no game of a run of the small run's dataset."""
    words = list(command.words)
    if not words or words[0] != "transcript":
        return []
    problems = []
    for k, word in enumerate(words):
        value = (
            word.split("=", 1)[1]
            if word.startswith("--game=")
            else (words[k + 1] if word == "--game" and k + 1 < len(words) else None)
        )
        if value is None or is_placeholder(value):
            continue
        game = re.sub(r"^run_\d+/", "", value)
        if not (game in structure_ids or (game.isdigit() and int(game) < count)):
            problems.append(
                f"--game {value}: no game of that id (ids look like {min(structure_ids)}, "
                f"or an index 0..{count - 1})"
            )
    return problems


def package_dirs(root: Path = ROOT) -> set[str]:
    package = root / "src" / "craft_env"
    return {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}


def path_problems(text: str, root: Path = ROOT) -> list[str]:
    """Repository paths in ``text`` that do not exist (``tests/x.py``, ``craft_env/a.py``, ``eval/b.py``)."""
    subpackages = package_dirs(root)
    problems = []
    for found in PATH_TOKEN.finditer(text):
        token = re.split(r"::|#|:\d", found.group(0))[0].rstrip(".")
        if re.search(r"[<>{}*|\[\]]", text[found.start() : found.end() + 1]):
            continue
        first = token.split("/", 1)[0]
        if "/" not in token:
            candidates = [root / "tests" / token, root / "benchmarks" / token]
        elif first in REPO_TOP:
            candidates = [root / token]
        elif first == "craft_env":
            candidates = [root / "src" / token]
        elif first in subpackages and token.endswith(FILE_SUFFIXES):
            candidates = [root / "src" / "craft_env" / token]
        else:
            continue
        if not any(c.exists() for c in candidates):
            problems.append(f"{token}: no such file in the repository")
    return problems


def python_problems(block: Block) -> list[str]:
    """A python block that does not compile, or imports a ``craft_env`` module or name that does not exist."""
    try:
        tree = ast.parse(block.setup + "\n" + block.text)
    except SyntaxError as error:
        return [f"does not compile: {error}"]
    wanted: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            wanted += [(node.module, alias.name) for alias in node.names]
    problems = [
        import_problem(module, name) for module, name in wanted if module.split(".")[0] == "craft_env"
    ]
    return [problem for problem in problems if problem]


def import_problem(module: str, name: str | None) -> str | None:
    """What is wrong with ``from module import name`` (``import module`` if ``name`` is None), or None.

    Nothing is imported but the packages above ``module``: a name is looked for among the module's
    submodules and the names its source defines at the top (``defined_names``), so a page's import of
    ``craft_env.train.trl`` is checked without importing TRL.
    """
    statement = f"import {module}" if name is None else f"from {module} import {name}"
    spec = importlib.util.find_spec(module)
    if spec is None:
        return f"{statement}: no module {module}"
    if name is None or name == "*":
        return None
    if spec.submodule_search_locations and importlib.util.find_spec(f"{module}.{name}") is not None:
        return None
    names = defined_names(Path(spec.origin))
    if names is None or name in names:
        return None
    return f"{statement}: no such name"


def defined_names(source: Path) -> set[str] | None:
    """The names a module's source binds at its top level; None if it makes more on demand (``__getattr__``)."""
    names: set[str] = set()
    statements = list(ast.parse(source.read_text(encoding="utf-8")).body)
    while statements:
        node = statements.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            statements += [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            statements += [s for handler in getattr(node, "handlers", []) for s in handler.body]
    return None if "__getattr__" in names else names


def missing_modules(block: Block) -> list[str]:
    """The top-level modules a python block imports that are not installed (the block is skipped for them)."""
    try:
        tree = ast.parse(block.setup + "\n" + block.text)
    except SyntaxError:
        return []
    names = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    names |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and not node.level
    }
    return sorted(name for name in names if importlib.util.find_spec(name) is None)


def skip_reason(block: Block) -> str | None:
    """Why ``block`` is not run: its skip directive, or a module it imports that is not installed."""
    missing = missing_modules(block) if block.language in PYTHON else []
    return block.skip or (f"needs {', '.join(missing)}, which is not installed" if missing else None)


def static_problems(
    page: Page, parser: argparse.ArgumentParser, structure_ids: set[str], count: int, root: Path = ROOT
) -> list[str]:
    """Every static problem of ``page``, each as ``page:line: problem``."""
    name = page_name(page.path)
    problems = []
    sources = [(block.line + 1, block.text, not block.runs) for block in page.blocks]
    sources += [(line, code, False) for line, code in inline_code(page.prose)]
    for first_line, text, synopsis in sources:
        for command in commands_in(text, first_line, synopsis):
            for problem in command_problems(parser, command) + game_problems(command, structure_ids, count):
                problems.append(f"{name}:{command.line}: {command.text}: {problem}")
        for problem in path_problems(text, root):
            problems.append(f"{name}:{first_line}: {problem}")
    for block in page.blocks:
        if not block.language and UNTAGGED_COMMAND.search(block.text):
            problems.append(
                f"{block.where}: shows commands but has no language tag: tag it bash to run them "
                "(marked skip if they cannot run here), or text if it is a synopsis"
            )
        if block.language in PYTHON and skip_reason(block):
            problems += [f"{block.where}: {p}" for p in python_problems(block)]
        if block.runs and not block.skip and INSTALL.search(block.text):
            problems.append(
                f'{block.where}: installs something; mark it <!-- docs-test: skip "an install command" -->'
            )
    return problems


# ------------------------------------------------------------------ running a page


def substitute(text: str, python: bool = False) -> str:
    for pattern, replacement, in_python in PLACEHOLDERS:
        if in_python or not python:
            text = re.sub(pattern, replacement, text)
    return text


def cheaper(argv: list[str]) -> list[str]:
    """``argv`` of a documented command made cheaper without changing what it tests.

    No plots (``--no-plots`` where the command has it; plots are tested on their own). A ``run`` that neither
    resumes nor replays plays ``SHRUNK_RUN`` if it picks no structures, and ``SHRUNK_MODEL_TURNS`` if a model
    plays and it sets no turns.
    """
    commands = subcommands_of(build_parser())
    if not argv or argv[0] not in commands:
        return argv
    given = {word.split("=", 1)[0] for word in argv}
    if given & {"--help", "-h"}:
        return argv
    extra = (
        ["--no-plots"] if "--no-plots" in options_of(commands[argv[0]]) and "--no-plots" not in given else []
    )
    if argv[0] == "run" and not given & {"--resume", "--replay-from"}:
        if "--structures" not in given:
            extra += SHRUNK_RUN
        models = [
            argv[k + 1] for k, word in enumerate(argv[:-1]) if word in ("--director-model", "--builder-model")
        ]
        if "--turns" not in given and any("/" in model for model in models):
            extra += SHRUNK_MODEL_TURNS
    return [*argv, *extra]


def run_cli(argv: list[str]) -> int:
    """The ``craft-env`` of a documented block: the CLI, ``cheaper``; failures noted in ``DOCS_FAILURES``."""
    try:
        code = main(cheaper(argv))
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    if code:
        with open(os.environ["DOCS_FAILURES"], "a", encoding="utf-8") as notes:
            notes.write(json.dumps({"argv": argv, "code": code}) + "\n")
    return code


@dataclass
class Sandbox:
    """The session's small run and the tools a page's blocks call, under one temporary directory."""

    root: Path
    run: Path = field(init=False)
    bin: Path = field(init=False)
    structures: Path = field(init=False)
    paper_logs: Path = field(init=False)

    def __post_init__(self) -> None:
        self.bin = self.root / "bin"
        self.bin.mkdir(parents=True)
        self._tool(
            "craft-env",
            f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(TESTS)!r})\n"
            "from docs_blocks import run_cli\nsys.exit(run_cli(sys.argv[1:]))\n",
        )
        for name in ("python", "python3"):
            self._tool(name, f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        for name in ("pip", "pip3"):
            self._tool(
                name,
                "#!/bin/sh\necho 'docs-test: install commands do not run here; mark the block "
                "skip' >&2\nexit 1\n",
            )
        session = self.root / "session"
        self.run = session / RUN_NAME
        self.structures = session / "structures.json"
        self.paper_logs = session / "craft_results"
        no_oracle = session / "no-oracle"  # a second condition: the paper's logs have several
        self.cli(
            [*SESSION_RUN, "--out", str(self.run)],
            ["generate", "--n", "8", "--seed", "0", "-o", str(self.structures)],
            ["export", str(self.run), "--format", "paper", "-o", str(self.paper_logs)],
            [
                "run",
                "--structures",
                "0,1",
                "--oracle-n",
                "0",
                "--no-progress",
                "--no-plots",
                "--out",
                str(no_oracle),
            ],
            ["export", str(no_oracle), "--format", "paper", "-o", str(self.paper_logs)],
        )

    def _tool(self, name: str, text: str) -> None:
        path = self.bin / name
        path.write_text(text, encoding="utf-8")
        path.chmod(0o755)

    def environment(self, failures: Path) -> dict[str, str]:
        source = str(Path(craft_env.__file__).resolve().parents[1])
        env = {k: v for k, v in os.environ.items() if not re.search(r"KEY|TOKEN|SECRET", k)}
        env.update(
            PATH=f"{self.bin}{os.pathsep}{env.get('PATH', '')}",
            PYTHONPATH=os.pathsep.join(p for p in (source, str(TESTS), env.get("PYTHONPATH")) if p),
            DOCS_FAILURES=str(failures),
            MPLBACKEND="Agg",
            NO_COLOR="1",
            COLUMNS="120",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
        )
        return env

    def cli(self, *commands: list[str]) -> None:
        """Run ``craft-env`` ``commands`` in order, in one process (one interpreter start, not one each)."""
        script = (
            "import sys\nfrom craft_env.cli import main\n"
            f"for argv in {commands!r}:\n"
            "    if main(argv):\n        sys.exit(f'craft-env {\" \".join(argv)} failed')\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=False,
            env=self.environment(self.root / "session-failures"),
            timeout=BLOCK_TIMEOUT_S,
        )
        if result.returncode:
            raise DocsError(f"the docs test's own setup failed:\n{tail(result.stdout + result.stderr)}")

    def work_dir(self, page: Path) -> Path:
        """A fresh directory for one page: the repository's entries linked, the session's files copied."""
        (self.root / "pages").mkdir(exist_ok=True)
        work = Path(
            tempfile.mkdtemp(prefix=page_name(page).replace("/", "__") + "-", dir=self.root / "pages")
        )
        for entry in ROOT.iterdir():
            if entry.name in REPO_TOP or entry.suffix in {".md", ".toml", ".in"} or entry.name == "NOTICE":
                (work / entry.name).symlink_to(entry)
        shutil.copytree(self.run, work / RUN_NAME)
        shutil.copytree(self.paper_logs, work / "craft_results")
        shutil.copy(self.structures, work / "structures.json")
        return work


def tail(output: str, lines: int = OUTPUT_TAIL) -> str:
    kept = output.rstrip("\n").splitlines()[-lines:]
    return "\n".join("    " + line for line in kept)


class PageRun:
    """One page's blocks, run in page order, each at most once, in one work directory and Python process."""

    def __init__(self, sandbox: Sandbox, page: Page, ran: SharedBlocks | None = None) -> None:
        self.sandbox = sandbox
        self.page = page
        self.ran = ran
        self.work: Path | None = None
        self.results: dict[int, str | None] = {}  # block line -> None (passed) or the failure
        self.python: PythonSession | None = None

    def run_all(self) -> dict[int, str | None]:
        """Run every block that runs; the failures by block line (None for a block that passed)."""
        for block in self.page.blocks:
            if block.runs and not skip_reason(block):
                self.result(block)
        self.close()
        return self.results

    def result(self, block: Block) -> str | None:
        """The failure of ``block`` (None if it passed), running the blocks before it first."""
        for earlier in self.page.blocks:
            if earlier.line > block.line:
                break
            if earlier.line not in self.results and earlier.runs and not skip_reason(earlier):
                self.results[earlier.line] = self._run(earlier)
        return self.results[block.line]

    def close(self) -> None:
        if self.python is not None:
            self.python.close()

    def _run(self, block: Block) -> str | None:
        if self.ran is not None and block.language in SHELL:
            return self.ran.once(block, self._run_here)
        return self._run_here(block)

    def _run_here(self, block: Block) -> str | None:
        if self.work is None:
            self.work = self.sandbox.work_dir(self.page.path)
        try:
            if block.language in PYTHON:
                return self._run_python(block)
            return self._run_shell(block)
        except subprocess.TimeoutExpired:
            return f"{block.where}: did not finish within {BLOCK_TIMEOUT_S} s"

    def _run_shell(self, block: Block) -> str | None:
        failures = self.work / f".failures-{block.line}"
        body = block.text
        expected: list[str] = []
        if block.language == "console":
            commands = [line[2:] for line in body.splitlines() if line.startswith("$ ")]
            expected = [line for line in body.splitlines() if line.strip() and not line.startswith("$ ")]
            body = "\n".join(line[2:] if line.startswith("$ ") else "" for line in body.splitlines()) + "\n"
            if not commands:
                return f"{block.where}: a console block needs commands written '$ command'"
        setup = block.setup + "\n" if block.setup else ""
        prelude = (
            "set -eo pipefail\ntrap 'echo \"docs-test: line $((LINENO - {n})) exited with $?: "
            "$BASH_COMMAND\" >&2' ERR\n"
        )
        offset = 2 + setup.count("\n")
        script = prelude.format(n=offset) + setup + substitute(body)
        process = subprocess.Popen(
            ["bash", "-c", script],
            cwd=self.work,
            env=self.sandbox.environment(failures),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=BLOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return f"{block.where}: did not finish within {BLOCK_TIMEOUT_S} s; output:\n{tail(output)}"
        failed = [json.loads(line) for line in failures.read_text().splitlines()] if failures.exists() else []
        mark = ERR_MARK.search(output)
        if mark or failed or process.returncode:
            return self._shell_failure(block, output, mark, failed, process.returncode)
        if expected:
            missing = missing_output(expected, output)
            if missing:
                return (
                    f"{block.where}: the page shows output line {missing!r}, which the commands did not "
                    f"print; their output:\n{tail(output)}"
                )
        return None

    def _shell_failure(self, block: Block, output: str, mark, failed: list[dict], status: int) -> str:
        lines = block.text.splitlines()
        parts = [f"{block.where} failed"]
        if mark:
            number = int(mark.group("line"))
            shown = lines[number - 1].strip() if 0 < number <= len(lines) else mark.group("command")
            parts.append(
                f"  command at line {block.line + number}: {shown}\n"
                f"  (ran as: {mark.group('command')}; exit status {mark.group('status')})"
            )
        for note in failed:
            argv = note["argv"]
            line = next(
                (
                    block.line + n
                    for n, text in enumerate(substitute(block.text).splitlines(), 1)
                    if f"craft-env {argv[0]}" in text and all(a in text for a in argv[1:])
                ),
                None,
            )
            where = f"line {line}" if line else "a line of the block"
            parts.append(f"  craft-env {shlex.join(argv)} (at {where}) exited with {note['code']}")
        if not mark and not failed:
            parts.append(f"  the block exited with {status}")
        parts.append(f"  last {OUTPUT_TAIL} lines of output:\n{tail(output)}")
        return "\n".join(parts)

    def _run_python(self, block: Block) -> str | None:
        if self.python is None:
            self.python = PythonSession(self.work, self.sandbox.environment(self.work / ".failures-python"))
        code = (
            "\n" * (block.line - block.setup.count("\n") - 1)
            + block.setup
            + "\n"
            + substitute(block.text, python=True)
        )
        reply = self.python.run(code, str(self.page.path))
        if reply is None:
            self.python = None
            return f"{block.where}: did not finish within {BLOCK_TIMEOUT_S} s"
        if reply["ok"]:
            return None
        return (
            f"{block.where} failed (traceback lines are the page's lines):\n{tail(reply['error'])}\n"
            f"  its output:\n{tail(reply['output'])}"
        )


class SharedBlocks:
    """Shell blocks that several pages hold word for word (the paper's three conditions): each runs once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.first: dict[tuple[str, str, str], tuple[Block, Future]] = {}

    def once(self, block: Block, run: Callable[[Block], str | None]) -> str | None:
        key = (block.language, block.setup, block.text)
        with self.lock:
            earlier = self.first.get(key)
            if earlier is None:
                self.first[key] = (block, Future())
        if earlier is not None:
            first, result = earlier
            failure = result.result()
            return failure and f"{block.where}: the same block as {first.where}, which failed:\n{failure}"
        result = self.first[key][1]
        try:
            result.set_result(run(block))
        except BaseException as error:  # the waiting pages get the error too
            result.set_exception(error)
        return result.result()


class DocsRun:
    """Every documented page run once, ``workers`` pages at a time (each page's blocks in order)."""

    def __init__(self, sandbox: Sandbox, pages: dict[str, Page], workers: int = WORKERS) -> None:
        self.pool = ThreadPoolExecutor(workers)
        ran = SharedBlocks()
        self.pages = {
            name: self.pool.submit(PageRun(sandbox, page, ran).run_all)
            for name, page in pages.items()
            if any(block.runs and not skip_reason(block) for block in page.blocks)
        }

    def result(self, name: str, block: Block) -> str | None:
        return self.pages[name].result()[block.line]

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)


def missing_output(expected: list[str], output: str) -> str | None:
    """The first of ``expected`` (in order, ``...`` = any text) not found in ``output``; None if all are."""
    actual = [" ".join(line.split()) for line in output.splitlines()]
    position = 0
    for want in expected:
        pattern = re.compile(".*".join(re.escape(part) for part in " ".join(want.split()).split("...")))
        while position < len(actual) and not pattern.search(actual[position]):
            position += 1
        if position == len(actual):
            return want
        position += 1
    return None


class PythonSession:
    """One Python process that runs a page's python blocks in one namespace (``serve`` is its loop)."""

    def __init__(self, work: Path, env: dict[str, str]) -> None:
        self.log = work / ".python-stderr"
        with self.log.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "import docs_blocks; docs_blocks.serve()"],
                cwd=work,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                start_new_session=True,
            )
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(
            {"ok": False, "output": "", "error": f"the python process ended:\n{self.log.read_text()}"}
        )

    def run(self, code: str, filename: str) -> dict | None:
        """The reply to a block (``ok``, ``output``, ``error``); None if it outlived ``BLOCK_TIMEOUT_S``."""
        self.process.stdin.write(json.dumps({"code": code, "filename": filename}) + "\n")
        self.process.stdin.flush()
        try:
            return self.replies.get(timeout=BLOCK_TIMEOUT_S)
        except queue.Empty:
            self.close()
            return None

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def serve() -> None:
    """The loop of a page's Python process: one JSON request a line in, one JSON reply a line out.

    The replies go to a copy of the original stdout; the blocks' own output, at the Python and at the file
    descriptor level, goes to a buffer and stderr, so nothing a block prints can break a reply.
    """
    requests = sys.stdin
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdin = io.StringIO()
    namespace: dict = {"__name__": "__main__"}
    for request in iter(requests.readline, ""):
        job = json.loads(request)
        captured = io.StringIO()
        try:
            with redirect_stdout(captured), redirect_stderr(captured):
                exec(compile(job["code"], job["filename"], "exec"), namespace)
            reply = {"ok": True, "output": captured.getvalue(), "error": ""}
        except BaseException:  # the block's failure, whatever it is, is the answer
            reply = {"ok": False, "output": captured.getvalue(), "error": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
