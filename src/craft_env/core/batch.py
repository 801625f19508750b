"""The vector env's drivers: ``core.game``'s row kernels looped over a batch of episodes.

The vector env (``craft_env.envs.vector``) holds a ``game.Config`` and a
``game.Episode`` of ``B`` rows and makes one numba call per phase; each
driver here is a loop over the rows calling the same kernels that play
``parallel_env()`` (so both play exactly the same rules and randomness).
Only the builder phase, the expensive one, has a ``prange`` driver, used
from ``PARALLEL_MIN_BATCH["builder"]`` episodes, on one thread too: its
rows run faster than the serial loop's (measured from 8 episodes on, 20-45%
less time per row on one thread; ``docs/rl.md``, Speed), and below 8 the
microseconds a parallel region costs to start outweigh that.

Observations are kept up to date incrementally by the row kernels; nothing
allocates per episode (``tests/test_batch.py`` counts allocations).

A note for prange drivers: numba makes the prange index unsigned; a row
kernel called with it compiles a second time, for ``uint64``, with its
whole call tree. The drivers cast it back to int64 first. And they name
the packed records (``game.named``) before the loop: a prange body's
arrays then carry no reference counts (why its rows beat the serial
loop's even on one thread), where a packed record's one count would be
updated by every row of every thread (two threads ran slower than one).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from craft_env.core.game import (
    RESULT_CANDIDATES,
    RESULT_COMPLETED,
    RESULT_REWARD,
    Config,
    Episode,
    begin_turn_row,
    builder_row,
    named,
    reset_row,
    speak_slots,
)
from craft_env.core.observation import fill_state, played_fraction
from craft_env.core.random import STREAM_SAMPLE, STREAM_VECTOR_EPISODE, derive_seed, draw
from craft_env.core.rules import OK
from craft_env.core.scripted import scripted_intent

# Smallest batch that runs the prange driver (measured on 2 cores; see benchmarks/bench_vector.py).
PARALLEL_MIN_BATCH = {"legal": 128, "optimal": 128, "scores": 128, "builder": 8}
#: Kernels whose prange driver beats the serial one even when numba runs one thread (measured).
PARALLEL_ON_ONE_THREAD = frozenset({"builder"})


def use_parallel(name: str, batch: int) -> bool:
    """Whether a batch of ``batch`` rows runs the prange driver of kernel ``name``."""
    if batch < PARALLEL_MIN_BATCH[name]:
        return False
    return name in PARALLEL_ON_ONE_THREAD or numba.get_num_threads() > 1


@njit(cache=True)
def _start_episode(c, e, b):
    """Start episode ``info[b].episode`` of env ``b``, seeded from the env's stream."""
    info = e.info[b]
    info.seed = derive_seed(info.env_seed, STREAM_VECTOR_EPISODE, info.episode)
    reset_row(c, e, b)


@njit(cache=True)
def game_reset(config, episode):
    """Start every env's episode ``info[:].episode`` (serial: called once per ``reset``)."""
    c, e = named(config, episode)
    for b in range(e.boards.shape[0]):
        _start_episode(c, e, b)


@njit(cache=True)
def game_directors(config, episode, intents, legal):
    """The director phase: in every env, each speaking slot's seat says ``intents[b, seat]``.

    An intent outside the seat's mask is the no-op; ``legal[b, seat]``
    records whether what it said was allowed (True for a seat that held no
    slot this turn).
    """
    c, e = named(config, episode)
    for b in range(e.spoken.shape[0]):
        speak_slots(e.director_masks[b], e.spoken[b], e.order[b], intents[b], c.num_intents, e.director_obs[b],
                    e.builder_obs[b], legal[b])


@njit(cache=True)
def game_states(config, episode, out):
    """Every env's global state (``observation.fill_state``) into ``out`` (B, S)."""
    c, e = named(config, episode)
    for b in range(e.boards.shape[0]):
        fraction = played_fraction(e.info[b].turn, c.max_turns)
        fill_state(e.boards[b], e.targets[b], c.n, e.spoken[b], c.num_intents, fraction, out[b])


@njit(cache=True)
def game_scripted(config, episode, out):
    """Every env's scripted directors' intents (``scripted.scripted_intent``) into ``out`` (B, seats)."""
    c, e = named(config, episode)
    for b in range(e.boards.shape[0]):
        for s in range(c.walls.shape[0]):
            out[b, s] = scripted_intent(e.boards[b], e.targets[b], c.n, c.walls[s], e.director_masks[b, s])


@njit(cache=True)
def _builder_step(c, e, b, action, rewards, terminations, truncations, result):
    """The builder's move in env ``b`` (``game.builder_row``), then its next turn or its next episode."""
    out = result[b]
    info = e.info[b]
    info.step_seed = info.seed
    info.step_episode = info.episode
    # A typed (not literal) OK: a literal argument would compile builder_row a second time.
    done = builder_row(c, e, b, action, np.int64(OK), out)
    terminated = out[RESULT_COMPLETED] != 0.0
    rewards[b] = out[RESULT_REWARD]
    terminations[b] = terminated
    truncations[b] = done and not terminated
    if done:
        info.episode += 1
        _start_episode(c, e, b)
    else:
        begin_turn_row(c, e, b)
        out[RESULT_CANDIDATES] = info.num_candidates


@njit(cache=True)
def game_builder_serial(config, episode, actions, rewards, terminations, truncations, result):
    """The builder phase for every env (serial driver)."""
    c, e = named(config, episode)
    for b in range(actions.shape[0]):
        _builder_step(c, e, b, actions[b], rewards, terminations, truncations, result)


@njit(cache=True, parallel=True)
def game_builder_parallel(config, episode, actions, rewards, terminations, truncations, result):
    """The builder phase for every env (prange driver)."""
    # Named here, not by ``named``: numba's prange lowering must see each named tuple built in this function.
    c = Config(*config.values)
    e = Episode(*episode.values)
    for i in prange(actions.shape[0]):
        # prange indices are unsigned: cast, so the row kernel is the serial driver's compiled one.
        b = np.int64(i)
        _builder_step(c, e, b, actions[b], rewards, terminations, truncations, result)


def builder_driver(batch: int):
    """The builder phase's driver for ``batch`` rows: serial, or ``prange`` (``PARALLEL_MIN_BATCH["builder"]``)."""
    return game_builder_parallel if use_parallel("builder", batch) else game_builder_serial


@njit(cache=True)
def _sample_serial(masks, seed, out):
    for b in range(masks.shape[0]):
        mask = masks[b]
        count = 0
        for a in range(mask.shape[0]):
            if mask[a]:
                count += 1
        if count == 0:
            out[b] = -1
            continue
        state = np.uint64(derive_seed(seed, STREAM_SAMPLE, b))
        state, r = draw(state, count)
        for a in range(mask.shape[0]):
            if mask[a]:
                if r == 0:
                    out[b] = a
                    break
                r -= 1


def sample_masks(masks: np.ndarray, seed: int, out: np.ndarray | None = None) -> np.ndarray:
    """One uniformly random set position per row of ``masks`` (``-1`` for an all-zero row).

    Row ``b`` draws from the stream ``derive_seed(seed, STREAM_SAMPLE, b)``:
    a random policy for a whole batch in one call (change ``seed`` per step).
    """
    masks = np.ascontiguousarray(masks)
    if out is None:
        out = np.empty(masks.shape[0], np.int64)
    _sample_serial(masks.reshape(masks.shape[0], -1), np.int64(seed & ((1 << 63) - 1)), out)
    return out
