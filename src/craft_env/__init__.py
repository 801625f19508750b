"""craft_env: the CRAFT benchmark as fast, exact, reproducible software.

Three directors each see one private wall of a target 3D block structure and
must talk a builder into building it. ``import craft_env`` is light: every
public name loads its module on first use (numba and the kernels with the
first of the game's nouns, the PettingZoo environments with the first env),
and litellm only where a language model is called. The command line
(``craft_env.cli``) starts from a package that has imported nothing heavy
yet, so its process decides how its own imports are collected (``cli.main``).

Public nouns: ``Structure``, ``Move``, ``IllegalMoveError``,
``generate_structure``, ``load_structures``, ``save_structures``,
``load_eval_set``; modules ``craft_env.oracle``, ``craft_env.metrics``,
``craft_env.views``; environments ``env()``, ``raw_env``, ``parallel_env()``, ``vector_env()``, and
``text_env()`` (one seat played by text, for LLM training: ``docs/train.md``).

The three modules are defined once, in ``craft_env.core``: ``craft_env.oracle``
*is* ``craft_env.core.oracle`` (the same module object, registered under both
names so ``import craft_env.core.oracle`` and ``from craft_env.core.oracle import ...``
work), and likewise ``metrics`` and ``views``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the nouns as a reader's tools see them; at run time they load on first use
    from craft_env.core import metrics, oracle, views
    from craft_env.core.board import IllegalMoveError, Structure
    from craft_env.core.generator import generate_structure
    from craft_env.core.moves import Move
    from craft_env.datasets import load_eval_set, load_structures, save_structures

__version__ = "0.1.0"

#: Each public name: the module that defines it and its name there (None: the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "IllegalMoveError": ("craft_env.core.board", "IllegalMoveError"),
    "Move": ("craft_env.core.moves", "Move"),
    "Structure": ("craft_env.core.board", "Structure"),
    "generate_structure": ("craft_env.core.generator", "generate_structure"),
    "load_eval_set": ("craft_env.datasets", "load_eval_set"),
    "load_structures": ("craft_env.datasets", "load_structures"),
    "save_structures": ("craft_env.datasets", "save_structures"),
    "metrics": ("craft_env.core.metrics", None),
    "oracle": ("craft_env.core.oracle", None),
    "views": ("craft_env.core.views", None),
    "env": ("craft_env.envs.craft", "env"),
    "raw_env": ("craft_env.envs.craft", "raw_env"),
    "parallel_env": ("craft_env.envs.craft", "parallel_env"),
    "vector_env": ("craft_env.envs.vector", "vector_env"),
    "text_env": ("craft_env.train.text_env", "text_env"),
}
#: Subpackages ``import craft_env`` used to import with the nouns: still attributes of the package.
_SUBPACKAGES = ("core", "datasets")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = importlib.import_module(module)
        if attribute is not None:
            value = getattr(value, attribute)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'craft_env' has no attribute {name!r}")
    globals()[name] = value  # the next use finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBPACKAGES})


__all__ = [
    "IllegalMoveError",
    "Move",
    "Structure",
    "env",
    "generate_structure",
    "load_eval_set",
    "load_structures",
    "metrics",
    "oracle",
    "parallel_env",
    "raw_env",
    "save_structures",
    "text_env",
    "vector_env",
    "views",
]
