"""One CRAFT episode as a small state machine, shared by the AEC and Parallel envs.

``CraftGame`` runs the game kernels of ``craft_env.core.game`` on a batch of
one episode; the PettingZoo classes are thin shells that decide who acts
when. The vector env runs the same kernels over a batch, so the envs cannot
play different rules.

A turn: the speaking slots and (oracle condition) the builder's candidates
are drawn from the episode seed's streams; each slot's director ``speak``s
(under protocol paper a director may hold two slots, another none); the
builder ``build``s once, which ends the turn and, in the same numba call
(``core.game.play_builder``), begins the next. Every agent's observation is
kept current in place (``director_obs``, ``builder_obs``), so observing is a
copy; ``begin_turn`` rewrites everything, at reset or after ``board`` was
edited from outside.

Pickling: the packed records are numba structrefs, which do not pickle. A
game pickles as plain data (its config, a copy of every ``Episode`` array,
the Python-side episode state) and unpickles by building a fresh game for
that config and copying the arrays into it (``episode_arrays``,
``restore_episode``), so it continues exactly where it was, mid-episode
included; the vector env does the same.
"""

from __future__ import annotations

import functools
import secrets
from typing import Any

import numpy as np

from craft_env.core import game as kernels
from craft_env.core import rules
from craft_env.core.board import Structure, cached_moves
from craft_env.core.encoding import action_table
from craft_env.core.intents import intent_table
from craft_env.core.jit import announce_cold_kernels, compiled_entry
from craft_env.core.moves import Move
from craft_env.core.observation import (
    builder_obs_dim,
    director_obs_dim,
    fill_state,
    played_fraction,
    state_dim,
)
from craft_env.core.random import normalise_seed
from craft_env.envs.config import EnvConfig
from craft_env.text import ParseError, parse_builder_reply, parse_director_message


def episode_arrays(episode: kernels.Episode) -> dict[str, np.ndarray]:
    """A copy of every array of ``episode`` by field name: the picklable part of an ``Episode`` record."""
    return {name: np.array(array) for name, array in zip(episode._fields, episode)}


def restore_episode(episode: kernels.Episode, arrays: dict[str, np.ndarray]) -> None:
    """Copy ``arrays`` (``episode_arrays`` of an episode of the same config) into ``episode``, in place.

    In place, so the packed records and every view of the arrays see the
    restored state. A field missing or of another shape is a ``ValueError``.
    """
    for name, array in zip(episode._fields, episode):
        saved = arrays.get(name)
        if saved is None or saved.shape != array.shape:
            got = None if saved is None else saved.shape
            raise ValueError(f"episode.{name}: expected an array of shape {array.shape}, got {got}")
        np.copyto(array, saved)


@functools.lru_cache(maxsize=64)
def _generated_config(
    seats: tuple[str, ...], n: int, height: int, max_turns: int, oracle_n: int | None, reward: str, start: str,
    director_order: tuple[int, ...] | None, director_sees: str, protocol: Any,
) -> kernels.Config:
    """``core.game.config_record`` for generated targets, made once per setting (its arrays are read-only)."""
    intents = [intent_table(seat, n, height) for seat in seats]
    return kernels.config_record(
        seats, intents, n, height, max_turns, oracle_n, reward, start, director_order, director_sees, protocol
    )


def kernel_config(config: EnvConfig) -> kernels.Config:
    """The kernels' ``Config`` record of ``config``: ``core.game.config_record``'s, the same values.

    Everything but the target is shared by the games of one setting (read-only
    arrays, made once: the intent groups alone take about half a millisecond);
    a given structure replaces the generated target's two fields.
    """
    base = _generated_config(
        config.seats, config.n, config.height, config.max_turns, config.oracle_n, config.reward, config.start,
        config.director_order, config.director_sees, config.protocol,
    )
    if config.structure is None:
        return base
    fixed = np.ascontiguousarray(config.structure.array[None], np.int8)
    fixed.flags.writeable = False
    return base._replace(generate=0, fixed_targets=fixed)


class CraftGame:
    """Episode state and rules for one game (see the module docstring)."""

    #: The episode state kept in Python, beside the ``Episode`` arrays (pickled with them).
    EPISODE_STATE = ("seed", "turn", "distance", "done", "num_candidates", "conversation", "last_move")

    def __init__(self, config: EnvConfig) -> None:
        self.config = config
        n, height = config.n, config.height
        self.n, self.height = n, height
        self.table = action_table(n)
        self._moves = cached_moves(n, height)
        #: The seated directors (``config.seats``): seat index k is ``seats[k]``.
        self.seats = seats = config.seats
        self.num_directors = len(seats)
        self.intents = [intent_table(seat, n, height) for seat in seats]
        self.num_actions = self.table.num_actions
        self.num_intents = self.intents[0].num_intents
        self.noop = self.table.noop
        self.builder_dim = builder_obs_dim(n, height, self.num_directors, self.num_intents)
        self.director_dim = director_obs_dim(n, height, self.num_directors, self.num_intents)
        self.state_dim = state_dim(n, height, self.num_directors, self.num_intents)
        announce_cold_kernels(kernels.play_builder, kernels.reset_episode)
        self.kernel_config = kernel_config(config)
        self.episode = episode = kernels.new_episodes(
            self.kernel_config, 1, height, self.director_dim, self.builder_dim
        )
        # The kernels take the records packed (``core.records``).
        self._config_record, self._episode_record = kernels.kernel_records(self.kernel_config, episode)
        self.walls = list(self.kernel_config.walls.astype(np.int64))
        self.wall_array = self.kernel_config.walls
        self.all_visible = self.kernel_config.all_visible
        self.director_visible = self.kernel_config.visible
        # Row 0 of every episode array, as the attributes the envs and agents read (views, updated in place).
        self.board = episode.boards[0]
        self.target = episode.targets[0]
        self.spoken = episode.spoken[0]
        self.order = episode.order[0]
        self.order_list = self.order.tolist()  # the same, as Python ints for the envs' hot path
        self.optimal = episode.optimal[0]
        self.builder_mask = episode.builder_mask[0]
        self.director_masks = episode.director_masks[0]
        self.candidate_ids = episode.candidates[0]
        self.candidate_layers = episode.candidate_layers[0]
        self.director_obs = episode.director_obs[0]
        self.builder_obs = episode.builder_obs[0]
        self.scores = episode.scores[0]
        self._info = episode.info
        self.num_candidates = 0
        self.result = np.zeros(kernels.RESULT_WIDTH, np.float64)
        # The hot kernels, called without numba's per-call type resolution (``compiled_entry``).
        records = (self._config_record, self._episode_record)
        self._reset_episode = compiled_entry(kernels.reset_episode, (*records, 0))
        self._play_builder = compiled_entry(kernels.play_builder, (*records, 0, 0, 0, self.result))
        self._speak = compiled_entry(
            kernels.speak, (self.director_masks, self.spoken, 0, 0, self.director_obs, self.builder_obs)
        )
        self.seed = 0
        self.turn = 0
        self.distance = 0
        self.done = False
        self.conversation: list[dict[str, Any]] = []
        # Text renderings that stay valid for the episode or until the board changes (``envs.textobs``).
        self.text_cache: dict[Any, Any] = {}
        #: ``(board bytes, Structure)`` of the last ``board_structure`` (the runner reads it per agent turn).
        self._board_kept: tuple[bytes, Structure] | None = None
        #: The turn's ``candidate_moves``, once read (None when the kernels may have rewritten them).
        self._candidates_kept: list[Move] | None = None
        self.last_move: Move | None = None

    def __getstate__(self) -> dict[str, Any]:
        """The game as plain data (the module docstring, "Pickling")."""
        state = {name: getattr(self, name) for name in self.EPISODE_STATE}
        return {"config": self.config, "episode": episode_arrays(self.episode), "result": self.result.copy(),
                **state}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])
        restore_episode(self.episode, state["episode"])
        self.result[:] = state["result"]
        for name in self.EPISODE_STATE:
            setattr(self, name, state[name])
        self.order_list = self.order.tolist()

    # ---------------------------------------------------------------- episode

    def reset(self, seed: int | None = None) -> None:
        """Start a new episode; ``seed`` fixes the target (if generated), speakers and candidates."""
        self.seed = secrets.randbits(63) if seed is None else normalise_seed(seed)
        self._info["seed"][0] = self.seed
        self._reset_episode(self._config_record, self._episode_record, 0)
        self.turn = 0
        self.done = False
        self.conversation = []
        self.text_cache = {}
        self.last_move = None
        self._read_turn()

    def begin_turn(self) -> None:
        """Score the board, draw the turn's speakers and candidates, rewrite every mask and observation.

        Also the way to resynchronise after editing ``board`` in place.
        """
        self._info["turn"][0] = self.turn
        kernels.resync_episode(self._config_record, self._episode_record, 0)
        self._read_turn()

    def _read_turn(self) -> None:
        self._candidates_kept = None
        info = self._info[0]
        self.num_candidates = int(info["num_candidates"])
        self.distance = int(info["distance"])
        self.order_list = self.order.tolist()

    # ----------------------------------------------------------------- acting

    def speak(self, seat: int, action: Any) -> dict[str, Any]:
        """Director ``seat`` says ``action`` (an intent id, or a message string). Never raises."""
        text = reason = None
        if type(action) is int and 0 <= action < self.num_intents:
            intent = action
        else:
            intent, text, reason = self._intent_from_action(seat, action)
        allowed = self._speak(
            self.director_masks, self.spoken, seat, intent, self.director_obs, self.builder_obs
        )
        if not allowed:
            reason = f"intent {intent} is not allowed now (it names no legal move on the current board)"
            intent = 0
        turn = self.turn + 1
        self.conversation.append({"turn": turn, "speaker": self.seats[seat], "intent": intent, "text": text})
        return {"turn": turn, "intent": intent, "message": text, "legal": reason is None, "reason": reason}

    def _intent_from_action(self, seat: int, action: Any) -> tuple[int, str | None, str | None]:
        """``(intent id in range, message text, reason)`` for anything but an in-range ``int``."""
        if isinstance(action, str):
            return self._intent_from_text(seat, action), action, None
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            intent = int(action)
            if 0 <= intent < self.num_intents:
                return intent, None, None
            return 0, None, f"unknown intent id {intent} (expected 0..{self.num_intents - 1})"
        kind = type(action).__name__
        return 0, None, f"a director's action must be an intent id or a message string, got {kind}"

    def _intent_from_text(self, seat: int, message: str) -> int:
        try:
            found = parse_director_message(message, self.seats[seat], self.n, self.height)
        except ValueError:
            return 0
        for intent in found:
            if self.director_masks[seat, intent]:
                return int(intent)
        return 0

    def build(self, action: Any) -> dict[str, Any]:
        """The builder plays ``action`` (an action id or text), ending the turn. Never raises."""
        if type(action) is int and 0 <= action < self.num_actions:
            action_id = action
            claimed = move_text = question = reason = None
            override = rules.OK
        else:
            action_id, claimed, move_text, question, reason = self._decode_builder_action(action)
            override = rules.OK if reason is None else rules.WRONG_LAYER
        candidates = self.candidate_strings()
        played = action_id if 0 <= action_id < self.num_actions else -1  # unknown; fits the kernel's int64
        code = self._play_builder(self._config_record, self._episode_record, 0, played, override, self.result)
        self._candidates_kept = None  # the kernel drew the next turn's
        legal = code == rules.OK
        if reason is None and not legal:
            reason = rules.REASONS[code]
            if code == rules.UNKNOWN_ACTION:
                reason = f"unknown action id {action_id} (expected 0..{self.num_actions - 1})"
        # The RESULT_* fields in order, the metrics in METRIC_NAMES order last (named inline below:
        # cheaper than zip on this path; tests compare them with metrics.score).
        (_, layer, distance, reward, optimal, prescribed, attempted, followed, count, turn, completed,
         iou, completion, accuracy, progress, voxel_iou) = self.result.tolist()
        self.turn = turn = int(turn)
        self.num_candidates = int(count)
        self.distance = distance = int(distance)
        self.order_list = self.order.tolist()
        terminated = completed == 1.0
        truncated = not terminated and turn >= self.config.max_turns
        self.done = terminated or truncated
        known = 0 <= action_id < self.num_actions and action_id != self.noop
        if legal and known:
            move = self._moves[action_id][int(layer) + 1]
        elif claimed is not None:
            move = claimed
        else:
            move = self._moves[action_id][0] if known else None
        outcome = {
            "turn": turn,
            "action": action_id,
            "move": None if move is None else str(move),
            "text": move_text,
            "question": question,
            "legal": legal,
            "reason": reason,
            "metrics": {
                "iou": iou, "completion": completion, "position_accuracy": accuracy, "progress": progress,
                "voxel_iou": voxel_iou,
            },
            "distance": distance,
            "optimal": optimal == 1.0,
            "remove_prescribed": prescribed == 1.0,
            "remove_attempted": attempted == 1.0,
            "followed_oracle": followed == 1.0,
            "completed": terminated,
            "candidates": candidates,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
        }
        self.last_move = move
        self.conversation.append({"turn": turn, "speaker": "builder", "intent": None, "text": None,
                                  "outcome": outcome})
        return outcome

    def _decode_builder_action(
        self, action: Any
    ) -> tuple[int, Move | None, str | None, str | None, str | None]:
        """``(action id, claimed move, text, question, reason)`` for anything but an in-range ``int``.

        A reason means the turn fails with it; an id outside the table is
        kept for the message and played as unknown.
        """
        if isinstance(action, str):
            action_id, claimed, question, reason = self._action_from_text(action)
            if reason is None and claimed is not None and 0 <= action_id < self.num_actions:
                reason = self.board_structure().check(claimed)
            return action_id, claimed, action, question, reason
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            action_id = int(action)
            if 0 <= action_id < self.num_actions:
                return action_id, None, None, None, None
            reason = f"unknown action id {action_id} (expected 0..{self.num_actions - 1})"
            return action_id, None, None, None, reason
        kind = type(action).__name__
        return -1, None, None, None, f"the builder's action must be an action id or text, got {kind}"

    def _action_from_text(self, text: str) -> tuple[int, Move | None, str | None, str | None]:
        try:
            tolerant = self.config.protocol.tolerant_span
            reply = parse_builder_reply(text, self.n, self.height, tolerant)
        except ParseError as error:
            return -1, None, None, f"could not parse the builder's reply: {error.reason}"
        if reply.move is None or reply.move.action == "noop":
            return self.noop, None, reply.question, None
        try:
            return reply.move.to_action(self.n), reply.move, reply.question, None
        except ValueError as error:
            return -1, reply.move, reply.question, str(error)

    @staticmethod
    def builder_note(outcome: dict[str, Any]) -> str:
        """The builder's turn as one conversation line (what it did and whether it worked)."""
        if outcome["question"] and outcome["move"] is None:
            return f"asks: {outcome['question']}"
        if outcome["move"] is None and outcome["legal"]:
            return "passes"
        if outcome["legal"]:
            return f"{outcome['move']} (done)"
        what = outcome["move"] or outcome["text"] or "an unknown action"
        return f"{what} (failed: {outcome['reason']})"

    # ------------------------------------------------------------ observation

    def candidate_strings(self) -> list[str] | None:
        moves = self.candidate_moves()
        return None if moves is None else [str(m) for m in moves]

    def candidate_moves(self) -> list[Move] | None:
        """The oracle candidates shown to the builder this turn (None without the oracle condition).

        A new list each time; its moves are read from the episode's arrays once per turn (kept until
        a kernel rewrites the candidates: ``reset``, ``begin_turn``, ``build``).
        """
        if self.config.oracle_n is None:
            return None
        kept = self._candidates_kept
        if kept is None:
            count = self.num_candidates
            ids, layers = self.candidate_ids[:count].tolist(), self.candidate_layers[:count].tolist()
            kept = self._candidates_kept = [self._moves[action][layer + 1] for action, layer in zip(ids, layers)]
        return list(kept)

    def state(self) -> np.ndarray:
        """The global state (board, whole target, intents, turn) for centralized critics; a new array."""
        out = np.empty(self.state_dim, np.float32)
        fill_state(self.board, self.target, self.n, self.spoken, self.num_intents,
                   played_fraction(self.turn, self.config.max_turns), out)
        return out

    def board_structure(self) -> Structure:
        """The board as an (immutable) ``Structure``; the same object until the board changes."""
        cells = self.board.tobytes()
        kept = self._board_kept
        if kept is None or kept[0] != cells:
            kept = self._board_kept = (cells, Structure.adopt(self.board.copy(), self.n))
        return kept[1]

    def target_structure(self) -> Structure:
        if self.config.structure is not None:
            return self.config.structure
        return Structure.adopt(self.target.copy(), self.n)
