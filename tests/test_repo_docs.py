"""Every document the code, the tests and the docs cite is in the repository.

Module docstrings cite pages as ``docs/rules.md#oracle``: the page must exist
and, when an anchor is given, one of its headings must have that anchor.
Markdown links between pages (``[rules](rules.md#oracle)``) are held to the
same rule. Nothing may cite the design notes the project was written from
(SPEC, DESIGN, PAPER-PROTOCOL): they are not shipped, so a reader of the
repository could not follow the citation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import craft_env.core

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SOURCES = sorted((ROOT / "src").rglob("*.py")) + sorted(
    p for folder in ("tests", "benchmarks", "examples") for p in (ROOT / folder).glob("*.py") if p.name != "test_repo_docs.py"
)
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]

DOC_CITATION = re.compile(r"\bdocs/([\w.-]+\.md)(?:#([\w-]+))?")
MARKDOWN_LINK = re.compile(r"\]\((?!https?:)([\w./-]*?\.md)(?:#([\w-]+))?\)")
OUTSIDE_NOTES = re.compile(r"\bSPEC\b|\bDESIGN\b|PAPER-PROTOCOL|SPEC\.md|DESIGN\.md")


def anchor(heading: str) -> str:
    """The anchor a Markdown heading gets on GitHub: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def citations(text: str) -> list[tuple[str, str | None]]:
    """``(page, anchor or None)`` for every ``docs/PAGE.md[#anchor]`` in ``text``."""
    return [(m.group(1), m.group(2)) for m in DOC_CITATION.finditer(text)]


def links(text: str) -> list[tuple[str, str | None]]:
    """``(page, anchor or None)`` for every relative Markdown link to a ``.md`` page in ``text``."""
    return [(m.group(1), m.group(2)) for m in MARKDOWN_LINK.finditer(text)]


def broken(page_dir: Path, cited: list[tuple[str, str | None]]) -> list[str]:
    """The citations of ``cited`` that name a missing page, or a heading the page does not have."""
    bad = []
    for name, section in cited:
        page = (page_dir / name).resolve()
        if not page.is_file():
            bad.append(f"{name}: no such page")
        elif section is not None and section not in anchors(page):
            bad.append(f"{name}#{section}: no such heading")
    return bad


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_checks_catch_what_they_guard(tmp_path):
    (tmp_path / "rules.md").write_text("# Title\n\n## Directors' views\n\n### Where we differ\n", encoding="utf-8")
    assert anchors(tmp_path / "rules.md") == {"title", "directors-views", "where-we-differ"}
    text = "see docs/rules.md#directors-views, docs/rules.md#nowhere, docs/gone.md and docs/rules.md."
    assert citations(text) == [("rules.md", "directors-views"), ("rules.md", "nowhere"), ("gone.md", None),
                               ("rules.md", None)]
    assert broken(tmp_path, citations(text)) == ["rules.md#nowhere: no such heading", "gone.md: no such page"]
    assert OUTSIDE_NOTES.search("The oracle (SPEC section 6)")
    assert OUTSIDE_NOTES.search("see DESIGN.md") and OUTSIDE_NOTES.search("PAPER-PROTOCOL.md")
    assert not OUTSIDE_NOTES.search("an ArgSpec, a spec, the design")
    assert links("[the rules](rules.md#oracle), [env](environment.md), [web](https://x.org/a.md)") == [
        ("rules.md", "oracle"), ("environment.md", None)]


@pytest.mark.parametrize("path", SOURCES, ids=relative)
def test_modules_cite_only_pages_in_the_repository(path):
    text = path.read_text(encoding="utf-8")
    assert broken(DOCS, citations(text)) == []
    found = OUTSIDE_NOTES.search(text)
    assert found is None, f"{relative(path)} cites {found.group(0)!r}, which is not in the repository"


@pytest.mark.parametrize("path", PAGES, ids=relative)
def test_pages_link_only_to_pages_in_the_repository(path):
    text = path.read_text(encoding="utf-8")
    assert broken(DOCS, citations(text)) == []
    assert broken(path.parent, links(text)) == []
    found = OUTSIDE_NOTES.search(text)
    assert found is None, f"{relative(path)} cites {found.group(0)!r}, which is not in the repository"


def test_every_module_of_core_is_listed_in_its_docstring():
    listed = set(re.findall(r"^\* ``(\w+)``", craft_env.core.__doc__, re.MULTILINE))
    modules = {path.stem for path in (ROOT / "src" / "craft_env" / "core").glob("*.py") if path.stem != "__init__"}
    assert modules <= listed, f"core/__init__.py does not list {sorted(modules - listed)}"
