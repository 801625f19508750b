"""Small paper result logs for tests (docs/paper-logs.md), with any field replaced, and a memory-capped CLI.

``paper_log(**fields)`` is one game on the paper's ``structure_001`` with two
turns; a keyword replaces the field of that name wherever it lives
(``structure_index``, ``num_oracle``, ``run``, ``max_turns`` in
``experiment_info``; ``structure_id`` in the game; ``turn_number`` and
``layer`` in the first turn). A string value such as ``"1e999"`` is written
into the JSON as a bare number token.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from craft_env import load_eval_set

TARGET = load_eval_set("paper")[0]
EMPTY = {f"({i},{j})": [] for i in range(3) for j in range(3)}
#: JSON number tokens Python's ``json`` cannot write from a float: kept as strings, unquoted when written.
RAW_NUMBERS = ("1e999", "-1e999", "1e400", "-0.0e999")

INFO_FIELDS = ("structure_index", "num_oracle", "run", "max_turns", "use_oracle", "builder_tool_use", "protocol")
GAME_FIELDS = ("structure_id", "complexity", "completed", "target_structure", "target_spans")
TURN_FIELDS = ("turn_number", "layer", "structure_before", "director_responses", "move_attempted")


def paper_log(**fields: Any) -> dict[str, Any]:
    """A one-game paper log whose named fields are replaced (see the module docstring)."""
    target = TARGET.to_dict(views=False)
    first = {
        "turn_number": 1,
        "structure_before": dict(EMPTY),
        "spans_before": {},
        "director_responses": {"D1": {"internal_thinking": "t", "public_message": "yellow small at my left"}},
        "builder_confirmation": "ok",
        "move_attempted": {"action": "place", "block": "ys", "position": "(0,0)", "layer": 0, "span_to": None},
        "failed_move": False,
    }
    second = {"turn_number": 2, "clarification": "Which block next?", "director_responses": {}}
    game = {
        "structure_id": "structure_001",
        "complexity": "medium",
        "target_structure": target["structure"],
        "target_spans": target["spans"],
        "turns": [first, second],
    }
    info = {
        "structure_index": 0,
        "max_turns": 20,
        "models": {"director": "dir-model", "builder": "build-model"},
        "use_oracle": True,
        "num_oracle": 5,
        "builder_tool_use": False,
        "run": 1,
        "protocol": "craft",
    }
    for name, value in fields.items():
        if name in INFO_FIELDS:
            info[name] = value
        elif name in GAME_FIELDS:
            game[name] = value
        elif name == "layer":
            first["move_attempted"]["layer"] = value
        elif name in TURN_FIELDS:
            first[name] = value
        else:
            raise KeyError(name)
    return {"experiment_info": info, "games": [game]}


def dumps(data: Any) -> str:
    """``data`` as JSON, with the strings of ``RAW_NUMBERS`` written as bare number tokens."""
    text = json.dumps(data)
    for token in RAW_NUMBERS:
        text = text.replace(json.dumps(token), token)
    return text


def write_log(path: Path, data: Any) -> Path:
    """Write ``data`` (a dict, or JSON text as is) to ``path``, making its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else dumps(data), encoding="utf-8")
    return path


def memory_limited(megabytes: int) -> str:
    """Python code for ``python -c``: ``craft-env`` with its arguments, its address space capped at ``megabytes``."""
    return (
        "import resource, sys\n"
        f"limit = {megabytes} * 2**20\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "from craft_env.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
