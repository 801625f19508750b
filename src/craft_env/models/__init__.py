"""The model-client layer under agents and eval: the litellm client with retries, usage and cost (``llm``), the
record/replay cache (``cache``), the offline ``scripted/`` provider (``provider``) and keeping secrets out of files
(``redact``).

May import ``craft_env.core`` and ``craft_env.text`` only; litellm is imported where a model is called.
"""
