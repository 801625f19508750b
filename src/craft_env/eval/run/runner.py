"""Run the benchmark: many games concurrently, logged turn by turn, resumable.

``run_benchmark(settings)`` plays every selected structure ``runs`` times
through the AEC environment in text mode (the paper's protocol: each turn
the seated directors, ``settings.seats``, D1, D2, D3 by default, speak once
in a seeded order, then the builder moves),
with the agents the settings name. Games run concurrently (asyncio, at most
``concurrency`` at once); every turn is appended to ``run_<k>/log.jsonl``
and flushed as it happens (``logs``).

A model call that fails for good (``ModelCallError``) ends its game as
``errored``; it is never turned into a move or a message. An agent that
raises ``GameStopped`` (a person quitting ``craft-env play``) ends it as
``stopped``. Running again
with ``resume=True`` skips finished games and replays errored, stopped or
interrupted ones from the start (their recorded model calls come back from
the cache for free), so a killed run loses and duplicates nothing. One
process at a time writes a run directory (``lock``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from craft_env import __version__
from craft_env.agents.base import AgentContext, BuilderReply, DirectorReply, GameStopped, Usage
from craft_env.agents.llm import LLMBuilder, LLMDirector
from craft_env.agents.prompts import archetype_of
from craft_env.agents.random import RandomBuilder, RandomDirector
from craft_env.agents.scripted import ScriptedBuilder, ScriptedDirector
from craft_env.agents.tools import ToolBuilder, make_simulator
from craft_env.core.board import Structure
from craft_env.core.moves import Move
from craft_env.core.protocol import CRAFT, Protocol, is_completed
from craft_env.core.views import BUILDER, DEFAULT_SEATS, agent_name
from craft_env.datasets import structures_sha256
from craft_env.envs.config import EnvConfig, make_config
from craft_env.envs.game import CraftGame
from craft_env.envs.textobs import public_conversation, text_observation
from craft_env.models.cache import ReplayCache
from craft_env.models.jsonl import LogWriteError, read_jsonl, write_atomic
from craft_env.models.cost import Budget
from craft_env.models.llm import ModelCallError, ModelClient
from craft_env.eval.run.lock import RunLock
from craft_env.eval.logs.games import (
    CACHE_NAME, CONFIG_NAME, LOG_NAME, SUMMARY_NAME, RunLog, read_games, run_dir,
)
from craft_env.eval.run import provider  # noqa: F401  (registers the scripted/ models with the model client)
from craft_env.eval.run.progress import ProgressBar
from craft_env.models.redact import Redactor
from craft_env.eval.run.settings import RESULT_FIELDS, RunSettings, game_seed, is_model
from craft_env.eval.results.table import table_row

log = logging.getLogger(__name__)

#: How ``config.json`` writes when a run was created.
CREATED_FORMAT = "%Y-%m-%dT%H:%M:%S%z"


@dataclass(frozen=True)
class GameSpec:
    """One game: structure ``index`` of the dataset in run ``run``, with its episode seed."""

    run: int
    index: int
    structure: Structure
    structure_id: str
    seed: int


@dataclass
class GameResult:
    spec: GameSpec
    status: str
    turns: int = 0
    final: dict[str, float] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    error: str | None = None


class AgentFactory:
    """Makes each game's agents; model clients (and their cache) are shared by all games.

    ``seated`` maps a seat (``"builder"``, ``"D1"``..) to an agent that plays
    it in every game instead of the settings' model (``craft-env play``
    seats a person this way).
    """

    def __init__(
        self,
        settings: RunSettings,
        cache: ReplayCache | None,
        redactor: Redactor,
        client_options: dict[str, Any] | None = None,
        seated: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.seated = dict(seated or {})
        options = dict(client_options or {})
        spent = sum(float(r.get("cost") or 0.0) for r in cache.records()) if cache is not None else 0.0
        self.budget = Budget(settings.max_cost, spent)
        self.clients: dict[str, ModelClient] = {}
        for role, model in (("director", settings.director_model), ("builder", settings.builder_model)):
            if is_model(model):
                self.clients[role] = ModelClient(
                    model=model,
                    api_base=settings.api_base,
                    params=settings.sampling,
                    num_retries=settings.num_retries,
                    timeout=settings.timeout,
                    cache=cache,
                    replay_only=settings.replay_only,
                    redactor=redactor,
                    budget=self.budget,
                    log_prompts=settings.log_prompts,
                    price_per_token=settings.token_price,
                    **options,
                )

    @property
    def needs_text(self) -> bool:
        """Whether any agent reads text observations (built-in agents read the numeric ones)."""
        return bool(self.clients) or bool(self.seated)

    def director(self, spec: GameSpec, seat: str) -> Any:
        if seat in self.seated:
            return self.seated[seat]
        model = self.settings.director_model
        if "director" in self.clients:

            return LLMDirector(self.clients["director"])
        if model == "random":

            return RandomDirector(game_seed(spec.seed, spec.run, 1 + int(seat[1:])))

        return ScriptedDirector()

    def builder(self, spec: GameSpec) -> Any:
        if BUILDER in self.seated:
            return self.seated[BUILDER]
        model = self.settings.builder_model
        if "builder" in self.clients:

            return LLMBuilder(self.clients["builder"])
        if model == "random":

            return self._with_tools(RandomBuilder(game_seed(spec.seed, spec.run, 0)))

        return self._with_tools(ScriptedBuilder())

    def _with_tools(self, builder: Any) -> Any:
        """A built-in builder that also uses the ``simulate_move`` tool when the run gives it one."""
        if not self.settings.builder_tools:
            return builder

        return ToolBuilder(builder)


def _usage_fields(usage: Usage) -> dict[str, Any]:
    cost, latency = usage.cost, usage.latency
    return {
        "calls": usage.calls,
        "tokens": {"prompt": usage.prompt_tokens, "completion": usage.completion_tokens},
        # a float zero (a built-in agent's turn) is its own rounding
        "cost": cost if type(cost) is float and cost == 0.0 else round(cost, 10),
        "latency": latency if type(latency) is float and latency == 0.0 else round(latency, 6),
    }


def _plus(total: Usage, usage: Usage) -> Usage:
    """``total + usage``; ``total`` itself when ``usage`` is all zeros (a built-in agent's turn)."""
    if usage.calls or usage.prompt_tokens or usage.completion_tokens or usage.cost or usage.latency:
        return total + usage
    return total


def _board_dict(board: Any) -> dict[str, Any]:
    if isinstance(board, Structure):
        return board.layout_dict()
    return board


def _director_entry(
    seat: str, agent: str, order: int, archetype: str | None, reply: DirectorReply, info: dict[str, Any]
) -> dict[str, Any]:
    entry = {
        "director": seat,
        "agent": agent,
        "order": order,
        "archetype": archetype,
        "think": reply.think,
        "message": reply.message,
        "reason": reply.reason,
        "intent": info.get("intent"),
        **_usage_fields(reply.usage),
    }
    if reply.raw is not None:
        entry["raw"] = reply.raw
    return entry


def _turn_fields(
    info: dict[str, Any],
    board_before: Structure,
    move_attempted: Move | None,
    directors: list[dict[str, Any]],
    builder: BuilderReply,
    candidates: list[Any] | None,
    order: list[str],
    usage: Usage,
) -> dict[str, Any]:
    builder_entry = {
        "think": builder.think,
        "followed": list(builder.followed),
        "reason": builder.reason,
        "sent": builder.action if isinstance(builder.action, str) else None,
        "action_id": builder.action if isinstance(builder.action, int) else None,
        **_usage_fields(builder.usage),
    }
    if builder.raw is not None:
        builder_entry["raw"] = builder.raw
    tool_calls = [dict(call) for call in builder.tool_calls]
    metrics = dict(info["metrics"])
    metrics["distance"] = int(info["distance"])
    move = None if move_attempted is None else move_attempted.to_dict()
    return {
        "structure_before": _board_dict(board_before),
        "director_order": order,
        "director_responses": directors,
        "oracle_moves": None if candidates is None else [m.to_dict() for m in candidates],
        "builder": builder_entry,
        "move_attempted": move,
        "move": info.get("move"),
        "question": info.get("question"),
        "legal": bool(info["legal"]),
        "failed": not info["legal"],
        "executed": bool(info["legal"] and move is not None and move.get("action") != "noop"),
        "reason": info.get("reason"),
        "followed_oracle": bool(info["followed_oracle"]),
        "optimal": bool(info["optimal"]),
        "remove_prescribed": bool(info["remove_prescribed"]),
        "remove_attempted": bool(info["remove_attempted"]),
        "progress_data": metrics,
        **_usage_fields(usage),
        **({"tool_calls": tool_calls} if tool_calls else {}),
    }


def _context(
    game: CraftGame, agent: str, seat: str | None, obs: dict[str, Any], spec: GameSpec, max_turns: int,
    protocol: Protocol = CRAFT, max_tool_calls: int = 0,
) -> AgentContext:
    """What ``agent`` (director ``seat``, or the builder when ``seat`` is None) is given this turn."""
    candidates = None
    if seat is None:
        moves = game.candidate_moves()
        candidates = None if moves is None else tuple(moves)
    board = game.board_structure()
    return AgentContext(
        agent=agent,
        seat=seat,
        observation=obs,
        board=board,
        conversation=tuple(public_conversation(game)),
        turn=game.turn + 1,
        max_turns=max_turns,
        structure_index=spec.index,
        run=spec.run,
        candidates=candidates,
        archetype=archetype_of(protocol, spec.index, spec.run, seat) if seat else None,
        protocol=protocol,
        tool=_tool(board, game, protocol, max_tool_calls) if seat is None and max_tool_calls else None,
        seats=game.seats,
    )


def _tool(board: Structure, game: CraftGame, protocol: Protocol, max_tool_calls: int) -> Any:
    """The builder's ``simulate_move`` tool for this turn (it scores against the target, as the paper's)."""
    return make_simulator(board, game.target_structure(), protocol, max_tool_calls)


def _checked_action(action: Any, agent: str, actions: int) -> Any:
    """``action`` as the env's step takes it; ``ValueError`` for a number outside ``agent``'s action space
    (``Discrete(actions)``), as ``craft_env.env()``'s bounds check says it. Text and ``None`` pass: the
    game reads them (an unreadable one is a failed turn)."""
    kind = type(action)
    if kind is str or kind is int and 0 <= action < actions or action is None or isinstance(action, str):
        return action
    if isinstance(action, (int, np.integer)) and np.ndim(action) == 0 and 0 <= int(action) < actions:
        return action
    raise ValueError(f"action: {action!r} is outside {agent}'s action space Discrete({actions})")


def _game_errored(
    run_log: RunLog, spec: GameSpec, attempt: int, turn: int, usage: Usage, message: str, error_type: str
) -> GameResult:
    """Log a game that ended in an error (a model call failing after its retries, or a crash) and count it."""
    run_log.game_event(
        "errored",
        spec.index,
        spec.structure_id,
        attempt,
        turn,
        error=message,
        error_type=error_type,
        **_usage_fields(usage),
    )
    return GameResult(spec, "errored", turn, usage=usage, error=message)


def env_options(spec: GameSpec, settings: RunSettings, text_observations: bool) -> dict[str, Any]:
    """The keywords of ``craft_env.env`` for one game of the run (protocol and seats when not the default)."""
    options: dict[str, Any] = {
        "message_mode": "text",
        "structure": spec.structure,
        "oracle_n": settings.oracle_n or None,
        "max_turns": settings.turns,
        "start": settings.start,
        "director_order": settings.director_order,
        "text_observations": text_observations,
    }
    if settings.protocol != "craft":
        options["protocol"] = settings.protocol
    if settings.seats != DEFAULT_SEATS:
        options["seats"] = settings.seats
    return options


@dataclass
class _GameTally:
    """What a game in play has spent and said: the usage of finished turns, the usage and the director
    entries of the turn under way, and the builder's ``infos`` after the last move (the final metrics)."""

    total: Usage = field(default_factory=Usage)
    turn_usage: Usage = field(default_factory=Usage)
    spoken: list[dict[str, Any]] = field(default_factory=list)
    last_info: dict[str, Any] = field(default_factory=dict)

    @property
    def spent(self) -> Usage:
        """Everything the game has used so far, the turn under way included."""
        return self.total + self.turn_usage


#: Idle games by setting, for the next game of that setting (``new_game``, ``_release_game``), and how
#: many are kept in all (a reset game holds some 30 kB: 20 took 0.53 MB, tracemalloc).
_idle_games: dict[tuple[EnvConfig, int], list[CraftGame]] = {}
MAX_IDLE_GAMES = 64
_idle_lock = threading.Lock()


def new_game(spec: GameSpec, settings: RunSettings) -> CraftGame:
    """One game's engine, reset to its seed: the ``CraftGame`` under ``craft_env.env(**env_options(...))``.

    The runner drives it directly, in the order the AEC env would (each
    speaking slot's director, then the builder; ``envs.craft.raw_env``),
    without the env's spaces and wrappers around every step. A finished
    game's engine of the same setting (the same target object) is reset
    and used again: ``reset`` rewrites every array and the episode's state,
    and making one costs more than a turn.
    """
    config = make_config(**env_options(spec, settings, False))
    with _idle_lock:  # games may end and start in several threads (servers)
        idle = _idle_games.get((config, id(config.structure)))
        game = idle.pop() if idle else None
    if game is None:
        game = CraftGame(config)
    game.reset(spec.seed)
    return game


def _release_game(game: CraftGame) -> None:
    """Keep a game nobody plays any more for ``new_game`` (up to ``MAX_IDLE_GAMES`` in all)."""
    with _idle_lock:
        if sum(len(games) for games in _idle_games.values()) >= MAX_IDLE_GAMES:
            _idle_games.clear()
        _idle_games.setdefault((game.config, id(game.config.structure)), []).append(game)


async def play_game(
    spec: GameSpec, settings: RunSettings, factory: AgentFactory, run_log: RunLog, attempt: int
) -> GameResult:
    """Play one game to its end, logging every turn; errors end it as ``errored``."""
    game = new_game(spec, settings)
    directors = {seat: factory.director(spec, seat) for seat in game.seats}
    builder = factory.builder(spec)
    run_log.game_event(
        "start",
        spec.index,
        spec.structure_id,
        attempt,
        0,
        seed=spec.seed,
        complexity=spec.structure.complexity or spec.structure.tier,
        protocol=settings.protocol,
    )
    tally = _GameTally()
    try:
        # agents given the text observation: built-in agents read the numeric one only
        readers = {seat: getattr(agent, "reads_text", True) for seat, agent in directors.items()}
        readers[BUILDER] = getattr(builder, "reads_text", True)
        readers = {seat: factory.needs_text and reads for seat, reads in readers.items()}
        await _play_turns(game, spec, settings, directors, builder, readers, run_log, attempt, tally)
    except ModelCallError as error:
        return _game_errored(run_log, spec, attempt, game.turn, tally.spent, str(error), error.error_type)
    except GameStopped as stop:
        usage = tally.spent
        fields = {"reason": str(stop), **_usage_fields(usage)}
        run_log.game_event("stopped", spec.index, spec.structure_id, attempt, game.turn, **fields)
        return GameResult(spec, "stopped", game.turn, usage=usage, error=str(stop))
    except LogWriteError:  # the run cannot record (a full disk): it stops, like a killed process
        raise
    except Exception as error:  # a bug must not take the other games down; it is logged and counted
        log.exception("game %s run %d crashed", spec.structure_id, spec.run)
        message = f"{type(error).__name__}: {error}"
        return _game_errored(run_log, spec, attempt, game.turn, tally.spent, message, "InternalError")
    else:
        return _game_done(run_log, spec, settings, attempt, game.turn, tally)
    finally:
        _release_game(game)


async def _play_turns(
    game: CraftGame,
    spec: GameSpec,
    settings: RunSettings,
    directors: dict[str, Any],
    builder: Any,
    readers: dict[str, bool],
    run_log: RunLog,
    attempt: int,
    tally: _GameTally,
) -> None:
    """Play ``game`` to its end: each director's message is kept for its turn's record, each builder move
    logs the turn (``_turn_fields``). Errors of the agents propagate to ``play_game``.
    ``readers``: the seats (and ``builder``) whose observation carries its text."""
    tools = settings.max_tool_calls if settings.builder_tools else 0
    seats = game.seats
    names = [agent_name(seat) for seat in seats]
    turns, rules = settings.turns, settings.rules
    director_obs, director_masks, num_intents = game.director_obs, game.director_masks, game.num_intents
    while True:
        for k in game.order_list:  # the turn's speaking slots (``build`` replaces the list, never changes it)
            seat, agent = seats[k], names[k]
            obs = {"observation": director_obs[k].copy(), "action_mask": director_masks[k].copy()}
            if readers[seat]:
                obs["text"] = text_observation(game, k)
            context = _context(game, agent, seat, obs, spec, turns, rules, tools)
            reply = await directors[seat].act(context)
            info = game.speak(k, _checked_action(reply.message, agent, num_intents))
            tally.turn_usage = _plus(tally.turn_usage, reply.usage)
            spoken = tally.spoken
            spoken.append(_director_entry(seat, agent, len(spoken), context.archetype, reply, info))
        obs = {"observation": game.builder_obs.copy(), "action_mask": game.builder_mask.copy()}
        if readers[BUILDER]:
            obs["text"] = text_observation(game, None)
        context = _context(game, BUILDER, None, obs, spec, turns, rules, tools)
        order = [seats[k] for k in game.order_list]
        candidates = list(context.candidates) if context.candidates is not None else None
        reply = await builder.act(context)
        info = game.build(_checked_action(reply.action, BUILDER, game.num_actions))
        tally.turn_usage = _plus(tally.turn_usage, reply.usage)
        tally.last_info = info
        run_log.turn(
            spec.index,
            spec.structure_id,
            attempt,
            int(info["turn"]),
            _turn_fields(
                info, context.board, game.last_move, tally.spoken, reply, candidates, order, tally.turn_usage
            ),
        )
        log.debug(
            "turn logged: %s run %d attempt %d turn %d", spec.structure_id, spec.run, attempt, info["turn"]
        )
        tally.total = _plus(tally.total, tally.turn_usage)
        tally.turn_usage, tally.spoken = Usage(), []
        if game.done:
            return


def _game_done(
    run_log: RunLog, spec: GameSpec, settings: RunSettings, attempt: int, turn: int, tally: _GameTally
) -> GameResult:
    """Log a game played to its end with its final metrics and whether it was completed, and count it."""
    final = dict(tally.last_info.get("metrics") or {})
    exact = bool(tally.last_info) and int(tally.last_info.get("distance", 1)) == 0
    completed = is_completed(settings.rules, final.get("progress", 0.0), exact)
    run_log.game_event(
        "done",
        spec.index,
        spec.structure_id,
        attempt,
        turn,
        final=final,
        completed=completed,
        **_usage_fields(tally.total),
    )
    log.info(
        "game done: %s run %d, %d turns, progress %.3f",
        spec.structure_id,
        spec.run,
        turn,
        final.get("progress", 0.0),
    )
    return GameResult(spec, "done", turn, final, tally.total)


def write_json(path: Path, data: Any, redactor: Redactor) -> None:
    """Write JSON atomically (``write_atomic``: the old file or the new one, never half, no temporary left)."""
    write_atomic(path, json.dumps(redactor(data), indent=2, sort_keys=True) + "\n")


def seed_cache(out: str | os.PathLike, source: str | os.PathLike) -> None:
    """Copy the recorded calls of the run in ``source`` into ``out`` (to replay it offline)."""
    recorded = Path(source) / CACHE_NAME
    if not recorded.exists():
        raise ValueError(f"replay_from: {os.fspath(source)!r} holds no recorded calls ({CACHE_NAME})")
    target = Path(out) / CACHE_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_bytes(recorded.read_bytes())


def prepare_output(settings: RunSettings, resume: bool, redactor: Redactor) -> None:
    """Create ``out`` with ``config.json``, or check that a resumed run agrees with it."""
    out = Path(settings.out)
    config_path = out / CONFIG_NAME
    if config_path.exists() and not resume:
        raise ValueError(
            f"out: {os.fspath(out)!r} already holds a run; pass --resume to finish it or choose another --out"
        )
    if resume and not config_path.exists():
        raise ValueError(f"out: nothing to resume in {os.fspath(out)!r} (no {CONFIG_NAME})")
    if resume:
        check_resume_protocol(config_path, settings.protocol)
        check_resume_seats(config_path, settings.seats)
    out.mkdir(parents=True, exist_ok=True)
    if not config_path.exists():
        data = settings.to_dict()
        data["craft_env_version"] = __version__
        data["created"] = time.strftime(CREATED_FORMAT)
        data["dataset_sha256"] = structures_sha256(settings.load_structures())
        write_json(config_path, data, redactor)


def check_resume_protocol(config_path: Path, protocol: str) -> None:
    """A resumed run keeps its protocol: ``ValueError`` when ``protocol`` differs from the saved one."""
    saved = json.loads(config_path.read_text(encoding="utf-8")).get("protocol", "craft")
    if saved != protocol:
        raise ValueError(
            f"protocol: the run in {os.fspath(config_path.parent)!r} was played under {saved!r}, "
            f"not {protocol!r}; resume it under {saved!r} or start a new --out"
        )


def check_resume_seats(config_path: Path, seats: tuple[str, ...]) -> None:
    """A resumed run keeps its seats: ``ValueError`` when ``seats`` differ from the saved ones.

    A config saved before seats were configurable seated ``DEFAULT_SEATS``.
    """
    saved = tuple(json.loads(config_path.read_text(encoding="utf-8")).get("seats") or DEFAULT_SEATS)
    if saved != tuple(seats):
        raise ValueError(
            f"seats: the run in {os.fspath(config_path.parent)!r} seated {','.join(saved)}, "
            f"not {','.join(seats)}; resume it with --seats {','.join(saved)} or start a new --out"
        )


def read_saved_config(path: Path) -> dict[str, Any]:
    """The JSON object of run settings in ``path`` (a ``config.json``); ``ValueError`` naming it otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"{os.fspath(path)}: not a readable run config ({type(error).__name__})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{os.fspath(path)}: expected a JSON object of run settings")
    return data


def load_settings(out: str | os.PathLike) -> RunSettings:
    """The settings saved in ``out/config.json`` (for ``--resume``)."""
    path = Path(out) / CONFIG_NAME
    if not path.exists():
        raise ValueError(f"out: nothing to resume in {os.fspath(out)!r} (no {CONFIG_NAME})")
    data = read_saved_config(path)
    missing = [name for name in RESULT_FIELDS if name not in data and name not in ("seats", "shard")]
    if missing:
        raise ValueError(
            f"{os.fspath(path)}: the run's {', '.join(missing)} are not recorded; "
            "a resume cannot know what was played"
        )
    data["out"] = os.fspath(out)
    return RunSettings.from_dict(data)


class _Progress(ProgressBar):
    """The run's bar: one task per run (games done, mean progress of finished games, calls, cost)."""

    def __init__(self, enabled: bool, console: Any = None) -> None:
        super().__init__(enabled, console, ("progress", "calls", "cost"))

    def update(self, task: Any, results: list[GameResult]) -> None:
        finished = [r for r in results if r.status == "done"]
        mean = sum(r.final.get("progress", 0.0) for r in finished) / len(finished) if finished else 0.0
        calls = sum(r.usage.calls for r in results)
        cost = sum(r.usage.cost for r in results)
        self.advance(task, progress=mean, calls=calls, cost=cost)


async def _run_one(
    settings: RunSettings,
    run: int,
    specs: list[GameSpec],
    factory: AgentFactory,
    redactor: Redactor,
    progress: _Progress,
) -> dict[str, Any]:
    out = Path(settings.out)
    log_path = run_dir(out, run) / "log.jsonl"
    previous = read_games(log_path)
    todo = [
        s for s in specs if previous.get((run, s.index)) is None or previous[(run, s.index)].status != "done"
    ]
    task = progress.add(f"run {run}", len(specs), len(specs) - len(todo))
    run_log = RunLog(out, run, redactor)
    semaphore = asyncio.Semaphore(settings.concurrency)
    results: list[GameResult] = []
    started = time.perf_counter()

    async def one(spec: GameSpec) -> None:
        async with semaphore:
            known = previous.get((run, spec.index))
            attempt = (known.attempts if known else 0) + 1
            result = await play_game(spec, settings, factory, run_log, attempt)
            results.append(result)
            progress.update(task, results)

    games_in_flight = [asyncio.ensure_future(one(spec)) for spec in todo]
    try:
        await asyncio.gather(*games_in_flight)
    except BaseException:  # a full disk or an interrupt: the other games stop too, then the run does
        for game in games_in_flight:
            game.cancel()
        await asyncio.gather(*games_in_flight, return_exceptions=True)
        raise
    finally:
        run_log.close()
    return write_summary(settings, run, specs, redactor, time.perf_counter() - started)


def write_summary(
    settings: RunSettings, run: int, specs: list[GameSpec], redactor: Redactor, seconds: float
) -> dict[str, Any]:
    """Write ``run_<run>/summary.json`` from the run's log and return it.

    Table 1 of the games of ``specs`` that are done; every other game of
    ``specs`` (errored, stopped, unfinished or not in the log) is counted as
    errored and listed. ``seconds`` is the playing time it reports.
    """
    games = read_games(run_dir(settings.out, run) / LOG_NAME)
    logged = [(spec, games.get((run, spec.index))) for spec in specs]
    done = [game for _, game in logged if game is not None and game.status == "done"]
    row = table_row(done, len(specs) - len(done), settings.rules)
    summary = {
        "run": run,
        "director_model": settings.director_model,
        "builder_model": settings.builder_model,
        "prompt_version": settings.prompt_version,
        "protocol": settings.protocol,
        "games": len(specs),
        "done": len(done),
        "errored": len(specs) - len(done),
        "errors": [
            {"structure_id": spec.structure_id, "error": ((game.marker or {}) if game else {}).get("error")}
            for spec, game in logged
            if game is None or game.status != "done"
        ],
        "seconds_this_session": round(seconds, 3),
        "table": {k: v for k, v in row.items() if k != "taxonomy"},
        "taxonomy": row["taxonomy"],
    }
    write_json(run_dir(settings.out, run) / SUMMARY_NAME, _finite(summary), redactor)
    return summary


def _finite(value: Any) -> Any:
    """JSON-safe copy: NaN becomes None."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _game_spec(settings: RunSettings, structures: list[Structure], run: int, index: int) -> GameSpec:
    structure = structures[index]
    return GameSpec(run, index, structure, structure.id or f"structure_{index + 1:03d}",
                    game_seed(settings.seed, run, index))


def game_specs(settings: RunSettings, run: int) -> list[GameSpec]:
    """The games of run ``run`` that ``settings`` play (their shard's share of them under ``--shard``)."""
    structures = settings.load_structures()
    return [_game_spec(settings, structures, game_run, index) for game_run, index in settings.games()
            if game_run == run]


def all_game_specs(settings: RunSettings) -> dict[int, list[GameSpec]]:
    """``game_specs`` of every run that has a game (a shard may have none in some), the dataset read once:
    a thousand runs cost what one does."""
    structures = settings.load_structures()
    specs: dict[int, list[GameSpec]] = {}
    for run, index in settings.games():
        specs.setdefault(run, []).append(_game_spec(settings, structures, run, index))
    return dict(sorted(specs.items()))


async def run_benchmark_async(
    settings: RunSettings,
    resume: bool = False,
    progress: bool = False,
    console: Any = None,
    client_options: dict[str, Any] | None = None,
    redactor: Redactor | None = None,
    seated: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Play (or finish) every run of ``settings``; return one summary per run.

    ``seated``: agents that take given seats (see ``AgentFactory``).
    """
    redactor = redactor or Redactor()
    specs = all_game_specs(settings)  # built before anything is written, so bad settings fail first
    lock = RunLock(settings.out)
    cache = None
    try:
        prepare_output(settings, resume, redactor)
        needs_cache = any(is_model(m) for m in (settings.director_model, settings.builder_model))
        cache = ReplayCache(Path(settings.out) / CACHE_NAME, redactor) if needs_cache else None
        factory = AgentFactory(settings, cache, redactor, client_options, seated)
        summaries = []
        with _Progress(progress, console) as bar:
            for run, run_specs in specs.items():
                summaries.append(await _run_one(settings, run, run_specs, factory, redactor, bar))
    finally:
        if cache is not None:
            cache.close()
        lock.release()
    return summaries


def run_benchmark(
    settings: RunSettings,
    resume: bool = False,
    progress: bool = False,
    console: Any = None,
    client_options: dict[str, Any] | None = None,
    seated: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Blocking ``run_benchmark_async``."""
    return asyncio.run(
        run_benchmark_async(settings, resume, progress, console, client_options, seated=seated)
    )


def interrupted_note(out: str | os.PathLike, cause: str = "interrupted") -> str:
    """One line for a run that stopped early (``cause``: an interrupt, a full disk): what its logs hold and
    how to finish it; no resume command when the run directory holds no run (it stopped before starting)."""
    out = Path(out)
    if not (out / CONFIG_NAME).is_file():
        return f"{cause}; nothing was saved (no run was started in {os.fspath(out)})"
    turns = games = 0
    for path in sorted(out.glob("run_*/" + "log.jsonl")):
        for record in read_jsonl(path):
            turns += record.get("kind") == "turn"
            games += record.get("kind") == "game" and record.get("event") == "done"
    return (
        f"{cause}; {turns} turn(s) and {games} finished game(s) are saved in {os.fspath(out)}; "
        f"finish with: craft-env run --resume --out {os.fspath(out)}"
    )
