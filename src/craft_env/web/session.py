"""One served game: its seats, its run directory, and the runner playing it (``GameSession``).

The game is a normal run directory (``eval.logs.games``: ``config.json``,
``run_1/log.jsonl``, ``run_1/summary.json``, ``cache.jsonl`` when a model
plays), written by the runner's own pieces: ``prepare_output``, the
directory's ``RunLock``, ``RunLog``, ``play_game`` for each structure in
turn and ``write_summary``, so ``craft-env report``, ``replay``,
``transcript``, ``leaderboard`` and ``export`` read it unchanged. The
organiser's seat kinds and labels are added to ``config.json``
(``seat_kinds``, ``seat_labels``); nothing about the people is recorded
beyond what the organiser typed.

Every seat's agent is wrapped (``team.Watched``) so the session knows
whose turn it is; a person's seat (``team.PersonSeat``) asks the session,
which publishes the seat's context as its frame (``frames.seat_frame``)
and waits for the person's reply, read by ``submit``
(``seats.person_reply``). A seat past the organiser's timeout either keeps
waiting (and shows as late) or passes.

Resume: a game the server was stopped in the middle of is played again
from the start under the next attempt number (the runner's resume,
``eval.logs.games``): the built-in agents play as before (they are
deterministic given the game's seed), the models' calls come back from
``cache.jsonl``, and each person's logged replies are given again
(``team.recorded_replies``) until the game reaches the turn where it stopped;
then the people play on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from craft_env.agents.base import AgentContext, GameStopped
from craft_env.core.board import Structure
from craft_env.core.views import BUILDER
from craft_env.eval.logs.games import CACHE_NAME, CONFIG_NAME, LOG_NAME, RunLog, read_games, run_dir
from craft_env.eval.run.lock import RunLock
from craft_env.eval.run.runner import (
    AgentFactory, GameSpec, all_game_specs, play_game, prepare_output, read_saved_config, write_json,
    write_summary,
)
from craft_env.eval.run.settings import BUILT_IN, RunSettings
from craft_env.models.cache import ReplayCache
from craft_env.models.redact import Redactor, redact
from craft_env.web.frames import seat_frame, spectator_frame
from craft_env.web.seats import PERSON, Refused, person_reply, timed_out
from craft_env.web.setup import GameSetup
from craft_env.web.team import Team, recorded_replies

log = logging.getLogger(__name__)

#: A session's states, as the lobby shows them.
PLAYING, DONE, STOPPED, ERRORED = "playing", "done", "stopped", "errored"


class GameSession:
    """One served game (the module docstring). ``tokens`` maps each person's seat to its token."""

    def __init__(
        self, game_id: str, out: Path, setup: GameSetup, tokens: dict[str, str], spectator: str,
        api_base: str | None = None, created: str | None = None,
    ) -> None:
        self.id = game_id
        self.out = out
        self.setup = setup
        self.tokens = dict(tokens)
        self.spectator = spectator
        self.created = created or time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.settings: RunSettings = setup.run_settings(str(out), api_base)
        self.targets: list[Structure] = self.settings.load_structures()  # a bad index fails here, by name
        self.redactor = Redactor()
        self.status = PLAYING
        self.error: str | None = None
        self.results: list[dict[str, Any]] = []
        self.game_number = 0
        self.index: int | None = None
        self.acting: str | None = None
        self.late: set[str] = set()
        self.latest: AgentContext | None = None
        self.frames: dict[str, dict[str, Any]] = {}
        self.pending: dict[str, tuple[AgentContext, asyncio.Future]] = {}
        self.stopping = False
        self.version = 0
        self._changed = asyncio.Event()

    # ------------------------------------------------------------------ changes

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed_since(self, version: int, timeout: float) -> None:
        """Return once the session's version passes ``version``, or after ``timeout`` seconds."""
        if self.version > version:
            return
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except asyncio.TimeoutError:
            pass

    def turn_starts(self, seat: str, context: AgentContext) -> None:
        if self.stopping:
            raise GameStopped("the organiser stopped the game")
        self.acting = seat
        self.latest = context
        self._bump()

    def turn_ends(self, seat: str) -> None:
        self.acting = None
        self.late.discard(seat)
        self._bump()

    # ------------------------------------------------------------------ a person's turn

    async def ask(self, seat: str, context: AgentContext) -> Any:
        """The reply of the person at ``seat`` to ``context``, under the organiser's timeout rule."""
        if self.stopping:
            raise GameStopped("the organiser stopped the game")
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self.pending[seat] = (context, future)
        self.frames[seat] = seat_frame(context)
        self._bump()
        try:
            if not self.setup.timeout:
                return await future
            try:
                return await asyncio.wait_for(asyncio.shield(future), self.setup.timeout)
            except asyncio.TimeoutError:
                if self.setup.on_timeout == "pass":
                    return timed_out(context, self.setup.timeout)
                self.late.add(seat)
                self._bump()
                return await future
        finally:
            self.pending.pop(seat, None)
            if not future.done():
                future.cancel()

    def submit(self, seat: str, payload: object) -> None:
        """Read the person's reply at ``seat`` and play it; ``Refused`` when it is not the seat's turn or
        the reply cannot be read (the turn stays open)."""
        waiting = self.pending.get(seat)
        if waiting is None or waiting[1].done():
            raise Refused(f"it is not {seat}'s turn", 409)
        context, future = waiting
        strict = self.setup.kinds[BUILDER] in BUILT_IN
        future.set_result(person_reply(payload, context, strict))

    def stop(self) -> None:
        """End the game as ``stopped`` (the organiser's choice): a person's open turn ends it at once."""
        self.stopping = True
        for _, future in self.pending.values():
            if not future.done():
                future.set_exception(GameStopped("the organiser stopped the game"))
        self._bump()

    # ------------------------------------------------------------------ playing

    def _factories(self, cache: ReplayCache | None) -> dict[str, AgentFactory]:
        """One agent factory per agent kind (a model's clients share the run's cache)."""
        factories = {}
        for kind in set(self.setup.kinds.values()) - {PERSON}:
            settings = replace(self.settings, director_model=kind, builder_model=kind, person=None)
            factories[kind] = AgentFactory(settings, cache, self.redactor)
        return factories

    def _write_config(self, resume: bool) -> None:
        """``config.json`` by the runner, with the seats' kinds and the organiser's labels added."""
        prepare_output(self.settings, resume, self.redactor)
        if resume:
            return
        path = self.out / CONFIG_NAME
        config = read_saved_config(path)
        config.update(
            seat_kinds=dict(self.setup.kinds),
            seat_labels=dict(self.setup.labels),
            served={"timeout": self.setup.timeout, "on_timeout": self.setup.on_timeout},
        )
        write_json(path, config, self.redactor)

    async def play(self) -> None:
        """Play (or finish) every structure of the game in turn; the session's status says how it ended."""
        started = time.perf_counter()
        try:
            lock = RunLock(self.out)
        except ValueError as error:
            self._end(ERRORED, str(error))
            return
        cache = None
        try:
            self._write_config((self.out / CONFIG_NAME).exists())
            cache = ReplayCache(self.out / CACHE_NAME, self.redactor) if self.setup.models else None
            for run, specs in all_game_specs(self.settings).items():
                await self._play_run(run, specs, self._factories(cache))
                write_summary(self.settings, run, specs, self.redactor, time.perf_counter() - started)
        except Exception as error:  # a bug or a full disk ends this game, never the server
            log.exception("served game %s failed", self.id)
            self._end(ERRORED, f"{type(error).__name__}: {error}")
        else:
            statuses = {r["status"] for r in self.results}
            self._end(STOPPED if STOPPED in statuses else ERRORED if ERRORED in statuses else DONE)
        finally:
            if cache is not None:
                cache.close()
            lock.release()

    async def _play_run(self, run: int, specs: list[GameSpec], factories: dict[str, AgentFactory]) -> None:
        previous = read_games(run_dir(self.out, run) / LOG_NAME)
        run_log = RunLog(self.out, run, self.redactor)
        try:
            for number, spec in enumerate(specs, 1):
                self.game_number, self.index = number, spec.index
                known = previous.get((run, spec.index))
                if known is not None and known.status in ("done", STOPPED, ERRORED):
                    self.results.append(_result(spec, known.status, known.marker or {}))
                    continue
                self.frames.clear()  # a new structure: no seat keeps the last one's view
                self.latest = None
                recorded = recorded_replies(self.out, run, spec.index)
                attempt = (known.attempts if known else 0) + 1
                team = Team(self, factories, recorded)
                await play_game(spec, self.settings, team, run_log, attempt)
                game = read_games(run_dir(self.out, run) / LOG_NAME)[(run, spec.index)]
                self.results.append(_result(spec, game.status, game.marker or {}))
                self._bump()
                if self.stopping:
                    break
        finally:
            run_log.close()

    def _end(self, status: str, error: str | None = None) -> None:
        self.status = status
        self.error = None if error is None else redact(error)
        self.acting = None
        self._bump()

    def finished_in_log(self) -> bool:
        """Whether the run directory already holds the game's end (every structure ended, or one was
        stopped); if so the session takes its results and status from the log and is not played again."""
        games = read_games(run_dir(self.out, 1) / LOG_NAME)
        ended = [games.get((1, index)) for index in self.setup.structures]
        ended = [g for g in ended if g is not None and g.status in ("done", STOPPED, ERRORED)]
        stopped = any(g.status == STOPPED for g in ended)
        if len(ended) < len(self.setup.structures) and not stopped:
            return False
        specs = {spec.index: spec for spec in all_game_specs(self.settings).get(1, [])}
        self.results = [_result(specs[g.structure_index], g.status, g.marker or {}) for g in ended]
        statuses = {g.status for g in ended}
        self._end(STOPPED if stopped else ERRORED if ERRORED in statuses else DONE)
        return True

    # ------------------------------------------------------------------ what the pages are sent

    def public(self) -> dict[str, Any]:
        """What every seat of the game may know: its state, whose turn it is, how each structure ended.

        Not who plays the other seats (a person, an agent or a model): a study may keep that from its
        participants; the organiser's view (``organiser``) has it.
        """
        return {
            "id": self.id,
            "title": self.setup.title,
            "status": self.status,
            "error": self.error,
            "game": self.game_number,
            "games": len(self.setup.structures),
            "turn": self.latest.turn if self.latest is not None else 0,
            "max_turns": self.setup.turns,
            "acting": self.acting,
            "results": list(self.results),
            "version": self.version,
        }

    def organiser(self) -> dict[str, Any]:
        """What the organiser's pages add to ``public``: every seat's kind and label, the late seats."""
        return {"kinds": dict(self.setup.kinds), "labels": dict(self.setup.labels), "late": sorted(self.late)}

    def seat_state(self, seat: str) -> dict[str, Any]:
        """What the page of ``seat`` is sent: the public state and the seat's own frame."""
        return {
            "public": self.public(),
            "seat": seat,
            "your_turn": seat in self.pending,
            "frame": self.frames.get(seat),
        }

    def spectator_state(self) -> dict[str, Any]:
        """What the organiser's watching page is sent: everything, the target included."""
        index = self.index if self.index is not None else self.setup.structures[0]
        return {
            "public": self.public(),
            **self.organiser(),
            "frame": spectator_frame(self.targets[index], self.setup.directors, self.latest),
        }

    def saved(self) -> dict[str, Any]:
        """The session as the server saves it to resume it after a restart."""
        return {
            "id": self.id,
            "created": self.created,
            "setup": self.setup.to_dict(),
            "tokens": self.tokens,
            "spectator": self.spectator,
        }


def _result(spec: GameSpec, status: str, marker: dict[str, Any]) -> dict[str, Any]:
    """How one structure of the game ended, as every seat may be told."""
    final = marker.get("final") or {}
    return {
        "structure_id": spec.structure_id,
        "status": status,
        "turns": int(marker.get("turn_number") or 0),
        "completed": bool(marker.get("completed", False)),
        "progress": final.get("progress"),
    }


def saved_sessions(folder: Path) -> list[dict[str, Any]]:
    """The sessions saved in ``folder`` (``*.json``), oldest first; unreadable ones are left out."""
    found = []
    for path in sorted(folder.glob("*.json")):
        try:
            found.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            log.warning("%s: not a readable saved game; skipped", path)
    return sorted(found, key=lambda s: str(s.get("created", "")))
