"""Digests of what the text path produces, to keep it byte-identical while it is made faster.

``tests/test_text_speed.py`` compares these with ``tests/data/speed_reference.json``,
written before the text path was optimised (issue 33): the logs of a 60-game
offline run (``craft-env run --runs 3``), the records SFT export makes of it,
and every chat, reward and verdict the text environment gives for fixed
games of the builder's and a director's seat. Regenerate (only when a
change of output is intended) with ``python tests/speed_reference.py --write``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

REFERENCE = Path(__file__).parent / "data" / "speed_reference.json"
CANDIDATE = re.compile(r"^1\. (.+)$", re.MULTILINE)

#: Replies a director's seat gives in turn: a clear instruction, a question-free remark, nonsense.
DIRECTOR_REPLIES = (
    "put a small red block on my left column, bottom layer",
    "remove the top block of my middle column",
    "no idea",
    "MESSAGE: stack a large blue block on my right column",
)


def digest(value: Any) -> str:
    """sha256 of ``value`` as canonical JSON."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def builder_reply(messages: list[dict[str, Any]], turn: int) -> str:
    """The first candidate most turns; every fifth turn a question, every seventh an unreadable reply."""
    if turn % 7 == 6:
        return "I am not sure what to do"
    if turn % 5 == 4:
        return "QUESTION: D1, which colour goes on your left column?"
    found = CANDIDATE.search(messages[-1]["content"])
    move = found.group(1) if found else "place small red block at (0, 0, 0)"
    return f"MOVE: {move}\nFOLLOWED: D1"


def text_env_digests() -> dict[str, str]:
    """Digests of every step of fixed text-env games: the builder (one at a time, and batched) and D2."""
    import craft_env

    def episode(env: Any, seed: int, reply: Any) -> str:
        steps = []
        messages, info = env.reset(seed=seed)
        steps.append([messages, info])
        turn = 0
        while messages is not None:
            messages, reward, terminated, truncated, info = env.step(reply(messages, turn))
            steps.append([messages, reward, terminated, truncated, info])
            turn += 1
        return digest(steps)

    out: dict[str, str] = {}
    with craft_env.text_env(max_turns=12) as env:
        for seed in range(6):
            out[f"builder seed {seed}"] = episode(env, seed, builder_reply)
    with craft_env.text_env(seat="D2", max_turns=8) as env:
        for seed in (0, 7):
            out[f"D2 seed {seed}"] = episode(
                env, seed, lambda _m, turn: DIRECTOR_REPLIES[turn % len(DIRECTOR_REPLIES)]
            )
    with craft_env.text_env(num_envs=3, max_turns=10, oracle_n=0) as env:
        steps = []
        observations, infos = env.reset(seed=20)
        steps.append([observations, infos])
        turn = 0
        while any(o is not None for o in observations):
            replies = [None if o is None else builder_reply(o, turn) for o in observations]
            result = env.step(replies)
            steps.append(list(result))
            observations = result[0]
            turn += 1
        out["batched seed 20"] = digest(steps)
    return out


def run_digests() -> dict[str, str]:
    """Digests of a 60-game offline run's logs and summaries, and of the SFT records exported from it."""
    from craft_env.eval.run.runner import run_benchmark
    from craft_env.eval.run.settings import RunSettings
    from craft_env.train.export import training_records

    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as folder:
        run = Path(folder) / "run"
        run_benchmark(RunSettings(out=str(run), runs=3))
        for number in (1, 2, 3):
            log = run / f"run_{number}" / "log.jsonl"
            out[f"run_{number}/log.jsonl"] = hashlib.sha256(log.read_bytes()).hexdigest()
            summary = json.loads((run / f"run_{number}" / "summary.json").read_text(encoding="utf-8"))
            summary.pop("seconds_this_session")
            out[f"run_{number}/summary.json"] = digest(summary)
        for seat in ("builder", "directors"):
            records, counts = training_records([run], "sft", seat=seat)
            out[f"sft {seat}"] = digest([[record, turn.prompt] for turn, record in records])
            out[f"sft {seat} counts"] = digest(dict(counts))
    return out


def digests() -> dict[str, str]:
    return {**run_digests(), **text_env_digests()}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/speed_reference.py --write")
    REFERENCE.write_text(json.dumps(digests(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {REFERENCE}")
