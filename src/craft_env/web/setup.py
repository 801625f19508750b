"""What the organiser chooses for one served game, checked field by field (``GameSetup``).

The organiser's form sends one JSON object; ``GameSetup.from_payload``
reads it and refuses (``seats.Refused``, naming the field and the value)
anything out of place, before any file is written. ``run_settings`` turns
it into the ``RunSettings`` of a normal run directory, so the game is
played and logged by the runner like ``craft-env run`` and ``play``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from craft_env.core.protocol import PROTOCOLS
from craft_env.core.views import ALL_SEATS, BUILDER, DEFAULT_SEATS
from craft_env.eval.run.settings import RunSettings
from craft_env.web.seats import ON_TIMEOUT, PERSON, Refused, check_label, check_seat_kinds, role_models

#: Bounds of the form's numbers: a study game is short; a run of hundreds of turns belongs to craft-env run.
MAX_TURNS = 200
MAX_STRUCTURES = 20
MAX_ORACLE_N = 20
MAX_SEAT_TIMEOUT_S = 24 * 3600
MAX_TITLE_CHARS = 120


def _int(payload: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = payload.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise Refused(f"{name}: expected a whole number from {low} to {high}, got {str(value)[:40]!r}")
    return value


def _choice(payload: dict[str, Any], name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = payload.get(name, default)
    if value not in allowed:
        raise Refused(f"{name}: expected one of {', '.join(allowed)}, got {str(value)[:40]!r}")
    return str(value)


def _structures(payload: dict[str, Any]) -> list[int]:
    value = payload.get("structures", [0])
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (
        not isinstance(value, list) or not 1 <= len(value) <= MAX_STRUCTURES
        or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in value)
        or len(set(value)) != len(value)
    ):
        raise Refused(
            f"structures: expected 1 to {MAX_STRUCTURES} different indices into the set, "
            f"got {str(value)[:60]!r}"
        )
    return sorted(value)  # the run plays its structures in index order


def _directors(payload: dict[str, Any]) -> tuple[str, ...]:
    value = payload.get("directors", list(DEFAULT_SEATS))
    if value not in (list(DEFAULT_SEATS), list(ALL_SEATS)):
        expected = f"{list(DEFAULT_SEATS)} or {list(ALL_SEATS)}"
        raise Refused(f"directors: expected {expected}, got {str(value)[:60]!r}")
    return tuple(value)


@dataclass(frozen=True)
class GameSetup:
    """One game as the organiser set it up (the module docstring); saved beside the game to resume it."""

    dataset: str = "paper"
    structures: list[int] = field(default_factory=lambda: [0])
    protocol: str = "craft"
    oracle_n: int = 5
    turns: int = 20
    seed: int = 0
    kinds: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    timeout: int = 0
    on_timeout: str = "wait"
    title: str = ""

    @classmethod
    def from_payload(cls, payload: object, datasets: tuple[str, ...]) -> GameSetup:
        """The setup in ``payload`` (the form's JSON); ``datasets`` are the set names the server offers."""
        if not isinstance(payload, dict):
            raise Refused("expected a JSON object")
        directors = _directors(payload)
        kinds = check_seat_kinds(payload.get("seats", {}), directors)
        labels_in = payload.get("labels") or {}
        if not isinstance(labels_in, dict):
            raise Refused("labels: expected an object of seat -> label")
        labels = {seat: check_label(seat, labels_in.get(seat)) for seat in kinds if labels_in.get(seat)}
        title = payload.get("title") or ""
        if not isinstance(title, str) or len(title) > MAX_TITLE_CHARS or not title.isprintable():
            raise Refused(f"title: expected one line of at most {MAX_TITLE_CHARS} characters")
        return cls(
            dataset=_choice(payload, "dataset", datasets[0], datasets),
            structures=_structures(payload),
            protocol=_choice(payload, "protocol", "craft", tuple(PROTOCOLS)),
            oracle_n=_int(payload, "oracle_n", 5, 0, MAX_ORACLE_N),
            turns=_int(payload, "turns", 20, 1, MAX_TURNS),
            seed=_int(payload, "seed", 0, 0, 2**31 - 1),
            kinds=kinds,
            labels=labels,
            timeout=_int(payload, "timeout", 0, 0, MAX_SEAT_TIMEOUT_S),
            on_timeout=_choice(payload, "on_timeout", "wait", ON_TIMEOUT),
            title=title.strip(),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameSetup:
        """A setup saved by ``to_dict`` (the server's own file: trusted, read back as written)."""
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def directors(self) -> tuple[str, ...]:
        return tuple(seat for seat in self.kinds if seat != BUILDER)

    @property
    def people(self) -> tuple[str, ...]:
        """The seats a person plays."""
        return tuple(seat for seat, kind in self.kinds.items() if kind == PERSON)

    @property
    def models(self) -> tuple[str, ...]:
        """The litellm models of the game's model seats, each once."""
        return tuple(sorted({k for k in self.kinds.values() if "/" in k}))

    def run_settings(self, out: str, api_base: str | None = None) -> RunSettings:
        """The ``RunSettings`` of the game's run directory ``out`` (one run, the structures in order); its
        ``load_structures`` refuses an index outside the set, naming the field."""
        settings = RunSettings(
            out=out,
            structures=list(self.structures),
            dataset=self.dataset,
            runs=1,
            turns=self.turns,
            oracle_n=self.oracle_n,
            seed=self.seed,
            concurrency=1,
            protocol=self.protocol,
            seats=self.directors,
            api_base=api_base,
            **role_models(self.kinds),
        )
        return settings
