"""What model calls cost, and a spending cap that holds under concurrency (docs/robustness.md, "Model calls").

* ``TokenPrice``: US dollars per prompt token and per completion token.
  ``model_price`` reads litellm's price table; a model it cannot price has
  no price, unless the user gives one (``--price-per-token``), or it is a
  provider declared free (``declare_free_provider``: the offline
  ``scripted/`` agents).
* ``count_prompt_tokens``: the tokens of a request, counted with litellm's
  tokenizers offline (about four characters a token for a model it has no
  tokenizer for).
* ``Budget``: the run's cap. Before a call is sent it *reserves* the
  call's estimated cost (prompt tokens, plus ``max_tokens`` reply tokens,
  or without a cap the longest reply seen so far and at least
  ``ASSUMED_REPLY_TOKENS``), and a call whose reservation would take the
  spend plus the reservations of calls in flight above the cap is not
  sent (``BudgetExceeded``). When the call returns, its reservation is
  replaced by its real cost. Concurrent calls therefore cannot all pass
  the check at once: the spend exceeds the cap only by what calls in
  flight cost beyond their reservations, which is nothing when
  ``max_tokens`` is set and the price table is right.

litellm is passed in (``models.llm.import_litellm``), never imported here.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field
from typing import Any

#: Reply tokens assumed for a call without ``max_tokens`` (the dry run's estimate; the cap's least reservation).
ASSUMED_REPLY_TOKENS = 300
#: The most a token may cost in US dollars (any price above is a typo).
MAX_TOKEN_PRICE = 1.0
_FREE_PROVIDERS: set[str] = set()


class BudgetExceeded(RuntimeError):
    """A call was not sent: its estimated cost would take the run above its spending cap."""


def declare_free_provider(provider: str) -> None:
    """Calls to ``provider/...`` models cost nothing (an offline provider of this package)."""
    _FREE_PROVIDERS.add(provider)


@dataclass(frozen=True)
class TokenPrice:
    """US dollars per prompt token and per completion token."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return prompt_tokens * self.prompt + completion_tokens * self.completion

    @classmethod
    def parse(cls, text: str, name: str = "price_per_token") -> TokenPrice:
        """``"2e-7"`` (both kinds of token) or ``"1.5e-7,6e-7"`` (prompt, completion); ``ValueError`` naming
        ``name`` for anything else (a negative, non-finite or absurd price)."""
        parts = [p.strip() for p in str(text).split(",")]
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) not in (1, 2) or not all(math.isfinite(v) and 0 <= v <= MAX_TOKEN_PRICE for v in values):
            raise ValueError(
                f"{name}: expected US dollars per token from 0 to {MAX_TOKEN_PRICE:g}, as PROMPT or "
                f"PROMPT,COMPLETION (e.g. 1.5e-7,6e-7), got {text!r}"
            )
        return cls(values[0], values[-1])


def model_price(litellm: Any, model: str) -> TokenPrice | None:
    """litellm's price of ``model`` per token; zero for a free provider; ``None`` when litellm has none."""
    if model.split("/", 1)[0] in _FREE_PROVIDERS:
        return TokenPrice(0.0, 0.0)
    try:
        info = litellm.get_model_info(model=model)
    except Exception:  # litellm raises for a model its price table lacks: no price, not an error
        return None
    prompt, completion = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if not isinstance(prompt, (int, float)) or not isinstance(completion, (int, float)):
        return None
    return TokenPrice(float(prompt), float(completion))


def price_check(litellm: Any, model: str, max_cost: float | None, given: TokenPrice | None) -> str | None:
    """A warning when litellm cannot price ``model`` (its calls then count as given, or as $0); ``ValueError``
    when ``max_cost`` is set for such a model and no price is ``given`` (the cap could never trigger)."""
    if model_price(litellm, model) is not None:
        return None
    if given is not None:
        return (f"litellm has no price for {model!r}: its calls are counted at --price-per-token "
                f"(${given.prompt:g} a prompt token, ${given.completion:g} a completion token)")
    if max_cost is not None:
        raise ValueError(f"--max-cost: litellm has no price for {model!r}, so the cap could never trigger; "
                         "give its price with --price-per-token PROMPT[,COMPLETION] (US dollars per token)")
    return f"litellm has no price for {model!r}: its calls count as $0 (give --price-per-token to count them)"


def count_prompt_tokens(litellm: Any, model: str, messages: list[dict[str, Any]], tools: Any = None) -> int:
    """The tokens of a request (its messages and the tools it offers), counted offline."""
    try:
        count = int(litellm.token_counter(model=model, messages=messages))
    except Exception:  # a model litellm has no tokenizer for: about four characters a token
        count = sum(len(str(m.get("content") or "")) for m in messages) // 4
    return count + (len(json.dumps(tools)) // 4 if tools else 0)


@dataclass
class Budget:
    """A spending cap (USD) shared by a run's clients; see the module docstring for the rule and the bound.

    ``spent`` counts the calls made (and, on a resumed run, those recorded before); ``reserved`` the
    estimates of calls in flight. Replies replayed from the cache cost nothing and are always allowed.
    """

    limit: float | None = None
    spent: float = 0.0
    reserved: float = 0.0
    longest_reply: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def estimate(self, price: TokenPrice, prompt: int, max_tokens: int | None) -> float:
        """The reservation of a call of ``prompt`` tokens (see the module docstring)."""
        reply = max_tokens if max_tokens else max(ASSUMED_REPLY_TOKENS, self.longest_reply)
        return price.cost(prompt, reply)

    def reserve(self, estimate: float) -> float:
        """Hold ``estimate`` for a call about to be sent; ``BudgetExceeded`` when it does not fit under the cap."""
        with self._lock:
            if self.limit is not None and self.spent + self.reserved + estimate > self.limit:
                raise BudgetExceeded(
                    f"the run's spending cap would be passed (${self.spent:.4f} spent, ${self.reserved:.4f} "
                    f"held by calls in flight, ${estimate:.4f} for this call, cap ${self.limit:.4f}); "
                    "raise --max-cost and --resume to go on"
                )
            self.reserved += estimate
        return estimate

    def settle(self, reservation: float, cost: float, completion_tokens: int = 0) -> None:
        """Replace a call's reservation by its real ``cost`` (``cost`` 0: the call failed, nothing is owed)."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - reservation)
            self.spent += max(0.0, float(cost))
            self.longest_reply = max(self.longest_reply, int(completion_tokens))
