"""The JIT plumbing of the kernels: saying when numba is about to compile, and calling a compiled entry directly.

The envs (``envs.game.CraftGame``, ``envs.vector``) call the game kernels of
``core.game`` through these two helpers; they live beside the kernels so the
core owns everything numba-specific (``core.caches`` drops stale caches,
``craft_env.precompile`` fills them ahead of time). The command line also
loads numba's CPU target through ``load_target_lean``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from numba import typeof
from numba.core.registry import cpu_target

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


#: Modules numba's CPU target imports only for integrations no kernel here uses (``load_target_lean``).
UNUSED_BY_KERNELS = ("scipy.linalg", "cffi")


def load_target_lean() -> bool:
    """Load numba's CPU target now, without importing ``UNUSED_BY_KERNELS``; whether it did.

    Before numba runs or loads its first kernel it loads its registry of
    implementations, about 0.35 CPU s, and part of that is two optional
    integrations: ``numba.np.arraymath`` imports ``scipy.linalg`` only to
    decide whether ``np.correlate`` and ``np.convolve`` may call BLAS (about
    0.2 s), and numba's cffi support builds a ``cffi.FFI`` (about 0.04 s).
    No kernel here calls either (nor any linear algebra). With those
    modules hidden while the registry loads, the two functions take numba's
    plain loop and numba's cffi support is off for the process; ``np.dot``
    and ``np.linalg`` still import scipy when a kernel uses them, and
    ``import scipy.linalg`` or ``import cffi`` work as before once this
    returns. For the command line's own process only (``cli.main`` called
    without arguments, as the console script calls it): in a program of
    someone else's, their own kernels could need what is left out, and
    another thread's import of those modules would fail while they are
    hidden. Does nothing when the target is already loaded.
    """
    if "numba.np.arraymath" in sys.modules:
        return False
    hidden = [name for name in UNUSED_BY_KERNELS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # an import of it fails at once
    try:
        cpu_target.target_context.refresh()
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]
    return True
