"""``craft-env serve``: the server's lifetime, from start (resuming saved games) to Ctrl-C.

It binds ``127.0.0.1`` unless told otherwise (``docs/serve.md`` says what
changes when it is exposed) and prints the organiser's link, whose token
opens the lobby.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Callable

from craft_env.datasets import load_dataset
from craft_env.eval.logs.outputs import output_dir
from craft_env.web.app import App
from craft_env.web.http import Server
from craft_env.web.lobby import DATASETS, DEFAULT_MAX_GAMES, Lobby

DEFAULT_PORT = 8765


def organiser_link(host: str, port: int, token: str) -> str:
    """The organiser's link (the token in the fragment, which the browser keeps to itself)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/#organiser={token}"


async def serve_async(
    root: str | os.PathLike,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    api_base: str | None = None,
    models: tuple[str, ...] = (),
    max_games: int = DEFAULT_MAX_GAMES,
    max_connections: int = 256,
    ready: Callable[[Server, Lobby], None] | None = None,
    stop: asyncio.Event | None = None,
    datasets: tuple[str, ...] = (),
) -> None:
    """Serve the games of ``root`` until ``stop`` is set (or the task is cancelled); ``ready`` is called
    once the socket listens. ``datasets``: structures files offered beside the bundled sets. Games in play
    are cancelled on the way out and resume at the next start."""
    lobby = Lobby(root, api_base, max_games, (*DATASETS, *check_datasets(datasets)))
    server = Server(App(lobby, models), host, port, max_connections)
    await server.start()
    lobby.resume()
    try:
        if ready is not None:
            ready(server, lobby)
        await (stop or asyncio.Event()).wait()
    finally:
        await server.close()
        await lobby.close()


def _say(text: str) -> None:
    print(text, flush=True)  # a supervisor or a pipe reads the organiser's link at once


def serve(root: str | os.PathLike, say: Callable[[str], None] = _say, **options) -> None:
    """Blocking ``serve_async`` until Ctrl-C or SIGTERM; prints where the server listens and the organiser's
    link, and that it stopped."""

    def ready(server: Server, lobby: Lobby) -> None:
        resumed = sum(1 for g in lobby.games.values() if g.status == "playing")
        say(f"Serving {len(lobby.games)} saved game(s) ({resumed} in play) from {os.fspath(root)}")
        say(f"Organiser's page: {organiser_link(server.host, server.port, lobby.organiser)}")
        say("Stop with Ctrl-C; games in play resume when the server starts again.")

    try:
        asyncio.run(_serve_until_signalled(root, ready, options))
    except KeyboardInterrupt:  # where the loop cannot take the signals itself (another thread, Windows)
        pass
    say("Stopped; the games in play resume when the server starts again.")


#: The signals that stop the server: Ctrl-C, and SIGTERM (schedulers, ``docker stop``) where there is one.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


async def _serve_until_signalled(root: str | os.PathLike, ready: Callable, options: dict) -> None:
    """``serve_async`` until Ctrl-C or SIGTERM, taken by the event loop itself.

    The loop's own handlers (``loop.add_signal_handler``) also make the
    signal wake the loop through its self-pipe. With a handler set by
    ``signal.signal`` instead (what ``asyncio.run`` does for Ctrl-C), a
    signal that the system hands to another thread of the process (the
    server has one, the executor that resolved its address) only marks the
    main thread, which sleeps on while nothing else happens: the server
    then did not stop. Where the loop cannot take them (not the main
    thread; Windows), Ctrl-C stops it as a ``KeyboardInterrupt``.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    taken = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such support
            continue
        taken.append(signum)
    try:
        await serve_async(root, ready=ready, stop=stop, **options)
    finally:
        for signum in taken:
            loop.remove_signal_handler(signum)


def check_options(host: str, port: int, max_games: int, out: str) -> None:
    """The command line's values checked before anything starts: ``ValueError`` naming the option."""
    if not host or any(c.isspace() for c in host):
        raise ValueError(f"--host: expected an address such as 127.0.0.1, got {host!r}")
    if not 0 <= port <= 65535:
        raise ValueError(f"--port: expected 0 to 65535, got {port}")
    if max_games < 1:
        raise ValueError(f"--max-games: expected at least 1, got {max_games}")
    output_dir(out, "--out")


def check_datasets(files: tuple[str, ...]) -> tuple[str, ...]:
    """Structures files for the organiser's form, as absolute paths; ``ValueError`` naming a bad one."""
    found = []
    for name in files:
        load_dataset(name)  # unreadable, empty or not structures: refused here, naming the file
        found.append(os.path.abspath(name))
    return tuple(found)
