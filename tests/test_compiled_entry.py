"""``core.jit.compiled_entry``: the env's hot kernels called without numba's per-call typing, same results."""

from __future__ import annotations

import numpy as np

from craft_env.core import game as kernels
from craft_env.envs.config import EnvConfig
from craft_env.core.jit import compiled_entry
from craft_env.envs.game import CraftGame


def test_the_hot_kernels_are_called_directly():
    game = CraftGame(EnvConfig())
    for entry in (game._reset_episode, game._speak, game._play_builder):
        assert entry is not kernels.play_builder and not hasattr(entry, "py_func")


def test_a_plain_function_is_its_own_entry():
    def plain(x):
        return x

    assert compiled_entry(plain, (1,)) is plain


def test_direct_and_dispatched_turns_agree():
    direct, dispatched = CraftGame(EnvConfig(oracle_n=3)), CraftGame(EnvConfig(oracle_n=3))
    dispatched._reset_episode, dispatched._speak, dispatched._play_builder = (
        kernels.reset_episode, kernels.speak, kernels.play_builder
    )
    for game in (direct, dispatched):
        game.reset(5)
    for _ in range(25):
        if direct.done:
            break
        for seat in direct.order_list:
            intent = int(np.flatnonzero(direct.director_masks[seat])[-1])
            assert direct.speak(seat, intent) == dispatched.speak(seat, intent)
        action = int(np.flatnonzero(direct.builder_mask)[0])
        assert direct.build(action) == dispatched.build(action)
        assert np.array_equal(direct.builder_obs, dispatched.builder_obs)
        assert np.array_equal(direct.director_obs, dispatched.director_obs)
    assert np.array_equal(direct.board, dispatched.board)
