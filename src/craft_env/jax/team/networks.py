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

A director network shared among seats has a leading seat axis of 1;
one per seat has a leading axis of ``seats`` (``init_stack``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

NEG = -1e9


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
    h = jnp.tanh(x @ params["h1"]["w"] + params["h1"]["b"])
    h = jnp.tanh(h @ params["h2"]["w"] + params["h2"]["b"])
    out = h @ params["out"]["w"] + params["out"]["b"]
    if "wide" in params:
        out = out + wide_scale * (x @ params["wide"])
    return out


def _seat_matmul(x: jnp.ndarray, weight: jnp.ndarray) -> jnp.ndarray:
    """``x (..., seats, F)`` times per-seat weights ``(1 or seats, F, H)`` (size 1: shared by all seats).

    A shared weight is one plain matrix product; per-seat weights contract seat by seat (``einsum``),
    never broadcasting the weights over the batch.
    """
    if weight.shape[0] == 1:
        return x @ weight[0]
    return jnp.einsum("...sf,sfh->...sh", x, weight)


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
