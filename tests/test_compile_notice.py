"""The envs say they are compiling the kernels when numba has no cache for the game kernels yet."""

from __future__ import annotations

import logging
from types import SimpleNamespace

from craft_env.core import game as kernels
from craft_env.core import jit
from craft_env.envs import game as envgame


def fake_kernel(index: dict) -> SimpleNamespace:
    return SimpleNamespace(_cache=SimpleNamespace(_cache_file=SimpleNamespace(_load_index=lambda: index)))


def test_a_kernel_without_cache_is_announced_once(monkeypatch, caplog):
    monkeypatch.setattr(jit, "_announced", False)
    with caplog.at_level(logging.WARNING, logger="craft_env"):
        assert jit.announce_cold_kernels(fake_kernel({("sig",): "entry"}), fake_kernel({}))
        assert not jit.announce_cold_kernels(fake_kernel({}))
    assert [r.getMessage() for r in caplog.records] == [jit.COMPILING_MESSAGE]


def test_warm_kernels_are_not_announced(monkeypatch, caplog):
    game = envgame.CraftGame(envgame.EnvConfig())
    game.reset(1)  # compiles (or loads) the kernels and saves their caches
    game.build(game.noop)
    caplog.clear()  # the game's construction may have announced a cold cache itself
    monkeypatch.setattr(jit, "_announced", False)
    with caplog.at_level(logging.WARNING, logger="craft_env"):
        assert not jit.announce_cold_kernels(kernels.play_builder, kernels.reset_row)
    assert not caplog.records
