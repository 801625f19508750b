"""``core.records`` and ``core.game.kernel_records``: the game's records packed for calls from Python."""

from __future__ import annotations

import numpy as np
import pytest

from craft_env.core import game as kernels
from craft_env.core.records import KernelRecord
from craft_env.envs.config import EnvConfig
from craft_env.envs.game import CraftGame


def _records():
    game = CraftGame(EnvConfig())
    return game.kernel_config, game.episode


def test_packed_records_hold_the_same_arrays():
    config, episode = _records()
    packed_config, packed_episode = kernels.kernel_records(config, episode)
    assert isinstance(packed_config, KernelRecord) and isinstance(packed_episode, KernelRecord)
    episode.info["seed"][0] = 7
    kernels.reset_episode(packed_config, packed_episode, 0)
    # The kernel wrote through the packed record into the named tuple's own arrays.
    assert episode.info["turn"][0] == 0
    assert episode.targets[0].any()
    assert episode.director_masks[0].any() and episode.builder_mask[0].any()


def test_a_field_of_the_wrong_type_is_named():
    config, episode = _records()
    with pytest.raises(TypeError, match=r"Config\.static: expected .*int16.*got .*int64"):
        kernels.kernel_records(config._replace(static=config.static.astype(np.int64)), episode)
    with pytest.raises(TypeError, match=r"Episode\.boards"):
        kernels.kernel_records(config, episode._replace(boards=np.asfortranarray(episode.boards[:, :, :2])))
    with pytest.raises(TypeError, match=r"Config\.walls: expected .*readonly"):
        kernels.kernel_records(config._replace(walls=config.walls.copy()), episode)


def test_every_field_has_a_numba_type():
    assert list(kernels.Config._fields) == list(kernels.CONFIG_FIELDS)
    assert list(kernels.Episode._fields) == list(kernels.EPISODE_FIELDS)
