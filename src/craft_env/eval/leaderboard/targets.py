"""Which dataset an entry was played on, its targets, and each target's complexity label.

Rows are ranked together only on the same dataset, so a dataset needs one
name however it was given: a bundled set keeps its name (``paper``,
``craft``), a structures file holding exactly a bundled set's structures
(``craft-env import`` writes one) gets that set's name, and any other
file is named by its file name and the first 12 hex digits of the SHA-256
of its structures, so two different files of the same name never meet.

A structure's complexity label is the one its dataset gives it, else the
tier its size implies (``Structure.tier``; docs/rules.md): the paper's 20
are 7 simple, 8 medium and 5 complex.
"""

from __future__ import annotations

import hashlib
import logging
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from craft_env.core.board import Structure
from craft_env.datasets import EVAL_SETS, dumps_structures, load_dataset

log = logging.getLogger(__name__)

COMPLEXITIES = ("simple", "medium", "complex")
#: A run whose config names no dataset played ours (``results.unbuildable_targets`` reads it the same way).
DEFAULT_DATASET = "craft"


def complexity_of(structure: Structure) -> str:
    """The structure's complexity label: its dataset's, else the tier of its size."""
    return structure.complexity or structure.tier


def structure_key(structure_id: str | None, index: int) -> str:
    """The name a structure goes by on the board: its id, or ``#<index>`` for a target without one."""
    return structure_id if structure_id else f"#{index}"


@cache
def _bundled_texts() -> dict[str, str]:
    return {name: dumps_structures(load_dataset(name)) for name in EVAL_SETS}


@lru_cache(maxsize=64)
def _identify(dataset: str) -> tuple[str, tuple[Structure, ...] | None]:
    if dataset in EVAL_SETS:
        return dataset, tuple(load_dataset(dataset))
    try:
        structures = load_dataset(dataset)
    except (OSError, ValueError) as error:
        log.warning("leaderboard: dataset %s unreadable (%s); its targets are not shown", dataset, error)
        return Path(dataset).name, None
    text = dumps_structures(structures)
    for name, bundled in _bundled_texts().items():
        if text == bundled:
            return name, tuple(structures)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"{Path(dataset).name} (sha256 {digest})", tuple(structures)


#: Targets of every dataset identified so far, by board name (filled by ``identify_dataset``).
_SEEN: dict[str, tuple[Structure, ...]] = {}


def identify_dataset(dataset: Any) -> tuple[str, list[Structure] | None]:
    """The dataset's board name and its targets (``None`` when they cannot be read)."""
    name, structures = _identify(str(dataset) if dataset else DEFAULT_DATASET)
    if structures is not None:
        _SEEN.setdefault(name, structures)
    return name, None if structures is None else list(structures)


def bundled_targets(name: str) -> list[Structure] | None:
    """The targets of a bundled set by its board name (``None`` for any other name)."""
    return identify_dataset(name)[1] if name in EVAL_SETS else None


def targets_named(name: str) -> list[Structure] | None:
    """The targets of a dataset by its board name: a bundled set, or a file identified earlier."""
    if name in EVAL_SETS:
        return bundled_targets(name)
    found = _SEEN.get(name)
    return None if found is None else list(found)


def paper_log_dataset(keys: list[tuple[int, str | None]]) -> str:
    """The dataset of replayed paper logs, from their games' ``(index, structure id)``.

    ``paper`` when every id is the bundled paper set's id at that index
    (the paper's logs name no dataset file we could read), else ``paper logs``.
    """
    paper = bundled_targets("paper") or []
    if keys and all(0 <= i < len(paper) and paper[i].id == sid for i, sid in keys):
        return "paper"
    return "paper logs"
