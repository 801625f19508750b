"""``RunSettings``: everything that defines a benchmark run, validated, saved as ``config.json``.

Model names: ``"scripted"`` (the built-in team, no litellm), ``"random"``
(uniform over the mask), or any litellm model string
(``openai/gpt-4o-mini``, ``anthropic/...``, ``ollama/...``, and our offline
``scripted/team``). ``person`` names the seat a person plays in
``craft-env play`` (``builder`` or one of the ``seats``; None in a benchmark
run), so a game's ``config.json`` says who sat where. ``seats`` are the
seated directors (``core.views.check_seats``; default D1, D2, D3, or a
string such as ``"D0,D1,D2,D3"``), saved as a list; a config saved before
seats existed seated the default three. A bad value raises
``ValueError`` naming the field.

``dataset`` is a bundled set by name (``"paper"``, the default: the paper's
20; ``"craft"``: ours) or a structures file. ``protocol`` is ``"craft"``
(default) or ``"paper"`` (``core.protocol``). ``builder_tools`` gives a
model builder the ``simulate_move`` tool, at most ``max_tool_calls`` calls
a turn (``agents.tools``). ``shard`` (``"I/N"``, default None: every
game) makes the run play only its share of the games (``run.shard``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from craft_env.agents.prompts import PROMPT_VERSION
from craft_env.core.board import Structure
from craft_env.core.protocol import get_protocol
from craft_env.core.starts import STARTS, start_code
from craft_env.core.views import ALL_SEATS, DEFAULT_SEATS, check_seats
from craft_env.datasets import EVAL_SETS, load_dataset
from craft_env.envs.config import MAX_ORACLE_N, MAX_TURNS
from craft_env.eval.logs.games import MAX_RUNS
from craft_env.eval.logs.outputs import output_dir
from craft_env.eval.run.shard import canonical_shard, shard_games
from craft_env.models.cost import TokenPrice
from craft_env.models.llm import check_call_limits, check_number

BUILT_IN = ("scripted", "random")
#: Every seat a person may take; a run accepts the builder or one of its own ``seats``.
PERSON_SEATS = ("builder", *ALL_SEATS)
# Settings that change results: a resumed run must agree on all of them.
RESULT_FIELDS = (
    "director_model",
    "builder_model",
    "structures",
    "dataset",
    "runs",
    "turns",
    "oracle_n",
    "start",
    "seed",
    "director_order",
    "temperature",
    "max_tokens",
    "prompt_version",
    "person",
    "protocol",
    "builder_tools",
    "max_tool_calls",
    "seats",
    "shard",
)
#: Upper bounds of settings that would otherwise waste time or money before failing (docs/robustness.md).
MAX_TEMPERATURE = 100.0
MAX_COST_USD = 1_000_000.0
DEFAULT_DATASET = "paper"
# The paper's budget of simulate_move calls per builder turn (docs/benchmark.md, "The paper's three conditions and the tool").
DEFAULT_MAX_TOOL_CALLS = 3


def _int_in(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: expected an int from {low:,} to {high:,}, got {value!r}")
    return value


def _positive_int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}: expected an int >= {minimum}, got {value!r}")
    return value


def is_model(name: str) -> bool:
    """True for a litellm model string (not a built-in agent)."""
    return name not in BUILT_IN


def parse_structures(spec: object) -> list[int] | None:
    """``"all"``/``None`` -> ``None``; ``"0,3,7"`` or a list -> sorted unique indices."""
    if spec is None or spec == "all":
        return None
    if isinstance(spec, str):
        parts = [p.strip() for p in spec.split(",") if p.strip()]
        try:
            indices = [int(p) for p in parts]
        except ValueError:
            raise ValueError(
                f"structures: expected 'all' or comma-separated indices like '0,3,7', got {spec!r}"
            ) from None
    elif isinstance(spec, (list, tuple)):
        indices = list(spec)
    else:
        raise ValueError(f"structures: expected 'all' or comma-separated indices like '0,3,7', got {spec!r}")
    if not indices or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in indices):
        raise ValueError(f"structures: expected non-negative indices, got {spec!r}")
    return sorted(set(indices))


@dataclass
class RunSettings:
    """One benchmark run's settings (see the module docstring and ``craft-env run --help``).

    ``turns`` is the environment's ``max_turns`` under the command line's
    name: ``--turns``, ``RunSettings.turns`` and ``config.json``'s
    ``"turns"`` are the same number, passed as ``env(max_turns=turns)``.
    This is the one alias between the two names.
    """

    out: str
    director_model: str = "scripted"
    builder_model: str = "scripted"
    api_base: str | None = None
    structures: list[int] | None = None
    dataset: str | None = DEFAULT_DATASET
    runs: int = 1
    turns: int = 20
    oracle_n: int = 5
    start: str = "empty"
    concurrency: int = 8
    seed: int = 0
    director_order: str = "random"
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = 60.0
    num_retries: int = 3
    replay_only: bool = False
    prompt_version: str = PROMPT_VERSION
    person: str | None = None
    protocol: str = "craft"
    builder_tools: bool = False
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    max_cost: float | None = None
    log_prompts: bool = False
    price_per_token: str | None = None
    seats: tuple[str, ...] = DEFAULT_SEATS
    shard: str | None = None

    def __post_init__(self) -> None:
        for name in ("director_model", "builder_model"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or value != value.strip():
                raise ValueError(
                    f"{name}: expected 'scripted', 'random' or a litellm model string, got {value!r}"
                )
        output_dir(self.out, "out")
        self.structures = parse_structures(self.structures)
        _int_in("runs", self.runs, 1, MAX_RUNS)
        _int_in("turns", self.turns, 1, MAX_TURNS)
        _int_in("oracle_n", self.oracle_n, 0, MAX_ORACLE_N)
        _positive_int("concurrency", self.concurrency)
        check_call_limits(self.timeout, self.num_retries)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed: expected a non-negative int, got {self.seed!r}")
        self.seats = check_seats(self.seats)
        if self.start not in STARTS:
            raise ValueError(f"start: expected one of {', '.join(STARTS)}, got {self.start!r}")
        start_code(self.start, self.seats)
        people = ("builder", *self.seats)
        if self.person is not None and self.person not in people:
            raise ValueError(f"person: expected None or one of {', '.join(people)}, got {self.person!r}")
        if self.director_order not in ("random", "fixed"):
            raise ValueError(f"director_order: expected 'random' or 'fixed', got {self.director_order!r}")
        if self.temperature is not None:
            check_number("temperature", self.temperature, 0.0, MAX_TEMPERATURE)
        if self.max_tokens is not None:
            _positive_int("max_tokens", self.max_tokens)
        if self.max_cost is not None:
            check_number("max_cost", self.max_cost, 0.0, MAX_COST_USD, " of US dollars")
        if self.price_per_token is not None:
            TokenPrice.parse(self.price_per_token)
        if self.dataset is None:
            self.dataset = DEFAULT_DATASET
        if self.dataset not in EVAL_SETS:
            if not isinstance(self.dataset, str) or not Path(self.dataset).is_file():
                raise ValueError(
                    f"dataset: expected {' or '.join(EVAL_SETS)} or a structures file, no such file "
                    f"{self.dataset!r}"
                )
            self.dataset = os.path.abspath(self.dataset)
        self.rules = get_protocol(self.protocol)
        if not isinstance(self.builder_tools, bool):
            raise ValueError(f"builder_tools: expected a bool, got {self.builder_tools!r}")
        _positive_int("max_tool_calls", self.max_tool_calls)
        self.shard = canonical_shard(self.shard)

    @property
    def token_price(self) -> TokenPrice | None:
        """``price_per_token`` read: the price of a model litellm cannot price (``models.cost``)."""
        return None if self.price_per_token is None else TokenPrice.parse(self.price_per_token)

    @property
    def sampling(self) -> dict[str, Any]:
        """Sampling parameters passed to litellm (and keyed in the cache)."""
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        return params

    def load_structures(self) -> list[Structure]:
        """The dataset (the bundled ``paper`` set by default), checked against ``structures``."""
        structures = load_dataset(self.dataset)
        if self.structures is not None:
            bad = [i for i in self.structures if i >= len(structures)]
            if bad:
                raise ValueError(
                    f"structures: index {bad[0]} is outside the dataset (0..{len(structures) - 1})"
                )
        return structures

    def selected(self) -> list[int]:
        return list(range(len(self.load_structures()))) if self.structures is None else list(self.structures)

    def games(self) -> list[tuple[int, int]]:
        """The ``(run, structure index)`` games this run plays: every selected structure in every run, or the
        share of them that its ``shard`` deals it."""
        return shard_games(self.shard, self.runs, self.selected())

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["seats"] = list(self.seats)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSettings:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if known.get("dataset", "") is None:  # saved before the paper set shipped: the bundled set was ours
            known["dataset"] = "craft"
        if known.get("seats") is None:  # saved before seats were configurable: the paper's three
            known["seats"] = DEFAULT_SEATS
        return cls(**known)


def game_seed(seed: int, run: int, structure_index: int) -> int:
    """The episode seed of one game: a stable sha256 of (seed, run, structure index), 63 bits."""
    digest = hashlib.sha256(f"craft-game:{seed}:{run}:{structure_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
