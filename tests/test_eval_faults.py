"""Model-path faults of issue 15: empty replies are model faults (#4)."""

from __future__ import annotations

import json

import pytest

from craft_env.models.cache import ReplayCache
from craft_env.models.llm import ModelCallError, ModelClient, import_litellm
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings

from fake_providers import install  # tests/ is on sys.path (conftest)

litellm = import_litellm()
MESSAGES = [{"role": "user", "content": "hello"}]


class Answers(litellm.CustomLLM):
    """Answers the queued responses (``"empty"``, ``"null"``, ``"no choices"`` or a text), then ``ok``."""

    def __init__(self, queue=()):
        super().__init__()
        self.queue = list(queue)
        self.calls = 0

    def _answer(self, model):
        self.calls += 1
        kind = self.queue.pop(0) if self.queue else "ok"
        response = litellm.ModelResponse(
            model=model,
            choices=[{"message": {"role": "assistant", "content": kind}}],
            usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        )
        if kind == "empty":
            response.choices[0].message.content = ""
        elif kind == "null":
            response.choices[0].message.content = None
        elif kind == "no choices":
            response.choices = []
        return response

    def completion(self, model, messages, *args, **kwargs):
        return self._answer(model)

    async def acompletion(self, model, messages, *args, **kwargs):
        return self._answer(model)


async def _no_sleep(delay):
    return None


FAST = {"sleep": _no_sleep, "sync_sleep": lambda delay: None, "jitter": lambda: 0.0}


@pytest.mark.parametrize("kind", ["empty", "null", "no choices"])
def test_an_empty_reply_is_retried_and_never_cached(tmp_path, kind):
    handler = Answers([kind])
    install("answers", handler)
    cache = ReplayCache(tmp_path / "cache.jsonl")
    made = ModelClient("answers/m", cache=cache, num_retries=2, **FAST)
    assert asyncio_run(made.acomplete(MESSAGES)).text == "ok"
    assert handler.calls == 2
    records = [json.loads(line) for line in (tmp_path / "cache.jsonl").read_text().splitlines()]
    assert [r["text"] for r in records] == ["ok"]


@pytest.mark.parametrize("kind", ["empty", "null", "no choices"])
def test_a_model_that_only_answers_empty_fails_the_call(tmp_path, kind):
    handler = Answers([kind] * 10)
    install("answers", handler)
    cache = ReplayCache(tmp_path / "cache.jsonl")
    made = ModelClient("answers/m", cache=cache, num_retries=2, **FAST)
    with pytest.raises(ModelCallError) as error:
        asyncio_run(made.acomplete(MESSAGES))
    assert error.value.error_type == "EmptyReply" and error.value.attempts == 3
    assert handler.calls == 3 and len(cache) == 0
    with pytest.raises(ModelCallError):
        made.complete(MESSAGES)


def test_an_empty_record_in_an_old_cache_is_not_replayed(tmp_path):
    path = tmp_path / "cache.jsonl"
    made = ModelClient("answers/m", **FAST)
    path.write_text(json.dumps({"key": made.key(MESSAGES), "text": "", "model": "answers/m"}) + "\n")
    handler = Answers()
    install("answers", handler)
    made = ModelClient("answers/m", cache=ReplayCache(path), **FAST)
    assert asyncio_run(made.acomplete(MESSAGES)).text == "ok" and handler.calls == 1


def test_empty_replies_error_the_game_instead_of_playing_it(tmp_path):
    install("answers", Answers(["empty"] * 1000))
    summary = run_benchmark(
        RunSettings(out=str(tmp_path / "out"), structures="0", turns=3, director_model="answers/m",
                    builder_model="answers/m", num_retries=1),
        client_options=FAST,
    )[0]
    assert summary["errored"] == 1 and summary["done"] == 0
    assert "EmptyReply" in summary["errors"][0]["error"]
    assert not (tmp_path / "out" / "cache.jsonl").read_text().strip()


def asyncio_run(coroutine):
    import asyncio

    return asyncio.run(coroutine)
