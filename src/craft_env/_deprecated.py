"""Old import paths kept for one release: each warns once and hands on the module that now owns the name.

``alias_module`` makes an old module path *be* the new module (the same object
in ``sys.modules``), so ``import old`` and ``from old import name`` keep
working after a move, with a ``DeprecationWarning`` that names the new path.
"""

from __future__ import annotations

import importlib
import sys
import warnings


def alias_module(old: str, new: str) -> None:
    """Warn that ``old`` moved to ``new`` and make ``sys.modules[old]`` the module ``new``."""
    warnings.warn(f"{old} is deprecated; import {new} instead", DeprecationWarning, stacklevel=3)
    sys.modules[old] = importlib.import_module(new)
