"""``craft-env play``: a person takes one seat of one game, the others are agents.

The game is a benchmark run of one structure (``runner.run_benchmark`` with
the person seated through ``AgentFactory``), so it is logged in the same
run directory format (``config.json``, ``run_1/log.jsonl``,
``run_1/summary.json``; ``logs``) and ``craft-env report`` reads it. The
config records the seat in ``person``; a game the person quits is logged as
``stopped``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from craft_env.agents.human import HumanBuilder, HumanDirector, Terminal
from craft_env.core.views import DEFAULT_SEATS, check_seats
from craft_env.eval.logs.games import LOG_NAME, read_games, run_dir
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import BUILT_IN, PERSON_SEATS, RunSettings

__all__ = ["PERSON_SEATS", "play", "play_settings", "who_plays"]


def play_settings(
    seat: str,
    structure: int = 0,
    others: str = "scripted",
    out: str | None = None,
    **options: Any,
) -> RunSettings:
    """The ``RunSettings`` of one game with a person at ``seat`` and ``others`` at the other seats.

    ``options`` are further ``RunSettings`` fields (``dataset``, ``turns``,
    ``oracle_n``, ``seed``, ``api_base``, ``seats``, ...). Bad values raise
    ``ValueError`` naming the field.
    """
    seated = ("builder", *check_seats(options.get("seats", DEFAULT_SEATS)))
    if seat not in seated:
        raise ValueError(f"seat: expected one of {', '.join(seated)}, got {seat!r}")
    if isinstance(structure, bool) or not isinstance(structure, int) or structure < 0:
        raise ValueError(f"structure: expected a non-negative index into the dataset, got {structure!r}")
    out = out or str(Path("runs") / time.strftime("play-%Y%m%d-%H%M%S"))
    settings = RunSettings(
        out=out,
        director_model=others,
        builder_model=others,
        structures=[structure],
        runs=1,
        concurrency=1,
        person=seat,
        **options,
    )
    settings.load_structures()  # an index outside the dataset fails here, naming the field
    return settings


def who_plays(model: str) -> str:
    """Subject and verb of a sentence on who plays the other seats: the built-in agents, or the model."""
    return f"the {model} agents play" if model in BUILT_IN else f"the model {model} plays"


def play(settings: RunSettings, terminal: Terminal | None = None) -> dict[str, Any]:
    """Play the one game of ``settings`` with a person at ``settings.person``; return how it ended.

    The result holds ``status`` (``done`` or ``stopped``), ``turns``,
    ``completed``, the final ``metrics`` and the run directory ``out``.
    """
    terminal = terminal or Terminal()
    seat = settings.person
    if seat not in PERSON_SEATS:
        raise ValueError(f"person: expected one of {', '.join(PERSON_SEATS)}, got {seat!r}")
    if seat == "builder":
        person: Any = HumanBuilder(terminal)
    else:
        person = HumanDirector(terminal, strict=settings.builder_model in BUILT_IN)
    others = settings.director_model if seat == "builder" else settings.builder_model
    terminal.say(
        f"You are {'the builder' if seat == 'builder' else 'director ' + seat}; {who_plays(others)} the "
        "other seats. Type help for the syntax, quit to stop.",
        "bold",
    )
    run_benchmark(settings, seated={seat: person})
    game = next(iter(read_games(run_dir(settings.out, 1) / LOG_NAME).values()))
    marker = game.marker or {}
    last = game.turns[-1] if game.turns else {}
    result = {
        "status": game.status,
        "turns": int(marker.get("turn_number", 0)),
        "completed": bool(marker.get("completed", False)),
        "metrics": dict(marker.get("final") or {}),
        "out": settings.out,
    }
    if last and last.get("failed"):
        move = last.get("move") or last["builder"].get("sent")
        terminal.say(f"Last move: {move} failed: {last.get('reason')}", "bold red")
    played = f"{result['turns']} turn{'' if result['turns'] == 1 else 's'}"
    if game.status == "done":
        progress = result["metrics"].get("progress", 0.0)
        ending = "structure complete" if result["completed"] else "out of turns"
        terminal.say(f"Game over after {played}: {ending}, progress {progress:.3f}.", "bold")
    else:
        terminal.say(f"Game stopped after {played}.", "bold")
    terminal.say(f"Logged in {settings.out} (craft-env report {settings.out}).")
    return result
