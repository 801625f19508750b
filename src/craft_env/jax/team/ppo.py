"""Multi-agent PPO with the whole loop jitted: rollout (``lax.scan`` over turns), GAE, update.

One scan step is one turn of every env: the director phase (three
intents, sampled from the director policy or said by the scripted
directors) and the builder phase (a move, from the builder policy or the
listener). The team reward of the builder phase is every seat's reward for
that turn. Advantages are per role (GAE, ``gamma``, ``lam``); a director's
next value is the next turn's director value, and so is the builder's (the
expectation of the next builder value over the next intents), so both
roles bootstrap from one quantity. With ``critic="central"`` that value is
one critic on the world state (MAPPO), otherwise each role's own critic on
its observation (IPPO).

With ``imitate`` the scripted directors speak during the first updates and
the director network's policy term is its cross-entropy on their intents;
``script_pull`` keeps that cross-entropy, weighted, in the directors' loss
afterwards (``TeamConfig``; docs/rl.md, "Imitation start"). With
``script_prior`` the scripted intent is one more input of each director
(docs/rl.md, "Scripted start").

With ``director_credit="counterfactual"`` each turn also replays its
builder phase ``counterfactuals`` times per director: that director's
intent is replaced by one drawn afresh from its policy, the others' kept,
the builder's observation rebuilt by the game and its move drawn with the
same random key (the same Gumbel noise, so an intent that changes nothing
changes no move), and the move scored without being played
(``TurnGame.move_outcome``): its reward, plus ``gamma`` times the central
critic's value of the world after it (the memory with the replayed
intents) unless the episode would end. The mean of those is the
director's baseline, in place of the critic's value of the turn: its
advantage is the team's GAE advantage plus that value less the baseline,
and with ``gamma=0`` the turn's reward less the mean replayed reward. It is
the difference its own choice made (a counterfactual baseline, as COMA's,
with the game answering the what-if instead of a critic of joint actions).

``train_chunk`` runs ``chunk`` updates of one seed; ``Trainer`` ``vmap``s
it over seeds and ``jit``s it once, so the host only sees a chunk's
metrics (the learning curve) between calls.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

from craft_env.jax.team import networks as nets
from craft_env.jax.team import policy as pol
from craft_env.jax.team.config import TeamConfig


class Runner(NamedTuple):
    """Everything one seed's training carries from update to update."""

    params: dict
    opt_state: tuple
    env_state: object
    memory: jnp.ndarray
    key: jnp.ndarray
    update: jnp.ndarray


class Batch(NamedTuple):
    """One rollout, time-major ``(T, E, ...)``."""

    d_obs: jnp.ndarray
    d_mask: jnp.ndarray
    d_act: jnp.ndarray
    d_script: jnp.ndarray  # what the scripted directors say (zeros unless the config uses them)
    d_logp: jnp.ndarray
    d_val: jnp.ndarray
    d_base: jnp.ndarray  # (T, E, seats): the counterfactual baselines (zeros unless the credit uses them)
    b_obs: jnp.ndarray
    b_mask: jnp.ndarray
    b_heard: jnp.ndarray
    b_act: jnp.ndarray
    b_logp: jnp.ndarray
    b_val: jnp.ndarray
    world_d: jnp.ndarray
    world_b: jnp.ndarray
    memory: jnp.ndarray
    reward: jnp.ndarray
    done: jnp.ndarray
    progress: jnp.ndarray
    completion: jnp.ndarray


def optimiser(cfg: TeamConfig) -> optax.GradientTransformation:
    """Adam after clipping the global gradient norm; with ``director_lr`` or ``builder_lr`` that network has
    its own learning rate (one clip over every learning network still). ``builder_lr=0`` freezes the builder:
    its gradient is set to zero before the clip, so it neither moves nor shrinks the others' steps."""
    rates = {"director": cfg.director_lr, "builder": cfg.builder_lr}
    if all(rate is None for rate in rates.values()):
        return optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(cfg.lr, eps=1e-5))
    adams = {name: optax.set_to_zero() if rate == 0 else optax.adam(rate, eps=1e-5)
             for name, rate in rates.items() if rate is not None}
    adams["other"] = optax.adam(cfg.lr, eps=1e-5)

    def labels(params):
        return {name: name if name in adams else "other" for name in params}

    def frozen(params):
        return {name: name == "builder" for name in params}

    steps = [optax.clip_by_global_norm(cfg.max_grad_norm), optax.multi_transform(adams, labels)]
    if cfg.builder_lr == 0:  # dropped before the clip, not only after it
        steps.insert(0, optax.masked(optax.set_to_zero(), frozen))
    return optax.chain(*steps)


class Team:
    """A game, a config and the pure functions of one seed's training."""

    def __init__(self, game, cfg: TeamConfig) -> None:
        self.game, self.cfg = game, cfg
        self.shapes = pol.shapes_of(game)
        self.meaning = pol.meaning_array(game)
        self.tx = optimiser(cfg)
        self.v_reset = jax.vmap(game.reset)
        self.v_directors = jax.vmap(game.directors)
        self.v_step_directors = jax.vmap(game.step_directors)
        self.v_builder = jax.vmap(game.builder)
        self.v_step_builder = jax.vmap(game.step_builder)
        self.v_scripted = jax.vmap(game.scripted) if game.scripted is not None else None
        self.v_move_outcome = jax.vmap(game.move_outcome) if game.move_outcome is not None else None
        if cfg.director_credit == "counterfactual" and self.v_move_outcome is None:
            raise ValueError("director_credit: 'counterfactual' needs a game that scores a move without "
                             "playing it (TurnGame.move_outcome)")

    def init(self, key) -> Runner:
        cfg, shapes = self.cfg, self.shapes
        k_params, k_env, k_run = jax.random.split(key, 3)
        params = pol.init_params(k_params, shapes, cfg)
        env_state = self.v_reset(jax.random.split(k_env, cfg.num_envs))
        memory = jnp.zeros((cfg.num_envs, cfg.memory, shapes.memory_width), jnp.float32)
        return Runner(params, self.tx.init(params), env_state, memory, k_run, jnp.zeros((), jnp.int32))

    def restart(self, runner: Runner, networks: dict) -> Runner:
        """``runner`` with ``networks`` (``{name: parameters}``) in place of its own; a fresh optimiser."""
        params = {**runner.params, **networks}
        return runner._replace(params=params, opt_state=self.tx.init(params))

    # ------------------------------------------------------------------ acting

    def _scripted_intents(self, env_state) -> jnp.ndarray:
        if self.v_scripted is None:
            raise ValueError("directors: 'scripted' (or imitate, script_pull, script_prior > 0) needs a game "
                             "with scripted directors")
        return self.v_scripted(env_state).astype(jnp.int32)

    def _director_inputs(self, d_obs, memory, env_state):
        """``(the directors' inputs, the scripted intents or zeros)`` in ``env_state``: the scripted intents
        are computed where they speak, or where learned directors imitate, are pulled toward or read them
        (``TeamConfig`` allows those three only with learned directors)."""
        cfg = self.cfg
        if cfg.directors == "scripted" or cfg.imitate or cfg.script_pull or cfg.script_prior:
            script = self._scripted_intents(env_state)
        else:
            script = jnp.zeros(d_obs.shape[:-1], jnp.int32)
        shown = script if self.cfg.script_prior else None
        return pol.director_inputs(self.shapes, d_obs, memory, shown), script

    def _directors_act(self, params, key, d_obs, d_mask, world, memory, env_state, imitating):
        """``(intents, the scripted intents or zeros, log-probabilities, values, logits or None)`` of the
        director phase (no logits for scripted directors)."""
        cfg = self.cfg
        x, script = self._director_inputs(d_obs, memory, env_state)
        value = pol.director_values(params, cfg, self.shapes, x, world, memory)
        if cfg.directors == "scripted":
            return script, script, jnp.zeros(script.shape, jnp.float32), value, None
        logits = pol.director_logits(params, cfg, x, d_mask)
        intents = jax.random.categorical(key, logits)
        if cfg.imitate:
            intents = jnp.where(imitating, script, intents)
        return intents, script, nets.log_prob_entropy(logits, intents)[0], value, logits

    def _builder_act(self, params, key, b_obs, b_mask, world, memory):
        cfg = self.cfg
        heard = pol.heard_moves(self.shapes, self.meaning, b_obs)
        x = pol.builder_inputs(self.shapes, b_obs, memory, heard)
        value = pol.builder_value(params, cfg, self.shapes, x, world, memory)
        if cfg.builder == "listener":
            logits = pol.listener_logits(heard, b_mask)
        else:
            logits = pol.builder_logits(params, cfg, x, b_mask)
        action = jnp.argmax(logits, axis=-1) if cfg.greedy_builder else jax.random.categorical(key, logits)
        return action, nets.log_prob_entropy(logits, action)[0], value, heard

    def imitating(self, runner: Runner) -> jnp.ndarray:
        """Whether this update's directors imitate the scripted ones (``TeamConfig.imitate``)."""
        return runner.update < self.cfg.imitation_updates

    def _counterfactual_baselines(self, params, key, step_keys, before, intents, logits, k_b, world, memory):
        """float32 ``(E, seats)``: per director, the mean return of ``counterfactuals`` replays of this
        turn's builder phase in which it alone says an intent drawn afresh from its policy (``logits``): the
        replayed move's reward plus ``gamma`` times the central critic's value after it (none where the
        episode would end). ``before`` is the director-phase state; the builder draws with this turn's key
        ``k_b``."""
        seats, draws = self.shapes.seats, self.cfg.counterfactuals
        alternatives = jax.random.categorical(key, logits, shape=(draws, *logits.shape[:-1]))  # (M, E, seats)
        own = jnp.eye(seats, dtype=bool)[:, None, None, :]  # (seats, 1, 1, seats): which director changes
        variants = jnp.where(own, alternatives[None], intents[None, None])  # (seats, M, E, seats)

        def reward_of(said):
            state = self.v_step_directors(step_keys, before, said)
            b_obs, b_mask, _ = self.v_builder(state)
            b_mask = pol.training_builder_mask(self.shapes, self.cfg, b_mask)
            action = self._builder_act(params, k_b, b_obs, b_mask, world, memory)[0]
            reward, after, done = self.v_move_outcome(state, action)
            if not self.cfg.gamma:
                return reward
            following = pol.push_memory(memory, pol.spoken_block(self.shapes, b_obs), done)
            value = pol.central_value(params, self.shapes, after, following, 0.0)
            return reward + self.cfg.gamma * (1.0 - done.astype(jnp.float32)) * value

        returns = jax.vmap(jax.vmap(reward_of))(variants)  # (seats, M, E)
        return returns.mean(1).T.astype(jnp.float32)

    def _turn(self, params, imitating, carry, _):
        env_state, memory, key = carry
        key, k_d, k_dstep, k_b, k_bstep = jax.random.split(key, 5)
        num = self.cfg.num_envs
        d_obs, d_mask, world_d = self.v_directors(env_state)
        intents, script, d_logp, d_val, d_logits = self._directors_act(
            params, k_d, d_obs, d_mask, world_d, memory, env_state, imitating)
        before, step_keys = env_state, jax.random.split(k_dstep, num)
        env_state = self.v_step_directors(step_keys, env_state, intents)
        b_obs, b_mask, world_b = self.v_builder(env_state)
        b_mask = pol.training_builder_mask(self.shapes, self.cfg, b_mask)
        action, b_logp, b_val, heard = self._builder_act(params, k_b, b_obs, b_mask, world_b, memory)
        if self.cfg.director_credit == "counterfactual":
            k_cf = jax.random.fold_in(k_d, 1)  # a key of its own; every other config's draws stay as they were
            d_base = self._counterfactual_baselines(params, k_cf, step_keys, before, intents, d_logits, k_b,
                                                    world_b, memory)
        else:
            d_base = jnp.zeros(intents.shape, jnp.float32)
        env_state, reward, done, progress, completion = self.v_step_builder(
            jax.random.split(k_bstep, num), env_state, action)
        new_memory = pol.push_memory(memory, pol.spoken_block(self.shapes, b_obs), done)
        step = Batch(d_obs, d_mask.astype(jnp.int8), intents, script, d_logp, d_val, d_base, b_obs,
                     b_mask.astype(jnp.int8), heard, action, b_logp, b_val, world_d, world_b, memory,
                     reward.astype(jnp.float32), done, progress, completion)
        return (env_state, new_memory, key), step

    def rollout(self, runner: Runner) -> tuple[Runner, Batch, jnp.ndarray]:
        """``rollout`` turns of every env; returns the runner, the batch and the last director values."""
        carry = (runner.env_state, runner.memory, runner.key)
        imitating = self.imitating(runner)
        (env_state, memory, key), batch = jax.lax.scan(
            lambda c, x: self._turn(runner.params, imitating, c, x), carry, None, self.cfg.rollout)
        d_obs, _, world = self.v_directors(env_state)
        x, _ = self._director_inputs(d_obs, memory, env_state)
        last = pol.director_values(runner.params, self.cfg, self.shapes, x, world, memory)
        return runner._replace(env_state=env_state, memory=memory, key=key), batch, last

    # ---------------------------------------------------------------- learning

    def advantages(self, batch: Batch, last: jnp.ndarray):
        """GAE for both roles: ``(d_adv (T,E,S), d_ret, b_adv (T,E), b_ret)``."""
        cfg = self.cfg
        next_d = jnp.concatenate([batch.d_val[1:], last[None]], axis=0)
        alive = 1.0 - batch.done.astype(jnp.float32)

        def gae(values, next_values, reward, alive):
            delta = reward + cfg.gamma * alive * next_values - values

            def back(acc, xs):
                d, a = xs
                acc = d + cfg.gamma * cfg.lam * a * acc
                return acc, acc

            _, adv = jax.lax.scan(back, jnp.zeros_like(delta[0]), (delta, alive), reverse=True)
            return adv, adv + values

        d_adv, d_ret = gae(batch.d_val, next_d, batch.reward[..., None], alive[..., None])
        b_adv, b_ret = gae(batch.b_val, next_d.mean(-1), batch.reward, alive)
        if cfg.director_credit == "followed":
            d_adv = d_adv * followed(batch)
        elif cfg.director_credit == "counterfactual":  # the turn's own value replaced by the replays' mean
            if cfg.gamma:
                d_adv = d_adv + batch.d_val - batch.d_base
            else:  # d_adv + d_val is the reward: said so, exactly (an intent that changed nothing gets 0)
                d_adv = batch.reward[..., None] - batch.d_base
        return d_adv, d_ret, b_adv, b_ret

    def loss(self, params, batch: Batch, d_adv, d_ret, b_adv, b_ret, imitating=False):
        """The PPO loss of the learning seats; while ``imitating``, the directors' policy term is the
        cross-entropy of their network on the scripted intents they said (``TeamConfig.imitate``), and
        afterwards that cross-entropy weighted ``script_pull`` is added to it."""
        cfg = self.cfg
        metrics = {}
        total = 0.0
        if cfg.directors == "learned":
            shown = batch.d_script if cfg.script_prior else None
            x = pol.director_inputs(self.shapes, batch.d_obs, batch.memory, shown)
            logits = pol.director_logits(params, cfg, x, batch.d_mask)
            values = pol.director_values(params, cfg, self.shapes, x, batch.world_d, batch.memory)
            policy, vloss, entropy = _ppo_terms(cfg, logits, batch.d_act, batch.d_logp, d_adv, values, d_ret)
            if cfg.imitate or cfg.script_pull:
                imitation = -nets.log_prob_entropy(logits, batch.d_script)[0].mean()
                policy = jnp.where(imitating, imitation, policy + cfg.script_pull * imitation)
                metrics.update(imitation_loss=imitation)
            total = total + policy + cfg.value_coef * vloss - cfg.speaker_entropy * entropy
            metrics.update(director_entropy=entropy, director_value_loss=vloss)
        if cfg.builder == "learned":
            x = pol.builder_inputs(self.shapes, batch.b_obs, batch.memory, batch.b_heard)
            logits = pol.builder_logits(params, cfg, x, batch.b_mask)
            values = pol.builder_value(params, cfg, self.shapes, x, batch.world_b, batch.memory)
            policy, vloss, entropy = _ppo_terms(cfg, logits, batch.b_act, batch.b_logp, b_adv, values, b_ret)
            total = total + policy + cfg.value_coef * vloss - cfg.entropy * entropy
            metrics.update(builder_entropy=entropy, builder_value_loss=vloss)
        return total, metrics

    def update(self, runner: Runner) -> tuple[Runner, dict]:
        """One PPO update: a rollout, then ``epochs`` passes over ``minibatches`` groups of envs."""
        cfg = self.cfg
        imitating = self.imitating(runner)
        runner, batch, last = self.rollout(runner)
        d_adv, d_ret, b_adv, b_ret = self.advantages(batch, last)
        grad_fn = jax.value_and_grad(self.loss, has_aux=True)
        size = cfg.num_envs // cfg.minibatches

        def epoch(carry, key):
            params, opt_state = carry
            order = jax.random.permutation(key, cfg.num_envs).reshape(cfg.minibatches, size)

            def minibatch(carry, idx):
                params, opt_state = carry
                parts = jax.tree_util.tree_map(lambda x: jnp.take(x, idx, axis=1),
                                               (batch, d_adv, d_ret, b_adv, b_ret))
                (_, metrics), grads = grad_fn(params, *parts, imitating)
                updates, opt_state = self.tx.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), metrics

            return jax.lax.scan(minibatch, (params, opt_state), order)

        key, k_epochs = jax.random.split(runner.key)
        (params, opt_state), metrics = jax.lax.scan(
            epoch, (runner.params, runner.opt_state), jax.random.split(k_epochs, cfg.epochs))
        metrics = jax.tree_util.tree_map(jnp.mean, metrics)
        metrics.update(_episode_metrics(batch))
        runner = runner._replace(params=params, opt_state=opt_state, key=key, update=runner.update + 1)
        return runner, metrics

    def train_chunk(self, runner: Runner, chunk: int) -> tuple[Runner, dict]:
        """``chunk`` updates (a ``lax.scan``); the metrics of each, stacked."""
        return jax.lax.scan(lambda r, _: self.update(r), runner, None, chunk)


def followed(batch: Batch) -> jnp.ndarray:
    """float ``(T, E, seats)``: 1 where the seat's intent named the move the builder played."""
    return jnp.take_along_axis(batch.b_heard, batch.b_act[..., None, None], axis=-1)[..., 0]


def _ppo_terms(cfg, logits, actions, old_logp, adv, values, returns):
    """Clipped policy loss, value loss and mean entropy (advantages normalised over the minibatch)."""
    logp, entropy = nets.log_prob_entropy(logits, actions)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = jnp.exp(logp - old_logp)
    policy = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv).mean()
    return policy, jnp.mean((values - returns) ** 2), entropy.mean()


def _episode_metrics(batch: Batch) -> dict:
    """Mean progress, completion and completed share of the episodes that ended in this rollout."""
    done = batch.done.astype(jnp.float32)
    episodes = done.sum()
    safe = jnp.maximum(episodes, 1.0)
    return {
        "episodes": episodes,
        "progress": (batch.progress * done).sum() / safe,
        "completion": (batch.completion * done).sum() / safe,
        "completed": ((batch.completion >= 1.0) * done).sum() / safe,
        "reward": batch.reward.mean(),
    }
