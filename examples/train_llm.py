"""Fine-tune a language model on CRAFT data exported from run logs: SFT or DPO with TRL, LoRA optional.

Export first (docs/train.md), then train on the folder it wrote::

    craft-env export runs/my-run --format sft --keep oracle-correct --split-by structure -o data/sft
    python examples/train_llm.py --data data/sft --model path/to/model --method sft --lora --merge -o sft

    craft-env export runs/my-run --format dpo --split-by structure -o data/dpo
    python examples/train_llm.py --data data/dpo --model sft --method dpo --lora -o adapters/dpo

``--model`` is a local folder (or a Hugging Face name, downloaded by
transformers unless HF_HUB_OFFLINE=1) holding a causal LM and a tokenizer
with a chat template. ``data/train.jsonl`` trains; ``data/valid.jsonl``,
when there, is evaluated at the end. The adapter (with ``--lora``), the
model with the adapter merged in (``--lora --merge``) or the model is saved
to ``--output``. Needs the training extra::

    pip install "torch==2.13.0" -e ".[train]"
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

EXTRA_HINT = (
    "examples/train_llm.py needs the training extra (torch, transformers, trl, peft, datasets):\n"
    '    pip install "torch==2.13.0" -e ".[train]"   (from the repository root; docs/train.md)'
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a folder written by craft-env export --format sft|dpo")
    parser.add_argument("--model", required=True, help="a causal LM folder (or name) with a chat template")
    parser.add_argument("--method", choices=("sft", "dpo"), default="sft", help="the trainer (default sft)")
    parser.add_argument(
        "--lora", action="store_true", help="train a LoRA adapter (PEFT) instead of every weight"
    )
    parser.add_argument("--lora-rank", type=int, default=16, help="LoRA rank (default 16)")
    parser.add_argument(
        "--merge", action="store_true", help="with --lora: save the model with the adapter merged in"
    )
    parser.add_argument(
        "--max-steps", type=int, default=-1, help="stop after this many steps (default: epochs)"
    )
    parser.add_argument("--epochs", type=float, default=1.0, help="passes over the data (default 1)")
    parser.add_argument("--batch-size", type=int, default=2, help="records per device step (default 2)")
    parser.add_argument("--lr", type=float, default=None, help="learning rate (default: the trainer's)")
    parser.add_argument(
        "--cpu", action="store_true", help="train on the CPU in float32 (default: GPU, bfloat16)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "-o", "--output", default="craft-adapter", help="where to save (default craft-adapter)"
    )
    return parser.parse_args(argv)


def read_split(folder: Path, name: str) -> list[dict]:
    path = folder / name
    return (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    )


def main(argv: Sequence[str] | None = None) -> dict:
    args = parse_args(argv)
    try:
        from datasets import Dataset
        from peft import LoraConfig
        from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer
    except ImportError:
        print(EXTRA_HINT, file=sys.stderr)
        raise SystemExit(1) from None
    folder = Path(args.data)
    train, valid = read_split(folder, "train.jsonl"), read_split(folder, "valid.jsonl")
    if not train:
        raise SystemExit(f"--data: {folder / 'train.jsonl'} is missing or empty (run craft-env export first)")
    options = dict(
        output_dir=args.output,
        max_steps=args.max_steps,
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size,
        seed=args.seed,
        report_to="none",
        save_strategy="no",
        logging_steps=10,
        use_cpu=args.cpu,
        bf16=not args.cpu,
    )
    if args.lr is not None:
        options["learning_rate"] = args.lr
    peft_config = (
        LoraConfig(
            r=args.lora_rank,
            lora_alpha=2 * args.lora_rank,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )
        if args.lora
        else None
    )
    trainer_class, config_class = (SFTTrainer, SFTConfig) if args.method == "sft" else (DPOTrainer, DPOConfig)
    trainer = trainer_class(
        model=args.model,
        args=config_class(**options),
        train_dataset=Dataset.from_list(train),
        eval_dataset=Dataset.from_list(valid) if valid else None,
        peft_config=peft_config,
    )
    result = trainer.train()
    metrics = dict(result.metrics)
    if valid:
        metrics.update(trainer.evaluate())
    if args.lora and args.merge:
        trainer.model.merge_and_unload().save_pretrained(args.output)
        trainer.processing_class.save_pretrained(args.output)
    else:
        trainer.save_model(args.output)
    print(json.dumps({k: round(v, 6) if isinstance(v, float) else v for k, v in metrics.items()}, indent=2))
    return metrics


if __name__ == "__main__":
    main()
