"""The torch half of ``examples/train_builder.py``: policy, masked PPO, evaluation, saving and loading.

Imported by ``train_builder.py`` once the arguments are parsed, so that
``--help`` and the torch check work without torch installed.

A saved builder (``--save PATH``, ``save_builder``) is one ``torch.save``
file: the state_dict, the network's sizes, the layout of the observation it
reads (``observation_layout``: the vector env's name, board size, seats,
widths) and the training arguments. ``load_builder`` rebuilds the network
and refuses a file whose layout is not the one the game has now;
``greedy_policy`` turns it into the ``(observations, masks) -> actions``
callable that ``craft_env.jax.team.evaluate.play`` seats as a builder.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

import numpy as np
import torch
from torch import nn

import craft_env
from craft_env.core.batch import sample_masks
from craft_env.eval.results.stats import cluster_sem

#: What a saved builder file says it is, and the version of its layout (``save_builder``).
FILE_FORMAT = "craft_env train_builder.py builder"
FILE_VERSION = 1


class Builder(nn.Module):
    """An MLP policy and value over the builder's observation; illegal actions get no probability.

    The policy also has a linear path from the observation to the logits
    ("wide and deep"): what a director's intent means is, per seat and
    intent, one builder action, i.e. a lookup table, which a linear map
    learns directly and a deep one only slowly.
    """

    def __init__(self, obs_dim: int, num_actions: int, hidden: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.policy = nn.Linear(hidden, num_actions)
        self.wide = nn.Linear(obs_dim, num_actions, bias=False)
        nn.init.zeros_(self.wide.weight)
        self.value = nn.Linear(hidden, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.trunk(obs)
        logits = (self.policy(features) + self.wide(obs)).masked_fill(~mask, -1e9)
        return logits, self.value(features).squeeze(-1)


def learner_mask(action_mask: np.ndarray, noop: int) -> np.ndarray:
    """The mask the learned builder plays under: the env's builder mask without the no-op (a copy).

    The learner never passes (a board always has a legal move), otherwise
    "do nothing" is a safe local optimum that PPO finds long before it learns
    to listen. Training, this script's evaluation and ``greedy_policy`` all
    use it.
    """
    mask = action_mask.astype(bool)
    mask[:, noop] = False
    return mask


def builder_turn(env, obs) -> tuple[np.ndarray, np.ndarray]:
    """The scripted directors speak; return the builder's observation and its mask (``learner_mask``)."""
    obs, *_ = env.step_directors(env.scripted_intents())
    return obs["builder"]["observation"], learner_mask(obs["builder"]["action_mask"], env.noop)


def greedy_actions(model: Builder, observations: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The argmax of the masked logits: the trained builder's move in every evaluation."""
    with torch.no_grad():
        logits, _ = model(torch.from_numpy(np.array(observations, np.float32)), torch.from_numpy(mask))
    return logits.argmax(dim=1).numpy()


def observation_layout(env) -> dict:
    """What fixes the meaning of the builder observation's columns and of the action ids, for ``env``."""
    return {"env": env.metadata["name"], "protocol": env.config.protocol.name, "n": env.n,
            "height": env.height, "seats": list(env.seats), "num_intents": env.num_intents, "builder_dim": env.builder_dim,
            "num_actions": env.num_actions, "noop": env.noop, "max_turns": env.config.max_turns}


def save_builder(model: Builder, env, args: argparse.Namespace, path: str | os.PathLike) -> None:
    """Write ``model`` with what ``load_builder`` needs to rebuild it (module docstring) to one file."""
    torch.save({
        "format": FILE_FORMAT, "version": FILE_VERSION, "layout": observation_layout(env),
        "hidden": model.value.in_features, "training": dict(vars(args)), "state_dict": model.state_dict(),
    }, path)


def load_builder(path: str | os.PathLike) -> tuple[Builder, dict]:
    """The builder saved at ``path`` (in eval mode) and the file's other fields (``layout``, ``training``).

    Refuses a file of another format or version, and one whose observation
    layout differs from the default ``vector_env``'s (the evaluation's game),
    naming the field.
    """
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError) as error:
        raise ValueError(f"{path}: not a builder saved by examples/train_builder.py --save "
                         f"(torch.load: {type(error).__name__})") from None
    if not isinstance(saved, dict) or saved.get("format") != FILE_FORMAT:
        raise ValueError(f"{path}: not a builder saved by examples/train_builder.py --save")
    if saved.get("version") != FILE_VERSION:
        raise ValueError(f"{path}: file version {saved.get('version')!r}, this code reads {FILE_VERSION}")
    layout, now = saved["layout"], observation_layout(craft_env.vector_env(1))
    for key, value in now.items():
        if layout.get(key) != value:
            raise ValueError(f"{path}: saved for {key}={layout.get(key)!r}, the game has {key}={value!r}")
    model = Builder(layout["builder_dim"], layout["num_actions"], saved["hidden"])
    model.load_state_dict(saved["state_dict"])
    model.eval()
    return model, {key: value for key, value in saved.items() if key != "state_dict"}


def greedy_policy(model: Builder, noop: int):
    """``(observations, masks) -> actions`` on ``vector_env``'s builder arrays: ``greedy_actions`` under
    ``learner_mask``, as this script's evaluation plays it (``craft_env.jax.team.evaluate`` seats it)."""

    def builder(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return greedy_actions(model, observations, learner_mask(masks, noop))

    return builder


def train(args: argparse.Namespace) -> Builder:
    torch.manual_seed(args.seed)
    env = craft_env.vector_env(args.num_envs, reward=args.reward)
    obs, _ = env.reset(seed=args.seed)
    model = Builder(env.builder_dim, env.num_actions, args.hidden)
    deep = [p for name, p in model.named_parameters() if not name.startswith("wide.")]
    optimiser = torch.optim.Adam([
        {"params": deep, "lr": args.lr},
        {"params": model.wide.parameters(), "lr": args.wide_lr},
    ])
    B, T = args.num_envs, args.rollout
    buf_obs = torch.zeros(T, B, env.builder_dim)
    buf_mask = torch.zeros(T, B, env.num_actions, dtype=torch.bool)
    buf_act = torch.zeros(T, B, dtype=torch.long)
    buf_logp = torch.zeros(T, B)
    buf_val = torch.zeros(T + 1, B)
    buf_rew = torch.zeros(T, B)
    buf_done = torch.zeros(T, B)
    sampler = torch.Generator().manual_seed(args.seed)
    builder_obs, builder_mask = builder_turn(env, obs)
    finished_progress: list[float] = []
    started = time.perf_counter()
    update = 0
    print(f"training a builder on {B} envs x {T} turns per update (reward: {args.reward})")
    print(f"{'update':>6} {'samples':>9} {'minutes':>7} {'episodes':>8} {'progress':>8} {'completed':>9} "
          f"{'optimal':>7} {'entropy':>7}")
    while True:
        update += 1
        optimal_moves = 0.0
        with torch.no_grad():
            for t in range(T):
                o = torch.from_numpy(builder_obs.copy())
                m = torch.from_numpy(builder_mask)
                logits, value = model(o, m)
                dist = torch.distributions.Categorical(logits=logits)
                action = torch.multinomial(dist.probs, 1, generator=sampler).squeeze(1)
                buf_obs[t], buf_mask[t], buf_act[t] = o, m, action
                buf_logp[t], buf_val[t] = dist.log_prob(action), value
                obs, reward, terminated, truncated, info = env.step_builder(action.numpy())
                done = terminated | truncated
                buf_rew[t] = torch.from_numpy(reward.copy())
                buf_done[t] = torch.from_numpy(done.astype(np.float32))
                optimal_moves += float(info["optimal"].mean())
                finished_progress += info["progress"][done].tolist()
                builder_obs, builder_mask = builder_turn(env, obs)
            o = torch.from_numpy(builder_obs.copy())
            buf_val[T] = model(o, torch.from_numpy(builder_mask))[1]
            # Generalised advantage estimation; an episode's end cuts the bootstrap (the turn
            # fraction is in the observation, so truncation at max_turns is part of the state).
            advantages = torch.zeros(T, B)
            last = torch.zeros(B)
            for t in reversed(range(T)):
                alive = 1.0 - buf_done[t]
                delta = buf_rew[t] + args.gamma * buf_val[t + 1] * alive - buf_val[t]
                last = delta + args.gamma * args.lam * alive * last
                advantages[t] = last
            returns = advantages + buf_val[:T]
        flat = lambda x: x.reshape(T * B, *x.shape[2:])
        f_obs, f_mask, f_act, f_logp = flat(buf_obs), flat(buf_mask), flat(buf_act), flat(buf_logp)
        f_adv, f_ret = flat(advantages), flat(returns)
        f_adv = (f_adv - f_adv.mean()) / (f_adv.std() + 1e-8)
        entropy_sum, batches = 0.0, 0
        for _ in range(args.epochs):
            order = torch.randperm(T * B, generator=sampler)
            for start in range(0, T * B, args.minibatch):
                idx = order[start:start + args.minibatch]
                logits, value = model(f_obs[idx], f_mask[idx])
                dist = torch.distributions.Categorical(logits=logits)
                ratio = torch.exp(dist.log_prob(f_act[idx]) - f_logp[idx])
                adv = f_adv[idx]
                policy_loss = -torch.min(ratio * adv, ratio.clamp(1 - args.clip, 1 + args.clip) * adv).mean()
                value_loss = (value - f_ret[idx]).pow(2).mean()
                entropy = dist.entropy().mean()
                loss = policy_loss + 0.5 * value_loss - args.entropy * entropy
                optimiser.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                optimiser.step()
                entropy_sum += entropy.item()
                batches += 1
        minutes = (time.perf_counter() - started) / 60
        out_of_budget = (args.minutes is not None and minutes >= args.minutes) or (
            args.updates is not None and update >= args.updates
        )
        if update % args.log_every == 0 or update == 1 or out_of_budget:
            recent = finished_progress[-4 * B:]
            progress = np.mean(recent) if recent else float("nan")
            completed = np.mean(np.asarray(recent) >= 1.0) if recent else float("nan")
            print(f"{update:>6} {update * T * B:>9} {minutes:>7.2f} {len(finished_progress):>8} {progress:>8.3f} "
                  f"{completed:>9.1%} {optimal_moves / T:>7.1%} {entropy_sum / batches:>7.3f}", flush=True)
        if out_of_budget:
            return model


def listen(env, mask: np.ndarray) -> np.ndarray:
    """The hand-written listener: the move the first director (in speaking order) asked for, if legal.

    It translates each intent with the seat's intent table; when nobody asked
    for anything it can do, it plays a random legal move.
    """
    from craft_env.core.intents import intent_table

    meaning = np.stack([intent_table(seat, env.n, env.height).action for seat in ("D1", "D2", "D3")])
    spoken = env.spoken_intents.astype(np.int64)
    rows = np.arange(env.num_envs)
    actions = env.sample_actions(int(env.turns.sum()) + 7)
    chosen = np.zeros(env.num_envs, bool)
    for k in range(3):
        seat = env.director_orders[:, k]
        action = meaning[seat, spoken[rows, seat]]
        usable = ~chosen & (spoken[rows, seat] > 0) & (action >= 0)
        usable &= mask[rows, np.maximum(action, 0)]
        actions[usable] = action[usable]
        chosen |= usable
    return actions


def evaluate(builder: str, model: Builder | None, seeds: int, base_seed: int) -> dict[str, float]:
    """Play every bundled structure ``seeds`` times with the scripted directors; one episode per env.

    ``se`` is over the structures' means (``stats.cluster_sem``), ``se_games`` over the games."""
    structures = list(range(len(craft_env.load_eval_set())))
    env = craft_env.vector_env(len(structures) * seeds, structures=structures)
    obs, _ = env.reset(seed=base_seed)
    size = env.num_envs
    final = {name: np.full(size, np.nan) for name in ("progress", "completion", "turn")}
    finished = np.zeros(size, bool)
    rng = np.random.default_rng(base_seed)
    turn = 0
    while not finished.all():
        builder_obs, builder_mask = builder_turn(env, obs)
        if builder == "trained":
            actions = greedy_actions(model, builder_obs, builder_mask)
        elif builder == "random":
            actions = env.sample_actions(int(rng.integers(1 << 62)))
        elif builder == "listener":
            actions = listen(env, builder_mask)
        else:  # oracle: a uniformly random optimal move (all optimal moves are legal)
            actions = sample_masks(env.optimal_masks, int(rng.integers(1 << 62)))
        obs, _, terminated, truncated, info = env.step_builder(actions)
        turn += 1
        ended = (terminated | truncated) & ~finished
        for name, values in final.items():
            values[ended] = info[name][ended]
        finished |= ended
    progress = final["progress"]
    return {
        "progress": float(progress.mean()),
        "se": cluster_sem([float(x) for x in progress], [i % len(structures) for i in range(size)]),
        "se_games": float(progress.std(ddof=1) / np.sqrt(size)) if size > 1 else 0.0,
        "completion": float(final["completion"].mean()),
        "completed": float(np.mean(final["completion"] >= 1.0)),
        "turns": float(final["turn"].mean()),
        "games": size,
    }


def run(args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """Train, then evaluate the four builders on the bundled set; returns their results."""
    torch.set_num_threads(args.threads)
    model = train(args)
    model.eval()
    if args.save is not None:
        save_builder(model, craft_env.vector_env(1, reward=args.reward), args, args.save)
        print(f"saved the trained builder to {args.save}")
    print(f"\nbundled evaluation set: {len(craft_env.load_eval_set())} structures x {args.eval_seeds} seeds, "
          "scripted directors, no oracle condition")
    print(f"{'builder':<10} {'progress':>14} {'completion':>10} {'completed':>9} {'turns':>6}")
    results = {}
    for name in ("random", "listener", "trained", "oracle"):
        r = evaluate(name, model, args.eval_seeds, base_seed=10_000 + args.seed)
        results[name] = r
        print(f"{name:<10} {r['progress']:>7.3f} ± {r['se']:.3f} {r['completion']:>10.3f} {r['completed']:>9.1%} "
              f"{r['turns']:>6.1f}")
    return results

