"""The text environment as an OpenEnv server, and its client (``docs/train.md``, "Training elsewhere").

Needs the ``openenv`` package (tested with 0.10). OpenEnv serves an
environment over HTTP and a WebSocket (``/ws``: one session, one game, per
connection), so rollouts can run on other machines than the trainer, and
any trainer with an OpenEnv client (TRL, or a loop of your own) can drive
it. The environment is ``text_env.TextEnv``: an action is the seat's reply
text, an observation the chat for its next reply plus the engine's verdict
on the last turn.

Serve::

    python -m craft_env.train.openenv --seat builder --others scripted --port 8000

Drive::

    with CraftEnvClient(base_url="http://localhost:8000").sync() as env:
        result = env.reset(seed=3)
        while not result.done:
            result = env.step(CraftAction(reply=my_model(result.observation.messages)))

``reset`` takes ``seed`` and optionally ``structure`` (an index into the
dataset) and ``run`` (the directors' archetypes), as ``TextEnv.reset``; a
bad one is answered with its ``ValueError`` (HTTP 400). A game is played
over ``/ws``: each HTTP request gets a fresh environment, so HTTP ``/reset``
shows a game's first chat and HTTP ``/step`` has no game to play (400).

Bounds (``craft_server``): at most ``max_connections`` connections are
open (a further one is answered 503 and closed), and a client has
``request_timeout`` seconds to send a whole request, from connecting or
from the last response; a slower one is closed. Refusals and timeouts are
logged once a minute at most, with their count, never per connection.

Access: with a ``token`` (the server reads ``CRAFT_ENV_TOKEN``), every
request but ``/health`` must carry ``Authorization: Bearer <token>``
(compared in constant time, never logged); others get 401, a WebSocket
403. ``CraftEnvClient(base_url, token=...)`` sends it. Without one, anyone
who reaches the port plays, on the server's ``--others`` model key: the
server listens on loopback only unless given a token or ``--allow-anyone``.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import ipaddress
import logging
import math
import os
import re
import sys
import time
import uuid
from collections.abc import Sequence
from typing import Any

try:
    import resource
except ImportError:  # not on Windows, which has no limit of open files to read
    resource = None

import h11
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field
from uvicorn.protocols.http.h11_impl import H11Protocol

from craft_env.train.clients import BUILDER
from craft_env.train.text_env import TextEnv

ENV_NAME = "craft"
#: The environment variable the server reads its shared token from (never the command line: ``ps`` shows it).
TOKEN_ENV = "CRAFT_ENV_TOKEN"
#: A token's shape: printable ASCII without spaces (a header carries it), long enough not to be guessed.
TOKEN_RE = re.compile(r"[\x21-\x7e]{16,4096}")
#: The one route open without the token: a load balancer's health check learns nothing else.
OPEN_PATHS = frozenset({"/health"})
#: Default bounds of ``craft_server``: open connections, and seconds to send a whole request.
MAX_CONNECTIONS = 128
REQUEST_TIMEOUT_S = 10.0
#: The most concurrent games (``--max-sessions``): each holds a game, an event loop and a thread.
MAX_SESSIONS = 1_024
#: How often, at most, a kind of refusal is logged (with the count since its last line).
NOTE_INTERVAL_S = 60.0
#: The most connections taken from the listening socket at once (asyncio accepts up to the backlog per
#: turn of its loop, each holding a file until its refusal closes it a few turns later).
MAX_BACKLOG = 128
#: asyncio's message when ``accept()`` finds no file left (logged with a traceback per failed accept).
ACCEPT_FAILED = "socket.accept() out of system resource"
_BUSY = b"the server is at its connection limit; retry later\n"
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_BUSY), _BUSY)
)
log = logging.getLogger(__name__)


class Note:
    """A warning logged when a refusal first happens, then at most once per ``NOTE_INTERVAL_S`` with a count.

    Per-connection lines would let a flood of bad clients flood the log as well (the issue 35 probe saw
    51 MB of tracebacks in 20 s).
    """

    def __init__(self, what: str) -> None:
        self.what = what
        self.count = 0
        self._last: float | None = None

    def __call__(self) -> None:
        self.count += 1
        now = time.monotonic()
        if self._last is None:
            log.warning("%s (noted again at most once a minute)", self.what)
        elif now - self._last >= NOTE_INTERVAL_S:
            log.warning("%s: %d times in the last %.0f s", self.what, self.count, now - self._last)
        else:
            return
        self._last, self.count = now, 0


class CraftAction(Action):
    """The seat's reply, as a model wrote it."""

    reply: str = Field(..., description="the seat's reply text (read exactly as a benchmark run reads it)")


class CraftObservation(Observation):
    """The chat for the seat's next reply (empty once the game has ended) and the engine's verdict."""

    messages: list[dict[str, str]] = Field(default_factory=list, description="system and user messages")
    structure_id: str = Field(default="", description="the game's target")
    turn: int = Field(default=0, description="the last turn played (0 after reset)")
    legal: bool | None = Field(default=None, description="the last turn's move was legal")
    reason: str | None = Field(default=None, description="why the last turn failed, if it did")
    optimal: bool | None = Field(default=None, description="the last move shortened the fewest-moves plan")
    distance: int | None = Field(default=None, description="moves still needed after the last turn")
    progress: float | None = Field(default=None, description="the paper's progress after the last turn")
    truncated: bool = Field(default=False, description="the game ended without completing the target")
    error: str | None = Field(default=None, description="another seat's model call failed for good")


class BadArgument(ValueError):
    """A client's bad argument to ``reset`` or ``step`` (the text environment's ``ValueError``): HTTP 400."""


class CraftEnvironment(Environment):
    """An OpenEnv environment over one ``TextEnv`` game per session."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.env = TextEnv(**options)
        self._state = State(episode_id=None, step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        structure: int | None = None,
        run: int = 1,
        **kwargs: Any,
    ) -> CraftObservation:
        seed = 0 if seed is None else seed
        try:
            messages, info = self.env.reset(seed=seed, structure=structure, run=run)
        except ValueError as error:
            raise BadArgument(str(error)) from None
        self._state = State(
            episode_id=episode_id or str(uuid.uuid4()),
            step_count=0,
            seed=info["seed"],
            structure_id=info["structure_id"],
        )
        return CraftObservation(
            messages=messages or [], structure_id=info["structure_id"], done=messages is None, reward=None
        )

    def step(self, action: CraftAction, timeout_s: float | None = None, **kwargs: Any) -> CraftObservation:
        if not self.env.batch.started:
            raise BadArgument(
                "step: no game in this environment; each HTTP request gets a fresh one, "
                "so play a game over the WebSocket session (/ws): reset, then step"
            )
        try:
            messages, reward, terminated, truncated, info = self.env.step(action.reply)
        except ValueError as error:
            raise BadArgument(str(error)) from None
        self._state.step_count += 1
        return CraftObservation(
            messages=messages or [],
            structure_id=info["structure_id"],
            turn=info.get("turn", 0),
            legal=info.get("legal"),
            reason=info.get("reason"),
            optimal=info.get("optimal"),
            distance=info.get("distance"),
            progress=info.get("progress"),
            truncated=truncated,
            error=info.get("error"),
            done=terminated or truncated,
            reward=reward,
        )

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        self.env.close()


def check_token(token: object) -> str:
    """``token`` if it can be a shared token (``TOKEN_RE``); ``ValueError`` naming its length, not text."""
    if not isinstance(token, str) or not TOKEN_RE.fullmatch(token):
        shape = f"{len(token)} characters" if isinstance(token, str) else type(token).__name__
        raise ValueError(
            f"{TOKEN_ENV}: expected 16 to 4,096 printable ASCII characters without spaces, got {shape} "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return token


class TokenCheck:
    """ASGI middleware: every request but ``OPEN_PATHS`` carries ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {check_token(token)}".encode("ascii")
        self._refused = Note("refused a request without the server's token")

    def _allowed(self, scope: dict[str, Any]) -> bool:
        given = [value for name, value in scope.get("headers") or () if name.lower() == b"authorization"]
        return len(given) == 1 and hmac.compare_digest(given[0], self._expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or scope.get("path") in OPEN_PATHS or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        self._refused()
        if kind == "websocket":
            await receive()  # the handshake's connect event; closing before accepting answers it 403
            await send({"type": "websocket.close", "code": 1008})
            return
        body = b'{"detail":"this server needs its token: Authorization: Bearer <token>"}'
        await send({
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"www-authenticate", b"Bearer"),
            ],
        })
        await send({"type": "http.response.body", "body": body})


async def _bad_request(request: Request, error: Exception) -> JSONResponse:
    """A ``BadArgument``: 400 with its one line."""
    return JSONResponse(status_code=400, content={"detail": str(error)})


def create_craft_app(max_concurrent_envs: int = 8, token: str | None = None, **options: Any) -> FastAPI:
    """The OpenEnv server app; each session gets ``CraftEnvironment(**options)`` (``text_env`` keywords).

    The options are checked here, by building one environment (``ValueError`` naming a bad one), not at
    the first client's request. With ``token``, requests must carry it (the module docstring).
    """
    CraftEnvironment(**options).close()
    app = create_app(
        lambda: CraftEnvironment(**options),
        CraftAction,
        CraftObservation,
        env_name=ENV_NAME,
        max_concurrent_envs=max_concurrent_envs,
    )
    app.add_exception_handler(BadArgument, _bad_request)
    if token is not None:
        app.add_middleware(TokenCheck, token=token)
    return app


def guarded_protocol(max_connections: int, request_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with a cap on open connections and a deadline for each request.

    A connection past ``max_connections`` (HTTP and WebSocket connections together) is answered 503 and
    closed at once; a connection that has not sent a whole request ``request_timeout`` seconds after it
    opened, or after the last response, is closed (a half-sent request otherwise holds a connection, and
    its file, for as long as the client likes). It extends uvicorn's ``H11Protocol`` (tested with uvicorn
    0.55), whose hooks it uses: ``connection_made``, ``on_response_complete``, ``connection_lost``.
    """
    busy = Note(f"refused connections: {max_connections} are open (the server's --max-connections)")
    slow = Note(f"closed connections that sent no whole request in {request_timeout:g} s (--request-timeout)")

    class GuardedH11Protocol(H11Protocol):
        _deadline: Any = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                self.connections.discard(self)
                busy()
                transport.write(BUSY_RESPONSE)
                transport.close()
                return
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            if not self.transport.is_closing():
                self._deadline = self.loop.call_later(request_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            upgraded = self.transport.get_protocol() is not self  # a WebSocket now owns the connection
            receiving = self.conn.their_state in (h11.IDLE, h11.SEND_BODY)
            if upgraded or self.transport.is_closing() or not receiving:
                return
            slow()
            self.transport.close()

    return GuardedH11Protocol


def note_accept_failures(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop`` note ``accept()``'s running out of files at most once a minute; other errors as before.

    asyncio logs a traceback for each failed accept, up to the backlog in one turn of its loop: the issue
    35 probe's log grew by 51 MB in 20 s.
    """
    out_of_files = Note("could not accept connections: this process has no file left (ulimit -n)")

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == ACCEPT_FAILED:
            out_of_files()
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)


class CraftServer(uvicorn.Server):
    """uvicorn's server, its loop noting accept failures once a minute (``note_accept_failures``)."""

    async def serve(self, sockets: list[Any] | None = None) -> None:
        note_accept_failures(asyncio.get_running_loop())
        await super().serve(sockets)


def craft_server(
    app: FastAPI,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_connections: int = MAX_CONNECTIONS,
    request_timeout: float = REQUEST_TIMEOUT_S,
    **config: Any,
) -> CraftServer:
    """A uvicorn server for ``app`` with the module docstring's bounds (``config``: ``uvicorn.Config``'s)."""
    config.setdefault("backlog", min(max_connections, MAX_BACKLOG))
    http = guarded_protocol(max_connections, request_timeout)
    return CraftServer(uvicorn.Config(app, host=host, port=port, http=http, **config))


class CraftEnvClient(EnvClient[CraftAction, CraftObservation, State]):
    """The client of a ``create_craft_app`` server (OpenEnv's WebSocket session).

    ``token``: the server's shared token, sent as ``Authorization: Bearer <token>``; other keywords are
    ``EnvClient``'s.
    """

    def __init__(self, base_url: str | None = None, token: str | None = None, **options: Any) -> None:
        if token is not None:
            options["headers"] = {**(options.get("headers") or {}), "Authorization": f"Bearer {token}"}
        super().__init__(base_url, **options)

    def _step_payload(self, action: CraftAction) -> dict[str, Any]:
        return {"reply": action.reply}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CraftObservation]:
        fields = dict(payload.get("observation") or {})
        fields.pop("metadata", None)
        observation = CraftObservation(
            **fields, done=payload.get("done", False), reward=payload.get("reward")
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(**payload)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, ``127.x``, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: it may resolve to any address
        return False


def _file_limit() -> int | None:
    """The files this process may open (``RLIMIT_NOFILE``'s soft limit), or ``None`` when unlimited."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def _check_args(args: argparse.Namespace, token: str | None) -> None:
    """The flags' ranges and the exposure rule (the module docstring); ``ValueError`` naming the flag."""
    if not 0 <= args.port <= 65_535:
        raise ValueError(f"--port: expected 0 to 65,535, got {args.port}")
    if not 1 <= args.max_sessions <= MAX_SESSIONS:
        raise ValueError(f"--max-sessions: expected 1 to {MAX_SESSIONS:,}, got {args.max_sessions}")
    files = _file_limit()
    most = 1_000_000 if files is None else files // 2  # the other half: sessions, the games' loops, logs
    if not 1 <= args.max_connections <= most:
        raise ValueError(
            f"--max-connections: expected 1 to {most:,} (half the {files or 'unlimited'} files this process "
            f"may open), got {args.max_connections}"
        )
    if not (math.isfinite(args.request_timeout) and 0 < args.request_timeout <= 3_600):
        timeout = args.request_timeout
        raise ValueError(f"--request-timeout: expected seconds above 0, at most 3,600, got {timeout:g}")
    if token is None and not is_loopback(args.host) and not args.allow_anyone:
        raise ValueError(
            f"--host: {args.host} is reachable from other machines, and without a token anyone who "
            f"reaches it plays on this server's --others model key; set {TOKEN_ENV} (clients pass it as "
            "token=), or pass --allow-anyone"
        )


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the text environment: ``python -m craft_env.train.openenv --help``."""
    parser = argparse.ArgumentParser(
        prog="python -m craft_env.train.openenv",
        description=__doc__.split("\n\n")[0],
        epilog=f"With {TOKEN_ENV} set, every request but /health must carry 'Authorization: Bearer <token>'.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--seat", default=BUILDER, help="the seat the client plays (default builder)")
    parser.add_argument(
        "--others", default="scripted", help="the other seats: scripted, random or a litellm model"
    )
    parser.add_argument("--oracle-n", type=int, default=5, help="candidates shown to the builder; 0 = none")
    parser.add_argument("--protocol", default="craft", help="craft (default) or paper")
    parser.add_argument("--max-turns", type=int, default=20, help="turns in a game (default 20)")
    parser.add_argument("--max-sessions", type=int, default=8, help="concurrent games (default 8)")
    parser.add_argument(
        "--max-connections",
        type=int,
        default=MAX_CONNECTIONS,
        help=f"open connections; more are answered 503 (default {MAX_CONNECTIONS})",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        default=REQUEST_TIMEOUT_S,
        help=f"seconds a client has to send a whole request (default {REQUEST_TIMEOUT_S:g})",
    )
    parser.add_argument(
        "--allow-anyone",
        action="store_true",
        help=f"listen on a non-loopback --host without {TOKEN_ENV}: anyone who reaches it plays",
    )
    args = parser.parse_args(argv)
    token = os.environ.get(TOKEN_ENV) or None
    try:
        if token is not None:
            check_token(token)
        _check_args(args, token)
        app = create_craft_app(
            args.max_sessions,
            token=token,
            seat=args.seat,
            others=args.others,
            oracle_n=args.oracle_n,
            protocol=args.protocol,
            max_turns=args.max_turns,
        )
    except ValueError as error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    server = craft_server(app, args.host, args.port, args.max_connections, args.request_timeout)
    server.run()


if __name__ == "__main__":
    main()
