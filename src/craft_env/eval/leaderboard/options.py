"""The options of ``craft-env leaderboard`` (registered on the CLI's parser; the command is ``command``)."""

from __future__ import annotations

from typing import Any

FORMATS = ("html", "md", "json")


def add_leaderboard_parser(commands: Any) -> None:
    """Register ``leaderboard`` on the CLI's subparsers."""
    board = commands.add_parser(
        "leaderboard", help="every run side by side with the paper's published rows: one offline HTML page"
    )
    board.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="output directories of craft-env run, directories of paper result logs, or entry files",
    )
    board.add_argument("-o", "--output", help="the file to write (default leaderboard.html, .md or .json)")
    board.add_argument("--format", choices=FORMATS, default="html", help="html (default), md or json")
    board.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME=PATTERN",
        help="tag rows whose model or entry name matches PATTERN (a glob, any case) with NAME, e.g. "
        "frontier='gpt-*' (repeatable; each NAME becomes a filter on the page)",
    )
    board.add_argument("--no-published", action="store_true", help="leave out the paper's published rows")
    board.add_argument(
        "--replay",
        action="append",
        default=[],
        metavar="DIR=FILE",
        help="link the structure cards of DIR's entry to FILE, its craft-env replay page (repeatable)",
    )
    board.add_argument(
        "--with-replays",
        action="store_true",
        help="build a replay page for every run directory beside the output and link the cards to it",
    )
    board.add_argument(
        "--entry",
        metavar="DIR",
        help="write the one entry of DIR (a run directory or one paper-log group) as an entry file to -o",
    )
    board.add_argument(
        "--samples", type=int, default=10_000, help="bootstrap samples, 100 to 100000 (default 10000)"
    )
    board.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    board.add_argument("--title", default="CRAFT leaderboard", help="the page's title")
