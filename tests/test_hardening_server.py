"""The OpenEnv server under hostile clients (issue 35, items 1-3): loopback servers started here.

HTTP ``/reset`` answers and leaks nothing; bad arguments are a 400 naming
them; connections are capped and a half-sent request times out, each logged
once, not per connection; with a token, only its holders play, and the token
never reaches a log.
"""

from __future__ import annotations

import asyncio
import errno
import http.client
import json
import logging
import os
import socket
import time

import pytest

pytest.importorskip("openenv")

import craft_env  # noqa: E402
from craft_env.train import openenv as server_module  # noqa: E402
from craft_env.train.openenv import CraftEnvClient, create_craft_app  # noqa: E402
from openenv_serving import serving  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
TOKEN = "s3cret-token-for-the-test-0123456789"
LOGGER = "craft_env.train.openenv"
HALF_SENT = b"POST /reset HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"


def request(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        payload = None if body is None else json.dumps(body)
        headers = {"content-type": "application/json", **(headers or {})}
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (the socket's timeout bounds each read)."""
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def warnings_of(caplog, start: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER and r.getMessage().startswith(start)]


@pytest.fixture(scope="module")
def app():
    return create_craft_app(2, oracle_n=5, max_turns=4)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files through /proc")
def test_http_reset_shows_the_first_chat_and_leaks_no_files(app):
    local = craft_env.text_env(oracle_n=5, max_turns=4)
    expected, _ = local.reset(seed=3)
    local.close()
    with serving(app) as port:
        status, body = request(port, "POST", "/reset", {"seed": 3})
        assert status == 200 and body["observation"]["messages"] == expected and body["done"] is False
        before = open_files()
        for seed in range(25):
            status, body = request(port, "POST", "/reset", {"seed": seed, "structure": seed % 20})
            assert status == 200 and body["observation"]["messages"]
        assert open_files() - before < 6  # each leaked event loop held 3 files: 75 over these requests


def test_bad_arguments_and_a_step_without_a_game_are_a_400_naming_them(app):
    with serving(app) as port:
        for body, field in (
            ({"seed": 2**63}, "seed"),
            ({"seed": 1, "structure": True}, "structure"),
            ({"seed": 1, "run": "x"}, "run"),
        ):
            status, answer = request(port, "POST", "/reset", body)
            assert status == 400 and answer["detail"].startswith(f"{field}: expected "), answer
        status, answer = request(port, "POST", "/step", {"action": {"reply": "MOVE: pass"}})
        assert status == 400 and "/ws" in answer["detail"]
        with CraftEnvClient(base_url=f"http://127.0.0.1:{port}").sync() as remote:
            expected = "seed: expected an int from 0 to 9,223,372,036,854,775,807, got 9223372036854775808"
            with pytest.raises(RuntimeError, match=expected):
                remote.reset(seed=2**63)
            result = remote.reset(seed=2**63 - 1)  # the session survives a refused reset
            assert not result.done and result.observation.messages


def test_connections_past_the_cap_are_refused_at_once_and_logged_once(app, caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    with serving(app, max_connections=6, request_timeout=300) as port:
        held = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(6)]
        for sock in held:
            sock.sendall(HALF_SENT)
        refused = []
        for _ in range(30):
            with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                refused.append(read_until_closed(sock))
        assert all(answer.startswith(b"HTTP/1.1 503 ") for answer in refused)
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:  # a health check, refused
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try:
                assert read_until_closed(sock).startswith(b"HTTP/1.1 503 ")
            except ConnectionResetError:  # closed with the request unread: the kernel may reset instead
                pass
        assert len(warnings_of(caplog, "refused connections: 6 are open")) == 1
        for sock in held:
            sock.close()
        deadline = time.monotonic() + 60
        while request(port, "GET", "/health")[0] != 200:  # the server sees the closes, then answers
            assert time.monotonic() < deadline
    assert len(warnings_of(caplog, "refused connections")) == 1


def test_a_half_sent_request_is_closed_after_the_request_timeout_and_logged_once(app, caplog):
    caplog.set_level(logging.WARNING, logger=LOGGER)
    with serving(app, max_connections=50, request_timeout=0.3) as port:
        slow = [socket.create_connection(("127.0.0.1", port), timeout=60) for _ in range(12)]
        for sock in slow[:6]:
            sock.sendall(HALF_SENT)  # headers begun, never finished
        for sock in slow[6:9]:
            sock.sendall(HALF_SENT + b"content-length: 100\r\n\r\n{")  # a body begun, never finished
        started = time.monotonic()
        for sock in slow:  # the last three sent nothing at all
            assert read_until_closed(sock) == b""
            sock.close()
        assert time.monotonic() - started < 60
        assert request(port, "GET", "/health") == (200, {"status": "healthy"})
        with CraftEnvClient(base_url=f"http://127.0.0.1:{port}").sync() as remote:
            first = remote.reset(seed=4)
            with socket.create_connection(("127.0.0.1", port), timeout=60) as later:
                assert read_until_closed(later) == b""  # a request timeout has passed since the session began
            assert remote.reset(seed=4).observation.messages == first.observation.messages  # it still plays
    assert len(warnings_of(caplog, "closed connections that sent no whole request in 0.3 s")) == 1


def test_with_a_token_only_its_holders_play_and_the_token_is_never_logged(caplog):
    caplog.set_level(logging.DEBUG)
    guarded = create_craft_app(2, token=TOKEN, oracle_n=5, max_turns=4)
    with serving(guarded) as port:
        url = f"http://127.0.0.1:{port}"
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            status, answer = request(port, "POST", "/reset", {"seed": 1}, headers)
            assert status == 401 and "token" in answer["detail"]
        assert request(port, "GET", "/health")[0] == 200
        status, answer = request(port, "POST", "/reset", {"seed": 1}, {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200 and answer["observation"]["messages"]
        with pytest.raises(ConnectionError, match="403"):
            with CraftEnvClient(base_url=url).sync() as remote:
                remote.reset(seed=1)
        with pytest.raises(ConnectionError, match="403"):
            with CraftEnvClient(base_url=url, token="x" * len(TOKEN)).sync() as remote:
                remote.reset(seed=1)
        with CraftEnvClient(base_url=url, token=TOKEN).sync() as remote:
            result = remote.reset(seed=1)
            assert not result.done and result.observation.messages
    assert len(warnings_of(caplog, "refused a request without the server's token")) == 1
    # The server's records at every level (the client's websockets library logs its own headers at DEBUG).
    server_side = [record for record in caplog.records if not record.name.startswith("websockets.client")]
    assert server_side and not any(TOKEN in record.getMessage() for record in server_side)


def run_main(monkeypatch, capsys, argv, token=None):
    if token is None:
        monkeypatch.delenv(server_module.TOKEN_ENV, raising=False)
    else:
        monkeypatch.setenv(server_module.TOKEN_ENV, token)
    monkeypatch.setattr(server_module.uvicorn.Server, "run", lambda self: pytest.fail("the server started"))
    with pytest.raises(SystemExit) as stop:
        server_module.main(argv)
    error = capsys.readouterr().err
    assert stop.value.code == 2 and error.count("\n") == 1, error
    return error


def test_the_server_refuses_to_start_exposed_without_a_token_or_with_bad_flags(monkeypatch, capsys):
    error = run_main(monkeypatch, capsys, ["--host", "0.0.0.0"])
    assert "--host: 0.0.0.0 is reachable from other machines" in error and "--allow-anyone" in error
    error = run_main(monkeypatch, capsys, ["--host", "0.0.0.0"], token="short-token")
    assert "CRAFT_ENV_TOKEN: expected 16 to 4,096 printable ASCII characters" in error
    assert "11 characters" in error and "short-token" not in error
    assert "--max-connections: expected 1 to" in run_main(monkeypatch, capsys, ["--max-connections", "0"])
    error = run_main(monkeypatch, capsys, ["--request-timeout", "nan"])
    assert "--request-timeout: expected seconds" in error
    assert "--port: expected 0 to 65,535" in run_main(monkeypatch, capsys, ["--port", "70000"])
    assert "--max-sessions: expected 1 to 1,024" in run_main(monkeypatch, capsys, ["--max-sessions", "0"])
    assert "seat: expected one of builder" in run_main(monkeypatch, capsys, ["--seat", "D9"])
    assert server_module.is_loopback("::1") and server_module.is_loopback("127.0.0.2")
    assert not server_module.is_loopback("example.org") and not server_module.is_loopback("10.0.0.1")


def test_running_out_of_files_at_accept_is_logged_once_not_once_per_failed_accept(caplog):
    caplog.set_level(logging.WARNING)
    loop = asyncio.new_event_loop()
    try:
        server_module.note_accept_failures(loop)
        for _ in range(500):  # asyncio reports each failed accept of a turn, up to the backlog
            error = OSError(errno.EMFILE, "Too many open files")
            loop.call_exception_handler({"message": server_module.ACCEPT_FAILED, "exception": error})
        loop.call_exception_handler({"message": "something else went wrong"})
    finally:
        loop.close()
    assert len(warnings_of(caplog, "could not accept connections: this process has no file left")) == 1
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == ["something else went wrong"]
