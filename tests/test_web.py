"""``craft-env serve`` over its JSON API on loopback: frames, tokens, bad requests, resilience, logs.

Every frame a seat is sent is held to that seat's observation from the
environment, replayed from the game's log; a seat's token opens that seat
only; malformed requests get a clear JSON refusal; a seat past its timeout
waits or passes; a server restart resumes the game from its log with the
people's replies kept; a model seat's fault is the runner's (a failed
turn, or an errored game) and the server goes on; the games' run
directories go through report, replay, transcript, leaderboard and
export unchanged. The pages themselves are tested in a browser
(tests/test_web_browser.py).
"""

from __future__ import annotations

import ast
import asyncio
import json
import signal
import subprocess
import sys
import urllib.request
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import craft_env
from craft_env.agents.base import AgentContext
from craft_env.cli import main
from craft_env.eval.logs.games import LOG_NAME, read_games
from craft_env.eval.replay.page import board_boxes, target_picture
from craft_env.eval.run.runner import env_options, game_specs, load_settings
from craft_env.models.jsonl import read_jsonl
from craft_env.text import describe_conversation, format_move
from craft_env.web.frames import SEAT_KEYS
from craft_env.web.http import MAX_BODY, MAX_LINE, HttpError, read_request
from craft_env.web.seats import Refused, person_reply, role_models

from web_client import Served

PUBLIC_KEYS = {
    "id", "title", "status", "error", "game", "games", "turn", "max_turns", "acting", "results", "version",
}
PEOPLE = {"D1": "person", "D2": "person", "D3": "person", "builder": "person"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = Served(tmp_path_factory.mktemp("served") / "games")
    yield server
    server.stop()


def run_dir_of(served: Served, game_id: str) -> Path:
    return served.root / served.lobby.games[game_id].out.name


def play(served: Served, created: dict, director=None, builder=None, until=None) -> str:
    """Play the people's seats of a game through the API until it ends (or ``until(public)`` holds): each
    person's state is read (and kept in ``served.sent``) before it acts. Returns the game's status."""
    director = director or (lambda frame: {"intent": frame["options"][-1]["id"]})
    builder = builder or (lambda frame: {"candidate": 1} if frame["candidates"] else {"pass": True})
    tokens, spectator = created["tokens"], created["spectator"]
    version = -1
    for _ in range(2_000):
        public = served.state(spectator, since=version, wait=5)["public"]
        version = public["version"]
        for token in tokens.values():
            served.state(token)
        if public["status"] != "playing" or (until is not None and until(public)):
            return public["status"]
        seat = public["acting"]
        if seat not in tokens:
            continue
        state = served.state(tokens[seat])
        if not state["your_turn"]:
            continue
        frame = state["frame"]
        status, answer = served.act(tokens[seat], builder(frame) if seat == "builder" else director(frame))
        assert status == 200, answer
    raise AssertionError("the game did not end")


def logged_turns(out: Path) -> list[dict]:
    games = read_games(out / "run_1" / LOG_NAME)
    (game,) = games.values()
    assert game.status == "done"
    return game.turns


def observations(out: Path) -> tuple[dict, object]:
    """Every seat's observations during the logged game, by ``(seat, turn)``, with the board then: the game
    replayed in a fresh environment from the log's replies."""
    settings = load_settings(out)
    (spec,) = game_specs(settings, 1)
    env = craft_env.env(**env_options(spec, settings, True))
    env.reset(seed=spec.seed)
    u = env.unwrapped
    replies = defaultdict(list)
    for record in logged_turns(out):
        for entry in sorted(record["director_responses"], key=lambda e: e["order"]):
            replies[entry["director"]].append(entry["message"])
        builder = record["builder"]
        replies["builder"].append(builder["sent"] if builder["sent"] is not None else builder["action_id"])
    seen = defaultdict(list)
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last(observe=False)
        if termination or truncation:
            env.step(None)
            continue
        seat = u.seat_of.get(agent, "builder")
        offered = u.candidates if seat == "builder" and u.candidates is not None else []
        candidates = [format_move(m) for m in offered]
        seen[(seat, u.turn + 1)].append((env.observe(agent), board_boxes(u.board), candidates))
        env.step(replies[seat].pop(0))
    return seen, spec.structure


def check_frame(frame: dict, seat: str, seen: dict, walls: dict, full_board: bool) -> None:
    """One frame against the seat's observation at that turn (one of them, when a seat spoke twice)."""
    assert set(frame) <= SEAT_KEYS and frame["seat"] == seat
    matches = [s for s in seen[(seat, frame["turn"])] if s[0]["text"] == frame["text"]]
    assert matches, f"{seat} turn {frame['turn']}: the frame's text is no observation of the seat"
    obs, board, candidates = matches[0]
    for entry in frame["conversation"]:  # each line as the observation writes it, its turn and speaker too
        line = describe_conversation([(f"turn {entry['turn']} {entry['speaker']}", entry["text"])])
        assert line in obs["text"]
    if full_board:
        assert sorted(frame["board"]) == sorted(board) and frame["unseen"] == []
    if seat == "builder":
        assert "wall" not in frame and "options" not in frame
        assert frame["candidates"] == candidates
        return
    assert frame["wall"] == walls[seat]  # its own wall of the target: no other seat's, never the target
    mask = np.asarray(obs["action_mask"])
    assert all(mask[o["id"]] for o in frame["options"])


@pytest.mark.parametrize("protocol", ["craft", "paper"])
def test_every_frame_sent_to_a_seat_is_that_seats_observation(served, protocol):
    created = served.create(structures=[1], turns=3, oracle_n=3, seats=PEOPLE, protocol=protocol)
    assert play(served, created) == "done"
    out = run_dir_of(served, created["id"])
    seen, target = observations(out)
    walls = target_picture(target, ("D1", "D2", "D3"))["walls"]
    checked = 0
    for seat, token in created["tokens"].items():
        for state in served.sent[token]:
            assert set(state) == {"public", "seat", "your_turn", "frame", "colours"}
            assert set(state["public"]) == PUBLIC_KEYS and state["seat"] == seat
            if state["frame"] is not None:
                check_frame(state["frame"], seat, seen, walls, full_board=protocol == "craft")
                checked += 1
    assert checked >= 4 * 3
    spectator = served.state(created["spectator"])
    assert spectator["frame"]["target"]["target"] == board_boxes(target)  # the organiser's view alone


def test_a_token_opens_its_own_seat_and_nothing_else(served):
    created = served.create(structures=[0], turns=2, seats={"D1": "person", "builder": "person"})
    d1, builder, spectator = created["tokens"]["D1"], created["tokens"]["builder"], created["spectator"]
    play(served, created, until=lambda public: public["acting"] == "builder")
    assert served.state(d1)["seat"] == "D1" and served.state(builder)["seat"] == "builder"
    assert served.act(d1, {"candidate": 1})[0] == 409  # not D1's turn: the builder's seat is not D1's to play
    assert served.act(spectator, {"pass": True})[0] == 403
    for token in (None, "nope", served.organiser, d1[:-1]):
        assert served.call("GET", "/api/state", token)[0] == 401
    for token in (d1, spectator, None):
        assert served.call("GET", "/api/games", token)[0] == 401
        assert served.call("POST", "/api/games", token, {"seats": {}})[0] == 401
    other = served.create(structures=[0], turns=1, seats={"builder": "person"})
    assert served.state(other["tokens"]["builder"])["public"]["id"] == other["id"]
    assert served.call("POST", f"/api/games/{created['id']}/stop", d1)[0] == 401
    assert served.call("POST", f"/api/games/{created['id']}/stop", served.organiser)[0] == 200
    assert served.call("POST", f"/api/games/{other['id']}/stop", served.organiser)[0] == 200
    served.wait_game(created["id"])
    assert served.state(d1)["public"]["status"] == "stopped"
    (game,) = read_games(run_dir_of(served, created["id"]) / "run_1" / LOG_NAME).values()
    assert game.status == "stopped"


def test_the_server_binds_loopback_and_sends_its_policy(served):
    assert served.lobby is not None and served.host == "127.0.0.1"
    for path in ("/", "/play", "/assets/draw.js", "/assets/play.js", "/api/state"):
        status, headers, _ = served.raw("GET", path)
        policy = headers["Content-Security-Policy"]
        for rule in ("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"):
            assert rule in policy
        assert headers["X-Content-Type-Options"] == "nosniff"
    status, headers, body = served.raw("GET", "/assets/draw.js")
    assert status == 200 and b"function craftDrawing" in body  # the replay page's drawing, served as it is


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"seats": {"D1": "bogus"}}, "seats.D1"),
        ({"seats": {"D9": "person"}}, "seats"),
        ({"turns": 0}, "turns"),
        ({"turns": "5"}, "turns"),
        ({"structures": [999]}, "structures"),
        ({"structures": []}, "structures"),
        ({"protocol": "other"}, "protocol"),
        ({"dataset": "/etc/passwd"}, "dataset"),
        ({"on_timeout": "explode"}, "on_timeout"),
        ({"labels": {"D1": "x" * 500}}, "labels.D1"),
        ({"directors": ["D1"]}, "directors"),
        ([1, 2], "JSON object"),
    ],
)
def test_a_bad_setup_is_refused_naming_the_field(served, payload, field):
    before = set(served.lobby.games)
    status, answer = served.call("POST", "/api/games", served.organiser, payload)
    assert status == 400 and field in answer["error"]
    assert set(served.lobby.games) == before


def test_malformed_requests_get_a_clear_refusal(served):
    created = served.create(structures=[0], turns=1, seats={"D1": "person"}, oracle_n=0)
    token = created["tokens"]["D1"]
    auth = {"Authorization": f"Bearer {token}"}
    cases = [
        (("POST", "/api/act", b'{"message": "hi"}', {**auth, "Content-Type": "text/plain"}), 415),
        (("POST", "/api/act", b"{not json", {**auth, "Content-Type": "application/json"}), 400),
        (("POST", "/api/act", b"x" * (MAX_BODY + 1), {**auth, "Content-Type": "application/json"}), 413),
        (("GET", "/api/state?since=x", None, auth), 400),
        (("GET", "/nowhere", None, {}), 404),
        (("PUT", "/api/act", b"{}", {**auth, "Content-Type": "application/json"}), 405),
        (("GET", "/", None, {"X-Long": "y" * (MAX_LINE + 10)}), 431),
    ]
    for request, expected in cases:
        status, headers, body = served.raw(*request)
        assert status == expected and "error" in json.loads(body), request[:2]
        assert headers["Content-Type"] == "application/json"
    served.state(token, wait=5)
    play(served, created, until=lambda public: public["acting"] == "D1")
    for payload, expected, words in [
        ({"message": "x" * 3000}, 400, "at most"),
        ({"message": "a \x1b[31m red"}, 400, "control characters"),
        ({"message": "   "}, 400, "empty"),
        ({"message": "hello there"}, 422, "no instruction"),  # the scripted builder reads only instructions
        ({"intent": 10_000}, 422, "not one of the instructions"),
        ({"intent": True}, 400, "whole number"),
        ({"nothing": 1}, 400, "message"),
    ]:
        status, answer = served.act(token, payload)
        assert status == expected and words in answer["error"], payload
    assert served.state(token)["your_turn"]  # every refusal leaves the turn open
    hostile = "<script>alert(1)</script> put a small green block on my left column, bottom layer"
    assert served.act(token, {"message": hostile})[0] == 200
    served.wait_game(created["id"])
    (turn,) = logged_turns(run_dir_of(served, created["id"]))
    said = {e["director"]: e["message"] for e in turn["director_responses"]}
    assert said["D1"].startswith("<script>")  # logged as typed: the pages show it as text


def test_a_late_seat_waits_or_passes_as_the_organiser_chose(served):
    waits = served.create(structures=[0], turns=1, seats={"D1": "person"}, timeout=1, on_timeout="wait")
    passes = served.create(structures=[0], turns=2, seats={"builder": "person"}, timeout=1, on_timeout="pass")
    version = -1
    while True:
        state = served.state(waits["spectator"], since=version, wait=10)
        version = state["public"]["version"]
        if state["late"] == ["D1"]:
            break
    assert served.act(waits["tokens"]["D1"], {"pass": True})[0] == 200
    served.wait_game(waits["id"])
    served.wait_game(passes["id"])
    turns = logged_turns(run_dir_of(served, passes["id"]))
    assert [t["builder"]["reason"] for t in turns] == ["no reply within 1 s: passed by the server"] * 2
    assert all(t["move"] is None or t["move"] == "pass" or not t["executed"] for t in turns)


def test_a_restarted_server_resumes_the_game_with_the_peoples_replies(tmp_path):
    root = tmp_path / "games"
    first = Served(root)
    created = first.create(structures=[0], turns=3, oracle_n=3, seats={"D2": "person", "builder": "person"})
    said = "put a small blue block on my right column, bottom layer"
    director = lambda frame: {"message": said}  # noqa: E731
    in_turn_2 = lambda public: public["turn"] == 2 and public["acting"] == "builder"  # noqa: E731
    play(first, created, director=director, until=in_turn_2)
    first.stop()  # as Ctrl-C: the game in play is cancelled, its turn 1 is in the log
    again = Served(root)
    try:
        state = again.state(created["tokens"]["builder"], wait=10)
        assert state["public"]["status"] == "playing"
        assert play(again, created, director=director) == "done"
    finally:
        again.stop()
    out = root / again.lobby.games[created["id"]].out.name
    (game,) = read_games(out / "run_1" / LOG_NAME).values()
    assert game.status == "done" and game.attempt == 2 and [t["turn_number"] for t in game.turns] == [1, 2, 3]
    records = read_jsonl(out / "run_1" / LOG_NAME)
    first_attempt = [r for r in records if r["kind"] == "turn" and r["attempt"] == 1]
    assert len(first_attempt) == 1
    assert first_attempt[0]["move"] == game.turns[0]["move"]
    d2 = [e["message"] for t in game.turns for e in t["director_responses"] if e["director"] == "D2"]
    assert d2 == [said] * 3


def test_the_logs_read_like_any_run(served, tmp_path):
    created = served.create(
        structures=[0, 2], turns=2, oracle_n=3, labels={"D1": "P07"},
        seats={"D1": "person", "builder": "person"},
    )
    assert play(served, created) == "done"
    out = run_dir_of(served, created["id"])
    config = json.loads((out / "config.json").read_text())
    assert config["seat_kinds"] == {"builder": "person", "D1": "person", "D2": "scripted", "D3": "scripted"}
    assert config["seat_labels"] == {"D1": "P07"}
    named = (config["director_model"], config["builder_model"], config["person"])
    assert named == ("scripted", "person", "D1")
    assert main(["report", str(out), "--no-plots"]) == 0
    assert main(["replay", str(out), "-o", str(tmp_path / "replay.html")]) == 0
    assert main(["transcript", str(out), "--game", "0", "-o", str(tmp_path / "t.md")]) == 0
    assert main(["leaderboard", str(out), "-o", str(tmp_path / "board.json"), "--format", "json"]) == 0
    board = (tmp_path / "board.json").read_text()
    assert "person" in board
    for seat in ("builder", "D1"):
        assert main(["export", str(out), "--format", "sft", "--seat", seat, "-o", str(tmp_path / seat)]) == 0
        files = sorted((tmp_path / seat).glob("*.jsonl"))
        rows = [json.loads(line) for f in files for line in f.read_text().splitlines()]
        assert len(rows) == 4 and all(r["meta"]["model"] == "person" for r in rows), rows[:1]


S, P, R = "scripted", "person", "random"


@pytest.mark.parametrize(
    "directors, builder, fields",
    [
        ((P, P, P), P, (P, P, None)),
        ((S, S, S), P, (S, P, None)),
        ((P, "a/m", "a/m"), R, ("a/m", R, "D1")),
        ((P, P, S), "a/m", ("person+scripted", "a/m", None)),
        ((R, S, S), S, ("random+scripted", S, None)),
    ],
)
def test_the_run_names_who_played_in_the_fields_the_readers_know(directors, builder, fields):
    named = role_models({"builder": builder, **dict(zip(("D1", "D2", "D3"), directors))})
    assert (named["director_model"], named["builder_model"], named["person"]) == fields


def _context():
    env = craft_env.env(message_mode="text", max_turns=3, oracle_n=3, text_observations=True)
    env.reset(seed=3)
    director = env.agent_selection
    obs = env.observe(director)
    u = env.unwrapped
    make = lambda agent, seat, obs, cands: AgentContext(  # noqa: E731
        agent=agent, seat=seat, observation=obs, board=u.board, conversation=(), turn=1, max_turns=3,
        candidates=cands,
    )
    director_context = make(director, u.seat_of[director], obs, None)
    return director_context, make("builder", None, env.observe("builder"), tuple(u.candidates or ()))


CONTEXTS = _context()
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)
NAMES = st.sampled_from(["message", "intent", "move", "candidate", "pass", "x"])
PAYLOADS = st.dictionaries(NAMES, JSON, max_size=3)


@settings(max_examples=60, deadline=None)
@given(payload=PAYLOADS | JSON, strict=st.booleans())
def test_any_json_from_a_person_is_a_reply_or_a_clear_refusal(payload, strict):
    for context in CONTEXTS:
        try:
            person_reply(payload, context, strict)
        except Refused as refusal:
            assert str(refusal) and refusal.status in (400, 422)


@settings(max_examples=100, deadline=None)
@given(head=st.binary(max_size=300))
def test_any_bytes_are_a_request_or_a_clear_refusal(head):
    async def read():
        reader = asyncio.StreamReader(limit=MAX_LINE)
        reader.feed_data(head)
        reader.feed_eof()
        try:
            await read_request(reader)
        except HttpError as error:
            assert 400 <= error.status < 600 and str(error)

    asyncio.run(read())


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_command_serves_on_loopback_prints_the_link_and_stops_on_ctrl_c(tmp_path, stop):
    """``craft-env serve`` in its own process: the link it prints opens the lobby; Ctrl-C (SIGINT) or SIGTERM
    ends it cleanly, taken by the event loop (``web.serve._serve_until_signalled``)."""
    out = str(tmp_path / "games")
    command = [sys.executable, "-m", "craft_env.cli", "serve", "--port", "0", "--out", out]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        link = ""
        while "#organiser=" not in link:
            link = process.stdout.readline()
            assert link, process.stderr.read()
        url, token = link.split("Organiser's page: ", 1)[1].strip().split("/#organiser=")
        assert url.startswith("http://127.0.0.1:")
        request = urllib.request.Request(url + "/api/options", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            assert "person" in json.loads(response.read())["kinds"]
    finally:
        process.send_signal(stop)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "Stopped" in out
    assert main(["serve", "--port", "70000", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()



def test_only_the_command_line_imports_the_server():
    """``import craft_env`` stays light: outside ``craft_env.web`` only ``cli`` (in ``serve``) imports it."""
    source = Path(craft_env.__file__).parent
    found = []
    for path in source.rglob("*.py"):
        if "web" in path.relative_to(source).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [(path.name, n) for n in names if n.startswith("craft_env.web")]
    assert sorted(found) == [("cli.py", "craft_env.web.serve")]
