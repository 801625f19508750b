"""The choices of ``craft-env export --format sft|dpo`` and their command-line options (``docs/train.md``).

Kept apart from ``export`` so that building the command line imports
nothing beyond the package itself.
"""

from __future__ import annotations

import argparse

from craft_env.core.views import ALL_SEATS

FORMATS = ("sft", "dpo")
#: ``--seat``: the builder, one director, or every director.
SEATS = ("builder", *ALL_SEATS, "directors")
#: ``--keep``: which SFT turns are worth imitating (``outcome``).
KEEP_RULES = ("all", "progress", "oracle-correct")
SPLIT_BY = ("structure",)


def add_training_export_options(parser: argparse.ArgumentParser) -> None:
    """The options ``--format sft|dpo`` reads (``--format paper`` ignores them)."""
    group = parser.add_argument_group("sft / dpo (docs/train.md)")
    group.add_argument("--seat", choices=SEATS, default="builder", help="whose turns (default builder)")
    group.add_argument(
        "--keep",
        choices=KEEP_RULES,
        default="all",
        help="sft: all turns, turns that raised progress, or turns with an optimal move (default all)",
    )
    group.add_argument(
        "--split-by", choices=SPLIT_BY, help="write train.jsonl and valid.jsonl, no target in both"
    )
    group.add_argument(
        "--valid", type=float, default=0.2, help="share of targets for validation (default 0.2)"
    )
    group.add_argument(
        "--seed", type=int, default=0, help="seed of the split and the engine's choices (default 0)"
    )
    group.add_argument("--with-think", action="store_true", help="keep <think> blocks in the replies")
