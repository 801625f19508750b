"""What the directors say: per seat, the intents used, what they name, and how often that is literally so.

For every turn of the evaluation games (``evaluate.play``), each director's
intent is read as the game defines it (``core.intents``: a kind, a slot on
its wall, a layer, a colour) and held against the target and the board:

* **literal**: what it names is true: a placement names the block the
  target has at that cell and layer (colour, and size for a large one), a
  removal names a column whose top block is wrong;
* **optimal**: the move it names is one of the oracle's optimal moves now;
* **followed**: the builder played exactly the move it names;
* **scripted** (a share of every turn, not only the non-empty intents): it
  said what the scripted director of its seat (``core.scripted``) would have
  said in the same state, so learned directors that start as the script
  show how far they moved from it.

A team whose directors are rarely literal but whose builder still builds
has a convention: its signals mean something other than what they say.
"""

from __future__ import annotations

import numpy as np

from craft_env.core.intents import INTENT_LARGE, INTENT_NOOP, INTENT_REMOVE, INTENT_SMALL
from craft_env.core.views import seat_cell_indices

KINDS = {INTENT_NOOP: "nothing", INTENT_SMALL: "small", INTENT_LARGE: "large", INTENT_REMOVE: "remove"}


class SpeechLog:
    """Counts per seat, filled by ``watch`` (``evaluate.play``'s hook)."""

    def __init__(self, seats, n: int, height: int) -> None:
        self.seats, self.n, self.height = seats, n, height
        self.walls = [seat_cell_indices(seat, n) for seat in seats]
        self.kinds = np.zeros((len(seats), len(KINDS)), np.int64)
        self.slots = np.zeros((len(seats), n, height), np.int64)  # where the non-empty intents point
        self.literal = np.zeros(len(seats), np.int64)
        self.optimal = np.zeros(len(seats), np.int64)
        self.followed = np.zeros(len(seats), np.int64)
        self.spoken = np.zeros(len(seats), np.int64)
        self.scripted = np.zeros(len(seats), np.int64)

    def watch(self, env, actions: np.ndarray, playing: np.ndarray, scripted: np.ndarray) -> None:
        spoken = env.spoken_intents.astype(np.int64)
        targets, boards, optimal = env.targets, env.boards, env.optimal_masks
        for k, table in enumerate(env.intents):
            said = spoken[playing, k]
            self.scripted[k] += int((said == scripted[playing, k]).sum())
            rows = np.flatnonzero(playing)
            kind = table.kind[np.maximum(said, 0)]
            np.add.at(self.kinds[k], kind, 1)
            talk = (said > 0) & (table.action[np.maximum(said, 0)] >= 0)
            rows, said, kind = rows[talk], said[talk], kind[talk]
            slot, layer = table.slot[said].astype(np.int64), table.layer[said].astype(np.int64)
            np.add.at(self.slots[k], (slot, layer), 1)
            cells = self.walls[k][slot].astype(np.int64)
            named = table.action[said].astype(np.int64)
            self.spoken[k] += len(rows)
            self.optimal[k] += int(optimal[rows, named].sum())
            self.followed[k] += int((actions[rows] == named).sum())
            self.literal[k] += int(self._literal(targets[rows], boards[rows], cells, layer, kind,
                                                 table.colour[said]).sum())

    def _literal(self, targets, boards, cells, layer, kind, colour) -> np.ndarray:
        idx = np.arange(len(cells))
        want = targets[idx, cells, layer].astype(np.int64)
        want_colour = np.where(want >= 6, (want - 6) // 4, want - 1)
        place = ((kind == INTENT_SMALL) & (want >= 1) & (want <= 5)) | ((kind == INTENT_LARGE) & (want >= 6))
        place &= want_colour == colour
        top = np.maximum((boards[idx, cells] != 0).sum(-1) - 1, 0)
        wrong_top = boards[idx, cells, top] != targets[idx, cells, top]
        return np.where(kind == INTENT_REMOVE, wrong_top, place)

    def table(self, name: str) -> list[str]:
        """Markdown rows, one per seat: the intents' kinds (shares), and literal / optimal / followed rates."""
        lines = []
        for k, seat in enumerate(self.seats):
            total = max(int(self.kinds[k].sum()), 1)
            shares = " / ".join(f"{self.kinds[k, i] / total:.0%}" for i in KINDS)
            spoken = max(int(self.spoken[k]), 1)
            layers = " / ".join(f"{self.slots[k, :, level].sum() / spoken:.0%}" for level in range(self.height))
            lines.append(f"| {name} | {seat} | {shares} | {layers} | {self.literal[k] / spoken:.0%} | "
                         f"{self.optimal[k] / spoken:.0%} | {self.followed[k] / spoken:.0%} | "
                         f"{self.scripted[k] / total:.1%} |")
        return lines


HEADER = ["| team | seat | nothing / small / large / remove | layer 0 / 1 / 2 | literal | optimal | followed "
          "| scripted |", "|---|---|---|---|---|---|---|---|"]
