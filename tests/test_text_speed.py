"""The text path gives the same bytes after its speed-ups (issue 33): logs, exported records, text-env chats.

``tests/data/speed_reference.json`` holds digests written before the
optimisation (``tests/speed_reference.py``); the run, the export and the
text environment's games are played again here and must match them all.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import speed_reference


@pytest.fixture(scope="module")
def reference() -> dict[str, str]:
    return json.loads(speed_reference.REFERENCE.read_text(encoding="utf-8"))


def test_offline_run_and_export_are_byte_identical(reference):
    got = speed_reference.run_digests()
    assert {name: value for name, value in got.items()} == {name: reference[name] for name in got}


def test_text_env_chats_rewards_and_verdicts_are_identical(reference):
    got = speed_reference.text_env_digests()
    assert got == {name: reference[name] for name in got}


def _redact_without_prefilter(value: str) -> str:
    """``Redactor.text``'s shapes applied unconditionally (what it did before it looked for their fixed parts)."""
    from craft_env.models import redact

    value = redact._SHAPES[0].sub(redact.REDACTED, value)
    value = redact._SHAPES[1].sub("Bearer " + redact.REDACTED, value)
    value = redact._SHAPES[2].sub(lambda m: m.group(1) + redact.REDACTED, value)
    if "://" in value:
        value = redact._URL_USERINFO.sub(lambda m: m.group(1) + redact.REDACTED + "@", value)
    return redact._SECRET_QUERY.sub(lambda m: m.group(1) + redact.REDACTED, value) if "=" in value else value


_PIECES = st.sampled_from(
    ["sk-", "SK-", "abcdefgh12", "Bearer ", "BEARER\t", "bEaReR ", "api_key", "API-KEY", "apikey", "\u212aey",
     "Ke\u0178", "\"", "'", ":", "=", " ", "x", "://u:p@h", "?token=", "\u0130", "\u017f", "ß", "é"]
)


@given(st.lists(_PIECES | st.text(max_size=6), max_size=14).map("".join))
def test_redaction_looks_for_fixed_parts_without_changing_what_it_redacts(text):
    from craft_env.models.redact import Redactor

    assert Redactor(environ={}).text(text) == _redact_without_prefilter(text)


_HASH_LOADS_NO_KERNEL = """
import sys
import numba.core.registry
from craft_env.datasets import load_eval_set, structures_sha256

digest = structures_sha256(load_eval_set("paper"))
loaded = sorted(
    f"{module.__name__}.{name}"
    for module in list(sys.modules.values())
    if getattr(module, "__name__", "").startswith("craft_env")
    for name, value in vars(module).items()
    if isinstance(value, numba.core.registry.CPUDispatcher) and value.signatures
)
print(digest, loaded)
"""


def test_hashing_a_dataset_loads_no_numba_kernel_and_keeps_its_digest():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _HASH_LOADS_NO_KERNEL], capture_output=True, text=True, check=True, timeout=300
    ).stdout.split(maxsplit=1)
    # the digest config.json recorded before the hash stopped loading kernels (a resume or merge compares it)
    assert out == ["79822e6e7a746604d10490b6220e6e32ba6ed89ee38d8c4107a284e2971e501e", "[]\n"]


def _decode_board_per_cell(vector, n: int, height: int):
    """``agents.decode.decode_board`` as it was written before it was vectorised: one cell and layer at a time."""
    import numpy as np

    from craft_env.core.encoding import large_value, small_value

    block = np.asarray(vector[: n * n * height * 15]).reshape(n * n, height, 15)
    out = np.full((n * n, height), -1, np.int16)
    for cell in range(n * n):
        for level in range(height):
            channels = block[cell, level]
            if channels[0] > 0.5:
                out[cell, level] = 0
                continue
            codes = np.flatnonzero(channels[1:11] > 0.5)
            if len(codes):
                colour, large = int(codes[0]) // 2, int(codes[0]) % 2 == 1
                directions = np.flatnonzero(channels[11:15] > 0.5)
                first = int(directions[0]) if len(directions) else 0
                out[cell, level] = large_value(colour, first) if large else small_value(colour)
    return out


@given(
    st.sampled_from([(3, 3), (4, 3), (5, 2)]),
    st.integers(0, 2**32 - 1),
    st.floats(0.0, 0.4),
)
def test_decode_board_reads_every_cell_as_the_per_cell_reading_does(size, seed, density):
    import numpy as np

    from craft_env.agents.decode import decode_board

    n, height = size
    vector = (np.random.default_rng(seed).random(n * n * height * 15 + 40) < density).astype(np.float32)
    got = decode_board(vector, n, height)
    expected = _decode_board_per_cell(vector, n, height)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
