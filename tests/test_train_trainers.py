"""TRL's own trainers on CRAFT: SFT and DPO on exported records, GRPO through the text environment's rollout.

A tiny random model and a tokenizer trained here (``tiny_lm``), on CPU, a
few steps each: nothing is downloaded (``HF_HUB_OFFLINE``). Skipped without
the ``train`` extra.
"""

from __future__ import annotations

import json
import math
import os

import pytest

pytest.importorskip("trl")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from examples_support import load_example  # noqa: E402
from tiny_lm import tiny_model, tiny_tokenizer  # noqa: E402
from train_runs import scripted_run  # noqa: E402
from trl import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer  # noqa: E402

import craft_env  # noqa: E402
from craft_env.train.export import export_training_data  # noqa: E402
from craft_env.train.trl import CraftRollout, craft_reward  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
CPU = dict(use_cpu=True, bf16=False, report_to="none", save_strategy="no", logging_steps=1, seed=0)


def _records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("trainers")
    run = scripted_run(root / "run", structures="0,1", runs=1, turns=5)
    export_training_data([run], "sft", root / "sft")
    export_training_data([run], "dpo", root / "dpo")
    sft, dpo = _records(root / "sft" / "train.jsonl"), _records(root / "dpo" / "train.jsonl")
    texts = [m["content"] for r in sft for m in r["messages"]]
    texts += [m["content"] for r in dpo for m in r["chosen"] + r["rejected"]]
    tokenizer = tiny_tokenizer(texts, vocab_size=1200)
    return {"root": root, "sft": sft, "dpo": dpo, "tokenizer": tokenizer}


def _losses(trainer) -> list[float]:
    return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]


def test_sft_trainer_trains_on_every_exported_record(exported, tmp_path):
    records = exported["sft"]
    assert len(records) == 10  # 2 games x 5 turns
    tokenizer = exported["tokenizer"]
    args = SFTConfig(
        output_dir=str(tmp_path), max_steps=3, per_device_train_batch_size=2, max_length=None, **CPU
    )
    trainer = SFTTrainer(
        model=tiny_model(tokenizer),
        processing_class=tokenizer,
        args=args,
        train_dataset=Dataset.from_list(records),
    )
    assert len(trainer.train_dataset) == len(records)
    assert "input_ids" in trainer.train_dataset.column_names
    trainer.train()
    losses = _losses(trainer)
    assert len(losses) == 3 and all(math.isfinite(loss) and loss > 0 for loss in losses)


def test_dpo_trainer_trains_on_every_exported_pair(exported, tmp_path):
    pairs = exported["dpo"]
    assert len(pairs) == 10
    tokenizer = exported["tokenizer"]
    saved = tmp_path / "tiny"
    tiny_model(tokenizer).save_pretrained(saved)  # DPOTrainer loads its reference model from the same folder
    tokenizer.save_pretrained(saved)
    args = DPOConfig(output_dir=str(tmp_path / "out"), max_steps=3, per_device_train_batch_size=2, **CPU)
    trainer = DPOTrainer(
        model=str(saved), processing_class=tokenizer, args=args, train_dataset=Dataset.from_list(pairs)
    )
    assert len(trainer.train_dataset) == len(pairs)
    trainer.train()
    losses = _losses(trainer)
    assert len(losses) == 3 and all(math.isfinite(loss) for loss in losses)
    assert losses[0] == pytest.approx(math.log(2), abs=0.01)  # policy == reference at the first step


def test_grpo_trains_through_the_text_environment(exported, tmp_path):
    tokenizer = exported["tokenizer"]
    rollout = CraftRollout(max_reply_tokens=12, max_turns=2, oracle_n=5, failed_turn_penalty=0.25)
    dataset = rollout.dataset([0, 1])
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=1024,
        learning_rate=1e-3,
        entropy_coef=0.01,
        **CPU,
    )
    model = tiny_model(tokenizer)
    before = [p.detach().clone() for p in model.parameters()]
    outputs = []

    def recorded(prompts, trainer):
        result = rollout(prompts, trainer)
        outputs.append((result, list(rollout.last_games)))
        return result

    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        reward_funcs=craft_reward,
        args=args,
        train_dataset=dataset,
        rollout_func=recorded,
    )
    trainer.train()
    assert trainer.state.global_step == 2 and len(outputs) == 2
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    logged = [
        entry["rewards/craft_reward/mean"]
        for entry in trainer.state.log_history
        if "rewards/craft_reward/mean" in entry
    ]
    for (result, games), mean in zip(outputs, logged):
        assert mean == pytest.approx(sum(result["craft_reward"]) / len(games))
        for k, game in enumerate(games):
            # the rewards are the engine's: the same replies, played again in a fresh environment, earn them
            with craft_env.text_env(max_turns=2, oracle_n=5, failed_turn_penalty=0.25) as env:
                messages, _ = env.reset(seed=k // 2)
                earned = 0.0
                for reply in game.replies:
                    messages, reward, _, _, _ = env.step(reply)
                    earned += reward
            assert result["craft_reward"][k] == pytest.approx(earned)
            assert [turn["builder"]["raw"] for turn in game.records] == game.replies
            _check_masks(tokenizer, game, result["env_mask"][k], result["completion_ids"][k])


def _check_masks(tokenizer, game, mask, completion):
    """Mask 1 exactly on the replies' tokens; the rest decodes to the template's text between them."""
    assert len(mask) == len(completion) == len(game.logprobs)
    runs, current = [], None
    for token, bit in zip(completion, mask):
        if current is None or current[0] != bit:
            current = (bit, [])
            runs.append(current)
        current[1].append(token)
    model_runs = [tokenizer.decode(tokens, skip_special_tokens=True) for bit, tokens in runs if bit == 1]
    assert model_runs == game.replies
    assert all(value == 0.0 for value, bit in zip(game.logprobs, mask) if bit == 0)
    assert all(value <= 0.0 for value, bit in zip(game.logprobs, mask) if bit == 1)
    first = tokenizer.apply_chat_template(game.chat[:2], tokenize=False, add_generation_prompt=True)
    assert tokenizer.decode(game.prompt_ids, skip_special_tokens=False) == first
    users = [message["content"] for message in game.chat[3::2]]  # the user messages after the first
    environment = [tokenizer.decode(tokens, skip_special_tokens=False) for bit, tokens in runs if bit == 0]
    assert len(environment) == len(users) == len(game.replies) - 1
    for text, user in zip(environment, users):
        assert text.endswith(f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n")


def test_the_example_runs_the_documented_steps_sft_merged_then_a_dpo_adapter(exported, tmp_path):
    tokenizer = exported["tokenizer"]
    saved = tmp_path / "tiny"
    tiny_model(tokenizer).save_pretrained(saved)
    tokenizer.save_pretrained(saved)
    example = load_example("train_llm")
    common = ["--lora", "--lora-rank", "4", "--max-steps", "1", "--cpu"]
    sft = example.main(["--data", str(exported["root"] / "sft"), "--model", str(saved), "--method", "sft",
                        *common, "--merge", "-o", str(tmp_path / "sft-model")])
    assert math.isfinite(sft["train_loss"])
    assert (tmp_path / "sft-model" / "config.json").is_file()  # a whole model, the adapter merged in
    assert not (tmp_path / "sft-model" / "adapter_config.json").exists()
    dpo = example.main(["--data", str(exported["root"] / "dpo"), "--model", str(tmp_path / "sft-model"),
                        "--method", "dpo", *common, "-o", str(tmp_path / "adapter")])
    assert math.isfinite(dpo["train_loss"])
    assert (tmp_path / "adapter" / "adapter_config.json").is_file()
