"""Registering a test's stand-in litellm provider (a ``litellm.CustomLLM``) under a name, replacing any earlier one."""

from __future__ import annotations

from craft_env.models.llm import import_litellm


def install(name: str, handler) -> None:
    """Route ``name/...`` models to ``handler``; a handler installed before under ``name`` goes."""
    litellm = import_litellm()
    litellm.custom_provider_map = [p for p in litellm.custom_provider_map if p["provider"] != name] + [
        {"provider": name, "custom_handler": handler}
    ]
