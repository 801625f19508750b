"""Environment configuration: one validated, immutable record.

Every keyword of ``craft_env.env()``, ``parallel_env()`` and ``vector_env()``
lands here first, so a bad value fails at construction with an error that
names the field and the value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from craft_env.core.board import Structure
from craft_env.core.starts import STARTS

MESSAGE_MODES = ("intent", "text")
DIRECTOR_SEES = ("full", "walls")
REWARDS = ("progress_delta", "distance", "sparse")
RENDER_MODES = ("ansi", "rgb_array")
SEATS = ("D1", "D2", "D3")


@dataclass(frozen=True)
class EnvConfig:
    """Validated environment settings (see the env module docstring for meanings)."""

    structure: Structure | None = None
    n: int = 3
    height: int = 3
    max_turns: int = 20
    oracle_n: int | None = None
    start: str = "empty"
    director_order: tuple[int, ...] | None = None
    director_sees: str = "full"
    reward: str = "progress_delta"
    message_mode: str = "intent"
    text_observations: bool = False
    render_mode: str | None = None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: The longest game the int32 turn counters of the kernels hold.
MAX_TURNS = 2**31 - 1


def _seat_number(value: object) -> int:
    """A seat index written as a whole number (``2.7`` is no seat)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise ValueError(f"not a seat: {value!r}")


def make_config(
    structure: Any = None,
    max_turns: int = 20,
    oracle_n: int | None = None,
    start: str = "empty",
    director_order: Any = "random",
    director_sees: str = "full",
    reward: str = "progress_delta",
    message_mode: str = "intent",
    text_observations: bool | None = None,
    render_mode: str | None = None,
    n: int = 3,
    height: int = 3,
) -> EnvConfig:
    """Check every setting and build an ``EnvConfig``; ``ValueError`` names the bad field."""
    if structure is not None and not isinstance(structure, Structure):
        if _is_int(structure):
            from craft_env.datasets import load_eval_set

            bundled = load_eval_set()
            if not 0 <= structure < len(bundled):
                raise ValueError(
                    f"structure: index {structure} is outside the bundled evaluation set (0..{len(bundled) - 1})"
                )
            structure = bundled[structure]
        else:
            raise ValueError(
                f"structure: expected a Structure, an index into the bundled set, or None; got {structure!r}"
            )
    if structure is not None:
        n, height = structure.n, structure.height
    if not _is_int(max_turns) or not 1 <= max_turns <= MAX_TURNS:
        raise ValueError(f"max_turns: must be an int in 1..{MAX_TURNS}, got {max_turns!r}")
    if oracle_n is not None and (not _is_int(oracle_n) or oracle_n < 1):
        raise ValueError(f"oracle_n: must be None or a positive int, got {oracle_n!r}")
    if start not in STARTS:
        raise ValueError(f"start: must be one of {', '.join(STARTS)}, got {start!r}")
    order: tuple[int, ...] | None
    if director_order == "random":
        order = None
    elif director_order == "fixed":
        order = (0, 1, 2)
    else:
        try:
            order = tuple(SEATS.index(s) if isinstance(s, str) else _seat_number(s) for s in director_order)
        except (TypeError, ValueError):
            order = ()
        if sorted(order) != [0, 1, 2]:
            raise ValueError(
                "director_order: must be 'random', 'fixed' or a permutation of the seats "
                f"(e.g. ('D2', 'D1', 'D3')), got {director_order!r}"
            )
    if director_sees not in DIRECTOR_SEES:
        raise ValueError(f"director_sees: must be one of {', '.join(DIRECTOR_SEES)}, got {director_sees!r}")
    if reward not in REWARDS:
        raise ValueError(f"reward: must be one of {', '.join(REWARDS)}, got {reward!r}")
    if message_mode not in MESSAGE_MODES:
        raise ValueError(f"message_mode: must be one of {', '.join(MESSAGE_MODES)}, got {message_mode!r}")
    if text_observations is None:
        text_observations = message_mode == "text"
    elif not isinstance(text_observations, bool):
        raise ValueError(f"text_observations: must be a bool or None, got {text_observations!r}")
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode: must be None or one of {', '.join(RENDER_MODES)}, got {render_mode!r}")
    from craft_env.core.encoding import check_size

    check_size(n, height)
    return EnvConfig(
        structure=structure,
        n=n,
        height=height,
        max_turns=max_turns,
        oracle_n=oracle_n,
        start=start,
        director_order=order,
        director_sees=director_sees,
        reward=reward,
        message_mode=message_mode,
        text_observations=text_observations,
        render_mode=render_mode,
    )
