"""The model client: retries with backoff, errors, usage and cost, record/replay, redaction.

Everything runs offline: litellm custom providers stand in for a flaky
network, and ``mock_response`` for a real model's reply.
"""

from __future__ import annotations

import asyncio
import json
import warnings

import pytest

import craft_env.eval.run.provider  # noqa: F401  (registers the offline scripted/ provider, as the runner does)
from craft_env.models.cache import ReplayCache, cache_key
from craft_env.models.llm import ModelCallError, ModelClient, import_litellm, is_retryable, missing_environment
from craft_env.models.redact import REDACTED, Redactor

from fake_providers import install  # tests/ is on sys.path (conftest)

litellm = import_litellm()
SECRET = "sk-test-THISISASECRETKEY0123456789"
MESSAGES = [{"role": "user", "content": "hello"}]


class Flaky(litellm.CustomLLM):
    """Raises the queued errors one call at a time, then answers ``ok``."""

    def __init__(self, errors=(), reply="ok"):
        super().__init__()
        self.errors = list(errors)
        self.calls = 0
        self.reply = reply

    def _answer(self, model):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return litellm.ModelResponse(
            model=model,
            choices=[{"message": {"role": "assistant", "content": self.reply}}],
            usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        )

    def completion(self, model, messages, *args, **kwargs):
        return self._answer(model)

    async def acompletion(self, model, messages, *args, **kwargs):
        return self._answer(model)


def rate_limit():
    return litellm.RateLimitError(message="slow down", llm_provider="flaky", model="m")


def timeout():
    return litellm.Timeout(message="took too long", model="m", llm_provider="flaky")


class Sleeps:
    def __init__(self):
        self.delays = []

    async def __call__(self, delay):
        self.delays.append(delay)

    def sync(self, delay):
        self.delays.append(delay)


def client(model="flaky/m", **options) -> tuple[ModelClient, Sleeps]:
    sleeps = Sleeps()
    made = ModelClient(model, sleep=sleeps, sync_sleep=sleeps.sync, jitter=lambda: 1.0, **options)
    return made, sleeps


def test_rate_limits_and_timeouts_are_retried_with_exponential_backoff():
    handler = Flaky([rate_limit(), timeout(), litellm.InternalServerError("boom", "flaky", "m")])
    install("flaky", handler)
    made, sleeps = client(num_retries=3, backoff_base=2.0)
    reply = asyncio.run(made.acomplete(MESSAGES))
    assert reply.text == "ok" and reply.attempts == 4 and handler.calls == 4
    assert sleeps.delays == [2.0, 4.0, 8.0]
    assert (reply.prompt_tokens, reply.completion_tokens) == (7, 3)


def test_blocking_calls_retry_too():
    install("flaky", Flaky([rate_limit()]))
    made, sleeps = client(num_retries=1)
    assert made.complete(MESSAGES).text == "ok"
    assert sleeps.delays == [1.0]


def test_backoff_is_capped_and_jittered():
    made = ModelClient("flaky/m", backoff_base=1.0, backoff_max=5.0, jitter=lambda: 0.0)
    assert [made.backoff(k) for k in range(5)] == [0.5, 1.0, 2.0, 2.5, 2.5]


def test_an_error_that_outlives_its_retries_is_a_model_call_error():
    install("flaky", Flaky([rate_limit()] * 5))
    made, sleeps = client(num_retries=2)
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(made.acomplete(MESSAGES))
    assert caught.value.attempts == 3 and caught.value.retryable
    assert caught.value.error_type == "RateLimitError"
    assert len(sleeps.delays) == 2


def test_errors_that_retrying_cannot_fix_fail_at_once_and_are_redacted():
    error = litellm.AuthenticationError(message=f"invalid api key {SECRET}", llm_provider="flaky", model="m")
    install("flaky", Flaky([error]))
    made, sleeps = client(num_retries=3)
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(made.acomplete(MESSAGES))
    assert caught.value.attempts == 1 and not caught.value.retryable and sleeps.delays == []
    assert SECRET not in str(caught.value) and REDACTED in str(caught.value)


def test_is_retryable():
    assert is_retryable(rate_limit()) and is_retryable(timeout()) and is_retryable(TimeoutError())
    assert not is_retryable(ValueError("bad request"))
    assert not is_retryable(litellm.BadRequestError(message="no", model="m", llm_provider="flaky"))


def test_mock_response_gives_text_usage_and_cost_for_a_priced_model():
    made, _ = client("openai/gpt-4o-mini", extra={"mock_response": "hi there"})
    reply = asyncio.run(made.acomplete(MESSAGES))
    assert reply.text == "hi there" and reply.cost > 0 and reply.prompt_tokens > 0


def test_unknown_models_cost_nothing():
    install("flaky", Flaky())
    made, _ = client()
    assert made.complete(MESSAGES).cost == 0.0


def test_record_then_replay_offline_bit_for_bit(tmp_path):
    path = tmp_path / "cache.jsonl"
    install("flaky", Flaky(reply="recorded"))
    first, _ = client(cache=ReplayCache(path), params={"temperature": 0.0})
    recorded = asyncio.run(first.acomplete(MESSAGES))
    first.cache.close()
    install("flaky", Flaky([ValueError("the network is gone")]))
    again, _ = client(cache=ReplayCache(path), params={"temperature": 0.0}, replay_only=True)
    replayed = asyncio.run(again.acomplete(MESSAGES))
    assert replayed.cached and (replayed.text, replayed.prompt_tokens, replayed.cost, replayed.latency) == (
        recorded.text,
        recorded.prompt_tokens,
        recorded.cost,
        recorded.latency,
    )
    with pytest.raises(ModelCallError, match="no recorded reply"):
        asyncio.run(again.acomplete([{"role": "user", "content": "something new"}]))
    other_params, _ = client(cache=ReplayCache(path), params={"temperature": 0.7}, replay_only=True)
    with pytest.raises(ModelCallError):
        other_params.complete(MESSAGES)


def test_cache_key_depends_on_model_messages_and_parameters():
    base = cache_key("a/b", MESSAGES, {})
    assert base == cache_key("a/b", [dict(MESSAGES[0])], {})
    assert (
        len(
            {
                base,
                cache_key("a/c", MESSAGES, {}),
                cache_key("a/b", MESSAGES, {"temperature": 1}),
                cache_key("a/b", [{"role": "user", "content": "hi"}], {}),
            }
        )
        == 4
    )


def test_cache_survives_a_torn_last_line(tmp_path):
    path = tmp_path / "cache.jsonl"
    good = {"key": "k1", "model": "m", "text": "t", "prompt_tokens": 1, "completion_tokens": 1, "cost": 0.0}
    path.write_text(json.dumps(good) + "\n" + '{"key": "k2", "te', encoding="utf-8")
    cache = ReplayCache(path)
    assert "k1" in cache and "k2" not in cache
    cache.put({**good, "key": "k3"})
    cache.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["key"] for line in lines] == ["k1", "k3"]


def test_import_litellm_filters_pydantics_readonly_warning_and_nothing_else():
    readonly = "Item 'summary' on TypedDict class 'ChatCompletionReasoningItem' is using the `ReadOnly` qualifier."
    schema = "pydantic._internal._generate_schema"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        import_litellm()
        for message, module in [(readonly, schema), ("another warning", schema), (readonly, "craft_env.x")]:
            warnings.warn_explicit(message, UserWarning, "x.py", 1, module=module, registry={})
    assert [str(w.message) for w in seen] == ["another warning", readonly]


def test_scripted_provider_answers_offline():
    made = ModelClient("scripted/team")
    reply = made.complete(MESSAGES)
    assert "<message>" in reply.text and reply.cost == 0.0


def test_missing_keys_are_named(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert missing_environment("openai/gpt-4o-mini") == ["OPENAI_API_KEY"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-whatever-123456")
    assert missing_environment("openai/gpt-4o-mini") == []
    assert missing_environment("scripted/team") == []
    assert missing_environment("openai/local", api_base="http://localhost:8000") == []


def test_bad_client_settings_name_the_field():
    with pytest.raises(ValueError, match="model"):
        ModelClient("")
    with pytest.raises(ValueError, match="num_retries"):
        ModelClient("a/b", num_retries=-1)
    with pytest.raises(ValueError, match="timeout"):
        ModelClient("a/b", timeout=0)


def test_redactor_hides_environment_secrets_and_key_shapes():
    redactor = Redactor(environ={"MY_SERVICE_TOKEN": "tok-123456789", "HOME": "/root"})
    redactor.add("explicit-secret-value")
    text = redactor.text(
        "tok-123456789 explicit-secret-value sk-abcdefghijklmnop "
        "Authorization: Bearer abc.def.ghijkl api_key=zzzz9999 /root"
    )
    for secret in (
        "tok-123456789",
        "explicit-secret-value",
        "sk-abcdefghijklmnop",
        "abc.def.ghijkl",
        "zzzz9999",
    ):
        assert secret not in text
    assert "/root" in text
    assert redactor({"a": ["tok-123456789", 3], "tok-123456789": None}) == {
        "a": [REDACTED, 3],
        REDACTED: None,
    }
