"""Team diagnostics from logs alone: credit λ (the paper's Table 9), outcome and remove rates.

* **Credit λ.** On oracle-correct turns (the oracle offered moves and the
  builder's move was one of them, ``followed_oracle``) the builder's
  ``FOLLOWED`` seats (``builder.followed``, a list of any length) are its
  credit. A credit naming no seat, every seat, or a seat that is not a
  director is degenerate: counted (``Deg%``) and left out. Each remaining
  turn gives its named seats equal shares summing to one; ``λ_Dk`` is the
  mean share of ``Dk`` over those turns, so the λ's sum to one. ``λ-std``
  is the standard deviation (ddof 0) of the λ's: 0 for a team that shares
  credit evenly. ``Total`` counts turns, ``Oracle`` oracle-correct turns,
  ``Filtered`` the non-degenerate ones among them.
* **Outcome rates** (Figure 7): of all turns, the fraction where the oracle
  offered moves (``available``), where the builder played one
  (``followed``), where it offered some and the builder played another
  (``rejected``), and where it offered none (``no_oracle``).
* **Remove rates** (Table 10): over all turns, the fraction where the oracle
  prescribed a removal (``orc_remove``), where the builder attempted one
  (``att_remove``), and the gap ``att_remove - orc_remove``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from typing import Any

from craft_env.core.views import ALL_SEATS, DEFAULT_SEATS
from craft_env.eval.results.checked import shown

log = logging.getLogger(__name__)

NAN = float("nan")


def seated(results: Iterable[Any]) -> tuple[str, ...]:
    """Every seat of any of ``results`` (``RunResult.seats``), in ``ALL_SEATS`` order: the λ columns."""
    found = {seat for result in results for seat in result.seats}
    return tuple(seat for seat in ALL_SEATS if seat in found)


def credit_of(turn: dict[str, Any]) -> list[str] | None:
    """The seats the builder says it followed, as logged (a list; a lone string is read as one seat).

    ``None`` when the line holds no readable credit: ``builder`` is not an object, or ``builder.followed``
    is neither a string nor a list of strings (a hand-edited or foreign log).
    """
    builder = turn.get("builder")
    if builder is None:
        return []
    if not isinstance(builder, dict):
        return None
    followed = builder.get("followed") or []
    if isinstance(followed, str):
        followed = [followed]
    if not isinstance(followed, list) or not all(isinstance(seat, str) for seat in followed):
        return None
    return [seat.strip().upper() for seat in followed if seat.strip()]


def _turn_name(turn: dict[str, Any]) -> str:
    return (
        f"run {turn.get('run')!r} structure {turn.get('structure_index')!r} turn {turn.get('turn_number')!r}"
    )


def is_oracle_correct(turn: dict[str, Any]) -> bool:
    return bool(turn.get("oracle_moves")) and bool(turn.get("followed_oracle"))


def credit_lambda(turns: Iterable[dict[str, Any]], seats: Sequence[str] = DEFAULT_SEATS) -> dict[str, Any]:
    """Table 9's row for ``turns`` (see the module docstring)."""
    total = oracle = degenerate = 0
    shares = dict.fromkeys(seats, 0.0)
    known = set(seats)
    for turn in turns:
        credit = credit_of(turn)
        if credit is None:
            log.warning(
                "%s: skipping a turn line whose builder credit is unreadable (builder: %s)",
                _turn_name(turn),
                shown(turn.get("builder")),
            )
            continue
        total += 1
        if not is_oracle_correct(turn):
            continue
        oracle += 1
        named = set(credit)
        if not named or named == known or not named <= known:
            degenerate += 1
            continue
        for seat in named:
            shares[seat] += 1.0 / len(named)
    filtered = oracle - degenerate
    row: dict[str, Any] = {f"lambda_{seat}": (shares[seat] / filtered if filtered else NAN) for seat in seats}
    values = [row[f"lambda_{seat}"] for seat in seats]
    if filtered:
        mean = sum(values) / len(values)
        row["lambda_std"] = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    else:
        row["lambda_std"] = NAN
    row.update(
        filtered=filtered,
        total=total,
        oracle=oracle,
        oracle_rate=oracle / total if total else NAN,
        degenerate=degenerate,
        degenerate_rate=degenerate / oracle if oracle else NAN,
    )
    return row


def outcome_rates(turns: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Figure 7's rates over ``turns`` (see the module docstring)."""
    total = available = followed = 0
    for turn in turns:
        total += 1
        if turn.get("oracle_moves"):
            available += 1
            followed += bool(turn.get("followed_oracle"))
    if not total:
        return {"turns": 0, "available": NAN, "followed": NAN, "rejected": NAN, "no_oracle": NAN}
    return {
        "turns": total,
        "available": available / total,
        "followed": followed / total,
        "rejected": (available - followed) / total,
        "no_oracle": (total - available) / total,
    }


def remove_rates(turns: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Table 10's rates over ``turns`` (see the module docstring)."""
    flags = [(bool(t.get("remove_prescribed")), bool(t.get("remove_attempted"))) for t in turns]
    if not flags:
        return {"turns": 0, "orc_remove": NAN, "att_remove": NAN, "gap": NAN}
    orc = sum(p for p, _ in flags) / len(flags)
    att = sum(a for _, a in flags) / len(flags)
    return {"turns": len(flags), "orc_remove": orc, "att_remove": att, "gap": att - orc}


def diagnostics_row(games: Iterable[Any], seats: Sequence[str] = DEFAULT_SEATS) -> dict[str, Any]:
    """λ over ``seats``, outcome and remove rates for finished games (``eval.logs.GameLog``), turns pooled."""
    turns = [t for game in games for t in game.turns]
    return {
        "lambda": credit_lambda(turns, seats),
        "outcomes": outcome_rates(turns),
        "removes": remove_rates(turns),
    }


def _num(value: float, signed: bool = False) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def lambda_headers(seats: Sequence[str] = DEFAULT_SEATS) -> list[str]:
    """The λ table's headers: one λ column per seat."""
    return ["Run", *(f"λ_{seat}" for seat in seats), "λ-std", "Filtered", "Total", "Oracle", "Orc%", "Deg%"]

OUTCOME_HEADERS = ["Run", "Turns", "Oracle available", "Oracle followed", "Oracle rejected", "No oracle"]
REMOVE_HEADERS = ["Run", "Orc_Remove", "Att_Remove", "Gap"]


def diagnostic_tables(results: Sequence[Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """Report tables (title, headers, rows) of λ, outcome rates and remove rates, one row per result."""
    lam, out, rem = [], [], []
    seats = seated(results) or DEFAULT_SEATS
    for result in results:
        row = diagnostics_row(result.games, result.seats)
        c, o, r = row["lambda"], row["outcomes"], row["removes"]
        lam.append([result.label, *(_num(c.get(f"lambda_{s}", NAN)) for s in seats), _num(c["lambda_std"]),
                    str(c["filtered"]), str(c["total"]), str(c["oracle"]), _num(c["oracle_rate"]),
                    _num(c["degenerate_rate"])])
        out.append([result.label, str(o["turns"]), _num(o["available"]), _num(o["followed"]),
                    _num(o["rejected"]), _num(o["no_oracle"])])
        rem.append([result.label, _num(r["orc_remove"]), _num(r["att_remove"]), _num(r["gap"], signed=True)])
    return [
        (
            "Credit λ (Table 9): the builder's FOLLOWED shares on oracle-correct turns",
            lambda_headers(seats),
            lam,
        ),
        ("Outcome rates (Figure 7: fraction of turns)", OUTCOME_HEADERS, out),
        ("Remove rates (Table 10: fraction of turns)", REMOVE_HEADERS, rem),
    ]
