"""Structure files in the paper's JSON format, and the two bundled evaluation sets.

Two sets ship in the package, by name (``load_eval_set(name)``):

* ``"paper"`` (``data/paper_structures.json``): the paper's 20 evaluation
  structures, data from the MIT-licensed csu-signal/CRAFT repository (see
  ``NOTICE``); ``craft-env run`` plays it by default;
* ``"craft"`` (``data/eval_set.json``): 20 structures from our own
  generator, the default of ``load_eval_set()`` and of the env's
  ``structure=<int>``, so an index keeps its meaning.

The ``craft`` set: seeds are tried in order from ``EVAL_BASE_SEED`` and a
structure is kept while its tier still has room, until the paper's mix of
7 simple, 8 medium and 5 complex is reached. ``build_eval_set()`` regenerates it, and
a test checks the shipped file equals that output.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from importlib import resources
from pathlib import Path
from typing import Iterable

from craft_env.core.board import Structure
from craft_env.core.generator import generate_structure

EVAL_BASE_SEED = 20260326
EVAL_TIER_COUNTS = {"simple": 7, "medium": 8, "complex": 5}


def load_structures(path: str | os.PathLike) -> list[Structure]:
    """Read a JSON list of paper-format entries (a single entry is accepted too).

    Every error names the file: unreadable bytes, bad JSON (with its line),
    nesting too deep to read, no entries, an empty target, or an entry that
    is not a structure (with its index).
    """
    name = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except UnicodeDecodeError as error:
        raise ValueError(f"{name}: not UTF-8 text (byte {error.start})") from None
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise ValueError(f"{name}: not valid JSON ({error.msg} at {where})") from None
    except RecursionError:
        raise ValueError(f"{name}: JSON nested too deeply to be a structure file") from None
    except OSError as error:
        raise ValueError(f"{name}: cannot read ({error.strerror or error})") from None
    entries = data if isinstance(data, list) else [data]
    if not entries:
        raise ValueError(f"{name}: holds no structures (an empty list)")
    structures = []
    for index, entry in enumerate(entries):
        try:
            structure = Structure.from_dict(entry)
        except (ValueError, RecursionError) as error:
            raise ValueError(f"{name} entry {index}: {error}") from None
        if not structure.array.any():
            raise ValueError(f"{name} entry {index}: structure: the target is empty (no blocks to build)")
        structures.append(structure)
    return structures


def dumps_structures(structures: Iterable[Structure]) -> str:
    """The JSON text ``save_structures`` writes (stable: sorted by nothing, indented, newline-terminated)."""
    return json.dumps([s.to_dict() for s in structures], indent=2) + "\n"


def structures_sha256(structures: Iterable[Structure]) -> str:
    """The SHA-256 of ``dumps_structures``: the same structures give the same digest, whatever file held them."""
    return hashlib.sha256(dumps_structures(structures).encode("utf-8")).hexdigest()


def save_structures(structures: Iterable[Structure], path: str | os.PathLike) -> None:
    """Write structures as a JSON list in the paper's format."""
    Path(path).write_text(dumps_structures(structures), encoding="utf-8")


def generate_structures(count: int, seed: int = 0, n: int = 3, height: int = 3) -> list[Structure]:
    """``count`` structures from seeds ``seed, seed+1, ...``, ids ``structure_001`` ..."""
    return [
        generate_structure(seed + k, n, height, id=f"structure_{k + 1:03d}") for k in range(count)
    ]


def build_eval_set() -> list[Structure]:
    """Regenerate the bundled evaluation set (see the module docstring)."""
    room = dict(EVAL_TIER_COUNTS)
    chosen: list[Structure] = []
    seed = EVAL_BASE_SEED
    while any(room.values()):
        candidate = generate_structure(seed)
        if room[candidate.complexity] > 0:
            room[candidate.complexity] -= 1
            chosen.append(candidate)
        seed += 1
    return [
        Structure(s.array, s.n, id=f"eval_{k + 1:03d}", complexity=s.complexity, _trusted=True)
        for k, s in enumerate(chosen)
    ]


EVAL_SETS = {"craft": "eval_set.json", "paper": "paper_structures.json"}


def eval_set_path(name: str = "craft"):
    """The packaged file of the bundled set ``name`` (``"craft"`` or ``"paper"``)."""
    if name not in EVAL_SETS:
        raise ValueError(f"dataset: expected one of {', '.join(EVAL_SETS)} or a file, got {name!r}")
    return resources.files("craft_env") / "data" / EVAL_SETS[name]


def load_eval_set(name: str = "craft") -> list[Structure]:
    """A bundled evaluation set: ``"craft"`` (ours, 7 simple, 8 medium, 5 complex) or ``"paper"``.

    A new list each call; the (immutable) structures are read once per process.
    """
    return list(_bundled(name))


@functools.lru_cache(maxsize=None)
def _bundled(name: str) -> tuple[Structure, ...]:
    with resources.as_file(eval_set_path(name)) as path:
        return tuple(load_structures(path))


def load_dataset(dataset: str | os.PathLike) -> list[Structure]:
    """A bundled set by name (``"paper"``, ``"craft"``) or a structures file by path."""
    if isinstance(dataset, str) and dataset in EVAL_SETS:
        return load_eval_set(dataset)
    return load_structures(dataset)
