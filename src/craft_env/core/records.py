"""Records packed for the trip from Python into a kernel: one numba structref each.

``core.game``'s two records (``Config``, ``Episode``) are named tuples, in
Python and inside the kernels. A kernel called from Python with them as
tuples pays numba's unboxing of every array on every call (about 30 ns
each, 40 arrays: a third of a PettingZoo env's builder turn); a structref
is one pointer to unbox. So each record's owner packs it once
(``core.game.kernel_records``) into a ``KernelRecord``, a structref whose
one field ``values`` is the record's tuple (the same arrays, no copy).
The kernels Python calls take packed records and name them on their first
line (``core.game.named``); every kernel they call takes the named tuples,
whose fields cost nothing to read (a structref's cost a reference count
each, which threads sharing it in a prange loop fight over).

A record's field types are fixed (``CONFIG_FIELDS``, ``EPISODE_FIELDS``
in ``core.game``) so that each kernel compiles once and is cached;
``check_fields`` names a field whose value does not have its type instead
of letting numba fail inside the packing kernel. A ``KernelRecord`` is
opaque in Python: read the named tuple it was packed from.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numba import from_dtype, typeof, types
from numba.np.numpy_support import as_dtype
from numba.experimental import structref


@structref.register
class KernelRecordType(types.StructRef):
    """The numba type of a packed record (one field, ``values``: the record's tuple)."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(kind)) for name, kind in fields)


class KernelRecord(structref.StructRefProxy):
    """A packed record, as Python holds it between kernel calls (opaque: read its named tuple)."""


structref.define_boxing(KernelRecordType, KernelRecord)

INT64 = types.int64
FLOAT64 = types.float64


def writeable(dtype: Any, ndim: int) -> types.Array:
    """The type of a writeable C-contiguous array field."""
    return types.Array(from_dtype(np.dtype(dtype)), ndim, "C")


def frozen(dtype: Any, ndim: int) -> types.Array:
    """The type of a read-only C-contiguous array field."""
    return types.Array(from_dtype(np.dtype(dtype)), ndim, "C", readonly=True)


def record_type(fields: dict[str, types.Type]) -> KernelRecordType:
    """The structref type of a packed record with ``fields`` (name -> type, in order)."""
    return KernelRecordType([("values", types.Tuple(list(fields.values())))])


@functools.lru_cache(maxsize=None)
def _array_traits(expected: types.Type) -> tuple[np.dtype, int, bool] | None:
    """``(dtype, ndim, writeable)`` of the arrays whose numba type is ``expected`` (an aligned
    C-contiguous array type), or None for any other type."""
    if not isinstance(expected, types.Array) or expected.layout != "C" or not expected.aligned:
        return None
    return as_dtype(expected.dtype), expected.ndim, expected.mutable


def _has_traits(value: Any, traits: tuple[np.dtype, int, bool] | None) -> bool:
    """Whether ``value`` is a plain ndarray numba would type as the array type of ``traits``
    (``typeof`` reads the same dtype, ndim, C-contiguity, alignment and writeability; it costs
    several times more, for every field of every game set up)."""
    if traits is None or type(value) is not np.ndarray:
        return False
    flags = value.flags
    return (value.dtype == traits[0] and value.ndim == traits[1] and flags.c_contiguous and flags.aligned
            and flags.writeable == traits[2])


def check_fields(name: str, record: tuple, fields: dict[str, types.Type]) -> None:
    """Raise ``TypeError`` naming the first field of ``record`` whose value does not have its type."""
    for (field, expected), value in zip(fields.items(), record, strict=True):
        if _has_traits(value, _array_traits(expected)):
            continue
        actual = typeof(value)
        if actual != expected:
            raise TypeError(f"{name}.{field}: expected {expected}, got {actual}")
