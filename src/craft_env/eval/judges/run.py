"""``craft-env judge``: score every judged item of a run directory with a judge model, resumably.

Results go to ``DIR/judges/<model>/run_<r>.jsonl``, one line per judged
item per grader run ``r`` (the paper grades each item several times),
appended and flushed as each reply is read. A killed judge run resumes:
items already in the file are skipped, and calls that were paid for but
not yet written come back from the grader run's record of calls
(``cache_run_<r>.jsonl``, the runner's ``ReplayCache``) for free. Each
grader run has its own record, so the runs are independent samples.

Model calls go through the runner's ``ModelClient`` (timeouts, retries with
backoff, redaction, tokens and cost); ``--judge-model engine`` answers with
the engine judge instead, offline. A call that fails for good is counted
and its item left for the next resume, never given an answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from craft_env.models.cache import ReplayCache
from craft_env.models.jsonl import AppendOnlyJsonl, read_jsonl
from craft_env.eval.judges.engine import ENGINE, engine_answers
from craft_env.eval.judges.items import JudgedItem, load_items, run_logs
from craft_env.eval.judges.offline import registered
from craft_env.eval.judges.parse import parse_judge_reply
from craft_env.eval.judges.prompts import JUDGE_PROMPT_VERSION, judge_messages
from craft_env.eval.judges.questions import FAMILIES, family_questions
from craft_env.models.llm import ModelCallError, ModelClient, check_call_limits
from craft_env.eval.run.lock import RunLock
from craft_env.eval.run.progress import ProgressBar
from craft_env.models.redact import Redactor
from craft_env.text.replies import MAX_RAW_CHARS

log = logging.getLogger(__name__)

JUDGES_DIR = "judges"


def model_folder(model: str) -> str:
    """A file-system-safe folder name for a judge model string (``openai/gpt-4o`` -> ``openai__gpt-4o``)."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"judge_model: expected 'engine' or a litellm model string, got {model!r}")
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model.strip().replace("/", "__"))
    return name.strip("._") or "model"


def judge_folder(out: Path, model: str) -> Path:
    """Where one judge model's results of the run in ``out`` go (one writer at a time: ``RunLock``)."""
    return out / JUDGES_DIR / model_folder(model)


def results_path(out: Path, model: str, grader_run: int) -> Path:
    return judge_folder(out, model) / f"run_{grader_run}.jsonl"


@dataclass
class JudgeSettings:
    """What ``craft-env judge`` was asked to do (validated)."""

    path: str
    judge_model: str
    families: tuple[str, ...] = FAMILIES
    runs: int = 1
    turns: int | None = None
    concurrency: int = 8
    timeout: float = 60.0
    num_retries: int = 3
    api_base: str | None = None
    replay_from: str | None = None
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})

    def __post_init__(self) -> None:
        model_folder(self.judge_model)
        check_call_limits(self.timeout, self.num_retries)
        for name, value, minimum in (("runs", self.runs, 1), ("concurrency", self.concurrency, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name}: expected an int >= {minimum}, got {value!r}")
        if self.turns is not None and (isinstance(self.turns, bool) or not isinstance(self.turns, int)
                                       or self.turns < 1):
            raise ValueError(f"turns: expected an int >= 1, got {self.turns!r}")
        if not self.families or any(f not in FAMILIES for f in self.families):
            raise ValueError(f"judges: expected some of {', '.join(FAMILIES)}, got {self.families!r}")


def _record(item: JudgedItem, model: str, grader_run: int) -> dict[str, Any]:
    return {
        "key": item.key,
        "family": item.family,
        "seat": item.seat,
        "turn": item.turn,
        "game_run": item.game_run,
        "structure_index": item.structure_index,
        "structure_id": item.structure_id,
        "grader_run": grader_run,
        "judge_model": model,
        "prompt_version": JUDGE_PROMPT_VERSION,
        "oracle_available": item.oracle_available,
        "followed_oracle": item.followed_oracle,
        "optimal": bool(item.record.get("optimal")),
    }


def done_keys(path: Path) -> set[str]:
    """Keys of the items already judged in one results file."""
    return {str(r["key"]) for r in read_jsonl(path) if r.get("key")}


@dataclass
class RunCounts:
    """What one grader run did in this session."""

    grader_run: int
    items: int = 0
    skipped: int = 0
    judged: int = 0
    unreadable: int = 0
    errored: int = 0
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    errors: list[str] = field(default_factory=list)


def _engine_fields(item: JudgedItem) -> dict[str, Any]:
    return {"answers": {code: a.to_dict() for code, a in engine_answers(item).items()}, "unreadable": None}


async def _judge_with_model(item: JudgedItem, client: Any) -> tuple[dict[str, Any], Any]:
    messages = judge_messages(item)
    with registered(messages, item):
        completion = await client.acomplete(messages)
    codes = [q.code for q in family_questions(item.family)]
    parsed = parse_judge_reply(completion.text, codes)
    fields: dict[str, Any] = {
        "answers": None if parsed.unreadable else {
            code: (a.to_dict() if a is not None else None) for code, a in parsed.answers.items()},
        "unreadable": parsed.unreadable,
        "tokens": {"prompt": completion.prompt_tokens, "completion": completion.completion_tokens},
        "cost": round(float(completion.cost), 10),
        "latency": completion.latency,
        "cached": bool(completion.cached),
    }
    if parsed.unreadable or parsed.missing:
        fields["raw"] = completion.text[:MAX_RAW_CHARS]
    return fields, completion


async def _grade(
    settings: JudgeSettings, out: Path, items: list[JudgedItem], grader_run: int, bar: ProgressBar,
    client_options: dict[str, Any], redactor: Redactor,
) -> RunCounts:
    path = results_path(out, settings.judge_model, grader_run)
    done = done_keys(path)
    todo = [item for item in items if item.key not in done]
    counts = RunCounts(grader_run, items=len(items), skipped=len(items) - len(todo))
    task = bar.add(f"judge run {grader_run}", len(items), counts.skipped)
    writer = AppendOnlyJsonl(path, redactor)
    cache = client = None
    if settings.judge_model != ENGINE:
        cache = ReplayCache(path.with_name(f"cache_run_{grader_run}.jsonl"), redactor)
        client = ModelClient(
            model=settings.judge_model,
            api_base=settings.api_base,
            params=dict(settings.params),
            num_retries=settings.num_retries,
            timeout=settings.timeout,
            cache=cache,
            replay_only=settings.replay_from is not None,
            redactor=redactor,
            **client_options,
        )
    semaphore = asyncio.Semaphore(settings.concurrency)

    async def one(item: JudgedItem) -> None:
        record = _record(item, settings.judge_model, grader_run)
        if client is None:
            record.update(_engine_fields(item))
        else:
            async with semaphore:
                try:
                    fields, completion = await _judge_with_model(item, client)
                except ModelCallError as error:
                    counts.errored += 1
                    counts.errors.append(f"{item.key}: {error}")
                    return
            record.update(fields)
            counts.calls += 1
            counts.cached += bool(completion.cached)
            counts.prompt_tokens += completion.prompt_tokens
            counts.completion_tokens += completion.completion_tokens
            counts.cost += float(completion.cost)
        writer.write(record)
        counts.judged += 1
        counts.unreadable += record["unreadable"] is not None
        bar.advance(task, calls=counts.calls, cost=counts.cost)

    try:
        if client is None:
            for item in todo:
                await one(item)
        else:
            await asyncio.gather(*(one(item) for item in todo))
    finally:
        writer.close()
        if cache is not None:
            cache.close()
    return counts


def _seed_replay(settings: JudgeSettings, out: Path) -> None:
    """Copy the recorded judge calls of ``replay_from`` (a run directory) next to our results."""
    source = Path(settings.replay_from) / JUDGES_DIR / model_folder(settings.judge_model)
    found = sorted(source.glob("cache_run_*.jsonl")) if source.is_dir() else []
    if not found:
        folder = model_folder(settings.judge_model)
        raise ValueError(f"replay_from: {settings.replay_from!r} holds no recorded calls of "
                         f"{settings.judge_model!r} (judges/{folder}/cache_run_*.jsonl)")
    folder = judge_folder(out, settings.judge_model)
    folder.mkdir(parents=True, exist_ok=True)
    for recorded in found:
        target = folder / recorded.name
        if not target.exists():
            target.write_bytes(recorded.read_bytes())


async def judge_async(
    settings: JudgeSettings, progress: bool = False, console: Any = None,
    client_options: dict[str, Any] | None = None,
) -> tuple[Path, list[RunCounts]]:
    """Judge (or finish judging) every item of ``settings.path``; ``(output dir, counts per grader run)``."""
    redactor = Redactor()
    out, items = load_items(settings.path, settings.families, settings.turns)
    with RunLock(judge_folder(out, settings.judge_model), "judge folder"):  # one writer per model's results
        if settings.replay_from is not None and settings.judge_model != ENGINE:
            _seed_replay(settings, out)
        results = []
        with ProgressBar(progress, console, ("calls", "cost")) as bar:
            for grader_run in range(1, settings.runs + 1):
                results.append(await _grade(settings, out, items, grader_run, bar, dict(client_options or {}),
                                            redactor))
    log.info("judged %s with %s: %s", os.fspath(out), settings.judge_model,
             [(c.grader_run, c.judged, c.skipped) for c in results])
    return out, results


def interrupted_note(settings: JudgeSettings) -> str:
    """One line for an interrupted judge: what its results hold and how to finish (the same command again)."""
    out, _ = run_logs(settings.path)
    folder = judge_folder(out, settings.judge_model)
    judged = sum(len(done_keys(path)) for path in sorted(folder.glob("run_*.jsonl")))
    return (f"interrupted; {judged} judged item(s) are saved in {os.fspath(folder)}; "
            "finish by running the same command again")


def judge(settings: JudgeSettings, progress: bool = False, console: Any = None,
          client_options: dict[str, Any] | None = None) -> tuple[Path, list[RunCounts]]:
    """Blocking ``judge_async``."""
    return asyncio.run(judge_async(settings, progress, console, client_options))
