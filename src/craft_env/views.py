"""Deprecated module path: ``import craft_env.views`` is ``craft_env.core.views`` (``craft_env._deprecated``)."""

from craft_env._deprecated import alias_module

alias_module(__name__, "craft_env.core.views")
