"""The server's routes: the pages, their assets, and the JSON API over a ``Lobby`` (``docs/serve.md``).

Pages and assets are public (they hold no game data); every ``/api/``
route needs a token in an ``Authorization: Bearer`` header (the pages take
it from the link's ``#fragment``, which browsers never send to a server):

* ``GET /api/options``, ``GET /api/games``, ``POST /api/games``,
  ``POST /api/games/<id>/stop``: the organiser's token;
* ``GET /api/state?since=<version>``: a seat's token (that seat's state and
  frame) or a game's spectator token (everything); the answer waits up to
  ``wait`` seconds (long polling) for the game to change past ``since``;
* ``POST /api/act``: a seat's token and its reply (``seats.person_reply``).

The page's board drawing is the replay page's own script, served as it is
(``eval.replay.page.drawing_script``), with the replay page's colours.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from craft_env.core.protocol import PROTOCOLS
from craft_env.eval.replay.page import block_colours, drawing_script
from craft_env.eval.run.settings import BUILT_IN
from craft_env.web.http import HttpError, Request, Response
from craft_env.web.lobby import Lobby
from craft_env.web.seats import ON_TIMEOUT, PERSON, Refused
from craft_env.web.setup import MAX_ORACLE_N, MAX_SEAT_TIMEOUT_S, MAX_STRUCTURES, MAX_TURNS

#: The longest a state request waits for a change (seconds).
MAX_WAIT = 30.0
PAGES = {"/": "lobby.html", "/play": "play.html"}
ASSETS = {
    "lobby.js": "text/javascript", "play.js": "text/javascript", "common.js": "text/javascript",
    "serve.css": "text/css",
}
TYPES = {"html": "text/html; charset=utf-8", "text/javascript": "text/javascript; charset=utf-8",
         "text/css": "text/css; charset=utf-8"}


def asset(name: str) -> str:
    return (resources.files("craft_env.web") / "assets" / name).read_text(encoding="utf-8")


def _text(body: str, content_type: str) -> Response:
    return Response(200, body.encode("utf-8"), TYPES[content_type])


def _refused(error: Refused) -> Response:
    return Response.json({"error": str(error)}, error.status)


class App:
    """The request handler of ``craft-env serve`` (the module docstring)."""

    def __init__(self, lobby: Lobby, models: tuple[str, ...] = ()) -> None:
        self.lobby = lobby
        self.models = tuple(models)
        self.colours = block_colours()

    async def __call__(self, request: Request) -> Response:
        if request.method not in ("GET", "POST"):
            raise HttpError(405, f"method {request.method[:16]!r} is not served")
        if not request.path.startswith("/api/"):
            return self._static(request)
        try:
            return await self._api(request)
        except Refused as error:
            return _refused(error)

    def _static(self, request: Request) -> Response:
        if request.method != "GET":
            raise HttpError(405, "pages are read with GET")
        if request.path in PAGES:
            return _text(asset(PAGES[request.path]), "html")
        name = request.path.removeprefix("/assets/")
        if name == "draw.js":
            return _text(drawing_script(), "text/javascript")
        if name in ASSETS and request.path.startswith("/assets/"):
            return _text(asset(name), ASSETS[name])
        raise HttpError(404, "no such page")

    async def _api(self, request: Request) -> Response:
        route = (request.method, request.path)
        if route == ("GET", "/api/state"):
            return await self._state(request)
        if route == ("POST", "/api/act"):
            return self._act(request)
        if not self.lobby.is_organiser(request.bearer()):
            raise HttpError(401, "this needs the organiser's token")
        if route == ("GET", "/api/options"):
            return Response.json(self._options())
        if route == ("GET", "/api/games"):
            return Response.json({"games": self.lobby.listing()})
        if route == ("POST", "/api/games"):
            session = self.lobby.create(request.json())
            created = {"id": session.id, "tokens": session.tokens, "spectator": session.spectator}
            return Response.json(created, 201)
        parts = request.path.split("/")  # POST /api/games/<id>/stop
        if route[0] == "POST" and len(parts) == 5 and parts[1:3] == ["api", "games"] and parts[4] == "stop":
            self.lobby.stop(parts[3])
            return Response.json({"stopped": parts[3]})
        raise HttpError(404, "no such route")

    def _options(self) -> dict[str, Any]:
        return {
            "datasets": list(self.lobby.datasets),
            "protocols": list(PROTOCOLS),
            "kinds": [PERSON, *BUILT_IN],
            "models": list(self.models),
            "on_timeout": list(ON_TIMEOUT),
            "limits": {"turns": MAX_TURNS, "structures": MAX_STRUCTURES, "oracle_n": MAX_ORACLE_N,
                       "timeout": MAX_SEAT_TIMEOUT_S},
        }

    def _seat(self, request: Request) -> tuple[Any, str]:
        found = self.lobby.find(request.bearer())
        if found is None:
            raise HttpError(401, "this link's token opens no seat of any game on this server")
        return found

    async def _state(self, request: Request) -> Response:
        session, seat = self._seat(request)
        try:
            since = int(request.query.get("since", "-1"))
            wait = min(MAX_WAIT, max(0.0, float(request.query.get("wait", "25"))))
        except ValueError:
            raise HttpError(400, "since: expected a whole number; wait: a number of seconds") from None
        if wait != wait:  # NaN
            raise HttpError(400, "wait: expected a number of seconds")
        await session.changed_since(since, wait)
        state = session.spectator_state() if seat == "spectator" else session.seat_state(seat)
        state["colours"] = self.colours
        return Response.json(state)

    def _act(self, request: Request) -> Response:
        session, seat = self._seat(request)
        if seat == "spectator":
            raise HttpError(403, "the spectator's link watches; it plays no seat")
        payload = request.json()
        session.submit(seat, payload)
        return Response.json({"accepted": True, "version": session.version})
