"""``craft-env leaderboard``: build a board (HTML, Markdown or JSON) or write one entry file.

Every output is written whole (``jsonl.write_atomic``): a refused or
killed write leaves the file that was there before, never a torn or empty
one. Text from the command line (``--title``, ``--group``) is made valid
Unicode where it enters (``text.clean.valid_unicode``), as the readers do
for text from files.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from craft_env.eval.leaderboard.board import BoardOptions, build_board
from craft_env.eval.leaderboard.entryfile import write_entry
from craft_env.eval.leaderboard.markdown import board_markdown
from craft_env.eval.leaderboard.page import render_board
from craft_env.models.jsonl import write_atomic
from craft_env.text.clean import valid_unicode

DEFAULT_OUTPUT = {"html": "leaderboard.html", "md": "leaderboard.md", "json": "leaderboard.json"}
#: The bootstrap's sample counts allowed: each entry keeps one float per sample and structure set.
MIN_SAMPLES, MAX_SAMPLES = 100, 100_000


def _output(path: Path) -> Path:
    """``path`` if a file can be written there (``-o`` naming a directory is refused before any work)."""
    if path.is_dir():
        raise ValueError(f"-o: {os.fspath(path)!r} is a directory; give the file to write")
    return path


def _pairs(values: list[str], option: str, left: str, right: str) -> list[tuple[str, str]]:
    found = []
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name.strip() or not rest.strip():
            raise ValueError(f"{option}: expected {left}={right}, got {value!r}")
        found.append((name.strip(), rest.strip()))
    return found


def board_options(args: argparse.Namespace, output: Path) -> BoardOptions:
    """The board's options from the command line (a bad value is a ``ValueError`` naming the option)."""
    if not MIN_SAMPLES <= args.samples <= MAX_SAMPLES:
        raise ValueError(f"--samples: expected {MIN_SAMPLES} to {MAX_SAMPLES:,}, got {args.samples}")
    if not 0 <= args.seed < 2**64:
        raise ValueError(f"--seed: expected an int from 0 to 2**64 - 1, got {args.seed}")
    return BoardOptions(
        published=not args.no_published,
        tags=_pairs([valid_unicode(g) for g in args.group], "--group", "NAME", "PATTERN"),
        replays=dict(_pairs(args.replay, "--replay", "DIR", "FILE")),
        with_replays=args.with_replays,
        output=output,
        samples=args.samples,
        seed=args.seed,
        title=valid_unicode(args.title),
    )


def cmd_leaderboard(args: argparse.Namespace) -> int:
    if args.entry:
        if args.paths:
            raise ValueError("--entry writes one entry file from one directory; give no other PATH")
        if not args.output:
            raise ValueError("--entry needs -o FILE, the entry file to write")
        entry = write_entry(args.entry, _output(Path(args.output)))
        print(f"Wrote entry {entry.key} ({len(entry.games)} games) to {args.output}")
        return 0
    output = _output(Path(args.output or DEFAULT_OUTPUT[args.format]))
    data = build_board(args.paths, board_options(args, output))
    if args.format == "html":
        text = render_board(data)
    elif args.format == "md":
        text = board_markdown(data)
    else:
        text = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    write_atomic(output, text)
    size = len(text.encode("utf-8"))
    shown = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB" if size >= 1e3 else f"{size} bytes"
    print(f"Wrote {len(data['entries'])} entries in {len(data['groups'])} group(s) to {output} ({shown})")
    return 0
