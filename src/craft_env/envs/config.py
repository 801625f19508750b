"""Environment configuration: one validated, immutable record.

Every keyword of ``craft_env.env()``, ``parallel_env()`` and ``vector_env()``
lands here first, so a bad value fails at construction with an error that
names the field and the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from craft_env.core.board import Structure
from craft_env.core.encoding import check_size
from craft_env.core.game import REWARDS
from craft_env.core.protocol import CRAFT, Protocol, get_protocol
from craft_env.core.starts import STARTS, start_code
from craft_env.core.views import DEFAULT_SEATS, check_seats
from craft_env.datasets import load_eval_set

MESSAGE_MODES = ("intent", "text")
DIRECTOR_SEES = ("full", "walls")
RENDER_MODES = ("human", "ansi", "rgb_array")


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
    render_target: bool = False
    protocol: Protocol = CRAFT
    seats: tuple[str, ...] = DEFAULT_SEATS


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: The longest game the int32 turn counters of the kernels hold.
MAX_TURNS = 2**31 - 1
#: The largest ``oracle_n`` (the kernels count candidates in 32 bits; any n above the legal moves shows them all).
MAX_ORACLE_N = 2**31 - 1


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
    director_sees: str | None = None,
    reward: str = "progress_delta",
    message_mode: str = "intent",
    text_observations: bool | None = None,
    render_mode: str | None = None,
    render_target: bool = False,
    n: int = 3,
    height: int = 3,
    protocol: str | Protocol = "craft",
    seats: Any = DEFAULT_SEATS,
) -> EnvConfig:
    """Check every setting and build an ``EnvConfig``; ``ValueError`` names the bad field.

    ``protocol`` is ``"craft"`` (ours), ``"paper"`` (the paper's code) or a
    ``core.protocol.Protocol``. ``director_sees`` left at ``None`` follows
    the protocol: ``"walls"`` when it says directors see only the walls
    (``Protocol.directors_see_walls``, protocol paper), else ``"full"``; a
    value given explicitly always wins. ``seats`` is any non-empty subset of
    ``core.views.ALL_SEATS`` (``check_seats``); its order is the seat index
    order of ``director_order``, observations and masks.
    """
    protocol = get_protocol(protocol)
    seats = check_seats(seats)
    if director_sees is None:
        director_sees = "walls" if protocol.directors_see_walls else "full"
    structure = _resolve_structure(structure)
    if structure is not None:
        n, height = structure.n, structure.height
    _check_turns(max_turns, oracle_n)
    _check_start(start, seats)
    order = _director_order(director_order, seats)
    _check_choice("director_sees", director_sees, DIRECTOR_SEES)
    _check_choice("reward", reward, REWARDS)
    _check_choice("message_mode", message_mode, MESSAGE_MODES)
    text_observations = _text_observations(text_observations, message_mode)
    _check_render(render_mode, render_target)
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
        render_target=render_target,
        protocol=protocol,
        seats=seats,
    )


def _resolve_structure(structure: Any) -> Structure | None:
    """The target: a ``Structure`` as given, an index into the bundled evaluation set looked up, or None."""
    if structure is None or isinstance(structure, Structure):
        return structure
    if not _is_int(structure):
        raise ValueError(
            f"structure: expected a Structure, an index into the bundled set, or None; got {structure!r}"
        )
    bundled = load_eval_set()
    if not 0 <= structure < len(bundled):
        raise ValueError(
            f"structure: index {structure} is outside the bundled evaluation set (0..{len(bundled) - 1})"
        )
    return bundled[structure]


def _check_turns(max_turns: Any, oracle_n: Any) -> None:
    """The game length and the candidate count fit the kernels' 32-bit counters (``MAX_TURNS``,
    ``MAX_ORACLE_N``)."""
    if not _is_int(max_turns) or not 1 <= max_turns <= MAX_TURNS:
        raise ValueError(f"max_turns: must be an int in 1..{MAX_TURNS}, got {max_turns!r}")
    if oracle_n is not None and (not _is_int(oracle_n) or not 1 <= oracle_n <= MAX_ORACLE_N):
        raise ValueError(f"oracle_n: must be None or an int in 1..{MAX_ORACLE_N}, got {oracle_n!r}")


def _check_start(start: Any, seats: tuple[str, ...]) -> None:
    """``start`` names a starting board, and a seated wall start names a seat that is seated."""
    if start not in STARTS:
        raise ValueError(f"start: must be one of {', '.join(STARTS)}, got {start!r}")
    start_code(start, seats)


def _director_order(director_order: Any, seats: tuple[str, ...]) -> tuple[int, ...] | None:
    """The speaking order as seat indices: None for ``"random"`` (drawn each turn), the seat order for
    ``"fixed"``, else a permutation of the seats given by name or index."""
    if director_order == "random":
        return None
    if director_order == "fixed":
        return tuple(range(len(seats)))
    try:
        order = tuple(seats.index(s) if isinstance(s, str) else _seat_number(s) for s in director_order)
    except (TypeError, ValueError):
        order = ()
    if sorted(order) != list(range(len(seats))):
        raise ValueError(
            "director_order: must be 'random', 'fixed' or a permutation of the seats "
            f"{', '.join(seats)} (names or seat indices), got {director_order!r}"
        )
    return order


def _check_choice(field: str, value: Any, choices: tuple[str, ...]) -> None:
    """``value`` is one of ``choices``; the error names ``field`` and lists them."""
    if value not in choices:
        raise ValueError(f"{field}: must be one of {', '.join(choices)}, got {value!r}")


def _text_observations(text_observations: Any, message_mode: str) -> bool:
    """Text observations on or off: left at None they follow the message mode (on for ``"text"``)."""
    if text_observations is None:
        return message_mode == "text"
    if not isinstance(text_observations, bool):
        raise ValueError(f"text_observations: must be a bool or None, got {text_observations!r}")
    return text_observations


def _check_render(render_mode: Any, render_target: Any) -> None:
    """``render_mode`` is None or a known mode, and ``render_target`` a bool."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(
            f"render_mode: must be None or one of {', '.join(RENDER_MODES)}, got {render_mode!r}"
        )
    if not isinstance(render_target, bool):
        raise ValueError(f"render_target: must be a bool, got {render_target!r}")


def turns_for_cycles(config: dict[str, Any], steps_per_turn: int) -> tuple[dict[str, Any], int | None]:
    """Translate PettingZoo's ``max_cycles`` keyword into ``max_turns``.

    A cycle is one step of every agent: one turn in the AEC env
    (``steps_per_turn=1``), half a turn in the Parallel env (``2``: the
    director phase and the builder phase). Returns the config with
    ``max_turns`` set to the turns needed to hold ``max_cycles`` cycles, and
    ``max_cycles`` itself (None when it was not given).
    """
    if "max_cycles" not in config:
        return config, None
    config = dict(config)
    max_cycles = config.pop("max_cycles")
    if max_cycles is None:
        return config, None
    if not _is_int(max_cycles) or max_cycles < 1:
        raise ValueError(f"max_cycles: must be None or a positive int, got {max_cycles!r}")
    if "max_turns" in config:
        raise ValueError(
            f"max_cycles: give max_turns or max_cycles, not both (got max_turns={config['max_turns']!r}, "
            f"max_cycles={max_cycles!r})"
        )
    config["max_turns"] = -(-max_cycles // steps_per_turn)
    return config, max_cycles


def resolve_structures(structures: Any, config: dict[str, Any]) -> list[Structure] | None:
    """``structures=`` of the batched envs: one structure (or bundled-set index) per env, cycled.

    ``None`` stays ``None``. The structures must share one size, which is written into ``config``
    (``n``, ``height``; a different one given there is an error); ``ValueError`` names the field.
    """
    if structures is None:
        return None
    if config.get("structure") is not None:
        raise ValueError("structures: give either structure= (every env) or structures= (per env), not both")
    if isinstance(structures, (Structure, int)) or not isinstance(structures, Sequence) or not structures:
        raise ValueError(f"structures: expected a non-empty sequence of Structures or bundled-set indices, "
                         f"got {structures!r}")
    resolved = [make_config(structure=s).structure for s in structures]
    sizes = {(s.n, s.height) for s in resolved}
    if len(sizes) != 1:
        raise ValueError(f"structures: every structure must have the same size, got {sorted(sizes)}")
    n, height = sizes.pop()
    for key, value in (("n", n), ("height", height)):
        if key in config and config[key] != value:
            raise ValueError(f"{key}: {config[key]!r} does not match the structures' {key} {value}")
    config["n"], config["height"] = n, height
    return resolved
