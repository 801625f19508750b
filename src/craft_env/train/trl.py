"""TRL's ``GRPOTrainer`` playing a seat of CRAFT through the text environment (``docs/train.md``).

Needs the ``train`` extra (torch, transformers, trl, datasets); tested with
TRL 1.16, whose ``rollout_func`` is marked experimental.

``CraftRollout`` is a ``rollout_func(prompts, trainer)``: every prompt of the
batch is the first chat of one game (``CraftRollout.dataset(seeds)`` makes
them, one row per episode seed; a GRPO group repeats a row, so the group
plays the same game). For each game it generates the seat's reply with the
trainer's model, steps the text environment (``text_env``, batched), and
appends the next chat's new user message, until the game ends. One game is
one sequence::

    prompt_ids      = chat template(system, user 1) + generation prompt
    completion_ids  = reply 1 | end of turn, user 2, generation prompt | reply 2 | ...

``env_mask`` is 1 on the tokens the model sampled and 0 on every token it
did not write (the template's turn markers and the environment's
messages), so the loss and the completion length count the model's own
tokens only; ``logprobs`` are the sampling log-probabilities of the model's
tokens (0 on the others). The game's reward (the sum of the text
environment's rewards, ``rewards``) is returned as ``craft_reward``, which
``craft_reward`` (the reward function to pass to the trainer) hands back.

The chat template must render a conversation as a prefix of the same
conversation with more messages (chat-ML style templates do; templates that
rewrite earlier assistant turns, for instance by dropping their
``<think>``, do not): a rollout whose rendering breaks this raises
``ValueError``. A game stops early when the next message would not fit in
``max_completion_length``; its reward is what it earned so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from datasets import Dataset

from craft_env.agents.llm import messages_key
from craft_env.train.clients import BUILDER
from craft_env.train.text_env import MAX_NUM_ENVS, BatchedTextEnv, Messages

REWARD_KEY = "craft_reward"


def craft_reward(completions: list[Any], craft_reward: list[float], **kwargs: Any) -> list[float]:
    """The reward function for ``GRPOTrainer``: each game's reward, as the rollout measured it."""
    return [float(value) for value in craft_reward]


@dataclass
class _Game:
    """One game's sequence under construction."""

    chat: Messages
    prompt_ids: list[int]
    rendered: str
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    reward: float = 0.0
    replies: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False
    completed: bool = False


class CraftRollout:
    """A ``rollout_func`` over ``BatchedTextEnv`` games of ``seat`` (module docstring).

    ``max_reply_tokens`` caps each reply; ``options`` are the text
    environment's (``others``, ``oracle_n``, ``max_turns``, ``reward``, ...).
    """

    def __init__(self, seat: str = BUILDER, max_reply_tokens: int = 128, **options: Any) -> None:
        self.seat = seat
        self.max_reply_tokens = int(max_reply_tokens)
        self.options = options
        self._games: dict[str, tuple[int, int | None]] = {}
        #: The games of the last rollout: their sequences, replies and turn records (for inspection).
        self.last_games: list[_Game] = []

    def _env(self, size: int) -> BatchedTextEnv:
        return BatchedTextEnv(size, seat=self.seat, **self.options)

    def dataset(self, seeds: list[int], structure: int | None = None) -> Dataset:
        """One row per game: its first chat as ``prompt`` (conversational), remembered with its seed."""
        seeds, chats = list(seeds), []
        for start in range(0, len(seeds), MAX_NUM_ENVS):  # a dataset may hold more games than one env
            part = seeds[start : start + MAX_NUM_ENVS]
            with self._env(len(part)) as env:
                chats += env.reset(part, [structure] * len(part))[0]
        for seed, chat in zip(seeds, chats):
            if chat is None:
                raise ValueError(f"seeds: game {seed} ends before the seat {self.seat} plays")
            self._games[messages_key(chat)] = (seed, structure)
        return Dataset.from_dict({"prompt": chats})

    # -------------------------------------------------------------- rollout

    def __call__(self, prompts: list[Messages], trainer: Any) -> dict[str, Any]:
        games = []
        for prompt in prompts:
            key = messages_key(prompt)
            if key not in self._games:
                raise ValueError(
                    "prompts: a prompt that CraftRollout.dataset did not make; its game is unknown"
                )
            games.append(self._games[key])
        tokenizer = trainer.processing_class
        model = trainer.accelerator.unwrap_model(trainer.model)
        limit = int(trainer.args.max_completion_length)
        with self._env(len(prompts)) as env:
            chats, _ = env.reset([seed for seed, _ in games], [structure for _, structure in games])
            state = [self._start(tokenizer, chat, prompt) for chat, prompt in zip(chats, prompts)]
            while True:
                playing = [game for game in state if not game.done]
                if not playing:
                    break
                replies = self._replies(trainer, model, tokenizer, playing, limit)
                answers = iter(replies)
                observations, rewards, terminated, _, infos = env.step(
                    [None if game.done else next(answers) for game in state]
                )
                for game, chat, reward, ended, info, reply in zip(
                    state, observations, rewards, terminated, infos, self._aligned(state, playing, replies)
                ):
                    if reply is None:
                        continue
                    game.reward += reward
                    game.replies.append(reply)
                    game.records += info.get("turns", [])
                    game.completed = game.completed or ended
                    if chat is None:
                        game.done = True
                    else:
                        self._append_turn(tokenizer, game, reply, chat, limit)
        self.last_games = state
        return {
            "prompt_ids": [game.prompt_ids for game in state],
            "completion_ids": [game.completion_ids for game in state],
            "logprobs": [game.logprobs for game in state],
            "env_mask": [game.env_mask for game in state],
            REWARD_KEY: [game.reward for game in state],
            "craft_turns": [len(game.replies) for game in state],
            "craft_completed": [game.completed for game in state],
        }

    @staticmethod
    def _aligned(state: list[_Game], playing: list[_Game], replies: list[str]) -> list[str | None]:
        by_game = {id(game): reply for game, reply in zip(playing, replies)}
        return [by_game.get(id(game)) for game in state]

    @staticmethod
    def _render(tokenizer: Any, chat: Messages) -> str:
        return tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)

    def _start(self, tokenizer: Any, chat: Messages | None, prompt: Messages) -> _Game:
        if chat is None or messages_key(chat) != messages_key(prompt):
            raise ValueError("prompts: the game no longer starts with its dataset prompt (settings changed?)")
        rendered = self._render(tokenizer, chat)
        prompt_ids = tokenizer(rendered, add_special_tokens=False)["input_ids"]
        return _Game(chat=list(chat), prompt_ids=list(prompt_ids), rendered=rendered)

    def _append_turn(self, tokenizer: Any, game: _Game, reply: str, chat: Messages, limit: int) -> None:
        """Add the template's end of turn and the next user message as environment tokens (mask 0)."""
        if chat[:-1] != game.chat[:1]:
            raise ValueError("the seat's system message changed during the game")
        conversation = [*game.chat, {"role": "assistant", "content": reply}, chat[-1]]
        rendered = self._render(tokenizer, conversation)
        head = game.rendered + reply
        if not rendered.startswith(head):
            raise ValueError(
                "the chat template does not render a conversation as a prefix of its continuation"
            )
        suffix = rendered[len(head) :]
        eos = tokenizer.eos_token
        if (
            game.completion_ids
            and game.completion_ids[-1] == tokenizer.eos_token_id
            and eos
            and suffix.startswith(eos)
        ):
            suffix = suffix[len(eos) :]  # the model wrote the end of its turn itself
        env_ids = tokenizer(suffix, add_special_tokens=False)["input_ids"]
        if len(game.completion_ids) + len(env_ids) >= limit:
            game.done = True  # no room for the next message and a reply: the game stops here
            return
        game.completion_ids += env_ids
        game.logprobs += [0.0] * len(env_ids)
        game.env_mask += [0] * len(env_ids)
        game.chat, game.rendered = conversation, rendered

    @torch.no_grad()
    def _replies(self, trainer: Any, model: Any, tokenizer: Any, games: list[_Game], limit: int) -> list[str]:
        """Sample one reply per game (batched, left-padded); add its tokens (mask 1) and log-probabilities."""
        room = min(limit - len(game.completion_ids) for game in games)
        budget = max(1, min(self.max_reply_tokens, room))
        sequences = [game.prompt_ids + game.completion_ids for game in games]
        width = max(len(sequence) for sequence in sequences)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        device = trainer.accelerator.device
        input_ids = torch.tensor([[pad] * (width - len(s)) + s for s in sequences], device=device)
        attention = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in sequences], device=device)
        args = trainer.args
        output = model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            max_new_tokens=budget,
            do_sample=True,
            temperature=args.temperature,
            top_p=args.top_p,
            top_k=args.top_k or None,
            pad_token_id=pad,
            eos_token_id=tokenizer.eos_token_id,
            return_dict_in_generate=True,
            output_logits=True,
        )
        new = output.sequences[:, width:]
        logits = torch.stack(output.logits, dim=1).float() / args.temperature
        chosen = torch.log_softmax(logits, dim=-1).gather(-1, new.unsqueeze(-1)).squeeze(-1)
        replies = []
        for row, game in enumerate(games):
            tokens = new[row].tolist()
            if tokenizer.eos_token_id in tokens:
                tokens = tokens[: tokens.index(tokenizer.eos_token_id) + 1]
            tokens = tokens[: max(1, limit - len(game.completion_ids))]
            game.completion_ids += tokens
            game.logprobs += chosen[row, : len(tokens)].tolist()
            game.env_mask += [1] * len(tokens)
            replies.append(tokenizer.decode(tokens, skip_special_tokens=True))
        return replies
