"""The JIT plumbing of the kernels: saying when numba is about to compile, and calling a compiled entry directly.

The envs (``envs.game.CraftGame``, ``envs.vector``) call the game kernels of
``core.game`` through these two helpers; they live beside the kernels so the
core owns everything numba-specific (``core.caches`` drops stale caches,
``craft_env.precompile`` fills them ahead of time). The command line also
loads cached kernels without numba's registry (``load_caches_lean``).
"""

from __future__ import annotations

import logging
from typing import Any

import numba.cpython.hashing  # noqa: F401  # its import adds the hash secret's symbols (load_caches_lean)
from numba import typeof
from numba.core.caching import FunctionCache
from numba.core.registry import cpu_target
from numba.core.runtime import rtsys

#: Said once per process; unprefixed where nothing configured logging (Ray's worker logs), so it names itself.
COMPILING_MESSAGE = (
    "craft_env: compiling the numba kernels (first run on this machine or after an upgrade; "
    "`craft-env compile` does it ahead of time)"
)
_log = logging.getLogger("craft_env")
_announced = False
#: ``compiled_entry``'s answers by kernel and argument types.
_entries: dict[tuple[Any, tuple], Any] = {}


def announce_cold_kernels(*kernels_used) -> bool:
    """Say ``COMPILING_MESSAGE`` (a logging warning, so it reaches stderr) when a kernel has no cache yet.

    With no logging configured, Python's last-resort handler writes it to
    stderr: a terminal, or the log of a Ray worker (``worker-*.err``, also
    forwarded to the driver's console).

    Checked once per process, on the numba dispatchers ``kernels_used``
    (their on-disk cache index is empty, missing or stale: numba is about
    to compile). Returns whether it was said.
    """
    global _announced
    if _announced:
        return False
    _announced = True
    for kernel in kernels_used:
        try:
            cold = not kernel._cache._cache_file._load_index()
        except (AttributeError, OSError, EOFError, ValueError):  # other numba internals: say nothing
            return False
        if cold:
            _log.warning(COMPILING_MESSAGE)
            return True
    return False


def compiled_entry(kernel: Any, example_args: tuple) -> Any:
    """``kernel``'s compiled function for the types of ``example_args``, compiled (or loaded) now.

    A numba dispatcher works out the types of its arguments on every call;
    for the game's two records (about 40 arrays and numbers) that costs
    about as much as the turn itself. ``CraftGame`` passes the same record
    objects, the same row views and plain ints on every call, so it calls
    the compiled function directly. Only for such callers: the compiled
    function does not check what it is given. When numba does not expose
    it, this is ``kernel`` itself.
    """
    try:
        signature = tuple(typeof(arg) for arg in example_args)
        entry = _entries.get((kernel, signature))
        if entry is None:  # every game of a setting asks for the same entries: numba is asked once
            kernel.compile(signature)
            entry = _entries[(kernel, signature)] = kernel.overloads[signature].entry_point
        return entry
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        _log.debug("calling %s through its dispatcher: %s", getattr(kernel, "__name__", kernel), error)
        return kernel


def load_caches_lean() -> bool:
    """From now on in this process, numba loads a cached kernel without loading its registry first; whether it
    was set now.

    Before numba loads a cached kernel it loads its whole registry of
    implementations, the typing and lowering of everything a kernel could
    call (``BaseContext.refresh``: some 40 modules, about 0.1 CPU s, more
    with scipy, which ``numba.np.arraymath`` imports). Loading compiled code
    needs none of it: only numba's runtime (``rtsys``, which a kernel's
    arrays call) and the symbols numba adds when its registry loads (the
    hash secret, added by ``numba.cpython.hashing``, imported with this
    module); numba's own C helpers
    are there since the target was made, and a parallel kernel's cache
    brings its own start (``reload_init``). So this process's cached kernels
    on the CPU target skip the registry; a kernel that is not cached is
    compiled as before, and numba's compiler loads the whole registry then.
    For the command line's own process only (``cli.main`` called without
    arguments, as the console script calls it): its kernels are all ours,
    and numba is changed for the whole process. Does nothing where numba
    lacks what it replaces.
    """
    full = FunctionCache.load_overload
    needed = ("_load_overload", "_guard_against_spurious_io_errors")
    if getattr(full, "lean", False) or not all(hasattr(FunctionCache, name) for name in needed):
        return False
    cpu = cpu_target.target_context

    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        if target_context is not cpu:
            return full(self, sig, target_context)
        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    load_overload.lean = True  # type: ignore[attr-defined]
    FunctionCache.load_overload = load_overload
    return True
