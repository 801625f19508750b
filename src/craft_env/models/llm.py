"""A model client over litellm: retries with backoff, usage and cost, record/replay.

``ModelClient(model).acomplete(messages)`` (or the blocking ``complete``)
returns a ``Completion`` with the reply text, token counts, cost and
latency. This client owns retrying: litellm is called with
``num_retries=0`` and every attempt is bounded by ``timeout``; rate limits
(429), server errors (5xx), timeouts, connection errors and empty replies
(no content: a model fault, never cached) are retried up
to ``num_retries`` times with exponential backoff (the sleep function is
injectable so tests never wait). Anything else, or a retryable error that
outlives its retries, raises ``ModelCallError``: the game is then marked
errored and is never given a move or message made up from the failure.

litellm is imported here lazily, on the first call, after setting
``LITELLM_LOCAL_MODEL_COST_MAP`` so that importing it never reaches the
network. Error messages are redacted before they leave this module.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import random
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from craft_env.models.cache import ReplayCache, cache_key
from craft_env.models.cost import Budget, BudgetExceeded, TokenPrice, count_prompt_tokens, model_price
from craft_env.models.redact import Redactor
from craft_env.text.clean import valid_unicode

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


#: The longest wait for one call, and the most retries of a failed call (docs/robustness.md).
MAX_TIMEOUT = 86_400.0
MAX_RETRIES = 100


def check_number(name: str, value: object, low: float, high: float, unit: str = "") -> float:
    """``value`` as a finite number in ``low..high``; ``ValueError`` naming ``name`` and the range (NaN and
    infinity are refused: a call with them fails every time, or a limit with them never holds)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not (
        low <= value <= high
    ):
        raise ValueError(f"{name}: expected a finite number{unit} from {low:g} to {high:g}, got {value!r}")
    return value


def check_call_limits(timeout: object, num_retries: object) -> None:
    """The timeout (seconds, ``0 < t <= MAX_TIMEOUT``) and the retries (``0..MAX_RETRIES``) of model calls."""
    if check_number("timeout", timeout, 0.0, MAX_TIMEOUT, " of seconds") == 0:
        raise ValueError(f"timeout: expected a finite number of seconds above 0, got {timeout!r}")
    if isinstance(num_retries, bool) or not isinstance(num_retries, int) or not 0 <= num_retries <= MAX_RETRIES:
        raise ValueError(f"num_retries: expected an int from 0 to {MAX_RETRIES}, got {num_retries!r}")


class ModelCallError(RuntimeError):
    """A model call that failed for good (after retries, or not retryable). Message is redacted."""

    def __init__(self, model: str, message: str, *, attempts: int, error_type: str, retryable: bool) -> None:
        super().__init__(f"{model}: {error_type} after {attempts} attempt(s): {message}")
        self.model = model
        self.attempts = attempts
        self.error_type = error_type
        self.retryable = retryable


class EmptyReply(RuntimeError):
    """The backend answered, but with no content (``""``, ``null`` or no choices): a model fault, retried."""


@dataclass(frozen=True)
class Completion:
    """One model reply with its accounting (``cached``: replayed from the record)."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency: float = 0.0
    cached: bool = False
    attempts: int = 1
    tool_calls: tuple[dict[str, Any], ...] = ()
    """Function calls the model asked for (``{"id", "name", "arguments"}``, arguments as JSON text)."""


#: Key of the calling agent's context in the litellm request metadata (written here, read by custom providers).
CONTEXT_KEY = "craft_env_context"
_provider_registrars: list[Callable[[Any], None]] = []


#: The one warning of litellm's that ``import_litellm`` filters: pydantic on ``ReadOnly`` items of its TypedDicts.
LITELLM_SCHEMA_WARNING = {
    "message": r".*`ReadOnly` qualifier",
    "category": UserWarning,
    "module": r"pydantic\._internal\._generate_schema",
}


def add_provider(registrar: Callable[[Any], None]) -> None:
    """Have ``registrar(litellm)`` add a custom provider when litellm is imported (at once if it already is).

    The layers above register theirs (``eval.run.provider``, the built-in
    agents behind ``scripted/`` model names), so this client never imports them.
    """
    if registrar not in _provider_registrars:
        _provider_registrars.append(registrar)
    if "litellm" in sys.modules:
        registrar(sys.modules["litellm"])


def import_litellm() -> Any:
    """Import litellm with its cost map read locally (no network at import time), custom providers added.

    litellm's first calls build pydantic schemas of TypedDicts with ``ReadOnly`` items, and pydantic warns
    that it will not enforce them: news for litellm's authors, not for anyone calling a model. litellm
    filters that warning itself when it is imported, but ``warnings.catch_warnings`` (pytest runs every test
    in one) puts back the filters it found, so exactly that warning is filtered again on every call
    (``LITELLM_SCHEMA_WARNING``).
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    warnings.filterwarnings("ignore", **LITELLM_SCHEMA_WARNING)
    try:
        import litellm
    except ImportError:
        raise ValueError('model: calling a language model needs litellm (pip install "craft-env[llm]")') from None
    litellm.suppress_debug_info = True
    for registrar in _provider_registrars:
        registrar(litellm)
    return litellm


def is_retryable(error: BaseException) -> bool:
    """Rate limits, timeouts, connection failures and 5xx are worth another try."""
    if isinstance(error, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return True
    names = {cls.__name__ for cls in type(error).__mro__}
    if names & {
        "EmptyReply",
        "RateLimitError",
        "Timeout",
        "APITimeoutError",
        "APIConnectionError",
        "InternalServerError",
        "ServiceUnavailableError",
        "BadGatewayError",
    }:
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and (status in RETRYABLE_STATUS or status >= 500)


def _usage(response: Any) -> tuple[int, int]:
    usage = getattr(response, "usage", None)
    if usage is None and isinstance(response, dict):
        usage = response.get("usage")
    if usage is None:
        return 0, 0
    get = usage.get if isinstance(usage, dict) else lambda name, default=None: getattr(usage, name, default)
    return int(get("prompt_tokens", 0) or 0), int(get("completion_tokens", 0) or 0)


def _text(response: Any) -> str:
    """The reply's text, made valid Unicode (``text.clean``): the one place model text enters the package."""
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        return ""
    return valid_unicode(content) if isinstance(content, str) else ""


def _attribute(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def _tool_calls(response: Any) -> tuple[dict[str, Any], ...]:
    """The reply's function calls as plain dicts (none when the model answered in text)."""
    try:
        calls = response.choices[0].message.tool_calls or ()
    except (AttributeError, IndexError, KeyError, TypeError):
        return ()
    out = []
    for k, call in enumerate(calls):
        function = _attribute(call, "function") or {}
        out.append({
            "id": valid_unicode(str(_attribute(call, "id") or f"call_{k}")),
            "name": valid_unicode(str(_attribute(function, "name") or "")),
            "arguments": valid_unicode(str(_attribute(function, "arguments") or "{}")),
        })
    return tuple(out)


def _check_content(response: Any) -> None:
    """Raise ``EmptyReply`` for a response without content (no choices, or empty text and no tool calls)."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise EmptyReply("the model returned no choices")
    message = getattr(choices[0], "message", None)
    if getattr(message, "tool_calls", None):
        return
    content = getattr(message, "content", None)
    if not isinstance(content, str) or not content.strip():
        raise EmptyReply("the model returned " + ("null content" if content is None else "empty content"))


def _cost(litellm: Any, response: Any, price: TokenPrice | None = None) -> float:
    """The call's cost in USD: the cost the response reports, else ``price`` (the user's, for a model litellm
    cannot price) times its usage, else litellm's price table; 0 for a model nobody prices."""
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if cost is None and price is not None:
        cost = price.cost(*_usage(response))
    if cost is None:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # unknown model or provider: no price, not an error
            cost = 0.0
    try:
        return max(0.0, float(cost or 0.0))
    except (TypeError, ValueError):
        return 0.0


@dataclass
class ModelClient:
    """Calls one litellm model (any provider string) for one role.

    ``params`` are sampling parameters (``temperature``, ``max_tokens``, ...)
    and are part of the cache key; ``extra`` are passed to litellm but not
    keyed (e.g. ``mock_response`` in tests). ``replay_only`` turns a cache
    miss into a ``ModelCallError`` instead of a network call.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    num_retries: int = 3
    timeout: float = 60.0
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    cache: ReplayCache | None = None
    replay_only: bool = False
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    sync_sleep: Callable[[float], None] = time.sleep
    jitter: Callable[[], float] = random.random
    redactor: Redactor = field(default_factory=Redactor)
    budget: Budget | None = None
    log_prompts: bool = False
    price_per_token: TokenPrice | None = None
    """The price of a model litellm cannot price (``--price-per-token``); litellm's own price wins."""
    _prices: dict[str, TokenPrice | None] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, str) or not self.model.strip():
            raise ValueError(
                f"model: expected a litellm model string like 'openai/gpt-4o-mini', got {self.model!r}"
            )
        check_call_limits(self.timeout, self.num_retries)
        self.redactor.add(self.api_key)
        self.redactor.add_url(self.api_base)

    # ------------------------------------------------------------------ helpers

    def key(self, messages: list[dict[str, Any]], tools: list[dict] | None = None) -> str:
        """The cache key of a request: model, messages, sampling parameters and the tools offered."""
        return cache_key(self.model, messages, {**self.params, "tools": tools} if tools else self.params)

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based): exponential, capped, jittered."""
        delay = min(self.backoff_max, self.backoff_base * (2**attempt))
        return delay * (0.5 + 0.5 * self.jitter())

    def _kwargs(self, messages: list[dict[str, Any]], context: Any = None) -> dict[str, Any]:
        kwargs = {"model": self.model, "messages": messages, "timeout": self.timeout, "num_retries": 0}
        if context is not None:
            kwargs["metadata"] = {CONTEXT_KEY: context}
        kwargs.update(self.params)
        kwargs.update(self.extra)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self.api_key:
            kwargs["api_key"] = self.api_key
        return kwargs

    def _replayed(self, key: str) -> Completion | None:
        record = self.cache.get(key) if self.cache is not None else None
        if record is not None and not str(record.get("text") or "").strip() and not record.get("tool_calls"):
            record = None  # an empty answer recorded by an older version is a fault, not a reply
        if record is None:
            if self.replay_only:
                raise ModelCallError(
                    self.model,
                    "no recorded reply for this request",
                    attempts=0,
                    error_type="CacheMiss",
                    retryable=False,
                )
            return None
        return Completion(
            text=valid_unicode(record["text"]),  # a record of an older version may hold a lone surrogate
            prompt_tokens=int(record.get("prompt_tokens", 0)),
            completion_tokens=int(record.get("completion_tokens", 0)),
            cost=float(record.get("cost", 0.0)),
            latency=float(record.get("latency", 0.0)),
            cached=True,
            tool_calls=tuple(record.get("tool_calls") or ()),
        )

    def _finish(
        self,
        litellm: Any,
        key: str,
        response: Any,
        latency: float,
        attempts: int,
        messages: list[dict[str, Any]],
    ) -> Completion:
        prompt_tokens, completion_tokens = _usage(response)
        completion = Completion(
            text=_text(response),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost=_cost(litellm, response, self._user_price(litellm)),
            latency=round(latency, 6),
            attempts=attempts,
            tool_calls=_tool_calls(response),
        )
        if self.cache is not None:
            record = {
                "key": key,
                "model": self.model,
                "text": completion.text,
                "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens,
                "cost": completion.cost,
                "latency": completion.latency,
            }
            if completion.tool_calls:
                record["tool_calls"] = list(completion.tool_calls)
            if self.log_prompts:  # what the model saw, redacted by the cache's writer
                record["messages"] = [{"role": m.get("role"), "content": m.get("content")} for m in messages]
            self.cache.put(record)
        return completion

    def _failure(self, error: BaseException, attempts: int) -> ModelCallError:
        message = self.redactor.text(str(error) or type(error).__name__)
        if len(message) > 500:
            message = message[:500] + "..."
        return ModelCallError(
            self.model,
            message,
            attempts=attempts,
            error_type=type(error).__name__,
            retryable=is_retryable(error),
        )

    def _should_retry(self, error: BaseException, attempt: int) -> bool:
        retry = is_retryable(error) and attempt < self.num_retries
        log.warning(
            "%s: attempt %d failed (%s)%s",
            self.model,
            attempt + 1,
            type(error).__name__,
            "; retrying" if retry else "",
        )
        return retry

    def _litellm_price(self, litellm: Any) -> TokenPrice | None:
        """litellm's price of this model (looked up once)."""
        if "litellm" not in self._prices:
            self._prices["litellm"] = model_price(litellm, self.model)
        return self._prices["litellm"]

    def _user_price(self, litellm: Any) -> TokenPrice | None:
        """The user's price when litellm has none for this model (``None`` when litellm prices it)."""
        return None if self._litellm_price(litellm) is not None else self.price_per_token

    def _reserve(self, litellm: Any, messages: list[dict[str, Any]], tools: Any = None) -> float:
        """Reserve this call's estimated cost in the budget (``models.cost``); 0 without a cap or a price."""
        if self.budget is None or self.budget.limit is None:
            return 0.0
        price = self._litellm_price(litellm) or self.price_per_token
        if price is None:
            return 0.0
        tokens = count_prompt_tokens(litellm, self.model, messages, tools)
        try:
            return self.budget.reserve(self.budget.estimate(price, tokens, self.params.get("max_tokens")))
        except BudgetExceeded as error:
            raise ModelCallError(
                self.model, str(error), attempts=0, error_type="BudgetExceeded", retryable=False
            ) from None

    def _settle(self, reservation: float, completion: Completion | None) -> None:
        if self.budget is not None:
            if completion is None:
                self.budget.settle(reservation, 0.0)
            else:
                self.budget.settle(reservation, completion.cost, completion.completion_tokens)

    # --------------------------------------------------------------------- calls

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict] | None = None, context: Any = None
    ) -> Completion:
        """One reply, through the cache, retrying transient failures (``tools``: function calling).

        ``context`` (the calling agent's ``AgentContext``) travels with the
        request as litellm metadata, for providers that answer as an agent
        (``provider``); it is not part of the cache key.
        """
        key = self.key(messages, tools)
        replayed = self._replayed(key)
        if replayed is not None:
            return replayed
        litellm = import_litellm()
        reservation = self._reserve(litellm, messages, tools)  # before sending: a cap that holds
        completion = None
        try:
            for attempt in range(self.num_retries + 1):
                start = time.perf_counter()
                try:
                    kwargs = self._kwargs(messages, context)
                    if tools:
                        kwargs |= {"tools": tools, "tool_choice": "auto"}
                    response = await asyncio.wait_for(litellm.acompletion(**kwargs), timeout=self.timeout + 5.0)
                    _check_content(response)
                except Exception as error:
                    if not self._should_retry(error, attempt):
                        raise self._failure(error, attempt + 1) from None
                    await self.sleep(self.backoff(attempt))
                    continue
                completion = self._finish(litellm, key, response, time.perf_counter() - start, attempt + 1,
                                          messages)
                return completion
            raise AssertionError("unreachable")
        finally:
            self._settle(reservation, completion)

    def complete(self, messages: list[dict[str, Any]], context: Any = None) -> Completion:
        """Blocking ``acomplete`` through ``litellm.completion``."""
        key = self.key(messages)
        replayed = self._replayed(key)
        if replayed is not None:
            return replayed
        litellm = import_litellm()
        reservation = self._reserve(litellm, messages)
        completion = None
        try:
            for attempt in range(self.num_retries + 1):
                start = time.perf_counter()
                try:
                    response = litellm.completion(**self._kwargs(messages, context))
                    _check_content(response)
                except Exception as error:
                    if not self._should_retry(error, attempt):
                        raise self._failure(error, attempt + 1) from None
                    self.sync_sleep(self.backoff(attempt))
                    continue
                completion = self._finish(litellm, key, response, time.perf_counter() - start, attempt + 1,
                                          messages)
                return completion
            raise AssertionError("unreachable")
        finally:
            self._settle(reservation, completion)


def missing_environment(model: str, api_base: str | None = None) -> list[str]:
    """The environment variables litellm needs for ``model`` that are not set (API keys only).

    Our ``scripted/`` models need none; a model reached through ``api_base``
    (a local server) is not asked for keys it may not need.
    """
    litellm = import_litellm()
    if model.startswith("scripted/") or api_base:
        return []
    try:
        status = litellm.validate_environment(model=model)
    except Exception:  # an unknown provider string: let the first call report it
        return []
    missing = status.get("missing_keys") or []
    return [name for name in missing if any(word in name for word in ("KEY", "TOKEN", "SECRET"))]


def check_model(model: str, api_base: str | None = None) -> None:
    """Raise ``ValueError`` with the cause when litellm cannot call ``model`` (before any game starts).

    The provider must be one litellm knows (or a registered custom one, such
    as ``scripted/``), and its API key must be set unless ``api_base`` points
    at a server of one's own.
    """
    litellm = import_litellm()
    prefix = model.split("/", 1)[0]
    custom = {item.get("provider") for item in litellm.custom_provider_map}
    if prefix not in custom:
        try:
            litellm.get_llm_provider(model=model, api_base=api_base)
        except Exception as error:  # litellm raises its BadRequestError with the cause
            cause = " ".join(str(error).split())
            cause = cause.split(" Pass model as")[0][:300]
            raise ValueError(
                f"model {model!r}: litellm cannot call it ({cause}); write it as provider/model, "
                "e.g. openai/gpt-4o-mini (see https://docs.litellm.ai/docs/providers)"
            ) from None
    missing = missing_environment(model, api_base)
    if missing:
        raise ValueError(
            f"model {model!r} needs {' and '.join(missing)} set in the environment "
            "(or --api-base for a server that needs no key)"
        )
