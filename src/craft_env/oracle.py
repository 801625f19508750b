"""Deprecated module path: ``import craft_env.oracle`` is ``craft_env.core.oracle`` (``craft_env._deprecated``)."""

from craft_env._deprecated import alias_module

alias_module(__name__, "craft_env.core.oracle")
