"""The team's policies as pure functions of observations: what acts in training and in evaluation alike.

Every input is the agent's observation with the *memory* appended: the
intents of the last ``memory`` turns, every seat's (``push_memory``), so a
director knows what it and the others said before and a builder what it
was asked before. The evaluation plays the same functions on
``vector_env`` (``team.evaluate``), so the memory is built from
observations only: the builder observation's block of this turn's intents.

Fixed seats: the *listener* builder plays the move the first director (in
seat order here; speaking order on ``vector_env``) asked for when it is
legal, else a uniformly random legal move; scripted directors come from
the game (``TurnGame.scripted``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from craft_env.core.observation import VIEW_CHANNELS
from craft_env.core.views import DEFAULT_SEATS
from craft_env.jax.team import networks as nets
from craft_env.jax.team.config import TeamConfig
from craft_env.jax.team.scripted import scripted_intents, walls_of

LISTENER_BONUS = 30.0


class Shapes(NamedTuple):
    """What the networks need to know about the game (static under ``jit``)."""

    seats: int
    num_intents: int
    num_actions: int
    noop: int
    director_dim: int
    builder_dim: int
    state_dim: int
    intents_offset: int

    @property
    def memory_width(self) -> int:
        return self.seats * self.num_intents


def shapes_of(game) -> Shapes:
    return Shapes(len(game.seats), game.num_intents, game.num_actions, game.noop, game.director_dim,
                  game.builder_dim, game.state_dim, game.intents_offset)


def init_params(key, shapes: Shapes, cfg: TeamConfig) -> dict:
    """Every network of the team (unused ones too, so every config has the same pytree layout)."""
    memory = cfg.memory * shapes.memory_width
    copies = 1 if cfg.share_directors else shapes.seats
    fd, fb = director_width(shapes, cfg), shapes.builder_dim + memory + shapes.num_actions
    keys = jax.random.split(key, 4)
    builder = nets.init_mlp(keys[1], fb, cfg.hidden, shapes.num_actions, 0.01, wide=True)
    listening = jnp.eye(shapes.num_actions) * (cfg.prior / cfg.wide_scale)  # heard move -> its logit
    builder["wide"] = builder["wide"].at[-shapes.num_actions:].set(listening)
    director = nets.init_stack(keys[0], copies, fd, cfg.hidden, shapes.num_intents, 0.01, wide=True)
    speaking = jnp.asarray(literal_speaker(shapes, fd)) * (cfg.speaker_prior / cfg.wide_scale)
    director["wide"] = director["wide"] + speaking[None]
    director["out"]["b"] = director["out"]["b"].at[:, 0].set(cfg.speaker_prior / 2)  # the no-op, when nothing fits
    if cfg.script_prior:  # the scripted intent's row -> that intent's logit
        saying = jnp.eye(shapes.num_intents) * (cfg.script_prior / cfg.wide_scale)
        director["wide"] = director["wide"].at[:, fd - shapes.num_intents:].set(saying)
    params = {"director": director, "builder": builder}
    if cfg.critic == "central":
        params["critic"] = nets.init_mlp(keys[2], shapes.state_dim + memory + 1, cfg.hidden, 1, 1.0, False)
    else:
        params["director_critic"] = nets.init_stack(keys[2], copies, fd, cfg.hidden, 1, 1.0, wide=False)
        params["builder_critic"] = nets.init_mlp(keys[3], fb, cfg.hidden, 1, 1.0, wide=False)
    return params


def director_width(shapes: Shapes, cfg: TeamConfig) -> int:
    """The width of a director's input: its observation, the memory and (``script_prior``) the scripted
    intent's one-hot."""
    script = shapes.num_intents if cfg.script_prior else 0
    return shapes.director_dim + cfg.memory * shapes.memory_width + script


def board_size(shapes: Shapes) -> tuple[int, int] | None:
    """``(n, height)`` of the game's layout (``core.intents``, ``core.observation``), or None for another
    layout (the mock game of the tests)."""
    cells_layers = (shapes.num_intents - 1) // 16  # n * height
    n = shapes.intents_offset // max(cells_layers * 15, 1)
    if n < 1 or cells_layers % n or shapes.intents_offset != n * cells_layers * 15:
        return None
    return n, cells_layers // n


def literal_speaker(shapes: Shapes, width: int) -> np.ndarray:
    """float32 ``(width, I)``: the literal speaker's linear map from a director's input to its intents.

    The wall view's one-hot of colour ``c`` at slot ``p``, layer ``l`` (``core.observation``: right after
    the board) points to "place small ``c`` at ``p``, ``l``"; a wide one half to "place large ``c`` along
    the wall" from ``p`` and half from ``p - 1`` (the neighbour's view decides which is the block's left
    slot). Intent ids: ``core.intents``.
    """
    out = np.zeros((width, shapes.num_intents), np.float32)
    size = board_size(shapes)
    if size is None:
        return out  # not the game's layout (the mock game of the tests): no literal start
    n, height = size
    cells_layers = n * height
    for p in range(n):
        for level in range(height):
            view = shapes.intents_offset + (p * height + level) * VIEW_CHANNELS
            for colour in range(5):
                out[view + 1 + 2 * colour, 1 + (p * height + level) * 5 + colour] = 1.0
                for left in (p, p - 1):
                    if 0 <= left < n - 1:
                        out[view + 2 + 2 * colour, 1 + 5 * cells_layers + ((left * height + level) * 2) * 5 + colour] += 0.5
    return out


def spoken_block(shapes: Shapes, builder_obs: jnp.ndarray) -> jnp.ndarray:
    """This turn's intents, one-hot per seat, from the builder's observation: ``(..., seats * I)``."""
    start = shapes.intents_offset
    return builder_obs[..., start:start + shapes.memory_width]


def push_memory(memory: jnp.ndarray, spoken: jnp.ndarray, done: jnp.ndarray) -> jnp.ndarray:
    """The memory after a turn: ``spoken`` first, the oldest turn dropped; all zeros after an episode ends.

    ``memory``: ``(..., K, W)``; ``spoken``: ``(..., W)``; ``done``: ``(...)``.
    """
    if memory.shape[-2] == 0:
        return memory
    shifted = jnp.concatenate([spoken[..., None, :], memory[..., :-1, :]], axis=-2)
    return jnp.where(done[..., None, None], 0.0, shifted)


def memory_rows(shapes: Shapes, memory: jnp.ndarray,
                offset: int) -> tuple[jnp.ndarray, jnp.ndarray, int]:
    """The memory as one-hot rows of a weight matrix whose memory block starts at row ``offset``.

    ``memory (..., K, seats * I)`` holds one one-hot (or nothing) per turn and seat (``push_memory`` of
    ``spoken_block``s); returns ``rows`` (int32) and ``on`` (their values), ``(..., K * seats)`` each, for
    ``networks.Inputs``, and the first row after the memory block.
    """
    turns = memory.shape[-2]
    blocks = memory.reshape(*memory.shape[:-1], shapes.seats, shapes.num_intents)
    said = jnp.argmax(blocks, axis=-1)
    on = jnp.take_along_axis(blocks, said[..., None], axis=-1)[..., 0]
    base = (offset + np.arange(turns)[:, None] * shapes.memory_width
            + np.arange(shapes.seats)[None, :] * shapes.num_intents)
    lead = memory.shape[:-2]
    end = offset + turns * shapes.memory_width
    return (base + said).reshape(*lead, -1).astype(jnp.int32), on.reshape(*lead, -1), end


def director_inputs(shapes: Shapes, obs: jnp.ndarray, memory: jnp.ndarray,
                    script: jnp.ndarray | None = None) -> nets.Inputs:
    """``obs (..., seats, Dd)`` with the memory appended to every seat's row (as one-hot rows), and, when
    given, each seat's scripted intent ``script (..., seats)`` as one more one-hot row after it
    (``TeamConfig.script_prior``)."""
    rows, on, end = memory_rows(shapes, memory, obs.shape[-1])
    lead = obs.shape[:-1]
    rows = jnp.broadcast_to(rows[..., None, :], (*lead, rows.shape[-1]))
    on = jnp.broadcast_to(on[..., None, :], (*lead, on.shape[-1]))
    if script is not None:
        rows = jnp.concatenate([rows, (end + script[..., None]).astype(jnp.int32)], -1)
        on = jnp.concatenate([on, jnp.ones((*lead, 1), on.dtype)], -1)
    return nets.Inputs(obs, rows, on)


def scripted_from_observations(shapes: Shapes, obs: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """int32 ``(E, seats)``: the scripted directors' intents (``team.scripted``) from a batch of their
    observations ``(E, seats, Dd)`` and masks, for the game's layout with the default seats (the
    evaluation's ``vector_env``)."""
    size = board_size(shapes)
    if size is None:
        raise ValueError("script_prior: the scripted intents need the game's own observation layout")
    n, height = size
    walls = walls_of(DEFAULT_SEATS[:shapes.seats], n)
    return jax.vmap(lambda o, m: scripted_intents(o, m, walls, n, height))(obs, mask)


def builder_inputs(shapes: Shapes, obs: jnp.ndarray, memory: jnp.ndarray, heard: jnp.ndarray) -> nets.Inputs:
    """The builder's observation, the memory and the moves this turn's intents name (``heard_moves``).

    As a dense array that is ``[obs, memory (flat), heard.sum(-2)]``; the memory and the heard moves are
    one-hot rows here (two seats naming one move set its row twice, as the sum does).
    """
    rows, on, heard_offset = memory_rows(shapes, memory, obs.shape[-1])
    heard_rows = (heard_offset + jnp.argmax(heard, axis=-1)).astype(jnp.int32)
    return nets.Inputs(obs, jnp.concatenate([rows, heard_rows], -1),
                       jnp.concatenate([on, heard.max(-1)], -1))


def director_logits(params: dict, cfg: TeamConfig, x: nets.Inputs, mask: jnp.ndarray) -> jnp.ndarray:
    return jnp.where(mask > 0, nets.seat_mlp(params["director"], x, cfg.wide_scale), nets.NEG)


def heard_moves(shapes: Shapes, meaning: jnp.ndarray, builder_obs: jnp.ndarray) -> jnp.ndarray:
    """``(..., seats, A)``: one-hot of the move each seat's intent names this turn (zero for the no-op)."""
    spoken = spoken_block(shapes, builder_obs).reshape(*builder_obs.shape[:-1], shapes.seats, -1)
    intent = jnp.argmax(spoken, axis=-1)
    action = meaning[jnp.arange(shapes.seats), intent]
    said = (intent > 0) & (action >= 0) & (spoken.sum(-1) > 0)
    return jax.nn.one_hot(jnp.where(said, action, 0), shapes.num_actions) * said[..., None]


def builder_logits(params: dict, cfg: TeamConfig, x: nets.Inputs, mask: jnp.ndarray) -> jnp.ndarray:
    return jnp.where(mask > 0, nets.mlp(params["builder"], x, cfg.wide_scale), nets.NEG)


def listener_logits(heard: jnp.ndarray, mask: jnp.ndarray) -> jnp.ndarray:
    """The listener: the first seat's legal named move, else uniform over legal moves."""
    usable = heard * (mask[..., None, :] > 0)
    any_seat = usable.max(-1)  # (..., seats)
    first = jnp.argmax(any_seat, axis=-1)
    chosen = jnp.take_along_axis(usable, first[..., None, None], axis=-2)[..., 0, :]
    return jnp.where(mask > 0, LISTENER_BONUS * chosen, nets.NEG)


def central_value(params: dict, shapes: Shapes, world: jnp.ndarray, memory: jnp.ndarray,
                  phase: float) -> jnp.ndarray:
    """The central critic on ``[world, memory (flat), phase]`` (the memory and the flag as one-hot rows)."""
    rows, on, flag_row = memory_rows(shapes, memory, world.shape[-1])
    lead = world.shape[:-1]
    rows = jnp.concatenate([rows, jnp.full((*lead, 1), flag_row, jnp.int32)], -1)
    on = jnp.concatenate([on, jnp.full((*lead, 1), phase, world.dtype)], -1)
    return nets.value(params["critic"], nets.Inputs(world, rows, on))


def director_values(params: dict, cfg: TeamConfig, shapes: Shapes, x: nets.Inputs, world: jnp.ndarray,
                    memory: jnp.ndarray) -> jnp.ndarray:
    """``(..., seats)``: each director's value (the central critic gives every seat the team's)."""
    if cfg.critic == "central":
        v = central_value(params, shapes, world, memory, 0.0)
        return jnp.broadcast_to(v[..., None], nets.lead_shape(x))
    return nets.seat_mlp(params["director_critic"], x)[..., 0]


def builder_value(params: dict, cfg: TeamConfig, shapes: Shapes, x: nets.Inputs, world: jnp.ndarray,
                  memory: jnp.ndarray) -> jnp.ndarray:
    if cfg.critic == "central":
        return central_value(params, shapes, world, memory, 1.0)
    return nets.value(params["builder_critic"], x)


def training_builder_mask(shapes: Shapes, cfg: TeamConfig, mask: jnp.ndarray) -> jnp.ndarray:
    """The builder's mask while training: without the pass when ``mask_pass`` and another move is legal."""
    if not cfg.mask_pass:
        return mask
    without = mask.at[..., shapes.noop].set(jnp.zeros((), mask.dtype))  # bool or int8: no cast (JAX warns)
    return jnp.where(without.sum(-1, keepdims=True) > 0, without, mask)


def meaning_array(game) -> jnp.ndarray:
    return jnp.asarray(np.asarray(game.meaning), jnp.int32)
