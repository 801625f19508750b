"""``text_env(..., num_envs=B, workers=K)``: the B games stepped in K processes with one call.

The games are dealt out in K contiguous shares (the first ``B % K`` workers
take one more); each worker process holds a ``BatchedTextEnv`` of its share
and talks to the caller over a pipe of its own. ``reset`` and ``step``
send every worker its part, then gather the answers in game order, so the
workers play at the same time and the result is what one
``BatchedTextEnv`` of the B games returns (each game depends only on its
seed, structure and replies).

Arguments are checked here, before any worker is told anything, with the
same checks and messages as ``BatchedTextEnv`` (a local one, which plays
nothing, does the checking). A worker that dies (killed, out of memory, a
crash of the interpreter) makes the call raise ``WorkerError`` naming the
worker and the games it held, as soon as its process has ended: the wait
is on the pipe and on the process together, never on the pipe alone; a
worker silent for ``RECEIVE_SECONDS`` is taken as hung, ended, and named
the same way. An
error raised inside a worker comes back as the same ``ValueError`` or as
``WorkerError`` with its text. After a ``WorkerError`` the environment
only closes. ``close()`` asks every worker to stop, waits for it
(``JOIN_SECONDS``), ends any that does not, and may be called more than once.

Workers are started with ``spawn`` (fresh interpreters: nothing of the
caller's state, threads or event loops is inherited), which takes a second
or two each; the start is paid once per environment, not per step.

A step costs the caller one message out and one back per worker, and as
little of its own time as can be, since the workers wait while it works
(a rollout loop calls ``step`` in lockstep): an answer is read as soon as
its worker sends it (while slower workers still play), and the caller's
garbage collector is paused while the answers' objects are built (they
hold no cycles; collecting while they are made would scan them again and
again). Where the workers are pinned (below), the caller sends its parts
to the workers on other cores first and last to those on the core it runs
on (``sending_order``, ``current_core``): a worker woken on the caller's
own core may switch the caller out at once, which held the other workers'
parts back by 1 to 5 ms on a busy 2-core machine. (Linux's batch
scheduling, ``SCHED_BATCH``, which a worker used for the same end before,
keeps a woken worker from preempting anything, so beside other programs'
work, even at nice 19, each worker waited out their time slices on every
call: docs/train.md, "Measured".) A worker, once its games are set up,
freezes its start-up heap (modules, numba's, the dataset: never garbage)
out of the garbage collector's walks (its collections cost 19 µs a step
before, 6 after). Its games' live objects
(about 2,000 each) would still be walked by every full collection (13 ms
for 32 games, about one in 100 calls, finding nothing: a game's objects
are freed as it ends), each landing in one worker's call and so on the
call's critical path; a worker makes no full collection of its own accord
but one after answering every ``FULL_COLLECTION_CALLS`` calls, the same
call in every worker, while the caller reads the answers.

Pinning: when the workers are a whole multiple (2 or more) of the cores
this process may use (``os.sched_getaffinity``), worker ``k`` is pinned to
the ``k``-th of them, round the cores again (``cores`` says where each
went); otherwise none is. With a worker for each core and the caller
waking them all at once, the scheduler sometimes queued two workers on one
core while the other idled (it leaves a just-woken process where it was
put when that core was recently idle): in about one call in ten one worker
started 4 ms late or ran at half speed, on the 2-core machine of
docs/train.md. Pinned, each core takes the same number of workers. With
fewer workers than cores none is pinned: the scheduler has idle cores for
them, and several programs on one machine, each pinning its workers to
the first cores, would pile onto them.

Messages are pickled (``marshal``, a little faster, writes a numpy
scalar as bytes without a word, so it is not used). Each answer carries
its worker's CPU seconds so far (``cpu_seconds``), which
``benchmarks/bench_train.py`` uses to say how far the work spreads.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import multiprocessing
import os
import pickle
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, wait
from typing import Any

from craft_env.eval.run.settings import RunSettings
from craft_env.train.text_env import BatchedTextEnv, Messages, check_replies, whole_number

#: Seconds ``close()`` waits for a worker to stop before it ends the process.
JOIN_SECONDS = 30.0
#: A worker's full garbage collections: one after answering every this many calls (module docstring).
FULL_COLLECTION_CALLS = 256
#: Seconds a call waits for a worker's answer; a worker silent that long is taken as hung and ended.
RECEIVE_SECONDS = 3600.0


class WorkerError(RuntimeError):
    """A worker process died, or failed in a way its caller cannot act on; names the games it held."""


def _pack(message: Any) -> bytes:
    """``message`` as bytes (``pickle``'s newest protocol)."""
    return pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)


def _unpack(data: bytes) -> Any:
    """The message ``_pack`` made."""
    return pickle.loads(data)


def usable_cores() -> list[int]:
    """The cores this process may run on; none where the system cannot pin a process to a core."""
    if not hasattr(os, "sched_setaffinity"):
        return []
    return sorted(os.sched_getaffinity(0))


def worker_cores(workers: int, cores: list[int]) -> list[int | None]:
    """The core each of ``workers`` workers is pinned to, or None for each when they are not pinned.

    Pinned when the workers are a whole multiple (2 or more) of ``cores``: each
    core then takes the same number of workers (module docstring, "Pinning").
    """
    if workers < 2 or not cores or workers % len(cores) != 0:
        return [None] * workers
    return [cores[number % len(cores)] for number in range(workers)]


@functools.cache
def _core_reader() -> Callable[[], int] | None:
    """The C library's ``sched_getcpu`` (Linux's glibc and musl), or None where there is none."""
    try:
        reader = ctypes.CDLL(None).sched_getcpu
    except (AttributeError, OSError, TypeError):  # no such function, or no C library to load this way
        return None
    reader.restype, reader.argtypes = ctypes.c_int, []
    return reader


def current_core() -> int | None:
    """The core this process runs on at this moment, or None where the system cannot say."""
    reader = _core_reader()
    core = -1 if reader is None else reader()
    return core if core >= 0 else None


def sending_order(cores: list[int | None], here: int | None) -> list[int]:
    """The order in which to send the workers pinned to ``cores`` their parts when the caller runs on
    ``here``: those on other cores first, those on ``here`` last, else as numbered (module docstring)."""
    return sorted(range(len(cores)), key=lambda number: here is not None and cores[number] == here)


def _settle_in(core: int | None) -> None:
    """Make a started worker cheaper to run beside its caller (module docstring): pinned to ``core``
    (None: not pinned), and the start-up heap frozen out of the garbage collector's walks."""
    if core is not None:
        try:
            os.sched_setaffinity(0, {core})
        except OSError:  # the core was taken from this process meanwhile: left to the scheduler
            pass
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 2**31 - 1)  # full collections: every FULL_COLLECTION_CALLS calls


def _serve(conn: Connection, num_envs: int, options: dict[str, Any], core: int | None = None) -> None:
    """A worker's loop: build the env (pinned to ``core`` unless None), answer ``(command, arguments)``
    until ``close``.

    Answers are ``("ok", result, done, cpu seconds)`` or ``("error", kind, text)``."""
    try:
        env = BatchedTextEnv(num_envs, **options)
    except Exception as error:  # reported to the caller, who raises it
        conn.send_bytes(_pack(("error", type(error).__name__, str(error))))
        return
    _settle_in(core)
    conn.send_bytes(_pack(("ok", None, env.done, time.process_time())))
    calls = 0
    try:
        while True:
            command, arguments = _unpack(conn.recv_bytes())
            if command == "close":
                env.close()
                conn.send_bytes(_pack(("ok", None, [], time.process_time())))
                return
            try:
                result = getattr(env, command)(*arguments)
            except ValueError as error:
                answer = ("error", "ValueError", str(error))
            except Exception as error:
                answer = ("error", type(error).__name__, "".join(traceback.format_exception(error)))
            else:
                answer = ("ok", result, env.done, time.process_time())
            try:
                data = _pack(answer)
            except Exception as error:  # an object of the answer that pickle cannot write
                data = _pack(("error", type(error).__name__, f"the answer could not be sent: {error}"))
            conn.send_bytes(data)
            calls += 1
            if calls % FULL_COLLECTION_CALLS == 0:  # while the caller reads the answers and replies
                gc.collect()
    except (EOFError, BrokenPipeError, KeyboardInterrupt):  # the caller went away
        env.close()


class _Worker:
    """One worker process, its end of the pipe and the games it holds (``first .. first + count``)."""

    def __init__(
        self, context: Any, number: int, first: int, count: int, options: dict[str, Any], core: int | None
    ) -> None:
        self.number, self.first, self.count, self.core = number, first, count, core
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, count, options, core), name=f"text_env-worker-{number}", daemon=True
        )
        self.process.start()
        child.close()
        self.games = "no game yet"
        self.cpu_seconds = 0.0

    def send(self, message: Any) -> None:
        try:
            self.conn.send_bytes(_pack(message))
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            raise self.died() from None

    def read(self) -> tuple[Any, list[bool]]:
        """``(answer, which of its games have ended)`` from the pipe (``_gather`` waits for it); a
        ``WorkerError`` naming its games when the pipe is closed, or the worker's error."""
        try:
            status, *payload = _unpack(self.conn.recv_bytes())
        except (EOFError, ConnectionResetError, OSError):
            raise self.died() from None
        if status == "ok":
            answer, done, self.cpu_seconds = payload
            return answer, done
        kind, message = payload
        if kind == "ValueError":
            raise ValueError(message)
        raise WorkerError(f"text_env worker {self.number} ({self.games}) failed: {kind}: {message}")

    def hung(self) -> WorkerError:
        self.process.kill()
        self.process.join()
        return WorkerError(
            f"text_env worker {self.number} (pid {self.process.pid}) sent nothing for "
            f"{RECEIVE_SECONDS:.0f} s while playing {self.games}; it was ended"
        )

    def died(self) -> WorkerError:
        self.process.join(timeout=JOIN_SECONDS)
        code = self.process.exitcode
        how = f"exit code {code}" if code is None or code >= 0 else f"signal {-code}"
        return WorkerError(
            f"text_env worker {self.number} (pid {self.process.pid}) died ({how}) while playing {self.games}"
        )

    def close(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send_bytes(_pack(("close", ())))
                if self.conn.poll(JOIN_SECONDS):
                    self.conn.recv_bytes()
            except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
                pass
            self.process.join(timeout=JOIN_SECONDS)
            if self.process.is_alive():
                self.process.kill()
        self.process.join()
        self.conn.close()


def _gather(workers: list[_Worker]) -> list[tuple[Any, list[bool]]]:
    """Each worker's ``(answer, done)``, in the order given, each read as soon as it arrives.

    The wait is on the pipes and the processes together: a worker whose
    process ends before it answers is a ``WorkerError`` at once, and one
    silent for ``RECEIVE_SECONDS`` is ended and named the same way."""
    answers: list[Any] = [None] * len(workers)
    pending = {worker.conn: (k, worker) for k, worker in enumerate(workers)}
    deadline = time.monotonic() + RECEIVE_SECONDS
    collecting = gc.isenabled()
    gc.disable()  # the answers' objects are new and hold no cycles: one collection after, not one per few
    try:
        while pending:
            sentinels = {worker.process.sentinel: worker for _, worker in pending.values()}
            ready = wait([*pending, *sentinels], timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                raise next(iter(pending.values()))[1].hung()
            for item in ready:
                if item in pending:
                    k, worker = pending.pop(item)
                    answers[k] = worker.read()
            for item in ready:
                worker = sentinels.get(item)
                if worker is not None and worker.conn in pending:  # ended without answering
                    raise worker.died()
    finally:
        if collecting:
            gc.enable()
    return answers


class ProcessTextEnv:
    """``num_envs`` games of one seat in ``workers`` processes, stepped together (module docstring).

    The same interface as ``BatchedTextEnv``: ``reset``, ``step``, ``done``,
    ``close``, ``seat``, ``settings``, ``num_envs``.
    """

    def __init__(self, num_envs: int, workers: int, **options: Any) -> None:
        self._checker = BatchedTextEnv(num_envs, **options)  # checks every argument, plays nothing
        self.num_envs = self._checker.num_envs
        self.workers = whole_number("workers", workers, 1, self.num_envs, "an int (at most num_envs)")
        self._done = [True] * self.num_envs
        self._started = False
        self._failed = False
        context = multiprocessing.get_context("spawn")
        share, extra = divmod(self.num_envs, self.workers)
        cores = worker_cores(self.workers, usable_cores())
        self._workers: list[_Worker] = []
        first = 0
        try:
            for number in range(self.workers):
                count = share + (number < extra)
                self._workers.append(_Worker(context, number, first, count, options, cores[number]))
                first += count
            _gather(self._workers)
        except BaseException:
            self.close()
            raise

    @property
    def seat(self) -> str:
        return self._checker.seat

    @property
    def settings(self) -> RunSettings:
        return self._checker.settings

    @property
    def done(self) -> list[bool]:
        """Which games have ended (they take ``None`` as their reply until the next ``reset``)."""
        return list(self._done)

    @property
    def started(self) -> bool:
        return self._started

    @property
    def cores(self) -> list[int | None]:
        """The core each worker is pinned to (None: not pinned; module docstring, "Pinning")."""
        return [worker.core for worker in self._workers]

    @property
    def cpu_seconds(self) -> list[float]:
        """Each worker process's CPU seconds (user and system) so far, as of its last answer: its
        start-up included, so compare two readings to cost a stretch of calls."""
        return [worker.cpu_seconds for worker in self._workers]

    def _check_usable(self, call: str) -> None:
        self._checker._check_open(call)
        if self._failed:
            raise ValueError(f"{call}: a worker of this environment failed; close it and make a new one")

    def _call(self, command: str, parts: list[tuple]) -> list[Any]:
        """Send each worker its part (in ``sending_order``), then gather the answers in worker order (and
        which games ended)."""
        try:
            for number in sending_order(self.cores, current_core()):
                self._workers[number].send((command, parts[number]))
            answers = _gather(self._workers)
        except (WorkerError, ValueError):  # a worker died, or refused what was checked here: states differ
            self._failed = True
            raise
        self._done = [ended for _, done in answers for ended in done]
        return [answer for answer, _ in answers]

    def reset(
        self, seed: int | list[int] = 0, structure: int | list[int | None] | None = None, run: int = 1
    ) -> tuple[list[Messages | None], list[dict[str, Any]]]:
        """Start every game (``BatchedTextEnv.reset``)."""
        self._check_usable("reset")
        specs = self._checker.games(seed, structure, run)
        parts = []
        for worker in self._workers:
            share = specs[worker.first : worker.first + worker.count]
            worker.games = ", ".join(f"{spec.structure_id} (seed {spec.seed})" for spec in share)
            parts.append(([spec.seed for spec in share], [spec.index for spec in share], share[0].run))
        answers = self._call("reset", parts)
        observations = [o for answer in answers for o in answer[0]]
        infos = [i for answer in answers for i in answer[1]]
        self._started = True
        return observations, infos

    def step(
        self, replies: list[str | None]
    ) -> tuple[list[Messages | None], list[float], list[bool], list[bool], list[dict[str, Any]]]:
        """Answer every waiting game and play on until each waits again (``BatchedTextEnv.step``)."""
        self._check_usable("step")
        if not self._started:
            raise ValueError("step: no game yet; call reset() first")
        check_replies(replies, self._done)
        replies = list(replies)
        parts = [(replies[w.first : w.first + w.count],) for w in self._workers]
        answers = self._call("step", parts)
        return tuple([value for answer in answers for value in answer[k]] for k in range(5))  # type: ignore[return-value]

    def close(self) -> None:
        """Stop every worker and wait for it (more than once is fine)."""
        for worker in self._workers:
            worker.close()
        self._workers = []
        self._checker.close()

    def __enter__(self) -> ProcessTextEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["JOIN_SECONDS", "RECEIVE_SECONDS", "ProcessTextEnv", "WorkerError"]
