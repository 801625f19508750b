"""A tiny causal language model and tokenizer built locally for the trainer tests: nothing is downloaded.

The tokenizer is a byte-level BPE trained with ``tokenizers`` on the texts
given (the exported records), with a chat-ML template whose end of turn is
the end-of-sequence token; the model is a 2-layer Llama with hidden size 32
and random weights (seeded).
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

PAD, START, END = "<|pad|>", "<|im_start|>", "<|im_end|>"
CHAT_TEMPLATE = (
    "{% for message in messages %}" + START + "{{ message['role'] }}\n{{ message['content'] }}" + END + "\n"
    "{% endfor %}{% if add_generation_prompt %}" + START + "assistant\n{% endif %}"
)


def tiny_tokenizer(texts: Iterable[str], vocab_size: int = 600) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``texts``, with pad, end-of-turn (= eos) and a chat template."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, START, END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    core.train_from_iterator(texts, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, pad_token=PAD, eos_token=END)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_model(tokenizer: PreTrainedTokenizerFast, seed: int = 0) -> LlamaForCausalLM:
    """A 2-layer Llama (hidden 32) with random weights for ``tokenizer``'s vocabulary."""
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)
