"""Train a CRAFT builder with masked PPO against the scripted directors, on the batched vector env.

The three directors are fixed: every turn they say what the scripted
policy says (``env.scripted_intents()``, one numba call for the batch). The
builder learns from its numeric observation alone: the current board and
the intents the directors just spoke, each in its own frame (an MLP has to
learn what "D3: small red at my slot 2, layer 0" means on the board).
There is no oracle condition: the builder's mask is every legal move, so
picking the right one is the whole problem.

At the end it plays the bundled evaluation set (``craft_env.load_eval_set()``,
the 20 structures, several director-order seeds each) with the trained
builder (greedy), a random builder (uniform over its mask: the legal moves
and the pass), a
hand-written listener (plays the first director's request) and the oracle
builder (an optimal move every turn), and prints their progress side by side.

Needs torch; the CPU build is enough (docs/rl.md, "CPU-only torch"). Run from the
repository root::

    python examples/train_builder.py                  # 400 PPO updates: ~3.5 minutes on 2 idle cores
    python examples/train_builder.py --updates 150    # a shorter run
    python examples/train_builder.py --minutes 2      # a wall-clock budget instead (machine-dependent)
    python examples/train_builder.py --updates 3 --num-envs 32 --eval-seeds 1   # smoke test
    python examples/train_builder.py --seed 1 --save runs/builder-seed1.pt      # keep the trained builder

``--save PATH`` writes the trained builder to one file (``builder_ppo.save_builder``:
the weights, the network's sizes, the observation layout) before the
evaluation; ``python examples/train_team.py --torch-builder PATH`` plays it
in the team evaluation beside every other team (docs/rl.md).

It trains a fixed number of updates (``--updates``, default
``DEFAULT_UPDATES``), so the result does not depend on how fast the machine
is; ``--minutes`` stops on wall clock instead (or first, when both are
given). Everything is seeded (``--seed``); runs with the same thread count
(``--threads``) repeat exactly.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: PPO updates when neither ``--updates`` nor ``--minutes`` is given (docs/rl.md: the curve has
#: reached its plateau by then).
DEFAULT_UPDATES = 400

TORCH_HINT = (
    "examples/train_builder.py needs torch (the CPU build is enough):\n"
    "    pip install torch --index-url https://download.pytorch.org/whl/cpu\n"
    "or, from the repository root, pip install -e \".[rl]\" (see docs/rl.md, \"CPU-only torch\")"
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=None,
                        help=f"PPO updates to train (default {DEFAULT_UPDATES}, unless --minutes is given)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after this much wall clock instead (the result then depends on the machine)")
    parser.add_argument("--num-envs", type=int, default=256, help="episodes played in lock-step")
    parser.add_argument("--rollout", type=int, default=20, help="builder steps per env per update")
    parser.add_argument("--epochs", type=int, default=4, help="PPO epochs per update")
    parser.add_argument("--minibatch", type=int, default=1280, help="samples per gradient step")
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--wide-lr", type=float, default=1e-2, help="learning rate of the linear path")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--gamma", type=float, default=0.0,
                        help="discount; 0 by default: with the distance reward the greedy policy is optimal")
    parser.add_argument("--lam", type=float, default=0.9)
    parser.add_argument("--clip", type=float, default=0.2)
    parser.add_argument("--entropy", type=float, default=0.05)
    parser.add_argument("--reward", default="distance", choices=("progress_delta", "distance", "sparse"),
                        help="training reward (evaluation always reports the paper's progress)")
    parser.add_argument("--eval-seeds", type=int, default=10, help="games per evaluation structure")
    parser.add_argument("--log-every", type=int, default=10, help="print a curve point every N updates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--save", default=None, metavar="PATH",
                        help="write the trained builder to this file (read by train_team.py --torch-builder)")
    args = parser.parse_args(argv)
    for name in ("updates", "minutes"):
        value = getattr(args, name)
        if value is not None and not value > 0:
            parser.error(f"--{name}: expected a number above 0, got {value!r}")
    if args.updates is None and args.minutes is None:
        args.updates = DEFAULT_UPDATES
    return args


def load_trainer() -> ModuleType:
    """The torch half (``examples/builder_ppo.py``), or ``SystemExit`` with the install hint when torch is absent."""
    path = Path(__file__).with_name("builder_ppo.py")
    spec = importlib.util.spec_from_file_location("craft_builder_ppo", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except ModuleNotFoundError as missing:
        del sys.modules[spec.name]
        if missing.name != "torch":
            raise
        raise SystemExit(TORCH_HINT) from None
    return module


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    args = parse_args(argv)
    return load_trainer().run(args)


if __name__ == "__main__":
    main()
