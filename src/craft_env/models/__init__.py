"""The model-client layer under agents and eval: the litellm client with retries and usage (``llm``), prices and
budgets (``cost``), the record/replay cache (``cache``), crash-safe JSON Lines (``jsonl``) and keeping secrets out
of files (``redact``). The offline ``scripted/`` provider lives with the runner (``eval.run.provider``).

May import ``craft_env.core`` and ``craft_env.text`` only; litellm is imported where a model is called.
"""
