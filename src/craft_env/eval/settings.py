"""``RunSettings``: everything that defines a benchmark run, validated, saved as ``config.json``.

Model names: ``"scripted"`` (the built-in team, no litellm), ``"random"``
(uniform over the mask), or any litellm model string
(``openai/gpt-4o-mini``, ``anthropic/...``, ``ollama/...``, and our offline
``scripted/team``). A bad value raises ``ValueError`` naming the field.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from craft_env.agents.prompts import PROMPT_VERSION
from craft_env.core.board import Structure

BUILT_IN = ("scripted", "random")
STARTS = ("empty", "first_layer", "first_two_layers", "wall_D1", "wall_D2", "wall_D3")
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
)


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
    """One benchmark run's settings (see the module docstring and ``craft-env run --help``)."""

    out: str
    director_model: str = "scripted"
    builder_model: str = "scripted"
    api_base: str | None = None
    structures: list[int] | None = None
    dataset: str | None = None
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
    max_cost: float | None = None
    log_prompts: bool = False

    def __post_init__(self) -> None:
        for name in ("director_model", "builder_model"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or value != value.strip():
                raise ValueError(
                    f"{name}: expected 'scripted', 'random' or a litellm model string, got {value!r}"
                )
        self.structures = parse_structures(self.structures)
        _positive_int("runs", self.runs)
        _positive_int("turns", self.turns)
        _positive_int("oracle_n", self.oracle_n, 0)
        _positive_int("concurrency", self.concurrency)
        _positive_int("num_retries", self.num_retries, 0)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed: expected a non-negative int, got {self.seed!r}")
        if self.start not in STARTS:
            raise ValueError(f"start: expected one of {', '.join(STARTS)}, got {self.start!r}")
        if self.director_order not in ("random", "fixed"):
            raise ValueError(f"director_order: expected 'random' or 'fixed', got {self.director_order!r}")
        if self.temperature is not None and (
            not isinstance(self.temperature, (int, float)) or self.temperature < 0
        ):
            raise ValueError(f"temperature: expected a number >= 0, got {self.temperature!r}")
        if self.max_tokens is not None:
            _positive_int("max_tokens", self.max_tokens)
        if not isinstance(self.timeout, (int, float)) or self.timeout <= 0:
            raise ValueError(f"timeout: expected a positive number of seconds, got {self.timeout!r}")
        cost = self.max_cost
        if cost is not None and (isinstance(cost, bool) or not isinstance(cost, (int, float)) or cost < 0):
            raise ValueError(f"max_cost: expected a number of US dollars >= 0, got {self.max_cost!r}")
        if self.dataset is not None:
            if not Path(self.dataset).is_file():
                raise ValueError(f"dataset: no such file {self.dataset!r}")
            self.dataset = os.path.abspath(self.dataset)

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
        """The dataset (bundled eval set by default), checked against ``structures``."""
        from craft_env.datasets import load_eval_set, load_structures

        structures = load_structures(self.dataset) if self.dataset else load_eval_set()
        if self.structures is not None:
            bad = [i for i in self.structures if i >= len(structures)]
            if bad:
                raise ValueError(
                    f"structures: index {bad[0]} is outside the dataset (0..{len(structures) - 1})"
                )
        return structures

    def selected(self) -> list[int]:
        return list(range(len(self.load_structures()))) if self.structures is None else list(self.structures)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSettings:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)


def game_seed(seed: int, run: int, structure_index: int) -> int:
    """The episode seed of one game: a stable sha256 of (seed, run, structure index), 63 bits."""
    digest = hashlib.sha256(f"craft-game:{seed}:{run}:{structure_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
