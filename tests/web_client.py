"""A ``craft-env serve`` server on loopback in a background thread, and its JSON client (tests/test_web*.py).

``Served(root)`` starts ``web.serve.serve_async`` on a free port of
127.0.0.1 in its own thread and event loop; ``call`` sends one request
with ``http.client`` and returns ``(status, JSON)``. ``stop`` ends the
server as Ctrl-C does (games in play are cancelled and resume at the next
start). ``frames`` keeps every state each token was sent, so a test can
hold every frame to the seat's observation.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from craft_env.web.serve import serve_async

TIMEOUT = 60.0


class Served:
    def __init__(self, root: Path, **options: Any) -> None:
        self.root = Path(root)
        self.options = options
        self.ready = threading.Event()
        self.sent: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.lobby = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self.ready.wait(TIMEOUT), "the server did not start"
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()

            def ready(server, lobby) -> None:
                self.port, self.host = server.port, server.host
                self.lobby, self.organiser = lobby, lobby.organiser
                self.ready.set()

            options = {"port": 0, **self.options}
            await serve_async(self.root, ready=ready, stop=self._stop, **options)

        try:
            asyncio.run(main())
        except BaseException as error:  # reported to the test thread
            self.error = error
            self.ready.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(TIMEOUT)
        assert not self._thread.is_alive(), "the server did not stop"

    def raw(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None):
        """``(status, headers, body bytes)`` of one request."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def call(self, method: str, path: str, token: str | None = None, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        status, _, raw = self.raw(method, path, data, headers)
        return status, json.loads(raw)

    def create(self, **setup: Any) -> dict[str, Any]:
        status, created = self.call("POST", "/api/games", self.organiser, setup)
        assert status == 201, created
        return created

    def state(self, token: str, since: int = -1, wait: float = 0) -> dict[str, Any]:
        status, state = self.call("GET", f"/api/state?since={since}&wait={wait}", token)
        assert status == 200, state
        self.sent[token].append(state)
        return state

    def act(self, token: str, payload: dict[str, Any]) -> tuple[int, Any]:
        return self.call("POST", "/api/act", token, payload)

    def wait_game(self, game_id: str) -> None:
        """Block until the game has ended (every game's task is awaited on the server's loop)."""
        session = self.lobby.games[game_id]
        future = asyncio.run_coroutine_threadsafe(session_end(session), self.loop)
        future.result(TIMEOUT)


async def session_end(session) -> None:
    while session.status == "playing":
        await session.changed_since(session.version, 5.0)
