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

from typing import Any

import numpy as np
from numba import from_dtype, typeof, types
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


_ARRAY_TYPES: dict[tuple, types.Type] = {}
_SMALL_INT, _FLOAT = typeof(0), typeof(0.0)


def _typeof(value: Any) -> types.Type:
    """``numba.typeof(value)``, remembered for plain arrays and read directly for small ints and floats.

    An ndarray's numba type depends only on its dtype, ndim, contiguity,
    alignment and writeability, so it is looked up by those (``typeof``
    costs several times more, and a game's setup checks some 40 fields);
    ints under 32 bits and floats have one type each.
    """
    kind = type(value)
    if kind is np.ndarray:
        flags = value.flags
        key = (value.dtype, value.ndim, flags.c_contiguous, flags.f_contiguous, flags.aligned, flags.writeable)
        found = _ARRAY_TYPES.get(key)
        if found is None:
            found = _ARRAY_TYPES[key] = typeof(value)
        return found
    if kind is int and -(2**31) < value < 2**31:
        return _SMALL_INT
    if kind is float:
        return _FLOAT
    return typeof(value)


def check_fields(name: str, record: tuple, fields: dict[str, types.Type]) -> None:
    """Raise ``TypeError`` naming the first field of ``record`` whose value does not have its type."""
    for (field, expected), value in zip(fields.items(), record, strict=True):
        actual = _typeof(value)
        if actual != expected:
            raise TypeError(f"{name}.{field}: expected {expected}, got {actual}")
