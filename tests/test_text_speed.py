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

    from craft_env.agents.decode import decode_board, decode_visible

    n, height = size
    vector = (np.random.default_rng(seed).random(n * n * height * 15 + 40) < density).astype(np.float32)
    got = decode_board(vector, n, height)
    expected = _decode_board_per_cell(vector, n, height)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)
    # the last reading is kept: a second read (after the caller wrote into its copy) is the same
    got[:] = 7
    again, visible = decode_board(vector, n, height), decode_visible(vector, n, height)
    assert np.array_equal(again, expected)
    assert visible.dtype == np.int8 and np.array_equal(visible, np.where(expected < 0, 0, expected))


def test_kept_readings_follow_the_observation():
    """Alternating boards and seats never give another observation's reading (the kept ones are keyed)."""
    import numpy as np

    import craft_env
    from craft_env.agents.decode import decode_board
    from craft_env.agents.scripted import ScriptedDirector

    env = craft_env.env(structure=craft_env.load_eval_set("paper")[4])
    env.reset(seed=3)
    u = env.unwrapped
    seen, director = [], ScriptedDirector()
    for agent in env.agent_iter():
        if len(seen) == 12:
            break
        obs = env.observe(agent)
        seen.append((agent, obs))
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    n, height = u.game.n, u.game.height
    spoken = [(u.seat_of[agent], obs) for agent, obs in seen if agent != "builder"]
    # what a new director chooses for each observation, then one director across seats and turns, backwards
    fresh = [ScriptedDirector().choose(obs["observation"], obs["action_mask"], seat, n, height)
             for seat, obs in spoken]
    reused = []
    for seat, obs in spoken[::-1]:
        reused.append(director.choose(obs["observation"], obs["action_mask"], seat, n, height))
        assert np.array_equal(decode_board(obs["observation"], n, height),
                              _decode_board_per_cell(obs["observation"], n, height))
    assert reused[::-1] == fresh


def test_array_types_are_numbas():
    """``core.records``' remembered types equal ``numba.typeof`` for arrays of every layout and flag."""
    import numpy as np
    from numba import typeof

    from craft_env.core.records import _typeof

    base = np.arange(24, dtype=np.int16).reshape(4, 6)
    frozen = base.copy()
    frozen.flags.writeable = False
    info = np.zeros(2, dtype=[("seed", "<i8"), ("turn", "<i8")])
    values = [base, base.T, base[:, ::2], frozen, base.astype(np.float32), np.zeros((1, 3, 2), np.int8),
              info, info[:1], info[::2], np.zeros(0, np.int64), 0, 7, -(2**31) + 1, 2**31, 2**62, -(2**40),
              0.5, float("inf"), np.int64(3), True]
    for value in values:
        assert _typeof(value) == typeof(value), value


def test_layout_dict_is_to_dicts_structure_and_spans():
    import craft_env

    for target in craft_env.load_eval_set("paper") + craft_env.load_eval_set("craft"):
        whole = target.to_dict(views=False)
        assert target.layout_dict() == {"structure": whole["structure"], "spans": whole["spans"]}


def test_kept_kernel_config_is_config_records():
    """``envs.game.kernel_config`` (shared per setting) equals a fresh ``core.game.config_record``."""
    import numpy as np

    import craft_env
    from craft_env.core import game as kernels
    from craft_env.core.intents import intent_table
    from craft_env.envs.config import make_config
    from craft_env.envs.game import kernel_config

    paper = craft_env.load_eval_set("paper")
    for options in ({"structure": paper[2]}, {"structure": paper[5], "oracle_n": 3, "protocol": "paper"},
                    {}, {"n": 4, "height": 2, "director_sees": "walls", "max_turns": 9}):
        config = make_config(**options)
        for _ in range(2):
            got = kernel_config(config)
            intents = [intent_table(seat, config.n, config.height) for seat in config.seats]
            fixed = None if config.structure is None else config.structure.array[None]
            expected = kernels.config_record(
                config.seats, intents, config.n, config.height, config.max_turns, config.oracle_n,
                config.reward, config.start, config.director_order, config.director_sees, config.protocol, fixed,
            )
            for name, a, b in zip(expected._fields, got, expected):
                assert type(a) is type(b) and np.array_equal(a, b), name
                if isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and a.flags.writeable == b.flags.writeable, name
