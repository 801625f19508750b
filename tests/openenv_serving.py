"""One way for the tests to run the OpenEnv server: ``serving(app, **bounds)`` on a free loopback port."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from craft_env.train.openenv import craft_server


@contextlib.contextmanager
def serving(app, **bounds):
    """``craft_server(app, **bounds)`` on a free loopback port, in a thread; yields the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = craft_server(app, log_level="warning", log_config=None, **bounds)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:  # waits for the server thread to listen, not for a duration
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
