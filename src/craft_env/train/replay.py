"""A logged game played again through the runner, giving every seat's chat and reply.

``replay_run(path)`` reads a run directory (``config.json`` and
``run_<k>/log.jsonl``, ``docs/benchmark.md``, "Output") and plays each
finished game again with ``runner.play_game``: the same settings, the same
episode seed, and at every seat the language-model agent
(``agents.llm.LLMDirector`` / ``LLMBuilder``) whose client answers with the
logged reply (``clients.ScriptedClient``). A seat played by a model replies
with its logged ``raw`` text; a built-in agent's (or a person's) logged
decision is written in the reply format its prompt asks for
(``agents.prompts.director_reply`` / ``builder_reply``). The agents build
each prompt from the environment's text observation exactly as they do in a
run, so the chat a seat is given here is the chat a model in that seat was
given (or would have been).

Every replayed turn must match the logged one (speaking order, candidates,
the move as read, legality, metrics): a game that does not is an error
naming the run, game, turn and field, never a silent mismatch.

Prompts: when the run's ``PROMPT_VERSION`` is the package's, the rebuilt
chat of a model's call is checked against the run's recorded calls
(``cache.jsonl`` keys each call by the sha256 of model, chat and sampling
parameters, ``models.cache``; with ``--log-prompts`` the chat itself is
there too); a call the cache does not hold is an error. When the versions
differ, the chat comes from the calls logged with ``--log-prompts`` (found
by their reply, and, when one reply answered several chats, by the seat's
observation, the user message), and a run without them is refused.
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from craft_env.agents.llm import LLMBuilder, LLMDirector
from craft_env.agents.prompts import PROMPT_VERSION, builder_reply, director_reply
from craft_env.core.board import Structure
from craft_env.eval.logs.games import CACHE_NAME, LOG_NAME, GameLog, read_games, run_dir
from craft_env.eval.run.runner import GameSpec, game_specs, load_settings, play_game
from craft_env.eval.run.settings import RunSettings, is_model
from craft_env.models.cache import cache_key
from craft_env.models.jsonl import read_jsonl
from craft_env.text.replies import split_think
from craft_env.train.clients import BUILDER, Call, ScriptedClient
from craft_env.train.logged import LogFault
from craft_env.train.recorder import TurnRecorder

#: Fields of a turn record the replay must reproduce.
CHECKED_FIELDS = ("director_order", "oracle_moves", "move", "question", "legal", "progress_data")


@dataclass(frozen=True)
class SeatTurn:
    """One seat's turn of a logged game: the chat it was given, its reply, and the turn's record.

    ``source`` names the run directory, ``run`` the run in it; ``model`` is
    the seat's agent (a litellm model, ``scripted``, ``random`` or
    ``person``). ``prompt`` says where ``messages`` comes from: ``logged``
    (the chat recorded with ``--log-prompts``), ``recorded`` (rebuilt, and
    its sha256 found among the run's recorded calls) or ``rebuilt`` (no
    model was called at this seat, or the run kept no calls).
    """

    source: str
    run: int
    structure_index: int
    structure_id: str
    turn: int
    seat: str
    model: str
    messages: list[dict[str, Any]]
    reply: str
    record: dict[str, Any]
    target: Structure
    protocol: str
    prompt: str

    @property
    def board_before(self) -> Structure:
        """The board before the turn's move."""
        return Structure.from_dict(
            self.record["structure_before"], n=self.target.n, height=self.target.height
        )

    @property
    def followed(self) -> tuple[str, ...]:
        """The seats the builder said it followed this turn."""
        return tuple((self.record.get("builder") or {}).get("followed") or ())


@dataclass
class LoggedRun:
    """A run directory: its settings and its recorded model calls (``key -> record``)."""

    path: Path
    settings: RunSettings
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def prompts_logged(self) -> bool:
        return any(isinstance(record.get("messages"), list) for record in self.calls.values())

    @cached_property
    def chats_by_reply(self) -> dict[tuple[str, str], list[list[dict[str, Any]]]]:
        """The recorded chats (``--log-prompts``) by (model, reply text)."""
        chats: dict[tuple[str, str], list[list[dict[str, Any]]]] = defaultdict(list)
        for record in self.calls.values():
            if isinstance(record.get("messages"), list):
                chats[(record.get("model"), record["text"])].append(record["messages"])
        return chats

    def model_of(self, seat: str) -> str:
        """Who played ``seat``: ``person``, or the run's model for that role."""
        if self.settings.person == seat:
            return "person"
        return self.settings.builder_model if seat == BUILDER else self.settings.director_model


def open_run(path: str | os.PathLike) -> LoggedRun:
    """Read a run directory's settings and recorded calls; refuse what cannot be replayed (``ValueError``)."""
    path = Path(path)
    settings = load_settings(path)
    if settings.builder_tools:
        raise ValueError(
            f"{path.name}: the run gave the builder the simulate_move tool; a turn of several model calls "
            "has no single prompt and reply to export"
        )
    calls = {
        record["key"]: record
        for record in read_jsonl(path / CACHE_NAME)
        if isinstance(record.get("key"), str) and isinstance(record.get("text"), str)
    }
    run = LoggedRun(path, settings, calls)
    if settings.prompt_version != PROMPT_VERSION and not run.prompts_logged:
        raise ValueError(
            f"{path.name}: the run used prompts {settings.prompt_version!r}, this package writes "
            f"{PROMPT_VERSION!r}, and the run kept no prompts (--log-prompts); its prompts cannot be rebuilt"
        )
    return run


def logged_replies(turns: list[dict[str, Any]]) -> dict[tuple[str, int], list[str]]:
    """Each seat's replies per turn, as its agent gave them: a model's raw text, or a decision written out."""
    replies: dict[tuple[str, int], list[str]] = defaultdict(list)
    for record in turns:
        number = int(record["turn_number"])
        for entry in sorted(record.get("director_responses") or (), key=lambda e: e.get("order", 0)):
            raw = entry.get("raw")
            text = (
                raw
                if isinstance(raw, str)
                else director_reply(entry.get("message") or "", entry.get("think"))
            )
            replies[(entry["director"], number)].append(text)
        builder = record.get("builder") or {}
        raw = builder.get("raw")
        if not isinstance(raw, str):
            raw = builder_reply(
                record.get("move"),
                builder.get("followed") or (),
                builder.get("think"),
                record.get("question"),
            )
        replies[(BUILDER, number)].append(raw)
    return replies


class _UnwatchedDirector(LLMDirector):
    """A director whose chats are not wanted (``replay_seats``): given no text observation, it still reads
    its logged reply as the language-model director does, so the game goes as logged."""

    reads_text = False


class _UnwatchedBuilder(LLMBuilder):
    """The builder's ``_UnwatchedDirector``."""

    reads_text = False


class _ReplayTeam:
    """The agents of a replay (``AgentFactory``'s interface): language-model agents on one scripted client;
    the seats outside ``seats`` (when given) render no text observation."""

    needs_text = True

    def __init__(self, client: ScriptedClient, seats: tuple[str, ...] | None = None) -> None:
        self.client = client
        self.seats = seats

    def director(self, spec: GameSpec, seat: str) -> LLMDirector:
        watched = self.seats is None or seat in self.seats
        return (LLMDirector if watched else _UnwatchedDirector)(self.client)

    def builder(self, spec: GameSpec) -> LLMBuilder:
        watched = self.seats is None or BUILDER in self.seats
        return (LLMBuilder if watched else _UnwatchedBuilder)(self.client)


def _where(run: LoggedRun, game: GameLog, turn: int | None = None) -> str:
    place = f"{run.name} run {game.run} {game.structure_id}"
    return place if turn is None else f"{place} turn {turn}"


def _check_turns(run: LoggedRun, game: GameLog, replayed: list[dict[str, Any]]) -> None:
    if len(replayed) != len(game.turns):
        raise ValueError(
            f"{_where(run, game)}: the replay played {len(replayed)} turns, the log holds {len(game.turns)}"
        )
    for logged, again in zip(game.turns, replayed):
        for name in CHECKED_FIELDS:
            if logged.get(name) != again.get(name):
                raise LogFault(
                    f"{_where(run, game, logged['turn_number'])}: the replay differs from the log in {name}: "
                    f"logged {logged.get(name)!r}, replayed {again.get(name)!r}",
                    logged["turn_number"],
                )


def _logged_chat(run: LoggedRun, model: str, call: Call, where: str) -> list[dict[str, Any]]:
    """The chat recorded (``--log-prompts``) for the call that got this reply."""
    found = run.chats_by_reply.get((model, call.reply), [])
    if (
        len({repr(messages) for messages in found}) > 1
    ):  # a reply given to several prompts: the same observation
        found = [
            messages for messages in found if messages[-1].get("content") == call.messages[-1]["content"]
        ]
    distinct = {repr(messages) for messages in found}
    if len(distinct) != 1:
        problem = "no recorded call" if not distinct else f"{len(distinct)} different recorded calls"
        raise ValueError(f"{where}: {problem} with this reply; the prompt it was given is not known")
    return found[0]


def _prompt(run: LoggedRun, seat: str, call: Call, where: str) -> tuple[list[dict[str, Any]], str]:
    """``(chat, where it comes from)`` for one call (see ``SeatTurn.prompt`` and the module docstring)."""
    model = run.model_of(seat)
    if not is_model(model) or model == "person" or not run.calls:
        return call.messages, "rebuilt"
    if run.settings.prompt_version != PROMPT_VERSION:
        return _logged_chat(run, model, call, where), "logged"
    record = run.calls.get(cache_key(model, call.messages, run.settings.sampling))
    if record is None:
        raise ValueError(
            f"{where} {seat}: the rebuilt prompt is not among the run's recorded calls; the run was played "
            "with prompts this package no longer writes"
        )
    if isinstance(record.get("messages"), list):
        return record["messages"], "logged"
    return call.messages, "recorded"


def replay_game(run: LoggedRun, game: GameLog, spec: GameSpec) -> list[SeatTurn]:
    """Every seat turn of one finished game, replayed (``ValueError`` when it departs from the log)."""
    return replay_seats(run, game, spec)[0]


def replay_seats(
    run: LoggedRun, game: GameLog, spec: GameSpec, seats: tuple[str, ...] | None = None
) -> tuple[list[SeatTurn], int]:
    """``(seat turns of seats, seat turns played)`` of one finished game, replayed (``replay_game``).

    ``seats``: the seats whose turns are wanted (default: every seat). The
    others still reply as logged, so the game goes as it did, but their
    chats are neither rendered nor checked against the recorded calls: an
    export of the builder's turns does not build the directors' prompts.
    """
    client = ScriptedClient("replay", logged_replies(game.turns))
    recorder = TurnRecorder()
    asyncio.run(play_game(spec, run.settings, _ReplayTeam(client, seats), recorder, attempt=1))
    ended = recorder.ended or {}
    if ended.get("event") != "done":
        raise ValueError(f"{_where(run, game)}: the replay stopped: {ended.get('error') or 'unfinished'}")
    _check_turns(run, game, recorder.turns)
    records = {int(record["turn_number"]): record for record in game.turns}
    protocol = run.settings.protocol
    seat_turns = []
    for call in client.calls:
        if seats is not None and call.seat not in seats:
            continue
        where = _where(run, game, call.turn)
        messages, source = _prompt(run, call.seat, call, where)
        seat_turns.append(
            SeatTurn(
                run.name,
                game.run,
                game.structure_index,
                str(game.structure_id),
                call.turn,
                call.seat,
                run.model_of(call.seat),
                messages,
                call.reply,
                records[call.turn],
                spec.structure,
                protocol,
                source,
            )
        )
    return seat_turns, len(client.calls)


def finished_games(run: LoggedRun) -> Iterator[tuple[Path, GameLog, GameSpec]]:
    """``(log path, game, spec)`` of every finished game of every run in ``run``, in order."""
    for number in range(1, run.settings.runs + 1):
        specs = {spec.index: spec for spec in game_specs(run.settings, number)}
        log_path = run_dir(run.path, number) / LOG_NAME
        games = read_games(log_path)
        for key in sorted(games):
            game = games[key]
            if game.status == "done" and game.structure_index in specs:
                yield log_path, game, specs[game.structure_index]


def replay_run(run: LoggedRun) -> Iterator[SeatTurn]:
    """The seat turns of every finished game of every run in ``run``, game by game."""
    for _, game, spec in finished_games(run):
        yield from replay_game(run, game, spec)


def public_reply(text: str) -> str:
    """``text`` without its ``<think>`` blocks (the agents read the rest the same way)."""
    return split_think(text)[1].strip()
