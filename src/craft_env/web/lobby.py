"""Every game a server holds, its tokens, and resuming them after a restart (``Lobby``).

The server's folder (``craft-env serve --out``) holds one run directory per
game (``<game id>/``) and, in ``.serve/`` (readable by its owner only),
the organiser's token and each game's setup and seat tokens, so a
restarted server finds its games, resumes those in progress and every
link still opens its seat.

Tokens come from ``secrets.token_urlsafe``; a request's token is looked up
by its sha256 and the stored digest compared with ``hmac.compare_digest``.
A seat's token opens that seat of that game and nothing else; a game's
spectator token opens that game's organiser view; the organiser's token
opens the lobby (every game, and starting and stopping games).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import importlib.util
import json
import logging
import os
import secrets
import time
from pathlib import Path
from typing import Any

from craft_env.datasets import EVAL_SETS
from craft_env.eval.run.settings import DEFAULT_DATASET
from craft_env.models.jsonl import write_atomic
from craft_env.web.seats import PERSON, Refused
from craft_env.web.session import DONE, ERRORED, STOPPED, GameSession, saved_sessions
from craft_env.web.setup import GameSetup

log = logging.getLogger(__name__)

SERVE_DIR = ".serve"
ORGANISER_FILE = "organiser.token"
#: The sets the organiser's form offers, the runner's default first.
DATASETS = (DEFAULT_DATASET, *(name for name in EVAL_SETS if name != DEFAULT_DATASET))
#: Games one server holds at most (finished ones included); more are refused with 429.
DEFAULT_MAX_GAMES = 500


def new_token() -> str:
    return secrets.token_urlsafe(24)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class Lobby:
    """The games of one server folder (the module docstring)."""

    def __init__(
        self, root: str | os.PathLike, api_base: str | None = None, max_games: int = DEFAULT_MAX_GAMES,
        datasets: tuple[str, ...] = DATASETS,
    ) -> None:
        self.root = Path(root)
        self.api_base = api_base
        self.max_games = max_games
        self.datasets = tuple(datasets)
        self.folder = self.root / SERVE_DIR
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.organiser = self._organiser_token()
        self.games: dict[str, GameSession] = {}
        self._tokens: dict[bytes, tuple[GameSession, str]] = {}
        self._tasks: dict[str, asyncio.Task] = {}

    def _organiser_token(self) -> str:
        path = self.folder / ORGANISER_FILE
        if path.is_file():
            token = path.read_text(encoding="ascii").strip()
            if token:
                return token
        token = new_token()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(token + "\n")
        return token

    # ------------------------------------------------------------------ tokens

    def is_organiser(self, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(digest(token), digest(self.organiser))

    def find(self, token: str | None) -> tuple[GameSession, str] | None:
        """``(game, seat)`` the token opens (``seat`` is ``"spectator"`` for a game's organiser view)."""
        if not token:
            return None
        key = digest(token)
        for known, found in self._tokens.items():  # each comparison takes the same time, match or not
            if hmac.compare_digest(known, key):
                return found
        return None

    def _register(self, session: GameSession) -> None:
        self.games[session.id] = session
        for seat, token in session.tokens.items():
            self._tokens[digest(token)] = (session, seat)
        self._tokens[digest(session.spectator)] = (session, "spectator")

    # ------------------------------------------------------------------ games

    def create(self, payload: object) -> GameSession:
        """Start a new game from the organiser's form; ``Refused`` naming the field for a bad one."""
        if len(self.games) >= self.max_games:
            raise Refused(f"this server holds {self.max_games} games already (--max-games)", 429)
        setup = GameSetup.from_payload(payload, self.datasets)
        if setup.models and importlib.util.find_spec("litellm") is None:
            raise Refused("seats: a model seat needs the llm extra on the server (craft-env[llm])")
        game_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        tokens = {seat: new_token() for seat, kind in setup.kinds.items() if kind == PERSON}
        try:
            session = GameSession(game_id, self.root / game_id, setup, tokens, new_token(), self.api_base)
        except ValueError as error:
            raise Refused(str(error)) from None
        self._save(session)
        self._register(session)
        self._start(session)
        return session

    def _save(self, session: GameSession) -> None:
        """The session's file, written whole (not through the log's redactor: a token is kept as it is)."""
        write_atomic(self.folder / f"{session.id}.json", json.dumps(session.saved(), indent=2) + "\n")

    def _start(self, session: GameSession) -> None:
        self._tasks[session.id] = asyncio.get_running_loop().create_task(session.play())

    def resume(self) -> int:
        """Load the saved games; start again those not finished. Returns how many were started."""
        started = 0
        for saved in saved_sessions(self.folder):
            try:
                setup = GameSetup.from_dict(saved["setup"])
                session = GameSession(
                    saved["id"], self.root / saved["id"], setup, saved["tokens"], saved["spectator"],
                    self.api_base, saved.get("created"),
                )
            except (KeyError, TypeError, ValueError) as error:
                log.warning("saved game %s cannot be loaded: %s", saved.get("id"), error)
                continue
            self._register(session)
            if session.finished_in_log():
                continue
            self._start(session)
            started += 1
        return started

    def stop(self, game_id: str) -> GameSession:
        session = self.games.get(game_id)
        if session is None:
            raise Refused(f"no game {game_id!r}", 404)
        session.stop()
        return session

    async def close(self) -> None:
        """Cancel the games in play (each resumes from its log when the server starts again)."""
        tasks = [t for t in self._tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def wait_all(self) -> None:
        """Return when every game started so far has ended."""
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def listing(self) -> list[dict[str, Any]]:
        """The lobby: every game with its state, seats and links' tokens, newest first."""
        rows = []
        for session in sorted(self.games.values(), key=lambda s: s.created, reverse=True):
            public = session.public()
            rows.append({
                **public,
                **session.organiser(),
                "created": session.created,
                "out": session.out.name,
                "tokens": dict(session.tokens),
                "spectator": session.spectator,
                "finished": public["status"] in (DONE, STOPPED, ERRORED),
            })
        return rows
