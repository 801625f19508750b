"""The log reader's line decoder (``models.jsonl.loads_line``) reads every line exactly as ``json.loads`` does.

``loads_line`` hands strict JSON to orjson for speed and everything orjson
would refuse or read differently (non-strict tokens, lone surrogates, deep
nesting, integers beyond 64 bits) to ``json``; these tests hold it to the
standard library's values, types and errors.
"""

from __future__ import annotations

import gc
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from craft_env.models.jsonl import collection_paused, loads_line, read_jsonl


def _same(a, b) -> bool:
    """Equal values of equal types all the way down (NaN equal to NaN, -0.0 apart from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _decoded(raw: bytes):
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        return type(error)


def _read(raw: bytes):
    try:
        return loads_line(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        return type(error)


VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@given(VALUES)
def test_any_value_json_writes_reads_back_the_same(value):
    for raw in (json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")):
        assert _same(_read(raw), _decoded(raw))


@pytest.mark.parametrize(
    "raw",
    [
        b'{"seed": 5285543663005213430}',  # 19 digits: read by json
        b'{"a": 123456789012345678901234567890}',  # orjson would make this a float
        b'{"a": -9223372036854775809}',
        b'{"a": 18446744073709551615}',
        b'{"a": 1e400, "b": -1e400}',
        b'{"a": NaN, "b": Infinity, "c": -Infinity}',
        b'{"a": "\\ud800"}',  # a lone surrogate
        b'{"a": "\xff"}',  # not UTF-8
        b'{"a": 1, "a": 2, "b": 3}',  # the last of duplicate keys, in first-seen order
        b'{"a": 0.1, "b": 5e-324, "c": -0.0, "d": 1E5, "e": 0.000123456789012345678}',
        b"[" * 5000 + b"]" * 5000,  # deeper than orjson reads
        b'{"a": 1} x',
        b'{"a": 1',  # a torn line
        b" \t{}\r\n",
    ],
)
def test_lines_orjson_refuses_or_reads_differently_read_as_json_reads_them(raw):
    assert _same(_read(raw), _decoded(raw))


def test_read_jsonl_skips_torn_lines_and_keeps_big_integers(tmp_path, caplog):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"seed": 123456789012345678901}\n\n  \n{"torn": \n[1, 2]\n{"a": NaN}\n')
    records = list(read_jsonl(path))
    assert records[0] == {"seed": 123456789012345678901} and isinstance(records[0]["seed"], int)
    assert len(records) == 2 and math.isnan(records[1]["a"])  # the list is not an object: skipped
    assert "log.jsonl:4: skipping a torn or invalid line" in caplog.text


def test_collection_pause_restores_the_collector_as_it_found_it():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves the outer one in force
    assert gc.isenabled()
    with pytest.raises(KeyError), collection_paused():
        raise KeyError("x")
    assert gc.isenabled()
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()  # a collector that was off stays off
    finally:
        gc.enable()
