"""``craft_env.text_env(...)``: one seat of CRAFT played by text, for LLM reinforcement learning.

``reset(seed)`` returns the chat (system and user messages) the seat's model
would receive; ``step(reply)`` reads the reply exactly as a benchmark run
does, plays it, lets the other seats act, and returns the seat's next chat,
the reward, termination, truncation and the engine's verdict::

    env = craft_env.text_env(seat="builder", others="scripted", oracle_n=5)
    messages, info = env.reset(seed=0)
    while messages is not None:
        messages, reward, terminated, truncated, info = env.step(my_model(messages))

It is the runner itself (``docs/benchmark.md``): each game is
``eval.runner.play_game`` with the settings a run would have, the other
seats are the run's agents (``scripted``, ``random`` or any litellm model,
``AgentFactory``), and the learner's seat is the language-model agent
(``agents.llm``) whose client waits for ``step``'s reply
(``clients.SeatClient``): the prompts, the reply reading and the game are
the benchmark's, with no second copy. ``num_envs=B`` plays B games and
steps them with one call (``BatchedTextEnv``); they run concurrently on one
event loop, so other seats played by remote models wait in parallel.

``info`` after a step: ``turn``, the last turn's ``legal``, ``reason``,
``optimal``, ``move``, ``question``, ``distance`` and ``progress``; ``sent``
(what the reply became for the environment: a builder's move line or
question, a director's message), ``reply_reason`` (what the reader found
wrong with the reply, if anything), ``intent`` (a director's message as the
environment understood it), ``turns`` (the turn records, as a run logs
them; left out with ``turn_records=False``, which a rollout loop that
does not read them sets: with ``workers``, the records are most of what the
caller unpacks per step) and ``error`` (a model call of another seat failed
for good: the episode is truncated). Rewards: ``rewards``.

Games: ``dataset`` (``"paper"``, ``"craft"`` or a structures file, as
``craft-env run --dataset``) and ``structure`` (an index into it; default
``seed % len(dataset)``); ``reset(seed, structure=None, run=1)`` may name
both (``run`` fixes the directors' archetypes, as a run's number does).
Further keywords are the run's: ``max_turns``, ``start``,
``director_order``, ``seats``, and for model seats ``api_base``,
``temperature``, ``max_tokens``, ``timeout``, ``num_retries``.

Arguments are checked where they enter, and a bad one raises
``ValueError`` naming it and its range: ``seed`` is any integer type
(``numpy.int64`` too) from 0 to ``MAX_SEED``, ``run`` from 1 to
``MAX_RUNS``, ``structure`` an index into the dataset, ``num_envs`` from 1
to ``MAX_NUM_ENVS``, ``failed_turn_penalty`` a finite number from 0 to
``MAX_FAILED_TURN_PENALTY``. A reply's lone surrogates become U+FFFD as it
enters (``text.clean.valid_unicode``, docs/robustness.md), so ``info``
holds only text a file can encode. ``close()`` may be called from any
thread, one running an event loop of its own included (an async server's),
and more than once; ``reset`` or ``step`` after it raises ``ValueError``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
import threading
import types
from collections.abc import Coroutine, Generator
from typing import Any

from craft_env.agents.llm import LLMBuilder, LLMDirector
from craft_env.eval.logs.games import MAX_RUNS
from craft_env.eval.run.runner import AgentFactory, GameSpec, game_specs, play_game
from craft_env.eval.run.settings import RunSettings
from craft_env.models.llm import check_number
from craft_env.models.redact import Redactor
from craft_env.text.clean import valid_unicode
from craft_env.train.clients import BUILDER, SeatClient
from craft_env.train.recorder import TurnRecorder
from craft_env.train.rewards import check_reward, turn_reward

#: ``text_env`` keywords that are the run's settings under another name, and the ones passed as they are.
RENAMED = {"max_turns": "turns"}
RUN_OPTIONS = (
    "start",
    "director_order",
    "seats",
    "api_base",
    "temperature",
    "max_tokens",
    "timeout",
    "num_retries",
)

Messages = list[dict[str, Any]]

#: The largest seed: the engine's seeds are 63-bit, and a game's seed is never negative (as a run's is not).
MAX_SEED = 2**63 - 1
#: The most games of one ``BatchedTextEnv``: a game holds about 0.5 MB once reset (256 took 114 MB).
MAX_NUM_ENVS = 4096
#: The largest ``failed_turn_penalty`` (a turn's reward is at most a few units: progress, or moves saved).
MAX_FAILED_TURN_PENALTY = 1e6


def whole_number(name: str, value: object, low: int, high: int, what: str = "an int") -> int:
    """``value`` as an int in ``low..high``: any integer type (``numpy.int64`` too), never a bool or a float;
    ``ValueError`` naming ``name``, ``what`` it should be and the range otherwise."""
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        number = None
    if number is None or not low <= number <= high:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise ValueError(f"{name}: expected {what} from {low:,} to {high:,}, got {shown}")
    return number


def text_settings(
    others: str, protocol: str, oracle_n: int, dataset: str, options: dict[str, Any]
) -> RunSettings:
    """The ``RunSettings`` of the text environment's games (``ValueError`` naming a bad keyword)."""
    unknown = sorted(set(options) - set(RENAMED) - set(RUN_OPTIONS))
    if unknown:
        allowed = ", ".join([*RENAMED, *RUN_OPTIONS])
        raise ValueError(f"{unknown[0]}: not an option of text_env (expected one of {allowed})")
    fields = {RENAMED.get(name, name): value for name, value in options.items()}
    return RunSettings(
        out="",
        director_model=others,
        builder_model=others,
        dataset=dataset,
        protocol=protocol,
        oracle_n=oracle_n,
        runs=1,
        **fields,
    )


def check_replies(replies: list[str | None], done: list[bool]) -> None:
    """``ValueError`` unless ``replies`` holds one reply per game, text for each game still playing."""
    if len(replies) != len(done):
        raise ValueError(f"replies: expected {len(done)} (one per game), got {len(replies)}")
    for ended, reply in zip(done, replies):
        if not ended and not isinstance(reply, str):
            raise ValueError(f"replies: expected text for every game still playing, got {type(reply).__name__}")


@types.coroutine
def _forward(game: Coroutine, waited: Any) -> Generator[Any, Any, Any]:
    """Go on with ``game``, suspended on ``waited``, under the task that drives this generator: what the
    game waits on is handed to the task, and what the task sends or throws back is handed to the game."""
    while True:
        try:
            value = yield waited
        except BaseException as error:  # cancelled, or what the task awaited failed: the game handles it
            try:
                waited = game.throw(error)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                waited = game.send(value)
            except StopIteration as stop:
                return stop.value


async def _resume(game: Coroutine, waited: Any) -> Any:
    return await _forward(game, waited)


class _Slot:
    """One game: its coroutine played directly, or its task on the loop; the learner's client, the
    recorder, and the signal that it waits."""

    def __init__(self) -> None:
        #: The game's coroutine while it is played directly (``BatchedTextEnv._advance``), else None.
        self.game: Coroutine | None = None
        #: What ended a directly played game's coroutine with an exception (``_crash`` reports it).
        self.error: BaseException | None = None
        self.task: asyncio.Task | None = None
        self.client: SeatClient | None = None
        self.recorder = TurnRecorder()
        self.ready: asyncio.Future | None = None
        self.spec: GameSpec | None = None
        self.done = True
        self.last_turn: dict[str, Any] | None = None

    def signal(self) -> None:
        if self.ready is not None and not self.ready.done():
            self.ready.set_result(None)


class BatchedTextEnv:
    """``num_envs`` games of one seat, stepped together (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        seat: str = BUILDER,
        others: str = "scripted",
        protocol: str = "craft",
        oracle_n: int = 5,
        dataset: str = "paper",
        structure: int | None = None,
        reward: str = "progress_delta",
        failed_turn_penalty: float = 0.0,
        turn_records: bool = True,
        **options: Any,
    ) -> None:
        num_envs = whole_number("num_envs", num_envs, 1, MAX_NUM_ENVS)
        if not isinstance(turn_records, bool):
            raise ValueError(f"turn_records: expected True or False, got {turn_records!r}")
        self.turn_records = turn_records
        self.settings = text_settings(others, protocol, oracle_n, dataset, options)
        seats = (BUILDER, *self.settings.seats)
        if seat not in seats:
            raise ValueError(f"seat: expected one of {', '.join(seats)}, got {seat!r}")
        self.seat = seat
        self.reward = check_reward(reward)
        self.failed_turn_penalty = float(
            check_number("failed_turn_penalty", failed_turn_penalty, 0.0, MAX_FAILED_TURN_PENALTY)
        )
        self._specs = {spec.index: spec for spec in game_specs(self.settings, 1)}
        self.structure = None if structure is None else self._structure(structure)
        self.num_envs = num_envs
        self._loop = asyncio.new_event_loop()
        self._redactor = Redactor()
        self._slots = [_Slot() for _ in range(num_envs)]

    # ------------------------------------------------------------------ games

    def _structure(self, index: object) -> int:
        """``index`` checked as an index into the dataset (its games are numbered 0, 1, ...)."""
        return whole_number("structure", index, 0, len(self._specs) - 1, "an index into the dataset")

    def _spec(self, seed: int, structure: int | None, run: int) -> GameSpec:
        if structure is not None:
            index = self._structure(structure)
        else:
            index = seed % len(self._specs) if self.structure is None else self.structure
        return dataclasses.replace(self._specs[index], seed=seed, run=run)

    def _seeds(self, seed: object) -> list[int]:
        """One checked seed per game: ``seed`` is one per game, or the first of ``seed, seed + 1, ...``."""
        if isinstance(seed, (str, bytes)) or not hasattr(seed, "__iter__"):
            first = whole_number("seed", seed, 0, MAX_SEED)
            if first + self.num_envs - 1 > MAX_SEED:
                raise ValueError(
                    f"seed: expected an int from 0 to {MAX_SEED - self.num_envs + 1:,} "
                    f"(the games take seed, seed + 1, ..., seed + {self.num_envs - 1}), got {first}"
                )
            return [first + k for k in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"seed: expected {self.num_envs} seeds (one per game), got {len(seeds)}")
        names = ["seed"] if len(seeds) == 1 else [f"seed[{k}]" for k in range(len(seeds))]
        return [whole_number(name, value, 0, MAX_SEED) for name, value in zip(names, seeds)]

    def _check_open(self, call: str) -> None:
        if self._loop.is_closed():
            raise ValueError(f"{call}: the environment is closed; make a new one")

    def _agent(self, client: SeatClient) -> Any:
        return LLMBuilder(client) if self.seat == BUILDER else LLMDirector(client)

    def _start(self, slot: _Slot, spec: GameSpec) -> None:
        self._stop(slot)
        slot.recorder = TurnRecorder()
        slot.client = SeatClient(slot.signal, self._loop.create_future)
        slot.spec, slot.done, slot.last_turn, slot.error = spec, False, None, None
        factory = AgentFactory(
            self.settings, None, self._redactor, seated={self.seat: self._agent(slot.client)}
        )
        game = play_game(spec, self.settings, factory, slot.recorder, 1)
        if factory.clients:  # a model plays another seat: its calls wait on the loop
            self._run_as_task(slot, game)
        else:  # built-in agents only: played directly, the loop runs only if the game waits on it
            slot.game, slot.ready = game, None

    def _run_as_task(self, slot: _Slot, game: Coroutine) -> None:
        slot.ready = self._loop.create_future()
        slot.task = self._loop.create_task(game)
        slot.task.add_done_callback(lambda _: slot.signal())

    def _advance(self, slot: _Slot) -> None:
        """Play a directly played game until it waits for the learner's reply or ends (``_Slot.error``).

        Without the loop's round trip per step: the game's coroutine is sent
        to by hand, with the loop set as the thread's running loop meanwhile
        (what asyncio calls in the game ask for). A game that waits on
        anything else than the learner's reply (a long reply read in a
        thread) goes on as a task on the loop from there (``_resume``).
        """
        if asyncio.events._get_running_loop() is not None:  # what running the loop here would say
            raise RuntimeError("Cannot run the event loop while another loop is running")
        asyncio.events._set_running_loop(self._loop)
        try:
            waited = slot.game.send(None)
        except StopIteration:
            slot.game = None
            return
        except (KeyboardInterrupt, SystemExit):
            slot.game = None
            raise
        except BaseException as error:  # play_game logs what it can; this is what it could not
            slot.game, slot.error = None, error
            return
        finally:
            asyncio.events._set_running_loop(None)
        pending = slot.client.pending
        if pending is not None and waited is pending.reply:
            return
        game, slot.game = slot.game, None
        self._run_as_task(slot, _resume(game, waited))

    def _stop(self, slot: _Slot) -> None:
        if slot.game is not None:
            game, slot.game = slot.game, None
            game.close()
        if slot.task is not None and not slot.task.done():
            slot.task.cancel()
            self._loop.run_until_complete(asyncio.wait([slot.task]))
        slot.task = None

    def _settle(self, slots: list[_Slot]) -> None:
        """Run the games until each waits for the learner's reply or has ended."""
        for slot in slots:
            if slot.game is not None:
                self._advance(slot)
        waiting = [slot.ready for slot in slots if slot.task is not None and slot.ready is not None]
        if waiting:  # they only ever get a result (``_Slot.signal``): gathered without a task around them
            self._loop.run_until_complete(waiting[0] if len(waiting) == 1 else asyncio.gather(*waiting))

    @property
    def started(self) -> bool:
        """Whether ``reset`` has started games (``step`` before it has nothing to play)."""
        return any(slot.spec is not None for slot in self._slots)

    @property
    def done(self) -> list[bool]:
        """Which games have ended (they take ``None`` as their reply until the next ``reset``)."""
        return [slot.done for slot in self._slots]

    def _messages(self, slot: _Slot) -> Messages | None:
        return None if slot.client is None or slot.client.pending is None else slot.client.pending.messages

    def _game_info(self, slot: _Slot) -> dict[str, Any]:
        spec = slot.spec
        return {
            "structure_id": spec.structure_id,
            "structure_index": spec.index,
            "run": spec.run,
            "seed": spec.seed,
        }

    # ------------------------------------------------------------------- API

    def reset(
        self, seed: int | list[int] = 0, structure: int | list[int | None] | None = None, run: int = 1
    ) -> tuple[list[Messages | None], list[dict[str, Any]]]:
        """Start every game; ``seed`` is one seed per game, or the first of ``seed, seed + 1, ...``."""
        self._check_open("reset")
        specs = self.games(seed, structure, run)
        for slot, spec in zip(self._slots, specs):
            self._start(slot, spec)
        self._settle(self._slots)
        observations, infos = [], []
        for slot in self._slots:
            info = self._game_info(slot)
            self._finish(slot, info)
            observations.append(self._messages(slot))
            infos.append(info)
        return observations, infos

    def games(
        self, seed: int | list[int] = 0, structure: int | list[int | None] | None = None, run: int = 1
    ) -> list[GameSpec]:
        """The games ``reset(seed, structure, run)`` starts, its arguments checked (``ValueError``)."""
        seeds = self._seeds(seed)
        structures = list(structure) if isinstance(structure, (list, tuple)) else [structure] * self.num_envs
        if len(structures) != self.num_envs:
            raise ValueError(f"structure: expected {self.num_envs} (one per game), got {len(structures)}")
        run = whole_number("run", run, 1, MAX_RUNS)
        return [self._spec(s, index, run) for s, index in zip(seeds, structures)]

    def step(
        self, replies: list[str | None]
    ) -> tuple[list[Messages | None], list[float], list[bool], list[bool], list[dict[str, Any]]]:
        """Answer every waiting game (ended games take ``None``); play on until each waits again."""
        self._check_open("step")
        check_replies(replies, self.done)
        active = [slot for slot in self._slots if not slot.done]
        for slot, reply in zip(self._slots, replies):
            if not slot.done:
                if slot.task is not None:
                    slot.ready = self._loop.create_future()
                slot.client.answer(valid_unicode(reply))
        self._settle(active)
        results = [self._result(slot, slot in active) for slot in self._slots]
        return tuple(list(column) for column in zip(*results))  # type: ignore[return-value]

    def _result(
        self, slot: _Slot, stepped: bool
    ) -> tuple[Messages | None, float, bool, bool, dict[str, Any]]:
        info = self._game_info(slot)
        if not stepped:
            return None, 0.0, False, False, info
        turns = slot.recorder.take_turns()
        rewards = []
        for record in turns:
            previous, slot.last_turn = slot.last_turn, record
            rewards.append(
                turn_reward(
                    record,
                    slot.spec.structure,
                    self.reward,
                    self.settings.protocol,
                    self.failed_turn_penalty,
                    previous=previous,
                )
            )
        reward = sum(rewards)
        info.update(self._verdict(turns))
        terminated, truncated = self._finish(slot, info)
        return self._messages(slot), reward, terminated, truncated, info

    def _verdict(self, turns: list[dict[str, Any]]) -> dict[str, Any]:
        """What the engine made of the turns since the last reply (the module docstring's ``info``)."""
        if not turns:
            return {"turns": []} if self.turn_records else {}
        last = turns[-1]
        progress = last["progress_data"]
        verdict = {
            "turn": last["turn_number"],
            "legal": last.get("legal"),
            "reason": last.get("reason"),
            "optimal": last.get("optimal"),
            "move": last.get("move"),
            "question": last.get("question"),
            "distance": progress["distance"],
            "progress": progress["progress"],
        }
        if self.turn_records:
            verdict["turns"] = turns
        if self.seat == BUILDER:
            builder = last.get("builder") or {}
            verdict.update(sent=builder.get("sent"), reply_reason=builder.get("reason"))
            return verdict
        spoken = [
            entry for entry in turns[0].get("director_responses") or () if entry.get("director") == self.seat
        ]
        if spoken:
            verdict.update(
                sent=spoken[-1].get("message"),
                reply_reason=spoken[-1].get("reason"),
                intent=spoken[-1].get("intent"),
            )
        return verdict

    def _finish(self, slot: _Slot, info: dict[str, Any]) -> tuple[bool, bool]:
        """``(terminated, truncated)``; marks an ended game done and notes an error in ``info``."""
        ended = slot.recorder.ended
        if ended is None and self._messages(slot) is not None:
            return False, False
        slot.done = True
        ended = ended or {}
        if ended.get("event") == "done":
            completed = bool(ended.get("completed"))
            return completed, not completed
        info["error"] = ended.get("error") or ended.get("reason") or self._crash(slot)
        return False, True

    @staticmethod
    def _crash(slot: _Slot) -> str:
        """Why a game's task ended without logging its end: its exception (taken, so asyncio logs nothing)."""
        task, error = slot.task, slot.error
        if error is None and task is not None and task.done() and not task.cancelled():
            error = task.exception()
        if error is not None:
            return f"the game crashed: {type(error).__name__}: {error}"
        return "the game ended without a result"

    def close(self) -> None:
        """Stop every game and close the event loop (see the module docstring: any thread, more than once)."""
        if self._loop.is_closed():
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop runs in this thread: this loop may run here
            self._close_now()
            return
        # A loop of another's runs in this thread (an async server's), and asyncio runs one loop per thread.
        closer = threading.Thread(target=self._close_now, name="text_env-close")
        closer.start()
        closer.join()

    def _close_now(self) -> None:
        for slot in self._slots:
            self._stop(slot)
        self._loop.close()

    def __enter__(self) -> BatchedTextEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TextEnv:
    """One game of one seat (``BatchedTextEnv`` with one game, unbatched)."""

    def __init__(self, **options: Any) -> None:
        self.batch = BatchedTextEnv(1, **options)

    @property
    def seat(self) -> str:
        return self.batch.seat

    @property
    def settings(self) -> RunSettings:
        return self.batch.settings

    def reset(
        self, seed: int = 0, structure: int | None = None, run: int = 1
    ) -> tuple[Messages | None, dict]:
        observations, infos = self.batch.reset([seed], [structure], run)
        return observations[0], infos[0]

    def step(self, reply: str) -> tuple[Messages | None, float, bool, bool, dict[str, Any]]:
        """Play ``reply``; ``ValueError`` once the game has ended (call ``reset``)."""
        self.batch._check_open("step")
        if not self.batch.started:
            raise ValueError("step: no game yet; call reset() first")
        if self.batch.done[0]:
            raise ValueError("step: the game has ended; call reset() to start another")
        observations, rewards, terminated, truncated, infos = self.batch.step([reply])
        return observations[0], rewards[0], terminated[0], truncated[0], infos[0]

    def close(self) -> None:
        self.batch.close()

    def __enter__(self) -> TextEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def text_env(
    seat: str = BUILDER,
    others: str = "scripted",
    protocol: str = "craft",
    oracle_n: int = 5,
    num_envs: int | None = None,
    workers: int | None = None,
    **options: Any,
) -> TextEnv | BatchedTextEnv:
    """A text environment for ``seat`` (``TextEnv``; with ``num_envs``, ``BatchedTextEnv``).

    ``others`` plays every other seat: ``scripted`` (default), ``random`` or
    a litellm model (``openai/gpt-4o-mini``). ``oracle_n`` candidates are
    shown to the builder (0: none). ``workers=K`` (with ``num_envs``) plays
    the games in K processes, stepped with one call (``train.workers``).
    Further keywords: the module docstring.
    """
    if workers is not None:
        if num_envs is None:
            raise ValueError("workers: needs num_envs (the games to deal out among the workers)")
        from craft_env.train.workers import ProcessTextEnv  # it imports this module

        return ProcessTextEnv(
            num_envs, workers, seat=seat, others=others, protocol=protocol, oracle_n=oracle_n, **options
        )
    if num_envs is None:
        return TextEnv(seat=seat, others=others, protocol=protocol, oracle_n=oracle_n, **options)
    return BatchedTextEnv(num_envs, seat=seat, others=others, protocol=protocol, oracle_n=oracle_n, **options)
