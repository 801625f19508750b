"""The team's networks in plain JAX: masked policies and critics as MLPs with a linear path.

Parameters are nested dicts of arrays (a pytree), so optax, ``vmap`` over
seeds and ``numpy.savez`` all take them as they are.

* **Policy** (``policy_logits``): a two-layer tanh MLP plus a *linear path*
  from the input to the logits ("wide and deep", as in
  ``examples/builder_ppo.py``): what an intent means is, per seat and
  intent, one builder move, a lookup table that a linear map learns at once
  and a deep one only slowly. The linear path is multiplied by
  ``wide_scale``; under Adam that multiplies its effective learning rate by
  the same factor (Adam's steps do not depend on the gradient's scale), so
  one optimiser serves both paths. Illegal actions get ``-1e9``.
* **Critic** (``value``): a two-layer tanh MLP to one number.
* **Inputs.** An input is a plain array, or an ``Inputs``: a dense head and
  one-hot rows (the memory of earlier turns, the heard moves, a phase flag).
  The rows are multiplied in by gathering the weight rows they name
  instead of a matrix product over mostly zeros; that halves the work of
  the team's update, whose inputs are half memory. Both forms give the
  same numbers (up to the order of float sums) with the same parameters.

A director network shared among seats has a leading seat axis of 1;
one per seat has a leading axis of ``seats`` (``init_stack``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

NEG = -1e9


class Inputs(NamedTuple):
    """An input ``x`` given as ``dense`` (its first features) and one-hot ``rows`` (the rest).

    ``x @ W == dense @ W[:F] + sum_r on[..., r] * W[rows[..., r]]`` with ``F = dense.shape[-1]``;
    ``rows`` are absolute row indices of ``W`` (at or past ``F``), ``on`` their values (0 for a row
    that is not set). Every leading axis is shared by the three fields.
    """

    dense: jnp.ndarray
    rows: jnp.ndarray
    on: jnp.ndarray

    @property
    def lead_shape(self) -> tuple[int, ...]:
        return self.dense.shape[:-1]


def lead_shape(x) -> tuple[int, ...]:
    """The leading (batch) axes of an input, plain or ``Inputs``."""
    return x.lead_shape if isinstance(x, Inputs) else x.shape[:-1]


def _matmul(x, weight: jnp.ndarray) -> jnp.ndarray:
    """``x @ weight`` for a plain input or an ``Inputs``."""
    if not isinstance(x, Inputs):
        return x @ weight
    picked = jnp.take(weight, x.rows, axis=0)  # (..., R, H)
    return x.dense @ weight[:x.dense.shape[-1]] + jnp.einsum("...r,...rh->...h", x.on, picked)


def _dense(key, fan_in: int, fan_out: int, scale: float) -> dict:
    """A layer with normal weights of standard deviation ``scale / sqrt(fan_in)`` and zero bias.

    (The orthogonal initialisation PPO code often uses needs a QR decomposition per matrix, whose
    compilation took half a minute on CPU for no measurable gain here.)
    """
    weight = jax.random.normal(key, (fan_in, fan_out), jnp.float32) * (scale / jnp.sqrt(fan_in))
    return {"w": weight, "b": jnp.zeros((fan_out,), jnp.float32)}


def init_mlp(key, fan_in: int, hidden: int, out: int, out_scale: float, wide: bool) -> dict:
    """A two-layer MLP head (and, when ``wide``, a zero-initialised linear path)."""
    k1, k2, k3 = jax.random.split(key, 3)
    params = {
        "h1": _dense(k1, fan_in, hidden, jnp.sqrt(2.0)),
        "h2": _dense(k2, hidden, hidden, jnp.sqrt(2.0)),
        "out": _dense(k3, hidden, out, out_scale),
    }
    if wide:
        params["wide"] = jnp.zeros((fan_in, out), jnp.float32)
    return params


def init_stack(key, copies: int, *args, **kwargs) -> dict:
    """``copies`` independent MLPs stacked on a leading axis (one per director seat, or 1 shared)."""
    return jax.vmap(lambda k: init_mlp(k, *args, **kwargs))(jax.random.split(key, copies))


def mlp(params: dict, x: jnp.ndarray, wide_scale: float = 0.0) -> jnp.ndarray:
    """The MLP's output for input ``x`` (any leading axes)."""
    h = jnp.tanh(_matmul(x, params["h1"]["w"]) + params["h1"]["b"])
    h = jnp.tanh(h @ params["h2"]["w"] + params["h2"]["b"])
    out = h @ params["out"]["w"] + params["out"]["b"]
    if "wide" in params:
        out = out + wide_scale * _matmul(x, params["wide"])
    return out


def _seat_matmul(x, weight: jnp.ndarray) -> jnp.ndarray:
    """``x (..., seats, F)`` times per-seat weights ``(1 or seats, F, H)`` (size 1: shared by all seats).

    A shared weight is one plain matrix product; per-seat weights contract seat by seat (``einsum``),
    never broadcasting the weights over the batch; an ``Inputs``' rows are gathered from each seat's own
    weights.
    """
    if weight.shape[0] == 1:
        return _matmul(x, weight[0])
    if not isinstance(x, Inputs):
        return jnp.einsum("...sf,sfh->...sh", x, weight)
    seats = jnp.arange(weight.shape[0])[:, None]
    picked = weight[seats, x.rows]  # (..., seats, R, H)
    dense = jnp.einsum("...sf,sfh->...sh", x.dense, weight[:, :x.dense.shape[-1]])
    return dense + jnp.einsum("...sr,...srh->...sh", x.on, picked)


def _seat_linear(layer: dict, x: jnp.ndarray) -> jnp.ndarray:
    return _seat_matmul(x, layer["w"]) + layer["b"]


def seat_mlp(params: dict, x: jnp.ndarray, wide_scale: float = 0.0) -> jnp.ndarray:
    """``mlp`` for inputs with a seat axis before the features, with stacked (``init_stack``) params."""
    h = jnp.tanh(_seat_linear(params["h1"], x))
    h = jnp.tanh(_seat_linear(params["h2"], h))
    out = _seat_linear(params["out"], h)
    if "wide" in params:
        out = out + wide_scale * _seat_matmul(x, params["wide"])
    return out


def policy_logits(params: dict, x: jnp.ndarray, mask: jnp.ndarray, wide_scale: float) -> jnp.ndarray:
    """Masked logits: the MLP's, with ``NEG`` where ``mask`` is 0."""
    return jnp.where(mask > 0, mlp(params, x, wide_scale), NEG)


def value(params: dict, x: jnp.ndarray) -> jnp.ndarray:
    return mlp(params, x)[..., 0]


def log_prob_entropy(logits: jnp.ndarray, action: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """The log-probability of ``action`` and the entropy of the masked categorical."""
    logp_all = jax.nn.log_softmax(logits, axis=-1)
    logp = jnp.take_along_axis(logp_all, action[..., None], axis=-1)[..., 0]
    probs = jnp.exp(logp_all)
    entropy = -jnp.sum(jnp.where(logits > NEG / 2, probs * logp_all, 0.0), axis=-1)
    return logp, entropy
