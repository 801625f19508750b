"""``TeamConfig``: every setting of a team's training run, and the named presets.

A run is a fixed number of PPO updates (never wall clock), so the same
config and seeds give the same run. ``turns_per_update`` env turns (one
director phase and one builder phase each) are played per update and seed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

DIRECTOR_MODES = ("learned", "scripted")
BUILDER_MODES = ("learned", "listener")
CRITICS = ("central", "independent")
CREDITS = ("team", "followed", "counterfactual")


@dataclass(frozen=True)
class TeamConfig:
    """One training configuration (docs/rl.md, "A team that learns to talk")."""

    #: Who learns: ``learned`` seats train; ``scripted`` directors and the ``listener`` builder are fixed.
    directors: str = "learned"
    builder: str = "learned"
    #: One director network for the three seats (the seat one-hot is in the observation) or one each.
    share_directors: bool = True
    #: ``central``: one critic on the world state (MAPPO); ``independent``: each role's critic on its
    #: own observation (IPPO).
    critic: str = "central"
    #: Memory: the intents of the last ``memory`` turns (every seat) are appended to every input.
    memory: int = 2
    #: Cold start: the builder's input holds the moves this turn's intents name (their literal meaning,
    #: ``core.intents``), and its linear path starts with weight ``prior`` from each heard move to that
    #: move's logit: it starts as a listener, and training may keep or unlearn it. 0: from nothing.
    prior: float = 4.0
    #: And the directors' linear path starts as a literal speaker: weight ``speaker_prior`` from "my target
    #: wall shows colour c at slot p, layer l" to the intent "place c at p, l" (a wide view to the large
    #: block along the wall), and ``speaker_prior / 2`` on the no-op; the mask keeps only what can be
    #: built now. 0: from nothing.
    speaker_prior: float = 8.0
    #: Scripted start: each director's input also holds, as a one-hot, the intent the scripted rule
    #: (``team.scripted``) says from that director's own observation, and the linear path starts with weight
    #: ``script_prior`` from it to that intent's logit, so the directors start saying exactly what the
    #: scripted ones say and training may keep, reweigh or override it. 0: not in the input.
    script_prior: float = 0.0
    #: Warm start by imitation: for the first ``imitate`` share of the updates the scripted directors speak
    #: (the builder learns to hear them, as in ``scripted+builder``) while the director network learns to
    #: say what they say (cross-entropy on their intents instead of the PPO term); after that the learned
    #: directors speak and every seat trains by PPO. 0: no imitation. Needs learned directors.
    imitate: float = 0.0
    #: And a pull toward the script after that: the directors' loss adds ``script_pull`` times the
    #: cross-entropy of their network on what the scripted directors would say in the same states (a
    #: convention may still replace a scripted intent where that pays more). 0: none.
    script_pull: float = 0.0
    #: Which directors a turn's advantage is credited to: ``team``, all three (each is paid the team
    #: reward); ``followed``, only those whose intent named the move the builder played (the others'
    #: advantage is 0 that turn: less noise, but a signal that works other than by being followed
    #: is never reinforced); ``counterfactual``, each director's own difference (``team.ppo``): the turn's
    #: return less the mean of ``counterfactuals`` replays of the builder's phase in which that director
    #: alone says another intent drawn from its policy (the other two, the state and the builder's random
    #: draw held fixed), each the replayed move's reward plus ``gamma`` times the critic's value after it,
    #: so what it did not choose cancels out. Needs a game that scores a move without playing it
    #: (``TurnGame.move_outcome``), and with ``gamma > 0`` the central critic.
    director_credit: str = "team"
    #: The replays per director and turn of ``director_credit="counterfactual"``.
    counterfactuals: int = 4
    #: The builder may not pass while training (a safe local optimum otherwise); it may at evaluation.
    mask_pass: bool = True
    num_envs: int = 256
    rollout: int = 20
    updates: int = 200
    epochs: int = 4
    minibatches: int = 4
    lr: float = 5e-4
    #: The director network's learning rate, when it differs from ``lr`` (None: the same).
    director_lr: float | None = None
    #: The builder network's learning rate, when it differs from ``lr`` (None: the same). 0 freezes it: its
    #: gradient is dropped before the clip, so the directors learn to speak to a builder that stays as it
    #: started (``train.train``'s ``start``: a trained one), a stationary listener.
    builder_lr: float | None = None
    #: The builder plays its most likely move in training too, as every builder does in evaluation, so the
    #: directors learn to speak to the builder that will be evaluated, and a turn's reward no longer carries
    #: the builder's sampling. Only with ``builder_lr=0`` (a greedy builder that learned would not explore).
    greedy_builder: bool = False
    wide_scale: float = 20.0
    hidden: int = 256
    gamma: float = 0.0
    lam: float = 0.9
    clip: float = 0.2
    entropy: float = 0.01
    #: The directors' entropy bonus, when it differs from ``entropy`` (None: the same). 0 lets a director
    #: that starts as the script stray from it only where the policy gradient leads.
    director_entropy: float | None = None
    value_coef: float = 0.5
    max_grad_norm: float = 0.5
    #: The game's training reward (``core.game.REWARDS``); evaluation always reports progress.
    reward: str = "distance"
    max_turns: int = 20
    seeds: tuple[int, ...] = (0, 1, 2)

    def __post_init__(self) -> None:
        for name, allowed in (("directors", DIRECTOR_MODES), ("builder", BUILDER_MODES), ("critic", CRITICS),
                              ("director_credit", CREDITS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}: expected one of {', '.join(allowed)}, got {getattr(self, name)!r}")
        if self.directors == "scripted" and self.builder == "listener":
            raise ValueError("directors, builder: with scripted directors and the listener nobody learns")
        for name in ("num_envs", "rollout", "updates", "epochs", "minibatches", "hidden", "counterfactuals"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: must be a positive int, got {value!r}")
        if self.num_envs % self.minibatches:
            raise ValueError(f"minibatches: must divide num_envs {self.num_envs}, got {self.minibatches}")
        if not isinstance(self.memory, int) or self.memory < 0:
            raise ValueError(f"memory: must be an int >= 0, got {self.memory!r}")
        if not _number(self.imitate) or not 0 <= self.imitate < 1:
            raise ValueError(f"imitate: must be a share of the updates in [0, 1), got {self.imitate!r}")
        for name, optional in (("script_pull", False), ("script_prior", False), ("director_entropy", True)):
            value = getattr(self, name)
            if (value is not None or not optional) and (not _number(value) or value < 0):
                either = "None or " if optional else ""
                raise ValueError(f"{name}: must be {either}a number >= 0, got {value!r}")
        if self.director_lr is not None and (not _number(self.director_lr) or self.director_lr <= 0):
            raise ValueError(f"director_lr: must be None or a number > 0, got {self.director_lr!r}")
        if self.builder_lr is not None and (not _number(self.builder_lr) or self.builder_lr < 0):
            raise ValueError(f"builder_lr: must be None or a number >= 0, got {self.builder_lr!r}")
        if not isinstance(self.greedy_builder, bool):
            raise ValueError(f"greedy_builder: expected True or False, got {self.greedy_builder!r}")
        if self.greedy_builder and self.builder_lr != 0:
            raise ValueError(f"greedy_builder: only with a frozen builder (builder_lr=0), got builder_lr="
                             f"{self.builder_lr!r}")
        if self.builder_lr is not None and self.builder != "learned":
            raise ValueError(f"builder_lr: only for a learned builder, got builder={self.builder!r}")
        for name in ("imitate", "script_pull", "script_prior"):
            if getattr(self, name) and self.directors != "learned":
                raise ValueError(
                    f"{name}: only for learned directors, got directors={self.directors!r}")
        if self.director_credit == "counterfactual" and self.directors != "learned":
            raise ValueError(f"director_credit: 'counterfactual' only for learned directors, got directors="
                             f"{self.directors!r}")
        if self.director_credit == "counterfactual" and self.gamma != 0 and self.critic != "central":
            raise ValueError(f"director_credit: 'counterfactual' with gamma > 0 values the replays with the "
                             f"central critic, got critic={self.critic!r}")
        if not self.seeds:
            raise ValueError("seeds: give at least one seed")

    @property
    def imitation_updates(self) -> int:
        """How many of the first updates the directors imitate the scripted ones (``imitate``)."""
        return round(self.imitate * self.updates)

    @property
    def speaker_entropy(self) -> float:
        """The directors' entropy bonus (``director_entropy``, else ``entropy``)."""
        return self.entropy if self.director_entropy is None else self.director_entropy

    @property
    def turns_per_update(self) -> int:
        return self.num_envs * self.rollout

    def replace(self, **changes) -> TeamConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["seeds"] = list(self.seeds)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> TeamConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"config: unknown field {unknown[0]!r}")
        values = dict(data)
        if "seeds" in values:
            values["seeds"] = tuple(values["seeds"])
        return cls(**values)


def _number(value) -> bool:
    """A finite int or float (a bool is neither here; NaN or infinity would poison the loss)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
