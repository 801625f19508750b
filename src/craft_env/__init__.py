"""craft_env: the CRAFT benchmark as fast, exact, reproducible software.

Three directors each see one private wall of a target 3D block structure and
must talk a builder into building it. ``import craft_env`` is light: the
PettingZoo environments load on first use and litellm only where a language
model is called.

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
from typing import Any

from craft_env.core import metrics, oracle, views
from craft_env.core.board import IllegalMoveError, Structure
from craft_env.core.generator import generate_structure
from craft_env.core.moves import Move
from craft_env.datasets import load_eval_set, load_structures, save_structures

__version__ = "0.1.0"

_LAZY = {
    "env": ("craft_env.envs.craft", "env"),
    "raw_env": ("craft_env.envs.craft", "raw_env"),
    "parallel_env": ("craft_env.envs.craft", "parallel_env"),
    "vector_env": ("craft_env.envs.vector", "vector_env"),
    "text_env": ("craft_env.train.text_env", "text_env"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'craft_env' has no attribute {name!r}")


__all__ = [
    "IllegalMoveError",
    "Move",
    "Structure",
    "generate_structure",
    "load_eval_set",
    "load_structures",
    "metrics",
    "oracle",
    "save_structures",
    "views",
    *_LAZY,
]
